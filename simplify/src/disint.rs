//! Disintegration (issue 15; Shan and Ramsey, POPL 2017, "Exact Bayesian inference by
//! symbolic disintegration"): for `m : measure(pair(a, b))` the kernel
//! `k : a -> measure(b)` with `m = (t <~ base(a); y <~ k(t); return (t, y))`, where
//! `base` is lebesgue on reals (on `[0, ∞)` for probs), counting on integers, naturals
//! and booleans, and the product of these on pairs; and the density of a measure with
//! respect to that base (`density(m)`, the mass of the kernel of `x <~ m; return (x, ())`).
//!
//! The paper's lazy partial evaluation ends in the same place as the simplifier's first
//! step: `integrate` ([`crate::integrate`]) writes `m` as a sum of terms
//! `∫ binds [guards] Π factors · h(result)` with every `let` and bound result substituted,
//! so the observation is an expression over the draws (the paper's `evaluate` done
//! once). Each term is then *constrained* (the paper's `constrain`): a result that is a
//! pair `(o, r)` is split, and `o = t` is imposed on the term.
//! - `o` integral (nat, int, bool): a guard `o == t`; the base is counting, so the
//!   kernel at `t` is the term restricted to the draws that give `t`. Exact by
//!   definition of counting measure.
//! - `o` real or prob: one continuous draw `x` of the term is eliminated (the latest that
//!   the rest of the result does not read, else the latest), where `o` is invertible in
//!   `x` ([`solve`]): `x = g(t)`, its density (the primitive opened into lebesgue and a
//!   factor) and its range become factors and guards at `g(t)`, times the Jacobian
//!   `|dg/dt|`. Exact by the change of variables `x ↦ o` for the other draws fixed
//!   (Fubini: `x`'s integral is moved innermost first, opening the later draws whose
//!   measure depends on `x` into lebesgue and their densities when that is needed).
//! - `o` a pair: its components are constrained in turn (the base is the product, and
//!   each step is exact given the previous ones).
//! - `o` an array drawn by a plate (a plate of observations): the base of arrays is
//!   counting on the size times the element's base on each element, so the plate's
//!   draw is eliminated at `o = t` with the guard `size(t) == n` and the product of its
//!   elements' densities at `t[i]` (Constrainer::array).
//!
//! When no draw can be eliminated (an observation that does not depend on any
//! continuous draw has no density with respect to lebesgue; `x * x - x` is not
//! one-to-one) the whole disintegration fails with a message naming the observation: it
//! never returns a wrong kernel. The kernel is not simplified; `simplify(disint(m))`
//! simplifies it with the rest of the simplifier.

mod build;
mod solve;

use rustc_hash::FxHashMap;

use slic_algebra::assume::Context;
use slic_algebra::vars;
use slic_algebra::{canon, print, Dist, Node, Pattern, Prim, Store, TermId, Type, VarId};

use crate::density::Densities;
use crate::integrate::Integrator;
use crate::lin::{Base, Factor, LTerm, Lin};
use crate::{prepare, terms};

/// Why a disintegration or a density could not be found, in the user's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DisintError {
    pub message: String,
}

impl DisintError {
    fn new(message: impl Into<String>) -> DisintError {
        DisintError {
            message: message.into(),
        }
    }
}

type R<T> = Result<T, DisintError>;

/// The kernel of `m : measure(pair(a, b))`: a term `fn t a: ...` of type `a -> measure(b)`
/// (see the module doc). Variables free in `m` stay free.
pub fn disint(store: &mut Store, m: TermId) -> R<TermId> {
    let Some(Type::Pair(a, b)) = store.ty(m).measure_of().cloned() else {
        return Err(DisintError::new(format!(
            "disint needs a measure of pairs (observation, rest), found {}",
            store.ty(m)
        )));
    };
    let (a, b) = ((*a).clone(), (*b).clone());
    let dens = Densities::new(store);
    let lin = linear(store, &dens, m)?;
    let observed = lin.first().and_then(|t| match store.node(t.result) {
        Node::Pair(o, _) => Some(*o),
        _ => None,
    });
    let hint = observed
        .and_then(|o| var_name(store, o))
        .unwrap_or_else(|| "t".to_string());
    let (param, pattern, leaves) = parameter(store, &a, &hint, observed);
    let mty = Type::measure(b);
    let mut parts = Vec::new();
    for term in lin {
        let t = constrain_term(store, &dens, term, &leaves)?;
        parts.push(build::measure(store, &t, &mty)?);
    }
    let body = build::superpose(store, parts, &mty);
    Ok(build::lambda(store, param, pattern, body, mty))
}

