//! Exact rational numbers: term literals and the coefficients of all exact algebra.
//!
//! [`Rational`] has two representations behind one value semantics: `Small`, an `i64`
//! numerator and denominator (no allocation, checked machine arithmetic), and `Big`, a
//! boxed `BigRational` for everything else. Every value has exactly ONE representation:
//! it is `Small` whenever its reduced numerator lies in `-(2^63-1) ..= 2^63-1` and its
//! denominator in `1 ..= 2^63-1` (excluding `i64::MIN` makes negation and `abs` total on
//! the small path). Arithmetic on small values runs in `i64`/`i128` and promotes to big only
//! when the reduced result does not fit; big results that fit are demoted. Because the
//! representation is canonical, equality and hashing compare representations directly
//! (hashing never expands a continued fraction, which once dominated elaboration), and
//! `Ord` compares values.
//!
//! Exact roots and rational powers (`sqrt(8) = 2*2^(1/2)`) are in `root`. This module does
//! no floating point except the conversion [`Rational::to_f64`], and never panics on any
//! value (division by zero is `None`, see [`Rational::checked_div`]).

mod root;
#[cfg(test)]
mod tests;

pub use root::Radical;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive};

/// An exact rational in lowest terms with a positive denominator.
#[derive(Clone)]
pub struct Rational(Repr);

#[derive(Clone)]
enum Repr {
    /// `n / d` in lowest terms, `d >= 1`, `n != i64::MIN`.
    Small(i64, i64),
    /// A reduced value that does not fit `Small` (boxed: keeps `Rational`, and with it
    /// every term node, small).
    Big(Box<BigRational>),
}

/// Results above this many bits are refused by [`Rational::pow`] (`None`): a literal such
/// as `2 ^ 4000000000` must not exhaust memory or time (2^22 bits is 1.2 million digits).
pub const MAX_POW_BITS: u64 = 1 << 22;

