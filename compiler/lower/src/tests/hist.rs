//! Histogram folds (issue 30): which folds `hist.rs` splits, that the
//! split program is valid IR (`lowered` validates it) and that it
//! computes what the fold computed (the IR's evaluator).

use super::*;

/// The operators of the histograms of a Futhark-class program, in
/// program order.
fn histograms(source: &str) -> Vec<&'static str> {
    let (p, _) = lowered(source, Backend::Futhark);
    crate::hist::found(&p).iter().map(|h| h.op.name()).collect()
}

#[test]
fn folds_that_update_one_cell_with_an_operator_are_split() {
    let counts = "mexpr\nlet xs = [1, 2] in\n\
                  accelerate (foldl (lam h. lam x. set h (modi x 3) (addi (get h (modi x 3)) 1)) [0, 0, 0] xs)";
    assert_eq!(histograms(counts), ["addi"]);
    let lets = "let maxi = lam a. lam b. if gti a b then a else b\nmexpr\nlet xs = [1, 2] in\n\
                accelerate (foldl (lam h. lam x. let i = modi x 2 in let old = get h i in \
                set h i (maxi x old)) [0, 0] xs)";
    assert_eq!(histograms(lets), ["maxi"]);
    let floats = "mexpr\nlet xs = [1., 2.] in\n\
                  accelerate (map (lam k. k) (foldl (lam h. lam x. set h 0 (mulf (get h 0) x)) [1., 1.] xs))";
    assert_eq!(histograms(floats), ["mulf"]);
}

#[test]
fn other_folds_stay_folds() {
    // Not commutative.
    let sub = "mexpr\nlet xs = [1, 2] in\n\
               accelerate (map (lam k. k) (foldl (lam h. lam x. set h x (subi (get h x) 1)) [0, 0, 0] xs))";
    assert_eq!(histograms(sub), Vec::<&str>::new());
    // Another cell read, and the old value used twice.
    let other = "mexpr\nlet xs = [1, 2] in\n\
                 accelerate (map (lam k. k) (foldl (lam h. lam x. set h x (addi (get h 0) 1)) [0, 0, 0] xs))";
    assert_eq!(histograms(other), Vec::<&str>::new());
    let twice = "mexpr\nlet xs = [1, 2] in\n\
                 accelerate (map (lam k. k) (foldl (lam h. lam x. let o = get h x in set h x (addi o o)) [0, 0, 0] xs))";
    assert_eq!(histograms(twice), Vec::<&str>::new());
    // The step is called elsewhere too: left alone.
    let called = "let step = lam h : [Int]. lam x : Int. set h x (addi (get h x) 1)\nmexpr\nlet xs = [1, 2] in\n\
                  accelerate (map (lam k. k) (concat (step [0, 0, 0] 1) (foldl step [0, 0, 0] xs)))";
    assert_eq!(histograms(called), Vec::<&str>::new());
}

#[test]
fn a_split_fold_computes_what_the_fold_computed() {
    let src = "mexpr\nlet xs = [5, 1, 4, 1, 5] in\nlet z = [10, 20, 30] in\n\
               accelerate (foldl (lam h. lam x. let b = modi x 3 in set h b (addi x (get h b))) z xs)";
    let (p, shown) = lowered(src, Backend::Futhark);
    assert!(shown.contains("reduce_by_index"), "{shown}");
    let names: Vec<&str> = p.entries[0].params.iter().map(|v| v.name.as_str()).collect();
    let args = names.iter().map(|n| if n.starts_with('x') { ints(&[5, 1, 4, 1, 5]) } else { ints(&[10, 20, 30]) });
    assert_eq!(run(&p, &p.entries[0].name, args.collect()), ints(&[10, 26, 40]), "{shown}");
}
