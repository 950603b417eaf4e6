//! Identities of special functions that canonical forms do not apply by themselves, used
//! only when they make a prob term cheaper by the structural cost of [`crate::cost`]
//! (moved from the simplifier: they are pure algebra, and the simplifier applies them
//! to the weights it writes).
//!
//! - Square roots merged: a prob weight `w` is `sqrt(w^2)`, and `w^2` often has no
//!   radical left (the normalisers of recognised densities meet the square roots of
//!   their parameters: `sqrt(2 pi (s1^2 + s2^2)) sqrt(2 pi s1^2 s2^2 / (s1^2 + s2^2)) /
//!   (2 pi s1 s2)` is 1). Exponentials stay outside the root.
//! - Gamma functions shifted: `betaFunc(p, q)` is `Γ(p) Γ(q) / Γ(p + q)`, and of the
//!   `Γ(A + c)` with one non-constant part `A`, each is written over the one with the
//!   smallest offset (`Γ(a + 2) = (a + 1) a Γ(a)`), so ratios like
//!   `betaFunc(a + 1, b) / betaFunc(a, b)` cancel to `a / (a + b)`. Only shifts down to
//!   an offset the term already has: no new pole is introduced.
//!
//! - Gamma functions at positive integers and half-integers evaluated exactly
//!   ([`gamma_value`]: `Γ(5/2) = 3/4 sqrt(pi)`), which the shifts and the simplifier's
//!   reductions both need.
//!
//! All are equalities for every value of the variables; this file never changes what a
//! term means.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use crate::assume::Context;
use crate::cond::linear::coerce_up;
use crate::cond::{linear_form, Linear};
use crate::num::Rational;
use crate::term::{Node, Prim, Store, TermId};
use crate::types::Type;
use crate::{canon, cost};

/// The largest integer shift of a gamma function written out as a product.
const MAX_SHIFT: i64 = 32;

/// The largest argument `gammaFunc` is evaluated at (its value has about 150 digits).
const GAMMA_MAX: i64 = 100;

/// `value · sqrt(pi)^half_pis`: the exact value of `gammaFunc` at a positive integer or
/// half-integer, and of `betaFunc` at such arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GammaValue {
    pub value: Rational,
    pub half_pis: u32,
}

impl GammaValue {
    /// The value as a prob term (`value * pi^(half_pis / 2) * sqrt(pi)^(half_pis % 2)`).
    pub fn to_term(&self, store: &mut Store) -> TermId {
        let c = store.intern(Node::Lit(self.value.clone()), Type::Prob);
        if self.half_pis == 0 {
            return c;
        }
        let pi = store.prim(Prim::Pi, vec![], Type::Prob);
        let mut factors = vec![c];
        for _ in 0..self.half_pis / 2 {
            factors.push(pi);
        }
        if self.half_pis % 2 == 1 {
            factors.push(store.prim(Prim::Sqrt, vec![pi], Type::Prob));
        }
        store.prim(Prim::Mul, factors, Type::Prob)
    }
}

/// `Γ(a)` for a positive integer or half-integer `a` up to [`GAMMA_MAX`].
pub fn gamma_value(a: &Rational) -> Option<GammaValue> {
    let two_a = (a * &Rational::from_integer(2)).to_i64()?;
    if !(a * &Rational::from_integer(2)).is_integer() || two_a <= 0 || two_a > 2 * GAMMA_MAX {
        return None;
    }
    // Γ(1) = 1, Γ(1/2) = sqrt(pi), Γ(x + 1) = x Γ(x)
    let (mut value, mut x, half_pis) = if two_a % 2 == 0 {
        (Rational::one(), Rational::one(), 0)
    } else {
        (Rational::one(), Rational::ratio(1, 2)?, 1)
    };
    while &x < a {
        value *= &x;
        x += Rational::one();
    }
    Some(GammaValue { value, half_pis })
}