/// The binary gcd of two unsigned 64-bit integers (`gcd(0, 0) = 0`).
pub fn gcd_u64(mut a: u64, mut b: u64) -> u64 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    if let (Ok(x), Ok(y)) = (u64::try_from(a), u64::try_from(b)) {
        return u128::from(gcd_u64(x, y));
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// Does `n` fit a small numerator (`i64` without `i64::MIN`)?
fn small_numer(n: i128) -> Option<i64> {
    i64::try_from(n).ok().filter(|&n| n != i64::MIN)
}

impl Rational {
    /// `n / d` already in lowest terms with `d >= 1`, both small. Callers guarantee it.
    const fn small(n: i64, d: i64) -> Rational {
        Rational(Repr::Small(n, d))
    }

    /// The integer `n` (`i64::MIN` goes big).
    pub fn from_integer(n: i64) -> Rational {
        if n == i64::MIN {
            Rational::from_big_reduced(BigRational::from_integer(BigInt::from(n)))
        } else {
            Rational::small(n, 1)
        }
    }

    /// `n / d` reduced; `None` when `d` is zero.
    pub fn ratio(n: i64, d: i64) -> Option<Rational> {
        (d != 0).then(|| Rational::from_i128(i128::from(n), i128::from(d)))
    }

    /// The integer `n`.
    pub fn from_bigint(n: BigInt) -> Rational {
        Rational::from_big_reduced(BigRational::from_integer(n))
    }

    /// Wraps a value, reducing it if it is not already in lowest terms. (A `BigRational`
    /// with a zero denominator cannot be built by `BigRational::new`; one made with
    /// `new_raw` panics in num-rational's own reduction, as before.)
    pub fn new(value: BigRational) -> Rational {
        if is_reduced(&value) {
            Rational::from_big_reduced(value)
        } else {
            Rational::from_big_reduced(value.reduced())
        }
    }

    /// Same as [`Rational::new`].
    pub fn from_big(value: BigRational) -> Rational {
        Rational::new(value)
    }

    /// A reduced big value in its canonical representation.
    fn from_big_reduced(value: BigRational) -> Rational {
        if let (Some(n), Some(d)) = (value.numer().to_i64(), value.denom().to_i64()) {
            if n != i64::MIN {
                return Rational::small(n, d);
            }
        }
        Rational(Repr::Big(Box::new(value)))
    }

    /// `n / d` reduced, for `d != 0` and `|n|, |d| < 2^127` (every caller combines `i64`s,
    /// whose products and sums of two products stay below that).
    fn from_i128(n: i128, d: i128) -> Rational {
        debug_assert!(d != 0 && n != i128::MIN && d != i128::MIN);
        // g divides |d| < 2^127, so it fits i128; g >= 1 because d != 0
        let g = gcd_u128(n.unsigned_abs(), d.unsigned_abs()) as i128;
        let (n, d) = (n / g, d / g);
        if d < 0 {
            Rational::from_i128_reduced(-n, -d)
        } else {
            Rational::from_i128_reduced(n, d)
        }
    }

    /// `n / d` already reduced with `d > 0`.
    fn from_i128_reduced(n: i128, d: i128) -> Rational {
        if let (Some(n), Ok(d)) = (small_numer(n), i64::try_from(d)) {
            return Rational::small(n, d);
        }
        Rational(Repr::Big(Box::new(BigRational::new_raw(
            BigInt::from(n),
            BigInt::from(d),
        ))))
    }

    /// The value as a `BigRational`, borrowed when it is big.
    pub fn as_big(&self) -> Cow<'_, BigRational> {
        match &self.0 {
            Repr::Small(n, d) => {
                Cow::Owned(BigRational::new_raw(BigInt::from(*n), BigInt::from(*d)))
            }
            Repr::Big(b) => Cow::Borrowed(b),
        }
    }

    /// The value as a `BigRational`.
    pub fn to_big(&self) -> BigRational {
        self.as_big().into_owned()
    }

    pub fn into_big(self) -> BigRational {
        match self.0 {
            Repr::Small(n, d) => BigRational::new_raw(BigInt::from(n), BigInt::from(d)),
            Repr::Big(b) => *b,
        }
    }

    /// `(numerator, denominator)` when the value is small (no allocation).
    pub fn to_small(&self) -> Option<(i64, i64)> {
        match self.0 {
            Repr::Small(n, d) => Some((n, d)),
            Repr::Big(_) => None,
        }
    }

    /// Is the value held in the small representation? (It is whenever it fits.)
    pub fn is_small(&self) -> bool {
        matches!(self.0, Repr::Small(..))
    }

    /// The numerator of the reduced fraction (carries the sign).
    pub fn numer(&self) -> BigInt {
        match &self.0 {
            Repr::Small(n, _) => BigInt::from(*n),
            Repr::Big(b) => b.numer().clone(),
        }
    }

    /// The denominator of the reduced fraction (positive).
    pub fn denom(&self) -> BigInt {
        match &self.0 {
            Repr::Small(_, d) => BigInt::from(*d),
            Repr::Big(b) => b.denom().clone(),
        }
    }

    /// The value when it is an integer that fits `i64`.
    pub fn to_i64(&self) -> Option<i64> {
        match self.0 {
            Repr::Small(n, 1) => Some(n),
            Repr::Small(..) => None,
            // big integers are out of i64 range, except i64::MIN itself
            Repr::Big(ref b) if b.is_integer() => b.numer().to_i64(),
            Repr::Big(_) => None,
        }
    }

    pub fn zero() -> Rational {
        Rational::small(0, 1)
    }

    pub fn one() -> Rational {
        Rational::small(1, 1)
    }

    pub fn is_zero(&self) -> bool {
        matches!(self.0, Repr::Small(0, _))
    }

    pub fn is_one(&self) -> bool {
        matches!(self.0, Repr::Small(1, 1))
    }

    pub fn is_integer(&self) -> bool {
        match &self.0 {
            Repr::Small(_, d) => *d == 1,
            Repr::Big(b) => b.is_integer(),
        }
    }

    pub fn is_negative(&self) -> bool {
        match &self.0 {
            Repr::Small(n, _) => *n < 0,
            Repr::Big(b) => b.is_negative(),
        }
    }

    pub fn is_positive(&self) -> bool {
        match &self.0 {
            Repr::Small(n, _) => *n > 0,
            Repr::Big(b) => b.is_positive(),
        }
    }

    /// -1, 0 or 1.
    pub fn signum(&self) -> Rational {
        Rational::small(
            match &self.0 {
                Repr::Small(n, _) => n.signum(),
                Repr::Big(b) => {
                    if b.is_negative() {
                        -1
                    } else {
                        1
                    }
                }
            },
            1,
        )
    }

    pub fn abs(&self) -> Rational {
        match &self.0 {
            Repr::Small(n, d) => Rational::small(n.abs(), *d),
            Repr::Big(b) => Rational(Repr::Big(Box::new(b.abs()))),
        }
    }

    /// The largest integer `<= self`.
    pub fn floor(&self) -> Rational {
        match &self.0 {
            // |n div d| <= |n|, so it is never i64::MIN
            Repr::Small(n, d) => Rational::small(n.div_euclid(*d), 1),
            Repr::Big(b) => Rational::from_big_reduced(b.floor()),
        }
    }

    /// The smallest integer `>= self`.
    pub fn ceil(&self) -> Rational {
        -(-self).floor()
    }

    /// `self / other`; `None` when `other` is zero.
    pub fn checked_div(&self, other: &Rational) -> Option<Rational> {
        Some(self * &other.recip()?)
    }

    /// `1 / self`, `None` for zero.
    pub fn recip(&self) -> Option<Rational> {
        match &self.0 {
            Repr::Small(0, _) => None,
            // d <= i64::MAX so -d is small; n != i64::MIN so -n is a valid denominator
            Repr::Small(n, d) if *n > 0 => Some(Rational::small(*d, *n)),
            Repr::Small(n, d) => Some(Rational::small(-*d, -*n)),
            Repr::Big(b) => Some(Rational::from_big_reduced(b.recip())),
        }
    }

    /// `self^n` for any integer n. `None` for `0^n` with negative n, and when the result
    /// would need more than [`MAX_POW_BITS`] bits.
    pub fn pow(&self, n: i64) -> Option<Rational> {
        if n < 0 {
            return self.recip()?.pow_u64(n.unsigned_abs());
        }
        self.pow_u64(n.unsigned_abs())
    }

    fn pow_u64(&self, n: u64) -> Option<Rational> {
        match self.to_small() {
            Some((0 | 1, 1)) if n > 0 => return Some(self.clone()),
            Some((-1, 1)) => {
                let sign = if n.is_multiple_of(2) { 1 } else { -1 };
                return Some(Rational::small(sign, 1));
            }
            _ => {}
        }
        if n == 0 {
            return Some(Rational::one());
        }
        if self.bits().saturating_sub(1).saturating_mul(n) > MAX_POW_BITS {
            return None;
        }
        let mut result = Rational::one();
        let mut base = self.clone();
        let mut e = n;
        loop {
            if e & 1 == 1 {
                result = &result * &base;
            }
            e >>= 1;
            if e == 0 {
                return Some(result);
            }
            base = &base * &base;
        }
    }

    /// The larger bit length of numerator and denominator (0 for zero).
    pub fn bits(&self) -> u64 {
        match &self.0 {
            Repr::Small(n, d) => u64::from(
                (u64::BITS - n.unsigned_abs().leading_zeros()).max(u64::BITS - d.leading_zeros()),
            ),
            Repr::Big(b) => b.numer().bits().max(b.denom().bits()),
        }
    }

    /// The gcd of two rationals: for integers the usual non-negative gcd; in general
    /// `gcd(a/b, c/d) = gcd(a, c) / lcm(b, d)`, the largest rational `g` with `self / g`
    /// and `other / g` both integers (the content of a polynomial over Q).
    pub fn gcd(&self, other: &Rational) -> Rational {
        if let (Repr::Small(a, b), Repr::Small(c, d)) = (&self.0, &other.0) {
            let num = gcd_u64(a.unsigned_abs(), c.unsigned_abs());
            let g = gcd_u64(b.unsigned_abs(), d.unsigned_abs());
            let den = u128::from(b.unsigned_abs() / g) * u128::from(d.unsigned_abs());
            return Rational::from_i128(i128::from(num), den as i128);
        }
        let (x, y) = (self.as_big(), other.as_big());
        let num = x.numer().gcd(y.numer());
        let den = x.denom().lcm(y.denom());
        Rational::from_big_reduced(BigRational::new(num, den))
    }

    /// The lcm of two rationals: for integers the usual non-negative lcm; in general
    /// `lcm(a/b, c/d) = lcm(a, c) / gcd(b, d)`. Zero when either is zero.
    pub fn lcm(&self, other: &Rational) -> Rational {
        if self.is_zero() || other.is_zero() {
            return Rational::zero();
        }
        let (x, y) = (self.as_big(), other.as_big());
        let num = x.numer().lcm(y.numer());
        let den = x.denom().gcd(y.denom());
        Rational::from_big_reduced(BigRational::new(num, den))
    }

    /// The nearest `f64` (±inf when out of range).
    pub fn to_f64(&self) -> f64 {
        const EXACT: u64 = 1 << 53;
        match &self.0 {
            // both exact in f64, so the IEEE quotient is correctly rounded
            Repr::Small(n, d) if n.unsigned_abs() <= EXACT && d.unsigned_abs() <= EXACT => {
                *n as f64 / *d as f64
            }
            _ => {
                let b = self.as_big();
                b.to_f64().unwrap_or_else(|| {
                    // out of f64's range: the sign of an infinity, or 0 for tiny magnitudes
                    let big = b.numer().bits() > b.denom().bits();
                    match (big, self.is_negative()) {
                        (true, true) => f64::NEG_INFINITY,
                        (true, false) => f64::INFINITY,
                        (false, _) => 0.0,
                    }
                })
            }
        }
    }

    fn add_ref(&self, rhs: &Rational) -> Rational {
        if let (Repr::Small(a, b), Repr::Small(c, d)) = (&self.0, &rhs.0) {
            if *b == 1 && *d == 1 {
                if let Some(s) = a.checked_add(*c).filter(|&s| s != i64::MIN) {
                    return Rational::small(s, 1);
                }
            }
            if b == d {
                return Rational::from_i128(i128::from(*a) + i128::from(*c), i128::from(*b));
            }
            // |a d + c b| < 2^127 and b d < 2^126: no i128 overflow
            let n = i128::from(*a) * i128::from(*d) + i128::from(*c) * i128::from(*b);
            return Rational::from_i128(n, i128::from(*b) * i128::from(*d));
        }
        Rational::from_big_reduced(&*self.as_big() + &*rhs.as_big())
    }

    fn sub_ref(&self, rhs: &Rational) -> Rational {
        self.add_ref(&rhs.neg_ref())
    }

    fn mul_ref(&self, rhs: &Rational) -> Rational {
        if let (Repr::Small(a, b), Repr::Small(c, d)) = (&self.0, &rhs.0) {
            if *b == 1 && *d == 1 {
                if let Some(p) = a.checked_mul(*c).filter(|&p| p != i64::MIN) {
                    return Rational::small(p, 1);
                }
            }
            // cross-reduce so the product is already in lowest terms
            let g1 = gcd_u64(a.unsigned_abs(), d.unsigned_abs()) as i64;
            let g2 = gcd_u64(c.unsigned_abs(), b.unsigned_abs()) as i64;
            // g1, g2 >= 1 (b, d >= 1) and divide exactly
            let n = i128::from(a / g1) * i128::from(c / g2);
            let den = i128::from(b / g2) * i128::from(d / g1);
            return Rational::from_i128_reduced(n, den);
        }
        Rational::from_big_reduced(&*self.as_big() * &*rhs.as_big())
    }

    fn neg_ref(&self) -> Rational {
        match &self.0 {
            Repr::Small(n, d) => Rational::small(-*n, *d),
            Repr::Big(b) => Rational(Repr::Big(Box::new(-&**b))),
        }
    }
}

