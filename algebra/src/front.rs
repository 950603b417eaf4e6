//! The front end as one call: `.hk` text (or bytes) to a typed core term. This is what
//! the command-line tool and the tests use; it only chains `syntax::decode`,
//! `syntax::parse` and `elab::elaborate` and adds no behaviour of its own, except that
//! [`load_with_comments`] also attaches the program's comments to its statements
//! (`comments`), for `fmt` to print them back.

mod comments;

use crate::diag::{Diagnostic, SpanMap};
use crate::print::Comments;
use crate::term::{Store, TermId};
use crate::{elab, syntax};

/// Parses and type-checks a program, building its core term in `store`.
///
/// ```
/// use slic_algebra::{front, Store};
/// let mut store = Store::new();
/// let t = front::load(&mut store, "fn x real: return x").unwrap();
/// assert_eq!(store.ty(t).to_string(), "real -> measure(real)");
/// let errs = front::load(&mut store, "log(true)").unwrap_err();
/// assert_eq!(errs[0].message, "'log' expects prob, found bool");
/// ```
pub fn load(store: &mut Store, text: &str) -> Result<TermId, Vec<Diagnostic>> {
    let program = syntax::parse(text)?;
    elab::elaborate(store, &program)
}

/// Like [`load`], for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes(store: &mut Store, bytes: &[u8]) -> Result<TermId, Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load(store, text)
}

/// Like [`load`], also returning the source span of each elaborated term (first
/// occurrence), for errors found after elaboration.
///
/// ```
/// use slic_algebra::{front, Store};
/// let mut store = Store::new();
/// let (t, spans) = front::load_with_spans(&mut store, "x = 1\nreturn x").unwrap();
/// assert!(spans.get(t).is_some());
/// ```
pub fn load_with_spans(
    store: &mut Store,
    text: &str,
) -> Result<(TermId, SpanMap), Vec<Diagnostic>> {
    let program = syntax::parse(text)?;
    elab::elaborate_with_spans(store, &program)
}

/// [`load_with_spans`] for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes_with_spans(
    store: &mut Store,
    bytes: &[u8],
) -> Result<(TermId, SpanMap), Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load_with_spans(store, text)
}

/// Like [`load`], also returning the program's `#` comments attached to the statements
/// of the term (see `comments` for the rule), ready for `print::print_with_comments`.
///
/// ```
/// use slic_algebra::{front, print, Store};
/// let mut store = Store::new();
/// let src = "# a model\nx <~ normal(0, 1) # prior\nreturn x\n";
/// let (t, comments) = front::load_with_comments(&mut store, src).unwrap();
/// let text = print::print_with_comments(&store, t, &Default::default(), comments);
/// assert_eq!(text, src);
/// ```
pub fn load_with_comments(
    store: &mut Store,
    text: &str,
) -> Result<(TermId, Comments), Vec<Diagnostic>> {
    let (program, found) = syntax::parse_with_comments(text)?;
    let (term, statements) = elab::elaborate_with_binders(store, &program)?;
    Ok((term, comments::attach(text, &program, &found, &statements)))
}

/// Like [`load_with_comments`], for the raw bytes of a file (which must be UTF-8).
pub fn load_bytes_with_comments(
    store: &mut Store,
    bytes: &[u8],
) -> Result<(TermId, Comments), Vec<Diagnostic>> {
    let text = syntax::decode(bytes).map_err(|d| vec![d])?;
    load_with_comments(store, text)
}

#[cfg(test)]
mod tests;
