//! What the simplifier knows at a point in a term: the types of variables in scope, loop
//! ranges (`lo <= i < hi`), and the conditions of enclosing `if`s and piecewise branches.
//!
//! Canonicalisation and condition deciding consult a [`Context`]; it is a plain value that
//! grows as a traversal enters binders and branches (clone-and-extend; contexts are small):
//! `enter_loop`, `enter_index`, `enter_branch`, `enter_body`, and `without_var` for
//! leaving a binder. Deciding conditions against it lives in `cond`; this file only holds
//! the facts.

use crate::num::Rational;
use crate::term::{Node, Store, TermId, VarId};
use crate::types::Type;
use crate::vars::mentions;

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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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

    /// Entering `summate`/`product`/`bucket var from lo to hi`: this context plus
    /// `lo <= var < hi` (hi exclusive, as in those loops).
    pub fn enter_loop(&self, var: VarId, lo: TermId, hi: TermId) -> Context {
        self.with_range(var, lo, hi)
    }

    /// Entering `array var of n`/`plate var of n`: this context plus `0 <= var < n`.
    pub fn enter_index(&self, store: &mut Store, var: VarId, n: TermId) -> Context {
        let zero = store.intern(Node::Lit(Rational::zero()), store.ty(n).clone());
        self.with_range(var, zero, n)
    }

    /// Entering the then-branch (`value` true) or else-branch of `if cond`.
    pub fn enter_branch(&self, cond: TermId, value: bool) -> Context {
        self.with_condition(cond, value)
    }

    /// Entering the loop or branch of a term whose node binds or guards something:
    /// `summate`/`product`/`bucket` (their range), `array`/`plate` (`0 <= i < n`); `None`
    /// for other nodes (an `if`'s branches: use [`Context::enter_branch`]).
    pub fn enter_body(&self, store: &mut Store, t: TermId) -> Option<Context> {
        match *store.node(t) {
            Node::Summate(v, lo, hi, _)
            | Node::Product(v, lo, hi, _)
            | Node::Bucket(v, lo, hi, _) => Some(self.enter_loop(v, lo, hi)),
            Node::Array(v, n, _) | Node::Plate(v, n, _) => Some(self.enter_index(store, v, n)),
            _ => None,
        }
    }

    /// This context without the facts that mention `var` (its range and every condition
    /// in which it occurs): what is known outside `var`'s binder.
    pub fn without_var(&self, store: &Store, var: VarId) -> Context {
        let facts = self
            .facts
            .iter()
            .filter(|f| match f {
                Fact::Range { var: v, lo, hi } => {
                    *v != var && !mentions(store, *lo, var) && !mentions(store, *hi, var)
                }
                Fact::Holds { cond, .. } => !mentions(store, *cond, var),
            })
            .cloned()
            .collect();
        Context { facts }
    }

    /// Is the value of `t` known to be `>= 0` from types alone (nat and prob terms)?
    /// The condition-deciding layer refines this with ranges and conditions.
    pub fn nonnegative_by_type(&self, store: &Store, t: TermId) -> bool {
        matches!(store.ty(t), Type::Nat | Type::Prob)
    }
}

/// Is `t` non-negative by its shape alone: nat or prob typed, a non-negative literal, a
/// safe coercion of one, or a sum, product or branch of such (`Σ_j [i == y[j]]` written
/// over the reals is a count)?
pub fn evidently_nonnegative(store: &Store, t: TermId) -> bool {
    nonneg_by_shape(store, t, 0)
}

fn nonneg_by_shape(store: &Store, t: TermId, depth: usize) -> bool {
    if matches!(store.ty(t), Type::Nat | Type::Prob) {
        return true;
    }
    if depth > 16 {
        return false;
    }
    match store.node(t) {
        Node::Lit(q) => !q.is_negative(),
        Node::Coerce(_, a) => matches!(store.ty(*a), Type::Nat | Type::Prob),
        Node::Summate(_, _, _, b) | Node::Product(_, _, _, b) => {
            nonneg_by_shape(store, *b, depth + 1)
        }
        Node::If(_, a, b) => {
            nonneg_by_shape(store, *a, depth + 1) && nonneg_by_shape(store, *b, depth + 1)
        }
        Node::Prim(crate::term::Prim::Add | crate::term::Prim::Mul, xs) => {
            xs.iter().all(|&x| nonneg_by_shape(store, x, depth + 1))
        }
        // an even power is a square, whatever its base's sign (`Σ_j x[j]^2`, the
        // precision a regression slope gets from its data, issue 10); an odd one keeps
        // its base's sign
        Node::Prim(crate::term::Prim::Pow, xs) => match xs.as_slice() {
            [b, e] => {
                matches!(store.node(*e), Node::Lit(k) if k.to_i64().is_some_and(|k| k % 2 == 0))
                    || nonneg_by_shape(store, *b, depth + 1)
            }
            _ => false,
        },
        _ => false,
    }
}
