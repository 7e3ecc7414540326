//! The generated programs' expressions: a small typed tree that renders as
//! MExpr (every compound form in parentheses, so no precedence can bite)
//! and that the minimiser can take apart (every node knows its type).

use std::fmt::Write;

/// The types generated code uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    Int,
    Float,
    Bool,
    Unit,
    Seq(Box<Ty>),
    Tuple(Vec<Ty>),
    /// Labels sorted, as the type checker prints them.
    Record(Vec<(String, Ty)>),
    Tensor(Box<Ty>),
    /// A function of the parameters' types.
    Fun(Vec<Ty>, Box<Ty>),
}

impl Ty {
    pub fn seq(t: Ty) -> Ty {
        Ty::Seq(Box::new(t))
    }

    pub fn elem(&self) -> Option<&Ty> {
        match self {
            Ty::Seq(e) | Ty::Tensor(e) => Some(e),
            _ => None,
        }
    }

    /// How many sequence types are nested at the top.
    pub fn depth(&self) -> usize {
        match self {
            Ty::Seq(e) => 1 + e.depth(),
            _ => 0,
        }
    }

    /// Whether a Float is inside (printed values that a reordered
    /// reduction may change).
    pub fn has_float(&self) -> bool {
        match self {
            Ty::Float => true,
            Ty::Seq(e) | Ty::Tensor(e) => e.has_float(),
            Ty::Tuple(ts) => ts.iter().any(Ty::has_float),
            Ty::Record(fs) => fs.iter().any(|(_, t)| t.has_float()),
            Ty::Fun(..) | Ty::Int | Ty::Bool | Ty::Unit => false,
        }
    }

    /// The type as MExpr writes it.
    pub fn mexpr(&self) -> String {
        match self {
            Ty::Int => "Int".into(),
            Ty::Float => "Float".into(),
            Ty::Bool => "Bool".into(),
            Ty::Unit => "()".into(),
            Ty::Seq(e) => format!("[{}]", e.mexpr()),
            Ty::Tensor(e) => format!("Tensor[{}]", e.mexpr()),
            Ty::Tuple(ts) => format!("({})", ts.iter().map(Ty::mexpr).collect::<Vec<_>>().join(", ")),
            Ty::Record(fs) => {
                format!("{{{}}}", fs.iter().map(|(l, t)| format!("{l} : {}", t.mexpr())).collect::<Vec<_>>().join(", "))
            }
            Ty::Fun(ps, r) => {
                let mut s = String::from("(");
                for p in ps {
                    let _ = write!(s, "{} -> ", p.mexpr());
                }
                let _ = write!(s, "{})", r.mexpr());
                s
            }
        }
    }
}

/// An expression with its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub ty: Ty,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    /// A literal as written (a negative one in parentheses when needed is
    /// the renderer's business).
    Lit(String),
    Var(String),
    /// `(f a b ...)`: a built-in, a helper or a variable applied.
    App(String, Vec<Node>),
    /// `(lam x : T. lam y : U. body)`; a parameter without a type is
    /// written without annotation (the checker infers it).
    Lam(Vec<(String, Option<Ty>)>, Box<Node>),
    /// `(let x : T = value in body)`, annotated with the value's type.
    Let(String, Box<Node>, Box<Node>),
    If(Box<Node>, Box<Node>, Box<Node>),
    /// `[a, b]`.
    Seq(Vec<Node>),
    Tuple(Vec<Node>),
    Record(Vec<(String, Node)>),
    /// `e.label` (a tuple's labels are numbers).
    Proj(Box<Node>, String),
    /// `(a; b)`.
    Semi(Box<Node>, Box<Node>),
}

impl Node {
    pub fn new(ty: Ty, kind: Kind) -> Node {
        Node { ty, kind }
    }

    pub fn lit(ty: Ty, text: impl Into<String>) -> Node {
        Node::new(ty, Kind::Lit(text.into()))
    }

    pub fn var(ty: Ty, name: impl Into<String>) -> Node {
        Node::new(ty, Kind::Var(name.into()))
    }

    pub fn app(ty: Ty, f: impl Into<String>, args: Vec<Node>) -> Node {
        Node::new(ty, Kind::App(f.into(), args))
    }

    /// The node's children, in rendering order.
    pub fn children(&self) -> Vec<&Node> {
        match &self.kind {
            Kind::Lit(_) | Kind::Var(_) => Vec::new(),
            Kind::App(_, args) | Kind::Seq(args) | Kind::Tuple(args) => args.iter().collect(),
            Kind::Lam(_, b) | Kind::Proj(b, _) => vec![b],
            Kind::Let(_, a, b) | Kind::Semi(a, b) => vec![a, b],
            Kind::If(c, a, b) => vec![c, a, b],
            Kind::Record(fs) => fs.iter().map(|(_, n)| n).collect(),
        }
    }

    pub fn children_mut(&mut self) -> Vec<&mut Node> {
        match &mut self.kind {
            Kind::Lit(_) | Kind::Var(_) => Vec::new(),
            Kind::App(_, args) | Kind::Seq(args) | Kind::Tuple(args) => args.iter_mut().collect(),
            Kind::Lam(_, b) | Kind::Proj(b, _) => vec![b],
            Kind::Let(_, a, b) | Kind::Semi(a, b) => vec![a, b],
            Kind::If(c, a, b) => vec![c, a, b],
            Kind::Record(fs) => fs.iter_mut().map(|(_, n)| n).collect(),
        }
    }

