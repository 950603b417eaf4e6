//! Rendering of library diagnostics for a terminal: `error: message`, then
//! `file:line:col`, the source line and a caret under the span (codespan-reporting's rich
//! style, without colour so the output is stable in logs and tests).

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
}
