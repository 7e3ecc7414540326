//! Recursive functions put in one spelling before their shapes are
//! matched, so that whether a recursion is recognised as a `map`, a fold or
//! an indexed loop does not depend on how it is written:
//!
//! - `match s with [] then a else b` is `if null s then a else b`, and
//!   `eqi (length s) 0` (either way round) is `null s`;
//! - a `let` whose variable is used once is inlined there: a value that
//!   cannot fail, loop or have an effect wherever the use is always
//!   evaluated (not inside a function or a branch), another value where
//!   the use is the next thing evaluated that could: `let r =
//!   f (tail s) in cons (muli 2 h) r` is `cons (muli 2 h) (f (tail s))`,
//!   `(let t = [] in t)` is `[]`, and `let h = head s in ..` moves to the
//!   use of `h` (in the branch where `s` is not empty, `head s` and `tail
//!   s` cannot fail).
//!
//! Only total steps (arithmetic that cannot fail, comparisons, variables,
//! literals, records, `cons`, `concat`, ...) are evaluated before the
//! inlined value that were evaluated after it before; so the program fails,
//! or not, at the same place as it was written, and debug mode, which runs
//! it as written, agrees with the rewritten code. A spelling whose
//! inlining would move a value past something that may fail (`let r = f
//! (tail s) in cons (divi 1 h) r`: the recursion ran first) is left as it
//! is, and so is its recursion.

use pmx_ast::*;

/// Puts the body of each top-level recursive function in the spelling
/// above.
pub fn normalize_recursion(e: &mut Expr) {
    let mut cur = e;
    loop {
        if let ExprKind::RecLets(bs, _) = &mut cur.kind {
            for b in bs.iter_mut() {
                normalize(&mut b.value, &mut Vec::new());
            }
        }
        match crate::chain::rest_mut(cur) {
            Some(rest) => cur = rest,
            None => return,
        }
    }
}

