//! Step 2 of the simplifier, `improve`: rewrite each term of a [`Lin`] strategically,
//! every rewrite keeping `Σ ∫ [guards] Π factors · h(result)` unchanged for every `h`.
//!
//! In order:
//! 1. normalise: structural reductions, factors and guards canonical under what the binds
//!    of the variables they mention and the guards say (a beta draw lies in `(0, 1)`, so
//!    `p + real2prob(1 - p)` is 1); constant factors multiplied into one; a zero factor,
//!    a false guard or an empty support drops the term (`weight(0, m)` is `reject`);
//!    a factor `if c: a else: 0` (or the same `match` on a bool) is the guard `c`;
//!    guards bounding a lebesgue/counting variable become its bounds. Null sets (issue
//!    14): a guard `x == c` on a variable with a lebesgue density (c free of x and of
//!    later draws) drops the term, `x /= c` is dropped, and a factor branching on one
//!    is its branch that holds almost everywhere; never for counting or opaque draws.
//! 2. finite discrete binds (`categorical` over a literal array with a provably positive
//!    total) are summed out: one term per value, weighted by its probability. Then
//!    piecewise is split on the parameters: where two bounds of a variable are ordered
//!    only by the parameters, or its interval may be empty, the term becomes one term per
//!    case (`c <= 1` and `1 < c`); a lebesgue or counting draw between parameters
//!    (guards already read into its bounds) splits on whether its interval is empty, so
//!    that it can be named where it is not (issue 14, guards as supports). Last, sums of
//!    independent draws (`convolve.rs`, issue 14): summands of one closed family that
//!    only the result reads become one draw of their sum's law (again after step 3).
//! 3. latent variables (not in the result, not needed by an opaque draw) are integrated
//!    out: their base opened into lebesgue/counting and a density factor (later draws
//!    that depend on them opened too), the factors and guards that mention them handed
//!    to `slic_holonomic::integrate`/`sum` over the support the guards give; on success
//!    they are replaced by the integral. A draw no factor depends on is dropped (its
//!    mass is 1). Fubini: all integrands are non-negative, so binds may be integrated in
//!    any order as long as a base does not mention a variable bound later.
//! 4. change of variable: a result `a·x + b` (a a non-zero rational, x the last
//!    continuous draw) is drawn as `t = a·x + b` when that lets another variable be
//!    integrated out (case 10: the sum of two exponentials), or when `t` is then the only
//!    draw (`return 3 * x` of a normal is a normal). Where the other variable cannot be
//!    integrated out whole because the order of its bounds depends on `t` (x between
//!    `max(0, t - 1)` and `min(1, t)` for the sum of two uniforms), `t`'s range is cut
//!    where that order changes and the variable integrated out of each piece (piecewise
//!    integration, issue 14); pieces between rational bounds join into one draw of `t`
//!    weighted by the piece it is in (the triangular density; a difference of
//!    exponentials is the Laplace, half an exponential each side of 0). Where it does not apply, a result
//!    that is a chain of monotone maps of one continuous draw (`exp(-x)`, `-log(u)`,
//!    `1 / g`, `z ^ 2` folded onto `|z|`) is drawn itself with the exact Jacobian
//!    (`monotone.rs`, issue 14), so that rebuild can name its law.
//! 5. terms equal up to a constant factor merge (their weights add); terms equal but
//!    for a guard `g` in one and `not g` in the other are one term without it (the
//!    branches of an `if` that simplified to the same measure, issue 14).
//!
//! A step that fails leaves the term as it was and leaves a note (why a latent variable
//! stayed); the deadline is checked between steps.

use rustc_hash::FxHashMap;

use slic_algebra::assume::{Context, Tri};
use slic_algebra::cond::{Comparison, Rel};
use slic_algebra::vars;
use slic_algebra::{canon, cond, Coercion, Node, Pattern, Prim, Store, TermId, Type, VarId};

use crate::lin::{Base, Factor, LTerm, Lin, Origin};
use crate::support::{self, Interval};
use crate::{prepare, terms, Simp};

/// The most values a finite discrete variable is summed out over.
const SPLIT_MAX: usize = 32;

/// How many conditions on parameters one term is split over.
const CASE_DEPTH: usize = 4;

/// How many nested discrete variables one term is split over.
const SPLIT_DEPTH: usize = 16;

/// How many parameter cases one integral splits into at most (2 to this power).
const MAX_CASE_SPLITS: usize = 3;

/// How many times `improve` revisits a sum (each round removes a bind or stops).
const MAX_ROUNDS: usize = 64;

