//! Solving an index equation for one variable: `i == j - 1` for j is `j = i + 1`.
//!
//! Sums with Kronecker deltas (`Σ_j [j == e] f(j)` is `f(e)` when e is in j's range)
//! and nested index arithmetic need the solution of a linear equation in a bound integer
//! variable together with the condition under which it is one. This module only solves
//! equations that are linear in the variable ([`crate::cond::linear_form`]) with the
//! variable absent from every other atom; it never guesses (`i == y[j]` for j is `None`).

use crate::assume::Context;
use crate::cond::{self, Comparison, Linear, Rel};
use crate::num::Rational;
use crate::term::{Node, Store, TermId, VarId};
use crate::types::{Coercion, Type};
use crate::vars::mentions;

/// `var == value` is equivalent to the equation wherever `condition` holds, and the
/// equation is false wherever it does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Solution {
    /// A term of the variable's type, free of the variable.
    pub value: TermId,
    /// A canonical condition free of the variable (`false`: the equation has no solution).
    pub condition: TermId,
}

/// Solves `eq` (a numeric `a == b`) for `var`. The condition is the conjunction of:
/// - integrality, when the solution is not integer-valued by construction and `var` is
///   integral (`2*j == i` for j: the value is `real2int(nat2real(i) * 1/2)`, written V,
///   with the condition `2*V == i`);
/// - `0 <= value` when `var` is nat or prob;
/// - `lo <= value && value < hi` when `ctx` has a range `lo <= var < hi` for `var`;
///
/// made canonical under `ctx` without the facts that mention `var` (what is known outside
/// `var`'s binder; facts about `var` itself would otherwise leak into the condition).
/// `None` when `eq` is not a numeric equation, when it is not linear in `var` (`var`
/// occurs inside another atom, like `y[j]`), when `var` does not occur, or when every
/// value solves it (`j == j`).
pub fn solve_linear(store: &mut Store, ctx: &Context, eq: TermId, var: VarId) -> Option<Solution> {
    let cmp = match Comparison::of_term(store, eq)? {
        Ok(cmp) if cmp.rel == Rel::Eq => cmp,
        Ok(_) | Err(true) => return None,
        Err(false) => {
            let ty = store.var_type(var).clone();
            if !ty.is_numeric() {
                return None;
            }
            let value = store.intern(Node::Lit(Rational::zero()), ty);
            let condition = store.intern(Node::Bool(false), Type::Bool);
            return Some(Solution { value, condition });
        }
    };
    let ty = store.var_type(var).clone();
    if !ty.is_numeric() {
        return None;
    }
    let v = store.var_term(var);
    let c = cmp.lin.coeff(v);
    let r = c.recip()?;
    if cmp
        .lin
        .terms
        .iter()
        .any(|&(a, _)| a != v && mentions(store, a, var))
    {
        return None;
    }
    // lin = c*var + rest = 0, so var = -rest / c
    let rest = cmp.lin.add_scaled(store, &Linear::atom(v), &-c);
    let value_lin = rest.scale(&-r);
    let mut conds = Vec::new();
    let integer_valued = value_lin.is_integral(store) && value_lin.constant.is_integer();
    let value = if ty.is_integral() && !integer_valued {
        let real = value_lin.to_term(store, &Type::Real);
        let int = store.intern(Node::Coerce(Coercion::Real2Int, real), Type::Int);
        let same = Linear::atom(int).sub(store, &value_lin);
        conds.push(comparison_term(store, Rel::Eq, same));
        if ty == Type::Nat {
            store.intern(Node::Coerce(Coercion::Int2Nat, int), Type::Nat)
        } else {
            int
        }
    } else {
        value_lin.to_term(store, &ty)
    };
    if ty.is_nonnegative() {
        let below = value_lin.scale(&-Rational::one());
        conds.push(comparison_term(store, Rel::Le, below));
    }
    if let Some((lo, hi)) = ctx.range_of(var) {
        let llo = cond::linear_form(store, lo);
        let lhi = cond::linear_form(store, hi);
        let below = llo.sub(store, &value_lin);
        let above = value_lin.sub(store, &lhi);
        conds.push(comparison_term(store, Rel::Le, below));
        conds.push(comparison_term(store, Rel::Lt, above));
    }
    let outside = ctx.without_var(store, var);
    let condition = cond::and(store, &outside, conds);
    Some(Solution { value, condition })
}

/// The canonical term of `lin REL 0`.
fn comparison_term(store: &mut Store, rel: Rel, lin: Linear) -> TermId {
    match Comparison::new(store, rel, lin) {
        Ok(cmp) => cmp.to_term(store),
        Err(b) => store.intern(Node::Bool(b), Type::Bool),
    }
}

#[cfg(test)]
mod tests;
