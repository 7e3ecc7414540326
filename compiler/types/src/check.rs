//! The checker's state, top-level declarations, and the final pass that
//! writes resolved types back into the tree.

use crate::unify::{Mismatch, Unifier};
use crate::{builtin_scheme, Imports, TyConInfo, TypeExports};
use pmx_ast::*;
use pmx_diagnostics::{Code, Diagnostic};
use rustc_hash::FxHashMap;

pub(crate) struct Checker<'a> {
    pub file: FileId,
    imports: &'a dyn Imports,
    pub u: Unifier,
    pub level: u32,
    /// Types (schemes for let-bound names) of the values bound in this file.
    pub vars: FxHashMap<NameId, Ty>,
    pub cons: FxHashMap<NameId, Ty>,
    pub tycons: FxHashMap<NameId, TyConInfo>,
    /// What each type variable of an annotation stands for.
    pub tyvars: FxHashMap<NameId, Ty>,
    /// While converting a `con` or `external` type: its implicitly
    /// quantified variables.
    pub implicit: Option<Vec<TyVar>>,
    pub diags: Vec<Diagnostic>,
    exports: TypeExports,
}

impl<'a> Checker<'a> {
    pub fn new(file: FileId, imports: &'a dyn Imports) -> Checker<'a> {
        Checker {
            file,
            imports,
            u: Unifier::default(),
            level: 0,
            vars: FxHashMap::default(),
            cons: FxHashMap::default(),
            tycons: FxHashMap::default(),
            tyvars: FxHashMap::default(),
            implicit: None,
            diags: Vec::new(),
            exports: TypeExports::default(),
        }
    }

    pub fn finish(self) -> (TypeExports, Vec<Diagnostic>) {
        (self.exports, self.diags)
    }

    pub fn fresh(&mut self) -> Ty {
        self.u.fresh(self.level)
    }

    /// The type of a value reference, instantiated.
    pub fn value_type(&mut self, id: NameId) -> Ty {
        let scheme = self.value_scheme(id);
        self.u.instantiate(&scheme, self.level)
    }

    /// The type of a value as it was bound: a scheme, not instantiated.
    pub fn value_scheme(&mut self, id: NameId) -> Ty {
        let scheme = if let Some(b) = id.as_builtin() {
            builtin_scheme(b)
        } else if let Some(t) = self.vars.get(&id) {
            t.clone()
        } else if id.file != self.file && id.is_resolved() {
            self.imports.value(id).unwrap_or_else(Ty::unknown)
        } else {
            Ty::unknown()
        };
        // A variable bound to a type that was solved as a quantified one
        // (a lambda's parameter checked against `all a. ..`).
        match scheme.kind() {
            TyKind::Meta(_) => self.u.shallow(&scheme),
            _ => scheme,
        }
    }

    pub fn con_scheme(&mut self, id: NameId) -> Ty {
        if let Some(t) = self.cons.get(&id) {
            return t.clone();
        }
        if id.file != self.file && id.is_resolved() {
            if let Some(t) = self.imports.con(id) {
                return t;
            }
        }
        Ty::unknown()
    }

    pub fn tycon(&self, id: NameId) -> Option<TyConInfo> {
        if let Some(info) = self.tycons.get(&id) {
            return Some(info.clone());
        }
        if id.file != self.file {
            return self.imports.tycon(id);
        }
        None
    }

    pub fn module(&mut self, module: &mut Module) {
        for item in &mut module.items {
            self.item(item);
        }
        if let Some(main) = &mut module.main {
            self.infer(main);
        }
        // Later declarations can determine what earlier ones left open (a
        // reference created empty and filled later, a projection's record
        // type), so types are written back only once the whole file is
        // checked.
        self.u.freeze();
        for item in &mut module.items {
            self.finalize_item(item);
        }
        if let Some(main) = &mut module.main {
            zonk_expr(&mut self.u, main);
        }
        self.check_derivatives(module);
    }

    fn item(&mut self, item: &mut Item) {
        match item {
            Item::Let(b) => {
                let scheme = self.binding(b);
                self.vars.insert(b.name.id, scheme);
            }
            Item::RecLets(bindings, _) => self.rec_bindings(bindings),
            Item::Type(d) => self.type_decl(d),
            Item::Con(d) => self.con_decl(d),
            Item::Utest(u) => self.utest(u),
            Item::External(d) => self.external_decl(d),
        }
    }

    /// Writes resolved types into a checked declaration and records what it
    /// exports. Exported types must not mention this checker's variables.
    fn finalize_item(&mut self, item: &mut Item) {
        let mut exported = Vec::new();
        match item {
            Item::Let(b) => {
                zonk_binding(&mut self.u, b);
                exported.push(b.name.id);
            }
            Item::RecLets(bindings, _) => {
                for b in bindings {
                    zonk_binding(&mut self.u, b);
                    exported.push(b.name.id);
                }
            }
            Item::Utest(u) => zonk_utest(&mut self.u, u),
            Item::External(d) => exported.push(d.name.id),
            Item::Type(d) => {
                if let Some(info) = self.tycons.get(&d.name.id) {
                    self.exports.tycons.insert(d.name.id, info.clone());
                }
            }
            Item::Con(d) => {
                self.exports.cons.insert(d.name.id, d.scheme.clone());
            }
        }
        for id in exported {
            if let Some(t) = self.vars.get(&id).cloned() {
                let t = forget_metas(&self.u.zonk(&t));
                self.exports.values.insert(id, t);
            }
        }
    }

    pub fn binding(&mut self, b: &mut Binding) -> Ty {
        self.level += 1;
        let ann = b.annotation.as_ref().map(|a| self.convert_type(a));
        let t = match &ann {
            // A higher-rank annotation is checked into the value (`poly.rs`).
            Some(ann) if self.has_all(ann.strip_foralls()) => {
                self.check(&mut b.value, ann.strip_foralls());
                b.value.ty.clone()
            }
            Some(ann) => {
                let t = self.infer(&mut b.value);
                self.unify_at(ann.strip_foralls(), &t, b.value.span);
                t
            }
            None => self.infer(&mut b.value),
        };
        self.level -= 1;
        let scheme = match ann {
            Some(ann) if matches!(ann.kind(), TyKind::All(..)) => self.u.zonk(&ann),
            _ if is_value(&b.value) => self.u.generalize(&t, self.level),
            _ => {
                self.u.lower_levels(&t, self.level);
                self.u.zonk(&t)
            }
        };
        b.scheme = scheme.clone();
        scheme
    }

    pub fn rec_bindings(&mut self, bindings: &mut [Binding]) {
        self.level += 1;
        let mut monos = Vec::new();
        let mut anns = Vec::new();
        for b in bindings.iter() {
            let ann = b.annotation.as_ref().map(|a| self.convert_type(a));
            let mono = match &ann {
                Some(a) => a.strip_foralls().clone(),
                None => self.fresh(),
            };
            // An annotated `all` type allows polymorphic recursion.
            let visible = match &ann {
                Some(a) if matches!(a.kind(), TyKind::All(..)) => a.clone(),
                _ => mono.clone(),
            };
            self.vars.insert(b.name.id, visible);
            monos.push(mono);
            anns.push(ann);
        }
        for (b, mono) in bindings.iter_mut().zip(&monos) {
            if self.has_all(mono) {
                self.check(&mut b.value, mono);
                continue;
            }
            let t = self.infer(&mut b.value);
            self.unify_at(mono, &t, b.value.span);
        }
        self.level -= 1;
        // Members are generalised together (value restriction per group).
        let all_values = bindings.iter().all(|b| is_value(&b.value));
        let general = if all_values {
            self.u.generalize_group(&monos, self.level)
        } else {
            monos.iter().for_each(|t| self.u.lower_levels(t, self.level));
            monos.clone()
        };
        for ((b, t), ann) in bindings.iter_mut().zip(general).zip(anns) {
            let scheme = match ann {
                Some(ann) if matches!(ann.kind(), TyKind::All(..)) => self.u.zonk(&ann),
                _ => self.u.zonk(&t),
            };
            b.scheme = scheme.clone();
            self.vars.insert(b.name.id, scheme);
        }
    }

    pub fn utest(&mut self, u: &mut Utest) {
        let a = self.infer(&mut u.test);
        let b = self.infer(&mut u.expected);
        match &mut u.using {
            Some(eq) => {
                let t = self.infer(eq);
                let expected = Ty::arrow(a.clone(), Ty::arrow(b.clone(), Ty::bool()));
                self.unify_at(&expected, &t, eq.span);
            }
            None => {
                if let Err(m) = self.u.unify(&a, &b) {
                    let (ta, tb) = self.show2(&a, &b);
                    let d = self
                        .mismatch_diag(m, u.expected.span, &ta, &tb)
                        .with_secondary(u.test.span, format!("the tested expression has type `{ta}`"));
                    self.diags.push(d.with_note(
                        "the two sides of a `utest` must have the same type, or give an equality with `using`",
                    ));
                }
            }
        }
        if let Some(f) = &mut u.on_fail {
            let t = self.infer(f);
            let expected = Ty::arrow(a, Ty::arrow(b, Ty::string()));
            self.unify_at(&expected, &t, f.span);
        }
    }

    pub fn external_decl(&mut self, d: &mut ExternalDecl) {
        // An external pmx does not provide is reported here, not when the
        // program first calls it (a warning where nothing uses it: see
        // `pmx_ast::reach`).
        if !pmx_ast::externals::is_supported(&d.name.text) {
            self.diags.push(
                Diagnostic::error(
                    Code::UnsupportedExternal,
                    d.name.span,
                    format!("pmx does not implement the external `{}`", d.name.text),
                )
                .with_label(format!("Miking binds this to {}", pmx_ast::externals::foreign_library(&d.name.text)))
                .with_note(
                    "pmx implements the externals of Miking's ext/math-ext.mc, ext/file-ext.mc, ext/array-ext.mc, \
                     ext/matrix-ext.mc, ext/dist-ext.mc, the clocks of ext/rtppl-ext.mc and multicore/",
                ),
            );
        }
        let scheme = self.implicit_scheme(&d.annotation);
        d.scheme = scheme.clone();
        self.vars.insert(d.name.id, scheme);
    }

    pub fn type_decl(&mut self, d: &mut TypeDecl) {
        let params: Vec<TyVar> = d
            .params
            .iter()
            .map(|p| {
                let v = self.u.fresh_var(&p.text);
                self.tyvars.insert(p.id, Ty::new(TyKind::Var(v.clone())));
                v
            })
            .collect();
        let definition = d.definition.as_ref().map(|t| self.convert_type(t));
        let info = TyConInfo { name: d.name.text.clone(), params, definition, span: d.name.span };
        self.tycons.insert(d.name.id, info);
    }

    pub fn con_decl(&mut self, d: &mut ConDecl) {
        let Some(ann) = &d.annotation else {
            d.scheme = Ty::arrow(Ty::unknown(), Ty::unknown());
            self.cons.insert(d.name.id, d.scheme.clone());
            return;
        };
        let scheme = self.implicit_scheme(ann);
        let ok = match scheme.strip_foralls().kind() {
            TyKind::Arrow(_, result) => match result.kind() {
                TyKind::Con(id, _, _) => self.tycon(*id).is_some_and(|i| i.definition.is_none()),
                TyKind::Unknown => true,
                _ => false,
            },
            TyKind::Unknown => true,
            _ => false,
        };
        if !ok {
            let shown = scheme.to_string();
            self.diags.push(
                Diagnostic::error(
                    Code::NotAVariantType,
                    ann.span,
                    format!("the constructor `{}` must construct a variant type", d.name.text),
                )
                .with_label(format!("`{shown}` is not a function to a type declared with `type`"))
                .with_note("declare the type first (`type T`), then the constructor as `con K : Arg -> T`"),
            );
        }
        d.scheme = scheme.clone();
        self.cons.insert(d.name.id, scheme);
    }

    /// Converts a declared type, quantifying its free type variables.
    fn implicit_scheme(&mut self, t: &TypeExpr) -> Ty {
        let saved = self.implicit.replace(Vec::new());
        let ty = self.convert_type(t);
        let vars = std::mem::replace(&mut self.implicit, saved).unwrap_or_default();
        vars.into_iter().rev().fold(ty, |acc, v| Ty::new(TyKind::All(v, Vec::new(), acc)))
    }

    /// Unifies an expected type with the type found at `span`, reporting a
    /// mismatch there.
    pub fn unify_at(&mut self, expected: &Ty, found: &Ty, span: Span) -> bool {
        match self.u.unify(expected, found) {
            Ok(()) => true,
            Err(m) => {
                let (e, f) = self.show2(expected, found);
                let d = self.mismatch_diag(m, span, &e, &f);
                self.diags.push(d);
                false
            }
        }
    }

    pub fn mismatch_diag(&mut self, m: Mismatch, span: Span, expected: &str, found: &str) -> Diagnostic {
        match m {
            Mismatch::Types => {
                Diagnostic::error(Code::TypeMismatch, span, format!("expected `{expected}`, found `{found}`"))
                    .with_label(format!("this has type `{found}`"))
            }
            Mismatch::Occurs => Diagnostic::error(
                Code::InfiniteType,
                span,
                format!("infinite type: `{expected}` and `{found}` would have to be the same"),
            )
            .with_label("this would need a type that contains itself"),
            Mismatch::MissingField(l) => {
                Diagnostic::error(Code::MissingField, span, format!("this record has no field `{l}`"))
                    .with_label(format!("this has type `{found}`"))
                    .with_note(format!("the field `{l}` is required by how the value is used"))
            }
            Mismatch::NotARecord(l) => Diagnostic::error(
                Code::TypeMismatch,
                span,
                format!("expected a record with the field `{l}`, found `{found}`"),
            )
            .with_label(format!("this has type `{found}`")),
            Mismatch::Escape(v) => Diagnostic::error(
                Code::TypeMismatch,
                span,
                format!("the type variable `{v}` would escape its scope: expected `{expected}`, found `{found}`"),
            )
            .with_label(format!("this must be polymorphic in `{v}`"))
            .with_note(format!(
                "`{v}` is quantified in the expected type, so this expression may not fix it, \
                 nor may code outside see it"
            )),
        }
    }

    /// Two types as shown in one message: unknown parts named `?a`, `?b`..
    pub fn show2(&mut self, a: &Ty, b: &Ty) -> (String, String) {
        let (za, zb) = (self.u.zonk(a), self.u.zonk(b));
        let mut names = FxHashMap::default();
        (name_metas(&za, &mut names).to_string(), name_metas(&zb, &mut names).to_string())
    }

    pub fn show(&mut self, a: &Ty) -> String {
        let za = self.u.zonk(a);
        name_metas(&za, &mut FxHashMap::default()).to_string()
    }
}

/// Syntactic values, the only bindings that are generalised.
fn is_value(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lam { .. } | ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never => true,
        ExprKind::Seq(items) => items.iter().all(is_value),
        ExprKind::Record(fields) => fields.iter().all(|(_, e)| is_value(e)),
        ExprKind::ConApp(_, arg) => is_value(arg),
        _ => false,
    }
}

