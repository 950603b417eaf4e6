//! The laws beyond field arithmetic that canonical forms obey: exponentials, logarithms
//! and powers with rational exponents.
//!
//! - `exp`: one `Exp` kernel per monomial (`e^a e^b = e^(a+b)`, `(e^a)^2 = e^(2a)`,
//!   `e^0 = 1`); `k * log(b)` summands of an exponent leave it as powers `b^k`
//!   (`exp(log x) = x`, `exp(-log x) = 1/x`, `exp(log(x)/2) = sqrt(x)`); a monomial
//!   denominator never holds an `Exp` (`1/e^s = e^(-s)`) nor a radical (`1/sqrt(2) =
//!   sqrt(2)/2`).
//! - powers of a non-negative base merge (`sqrt(x) sqrt(x) = x`, `x^(1/2) x^(1/3) =
//!   x^(5/6)`); a `Pow` kernel's exponent is in (0, 1), the integer part being an
//!   ordinary power of the base's canonical form; a base that is a monomial of
//!   non-negative kernels splits (`sqrt(x*y) = sqrt(x) sqrt(y)`); `b ** y` with symbolic
//!   `y` is `exp(y * log b)`; of `k * log(b)` with a polynomial coefficient `k`, the
//!   constant term leaves the exponent as a power of `b` (the split depends only on the
//!   value: `k` is the exponent's derivative in `log b`), so `b ** (a - 1)` and
//!   `b ** a / b` have one form (written back as the former, see `write`).
//! - powers of rational constants are exact and have one form: exponents are gathered
//!   per prime factor, integer parts multiply out, and what remains is one radical per
//!   root index (`sqrt(8) = 2 sqrt(2)`, `sqrt(4) = 2`, `sqrt(2) sqrt(3) = sqrt(6)`,
//!   `sqrt(2) natroot(4, 3) = 2 natroot(2, 6)`).
//! - `log`: `log(1) = 0`, `log(exp s) = s`, the log of a monomial of non-negative
//!   kernels is a sum of logs (`log(x^k) = k log x`, `log(p/q) = log p - log q` for
//!   integers), a non-negative monomial factor of a sum splits off; `log(pi)` and the
//!   log of anything else is an atom.
//!
//! Every law here holds for all values of the variables allowed by their types (bases of
//! `Pow` kernels are prob terms). This file builds kernels and terms only through the
//! session.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};

use super::kernel::{Kernel, KernelInfo};
use super::normal::{Normal, Overflow};
use super::Canon;
use crate::num::Rational;
use crate::poly::{Monomial, Poly};
use crate::term::{Node, Prim, TermId};
use crate::types::{Coercion, Type};

/// How deep `fix` may re-enter itself (a merged monomial rarely needs a second pass).
const MAX_FIX_DEPTH: u32 = 3;

/// `p / q` as a rational (`q != 0`).
pub(crate) fn frac(p: i64, q: i64) -> Rational {
    Rational::new(BigRational::new(BigInt::from(p), BigInt::from(q)))
}

/// A power `base^exponent` waiting to be merged: the base as a canonical prob term, its
/// canonical form, and the exponent.
type Power = (TermId, Normal, Rational);

/// What groups a special kernel with the ones it merges with.
#[derive(PartialEq, Eq)]
enum Group {
    Exp,
    Base(TermId),
    /// Every radical of a rational: they merge by base, then by root index.
    Radical,
}

