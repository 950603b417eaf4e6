//! Step 3 of the simplifier, recognition back (the inverse of `integrate`): a [`Lin`] to
//! a measure term, in the input's bind order (as in eq. (4) of the arrays paper).
//!
//! Each term is rebuilt from its last bind to its first. The factors that mention the
//! bind's variable (and, by then, no later one) are its density: `slic_holonomic::
//! recognise` names the distribution and gives a weight free of the variable, which
//! joins the factors of the earlier binds; the variable is drawn from the recognised
//! primitive (through the affine map the recognition gives, `x = shift + scale·u`).
//! A variable whose factors are not recognised is drawn from its original primitive
//! with the rest as a weight, or, if that primitive is gone, from lebesgue/counting
//! with its density as a weight: never a wrong answer. Terms become a superposition;
//! terms that are point masses on `0..n` with constant weights become one
//! `categorical`; terms under complementary conditions on the parameters become nested
//! `if`s.
//!
//! [`cost`] ranks outputs (random draws first, then weights on drawn variables, then
//! structural size), so the simplifier can keep the input's form when improving did not
//! pay.

use rustc_hash::FxHashSet;

use slic_algebra::assume::Context;
use slic_algebra::num::Rational;
use slic_algebra::vars;
use slic_algebra::{alpha, canon, cond, cost, Dist, Node, Prim, Store, TermId, Type, VarId};
use slic_holonomic::Recognised;

use crate::lin::{Base, Bind, Factor, LTerm, Lin};
use crate::support;
use crate::{prepare, terms, Simp};

/// How many conditions deep [`Simp::decision_tree`] nests.
const MAX_TREE_DEPTH: usize = 16;

/// The largest value a categorical recombination reaches.
const CATEGORICAL_MAX: i64 = 64;