fn name_metas(t: &Ty, names: &mut FxHashMap<u32, Ty>) -> Ty {
    let mut metas = Vec::new();
    collect_metas(t, &mut metas);
    for m in metas {
        let n = names.len();
        names.entry(m).or_insert_with(|| {
            let letter = (b'a' + (n % 26) as u8) as char;
            Ty::new(TyKind::Var(TyVar { id: u32::MAX - n as u32, name: SmolStr::new(format!("?{letter}")) }))
        });
    }
    replace_metas(t, &|id| names.get(&id).cloned())
}

fn collect_metas(t: &Ty, out: &mut Vec<u32>) {
    match t.kind() {
        TyKind::Meta(id) if !out.contains(id) => out.push(*id),
        TyKind::Seq(e) | TyKind::Tensor(e) => collect_metas(e, out),
        TyKind::Arrow(a, b) => {
            collect_metas(a, out);
            collect_metas(b, out);
        }
        TyKind::Record(fields) => fields.iter().for_each(|(_, f)| collect_metas(f, out)),
        TyKind::Con(_, _, args) => args.iter().for_each(|a| collect_metas(a, out)),
        TyKind::App(head, args) => {
            collect_metas(head, out);
            args.iter().for_each(|a| collect_metas(a, out));
        }
        TyKind::All(_, fields, body) => {
            fields.iter().for_each(|(_, f)| collect_metas(f, out));
            collect_metas(body, out)
        }
        _ => {}
    }
}

