//! Cranelift code for the supported functions of a lowered host program
//! (`support.rs`). Every function uses the `tail` calling convention and
//! takes the context and the site it was entered at before its
//! parameters: a tail call to itself is a jump, a tail call to another
//! function a `return_call` (so neither grows the stack), any other call
//! is followed by a test of the context's `failed` flag. Each function
//! checks the stack pointer against the interpreter's limit on entry.
//! Entries (`extern "C"`) read the arguments from an array of words and
//! write the result to one.

use crate::image::{MachineFn, Sig};
use crate::reuse;
use crate::runtime::{self, Message, Tables, FAILED_OFFSET, ROOT, STACK_LIMIT_OFFSET};
use crate::support;
use crate::word;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, Block as ClBlock, FuncRef, InstBuilder, MemFlagsData, Signature, Value};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use pmx_ast::Builtin;
use pmx_lower::{Atom, Block, Expr, FnId, Function, Lit, Math, Program, Type, VarId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The machine code of a program's functions, and its entries.
pub struct Compiled {
    /// Every function, the entries' wrappers last, by id.
    pub functions: Vec<MachineFn>,
    pub tables: Tables,
    /// Per function asked for: its entry's wrapper,
    /// `extern "C" fn(ctx, args, out)`.
    pub entries: Vec<(FnId, FuncId)>,
}

pub type EntryFn = unsafe extern "C" fn(*mut runtime::Ctx, *const u64, *mut u64);

/// Compiles the functions' Cranelift IR to machine code on every core
/// (each function on its own: what takes the time of a host compile is
/// instruction selection and register allocation, not building the IR).
fn machine_code(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    functions: Vec<(FuncId, cranelift_codegen::ir::Function, String)>,
) -> Result<Vec<MachineFn>, String> {
    use rayon::prelude::*;
    functions
        .into_par_iter()
        .map(|(id, func, name)| {
            let sig = Sig::of(&func.signature);
            let mut cx = cranelift_codegen::Context::for_function(func);
            cx.compile(isa, &mut Default::default()).map_err(|e| format!("cranelift, in `{name}`: {:?}", e.inner))?;
            let code = cx.compiled_code().ok_or_else(|| format!("cranelift, in `{name}`: no code"))?;
            let alignment = code.buffer.alignment as u64;
            let bytes = code.code_buffer().to_vec();
            let relocs = code
                .buffer
                .relocs()
                .iter()
                .map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &cx.func, id))
                .collect();
            Ok(MachineFn { id, name, sig, alignment, bytes, relocs })
        })
        .collect()
}

/// The ISA of this machine, with the generator's settings: made once per
/// process (the cache's key names it, and a run links with it).
fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    static ISA: std::sync::OnceLock<Result<cranelift_codegen::isa::OwnedTargetIsa, String>> =
        std::sync::OnceLock::new();
    ISA.get_or_init(make_isa).clone()
}

fn make_isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| format!("cranelift flag {k}: {e}"));
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(&mut flags, "preserve_frame_pointers", "true")?;
    // Cranelift's IR verifier checks the generator's output, a tenth of
    // the compile time: on in the test builds, not in release ones.
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    cranelift_native::builder()
        .map_err(|e| format!("this machine's architecture: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift: {e}"))
}

/// What decides the machine code besides the program: the target and
/// its settings (part of the host code cache's key).
pub fn target_identity() -> String {
    match isa() {
        Ok(isa) => format!(
            "{} {} {}",
            isa.triple(),
            isa.flags(),
            isa.isa_flags().iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",")
        ),
        Err(e) => e,
    }
}

/// A module with the runtime helpers declared (always first, in one
/// order: the functions declared after them get the ids they had when
/// compiled).
fn module() -> Result<(JITModule, Helpers), String> {
    let mut jb = JITBuilder::with_isa(isa()?, default_libcall_names());
    for (name, ptr) in HELPERS {
        jb.symbol(*name, *ptr);
    }
    let mut module = JITModule::new(jb);
    let ptr = module.target_config().pointer_type();
    let helpers = declare_helpers(&mut module, ptr)?;
    Ok((module, helpers))
}

/// Machine code made executable: each function declared again with the
/// id it was compiled with, its bytes placed and its relocations
/// applied.
pub fn link(functions: &[MachineFn]) -> Result<JITModule, String> {
    let (mut module, _) = module()?;
    let conv = module.isa().default_call_conv();
    for f in functions {
        let id = module
            .declare_function(&f.name, Linkage::Local, &f.sig.signature(conv))
            .map_err(|e| format!("cranelift: {e}"))?;
        if id != f.id {
            return Err(format!("`{}` was compiled as function {} but declared as {}", f.name, f.id, id));
        }
    }
    for f in functions {
        module.define_function_bytes(f.id, f.alignment, &f.bytes, &f.relocs).map_err(|e| format!("cranelift: {e}"))?;
    }
    module.finalize_definitions().map_err(|e| format!("cranelift: {e}"))?;
    Ok(module)
}

pub fn cl_type(t: &Type) -> types::Type {
    match t {
        // A borrowed sequence or record: where its `Value` is.
        Type::Int
        | Type::Seq(_)
        | Type::Record(_)
        | Type::Variant(_)
        | Type::Tensor(_)
        | Type::Fun(..)
        | Type::Opaque(..) => types::I64,
        Type::Float => types::F64,
        Type::Char => types::I32,
        _ => types::I8,
    }
}

/// The runtime helpers generated code calls, by symbol.
const HELPERS: &[(&str, *const u8)] = &[
    ("pmx_fail", runtime::fail as *const u8),
    ("pmx_overflow", runtime::overflow as *const u8),
    ("pmx_record", runtime::record as *const u8),
    ("pmx_round", runtime::round as *const u8),
    ("pmx_drop_value", word::drop_word as *const u8),
    ("pmx_dup", word::dup as *const u8),
    ("pmx_make_record", runtime::make_record as *const u8),
    ("pmx_make_seq", runtime::make_seq as *const u8),
    ("pmx_make_con", runtime::make_con as *const u8),
    ("pmx_unique", runtime::unique as *const u8),
    ("pmx_take_field", runtime::take_field as *const u8),
    ("pmx_put_fields", runtime::put_fields as *const u8),
    ("pmx_call_builtin", runtime::call_builtin as *const u8),
    ("pmx_builder", runtime::builder as *const u8),
    ("pmx_tensor_size", runtime::tensor_size as *const u8),
    ("pmx_tensor_index", runtime::tensor_index as *const u8),
    ("pmx_tensor_finish", runtime::tensor_finish as *const u8),
    ("pmx_seq_grow", runtime::seq_grow as *const u8),
    ("pmx_global", runtime::global as *const u8),
    ("pmx_tensor_get", runtime::tensor_get as *const u8),
    ("pmx_tensor_set", runtime::tensor_set as *const u8),
    ("pmx_builder_push", runtime::builder_push as *const u8),
    ("pmx_builder_finish", runtime::builder_finish as *const u8),
    ("pmx_seq_view", runtime::seq_view as *const u8),
    ("pmx_scalar_element", runtime::scalar_element as *const u8),
    ("pmx_scalars", runtime::scalars as *const u8),
    ("pmx_scalars_finish", runtime::scalars_finish as *const u8),
    ("pmx_tensor_view", runtime::tensor_view as *const u8),
    ("pmx_apply", runtime::apply as *const u8),
    ("pmx_closure", runtime::closure as *const u8),
    ("pmx_utest", runtime::utest as *const u8),
    ("pmx_exp", runtime::exp as *const u8),
    ("pmx_log", runtime::log as *const u8),
    ("pmx_sin", runtime::sin as *const u8),
    ("pmx_cos", runtime::cos as *const u8),
    ("pmx_tan", runtime::tan as *const u8),
    ("pmx_atan", runtime::atan as *const u8),
    ("pmx_sqrt", runtime::sqrt as *const u8),
    ("pmx_atan2", runtime::atan2 as *const u8),
    ("pmx_pow", runtime::pow as *const u8),
];

struct Helpers {
    fail: FuncId,
    overflow: FuncId,
    record: FuncId,
    round: FuncId,
    math: FxHashMap<&'static str, FuncId>,
    /// The helpers for owned values, by name (`runtime.rs`).
    named: FxHashMap<&'static str, FuncId>,
}

/// `last`: the function whose return ends the run (the `mexpr` body),
/// which leaves the data it still holds then to the system (`Gen::kept`).
pub fn compile(
    program: &Program,
    functions: &FxHashSet<FnId>,
    entries: &[FnId],
    last: Option<FnId>,
) -> Result<Compiled, String> {
    let (mut module, helpers) = module()?;
    let ptr = module.target_config().pointer_type();

    // Declarations first: functions call each other in any order.
    // A top-level value is read, not compiled.
    let mut order: Vec<FnId> =
        functions.iter().copied().filter(|f| program.functions[f.0 as usize].global.is_none()).collect();
    order.sort();
    let mut ids = FxHashMap::default();
    for &f in &order {
        let func = &program.functions[f.0 as usize];
        let sig = signature(&module, func, CallConv::Tail);
        let id = module
            .declare_function(&format!("f{}_{}", f.0, func.name), Linkage::Local, &sig)
            .map_err(|e| format!("cranelift: {e}"))?;
        ids.insert(f, id);
    }
    let owning = owning(program, functions);
    let inline: FxHashSet<FnId> =
        order.iter().copied().filter(|f| inlinable(&program.functions[f.0 as usize])).collect();
    let unfold: FxHashSet<FnId> =
        order.iter().copied().filter(|f| unfoldable(&program.functions[f.0 as usize])).collect();
    let reusing: FxHashMap<FnId, Vec<reuse::Site>> = order
        .iter()
        .map(|f| (*f, reuse::sites(&program.functions[f.0 as usize])))
        .filter(|(_, sites)| !sites.is_empty())
        .collect();
    let mut tables = Tables::new();
    let strings = program.string_literals();
    let mut ctx = module.make_context();
    let target = module.target_config();
    let mut fbc = FunctionBuilderContext::new();
    let mut functions = Vec::with_capacity(order.len());
    for &f in &order {
        let func = &program.functions[f.0 as usize];
        ctx.func.signature = signature(&module, func, CallConv::Tail);
        {
            let b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let mut g = Gen {
                program,
                owning: &owning,
                reusing: &reusing,
                inline: &inline,
                unfold: &unfold,
                unfolding: Vec::new(),
                module: &mut module,
                b,
                ids: &ids,
                helpers: &helpers,
                tables: &mut tables,
                strings: &strings,
                me: f,
                vars: FxHashMap::default(),
                ctx: Value::from_u32(0),
                site: Value::from_u32(0),
                head: ClBlock::from_u32(0),
                unwind: ClBlock::from_u32(0),
                quiet: ClBlock::from_u32(0),
                messages: support::error_messages(&func.body),
                refs: FxHashMap::default(),
                scopes: Vec::new(),
                lasts: Vec::new(),
                path_moved: Vec::new(),
                sites: FxHashMap::default(),
                unique: FxHashMap::default(),
                deferred: FxHashMap::default(),
                cons: FxHashMap::default(),
                literals: FxHashMap::default(),
                seq_views: FxHashMap::default(),
                tensor_views: FxHashMap::default(),
                invariant: Vec::new(),
                kept: if last == Some(f) { plain_vars(program, func) } else { FxHashSet::default() },
                lent: lent(func),
            };
            g.function(func);
            g.b.finalize(target);
        }
        let built = std::mem::replace(&mut ctx.func, cranelift_codegen::ir::Function::new());
        functions.push((ids[&f], built, format!("f{}_{}", f.0, func.name)));
        module.clear_context(&mut ctx);
    }
    // Entries: the C calling convention, arguments in an array of words.
    let mut entry_ids = Vec::new();
    for &f in entries {
        let func = &program.functions[f.0 as usize];
        let mut sig = module.make_signature();
        sig.params.extend([AbiParam::new(ptr), AbiParam::new(ptr), AbiParam::new(ptr)]);
        let name = format!("entry{}_{}", f.0, func.name);
        let id = module.declare_function(&name, Linkage::Local, &sig).map_err(|e| format!("cranelift: {e}"))?;
        ctx.func.signature = sig;
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fbc);
            let block = b.create_block();
            b.append_block_params_for_function_params(block);
            b.switch_to_block(block);
            b.seal_block(block);
            let (c, args, out) = (b.block_params(block)[0], b.block_params(block)[1], b.block_params(block)[2]);
            let site = b.ins().iconst(types::I64, ROOT as i64);
            let mut call_args = vec![c, site];
            let dup = module.declare_func_in_func(helpers.named["dup"], b.func);
            for (i, p) in func.params.iter().enumerate() {
                let v = b.ins().load(cl_type(&p.ty), MemFlagsData::trusted(), args, (8 * i) as i32);
                // The interpreter's arguments are borrowed: a function that
                // owns its parameters gets copies.
                let v = if owns_param(program, &owning, &reusing, f, i) {
                    let call = b.ins().call(dup, &[v]);
                    b.inst_results(call)[0]
                } else {
                    v
                };
                call_args.push(v);
            }
            let callee = module.declare_func_in_func(ids[&f], b.func);
            let call = b.ins().call(callee, &call_args);
            let r = b.inst_results(call)[0];
            b.ins().store(MemFlagsData::trusted(), r, out, 0);
            b.ins().return_(&[]);
            b.finalize(target);
        }
        let built = std::mem::replace(&mut ctx.func, cranelift_codegen::ir::Function::new());
        functions.push((id, built, name));
        module.clear_context(&mut ctx);
        entry_ids.push((f, id));
    }
    let mut functions = machine_code(module.isa(), functions)?;
    functions.sort_by_key(|f| f.id);
    Ok(Compiled { functions, tables, entries: entry_ids })
}

