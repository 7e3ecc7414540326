//! Rendering diagnostics at the edge: codespan-reporting for people, JSON
//! for tools.

use crate::cli::{ColorChoice, OutputArgs};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label as CsLabel, LabelStyle};
use codespan_reporting::term::termcolor::{self, BufferedStandardStream, StandardStream};
use pmx_diagnostics::{Diagnostic, LineIndex, Severity, Span};
use pmx_driver::Database;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Every loaded file, indexed by `FileId`, as the renderer reads them.
fn sources(db: &Database) -> crate::excerpt::Sources<'_> {
    crate::excerpt::Sources::new(db.files().iter().map(|f| (display_path(f.path(db)), f.text(db).as_str())))
}

/// Renders one diagnostic with only the source it needs (long lines cut
/// down, see `excerpt.rs`).
fn emit(
    out: &mut dyn termcolor::WriteColor,
    sources: &crate::excerpt::Sources,
    d: &CsDiagnostic<usize>,
) -> Result<(), codespan_reporting::files::Error> {
    let (excerpt, d) = sources.excerpt(d);
    codespan_reporting::term::emit_to_write_style(out, &codespan_reporting::term::Config::default(), &excerpt, &d)
}

/// Paths relative to the working directory when they are below it.
fn display_path(path: &std::path::Path) -> String {
    let cwd = std::env::current_dir().ok();
    match cwd.as_deref().and_then(|c| path.strip_prefix(c).ok()) {
        Some(rel) => rel.display().to_string(),
        None => path.display().to_string(),
    }
}

/// How many errors `pmx check` shows unless told otherwise (`--error-limit`).
pub const DEFAULT_ERROR_LIMIT: usize = 50;

/// How many errors with the same code and message are shown one by one;
/// the rest are counted in a note on the last one shown.
const SAME_ERRORS_SHOWN: usize = 3;

/// What is shown of a list of diagnostics: which ones, each with an
/// extra note when it stands for more like it, and how many errors the
/// limit left out.
struct Plan {
    shown: Vec<(usize, Option<String>)>,
    left_out: usize,
}

/// Decides what to show: diagnostics with the same code and message after
/// the first [`SAME_ERRORS_SHOWN`] are folded into a count on the last one
/// shown, and at most `limit` diagnostics are shown (0: no limit).
fn plan(db: &Database, diagnostics: &[Diagnostic], limit: usize) -> Plan {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::default();
    let mut folded: HashMap<(&str, &str), (usize, Span)> = HashMap::default();
    let mut kept = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        let key = (d.code.as_str(), d.message.as_str());
        let n = seen.entry(key).or_default();
        *n += 1;
        if *n <= SAME_ERRORS_SHOWN {
            kept.push(i);
        } else {
            folded.entry(key).or_insert((0, d.primary.span)).0 += 1;
        }
    }
    let limit = if limit == 0 { usize::MAX } else { limit };
    let mut left_out = kept.len().saturating_sub(limit);
    kept.truncate(limit);
    let mut shown_of_kind: HashMap<(&str, &str), usize> = HashMap::default();
    let shown = kept
        .into_iter()
        .map(|i| {
            let d = &diagnostics[i];
            let key = (d.code.as_str(), d.message.as_str());
            let n = shown_of_kind.entry(key).or_default();
            *n += 1;
            let note = match folded.get(&key) {
                Some((more, next)) if *n == SAME_ERRORS_SHOWN => {
                    let plural = if *more == 1 { "" } else { "s" };
                    Some(format!("{more} more error{plural} like this one, the next at {}", locate(db, *next)))
                }
                _ => None,
            };
            (i, note)
        })
        .collect();
    // Folded errors whose kind's last shown one fell past the limit are
    // left out too.
    for (key, (more, _)) in &folded {
        if shown_of_kind.get(key).copied().unwrap_or(0) < SAME_ERRORS_SHOWN {
            left_out += more;
        }
    }
    Plan { shown, left_out }
}

/// `file:line:column` of a span's start.
fn locate(db: &Database, span: Span) -> String {
    let Some(file) = db.files().get(span.file.0 as usize).copied() else { return "<built-in>".into() };
    let text = file.text(db);
    let pos = LineIndex::new(text).line_col(text, span.start);
    format!("{}:{}:{}", display_path(file.path(db)), pos.line + 1, pos.col + 1)
}

/// Renders what [`plan`] shows; returns how many errors the limit left out.
fn render_all(out: &mut dyn termcolor::WriteColor, db: &Database, diagnostics: &[Diagnostic], limit: usize) -> usize {
    let sources = sources(db);
    let plan = plan(db, diagnostics, limit);
    for (i, note) in &plan.shown {
        let mut d = to_codespan(&diagnostics[*i]);
        d.notes.extend(note.clone());
        let _ = emit(out, &sources, &d);
    }
    plan.left_out
}

