//! CUDA C++ from the lowered IR (`pmx_lower::Program` of the CUDA
//! backend): one self-contained translation unit.
//!
//! Layout of the unit: the prelude (`prelude.h`: the compatibility layer
//! that lets one source compile under nvcc, NVRTC and a plain C++
//! compiler, tensors, sequences, checked operations), the structs of
//! records and variants, prototypes and definitions of every function as
//! `__device__ __host__` code, one `__global__` kernel per parallel `loop`
//! on an entry's top level (a grid-stride loop), and each entry's host
//! function. Parallel loops anywhere else (inside functions, which run in
//! a kernel) are sequential loops.
//!
//! The host ABI of an entry (what the engines call):
//! `int64_t pmx_entry_K(const pmx_arg *args, pmx_arg *result, const pmx_runtime *rt)`.
//! Parameters are flattened into `pmx_arg` slots, depth first
//! ([`leaves`]); the result likewise. A record takes its fields' slots; a
//! boxed sequence one slot pointing at its elements' slots; a value of a
//! variant type one slot holding its tag (the constructor's index) and
//! pointing at its payload's slots. It returns 0, or the location id of
//! the first failure ([`Generated::failures`]).

mod body;
mod types;

use body::Body;
use pmx_ast::Span;
use pmx_lower::{Callee, Program, Type};
use std::fmt::Write;
use types::{ident, Types};

pub const PRELUDE: &str = include_str!("prelude.h");

/// Threads per block of the kernels: a multiple of the warp size that
/// keeps several blocks resident per multiprocessor.
pub const THREADS_PER_BLOCK: u32 = 256;

/// The most blocks of a launch (the grid-stride loops cover the rest):
/// the limit of a grid's y and z dimensions, and more blocks than any
/// device keeps resident at once, so a larger grid would not run faster.
pub const MAX_BLOCKS: u32 = 65535;

#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Bounds, rank and division checks (`--unchecked` drops them).
    pub checked: bool,
}

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

/// An error of the generator: a construct it does not take, where.
#[derive(Clone, Debug)]
pub struct Unsupported {
    pub span: Span,
    pub message: String,
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

pub fn generate(p: &Program, locate: &dyn Fn(Span) -> String, options: Options) -> Result<Generated, Vec<Unsupported>> {
    let mut types = Types::new(p);
    let mut cx = Body::new(p, options);
    let mut functions = String::new();
    let mut prototypes = String::new();
    for f in &p.functions {
        let ret = types.c(&f.result);
        let params: Vec<String> = f.params.iter().map(|v| format!("{} {}", types.c(&v.ty), body::var(v))).collect();
        let sig = format!("PMX_FN {ret} {}({})", fn_name(p, f.id), params.join(", "));
        let _ = writeln!(prototypes, "{sig};");
        let _ = writeln!(functions, "// {} at {}", f.source, locate(f.span));
        if !f.instance.is_empty() {
            let inst: Vec<String> = f.instance.iter().map(|(v, t)| format!("{v} = {t}")).collect();
            let _ = writeln!(functions, "// instance: {}", inst.join(", "));
        }
        let code = cx.function_body(&mut types, &f.body, &f.result, f.span);
        let _ = writeln!(functions, "{sig} {{\n{code}}}\n");
    }
    let mut entries = Vec::new();
    let mut hosts = String::new();
    let variants = std::sync::Arc::new(p.variants.clone());
    for (k, e) in p.entries.iter().enumerate() {
        let symbol = format!("pmx_entry_{k}");
        let _ = writeln!(hosts, "// {} at {}", e.name, locate(e.span));
        let mut code = String::from("  PMX_RESET_FAILED();\n");
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
    source.push_str(body::HOST_PRELUDE);
    source.push_str("\n// Records and variants.\n");
    source.push_str(&types.decls);
    let _ = writeln!(source, "\nstatic const bool pmx_checked = {};\n", options.checked);
    source.push_str("// Functions (device and host).\n");
    source.push_str(&prototypes);
    source.push('\n');
    source.push_str(&functions);
    source.push_str("// Kernels: one per parallel loop on an entry's top level.\n");
    source.push_str(&cx.kernels);
    if !cx.cpu_launchers.is_empty() {
        source.push_str("\n#if !defined(PMX_GPU) && !defined(PMX_HOST_LAUNCH)\n// CPU launchers: one per kernel.\n");
        source.push_str(&cx.cpu_launchers);
        source.push_str("#endif\n");
    }
    source.push_str("\n#if !defined(PMX_DEVICE_ONLY)\n// Host entries.\n");
    source.push_str(&cx.unpackers);
    source.push_str(&hosts);
    source.push_str("#endif\n");
    Ok(Generated { source, entries, kernels: cx.kernel_list, failures: cx.failures })
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
    }
}
