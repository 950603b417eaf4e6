//! The holonomic representation of a discrete factor: `f(k+1) / f(k)` as a rational
//! function of `k`, computed compositionally (products, quotients, `c^k`, factorials and
//! `gammaFunc` of linear arguments, `choose`, `betaFunc`, rational factors).
//!
//! The factor is read into a canonical form (a rational function over kernels, see
//! `slic_algebra::canon`); every kernel that mentions `k` must be *hypergeometric*, with
//! a ratio rule of its own: `e^(a k + b)` gives `e^a`, `b^(a k + c)` (a nat power) gives
//! `b^a`, `gammaFunc(a k + b)` gives `(a k + b) ... (a k + b + a - 1)` for an integer
//! `a`, `choose` and `betaFunc` are quotients of gammas, and `real2prob(g)` / `int2nat(g)`
//! the ratio of `g`. The hypergeometric kernels must divide out of numerator and
//! denominator as monomials; what remains is a rational function `R(k)`, whose ratio is
//! `R(k+1) / R(k)`. Each rule is an identity of meromorphic functions of `k` (or of
//! integers, for `choose` and nat powers), so `den(k) f(k+1) = num(k) f(k)` holds wherever
//! `f` is defined.
//!
//! This file must not match the shape of a whole formula: a kernel without a rule (`a[k]`,
//! `log(k)`, `exp(k^2)`, `sqrt(k)`, a piecewise in `k`) makes the factor
//! [`Miss::NotHolonomic`], a sum of hypergeometric terms with different kernels a
//! [`Miss::Order`] above one.

use rustc_hash::FxHashMap;
use slic_algebra::assume::Context;
use slic_algebra::canon::{Canon, CanonError, Kernel, Normal, Overflow};
use slic_algebra::poly::{Monomial, Poly};
use slic_algebra::vars::mentions;
use slic_algebra::{Coercion, Node, Prim, Rational, Store, TermId, Type, VarId};

use crate::recognise::Miss;

/// `den(k) · f(k+1) = num(k) · f(k)`: terms polynomial in `k` with no common factor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence {
    pub num: TermId,
    pub den: TermId,
}

/// The recurrence of `f` (a prob term) in the integer variable `k`, or why it has none
/// of first order. `num` and `den` are canonical real terms.
pub fn recurrence(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    k: VarId,
) -> Result<Recurrence, Miss> {
    let mut cx = Canon::new(store, ctx.clone());
    let r = ratio(&mut cx, f, k)?;
    let (num, den) = r.value.into_parts();
    let num = write_canonical(&mut cx, Normal::from_poly(num), &Type::Real)?;
    let den = write_canonical(&mut cx, Normal::from_poly(den), &Type::Real)?;
    Ok(Recurrence { num, den })
}

/// The ratio `f(k+1) / f(k)` in a canonicalisation session.
#[derive(Clone, Debug)]
pub(crate) struct Ratio {
    /// The ratio, a rational function of the kernel `k` over kernels free of `k`.
    pub value: Normal,
    /// The session's kernel of the variable.
    pub k: u32,
}

/// How deep ratio rules may nest (`real2prob(real2prob(..))`, gammas inside `choose`).
const MAX_DEPTH: u32 = 8;

/// The largest `|a|` in `gammaFunc(a k + b)`: its ratio is a product of `|a|` factors.
const MAX_GAMMA_STEP: i64 = 64;

/// The highest degree in `k` of a rational factor whose shift `R(k+1)` is computed (the
/// shift of a degree-`d` polynomial has binomial coefficients of `d` bits).
const MAX_SHIFT_DEGREE: u32 = 256;

/// `n` written as a term of type `ty` and read back, so that every law of the session
/// (merging exponentials, powers) holds on a value built by plain field arithmetic.
pub(crate) fn write_canonical(cx: &mut Canon, n: Normal, ty: &Type) -> Result<TermId, Miss> {
    let t = cx.to_term(&n, ty).map_err(canon_miss)?;
    Ok(cx.canonicalize(t))
}

/// The session's canonical form of a value computed by field arithmetic (laws applied).
pub(crate) fn renormal(cx: &mut Canon, n: &Normal) -> Result<Normal, Miss> {
    let t = cx.to_term(n, &Type::Real).map_err(canon_miss)?;
    cx.normal(t).map_err(canon_miss)
}

pub(crate) fn canon_miss(_: CanonError) -> Miss {
    Miss::NotHolonomic
}

