//! Table tests of `recurrence`: the ratio `f(k+1) / f(k)` of factors written in the
//! language, one line each, and the factors that have no first-order recurrence.

use slic_algebra::assume::Context;
use slic_algebra::canon::canonicalize;
use slic_algebra::{front, print, Node, Prim, Store, TermId, Type, VarId};

use super::recurrence;
use crate::recognise::Miss;

/// Load `fn a T: ... fn k T: body`; the last parameter is the variable.
pub(crate) fn load(store: &mut Store, src: &str) -> (TermId, VarId) {
    let mut t = match front::load(store, src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {e:?}"),
    };
    let mut var = None;
    while let Node::Lam(v, b) = store.node(t) {
        var = Some(*v);
        t = *b;
    }
    match var {
        Some(v) => (t, v),
        None => panic!("{src}: no fn parameter"),
    }
}

fn show(store: &Store, t: TermId) -> String {
    print::print_term(store, t).trim().to_string()
}

/// `expect` is the canonical form of `num / den` as printed, or the miss.
fn check(src: &str, expect: Result<&str, Miss>) {
    let mut store = Store::new();
    let (f, k) = load(&mut store, src);
    let got = recurrence(&mut store, &Context::new(), f, k).map(|r| {
        let inv = store.prim(Prim::Recip, vec![r.den], Type::Real);
        let q = store.prim(Prim::Mul, vec![r.num, inv], Type::Real);
        let q = canonicalize(&mut store, &Context::new(), q);
        show(&store, q)
    });
    assert_eq!(got.as_deref().map_err(Clone::clone), expect, "{src}");
}

/// Kernels with ratio rules: `c^k`, `e^(a k)`, gammas, `choose`, `betaFunc`, times
/// constants.
#[rustfmt::skip]
#[test]
fn hypergeometric() {
    check("fn l prob: fn k nat: l^k * exp(-l) / gammaFunc(k+1)", Ok("l / (nat2real(k) + 1)"));
    check("fn k nat: (1/2)^(k+1)", Ok("1/2. real"));
    check("fn c prob: fn k nat: c * 3^k / gammaFunc(k+1)", Ok("3 / (nat2real(k) + 1)"));
    check("fn n nat: fn k nat: choose(n, k) * (1/3)^k", Ok("(nat2real(n) - k) / (3 * (nat2real(k) + 1))"));
    check("fn p prob: fn k nat: p ** k", Ok("prob2real(p)"));
    check("fn p prob: fn k nat: real2prob(1-p) ^ k", Ok("prob2real(real2prob(-p + 1))"));
    check("fn r prob: fn k nat: gammaFunc(k + r) / gammaFunc(k + 1)", Ok("(prob2real(r) + k) / (nat2real(k) + 1)"));
    check("fn k int: exp(-k)", Ok("prob2real(exp(-1))"));
    check("fn k nat: gammaFunc(2*k + 1)", Ok("4 * nat2real(k) ^ 2 + 6 * nat2real(k) + 2"));
    check("fn k nat: 1/gammaFunc(3 - k)", Ok("-nat2real(k) + 2"));
    check("fn a prob: fn b prob: fn k nat: betaFunc(k + a, b)", Ok("(prob2real(a) + k) / (prob2real(a) + b + k)"));
    check("fn m nat: fn k nat: choose(k + m, k)", Ok("(nat2real(m) + k + 1) / (nat2real(k) + 1)"));
    check("fn m nat: fn k nat: choose(k, m)", Ok("-(nat2real(k) + 1) / (nat2real(m) - k - 1)"));
    check("fn l prob: fn k nat: exp(k * log(l) - l) / gammaFunc(k + 1)", Ok("l / (nat2real(k) + 1)"));
    check("fn l prob: fn k nat: l^(2*k)", Ok("prob2real(l) ^ 2"));
    check("fn k nat: exp(k) * exp(2*k)", Ok("prob2real(exp(3))"));
    check("fn k nat: (1/2)^k * (1 + (1/3)^k) / (1 + (1/3)^k)", Ok("1/2. real"));
    check("fn l prob: fn k nat: exp(-l) * l^k / gammaFunc(k + 1) * exp(-(k - 1)) * 2", Ok("l * exp(-1) / (nat2real(k) + 1)"));
}

/// Rational factors: `R(k+1) / R(k)`.
#[rustfmt::skip]
#[test]
fn rational() {
    check("fn k nat: (k+1)^2", Ok("(nat2real(k) ^ 2 + 4 * nat2real(k) + 4) / (nat2real(k) ^ 2 + 2 * nat2real(k) + 1)"));
    check("fn k nat: 1/(k+1)", Ok("(nat2real(k) + 1) / (nat2real(k) + 2)"));
    check("fn c prob: fn k nat: c", Ok("1. real"));
    check("fn k nat: real2prob(k - 1)", Ok("k / (nat2real(k) - 1)"));
}

/// No first-order recurrence: kernels without a rule, mixtures.
#[rustfmt::skip]
#[test]
fn misses() {
    check("fn k nat: exp(-k*k)", Err(Miss::NotHolonomic));
    check("fn k nat: 2^k + 3^k", Err(Miss::Order(2)));
    check("fn k nat: 1 + 2^k", Err(Miss::Order(2)));
    check("fn k nat: sqrt(k + 1)", Err(Miss::NotHolonomic));
    check("fn k nat: log(k + 1)", Err(Miss::NotHolonomic));
    check("fn a array(prob): fn k nat: a[k]", Err(Miss::NotHolonomic));
    check("fn a prob: fn k nat: (k + 1) ** a", Err(Miss::NotHolonomic));
    check("fn k nat: if k < 3: 1 else: 0", Err(Miss::NotHolonomic));
    check("fn k nat: exp(k^3)", Err(Miss::NotHolonomic));
    check("fn k nat: k ** k", Err(Miss::NotHolonomic));
    check("fn k nat: 1 / (1 + exp(k))", Err(Miss::NotHolonomic));
    check("fn k int: floor(k / 2)", Err(Miss::NotHolonomic));
    check("fn k nat: (1/2)^k * (1 + (1/3)^k)", Err(Miss::Order(2)));
    check("fn k nat: gammaFunc(k / 2)", Err(Miss::NotHolonomic));
    check("fn k nat: (k + 1)^300 * (1/2)^k", Err(Miss::Budget));
    check("fn k nat: gammaFunc(100 * k)", Err(Miss::Budget));
}
