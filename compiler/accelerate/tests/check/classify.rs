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