/// The density of `m : measure(a)` with respect to the base measure of `a`: a term
/// `fn t a: ...` of type `a -> prob` (the mass of the kernel of `x <~ m; return (x, ())`).
pub fn density(store: &mut Store, m: TermId) -> R<TermId> {
    let Some(a) = store.ty(m).measure_of().cloned() else {
        return Err(DisintError::new("density needs a measure"));
    };
    let dens = Densities::new(store);
    // a primitive's density is its row of the table, within its support (a sum over a
    // discrete draw's infinitely many values need not be written for it)
    if let Node::Dist(d, _) = *store.node(m) {
        if !matches!(
            d,
            slic_algebra::Dist::Lebesgue | slic_algebra::Dist::Counting
        ) {
            let v = store.fresh_var("t", a.clone());
            let vt = store.var_term(v);
            if let Some((Some(f), guards)) = dens.observe(store, m, vt) {
                let zero = terms::int(store, 0, &Type::Prob);
                let body = guards.into_iter().rev().fold(f, |body, g| {
                    store.intern(Node::If(g, body, zero), Type::Prob)
                });
                return Ok(store.intern(Node::Lam(v, body), Type::fun(a, Type::Prob)));
            }
        }
    }
    let lin = linear(store, &dens, m)?;
    let observed = lin.first().map(|t| t.result);
    let hint = observed
        .and_then(|o| var_name(store, o))
        .unwrap_or_else(|| "t".to_string());
    let (param, pattern, leaves) = parameter(store, &a, &hint, observed);
    let mut parts = Vec::new();
    for mut term in lin {
        // the whole outcome is the observation; the rest is ()
        let unit = store.intern(Node::Unit, Type::Unit);
        term.result = store.intern(
            Node::Pair(term.result, unit),
            Type::pair(a.clone(), Type::Unit),
        );
        let t = constrain_term(store, &dens, term, &leaves)?;
        parts.push(build::mass(store, &dens, &t)?);
    }
    let body = match parts.len() {
        0 => terms::int(store, 0, &Type::Prob),
        1 => parts[0],
        _ => store.prim(Prim::Add, parts, Type::Prob),
    };
    Ok(build::lambda(store, param, pattern, body, Type::Prob))
}

/// `observe(m, v)` for any measure `m` with a density `f`: `weight(f(v), return v)`,
/// written `_ <~ k(v); return v` for `k` the kernel of `x <~ m; return (x, ())` (its mass
/// at `v` is `f(v)`), so that the simplifier can integrate the kernel's draws out as it
/// does any other draws, and no sum or integral need be written.
pub fn observe(store: &mut Store, m: TermId, v: TermId) -> R<TermId> {
    let Some(a) = store.ty(m).measure_of().cloned() else {
        return Err(DisintError::new("observe needs a measure"));
    };
    let pair_ty = Type::pair(a.clone(), Type::Unit);
    let x = store.fresh_var("x", a.clone());
    let xt = store.var_term(x);
    let unit = store.intern(Node::Unit, Type::Unit);
    let p = store.intern(Node::Pair(xt, unit), pair_ty.clone());
    let ret = store.intern(Node::Dirac(p), Type::measure(pair_ty.clone()));
    let joint = store.intern(Node::Bind(x, m, ret), Type::measure(pair_ty));
    let k = disint(store, joint)?;
    let kv = store.intern(Node::App(k, v), Type::measure(Type::Unit));
    let u = store.fresh_var("u", Type::Unit);
    let back = store.intern(Node::Dirac(v), Type::measure(a.clone()));
    Ok(store.intern(Node::Bind(u, kv, back), Type::measure(a)))
}

