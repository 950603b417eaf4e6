//! Telescoping products (issue 10, deliverable 4: the Dirichlet's stick-breaking Beta
//! products closed into counts):
//!
//! `Π_{k=lo}^{hi-1} F(k+1) / F(k) = F(hi) / F(lo)` (an empty range: 1),
//!
//! recognised by meaning in a product body that is one monomial: a `Γ(a(k))` above the
//! fraction bar and a `Γ(b(k))` below it with `b(k+1) = a(k)` (or `a(k+1) = b(k)`, the
//! reverse). The stick-breaking Dirichlet integrated against categorical labels leaves
//! `Π_k B(α'_k, β'_k) / B(α_k, β_k)` (eq. (14) of the arrays paper) with `α_k = Σ_{j>k}
//! as[j]`, `β_k = as[k]`, `α'_k = α_k + #{j: k < y[j]}`, `β'_k = β_k + #{j: y[j] == k}`;
//! written with gammas (`B(x, y) = Γ(x)Γ(y)/Γ(x+y)`) its factors `Γ(α_k + β_k)/Γ(α_k)` and
//! `Γ(α'_k)/Γ(α'_k + β'_k)` telescope, leaving `Π_k Γ(as[k] + cnt_k)/Γ(as[k])` and the
//! Dirichlet-multinomial normaliser. The betas of a product body are expanded only when
//! that lets a telescope or a gamma ratio (`sums/gamma.rs`: `B(x+1, y)/B(x, y)` is
//! `x/(x+y)`) close; otherwise the body is left as it was.
//!
//! The equality `b(k+1) = a(k)` is not canonical: `as[k+1] + Σ_{j=k+2}^{m-1} as[j]` and
//! `Σ_{j=k+1}^{m-1} as[j]` are different atoms, as are `#{k+2 <= y[j]} + #{y[j] == k+1}`
//! and `#{k+1 <= y[j]}`. [`provably_equal`] decides it: the canonical difference is read
//! as a linear combination of atoms; sums over the same upper bound are brought to one
//! lower bound by peeling their first terms off (where the context proves the common
//! lower bound is at most the upper one), merged into one sum, and that sum's body is
//! shown to be 0 by cases on the atomic conditions of its guards (each case a context in
//! which canonicalisation folds every guard; a case the context refutes is skipped). It
//! answers true only with a proof, so a miss leaves the product as it was.
//!
//! Validity: the closure needs `F(k)` finite and non-zero on `lo..=hi`; it is applied to
//! `Γ` of prob arguments (finite and positive away from the pole at 0, the stance of
//! `gamma.rs`). `F(hi)` and `F(lo)` read only what the loop read when the range is not
//! empty, so the closed factor is guarded by `lo < hi` unless the context decides it.

use super::Loop;
use crate::assume::{Context, Tri};
use crate::canon::{self, Kernel, Normal, Overflow};
use crate::cond::{self, linear_form, Comparison, Linear, Rel};
use crate::num::Rational;
use crate::poly::Poly;
use crate::term::{Node, Prim, Store, TermId, VarId};
use crate::types::{Coercion, Type};
use crate::vars;

/// The most leading terms peeled off a sum to align its lower bound with another's.
const MAX_PEEL: i64 = 4;

/// The most atomic conditions a merged sum's body is split on (`2^n` cases at most).
const MAX_ATOMS: usize = 6;

impl Loop<'_, '_> {
    /// For a product body `n`: `(closed, rest)` with `Π n = closed · Π rest`, where
    /// `closed` holds the telescoped factors (guarded by a non-empty range) and `rest`
    /// the body without them; `(1, n)` when nothing telescopes or closes.
    pub(super) fn telescope(&mut self, n: &Normal) -> Result<(Normal, Normal), Overflow> {
        let expanded = self.expand_betas(n)?;
        let mut body = expanded.unwrap_or_else(|| n.clone());
        let mut closed = Normal::one();
        let mut used = false;
        // the gamma ratios first (`B(x + 1, y) / B(x, y)` is `x / (x + y)`): their
        // quotients telescope as polynomials (a Dirichlet's predictive weight), where the
        // gammas' own telescope would leave four gammas at the ends
        let before = self.changed;
        self.changed = false;
        let r = self.gamma_ratios(&body)?;
        if self.changed {
            body = r;
            used = true;
        }
        self.changed = before;
        let mut ends = Ends::Defined;
        if let Some((c, r, e)) = self.telescope_factors(&body)? {
            closed = c;
            ends = e;
            body = r;
            used = true;
        }
        if !used {
            // the betas' expansion did not pay: the body stays as it was
            return Ok((Normal::one(), n.clone()));
        }
        self.changed = true;
        let closed = match ends {
            _ if closed.as_constant().is_some_and(|c| c.is_one()) => closed,
            // F(lo) is defined: on an empty range the closed form is F(lo)/F(lo) = 1 too
            Ends::Defined => self.guard_range(closed, 1),
            Ends::Unknown => self.guard_nonempty(closed),
        };
        Ok((closed, body))
    }

