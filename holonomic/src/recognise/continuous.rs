//! Recognition of continuous factors: operator, then the family whose operator has the
//! same coefficient ratio on the same support, then the weight.

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
