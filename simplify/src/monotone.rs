//! Change of variable through monotone maps (issue 14): a result `y = f(x)`, `x` one
//! continuous draw and `f` a chain of monotone layers (`exp`, `log`, powers with rational
//! exponents, `sqrt`, reciprocals, shifts, scalings by terms of known sign, negation), is
//! drawn as `y` itself: over lebesgue on the image of `x`'s interval, with density
//! `p(f⁻¹(y)) · |d f⁻¹/dy|`. Rebuilding then names `y`'s law where the holonomic
//! recogniser knows it (an exponential through `exp(-x)` is a beta, a uniform through
//! `-log` an exponential); where it does not, the output ranking keeps the input.
//!
//! A result even in `x` (`x ^ 2`, `x ^ 4`) with `x` over the whole real line is first
//! folded: `x` and `-x` give the same result, so the law of the result is that of the
//! result at `v = |x|`, and `v` has density `p(v) + p(-v)` on `(0, ∞)` (a standard normal
//! squared is then a chi-square).
//!
//! Why it is sound: each layer is a bijection, continuously differentiable with a
//! non-vanishing derivative, from the open interval its argument ranges over (tracked
//! from `x`'s support outwards, with the domain each layer needs proved: `log`, roots and
//! reciprocals only of arguments that are non-negative there, scalings only by terms
//! proved positive or proved negative) onto its image. The composite is such a bijection
//! of `x`'s interval onto `y`'s, so for every `h`, `∫ p(x) h(f(x)) dx = ∫_{image}
//! p(f⁻¹(y)) |f⁻¹'(y)| h(y) dy` (the substitution rule for integrals); the inverse's
//! derivative is the product of the layers' (the chain rule). Every other factor and
//! guard that reads `x` has `x` replaced by `f⁻¹(y)`, which is the same value. The new
//! draw comes last, after every variable the map's constants mention; no other draw's
//! law may mention `x`. Anything else leaves the term as it was.

use rustc_hash::FxHashMap;

use slic_algebra::assume::{Context, Tri};
use slic_algebra::num::Rational;
use slic_algebra::vars;
use slic_algebra::{canon, cond, Coercion, Dist, Node, Prim, TermId, Type, VarId};

use crate::lin::{Base, Bind, Factor, LTerm};
use crate::{terms, Simp};

/// How many layers one map is read through at most.
const MAX_LAYERS: usize = 12;

/// One monotone layer `z = layer(e)` of a result, on real values.
#[derive(Clone, Debug)]
enum Layer {
    /// `z = c + e`.
    Shift(TermId),
    /// `z = c · e`, `c` proved positive (`true`) or negative (`false`).
    Scale(TermId, bool),
    /// `z = -e`.
    Neg,
    /// `z = 1 / e`, `e > 0`.
    Recip,
    /// `z = exp(e)`.
    Exp,
    /// `z = log(e)`, `e > 0`.
    Log,
    /// `z = e ^ p`, `e > 0`, `p` a non-zero rational.
    Pow(Rational),
    /// `z = real2prob(e)`, `e >= 0`: the identity there.
    Clamp,
}

/// A bound of an interval of the extended reals.
#[derive(Clone, Copy, Debug)]
enum Ext {
    NegInf,
    Fin(TermId),
    PosInf,
}

