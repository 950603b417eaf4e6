//! The standard library of distributions (`algebra/stdlib/distributions.hk`): `.hk`
//! definitions over the primitive measures that are in scope in every program, unless
//! the program binds the same name itself (its own definition wins).
//!
//! A library call elaborates to an application of a *library variable*: a variable free
//! in the program whose closed definition the [`Store`] keeps (`Store::library_def`).
//! So a term mentions only the definitions it uses, the printer shows the call by name
//! (`t(3, 0, 1)`, which reads back to the same variable in the same store), the
//! interpreter evaluates a library variable by its definition, and the simplifier
//! inlines it where it needs the density. A definition is elaborated into a store the
//! first time a program (or the simplifier, through [`var`]) names it, with only the
//! definitions above it in scope, so the library cannot be cyclic.
//!
//! This module parses and looks up; type checking is the elaborator's (`elab::library`).

use std::sync::OnceLock;

use crate::diag::Diagnostic;
use crate::syntax::ast::{Expr, ExprKind, Ident, TypeExpr};
use crate::syntax::parse;
use crate::term::{Store, VarId};

/// The library's source text.
pub const SOURCE: &str = include_str!("../stdlib/distributions.hk");

/// One definition of the library, as parsed.
pub(crate) enum Entry<'a> {
    /// `def name(params) ret: body`.
    Def {
        name: &'a Ident,
        params: &'a [(Ident, TypeExpr)],
        ret: Option<&'a TypeExpr>,
        body: &'a Expr,
    },
    /// `name = value` (a measure without parameters, such as `stdNormal`).
    Let { name: &'a Ident, value: &'a Expr },
}

impl Entry<'_> {
    pub(crate) fn name(&self) -> &str {
        match self {
            Entry::Def { name, .. } | Entry::Let { name, .. } => &name.name,
        }
    }
}

/// The parsed library: a chain of definitions ending in `()` (appended here, so that the
/// file holds nothing but definitions).
fn parsed() -> Result<&'static Expr, &'static [Diagnostic]> {
    static PARSED: OnceLock<Result<Expr, Vec<Diagnostic>>> = OnceLock::new();
    let r = PARSED.get_or_init(|| parse(&format!("{SOURCE}\n()\n")));
    match r {
        Ok(e) => Ok(e),
        Err(d) => Err(d),
    }
}

/// The library's definitions in file order (empty if the library failed to parse, which
/// a test rules out).
pub(crate) fn entries() -> Vec<Entry<'static>> {
    let mut out = Vec::new();
    let Ok(mut cur) = parsed() else {
        return out;
    };
    loop {
        match &cur.kind {
            ExprKind::Def {
                name,
                params,
                ret,
                body,
                rest,
            } => {
                out.push(Entry::Def {
                    name,
                    params,
                    ret: ret.as_ref(),
                    body,
                });
                cur = rest;
            }
            ExprKind::Let(name, value, rest) => {
                out.push(Entry::Let { name, value });
                cur = rest;
            }
            _ => return out,
        }
    }
}

/// The names the library defines, in file order.
pub fn names() -> Vec<&'static str> {
    entries()
        .into_iter()
        .map(|e| match e {
            Entry::Def { name, .. } | Entry::Let { name, .. } => name.name.as_str(),
        })
        .collect()
}

/// The library variable `name` in `store`, loading its definition (and those it uses) on
/// first use; `Ok(None)` when the library has no such name. An error is a library
/// definition that does not type-check: a bug, which the tests rule out.
pub fn var(store: &mut Store, name: &str) -> Result<Option<VarId>, Vec<Diagnostic>> {
    crate::elab::library_var(store, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every definition parses and type-checks on its own, in a fresh store.
    #[test]
    fn every_definition_loads() {
        assert!(parsed().is_ok(), "{:?}", parsed().err());
        let names = names();
        assert!(names.len() >= 20, "{names:?}");
        for n in names {
            let mut store = Store::new();
            let v = var(&mut store, n).unwrap_or_else(|e| panic!("{n}: {e:?}"));
            let v = v.unwrap_or_else(|| panic!("{n} not found"));
            assert!(store.library_def(v).is_some(), "{n}");
            assert_eq!(store.var_name(v), n);
        }
    }

    #[test]
    fn unknown_names_are_not_library_names() {
        let mut store = Store::new();
        assert_eq!(var(&mut store, "normal").ok(), Some(None));
        assert_eq!(var(&mut store, "nonesuch").ok(), Some(None));
    }
}