impl Simp<'_> {
    /// What the binds (and, with `with_guards`, the guards) of `t` say of its variables.
    pub(crate) fn facts(&mut self, t: &LTerm, with_guards: bool) -> Context {
        let mut ctx = Context::new();
        for b in &t.binds {
            ctx = self.with_base_facts(ctx, b);
        }
        if with_guards {
            for &g in &t.guards {
                ctx = ctx.with_condition(g, true);
            }
        }
        ctx
    }

    /// What the binds of the variables `e` mentions say of them, and (with
    /// `with_guards`) what the guards say. A draw's support is no fact about an
    /// expression that does not mention it: `x <~ uniform(0, c)` says `0 < c` only where
    /// the program is valid, so a guard `0 < c` must not be dropped because of it.
    pub(crate) fn facts_for(&mut self, t: &LTerm, e: TermId, with_guards: bool) -> Context {
        let used = vars::free_vars(self.store, e);
        let mut ctx = Context::new();
        for b in &t.binds {
            if !used.contains(&b.var) {
                continue;
            }
            ctx = self.with_base_facts(ctx, b);
        }
        if with_guards {
            for &g in &t.guards {
                ctx = ctx.with_condition(g, true);
            }
        }
        ctx
    }

    /// `ctx` and what the bind `b` says of its variable: a counting range `lo..hi` as a
    /// loop range (what the decision procedure reads best: a plate's index), anything
    /// else as the conditions of [`Self::base_facts`].
    fn with_base_facts(&mut self, ctx: Context, b: &crate::lin::Bind) -> Context {
        if let Base::Counting {
            lo: Some(lo),
            hi: Some(hi),
        } = b.base
        {
            if self.store.ty(lo) == self.store.var_type(b.var)
                && self.store.ty(hi) == self.store.var_type(b.var)
            {
                return ctx.with_range(b.var, lo, hi);
            }
        }
        let mut ctx = ctx;
        for f in self.base_facts(b.var, &b.base) {
            ctx = ctx.with_condition(f, true);
        }
        ctx
    }

    /// The conditions a draw of `x` from `base` satisfies (`lo < x`, `x < hi`).
    pub(crate) fn base_facts(&mut self, x: VarId, base: &Base) -> Vec<TermId> {
        let iv = match self.base_interval(x, base) {
            Some(iv) => iv,
            None => return Vec::new(),
        };
        let xt = self.store.var_term(x);
        let mut out = Vec::new();
        let strict = if iv.discrete { Prim::Le } else { Prim::Lt };
        if let Some(lo) = iv.lo {
            out.push(terms::compare(self.store, strict, lo, xt));
        }
        if let Some(hi) = iv.hi {
            out.push(terms::compare(self.store, Prim::Lt, xt, hi));
        }
        out
    }

    /// The interval a base ranges over (`None` for opaque measures).
    pub(crate) fn base_interval(&mut self, x: VarId, base: &Base) -> Option<Interval> {
        match base {
            Base::Lebesgue { lo, hi } => Some(Interval {
                discrete: false,
                lo: *lo,
                hi: *hi,
            }),
            Base::Counting { lo, hi } => Some(Interval {
                discrete: true,
                lo: *lo,
                hi: *hi,
            }),
            Base::Prim(d) => match self.dens.open(self.store, *d, x) {
                Some((b @ (Base::Lebesgue { .. } | Base::Counting { .. }), _)) => {
                    self.base_interval(x, &b)
                }
                _ => None,
            },
            Base::Opaque(_) | Base::Array { .. } => None,
        }
    }

    /// Step 1 on every term; zero terms dropped.
    pub(crate) fn normalise_all(&mut self, lin: Lin) -> Lin {
        let mut out = Vec::with_capacity(lin.len());
        for t in lin {
            if self.expired("normalising weights") {
                out.push(t);
            } else if let Some(t) = self.normalise(t) {
                out.push(t);
            }
        }
        out
    }

    /// Step 1 (see the module doc); `None` when the term is zero.
    pub(crate) fn normalise(&mut self, mut t: LTerm) -> Option<LTerm> {
        for b in &mut t.binds {
            let store = &mut *self.store;
            b.base = b.base.map(&mut |x| {
                let x = prepare::reduce(store, x);
                canon::canonicalize(store, &Context::new(), x)
            });
        }
        let ctx0 = self.facts(&t, false);
        let mut guards: Vec<TermId> = Vec::new();
        for &g in &t.guards {
            let g = prepare::reduce(self.store, g);
            let ctx_g = self.facts_for(&t, g, false);
            let g = self.refine(g, &ctx_g);
            let g = cond::canonical(self.store, &ctx_g, g);
            let parts = match self.store.node(g) {
                Node::Bool(true) => continue,
                Node::Bool(false) => return None,
                Node::Prim(Prim::And, xs) => xs.clone(),
                _ => vec![g],
            };
            for p in parts {
                // issue 14: `x == c` of a variable with a lebesgue density holds on a
                // null set (the term is zero), `x /= c` almost everywhere (no guard)
                match self.null_equation(&t, p) {
                    Some(true) => return None,
                    Some(false) => continue,
                    None => {}
                }
                if !guards.contains(&p) {
                    guards.push(p);
                }
            }
        }
        // a factor `if c: a else: 0` is the guard c and the factor a
        let mut moved = false;
        for f in &mut t.factors {
            if let Some((c, a)) = guarded_factor(self.store, f.term) {
                let c = cond::canonical(self.store, &Context::new(), c);
                if !guards.contains(&c) {
                    guards.push(c);
                }
                *f = Factor::other(a);
                moved = true;
            }
        }
        // a factor branching on a null equation is its branch almost everywhere
        for i in 0..t.factors.len() {
            let Some((c, a, b)) = branches(self.store, t.factors[i].term) else {
                continue;
            };
            let c = cond::canonical(self.store, &Context::new(), c);
            let pick = match self.null_equation(&t, c) {
                Some(true) => b,
                Some(false) => a,
                None => continue,
            };
            t.factors[i] = Factor::other(pick);
            moved = true;
        }
        t.guards = guards;
        if moved || self.narrow(&mut t, &ctx0) {
            return self.normalise(t);
        }
        if self.empty_support(&t) {
            return None;
        }
        let bound = t.bound_vars();
        let mut constant: Vec<TermId> = Vec::new();
        let mut factors: Vec<Factor> = Vec::new();
        for f in &t.factors {
            let x = prepare::reduce(self.store, f.term);
            let ctx = self.facts_for(&t, x, true);
            let x = self.refine(x, &ctx);
            let x = canon::canonicalize(self.store, &ctx, x);
            match terms::lit_value(self.store, x) {
                Some(v) if v.is_zero() => return None,
                Some(v) if v.is_one() => continue,
                _ => {}
            }
            if vars::mentions_any(self.store, x, &bound) {
                // a prior's density canonicalised is still that density
                factors.push(Factor {
                    term: x,
                    origin: f.origin,
                });
            } else {
                constant.push(x);
            }
        }
        if !constant.is_empty() {
            let c = terms::product(self.store, constant);
            let c = canon::canonicalize(self.store, &Context::new(), c);
            match terms::lit_value(self.store, c) {
                Some(v) if v.is_zero() => return None,
                Some(v) if v.is_one() => {}
                _ => factors.insert(0, Factor::other(c)),
            }
        }
        t.factors = factors;
        let r = prepare::reduce(self.store, t.result);
        let ctx = self.facts_for(&t, r, true);
        t.result = canon::canonicalize(self.store, &ctx, r);
        Some(t)
    }

    /// Is the canonical guard `g` an equation `a·x + L == 0` (`Some(true)`) or its
    /// negation `/=` (`Some(false)`), where `x` is drawn in `t` from a measure with a
    /// density w.r.t. lebesgue (a lebesgue base, or a primitive that opens to one) and `L`
    /// mentions neither `x` nor anything drawn after it? Then, for every value of what
    /// is drawn before `x`, the equation holds at one point of `x`'s line: a set of
    /// measure zero under `x`'s law, so by Fubini the guarded integral is 0 and the
    /// negated guard may go. Never for counting or opaque draws (a point there has mass),
    /// nor when `x` appears inside a non-linear atom (`x * y == 1` is a curve, but
    /// `x * x == 1` is two points only by luck of the shape: left alone).
    fn null_equation(&mut self, t: &LTerm, g: TermId) -> Option<bool> {
        let (g, negated) = match self.store.node(g) {
            Node::Prim(Prim::Not, xs) if xs.len() == 1 => (xs[0], true),
            _ => (g, false),
        };
        let cmp = Comparison::of_term(self.store, g)?.ok()?;
        let equation = match cmp.rel {
            Rel::Eq => true,
            Rel::Ne => false,
            Rel::Le | Rel::Lt => return None,
        };
        // the latest-drawn variable the equation mentions
        let mut last: Option<usize> = None;
        for (atom, _) in &cmp.lin.terms {
            let free = vars::free_vars(self.store, *atom);
            for (i, b) in t.binds.iter().enumerate() {
                if free.contains(&b.var) && last.is_none_or(|l| l < i) {
                    last = Some(i);
                }
            }
        }
        let b = t.binds[last?].clone();
        let mut alone = false;
        for (atom, _) in &cmp.lin.terms {
            let a = cond::strip_safe(self.store, *atom);
            if matches!(self.store.node(a), Node::Var(v) if *v == b.var) {
                alone = true;
            } else if vars::mentions(self.store, a, b.var) {
                return None;
            }
        }
        if !alone {
            return None;
        }
        match self.base_interval(b.var, &b.base) {
            Some(iv) if !iv.discrete => Some(equation != negated),
            _ => None,
        }
    }

    /// Guards that bound a lebesgue or counting variable by constants become its base's
    /// bounds; an int variable bounded below by 0 and read as `int2nat(k)` becomes a nat
    /// one (`k = nat2int(n)`), a real one read as `real2prob(x)` a prob one, so a printed `k <~ counting; if 0 <= k: n = int2nat(k) ...`
    /// reads back as it was written. True when `t` changed.
    fn narrow(&mut self, t: &mut LTerm, ctx: &Context) -> bool {
        let mut changed = false;
        for i in 0..t.binds.len() {
            let b = t.binds[i].clone();
            let (discrete, lo, hi) = match b.base {
                Base::Lebesgue { lo, hi } => (false, lo, hi),
                Base::Counting { lo, hi } => (true, lo, hi),
                _ => continue,
            };
            let x = b.var;
            let others: Vec<VarId> = t.bound_vars().into_iter().filter(|&v| v != x).collect();
            let (mine, rest): (Vec<TermId>, Vec<TermId>) = t.guards.iter().partition(|&&g| {
                vars::mentions(self.store, g, x) && !vars::mentions_any(self.store, g, &others)
            });
            let iv = Interval { discrete, lo, hi };
            let r = support::restrict(self.store, ctx, x, iv.clone(), &mine);
            if !r.possible {
                // a guard holds nowhere (or on a null set): the term is zero, which
                // normalising it again finds
                let never = self.store.intern(Node::Bool(false), Type::Bool);
                t.guards = vec![never];
                return true;
            }
            // a guard read as a bound no tighter than the interval's goes too
            let moved = r.interval != iv || r.rest.len() < mine.len();
            let mut guards = rest;
            guards.extend(r.rest);
            let constant_lo = r
                .interval
                .lo
                .and_then(|l| terms::lit_value(self.store, l))
                .is_some_and(|v| !v.is_negative());
            let xty = self.store.var_type(x).clone();
            // only where the term reads x at the narrower type (`int2nat(k)`)
            let (narrow_ty, down) = match xty {
                Type::Int => (Type::Nat, Coercion::Int2Nat),
                _ => (Type::Prob, Coercion::Real2Prob),
            };
            let xt = self.store.var_term(x);
            let read_down = self.store.intern(Node::Coerce(down, xt), narrow_ty.clone());
            let used = t
                .factors
                .iter()
                .any(|f| terms::contains(self.store, f.term, read_down))
                || terms::contains(self.store, t.result, read_down);
            let narrower =
                (constant_lo && used && matches!(xty, Type::Int | Type::Real)).then_some(narrow_ty);
            if !moved && narrower.is_none() {
                continue;
            }
            changed = true;
            t.guards = guards;
            t.binds[i].base = if discrete {
                Base::Counting {
                    lo: r.interval.lo,
                    hi: r.interval.hi,
                }
            } else {
                Base::Lebesgue {
                    lo: r.interval.lo,
                    hi: r.interval.hi,
                }
            };
            if let Some(nty) = narrower {
                let name = self.store.var_name(x).to_string();
                let n = self.store.fresh_var(&name, nty);
                let nt = self.store.var_term(n);
                let value = terms::coerce(self.store, nt, &xty);
                let mut map = FxHashMap::default();
                map.insert(x, value);
                t.binds[i].var = n;
                t.substitute(self.store, &map);
            }
        }
        changed
    }

    /// `t` with sums of prob terms containing `real2prob(e)` (e provably >= 0 under
    /// `ctx`) added in real arithmetic, and `prob2real(real2prob(e))` read as `e` where
    /// `e >= 0` is proved: what lets `p + real2prob(1 - p)` cancel to 1.
    pub(crate) fn refine(&mut self, t: TermId, ctx: &Context) -> TermId {
        let mut memo = FxHashMap::default();
        self.refine_in(t, ctx, &mut memo, 0)
    }

    fn refine_in(
        &mut self,
        t: TermId,
        ctx: &Context,
        memo: &mut FxHashMap<TermId, TermId>,
        depth: usize,
    ) -> TermId {
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        if depth > 2000 {
            return t;
        }
        let node = self.store.node(t).clone();
        let r = match &node {
            Node::Coerce(Coercion::Prob2Real, inner) => {
                let under = match *self.store.node(*inner) {
                    Node::Coerce(Coercion::Real2Prob, e) => Some(e),
                    _ => None,
                };
                match under {
                    Some(e) if self.nonneg(e, ctx) => self.refine_in(e, ctx, memo, depth + 1),
                    _ => self.refine_children(t, &node, ctx, memo, depth),
                }
            }
            // `b ^ n` (prob b, symbolic n) is `b ** n`: canonical forms read it as
            // `exp(n · log b)`, whose derivative the holonomic layer knows
            Node::Prim(Prim::Pow, xs)
                if *self.store.ty(t) == Type::Prob
                    && xs.len() == 2
                    && terms::lit_value(self.store, xs[1]).is_none() =>
            {
                let b = self.refine_in(xs[0], ctx, memo, depth + 1);
                let n = terms::coerce(self.store, xs[1], &Type::Real);
                self.store.prim(Prim::RealPow, vec![b, n], Type::Prob)
            }
            Node::Prim(Prim::Add, xs)
                if *self.store.ty(t) == Type::Prob
                    && xs.iter().any(|&x| has_real2prob(self.store, x)) =>
            {
                let lifted: Vec<TermId> = xs
                    .clone()
                    .into_iter()
                    .map(|x| {
                        let x = self.refine_in(x, ctx, memo, depth + 1);
                        self.lift(x, ctx)
                    })
                    .collect();
                let sum = self.store.prim(Prim::Add, lifted, Type::Real);
                let sum = canon::canonicalize(self.store, ctx, sum);
                terms::coerce(self.store, sum, &Type::Prob)
            }
            _ => self.refine_children(t, &node, ctx, memo, depth),
        };
        memo.insert(t, r);
        r
    }

    fn refine_children(
        &mut self,
        t: TermId,
        node: &Node,
        ctx: &Context,
        memo: &mut FxHashMap<TermId, TermId>,
        depth: usize,
    ) -> TermId {
        let ch = node.children();
        if ch.is_empty() {
            return t;
        }
        let new: Vec<TermId> = ch
            .iter()
            .map(|&c| self.refine_in(c, ctx, memo, depth + 1))
            .collect();
        if new == ch {
            return t;
        }
        let ty = self.store.ty(t).clone();
        self.store.intern(node.with_children(&new), ty)
    }

    /// A prob term as a real term, with `real2prob(e)` read as `e` where `e >= 0`.
    fn lift(&mut self, t: TermId, ctx: &Context) -> TermId {
        match self.store.node(t).clone() {
            Node::Coerce(Coercion::Real2Prob, e) if self.nonneg(e, ctx) => e,
            Node::Lit(r) => terms::lit(self.store, &r, &Type::Real),
            Node::Prim(Prim::Mul, xs) => {
                let ys: Vec<TermId> = xs.into_iter().map(|x| self.lift(x, ctx)).collect();
                self.store.prim(Prim::Mul, ys, Type::Real)
            }
            _ => terms::coerce(self.store, t, &Type::Real),
        }
    }

    /// A piece's weight `w` (a prob term) computed in real arithmetic where each
    /// `real2prob(e)` in it is proved to have `e >= 0` on the piece (then it is `e`),
    /// canonical, and made a prob again: what integrating a piece leaves as
    /// `real2prob(1 / t) * real2prob(1 / (2 * t)) / ..` is `1 / (2 * t ^ 2)` there. `w`
    /// itself when some `real2prob` cannot be opened, or the result has as many.
    fn tidy_weight(&mut self, p: &LTerm, w: TermId) -> TermId {
        let ctx = self.facts(p, true);
        let Some(r) = self.real_value(w, &ctx, 0) else {
            return w;
        };
        let r = canon::canonicalize(self.store, &ctx, r);
        let r = terms::coerce(self.store, r, &Type::Prob);
        let r = canon::canonicalize(self.store, &ctx, r);
        // only where it opened some `real2prob` for good
        let count = |s: &Simp, t: TermId| {
            s.store
                .subterms(t)
                .filter(|&x| matches!(s.store.node(x), Node::Coerce(Coercion::Real2Prob, _)))
                .count()
        };
        if count(self, r) < count(self, w) {
            r
        } else {
            w
        }
    }

    /// The real term equal to the prob term `t` under `ctx` without `real2prob`s, where
    /// each is proved to be of a non-negative argument (see [`Self::tidy_weight`]).
    fn real_value(&mut self, t: TermId, ctx: &Context, depth: usize) -> Option<TermId> {
        if depth > 64 {
            return None;
        }
        let node = self.store.node(t).clone();
        let all = |s: &mut Simp, xs: &[TermId]| -> Option<Vec<TermId>> {
            xs.iter()
                .map(|&x| s.real_value(x, ctx, depth + 1))
                .collect()
        };
        Some(match node {
            Node::Coerce(Coercion::Real2Prob, e) => {
                let e = self.refine(e, ctx);
                let e = self.real_inside(e, ctx, depth + 1)?;
                if !self.nonneg(e, ctx) && !self.positive_real(e, ctx, 0) {
                    return None;
                }
                e
            }
            Node::Lit(r) => terms::lit(self.store, &r, &Type::Real),
            Node::Prim(op @ (Prim::Mul | Prim::Add), xs) => {
                let ys = all(self, &xs)?;
                self.store.prim(op, ys, Type::Real)
            }
            Node::Prim(op @ (Prim::Recip | Prim::Pow), xs) => {
                let mut ys = vec![self.real_value(xs[0], ctx, depth + 1)?];
                ys.extend_from_slice(&xs[1..]);
                self.store.prim(op, ys, Type::Real)
            }
            Node::Prim(Prim::Exp, xs) if xs.len() == 1 => {
                let x = self.real_inside(xs[0], ctx, depth + 1)?;
                self.store.prim(Prim::Exp, vec![x], Type::Real)
            }
            Node::Coerce(..) | Node::Var(_) => terms::coerce(self.store, t, &Type::Real),
            _ if vars::free_vars(self.store, t).is_empty() => {
                terms::coerce(self.store, t, &Type::Real)
            }
            _ => return None,
        })
    }

    /// A real term with every `prob2real(p)` in it read through [`Self::real_value`].
    fn real_inside(&mut self, e: TermId, ctx: &Context, depth: usize) -> Option<TermId> {
        if depth > 64 {
            return None;
        }
        match self.store.node(e).clone() {
            Node::Coerce(Coercion::Prob2Real, p) => self.real_value(p, ctx, depth + 1),
            Node::Prim(op, xs) if *self.store.ty(e) == Type::Real => {
                let ys: Option<Vec<TermId>> = xs
                    .iter()
                    .map(|&x| {
                        if *self.store.ty(x) == Type::Real {
                            self.real_inside(x, ctx, depth + 1)
                        } else {
                            Some(x)
                        }
                    })
                    .collect();
                Some(self.store.prim(op, ys?, Type::Real))
            }
            _ => Some(e),
        }
    }

    /// Is `0 <= e` proved under `ctx`?
    fn nonneg(&mut self, e: TermId, ctx: &Context) -> bool {
        let zero = terms::int(self.store, 0, &Type::Real);
        let c = terms::compare(self.store, Prim::Le, zero, e);
        cond::decide(self.store, ctx, c) == Tri::True
    }

    /// Is `0 < e` proved under `ctx` (e a prob term)?
    pub(crate) fn positive(&mut self, e: TermId, ctx: &Context) -> bool {
        if evidently_positive(self.store, e, 0) {
            return true;
        }
        let zero = terms::int(self.store, 0, &Type::Prob);
        let c = terms::compare(self.store, Prim::Lt, zero, e);
        cond::decide(self.store, ctx, c) == Tri::True
    }

    /// Is `0 < e` proved under `ctx` (e a real term)? Decided outright, or factor by
    /// factor through products, reciprocals and powers (`1 / x` for `0 < x`).
    pub(crate) fn positive_real(&mut self, e: TermId, ctx: &Context, depth: usize) -> bool {
        if evidently_positive(self.store, e, 0) {
            return true;
        }
        let zero = terms::int(self.store, 0, &Type::Real);
        let e_real = terms::coerce(self.store, e, &Type::Real);
        let c = terms::compare(self.store, Prim::Lt, zero, e_real);
        if cond::decide(self.store, ctx, c) == Tri::True {
            return true;
        }
        if depth >= 8 {
            return false;
        }
        match self.store.node(e).clone() {
            Node::Prim(Prim::Mul, xs) => xs.iter().all(|&x| self.positive_real(x, ctx, depth + 1)),
            Node::Prim(Prim::Recip, xs) if xs.len() == 1 => {
                self.positive_real(xs[0], ctx, depth + 1)
            }
            Node::Prim(Prim::Pow | Prim::RealPow, xs) if xs.len() == 2 => {
                self.positive_real(xs[0], ctx, depth + 1)
            }
            _ => false,
        }
    }

    /// Steps 2-5 (see the module doc) on a normalised sum.
    pub(crate) fn improve(&mut self, lin: Lin) -> Lin {
        // branches equal as written join before anything is integrated (what is left
        // may then be integrated out or change variable)
        let lin = self.join_complements(lin);
        let mut out = Vec::new();
        for t in lin {
            self.split_into(t, &mut out, 0);
        }
        let mut cases = Vec::new();
        for t in out {
            self.split_cases(t, &mut cases, 0);
        }
        let out = cases;
        let mut done = Vec::new();
        for t in out {
            if self.expired("integrating out latent variables") {
                done.push(t);
                continue;
            }
            let t = self.sum_of_draws(t);
            if let Some(t) = self.eliminate(t) {
                let t = self.sum_of_draws(t);
                self.changed_variable(t, &mut done);
            }
        }
        let n = done.len();
        let merged = self.merge(done);
        if merged.len() == n || self.expired("integrating out after joining branches") {
            return merged;
        }
        // branches equal only once simplified joined: their term may simplify further
        let mut again = Vec::new();
        for t in merged {
            if let Some(t) = self.eliminate(t) {
                let t = self.sum_of_draws(t);
                self.changed_variable(t, &mut again);
            }
        }
        again
    }

    /// `t` drawn through step 4's change of variable where that pays, else `t`.
    fn changed_variable(&mut self, t: LTerm, out: &mut Vec<LTerm>) {
        match self.change_of_variable(&t) {
            Some(better) => out.extend(better),
            None => out.push(self.monotone_change(t)),
        }
    }

    /// Step 2b (splitting piecewise): a variable with two bounds on one side whose order
    /// depends only on the parameters (`x < c` inside `uniform(0, 1)`) splits `t` into
    /// the case `c <= 1` and the case `1 < c`, each with one interval. The terms are
    /// appended to `out` in order.
    fn split_cases(&mut self, t: LTerm, out: &mut Vec<LTerm>, depth: usize) {
        if depth >= CASE_DEPTH || out.len() > crate::integrate::MAX_TERMS {
            out.push(t);
            return;
        }
        self.split_cases_on(t, &[], out, depth)
    }

    /// [`Self::split_cases`] where the conditions may also mention the variables `free`
    /// (a new variable of a change of variable, whose range is then cut where the order
    /// of another variable's bounds changes: piecewise integration).
    fn split_cases_on(&mut self, t: LTerm, free: &[VarId], out: &mut Vec<LTerm>, depth: usize) {
        if depth >= CASE_DEPTH || out.len() > crate::integrate::MAX_TERMS {
            out.push(t);
            return;
        }
        let Some(c) = self.case_condition(&t, free) else {
            out.push(t);
            return;
        };
        let not_c = terms::not(self.store, c);
        for g in [c, not_c] {
            let mut tc = t.clone();
            tc.guards.push(g);
            if let Some(tc) = self.normalise(tc) {
                self.split_cases_on(tc, free, out, depth + 1);
            }
        }
    }

    /// The condition on parameters (and the variables `free`) that orders two bounds of
    /// a variable of `t`.
    fn case_condition(&mut self, t: &LTerm, free: &[VarId]) -> Option<TermId> {
        let mut bound = t.bound_vars();
        bound.retain(|v| !free.contains(v));
        for i in 0..t.binds.len() {
            let x = t.binds[i].var;
            let base = t.binds[i].base.clone();
            let Some(iv) = self.base_interval(x, &base) else {
                continue;
            };
            if free.contains(&x) {
                continue;
            }
            let mine: Vec<TermId> = t
                .guards
                .iter()
                .copied()
                .filter(|&g| vars::mentions(self.store, g, x))
                .collect();
            // a lebesgue or counting draw between two parameters (issue 14, guards as
            // supports: an indicator already read into its bounds) is split on whether
            // its interval is empty even without guards of its own, so that where it is
            // not, it can be named (`weight(b - a, uniform(a, b))`); a primitive's
            // interval is the validity of its parameters, never split on
            let open_base = matches!(base, Base::Lebesgue { .. } | Base::Counting { .. });
            if mine.is_empty() && !open_base {
                continue;
            }
            // what is known without x's own guards (they are what is being resolved)
            let mut others = t.clone();
            others.guards.retain(|g| !mine.contains(g));
            others.binds.remove(i);
            let ctx = self.facts(&others, true);
            let r = support::restrict(self.store, &ctx, x, iv, &mine);
            let on_parameters = |s: &Store, a: TermId, b: TermId| {
                !vars::mentions_any(s, a, &bound) && !vars::mentions_any(s, b, &bound)
            };
            if let Some((a, b)) = r.unordered {
                if on_parameters(self.store, a, b) {
                    return Some(terms::compare(self.store, Prim::Le, a, b));
                }
            }
            // an interval that may be empty: the case where it is not
            if let (Some(lo), Some(hi)) = (r.interval.lo, r.interval.hi) {
                if on_parameters(self.store, lo, hi)
                    && r.interval.nonempty(self.store, &ctx).is_some()
                {
                    return Some(terms::compare(self.store, Prim::Lt, lo, hi));
                }
            }
        }
        None
    }

    /// Is some variable of `t` restricted by its guards to an empty interval (or to a
    /// point, for a continuous one)? Then `t` is zero.
    fn empty_support(&mut self, t: &LTerm) -> bool {
        if t.guards.is_empty() {
            return false;
        }
        let ctx = self.facts(t, true);
        for i in 0..t.binds.len() {
            let x = t.binds[i].var;
            let base = t.binds[i].base.clone();
            let mine: Vec<TermId> = t
                .guards
                .iter()
                .copied()
                .filter(|&g| vars::mentions(self.store, g, x))
                .collect();
            // a lebesgue or counting base is empty by its own bounds under the guards on
            // the parameters (the other case of the split in `case_condition`)
            let open_base = matches!(base, Base::Lebesgue { .. } | Base::Counting { .. });
            if mine.is_empty() && !open_base {
                continue;
            }
            let Some(iv) = self.base_interval(x, &base) else {
                continue;
            };
            let r = support::restrict(self.store, &ctx, x, iv, &mine);
            if !r.possible {
                return true;
            }
            if let (Some(lo), Some(hi)) = (r.interval.lo, r.interval.hi) {
                let c = terms::compare(self.store, Prim::Lt, lo, hi);
                if cond::decide(self.store, &ctx, c) == Tri::False {
                    return true;
                }
            }
        }
        false
    }

    /// Step 2 on `t` and on the terms it splits into, appended to `out` in order.
    fn split_into(&mut self, t: LTerm, out: &mut Vec<LTerm>, depth: usize) {
        if depth > SPLIT_DEPTH
            || out.len() > crate::integrate::MAX_TERMS
            || self.expired("summing out discrete variables")
        {
            out.push(t);
            return;
        }
        match self.split_discrete(&t) {
            Some(parts) => {
                for p in parts {
                    self.split_into(p, out, depth + 1);
                }
            }
            None => out.push(t),
        }
    }

    /// Step 2 on the first finite discrete bind of `t`: the terms it splits into, or
    /// `None` when there is nothing to split.
    fn split_discrete(&mut self, t: &LTerm) -> Option<Vec<LTerm>> {
        for (i, b) in t.binds.iter().enumerate() {
            let Base::Prim(d) = b.base else { continue };
            let Node::Dist(slic_algebra::Dist::Categorical, args) = self.store.node(d).clone()
            else {
                continue;
            };
            let w = prepare::reduce(self.store, *args.first()?);
            let Node::ArrayLit(items) = self.store.node(w).clone() else {
                continue;
            };
            if items.len() > SPLIT_MAX {
                continue;
            }
            let ctx = self.facts(t, true);
            let total = if items.is_empty() {
                terms::int(self.store, 0, &Type::Prob)
            } else if items.len() == 1 {
                items[0]
            } else {
                self.store.prim(Prim::Add, items.clone(), Type::Prob)
            };
            let total = self.refine(total, &ctx);
            let total = canon::canonicalize(self.store, &ctx, total);
            if terms::lit_value(self.store, total).is_some_and(|v| v.is_zero()) {
                return Some(Vec::new());
            }
            if !self.positive(total, &ctx) {
                continue;
            }
            let x = b.var;
            let mut parts = Vec::new();
            for (k, &wk) in items.iter().enumerate() {
                let Ok(k) = i64::try_from(k) else { break };
                let mut tk = t.clone();
                tk.binds.remove(i);
                let kt = terms::int(self.store, k, &Type::Nat);
                let mut map = FxHashMap::default();
                map.insert(x, kt);
                tk.substitute(self.store, &map);
                let inv = self.store.prim(Prim::Recip, vec![total], Type::Prob);
                let p = self.store.prim(Prim::Mul, vec![wk, inv], Type::Prob);
                tk.factors.insert(0, Factor::other(p));
                if let Some(tk) = self.normalise(tk) {
                    parts.push(tk);
                }
            }
            return Some(parts);
        }
        None
    }

    /// Is the `i`-th bind of `t` latent: not in the result, not needed by an opaque draw?
    fn latent(&self, t: &LTerm, i: usize) -> bool {
        let Some(b) = t.binds.get(i) else {
            return false;
        };
        let x = b.var;
        if matches!(b.base, Base::Opaque(_)) || vars::mentions(self.store, t.result, x) {
            return false;
        }
        !t.binds[i + 1..]
            .iter()
            .any(|later| matches!(later.base, Base::Opaque(m) if vars::mentions(self.store, m, x)))
    }

    /// Step 3: every latent variable of `t` that can be integrated out, integrated out.
    /// `None` when the term turns out to be zero.
    pub(crate) fn eliminate(&mut self, mut t: LTerm) -> Option<LTerm> {
        let mut failed: Vec<(VarId, String)> = Vec::new();
        'rounds: for _ in 0..MAX_ROUNDS {
            // draws nothing depends on go first (last to first: dropping one can free an
            // earlier one), so no integral is attempted with them still in the way
            let mut progressed = false;
            for i in (0..t.binds.len()).rev() {
                if self.unused(&t, i) && self.has_mass_one(t.binds[i].base.clone(), &t) {
                    t.binds.remove(i);
                    progressed = true;
                }
            }
            if progressed {
                failed.clear();
            }
            for i in 0..t.binds.len() {
                let x = t.binds[i].var;
                if failed.iter().any(|(v, _)| *v == x) || !self.latent(&t, i) {
                    continue;
                }
                let name = self.store.var_name(x).to_string();
                if self.expired(&format!("integrating out {name}")) {
                    break 'rounds;
                }
                match self.integrate_out(&t, i) {
                    Ok(None) => return None,
                    Ok(Some(t2)) => {
                        t = self.normalise(t2)?;
                        progressed = true;
                        failed.clear();
                        break;
                    }
                    Err(why) => failed.push((x, why)),
                }
            }
            if !progressed {
                break;
            }
        }
        // every latent variable left in place says why (issue: notes in a user's words)
        let rounds = format!("the simplifier stopped after {MAX_ROUNDS} rounds");
        self.note_latent(&t, |x, out_of_time| {
            match failed.iter().find(|(v, _)| *v == x) {
                Some((_, why)) => why.clone(),
                None if out_of_time => "the time budget ran out first".to_string(),
                None => rounds.clone(),
            }
        });
        Some(t)
    }

    /// A note for each latent variable of `t` (see [`crate::LeftInPlace`]), saying why it
    /// is still drawn: `why(x, out of time)`.
    pub(crate) fn note_latent(&mut self, t: &LTerm, why: impl Fn(VarId, bool) -> String) {
        for i in 0..t.binds.len() {
            if !self.latent(t, i) {
                continue;
            }
            let x = t.binds[i].var;
            let name = self.store.var_name(x).to_string();
            self.left.push(crate::LeftInPlace {
                note: format!(
                    "`{name}` could not be integrated out: {}",
                    why(x, self.out_of_time)
                ),
                name,
                latent: true,
            });
        }
    }

    /// The `i`-th bind of `t` integrated out: `Ok(None)` when the term is zero, `Err`
    /// with the reason when it cannot be done exactly.
    pub(crate) fn integrate_out(&mut self, t: &LTerm, i: usize) -> Result<Option<LTerm>, String> {
        if matches!(t.binds[i].base, Base::Array { .. }) {
            return self.integrate_out_array(t, i);
        }
        let x = t.binds[i].var;
        let mut t2 = t.clone();
        // later draws that depend on x are opened into their densities
        self.open_dependents(&mut t2, i, x)?;
        // x's own base opened
        let b = t2.binds.remove(i);
        let base = match b.base {
            Base::Prim(d) => {
                let (base, f) = self
                    .dens
                    .open(self.store, d, x)
                    .ok_or_else(|| "its distribution has no known density".to_string())?;
                if let Some(f) = f {
                    t2.factors.push(Factor {
                        term: f,
                        origin: Origin::Prior { var: x, dist: d },
                    });
                }
                base
            }
            other => other,
        };
        let iv = self
            .base_interval(x, &base)
            .ok_or_else(|| "it is drawn from a measure with no known density".to_string())?;
        let (mine, my_guards) = t2.take_mentioning(self.store, x);
        let ctx = self.facts(&t2, true);
        let r = support::restrict(self.store, &ctx, x, iv, &my_guards);
        if !r.possible {
            return Ok(None);
        }
        let mut fs: Vec<TermId> = mine.iter().map(|f| f.term).collect();
        for g in r.rest {
            fs.push(terms::indicator(self.store, g));
        }
        let f = terms::product(self.store, fs);
        let f = canon::canonicalize(self.store, &ctx, f);
        let support = r.interval.to_support();
        // the integral where the interval is not empty, which the guard below keeps
        let nonempty = r.interval.nonempty(self.store, &ctx);
        let ctx_in = match nonempty {
            Some(g) => ctx.with_condition(g, true),
            None => ctx.clone(),
        };
        let w = self.integral_by_cases(&ctx_in, f, x, &support, 0)?;
        if vars::mentions(self.store, w, x) {
            return Err("its integral could not be written without it".to_string());
        }
        t2.factors.push(Factor::other(w));
        if let Some(g) = nonempty {
            t2.guards.push(g);
        }
        Ok(Some(t2))
    }

    /// `∫ f dx` (or `Σ`) over `support` exactly; a factor `if c: a else: b` whose
    /// condition does not mention `x` (a case of the parameters, such as `i == z` in one
    /// element of an array integral) splits the integral into its two cases first:
    /// `if c: ∫ a·rest else: ∫ b·rest`, each under what its case says. Where the direct
    /// integral fails, such an `if` deeper inside (`exp(.. + (if i == z: t·ξ else: 0))`,
    /// what unproduct writes for a point read at a random index, issue 10) splits it too.
    fn integral_by_cases(
        &mut self,
        ctx: &Context,
        f: TermId,
        x: VarId,
        support: &slic_holonomic::Support,
        depth: usize,
    ) -> Result<TermId, String> {
        let parts = match self.store.node(f) {
            Node::Prim(Prim::Mul, xs) => xs.clone(),
            _ => vec![f],
        };
        let case = parts
            .iter()
            .enumerate()
            .find_map(|(k, &p)| match *self.store.node(p) {
                Node::If(c, a, b) if !vars::mentions(self.store, c, x) => Some((k, c, a, b)),
                _ => None,
            });
        if let Some((k, c, a, b)) = case.filter(|_| depth < MAX_CASE_SPLITS) {
            let target = parts[k];
            return self.split_integral(ctx, f, (target, c, a, b), x, support, depth);
        }
        let discrete = matches!(support, slic_holonomic::Support::Int { .. });
        let direct = if discrete {
            slic_holonomic::sum(self.store, ctx, f, x, support)
        } else {
            slic_holonomic::integrate(self.store, ctx, f, x, support)
        };
        match direct {
            Ok(w) => Ok(w),
            Err(m) => {
                if depth < MAX_CASE_SPLITS {
                    if let Some(case) = nested_case(self.store, f, x) {
                        return self.split_integral(ctx, f, case, x, support, depth);
                    }
                }
                Err(format!("its density{} is {m}", self.shown(f)))
            }
        }
    }

    /// `∫ f dx` as `if c: ∫ f[target := a] else: ∫ f[target := b]`, `target` being the
    /// subterm `if c: a else: b` of `f` (c free of `x`), each case under what it says.
    fn split_integral(
        &mut self,
        ctx: &Context,
        f: TermId,
        (target, c, a, b): (TermId, TermId, TermId, TermId),
        x: VarId,
        support: &slic_holonomic::Support,
        depth: usize,
    ) -> Result<TermId, String> {
        let branch = |value: bool, pick: TermId, me: &mut Self| {
            let g = vars::replace_free(me.store, f, target, pick);
            let inside = ctx.enter_branch(c, value);
            let g = canon::canonicalize(me.store, &inside, g);
            me.integral_by_cases(&inside, g, x, support, depth + 1)
        };
        let wa = branch(true, a, self)?;
        let wb = branch(false, b, self)?;
        let ty = self.store.ty(wa).clone();
        let w = self.store.intern(Node::If(c, wa, wb), ty);
        Ok(canon::canonicalize(self.store, ctx, w))
    }

    /// The draws after the `i`-th bind of `t` whose law depends on `x`, opened into
    /// their densities (factors) and bases, so that they join `x`'s integrand; bounds
    /// that mention `x` become guards. Arrays are opened element by element.
    pub(crate) fn open_dependents(
        &mut self,
        t2: &mut LTerm,
        i: usize,
        x: VarId,
    ) -> Result<(), String> {
        for j in i + 1..t2.binds.len() {
            let b = t2.binds[j].clone();
            if !b
                .base
                .terms()
                .iter()
                .any(|&m| vars::mentions(self.store, m, x))
            {
                continue;
            }
            if matches!(b.base, Base::Array { .. }) {
                self.open_array(t2, j, x)?;
                continue;
            }
            // a primitive is opened into its base and density first; then the bounds
            // of the base that mention x become guards (they belong to x's integrand)
            let base = match b.base {
                Base::Prim(d) => {
                    let (base, f) = self
                        .dens
                        .open(self.store, d, b.var)
                        .ok_or_else(|| "a later draw has no known density".to_string())?;
                    if let Some(f) = f {
                        t2.factors.push(Factor {
                            term: f,
                            origin: Origin::Prior {
                                var: b.var,
                                dist: d,
                            },
                        });
                    }
                    base
                }
                Base::Opaque(_) => {
                    return Err(
                        "a later draw from a measure with no known density depends on it"
                            .to_string(),
                    )
                }
                other => other,
            };
            let (discrete, lo, hi) = match base {
                Base::Lebesgue { lo, hi } => (false, lo, hi),
                Base::Counting { lo, hi } => (true, lo, hi),
                _ => return Err("a later draw that depends on it has no known support".to_string()),
            };
            let y = self.store.var_term(b.var);
            let mut keep_lo = lo;
            let mut keep_hi = hi;
            if let Some(lo) = lo.filter(|&l| vars::mentions(self.store, l, x)) {
                let op = if discrete { Prim::Le } else { Prim::Lt };
                t2.guards.push(terms::compare(self.store, op, lo, y));
                keep_lo = None;
            }
            if let Some(hi) = hi.filter(|&h| vars::mentions(self.store, h, x)) {
                t2.guards.push(terms::compare(self.store, Prim::Lt, y, hi));
                keep_hi = None;
            }
            t2.binds[j].base = if discrete {
                Base::Counting {
                    lo: keep_lo,
                    hi: keep_hi,
                }
            } else {
                Base::Lebesgue {
                    lo: keep_lo,
                    hi: keep_hi,
                }
            };
        }
        Ok(())
    }

    /// Does nothing in `t` depend on its `i`-th bind (result, factors, guards, later
    /// bases)?
    fn unused(&self, t: &LTerm, i: usize) -> bool {
        let Some(b) = t.binds.get(i) else {
            return false;
        };
        let x = b.var;
        let s = &*self.store;
        !vars::mentions(s, t.result, x)
            && !t.factors.iter().any(|f| vars::mentions(s, f.term, x))
            && !t.guards.iter().any(|&g| vars::mentions(s, g, x))
            && !t.binds[i + 1..]
                .iter()
                .any(|b| b.base.terms().iter().any(|&m| vars::mentions(s, m, x)))
    }

    /// Is the draw from `base` a probability measure here (total mass 1)? A categorical
    /// is only when its weights' total is proved positive; a plate when its elements are.
    fn has_mass_one(&mut self, base: Base, t: &LTerm) -> bool {
        let m = match base {
            Base::Prim(d) | Base::Opaque(d) => d,
            Base::Array { elem, .. } => return self.has_mass_one(*elem, t),
            Base::Lebesgue { .. } | Base::Counting { .. } => return false,
        };
        self.measure_has_mass_one(m, t, 0)
    }

    fn measure_has_mass_one(&mut self, m: TermId, t: &LTerm, depth: usize) -> bool {
        if depth > 64 {
            return false;
        }
        match self.store.node(m).clone() {
            Node::Dist(slic_algebra::Dist::Categorical, args) => {
                let Some(&w) = args.first() else {
                    return false;
                };
                let w = prepare::reduce(self.store, w);
                let Node::ArrayLit(items) = self.store.node(w).clone() else {
                    return false;
                };
                if items.is_empty() {
                    return false;
                }
                let ctx = self.facts(t, true);
                let total = if items.len() == 1 {
                    items[0]
                } else {
                    self.store.prim(Prim::Add, items, Type::Prob)
                };
                let total = self.refine(total, &ctx);
                let total = canon::canonicalize(self.store, &ctx, total);
                self.positive(total, &ctx)
            }
            Node::Dist(slic_algebra::Dist::Lebesgue | slic_algebra::Dist::Counting, _) => false,
            Node::Dist(..) => true,
            Node::Plate(_, _, body) => self.measure_has_mass_one(body, t, depth + 1),
            Node::Dirac(_) => true,
            _ => false,
        }
    }

    /// Step 4 (see the module doc): `Some` only when the change let a variable go.
    fn change_of_variable(&mut self, t: &LTerm) -> Option<Vec<LTerm>> {
        let ty = self.store.ty(t.result).clone();
        if !matches!(ty, Type::Real | Type::Prob) {
            return None;
        }
        // the continuous draws, last first: the first the result is affine in wins
        let drawn: Vec<(usize, VarId)> = t
            .binds
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, b)| match &b.base {
                Base::Lebesgue { .. } => true,
                Base::Prim(d) => matches!(
                    self.store.node(*d),
                    Node::Dist(
                        slic_algebra::Dist::Normal
                            | slic_algebra::Dist::Uniform
                            | slic_algebra::Dist::Gamma
                            | slic_algebra::Dist::Beta,
                        _
                    )
                ),
                _ => false,
            })
            .map(|(i, b)| (i, b.var))
            .collect();
        drawn
            .into_iter()
            .find_map(|(i, x)| self.change_of_variable_at(t, i, x, &ty))
    }

    /// [`Self::change_of_variable`] drawing `t = a·x + b` for the draw `x` at `i`.
    fn change_of_variable_at(
        &mut self,
        t: &LTerm,
        i: usize,
        x: VarId,
        ty: &Type,
    ) -> Option<Vec<LTerm>> {
        // no later draw's law may read x (it is replaced by a function of t, drawn last)
        if t.read_later(self.store, i, x) {
            return None;
        }
        // result = a·x + b, a rational, b free of x
        let xt = self.store.var_term(x);
        let result_real = terms::coerce(self.store, t.result, &Type::Real);
        let (a, b0) = terms::affine_in(self.store, result_real, xt)?;
        let a_t = a?;
        let b0 = b0.unwrap_or_else(|| terms::int(self.store, 0, &Type::Real));
        // a and b are free of x (they are its coefficients) and may read any other draw:
        // t is drawn after all of them
        // a rational a of either sign; otherwise a term proved positive (a product
        // `x·y` of draws on positive supports: t = x·y, dy = dt / x)
        let negative = match terms::lit_value(self.store, a_t) {
            Some(a) if a.is_zero() => return None,
            Some(a) => {
                let b_zero = terms::lit_value(self.store, b0).is_some_and(|v| v.is_zero());
                if a.is_one() && b_zero {
                    return None;
                }
                a.is_negative()
            }
            None => {
                let ctx = self.facts(t, true);
                if !self.positive_real(a_t, &ctx, 0) {
                    return None;
                }
                false
            }
        };
        let base = t.binds[i].base.clone();
        let (opened, prior) = match base {
            Base::Prim(d) => {
                let (base, f) = self.dens.open(self.store, d, x)?;
                (base, f.map(|f| (f, d)))
            }
            other => (other, None),
        };
        let Base::Lebesgue { lo, hi } = opened else {
            return None;
        };
        // t = a·x + b: x = (t - b)/a, dx = dt/|a|, bounds mapped
        let tv = self.store.fresh_var("t", ty.clone());
        let tt = self.store.var_term(tv);
        let treal = terms::coerce(self.store, tt, &Type::Real);
        let map_bound = |s: &mut Simp, bound: Option<TermId>| -> Option<TermId> {
            bound.map(|v| {
                let av = s.store.prim(Prim::Mul, vec![a_t, v], Type::Real);
                let sum = s.store.prim(Prim::Add, vec![av, b0], Type::Real);
                canon::canonicalize(s.store, &Context::new(), sum)
            })
        };
        let (mut new_lo, mut new_hi) = (map_bound(self, lo), map_bound(self, hi));
        if negative {
            std::mem::swap(&mut new_lo, &mut new_hi);
        }
        let neg_b = self.store.prim(Prim::Neg, vec![b0], Type::Real);
        let diff = self.store.prim(Prim::Add, vec![treal, neg_b], Type::Real);
        let inv_a = self.store.prim(Prim::Recip, vec![a_t], Type::Real);
        let xval = self.store.prim(Prim::Mul, vec![inv_a, diff], Type::Real);
        let xval = canon::canonicalize(self.store, &Context::new(), xval);
        let xty = self.store.var_type(x).clone();
        let xval = terms::coerce(self.store, xval, &xty);
        let mut t2 = t.clone();
        t2.binds.remove(i);
        if let Some((f, _)) = prior {
            t2.factors.push(Factor::other(f));
        }
        // dx = dt / |a|
        let abs_a = if negative {
            self.store.prim(Prim::Neg, vec![a_t], Type::Real)
        } else {
            a_t
        };
        // 1/|a| in real arithmetic first (`1 / (1 / x)` is `x`), then as a prob
        let jac = self.store.prim(Prim::Recip, vec![abs_a], Type::Real);
        let jac = canon::canonicalize(self.store, &Context::new(), jac);
        let jac = terms::coerce(self.store, jac, &Type::Prob);
        let jac = canon::canonicalize(self.store, &Context::new(), jac);
        t2.factors.push(Factor::other(jac));
        let mut map = FxHashMap::default();
        map.insert(x, xval);
        t2.substitute(self.store, &map);
        t2.binds.push(crate::lin::Bind {
            var: tv,
            base: Base::Lebesgue {
                lo: new_lo,
                hi: new_hi,
            },
        });
        t2.result = tt;
        let before = t2.binds.len();
        let t3 = self.normalise(t2.clone())?;
        let t4 = self.eliminate(t3)?;
        // worth it when a variable went, or when the result is now a draw itself (the
        // rebuild may recognise its density: `x <~ normal(1, 2); return 3 * x` is
        // `normal(3, 6)`; if it does not, the output ranking keeps the input)
        let drawn = t4.binds.len() == 1 && t4.result == tt;
        if t4.binds.len() < before || drawn {
            return Some(vec![t4]);
        }
        self.piecewise(t2, tv, before)
    }

    /// Piecewise integration after a change of variable to `t` (issue 14): with `t`'s
    /// bounds and the other continuous draws' supports written as guards, the range of
    /// `t` is cut where the order of another variable's bounds changes (`x` between
    /// `max(0, t - 1)` and `min(1, t)` for the sum of two uniforms: at `t = 1`), one term
    /// per piece, each with one interval per variable, and the other variables are then
    /// integrated out of every piece. `None` unless each piece loses a variable.
    fn piecewise(&mut self, mut t: LTerm, tv: VarId, before: usize) -> Option<Vec<LTerm>> {
        for k in 0..t.binds.len() {
            let x = t.binds[k].var;
            match t.binds[k].base.clone() {
                Base::Lebesgue { lo, hi } if x == tv => {
                    let tt = self.store.var_term(tv);
                    if let Some(lo) = lo {
                        t.guards.push(terms::compare(self.store, Prim::Lt, lo, tt));
                    }
                    if let Some(hi) = hi {
                        t.guards.push(terms::compare(self.store, Prim::Lt, tt, hi));
                    }
                    t.binds[k].base = Base::Lebesgue { lo: None, hi: None };
                }
                Base::Prim(d) => {
                    let (base, f) = self.dens.open(self.store, d, x)?;
                    if !matches!(base, Base::Lebesgue { .. }) {
                        return None;
                    }
                    t.binds[k].base = base;
                    if let Some(f) = f {
                        t.factors.push(Factor::other(f));
                    }
                }
                _ => {}
            }
        }
        let t = self.normalise(t)?;
        let mut pieces = Vec::new();
        self.split_cases_on(t, &[tv], &mut pieces, 0);
        let mut out = Vec::new();
        for piece in pieces {
            // a piece whose integral is zero is no term
            let Some(p) = self.eliminate(piece) else {
                continue;
            };
            // the piece's own guards on `t` (`1 <= 1 / t`) become its interval
            let Some(p) = self.normalise(p) else {
                continue;
            };
            if p.binds.len() >= before {
                return None;
            }
            out.push(p);
        }
        Some(match self.join_pieces(&out, tv) {
            Some(one) => vec![one],
            None => match self.join_by_indicators(&out, tv) {
                Some(one) => vec![one],
                None => out,
            },
        })
    }

    /// Pieces equal but for `t`'s interval and their factors, the intervals between
    /// rational bounds, as one term: `t` over the whole range, weighted by the piece it
    /// is in (`if t < 1: t else: 2 - t` for the sum of two uniforms), zero in any gap. A
    /// piece may hold `t` as a prob (its interval non-negative): its factors then read
    /// `real2prob(t)`, defined where they are used.
    fn join_pieces(&mut self, pieces: &[LTerm], tv: VarId) -> Option<LTerm> {
        /// A piece's bounds of `t` (rational, `None` infinite), as terms, and its weight.
        type Span = (
            Option<slic_algebra::num::Rational>,
            Option<slic_algebra::num::Rational>,
            Option<TermId>,
            Option<TermId>,
            TermId,
        );
        let first = pieces.first()?;
        let at = piece_draw_at(self.store, pieces, tv)?;
        let tt = self.store.var_term(tv);
        let mut spans = Vec::new();
        for p in pieces {
            let b = p.binds.get(at)?;
            let v = b.var;
            let same = same_but_draw(self.store, p, first, at)
                && p.guards.is_empty()
                && first.guards.is_empty();
            let Base::Lebesgue { lo, hi } = b.base else {
                return None;
            };
            // a bound is rational or infinite (`None`)
            let value = |s: &Simp, v: Option<TermId>| match v {
                Some(v) => terms::lit_value(s.store, v).map(Some),
                None => Some(None),
            };
            let (l, h) = (value(self, lo)?, value(self, hi)?);
            let nonempty = match (&l, &h) {
                (Some(l), Some(h)) => l < h,
                _ => true,
            };
            if !same || !nonempty {
                return None;
            }
            let fs: Vec<TermId> = p.factors.iter().map(|f| f.term).collect();
            let w = terms::product(self.store, fs);
            let w = self.tidy_weight(p, w);
            let vty = self.store.var_type(v).clone();
            let mut map = FxHashMap::default();
            map.insert(v, terms::coerce(self.store, tt, &vty));
            let w = vars::substitute(self.store, w, &map);
            spans.push((l, h, lo, hi, w));
        }
        // pieces that each reach to infinity (`(-∞, 0)` and `(0, ∞)`, the two halves of a
        // Laplace) stay apart: each may be a named law on its half-line
        if spans.iter().all(|s| s.0.is_none() || s.1.is_none()) {
            return None;
        }
        // by lower bound, -∞ first; each piece must end where the next begins or before
        spans.sort_by(|a, b| match (&a.0, &b.0) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Less,
            (_, None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => x.cmp(y),
        });
        let overlap = |w: &[Span]| match (&w[0].1, &w[1].0) {
            (Some(h), Some(l)) => l < h,
            _ => true,
        };
        if spans.windows(2).any(overlap) {
            return None;
        }
        // from the last piece back: `if t < hi_i: (if lo_i < t: w_i else: 0) else: rest`
        let zero = terms::int(self.store, 0, &Type::Prob);
        let mut weight = zero;
        for (k, (_, _, lo, hi, w)) in spans.iter().enumerate().rev() {
            let inside = match lo {
                Some(lo) if k > 0 && spans[k - 1].1 != spans[k].0 => {
                    let lo = terms::coerce(self.store, *lo, &Type::Real);
                    let above = terms::compare(self.store, Prim::Lt, lo, tt);
                    self.store.intern(Node::If(above, *w, zero), Type::Prob)
                }
                _ => *w,
            };
            weight = match hi {
                Some(hi) if k + 1 < spans.len() => {
                    let hi = terms::coerce(self.store, *hi, &Type::Real);
                    let below = terms::compare(self.store, Prim::Lt, tt, hi);
                    self.store
                        .intern(Node::If(below, inside, weight), Type::Prob)
                }
                _ => inside,
            };
        }
        // one draw of `t` itself over the pieces' range (a piece's own variable for it, a
        // prob where its interval is non-negative, was substituted by `t` above)
        if *self.store.var_type(tv) == Type::Prob
            && spans[0].0.as_ref().is_none_or(|l| l.is_negative())
        {
            return None;
        }
        let real =
            |s: &mut Simp, v: Option<TermId>| v.map(|v| terms::coerce(s.store, v, &Type::Real));
        let mut one = first.clone();
        one.binds[at] = crate::lin::Bind {
            var: tv,
            base: Base::Lebesgue {
                lo: real(self, spans[0].2),
                hi: real(self, spans[spans.len() - 1].3),
            },
        };
        one.result = tt;
        one.factors = vec![Factor::other(weight)];
        Some(one)
    }

    /// Pieces equal but for `t`'s interval, their guards and their factors, where some
    /// piece's interval has a bound that is not rational (`uniform(0, a) + uniform(0,
    /// b)`: pieces between `0`, `a`, `b` and `a + b`, in an order that depends on the
    /// parameters), as one draw of `t` over the whole line weighted by the sum of the
    /// pieces' weights, each under the indicator of its interval and guards:
    /// `Σ_i ∫_{I_i} [G_i] w_i h(t) dt = ∫ Σ_i [t ∈ I_i ∧ G_i] w_i h(t) dt`, written as
    /// `if t ∈ I_1 ∧ G_1: w_1 else: if ..` (the pieces are disjoint).
    fn join_by_indicators(&mut self, pieces: &[LTerm], tv: VarId) -> Option<LTerm> {
        let first = pieces.first()?;
        let at = piece_draw_at(self.store, pieces, tv)?;
        let symbolic = pieces
            .iter()
            .any(|p| match p.binds.get(at).map(|b| &b.base) {
                Some(Base::Lebesgue { lo, hi }) => lo
                    .iter()
                    .chain(hi.iter())
                    .any(|&v| terms::lit_value(self.store, v).is_none()),
                _ => false,
            });
        if !symbolic {
            return None;
        }
        let tt = self.store.var_term(tv);
        let treal = terms::coerce(self.store, tt, &Type::Real);
        let zero = terms::int(self.store, 0, &Type::Prob);
        let mut parts = Vec::new();
        for p in pieces {
            let b = p.binds.get(at)?;
            let v = b.var;
            let Base::Lebesgue { lo, hi } = b.base else {
                return None;
            };
            if !same_but_draw(self.store, p, first, at) {
                return None;
            }
            let vty = self.store.var_type(v).clone();
            let mut map = FxHashMap::default();
            map.insert(v, terms::coerce(self.store, tt, &vty));
            let mut conds = Vec::new();
            if let Some(lo) = lo {
                let lo = terms::coerce(self.store, lo, &Type::Real);
                conds.push(terms::compare(self.store, Prim::Lt, lo, treal));
            }
            if let Some(hi) = hi {
                let hi = terms::coerce(self.store, hi, &Type::Real);
                conds.push(terms::compare(self.store, Prim::Lt, treal, hi));
            }
            for &g in &p.guards {
                conds.push(vars::substitute(self.store, g, &map));
            }
            let fs: Vec<TermId> = p.factors.iter().map(|f| f.term).collect();
            let w = terms::product(self.store, fs);
            let w = vars::substitute(self.store, w, &map);
            let c = match conds.len() {
                0 => self.store.intern(Node::Bool(true), Type::Bool),
                1 => conds[0],
                _ => self.store.prim(Prim::And, conds, Type::Bool),
            };
            parts.push((c, w));
        }
        // the pieces are leaves of one tree of case splits, so at most one indicator
        // holds at a point: the sum is the first piece that holds
        let mut weight = zero;
        for (c, w) in parts.into_iter().rev() {
            weight = self.store.intern(Node::If(c, w, weight), Type::Prob);
        }
        let mut one = first.clone();
        one.binds[at] = crate::lin::Bind {
            var: tv,
            base: Base::Lebesgue { lo: None, hi: None },
        };
        one.guards = Vec::new();
        one.result = tt;
        one.factors = vec![Factor::other(weight)];
        // canonical as a second simplification would write it
        self.normalise(one)
    }

    /// Step 5: terms with the same binds, guards, result and non-constant factors merge,
    /// their constant factors added.
    fn merge(&mut self, lin: Lin) -> Lin {
        let mut out: Vec<LTerm> = Vec::new();
        let mut weights: Vec<Vec<TermId>> = Vec::new();
        for t in lin {
            let (c, rest) = self.split_constant(&t);
            let mut found = None;
            for (k, o) in out.iter().enumerate() {
                if self.same_up_to_bound_names(o, &rest) {
                    found = Some(k);
                    break;
                }
            }
            match found {
                Some(k) => weights[k].push(c),
                None => {
                    out.push(rest);
                    weights.push(vec![c]);
                }
            }
        }
        let mut merged = Vec::new();
        for (mut t, ws) in out.into_iter().zip(weights) {
            let w = if ws.len() == 1 {
                ws[0]
            } else {
                self.store.prim(Prim::Add, ws, Type::Prob)
            };
            let w = canon::canonicalize(self.store, &Context::new(), w);
            if terms::lit_value(self.store, w).is_some_and(|v| v.is_zero()) {
                continue;
            }
            if !terms::lit_value(self.store, w).is_some_and(|v| v.is_one()) {
                t.factors.insert(0, Factor::other(w));
            }
            merged.push(t);
        }
        self.join_complements(merged)
    }

    /// Terms equal but for one guard, `g` in one and `not g` in the other, are one term
    /// without it (issue 14, equal branches: `[g]·T + [not g]·T = T`), as often as that
    /// applies.
    fn join_complements(&mut self, mut lin: Lin) -> Lin {
        'again: loop {
            for i in 0..lin.len() {
                for j in i + 1..lin.len() {
                    if let Some(t) = self.complements(&lin[i], &lin[j]) {
                        lin[i] = t;
                        lin.remove(j);
                        continue 'again;
                    }
                }
            }
            return lin;
        }
    }

    /// `a` without `g` when `b` is `a` with `not g` in place of `g` (up to bound names).
    fn complements(&mut self, a: &LTerm, b: &LTerm) -> Option<LTerm> {
        if a.guards.len() != b.guards.len() || a.guards.is_empty() {
            return None;
        }
        for k in 0..a.guards.len() {
            let g = a.guards[k];
            let ng = cond::negate(self.store, g);
            let Some(l) = b.guards.iter().position(|&x| x == ng) else {
                continue;
            };
            let mut a2 = a.clone();
            a2.guards.remove(k);
            let mut b2 = b.clone();
            b2.guards.remove(l);
            if self.same_up_to_bound_names(&a2, &b2) {
                return Some(a2);
            }
        }
        None
    }

    /// Are `a` and `b` the same term once `b`'s bound variables are renamed to `a`'s?
    fn same_up_to_bound_names(&mut self, a: &LTerm, b: &LTerm) -> bool {
        if a.binds.len() != b.binds.len()
            || a.factors.len() != b.factors.len()
            || a.guards.len() != b.guards.len()
        {
            return false;
        }
        let mut map = FxHashMap::default();
        for (x, y) in a.binds.iter().zip(&b.binds) {
            if self.store.var_type(x.var) != self.store.var_type(y.var) {
                return false;
            }
            if x.var != y.var {
                let xt = self.store.var_term(x.var);
                map.insert(y.var, xt);
            }
        }
        let mut b2 = b.clone();
        for (bind, x) in b2.binds.iter_mut().zip(&a.binds) {
            bind.var = x.var;
        }
        b2.substitute(self.store, &map);
        let factor_terms = |t: &LTerm| t.factors.iter().map(|f| f.term).collect::<Vec<_>>();
        a.binds == b2.binds
            && a.guards == b2.guards
            && a.result == b2.result
            && factor_terms(a) == factor_terms(&b2)
    }

    /// A term's constant factor (1 if none) and the term without it.
    fn split_constant(&mut self, t: &LTerm) -> (TermId, LTerm) {
        let bound = t.bound_vars();
        let mut rest = t.clone();
        let mut cs = Vec::new();
        rest.factors.retain(|f| {
            if vars::mentions_any(self.store, f.term, &bound) {
                true
            } else {
                cs.push(f.term);
                false
            }
        });
        (terms::product(self.store, cs), rest)
    }
}

