//! The generated MExpr both benchmarks measure (`frontend.rs`, `lsp.rs`).

/// About ten lines of typical MExpr: lets, records, sequence patterns,
/// higher-order calls, a polymorphic helper and a utest. If asked, every
/// tenth unit also holds an accelerate expression (one per about 100
/// lines), alternating between the two backends.
pub fn unit(i: usize, accelerate: bool) -> String {
    let prev = if i == 0 { "lam x. lam s. x".to_string() } else { format!("f{}", i - 1) };
    let mut u = format!(
        "let f{i} = lam x : Int. lam s : [Int].
  let y = addi x {i} in
  let r = {{a = y, b = [x, y]}} in
  match s with [h] ++ t then
    addi h (muli r.a (length r.b))
  else
    foldl (lam acc. lam e. addi acc e) y s
let g{i} = lam v. ({prev} v [v, 1], map (lam z. (z, v)) [1, 2])
let pair{i} = lam a. lam b. if lti a b then (a, b) else (b, a)
utest f{i} 1 [] with {n}
",
        n = i + 1
    );
    if accelerate && i.is_multiple_of(10) {
        if i.is_multiple_of(20) {
            u.push_str(&format!("let acc{i} = lam s : [Int]. accelerate (reduce addi 0 (map (lam x. f{i} x s) s))\n"));
        } else {
            u.push_str(&format!(
                "let accLoop{i} = lam t : Tensor[Int]. lam n : Int.\n  accelerate (loop n (lam j. tensorSetExn t [j] (addi j {i})))\n"
            ));
        }
    }
    u
}
