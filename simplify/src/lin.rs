//! The simplifier's normal form: an expression patently linear in an abstract `h` (the
//! grammar of Fig. 3 of the arrays paper, flattened into a sum of products).
//!
//! A [`Lin`] is a sum of [`LTerm`]s; each term means
//! `∫_{binds, in order} [guards] · Π factors · h(result)`. A bind ranges over a base
//! measure ([`Base`]): lebesgue or counting on an interval (after a density has been
//! opened into factors), a primitive distribution kept closed, or an opaque measure
//! (plates, chains, measure-valued parameters) that is never eliminated. Factors remember
//! where they came from ([`Origin`]), so a variable whose density was opened but not
//! recognised can be printed back over its original primitive.
//!
//! Plates (Fig. 4's accumulator `B`) are binds over [`Base::Array`]: an array variable
//! whose elements are independent draws from a base that may mention the index; a
//! factor over such a variable is an ordinary `product i from 0 to n: ..` term, so
//! factors need no dimensions of their own.
//!
//! This file holds data and the bookkeeping on it (which factors mention a variable,
//! substitution into a whole term); it decides nothing about meaning.

use rustc_hash::FxHashMap;

use slic_algebra::vars;
use slic_algebra::{Store, TermId, VarId};

/// The base measure a variable ranges over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// Lebesgue measure on the open interval `(lo, hi)` (real terms; `None` infinite).
    /// The variable is real, or prob when `lo >= 0`.
    Lebesgue {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
    /// Counting measure on the integers `lo <= k < hi` (int terms; `None` infinite).
    /// The variable is int, or nat when `lo >= 0`.
    Counting {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
    /// A primitive distribution (a `Node::Dist` term other than lebesgue and counting)
    /// whose density has not been opened into factors.
    Prim(TermId),
    /// Any other measure: drawn as it is, never opened or eliminated.
    Opaque(TermId),
    /// An array of `size` elements, element `index` drawn from `elem` (which may mention
    /// `index`), independently: the product measure of a `plate` (Fig. 4 and eq. (18)).
    /// `index` is bound here only.
    Array {
        index: VarId,
        size: TermId,
        elem: Box<Base>,
    },
}

impl Base {
    /// The terms this base mentions (its bounds or its measure term).
    pub(crate) fn terms(&self) -> Vec<TermId> {
        match self {
            Base::Lebesgue { lo, hi } | Base::Counting { lo, hi } => {
                lo.iter().chain(hi.iter()).copied().collect()
            }
            Base::Prim(t) | Base::Opaque(t) => vec![*t],
            Base::Array { size, elem, .. } => {
                let mut ts = vec![*size];
                ts.extend(elem.terms());
                ts
            }
        }
    }

    pub(crate) fn map(&self, f: &mut dyn FnMut(TermId) -> TermId) -> Base {
        match self {
            Base::Lebesgue { lo, hi } => Base::Lebesgue {
                lo: lo.map(&mut *f),
                hi: hi.map(&mut *f),
            },
            Base::Counting { lo, hi } => Base::Counting {
                lo: lo.map(&mut *f),
                hi: hi.map(&mut *f),
            },
            Base::Prim(t) => Base::Prim(f(*t)),
            Base::Opaque(t) => Base::Opaque(f(*t)),
            Base::Array { index, size, elem } => Base::Array {
                index: *index,
                size: f(*size),
                elem: Box::new(elem.map(f)),
            },
        }
    }
}

/// `var <~ base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bind {
    pub var: VarId,
    pub base: Base,
}

/// Where a factor came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The density of `var`'s primitive `dist`, opened into a factor and not changed
    /// since: if `var` is not recognised it can be drawn from `dist` again.
    Prior { var: VarId, dist: TermId },
    /// Anything else (weights, observations, integrals, changed priors).
    Other,
}

/// A prob-valued factor of a term's integrand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Factor {
    pub term: TermId,
    pub origin: Origin,
}

