//! Exact roots and rational powers of rationals: `sqrt(8) = 2 * 2^(1/2)`,
//! `(1/8)^(1/2) = (1/4) * 2^(1/2)`, `(-27)^(1/3) = -3`, `4^(3/4) = 2 * 2^(1/2)`.
//!
//! The n-th root of `p/q` is written `c * r^(1/n)` with `c` rational and `r` a positive
//! integer free of n-th powers, found by extracting n-th powers from `|p|` and `q` by trial
//! division, which stops as soon as the rest is known to be n-th-power-free: at `d^n > u`,
//! at `d^(n+1) > u` (then the cofactor `u` has at most n prime factors, so only an exact
//! n-th power needs checking), or when `u` is prime (deterministic Miller-Rabin on `u64`).
//! The result is complete (the radicand truly n-th-power-free) for every integer with at
//! most n prime factors above [`TRIAL_LIMIT`] (10^6) counted with multiplicity, so for
//! every `u64` below 10^(6(n+1)): all `u64` square roots. Integers beyond `u64` are
//! trial-divided up to [`BIG_TRIAL_LIMIT`] (2^16; lower for very long integers, so the work
//! stays near 2^18 limb divisions and the search never hangs); then cofactors that are
//! perfect powers are recognised and the rest is kept in the radicand: the result is still
//! exact, only possibly not fully reduced. The canonical forms of issue 3 rely on this module for integer radicals.

use num_bigint::BigInt;
use num_integer::Roots;
use num_traits::{One, Signed, ToPrimitive};

use super::Rational;

/// Trial division tries primes up to this bound (and stops earlier, at `p^n > cofactor`).
pub const TRIAL_LIMIT: u64 = 1_000_000;

/// Integers beyond `u64` are trial-divided only up to this bound (and lower for very long
/// ones, see [`BIG_TRIAL_WORK`]): their roots are rare, and must stay cheap.
pub const BIG_TRIAL_LIMIT: u64 = 1 << 16;

/// Trial division of a big cofactor costs about (limbs × candidates / 3); this bounds the
/// product, lowering the prime bound for very long integers.
const BIG_TRIAL_WORK: u64 = 1 << 18;

/// Intermediate radicands (`r^k` while reducing) above this many bits are refused.
const MAX_RADICAND_BITS: u64 = 1 << 16;

/// Perfect-power recognition of an unfactored cofactor is skipped above this size.
const MAX_PERFECT_POWER_BITS: u64 = 1 << 12;

/// `coeff * radicand^(1/index)`: the exact value of a rational power of a rational.
///
/// `radicand` is a positive integer with no `index`-th power factor (see the module note
/// on completeness) and `index` is the smallest possible: `radicand` is not a perfect
/// `g`-th power for any divisor `g > 1` of `index`. `index == 1` exactly when
/// `radicand == 1`, i.e. when the value is rational.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Radical {
    pub coeff: Rational,
    pub radicand: Rational,
    pub index: u32,
}

impl Radical {
    /// The rational value `q` (`q * 1^(1/1)`).
    pub fn rational(q: Rational) -> Radical {
        Radical {
            coeff: q,
            radicand: Rational::one(),
            index: 1,
        }
    }

    /// Is the value rational (no radical left)?
    pub fn is_rational(&self) -> bool {
        self.index == 1
    }

    /// The value as the nearest-ish `f64` (for numeric checks).
    pub fn to_f64(&self) -> f64 {
        self.coeff.to_f64() * self.radicand.to_f64().powf(1.0 / f64::from(self.index))
    }
}

/// The next candidate divisor after `p`: 2, 3, then the numbers `6k ± 1`.
fn next_candidate(p: u64) -> u64 {
    match p {
        2 => 3,
        3 => 5,
        _ if p % 6 == 5 => p + 2,
        _ => p + 4,
    }
}

/// `m = c^n * r` for `m >= 1`, `n >= 2`, given that `m` has no prime factor below
/// `start` (a value of [`next_candidate`]'s sequence). Returns `(c, r)`.
fn extract_u64(m: u64, n: u32, start: u64) -> (u64, u64) {
    let (mut c, mut r, mut u) = (1u64, 1u64, m);
    let mut p = start;
    let mut changed = true;
    loop {
        // a prime with p^n | u has p^n <= u: beyond that, u is n-th-power-free
        match p.checked_pow(n) {
            Some(pn) if pn <= u => {}
            _ => return (c, r * u),
        }
        // every prime factor of u is >= p; if u < p^(n+1) it has at most n of them, so it
        // is n-th-power-free unless it is exactly an n-th power
        let below = match p.checked_pow(n + 1) {
            Some(pn1) => u < pn1,
            None => true,
        };
        if below {
            let s = u.nth_root(n);
            return if s.checked_pow(n) == Some(u) {
                (c * s, r)
            } else {
                (c, r * u)
            };
        }
        if changed && is_prime_u64(u) {
            return (c, r * u);
        }
        changed = false;
        if p > TRIAL_LIMIT {
            break;
        }
        if u.is_multiple_of(p) {
            let mut e = 0u32;
            while u % p == 0 {
                u /= p;
                e += 1;
            }
            // c^n r u = m throughout, so these products never exceed m
            c *= p.pow(e / n);
            r *= p.pow(e % n);
            changed = true;
        }
        p = next_candidate(p);
    }
    // every prime factor of u is above the limit
    let (cu, ru) = cofactor_u64(u, n);
    (c * cu, r * ru)
}

