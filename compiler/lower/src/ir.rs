//! The lowered IR: types, programs, functions, entries, and the nodes of
//! their bodies. The invariants are listed in the crate's documentation
//! (`lib.rs`) and checked by `validate`.

use pmx_accelerate::Backend;
use pmx_ast::{Builtin, NameId, SmolStr, Span};

/// Why an accelerate backend's generator never meets a function value
/// (`Type::Fun`, `Callee::Value`, `Expr::Apply`, `Expr::Closure`), a value
/// of a built-in type (`Type::Opaque`), nor an
/// `Expr::Accelerate`: the lowering makes them only for host code, and
/// `validate` checks it.
pub const HOST_ONLY: &str =
    "function values and accelerate calls exist only in host code (the lowered IR's invariants 1 and 5)";

/// A concrete type. There are no type variables: the lowering specialises
/// polymorphic functions per use. Function types exist only in host code
/// (`Target::Host`); for the accelerate backends every function is made
/// first-order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Int,
    Float,
    Bool,
    Char,
    /// `()`: the empty record.
    Unit,
    /// At least one field, sorted by `pmx_ast::compare_labels`; a tuple
    /// is a record labelled `0`, `1`, ...
    Record(Vec<(SmolStr, Type)>),
    Seq(Box<Type>),
    Tensor(Box<Type>),
    /// An instance of a variant type: an index into `Program::variants`.
    Variant(VariantId),
    /// Host code only: a function value, `param -> result` (made by
    /// `Closure` or `Apply`, applied by `Apply`); how it was made and how
    /// many arguments it takes before it computes are the run time's.
    Fun(Box<Type>, Box<Type>),
    /// Host code only: a value of a built-in type (`Ref a`, `Symbol`), the
    /// interpreter's, which only the runtime's built-ins look into.
    Opaque(pmx_ast::BuiltinType, Vec<Type>),
}

impl Type {
    pub fn seq(elem: Type) -> Type {
        Type::Seq(Box::new(elem))
    }

    /// The element type of a sequence.
    pub fn elem(&self) -> Option<&Type> {
        match self {
            Type::Seq(e) => Some(e),
            _ => None,
        }
    }

    /// `Fun(a, b)`'s function type.
    pub fn fun(param: Type, result: Type) -> Type {
        Type::Fun(Box::new(param), Box::new(result))
    }

    /// What a function value of this type gives applied to arguments of
    /// types `args` (`None` if it does not take them).
    pub fn applied(&self, args: &[Type]) -> Option<Type> {
        let mut t = self;
        for a in args {
            match t {
                Type::Fun(p, r) if **p == *a => t = r,
                _ => return None,
            }
        }
        Some(t.clone())
    }

    /// The first `n` parameter types of a function type and what is left
    /// (`None` if it takes fewer).
    pub fn split_params(&self, n: usize) -> Option<(Vec<Type>, Type)> {
        let mut params = Vec::with_capacity(n);
        let mut t = self;
        for _ in 0..n {
            match t {
                Type::Fun(p, r) => {
                    params.push((**p).clone());
                    t = r;
                }
                _ => return None,
            }
        }
        Some((params, t.clone()))
    }

