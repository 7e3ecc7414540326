//! Entries wrapped as the interpreter's native functions: arguments
//! become machine words, the result a value, a failure the located error
//! the machine code recorded.

use crate::gen::{self, kind, EntryFn};
use crate::roots::Root;
use crate::runtime::Kind;
use crate::runtime::{Ctx, Tables};
use cranelift_jit::JITModule;
use pmx_cpu::value::Value;
use pmx_cpu::{Native, Natives};
use pmx_lower::{FnId, Program, Type};
use rustc_hash::FxHashSet;
use std::sync::{Arc, Weak};

/// The compiled program, alive as long as a native function refers to it.
struct Code {
    module: Option<JITModule>,
    tables: Tables,
}

// Safety: after `finalize_definitions` the module's memory is only read
// and executed; the tables are read-only.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // Safety: the last native function referring to it is gone.
            unsafe { m.free_memory() };
        }
    }
}

pub fn build(program: &Program, good: &FxHashSet<FnId>, entries: &[(&Root, FnId)]) -> Result<Natives, String> {
    // Entries for the roots, and for the functions native code makes
    // function values of (the interpreter calls those values).
    let valued = made_values(program, good);
    let mut wanted: Vec<FnId> = entries.iter().map(|(_, f)| *f).collect();
    wanted.extend(valued.iter().copied());
    wanted.sort();
    wanted.dedup();
    let compiled = gen::compile(program, good, &wanted)?;
    let gen::Compiled { module, mut tables, entries: addresses } = compiled;
    // A function value refers to the code weakly: the code's tables hold
    // the values (a strong reference would be a cycle); the roots' native
    // functions keep it.
    let code = Arc::new_cyclic(|weak: &Weak<Code>| {
        for &f in &valued {
            let func = &program.functions[f.0 as usize];
            let native = native_fn(program, f, addresses[&f], Holder::Weak(weak.clone()));
            let value = pmx_cpu::native::closure(&native, &func.shown, func.span);
            if let Value::Closure(c) = &value {
                let entry = entry_at(addresses[&f]);
                let params = func.params.iter().map(|p| kind(&p.ty)).collect();
                let direct = crate::runtime::Direct { entry, params, name: func.shown.clone() };
                tables.direct.insert(c.code as *const pmx_cpu::code::LamCode as usize, direct);
            }
            tables.functions.insert(f, value);
        }
        Code { module: Some(module), tables }
    });
    let mut natives = Natives::default();
    for (root, f) in entries {
        natives.insert(root.id, native_fn(program, *f, addresses[f], Holder::Strong(code.clone())));
    }
    Ok(natives)
}

/// How a native function holds the code it calls.
enum Holder {
    Strong(Arc<Code>),
    Weak(Weak<Code>),
}

/// Native function `f` (its entry at `entry`): the interpreter calls it
/// with the arguments as values.
fn native_fn(program: &Program, f: FnId, entry: *const u8, code: Holder) -> Arc<Native> {
    let func = &program.functions[f.0 as usize];
    let params: Vec<Type> = func.params.iter().map(|p| p.ty.clone()).collect();
    let result = func.result.clone();
    let span = func.span;
    let entry = entry_at(entry);
    let arity = params.len();
    let call = move |m: &mut pmx_cpu::Machine, args: &[Value]| {
        let code = match &code {
            Holder::Strong(c) => c.clone(),
            Holder::Weak(w) => w.upgrade().ok_or_else(|| {
                let message = format!("{}a function value outlived its native code", pmx_cpu::INTERNAL_PREFIX);
                pmx_cpu::RuntimeError::from_engine(message, span)
            })?,
        };
        let words: smallvec::SmallVec<[u64; 8]> = args.iter().zip(&params).map(|(a, t)| word(a, t)).collect();
        let mut ctx = Ctx::new(m.stack_limit(), &code.tables, m as *mut pmx_cpu::Machine);
        let mut out = 0u64;
        // Safety: `words` has one word per parameter, `out` one for the
        // result; the code lives in `code`.
        unsafe { entry(&mut ctx, words.as_ptr(), &mut out) };
        match ctx.error.take() {
            Some(e) => Err(e),
            None => Ok(value(out, &result)),
        }
    };
    Arc::new(Native { arity, call: Box::new(call) })
}

/// The entry `gen` compiled at `address`.
fn entry_at(address: *const u8) -> EntryFn {
    // Safety: `gen` gives every entry this signature.
    unsafe { std::mem::transmute::<*const u8, EntryFn>(address) }
}

/// The functions of `good` that native code makes function values of.
fn made_values(program: &Program, good: &FxHashSet<FnId>) -> Vec<FnId> {
    let mut out: Vec<FnId> = Vec::new();
    for f in good {
        program.functions[f.0 as usize].body.for_each_stmt(&mut |s| {
            if let pmx_lower::Expr::Closure(pmx_lower::Callee::Function(g), _) = &s.expr {
                if !out.contains(g) {
                    out.push(*g);
                }
            }
        });
    }
    out.sort();
    out
}

/// An argument as a word: a scalar, or where a sequence or record is
/// (native code borrows it for the call; `args` outlives it).
fn word(v: &Value, t: &Type) -> u64 {
    kind(t).borrowed_word(v)
}

fn value(w: u64, t: &Type) -> Value {
    match kind(t) {
        // Safety: native code returns sequences, records, variant values
        // and tensors in boxes of their own, which the caller takes.
        Kind::Boxed => *unsafe { Box::from_raw(w as *mut Value) },
        k => k.value(w),
    }
}