    /// `n` with each `betaFunc(x, y)` kernel of its one-monomial numerator and
    /// denominator written `Γ(x) Γ(y) / Γ(x + y)`; `None` when there is none.
    fn expand_betas(&mut self, n: &Normal) -> Result<Option<Normal>, Overflow> {
        let mut betas = Vec::new();
        for (p, up) in [(n.num(), true), (n.den(), false)] {
            let [(m, _)] = p.terms() else {
                continue;
            };
            for &(k, e) in m.pairs() {
                let Some(Kernel::Atom(t)) = self.cx.kernels().get(k).map(|i| i.kernel.clone())
                else {
                    continue;
                };
                if let Node::Prim(Prim::BetaFunc, args) = self.cx.store().node(t) {
                    if let [x, y] = args.as_slice() {
                        betas.push((k, e, *x, *y, up));
                    }
                }
            }
        }
        if betas.is_empty() {
            return Ok(None);
        }
        let mut acc = n.clone();
        for (k, e, x, y, up) in betas {
            let gx = self.gamma_of(x);
            let gy = self.gamma_of(y);
            let s = self.store().prim(Prim::Add, vec![x, y], Type::Prob);
            let gs = self.gamma_of(s);
            let top = self.cx.mul(&gx, &gy)?;
            let gs = gs.recip().ok_or(Overflow)?;
            let g = self.cx.mul(&top, &gs)?;
            let b = Normal::kernel(k).recip().ok_or(Overflow)?;
            // B^e replaced by (Γ(x)Γ(y)/Γ(x+y))^e; below the bar, its reciprocal
            let (g, b) = if up {
                (g, b)
            } else {
                (g.recip().ok_or(Overflow)?, Normal::kernel(k))
            };
            let g = self.cx.pow(&g, i64::from(e))?.ok_or(Overflow)?;
            let b = self.cx.pow(&b, i64::from(e))?.ok_or(Overflow)?;
            acc = self.cx.mul(&acc, &b)?;
            acc = self.cx.mul(&acc, &g)?;
        }
        Ok(Some(acc))
    }

    /// `Γ(x)` of a prob term, as a canonical form.
    fn gamma_of(&mut self, x: TermId) -> Normal {
        let g = self.gamma_term(x);
        self.cx.normal_of(g)
    }

    /// The term `gammaFunc(x)` (its argument real, as the primitive wants).
    fn gamma_term(&mut self, x: TermId) -> TermId {
        let s = self.store();
        let x = match s.ty(x).clone() {
            Type::Real => x,
            ty => match Coercion::safe(&ty, &Type::Real) {
                Some(c) => s.intern(Node::Coerce(c, x), Type::Real),
                None => x,
            },
        };
        s.prim(Prim::GammaFunc, vec![x], Type::Prob)
    }

