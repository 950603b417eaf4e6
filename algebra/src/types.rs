//! Hakaru's types and the numeric coercion lattice.
//!
//! The numeric types form the lattice `nat < int < real`, `nat < prob < real`; a *safe*
//! coercion goes up the lattice and is inserted by the elaborator, an *unsafe* one goes
//! down and must be written by the user (`int2nat`, `real2prob`, `real2int`). This module
//! only states these facts; it does not decide where coercions go (see `elab`).

use std::fmt;
use std::sync::Arc;

/// A Hakaru type. Cheap to compare, hash and clone: children are shared (`Arc`), so a
/// clone is a reference-count bump, not a tree copy (the elaborator clones types often).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    Nat,
    Int,
    Prob,
    Real,
    Unit,
    Bool,
    Array(Arc<Type>),
    Measure(Arc<Type>),
    Pair(Arc<Type>, Arc<Type>),
    Either(Arc<Type>, Arc<Type>),
    Maybe(Arc<Type>),
    Fun(Arc<Type>, Arc<Type>),
}

impl Type {
    pub fn array(t: Type) -> Type {
        Type::Array(Arc::new(t))
    }
    pub fn measure(t: Type) -> Type {
        Type::Measure(Arc::new(t))
    }
    pub fn pair(a: Type, b: Type) -> Type {
        Type::Pair(Arc::new(a), Arc::new(b))
    }
    pub fn either(a: Type, b: Type) -> Type {
        Type::Either(Arc::new(a), Arc::new(b))
    }
    pub fn maybe(t: Type) -> Type {
        Type::Maybe(Arc::new(t))
    }
    pub fn fun(a: Type, b: Type) -> Type {
        Type::Fun(Arc::new(a), Arc::new(b))
    }

    /// `nat`, `int`, `prob` or `real`.
    pub fn is_numeric(&self) -> bool {
        matches!(self, Type::Nat | Type::Int | Type::Prob | Type::Real)
    }

    /// Numeric types closed under negation and subtraction (`int`, `real`).
    pub fn is_ring(&self) -> bool {
        matches!(self, Type::Int | Type::Real)
    }

    /// Numeric types closed under reciprocal (`prob`, `real`).
    pub fn is_field(&self) -> bool {
        matches!(self, Type::Prob | Type::Real)
    }

    /// Numeric types whose values are integers (`nat`, `int`).
    pub fn is_integral(&self) -> bool {
        matches!(self, Type::Nat | Type::Int)
    }

    /// Numeric types whose values are non-negative (`nat`, `prob`).
    pub fn is_nonnegative(&self) -> bool {
        matches!(self, Type::Nat | Type::Prob)
    }

    /// The parameter types of a program of this type (`T1 -> T2 -> ... -> R`),
    /// outermost first, and the type `R` of its body.
    pub fn parameter_types(&self) -> (Vec<Type>, &Type) {
        let mut params = Vec::new();
        let mut ty = self;
        while let Type::Fun(p, r) = ty {
            params.push((**p).clone());
            ty = r;
        }
        (params, ty)
    }

    /// The element type of `measure(T)`.
    pub fn measure_of(&self) -> Option<&Type> {
        match self {
            Type::Measure(t) => Some(t),
            _ => None,
        }
    }

    /// The element type of `array(T)`.
    pub fn array_of(&self) -> Option<&Type> {
        match self {
            Type::Array(t) => Some(t),
            _ => None,
        }
    }

    /// Least upper bound of two numeric types in the coercion lattice
    /// (`int ⊔ prob = real`); `None` when either is not numeric.
    pub fn numeric_join(&self, other: &Type) -> Option<Type> {
        use Type::*;
        if !self.is_numeric() || !other.is_numeric() {
            return None;
        }
        Some(match (self, other) {
            (a, b) if a == b => a.clone(),
            (Nat, t) | (t, Nat) => t.clone(),
            (Real, _) | (_, Real) => Real,
            // the remaining pairs are {int, prob}
            _ => Real,
        })
    }

