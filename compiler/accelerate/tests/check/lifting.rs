//! What the passes make of a program: the lifted program (each
//! `accelerate` a binding of its own, what it captures its parameters)
//! and each backend's rewrites.

use crate::printed;
use insta::assert_snapshot;

#[test]
fn an_accelerate_becomes_a_binding_of_what_it_captures() {
    let src = "mexpr\nlet k = 2 in\nlet s = [1, 2] in\naccelerate (map (lam x. muli x k) s)";
    assert_snapshot!(printed(src, |a| &a.lifted), @r"
        let k =
          2
        let s =
          [1, 2]
        let lambda =
          lam k_1.
            lam x.
              muli x k_1
        let accelerate1 =
          lam k_2 : Int.
            lam s_1 : [Int].
              accelerate (map (lambda k_2) s_1)
        mexpr
        accelerate1 k s
        ");
}

#[test]
fn local_functions_are_lifted() {
    let src = "mexpr\nlet k = 2 in\nlet scale = lam x. muli x k in\naccelerate (map scale [1, 2])";
    assert_snapshot!(printed(src, |a| &a.lifted), @r"
        let k =
          2
        let scale =
          lam k_1.
            lam x.
              muli x k_1
        let accelerate1 =
          lam k_2 : Int.
            accelerate (map (scale k_2) [1, 2])
        mexpr
        accelerate1 k
        ");
}

#[test]
fn the_extracted_program_holds_what_accelerate_uses() {
    let src = "let square = lam x. muli x x\nlet unused = lam x. x\nmexpr\naccelerate (map square [1, 2])";
    assert_snapshot!(printed(src, |a| &a.extracted), @r"
        let square =
          lam x.
            muli x x
        let accelerate1 =
          lam _ : Int.
            accelerate (map square [1, 2])
        ");
}

#[test]
fn futhark_a_recursion_over_a_sequence_becomes_a_fold() {
    let src = "recursive let sum = lam s. if null s then 0 else addi (head s) (sum (tail s)) end\nmexpr\naccelerate (map sum [[1, 2], [3]])";
    assert_snapshot!(printed(src, |a| &a.futhark), @r"
        let sum =
          lam s.
            foldl (lam acc.
              lam x.
                addi acc x) 0 s
        let accelerate1 =
          lam _ : Int.
            accelerate (let t =
              let t_1 =
                [1, 2] in
              let t_2 =
                [3] in
              [t_1, t_2] in
            map sum t)
        ");
}
