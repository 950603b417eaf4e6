//! A structural cost of terms: what choosing among equal forms is ranked by (issue
//! "Trustworthy verdicts": output forms ranked by structure, not by the length of the
//! printed text, so that no pass depends on the printer).
//!
//! [`size`] counts the nodes of a term as a tree (a shared subterm is paid each time it
//! occurs, as a reader and straight-line generated code pay it), each weighted by its
//! kind: arithmetic is cheap, special functions cost more (they are slower to evaluate
//! and to read), binders and loops are dear, and draws dearest (each is a random choice
//! a sampler makes). [`compare`] orders two terms by size and breaks ties by the
//! structural order of [`crate::order`], so a choice never depends on the order terms
//! were interned.
//!
//! This module says nothing about meaning: it only ranks forms that a caller already
//! knows to be equal.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use crate::num::Rational;
use crate::order;
use crate::term::{Node, Prim, Store, TermId};

/// The cost of one node of kind `n`, without its children.
pub fn node_cost(n: &Node) -> u64 {
    use Node::*;
    match n {
        Var(_) | Bool(_) | Unit | Nothing | RNop => 1,
        Lit(r) => lit_cost(r),
        Coerce(..) => COERCION_COST,
        Prim(p, xs) => prim_cost(*p, xs.len()),
        Pair(..) | Left(_) | Right(_) | Just(_) | Index(..) | ArrayLit(_) | App(..) => 1,
        If(..) | Match(..) | RAdd(_) | RSplit(..) | RFanout(..) | Transform(..) => 2,
        Let(..) | Lam(..) => 3,
        Array(..) | Summate(..) | Product(..) | Integrate(..) | Bucket(..) | RIndex(..) => 6,
        Dirac(_) | Reject => 1,
        Weight(..) => 3,
        Superpose(xs) => 4 * u64::try_from(xs.len()).unwrap_or(u64::MAX / 8),
        Bind(..) => 4,
        Plate(..) | Chain(..) => 8,
        Dist(..) => 8,
        Observe(..) => 6,
    }
}

/// The cost of a literal: a fraction is read as a division, a sign as a negation.
pub fn lit_cost(r: &Rational) -> u64 {
    1 + u64::from(!r.is_integer()) + u64::from(r.is_negative())
}

/// The cost of a coercion: implicit in most of what a reader sees, and free in generated
/// code.
pub const COERCION_COST: u64 = 0;

/// The cost of a primitive operation on `arity` operands: a sum or product 1 per
/// operand (so `a * (b * c)`, which needs parentheses, costs more than `a * b * c`),
/// negation and reciprocal 1, powers and roots 2, transcendental and special functions 3.
pub fn prim_cost(p: Prim, arity: usize) -> u64 {
    use Prim::*;
    match p {
        Add | Mul => u64::try_from(arity.max(1)).unwrap_or(u64::MAX),
        Neg | Recip => 1,
        Pow | RealPow | NatRoot | Sqrt | Abs | Signum | Floor | Min | Max => 2,
        Pi | Infinity => 1,
        Exp | Log => 2,
        Erf | Choose | GammaFunc | BetaFunc | Sin | Cos | Tan | Asin | Acos | Atan | Sinh
        | Cosh | Tanh | Asinh | Acosh | Atanh => 3,
        _ => 1,
    }
}

/// The structural cost of `t`: the weighted count of its nodes as a tree (saturating).
pub fn size(store: &Store, t: TermId) -> u64 {
    let mut memo: FxHashMap<TermId, u64> = FxHashMap::default();
    // post-order over an explicit work list, so deep terms cost no stack
    let mut work: Vec<(TermId, bool)> = vec![(t, false)];
    while let Some((x, expanded)) = work.pop() {
        if memo.contains_key(&x) {
            continue;
        }
        let node = store.node(x);
        let children = node.children();
        if expanded {
            let total = children
                .iter()
                .map(|c| memo.get(c).copied().unwrap_or(0))
                .fold(node_cost(node), u64::saturating_add);
            memo.insert(x, total);
        } else {
            work.push((x, true));
            work.extend(
                children
                    .into_iter()
                    .filter(|c| !memo.contains_key(c))
                    .map(|c| (c, false)),
            );
        }
    }
    memo.get(&t).copied().unwrap_or(0)
}

/// Orders two terms by [`size`], ties broken by the structural order: `Less` means `a`
/// is the better form.
pub fn compare(store: &Store, a: TermId, b: TermId) -> Ordering {
    size(store, a)
        .cmp(&size(store, b))
        .then_with(|| order::compare(store, a, b))
}

/// The cheaper of two equal forms, `a` on a tie (equal ids).
pub fn cheaper(store: &Store, a: TermId, b: TermId) -> TermId {
    if compare(store, b, a) == Ordering::Less {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front;

    /// The cost of the first expression of a program `fn x real: ... e`.
    fn cost_of(src: &str) -> u64 {
        let mut s = Store::new();
        let t = front::load(&mut s, src).expect("test program parses");
        let mut body = t;
        while let Node::Lam(_, b) = s.node(body) {
            body = *b;
        }
        size(&s, body)
    }

    #[test]
    fn draws_are_dearer_than_arithmetic() {
        let weight = cost_of("fn x real: weight(exp(x) * 2, return x)");
        let draw = cost_of("fn x real:\ny <~ normal(x, 1)\nreturn y");
        assert!(draw > weight, "{draw} <= {weight}");
    }

    #[test]
    fn factored_is_cheaper_than_expanded() {
        let expanded = cost_of("fn x real: fn y real: x * y + x * 3 + x");
        let factored = cost_of("fn x real: fn y real: x * (y + 4)");
        assert!(factored < expanded, "{factored} >= {expanded}");
    }

    #[test]
    fn shared_subterms_are_paid_each_time() {
        let once = cost_of("fn x real: exp(x)");
        let twice = cost_of("fn x real: exp(x) + exp(x) * 2");
        assert!(twice > 2 * once);
    }

    #[test]
    fn ties_break_by_structure_and_are_total() {
        let mut s = Store::new();
        let a = front::load(&mut s, "fn x real: fn y real: x + 1").expect("parses");
        let b = front::load(&mut s, "fn x real: fn y real: y + 1").expect("parses");
        assert_ne!(compare(&s, a, b), Ordering::Equal);
        assert_eq!(compare(&s, a, b), compare(&s, b, a).reverse());
        assert_eq!(compare(&s, a, a), Ordering::Equal);
    }

    #[test]
    fn deep_terms_are_sized_without_recursion() {
        let mut s = Store::new();
        let x = s.fresh_var("x", crate::types::Type::Real);
        let mut t = s.var_term(x);
        for _ in 0..200_000 {
            t = s.prim(Prim::Neg, vec![t], crate::types::Type::Real);
        }
        assert_eq!(size(&s, t), 200_001);
    }
}
