//! Futhark-class programs: functional code over scalars, sequences
//! (nested too), tuples and records, with `map`, `map2`, `reduce`,
//! `foldl`, `create`, `flatten`, `concat` and the other sequence
//! built-ins, helpers and local higher-order functions, histograms (a
//! `foldl` updating an `[Int]` at computed indices with `addi` or `muli`,
//! which Futhark code runs as `reduce_by_index`), and derivatives
//! (`grad`, `vjp`, `jvp`) of functions of differentiable types, not nested
//! (the interpreter refuses those).
//!
//! Every expression is made for a *shape* (the length of each sequence in
//! it), so that in most programs indices are in bounds, `map2` gets
//! sequences of one length and nested sequences are regular: the code then
//! runs, and its results are compared. Programs that test failures (a
//! quarter, `Gen::failing`) now and then take another shape or index than
//! the one asked for.

use crate::gen::{if_, lam, let_, proj, Gen};
use crate::program::{Block, Class, Helper, Input, Program};
use crate::rng::Rng;
use crate::tree::{Kind, Node, Ty};

/// The lengths of the sequences in a value: a sequence's and its elements'
/// (all alike), a record's fields'.
#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Scalar,
    Seq(usize, Box<Shape>),
    Fields(Vec<Shape>),
}

impl Shape {
    fn seq(n: usize, e: Shape) -> Shape {
        Shape::Seq(n, Box::new(e))
    }

    fn len(&self) -> usize {
        match self {
            Shape::Seq(n, _) => *n,
            _ => 0,
        }
    }

    fn elem(&self) -> Shape {
        match self {
            Shape::Seq(_, e) => (**e).clone(),
            _ => Shape::Scalar,
        }
    }

    fn field(&self, k: usize) -> Shape {
        match self {
            Shape::Fields(fs) => fs.get(k).cloned().unwrap_or(Shape::Scalar),
            _ => Shape::Scalar,
        }
    }
}

/// Variables in scope with their types and shapes.
#[derive(Clone, Default)]
struct Scope {
    vars: Vec<(String, Ty, Shape)>,
}

impl Scope {
    fn with(&self, name: &str, ty: Ty, shape: Shape) -> Scope {
        let mut s = self.clone();
        s.vars.push((name.to_string(), ty, shape));
        s
    }
}

/// A helper with the shapes it was made for.
struct Sig {
    name: String,
    params: Vec<(Ty, Shape)>,
    result: (Ty, Shape),
}

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

/// Weights of `types()` (scalars and flat sequences most often).
const WEIGHTS: [usize; 12] = [10, 6, 3, 8, 5, 2, 4, 2, 2, 2, 1, 1];

pub fn program(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let mut g = Gen::new(&mut rng);
    let mut f = Futhark { g: &mut g, sigs: Vec::new(), differentiating: false };
    for _ in 0..f.g.rng.below(3) {
        f.helper();
    }
    let mut inputs = Vec::new();
    let mut scope = Scope::default();
    for _ in 0..1 + f.g.rng.below(4) {
        let t = f.any_type();
        let shape = f.shape_of(&t);
        let name = f.g.fresh("in");
        // Data from outside: irregular where failures are tested, now and
        // then (the boundary's check).
        let value = if f.g.rng.chance(f.g.fail_weight(), 40) {
            let other = f.shape_of(&t);
            f.literal(&t, &other, true)
        } else {
            f.literal(&t, &shape, false)
        };
        scope = scope.with(&name, t, shape);
        inputs.push(Input { name, value });
    }
    let blocks = (0..2 + f.g.rng.below(3)).map(|_| f.block(&scope)).collect();
    Program { class: Class::Futhark, seed, helpers: std::mem::take(&mut g.helpers), inputs, blocks }
}

struct Futhark<'g, 'r> {
    g: &'g mut Gen<'r>,
    sigs: Vec<Sig>,
    /// Inside a derivative's function (no derivative is made there).
    differentiating: bool,
}

/// An `[Int]` of at least one element: what a histogram makes.
fn is_histogram(t: &Ty, s: &Shape) -> bool {
    matches!((t, s), (Ty::Seq(e), Shape::Seq(n, _)) if **e == Ty::Int && *n > 0)
}

