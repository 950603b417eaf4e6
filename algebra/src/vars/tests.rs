//! Tests of the shared variable utilities on hand-built terms: scopes of binders, free
//! variables, `mentions`, capture-avoiding substitution and freshening.

use rustc_hash::FxHashMap;

use super::*;
use crate::alpha::alpha_eq;
use crate::types::Type;
use crate::verify::verify;
use crate::{Pattern, Prim};

fn add(s: &mut Store, a: TermId, b: TermId) -> TermId {
    s.prim(Prim::Add, vec![a, b], Type::Real)
}

fn lam(s: &mut Store, v: VarId, body: TermId) -> TermId {
    let ty = Type::fun(s.var_type(v).clone(), s.ty(body).clone());
    s.intern(Node::Lam(v, body), ty)
}

/// Every variable bound anywhere in `t`.
fn all_binders(s: &Store, t: TermId) -> Vec<VarId> {
    let mut out = Vec::new();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        binders(s.node(x), &mut out);
        work.extend(s.node(x).children());
    }
    out
}

#[test]
fn free_variables_under_binders() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let y = s.fresh_var("y", Type::Real);
    let (xt, yt) = (s.var_term(x), s.var_term(y));
    let body = add(&mut s, xt, yt);
    let f = lam(&mut s, x, body);
    assert_eq!(free_vars(&s, f), vec![y]);
    assert_eq!(free_vars(&s, body), vec![x, y]);
    // `x = x + y then x`: the binder scopes over the body, not over its own definition
    let l = s.intern(Node::Let(x, body, xt), Type::Real);
    assert_eq!(free_vars(&s, l), vec![x, y]);
    assert!(mentions(&s, l, x));
    let l2 = s.intern(Node::Let(x, yt, xt), Type::Real);
    assert_eq!(free_vars(&s, l2), vec![y]);
    assert!(!mentions(&s, l2, x));
    assert!(mentions_any(&s, l2, &[x, y]));
    assert!(!mentions_any(&s, l2, &[x]));
    // summate binds its index in the body only
    let zero = s.int_lit(0, Type::Int);
    let i = s.fresh_var("i", Type::Int);
    let it = s.var_term(i);
    let sum = s.intern(Node::Summate(i, zero, it, it), Type::Int);
    assert_eq!(free_vars(&s, sum), vec![i]);
}

#[test]
fn match_binds_pattern_variables_in_its_arm() {
    let mut s = Store::new();
    let p = s.fresh_var("p", Type::Real);
    let q = s.fresh_var("q", Type::Real);
    let pt = s.var_term(p);
    let qt = s.var_term(q);
    let scrut = s.intern(Node::Just(qt), Type::maybe(Type::Real));
    let zero = s.int_lit(0, Type::Real);
    let arms = vec![
        (Pattern::Just(Box::new(Pattern::Var(p))), pt),
        (Pattern::Wild, pt),
    ];
    let m = s.intern(Node::Match(scrut, arms), Type::Real);
    // p is bound in the first arm, free in the second
    assert_eq!(free_vars(&s, m), vec![p, q]);
    let r = substitute1(&mut s, m, p, zero);
    let expect_arms = vec![
        (Pattern::Just(Box::new(Pattern::Var(p))), pt),
        (Pattern::Wild, zero),
    ];
    let expect = s.intern(Node::Match(scrut, expect_arms), Type::Real);
    assert_eq!(r, expect);
}

#[test]
fn substitution_avoids_capture() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let y = s.fresh_var("y", Type::Real);
    let (xt, yt) = (s.var_term(x), s.var_term(y));
    // fn y: x + y, with x := y: the binder must not capture the y put in for x
    let body = add(&mut s, xt, yt);
    let f = lam(&mut s, y, body);
    let r = substitute1(&mut s, f, x, yt);
    assert_eq!(free_vars(&s, r), vec![y]);
    let Node::Lam(y2, _) = *s.node(r) else {
        panic!("not a lambda: {:?}", s.node(r));
    };
    assert_ne!(y2, y);
    let y2t = s.var_term(y2);
    let expect_body = add(&mut s, yt, y2t);
    let expect = lam(&mut s, y2, expect_body);
    assert_eq!(r, expect);
    verify(&s, r).unwrap();
}

