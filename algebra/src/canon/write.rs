//! Writing a [`Normal`] back as a term of a requested numeric type (`Canon::to_term`).
//!
//! The output is what the elaborator would build from the printed text (the rules in
//! the module doc of `elab`):
//! flattened `Add`/`Mul`, `Neg` and `Recip` only as operands, negative constants folded
//! into literals, safe coercions on the leaves. Summands are ordered by total degree
//! (highest first) and then lexicographically in the structural order of their kernels
//! (`order`), the constant last; factors are the coefficient, then kernels in structural
//! order. A polynomial is written expanded (`x^2/2 + y`); a proper fraction as
//! `k * N / D` with `N`, `D` primitive integer polynomials whose first summand is
//! positive, which fixes the constant factor that a rational function leaves free.
//!
//! Arithmetic is done in the requested type when it can be (prob: every coefficient and
//! kernel non-negative; int/nat: integer coefficients and integral kernels), otherwise in
//! real (or int) arithmetic under one unsafe coercion (`real2prob(..)`, `int2nat(..)`).
//! This file decides no law; it writes what the `Normal` says.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rustc_hash::FxHashMap;

use super::normal::Normal;
use super::{Canon, CanonError};
use crate::num::Rational;
use crate::order::compare as cmp_terms;
use crate::poly::{Monomial, Poly};
use crate::term::{Node, Prim, TermId};
use crate::types::{Coercion, Type};

/// One summand ready to write: its kernels `(rank, kernel, exponent)` by rank, and its
/// coefficient.
type Summand<'a> = (Vec<(usize, u32, u32)>, &'a Rational);

