//! Moving a tree's spans by a number of bytes: when an edit inserts or
//! removes text before a declaration, the declaration is unchanged but
//! sits elsewhere, and incremental parsing reuses it moved rather than
//! lowering it again. Every span is reached: each struct is taken apart
//! field by field, so a new field does not compile until it is handled.

use crate::*;

/// Something whose spans can be moved.
pub trait Shift {
    /// Adds `delta` to every offset (the result stays in the same file).
    fn shift(&mut self, delta: i64);
}

impl Shift for Span {
    fn shift(&mut self, delta: i64) {
        self.start = (self.start as i64 + delta) as u32;
        self.end = (self.end as i64 + delta) as u32;
    }
}

impl Shift for Name {
    fn shift(&mut self, delta: i64) {
        let Name { text: _, span, id: _ } = self;
        span.shift(delta);
    }
}

impl Shift for Label {
    fn shift(&mut self, delta: i64) {
        let Label { text: _, span } = self;
        span.shift(delta);
    }
}

impl<T: Shift> Shift for Option<T> {
    fn shift(&mut self, delta: i64) {
        if let Some(x) = self {
            x.shift(delta);
        }
    }
}

impl<T: Shift> Shift for Box<T> {
    fn shift(&mut self, delta: i64) {
        (**self).shift(delta);
    }
}

impl<T: Shift> Shift for Vec<T> {
    fn shift(&mut self, delta: i64) {
        self.iter_mut().for_each(|x| x.shift(delta));
    }
}

impl<A: Shift, B: Shift> Shift for (A, B) {
    fn shift(&mut self, delta: i64) {
        self.0.shift(delta);
        self.1.shift(delta);
    }
}

impl Shift for Include {
    fn shift(&mut self, delta: i64) {
        let Include { path: _, span } = self;
        span.shift(delta);
    }
}

impl Shift for Item {
    fn shift(&mut self, delta: i64) {
        match self {
            Item::Let(b) => b.shift(delta),
            Item::RecLets(bs, span) => {
                bs.shift(delta);
                span.shift(delta);
            }
            Item::Type(d) => d.shift(delta),
            Item::Con(d) => d.shift(delta),
            Item::Utest(u) => u.shift(delta),
            Item::External(d) => d.shift(delta),
        }
    }
}

impl Shift for Binding {
    fn shift(&mut self, delta: i64) {
        let Binding { name, annotation, value, scheme: _, span } = self;
        name.shift(delta);
        annotation.shift(delta);
        value.shift(delta);
        span.shift(delta);
    }
}

impl Shift for Utest {
    fn shift(&mut self, delta: i64) {
        let Utest { test, expected, using, on_fail, span } = self;
        test.shift(delta);
        expected.shift(delta);
        using.shift(delta);
        on_fail.shift(delta);
        span.shift(delta);
    }
}

impl Shift for TypeDecl {
    fn shift(&mut self, delta: i64) {
        let TypeDecl { name, params, definition, span } = self;
        name.shift(delta);
        params.shift(delta);
        definition.shift(delta);
        span.shift(delta);
    }
}

impl Shift for ConDecl {
    fn shift(&mut self, delta: i64) {
        let ConDecl { name, annotation, scheme: _, span } = self;
        name.shift(delta);
        annotation.shift(delta);
        span.shift(delta);
    }
}

impl Shift for ExternalDecl {
    fn shift(&mut self, delta: i64) {
        let ExternalDecl { name, effect: _, annotation, scheme: _, span } = self;
        name.shift(delta);
        annotation.shift(delta);
        span.shift(delta);
    }
}

impl Shift for Expr {
    fn shift(&mut self, delta: i64) {
        let Expr { kind, span, ty: _ } = self;
        span.shift(delta);
        match kind {
            ExprKind::Var(n) => n.shift(delta),
            ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
            ExprKind::Lam { param, annotation, body } => {
                param.shift(delta);
                annotation.shift(delta);
                body.shift(delta);
            }
            ExprKind::Let(b, body) => {
                b.shift(delta);
                body.shift(delta);
            }
            ExprKind::RecLets(bs, body) => {
                bs.shift(delta);
                body.shift(delta);
            }
            ExprKind::App(f, a) => {
                f.shift(delta);
                a.shift(delta);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                scrutinee.shift(delta);
                pattern.shift(delta);
                then.shift(delta);
                otherwise.shift(delta);
            }
            ExprKind::Seq(items) => items.shift(delta),
            ExprKind::Record(fields) => fields.shift(delta),
            ExprKind::RecordUpdate(r, fields) => {
                r.shift(delta);
                fields.shift(delta);
            }
            ExprKind::Proj(r, l) => {
                r.shift(delta);
                l.shift(delta);
            }
            ExprKind::ConApp(c, a) => {
                c.shift(delta);
                a.shift(delta);
            }
            ExprKind::Utest(u, body) => {
                u.shift(delta);
                body.shift(delta);
            }
            ExprKind::External(d, body) => {
                d.shift(delta);
                body.shift(delta);
            }
            ExprKind::TypeDecl(d, body) => {
                d.shift(delta);
                body.shift(delta);
            }
            ExprKind::ConDecl(d, body) => {
                d.shift(delta);
                body.shift(delta);
            }
        }
    }
}

impl Shift for Pat {
    fn shift(&mut self, delta: i64) {
        let Pat { kind, span, ty: _ } = self;
        span.shift(delta);
        match kind {
            PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
            PatKind::Bind(n) => n.shift(delta),
            PatKind::Con(c, p) => {
                c.shift(delta);
                p.shift(delta);
            }
            PatKind::Record(fields) => fields.shift(delta),
            PatKind::Seq(ps) => ps.shift(delta),
            PatKind::Edge { prefix, middle, suffix } => {
                prefix.shift(delta);
                middle.shift(delta);
                suffix.shift(delta);
            }
            PatKind::And(a, b) | PatKind::Or(a, b) => {
                a.shift(delta);
                b.shift(delta);
            }
            PatKind::Not(p) => p.shift(delta),
        }
    }
}

impl Shift for TypeExpr {
    fn shift(&mut self, delta: i64) {
        let TypeExpr { kind, span } = self;
        span.shift(delta);
        match kind {
            TypeExprKind::Prim(_) | TypeExprKind::Unknown | TypeExprKind::Error => {}
            TypeExprKind::Seq(t) | TypeExprKind::Tensor(t) => t.shift(delta),
            TypeExprKind::Record(fields) => fields.shift(delta),
            TypeExprKind::Arrow(a, b) => {
                a.shift(delta);
                b.shift(delta);
            }
            TypeExprKind::All(v, kind, t) => {
                v.shift(delta);
                for KindEntry { ty, lower, upper } in kind {
                    ty.shift(delta);
                    lower.shift(delta);
                    upper.shift(delta);
                }
                t.shift(delta);
            }
            TypeExprKind::Restricted(c, restriction) => {
                c.shift(delta);
                match restriction {
                    Restriction::Var(v) => v.shift(delta),
                    Restriction::Cons { cons, .. } => cons.shift(delta),
                }
            }
            TypeExprKind::Var(n) => n.shift(delta),
            TypeExprKind::Con(c, args) | TypeExprKind::VarApp(c, args) => {
                c.shift(delta);
                args.shift(delta);
            }
        }
    }
}
