//! A structural total order on terms, used to order the factors and summands of
//! canonical forms so that output never depends on the order in which kernels were met.
//!
//! Variables compare by `VarId` (creation order, so the order of a program's parameters),
//! literals by value, other nodes by kind, then payload, then children left to right,
//! and finally by type; distinct terms never compare equal. It compares structure only:
//! it must not be used as a statement about values.

use std::cmp::Ordering;

use crate::term::{Node, Store, TermId};

const RED_ZONE: usize = 128 << 10;
const STACK_SEGMENT: usize = 4 << 20;

/// The rank of a node kind: variables first, then indexing, literals, primitives, ...
fn kind(n: &Node) -> u8 {
    use Node::*;
    match n {
        Var(_) => 0,
        Index(..) => 1,
        Lit(_) => 2,
        Prim(..) => 3,
        Coerce(..) => 4,
        Summate(..) => 5,
        Product(..) => 6,
        Integrate(..) => 7,
        If(..) => 8,
        Match(..) => 9,
        App(..) => 10,
        Let(..) => 11,
        Bool(_) => 12,
        Unit => 13,
        Pair(..) => 14,
        Left(_) => 15,
        Right(_) => 16,
        Just(_) => 17,
        Nothing => 18,
        Lam(..) => 19,
        ArrayLit(_) => 20,
        Array(..) => 21,
        Bucket(..) => 22,
        RAdd(_) => 23,
        RNop => 24,
        RIndex(..) => 25,
        RSplit(..) => 26,
        RFanout(..) => 27,
        Dirac(_) => 28,
        Weight(..) => 29,
        Reject => 30,
        Superpose(_) => 31,
        Bind(..) => 32,
        Plate(..) => 33,
        Chain(..) => 34,
        Dist(..) => 35,
        Observe(..) => 36,
        Transform(..) => 37,
    }
}

/// Compare two terms structurally (see the module doc).
pub fn cmp_terms(store: &Store, a: TermId, b: TermId) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || cmp_here(store, a, b))
}

fn cmp_here(store: &Store, a: TermId, b: TermId) -> Ordering {
    let (na, nb) = (store.node(a), store.node(b));
    let by_kind = kind(na).cmp(&kind(nb));
    if by_kind != Ordering::Equal {
        return by_kind;
    }
    use Node::*;
    let payload = match (na, nb) {
        (Var(x), Var(y)) => x.cmp(y),
        (Lit(x), Lit(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Prim(p, _), Prim(q, _)) => p.cmp(q),
        (Coerce(c, _), Coerce(d, _)) => c.cmp(d),
        (Dist(d, _), Dist(e, _)) => d.cmp(e),
        (Transform(t, _), Transform(u, _)) => t.cmp(u),
        (Match(_, xs), Match(_, ys)) => xs.iter().map(|p| &p.0).cmp(ys.iter().map(|p| &p.0)),
        _ => Ordering::Equal,
    };
    if payload != Ordering::Equal {
        return payload;
    }
    let binders = na.binder().cmp(&nb.binder());
    if binders != Ordering::Equal {
        return binders;
    }
    let (ca, cb) = (na.children(), nb.children());
    let by_len = ca.len().cmp(&cb.len());
    if by_len != Ordering::Equal {
        return by_len;
    }
    for (&x, &y) in ca.iter().zip(&cb) {
        let o = cmp_terms(store, x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    store.ty(a).cmp(store.ty(b))
}
