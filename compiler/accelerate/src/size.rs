//! Size constraints: the one recogniser of `utest length s with n` in
//! Futhark-class code (section 4.10 of the reference). A utest is a size
//! constraint when one side is `length` of a sequence variable, possibly
//! under `head`s (each `head` names the next inner dimension), it compares
//! with `eqi` or has no `using`. Both the source form
//! (`length (head s)`) and the A-normal form of the backend programs
//! (`let t = head s in length t`) are recognised. The CPU backend checks
//! these in debug mode; the lowering (`pmx-lower`) turns them into
//! `SizeEq` nodes.

use pmx_ast::*;

/// What a size-constraint utest says: the length of dimension `dim` of
/// `seq` (0: the outer one) equals `size`.
#[derive(Clone, Copy, Debug)]
pub struct SizeConstraint<'a> {
    pub seq: &'a Name,
    pub dim: usize,
    /// The other side of the utest (an `Int` expression).
    pub size: &'a Expr,
}

/// The size constraint a utest states, if it is one.
pub fn size_constraint(u: &Utest) -> Option<SizeConstraint<'_>> {
    if let Some(eq) = &u.using {
        if !is_builtin(eq, Builtin::Eqi) {
            return None;
        }
    }
    if let Some((seq, dim)) = length_of(&u.test) {
        return Some(SizeConstraint { seq, dim, size: &u.expected });
    }
    let (seq, dim) = length_of(&u.expected)?;
    Some(SizeConstraint { seq, dim, size: &u.test })
}

fn is_builtin(e: &Expr, b: Builtin) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(b))
}

/// `length x` where `x` is `head^k s`, written nested or through `let`s
/// that bind the intermediate `head`s (as ANF leaves it).
fn length_of(e: &Expr) -> Option<(&Name, usize)> {
    let mut lets: Vec<(NameId, &Expr)> = Vec::new();
    let mut cur = e;
    while let ExprKind::Let(b, body) = &cur.kind {
        lets.push((b.name.id, &b.value));
        cur = body;
    }
    let ExprKind::App(f, arg) = &cur.kind else { return None };
    if !is_builtin(f, Builtin::Length) {
        return None;
    }
    let mut used = 0;
    let mut dim = 0;
    let mut s: &Expr = arg;
    loop {
        match &s.kind {
            // ANF binds a nested `head` inside the value of another `let`.
            ExprKind::Let(b, body) => {
                lets.push((b.name.id, &b.value));
                s = body;
            }
            ExprKind::App(h, inner) if is_builtin(h, Builtin::Head) => {
                dim += 1;
                s = inner;
            }
            ExprKind::Var(n) => match lets.iter().find(|(id, _)| *id == n.id) {
                Some((_, value)) => {
                    used += 1;
                    s = value;
                }
                // Every `let` must be one of the `head`s: another would be
                // a computation the constraint would skip.
                None if used == lets.len() => return Some((n, dim)),
                None => return None,
            },
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(text: &str, index: u32) -> Expr {
        let id = NameId { file: FileId(0), index };
        Expr::new(ExprKind::Var(Name { text: text.into(), span: Span::BUILTIN, id }), Span::BUILTIN)
    }

    fn builtin(b: Builtin) -> Expr {
        let name = Name { text: b.name().into(), span: Span::BUILTIN, id: NameId::builtin(b) };
        Expr::new(ExprKind::Var(name), Span::BUILTIN)
    }

    fn app(f: Expr, a: Expr) -> Expr {
        Expr::new(ExprKind::App(Box::new(f), Box::new(a)), Span::BUILTIN)
    }

    fn utest(test: Expr, expected: Expr, using: Option<Expr>) -> Utest {
        Utest { test, expected, using, on_fail: None, span: Span::BUILTIN }
    }

    #[test]
    fn recognises_both_sides_heads_and_anf_lets() {
        let u = utest(app(builtin(Builtin::Length), var("s", 1)), var("n", 2), None);
        let c = size_constraint(&u).expect("a size constraint");
        assert_eq!((c.seq.text.as_str(), c.dim), ("s", 0));
        let inner =
            app(builtin(Builtin::Length), app(builtin(Builtin::Head), app(builtin(Builtin::Head), var("s", 1))));
        let u = utest(var("n", 2), inner, Some(builtin(Builtin::Eqi)));
        let c = size_constraint(&u).expect("a size constraint");
        assert_eq!((c.seq.text.as_str(), c.dim), ("s", 2));
        assert!(matches!(&c.size.kind, ExprKind::Var(n) if n.text == "n"));
        // let t = head s in length t
        let t = Name { text: "t".into(), span: Span::BUILTIN, id: NameId { file: FileId(0), index: 3 } };
        let anf = Expr::new(
            ExprKind::Let(
                Box::new(Binding {
                    name: t,
                    annotation: None,
                    value: app(builtin(Builtin::Head), var("s", 1)),
                    scheme: Ty::unknown(),
                    span: Span::BUILTIN,
                }),
                Box::new(app(builtin(Builtin::Length), var("t", 3))),
            ),
            Span::BUILTIN,
        );
        let u = utest(anf, var("n", 2), None);
        let c = size_constraint(&u).expect("a size constraint");
        assert_eq!((c.seq.text.as_str(), c.dim), ("s", 1));
        // let t = (let u = head s in head u) in length t
        let bind = |name: &str, index: u32, value: Expr, body: Expr| {
            let name = Name { text: name.into(), span: Span::BUILTIN, id: NameId { file: FileId(0), index } };
            let b = Binding { name, annotation: None, value, scheme: Ty::unknown(), span: Span::BUILTIN };
            Expr::new(ExprKind::Let(Box::new(b), Box::new(body)), Span::BUILTIN)
        };
        let inner = bind("u", 4, app(builtin(Builtin::Head), var("s", 1)), app(builtin(Builtin::Head), var("u", 4)));
        let nested = bind("t", 3, inner, app(builtin(Builtin::Length), var("t", 3)));
        let u = utest(nested, var("n", 2), None);
        let c = size_constraint(&u).expect("a size constraint");
        assert_eq!((c.seq.text.as_str(), c.dim), ("s", 2));
        // A `let` that is not one of the `head`s is a computation.
        let other = bind("v", 5, app(builtin(Builtin::Tail), var("s", 1)), app(builtin(Builtin::Length), var("s", 1)));
        assert!(size_constraint(&utest(other, var("n", 2), None)).is_none());
    }

    #[test]
    fn rejects_other_comparisons_and_other_utests() {
        let len = || app(builtin(Builtin::Length), var("s", 1));
        assert!(size_constraint(&utest(len(), var("n", 2), Some(builtin(Builtin::Eqf)))).is_none());
        assert!(size_constraint(&utest(var("a", 3), var("n", 2), None)).is_none());
        let tail_len = app(builtin(Builtin::Length), app(builtin(Builtin::Tail), var("s", 1)));
        assert!(size_constraint(&utest(tail_len, var("n", 2), None)).is_none());
    }
}
