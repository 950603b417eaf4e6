//! Standard-library names in the elaborator: a name no scope binds, that is no built-in,
//! resolves to its library variable (see `stdlib`), whose definition is elaborated into
//! the store on first use by a fresh elaborator, with no user names in scope and only
//! the definitions above it in the library visible (so the library cannot be cyclic).

use super::{Elab, R};
use crate::diag::{Diagnostic, Span};
use crate::stdlib::{entries, Entry};
use crate::term::{Store, TermId, VarId};

/// The library variable `name`, loaded into `store` if it is not yet (see
/// `stdlib::var`).
pub(crate) fn library_var(store: &mut Store, name: &str) -> Result<Option<VarId>, Vec<Diagnostic>> {
    load(store, name, usize::MAX)
}

/// `name`'s library variable when it is among the first `limit` definitions.
fn load(store: &mut Store, name: &str, limit: usize) -> Result<Option<VarId>, Vec<Diagnostic>> {
    let entries = entries();
    let Some(idx) = entries.iter().position(|e| e.name() == name) else {
        return Ok(None);
    };
    if idx >= limit {
        return Ok(None);
    }
    if let Some(v) = store.library_var(name) {
        return Ok(Some(v));
    }
    let mut cx = Elab::new(store);
    cx.library_limit = idx;
    let r = match &entries[idx] {
        Entry::Def {
            params, ret, body, ..
        } => cx.def(params, *ret, body),
        Entry::Let { value, .. } => cx.infer(value),
    };
    let mut errors = std::mem::take(&mut cx.errors);
    drop(cx);
    match r {
        Ok(t) if errors.is_empty() => {
            let ty = store.ty(t).clone();
            let v = store.fresh_var(name, ty);
            store.add_library(v, t);
            Ok(Some(v))
        }
        _ => {
            if errors.is_empty() {
                errors.push(Diagnostic::new(
                    Span::default(),
                    format!("the standard library's '{name}' failed without a message"),
                ));
            }
            Err(errors)
        }
    }
}

impl Elab<'_> {
    /// The library variable `name` as a term, or `None` when the library (as far as this
    /// elaborator may see it) has no such name.
    pub(super) fn library(&mut self, name: &str, span: Span) -> Option<R<TermId>> {
        match load(self.store, name, self.library_limit) {
            Ok(None) => None,
            Ok(Some(v)) => Some(Ok(self.store.var_term(v))),
            Err(errs) => {
                let why = errs.first().map_or(String::new(), |d| d.message.clone());
                Some(Err(self.err(
                    span,
                    format!("internal error: the standard library's '{name}' does not type-check: {why}"),
                )))
            }
        }
    }
}
