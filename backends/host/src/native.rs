//! Entries wrapped as the interpreter's native functions: arguments
//! become machine words, the result a value, a failure the located error
//! the machine code recorded.

use crate::gen::{self, kind, EntryFn};
use crate::image::{Entry, Image};
use crate::roots::Root;
use crate::runtime::Kind;
use crate::runtime::{Ctx, Tables};
use cranelift_jit::JITModule;
use pmx_cpu::value::Value;
use pmx_cpu::{Native, Natives};
use pmx_lower::{FnId, Program};
use rustc_hash::{FxHashMap, FxHashSet};
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

/// The machine code of the roots `entries` and of what they reach, as
/// data (`image.rs`).
pub fn image(program: &Program, good: &FxHashSet<FnId>, entries: &[(&Root, FnId)]) -> Result<Image, String> {
    // Entries for the roots, and for the functions native code makes
    // function values of (the interpreter calls those values).
    let valued = made_values(program, good);
    let mut wanted: Vec<FnId> = entries.iter().map(|(_, f)| *f).collect();
    wanted.extend(valued.iter().copied());
    wanted.sort();
    wanted.dedup();
    let last = entries.iter().find(|(r, _)| r.id == pmx_ast::NameId::MAIN).map(|(_, f)| *f);
    let gen::Compiled { functions, tables, entries: wrappers } = gen::compile(program, good, &wanted, last)?;
    let entry = |(f, wrapper): (FnId, cranelift_module::FuncId)| {
        let func = &program.functions[f.0 as usize];
        Entry {
            function: f,
            wrapper,
            params: func.params.iter().map(|p| kind(&p.ty)).collect(),
            result: kind(&func.result),
            shown: func.shown.clone(),
            span: func.span,
        }
    };
    Ok(Image {
        functions,
        tables,
        entries: wrappers.into_iter().map(entry).collect(),
        roots: entries.iter().map(|(r, f)| (r.id, *f)).collect(),
        valued,
    })
}

/// The native functions of an image: its code linked, each root's entry
/// wrapped for the interpreter.
pub fn load(image: Image) -> Result<Natives, String> {
    let Image { functions, mut tables, entries, roots, valued } = image;
    let module = gen::link(&functions)?;
    drop(functions);
    let entries: FxHashMap<FnId, Entry> = entries.into_iter().map(|e| (e.function, e)).collect();
    let address = |f: &FnId| -> Result<(&Entry, EntryFn), String> {
        let e = entries.get(f).ok_or_else(|| format!("no entry for function {}", f.0))?;
        Ok((e, entry_at(module.get_finalized_function(e.wrapper))))
    };
    let valued: Vec<(&Entry, EntryFn)> = valued.iter().map(address).collect::<Result<_, _>>()?;
    let roots: Vec<(pmx_ast::NameId, &Entry, EntryFn)> =
        roots.iter().map(|(id, f)| address(f).map(|(e, a)| (*id, e, a))).collect::<Result<_, _>>()?;
    // A function value refers to the code weakly: the code's tables hold
    // the values (a strong reference would be a cycle); the roots' native
    // functions keep it.
    let code = Arc::new_cyclic(|weak: &Weak<Code>| {
        for (e, entry) in &valued {
            let native = native_fn(e, *entry, Holder::Weak(weak.clone()));
            let value = pmx_cpu::native::closure(&native, &e.shown, e.span);
            if let Value::Closure(c) = &value {
                let direct = crate::runtime::Direct { entry: *entry, params: e.params.clone(), name: e.shown.clone() };
                tables.direct.insert(c.code as *const pmx_cpu::code::LamCode as usize, direct);
            }
            tables.functions.insert(e.function, value);
        }
        Code { module: Some(module), tables }
    });
    let mut natives = Natives::default();
    for (id, e, entry) in roots {
        natives.insert(id, native_fn(e, entry, Holder::Strong(code.clone())));
    }
    Ok(natives)
}

/// How a native function holds the code it calls.
enum Holder {
    Strong(Arc<Code>),
    Weak(Weak<Code>),
}

/// Native function `e` (its wrapper at `entry`): the interpreter calls
/// it with the arguments as values.
fn native_fn(e: &Entry, entry: EntryFn, code: Holder) -> Arc<Native> {
    let params = e.params.clone();
    let result = e.result;
    let span = e.span;
    let arity = params.len();
    let call = move |m: &mut pmx_cpu::Machine, args: &[Value]| {
        let code = match &code {
            Holder::Strong(c) => c.clone(),
            Holder::Weak(w) => w.upgrade().ok_or_else(|| {
                let message = format!("{}a function value outlived its native code", pmx_cpu::INTERNAL_PREFIX);
                pmx_cpu::RuntimeError::from_engine(message, span)
            })?,
        };
        // An argument as a word: a scalar, or where a sequence or record
        // is (native code borrows it for the call; `args` outlives it).
        let words: smallvec::SmallVec<[u64; 8]> = args.iter().zip(&params).map(|(a, k)| k.borrowed_word(a)).collect();
        let mut ctx = Ctx::new(m.stack_limit(), &code.tables, m as *mut pmx_cpu::Machine);
        let mut out = 0u64;
        // Safety: `words` has one word per parameter, `out` one for the
        // result; the code lives in `code`.
        unsafe { entry(&mut ctx, words.as_ptr(), &mut out) };
        match ctx.error.take() {
            Some(e) => Err(e),
            None => Ok(value(out, result)),
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

fn value(w: u64, k: Kind) -> Value {
    match k {
        // Safety: native code returns owned words, which the caller takes.
        Kind::Boxed => unsafe { crate::word::take(w) },
        k => k.value(w),
    }
}