/// `a * b mod m` without overflow.
fn mul_mod(a: u64, b: u64, m: u64) -> u64 {
    (u128::from(a) * u128::from(b) % u128::from(m)) as u64
}

fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut acc = 1u64;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            acc = mul_mod(acc, b, m);
        }
        b = mul_mod(b, b, m);
        e >>= 1;
    }
    acc
}

/// Deterministic Miller-Rabin for all `u64`: the first twelve primes as bases are
/// witnesses for every composite below 3.3 * 10^24.
fn is_prime_u64(u: u64) -> bool {
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    if u < 2 {
        return false;
    }
    for p in BASES {
        if u.is_multiple_of(p) {
            return u == p;
        }
    }
    let s = (u - 1).trailing_zeros();
    let d = (u - 1) >> s;
    'witness: for a in BASES {
        let mut x = pow_mod(a, d, u);
        if x == 1 || x == u - 1 {
            continue;
        }
        for _ in 1..s {
            x = mul_mod(x, x, u);
            if x == u - 1 {
                continue 'witness;
            }
        }
        return false;
    }
    true
}

/// `u = c^n * r` for a cofactor whose prime factors all exceed [`TRIAL_LIMIT`]: finds
/// the largest `e >= n` with `u` a perfect e-th power. Complete when `u < LIMIT^(n+1)`
/// (then `u` is n-th-power-free or a perfect n-th power).
fn cofactor_u64(u: u64, n: u32) -> (u64, u64) {
    // v > LIMIT and v^e = u < 2^64 bound e by 3
    for e in (n..=3).rev() {
        let v = u.nth_root(e);
        if v.checked_pow(e) == Some(u) {
            return (v.pow(e / n), v.pow(e % n));
        }
    }
    (1, u)
}

/// `u mod p` for `p < 2^31`, without allocating (32-bit steps keep it in `u64`).
fn rem_small(u: &BigInt, p: u64) -> u64 {
    debug_assert!(p < 1 << 31);
    let mut r = 0u64;
    for d in u.iter_u64_digits().rev() {
        r = ((r << 32) | (d >> 32)) % p;
        r = ((r << 32) | (d & 0xffff_ffff)) % p;
    }
    r
}

/// `m = c^n * r` for a positive integer `m` and `n >= 2`. Returns `(c, r)`.
fn extract(m: &BigInt, n: u32) -> (BigInt, BigInt) {
    if let Some(m) = m.to_u64() {
        let (c, r) = extract_u64(m, n, 2);
        return (BigInt::from(c), BigInt::from(r));
    }
    let limbs = m.iter_u64_digits().len() as u64;
    let limit = (3 * BIG_TRIAL_WORK / limbs.max(1)).clamp(1000, BIG_TRIAL_LIMIT);
    let (mut c, mut r, mut u) = (BigInt::one(), BigInt::one(), m.clone());
    let mut p = 2u64;
    while p <= limit {
        if let Some(small) = u.to_u64() {
            let (cs, rs) = extract_u64(small, n, p);
            return (c * cs, r * rs);
        }
        // the same two stopping rules as `extract_u64`, through bit lengths:
        // u < 2^bits <= p^k when bits <= k * floor(log2 p)
        let (bits, log_p) = (u.bits(), u64::from(p.ilog2()));
        if bits <= u64::from(n) * log_p {
            return (c, r * u);
        }
        if bits <= u64::from(n + 1) * log_p {
            let s = u.nth_root(n);
            return if s.pow(n) == u {
                (c * s, r)
            } else {
                (c, r * u)
            };
        }
        if rem_small(&u, p) == 0 {
            let mut e = 0u32;
            while rem_small(&u, p) == 0 {
                u /= p;
                e += 1;
            }
            c *= BigInt::from(p).pow(e / n);
            r *= BigInt::from(p).pow(e % n);
        }
        p = next_candidate(p);
    }
    // u has no prime factor up to `limit`: recognise perfect powers, keep the rest
    let bits = u.bits();
    if bits <= MAX_PERFECT_POWER_BITS {
        // v > limit >= 2^9 and v^e = u bound e by bits / 9
        let max_e = u32::try_from(bits / 9).unwrap_or(u32::MAX);
        for e in (n..=max_e).rev() {
            let v = u.nth_root(e);
            if v.pow(e) == u {
                return (c * v.pow(e / n), r * v.pow(e % n));
            }
        }
    }
    (c, r * u)
}