/// Normalises `e`, bottom up; `nonempty`: the sequences known not to be
/// empty here (inside the `else` branch of their `null` test).
fn normalize(e: &mut Expr, nonempty: &mut Vec<NameId>) {
    // `match s with [] then a else b`, then `eqi (length s) 0`: as `null s`.
    empty_match_to_null(e);
    length_zero_to_null(e);
    // The branch where a tested sequence is not empty knows it.
    if let ExprKind::Match { scrutinee, pattern, then, otherwise } = &mut e.kind {
        normalize(scrutinee, nonempty);
        normalize(then, nonempty);
        let tested = null_test(scrutinee, pattern);
        if let Some(s) = tested {
            nonempty.push(s);
        }
        normalize(otherwise, nonempty);
        if tested.is_some() {
            nonempty.pop();
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| normalize(c, nonempty));
    inline_single_use(e, nonempty);
}

/// `match s with [] then a else b` as `if null s then a else b`.
fn empty_match_to_null(e: &mut Expr) {
    let ExprKind::Match { scrutinee, pattern, .. } = &mut e.kind else { return };
    if !matches!(&pattern.kind, PatKind::Seq(items) if items.is_empty()) {
        return;
    }
    let seq_ty = scrutinee.ty.clone();
    let span = scrutinee.span;
    let s = std::mem::replace(&mut **scrutinee, Expr::unit(span));
    **scrutinee = null_of(s, seq_ty, span);
    **pattern = Pat { kind: PatKind::Bool(true), span: pattern.span, ty: Ty::bool() };
}

/// `eqi (length s) 0` and `eqi 0 (length s)` as `null s`.
fn length_zero_to_null(e: &mut Expr) {
    let (head, args) = pmx_ast::spine::spine(e);
    if !matches!(&head.kind, ExprKind::Var(n) if n.id.as_builtin() == Some(Builtin::Eqi)) || args.len() != 2 {
        return;
    }
    let zero = |x: &Expr| matches!(x.kind, ExprKind::Lit(Lit::Int(0)));
    let length_of = |x: &Expr| -> Option<Expr> {
        let (h, a) = pmx_ast::spine::spine(x);
        match (&h.kind, a.as_slice()) {
            (ExprKind::Var(n), [s]) if n.id.as_builtin() == Some(Builtin::Length) => Some((*s).clone()),
            _ => None,
        }
    };
    let s = match (zero(args[0]), zero(args[1])) {
        (true, false) => length_of(args[1]),
        (false, true) => length_of(args[0]),
        _ => None,
    };
    if let Some(s) = s {
        let (ty, span) = (s.ty.clone(), e.span);
        *e = null_of(s, ty, span);
    }
}

/// `null s`, typed.
fn null_of(s: Expr, seq_ty: Ty, span: Span) -> Expr {
    let name = Name { text: SmolStr::new("null"), span, id: NameId::builtin(Builtin::Null) };
    let f = Expr { kind: ExprKind::Var(name), span, ty: Ty::arrow(seq_ty, Ty::bool()) };
    Expr { kind: ExprKind::App(Box::new(f), Box::new(s)), span, ty: Ty::bool() }
}

/// The sequence variable of `if null s then .. else ..`.
fn null_test(scrutinee: &Expr, pattern: &Pat) -> Option<NameId> {
    if !matches!(pattern.kind, PatKind::Bool(true)) {
        return None;
    }
    let (h, a) = pmx_ast::spine::spine(scrutinee);
    match (&h.kind, a.as_slice()) {
        (ExprKind::Var(n), [s]) if n.id.as_builtin() == Some(Builtin::Null) => match &s.kind {
            ExprKind::Var(v) => Some(v.id),
            _ => None,
        },
        _ => None,
    }
}

/// `let x = v in body`, `x` used once in `body`, where evaluating `body`
/// up to that use is total: `body` with `v` in place of the use.
fn inline_single_use(e: &mut Expr, nonempty: &[NameId]) {
    let ExprKind::Let(b, body) = &mut e.kind else { return };
    if b.name.text.is_empty() || uses(body, b.name.id) != 1 {
        return;
    }
    // A total value moves anywhere it is always evaluated; another one
    // only past total steps.
    let movable = if reach(&b.value, b.name.id, nonempty) == Reach::Total {
        always_evaluated(body, b.name.id)
    } else {
        reach(body, b.name.id, nonempty) == Reach::Found
    };
    if !movable {
        return;
    }
    let value = std::mem::replace(&mut b.value, Expr::unit(b.span));
    let mut body = std::mem::replace(&mut **body, Expr::unit(e.span));
    replace_use(&mut body, b.name.id, &mut Some(value));
    *e = body;
}

/// How many times `x` occurs in `e`.
fn uses(e: &Expr, x: NameId) -> usize {
    let mut n = 0;
    count(e, x, &mut n);
    n
}

fn count(e: &Expr, x: NameId, n: &mut usize) {
    if let ExprKind::Var(v) = &e.kind {
        if v.id == x {
            *n += 1;
        }
    }
    pmx_ast::visit::children(e, &mut |c| count(c, x, n));
}

fn replace_use(e: &mut Expr, x: NameId, value: &mut Option<Expr>) {
    if matches!(&e.kind, ExprKind::Var(v) if v.id == x) {
        if let Some(v) = value.take() {
            *e = v;
        }
        return;
    }
    pmx_ast::visit::children_mut(e, &mut |c| replace_use(c, x, value));
}

/// Whether evaluating `e` evaluates its use of `x` once, whatever the
/// values: the use is not inside a function or a branch.
fn always_evaluated(e: &Expr, x: NameId) -> bool {
    match &e.kind {
        ExprKind::Lam { .. } => uses(e, x) == 0,
        ExprKind::Match { scrutinee, then, otherwise, .. } => {
            uses(then, x) == 0 && uses(otherwise, x) == 0 && always_evaluated(scrutinee, x)
        }
        ExprKind::Var(_) | ExprKind::Lit(_) => true,
        ExprKind::App(..)
        | ExprKind::Let(..)
        | ExprKind::Seq(_)
        | ExprKind::Record(_)
        | ExprKind::Proj(..)
        | ExprKind::ConApp(..) => {
            let mut all = true;
            pmx_ast::visit::children(e, &mut |c| all &= always_evaluated(c, x));
            all
        }
        _ => uses(e, x) == 0,
    }
}

/// What evaluating an expression meets first, in evaluation order.
#[derive(PartialEq, Eq, Debug)]
enum Reach {
    /// The use of the variable, after only total steps.
    Found,
    /// A step that may fail, loop or have an effect, or a use that is not
    /// always evaluated (inside a function or a branch).
    Blocked,
    /// Neither: the expression is total and does not use the variable.
    Total,
}

/// Evaluation order: an application's head, then its arguments left to
/// right, then the call; a `let`'s value, then its body; a match's
/// scrutinee, then one branch.
fn reach(e: &Expr, x: NameId, nonempty: &[NameId]) -> Reach {
    let seq = |items: &mut dyn Iterator<Item = &Expr>| -> Reach {
        for i in items {
            match reach(i, x, nonempty) {
                Reach::Total => {}
                r => return r,
            }
        }
        Reach::Total
    };
    match &e.kind {
        ExprKind::Var(v) if v.id == x => Reach::Found,
        ExprKind::Var(_) | ExprKind::Lit(_) => Reach::Total,
        ExprKind::Lam { .. } => {
            if uses(e, x) > 0 {
                Reach::Blocked
            } else {
                Reach::Total
            }
        }
        ExprKind::App(..) => {
            let (head, args) = pmx_ast::spine::spine(e);
            match seq(&mut std::iter::once(head).chain(args.iter().copied())) {
                Reach::Total if total_call(head, &args, nonempty) => Reach::Total,
                Reach::Total => Reach::Blocked,
                r => r,
            }
        }
        ExprKind::Let(b, body) => match reach(&b.value, x, nonempty) {
            Reach::Total => reach(body, x, nonempty),
            r => r,
        },
        ExprKind::Seq(items) => seq(&mut items.iter()),
        ExprKind::Record(fields) => seq(&mut fields.iter().map(|(_, f)| f)),
        ExprKind::Proj(r, _) => reach(r, x, nonempty),
        ExprKind::ConApp(_, a) => reach(a, x, nonempty),
        // A branch is evaluated or not: a use there is not always
        // evaluated; a match of total branches is total.
        ExprKind::Match { scrutinee, then, otherwise, .. } => match reach(scrutinee, x, nonempty) {
            Reach::Total
                if reach(then, x, nonempty) == Reach::Total && reach(otherwise, x, nonempty) == Reach::Total =>
            {
                Reach::Total
            }
            Reach::Found => Reach::Found,
            _ => Reach::Blocked,
        },
        _ => Reach::Blocked,
    }
}

/// Whether a call of `head` to `args` (all evaluated) is total: a
/// built-in that cannot fail, loop or have an effect, or one applied to
/// fewer arguments than it takes (a function value).
fn total_call(head: &Expr, args: &[&Expr], nonempty: &[NameId]) -> bool {
    let ExprKind::Var(n) = &head.kind else { return false };
    let Some(b) = n.id.as_builtin() else { return false };
    if args.len() < b.arity() {
        return true;
    }
    use Builtin::*;
    match b {
        Addi | Subi | Muli | Negi | Slli | Srli | Srai | Eqi | Neqi | Lti | Gti | Leqi | Geqi | Addf | Subf | Mulf
        | Divf | Negf | Eqf | Neqf | Ltf | Gtf | Leqf | Geqf | Int2float | Floorfi | Ceilfi | Roundfi | Char2int
        | Eqc | Length | Null | Concat | Cons | Snoc | Reverse => true,
        Head | Tail => matches!(&args[0].kind, ExprKind::Var(s) if nonempty.contains(&s.id)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(id: u32, ty: Ty) -> Expr {
        let name = Name { text: SmolStr::new("v"), span: Span::BUILTIN, id: NameId { file: FileId(0), index: id } };
        Expr { kind: ExprKind::Var(name), span: Span::BUILTIN, ty }
    }

    fn builtin(b: Builtin) -> Expr {
        let name = Name { text: SmolStr::new(b.name()), span: Span::BUILTIN, id: NameId::builtin(b) };
        Expr { kind: ExprKind::Var(name), span: Span::BUILTIN, ty: Ty::unknown() }
    }

    fn app(f: Expr, args: Vec<Expr>) -> Expr {
        args.into_iter().fold(f, |f, a| Expr {
            kind: ExprKind::App(Box::new(f), Box::new(a)),
            span: Span::BUILTIN,
            ty: Ty::unknown(),
        })
    }

    fn let_(id: u32, value: Expr, body: Expr) -> Expr {
        let name = Name { text: SmolStr::new("v"), span: Span::BUILTIN, id: NameId { file: FileId(0), index: id } };
        let b = Binding { name, annotation: None, value, scheme: Ty::unknown(), span: Span::BUILTIN };
        Expr { kind: ExprKind::Let(Box::new(b), Box::new(body)), span: Span::BUILTIN, ty: Ty::unknown() }
    }

    /// `let r = f s in cons (muli 2 h) r`: moved (only total steps before
    /// the use); `let r = f s in cons (divi 1 h) r`: not (the division
    /// could fail before the call that ran first).
    #[test]
    fn a_value_moves_only_past_total_steps() {
        let (r, f, s, h) = (1, 2, 3, 4);
        let body = |op| {
            app(
                builtin(Builtin::Cons),
                vec![app(builtin(op), vec![var(h, Ty::int()), var(h, Ty::int())]), var(r, Ty::unknown())],
            )
        };
        let mut moved = let_(r, app(var(f, Ty::unknown()), vec![var(s, Ty::unknown())]), body(Builtin::Muli));
        normalize(&mut moved, &mut Vec::new());
        assert!(!matches!(moved.kind, ExprKind::Let(..)), "{moved:?}");
        let mut kept = let_(r, app(var(f, Ty::unknown()), vec![var(s, Ty::unknown())]), body(Builtin::Divi));
        normalize(&mut kept, &mut Vec::new());
        assert!(matches!(kept.kind, ExprKind::Let(..)));
    }

    /// `let x = g s in addi (head s) x`: `g s` moves past `head s` only
    /// where `s` is known not to be empty.
    #[test]
    fn head_is_total_only_where_the_sequence_is_not_empty() {
        let e = || {
            let first = app(builtin(Builtin::Head), vec![var(2, Ty::unknown())]);
            let_(
                1,
                app(var(3, Ty::unknown()), vec![var(2, Ty::unknown())]),
                app(builtin(Builtin::Addi), vec![first, var(1, Ty::int())]),
            )
        };
        let mut unknown = e();
        normalize(&mut unknown, &mut Vec::new());
        assert!(matches!(unknown.kind, ExprKind::Let(..)));
        let mut known = e();
        normalize(&mut known, &mut vec![NameId { file: FileId(0), index: 2 }]);
        assert!(!matches!(known.kind, ExprKind::Let(..)));
    }
}