    /// The number of nodes.
    pub fn size(&self) -> usize {
        1 + self.children().iter().map(|c| c.size()).sum::<usize>()
    }

    /// The node at `path` (child indices from here).
    pub fn at(&self, path: &[usize]) -> Option<&Node> {
        match path.split_first() {
            None => Some(self),
            Some((&k, rest)) => self.children().get(k)?.at(rest),
        }
    }

    pub fn at_mut(&mut self, path: &[usize]) -> Option<&mut Node> {
        match path.split_first() {
            None => Some(self),
            Some((&k, rest)) => self.children_mut().into_iter().nth(k)?.at_mut(rest),
        }
    }

    /// Every node's path, parents before children.
    pub fn paths(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        for (k, c) in self.children().into_iter().enumerate() {
            for mut p in c.paths() {
                p.insert(0, k);
                out.push(p);
            }
        }
        out
    }

    /// Whether a built-in or helper named `f` is applied anywhere.
    pub fn applies(&self, f: &str) -> bool {
        matches!(&self.kind, Kind::App(g, _) if g == f) || self.children().iter().any(|c| c.applies(f))
    }

    /// The node as MExpr.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, s: &mut String) {
        match &self.kind {
            Kind::Lit(t) => s.push_str(t),
            Kind::Var(v) => s.push_str(v),
            Kind::App(f, args) => {
                let _ = write!(s, "({f}");
                for a in args {
                    s.push(' ');
                    a.write(s);
                }
                s.push(')');
            }
            Kind::Lam(params, body) => {
                s.push('(');
                for (x, t) in params {
                    match t {
                        Some(t) => {
                            let _ = write!(s, "lam {x} : {}. ", t.mexpr());
                        }
                        None => {
                            let _ = write!(s, "lam {x}. ");
                        }
                    }
                }
                body.write(s);
                s.push(')');
            }
            Kind::Let(x, v, body) => {
                // Functions go unannotated: a local higher-order
                // function may be polymorphic.
                match &v.ty {
                    Ty::Fun(..) => {
                        let _ = write!(s, "(let {x} = ");
                    }
                    t => {
                        let _ = write!(s, "(let {x} : {} = ", t.mexpr());
                    }
                }
                v.write(s);
                s.push_str(" in ");
                body.write(s);
                s.push(')');
            }
            Kind::If(c, a, b) => {
                s.push_str("(if ");
                c.write(s);
                s.push_str(" then ");
                a.write(s);
                s.push_str(" else ");
                b.write(s);
                s.push(')');
            }
            Kind::Seq(items) => {
                s.push('[');
                for (k, i) in items.iter().enumerate() {
                    if k > 0 {
                        s.push_str(", ");
                    }
                    i.write(s);
                }
                s.push(']');
            }
            Kind::Tuple(items) => {
                s.push('(');
                for (k, i) in items.iter().enumerate() {
                    if k > 0 {
                        s.push_str(", ");
                    }
                    i.write(s);
                }
                s.push(')');
            }
            Kind::Record(fields) => {
                s.push('{');
                for (k, (l, i)) in fields.iter().enumerate() {
                    if k > 0 {
                        s.push_str(", ");
                    }
                    let _ = write!(s, "{l} = ");
                    i.write(s);
                }
                s.push('}');
            }
            Kind::Proj(r, l) => {
                r.write(s);
                let _ = write!(s, ".{l}");
            }
            Kind::Semi(a, b) => {
                s.push('(');
                a.write(s);
                s.push_str("; ");
                b.write(s);
                s.push(')');
            }
        }
    }
}

/// The simplest value of a type, for the minimiser (`None` for types
/// without a literal: functions and tensors).
pub fn simplest(ty: &Ty) -> Option<Node> {
    let kind = match ty {
        Ty::Int => Kind::Lit("0".into()),
        Ty::Float => Kind::Lit("0.0".into()),
        Ty::Bool => Kind::Lit("false".into()),
        Ty::Unit => Kind::Lit("()".into()),
        // An empty literal has an unknown element type, which a let
        // without annotation leaves open; the contexts fix it.
        Ty::Seq(_) => Kind::Seq(Vec::new()),
        Ty::Tuple(ts) => Kind::Tuple(ts.iter().map(simplest).collect::<Option<_>>()?),
        Ty::Record(fs) => Kind::Record(fs.iter().map(|(l, t)| Some((l.clone(), simplest(t)?))).collect::<Option<_>>()?),
        Ty::Tensor(_) | Ty::Fun(..) => return None,
    };
    Some(Node::new(ty.clone(), kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_parentheses_and_annotations() {
        let x = Node::var(Ty::Int, "x");
        let body = Node::app(Ty::Int, "addi", vec![x, Node::lit(Ty::Int, "-1")]);
        let f = Node::new(
            Ty::Fun(vec![Ty::Int], Box::new(Ty::Int)),
            Kind::Lam(vec![("x".into(), Some(Ty::Int))], Box::new(body)),
        );
        let m = Node::app(Ty::seq(Ty::Int), "map", vec![f, Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![]))]);
        assert_eq!(m.render(), "(map (lam x : Int. (addi x -1)) [])");
        assert_eq!(m.size(), 6);
        assert_eq!(m.paths().len(), 6);
        assert_eq!(m.at(&[0, 0]).map(|n| n.render()), Some("(addi x -1)".into()));
    }
}
