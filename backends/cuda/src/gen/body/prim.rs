//! Primitives: a built-in applied to atoms, as C++ (with the bounds and
//! division checks the code keeps).

use super::*;

impl Body<'_> {
    pub(super) fn prim(&mut self, b: Builtin, a: &[String], span: Span) -> String {
        use Builtin::*;
        // An access whose check `hoist.rs` moved before its loop is
        // unchecked in the body's unchecked version.
        let hoisted = self.stmt.is_some_and(|v| self.unchecked.contains(&v));
        let chk = if self.options.checked && !hoisted { "pmx_checked" } else { "false" };
        let wrap = |op: &str| format!("PMX_{op}({}, {})", a[0], a[1]);
        let bin = |op: &str| format!("({} {op} {})", a[0], a[1]);
        match b {
            Addi => wrap("ADDI"),
            Subi => wrap("SUBI"),
            Muli => wrap("MULI"),
            Divi => {
                let loc = self.failure(span, "Division by zero");
                format!("pmx_divi({}, {}, {loc})", a[0], a[1])
            }
            Modi => {
                let loc = self.failure(span, "Division by zero");
                format!("pmx_modi({}, {}, {loc})", a[0], a[1])
            }
            Negi => format!("PMX_NEGI({})", a[0]),
            Slli => format!("pmx_slli({}, {})", a[0], a[1]),
            Srli => format!("pmx_srli({}, {})", a[0], a[1]),
            Srai => format!("pmx_srai({}, {})", a[0], a[1]),
            Eqi | Eqf | Eqc => bin("=="),
            Neqi | Neqf => bin("!="),
            Lti | Ltf => bin("<"),
            Gti | Gtf => bin(">"),
            Leqi | Leqf => bin("<="),
            Geqi | Geqf => bin(">="),
            Addf => bin("+"),
            Subf => bin("-"),
            Mulf => bin("*"),
            Divf => bin("/"),
            Negf => format!("(-{})", a[0]),
            Int2float => format!("(double){}", a[0]),
            Floorfi => format!("pmx_floorfi({})", a[0]),
            Ceilfi => format!("pmx_ceilfi({})", a[0]),
            Roundfi => format!("pmx_roundfi({})", a[0]),
            Char2int => format!("(int64_t){}", a[0]),
            Int2char => {
                let loc = self.failure(span, "int2char: not the code of a character");
                format!("pmx_int2char({}, {loc}, {chk})", a[0])
            }
            Length => format!("{}.len", a[0]),
            Get => {
                let loc = self.failure(span, "Out of bounds access in sequence");
                format!("pmx_seq_get({}, {}, {loc}, {chk})", a[0], a[1])
            }
            Head => {
                let loc = self.failure(span, "Head on empty sequence");
                format!("pmx_seq_get({}, 0, {loc}, {chk})", a[0])
            }
            Null => format!("({}.len == 0)", a[0]),
            TensorGetExn => {
                let loc = self.failure(span, "Invalid indices used to access tensor");
                format!("pmx_tensor_get({}, {}, {loc}, {chk})", a[0], a[1])
            }
            TensorSetExn => {
                let loc = self.failure(span, "Invalid indices used to access tensor");
                // An accumulation that iterations may make to the same
                // cell at once: one atomic update of the cell with the
                // operand (the read it replaces is still written, for its
                // check, and its value left unused).
                let atomic = self.stmt.and_then(|v| self.accumulations.atomic(v));
                match atomic.map(|acc| (acc.op, acc.value.clone())) {
                    Some((op, value)) => format!(
                        "pmx_tensor_atomic_{}({}, {}, {}, {loc}, {chk})",
                        op.name(),
                        a[0],
                        a[1],
                        self.atom(&value)
                    ),
                    None => format!("pmx_tensor_set({}, {}, {}, {loc}, {chk})", a[0], a[1], a[2]),
                }
            }
            TensorLinearGetExn => {
                let loc = self.failure(span, "Out of bounds access in tensor");
                format!("pmx_tensor_linear_get({}, {}, {loc}, {chk})", a[0], a[1])
            }
            TensorLinearSetExn => {
                let loc = self.failure(span, "Out of bounds access in tensor");
                format!("pmx_tensor_linear_set({}, {}, {}, {loc}, {chk})", a[0], a[1], a[2])
            }
            Print => format!("pmx_print({})", a[0]),
            FlushStdout => "pmx_flush()".into(),
            PrintFloat => format!("pmx_print_float({})", a[0]),
            TensorRank => format!("{}.rank", a[0]),
            TensorShape => format!("pmx_seq<int64_t>{{(int64_t *){}.dims, {}.rank}}", a[0], a[0]),
            TensorSubExn => {
                let loc = self.failure(span, "Subtensor out of bounds");
                format!("pmx_tensor_sub({}, {}, {}, {loc}, {chk})", a[0], a[1], a[2])
            }
            TensorSliceExn => {
                let loc = self.failure(span, "Invalid indices used to slice tensor");
                format!("pmx_tensor_slice({}, {}, {loc}, {chk})", a[0], a[1])
            }
            other => {
                self.unsupported(span, format!("`{}` is not supported in CUDA-class code", other.name()));
                "0".into()
            }
        }
    }
}
