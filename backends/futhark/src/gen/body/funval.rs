//! Function values: a keyword's function reference as a Futhark lambda
//! or partial application, counted where it uses the channel, and its
//! application (consuming where its callee consumes).

use super::*;

impl Writer<'_> {
    pub(super) fn fun_counts(&self, f: &FunRef) -> bool {
        self.counting && crate::gen::channel::fun_uses(f, &self.counted)
    }

    /// `foldl f init seq` for an `f` that counts: a loop carrying the
    /// count (`(value, count)`); `consumes`: the loop consumes its
    /// accumulator (`init` may be consumed).
    pub(super) fn counted_fold(&mut self, f: &FunRef, init: &str, seq: &Atom, consumes: bool) -> String {
        let [acc, c, x, a, k] = ["acc", "c", "x", "a", "k"].map(|n| self.locals.fresh(n));
        let body = self.apply_consuming(f, &[acc.clone(), x.clone()], &[consumes]);
        self.shape = Shape::Pair;
        self.locate_next();
        format!(
            "loop ({acc}, {c}) = ({init}, 0i64) for {x} in {} do let ({a}, {k}) = {body} in ({a}, {} {c} {k})",
            self.atom(seq),
            crate::gen::channel::JOIN
        )
    }

    /// A function reference as a Futhark function value.
    pub(super) fn funval(&mut self, f: &FunRef) -> String {
        match f.callee {
            // Futhark does not pass a function that consumes its
            // arguments: a lambda that copies them calls it.
            Callee::Function(id) if self.unique.consumes(id) => {
                let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
                let body = self.apply(f, &params);
                format!("(\\{} -> {body})", params.join(" "))
            }
            Callee::Function(id) => {
                let name = self.functions.get(&id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                if f.bound.is_empty() {
                    name
                } else {
                    let bound: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
                    format!("({name} {})", bound.join(" "))
                }
            }
            Callee::Builtin(_) | Callee::Math(_) => {
                let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
                let body = self.apply(f, &params);
                format!("(\\{} -> {body})", params.join(" "))
            }
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// A function reference as the function of a `map`: one that returns
    /// arrays is coerced to the sizes of its result on the first elements
    /// (`firsts`, evaluated only when `guard`, the length mapped over, is
    /// not zero), since Futhark's `map` needs the sizes of its rows before
    /// it runs them; rows of other sizes fail when the program runs.
    pub(super) fn sized_funval(&mut self, f: &FunRef, firsts: &[String], guard: &str, depth: usize) -> String {
        if !has_seq(&f.result) {
            return self.funval(f);
        }
        let counts = self.fun_counts(f);
        let r = self.locals.fresh("r");
        let first = self.apply(f, firsts);
        // The sizes come from a run whose utests are not counted.
        let first = if counts { format!("({first}).0") } else { first };
        let mut lets = Vec::new();
        let mut sizes = Vec::new();
        let t =
            self.sized(&f.result.clone(), &[(r.clone(), None)], String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        let names: Vec<String> = sizes.iter().map(|s| s.name.clone()).collect();
        let tuple = |xs: Vec<String>| if xs.len() == 1 { xs[0].clone() } else { format!("({})", xs.join(", ")) };
        self.line(
            depth,
            &format!(
                "let {} = if {guard} == 0 then {} else let {r} = {first} {} in {}",
                tuple(names.clone()),
                tuple(names.iter().map(|_| "0i64".to_string()).collect()),
                lets.join(" "),
                tuple(names)
            ),
        );
        self.fitted_funval(f, &t, &sizes, IRREGULAR)
    }

    /// A function reference whose results are fitted to type `t`, whose
    /// sizes are `sizes`: where the statement has a channel, a result of
    /// other sizes fails (`what`) and is replaced by zeros, beside the
    /// function's own channel (the value is then a pair: `Shape::Pairs`).
    pub(super) fn fitted_funval(&mut self, f: &FunRef, t: &str, sizes: &[Size], what: &str) -> String {
        let counts = self.fun_counts(f);
        let params: Vec<String> = (0..f.params.len()).map(|_| self.locals.fresh("p")).collect();
        let body = self.apply(f, &params);
        let (v, c) = (self.locals.fresh("v"), self.locals.fresh("c"));
        let params = params.join(" ");
        if !self.counting {
            self.mark(Some(what));
            return format!("(\\{params} -> {})", fit(&body, t));
        }
        // Each result's sizes are checked against the first's: the
        // channel of the function (where it has one), joined with this
        // check's (`check`), beside the result.
        self.failures.push((self.span, what.to_string()));
        let id = self.failures.len();
        let ok = self.locals.fresh("ok");
        let check = format!("(if {ok} then 0i64 else -{id}i64)");
        let channel = if counts { format!("({} {c} {check})", crate::gen::channel::JOIN) } else { check };
        let value = if counts { format!("let ({v}, {c}) = {body}") } else { format!("let {v} = {body}") };
        self.locate_as(what);
        self.shape = Shape::Pairs;
        // A result of other sizes is replaced by zeros of the first's
        // (the channel says it failed) rather than coerced: Futhark hoists
        // a body that does not use its parameter out of the `map`, so a
        // coercion that fails would fail even where the map is empty.
        // `opaque`: Futhark 0.22.7's inliner fails on a coercion of a
        // result whose size it knows ("Type error after pass 'Inline
        // conservatively'", FUTHARK_BUGS.md).
        let zero = sized_zero(&f.result, &mut sizes.iter());
        format!(
            "(\\{params} -> {value} let {ok} = {} in (if {ok} then {} else {zero}, {channel}))",
            same_sizes(&v, sizes),
            fit(&format!("opaque {v}"), t)
        )
    }

    /// A function reference applied to more arguments (copied where
    /// the function consumes them).
    pub(super) fn apply(&mut self, f: &FunRef, args: &[String]) -> String {
        self.apply_consuming(f, args, &[])
    }

    /// `apply`, where `direct[k]` says that `args[k]` may be consumed as
    /// it is (a loop's accumulator). The bound arguments are the
    /// caller's variables, used again at every application: copied.
    pub(super) fn apply_consuming(&mut self, f: &FunRef, args: &[String], direct: &[bool]) -> String {
        let mut all: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
        all.extend(args.iter().cloned());
        match f.callee {
            Callee::Function(id) => {
                let name = self.functions.get(&id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                let bound = f.bound.len();
                let all: Vec<String> = all
                    .into_iter()
                    .enumerate()
                    .map(|(k, a)| {
                        let keep = k >= bound && direct.get(k - bound).copied().unwrap_or(false);
                        if self.unique.param(id, k) && !keep {
                            format!("(copy {a})")
                        } else {
                            a
                        }
                    })
                    .collect();
                format!("({name} {})", all.join(" "))
            }
            Callee::Builtin(b) => {
                let result = f.result.clone();
                self.prim(b, &all, &result)
            }
            Callee::Math(m) => math(m, &all),
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }
}
