//! Terms made wrong on purpose, to show that a meaning check can fail (issues 5 and 10:
//! "a mutant test shows the check catches wrong outputs"): a measure weighted by a
//! constant, and a normal's mean shifted inside a plate. Both keep the term well typed and
//! reach under the program's `fn` parameters and top-level `def`s, so they apply to any
//! simplifier output.
//!
//! Nothing here knows the simplifier; the mutants are built on core terms directly.

use num_rational::BigRational;
use slic_algebra::{Dist, Node, Prim, Store, TermId, Type};

/// `weight(num/den, m)` for the measure `m` under `t`'s `fn` parameters and top-level
/// `def`s; `None` when `t` is not a (function returning a) measure.
pub fn weighted(store: &mut Store, t: TermId, num: i64, den: i64) -> Option<TermId> {
    let ty = store.ty(t).clone();
    match store.node(t).clone() {
        Node::Lam(x, body) => {
            let b = weighted(store, body, num, den)?;
            Some(store.intern(Node::Lam(x, b), ty))
        }
        Node::Let(x, e, body) if matches!(ty, Type::Measure(_) | Type::Fun(..)) => {
            let b = weighted(store, body, num, den)?;
            Some(store.intern(Node::Let(x, e, b), ty))
        }
        _ => {
            ty.measure_of()?;
            let w = store.lit(BigRational::new(num.into(), den.into()), Type::Prob);
            Some(store.intern(Node::Weight(w, t), ty))
        }
    }
}

/// `t` with the mean `m` of the first `normal(m, s)` met inside a plate (children in
/// order, depth first) replaced by `m + num/den`; `None` when no plate holds a normal.
pub fn plate_mean_shifted(store: &mut Store, t: TermId, num: i64, den: i64) -> Option<TermId> {
    shift(store, t, false, &BigRational::new(num.into(), den.into()))
}

fn shift(store: &mut Store, t: TermId, in_plate: bool, by: &BigRational) -> Option<TermId> {
    let ty = store.ty(t).clone();
    let node = store.node(t).clone();
    if let (Node::Dist(Dist::Normal, args), true) = (&node, in_plate) {
        let d = store.lit(by.clone(), Type::Real);
        let m = store.prim(Prim::Add, vec![args[0], d], Type::Real);
        let mut moved = args.clone();
        moved[0] = m;
        return Some(store.intern(Node::Dist(Dist::Normal, moved), ty));
    }
    let inside = in_plate || matches!(node, Node::Plate(..));
    let mut children = node.children();
    for i in 0..children.len() {
        if let Some(c) = shift(store, children[i], inside, by) {
            children[i] = c;
            return Some(store.intern(node.with_children(&children), ty));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use slic_algebra::{front, print};

    #[test]
    fn the_mutants_reach_under_parameters_and_into_plates() {
        let mut store = Store::new();
        let t = front::load(
            &mut store,
            "fn n nat:\nfn m real:\nx <~ normal(m, 1)\nplate i of n: normal(x, 1)\n",
        )
        .expect("loads");
        let w = weighted(&mut store, t, 21, 20).expect("a measure under fn");
        assert!(print::print_term(&store, w).contains("weight(21/20"));
        let s = plate_mean_shifted(&mut store, t, 1, 10).expect("a normal in a plate");
        let printed = print::print_term(&store, s);
        assert!(printed.contains("normal(m, 1)"), "{printed}");
        assert!(printed.contains("normal(x + 1/10, 1)"), "{printed}");
        let none = front::load(&mut store, "normal(0, 1)\n").expect("loads");
        assert!(plate_mean_shifted(&mut store, none, 1, 10).is_none());
    }
}