    /// Least upper bound in the order that safe coercions induce, lifted covariantly through
    /// `array`, `measure`, `pair`, `either` and `maybe` (function types join only when
    /// equal). `measure(nat) ⊔ measure(real) = measure(real)`: the branches of
    /// `if c: return n else: return x` get one type. `None` when there is no common type.
    pub fn join(&self, other: &Type) -> Option<Type> {
        use Type::*;
        if self == other {
            return Some(self.clone());
        }
        Some(match (self, other) {
            (a, b) if a.is_numeric() && b.is_numeric() => a.numeric_join(b)?,
            (Array(a), Array(b)) => Type::array(a.join(b)?),
            (Measure(a), Measure(b)) => Type::measure(a.join(b)?),
            (Maybe(a), Maybe(b)) => Type::maybe(a.join(b)?),
            (Pair(a1, b1), Pair(a2, b2)) => Type::pair(a1.join(a2)?, b1.join(b2)?),
            (Either(a1, b1), Either(a2, b2)) => Type::either(a1.join(a2)?, b1.join(b2)?),
            _ => return None,
        })
    }

    /// The smallest ring above a numeric type: `nat -> int`, `prob -> real`.
    pub fn ring_above(&self) -> Option<Type> {
        match self {
            Type::Nat | Type::Int => Some(Type::Int),
            Type::Prob | Type::Real => Some(Type::Real),
            _ => None,
        }
    }

    /// The smallest field above a numeric type: `nat -> prob`, `int -> real`.
    pub fn field_above(&self) -> Option<Type> {
        match self {
            Type::Nat | Type::Prob => Some(Type::Prob),
            Type::Int | Type::Real => Some(Type::Real),
            _ => None,
        }
    }

    /// Is `self` below or equal to `other` in the numeric lattice?
    pub fn is_subtype_of(&self, other: &Type) -> bool {
        self == other || Coercion::safe(self, other).is_some()
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Nat => f.write_str("nat"),
            Type::Int => f.write_str("int"),
            Type::Prob => f.write_str("prob"),
            Type::Real => f.write_str("real"),
            Type::Unit => f.write_str("unit"),
            Type::Bool => f.write_str("bool"),
            Type::Array(t) => write!(f, "array({t})"),
            Type::Measure(t) => write!(f, "measure({t})"),
            Type::Pair(a, b) => write!(f, "pair({a}, {b})"),
            Type::Either(a, b) => write!(f, "either({a}, {b})"),
            Type::Maybe(t) => write!(f, "maybe({t})"),
            Type::Fun(a, b) => {
                if matches!(**a, Type::Fun(..)) {
                    write!(f, "({a}) -> {b}")
                } else {
                    write!(f, "{a} -> {b}")
                }
            }
        }
    }
}

/// A change of numeric type. The first five are safe (up the lattice) and may be
/// inserted implicitly; the last three lose information and must be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Coercion {
    Nat2Int,
    Nat2Prob,
    Nat2Real,
    Int2Real,
    Prob2Real,
    /// Unsafe: negative ints have no nat; the interpreter reports an error.
    Int2Nat,
    /// Unsafe: negative reals have no prob; the interpreter reports an error.
    Real2Prob,
    /// Unsafe: rounds toward negative infinity (`floor`).
    Real2Int,
}

impl Coercion {
    pub const ALL: [Coercion; 8] = [
        Coercion::Nat2Int,
        Coercion::Nat2Prob,
        Coercion::Nat2Real,
        Coercion::Int2Real,
        Coercion::Prob2Real,
        Coercion::Int2Nat,
        Coercion::Real2Prob,
        Coercion::Real2Int,
    ];

    /// The safe coercion from `from` to `to`, if `from` is strictly below `to`.
    pub fn safe(from: &Type, to: &Type) -> Option<Coercion> {
        use Type::*;
        Some(match (from, to) {
            (Nat, Int) => Coercion::Nat2Int,
            (Nat, Prob) => Coercion::Nat2Prob,
            (Nat, Real) => Coercion::Nat2Real,
            (Int, Real) => Coercion::Int2Real,
            (Prob, Real) => Coercion::Prob2Real,
            _ => return None,
        })
    }