/// `m` inlined and read into the linear normal form.
fn linear(store: &mut Store, dens: &Densities, m: TermId) -> R<Lin> {
    let prepared = prepare::Prepare::new(store)
        .run(m)
        .map_err(|_| DisintError::new("the measure is too large to disintegrate"))?;
    Integrator::new(store, dens)
        .run(prepared)
        .map_err(|stop| DisintError::new(format!("{stop}")))
}

/// The name of the variable `t` is, if it is one (the kernel's parameter is named after
/// the draw it observes).
fn var_name(store: &Store, t: TermId) -> Option<String> {
    match store.node(t) {
        Node::Var(v) => Some(store.var_name(*v).to_string()),
        _ => None,
    }
}

/// The kernel's parameter of type `a`: a variable, and for a pair a pattern naming its
/// components; `leaves` pairs each component's path with its variable's term.
fn parameter(
    store: &mut Store,
    a: &Type,
    hint: &str,
    observed: Option<TermId>,
) -> (VarId, Option<Pattern>, Leaves) {
    let p = store.fresh_var(hint, a.clone());
    if !matches!(a, Type::Pair(..)) {
        let pt = store.var_term(p);
        return (p, None, Leaves::Leaf(pt));
    }
    let (pattern, leaves) = split_pattern(store, a, hint, observed);
    (p, Some(pattern), leaves)
}

/// The observed value, taken apart as the observation's pairs are.
#[derive(Clone, Debug)]
enum Leaves {
    Leaf(TermId),
    Pair(Box<Leaves>, Box<Leaves>),
}

fn split_pattern(
    store: &mut Store,
    a: &Type,
    hint: &str,
    observed: Option<TermId>,
) -> (Pattern, Leaves) {
    let hint = observed
        .and_then(|o| var_name(store, o))
        .unwrap_or_else(|| hint.to_string());
    let (o1, o2) = match observed.map(|o| store.node(o).clone()) {
        Some(Node::Pair(o1, o2)) => (Some(o1), Some(o2)),
        _ => (None, None),
    };
    match a {
        Type::Pair(x, y) => {
            let (px, lx) = split_pattern(store, x, &format!("{hint}1"), o1);
            let (py, ly) = split_pattern(store, y, &format!("{hint}2"), o2);
            (
                Pattern::Pair(Box::new(px), Box::new(py)),
                Leaves::Pair(Box::new(lx), Box::new(ly)),
            )
        }
        _ => {
            let v = store.fresh_var(&hint, a.clone());
            let vt = store.var_term(v);
            (Pattern::Var(v), Leaves::Leaf(vt))
        }
    }
}

/// One term of the sum with its observation constrained to `leaves`, its result the
/// rest of the pair.
fn constrain_term(store: &mut Store, dens: &Densities, term: LTerm, leaves: &Leaves) -> R<LTerm> {
    let result = prepare::reduce(store, term.result);
    let Node::Pair(o, rest) = *store.node(result) else {
        return Err(DisintError::new(format!(
            "cannot see the observation: the measure returns `{}`, not a pair \
             (observation, rest)",
            shown(store, result)
        )));
    };
    let mut obs = Vec::new();
    let mut sizes = Vec::new();
    flatten(store, o, leaves, &mut obs, &mut sizes)?;
    let mut c = Constrainer {
        store,
        dens,
        term,
        pending: obs.iter().map(|p| p.0).collect(),
        sizes,
    };
    c.term.result = rest;
    for (k, &(_, y)) in obs.iter().enumerate() {
        let o = c.pending[k];
        c.constrain(o, y, k)?;
    }
    // the sizes first: the other guards may read the observed arrays' elements
    let sizes = std::mem::take(&mut c.sizes);
    c.term.guards.retain(|g| !sizes.contains(g));
    c.term.guards.splice(0..0, sizes);
    Ok(c.term)
}

