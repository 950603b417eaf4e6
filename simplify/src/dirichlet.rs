//! The standard library's `dirichlet` recognised back in an output (issue 10,
//! deliverable 4). `dirichlet(a)` is written by stick-breaking (eq. (12) of the arrays
//! paper): `p <~ plate i of int2nat(size(a) - 1): beta(Σ_{j>i} a[j], a[i])`, then the
//! array whose piece `i` is `Π_{k<i} p[k] · (1 - p[i])` (the last piece `Π p`). Its
//! fractions integrate out one by one, and when the probability vector is kept (returned,
//! or used by what follows) the simplifier leaves the posterior in that same shape, with
//! parameters that hold counts. This pass writes such a shape as `dirichlet(b)` again.
//!
//! The shape is matched by meaning against the library's own definition, not by a second
//! copy of it: the candidate `b` is the array of the fractions' second Beta parameters,
//! `b = array i of M: B(i)` (with `M` the size of an array built from `p` later on), the
//! definition is instantiated at `b`, and both its plate and its array of pieces must
//! have the canonical forms of the ones found (alpha-equal). The first parameters then
//! hold the tail sums `Σ_{j>i} b[j]` (`sums` closes the tail sum of counts per class into
//! counts of labels in a range), which also fixes `b[M - 1]`. Where the fractions are
//! read otherwise than through that array, nothing changes.

use slic_algebra::assume::Context;

use crate::prepare;
use slic_algebra::{alpha, canon, vars, Dist, Node, Prim, Store, TermId, Type, VarId};

/// `t` with every stick-breaking draw whose pieces are all it is used for written as a
/// draw from `dirichlet` (see the module doc); `t` itself when the library's
/// `dirichlet` is not loaded or nothing matches.
pub(crate) fn fold(store: &mut Store, t: TermId) -> TermId {
    let Some(dv) = store.library_var("dirichlet") else {
        return t;
    };
    let mut memo = rustc_hash::FxHashMap::default();
    fold_in(store, dv, t, &mut memo)
}

fn fold_in(
    store: &mut Store,
    dv: VarId,
    t: TermId,
    memo: &mut rustc_hash::FxHashMap<TermId, TermId>,
) -> TermId {
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    if store.ty(t).measure_of().is_none() && !matches!(store.ty(t), Type::Fun(..)) {
        return t;
    }
    let node = store.node(t).clone();
    let ch = node.children();
    let new: Vec<TermId> = ch
        .iter()
        .map(|&c| slic_algebra::stack::grow(|| fold_in(store, dv, c, memo)))
        .collect();
    let mut r = if new == ch {
        t
    } else {
        let ty = store.ty(t).clone();
        store.intern(node.with_children(&new), ty)
    };
    if let Node::Bind(x, m, k) = *store.node(r) {
        if let Some(folded) = fold_bind(store, dv, x, m, k) {
            r = folded;
        }
    }
    memo.insert(t, r);
    r
}

/// `x <~ m; k` as `θ <~ dirichlet(b); k'` when `m` and the array `k` reads `x` through
/// are the library's definition at some `b` (see the module doc).
fn fold_bind(store: &mut Store, dv: VarId, x: VarId, m: TermId, k: TermId) -> Option<TermId> {
    let Node::Plate(i, _, d) = *store.node(m) else {
        return None;
    };
    let Node::Dist(Dist::Beta, ref params) = *store.node(d) else {
        return None;
    };
    let second = *params.get(1)?;
    // the arrays built from x in what follows, each a candidate for the pieces
    let candidates: Vec<(TermId, TermId)> = store
        .subterms(k)
        .filter_map(|u| match *store.node(u) {
            Node::Array(_, size, _) if *store.ty(u) == Type::array(Type::Prob) => Some((u, size)),
            _ => None,
        })
        .filter(|&(u, size)| vars::mentions(store, u, x) && !vars::mentions(store, size, x))
        .collect();
    let ctx = Context::new();
    let plate = canon::canonicalize(store, &ctx, m);
    for (pieces, size) in candidates {
        let b = store.intern(Node::Array(i, size, second), Type::array(Type::Prob));
        let Some((p2, plate2, pieces2)) = instantiate(store, dv, b) else {
            continue;
        };
        let plate2 = prepare::reduce(store, plate2);
        let plate2 = canon::canonicalize(store, &ctx, plate2);
        if !alpha::alpha_eq(store, plate, plate2) {
            continue;
        }
        let xt = store.var_term(x);
        let pieces2 = vars::substitute1(store, pieces2, p2, xt);
        let pieces2 = prepare::reduce(store, pieces2);
        let (a, c) = (
            canon::canonicalize(store, &ctx, pieces),
            canon::canonicalize(store, &ctx, pieces2),
        );
        if !alpha::alpha_eq(store, a, c) {
            continue;
        }
        let theta = store.fresh_var("theta", Type::array(Type::Prob));
        let tt = store.var_term(theta);
        let k2 = vars::replace_free(store, k, pieces, tt);
        if vars::mentions(store, k2, x) {
            continue;
        }
        // b's elements read under their index's range (a guard `y[j] < M` next to
        // `i == y[j]` is then true)
        let zero = store.int_lit(0, Type::Nat);
        let inside = ctx.with_range(i, zero, size);
        let second = canon::canonicalize(store, &inside, second);
        let b = eta(store, i, size, second);
        let f = store.var_term(dv);
        let prior = store.intern(Node::App(f, b), store.ty(m).clone());
        if *store.node(k2) == Node::Dirac(tt) {
            return Some(prior);
        }
        let ty = store.ty(k).clone();
        return Some(store.intern(Node::Bind(theta, prior, k2), ty));
    }
    None
}

/// The library's `dirichlet` applied to `b`, as its three parts: the fractions'
/// variable, their plate, and the array of pieces built from them.
fn instantiate(store: &mut Store, dv: VarId, b: TermId) -> Option<(VarId, TermId, TermId)> {
    let def = store.library_def(dv)?;
    let def = vars::freshen(store, def);
    let Node::Lam(a, body) = *store.node(def) else {
        return None;
    };
    let body = vars::substitute1(store, body, a, b);
    let Node::Bind(p, plate, ret) = *store.node(body) else {
        return None;
    };
    let Node::Dirac(pieces) = *store.node(ret) else {
        return None;
    };
    Some((p, plate, pieces))
}

/// `array i of size: e` as a term, `a` itself when `e` is `a[i]` with `a` free of `i`
/// and of size `size` (the prior's concentrations, when nothing was observed).
fn eta(store: &mut Store, i: VarId, size: TermId, e: TermId) -> TermId {
    if let Node::Index(a, at) = *store.node(e) {
        if *store.node(at) == Node::Var(i) && !vars::mentions(store, a, i) {
            let sz = store.prim(Prim::Size, vec![a], Type::Nat);
            if sz == size {
                return a;
            }
        }
    }
    store.intern(Node::Array(i, size, e), Type::array(Type::Prob))
}
