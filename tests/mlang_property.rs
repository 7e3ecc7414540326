//! Property: a random MLang program and the MExpr a person would write by
//! hand for the same meaning print the same.
//!
//! The MLang program has a few fragments: the first defines a `syn` and
//! two `sem`s (one with a parameter), each later one extends one or more
//! earlier ones (`lang F3 = F1 + F2`), may add constructors to the `syn`,
//! and adds cases over the constructors it sees, written in a random
//! order: literal and nested patterns, a general one per constructor, a
//! catch-all; case bodies call both semantic functions on the parts.
//! `use F in ..` applies a language's functions to values built from the
//! constructors that language covers. The hand-written program has one
//! variant type, and per language used one recursive function per sem
//! with that language's cases, most specific first (Miking's order,
//! known here from how the cases were made: literal and nested patterns
//! of a constructor, then its general pattern, the catch-all last), so
//! that composition, case order, open recursion and scoping are compared
//! with what they mean, not with how pmx desugars them. Fragments name
//! `size`'s parameter `k` or `p` at random (each case sees its own
//! fragment's name). Both run in the interpreter (`pmx run --target
//! interp`).

#[path = "support/choices.rs"]
mod choices;
#[path = "support/process.rs"]
mod process;

use choices::Choices;
use process::pmx;
use proptest::prelude::*;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Carries {
    Int,
    /// `(T, T)`
    Pair,
}

#[derive(Debug)]
struct Con {
    carries: Carries,
    /// The fragment that adds it.
    frag: usize,
}

/// The two semantic functions: `eval` matches on its argument alone,
/// `size` takes `k : Int` first.
const SEMS: [&str; 2] = ["eval", "size"];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Pat {
    /// `_`
    Any,
    /// `K n` or `K (a, b)`, or `K _` where `wild`.
    General { con: usize, wild: bool },
    /// `K 3`
    Lit(usize, i64),
    /// `K (J m, b)`: a pair whose first part is the Int constructor `J`.
    Nested(usize, usize),
}

