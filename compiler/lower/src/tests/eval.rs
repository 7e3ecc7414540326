//! A small evaluator of the IR, for the tests only: running a lowered
//! entry on given inputs checks that the lowering (of patterns above all)
//! computes what the MExpr program computes. It covers the built-ins the
//! tests use and panics on others.

use crate::ir::*;
use pmx_ast::{Builtin, SmolStr};
use rustc_hash::FxHashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Int(i64),
    Float(f64),
    Bool(bool),
    Char(char),
    Unit,
    Seq(Vec<V>),
    Rec(Vec<(SmolStr, V)>),
    Con(usize, Box<V>),
    /// A function value: a callee applied to fewer arguments than it
    /// takes.
    Fun(Callee, Vec<V>),
}

pub fn ints(xs: &[i64]) -> V {
    V::Seq(xs.iter().map(|x| V::Int(*x)).collect())
}

pub fn run(p: &Program, entry: &str, args: Vec<V>) -> V {
    let e = p.entries.iter().find(|e| e.name == entry).expect("the entry");
    let mut env = FxHashMap::default();
    for (v, a) in e.params.iter().zip(args) {
        env.insert(v.id, a);
    }
    block(p, &mut env, &e.body)
}

fn call(p: &Program, f: FnId, args: Vec<V>) -> V {
    let f = p.function(f).expect("a function");
    let mut env = FxHashMap::default();
    for (v, a) in f.params.iter().zip(args) {
        env.insert(v.id, a);
    }
    block(p, &mut env, &f.body)
}

fn apply(p: &Program, env: &FxHashMap<VarId, V>, r: &FunRef, extra: Vec<V>) -> V {
    let args: Vec<V> = r.bound.iter().map(|a| atom(env, a)).chain(extra).collect();
    match r.callee {
        Callee::Function(f) => call(p, f, args),
        Callee::Builtin(b) => prim(b, args),
        Callee::Math(m) => math(m, args),
        Callee::Value => {
            let mut args = args.into_iter();
            let f = args.next().expect("the function value");
            apply_value(p, f, args.collect())
        }
    }
}

/// A function value applied to `args`: its result, or a function value
/// again when they are fewer than it takes.
fn apply_value(p: &Program, f: V, args: Vec<V>) -> V {
    let V::Fun(callee, mut all) = f else { panic!("not a function: {f:?}") };
    all.extend(args);
    let arity = match callee {
        Callee::Function(g) => p.functions[g.0 as usize].params.len(),
        Callee::Builtin(b) => crate::signature::arity(b),
        Callee::Math(m) => m.arity(),
        Callee::Value => panic!("a closure of a function value"),
    };
    if all.len() < arity {
        return V::Fun(callee, all);
    }
    let rest = all.split_off(arity);
    let r = FunRef { callee, bound: Vec::new(), params: Vec::new(), result: Type::Unit };
    let v = apply(p, &FxHashMap::default(), &r, all);
    if rest.is_empty() {
        v
    } else {
        apply_value(p, v, rest)
    }
}

fn atom(env: &FxHashMap<VarId, V>, a: &Atom) -> V {
    match a {
        Atom::Var(v) => env.get(&v.id).cloned().unwrap_or_else(|| panic!("`{}` has no value", v.name)),
        Atom::Lit(Lit::Int(i)) => V::Int(*i),
        Atom::Lit(Lit::Float(f)) => V::Float(*f),
        Atom::Lit(Lit::Bool(b)) => V::Bool(*b),
        Atom::Lit(Lit::Char(c)) => V::Char(*c),
        Atom::Lit(Lit::Unit) => V::Unit,
    }
}

fn seq(v: V) -> Vec<V> {
    match v {
        V::Seq(s) => s,
        v => panic!("not a sequence: {v:?}"),
    }
}

fn math(m: Math, args: Vec<V>) -> V {
    let x: Vec<f64> = args
        .iter()
        .map(|v| match v {
            V::Float(f) => *f,
            v => panic!("not a Float: {v:?}"),
        })
        .collect();
    V::Float(match m {
        Math::Exp => x[0].exp(),
        Math::Log => x[0].ln(),
        Math::Sin => x[0].sin(),
        Math::Cos => x[0].cos(),
        Math::Tan => x[0].tan(),
        Math::Atan => x[0].atan(),
        Math::Atan2 => x[0].atan2(x[1]),
        Math::Pow => x[0].powf(x[1]),
        Math::Sqrt => x[0].sqrt(),
    })
}

fn int(v: &V) -> i64 {
    match v {
        V::Int(i) => *i,
        v => panic!("not an Int: {v:?}"),
    }
}