/// The observation's components matched with the parameter's. An array of known length
/// (a plate of a constant size, which the integrator unrolls into `[x0, x1, x2]`) is
/// taken apart too, as a tuple: its elements are matched with `y[0]`, `y[1]`, .. and
/// `size(y) == 3` is pushed onto `sizes` (the base of arrays counts their sizes).
fn flatten(
    store: &mut Store,
    o: TermId,
    leaves: &Leaves,
    out: &mut Vec<(TermId, TermId)>,
    sizes: &mut Vec<TermId>,
) -> R<()> {
    match leaves {
        Leaves::Leaf(y) => {
            let r = prepare::reduce(store, o);
            if let (Node::ArrayLit(elems), Some(ety)) =
                (store.node(r).clone(), store.ty(r).array_of().cloned())
            {
                let n = terms::int(store, elems.len() as i64, &Type::Nat);
                let size = store.prim(Prim::Size, vec![*y], Type::Nat);
                sizes.push(terms::compare(store, Prim::Eq, size, n));
                for (k, e) in elems.into_iter().enumerate() {
                    let kt = terms::int(store, k as i64, &Type::Nat);
                    let at = store.intern(Node::Index(*y, kt), ety.clone());
                    flatten(store, e, &Leaves::Leaf(at), out, sizes)?;
                }
                return Ok(());
            }
            out.push((o, *y));
            Ok(())
        }
        Leaves::Pair(l1, l2) => {
            let o = prepare::reduce(store, o);
            let Node::Pair(o1, o2) = *store.node(o) else {
                return Err(DisintError::new(format!(
                    "cannot take the observation `{}` apart into its components",
                    shown(store, o)
                )));
            };
            flatten(store, o1, l1, out, sizes)?;
            flatten(store, o2, l2, out, sizes)
        }
    }
}