    /// The telescoping pairs of factors of a body closed: `(closed, rest)`, or `None`
    /// when there is no such pair.
    fn telescope_factors(
        &mut self,
        n: &Normal,
    ) -> Result<Option<(Normal, Normal, Ends)>, Overflow> {
        let top = self.factors(n.num());
        let bottom = self.factors(n.den());
        if top.is_empty() || bottom.is_empty() {
            return Ok(None);
        }
        let ctx = self.decision_context();
        let mut closed = Normal::one();
        let mut rest = n.clone();
        let mut used = vec![false; bottom.len()];
        let mut found = false;
        let mut ends = Ends::Defined;
        for (nt, et, at) in &top {
            for (j, (nb, eb, ab)) in bottom.iter().enumerate() {
                if used[j] {
                    continue;
                }
                // Π T(k)/B(k) with B(k+1) = T(k) is B(hi)/B(lo); with T(k+1) = B(k) it
                // is T(lo)/T(hi)
                let (f, t, up) = if self.shifted_equal(&ctx, *ab, *at) {
                    (*ab, *at, true)
                } else if self.shifted_equal(&ctx, *at, *ab) {
                    (*at, *ab, false)
                } else {
                    continue;
                };
                let defined = self.defined_at_lo(f);
                if !defined {
                    ends = Ends::Unknown;
                }
                let part = self.end_ratio(f, t, up, defined)?;
                let e = i64::from(*et.min(eb));
                let pair = self.cx.pow(nb, e)?.ok_or(Overflow)?;
                let inv = self.cx.pow(nt, -e)?.ok_or(Overflow)?;
                let pair = self.cx.mul(&pair, &inv)?;
                rest = self.cx.mul(&rest, &pair)?;
                let part = self.cx.pow(&part, e)?.ok_or(Overflow)?;
                closed = self.cx.mul(&closed, &part)?;
                used[j] = true;
                found = true;
                break;
            }
        }
        Ok(found.then_some((closed, rest, ends)))
    }

    /// Is `F(lo)` defined (every array read in bounds, every unsafe coercion of a
    /// non-negative value), as the context outside the loop proves?
    fn defined_at_lo(&mut self, f: TermId) -> bool {
        let (var, lo) = (self.var, self.lo);
        let outside = self.outside.clone();
        let s = self.store();
        let at = vars::substitute1(s, f, var, lo);
        defined(s, &outside, at)
    }

    /// The factors of one side of a body that may telescope, each with its exponent and
    /// its term: the kernels of a one-monomial side that depend on the index (a `Γ` of a
    /// prob argument or a prob-valued kernel), or the whole side when it is a sum of
    /// monomials (`x / (x + y)`), prob-valued and dependent on the index.
    fn factors(&mut self, p: &Poly) -> Vec<(Normal, u32, TermId)> {
        let mut out = Vec::new();
        if let [(m, _)] = p.terms() {
            for &(k, e) in m.pairs() {
                if !self.depends(k) || self.is_index(k) {
                    continue;
                }
                let Some(t) = self.cx.natural_term(k) else {
                    continue;
                };
                let ok = match self.cx.store().node(t) {
                    Node::Prim(Prim::GammaFunc, args) => match args.as_slice() {
                        [a] => self.positive(*a),
                        _ => false,
                    },
                    _ => self.cx.fits(&Normal::kernel(k), &Type::Prob),
                };
                if ok {
                    out.push((Normal::kernel(k), e, t));
                }
            }
        } else if p.as_constant().is_none() {
            let n = Normal::from_poly(p.clone());
            if self.normal_depends(&n) && self.cx.fits(&n, &Type::Prob) {
                let t = self.cx.write(&n, &Type::Prob);
                out.push((n, 1, t));
            }
        }
        out
    }

    /// Is the argument `a` of a `Γ` a prob (positive wherever `Γ(a)` is finite)?
    fn positive(&mut self, a: TermId) -> bool {
        let n = self.cx.normal_of(a);
        self.cx.fits(&n, &Type::Prob)
    }

    /// Does `f(k + 1) = g(k)` hold on the loop's range, `f` and `g` terms in the index?
    fn shifted_equal(&mut self, ctx: &Decision, f: TermId, g: TermId) -> bool {
        let (var, index) = (self.var, self.index);
        let ty = self.cx.store().var_type(var).clone();
        let s = self.store();
        let one = s.intern(Node::Lit(Rational::one()), ty.clone());
        let next = s.prim(Prim::Add, vec![index, one], ty);
        let f1 = vars::substitute1(s, f, var, next);
        provably_equal(s, ctx, f1, g)
    }