fn block(p: &Program, env: &mut FxHashMap<VarId, V>, b: &Block) -> V {
    for s in &b.stmts {
        let a = |x: &Atom| atom(env, x);
        let v = match &s.expr {
            Expr::Atom(x) => a(x),
            Expr::Prim(op, args) => prim(*op, args.iter().map(a).collect()),
            Expr::Math(m, args) => math(*m, args.iter().map(a).collect()),
            Expr::Call(f, args) => call(p, *f, args.iter().map(a).collect()),
            Expr::Record(fields) => V::Rec(fields.iter().map(|(l, x)| (l.clone(), a(x))).collect()),
            Expr::Project(r, l) => match a(r) {
                V::Rec(fields) => fields.into_iter().find(|(m, _)| m == l).expect("the field").1,
                v => panic!("not a record: {v:?}"),
            },
            Expr::Seq(items) => V::Seq(items.iter().map(a).collect()),
            Expr::Con { tag, payload, .. } => V::Con(*tag, Box::new(a(payload))),
            Expr::IsCon { value, tag, .. } => V::Bool(matches!(a(value), V::Con(t, _) if t == *tag)),
            Expr::Payload { value, tag, .. } => match a(value) {
                V::Con(t, x) if t == *tag => *x,
                v => panic!("not built by constructor {tag}: {v:?}"),
            },
            Expr::If { cond, then, otherwise } => {
                let branch = if a(cond) == V::Bool(true) { then } else { otherwise };
                block(p, env, branch)
            }
            Expr::Map { f, seqs } => {
                let columns: Vec<Vec<V>> = seqs.iter().map(|x| seq(a(x))).collect();
                let n = columns.iter().map(Vec::len).min().unwrap_or(0);
                V::Seq((0..n).map(|i| apply(p, env, f, columns.iter().map(|c| c[i].clone()).collect())).collect())
            }
            Expr::Reduce { f, neutral: init, seq: s } | Expr::Foldl { f, init, seq: s } => {
                seq(a(s)).into_iter().fold(a(init), |acc, x| apply(p, env, f, vec![acc, x]))
            }
            Expr::Create { len, f } => V::Seq((0..int(&a(len))).map(|i| apply(p, env, f, vec![V::Int(i)])).collect()),
            Expr::Flatten(x) => V::Seq(seq(a(x)).into_iter().flat_map(seq).collect()),
            Expr::Loop { n, f, .. } => {
                (0..int(&a(n))).for_each(|i| {
                    apply(p, env, f, vec![V::Int(i)]);
                });
                V::Unit
            }
            Expr::SeqLoopAcc { init, n, f } => {
                (0..int(&a(n))).fold(a(init), |acc, i| apply(p, env, f, vec![acc, V::Int(i)]))
            }
            Expr::SizeEq { seq: s, dim, size } => {
                let mut x = a(s);
                for _ in 0..*dim {
                    x = seq(x).into_iter().next().expect("not empty");
                }
                assert_eq!(seq(x).len() as i64, int(&a(size)), "size constraint");
                V::Unit
            }
            Expr::SizeCoerce { seq: s, .. } => a(s),
            Expr::Utest { test, expected, .. } => {
                assert_eq!(a(test), a(expected), "utest");
                V::Unit
            }
            Expr::Never => panic!("never reached"),
            Expr::Apply(f, args) => apply_value(p, a(f), args.iter().map(a).collect()),
            Expr::Closure(callee, args) => V::Fun(*callee, args.iter().map(a).collect()),
            Expr::Accelerate { .. } => panic!("an accelerate call is the runtime's"),
            // No lowering test differentiates: derivatives are the
            // interpreter's and Futhark's.
            Expr::Derivative { .. } => panic!("a derivative is the engines'"),
        };
        env.insert(s.var.id, v);
    }
    atom(env, &b.result)
}

fn prim(b: Builtin, args: Vec<V>) -> V {
    use Builtin::*;
    let i = |k: usize| int(&args[k]);
    match b {
        Addi => V::Int(i(0) + i(1)),
        Subi => V::Int(i(0) - i(1)),
        Muli => V::Int(i(0) * i(1)),
        Modi => V::Int(i(0) % i(1)),
        Negi => V::Int(-i(0)),
        Eqi => V::Bool(i(0) == i(1)),
        Lti => V::Bool(i(0) < i(1)),
        Gti => V::Bool(i(0) > i(1)),
        Geqi => V::Bool(i(0) >= i(1)),
        Eqc => V::Bool(args[0] == args[1]),
        Mulf => match (&args[0], &args[1]) {
            (V::Float(x), V::Float(y)) => V::Float(x * y),
            v => panic!("mulf of {v:?}"),
        },
        Length => V::Int(seq(args[0].clone()).len() as i64),
        Get => seq(args[0].clone())[i(1) as usize].clone(),
        Head => seq(args[0].clone())[0].clone(),
        Set => {
            let mut s = seq(args[0].clone());
            s[i(1) as usize] = args[2].clone();
            V::Seq(s)
        }
        Concat => V::Seq(seq(args[0].clone()).into_iter().chain(seq(args[1].clone())).collect()),
        Subsequence => {
            let s = seq(args[0].clone());
            let from = (i(1) as usize).min(s.len());
            let to = (from + i(2) as usize).min(s.len());
            V::Seq(s[from..to].to_vec())
        }
        _ => panic!("the test evaluator has no `{}`", b.name()),
    }
}