impl Factor {
    pub(crate) fn other(term: TermId) -> Factor {
        Factor {
            term,
            origin: Origin::Other,
        }
    }
}

/// `∫_{binds} [guards] Π factors · h(result)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LTerm {
    pub binds: Vec<Bind>,
    pub factors: Vec<Factor>,
    /// Bool terms; the integrand is zero where one is false.
    pub guards: Vec<TermId>,
    pub result: TermId,
}

/// A sum of terms (empty: the zero measure).
pub(crate) type Lin = Vec<LTerm>;

impl LTerm {
    /// `h(result)` alone.
    pub(crate) fn ret(result: TermId) -> LTerm {
        LTerm {
            binds: Vec::new(),
            factors: Vec::new(),
            guards: Vec::new(),
            result,
        }
    }

    /// This term followed by `next` (the monadic bind of two terms): binds, factors and
    /// guards concatenated, `next`'s result.
    pub(crate) fn then(&self, next: &LTerm) -> LTerm {
        let mut t = self.clone();
        t.binds.extend(next.binds.iter().cloned());
        t.factors.extend(next.factors.iter().copied());
        t.guards.extend(next.guards.iter().copied());
        t.result = next.result;
        t
    }

    /// The factors and guards that mention `x`, taken out of this term (the integrand
    /// of `x`), the rest left in place.
    pub(crate) fn take_mentioning(
        &mut self,
        store: &Store,
        x: VarId,
    ) -> (Vec<Factor>, Vec<TermId>) {
        let (mine, others): (Vec<Factor>, Vec<Factor>) = self
            .factors
            .iter()
            .partition(|f| vars::mentions(store, f.term, x));
        let (my_guards, other_guards): (Vec<TermId>, Vec<TermId>) = self
            .guards
            .iter()
            .partition(|&&g| vars::mentions(store, g, x));
        self.factors = others;
        self.guards = other_guards;
        (mine, my_guards)
    }

    /// The factor of `var`'s own prior among `fs` (its term and distribution), if any.
    pub(crate) fn prior_of(fs: &[Factor], var: VarId) -> Option<(TermId, TermId)> {
        fs.iter().find_map(|f| match f.origin {
            Origin::Prior { var: v, dist } if v == var => Some((f.term, dist)),
            _ => None,
        })
    }

    /// Does the law of a draw after the one at `i` read its variable `x`?
    pub(crate) fn read_later(&self, store: &Store, i: usize, x: VarId) -> bool {
        self.binds[i + 1..]
            .iter()
            .any(|b| b.base.terms().iter().any(|&m| vars::mentions(store, m, x)))
    }

    pub(crate) fn bound_vars(&self) -> Vec<VarId> {
        self.binds.iter().map(|b| b.var).collect()
    }

    /// Every variable of `map` replaced in bases, factors, guards and the result. A prior
    /// factor stays the prior of its variable (with its distribution's parameters
    /// substituted) unless that variable itself was replaced.
    pub(crate) fn substitute(&mut self, store: &mut Store, map: &FxHashMap<VarId, TermId>) {
        if map.is_empty() {
            return;
        }
        for b in &mut self.binds {
            b.base = b.base.map(&mut |t| vars::substitute(store, t, map));
        }
        for f in &mut self.factors {
            let new = vars::substitute(store, f.term, map);
            if new == f.term {
                continue;
            }
            // the density of `dist` at `var` is still that, with `dist`'s parameters
            // substituted, unless `var` itself was replaced
            f.origin = match f.origin {
                Origin::Prior { var, dist } if !map.contains_key(&var) => Origin::Prior {
                    var,
                    dist: vars::substitute(store, dist, map),
                },
                _ => Origin::Other,
            };
            f.term = new;
        }
        for g in &mut self.guards {
            *g = vars::substitute(store, *g, map);
        }
        self.result = vars::substitute(store, self.result, map);
    }
}
