//! Expanding the transforms that compute a new term (issue 15): every `disint(m)` is
//! replaced by its kernel and every `density(m)` by its density ([`crate::disint`]), and
//! every `observe(m, v)` of a measure the reference interpreter cannot observe (a `return`,
//! a bind: anything but a primitive, a plate, weights and superpositions of them) by
//! `weight(density(m)(v), return v)` when that density exists, written through the
//! kernel as `_ <~ k(v); return v` (`crate::disint::observe`). The commands that give a
//! program a meaning (`simplify`, `sample`, `equiv`) run this first, so the interpreter
//! never meets a `disint` (it refuses one), and `simplify(disint(m))` simplifies the
//! kernel.
//!
//! Why it is exact: each replacement is the transform's definition, computed exactly;
//! `observe(m, v)` means `weight(f(v), return v)` for `f` the density of `m` with respect
//! to the base measure (HAKARU.md, "Measures"), which for a primitive is the density the
//! interpreter already uses. A transform that cannot be computed is a diagnostic at the
//! span of its call, naming why; an `observe` whose density cannot be found is left as
//! it was (the interpreter then reports that it cannot observe it, as before).

use rustc_hash::FxHashMap;

use slic_algebra::vars;
use slic_algebra::{Diagnostic, Node, Prim, SpanMap, Store, TermId, Transform, Type, VarId};

use crate::disint;

/// `t` with every `disint`, `density` and unobservable `observe` expanded (see the module
/// doc); the first transform that cannot be computed is an error at its span in `spans`.
pub fn expand_transforms(
    store: &mut Store,
    t: TermId,
    spans: &SpanMap,
) -> Result<TermId, Diagnostic> {
    if !store.subterms(t).any(|s| needs_expanding(store, s)) {
        return Ok(t);
    }
    let mut e = Expander {
        store,
        spans,
        memo: FxHashMap::default(),
        lets: FxHashMap::default(),
    };
    e.expand(t)
}

/// Is `s` a node this pass replaces?
fn needs_expanding(store: &Store, s: TermId) -> bool {
    match store.node(s) {
        Node::Transform(tr, _) => !tr.keeps_meaning(),
        // an observation of a variable: what the `let` binds decides
        Node::Observe(..) => true,
        _ => false,
    }
}

/// Can the reference interpreter observe `m` directly (it reads primitives, plates,
/// weights, `reject`, superpositions and meaning-keeping transforms of them, and takes
/// `let`, `if` and applications apart first)?
fn observable(store: &Store, m: TermId) -> bool {
    match store.node(m) {
        Node::Dist(..) | Node::Plate(..) | Node::Reject => true,
        Node::Weight(_, inner) => observable(store, *inner),
        Node::Superpose(ms) => ms.iter().all(|&x| observable(store, x)),
        Node::Transform(tr, inner) => tr.keeps_meaning() && observable(store, *inner),
        Node::Let(_, _, body) => observable(store, *body),
        Node::If(_, a, b) => observable(store, *a) && observable(store, *b),
        Node::Dirac(_) | Node::Bind(..) | Node::Observe(..) | Node::Chain(..) => false,
        // applications, variables, matches: whatever they reduce to, left as written
        _ => true,
    }
}

struct Expander<'a, 's> {
    store: &'s mut Store,
    spans: &'a SpanMap,
    /// Expanded terms, for terms expanded outside every `let` of a measure or function
    /// (inside one, the result depends on `lets`).
    memo: FxHashMap<TermId, TermId>,
    /// The measures and functions bound by the `let`s (and nullary `def`s) around the
    /// current term: a transform's argument reads them, and they are inlined into it, as
    /// the simplifier inlines them.
    lets: FxHashMap<VarId, TermId>,
}

impl Expander<'_, '_> {
    fn expand(&mut self, t: TermId) -> Result<TermId, Diagnostic> {
        if self.lets.is_empty() {
            if let Some(&r) = self.memo.get(&t) {
                return Ok(r);
            }
        }
        let node = self.store.node(t).clone();
        let ch = node.children();
        let mut new = Vec::with_capacity(ch.len());
        for (k, &c) in ch.iter().enumerate() {
            // the body of a `let` of a measure or function sees its definition
            let bound = match &node {
                Node::Let(x, e, _)
                    if k == 1 && matches!(self.store.ty(*e), Type::Fun(..) | Type::Measure(_)) =>
                {
                    Some((*x, new[0]))
                }
                _ => None,
            };
            let before = bound.map(|(x, e)| (x, self.lets.insert(x, e)));
            let r = slic_algebra::stack::grow(|| self.expand(c));
            if let Some((x, old)) = before {
                match old {
                    Some(o) => self.lets.insert(x, o),
                    None => self.lets.remove(&x),
                };
            }
            new.push(r?);
        }
        let ty = self.store.ty(t).clone();
        let rebuilt = if new == ch {
            t
        } else {
            self.store.intern(node.with_children(&new), ty.clone())
        };
        let r = match self.store.node(rebuilt).clone() {
            Node::Transform(tr @ (Transform::Disint | Transform::Density), m) => {
                let m = self.inlined(m);
                let got = if tr == Transform::Disint {
                    disint::disint(self.store, m)
                } else {
                    disint::density(self.store, m)
                };
                got.map_err(|e| {
                    let span = self.spans.get(t).unwrap_or_default();
                    Diagnostic::new(span, format!("cannot compute {}: {}", tr.name(), e.message))
                })?
            }
            Node::Transform(tr @ (Transform::Mh | Transform::Mcmc), arg) => {
                let Node::Pair(proposal, target) = *self.store.node(arg) else {
                    return Err(Diagnostic::new(
                        self.spans.get(t).unwrap_or_default(),
                        format!("'{}' takes a proposal and a target", tr.name()),
                    ));
                };
                let proposal = self.inlined(proposal);
                let target = self.inlined(target);
                let kernel = metropolis(self.store, tr, proposal, target).ok_or_else(|| {
                    Diagnostic::new(
                        self.spans.get(t).unwrap_or_default(),
                        format!(
                            "cannot compute {}: the standard library has no `bernoulli`",
                            tr.name()
                        ),
                    )
                })?;
                // its densities are transforms too
                slic_algebra::stack::grow(|| self.expand(kernel))?
            }
            Node::Observe(m, v) => {
                let m = self.inlined(m);
                if observable(self.store, m) {
                    rebuilt
                } else {
                    disint::observe(self.store, m, v).unwrap_or(rebuilt)
                }
            }
            // a kernel or density applied where it was computed: applied now
            Node::App(f, a) if f != ch[0] => match *self.store.node(f) {
                Node::Lam(x, body) => vars::substitute1(self.store, body, x, a),
                _ => rebuilt,
            },
            _ => rebuilt,
        };
        debug_assert_eq!(self.store.ty(r), self.store.ty(t));
        if self.lets.is_empty() {
            self.memo.insert(t, r);
        }
        Ok(r)
    }

