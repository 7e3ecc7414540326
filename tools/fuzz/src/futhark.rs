//! Futhark-class programs: functional code over scalars, sequences
//! (regular and irregular, nested), tuples and records, with `map`,
//! `map2`, `reduce`, `foldl`, `create`, `flatten`, `concat` and the other
//! sequence built-ins, helpers and local higher-order functions.

use crate::gen::{if_, lam, let_, proj, Gen, Scope};
use crate::program::{Block, Class, Helper, Input, Program};
use crate::rng::Rng;
use crate::tree::{Kind, Node, Ty};

/// The types values are drawn from.
fn types() -> Vec<Ty> {
    let pair = Ty::Tuple(vec![Ty::Int, Ty::Float]);
    let rec = Ty::Record(vec![("a".into(), Ty::Int), ("b".into(), Ty::seq(Ty::Float))]);
    vec![
        Ty::Int,
        Ty::Float,
        Ty::Bool,
        Ty::seq(Ty::Int),
        Ty::seq(Ty::Float),
        Ty::seq(Ty::Bool),
        Ty::seq(Ty::seq(Ty::Int)),
        Ty::seq(Ty::seq(Ty::Float)),
        pair.clone(),
        Ty::seq(pair),
        rec.clone(),
        Ty::seq(rec),
    ]
}

/// Weights of `types()` for a value anywhere (scalars and flat
/// sequences most often).
const WEIGHTS: [usize; 12] = [10, 6, 3, 8, 5, 2, 4, 2, 2, 2, 1, 1];

pub fn program(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let mut g = Gen::new(&mut rng);
    let mut f = Futhark { g: &mut g };
    for _ in 0..f.g.rng.below(3) {
        f.helper();
    }
    let mut inputs = Vec::new();
    let mut scope = Scope::default();
    for _ in 0..1 + f.g.rng.below(4) {
        let t = f.any_type();
        let name = f.g.fresh("in");
        let value = f.input(&t);
        scope = scope.with(&name, t);
        inputs.push(Input { name, value });
    }
    let blocks = (0..2 + f.g.rng.below(3)).map(|_| f.block(&scope)).collect();
    Program { class: Class::Futhark, seed, helpers: std::mem::take(&mut g.helpers), inputs, blocks }
}

struct Futhark<'g, 'r> {
    g: &'g mut Gen<'r>,
}

impl Futhark<'_, '_> {
    fn any_type(&mut self) -> Ty {
        let k = self.g.rng.weighted(&WEIGHTS);
        types().swap_remove(k)
    }

    /// A helper: a top-level function of one to three parameters.
    fn helper(&mut self) {
        let name = self.g.fresh("h");
        let params: Vec<(String, Ty)> =
            (0..1 + self.g.rng.below(3)).map(|_| (self.g.fresh("p"), self.any_type())).collect();
        let scope = Scope { vars: params.clone() };
        let t = self.any_type();
        let body = self.expr(&t, &scope, 3);
        self.g.helpers.push(Helper { name, params, body, recursive: false });
    }

    /// Host data: mostly literals; a nested sequence is regular unless
    /// the program tests irregular data at the boundary (rarely).
    fn input(&mut self, t: &Ty) -> Node {
        let regular = !self.g.rng.chance(self.g.fail_weight(), 100);
        self.literal(t, regular, 5)
    }

