//! CUDA C++ from the lowered IR (`pmx_lower::Program` of the CUDA
//! backend): one self-contained translation unit.
//!
//! Layout of the unit: the prelude (`prelude.h`: the compatibility layer
//! that lets one source compile under nvcc, NVRTC and a plain C++
//! compiler, tensors, sequences, checked operations), the structs of
//! records and variants, prototypes and definitions of every function as
//! `__device__ __host__` code, one `__global__` kernel per parallel `loop`
//! in host code (a grid-stride loop), and each entry's host function.
//! Host code is an entry's body and, as the paper has it, what it calls
//! outside a kernel: a function that the host calls (directly, or as the
//! body of a `seqLoop`, `seqLoopAcc` or `foldl`) and that launches kernels
//! also gets a host version (`fnN_name_host`, [`host_functions`]), so a
//! library function whose `loop` the accelerated expression reaches
//! through calls runs in parallel. Parallel loops inside a kernel (in
//! functions called from a parallel `loop`'s body) are sequential loops.
//! A sequential loop whose accesses `hoist.rs` can test before it is
//! written twice: after the test, calling its body's unchecked version
//! (`fnN_name_u`, and the unchecked versions of what that calls);
//! otherwise as it is. An accumulation that iterations of a kernel may
//! make to the same cell (`pmx_lower::accumulate`) is one atomic update,
//! `pmx_tensor_atomic_OP`; its read is still written, for its check, its
//! value unused.
//!
//! The host ABI of an entry (what the engines call):
//! `int64_t pmx_entry_K(const pmx_arg *args, pmx_arg *result, const pmx_runtime *rt)`.
//! Parameters are flattened into `pmx_arg` slots, depth first
//! ([`leaves`]); the result likewise. A record takes its fields' slots; a
//! boxed sequence one slot pointing at its elements' slots; a value of a
//! variant type one slot holding its tag (the constructor's index) and
//! pointing at its payload's slots. It returns 0, or the location id of
//! the first failure ([`Generated::failures`]), or -1 for an error of the
//! engine: of the runtime's callbacks, or, in the unit compiled by nvcc,
//! of the CUDA runtime (a launch refused, a kernel that faulted), whose
//! text `pmx_cuda_error()` gives.

mod body;
mod hoist;
mod types;

use body::Body;
use pmx_ast::Span;
use pmx_lower::{Block, Callee, Expr, FnId, Program, Type};
use rustc_hash::FxHashSet;
use std::fmt::Write;
use types::{ident, Types};

pub const PRELUDE: &str = include_str!("prelude.h");

/// `print`, `printFloat` and `dprint` (`print.h`), in host and device code.
pub const PRINT: &str = include_str!("print.h");

/// What only host code needs (`host_prelude.h`): the argument slots of
/// the ABI, the runtime the GPU engine passes, the CPU launch of a kernel.
pub const HOST_PRELUDE: &str = include_str!("host_prelude.h");

/// Threads per block of the kernels: a multiple of the warp size that
/// keeps several blocks resident per multiprocessor.
pub const THREADS_PER_BLOCK: u32 = 256;

/// The most blocks of a launch (the grid-stride loops cover the rest):
/// the limit of a grid's y and z dimensions, and more blocks than any
/// device keeps resident at once, so a larger grid would not run faster.
pub const MAX_BLOCKS: u32 = 65535;

/// The blocks of `THREADS_PER_BLOCK` threads a launch over `n > 0`
/// iterations runs in (the generated nvcc launch computes the same).
pub fn blocks_for(n: i64) -> u32 {
    let tpb = THREADS_PER_BLOCK as i64;
    ((n + tpb - 1) / tpb).min(MAX_BLOCKS as i64) as u32
}

pub use pmx_lower::{Options, Unsupported};

/// One entry's symbol and what crosses it.
#[derive(Clone, Debug)]
pub struct EntryAbi {
    pub id: pmx_ast::NameId,
    pub symbol: String,
    pub params: Vec<Type>,
    pub result: Type,
    /// The program's variant types (what `Type::Variant` indexes).
    pub variants: std::sync::Arc<Vec<pmx_lower::VariantDef>>,
}

/// A kernel: its symbol (NVRTC looks it up) and its parameters' C types.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub symbol: String,
    pub params: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Generated {
    pub source: String,
    pub entries: Vec<EntryAbi>,
    pub kernels: Vec<Kernel>,
    /// Location id `k + 1` is `failures[k]`: where and what failed.
    pub failures: Vec<(Span, String)>,
}

