//! CUDA-class programs: parallel `loop`s over tensors whose iterations
//! write only their own cells (row `i`, directly or through a slice), so
//! that every engine must give one answer; reads of inputs and of tensors
//! written by earlier loops, through sub-tensors and slices that alias;
//! nested `seqLoop`/`seqLoopAcc`, records, sequences, helper and recursive
//! functions, and arithmetic with edge values.

use crate::gen::{if_, lam, let_, proj, semi, Gen, Scope};
use crate::program::{Block, Class, Helper, Input, Program};
use crate::rng::Rng;
use crate::tree::{Kind, Node, Ty};

/// A tensor the code may read: its variable, element type and shape.
#[derive(Clone)]
struct Tensor {
    name: String,
    elem: Ty,
    shape: Vec<usize>,
}

impl Tensor {
    fn ty(&self) -> Ty {
        Ty::Tensor(Box::new(self.elem.clone()))
    }

    fn var(&self) -> Node {
        Node::var(self.ty(), self.name.clone())
    }
}

pub fn program(seed: u64) -> Program {
    let mut rng = Rng::new(seed);
    let mut g = Gen::new(&mut rng);
    let mut c = Cuda { g: &mut g, readable: Vec::new() };
    for _ in 0..c.g.rng.below(3) {
        c.helper();
    }
    let mut inputs = Vec::new();
    let mut scope = Scope::default();
    for _ in 0..1 + c.g.rng.below(3) {
        let (input, t) = c.tensor("in", true, None);
        scope = scope.with(&input.name, input.value.ty.clone());
        c.readable.push(t);
        inputs.push(input);
    }
    for _ in 0..c.g.rng.below(3) {
        let t = c.g.rng.pick(&[Ty::Int, Ty::Float, Ty::seq(Ty::Int), Ty::seq(Ty::Float)]).clone();
        let name = c.g.fresh("in");
        let value = match &t {
            Ty::Seq(e) => {
                let n = 1 + c.g.rng.below(4);
                Node::new(t.clone(), Kind::Seq((0..n).map(|_| c.g.scalar_lit(e)).collect()))
            }
            _ => c.g.scalar_lit(&t),
        };
        scope = scope.with(&name, t);
        inputs.push(Input { name, value });
    }
    let blocks = (0..1 + c.g.rng.below(3)).map(|_| c.block(&scope)).collect();
    Program { class: Class::Cuda, seed, helpers: std::mem::take(&mut g.helpers), inputs, blocks }
}

struct Cuda<'g, 'r> {
    g: &'g mut Gen<'r>,
    /// Tensors no running loop writes.
    readable: Vec<Tensor>,
}

impl Cuda<'_, '_> {
    fn scalar(&mut self) -> Ty {
        if self.g.rng.chance(3, 5) {
            Ty::Int
        } else {
            Ty::Float
        }
    }

    /// A tensor of rank 1 or 2 made by host code (`rows`: its first
    /// dimension): inputs get distinct values from their indices, so that
    /// a wrong index shows; outputs are zeros.
    fn tensor(&mut self, base: &str, filled: bool, rows: Option<usize>) -> (Input, Tensor) {
        let elem = self.scalar();
        let rank = 1 + self.g.rng.below(2);
        let mut shape: Vec<usize> = (0..rank).map(|_| 1 + self.g.rng.below(5)).collect();
        if let Some(n) = rows {
            shape[0] = n;
        }
        let name = self.g.fresh(base);
        let idx = self.g.fresh("ix");
        let index = |k: usize| {
            Node::app(Ty::Int, "get", vec![Node::var(Ty::seq(Ty::Int), idx.clone()), Node::lit(Ty::Int, k.to_string())])
        };
        let value = if filled {
            let k = self.g.rng.below(7) as i64 - 3;
            let v = Node::app(
                Ty::Int,
                "addi",
                vec![
                    Node::app(Ty::Int, "muli", vec![index(0), Node::lit(Ty::Int, "10")]),
                    Node::app(Ty::Int, "muli", vec![index(rank - 1), Node::lit(Ty::Int, k.to_string())]),
                ],
            );
            match elem {
                Ty::Float => Node::app(
                    Ty::Float,
                    "mulf",
                    vec![Node::app(Ty::Float, "int2float", vec![v]), Node::lit(Ty::Float, "0.5")],
                ),
                _ => v,
            }
        } else {
            Node::lit(elem.clone(), if elem == Ty::Int { "0" } else { "0.0" })
        };
        let make = if elem == Ty::Int { "tensorCreateCArrayInt" } else { "tensorCreateCArrayFloat" };
        let dims =
            Node::new(Ty::seq(Ty::Int), Kind::Seq(shape.iter().map(|n| Node::lit(Ty::Int, n.to_string())).collect()));
        let t = Tensor { name: name.clone(), elem, shape };
        let input =
            Input { name, value: Node::app(t.ty(), make, vec![dims, lam(vec![(idx, Ty::seq(Ty::Int))], value)]) };
        (input, t)
    }