impl Simp<'_> {
    /// The measure of type `measure(elem)` that `lin` means.
    pub(crate) fn rebuild(&mut self, lin: &Lin, elem: &Type) -> TermId {
        let mty = Type::measure(elem.clone());
        if let Some(m) = self.categorical_of(lin, elem) {
            return m;
        }
        let mut parts: Vec<(Vec<TermId>, TermId)> = Vec::new();
        for t in lin {
            let (guards, m) = self.rebuild_term(t, &mty);
            if !matches!(self.store.node(m), Node::Reject) {
                parts.push((guards, m));
            }
        }
        self.decision_tree(parts, &mty, 0)
    }

    /// Terms under conditions on the parameters, as nested `if`s where the conditions
    /// split them cleanly (`if c: m1 else: m2`), else as a superposition of
    /// `if guards: m else: reject`.
    fn decision_tree(
        &mut self,
        parts: Vec<(Vec<TermId>, TermId)>,
        mty: &Type,
        depth: usize,
    ) -> TermId {
        let first_guard = parts.iter().find_map(|(g, _)| g.first().copied());
        if let Some(g) = first_guard.filter(|_| depth < MAX_TREE_DEPTH) {
            let ng = cond::negate(self.store, g);
            let (mut yes, mut no) = (Vec::new(), Vec::new());
            let mut clean = true;
            for (gs, m) in &parts {
                if gs.contains(&g) {
                    yes.push((gs.iter().copied().filter(|&x| x != g).collect(), *m));
                } else if gs.contains(&ng) {
                    no.push((gs.iter().copied().filter(|&x| x != ng).collect(), *m));
                } else {
                    clean = false;
                    break;
                }
            }
            if clean {
                let a = self.decision_tree(yes, mty, depth + 1);
                let b = self.decision_tree(no, mty, depth + 1);
                // equal branches (issue 14): the condition decides nothing, whatever the
                // branches' bound variables are named
                if alpha::alpha_eq(self.store, a, b) {
                    return a;
                }
                // positive conditions read better: `if c: ... else: ...`, not `if not(c)`
                let negative = matches!(
                    self.store.node(g),
                    Node::Prim(Prim::Not, _) | Node::Prim(Prim::Ne, _)
                );
                return if negative {
                    self.store.intern(Node::If(ng, b, a), mty.clone())
                } else {
                    self.store.intern(Node::If(g, a, b), mty.clone())
                };
            }
        }
        let mut ms: Vec<TermId> = Vec::new();
        for (gs, m) in parts {
            let m = self.guarded(gs, m, mty);
            match self.store.node(m) {
                Node::Reject => {}
                Node::Superpose(xs) => ms.extend(xs.clone()),
                _ => ms.push(m),
            }
        }
        match ms.len() {
            0 => self.store.intern(Node::Reject, mty.clone()),
            1 => ms[0],
            _ => self.store.intern(Node::Superpose(ms), mty.clone()),
        }
    }

    /// Point masses on integers with constant weights: `weight(Σw, categorical([w0,
    /// ...]))` for nat values from 0, else (int values, or nat values whose array from 0
    /// would be mostly zeros: a counting variable on `lo..hi`, issue 14) the categorical
    /// shifted by the least value `lo`: `k <~ categorical(..); return k + lo`.
    fn categorical_of(&mut self, lin: &Lin, elem: &Type) -> Option<TermId> {
        if !matches!(elem, Type::Nat | Type::Int) || lin.len() < 2 {
            return None;
        }
        let mut points: Vec<(i64, TermId)> = Vec::new();
        for t in lin {
            if !t.binds.is_empty() || !t.guards.is_empty() {
                return None;
            }
            let k = terms::lit_value(self.store, t.result)?.to_i64()?;
            let fs = t.factors.iter().map(|f| f.term).collect();
            points.push((k, terms::product(self.store, fs)));
        }
        let least = points.iter().map(|p| p.0).min()?;
        let most = points.iter().map(|p| p.0).max()?;
        // the array's length from `from`, if it is short; a long array of mostly zeros is
        // no clearer than the superposition
        let count = i64::try_from(points.len()).ok()?;
        let length = |from: i64| {
            most.checked_sub(from)
                .and_then(|d| d.checked_add(1))
                .filter(|&n| n <= CATEGORICAL_MAX && n <= 2 * count)
        };
        let offset = if *elem == Type::Nat && least >= 0 && length(0).is_some() {
            0
        } else {
            least
        };
        let mut weights: Vec<Option<TermId>> = vec![None; usize::try_from(length(offset)?).ok()?];
        for (k, w) in points {
            let slot = weights.get_mut(usize::try_from(k.checked_sub(offset)?).ok()?)?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(w);
        }
        let ctx = Context::new();
        let mut ws: Vec<TermId> = weights
            .into_iter()
            .map(|w| match w {
                Some(w) => {
                    let w = prepare::reduce(self.store, w);
                    let w = canon::canonicalize(self.store, &ctx, w);
                    canon::shift_gammas(self.store, w)
                }
                None => terms::int(self.store, 0, &Type::Prob),
            })
            .collect();
        let total = self.store.prim(Prim::Add, ws.clone(), Type::Prob);
        let raw_total = canon::canonicalize(self.store, &ctx, total);
        let total = canon::shift_gammas(self.store, raw_total);
        let total = canon::merge_radicals(self.store, total);
        // weights that are constant multiples of the total are written as those constants
        let ratios: Vec<TermId> = ws
            .iter()
            .map(|&w| {
                let inv = self.store.prim(Prim::Recip, vec![raw_total], Type::Prob);
                let r = self.store.prim(Prim::Mul, vec![w, inv], Type::Prob);
                canon::canonicalize(self.store, &ctx, r)
            })
            .collect();
        if ratios
            .iter()
            .all(|&r| terms::lit_value(self.store, r).is_some())
        {
            ws = ratios;
        } else {
            ws = self.common_denominator(ws);
        }
        // rational weights are written as coprime integers (`[1, 3]`, not `[1/4, 3/4]`):
        // categorical normalises, so any multiple means the same
        let values: Option<Vec<Rational>> = ws
            .iter()
            .map(|&w| terms::lit_value(self.store, w))
            .collect();
        if let Some(values) = values {
            let content = values.iter().fold(Rational::zero(), |g, v| g.gcd(v));
            if let Some(inv) = content.recip() {
                ws = values
                    .iter()
                    .map(|v| terms::lit(self.store, &(v * &inv), &Type::Prob))
                    .collect();
            }
        }
        let arr = self
            .store
            .intern(Node::ArrayLit(ws), Type::array(Type::Prob));
        let mut m = self.store.intern(
            Node::Dist(Dist::Categorical, vec![arr]),
            Type::measure(Type::Nat),
        );
        if offset != 0 || *elem != Type::Nat {
            // `k <~ categorical(ws); return k + offset`, in the values' type
            let k = self.store.fresh_var("k", Type::Nat);
            let kt = self.store.var_term(k);
            let kt = terms::coerce(self.store, kt, elem);
            let off = terms::int(self.store, offset, elem);
            let v = self.store.prim(Prim::Add, vec![kt, off], elem.clone());
            let v = canon::canonicalize(self.store, &ctx, v);
            let ret = self
                .store
                .intern(Node::Dirac(v), Type::measure(elem.clone()));
            m = self.bind(k, m, ret);
        }
        Some(self.weighted(total, m))
    }

    /// Categorical weights over one denominator, without it (`[a / (a + b), b / (a +
    /// b)]` is `[a, b]`): a categorical is the same for any positive multiple of its
    /// weights. Kept as they are unless no weight gets costlier (`cost::size`).
    fn common_denominator(&mut self, ws: Vec<TermId>) -> Vec<TermId> {
        let Some(&first) = ws.first() else {
            return ws;
        };
        let den = match self.store.node(first) {
            Node::Prim(Prim::Mul, xs) => xs.iter().find_map(|&x| match self.store.node(x) {
                Node::Prim(Prim::Recip, d) => d.first().copied(),
                _ => None,
            }),
            Node::Prim(Prim::Recip, d) => d.first().copied(),
            _ => None,
        };
        let Some(den) = den else {
            return ws;
        };
        // scaling by the denominator is allowed only if it is positive
        if !evidently_positive_sum(self.store, den) {
            return ws;
        }
        let ctx = Context::new();
        let mut out = Vec::with_capacity(ws.len());
        for &w in &ws {
            let p = self.store.prim(Prim::Mul, vec![w, den], Type::Prob);
            let p = canon::canonicalize(self.store, &ctx, p);
            if cost::size(self.store, p) > cost::size(self.store, w) {
                return ws;
            }
            out.push(p);
        }
        out
    }

    /// One term as a measure of type `mty`, and the conditions on the parameters under
    /// which it is that (the rest of the time it is zero).
    fn rebuild_term(&mut self, t: &LTerm, mty: &Type) -> (Vec<TermId>, TermId) {
        let mut pool: Vec<Factor> = t.factors.clone();
        let mut guards: Vec<TermId> = t.guards.clone();
        let mut inner = self.store.intern(Node::Dirac(t.result), mty.clone());
        for i in (0..t.binds.len()).rev() {
            let b = t.binds[i].clone();
            let x = b.var;
            let (mine, rest): (Vec<Factor>, Vec<Factor>) = pool
                .into_iter()
                .partition(|f| vars::mentions(self.store, f.term, x));
            pool = rest;
            let (gmine, grest): (Vec<TermId>, Vec<TermId>) = guards
                .into_iter()
                .partition(|&g| vars::mentions(self.store, g, x));
            guards = grest;
            // what is known around x: the other binds and the remaining guards
            let around = LTerm {
                binds: t.binds.iter().filter(|o| o.var != x).cloned().collect(),
                factors: Vec::new(),
                guards: guards.clone(),
                result: t.result,
            };
            let ctx = self.facts(&around, true);
            inner = self.emit(&b, mine, gmine, inner, &mut pool, &mut guards, &ctx, mty);
        }
        let fs = pool.iter().map(|f| f.term).collect();
        let m = self.wrap(fs, Vec::new(), inner, mty);
        let m = prepare::reduce(self.store, m);
        let m = canon::canonicalize(self.store, &Context::new(), m);
        let mut conds: Vec<TermId> = Vec::new();
        for g in guards {
            let g = cond::canonical(self.store, &Context::new(), g);
            match self.store.node(g).clone() {
                Node::Bool(true) => {}
                Node::Bool(false) => {
                    return (Vec::new(), self.store.intern(Node::Reject, mty.clone()))
                }
                Node::Prim(Prim::And, xs) => conds.extend(xs),
                _ => conds.push(g),
            }
        }
        conds.dedup();
        (conds, m)
    }

    /// The bind `b` around `inner`, with the factors `mine` and guards `gmine` on its
    /// variable; a recognition's weight joins `pool`, its side conditions `guards`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit(
        &mut self,
        b: &Bind,
        mine: Vec<Factor>,
        gmine: Vec<TermId>,
        inner: TermId,
        pool: &mut Vec<Factor>,
        guards: &mut Vec<TermId>,
        ctx: &Context,
        mty: &Type,
    ) -> TermId {
        let x = b.var;
        match b.base {
            Base::Array { .. } => self.emit_array(b, mine, gmine, inner, pool, ctx, mty),
            Base::Opaque(m) => {
                let m = self.opaque_measure(m);
                let fs = mine.iter().map(|f| f.term).collect();
                let body = self.wrap(fs, gmine, inner, mty);
                self.bind(x, m, body)
            }
            Base::Prim(d) if mine.is_empty() && gmine.is_empty() => self.bind(x, d, inner),
            Base::Prim(d) => {
                let mut fs: Vec<TermId> = mine.iter().map(|f| f.term).collect();
                if let Some((base, f)) = self.dens.open(self.store, d, x) {
                    fs.extend(f);
                    if let Some(iv) = self.base_interval(x, &base) {
                        if let Some(m) =
                            self.try_family(x, iv, fs, &gmine, inner, pool, guards, ctx)
                        {
                            return m;
                        }
                    }
                }
                let fs = mine.iter().map(|f| f.term).collect();
                let body = self.wrap(fs, gmine, inner, mty);
                self.bind(x, d, body)
            }
            Base::Lebesgue { .. } | Base::Counting { .. } => {
                let prior = LTerm::prior_of(&mine, x);
                if let Some((_, dist)) = prior {
                    if mine.len() == 1 && gmine.is_empty() {
                        return self.bind(x, dist, inner);
                    }
                }
                if let Some(iv) = self.base_interval(x, &b.base) {
                    let fs = mine.iter().map(|f| f.term).collect();
                    if let Some(m) = self.try_family(x, iv, fs, &gmine, inner, pool, guards, ctx) {
                        return m;
                    }
                }
                if let Some(m) =
                    self.finite_categorical(x, &b.base, &mine, &gmine, inner, pool, ctx)
                {
                    return m;
                }
                match prior {
                    Some((pf, dist)) => {
                        let fs = mine.iter().map(|f| f.term).filter(|&f| f != pf).collect();
                        let body = self.wrap(fs, gmine, inner, mty);
                        self.bind(x, dist, body)
                    }
                    None => {
                        let fs = mine.iter().map(|f| f.term).collect();
                        self.over_base(x, &b.base, fs, gmine, inner, mty)
                    }
                }
            }
        }
    }

    /// A variable counted on `0..n` whose weight `W(x)` names no family is drawn from
    /// `categorical(array k of n: W(k))`, and the total `Σ_k W(k)` joins `pool`: the same
    /// measure (a categorical with zero total is the zero measure), sampleable, and the
    /// form a Gibbs update's conditional takes.
    #[allow(clippy::too_many_arguments)]
    fn finite_categorical(
        &mut self,
        x: VarId,
        base: &Base,
        mine: &[Factor],
        gmine: &[TermId],
        inner: TermId,
        pool: &mut Vec<Factor>,
        ctx: &Context,
    ) -> Option<TermId> {
        let Base::Counting { lo, hi } = *base else {
            return None;
        };
        // the support as the base and the indicator factors on x bound it
        let mut bounds: Vec<TermId> = gmine.to_vec();
        for f in mine {
            let parts = match self.store.node(f.term) {
                Node::Prim(Prim::Mul, xs) => xs.clone(),
                _ => vec![f.term],
            };
            for p in parts {
                if let Some((c, _)) = crate::improve::guarded_factor(self.store, p) {
                    if vars::mentions(self.store, c, x) {
                        bounds.push(c);
                    }
                }
            }
        }
        let iv = support::Interval {
            discrete: true,
            lo,
            hi,
        };
        let r = support::restrict(self.store, ctx, x, iv, &bounds);
        let mut n = r.interval.hi?;
        if let Node::Coerce(slic_algebra::Coercion::Nat2Int, m) = *self.store.node(n) {
            n = m;
        }
        let starts_at_zero = match r.interval.lo {
            Some(l) => terms::lit_value(self.store, l).is_some_and(|v| v.is_zero()),
            None => *self.store.var_type(x) == Type::Nat,
        };
        if !starts_at_zero
            || *self.store.var_type(x) != Type::Nat
            || *self.store.ty(n) != Type::Nat
            || vars::mentions(self.store, n, x)
            || (mine.is_empty() && gmine.is_empty())
        {
            return None;
        }
        let mut fs: Vec<TermId> = mine.iter().map(|f| f.term).collect();
        for &g in gmine {
            fs.push(terms::indicator(self.store, g));
        }
        let w = terms::product(self.store, fs);
        let k = self
            .store
            .fresh_var(self.store.var_name(x).to_string().as_str(), Type::Nat);
        let kt = self.store.var_term(k);
        let wk = vars::substitute1(self.store, w, x, kt);
        let zero = terms::int(self.store, 0, &Type::Nat);
        let inside = Context::new().enter_index(self.store, k, n);
        let wk = canon::canonicalize(self.store, &inside, wk);
        let weights = self
            .store
            .intern(Node::Array(k, n, wk), Type::array(Type::Prob));
        let total = self.store.intern(Node::Summate(k, zero, n, wk), Type::Prob);
        let total = slic_algebra::sums::simplify_loops(self.store, &Context::new(), total);
        pool.push(Factor::other(total));
        let d = self.store.intern(
            Node::Dist(Dist::Categorical, vec![weights]),
            Type::measure(Type::Nat),
        );
        Some(self.bind(x, d, inner))
    }

    /// `x` drawn from the family its factors `fs` (on `iv`, restricted by `gmine`) are
    /// the density of, if recognised: drawn from its primitive or its standard-library
    /// definition (Student-t, negative binomial).
    #[allow(clippy::too_many_arguments)]
    fn try_family(
        &mut self,
        x: VarId,
        iv: support::Interval,
        mut fs: Vec<TermId>,
        gmine: &[TermId],
        inner: TermId,
        pool: &mut Vec<Factor>,
        guards: &mut Vec<TermId>,
        ctx: &Context,
    ) -> Option<TermId> {
        let name = self.store.var_name(x).to_string();
        if self.expired(&format!("recognising the density of {name}")) {
            return None;
        }
        let r = support::restrict(self.store, ctx, x, iv, gmine);
        if !r.possible {
            return None;
        }
        for g in &r.rest {
            fs.push(terms::indicator(self.store, *g));
        }
        let f = terms::product(self.store, fs);
        let f = canon::canonicalize(self.store, ctx, f);
        let sup = r.interval.to_support();
        let rec: Recognised = match slic_holonomic::recognise(self.store, ctx, f, x, &sup) {
            Ok(rec) => rec,
            Err(miss) => {
                let note = format!(
                    "the density of `{name}`{} is {miss}, so it stays a weight",
                    self.shown(f)
                );
                self.left.push(crate::LeftInPlace {
                    name,
                    note,
                    latent: false,
                });
                return None;
            }
        };
        if vars::mentions(self.store, rec.weight, x) {
            return None;
        }
        let d = rec.family.measure_term(self.store)?;
        let uty = terms::measure_elem(self.store, d);
        let xty = self.store.var_type(x).clone();
        pool.push(Factor::other(rec.weight));
        if let Some(g) = r.interval.nonempty(self.store, ctx) {
            guards.push(g);
        }
        if rec.map.shift.is_none() && rec.map.scale.is_none() && uty == xty {
            return Some(self.bind(x, d, inner));
        }
        let u = self.store.fresh_var(&name, uty);
        let ut = self.store.var_term(u);
        let mut value = terms::coerce(self.store, ut, &Type::Real);
        if let Some(scale) = rec.map.scale {
            let s = terms::coerce(self.store, scale, &Type::Real);
            value = self.store.prim(Prim::Mul, vec![s, value], Type::Real);
        }
        if let Some(shift) = rec.map.shift {
            let s = terms::coerce(self.store, shift, &Type::Real);
            value = self.store.prim(Prim::Add, vec![s, value], Type::Real);
        }
        let value = canon::canonicalize(self.store, ctx, value);
        let value = terms::coerce(self.store, value, &xty);
        let inner = vars::substitute1(self.store, inner, x, value);
        Some(self.bind(u, d, inner))
    }

    /// `x` drawn from lebesgue or counting on its base, weighted by `fs`, under `gs`.
    pub(crate) fn over_base(
        &mut self,
        x: VarId,
        base: &Base,
        fs: Vec<TermId>,
        gs: Vec<TermId>,
        inner: TermId,
        mty: &Type,
    ) -> TermId {
        let xty = self.store.var_type(x).clone();
        let body = self.wrap(fs, gs, inner, mty);
        match *base {
            Base::Lebesgue { lo, hi } => {
                let inf = self.store.prim(Prim::Infinity, vec![], Type::Prob);
                let inf = terms::coerce(self.store, inf, &Type::Real);
                let neg_inf = self.store.prim(Prim::Neg, vec![inf], Type::Real);
                let lo = lo.unwrap_or(neg_inf);
                let hi = hi.unwrap_or(inf);
                let leb = self.store.intern(
                    Node::Dist(Dist::Lebesgue, vec![lo, hi]),
                    Type::measure(Type::Real),
                );
                if xty == Type::Real {
                    return self.bind(x, leb, body);
                }
                let name = self.store.var_name(x).to_string();
                let r = self.store.fresh_var(&name, Type::Real);
                let rt = self.store.var_term(r);
                let val = terms::coerce(self.store, rt, &xty);
                let body = self.store.intern(Node::Let(x, val, body), mty.clone());
                self.bind(r, leb, body)
            }
            Base::Counting { lo, hi } => {
                let cnt = self
                    .store
                    .intern(Node::Dist(Dist::Counting, vec![]), Type::measure(Type::Int));
                let (k, body) = if xty == Type::Int {
                    (x, body)
                } else {
                    let name = self.store.var_name(x).to_string();
                    let k = self.store.fresh_var(&name, Type::Int);
                    let kt = self.store.var_term(k);
                    let val = terms::coerce(self.store, kt, &xty);
                    (k, self.store.intern(Node::Let(x, val, body), mty.clone()))
                };
                let kt = self.store.var_term(k);
                let mut conds = Vec::new();
                let lo = match lo {
                    Some(l) => Some(l),
                    None if xty == Type::Nat => Some(terms::int(self.store, 0, &Type::Int)),
                    None => None,
                };
                if let Some(lo) = lo {
                    conds.push(terms::compare(self.store, Prim::Le, lo, kt));
                }
                if let Some(hi) = hi {
                    conds.push(terms::compare(self.store, Prim::Lt, kt, hi));
                }
                let body = self.guarded(conds, body, mty);
                self.bind(k, cnt, body)
            }
            _ => body,
        }
    }

    /// The measure of an opaque draw, with the measures inside it simplified.
    fn opaque_measure(&mut self, m: TermId) -> TermId {
        match self.store.node(m).clone() {
            Node::Plate(i, n, body) => {
                // the body simplified only if that removes draws (observations stay
                // observations: plates are the next issue's)
                let simpler = self.measure(body);
                let body = if cost(self.store, simpler).0 < cost(self.store, body).0 {
                    simpler
                } else {
                    canon::canonicalize(self.store, &Context::new(), body)
                };
                let n = canon::canonicalize(self.store, &Context::new(), n);
                let ty = self.store.ty(m).clone();
                self.store.intern(Node::Plate(i, n, body), ty)
            }
            _ => canon::canonicalize(self.store, &Context::new(), m),
        }
    }

    /// `x <~ m; inner`, or `m` when `inner` is `return x`.
    pub(crate) fn bind(&mut self, x: VarId, m: TermId, inner: TermId) -> TermId {
        if let Node::Dirac(r) = *self.store.node(inner) {
            if matches!(self.store.node(r), Node::Var(v) if *v == x) {
                return m;
            }
        }
        let ty = self.store.ty(inner).clone();
        self.store.intern(Node::Bind(x, m, inner), ty)
    }

    /// `if guards: weight(Π fs, inner) else: reject`.
    pub(crate) fn wrap(
        &mut self,
        fs: Vec<TermId>,
        gs: Vec<TermId>,
        inner: TermId,
        mty: &Type,
    ) -> TermId {
        let w = terms::product(self.store, fs);
        let w = canon::canonicalize(self.store, &Context::new(), w);
        let body = self.weighted(w, inner);
        self.guarded(gs, body, mty)
    }

    /// `weight(w, m)`, merged with a weight at the top of `m`; `m` when `w` is 1.
    fn weighted(&mut self, w: TermId, m: TermId) -> TermId {
        let w = prepare::reduce(self.store, w);
        let w = canon::shift_gammas(self.store, w);
        let w = canon::merge_radicals(self.store, w);
        if terms::lit_value(self.store, w).is_some_and(|v| v.is_one()) {
            return m;
        }
        let ty = self.store.ty(m).clone();
        if let Node::Weight(w2, inner) = *self.store.node(m) {
            let p = self.store.prim(Prim::Mul, vec![w, w2], Type::Prob);
            let p = canon::canonicalize(self.store, &Context::new(), p);
            return self.weighted(p, inner);
        }
        if matches!(self.store.node(m), Node::Reject) {
            return m;
        }
        if terms::lit_value(self.store, w).is_some_and(|v| v.is_zero()) {
            return self.store.intern(Node::Reject, ty);
        }
        self.store.intern(Node::Weight(w, m), ty)
    }

    /// `if gs: body else: reject` (`body` when there are no guards).
    fn guarded(&mut self, gs: Vec<TermId>, body: TermId, mty: &Type) -> TermId {
        if gs.is_empty() {
            return body;
        }
        let c = cond::and(self.store, &Context::new(), gs);
        match self.store.node(c) {
            Node::Bool(true) => body,
            Node::Bool(false) => self.store.intern(Node::Reject, mty.clone()),
            _ => {
                let reject = self.store.intern(Node::Reject, mty.clone());
                self.store.intern(Node::If(c, body, reject), mty.clone())
            }
        }
    }
}

