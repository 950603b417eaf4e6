//! Expanding the transforms that compute a new term (issue 15): every `disint(m)` is
//! replaced by its kernel and every `density(m)` by its density ([`crate::disint`]), and
//! every `observe(m, v)` of a measure the reference interpreter cannot observe (a `return`,
//! a bind: anything but a primitive, a plate, weights and superpositions of them) by
//! `weight(density(m)(v), return v)` when that density exists, written through the
//! kernel as `_ <~ k(v); return v` (`crate::disint::observe`). The commands that give a
//! program a meaning (`simplify`, `sample`, `equiv`) run this first, so the interpreter
//! never meets a `disint` (it refuses one), and `simplify(disint(m))` simplifies the
//! kernel. A `simplify(e)` met on the way is computed too, so that a transform reading
//! it (`density(post(v))` for `post = simplify(disint(m))`) reads the simplified term.
//!
//! Why it is exact: each replacement is the transform's definition, computed exactly;
//! `observe(m, v)` means `weight(f(v), return v)` for `f` the density of `m` with respect
//! to the base measure (HAKARU.md, "Measures"), which for a primitive is the density the
//! interpreter already uses. A transform that cannot be computed is a diagnostic at the
//! span of its call, naming why; an `observe` whose density cannot be found is left as
//! it was (the interpreter then reports that it cannot observe it, as before).

use rustc_hash::FxHashMap;

use slic_algebra::vars;
use slic_algebra::{
    Diagnostic, Node, Pattern, Prim, SpanMap, Store, TermId, Transform, Type, VarId,
};

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
                // its densities are transforms too; one that cannot be computed is an
                // error at this call (the densities were written here, not by the user)
                slic_algebra::stack::grow(|| self.expand(kernel)).map_err(|d| {
                    let mut d = Diagnostic::new(
                        self.spans.get(t).unwrap_or_default(),
                        format!("cannot compute {}: {}", tr.name(), d.message),
                    );
                    d.notes.push(
                        "its ratio needs the densities of the target and of the proposal \
                         with respect to lebesgue (counting for integers), so a proposal \
                         that keeps a component of the state with positive probability has \
                         none"
                            .into(),
                    );
                    d
                })?
            }
            Node::Observe(m, v) => {
                let m = self.inlined(m);
                if observable(self.store, m) {
                    rebuilt
                } else {
                    disint::observe(self.store, m, v).unwrap_or(rebuilt)
                }
            }
            // `simplify(e)` computed here, where another transform may read it
            // (`post = simplify(disint(..))` then `density(post(v))` in `mcmc`): the
            // density of the simplified kernel is closed where that of the raw one is an
            // integral. Exact: the simplifier's output means what its input does.
            Node::Transform(Transform::Simplify, e) => {
                crate::simplify(self.store, e, &crate::SimplifyConfig::default()).term
            }
            // a kernel or density applied where it was computed: applied now
            // (a pair taken apart by the function's `match` picks its arm)
            Node::App(f, a) if f != ch[0] => match *self.store.node(f) {
                Node::Lam(x, body) => {
                    let applied = vars::substitute1(self.store, body, x, a);
                    crate::prepare::reduce(self.store, applied)
                }
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
    // a pair state is read through its components (`match x: (x1, x2)`), so that the
    // proposal's `match` picks its arm and the densities see a pair they can take apart
    // the state's components are named as the proposal names them (`fn s: match s:
    // (nT, nM)`), so that a chain's columns are `nT` and `nM`
    let names = match *store.node(proposal) {
        Node::Lam(v, body) => match store.node(body) {
            Node::Match(e, arms) if *store.node(*e) == Node::Var(v) && arms.len() == 1 => {
                Some(arms[0].0.clone())
            }
            _ => None,
        },
        _ => None,
    };
    let (px, xv) = components(store, x, names.as_ref());
    let (py, yv) = components(store, y, None);
    let (xt, yt) = (store.var_term(x), store.var_term(y));
    let kernel_at = |store: &mut Store, at: TermId| match *store.node(proposal) {
        Node::Lam(v, body) => {
            let applied = vars::substitute1(store, body, v, at);
            crate::prepare::reduce(store, applied)
        }
        _ => store.intern(Node::App(proposal, at), Type::measure(a.clone())),
    };
    let density_at = |store: &mut Store, m: TermId, at: TermId| {
        let d = store.intern(
            Node::Transform(Transform::Density, m),
            Type::fun(a.clone(), Type::Prob),
        );
        store.intern(Node::App(d, at), Type::Prob)
    };
    let (from_x, from_y) = (kernel_at(store, xv), kernel_at(store, yv));
    let target_y = density_at(store, target, yv);
    let back = density_at(store, from_y, xv);
    let target_x = density_at(store, target, xv);
    let forth = density_at(store, from_x, yv);
    let den = store.prim(Prim::Mul, vec![target_x, forth], Type::Prob);
    let inv = store.prim(Prim::Recip, vec![den], Type::Prob);
    let ratio = store.prim(Prim::Mul, vec![target_y, back, inv], Type::Prob);
    let (step, sty) = if tr == Transform::Mh {
        let pty = Type::pair(a.clone(), Type::Prob);
        let pair = store.intern(Node::Pair(yt, ratio), pty.clone());
        let ret = store.intern(Node::Dirac(pair), Type::measure(pty.clone()));
        (ret, Type::measure(pty))
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
        (step, Type::measure(a.clone()))
    };
    let step = taken_apart(store, y, py, step);
    let body = store.intern(Node::Bind(y, from_x, step), sty);
    let body = taken_apart(store, x, px, body);
    let out = store.ty(body).clone();
    Some(store.intern(Node::Lam(x, body), Type::fun(a, out)))
}

