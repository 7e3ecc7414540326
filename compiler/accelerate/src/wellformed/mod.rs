//! Well-formedness (section 5.2 of the paper, Figure 7, and section 4.7 of
//! the reference): what each backend accepts. The checks run over each
//! backend's extracted program; every rule is one named function in
//! `futhark.rs` or `cuda.rs`, called on each node it concerns. All
//! violations are reported, sorted by position, without duplicates.

mod cuda;
mod futhark;

use crate::chain::Decl;
use crate::classify::Backend;
use crate::lift::AccBinding;
use pmx_ast::spine::function_argument;
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};

/// What a backend's rules see while walking: the rules of one backend.
pub(crate) trait Rules {
    /// Called on every expression node, with whether it is the function
    /// argument of a higher-order built-in (`loop n f`, `foldl f ...`).
    fn expr(&mut self, e: &Expr, higher_order_argument: Option<Builtin>);
    fn pattern(&mut self, p: &Pat);
    /// A variable's binder: a let (`is_let`), a parameter, a pattern
    /// variable. Parameters made by lambda lifting are not passed: their
    /// values are checked where the variables they carry are bound.
    fn binder(&mut self, name: &Name, ty: &Ty, is_let: bool);
    /// A let or recursive binding (`recursive` tells which).
    fn binding(&mut self, b: &Binding, recursive: bool);
    /// A declaration other than a binding.
    fn declaration(&mut self, span: Span, what: &str);
    /// The parameters and result of an accelerate binding.
    fn boundary(&mut self, acc: &AccBinding);
    fn into_diagnostics(self) -> Vec<Diagnostic>;
}

/// What a backend's rules have found so far.
pub(crate) struct Report {
    backend: Backend,
    pub diags: Vec<Diagnostic>,
    /// Accelerate parameters: checked at the boundary, not at binders.
    pub params: rustc_hash::FxHashSet<NameId>,
}

impl Report {
    fn new(backend: Backend) -> Report {
        Report { backend, diags: Vec::new(), params: Default::default() }
    }

    pub fn push(&mut self, code: Code, span: Span, rule: String, label: &str, fix: Option<&str>) {
        self.diags.push(error(code, self.backend, span, rule, label, fix));
    }
}

/// Checks a backend's extracted program (`variants`: the analysis's
/// variant types).
pub fn check(
    backend: Backend,
    program: &Expr,
    accelerates: &[&AccBinding],
    variants: &crate::variants::Variants,
) -> Vec<Diagnostic> {
    let report = Report::new(backend);
    let mut diags = match backend {
        Backend::Futhark => run(futhark::Futhark { r: report }, program, accelerates),
        Backend::Cuda => run(cuda::Cuda { r: report, variants }, program, accelerates),
    };
    pmx_diagnostics::sort_and_dedup(&mut diags);
    diags
}

fn run<R: Rules>(mut rules: R, program: &Expr, accelerates: &[&AccBinding]) -> Vec<Diagnostic> {
    for acc in accelerates {
        rules.boundary(acc);
    }
    for (d, _) in crate::chain::decls(program) {
        match d {
            Decl::Let(b) => {
                rules.binding(b, false);
                walk_binding(&mut rules, b);
            }
            Decl::Rec(bs) => bindings_of_group(&mut rules, bs),
            // Declarations at the top level are kept by extraction whether
            // used or not; a use of a constructor is what the rules reject.
            Decl::External(_) | Decl::Type(_) | Decl::Con(_) | Decl::Utest(_) => {}
        }
    }
    rules.into_diagnostics()
}

/// A `recursive` group: each member is recursive when it uses a member.
fn bindings_of_group<R: Rules>(rules: &mut R, bs: &[Binding]) {
    let ids: Vec<NameId> = bs.iter().map(|b| b.name.id).collect();
    for b in bs {
        let recursive = crate::free::free_vars(&b.value).iter().any(|f| ids.contains(&f.id));
        rules.binding(b, recursive);
        walk_binding(rules, b);
    }
}

fn walk_binding<R: Rules>(rules: &mut R, b: &Binding) {
    // A lifted function's type is made of its parameters' types (checked
    // where their variables are bound, or at the boundary) and its body's.
    if !lifted(&b.name) {
        rules.binder(&b.name, b.scheme.strip_foralls(), true);
    }
    walk(rules, &b.value, None);
}

fn lifted(name: &Name) -> bool {
    name.id.file == crate::lift::SYNTHETIC
}

