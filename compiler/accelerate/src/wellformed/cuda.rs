//! The CUDA backend's rules: an imperative, first-order subset over
//! tensors, with recursion. Variant types are taken (the generator makes
//! them tagged unions) unless they are recursive: a value of such a type
//! has no fixed-size layout, and building one would need a device heap.

use super::{contains_arrow, is_variant, Rules};
use crate::lift::AccBinding;
use crate::variants::Variants;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

pub struct Cuda<'v> {
    pub(super) r: super::Report,
    /// The program's variant types, to look into payloads.
    pub(super) variants: &'v Variants,
}

/// Why a recursive variant type is refused, and what to do instead.
const RECURSIVE: &str = "a value of a recursive variant type has no fixed size in CUDA code";
const RECURSIVE_FIX: &str = "hold the repeated part in a sequence or a tensor instead";

/// The built-ins CUDA code may use (the C column of the reference).
fn supported_constant(b: Builtin) -> bool {
    use Builtin::*;
    super::scalar_builtin(b)
        || matches!(
            b,
            Get | Length
                | Foldl
                | TensorGetExn
                | TensorSetExn
                | TensorLinearGetExn
                | TensorLinearSetExn
                | TensorRank
                | TensorShape
                | TensorSliceExn
                | TensorSubExn
                | Print
                | FlushStdout
                | Dprint
                | Error
                | Loop
                | SeqLoop
                | SeqLoopAcc
                | PrintFloat
                | Accelerate
        )
}

fn tensor_of_unsupported(t: &Ty) -> bool {
    matches!(t.kind(), TyKind::Tensor(e) if !matches!(e.kind(), TyKind::Int | TyKind::Float))
}

