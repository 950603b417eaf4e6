//! A deterministic structural total order on the terms of one [`Store`]: the one order the
//! algebra sorts by (summands and factors of canonical forms, operands of `&&`/`||`,
//! atoms of linear forms), so output never depends on the order terms were interned
//! (`y > x` interns `y` first) or kernels were met.
//!
//! Terms compare by node kind (variables first, then indexing, literals, primitives, ...),
//! then payload (variables by `VarId`, i.e. creation order, so a program's parameters in
//! order; literals by value; primitives, coercions, distributions by kind), then bound
//! variables, then children left to right, and last by type. Equal ids are equal terms
//! (hash-consing), which keeps shared subterms cheap. The walk uses an explicit work list,
//! so deep terms compare without recursion. It is a statement about structure only, never
//! about values (`x + 0` and `x` are different and ordered).

use std::cmp::Ordering;

use crate::term::{Node, Store, TermId, VarId};

/// Work left in a comparison: a pair to compare, or the types of a pair whose children
/// have all compared equal (types break ties last).
enum Step {
    Terms(TermId, TermId),
    Types(TermId, TermId),
}

/// Compares two terms structurally (a total order, consistent with `TermId` equality).
pub fn compare(store: &Store, a: TermId, b: TermId) -> Ordering {
    let mut work = vec![Step::Terms(a, b)];
    while let Some(step) = work.pop() {
        let (x, y) = match step {
            Step::Types(x, y) => match store.ty(x).cmp(store.ty(y)) {
                Ordering::Equal => continue,
                other => return other,
            },
            Step::Terms(x, y) => (x, y),
        };
        if x == y {
            continue;
        }
        let (nx, ny) = (store.node(x), store.node(y));
        let head = kind(nx)
            .cmp(&kind(ny))
            .then_with(|| payload(store, nx, ny))
            .then_with(|| match (nx.binder(), ny.binder()) {
                (Some(v), Some(w)) => var_order(store, v, w),
                (p, q) => p.cmp(&q),
            });
        if head != Ordering::Equal {
            return head;
        }
        let (cx, cy) = (nx.children(), ny.children());
        match cx.len().cmp(&cy.len()) {
            Ordering::Equal => {}
            other => return other,
        }
        // Lexicographic, then the types: the type check goes under the children, and the
        // first child is compared first, so it is pushed last.
        work.push(Step::Types(x, y));
        work.extend(cx.into_iter().zip(cy).rev().map(|(p, q)| Step::Terms(p, q)));
    }
    Ordering::Equal
}

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

/// Variables in creation order, except canonical loop indices (`Store::canonical_var`),
/// which come first, by height and name: they are made when first needed, so their
/// creation order depends on what was simplified before.
fn var_order(store: &Store, x: VarId, y: VarId) -> Ordering {
    match (store.canonical_height(x), store.canonical_height(y)) {
        (Some(a), Some(b)) => a
            .cmp(&b)
            .then_with(|| store.var_name(x).cmp(store.var_name(y)))
            .then_with(|| store.var_type(x).cmp(store.var_type(y)))
            .then_with(|| x.cmp(&y)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => x.cmp(&y),
    }
}

/// Compares what two nodes of the same kind hold besides their children.
fn payload(store: &Store, a: &Node, b: &Node) -> Ordering {
    use Node::*;
    match (a, b) {
        (Var(x), Var(y)) => var_order(store, *x, *y),
        (Lit(x), Lit(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Prim(p, _), Prim(q, _)) => p.cmp(q),
        (Coerce(c, _), Coerce(d, _)) => c.cmp(d),
        (Dist(d, _), Dist(e, _)) => d.cmp(e),
        (Transform(s, _), Transform(t, _)) => s.cmp(t),
        (Match(_, xs), Match(_, ys)) => xs.iter().map(|p| &p.0).cmp(ys.iter().map(|p| &p.0)),
        _ => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Prim;
    use crate::types::Type;

    #[test]
    fn order_is_structural_not_by_id() {
        let mut s = Store::new();
        let x = s.fresh_var("x", Type::Int);
        let y = s.fresh_var("y", Type::Int);
        // intern y first: id order and structural order disagree
        let ty_ = s.var_term(y);
        let tx = s.var_term(x);
        assert_eq!(compare(&s, tx, ty_), Ordering::Less);
        let one = s.int_lit(1, Type::Int);
        assert_eq!(
            compare(&s, tx, one),
            Ordering::Less,
            "variables before literals"
        );
        let a = s.prim(Prim::Add, vec![tx, one], Type::Int);
        let b = s.prim(Prim::Add, vec![ty_, one], Type::Int);
        assert_eq!(compare(&s, a, b), Ordering::Less);
        assert_eq!(compare(&s, b, a), Ordering::Greater);
        assert_eq!(compare(&s, a, a), Ordering::Equal);
        let c = s.prim(Prim::Add, vec![tx, one, one], Type::Int);
        assert_eq!(compare(&s, a, c), Ordering::Less);
        // types break ties last, after the children
        let xr = s.fresh_var("x", Type::Real);
        let (one_r, one_n) = (s.int_lit(1, Type::Real), s.int_lit(1, Type::Nat));
        assert_ne!(compare(&s, one_r, one_n), Ordering::Equal);
        let _ = xr;
    }

    #[test]
    fn deep_terms_compare_without_recursion() {
        let mut s = Store::new();
        let x = s.fresh_var("x", Type::Real);
        let (mut a, mut b) = (s.var_term(x), s.var_term(x));
        let one = s.int_lit(1, Type::Real);
        let two = s.int_lit(2, Type::Real);
        for _ in 0..200_000 {
            a = s.prim(Prim::Neg, vec![a], Type::Real);
            b = s.prim(Prim::Neg, vec![b], Type::Real);
        }
        let a2 = s.prim(Prim::Add, vec![a, one], Type::Real);
        let b2 = s.prim(Prim::Add, vec![b, two], Type::Real);
        assert_eq!(compare(&s, a2, b2), Ordering::Less);
    }
}
