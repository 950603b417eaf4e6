//! Inverting an observation in one continuous variable (Shan and Ramsey, POPL 2017,
//! section 5: `constrain` through the primitive operations): given a real or prob term
//! `o` that mentions `x` and a real term `w` (the observed value, as a real), the value
//! `x = g(w)` with `o[x := g(w)] = w`, the factors `|dg/dw|` of the change of variable
//! and the guards under which the inverse exists.
//!
//! Why it is exact: each rule is one of the paper's invertible operations, applied only
//! where the inverse is unique: a sum or product in which exactly one operand mentions
//! `x` (the others are constants of the inversion), a product's coefficient `c` only
//! when it is nonzero almost everywhere (then `|1/c|` is its Jacobian), `exp`/`log`/
//! `recip`/`sqrt`/negation with their inverses on their ranges (the range is a guard, so
//! a value outside it weighs 0, as it has density 0). Anything else (`x * x`, `x + x`
//! before canonicalisation, a function of `x` that is not one-to-one) is not inverted:
//! the caller reports the observation it could not constrain. Every Jacobian factor is
//! the derivative of the inverse at the value, so by the chain rule their product is
//! `|dx/dw|`.

use slic_algebra::assume::{Context, Tri};
use slic_algebra::vars;
use slic_algebra::{canon, cond, Coercion, Node, Prim, Store, TermId, Type, VarId};

use crate::terms;

/// `x = value` where the observation equals `w`, with the guards (in evaluation order:
/// each may be needed for the next, and for `value`) and the Jacobian factors (probs).
pub(crate) struct Solution {
    pub value: TermId,
    pub guards: Vec<TermId>,
    pub jacobian: Vec<TermId>,
}

/// The inversion of `o = w` in `x`, where `nonzero` says whether a coefficient (a real
/// term free of `x`) is nonzero almost everywhere under the term's integral.
pub(crate) fn solve(
    store: &mut Store,
    o: TermId,
    x: VarId,
    w: TermId,
    nonzero: &dyn Fn(&mut Store, TermId) -> bool,
) -> Option<Solution> {
    let mut sol = Solution {
        value: w,
        guards: Vec::new(),
        jacobian: Vec::new(),
    };
    let real = inner(store, o, x, w, nonzero, &mut sol)?;
    let xty = store.var_type(x).clone();
    sol.value = match xty {
        Type::Real => real,
        Type::Prob => {
            let zero = terms::int(store, 0, &Type::Real);
            sol.guards.push(terms::compare(store, Prim::Le, zero, real));
            terms::coerce(store, real, &Type::Prob)
        }
        _ => return None,
    };
    Some(sol)
}

/// The real value of `x` where `e` (as a real) is `w`; guards and Jacobians into `sol`.
fn inner(
    store: &mut Store,
    e: TermId,
    x: VarId,
    w: TermId,
    nonzero: &dyn Fn(&mut Store, TermId) -> bool,
    sol: &mut Solution,
) -> Option<TermId> {
    if matches!(store.node(e), Node::Var(v) if *v == x) {
        return Some(w);
    }
    let real = Type::Real;
    match store.node(e).clone() {
        // a prob read as a real, or a real read as a prob: the same number
        Node::Coerce(Coercion::Prob2Real | Coercion::Real2Prob, a) => {
            inner(store, a, x, w, nonzero, sol)
        }
        Node::Prim(Prim::Add, args) => {
            let (mine, others) = one_mentioning(store, &args, x)?;
            let others: Vec<TermId> = others
                .into_iter()
                .map(|t| terms::coerce(store, t, &real))
                .collect();
            let rest = sum(store, others);
            let neg = store.prim(Prim::Neg, vec![rest], real.clone());
            let w2 = store.prim(Prim::Add, vec![w, neg], real);
            inner(store, mine, x, w2, nonzero, sol)
        }
        Node::Prim(Prim::Neg, args) if args.len() == 1 => {
            let w2 = store.prim(Prim::Neg, vec![w], real);
            inner(store, args[0], x, w2, nonzero, sol)
        }
        Node::Prim(Prim::Mul, args) => {
            let (mine, others) = one_mentioning(store, &args, x)?;
            let others: Vec<TermId> = others
                .into_iter()
                .map(|t| terms::coerce(store, t, &real))
                .collect();
            let c = match others.len() {
                0 => return None,
                1 => others[0],
                _ => store.prim(Prim::Mul, others, real.clone()),
            };
            if !nonzero(store, c) {
                return None;
            }
            let rc = store.prim(Prim::Recip, vec![c], real.clone());
            let w2 = store.prim(Prim::Mul, vec![w, rc], real);
            sol.jacobian
                .push(store.prim(Prim::Abs, vec![rc], Type::Prob));
            inner(store, mine, x, w2, nonzero, sol)
        }
        Node::Prim(Prim::Recip, args) if args.len() == 1 => {
            // 1/a = w: a = 1/w for w /= 0 (w = 0 is a null set), |d(1/w)/dw| = 1/w²
            let zero = terms::int(store, 0, &real);
            sol.guards
                .push(store.prim(Prim::Ne, vec![w, zero], Type::Bool));
            let rw = store.prim(Prim::Recip, vec![w], real.clone());
            let sq = store.prim(Prim::Mul, vec![rw, rw], real);
            sol.jacobian
                .push(store.prim(Prim::Abs, vec![sq], Type::Prob));
            inner(store, args[0], x, rw, nonzero, sol)
        }
        Node::Prim(Prim::Exp, args) if args.len() == 1 => {
            // exp(a) = w: a = log(w) for w > 0, |d log(w)/dw| = 1/w
            let zero = terms::int(store, 0, &real);
            sol.guards.push(terms::compare(store, Prim::Lt, zero, w));
            let pw = terms::coerce(store, w, &Type::Prob);
            let a = store.prim(Prim::Log, vec![pw], real);
            sol.jacobian
                .push(store.prim(Prim::Recip, vec![pw], Type::Prob));
            inner(store, args[0], x, a, nonzero, sol)
        }
        Node::Prim(Prim::Log, args) if args.len() == 1 => {
            // log(a) = w: a = exp(w), |d exp(w)/dw| = exp(w)
            let ew = store.prim(Prim::Exp, vec![w], Type::Prob);
            sol.jacobian.push(ew);
            let a = terms::coerce(store, ew, &real);
            inner(store, args[0], x, a, nonzero, sol)
        }
        Node::Prim(Prim::Sqrt, args) if args.len() == 1 && *store.ty(e) == Type::Prob => {
            // sqrt(a) = w: a = w² for w >= 0, |d w²/dw| = 2w
            let zero = terms::int(store, 0, &real);
            sol.guards.push(terms::compare(store, Prim::Le, zero, w));
            let sq = store.prim(Prim::Mul, vec![w, w], real.clone());
            let pw = terms::coerce(store, w, &Type::Prob);
            let two = terms::int(store, 2, &Type::Prob);
            sol.jacobian
                .push(store.prim(Prim::Mul, vec![two, pw], Type::Prob));
            inner(store, args[0], x, sq, nonzero, sol)
        }
        _ => None,
    }
}