/// Diagnostics as plain text (no colours), as `pmx check` prints them.
pub fn human_to_string(db: &Database, diagnostics: &[Diagnostic]) -> String {
    let mut out = termcolor::NoColor::new(Vec::new());
    render_all(&mut out, db, diagnostics, DEFAULT_ERROR_LIMIT);
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

pub fn human(db: &Database, diagnostics: &[Diagnostic], output: &OutputArgs) {
    // Buffered: codespan-reporting writes each diagnostic in many small
    // pieces, and unbuffered stderr made each piece a system call (seconds
    // for a file with thousands of errors).
    let mut writer = BufferedStandardStream::stderr(color_choice(output.color));
    let left_out = render_all(&mut writer, db, diagnostics, output.error_limit);
    let _ = std::io::Write::flush(&mut writer);
    drop(writer);
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    if left_out > 0 {
        eprintln!(
            "note: {left_out} more diagnostics not shown (the limit is {}; `--error-limit N` changes it, 0 shows all)",
            output.error_limit
        );
    }
    if errors > 0 {
        let plural = if errors == 1 { "" } else { "s" };
        eprintln!("error: {errors} error{plural} found");
    }
}

/// A diagnostic as codespan-reporting wants it. Spans in the built-in
/// pseudo-file have no source to show and are left out.
pub fn to_codespan(d: &Diagnostic) -> CsDiagnostic<usize> {
    let severity = match d.severity {
        Severity::Error => codespan_reporting::diagnostic::Severity::Error,
        Severity::Warning => codespan_reporting::diagnostic::Severity::Warning,
        Severity::Note => codespan_reporting::diagnostic::Severity::Note,
    };
    let mut labels = Vec::new();
    let mut push = |style, span: Span, message: &str| {
        if !span.is_builtin() {
            labels.push(CsLabel::new(style, span.file.0 as usize, span.range()).with_message(message));
        }
    };
    push(LabelStyle::Primary, d.primary.span, &d.primary.message);
    for l in &d.secondary {
        push(LabelStyle::Secondary, l.span, &l.message);
    }
    CsDiagnostic::new(severity)
        .with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(d.notes.clone())
}

pub fn json(db: &Database, diagnostics: &[Diagnostic]) {
    println!("{}", serde_json::to_string_pretty(&json_value(db, diagnostics)).expect("diagnostics serialise"));
}

/// Diagnostics as JSON: an array of objects with severity, code, message,
/// file, 1-based start and end positions, labels and notes.
pub fn json_value(db: &Database, diagnostics: &[Diagnostic]) -> Value {
    let files = db.files();
    let mut indexes: Vec<Option<LineIndex>> = vec![None; files.len()];
    let mut position = |span: Span| -> Value {
        let Some(file) = files.get(span.file.0 as usize) else {
            return json!({ "file": null });
        };
        let text = file.text(db);
        let index = indexes[span.file.0 as usize].get_or_insert_with(|| LineIndex::new(text));
        let start = index.line_col(text, span.start);
        let end = index.line_col(text, span.end);
        json!({
            "file": display_path(file.path(db)),
            "start": { "line": start.line + 1, "column": start.col + 1, "offset": span.start },
            "end": { "line": end.line + 1, "column": end.col + 1, "offset": span.end },
        })
    };
    let out: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let mut primary = position(d.primary.span);
            let labels: Vec<Value> = std::iter::once((&d.primary, true))
                .chain(d.secondary.iter().map(|l| (l, false)))
                .filter(|(l, _)| !l.span.is_builtin())
                .map(|(l, is_primary)| {
                    let mut v = position(l.span);
                    v["message"] = json!(l.message);
                    v["primary"] = json!(is_primary);
                    v
                })
                .collect();
            primary["severity"] = json!(d.severity);
            primary["code"] = json!(d.code.as_str());
            primary["message"] = json!(d.message);
            primary["labels"] = json!(labels);
            primary["notes"] = json!(d.notes);
            primary
        })
        .collect();
    Value::Array(out)
}

/// Turns spans into `file:line:column` for run-time messages.
pub fn locator(db: &Database) -> pmx_cpu::io::Locator {
    let files: Vec<(String, String, LineIndex)> = db
        .files()
        .iter()
        .map(|f| {
            let text = f.text(db).clone();
            let index = LineIndex::new(&text);
            (display_path(f.path(db)), text, index)
        })
        .collect();
    Box::new(move |span: Span| match files.get(span.file.0 as usize) {
        Some((name, text, index)) => {
            let pos = index.line_col(text, span.start);
            format!("{name}:{}:{}", pos.line + 1, pos.col + 1)
        }
        None => "<built-in>".to_string(),
    })
}

