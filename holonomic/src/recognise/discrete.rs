//! Recognition of discrete factors: recurrence, then the family whose recurrence has the
//! same ratio on the same support (or a finite range: categorical), then the weight.

use slic_algebra::assume::Context;
use slic_algebra::{Store, TermId, VarId};

use super::Miss;
use crate::family::Recognised;
use crate::support::Support;

pub(super) fn recognise(
    _store: &mut Store,
    _ctx: &Context,
    _f: TermId,
    _x: VarId,
    _support: &Support,
) -> Result<Recognised, Miss> {
    Err(Miss::NoFamily)
}
