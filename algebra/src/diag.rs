//! Diagnostics as plain data: a byte span in one source text, a one-line message, and
//! optional notes. Libraries produce them; only `cli` renders them (with the file name,
//! `line:col`, the source line and a caret).
//!
//! [`LineIndex`] turns byte offsets into 1-based line and column numbers (columns count
//! characters, not bytes, so a caret under `θ` lands right). [`SpanMap`] remembers where
//! the elaborator found each term, so that later stages (the interpreter's run-time
//! errors, unimplemented transforms) can point into the source too.

use std::fmt;

use rustc_hash::FxHashMap;

use crate::term::TermId;

/// A half-open byte range `[start, end)` in a source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end).unwrap_or(u32::MAX),
        }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One problem found in user input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    /// One line, lower case, no trailing period: `expected prob, found real`.
    pub message: String,
    /// Further lines of explanation (hints), each one line.
    pub notes: Vec<String>,
    /// The file the span points into when it is not the program's own (an imported
    /// module); `None`: the program's file (or text).
    pub origin: Option<Box<Origin>>,
}

/// A file other than the program's own, for diagnostics about it: its path as the
/// importer looked it up, and its bytes, which the span points into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl Diagnostic {
    pub fn new(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span,
            message: message.into(),
            notes: Vec::new(),
            origin: None,
        }
    }

    /// The diagnostic, about the file `origin` (unless it already names one).
    pub fn in_file(mut self, origin: &Origin) -> Diagnostic {
        if self.origin.is_none() {
            self.origin = Some(Box::new(origin.clone()));
        }
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The source span of each term the elaborator built, for the terms' first occurrence:
/// terms are hash-consed and carry no spans, so two equal subexpressions share one term
/// and the earlier one's position is kept.
#[derive(Clone, Debug, Default)]
pub struct SpanMap {
    spans: FxHashMap<TermId, Span>,
}

impl SpanMap {
    /// Where `t` was written, if the elaborator built it from source text.
    pub fn get(&self, t: TermId) -> Option<Span> {
        self.spans.get(&t).copied()
    }

    /// Records `t` at `span` unless it was seen earlier.
    pub fn record(&mut self, t: TermId, span: Span) {
        self.spans.entry(t).or_insert(span);
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// Byte offset -> (line, column) for one source text.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { line_starts }
    }

    /// 1-based line and 1-based character column of a byte offset (clamped to the text).
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = offset.min(text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let col = text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (line + 1, col + 1)
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text<'a>(&self, text: &'a str, line: usize) -> &'a str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(text.len(), |&e| e.saturating_sub(1));
        text.get(start..end).unwrap_or("").trim_end_matches('\r')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let text = "ab\nθ = 1\n";
        let ix = LineIndex::new(text);
        assert_eq!(ix.line_col(text, 0), (1, 1));
        assert_eq!(ix.line_col(text, 3), (2, 1));
        // `=` is after the two-byte θ and a space
        assert_eq!(ix.line_col(text, 6), (2, 3));
        assert_eq!(ix.line_text(text, 2), "θ = 1");
        assert_eq!(ix.line_text(text, 9), "");
    }
}