fn signature(module: &JITModule, f: &Function, call_conv: CallConv) -> Signature {
    let ptr = module.target_config().pointer_type();
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(ptr));
    sig.params.push(AbiParam::new(types::I64));
    sig.params.extend(f.params.iter().map(|p| AbiParam::new(cl_type(&p.ty))));
    sig.returns.push(AbiParam::new(cl_type(&f.result)));
    sig
}

fn declare_helpers(module: &mut JITModule, ptr: types::Type) -> Result<Helpers, String> {
    let mut declare = |name: &str, params: &[types::Type], returns: &[types::Type]| {
        let mut sig = module.make_signature();
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        sig.returns.extend(returns.iter().map(|t| AbiParam::new(*t)));
        module.declare_function(name, Linkage::Import, &sig).map_err(|e| format!("cranelift: {e}"))
    };
    let f64s = |n: usize| vec![types::F64; n];
    let mut math = FxHashMap::default();
    for m in [Math::Exp, Math::Log, Math::Sin, Math::Cos, Math::Tan, Math::Atan, Math::Sqrt, Math::Atan2, Math::Pow] {
        math.insert(m.name(), declare(&format!("pmx_{}", m.name()), &f64s(m.arity()), &[types::F64])?);
    }
    Ok(Helpers {
        fail: declare("pmx_fail", &[ptr, types::I64, types::I64, types::I64], &[])?,
        overflow: declare("pmx_overflow", &[ptr, types::I64], &[])?,
        record: declare("pmx_record", &[ptr, types::I64], &[])?,
        round: declare("pmx_round", &[types::F64], &[types::F64])?,
        math,
        named: [
            ("drop_value", vec![ptr], vec![]),
            ("dup", vec![ptr], vec![ptr]),
            ("make_record", vec![ptr, types::I64, ptr, types::I64], vec![ptr]),
            ("make_seq", vec![types::I64, ptr, types::I64], vec![ptr]),
            ("make_con", vec![ptr, types::I64, types::I64, types::I64], vec![ptr]),
            ("unique", vec![ptr, ptr], vec![types::I8]),
            ("take_field", vec![ptr, types::I64], vec![ptr]),
            ("put_fields", vec![ptr, types::I64, ptr, ptr, types::I64], vec![]),
            ("call_builtin", vec![ptr, types::I64, ptr], vec![types::I64]),
            ("builder", vec![ptr, types::I64, types::I64], vec![ptr]),
            ("tensor_size", vec![ptr, types::I64, ptr], vec![types::I64]),
            ("tensor_index", vec![ptr, types::I64], vec![ptr]),
            ("tensor_finish", vec![types::I64, ptr, types::I64, ptr], vec![ptr]),
            ("seq_grow", vec![ptr, types::I64, types::I64, types::I64, types::I64, types::I64], vec![ptr]),
            ("global", vec![ptr, types::I64], vec![types::I64]),
            ("tensor_get", vec![ptr, types::I64, ptr, ptr, types::I64, types::I64], vec![types::I64]),
            ("tensor_set", vec![ptr, types::I64, ptr, ptr, types::I64, types::I64, types::I64], vec![]),
            ("builder_push", vec![ptr, types::I64, ptr, types::I64, types::I64], vec![]),
            ("builder_finish", vec![ptr, types::I64, ptr, ptr], vec![ptr]),
            ("seq_view", vec![ptr, ptr], vec![]),
            ("scalar_element", vec![ptr, ptr, types::I64], vec![]),
            ("scalars", vec![ptr, types::I64, types::I64, types::I64], vec![ptr]),
            ("scalars_finish", vec![types::I64, ptr, types::I64, ptr], vec![ptr]),
            ("tensor_view", vec![ptr, ptr], vec![]),
            ("apply", vec![ptr, types::I64, ptr, ptr, types::I64], vec![types::I64]),
            ("closure", vec![ptr, types::I64, ptr], vec![ptr]),
            ("utest", vec![ptr, types::I64, types::I64, types::I64, ptr, ptr], vec![]),
        ]
        .into_iter()
        .map(|(n, p, r)| Ok((n, declare(&format!("pmx_{n}"), &p, &r)?)))
        .collect::<Result<_, String>>()?,
    })
}

struct Gen<'a, 'b> {
    program: &'a Program,
    /// The functions that own their parameters (`owning`).
    owning: &'a FxHashSet<FnId>,
    /// The functions whose calls are their bodies in place (`inlinable`).
    inline: &'a FxHashSet<FnId>,
    /// Recursive functions whose non-tail calls are compiled as their
    /// body in place, one level deep (`unfoldable`), and those being so
    /// now (none is unfolded inside itself).
    unfold: &'a FxHashSet<FnId>,
    unfolding: Vec<FnId>,
    /// The functions with nodes rebuilt in place where unique
    /// (`reuse.rs`), which own the parameters those nodes come from.
    reusing: &'a FxHashMap<FnId, Vec<reuse::Site>>,
    module: &'a mut JITModule,
    b: FunctionBuilder<'b>,
    ids: &'a FxHashMap<FnId, FuncId>,
    helpers: &'a Helpers,
    tables: &'a mut Tables,
    strings: &'a FxHashMap<VarId, String>,
    me: FnId,
    vars: FxHashMap<VarId, Value>,
    ctx: Value,
    site: Value,
    /// The loop header a tail call to the function itself jumps to.
    head: ClBlock,
    /// Where a failure leaves the function: its frame recorded.
    unwind: ClBlock,
    /// Where a failure of a call in tail position leaves it: not recorded.
    quiet: ClBlock,
    messages: FxHashSet<VarId>,
    refs: FxHashMap<FuncId, FuncRef>,
    /// The sequences, records and variant values this frame owns, by the
    /// blocks that made them (innermost last): dropped when their block
    /// ends, or the function leaves.
    scopes: Vec<Vec<VarId>>,
    /// Per block being generated (innermost last): where each variable it
    /// uses is used last (`last_uses`), and the statement being generated.
    lasts: Vec<(FxHashMap<VarId, usize>, usize, bool)>,
    /// Values of outer scopes moved on the path being generated (inside
    /// blocks that leave the function: `movable`), not dropped on it.
    path_moved: Vec<VarId>,
    /// This function's reuse sites, by the variables of their record,
    /// constructor and taking calls; and where a site's uniqueness test
    /// is, once made.
    sites: FxHashMap<VarId, reuse::Site>,
    unique: FxHashMap<VarId, Value>,
    /// A reuse site's record statement, generated with its node.
    deferred: FxHashMap<VarId, (pmx_lower::Stmt, usize)>,
    /// In the function whose return ends the run, its variables of plain
    /// data (no function values or built-in handles, whose drop may do
    /// something, such as flush a file): not dropped when it returns, as
    /// the process ends and gives their memory back at once (freeing a
    /// large tree node by node took 7% of a run), as OCaml's runtime
    /// does too. Empty elsewhere.
    kept: FxHashSet<VarId>,
    /// The variables something is borrowed from (`lent`): never moved
    /// (`movable`).
    lent: FxHashSet<VarId>,
    /// Constructor shapes already in the tables.
    cons: FxHashMap<(pmx_lower::VariantId, usize), u64>,
    /// The sequence literals not built (`support::error_messages`): the
    /// index of a tensor access, read in place.
    literals: FxHashMap<VarId, Vec<Atom>>,
    /// The views of sequences and of tensors taken (`viewed`).
    seq_views: Views,
    tensor_views: Views,
    /// Which parameters every jump back to `head` passes unchanged
    /// (`invariant_params`): not the loop's block parameters.
    invariant: Vec<bool>,
}

/// Views taken, by the value viewed, with the block that took them:
/// valid there (later in the block, which they dominate).
/// (`None`: taken at the function's start, valid everywhere.)
type Views = FxHashMap<Value, (Option<ClBlock>, [Value; 3])>;

/// A sequence's elements in place (`runtime::seq_view`).
#[derive(Clone, Copy)]
struct SeqView {
    /// The sequence (its `Value`).
    seq: Value,
    /// Where element 0 is (a `Value` of a sequence of `Value`s).
    base: Value,
    len: Value,
    stride: Value,
    /// Where element 0's scalar is (a `Value`'s payload is at offset 8).
    scalars: Value,
}

/// A variant type without constructors: an abstract type, whose values
/// are the runtime's own (`type Thread a`; a thread is its `Int` id).
pub fn abstract_type(program: &Program, t: &Type) -> bool {
    matches!(t, Type::Variant(v) if program.variants[v.0 as usize].constructors.is_empty())
}

/// The tag of every word of a value of type `t` (`word.rs`), where the
/// type fixes which `Value` it is.
fn word_tag(program: &Program, t: &Type) -> Option<u64> {
    match t {
        Type::Seq(_) => Some(word::SEQ),
        Type::Record(_) => Some(word::RECORD),
        Type::Variant(_) if !abstract_type(program, t) => Some(word::CON),
        Type::Tensor(_) => Some(word::TENSOR),
        _ => None,
    }
}

/// A type native code holds as a word of `word.rs`.
pub fn boxed(t: &Type) -> bool {
    matches!(t, Type::Seq(_) | Type::Record(_) | Type::Variant(_) | Type::Tensor(_) | Type::Fun(..) | Type::Opaque(..))
}

/// Whether a node of a boxed type makes a value of its own (else it is a
/// part of another, or another's name: borrowed).
fn makes_owned(e: &Expr) -> bool {
    match e {
        Expr::Atom(_) | Expr::Project(..) | Expr::Payload { .. } => false,
        Expr::Prim(b, _) => !support::seq_primitive(*b),
        _ => true,
    }
}

/// How a value of type `t` travels as a word.
pub fn kind(t: &Type) -> runtime::Kind {
    match t {
        Type::Int => runtime::Kind::Int,
        Type::Float => runtime::Kind::Float,
        Type::Bool => runtime::Kind::Bool,
        Type::Char => runtime::Kind::Char,
        Type::Unit => runtime::Kind::Unit,
        _ => runtime::Kind::Boxed,
    }
}

/// The functions that own their sequence, record, variant and tensor
/// parameters (their callers give them): those that a member of their
/// recursive group (themselves too) calls in tail position, a loop,
/// whose values the frame replaced can no longer keep alive. Any other
/// function borrows its parameters from its caller, which keeps them
/// alive through the call: a recursion that is not a loop (a tree's
/// insertion, a sum over one) then passes its parts without copying them
/// and drops nothing it was given.
fn owning(program: &Program, functions: &FxHashSet<FnId>) -> FxHashSet<FnId> {
    let mut out = FxHashSet::default();
    for f in functions {
        let func = &program.functions[f.0 as usize];
        if !func.recursive {
            continue;
        }
        func.body.for_each_tail_stmt(&mut |s| {
            if let Expr::Call(g, _) = &s.expr {
                let callee = &program.functions[g.0 as usize];
                if callee.recursive && callee.group == func.group && callee.params.iter().any(|p| boxed(&p.ty)) {
                    out.insert(*g);
                }
            }
        });
    }
    out
}

/// The variables of `f` that a value of a boxed type is borrowed from (a
/// statement that reads it without making a value of its own: a field,
/// a payload, an element, the variable itself).
fn lent(f: &Function) -> FxHashSet<VarId> {
    let mut out = FxHashSet::default();
    f.body.for_each_stmt(&mut |s| {
        if boxed(&s.var.ty) && !makes_owned(&s.expr) {
            out.extend(s.expr.operands().into_iter().filter_map(|a| match a {
                Atom::Var(v) => Some(v.id),
                Atom::Lit(_) => None,
            }));
        }
    });
    out
}

/// The variables of `f` (parameters and statements) whose types are
/// plain data: scalars, and sequences, records, variants and tensors of
/// plain data, nothing whose drop could do more than free memory.
fn plain_vars(program: &Program, f: &Function) -> FxHashSet<VarId> {
    let mut out: FxHashSet<VarId> =
        f.params.iter().filter(|p| plain(program, &p.ty, &mut Vec::new())).map(|p| p.id).collect();
    f.body.for_each_stmt(&mut |s| {
        if plain(program, &s.var.ty, &mut Vec::new()) {
            out.insert(s.var.id);
        }
    });
    out
}

fn plain(program: &Program, ty: &Type, seen: &mut Vec<pmx_lower::VariantId>) -> bool {
    match ty {
        Type::Int | Type::Float | Type::Bool | Type::Char | Type::Unit => true,
        Type::Record(fields) => fields.iter().all(|(_, t)| plain(program, t, seen)),
        Type::Seq(t) | Type::Tensor(t) => plain(program, t, seen),
        Type::Variant(id) => {
            if seen.contains(id) {
                return true;
            }
            seen.push(*id);
            program.variant(*id).is_some_and(|v| v.constructors.iter().all(|c| plain(program, &c.payload, seen)))
        }
        Type::Fun(..) | Type::Opaque(..) => false,
    }
}

