//! Walking the typed AST of one file: every name with its role and type,
//! every expression, optionally only the parts that contain an offset.

use pmx_ast::*;

/// What a name occurrence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A value bound here (`let`, `lam`, a pattern, `external`).
    ValueDef,
    /// A use of a value (a variable).
    ValueUse,
    ConDef,
    ConUse,
    TypeDef,
    TypeUse,
    TypeVarDef,
    TypeVarUse,
}

impl Role {
    pub fn is_def(self) -> bool {
        matches!(self, Role::ValueDef | Role::ConDef | Role::TypeDef | Role::TypeVarDef)
    }
}

/// Receives what [`walk_module`] finds.
pub trait Visitor<'a> {
    /// An expression; return false to skip its children.
    fn expr(&mut self, _e: &'a Expr) -> bool {
        true
    }
    /// A name occurrence with its type where one is known (the scheme for
    /// `let` binders, the type at this use for variables).
    fn name(&mut self, _n: &'a Name, _role: Role, _ty: Option<Ty>) {}
    /// A record label with the type of its field.
    fn label(&mut self, _l: &'a Label, _ty: Option<Ty>) {}
}

/// Walks a module. With `at`, subtrees whose span does not contain the
/// offset (end inclusive) are skipped.
pub fn walk_module<'a>(m: &'a Module, at: Option<u32>, v: &mut impl Visitor<'a>) {
    let mut w = Walker { at, v };
    for item in &m.items {
        if w.prune(item.span()) {
            continue;
        }
        w.item(item);
    }
    if let Some(main) = &m.main {
        w.expr(main);
    }
}

struct Walker<'v, V> {
    at: Option<u32>,
    v: &'v mut V,
}

fn contains(span: Span, at: u32) -> bool {
    span.start <= at && at <= span.end
}