impl Cuda<'_> {
    /// CudaExprError: no record updates, utests, or constructor
    /// applications of a recursive variant type.
    fn rule_expression(&mut self, e: &Expr) {
        let (what, fix) = match &e.kind {
            ExprKind::ConApp(..) if self.variants.recursive(&e.ty) => {
                (format!("constructor applications of the recursive variant type `{}`", e.ty), RECURSIVE_FIX)
            }
            ExprKind::RecordUpdate(..) => {
                ("record updates (`{r with l = e}`)".into(), "build a new record with every field instead")
            }
            ExprKind::Utest(..) => ("utests".into(), "move the utest out of the accelerated code"),
            _ => return,
        };
        self.r.push(
            Code::CudaExpr,
            e.span,
            format!("{what} are not supported"),
            "not available in CUDA code",
            Some(fix),
        );
    }

    /// CudaConstantError: only the built-ins the CUDA backend provides.
    fn rule_constant(&mut self, e: &Expr) {
        if let ExprKind::Var(n) = &e.kind {
            if let Some(b) = n.id.as_builtin() {
                if !supported_constant(b) {
                    let fix = match b {
                        Builtin::Map | Builtin::Map2 | Builtin::Reduce | Builtin::Flatten | Builtin::ParallelMap => {
                            Some("functional array code needs the Futhark backend; write it with `loop` for CUDA")
                        }
                        Builtin::Create | Builtin::Cons | Builtin::Snoc | Builtin::Concat => {
                            Some("sequences cannot be created on the GPU; create them before `accelerate`")
                        }
                        b if b.creates_tensor() => Some(
                            "tensors cannot be created on the GPU; create them before `accelerate` and pass them in",
                        ),
                        _ => None,
                    };
                    self.r.push(
                        Code::CudaConstant,
                        e.span,
                        format!("the built-in `{}` is not supported", b.name()),
                        "not available in CUDA code",
                        fix,
                    );
                }
            }
        }
    }

    /// CudaAppResultTypeError: an application does not return a function,
    /// except as the function argument of `loop`, `seqLoop`,
    /// `seqLoopAcc` or `foldl` (which lambda lifting produces).
    fn rule_app_result(&mut self, e: &Expr, higher_order_argument: Option<Builtin>) {
        // The CUDA backend passes functions only to its loops and folds.
        let passed_to_loop = matches!(
            higher_order_argument,
            Some(Builtin::Loop | Builtin::SeqLoop | Builtin::SeqLoopAcc | Builtin::Foldl)
        );
        if matches!(e.kind, ExprKind::App(..)) && e.ty.as_arrow().is_some() && !passed_to_loop {
            self.r.push(
                Code::CudaAppResultType,
                e.span,
                "return values of function type are not supported".into(),
                &format!("this partial application has type `{}`", e.ty),
                Some("apply the function to all its arguments, or pass it only to `loop`, `seqLoop`, `seqLoopAcc` or `foldl`"),
            );
        }
    }

    /// CudaFunctionInMatch: a conditional does not return a function.
    fn rule_function_in_match(&mut self, e: &Expr) {
        if matches!(e.kind, ExprKind::Match { .. }) && e.ty.as_arrow().is_some() {
            self.r.push(
                Code::CudaFunctionInMatch,
                e.span,
                "the result of a conditional cannot be a function".into(),
                &format!("this conditional has type `{}`", e.ty),
                Some("apply the function in each branch instead"),
            );
        }
    }

    /// CudaHigherOrderArgument: the function argument of `loop`,
    /// `seqLoop`, `seqLoopAcc` and `foldl` is a variable or an application.
    fn rule_higher_order_argument(&mut self, e: &Expr) {
        let (head, args) = pmx_ast::spine::spine(e);
        let Some(b) = pmx_ast::spine::builtin(head) else { return };
        let i = match b {
            Builtin::Loop | Builtin::SeqLoop => 1,
            Builtin::SeqLoopAcc => 2,
            Builtin::Foldl => 0,
            _ => return,
        };
        if let Some(f) = args.get(i) {
            if !matches!(f.kind, ExprKind::Var(_) | ExprKind::App(..)) {
                self.r.push(
                    Code::CudaHigherOrderArgument,
                    f.span,
                    format!("the function argument of `{}` must be a variable or a partial application", b.name()),
                    "unsupported higher-order argument",
                    Some("bind the function with `let` (or define it at the top level) and pass its name"),
                );
            }
        }
    }

    /// Whether a variant type has a constructor whose payload is or holds
    /// a function.
    fn variant_of_functions(&self, t: &Ty) -> bool {
        is_variant(t) && self.variants.payloads(t).iter().any(|(_, _, p)| contains_arrow(p))
    }

    /// CudaTypeError: no functions inside records, sequences or variants,
    /// tensors of Int or Float only, no recursive variant types (looking
    /// into constructors' payloads too).
    fn rule_type(&mut self, span: Span, t: &Ty) {
        let bad = self.variants.find(t, &|x| {
            self.variants.recursive(x)
                || self.variant_of_functions(x)
                || tensor_of_unsupported(x)
                || matches!(x.kind(), TyKind::Seq(e) if contains_arrow(e))
                || matches!(x.kind(), TyKind::Record(fs) if fs.iter().any(|(_, f)| contains_arrow(f)))
        });
        if let Some(bad) = bad {
            let (why, fix) = if self.variants.recursive(&bad) {
                (RECURSIVE, Some(RECURSIVE_FIX))
            } else if tensor_of_unsupported(&bad) {
                ("CUDA tensors hold Int or Float", None)
            } else {
                ("records, sequences and variants cannot hold functions", None)
            };
            self.r.push(
                Code::CudaType,
                span,
                format!("the type `{bad}` is not supported ({why})"),
                &format!("this has type `{t}`"),
                fix,
            );
        }
    }

    /// CudaFunctionDefError: a function is defined with one lambda per
    /// parameter, and no parameter is a function.
    fn rule_function_def(&mut self, b: &Binding) {
        let ty = b.scheme.strip_foralls();
        // A temporary of ANF holds a partial application, which the
        // application rule reports where it is written.
        if ty.as_arrow().is_none() || crate::anf::is_temporary(&b.name) {
            return;
        }
        let mut arity = 0;
        let mut t = ty;
        while let Some((p, r)) = t.as_arrow() {
            if p.as_arrow().is_some() {
                self.r.push(
                    Code::CudaFunctionDef,
                    b.name.span,
                    format!("the function `{}` takes a function as a parameter, which is not supported", b.name.text),
                    &format!("a parameter has type `{p}`"),
                    Some("higher-order functions cannot run on the GPU; call the function directly"),
                );
                return;
            }
            arity += 1;
            t = r;
        }
        let lambdas = pmx_ast::visit::leading_lambdas(&b.value);
        if lambdas != arity {
            self.r.push(
                Code::CudaFunctionDef,
                b.name.span,
                "functions must be defined using explicit lambdas, using one lambda per parameter".into(),
                &format!("`{}` has type `{ty}` but {lambdas} lambda(s)", b.name.text),
                Some("write the function as `lam x. lam y. ...`, one `lam` per parameter"),
            );
        }
    }
}