fn replace_metas(t: &Ty, f: &dyn Fn(u32) -> Option<Ty>) -> Ty {
    match t.kind() {
        TyKind::Meta(id) => f(*id).unwrap_or_else(|| t.clone()),
        TyKind::Seq(e) => Ty::seq(replace_metas(e, f)),
        TyKind::Tensor(e) => Ty::tensor(replace_metas(e, f)),
        TyKind::Arrow(a, b) => Ty::arrow(replace_metas(a, f), replace_metas(b, f)),
        TyKind::Record(fields) => {
            Ty::new(TyKind::Record(fields.iter().map(|(l, x)| (l.clone(), replace_metas(x, f))).collect()))
        }
        TyKind::Con(id, name, args) => {
            Ty::new(TyKind::Con(*id, name.clone(), args.iter().map(|a| replace_metas(a, f)).collect()))
        }
        // A head made `Unknown` makes the whole application unknown.
        TyKind::App(head, args) => Ty::app(replace_metas(head, f), args.iter().map(|a| replace_metas(a, f)).collect()),
        TyKind::All(v, fields, body) => Ty::new(TyKind::All(
            v.clone(),
            fields.iter().map(|(l, x)| (l.clone(), replace_metas(x, f))).collect(),
            replace_metas(body, f),
        )),
        _ => t.clone(),
    }
}

