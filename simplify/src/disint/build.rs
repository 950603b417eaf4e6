//! Writing constrained terms back: a term of the linear normal form as a measure (the
//! kernel's body), or as the number it integrates to (a density's value).
//!
//! Why it is exact: a term means `∫ binds [guards] Π factors · h(result)`; the measure
//! draws the binds in order, tests each guard right after the last draw it reads (so a
//! guard protects every later draw and every factor from values outside its range, such
//! as a `real2prob` of a negative number at an observation outside the support), then
//! weights by the factors and returns the result. The mass replaces `h` by 1 and every
//! bind by the integral or sum over its base (a primitive opened into its base and
//! density). Neither simplifies anything.

use slic_algebra::vars;
use slic_algebra::{Dist, Node, Pattern, Prim, Store, TermId, Type, VarId};

use super::{DisintError, R};
use crate::density::Densities;
use crate::lin::{Base, Bind, LTerm};
use crate::terms;

/// `fn p: body`, or `fn p: match p: (y1, y2): body` when the parameter is taken apart.
pub(super) fn lambda(
    store: &mut Store,
    param: VarId,
    pattern: Option<Pattern>,
    body: TermId,
    body_ty: Type,
) -> TermId {
    let pty = store.var_type(param).clone();
    let body = match pattern {
        None => body,
        Some(p) => {
            let pt = store.var_term(param);
            store.intern(Node::Match(pt, vec![(p, body)]), body_ty.clone())
        }
    };
    store.intern(Node::Lam(param, body), Type::fun(pty, body_ty))
}

/// The superposition of `parts` (`reject` when there are none).
pub(super) fn superpose(store: &mut Store, mut parts: Vec<TermId>, mty: &Type) -> TermId {
    match parts.len() {
        0 => store.intern(Node::Reject, mty.clone()),
        1 => parts.remove(0),
        _ => store.intern(Node::Superpose(parts), mty.clone()),
    }
}

/// The guards of `t` by where they are tested: index 0 before every draw, `i + 1` right
/// after the `i`-th (the last draw each reads), in their order in `t`.
fn placed_guards(store: &Store, t: &LTerm) -> Vec<Vec<TermId>> {
    let mut at = vec![Vec::new(); t.binds.len() + 1];
    for &g in &t.guards {
        let pos = t
            .binds
            .iter()
            .rposition(|b| vars::mentions(store, g, b.var))
            .map_or(0, |i| i + 1);
        at[pos].push(g);
    }
    at
}

/// The term as a measure of type `mty`.
pub(super) fn measure(store: &mut Store, t: &LTerm, mty: &Type) -> R<TermId> {
    let ret = store.intern(Node::Dirac(t.result), mty.clone());
    let mut body = if t.factors.is_empty() {
        ret
    } else {
        let w = terms::product(store, t.factors.iter().map(|f| f.term).collect());
        store.intern(Node::Weight(w, ret), mty.clone())
    };
    let at = placed_guards(store, t);
    for i in (0..t.binds.len()).rev() {
        body = guarded(store, &at[i + 1], body, mty);
        body = bind(store, &t.binds[i], body, mty)?;
    }
    Ok(guarded(store, &at[0], body, mty))
}

/// `if g1: if g2: .. body else: reject`.
fn guarded(store: &mut Store, gs: &[TermId], mut body: TermId, mty: &Type) -> TermId {
    for &g in gs.iter().rev() {
        let reject = store.intern(Node::Reject, mty.clone());
        body = store.intern(Node::If(g, body, reject), mty.clone());
    }
    body
}

/// `∞` and `-∞` as reals.
fn infinities(store: &mut Store) -> (TermId, TermId) {
    let inf = store.prim(Prim::Infinity, vec![], Type::Prob);
    let inf = terms::coerce(store, inf, &Type::Real);
    let neg = store.prim(Prim::Neg, vec![inf], Type::Real);
    (neg, inf)
}

