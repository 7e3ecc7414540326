//! A language's names renamed to their mangled forms, in a language's
//! own code and under `use L in e`, as far as no local binder shadows
//! them; each `use` marker is replaced by its body.

use super::compose::unknown_language;
use super::{Env, Languages};
use pmx_ast::mlang::as_use;
use pmx_ast::*;
use pmx_diagnostics::Diagnostic;
use rustc_hash::FxHashMap;

pub(super) struct Renamer<'a> {
    visible: &'a Languages,
    env: Env,
    /// How many local binders shadow each name now (values, types,
    /// constructors): counts, so that a lookup does not walk the scopes.
    values: FxHashMap<SmolStr, u32>,
    types: FxHashMap<SmolStr, u32>,
    cons: FxHashMap<SmolStr, u32>,
    diags: &'a mut Vec<Diagnostic>,
}

fn bind(map: &mut FxHashMap<SmolStr, u32>, env: &FxHashMap<SmolStr, SmolStr>, name: &SmolStr) {
    if env.contains_key(name) {
        *map.entry(name.clone()).or_default() += 1;
    }
}

fn unbind(map: &mut FxHashMap<SmolStr, u32>, env: &FxHashMap<SmolStr, SmolStr>, name: &SmolStr) {
    if env.contains_key(name) {
        if let Some(n) = map.get_mut(name) {
            *n -= 1;
        }
    }
}

fn rename(name: &mut Name, env: &FxHashMap<SmolStr, SmolStr>, shadow: &FxHashMap<SmolStr, u32>) {
    if shadow.get(&name.text).copied().unwrap_or(0) == 0 {
        if let Some(m) = env.get(&name.text) {
            name.text = m.clone();
        }
    }
}

impl<'a> Renamer<'a> {
    pub fn new(visible: &'a Languages, env: &Env, diags: &'a mut Vec<Diagnostic>) -> Self {
        Renamer {
            visible,
            env: env.clone(),
            values: FxHashMap::default(),
            types: FxHashMap::default(),
            cons: FxHashMap::default(),
            diags,
        }
    }

    pub fn item(&mut self, item: &mut Item) {
        match item {
            Item::Let(b) => self.binding(b),
            Item::RecLets(bs, _) => bs.iter_mut().for_each(|b| self.binding(b)),
            Item::Type(d) => self.type_decl(d),
            Item::Con(d) => self.con_decl(d),
            Item::Utest(u) => self.utest(u),
            Item::External(d) => self.ty(&mut d.annotation),
        }
    }

    /// A binding's annotation and value (not its name: the caller scopes it).
    pub fn binding(&mut self, b: &mut Binding) {
        if let Some(t) = &mut b.annotation {
            self.ty(t);
        }
        self.expr(&mut b.value);
    }

    pub fn type_decl(&mut self, d: &mut TypeDecl) {
        if let Some(t) = &mut d.definition {
            self.ty(t);
        }
    }

    pub fn con_decl(&mut self, d: &mut ConDecl) {
        if let Some(t) = &mut d.annotation {
            self.ty(t);
        }
    }

    fn utest(&mut self, u: &mut Utest) {
        self.expr(&mut u.test);
        self.expr(&mut u.expected);
        if let Some(e) = &mut u.using {
            self.expr(e);
        }
        if let Some(e) = &mut u.on_fail {
            self.expr(e);
        }
    }

    fn bind_value(&mut self, n: &Name) {
        bind(&mut self.values, &self.env.values, &n.text);
    }

    fn unbind_value(&mut self, n: &Name) {
        unbind(&mut self.values, &self.env.values, &n.text);
    }

    /// Runs `f` with the names of language `lang` (written at `at`) in
    /// scope, winning over what is in scope already.
    fn using(&mut self, lang: &str, at: Span, f: impl FnOnce(&mut Self)) {
        let Some(l) = self.visible.get(lang).cloned() else {
            self.diags.push(unknown_language(&Name::unresolved(lang, at)));
            return f(self);
        };
        let saved = (self.env.clone(), self.values.clone(), self.types.clone(), self.cons.clone());
        self.env.extend(&l.env);
        for (names, shadow) in
            [(&l.env.values, &mut self.values), (&l.env.types, &mut self.types), (&l.env.cons, &mut self.cons)]
        {
            shadow.retain(|k, _| !names.contains_key(k));
        }
        f(self);
        (self.env, self.values, self.types, self.cons) = saved;
    }

    pub fn expr(&mut self, e: &mut Expr) {
        if let Some((marker, lang)) = as_use(e) {
            let (lang, at) = (SmolStr::new(lang), marker.span);
            let ExprKind::App(_, body) = std::mem::replace(&mut e.kind, ExprKind::Error) else { return };
            *e = *body;
            return self.using(&lang, at, |r| r.expr(e));
        }
        if self.env.is_empty() {
            return self.children(e);
        }
        match &mut e.kind {
            ExprKind::Var(n) => rename(n, &self.env.values, &self.values),
            ExprKind::ConApp(n, arg) => {
                rename(n, &self.env.cons, &self.cons);
                self.expr(arg);
            }
            _ => self.children(e),
        }
    }

