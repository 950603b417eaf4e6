//! Hints attached to the elaborator's errors: "did you mean `normal`?" for an unknown
//! name, the explicit coercion to write when a value of a wider type is given
//! (`real2prob(...)`), and `<~` when a measure is used as a value. A hint is a note on a
//! diagnostic; it never changes what is accepted, and it is only given when it is likely
//! right (a close name, an exact conversion), since a wrong hint misleads.

use super::call::CONSTRUCTORS;
use super::{Elab, Failed};
use crate::diag::Span;
use crate::term::{Dist, Node, Prim, TermId};
use crate::types::{Coercion, Type};

/// Names a program can use without binding them, besides `Prim`, `Dist` and `Coercion`.
const CONSTANTS: [&str; 4] = ["true", "false", "reject", "nothing"];

/// The type names (for "unknown type").
const TYPE_NAMES: [&str; 11] = [
    "nat", "int", "prob", "real", "unit", "bool", "array", "measure", "maybe", "pair", "either",
];

impl Elab<'_> {
    /// `unknown name 'nromal'`, with "did you mean 'normal'?" when a name in scope or a
    /// built-in is close.
    pub(super) fn unknown_name(&mut self, span: Span, name: &str) -> Failed {
        let in_scope = self
            .scopes
            .map
            .iter()
            .filter(|(_, vs)| !vs.is_empty())
            .map(|(n, _)| n.as_str());
        let builtins = Prim::NAMED
            .iter()
            .map(|(n, _)| *n)
            .chain(Dist::ALL.iter().map(|d| d.name()))
            .chain(Coercion::ALL.iter().map(|c| c.name()))
            .chain(CONSTRUCTORS.iter().map(|(n, _)| *n))
            .chain(CONSTANTS)
            // the standard library is in scope in every program
            .chain(crate::stdlib::names());
        let best = closest(name, in_scope.chain(builtins));
        self.err_with(
            span,
            format!("unknown name '{name}'"),
            best.map(did_you_mean),
        )
    }

    /// `unknown type 'rael'`, with "did you mean 'real'?" when a type name is close.
    pub(super) fn unknown_type(&mut self, span: Span, name: &str) -> Failed {
        let best = closest(name, TYPE_NAMES.into_iter());
        self.err_with(
            span,
            format!("unknown type '{name}'"),
            best.map(did_you_mean),
        )
    }

    fn err_with(&mut self, span: Span, message: String, note: Option<String>) -> Failed {
        let failed = self.err(span, message);
        self.add_note(note);
        failed
    }

    /// Adds `note` to the last error recorded.
    pub(super) fn add_note(&mut self, note: Option<String>) {
        if let (Some(note), Some(d)) = (note, self.errors.last_mut()) {
            d.notes.push(note);
        }
    }
}

fn did_you_mean(name: &str) -> String {
    format!("did you mean '{name}'?")
}

/// What to write when a value of type `have` is given where `want` (`None`: any number)
/// is expected, if there is one clear fix. `var` names the value when it is a variable;
/// `literal` says it is a literal (whose value is plain to see, so a conversion that
/// "holds if the value is never negative" would be no help).
fn type_hint(want: Option<&Type>, have: &Type, var: Option<&str>, literal: bool) -> Option<String> {
    if let Type::Measure(elem) = have {
        if !matches!(want, Some(Type::Measure(_))) {
            return Some(match var {
                Some(x) => format!(
                    "'{x}' is a measure over {elem}, not a value; to use a value drawn from \
                     it, bind it with '<~' ({x} <~ ...) instead of '=' ({x} = ...)"
                ),
                None => format!(
                    "this is a measure over {elem}, not a value; bind a value drawn from it \
                     with '<~' first (x <~ ...) and use x"
                ),
            });
        }
    }
    let want = want?;
    if literal {
        return None;
    }
    // the conversions that can fail at run time: the user must say that they hold
    let c = Coercion::ALL.into_iter().find(|c| {
        &c.from_type() == have && &c.to_type() == want && Coercion::safe(have, want).is_none()
    })?;
    match c {
        Coercion::Real2Prob | Coercion::Int2Nat => Some(format!(
            "if the value is never negative, convert it with '{}(...)' (a negative value is \
             an error when the program runs)",
            c.name()
        )),
        _ => Some(format!("convert it with '{}(...)'", c.name())),
    }
}

impl Elab<'_> {
    /// Adds the hint (if any) for the term `t` given where `want` was expected to the last
    /// error.
    pub(super) fn hint_for(&mut self, t: TermId, want: Option<&Type>) {
        let have = self.store.ty(t);
        let (var, literal) = match self.store.node(t) {
            Node::Var(v) => (Some(self.store.var_name(*v)), false),
            Node::Lit(_) => (None, true),
            _ => (None, false),
        };
        let note = type_hint(want, have, var, literal);
        self.add_note(note);
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a
/// likely typo: at most one edit for short names, one per four characters for longer
/// ones (so `normalise` is not taken for a misspelt `normal`).
/// Ties go to the alphabetically first, so the hint is deterministic.
fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let n = name.chars().count();
    let limit = (n / 4).max(1);
    candidates
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, c)| d <= limit && d < n.max(c.chars().count()))
        .min()
        .map(|(_, c)| c)
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
/// adjacent characters each cost one (`nromal` is one edit from `normal`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // three rows of the dynamic-programming table: i-2, i-1, i
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_typos() {
        for (a, b, d) in [
            ("normal", "normal", 0),
            ("nromal", "normal", 1),
            ("normla", "normal", 1),
            ("norml", "normal", 1),
            ("normall", "normal", 1),
            ("gama", "gamma", 1),
            ("", "abc", 3),
            ("kitten", "sitting", 3),
            ("θ", "θ1", 1),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
            assert_eq!(edit_distance(b, a), d, "{b} {a}");
        }
    }

    #[test]
    fn only_close_names_are_suggested() {
        let names = ["normal", "beta", "gamma", "sigma", "mu", "x"];
        for (typo, want) in [
            ("nromal", Some("normal")),
            ("sigm", Some("sigma")),
            ("bta", Some("beta")),
            ("gmama", Some("gamma")),
            ("sgmia", None),
            // one letter more is a likely slip; a different one-letter name is not
            ("m", Some("mu")),
            ("y", None),
            ("xyz", None),
            ("normalise", None),
            ("mu", None),
        ] {
            assert_eq!(closest(typo, names.into_iter()), want, "{typo}");
        }
    }
}
