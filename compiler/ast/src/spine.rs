//! Application spines: `f a1 .. an` is a chain of `App` nodes; passes see
//! it as its head and its arguments. Also the one table of which argument
//! positions of higher-order built-ins take functions.

use crate::*;

/// The head of an application and its arguments, in order (a non-application
/// is its own head with no arguments).
pub fn spine(e: &Expr) -> (&Expr, Vec<&Expr>) {
    let mut args = Vec::new();
    let mut head = e;
    while let ExprKind::App(g, a) = &head.kind {
        args.push(&**a);
        head = g;
    }
    args.reverse();
    (head, args)
}

/// An application taken apart: the head and each argument with the span
/// and type of the application node that applied it (so that it can be
/// rebuilt node by node).
pub fn into_spine(e: Expr) -> (Expr, Vec<(Expr, Span, Ty)>) {
    let mut args = Vec::new();
    let mut head = e;
    while let ExprKind::App(f, a) = head.kind {
        args.push((*a, head.span, head.ty));
        head = *f;
    }
    args.reverse();
    (head, args)
}

/// The head of an application (without collecting the arguments).
pub fn head(e: &Expr) -> &Expr {
    let mut head = e;
    while let ExprKind::App(g, _) = &head.kind {
        head = g;
    }
    head
}

/// The built-in an expression names (a spine's head, say), if it is one.
pub fn builtin(e: &Expr) -> Option<Builtin> {
    match &e.kind {
        ExprKind::Var(n) => n.id.as_builtin(),
        _ => None,
    }
}

/// The built-in at the head of an application, if it is one.
pub fn head_builtin(e: &Expr) -> Option<Builtin> {
    builtin(head(e))
}

/// How many arguments an application applies its head to (without
/// collecting them).
pub fn length(e: &Expr) -> usize {
    let mut n = 0;
    let mut head = e;
    while let ExprKind::App(g, _) = &head.kind {
        n += 1;
        head = g;
    }
    n
}

/// The variable at the head of an application, if it is one.
pub fn head_var(e: &Expr) -> Option<&Name> {
    match &head(e).kind {
        ExprKind::Var(n) => Some(n),
        _ => None,
    }
}

/// Whether argument `i` of built-in `b` is a function (the positions of the
/// higher-order built-ins).
pub fn function_argument(b: Builtin, i: usize) -> bool {
    use Builtin::*;
    match b {
        Map | ParallelMap | Map2 | Reduce | Foldl | Foldr | Iter | Iteri | Mapi => i == 0,
        Vjp | Jvp | Grad => i == 0,
        TensorIterSlice | TensorEq | Tensor2string => i == 0,
        Create | CreateList | CreateRope | Loop | SeqLoop => i == 1,
        TensorCreateCArrayInt | TensorCreateCArrayFloat | TensorCreateDense => i == 1,
        SeqLoopAcc => i == 2,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_typed_parameter_of_a_builtin_is_listed() {
        // The table agrees with the built-ins' types: a parameter is a
        // function exactly where the table says so.
        for b in Builtin::ALL {
            for (i, p) in b.signature().params.iter().enumerate() {
                let is_fn = matches!(p, crate::signature::Sig::Arrow(..));
                assert_eq!(function_argument(*b, i), is_fn, "{} argument {i}: {p:?}", b.name());
            }
        }
    }
}
