//! Property: for generated well-typed programs (local functions capturing
//! variables, nested and recursive functions, accelerate expressions over
//! `map`, `reduce` and `loop`), the program after accelerate binding and
//! lambda lifting (`pmx emit --stage lifted`) prints what the original
//! prints. The original runs with its accelerate code compiled (the
//! default target) and the lifted program in the interpreter, so each
//! case also compares the backends with the interpreter while paying for
//! one compilation instead of two.

#[path = "support/process.rs"]
mod process;

use process::pmx;
use proptest::prelude::*;

/// An Int expression over the variables in scope.
fn int_expr(vars: Vec<String>) -> BoxedStrategy<String> {
    let leaf = prop_oneof![(-20i64..20).prop_map(|i| i.to_string()), proptest::sample::select(vars.clone())];
    leaf.prop_recursive(4, 24, 3, move |inner| {
        let vars = vars.clone();
        prop_oneof![
            (proptest::sample::select(vec!["addi", "subi", "muli"]), inner.clone(), inner.clone())
                .prop_map(|(op, a, b)| format!("({op} {a} {b})")),
            (inner.clone(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c, d)| format!("(if lti {a} {b} then {c} else {d})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("(let w = {a} in addi w {b})")),
            // A local function capturing what is in scope, applied.
            (inner.clone(), inner.clone()).prop_map(|(body, arg)| format!("(let h = lam z. addi z {body} in h {arg})")),
            (proptest::sample::select(vars.clone()), inner).prop_map(|(v, a)| format!("(muli {v} {a})")),
        ]
    })
    .boxed()
}

fn program() -> impl Strategy<Value = String> {
    let outer = vec!["k".to_string(), "n".to_string()];
    let in_fn = vec!["k".to_string(), "n".to_string(), "x".to_string()];
    (
        -10i64..10,
        1i64..6,
        int_expr(in_fn.clone()),
        int_expr(in_fn),
        int_expr(outer),
        proptest::collection::vec(-9i64..9, 1..6),
    )
        .prop_map(|(k, n, f_body, g_body, top, items)| {
            let items: Vec<String> = items.iter().map(|i| i.to_string()).collect();
            format!(
                "let k = {k}
recursive let sumTo = lam i. if lti i 1 then 0 else addi i (sumTo (subi i 1)) end
mexpr
let n = {n} in
let f = lam x. {f_body} in
let s = [{items}] in
let t = tensorCreateCArrayInt [{len}] (lam idx. 0) in
let mapped = accelerate (map f s) in
let total = accelerate (reduce addi 0 (map (lam x. {g_body}) s)) in
accelerate (loop {len} (lam i. tensorSetExn t [i] (addi (get s i) n)));
let loops = create {len} (lam i. tensorGetExn t [i]) in
let nested = (lam a. lam b. addi a (f b)) 1 2 in
dprint (mapped, total, loops, nested, {top}, sumTo n);
print \"\\n\"
",
                items = items.join(", "),
                len = items.len()
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn lifting_preserves_results(src in program()) {
        let dir = std::env::temp_dir().join(format!("pmx-lift-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let original = dir.join("original.mc");
        std::fs::write(&original, &src).expect("writable");
        let before = pmx(&["run"], &original);
        prop_assert_eq!(before.0, 0, "the generated program must run: {}\n{}", before.2, src);
        prop_assert!(before.1.starts_with('('), "it prints its results: {}", before.1);
        let (code, lifted, err) = pmx(&["emit", "--stage", "lifted"], &original);
        prop_assert_eq!(code, 0, "{}", err);
        let lifted_file = dir.join("lifted.mc");
        std::fs::write(&lifted_file, &lifted).expect("writable");
        let after = pmx(&["run", "--target", "interp"], &lifted_file);
        prop_assert_eq!(&before, &after, "original:\n{}\nlifted:\n{}", src, lifted);
    }
}
