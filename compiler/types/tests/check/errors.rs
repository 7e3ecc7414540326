//! Programs the type checker rejects: the error, where, and why. Each
//! definition is used from `mexpr` (an unused one's errors are warnings).

use crate::errors;
use insta::assert_snapshot;

#[test]
fn an_argument_of_the_wrong_type() {
    assert_snapshot!(errors("mexpr addi 1 2."), @r"
        error[E0301] 1:14-1:16: expected `Int`, found `Float`
          1:14-1:16: this has type `Float`
        ");
}

#[test]
fn a_condition_that_is_not_a_bool() {
    assert_snapshot!(errors("mexpr if 1 then 2 else 3"), @r"
        error[E0301] 1:10-1:11: expected `Bool`, found `Int`
          1:10-1:11: this condition has type `Int`
        ");
}

#[test]
fn branches_of_different_types() {
    assert_snapshot!(errors("mexpr if true then 1 else 'c'"), @r"
        error[E0301] 1:27-1:30: expected `Int`, found `Char`
          1:27-1:30: this has type `Char`
          1:20-1:21: the other branch has type `Int`
          = both branches of a conditional must have the same type
        ");
}

#[test]
fn elements_of_different_types() {
    assert_snapshot!(errors("mexpr [1, 2., 3]"), @r"
        error[E0301] 1:11-1:13: expected `Int`, found `Float`
          1:11-1:13: this has type `Float`
          = all elements of a sequence must have the same type
        ");
}

#[test]
fn applying_what_is_not_a_function() {
    assert_snapshot!(errors("mexpr 1 2"), @r"
        error[E0301] 1:7-1:8: expected a function, found `Int`
          1:7-1:8: this has type `Int` and is applied to an argument
          1:9-1:10: the argument
        ");
}

#[test]
fn a_type_that_would_contain_itself() {
    assert_snapshot!(errors("mexpr lam x. x x"), @r"
        error[E0302] 1:14-1:15: infinite type: `?a -> ?b` and `?a` would have to be the same
          1:14-1:15: this would need a type that contains itself
        ");
}

#[test]
fn a_missing_record_field() {
    assert_snapshot!(errors("mexpr (lam r. r.y) {x = 1}"), @r"
        error[E0303] 1:20-1:27: this record has no field `y`
          1:20-1:27: this has type `{x : Int}`
          = the field `y` is required by how the value is used
        ");
}

#[test]
fn an_update_of_what_is_not_a_record() {
    assert_snapshot!(errors("mexpr {1 with x = 2}"), @r"
        error[E0301] 1:15-1:16: expected a record with the field `x`, found `Int`
          1:15-1:16: this has type `Int`
        ");
}

#[test]
fn an_annotation_that_does_not_hold() {
    assert_snapshot!(errors("let i : Int = \"str\"\nmexpr i"), @r"
        error[E0301] 1:15-1:20: expected `Int`, found `String`
          1:15-1:20: this has type `String`
        ");
}

#[test]
fn a_utest_comparing_different_types() {
    assert_snapshot!(errors("utest 1 with \"one\"\nmexpr ()"), @r"
        error[E0301] 1:14-1:19: expected `Int`, found `String`
          1:14-1:19: this has type `String`
          1:7-1:8: the tested expression has type `Int`
          = the two sides of a `utest` must have the same type, or give an equality with `using`
        ");
}

#[test]
fn a_constructor_given_the_wrong_argument() {
    assert_snapshot!(errors("type T\ncon K : Int -> T\nmexpr K 'c'"), @r"
        error[E0301] 3:9-3:12: expected `Int`, found `Char`
          3:9-3:12: this has type `Char`
        ");
}

#[test]
fn a_pattern_of_another_type() {
    assert_snapshot!(errors("mexpr match 1 with \"a\" then 1 else 2"), @r"
        error[E0301] 1:20-1:23: this pattern matches `[?a]`, but the value has type `Int`
          1:20-1:23: a pattern of type `[?a]`
        ");
}

#[test]
fn an_unbound_variable() {
    assert_snapshot!(errors("mexpr addi x 1"), @r"
        error[E0201] 1:12-1:13: unbound variable `x`
          1:12-1:13: no variable named `x` is in scope here
        ");
}

#[test]
fn an_unbound_constructor_and_type() {
    assert_snapshot!(errors("let f : Strng -> Int = lam x. 1\nmexpr f (Nope 1)"), @r"
        error[E0203] 1:9-1:14: unbound type `Strng`
          1:9-1:14: no type named `Strng` is in scope here
        error[E0202] 2:10-2:14: unbound constructor `Nope`
          2:10-2:14: no constructor named `Nope` is in scope here
        ");
}

#[test]
fn a_monomorphic_lambda_parameter_used_at_two_types() {
    assert_snapshot!(errors("mexpr (lam f. (f 1, f 'c')) (lam x. x)"), @r"
        error[E0301] 1:23-1:26: expected `Int`, found `Char`
          1:23-1:26: this has type `Char`
        ");
}

#[test]
fn an_unused_definition_with_an_error_is_a_warning() {
    assert_snapshot!(errors("let a = addi 1 'c'\nmexpr 0"), @r"
        warning[E0301] 1:16-1:19: expected `Int`, found `Char`
          1:16-1:19: this has type `Char`
          = nothing uses `a`: like Miking, pmx leaves out unused definitions, so this does not stop the program
        ");
}
