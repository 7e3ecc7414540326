//! A-normal form (section 4.9 of the reference): every argument of an
//! application, element of a sequence or record, and scrutinee of a match
//! is a variable or a literal; the non-trivial ones are bound with `let`
//! first, in evaluation order. The function argument of a higher-order
//! built-in (`map f s`, `loop n (f a b)`, ...) stays an application, as
//! the well-formedness rules expect after lambda lifting.

use crate::lift::SYNTHETIC;
use pmx_ast::*;

pub struct Anf {
    next: u32,
}

/// Identities made by ANF (above those of lambda lifting).
const BASE: u32 = 1 << 30;

/// Whether a name was made by ANF (a temporary, not a user's binding).
pub fn is_temporary(n: &Name) -> bool {
    n.id.file == SYNTHETIC && n.id.index >= BASE
}

pub fn normalize(e: Expr) -> Expr {
    Anf { next: 0 }.expr(e)
}

fn atomic(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never)
        || matches!(&e.kind, ExprKind::Record(fields) if fields.is_empty())
}

use pmx_ast::spine::function_argument;

impl Anf {
    fn fresh(&mut self, span: Span) -> Name {
        self.next += 1;
        Name { text: SmolStr::new("t"), span, id: NameId { file: SYNTHETIC, index: BASE + self.next } }
    }

    /// Normalises an expression (in any position).
    fn expr(&mut self, e: Expr) -> Expr {
        let Expr { kind, span, ty } = e;
        let mut lets: Vec<Binding> = Vec::new();
        let kind = match kind {
            ExprKind::Lam { param, annotation, body } => {
                ExprKind::Lam { param, annotation, body: Box::new(self.expr(*body)) }
            }
            ExprKind::Let(mut b, body) => {
                let v = std::mem::replace(&mut b.value, Expr::unit(span));
                b.value = self.expr(v);
                ExprKind::Let(b, Box::new(self.expr(*body)))
            }
            ExprKind::RecLets(mut bs, body) => {
                for b in &mut bs {
                    let v = std::mem::replace(&mut b.value, Expr::unit(span));
                    b.value = self.expr(v);
                }
                ExprKind::RecLets(bs, Box::new(self.expr(*body)))
            }
            ExprKind::App(..) => return self.app(Expr { kind, span, ty }),
            ExprKind::Match { scrutinee, pattern, then, otherwise } => ExprKind::Match {
                scrutinee: Box::new(self.atom(*scrutinee, &mut lets)),
                pattern,
                then: Box::new(self.expr(*then)),
                otherwise: Box::new(self.expr(*otherwise)),
            },
            ExprKind::Seq(items) => ExprKind::Seq(items.into_iter().map(|i| self.atom(i, &mut lets)).collect()),
            ExprKind::Record(fields) => {
                ExprKind::Record(fields.into_iter().map(|(l, f)| (l, self.atom(f, &mut lets))).collect())
            }
            ExprKind::RecordUpdate(r, fields) => ExprKind::RecordUpdate(
                Box::new(self.atom(*r, &mut lets)),
                fields.into_iter().map(|(l, f)| (l, self.atom(f, &mut lets))).collect(),
            ),
            ExprKind::Proj(r, l) => ExprKind::Proj(Box::new(self.atom(*r, &mut lets)), l),
            ExprKind::ConApp(k, a) => ExprKind::ConApp(k, Box::new(self.atom(*a, &mut lets))),
            ExprKind::Utest(mut u, body) => {
                u.test = self.expr(u.test);
                u.expected = self.expr(u.expected);
                ExprKind::Utest(u, Box::new(self.expr(*body)))
            }
            ExprKind::External(d, body) => ExprKind::External(d, Box::new(self.expr(*body))),
            ExprKind::TypeDecl(d, body) => ExprKind::TypeDecl(d, Box::new(self.expr(*body))),
            ExprKind::ConDecl(d, body) => ExprKind::ConDecl(d, Box::new(self.expr(*body))),
            k @ (ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Never | ExprKind::Error) => k,
        };
        wrap(lets, Expr { kind, span, ty })
    }

    /// An application spine with atomic arguments (function arguments of
    /// higher-order built-ins excepted).
    fn app(&mut self, e: Expr) -> Expr {
        let (head, args) = pmx_ast::spine::into_spine(e);
        let builtin = match &head.kind {
            ExprKind::Var(n) => n.id.as_builtin(),
            _ => None,
        };
        let mut lets = Vec::new();
        let mut acc = self.atom(head, &mut lets);
        for (i, (a, s, t)) in args.into_iter().enumerate() {
            let a = if builtin == Some(Builtin::Accelerate) {
                self.expr(a)
            } else if builtin.is_some_and(|b| function_argument(b, i)) {
                self.function_argument(a, &mut lets)
            } else {
                self.atom(a, &mut lets)
            };
            acc = Expr { kind: ExprKind::App(Box::new(acc), Box::new(a)), span: s, ty: t };
        }
        wrap(lets, acc)
    }

    /// The function argument of a higher-order built-in stays a lambda or
    /// a partial application, as the well-formedness rules expect; the
    /// arguments of a partial application that are not functions become
    /// atoms bound before the call (`loop n (f t (addi 1 2))` is
    /// `let a = addi 1 2 in loop n (f t a)`: MExpr evaluates them once,
    /// before the call, so this is where they were evaluated anyway).
    fn function_argument(&mut self, a: Expr, lets: &mut Vec<Binding>) -> Expr {
        if !matches!(a.kind, ExprKind::App(..)) {
            return self.expr(a);
        }
        let (head, args) = pmx_ast::spine::into_spine(a);
        let mut acc = self.atom(head, lets);
        for (a, s, t) in args {
            let a = if a.ty.strip_foralls().as_arrow().is_some() { self.expr(a) } else { self.atom(a, lets) };
            acc = Expr { kind: ExprKind::App(Box::new(acc), Box::new(a)), span: s, ty: t };
        }
        acc
    }

    /// A variable or literal for `e`, binding it first when needed.
    fn atom(&mut self, e: Expr, lets: &mut Vec<Binding>) -> Expr {
        if atomic(&e) {
            return e;
        }
        let e = self.expr(e);
        let name = self.fresh(e.span);
        let var = Expr { kind: ExprKind::Var(name.clone()), span: e.span, ty: e.ty.clone() };
        lets.push(Binding { name, annotation: None, scheme: e.ty.clone(), span: e.span, value: e });
        var
    }
}

fn wrap(lets: Vec<Binding>, e: Expr) -> Expr {
    lets.into_iter().rev().fold(e, |body, b| {
        let (span, ty) = (body.span, body.ty.clone());
        Expr { kind: ExprKind::Let(Box::new(b), Box::new(body)), span, ty }
    })
}
