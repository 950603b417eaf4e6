//! The front end as one call: `.hk` text (or bytes) to a typed core term. This is what
//! the command-line tool and the tests use; it only chains `syntax::decode`,
//! `syntax::parse` and `elab::elaborate` and adds no behaviour of its own.

use crate::diag::Diagnostic;
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

#[cfg(test)]
mod tests;
