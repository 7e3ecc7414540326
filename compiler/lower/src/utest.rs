//! Utests inside accelerated code. A size constraint (recognised by
//! `pmx_accelerate::size`, the recogniser the CPU backend uses too)
//! becomes a `SizeEq` node; for Futhark it is followed by a `SizeCoerce`
//! that later uses of the sequence go through, as Futhark's size types
//! need (`let s = s :> [n]t`). Any other utest is kept as a `Utest` node:
//! the code generators decide what to do with it (nothing is dropped
//! here).

use crate::cx::{Bound, Cx};
use crate::ir::*;
use crate::lower::{Lowered, Lowerer};
use pmx_accelerate::size::size_constraint;
use pmx_ast::Utest;

/// The element type `dim` dimensions into a sequence type, if it has
/// that many.
fn has_dims(t: &Type, dim: usize) -> bool {
    let mut t = t;
    for _ in 0..=dim {
        match t.elem() {
            Some(e) => t = e,
            None => return false,
        }
    }
    true
}

impl Lowerer<'_> {
    pub fn utest(&mut self, cx: &mut Cx, u: &Utest, out: &mut Vec<Stmt>) -> Lowered<()> {
        if self.target == Target::Host {
            return self.host_utest(cx, u, out);
        }
        if let Some(c) = size_constraint(u) {
            if let Some(Bound::Value(Atom::Var(v))) = cx.get(c.seq.id).cloned() {
                let seq = Atom::Var(v.clone());
                if has_dims(&v.ty, c.dim) {
                    let size = self.value(cx, c.size, out)?;
                    let (dim, span) = (c.dim, u.span);
                    let eq = Expr::SizeEq { seq: seq.clone(), dim, size: size.clone() };
                    self.emit(cx, out, Type::Unit, eq, span);
                    if self.target == crate::ir::Target::Futhark {
                        let coerced = self.emit(cx, out, v.ty.clone(), Expr::SizeCoerce { seq, dim, size }, span);
                        let coerced = self.rename_last(cx, out, &v.name, coerced);
                        cx.bind(c.seq.id, Bound::Value(coerced));
                    }
                    return Ok(());
                }
            }
        }
        let test = self.value(cx, &u.test, out)?;
        let expected = self.value(cx, &u.expected, out)?;
        let function = |l: &mut Self, cx: &mut Cx, e: Option<&pmx_ast::Expr>, out: &mut Vec<Stmt>| match e {
            Some(e) => {
                let f = l.fun(cx, e, out)?;
                l.fun_ref(cx, f, e.span).map(Some)
            }
            None => Ok(None),
        };
        let using = function(self, cx, u.using.as_ref(), out)?;
        let on_fail = function(self, cx, u.on_fail.as_ref(), out)?;
        self.emit(cx, out, Type::Unit, Expr::Utest { test, expected, using, on_fail }, u.span);
        Ok(())
    }

    /// A utest of host code, as the interpreter runs it: nothing where
    /// utests do not run; else its sides, then the comparison (its
    /// `using` and `else` functions given as function values).
    fn host_utest(&mut self, cx: &mut Cx, u: &Utest, out: &mut Vec<Stmt>) -> Lowered<()> {
        if !self.running_utests.contains(&u.span) {
            return Ok(());
        }
        let test = self.value(cx, &u.test, out)?;
        let expected = self.value(cx, &u.expected, out)?;
        let (ta, tb) = (test.ty(), expected.ty());
        let mut function = |l: &mut Self, e: Option<&pmx_ast::Expr>, result: Type| -> Lowered<Option<FunRef>> {
            let Some(e) = e else { return Ok(None) };
            let f = l.value(cx, e, out)?;
            let params = vec![ta.clone(), tb.clone()];
            Ok(Some(FunRef { callee: Callee::Value, bound: vec![f], params, result }))
        };
        let using = function(self, u.using.as_ref(), Type::Bool)?;
        let on_fail = function(self, u.on_fail.as_ref(), Type::seq(Type::Char))?;
        if let Some(name) = u.using_name() {
            self.using_names.push((u.span, name));
        }
        self.emit(cx, out, Type::Unit, Expr::Utest { test, expected, using, on_fail }, u.span);
        Ok(())
    }

    /// Gives the variable of the last statement a name from `hint`.
    fn rename_last(&mut self, cx: &mut Cx, out: &mut [Stmt], hint: &str, a: Atom) -> Atom {
        let name = cx.name(hint);
        match (out.last_mut(), a) {
            (Some(s), Atom::Var(mut v)) if s.var.id == v.id => {
                cx.forget(&s.var.name);
                s.var.name = name.clone();
                v.name = name;
                Atom::Var(v)
            }
            (_, a) => a,
        }
    }
}