    pub fn is_safe(self) -> bool {
        !matches!(
            self,
            Coercion::Int2Nat | Coercion::Real2Prob | Coercion::Real2Int
        )
    }

    pub fn from_type(self) -> Type {
        match self {
            Coercion::Nat2Int | Coercion::Nat2Prob | Coercion::Nat2Real => Type::Nat,
            Coercion::Int2Real | Coercion::Int2Nat => Type::Int,
            Coercion::Prob2Real => Type::Prob,
            Coercion::Real2Prob | Coercion::Real2Int => Type::Real,
        }
    }

    pub fn to_type(self) -> Type {
        match self {
            Coercion::Nat2Int | Coercion::Real2Int => Type::Int,
            Coercion::Nat2Prob | Coercion::Real2Prob => Type::Prob,
            Coercion::Nat2Real | Coercion::Int2Real | Coercion::Prob2Real => Type::Real,
            Coercion::Int2Nat => Type::Nat,
        }
    }

    /// The name users write: `nat2real`, `real2prob`, ...
    pub fn name(self) -> &'static str {
        match self {
            Coercion::Nat2Int => "nat2int",
            Coercion::Nat2Prob => "nat2prob",
            Coercion::Nat2Real => "nat2real",
            Coercion::Int2Real => "int2real",
            Coercion::Prob2Real => "prob2real",
            Coercion::Int2Nat => "int2nat",
            Coercion::Real2Prob => "real2prob",
            Coercion::Real2Int => "real2int",
        }
    }

    pub fn from_name(name: &str) -> Option<Coercion> {
        Coercion::ALL.into_iter().find(|c| c.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_the_lattice_lub() {
        use Type::*;
        assert_eq!(Nat.numeric_join(&Prob), Some(Prob));
        assert_eq!(Int.numeric_join(&Prob), Some(Real));
        assert_eq!(Nat.numeric_join(&Int), Some(Int));
        assert_eq!(Real.numeric_join(&Nat), Some(Real));
        assert_eq!(Bool.numeric_join(&Nat), None);
    }

    #[test]
    fn parameter_types_peel_the_arrows() {
        use Type::*;
        let body = Type::measure(Real);
        let f = Type::fun(Nat, Type::fun(Type::array(Prob), body.clone()));
        assert_eq!(f.parameter_types(), (vec![Nat, Type::array(Prob)], &body));
        assert_eq!(body.parameter_types(), (vec![], &body));
    }

    #[test]
    fn join_lifts_through_constructors() {
        use Type::*;
        let mn = Type::measure(Nat);
        let mr = Type::measure(Real);
        assert_eq!(mn.join(&mr), Some(mr.clone()));
        let p1 = Type::pair(Nat, Type::array(Prob));
        let p2 = Type::pair(Int, Type::array(Nat));
        assert_eq!(p1.join(&p2), Some(Type::pair(Int, Type::array(Prob))));
        assert_eq!(mn.join(&Type::array(Nat)), None);
        let f = Type::fun(Nat, Nat);
        assert_eq!(f.join(&Type::fun(Nat, Real)), None);
        assert_eq!(f.join(&f), Some(f.clone()));
    }

    #[test]
    fn coercions_round_trip_names_and_types() {
        for c in Coercion::ALL {
            assert_eq!(Coercion::from_name(c.name()), Some(c));
            if c.is_safe() {
                assert_eq!(Coercion::safe(&c.from_type(), &c.to_type()), Some(c));
            } else {
                assert_eq!(Coercion::safe(&c.from_type(), &c.to_type()), None);
            }
        }
    }

    #[test]
    fn function_types_print_right_associated() {
        let t = Type::fun(Type::Nat, Type::fun(Type::Real, Type::measure(Type::Real)));
        assert_eq!(t.to_string(), "nat -> real -> measure(real)");
        let u = Type::fun(Type::fun(Type::Nat, Type::Nat), Type::Nat);
        assert_eq!(u.to_string(), "(nat -> nat) -> nat");
    }
}