impl Canon<'_> {
    // ---- arithmetic that keeps the laws --------------------------------------------

    /// The sum of many canonical forms: polynomials and fractions over one denominator
    /// are added term-wise, and fractions are reduced once per denominator.
    pub(crate) fn sum_of(&mut self, items: Vec<Normal>) -> Result<Normal, Overflow> {
        let max = self.config.max_terms;
        let mut terms: Vec<(Monomial, Rational)> = Vec::new();
        let mut groups: Vec<(Poly, Vec<(Monomial, Rational)>)> = Vec::new();
        let mut count = 0usize;
        for n in items {
            count += n.num().terms().len();
            if count > max.saturating_mul(16) {
                return Err(Overflow);
            }
            if n.is_polynomial() {
                terms.extend(n.num().terms().iter().cloned());
                continue;
            }
            let (num, den) = n.into_parts();
            match groups.iter_mut().find(|g| g.0 == den) {
                Some(g) => g.1.extend(num.terms().iter().cloned()),
                None => groups.push((den, num.terms().to_vec())),
            }
        }
        let mut acc = Normal::from_poly(Poly::from_terms(terms));
        for (den, num) in groups {
            let f = Normal::from_parts(Poly::from_terms(num), den).unwrap_or_else(Normal::zero);
            acc = acc.add(&f, max)?;
        }
        if acc.num().terms().len() > max {
            return Err(Overflow);
        }
        self.fix(acc)
    }

    /// `a + b` with the laws (the two-term case of `sum_of`). Public so that
    /// callers holding canonical forms (holonomic recognition) can combine them without
    /// writing and re-reading terms.
    pub fn add(&mut self, a: &Normal, b: &Normal) -> Result<Normal, Overflow> {
        self.sum_of(vec![a.clone(), b.clone()])
    }

    /// `a * b` with the laws (exponentials and powers merged).
    pub fn mul(&mut self, a: &Normal, b: &Normal) -> Result<Normal, Overflow> {
        let r = a.mul(b, self.config.max_terms)?;
        self.fix(r)
    }

    pub(crate) fn recip(&mut self, a: &Normal) -> Result<Option<Normal>, Overflow> {
        match a.recip() {
            Some(r) => self.fix(r).map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn pow(&mut self, a: &Normal, k: i64) -> Result<Option<Normal>, Overflow> {
        match a.pow(k, self.config.max_terms)? {
            Some(r) => self.fix(r).map(Some),
            None => Ok(None),
        }
    }

    // ---- exp, log, roots -------------------------------------------------------------

    /// `e^s` with the laws (`k * log(b)` summands become powers of `b`).
    pub fn exp(&mut self, s: &Normal) -> Result<Normal, Overflow> {
        self.build_product(Rational::one(), Monomial::one(), s.clone(), Vec::new())
    }

    /// For `n = m * e^s / d` with `m` a monomial: `(m / d, s)`.
    pub(crate) fn peel_exp(&self, n: &Normal) -> Option<(Normal, Normal)> {
        let (m, c) = single(n.num())?;
        let (k, s) = m.pairs().iter().find_map(|&(k, e)| {
            let info = self.kernels.get(k)?;
            match (&info.kernel, e) {
                (Kernel::Exp(_), 1) => Some((k, info.exp_arg.clone()?)),
                _ => None,
            }
        })?;
        let rest = Monomial::from_pairs(m.pairs().iter().copied().filter(|p| p.0 != k));
        let rest = Normal::from_parts(Poly::term(rest, c), n.den().clone())?;
        Some((rest, s))
    }

    /// `log(a)` for a prob term `a`.
    pub(crate) fn log(&mut self, a: TermId) -> Result<Normal, Overflow> {
        let n = self.normal_of(a);
        self.log_normal(&n)
    }

    fn log_normal(&mut self, n: &Normal) -> Result<Normal, Overflow> {
        if let Some(q) = n.as_constant() {
            return Ok(self.log_constant(&q));
        }
        let max = self.config.max_terms;
        let (num, den) = (n.num(), n.den());
        if let (Some(cn), Some(cd)) = (single(num), single(den)) {
            let c = &cn.1 * &cd.1.recip().unwrap_or_else(Rational::one);
            if !c.is_negative() && self.all_nonneg(&cn.0) && self.all_nonneg(&cd.0) {
                let mut acc = self.log_constant(&c);
                for (m, sign) in [(&cn.0, 1i64), (&cd.0, -1)] {
                    for &(k, e) in m.pairs() {
                        let l = self.log_kernel(k)?;
                        let w = Rational::from_integer(sign * i64::from(e));
                        acc = acc.add(&l.scale(&w), max)?;
                    }
                }
                return Ok(acc);
            }
        }
        // a non-negative monomial factor of numerator or denominator splits off
        let mn = content(num);
        let md = content(den);
        if (!mn.is_one() || !md.is_one()) && self.all_nonneg(&mn) && self.all_nonneg(&md) {
            let strip = |p: &Poly, m: &Monomial| {
                Poly::from_terms(
                    p.terms()
                        .iter()
                        .map(|(t, c)| (t.div(m).unwrap_or_else(|| t.clone()), c.clone())),
                )
            };
            let rest =
                Normal::from_parts(strip(num, &mn), strip(den, &md)).unwrap_or_else(Normal::one);
            let mut acc = self.log_atom_of(&rest);
            for (m, sign) in [(&mn, 1i64), (&md, -1)] {
                for &(k, e) in m.pairs() {
                    let l = self.log_kernel(k)?;
                    let w = Rational::from_integer(sign * i64::from(e));
                    acc = acc.add(&l.scale(&w), max)?;
                }
            }
            return Ok(acc);
        }
        Ok(self.log_atom_of(n))
    }

    /// `real2prob(m·r / d)` as `m / d · real2prob(r)` where the monomial `m` (common to
    /// every term of the numerator) has non-negative kernels and the denominator `d` is
    /// a prob by its form, as `log` splits them: `None` when nothing splits off. Issue
    /// 10: a precision `invNoise·(n Σx^2 - (Σx)^2 + ..)` written as a prob keeps
    /// `invNoise` visible, so a later density is read as a power of it, not an atom.
    pub(crate) fn split_nonneg_part(&mut self, n: &Normal) -> Option<Normal> {
        let (num, den) = (n.num(), n.den());
        let m = content(num);
        let den_fits = self.fits(&Normal::from_parts(den.clone(), Poly::one())?, &Type::Prob);
        let m = if self.all_nonneg(&m) {
            m
        } else {
            Monomial::one()
        };
        let den_one = den.as_constant().is_some_and(|d| d.is_one());
        if m.is_one() && (den_one || !den_fits) {
            return None;
        }
        let rest_num = Poly::from_terms(
            num.terms()
                .iter()
                .map(|(t, c)| (t.div(&m).unwrap_or_else(|| t.clone()), c.clone())),
        );
        let (rest, outside_den) = if den_fits {
            (Normal::from_parts(rest_num, Poly::one())?, den.clone())
        } else {
            (Normal::from_parts(rest_num, den.clone())?, Poly::one())
        };
        // a variable the context proves non-negative is read through `real2prob` (as
        // `real2prob(v)` itself is), so both spellings of `real2prob(v) / d` have one form
        let transparent_var = rest
            .as_scaled_kernel()
            .filter(|(_, c)| c.is_one())
            .and_then(|(k, _)| self.kernels.get(k).and_then(|i| i.term))
            .is_some_and(|v| self.proves_nonnegative(v));
        let atom = if self.fits(&rest, &Type::Prob) || transparent_var {
            rest
        } else {
            let inner = self.write(&rest, &Type::Real);
            let term = self.coerce(Coercion::Real2Prob, inner);
            self.atom_normal(term)
        };
        let outside = Normal::from_parts(Poly::term(m, Rational::one()), outside_den)?;
        atom.mul(&outside, self.config.max_terms).ok()
    }

    fn all_nonneg(&self, m: &Monomial) -> bool {
        m.pairs()
            .iter()
            .all(|&(k, _)| self.kernels.get(k).is_some_and(|i| i.nonneg))
    }

    /// `log` of one non-negative kernel.
    fn log_kernel(&mut self, k: u32) -> Result<Normal, Overflow> {
        let Some(info) = self.kernels.get(k) else {
            return Ok(Normal::zero());
        };
        match &info.kernel {
            Kernel::Exp(_) => Ok(info.exp_arg.clone().unwrap_or_else(Normal::zero)),
            Kernel::Pow(_, r) => {
                let r = r.clone();
                let base = info.base.clone();
                match base {
                    Some((_, bn)) => Ok(self.log_normal(&bn)?.scale(&r)),
                    None => Ok(Normal::zero()),
                }
            }
            Kernel::Atom(_) | Kernel::Pi => Ok(self.log_atom_of(&Normal::kernel(k))),
        }
    }

    /// `log(q)` for a rational constant: 0 for 1, `log(p) - log(q)` for integers.
    fn log_constant(&mut self, q: &Rational) -> Normal {
        if q.is_one() {
            return Normal::zero();
        }
        if !q.is_negative() && !q.is_zero() {
            let mut acc = Normal::zero();
            // log of an integer is the sum of the logs of its small prime factors (so
            // `2 ** n * 3 ** n * (1/6) ** n` is 1), and of the cofactor they leave
            for (part, sign) in [(q.numer(), 1i64), (q.denom(), -1)] {
                for (f, e) in small_factors(&part) {
                    let l = self.log_atom_of(&Normal::constant(f));
                    let w = Rational::from_integer(sign * i64::from(e));
                    acc = acc.add(&l.scale(&w), usize::MAX).unwrap_or(acc);
                }
            }
            return acc;
        }
        self.log_atom_of(&Normal::constant(q.clone()))
    }

    /// The atom `log(b)` for the canonical form of a prob value `b`.
    fn log_atom_of(&mut self, b: &Normal) -> Normal {
        let bt = self.write(b, &Type::Prob);
        let t = self.store.prim(Prim::Log, vec![bt], Type::Real);
        if let Some(k) = self.kernels.find(&Kernel::Atom(t)) {
            return Normal::kernel(k);
        }
        let k = self.kernels.intern(KernelInfo {
            kernel: Kernel::Atom(t),
            term: Some(t),
            ty: Type::Real,
            nonneg: false,
            exp_arg: None,
            base: Some((bt, b.clone())),
            is_log: true,
        });
        Normal::kernel(k)
    }

    /// `a^r` for a prob term `a` and a rational `r`.
    pub(crate) fn root(&mut self, a: TermId, r: &Rational) -> Result<Normal, Overflow> {
        let bn = self.normal_of(a);
        self.power_of(&bn, r)
    }

    fn power_of(&mut self, bn: &Normal, r: &Rational) -> Result<Normal, Overflow> {
        if r.is_integer() {
            let k = r.to_i64().ok_or(Overflow)?;
            return self.pow(bn, k)?.ok_or(Overflow);
        }
        if let Some(c) = bn.as_constant() {
            if c.is_negative() {
                return Err(Overflow);
            }
        }
        let mut pows: Vec<Power> = Vec::new();
        let mut exp_sum = Normal::zero();
        let max = self.config.max_terms;
        match (single(bn.num()), single(bn.den())) {
            (Some((mn, cn)), Some((md, cd)))
                if !cn.is_negative() && self.all_nonneg(&mn) && self.all_nonneg(&md) =>
            {
                // a monomial of non-negative kernels: each factor on its own
                let c = &cn * &cd.recip().unwrap_or_else(Rational::one);
                if !c.is_one() {
                    let ct = self.lit(c.clone(), &Type::Prob);
                    pows.push((ct, Normal::constant(c), r.clone()));
                }
                for (m, sign) in [(&mn, 1i64), (&md, -1)] {
                    for &(k, e) in m.pairs() {
                        let w = r * &Rational::from_integer(sign * i64::from(e));
                        self.split_kernel_power(k, w, &mut pows, &mut exp_sum, max)?;
                    }
                }
            }
            _ => {
                let bt = self.write(bn, &Type::Prob);
                pows.push((bt, bn.clone(), r.clone()));
            }
        }
        self.build_product(Rational::one(), Monomial::one(), exp_sum, pows)
    }

    /// Kernel `k` to the rational power `w`, as a pending power or exponent summand.
    fn split_kernel_power(
        &mut self,
        k: u32,
        w: Rational,
        pows: &mut Vec<Power>,
        exp_sum: &mut Normal,
        max: usize,
    ) -> Result<(), Overflow> {
        let Some(info) = self.kernels.get(k) else {
            return Ok(());
        };
        match &info.kernel {
            Kernel::Exp(_) => {
                if let Some(s) = &info.exp_arg {
                    *exp_sum = exp_sum.add(&s.scale(&w), max)?;
                }
            }
            Kernel::Pow(b, r0) => {
                let b = *b;
                let e = r0 * &w;
                let bn = info
                    .base
                    .as_ref()
                    .map(|x| x.1.clone())
                    .unwrap_or_else(Normal::one);
                pows.push((b, bn, e));
            }
            Kernel::Atom(_) | Kernel::Pi => {
                let bt = self.kernel_term(k, &Type::Prob);
                pows.push((bt, Normal::kernel(k), w));
            }
        }
        Ok(())
    }

    // ---- merging special kernels -----------------------------------------------------

    fn special_group(&self, k: u32) -> Option<Group> {
        let info = self.kernels.get(k)?;
        match &info.kernel {
            Kernel::Exp(_) => Some(Group::Exp),
            Kernel::Pow(b, _) => match self.store.node(*b) {
                Node::Lit(_) => Some(Group::Radical),
                _ => Some(Group::Base(*b)),
            },
            _ => None,
        }
    }

    fn has_special(&self, p: &Poly) -> bool {
        p.terms().iter().any(|(m, _)| {
            m.pairs()
                .iter()
                .any(|&(k, _)| self.special_group(k).is_some())
        })
    }

    /// Does this monomial hold specials that must merge (two of one group, or a power)?
    fn needs_fix(&self, m: &Monomial) -> bool {
        let mut seen: Vec<Group> = Vec::new();
        for &(k, e) in m.pairs() {
            if let Some(g) = self.special_group(k) {
                if e > 1 || seen.contains(&g) {
                    return true;
                }
                seen.push(g);
            }
        }
        false
    }

    /// Re-establish the laws on a result of field arithmetic.
    pub(crate) fn fix(&mut self, n: Normal) -> Result<Normal, Overflow> {
        if self.fix_depth >= MAX_FIX_DEPTH
            || !(self.has_special(n.num()) || self.has_special(n.den()))
        {
            return Ok(n);
        }
        self.fix_depth += 1;
        let r = self.fix_inner(n);
        self.fix_depth -= 1;
        r
    }

    fn fix_inner(&mut self, n: Normal) -> Result<Normal, Overflow> {
        let max = self.config.max_terms;
        let (num, den) = n.into_parts();
        let num = self.fix_poly(&num)?;
        let den = self.fix_poly(&den)?;
        // a monomial denominator sheds its specials into the numerator
        let den = if den.is_polynomial() && den.num().terms().len() == 1 {
            den
        } else {
            return num.div(&den, max)?.ok_or(Overflow);
        };
        let Some((m, c)) = single(den.num()) else {
            return num.div(&den, max)?.ok_or(Overflow);
        };
        let mut plain = Vec::new();
        let mut exp_sum = Normal::zero();
        let mut pows: Vec<Power> = Vec::new();
        for &(k, e) in m.pairs() {
            if self.special_group(k).is_some() {
                let w = Rational::from_integer(-i64::from(e));
                self.split_kernel_power(k, w, &mut pows, &mut exp_sum, max)?;
            } else {
                plain.push((k, e));
            }
        }
        if pows.is_empty() && exp_sum.is_zero() {
            return num.div(&den, max)?.ok_or(Overflow);
        }
        let inv = self.build_product(Rational::one(), Monomial::one(), exp_sum, pows)?;
        let rest = Normal::from_poly(Poly::term(Monomial::from_pairs(plain), c));
        let top = num.mul(&inv, max)?;
        let r = top.div(&rest, max)?.ok_or(Overflow)?;
        self.fix(r)
    }

    /// A polynomial with every monomial's specials merged.
    fn fix_poly(&mut self, p: &Poly) -> Result<Normal, Overflow> {
        let max = self.config.max_terms;
        let mut plain: Vec<(Monomial, Rational)> = Vec::new();
        let mut acc = Normal::zero();
        for (m, c) in p.terms() {
            if !self.needs_fix(m) {
                plain.push((m.clone(), c.clone()));
                continue;
            }
            let mut keep = Vec::new();
            let mut exp_sum = Normal::zero();
            let mut pows: Vec<Power> = Vec::new();
            for &(k, e) in m.pairs() {
                if self.special_group(k).is_some() {
                    let w = Rational::from_integer(i64::from(e));
                    self.split_kernel_power(k, w, &mut pows, &mut exp_sum, max)?;
                } else {
                    keep.push((k, e));
                }
            }
            let f = self.build_product(c.clone(), Monomial::from_pairs(keep), exp_sum, pows)?;
            acc = acc.add(&f, max)?;
        }
        let plain = Normal::from_poly(Poly::from_terms(plain));
        acc.add(&plain, max)
    }

    /// `c * plain * e^exp_sum * Π base^exponent`, every law applied.
    fn build_product(
        &mut self,
        c: Rational,
        plain: Monomial,
        exp_sum: Normal,
        mut pows: Vec<Power>,
    ) -> Result<Normal, Overflow> {
        let max = self.config.max_terms;
        // `k * log(b)` summands of the exponent (k rational) become powers of b
        let mut exp_rest = exp_sum;
        for v in exp_rest.num().vars() {
            let Some(info) = self.kernels.get(v).filter(|i| i.is_log) else {
                continue;
            };
            let Some((bt, bn)) = info.base.clone() else {
                continue;
            };
            if exp_rest.num().degree_in(v) != 1 || exp_rest.den().degree_in(v) != 0 {
                continue;
            }
            // s = y * log(b) + rest; b^k leaves for the constant term k of y (y's value
            // is s's derivative in log(b), so this split does not depend on the form)
            let (y, _) = split_linear(exp_rest.num(), v);
            let Some(yn) = Normal::from_parts(y, exp_rest.den().clone()) else {
                continue;
            };
            let k = match yn.as_constant() {
                Some(k) => k,
                None if yn.is_polynomial() => match constant_term(yn.num()) {
                    Some(k) => k,
                    None => continue,
                },
                None => continue,
            };
            pows.push((bt, bn, k.clone()));
            exp_rest = exp_rest.sub(&Normal::kernel(v).scale(&k), usize::MAX)?;
        }
        let mut acc = Normal::from_poly(Poly::term(plain, c));
        if !exp_rest.is_zero() {
            let k = self.exp_kernel(exp_rest);
            acc = acc.mul(&Normal::kernel(k), max)?;
        }
        // merge powers of one base (bases are canonical terms)
        pows.sort_by_key(|p| p.0);
        let mut merged: Vec<Power> = Vec::with_capacity(pows.len());
        for p in pows {
            match merged.last_mut() {
                Some(last) if last.0 == p.0 => last.2 = &last.2 + &p.2,
                _ => merged.push(p),
            }
        }
        // powers of rational constants: exponents per prime factor, so every product
        // of radicals has one form (`sqrt(2) * natroot(4, 3) = 2 * natroot(2, 6)`)
        let mut primes: Vec<(BigInt, Rational)> = Vec::new();
        for (bt, bn, r) in merged {
            if r.is_zero() {
                continue;
            }
            if let Some(v) = bn.as_constant() {
                if v.is_zero() {
                    if r.is_negative() {
                        return Err(Overflow);
                    }
                    return Ok(Normal::zero());
                }
                if v.is_negative() {
                    return Err(Overflow);
                }
                for (num, sign) in [(v.numer(), 1i64), (v.denom(), -1)] {
                    for (p, k) in factor(&num) {
                        let e = &r * &Rational::from_integer(sign * i64::from(k));
                        match primes.iter_mut().find(|x| x.0 == p) {
                            Some(x) => x.1 = &x.1 + &e,
                            None => primes.push((p, e)),
                        }
                    }
                }
                continue;
            }
            let fl = r.floor();
            let whole = fl.to_i64().ok_or(Overflow)?;
            let f = &r - &fl;
            if whole != 0 {
                let pw = bn.pow(whole, max)?.ok_or(Overflow)?;
                acc = acc.mul(&pw, max)?;
            }
            if !f.is_zero() {
                let k = self.pow_kernel(bt, bn, f);
                acc = acc.mul(&Normal::kernel(k), max)?;
            }
        }
        // p^e = p^floor(e) * p^(a/q): the integer parts scale, the rest gathers into
        // one radicand per root index q
        let mut radicals: Vec<(BigInt, BigInt)> = Vec::new();
        for (p, e) in primes {
            let fl = e.floor();
            let whole = fl.to_i64().ok_or(Overflow)?;
            let pr = Rational::from_bigint(p.clone());
            acc = acc.scale(&pr.pow(whole).ok_or(Overflow)?);
            let f = &e - &fl;
            if f.is_zero() {
                continue;
            }
            let (a, q) = (f.numer(), f.denom());
            let pa = num_traits::pow(p, a.to_usize().ok_or(Overflow)?);
            match radicals.iter_mut().find(|x| x.0 == q) {
                Some(x) => x.1 *= pa,
                None => radicals.push((q, pa)),
            }
        }
        radicals.sort_by(|a, b| a.0.cmp(&b.0));
        for (q, radicand) in radicals {
            let qn = q.to_i64().ok_or(Overflow)?;
            let radicand = Rational::from_bigint(radicand);
            let rt = self.lit(radicand.clone(), &Type::Prob);
            let k = self.pow_kernel(rt, Normal::constant(radicand), frac(1, qn));
            acc = acc.mul(&Normal::kernel(k), max)?;
        }
        Ok(acc)
    }

    /// The kernel `e^s` (`s` not zero); its term is written when first needed.
    fn exp_kernel(&mut self, s: Normal) -> u32 {
        let key = Kernel::Exp(s);
        if let Some(k) = self.kernels.find(&key) {
            return k;
        }
        let arg = match &key {
            Kernel::Exp(s) => s.clone(),
            _ => Normal::zero(),
        };
        self.kernels.intern(KernelInfo {
            kernel: key,
            term: None,
            ty: Type::Prob,
            nonneg: true,
            exp_arg: Some(arg),
            base: None,
            is_log: false,
        })
    }

    /// The natural term of kernel `k` (writing an `Exp` kernel's exponent the first
    /// time).
    pub(crate) fn natural_term(&mut self, k: u32) -> Option<TermId> {
        let info = self.kernels.get(k)?;
        if let Some(t) = info.term {
            return Some(t);
        }
        let s = info.exp_arg.clone()?;
        let st = self.write(&s, &Type::Real);
        let t = self.store.prim(Prim::Exp, vec![st], Type::Prob);
        self.kernels.set_term(k, t);
        Some(t)
    }

    /// The kernel `b^f` for a canonical prob term `b` and `0 < f < 1`.
    fn pow_kernel(&mut self, b: TermId, bn: Normal, f: Rational) -> u32 {
        let key = Kernel::Pow(b, f.clone());
        if let Some(k) = self.kernels.find(&key) {
            return k;
        }
        let (p, q) = (f.numer(), f.denom());
        let term = if p.is_one() && q == BigInt::from(2) {
            self.store.prim(Prim::Sqrt, vec![b], Type::Prob)
        } else if p.is_one() {
            let qt = self.lit(Rational::new(BigRational::from_integer(q)), &Type::Nat);
            self.store.prim(Prim::NatRoot, vec![b, qt], Type::Prob)
        } else {
            let ft = self.lit(f.clone(), &Type::Real);
            self.store.prim(Prim::RealPow, vec![b, ft], Type::Prob)
        };
        self.kernels.intern(KernelInfo {
            kernel: key,
            term: Some(term),
            ty: Type::Prob,
            nonneg: true,
            exp_arg: None,
            base: Some((b, bn)),
            is_log: false,
        })
    }
}

/// `p = y * x_v + rest` for `p` of degree 1 in `v`: `(y, rest)`.
pub(crate) fn split_linear(p: &Poly, v: u32) -> (Poly, Poly) {
    let mut y = Poly::zero();
    let mut rest = Vec::new();
    for (d, c) in p.coefficients_in(v) {
        if d == 1 {
            y = c;
        } else {
            rest.extend(c.terms().iter().cloned());
        }
    }
    (y, Poly::from_terms(rest))
}

/// The constant term of `p`, if it is not zero.
fn constant_term(p: &Poly) -> Option<Rational> {
    p.terms()
        .iter()
        .find(|(m, _)| m.is_one())
        .map(|(_, c)| c.clone())
}

/// The only term of a polynomial, as `(monomial, coefficient)`.
fn single(p: &Poly) -> Option<(Monomial, Rational)> {
    match p.terms() {
        [(m, c)] => Some((m.clone(), c.clone())),
        _ => None,
    }
}

/// The monomial dividing every term of `p` with the largest exponents.
fn content(p: &Poly) -> Monomial {
    let mut acc: Option<Vec<(u32, u32)>> = None;
    for (m, _) in p.terms() {
        acc = Some(match acc {
            None => m.pairs().to_vec(),
            Some(a) => a
                .into_iter()
                .filter_map(|(v, e)| {
                    let d = m.degree_in(v);
                    (d > 0).then_some((v, e.min(d)))
                })
                .collect(),
        });
    }
    Monomial::from_pairs(acc.unwrap_or_default())
}

/// Trial division bound when factoring radicands.
const TRIAL_DIVISION_LIMIT: u64 = 100_000;

/// The prime factorisation of a positive integer, primes increasing; a cofactor left
/// after trial division up to [`TRIAL_DIVISION_LIMIT`] counts as one factor (so two
/// radicands sharing a large prime factor may not merge; nothing becomes wrong).
fn factor(n: &BigInt) -> Vec<(BigInt, u32)> {
    let mut rest = n.clone();
    let mut out = Vec::new();
    let mut p: u64 = 2;
    while p <= TRIAL_DIVISION_LIMIT {
        let bp = BigInt::from(p);
        if &bp * &bp > rest {
            break;
        }
        let mut k = 0u32;
        while (&rest % &bp).is_zero() {
            rest /= &bp;
            k += 1;
        }
        if k > 0 {
            out.push((bp, k));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if !rest.is_one() {
        out.push((rest, 1));
    }
    out
}

/// The factorisation of a positive integer over the primes below 1000, with the cofactor
/// they leave (if not 1) as one more factor of exponent 1; 1 has no factors.
fn small_factors(n: &num_bigint::BigInt) -> Vec<(Rational, u32)> {
    use num_traits::{One, ToPrimitive, Zero};
    let mut out = Vec::new();
    let mut n = n.clone();
    if n <= num_bigint::BigInt::zero() {
        return out;
    }
    let mut p: u32 = 2;
    while p < 1000 && !n.is_one() {
        let bp = num_bigint::BigInt::from(p);
        let mut e = 0u32;
        while (&n % &bp).is_zero() {
            n /= &bp;
            e += 1;
        }
        if e > 0 {
            out.push((Rational::from_integer(i64::from(p)), e));
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if !n.is_one() {
        let r = match n.to_i64() {
            Some(v) => Rational::from_integer(v),
            None => Rational::from_bigint(n),
        };
        out.push((r, 1));
    }
    out
}
