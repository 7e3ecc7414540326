//! Property: for generated well-typed programs whose accelerate
//! expressions call recursions shaped like `map`, `map2` (three shapes,
//! and over an index) and folds (with an accumulator, or tail recursion with `addi`, `muli`,
//! `maxi`, `mini`, `and`, `or` or `concat` on either side), a
//! higher-order function given a partially applied function, and
//! polymorphic functions inside a CUDA `loop`, the whole program with the
//! Futhark (and, separately, the CUDA) rewritten program put back in runs
//! exactly like the original. Each case also checks that the rewrites
//! happened: no recursion is left for Futhark, `map2` and the
//! specialised higher-order function are there, and CUDA has a copy of
//! the polymorphic function per type; and each backend's program lowers
//! (`pmx-lower`) without diagnostics to an IR the validator accepts.
//! Each recursion is written in one of several equivalent spellings
//! (`Spelling`: let-bound parts, `eqi (length s) 0`, `match s with []`),
//! which must all be rewritten alike.
//! The original runs compiled (the default target) and the rewritten
//! programs in the interpreter: one compilation per case instead of three,
//! and the comparison covers the backends too.

mod support;

use proptest::prelude::*;
use support::pmx;

/// An Int expression over the variables given.
fn int_expr(vars: Vec<&'static str>) -> BoxedStrategy<String> {
    let leaf =
        prop_oneof![(-9i64..9).prop_map(|i| i.to_string()), proptest::sample::select(vars).prop_map(|v| v.to_string())];
    leaf.prop_recursive(3, 12, 3, move |inner| {
        prop_oneof![
            (proptest::sample::select(vec!["addi", "subi", "muli"]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| format!("({op} {a} {b})")),
            (inner.clone(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c, d)| format!("(if lti {a} {b} then {c} else {d})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("(let w = {a} in addi w {b})")),
        ]
    })
    .boxed()
}

/// Replaces the variable `h` (a whole word) in generated code.
fn with_head(e: &str, h: &str, by: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    for c in e.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        out.push_str(if word == h { by } else { &word });
        word.clear();
        out.push(c);
    }
    out.pop();
    out
}

/// Equivalent ways of writing the same recursion (bits of a number),
/// which must all be recognised alike (issue 26: "parallel patterns found
/// whatever the shape of the term"): 1, the recursive call let-bound
/// before the step; 2, the element let-bound; 4, the base case as `(let b
/// = .. in b)`; 8, the test as `eqi (length s) 0`, or with 16 too as
/// `match s with [] then`; 32, the tail let-bound.
#[derive(Debug, Clone, Copy)]
struct Spelling(u8);

impl Spelling {
    fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// `if null s then BASE else STEP`, where STEP is built from the
    /// element, the call on the tail, and how they combine.
    fn recursion(
        self,
        base: &str,
        e: &str,
        call: &dyn Fn(&str) -> String,
        step: &dyn Fn(&str, &str) -> String,
    ) -> String {
        let base = if self.has(4) { format!("(let b = {base} in b)") } else { base.to_string() };
        let tail = if self.has(32) { "t" } else { "(tail s)" };
        let (e_var, e_let) =
            if self.has(2) { ("x".to_string(), format!("let x = {e} in ")) } else { (e.to_string(), String::new()) };
        let (c_var, c_let) = if self.has(1) {
            ("r".to_string(), format!("let r = {} in ", call(tail)))
        } else {
            (call(tail), String::new())
        };
        let t_let = if self.has(32) { "let t = tail s in " } else { "" };
        let body = format!("{t_let}{c_let}{e_let}{}", step(&e_var, &c_var));
        match (self.has(8), self.has(16)) {
            (true, true) => format!("match s with [] then {base} else {body}"),
            (true, false) => format!("if eqi (length s) 0 then {base} else {body}"),
            _ => format!("if null s then {base} else {body}"),
        }
    }
}

/// A recursion shaped like `map` over `s`, with parameter `d`.
fn map_fn(e: String, by_pattern: bool, spelling: Spelling) -> String {
    if by_pattern {
        format!("recursive let mapF = lam d. lam s.\n  match s with [h] ++ t then concat [{e}] (mapF d t) else []\nend")
    } else {
        let e = with_head(&e, "h", "(head s)");
        let body = spelling.recursion("[]", &e, &|t| format!("mapF d {t}"), &|e, c| format!("cons {e} ({c})"));
        format!("recursive let mapF = lam d. lam s.\n  {body}\nend")
    }
}

/// Tail recursion with an associative operator; `element_first` puts the
/// element on the left of the recursive call.
fn fold_fn(name: &str, op: &str, e: &str, base: &str, element_first: bool, spelling: Spelling) -> String {
    let e = with_head(e, "h", "(head s)");
    let call = |t: &str| format!("{name} d {t}");
    let step = |e: &str, c: &str| if element_first { format!("{op} {e} ({c})") } else { format!("{op} ({c}) {e}") };
    let body = spelling.recursion(base, &e, &call, &step);
    format!("recursive let {name} = lam d. lam s.\n  {body}\nend")
}

/// A recursion shaped like `map2`: 0 stops on `a`, 1 on `b` (as a
/// pattern), 2 matches both at once.
fn map2_fn(e: String, shape: usize) -> String {
    match shape {
        0 => {
            let e = with_head(&with_head(&e, "h", "(head a)"), "g", "(head b)");
            format!(
                "recursive let map2F = lam d. lam a. lam b.\n  if null a then [] else cons {e} (map2F d (tail a) (tail b))\nend"
            )
        }
        1 => {
            let e = with_head(&e, "h", "(head a)");
            format!(
                "recursive let map2F = lam d. lam a. lam b.\n  match b with [g] ++ bs then cons {e} (map2F d (tail a) bs) else []\nend"
            )
        }
        _ => format!(
            "recursive let map2F = lam d. lam a. lam b.\n  match (a, b) with ([h] ++ ta, [g] ++ tb) then concat [{e}] (map2F d ta tb) else []\nend"
        ),
    }
}

#[derive(Debug, Clone)]
struct Gen {
    d: i64,
    items: Vec<i64>,
    extra: Vec<i64>,
    map_e: String,
    map_pattern: bool,
    fold_e: String,
    fold_op: &'static str,
    fold_base: i64,
    fold_first: bool,
    bool_e: String,
    bool_op: &'static str,
    bool_first: bool,
    cat_e: String,
    cat_first: bool,
    cat_base: Vec<i64>,
    acc_e: String,
    map2_e: String,
    map2_shape: usize,
    step_e: String,
    idx_e: String,
    start: i64,
    idx_cond: usize,
    spelling: Spelling,
}

fn gen() -> impl Strategy<Value = Gen> {
    let hd = vec!["h", "d"];
    let parts1 = (
        -5i64..5,
        proptest::collection::vec(-9i64..9, 1..6),
        proptest::collection::vec(-9i64..9, 0..3),
        int_expr(hd.clone()),
        any::<bool>(),
        int_expr(hd.clone()),
        proptest::sample::select(vec!["addi", "muli", "maxi", "mini"]),
        -5i64..5,
        any::<bool>(),
    );
    let parts2 = (
        int_expr(hd.clone()),
        proptest::sample::select(vec!["and", "or"]),
        any::<bool>(),
        int_expr(hd.clone()),
        any::<bool>(),
        proptest::collection::vec(-9i64..9, 0..2),
        int_expr(vec!["h", "d", "acc"]),
        int_expr(vec!["h", "g", "d"]),
        0usize..3,
        int_expr(vec!["x", "d"]),
    );
    let parts3 = (int_expr(vec!["h", "g", "d", "i"]), 0i64..7, 0usize..4, 0u8..64);
    (parts1, parts2, parts3).prop_map(|(p1, p2, p3)| Gen {
        d: p1.0,
        items: p1.1,
        extra: p1.2,
        map_e: p1.3,
        map_pattern: p1.4,
        fold_e: p1.5,
        fold_op: p1.6,
        fold_base: p1.7,
        fold_first: p1.8,
        bool_e: p2.0,
        bool_op: p2.1,
        bool_first: p2.2,
        cat_e: p2.3,
        cat_first: p2.4,
        cat_base: p2.5,
        acc_e: p2.6,
        map2_e: p2.7,
        map2_shape: p2.8,
        step_e: p2.9,
        idx_e: p3.0,
        start: p3.1,
        idx_cond: p3.2,
        spelling: Spelling(p3.3),
    })
}

/// A recursion over an index, shaped like `map2`, with one of the four
/// ways of writing its condition.
fn index_fn(e: &str, cond: usize) -> String {
    let e = with_head(&with_head(e, "h", "(get a i)"), "g", "(get b i)");
    let step = format!("cons {e} (idxF d a b (addi i 1))");
    let body = match cond {
        0 => format!("if lti i (length a) then {step} else []"),
        1 => format!("if gti (length a) i then {step} else []"),
        2 => format!("if geqi i (length a) then [] else {step}"),
        _ => format!("if leqi (length a) i then [] else {step}"),
    };
    format!("recursive let idxF = lam d. lam a. lam b. lam i.\n  {body}\nend")
}

fn list(items: &[i64]) -> String {
    format!("[{}]", items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "))
}

fn program(g: &Gen) -> String {
    let bool_base = if g.bool_op == "and" { "true" } else { "false" };
    let bool_e = format!("(gti {} 0)", g.bool_e);
    let cat_e = format!("[{}, d]", g.cat_e);
    let acc = with_head(&g.acc_e, "h", "(head s)");
    let longer: Vec<i64> = g.items.iter().chain(&g.extra).copied().collect();
    // Shape 0 stops on its first sequence, shape 1 on its second: the
    // other is at least as long. Shape 2 stops at the shorter.
    let (a, b) = match g.map2_shape {
        0 => ("s", "s2"),
        1 => ("s2", "s"),
        _ => ("s2", "s"),
    };
    format!(
        "include \"bool.mc\"
include \"int.mc\"
{map}
{fold}
{boolf}
{cat}
recursive let accF = lam d. lam acc. lam s.
  if null s then acc else accF d (addi acc {acc}) (tail s)
end
{map2}
{idx}
let twice = lam f. lam x. f (f x)
let step = lam d. lam x. {step}
let pick = lam c. lam a. lam b. if c then a else b
let firstOf = lam a. lam b. pick true a b
mexpr
let d = {d} in
let s = {items} in
let s2 = {longer} in
let n = length s in
let r1 = accelerate (map (lam x. x) (mapF d s)) in
let r2 = accelerate (reduce addi 0 s, foldF d s, boolF d s, catF d s, accF d 0 s) in
let r3 = accelerate (map (lam x. x) (map2F d {a} {b}), idxF d s s2 {start}) in
let r4 = accelerate (map (twice (step d)) s) in
let t = tensorCreateCArrayInt [n] (lam i. 0) in
let u = tensorCreateCArrayFloat [n] (lam i. 0.0) in
accelerate (loop n (lam i.
  tensorSetExn t [i] (firstOf (pick (lti i d) (get s i) d) 0);
  tensorSetExn u [i] (pick (lti i d) 1.5 2.5)));
dprint (r1, r2, r3, r4, create n (lam i. tensorGetExn t [i]), create n (lam i. tensorGetExn u [i]));
print \"\\n\"
",
        map = map_fn(g.map_e.clone(), g.map_pattern, g.spelling),
        fold = fold_fn("foldF", g.fold_op, &g.fold_e, &g.fold_base.to_string(), g.fold_first, g.spelling),
        boolf = fold_fn("boolF", g.bool_op, &bool_e, bool_base, g.bool_first, g.spelling),
        cat = fold_fn("catF", "concat", &cat_e, &list(&g.cat_base), g.cat_first, g.spelling),
        map2 = map2_fn(g.map2_e.clone(), g.map2_shape),
        step = g.step_e,
        idx = index_fn(&g.idx_e, g.idx_cond),
        start = g.start,
        d = g.d,
        items = list(&g.items),
        longer = list(&longer),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn backend_rewrites_preserve_results(g in gen()) {
        let src = program(&g);
        let dir = std::env::temp_dir().join(format!("pmx-rewrite-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let original = dir.join("original.mc");
        std::fs::write(&original, &src).expect("writable");
        let before = pmx(&["run"], &original);
        prop_assert_eq!(before.0, 0, "the generated program must run: {}\n{}", before.2, src);
        let checked = pmx(&["check", "--color=never"], &original);
        prop_assert_eq!(checked.0, 0, "the rewritten program is well-formed: {}\n{}", checked.2, src);
        for stage in ["futhark-ir", "cuda-ir"] {
            let lowered = pmx(&["emit", "--stage", stage, "--color=never"], &original);
            prop_assert_eq!(lowered.0, 0, "{} is valid: {}\n{}\n{}", stage, lowered.2, src, lowered.1);
        }

        let support::Rewritten { whole, backend: futhark, higher_order } =
            support::rewritten(&original, support::Backend::Futhark);
        prop_assert!(!futhark.contains("recursive"), "all recursion is rewritten:\n{}\n{}", src, futhark);
        prop_assert!(futhark.contains("map2 "), "map2 is found:\n{}", futhark);
        prop_assert!(higher_order.is_empty(), "{:?} are specialised:\n{}", higher_order, futhark);
        let file = dir.join("futhark.mc");
        std::fs::write(&file, &whole).expect("writable");
        let after = pmx(&["run", "--target", "interp"], &file);
        prop_assert_eq!(&before, &after, "original:\n{}\nwith the Futhark rewrites:\n{}", src, whole);

        let support::Rewritten { whole, backend: cuda, .. } = support::rewritten(&original, support::Backend::Cuda);
        prop_assert_eq!(cuda.matches("let pick").count(), 2, "one pick per type:\n{}", cuda);
        let file = dir.join("cuda.mc");
        std::fs::write(&file, &whole).expect("writable");
        let after = pmx(&["run", "--target", "interp"], &file);
        prop_assert_eq!(&before, &after, "original:\n{}\nwith the CUDA rewrites:\n{}", src, whole);
    }
}
