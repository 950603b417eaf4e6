//! The densities of the primitive distributions, as terms: what `integrate` writes when it
//! opens a primitive into a base measure and a factor (`x <~ normal(m, s)` is
//! `x <~ lebesgue(-∞, ∞)` weighted by the normal density at `x`), and what `observe` of a
//! primitive weights by.
//!
//! The densities are the one table of `slic_holonomic::family::table` (written in the
//! language itself, shared with recognition), loaded once per simplification. Densities are
//! with respect to lebesgue measure (continuous primitives) or counting measure (discrete
//! ones) and agree with the reference interpreter (`dist.rs`), including its support
//! conventions: `observe` of a value outside a bounded support weighs 0, through a guard.
//!
//! It must not simplify anything: the caller canonicalises.

use slic_algebra::vars;
use slic_algebra::{Dist, Node, Prim, Store, TermId, Type, VarId};

use crate::lin::Base;
use crate::terms;

/// The density table loaded into one store.
pub(crate) struct Densities {
    /// `(dist, [x, p1, ...], body)`.
    rows: Vec<(Dist, Vec<VarId>, TermId)>,
}

impl Densities {
    /// Loads the primitives' rows of the table. The table is fixed text, so a failure is
    /// a bug; it leaves that row out (the primitive then stays closed: never a wrong
    /// answer).
    pub(crate) fn new(store: &mut Store) -> Densities {
        let mut rows = Vec::new();
        for d in Dist::ALL {
            if let Some((params, body)) = slic_holonomic::family::table::primitive(store, d) {
                rows.push((d, params, body));
            }
        }
        Densities { rows }
    }

    /// The density of the primitive `d(args)` at `x` (a term of its support type).
    fn at(&self, store: &mut Store, d: Dist, args: &[TermId], x: TermId) -> Option<TermId> {
        let (_, params, body) = self.rows.iter().find(|r| r.0 == d)?;
        if params.len() != args.len() + 1 {
            return None;
        }
        let mut map = rustc_hash::FxHashMap::default();
        let (first, rest) = params.split_first()?;
        map.insert(*first, x);
        for (p, a) in rest.iter().zip(args) {
            map.insert(*p, *a);
        }
        let body = vars::freshen(store, *body);
        Some(vars::substitute(store, body, &map))
    }

    /// Opening the primitive measure term `dist` bound to `var`: the base measure and the
    /// density factor (`None` for the base measures themselves: lebesgue and counting
    /// have density 1 on their base).
    pub(crate) fn open(
        &self,
        store: &mut Store,
        dist: TermId,
        var: VarId,
    ) -> Option<(Base, Option<TermId>)> {
        let Node::Dist(d, args) = store.node(dist).clone() else {
            return None;
        };
        let x = store.var_term(var);
        let zero_real = terms::int(store, 0, &Type::Real);
        let one_real = terms::int(store, 1, &Type::Real);
        let zero_int = terms::int(store, 0, &Type::Int);
        let base = match d {
            Dist::Lebesgue => {
                let lo = args.first().copied().and_then(|t| finite(store, t));
                let hi = args.get(1).copied().and_then(|t| finite(store, t));
                return Some((Base::Lebesgue { lo, hi }, None));
            }
            Dist::Counting => return Some((Base::Counting { lo: None, hi: None }, None)),
            Dist::Normal => Base::Lebesgue { lo: None, hi: None },
            Dist::Uniform => Base::Lebesgue {
                lo: args.first().copied(),
                hi: args.get(1).copied(),
            },
            Dist::Gamma => Base::Lebesgue {
                lo: Some(zero_real),
                hi: None,
            },
            Dist::Beta => Base::Lebesgue {
                lo: Some(zero_real),
                hi: Some(one_real),
            },
            Dist::Poisson => Base::Counting {
                lo: Some(zero_int),
                hi: None,
            },
            Dist::Categorical => {
                let w = *args.first()?;
                let n = store.prim(Prim::Size, vec![w], Type::Nat);
                // `size(array i of m: ..)` is m: the bound that facts about the value
                // are decided against (`z < size(as)` for `categorical(array i of
                // size(as): ..)`)
                let n = crate::prepare::reduce(store, n);
                let n = terms::coerce(store, n, &Type::Int);
                Base::Counting {
                    lo: Some(zero_int),
                    hi: Some(n),
                }
            }
        };
        let f = self.at(store, d, &args, x)?;
        Some((base, Some(f)))
    }

