//! Statements: function bodies (device and host code alike), entry bodies
//! (host code, whose parallel loops become kernel launches), and the
//! unpacking of parameters and packing of results at the host ABI. Here:
//! the statements; in `body/`: `escape.rs` (values of host code that must
//! be copied out of a frame), `prim.rs` (built-ins), `pack.rs` (the host
//! ABI).

mod escape;
mod pack;
mod prim;

use super::types::{field, ident, param, Types};
use super::{fn_name, Options, Unsupported, THREADS_PER_BLOCK};
use escape::{escaping_seqs, holds_seq, shape_of_local};
use pmx_ast::{Builtin, Span};
use pmx_lower::{Atom, Block, Callee, Expr, FnId, FunRef, Lit, Program, Type, Var, VarId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::fmt::Write;

/// The C name of a variable.
pub fn var(v: &Var) -> String {
    format!("v{}_{}", v.id.0, ident(&v.name))
}

pub struct Body<'p> {
    /// The program's string literals (`Program::string_literals`): what
    /// `error` says.
    strings: FxHashMap<VarId, String>,
    p: &'p Program,
    options: Options<'p>,
    pub kernels: String,
    /// One CPU launcher per kernel (host code of the CPU build).
    pub cpu_launchers: String,
    pub kernel_list: Vec<super::Kernel>,
    /// Host functions that unpack sequences of structured elements and
    /// variants, and that copy values holding shapes (`copier`).
    pub unpackers: String,
    unpacker_names: FxHashMap<Type, String>,
    /// The copiers of values that may hold a shape (`copier`), by type.
    copier_names: FxHashMap<Type, String>,
    pub failures: Vec<(Span, String)>,
    pub errors: Vec<Unsupported>,
    /// The storage of the sequence literals of the function being written:
    /// declared at the top of its body, so that a literal built inside a
    /// branch outlives the branch.
    frame: String,
    next: u32,
    /// The functions with a host version (`gen::host_functions`).
    host_fns: FxHashSet<FnId>,
    /// In a host function: the C type it returns (a failed launch makes it
    /// record the failure and return); in an entry: `None` (it returns the
    /// failure).
    host_result: Option<String>,
    /// In host code: the sequences copied into the call's memory
    /// (`escaping_seqs`).
    engine_seqs: FxHashSet<VarId>,
    /// The functions that may read or write tensor data
    /// (`gen::data_functions`).
    data_fns: FxHashSet<FnId>,
    /// The functions that may take a shape (`gen::shape_functions`).
    shape_fns: FxHashSet<FnId>,
    /// The functions that may print (`gen::print_functions`).
    print_fns: FxHashSet<FnId>,
    /// The bodies of sequential loops (`hoist::loop_bodies`), which the
    /// search for a kernel's row length does not follow into.
    loop_bodies: FxHashMap<FnId, usize>,
    /// The loops whose checks move before them and the functions with an
    /// unchecked version `fnN_name_u` (`hoist.rs`).
    pub plan: super::hoist::Plan,
    /// While writing an unchecked version (of a loop body, or of a
    /// function it calls): the statements written unchecked (accesses)
    /// or calling unchecked versions (calls).
    pub unchecked: FxHashSet<pmx_lower::VarId>,
    /// The statement being written.
    stmt: Option<pmx_lower::VarId>,
    /// The read-modify-writes that parallel loops run
    /// (`pmx_lower::accumulate`): those not provably of a different cell
    /// per iteration are written as atomic updates.
    pub accumulations: pmx_lower::accumulate::Accumulations,
}

fn scalar(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Float | Type::Bool | Type::Char)
}

