//! Exact rational numbers as they appear in term literals.
//!
//! Today [`Rational`] is a thin wrapper over `num_rational::BigRational` that exists for
//! one reason: hashing. num-rational hashes a `Ratio` by expanding it as a continued
//! fraction (big-integer divisions), so that unreduced equal values hash alike; every
//! literal is hashed when terms are interned, and that expansion dominated elaboration.
//! A `BigRational` built by `Ratio::new` and by arithmetic is always reduced, so hashing
//! the numerator and denominator directly is consistent with equality. `Rational` only
//! accepts reduced values (see [`Rational::new`]).
//!
//! The small-integer fast path of the exact algebra core (issue 3) belongs here too.

use std::hash::{Hash, Hasher};
use std::ops::Deref;

use num_bigint::BigInt;
use num_rational::BigRational;

/// An exact rational in lowest terms with a positive denominator.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rational(BigRational);

impl Rational {
    /// Wraps a value, reducing it if it is not already in lowest terms.
    pub fn new(value: BigRational) -> Rational {
        if is_reduced(&value) {
            Rational(value)
        } else {
            Rational(value.reduced())
        }
    }

    pub fn from_integer(n: i64) -> Rational {
        Rational(BigRational::from_integer(BigInt::from(n)))
    }

    pub fn as_big(&self) -> &BigRational {
        &self.0
    }

    pub fn into_big(self) -> BigRational {
        self.0
    }
}

fn is_reduced(q: &BigRational) -> bool {
    use num_integer::Integer;
    use num_traits::{One, Signed};
    q.denom().is_positive() && q.numer().gcd(q.denom()).is_one()
}

impl From<BigRational> for Rational {
    fn from(value: BigRational) -> Rational {
        Rational::new(value)
    }
}

impl Deref for Rational {
    type Target = BigRational;
    fn deref(&self) -> &BigRational {
        &self.0
    }
}

impl Hash for Rational {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.numer().hash(state);
        self.0.denom().hash(state);
    }
}

impl Rational {
    pub fn zero() -> Rational {
        Rational::from_integer(0)
    }

    pub fn one() -> Rational {
        Rational::from_integer(1)
    }

    pub fn is_zero(&self) -> bool {
        num_traits::Zero::is_zero(&self.0)
    }

    pub fn is_one(&self) -> bool {
        num_traits::One::is_one(&self.0)
    }

    pub fn is_integer(&self) -> bool {
        self.0.is_integer()
    }

    pub fn is_negative(&self) -> bool {
        num_traits::Signed::is_negative(&self.0)
    }

    /// `self^n` for any integer n (`0^n` for negative n is `None`).
    pub fn pow(&self, n: i64) -> Option<Rational> {
        if n < 0 && self.is_zero() {
            return None;
        }
        let e = i32::try_from(n).ok()?;
        Some(Rational(num_traits::Pow::pow(&self.0, e)))
    }

    /// `1 / self`, `None` for zero.
    pub fn recip(&self) -> Option<Rational> {
        (!self.is_zero()).then(|| Rational(self.0.recip()))
    }

    /// The nearest `f64` (±inf when out of range).
    pub fn to_f64(&self) -> f64 {
        num_traits::ToPrimitive::to_f64(&self.0).unwrap_or_else(|| {
            // out of f64's range: the sign of an infinity, or 0 for tiny magnitudes
            let big = self.0.numer().bits() > self.0.denom().bits();
            match (big, self.is_negative()) {
                (true, true) => f64::NEG_INFINITY,
                (true, false) => f64::INFINITY,
                (false, _) => 0.0,
            }
        })
    }
}

macro_rules! rational_binop {
    ($trait:ident, $method:ident) => {
        impl std::ops::$trait<&Rational> for &Rational {
            type Output = Rational;
            fn $method(self, rhs: &Rational) -> Rational {
                Rational(std::ops::$trait::$method(&self.0, &rhs.0))
            }
        }
        impl std::ops::$trait for Rational {
            type Output = Rational;
            fn $method(self, rhs: Rational) -> Rational {
                Rational(std::ops::$trait::$method(self.0, rhs.0))
            }
        }
    };
}

rational_binop!(Add, add);
rational_binop!(Sub, sub);
rational_binop!(Mul, mul);

impl std::ops::Neg for Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        Rational(-self.0)
    }
}

impl std::ops::Neg for &Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        Rational(-&self.0)
    }
}

impl std::fmt::Display for Rational {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn h(q: &Rational) -> u64 {
        rustc_hash::FxBuildHasher.hash_one(q)
    }

    #[test]
    fn equal_values_hash_equal_even_when_built_unreduced() {
        let a = Rational::new(BigRational::new_raw(BigInt::from(2), BigInt::from(4)));
        let b = Rational::new(BigRational::new(BigInt::from(1), BigInt::from(2)));
        let c = Rational::new(BigRational::new_raw(BigInt::from(-3), BigInt::from(-6)));
        assert_eq!(a, b);
        assert_eq!(h(&a), h(&b));
        assert_eq!(h(&b), h(&c));
        assert_ne!(h(&b), h(&Rational::from_integer(2)));
    }
}