/// Float, and sequences, tuples and records of it: what derivatives take.
fn differentiable(t: &Ty) -> bool {
    match t {
        Ty::Float => true,
        Ty::Seq(e) => differentiable(e),
        Ty::Tuple(ts) => ts.iter().all(differentiable),
        Ty::Record(fs) => fs.iter().all(|(_, t)| differentiable(t)),
        _ => false,
    }
}

impl Futhark<'_, '_> {
    fn any_type(&mut self) -> Ty {
        let k = self.g.rng.weighted(&WEIGHTS);
        types().swap_remove(k)
    }

    /// A shape for a value of type `t`: sequences of 0 to 4 elements
    /// (mostly 1 to 3).
    fn shape_of(&mut self, t: &Ty) -> Shape {
        match t {
            Ty::Seq(e) => {
                let n = *self.g.rng.pick(&[0, 1, 1, 2, 2, 3, 3, 4]);
                let es = self.shape_of(e);
                Shape::seq(n, es)
            }
            Ty::Tuple(ts) => Shape::Fields(ts.iter().map(|x| self.shape_of(x)).collect()),
            Ty::Record(fs) => Shape::Fields(fs.iter().map(|(_, x)| self.shape_of(x)).collect()),
            _ => Shape::Scalar,
        }
    }

    /// The shape asked for, or (now and then, where failures are tested)
    /// another.
    fn maybe_other(&mut self, t: &Ty, s: &Shape) -> Shape {
        if self.g.rng.chance(self.g.fail_weight(), 60) {
            self.shape_of(t)
        } else {
            s.clone()
        }
    }

    /// A helper: a top-level function of one to three parameters, made
    /// for shapes of them.
    fn helper(&mut self) {
        let name = self.g.fresh("h");
        let params: Vec<(String, Ty, Shape)> = (0..1 + self.g.rng.below(3))
            .map(|_| {
                let t = self.any_type();
                let s = self.shape_of(&t);
                (self.g.fresh("p"), t, s)
            })
            .collect();
        let scope = Scope { vars: params.clone() };
        let t = self.any_type();
        let s = self.shape_of(&t);
        let body = self.expr(&t, &s, &scope, 3);
        self.sigs.push(Sig {
            name: name.clone(),
            params: params.iter().map(|(_, t, s)| (t.clone(), s.clone())).collect(),
            result: (t, s),
        });
        let params = params.into_iter().map(|(n, t, _)| (n, t)).collect();
        self.g.helpers.push(Helper { name, params, body, recursive: false });
    }

    /// A literal of `t` at `shape`; `irregular`: rows of nested sequences
    /// get shapes of their own.
    fn literal(&mut self, t: &Ty, shape: &Shape, irregular: bool) -> Node {
        match t {
            Ty::Int | Ty::Float | Ty::Bool | Ty::Unit => self.g.scalar_lit(t),
            Ty::Seq(e) => {
                let items = (0..shape.len())
                    .map(|_| {
                        let es = if irregular { self.shape_of(e) } else { shape.elem() };
                        self.literal(e, &es, irregular)
                    })
                    .collect();
                Node::new(t.clone(), Kind::Seq(items))
            }
            Ty::Tuple(ts) => Node::new(
                t.clone(),
                Kind::Tuple(ts.iter().enumerate().map(|(k, x)| self.literal(x, &shape.field(k), irregular)).collect()),
            ),
            Ty::Record(fs) => {
                let fields = fs
                    .iter()
                    .enumerate()
                    .map(|(k, (l, x))| (l.clone(), self.literal(x, &shape.field(k), irregular)))
                    .collect();
                Node::new(t.clone(), Kind::Record(fields))
            }
            Ty::Tensor(_) | Ty::Fun(..) => unreachable!("no literal of {t:?}"),
        }
    }

