//! What both classes' generators share: the scope of variables and
//! helpers, fresh names, literals (edge values included) and the forms
//! every type has (`if`, `let`, helper calls).

use crate::program::Helper;
use crate::rng::Rng;
use crate::tree::{Kind, Node, Ty};

/// Variables in scope, innermost last.
#[derive(Clone, Default)]
pub struct Scope {
    pub vars: Vec<(String, Ty)>,
}

impl Scope {
    pub fn with(&self, name: &str, ty: Ty) -> Scope {
        let mut s = self.clone();
        s.vars.push((name.to_string(), ty));
        s
    }

    /// The variables of type `t`.
    pub fn of(&self, t: &Ty) -> Vec<&str> {
        self.vars.iter().filter(|(_, vt)| vt == t).map(|(n, _)| n.as_str()).collect()
    }
}

/// The generator's state: the random source, a counter for fresh names
/// and the helpers made so far.
pub struct Gen<'r> {
    pub rng: &'r mut Rng,
    fresh: usize,
    pub helpers: Vec<Helper>,
    /// Whether forms that may fail (division, indexing past the end) are
    /// generated freely; otherwise rarely, so that most blocks run.
    pub failing: bool,
}

impl<'r> Gen<'r> {
    pub fn new(rng: &'r mut Rng) -> Gen<'r> {
        let failing = rng.chance(1, 4);
        Gen { rng, fresh: 0, helpers: Vec::new(), failing }
    }

    pub fn fresh(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}{}", self.fresh)
    }

    /// The weight of a form that may fail: none in most programs.
    pub fn fail_weight(&self) -> usize {
        if self.failing {
            8
        } else {
            0
        }
    }

    /// A divisor: anything where failures are tested, else a value that
    /// cannot be zero (`e * e + 1` is odd, whatever `e` wraps to).
    pub fn divisor(&mut self, e: Node) -> Node {
        if self.failing {
            return e;
        }
        if self.rng.chance(1, 2) {
            return Node::lit(Ty::Int, self.rng.pick(&["1", "2", "3", "-1", "7", "-4"]).to_string());
        }
        let square = Node::app(Ty::Int, "muli", vec![e.clone(), e]);
        Node::app(Ty::Int, "addi", vec![square, Node::lit(Ty::Int, "1")])
    }

    /// A literal of a scalar type, edge values included.
    pub fn scalar_lit(&mut self, t: &Ty) -> Node {
        let text = match t {
            Ty::Int => {
                let common = ["0", "1", "2", "3", "4", "5", "7", "-1", "-3", "10", "42", "100"];
                let edge = ["9223372036854775807", "(subi -9223372036854775807 1)", "-100000", "4611686018427387904"];
                if self.rng.chance(1, 12) {
                    self.rng.pick(&edge).to_string()
                } else {
                    self.rng.pick(&common).to_string()
                }
            }
            Ty::Float => {
                let common = ["0.0", "1.0", "2.0", "-1.5", "0.5", "3.25", "10.0", "-0.25", "0.1"];
                let edge = [
                    "1e300",
                    "-1e300",
                    "1e-300",
                    "-0.0",
                    "(divf 1.0 0.0)",
                    "(divf -1.0 0.0)",
                    "(divf 0.0 0.0)",
                    "9.3e18",
                ];
                if self.rng.chance(1, 10) {
                    self.rng.pick(&edge).to_string()
                } else {
                    self.rng.pick(&common).to_string()
                }
            }
            Ty::Bool => self.rng.pick(&["true", "false"]).to_string(),
            Ty::Unit => "()".into(),
            other => unreachable!("not a scalar: {other:?}"),
        };
        Node::lit(t.clone(), text)
    }

    /// A small non-negative Int literal (lengths, counts).
    pub fn small(&mut self, max: usize) -> Node {
        Node::lit(Ty::Int, self.rng.below(max + 1).to_string())
    }

    /// A variable of type `t` from the scope, if any.
    pub fn var_of(&mut self, scope: &Scope, t: &Ty) -> Option<Node> {
        let vars = scope.of(t);
        if vars.is_empty() {
            return None;
        }
        let v = vars[self.rng.below(vars.len())].to_string();
        Some(Node::var(t.clone(), v))
    }

    /// The helpers whose result has type `t`.
    pub fn helpers_of(&self, t: &Ty) -> Vec<usize> {
        (0..self.helpers.len()).filter(|&k| &self.helpers[k].body.ty == t).collect()
    }
}

/// `(lam x : T. ... body)`.
pub fn lam(params: Vec<(String, Ty)>, body: Node) -> Node {
    let ty = Ty::Fun(params.iter().map(|(_, t)| t.clone()).collect(), Box::new(body.ty.clone()));
    Node::new(ty, Kind::Lam(params.into_iter().map(|(x, t)| (x, Some(t))).collect(), Box::new(body)))
}

pub fn if_(c: Node, a: Node, b: Node) -> Node {
    Node::new(a.ty.clone(), Kind::If(Box::new(c), Box::new(a), Box::new(b)))
}

pub fn let_(x: &str, v: Node, body: Node) -> Node {
    Node::new(body.ty.clone(), Kind::Let(x.to_string(), Box::new(v), Box::new(body)))
}

pub fn semi(a: Node, b: Node) -> Node {
    Node::new(b.ty.clone(), Kind::Semi(Box::new(a), Box::new(b)))
}

pub fn proj(r: Node, label: &str, t: Ty) -> Node {
    Node::new(t, Kind::Proj(Box::new(r), label.to_string()))
}
