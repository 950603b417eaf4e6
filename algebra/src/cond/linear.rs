//! The linear-form view of a numeric term: `constant + Σ coeff_i * atom_i` with exact
//! rational coefficients, where an atom is any subterm that is not a sum, a negation, a
//! literal, a safe coercion or a product with a literal factor (a variable, `y[j]`,
//! `x * y`, `log(p)`, ...).
//!
//! Conditions are normalised, decided and solved through this view (`cond`, `solve`), and
//! `canon` may use it for index arithmetic. It does not depend on `canon` and does no
//! polynomial arithmetic: `x * (y + 1)` is one atom, not `x*y + x`. Safe coercions are
//! transparent (`nat2real(n)` has atom `n`, `nat2real(n + 1)` is `n + 1`), so a form
//! forgets the type it was read at; [`Linear::to_term`] writes it back at a chosen type.
//! Values are treated as finite numbers (the linear laws fail for `∞`, which is an atom).

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use crate::num::Rational;
use crate::order;
use crate::term::{Node, Prim, Store, TermId};
use crate::types::{Coercion, Type};

/// `constant + Σ coeff * atom`. Invariants: no zero coefficient, no atom twice, atoms in
/// [`order::compare`] order (so equal forms are equal values of this type).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Linear {
    pub constant: Rational,
    pub terms: Vec<(TermId, Rational)>,
}

/// The linear form of a numeric term (see the module doc for what is an atom). Products
/// of several non-literal factors with literal factors become one atom of the remaining
/// factors (`2 * x * y` is `2 · (x * y)`), interned in `store` with the product's type.
pub fn linear_form(store: &mut Store, t: TermId) -> Linear {
    let mut memo = FxHashMap::default();
    form(store, t, &mut memo)
}

/// The linear form of `t`, memoised per term (terms are DAGs: `Add[t, t]` chains must not
/// be walked once per path).
fn form(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, Linear>) -> Linear {
    if let Some(l) = memo.get(&t) {
        return l.clone();
    }
    let l = crate::stack::grow(|| form_here(store, t, memo));
    memo.insert(t, l.clone());
    l
}

fn form_here(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, Linear>) -> Linear {
    let t = strip_safe(store, t);
    if let Some(v) = literal_value(store, t) {
        return Linear::constant(v);
    }
    match store.node(t).clone() {
        Node::Prim(Prim::Add, xs) => {
            let mut sum = Linear::constant(Rational::zero());
            for x in xs {
                let l = form(store, x, memo);
                sum = sum.add_scaled(store, &l, &Rational::one());
            }
            sum
        }
        Node::Prim(Prim::Neg, xs) if xs.len() == 1 => {
            form(store, xs[0], memo).scale(&-Rational::one())
        }
        Node::Prim(Prim::Mul, xs) => {
            let mut scale = Rational::one();
            let mut rest = Vec::with_capacity(xs.len());
            for &x in &xs {
                match literal_value(store, x) {
                    Some(v) => scale = &scale * &v,
                    None => rest.push(x),
                }
            }
            match rest.len() {
                0 => Linear::constant(scale),
                1 => form(store, rest[0], memo).scale(&scale),
                n if n == xs.len() => Linear::atom(t),
                _ => {
                    let ty = store.ty(t).clone();
                    let a = store.prim(Prim::Mul, rest, ty);
                    Linear::atom(a).scale(&scale)
                }
            }
        }
        _ => Linear::atom(t),
    }
}

/// `t` without its safe coercions (`int2real(nat2int(n))` is `n`).
pub fn strip_safe(store: &Store, mut t: TermId) -> TermId {
    while let Node::Coerce(c, x) = store.node(t) {
        if !c.is_safe() {
            break;
        }
        t = *x;
    }
    t
}