impl Simp<'_> {
    /// `t` with its result drawn through a monotone change of variable (see the module
    /// doc) when that leaves the result a draw of its own; `t` itself otherwise.
    pub(crate) fn monotone_change(&mut self, t: LTerm) -> LTerm {
        match self.try_monotone(&t) {
            Some(better) => better,
            None => t,
        }
    }

    fn try_monotone(&mut self, t: &LTerm) -> Option<LTerm> {
        let ty = self.store.ty(t.result).clone();
        if !matches!(ty, Type::Real | Type::Prob) {
            return None;
        }
        // the one continuous draw the result reads
        let mut found = None;
        for (i, b) in t.binds.iter().enumerate() {
            if vars::mentions(self.store, t.result, b.var) {
                if found.is_some() {
                    return None;
                }
                found = Some(i);
            }
        }
        let i = found?;
        let x = t.binds[i].var;
        let xty = self.store.var_type(x).clone();
        if !matches!(xty, Type::Real | Type::Prob) {
            return None;
        }
        // no later draw's law may read x
        if t.read_later(self.store, i, x) {
            return None;
        }
        let (lo, hi, prior) = match t.binds[i].base {
            Base::Lebesgue { lo, hi } => (lo, hi, None),
            Base::Prim(d) => {
                let continuous = matches!(
                    self.store.node(d),
                    Node::Dist(Dist::Normal | Dist::Uniform | Dist::Gamma | Dist::Beta, _)
                );
                if !continuous {
                    return None;
                }
                let (base, f) = self.dens.open(self.store, d, x)?;
                let Base::Lebesgue { lo, hi } = base else {
                    return None;
                };
                (lo, hi, Some(f?))
            }
            _ => return None,
        };
        let ctx = self.facts(t, true);
        let mut layers = Vec::new();
        self.peel(t.result, x, &ctx, &mut layers)?;
        // affine maps with rational scales are step 4's (`change_of_variable`); a scale
        // that is a term (`l * e` of a weibull of shape 1) is this step's
        let literal = |s: &Simp, l: &Layer| match l {
            Layer::Shift(_) | Layer::Neg | Layer::Clamp => true,
            Layer::Scale(c, _) => terms::lit_value(s.store, *c).is_some(),
            _ => false,
        };
        if layers.iter().all(|l| literal(self, l)) {
            return None;
        }
        let to_real = |s: &mut Simp, b: Option<TermId>, inf: Ext| match b {
            Some(v) => Ext::Fin(terms::coerce(s.store, v, &Type::Real)),
            None => inf,
        };
        let (mut lo, mut hi) = (
            to_real(self, lo, Ext::NegInf),
            to_real(self, hi, Ext::PosInf),
        );
        // a result even in x, x over the whole line: fold x onto |x|
        let fold = matches!((lo, hi), (Ext::NegInf, Ext::PosInf))
            && matches!(layers.last(), Some(Layer::Pow(p)) if p.is_positive() && is_even(p));
        if fold {
            lo = Ext::Fin(terms::int(self.store, 0, &Type::Real));
        }
        // the image interval, from x's interval outwards
        for l in layers.iter().rev() {
            let (a, b) = self.forward(l, lo, hi, &ctx)?;
            lo = a;
            hi = b;
        }
        let new_lo = match lo {
            Ext::NegInf => None,
            Ext::Fin(v) => Some(v),
            Ext::PosInf => return None,
        };
        let new_hi = match hi {
            Ext::PosInf => None,
            Ext::Fin(v) => Some(v),
            Ext::NegInf => return None,
        };
        if ty == Type::Prob && !new_lo.is_some_and(|v| self.nonneg_real(v, &ctx)) {
            return None;
        }
        // the inverse and its derivative, from the outside in
        let name = self.store.var_name(x).to_string();
        let yv = self.store.fresh_var(&name, ty.clone());
        let yt = self.store.var_term(yv);
        let mut z = terms::coerce(self.store, yt, &Type::Real);
        let mut jac = Vec::new();
        for l in &layers {
            let (inv, d) = self.inverse(l, z)?;
            z = inv;
            jac.extend(d);
        }
        let xreal = canon::canonicalize(self.store, &Context::new(), z);
        let xval = terms::coerce(self.store, xreal, &xty);
        let mut t2 = t.clone();
        t2.binds.remove(i);
        if let Some(f) = prior {
            t2.factors.push(Factor::other(f));
        }
        if fold {
            // every factor on x becomes F(v) + F(-v); no guard may read x
            if t2.guards.iter().any(|&g| vars::mentions(self.store, g, x)) {
                return None;
            }
            let (mine, rest): (Vec<Factor>, Vec<Factor>) = t2
                .factors
                .into_iter()
                .partition(|f| vars::mentions(self.store, f.term, x));
            t2.factors = rest;
            let fx = terms::product(self.store, mine.iter().map(|f| f.term).collect());
            let xt = self.store.var_term(x);
            let xr = terms::coerce(self.store, xt, &Type::Real);
            let neg = self.store.prim(Prim::Neg, vec![xr], Type::Real);
            let neg = terms::coerce(self.store, neg, &xty);
            let mirrored = vars::substitute1(self.store, fx, x, neg);
            let both = self.store.prim(Prim::Add, vec![fx, mirrored], Type::Prob);
            t2.factors.push(Factor::other(both));
        }
        for d in jac {
            t2.factors.push(Factor::other(d));
        }
        if xty == Type::Prob {
            // `prob2real(x)` is the real inverse itself (no `prob2real(real2prob(..))`
            // for the canonicaliser to see through)
            let xt = self.store.var_term(x);
            let p2r = terms::coerce(self.store, xt, &Type::Real);
            for f in t2.factors.iter_mut() {
                let c = canon::canonicalize(self.store, &Context::new(), f.term);
                let new = vars::replace_free(self.store, c, p2r, xreal);
                if new != f.term {
                    // no longer the density of x's primitive at x
                    f.origin = crate::lin::Origin::Other;
                    f.term = new;
                }
            }
            for g in t2.guards.iter_mut() {
                *g = vars::replace_free(self.store, *g, p2r, xreal);
            }
        }
        let mut map = FxHashMap::default();
        map.insert(x, xval);
        t2.substitute(self.store, &map);
        t2.binds.push(Bind {
            var: yv,
            base: Base::Lebesgue {
                lo: new_lo,
                hi: new_hi,
            },
        });
        // f(f⁻¹(y)) is y on the image
        t2.result = yt;
        let before = t2.binds.len();
        let t3 = self.normalise(t2)?;
        let t3 = self.eliminate(t3)?;
        // the result is the last draw (normalising may have made it prob: `prob2real(y)`)
        let last = t3.binds.last()?.var;
        let mut r = t3.result;
        while let Node::Coerce(_, a) = *self.store.node(r) {
            r = a;
        }
        let drawn = matches!(*self.store.node(r), Node::Var(v) if v == last);
        (drawn && t3.binds.len() <= before).then_some(t3)
    }

    /// The layers of `e` as a map of `x`, outermost first; `None` if it is not a chain
    /// of monotone layers ending in `x`.
    fn peel(&mut self, e: TermId, x: VarId, ctx: &Context, out: &mut Vec<Layer>) -> Option<()> {
        let mut e = e;
        for _ in 0..MAX_LAYERS {
            let node = self.store.node(e).clone();
            let (layer, inner) = match node {
                Node::Var(v) if v == x => return Some(()),
                Node::Coerce(Coercion::Prob2Real, a) => {
                    e = a;
                    continue;
                }
                Node::Coerce(Coercion::Real2Prob, a) => (Layer::Clamp, a),
                Node::Prim(Prim::Neg, a) if a.len() == 1 => (Layer::Neg, a[0]),
                Node::Prim(Prim::Recip, a) if a.len() == 1 => (Layer::Recip, a[0]),
                Node::Prim(Prim::Exp, a) if a.len() == 1 => (Layer::Exp, a[0]),
                Node::Prim(Prim::Log, a) if a.len() == 1 => (Layer::Log, a[0]),
                Node::Prim(Prim::Sqrt, a) if a.len() == 1 => {
                    (Layer::Pow(Rational::ratio(1, 2)?), a[0])
                }
                Node::Prim(Prim::Pow, a) if a.len() == 2 => {
                    let n = terms::lit_value(self.store, a[1])?;
                    if n.is_zero() || n.is_one() {
                        return None;
                    }
                    (Layer::Pow(n), a[0])
                }
                Node::Prim(Prim::RealPow, a) if a.len() == 2 => {
                    let p = terms::lit_value(self.store, a[1])?;
                    if p.is_zero() {
                        return None;
                    }
                    (Layer::Pow(p), a[0])
                }
                Node::Prim(Prim::NatRoot, a) if a.len() == 2 => {
                    let n = terms::lit_value(self.store, a[1])?;
                    (Layer::Pow(n.recip()?), a[0])
                }
                Node::Prim(op @ (Prim::Add | Prim::Mul), xs) => {
                    let (mine, rest): (Vec<TermId>, Vec<TermId>) =
                        xs.iter().partition(|&&c| vars::mentions(self.store, c, x));
                    if mine.len() != 1 || rest.is_empty() {
                        return None;
                    }
                    let ty = self.store.ty(e).clone();
                    let c = if rest.len() == 1 {
                        rest[0]
                    } else {
                        self.store.prim(op, rest, ty)
                    };
                    let c = terms::coerce(self.store, c, &Type::Real);
                    let c = canon::canonicalize(self.store, &Context::new(), c);
                    if op == Prim::Add {
                        (Layer::Shift(c), mine[0])
                    } else {
                        let zero = terms::int(self.store, 0, &Type::Real);
                        if self.lt_real(zero, c, ctx) {
                            (Layer::Scale(c, true), mine[0])
                        } else if self.lt_real(c, zero, ctx) {
                            (Layer::Scale(c, false), mine[0])
                        } else {
                            return None;
                        }
                    }
                }
                _ => return None,
            };
            out.push(layer);
            e = inner;
        }
        None
    }

    /// The image `(lo', hi')` of the open interval `(lo, hi)` under one layer, with the
    /// layer's domain proved; `None` when it cannot be.
    fn forward(&mut self, l: &Layer, lo: Ext, hi: Ext, ctx: &Context) -> Option<(Ext, Ext)> {
        let needs_nonneg = matches!(l, Layer::Recip | Layer::Log | Layer::Pow(_) | Layer::Clamp);
        if needs_nonneg {
            match lo {
                Ext::Fin(v) if self.nonneg_real(v, ctx) => {}
                _ => return None,
            }
        }
        let real = Type::Real;
        let map = |s: &mut Simp, v: Ext, f: &dyn Fn(&mut Simp, TermId) -> Option<Ext>| match v {
            Ext::Fin(t) => f(s, t),
            other => Some(other),
        };
        let canon_real = |s: &mut Simp, t: TermId| -> TermId {
            let t = terms::coerce(s.store, t, &Type::Real);
            canon::canonicalize(s.store, &Context::new(), t)
        };
        let flip = |e: Ext| match e {
            Ext::NegInf => Ext::PosInf,
            Ext::PosInf => Ext::NegInf,
            f => f,
        };
        match l {
            Layer::Clamp => Some((lo, hi)),
            Layer::Shift(c) => {
                let c = *c;
                let f = |s: &mut Simp, v: TermId| {
                    let t = s.store.prim(Prim::Add, vec![c, v], Type::Real);
                    Some(Ext::Fin(canon_real(s, t)))
                };
                Some((map(self, lo, &f)?, map(self, hi, &f)?))
            }
            Layer::Scale(c, pos) => {
                let c = *c;
                let f = |s: &mut Simp, v: TermId| {
                    let t = s.store.prim(Prim::Mul, vec![c, v], Type::Real);
                    Some(Ext::Fin(canon_real(s, t)))
                };
                let (a, b) = (map(self, lo, &f)?, map(self, hi, &f)?);
                Some(if *pos { (a, b) } else { (flip(b), flip(a)) })
            }
            Layer::Neg => {
                let f = |s: &mut Simp, v: TermId| {
                    let t = s.store.prim(Prim::Neg, vec![v], Type::Real);
                    Some(Ext::Fin(canon_real(s, t)))
                };
                let (a, b) = (map(self, lo, &f)?, map(self, hi, &f)?);
                Some((flip(b), flip(a)))
            }
            Layer::Exp => {
                let f = |s: &mut Simp, v: TermId| {
                    let t = s.store.prim(Prim::Exp, vec![v], Type::Prob);
                    Some(Ext::Fin(canon_real(s, t)))
                };
                let a = match lo {
                    Ext::NegInf => Ext::Fin(terms::int(self.store, 0, &real)),
                    o => map(self, o, &f)?,
                };
                Some((a, map(self, hi, &f)?))
            }
            Layer::Log | Layer::Recip | Layer::Pow(_) => {
                // on (0, ∞): an endpoint 0 maps to an infinity, others must be positive
                let p = match l {
                    Layer::Log => None,
                    Layer::Recip => Some(Rational::from_integer(-1)),
                    Layer::Pow(p) => Some(p.clone()),
                    _ => return None,
                };
                let increasing = p.as_ref().is_none_or(|p| p.is_positive());
                let at = |s: &mut Simp, e: Ext| -> Option<Ext> {
                    match e {
                        Ext::NegInf => None,
                        Ext::PosInf => Some(match &p {
                            Some(p) if !p.is_positive() => Ext::Fin(terms::int(s.store, 0, &real)),
                            _ => Ext::PosInf,
                        }),
                        Ext::Fin(v) => {
                            if terms::lit_value(s.store, v).is_some_and(|r| r.is_zero()) {
                                return Some(match &p {
                                    None => Ext::NegInf,
                                    Some(p) if p.is_positive() => Ext::Fin(v),
                                    Some(_) => Ext::PosInf,
                                });
                            }
                            let zero = terms::int(s.store, 0, &real);
                            if !s.lt_real(zero, v, ctx) {
                                return None;
                            }
                            let pv = terms::coerce(s.store, v, &Type::Prob);
                            let t = match &p {
                                None => s.store.prim(Prim::Log, vec![pv], Type::Real),
                                Some(p) => {
                                    let pl = terms::lit(s.store, p, &Type::Real);
                                    s.store.prim(Prim::RealPow, vec![pv, pl], Type::Prob)
                                }
                            };
                            Some(Ext::Fin(canon_real(s, t)))
                        }
                    }
                };
                let (a, b) = (at(self, lo)?, at(self, hi)?);
                Some(if increasing { (a, b) } else { (b, a) })
            }
        }
    }

    /// The layer's inverse at `z` (a real term) and the factors of its derivative's
    /// absolute value there (prob terms), for `z` in the layer's image.
    fn inverse(&mut self, l: &Layer, z: TermId) -> Option<(TermId, Vec<TermId>)> {
        let s = &mut *self.store;
        let zp = terms::coerce(s, z, &Type::Prob);
        Some(match l {
            Layer::Clamp => (z, vec![]),
            Layer::Shift(c) => {
                let nc = s.prim(Prim::Neg, vec![*c], Type::Real);
                (s.prim(Prim::Add, vec![z, nc], Type::Real), vec![])
            }
            Layer::Scale(c, pos) => {
                let rc = s.prim(Prim::Recip, vec![*c], Type::Real);
                let inv = s.prim(Prim::Mul, vec![rc, z], Type::Real);
                let abs = if *pos {
                    rc
                } else {
                    s.prim(Prim::Neg, vec![rc], Type::Real)
                };
                (inv, vec![terms::coerce(s, abs, &Type::Prob)])
            }
            Layer::Neg => (s.prim(Prim::Neg, vec![z], Type::Real), vec![]),
            Layer::Recip => {
                let inv = s.prim(Prim::Recip, vec![z], Type::Real);
                let two = terms::int(s, 2, &Type::Nat);
                let sq = s.prim(Prim::Pow, vec![zp, two], Type::Prob);
                (inv, vec![s.prim(Prim::Recip, vec![sq], Type::Prob)])
            }
            Layer::Exp => {
                let inv = s.prim(Prim::Log, vec![zp], Type::Real);
                (inv, vec![s.prim(Prim::Recip, vec![zp], Type::Prob)])
            }
            Layer::Log => {
                let e = s.prim(Prim::Exp, vec![z], Type::Prob);
                (terms::coerce(s, e, &Type::Real), vec![e])
            }
            Layer::Pow(p) => {
                let q = p.recip()?;
                let ql = terms::lit(s, &q, &Type::Real);
                let inv = s.prim(Prim::RealPow, vec![zp, ql], Type::Prob);
                let inv = terms::coerce(s, inv, &Type::Real);
                let qm1 = &q - &Rational::from_integer(1);
                let qm1 = terms::lit(s, &qm1, &Type::Real);
                let d = s.prim(Prim::RealPow, vec![zp, qm1], Type::Prob);
                let c = terms::lit(s, &q.abs(), &Type::Prob);
                (inv, vec![c, d])
            }
        })
    }

    /// Is `a < b` proved under `ctx` (real terms)?
    fn lt_real(&mut self, a: TermId, b: TermId, ctx: &Context) -> bool {
        let zero = |s: &Simp, t: TermId| terms::lit_value(s.store, t).is_some_and(|r| r.is_zero());
        if zero(self, a) && crate::improve::evidently_positive(self.store, b, 0) {
            return true;
        }
        let a = terms::coerce(self.store, a, &Type::Real);
        let b = terms::coerce(self.store, b, &Type::Real);
        let c = terms::compare(self.store, Prim::Lt, a, b);
        cond::decide(self.store, ctx, c) == Tri::True
    }

    /// Is `0 <= v` proved under `ctx` (a real term)?
    fn nonneg_real(&mut self, v: TermId, ctx: &Context) -> bool {
        if terms::lit_value(self.store, v).is_some_and(|r| !r.is_negative()) {
            return true;
        }
        let v = terms::coerce(self.store, v, &Type::Real);
        let zero = terms::int(self.store, 0, &Type::Real);
        let c = terms::compare(self.store, Prim::Le, zero, v);
        cond::decide(self.store, ctx, c) == Tri::True
    }
}

/// Is the rational `p` an even integer?
fn is_even(p: &Rational) -> bool {
    p.to_i64().is_some_and(|n| n % 2 == 0)
}