#[test]
fn substitution_leaves_untouched_binders_alone() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let y = s.fresh_var("y", Type::Real);
    let z = s.fresh_var("z", Type::Real);
    let (xt, yt, zt) = (s.var_term(x), s.var_term(y), s.var_term(z));
    // fn y: y + y with x := y: nothing to substitute, nothing renamed
    let yy = add(&mut s, yt, yt);
    let f = lam(&mut s, y, yy);
    assert_eq!(substitute1(&mut s, f, x, yt), f);
    // fn z: x + z with x := y: y is not bound inside, so z stays
    let xz = add(&mut s, xt, zt);
    let g = lam(&mut s, z, xz);
    let yz = add(&mut s, yt, zt);
    let expect = lam(&mut s, z, yz);
    assert_eq!(substitute1(&mut s, g, x, yt), expect);
}

#[test]
fn inner_binder_shadows_the_substituted_variable() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let xt = s.var_term(x);
    let one = s.int_lit(1, Type::Real);
    let inner = lam(&mut s, x, xt);
    let ty = Type::pair(Type::Real, s.ty(inner).clone());
    let t = s.intern(Node::Pair(xt, inner), ty.clone());
    let r = substitute1(&mut s, t, x, one);
    let expect = s.intern(Node::Pair(one, inner), ty);
    assert_eq!(r, expect);
}

#[test]
fn substitution_is_simultaneous() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let y = s.fresh_var("y", Type::Real);
    let (xt, yt) = (s.var_term(x), s.var_term(y));
    let t = add(&mut s, xt, yt);
    let mut map = FxHashMap::default();
    map.insert(x, yt);
    map.insert(y, xt);
    let expect = add(&mut s, yt, xt);
    assert_eq!(substitute(&mut s, t, &map), expect);
}

#[test]
fn freshening_gives_new_distinct_binders() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let y = s.fresh_var("y", Type::Real);
    let free = s.fresh_var("a", Type::Real);
    let (xt, yt, at) = (s.var_term(x), s.var_term(y), s.var_term(free));
    let xy = add(&mut s, xt, yt);
    let body = add(&mut s, xy, at);
    let inner = lam(&mut s, y, body);
    let t = lam(&mut s, x, inner);
    let f = freshen(&mut s, t);
    assert_ne!(f, t);
    assert!(alpha_eq(&s, t, f));
    assert_eq!(free_vars(&s, f), vec![free]);
    let old = all_binders(&s, t);
    let new = all_binders(&s, f);
    assert_eq!(new.len(), 2);
    assert_ne!(new[0], new[1]);
    assert!(new.iter().all(|v| !old.contains(v)));
    verify(&s, f).unwrap();
    // a term without binders is its own copy
    assert_eq!(freshen(&mut s, body), body);
}

#[test]
fn freshening_keeps_free_occurrences_of_a_variable_also_bound() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let xt = s.var_term(x);
    // pair(x, fn x: x): x is both free and bound
    let inner = lam(&mut s, x, xt);
    let ty = Type::pair(Type::Real, s.ty(inner).clone());
    let t = s.intern(Node::Pair(xt, inner), ty);
    let f = freshen(&mut s, t);
    assert!(alpha_eq(&s, t, f));
    assert_eq!(free_vars(&s, f), vec![x]);
    let Node::Pair(a, b) = *s.node(f) else {
        panic!("not a pair");
    };
    assert_eq!(a, xt);
    assert!(matches!(*s.node(b), Node::Lam(v, _) if v != x));
}

#[test]
fn has_binders_sees_match_patterns() {
    let mut s = Store::new();
    let x = s.fresh_var("x", Type::Real);
    let xt = s.var_term(x);
    assert!(!has_binders(&s, xt));
    let f = lam(&mut s, x, xt);
    assert!(has_binders(&s, f));
}
