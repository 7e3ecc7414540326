//! Entries: an `entry` per accelerate binding, its parameters and result
//! flattened into the ABI's leaves and reassembled.

use super::*;

impl Writer<'_> {
    pub fn entry(&mut self, e: &Entry) -> Option<EntryAbi> {
        let uses = crate::gen::channel::Uses { counts: self.counts, checked: self.checked };
        let counting = crate::gen::channel::block_uses(&e.body, uses, &self.counted);
        self.begin(e.span, counting, &e.body);
        self.in_differentiated = false;
        let comment = self.comment_for("accelerate", e.span);
        self.line(0, &comment);
        let mut inputs = Vec::new();
        let mut params = Vec::new();
        let mut sizes = Vec::new();
        let mut rebuild = Vec::new();
        for v in &e.params {
            let leaves = match leaves_of(&v.ty) {
                Ok(l) => l,
                Err(why) => {
                    self.unsupported(why);
                    return None;
                }
            };
            let name = self.bind(v);
            // A parameter that is one leaf crosses as it is; others are
            // rebuilt from leaf parameters named after their paths.
            if leaves.len() == 1 && leaves[0].path.iter().all(|s| *s == Step::Elems) {
                params.push(format!("({name}: {})", self.ty(&v.ty)));
            } else {
                let mut leaf_names = Vec::new();
                // The leaves of a sequence of records share its length.
                let outer = matches!(v.ty, Type::Seq(_)).then(|| self.locals.fresh(&format!("n_{name}")));
                if let Some(n) = &outer {
                    sizes.push(format!("[{n}]"));
                }
                for l in &leaves {
                    let leaf = self.locals.fresh(&format!("{name}_{}", path_name(&l.path)));
                    let t = l.futhark_type();
                    let t = match &outer {
                        Some(n) => format!("[{n}]{}", &t[2..]),
                        None => t,
                    };
                    params.push(format!("({leaf}: {t})"));
                    leaf_names.push(leaf);
                }
                let mut it = leaf_names.into_iter();
                let value = self.assemble(&v.ty, &mut it, outer.as_deref(), "");
                rebuild.push(format!("let {name} = {value}"));
            }
            inputs.extend(leaves);
        }
        let outputs = match leaves_of(&e.result) {
            Ok(l) => l,
            Err(why) => {
                self.unsupported(why);
                return None;
            }
        };
        // An entry that counts utests returns the count last.
        let dummy_output = outputs.is_empty() && !counting;
        let mut out_types: Vec<String> = outputs.iter().map(Leaf::futhark_type).collect();
        if counting {
            out_types.push("i64".into());
        }
        let result_type = match out_types.len() {
            0 => "bool".to_string(),
            1 => out_types[0].clone(),
            _ => format!("({})", out_types.join(", ")),
        };
        let name = crate::gen::names::sanitize(&e.name);
        let sizes = if sizes.is_empty() { String::new() } else { format!(" {}", sizes.join(" ")) };
        // An entry without parameters is a constant, which Futhark
        // computes when the context is made, where a failure could not be
        // told apart from a failure to make it: such entries take an
        // unused `i64`.
        let dummy_input = params.is_empty();
        if dummy_input {
            params.push("(_: i64)".into());
        }
        self.line(0, &format!("entry {name}{sizes} {} : {result_type} =", params.join(" ")));
        if !self.checked {
            self.line(1, "#[unsafe]");
        }
        let before = self.written;
        for r in rebuild {
            self.line(1, &r);
        }
        let r = self.block(&e.body, 1);
        let mut parts = self.extract(&e.result, &r, 0);
        if counting {
            parts.push(self.count_since(0));
        }
        let value = match parts.len() {
            0 => "true".to_string(),
            1 => parts[0].clone(),
            _ => format!("({})", parts.join(", ")),
        };
        let lead = if self.written == before { "" } else { "in " };
        self.line(1, &format!("{lead}{value}"));
        self.line(0, "");
        Some(EntryAbi {
            id: e.id,
            name,
            params: e.params.iter().map(|v| v.ty.clone()).collect(),
            inputs,
            dummy_input,
            result: e.result.clone(),
            outputs,
            dummy_output,
            counts: counting,
        })
    }

    /// A value of type `t` from its leaf parameters; `n` is the length
    /// shared by the leaves of a sequence of records, `index` the element
    /// being built inside one.
    pub(super) fn assemble(
        &mut self,
        t: &Type,
        leaves: &mut impl Iterator<Item = String>,
        n: Option<&str>,
        index: &str,
    ) -> String {
        match t {
            Type::Unit => "()".into(),
            Type::Record(fields) => {
                let parts: Vec<(String, String)> =
                    fields.iter().map(|(l, ft)| (label(l), self.assemble(ft, leaves, n, index))).collect();
                if is_tuple(fields) {
                    format!("({})", parts.into_iter().map(|(_, v)| v).collect::<Vec<_>>().join(", "))
                } else {
                    let parts: Vec<String> = parts.into_iter().map(|(l, v)| format!("{l} = {v}")).collect();
                    format!("{{{}}}", parts.join(", "))
                }
            }
            Type::Seq(e) if has_record(e) && index.is_empty() => {
                let i = self.locals.fresh("i");
                let n = n.unwrap_or("0").to_string();
                let elem = self.assemble(e, leaves, Some(&n), &format!("[{i}]"));
                format!("map (\\{i} -> {elem}) (iota {n})")
            }
            _ => format!("{}{index}", leaves.next().unwrap_or_default()),
        }
    }

    /// The leaves of a value `v` of type `t` as expressions.
    pub(super) fn extract(&mut self, t: &Type, v: &str, depth: usize) -> Vec<String> {
        match t {
            Type::Unit => Vec::new(),
            Type::Record(fields) => {
                let mut out = Vec::new();
                for (l, ft) in fields {
                    let field = if is_tuple(fields) { l.to_string() } else { label(l) };
                    out.extend(self.extract(ft, &format!("{v}.{field}"), depth));
                }
                out
            }
            Type::Seq(e) if has_record(e) => {
                let x = format!("x{depth}");
                self.extract(e, &x, depth + 1).into_iter().map(|inner| format!("map (\\{x} -> {inner}) {v}")).collect()
            }
            _ => vec![v.to_string()],
        }
    }
}
