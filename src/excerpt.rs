//! The source shown under a diagnostic: only the lines its labels need,
//! each long line cut down to the parts around the labels.
//!
//! codespan-reporting prints every labelled line whole. A program on one
//! long line (a generated list of 20,000 numbers, a deeply nested
//! expression) made each error print that line again: output that grew
//! with the square of the input. Here each diagnostic gets its own small
//! [`Excerpt`]: the lines it shows (by their real numbers), with a line
//! longer than [`LONG_LINE`] bytes replaced by windows around the label
//! boundaries on it, joined by `…`. Columns in locations stay those of
//! the real file.

use codespan_reporting::diagnostic::Diagnostic as CsDiagnostic;
use codespan_reporting::files::{Error, Files};
use std::collections::BTreeSet;
use std::ops::Range;

/// Lines longer than this (in bytes) are shortened.
pub const LONG_LINE: usize = 160;

/// Bytes kept on each side of a label boundary in a shortened line.
const CONTEXT: usize = 40;

const ELLIPSIS: &str = "…";

/// The files of a program as the renderer reads them: name, text and the
/// byte offset where each line starts. Built once per batch of
/// diagnostics.
pub struct Sources<'a> {
    files: Vec<Source<'a>>,
}

struct Source<'a> {
    name: String,
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> Sources<'a> {
    pub fn new(files: impl IntoIterator<Item = (String, &'a str)>) -> Sources<'a> {
        let files = files
            .into_iter()
            .map(|(name, text)| {
                let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
                Source { name, text, line_starts }
            })
            .collect();
        Sources { files }
    }

    /// The excerpt a diagnostic needs, and the diagnostic with its label
    /// ranges moved into it. Labels in unknown files are dropped.
    pub fn excerpt(&self, d: &CsDiagnostic<usize>) -> (Excerpt<'a>, CsDiagnostic<usize>) {
        let mut d = d.clone();
        d.labels.retain(|l| self.files.get(l.file_id).is_some_and(|f| l.range.end <= f.text.len()));
        let mut excerpt = Excerpt { files: Vec::new() };
        let mut ids: Vec<usize> = d.labels.iter().map(|l| l.file_id).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let ranges: Vec<Range<usize>> =
                d.labels.iter().filter(|l| l.file_id == id).map(|l| l.range.clone()).collect();
            excerpt.files.push((id, self.files[id].excerpt(&ranges)));
        }
        for l in &mut d.labels {
            let file = excerpt.file(l.file_id).expect("made above");
            l.range = file.to_excerpt(l.range.start)..file.to_excerpt(l.range.end);
        }
        (excerpt, d)
    }
}

