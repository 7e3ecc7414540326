//! Between the compiler's byte spans and paths and the protocol's UTF-16
//! positions and URIs.

use pmx_diagnostics::{Diagnostic, LineCol, LineIndex, Severity, Span};
use pmx_driver::{Database, Db, SourceFile};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::ls_types::Uri;

/// The documents open in the editor: their URIs as the client wrote them,
/// the paths the database knows them by, and their versions.
#[derive(Clone, Debug, Default)]
pub struct Docs {
    pub by_uri: HashMap<Uri, Doc>,
    pub by_path: HashMap<PathBuf, Uri>,
}

#[derive(Clone, Debug)]
pub struct Doc {
    pub path: PathBuf,
    pub version: i32,
}

/// Where the database keeps a document: its file path, or for other
/// schemes (an unsaved `untitled:` buffer) a made-up path in a folder that
/// does not exist, so that only the standard library resolves its includes.
pub fn uri_to_path(uri: &Uri) -> PathBuf {
    let scheme = uri.scheme().as_str();
    if scheme.eq_ignore_ascii_case("file") {
        if let Some(p) = uri.to_file_path() {
            return pmx_driver::normalize(&p);
        }
    }
    let mut name: String =
        uri.as_str().chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    if !name.ends_with(".mc") {
        name.push_str(".mc");
    }
    PathBuf::from("/pmx-lsp-virtual").join(name)
}

impl Docs {
    /// The URI under which a path is shown: the client's for an open
    /// document, a `file:` URI otherwise.
    pub fn uri_of_path(&self, path: &Path) -> Option<Uri> {
        if let Some(u) = self.by_path.get(path) {
            return Some(u.clone());
        }
        Uri::from_file_path(path)
    }

    pub fn path_of_uri(&self, uri: &Uri) -> PathBuf {
        match self.by_uri.get(uri) {
            Some(d) => d.path.clone(),
            None => uri_to_path(uri),
        }
    }
}

/// A file's text with its line index, for position conversions.
pub struct Text {
    pub text: Arc<str>,
    pub index: LineIndex,
}

impl Text {
    pub fn new(text: &str) -> Text {
        Text { text: Arc::from(text), index: LineIndex::new(text) }
    }

    pub fn of(db: &Database, file: SourceFile) -> Text {
        Text::new(file.text(db))
    }

    pub fn position(&self, offset: u32) -> lsp::Position {
        let lc = self.index.line_col_utf16(&self.text, offset.min(self.text.len() as u32));
        lsp::Position { line: lc.line, character: lc.col }
    }

    pub fn range(&self, span: Span) -> lsp::Range {
        let start = self.position(span.start);
        let end = self.position(span.end.max(span.start));
        lsp::Range { start, end }
    }

    /// The byte offset of a protocol position, clamped to the text.
    pub fn offset(&self, pos: lsp::Position) -> u32 {
        let last = (self.index.line_count() as u32).saturating_sub(1);
        if pos.line > last {
            return self.text.len() as u32;
        }
        self.index.offset_utf16(&self.text, LineCol { line: pos.line, col: pos.character })
    }
}

/// The texts of files, converted once each.
pub struct Texts<'a> {
    db: &'a Database,
    cache: HashMap<u32, Text>,
}

