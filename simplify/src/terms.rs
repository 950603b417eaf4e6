//! Builders for the few term shapes the simplifier's steps write (literals, coercions,
//! products, conditions), a subterm test, and a term read as affine in a kernel. Variable utilities (substitution,
//! freshening, free variables, `mentions`) are shared by every crate and live in
//! `slic_algebra::vars`.
//!
//! Nothing here decides meaning: these are syntactic operations that keep every term
//! well typed.

use slic_algebra::num::Rational;
use slic_algebra::{Coercion, Node, Prim, Store, TermId, Type};

/// Does `t` contain the subterm `sub`?
pub(crate) fn contains(store: &Store, t: TermId, sub: TermId) -> bool {
    store.subterms(t).any(|x| x == sub)
}

/// An integer literal of numeric type `ty`.
pub(crate) fn int(store: &mut Store, n: i64, ty: &Type) -> TermId {
    store.int_lit(n, ty.clone())
}

/// A rational literal of numeric type `ty`.
pub(crate) fn lit(store: &mut Store, r: &Rational, ty: &Type) -> TermId {
    store.intern(Node::Lit(r.clone()), ty.clone())
}

/// The literal value of `t`, if it is one.
pub(crate) fn lit_value(store: &Store, t: TermId) -> Option<Rational> {
    match store.node(t) {
        Node::Lit(r) => Some(r.clone()),
        _ => None,
    }
}

/// `t` converted to numeric type `to`: a safe coercion upward, an unsafe one (`real2prob`,
/// `int2nat`) downward; literals are retyped when their value fits.
pub(crate) fn coerce(store: &mut Store, t: TermId, to: &Type) -> TermId {
    let from = store.ty(t).clone();
    if from == *to {
        return t;
    }
    if let Node::Lit(r) = store.node(t) {
        let fits = match to {
            Type::Nat => r.is_integer() && !r.is_negative(),
            Type::Int => r.is_integer(),
            Type::Prob => !r.is_negative(),
            _ => true,
        };
        if fits {
            let r = r.clone();
            return store.intern(Node::Lit(r), to.clone());
        }
    }
    // undo a coercion that went the other way (`real2prob(prob2real(p))` is `p`)
    if let Node::Coerce(c, inner) = store.node(t) {
        if c.from_type() == *to && c.is_safe() {
            return *inner;
        }
    }
    if let Some(c) = Coercion::safe(&from, to) {
        return store.intern(Node::Coerce(c, t), to.clone());
    }
    let step =
        |store: &mut Store, c: Coercion, t: TermId| store.intern(Node::Coerce(c, t), c.to_type());
    match (&from, to) {
        (Type::Real, Type::Prob) => step(store, Coercion::Real2Prob, t),
        (Type::Int, Type::Nat) => step(store, Coercion::Int2Nat, t),
        (Type::Prob, Type::Int) | (Type::Prob, Type::Nat) | (Type::Real, Type::Nat) => {
            let r = coerce(store, t, &Type::Real);
            let i = step(store, Coercion::Real2Int, r);
            coerce(store, i, to)
        }
        (Type::Real, Type::Int) => step(store, Coercion::Real2Int, t),
        (Type::Int, Type::Prob) => {
            let r = coerce(store, t, &Type::Real);
            step(store, Coercion::Real2Prob, r)
        }
        _ => t,
    }
}

/// The product of prob terms (`1` when empty).
pub(crate) fn product(store: &mut Store, mut fs: Vec<TermId>) -> TermId {
    match fs.len() {
        0 => int(store, 1, &Type::Prob),
        1 => fs.remove(0),
        _ => store.prim(Prim::Mul, fs, Type::Prob),
    }
}

/// `a OP b` for numeric terms of one type and a comparison `OP`.
pub(crate) fn compare(store: &mut Store, op: Prim, a: TermId, b: TermId) -> TermId {
    let ta = store.ty(a).clone();
    let tb = store.ty(b).clone();
    let ty = ta.numeric_join(&tb).unwrap_or(Type::Real);
    let a = coerce(store, a, &ty);
    let b = coerce(store, b, &ty);
    store.prim(op, vec![a, b], Type::Bool)
}

/// `if c: 1 else: 0` as a prob term (an indicator factor).
pub(crate) fn indicator(store: &mut Store, c: TermId) -> TermId {
    let one = int(store, 1, &Type::Prob);
    let zero = int(store, 0, &Type::Prob);
    store.intern(Node::If(c, one, zero), Type::Prob)
}

/// `not c`.
pub(crate) fn not(store: &mut Store, c: TermId) -> TermId {
    store.prim(Prim::Not, vec![c], Type::Bool)
}

/// The element type of a measure type (`T` of `measure(T)`), or unit for anything else.
pub(crate) fn measure_elem(store: &Store, m: TermId) -> Type {
    store.ty(m).measure_of().cloned().unwrap_or(Type::Unit)
}

/// `t` read as `a·k + b` in the kernel `k` (a variable, or `prob2real` of one): `(Some(a),
/// Some(b))` with the absent ones `None` (`b` absent is 0, `a` absent means `t` is free of
/// `k`), both canonical and free of `k`; `None` when `t` is not a polynomial of degree at
/// most 1 in `k`.
pub(crate) fn affine_in(
    store: &mut Store,
    t: TermId,
    k: TermId,
) -> Option<(Option<TermId>, Option<TermId>)> {
    let coeffs = slic_algebra::canon::Canon::new(store, slic_algebra::assume::Context::new())
        .collect(t, k)
        .ok()?;
    let (mut a, mut b) = (None, None);
    for (deg, c) in coeffs {
        match deg {
            1 => a = Some(c),
            0 => b = Some(c),
            _ => return None,
        }
    }
    Some((a, b))
}
