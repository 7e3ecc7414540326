//! Each `accelerate`'s backend, why (the bindings from it to a keyword),
//! and how its parameters cross into accelerated code.

use crate::check;
use insta::assert_snapshot;

#[test]
fn map_is_futhark_and_a_sequence_is_copied_in() {
    assert_snapshot!(check("mexpr\nlet s = [1, 2] in\naccelerate (map (lam x. addi x 1) s)"), @r"
        accelerate1 at 3:1-3:37: Futhark
          why: accelerate1 (3:1-3:37) -> `map` at 3:13-3:16
          s : [Int] (copied in)
          returns: [Int]
          functions: lambda
        ");
}

#[test]
fn loop_is_cuda_and_a_tensor_not_used_after_is_only_copied_in() {
    let src = "mexpr\nlet t = tensorCreateCArrayInt [4] (lam idx. 0) in\naccelerate (loop 4 (lam i. tensorSetExn t [i] (addi (tensorGetExn t [i]) 1)))";
    assert_snapshot!(check(src), @r"
        accelerate1 at 3:1-3:78: CUDA
          why: accelerate1 (3:1-3:78) -> `loop` at 3:13-3:17
          t : Tensor[Int] (copied in)
          returns: ()
          functions: lambda
        ");
}

#[test]
fn the_keyword_is_found_through_functions() {
    let src =
        "let inc = lam s. map (lam x. addi x 1) s\nlet twice = lam s. inc (inc s)\nmexpr\naccelerate (twice [1, 2])";
    assert_snapshot!(check(src), @r"
        accelerate1 at 4:1-4:26: Futhark
          why: accelerate1 (4:1-4:26) -> twice (2:5-2:10) -> inc (1:5-1:8) -> `map` at 1:18-1:21
          returns: [Int]
          functions: lambda, inc, twice
        ");
}

#[test]
fn a_scalar_is_passed_by_value() {
    assert_snapshot!(check("mexpr\nlet k = 3 in\naccelerate (map (lam x. muli x k) [1, 2])"), @r"
        accelerate1 at 3:1-3:42: Futhark
          why: accelerate1 (3:1-3:42) -> `map` at 3:13-3:16
          k : Int (passed by value)
          returns: [Int]
          functions: lambda
        ");
}

#[test]
fn reduce_and_map2_are_futhark() {
    let src = "mexpr\nlet a = [1, 2] in\nlet b = [3, 4] in\naccelerate (reduce addi 0 (map2 muli a b))";
    assert_snapshot!(check(src), @r"
        accelerate1 at 4:1-4:43: Futhark
          why: accelerate1 (4:1-4:43) -> `reduce` at 4:13-4:19
          a : [Int] (copied in)
          b : [Int] (copied in)
          returns: Int
        ");
}

#[test]
fn a_tensor_used_after_is_copied_back_out() {
    let src = "mexpr\nlet t = tensorCreateCArrayInt [4] (lam idx. 1) in\naccelerate (loop 4 (lam i. tensorSetExn t [i] (addi (tensorGetExn t [i]) 1)));\ntensorGetExn t [0]";
    assert_snapshot!(check(src), @r"
        accelerate1 at 3:1-3:78: CUDA
          why: accelerate1 (3:1-3:78) -> `loop` at 3:13-3:17
          t : Tensor[Int] (copied in and back out)
          returns: ()
          functions: lambda
        ");
}

#[test]
fn a_histogram_fold_is_futhark() {
    // Issue 30: a `foldl` that updates its sequence accumulator at a
    // computed index with an accumulation's operator is `reduce_by_index`.
    let src = "mexpr\nlet xs = [1, 2] in\naccelerate (foldl (lam h. lam x. set h x (addi (get h x) 1)) (create 4 (lam. 0)) xs)";
    assert_snapshot!(check(src), @r"
        accelerate1 at 3:1-3:85: Futhark
          why: accelerate1 (3:1-3:85) -> `foldl` at 3:13-3:18
          xs : [Int] (copied in)
          returns: [Int]
          functions: lambda, lambda
        ");
}

#[test]
fn a_histogram_fold_through_lets_with_the_old_value_second_is_futhark() {
    let src = "include \"int.mc\"\nlet step = lam k. lam h. lam x.\n  let i = modi x k in\n  let old = get h i in\n  set h i (maxi x old)\nmexpr\nlet xs = [1, 2] in\nlet k = 3 in\naccelerate (foldl (step k) [5, 6, 7] xs)";
    assert_snapshot!(check(src), @r"
        accelerate1 at 9:1-9:41: Futhark
          why: accelerate1 (9:1-9:41) -> `foldl` at 9:13-9:18
          k : Int (passed by value)
          xs : [Int] (copied in)
          returns: [Int]
          functions: maxi, step
        ");
}

#[test]
fn a_fold_that_is_no_histogram_is_no_keyword() {
    // `subi` is not commutative; the second step reads its accumulator
    // at another index too.
    let src = "mexpr\nlet xs = [1, 2] in\naccelerate (foldl (lam h. lam x. set h x (subi (get h x) 1)) (create 4 (lam. 0)) xs);\naccelerate (foldl (lam h. lam x. set h x (addi (get h x) (get h 0))) (create 4 (lam. 0)) xs)";
    assert_snapshot!(check(src), @r"
        error[E0402] 3:1-3:85: The accelerate expression does not use any parallel keywords. This is not allowed.
          3:1-3:85: no parallel keyword is used here or in the functions it calls
          = use `map`, `map2`, `reduce`, `flatten` or a histogram's `foldl` (one that updates its sequence accumulator at a computed index with `addi`, `addf`, `muli`, `mulf`, `maxi` or `mini`) (Futhark backend), or `loop` (CUDA backend); without one, remove `accelerate`
        error[E0402] 4:1-4:93: The accelerate expression does not use any parallel keywords. This is not allowed.
          4:1-4:93: no parallel keyword is used here or in the functions it calls
          = use `map`, `map2`, `reduce`, `flatten` or a histogram's `foldl` (one that updates its sequence accumulator at a computed index with `addi`, `addf`, `muli`, `mulf`, `maxi` or `mini`) (Futhark backend), or `loop` (CUDA backend); without one, remove `accelerate`
        accelerate1 at 3:1-3:85: none (no parallel keyword)
          xs : [Int] (copied in)
          returns: [Int]
          functions: lambda, lambda
        accelerate2 at 4:1-4:93: none (no parallel keyword)
          xs : [Int] (copied in)
          returns: [Int]
          functions: lambda, lambda
        ");
}

#[test]
fn a_histogram_fold_with_a_cuda_keyword_is_both() {
    let src = "mexpr\nlet t = tensorCreateCArrayInt [4] (lam idx. 0) in\nlet xs = [1, 2] in\naccelerate (loop 4 (lam i. tensorSetExn t [i] (get (foldl (lam h. lam x. set h x (addi (get h x) i)) [0, 0, 0, 0] xs) i)))";
    assert_snapshot!(check(src), @r"
        error[E0403] 4:1-4:123: Accelerate expression uses parallel keywords of multiple backends
          4:1-4:123: this accelerate expression
          4:13-4:17: `loop` needs the CUDA backend
          4:53-4:58: `foldl` needs the Futhark backend
          = an accelerate expression is compiled by one backend: use only Futhark keywords (`map`, `map2`, `reduce`, `flatten`, a histogram's `foldl`) or only CUDA ones (`loop`, `seqLoop`, `seqLoopAcc`, `printFloat`), or split it in two
        accelerate1 at 4:1-4:123: none (keywords of both backends)
          why: accelerate1 (4:1-4:123) -> `loop` at 4:13-4:17
          why: accelerate1 (4:1-4:123) -> lambda (4:21-4:121) -> `foldl` at 4:53-4:58
          t : Tensor[Int] (copied in)
          xs : [Int] (copied in)
          returns: ()
          functions: lambda, lambda
        ");
}