fn is_reduced(q: &BigRational) -> bool {
    q.denom().is_positive() && q.numer().gcd(q.denom()).is_one()
}

impl Default for Rational {
    fn default() -> Rational {
        Rational::zero()
    }
}

impl From<BigRational> for Rational {
    fn from(value: BigRational) -> Rational {
        Rational::new(value)
    }
}

impl From<i64> for Rational {
    fn from(value: i64) -> Rational {
        Rational::from_integer(value)
    }
}

impl From<BigInt> for Rational {
    fn from(value: BigInt) -> Rational {
        Rational::from_bigint(value)
    }
}

impl PartialEq for Rational {
    fn eq(&self, other: &Rational) -> bool {
        match (&self.0, &other.0) {
            (Repr::Small(a, b), Repr::Small(c, d)) => a == c && b == d,
            // both reduced: equal values have equal parts
            (Repr::Big(x), Repr::Big(y)) => x.numer() == y.numer() && x.denom() == y.denom(),
            // one representation per value
            _ => false,
        }
    }
}

impl Eq for Rational {}

impl Hash for Rational {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Repr::Small(n, d) => {
                state.write_i64(*n);
                state.write_i64(*d);
            }
            Repr::Big(b) => {
                b.numer().hash(state);
                b.denom().hash(state);
            }
        }
    }
}