impl<'a, V: Visitor<'a>> Walker<'_, V> {
    fn prune(&self, span: Span) -> bool {
        match self.at {
            Some(at) => !contains(span, at),
            None => false,
        }
    }

    fn item(&mut self, item: &'a Item) {
        match item {
            Item::Let(b) => self.binding(b),
            Item::RecLets(bs, _) => {
                for b in bs {
                    self.binding(b);
                }
            }
            Item::Type(d) => self.type_decl(d),
            Item::Con(d) => self.con_decl(d),
            Item::Utest(u) => self.utest(u),
            Item::External(d) => self.external(d),
        }
    }

    fn binding(&mut self, b: &'a Binding) {
        self.v.name(&b.name, Role::ValueDef, Some(b.scheme.clone()));
        if let Some(t) = &b.annotation {
            self.type_expr(t);
        }
        self.expr(&b.value);
    }

    fn type_decl(&mut self, d: &'a TypeDecl) {
        self.v.name(&d.name, Role::TypeDef, None);
        for p in &d.params {
            self.v.name(p, Role::TypeVarDef, None);
        }
        if let Some(t) = &d.definition {
            self.type_expr(t);
        }
    }

    fn con_decl(&mut self, d: &'a ConDecl) {
        self.v.name(&d.name, Role::ConDef, Some(d.scheme.clone()));
        if let Some(t) = &d.annotation {
            self.type_expr(t);
        }
    }

    fn external(&mut self, d: &'a ExternalDecl) {
        self.v.name(&d.name, Role::ValueDef, Some(d.scheme.clone()));
        self.type_expr(&d.annotation);
    }

    fn utest(&mut self, u: &'a Utest) {
        self.expr(&u.test);
        self.expr(&u.expected);
        if let Some(e) = &u.using {
            self.expr(e);
        }
        if let Some(e) = &u.on_fail {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        if self.prune(e.span) || !self.v.expr(e) {
            return;
        }
        match &e.kind {
            ExprKind::Var(n) => self.v.name(n, Role::ValueUse, Some(e.ty.clone())),
            ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
            ExprKind::Lam { param, annotation, body } => {
                let pt = e.ty.as_arrow().map(|(p, _)| p.clone());
                self.v.name(param, Role::ValueDef, pt);
                if let Some(t) = annotation {
                    self.type_expr(t);
                }
                self.expr(body);
            }
            ExprKind::Let(b, body) => {
                if !self.prune(b.span) || contains(b.name.span, self.at.unwrap_or(0)) {
                    self.binding(b);
                }
                self.expr(body);
            }
            ExprKind::RecLets(bs, body) => {
                for b in bs {
                    if !self.prune(b.span) || contains(b.name.span, self.at.unwrap_or(0)) {
                        self.binding(b);
                    }
                }
                self.expr(body);
            }
            ExprKind::App(f, a) => {
                self.expr(f);
                self.expr(a);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                self.expr(scrutinee);
                self.pat(pattern);
                self.expr(then);
                self.expr(otherwise);
            }
            ExprKind::Seq(items) => {
                for i in items {
                    self.expr(i);
                }
            }
            ExprKind::Record(fields) => {
                for (l, x) in fields {
                    self.v.label(l, Some(x.ty.clone()));
                    self.expr(x);
                }
            }
            ExprKind::RecordUpdate(r, fields) => {
                self.expr(r);
                for (l, x) in fields {
                    self.v.label(l, Some(x.ty.clone()));
                    self.expr(x);
                }
            }
            ExprKind::Proj(r, l) => {
                self.expr(r);
                self.v.label(l, Some(e.ty.clone()));
            }
            ExprKind::ConApp(n, a) => {
                self.v.name(n, Role::ConUse, None);
                self.expr(a);
            }
            ExprKind::Utest(u, body) => {
                if !self.prune(u.span) {
                    self.utest(u);
                }
                self.expr(body);
            }
            ExprKind::External(d, body) => {
                if !self.prune(d.span) {
                    self.external(d);
                }
                self.expr(body);
            }
            ExprKind::TypeDecl(d, body) => {
                if !self.prune(d.span) {
                    self.type_decl(d);
                }
                self.expr(body);
            }
            ExprKind::ConDecl(d, body) => {
                if !self.prune(d.span) {
                    self.con_decl(d);
                }
                self.expr(body);
            }
        }
    }

    fn pat(&mut self, p: &'a Pat) {
        if self.prune(p.span) {
            return;
        }
        match &p.kind {
            PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
            PatKind::Bind(n) => self.v.name(n, Role::ValueDef, Some(p.ty.clone())),
            PatKind::Con(n, q) => {
                self.v.name(n, Role::ConUse, None);
                self.pat(q);
            }
            PatKind::Record(fields) => {
                for (l, q) in fields {
                    self.v.label(l, Some(q.ty.clone()));
                    self.pat(q);
                }
            }
            PatKind::Seq(ps) => {
                for q in ps {
                    self.pat(q);
                }
            }
            PatKind::Edge { prefix, middle, suffix } => {
                for q in prefix {
                    self.pat(q);
                }
                if let Some(n) = middle {
                    self.v.name(n, Role::ValueDef, Some(p.ty.clone()));
                }
                for q in suffix {
                    self.pat(q);
                }
            }
            PatKind::And(a, b) | PatKind::Or(a, b) => {
                self.pat(a);
                self.pat(b);
            }
            PatKind::Not(q) => self.pat(q),
        }
    }

    fn type_expr(&mut self, t: &'a TypeExpr) {
        if self.prune(t.span) {
            return;
        }
        match &t.kind {
            TypeExprKind::Prim(_) | TypeExprKind::Unknown | TypeExprKind::Error => {}
            TypeExprKind::Seq(x) | TypeExprKind::Tensor(x) => self.type_expr(x),
            TypeExprKind::Record(fields) => {
                for (l, x) in fields {
                    self.v.label(l, None);
                    self.type_expr(x);
                }
            }
            TypeExprKind::Arrow(a, b) => {
                self.type_expr(a);
                self.type_expr(b);
            }
            TypeExprKind::All(n, kind, body) => {
                for e in kind {
                    self.v.name(&e.ty, Role::TypeUse, None);
                    for c in e.lower.iter().chain(e.upper.iter().flatten()) {
                        self.v.name(c, Role::ConUse, None);
                    }
                }
                self.v.name(n, Role::TypeVarDef, None);
                self.type_expr(body);
            }
            TypeExprKind::Var(n) => self.v.name(n, Role::TypeVarUse, None),
            TypeExprKind::Restricted(n, restriction) => {
                self.v.name(n, Role::TypeUse, None);
                match restriction {
                    Restriction::Var(v) => self.v.name(v, Role::TypeVarUse, None),
                    Restriction::Cons { cons, .. } => cons.iter().for_each(|c| self.v.name(c, Role::ConUse, None)),
                }
            }
            TypeExprKind::Con(n, args) => {
                self.v.name(n, Role::TypeUse, None);
                for a in args {
                    self.type_expr(a);
                }
            }
            TypeExprKind::VarApp(n, args) => {
                self.v.name(n, Role::TypeVarUse, None);
                for a in args {
                    self.type_expr(a);
                }
            }
        }
    }
}