    /// The type of a field of a record.
    pub fn field(&self, label: &str) -> Option<&Type> {
        match self {
            Type::Record(fields) => fields.iter().find(|(l, _)| l == label).map(|(_, t)| t),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VariantId(pub u32);

/// A variant type at concrete type arguments: `Option Int`.
#[derive(Clone, Debug, PartialEq)]
pub struct VariantDef {
    /// The type's name in the source.
    pub name: SmolStr,
    pub args: Vec<Type>,
    /// In declaration order; a constructor's tag is its index.
    pub constructors: Vec<Constructor>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Constructor {
    /// The constructor's declaration: what values of the CPU backend carry
    /// as their tag, for marshaling.
    pub id: NameId,
    pub name: SmolStr,
    pub payload: Type,
}

/// A function's index in `Program::functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnId(pub u32);

/// A variable: unique in the program by `id`; `name` is unique within its
/// function or entry (what generated code can use as an identifier).
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    pub id: VarId,
    pub name: SmolStr,
    pub ty: Type,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Int(i64),
    Float(f64),
    Bool(bool),
    Char(char),
    Unit,
}

impl Lit {
    pub fn ty(&self) -> Type {
        match self {
            Lit::Int(_) => Type::Int,
            Lit::Float(_) => Type::Float,
            Lit::Bool(_) => Type::Bool,
            Lit::Char(_) => Type::Char,
            Lit::Unit => Type::Unit,
        }
    }
}

/// An operand: a variable or a literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Atom {
    Var(Var),
    Lit(Lit),
}

impl Atom {
    pub fn ty(&self) -> Type {
        match self {
            Atom::Var(v) => v.ty.clone(),
            Atom::Lit(l) => l.ty(),
        }
    }
}

/// What a function reference calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    Function(FnId),
    /// A primitive built-in (never a parallel keyword or a built-in that
    /// takes a function).
    Builtin(Builtin),
    /// A math external of `ext/math-ext.mc`.
    Math(Math),
    /// Host code only: the first bound atom is a function value (of type
    /// `Fun`), applied to the other atoms.
    Value,
}

// `Math` (the math externals) is `pmx_ast::externals::Math`: the
// interpreter's derivative rules name them too.
pub use pmx_ast::externals::Math;

/// A first-order function value, only as the function argument of a
/// parallel keyword or a utest: a top-level function (or primitive)
/// applied to the leading arguments `bound`; `params` are the types of the
/// arguments still to come, `result` what the call returns.
#[derive(Clone, Debug, PartialEq)]
pub struct FunRef {
    pub callee: Callee,
    pub bound: Vec<Atom>,
    pub params: Vec<Type>,
    pub result: Type,
}

/// A sequence of statements and the atom they compute.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub result: Atom,
}

/// `let var : var.ty = expr`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub var: Var,
    pub expr: Expr,
    pub span: Span,
}

/// A node. Every operand is an [`Atom`]; the node's type is the type of
/// the variable its statement binds.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Atom(Atom),
    /// A built-in applied to exactly as many arguments as its type takes.
    Prim(Builtin, Vec<Atom>),
    /// A math external applied to its `Float` arguments.
    Math(Math, Vec<Atom>),
    /// A top-level function applied to all its parameters.
    Call(FnId, Vec<Atom>),
    /// A record with at least one field (labels sorted).
    Record(Vec<(SmolStr, Atom)>),
    Project(Atom, SmolStr),
    /// A sequence literal.
    Seq(Vec<Atom>),
    /// A constructor (the `tag`-th of `variant`) applied to its payload.
    Con {
        variant: VariantId,
        tag: usize,
        payload: Atom,
    },
    /// Whether a value of a variant type was built by constructor `tag`.
    IsCon {
        value: Atom,
        variant: VariantId,
        tag: usize,
    },
    /// The payload of a value known to be built by constructor `tag`.
    Payload {
        value: Atom,
        variant: VariantId,
        tag: usize,
    },
    If {
        cond: Atom,
        then: Block,
        otherwise: Block,
    },
    /// `map f s`, `parallelMap f s` (one sequence) and `map2 f a b` (two).
    Map {
        f: FunRef,
        seqs: Vec<Atom>,
    },
    Reduce {
        f: FunRef,
        neutral: Atom,
        seq: Atom,
    },
    Foldl {
        f: FunRef,
        init: Atom,
        seq: Atom,
    },
    /// `create len f`.
    Create {
        len: Atom,
        f: FunRef,
    },
    Flatten(Atom),
    /// `loop n f` (`parallel`) and `seqLoop n f`.
    Loop {
        n: Atom,
        f: FunRef,
        parallel: bool,
    },
    SeqLoopAcc {
        init: Atom,
        n: Atom,
        f: FunRef,
    },
    /// A derivative of `f` (`which`: `vjp`, `jvp` or `grad`) at `args`
    /// (the point, then for `vjp` the result's cotangent, for `jvp` the
    /// point's tangent).
    Derivative {
        which: Builtin,
        f: FunRef,
        args: Vec<Atom>,
    },
    /// A size constraint: dimension `dim` (0: the outer one) of `seq` has
    /// length `size`. Type `()`.
    SizeEq {
        seq: Atom,
        dim: usize,
        size: Atom,
    },
    /// `seq` with the knowledge that dimension `dim` has length `size` (a
    /// `SizeEq` before it says so): Futhark's `seq :> [size]t`. Same type
    /// as `seq`; later uses of the sequence use this variable.
    SizeCoerce {
        seq: Atom,
        dim: usize,
        size: Atom,
    },
    /// A utest in accelerated code that is not a size constraint, kept:
    /// the code generators decide what to do with it. Type `()`.
    Utest {
        test: Atom,
        expected: Atom,
        using: Option<FunRef>,
        on_fail: Option<FunRef>,
    },
    /// Unreachable (`never`), at any type.
    Never,
    /// Host code only: a function value applied to some arguments (at
    /// least one): the result of the function, or, given fewer arguments
    /// than it takes, a function value again.
    Apply(Atom, Vec<Atom>),
    /// Host code only: a function value made of a top-level function or a
    /// built-in applied to fewer arguments than it takes (maybe none).
    Closure(Callee, Vec<Atom>),
    /// Host code only: an `accelerate` expression, run by the engine of
    /// its binding (`site`: `pmx_accelerate::Boundary::id`) on the values
    /// of the boundary's parameters, in its order (one `Int` when the
    /// binding takes none), as the interpreter runs it; `name` is the
    /// binding's (`accelerate1`, ...).
    Accelerate {
        site: NameId,
        name: SmolStr,
        args: Vec<Atom>,
    },
}