    /// A block: an expression that uses a parallel keyword, so that it is
    /// Futhark-class.
    fn block(&mut self, scope: &Scope) -> Block {
        for _ in 0..20 {
            let t = self.any_type();
            let s = self.shape_of(&t);
            let e = self.expr(&t, &s, scope, 4);
            let helper_parallel = self.g.helpers.iter().any(|h| e.applies(&h.name) && parallel(&h.body));
            if parallel(&e) || helper_parallel {
                // Derivatives: Futhark's reverse mode adds adjoints in
                // another order than the interpreter's.
                let derivative = ["grad", "vjp", "jvp"].iter().any(|d| e.applies(d));
                let approx = (e.applies("reduce") || helper_parallel || derivative) && t.has_float();
                return Block { expr: e, outputs: Vec::new(), approx };
            }
        }
        let s = Shape::seq(3, Shape::Scalar);
        let src = self.expr(&Ty::seq(Ty::Int), &s, scope, 2);
        let x = self.g.fresh("x");
        let body = self.expr(&Ty::Int, &Shape::Scalar, &scope.with(&x, Ty::Int, Shape::Scalar), 2);
        let e = Node::app(Ty::seq(Ty::Int), "map", vec![lam(vec![(x, Ty::Int)], body), src]);
        Block { expr: e, outputs: Vec::new(), approx: false }
    }

    /// An expression of type `t` and shape `s`, at most `depth` deep.
    fn expr(&mut self, t: &Ty, s: &Shape, scope: &Scope, depth: usize) -> Node {
        if depth == 0 || self.g.rng.chance(1, 5) {
            return self.leaf(t, s, scope);
        }
        let d = depth - 1;
        let helpers: Vec<usize> =
            (0..self.sigs.len()).filter(|&k| self.sigs[k].result == (t.clone(), s.clone())).collect();
        let weights = [
            6,                                                              // if
            8,                                                              // let
            if helpers.is_empty() { 0 } else { 8 },                         // helper call
            4,                                                              // foldl
            5,                                                              // an element of a sequence
            4,                                                              // reduce
            3,                                                              // a local higher-order function
            14,                                                             // forms of this type
            if differentiable(t) && !self.differentiating { 3 } else { 0 }, // a derivative
            if is_histogram(t, s) { 3 } else { 0 },                         // a histogram
        ];
        match self.g.rng.weighted(&weights) {
            0 => {
                let c = self.expr(&Ty::Bool, &Shape::Scalar, scope, d);
                let a = self.expr(t, s, scope, d);
                let b = self.expr(t, s, scope, d);
                if_(c, a, b)
            }
            1 => {
                let vt = self.any_type();
                let vs = self.shape_of(&vt);
                let x = self.g.fresh("v");
                let v = self.expr(&vt, &vs, scope, d);
                let body = self.expr(t, s, &scope.with(&x, vt, vs), d);
                let_(&x, v, body)
            }
            2 => {
                let k = helpers[self.g.rng.below(helpers.len())];
                let (name, params) = (self.sigs[k].name.clone(), self.sigs[k].params.clone());
                let args = params
                    .iter()
                    .map(|(pt, ps)| {
                        let ps = self.maybe_other(pt, ps);
                        self.expr(pt, &ps, scope, d)
                    })
                    .collect();
                Node::app(t.clone(), name, args)
            }
            3 => {
                let et = self.any_type();
                let es = self.shape_of(&et);
                let n = self.g.rng.below(4);
                let seq = self.expr(&Ty::seq(et.clone()), &Shape::seq(n, es.clone()), scope, d);
                let init = self.expr(t, s, scope, d);
                let (acc, x) = (self.g.fresh("acc"), self.g.fresh("x"));
                let inner = scope.with(&acc, t.clone(), s.clone()).with(&x, et.clone(), es);
                let body = self.expr(t, s, &inner, d);
                Node::app(t.clone(), "foldl", vec![lam(vec![(acc, t.clone()), (x, et)], body), init, seq])
            }
            4 => self.element(t, s, scope, d),
            5 => self.reduce(t, s, scope, d).unwrap_or_else(|| self.leaf(t, s, scope)),
            6 => self.higher_order(t, s, scope, d),
            8 => self.derivative(t, s, scope, d),
            9 => self.histogram(t, s, scope, d),
            _ => self.form_of(t, s, scope, d),
        }
    }

