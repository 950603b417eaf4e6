//! Which variables can a gcd involve? A cheap, exact answer from univariate images modulo
//! a prime, used by `gcd.rs` before any multivariate algorithm.
//!
//! Why: canonical forms of densities are sparse polynomials in dozens of variables (the
//! posterior of a normal mean under 50 observations has 52), while their gcds are almost
//! always 1 or a polynomial in one or two parameters. The heuristic gcd evaluates every
//! variable at a large integer and spent 80% of such a recognition in big-integer
//! arithmetic; this test rules variables out in time linear in the operands' size.
//!
//! How: for a variable `v`, evaluate both operands (integer coefficients, as normalised
//! operands have) at fixed points for every other variable, modulo `P = 2^61 - 1`. If
//! neither leading coefficient in `v` vanishes there, the true gcd `G`'s image has
//! `G`'s degree in `v` (Gauss: `lc_v(a) = lc_v(G) · lc_v(a/G)` over Z), and it divides both
//! images; so when the images' gcd has degree 0, `v` does not occur in `G`. This is a
//! proof, not a probability: an unlucky point (a vanishing leading coefficient) only
//! keeps `v` in the answer. No floating point; nothing here can fail.

use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::Poly;

/// The prime `2^61 - 1`.
const P: u64 = (1 << 61) - 1;

fn mul(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(P)) as u64
}

fn add(a: u64, b: u64) -> u64 {
    let s = a + b; // both < 2^61: no overflow
    if s >= P {
        s - P
    } else {
        s
    }
}

fn sub(a: u64, b: u64) -> u64 {
    add(a, P - b)
}

fn pow(mut b: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, b);
        }
        b = mul(b, b);
        e >>= 1;
    }
    r
}

/// `a^(P-2)`: the inverse of a non-zero residue.
fn inv(a: u64) -> u64 {
    pow(a, P - 2)
}

/// An integer coefficient modulo `P` (`None` for a non-integer, which normalised operands
/// never have).
fn residue(c: &crate::num::Rational) -> Option<u64> {
    if let Some((n, d)) = c.to_small() {
        if d != 1 {
            return None;
        }
        return Some(n.rem_euclid(P as i64) as u64);
    }
    if !c.is_integer() {
        return None;
    }
    let m = c.numer() % BigInt::from(P);
    let m = if m < BigInt::from(0) {
        m + BigInt::from(P)
    } else {
        m
    };
    m.to_u64()
}

/// The fixed evaluation point of variable `w`: a splitmix-style hash, so the points are
/// spread over the field and reproducible.
fn point(w: u32) -> u64 {
    let mut z = u64::from(w).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    2 + (z ^ (z >> 31)) % (P - 3)
}

/// The image of `a` as a dense univariate polynomial in `v` (index = degree), every other
/// variable at its point; `None` for a non-integer coefficient.
fn image(a: &Poly, v: u32) -> Option<Vec<u64>> {
    let mut out = vec![0u64; a.degree_in(v) as usize + 1];
    for (m, c) in a.terms() {
        let mut x = residue(c)?;
        let mut d = 0usize;
        for &(w, e) in m.pairs() {
            if w == v {
                d = e as usize;
            } else {
                x = mul(x, pow(point(w), u64::from(e)));
            }
        }
        out[d] = add(out[d], x);
    }
    Some(out)
}

fn trim(p: &mut Vec<u64>) {
    while p.last() == Some(&0) {
        p.pop();
    }
}

/// The degree of the gcd of two univariate polynomials over Z/P (`None` if one is zero).
fn gcd_degree(mut a: Vec<u64>, mut b: Vec<u64>) -> Option<usize> {
    trim(&mut a);
    trim(&mut b);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    while !b.is_empty() {
        // a := a mod b
        let lb = inv(*b.last()?);
        while a.len() >= b.len() {
            let q = mul(*a.last()?, lb);
            let shift = a.len() - b.len();
            for (i, &bi) in b.iter().enumerate() {
                a[shift + i] = sub(a[shift + i], mul(q, bi));
            }
            trim(&mut a);
        }
        std::mem::swap(&mut a, &mut b);
    }
    Some(a.len() - 1)
}

