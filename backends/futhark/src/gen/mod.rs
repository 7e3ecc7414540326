//! Futhark from the lowered IR (`pmx_lower::Program` of the Futhark
//! backend): one program, a `def` per function (in the IR's dependency
//! order) and an `entry` per Futhark-class accelerate binding.
//!
//! Types follow Miking's mapping (`Int` is `i64`, `Float` `f64`, `Bool`
//! `bool`), except that a `Char` is its code point as an `i32` (the layout
//! of pmx's unboxed character sequences, so they cross without a copy).
//! Arrays are written with anonymous sizes (`[]i64`), which Futhark takes
//! as size parameters of functions and existential sizes of results;
//! where Futhark must know two sizes are equal (`map2`, the rows of an
//! array literal) the arrays are coerced to one named size (`:>`), which
//! is checked when the program runs, as MExpr checks nothing statically.
//!
//! `set` is an in-place update (`a with [i] = v`) where the array, and
//! everything that may share its memory, is not used afterwards, and on a
//! `copy` otherwise; functions consume (`*`) the array parameters they
//! update, so a `foldl` whose accumulator is set at each step is a loop
//! that copies nothing, or its initial value once (`unique.rs`).
//!
//! Entries take and return *leaves* (`abi.rs`): records are cut into
//! their fields, sequences of records into one array per field, so the C
//! API sees only scalars and arrays of scalars, never an opaque type.
//!
//! The syntax is the common part of Futhark 0.22 and current releases:
//! `def`, `entry`, `loop ... for ... in`, `loop ... while`, `assert`,
//! `:>` coercions to named sizes only, `[]` for empty arrays.
//!
//! Every generated line that can fail when the program runs is recorded
//! with the MExpr span it comes from ([`Generated::lines`]), so that a
//! failure that Futhark reports at `pmx.fut:LINE` is located in the
//! program.

mod body;
mod channel;
pub mod names;
mod unique;

use crate::abi::{self, Leaf};
use body::Writer;
use pmx_ast::{NameId, Span};
use pmx_lower::{Program, Type};

/// The name of the generated file (Futhark's messages name it).
pub const FILE: &str = "pmx.fut";

/// One entry as the engine sees it.
#[derive(Clone, Debug)]
pub struct EntryAbi {
    /// The accelerate binding (`Boundary::id`).
    pub id: NameId,
    /// The Futhark entry's name (`futhark_entry_<name>` in C).
    pub name: String,
    /// The IR's parameter types, in the boundary's order.
    pub params: Vec<Type>,
    /// The leaves of each parameter, in order.
    pub inputs: Vec<Leaf>,
    /// The entry takes one unused `i64` (it has no leaf to take).
    pub dummy_input: bool,
    pub result: Type,
    pub outputs: Vec<Leaf>,
    /// The entry returns one unused `bool` (the result has no leaf).
    pub dummy_output: bool,
    /// The entry returns, after the leaves, its channel (`channel.rs`):
    /// how many utests ran, or its first failed check.
    pub counts: bool,
}

/// Where a generated line that may fail comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// 1-based line of the generated program.
    pub line: usize,
    pub span: Span,
    /// What failing there means, when the generator knows better than
    /// Futhark's message (a division by zero is an `assert`).
    pub what: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Generated {
    pub source: String,
    pub entries: Vec<EntryAbi>,
    pub lines: Vec<Line>,
    /// What failed check `-c` of a channel `c` means: `failures[-c - 1]`,
    /// where and what (`channel.rs`).
    pub failures: Vec<(Span, String)>,
}

impl Generated {
    /// The check that a negative channel `c` reports.
    pub fn failure(&self, c: i64) -> Option<&(Span, String)> {
        usize::try_from(c.checked_neg()? - 1).ok().and_then(|k| self.failures.get(k))
    }

    /// The MExpr location of a failure at generated line `line` (the
    /// closest recorded line at or before it).
    pub fn locate(&self, line: usize) -> Option<&Line> {
        self.lines.iter().rev().find(|l| l.line <= line)
    }
}

pub use pmx_lower::{Options, Unsupported};

/// The Futhark generator, at the seam (`pmx_lower::Generator`).
pub struct Futhark;

impl pmx_lower::Generator for Futhark {
    type Output = Generated;
    const BACKEND: pmx_accelerate::Backend = pmx_accelerate::Backend::Futhark;

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

    fn bindings(&self) -> Vec<NameId> {
        self.entries.iter().map(|e| e.id).collect()
    }
}

/// The Futhark program of `p`; `locate` writes a span as
/// `file:line:column` for the comments.
pub fn generate(
    p: &Program,
    locate: &dyn Fn(Span) -> String,
    options: &Options,
) -> Result<Generated, Vec<Unsupported>> {
    let mut w = Writer::new(p, locate, options.utests, options.checked);
    w.line(0, "-- Generated by pmx from the Futhark-class accelerate bindings of a program.");
    w.line(0, "-- Int is i64, Float f64, Bool bool, Char its code point as i32.");
    w.line(0, channel::JOIN_DEF);
    for f in &p.functions {
        w.function(f);
    }
    let mut entries = Vec::new();
    for e in &p.entries {
        if let Some(abi) = w.entry(e) {
            entries.push(abi);
        }
    }
    if !w.errors.is_empty() {
        return Err(w.errors);
    }
    Ok(Generated { source: w.out, entries, lines: w.lines, failures: w.failures })
}

/// The leaves of a boundary type, or why it cannot cross.
pub(crate) fn leaves_of(t: &Type) -> Result<Vec<Leaf>, String> {
    if let Type::Seq(e) = t {
        if let Type::Seq(inner) = &**e {
            if abi::has_record(inner) {
                return Err(format!(
                    "a nested sequence of records ({t}) cannot cross into Futhark code yet (one level of sequence \
                     around records can)"
                ));
            }
        }
    }
    abi::leaves(t).map_err(|bad| format!("a value of type {bad} cannot cross into Futhark code"))
}
