//! The host ABI: unpacking an entry's parameters from its slots and
//! packing its result into them (records, sequences and variants as
//! nested slot arrays).

use super::*;

impl Body<'_> {
    /// The expression that unpacks a value of type `t` from slots
    /// `args[*slot..]`.
    pub fn unpack(&mut self, types: &mut Types, t: &Type, slot: &mut usize, span: Span) -> String {
        self.unpack_from(types, t, "args", slot, span)
    }

    pub(super) fn unpack_from(
        &mut self,
        types: &mut Types,
        t: &Type,
        base: &str,
        slot: &mut usize,
        span: Span,
    ) -> String {
        let k = *slot;
        let out = match t {
            Type::Int => format!("{base}[{k}].i"),
            Type::Float => format!("{base}[{k}].f"),
            Type::Bool => format!("({base}[{k}].i != 0)"),
            Type::Char => format!("(uint32_t){base}[{k}].i"),
            Type::Unit => return "pmx_unit()".into(),
            Type::Tensor(e) => format!("pmx_unpack_tensor<{}>(&{base}[{k}])", types.c(e)),
            Type::Seq(e) if scalar(e) => {
                let et = types.c(e);
                format!("pmx_seq<{et}>{{({et} *){base}[{k}].p, {base}[{k}].len}}")
            }
            Type::Seq(e) => {
                let f = self.unpacker(types, t, e, span);
                format!("{f}(&{base}[{k}], rt)")
            }
            Type::Record(fields) => {
                let ct = types.c(t);
                let parts: Vec<String> =
                    fields.iter().map(|(_, ft)| self.unpack_from(types, ft, base, slot, span)).collect();
                return format!("{ct}{{{}}}", parts.join(", "));
            }
            Type::Variant(_) => {
                let f = self.variant_unpacker(types, t, span);
                format!("{f}(&{base}[{k}], rt)")
            }
            Type::Fun(..) | Type::Opaque(..) => unreachable!("{}", pmx_lower::HOST_ONLY),
        };
        *slot += 1;
        out
    }

    /// A host function unpacking a value of variant type `t`: its slot
    /// holds the tag and points at the slots of the payload (see
    /// `marshal.rs`).
    pub(super) fn variant_unpacker(&mut self, types: &mut Types, t: &Type, span: Span) -> String {
        if let Some(n) = self.unpacker_names.get(t) {
            return n.clone();
        }
        let Type::Variant(id) = t else { unreachable!("only variant types") };
        let name = format!("pmx_unpack_{}", self.unpacker_names.len());
        self.unpacker_names.insert(t.clone(), name.clone());
        let ct = types.c(t);
        let mut cases = String::new();
        let constructors = self.p.variant(*id).map(|d| d.constructors.clone()).unwrap_or_default();
        for (k, c) in constructors.iter().enumerate() {
            let mut slot = 0;
            let payload = self.unpack_from(types, &c.payload, "e", &mut slot, span);
            let _ = writeln!(cases, "  case {k}: v.c{k} = {payload}; break;");
        }
        let _ = writeln!(
            self.unpackers,
            "static {ct} {name}(const pmx_arg *a, const pmx_runtime *rt) {{\n  {ct} v = {ct}();\n  const pmx_arg *e = (const pmx_arg *)a->p;\n  (void)e;\n  (void)rt;\n  v.tag = a->i;\n  switch (v.tag) {{\n{cases}  }}\n  return v;\n}}\n"
        );
        name
    }

    /// A host function unpacking a sequence of structured elements (the
    /// slot points at `len * leaves(elem)` slots, element by element).
    pub(super) fn unpacker(&mut self, types: &mut Types, t: &Type, elem: &Type, span: Span) -> String {
        if let Some(n) = self.unpacker_names.get(t) {
            return n.clone();
        }
        let name = format!("pmx_unpack_{}", self.unpacker_names.len());
        self.unpacker_names.insert(t.clone(), name.clone());
        let (ct, et) = (types.c(t), types.c(elem));
        let width = crate::gen::leaves(elem);
        let mut slot = 0;
        let element = self.unpack_from(types, elem, "e", &mut slot, span);
        let _ = writeln!(
            self.unpackers,
            "static {ct} {name}(const pmx_arg *a, const pmx_runtime *rt) {{\n  {ct} s;\n  s.len = a->len;\n  s.data = ({et} *)rt->alloc(rt->ctx, s.len * (int64_t)sizeof({et}));\n  for (int64_t k = 0; k < s.len; k++) {{\n    const pmx_arg *e = (const pmx_arg *)a->p + k * {width};\n    (void)e;\n    s.data[k] = {element};\n  }}\n  return s;\n}}\n"
        );
        name
    }

    /// Statements that write a result of type `t` (the C expression `v`)
    /// into `result[*slot..]`.
    pub fn pack(&mut self, t: &Type, v: &str, slot: &mut usize, span: Span) -> String {
        self.pack_into(t, v, "result", slot, span, "  ")
    }

    /// `pack` into the slot array `base`, each statement indented by `pad`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pack_into(
        &mut self,
        t: &Type,
        v: &str,
        base: &str,
        slot: &mut usize,
        span: Span,
        pad: &str,
    ) -> String {
        let k = *slot;
        let out = match t {
            Type::Unit => return String::new(),
            Type::Int | Type::Bool | Type::Char => format!("{pad}{base}[{k}].i = (int64_t){v};\n"),
            Type::Float => format!("{pad}{base}[{k}].f = {v};\n"),
            // The elements stay where they are (a parameter's, or memory
            // from `rt->alloc`, alive until the engine has read them).
            Type::Seq(e) if scalar(e) => {
                format!("{pad}{base}[{k}].p = (void *){v}.data;\n{pad}{base}[{k}].len = {v}.len;\n")
            }
            Type::Record(fields) => {
                let mut out = String::new();
                for (l, ft) in fields {
                    out.push_str(&self.pack_into(ft, &format!("{v}.{}", field(l)), base, slot, span, pad));
                }
                return out;
            }
            // The tag, and the payload in slots from the engine's memory
            // (as many as the widest payload needs).
            Type::Variant(id) => {
                let constructors = self.p.variant(*id).map(|d| d.constructors.clone()).unwrap_or_default();
                let width = constructors.iter().map(|c| crate::gen::leaves(&c.payload)).max().unwrap_or(0);
                let mut out = format!("{pad}{base}[{k}].i = {v}.tag;\n");
                if width > 0 {
                    let n = self.fresh("n");
                    let _ = writeln!(
                        out,
                        "{pad}pmx_arg *{n} = (pmx_arg *)rt->alloc(rt->ctx, {width} * (int64_t)sizeof(pmx_arg));\n{pad}{base}[{k}].p = (void *){n};\n{pad}switch ({v}.tag) {{"
                    );
                    let inner = format!("{pad}  ");
                    for (c, con) in constructors.iter().enumerate() {
                        let mut at = 0;
                        let payload = format!("{v}.c{c}");
                        let code = self.pack_into(&con.payload, &payload, &n, &mut at, span, &inner);
                        // Braces: a nested variant's payload declares
                        // its slot array inside the case.
                        let _ = writeln!(out, "{pad}case {c}: {{\n{code}{inner}break;\n{pad}}}");
                    }
                    let _ = writeln!(out, "{pad}}}");
                }
                out
            }
            _ => {
                let shown = self.p.type_name(t);
                self.unsupported(span, format!("a result of type {shown} cannot come back from CUDA code yet"));
                String::new()
            }
        };
        *slot += 1;
        out
    }
}
