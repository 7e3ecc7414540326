//! Unit tests: small programs checked and analysed by the driver, then
//! lowered; the pattern lowering, size constraints, function values, and
//! the validator fed broken programs.

use crate::*;
use pmx_accelerate::Backend;
use pmx_ast::Span;
use std::path::Path;

/// Lowers `source` (one file) for `backend`; the front end must accept it.
fn lower_source(source: &str, backend: Backend) -> (Program, Vec<Diagnostic>) {
    let source = source.to_string();
    pmx_driver::with_stack(move || {
        let mut db = pmx_driver::Database::new(Vec::new());
        let root = db.set_file_text(Path::new("/virtual/test.mc"), source);
        let front = pmx_driver::front_end_diagnostics(&db, root);
        assert!(front.iter().all(|d| !d.is_error()), "{front:#?}");
        let analysis = pmx_driver::accelerate_analysis(&db, root).as_ref().expect("analysed");
        lower(analysis, backend)
    })
}

fn text(p: &Program) -> String {
    print(p, &|s: Span| format!("{}..{}", s.start, s.end))
}

/// Lowers, expects no diagnostic and a valid program; returns it printed.
fn lowered(source: &str, backend: Backend) -> (Program, String) {
    let (p, diags) = lower_source(source, backend);
    let shown = text(&p);
    assert!(diags.is_empty(), "{diags:#?}\n{shown}");
    let problems = validate(&p);
    assert!(problems.is_empty(), "{problems:#?}\n{shown}");
    (p, shown)
}

/// Every statement of a block and of the blocks nested in it.
fn stmts(b: &Block) -> Vec<&Stmt> {
    let mut out = Vec::new();
    b.for_each_stmt(&mut |s| out.push(s));
    out
}

fn all_stmts(p: &Program) -> Vec<&Stmt> {
    p.functions.iter().flat_map(|f| stmts(&f.body)).chain(p.entries.iter().flat_map(|e| stmts(&e.body))).collect()
}

fn count(p: &Program, pred: impl Fn(&Expr) -> bool) -> usize {
    all_stmts(p).into_iter().filter(|s| pred(&s.expr)).count()
}

#[test]
fn lowers_a_map_with_a_lifted_lambda() {
    let (p, shown) =
        lowered("mexpr\nlet k = 3 in\nlet xs = [1, 2] in\naccelerate (map (lam x. addi x k) xs)", Backend::Futhark);
    assert_eq!(p.entries.len(), 1, "{shown}");
    assert!(shown.contains("map (lambda k_1) xs") || shown.contains("map ("), "{shown}");
    let e = &p.entries[0];
    assert_eq!(e.params.len(), 2, "{shown}");
    assert_eq!(e.result, Type::seq(Type::Int));
}

mod eval;
mod hist;
use eval::{ints, run, V};

/// The entry's parameters by name (the order `run` takes them in).
fn params(p: &Program) -> Vec<String> {
    p.entries[0].params.iter().map(|v| v.name.to_string()).collect()
}

#[test]
fn or_pattern_with_three_alternatives() {
    let source = "
let classify = lam x. match x with 1 | 2 | 3 then 10 else 20
let pick = lam p : (Int, Int). match p with (x, 1) | (1, x) | (x, 2) then x else negi 1
mexpr
let xs = [0, 1, 2, 3, 4] in
let ps = [(5, 1), (1, 6), (7, 2), (3, 3)] in
accelerate (map classify xs, map pick ps)";
    let (p, shown) = lowered(source, Backend::Futhark);
    assert_eq!(params(&p), ["xs", "ps"], "{shown}");
    let pairs = V::Seq(
        [(5, 1), (1, 6), (7, 2), (3, 3)]
            .iter()
            .map(|(a, b)| V::Rec(vec![("0".into(), V::Int(*a)), ("1".into(), V::Int(*b))]))
            .collect(),
    );
    let r = run(&p, &p.entries[0].name, vec![ints(&[0, 1, 2, 3, 4]), pairs]);
    assert_eq!(r, V::Rec(vec![("0".into(), ints(&[20, 10, 10, 10, 20])), ("1".into(), ints(&[5, 6, 7, -1]))]));
    // Each alternative is a test; the three-way or binds `x` by `if`s.
    let classify = p.functions.iter().find(|f| f.name == "classify").expect("classify");
    let eqs = stmts(&classify.body).iter().filter(|s| matches!(s.expr, Expr::Prim(pmx_ast::Builtin::Eqi, _))).count();
    assert_eq!(eqs, 3, "{shown}");
}

