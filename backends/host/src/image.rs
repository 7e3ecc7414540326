//! A compiled program as plain data: the machine code of its functions
//! (bytes, relocations, signatures), the tables the code refers to by
//! number, and what the interpreter needs to call its entries. The code
//! generator makes one (`gen.rs`), `native.rs` links one into executable
//! memory, and the host code cache (`cache.rs`) stores and reads one: a
//! fresh compile and a cached one are linked by the same code.
//!
//! Invariant: the functions are declared, when linked, after the runtime
//! helpers (`gen::declare_helpers`) and in the order of their ids, so
//! the ids their relocations name are the ids they get again.

use crate::runtime::{self, Kind, Tables};
use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::{types, LibCall};
use cranelift_module::{FuncId, ModuleReloc, ModuleRelocTarget};
use pmx_ast::{NameId, SmolStr, Span};
use pmx_lower::FnId;

pub struct Image {
    /// Every function, its entries' wrappers too, by id.
    pub functions: Vec<MachineFn>,
    pub tables: Tables,
    /// The functions the interpreter calls (roots and function values).
    pub entries: Vec<Entry>,
    /// The top-level bindings that run as machine code, by function.
    pub roots: Vec<(NameId, FnId)>,
    /// The functions native code makes function values of.
    pub valued: Vec<FnId>,
}

/// One function's machine code, as Cranelift compiled it.
pub struct MachineFn {
    pub id: FuncId,
    pub name: String,
    pub sig: Sig,
    pub alignment: u64,
    pub bytes: Vec<u8>,
    pub relocs: Vec<ModuleReloc>,
}

/// A signature: Cranelift's `tail` convention (host functions) or the
/// platform's (entries), and the machine types.
#[derive(Clone, Debug, PartialEq)]
pub struct Sig {
    pub tail: bool,
    pub params: Vec<types::Type>,
    pub returns: Vec<types::Type>,
}

/// A function the interpreter calls: its entry wrapper's id and what the
/// wrapper's words are.
pub struct Entry {
    pub function: FnId,
    pub wrapper: FuncId,
    pub params: Vec<Kind>,
    pub result: Kind,
    pub shown: SmolStr,
    pub span: Span,
}

// The encoding: little-endian integers, lengths before sequences. A
// reader that finds anything else says so (a damaged cache entry is
// compiled again, never trusted).

pub struct Writer(pub Vec<u8>);

pub struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

/// Why a stored image could not be read or written.
#[derive(Debug)]
pub struct Bad(pub String);

type R<T> = Result<T, Bad>;

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, at: 0 }
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.data.len()).ok_or_else(|| Bad("truncated".into()))?;
        let out = &self.data[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn done(&self) -> R<()> {
        if self.at == self.data.len() {
            Ok(())
        } else {
            Err(Bad("trailing bytes".into()))
        }
    }
}

/// A value that can be written and read back.
pub trait Store: Sized {
    fn put(&self, w: &mut Writer) -> R<()>;
    fn get(r: &mut Reader) -> R<Self>;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Store for $t {
            fn put(&self, w: &mut Writer) -> R<()> {
                w.0.extend_from_slice(&self.to_le_bytes());
                Ok(())
            }
            fn get(r: &mut Reader) -> R<Self> {
                let b = r.take(std::mem::size_of::<$t>())?;
                Ok(<$t>::from_le_bytes(b.try_into().expect("sized")))
            }
        }
    )*};
}
ints!(u8, u32, u64, i64);

impl Store for usize {
    fn put(&self, w: &mut Writer) -> R<()> {
        (*self as u64).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        usize::try_from(u64::get(r)?).map_err(|_| Bad("a length too large".into()))
    }
}

impl Store for bool {
    fn put(&self, w: &mut Writer) -> R<()> {
        (*self as u8).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        match u8::get(r)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Bad("a bad boolean".into())),
        }
    }
}

fn put_bytes(bytes: &[u8], w: &mut Writer) -> R<()> {
    bytes.len().put(w)?;
    w.0.extend_from_slice(bytes);
    Ok(())
}

impl Store for Vec<u8> {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_bytes(self, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let n = usize::get(r)?;
        Ok(r.take(n)?.to_vec())
    }
}

impl Store for String {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_bytes(self.as_bytes(), w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        String::from_utf8(Vec::<u8>::get(r)?).map_err(|_| Bad("bad text".into()))
    }
}

