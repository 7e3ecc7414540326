//! The Futhark backend's rules: a pure, first-order subset over sequences.

use super::{contains_arrow, find, is_variant, Rules};
use crate::lift::AccBinding;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

pub struct Futhark {
    pub(super) r: super::Report,
}

/// The built-ins Futhark code may use (the F column of the reference;
/// `cons` and `snoc` are rewritten to `concat`).
fn supported_constant(b: Builtin) -> bool {
    use Builtin::*;
    super::scalar_builtin(b)
        || matches!(
            b,
            Create
                | Length
                | Get
                | Set
                | Head
                | Tail
                | Null
                | Reverse
                | Concat
                | Subsequence
                | Map
                | Foldl
                | Cons
                | Snoc
                | ParallelMap
                | Map2
                | Reduce
                | Flatten
                | Accelerate
                // Not in Miking's Futhark backend; the generated code
                // fails with the message, as debug mode does.
                | Error
                // Futhark's own `vjp` and `jvp` (issue 30).
                | Vjp
                | Jvp
                | Grad
        )
}

const FIRST_ORDER: &str = "pass the data the function needs instead of the function, or call it directly";

impl Futhark {
    /// FutharkFunctionInArray: no sequence has function elements.
    fn rule_function_in_array(&mut self, span: Span, t: &Ty) {
        if let Some(bad) = find(t, &|x| matches!(x.kind(), TyKind::Seq(e) if contains_arrow(e))) {
            self.r.push(
                Code::FutharkFunctionInArray,
                span,
                "sequences of functions are not supported".into(),
                &format!("this has type `{bad}`"),
                Some(FIRST_ORDER),
            );
        }
    }

    /// FutharkFunctionInRecord: no record has a function field.
    fn rule_function_in_record(&mut self, span: Span, t: &Ty) {
        let bad = find(t, &|x| matches!(x.kind(), TyKind::Record(fs) if fs.iter().any(|(_, f)| contains_arrow(f))));
        if let Some(bad) = bad {
            self.r.push(
                Code::FutharkFunctionInRecord,
                span,
                "records containing functions are not supported".into(),
                &format!("this has type `{bad}`"),
                Some(FIRST_ORDER),
            );
        }
    }

    /// FutharkFunctionFromIf: a conditional does not return a function.
    fn rule_function_from_if(&mut self, e: &Expr) {
        if matches!(e.kind, ExprKind::Match { .. }) && contains_arrow(&e.ty) && e.ty.as_arrow().is_some() {
            self.r.push(
                Code::FutharkFunctionFromIf,
                e.span,
                "conditionals returning functions are not supported".into(),
                &format!("this conditional has type `{}`", e.ty),
                Some("apply the function in each branch instead"),
            );
        }
    }

    /// FutharkFunctionFromFold: a fold's accumulator is not a function.
    fn rule_function_from_fold(&mut self, e: &Expr) {
        let (head, args) = pmx_ast::spine::spine(e);
        let b = pmx_ast::spine::builtin(head);
        let acc_ty = match (b, args.as_slice()) {
            (Some(Builtin::Foldl), [_, acc, ..]) => Some(acc.ty.clone()),
            (Some(Builtin::Reduce), [_, ne, _]) => Some(ne.ty.clone()),
            _ => None,
        };
        if let Some(t) = acc_ty.filter(|t| t.as_arrow().is_some()) {
            self.r.push(
                Code::FutharkFunctionFromFold,
                e.span,
                "folds with an accumulator of function type are not supported".into(),
                &format!("the accumulator has type `{t}`"),
                None,
            );
        }
    }

    /// FutharkExprError: only the forms Futhark can express.
    fn rule_expression(&mut self, e: &Expr) {
        if let ExprKind::ConApp(k, _) = &e.kind {
            self.r.push(
                Code::FutharkExpr,
                e.span,
                "constructor applications are not supported".into(),
                &format!("`{}` builds a value of a variant type", k.text),
                Some("variant types cannot be accelerated with Futhark; use records and sequences"),
            );
        }
    }

