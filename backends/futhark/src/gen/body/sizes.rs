//! Sizes: naming the sizes of nested sequences, checking that rows have
//! them, and joining and concatenating rows of equal sizes.

use super::*;

impl Writer<'_> {
    /// Names for the sizes of `v` (of type `t`: sequences, records of
    /// them) written as lets; the type `[m1][m2]e` with them, and the
    /// sizes.
    pub(super) fn named_sizes(&mut self, t: &Type, v: &str, depth: usize) -> (String, Vec<Size>) {
        self.sizes_from(t, &[(v.to_string(), None)], depth)
    }

    /// Names for the sizes of the rows (of type `row`) of the sequences
    /// `containers`, taken from the first that has them (an empty
    /// sequence hides its rows' sizes), written as lets; the row type
    /// `[m1][m2]e` with them.
    pub(super) fn row_sizes(
        &mut self,
        row: &Type,
        containers: &[String],
        lets: &mut Vec<String>,
    ) -> (String, Vec<Size>) {
        let candidates: Vec<(String, Option<String>)> =
            containers.iter().map(|c| (format!("{c}[0]"), Some(format!("length {c} > 0")))).collect();
        let mut sizes = Vec::new();
        let t = self.sized(&row.clone(), &candidates, String::new(), &mut Vec::new(), lets, &mut sizes);
        (t, sizes)
    }

    /// Sequences of rows `containers` joined into one: a check that the
    /// rows of each have the sizes of the first row there is (`sizes`),
    /// then the operation (which Futhark checks again, located alike).
    pub(super) fn check_rows(&mut self, containers: &[String], sizes: &[Size], depth: usize) {
        let alike: Vec<String> = containers
            .iter()
            .map(|c| format!("(length {c} == 0 || ({}))", same_sizes(&format!("{c}[0]"), sizes)))
            .collect();
        self.check(&alike.join(" && "), IRREGULAR, depth);
        self.locate_as(IRREGULAR);
    }

    /// The type `t` with a name for each of its sizes (a `let` each): the
    /// size of the first of `candidates` (values of type `t`, each with
    /// the test that it exists) in which it exists (an empty sequence
    /// hides the sizes inside it), else 0. Returns the type and the sizes.
    pub(super) fn sizes_from(
        &mut self,
        t: &Type,
        candidates: &[(String, Option<String>)],
        depth: usize,
    ) -> (String, Vec<Size>) {
        let mut sizes = Vec::new();
        let mut lets = Vec::new();
        let ty = self.sized(t, candidates, String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        for l in lets {
            self.line(depth, &l);
        }
        (ty, sizes)
    }

    pub(super) fn sized(
        &mut self,
        t: &Type,
        candidates: &[(String, Option<String>)],
        path: String,
        outer: &mut Vec<String>,
        lets: &mut Vec<String>,
        sizes: &mut Vec<Size>,
    ) -> String {
        match t {
            Type::Seq(el) => {
                let m = self.locals.fresh("m");
                let mut len = "0i64".to_string();
                for (k, (c, exists)) in candidates.iter().enumerate().rev() {
                    let mut tests: Vec<String> = exists.iter().cloned().collect();
                    tests.extend(outer.iter().map(|p| format!("length {c}{p} > 0")));
                    let here = format!("length {c}{path}");
                    len = match (tests.is_empty(), k + 1 == candidates.len()) {
                        (true, _) => here,
                        (false, _) => format!("if {} then {here} else {len}", tests.join(" && ")),
                    };
                }
                lets.push(format!("let {m} = {len}"));
                sizes.push(Size { name: m.clone(), path: path.clone(), outer: outer.len() });
                outer.push(path.clone());
                let inner = self.sized(el, candidates, format!("{path}[0]"), outer, lets, sizes);
                outer.pop();
                format!("[{m}]{inner}")
            }
            Type::Record(fields) => {
                let tuple = is_tuple(fields);
                let parts: Vec<(String, String)> = fields
                    .iter()
                    .map(|(l, ft)| {
                        let access = if tuple { l.to_string() } else { label(l) };
                        let inner = self.sized(ft, candidates, format!("{path}.{access}"), outer, lets, sizes);
                        (label(l), inner)
                    })
                    .collect();
                if tuple {
                    format!("({})", parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(", "))
                } else {
                    let parts: Vec<String> = parts.into_iter().map(|(l, t)| format!("{l}: {t}")).collect();
                    format!("{{{}}}", parts.join(", "))
                }
            }
            other => self.ty(other),
        }
    }

    /// `a ++ b` of sequences of sequences: both coerced to one row type
    /// (a check that fails where their rows differ, as debug mode's does).
    /// The lets it needs are written first, at `depth`.
    pub(super) fn join_rows(&mut self, row: &Type, a: &str, b: &str, depth: usize) -> String {
        let mut lets = Vec::new();
        let (t, sizes) = self.row_sizes(row, &[a.to_string(), b.to_string()], &mut lets);
        // Futhark 0.22 takes only names as sizes in types.
        let (na, nb) = (self.locals.fresh("n"), self.locals.fresh("n"));
        lets.push(format!("let {na} = length {a}"));
        lets.push(format!("let {nb} = length {b}"));
        // `opaque`: Futhark 0.22.7's simplifier folds a concatenation of
        // array literals of arrays into one and fails on it (a type error
        // after `simplify`, "concat_lit"); it cannot look through it.
        let whole = Type::Seq(Box::new(row.clone()));
        // The fitted operands `opaque` too: their zeros (`replicate`) are
        // what the simplifier folds into a `concat_lit` it then rejects.
        let join = format!(
            "(opaque {} ++ opaque {})",
            fit_checked(&format!("opaque {a}"), &format!("[{na}]{t}"), &whole, &rows_of(&na, &sizes)),
            fit_checked(&format!("opaque {b}"), &format!("[{nb}]{t}"), &whole, &rows_of(&nb, &sizes))
        );
        for l in lets {
            self.line(depth, &l);
        }
        self.check_rows(&[a.to_string(), b.to_string()], &sizes, depth);
        join
    }

    /// `init ++ flatten s`: what `reduce concat init s` and `foldl concat
    /// init s` give, in one parallel step, with one row type where the
    /// rows are sequences.
    pub(super) fn concat_all(&mut self, t: &Type, init: &str, s: &str, depth: usize) -> String {
        let flat = self.locals.fresh("flat");
        self.line(depth, &format!("let {flat} = flatten {s}"));
        match t.elem() {
            Some(row) if has_seq(row) => self.join_rows(&row.clone(), init, &flat, depth),
            _ => format!("({init} ++ {flat})"),
        }
    }
}