impl<'p> Body<'p> {
    pub fn new(p: &'p Program, options: Options<'p>, host_fns: FxHashSet<FnId>, plan: super::hoist::Plan) -> Body<'p> {
        Body {
            strings: p.string_literals(),
            p,
            options,
            kernels: String::new(),
            cpu_launchers: String::new(),
            kernel_list: Vec::new(),
            unpackers: String::new(),
            unpacker_names: FxHashMap::default(),
            copier_names: FxHashMap::default(),
            failures: Vec::new(),
            errors: Vec::new(),
            frame: String::new(),
            next: 0,
            host_fns,
            host_result: None,
            engine_seqs: FxHashSet::default(),
            data_fns: super::data_functions(p),
            print_fns: super::print_functions(p),
            shape_fns: super::shape_functions(p),
            loop_bodies: super::hoist::loop_bodies(p),
            plan,
            unchecked: FxHashSet::default(),
            stmt: None,
            accumulations: Default::default(),
        }
    }

    fn fresh(&mut self, what: &str) -> String {
        self.next += 1;
        format!("{what}{}", self.next)
    }

    /// A location id for a failure at `span`.
    fn failure(&mut self, span: Span, what: impl Into<String>) -> usize {
        self.failures.push((span, what.into()));
        // The failure flag keeps a location id in 24 bits (`PMX_LOC`).
        if self.failures.len() == 1 << 24 {
            self.unsupported(span, "more than 16,777,215 places that may fail in one program".to_string());
        }
        self.failures.len()
    }

    fn unsupported(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(Unsupported { span, message: message.into() });
    }

    pub fn function_body(&mut self, types: &mut Types, b: &Block, result: &Type, span: Span) -> String {
        let mut code = String::new();
        let r = self.block(types, b, false, span, &mut code, 1);
        let _ = writeln!(code, "  return {r};");
        let frame = std::mem::take(&mut self.frame);
        if !frame.is_empty() && holds_seq(self.p, result, &mut Vec::new()) {
            // The literal's storage is this call's frame: returned, it
            // would point at memory the next call reuses.
            self.unsupported(
                span,
                "a CUDA function that builds a sequence literal and returns a sequence (the literal's storage ends with the call); build it in the caller or pass a tensor",
            );
        } else if holds_seq(self.p, result, &mut Vec::new()) && shape_of_local(b) {
            // Likewise a shape, which is a view of the dimensions of a
            // tensor view this call made.
            self.unsupported(
                span,
                "a CUDA function that takes the shape of a tensor view it made (a sub-tensor or a slice) and returns a sequence (the view ends with the call); take the shape in the caller",
            );
        }
        frame + &code
    }

    pub fn entry_body(&mut self, types: &mut Types, b: &Block, span: Span) -> (String, String) {
        let mut code = String::new();
        self.host_result = None;
        self.engine_seqs = escaping_seqs(self.p, b, &self.host_fns, &self.shape_fns);
        let r = self.block(types, b, true, span, &mut code, 1);
        (code, r)
    }

    /// The body of a function's host version: host code, whose parallel
    /// loops are launches.
    pub fn host_function_body(&mut self, types: &mut Types, b: &Block, result: &Type, span: Span) -> String {
        let mut code = String::new();
        self.host_result = Some(types.c(result));
        self.engine_seqs = escaping_seqs(self.p, b, &self.host_fns, &self.shape_fns);
        let r = self.block(types, b, true, span, &mut code, 1);
        self.host_result = None;
        let _ = writeln!(code, "  return {r};");
        code
    }

    /// The statement that leaves host code after a launch failed with the
    /// location id in `f`.
    fn leave(&self, f: &str) -> String {
        match &self.host_result {
            None => format!("return {f};"),
            Some(ct) if f == "pmx_launch_failed" => format!("return {ct}();"),
            Some(ct) => format!("{{ pmx_launch_failed = {f}; return {ct}(); }}"),
        }
    }

    /// Host code calling a host version: the call and the check after it.
    fn host_call(&mut self, id: FnId, bound: &[Atom], rest: &[String]) -> (String, String) {
        let mut args: Vec<String> = bound.iter().map(|a| self.atom(a)).collect();
        args.extend(rest.iter().cloned());
        args.push("rt".into());
        let call = format!("{}_host({})", fn_name(self.p, id), args.join(", "));
        (call, format!("if (pmx_launch_failed) {}", self.leave("pmx_launch_failed")))
    }

    /// A statement of host code that runs a function's host version (see
    /// `gen::host_functions`); false when `e` is not one.
    fn host_statement(&mut self, e: &Expr, ct: &str, name: &str, pad: &str, code: &mut String) -> bool {
        let Some(id) = super::host_callee(e).filter(|id| self.host_fns.contains(id)) else { return false };
        match e {
            Expr::Call(_, args) => {
                let (call, check) = self.host_call(id, args, &[]);
                let _ = writeln!(code, "{pad}{ct} {name} = {call};\n{pad}{check}");
            }
            Expr::Loop { n, f, .. } => {
                let i = self.fresh("i");
                let (call, check) = self.host_call(id, &f.bound, std::slice::from_ref(&i));
                let _ = writeln!(code, "{pad}pmx_unit {name} = pmx_unit();");
                let _ =
                    writeln!(code, "{pad}for (int64_t {i} = 0; {i} < {}; {i}++) {{ {call}; {check} }}", self.atom(n));
            }
            Expr::SeqLoopAcc { init, n, f } => {
                let i = self.fresh("i");
                let (call, check) = self.host_call(id, &f.bound, &[name.to_string(), i.clone()]);
                let _ = writeln!(code, "{pad}{ct} {name} = {};", self.atom(init));
                let _ = writeln!(
                    code,
                    "{pad}for (int64_t {i} = 0; {i} < {}; {i}++) {{ {name} = {call}; {check} }}",
                    self.atom(n)
                );
            }
            Expr::Foldl { f, init, seq } => {
                let i = self.fresh("i");
                let s = self.atom(seq);
                let (call, check) = self.host_call(id, &f.bound, &[name.to_string(), format!("{s}.data[{i}]")]);
                let _ = writeln!(code, "{pad}{ct} {name} = {};", self.atom(init));
                let _ =
                    writeln!(code, "{pad}for (int64_t {i} = 0; {i} < {s}.len; {i}++) {{ {name} = {call}; {check} }}");
            }
            _ => return false,
        }
        true
    }

    fn atom(&self, a: &Atom) -> String {
        match a {
            Atom::Var(v) => var(v),
            Atom::Lit(l) => lit(l),
        }
    }

    /// The statements of a block written into `code`; returns its result.
    fn block(
        &mut self,
        types: &mut Types,
        b: &Block,
        host: bool,
        span: Span,
        code: &mut String,
        depth: usize,
    ) -> String {
        let pad = "  ".repeat(depth);
        for s in &b.stmts {
            let ct = types.c(&s.var.ty);
            let name = var(&s.var);
            let span = if s.span == Span::BUILTIN { span } else { s.span };
            self.stmt = Some(s.var.id);
            if host && self.host_statement(&s.expr, &ct, &name, &pad, code) {
                continue;
            }
            // A statement of host code that may read or write tensor data
            // waits for the kernels launched before, which may still run
            // (see the prelude's `pmx_sync_host`): a tensor builtin, or
            // code that is not host code (a call, a sequential loop's
            // body), which never launches, so that one wait covers all it
            // does. Not a launch (it queues), a call of a host version (it
            // waits within) or a branch (its statements wait). After a
            // failure, host code leaves as it does after a launch.
            let waits = match &s.expr {
                Expr::Loop { parallel: true, .. } | Expr::If { .. } => false,
                e => super::touches_data(e, &self.data_fns),
            };
            if host && waits {
                let _ = writeln!(code, "{pad}{{ int64_t f = pmx_sync_host(); if (f) {} }}", self.leave("f"));
            }
            match &s.expr {
                e @ (Expr::Prim(Builtin::TensorShape, _) | Expr::Call(..))
                    if host && self.engine_seqs.contains(&s.var.id) =>
                {
                    let v = self.expr(types, e, span);
                    let copy = self.copier(types, &s.var.ty);
                    let _ = writeln!(code, "{pad}{ct} {name} = {copy}({v}, rt);");
                }
                Expr::If { cond, then, otherwise } => {
                    let _ = writeln!(code, "{pad}{ct} {name} = {ct}();");
                    let _ = writeln!(code, "{pad}if ({}) {{", self.atom(cond));
                    let r = self.block(types, then, host, span, code, depth + 1);
                    let _ = writeln!(code, "{pad}  {name} = {r};\n{pad}}} else {{");
                    let r = self.block(types, otherwise, host, span, code, depth + 1);
                    let _ = writeln!(code, "{pad}  {name} = {r};\n{pad}}}");
                }
                Expr::Seq(items) => {
                    let Some(elem) = s.var.ty.elem() else { continue };
                    let et = types.c(elem);
                    if items.is_empty() {
                        let _ = writeln!(code, "{pad}{ct} {name} = {{nullptr, 0}};");
                    } else {
                        let values: Vec<String> = items.iter().map(|a| self.atom(a)).collect();
                        if host {
                            let _ =
                                writeln!(code, "{pad}{et} {name}_data[{}] = {{{}}};", items.len(), values.join(", "));
                            // Host code may hand the sequence to a kernel
                            // (the GPU engine's memory is what the device
                            // sees) or return it (memory from the engine
                            // outlives the entry's frame): it is copied.
                            let _ = writeln!(
                                code,
                                "{pad}{ct} {name} = {{({et} *)rt->alloc(rt->ctx, (int64_t)sizeof {name}_data), {n}}};\n{pad}memcpy({name}.data, {name}_data, sizeof {name}_data);",
                                n = items.len()
                            );
                        } else {
                            let _ = writeln!(self.frame, "  {et} {name}_data[{}];", items.len());
                            for (i, v) in values.iter().enumerate() {
                                let _ = writeln!(code, "{pad}{name}_data[{i}] = {v};");
                            }
                            let _ = writeln!(code, "{pad}{ct} {name} = {{{name}_data, {}}};", items.len());
                        }
                    }
                }
                Expr::Con { tag, payload, .. } => {
                    let _ = writeln!(code, "{pad}{ct} {name} = {ct}();");
                    let _ = writeln!(code, "{pad}{name}.tag = {tag};\n{pad}{name}.c{tag} = {};", self.atom(payload));
                }
                Expr::Loop { n, f, parallel: true } if host => {
                    let _ = writeln!(code, "{pad}pmx_unit {name} = pmx_unit();");
                    self.launch(types, n, f, span, code, &pad);
                }
                Expr::Loop { n, f, .. } => {
                    let i = self.fresh("i");
                    let _ = writeln!(code, "{pad}pmx_unit {name} = pmx_unit();");
                    let count = self.atom(n);
                    let each = |call: &str| format!("for (int64_t {i} = 0; {i} < {count}; {i}++) {call};");
                    self.sequential_loop(n, f, std::slice::from_ref(&i), each, span, code, &pad);
                }
                Expr::SeqLoopAcc { init, n, f } => {
                    let i = self.fresh("i");
                    let _ = writeln!(code, "{pad}{ct} {name} = {};", self.atom(init));
                    let count = self.atom(n);
                    let each = |call: &str| format!("for (int64_t {i} = 0; {i} < {count}; {i}++) {name} = {call};");
                    self.sequential_loop(n, f, &[name.clone(), i.clone()], each, span, code, &pad);
                    self.copy_if_escaping(types, &s.var, host, code, &pad);
                }
                Expr::Foldl { f, init, seq } => {
                    let i = self.fresh("i");
                    let sq = self.atom(seq);
                    let call = self.call(f, &[name.clone(), format!("{sq}.data[{i}]")], span);
                    let _ = writeln!(code, "{pad}{ct} {name} = {};", self.atom(init));
                    let _ = writeln!(code, "{pad}for (int64_t {i} = 0; {i} < {sq}.len; {i}++) {name} = {call};");
                    self.copy_if_escaping(types, &s.var, host, code, &pad);
                }
                Expr::SizeEq { seq, dim, size } => {
                    let loc = self.failure(span, "a size constraint does not hold");
                    let mut s = self.atom(seq);
                    for _ in 0..*dim {
                        s = format!("{s}.data[0]");
                    }
                    let _ = writeln!(code, "{pad}pmx_unit {name} = pmx_unit();");
                    let _ = writeln!(code, "{pad}if ({s}.len != {}) pmx_fail({loc});", self.atom(size));
                }
                Expr::Never => {
                    let loc = self.failure(span, "Reached a never term, which should be impossible");
                    let _ = writeln!(code, "{pad}pmx_fail({loc});\n{pad}{ct} {name} = {ct}();");
                }
                Expr::Prim(Builtin::Error, args) => {
                    let what = pmx_lower::error_text(&self.strings, &args[0]);
                    let loc = self.failure(span, what);
                    let _ = writeln!(code, "{pad}pmx_fail({loc});\n{pad}{ct} {name} = {ct}();");
                }
                // A variable, or a part of one, is bound by reference
                // where its type is large (`types::by_ref`); what it
                // names is never changed afterwards.
                other @ (Expr::Atom(Atom::Var(_)) | Expr::Project(..) | Expr::Payload { .. }) => {
                    let e = self.expr(types, other, span);
                    let _ = writeln!(code, "{pad}{} = {e};", param(&s.var.ty, &ct, &name));
                }
                other => {
                    let e = self.expr(types, other, span);
                    let _ = writeln!(code, "{pad}{ct} {name} = {e};");
                }
            }
        }
        self.atom(&b.result)
    }

    fn expr(&mut self, types: &mut Types, e: &Expr, span: Span) -> String {
        match e {
            Expr::Atom(a) => self.atom(a),
            Expr::Prim(Builtin::Dprint, args) => {
                let a = self.atom(&args[0]);
                match args[0].ty() {
                    Type::Int => format!("pmx_dprint_int({a})"),
                    Type::Float => format!("pmx_print_float({a})"),
                    Type::Bool => format!("pmx_dprint_bool({a})"),
                    Type::Char => format!("pmx_dprint_char({a})"),
                    Type::Seq(e) if *e == Type::Char => format!("pmx_dprint_string({a})"),
                    t => {
                        self.unsupported(span, format!("`dprint` of a value of type {t} is not supported in CUDA-class code (only of scalars and strings)"));
                        "pmx_unit()".into()
                    }
                }
            }
            Expr::Prim(b, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                self.prim(*b, &args, span)
            }
            Expr::Math(m, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                format!("{}({})", m.name(), args.join(", "))
            }
            Expr::Call(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.atom(a)).collect();
                // In an unchecked version, a call whose callee's accesses
                // are proven too calls the callee's unchecked version.
                let u = if self.stmt.is_some_and(|v| self.unchecked.contains(&v)) { "_u" } else { "" };
                format!("{}{u}({})", fn_name(self.p, *f), args.join(", "))
            }
            Expr::Record(fields) => {
                let t = Type::Record(fields.iter().map(|(l, a)| (l.clone(), a.ty())).collect());
                let ct = types.c(&t);
                let values: Vec<String> = fields.iter().map(|(_, a)| self.atom(a)).collect();
                format!("{ct}{{{}}}", values.join(", "))
            }
            Expr::Project(a, label) => format!("{}.{}", self.atom(a), field(label)),
            Expr::IsCon { value, tag, .. } => format!("({}.tag == {tag})", self.atom(value)),
            Expr::Payload { value, tag, .. } => format!("{}.c{tag}", self.atom(value)),
            Expr::Map { .. } | Expr::Reduce { .. } | Expr::Create { .. } | Expr::Flatten(_) => {
                self.unsupported(span, "`map`, `reduce`, `create` and `flatten` are Futhark-class, not CUDA code");
                "0".into()
            }
            Expr::SizeCoerce { seq, .. } => self.atom(seq),
            Expr::Utest { .. } => {
                self.unsupported(span, "utests inside CUDA-class code are not supported");
                "pmx_unit()".into()
            }
            // Statement forms are handled by `block`.
            _ => {
                self.unsupported(span, "this construct cannot be generated here");
                "0".into()
            }
        }
    }

    /// A sequential loop (`seqLoop`, `seqLoopAcc`, or `loop` where it runs
    /// sequentially) calling `f` with `rest` after its bound arguments;
    /// `each` writes the loop around a call. Where `hoist.rs` found checks
    /// to hoist, the loop is written twice: unchecked after a test of both
    /// ends, else checked.
    #[allow(clippy::too_many_arguments)]
    fn sequential_loop(
        &mut self,
        n: &Atom,
        f: &FunRef,
        rest: &[String],
        each: impl Fn(&str) -> String,
        span: Span,
        code: &mut String,
        pad: &str,
    ) {
        let call = self.call(f, rest, span);
        let hoisted = match f.callee {
            Callee::Function(id) if self.options.checked => self.plan.loops.get(&id).map(|h| (id, h)),
            _ => None,
        };
        let Some((id, h)) = hoisted else {
            let _ = writeln!(code, "{pad}{}", each(&call));
            return;
        };
        let bound: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
        let test = h.condition(&bound, &self.atom(n));
        let mut args = bound;
        args.extend(rest.iter().cloned());
        let unchecked = format!("{}_u({})", fn_name(self.p, id), args.join(", "));
        let _ = writeln!(code, "{pad}if ({test})\n{pad}  {}\n{pad}else\n{pad}  {}", each(&unchecked), each(&call));
    }

    /// A call of a function reference with the remaining arguments.
    fn call(&mut self, f: &FunRef, rest: &[String], span: Span) -> String {
        let mut args: Vec<String> = f.bound.iter().map(|a| self.atom(a)).collect();
        args.extend(rest.iter().cloned());
        match f.callee {
            Callee::Function(id) => format!("{}({})", fn_name(self.p, id), args.join(", ")),
            Callee::Math(m) => format!("{}({})", m.name(), args.join(", ")),
            Callee::Builtin(b) => self.prim(b, &args, span),
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        }
    }

    /// A kernel for `loop n f` and its launch from host code.
    fn launch(&mut self, types: &mut Types, n: &Atom, f: &FunRef, span: Span, code: &mut String, pad: &str) {
        let k = self.kernel_list.len();
        let symbol = format!("pmx_kernel_{k}");
        let params: Vec<(String, String)> =
            f.bound.iter().enumerate().map(|(j, a)| (types.c(&a.ty()), format!("b{j}"))).collect();
        let bound_names: Vec<String> = params.iter().map(|(_, n)| n.clone()).collect();
        let fake = FunRef { callee: f.callee, bound: Vec::new(), params: f.params.clone(), result: f.result.clone() };
        let mut inner_args = bound_names.clone();
        inner_args.push("i".into());
        let call = match fake.callee {
            Callee::Function(id) => format!("{}({})", fn_name(self.p, id), inner_args.join(", ")),
            Callee::Math(m) => format!("{}({})", m.name(), inner_args.join(", ")),
            Callee::Builtin(b) => self.prim(b, &inner_args, span),
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        };
        let mut decl: Vec<String> = params.iter().map(|(t, n)| format!("{t} {n}")).collect();
        decl.push("int64_t n".into());
        decl.push("int64_t w".into());
        decl.push("int64_t e".into());
        // `w`: the row length to run in tiles of rows (the prelude's
        // `pmx_tile_width`), 0 for a grid-stride loop over the iterations;
        // tiles need whole warps (the CPU runs blocks of one thread).
        let _ = writeln!(
            self.kernels,
            "PMX_GLOBAL void {symbol}({}) {{\n  PMX_KERNEL_BEGIN(e);\n  if (w > 0 && blockDim.x % 32 == 0) {{\n    int64_t across = (w + 31) / 32, rows = blockDim.x / 32;\n    int64_t tiles = across * (((n + w - 1) / w + rows - 1) / rows);\n    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {{\n      int64_t i = pmx_tile_index(t, across, w, n);\n      if (i >= 0) {{ PMX_ITERATION(i); {call}; }}\n    }}\n    PMX_KERNEL_END();\n    return;\n  }}\n  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {{ PMX_ITERATION(i); {call}; }}\n  PMX_KERNEL_END();\n}}",
            decl.join(", ")
        );
        let mut ctypes: Vec<String> = params.iter().map(|(t, _)| t.clone()).collect();
        ctypes.push("int64_t".into());
        ctypes.push("int64_t".into());
        ctypes.push("int64_t".into());
        self.kernel_list.push(super::Kernel { symbol: symbol.clone(), params: ctypes });
        // The launch: values in named temporaries (their addresses go to
        // the GPU engine), then the three ways of launching.
        let _ = writeln!(code, "{pad}{{");
        for ((t, name), a) in params.iter().zip(&f.bound) {
            let _ = writeln!(code, "{pad}  {t} {name} = {};", self.atom(a));
        }
        let _ = writeln!(code, "{pad}  int64_t n = {};", self.atom(n));
        let width = match f.callee {
            Callee::Function(id) => super::hoist::row_length(self.p, &self.loop_bodies, id, &bound_names),
            _ => None,
        };
        let _ = writeln!(code, "{pad}  int64_t w = pmx_tile_width({}, n);", width.as_deref().unwrap_or("0"));
        let _ = writeln!(code, "{pad}  int64_t e = ++pmx_launches;");
        let mut all = bound_names.clone();
        all.push("n".into());
        all.push("w".into());
        all.push("e".into());
        let addrs: Vec<String> = all.iter().map(|a| format!("(void *)&{a}")).collect();
        // Under nvcc the host code launches itself. Otherwise the launch
        // goes through `ps`, the addresses of the values: to the engine's
        // callback in the GPU engine's host library (not after a failure
        // of host code, so the first failure is the one reported), or to
        // this kernel's CPU launcher.
        let _ = writeln!(
            code,
            "#if defined(__CUDACC__)\n{pad}  int64_t blocks = (n + {tpb} - 1) / {tpb};\n{pad}  if (blocks > {max_blocks}) blocks = {max_blocks};\n{pad}  if (pmx_host_failed) {{ int64_t f = pmx_host_failed; {leave} }}\n{pad}  if (blocks > 0) {{ {symbol}<<<(unsigned)blocks, {tpb}>>>({args}); pmx_pending = true; }}\n#else\n{pad}  void *ps[] = {{{addrs}}};\n#if defined(PMX_HOST_LAUNCH)\n{pad}  int64_t f = pmx_failed ? pmx_failed : rt->launch(rt->ctx, {k}, ps, {count}, n);\n{pad}  pmx_pending = true;\n#else\n{pad}  int64_t f = pmx_cpu_launch_{k}(ps, n);\n#endif\n{pad}  if (f) {leave}\n#endif",
            tpb = THREADS_PER_BLOCK,
            max_blocks = super::MAX_BLOCKS,
            args = all.join(", "),
            addrs = addrs.join(", "),
            count = all.len(),
            leave = self.leave("f"),
        );
        // The CPU launcher: each OpenMP thread is one block of one thread
        // of the grid. It is exported, with a launcher that runs the grid
        // a device would (blocks of whole warps, their threads one after
        // another), and the sizes of the arguments, so that the GPU
        // engine's host code can be driven with kernels run on the CPU as
        // on a device (`gpu::cpu_kernels`).
        let mut loads: Vec<String> =
            params.iter().enumerate().map(|(j, (t, name))| format!("  {t} {name} = *({t} *)ps[{j}];\n")).collect();
        loads.push(format!("  int64_t w = *(int64_t *)ps[{}];\n", params.len() + 1));
        loads.push(format!("  int64_t e = *(int64_t *)ps[{}];\n", params.len() + 2));
        let sizes: Vec<String> = params.iter().map(|(t, _)| format!("(int64_t)sizeof({t})")).collect();
        // A kernel that may print runs on one thread, its iterations in
        // order: its output is then debug mode's.
        let prints = match f.callee {
            Callee::Function(id) => self.print_fns.contains(&id),
            Callee::Builtin(b) => matches!(b, Builtin::Print | Builtin::PrintFloat | Builtin::Dprint),
            Callee::Math(_) => false,
            Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
        };
        let one = if prints { " if(0)" } else { "" };
        let _ = writeln!(
            self.cpu_launchers,
            "extern \"C\" const int64_t pmx_cpu_sizes_{k}[] = {{{sizes}(int64_t)sizeof(int64_t), (int64_t)sizeof(int64_t), (int64_t)sizeof(int64_t)}};\nextern \"C\" int64_t pmx_cpu_launch_{k}(void **ps, int64_t n) {{\n  (void)ps;\n{loads}  #pragma omp parallel{one}\n  {{\n    pmx_cpu_thread();\n    {symbol}({args});\n  }}\n  return PMX_LOC(pmx_failed);\n}}\nextern \"C\" int64_t pmx_cpu_grid_{k}(void **ps, int64_t n, int64_t blocks, int64_t threads) {{\n  (void)ps;\n{loads}  #pragma omp parallel for schedule(dynamic, 1){one}\n  for (int64_t b = 0; b < blocks; b++) {{\n    pmx_grid_thread(b, blocks, threads);\n    for (int64_t t = 0; t < threads; t++) {{\n      threadIdx.x = (unsigned)t;\n      {symbol}({args});\n    }}\n  }}\n  return PMX_LOC(pmx_failed);\n}}",
            sizes = sizes.iter().map(|s| format!("{s}, ")).collect::<String>(),
            loads = loads.concat(),
            args = all.join(", "),
        );
        let _ = writeln!(code, "{pad}}}");
    }
}

/// A literal in C.
pub(super) fn lit(l: &Lit) -> String {
    match l {
        Lit::Int(i) if *i == i64::MIN => "(int64_t)(-9223372036854775807LL - 1)".into(),
        Lit::Int(i) => format!("(int64_t){i}LL"),
        Lit::Float(f) if f.is_nan() => "(0.0 / 0.0)".into(),
        Lit::Float(f) if f.is_infinite() => if *f > 0.0 { "(1.0 / 0.0)" } else { "(-1.0 / 0.0)" }.into(),
        // Parenthesised, so that a negation before it is not `--`.
        Lit::Float(f) if f.is_sign_negative() => format!("({f:?})"),
        Lit::Float(f) => format!("{f:?}"),
        Lit::Bool(b) => b.to_string(),
        Lit::Char(c) => format!("(uint32_t){}", *c as u32),
        Lit::Unit => "pmx_unit()".into(),
    }
}