    /// `F(hi) / F(lo)` (`up`) or its reciprocal, `F` a term in the index and `T` its
    /// partner (`F(k+1) = T(k)`). The lower end is written `T(lo - 1)` (`T` with every
    /// linear use of the index lowered by one) when the context outside the loop proves
    /// it equal to `F(lo)`: the telescoped sums and counts of a stick then read as one
    /// sum and one count from `lo` (`A + n` rather than `as[0] + Σ_{j>0} as[j] + ...`).
    ///
    /// `defined`: is `F(lo)` defined (the closed form is then guarded by `lo <= hi`)? If
    /// not, it is guarded by `lo < hi`, which the lower end may then assume (and, for an
    /// upper bound `int2nat(e)`, `lo < e`).
    fn end_ratio(
        &mut self,
        f: TermId,
        t: TermId,
        up: bool,
        defined: bool,
    ) -> Result<Normal, Overflow> {
        let (var, lo, hi) = (self.var, self.lo, self.hi);
        let mut ctx = self.outside.clone();
        let s = self.store();
        let at_hi = vars::substitute1(s, f, var, hi);
        let mut at_lo = vars::substitute1(s, f, var, lo);
        if let Some(below) = shift_down(s, t, var) {
            let lower = vars::substitute1(s, below, var, lo);
            if !defined {
                let nonempty = s.prim(Prim::Lt, vec![lo, hi], Type::Bool);
                ctx = ctx.with_condition(nonempty, true);
                if let Node::Coerce(Coercion::Int2Nat, e) = *s.node(hi) {
                    let l = s.intern(Node::Coerce(Coercion::Nat2Int, lo), Type::Int);
                    let below_e = s.prim(Prim::Lt, vec![l, e], Type::Bool);
                    ctx = ctx.with_condition(below_e, true);
                }
            }
            let dec = Decision { ctx, bound: None };
            if provably_equal(self.store(), &dec, at_lo, lower) {
                at_lo = lower;
            }
        }
        let f_hi = self.cx.normal_of(at_hi);
        let f_lo = self.cx.normal_of(at_lo);
        let (a, b) = if up { (f_hi, f_lo) } else { (f_lo, f_hi) };
        let b = b.recip().ok_or(Overflow)?;
        self.cx.mul(&a, &b)
    }

    /// `x` where the range is not empty (`lo < hi`), 1 elsewhere.
    fn guard_nonempty(&mut self, x: Normal) -> Normal {
        if x.as_constant().is_some_and(|c| c.is_one()) {
            return x;
        }
        let (lo, hi) = (self.lo, self.hi);
        let c = self.store().prim(Prim::Lt, vec![lo, hi], Type::Bool);
        let outside = self.outside.clone();
        let c = cond::canonical(self.store(), &outside, c);
        match cond::decide(self.store(), &outside, c) {
            Tri::True => x,
            Tri::False => Normal::one(),
            Tri::Unknown => self.if_normal(c, &x, 1),
        }
    }

    /// The context the equalities are decided in: the loop's range, and for an upper
    /// bound `int2nat(e)` also `k < e` (`k < max(e, 0)` and `0 <= k` give it), which the
    /// linear decision cannot see through the coercion.
    fn decision_context(&mut self) -> Decision {
        let mut ctx = self.inside.clone();
        let mut top = self.hi;
        if let Node::Coerce(Coercion::Int2Nat, e) = *self.cx.store().node(self.hi) {
            let index = self.index;
            let s = self.store();
            let k = s.intern(Node::Coerce(Coercion::Nat2Int, index), Type::Int);
            let below = s.prim(Prim::Lt, vec![k, e], Type::Bool);
            let below = cond::canonical(s, &ctx, below);
            ctx = ctx.with_condition(below, true);
            top = e;
        }
        Decision {
            ctx,
            bound: Some(Bound {
                var: self.var,
                index: self.index,
                top,
                outside: self.outside.clone(),
            }),
        }
    }
}

/// Whether the closed ends `F(hi)/F(lo)` are known to be defined on an empty range.
#[derive(Clone, Copy)]
enum Ends {
    Defined,
    Unknown,
}

/// Is `t` defined under `ctx`: every array read `a[i]` proved in bounds, every
/// `int2nat`/`real2prob` of a value proved non-negative, no binder but loops and arrays
/// (whose ranges enter the context)? False is "not shown".
fn defined(store: &mut Store, ctx: &Context, t: TermId) -> bool {
    crate::stack::grow(|| defined_here(store, ctx, t))
}