    /// `m` with the definitions of the enclosing `let`s it reads substituted (to a fixed
    /// point: a definition may read an earlier one).
    fn inlined(&mut self, m: TermId) -> TermId {
        let mut cur = m;
        for _ in 0..=self.lets.len() {
            let next = vars::substitute(self.store, cur, &self.lets);
            if next == cur {
                break;
            }
            cur = next;
        }
        cur
    }
}

/// The Metropolis-Hastings term of `mh(proposal, target)` or `mcmc(proposal, target)`,
/// its densities still `density` transforms: for the state `x` and the proposal
/// `y <~ proposal(x)`, the ratio `r = d_t(y) d_{proposal(y)}(x) / (d_t(x)
/// d_{proposal(x)}(y))` of the target's and the proposal's densities (with respect to the
/// one base measure of the state's type, so their quotient is the Radon-Nikodym
/// derivative the acceptance needs); `mh` returns `(y, r)`, `mcmc` draws
/// `b <~ bernoulli(min(1, r))` and returns `y` if `b`, else `x`. `None` only if the
/// standard library lacks `bernoulli`.
fn metropolis(
    store: &mut Store,
    tr: Transform,
    proposal: TermId,
    target: TermId,
) -> Option<TermId> {
    let a = store.ty(target).measure_of()?.clone();
    let x = store.fresh_var("x", a.clone());
    let y = store.fresh_var("y", a.clone());
    let (xt, yt) = (store.var_term(x), store.var_term(y));
    let kernel_at = |store: &mut Store, at: TermId| match *store.node(proposal) {
        Node::Lam(v, body) => vars::substitute1(store, body, v, at),
        _ => store.intern(Node::App(proposal, at), Type::measure(a.clone())),
    };
    let density_at = |store: &mut Store, m: TermId, at: TermId| {
        let d = store.intern(
            Node::Transform(Transform::Density, m),
            Type::fun(a.clone(), Type::Prob),
        );
        store.intern(Node::App(d, at), Type::Prob)
    };
    let (from_x, from_y) = (kernel_at(store, xt), kernel_at(store, yt));
    let target_y = density_at(store, target, yt);
    let back = density_at(store, from_y, xt);
    let target_x = density_at(store, target, xt);
    let forth = density_at(store, from_x, yt);
    let den = store.prim(Prim::Mul, vec![target_x, forth], Type::Prob);
    let inv = store.prim(Prim::Recip, vec![den], Type::Prob);
    let ratio = store.prim(Prim::Mul, vec![target_y, back, inv], Type::Prob);
    let body = if tr == Transform::Mh {
        let pair = store.intern(Node::Pair(yt, ratio), Type::pair(a.clone(), Type::Prob));
        let ret = store.intern(
            Node::Dirac(pair),
            Type::measure(Type::pair(a.clone(), Type::Prob)),
        );
        store.intern(
            Node::Bind(y, from_x, ret),
            Type::measure(Type::pair(a.clone(), Type::Prob)),
        )
    } else {
        let one = store.int_lit(1, Type::Prob);
        let p = store.prim(Prim::Min, vec![one, ratio], Type::Prob);
        let bern = slic_algebra::stdlib::var(store, "bernoulli").ok()??;
        let bern = store.var_term(bern);
        let coin = store.intern(Node::App(bern, p), Type::measure(Type::Bool));
        let b = store.fresh_var("accept", Type::Bool);
        let bt = store.var_term(b);
        let next = store.intern(Node::If(bt, yt, xt), a.clone());
        let ret = store.intern(Node::Dirac(next), Type::measure(a.clone()));
        let step = store.intern(Node::Bind(b, coin, ret), Type::measure(a.clone()));
        store.intern(Node::Bind(y, from_x, step), Type::measure(a.clone()))
    };
    let out = store.ty(body).clone();
    Some(store.intern(Node::Lam(x, body), Type::fun(a, out)))
}