    /// An `[Int]` of shape `s` made by a histogram: a `foldl` over items
    /// that updates its accumulator at an index computed from each (in
    /// range but where failures are tested) with `addi` or `muli`, which
    /// give the same in every order (float histograms may round
    /// differently, and are left out).
    fn histogram(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        let n = s.len() as i64;
        let op = *self.g.rng.pick(&["addi", "muli"]);
        let init = self.expr(t, s, scope, d);
        let m = self.g.rng.below(5);
        let items = self.expr(&Ty::seq(Ty::Int), &Shape::seq(m, Shape::Scalar), scope, d);
        let (h, x, i) = (self.g.fresh("h"), self.g.fresh("x"), self.g.fresh("i"));
        let item = Node::var(Ty::Int, x.clone());
        let bound = if self.g.rng.chance(self.g.fail_weight(), 40) { n + 1 } else { n };
        // ((x mod n) + n) mod n: in range for any x.
        let wrapped = Node::app(Ty::Int, "modi", vec![item, Node::lit(Ty::Int, bound.to_string())]);
        let shifted = Node::app(Ty::Int, "addi", vec![wrapped, Node::lit(Ty::Int, bound.to_string())]);
        let index = Node::app(Ty::Int, "modi", vec![shifted, Node::lit(Ty::Int, bound.to_string())]);
        let value = self.expr(&Ty::Int, &Shape::Scalar, &scope.with(&x, Ty::Int, Shape::Scalar), d);
        let at = || Node::var(Ty::Int, i.clone());
        let old = Node::app(Ty::Int, "get", vec![Node::var(t.clone(), h.clone()), at()]);
        let update = Node::app(
            t.clone(),
            "set",
            vec![Node::var(t.clone(), h.clone()), at(), Node::app(Ty::Int, op, vec![old, value])],
        );
        let step = lam(vec![(h, t.clone()), (x, Ty::Int)], let_(&i, index, update));
        Node::app(t.clone(), "foldl", vec![step, init, items])
    }

    /// A value of differentiable type `t` made by a derivative: `grad` of
    /// a Float-valued function of a `t`, `vjp` of a function to a Float,
    /// or `jvp` of a function from a Float.
    fn derivative(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        self.differentiating = true;
        let w = self.g.fresh("w");
        let node = match self.g.rng.below(3) {
            0 => {
                let body = self.expr(&Ty::Float, &Shape::Scalar, &scope.with(&w, t.clone(), s.clone()), d);
                let at = self.expr(t, s, scope, d);
                Node::app(t.clone(), "grad", vec![lam(vec![(w.clone(), t.clone())], body), at])
            }
            1 => {
                let body = self.expr(&Ty::Float, &Shape::Scalar, &scope.with(&w, t.clone(), s.clone()), d);
                let at = self.expr(t, s, scope, d);
                let dy = self.expr(&Ty::Float, &Shape::Scalar, scope, d);
                Node::app(t.clone(), "vjp", vec![lam(vec![(w.clone(), t.clone())], body), at, dy])
            }
            _ => {
                let body = self.expr(t, s, &scope.with(&w, Ty::Float, Shape::Scalar), d);
                let at = self.expr(&Ty::Float, &Shape::Scalar, scope, d);
                let dx = self.expr(&Ty::Float, &Shape::Scalar, scope, d);
                Node::app(t.clone(), "jvp", vec![lam(vec![(w.clone(), Ty::Float)], body), at, dx])
            }
        };
        self.differentiating = false;
        node
    }

    /// A variable of this type and shape, else a literal.
    fn leaf(&mut self, t: &Ty, s: &Shape, scope: &Scope) -> Node {
        let vars: Vec<&str> =
            scope.vars.iter().filter(|(_, vt, vs)| vt == t && vs == s).map(|(n, _, _)| n.as_str()).collect();
        if !vars.is_empty() && self.g.rng.chance(2, 3) {
            let v = vars[self.g.rng.below(vars.len())].to_string();
            return Node::var(t.clone(), v);
        }
        let irregular = self.g.rng.chance(self.g.fail_weight(), 60);
        self.literal(t, s, irregular)
    }

