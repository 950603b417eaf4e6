//! Rendering of library diagnostics for a terminal: `error: message`, then
//! `file:line:col`, the source line and a caret under the span (codespan-reporting's rich
//! style, without colour so the output is stable in logs and tests).
//!
//! A file that is not UTF-8 is shown with each invalid byte written as `\xNN`, and so is
//! each control character (`\x1b`), so a diagnostic never sends raw invalid bytes or
//! terminal escapes to the terminal.

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

/// The bytes of a file as text for display: valid UTF-8 unchanged, except that each
/// invalid byte and each control character other than tab, newline and carriage return
/// is written as `\xNN` (four characters), so that nothing in a file can garble or
/// drive the terminal. Also returns the offsets in `bytes` of the escaped bytes,
/// ascending.
fn escape(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(bytes.len());
    let mut escaped = Vec::new();
    let mut at = 0;
    let mut push_escape = |out: &mut String, at: usize, b: u8| {
        out.push_str(&format!("\\x{b:02x}"));
        escaped.push(at);
    };
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match u8::try_from(c) {
                Ok(b) if b.is_ascii_control() && !matches!(b, b'\t' | b'\n' | b'\r') => {
                    push_escape(&mut out, at, b)
                }
                _ => out.push(c),
            }
            at += c.len_utf8();
        }
        for &b in chunk.invalid() {
            push_escape(&mut out, at, b);
            at += 1;
        }
    }
    (out, escaped)
}

/// [`render`] for diagnostics whose spans are byte offsets into `bytes`, which need not
/// be UTF-8 and may hold control characters: they are shown escaped (see [`escape`]) and
/// the spans are moved to the same places in the escaped text.
pub fn render_bytes(file_name: &str, bytes: &[u8], diagnostics: &[Diagnostic]) -> String {
    let (text, escaped) = escape(bytes);
    if escaped.is_empty() {
        return render(file_name, &text, diagnostics);
    }
    // each escape turns one byte into four characters
    let moved = |offset: u32| {
        let o = offset as usize;
        o + 3 * escaped.partition_point(|&i| i < o)
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

/// [`render_bytes`] for diagnostics about a program and the files it imports: each is
/// shown in the file it names (`origin`), the program's own when it names none.
pub fn render_all(file_name: &str, bytes: &[u8], diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let one = std::slice::from_ref(d);
        out.push_str(&match &d.origin {
            Some(o) => {
                let mut d = d.clone();
                d.notes
                    .push(format!("in a module imported while loading {file_name}"));
                render_bytes(&o.path, &o.bytes, std::slice::from_ref(&d))
            }
            None => render_bytes(file_name, bytes, one),
        });
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

    #[test]
    fn a_diagnostic_about_an_imported_file_is_shown_in_that_file() {
        let origin = slic_algebra::Origin {
            path: "d/helpers.hk".to_string(),
            bytes: b"def f(x real) real:\n    log(x)\n".to_vec(),
        };
        let d =
            Diagnostic::new(Span::new(28, 29), "'log' expects prob, found real").in_file(&origin);
        let text = render_all("d/main.hk", b"import helpers\nf(1)\n", &[d]);
        assert!(text.contains("d/helpers.hk:2:9"), "{text}");
        assert!(text.contains("    log(x)"), "{text}");
        assert!(text.contains("while loading d/main.hk"), "{text}");
    }

    #[test]
    fn invalid_bytes_are_escaped_and_underlined() {
        let bytes = b"x = 1\nre\xfeturn \xff\xff x\n";
        assert_eq!(escape(bytes).0, "x = 1\nre\\xfeturn \\xff\\xff x\n");
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

    #[test]
    fn control_characters_are_escaped_tabs_are_not() {
        let bytes = "\tθ \x1b[31m x\r\n".as_bytes();
        assert_eq!(escape(bytes), ("\tθ \\x1b[31m x\r\n".to_string(), vec![4]));
        // a span after the escape moves by three: `x` is byte 10, shown at column 13
        let d = Diagnostic::new(Span::new(10, 11), "unknown name 'x'");
        let text = render_bytes("t.hk", bytes, &[d]);
        assert!(text.contains("t.hk:1:13"), "{text}");
        assert!(!text.contains('\x1b'), "{text}");
    }
}