pub(crate) fn budget_miss(_: Overflow) -> Miss {
    Miss::Budget
}

/// The session's kernel of the variable `k`.
pub(crate) fn var_kernel(cx: &mut Canon, k: VarId) -> Result<u32, Miss> {
    let t = cx.store_mut().var_term(k);
    let n = cx.normal(t).map_err(canon_miss)?;
    match n.as_scaled_kernel() {
        Some((i, c)) if c.is_one() => Ok(i),
        _ => Err(Miss::NotHolonomic),
    }
}

/// `f(k+1) / f(k)` for a numeric term `f`, in lowest terms with the session's laws.
pub(crate) fn ratio(cx: &mut Canon, f: TermId, k: VarId) -> Result<Ratio, Miss> {
    let kk = var_kernel(cx, k)?;
    let n = cx.normal(f).map_err(canon_miss)?;
    let mut walk = Walk {
        k,
        kk,
        mentions: FxHashMap::default(),
    };
    let value = walk.ratio_of(cx, &n, 0)?;
    let value = renormal(cx, &value)?;
    Ok(Ratio { value, k: kk })
}

/// The state of one ratio computation: the variable and what is known of kernels.
struct Walk {
    k: VarId,
    kk: u32,
    /// Kernel index -> does it mention `k` (other than being `k` itself)?
    mentions: FxHashMap<u32, bool>,
}

impl Walk {
    /// Does kernel `i` depend on `k`? (`k`'s own kernel counts.)
    fn depends(&mut self, cx: &Canon, i: u32) -> bool {
        if i == self.kk {
            return true;
        }
        if let Some(&m) = self.mentions.get(&i) {
            return m;
        }
        let m = match cx.kernels().get(i).map(|info| &info.kernel) {
            Some(Kernel::Atom(t)) | Some(Kernel::Pow(t, _)) => mentions(cx.store(), *t, self.k),
            Some(Kernel::Exp(s)) => {
                let s = s.clone();
                let vars = vars_of(&s);
                vars.into_iter().any(|v| self.depends(cx, v))
            }
            Some(Kernel::Pi) => false,
            // kernel indices come only from the session's table
            None => true,
        };
        self.mentions.insert(i, m);
        m
    }

    /// `n(k+1) / n(k)` as a rational function of `k` (not yet reduced by the laws).
    fn ratio_of(&mut self, cx: &mut Canon, n: &Normal, depth: u32) -> Result<Normal, Miss> {
        if depth > MAX_DEPTH {
            return Err(Miss::Budget);
        }
        // the hypergeometric kernels (those that depend on k other than k itself)
        let mut hyper: Vec<u32> = Vec::new();
        for v in vars_of(n) {
            if v != self.kk && self.depends(cx, v) {
                hyper.push(v);
            }
        }
        let (num_h, num_rest) = split_content(n.num(), &hyper);
        let (den_h, den_rest) = split_content(n.den(), &hyper);
        // a sum of hypergeometric terms over a plain denominator is a mixture (a higher
        // order); one in the denominator (`1 / (1 + 2^k)`) is not holonomic at all
        if hyper.iter().any(|&h| den_rest.degree_in(h) > 0) {
            return Err(Miss::NotHolonomic);
        }
        if hyper.iter().any(|&h| num_rest.degree_in(h) > 0) {
            return Err(mixture_miss(&num_rest, &hyper));
        }
        if num_rest.degree_in(self.kk).max(den_rest.degree_in(self.kk)) > MAX_SHIFT_DEGREE {
            return Err(Miss::Budget);
        }
        let max = max_terms();
        // R(k+1) / R(k) for the rational part R = num_rest / den_rest
        let shift = Poly::var(self.kk).add(&Poly::one());
        let r_next = Normal::from_parts(
            num_rest.substitute(self.kk, &shift),
            den_rest.substitute(self.kk, &shift),
        )
        .ok_or(Miss::NotHolonomic)?;
        let r_here = Normal::from_parts(num_rest, den_rest).ok_or(Miss::NotHolonomic)?;
        let mut acc = r_next
            .div(&r_here, max)
            .map_err(budget_miss)?
            .ok_or(Miss::NotHolonomic)?;
        for (m, sign) in [(&num_h, 1i64), (&den_h, -1)] {
            for &(h, e) in m.pairs() {
                let rh = self.kernel_ratio(cx, h, depth)?;
                let p = rh
                    .pow(sign * i64::from(e), max)
                    .map_err(budget_miss)?
                    .ok_or(Miss::NotHolonomic)?;
                acc = acc.mul(&p, max).map_err(budget_miss)?;
            }
        }
        Ok(acc)
    }