impl Rules for Cuda<'_> {
    fn expr(&mut self, e: &Expr, higher_order_argument: Option<Builtin>) {
        self.rule_constant(e);
        self.rule_expression(e);
        self.rule_function_in_match(e);
        if matches!(e.kind, ExprKind::App(..)) {
            self.rule_app_result(e, higher_order_argument);
            self.rule_higher_order_argument(e);
        }
    }

    /// CudaPatternError: no constructor patterns of a recursive variant
    /// type.
    fn pattern(&mut self, p: &Pat) {
        if let PatKind::Con(k, _) = &p.kind {
            if self.variants.recursive(&p.ty) {
                self.r.push(
                    Code::CudaPattern,
                    p.span,
                    format!("constructor patterns of the recursive variant type `{}` are not supported", p.ty),
                    &format!("`{}` matches a value of a recursive variant type", k.text),
                    Some(RECURSIVE_FIX),
                );
            }
        }
    }

    fn binder(&mut self, name: &Name, ty: &Ty, _is_let: bool) {
        if !self.r.params.contains(&name.id) {
            self.rule_type(name.span, ty);
        }
    }

    fn binding(&mut self, b: &Binding, _: bool) {
        self.rule_function_def(b);
    }

    fn declaration(&mut self, span: Span, what: &str) {
        self.r.push(Code::CudaExpr, span, format!("{what} are not supported"), "in accelerated code", None);
    }

    /// What crosses the boundary: no functions; tensors only of Int and
    /// Float; no recursive variant types; tensors are not returned (not
    /// inside variants either).
    fn boundary(&mut self, acc: &AccBinding) {
        for p in &acc.params {
            self.r.params.insert(p.name.id);
            let bad = self
                .variants
                .find(&p.ty, &|x| x.as_arrow().is_some() || tensor_of_unsupported(x) || self.variants.recursive(x));
            if let Some(bad) = bad {
                self.r.push(
                    Code::CudaBoundary,
                    p.name.span,
                    format!("`{}` of type `{}` cannot be passed to accelerated code", p.name.text, p.ty),
                    &format!("`{bad}` cannot cross into CUDA code"),
                    Some(
                        "only scalars, records, sequences, tensors of Int or Float, and variant types that do not \
                         contain themselves can cross into CUDA code",
                    ),
                );
            }
        }
        let returned =
            self.variants.find(&acc.result, &|x| matches!(x.kind(), TyKind::Tensor(_)) || self.variants.recursive(x));
        if let Some(bad) = returned {
            let (what, fix) = if self.variants.recursive(&bad) {
                (format!("Values of the recursive variant type `{bad}`"), RECURSIVE_FIX)
            } else {
                ("Tensors".to_string(), "pass a tensor in and write the result into it instead")
            };
            self.r.push(
                Code::CudaBoundary,
                acc.span,
                format!("{what} cannot be returned from accelerated code"),
                &format!("this accelerate expression returns `{}`", acc.result),
                Some(fix),
            );
        }
    }

    fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.r.diags
    }
}
