//! Arrays in steps 2 and 3 (sections 3.3-3.4 of the arrays paper): integrating out an
//! array drawn by a plate of symbolic size, and recognising an array's density as a
//! plate.
//!
//! Both reduce to the scalar machinery through *unproduct* (`slic_algebra::unproduct`):
//! the factors that mention the array `X` (size `n`) are written `e' · Π_i g(i, X[i])`.
//! When `e'` no longer mentions `X`, the integral over `X` is `Π_i ∫ g(i, ξ) dξ` (eq.
//! (22)): a one-element problem, solved by the scalar `integrate_out` with the index `i`
//! drawn from `counting` on `0..n` so that its range is known; and the density of `X` is
//! the plate of the one-element recognition (`X <~ plate i of n: m(i)`), whose weight
//! becomes `product i from 0 to n: w(i)`. Where unproduct cannot split the factors, the
//! array stays drawn as it was, with its factors as weights: never a wrong answer.

use rustc_hash::FxHashMap;

use slic_algebra::assume::Context;
use slic_algebra::vars;
use slic_algebra::{canon, unproduct, Node, Prim, TermId, Type, VarId};

use crate::lin::{Base, Bind, Factor, LTerm, Origin};
use crate::{terms, Simp};

/// Why an array could not be factored element by element (a note in the user's words).
const NOT_ELEMENTWISE: &str =
    "its factors could not be split into one factor per element (it is used at several indices at once)";

