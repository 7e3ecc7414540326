//! Diagnostics as plain data.
//!
//! Every pass of pmx reports problems by returning [`Diagnostic`] values: a
//! severity, a stable code, a message, a primary [`Label`] (a [`Span`] with an
//! optional message), secondary labels and notes. Nothing here renders or
//! prints; the terminal (codespan-reporting), JSON output and the language
//! server each render diagnostics at their own edge.
//!
//! Invariants: a [`Span`] is a half-open byte range `start..end` into the
//! text of one file, named by its [`FileId`]. [`LineIndex`] turns byte offsets
//! into line/column positions (character or UTF-16 columns).

mod codes;
mod line_index;

pub use codes::Code;
pub use line_index::{LineCol, LineIndex};

use serde::{Deserialize, Serialize};
use std::cell::Cell;

/// Identifies one source file of a compilation session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FileId(pub u32);

impl FileId {
    /// The pseudo-file that holds built-in definitions; spans in it are empty.
    pub const BUILTIN: FileId = FileId(u32::MAX);

    /// Runs `decode` with every `FileId` it deserializes on this thread
    /// that is `stored` read as `now`: a file's parse is stored under the
    /// number the file had in the run that stored it, and each run numbers
    /// files afresh (the parse cache). serde's derived code takes no
    /// context, hence the thread-local.
    pub fn renumbering<R>(stored: FileId, now: FileId, decode: impl FnOnce() -> R) -> R {
        struct Restore(Option<(FileId, FileId)>);
        impl Drop for Restore {
            fn drop(&mut self) {
                RENUMBERING.set(self.0);
            }
        }
        let _restore = Restore(RENUMBERING.replace(Some((stored, now))));
        decode()
    }
}

thread_local! {
    /// See [`FileId::renumbering`].
    static RENUMBERING: Cell<Option<(FileId, FileId)>> = const { Cell::new(None) };
}

impl<'de> Deserialize<'de> for FileId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FileId, D::Error> {
        let id = FileId(u32::deserialize(d)?);
        Ok(match RENUMBERING.get() {
            Some((stored, now)) if id == stored => now,
            _ => id,
        })
    }
}

/// A half-open byte range in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: u32, end: u32) -> Span {
        Span { file, start, end }
    }

    /// A span for things that have no place in any source file.
    pub const BUILTIN: Span = Span { file: FileId::BUILTIN, start: 0, end: 0 };

    /// The smallest span that covers both (which must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span { file: self.file, start: self.start.min(other.start), end: self.end.max(other.end) }
    }

    pub fn is_builtin(self) -> bool {
        self.file == FileId::BUILTIN
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A span with an optional message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

impl Label {
    pub fn new(span: Span, message: impl Into<String>) -> Label {
        Label { span, message: message.into() }
    }
}

/// One problem found in a program.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    /// Where the problem is; its message says what is wrong there.
    pub primary: Label,
    /// Related places (a previous definition, the other side of a mismatch).
    pub secondary: Vec<Label>,
    /// Free-standing remarks: hints on how to fix, context.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: Code, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: Label::new(span, ""),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Sets the message shown under the primary span.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary.message = message.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label::new(span, message));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn span(&self) -> Span {
        self.primary.span
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// Sorts diagnostics by position (file, start, end) and removes exact
/// duplicates, the order in which every front end reports them.
pub fn sort_and_dedup(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| {
        (a.span().file, a.span().start, a.span().end, a.code, &a.message).cmp(&(
            b.span().file,
            b.span().start,
            b.span().end,
            b.code,
            &b.message,
        ))
    });
    diags.dedup();
}
