//! Golden identities for canonical forms: each row is an input `.hk` expression (free
//! variables as `fn` parameters) and the printed canonical form of its body. Every row
//! also checks that the output verifies, that canonicalising again changes nothing, and
//! that printing and loading the output gives an alpha-equivalent term.

use super::*;
use crate::alpha::alpha_eq;
use crate::term::Node;
use crate::verify::verify;
use crate::{front, print};

/// The body under the leading `fn`s.
fn body(s: &Store, mut t: TermId) -> TermId {
    while let Node::Lam(_, b) = s.node(t) {
        t = *b;
    }
    t
}

fn canon_text(src: &str) -> Result<String, String> {
    let mut s = Store::new();
    let t = front::load(&mut s, src).map_err(|d| format!("{d:?}"))?;
    let c = canonicalize(&mut s, &Context::new(), t);
    verify(&s, c).map_err(|e| format!("output does not verify: {e}"))?;
    let again = canonicalize(&mut s, &Context::new(), c);
    if again != c {
        return Err(format!(
            "not idempotent:\n{}---\n{}",
            print::print_term(&s, c),
            print::print_term(&s, again)
        ));
    }
    let printed = print::print_term(&s, c);
    let back =
        front::load(&mut s, &printed).map_err(|d| format!("reload of\n{printed}failed: {d:?}"))?;
    if !alpha_eq(&s, c, back) {
        return Err(format!("printed form does not round-trip:\n{printed}"));
    }
    Ok(print::print_term(&s, body(&s, c)).trim_end().to_string())
}

fn check(src: &str, expect: &str) {
    match canon_text(src) {
        Ok(got) => assert_eq!(got, expect, "canonical form of {src}"),
        Err(e) => panic!("{src}: {e}"),
    }
}

#[test]
fn smoke() {
    check("fn x real: (x + 1)^2", "x ^ 2 + 2 * x + 1");
}

#[test]
fn show_many() {
    let cases = [
        "fn x real: x + x",
        "fn x real: 1/2 + 1/3",
        "fn x real: fn y real: (x + y)^2",
        "fn x real: fn y real: y^2 + x*(2*y + x)",
        "fn x real: fn y real: x - y",
        "fn x real: fn y real: y - x",
        "fn x real: -x^2 + 1",
        "fn x real: x / 2",
        "fn x real: fn y real: x / y",
        "fn x real: (x^2 - 1)/(x - 1)",
        "fn x real: fn mu real: fn s prob: -(x - mu)^2 / (2 * s^2)",
        "fn x real: fn mu real: fn s prob: exp(-(x - mu)^2 / (2 * s^2)) / (s * sqrt(2 * pi))",
        "fn x real: fn y real: exp(x) * exp(y)",
        "fn x prob: exp(log(x))",
        "fn x real: log(exp(x))",
        "fn x prob: fn y prob: log(x * y)",
        "fn x prob: log(x^3)",
        "sqrt(8)",
        "sqrt(4)",
        "fn x prob: sqrt(x) * sqrt(x)",
        "fn a prob: fn b prob: prob2real(a * b)",
        "fn a prob: fn b prob: prob2real(a) * prob2real(b)",
        "fn x prob: fn y real: x ** y",
        "fn x prob: x ** (1/3) * x ** (1/2)",
        "fn n nat: fn m nat: (n + m) * 2",
        "fn n int: fn m nat: n - m",
        "fn p prob: real2prob(1 - p)",
        "fn x real: 1 / sqrt(2)",
        "fn x real: pi * pi",
        "fn x prob: fn c bool: if c: x + 1 else: 1 + x",
        "fn x real: fn c bool: (if c: x else: 2*x) * 3",
        "fn x real: exp(x) / exp(x)",
        "fn x real: 1 / exp(x)",
        "fn p prob: fn a prob: fn b prob: p ** (a - 1) * real2prob(1 - p) ** (b - 1)",
        "fn x real: x^2 / 2 - x / 3",
        "fn x real: fn y real: (x + 1/2) / y",
    ];
    for c in cases {
        match canon_text(c) {
            Ok(t) => println!("{c}  =>  {t}"),
            Err(e) => println!("{c}  => ERROR {e}"),
        }
    }
}