fn defined_here(store: &mut Store, ctx: &Context, t: TermId) -> bool {
    let node = store.node(t).clone();
    match node {
        Node::Index(a, i) => {
            let n = store.prim(Prim::Size, vec![a], Type::Nat);
            let inside = store.prim(Prim::Lt, vec![i, n], Type::Bool);
            cond::decide(store, ctx, inside) == Tri::True
                && defined(store, ctx, a)
                && defined(store, ctx, i)
        }
        Node::Coerce(c, x) if !c.is_safe() => {
            let ok = match c {
                Coercion::Int2Nat | Coercion::Real2Prob => {
                    let ty = store.ty(x).clone();
                    let zero = store.intern(Node::Lit(Rational::zero()), ty);
                    let nonneg = store.prim(Prim::Le, vec![zero, x], Type::Bool);
                    cond::decide(store, ctx, nonneg) == Tri::True
                }
                _ => true,
            };
            ok && defined(store, ctx, x)
        }
        Node::Summate(_, lo, hi, body) | Node::Product(_, lo, hi, body) => {
            let Some(inner) = ctx.enter_body(store, t) else {
                return false;
            };
            defined(store, ctx, lo) && defined(store, ctx, hi) && defined(store, &inner, body)
        }
        Node::Array(_, n, body) => {
            let Some(inner) = ctx.enter_body(store, t) else {
                return false;
            };
            defined(store, ctx, n) && defined(store, &inner, body)
        }
        Node::If(c, a, b) => {
            let (ta, tb) = (ctx.enter_branch(c, true), ctx.enter_branch(c, false));
            defined(store, ctx, c) && defined(store, &ta, a) && defined(store, &tb, b)
        }
        _ if node.binder().is_some() || matches!(node, Node::Match(..) | Node::App(..)) => false,
        _ => node
            .children()
            .into_iter()
            .all(|ch| defined(store, ctx, ch)),
    }
}

/// Where an equality is decided: the context, and the loop the index ranges over (for
/// bounds the linear decision cannot chain: `k < l` inside and `l + 1 < m` outside give
/// `k + 2 <= m`).
pub(crate) struct Decision {
    pub(crate) ctx: Context,
    pub(crate) bound: Option<Bound>,
}

/// The loop of a [`Decision`]: index `var < top` (its term `index`) under `outside`.
pub(crate) struct Bound {
    var: VarId,
    index: TermId,
    top: TermId,
    outside: Context,
}

/// Is `a = b` (numeric terms) provable under `ctx`? True when the canonical forms agree,
/// or when their difference, a linear combination of atoms, is 0 once the sums in it over
/// a common upper bound are aligned and merged (see the module doc). Never true without
/// a proof; false is "not shown".
pub(crate) fn provably_equal(store: &mut Store, dec: &Decision, a: TermId, b: TermId) -> bool {
    let ctx = &dec.ctx;
    let ca = canon::canonicalize(store, ctx, a);
    let cb = canon::canonicalize(store, ctx, b);
    if ca == cb {
        return true;
    }
    // the same function of equal arguments (`Γ(a)` and `Γ(b)` with `a = b`)
    if let (Node::Prim(p, xs), Node::Prim(q, ys)) = (store.node(ca).clone(), store.node(cb).clone())
    {
        if p == q
            && xs.len() == ys.len()
            && !matches!(p, Prim::Add | Prim::Mul | Prim::Neg | Prim::Recip)
        {
            return xs
                .iter()
                .zip(&ys)
                .all(|(&x, &y)| provably_equal(store, dec, x, y));
        }
    }
    let ar = to_real(store, ca);
    let br = to_real(store, cb);
    let nb = store.prim(Prim::Neg, vec![br], Type::Real);
    let d = store.prim(Prim::Add, vec![ar, nb], Type::Real);
    let d = canon::canonicalize(store, ctx, d);
    if is_zero(store, d) {
        return true;
    }
    let lin = linear_form(store, d);
    let mut rest = vec![lit(store, lin.constant.clone())];
    // sums keyed by upper bound and index type: (coefficient, index, lower bound, body)
    let mut groups: Vec<(TermId, Type, Vec<Piece>)> = Vec::new();
    for (atom, c) in &lin.terms {
        match *store.node(*atom) {
            Node::Summate(v, lo, hi, body) => {
                let ty = store.var_type(v).clone();
                let piece = Piece {
                    coef: c.clone(),
                    var: v,
                    lo,
                    body,
                };
                match groups.iter_mut().find(|g| g.0 == hi && g.1 == ty) {
                    Some(g) => g.2.push(piece),
                    None => groups.push((hi, ty, vec![piece])),
                }
            }
            _ => {
                let t = scaled(store, c, *atom);
                rest.push(t);
            }
        }
    }
    if groups.is_empty() {
        return false;
    }
    // the cheap parts first: a sum alone (one sign) is not cancelled by anything, and
    // the terms outside the sums must cancel before any body is split by cases
    let mut merged = Vec::with_capacity(groups.len());
    for (hi, ty, pieces) in groups {
        let signs = |p: &Piece| p.coef.is_positive();
        if pieces.iter().all(signs) || !pieces.iter().any(signs) {
            return false;
        }
        let Some((peeled, body, inner)) = align(store, dec, hi, &ty, &pieces) else {
            return false;
        };
        rest.extend(peeled);
        merged.push((body, inner));
    }
    let r = store.prim(Prim::Add, rest, Type::Real);
    let r = canon::canonicalize(store, ctx, r);
    is_zero(store, r)
        && merged
            .into_iter()
            .all(|(body, inner)| zero_by_cases(store, &inner, body, 0))
}