/// The CUDA generator, at the seam (`pmx_lower::Generator`). Utests do
/// not run in CUDA-class code (only size constraints are checked), so
/// `Options::utests` is not read.
pub struct Cuda;

impl pmx_lower::Generator for Cuda {
    type Output = Generated;
    const BACKEND: pmx_accelerate::Backend = pmx_accelerate::Backend::Cuda;

    fn generate(
        &self,
        p: &Program,
        locate: &dyn Fn(Span) -> String,
        options: &Options,
    ) -> Result<Generated, Vec<Unsupported>> {
        generate(p, locate, options)
    }
}

impl pmx_lower::Generated for Generated {
    fn source(&self) -> &str {
        &self.source
    }

    fn bindings(&self) -> Vec<pmx_ast::NameId> {
        self.entries.iter().map(|e| e.id).collect()
    }
}

/// How many `pmx_arg` slots a value of type `t` takes (a sequence or a
/// variant one: what is inside it has slots of its own).
pub fn leaves(t: &Type) -> usize {
    match t {
        Type::Unit => 0,
        Type::Record(fields) => fields.iter().map(|(_, f)| leaves(f)).sum(),
        _ => 1,
    }
}

pub fn generate(
    p: &Program,
    locate: &dyn Fn(Span) -> String,
    options: &Options,
) -> Result<Generated, Vec<Unsupported>> {
    let mut types = Types::new(p);
    let host_fns = host_functions(p);
    let plan = if options.checked { hoist::analyse(p) } else { hoist::Plan::default() };
    let mut cx = Body::new(p, *options, host_fns.clone(), plan);
    cx.accumulations = pmx_lower::accumulate::find(p);
    let mut functions = String::new();
    let mut prototypes = String::new();
    let sites = call_sites(p);
    for f in &p.functions {
        let ret = types.c(&f.result);
        let params = params(&mut types, f);
        // A function called from one place (most are lambdas lifted from
        // loop bodies) is always inlined there: the C++ compiler would
        // otherwise often keep the call (a cold call site, or the frame of
        // the tensors passed by value), and the loop around it could not
        // be vectorised. Inlining it never duplicates code.
        let once = !f.recursive && sites.get(&f.id) == Some(&1);
        let kind = if once { "PMX_INLINE" } else { "PMX_FN" };
        let sig = format!("{kind} {ret} {}({})", fn_name(p, f.id), params.join(", "));
        let _ = writeln!(prototypes, "{sig};");
        let _ = writeln!(functions, "// {} at {}", f.source, locate(f.span));
        if !f.instance.is_empty() {
            let inst: Vec<String> = f.instance.iter().map(|(v, t)| format!("{v} = {t}")).collect();
            let _ = writeln!(functions, "// instance: {}", inst.join(", "));
        }
        let code = cx.function_body(&mut types, &f.body, &f.result, f.span);
        let _ = writeln!(functions, "{sig} {{\n{code}}}\n");
        if let Some(unchecked) = cx.plan.unchecked.get(&f.id).cloned() {
            // The version a loop calls once its accesses are known to be
            // in bounds (`hoist.rs`). Writing the body again reports its
            // unsupported constructs again: those are dropped.
            let sig = format!("{kind} {ret} {}_u({})", fn_name(p, f.id), params.join(", "));
            let _ = writeln!(prototypes, "{sig};");
            let _ = writeln!(functions, "// {} at {}, its loop's checks hoisted", f.source, locate(f.span));
            let errors = cx.errors.len();
            cx.unchecked = unchecked;
            let code = cx.function_body(&mut types, &f.body, &f.result, f.span);
            cx.unchecked.clear();
            cx.errors.truncate(errors);
            let _ = writeln!(functions, "{sig} {{\n{code}}}\n");
        }
    }
    // Host versions: prototypes first (they may call each other), then
    // their definitions.
    let mut host_protos = String::new();
    let mut host_defs = String::new();
    for f in p.functions.iter().filter(|f| host_fns.contains(&f.id)) {
        let ret = types.c(&f.result);
        let mut params = params(&mut types, f);
        params.push("const pmx_runtime *rt".into());
        let sig = format!("static {ret} {}_host({})", fn_name(p, f.id), params.join(", "));
        let _ = writeln!(host_protos, "{sig};");
        let _ = writeln!(host_defs, "// {} at {} (host code: its loops launch kernels)", f.source, locate(f.span));
        let code = cx.host_function_body(&mut types, &f.body, &f.result, f.span);
        let _ = writeln!(host_defs, "{sig} {{\n  (void)rt;\n{code}}}\n");
    }
    let mut entries = Vec::new();
    let mut hosts = String::new();
    let variants = std::sync::Arc::new(p.variants.clone());
    for (k, e) in p.entries.iter().enumerate() {
        let symbol = format!("pmx_entry_{k}");
        let _ = writeln!(hosts, "// {} at {}", e.name, locate(e.span));
        let mut code = String::from("  PMX_RESET_FAILED(rt);\n");
        let mut slot = 0;
        for v in &e.params {
            let _ = writeln!(
                code,
                "  {} {} = {};",
                types.c(&v.ty),
                body::var(v),
                cx.unpack(&mut types, &v.ty, &mut slot, e.span)
            );
        }
        let (stmts, result) = cx.entry_body(&mut types, &e.body, e.span);
        code.push_str(&stmts);
        let mut out = 0;
        code.push_str(&cx.pack(&e.result, &result, &mut out, e.span));
        code.push_str("  return pmx_read_failed();\n");
        let _ = writeln!(
            hosts,
            "extern \"C\" int64_t {symbol}(const pmx_arg *args, pmx_arg *result, const pmx_runtime *rt) {{\n  (void)args; (void)result; (void)rt;\n{code}}}\n"
        );
        entries.push(EntryAbi {
            id: e.id,
            symbol,
            params: e.params.iter().map(|v| v.ty.clone()).collect(),
            result: e.result.clone(),
            variants: variants.clone(),
        });
    }
    let mut errors: Vec<Unsupported> =
        types.errors.drain(..).map(|message| Unsupported { span: Span::BUILTIN, message }).collect();
    errors.append(&mut cx.errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut source = String::new();
    source.push_str("// Generated by pmx from the CUDA-class accelerate bindings of a program.\n");
    source.push_str(PRELUDE);
    source.push_str(PRINT);
    source.push_str(HOST_PRELUDE);
    source.push_str("\n// Records and variants.\n");
    source.push_str(&types.decls);
    let _ = writeln!(source, "\nstatic const bool pmx_checked = {};\n", options.checked);
    source.push_str("// Functions (device and host).\n");
    source.push_str(&prototypes);
    source.push('\n');
    source.push_str(&functions);
    source.push_str("// Kernels: one per parallel loop in host code.\n");
    source.push_str(&cx.kernels);
    if !cx.cpu_launchers.is_empty() {
        source.push_str("\n#if !defined(PMX_GPU) && !defined(PMX_HOST_LAUNCH)\n// CPU launchers: one per kernel.\n");
        source.push_str(&cx.cpu_launchers);
        source.push_str("#endif\n");
    }
    source.push_str("\n#if !defined(PMX_DEVICE_ONLY)\n// Host entries.\n");
    source.push_str(&cx.unpackers);
    if !host_protos.is_empty() {
        source.push_str("// Host versions of functions that launch kernels.\n");
        source.push_str(&host_protos);
        source.push('\n');
        source.push_str(&host_defs);
    }
    source.push_str(&hosts);
    source.push_str("#endif\n");
    Ok(Generated { source, entries, kernels: cx.kernel_list, failures: cx.failures })
}

/// A function's parameters in C (large values by reference:
/// `types::param`), for its device, unchecked and host versions alike.
fn params(types: &mut Types, f: &pmx_lower::Function) -> Vec<String> {
    f.params.iter().map(|v| types::param(&v.ty, &types.c(&v.ty), &body::var(v))).collect()
}

pub(crate) use pmx_lower::launch::{host_callee, host_functions};

/// The functions whose body `holds` of, given those found so far, to a
/// fixpoint (recursion).
fn fixpoint(p: &Program, holds: impl Fn(&Block, &FxHashSet<FnId>) -> bool) -> FxHashSet<FnId> {
    pmx_lower::fixpoint(&p.functions, FxHashSet::default(), holds)
}

/// The functions that may take a tensor's shape, themselves or through
/// what they call or loop over: of the values that code outside host code
/// gives host code, only theirs may point into a frame (host code copies
/// them where they escape, `body::escape::escaping_seqs`). Every other sequence
/// such code can return is a parameter's, in the call's memory.
pub fn shape_functions(p: &Program) -> FxHashSet<FnId> {
    fixpoint(p, |b, found| {
        b.any_stmt(|s| match &s.expr {
            Expr::Prim(pmx_ast::Builtin::TensorShape, _) => true,
            e => host_callee(e).is_some_and(|id| found.contains(&id)),
        })
    })
}

/// The functions that may read or write tensor data, themselves or
/// through what they call or loop over (host code waits for its kernels
/// before it runs one: `body::Body::block`).
pub fn data_functions(p: &Program) -> FxHashSet<FnId> {
    fixpoint(p, |b, found| b.stmts.iter().any(|s| touches_data(&s.expr, found)))
}

/// Whether a node may read or write tensor data, or print, given the
/// functions known to (`data`).
pub(crate) fn touches_data(e: &Expr, data: &FxHashSet<FnId>) -> bool {
    use pmx_ast::Builtin::*;
    // Printing counts: host code prints after the kernels before it, as
    // the interpreter does.
    uses(e, data, &|b| {
        matches!(b, TensorGetExn | TensorSetExn | TensorLinearGetExn | TensorLinearSetExn | Print | PrintFloat | Dprint)
    })
}

/// The functions that may print, themselves or through calls: a kernel
/// that may print runs its iterations in order on the CPU, as debug mode
/// prints them.
pub fn print_functions(p: &Program) -> FxHashSet<FnId> {
    fixpoint(p, |b, found| b.stmts.iter().any(|s| prints(&s.expr, found)))
}

/// Whether a node may print, given the functions known to (`printing`).
pub(crate) fn prints(e: &Expr, printing: &FxHashSet<FnId>) -> bool {
    use pmx_ast::Builtin::*;
    uses(e, printing, &|b| matches!(b, Print | PrintFloat | Dprint))
}

/// Whether a node may use a built-in that `builtin` picks, itself, in
/// the blocks inside it, or through the functions in `fns`.
fn uses(e: &Expr, fns: &FxHashSet<FnId>, builtin: &dyn Fn(pmx_ast::Builtin) -> bool) -> bool {
    match e {
        Expr::If { then, otherwise, .. } => {
            [then, otherwise].into_iter().any(|b| b.any_stmt(|s| uses_here(&s.expr, fns, builtin)))
        }
        e => uses_here(e, fns, builtin),
    }
}

/// [`uses`] of the node alone (an `If`'s blocks are not looked at).
fn uses_here(e: &Expr, fns: &FxHashSet<FnId>, builtin: &dyn Fn(pmx_ast::Builtin) -> bool) -> bool {
    let fun = |f: &pmx_lower::FunRef| match f.callee {
        Callee::Function(id) => fns.contains(&id),
        Callee::Builtin(b) => builtin(b),
        Callee::Math(_) => false,
        Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
    };
    match e {
        Expr::Prim(b, _) => builtin(*b),
        Expr::Call(id, _) => fns.contains(id),
        Expr::Map { f, .. }
        | Expr::Reduce { f, .. }
        | Expr::Foldl { f, .. }
        | Expr::Create { f, .. }
        | Expr::Loop { f, .. }
        | Expr::SeqLoopAcc { f, .. } => fun(f),
        Expr::Utest { using, on_fail, .. } => using.iter().chain(on_fail).any(fun),
        _ => false,
    }
}

/// How many calls and function references name each function.
fn call_sites(p: &Program) -> rustc_hash::FxHashMap<pmx_lower::FnId, usize> {
    let mut all = Vec::new();
    for f in &p.functions {
        pmx_lower::callees(&f.body, &mut all);
    }
    for e in &p.entries {
        pmx_lower::callees(&e.body, &mut all);
    }
    let mut out = rustc_hash::FxHashMap::default();
    for f in all {
        *out.entry(f).or_insert(0) += 1;
    }
    out
}

/// The C name of a function.
pub fn fn_name(p: &Program, id: pmx_lower::FnId) -> String {
    match p.function(id) {
        Some(f) => format!("fn{}_{}", id.0, ident(&f.name)),
        None => format!("fn{}", id.0),
    }
}

/// The C name of what a function reference calls (functions only; a
/// primitive is applied in place by the body generator).
pub fn callee_name(p: &Program, c: Callee) -> Option<String> {
    match c {
        Callee::Function(id) => Some(fn_name(p, id)),
        Callee::Builtin(_) | Callee::Math(_) => None,
        Callee::Value => unreachable!("{}", pmx_lower::HOST_ONLY),
    }
}