impl Expr {
    /// The atoms a node holds itself, the bound arguments of its function
    /// references included (not those inside the blocks of an `If`).
    pub fn operands(&self) -> Vec<&Atom> {
        fn bound(f: &FunRef) -> Vec<&Atom> {
            f.bound.iter().collect()
        }
        match self {
            Expr::Atom(a) | Expr::Project(a, _) | Expr::Flatten(a) => vec![a],
            Expr::Prim(_, args) | Expr::Math(_, args) | Expr::Call(_, args) | Expr::Seq(args) => args.iter().collect(),
            Expr::Record(fields) => fields.iter().map(|(_, a)| a).collect(),
            Expr::Con { payload, .. } => vec![payload],
            Expr::IsCon { value, .. } | Expr::Payload { value, .. } => vec![value],
            Expr::If { cond, .. } => vec![cond],
            Expr::Map { f, seqs } => bound(f).into_iter().chain(seqs).collect(),
            Expr::Reduce { f, neutral, seq } => bound(f).into_iter().chain([neutral, seq]).collect(),
            Expr::Foldl { f, init, seq } => bound(f).into_iter().chain([init, seq]).collect(),
            Expr::Create { len, f } => std::iter::once(len).chain(bound(f)).collect(),
            Expr::Loop { n, f, .. } => std::iter::once(n).chain(bound(f)).collect(),
            Expr::SeqLoopAcc { init, n, f } => [init, n].into_iter().chain(bound(f)).collect(),
            Expr::Derivative { f, args, .. } => bound(f).into_iter().chain(args).collect(),
            Expr::SizeEq { seq, size, .. } | Expr::SizeCoerce { seq, size, .. } => vec![seq, size],
            Expr::Utest { test, expected, using, on_fail } => {
                [test, expected].into_iter().chain(using.iter().chain(on_fail).flat_map(|f| &f.bound)).collect()
            }
            Expr::Never => Vec::new(),
            Expr::Apply(f, args) => std::iter::once(f).chain(args).collect(),
            Expr::Closure(_, args) | Expr::Accelerate { args, .. } => args.iter().collect(),
        }
    }
}

/// A top-level function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub id: FnId,
    /// Unique among functions, and not the name of a built-in.
    pub name: SmolStr,
    /// The binding it comes from (for a lifted lambda, the function it was
    /// lifted out of).
    pub source: SmolStr,
    /// The name call traces show for it, as the interpreter names its
    /// closure: the binding's, `<lambda>` for an anonymous lambda.
    pub shown: SmolStr,
    /// Where it is defined in the MExpr program.
    pub span: Span,
    /// For a copy made for one use of a polymorphic function: its type
    /// variables and the types they stand for.
    pub instance: Vec<(SmolStr, Type)>,
    /// A lambda from a keyword argument, lifted by the lowering.
    pub lifted: bool,
    pub params: Vec<Var>,
    pub result: Type,
    pub body: Block,
    /// The functions of one strongly connected component of the call
    /// graph share a group number and are consecutive.
    pub group: u32,
    /// It calls itself, directly or through its group.
    pub recursive: bool,
    /// Its only recursive calls are calls of itself in tail position (the
    /// Futhark generator can make it a loop).
    pub tail_recursive: bool,
    /// Host code only: a top-level value of the program (not a function),
    /// read where the interpreter keeps it; a call of it (no arguments)
    /// is that read, and its body (`never`) is not code.
    pub global: Option<NameId>,
    /// Host code only: a top-level function the lowering could not lower
    /// (an `accelerate` binding, say), whose body applies the
    /// interpreter's value of it to the parameters.
    pub stub: bool,
    /// Futhark code only: the update of a histogram, `set h q.0 (op (get
    /// h q.0) q.1)`, made by `hist.rs`, whose `foldl` is Futhark's
    /// `reduce_by_index` with this operator (the indices checked where
    /// the pairs were made).
    pub histogram: Option<crate::accumulate::Op>,
}