#[test]
fn nested_record_patterns() {
    let source = "
let f = lam r : {a : {b : Int, c : Int}, d : Int}.
  match r with {a = {b = 1, c = c}, d = d} then addi c d else 0
mexpr
let rs = [{a = {b = 1, c = 2}, d = 3}, {a = {b = 2, c = 5}, d = 7}] in
accelerate (map f rs)";
    let (p, shown) = lowered(source, Backend::Futhark);
    let rec = |b, c, d| {
        V::Rec(vec![
            ("a".into(), V::Rec(vec![("b".into(), V::Int(b)), ("c".into(), V::Int(c))])),
            ("d".into(), V::Int(d)),
        ])
    };
    let r = run(&p, &p.entries[0].name, vec![V::Seq(vec![rec(1, 2, 3), rec(2, 5, 7)])]);
    assert_eq!(r, ints(&[5, 0]), "{shown}");
    assert!(count(&p, |e| matches!(e, Expr::Project(_, l) if l == "b")) >= 1, "{shown}");
}

#[test]
fn sequence_edge_patterns() {
    let source = "
let ends = lam s : [Int]. match s with [a, b] ++ mid ++ [z] then addi (addi a b) (addi z (length mid)) else negi 1
let exact = lam s : [Int]. match s with [x, 7] then x else 0
let str = lam s : [Char]. match s with \"ab\" ++ rest then length rest else negi 1
mexpr
let ss = [[1, 2, 3], [1, 2, 3, 4, 5], [1, 2], [4, 7]] in
let cs = [\"abc\", \"xab\", \"ab\"] in
accelerate (map ends ss, map exact ss, map str cs)";
    let (p, shown) = lowered(source, Backend::Futhark);
    let ss = V::Seq(vec![ints(&[1, 2, 3]), ints(&[1, 2, 3, 4, 5]), ints(&[1, 2]), ints(&[4, 7])]);
    let chars = |s: &str| V::Seq(s.chars().map(V::Char).collect());
    let cs = V::Seq(vec![chars("abc"), chars("xab"), chars("ab")]);
    let args = match params(&p).as_slice() {
        [a, _] if a == "ss" => vec![ss, cs],
        _ => vec![cs, ss],
    };
    let r = run(&p, &p.entries[0].name, args);
    let want = V::Rec(vec![
        ("0".into(), ints(&[6, 3 + 5 + 2, -1, -1])),
        ("1".into(), ints(&[0, 0, 0, 4])),
        ("2".into(), ints(&[1, -1, 0])),
    ]);
    assert_eq!(r, want, "{shown}");
    // The middle is a subsequence, the suffix read from the end.
    assert!(count(&p, |e| matches!(e, Expr::Prim(pmx_ast::Builtin::Subsequence, _))) >= 1, "{shown}");
    assert!(count(&p, |e| matches!(e, Expr::Prim(pmx_ast::Builtin::Geqi, _))) >= 1, "{shown}");
}

#[test]
fn not_and_patterns_and_variants() {
    let source = "
type Shape
con Circle : Float -> Shape
con Square : Float -> Shape
let area = lam s. match s with Circle r then mulf r r else match s with Square w then w else 0.0
let g = lam x. match x with !(1 | 2) & y then y else 0
mexpr
let shapes = [Circle 2.0, Square 3.0] in
let xs = [1, 2, 3] in
accelerate (map area shapes, map g xs)";
    // Futhark rejects variant types (a well-formedness error), but the
    // lowering itself handles them.
    let (p, diags) = lower_source(source, Backend::Futhark);
    assert!(diags.is_empty(), "{diags:#?}");
    assert!(validate(&p).is_empty(), "{:#?}", validate(&p));
    assert_eq!(p.variants.len(), 1);
    assert_eq!(p.variants[0].constructors.len(), 2);
    let shapes = V::Seq(vec![V::Con(0, Box::new(V::Float(2.0))), V::Con(1, Box::new(V::Float(3.0)))]);
    let args = match params(&p).as_slice() {
        [a, _] if a == "shapes" => vec![shapes, ints(&[1, 2, 3])],
        _ => vec![ints(&[1, 2, 3]), shapes],
    };
    let r = run(&p, &p.entries[0].name, args);
    let want = V::Rec(vec![("0".into(), V::Seq(vec![V::Float(4.0), V::Float(3.0)])), ("1".into(), ints(&[0, 0, 3]))]);
    assert_eq!(r, want, "{}", text(&p));
    assert!(count(&p, |e| matches!(e, Expr::IsCon { .. })) >= 2);
    assert!(count(&p, |e| matches!(e, Expr::Payload { .. })) >= 2);
}

#[test]
fn size_constraints_become_size_eq_and_coercions() {
    let source = "
let addAll = lam n. lam m. lam s : [[Int]].
  utest length s with n in
  utest m with length (head s) using eqi in
  utest addi n 1 with 3 in
  reduce addi 0 (map (lam r. reduce addi 0 r) s)
mexpr
let rows = [[1, 2], [3, 4]] in
accelerate (addAll 2 2 rows)";
    let (p, shown) = lowered(source, Backend::Futhark);
    let f = p.functions.iter().find(|f| f.name == "addAll").expect("addAll");
    let body = stmts(&f.body);
    let dims: Vec<usize> =
        body.iter().filter_map(|s| if let Expr::SizeEq { dim, .. } = s.expr { Some(dim) } else { None }).collect();
    assert_eq!(dims, [0, 1], "{shown}");
    assert_eq!(body.iter().filter(|s| matches!(s.expr, Expr::SizeCoerce { .. })).count(), 2, "{shown}");
    // The utest that is not a size constraint is kept.
    assert_eq!(body.iter().filter(|s| matches!(s.expr, Expr::Utest { .. })).count(), 1, "{shown}");
    // The sequence is used through its last coercion.
    let last = body.iter().rev().find(|s| matches!(s.expr, Expr::SizeCoerce { .. })).expect("a coercion");
    let uses_coerced = body
        .iter()
        .any(|s| matches!(&s.expr, Expr::Map { seqs, .. } if matches!(&seqs[0], Atom::Var(v) if v.id == last.var.id)));
    assert!(uses_coerced, "{shown}");
    let r = run(&p, &p.entries[0].name, vec![V::Seq(vec![ints(&[1, 2]), ints(&[3, 4])])]);
    assert_eq!(r, V::Int(10));
}

#[test]
fn cuda_size_constraints_have_no_coercion() {
    let source = "
let fill = lam n. lam t. lam s : [Int].
  utest length s with n in
  loop n (lam i. tensorSetExn t [i] (get s i))
mexpr
let t = tensorCreateCArrayInt [2] (lam i. 0) in
accelerate (fill 2 t [5, 6])";
    let (p, diags) = lower_source(source, Backend::Cuda);
    assert!(diags.is_empty(), "{diags:#?}");
    assert!(validate(&p).is_empty());
    assert_eq!(count(&p, |e| matches!(e, Expr::SizeEq { .. })), 1, "{}", text(&p));
    assert_eq!(count(&p, |e| matches!(e, Expr::SizeCoerce { .. })), 0);
}

#[test]
fn function_values_are_made_first_order() {
    let source = "
let addk = lam k. lam x. addi x k
let inc = lam k. addk k
mexpr
let k = 5 in
let xs = [1, 2, 3] in
let xss = [[1], [2, 3]] in
accelerate (let g = addk k in (map g xs, map (inc 1) xs, map (map negi) xss))";
    let (p, shown) = lowered(source, Backend::Futhark);
    // `map negi` inside `map` becomes a wrapper function.
    assert!(p.functions.iter().any(|f| f.lifted), "{shown}");
    let order = params(&p);
    let args: Vec<V> = order
        .iter()
        .map(|n| match n.as_str() {
            "k" => V::Int(5),
            "xs" => ints(&[1, 2, 3]),
            _ => V::Seq(vec![ints(&[1]), ints(&[2, 3])]),
        })
        .collect();
    let r = run(&p, &p.entries[0].name, args);
    let want = V::Rec(vec![
        ("0".into(), ints(&[6, 7, 8])),
        ("1".into(), ints(&[2, 3, 4])),
        ("2".into(), V::Seq(vec![ints(&[-1]), ints(&[-2, -3])])),
    ]);
    assert_eq!(r, want, "{shown}");
    // `inc` is eta-expanded: a function of two parameters calling `addk`.
    let inc = p.functions.iter().find(|f| f.name == "inc").expect("inc");
    assert_eq!(inc.params.len(), 2, "{shown}");
}

#[test]
fn functions_stored_in_data_are_reported() {
    let source = "
mexpr
let xs = [1, 2, 3] in
accelerate (let r = {f = addi 1} in map (lam x. r.f x) xs)";
    let (_, diags) = lower_source(source, Backend::Futhark);
    assert!(diags.iter().any(|d| d.code == pmx_diagnostics::Code::LowerFunctionValue), "{diags:#?}");
}

#[test]
fn polymorphic_functions_are_specialised_per_use() {
    let source = "
let twice = lam x. [x, x]
mexpr
let xs = [1, 2] in
let ys = [1.5] in
accelerate (map twice xs, map twice ys)";
    let (p, shown) = lowered(source, Backend::Futhark);
    let copies: Vec<&Function> = p.functions.iter().filter(|f| f.source == "twice").collect();
    assert_eq!(copies.len(), 2, "{shown}");
    assert!(copies.iter().all(|f| f.instance.len() == 1), "{shown}");
    assert!(shown.contains("instance a = Int") || shown.contains("= Int"), "{shown}");
}

#[test]
fn recursion_is_marked() {
    let source = "
recursive let sumTo = lam acc. lam n. if eqi n 0 then acc else sumTo (addi acc n) (subi n 1) end
recursive let fact = lam n. if eqi n 0 then 1 else muli n (fact (subi n 1)) end
mexpr
let t = tensorCreateCArrayInt [2] (lam i. 0) in
accelerate (loop 2 (lam i. tensorSetExn t [i] (addi (sumTo 0 i) (fact i))))";
    let (p, shown) = lowered(source, Backend::Cuda);
    let find = |n: &str| p.functions.iter().find(|f| f.name == n).expect("the function");
    assert!(find("sumTo").recursive && find("sumTo").tail_recursive, "{shown}");
    assert!(find("fact").recursive && !find("fact").tail_recursive, "{shown}");
    let lambda = p.functions.iter().find(|f| f.name.starts_with("lambda")).expect("the loop body");
    assert!(!lambda.recursive);
    // Dependency order: callees first.
    assert!(find("sumTo").id < lambda.id && find("fact").id < lambda.id, "{shown}");
}

#[test]
fn an_accelerate_the_backend_program_lost_is_reported() {
    // A function value crossing into Futhark code: the middle end reports
    // it, and its rewrites drop the binding; the lowering says so.
    // (`let inc = addi 1` alone is a known function, which accelerated
    // code calls; one chosen at run time is a value.)
    let source = "let inc = if true then addi 1 else addi 2\nmexpr\nlet xs = [1, 2, 3] in\naccelerate (map inc xs)";
    let (p, diags) = lower_source(source, Backend::Futhark);
    assert!(p.entries.is_empty());
    assert!(diags.iter().any(|d| d.code == pmx_diagnostics::Code::LowerUnsupported), "{diags:#?}");
}

/// A valid program with calls, a keyword, a record, an `if` and a size
/// coercion, for the validator tests to break.
fn base() -> Program {
    let source = "
let add = lam a. lam b. addi a b
let f = lam n. lam s : [Int].
  utest length s with n in
  let r = {x = n, y = 2} in
  let m = if gti r.x 0 then add r.x r.y else 0 in
  map (lam v. add v m) s
mexpr
let xs = [1, 2] in
accelerate (f 2 xs)";
    lowered(source, Backend::Futhark).0
}

fn function_mut<'a>(p: &'a mut Program, name: &str) -> &'a mut Function {
    p.functions.iter_mut().find(|f| f.name == name).expect("the function")
}