/// Where pieces of a change of variable draw `t`: the position of the bind that is `t`,
/// or whose variable the first piece returns (as a real: a piece that holds `t` as a prob
/// returns `prob2real` of it). `None` for fewer than two pieces.
fn piece_draw_at(store: &Store, pieces: &[LTerm], tv: VarId) -> Option<usize> {
    let first = pieces.first()?;
    if pieces.len() < 2 {
        return None;
    }
    first
        .binds
        .iter()
        .position(|b| b.var == tv || returns_var(store, first, b.var))
}

/// Does `p` return its variable `v` (or `prob2real(v)`)?
fn returns_var(store: &Store, p: &LTerm, v: VarId) -> bool {
    let is_v = |t: TermId| matches!(store.node(t), Node::Var(w) if *w == v);
    match store.node(p.result) {
        Node::Coerce(Coercion::Prob2Real, x) => is_v(*x),
        _ => is_v(p.result),
    }
}

/// Is the piece `p` drawn as `first` is, but for its draw at `at`, which it returns?
fn same_but_draw(store: &Store, p: &LTerm, first: &LTerm, at: usize) -> bool {
    p.binds
        .get(at)
        .is_some_and(|b| returns_var(store, p, b.var))
        && p.binds.len() == first.binds.len()
        && p.binds
            .iter()
            .zip(&first.binds)
            .enumerate()
            .all(|(k, (a, b))| k == at || a == b)
}