/// `x <~ base; body`.
fn bind(store: &mut Store, b: &Bind, body: TermId, mty: &Type) -> R<TermId> {
    let x = b.var;
    let xty = store.var_type(x).clone();
    match &b.base {
        Base::Prim(m) | Base::Opaque(m) => Ok(store.intern(Node::Bind(x, *m, body), mty.clone())),
        Base::Lebesgue { lo, hi } => {
            let (ninf, inf) = infinities(store);
            let leb = store.intern(
                Node::Dist(Dist::Lebesgue, vec![lo.unwrap_or(ninf), hi.unwrap_or(inf)]),
                Type::measure(Type::Real),
            );
            if xty == Type::Real {
                return Ok(store.intern(Node::Bind(x, leb, body), mty.clone()));
            }
            // a prob drawn from lebesgue on a non-negative range
            let r = store.fresh_var(store.var_name(x).to_string().as_str(), Type::Real);
            let rt = store.var_term(r);
            let val = terms::coerce(store, rt, &xty);
            let body = store.intern(Node::Let(x, val, body), mty.clone());
            Ok(store.intern(Node::Bind(r, leb, body), mty.clone()))
        }
        Base::Counting { lo, hi } => {
            let cnt = store.intern(Node::Dist(Dist::Counting, vec![]), Type::measure(Type::Int));
            let (k, body) = if xty == Type::Int {
                (x, body)
            } else {
                let k = store.fresh_var(store.var_name(x).to_string().as_str(), Type::Int);
                let kt = store.var_term(k);
                let val = terms::coerce(store, kt, &xty);
                (k, store.intern(Node::Let(x, val, body), mty.clone()))
            };
            let kt = store.var_term(k);
            let mut conds = Vec::new();
            let lo = match lo {
                Some(l) => Some(*l),
                None if xty == Type::Nat => Some(terms::int(store, 0, &Type::Int)),
                None => None,
            };
            if let Some(lo) = lo {
                conds.push(terms::compare(store, Prim::Le, lo, kt));
            }
            if let Some(hi) = hi {
                conds.push(terms::compare(store, Prim::Lt, kt, *hi));
            }
            let body = guarded(store, &conds, body, mty);
            Ok(store.intern(Node::Bind(k, cnt, body), mty.clone()))
        }
        Base::Array { index, size, elem } => {
            let (Base::Prim(m) | Base::Opaque(m)) = elem.as_ref() else {
                return Err(DisintError::new(
                    "a plate whose elements were opened into lebesgue or counting cannot \
                     be written back",
                ));
            };
            let plate = store.intern(Node::Plate(*index, *size, *m), Type::measure(xty));
            Ok(store.intern(Node::Bind(x, plate, body), mty.clone()))
        }
    }
}

/// What the term integrates to with `h = 1`: its mass, as a prob term.
pub(crate) fn mass(store: &mut Store, dens: &Densities, t: &LTerm) -> R<TermId> {
    let mut body = terms::product(store, t.factors.iter().map(|f| f.term).collect());
    let at = placed_guards(store, t);
    for i in (0..t.binds.len()).rev() {
        body = indicated(store, &at[i + 1], body);
        body = integral(store, dens, &t.binds[i], body)?;
    }
    Ok(indicated(store, &at[0], body))
}

/// `if g1: if g2: .. body else: 0`.
fn indicated(store: &mut Store, gs: &[TermId], mut body: TermId) -> TermId {
    for &g in gs.iter().rev() {
        let zero = terms::int(store, 0, &Type::Prob);
        body = store.intern(Node::If(g, body, zero), Type::Prob);
    }
    body
}

/// `∫ base(dx) body`, as an `integrate` or a `summate`.
fn integral(store: &mut Store, dens: &Densities, b: &Bind, body: TermId) -> R<TermId> {
    let x = b.var;
    let name = store.var_name(x).to_string();
    let (base, body) = match &b.base {
        Base::Prim(d) => match dens.open(store, *d, x) {
            Some((base, f)) => {
                let body = match f {
                    Some(f) => store.prim(Prim::Mul, vec![f, body], Type::Prob),
                    None => body,
                };
                (base, body)
            }
            None => {
                return Err(DisintError::new(format!(
                    "the draw `{name}` has no density to integrate"
                )))
            }
        },
        other => (other.clone(), body),
    };
    let xty = store.var_type(x).clone();
    match base {
        Base::Lebesgue { lo, hi } => {
            let (ninf, inf) = infinities(store);
            let (lo, hi) = (lo.unwrap_or(ninf), hi.unwrap_or(inf));
            if xty == Type::Real {
                return Ok(store.intern(Node::Integrate(x, lo, hi, body), Type::Prob));
            }
            let r = store.fresh_var(&name, Type::Real);
            let rt = store.var_term(r);
            let val = terms::coerce(store, rt, &xty);
            let body = vars::substitute1(store, body, x, val);
            Ok(store.intern(Node::Integrate(r, lo, hi, body), Type::Prob))
        }
        Base::Counting {
            lo: Some(lo),
            hi: Some(hi),
        } if xty.is_integral() => {
            let lo = terms::coerce(store, lo, &xty);
            let hi = terms::coerce(store, hi, &xty);
            Ok(store.intern(Node::Summate(x, lo, hi, body), Type::Prob))
        }
        Base::Counting { .. } => Err(DisintError::new(format!(
            "the draw `{name}` ranges over infinitely many values, a sum slic-cas cannot \
             write"
        ))),
        _ => Err(DisintError::new(format!(
            "the draw `{name}` is not from a primitive measure, so its integral cannot be \
             written"
        ))),
    }
}