/// `higher_order_argument`: the built-in `e` is a function argument of.
fn walk<R: Rules>(rules: &mut R, e: &Expr, higher_order_argument: Option<Builtin>) {
    rules.expr(e, higher_order_argument);
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { param, body, .. } => {
            if let Some((p, _)) = e.ty.as_arrow() {
                if !lifted(param) {
                    rules.binder(param, p, false);
                }
            }
            walk(rules, body, None);
        }
        ExprKind::Let(b, body) => {
            rules.binding(b, false);
            walk_binding(rules, b);
            walk(rules, body, None);
        }
        ExprKind::RecLets(bs, body) => {
            bindings_of_group(rules, bs);
            walk(rules, body, None);
        }
        ExprKind::App(..) => {
            // The spine is one node: its head and arguments are walked
            // directly, each argument told whether it is a function
            // argument of a higher-order built-in.
            let (head, args) = pmx_ast::spine::spine(e);
            let b = pmx_ast::spine::builtin(head);
            if !matches!(head.kind, ExprKind::Var(_)) {
                walk(rules, head, None);
            } else {
                rules.expr(head, None);
            }
            for (i, a) in args.into_iter().enumerate() {
                walk(rules, a, b.filter(|b| function_argument(*b, i)));
            }
        }
        ExprKind::Match { scrutinee, pattern, then, otherwise } => {
            walk(rules, scrutinee, None);
            walk_pattern(rules, pattern);
            walk(rules, then, None);
            walk(rules, otherwise, None);
        }
        ExprKind::Seq(items) => items.iter().for_each(|i| walk(rules, i, None)),
        ExprKind::Record(fields) => fields.iter().for_each(|(_, f)| walk(rules, f, None)),
        ExprKind::RecordUpdate(r, fields) => {
            walk(rules, r, None);
            fields.iter().for_each(|(_, f)| walk(rules, f, None));
        }
        ExprKind::Proj(r, _) => walk(rules, r, None),
        ExprKind::ConApp(_, a) => walk(rules, a, None),
        // Utests inside accelerated code are not walked: CUDA's rules reject
        // them (`Cuda::rule_expression`); for Futhark they are kept, the
        // lowering (`pmx-lower`) making size constraints `SizeEq` nodes and
        // the others `Utest` nodes, for the code generators to decide on.
        ExprKind::Utest(_, body) => walk(rules, body, None),
        ExprKind::External(_, body) | ExprKind::TypeDecl(_, body) => walk(rules, body, None),
        ExprKind::ConDecl(d, body) => {
            rules.declaration(d.span, "constructor definitions");
            walk(rules, body, None);
        }
    }
}

fn walk_pattern<R: Rules>(rules: &mut R, p: &Pat) {
    rules.pattern(p);
    match &p.kind {
        PatKind::Bind(n) => rules.binder(n, &p.ty, false),
        PatKind::Con(_, a) | PatKind::Not(a) => walk_pattern(rules, a),
        PatKind::Record(fields) => fields.iter().for_each(|(_, f)| walk_pattern(rules, f)),
        PatKind::Seq(items) => items.iter().for_each(|i| walk_pattern(rules, i)),
        PatKind::Edge { prefix, suffix, .. } => prefix.iter().chain(suffix).for_each(|i| walk_pattern(rules, i)),
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            walk_pattern(rules, a);
            walk_pattern(rules, b);
        }
        _ => {}
    }
}

/// A well-formedness error: the backend's name, the rule in plain words,
/// and a note on how to fix it where one helps.
pub(crate) fn error(
    code: Code,
    backend: Backend,
    span: Span,
    rule: String,
    label: &str,
    fix: Option<&str>,
) -> Diagnostic {
    let mut d = Diagnostic::error(code, span, format!("{} backend: {rule}", backend.name())).with_label(label);
    if let Some(fix) = fix {
        d = d.with_note(fix.to_string());
    }
    d.with_note(format!("this code is accelerated with the {} backend, which does not support it", backend.name()))
}

/// Whether a type mentions a function type anywhere inside it.
/// Integer and float arithmetic, comparison and conversion: the built-ins
/// both backends support.
pub(crate) fn scalar_builtin(b: Builtin) -> bool {
    use Builtin::*;
    matches!(
        b,
        Addi | Subi
            | Muli
            | Divi
            | Modi
            | Negi
            | Eqi
            | Neqi
            | Lti
            | Gti
            | Leqi
            | Geqi
            | Addf
            | Subf
            | Mulf
            | Divf
            | Negf
            | Eqf
            | Neqf
            | Ltf
            | Gtf
            | Leqf
            | Geqf
            | Int2float
            | Floorfi
            // Miking's CUDA backend has only `floorfi`; C++ and CUDA
            // have `ceil` and `round` (halves away from zero, as OCaml).
            | Ceilfi
            | Roundfi
            // Characters are their code points in both backends (Miking
            // rejects these; pmx checks `int2char` in generated code).
            | Eqc
            | Char2int
            | Int2char
    )
}

pub(crate) fn contains_arrow(t: &Ty) -> bool {
    match t.kind() {
        TyKind::Arrow(..) => true,
        TyKind::Seq(e) | TyKind::Tensor(e) => contains_arrow(e),
        TyKind::Record(fields) => fields.iter().any(|(_, f)| contains_arrow(f)),
        TyKind::Con(_, _, args) => args.iter().any(contains_arrow),
        TyKind::All(_, _, b) => contains_arrow(b),
        _ => false,
    }
}

/// Finds a part of a type that `bad` rejects.
pub(crate) fn find(t: &Ty, bad: &dyn Fn(&Ty) -> bool) -> Option<Ty> {
    if bad(t) {
        return Some(t.clone());
    }
    match t.kind() {
        TyKind::Seq(e) | TyKind::Tensor(e) => find(e, bad),
        TyKind::Record(fields) => fields.iter().find_map(|(_, f)| find(f, bad)),
        TyKind::Arrow(a, b) => find(a, bad).or_else(|| find(b, bad)),
        TyKind::Con(_, _, args) => args.iter().find_map(|a| find(a, bad)),
        TyKind::All(_, _, b) => find(b, bad),
        _ => None,
    }
}

/// A variant type (declared with `type T` and constructors).
pub(crate) fn is_variant(t: &Ty) -> bool {
    matches!(t.kind(), TyKind::Con(id, _, _) if id.as_builtin_type().is_none())
}