impl Rational {
    /// The real n-th root as `(c, r)` with `self^(1/n) = c * r^(1/n)`, `r` a positive
    /// integer without n-th power factors (or 1): `root(8, 2) = (2, 2)`,
    /// `root(4, 2) = (2, 1)`, `root(1/8, 2) = (1/4, 2)`, `root(-27, 3) = (-3, 1)`.
    ///
    /// `None` for `n = 0`, for negative values with even `n`, and when an intermediate
    /// radicand would exceed 2^16 bits (huge denominators under high roots).
    pub fn root(&self, n: u32) -> Option<(Rational, Rational)> {
        if n == 0 || (n.is_multiple_of(2) && self.is_negative()) {
            return None;
        }
        if n == 1 || self.is_zero() {
            return Some((self.clone(), Rational::one()));
        }
        if let Some((p, q)) = self.to_small() {
            if let Some(found) = root_small(p, q, n) {
                return Some(found);
            }
        }
        let p = self.numer();
        let (cp, rp) = extract(&p.abs(), n);
        let (cq, rq) = extract(&self.denom(), n);
        // q^(-1/n) = (rq^(n-1))^(1/n) / (cq rq): move the radical to the numerator
        let (cx, rx) = if rq.is_one() {
            (BigInt::one(), BigInt::one())
        } else {
            if rq.bits().saturating_mul(u64::from(n - 1)) > MAX_RADICAND_BITS {
                return None;
            }
            extract(&rq.pow(n - 1), n)
        };
        let sign = if p.is_negative() { -1 } else { 1 };
        let coeff = Rational::from_big(num_rational::BigRational::new(cp * cx * sign, cq * rq));
        Some((coeff, Rational::from_bigint(rp * rx)))
    }

    /// `self^e` for a rational exponent, exactly, as `coeff * radicand^(1/index)`:
    /// `8^(1/2) = 2 * 2^(1/2)`, `4^(3/4) = 2 * 2^(1/2)`, `(-8)^(2/3) = 4`, `2^(-1/2) =
    /// (1/2) * 2^(1/2)`. `None` for `0` to a negative power, an even root of a negative
    /// value, an exponent whose denominator exceeds `u32` or numerator `i64`, and results
    /// beyond the size limits of [`Rational::pow`] and [`Rational::root`].
    pub fn pow_rational(&self, e: &Rational) -> Option<Radical> {
        if e.is_integer() {
            return Some(Radical::rational(self.pow(e.to_i64()?)?));
        }
        let (a, b) = match e.to_small() {
            Some((a, b)) => (a, u32::try_from(b).ok()?),
            None => return None,
        };
        if self.is_zero() {
            return (a > 0).then(|| Radical::rational(Rational::zero()));
        }
        let base = if a < 0 { self.recip()? } else { self.clone() };
        let k = a.unsigned_abs();
        let (whole, rem) = (k / u64::from(b), k % u64::from(b));
        // base^(k/b) = base^whole * (c1 r1^(1/b))^rem = base^whole c1^rem (r1^rem)^(1/b)
        let (c1, r1) = base.root(b)?;
        let rem = i64::try_from(rem).ok()?;
        let r1k = r1.pow(rem)?;
        if r1k.bits() > MAX_RADICAND_BITS {
            return None;
        }
        let (c2, r2) = r1k.root(b)?;
        let coeff = base.pow(i64::try_from(whole).ok()?)? * c1.pow(rem)? * c2;
        Some(lower_index(coeff, r2, b))
    }
}

/// The n-th root of the small value `p/q` in machine integers; `None` when an intermediate
/// leaves `u64` (the caller then uses big integers).
fn root_small(p: i64, q: i64, n: u32) -> Option<(Rational, Rational)> {
    let (cp, rp) = extract_u64(p.unsigned_abs(), n, 2);
    let (cq, rq) = extract_u64(q.unsigned_abs(), n, 2);
    let (cx, rx) = if rq == 1 {
        (1, 1)
    } else {
        extract_u64(rq.checked_pow(n - 1)?, n, 2)
    };
    let num = i128::from(cp) * i128::from(cx);
    let num = if p < 0 { -num } else { num };
    let den = i128::from(cq) * i128::from(rq);
    let rad = i128::from(rp).checked_mul(i128::from(rx))?;
    Some((Rational::from_i128(num, den), Rational::from_i128(rad, 1)))
}

/// `coeff * radicand^(1/index)` with the smallest index: a radicand that is a perfect
/// g-th power (g dividing the index) is replaced by its g-th root.
fn lower_index(coeff: Rational, radicand: Rational, index: u32) -> Radical {
    if radicand.is_one() {
        return Radical::rational(coeff);
    }
    let big = radicand.numer();
    // the largest divisor g > 1 of the index with radicand = s^g
    // s >= 2 and s^g = radicand bound g by the radicand's bit length
    let top = u32::try_from(big.bits()).unwrap_or(u32::MAX).min(index);
    for g in (2..=top).rev().filter(|g| index.is_multiple_of(*g)) {
        let s = big.nth_root(g);
        if s.pow(g) == big {
            return Radical {
                coeff,
                radicand: Rational::from_bigint(s),
                index: index / g,
            };
        }
    }
    Radical {
        coeff,
        radicand,
        index,
    }
}

#[cfg(test)]
pub(super) fn extract_for_tests(m: u64, n: u32) -> (u64, u64) {
    extract_u64(m, n, 2)
}