impl<'a> Source<'a> {
    fn line_of(&self, byte: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= byte) - 1
    }

    /// The line's text, without its line break.
    fn line(&self, index: usize) -> Range<usize> {
        let start = self.line_starts[index];
        let end = self.line_starts.get(index + 1).map_or(self.text.len(), |&next| next - 1);
        let end = if end > start && self.text.as_bytes()[end - 1] == b'\r' { end - 1 } else { end };
        start..end
    }

    fn excerpt(&self, ranges: &[Range<usize>]) -> ExcerptFile<'a> {
        // The lines codespan-reporting reads: where labels start and end,
        // the few it shows inside a multi-line label, and a single line
        // between two shown ones (it prints that line rather than a gap).
        let mut shown = BTreeSet::new();
        for r in ranges {
            let (first, last) = (self.line_of(r.start), self.line_of(r.end));
            shown.insert(first);
            shown.insert(last);
            if last > first {
                shown.extend(first + 1..=(first + 3).min(last - 1));
                shown.insert(last - 1);
            }
        }
        let listed: Vec<usize> = shown.iter().copied().collect();
        for pair in listed.windows(2) {
            if pair[1] == pair[0] + 2 {
                shown.insert(pair[0] + 1);
            }
        }
        let mut file =
            ExcerptFile { name: self.name.clone(), original: self.text, text: String::new(), lines: Vec::new() };
        for index in shown {
            let line = self.line(index);
            let points: Vec<usize> =
                ranges.iter().flat_map(|r| [r.start, r.end]).filter(|&p| line.start <= p && p <= line.end).collect();
            let segments = self.windows(line.clone(), &points);
            let start = file.text.len();
            let mut kept = Vec::new();
            for (k, w) in segments.iter().enumerate() {
                if k > 0 || w.start > line.start {
                    file.text.push_str(ELLIPSIS);
                }
                kept.push(Segment { original: w.clone(), at: file.text.len() });
                file.text.push_str(&self.text[w.clone()]);
            }
            if segments.last().is_some_and(|w| w.end < line.end) {
                file.text.push_str(ELLIPSIS);
            }
            file.text.push('\n');
            file.lines.push(ExcerptLine { index, original_start: line.start, start, segments: kept });
        }
        file
    }

    /// The parts of `line` kept: all of it when short, otherwise windows
    /// around `points` (or its start when none falls on it).
    fn windows(&self, line: Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
        if line.len() <= LONG_LINE {
            return std::iter::once(line).collect();
        }
        let text = self.text;
        let floor = |mut i: usize| {
            while i > line.start && !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let ceil = |mut i: usize| {
            while i < line.end && !text.is_char_boundary(i) {
                i += 1;
            }
            i
        };
        let mut wanted: Vec<Range<usize>> = if points.is_empty() {
            // One range (clippy reads `vec![a..b]` as a mistaken `(a..b).collect()`).
            let head = line.start..ceil(line.start + LONG_LINE);
            vec![head]
        } else {
            points
                .iter()
                .map(|&p| floor(p.saturating_sub(CONTEXT).max(line.start))..ceil((p + CONTEXT).min(line.end)))
                .collect()
        };
        wanted.sort_by_key(|w| w.start);
        let mut merged: Vec<Range<usize>> = Vec::new();
        for w in wanted {
            match merged.last_mut() {
                // Windows that touch or nearly do become one.
                Some(last) if w.start <= last.end + ELLIPSIS.len() => last.end = last.end.max(w.end),
                _ => merged.push(w),
            }
        }
        merged
    }
}

/// The shown lines of the files one diagnostic labels.
pub struct Excerpt<'a> {
    files: Vec<(usize, ExcerptFile<'a>)>,
}

pub struct ExcerptFile<'a> {
    name: String,
    original: &'a str,
    text: String,
    lines: Vec<ExcerptLine>,
}

struct ExcerptLine {
    /// The line's index in the real file.
    index: usize,
    /// Where the line starts in the real file.
    original_start: usize,
    /// Where the line starts in the excerpt.
    start: usize,
    segments: Vec<Segment>,
}

/// A part of a real line, and where it is in the excerpt.
struct Segment {
    original: Range<usize>,
    at: usize,
}

impl<'a> Excerpt<'a> {
    fn file(&self, id: usize) -> Option<&ExcerptFile<'a>> {
        self.files.iter().find(|(i, _)| *i == id).map(|(_, f)| f)
    }

    fn get(&self, id: usize) -> Result<&ExcerptFile<'a>, Error> {
        self.file(id).ok_or(Error::FileMissing)
    }
}

impl ExcerptFile<'_> {
    /// The shown line holding excerpt offset `at`.
    fn line_at(&self, at: usize) -> &ExcerptLine {
        let k = self.lines.partition_point(|l| l.start <= at).saturating_sub(1);
        &self.lines[k]
    }

    /// The shown line with this index in the real file.
    fn line_numbered(&self, index: usize) -> Option<(usize, &ExcerptLine)> {
        let k = self.lines.binary_search_by_key(&index, |l| l.index).ok()?;
        Some((k, &self.lines[k]))
    }

    /// Where offset `original` of the real file is in the excerpt (a label
    /// boundary: always inside a kept segment of a shown line).
    fn to_excerpt(&self, original: usize) -> usize {
        let k = self.lines.partition_point(|l| l.original_start <= original).saturating_sub(1);
        let line = &self.lines[k];
        for s in &line.segments {
            if s.original.start <= original && original <= s.original.end {
                return s.at + (original - s.original.start);
            }
        }
        line.segments.first().map_or(line.start, |s| s.at)
    }

    /// Where excerpt offset `at` is in the real file.
    fn to_original(&self, at: usize) -> usize {
        let line = self.line_at(at);
        let mut best = line.original_start;
        for s in &line.segments {
            if s.at <= at {
                best = s.original.start + (at - s.at).min(s.original.len());
            }
        }
        best
    }
}

