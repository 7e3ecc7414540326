//! What the type checker infers for programs it accepts.

use crate::types;
use insta::assert_snapshot;

#[test]
fn let_bound_functions_are_polymorphic() {
    assert_snapshot!(types("let id = lam x. x\nlet pair = (id 1, id 'c')\nmexpr pair"), @r"
        id : all a. a -> a
        pair : (Int, Char)
        mexpr : (Int, Char)
        ");
}

#[test]
fn higher_order_functions() {
    assert_snapshot!(types("let compose = lam f. lam g. lam x. f (g x)\nlet twice = lam f. lam x. f (f x)\nmexpr twice (addi 1) 0"), @r"
        compose : all a. all b. all c. (a -> b) -> (c -> a) -> c -> b
        twice : all a. (a -> a) -> a -> a
        mexpr : Int
        ");
}

#[test]
fn records_are_open_in_projections() {
    assert_snapshot!(types("let getX = lam r. r.x\nlet update = lam r. {r with x = 1}\nmexpr getX {x = 1, y = 'c'}"), @r"
        getX : all a :: {x : b}. all b. a -> b
        update : all a :: {x : Int}. a -> a
        mexpr : Int
        ");
}

#[test]
fn tuples_and_patterns() {
    assert_snapshot!(types("let swap = lam p. match p with (a, b) then (b, a) else never\nmexpr swap (1, \"one\")"), @r"
        swap : all a :: {0 : b, 1 : c}. all b. all c. a -> (c, b)
        mexpr : (String, Int)
        ");
}

#[test]
fn recursive_bindings_are_monomorphic_in_their_group() {
    let src = "recursive\n  let len = lam s. if null s then 0 else addi 1 (len (tail s))\n  let both = lam a. lam b. (len a, len b)\nend\nmexpr both [1] \"ab\"";
    assert_snapshot!(types(src), @r"
        error[E0301] 5:16-5:20: expected `[Int]`, found `String`
          5:16-5:20: this has type `String`
        ---
        len : all a. [a] -> Int
        both : all a. [a] -> [a] -> (Int, Int)
        mexpr : (Int, Int)
        ");
}

#[test]
fn polymorphic_variants() {
    let src = "type Option a\ncon Some : all a. a -> Option a\ncon None : all a. () -> Option a\nlet optMap = lam f. lam o. match o with Some x then Some (f x) else None ()\nmexpr optMap (addi 1) (Some 2)";
    assert_snapshot!(types(src), @r"
        optMap : all a. all b. (a -> b) -> Option a -> Option b
        mexpr : Option Int
        ");
}

#[test]
fn an_annotation_with_a_type_variable() {
    assert_snapshot!(types("let ann : all a. [a] -> Int = lam s. length s\nmexpr ann [1.]"), @r"
        ann : all a. [a] -> Int
        mexpr : Int
        ");
}

#[test]
fn the_value_restriction() {
    assert_snapshot!(types("let cell = ref []\nlet set = modref cell [1]\nmexpr deref cell"), @r"
        cell : Ref [Int]
        set : ()
        mexpr : [Int]
        ");
}

#[test]
fn partial_application_of_builtins() {
    assert_snapshot!(types("let fold = foldl (lam acc. lam x. addi acc x) 0\nlet partial = map (lam x. x)\nmexpr fold [1, 2]"), @r"
        fold : [Int] -> Int
        partial : [?6] -> [?6]
        mexpr : Int
        ");
}

#[test]
fn tensors() {
    assert_snapshot!(types("let t = tensorCreateCArrayFloat [2, 2] (lam idx. 0.)\nmexpr tensorGetExn t [0, 1]"), @r"
        t : Tensor[Float]
        mexpr : Float
        ");
}

#[test]
fn variables_of_higher_kind_unify_as_curried_applications() {
    // `s LClosed RClosed` against `t RClosed`: the last arguments pair up
    // and `t` is `s LClosed`; against `Op Int LClosed RClosed`, `s` is
    // `Op Int`, the named type partially applied.
    let src = "type LClosed\ntype RClosed\ntype T s\ntype U t\ntype Op a l r\n\
               con C1 : all s. s LClosed RClosed -> T s\ncon C2 : all t. t RClosed -> U t\n\
               con K : all a. a -> Op a LClosed RClosed\n\
               let both = lam x. (C1 x, C2 x)\nlet op = both (K 1)\nmexpr op";
    assert_snapshot!(types(src), @r"
        both : all a. a LClosed RClosed -> (T a, U (a LClosed))
        op : (T (Op Int), U (Op Int LClosed))
        mexpr : (T (Op Int), U (Op Int LClosed))
        ");
}