/// `coef · Σ_{var=lo}^{hi-1} body`, one term of a difference.
struct Piece {
    coef: Rational,
    var: VarId,
    lo: TermId,
    body: TermId,
}

/// The pieces' sums (all up to `hi`) aligned at the highest lower bound `L` (each lower
/// one peeled: `Σ_{lo}^{hi-1} f = f(lo) + ... + f(L-1) + Σ_{L}^{hi-1} f`, which needs
/// `L <= hi`) and merged into one sum: `(peeled terms, merged body, its context)`, or
/// `None` when the bounds do not align.
fn align(
    store: &mut Store,
    dec: &Decision,
    hi: TermId,
    ty: &Type,
    pieces: &[Piece],
) -> Option<(Vec<TermId>, TermId, Context)> {
    let base = linear_form(store, pieces[0].lo);
    let mut offsets = Vec::with_capacity(pieces.len());
    for p in pieces {
        let d = linear_form(store, p.lo).sub(store, &base);
        if !d.terms.is_empty() || !d.constant.is_integer() {
            return None;
        }
        offsets.push(d.constant.to_i64()?);
    }
    let (top_at, &top) = offsets.iter().enumerate().max_by_key(|&(_, o)| *o)?;
    let low = pieces[top_at].lo;
    let mut peeled = Vec::new();
    if offsets.iter().any(|&o| o < top) && !at_most(store, dec, low, hi) {
        return None;
    }
    let w = store.fresh_var("j", ty.clone());
    let wt = store.var_term(w);
    let mut body = Vec::with_capacity(pieces.len());
    for (p, &o) in pieces.iter().zip(&offsets) {
        if top - o > MAX_PEEL {
            return None;
        }
        for s in 0..(top - o) {
            let step = store.int_lit(s, ty.clone());
            let at = store.prim(Prim::Add, vec![p.lo, step], ty.clone());
            let f = vars::substitute1(store, p.body, p.var, at);
            let f = to_real(store, f);
            peeled.push(scaled(store, &p.coef, f));
        }
        let f = vars::substitute1(store, p.body, p.var, wt);
        let f = to_real(store, f);
        body.push(scaled(store, &p.coef, f));
    }
    let body = store.prim(Prim::Add, body, Type::Real);
    let inner = dec.ctx.with_range(w, low, hi);
    Some((peeled, body, inner))
}

/// `t(k - 1)` for `t` a term in `k`: every maximal linear numeric subterm that mentions
/// `k` only as an atom of its own (`k + 1`, `2*k - 3`) with its constant lowered by the
/// coefficient of `k`, written at its own type (`None` when that type cannot hold it: a
/// nat `k - 1`, or `k` used otherwise than linearly).
fn shift_down(store: &mut Store, t: TermId, k: VarId) -> Option<TermId> {
    crate::stack::grow(|| shift_here(store, t, k))
}

