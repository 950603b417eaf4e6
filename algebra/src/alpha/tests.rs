//! Alpha-equivalence tests: pairs of terms built in one store, with the expected answer.
//! (This file is `#[rustfmt::skip]` so each case stays a one-line table row.)

use super::*;
use crate::print::build::B;
use crate::term::Node;
use crate::types::Type::{self, Bool, Nat, Real};

/// Build two terms in one store and compare them (both ways: the relation is symmetric).
fn check(build: impl FnOnce(&B) -> (TermId, TermId), expect: bool) {
    let b = B::new();
    let (x, y) = build(&b);
    let s = b.s.borrow();
    assert_eq!(alpha_eq(&s, x, y), expect, "alpha_eq(a, b)");
    assert_eq!(alpha_eq(&s, y, x), expect, "alpha_eq(b, a)");
}

fn pv(v: crate::term::VarId) -> Box<Pattern> {
    Box::new(Pattern::Var(v))
}

#[test]
fn renamed_binders_are_equivalent() {
    check(|b| (b.lam("x", Real, |x| x), b.lam("y", Real, |y| y)), true);
    check(|b| (b.lam("x", Real, |x| b.lam("y", Real, |_| x)), b.lam("a", Real, |a| b.lam("b", Real, |_| a))), true);
    check(|b| (b.bind("x", b.std_normal(), |x| b.dirac(x)), b.bind("z", b.std_normal(), |z| b.dirac(z))), true);
    check(|b| (b.let_("x", b.nat(1), |x| b.add(&[x, x])), b.let_("y", b.nat(1), |y| b.add(&[y, y]))), true);
    check(|b| (b.sum("i", b.nat(0), b.nat(3), |i| i), b.sum("j", b.nat(0), b.nat(3), |j| j)), true);
    check(|b| (b.chain("s", b.real(0), b.nat(2), |s| b.dirac(b.pair(s, s))), b.chain("t", b.real(0), b.nat(2), |t| b.dirac(b.pair(t, t)))), true);
    check(|b| (b.bucket("j", b.nat(0), b.nat(5), |j| b.r_index("c", b.nat(3), j, |c| b.r_add(c))), b.bucket("k", b.nat(0), b.nat(5), |k| b.r_index("d", b.nat(3), k, |d| b.r_add(d)))), true);
    check(|b| { let (x, y) = (b.fresh("x", Real), b.fresh("y", Real)); let s = b.var("s", Type::pair(Real, Real)); let m = |u, v| b.n(Node::Match(s, vec![(Pattern::Pair(pv(u), pv(v)), b.v(u))]), Real); (m(x, y), { let (p, q) = (b.fresh("p", Real), b.fresh("q", Real)); m(p, q) }) }, true);
    check(|b| (b.lam("x", Real, |x| x), b.lam("x", Real, |x| x)), true);
}

#[test]
fn different_structure_or_binding_is_not() {
    // bound to a different binder
    check(|b| (b.lam("x", Real, |x| b.lam("y", Real, |_| x)), b.lam("a", Real, |_| b.lam("b", Real, |b2| b2))), false);
    // bound vs free
    check(|b| { let f = b.var("x", Real); (b.lam("x", Real, |x| x), b.lam("y", Real, |_| f)) }, false);
    // different free variables
    check(|b| (b.var("x", Real), b.var("x", Real)), false);
    // binder types differ
    check(|b| (b.lam("x", Real, |_| b.nat(1)), b.lam("x", Nat, |_| b.nat(1))), false);
    // literal types differ
    check(|b| (b.real(1), b.prob(1)), false);
    check(|b| (b.real(1), b.real(2)), false);
    // node kinds differ
    check(|b| (b.add(&[b.var("x", Real), b.real(1)]), b.mul(&[b.var("x", Real), b.real(1)])), false);
    check(|b| { let x = b.var("x", Real); (b.add(&[x, x, x]), b.add(&[x, x])) }, false);
    // the bound part of a loop vs its bounds
    check(|b| (b.sum("i", b.nat(0), b.nat(3), |i| i), b.sum("i", b.nat(0), b.nat(4), |i| i)), false);
    // match arms with different pattern shapes
    check(|b| { let x = b.fresh("x", Bool); let s = b.var("s", Type::maybe(Bool)); (b.n(Node::Match(s, vec![(Pattern::Just(pv(x)), b.v(x))]), Bool), b.n(Node::Match(s, vec![(Pattern::Wild, b.bool(true))]), Bool)) }, false);
    // pattern variables correspond positionally: (a, b) -> a  vs  (p, q) -> q
    check(|b| { let s = b.var("s", Type::pair(Real, Real)); let (a, bb, p, q) = (b.fresh("a", Real), b.fresh("b", Real), b.fresh("p", Real), b.fresh("q", Real)); (b.n(Node::Match(s, vec![(Pattern::Pair(pv(a), pv(bb)), b.v(a))]), Real), b.n(Node::Match(s, vec![(Pattern::Pair(pv(p), pv(q)), b.v(q))]), Real)) }, false);
}

#[test]
fn shared_subterms_under_renaming_are_compared() {
    // the same TermId `x` on both sides, but bound differently: not equivalent
    check(|b| { let x = b.fresh("x", Real); let y = b.fresh("y", Real); let body = b.pair(b.v(x), b.v(y)); (b.n(Node::Lam(x, b.n(Node::Lam(y, body), Type::fun(Real, b.ty(body)))), Type::fun(Real, Type::fun(Real, b.ty(body)))), b.n(Node::Lam(y, b.n(Node::Lam(x, body), Type::fun(Real, b.ty(body)))), Type::fun(Real, Type::fun(Real, b.ty(body))))) }, false);
    // the same variable re-bound inside its own scope (shadowing): inner binding wins
    check(|b| { let x = b.fresh("x", Real); let y = b.fresh("y", Real); let z = b.fresh("z", Real); let t = |o, i, r| { let inner = b.n(Node::Lam(i, b.v(r)), Type::fun(Real, Real)); b.n(Node::Lam(o, inner), Type::fun(Real, Type::fun(Real, Real))) }; (t(x, x, x), t(y, z, z)) }, true);
    check(|b| { let x = b.fresh("x", Real); let y = b.fresh("y", Real); let z = b.fresh("z", Real); let t = |o, i, r| { let inner = b.n(Node::Lam(i, b.v(r)), Type::fun(Real, Real)); b.n(Node::Lam(o, inner), Type::fun(Real, Type::fun(Real, Real))) }; (t(x, x, x), t(y, z, y)) }, false);
}

#[test]
fn deep_chains_compare_without_recursing() {
    let b = B::new();
    let chain = |hint: &str| {
        let n = 10_000;
        let vars: Vec<_> = (0..n).map(|_| b.fresh(hint, Nat)).collect();
        let mut body = b.dirac(b.v(vars[n - 1]));
        for i in (0..n).rev() {
            let rhs = if i == 0 { b.nat(0) } else { b.v(vars[i - 1]) };
            body = b.n(Node::Let(vars[i], rhs, body), b.ty(body));
        }
        body
    };
    let (x, y) = (chain("x"), chain("y"));
    assert!(alpha_eq(&b.s.borrow(), x, y));
}