impl Canon<'_> {
    /// Write `n` as a canonical term of numeric type `ty`.
    pub fn to_term(&mut self, n: &Normal, ty: &Type) -> Result<TermId, CanonError> {
        if !ty.is_numeric() {
            return Err(CanonError::NotNumeric { ty: ty.clone() });
        }
        Ok(self.write(n, ty))
    }

    pub(crate) fn write(&mut self, n: &Normal, ty: &Type) -> TermId {
        let rank = self.ranks(n);
        match ty {
            Type::Prob if self.fits(n, ty) => self.write_in(n, &rank, &Type::Prob),
            Type::Prob => {
                let r = self.write_in(n, &rank, &Type::Real);
                self.coerce(Coercion::Real2Prob, r)
            }
            Type::Nat if self.fits(n, ty) => self.write_in(n, &rank, &Type::Nat),
            Type::Nat => {
                let i = self.write_integral(n, &rank);
                self.coerce(Coercion::Int2Nat, i)
            }
            Type::Int => self.write_integral(n, &rank),
            _ => self.write_in(n, &rank, &Type::Real),
        }
    }

    /// Int arithmetic when it fits, else `real2int` of the real form (the value of an
    /// int term is an integer, so `real2int` is exact there).
    fn write_integral(&mut self, n: &Normal, rank: &FxHashMap<u32, usize>) -> TermId {
        if self.fits(n, &Type::Int) {
            self.write_in(n, rank, &Type::Int)
        } else {
            let r = self.write_in(n, rank, &Type::Real);
            self.coerce(Coercion::Real2Int, r)
        }
    }

    /// Can `n` be written in `ty`'s own arithmetic?
    pub(crate) fn fits(&self, n: &Normal, ty: &Type) -> bool {
        let kernels_ok = |p: &Poly| {
            p.terms().iter().all(|(m, _)| {
                m.pairs().iter().all(|&(k, _)| match self.kernels.get(k) {
                    Some(info) => match ty {
                        Type::Prob => info.nonneg,
                        Type::Nat => info.ty == Type::Nat,
                        Type::Int => info.ty.is_integral(),
                        _ => true,
                    },
                    None => false,
                })
            })
        };
        let coeffs_ok = |p: &Poly| {
            p.terms().iter().all(|(_, c)| match ty {
                Type::Prob => !c.is_negative(),
                Type::Nat => !c.is_negative() && c.is_integer(),
                Type::Int => c.is_integer(),
                _ => true,
            })
        };
        let den_ok = ty.is_field() || n.is_polynomial();
        den_ok
            && coeffs_ok(n.num())
            && coeffs_ok(n.den())
            && kernels_ok(n.num())
            && kernels_ok(n.den())
    }

    /// The structural rank of every kernel of `n`.
    fn ranks(&mut self, n: &Normal) -> FxHashMap<u32, usize> {
        let mut ks: Vec<u32> = Vec::new();
        for p in [n.num(), n.den()] {
            for (m, _) in p.terms() {
                ks.extend(m.pairs().iter().map(|&(k, _)| k));
            }
        }
        ks.sort_unstable();
        ks.dedup();
        let terms: FxHashMap<u32, Option<TermId>> =
            ks.iter().map(|&k| (k, self.natural_term(k))).collect();
        let store = &*self.store;
        ks.sort_by(|a, b| {
            match (
                terms.get(a).copied().flatten(),
                terms.get(b).copied().flatten(),
            ) {
                (Some(x), Some(y)) => cmp_terms(store, x, y),
                _ => a.cmp(b),
            }
        });
        ks.into_iter().enumerate().map(|(r, k)| (k, r)).collect()
    }

    fn write_in(&mut self, n: &Normal, rank: &FxHashMap<u32, usize>, ty: &Type) -> TermId {
        if n.is_polynomial() {
            let summands = ordered(n.num(), rank, &|m| self.written_degree(m));
            return self.sum(&summands, ty);
        }
        // k * N / D with N, D primitive and their first summands positive
        let num = ordered(n.num(), rank, &|m| self.written_degree(m));
        let den = ordered(n.den(), rank, &|m| self.written_degree(m));
        let (cn, num_p) = primitive(&num);
        let (cd, den_p) = primitive(&den);
        let k = &cn * &cd.recip().unwrap_or_else(Rational::one);
        let negative = k.is_negative();
        let k = if negative { -k } else { k };
        let (p, q) = split(&k);
        let num_s: Vec<Summand> = num
            .iter()
            .zip(&num_p)
            .map(|(s, c)| (s.0.clone(), c))
            .collect();
        let den_s: Vec<Summand> = den
            .iter()
            .zip(&den_p)
            .map(|(s, c)| (s.0.clone(), c))
            .collect();
        let mut ops = Vec::new();
        if !p.is_one() {
            ops.push(self.lit(p, ty));
        }
        let mut q = q;
        let mut dops = Vec::new();
        match (num_s.as_slice(), den_s.as_slice()) {
            ([(nk, nc)], [(dk, dc)]) if nc.is_one() && dc.is_one() => {
                let (mut nk, mut dk) = (nk.clone(), dk.clone());
                self.sqrt_to_den(&mut nk, &mut dk, &mut q);
                if !q.is_one() {
                    dops.push(self.lit(q, ty));
                }
                self.kernel_factors(&nk, &dk, ty, &mut ops, &mut dops);
            }
            _ => {
                if !q.is_one() {
                    dops.push(self.lit(q, ty));
                }
                self.factor_ops(&num_s, ty, &mut ops);
                self.factor_ops(&den_s, ty, &mut dops);
            }
        }
        if dops.is_empty() {
            // everything folded into exponents
            if ops.is_empty() {
                ops.push(self.lit(Rational::one(), ty));
            }
            let t = self.product(ops, ty);
            return if negative {
                self.store.prim(Prim::Neg, vec![t], ty.clone())
            } else {
                t
            };
        }
        let d = self.product(dops, ty);
        let r = self.store.prim(Prim::Recip, vec![d], ty.clone());
        if ops.is_empty() {
            ops.push(self.lit(Rational::one(), ty));
        }
        ops.push(r);
        let t = self.product(ops, ty);
        if negative {
            self.store.prim(Prim::Neg, vec![t], ty.clone())
        } else {
            t
        }
    }

    /// `sqrt(b) / (b * d)` is written `1 / (sqrt(b) * d)`: a square root in the
    /// numerator whose base divides the denominator (a prob atom there, or a factor of
    /// the integer `q`) moves down (`exp(..) / (s * sqrt(2) * sqrt(pi))` rather than
    /// `exp(..) * sqrt(2) * sqrt(pi) / (2 * s * pi)`). Only how it is written changes.
    fn sqrt_to_den(
        &self,
        num: &mut Vec<(usize, u32, u32)>,
        den: &mut Vec<(usize, u32, u32)>,
        q: &mut Rational,
    ) {
        let half = super::laws::frac(1, 2);
        let mut moved = Vec::new();
        num.retain(|&(r, k, e)| {
            let Some(super::Kernel::Pow(b, f)) = self.kernels.get(k).map(|i| &i.kernel) else {
                return true;
            };
            if e != 1 || *f != half {
                return true;
            }
            if let Node::Lit(v) = self.store.node(*b) {
                match q.checked_div(v) {
                    Some(rest) if rest.is_integer() => {
                        *q = rest;
                        moved.push((r, k, 1));
                        return false;
                    }
                    _ => return true,
                }
            }
            let base_kernel = den.iter().position(|&(_, dk, _)| {
                self.kernels.get(dk).is_some_and(|i| {
                    i.term == Some(*b)
                        && matches!(i.kernel, super::Kernel::Atom(_) | super::Kernel::Pi)
                })
            });
            match base_kernel {
                Some(i) => {
                    den[i].2 -= 1;
                    moved.push((r, k, 1));
                    false
                }
                None => true,
            }
        });
        den.retain(|x| x.2 > 0);
        den.extend(moved);
        den.sort_unstable();
    }

    /// The operands a polynomial contributes to a product: its kernel factors when it is
    /// one monomial with coefficient 1, else the whole sum as one operand.
    fn factor_ops(&mut self, s: &[Summand], ty: &Type, ops: &mut Vec<TermId>) {
        match s {
            [(ks, c)] if c.is_one() => self.kernel_factors(ks, &[], ty, ops, &mut Vec::new()),
            _ => {
                let t = self.sum(s, ty);
                ops.push(t);
            }
        }
    }

    /// The factors of the monomial `num / den` (kernels with exponents, by rank) into
    /// `ops` and `dops`. A power of a log base beside an `e^(y log b + ..)` kernel is
    /// written into its exponent: `b ** (y - 1)`, not `b ** y / b` (the canonical form
    /// keeps the constant part of `y` out, so that both inputs give one form).
    fn kernel_factors(
        &mut self,
        num: &[(usize, u32, u32)],
        den: &[(usize, u32, u32)],
        ty: &Type,
        ops: &mut Vec<TermId>,
        dops: &mut Vec<TermId>,
    ) {
        let exp = num
            .iter()
            .map(|x| x.1)
            .find(|&k| self.exp_log_bases(k).is_some_and(|b| !b.is_empty()));
        let bases = exp.and_then(|k| self.exp_log_bases(k)).unwrap_or_default();
        let mut adjust: Vec<(TermId, Rational)> = Vec::new();
        let mut folded = |this: &Self, k: u32, e: u32, sign: i64| -> bool {
            if Some(k) == exp {
                return false;
            }
            match this.as_power_of_base(k) {
                Some((b, r)) if bases.contains(&b) => {
                    let d = &r * &Rational::from_integer(sign * i64::from(e));
                    match adjust.iter_mut().find(|a| a.0 == b) {
                        Some(a) => a.1 = &a.1 + &d,
                        None => adjust.push((b, d)),
                    }
                    true
                }
                _ => false,
            }
        };
        let keep_num: Vec<(u32, u32)> = num
            .iter()
            .filter(|x| !folded(self, x.1, x.2, 1))
            .map(|x| (x.1, x.2))
            .collect();
        let keep_den: Vec<(u32, u32)> = den
            .iter()
            .filter(|x| !folded(self, x.1, x.2, -1))
            .map(|x| (x.1, x.2))
            .collect();
        for (k, e) in keep_num {
            if Some(k) == exp {
                if let Some(fs) = self.exp_factors(k, &adjust) {
                    for f in fs {
                        let t = self.coerce_to(f, &Type::Prob, ty);
                        ops.push(t);
                    }
                    continue;
                }
            }
            self.push_power(k, e, ty, ops);
        }
        for (k, e) in keep_den {
            self.push_power(k, e, ty, dops);
        }
    }

    /// The degree of monomial `m` as [`Self::kernel_factors`] writes it: powers of a base
    /// folded into the `b ** y` of an exponential are no factors of their own
    /// (`p * p ** (1/x)` is written `p ** ((x + 1)/x)`, one factor, which reads back as
    /// one kernel). Summands are ordered by it, so that a canonical term, read back,
    /// orders its summands the same way (idempotence).
    fn written_degree(&self, m: &Monomial) -> u32 {
        let pairs = m.pairs();
        let exp = pairs
            .iter()
            .map(|&(k, _)| k)
            .find(|&k| self.exp_log_bases(k).is_some_and(|b| !b.is_empty()));
        let bases = exp.and_then(|k| self.exp_log_bases(k)).unwrap_or_default();
        let folded: u32 = pairs
            .iter()
            .filter(|&&(k, _)| {
                Some(k) != exp
                    && self
                        .as_power_of_base(k)
                        .is_some_and(|(b, _)| bases.contains(&b))
            })
            .map(|&(_, e)| e)
            .sum();
        m.total_degree() - folded
    }

    /// The log bases `b` of an `Exp` kernel's exponent written as `b ** y` factors.
    fn exp_log_bases(&self, k: u32) -> Option<Vec<TermId>> {
        let s = self.kernels.get(k)?.exp_arg.as_ref()?;
        let mut out = Vec::new();
        for v in s.num().vars() {
            let i = self.kernels.get(v)?;
            if i.is_log && s.num().degree_in(v) == 1 && s.den().degree_in(v) == 0 {
                out.push(i.base.as_ref()?.0);
            }
        }
        Some(out)
    }

    /// A kernel as `b^r` for a prob term `b`: a prob atom (`r = 1`) or a `Pow` kernel.
    fn as_power_of_base(&self, k: u32) -> Option<(TermId, Rational)> {
        let i = self.kernels.get(k)?;
        match &i.kernel {
            super::Kernel::Atom(t) if i.ty == Type::Prob => Some((*t, Rational::one())),
            super::Kernel::Pow(b, r) => Some((*b, r.clone())),
            _ => None,
        }
    }

    /// A sum of ordered summands.
    fn sum(&mut self, s: &[Summand], ty: &Type) -> TermId {
        if s.is_empty() {
            return self.lit(Rational::zero(), ty);
        }
        let mut ops = Vec::with_capacity(s.len());
        for (ks, c) in s {
            let t = if ks.is_empty() {
                self.lit((*c).clone(), ty)
            } else if c.is_negative() {
                let m = self.monomial(ks, &-*c, ty);
                self.store.prim(Prim::Neg, vec![m], ty.clone())
            } else {
                self.monomial(ks, c, ty)
            };
            ops.push(t);
        }
        if ops.len() == 1 {
            ops[0]
        } else {
            self.store.prim(Prim::Add, ops, ty.clone())
        }
    }

    /// `c * kernels` for `c > 0`: `p * k1 * k2^2 / q`.
    fn monomial(&mut self, ks: &[(usize, u32, u32)], c: &Rational, ty: &Type) -> TermId {
        let (p, q) = split(c);
        let mut ops = Vec::with_capacity(ks.len() + 2);
        if !p.is_one() {
            ops.push(self.lit(p, ty));
        }
        self.kernel_factors(ks, &[], ty, &mut ops, &mut Vec::new());
        if !q.is_one() {
            let l = self.lit(q, ty);
            ops.push(self.store.prim(Prim::Recip, vec![l], ty.clone()));
        }
        self.product(ops, ty)
    }

    fn product(&mut self, ops: Vec<TermId>, ty: &Type) -> TermId {
        match ops.len() {
            0 => self.lit(Rational::one(), ty),
            1 => ops[0],
            _ => self.store.prim(Prim::Mul, ops, ty.clone()),
        }
    }

    /// Kernel `k` to the power `e >= 1` as factors of type `ty`: one factor, except
    /// that `e^(y log b + s)` is written `b ** y * exp(s)` (one `**` per log base whose
    /// coefficient is symbolic; constant ones were already taken out as powers).
    fn push_power(&mut self, k: u32, e: u32, ty: &Type, ops: &mut Vec<TermId>) {
        if e == 1 {
            if let Some(fs) = self.exp_factors(k, &[]) {
                for f in fs {
                    let t = self.coerce_to(f, &Type::Prob, ty);
                    ops.push(t);
                }
                return;
            }
        }
        let f = self.power(k, e, ty);
        ops.push(f);
    }

    /// For an `Exp` kernel whose exponent is linear in some `log(b)` atoms (which do
    /// not occur in its denominator): the factors `b ** y` (bases in structural order)
    /// and `exp(rest)` if `rest` is not zero.
    fn exp_factors(&mut self, k: u32, adjust: &[(TermId, Rational)]) -> Option<Vec<TermId>> {
        let info = self.kernels.get(k)?;
        let s = info.exp_arg.as_ref()?;
        let mut logs: Vec<(TermId, u32)> = Vec::new();
        for v in s.num().vars() {
            let i = self.kernels.get(v)?;
            if i.is_log && s.num().degree_in(v) == 1 && s.den().degree_in(v) == 0 {
                logs.push((i.base.as_ref()?.0, v));
            }
        }
        if logs.is_empty() {
            return None;
        }
        let (mut rest, den) = (s.num().clone(), s.den().clone());
        let store = &*self.store;
        logs.sort_by(|a, b| cmp_terms(store, a.0, b.0));
        let mut out = Vec::with_capacity(logs.len() + 1);
        for (base, v) in logs {
            let (y, r) = super::laws::split_linear(&rest, v);
            rest = r;
            let mut yn = Normal::from_parts(y, den.clone())?;
            if let Some((_, d)) = adjust.iter().find(|a| a.0 == base) {
                yn = yn.add(&Normal::constant(d.clone()), usize::MAX).ok()?;
            }
            let yt = self.write(&yn, &Type::Real);
            out.push(self.store.prim(Prim::RealPow, vec![base, yt], Type::Prob));
        }
        if !rest.is_zero() {
            let rn = Normal::from_parts(rest, den)?;
            let rt = self.write(&rn, &Type::Real);
            out.push(self.store.prim(Prim::Exp, vec![rt], Type::Prob));
        }
        Some(out)
    }

    /// Kernel `k` to the power `e >= 1`, in type `ty`.
    fn power(&mut self, k: u32, e: u32, ty: &Type) -> TermId {
        let base = self.kernel_term(k, ty);
        if e == 1 {
            return base;
        }
        let n = self.lit(Rational::from_integer(i64::from(e)), &Type::Nat);
        self.store.prim(Prim::Pow, vec![base, n], ty.clone())
    }

    /// Kernel `k` as a term of type `ty` (coerced at the leaf).
    pub(crate) fn kernel_term(&mut self, k: u32, ty: &Type) -> TermId {
        let (Some(t), Some(info)) = (self.natural_term(k), self.kernels.get(k)) else {
            // indices only come from the table
            return self.lit(Rational::zero(), ty);
        };
        let from = info.ty.clone();
        self.coerce_to(t, &from, ty)
    }

    /// `t : from` as a term of type `to`: itself, a safe coercion, or (where the
    /// arithmetic-mode checks have vouched for the value) an unsafe one.
    pub(crate) fn coerce_to(&mut self, t: TermId, from: &Type, to: &Type) -> TermId {
        if from == to {
            return t;
        }
        if let Some(c) = Coercion::safe(from, to) {
            return self.coerce(c, t);
        }
        use Type::*;
        match (from, to) {
            (Real, Prob) => self.coerce(Coercion::Real2Prob, t),
            (Real, Int) => self.coerce(Coercion::Real2Int, t),
            (Int, Nat) => self.coerce(Coercion::Int2Nat, t),
            (Int, Prob) => {
                let r = self.coerce(Coercion::Int2Real, t);
                self.coerce(Coercion::Real2Prob, r)
            }
            (Prob, Int) | (Prob, Nat) | (Real, Nat) => {
                let r = self.coerce_to(t, from, &Real);
                let i = self.coerce(Coercion::Real2Int, r);
                self.coerce_to(i, &Int, to)
            }
            // non-numeric: nothing sensible to do; keep the term
            _ => t,
        }
    }

    pub(crate) fn coerce(&mut self, c: Coercion, t: TermId) -> TermId {
        self.store.intern(Node::Coerce(c, t), c.to_type())
    }

    pub(crate) fn lit(&mut self, v: Rational, ty: &Type) -> TermId {
        self.store.intern(Node::Lit(v), ty.clone())
    }
}