    /// A literal value of `t`; nested sequences have rows of one length
    /// when `regular`.
    fn literal(&mut self, t: &Ty, regular: bool, max_len: usize) -> Node {
        match t {
            Ty::Int | Ty::Float | Ty::Bool | Ty::Unit => self.g.scalar_lit(t),
            Ty::Seq(e) => {
                let n = self.g.rng.below(max_len + 1);
                let items = match &**e {
                    Ty::Seq(_) if regular => {
                        let inner = self.g.rng.below(4);
                        (0..n).map(|_| self.literal_of_length(e, inner)).collect()
                    }
                    _ => (0..n).map(|_| self.literal(e, regular, 3)).collect(),
                };
                Node::new(t.clone(), Kind::Seq(items))
            }
            Ty::Tuple(ts) => {
                Node::new(t.clone(), Kind::Tuple(ts.iter().map(|x| self.literal(x, regular, 3)).collect()))
            }
            Ty::Record(fs) => {
                // A field's sequences have one length across a sequence
                // of records unless irregular data is tested.
                let fields = fs
                    .iter()
                    .map(|(l, x)| {
                        let v = match x {
                            Ty::Seq(e) if regular => self.literal_of_length(&Ty::Seq(e.clone()), 2),
                            _ => self.literal(x, regular, 3),
                        };
                        (l.clone(), v)
                    })
                    .collect();
                Node::new(t.clone(), Kind::Record(fields))
            }
            Ty::Tensor(_) | Ty::Fun(..) => unreachable!("no literal of {t:?}"),
        }
    }

    /// A sequence literal of exactly `n` elements, regular inside.
    fn literal_of_length(&mut self, t: &Ty, n: usize) -> Node {
        let e = t.elem().expect("a sequence type").clone();
        let items = (0..n)
            .map(|_| match &e {
                Ty::Seq(_) => self.literal_of_length(&e, 2),
                _ => self.literal(&e, true, 3),
            })
            .collect();
        Node::new(t.clone(), Kind::Seq(items))
    }

    /// A block: an expression that uses a parallel keyword, so that it is
    /// Futhark-class.
    fn block(&mut self, scope: &Scope) -> Block {
        for _ in 0..20 {
            let t = self.any_type();
            let e = self.expr(&t, scope, 4);
            if ["map", "map2", "reduce", "flatten"].iter().any(|k| e.applies(k))
                || self.g.helpers.iter().any(|h| e.applies(&h.name) && parallel(&h.body))
            {
                let approx = e.applies("reduce") && t.has_float();
                return Block { expr: e, outputs: Vec::new(), approx };
            }
        }
        // A map over an input or a literal.
        let s = self.seq_source(&Ty::Int, scope, 2);
        let x = self.g.fresh("x");
        let body = self.expr(&Ty::Int, &scope.with(&x, Ty::Int), 2);
        Block {
            expr: Node::app(Ty::seq(Ty::Int), "map", vec![lam(vec![(x, Ty::Int)], body), s]),
            outputs: Vec::new(),
            approx: false,
        }
    }

    /// A sequence of `elem`s to iterate over.
    fn seq_source(&mut self, elem: &Ty, scope: &Scope, depth: usize) -> Node {
        self.expr(&Ty::seq(elem.clone()), scope, depth)
    }

