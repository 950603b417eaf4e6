//! Last touches on the weights the rebuild writes: identities that canonical forms do not
//! apply by themselves, used only when they make the weight shorter.
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
//! Both are equalities for every value of the variables; this file never changes what a
//! weight means.

use rustc_hash::FxHashMap;

use slic_algebra::assume::Context;
use slic_algebra::cond::{linear_form, Linear};
use slic_algebra::num::Rational;
use slic_algebra::{canon, print, Node, Prim, Store, TermId, Type};

use crate::{prepare, terms};

/// The largest integer shift of a gamma function written out as a product.
const MAX_SHIFT: i64 = 32;

/// How long `t` is when printed (what "shorter" means to a reader).
pub(crate) fn size(store: &Store, t: TermId) -> usize {
    print::print_term(store, t).len()
}

/// Does `t` contain a node matching `pred`?
fn contains(store: &Store, t: TermId, pred: &dyn Fn(&Node) -> bool) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        if pred(node) {
            return true;
        }
        work.extend(node.children());
    }
    false
}

fn is_radical(n: &Node) -> bool {
    matches!(n, Node::Prim(Prim::Sqrt | Prim::NatRoot | Prim::RealPow, _))
}

/// Does a radical in `t` have an exponential under it?
fn exp_under_radical(store: &Store, t: TermId) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut work = vec![t];
    while let Some(x) = work.pop() {
        if !seen.insert(x) {
            continue;
        }
        let node = store.node(x);
        if is_radical(node)
            && node
                .children()
                .iter()
                .any(|&c| contains(store, c, &|n| matches!(n, Node::Prim(Prim::Exp, _))))
        {
            return true;
        }
        work.extend(node.children());
    }
    false
}

/// `w` (a canonical prob term) with its square roots merged, when that is shorter.
pub(crate) fn radicals(store: &mut Store, w: TermId) -> TermId {
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
            let r = terms::product(store, rest);
            let r = radicals(store, r);
            let mut all = exps;
            all.push(r);
            let p = terms::product(store, all);
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
    if !exp_under_radical(store, r) && size(store, r) < size(store, w) {
        r
    } else {
        w
    }
}

/// `w` (a prob term) with its gamma and beta functions shifted onto common bases, when
/// that is shorter.
pub(crate) fn gammas(store: &mut Store, w: TermId) -> TermId {
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
        let at = |store: &mut Store, off: &Rational| {
            let l = Linear {
                constant: off.clone(),
                terms: lin.terms.clone(),
            };
            l.to_term(store, &Type::Real)
        };
        let base = at(store, m);
        let mut factors = vec![store.prim(Prim::GammaFunc, vec![base], Type::Prob)];
        for j in 0..k {
            let off = m + &Rational::from_integer(j);
            let x = at(store, &off);
            factors.push(terms::coerce(store, x, &Type::Prob));
        }
        map.insert(*g, terms::product(store, factors));
    }
    let rewritten = replace(store, expanded, &map, &mut FxHashMap::default());
    let rewritten = prepare::reduce(store, rewritten);
    let r = canon::canonicalize(store, &Context::new(), rewritten);
    if size(store, r) < size(store, w) {
        r
    } else {
        w
    }
}

/// `betaFunc(p, q)` as `gammaFunc(p) · gammaFunc(q) / gammaFunc(p + q)` everywhere in `t`.
fn expand_betas(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    slic_algebra::stack::grow(|| expand_here(store, t, memo))
}

fn expand_here(store: &mut Store, t: TermId, memo: &mut FxHashMap<TermId, TermId>) -> TermId {
    let node = store.node(t).clone();
    let ch = node.children();
    let new: Vec<TermId> = ch.iter().map(|&c| expand_betas(store, c, memo)).collect();
    let r = match (&node, new.as_slice()) {
        (Node::Prim(Prim::BetaFunc, _), [p, q]) => {
            let pr = terms::coerce(store, *p, &Type::Real);
            let qr = terms::coerce(store, *q, &Type::Real);
            let sum = store.prim(Prim::Add, vec![pr, qr], Type::Real);
            let gp = store.prim(Prim::GammaFunc, vec![pr], Type::Prob);
            let gq = store.prim(Prim::GammaFunc, vec![qr], Type::Prob);
            let gs = store.prim(Prim::GammaFunc, vec![sum], Type::Prob);
            let inv = store.prim(Prim::Recip, vec![gs], Type::Prob);
            store.prim(Prim::Mul, vec![gp, gq, inv], Type::Prob)
        }
        _ if new == ch => t,
        _ => {
            let ty = store.ty(t).clone();
            store.intern(node.with_children(&new), ty)
        }
    };
    memo.insert(t, r);
    r
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
        .map(|&c| slic_algebra::stack::grow(|| replace(store, c, map, memo)))
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