fn shift_here(store: &mut Store, t: TermId, k: VarId) -> Option<TermId> {
    if !vars::mentions(store, t, k) {
        return Some(t);
    }
    let ty = store.ty(t).clone();
    if ty.is_numeric() {
        let index = store.var_term(k);
        let lin = linear_form(store, t);
        let c = lin.coeff(index);
        let others_free = lin
            .terms
            .iter()
            .all(|(a, _)| *a == index || !vars::mentions(store, *a, k));
        if !c.is_zero() && others_free {
            let lowered = lin.add_scaled(store, &Linear::constant(-c), &Rational::one());
            let w = lowered.to_term(store, &ty);
            return (*store.ty(w) == ty).then_some(w);
        }
        if matches!(store.node(t), Node::Var(_)) {
            return None;
        }
    }
    let node = store.node(t).clone();
    if node.binder() == Some(k) {
        return None;
    }
    let mut children = Vec::new();
    for ch in node.children() {
        children.push(shift_down(store, ch, k)?);
    }
    Some(store.intern(node.with_children(&children), ty))
}

/// Is `x <= y` proved: under the context, or for the largest index of the loop (`x`
/// increasing in it, `y` free of it) under the context outside the loop?
fn at_most(store: &mut Store, dec: &Decision, x: TermId, y: TermId) -> bool {
    let le = store.prim(Prim::Le, vec![x, y], Type::Bool);
    if cond::decide(store, &dec.ctx, le) == Tri::True {
        return true;
    }
    let Some(b) = &dec.bound else {
        return false;
    };
    if vars::mentions(store, y, b.var) {
        return false;
    }
    let lx = linear_form(store, x);
    let c = lx.coeff(b.index);
    if !c.is_positive() {
        return false;
    }
    // x(k) <= x(top - 1) = x without k, plus c·top - c
    let without = lx.add_scaled(store, &Linear::atom(b.index), &-c.clone());
    let top = linear_form(store, b.top);
    let most = without.add_scaled(store, &top, &c);
    let most = most.add_scaled(store, &Linear::constant(-c.clone()), &Rational::one());
    let ly = linear_form(store, y);
    let d = most.sub(store, &ly);
    if !d.coeff(b.index).is_zero() {
        return false;
    }
    match Comparison::new(store, Rel::Le, d) {
        Ok(cmp) => {
            let t = cmp.to_term(store);
            cond::decide(store, &b.outside, t) == Tri::True
        }
        Err(holds) => holds,
    }
}

/// Is `body` 0 under `ctx`? Canonically, or by cases: the first atomic condition of its
/// guards (outside binders; an inner `if`'s before the comparisons around it, which it
/// changes) assumed true, then false, each case canonicalised again (assumed atoms fold)
/// and split further, at most [`MAX_ATOMS`] deep; a case the context refutes is skipped.
fn zero_by_cases(store: &mut Store, ctx: &Context, body: TermId, depth: usize) -> bool {
    let cb = canon::canonicalize(store, ctx, body);
    if is_zero(store, cb) {
        return true;
    }
    if depth >= MAX_ATOMS {
        return false;
    }
    let mut atoms = Vec::new();
    let free = vars::free_vars(store, cb);
    let mut seen = rustc_hash::FxHashSet::default();
    guard_atoms(store, cb, &free, &mut seen, &mut atoms);
    let Some(&a) = atoms.first() else {
        return false;
    };
    let known = cond::decide(store, ctx, a);
    if known != Tri::Unknown {
        // the context decides it, yet canonicalisation kept it: splitting cannot help
        return false;
    }
    [true, false].into_iter().all(|value| {
        let inner = ctx.with_condition(a, value);
        zero_by_cases(store, &inner, cb, depth + 1)
    })
}

/// The atomic conditions (under `&&`, `||`, `not`) of the `if`s of `t`, inner ones first,
/// not looking under binders, whose variables are all free in the whole body.
fn guard_atoms(
    store: &Store,
    t: TermId,
    free: &[VarId],
    seen: &mut rustc_hash::FxHashSet<TermId>,
    out: &mut Vec<TermId>,
) {
    if !seen.insert(t) {
        return;
    }
    let node = store.node(t);
    if node.binder().is_some() {
        return;
    }
    for ch in node.children() {
        guard_atoms(store, ch, free, seen, out);
    }
    if let Node::If(c, _, _) = node {
        leaves(store, *c, free, out);
    }
}

fn leaves(store: &Store, c: TermId, free: &[VarId], out: &mut Vec<TermId>) {
    match store.node(c) {
        Node::Prim(Prim::And | Prim::Or | Prim::Not, xs) => {
            for &x in xs {
                leaves(store, x, free, out);
            }
        }
        Node::Bool(_) => {}
        _ => {
            let ok = vars::free_vars(store, c).iter().all(|v| free.contains(v));
            if ok && !out.contains(&c) {
                out.push(c);
            }
        }
    }
}