/// The first statement (depth first) whose node `pick` accepts.
fn stmt_mut<'a>(b: &'a mut Block, pick: &dyn Fn(&Expr) -> bool) -> Option<&'a mut Stmt> {
    for s in &mut b.stmts {
        if pick(&s.expr) {
            return Some(s);
        }
        if let Expr::If { then, otherwise, .. } = &mut s.expr {
            if let Some(found) = stmt_mut(then, pick) {
                return Some(found);
            }
            if let Some(found) = stmt_mut(otherwise, pick) {
                return Some(found);
            }
        }
    }
    None
}

#[test]
fn the_validator_accepts_the_base_and_rejects_each_breakage() {
    let ok = base();
    assert!(validate(&ok).is_empty(), "{:#?}", validate(&ok));
    type Breakage = Box<dyn Fn(&mut Program)>;
    let is_call = |e: &Expr| matches!(e, Expr::Call(..));
    let cases: Vec<(&str, Breakage, &str)> = vec![
        (
            "a primitive's result type changed",
            Box::new(|p| {
                stmt_mut(&mut function_mut(p, "add").body, &|e| matches!(e, Expr::Prim(..))).unwrap().var.ty =
                    Type::Float
            }),
            "does not return",
        ),
        (
            "a primitive missing an argument",
            Box::new(|p| {
                let s = stmt_mut(&mut function_mut(p, "add").body, &|e| matches!(e, Expr::Prim(..))).unwrap();
                if let Expr::Prim(_, args) = &mut s.expr {
                    args.pop();
                }
            }),
            "takes 2 arguments",
        ),
        (
            "a keyword used as a primitive",
            Box::new(|p| {
                stmt_mut(&mut function_mut(p, "add").body, &|e| matches!(e, Expr::Prim(..))).unwrap().expr =
                    Expr::Prim(pmx_ast::Builtin::Map, Vec::new())
            }),
            "not a primitive",
        ),
        (
            "a variable used where it is not defined",
            Box::new(|p| {
                function_mut(p, "add").body.result =
                    Atom::Var(Var { id: VarId(99_999), name: "ghost".into(), ty: Type::Int })
            }),
            "is used where it is not defined",
        ),
        (
            "a call missing an argument",
            Box::new(move |p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &is_call).unwrap();
                if let Expr::Call(_, args) = &mut s.expr {
                    args.pop();
                }
            }),
            "with arguments of types",
        ),
        (
            "a call of a function that does not exist",
            Box::new(move |p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &is_call).unwrap();
                if let Expr::Call(f, _) = &mut s.expr {
                    *f = FnId(999);
                }
            }),
            "does not exist",
        ),
        (
            "a function reference to a function that does not exist",
            Box::new(|p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &|e| matches!(e, Expr::Map { .. })).unwrap();
                if let Expr::Map { f, .. } = &mut s.expr {
                    f.callee = Callee::Function(FnId(999));
                }
            }),
            "does not exist",
        ),
        (
            "a function reference with the wrong parameter types",
            Box::new(|p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &|e| matches!(e, Expr::Map { .. })).unwrap();
                if let Expr::Map { f, .. } = &mut s.expr {
                    f.params = vec![Type::Float];
                }
            }),
            "a function reference takes",
        ),
        (
            "a variable defined twice",
            Box::new(|p| {
                let body = &mut function_mut(p, "add").body;
                let first = body.stmts[0].clone();
                body.stmts.push(first);
            }),
            "defined twice",
        ),
        (
            "a record type with unsorted labels",
            Box::new(|p| {
                p.entries[0].params[0].ty = Type::Record(vec![("b".into(), Type::Int), ("a".into(), Type::Int)])
            }),
            "unsorted or repeated labels",
        ),
        (
            "a record type without fields",
            Box::new(|p| p.entries[0].params[0].ty = Type::Record(Vec::new())),
            "without fields",
        ),
        ("a size coercion in a CUDA program", Box::new(|p| p.target = Target::Cuda), "outside a Futhark program"),
        (
            "functions out of order",
            Box::new(|p| {
                p.functions.swap(0, 1);
            }),
            "its id is",
        ),
        (
            "a branch of the wrong type",
            Box::new(|p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &|e| matches!(e, Expr::If { .. })).unwrap();
                if let Expr::If { otherwise, .. } = &mut s.expr {
                    otherwise.result = Atom::Lit(Lit::Bool(true));
                }
            }),
            "a block's result",
        ),
        (
            "a size constraint on a dimension the sequence lacks",
            Box::new(|p| {
                let s = stmt_mut(&mut function_mut(p, "f").body, &|e| matches!(e, Expr::SizeEq { .. })).unwrap();
                if let Expr::SizeEq { dim, .. } = &mut s.expr {
                    *dim = 3;
                }
            }),
            "has no dimension 3",
        ),
    ];
    for (what, breakage, expected) in cases {
        let mut p = ok.clone();
        breakage(&mut p);
        let problems = validate(&p);
        assert!(
            problems.iter().any(|m| m.contains(expected)),
            "{what}: expected a problem mentioning {expected:?}, got {problems:#?}\n{}",
            text(&p)
        );
    }
}