/// Is `r` strictly cheaper than `w` by the structural cost, each in the cheapest form
/// [`canon::cheapest_form`] finds for it (the form it is finally written in)?
fn cheaper(store: &mut Store, r: TermId, w: TermId) -> bool {
    let (rf, _) = canon::cheapest_form(store, r);
    let (wf, _) = canon::cheapest_form(store, w);
    cost::compare(store, rf, wf) == Ordering::Less
}

/// The product of prob terms (`1` when empty).
fn product(store: &mut Store, mut fs: Vec<TermId>) -> TermId {
    match fs.len() {
        0 => store.int_lit(1, Type::Prob),
        1 => fs.remove(0),
        _ => store.prim(Prim::Mul, fs, Type::Prob),
    }
}

/// Does `t` contain a node matching `pred`?
fn contains(store: &Store, t: TermId, pred: &dyn Fn(&Node) -> bool) -> bool {
    store.subterms(t).any(|x| pred(store.node(x)))
}

fn is_radical(n: &Node) -> bool {
    matches!(n, Node::Prim(Prim::Sqrt | Prim::NatRoot | Prim::RealPow, _))
}

/// Does a radical in `t` have an exponential under it?
fn exp_under_radical(store: &Store, t: TermId) -> bool {
    store.subterms(t).any(|x| {
        let node = store.node(x);
        is_radical(node)
            && node
                .children()
                .iter()
                .any(|&c| contains(store, c, &|n| matches!(n, Node::Prim(Prim::Exp, _))))
    })
}

/// `w` (a canonical prob term) with its square roots merged, when that is cheaper.
pub fn merge_radicals(store: &mut Store, w: TermId) -> TermId {
    if !contains(store, w, &is_radical) {
        return w;
    }
    let ctx = Context::new();
    // exponentials stay outside the square root
    if let Node::Prim(Prim::Mul, xs) = store.node(w).clone() {
        let (exps, rest): (Vec<TermId>, Vec<TermId>) = xs
            .into_iter()
            .partition(|&x| matches!(store.node(x), Node::Prim(Prim::Exp, _)));
        if !exps.is_empty() && !rest.is_empty() {
            let r = product(store, rest);
            let r = merge_radicals(store, r);
            let mut all = exps;
            all.push(r);
            let p = product(store, all);
            return canon::canonicalize(store, &ctx, p);
        }
    }
    let sq = store.prim(Prim::Mul, vec![w, w], Type::Prob);
    let sq = canon::canonicalize(store, &ctx, sq);
    if contains(store, sq, &is_radical) {
        return w;
    }
    let r = store.prim(Prim::Sqrt, vec![sq], Type::Prob);
    let r = canon::canonicalize(store, &ctx, r);
    if !exp_under_radical(store, r) && cheaper(store, r, w) {
        r
    } else {
        w
    }
}

/// `w` (a prob term) with its gamma and beta functions shifted onto common bases, when
/// that is cheaper.
pub fn shift_gammas(store: &mut Store, w: TermId) -> TermId {
    let special = |n: &Node| matches!(n, Node::Prim(Prim::GammaFunc | Prim::BetaFunc, _));
    if !contains(store, w, &special) {
        return w;
    }
    let expanded = expand_betas(store, w, &mut FxHashMap::default());
    // every Γ argument as (non-constant part, offset)
    let mut args: Vec<(TermId, Linear, Rational)> = Vec::new();
    collect_gammas(store, expanded, &mut args);
    let mut lowest: FxHashMap<Vec<(TermId, Rational)>, Rational> = FxHashMap::default();
    for (_, lin, c) in &args {
        lowest
            .entry(lin.terms.clone())
            .and_modify(|m| {
                if c < m {
                    *m = c.clone();
                }
            })
            .or_insert_with(|| c.clone());
    }
    let mut map: FxHashMap<TermId, TermId> = FxHashMap::default();
    for (g, lin, c) in &args {
        let Some(m) = lowest.get(&lin.terms) else {
            continue;
        };
        let shift = c - m;
        let Some(k) = shift
            .to_i64()
            .filter(|k| shift.is_integer() && (1..=MAX_SHIFT).contains(k))
        else {
            continue;
        };
        if lin.terms.is_empty() {
            continue;
        }
        // Γ(A + m + k) = Γ(A + m) · Π_{j<k} (A + m + j)
        let at = |store: &mut Store, off: &Rational, ty: &Type| {
            let l = Linear {
                constant: off.clone(),
                terms: lin.terms.clone(),
            };
            l.to_term(store, ty)
        };
        let base = at(store, m, &Type::Real);
        let mut factors = vec![store.prim(Prim::GammaFunc, vec![base], Type::Prob)];
        for j in 0..k {
            let off = m + &Rational::from_integer(j);
            factors.push(at(store, &off, &Type::Prob));
        }
        map.insert(*g, product(store, factors));
    }
    let rewritten = replace(store, expanded, &map, &mut FxHashMap::default());
    let r = canon::canonicalize(store, &Context::new(), rewritten);
    if cheaper(store, r, w) {
        r
    } else {
        w
    }
}

