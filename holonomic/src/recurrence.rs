//! The holonomic representation of a discrete factor: `f(k+1) / f(k)` as a rational
//! function of `k`, computed compositionally (products, quotients, `c^k`, factorials and
//! `gammaFunc` of linear arguments, `choose`, rational factors).

use slic_algebra::TermId;

/// `den(k) · f(k+1) = num(k) · f(k)`: terms polynomial in `k` with no common factor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence {
    pub num: TermId,
    pub den: TermId,
}
