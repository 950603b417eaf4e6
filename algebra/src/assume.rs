//! What the simplifier knows at a point in a term: the types of variables in scope, loop
//! ranges (`lo <= i < hi`), and the conditions of enclosing `if`s and piecewise branches.
//!
//! Canonicalisation and condition deciding consult a [`Context`]; it is a plain value that
//! grows as a traversal enters binders and branches (clone-and-extend; contexts are small).
//! Deciding conditions against it lives in `cond`; this file only holds the facts.

use crate::term::{Store, TermId, VarId};
use crate::types::Type;

/// A three-valued answer: decided true, decided false, or not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    pub fn from_bool(b: bool) -> Tri {
        if b {
            Tri::True
        } else {
            Tri::False
        }
    }
}

impl std::ops::Not for Tri {
    type Output = Tri;
    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            Tri::Unknown => Tri::Unknown,
        }
    }
}

/// One fact the context holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    /// `lo <= v < hi` for an integral loop variable (bounds are terms of v's type).
    Range { var: VarId, lo: TermId, hi: TermId },
    /// A boolean term known to have this value (an enclosing `if`'s condition).
    Holds { cond: TermId, value: bool },
}

/// The facts in force at a point of a term, innermost last.
#[derive(Clone, Debug, Default)]
pub struct Context {
    facts: Vec<Fact>,
}

impl Context {
    pub fn new() -> Context {
        Context::default()
    }

    pub fn facts(&self) -> &[Fact] {
        &self.facts
    }

    /// This context plus `lo <= v < hi`.
    pub fn with_range(&self, var: VarId, lo: TermId, hi: TermId) -> Context {
        let mut c = self.clone();
        c.facts.push(Fact::Range { var, lo, hi });
        c
    }

    /// This context plus "`cond` has value `value`".
    pub fn with_condition(&self, cond: TermId, value: bool) -> Context {
        let mut c = self.clone();
        c.facts.push(Fact::Holds { cond, value });
        c
    }

    /// The range of an integral loop variable, innermost first.
    pub fn range_of(&self, var: VarId) -> Option<(TermId, TermId)> {
        self.facts.iter().rev().find_map(|f| match f {
            Fact::Range { var: v, lo, hi } if *v == var => Some((*lo, *hi)),
            _ => None,
        })
    }

    /// Is the value of `t` known to be `>= 0` from types alone (nat and prob terms)?
    /// The condition-deciding layer refines this with ranges and conditions.
    pub fn nonnegative_by_type(&self, store: &Store, t: TermId) -> bool {
        matches!(store.ty(t), Type::Nat | Type::Prob)
    }
}