    /// An index below `n` (anything, now and then, where failures are
    /// tested).
    fn index(&mut self, n: usize, scope: &Scope, d: usize) -> Node {
        if n == 0 || self.g.rng.chance(self.g.fail_weight(), 30) {
            return self.expr(&Ty::Int, &Shape::Scalar, scope, d.min(1));
        }
        Node::lit(Ty::Int, self.g.rng.below(n).to_string())
    }

    /// An element of a sequence made for it (`head` or `get`).
    fn element(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        let n = 1 + self.g.rng.below(3);
        let seq_shape = self.maybe_other(&Ty::seq(t.clone()), &Shape::seq(n, s.clone()));
        let seq = self.expr(&Ty::seq(t.clone()), &seq_shape, scope, d);
        if self.g.rng.chance(1, 3) {
            Node::app(t.clone(), "head", vec![seq])
        } else {
            let i = self.index(n, scope, d);
            Node::app(t.clone(), "get", vec![seq, i])
        }
    }

    /// `reduce` with an associative operator and its neutral element.
    fn reduce(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Option<Node> {
        let binary = Ty::Fun(vec![t.clone(), t.clone()], Box::new(t.clone()));
        let n = self.g.rng.below(4);
        let (op, ne, elems) = match t {
            Ty::Int => match self.g.rng.below(3) {
                0 => (Node::var(binary, "addi"), Node::lit(Ty::Int, "0"), Shape::Scalar),
                1 => (Node::var(binary, "muli"), Node::lit(Ty::Int, "1"), Shape::Scalar),
                _ => {
                    let (a, b) = (self.g.fresh("a"), self.g.fresh("b"));
                    let (va, vb) = (Node::var(Ty::Int, a.clone()), Node::var(Ty::Int, b.clone()));
                    let body = if_(Node::app(Ty::Bool, "gti", vec![va.clone(), vb.clone()]), va, vb);
                    let ne = Node::lit(Ty::Int, "(subi -9223372036854775807 1)");
                    (lam(vec![(a, Ty::Int), (b, Ty::Int)], body), ne, Shape::Scalar)
                }
            },
            Ty::Float => (Node::var(binary, "addf"), Node::lit(Ty::Float, "0.0"), Shape::Scalar),
            Ty::Bool => {
                let (a, b) = (self.g.fresh("a"), self.g.fresh("b"));
                let body =
                    if_(Node::var(Ty::Bool, a.clone()), Node::var(Ty::Bool, b.clone()), Node::lit(Ty::Bool, "false"));
                (lam(vec![(a, Ty::Bool), (b, Ty::Bool)], body), Node::lit(Ty::Bool, "true"), Shape::Scalar)
            }
            // A sum of vectors of one length: a parallel reduce.
            Ty::Seq(e) if **e == Ty::Int && self.g.rng.chance(1, 2) => {
                let (a, b) = (self.g.fresh("a"), self.g.fresh("b"));
                let add = Ty::Fun(vec![Ty::Int, Ty::Int], Box::new(Ty::Int));
                let body = Node::app(
                    t.clone(),
                    "map2",
                    vec![Node::var(add, "addi"), Node::var(t.clone(), a.clone()), Node::var(t.clone(), b.clone())],
                );
                let zeros = Node::new(t.clone(), Kind::Seq((0..s.len()).map(|_| Node::lit(Ty::Int, "0")).collect()));
                (lam(vec![(a, t.clone()), (b, t.clone())], body), zeros, s.clone())
            }
            // Concatenation: the elements' lengths add up to the result's.
            Ty::Seq(_) => {
                let parts = split(s.len(), self.g.rng);
                let first = Shape::seq(parts, s.elem());
                let k = s.len().checked_div(parts).unwrap_or(n);
                let seq_shape = Shape::seq(k, first);
                let seq = self.expr(&Ty::seq(t.clone()), &seq_shape, scope, d);
                let empty = Node::new(t.clone(), Kind::Seq(Vec::new()));
                return Some(Node::app(t.clone(), "reduce", vec![Node::var(binary, "concat"), empty, seq]));
            }
            _ => return None,
        };
        let seq_shape = self.maybe_other(&Ty::seq(t.clone()), &Shape::seq(n, elems));
        let seq = self.expr(&Ty::seq(t.clone()), &seq_shape, scope, d);
        Some(Node::app(t.clone(), "reduce", vec![op, ne, seq]))
    }

    /// A local higher-order function, unannotated, partially applied to a
    /// lambda and mapped (the lowering must find the instance), and an
    /// element of the result.
    fn higher_order(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        let pt = self.any_type();
        let ps = self.shape_of(&pt);
        let (hof, g, y, x) = (self.g.fresh("hof"), self.g.fresh("g"), self.g.fresh("y"), self.g.fresh("x"));
        let fun_ty = Ty::Fun(vec![pt.clone()], Box::new(t.clone()));
        let apply = Node::app(t.clone(), g.clone(), vec![Node::var(pt.clone(), y.clone())]);
        let hof_value = Node::new(
            Ty::Fun(vec![fun_ty.clone(), pt.clone()], Box::new(t.clone())),
            Kind::Lam(vec![(g, None), (y, None)], Box::new(apply)),
        );
        let body = self.expr(t, s, &scope.with(&x, pt.clone(), ps.clone()), d);
        let f = lam(vec![(x, pt.clone())], body);
        let n = 1 + self.g.rng.below(3);
        let src = self.expr(&Ty::seq(pt.clone()), &Shape::seq(n, ps), scope, d);
        let mapped = Node::app(Ty::seq(t.clone()), "map", vec![Node::app(fun_ty, hof.clone(), vec![f]), src]);
        let pick = self.index(n, scope, d);
        let_(&hof, hof_value, Node::app(t.clone(), "get", vec![mapped, pick]))
    }

    /// The forms particular to `t`.
    fn form_of(&mut self, t: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        let sc = Shape::Scalar;
        match t {
            Ty::Int => match self.g.rng.weighted(&[10, 3, 2, 4, 3, 1]) {
                0 => {
                    let op = *self.g.rng.pick(&["addi", "subi", "muli"]);
                    Node::app(Ty::Int, op, vec![self.expr(t, &sc, scope, d), self.expr(t, &sc, scope, d)])
                }
                1 => {
                    let op = *self.g.rng.pick(&["divi", "modi"]);
                    let b = self.expr(t, &sc, scope, d);
                    let b = self.g.divisor(b);
                    Node::app(Ty::Int, op, vec![self.expr(t, &sc, scope, d), b])
                }
                2 => Node::app(Ty::Int, "negi", vec![self.expr(t, &sc, scope, d)]),
                3 => {
                    let et = self.any_type();
                    let ss = self.shape_of(&Ty::seq(et.clone()));
                    Node::app(Ty::Int, "length", vec![self.expr(&Ty::seq(et), &ss, scope, d)])
                }
                4 => {
                    let op = *self.g.rng.pick(&["floorfi", "ceilfi", "roundfi"]);
                    Node::app(Ty::Int, op, vec![self.expr(&Ty::Float, &sc, scope, d)])
                }
                _ => {
                    let pair = Ty::Tuple(vec![Ty::Int, Ty::Float]);
                    let r = self.expr(&pair, &Shape::Fields(vec![Shape::Scalar, Shape::Scalar]), scope, d);
                    proj(r, "0", Ty::Int)
                }
            },
            Ty::Float => match self.g.rng.weighted(&[10, 2, 3, 2]) {
                0 => {
                    let op = *self.g.rng.pick(&["addf", "subf", "mulf", "divf"]);
                    Node::app(Ty::Float, op, vec![self.expr(t, &sc, scope, d), self.expr(t, &sc, scope, d)])
                }
                1 => Node::app(Ty::Float, "negf", vec![self.expr(t, &sc, scope, d)]),
                2 => Node::app(Ty::Float, "int2float", vec![self.expr(&Ty::Int, &sc, scope, d)]),
                _ => {
                    let pair = Ty::Tuple(vec![Ty::Int, Ty::Float]);
                    let r = self.expr(&pair, &Shape::Fields(vec![Shape::Scalar, Shape::Scalar]), scope, d);
                    proj(r, "1", Ty::Float)
                }
            },
            Ty::Bool => match self.g.rng.weighted(&[6, 4, 2]) {
                0 => {
                    let op = *self.g.rng.pick(&["eqi", "neqi", "lti", "gti", "leqi", "geqi"]);
                    Node::app(
                        Ty::Bool,
                        op,
                        vec![self.expr(&Ty::Int, &sc, scope, d), self.expr(&Ty::Int, &sc, scope, d)],
                    )
                }
                1 => {
                    let op = *self.g.rng.pick(&["eqf", "neqf", "ltf", "gtf", "leqf", "geqf"]);
                    let (a, b) = (self.expr(&Ty::Float, &sc, scope, d), self.expr(&Ty::Float, &sc, scope, d));
                    Node::app(Ty::Bool, op, vec![a, b])
                }
                _ => {
                    let et = self.any_type();
                    let ss = self.shape_of(&Ty::seq(et.clone()));
                    Node::app(Ty::Bool, "null", vec![self.expr(&Ty::seq(et), &ss, scope, d)])
                }
            },
            Ty::Seq(e) => self.seq_form(t, e, s, scope, d),
            Ty::Tuple(ts) => Node::new(
                t.clone(),
                Kind::Tuple(ts.iter().enumerate().map(|(k, x)| self.expr(x, &s.field(k), scope, d)).collect()),
            ),
            Ty::Record(fs) => {
                let fields =
                    fs.iter().enumerate().map(|(k, (l, x))| (l.clone(), self.expr(x, &s.field(k), scope, d))).collect();
                Node::new(t.clone(), Kind::Record(fields))
            }
            _ => self.leaf(t, s, scope),
        }
    }

    /// The forms that make a sequence of `n = s.len()` elements.
    fn seq_form(&mut self, t: &Ty, e: &Ty, s: &Shape, scope: &Scope, d: usize) -> Node {
        let n = s.len();
        let es = s.elem();
        let weights = [
            12,                        // map
            5,                         // map2
            6,                         // create
            4,                         // concat
            if n > 0 { 3 } else { 0 }, // cons / snoc
            3,                         // reverse
            2,                         // tail
            3,                         // subsequence
            if n > 0 { 3 } else { 0 }, // set
            4,                         // flatten
            3,                         // a literal of expressions
            2,                         // an element of a nested sequence
        ];
        match self.g.rng.weighted(&weights) {
            0 => {
                let ut = self.any_type();
                let us = self.shape_of(&ut);
                let src_shape = self.maybe_other(&Ty::seq(ut.clone()), &Shape::seq(n, us.clone()));
                let src = self.expr(&Ty::seq(ut.clone()), &src_shape, scope, d);
                let x = self.g.fresh("x");
                let body = self.expr(e, &es, &scope.with(&x, ut.clone(), us), d);
                Node::app(t.clone(), "map", vec![lam(vec![(x, ut)], body), src])
            }
            1 => {
                let (ut, vt) = (self.any_type(), self.any_type());
                let (us, vs) = (self.shape_of(&ut), self.shape_of(&vt));
                let a = self.expr(&Ty::seq(ut.clone()), &Shape::seq(n, us.clone()), scope, d);
                let b_shape = self.maybe_other(&Ty::seq(vt.clone()), &Shape::seq(n, vs.clone()));
                let b = self.expr(&Ty::seq(vt.clone()), &b_shape, scope, d);
                let (x, y) = (self.g.fresh("x"), self.g.fresh("y"));
                let body = self.expr(e, &es, &scope.with(&x, ut.clone(), us).with(&y, vt.clone(), vs), d);
                Node::app(t.clone(), "map2", vec![lam(vec![(x, ut), (y, vt)], body), a, b])
            }
            2 => {
                let len = if self.g.rng.chance(self.g.fail_weight(), 30) {
                    self.expr(&Ty::Int, &Shape::Scalar, scope, d.min(1))
                } else {
                    Node::lit(Ty::Int, n.to_string())
                };
                let i = self.g.fresh("i");
                let body = self.expr(e, &es, &scope.with(&i, Ty::Int, Shape::Scalar), d);
                Node::app(t.clone(), "create", vec![len, lam(vec![(i, Ty::Int)], body)])
            }
            3 => {
                let k = self.g.rng.below(n + 1);
                let a = self.expr(t, &Shape::seq(k, es.clone()), scope, d);
                let b_shape = self.maybe_other(t, &Shape::seq(n - k, es));
                let b = self.expr(t, &b_shape, scope, d);
                Node::app(t.clone(), "concat", vec![a, b])
            }
            4 => {
                let x_shape = self.maybe_other(e, &es);
                let x = self.expr(e, &x_shape, scope, d);
                let rest = self.expr(t, &Shape::seq(n - 1, es), scope, d);
                if self.g.rng.chance(1, 2) {
                    Node::app(t.clone(), "cons", vec![x, rest])
                } else {
                    Node::app(t.clone(), "snoc", vec![rest, x])
                }
            }
            5 => Node::app(t.clone(), "reverse", vec![self.expr(t, s, scope, d)]),
            6 => {
                let longer = if self.g.rng.chance(self.g.fail_weight(), 30) { 0 } else { n + 1 };
                Node::app(t.clone(), "tail", vec![self.expr(t, &Shape::seq(longer, es), scope, d)])
            }
            7 => {
                let (from, extra) = (self.g.rng.below(3), self.g.rng.below(2));
                let src = self.expr(t, &Shape::seq(from + n + extra, es), scope, d);
                let from = Node::lit(Ty::Int, from.to_string());
                Node::app(t.clone(), "subsequence", vec![src, from, Node::lit(Ty::Int, n.to_string())])
            }
            8 => {
                let src = self.expr(t, s, scope, d);
                let i = self.index(n, scope, d);
                let x_shape = self.maybe_other(e, &es);
                let x = self.expr(e, &x_shape, scope, d);
                Node::app(t.clone(), "set", vec![src, i, x])
            }
            9 => {
                // Rows of lengths that add up to `n`: one length each,
                // except in a literal given straight to flatten, which
                // may be irregular.
                if self.g.rng.chance(1, 3) {
                    let mut left = n;
                    let mut rows = Vec::new();
                    while left > 0 || (rows.is_empty() && self.g.rng.chance(1, 2)) {
                        let k = self.g.rng.below(left + 1);
                        rows.push(self.expr(t, &Shape::seq(k, es.clone()), scope, d));
                        left -= k;
                        if rows.len() > 4 {
                            let last = self.expr(t, &Shape::seq(left, es.clone()), scope, d);
                            rows.push(last);
                            break;
                        }
                    }
                    let lit = Node::new(Ty::seq(t.clone()), Kind::Seq(rows));
                    return Node::app(t.clone(), "flatten", vec![lit]);
                }
                let parts = split(n, self.g.rng);
                let k = match n.checked_div(parts) {
                    Some(k) => k,
                    None => self.g.rng.below(3),
                };
                let rows = self.expr(&Ty::seq(t.clone()), &Shape::seq(k, Shape::seq(parts, es)), scope, d);
                Node::app(t.clone(), "flatten", vec![rows])
            }
            10 => {
                let items = (0..n)
                    .map(|_| {
                        let item_shape = self.maybe_other(e, &es);
                        self.expr(e, &item_shape, scope, d)
                    })
                    .collect();
                Node::new(t.clone(), Kind::Seq(items))
            }
            _ => self.element(t, s, scope, d),
        }
    }
}

/// A divisor of `n` (the length of each of `n / k` parts), or 0 for 0.
fn split(n: usize, rng: &mut Rng) -> usize {
    let divisors: Vec<usize> = (1..=n).filter(|&k| n.is_multiple_of(k)).collect();
    if divisors.is_empty() {
        0
    } else {
        divisors[rng.below(divisors.len())]
    }
}

/// Whether an expression uses a parallel keyword.
fn parallel(body: &Node) -> bool {
    ["map", "map2", "reduce", "flatten"].iter().any(|k| body.applies(k))
}