/// A run-time error: the message at the failing expression, then the
/// calls that led there, most recent first.
pub fn runtime_error(db: &Database, e: &pmx_cpu::RuntimeError, color: ColorChoice) {
    let locate = locator(db);
    // Consecutive identical frames (a deep recursion) are shown once.
    let mut notes: Vec<String> = Vec::new();
    let mut i = 0;
    while i < e.trace.len() {
        let mut j = i + 1;
        while j < e.trace.len() && e.trace[j] == e.trace[i] {
            j += 1;
        }
        let (name, span) = &e.trace[i];
        let times = if j - i > 1 { format!(" ({} times)", j - i) } else { String::new() };
        notes.push(format!("in `{name}`, called at {}{times}", locate(*span)));
        i = j;
    }
    if e.omitted > 0 {
        notes.push(format!("... and {} more calls", e.omitted));
    }
    let internal = e.kind == pmx_cpu::ErrorKind::Internal;
    let (message, label) = if internal {
        notes.push("this is a bug in pmx; please report it, with the program that shows it".to_string());
        (format!("internal error: {}", e.message), "while evaluating this")
    } else {
        (e.message.clone(), "failed here")
    };
    let mut d = CsDiagnostic::error().with_message(message).with_notes(notes);
    if !e.span.is_builtin() {
        d = d.with_labels(vec![
            CsLabel::new(LabelStyle::Primary, e.span.file.0 as usize, e.span.range()).with_message(label)
        ]);
    }
    pmx_cpu::io::flush();
    let sources = sources(db);
    let writer = StandardStream::stderr(color_choice(color));
    let _ = emit(&mut writer.lock(), &sources, &d);
}

fn color_choice(color: ColorChoice) -> termcolor::ColorChoice {
    match color {
        ColorChoice::Always => termcolor::ColorChoice::Always,
        ColorChoice::Never => termcolor::ColorChoice::Never,
        ColorChoice::Auto if std::io::IsTerminal::is_terminal(&std::io::stderr()) => termcolor::ColorChoice::Auto,
        ColorChoice::Auto => termcolor::ColorChoice::Never,
    }
}

/// `pmx explain` for people.
pub fn explain_human(db: &Database, analysis: &pmx_accelerate::Analysis) -> String {
    let locate = locator(db);
    let mut out = String::new();
    if analysis.accelerates.is_empty() {
        out.push_str("no accelerate expression\n");
    }
    let accumulations = crate::accumulations::find(analysis);
    let histograms = crate::histograms::find(analysis);
    for a in &analysis.accelerates {
        out.push_str(&format!("{} at {}\n", a.boundary.name, locate(a.boundary.span)));
        let mut lines = pmx_lsp::explain::lines(a, &mut |s| locate(s));
        if let Some(found) = &accumulations {
            lines.extend(crate::accumulations::explain_lines(found, a.boundary.id, &|s| locate(s)));
        }
        lines.extend(crate::histograms::explain_lines(&histograms, a.boundary.id, &|s| locate(s)));
        for line in lines {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// `pmx explain --format json`.
pub fn explain_json(db: &Database, analysis: &pmx_accelerate::Analysis) -> Value {
    let locate = locator(db);
    let accumulations = crate::accumulations::find(analysis).unwrap_or_default();
    let histograms = crate::histograms::find(analysis);
    Value::Array(
        analysis
            .accelerates
            .iter()
            .map(|a| {
                let b = &a.boundary;
                let backend = match &a.class {
                    pmx_accelerate::Class::One(backend) => json!(backend.name()),
                    _ => Value::Null,
                };
                json!({
                    "name": b.name.as_str(),
                    "location": locate(b.span),
                    "backend": backend,
                    "class": format!("{:?}", a.class),
                    "reasons": a.reasons.iter().map(|r| json!({
                        "backend": r.backend.name(),
                        "chain": r.chain.iter().map(|(n, s)| json!({"name": n.as_str(), "location": locate(*s)})).collect::<Vec<_>>(),
                        "keyword": r.keyword.as_str(),
                        "keyword_location": locate(r.keyword_span),
                    })).collect::<Vec<_>>(),
                    "parameters": b.params.iter().map(|p| json!({
                        "name": p.name.text.as_str(),
                        "type": p.ty.to_string(),
                        "source": p.source.text.as_str(),
                        "passing": p.passing.describe(),
                        "written": p.written,
                        "sizes": p.sizes,
                    })).collect::<Vec<_>>(),
                    "sizes": b.sizes.iter().map(|c| json!({
                        "lhs": pmx_lsp::explain::size(b, c.lhs),
                        "rhs": pmx_lsp::explain::size(b, c.rhs),
                        "utest": locate(c.span),
                    })).collect::<Vec<_>>(),
                    "returns": b.result.ty.to_string(),
                    "result_passing": b.result.passing.describe(),
                    "functions": a.functions.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
                    "accumulations": crate::accumulations::places(&accumulations, b.id).iter().map(|p| json!({
                        "operator": p.op,
                        "tensor": p.tensor,
                        "location": locate(p.span),
                        "loops": p.loops.iter().map(|l| locate(*l)).collect::<Vec<_>>(),
                        "atomic": p.atomic,
                    })).collect::<Vec<_>>(),
                    "histograms": crate::histograms::of_binding(&histograms, b.id).map(|h| json!({
                        "operator": h.op.name(),
                        "location": locate(h.span),
                        "rounding": crate::histograms::rounding(h),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}
