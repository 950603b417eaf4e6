//! Gamma ratios in loop bodies (issue 10 §3, the Dirichlet-multinomial): the body of a
//! `product` or `summate` is a ratio of gamma functions whose arguments differ by
//!
//! - a literal integer `m` (`1 <= m <= MAX_RISING`): `Γ(x + m) / Γ(x)` is the rising
//!   factorial `x (x + 1) ... (x + m - 1)`, a polynomial, cheaper than two special
//!   functions (and `Γ(x) / Γ(x + m)` its reciprocal);
//! - an indicator `[c]` (`if c: 1 else: 0`): `Γ(x + [c]) / Γ(x)` is `if c: x else: 1`,
//!   which is what makes a Dirichlet-multinomial predictive weight
//!   `Π_k Γ(a[k] + n_k + [k == z]) / Γ(a[k] + n_k)` collapse to `a[z] + n_z`.
//!
//! Both are equalities wherever the gamma functions are finite (away from the poles at
//! the non-positive integers, the usual removable singularities of cancelling `x / x`);
//! they are applied only when the smaller argument is a prob (then it is positive
//! wherever `Γ` of it is finite), so every factor written is a prob again. The rest of
//! the body is untouched; the parent module closes what remains.

use super::Loop;
use crate::canon::{Kernel, Normal, Overflow};
use crate::num::Rational;
use crate::poly::{Monomial, Poly};
use crate::term::{Node, Prim, TermId};
use crate::types::Type;

/// The largest literal shift written out as a rising factorial (`m` factors).
const MAX_RISING: i64 = 8;

/// One `Γ(arg)` kernel of a monomial: kernel index, exponent, argument.
pub(super) type Gamma = (u32, u32, TermId);

impl Loop<'_, '_> {
    /// `n` with each ratio `Γ(x + m) / Γ(x)` (or `Γ(x + [c]) / Γ(x)`, either way up) of its
    /// one-monomial numerator and denominator written out; `n` itself when there is none.
    pub(super) fn gamma_ratios(&mut self, n: &Normal) -> Result<Normal, Overflow> {
        let (Some(top), Some(bottom)) = (self.gammas(n.num()), self.gammas(n.den())) else {
            return Ok(n.clone());
        };
        let mut acc = n.clone();
        let mut used_top = vec![false; top.len()];
        let mut used_bottom = vec![false; bottom.len()];
        for (i, &(kt, et, at)) in top.iter().enumerate() {
            for (j, &(kb, eb, ab)) in bottom.iter().enumerate() {
                if used_top[i] || used_bottom[j] {
                    continue;
                }
                let Some(r) = self.gamma_ratio(at, ab)? else {
                    continue;
                };
                // Γ(at)^e / Γ(ab)^e replaced by r^e, e the common exponent
                let e = et.min(eb);
                let old = Normal::from_parts(
                    Poly::term(Monomial::from_pairs([(kb, e)]), Rational::one()),
                    Poly::term(Monomial::from_pairs([(kt, e)]), Rational::one()),
                )
                .ok_or(Overflow)?;
                let r = self.cx.pow(&r, i64::from(e))?.ok_or(Overflow)?;
                acc = self.cx.mul(&acc, &old)?;
                acc = self.cx.mul(&acc, &r)?;
                used_top[i] = true;
                used_bottom[j] = true;
                self.changed = true;
            }
        }
        Ok(acc)
    }

    /// The `Γ` kernels of a one-monomial polynomial (`None` for a sum of monomials).
    pub(super) fn gammas(&mut self, p: &Poly) -> Option<Vec<Gamma>> {
        let [(m, _)] = p.terms() else {
            return (p.as_constant().is_some()).then(Vec::new);
        };
        let mut out = Vec::new();
        for &(k, e) in m.pairs() {
            let Some(Kernel::Atom(t)) = self.cx.kernels().get(k).map(|i| i.kernel.clone()) else {
                continue;
            };
            if let Node::Prim(Prim::GammaFunc, args) = self.cx.store().node(t) {
                if let [a] = args.as_slice() {
                    out.push((k, e, *a));
                }
            }
        }
        Some(out)
    }

    /// `Γ(a) / Γ(b)` as a rising factorial or an indicator choice (see the module doc),
    /// when `a - b` (or `b - a`) is such a shift and the smaller argument is a prob.
    fn gamma_ratio(&mut self, a: TermId, b: TermId) -> Result<Option<Normal>, Overflow> {
        let na = self.cx.normal_of(a);
        let nb = self.cx.normal_of(b);
        let diff = self.cx.add(&na, &nb.neg())?;
        for (up, x, d) in [(true, &nb, diff.clone()), (false, &na, diff.neg())] {
            if !self.cx.fits(x, &Type::Prob) {
                continue;
            }
            let r = if let Some(m) = d.as_constant() {
                let m = m.is_integer().then(|| m.to_i64()).flatten();
                match m.filter(|m| (1..=MAX_RISING).contains(m)) {
                    Some(m) => self.rising(x, m)?,
                    None => continue,
                }
            } else if let Some(c) = self.indicator(&d) {
                let xt = self.cx.write(x, &Type::Prob);
                let one = self.lit(1, &Type::Prob);
                let t = self.store().intern(Node::If(c, xt, one), Type::Prob);
                self.cx.normal_of(t)
            } else {
                continue;
            };
            return Ok(Some(if up { r } else { r.recip().ok_or(Overflow)? }));
        }
        Ok(None)
    }

    /// `x (x + 1) ... (x + m - 1)`.
    fn rising(&mut self, x: &Normal, m: i64) -> Result<Normal, Overflow> {
        let mut acc = Normal::one();
        for j in 0..m {
            let f = self
                .cx
                .add(x, &Normal::constant(Rational::from_integer(j)))?;
            acc = self.cx.mul(&acc, &f)?;
        }
        Ok(acc)
    }

    /// For `d` the canonical form of an indicator `if c: 1 else: 0`: `c`.
    fn indicator(&mut self, d: &Normal) -> Option<TermId> {
        let (k, c) = d.as_scaled_kernel()?;
        if !c.is_one() {
            return None;
        }
        let (cond, a) = self.guard_of(k, 0)?;
        let one = Rational::one();
        matches!(self.cx.store().node(a), Node::Lit(v) if *v == one).then_some(cond)
    }
}