    /// The ratio of one hypergeometric kernel, by its rule.
    fn kernel_ratio(&mut self, cx: &mut Canon, h: u32, depth: u32) -> Result<Normal, Miss> {
        let kernel = cx
            .kernels()
            .get(h)
            .map(|i| i.kernel.clone())
            .ok_or(Miss::NotHolonomic)?;
        match kernel {
            // e^(a k + b): e^a
            Kernel::Exp(s) => {
                let a = self.slope(cx, &s)?;
                cx.exp(&a).map_err(budget_miss)
            }
            Kernel::Atom(t) => self.atom_ratio(cx, t, depth),
            // radicals of bases that depend on k (`sqrt(k + 1)`) have no rational ratio
            Kernel::Pow(..) | Kernel::Pi => Err(Miss::NotHolonomic),
        }
    }

    fn atom_ratio(&mut self, cx: &mut Canon, t: TermId, depth: u32) -> Result<Normal, Miss> {
        let node = cx.store().node(t).clone();
        match node {
            // b^e for a nat exponent e = a k + c: b^a
            Node::Prim(Prim::Pow, args) => {
                let [b, e] = args[..] else {
                    return Err(Miss::NotHolonomic);
                };
                if mentions(cx.store(), b, self.k) {
                    return Err(Miss::NotHolonomic);
                }
                let en = cx.normal(e).map_err(canon_miss)?;
                let a = self.slope(cx, &en)?;
                let a = a
                    .as_constant()
                    .filter(Rational::is_integer)
                    .and_then(|a| a.to_i64())
                    .ok_or(Miss::NotHolonomic)?;
                let bn = cx.normal(b).map_err(canon_miss)?;
                bn.pow(a, max_terms())
                    .map_err(budget_miss)?
                    .ok_or(Miss::NotHolonomic)
            }
            Node::Prim(Prim::GammaFunc, args) => {
                let [x] = args[..] else {
                    return Err(Miss::NotHolonomic);
                };
                let xn = cx.normal(x).map_err(canon_miss)?;
                self.gamma_ratio(cx, &xn)
            }
            // choose(n, m) = Γ(n+1) / (Γ(m+1) Γ(n-m+1)) (also where it is 0: m > n)
            Node::Prim(Prim::Choose, args) => {
                let [nt, mt] = args[..] else {
                    return Err(Miss::NotHolonomic);
                };
                let n = cx.normal(nt).map_err(canon_miss)?;
                let m = cx.normal(mt).map_err(canon_miss)?;
                let max = max_terms();
                let one = Normal::one();
                let n1 = n.add(&one, max).map_err(budget_miss)?;
                let m1 = m.add(&one, max).map_err(budget_miss)?;
                let d1 = n1.sub(&m, max).map_err(budget_miss)?;
                let top = self.gamma_ratio(cx, &n1)?;
                let b1 = self.gamma_ratio(cx, &m1)?;
                let b2 = self.gamma_ratio(cx, &d1)?;
                let bottom = b1.mul(&b2, max).map_err(budget_miss)?;
                top.div(&bottom, max)
                    .map_err(budget_miss)?
                    .ok_or(Miss::NotHolonomic)
            }
            // betaFunc(a, b) = Γ(a) Γ(b) / Γ(a + b)
            Node::Prim(Prim::BetaFunc, args) => {
                let [at, bt] = args[..] else {
                    return Err(Miss::NotHolonomic);
                };
                let a = cx.normal(at).map_err(canon_miss)?;
                let b = cx.normal(bt).map_err(canon_miss)?;
                let max = max_terms();
                let s = a.add(&b, max).map_err(budget_miss)?;
                let ra = self.gamma_ratio(cx, &a)?;
                let rb = self.gamma_ratio(cx, &b)?;
                let rs = self.gamma_ratio(cx, &s)?;
                let top = ra.mul(&rb, max).map_err(budget_miss)?;
                top.div(&rs, max)
                    .map_err(budget_miss)?
                    .ok_or(Miss::NotHolonomic)
            }
            // an asserted coercion keeps the value: the ratio of what it wraps
            Node::Coerce(Coercion::Real2Prob | Coercion::Int2Nat, inner) => {
                let n = cx.normal(inner).map_err(canon_miss)?;
                self.ratio_of(cx, &n, depth + 1)
            }
            _ => Err(Miss::NotHolonomic),
        }
    }