/// The accumulations of a CUDA-class program: (operator, atomic) in
/// program order.
fn accumulations(source: &str) -> Vec<(&'static str, bool)> {
    let (p, _) = lowered(source, Backend::Cuda);
    accumulate::find(&p).found.iter().map(|a| (a.op.name(), a.atomic())).collect()
}

#[test]
fn accumulations_are_atomic_where_iterations_may_share_a_cell() {
    let hist = "let h = tensorCreateCArrayInt [4] (lam. 0)\nmexpr\n\
                accelerate (loop 10 (lam i. let b = modi (muli i i) 4 in \
                tensorSetExn h [b] (addi (tensorGetExn h [b]) 1)))";
    assert_eq!(accumulations(hist), [("addi", true)]);
    // The loop's own cell: plain.
    let own = "let y = tensorCreateCArrayFloat [4] (lam. 0.)\nmexpr\n\
               accelerate (loop 4 (lam i. tensorSetExn y [i] (addf 1. (tensorGetExn y [i]))))";
    assert_eq!(accumulations(own), [("addf", false)]);
    // A row and a column of the index by one width, and a row of a matrix
    // taken per iteration: plain.
    let cells = "let c = tensorCreateCArrayInt [3, 5] (lam. 0)\nmexpr\n\
                 accelerate (loop 15 (lam k. let i = divi k 5 in let j = modi k 5 in \
                 tensorSetExn c [i, j] (muli (tensorGetExn c [i, j]) 2)))";
    assert_eq!(accumulations(cells), [("muli", false)]);
    let rows = "let c = tensorCreateCArrayInt [3, 5] (lam. 0)\nmexpr\n\
                accelerate (loop 3 (lam i. let r = tensorSliceExn c [i] in \
                seqLoop 5 (lam j. tensorSetExn r [0] (addi (tensorGetExn r [0]) j))))";
    assert_eq!(accumulations(rows), [("addi", false)]);
    // Two different widths: not known apart.
    let tiles = "let c = tensorCreateCArrayInt [3, 5] (lam. 0)\nmexpr\n\
                 accelerate (loop 15 (lam k. let i = divi k 5 in let j = modi k 3 in \
                 tensorSetExn c [i, j] (addi (tensorGetExn c [i, j]) 2)))";
    assert_eq!(accumulations(tiles), [("addi", true)]);
}