/// The summands of `p` in output order (see the module doc), by `degree` as written.
fn ordered<'a>(
    p: &'a Poly,
    rank: &FxHashMap<u32, usize>,
    degree: &dyn Fn(&Monomial) -> u32,
) -> Vec<Summand<'a>> {
    let mut out: Vec<(u32, Summand)> = p
        .terms()
        .iter()
        .map(|(m, c)| (degree(m), (ranked(m, rank), c)))
        .collect();
    out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| cmp_ranked(&a.1 .0, &b.1 .0)));
    out.into_iter().map(|(_, s)| s).collect()
}

fn ranked(m: &Monomial, rank: &FxHashMap<u32, usize>) -> Vec<(usize, u32, u32)> {
    let mut v: Vec<(usize, u32, u32)> = m
        .pairs()
        .iter()
        .map(|&(k, e)| (rank.get(&k).copied().unwrap_or(usize::MAX), k, e))
        .collect();
    v.sort_unstable();
    v
}

/// Lexicographic in rank order: the monomial with the higher power of the first kernel
/// (by rank) comes first.
fn cmp_ranked(a: &[(usize, u32, u32)], b: &[(usize, u32, u32)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        if x.0 != y.0 {
            // `a` has kernel x.0 where `b` has a later one (so exponent 0 of x.0)
            return x.0.cmp(&y.0);
        }
        if x.2 != y.2 {
            return y.2.cmp(&x.2);
        }
    }
    b.len().cmp(&a.len())
}

/// The content of a non-empty ordered polynomial (gcd of numerators over lcm of
/// denominators, with the sign of the first summand) and the primitive coefficients.
fn primitive(s: &[Summand]) -> (Rational, Vec<Rational>) {
    let mut g = BigInt::zero();
    let mut l = BigInt::one();
    for (_, c) in s {
        g = g.gcd(&c.numer());
        l = l.lcm(&c.denom());
    }
    if g.is_zero() {
        return (Rational::one(), s.iter().map(|_| Rational::one()).collect());
    }
    let first_negative = s.first().is_some_and(|(_, c)| c.is_negative());
    if first_negative {
        g = -g;
    }
    let content = Rational::new(BigRational::new(g, l));
    let inv = content.recip().unwrap_or_else(Rational::one);
    let coeffs = s.iter().map(|(_, c)| *c * &inv).collect();
    (content, coeffs)
}

/// A non-negative rational as numerator and denominator.
fn split(c: &Rational) -> (Rational, Rational) {
    (
        Rational::from_bigint(c.numer().abs()),
        Rational::from_bigint(c.denom()),
    )
}