impl Store for SmolStr {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_bytes(self.as_bytes(), w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(SmolStr::new(String::get(r)?))
    }
}

/// Sequences other than bytes.
pub fn put_seq<T: Store>(xs: &[T], w: &mut Writer) -> R<()> {
    xs.len().put(w)?;
    xs.iter().try_for_each(|x| x.put(w))
}

pub fn get_seq<T: Store>(r: &mut Reader) -> R<Vec<T>> {
    let n = usize::get(r)?;
    // Each element takes a byte at least: a damaged length cannot make
    // the reader reserve more than the data holds.
    if n > r.data.len() - r.at {
        return Err(Bad("a length past the end".into()));
    }
    (0..n).map(|_| T::get(r)).collect()
}

impl<A: Store, B: Store> Store for (A, B) {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.0.put(w)?;
        self.1.put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok((A::get(r)?, B::get(r)?))
    }
}

impl<A: Store, B: Store, C: Store> Store for (A, B, C) {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.0.put(w)?;
        self.1.put(w)?;
        self.2.put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok((A::get(r)?, B::get(r)?, C::get(r)?))
    }
}

impl<T: Store> Store for Option<T> {
    fn put(&self, w: &mut Writer) -> R<()> {
        match self {
            None => 0u8.put(w),
            Some(x) => {
                1u8.put(w)?;
                x.put(w)
            }
        }
    }
    fn get(r: &mut Reader) -> R<Self> {
        match u8::get(r)? {
            0 => Ok(None),
            1 => Ok(Some(T::get(r)?)),
            _ => Err(Bad("a bad option".into())),
        }
    }
}

impl Store for Span {
    fn put(&self, w: &mut Writer) -> R<()> {
        (self.file.0, self.start, self.end).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let (file, start, end) = <(u32, u32, u32)>::get(r)?;
        Ok(Span::new(pmx_ast::FileId(file), start, end))
    }
}

impl Store for NameId {
    fn put(&self, w: &mut Writer) -> R<()> {
        (self.file.0, self.index).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let (file, index) = <(u32, u32)>::get(r)?;
        Ok(NameId { file: pmx_ast::FileId(file), index })
    }
}

impl Store for FnId {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.0.put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(FnId(u32::get(r)?))
    }
}

impl Store for FuncId {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.as_u32().put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(FuncId::from_u32(u32::get(r)?))
    }
}

/// An enum stored as its position in a list of all its values.
fn put_among<T: PartialEq + std::fmt::Debug>(x: &T, all: &[T], w: &mut Writer) -> R<()> {
    let i = all.iter().position(|y| y == x).ok_or_else(|| Bad(format!("{x:?} is not storable")))?;
    (i as u32).put(w)
}

fn get_among<T: Copy>(all: &[T], r: &mut Reader) -> R<T> {
    all.get(u32::get(r)? as usize).copied().ok_or_else(|| Bad("an unknown variant".into()))
}

const KINDS: &[Kind] = &[Kind::Int, Kind::Float, Kind::Bool, Kind::Char, Kind::Unit, Kind::Boxed];

impl Store for Kind {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_among(self, KINDS, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        get_among(KINDS, r)
    }
}

impl Store for pmx_ast::Builtin {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_among(self, pmx_ast::Builtin::ALL, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        get_among(pmx_ast::Builtin::ALL, r)
    }
}

const TYPES: &[types::Type] = &[types::I8, types::I16, types::I32, types::I64, types::F32, types::F64];

impl Store for types::Type {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_among(self, TYPES, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        get_among(TYPES, r)
    }
}

/// The relocations Cranelift's JIT targets emit for this generator's
/// code (calls, and addresses of symbols).
const RELOCS: &[Reloc] = &[
    Reloc::Abs4,
    Reloc::Abs8,
    Reloc::X86PCRel4,
    Reloc::X86CallPCRel4,
    Reloc::X86CallPLTRel4,
    Reloc::X86GOTPCRel4,
    Reloc::Arm64Call,
    Reloc::Aarch64AdrGotPage21,
    Reloc::Aarch64Ld64GotLo12Nc,
    Reloc::RiscvCallPlt,
];

