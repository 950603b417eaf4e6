//! Where a variable ranges: an open interval of the reals or a range of integers, either
//! end possibly unbounded. The simplifier builds a [`Support`] from a `lebesgue` or
//! `counting` binder and the indicator conditions on the variable; recognition only
//! accepts a family whose support is exactly this one (after an affine change of
//! variable), so `f` on `(0, 1)` is never read as a normal density.

use slic_algebra::TermId;

/// The support of a variable. Bounds are terms free of the variable; `None` is infinite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    /// The open interval `(lo, hi)` of the reals (`lo`, `hi`: real terms).
    Real {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
    /// The integers `lo <= k < hi` (`lo`, `hi`: int terms; `hi` exclusive, as in
    /// `summate`). `nat` is `Int { lo: Some(0), hi: None }`.
    Int {
        lo: Option<TermId>,
        hi: Option<TermId>,
    },
}

impl Support {
    /// The whole real line.
    pub const REALS: Support = Support::Real { lo: None, hi: None };
}
