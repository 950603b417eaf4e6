//! Rendering of library diagnostics for a terminal: `error: message`, then
//! `file:line:col`, the source line and a caret under the span (codespan-reporting's rich
//! style, without colour so the output is stable in logs and tests).
//!
//! A file that is not UTF-8 is shown with each invalid byte written as `\xNN`, so a
//! diagnostic never sends raw invalid bytes to the terminal (which could garble it).

use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Config};
use slic_algebra::Diagnostic;

/// Render every diagnostic for one file into a single string.
pub fn render(file_name: &str, source: &str, diagnostics: &[Diagnostic]) -> String {
    let file = SimpleFile::new(file_name, source);
    let config = Config::default();
    let mut out = String::new();
    for d in diagnostics {
        let start = (d.span.start as usize).min(source.len());
        let end = (d.span.end as usize).clamp(start, source.len());
        let report = Report::error()
            .with_message(&d.message)
            .with_labels(vec![Label::primary((), start..end)])
            .with_notes(d.notes.clone());
        if term::emit_to_string(&mut out, &config, &file, &report).is_err() {
            // fall back to the plain one-line form rather than lose the message
            let ix = slic_algebra::LineIndex::new(source);
            let (line, col) = ix.line_col(source, start);
            out.push_str(&format!("{file_name}:{line}:{col}: error: {}\n", d.message));
        }
    }
    out
}

/// The bytes of a file as text for display: valid UTF-8 unchanged, each invalid byte
/// written as `\xNN` (four characters).
pub fn display_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// [`render`] for diagnostics whose spans are byte offsets into `bytes`, which need not
/// be UTF-8: spans are moved to the same places in [`display_text`].
pub fn render_bytes(file_name: &str, bytes: &[u8], diagnostics: &[Diagnostic]) -> String {
    let text = display_text(bytes);
    if text.len() == bytes.len() {
        // no escapes (each adds three bytes): offsets are unchanged
        return render(file_name, &text, diagnostics);
    }
    // offsets of invalid bytes in `bytes`, ascending
    let mut invalid = Vec::new();
    let mut at = 0;
    for chunk in bytes.utf8_chunks() {
        at += chunk.valid().len();
        invalid.extend(at..at + chunk.invalid().len());
        at += chunk.invalid().len();
    }
    let moved = |offset: u32| {
        let o = offset as usize;
        o + 3 * invalid.partition_point(|&i| i < o)
    };
    let shown: Vec<Diagnostic> = diagnostics
        .iter()
        .map(|d| Diagnostic {
            span: slic_algebra::Span::new(moved(d.span.start), moved(d.span.end)),
            ..d.clone()
        })
        .collect();
    render(file_name, &text, &shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::Span;

    #[test]
    fn names_file_line_column_and_shows_the_line() {
        let src = "fn x real:\nreturn log(x)\n";
        let d = Diagnostic::new(Span::new(22, 23), "expected prob, found real");
        let text = render("t.hk", src, &[d]);
        assert!(text.contains("error: expected prob, found real"), "{text}");
        assert!(text.contains("t.hk:2:12"), "{text}");
        assert!(text.contains("return log(x)"), "{text}");
        assert!(text.contains('^'), "{text}");
    }

    #[test]
    fn invalid_bytes_are_escaped_and_underlined() {
        let bytes = b"x = 1\nre\xfeturn \xff\xff x\n";
        assert_eq!(display_text(bytes), "x = 1\nre\\xfeturn \\xff\\xff x\n");
        // the second of the two 0xff bytes
        let d = Diagnostic::new(Span::new(15, 16), "file is not valid UTF-8");
        let text = render_bytes("t.hk", bytes, &[d]);
        assert!(text.contains("t.hk:2:16"), "{text}");
        assert!(text.contains("re\\xfeturn \\xff\\xff x"), "{text}");
        // the caret line: the whole escape of that byte is underlined, nothing else
        let carets = text.lines().find(|l| l.contains('^')).unwrap_or("");
        assert_eq!(carets.trim_start_matches(|c| c != '^'), "^^^^", "{text}");
        assert_eq!(
            carets.find('^'),
            text.lines()
                .find(|l| l.contains("re\\x"))
                .and_then(|l| l.rfind("\\xff")),
            "{text}"
        );
    }
}
