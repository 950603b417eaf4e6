//! Verifier tests: well-typed terms pass; hand-built ill-typed terms fail with the error
//! named. (This file is `#[rustfmt::skip]` so each case stays a one-line table row.)

use super::*;
use crate::print::build::B;
use crate::term::{Dist, Node};
use crate::types::Coercion;
use crate::types::Type::{self, Bool, Int, Nat, Prob, Real};

/// Build a term; `expect` is `"ok"` or a substring of the error's display.
fn check(build: impl FnOnce(&B) -> TermId, expect: &str) {
    let b = B::new();
    let t = build(&b);
    let result = verify(&b.s.borrow(), t);
    match (result, expect) {
        (Ok(()), "ok") => {}
        (Ok(()), want) => panic!("verified, but expected an error containing {want:?}"),
        (Err(e), "ok") => panic!("expected ok, got: {e}"),
        (Err(e), want) => assert!(e.to_string().contains(want), "error {:?} does not contain {want:?}", e.to_string()),
    }
}

#[test]
fn well_typed_terms_pass() {
    check(|b| b.bind("x", b.std_normal(), |x| b.dirac(x)), "ok");
    check(|b| b.lam("mu", Real, |mu| b.bind("x", b.normal(mu, b.prob(1)), |x| b.weight(b.prim(Prim::Exp, &[x], Prob), b.dirac(x)))), "ok");
    check(|b| b.add(&[b.var("x", Real), b.neg(b.real(2))]), "ok");
    check(|b| b.mul(&[b.var("x", Prob), b.recip(b.prob(2))]), "ok");
    check(|b| b.let_("f", b.lam("x", Real, |x| b.add(&[x, b.real(1)])), |f| b.app(f, &[b.real(2)])), "ok");
    check(|b| b.plate("i", b.nat(3), |i| b.normal(b.coerce(Coercion::Nat2Real, i), b.prob(1))), "ok");
    check(|b| b.chain("s", b.real(0), b.nat(4), |s| b.bind("x", b.normal(s, b.prob(1)), |x| b.dirac(b.pair(x, x)))), "ok");
    check(|b| b.bucket("j", b.nat(0), b.nat(5), |j| b.r_fanout(b.r_index("b", b.nat(3), j, |_| b.r_add(b.prob(1))), b.r_split(b.bool(true), b.r_nop(), b.r_add(b.real(1))))), "ok");
    check(|b| b.integrate("x", b.neg_inf(), b.real_inf(), |x| b.prim(Prim::Exp, &[x], Prob)), "ok");
    check(|b| b.sum("i", b.int(0), b.int(3), |i| i), "ok");
    check(|b| b.if_(b.cmp(Prim::Lt, b.var("x", Real), b.real(0)), b.dirac(b.unit()), b.reject(Type::Unit)), "ok");
    check(|b| { let x = b.fresh("x", Nat); b.n(Node::Match(b.var("e", Type::either(Nat, Bool)), vec![(Pattern::Left(Box::new(Pattern::Var(x))), b.v(x)), (Pattern::Right(Box::new(Pattern::Wild)), b.nat(0))]), Nat) }, "ok");
    check(|b| b.prim(Prim::Abs, &[b.int(-2)], Nat), "ok");
    check(|b| b.prim(Prim::Floor, &[b.var("x", Real)], Int), "ok");
    check(|b| b.prim(Prim::Reduce, &[b.lam("a", Nat, |a| b.lam("c", Nat, |c| b.add(&[a, c]))), b.nat(0), b.array("i", b.nat(3), |i| i)], Nat), "ok");
    check(|b| b.superpose(&[b.dirac(b.nat(1)), b.dirac(b.nat(2))]), "ok");
    check(|b| b.index(b.array_lit(Real, &[b.real(1)]), b.nat(0)), "ok");
    check(|b| b.n(Node::Observe(b.std_normal(), b.real(1)), Type::measure(Real)), "ok");
}

