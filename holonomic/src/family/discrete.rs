//! The discrete rows of the distribution table: primitive terms and masses of poisson,
//! negative binomial and categorical (owned by the discrete-recognition work).

use super::Family;
use slic_algebra::{Store, TermId};

pub(super) fn dist_term(_family: &Family, _store: &mut Store) -> Option<TermId> {
    None
}

pub(super) fn density(_family: &Family, _store: &mut Store, u: TermId) -> TermId {
    u
}
