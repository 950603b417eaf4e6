//! The holonomic representation of a continuous factor: a linear ODE with polynomial
//! coefficients, computed compositionally (log-derivatives of products, quotients,
//! powers, `exp` of rational functions; sums of two such terms give order 2).

use slic_algebra::TermId;

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
