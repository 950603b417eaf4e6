//! A deterministic structural total order on terms of one [`Store`], for sorting the
//! operands of `&&`/`||` and the atoms of linear forms.
//!
//! `TermId` order depends on the order terms were interned (`y > x` interns `y` first), so
//! sorting by id would make canonical conditions depend on how the input was written.
//! This order compares structure instead: node kind, then payload (variables by `VarId`,
//! literals by value, primitives, coercions, ...), then type, then children left to right.
//! Equal ids are equal terms (hash-consing), which keeps shared subterms cheap. The walk
//! uses an explicit work list, so deep terms compare without recursion. It says nothing
//! about meaning (`x + 0` and `x` are different and ordered).

use std::cmp::Ordering;

use crate::term::{Node, Store, TermId};

/// Compares two terms structurally (a total order, consistent with `TermId` equality).
pub fn compare(store: &Store, a: TermId, b: TermId) -> Ordering {
    let mut work = vec![(a, b)];
    while let Some((x, y)) = work.pop() {
        if x == y {
            continue;
        }
        let (nx, ny) = (store.node(x), store.node(y));
        let head = rank(nx)
            .cmp(&rank(ny))
            .then_with(|| payload(nx, ny))
            .then_with(|| store.ty(x).cmp(store.ty(y)));
        if head != Ordering::Equal {
            return head;
        }
        let (cx, cy) = (nx.children(), ny.children());
        match cx.len().cmp(&cy.len()) {
            Ordering::Equal => {}
            other => return other,
        }
        // Lexicographic: the first child is compared first, so it is pushed last.
        work.extend(cx.into_iter().zip(cy).rev());
    }
    Ordering::Equal
}

/// The node kind: literals first, then variables, then everything else.
fn rank(n: &Node) -> u8 {
    use Node::*;
    match n {
        Lit(_) => 0,
        Bool(_) => 1,
        Unit => 2,
        Var(_) => 3,
        Index(..) => 4,
        Prim(..) => 5,
        Coerce(..) => 6,
        App(..) => 7,
        If(..) => 8,
        Match(..) => 9,
        Pair(..) => 10,
        Left(_) => 11,
        Right(_) => 12,
        Just(_) => 13,
        Nothing => 14,
        Let(..) => 15,
        Lam(..) => 16,
        ArrayLit(_) => 17,
        Array(..) => 18,
        Summate(..) => 19,
        Product(..) => 20,
        Integrate(..) => 21,
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

/// Compares what two nodes of the same kind hold besides their children.
fn payload(a: &Node, b: &Node) -> Ordering {
    use Node::*;
    let binders = a.binder().cmp(&b.binder());
    match (a, b) {
        (Lit(x), Lit(y)) => x.cmp(y),
        (Bool(x), Bool(y)) => x.cmp(y),
        (Var(x), Var(y)) => x.cmp(y),
        (Prim(p, _), Prim(q, _)) => p.cmp(q),
        (Coerce(c, _), Coerce(d, _)) => c.cmp(d),
        (Dist(d, _), Dist(e, _)) => d.cmp(e),
        (Transform(s, _), Transform(t, _)) => s.cmp(t),
        (Match(_, xs), Match(_, ys)) => {
            let px = xs.iter().map(|(p, _)| p);
            let py = ys.iter().map(|(p, _)| p);
            px.cmp(py)
        }
        _ => binders,
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
        assert_eq!(compare(&s, one, tx), Ordering::Less);
        let a = s.prim(Prim::Add, vec![tx, one], Type::Int);
        let b = s.prim(Prim::Add, vec![ty_, one], Type::Int);
        assert_eq!(compare(&s, a, b), Ordering::Less);
        assert_eq!(compare(&s, b, a), Ordering::Greater);
        assert_eq!(compare(&s, a, a), Ordering::Equal);
        let c = s.prim(Prim::Add, vec![tx, one, one], Type::Int);
        assert_eq!(compare(&s, a, c), Ordering::Less);
    }
}