/// The one operand of `args` that mentions `x`, and the others; `None` unless exactly one
/// does.
fn one_mentioning(store: &Store, args: &[TermId], x: VarId) -> Option<(TermId, Vec<TermId>)> {
    let (mine, others): (Vec<TermId>, Vec<TermId>) =
        args.iter().partition(|&&a| vars::mentions(store, a, x));
    match mine.as_slice() {
        [one] => Some((*one, others)),
        _ => None,
    }
}

/// The real sum of `ts` (0 when empty).
fn sum(store: &mut Store, mut ts: Vec<TermId>) -> TermId {
    match ts.len() {
        0 => terms::int(store, 0, &Type::Real),
        1 => ts.remove(0),
        _ => store.prim(Prim::Add, ts, Type::Real),
    }
}

/// Is the real term `c` nonzero except on a null set of the continuous variables
/// `continuous`? A nonzero literal; a condition `c /= 0` that `cond::decide` proves; or a
/// polynomial (sums, products, negations, literals, natural powers) over continuous
/// variables only that is not identically zero (its zero set has Lebesgue measure 0).
/// Parameters and discrete variables make it unknown (they may make `c` zero with
/// positive probability), so the answer is no.
pub(crate) fn nonzero_almost_everywhere(
    store: &mut Store,
    c: TermId,
    continuous: &[VarId],
) -> bool {
    let cc = canon::canonicalize(store, &Context::new(), c);
    if let Some(v) = terms::lit_value(store, cc) {
        return !v.is_zero();
    }
    let zero = terms::int(store, 0, &Type::Real);
    let ne = terms::compare(store, Prim::Ne, cc, zero);
    if cond::decide(store, &Context::new(), ne) == Tri::True {
        return true;
    }
    polynomial_over(store, cc, continuous)
        && vars::free_vars(store, cc)
            .iter()
            .all(|v| continuous.contains(v))
}

/// Is `t` built from literals, the variables `vs`, `+`, `*`, negation, safe coercions and
/// natural powers by literals only?
fn polynomial_over(store: &Store, t: TermId, vs: &[VarId]) -> bool {
    match store.node(t) {
        Node::Lit(_) => true,
        Node::Var(v) => vs.contains(v),
        Node::Coerce(c, a) => c.is_safe() && polynomial_over(store, *a, vs),
        Node::Prim(Prim::Add | Prim::Mul | Prim::Neg, args) => {
            args.iter().all(|&a| polynomial_over(store, a, vs))
        }
        Node::Prim(Prim::Pow, args) => {
            args.len() == 2
                && polynomial_over(store, args[0], vs)
                && matches!(store.node(args[1]), Node::Lit(_))
        }
        _ => false,
    }
}