    /// A helper: a function of scalars, or a recursive one counting down
    /// its first parameter (bounded, so it ends).
    fn helper(&mut self) {
        let name = self.g.fresh("h");
        let t = self.scalar();
        let recursive = self.g.rng.chance(1, 3);
        let mut params: Vec<(String, Ty)> =
            (0..1 + self.g.rng.below(2)).map(|_| (self.g.fresh("p"), self.scalar())).collect();
        let body = if recursive {
            let k = self.g.fresh("k");
            params.insert(0, (k.clone(), Ty::Int));
            let scope = Scope { vars: params.clone() };
            let kv = Node::var(Ty::Int, k.clone());
            let base = self.expr(&t, &scope, 2);
            let step = self.expr(&t, &scope, 2);
            let mut args = vec![Node::app(Ty::Int, "subi", vec![kv.clone(), Node::lit(Ty::Int, "1")])];
            args.extend(params[1..].iter().map(|(p, pt)| Node::var(pt.clone(), p.clone())));
            // The recursive call's result is combined with `step`.
            let call = Node::app(t.clone(), name.clone(), args);
            let op = if t == Ty::Int { "addi" } else { "addf" };
            let combined = Node::app(t.clone(), op, vec![call, step]);
            if_(Node::app(Ty::Bool, "leqi", vec![kv, Node::lit(Ty::Int, "0")]), base, combined)
        } else {
            let scope = Scope { vars: params.clone() };
            self.expr(&t, &scope, 3)
        };
        self.g.helpers.push(Helper { name, params, body, recursive });
    }

    /// A block: loops that write fresh tensors (printed after), or a
    /// `seqLoopAcc` whose value is printed.
    fn block(&mut self, scope: &Scope) -> Block {
        if self.g.rng.chance(1, 4) {
            let t = self.scalar();
            let init = self.expr(&t, scope, 1);
            let n = self.g.small(4);
            let (acc, k) = (self.g.fresh("acc"), self.g.fresh("k"));
            let inner = scope.with(&acc, t.clone()).with(&k, Ty::Int);
            let body = self.expr(&t, &inner, 3);
            let e = Node::app(t.clone(), "seqLoopAcc", vec![init, n, lam(vec![(acc, t), (k, Ty::Int)], body)]);
            return Block { expr: e, outputs: Vec::new(), approx: false };
        }
        let n = 1 + self.g.rng.below(6);
        let mut outputs = Vec::new();
        let mut body: Option<Node> = None;
        let before = self.readable.len();
        for _ in 0..1 + self.g.rng.below(2) {
            let (out, t) = self.tensor("out", false, Some(n));
            let l = self.loop_writing(&t, scope.with(&out.name, out.value.ty.clone()));
            outputs.push(out);
            body = Some(match body {
                None => l,
                Some(b) => semi(b, l),
            });
            // Later loops of the block may read what this one wrote.
            self.readable.push(t);
        }
        self.readable.truncate(before);
        let mut e = body.expect("a loop");
        if self.g.rng.chance(1, 5) {
            // Host code repeats the loops: each iteration reads and writes
            // only its own cells, so repeating is deterministic.
            let k = self.g.fresh("rep");
            e = Node::app(Ty::Unit, "seqLoop", vec![self.g.small(2), lam(vec![(k, Ty::Int)], e)]);
        }
        // Outputs are in scope for the printing only.
        Block { expr: e, outputs, approx: false }
    }