/// Exported types cannot mention this checker's variables: what is still
/// undetermined at the end of a declaration becomes `Unknown`.
fn forget_metas(t: &Ty) -> Ty {
    replace_metas(t, &|_| Some(Ty::unknown()))
}

fn zonk_binding(u: &mut Unifier, b: &mut Binding) {
    b.scheme = u.zonk(&b.scheme);
    zonk_expr(u, &mut b.value);
}

fn zonk_utest(u: &mut Unifier, t: &mut Utest) {
    zonk_expr(u, &mut t.test);
    zonk_expr(u, &mut t.expected);
    if let Some(e) = &mut t.using {
        zonk_expr(u, e);
    }
    if let Some(e) = &mut t.on_fail {
        zonk_expr(u, e);
    }
}

/// Writes resolved types into every node of an expression.
pub(crate) fn zonk_expr(u: &mut Unifier, e: &mut Expr) {
    e.ty = u.zonk(&e.ty);
    match &mut e.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
        ExprKind::Lam { body, .. } => zonk_expr(u, body),
        ExprKind::Let(b, body) => {
            zonk_binding(u, b);
            zonk_expr(u, body);
        }
        ExprKind::RecLets(bindings, body) => {
            bindings.iter_mut().for_each(|b| zonk_binding(u, b));
            zonk_expr(u, body);
        }
        ExprKind::App(f, a) => {
            zonk_expr(u, f);
            zonk_expr(u, a);
        }
        ExprKind::Match { scrutinee, pattern, then, otherwise } => {
            zonk_expr(u, scrutinee);
            zonk_pat(u, pattern);
            zonk_expr(u, then);
            zonk_expr(u, otherwise);
        }
        ExprKind::Seq(items) => items.iter_mut().for_each(|i| zonk_expr(u, i)),
        ExprKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| zonk_expr(u, f)),
        ExprKind::RecordUpdate(r, fields) => {
            zonk_expr(u, r);
            fields.iter_mut().for_each(|(_, f)| zonk_expr(u, f));
        }
        ExprKind::Proj(r, _) => zonk_expr(u, r),
        ExprKind::ConApp(_, arg) => zonk_expr(u, arg),
        ExprKind::Utest(t, body) => {
            zonk_utest(u, t);
            zonk_expr(u, body);
        }
        ExprKind::External(_, body) | ExprKind::TypeDecl(_, body) | ExprKind::ConDecl(_, body) => zonk_expr(u, body),
    }
}

fn zonk_pat(u: &mut Unifier, p: &mut Pat) {
    p.ty = u.zonk(&p.ty);
    match &mut p.kind {
        PatKind::Con(_, arg) | PatKind::Not(arg) => zonk_pat(u, arg),
        PatKind::Record(fields) => fields.iter_mut().for_each(|(_, f)| zonk_pat(u, f)),
        PatKind::Seq(items) => items.iter_mut().for_each(|i| zonk_pat(u, i)),
        PatKind::Edge { prefix, suffix, .. } => {
            prefix.iter_mut().chain(suffix.iter_mut()).for_each(|i| zonk_pat(u, i));
        }
        PatKind::And(a, b) | PatKind::Or(a, b) => {
            zonk_pat(u, a);
            zonk_pat(u, b);
        }
        PatKind::Wild | PatKind::Bind(_) | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
    }
}