impl Store for ModuleReloc {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.offset.put(w)?;
        put_among(&self.kind, RELOCS, w)?;
        self.addend.put(w)?;
        match &self.name {
            ModuleRelocTarget::User { namespace, index } => (0u8, *namespace, *index).put(w),
            ModuleRelocTarget::LibCall(l) => {
                1u8.put(w)?;
                put_among(l, LibCall::all_libcalls(), w)
            }
            ModuleRelocTarget::FunctionOffset(f, offset) => (2u8, *f, *offset).put(w),
            ModuleRelocTarget::KnownSymbol(k) => Err(Bad(format!("a relocation to {k:?} is not storable"))),
        }
    }
    fn get(r: &mut Reader) -> R<Self> {
        let offset = u32::get(r)?;
        let kind = get_among(RELOCS, r)?;
        let addend = i64::get(r)?;
        let name = match u8::get(r)? {
            0 => {
                let (namespace, index) = <(u32, u32)>::get(r)?;
                ModuleRelocTarget::User { namespace, index }
            }
            1 => ModuleRelocTarget::LibCall(get_among(LibCall::all_libcalls(), r)?),
            2 => {
                let (f, offset) = <(FuncId, u32)>::get(r)?;
                ModuleRelocTarget::FunctionOffset(f, offset)
            }
            _ => return Err(Bad("an unknown relocation target".into())),
        };
        Ok(ModuleReloc { offset, kind, name, addend })
    }
}

impl Store for Sig {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.tail.put(w)?;
        put_seq(&self.params, w)?;
        put_seq(&self.returns, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(Sig { tail: bool::get(r)?, params: get_seq(r)?, returns: get_seq(r)? })
    }
}

impl Store for MachineFn {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.id.put(w)?;
        self.name.put(w)?;
        self.sig.put(w)?;
        self.alignment.put(w)?;
        self.bytes.put(w)?;
        put_seq(&self.relocs, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(MachineFn {
            id: FuncId::get(r)?,
            name: String::get(r)?,
            sig: Sig::get(r)?,
            alignment: u64::get(r)?,
            bytes: Vec::<u8>::get(r)?,
            relocs: get_seq(r)?,
        })
    }
}

impl Store for Entry {
    fn put(&self, w: &mut Writer) -> R<()> {
        (self.function, self.wrapper).put(w)?;
        put_seq(&self.params, w)?;
        (self.result, self.shown.clone(), self.span).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let (function, wrapper) = <(FnId, FuncId)>::get(r)?;
        let params = get_seq(r)?;
        let (result, shown, span) = <(Kind, SmolStr, Span)>::get(r)?;
        Ok(Entry { function, wrapper, params, result, shown, span })
    }
}

impl Store for runtime::Message {
    fn put(&self, w: &mut Writer) -> R<()> {
        use runtime::Message::*;
        match self {
            Fixed(t) => {
                0u8.put(w)?;
                t.put(w)
            }
            Int2char => 1u8.put(w),
            OutOfBounds => 2u8.put(w),
            NegativeCreate => 3u8.put(w),
            Map2Lengths => 4u8.put(w),
        }
    }
    fn get(r: &mut Reader) -> R<Self> {
        use runtime::Message::*;
        Ok(match u8::get(r)? {
            0 => Fixed(String::get(r)?),
            1 => Int2char,
            2 => OutOfBounds,
            3 => NegativeCreate,
            4 => Map2Lengths,
            _ => return Err(Bad("an unknown message".into())),
        })
    }
}

impl Store for runtime::RecordShape {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_seq(&self.labels, w)?;
        put_seq(&self.kinds, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(runtime::RecordShape { labels: get_seq::<SmolStr>(r)?.into(), kinds: get_seq(r)? })
    }
}

impl Store for runtime::ConShape {
    fn put(&self, w: &mut Writer) -> R<()> {
        (self.id, self.name.clone(), self.kind).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let (id, name, kind) = <(NameId, SmolStr, Kind)>::get(r)?;
        Ok(runtime::ConShape { id, name, kind })
    }
}

impl Store for runtime::RuntimeCallee {
    fn put(&self, w: &mut Writer) -> R<()> {
        match self {
            runtime::RuntimeCallee::Builtin(b) => (0u8, *b).put(w),
            runtime::RuntimeCallee::Accelerate(id, name) => (1u8, *id, name.clone()).put(w),
        }
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(match u8::get(r)? {
            0 => runtime::RuntimeCallee::Builtin(pmx_ast::Builtin::get(r)?),
            1 => {
                let (id, name) = <(NameId, SmolStr)>::get(r)?;
                runtime::RuntimeCallee::Accelerate(id, name)
            }
            _ => return Err(Bad("an unknown callee".into())),
        })
    }
}