    /// The parts of `e`, with the binders it introduces in scope.
    fn children(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error => {}
            ExprKind::ConApp(_, arg) => self.expr(arg),
            ExprKind::Lam { param, annotation, body } => {
                if let Some(t) = annotation {
                    self.ty(t);
                }
                self.bind_value(param);
                self.expr(body);
                self.unbind_value(param);
            }
            ExprKind::Let(b, body) => {
                self.binding(b);
                self.bind_value(&b.name);
                self.expr(body);
                self.unbind_value(&b.name);
            }
            ExprKind::RecLets(bs, body) => {
                bs.iter().for_each(|b| self.bind_value(&b.name));
                bs.iter_mut().for_each(|b| self.binding(b));
                self.expr(body);
                bs.iter().for_each(|b| self.unbind_value(&b.name));
            }
            ExprKind::App(f, a) => {
                self.expr(f);
                self.expr(a);
            }
            ExprKind::Match { scrutinee, pattern, then, otherwise } => {
                self.expr(scrutinee);
                let mut binders = Vec::new();
                self.pat(pattern, &mut binders);
                binders.iter().for_each(|n| self.bind_value(n));
                self.expr(then);
                binders.iter().for_each(|n| self.unbind_value(n));
                self.expr(otherwise);
            }
            ExprKind::Seq(es) => es.iter_mut().for_each(|e| self.expr(e)),
            ExprKind::Record(fs) => fs.iter_mut().for_each(|(_, e)| self.expr(e)),
            ExprKind::RecordUpdate(r, fs) => {
                self.expr(r);
                fs.iter_mut().for_each(|(_, e)| self.expr(e));
            }
            ExprKind::Proj(r, _) => self.expr(r),
            ExprKind::Utest(u, body) => {
                self.utest(u);
                self.expr(body);
            }
            ExprKind::External(d, body) => {
                self.ty(&mut d.annotation);
                self.bind_value(&d.name);
                self.expr(body);
                self.unbind_value(&d.name);
            }
            ExprKind::TypeDecl(d, body) => {
                self.type_decl(d);
                bind(&mut self.types, &self.env.types, &d.name.text);
                self.expr(body);
                unbind(&mut self.types, &self.env.types, &d.name.text);
            }
            ExprKind::ConDecl(d, body) => {
                self.con_decl(d);
                bind(&mut self.cons, &self.env.cons, &d.name.text);
                self.expr(body);
                unbind(&mut self.cons, &self.env.cons, &d.name.text);
            }
        }
    }

    /// Renames a pattern's constructors and collects its binders.
    pub fn pat(&mut self, p: &mut Pat, binders: &mut Vec<Name>) {
        match &mut p.kind {
            PatKind::Wild | PatKind::Int(_) | PatKind::Char(_) | PatKind::Bool(_) | PatKind::Error => {}
            PatKind::Bind(n) => binders.push(n.clone()),
            PatKind::Con(n, sub) => {
                rename(n, &self.env.cons, &self.cons);
                self.pat(sub, binders);
            }
            PatKind::Record(fs) => fs.iter_mut().for_each(|(_, p)| self.pat(p, binders)),
            PatKind::Seq(ps) => ps.iter_mut().for_each(|p| self.pat(p, binders)),
            PatKind::Edge { prefix, middle, suffix } => {
                prefix.iter_mut().chain(suffix.iter_mut()).for_each(|p| self.pat(p, binders));
                if let Some(m) = middle {
                    binders.push(m.clone());
                }
            }
            PatKind::And(a, b) | PatKind::Or(a, b) => {
                self.pat(a, binders);
                self.pat(b, binders);
            }
            PatKind::Not(a) => self.pat(a, binders),
        }
    }

    pub fn ty(&mut self, t: &mut TypeExpr) {
        if let TypeExprKind::Con(marker, args) = &mut t.kind {
            if let (Some(lang), 1) = (marker.text.strip_prefix(pmx_ast::mlang::USE_MARKER), args.len()) {
                let (lang, at) = (SmolStr::new(lang), marker.span);
                *t = args.pop().expect("one argument");
                return self.using(&lang, at, |r| r.ty(t));
            }
        }
        match &mut t.kind {
            TypeExprKind::Prim(_) | TypeExprKind::Unknown | TypeExprKind::Var(_) | TypeExprKind::Error => {}
            TypeExprKind::Seq(e) | TypeExprKind::Tensor(e) => self.ty(e),
            TypeExprKind::Record(fs) => fs.iter_mut().for_each(|(_, t)| self.ty(t)),
            TypeExprKind::Arrow(a, b) => {
                self.ty(a);
                self.ty(b);
            }
            TypeExprKind::All(_, kinds, body) => {
                for k in kinds {
                    rename(&mut k.ty, &self.env.types, &self.types);
                    for c in k.lower.iter_mut().chain(k.upper.iter_mut().flatten()) {
                        rename(c, &self.env.cons, &self.cons);
                    }
                }
                self.ty(body);
            }
            TypeExprKind::Con(n, args) => {
                rename(n, &self.env.types, &self.types);
                args.iter_mut().for_each(|t| self.ty(t));
            }
            // The variable is not a language's name; its arguments may be.
            TypeExprKind::VarApp(_, args) => args.iter_mut().for_each(|t| self.ty(t)),
            TypeExprKind::Restricted(n, r) => {
                rename(n, &self.env.types, &self.types);
                if let Restriction::Cons { cons, .. } = r {
                    cons.iter_mut().for_each(|c| rename(c, &self.env.cons, &self.cons));
                }
            }
        }
    }
}