/// The variables common to `a` and `b` that the gcd of `a` and `b` may contain: every
/// other variable provably does not occur in it (see the module doc). `a` and `b` must
/// have integer coefficients; otherwise every common variable is kept.
pub(super) fn gcd_variables(a: &Poly, b: &Poly) -> Vec<u32> {
    let (va, vb) = (a.vars(), b.vars());
    let common: Vec<u32> = va
        .into_iter()
        .filter(|v| vb.binary_search(v).is_ok())
        .collect();
    common
        .into_iter()
        .filter(|&v| {
            let (Some(ia), Some(ib)) = (image(a, v), image(b, v)) else {
                return true;
            };
            // an unlucky point: a leading coefficient vanished, the test says nothing
            let full = |img: &[u64]| img.last().is_some_and(|&c| c != 0);
            if !full(&ia) || !full(&ib) {
                return true;
            }
            gcd_degree(ia, ib).is_none_or(|d| d > 0)
        })
        .collect()
}

/// `p` as a sum `Σ_m c_m · m` over monomials `m` in the variables NOT in `keep` (sorted),
/// each coefficient `c_m` a polynomial in the `keep` variables: the coefficients.
pub(super) fn coefficients_outside(p: &Poly, keep: &[u32]) -> Vec<Poly> {
    use super::Monomial;
    use rustc_hash::FxHashMap;
    let mut groups: FxHashMap<Monomial, Vec<(Monomial, crate::num::Rational)>> =
        FxHashMap::default();
    for (m, c) in p.terms() {
        type Pairs = Vec<(u32, u32)>;
        let (inside, outside): (Pairs, Pairs) = m
            .pairs()
            .iter()
            .partition(|(w, _)| keep.binary_search(w).is_ok());
        groups
            .entry(Monomial::from_pairs(outside))
            .or_default()
            .push((Monomial::from_pairs(inside), c.clone()));
    }
    groups.into_values().map(Poly::from_terms).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::Rational;
    use crate::poly::Monomial;

    fn poly(terms: &[(&[(u32, u32)], i64)]) -> Poly {
        Poly::from_terms(terms.iter().map(|(m, c)| {
            (
                Monomial::from_pairs(m.iter().copied()),
                Rational::from_integer(*c),
            )
        }))
    }

    #[test]
    fn variables_of_a_common_factor_are_kept_and_the_others_ruled_out() {
        // a = (x0 + 1)(x1 + x2), b = (x0 + 1)(x1 - x2 + 3)
        let g = poly(&[(&[(0, 1)], 1), (&[], 1)]);
        let a = g.mul(&poly(&[(&[(1, 1)], 1), (&[(2, 1)], 1)]));
        let b = g.mul(&poly(&[(&[(1, 1)], 1), (&[(2, 1)], -1), (&[], 3)]));
        assert_eq!(gcd_variables(&a, &b), vec![0]);
        // coprime operands: no variable can occur
        let c = poly(&[(&[(0, 2)], 1), (&[(1, 1)], 1)]);
        let d = poly(&[(&[(0, 1)], 1), (&[(1, 1)], 2), (&[], 1)]);
        assert_eq!(gcd_variables(&c, &d), Vec::<u32>::new());
    }

    #[test]
    fn huge_coefficients_reduce_modulo_the_prime() {
        let big = Rational::from_bigint(BigInt::from(10).pow(40) + 7);
        assert!(residue(&big).is_some_and(|r| r < P));
        assert_eq!(residue(&Rational::from_integer(-1)), Some(P - 1));
        assert_eq!(residue(&Rational::ratio(1, 2).unwrap_or_default()), None);
    }

    #[test]
    fn coefficients_outside_split_by_the_other_variables() {
        // x0*x1 + 2*x0 + x1^2  over keep = [0]:  x1 -> x0, 1 -> 2*x0, x1^2 -> 1
        let p = poly(&[(&[(0, 1), (1, 1)], 1), (&[(0, 1)], 2), (&[(1, 2)], 1)]);
        let mut cs = coefficients_outside(&p, &[0]);
        cs.sort_by_key(|c| c.terms().len());
        assert_eq!(cs.len(), 3);
        assert!(cs.contains(&poly(&[(&[(0, 1)], 2)])));
        assert!(cs.contains(&poly(&[(&[], 1)])));
    }
}