/// Is the prob term `t` positive by its shape: positive literals, `exp`, `pi`, and sums,
/// products, quotients, powers and roots of such?
pub(crate) fn evidently_positive(store: &Store, t: TermId, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    let pos = |x: &TermId| evidently_positive(store, *x, depth + 1);
    match store.node(t) {
        Node::Lit(v) => v.is_positive(),
        Node::Prim(Prim::Exp | Prim::Pi, _) => true,
        Node::Prim(Prim::Add | Prim::Mul, xs) => !xs.is_empty() && xs.iter().all(pos),
        Node::Prim(Prim::Recip | Prim::Sqrt, xs) => xs.iter().all(pos),
        Node::Prim(Prim::Pow | Prim::RealPow | Prim::NatRoot, xs) => xs.first().is_some_and(pos),
        Node::Coerce(Coercion::Nat2Prob | Coercion::Prob2Real, x) => pos(x),
        _ => false,
    }
}

/// The first `if c: a else: b` inside `f` (outside binders that capture a variable of
/// it) whose condition does not mention `x`: `(the node, c, a, b)`. A case of the
/// parameters that an integral over `x` may be split on.
fn nested_case(store: &Store, f: TermId, x: VarId) -> Option<(TermId, TermId, TermId, TermId)> {
    fn walk(
        store: &Store,
        t: TermId,
        x: VarId,
        bound: &mut Vec<VarId>,
        seen: &mut rustc_hash::FxHashSet<TermId>,
    ) -> Option<(TermId, TermId, TermId, TermId)> {
        if bound.is_empty() && !seen.insert(t) {
            return None;
        }
        let node = store.node(t);
        if let Node::If(c, a, b) = *node {
            if !vars::mentions(store, c, x) && !vars::mentions_any(store, c, bound) {
                return Some((t, c, a, b));
            }
        }
        let mut binds = Vec::new();
        vars::binders(node, &mut binds);
        let before = bound.len();
        bound.extend(binds);
        let mut found = None;
        for ch in node.children() {
            found = slic_algebra::stack::grow(|| walk(store, ch, x, bound, seen));
            if found.is_some() {
                break;
            }
        }
        bound.truncate(before);
        found
    }
    walk(
        store,
        f,
        x,
        &mut Vec::new(),
        &mut rustc_hash::FxHashSet::default(),
    )
}

