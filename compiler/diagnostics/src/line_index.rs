//! Byte offsets to line/column positions.

/// A zero-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The start offsets of the lines of one text, for position conversions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex { line_starts, len: text.len() as u32 }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The start offset of a zero-based line, or the text length past the end.
    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts.get(line as usize).copied().unwrap_or(self.len)
    }

    fn line_of(&self, offset: u32) -> u32 {
        let offset = offset.min(self.len);
        (self.line_starts.partition_point(|&s| s <= offset) - 1) as u32
    }

    /// Line and column, the column counted in Unicode scalar values.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let line = self.line_of(offset);
        let start = self.line_starts[line as usize] as usize;
        let end = clamp_to_char_boundary(text, offset.min(self.len) as usize);
        LineCol { line, col: text[start..end.max(start)].chars().count() as u32 }
    }

    /// Line and column, the column counted in UTF-16 code units (LSP).
    pub fn line_col_utf16(&self, text: &str, offset: u32) -> LineCol {
        let line = self.line_of(offset);
        let start = self.line_starts[line as usize] as usize;
        let end = clamp_to_char_boundary(text, offset.min(self.len) as usize);
        let col = text[start..end.max(start)].chars().map(char::len_utf16).sum::<usize>();
        LineCol { line, col: col as u32 }
    }

    /// The byte offset of a line and UTF-16 column (LSP), clamped to the line.
    pub fn offset_utf16(&self, text: &str, pos: LineCol) -> u32 {
        let start = self.line_start(pos.line) as usize;
        let end = self.line_start(pos.line + 1) as usize;
        let mut units = 0u32;
        for (i, c) in text[start..end].char_indices() {
            if units >= pos.col || c == '\n' {
                return (start + i) as u32;
            }
            units += c.len_utf16() as u32;
        }
        end as u32
    }
}

fn clamp_to_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_utf16_units() {
        let text = "ab\nxé𝄞y\n";
        let idx = LineIndex::new(text);
        let y = text.find('y').unwrap() as u32;
        assert_eq!(idx.line_col(text, y), LineCol { line: 1, col: 3 });
        assert_eq!(idx.line_col_utf16(text, y), LineCol { line: 1, col: 4 });
        assert_eq!(idx.offset_utf16(text, LineCol { line: 1, col: 4 }), y);
        assert_eq!(idx.line_col(text, 0), LineCol { line: 0, col: 0 });
    }
}