    /// An expression of type `t`, at most `depth` deep.
    fn expr(&mut self, t: &Ty, scope: &Scope, depth: usize) -> Node {
        if depth == 0 || self.g.rng.chance(1, 5) {
            return self.leaf(t, scope);
        }
        let d = depth - 1;
        let fail = self.g.fail_weight();
        // Forms every type has.
        let helpers = self.g.helpers_of(t);
        let mut weights = vec![6, 8, if helpers.is_empty() { 0 } else { 6 }, 4, fail * 2, 4, 3];
        // Forms of this type.
        weights.push(12);
        match self.g.rng.weighted(&weights) {
            0 => {
                let c = self.expr(&Ty::Bool, scope, d);
                let a = self.expr(t, scope, d);
                let b = self.expr(t, scope, d);
                if_(c, a, b)
            }
            1 => {
                let vt = self.any_type();
                let x = self.g.fresh("v");
                let v = self.expr(&vt, scope, d);
                let body = self.expr(t, &scope.with(&x, vt), d);
                let_(&x, v, body)
            }
            2 => {
                let k = helpers[self.g.rng.below(helpers.len())];
                let params: Vec<Ty> = self.g.helpers[k].params.iter().map(|(_, t)| t.clone()).collect();
                let name = self.g.helpers[k].name.clone();
                let args = params.iter().map(|p| self.expr(p, scope, d)).collect();
                Node::app(t.clone(), name, args)
            }
            3 => {
                // foldl with an accumulator of this type.
                let et = self.any_type();
                let s = self.seq_source(&et, scope, d);
                let init = self.expr(t, scope, d);
                let (acc, x) = (self.g.fresh("acc"), self.g.fresh("x"));
                let body = self.expr(t, &scope.with(&acc, t.clone()).with(&x, et.clone()), d);
                Node::app(t.clone(), "foldl", vec![lam(vec![(acc, t.clone()), (x, et)], body), init, s])
            }
            4 => {
                // An element of a sequence: may be past its end.
                let s = self.seq_source(t, scope, d);
                if self.g.rng.chance(1, 2) {
                    Node::app(t.clone(), "head", vec![s])
                } else {
                    let i = self.index(scope, d);
                    Node::app(t.clone(), "get", vec![s, i])
                }
            }
            5 => self.reduce(t, scope, d).unwrap_or_else(|| self.leaf(t, scope)),
            6 => {
                // A local higher-order function, unannotated, partially
                // applied to a lambda (the lowering must find the
                // instance).
                let pt = self.any_type();
                let (hof, g, y, x) = (self.g.fresh("hof"), self.g.fresh("g"), self.g.fresh("y"), self.g.fresh("x"));
                let fun_ty = Ty::Fun(vec![pt.clone()], Box::new(t.clone()));
                let apply = Node::app(t.clone(), g.clone(), vec![Node::var(pt.clone(), y.clone())]);
                let hof_value = Node::new(
                    Ty::Fun(vec![fun_ty.clone(), pt.clone()], Box::new(t.clone())),
                    Kind::Lam(vec![(g, None), (y, None)], Box::new(apply)),
                );
                let body = self.expr(t, &scope.with(&x, pt.clone()), d);
                let f = lam(vec![(x, pt.clone())], body);
                let s = self.seq_source(&pt, scope, d);
                let mapped = Node::app(
                    Ty::seq(t.clone()),
                    "map",
                    vec![Node::app(Ty::Fun(vec![pt], Box::new(t.clone())), hof.clone(), vec![f]), s],
                );
                let pick = self.index(scope, d);
                let use_ = Node::app(t.clone(), "get", vec![mapped, pick]);
                let_(&hof, hof_value, use_)
            }
            _ => self.form_of(t, scope, d),
        }
    }

    /// A leaf: a variable or a literal.
    fn leaf(&mut self, t: &Ty, scope: &Scope) -> Node {
        if self.g.rng.chance(2, 3) {
            if let Some(v) = self.g.var_of(scope, t) {
                return v;
            }
        }
        let regular = !self.g.rng.chance(self.g.fail_weight(), 100);
        self.literal(t, regular, 3)
    }

    /// An index: small, sometimes computed.
    fn index(&mut self, scope: &Scope, d: usize) -> Node {
        if self.g.rng.chance(self.g.fail_weight(), 20) {
            self.expr(&Ty::Int, scope, d.min(1))
        } else {
            self.g.small(1)
        }
    }

    /// `reduce` with an associative operator and its neutral element.
    fn reduce(&mut self, t: &Ty, scope: &Scope, d: usize) -> Option<Node> {
        let (op, ne) = match t {
            Ty::Int => match self.g.rng.below(3) {
                0 => (Node::var(binary(&Ty::Int), "addi"), "0"),
                1 => (Node::var(binary(&Ty::Int), "muli"), "1"),
                _ => {
                    let (a, b) = (self.g.fresh("a"), self.g.fresh("b"));
                    let (va, vb) = (Node::var(Ty::Int, a.clone()), Node::var(Ty::Int, b.clone()));
                    let body = if_(Node::app(Ty::Bool, "gti", vec![va.clone(), vb.clone()]), va, vb);
                    (lam(vec![(a, Ty::Int), (b, Ty::Int)], body), "(subi -9223372036854775807 1)")
                }
            },
            Ty::Float => (Node::var(binary(&Ty::Float), "addf"), "0.0"),
            Ty::Bool => {
                let (a, b) = (self.g.fresh("a"), self.g.fresh("b"));
                let body =
                    if_(Node::var(Ty::Bool, a.clone()), Node::var(Ty::Bool, b.clone()), Node::lit(Ty::Bool, "false"));
                (lam(vec![(a, Ty::Bool), (b, Ty::Bool)], body), "true")
            }
            Ty::Seq(_) => (Node::var(binary(t), "concat"), "[]"),
            _ => return None,
        };
        let ne = if ne == "[]" { Node::new(t.clone(), Kind::Seq(Vec::new())) } else { Node::lit(t.clone(), ne) };
        let s = self.seq_source(t, scope, d);
        Some(Node::app(t.clone(), "reduce", vec![op, ne, s]))
    }