fn is_zero(store: &Store, t: TermId) -> bool {
    matches!(store.node(cond::strip_safe(store, t)), Node::Lit(q) if q.is_zero())
}

fn lit(store: &mut Store, q: Rational) -> TermId {
    store.intern(Node::Lit(q), Type::Real)
}

/// `c · t` at real type.
fn scaled(store: &mut Store, c: &Rational, t: TermId) -> TermId {
    let t = to_real(store, t);
    if c.is_one() {
        return t;
    }
    let c = lit(store, c.clone());
    store.prim(Prim::Mul, vec![c, t], Type::Real)
}

/// `t` at real type (through its safe coercion).
fn to_real(store: &mut Store, t: TermId) -> TermId {
    let ty = store.ty(t).clone();
    match Coercion::safe(&ty, &Type::Real) {
        Some(c) => store.intern(Node::Coerce(c, t), Type::Real),
        None => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front;

    /// Under `fn as array(prob): fn y array(nat): fn m nat: fn k nat:` and the facts
    /// `k + 2 <= m` (when `room`), is `a = b` proved?
    fn proves(a: &str, b: &str, room: bool) -> bool {
        let mut store = Store::new();
        let head = "fn as array(prob): fn y array(nat): fn m nat: fn k nat:";
        let ta = front::load(&mut store, &format!("{head} {a}")).expect("loads");
        let tb = front::load(&mut store, &format!("{head} {b}")).expect("loads");
        let body = |s: &Store, mut t: TermId| {
            let mut vs = Vec::new();
            while let Node::Lam(v, b) = *s.node(t) {
                vs.push(v);
                t = b;
            }
            (vs, t)
        };
        let (va, ba) = body(&store, ta);
        let (vb, bb) = body(&store, tb);
        // one set of parameters: b's renamed to a's
        let mut bb = bb;
        for (x, y) in vb.iter().zip(&va) {
            let yt = store.var_term(*y);
            bb = vars::substitute1(&mut store, bb, *x, yt);
        }
        let mut ctx = Context::new();
        if room {
            let (m, k) = (store.var_term(va[2]), store.var_term(va[3]));
            let two = store.int_lit(2, Type::Nat);
            let k2 = store.prim(Prim::Add, vec![k, two], Type::Nat);
            let le = store.prim(Prim::Le, vec![k2, m], Type::Bool);
            ctx = ctx.with_condition(le, true);
        }
        let dec = Decision { ctx, bound: None };
        provably_equal(&mut store, &dec, ba, bb)
    }

    #[test]
    fn a_sum_peels_its_first_term_where_there_is_room() {
        let a = "as[k + 1] + (summate j from k + 2 to m: as[j])";
        let b = "summate j from k + 1 to m: as[j]";
        assert!(proves(a, b, true));
        // without k + 2 <= m the peel is not shown (k + 1 may be m: as[m] is no term)
        assert!(!proves(a, b, false));
        // a different first term is not the sum's
        assert!(!proves(
            "as[k] + (summate j from k + 2 to m: as[j])",
            b,
            true
        ));
    }

    #[test]
    fn counts_with_complementary_conditions_merge() {
        let a = "(summate j from 0 to size(y): if k + 2 <= y[j] && y[j] < m: 1 else: 0) \
                 + (summate j from 0 to size(y): if y[j] < m && k + 1 == y[j]: 1 else: 0)";
        let b = "summate j from 0 to size(y): if k + 1 <= y[j] && y[j] < m: 1 else: 0";
        assert!(proves(a, b, false));
        // off by one: the labels equal to k + 2 are counted twice
        let c = "summate j from 0 to size(y): if k + 2 <= y[j] && y[j] < m: 1 else: 0";
        assert!(!proves(&format!("{c} + {c}"), b, false));
        let wrong = "(summate j from 0 to size(y): if k + 2 <= y[j] && y[j] < m: 1 else: 0) \
                     + (summate j from 0 to size(y): if y[j] < m && k + 2 == y[j]: 1 else: 0)";
        assert!(!proves(wrong, b, false));
    }
}