impl Simp<'_> {
    /// The `j`-th bind of `t`, an array whose elements' law depends on `x`, opened: its
    /// elements' densities become the factor `product i from 0 to n: f(X[i])` and bounds
    /// that mention `x` become indicator factors, so that they join `x`'s integrand.
    pub(crate) fn open_array(&mut self, t: &mut LTerm, j: usize, x: VarId) -> Result<(), String> {
        let b = t.binds[j].clone();
        let Base::Array { index, size, elem } = b.base else {
            return Err("a later draw that depends on it is not an array".to_string());
        };
        if vars::mentions(self.store, size, x) {
            return Err("the size of a later plate depends on it".to_string());
        }
        let y = b.var;
        let yt = self.store.var_term(y);
        let ity = match self.store.var_type(y) {
            Type::Array(e) => (**e).clone(),
            _ => return Err("a later plate is not an array".to_string()),
        };
        let it = self.store.var_term(index);
        let yi = self.store.intern(Node::Index(yt, it), ity.clone());
        let zero = terms::int(self.store, 0, &Type::Nat);
        let opened = match *elem {
            Base::Prim(d) => {
                let eta = self.store.fresh_var("e", ity.clone());
                let (base, f) = self.dens.open(self.store, d, eta).ok_or_else(|| {
                    "a later plate draws from a law with no known density".to_string()
                })?;
                if let Some(f) = f {
                    let f = vars::substitute1(self.store, f, eta, yi);
                    let p = self
                        .store
                        .intern(Node::Product(index, zero, size, f), Type::Prob);
                    let mty = self.store.ty(d).clone();
                    let aty = mty
                        .measure_of()
                        .map(|e| Type::measure(Type::array(e.clone())))
                        .unwrap_or(mty);
                    let dist = self.store.intern(Node::Plate(index, size, d), aty);
                    t.factors.push(Factor {
                        term: p,
                        origin: Origin::Prior { var: y, dist },
                    });
                }
                base
            }
            b @ (Base::Lebesgue { .. } | Base::Counting { .. }) => b,
            _ => return Err("a later plate that depends on it has no known density".to_string()),
        };
        let (discrete, lo, hi) = match opened {
            Base::Lebesgue { lo, hi } => (false, lo, hi),
            Base::Counting { lo, hi } => (true, lo, hi),
            _ => return Err("a later plate that depends on it has no known support".to_string()),
        };
        let mut bound = |lo_side: bool, e: Option<TermId>, t: &mut LTerm| -> Option<TermId> {
            let e = e?;
            if !vars::mentions(self.store, e, x) {
                return Some(e);
            }
            let c = if lo_side {
                let op = if discrete { Prim::Le } else { Prim::Lt };
                terms::compare(self.store, op, e, yi)
            } else {
                terms::compare(self.store, Prim::Lt, yi, e)
            };
            let ind = terms::indicator(self.store, c);
            let p = self
                .store
                .intern(Node::Product(index, zero, size, ind), Type::Prob);
            t.factors.push(Factor::other(p));
            None
        };
        let lo = bound(true, lo, t);
        let hi = bound(false, hi, t);
        let elem = if discrete {
            Base::Counting { lo, hi }
        } else {
            Base::Lebesgue { lo, hi }
        };
        t.binds[j].base = Base::Array {
            index,
            size,
            elem: Box::new(elem),
        };
        Ok(())
    }

    /// The `i`-th bind of `t`, an array, integrated out element by element (eq. (22)).
    pub(crate) fn integrate_out_array(
        &mut self,
        t: &LTerm,
        i: usize,
    ) -> Result<Option<LTerm>, String> {
        let Base::Array { index, size, elem } = t.binds[i].base.clone() else {
            return Err("it is not an array".to_string());
        };
        let x = t.binds[i].var;
        let mut t2 = t.clone();
        self.open_dependents(&mut t2, i, x)?;
        t2.binds.remove(i);
        let (mine, my_guards) = t2.take_mentioning(self.store, x);
        let mut fs: Vec<TermId> = mine.iter().map(|f| f.term).collect();
        for g in my_guards {
            fs.push(terms::indicator(self.store, g));
        }
        let ctx = self.facts(&t2, true);
        let (rest, index2, xi, g) = if fs.is_empty() {
            // nothing but the prior: each element integrates to its mass
            let one = terms::int(self.store, 1, &Type::Prob);
            let i2 = self.store.fresh_var("i", Type::Nat);
            let ety = match self.store.var_type(x) {
                Type::Array(e) => (**e).clone(),
                _ => return Err("it is not an array".to_string()),
            };
            let xi = self.store.fresh_var("x", ety);
            (one, i2, xi, one)
        } else {
            let f = terms::product(self.store, fs);
            // densities just opened hold `(array i of n: e)[k]` and sums to close
            let f = crate::prepare::reduce(self.store, f);
            let f = canon::canonicalize(self.store, &ctx, f);
            let u = unproduct::unproduct(self.store, &ctx, f, x, size)
                .ok_or_else(|| NOT_ELEMENTWISE.to_string())?;
            if vars::mentions(self.store, u.rest, x) {
                return Err(NOT_ELEMENTWISE.to_string());
            }
            (u.rest, u.index, u.elem, u.body)
        };
        // the one-element problem: i2 <~ counting on 0..n (its range), ξ <~ elem(i2)
        let it2 = self.store.var_term(index2);
        let elem2 = elem.map(&mut |e| vars::substitute1(self.store, e, index, it2));
        let zero = terms::int(self.store, 0, &Type::Nat);
        let unit = self.store.intern(Node::Unit, Type::Unit);
        let kept = t2.guards.len();
        let one_elem = LTerm {
            binds: vec![
                Bind {
                    var: index2,
                    base: Base::Counting {
                        lo: Some(zero),
                        hi: Some(size),
                    },
                },
                Bind {
                    var: xi,
                    base: elem2,
                },
            ],
            factors: vec![Factor::other(g)],
            guards: t2.guards.clone(),
            result: unit,
        };
        let done = match self.integrate_out(&one_elem, 1)? {
            Some(d) => d,
            None => return Err("one element of it has a zero integral".to_string()),
        };
        if done.binds.len() != 1 {
            return Err("one element of it could not be integrated out".to_string());
        }
        let mut per: Vec<TermId> = done.factors.iter().map(|f| f.term).collect();
        for &gd in done.guards.iter().skip(kept) {
            per.push(terms::indicator(self.store, gd));
        }
        let w = terms::product(self.store, per);
        let inside = ctx.enter_index(self.store, index2, size);
        let w = canon::canonicalize(self.store, &inside, w);
        if vars::mentions(self.store, w, xi) {
            return Err("its integral could not be written without it".to_string());
        }
        let p = self
            .store
            .intern(Node::Product(index2, zero, size, w), Type::Prob);
        let p = slic_algebra::sums::simplify_loops(self.store, &ctx, p);
        t2.factors.push(Factor::other(p));
        if terms::lit_value(self.store, rest).is_none_or(|v| !v.is_one()) {
            t2.factors.push(Factor::other(rest));
        }
        Ok(Some(t2))
    }

    /// The bind of the array `x` (base `Array { index, size, elem }`) around `inner`, its
    /// factors `mine` and guards `gmine` recognised element by element where unproduct
    /// splits them: `x <~ plate i of n: m(i)` with the elements' weights as one
    /// `product` joining `pool`. Else the plate as drawn, with the factors as weights.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit_array(
        &mut self,
        b: &Bind,
        mine: Vec<Factor>,
        gmine: Vec<TermId>,
        inner: TermId,
        pool: &mut Vec<Factor>,
        ctx: &Context,
        mty: &Type,
    ) -> TermId {
        let x = b.var;
        let Base::Array { index, size, elem } = b.base.clone() else {
            return inner;
        };
        let ety = match self.store.var_type(x) {
            Type::Array(e) => (**e).clone(),
            _ => return inner,
        };
        let prior = LTerm::prior_of(&mine, x);
        // the plate's own prior and nothing else: the plate as written
        if let Some((_, dist)) = prior {
            if mine.len() == 1 && gmine.is_empty() {
                return self.bind(x, dist, inner);
            }
        }
        if mine.is_empty() && gmine.is_empty() {
            if let Some(m) = self.elem_plate(index, size, &elem, &ety) {
                return self.bind(x, m, inner);
            }
        }
        if let Some(m) = self.recognise_array(x, index, size, &elem, &ety, &mine, &gmine, pool, ctx)
        {
            return self.bind(x, m, inner);
        }
        // as drawn: the prior's plate (its density dropped) or the base's plate, weighted
        let (m, skip) = match prior {
            Some((pf, dist)) => (Some(dist), Some(pf)),
            None => (self.elem_plate(index, size, &elem, &ety), None),
        };
        let fs: Vec<TermId> = mine
            .iter()
            .map(|f| f.term)
            .filter(|&f| Some(f) != skip)
            .collect();
        let body = self.wrap(fs, gmine, inner, mty);
        match m {
            Some(m) => self.bind(x, m, body),
            None => body,
        }
    }

    /// `plate i of n: m` where `m` is the measure the element base `elem` draws from.
    fn elem_plate(
        &mut self,
        index: VarId,
        size: TermId,
        elem: &Base,
        ety: &Type,
    ) -> Option<TermId> {
        let emty = Type::measure(ety.clone());
        let m = match elem {
            Base::Prim(d) | Base::Opaque(d) => *d,
            Base::Lebesgue { .. } | Base::Counting { .. } => {
                let xi = self.store.fresh_var("x", ety.clone());
                let xt = self.store.var_term(xi);
                let ret = self.store.intern(Node::Dirac(xt), emty.clone());
                self.over_base(xi, elem, Vec::new(), Vec::new(), ret, &emty)
            }
            Base::Array {
                index: j,
                size: n,
                elem: e,
            } => {
                let inner_ty = match ety {
                    Type::Array(t) => (**t).clone(),
                    _ => return None,
                };
                self.elem_plate(*j, *n, e, &inner_ty)?
            }
        };
        let aty = Type::measure(Type::array(ety.clone()));
        Some(self.store.intern(Node::Plate(index, size, m), aty))
    }

    /// The plate `x` is drawn from, recognised element by element (see [`Self::emit_array`]).
    #[allow(clippy::too_many_arguments)]
    fn recognise_array(
        &mut self,
        x: VarId,
        index: VarId,
        size: TermId,
        elem: &Base,
        ety: &Type,
        mine: &[Factor],
        gmine: &[TermId],
        pool: &mut Vec<Factor>,
        ctx: &Context,
    ) -> Option<TermId> {
        let prior = LTerm::prior_of(mine, x);
        let mut fs: Vec<TermId> = mine
            .iter()
            .filter(|f| Some(f.term) != prior.map(|p| p.0))
            .map(|f| f.term)
            .collect();
        for &g in gmine {
            fs.push(terms::indicator(self.store, g));
        }
        let f = terms::product(self.store, fs);
        let u = unproduct::unproduct(self.store, ctx, f, x, size);
        let (rest, i2, xi, g) = match u {
            Some(u) if !vars::mentions(self.store, u.rest, x) => (u.rest, u.index, u.elem, u.body),
            Some(_) => return None,
            None if terms::lit_value(self.store, f).is_some() => {
                let i2 = self.store.fresh_var("i", Type::Nat);
                let xi = self.store.fresh_var("x", ety.clone());
                (f, i2, xi, terms::int(self.store, 1, &Type::Prob))
            }
            None => return None,
        };
        let it2 = self.store.var_term(i2);
        let mut map = FxHashMap::default();
        map.insert(index, it2);
        // the element's base and factors: the prior's element law where there is one
        let mut efs = vec![Factor::other(g)];
        let ebase = match prior {
            Some((_, dist)) => {
                let Node::Plate(j, _, d) = *self.store.node(dist) else {
                    return None;
                };
                let d = vars::substitute1(self.store, d, j, it2);
                let (base, pf) = self.dens.open(self.store, d, xi)?;
                if let Some(pf) = pf {
                    efs.push(Factor {
                        term: pf,
                        origin: Origin::Prior { var: xi, dist: d },
                    });
                }
                base
            }
            None => elem.map(&mut |e| vars::substitute(self.store, e, &map)),
        };
        let emty = Type::measure(ety.clone());
        let xt = self.store.var_term(xi);
        let ret = self.store.intern(Node::Dirac(xt), emty.clone());
        let inside = ctx.enter_index(self.store, i2, size);
        let mut epool = Vec::new();
        let mut eguards = Vec::new();
        let eb = Bind {
            var: xi,
            base: ebase,
        };
        let m = self.emit(
            &eb,
            efs,
            Vec::new(),
            ret,
            &mut epool,
            &mut eguards,
            &inside,
            &emty,
        );
        let mut per: Vec<TermId> = epool.iter().map(|f| f.term).collect();
        for g in eguards {
            per.push(terms::indicator(self.store, g));
        }
        if !per.is_empty() {
            let w = terms::product(self.store, per);
            let w = canon::canonicalize(self.store, &inside, w);
            let zero = terms::int(self.store, 0, &Type::Nat);
            let p = self
                .store
                .intern(Node::Product(i2, zero, size, w), Type::Prob);
            let p = slic_algebra::sums::simplify_loops(self.store, ctx, p);
            pool.push(Factor::other(p));
        }
        if terms::lit_value(self.store, rest).is_none_or(|v| !v.is_one()) {
            pool.push(Factor::other(rest));
        }
        let aty = Type::measure(Type::array(ety.clone()));
        Some(self.store.intern(Node::Plate(i2, size, m), aty))
    }
}