/// The text of a term for a message (one line).
fn shown(store: &Store, t: TermId) -> String {
    let text = print::print_term(store, t);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Is the primitive `d` continuous (a density with respect to lebesgue)?
fn continuous_dist(d: Dist) -> bool {
    matches!(
        d,
        Dist::Lebesgue | Dist::Uniform | Dist::Normal | Dist::Gamma | Dist::Beta
    )
}

/// Constraining the observations of one term.
struct Constrainer<'a, 's> {
    store: &'s mut Store,
    dens: &'a Densities,
    term: LTerm,
    /// The observations not yet constrained (index `k` onwards), kept substituted.
    pending: Vec<TermId>,
    /// The conditions on the observed arrays' sizes, which go before every other guard.
    sizes: Vec<TermId>,
}

impl Constrainer<'_, '_> {
    /// Impose `o == y` (the `k`-th observation) on the term.
    fn constrain(&mut self, o: TermId, y: TermId, k: usize) -> R<()> {
        let ty = self.store.ty(o).clone();
        match ty {
            Type::Nat | Type::Int | Type::Bool => {
                let g = if ty == Type::Bool {
                    self.store.prim(Prim::Iff, vec![o, y], Type::Bool)
                } else {
                    terms::compare(self.store, Prim::Eq, o, y)
                };
                self.term.guards.push(g);
                Ok(())
            }
            Type::Real | Type::Prob => self.continuous(o, y, k),
            Type::Array(_) => self.array(o, y),
            _ => Err(DisintError::new(format!(
                "the observation `{}` is of type {ty}, which has no base measure to \
                 disintegrate against (reals, probs, integers, naturals, booleans, \
                 arrays and pairs of them have)",
                shown(self.store, o)
            ))),
        }
    }

    /// Impose `o == y` for an array observation: `o` is an array drawn by a plate
    /// (`xs <~ plate i of n: m(i)`, a bind over [`Base::Array`]), and the base of arrays
    /// is counting on the size times the element's base on each element (lebesgue on
    /// reals, counting on integers), so the draw is eliminated at `xs = y` with the guard
    /// `size(y) == n` and the factor `product i from 0 to n: f_i(y[i])`, `f_i` the
    /// density of `m(i)` (its bounds as indicators). Exact: the plate's elements are
    /// independent, so its density at `y` is the product of theirs; no change of
    /// variables, so no Jacobian.
    fn array(&mut self, o: TermId, y: TermId) -> R<()> {
        let o = prepare::reduce(self.store, o);
        let refuse = |store: &Store, why: &str| {
            Err(DisintError::new(format!(
                "cannot constrain the observation `{}`: {why}",
                shown(store, o)
            )))
        };
        let v = match *self.store.node(o) {
            Node::Var(v) => Some(v),
            // `array j of n: xs[j]` is `xs`
            Node::Array(j, _, body) => match *self.store.node(body) {
                Node::Index(a, k) if *self.store.node(k) == Node::Var(j) => {
                    match *self.store.node(a) {
                        Node::Var(v) => Some(v),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        let Some(v) = v else {
            if let Node::Array(j, n, body) = *self.store.node(o) {
                let ety = self.store.ty(body).clone();
                if matches!(ety, Type::Nat | Type::Int | Type::Bool) {
                    return self.discrete_array(j, n, body, y);
                }
            }
            return refuse(
                self.store,
                "an array of reals observed must be the draw of a plate (`xs <~ plate i of \
                 n: m`), not an expression over one",
            );
        };
        let Some(i) = self.term.binds.iter().position(|b| b.var == v) else {
            return refuse(self.store, "it is not drawn by the measure");
        };
        let Base::Array { index, size, elem } = self.term.binds[i].base.clone() else {
            return refuse(self.store, "it is not drawn by a plate");
        };
        let Some(ety) = self.store.var_type(v).array_of().cloned() else {
            return refuse(self.store, "it is not an array");
        };
        let x = self.store.fresh_var("x", ety.clone());
        let (base, density) = match *elem {
            Base::Prim(d) => match self.dens.open(self.store, d, x) {
                Some(opened) => opened,
                None => return refuse(self.store, "its elements' measure has no known density"),
            },
            b @ (Base::Lebesgue { .. } | Base::Counting { .. }) => (b, None),
            _ => {
                return refuse(
                    self.store,
                    "its elements are not draws from a primitive measure (arrays of arrays \
                     and plates of compound measures are not disintegrated)",
                )
            }
        };
        let xt = self.store.var_term(x);
        let mut parts: Vec<TermId> = density.into_iter().collect();
        let (lo, hi, strict) = match base {
            Base::Lebesgue { lo, hi } => (lo, hi, true),
            Base::Counting { lo, hi } => (lo, hi, false),
            _ => return refuse(self.store, "its elements' base is not lebesgue or counting"),
        };
        if let Some(lo) = lo {
            let op = if strict { Prim::Lt } else { Prim::Le };
            let g = terms::compare(self.store, op, lo, xt);
            parts.push(terms::indicator(self.store, g));
        }
        if let Some(hi) = hi {
            let g = terms::compare(self.store, Prim::Lt, xt, hi);
            parts.push(terms::indicator(self.store, g));
        }
        let f = terms::product(self.store, parts);
        let it = self.store.var_term(index);
        let at = self.store.intern(Node::Index(y, it), ety);
        let f = vars::substitute1(self.store, f, x, at);
        let factor = self.elementwise(index, size, f, y);
        let mut term = self.term.clone();
        term.binds.remove(i);
        term.factors.push(factor);
        let mut map = FxHashMap::default();
        map.insert(v, y);
        term.substitute(self.store, &map);
        for t in &mut self.pending {
            *t = vars::substitute(self.store, *t, &map);
        }
        self.term = term;
        Ok(())
    }

    /// Impose `(array j of n: e) == y` for integral or boolean elements: the base of such
    /// arrays is counting, so the kernel at `y` is the term restricted to the draws that
    /// give `y`: the guard `size(y) == n` and the factor `product j from 0 to n: [e ==
    /// y[j]]` (`bernoulli` draws in a plate, observed through `k == 1`).
    fn discrete_array(&mut self, j: VarId, n: TermId, e: TermId, y: TermId) -> R<()> {
        let ety = self.store.ty(e).clone();
        let jt = self.store.var_term(j);
        let at = self.store.intern(Node::Index(y, jt), ety.clone());
        let same = if ety == Type::Bool {
            self.store.prim(Prim::Iff, vec![e, at], Type::Bool)
        } else {
            terms::compare(self.store, Prim::Eq, e, at)
        };
        let body = terms::indicator(self.store, same);
        let factor = self.elementwise(j, n, body, y);
        self.term.factors.push(factor);
        Ok(())
    }

    /// The factor `product j from 0 to n: body` of an observed array `y` of `n` elements
    /// (`body` reading `y[j]`), with the guard `size(y) == n` kept among the size guards.
    fn elementwise(&mut self, j: VarId, n: TermId, body: TermId, y: TermId) -> Factor {
        let zero = terms::int(self.store, 0, &Type::Nat);
        let factor = self
            .store
            .intern(Node::Product(j, zero, n, body), Type::Prob);
        let ysize = self.store.prim(Prim::Size, vec![y], Type::Nat);
        let sized = terms::compare(self.store, Prim::Eq, ysize, n);
        self.sizes.push(sized);
        Factor::other(factor)
    }

    /// The continuous draws of the term (lebesgue, or a continuous primitive).
    fn continuous_vars(&self) -> Vec<VarId> {
        self.term
            .binds
            .iter()
            .filter(|b| match &b.base {
                Base::Lebesgue { .. } => true,
                Base::Prim(d) => {
                    matches!(self.store.node(*d), Node::Dist(d, _) if continuous_dist(*d))
                }
                _ => false,
            })
            .map(|b| b.var)
            .collect()
    }

    fn continuous(&mut self, o: TermId, y: TermId, k: usize) -> R<()> {
        let w = terms::coerce(self.store, y, &Type::Real);
        let cont = self.continuous_vars();
        let mentioned: Vec<VarId> = cont
            .iter()
            .copied()
            .filter(|&v| vars::mentions(self.store, o, v))
            .collect();
        // the latest draws first, those the rest of the result and the later
        // observations do not read before those they do (eliminating them leaves the
        // result as written)
        let mut order: Vec<VarId> = mentioned.iter().rev().copied().collect();
        let later: Vec<TermId> = self.pending[k + 1..].to_vec();
        let read_later = |store: &Store, v: VarId, result: TermId| {
            vars::mentions(store, result, v) || later.iter().any(|&t| vars::mentions(store, t, v))
        };
        let result = self.term.result;
        order.sort_by_key(|&v| read_later(self.store, v, result));
        let canonical = canon::canonicalize(self.store, &Context::new(), o);
        let mut forms = vec![o];
        if canonical != o {
            forms.push(canonical);
        }
        for &form in &forms {
            for &x in &order {
                let nonzero = |store: &mut Store, c: TermId| {
                    solve::nonzero_almost_everywhere(store, c, &cont)
                };
                let Some(sol) = solve::solve(self.store, form, x, w, &nonzero) else {
                    continue;
                };
                if self.eliminate(x, sol)? {
                    return Ok(());
                }
            }
        }
        let why = if mentioned.is_empty() {
            "it does not depend on any continuous draw, so its law has no density with \
             respect to lebesgue measure"
        } else {
            "it is not an invertible function of any one continuous draw it reads"
        };
        Err(DisintError::new(format!(
            "cannot constrain the observation `{}`: {why}",
            shown(self.store, o)
        )))
    }

    /// Eliminate the draw `x` at `x = sol.value`; `false` (the term unchanged) when a
    /// later draw's measure depends on `x` in a way that cannot be opened.
    fn eliminate(&mut self, x: VarId, sol: solve::Solution) -> R<bool> {
        let Some(i) = self.term.binds.iter().position(|b| b.var == x) else {
            return Ok(false);
        };
        let mut term = self.term.clone();
        // the value must not read a draw whose measure depends on x: such draws are
        // opened into lebesgue or counting and their density (Fubini then moves x's
        // integral innermost)
        let later_read: Vec<VarId> = term.binds[i + 1..]
            .iter()
            .map(|b| b.var)
            .filter(|&v| vars::mentions(self.store, sol.value, v))
            .collect();
        if !later_read.is_empty() {
            for j in i + 1..term.binds.len() {
                if !term.binds[j]
                    .base
                    .terms()
                    .iter()
                    .any(|&t| vars::mentions(self.store, t, x))
                {
                    continue;
                }
                if !self.detach(&mut term, j, x) {
                    return Ok(false);
                }
            }
        }
        let bind = term.binds.remove(i);
        let (base, density) = match &bind.base {
            Base::Prim(d) => match self.dens.open(self.store, *d, x) {
                Some(opened) => opened,
                None => return Ok(false),
            },
            b @ Base::Lebesgue { .. } => (b.clone(), None),
            _ => return Ok(false),
        };
        let Base::Lebesgue { lo, hi } = base else {
            return Ok(false);
        };
        let xt = self.store.var_term(x);
        let mut guards = sol.guards;
        if let Some(lo) = lo {
            guards.push(terms::compare(self.store, Prim::Lt, lo, xt));
        }
        if let Some(hi) = hi {
            guards.push(terms::compare(self.store, Prim::Lt, xt, hi));
        }
        guards.append(&mut term.guards);
        term.guards = guards;
        term.factors.extend(density.map(Factor::other));
        term.factors
            .extend(sol.jacobian.iter().map(|&j| Factor::other(j)));
        let mut map = FxHashMap::default();
        map.insert(x, sol.value);
        term.substitute(self.store, &map);
        for t in &mut self.pending {
            *t = vars::substitute(self.store, *t, &map);
        }
        self.term = term;
        Ok(true)
    }

    /// Open the `j`-th draw of `term` (whose measure mentions `x`) into a base free of
    /// `x`: its density a factor, its bounds guards. `false` when it cannot be.
    fn detach(&mut self, term: &mut LTerm, j: usize, x: VarId) -> bool {
        let v = term.binds[j].var;
        let (base, f) = match term.binds[j].base.clone() {
            Base::Prim(d) => match self.dens.open(self.store, d, v) {
                Some(o) => o,
                None => return false,
            },
            b @ (Base::Lebesgue { .. } | Base::Counting { .. }) => (b, None),
            _ => return false,
        };
        let vt = self.store.var_term(v);
        let nat = *self.store.var_type(v) == Type::Nat;
        let mentions =
            |store: &Store, t: &Option<TermId>| t.is_some_and(|t| vars::mentions(store, t, x));
        let new = match base {
            Base::Lebesgue { lo, hi } => {
                let (mut lo2, mut hi2) = (lo, hi);
                if mentions(self.store, &lo) {
                    let l = lo.unwrap_or(vt);
                    term.guards
                        .push(terms::compare(self.store, Prim::Lt, l, vt));
                    lo2 = None;
                    if *self.store.var_type(v) == Type::Prob {
                        return false;
                    }
                }
                if mentions(self.store, &hi) {
                    let h = hi.unwrap_or(vt);
                    term.guards
                        .push(terms::compare(self.store, Prim::Lt, vt, h));
                    hi2 = None;
                }
                Base::Lebesgue { lo: lo2, hi: hi2 }
            }
            Base::Counting { lo, hi } => {
                let (mut lo2, mut hi2) = (lo, hi);
                if mentions(self.store, &lo) {
                    if nat {
                        return false;
                    }
                    let l = lo.unwrap_or(vt);
                    term.guards
                        .push(terms::compare(self.store, Prim::Le, l, vt));
                    lo2 = None;
                }
                if mentions(self.store, &hi) {
                    let h = hi.unwrap_or(vt);
                    term.guards
                        .push(terms::compare(self.store, Prim::Lt, vt, h));
                    hi2 = None;
                }
                Base::Counting { lo: lo2, hi: hi2 }
            }
            _ => return false,
        };
        term.binds[j].base = new;
        term.factors.extend(f.map(Factor::other));
        true
    }
}