/// The state `x` as it is read: for a pair, a pattern naming its components and the
/// pair of them (nested pairs in turn); for anything else no pattern, and `x` itself.
/// The components are named after the variables of `names` in their places, else after
/// `x` and their positions (`x1`, `x2`).
fn components(store: &mut Store, x: VarId, names: Option<&Pattern>) -> (Option<Pattern>, TermId) {
    let a = store.var_type(x).clone();
    if !matches!(a, Type::Pair(..)) {
        return (None, store.var_term(x));
    }
    let hint = store.var_name(x).to_string();
    let (p, v) = leaves(store, &hint, &a, names);
    (Some(p), v)
}

/// A pattern of fresh variables for a value of type `a` (see [`components`] for their
/// names), and the value rebuilt from them.
fn leaves(store: &mut Store, hint: &str, a: &Type, names: Option<&Pattern>) -> (Pattern, TermId) {
    match a {
        Type::Pair(l, r) => {
            let (nl, nr) = match names {
                Some(Pattern::Pair(nl, nr)) => (Some(&**nl), Some(&**nr)),
                _ => (None, None),
            };
            let (pl, vl) = leaves(store, &format!("{hint}1"), l, nl);
            let (pr, vr) = leaves(store, &format!("{hint}2"), r, nr);
            let view = store.intern(Node::Pair(vl, vr), a.clone());
            (Pattern::Pair(Box::new(pl), Box::new(pr)), view)
        }
        _ => {
            let name = match names {
                Some(Pattern::Var(n)) => store.var_name(*n).to_string(),
                _ => hint.to_string(),
            };
            let v = store.fresh_var(&name, a.clone());
            (Pattern::Var(v), store.var_term(v))
        }
    }
}

/// `body` under `match x: pattern: body` when the state is a pair, as it is otherwise.
fn taken_apart(store: &mut Store, x: VarId, pattern: Option<Pattern>, body: TermId) -> TermId {
    match pattern {
        Some(p) => {
            let xt = store.var_term(x);
            let ty = store.ty(body).clone();
            store.intern(Node::Match(xt, vec![(p, body)]), ty)
        }
        None => body,
    }
}