/// A prob term that is a sum or product of prob variables, `exp`, `pi` and positive
/// literals with at least one positive part: positive when prob parameters are (the
/// holonomic layer's convention: a zero scale or shape is outside every family).
fn evidently_positive_sum(store: &Store, t: TermId) -> bool {
    match store.node(t) {
        Node::Lit(v) => v.is_positive(),
        Node::Var(_) => *store.ty(t) == Type::Prob,
        Node::Prim(Prim::Exp | Prim::Pi, _) => true,
        Node::Prim(Prim::Add, xs) => xs.iter().all(|&x| evidently_positive_sum(store, x)),
        Node::Prim(Prim::Mul, xs) => xs.iter().all(|&x| evidently_positive_sum(store, x)),
        Node::Prim(Prim::Recip | Prim::Sqrt, xs) => {
            xs.iter().all(|&x| evidently_positive_sum(store, x))
        }
        Node::Prim(Prim::Pow | Prim::RealPow | Prim::NatRoot, xs) => xs
            .first()
            .is_some_and(|&x| evidently_positive_sum(store, x)),
        _ => false,
    }
}

/// How costly a rebuilt measure is: (the most random choices on one path through it,
/// the weights, conditions and draws that depend on drawn variables, its structural
/// size by `slic_algebra::cost`). Lower is better, compared in that order. A superposition is one choice and
/// then its costliest operand; a plate of literal size `n` costs `n` of its body.
pub(crate) fn cost(store: &Store, m: TermId) -> (usize, usize, u64) {
    // variables bound in the measure (the rest are parameters)
    let mut bound: FxHashSet<VarId> = FxHashSet::default();
    let mut seen = FxHashSet::default();
    let mut work = vec![m];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        if let Node::Bind(v, ..) | Node::Let(v, ..) = node {
            bound.insert(*v);
        }
        work.extend(node.children());
    }
    let mut budget = COST_BUDGET;
    let (draws, weights) = path_cost(store, m, &bound, &mut budget, 0);
    let size = if budget == 0 {
        u64::MAX
    } else {
        cost::size(store, m)
    };
    (draws, weights, size)
}

