//! Step 1 of the simplifier, `integrate(m, h)` (Fig. 4 of the arrays paper, scalar
//! cases): a measure term to a [`Lin`], by structural induction on the measure.
//!
//! `return e` is one term with result `e`; `weight(w, m)` adds a factor; `reject` is the
//! empty sum; `<|>` concatenates; `x <~ m; k` is the monadic bind of the two sums;
//! a primitive distribution is a bind over it (kept closed: `improve` opens it when it
//! needs the density); `if`/`match` become guards; `observe` of a primitive weights by
//! its density; a plate of small literal size is unrolled into binds, and a plate whose
//! body draws nothing (observations, weighted returns) is a `product` weight returning
//! an `array` (Fig. 4's accumulator for such bodies). Anything else that is a measure (a plate of unknown size, `chain`, a measure-valued parameter) is bound
//! opaquely and never eliminated.
//!
//! Let-bound values and bound results are substituted as the walk goes (the environment
//! maps each source variable to its term). Binds that would bind one variable twice in a
//! term (a definition used twice) are renamed.
//!
//! It must not simplify: it only changes representation, so its output rebuilt is the
//! input program up to the order of weights.

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use slic_algebra::vars;
use slic_algebra::{Dist, Node, Pattern, Store, TermId, Transform, Type, VarId};

use crate::density::Densities;
use crate::lin::{Base, Bind, Factor, LTerm, Lin};
use crate::{prepare, terms};

/// The most terms one sum may have (superpositions inside binds multiply).
pub(crate) const MAX_TERMS: usize = 4096;

/// The largest literal plate size unrolled into binds.
const PLATE_UNROLL: i64 = 8;

/// How deep measure nesting may go.
const MAX_DEPTH: usize = 200_000;

/// Why integration stopped (the simplifier then keeps the measure as it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The sum grew beyond [`MAX_TERMS`].
    TooManyTerms,
    /// The measure nests deeper than [`MAX_DEPTH`].
    TooDeep,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::TooManyTerms => write!(f, "the measure expands to more than {MAX_TERMS} terms"),
            Stop::TooDeep => write!(f, "the measure nests deeper than {MAX_DEPTH} levels"),
        }
    }
}

type Env = Rc<FxHashMap<VarId, TermId>>;

/// The walk of step 1.
pub(crate) struct Integrator<'a> {
    pub store: &'a mut Store,
    pub dens: &'a Densities,
    depth: usize,
}