/// Whether `f` owns its parameter `i` (its callers give it): a boxed one
/// of a function that loops (`owning`), or the parameter a reuse site of
/// it rebuilds in place.
fn owns_param(
    program: &Program,
    owning: &FxHashSet<FnId>,
    reusing: &FxHashMap<FnId, Vec<reuse::Site>>,
    f: FnId,
    i: usize,
) -> bool {
    boxed(&program.functions[f.0 as usize].params[i].ty)
        && (owning.contains(&f) || reusing.get(&f).is_some_and(|sites| sites.iter().any(|s| s.param == i)))
}

/// Whether calls of `f` are compiled as its body in place: a small leaf
/// over scalars that cannot fail (so no failure's trace would miss its
/// frame, and it owns nothing), such as the lambdas given to `map` and
/// `foldl`, whose call would cost more than their work.
fn inlinable(f: &Function) -> bool {
    let cannot_fail = |e: &Expr| match e {
        Expr::Atom(_) => true,
        Expr::Prim(Builtin::Divi | Builtin::Modi, args) => {
            matches!(args[1], Atom::Lit(pmx_lower::Lit::Int(d)) if d != 0)
        }
        Expr::Prim(Builtin::Int2char, _) => false,
        Expr::Prim(b, _) => support::primitive(*b),
        _ => false,
    };
    !f.recursive && small_of_scalars(f, &cannot_fail)
}

/// Whether the non-tail calls of recursive `f` are compiled as its body
/// in place, one level deep: a small function of scalars whose body is
/// scalar primitives, `if`s and calls (the naive Fibonacci function).
/// Half of such a recursion's calls are its leaves, which then cost a
/// test instead of a call. A failure inside the body in place records
/// the frame it stands for (`Gen::unfolded`), so traces are the
/// interpreter's.
fn unfoldable(f: &Function) -> bool {
    let allowed = |e: &Expr| match e {
        Expr::Atom(_) | Expr::Call(..) => true,
        Expr::Prim(b, _) => support::primitive(*b),
        _ => false,
    };
    f.recursive && small_of_scalars(f, &allowed)
}

/// Whether `f` takes and gives scalars only, is code (not a stub or a
/// top-level value's read), and its body is fewer than 16 statements
/// (nested ones included), all of scalars, each an `if` or one that
/// `allowed` takes: what `inlinable` and `unfoldable` compile in place.
fn small_of_scalars(f: &Function, allowed: &dyn Fn(&Expr) -> bool) -> bool {
    fn small(b: &Block, budget: &mut usize, allowed: &dyn Fn(&Expr) -> bool) -> bool {
        b.stmts.iter().all(|s| {
            *budget = budget.saturating_sub(1);
            *budget > 0
                && !boxed(&s.var.ty)
                && match &s.expr {
                    Expr::If { then, otherwise, .. } => {
                        small(then, budget, allowed) && small(otherwise, budget, allowed)
                    }
                    e => allowed(e),
                }
        })
    }
    !f.stub
        && f.global.is_none()
        && f.params.iter().all(|p| !boxed(&p.ty))
        && !boxed(&f.result)
        && small(&f.body, &mut 16, allowed)
}

/// Which parameters of `f` every call of `f` by itself in tail position
/// (a jump back to its loop's head) passes unchanged.
fn invariant_params(f: &Function) -> Vec<bool> {
    let mut out = vec![true; f.params.len()];
    f.body.for_each_tail_stmt(&mut |s| {
        if let Expr::Call(g, args) = &s.expr {
            if *g == f.id {
                for ((same, a), p) in out.iter_mut().zip(args).zip(&f.params) {
                    *same &= matches!(a, Atom::Var(v) if v.id == p.id);
                }
            }
        }
    });
    out
}

/// Whether `f` reads elements of parameter `p` in place: a tensor's
/// (`tensor`) with `tensorGetExn`/`tensorSetExn`, a sequence's with the
/// primitives and loops that view it.
fn reads_in_place(f: &Function, p: VarId, tensor: bool) -> bool {
    let is_p = |a: &Atom| matches!(a, Atom::Var(v) if v.id == p);
    f.body.any_stmt(|s| match &s.expr {
        Expr::Prim(Builtin::TensorGetExn | Builtin::TensorSetExn, args) => tensor && is_p(&args[0]),
        Expr::Prim(b, args) if support::seq_primitive(*b) => !tensor && is_p(&args[0]),
        Expr::Foldl { seq, .. } => !tensor && is_p(seq),
        Expr::Map { seqs, .. } => !tensor && seqs.iter().any(is_p),
        _ => false,
    })
}

/// How often variable `a` is among `atoms` (0 for a literal).
fn occurrences<'a>(a: &Atom, atoms: impl Iterator<Item = &'a Atom>) -> usize {
    let Atom::Var(x) = a else { return 0 };
    atoms.filter(|b| matches!(b, Atom::Var(y) if y.id == x.id)).count()
}

/// Where each variable a block uses is used last: the index of the last
/// statement naming it (itself or in the blocks inside it); the block's
/// result counts as after every statement.
fn last_uses(block: &Block) -> FxHashMap<VarId, usize> {
    let mut out = FxHashMap::default();
    for (i, s) in block.stmts.iter().enumerate() {
        let mut note = |a: &Atom| {
            if let Atom::Var(v) = a {
                out.insert(v.id, i);
            }
        };
        s.expr.operands().into_iter().for_each(&mut note);
        if let Expr::If { then, otherwise, .. } = &s.expr {
            for b in [then, otherwise] {
                b.for_each_stmt(&mut |t| t.expr.operands().into_iter().for_each(&mut note));
                b.for_each_result(&mut note);
            }
        }
    }
    if let Atom::Var(v) = &block.result {
        out.insert(v.id, usize::MAX);
    }
    out
}

impl Gen<'_, '_> {
    /// Binds a statement's variable; a value it makes is the innermost
    /// block's own.
    fn bind(&mut self, s: &pmx_lower::Stmt, v: Value) {
        self.vars.insert(s.var.id, v);
        if boxed(&s.var.ty) && self.makes_owned(&s.expr) {
            let depth = self.scopes.len() - 1;
            self.scopes[depth].push(s.var.id);
        }
    }

    /// [`makes_owned`], and a top-level value read is borrowed.
    fn makes_owned(&self, e: &Expr) -> bool {
        match e {
            Expr::Call(f, _) if self.program.functions[f.0 as usize].global.is_some() => false,
            e => makes_owned(e),
        }
    }

    fn func_ref(&mut self, id: FuncId) -> FuncRef {
        if let Some(r) = self.refs.get(&id) {
            return *r;
        }
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.refs.insert(id, r);
        r
    }

    fn zero(&mut self, t: types::Type) -> Value {
        if t == types::F64 {
            self.b.ins().f64const(0.0)
        } else {
            self.b.ins().iconst(t, 0)
        }
    }

