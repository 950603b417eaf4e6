//! One row per rule of the table: an expression (its parameters as `fn`s) whose
//! canonical form the rule improves, and the printed cheapest form. Each row also checks
//! the output against the input at pseudo-random points (the rule keeps value) and that
//! the output is no costlier than the canonical input.

use super::*;
use crate::assume::Context;
use crate::canon::canonicalize;
use crate::canon::tidy::tests::apply;

fn check(src: &str, expect: &str) {
    let got = apply(src, &|s: &mut Store, t: TermId| {
        let (out, _) = cheapest_form(s, t);
        assert!(
            cost::size(s, out) <= cost::size(s, t),
            "{src}: costlier output"
        );
        out
    });
    assert_eq!(got, expect, "cheapest form of {src}");
}

#[test]
fn power_absorbs_coefficient_and_reciprocal_base() {
    check(
        "fn k nat: 2 ** (-nat2real(k)) / 2",
        "(1/2) ** (nat2real(k) + 1)",
    );
    // as cheap either way (`3 ** (x + 2)`): the input stays
    check("fn x real: 3 ** x * 9", "9 * 3 ** x");
}

#[test]
fn negation_out_of_sum() {
    check("fn x real: fn y real: exp(-x - y)", "exp(-(x + y))");
    // `3 * (1/5) ** (x + 1)` costs as much: the structural fingerprint breaks the tie
    check("fn x real: 5 ** (-x - 1) * 3", "3 * 5 ** (-x) / 5");
}

#[test]
fn common_factor() {
    check(
        "fn a prob: fn b prob: a ^ 2 * pi + b ^ 2 * pi",
        "pi * (a ^ 2 + b ^ 2)",
    );
    check(
        "fn x real: fn y real: fn z real: x * y + x * z",
        "x * (y + z)",
    );
    // nothing common: as it was
    check("fn x real: fn y real: x * y + y + 1", "x * y + y + 1");
}

#[test]
fn perfect_square() {
    check(
        "fn m real: fn x real: m ^ 2 - 2 * m * x + x ^ 2",
        "(m - x) ^ 2",
    );
    check(
        "fn m real: fn x real: m ^ 2 + 2 * m * x + x ^ 2 + 1",
        "(m + x) ^ 2 + 1",
    );
}

#[test]
fn sqrt_of_reciprocal() {
    check(
        "fn a prob: fn b prob: sqrt(1 / (a + b)) * 2",
        "2 / sqrt(a + b)",
    );
}

#[test]
fn gaussian_evidence_is_factored() {
    // case 4's evidence (normal-normal marginal likelihood)
    check(
        "fn m0 real: fn s0 prob: fn s1 prob: fn x real: \
         exp(-(m0 ^ 2 - 2 * m0 * x + x ^ 2) / (2 * (s0 ^ 2 + s1 ^ 2))) \
         * sqrt(1 / (2 * (s0 ^ 2 * pi + s1 ^ 2 * pi)))",
        "exp(-(m0 - x) ^ 2 / (2 * (prob2real(s0) ^ 2 + prob2real(s1) ^ 2)))\n    \
         / sqrt(2 * pi * (s0 ^ 2 + s1 ^ 2))",
    );
}

#[test]
fn non_numeric_and_big_terms_are_left_alone() {
    let mut s = Store::new();
    let b = s.intern(Node::Bool(true), Type::Bool);
    assert_eq!(cheapest_form(&mut s, b), (b, FormsStop::Skipped));
    let x = s.fresh_var("x", Type::Real);
    let mut t = s.var_term(x);
    for k in 0..300 {
        let c = s.int_lit(k, Type::Real);
        t = s.prim(Prim::Add, vec![t, c], Type::Real);
    }
    let t = canonicalize(&mut s, &Context::new(), t);
    assert_eq!(cheapest_form(&mut s, t).0, t);
}