#[test]
fn only_associative_and_commutative_updates_of_an_unused_read_are_accumulations() {
    let maxi = "let maxi = lam a. lam b. if gti a b then a else b\n\
                let h = tensorCreateCArrayInt [2] (lam. 0)\nmexpr\n\
                accelerate (loop 10 (lam i. let k = modi i 2 in \
                let old = tensorGetExn h [k] in tensorSetExn h [k] (maxi i old)))";
    assert_eq!(accumulations(maxi), [("maxi", true)]);
    let sub = "let h = tensorCreateCArrayInt [2] (lam. 0)\nmexpr\n\
               accelerate (loop 10 (lam i. tensorSetExn h [0] (subi (tensorGetExn h [0]) i)))";
    assert_eq!(accumulations(sub), []);
    // The value read is used again: what it is depends on the order.
    let read = "let h = tensorCreateCArrayInt [2] (lam. 0)\nlet o = tensorCreateCArrayInt [10] (lam. 0)\nmexpr\n\
                accelerate (loop 10 (lam i. let old = tensorGetExn h [0] in \
                tensorSetExn h [0] (addi old i); tensorSetExn o [i] old))";
    assert_eq!(accumulations(read), []);
    // Another cell: not a read-modify-write.
    let other = "let h = tensorCreateCArrayInt [2] (lam. 0)\nmexpr\n\
                 accelerate (loop 10 (lam i. tensorSetExn h [1] (addi (tensorGetExn h [0]) i)))";
    assert_eq!(accumulations(other), []);
}

#[test]
fn an_update_of_its_own_cell_is_atomic_where_another_accumulation_may_share_the_tensor() {
    // `t[i] += 1` alone is plain; beside `t[i % 2] += 1` (the same cells
    // from other iterations) it would race with those.
    let both = "let t = tensorCreateCArrayInt [4] (lam. 0)\nmexpr\n\
                accelerate (loop 4 (lam i. tensorSetExn t [i] (addi (tensorGetExn t [i]) 1); \
                let k = modi i 2 in tensorSetExn t [k] (addi (tensorGetExn t [k]) 1)))";
    assert_eq!(accumulations(both), [("addi", true), ("addi", true)]);
    let apart = "let t = tensorCreateCArrayInt [4] (lam. 0)\nlet u = tensorCreateCArrayFloat [2] (lam. 0.)\nmexpr\n\
                 accelerate (loop 4 (lam i. tensorSetExn t [i] (addi (tensorGetExn t [i]) 1); \
                 let k = modi i 2 in tensorSetExn u [k] (addf (tensorGetExn u [k]) 1.)))";
    assert_eq!(accumulations(apart), [("addi", false), ("addf", true)]);
}