    /// `Γ(x(k+1)) / Γ(x(k))` for `x = a k + b` with an integer `a`.
    fn gamma_ratio(&mut self, cx: &Canon, x: &Normal) -> Result<Normal, Miss> {
        let a = self.slope(cx, x)?;
        let a = a
            .as_constant()
            .filter(Rational::is_integer)
            .and_then(|a| a.to_i64())
            .ok_or(Miss::NotHolonomic)?;
        if a.abs() > MAX_GAMMA_STEP {
            return Err(Miss::Budget);
        }
        let max = max_terms();
        let mut acc = Normal::one();
        // Γ(x + a) / Γ(x) = x (x+1) ... (x+a-1) for a > 0, 1 / ((x-1) ... (x-|a|)) for a < 0
        let steps: Vec<i64> = if a >= 0 {
            (0..a).collect()
        } else {
            (1..=-a).map(|j| -j).collect()
        };
        for j in steps {
            let factor = x
                .add(&Normal::constant(Rational::from_integer(j)), max)
                .map_err(budget_miss)?;
            acc = if a >= 0 {
                acc.mul(&factor, max).map_err(budget_miss)?
            } else {
                acc.div(&factor, max)
                    .map_err(budget_miss)?
                    .ok_or(Miss::NotHolonomic)?
            };
        }
        Ok(acc)
    }

    /// For `s = a k + b` with `a`, `b` free of `k` (and no other kernel depending on
    /// `k`): `a`. Anything else (`k^2`, `log(k)`, `k` in a denominator) has no rule.
    fn slope(&mut self, cx: &Canon, s: &Normal) -> Result<Normal, Miss> {
        for v in vars_of(s) {
            if v != self.kk && self.depends(cx, v) {
                return Err(Miss::NotHolonomic);
            }
        }
        if s.den().degree_in(self.kk) > 0 || s.num().degree_in(self.kk) > 1 {
            return Err(Miss::NotHolonomic);
        }
        let a = s
            .num()
            .coefficients_in(self.kk)
            .into_iter()
            .find(|(d, _)| *d == 1)
            .map(|(_, c)| c)
            .unwrap_or_else(Poly::zero);
        Normal::from_parts(a, s.den().clone()).ok_or(Miss::NotHolonomic)
    }
}

/// The session budget for plain field arithmetic on ratios.
fn max_terms() -> usize {
    slic_algebra::canon::CanonConfig::default().max_terms
}

/// The kernels of numerator and denominator, increasing.
pub(crate) fn vars_of(n: &Normal) -> Vec<u32> {
    let mut v = n.num().vars();
    v.extend(n.den().vars());
    v.sort_unstable();
    v.dedup();
    v
}

/// `p = m · rest` where `m` is the largest monomial in the kernels `hyper` dividing every
/// term of `p`.
fn split_content(p: &Poly, hyper: &[u32]) -> (Monomial, Poly) {
    let mut content: Vec<(u32, u32)> = Vec::new();
    for &h in hyper {
        let e = p
            .terms()
            .iter()
            .map(|(m, _)| m.degree_in(h))
            .min()
            .unwrap_or(0);
        if e > 0 {
            content.push((h, e));
        }
    }
    let m = Monomial::from_pairs(content);
    if m.is_one() {
        return (m, p.clone());
    }
    let rest = Poly::from_terms(
        p.terms()
            .iter()
            .map(|(t, c)| (t.div(&m).unwrap_or_else(|| t.clone()), c.clone())),
    );
    (m, rest)
}

/// Why a polynomial with hypergeometric kernels left after taking out their common
/// monomial has no first-order recurrence: a sum of `n` terms with distinct
/// hypergeometric parts has (at most) an order-`n` one.
fn mixture_miss(rest: &Poly, hyper: &[u32]) -> Miss {
    let mut parts: Vec<Monomial> = rest
        .terms()
        .iter()
        .map(|(m, _)| {
            Monomial::from_pairs(m.pairs().iter().copied().filter(|(v, _)| hyper.contains(v)))
        })
        .collect();
    parts.sort_by(slic_algebra::poly::lex);
    parts.dedup();
    if parts.len() >= 2 {
        Miss::Order(parts.len())
    } else {
        Miss::NotHolonomic
    }
}

#[cfg(test)]
mod tests;
