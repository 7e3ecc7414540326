//! Functions: a `def` each, a tail-recursive one as a `while` loop.

use super::*;

impl Writer<'_> {
    pub fn function(&mut self, f: &Function) {
        self.begin(f.span, self.counted.contains(&f.id), &f.body);
        self.in_differentiated = self.differentiated.contains(&f.id);
        let mut head = self.comment_for(&f.source, f.span);
        if !f.instance.is_empty() {
            let inst: Vec<String> = f.instance.iter().map(|(v, t)| format!("{v} = {t}")).collect();
            let _ = write!(head, ", instance {}", inst.join(", "));
        }
        self.line(0, &head);
        if f.recursive && !f.tail_recursive {
            self.unsupported(format!(
                "`{}` is recursive, and not only in tail position (Futhark has no recursion; tail recursion becomes \
                 a loop)",
                f.source
            ));
        }
        let params: Vec<String> = f
            .params
            .iter()
            .enumerate()
            .map(|(k, v)| {
                let name = self.bind(v);
                let t = if self.unique.param(f.id, k) { self.uty(&v.ty) } else { self.ty(&v.ty) };
                format!("({name}: {t})")
            })
            .collect();
        let name = self.functions[&f.id].clone();
        let result = if self.unique.result(f.id) { self.uty(&f.result) } else { self.ty(&f.result) };
        let result = if self.counting { format!("({result}, i64)") } else { result };
        let params = if params.is_empty() { String::new() } else { format!(" {}", params.join(" ")) };
        self.line(0, &format!("def {name}{params} : {result} ="));
        if f.recursive && f.tail_recursive {
            self.tail_loop(f);
        } else {
            self.nested(&f.body, 1);
        }
        self.line(0, "");
    }

    /// A tail-recursive function as a `while` loop over its parameters:
    /// a tail call is another round with new parameters, a result ends
    /// the loop.
    pub(super) fn tail_loop(&mut self, f: &Function) {
        let params: Vec<String> = f.params.iter().map(|v| self.var(v)).collect();
        let zero = self.zero(&f.result);
        let go = self.locals.fresh("go");
        let res = self.locals.fresh("res");
        // A function that counts utests carries the count in the loop.
        let count = self.counting.then(|| self.locals.fresh("cnt"));
        let mut pattern = vec![go.clone(), res.clone()];
        let mut init = vec!["true".to_string(), zero.clone()];
        let mut kept = res.clone();
        if let Some(c) = &count {
            pattern.push(c.clone());
            init.push("0i64".into());
            kept = format!("{res}, {c}");
        }
        pattern.extend(params.iter().cloned());
        init.extend(params.iter().cloned());
        let ignored: Vec<&str> = std::iter::repeat_n("_", params.len()).collect();
        let rest = if ignored.is_empty() { String::new() } else { format!(", {}", ignored.join(", ")) };
        self.line(1, &format!("let (_, {kept}{rest}) ="));
        // A failure ends the loop, as it ends the interpreter's recursion
        // (the rounds after it would run on values a failed check gave).
        let cond = match &count {
            Some(c) => format!("{go} && {c} >= 0"),
            None => go.clone(),
        };
        self.line(2, &format!("loop ({}) = ({}) while {cond} do", pattern.join(", "), init.join(", ")));
        let tail = TailLoop { id: f.id, params, zero, count };
        self.tail_block(&f.body, &tail, 3);
        let result = if self.counting { format!("({kept})") } else { res };
        self.line(1, &format!("in {result}"));
    }

    /// A block in tail position of a loop body: its value is the loop's
    /// next state.
    pub(super) fn tail_block(&mut self, b: &Block, t: &TailLoop, depth: usize) {
        let last = match (&b.result, b.stmts.last()) {
            (Atom::Var(v), Some(s)) if s.var.id == v.id => Some(s),
            _ => None,
        };
        let tail_stmt = last.filter(|s| match &s.expr {
            Expr::Call(id, _) => *id == t.id,
            Expr::If { .. } => true,
            _ => false,
        });
        let n = if tail_stmt.is_some() { b.stmts.len() - 1 } else { b.stmts.len() };
        let before = self.written;
        for st in &b.stmts[..n] {
            self.stmt(st, depth);
        }
        // The channel so far: the loop's and this round's statements'.
        let count = t.count.as_ref().map(|c| {
            let mut all = vec![c.clone()];
            all.extend(self.terms.iter().cloned());
            format!("{}, ", join_channels(&all))
        });
        let count = count.unwrap_or_default();
        // A block without statements is the bare expression.
        let lead = if self.written == before { "" } else { "in " };
        let Some(s) = tail_stmt else {
            let r = self.atom(&b.result);
            let state = format!("(false, {r}, {count}{})", t.params.join(", "));
            self.line(depth, &format!("{lead}{state}"));
            return;
        };
        self.span = s.span;
        match &s.expr {
            Expr::Call(_, args) => {
                // A consumed parameter gets a value nothing else uses, or
                // a copy.
                let args: Vec<String> =
                    args.iter().enumerate().map(|(k, a)| self.consumed_arg(t.id, s.var.id, k, a)).collect();
                let state = format!("(true, {}, {count}{})", t.zero, args.join(", "));
                self.line(depth, &format!("{lead}{state}"));
            }
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                self.line(depth, &format!("{lead}if {c} then"));
                let mark = self.terms.len();
                self.tail_block(then, t, depth + 1);
                self.terms.truncate(mark);
                self.line(depth, "else");
                self.tail_block(otherwise, t, depth + 1);
                self.terms.truncate(mark);
            }
            _ => unreachable!("only calls and ifs are tail statements"),
        }
    }
}