/// The value of a literal-valued factor: a literal under negations, reciprocals (of
/// non-zero values) and safe coercions. Only the first [`LITERAL_WRAPPERS`] wrappers are
/// looked through: a deeper one is read as a sum/product (same value, no quadratic walk).
fn literal_value(store: &Store, t: TermId) -> Option<Rational> {
    let mut t = t;
    let mut negate = false;
    let mut invert = false;
    for _ in 0..LITERAL_WRAPPERS {
        match store.node(strip_safe(store, t)) {
            Node::Lit(v) => {
                let v = if invert { v.recip()? } else { v.clone() };
                return Some(if negate { -v } else { v });
            }
            Node::Prim(Prim::Neg, xs) if xs.len() == 1 => {
                negate = !negate;
                t = xs[0];
            }
            Node::Prim(Prim::Recip, xs) if xs.len() == 1 => {
                invert = !invert;
                t = xs[0];
            }
            _ => return None,
        }
    }
    None
}

/// How many `negate`/`recip` wrappers [`literal_value`] looks through.
const LITERAL_WRAPPERS: usize = 64;

impl Linear {
    /// The constant form `c`.
    pub fn constant(c: Rational) -> Linear {
        Linear {
            constant: c,
            terms: Vec::new(),
        }
    }

    /// The form `1 · atom` (the caller vouches that `atom` is an atom: see the module doc).
    pub fn atom(atom: TermId) -> Linear {
        Linear {
            constant: Rational::zero(),
            terms: vec![(atom, Rational::one())],
        }
    }

    /// Is this a constant (no atoms)?
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// The coefficient of `atom` (zero when absent).
    pub fn coeff(&self, atom: TermId) -> Rational {
        self.terms
            .iter()
            .find(|(a, _)| *a == atom)
            .map_or_else(Rational::zero, |(_, c)| c.clone())
    }

