//! The densities of the primitive distributions, as terms: what `integrate` writes when it
//! opens a primitive into a base measure and a factor (`x <~ normal(m, s)` is
//! `x <~ lebesgue(-∞, ∞)` weighted by the normal density at `x`), and what `observe` of a
//! primitive weights by.
//!
//! The table is written in the language itself (`#[rustfmt::skip]` below) and loaded
//! once per simplification, so each density reads as its textbook formula. Densities are
//! with respect to lebesgue measure (continuous primitives) or counting measure (discrete
//! ones) and agree with the reference interpreter (`dist.rs`), including its support
//! conventions: `observe` of a value outside a bounded support weighs 0, through a guard.
//!
//! Powers with a variable exponent are written `**` (`l ** k`, not `l ^ k`): canonical
//! forms read them as `exp(k · log l)`, whose derivative the holonomic layer knows.
//!
//! It must not simplify anything: the caller canonicalises.

use slic_algebra::vars;
use slic_algebra::{front, Dist, Node, Prim, Store, TermId, Type, VarId};

use crate::lin::Base;
use crate::terms;

/// `(distribution, fn x T: fn p1 T1: ...: density)`; parameter order as the primitive's.
#[rustfmt::skip]
const TABLE: [(Dist, &str); 6] = [
    (Dist::Normal,
     "fn x real: fn m real: fn s prob: exp(-(x - m) ^ 2 / (2 * s ^ 2)) / (s * sqrt(2 * pi))"),
    (Dist::Uniform,
     "fn x real: fn lo real: fn hi real: 1 / real2prob(hi - lo)"),
    (Dist::Gamma,
     "fn x prob: fn k prob: fn t prob: x ** (k - 1) * exp(-x / t) / (gammaFunc(k) * t ** k)"),
    (Dist::Beta,
     "fn x prob: fn a prob: fn b prob: x ** (a - 1) * real2prob(1 - x) ** (b - 1) / betaFunc(a, b)"),
    (Dist::Poisson,
     "fn k nat: fn l prob: l ** k * exp(-l) / gammaFunc(k + 1)"),
    (Dist::Categorical,
     "fn k nat: fn w array(prob): w[k] / (summate i from 0 to size(w): w[i])"),
];

/// The density table loaded into one store.
pub(crate) struct Densities {
    /// `(dist, [x, p1, ...], body)`.
    rows: Vec<(Dist, Vec<VarId>, TermId)>,
}

impl Densities {
    /// Loads the table. The table is fixed text, so a failure is a bug; it leaves that
    /// row out (the primitive then stays closed: never a wrong answer).
    pub(crate) fn new(store: &mut Store) -> Densities {
        let mut rows = Vec::new();
        for (d, text) in TABLE {
            let Ok(mut t) = front::load(store, text) else {
                continue;
            };
            let mut params = Vec::new();
            while let Node::Lam(v, body) = *store.node(t) {
                params.push(v);
                t = body;
            }
            rows.push((d, params, t));
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