impl<'a> Integrator<'a> {
    pub(crate) fn new(store: &'a mut Store, dens: &'a Densities) -> Integrator<'a> {
        Integrator {
            store,
            dens,
            depth: 0,
        }
    }

    /// The sum of the measure term `m` (variables free in `m` are parameters).
    pub(crate) fn run(&mut self, m: TermId) -> Result<Lin, Stop> {
        self.lin(m, &Env::default(), None)
    }

    fn apply(&mut self, t: TermId, env: &Env) -> TermId {
        vars::substitute(self.store, t, env)
    }

    /// `m` under `env`; `want` names the variable a single primitive draw should bind.
    fn lin(&mut self, m: TermId, env: &Env, want: Option<VarId>) -> Result<Lin, Stop> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(Stop::TooDeep);
        }
        let r = slic_algebra::stack::grow(|| self.lin_here(m, env, want));
        self.depth -= 1;
        let r = r?;
        if r.len() > MAX_TERMS {
            return Err(Stop::TooManyTerms);
        }
        Ok(r)
    }

    fn lin_here(&mut self, m: TermId, env: &Env, want: Option<VarId>) -> Result<Lin, Stop> {
        let node = self.store.node(m).clone();
        match node {
            Node::Dirac(e) => Ok(vec![LTerm::ret(self.apply(e, env))]),
            Node::Weight(w, inner) => {
                let w = self.apply(w, env);
                let mut l = self.lin(inner, env, want)?;
                for t in &mut l {
                    t.factors.insert(0, Factor::other(w));
                }
                Ok(l)
            }
            Node::Reject => Ok(Vec::new()),
            Node::Superpose(ms) => {
                let mut out = Vec::new();
                for mi in ms {
                    out.extend(self.lin(mi, env, None)?);
                    if out.len() > MAX_TERMS {
                        return Err(Stop::TooManyTerms);
                    }
                }
                Ok(out)
            }
            Node::Bind(x, first, rest) => {
                let firsts = self.lin(first, env, Some(x))?;
                let mut out = Vec::new();
                for t1 in firsts {
                    let mut env2 = env.clone();
                    if !matches!(self.store.node(t1.result), Node::Var(v) if *v == x) {
                        Rc::make_mut(&mut env2).insert(x, t1.result);
                    }
                    for t2 in self.lin(rest, &env2, want)? {
                        out.push(self.join(&t1, t2));
                        if out.len() > MAX_TERMS {
                            return Err(Stop::TooManyTerms);
                        }
                    }
                }
                Ok(out)
            }
            Node::Let(x, e, body) => {
                let e = self.apply(e, env);
                let mut env2 = env.clone();
                Rc::make_mut(&mut env2).insert(x, e);
                self.lin(body, &env2, want)
            }
            Node::Dist(d, _) => {
                let dist = self.apply(m, env);
                let v = self.draw_var(want, m);
                let base = match d {
                    Dist::Lebesgue | Dist::Counting => match self.dens.open(self.store, dist, v) {
                        Some((base, None)) => base,
                        _ => Base::Prim(dist),
                    },
                    _ => Base::Prim(dist),
                };
                Ok(vec![self.draw(v, base)])
            }
            Node::If(c, a, b) => {
                let c = self.apply(c, env);
                let c = prepare::reduce(self.store, c);
                match self.store.node(c) {
                    Node::Bool(true) => return self.lin(a, env, want),
                    Node::Bool(false) => return self.lin(b, env, want),
                    _ => {}
                }
                let not_c = terms::not(self.store, c);
                let mut out = self.lin(a, env, want)?;
                for t in &mut out {
                    t.guards.insert(0, c);
                }
                let mut other = self.lin(b, env, want)?;
                for t in &mut other {
                    t.guards.insert(0, not_c);
                }
                out.extend(other);
                Ok(out)
            }
            Node::Match(e, arms) => self.lin_match(m, e, &arms, env, want),
            Node::Observe(inner, v) => {
                let v = self.apply(v, env);
                self.observe(m, inner, v, env)
            }
            Node::Plate(i, n, body) => self.lin_plate(m, i, n, body, env, want),
            Node::Transform(Transform::Simplify, inner) => self.lin(inner, env, want),
            _ => Ok(vec![self.opaque(m, env, want)]),
        }
    }

    /// The variable a draw from `m` binds: `want` (the source's bind variable) or a new
    /// one.
    fn draw_var(&mut self, want: Option<VarId>, m: TermId) -> VarId {
        match want {
            Some(v) => v,
            None => {
                let ty = terms::measure_elem(self.store, m);
                let hint = if ty.is_integral() { "k" } else { "x" };
                self.store.fresh_var(hint, ty)
            }
        }
    }

    /// One term drawing `v` from `base` and returning it.
    fn draw(&mut self, v: VarId, base: Base) -> LTerm {
        let result = self.store.var_term(v);
        let mut t = LTerm::ret(result);
        t.binds.push(Bind { var: v, base });
        t
    }

    /// `m` (under `env`) bound opaquely.
    fn opaque(&mut self, m: TermId, env: &Env, want: Option<VarId>) -> LTerm {
        let m2 = self.apply(m, env);
        let v = self.draw_var(want, m);
        self.draw(v, Base::Opaque(m2))
    }

    /// `t1` then `t2`, renaming binds of `t2` that `t1` already binds.
    fn join(&mut self, t1: &LTerm, mut t2: LTerm) -> LTerm {
        let bound: FxHashSet<VarId> = t1.binds.iter().map(|b| b.var).collect();
        let clashes: Vec<VarId> = t2
            .binds
            .iter()
            .map(|b| b.var)
            .filter(|v| bound.contains(v))
            .collect();
        if !clashes.is_empty() {
            let mut map = FxHashMap::default();
            let mut renamed = FxHashMap::default();
            for v in clashes {
                let info = self.store.var(v).clone();
                let w = self.store.fresh_var(&info.name, info.ty);
                let wt = self.store.var_term(w);
                map.insert(v, wt);
                renamed.insert(v, w);
            }
            for b in &mut t2.binds {
                if let Some(&w) = renamed.get(&b.var) {
                    b.var = w;
                }
            }
            t2.substitute(self.store, &map);
            for f in &mut t2.factors {
                if let crate::lin::Origin::Prior { var, dist } = f.origin {
                    if let Some(&w) = renamed.get(&var) {
                        f.origin = crate::lin::Origin::Prior { var: w, dist };
                    }
                }
            }
        }
        t1.then(&t2)
    }

    fn lin_match(
        &mut self,
        m: TermId,
        e: TermId,
        arms: &[(Pattern, TermId)],
        env: &Env,
        want: Option<VarId>,
    ) -> Result<Lin, Stop> {
        let e = self.apply(e, env);
        let e = prepare::reduce(self.store, e);
        // a constructor picks its arm
        let mut undecided = false;
        for (p, body) in arms {
            match prepare::match_pattern(self.store, p, e) {
                Some(Some(bs)) if !undecided => {
                    let mut env2 = env.clone();
                    for (v, t) in bs {
                        Rc::make_mut(&mut env2).insert(v, t);
                    }
                    return self.lin(*body, &env2, want);
                }
                Some(None) => {}
                _ => {
                    undecided = true;
                    break;
                }
            }
        }
        if !undecided {
            // no arm matches: the interpreter reports an error; keep the term as it is
            return Ok(vec![self.opaque(m, env, want)]);
        }
        // a bool scrutinee: one guarded sum per arm
        if *self.store.ty(e) == Type::Bool {
            let mut out = Vec::new();
            let mut open = vec![true, false];
            for (p, body) in arms {
                let (values, var) = match p {
                    Pattern::Bool(b) => (vec![*b], None),
                    Pattern::Wild => (open.clone(), None),
                    Pattern::Var(v) => (open.clone(), Some(*v)),
                    _ => return Ok(vec![self.opaque(m, env, want)]),
                };
                let values: Vec<bool> = values.into_iter().filter(|b| open.contains(b)).collect();
                if values.is_empty() {
                    continue;
                }
                open.retain(|b| !values.contains(b));
                let mut env2 = env.clone();
                if let Some(v) = var {
                    Rc::make_mut(&mut env2).insert(v, e);
                }
                let guard = match values.as_slice() {
                    [true] => Some(e),
                    [false] => Some(terms::not(self.store, e)),
                    _ => None,
                };
                let mut l = self.lin(*body, &env2, want)?;
                if let Some(g) = guard {
                    for t in &mut l {
                        t.guards.insert(0, g);
                    }
                }
                out.extend(l);
            }
            return Ok(out);
        }
        Ok(vec![self.opaque(m, env, want)])
    }

    /// `observe(inner, v)` (`v` already under the environment).
    fn observe(&mut self, whole: TermId, inner: TermId, v: TermId, env: &Env) -> Result<Lin, Stop> {
        match self.store.node(inner).clone() {
            Node::Dist(..) => {
                let dist = self.apply(inner, env);
                match self.dens.observe(self.store, dist, v) {
                    Some((f, guards)) => {
                        let mut t = LTerm::ret(v);
                        t.factors.extend(f.map(Factor::other));
                        t.guards = guards;
                        Ok(vec![t])
                    }
                    None => Ok(vec![self.opaque(whole, env, None)]),
                }
            }
            Node::Weight(w, m) => {
                let w = self.apply(w, env);
                let mut l = self.observe(whole, m, v, env)?;
                for t in &mut l {
                    t.factors.insert(0, Factor::other(w));
                }
                Ok(l)
            }
            Node::Superpose(ms) => {
                let mut out = Vec::new();
                for mi in ms {
                    out.extend(self.observe(whole, mi, v, env)?);
                }
                Ok(out)
            }
            Node::Reject => Ok(Vec::new()),
            Node::Transform(_, m) => self.observe(whole, m, v, env),
            _ => Ok(vec![self.opaque(whole, env, None)]),
        }
    }

    /// `plate i of n: m` whose body draws nothing (weighted returns, observations) is
    /// `weight(product i from 0 to n: w(i), return array i of n: e(i))`: Fig. 4's
    /// accumulator for bodies without binds. `None` when the body draws.
    fn deterministic_plate(
        &mut self,
        i: VarId,
        n: TermId,
        body: TermId,
        env: &Env,
    ) -> Result<Option<LTerm>, Stop> {
        let mut l = self.lin(body, env, None)?;
        if l.len() != 1 || !l[0].binds.is_empty() {
            return Ok(None);
        }
        let Some(t) = l.pop() else {
            return Ok(None);
        };
        let mut fs: Vec<TermId> = t
            .factors
            .iter()
            .map(|f| crate::density::literal_reads_as_cases(self.store, f.term, i))
            .collect();
        for g in t.guards {
            fs.push(terms::indicator(self.store, g));
        }
        let elem = self.store.ty(t.result).clone();
        let array = self
            .store
            .intern(Node::Array(i, n, t.result), Type::array(elem));
        let mut out = LTerm::ret(array);
        if !fs.is_empty() {
            let w = terms::product(self.store, fs);
            let zero = terms::int(self.store, 0, &Type::Nat);
            let p = self.store.intern(Node::Product(i, zero, n, w), Type::Prob);
            out.factors.push(Factor::other(p));
        }
        Ok(Some(out))
    }

    /// `plate i of n: m` whose body is one term of draws (Fig. 4): each draw `ξ <~ B(i)`
    /// of the body becomes an array `X <~ Π_{i<n} B(i)` ([`Base::Array`]), each use of
    /// `ξ` becomes `X[i]`, each factor `f` the factor `product i from 0 to n: f` and each
    /// guard the product of its indicator; the result is `array i of n: r` (`X` itself
    /// when the body returns its draw). `None` when the body is a sum of several terms
    /// or draws from a measure with no known base (it then stays opaque).
    fn array_plate(
        &mut self,
        i: VarId,
        n: TermId,
        body: TermId,
        env: &Env,
        want: Option<VarId>,
    ) -> Result<Option<LTerm>, Stop> {
        let mut l = self.lin(body, env, None)?;
        if l.len() != 1 {
            return Ok(None);
        }
        let Some(t) = l.pop() else {
            return Ok(None);
        };
        if t.binds.is_empty() || t.binds.iter().any(|b| matches!(b.base, Base::Opaque(_))) {
            return Ok(None);
        }
        let it = self.store.var_term(i);
        let zero = terms::int(self.store, 0, &Type::Nat);
        let returns = match self.store.node(t.result) {
            Node::Var(v) => Some(*v),
            _ => None,
        };
        let mut map: FxHashMap<VarId, TermId> = FxHashMap::default();
        let mut out = LTerm::ret(t.result);
        for b in &t.binds {
            let info = self.store.var(b.var).clone();
            let aty = Type::array(info.ty.clone());
            let x = match want {
                Some(w) if returns == Some(b.var) => w,
                _ => self.store.fresh_var(&info.name, aty.clone()),
            };
            let xt = self.store.var_term(x);
            let elem = b.base.map(&mut |e| vars::substitute(self.store, e, &map));
            out.binds.push(Bind {
                var: x,
                base: Base::Array {
                    index: i,
                    size: n,
                    elem: Box::new(elem),
                },
            });
            let at = self.store.intern(Node::Index(xt, it), info.ty);
            map.insert(b.var, at);
        }
        for f in &t.factors {
            let e = vars::substitute(self.store, f.term, &map);
            let p = self.store.intern(Node::Product(i, zero, n, e), Type::Prob);
            let origin = match f.origin {
                crate::lin::Origin::Prior { var, dist } => match map.get(&var) {
                    Some(&at) => match *self.store.node(at) {
                        Node::Index(a, _) => match *self.store.node(a) {
                            Node::Var(x) => {
                                let mty = self.store.ty(dist).clone();
                                let aty = mty
                                    .measure_of()
                                    .map(|e| Type::measure(Type::array(e.clone())))
                                    .unwrap_or(mty);
                                let dist = self.store.intern(Node::Plate(i, n, dist), aty);
                                crate::lin::Origin::Prior { var: x, dist }
                            }
                            _ => crate::lin::Origin::Other,
                        },
                        _ => crate::lin::Origin::Other,
                    },
                    None => crate::lin::Origin::Other,
                },
                crate::lin::Origin::Other => crate::lin::Origin::Other,
            };
            out.factors.push(Factor { term: p, origin });
        }
        let body_vars: Vec<VarId> = t.binds.iter().map(|b| b.var).chain([i]).collect();
        for &g in &t.guards {
            // a guard on the parameters alone holds for the plate unless it is empty:
            // `g || n == 0`, a guard again, not a product of indicators
            if !vars::mentions_any(self.store, g, &body_vars) {
                let nty = self.store.ty(n).clone();
                let zero_n = terms::int(self.store, 0, &nty);
                let empty = self
                    .store
                    .prim(slic_algebra::Prim::Eq, vec![n, zero_n], Type::Bool);
                let either = self
                    .store
                    .prim(slic_algebra::Prim::Or, vec![g, empty], Type::Bool);
                out.guards.push(either);
                continue;
            }
            let g = vars::substitute(self.store, g, &map);
            let ind = terms::indicator(self.store, g);
            let p = self
                .store
                .intern(Node::Product(i, zero, n, ind), Type::Prob);
            out.factors.push(Factor::other(p));
        }
        // `plate i of int2nat(e)` means something only where `0 <= e` (int2nat of a
        // negative int is an error): the guard says so, and lets the size be `e`
        if let Node::Coerce(slic_algebra::Coercion::Int2Nat, e) = *self.store.node(n) {
            let zero_i = terms::int(self.store, 0, &Type::Int);
            out.guards.push(terms::compare(
                self.store,
                slic_algebra::Prim::Le,
                zero_i,
                e,
            ));
        }
        let r = vars::substitute(self.store, t.result, &map);
        out.result = match *self.store.node(r) {
            Node::Index(a, k) if k == it && matches!(self.store.node(a), Node::Var(_)) => a,
            _ => {
                let ty = Type::array(self.store.ty(r).clone());
                self.store.intern(Node::Array(i, n, r), ty)
            }
        };
        Ok(Some(out))
    }

    fn lin_plate(
        &mut self,
        m: TermId,
        i: VarId,
        n: TermId,
        body: TermId,
        env: &Env,
        want: Option<VarId>,
    ) -> Result<Lin, Stop> {
        let n2 = self.apply(n, env);
        let n2 = prepare::reduce(self.store, n2);
        let size = terms::lit_value(self.store, n2).and_then(|r| r.to_i64());
        let Some(size) = size.filter(|&k| (0..=PLATE_UNROLL).contains(&k)) else {
            if let Some(t) = self.deterministic_plate(i, n2, body, env)? {
                return Ok(vec![t]);
            }
            if let Some(t) = self.array_plate(i, n2, body, env, want)? {
                return Ok(vec![t]);
            }
            return Ok(vec![self.opaque(m, env, want)]);
        };
        let elem = terms::measure_elem(self.store, body);
        let hint = want.map_or_else(|| "x".to_string(), |v| self.store.var_name(v).to_string());
        // `plate i of n: m` is n independent draws `x_k <~ m[i := k]`, returned as an array
        let mut acc: Lin = vec![LTerm::ret(self.store.intern(Node::Unit, Type::Unit))];
        let mut elems: Vec<Vec<TermId>> = vec![Vec::new()];
        for k in 0..size {
            let kt = terms::int(self.store, k, &Type::Nat);
            let bk = vars::substitute1(self.store, body, i, kt);
            let bk = vars::freshen(self.store, bk);
            let xk = self.store.fresh_var(&format!("{hint}{k}"), elem.clone());
            let draws = self.lin(bk, env, Some(xk))?;
            let mut next = Vec::new();
            let mut next_elems = Vec::new();
            for (t1, es) in acc.iter().zip(&elems) {
                for t2 in &draws {
                    let mut es2 = es.clone();
                    es2.push(t2.result);
                    next.push(self.join(t1, t2.clone()));
                    next_elems.push(es2);
                    if next.len() > MAX_TERMS {
                        return Err(Stop::TooManyTerms);
                    }
                }
            }
            acc = next;
            elems = next_elems;
        }
        let aty = Type::array(elem);
        for (t, es) in acc.iter_mut().zip(elems) {
            t.result = self.store.intern(Node::ArrayLit(es), aty.clone());
        }
        Ok(acc)
    }
}
