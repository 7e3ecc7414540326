//! Programs the accelerate passes reject: nesting, a class that is not
//! one backend's, and what each backend cannot compile.

use crate::check;
use insta::assert_snapshot;

#[test]
fn an_accelerate_inside_another() {
    let src = "let inner = lam s. accelerate (map (lam x. addi x 1) s)\nmexpr\naccelerate (map (lam x. muli x 2) (inner [1, 2]))";
    assert_snapshot!(check(src), @r"
        error[E0401] 1:20-1:56: The accelerated expression is used within another accelerated expression, which is not supported.
          1:20-1:56: this accelerate expression is nested
          3:1-3:50: inside this accelerate expression
          = remove the inner `accelerate`: code inside an accelerated expression is accelerated already
        accelerate1 at 1:20-1:56: none (nested)
          s : [Int] (copied in)
          returns: [Int]
        accelerate2 at 3:1-3:50: Futhark
          why: accelerate2 (3:1-3:50) -> `map` at 3:13-3:16
          returns: [Int]
          functions: lambda, accelerate1, inner, lambda
        ");
}

#[test]
fn no_parallel_keyword() {
    assert_snapshot!(check("let sum = lam s. foldl addi 0 s\nmexpr\naccelerate (sum [1, 2, 3])"), @r"
        error[E0402] 3:1-3:27: The accelerate expression does not use any parallel keywords. This is not allowed.
          3:1-3:27: no parallel keyword is used here or in the functions it calls
          = use `map`, `map2`, `reduce`, `flatten` or a histogram's `foldl` (one that updates its sequence accumulator at a computed index with `addi`, `addf`, `muli`, `mulf`, `maxi` or `mini`) (Futhark backend), or `loop` (CUDA backend); without one, remove `accelerate`
        accelerate1 at 3:1-3:27: none (no parallel keyword)
          returns: Int
          functions: sum
        ");
}

#[test]
fn keywords_of_both_backends() {
    let src = "let t = tensorCreateCArrayInt [3] (lam idx. 0)\nlet fill = lam s. loop (length s) (lam i. tensorSetExn t [i] (get s i))\nmexpr\naccelerate (fill (map (lam x. addi x 1) [1, 2, 3]))";
    assert_snapshot!(check(src), @r"
        error[E0403] 4:1-4:52: Accelerate expression uses parallel keywords of multiple backends
          4:1-4:52: this accelerate expression
          4:19-4:22: `map` needs the Futhark backend
          2:19-2:23: `loop` needs the CUDA backend
          = an accelerate expression is compiled by one backend: use only Futhark keywords (`map`, `map2`, `reduce`, `flatten`, a histogram's `foldl`) or only CUDA ones (`loop`, `seqLoop`, `seqLoopAcc`, `printFloat`), or split it in two
        accelerate1 at 4:1-4:52: none (keywords of both backends)
          why: accelerate1 (4:1-4:52) -> `map` at 4:19-4:22
          why: accelerate1 (4:1-4:52) -> fill (2:5-2:9) -> `loop` at 2:19-2:23
          t : Tensor[Int] (copied in)
          returns: ()
          functions: lambda, fill, lambda
        ");
}

#[test]
fn futhark_recursion_without_a_fold() {
    let src = "recursive let sumTo = lam n. if eqi n 0 then 0 else addi n (sumTo (subi n 1)) end\nmexpr\naccelerate (map sumTo [1, 2, 3])";
    assert_snapshot!(check(src), @r"
        error[E0414] 1:15-1:20: Futhark backend: recursive functions are not supported
          1:15-1:20: `sumTo` calls itself
          = write the recursion with `map`, `map2`, `reduce` or `foldl`
          = this code is accelerated with the Futhark backend, which does not support it
        accelerate1 at 3:1-3:33: Futhark
          why: accelerate1 (3:1-3:33) -> `map` at 3:13-3:16
          returns: [Int]
          functions: sumTo
        ");
}

#[test]
fn futhark_a_function_in_a_record() {
    assert_snapshot!(check("mexpr\naccelerate (map (lam x. let r = {f = lam y. addi y x} in r.f 1) [1, 2])"), @r"
        error[E0411] 2:33-2:54: Futhark backend: records containing functions are not supported
          2:33-2:54: this has type `{f : Int -> Int}`
          = pass the data the function needs instead of the function, or call it directly
          = this code is accelerated with the Futhark backend, which does not support it
        accelerate1 at 2:1-2:72: Futhark
          why: accelerate1 (2:1-2:72) -> `map` at 2:13-2:16
          returns: [Int]
          functions: lambda, lambda
        ");
}

#[test]
fn futhark_a_float_fold_is_not_reordered() {
    let src = "recursive let sumF = lam s. if null s then 0.0 else addf (head s) (sumF (tail s)) end\nmexpr\naccelerate (map (lam x. x) [sumF [0.1, 0.2]])";
    assert_snapshot!(check(src), @r"
        error[E0414] 1:15-1:19: Futhark backend: recursive functions are not supported
          1:15-1:19: `sumF` calls itself
          = write the recursion with `map`, `map2`, `reduce` or `foldl`
          = this code is accelerated with the Futhark backend, which does not support it
        accelerate1 at 3:1-3:46: Futhark
          why: accelerate1 (3:1-3:46) -> `map` at 3:13-3:16
          returns: [Float]
          functions: sumF, lambda
        ");
}

#[test]
fn cuda_sequences_are_not_created_on_the_gpu() {
    let src = "let t = tensorCreateCArrayInt [4] (lam idx. 0)\nmexpr\naccelerate (loop 4 (lam i. tensorSetExn t [i] (length (create 3 (lam j. j)))))";
    assert_snapshot!(check(src), @r"
        error[E0423] 3:56-3:62: CUDA backend: the built-in `create` is not supported
          3:56-3:62: not available in CUDA code
          = sequences cannot be created on the GPU; create them before `accelerate`
          = this code is accelerated with the CUDA backend, which does not support it
        accelerate1 at 3:1-3:79: CUDA
          why: accelerate1 (3:1-3:79) -> `loop` at 3:13-3:17
          t : Tensor[Int] (copied in)
          returns: ()
          functions: lambda, lambda
        ");
}

#[test]
fn cuda_a_function_chosen_at_run_time() {
    let src = "let t = tensorCreateCArrayInt [4] (lam idx. 0)\nlet twice = lam f : Int -> Int. lam x. f (f x)\nmexpr\naccelerate (loop 4 (lam i.\n  let g = if gti i 2 then addi 1 else addi 2 in\n  tensorSetExn t [i] (twice g i)))";
    assert_snapshot!(check(src), @r"
        error[E0425] 2:5-2:10: CUDA backend: the function `twice` takes a function as a parameter, which is not supported
          2:5-2:10: a parameter has type `Int -> Int`
          = higher-order functions cannot run on the GPU; call the function directly
          = this code is accelerated with the CUDA backend, which does not support it
        error[E0425] 5:7-5:8: CUDA backend: functions must be defined using explicit lambdas, using one lambda per parameter
          5:7-5:8: `g` has type `Int -> Int` but 0 lambda(s)
          = write the function as `lam x. lam y. ...`, one `lam` per parameter
          = this code is accelerated with the CUDA backend, which does not support it
        error[E0426] 5:11-5:45: CUDA backend: the result of a conditional cannot be a function
          5:11-5:45: this conditional has type `Int -> Int`
          = apply the function in each branch instead
          = this code is accelerated with the CUDA backend, which does not support it
        error[E0424] 5:27-5:33: CUDA backend: return values of function type are not supported
          5:27-5:33: this partial application has type `Int -> Int`
          = apply the function to all its arguments, or pass it only to `loop`, `seqLoop`, `seqLoopAcc` or `foldl`
          = this code is accelerated with the CUDA backend, which does not support it
        error[E0424] 5:39-5:45: CUDA backend: return values of function type are not supported
          5:39-5:45: this partial application has type `Int -> Int`
          = apply the function to all its arguments, or pass it only to `loop`, `seqLoop`, `seqLoopAcc` or `foldl`
          = this code is accelerated with the CUDA backend, which does not support it
        accelerate1 at 4:1-6:35: CUDA
          why: accelerate1 (4:1-6:35) -> `loop` at 4:13-4:17
          t : Tensor[Int] (copied in)
          returns: ()
          functions: twice, lambda
        ");
}

#[test]
fn cuda_a_tensor_of_bool() {
    let src = "let flags = tensorCreateDense [2] (lam idx. true)\nmexpr\naccelerate (loop 2 (lam i. tensorSetExn flags [i] false))";
    assert_snapshot!(check(src), @r"
        error[E0428] 3:41-3:46: CUDA backend: `flags` of type `Tensor[Bool]` cannot be passed to accelerated code
          3:41-3:46: `Tensor[Bool]` cannot cross into CUDA code
          = only scalars, records, sequences, tensors of Int or Float, and variant types that do not contain themselves can cross into CUDA code
          = this code is accelerated with the CUDA backend, which does not support it
        accelerate1 at 3:1-3:58: CUDA
          why: accelerate1 (3:1-3:58) -> `loop` at 3:13-3:17
          flags : Tensor[Bool] (copied in)
          returns: ()
          functions: lambda
        ");
}