    /// `loop n (lam i. ...)` writing row `i` of `out`.
    fn loop_writing(&mut self, out: &Tensor, scope: Scope) -> Node {
        let i = self.g.fresh("i");
        let scope = scope.with(&i, Ty::Int);
        let iv = Node::var(Ty::Int, i.clone());
        let body = self.write_row(out, &iv, &scope, 2);
        let n = out.shape[0];
        let count = if self.g.rng.chance(1, 3) {
            Node::app(
                Ty::Int,
                "get",
                vec![Node::app(Ty::seq(Ty::Int), "tensorShape", vec![out.var()]), Node::lit(Ty::Int, "0")],
            )
        } else {
            Node::lit(Ty::Int, n.to_string())
        };
        Node::app(Ty::Unit, "loop", vec![count, lam(vec![(i, Ty::Int)], body)])
    }

    /// Statements that write row `i` of `out` (every cell of it).
    fn write_row(&mut self, out: &Tensor, i: &Node, scope: &Scope, depth: usize) -> Node {
        let elem = out.elem.clone();
        if out.shape.len() == 1 {
            let v = self.expr(&elem, scope, 3);
            let idx = Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![i.clone()]));
            return Node::app(Ty::Unit, "tensorSetExn", vec![out.var(), idx, v]);
        }
        let m = out.shape[1];
        let j = self.g.fresh("j");
        let jv = Node::var(Ty::Int, j.clone());
        let inner = scope.with(&j, Ty::Int);
        let v = self.expr(&elem, &inner, 3);
        let (write, wrap): (Node, Option<(String, Node)>) = if self.g.rng.chance(1, 3) {
            // Through a slice: the row as a tensor of its own.
            let row = self.g.fresh("row");
            let slice = Node::app(
                out.ty(),
                "tensorSliceExn",
                vec![out.var(), Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![i.clone()]))],
            );
            let idx = Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![jv]));
            (Node::app(Ty::Unit, "tensorSetExn", vec![Node::var(out.ty(), row.clone()), idx, v]), Some((row, slice)))
        } else {
            let idx = Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![i.clone(), jv]));
            (Node::app(Ty::Unit, "tensorSetExn", vec![out.var(), idx, v]), None)
        };
        // A loop inside a kernel runs sequentially (both spellings).
        let keyword = if self.g.rng.chance(1, 4) && depth > 0 { "loop" } else { "seqLoop" };
        let l = Node::app(Ty::Unit, keyword, vec![Node::lit(Ty::Int, m.to_string()), lam(vec![(j, Ty::Int)], write)]);
        match wrap {
            Some((row, slice)) => let_(&row, slice, l),
            None => l,
        }
    }

    /// An expression of scalar type `t`.
    fn expr(&mut self, t: &Ty, scope: &Scope, depth: usize) -> Node {
        if depth == 0 || self.g.rng.chance(1, 5) {
            return self.leaf(t, scope);
        }
        let d = depth - 1;
        let fail = self.g.fail_weight();
        let helpers = self.g.helpers_of(t);
        let weights = [
            5,                                             // if
            5,                                             // let
            if helpers.is_empty() { 0 } else { 5 },        // helper call
            if self.readable.is_empty() { 0 } else { 10 }, // tensor read
            3,                                             // seqLoopAcc
            2,                                             // record
            2 + fail,                                      // sequence literal, indexed
            14,                                            // arithmetic
        ];
        match self.g.rng.weighted(&weights) {
            0 => {
                let c = self.bool(scope, d);
                let a = self.expr(t, scope, d);
                let b = self.expr(t, scope, d);
                if_(c, a, b)
            }
            1 => {
                let vt = self.scalar();
                let x = self.g.fresh("v");
                let v = self.expr(&vt, scope, d);
                let body = self.expr(t, &scope.with(&x, vt), d);
                let_(&x, v, body)
            }
            2 => {
                let k = helpers[self.g.rng.below(helpers.len())];
                let h = self.g.helpers[k].clone();
                let args = h
                    .params
                    .iter()
                    .enumerate()
                    .map(|(n, (_, pt))| if h.recursive && n == 0 { self.g.small(3) } else { self.expr(pt, scope, d) })
                    .collect();
                Node::app(t.clone(), h.name, args)
            }
            3 => self.read(t, scope, d),
            4 => {
                let init = self.expr(t, scope, d);
                let n = self.g.small(3);
                let (acc, k) = (self.g.fresh("acc"), self.g.fresh("k"));
                let body = self.expr(t, &scope.with(&acc, t.clone()).with(&k, Ty::Int), d);
                Node::app(t.clone(), "seqLoopAcc", vec![init, n, lam(vec![(acc, t.clone()), (k, Ty::Int)], body)])
            }
            5 => {
                let other = self.scalar();
                let r = self.g.fresh("r");
                let rt = Ty::Record(vec![("a".into(), t.clone()), ("b".into(), other.clone())]);
                let rec = Node::new(
                    rt.clone(),
                    Kind::Record(vec![("a".into(), self.expr(t, scope, d)), ("b".into(), self.expr(&other, scope, d))]),
                );
                let_(&r, rec, proj(Node::var(rt, r.clone()), "a", t.clone()))
            }
            6 => {
                let n = 1 + self.g.rng.below(3);
                let items = (0..n).map(|_| self.expr(t, scope, d)).collect();
                let s = Node::new(Ty::seq(t.clone()), Kind::Seq(items));
                let i = if self.g.rng.chance(fail, 20) {
                    self.expr(&Ty::Int, scope, 1)
                } else {
                    Node::lit(Ty::Int, self.g.rng.below(n).to_string())
                };
                Node::app(t.clone(), "get", vec![s, i])
            }
            _ => self.arith(t, scope, d),
        }
    }

    fn leaf(&mut self, t: &Ty, scope: &Scope) -> Node {
        if self.g.rng.chance(3, 4) {
            if let Some(v) = self.g.var_of(scope, t) {
                return v;
            }
            if *t == Ty::Float && self.g.rng.chance(1, 2) {
                if let Some(v) = self.g.var_of(scope, &Ty::Int) {
                    return Node::app(Ty::Float, "int2float", vec![v]);
                }
            }
        }
        self.g.scalar_lit(t)
    }

    fn bool(&mut self, scope: &Scope, d: usize) -> Node {
        let t = self.scalar();
        let ops: &[&str] =
            if t == Ty::Int { &["eqi", "lti", "gti", "leqi", "neqi"] } else { &["eqf", "ltf", "gtf", "leqf", "neqf"] };
        let op = *self.g.rng.pick(ops);
        Node::app(Ty::Bool, op, vec![self.expr(&t, scope, d), self.expr(&t, scope, d)])
    }

    fn arith(&mut self, t: &Ty, scope: &Scope, d: usize) -> Node {
        let fail = self.g.fail_weight();
        match t {
            Ty::Int => match self.g.rng.weighted(&[10, 2 + 2 * fail, 2, 3, 2]) {
                0 => {
                    let op = *self.g.rng.pick(&["addi", "subi", "muli"]);
                    Node::app(Ty::Int, op, vec![self.expr(t, scope, d), self.expr(t, scope, d)])
                }
                1 => {
                    let op = *self.g.rng.pick(&["divi", "modi"]);
                    let b = self.expr(t, scope, d);
                    let b = self.g.divisor(b);
                    Node::app(Ty::Int, op, vec![self.expr(t, scope, d), b])
                }
                2 => Node::app(Ty::Int, "negi", vec![self.expr(t, scope, d)]),
                3 => {
                    let op = *self.g.rng.pick(&["floorfi", "ceilfi", "roundfi"]);
                    Node::app(Ty::Int, op, vec![self.expr(&Ty::Float, scope, d)])
                }
                _ => self.shape_of(scope).unwrap_or_else(|| self.leaf(t, scope)),
            },
            _ => match self.g.rng.weighted(&[10, 2, 3]) {
                0 => {
                    let op = *self.g.rng.pick(&["addf", "subf", "mulf", "divf"]);
                    Node::app(Ty::Float, op, vec![self.expr(t, scope, d), self.expr(t, scope, d)])
                }
                1 => Node::app(Ty::Float, "negf", vec![self.expr(t, scope, d)]),
                _ => Node::app(Ty::Float, "int2float", vec![self.expr(&Ty::Int, scope, d)]),
            },
        }
    }

    /// A dimension of a readable tensor.
    fn shape_of(&mut self, _scope: &Scope) -> Option<Node> {
        if self.readable.is_empty() {
            return None;
        }
        let t = self.readable[self.g.rng.below(self.readable.len())].clone();
        let k = self.g.rng.below(t.shape.len());
        Some(Node::app(
            Ty::Int,
            "get",
            vec![Node::app(Ty::seq(Ty::Int), "tensorShape", vec![t.var()]), Node::lit(Ty::Int, k.to_string())],
        ))
    }

    /// A read of a tensor of element type `t` (converted when the tensor
    /// holds the other scalar), directly or through a view.
    fn read(&mut self, t: &Ty, scope: &Scope, d: usize) -> Node {
        let tensor = self.readable[self.g.rng.below(self.readable.len())].clone();
        let (view, shape) = self.view(&tensor);
        let idx: Vec<Node> = shape.iter().map(|&n| self.index(n, scope, d)).collect();
        let read =
            Node::app(tensor.elem.clone(), "tensorGetExn", vec![view, Node::new(Ty::seq(Ty::Int), Kind::Seq(idx))]);
        match (&tensor.elem, t) {
            (Ty::Int, Ty::Float) => Node::app(Ty::Float, "int2float", vec![read]),
            (Ty::Float, Ty::Int) => Node::app(Ty::Int, "floorfi", vec![read]),
            _ => read,
        }
    }

    /// The tensor itself, a sub-tensor of its rows or a slice of a row;
    /// with the view's shape.
    fn view(&mut self, t: &Tensor) -> (Node, Vec<usize>) {
        let fail = self.g.fail_weight();
        match self.g.rng.below(4) {
            1 => {
                let n = t.shape[0];
                let off = self.g.rng.below(n);
                let mut len = 1 + self.g.rng.below(n - off);
                if self.g.rng.chance(fail, 40) {
                    len += 1;
                }
                let mut shape = t.shape.clone();
                shape[0] = len;
                let sub = Node::app(
                    t.ty(),
                    "tensorSubExn",
                    vec![t.var(), Node::lit(Ty::Int, off.to_string()), Node::lit(Ty::Int, len.to_string())],
                );
                (sub, shape)
            }
            2 if t.shape.len() == 2 => {
                let r = self.g.rng.below(t.shape[0]);
                let idx = Node::new(Ty::seq(Ty::Int), Kind::Seq(vec![Node::lit(Ty::Int, r.to_string())]));
                (Node::app(t.ty(), "tensorSliceExn", vec![t.var(), idx]), t.shape[1..].to_vec())
            }
            _ => (t.var(), t.shape.clone()),
        }
    }

    /// An index into a dimension of `n`: in range unless the program
    /// tests failures (then sometimes computed freely).
    fn index(&mut self, n: usize, scope: &Scope, d: usize) -> Node {
        let fail = self.g.fail_weight();
        match self.g.rng.weighted(&[4, 4, fail]) {
            0 => Node::lit(Ty::Int, self.g.rng.below(n).to_string()),
            1 => {
                // A variable of the scope, reduced into the dimension.
                let e = self.expr(&Ty::Int, scope, d.min(1));
                let m = Node::app(Ty::Int, "modi", vec![e, Node::lit(Ty::Int, n.to_string())]);
                let neg = Node::app(Ty::Bool, "lti", vec![m.clone(), Node::lit(Ty::Int, "0")]);
                if_(neg, Node::app(Ty::Int, "negi", vec![m.clone()]), m)
            }
            _ => self.expr(&Ty::Int, scope, d.min(1)),
        }
    }
}
