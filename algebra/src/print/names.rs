//! Choosing printed names for variables: the hint when it is a valid, unreserved name
//! that no variable in scope prints as, else the hint with the smallest free numeric
//! suffix (`x1`, `x2`, ...).
//!
//! Every variable in scope (free variables of the printed term included) has a distinct
//! printed name, so no reference can be captured and no binder shadows another; names of
//! keywords and built-ins are never used, so a variable never hides `exp` or `normal`.
//! The suffix search keeps a per-base lower bound, so a 10,000-deep chain of `x`s names
//! its binders in linear time. This module only names; it prints nothing.

use rustc_hash::FxHashMap;

use crate::term::{Dist, Prim, VarId};
use crate::types::Coercion;

/// Words the parser treats specially, built-in function and measure names, constructor
/// and type names: never used as a variable's printed name.
const RESERVED: &[&str] = &[
    "def",
    "fn",
    "if",
    "else",
    "match",
    "return",
    "dirac",
    "integrate",
    "summate",
    "product",
    "from",
    "to",
    "array",
    "plate",
    "chain",
    "of",
    "bucket",
    "r_nop",
    "r_split",
    "r_index",
    "r_fanout",
    "r_add",
    "import",
    "data",
    "expect",
    "observe",
    "mh",
    "mcmc",
    "disint",
    "density",
    "disint_m",
    "summarize",
    "simplify",
    "reparam",
    "true",
    "false",
    "left",
    "right",
    "just",
    "nothing",
    "weight",
    "factor",
    "reject",
    "inf",
    "infinity",
    "nat",
    "int",
    "prob",
    "real",
    "unit",
    "bool",
    "measure",
    "pair",
    "either",
    "maybe",
    "_",
];

/// Is `name` a word a variable must not print as?
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
        || crate::syntax::is_reserved(name)
        || Prim::from_name(name).is_some()
        || Dist::from_name(name).is_some()
        || Coercion::from_name(name).is_some()
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '\''
}

/// A valid identifier made from a name hint: the hint without the characters an
/// identifier cannot hold; `x` if nothing usable remains.
pub fn sanitize(hint: &str) -> String {
    let mut s = String::new();
    for c in hint.chars() {
        if (s.is_empty() && is_ident_start(c)) || (!s.is_empty() && is_ident_continue(c)) {
            s.push(c);
        }
    }
    if s.is_empty() || s == "_" {
        "x".to_string()
    } else {
        s
    }
}

/// One binding made by [`Names::bind`], undone by [`Names::unbind`].
struct Scope {
    var: VarId,
    prev: Option<String>,
    name: String,
    suffix: Option<(String, u64)>,
}

/// A name the printer has chosen but not yet bound (see [`Names::choose`]).
pub struct Chosen {
    pub name: String,
    suffix: Option<(String, u64)>,
}

/// The naming state of one printing run.
#[derive(Default)]
pub struct Names {
    printed: FxHashMap<VarId, String>,
    in_use: FxHashMap<String, u32>,
    next_suffix: FxHashMap<String, u64>,
    scopes: Vec<Scope>,
}

impl Names {
    /// The printed name of a variable in scope; the sanitized hint for one that is not
    /// (which only an ill-scoped term has).
    pub fn get(&self, v: VarId, hint: &str) -> String {
        self.printed
            .get(&v)
            .cloned()
            .unwrap_or_else(|| sanitize(hint))
    }

    fn taken(&self, name: &str) -> bool {
        self.in_use.get(name).is_some_and(|&n| n > 0) || is_reserved(name)
    }

    /// The name a variable with this hint would get if bound now.
    pub fn choose(&self, hint: &str) -> Chosen {
        let base = sanitize(hint);
        if !self.taken(&base) {
            return Chosen {
                name: base,
                suffix: None,
            };
        }
        let mut k = self.next_suffix.get(&base).copied().unwrap_or(1).max(1);
        loop {
            let cand = format!("{base}{k}");
            if !self.taken(&cand) {
                return Chosen {
                    name: cand,
                    suffix: Some((base, k)),
                };
            }
            k += 1;
        }
    }

    /// Bind `v` to a name chosen by [`Names::choose`] (with nothing bound in between).
    pub fn bind_chosen(&mut self, v: VarId, c: Chosen) {
        if let Some((base, k)) = &c.suffix {
            self.next_suffix.insert(base.clone(), k + 1);
        }
        *self.in_use.entry(c.name.clone()).or_insert(0) += 1;
        let prev = self.printed.insert(v, c.name.clone());
        self.scopes.push(Scope {
            var: v,
            prev,
            name: c.name,
            suffix: c.suffix,
        });
    }

    /// Bind `v` to a fresh name made from `hint`; returns the name.
    pub fn bind(&mut self, v: VarId, hint: &str) -> String {
        let c = self.choose(hint);
        let name = c.name.clone();
        self.bind_chosen(v, c);
        name
    }

    /// Undo the most recent binding.
    pub fn unbind(&mut self) {
        let Some(s) = self.scopes.pop() else {
            return;
        };
        if let Some(n) = self.in_use.get_mut(&s.name) {
            *n = n.saturating_sub(1);
        }
        match s.prev {
            Some(p) => self.printed.insert(s.var, p),
            None => self.printed.remove(&s.var),
        };
        if let Some((base, k)) = s.suffix {
            let e = self.next_suffix.entry(base).or_insert(k);
            *e = (*e).min(k);
        }
    }

    /// Keep `name` from being chosen until [`Names::release`] (a statement's variable
    /// while its right-hand side prints, so inner binders do not reuse the name).
    pub fn reserve(&mut self, name: &str) {
        *self.in_use.entry(name.to_string()).or_insert(0) += 1;
    }

    pub fn release(&mut self, name: &str) {
        if let Some(n) = self.in_use.get_mut(name) {
            *n = n.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizing_hints() {
        for (hint, want) in [
            ("x", "x"),
            ("θ", "θ"),
            ("x'", "x'"),
            ("", "x"),
            ("_", "x"),
            ("2a", "a"),
            ("a.b", "ab"),
            ("%", "x"),
        ] {
            assert_eq!(sanitize(hint), want, "hint {hint:?}");
        }
    }

    #[test]
    fn suffixes_are_reused_after_scope_ends() {
        let mut n = Names::default();
        let mut store = crate::term::Store::new();
        let vs: Vec<VarId> = (0..3)
            .map(|_| store.fresh_var("x", crate::types::Type::Real))
            .collect();
        assert_eq!(n.bind(vs[0], "x"), "x");
        assert_eq!(n.bind(vs[1], "x"), "x1");
        n.unbind();
        assert_eq!(n.bind(vs[2], "x"), "x1");
        assert_eq!(n.bind(vs[1], "exp"), "exp1");
    }
}
