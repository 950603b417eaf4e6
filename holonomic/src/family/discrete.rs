//! The discrete rows of the distribution table: the primitive terms of poisson and
//! categorical (the negative binomial has none; its masses, like every density, are in
//! `table.rs`). Nothing here decides a family; continuous rows are in `continuous.rs`.

use slic_algebra::{Dist, Node, Store, TermId, Type};

use super::Family;

pub(super) fn dist_term(family: &Family, store: &mut Store) -> Option<TermId> {
    let measure = Type::measure(Type::Nat);
    match family {
        Family::Poisson { rate } => {
            Some(store.intern(Node::Dist(Dist::Poisson, vec![*rate]), measure))
        }
        Family::Categorical { weights } => {
            Some(store.intern(Node::Dist(Dist::Categorical, vec![*weights]), measure))
        }
        // the language has no negative binomial primitive
        _ => None,
    }
}