impl<'f> Files<'f> for Excerpt<'_> {
    type FileId = usize;
    type Name = &'f str;
    type Source = &'f str;

    fn name(&'f self, id: usize) -> Result<&'f str, Error> {
        Ok(&self.get(id)?.name)
    }

    fn source(&'f self, id: usize) -> Result<&'f str, Error> {
        Ok(&self.get(id)?.text)
    }

    fn line_index(&'f self, id: usize, byte_index: usize) -> Result<usize, Error> {
        Ok(self.get(id)?.line_at(byte_index).index)
    }

    /// A line not shown reads as empty (codespan-reporting asks for the
    /// lines inside a long multi-line label, and prints few of them).
    fn line_range(&'f self, id: usize, line_index: usize) -> Result<Range<usize>, Error> {
        let file = self.get(id)?;
        Ok(match file.line_numbered(line_index) {
            Some((k, line)) => line.start..file.lines.get(k + 1).map_or(file.text.len(), |next| next.start),
            None => file.text.len()..file.text.len(),
        })
    }

    /// The column in the real line, in characters.
    fn column_number(&'f self, id: usize, line_index: usize, byte_index: usize) -> Result<usize, Error> {
        let file = self.get(id)?;
        let Some((_, line)) = file.line_numbered(line_index) else { return Ok(1) };
        let original = file.to_original(byte_index).max(line.original_start);
        Ok(file.original[line.original_start..original].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use codespan_reporting::diagnostic::Label;
    use codespan_reporting::term::{emit_to_write_style, termcolor::NoColor, Config};

    fn render(text: &str, range: Range<usize>) -> String {
        let sources = Sources::new([("f.mc".to_string(), text)]);
        let d =
            CsDiagnostic::error().with_message("m").with_labels(vec![Label::primary(0, range).with_message("here")]);
        let (excerpt, d) = sources.excerpt(&d);
        let mut out = NoColor::new(Vec::new());
        emit_to_write_style(&mut out, &Config::default(), &excerpt, &d).expect("renders");
        String::from_utf8(out.into_inner()).expect("UTF-8")
    }

    #[test]
    fn a_long_line_is_cut_around_the_label_and_keeps_its_columns() {
        let text = format!("mexpr\n[{}99, {}]\n", "1, ".repeat(5000), "2, ".repeat(5000));
        let at = text.find("99").expect("there");
        let out = render(&text, at..at + 2);
        assert!(out.contains(&format!("f.mc:2:{}", at - 6 + 1)), "{out}");
        assert!(out.contains("2 │ … 1, 1,") && out.contains(", 1, 99, 2, 2,") && out.contains(", 2,…\n"), "{out}");
        assert!(out.len() < 600, "{} bytes: {out}", out.len());
    }

    #[test]
    fn short_files_render_as_before() {
        let text = "let x = 1\nlet y = x\nmexpr\ny\n";
        let out = render(text, 18..19);
        assert!(out.contains("f.mc:2:9") && out.contains("2 │ let y = x") && out.contains("^ here"), "{out}");
    }

    #[test]
    fn multi_line_labels_show_their_ends() {
        let text: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let start = text.find("line 3").expect("there");
        let end = text.find("line 40").expect("there") + 7;
        let out = render(&text, start..end);
        assert!(out.contains("line 3") && out.contains("line 40") && !out.contains("line 20"), "{out}");
    }
}
