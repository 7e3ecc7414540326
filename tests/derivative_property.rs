//! Property: for random compositions of the operations derivatives
//! support, reverse and forward mode agree, by the dot-product identity
//! `<vjp f x dy, dx> = <dy, jvp f x dx>` (to 1e-9 relative).
//!
//! Each program has a few functions from three floats (a sequence) to two
//! (a sequence), built from float arithmetic, the math externals (their
//! arguments kept in their domains), `if` on a comparison, `foldl`,
//! `map`, `create`, records and tuples, local closures, and points and
//! directions at random; it prints both sides of the identity per
//! function. They run in the interpreter (`pmx run --target interp`).

#[path = "support/choices.rs"]
mod choices;
#[path = "support/process.rs"]
mod process;

use choices::Choices;
use process::pmx;
use proptest::prelude::*;

/// A float expression over `x0`, `x1`, `x2` (and the variables in
/// `scope`).
fn expr(c: &mut Choices, depth: u32, scope: &[String]) -> String {
    if depth == 0 {
        return match c.pick(3) {
            0 if !scope.is_empty() => scope[c.pick(scope.len())].clone(),
            1 => c.float(),
            _ => format!("x{}", c.pick(3)),
        };
    }
    let d = depth - 1;
    let sub = |c: &mut Choices| expr(c, d, scope);
    match c.pick(16) {
        0 => format!("(addf {} {})", sub(c), sub(c)),
        1 => format!("(subf {} {})", sub(c), sub(c)),
        2 => format!("(mulf {} {})", sub(c), sub(c)),
        // Denominators kept away from zero.
        3 => {
            let (a, b) = (sub(c), sub(c));
            format!("(divf {a} (addf 1.5 (mulf {b} {b})))")
        }
        4 => format!("(negf {})", sub(c)),
        5 => format!("(sin {})", sub(c)),
        6 => format!("(cos {})", sub(c)),
        7 => format!("(exp (sin {}))", sub(c)),
        8 => {
            let a = sub(c);
            format!("(log (addf 1. (mulf {a} {a})))")
        }
        9 => {
            let a = sub(c);
            format!("(sqrt (addf 0.5 (mulf {a} {a})))")
        }
        10 => format!("(pow (addf 2. (sin {})) {})", sub(c), c.float()),
        11 => format!("(atan {})", sub(c)),
        12 => format!("(if ltf {} {} then {} else {})", sub(c), sub(c), sub(c), sub(c)),
        13 => {
            let op = ["addf", "mulf", "subf"][c.pick(3)];
            let mut inner = scope.to_vec();
            inner.extend(["a".to_string(), "x".to_string()]);
            let body = expr(c, d, &inner);
            format!("(foldl (lam a. lam x. {op} a {body}) {} [{}, {}])", sub(c), sub(c), sub(c))
        }
        14 => {
            let mut inner = scope.to_vec();
            inner.push("v".to_string());
            let body = expr(c, d, &inner);
            let lens = c.pick(3) + 1;
            let items: Vec<String> = (0..lens).map(|_| sub(c)).collect();
            format!("(foldl addf 0. (map (lam v. {body}) [{}]))", items.join(", "))
        }
        _ => {
            // A record and a tuple, a local closure and `create`.
            let (a, b) = (sub(c), sub(c));
            let mut inner = scope.to_vec();
            inner.push("y".to_string());
            let g = expr(c, d, &inner);
            format!(
                "(let r = {{p = {a}, q = ({b}, 2.)}} in let g = lam y. {g} in \
                 foldl addf (g r.p) (create 2 (lam i. mulf (int2float i) (g r.q.0))))"
            )
        }
    }
}

fn program(c: &mut Choices, functions: usize) -> String {
    let mut s = String::from("include \"math.mc\"\ninclude \"string.mc\"\n\n");
    s += "let dot = lam a : [Float]. lam b : [Float]. foldl addf 0. (zipWith mulf a b)\n";
    for k in 0..functions {
        let depth = 1 + c.pick(4) as u32;
        let (e0, e1) = (expr(c, depth, &[]), expr(c, depth, &[]));
        s += &format!(
            "let f{k} = lam xs : [Float]. let x0 = get xs 0 in let x1 = get xs 1 in let x2 = get xs 2 in\n  [{e0},\n   {e1}]\n"
        );
    }
    s += "mexpr\n";
    for k in 0..functions {
        let x: Vec<String> = (0..3).map(|_| c.float()).collect();
        let dx: Vec<String> = (0..3).map(|_| c.float()).collect();
        let dy: Vec<String> = (0..2).map(|_| c.float()).collect();
        s += &format!(
            "let x = [{}] in let dx = [{}] in let dy = [{}] in\n\
             print (join [float2string (dot (vjp f{k} x dy) dx), \" \", float2string (dot dy (jvp f{k} x dx)), \"\\n\"]);\n",
            x.join(", "),
            dx.join(", "),
            dy.join(", ")
        );
    }
    s += "()\n";
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn reverse_mode_is_the_transpose_of_forward_mode(values in proptest::collection::vec(any::<u32>(), 600)) {
        let mut c = Choices::new(values);
        let source = program(&mut c, 4);
        let dir = std::env::temp_dir().join(format!("pmx-derivative-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("identity.mc");
        std::fs::write(&file, &source).expect("writable");
        let (code, out, err) = pmx(&["run", "--target", "interp"], &file);
        prop_assert_eq!(code, 0, "the program runs: {}\n{}", err, source);
        for (k, line) in out.lines().enumerate() {
            let parts: Vec<f64> = line.split(' ').map(|p| p.parse().expect("a float")).collect();
            let (a, b) = (parts[0], parts[1]);
            let tol = 1e-9 * a.abs().max(b.abs()).max(1.0);
            prop_assert!((a - b).abs() <= tol, "f{}: vjp side {} but jvp side {}\n{}", k, a, b, source);
        }
        prop_assert_eq!(out.lines().count(), 4, "{}", out);
    }
}
