//! Tables for closing sums and products.

use super::*;
use crate::{front, print};

fn body(s: &Store, mut t: TermId) -> TermId {
    while let Node::Lam(_, b) = s.node(t) {
        t = *b;
    }
    t
}

fn run(src: &str) -> String {
    let mut s = Store::new();
    let t = front::load(&mut s, src).unwrap_or_else(|d| panic!("{src}: {d:?}"));
    let r = simplify_loops(&mut s, &Context::new(), t);
    print::print_term(&s, body(&s, r)).trim_end().to_string()
}

#[test]
fn explore() {
    for src in [
        "fn n nat: summate i from 0 to n: i",
        "fn n nat: summate i from 0 to n: nat2real(i)",
        "fn n nat: fn x real: summate i from 0 to n: x",
        "fn n nat: fn m nat: fn x real: summate i from m to n: x * i^2",
        "fn n nat: fn x real: product i from 0 to n: x",
        "fn n nat: fn x prob: product i from 0 to n: x",
        "fn n nat: fn x real: product i from 0 to n: exp(x * i)",
        "fn n nat: fn y array(nat): fn s array(real): fn i nat: summate j from 0 to n: if i == y[j]: 3 * s[j] else: 0",
        "fn n nat: fn s array(real): fn i nat: summate j from 0 to n: if i == j: s[j] else: 0",
        "fn n nat: fn s array(real): fn i nat: summate j from 1 to n: if i == j - 1: s[j] else: 0",
    ] {
        println!("{src}\n  => {}", run(src));
    }
}
