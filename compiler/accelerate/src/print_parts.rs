//! CUDA rewrite: `print (concat a b)` becomes `print a; print b`.
//!
//! CUDA-class code makes no sequences (there is nowhere to allocate them
//! on a device), so a `concat` there is refused. But a string built only
//! to be printed need not be made: printing its parts in order prints the
//! same text. This is what makes `printLn` (`print (concat s "\n")`, in
//! Miking's `common.mc` as in pmx's) usable in CUDA-class code. Each part
//! is evaluated once and in the same order as before (left, then right),
//! and nested `concat`s are taken apart the same way.

use crate::freshen::Fresh;
use pmx_ast::spine::{head_builtin, spine};
use pmx_ast::visit::children_mut;
use pmx_ast::*;

/// Identities of the anonymous binders of `print a; print b`.
const BASE: u32 = (1 << 29) + (1 << 28) + (1 << 27) + (1 << 26) + (1 << 25);

pub fn split_printed_concats(e: &mut Expr) {
    let mut fresh = Fresh::new(BASE);
    rewrite(e, &mut fresh);
}

fn rewrite(e: &mut Expr, fresh: &mut Fresh) {
    children_mut(e, &mut |c| rewrite(c, fresh));
    split(e, fresh);
}

/// `e`, whose parts are rewritten already, as prints of the parts of a
/// printed concatenation (each part may be one itself).
fn split(e: &mut Expr, fresh: &mut Fresh) {
    let Some((a, b)) = printed_concat(e) else { return };
    let ExprKind::App(print, _) = &e.kind else { return };
    let print = (**print).clone();
    let (span, unit) = (e.span, e.ty.clone());
    let mut first = Expr { kind: ExprKind::App(Box::new(print.clone()), Box::new(a)), span, ty: unit.clone() };
    let mut second = Expr { kind: ExprKind::App(Box::new(print), Box::new(b)), span, ty: unit.clone() };
    split(&mut first, fresh);
    split(&mut second, fresh);
    let name = fresh.named(SmolStr::new(""), span);
    let binding = Binding { name, annotation: None, value: first, scheme: unit.clone(), span };
    *e = Expr { kind: ExprKind::Let(Box::new(binding), Box::new(second)), span, ty: unit };
}

/// The two parts of `print (concat a b)`.
fn printed_concat(e: &Expr) -> Option<(Expr, Expr)> {
    let (head, args) = spine(e);
    let ExprKind::Var(n) = &head.kind else { return None };
    if n.id.as_builtin() != Some(Builtin::Print) || args.len() != 1 {
        return None;
    }
    let arg = args[0];
    if head_builtin(arg) != Some(Builtin::Concat) {
        return None;
    }
    let (_, parts) = spine(arg);
    match parts[..] {
        [a, b] => Some((a.clone(), b.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(b: Builtin, ty: Ty) -> Expr {
        let name = Name { text: SmolStr::new(b.name()), span: Span::BUILTIN, id: NameId::builtin(b) };
        Expr { kind: ExprKind::Var(name), span: Span::BUILTIN, ty }
    }

    fn app(f: Expr, a: Expr, ty: Ty) -> Expr {
        Expr { kind: ExprKind::App(Box::new(f), Box::new(a)), span: Span::BUILTIN, ty }
    }

    fn text(s: &str) -> Expr {
        let items =
            s.chars().map(|c| Expr { kind: ExprKind::Lit(Lit::Char(c)), span: Span::BUILTIN, ty: Ty::unknown() });
        Expr { kind: ExprKind::Seq(items.collect()), span: Span::BUILTIN, ty: Ty::unknown() }
    }

    /// `print (concat (concat "a" "b") "c")`: three prints, in order.
    #[test]
    fn printed_concatenations_become_prints_in_order() {
        let concat = |a, b| app(app(var(Builtin::Concat, Ty::unknown()), a, Ty::unknown()), b, Ty::unknown());
        let mut e =
            app(var(Builtin::Print, Ty::unknown()), concat(concat(text("a"), text("b")), text("c")), Ty::unit());
        split_printed_concats(&mut e);
        let mut printed = Vec::new();
        let mut walk = |e: &Expr| {
            fn go(e: &Expr, out: &mut Vec<String>) {
                match &e.kind {
                    ExprKind::Let(b, body) => {
                        go(&b.value, out);
                        go(body, out);
                    }
                    ExprKind::App(f, a) => {
                        assert_eq!(head_builtin(f), Some(Builtin::Print));
                        let ExprKind::Seq(items) = &a.kind else { panic!("a printed literal") };
                        out.push(
                            items
                                .iter()
                                .map(|i| if let ExprKind::Lit(Lit::Char(c)) = i.kind { c } else { '?' })
                                .collect(),
                        );
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            go(e, &mut printed);
        };
        walk(&e);
        assert_eq!(printed, ["a", "b", "c"]);
    }
}