    /// The forms particular to `t`.
    fn form_of(&mut self, t: &Ty, scope: &Scope, d: usize) -> Node {
        let fail = self.g.fail_weight();
        match t {
            Ty::Int => match self.g.rng.weighted(&[10, 2 + 2 * fail, 2, 4, 3, 1]) {
                0 => {
                    let op = *self.g.rng.pick(&["addi", "subi", "muli"]);
                    Node::app(Ty::Int, op, vec![self.expr(&Ty::Int, scope, d), self.expr(&Ty::Int, scope, d)])
                }
                1 => {
                    let op = *self.g.rng.pick(&["divi", "modi"]);
                    let b = self.expr(&Ty::Int, scope, d);
                    let b = self.g.divisor(b);
                    Node::app(Ty::Int, op, vec![self.expr(&Ty::Int, scope, d), b])
                }
                2 => Node::app(Ty::Int, "negi", vec![self.expr(&Ty::Int, scope, d)]),
                3 => {
                    let et = self.any_type();
                    Node::app(Ty::Int, "length", vec![self.seq_source(&et, scope, d)])
                }
                4 => {
                    let op = *self.g.rng.pick(&["floorfi", "ceilfi", "roundfi"]);
                    Node::app(Ty::Int, op, vec![self.expr(&Ty::Float, scope, d)])
                }
                _ => {
                    let r = self.expr(&Ty::Tuple(vec![Ty::Int, Ty::Float]), scope, d);
                    proj(r, "0", Ty::Int)
                }
            },
            Ty::Float => match self.g.rng.weighted(&[10, 2, 3, 2]) {
                0 => {
                    let op = *self.g.rng.pick(&["addf", "subf", "mulf", "divf"]);
                    Node::app(Ty::Float, op, vec![self.expr(&Ty::Float, scope, d), self.expr(&Ty::Float, scope, d)])
                }
                1 => Node::app(Ty::Float, "negf", vec![self.expr(&Ty::Float, scope, d)]),
                2 => Node::app(Ty::Float, "int2float", vec![self.expr(&Ty::Int, scope, d)]),
                _ => {
                    let r = self.expr(&Ty::Tuple(vec![Ty::Int, Ty::Float]), scope, d);
                    proj(r, "1", Ty::Float)
                }
            },
            Ty::Bool => match self.g.rng.weighted(&[6, 4, 2]) {
                0 => {
                    let op = *self.g.rng.pick(&["eqi", "neqi", "lti", "gti", "leqi", "geqi"]);
                    Node::app(Ty::Bool, op, vec![self.expr(&Ty::Int, scope, d), self.expr(&Ty::Int, scope, d)])
                }
                1 => {
                    let op = *self.g.rng.pick(&["eqf", "neqf", "ltf", "gtf", "leqf", "geqf"]);
                    Node::app(Ty::Bool, op, vec![self.expr(&Ty::Float, scope, d), self.expr(&Ty::Float, scope, d)])
                }
                _ => {
                    let et = self.any_type();
                    Node::app(Ty::Bool, "null", vec![self.seq_source(&et, scope, d)])
                }
            },
            Ty::Seq(e) => self.seq_form(t, e, scope, d),
            Ty::Tuple(ts) => Node::new(t.clone(), Kind::Tuple(ts.iter().map(|x| self.expr(x, scope, d)).collect())),
            Ty::Record(fs) => {
                let fields = fs.iter().map(|(l, x)| (l.clone(), self.expr(x, scope, d))).collect();
                Node::new(t.clone(), Kind::Record(fields))
            }
            _ => self.leaf(t, scope),
        }
    }