    /// `observe(dist, v)`: the density factor and the guards saying `v` is in the
    /// support (closed intervals, as the interpreter reads them).
    pub(crate) fn observe(
        &self,
        store: &mut Store,
        dist: TermId,
        v: TermId,
    ) -> Option<(Option<TermId>, Vec<TermId>)> {
        let Node::Dist(d, args) = store.node(dist).clone() else {
            return None;
        };
        let mut guards = Vec::new();
        let mut within = |store: &mut Store, lo: Option<TermId>, hi: Option<TermId>| {
            if let Some(lo) = lo {
                guards.push(terms::compare(store, Prim::Le, lo, v));
            }
            if let Some(hi) = hi {
                guards.push(terms::compare(store, Prim::Le, v, hi));
            }
        };
        let f = match d {
            Dist::Lebesgue => {
                let lo = args.first().copied().and_then(|t| finite(store, t));
                let hi = args.get(1).copied().and_then(|t| finite(store, t));
                within(store, lo, hi);
                None
            }
            Dist::Counting => None,
            Dist::Uniform => {
                within(store, args.first().copied(), args.get(1).copied());
                Some(self.at(store, d, &args, v)?)
            }
            Dist::Beta => {
                let one = terms::int(store, 1, &Type::Prob);
                within(store, None, Some(one));
                Some(self.at(store, d, &args, v)?)
            }
            Dist::Categorical => {
                let w = *args.first()?;
                let n = store.prim(Prim::Size, vec![w], Type::Nat);
                guards.push(terms::compare(store, Prim::Lt, v, n));
                Some(self.at(store, d, &args, v)?)
            }
            Dist::Normal | Dist::Gamma | Dist::Poisson => Some(self.at(store, d, &args, v)?),
        };
        Some((f, guards))
    }
}

/// The most items a literal array read at a symbolic index is unfolded into cases.
const CASES_MAX: usize = 8;

/// `f` with every read `[a0, a1, ..][v]` of a short literal array at an index `v` that
/// mentions the loop index `i` written `if v == 0: a0 else: if v == 1: a1 .. else:
/// a_last`: equal wherever the read is in range (out of range it is an error), and inside
/// a plate's product a two-way choice the loop rules of `sums` close into powers of
/// counts (`Π_i [1 - z, z][x[i]]` is `z^k (1 - z)^(n - k)`).
pub(crate) fn literal_reads_as_cases(store: &mut Store, f: TermId, i: VarId) -> TermId {
    let node = store.node(f).clone();
    if let Node::Index(a, v) = node {
        if vars::mentions(store, v, i) {
            if let Node::ArrayLit(items) = store.node(a).clone() {
                if (2..=CASES_MAX).contains(&items.len()) {
                    let ty = store.ty(f).clone();
                    let vty = store.ty(v).clone();
                    let mut acc = items[items.len() - 1];
                    for (k, &item) in items.iter().enumerate().rev().skip(1) {
                        let kt = terms::int(store, k as i64, &vty);
                        let c = store.prim(Prim::Eq, vec![v, kt], Type::Bool);
                        acc = store.intern(Node::If(c, item, acc), ty.clone());
                    }
                    return acc;
                }
            }
        }
    }
    let ch = node.children();
    if ch.is_empty() {
        return f;
    }
    let new: Vec<TermId> = ch
        .iter()
        .map(|&c| literal_reads_as_cases(store, c, i))
        .collect();
    if new == ch {
        return f;
    }
    let ty = store.ty(f).clone();
    store.intern(node.with_children(&new), ty)
}

/// A lebesgue bound, or `None` when it is `∞` or `-∞` (literally).
fn finite(store: &Store, t: TermId) -> Option<TermId> {
    let mut x = t;
    loop {
        match store.node(x) {
            Node::Coerce(_, a) => x = *a,
            Node::Prim(Prim::Neg, a) if a.len() == 1 => x = a[0],
            Node::Prim(Prim::Infinity, _) => return None,
            _ => return Some(t),
        }
    }
}
