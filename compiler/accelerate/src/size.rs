//! Size constraints: in Futhark-class code, `utest length s with n in e`
//! (either side may be the `length`; `head`s around `s` name an inner
//! dimension; no `using`, or `using eqi`) states a size the backend relies
//! on. This is the one recogniser of them: the boundary description, the
//! lowered IR and the CPU runtime's debug checks all use it.

use crate::spine::spine;
use pmx_ast::*;

/// `length (head^depth s)` compared with `other`.
#[derive(Clone, Copy, Debug)]
pub struct SizeEq<'a> {
    /// The sequence whose size is constrained.
    pub seq: &'a Name,
    /// How many `head`s are around it: 0 is the outer dimension.
    pub depth: usize,
    /// What its length must equal (an `Int` expression).
    pub other: &'a Expr,
}

/// The size constraint a utest states, if it is one.
pub fn size_constraint(u: &Utest) -> Option<SizeEq<'_>> {
    if let Some(eq) = &u.using {
        if !matches!(&eq.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(Builtin::Eqi)) {
            return None;
        }
    }
    length_of(&u.test)
        .map(|(seq, depth)| SizeEq { seq, depth, other: &u.expected })
        .or_else(|| length_of(&u.expected).map(|(seq, depth)| SizeEq { seq, depth, other: &u.test }))
}

/// `length (head (head s))`: `s` and the number of `head`s.
pub fn length_of(e: &Expr) -> Option<(&Name, usize)> {
    let (f, args) = spine(e);
    if !is_builtin(f, Builtin::Length) || args.len() != 1 {
        return None;
    }
    let mut s = args[0];
    let mut depth = 0;
    loop {
        match &s.kind {
            ExprKind::Var(n) => return Some((n, depth)),
            ExprKind::App(h, inner) if is_builtin(h, Builtin::Head) => {
                depth += 1;
                s = inner;
            }
            _ => return None,
        }
    }
}

fn is_builtin(e: &Expr, b: Builtin) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(b))
}
