//! Primitives: a built-in applied to atoms, with its checks (bounds,
//! division, size equalities) where the code keeps them, and in-place
//! updates.

use super::*;

impl Writer<'_> {
    /// `set a i v` (`a`, `i`, `v` written): in place when `a` may be
    /// consumed, else on a copy. A row `v` of an array of arrays must
    /// have the type of `a`'s rows, which Futhark cannot see when their
    /// sizes come from different places: both are coerced to `v`'s
    /// sizes (checked when it runs: MExpr would make the array
    /// irregular, which no Futhark array can be). The sizes are lets
    /// written before the statement (at `depth`), so that the result's
    /// type names them for the statements after it (Futhark 0.22 cannot
    /// take the length of an array whose size went out of scope); inside
    /// an expression (`None`), lets in it.
    pub(super) fn set(&mut self, a: &[String], elem: Option<&Type>, in_place: bool, depth: Option<usize>) -> String {
        let (arr, i, v) = (&a[0], &a[1], &a[2]);
        // Records that hold sequences are copied anyway: Futhark 0.22.7
        // rejects an update in place of a fold's result that began as a
        // literal of them ("referenced after being consumed",
        // FUTHARK_BUGS.md).
        let records = matches!(elem, Some(Type::Record(_))) && elem.is_some_and(has_seq);
        let copy = if in_place && !records { "" } else { "copy " };
        let in_bounds = format!("{i} >= 0 && {i} < length {arr}");
        let Some(elem) = elem.filter(|e| has_seq(e)) else {
            match depth {
                // The check on a line of its own (`check`): the update
                // itself needs no reading afterwards.
                // The check on a line of its own (`check`); where it
                // fails, the update goes to index 0 (an update out of
                // bounds would stop the program before the channel says
                // which failure came first, and the channel's failure
                // discards the array). An `if` around the update instead
                // doubled the time of loops that set rows (Viterbi).
                Some(depth) => {
                    let ok = self.locals.fresh("ok");
                    self.line(depth, &format!("let {ok} = {in_bounds}"));
                    self.check(&ok, OUT_OF_BOUNDS, depth);
                    self.locate_as(OUT_OF_BOUNDS);
                    return format!("({copy}{arr} with [if {ok} then {i} else 0] = {v})");
                }
                None => self.mark(Some(OUT_OF_BOUNDS)),
            }
            return format!("({copy}{arr} with [{i}] = {v})");
        };
        let n = self.locals.fresh("n");
        let mut lets = vec![format!("let {n} = length {arr}")];
        // The new row's sizes (an empty sequence hides those inside it).
        let mut sizes = Vec::new();
        let row_t =
            self.sized(&elem.clone(), &[(v.clone(), None)], String::new(), &mut Vec::new(), &mut lets, &mut sizes);
        let Some(depth) = depth else {
            let update = format!("{copy}({arr} :> [{n}]{row_t}) with [{i}] = ({v} :> {row_t})");
            // Futhark's message says which (an index, or a row's length).
            self.mark(None);
            return format!("({} in {update})", lets.join(" "));
        };
        for l in &lets {
            self.line(depth, l);
        }
        // The rows must have the new row's sizes (the row replaced too, as
        // debug mode checks: a Futhark array's rows are of one type); they
        // are alike, so the first stands for them. Both checks on lines of
        // their own (`check`), the rows' first, as debug mode has them.
        let first = format!("{arr}[0]");
        self.check(&format!("{n} == 0 || ({})", same_sizes(&first, &sizes)), IRREGULAR, depth);
        let ok = self.locals.fresh("ok");
        self.line(depth, &format!("let {ok} = {in_bounds}"));
        self.check(&ok, OUT_OF_BOUNDS, depth);
        self.locate_as(IRREGULAR);
        // The array keeps its rows' sizes (so its coercion holds whenever
        // it has a row), and the new row is fitted to them, zeros where
        // the check above failed: coercing the array to the new row's
        // sizes instead let Futhark 0.22.7 write a longer row past the end
        // of the array's (a heap overflow) before it reported the
        // coercion. Out of bounds, to index 0 (as above).
        let mut own = Vec::new();
        let mut lets = Vec::new();
        let exists = Some(format!("{n} > 0"));
        let arr_t = self.sized(elem, &[(first, exists)], String::new(), &mut Vec::new(), &mut lets, &mut own);
        for l in &lets {
            self.line(depth, l);
        }
        let at = format!("if {ok} then {i} else 0");
        if let (Type::Seq(inner), [row]) = (elem, own.as_slice()) {
            if !has_seq(inner) {
                // A row of scalars: as many elements as both have, a
                // slice written in place (an `if` of rows, a new array,
                // cost Viterbi's binding a copy of each row it set).
                let k = self.locals.fresh("k");
                self.line(depth, &format!("let {k} = i64.min (length {v}) {}", row.name));
                return format!("({copy}({arr} :> [{n}]{arr_t}) with [{at}, 0:{k}] = {v}[0:{k}])");
            }
        }
        let row = fit_checked(v, &arr_t, elem, &own);
        format!("({copy}({arr} :> [{n}]{arr_t}) with [{at}] = {row})")
    }

    /// Argument `k` (`a`) of a call of `f` by the statement binding
    /// `stmt`: copied when `f` consumes it and the analysis did not find
    /// that nothing uses it afterwards.
    pub(super) fn consumed_arg(&mut self, f: FnId, stmt: VarId, k: usize, a: &Atom) -> String {
        let a = self.atom(a);
        if self.unique.param(f, k) && !self.unique.direct(stmt, k) {
            format!("(copy {a})")
        } else {
            a
        }
    }

    /// A primitive that may fail, as a statement: its checks on lines of
    /// their own (`check`), then the operation. `None` for the others.
    pub(super) fn checked_prim(&mut self, b: Builtin, a: &[String], ty: &Type, depth: usize) -> Option<String> {
        use Builtin::*;
        // Where its check fails, the operation runs on arguments that
        // cannot fail (an index clamped, a divisor of 1; an element of an
        // empty sequence is zeros, `element`), so that the first failure
        // in the program's order is the one reported.
        Some(match b {
            Get => {
                let ok = format!("{1} >= 0 && {1} < length {0}", a[0], a[1]);
                self.check(&ok, OUT_OF_BOUNDS, depth);
                self.element(&a[0], &ok, &a[1], ty)
            }
            Head => {
                self.check(&format!("length {} > 0", a[0]), "Head on empty sequence", depth);
                self.element(&a[0], &format!("length {} > 0", a[0]), "0", ty)
            }
            Tail => {
                self.check(&format!("length {} > 0", a[0]), "Tail on empty sequence", depth);
                format!("{0}[i64.min 1 (length {0}):]", a[0])
            }
            Divi | Modi => {
                self.check(&format!("{} != 0", a[1]), "Division by zero", depth);
                division(b, &a[0], &a[1])
            }
            SplitAt => {
                self.check(
                    &format!("{1} >= 0 && {1} <= length {0}", a[0], a[1]),
                    "Split at index out of bounds",
                    depth,
                );
                // The bound is a statement of its own (a fresh name, which
                // no variable of the program can take), so that the parts'
                // sizes are in scope where the pair is used: a local `let`
                // inside the expression made them existential, which
                // Futhark 0.22.7 refused under `opaque` (fuzz seed 8000351).
                let j = self.locals.fresh("split_at");
                self.line(depth, &format!("let {j} = i64.max 0 (i64.min {1} (length {0}))", a[0], a[1]));
                format!("({0}[:{j}], {0}[{j}:])", a[0])
            }
            Subsequence => {
                self.check(
                    &format!("{} >= 0 && {} >= 0", a[1], a[2]),
                    "Subsequence using a negative index or length",
                    depth,
                );
                // The bounds are statements of their own, as `splitAt`'s.
                let from = self.locals.fresh("sub_from");
                let to = self.locals.fresh("sub_to");
                self.line(depth, &format!("let {from} = i64.min (i64.max 0 {1}) (length {0})", a[0], a[1]));
                self.line(depth, &format!("let {to} = i64.min ({from} + i64.max 0 {1}) (length {0})", a[0], a[2]));
                format!("{0}[{from}:{to}]", a[0])
            }
            Int2char => {
                let ok = format!("{0} >= 0 && {0} <= 0x10FFFF && ({0} < 0xD800 || {0} > 0xDFFF)", a[0]);
                self.check(&ok, "int2char: not the code of a character", depth);
                format!("(i32.i64 (if {ok} then {} else 0))", a[0])
            }
            _ => return None,
        })
    }

    /// Element `index` of `seq` (of elements of type `elem`), where `ok`
    /// says it is in range: else zeros, for an element without sequences
    /// (`if ok then s[i] else 0`, which also lets Futhark drop its own
    /// bounds check; an `if length s > 0` around a clamped index cost
    /// Viterbi's binding half again). A row of a sequence of sequences is
    /// read at a clamped index: on an empty sequence that still fails
    /// there, with Futhark's message, located as the check is (zeros of
    /// the row's sizes made every row read an `if` of arrays, which
    /// doubled the time of Viterbi's and matmul's bindings).
    pub(super) fn element(&mut self, seq: &str, ok: &str, index: &str, elem: &Type) -> String {
        if has_seq(elem) {
            return format!("{seq}[if {ok} then {index} else 0]");
        }
        let zero = self.zero(elem);
        format!("(if {ok} then {seq}[{index}] else {zero})")
    }

    /// A primitive with Miking's semantics.
    pub(super) fn prim(&mut self, b: Builtin, a: &[String], ty: &Type) -> String {
        use Builtin::*;
        let bin = |op: &str| format!("({} {op} {})", a[0], a[1]);
        // Futhark simplifies `x * 0.0` to 0.0 (and so on), which IEEE
        // arithmetic does not (-1 * 0 is -0, NaN * 0 is NaN): a float
        // zero in arithmetic is a value it cannot see (FUTHARK_BUGS.md).
        let float = |op: &str| {
            let z = |x: &String| if x == "0.0f64" { "(opaque 0.0f64)".to_string() } else { x.clone() };
            format!("({} {op} {})", z(&a[0]), z(&a[1]))
        };
        match b {
            Addi => bin("+"),
            Subi => bin("-"),
            Muli => bin("*"),
            Addf => float("+"),
            Subf => float("-"),
            Mulf => float("*"),
            Divf => float("/"),
            // OCaml's division and remainder truncate (Futhark's `//` and
            // `%%`); dividing by zero fails.
            Divi | Modi => {
                self.mark(Some("Division by zero"));
                format!("(assert ({} != 0) {})", a[1], division(b, &a[0], &a[1]))
            }
            Negi => format!("(-{})", a[0]),
            Negf => self.negation(&a[0]),
            // A count outside 0..63 shifts every bit out, as the
            // interpreter does.
            Slli => format!("(if {1} >= 0 && {1} < 64 then {0} << {1} else 0)", a[0], a[1]),
            Srli => format!("(if {1} >= 0 && {1} < 64 then i64.u64 (u64.i64 {0} >> u64.i64 {1}) else 0)", a[0], a[1]),
            Srai => format!("({0} >> (if {1} >= 0 && {1} < 64 then {1} else 63))", a[0], a[1]),
            Eqi | Eqf | Eqc => bin("=="),
            Neqi | Neqf => bin("!="),
            Lti | Ltf => bin("<"),
            Gti | Gtf => bin(">"),
            Leqi | Leqf => bin("<="),
            Geqi | Geqf => bin(">="),
            Int2float => format!("(f64.i64 {})", a[0]),
            Floorfi => float_to_int(&format!("f64.floor {}", a[0])),
            Ceilfi => float_to_int(&format!("f64.ceil {}", a[0])),
            // Halves away from zero (OCaml's `Float.round`; Futhark's
            // `f64.round` takes them to even). Truncated by floor or ceil:
            // Futhark 0.22.7's `f64.trunc` goes through i64 and is wrong
            // past its range (`f64.trunc 1e30` is -2^63).
            // The argument is bound first: a variable of the program named
            // `t` would otherwise be taken for the local `t`.
            Roundfi => float_to_int(&format!(
                "let x = {} in let t = if x >= 0 then f64.floor x else f64.ceil x in if f64.abs (x - t) >= 0.5 then \
                 t + (if x < 0 then -1 else 1) else t",
                a[0]
            )),
            Char2int => format!("(i64.i32 {})", a[0]),
            Int2char => {
                self.mark(Some("int2char: not the code of a character"));
                format!("(assert ({0} >= 0 && {0} <= 0x10FFFF && ({0} < 0xD800 || {0} > 0xDFFF)) (i32.i64 {0}))", a[0])
            }
            Length => format!("(length {})", a[0]),
            Get => {
                self.mark(Some(OUT_OF_BOUNDS));
                format!("{}[{}]", a[0], a[1])
            }
            Set => {
                let elem = ty.elem().cloned();
                self.set(a, elem.as_ref(), false, None)
            }
            Concat => bin("++"),
            Cons => format!("([{}] ++ {})", a[0], a[1]),
            Snoc => format!("({} ++ [{}])", a[0], a[1]),
            Head => {
                self.mark(Some("Head on empty sequence"));
                format!("{}[0]", a[0])
            }
            Tail => {
                self.mark(Some("Tail on empty sequence"));
                format!("{}[1:]", a[0])
            }
            Null => format!("(length {} == 0)", a[0]),
            // `opaque`: Futhark 0.22.7 gives wrong elements for a slice of
            // the reverse (or the reverse of a slice) of an array it knows
            // holds one value (`tail (reverse (map (lam x. 27) s))`; the
            // multicore backend).
            Reverse => format!("(reverse (opaque {}))", a[0]),
            SplitAt => {
                self.mark(Some("Split at index out of bounds"));
                format!("({0}[:{1}], {0}[{1}:])", a[0], a[1])
            }
            // Clamped to what is there, as the interpreter does; negative
            // arguments fail.
            Subsequence => {
                self.mark(Some("Subsequence using a negative index or length"));
                format!(
                    "(assert ({1} >= 0 && {2} >= 0) (let (sq, from, n) = ({0}, {1}, {2}) in let s = i64.min from \
                     (length sq) in sq[s:i64.min (s + n) (length sq)]))",
                    a[0], a[1], a[2]
                )
            }
            Error => {
                self.mark(Some("error"));
                format!("(assert false {})", self.zero(ty))
            }
            other => {
                self.unsupported(format!("the built-in `{}` in Futhark code", other.name()));
                "()".into()
            }
        }
    }
}