/// `betaFunc(p, q)` as `gammaFunc(p) · gammaFunc(q) / gammaFunc(p + q)` everywhere in `t`,
/// and `gammaFunc` at a literal evaluated ([`gamma_value`]).
fn expand_betas(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    crate::stack::grow(|| expand_here(store, t, memo))
}

fn expand_here(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
    let node = store.node(t).clone();
    let ch = node.children();
    let new: Vec<TermId> = ch.iter().map(|&c| expand_betas(store, c, memo)).collect();
    let r = match (&node, new.as_slice()) {
        (Node::Prim(Prim::BetaFunc, _), [p, q]) => {
            let pr = coerce_up(store, *p, &Type::Real);
            let qr = coerce_up(store, *q, &Type::Real);
            let sum = store.prim(Prim::Add, vec![pr, qr], Type::Real);
            let gp = gamma_at(store, pr);
            let gq = gamma_at(store, qr);
            let gs = gamma_at(store, sum);
            let inv = store.prim(Prim::Recip, vec![gs], Type::Prob);
            store.prim(Prim::Mul, vec![gp, gq, inv], Type::Prob)
        }
        (Node::Prim(Prim::GammaFunc, _), [a]) => gamma_at(store, *a),
        _ if new == ch => t,
        _ => {
            let ty = store.ty(t).clone();
            store.intern(node.with_children(&new), ty)
        }
    };
    memo.insert(t, r);
    r
}

/// `gammaFunc(a)`, evaluated when `a` is a closed positive integer or half-integer.
fn gamma_at(store: &mut Store, a: TermId) -> TermId {
    let value = crate::eval::eval_exact(store, a).and_then(|v| gamma_value(&v));
    match value {
        Some(g) => g.to_term(store),
        None => store.prim(Prim::GammaFunc, vec![a], Type::Prob),
    }
}

/// Every `gammaFunc(arg)` of `t` with `arg`'s non-constant part and offset.
fn collect_gammas(store: &mut Store, t: TermId, out: &mut Vec<(TermId, Linear, Rational)>) {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x).clone();
        if let Node::Prim(Prim::GammaFunc, args) = &node {
            if let Some(&a) = args.first() {
                let lin = linear_form(store, a);
                let c = lin.constant.clone();
                let rest = Linear {
                    constant: Rational::zero(),
                    terms: lin.terms,
                };
                out.push((x, rest, c));
            }
        }
        work.extend(node.children());
    }
}

/// `t` with the subterms of `map` replaced.
fn replace(
    store: &mut Store,
    t: TermId,
    map: &FxHashMap<TermId, TermId>,
    memo: &mut FxHashMap<TermId, TermId>,
) -> TermId {
    if let Some(&r) = map.get(&t) {
        return r;
    }
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    let node = store.node(t).clone();
    let ch = node.children();
    let new: Vec<TermId> = ch
        .iter()
        .map(|&c| crate::stack::grow(|| replace(store, c, map, memo)))
        .collect();
    let r = if new == ch {
        t
    } else {
        let ty = store.ty(t).clone();
        store.intern(node.with_children(&new), ty)
    };
    memo.insert(t, r);
    r
}

