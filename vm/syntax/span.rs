//! Byte spans into one source file, and the line/column view of them.

/// A half-open byte range `start..end` into the source text of one file.
/// Every AST node carries one; diagnostics turn it into `line:col`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Maps byte offsets of one source text to 1-based lines and columns
/// (columns count characters, not bytes, as editors and erlc do).
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let mut line_starts = vec![0];
        for (i, b) in source.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex { line_starts }
    }

    /// 1-based line of a byte offset.
    pub fn line(&self, offset: u32) -> u32 {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    /// 1-based (line, column) of a byte offset; the column counts characters.
    pub fn line_col(&self, source: &str, offset: u32) -> (u32, u32) {
        let line = self.line(offset);
        let start = self.line_starts[line as usize - 1] as usize;
        let end = (offset as usize).min(source.len());
        let column = source
            .get(start..end)
            .map_or(end - start, |s| s.chars().count());
        (line, column as u32 + 1)
    }

    /// Byte offset where a 1-based line starts.
    pub fn line_start(&self, line: u32) -> u32 {
        self.line_starts[(line as usize - 1).min(self.line_starts.len() - 1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_are_one_based() {
        let src = "ab\ncd\n\nx";
        let index = LineIndex::new(src);
        assert_eq!(index.line_col(src, 0), (1, 1));
        assert_eq!(index.line_col(src, 1), (1, 2));
        assert_eq!(index.line_col(src, 3), (2, 1));
        assert_eq!(index.line_col(src, 7), (4, 1));
    }
}
