//! The one table of densities: each family's density written once, in the language
//! itself, as `fn x T: fn p1 T1: ...: density` with the parameters in the order of the
//! family's primitive (or of its standard-library definition when it has no primitive).
//! [`Family::density`](super::Family::density) instantiates a row at a family's
//! parameters; the simplifier's primitive densities (`slic-simplify`'s `density.rs`) load
//! the rows of the primitives from [`primitive`]. So recognition and the simplifier can
//! never disagree about a density.
//!
//! Densities are with respect to lebesgue measure (continuous families) or counting
//! measure (discrete ones) on the family's support; restricting to the support is the
//! caller's business (it comes with the binder). Powers with a variable exponent are
//! written `**`, which canonical forms read as `exp(k · log l)`, whose derivative the
//! holonomic layer knows. The normalising kernels recognition divides by are written in
//! the operator's coefficients, not in a family's parameters, and live in `continuous.rs`.

use slic_algebra::{front, vars, Dist, Node, Store, TermId, VarId};

use crate::terms;

/// `(row name, fn x T: fn p1 T1: ...: density)`; a row of a primitive is named as the
/// primitive is.
#[rustfmt::skip]
const DENSITIES: [(&str, &str); 10] = [
    ("normal",
     "fn x real: fn m real: fn s prob: exp(-(x - m) ^ 2 / (2 * s ^ 2)) / (s * sqrt(2 * pi))"),
    ("uniform",
     "fn x real: fn lo real: fn hi real: 1 / real2prob(hi - lo)"),
    ("gamma",
     "fn x prob: fn k prob: fn t prob: x ** (k - 1) * exp(-x / t) / (gammaFunc(k) * t ** k)"),
    ("beta",
     "fn x prob: fn a prob: fn b prob: x ** (a - 1) * real2prob(1 - x) ** (b - 1) / betaFunc(a, b)"),
    ("poisson",
     "fn k nat: fn l prob: l ** k * exp(-l) / gammaFunc(k + 1)"),
    ("categorical",
     "fn k nat: fn w array(prob): w[k] / (summate i from 0 to size(w): w[i])"),
    // the standard library's `t(nu, loc, s)`
    ("studentT",
     "fn x real: fn nu prob: fn loc real: fn s prob:
        real2prob(1 + ((x - loc) / s) ^ 2 / nu) ** (-(nu + 1) / 2)
          / (s * sqrt(nu) * betaFunc(1/2, nu / 2))"),
    // the standard library's `weibull(k, lambda)` (of which `rayleigh(s)` is k = 2,
    // lambda = s sqrt(2))
    ("weibull",
     "fn x prob: fn k prob: fn l prob: k / l * (x / l) ** (k - 1) * exp(-(x / l) ** k)"),
    // the standard library's `pareto(xm, alpha)`, on (xm, ∞)
    ("pareto",
     "fn x prob: fn xm prob: fn a prob: a * xm ** a / x ** (a + 1)"),
    // the standard library's `pascal(r, p)`: failures before the r-th success
    ("negBinomial",
     "fn k nat: fn r prob: fn p prob:
        gammaFunc(k + r) / (gammaFunc(k + 1) * gammaFunc(r)) * p ** r * real2prob(1 - p) ** k"),
];

/// A row loaded into a store: `([x, p1, ...], density)`. `None` if the name has no row
/// or its text fails to load (fixed text: a test rules that out).
pub(crate) fn load(store: &mut Store, name: &str) -> Option<(Vec<VarId>, TermId)> {
    let (_, text) = DENSITIES.iter().find(|(n, _)| *n == name)?;
    let mut t = front::load(store, text).ok()?;
    let mut params = Vec::new();
    while let Node::Lam(v, body) = *store.node(t) {
        params.push(v);
        t = body;
    }
    Some((params, t))
}

/// The density row of a primitive distribution, loaded into `store` (`None` for the base
/// measures `lebesgue` and `counting`, whose density is 1).
pub fn primitive(store: &mut Store, d: Dist) -> Option<(Vec<VarId>, TermId)> {
    load(store, d.name())
}

/// Row `name` at the point `x` and the parameters `args` (each coerced to its
/// parameter's type; `real2prob` and `int2nat` where the row asks for a prob or a nat,
/// which the caller vouches for).
pub(crate) fn at(store: &mut Store, name: &str, x: TermId, args: &[TermId]) -> Option<TermId> {
    let (params, mut body) = load(store, name)?;
    if params.len() != args.len() + 1 {
        return None;
    }
    for (&v, &a) in params.iter().zip(std::iter::once(&x).chain(args)) {
        let ty = store.var_type(v).clone();
        let a = terms::coerce(store, a, &ty);
        body = vars::substitute1(store, body, v, a);
    }
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row loads, and its parameters match its primitive's.
    #[test]
    fn every_row_loads() {
        for (name, _) in DENSITIES {
            let mut store = Store::new();
            let (params, body) = load(&mut store, name).unwrap_or_else(|| panic!("{name}"));
            assert!(slic_algebra::verify::verify(&store, body).is_ok(), "{name}");
            if let Some(d) = Dist::from_name(name) {
                let types: Vec<_> = params[1..]
                    .iter()
                    .map(|v| store.var_type(*v).clone())
                    .collect();
                assert_eq!(types, d.param_types(), "{name}");
                assert_eq!(store.var_type(params[0]), &d.support_type(), "{name}");
            }
        }
    }
}
