//! Statements and blocks: one line each where a statement fits on one,
//! and the expression each node is.

use super::*;

impl Writer<'_> {
    /// The statements of a block (each ending without `in`); returns the
    /// block's result.
    pub(super) fn block(&mut self, b: &Block, depth: usize) -> String {
        for st in &b.stmts {
            self.stmt(st, depth);
        }
        self.atom(&b.result)
    }

    /// The channel of the statements added since `mark`: their channels
    /// joined in order (`channel.rs`).
    pub(super) fn count_since(&self, mark: usize) -> String {
        join_channels(&self.terms[mark..])
    }

    /// A nested block as an expression: `let ... in r`, or `r` (with the
    /// count of its statements, `(r, c)`, when counting).
    pub(super) fn nested(&mut self, b: &Block, depth: usize) {
        let mark = self.terms.len();
        let before = self.written;
        let r = self.block(b, depth);
        let r = if self.counting { format!("({r}, {})", self.count_since(mark)) } else { r };
        self.terms.truncate(mark);
        let text = if self.written == before { r } else { format!("in {r}") };
        self.line(depth, &text);
    }

    pub(super) fn stmt(&mut self, s: &Stmt, depth: usize) {
        let outer = self.span;
        if s.span != Span::BUILTIN {
            self.span = s.span;
        }
        self.write_stmt(s, depth);
        self.span = outer;
    }

    pub(super) fn write_stmt(&mut self, s: &Stmt, depth: usize) {
        let name = self.bind(&s.var);
        self.stmt_var = Some(s.var.id);
        match &s.expr {
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                if self.counting {
                    let count = self.locals.fresh("c");
                    self.line(depth, &format!("let ({name}, {count}) ="));
                    self.terms.push(count);
                } else {
                    self.line(depth, &format!("let {name} ="));
                }
                self.line(depth + 1, &format!("if {c} then"));
                self.nested(then, depth + 2);
                self.line(depth + 1, "else");
                self.nested(otherwise, depth + 2);
            }
            Expr::Seq(items) => {
                self.literals.insert(s.var.id, items.clone());
                // Only flattened: its rows are concatenated where it is.
                if !self.only_flattened.contains(&s.var.id) {
                    let e = self.seq_literal(items, s.var.ty.elem(), depth);
                    self.line(depth, &format!("let {name} = {e}"));
                }
            }
            other => {
                self.shape = Shape::Plain;
                let e = self.expr(other, &s.var.ty, depth);
                match std::mem::replace(&mut self.shape, Shape::Plain) {
                    Shape::Plain => self.line(depth, &format!("let {name} = {e}")),
                    Shape::Pair => {
                        let count = self.locals.fresh("c");
                        self.line(depth, &format!("let ({name}, {count}) = {e}"));
                        self.terms.push(count);
                    }
                    Shape::Pairs => {
                        // Joined at once: `unzip`'s results alias each
                        // other, and the array may be consumed after.
                        let (counts, c) = (self.locals.fresh("cs"), self.locals.fresh("c"));
                        self.line(depth, &format!("let ({name}, {counts}) = unzip ({e})"));
                        self.line(depth, &format!("let {c} = reduce {} 0i64 {counts}", crate::gen::channel::JOIN));
                        self.terms.push(c);
                    }
                }
            }
        }
    }

    /// Whether `a` names an empty sequence literal.
    pub(super) fn empty_literal(&self, a: &Atom) -> bool {
        matches!(a, Atom::Var(v) if self.literals.get(&v.id).is_some_and(|items| items.is_empty()))
    }

    /// A sequence literal; rows of a literal of arrays are coerced to the
    /// first row's sizes (lets before it name them), a check that fails
    /// where the rows differ, as debug mode's does. It is `opaque`: from
    /// an array it knows, Futhark 0.22.7's simplifier computes what uses
    /// it at compile time and drops the checks on the way (an index past
    /// the end, an `assert` on the result).
    pub(super) fn seq_literal(&mut self, items: &[Atom], elem: Option<&Type>, depth: usize) -> String {
        let values: Vec<String> = items.iter().map(|a| self.atom(a)).collect();
        if values.is_empty() {
            // Typed, every size 0 (a size left open is ambiguous to
            // Futhark; an empty sequence hides the sizes inside it).
            // Of sizes Futhark cannot know (`opaque 0i64`): with sizes in
            // its type (`[] : [0][0]i64`), 0.22.7's and 0.25.8's
            // simplifiers fail on a fold whose accumulator starts with
            // other sizes ("Type error after pass 'simplify'").
            return match elem {
                // Each size its own expression: with the same one twice,
                // 0.22.7 takes the sizes for one and fails where they meet
                // others ("Type annotation is [?0][?0]i64").
                Some(e) => {
                    let sizes: Vec<Size> = (1..=seqs_in(e))
                        .map(|k| Size { name: format!("(opaque {k}i64 - {k}i64)"), path: String::new(), outer: 0 })
                        .collect();
                    format!("opaque (replicate (opaque 0i64) {})", sized_zero(e, &mut sizes.iter()))
                }
                None => "[]".into(),
            };
        }
        match elem {
            Some(row) if values.len() > 1 && has_seq(row) => {
                let (t, sizes) = self.named_sizes(row, &values[0], depth);
                let alike: Vec<String> = values[1..].iter().map(|v| format!("({})", same_sizes(v, &sizes))).collect();
                self.check(&alike.join(" && "), IRREGULAR, depth);
                let rows: Vec<String> = values.iter().map(|v| fit_checked(v, &t, row, &sizes)).collect();
                self.locate_as(IRREGULAR);
                format!("opaque [{}]", rows.join(", "))
            }
            _ => format!("opaque [{}]", values.join(", ")),
        }
    }

    /// A node as an expression (lets it needs are written first). Lines
    /// that can fail are marked.
    pub(super) fn expr(&mut self, e: &Expr, ty: &Type, depth: usize) -> String {
        match e {
            Expr::Atom(a) => self.atom(a),
            Expr::Prim(Builtin::Set, args) => {
                let in_place = self.stmt_var.is_some_and(|v| self.unique.direct(v, 0));
                let elem = args[0].ty().elem().cloned();
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                self.set(&args, elem.as_ref(), in_place, Some(depth))
            }
            // `[] ++ s` is a copy of `s`: written as a concatenation,
            // Futhark 0.22's simplifier folds it with later literals into
            // an array whose size then contradicts a size coercion around
            // it (an internal compiler error).
            Expr::Prim(Builtin::Concat, args) if args.iter().any(|a| self.empty_literal(a)) => {
                let other = if self.empty_literal(&args[0]) { &args[1] } else { &args[0] };
                format!("(copy {})", self.atom(other))
            }
            // Sequences of sequences joined: one row type.
            Expr::Prim(b @ (Builtin::Concat | Builtin::Cons | Builtin::Snoc), args)
                if ty.elem().is_some_and(has_seq) =>
            {
                let row = ty.elem().cloned().expect("a sequence of sequences");
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                let single = |x: &str| format!("[{x}]");
                let (a, b) = match b {
                    Builtin::Cons => (single(&args[0]), args[1].clone()),
                    Builtin::Snoc => (args[0].clone(), single(&args[1])),
                    _ => (args[0].clone(), args[1].clone()),
                };
                let (la, lb) = (self.locals.fresh("s"), self.locals.fresh("s"));
                self.line(depth, &format!("let {la} = {a}"));
                self.line(depth, &format!("let {lb} = {b}"));
                self.join_rows(&row, &la, &lb, depth)
            }
            Expr::Prim(Builtin::Error, args) => {
                let what = pmx_lower::error_text(&self.strings, &args[0]);
                self.check("false", &what, depth);
                self.zero(ty)
            }
            Expr::Prim(b, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                match self.checked_prim(*b, &args, ty, depth) {
                    Some(e) => e,
                    None => self.prim(*b, &args, ty),
                }
            }
            Expr::Math(m, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                math(*m, &args)
            }
            Expr::Call(id, args) => {
                let name = self.functions.get(id).cloned().unwrap_or_else(|| format!("f{}", id.0));
                let stmt = self.stmt_var;
                let args: Vec<String> = args
                    .iter()
                    .enumerate()
                    .map(|(k, a)| match stmt {
                        Some(v) => self.consumed_arg(*id, v, k, a),
                        None => self.atom(a),
                    })
                    .collect();
                // A failure inside the callee is located there; the call
                // line locates failures Futhark reports only by caller.
                self.locate_next();
                if self.counted.contains(id) {
                    self.shape = Shape::Pair;
                }
                if args.is_empty() {
                    name
                } else {
                    format!("{name} {}", args.join(" "))
                }
            }
            Expr::Record(fields) => {
                let is_tup = fields.len() > 1 && is_tuple_labels(fields.iter().map(|(l, _)| l));
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(l, a)| if is_tup { self.atom(a) } else { format!("{} = {}", label(l), self.atom(a)) })
                    .collect();
                if is_tup {
                    format!("({})", parts.join(", "))
                } else {
                    format!("{{{}}}", parts.join(", "))
                }
            }
            Expr::Project(r, l) => {
                let tuple = matches!(r.ty(), Type::Record(ref fs) if is_tuple(fs));
                let field = if tuple { l.to_string() } else { label(l) };
                format!("{}.{field}", self.atom(r))
            }
            Expr::Seq(items) => self.seq_literal(items, ty.elem(), depth),
            Expr::Map { f: fr, seqs } => {
                let names: Vec<String> = seqs.iter().map(|a| self.atom(a)).collect();
                let mut shortest = None;
                if names.len() > 1 {
                    // `map2` needs equal lengths: checked against the
                    // first's, on a line of its own, before the function
                    // runs on the first elements (as debug mode checks
                    // the lengths first); then the function runs over
                    // the indices all have (below).
                    let first = self.locals.fresh("n");
                    self.line(depth, &format!("let {first} = length {}", names[0]));
                    let message = "map2 on sequences of different lengths";
                    let equal: Vec<String> = names.iter().skip(1).map(|s| format!("length {s} == {first}")).collect();
                    self.check(&equal.join(" && "), message, depth);
                    shortest = Some(first);
                }
                // The first elements, for the sizes of the results: the
                // others read as in the map below.
                let mut firsts: Vec<String> = names.iter().take(1).map(|s| format!("{s}[0]")).collect();
                for (s, sq) in names.iter().zip(seqs).skip(1) {
                    let elem = sq.ty().elem().cloned().unwrap_or(Type::Unit);
                    firsts.push(self.element(s, &format!("0 < length {s}"), "0", &elem));
                }
                let guard = match &shortest {
                    Some(n) => n.clone(),
                    None => names.first().map(|s| format!("length {s}")).unwrap_or_default(),
                };
                let f = self.sized_funval(fr, &firsts, &guard, depth);
                if self.fun_counts(fr) {
                    self.shape = Shape::Pairs;
                }
                match (names.as_slice(), shortest) {
                    ([s], _) => format!("map {f} {s}"),
                    ([], _) => "[]".into(),
                    // Over the first's indices (so that a fold that maps
                    // over its accumulator keeps its size, and Futhark
                    // its memory: cutting all to the shortest doubled the
                    // time of matmul `g`), the others read where they
                    // have the index (zeros, or a clamped row, where the
                    // check above failed): a coercion would fail before
                    // the channel says which failure came first.
                    // The first is mapped over, not indexed: Futhark's
                    // reverse mode (`vjp`) gives a mapped array's adjoint
                    // by a map, an indexed one's by accumulating into it.
                    (all, Some(_)) => {
                        let (x, j) = (self.locals.fresh("x"), self.locals.fresh("j"));
                        let mut args = vec![x.clone()];
                        for (s, sq) in all.iter().zip(seqs).skip(1) {
                            let elem = sq.ty().elem().cloned().unwrap_or(Type::Unit);
                            args.push(self.element(s, &format!("{j} < length {s}"), &j, &elem));
                        }
                        format!("map2 (\\{x} {j} -> {f} {}) {} (indices {})", args.join(" "), all[0], all[0])
                    }
                    (all, None) => format!("map{} {f} {}", all.len(), all.join(" ")),
                }
            }
            // A concatenation of all the elements after the first value.
            Expr::Reduce { f, neutral: init, seq } | Expr::Foldl { f, init, seq } if is_concat(f) => {
                let (init, s) = (self.atom(init), self.atom(seq));
                self.concat_all(ty, &init, &s, depth)
            }
            Expr::Reduce { f, neutral, seq } if self.fun_counts(f) => {
                // An operator that runs utests runs as the interpreter
                // runs it in debug mode (a fold from the neutral element),
                // so that the count is the same.
                let ne = self.atom(neutral);
                self.counted_fold(f, &ne, seq, false)
            }
            Expr::Reduce { f, neutral, seq } => {
                let ne = self.atom(neutral);
                match &f.result {
                    // Futhark's operator must return arrays of one known
                    // size: the neutral element's.
                    // Futhark's operator must return arrays of one known
                    // size, the neutral element's: a parallel reduce
                    // where every element has those sizes (as the
                    // operator of a vector sum keeps them), else a fold
                    // (an operator such as `concat` grows its result).
                    // Debug mode decides the same way (`regular_reduce`).
                    Type::Seq(_) => {
                        let (t, sizes) = self.named_sizes(&f.result, &ne, depth);
                        let s = self.atom(seq);
                        let x = self.locals.fresh("x");
                        let same = same_sizes(&x, &sizes);
                        let parallel = self.locals.fresh("par");
                        self.line(depth, &format!("let {parallel} = all (\\{x} -> {same}) {s}"));
                        let n = self.locals.fresh("n");
                        self.line(depth, &format!("let {n} = length {s}"));
                        let params = [self.locals.fresh("p"), self.locals.fresh("p")];
                        let body = self.apply(f, &params);
                        let (acc, y) = (self.locals.fresh("acc"), self.locals.fresh("y"));
                        let step = self.apply(f, &[acc.clone(), y.clone()]);
                        self.mark(Some(IRREGULAR));
                        format!(
                            "if {parallel} then reduce (\\{} {} -> {}) {} ({s} :> [{n}]{t}) \
                             else loop {acc} = {ne} for {y} in {s} do {step}",
                            params[0],
                            params[1],
                            fit(&body, &t),
                            fit(&ne, &t)
                        )
                    }
                    _ => {
                        let f = self.funval(f);
                        format!("reduce {f} {ne} {}", self.atom(seq))
                    }
                }
            }
            Expr::Foldl { f, init, seq } => {
                if let Some(op) = self.histogram(f) {
                    return self.reduce_by_index(f, op, init, seq, depth);
                }
                // When the function consumes its accumulator, the loop
                // does: its initial value is one nothing uses afterwards,
                // or a copy made once.
                let consumes = matches!(f.callee, Callee::Function(g) if self.unique.param(g, f.bound.len()));
                let init = self.atom(init);
                let init = match self.stmt_var {
                    Some(v) if consumes && !self.unique.direct(v, 0) => format!("(copy {init})"),
                    _ => init,
                };
                if self.fun_counts(f) {
                    return self.counted_fold(f, &init, seq, consumes);
                }
                let acc = self.locals.fresh("acc");
                let x = self.locals.fresh("x");
                let body = self.apply_consuming(f, &[acc.clone(), x.clone()], &[consumes]);
                self.locate_next();
                format!("loop {acc} = {init} for {x} in {} do {body}", self.atom(seq))
            }
            Expr::Derivative { which, f, args } => self.derivative(*which, f, args, depth),
            Expr::Create { len, f } => {
                let n = self.atom(len);
                self.check(&format!("{n} >= 0"), "Create with a negative length", depth);
                // A length no machine's memory holds: debug mode's failure.
                // Unchecked, Futhark's size in bytes would overflow, and
                // its allocation be too small for what it then writes.
                self.check(&format!("{n} <= {CREATE_MAX}"), OUT_OF_MEMORY, depth);
                let len = self.locals.fresh("n");
                self.line(depth, &format!("let {len} = if {n} >= 0 && {n} <= {CREATE_MAX} then {n} else 0"));
                let counts = self.fun_counts(f);
                let f = self.sized_funval(f, &["0".to_string()], &len, depth);
                if counts {
                    self.shape = Shape::Pairs;
                }
                format!("map {f} (iota {len})")
            }
            Expr::Flatten(s) => {
                let literal = match s {
                    Atom::Var(v) => self.literals.get(&v.id).cloned(),
                    Atom::Lit(_) => None,
                };
                match literal {
                    // The rows of a literal may differ in length, which a
                    // Futhark array cannot hold: concatenated instead.
                    Some(rows) if !rows.is_empty() => {
                        let rows: Vec<String> = rows.iter().map(|a| self.atom(a)).collect();
                        match ty.elem() {
                            // Rows of sequences: one row type (a check,
                            // as debug mode's of the result).
                            Some(elem) if has_seq(elem) => {
                                let mut lets = Vec::new();
                                let (t, sizes) = self.row_sizes(elem, &rows, &mut lets);
                                let mut parts = Vec::new();
                                for r in &rows {
                                    let n = self.locals.fresh("n");
                                    lets.push(format!("let {n} = length {r}"));
                                    let whole = Type::Seq(Box::new(elem.clone()));
                                    let t = format!("[{n}]{t}");
                                    // `opaque` around the fitted row too
                                    // (as in `join_rows`).
                                    let fitted = fit_checked(&format!("opaque {r}"), &t, &whole, &rows_of(&n, &sizes));
                                    parts.push(format!("(opaque {fitted})"));
                                }
                                for l in lets {
                                    self.line(depth, &l);
                                }
                                self.check_rows(&rows, &sizes, depth);
                                fresh_join(&parts)
                            }
                            _ => fresh_join(&rows),
                        }
                    }
                    _ => format!("flatten {}", self.atom(s)),
                }
            }
            Expr::SizeEq { seq, dim, size } => {
                let test = size_test(&self.atom(seq), *dim, &self.atom(size));
                // A size constraint of a utest that counts counts once.
                let ok = if self.counting && (self.counts)(self.span) { "1i64" } else { "0i64" };
                self.check_counting(&test, "a size constraint does not hold", ok, depth);
                "()".into()
            }
            Expr::SizeCoerce { seq, dim, size } => {
                let t = seq.ty();
                let mut dims = String::new();
                let mut elem = &t;
                for k in 0..=*dim {
                    match elem {
                        Type::Seq(e) => {
                            dims.push_str(&if k == *dim { format!("[{}]", self.atom(size)) } else { "[]".into() });
                            elem = e;
                        }
                        _ => break,
                    }
                }
                let elem = elem.clone();
                self.mark(Some("a size constraint does not hold"));
                format!("{} :> {dims}{}", self.atom(seq), self.ty(&elem))
            }
            Expr::Never => {
                self.check("false", "Reached a never term, which should be impossible", depth);
                self.zero(ty)
            }
            Expr::Apply(..) | Expr::Closure(..) | Expr::Accelerate { .. } => unreachable!("{}", pmx_lower::HOST_ONLY),
            Expr::Con { .. } | Expr::IsCon { .. } | Expr::Payload { .. } => {
                self.unsupported("variant types (constructors and matches on them) in Futhark code");
                "()".into()
            }
            Expr::Loop { .. } | Expr::SeqLoopAcc { .. } => {
                self.unsupported("`loop` in Futhark code (it is CUDA's keyword)");
                "()".into()
            }
            // A utest runs where the interpreter would run it (`pmx test`),
            // and a failing one is an error: generated code cannot report
            // it and go on.
            Expr::Utest { .. } if !(self.counting && (self.counts)(self.span)) => "()".into(),
            Expr::Utest { test, expected, using, .. } => {
                let (a, b) = (self.atom(test), self.atom(expected));
                let holds = match using {
                    Some(eq) => self.apply(eq, &[a, b]),
                    None if is_scalar(&test.ty()) => format!("({a} == {b})"),
                    None => {
                        self.unsupported(format!(
                            "a utest on values of type {} inside Futhark code without a `using` function (only \
                             Int, Float, Bool and Char compare)",
                            test.ty()
                        ));
                        "true".into()
                    }
                };
                self.check_counting(&holds, "a utest inside accelerated code failed", "1i64", depth);
                "()".into()
            }
            Expr::If { .. } => unreachable!("ifs are statements"),
        }
    }
}