    fn function(&mut self, f: &Function) {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        self.b.seal_block(entry);
        self.ctx = self.b.block_params(entry)[0];
        self.site = self.b.block_params(entry)[1];
        let params: Vec<Value> = self.b.block_params(entry)[2..].to_vec();
        let rt = cl_type(&f.result);

        // The stack check: below the limit, a located error at the call.
        let sp = self.b.ins().get_stack_pointer(types::I64);
        let limit = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, STACK_LIMIT_OFFSET);
        let low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, limit);
        let deep = self.b.create_block();
        let start = self.b.create_block();
        let head = self.b.create_block();
        self.b.ins().brif(low, deep, &[], start, &[]);
        self.b.switch_to_block(deep);
        self.b.seal_block(deep);
        let overflow = self.func_ref(self.helpers.overflow);
        self.b.ins().call(overflow, &[self.ctx, self.site]);
        let z = self.zero(rt);
        self.b.ins().return_(&[z]);

        // Parameters are borrowed from the caller, except in a recursive
        // function that loops (`owning`): the values it carries around a loop or
        // through its group's tail calls may be its own, so its callers
        // give it its parameters (moved or copied) and it drops them when
        // it leaves; tail calls in its group then need no frame.
        self.b.switch_to_block(start);
        self.b.seal_block(start);
        let scope: Vec<VarId> =
            f.params.iter().enumerate().filter(|(i, _)| self.owns_param(self.me, *i)).map(|(_, p)| p.id).collect();
        self.scopes = vec![scope];
        self.path_moved.clear();
        self.unique.clear();
        self.sites.clear();
        for site in self.reusing.get(&self.me).into_iter().flatten() {
            for v in [site.record, site.con].into_iter().chain(site.takes.iter().map(|t| t.0)) {
                self.sites.insert(v, site.clone());
            }
        }
        // A parameter that every jump back passes unchanged is one value
        // for the whole loop: where its tensor's or sequence's elements
        // are is found once, here, not on every turn.
        self.invariant = invariant_params(f);
        for (i, p) in f.params.iter().enumerate() {
            if !self.invariant[i] {
                continue;
            }
            let helper = match p.ty {
                Type::Tensor(_) if reads_in_place(f, p.id, true) => "tensor_view",
                Type::Seq(_) if reads_in_place(f, p.id, false) => "seq_view",
                _ => continue,
            };
            let cache: fn(&mut Self) -> &mut Views =
                if helper == "tensor_view" { |g| &mut g.tensor_views } else { |g| &mut g.seq_views };
            let w = self.viewed(helper, params[i], cache);
            cache(self).insert(params[i], (None, w));
        }
        for (i, p) in f.params.iter().enumerate() {
            if !self.invariant[i] {
                self.b.append_block_param(head, cl_type(&p.ty));
            }
        }
        let looped: Vec<_> =
            params.iter().zip(&self.invariant).filter(|(_, inv)| !**inv).map(|(v, _)| (*v).into()).collect();
        self.b.ins().jump(head, &looped);

        self.unwind = self.b.create_block();
        self.quiet = self.b.create_block();
        self.head = head;
        self.b.switch_to_block(head);
        let mut head_params = self.b.block_params(head).to_vec().into_iter();
        for (i, p) in f.params.iter().enumerate() {
            let v = if self.invariant[i] { params[i] } else { head_params.next().expect("a loop parameter") };
            self.vars.insert(p.id, v);
        }
        self.block(&f.body, true);
        self.b.seal_block(head);

        // A failure in a call made in tail position (as a call, since the
        // frame owned what the callee reads): the callee's frame stands for
        // this one in the trace, as after a tail call.
        self.b.switch_to_block(self.quiet);
        self.b.seal_block(self.quiet);
        let z = self.zero(rt);
        self.b.ins().return_(&[z]);

        self.b.switch_to_block(self.unwind);
        self.b.seal_block(self.unwind);
        let record = self.func_ref(self.helpers.record);
        self.b.ins().call(record, &[self.ctx, self.site]);
        let z = self.zero(rt);
        self.b.ins().return_(&[z]);
    }

    fn atom(&mut self, a: &Atom) -> Value {
        match a {
            Atom::Var(v) => self.vars[&v.id],
            Atom::Lit(l) => match l {
                Lit::Int(i) => self.b.ins().iconst(types::I64, *i),
                Lit::Float(f) => self.b.ins().f64const(*f),
                Lit::Bool(x) => self.b.ins().iconst(types::I8, *x as i64),
                Lit::Char(c) => self.b.ins().iconst(types::I32, *c as i64),
                Lit::Unit => self.b.ins().iconst(types::I8, 0),
            },
        }
    }

    /// Whether scopes `from..` of this frame own the value of `v` (it made
    /// it, or owns its parameters).
    fn owns(&self, v: VarId, from: usize) -> bool {
        self.scopes[from..].iter().any(|s| s.contains(&v)) && !self.path_moved.contains(&v)
    }

    fn dup(&mut self, v: Value) -> Value {
        let f = self.func_ref(self.helpers.named["dup"]);
        let call = self.b.ins().call(f, &[v]);
        self.b.inst_results(call)[0]
    }

    /// Drops what this frame owns in scopes `from..`, except `keep`.
    fn drop_owned(&mut self, from: usize, keep: &[VarId]) {
        let owned: Vec<VarId> = self.scopes[from..]
            .iter()
            .flatten()
            .copied()
            .filter(|v| !keep.contains(v) && !self.path_moved.contains(v))
            .collect();
        for v in owned {
            let value = self.vars[&v];
            let f = self.func_ref(self.helpers.named["drop_value"]);
            self.b.ins().call(f, &[value]);
        }
    }

    /// The atom's value as this frame's to give away: a scalar, a value
    /// scopes `from..` own (moved: returned in `moved`, and not dropped),
    /// or a copy of another.
    fn give(&mut self, a: &Atom, from: usize, moved: &mut Vec<VarId>) -> Value {
        let v = self.atom(a);
        match a {
            Atom::Var(x) if boxed(&x.ty) => {
                if self.owns(x.id, from) && !moved.contains(&x.id) {
                    moved.push(x.id);
                    v
                } else {
                    self.dup(v)
                }
            }
            _ => v,
        }
    }

    /// Returns `result`, dropping everything the frame owns (but `kept`).
    fn ret(&mut self, result: &Atom) {
        let mut moved = Vec::new();
        let v = self.give(result, 0, &mut moved);
        moved.extend(self.kept.iter().copied());
        self.drop_owned(0, &moved);
        self.b.ins().return_(&[v]);
    }

    /// The block's value, owned by the caller's scope; `None` when it
    /// left the function. With `tail`, its value is the function's
    /// result: it returns (calls in tail position are tail calls).
    fn block(&mut self, block: &Block, tail: bool) -> Option<Value> {
        self.scopes.push(Vec::new());
        self.lasts.push((last_uses(block), 0, tail));
        let v = self.block_body(block, tail);
        self.lasts.pop();
        self.scopes.pop();
        v
    }

    fn block_body(&mut self, block: &Block, tail: bool) -> Option<Value> {
        let depth = self.scopes.len() - 1;
        let last = block.stmts.len().wrapping_sub(1);
        for (i, s) in block.stmts.iter().enumerate() {
            self.lasts[depth - 1].1 = i;
            let in_tail = tail && i == last && matches!(&block.result, Atom::Var(v) if v.id == s.var.id);
            if in_tail {
                self.tail_stmt(s);
                return None;
            }
            if let Some(v) = self.stmt(s)? {
                self.bind(s, v);
            }
        }
        if tail {
            self.ret(&block.result);
            return None;
        }
        let mut moved = Vec::new();
        let v = self.give(&block.result, depth, &mut moved);
        self.drop_owned(depth, &moved);
        Some(v)
    }

    /// Whether the statement being generated may move `a`'s value into
    /// what it makes or calls, which then owns it: `a` is a value that
    /// the block being generated made (or, in the function's body, a
    /// parameter the frame owns), this statement is its last use
    /// (`uses`: how often it names it), and nothing is borrowed from it
    /// (`lent`). It is then no longer this frame's to drop. What it is
    /// moved into may free it before the block ends (a built-in: `tail`
    /// drops the sequence it was given and keeps a view of its buffer; a
    /// function that loops drops its parameter as it goes on; a record
    /// given to either), so an element or field read from it before and
    /// used after would be read from freed memory.
    fn movable(&mut self, a: &Atom, uses: usize) -> bool {
        let Atom::Var(x) = a else { return false };
        let depth = self.scopes.len() - 1;
        let (lasts, at, _) = &self.lasts[depth - 1];
        if !boxed(&x.ty)
            || uses != 1
            || lasts.get(&x.id) != Some(at)
            || !self.owns(x.id, 0)
            || self.lent.contains(&x.id)
        {
            return false;
        }
        self.move_out(x.id)
    }

    /// Makes owned `x` no longer this frame's to drop, where nothing
    /// after reads it: a value of the innermost scope, or one of an outer
    /// scope where every block from that scope's inward leaves the
    /// function (each ends with the `if` this path is in, so nothing
    /// after reads it): not dropped on this path (`path_moved`), still
    /// dropped on the others. The caller knows nothing later in the
    /// block reads it.
    fn move_out(&mut self, x: VarId) -> bool {
        let depth = self.scopes.len() - 1;
        if self.scopes[depth].contains(&x) {
            self.scopes[depth].retain(|v| *v != x);
            return true;
        }
        let Some(scope) = (0..depth).rev().find(|k| self.scopes[*k].contains(&x)) else { return false };
        if self.path_moved.contains(&x) || !self.lasts[scope..depth].iter().all(|(_, _, tail)| *tail) {
            return false;
        }
        self.path_moved.push(x);
        true
    }

    /// Which of `atoms` the statement moves (`movable`), as bits.
    fn moved_bits(&mut self, atoms: &[&Atom]) -> i64 {
        let mut bits = 0i64;
        for (i, a) in atoms.iter().enumerate().take(64) {
            if self.movable(a, occurrences(a, atoms.iter().copied())) {
                bits |= 1 << i;
            }
        }
        bits
    }

    /// A statement whose value the function returns.
    fn tail_stmt(&mut self, s: &pmx_lower::Stmt) {
        match &s.expr {
            Expr::Call(f, args) if *f == self.me => {
                // The loop's next values: this frame's own (moved, or
                // copied), then everything else it owns dropped.
                let mut moved = Vec::new();
                let mut looped = Vec::new();
                for (a, inv) in args.iter().zip(self.invariant.clone()) {
                    // An unchanged parameter is its own: moved to itself.
                    let v = self.give(a, 0, &mut moved);
                    if !inv {
                        looped.push(v.into());
                    }
                }
                self.drop_owned(0, &moved);
                self.b.ins().jump(self.head, &looped);
            }
            // A tail call proper where the callee owns its parameters (they
            // are given it) or the frame owns nothing the callee reads.
            Expr::Call(f, args)
                if self.program.functions[f.0 as usize].global.is_none()
                    && (self.owning.contains(f)
                        || self.scopes.iter().flatten().all(|v| self.path_moved.contains(v))) =>
            {
                let callee = &self.program.functions[f.0 as usize];
                let given = self.owning.contains(f);
                let site = self.tail_site(*f, s.span);
                let mut vals = vec![self.ctx, site];
                let mut moved = Vec::new();
                for (i, (a, p)) in args.iter().zip(&callee.params).enumerate() {
                    let owned = (given && boxed(&p.ty)) || self.owns_param(*f, i);
                    let v = if owned { self.give(a, 0, &mut moved) } else { self.atom(a) };
                    vals.push(v);
                }
                self.drop_owned(0, &moved);
                let r = self.func_ref(self.ids[f]);
                self.b.ins().return_call(r, &vals);
            }
            // Else a call (the frame's values outlive it), then a return;
            // its failure is shown as a tail call's.
            Expr::Call(f, args) if self.inline.contains(f) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                let v = self.inlined(*f, &args);
                self.bind(s, v);
                self.ret(&Atom::Var(s.var.clone()));
            }
            Expr::Call(f, args) if self.program.functions[f.0 as usize].global.is_none() => {
                let site = self.tail_site(*f, s.span);
                let (args, given) = self.call_args(*f, args, s);
                let v = self.call_at(*f, &args, &given, site, self.quiet);
                self.bind(s, v);
                self.ret(&Atom::Var(s.var.clone()));
            }
            // Its failure shown as the interpreter's tail call's.
            Expr::Apply(f, args) => {
                let v = self.apply_stmt(f, args, s, true);
                self.bind(s, v);
                self.ret(&Atom::Var(s.var.clone()));
            }
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                let (t, e) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(c, t, &[], e, &[]);
                for (blk, body) in [(t, then), (e, otherwise)] {
                    self.b.switch_to_block(blk);
                    self.b.seal_block(blk);
                    let saved = self.path_moved.len();
                    self.block(body, true);
                    self.path_moved.truncate(saved);
                }
            }
            _ => {
                let Some(v) = self.stmt(s) else { return };
                let v = v.unwrap_or_else(|| self.b.ins().iconst(types::I8, 0));
                self.bind(s, v);
                self.ret(&Atom::Var(s.var.clone()));
            }
        }
    }

    /// Leaves the function (through `unwind`) where the call just made
    /// failed; code after it runs where it did not.
    fn leave_if_failed(&mut self) {
        let failed = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, FAILED_OFFSET);
        let go = self.b.create_block();
        self.b.ins().brif(failed, self.unwind, &[], go, &[]);
        self.b.switch_to_block(go);
        self.b.seal_block(go);
    }

    /// Jumps to `unwind` after the failure (recorded first); `shown`: the
    /// `Int`s its message shows (at most two).
    fn fail(&mut self, message: Message, span: pmx_ast::Span, shown: &[Value]) {
        let id = self.tables.failure(message, span) as i64;
        let id = self.b.ins().iconst(types::I64, id);
        let mut args = vec![self.ctx, id];
        args.extend_from_slice(shown);
        while args.len() < 4 {
            args.push(self.b.ins().iconst(types::I64, 0));
        }
        let f = self.func_ref(self.helpers.fail);
        self.b.ins().call(f, &args);
        self.b.ins().jump(self.unwind, &[]);
    }

    /// Fails unless `ok`; code after it runs where `ok` holds.
    fn guard(&mut self, ok: Value, message: Message, span: pmx_ast::Span, shown: &[Value]) {
        let (pass, bad) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(ok, pass, &[], bad, &[]);
        self.b.switch_to_block(bad);
        self.b.seal_block(bad);
        self.fail(message, span, shown);
        self.b.switch_to_block(pass);
        self.b.seal_block(pass);
    }

    /// A statement's value: `Some(None)` for a statement that binds
    /// nothing the code reads (a string literal given only to `error`),
    /// `None` when control left (a failure).
    fn stmt(&mut self, s: &pmx_lower::Stmt) -> Option<Option<Value>> {
        let v = match &s.expr {
            Expr::Seq(items) if self.messages.contains(&s.var.id) => {
                self.literals.insert(s.var.id, items.clone());
                return Some(None);
            }
            Expr::Prim(b @ (Builtin::TensorGetExn | Builtin::TensorSetExn), args) if matches!(&args[1], Atom::Var(v) if self.literals.contains_key(&v.id)) =>
            {
                let Atom::Var(ix) = &args[1] else { unreachable!("matched above") };
                let items = self.literals[&ix.id].clone();
                let index: Vec<Value> = items.iter().map(|a| self.atom(a)).collect();
                let t = self.atom(&args[0]);
                let elem = match args[0].ty() {
                    Type::Tensor(e) => *e,
                    _ => unreachable!("a tensor"),
                };
                let set = match *b {
                    Builtin::TensorSetExn => Some(self.atom(&args[2])),
                    _ => None,
                };
                match self.tensor_access(t, &index, &elem, set, s.span) {
                    Some(v) => v,
                    None => self.b.ins().iconst(types::I8, 0),
                }
            }
            Expr::Atom(a) => self.atom(a),
            Expr::Never => {
                let message = pmx_cpu::never_message(s.span).to_string();
                self.fail(Message::Fixed(message), s.span, &[]);
                return None;
            }
            Expr::Prim(Builtin::Error, args) if matches!(&args[0], Atom::Var(v) if self.messages.contains(&v.id)) => {
                let text = pmx_lower::error_text(self.strings, &args[0]);
                self.fail(Message::Fixed(text), s.span, &[]);
                return None;
            }
            Expr::Loop { n, f, .. } => {
                let n = self.atom(n);
                self.counted(n, |g, i| {
                    let mut args: Vec<Value> = f.bound.iter().map(|a| g.atom(a)).collect();
                    args.push(i);
                    g.call_ref(f, &args, s.span).map(|_| ())
                })?;
                self.b.ins().iconst(types::I8, 0)
            }
            Expr::Create { len, f } => {
                let n = self.atom(len);
                let ok = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, 0);
                self.guard(ok, Message::NegativeCreate, s.span, &[n]);
                let elem = s.var.ty.elem().cloned().expect("create makes a sequence");
                self.build(n, &elem, None, s.span, |g, i| {
                    let mut args: Vec<Value> = f.bound.iter().map(|a| g.atom(a)).collect();
                    args.push(i);
                    g.call_ref(f, &args, s.span)
                })?
            }
            Expr::Map { f, seqs } => {
                let seqs: Vec<(Value, Type)> =
                    seqs.iter().map(|a| (self.atom(a), a.ty().elem().cloned().expect("map over sequences"))).collect();
                let like = if seqs.len() == 1 { Some(seqs[0].0) } else { None };
                let seqs: Vec<(SeqView, Type)> = seqs.into_iter().map(|(sv, t)| (self.view(sv), t)).collect();
                let n = seqs[0].0.len;
                if let Some((other, _)) = seqs.get(1) {
                    let m = other.len;
                    let same = self.b.ins().icmp(IntCC::Equal, n, m);
                    self.guard(same, Message::Map2Lengths, s.span, &[n, m]);
                }
                let elem = s.var.ty.elem().cloned().expect("map makes a sequence");
                self.build(n, &elem, like, s.span, |g, i| {
                    let mut args: Vec<Value> = f.bound.iter().map(|a| g.atom(a)).collect();
                    for (sv, et) in &seqs {
                        args.push(g.element(*sv, i, et));
                    }
                    g.call_ref(f, &args, s.span)
                })?
            }
            Expr::SeqLoopAcc { init, n, f } => {
                let (acc0, n) = (self.atom(init), self.atom(n));
                self.accumulate(f, acc0, n, &s.var.ty, s.span, |_, i| i)?
            }
            Expr::Foldl { f, init, seq } => {
                let (s_, acc0) = (self.atom(seq), self.atom(init));
                let elem = seq.ty().elem().cloned().expect("foldl over a sequence");
                self.foldl(f, acc0, s_, &elem, &s.var.ty, s.span)?
            }
            Expr::Prim(b @ (Builtin::Length | Builtin::Null | Builtin::Get | Builtin::Head), args) => {
                let vals: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                self.seq_prim(*b, &vals, &s.var.ty, s.span)
            }
            Expr::Prim(Builtin::TensorCreateCArrayInt | Builtin::TensorCreateCArrayFloat, args)
                if self.native_maker(&s.var.ty, &args[1]).is_some() =>
            {
                let (g, bound) = self.native_maker(&s.var.ty, &args[1]).expect("checked");
                self.tensor_create(&args[0], g, &bound, &s.var.ty, s.span)?
            }
            Expr::Prim(b @ (Builtin::Cons | Builtin::Snoc | Builtin::Concat), args) => {
                let (op, elem) = match b {
                    Builtin::Cons => (0, args[0].ty()),
                    Builtin::Snoc => (1, args[1].ty()),
                    _ => (2, Type::Unit),
                };
                let k = runtime::KINDS.iter().position(|k| *k == kind(&elem)).expect("a kind") as i64;
                let id = self.tables.failure(Message::Fixed(String::new()), s.span) as i64;
                // The sequence given at its last use may grow in place.
                let grown = &args[if op == 0 { 1 } else { 0 }];
                let op =
                    if self.movable(grown, occurrences(grown, args.iter())) { op | runtime::GIVEN as i64 } else { op };
                let (a, b) = (self.atom(&args[0]), self.atom(&args[1]));
                let (a, b) = (self.word(a), self.word(b));
                let consts = [id, op, k].map(|c| self.b.ins().iconst(types::I64, c));
                let f = self.func_ref(self.helpers.named["seq_grow"]);
                let call = self.b.ins().call(f, &[self.ctx, consts[0], consts[1], consts[2], a, b]);
                let w = self.b.inst_results(call)[0];
                self.leave_if_failed();
                w
            }
            Expr::Prim(b, args) if support::primitive(*b) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                self.prim(*b, &args, s.span)
            }
            // Values at their last use are given to the built-in, so that
            // one that changes a value nobody else holds (`set`) does so
            // in place rather than on a copy.
            Expr::Prim(b, atoms) => {
                let kinds: Vec<runtime::Kind> = atoms.iter().map(|a| kind(&a.ty())).collect();
                let args: Vec<Value> = atoms.iter().map(|a| self.atom(a)).collect();
                let refs: Vec<&Atom> = atoms.iter().collect();
                let given = self.moved_bits(&refs) as u64;
                self.runtime_call(runtime::RuntimeCallee::Builtin(*b), &args, kinds, given, &s.var.ty, s.span)
            }
            Expr::Accelerate { site, name, args } => {
                let kinds: Vec<runtime::Kind> = args.iter().map(|a| kind(&a.ty())).collect();
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                let callee = runtime::RuntimeCallee::Accelerate(*site, name.clone());
                self.runtime_call(callee, &args, kinds, 0, &s.var.ty, s.span)
            }
            // A reuse site's record is made (or not) with its node.
            Expr::Record(_) if self.sites.get(&s.var.id).is_some_and(|site| site.record == s.var.id) => {
                let at = self.lasts.last().expect("in a block").1;
                self.deferred.insert(s.var.id, (s.clone(), at));
                return Some(None);
            }
            Expr::Record(fields) => {
                let values: Vec<Value> = fields.iter().map(|(_, a)| self.atom(a)).collect();
                let atoms: Vec<&Atom> = fields.iter().map(|(_, a)| a).collect();
                let moved = self.moved_bits(&atoms);
                self.make_record(fields, &values, moved)
            }
            Expr::Con { variant, tag, .. } if self.sites.get(&s.var.id).is_some_and(|site| site.con == s.var.id) => {
                let site = self.sites[&s.var.id].clone();
                let (record, at) = self.deferred.remove(&site.record).expect("the record comes before its node");
                self.rebuild(&site, &record, at, *variant, *tag)
            }
            Expr::Seq(items) => {
                let elem = s.var.ty.elem().cloned().expect("a sequence literal's type");
                let values: Vec<Value> = items.iter().map(|a| self.atom(a)).collect();
                let k = runtime::KINDS.iter().position(|k| *k == kind(&elem)).expect("a kind") as i64;
                let k = self.b.ins().iconst(types::I64, k);
                let words = self.words(&values);
                let n = self.b.ins().iconst(types::I64, values.len() as i64);
                let f = self.func_ref(self.helpers.named["make_seq"]);
                let call = self.b.ins().call(f, &[k, words, n]);
                self.b.inst_results(call)[0]
            }
            Expr::Con { variant, tag, payload } => {
                let con = self.con(*variant, *tag);
                let v = self.atom(payload);
                let w = self.word(v);
                let con = self.b.ins().iconst(types::I64, con as i64);
                let moved = self.moved_bits(&[payload]);
                let moved = self.b.ins().iconst(types::I64, moved);
                let f = self.func_ref(self.helpers.named["make_con"]);
                let call = self.b.ins().call(f, &[self.ctx, con, w, moved]);
                self.b.inst_results(call)[0]
            }
            // A variant value's word points at its `ConValue` (`word.rs`):
            // its constructor and payload are read in place.
            Expr::IsCon { value, variant, tag } => {
                let id = self.program.variants[variant.0 as usize].constructors[*tag].id;
                let v = self.atom(value);
                let offset = word::CON_TAG_OFFSET - word::CON as i32;
                let held = self.b.ins().load(types::I64, MemFlagsData::trusted(), v, offset);
                self.b.ins().icmp_imm_s(IntCC::Equal, held, word::con_tag_bits(id))
            }
            Expr::Payload { value, .. } => {
                let v = self.atom(value);
                let place = self.b.ins().iadd_imm_s(v, (word::CON_ARG_OFFSET - word::CON as i32) as i64);
                self.read(place, &s.var.ty)
            }
            // A record's word points at its `Record`, which points at its
            // fields (`word.rs`): the field is read in place.
            Expr::Project(record, label) => {
                let Type::Record(fields) = record.ty() else { unreachable!("a projection of a record") };
                let index = fields.iter().position(|(l, _)| l == label).expect("the record type has the label");
                let r = self.atom(record);
                let offset = word::record_fields_offset() - word::RECORD as i32;
                let values = self.b.ins().load(types::I64, MemFlagsData::trusted(), r, offset);
                let place = self.b.ins().iadd_imm_s(values, index as i64 * runtime::VALUE_STRIDE);
                self.read(place, &s.var.ty)
            }
            Expr::Math(m, args) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                let f = self.func_ref(self.helpers.math[m.name()]);
                let call = self.b.ins().call(f, &args);
                self.b.inst_results(call)[0]
            }
            Expr::Call(f, args) if self.inline.contains(f) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                self.inlined(*f, &args)
            }
            Expr::Call(f, args) if self.unfold.contains(f) && !self.unfolding.contains(f) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                self.unfolded(*f, &args, s.span)
            }
            Expr::Call(f, args) if self.program.functions[f.0 as usize].global.is_none() => {
                let (args, given) = self.call_args(*f, args, s);
                let callee_name = self.program.functions[f.0 as usize].shown.clone();
                let id = self.tables.site(callee_name, s.span) as i64;
                let site = self.b.ins().iconst(types::I64, id);
                self.call_at(*f, &args, &given, site, self.unwind)
            }
            Expr::Call(f, args) => {
                let args: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                self.call(*f, &args, s.span)
            }
            Expr::Apply(f, args) => self.apply_stmt(f, args, s, false),
            Expr::Utest { test, expected, using, on_fail } => {
                let using_name = self.program.using_names.iter().find(|(sp, _)| *sp == s.span).map(|(_, n)| n.clone());
                let sides = [kind(&test.ty()), kind(&expected.ty())];
                self.tables.utests.push(runtime::UtestCall { sides, using_name, span: s.span });
                let id = self.b.ins().iconst(types::I64, self.tables.utests.len() as i64 - 1);
                let (a, b) = (self.atom(test), self.atom(expected));
                let (a, b) = (self.word(a), self.word(b));
                let function = |g: &mut Self, f: &Option<pmx_lower::FunRef>| match f {
                    Some(f) => g.atom(&f.bound[0]),
                    None => g.b.ins().iconst(types::I64, 0),
                };
                let (u, e) = (function(self, using), function(self, on_fail));
                let h = self.func_ref(self.helpers.named["utest"]);
                self.b.ins().call(h, &[self.ctx, id, a, b, u, e]);
                self.leave_if_failed();
                self.b.ins().iconst(types::I8, 0)
            }
            Expr::Closure(callee, args) => {
                let of = match callee {
                    pmx_lower::Callee::Function(f) => runtime::Callable::Function(*f),
                    pmx_lower::Callee::Builtin(b) => runtime::Callable::Builtin(*b),
                    c => unreachable!("support.rs lets through closures of functions and built-ins, not {c:?}"),
                };
                let bound: Vec<runtime::Kind> = args.iter().map(|a| kind(&a.ty())).collect();
                self.tables.closures.push(runtime::ClosureShape { of, bound });
                let id = self.b.ins().iconst(types::I64, self.tables.closures.len() as i64 - 1);
                let values: Vec<Value> = args.iter().map(|a| self.atom(a)).collect();
                let words = self.words(&values);
                let f = self.func_ref(self.helpers.named["closure"]);
                let call = self.b.ins().call(f, &[self.ctx, id, words]);
                self.b.inst_results(call)[0]
            }
            Expr::If { cond, then, otherwise } => {
                let c = self.atom(cond);
                let (t, e, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
                let ty = cl_type(&s.var.ty);
                self.b.append_block_param(join, ty);
                self.b.ins().brif(c, t, &[], e, &[]);
                let mut reached = false;
                for (blk, body) in [(t, then), (e, otherwise)] {
                    self.b.switch_to_block(blk);
                    self.b.seal_block(blk);
                    if let Some(r) = self.block(body, false) {
                        self.b.ins().jump(join, &[r.into()]);
                        reached = true;
                    }
                }
                self.b.switch_to_block(join);
                self.b.seal_block(join);
                if !reached {
                    // Both branches fail: nothing jumps here.
                    self.b.ins().trap(cranelift_codegen::ir::TrapCode::unwrap_user(1));
                    return None;
                }
                self.b.block_params(join)[0]
            }
            e => unreachable!("support.rs lets through only what is generated: {e:?}"),
        };
        Some(Some(v))
    }

    /// Built-in `b` as the interpreter's runtime computes it; a failure
    /// leaves this function.
    fn builtin(
        &mut self,
        b: Builtin,
        args: &[Value],
        kinds: Vec<runtime::Kind>,
        result: &Type,
        span: pmx_ast::Span,
    ) -> Value {
        self.runtime_call(runtime::RuntimeCallee::Builtin(b), args, kinds, 0, result, span)
    }

    /// A call the interpreter's runtime makes (bit `i` of `given`:
    /// argument `i` is an owned word given to it); a failure leaves this
    /// function.
    fn runtime_call(
        &mut self,
        callee: runtime::RuntimeCallee,
        args: &[Value],
        kinds: Vec<runtime::Kind>,
        given: u64,
        result: &Type,
        span: pmx_ast::Span,
    ) -> Value {
        self.tables.builtins.push(runtime::BuiltinCall { callee, args: kinds, given, result: kind(result), span });
        let id = self.b.ins().iconst(types::I64, self.tables.builtins.len() as i64 - 1);
        let words = self.words(args);
        let f = self.func_ref(self.helpers.named["call_builtin"]);
        let call = self.b.ins().call(f, &[self.ctx, id, words]);
        let w = self.b.inst_results(call)[0];
        self.leave_if_failed();
        self.unword(w, result)
    }

    /// A word as a value of type `t` (see [`Gen::word`]).
    fn unword(&mut self, w: Value, t: &Type) -> Value {
        match cl_type(t) {
            types::F64 => self.b.ins().bitcast(types::F64, MemFlagsData::new(), w),
            types::I64 => w,
            t => self.b.ins().ireduce(t, w),
        }
    }

    /// A value as a machine word (how `runtime::Kind` reads it back).
    fn word(&mut self, v: Value) -> Value {
        let t = self.b.func.dfg.value_type(v);
        if t == types::F64 {
            self.b.ins().bitcast(types::I64, MemFlagsData::new(), v)
        } else if t == types::I64 {
            v
        } else {
            self.b.ins().uextend(types::I64, v)
        }
    }

    /// The values as words in a frame slot, and where it is.
    fn words(&mut self, values: &[Value]) -> Value {
        let size = (8 * values.len()).max(8) as u32;
        let slot = self.b.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
            cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
            size,
            3,
        ));
        for (i, v) in values.iter().enumerate() {
            let w = self.word(*v);
            self.b.ins().stack_store(types::I64, w, slot, (8 * i) as i32);
        }
        self.b.ins().stack_addr(types::I64, slot, 0)
    }

    /// Constructor `tag` of `variant` in the tables.
    fn con(&mut self, variant: pmx_lower::VariantId, tag: usize) -> u64 {
        if let Some(c) = self.cons.get(&(variant, tag)) {
            return *c;
        }
        let c = &self.program.variants[variant.0 as usize].constructors[tag];
        self.tables.cons.push(runtime::ConShape { id: c.id, name: c.name.clone(), kind: kind(&c.payload) });
        let id = self.tables.cons.len() as u64 - 1;
        self.cons.insert((variant, tag), id);
        id
    }

    /// `body(i)` for `i` from 0 below `n` (a loop); `None` when nothing
    /// after it runs.
    fn counted(&mut self, n: Value, mut body: impl FnMut(&mut Self, Value) -> Option<()>) -> Option<()> {
        let (head, step, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(head, types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let i = self.b.block_params(head)[0];
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, n);
        self.b.ins().brif(more, step, &[], exit, &[]);
        self.b.switch_to_block(step);
        self.b.seal_block(step);
        body(self, i)?;
        let i1 = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[i1.into()]);
        self.b.seal_block(head);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
        Some(())
    }

    /// A sequence of `n` elements of type `elem`, each what `value(i)`
    /// gives (the builder takes values native code owns); `like`: the
    /// sequence whose representation it keeps (`map`'s).
    fn build(
        &mut self,
        n: Value,
        elem: &Type,
        like: Option<Value>,
        span: pmx_ast::Span,
        mut value: impl FnMut(&mut Self, Value) -> Option<Value>,
    ) -> Option<Value> {
        // Where memory the system refuses is reported.
        let id = self.tables.failure(Message::Fixed(String::new()), span) as i64;
        let id = self.b.ins().iconst(types::I64, id);
        let k = runtime::KINDS.iter().position(|k| *k == kind(elem)).expect("a kind") as i64;
        if !boxed(elem) && *elem != Type::Unit {
            return self.build_scalars(n, elem, k, id, like, value);
        }
        let new = self.func_ref(self.helpers.named["builder"]);
        let call = self.b.ins().call(new, &[self.ctx, id, n]);
        let b = self.b.inst_results(call)[0];
        self.leave_if_failed();
        let push = self.func_ref(self.helpers.named["builder_push"]);
        self.counted(n, |g, i| {
            let v = value(g, i)?;
            let w = g.word(v);
            let k = g.b.ins().iconst(types::I64, k);
            g.b.ins().call(push, &[g.ctx, id, b, k, w]);
            g.leave_if_failed();
            Some(())
        })?;
        let like = match like {
            Some(l) => l,
            None => self.b.ins().iconst(types::I64, 0),
        };
        let finish = self.func_ref(self.helpers.named["builder_finish"]);
        let call = self.b.ins().call(finish, &[self.ctx, id, b, like]);
        let v = self.b.inst_results(call)[0];
        self.leave_if_failed();
        Some(v)
    }

    /// `build` of scalars (kind `k`), written in place: the memory is
    /// asked for once the first element is computed, as the interpreter's
    /// builder asks (a failure of `value(0)` comes first).
    fn build_scalars(
        &mut self,
        n: Value,
        elem: &Type,
        k: i64,
        id: Value,
        like: Option<Value>,
        mut value: impl FnMut(&mut Self, Value) -> Option<Value>,
    ) -> Option<Value> {
        let size: i64 = match elem {
            Type::Int | Type::Float => 8,
            Type::Char => 4,
            _ => 1,
        };
        let slot = self.b.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
            cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
            8,
            3,
        ));
        let null = self.b.ins().iconst(types::I64, 0);
        self.b.ins().stack_store(types::I64, null, slot, 0);
        let room = self.func_ref(self.helpers.named["scalars"]);
        self.counted(n, |g, i| {
            let v = value(g, i)?;
            let (ask, store) = (g.b.create_block(), g.b.create_block());
            g.b.append_block_param(store, types::I64);
            let p = g.b.ins().stack_load(types::I64, types::I64, slot, 0);
            let first = g.b.ins().icmp_imm_s(IntCC::Equal, i, 0);
            g.b.ins().brif(first, ask, &[], store, &[p.into()]);
            g.b.switch_to_block(ask);
            g.b.seal_block(ask);
            let kv = g.b.ins().iconst(types::I64, k);
            let call = g.b.ins().call(room, &[g.ctx, id, kv, n]);
            let q = g.b.inst_results(call)[0];
            g.b.ins().stack_store(types::I64, q, slot, 0);
            g.leave_if_failed();
            g.b.ins().jump(store, &[q.into()]);
            g.b.switch_to_block(store);
            g.b.seal_block(store);
            let p = g.b.block_params(store)[0];
            let at = g.b.ins().imul_imm_s(i, size);
            let place = g.b.ins().iadd(p, at);
            g.b.ins().store(MemFlagsData::trusted(), v, place, 0);
            Some(())
        })?;
        let like = match like {
            Some(l) => l,
            None => self.b.ins().iconst(types::I64, 0),
        };
        let p = self.b.ins().stack_load(types::I64, types::I64, slot, 0);
        let kv = self.b.ins().iconst(types::I64, k);
        let finish = self.func_ref(self.helpers.named["scalars_finish"]);
        let call = self.b.ins().call(finish, &[kv, p, n, like]);
        Some(self.b.inst_results(call)[0])
    }

    /// `tensorGetExn t index` (`set` is `None`: the element read) or
    /// `tensorSetExn t index v`: an element of `Int`s or `Float`s read or
    /// written in place when the index fits the tensor, the runtime's
    /// access otherwise (another element type, or a bad index, which it
    /// reports at `span`; only that path can fail).
    fn tensor_access(
        &mut self,
        t: Value,
        index: &[Value],
        elem: &Type,
        set: Option<Value>,
        span: pmx_ast::Span,
    ) -> Option<Value> {
        let join = self.b.create_block();
        if set.is_none() {
            self.b.append_block_param(join, cl_type(elem));
        }
        let slow = self.b.create_block();
        if matches!(elem, Type::Int | Type::Float) {
            // In place: a tensor of `Int`s or `Float`s, of the index's rank,
            // every index within its dimension.
            let [base, rank, shape] = self.viewed("tensor_view", t, |g| &mut g.tensor_views);
            let (shaped, fast) = (self.b.create_block(), self.b.create_block());
            let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, base, 0);
            let ranked = self.b.ins().icmp_imm_s(IntCC::Equal, rank, index.len() as i64);
            let both = self.b.ins().band(has, ranked);
            self.b.ins().brif(both, shaped, &[], slow, &[]);
            self.b.switch_to_block(shaped);
            self.b.seal_block(shaped);
            let mut pos = self.b.ins().iconst(types::I64, 0);
            let mut ok = self.b.ins().iconst(types::I8, 1);
            for (k, i) in index.iter().enumerate() {
                let dim = self.b.ins().load(types::I64, MemFlagsData::trusted(), shape, 8 * k as i32);
                // A negative index is a huge unsigned one.
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, *i, dim);
                ok = self.b.ins().band(ok, inside);
                let scaled = self.b.ins().imul(pos, dim);
                pos = self.b.ins().iadd(scaled, *i);
            }
            self.b.ins().brif(ok, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
            self.b.seal_block(fast);
            let at = self.b.ins().imul_imm_s(pos, 8);
            let place = self.b.ins().iadd(base, at);
            match set {
                Some(v) => {
                    self.b.ins().store(MemFlagsData::trusted(), v, place, 0);
                    self.b.ins().jump(join, &[]);
                }
                None => {
                    let v = self.b.ins().load(cl_type(elem), MemFlagsData::trusted(), place, 0);
                    self.b.ins().jump(join, &[v.into()]);
                }
            }
        } else {
            self.b.ins().jump(slow, &[]);
        }
        // The runtime's access: the index as words, a failure left here.
        self.b.switch_to_block(slow);
        self.b.seal_block(slow);
        let words = self.words(index);
        let n = self.b.ins().iconst(types::I64, index.len() as i64);
        let id = self.tables.failure(Message::Fixed(String::new()), span) as i64;
        let id = self.b.ins().iconst(types::I64, id);
        let k = runtime::KINDS.iter().position(|k| *k == kind(elem)).expect("a kind") as i64;
        let k = self.b.ins().iconst(types::I64, k);
        match set {
            None => {
                let f = self.func_ref(self.helpers.named["tensor_get"]);
                let call = self.b.ins().call(f, &[self.ctx, id, t, words, n, k]);
                let w = self.b.inst_results(call)[0];
                self.leave_if_failed();
                let v = self.unword(w, elem);
                self.b.ins().jump(join, &[v.into()]);
            }
            Some(v) => {
                let w = self.word(v);
                let f = self.func_ref(self.helpers.named["tensor_set"]);
                self.b.ins().call(f, &[self.ctx, id, t, words, n, k, w]);
                self.leave_if_failed();
                self.b.ins().jump(join, &[]);
            }
        }
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        set.is_none().then(|| self.b.block_params(join)[0])
    }

    /// `foldl f acc0 s` as a loop; `None` when nothing after it runs.
    fn foldl(
        &mut self,
        f: &pmx_lower::FunRef,
        acc0: Value,
        s: Value,
        elem: &Type,
        ty: &Type,
        span: pmx_ast::Span,
    ) -> Option<Value> {
        let v = self.view(s);
        self.accumulate(f, acc0, v.len, ty, span, |g, i| g.element(v, i, elem))
    }

    /// `acc = f acc (x i)` for `i` from 0 below `n` (`foldl`: the
    /// elements; `seqLoopAcc`: the indices); `None` when nothing after it
    /// runs.
    fn accumulate(
        &mut self,
        f: &pmx_lower::FunRef,
        acc0: Value,
        len: Value,
        ty: &Type,
        span: pmx_ast::Span,
        x: impl Fn(&mut Self, Value) -> Value,
    ) -> Option<Value> {
        let (head, body, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let t = cl_type(ty);
        self.b.append_block_param(head, types::I64);
        self.b.append_block_param(head, t);
        self.b.append_block_param(exit, t);
        // A sequence, record or variant accumulator is the loop's own: a
        // copy of the first, then each call's result, the one before it
        // dropped once the call has read it.
        let acc0 = if boxed(ty) { self.dup(acc0) } else { acc0 };
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[zero.into(), acc0.into()]);
        self.b.switch_to_block(head);
        let (i, acc) = (self.b.block_params(head)[0], self.b.block_params(head)[1]);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, len);
        self.b.ins().brif(more, body, &[], exit, &[acc.into()]);
        self.b.switch_to_block(body);
        self.b.seal_block(body);
        let x = x(self, i);
        let mut args: Vec<Value> = f.bound.iter().map(|a| self.atom(a)).collect();
        args.extend([acc, x]);
        let next = self.call_ref(f, &args, span)?;
        if boxed(ty) {
            let d = self.func_ref(self.helpers.named["drop_value"]);
            self.b.ins().call(d, &[acc]);
        }
        let i1 = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[i1.into(), next.into()]);
        self.b.seal_block(head);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
        Some(self.b.block_params(exit)[0])
    }

    /// A function reference applied to all its arguments (bound ones
    /// first); `None` when nothing after it runs.
    fn call_ref(&mut self, f: &pmx_lower::FunRef, args: &[Value], span: pmx_ast::Span) -> Option<Value> {
        match f.callee {
            pmx_lower::Callee::Function(id) => Some(self.call(id, args, span)),
            // A keyword's function is never a sequence primitive here: those
            // go through the runtime below.
            pmx_lower::Callee::Builtin(b) if support::primitive(b) => Some(self.prim(b, args, span)),
            pmx_lower::Callee::Builtin(b) => {
                let mut kinds: Vec<runtime::Kind> = f.bound.iter().map(|a| kind(&a.ty())).collect();
                kinds.extend(f.params.iter().map(kind));
                Some(self.builtin(b, args, kinds, &f.result, span))
            }
            pmx_lower::Callee::Math(m) => {
                let h = self.func_ref(self.helpers.math[m.name()]);
                let call = self.b.ins().call(h, args);
                Some(self.b.inst_results(call)[0])
            }
            // The first bound atom is the function value.
            pmx_lower::Callee::Value => {
                let mut kinds: Vec<runtime::Kind> = f.bound[1..].iter().map(|a| kind(&a.ty())).collect();
                kinds.extend(f.params.iter().map(kind));
                Some(self.apply(args[0], &args[1..], kinds, &f.result, span, false))
            }
        }
    }

    /// Statement `s`, the application `f args` (`tail`: see `apply`).
    fn apply_stmt(&mut self, f: &Atom, args: &[Atom], s: &pmx_lower::Stmt, tail: bool) -> Value {
        let kinds: Vec<runtime::Kind> = args.iter().map(|a| kind(&a.ty())).collect();
        let (f, args): (Value, Vec<Value>) = (self.atom(f), args.iter().map(|a| self.atom(a)).collect());
        self.apply(f, &args, kinds, &s.var.ty, s.span, tail)
    }

    /// A function value `f` applied to `args` (of kinds `kinds`) by the
    /// interpreter, giving a `result`; a failure leaves this function.
    /// `tail`: the application is the function's last act (see
    /// `runtime::apply`).
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        f: Value,
        args: &[Value],
        kinds: Vec<runtime::Kind>,
        result: &Type,
        span: pmx_ast::Span,
        tail: bool,
    ) -> Value {
        self.tables.applies.push(runtime::ApplyCall { args: kinds, result: kind(result), span });
        let id = self.b.ins().iconst(types::I64, self.tables.applies.len() as i64 - 1);
        let words = self.words(args);
        let h = self.func_ref(self.helpers.named["apply"]);
        let site = match tail {
            true if self.program.functions[self.me.0 as usize].stub => {
                self.b.ins().bor_imm_u(self.site, runtime::STUB as i64)
            }
            true => self.site,
            false => self.b.ins().iconst(types::I64, runtime::NOT_TAIL as i64),
        };
        let call = self.b.ins().call(h, &[self.ctx, id, f, words, site]);
        let w = self.b.inst_results(call)[0];
        if tail {
            let failed = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, FAILED_OFFSET);
            let (check, go) = (self.b.create_block(), self.b.create_block());
            self.b.ins().brif(failed, check, &[], go, &[]);
            self.b.switch_to_block(check);
            self.b.seal_block(check);
            let quiet = self.b.ins().icmp_imm_s(IntCC::Equal, failed, runtime::QUIET as i64);
            self.b.ins().brif(quiet, self.quiet, &[], self.unwind, &[]);
            self.b.switch_to_block(go);
            self.b.seal_block(go);
        } else {
            self.leave_if_failed();
        }
        self.unword(w, result)
    }

    /// The body of `f` (`inlinable`) in place, on `args`: its variables
    /// are its own (the caller's are set aside meanwhile).
    fn inlined(&mut self, f: FnId, args: &[Value]) -> Value {
        self.in_place(f, args).expect("an inlined body cannot fail")
    }

    /// `f`'s body generated here, its parameters bound to `args`; `None`
    /// where control leaves it.
    fn in_place(&mut self, f: FnId, args: &[Value]) -> Option<Value> {
        let func = &self.program.functions[f.0 as usize];
        let saved = std::mem::take(&mut self.vars);
        for (p, v) in func.params.iter().zip(args) {
            self.vars.insert(p.id, *v);
        }
        let v = self.block(&func.body, false);
        self.vars = saved;
        v
    }

    /// A call of `f` (`unfoldable`) at `span` as its body in place: a
    /// failure inside it records the site the call would have entered
    /// `f`'s frame at, as that frame would when it left, then leaves this
    /// function as any failure here does.
    fn unfolded(&mut self, f: FnId, args: &[Value], span: pmx_ast::Span) -> Value {
        let func = &self.program.functions[f.0 as usize];
        let id = self.tables.site(func.shown.clone(), span) as i64;
        let ty = cl_type(&func.result);
        let outer = self.unwind;
        let failed = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(after, ty);
        self.unwind = failed;
        self.unfolding.push(f);
        let v = self.in_place(f, args);
        self.unfolding.pop();
        self.unwind = outer;
        if let Some(v) = v {
            self.b.ins().jump(after, &[v.into()]);
        }
        self.b.switch_to_block(failed);
        self.b.seal_block(failed);
        let record = self.func_ref(self.helpers.record);
        let site = self.b.ins().iconst(types::I64, id);
        self.b.ins().call(record, &[self.ctx, site]);
        self.b.ins().jump(outer, &[]);
        self.b.switch_to_block(after);
        self.b.seal_block(after);
        self.b.block_params(after)[0]
    }

    /// The native function (and the values bound to it) that function
    /// value `f` is, where it makes the elements of a tensor of `Int`s or
    /// `Float`s of type `t`: `f` made in this function by `closure`.
    fn native_maker(&self, t: &Type, f: &Atom) -> Option<(FnId, Vec<Atom>)> {
        if !matches!(t, Type::Tensor(e) if matches!(**e, Type::Int | Type::Float)) {
            return None;
        }
        let Atom::Var(v) = f else { return None };
        let mut found = None;
        self.program.functions[self.me.0 as usize].body.for_each_stmt(&mut |s| {
            if s.var.id == v.id {
                if let Expr::Closure(pmx_lower::Callee::Function(g), bound) = &s.expr {
                    found = Some((*g, bound.clone()));
                }
            }
        });
        let (g, _) = found.as_ref()?;
        self.ids.contains_key(g).then_some(())?;
        found
    }

    /// A tensor of `Int`s or `Float`s (type `t`) of shape `shape` whose
    /// elements native function `g` (given `bound` first) makes from their
    /// indices, as `tensorCreate*` does: the shape checked, room for the
    /// elements asked for, each made in row-major order; `None` when
    /// nothing after it runs.
    fn tensor_create(&mut self, shape: &Atom, g: FnId, bound: &[Atom], t: &Type, span: pmx_ast::Span) -> Option<Value> {
        let elem = match t {
            Type::Tensor(e) => (**e).clone(),
            _ => unreachable!("a tensor"),
        };
        let id = self.tables.failure(Message::Fixed(String::new()), span) as i64;
        let id = self.b.ins().iconst(types::I64, id);
        let shape = self.atom(shape);
        let size = self.func_ref(self.helpers.named["tensor_size"]);
        let call = self.b.ins().call(size, &[self.ctx, id, shape]);
        let n = self.b.inst_results(call)[0];
        self.leave_if_failed();
        let k = runtime::KINDS.iter().position(|k| *k == kind(&elem)).expect("a kind") as i64;
        let k = self.b.ins().iconst(types::I64, k);
        let room = self.func_ref(self.helpers.named["scalars"]);
        let call = self.b.ins().call(room, &[self.ctx, id, k, n]);
        let p = self.b.inst_results(call)[0];
        self.leave_if_failed();
        self.counted(n, |g2, i| {
            let index = g2.func_ref(g2.helpers.named["tensor_index"]);
            let call = g2.b.ins().call(index, &[shape, i]);
            let idx = g2.b.inst_results(call)[0];
            let mut args: Vec<Value> = bound.iter().map(|a| g2.atom(a)).collect();
            args.push(idx);
            let v = g2.call(g, &args, span);
            let d = g2.func_ref(g2.helpers.named["drop_value"]);
            g2.b.ins().call(d, &[idx]);
            let at = g2.b.ins().imul_imm_s(i, 8);
            let place = g2.b.ins().iadd(p, at);
            g2.b.ins().store(MemFlagsData::trusted(), v, place, 0);
            Some(())
        })?;
        let finish = self.func_ref(self.helpers.named["tensor_finish"]);
        let call = self.b.ins().call(finish, &[k, p, n, shape]);
        Some(self.b.inst_results(call)[0])
    }

    /// Whether `f` owns its parameter `i` (see the free function).
    fn owns_param(&self, f: FnId, i: usize) -> bool {
        owns_param(self.program, self.owning, self.reusing, f, i)
    }

    /// The arguments of call statement `s` of `f`, and which of them are
    /// given to it already: for a parameter `f` owns, a value moved at its
    /// last use (`movable`), or a field taken out of a unique record
    /// (`reuse.rs`); else `call_at` gives a copy.
    fn call_args(&mut self, f: FnId, args: &[Atom], s: &pmx_lower::Stmt) -> (Vec<Value>, Vec<bool>) {
        let mut vals = Vec::with_capacity(args.len());
        let mut given = Vec::with_capacity(args.len());
        let take = self.sites.get(&s.var.id).and_then(|site| {
            let t = site.takes.iter().find(|t| t.0 == s.var.id)?;
            Some((site.clone(), t.1, t.2))
        });
        for (i, a) in args.iter().enumerate() {
            let v = self.atom(a);
            if !self.owns_param(f, i) {
                vals.push(v);
                given.push(false);
                continue;
            }
            if let Some((site, arg, field)) = &take {
                if *arg == i {
                    vals.push(self.take_field(site, *field, v));
                    given.push(true);
                    continue;
                }
            }
            given.push(self.movable(a, occurrences(a, args.iter())));
            vals.push(v);
        }
        (vals, given)
    }

    /// Whether a reuse site's matched value and its record are unique (a
    /// test made once, where first needed).
    fn site_unique(&mut self, site: &reuse::Site) -> Value {
        if let Some(u) = self.unique.get(&site.con) {
            return *u;
        }
        let (t, r) = (self.vars[&site.value], self.vars[&site.payload]);
        // In place where the counts were found (`word.rs`): both counts
        // of both `Arc`s one. Plain loads: the frame holds a count of
        // each, so no other thread can change them to or from one, and
        // nothing makes weak references to these values.
        let u = match word::arc_counts_offsets() {
            Some((strong, weak)) => {
                let mut all = None;
                for (w, tag) in [(t, word::CON), (r, word::RECORD)] {
                    for at in [strong, weak] {
                        let n = self.b.ins().load(types::I64, MemFlagsData::trusted(), w, at - tag as i32);
                        let one = self.b.ins().icmp_imm_s(IntCC::Equal, n, 1);
                        all = Some(match all {
                            None => one,
                            Some(a) => self.b.ins().band(a, one),
                        });
                    }
                }
                all.expect("four counts")
            }
            None => {
                let f = self.func_ref(self.helpers.named["unique"]);
                let call = self.b.ins().call(f, &[t, r]);
                self.b.inst_results(call)[0]
            }
        };
        self.unique.insert(site.con, u);
        u
    }

    /// Field `field` of a reuse site's record, as a word the callee owns:
    /// taken out where the record is unique (the hole filled when the node
    /// is rebuilt), else a copy of `borrowed`, the field as read.
    fn take_field(&mut self, site: &reuse::Site, field: usize, borrowed: Value) -> Value {
        let u = self.site_unique(site);
        self.choose(
            u,
            |g| {
                let r = g.vars[&site.payload];
                let index = g.b.ins().iconst(types::I64, field as i64);
                let f = g.func_ref(g.helpers.named["take_field"]);
                let call = g.b.ins().call(f, &[r, index]);
                g.b.inst_results(call)[0]
            },
            |g| g.dup(borrowed),
        )
    }

    /// `yes` where `cond` holds, else `no`: each a word, made in a block
    /// of its own.
    fn choose(
        &mut self,
        cond: Value,
        yes: impl FnOnce(&mut Self) -> Value,
        no: impl FnOnce(&mut Self) -> Value,
    ) -> Value {
        let (y, n, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(join, types::I64);
        self.b.ins().brif(cond, y, &[], n, &[]);
        for (blk, make) in [(y, Box::new(yes) as Box<dyn FnOnce(&mut Self) -> Value>), (n, Box::new(no))] {
            self.b.switch_to_block(blk);
            self.b.seal_block(blk);
            let w = make(self);
            self.b.ins().jump(join, &[w.into()]);
        }
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        self.b.block_params(join)[0]
    }

    /// A reuse site's node: where unique, the matched value itself with
    /// the new fields written into its record; else a new record and
    /// value. Both ways take the same values (`moved`: those whose last
    /// use is the record statement, at index `at` of the block, moved
    /// here as if there, since nothing between reads them). The node is
    /// the function's result, so the matched value is given up by the
    /// frame (`move_out`): the result where unique, else dropped once the
    /// new node is made (a copy of it where it cannot be given up).
    fn rebuild(
        &mut self,
        site: &reuse::Site,
        record: &pmx_lower::Stmt,
        at: usize,
        variant: pmx_lower::VariantId,
        tag: usize,
    ) -> Value {
        let Expr::Record(fields) = &record.expr else { unreachable!("a reuse site's record") };
        let atoms: Vec<&Atom> = fields.iter().map(|(_, a)| a).collect();
        let depth = self.scopes.len() - 1;
        let here = std::mem::replace(&mut self.lasts[depth - 1].1, at);
        let moved = self.moved_bits(&atoms);
        self.lasts[depth - 1].1 = here;
        let given_up = self.move_out(site.value);
        let u = self.site_unique(site);
        self.choose(
            u,
            |g| {
                let mut spec = Vec::new();
                let mut words = Vec::new();
                let mut moved_replaced = 0i64;
                for (k, (index, pos)) in site.replaced.iter().enumerate() {
                    let a = &fields[*pos].1;
                    let kind = runtime::KINDS.iter().position(|k| *k == kind(&a.ty())).expect("a kind") as i64;
                    spec.push(g.b.ins().iconst(types::I64, (*index as i64) | kind << 32));
                    words.push(g.atom(a));
                    if moved >> pos & 1 != 0 {
                        moved_replaced |= 1 << k;
                    }
                }
                let spec = g.words(&spec);
                let words = g.words(&words);
                let n = g.b.ins().iconst(types::I64, site.replaced.len() as i64);
                let moved_replaced = g.b.ins().iconst(types::I64, moved_replaced);
                let r = g.vars[&site.payload];
                let f = g.func_ref(g.helpers.named["put_fields"]);
                g.b.ins().call(f, &[r, n, spec, words, moved_replaced]);
                let t = g.vars[&site.value];
                if given_up {
                    t
                } else {
                    g.dup(t)
                }
            },
            |g| {
                let values: Vec<Value> = atoms.iter().map(|a| g.atom(a)).collect();
                let rec = g.make_record(fields, &values, moved);
                let con = g.con(variant, tag);
                let con = g.b.ins().iconst(types::I64, con as i64);
                let one = g.b.ins().iconst(types::I64, 1);
                let f = g.func_ref(g.helpers.named["make_con"]);
                let call = g.b.ins().call(f, &[g.ctx, con, rec, one]);
                let node = g.b.inst_results(call)[0];
                if given_up {
                    let t = g.vars[&site.value];
                    let f = g.func_ref(g.helpers.named["drop_value"]);
                    g.b.ins().call(f, &[t]);
                }
                node
            },
        )
    }

    /// A record of `fields` (their values `values`; bit `i` of `moved`:
    /// field `i` is given), as the runtime makes it.
    fn make_record(&mut self, fields: &[(pmx_ast::SmolStr, Atom)], values: &[Value], moved: i64) -> Value {
        let kinds: Vec<runtime::Kind> = fields.iter().map(|(_, a)| kind(&a.ty())).collect();
        let labels: std::sync::Arc<[pmx_ast::SmolStr]> = fields.iter().map(|(l, _)| l.clone()).collect();
        self.tables.records.push(runtime::RecordShape { labels, kinds });
        let shape = self.b.ins().iconst(types::I64, self.tables.records.len() as i64 - 1);
        let words = self.words(values);
        let moved = self.b.ins().iconst(types::I64, moved);
        let f = self.func_ref(self.helpers.named["make_record"]);
        let call = self.b.ins().call(f, &[self.ctx, shape, words, moved]);
        self.b.inst_results(call)[0]
    }

    /// A call of function `f` that is not a tail call: its failure leaves
    /// this function too. A top-level value's function is a read.
    fn call(&mut self, f: FnId, args: &[Value], span: pmx_ast::Span) -> Value {
        if self.inline.contains(&f) {
            return self.inlined(f, args);
        }
        let func = &self.program.functions[f.0 as usize];
        if let Some(id) = func.global {
            let result = func.result.clone();
            self.tables.globals.push((id, kind(&result)));
            let g = self.b.ins().iconst(types::I64, self.tables.globals.len() as i64 - 1);
            let h = self.func_ref(self.helpers.named["global"]);
            let call = self.b.ins().call(h, &[self.ctx, g]);
            let w = self.b.inst_results(call)[0];
            self.leave_if_failed();
            return self.unword(w, &result);
        }
        let callee_name = self.program.functions[f.0 as usize].shown.clone();
        let id = self.tables.site(callee_name, span) as i64;
        let site = self.b.ins().iconst(types::I64, id);
        self.call_at(f, args, &[], site, self.unwind)
    }

    /// The site of a tail call of `f` at `span`: one that replaces the
    /// frame the interpreter called keeps that mark.
    fn tail_site(&mut self, f: FnId, span: pmx_ast::Span) -> Value {
        let callee_name = self.program.functions[f.0 as usize].shown.clone();
        let id = self.tables.site(callee_name, span) as i64;
        let root = self.b.ins().band_imm_u(self.site, ROOT as i64);
        self.b.ins().bor_imm_u(root, id)
    }

    /// A call of `f` entered at `site`, leaving through `on_failure`; a
    /// parameter the callee owns is given a copy, unless `given` says the
    /// argument is this frame's to give already (moved).
    fn call_at(&mut self, f: FnId, args: &[Value], given: &[bool], site: Value, on_failure: ClBlock) -> Value {
        let mut vals = vec![self.ctx, site];
        for (i, v) in args.iter().enumerate() {
            let copy = self.owns_param(f, i) && !given.get(i).copied().unwrap_or(false);
            vals.push(if copy { self.dup(*v) } else { *v });
        }
        let r = self.func_ref(self.ids[&f]);
        let call = self.b.ins().call(r, &vals);
        let result = self.b.inst_results(call)[0];
        let failed = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, FAILED_OFFSET);
        let go = self.b.create_block();
        self.b.ins().brif(failed, on_failure, &[], go, &[]);
        self.b.switch_to_block(go);
        self.b.seal_block(go);
        result
    }

    /// The three words a helper writes about `v` (`seq_view`,
    /// `tensor_view`), taken once per block and value (`cache`).
    fn viewed(&mut self, helper: &str, v: Value, cache: fn(&mut Self) -> &mut Views) -> [Value; 3] {
        let here = self.b.current_block().expect("generating into a block");
        if let Some((blk, w)) = cache(self).get(&v) {
            if blk.is_none() || *blk == Some(here) {
                return *w;
            }
        }
        let slot = self.b.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
            cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
            24,
            3,
        ));
        let out = self.b.ins().stack_addr(types::I64, slot, 0);
        let f = self.func_ref(self.helpers.named[helper]);
        self.b.ins().call(f, &[v, out]);
        let w = [0, 8, 16].map(|off| self.b.ins().load(types::I64, MemFlagsData::trusted(), out, off));
        cache(self).insert(v, (Some(here), w));
        w
    }

    /// Where a borrowed sequence's elements are.
    fn view(&mut self, s: Value) -> SeqView {
        let [base, len, stride] = self.viewed("seq_view", s, |g| &mut g.seq_views);
        let values = self.b.ins().icmp_imm_s(IntCC::Equal, stride, runtime::VALUE_STRIDE);
        let (eight, zero) = (self.b.ins().iconst(types::I64, 8), self.b.ins().iconst(types::I64, 0));
        let skip = self.b.ins().select(values, eight, zero);
        let scalars = self.b.ins().iadd(base, skip);
        SeqView { seq: s, base, len, stride, scalars }
    }

    /// Element `i` (in bounds) of a viewed sequence of `elem`s: a scalar,
    /// or where a sequence's or record's `Value` is.
    fn element(&mut self, v: SeqView, i: Value, elem: &Type) -> Value {
        if *elem == Type::Unit {
            return self.b.ins().iconst(types::I8, 0);
        }
        let at = self.b.ins().imul(i, v.stride);
        if abstract_type(self.program, elem) {
            return self.abstract_element(v, i, at);
        }
        if boxed(elem) {
            let place = self.b.ins().iadd(v.base, at);
            return self.read(place, elem);
        }
        let place = self.b.ins().iadd(v.scalars, at);
        self.b.ins().load(cl_type(elem), MemFlagsData::trusted(), place, 0)
    }

    /// Element `i` of a sequence of an abstract type's values (threads,
    /// mutexes: the runtime's own, often an `Int` handle), which the
    /// runtime may hold unboxed (`Seq::Int`, as it was built): the
    /// `Value` at its place, or, where the sequence holds scalars, one
    /// written by the runtime into a slot of this frame. Such a value is
    /// a scalar (nothing to drop), and a read is borrowed, so the slot
    /// outlives every use of it (a value that must outlive the frame is
    /// copied out, as any borrowed one).
    fn abstract_element(&mut self, v: SeqView, i: Value, at: Value) -> Value {
        let slot = self.b.create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
            cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
            runtime::VALUE_STRIDE as u32,
            3,
        ));
        let values = self.b.ins().icmp_imm_s(IntCC::Equal, v.stride, runtime::VALUE_STRIDE);
        let (boxed_block, scalar_block, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(done, types::I64);
        self.b.ins().brif(values, boxed_block, &[], scalar_block, &[]);
        self.b.switch_to_block(boxed_block);
        self.b.seal_block(boxed_block);
        let place = self.b.ins().iadd(v.base, at);
        self.b.ins().jump(done, &[place.into()]);
        self.b.switch_to_block(scalar_block);
        self.b.seal_block(scalar_block);
        let out = self.b.ins().stack_addr(types::I64, slot, 0);
        let f = self.func_ref(self.helpers.named["scalar_element"]);
        self.b.ins().call(f, &[out, v.seq, i]);
        self.b.ins().jump(done, &[out.into()]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        self.b.block_params(done)[0]
    }

    /// A value of type `t` at a `Value`'s place (borrowed): a scalar is
    /// read (a `Value`'s payload is at offset 8), a sequence, record,
    /// variant value or tensor is its `Arc`'s pointer with its tag
    /// (`word.rs`), any other value the place itself.
    fn read(&mut self, place: Value, t: &Type) -> Value {
        match t {
            Type::Unit => self.b.ins().iconst(types::I8, 0),
            t if boxed(t) => match word_tag(self.program, t) {
                Some(tag) => {
                    // The `Value` holds where its `Arc` is; the word is
                    // where the data is, with its tag (the data is aligned
                    // to 8, so adding sets the bits).
                    let p = self.b.ins().load(types::I64, MemFlagsData::trusted(), place, 8);
                    self.b.ins().iadd_imm_s(p, word::arc_data_offset() + tag as i64)
                }
                None => place,
            },
            t => self.b.ins().load(cl_type(t), MemFlagsData::trusted(), place, 8),
        }
    }

    /// `length`, `null`, `get` and `head` of a borrowed sequence; `elem`:
    /// the result's type.
    fn seq_prim(&mut self, b: Builtin, a: &[Value], elem: &Type, span: pmx_ast::Span) -> Value {
        let v = self.view(a[0]);
        let len = v.len;
        let index = match b {
            Builtin::Length => return len,
            Builtin::Null => return self.b.ins().icmp_imm_s(IntCC::Equal, len, 0),
            Builtin::Head => {
                let ok = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, 0);
                self.guard(ok, Message::Fixed("Head on empty sequence".into()), span, &[]);
                self.b.ins().iconst(types::I64, 0)
            }
            _ => {
                // One unsigned comparison tests both ends.
                let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, a[1], len);
                self.guard(ok, Message::OutOfBounds, span, &[a[1], len]);
                a[1]
            }
        };
        self.element(v, index, elem)
    }

    fn prim(&mut self, b: Builtin, a: &[Value], span: pmx_ast::Span) -> Value {
        use Builtin::*;
        match b {
            Addi => self.b.ins().iadd(a[0], a[1]),
            Subi => self.b.ins().isub(a[0], a[1]),
            Muli => self.b.ins().imul(a[0], a[1]),
            Divi | Modi => {
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, a[1], 0);
                self.guard(nonzero, Message::Fixed("Division by zero".into()), span, &[]);
                // `x / -1` is `-x`, wrapping, and `x % -1` is 0 (the
                // machine's division traps on the smallest Int).
                let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, a[1], -1);
                let one = self.b.ins().iconst(types::I64, 1);
                let divisor = self.b.ins().select(minus_one, one, a[1]);
                if b == Divi {
                    let q = self.b.ins().sdiv(a[0], divisor);
                    let neg = self.b.ins().ineg(a[0]);
                    self.b.ins().select(minus_one, neg, q)
                } else {
                    let r = self.b.ins().srem(a[0], divisor);
                    let zero = self.b.ins().iconst(types::I64, 0);
                    self.b.ins().select(minus_one, zero, r)
                }
            }
            Negi => self.b.ins().ineg(a[0]),
            // Counts outside 0..64 shift every bit out (`srai`: all sign).
            Slli | Srli | Srai => {
                let in_range = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, a[1], 64);
                match b {
                    Slli => {
                        let s = self.b.ins().ishl(a[0], a[1]);
                        let zero = self.b.ins().iconst(types::I64, 0);
                        self.b.ins().select(in_range, s, zero)
                    }
                    Srli => {
                        let s = self.b.ins().ushr(a[0], a[1]);
                        let zero = self.b.ins().iconst(types::I64, 0);
                        self.b.ins().select(in_range, s, zero)
                    }
                    _ => {
                        let all = self.b.ins().iconst(types::I64, 63);
                        let n = self.b.ins().select(in_range, a[1], all);
                        self.b.ins().sshr(a[0], n)
                    }
                }
            }
            Eqi | Eqc => self.b.ins().icmp(IntCC::Equal, a[0], a[1]),
            Neqi => self.b.ins().icmp(IntCC::NotEqual, a[0], a[1]),
            Lti => self.b.ins().icmp(IntCC::SignedLessThan, a[0], a[1]),
            Gti => self.b.ins().icmp(IntCC::SignedGreaterThan, a[0], a[1]),
            Leqi => self.b.ins().icmp(IntCC::SignedLessThanOrEqual, a[0], a[1]),
            Geqi => self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a[0], a[1]),
            Addf => self.b.ins().fadd(a[0], a[1]),
            Subf => self.b.ins().fsub(a[0], a[1]),
            Mulf => self.b.ins().fmul(a[0], a[1]),
            Divf => self.b.ins().fdiv(a[0], a[1]),
            Negf => self.b.ins().fneg(a[0]),
            Eqf => self.b.ins().fcmp(FloatCC::Equal, a[0], a[1]),
            Neqf => self.b.ins().fcmp(FloatCC::NotEqual, a[0], a[1]),
            Ltf => self.b.ins().fcmp(FloatCC::LessThan, a[0], a[1]),
            Gtf => self.b.ins().fcmp(FloatCC::GreaterThan, a[0], a[1]),
            Leqf => self.b.ins().fcmp(FloatCC::LessThanOrEqual, a[0], a[1]),
            Geqf => self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, a[0], a[1]),
            Int2float => self.b.ins().fcvt_from_sint(types::F64, a[0]),
            // Saturating, NaN to 0: the interpreter's `as i64`.
            Floorfi => {
                let f = self.b.ins().floor(a[0]);
                self.b.ins().fcvt_to_sint_sat(types::I64, f)
            }
            Ceilfi => {
                let f = self.b.ins().ceil(a[0]);
                self.b.ins().fcvt_to_sint_sat(types::I64, f)
            }
            Roundfi => {
                let round = self.func_ref(self.helpers.round);
                let call = self.b.ins().call(round, &[a[0]]);
                let f = self.b.inst_results(call)[0];
                self.b.ins().fcvt_to_sint_sat(types::I64, f)
            }
            Char2int => self.b.ins().uextend(types::I64, a[0]),
            Int2char => {
                // A code point: below 0x110000 and not a surrogate.
                let below = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, a[0], 0x110000);
                let from = self.b.ins().iadd_imm_s(a[0], -0xD800);
                let surrogate = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, from, 0x800);
                let not_surrogate = self.b.ins().bxor_imm_u(surrogate, 1);
                let ok = self.b.ins().band(below, not_surrogate);
                self.guard(ok, Message::Int2char, span, &[a[0]]);
                self.b.ins().ireduce(types::I32, a[0])
            }
            _ => unreachable!("support::primitive lists what is generated: {}", b.name()),
        }
    }
}