#[test]
fn ill_typed_terms_fail_with_a_useful_error() {
    check(|b| b.prim(Prim::Add, &[b.var("x", Real), b.prob(1)], Real), "(Add): argument 1: expected real, found prob");
    check(|b| b.prim(Prim::Add, &[b.var("x", Real)], Real), "expected at least 2 arguments, found 1");
    check(|b| b.neg(b.var("x", Nat)), "(Neg): result: expected int or real, found nat");
    check(|b| b.recip(b.var("x", Int)), "expected prob or real, found int");
    check(|b| b.normal(b.prob(0), b.prob(1)), "(Dist(normal)): argument 0: expected real, found prob");
    check(|b| b.dist(Dist::Normal, &[b.real(0)]), "expected 2 arguments, found 1");
    check(|b| b.n(Node::Coerce(Coercion::Nat2Real, b.real(1)), Real), "(Coerce(nat2real)): argument: expected nat, found real");
    check(|b| b.n(Node::Coerce(Coercion::Nat2Real, b.nat(1)), Prob), "result: expected real, found prob");
    check(|b| b.q(-1, 1, Nat), "literal -1 is not a value of type nat");
    check(|b| b.q(1, 2, Int), "literal 1/2 is not a value of type int");
    check(|b| { let x = b.fresh("x", Real); b.n(Node::Bind(x, b.dist(Dist::Poisson, &[b.prob(1)]), b.dirac(b.v(x))), Type::measure(Real)) }, "(Bind): measure: expected measure(real), found measure(nat)");
    check(|b| { let x = b.fresh("x", Real); b.n(Node::Bind(x, b.std_normal(), b.v(x)), Real) }, "(Bind): body: expected measure(_), found real");
    check(|b| b.n(Node::Var(b.fresh("x", Real)), Prob), "(Var): result: expected real, found prob");
    check(|b| b.n(Node::If(b.nat(1), b.nat(2), b.nat(3)), Nat), "(If): condition: expected bool, found nat");
    check(|b| b.n(Node::If(b.bool(true), b.nat(2), b.real(3)), Nat), "else-branch: expected nat, found real");
    check(|b| b.n(Node::App(b.var("f", Type::fun(Real, Real)), b.nat(1)), Real), "(App): argument: expected real, found nat");
    check(|b| b.n(Node::App(b.var("f", Real), b.nat(1)), Real), "function: expected a function type, found real");
    check(|b| b.n(Node::Weight(b.real(1), b.std_normal()), Type::measure(Real)), "(Weight): weight: expected prob, found real");
    check(|b| b.n(Node::Superpose(vec![b.std_normal()]), Type::measure(Real)), "(Superpose): expected at least 2 arguments, found 1");
    check(|b| b.n(Node::Match(b.var("b", Bool), vec![(Pattern::Nothing, b.nat(1))]), Nat), "the pattern of arm 0 cannot match a bool");
    check(|b| b.n(Node::Match(b.var("b", Bool), vec![]), Nat), "match without arms");
    check(|b| b.prim(Prim::Abs, &[b.var("x", Nat)], Nat), "argument 0: expected one of int, real, found nat");
    check(|b| b.n(Node::Integrate(b.fresh("x", Real), b.real(0), b.real(1), b.real(1)), Real), "(Integrate): body: expected prob, found real");
    // errors deep inside are found too
    check(|b| b.lam("x", Real, |x| b.bind("y", b.std_normal(), |y| b.dirac(b.prim(Prim::Add, &[x, y, b.nat(1)], Real)))), "(Add): argument 2: expected real, found nat");
}

#[test]
fn deep_chains_verify_without_recursing() {
    let b = B::new();
    let n = 10_000;
    let vars: Vec<_> = (0..n).map(|_| b.fresh("x", Nat)).collect();
    let mut body = b.dirac(b.v(vars[n - 1]));
    for i in (0..n).rev() {
        let rhs = if i == 0 { b.nat(0) } else { b.v(vars[i - 1]) };
        body = b.n(Node::Let(vars[i], rhs, body), b.ty(body));
    }
    assert_eq!(verify(&b.s.borrow(), body), Ok(()));
}