    /// `self + k * other`.
    pub fn add_scaled(&self, store: &Store, other: &Linear, k: &Rational) -> Linear {
        let mut terms = Vec::with_capacity(self.terms.len() + other.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < other.terms.len() {
            let ord = match (self.terms.get(i), other.terms.get(j)) {
                (Some(a), Some(b)) => order::compare(store, a.0, b.0),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match ord {
                Ordering::Less => {
                    terms.push(self.terms[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    let (a, c) = &other.terms[j];
                    terms.push((*a, k * c));
                    j += 1;
                }
                Ordering::Equal => {
                    let c = &self.terms[i].1 + &(k * &other.terms[j].1);
                    if !c.is_zero() {
                        terms.push((self.terms[i].0, c));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        terms.retain(|(_, c)| !c.is_zero());
        Linear {
            constant: &self.constant + &(k * &other.constant),
            terms,
        }
    }

    /// `self - other`.
    pub fn sub(&self, store: &Store, other: &Linear) -> Linear {
        self.add_scaled(store, other, &-Rational::one())
    }

    /// `k * self`.
    pub fn scale(&self, k: &Rational) -> Linear {
        if k.is_zero() {
            return Linear::constant(Rational::zero());
        }
        Linear {
            constant: k * &self.constant,
            terms: self.terms.iter().map(|(a, c)| (*a, k * c)).collect(),
        }
    }

    /// Are all atoms of integral type (nat or int) and all coefficients integers, so the
    /// form minus its constant is integer-valued?
    pub fn is_integral(&self, store: &Store) -> bool {
        self.terms
            .iter()
            .all(|(a, c)| c.is_integer() && store.ty(*a).is_integral())
    }

    /// The positive factor that makes the coefficients coprime integers
    /// (`lcm(denominators) / gcd(numerators)`); one for a constant form.
    pub fn primitive_factor(&self) -> Rational {
        // the content gcd(numerators)/lcm(denominators), on Rational's small-integer path
        let content = self
            .terms
            .iter()
            .fold(Rational::zero(), |g, (_, c)| g.gcd(c));
        content.recip().unwrap_or_else(Rational::one)
    }

    /// The term `constant + Σ coeff * atom` of type `ty` (a numeric type; anything else is
    /// treated as real). It is built in the smallest type W above `ty` and every atom's
    /// type that holds the coefficients (a field for fractions, a ring for negative ones),
    /// atoms coerced up to W, and then brought down to `ty` by an unsafe coercion if W is
    /// above it (`int2nat(i - 1)`): that is meaning-preserving only where the value lies
    /// in `ty`, which the caller must know.
    ///
    /// Shape (elaborated-normal, so it prints and parses back): one flat `Add` of the
    /// atoms in order and then the constant (`i + 1`, `x - 3`); coefficient 1 is the atom,
    /// -1 is `Neg(atom)`, others `Mul[Lit(|c|), atom]` (negated with `Neg` when c < 0),
    /// with an atom that is itself a product flattened into that `Mul`.
    pub fn to_term(&self, store: &mut Store, ty: &Type) -> TermId {
        let target = if ty.is_numeric() {
            ty.clone()
        } else {
            Type::Real
        };
        let mut w = target.clone();
        for (a, _) in &self.terms {
            w = w.numeric_join(store.ty(*a)).unwrap_or(Type::Real);
        }
        let coeffs = || self.terms.iter().map(|(_, c)| c).chain([&self.constant]);
        if coeffs().any(|c| !c.is_integer()) {
            w = w.field_above().unwrap_or(Type::Real);
        }
        if coeffs().any(|c| c.is_negative()) {
            w = w.ring_above().unwrap_or(Type::Real);
        }
        let mut ops = Vec::with_capacity(self.terms.len() + 1);
        for (a, c) in &self.terms {
            let x = coerce_up(store, *a, &w);
            let mag = if c.is_negative() { -c } else { c.clone() };
            let term = if mag.is_one() {
                x
            } else {
                let lit = store.intern(Node::Lit(mag), w.clone());
                let mut factors = vec![lit];
                match store.node(x) {
                    Node::Prim(Prim::Mul, fs) => factors.extend(fs.iter().copied()),
                    _ => factors.push(x),
                }
                store.prim(Prim::Mul, factors, w.clone())
            };
            ops.push(if c.is_negative() {
                store.prim(Prim::Neg, vec![term], w.clone())
            } else {
                term
            });
        }
        if !self.constant.is_zero() || ops.is_empty() {
            ops.push(store.intern(Node::Lit(self.constant.clone()), w.clone()));
        }
        let sum = if ops.len() == 1 {
            ops[0]
        } else {
            store.prim(Prim::Add, ops, w.clone())
        };
        coerce_down(store, sum, &w, &target)
    }
}

/// `t` (of a type at or below `w`) coerced up to `w`; a literal is re-typed instead.
pub(crate) fn coerce_up(store: &mut Store, t: TermId, w: &Type) -> TermId {
    let from = store.ty(t).clone();
    if &from == w {
        return t;
    }
    if let Node::Lit(v) = store.node(t) {
        let v = v.clone();
        return store.intern(Node::Lit(v), w.clone());
    }
    match Coercion::safe(&from, w) {
        Some(c) => store.intern(Node::Coerce(c, t), w.clone()),
        None => t,
    }
}

/// `t : w` brought down to `to` (at or below `w`) by unsafe coercions.
fn coerce_down(store: &mut Store, t: TermId, w: &Type, to: &Type) -> TermId {
    use Type::*;
    let steps: &[Coercion] = match (w, to) {
        (Real, Prob) => &[Coercion::Real2Prob],
        (Real, Int) => &[Coercion::Real2Int],
        (Real, Nat) => &[Coercion::Real2Int, Coercion::Int2Nat],
        (Int, Nat) => &[Coercion::Int2Nat],
        (Prob, Nat) => &[Coercion::Prob2Real, Coercion::Real2Int, Coercion::Int2Nat],
        _ => &[],
    };
    let mut t = t;
    for c in steps {
        t = store.intern(Node::Coerce(*c, t), c.to_type());
    }
    t
}