    /// FutharkConstantError: only the built-ins Futhark provides.
    fn rule_constant(&mut self, e: &Expr) {
        if let ExprKind::Var(n) = &e.kind {
            if let Some(b) = n.id.as_builtin() {
                if !supported_constant(b) {
                    let fix = match b {
                        Builtin::Loop | Builtin::SeqLoop | Builtin::SeqLoopAcc | Builtin::PrintFloat => {
                            Some("loops over tensors need the CUDA backend")
                        }
                        _ => None,
                    };
                    self.r.push(
                        Code::FutharkConstant,
                        e.span,
                        format!("the built-in `{}` is not supported", b.name()),
                        "not available in Futhark code",
                        fix,
                    );
                }
            }
        }
    }

    /// FutharkTypeError: no tensors, no variant types.
    fn rule_type(&mut self, span: Span, t: &Ty) {
        if let Some(bad) = find(t, &|x| matches!(x.kind(), TyKind::Tensor(_)) || is_variant(x)) {
            let what = if matches!(bad.kind(), TyKind::Tensor(_)) { "tensors" } else { "variant types" };
            self.r.push(
                Code::FutharkType,
                span,
                format!("the type `{bad}` is not supported ({what} cannot be used in Futhark code)"),
                &format!("this has type `{t}`"),
                Some("the Futhark backend works on sequences; tensors need the CUDA backend"),
            );
        }
    }
}

impl Rules for Futhark {
    fn expr(&mut self, e: &Expr, _: Option<Builtin>) {
        self.rule_constant(e);
        self.rule_expression(e);
        self.rule_function_from_if(e);
        match &e.kind {
            ExprKind::App(..) => self.rule_function_from_fold(e),
            ExprKind::Seq(_) => self.rule_function_in_array(e.span, &e.ty),
            ExprKind::Record(_) | ExprKind::RecordUpdate(..) => self.rule_function_in_record(e.span, &e.ty),
            _ => {}
        }
    }

    /// FutharkPatternError: no constructor patterns.
    fn pattern(&mut self, p: &Pat) {
        if let PatKind::Con(k, _) = &p.kind {
            self.r.push(
                Code::FutharkPattern,
                p.span,
                "constructor patterns are not supported".into(),
                &format!("`{}` matches a variant type", k.text),
                None,
            );
        }
    }

    fn binder(&mut self, name: &Name, ty: &Ty, is_let: bool) {
        if self.r.params.contains(&name.id) {
            return;
        }
        self.rule_type(name.span, ty);
        // A let-bound value is checked where it is built.
        if !is_let {
            self.rule_function_in_array(name.span, ty);
            self.rule_function_in_record(name.span, ty);
        }
    }

    /// FutharkRecLet: no recursion is left after the rewrites to `map`,
    /// `map2`, `foldl` and `reduce` of section 4.6 (`rewrite/`).
    fn binding(&mut self, b: &Binding, recursive: bool) {
        if recursive {
            self.r.push(
                Code::FutharkRecLet,
                b.name.span,
                "recursive functions are not supported".into(),
                &format!("`{}` calls itself", b.name.text),
                Some("write the recursion with `map`, `map2`, `reduce` or `foldl`"),
            );
        }
    }

    fn declaration(&mut self, span: Span, what: &str) {
        self.r.push(Code::FutharkExpr, span, format!("{what} are not supported"), "in accelerated code", None);
    }

    /// Only values Futhark can receive cross the boundary.
    fn boundary(&mut self, acc: &AccBinding) {
        for p in &acc.params {
            self.r.params.insert(p.name.id);
            let bad =
                find(&p.ty, &|x| x.as_arrow().is_some() || matches!(x.kind(), TyKind::Tensor(_)) || is_variant(x));
            if bad.is_some() {
                self.r.push(
                    Code::FutharkParameter,
                    p.name.span,
                    format!(
                        "`{}` of type `{}` cannot be passed to accelerated expressions using the functional backend",
                        p.name.text, p.ty
                    ),
                    "used inside the accelerate expression",
                    Some("only scalars, sequences and records of them can cross into Futhark code"),
                );
            }
        }
        if find(&acc.result, &|x| x.as_arrow().is_some() || matches!(x.kind(), TyKind::Tensor(_)) || is_variant(x))
            .is_some()
        {
            self.r.push(
                Code::FutharkParameter,
                acc.span,
                format!("a result of type `{}` cannot be returned from accelerated code", acc.result),
                "this accelerate expression",
                None,
            );
        }
    }

    fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.r.diags
    }
}