/// An Int expression in a case's body.
#[derive(Debug)]
enum E {
    Lit(i64),
    Var(&'static str),
    /// Semantic function `SEMS[i]` applied to a part.
    Call(usize, &'static str),
    Op(&'static str, Box<E>, Box<E>),
    If(Box<E>, Box<E>, Box<E>, Box<E>),
}

#[derive(Debug)]
struct Case {
    sem: usize,
    pat: Pat,
    body: E,
    frag: usize,
    /// Where it is written among its fragment's cases of its sem.
    key: usize,
}

#[derive(Debug)]
struct Program {
    /// Each fragment's direct parents.
    parents: Vec<Vec<usize>>,
    /// Each fragment and all it extends, itself included.
    visible: Vec<Vec<bool>>,
    cons: Vec<Con>,
    cases: Vec<Case>,
    /// Whether the first fragment declares `eval`'s type.
    signature: bool,
    /// What each fragment calls `size`'s parameter (fragments may name it
    /// differently: Miking's rule).
    param: Vec<&'static str>,
    /// `use F in [eval t, size 0 t]` for these languages and values.
    uses: Vec<(usize, String)>,
}

fn expr(c: &mut Choices, vars: &[&'static str], parts: &[&'static str], depth: u32) -> E {
    let leaves = 1 + vars.len() + 2 * parts.len();
    if depth == 0 || !c.chance() {
        let i = c.pick(leaves);
        return if i == 0 {
            E::Lit(c.pick(10) as i64)
        } else if i <= vars.len() {
            E::Var(vars[i - 1])
        } else {
            let i = i - 1 - vars.len();
            E::Call(i % 2, parts[i / 2])
        };
    }
    let sub = |c: &mut Choices| Box::new(expr(c, vars, parts, depth - 1));
    match c.pick(4) {
        0 => E::Op("addi", sub(c), sub(c)),
        1 => E::Op("subi", sub(c), sub(c)),
        2 => E::Op("muli", sub(c), sub(c)),
        _ => E::If(sub(c), sub(c), sub(c), sub(c)),
    }
}

/// Renders a body; `lang` names the hand-written functions (`eval_F2`),
/// `None` writes the MLang calls (`eval`); `k` is `size`'s parameter.
fn render(e: &E, sem: usize, lang: Option<usize>, k: &str) -> String {
    let name = |s: usize| match lang {
        Some(l) => format!("{}_F{l}", SEMS[s]),
        None => SEMS[s].to_string(),
    };
    match e {
        E::Lit(i) => i.to_string(),
        E::Var("k") => k.to_string(),
        E::Var(v) => v.to_string(),
        E::Call(0, part) => format!("({} {part})", name(0)),
        E::Call(_, part) => {
            let k = if sem == 1 { format!("(addi {k} 1)") } else { "1".into() };
            format!("({} {k} {part})", name(1))
        }
        E::Op(op, a, b) => format!("({op} {} {})", render(a, sem, lang, k), render(b, sem, lang, k)),
        E::If(a, b, t, f) => format!(
            "(if lti {} {} then {} else {})",
            render(a, sem, lang, k),
            render(b, sem, lang, k),
            render(t, sem, lang, k),
            render(f, sem, lang, k)
        ),
    }
}

fn pattern(p: Pat, cons: &[Con]) -> String {
    match p {
        Pat::Any => "_".into(),
        Pat::General { con, wild: true } => format!("K{con} _"),
        Pat::General { con, .. } if cons[con].carries == Carries::Int => format!("K{con} n"),
        Pat::General { con, .. } => format!("K{con} (a, b)"),
        Pat::Lit(con, v) => format!("K{con} {v}"),
        Pat::Nested(con, inner) => format!("K{con} (K{inner} m, b)"),
    }
}

/// The variables and parts (values of the syn) a pattern binds.
fn binders(p: Pat, cons: &[Con]) -> (Vec<&'static str>, Vec<&'static str>) {
    match p {
        Pat::General { con, wild: false } if cons[con].carries == Carries::Int => (vec!["n"], vec![]),
        Pat::General { wild: false, .. } => (vec![], vec!["a", "b"]),
        Pat::Nested(..) => (vec!["m"], vec!["b"]),
        _ => (vec![], vec![]),
    }
}

fn generate(values: Vec<u32>) -> Program {
    let c = &mut Choices::new(values);
    let frags = 2 + c.pick(4);
    let mut parents = vec![vec![]];
    let mut visible = vec![(0..frags).map(|g| g == 0).collect::<Vec<bool>>()];
    for f in 1..frags {
        // A non-empty set of earlier fragments.
        let mut ps: Vec<usize> = (0..f).filter(|_| c.chance()).collect();
        if ps.is_empty() {
            ps.push(c.pick(f));
        }
        let mut seen = vec![false; frags];
        seen[f] = true;
        for &p in &ps {
            for (i, v) in visible[p].iter().enumerate() {
                seen[i] |= v;
            }
        }
        parents.push(ps);
        visible.push(seen);
    }
    let sees = |f: usize, g: usize| visible[f][g];

    let mut cons = vec![Con { carries: Carries::Int, frag: 0 }];
    for f in 0..frags {
        for _ in 0..c.pick(3) {
            let carries = if c.chance() { Carries::Pair } else { Carries::Int };
            cons.push(Con { carries, frag: f });
        }
    }

    let mut cases = Vec::new();
    let mut add = |c: &mut Choices, sem: usize, pat: Pat, frag: usize| {
        let (mut vars, parts) = binders(pat, &cons);
        if sem == 1 {
            vars.push("k");
        }
        let body = expr(c, &vars, &parts, 2);
        let key = c.pick(100);
        cases.push(Case { sem, pat, body, frag, key });
    };
    // A fragment that sees all of `cs`, picked at random.
    let place = |c: &mut Choices, cs: &[usize]| {
        let can: Vec<usize> = (0..frags).filter(|&f| cs.iter().all(|&k| sees(f, cons[k].frag))).collect();
        can[c.pick(can.len())]
    };
    for sem in 0..SEMS.len() {
        for k in 0..cons.len() {
            if k == 0 || c.pick(4) > 0 {
                let frag = if k == 0 { 0 } else { place(c, &[k]) };
                let wild = c.chance();
                add(c, sem, Pat::General { con: k, wild }, frag);
            }
            match cons[k].carries {
                Carries::Int => {
                    let first = c.pick(5) as i64;
                    for v in (0..c.pick(3)).map(|i| first + i as i64) {
                        let frag = place(c, &[k]);
                        add(c, sem, Pat::Lit(k, v), frag);
                    }
                }
                Carries::Pair => {
                    // Int constructors that some fragment sees together with this one.
                    let ints: Vec<usize> = (0..cons.len())
                        .filter(|&i| cons[i].carries == Carries::Int)
                        .filter(|&i| (0..frags).any(|f| sees(f, cons[k].frag) && sees(f, cons[i].frag)))
                        .collect();
                    if c.chance() {
                        let inner = ints[c.pick(ints.len())];
                        let frag = place(c, &[k, inner]);
                        add(c, sem, Pat::Nested(k, inner), frag);
                    }
                }
            }
        }
        if c.chance() {
            let frag = c.pick(frags);
            add(c, sem, Pat::Any, frag);
        }
    }

    // The constructors whose every value `f`'s functions handle.
    let covered = |f: usize| -> Vec<usize> {
        let has =
            |sem: usize, p: &dyn Fn(Pat) -> bool| cases.iter().any(|x| x.sem == sem && sees(f, x.frag) && p(x.pat));
        (0..cons.len())
            .filter(|&k| sees(f, cons[k].frag))
            .filter(|&k| {
                (0..SEMS.len()).all(|s| has(s, &|p| p == Pat::Any || matches!(p, Pat::General { con, .. } if con == k)))
            })
            .collect()
    };
    fn value(c: &mut Choices, cons: &[Con], ks: &[usize], depth: u32) -> String {
        let pairs: Vec<usize> = ks.iter().copied().filter(|&k| cons[k].carries == Carries::Pair).collect();
        if depth > 0 && !pairs.is_empty() && c.pick(3) > 0 {
            let k = pairs[c.pick(pairs.len())];
            return format!("K{k} ({}, {})", value(c, cons, ks, depth - 1), value(c, cons, ks, depth - 1));
        }
        let ints: Vec<usize> = ks.iter().copied().filter(|&k| cons[k].carries == Carries::Int).collect();
        format!("K{} {}", ints[c.pick(ints.len())], c.pick(7))
    }
    let mut uses = Vec::new();
    for f in (0..frags).rev() {
        if f + 1 == frags || c.chance() {
            let ks = covered(f);
            for _ in 0..1 + c.pick(2) {
                uses.push((f, value(c, &cons, &ks, 3)));
            }
        }
    }
    let signature = c.chance();
    let param = (0..frags).map(|_| if c.chance() { "p" } else { "k" }).collect();
    Program { parents, visible, cons, cases, signature, uses, param }
}

fn carried(k: &Con) -> &'static str {
    match k.carries {
        Carries::Int => "Int",
        Carries::Pair => "(T, T)",
    }
}

fn mlang(p: &Program) -> String {
    let mut out = String::new();
    for (f, parents) in p.parents.iter().enumerate() {
        let ps: Vec<String> = parents.iter().map(|p| format!("F{p}")).collect();
        out += &if ps.is_empty() { format!("lang F{f}\n") } else { format!("lang F{f} = {}\n", ps.join(" + ")) };
        let mine: Vec<usize> = (0..p.cons.len()).filter(|&k| p.cons[k].frag == f).collect();
        if !mine.is_empty() {
            out += "  syn T =\n";
            for k in mine {
                out += &format!("  | K{k} {}\n", carried(&p.cons[k]));
            }
        }
        if f == 0 && p.signature {
            out += "  sem eval : T -> Int\n";
        }
        for (s, name) in SEMS.iter().enumerate() {
            let mut cases: Vec<&Case> = p.cases.iter().filter(|c| c.frag == f && c.sem == s).collect();
            if cases.is_empty() {
                continue;
            }
            cases.sort_by_key(|c| c.key);
            let k = p.param[f];
            out += &format!("  sem {name}{} =\n", if s == 1 { format!(" ({k} : Int)") } else { String::new() });
            for c in cases {
                out += &format!("  | {} -> {}\n", pattern(c.pat, &p.cons), render(&c.body, s, None, k));
            }
        }
        out += "end\n\n";
    }
    let results: Vec<String> =
        p.uses.iter().map(|(f, v)| format!("  use F{f} in [eval ({v}), size 0 ({v})]")).collect();
    out + &format!("mexpr\ndprint [\n{}\n];\nprint \"\\n\"\n", results.join(",\n"))
}

/// How specific a pattern is: more specific ones are tried first.
fn rank(p: Pat) -> usize {
    match p {
        Pat::Lit(..) | Pat::Nested(..) => 0,
        Pat::General { .. } => 1,
        Pat::Any => 2,
    }
}

fn by_hand(p: &Program) -> String {
    let mut out = String::from("type T\n");
    for (k, con) in p.cons.iter().enumerate() {
        out += &format!("con K{k} : {} -> T\n", carried(con));
    }
    let mut langs: Vec<usize> = p.uses.iter().map(|(f, _)| *f).collect();
    langs.dedup();
    for &f in &langs {
        out += "recursive\n";
        for (s, name) in SEMS.iter().enumerate() {
            let mut cases: Vec<&Case> = p.cases.iter().filter(|c| c.sem == s && p.visible[f][c.frag]).collect();
            cases.sort_by_key(|c| rank(c.pat));
            let param = if s == 1 { "lam k. " } else { "" };
            out += &format!("  let {name}_F{f} = {param}lam t.\n");
            for c in cases {
                out += &format!(
                    "    match t with {} then {} else\n",
                    pattern(c.pat, &p.cons),
                    render(&c.body, s, Some(f), "k")
                );
            }
            out += "    never\n";
        }
        out += "end\n\n";
    }
    let results: Vec<String> = p.uses.iter().map(|(f, v)| format!("  [eval_F{f} ({v}), size_F{f} 0 ({v})]")).collect();
    out + &format!("mexpr\ndprint [\n{}\n];\nprint \"\\n\"\n", results.join(",\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn mlang_means_its_hand_desugared_mexpr(values in proptest::collection::vec(any::<u32>(), 1000)) {
        let p = generate(values);
        let (mlang, by_hand) = (mlang(&p), by_hand(&p));
        let dir = std::env::temp_dir().join(format!("pmx-mlang-prop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (a, b) = (dir.join("mlang.mc"), dir.join("by_hand.mc"));
        std::fs::write(&a, &mlang).expect("writable");
        std::fs::write(&b, &by_hand).expect("writable");
        let ours = pmx(&["run", "--target", "interp"], &a);
        prop_assert_eq!(ours.0, 0, "the MLang program runs: {}\n{}", ours.2, mlang);
        let theirs = pmx(&["run", "--target", "interp"], &b);
        prop_assert_eq!(theirs.0, 0, "the hand-written program runs: {}\n{}", theirs.2, by_hand);
        prop_assert_eq!(&ours.1, &theirs.1, "MLang:\n{}\nby hand:\n{}", mlang, by_hand);
    }
}