impl Store for runtime::BuiltinCall {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.callee.put(w)?;
        put_seq(&self.args, w)?;
        (self.given, self.result, self.span).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let callee = runtime::RuntimeCallee::get(r)?;
        let args = get_seq(r)?;
        let (given, result, span) = <(u64, Kind, Span)>::get(r)?;
        Ok(runtime::BuiltinCall { callee, args, given, result, span })
    }
}

impl Store for runtime::ApplyCall {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_seq(&self.args, w)?;
        (self.result, self.span).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let args = get_seq(r)?;
        let (result, span) = <(Kind, Span)>::get(r)?;
        Ok(runtime::ApplyCall { args, result, span })
    }
}

impl Store for runtime::Callable {
    fn put(&self, w: &mut Writer) -> R<()> {
        match self {
            runtime::Callable::Builtin(b) => (0u8, *b).put(w),
            runtime::Callable::Function(f) => (1u8, *f).put(w),
        }
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(match u8::get(r)? {
            0 => runtime::Callable::Builtin(pmx_ast::Builtin::get(r)?),
            1 => runtime::Callable::Function(FnId::get(r)?),
            _ => return Err(Bad("an unknown function value".into())),
        })
    }
}

impl Store for runtime::ClosureShape {
    fn put(&self, w: &mut Writer) -> R<()> {
        self.of.put(w)?;
        put_seq(&self.bound, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(runtime::ClosureShape { of: runtime::Callable::get(r)?, bound: get_seq(r)? })
    }
}

impl Store for runtime::UtestCall {
    fn put(&self, w: &mut Writer) -> R<()> {
        (self.sides[0], self.sides[1]).put(w)?;
        (self.using_name.clone(), self.span).put(w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        let (a, b) = <(Kind, Kind)>::get(r)?;
        let (using_name, span) = <(Option<SmolStr>, Span)>::get(r)?;
        Ok(runtime::UtestCall { sides: [a, b], using_name, span })
    }
}

/// The tables the code refers to by number (not the function values,
/// which linking makes).
impl Store for Tables {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_seq(&self.failures, w)?;
        put_seq(&self.sites, w)?;
        put_seq(&self.records, w)?;
        put_seq(&self.cons, w)?;
        put_seq(&self.builtins, w)?;
        put_seq(&self.globals, w)?;
        put_seq(&self.applies, w)?;
        put_seq(&self.closures, w)?;
        put_seq(&self.utests, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(Tables {
            failures: get_seq(r)?,
            sites: get_seq(r)?,
            records: get_seq(r)?,
            cons: get_seq(r)?,
            builtins: get_seq(r)?,
            globals: get_seq(r)?,
            applies: get_seq(r)?,
            closures: get_seq(r)?,
            utests: get_seq(r)?,
            functions: Default::default(),
            direct: Default::default(),
        })
    }
}

impl Store for Image {
    fn put(&self, w: &mut Writer) -> R<()> {
        put_seq(&self.functions, w)?;
        self.tables.put(w)?;
        put_seq(&self.entries, w)?;
        put_seq(&self.roots, w)?;
        put_seq(&self.valued, w)
    }
    fn get(r: &mut Reader) -> R<Self> {
        Ok(Image {
            functions: get_seq(r)?,
            tables: Tables::get(r)?,
            entries: get_seq(r)?,
            roots: get_seq(r)?,
            valued: get_seq(r)?,
        })
    }
}

impl Sig {
    pub fn of(s: &cranelift_codegen::ir::Signature) -> Sig {
        Sig {
            tail: s.call_conv == cranelift_codegen::isa::CallConv::Tail,
            params: s.params.iter().map(|p| p.value_type).collect(),
            returns: s.returns.iter().map(|p| p.value_type).collect(),
        }
    }

    /// The signature; `default` is the platform's convention.
    pub fn signature(&self, default: cranelift_codegen::isa::CallConv) -> cranelift_codegen::ir::Signature {
        use cranelift_codegen::ir::AbiParam;
        let conv = if self.tail { cranelift_codegen::isa::CallConv::Tail } else { default };
        let mut s = cranelift_codegen::ir::Signature::new(conv);
        s.params.extend(self.params.iter().map(|t| AbiParam::new(*t)));
        s.returns.extend(self.returns.iter().map(|t| AbiParam::new(*t)));
        s
    }
}