impl Ord for Rational {
    fn cmp(&self, other: &Rational) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::Small(a, b), Repr::Small(c, d)) => {
                if b == d {
                    a.cmp(c)
                } else {
                    (i128::from(*a) * i128::from(*d)).cmp(&(i128::from(*c) * i128::from(*b)))
                }
            }
            _ => self.as_big().cmp(&other.as_big()),
        }
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, other: &Rational) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Implements a binary operator for every combination of owned and borrowed operands
/// through the by-reference method `$imp`, and its assigning form.
macro_rules! rational_binop {
    ($trait:ident, $method:ident, $assign:ident, $assign_method:ident, $imp:expr) => {
        impl std::ops::$trait<&Rational> for &Rational {
            type Output = Rational;
            fn $method(self, rhs: &Rational) -> Rational {
                $imp(self, rhs)
            }
        }
        impl std::ops::$trait<Rational> for &Rational {
            type Output = Rational;
            fn $method(self, rhs: Rational) -> Rational {
                $imp(self, &rhs)
            }
        }
        impl std::ops::$trait<&Rational> for Rational {
            type Output = Rational;
            fn $method(self, rhs: &Rational) -> Rational {
                $imp(&self, rhs)
            }
        }
        impl std::ops::$trait for Rational {
            type Output = Rational;
            fn $method(self, rhs: Rational) -> Rational {
                $imp(&self, &rhs)
            }
        }
        impl std::ops::$assign<&Rational> for Rational {
            fn $assign_method(&mut self, rhs: &Rational) {
                *self = $imp(&*self, rhs);
            }
        }
        impl std::ops::$assign for Rational {
            fn $assign_method(&mut self, rhs: Rational) {
                *self = $imp(&*self, &rhs);
            }
        }
    };
}

rational_binop!(Add, add, AddAssign, add_assign, Rational::add_ref);
rational_binop!(Sub, sub, SubAssign, sub_assign, Rational::sub_ref);
rational_binop!(Mul, mul, MulAssign, mul_assign, Rational::mul_ref);

impl std::ops::Neg for Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        self.neg_ref()
    }
}

impl std::ops::Neg for &Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        self.neg_ref()
    }
}

/// `-3/4`, `5`, `0`.
impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Small(n, 1) => write!(f, "{n}"),
            Repr::Small(n, d) => write!(f, "{n}/{d}"),
            Repr::Big(b) if b.is_integer() => write!(f, "{}", b.numer()),
            Repr::Big(b) => write!(f, "{}/{}", b.numer(), b.denom()),
        }
    }
}

/// Same text as `Display`: literals read as values in debug dumps of terms.
impl fmt::Debug for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