impl Function {
    /// A function as the lowering first makes it: not a copy of a
    /// polymorphic one, not lifted, not yet ordered (`group`, `recursive`
    /// and `tail_recursive` are `order.rs`'s), neither a value nor a stub.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: FnId,
        name: SmolStr,
        source: SmolStr,
        shown: SmolStr,
        span: Span,
        params: Vec<Var>,
        result: Type,
        body: Block,
    ) -> Function {
        Function {
            id,
            name,
            source,
            shown,
            span,
            instance: Vec::new(),
            lifted: false,
            params,
            result,
            body,
            group: 0,
            recursive: false,
            tail_recursive: false,
            global: None,
            stub: false,
            histogram: None,
        }
    }
}

/// An accelerate binding: what the host calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The accelerate binding's identity (`Boundary::id`).
    pub id: NameId,
    pub name: SmolStr,
    /// The `accelerate e` expression.
    pub span: Span,
    /// The data that crosses the boundary (none for an expression that
    /// uses no outside variable: the binding's dummy `Int` is dropped).
    pub params: Vec<Var>,
    pub result: Type,
    pub body: Block,
}

/// What a lowered program is for: one accelerate backend's bindings, or
/// the host code that runs everything else natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Futhark,
    Cuda,
    Host,
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Futhark => "Futhark",
            Target::Cuda => "CUDA",
            Target::Host => "native host code",
        }
    }
}

impl From<Backend> for Target {
    fn from(b: Backend) -> Target {
        match b {
            Backend::Futhark => Target::Futhark,
            Backend::Cuda => Target::Cuda,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub target: Target,
    /// The types table: every variant type instance used.
    pub variants: Vec<VariantDef>,
    /// In dependency order: a function calls only earlier ones and those
    /// of its own group. `functions[i].id == FnId(i)`.
    pub functions: Vec<Function>,
    pub entries: Vec<Entry>,
    /// Host code: how the failure message of each utest with `using`
    /// names its function (as the interpreter does), by the utest's span.
    pub using_names: Vec<(Span, SmolStr)>,
}

impl Program {
    pub fn function(&self, id: FnId) -> Option<&Function> {
        self.functions.get(id.0 as usize)
    }

    pub fn variant(&self, id: VariantId) -> Option<&VariantDef> {
        self.variants.get(id.0 as usize)
    }

    /// The text of every string literal (a sequence literal of `Char`s)
    /// bound in the program, by its variable: what `error "..."` says,
    /// which generated code reports as debug mode does.
    pub fn string_literals(&self) -> rustc_hash::FxHashMap<VarId, String> {
        let mut out = rustc_hash::FxHashMap::default();
        let bodies = self.functions.iter().map(|f| &f.body).chain(self.entries.iter().map(|e| &e.body));
        for b in bodies {
            b.for_each_stmt(&mut |s| {
                if let Expr::Seq(items) = &s.expr {
                    let text: Option<String> = items
                        .iter()
                        .map(|a| match a {
                            Atom::Lit(Lit::Char(c)) => Some(*c),
                            _ => None,
                        })
                        .collect();
                    if let (Some(text), Type::Seq(e)) = (text, &s.var.ty) {
                        if **e == Type::Char {
                            out.insert(s.var.id, text);
                        }
                    }
                }
            });
        }
        out
    }

    /// A type as MExpr writes it, variant instances by their names.
    pub fn type_name(&self, t: &Type) -> String {
        let mut out = String::new();
        let _ = crate::print::write_type(&mut out, t, Some(&self.variants));
        out
    }
}

/// Types as the printer writes them; a variant instance without the
/// program's table is written by its number.
impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::print::write_type(f, self, None)
    }
}

/// What `error msg` reports: the message where it is a string literal
/// (`Program::string_literals`; debug mode prints it), else `error`.
pub fn error_text(strings: &rustc_hash::FxHashMap<VarId, String>, msg: &Atom) -> String {
    match msg {
        Atom::Var(v) => strings.get(&v.id).cloned().unwrap_or_else(|| "error".into()),
        Atom::Lit(_) => "error".into(),
    }
}