/// `if c: a else: 0` (or `if c: 0 else: a`, as `not c`), or the same written as a
/// `match` on a bool, as `(c, a)`.
pub(crate) fn guarded_factor(store: &mut Store, t: TermId) -> Option<(TermId, TermId)> {
    // a `match` on a bool reads as its `if` (issue 14: indicators written with `match`)
    let (c, a, b) = branches(store, t)?;
    let zero = |s: &Store, x: TermId| terms::lit_value(s, x).is_some_and(|v| v.is_zero());
    if zero(store, b) {
        Some((c, a))
    } else if zero(store, a) {
        Some((terms::not(store, c), b))
    } else {
        None
    }
}

/// `if c: a else: b`, or a `match` on a bool with its two arms, as `(c, a, b)`.
fn branches(store: &mut Store, t: TermId) -> Option<(TermId, TermId, TermId)> {
    match store.node(t).clone() {
        Node::If(c, a, b) => Some((c, a, b)),
        Node::Match(e, arms) if *store.ty(e) == Type::Bool => {
            // the first arm that matches `v` (an arm binding the value: not read here)
            let arm = |v: bool| {
                for (p, body) in &arms {
                    match p {
                        Pattern::Bool(b) if *b != v => {}
                        Pattern::Bool(_) | Pattern::Wild => return Some(*body),
                        _ => return None,
                    }
                }
                None
            };
            Some((e, arm(true)?, arm(false)?))
        }
        _ => None,
    }
}

/// Does the prob term `t` have a `real2prob` at its top or in a top-level product?
fn has_real2prob(store: &Store, t: TermId) -> bool {
    match store.node(t) {
        Node::Coerce(Coercion::Real2Prob, _) => true,
        Node::Prim(Prim::Mul, xs) => xs
            .iter()
            .any(|&x| matches!(store.node(x), Node::Coerce(Coercion::Real2Prob, _))),
        _ => false,
    }
}