#[cfg(test)]
pub(crate) mod tests {
    //! Each row: a prob expression over prob parameters (as `fn` parameters), one of the
    //! identities applied to its canonical form, the printed result, and the value of
    //! input and output compared at pseudo-random points in f64.

    use super::*;
    use crate::eval::eval_f64;
    use crate::term::VarId;
    use crate::{front, print};

    /// Applies `f` to the canonical body of `src`; the printed result, after checking
    /// that it has the input's value at a few points.
    pub(crate) fn apply(src: &str, f: &dyn Fn(&mut Store, TermId) -> TermId) -> String {
        let mut s = Store::new();
        let t = front::load(&mut s, src).expect("test program parses");
        let mut body = t;
        let mut params: Vec<VarId> = Vec::new();
        while let Node::Lam(v, b) = s.node(body) {
            params.push(*v);
            body = *b;
        }
        let c = canon::canonicalize(&mut s, &Context::new(), body);
        let out = f(&mut s, c);
        // a small deterministic generator: values in (0.3, 4.3), away from Γ's poles
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5 {
            let vals: Vec<f64> = params
                .iter()
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    0.3 + 4.0 * ((state >> 11) as f64 / (1u64 << 53) as f64)
                })
                .collect();
            let env = |v: VarId| params.iter().position(|p| *p == v).map(|i| vals[i]);
            let a = eval_f64(&s, body, &env).expect("input evaluates");
            let b = eval_f64(&s, out, &env).expect("output evaluates");
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{src}: {a} != {b} at {vals:?}"
            );
        }
        print::print_term(&s, out).trim_end().to_string()
    }

    fn gammas(src: &str, expect: &str) {
        assert_eq!(apply(src, &shift_gammas), expect, "shift_gammas of {src}");
    }

    fn radicals(src: &str, expect: &str) {
        assert_eq!(
            apply(src, &merge_radicals),
            expect,
            "merge_radicals of {src}"
        );
    }

    #[test]
    fn gamma_shifts_cancel_ratios() {
        gammas(
            "fn a prob: fn b prob: betaFunc(a + 1, b) / betaFunc(a, b)",
            "a / (a + b)",
        );
        gammas(
            "fn a prob: gammaFunc(prob2real(a) + 2) / gammaFunc(a)",
            "a ^ 2 + a",
        );
        // nothing to cancel: kept as it is
        gammas("fn a prob: gammaFunc(a) * 2", "2 * gammaFunc(a)");
        // a literal argument is evaluated once the beta is written with gammas
        gammas("fn a prob: betaFunc(a, 1) * a", "1. prob");
    }

    #[test]
    fn radicals_merge_when_cheaper() {
        radicals("fn s prob: sqrt(2 * s) * sqrt(8 * s)", "4 * s");
        radicals("fn s prob: sqrt(s)", "sqrt(s)");
        // exponentials stay outside the root
        radicals(
            "fn s prob: exp(prob2real(s)) * sqrt(s) * sqrt(s ^ 3)",
            "s ^ 2 * exp(s)",
        );
    }

    #[test]
    fn gamma_values_at_integers_and_half_integers() {
        let v = |n: i64, d: i64| Rational::ratio(n, d).and_then(|r| gamma_value(&r));
        assert_eq!(
            v(5, 1).map(|g| (g.value, g.half_pis)),
            Some((Rational::from_integer(24), 0))
        );
        let half = v(5, 2).map(|g| (g.value, g.half_pis));
        assert_eq!(half, Rational::ratio(3, 4).map(|r| (r, 1)));
        assert_eq!(v(1, 3), None);
        assert_eq!(v(0, 1), None);
        assert_eq!(v(-1, 2), None);
    }
}