impl<'a> Texts<'a> {
    pub fn new(db: &'a Database) -> Texts<'a> {
        Texts { db, cache: HashMap::new() }
    }

    pub fn get(&mut self, file: SourceFile) -> &Text {
        let db = self.db;
        self.cache.entry(file.id(db).0).or_insert_with(|| Text::of(db, file))
    }

    /// The location of a span (None for built-ins).
    pub fn location(&mut self, docs: &Docs, span: Span) -> Option<lsp::Location> {
        if span.is_builtin() {
            return None;
        }
        let file = self.db.file(span.file)?;
        let uri = docs.uri_of_path(file.path(self.db))?;
        let range = self.get(file).range(span);
        Some(lsp::Location { uri, range })
    }
}

/// A compiler diagnostic as the protocol has it. The primary label and
/// the notes follow the message on lines of their own; secondary labels
/// are related information.
pub fn diagnostic(texts: &mut Texts, docs: &Docs, file: SourceFile, d: &Diagnostic) -> lsp::Diagnostic {
    let range = if d.primary.span.is_builtin() { lsp::Range::default() } else { texts.get(file).range(d.primary.span) };
    let mut message = d.message.clone();
    if !d.primary.message.is_empty() {
        message.push('\n');
        message.push_str(&d.primary.message);
    }
    for n in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(n);
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .secondary
        .iter()
        .filter_map(|l| {
            let location = texts.location(docs, l.span)?;
            let message = if l.message.is_empty() { "related".to_string() } else { l.message.clone() };
            Some(lsp::DiagnosticRelatedInformation { location, message })
        })
        .collect();
    lsp::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(d.code.as_str().to_string())),
        code_description: None,
        source: Some("pmx".to_string()),
        message,
        related_information: if related.is_empty() { None } else { Some(related) },
        tags: None,
        data: None,
    }
}

/// `file.mc:line:column` (1-based, columns in characters), as `pmx explain`
/// writes places.
pub fn locate(db: &Database, texts: &mut Texts, span: Span) -> String {
    let Some(file) = db.file(span.file) else { return "<built-in>".to_string() };
    let name = file.path(db).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let t = texts.get(file);
    let lc = t.index.line_col(&t.text, span.start);
    format!("{name}:{}:{}", lc.line + 1, lc.col + 1)
}

/// Applies one change of a `didChange` notification to a text (a range in
/// UTF-16 positions, or the whole text).
pub fn apply_change(text: &mut String, change: &lsp::TextDocumentContentChangeEvent) {
    let Some(range) = change.range else {
        *text = change.text.clone();
        return;
    };
    let t = Text::new(text);
    let a = t.offset(range.start) as usize;
    let b = t.offset(range.end) as usize;
    let (a, b) = (a.min(b), a.max(b));
    text.replace_range(a..b, &change.text);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> lsp::Position {
        lsp::Position { line, character }
    }

    #[test]
    fn utf16_positions_round_trip() {
        let t = Text::new("let s = \"é𝄞\" in x\nlet y = 1\n");
        let x = t.text.find(" x").unwrap() as u32 + 1;
        // `é` is one UTF-16 unit, `𝄞` two.
        assert_eq!(t.position(x), pos(0, 17));
        assert_eq!(t.offset(pos(0, 17)), x);
        assert_eq!(t.offset(pos(1, 4)), t.text.find("y").unwrap() as u32);
        // Past the end of a line or the text: clamped.
        assert_eq!(t.offset(pos(0, 999)), t.text.find('\n').unwrap() as u32);
        assert_eq!(t.offset(pos(u32::MAX, u32::MAX)), t.text.len() as u32);
    }

    #[test]
    fn incremental_changes_apply_in_utf16_units() {
        let mut text = "a𝄞b\nc".to_string();
        let change = |range: Option<lsp::Range>, text: &str| lsp::TextDocumentContentChangeEvent {
            range,
            range_length: None,
            text: text.to_string(),
        };
        apply_change(&mut text, &change(Some(lsp::Range { start: pos(0, 3), end: pos(0, 4) }), "B"));
        assert_eq!(text, "a𝄞B\nc");
        apply_change(&mut text, &change(Some(lsp::Range { start: pos(1, 0), end: pos(1, 0) }), "x\nyz"));
        assert_eq!(text, "a𝄞B\nx\nyzc");
        apply_change(&mut text, &change(Some(lsp::Range { start: pos(2, 3), end: pos(0, 1) }), ""));
        assert_eq!(text, "a");
        // In the middle of a surrogate pair, or far out: never a panic.
        apply_change(&mut text, &change(Some(lsp::Range { start: pos(7, 7), end: pos(9, 1) }), "z"));
        assert_eq!(text, "az");
        apply_change(&mut text, &change(None, "new"));
        assert_eq!(text, "new");
    }
}