/// A name that a program can write and a person would point at: not the
/// anonymous name of `lam.` or `a; b`, nor a name made by desugaring.
pub fn is_real(n: &Name) -> bool {
    !n.is_anonymous() && !n.text.contains('#') && n.id.is_resolved()
}

/// What lies under an offset: the innermost name, label or expression.
#[derive(Default)]
pub struct At<'a> {
    pub at: u32,
    pub name: Option<(&'a Name, Role, Option<Ty>)>,
    pub label: Option<(&'a Label, Option<Ty>)>,
    pub expr: Option<&'a Expr>,
}

impl<'a> At<'a> {
    pub fn find(m: &'a Module, at: u32) -> At<'a> {
        let mut f = At { at, ..At::default() };
        walk_module(m, Some(at), &mut f);
        f
    }

    /// How well a span fits the offset: (cursor strictly inside, length).
    fn better(&self, new: Span, old: Option<Span>) -> bool {
        let rank = |s: Span| (!(s.start <= self.at && self.at < s.end), s.end - s.start);
        match old {
            None => true,
            Some(old) => rank(new) < rank(old),
        }
    }
}

impl<'a> Visitor<'a> for At<'a> {
    fn expr(&mut self, e: &'a Expr) -> bool {
        if contains(e.span, self.at) && !e.span.is_builtin() && self.better(e.span, self.expr.map(|x| x.span)) {
            self.expr = Some(e);
        }
        true
    }

    fn name(&mut self, n: &'a Name, role: Role, ty: Option<Ty>) {
        if is_real(n) && contains(n.span, self.at) && self.better(n.span, self.name.as_ref().map(|x| x.0.span)) {
            self.name = Some((n, role, ty));
        }
    }

    fn label(&mut self, l: &'a Label, ty: Option<Ty>) {
        if l.span.start < l.span.end
            && contains(l.span, self.at)
            && self.better(l.span, self.label.as_ref().map(|x| x.0.span))
        {
            self.label = Some((l, ty));
        }
    }
}

/// Every occurrence of names with the given identity.
pub struct Occurrences<'a> {
    pub id: NameId,
    pub found: Vec<(&'a Name, Role)>,
}

impl<'a> Visitor<'a> for Occurrences<'a> {
    fn name(&mut self, n: &'a Name, role: Role, _ty: Option<Ty>) {
        if n.id == self.id && is_real(n) {
            self.found.push((n, role));
        }
    }
}

/// The binder of an identity in the file that binds it, with its type.
pub struct Binder<'a> {
    pub id: NameId,
    pub found: Option<(&'a Name, Role, Option<Ty>)>,
}

impl<'a> Visitor<'a> for Binder<'a> {
    fn name(&mut self, n: &'a Name, role: Role, ty: Option<Ty>) {
        if self.found.is_none() && n.id == self.id && role.is_def() {
            self.found = Some((n, role, ty));
        }
    }
}