    /// The forms that make a sequence.
    fn seq_form(&mut self, t: &Ty, e: &Ty, scope: &Scope, d: usize) -> Node {
        let fail = self.g.fail_weight();
        let nested = matches!(e, Ty::Seq(_));
        let weights = [
            12,                                // map
            5,                                 // map2
            6,                                 // create
            4,                                 // concat
            3,                                 // cons / snoc
            3,                                 // reverse
            1 + fail,                          // tail
            3,                                 // subsequence
            2 + fail,                          // set
            if d > 0 { 4 } else { 0 },         // flatten
            if nested { 1 + fail } else { 3 }, // a literal of expressions
        ];
        match self.g.rng.weighted(&weights) {
            0 => {
                let ut = self.any_type();
                let s = self.seq_source(&ut, scope, d);
                let x = self.g.fresh("x");
                let body = self.expr(e, &scope.with(&x, ut.clone()), d);
                Node::app(t.clone(), "map", vec![lam(vec![(x, ut)], body), s])
            }
            1 => {
                let (ut, vt) = (self.any_type(), self.any_type());
                let a = self.seq_source(&ut, scope, d);
                let b = self.seq_source(&vt, scope, d);
                let (x, y) = (self.g.fresh("x"), self.g.fresh("y"));
                let body = self.expr(e, &scope.with(&x, ut.clone()).with(&y, vt.clone()), d);
                Node::app(t.clone(), "map2", vec![lam(vec![(x, ut), (y, vt)], body), a, b])
            }
            2 => {
                let n =
                    if self.g.rng.chance(fail, 30) { self.expr(&Ty::Int, scope, d.min(1)) } else { self.g.small(4) };
                let i = self.g.fresh("i");
                let body = self.expr(e, &scope.with(&i, Ty::Int), d);
                Node::app(t.clone(), "create", vec![n, lam(vec![(i, Ty::Int)], body)])
            }
            3 => Node::app(t.clone(), "concat", vec![self.expr(t, scope, d), self.expr(t, scope, d)]),
            4 => {
                let x = self.expr(e, scope, d);
                let s = self.expr(t, scope, d);
                if self.g.rng.chance(1, 2) {
                    Node::app(t.clone(), "cons", vec![x, s])
                } else {
                    Node::app(t.clone(), "snoc", vec![s, x])
                }
            }
            5 => Node::app(t.clone(), "reverse", vec![self.expr(t, scope, d)]),
            6 => Node::app(t.clone(), "tail", vec![self.expr(t, scope, d)]),
            7 => {
                let s = self.expr(t, scope, d);
                let (i, n) = (self.g.small(2), self.g.small(3));
                Node::app(t.clone(), "subsequence", vec![s, i, n])
            }
            8 => {
                let s = self.expr(t, scope, d);
                let i = self.index(scope, d);
                let x = self.expr(e, scope, d);
                Node::app(t.clone(), "set", vec![s, i, x])
            }
            9 => Node::app(t.clone(), "flatten", vec![self.expr(&Ty::seq(t.clone()), scope, d)]),
            _ => {
                let n = self.g.rng.below(4);
                let items = (0..n).map(|_| self.expr(e, scope, d)).collect();
                Node::new(t.clone(), Kind::Seq(items))
            }
        }
    }
}

/// The type of a binary operator on `t`.
fn binary(t: &Ty) -> Ty {
    Ty::Fun(vec![t.clone(), t.clone()], Box::new(t.clone()))
}

/// Whether a helper's body uses a parallel keyword.
fn parallel(body: &Node) -> bool {
    ["map", "map2", "reduce", "flatten"].iter().any(|k| body.applies(k))
}