/// `(draws on the costliest path, weights on drawn variables)` of a measure term.
fn path_cost(
    store: &Store,
    t: TermId,
    bound: &FxHashSet<VarId>,
    budget: &mut usize,
    depth: usize,
) -> (usize, usize) {
    if *budget == 0 || depth > COST_DEPTH {
        *budget = 0;
        return (usize::MAX / 4, usize::MAX / 4);
    }
    *budget -= 1;
    let on_bound =
        |c: TermId| usize::from(vars::free_vars(store, c).iter().any(|v| bound.contains(v)));
    let go = |x: TermId, budget: &mut usize| {
        slic_algebra::stack::grow(|| path_cost(store, x, bound, budget, depth + 1))
    };
    match store.node(t) {
        // lebesgue and counting are no laws: drawing from one costs like a weight too
        // (so `weight(b - a, uniform(a, b))` ranks above `lebesgue(a, b)`, issue 14)
        Node::Dist(Dist::Lebesgue | Dist::Counting, _) => (1, 1),
        // a draw whose parameters depend on other draws is a conditional one: it costs
        // like a weight on them
        Node::Dist(_, args) => (1, args.iter().map(|&a| on_bound(a)).max().unwrap_or(0)),
        Node::Weight(w, inner) => {
            let (d, k) = go(*inner, budget);
            (d, k + on_bound(*w))
        }
        Node::If(c, a, b) => {
            let (da, ka) = go(*a, budget);
            let (db, kb) = go(*b, budget);
            (da.max(db), ka + kb + on_bound(*c))
        }
        Node::Bind(_, a, b) => {
            let (da, ka) = go(*a, budget);
            let (db, kb) = go(*b, budget);
            (da.saturating_add(db), ka + kb)
        }
        Node::Let(_, _, b) => go(*b, budget),
        // choosing an operand is a draw too
        Node::Superpose(ms) => {
            let mut out = (0, 0);
            for &mi in ms {
                let (d, k) = go(mi, budget);
                out = (out.0.max(d), out.1 + k);
            }
            (out.0 + 1, out.1)
        }
        Node::Plate(_, n, b) => {
            let (d, k) = go(*b, budget);
            let times = terms::lit_value(store, *n)
                .and_then(|r| r.to_i64())
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(2);
            (d.saturating_mul(times), k)
        }
        // an observation draws nothing: it weighs
        Node::Observe(..) => (0, 1),
        Node::Match(_, arms) => {
            let mut out = (0, 0);
            for (_, b) in arms {
                let (d, k) = go(*b, budget);
                out = (out.0.max(d), out.1 + k);
            }
            out
        }
        Node::Dirac(_) | Node::Reject => (0, 0),
        // anything else that is a measure (a variable, an application, a chain) is one
        // draw at least
        _ => (1, 0),
    }
}

/// How many measure nodes [`cost`] visits.
const COST_BUDGET: usize = 100_000;

/// How deep [`cost`] follows measure nesting.
const COST_DEPTH: usize = 10_000;
