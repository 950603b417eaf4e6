//! Comparisons the data decide (issue 12: kernel speed). A simplified Gibbs update guards
//! every count with the model's validity tests: Naive Bayes and LDA multiply their
//! weights by `0` where some token's word is not below `size(word_prior)`, where some
//! label is not below `size(topic_prior)`, and the histogram transform turns each such
//! test into a table rebuilt at every update. On a chain's data they are constants: the
//! data never change, and every label the driver writes was drawn from the update's own
//! categorical.
//!
//! [`decide_data`] rewrites an update program for one chain's arguments ([`DataFacts`]):
//! it bounds integral subterms by intervals (literals; scalar parameters and array
//! lengths by their values; a data array's read, where the index is provably in range,
//! by the least and greatest element; the state's read by `0..K`, `K` the number of
//! labels the update's categorical draws; the index by `0..size(state)`; a loop's
//! variable by its range; sums, negations, products, `int2nat`/`nat2int` and `if`s by
//! interval arithmetic), writes each comparison the intervals decide as `true`/`false`,
//! and folds the connectives, `if`s, products of 1 and sums of 0 that leaves. The rewrite
//! is exact on those arguments, for every state whose labels are below `K`: the driver
//! checks the initial state and every label it writes ([`Decided::labels`]).
//!
//! The program is then specialised to its data (as run-time specialisation bakes in
//! sizes): it is only ever run on the arguments it was decided for, with the state and
//! index changing.

use std::cell::Cell;

use rustc_hash::FxHashMap;
use slic_algebra::{stack, vars, Coercion, Dist, Node, Prim, Store, TermId, Type, VarId};

use crate::interp::Val;
use crate::ranges::fold_connective;

/// An inclusive interval of integers.
type Interval = (i128, i128);

/// What is known of one parameter on a chain's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Known {
    /// Nothing usable (reals, probabilities, booleans).
    Nothing,
    /// An integral scalar within an interval (its value, or the index's range).
    Scalar(Interval),
    /// An array of this length; its elements' interval where they are integral.
    Array { len: u64, elems: Option<Interval> },
}

/// What a chain's arguments tell of an update program's parameters: their values,
/// lengths and element ranges, the index ranging over the state's positions, the
/// state's labels below the update's number of labels.
#[derive(Clone, Debug)]
pub struct DataFacts {
    params: Vec<Known>,
    state: usize,
}

impl DataFacts {
    /// The facts of `args` (the update's arguments in parameter order) for a chain over
    /// the state parameter `state`, indexed by parameter `index`.
    pub fn new(args: &[Val], state: usize, index: usize) -> DataFacts {
        let state_len = match args.get(state) {
            Some(Val::Array(items)) => Some(items.len() as u64),
            _ => None,
        };
        let params = args
            .iter()
            .enumerate()
            .map(|(k, v)| {
                if k == index {
                    // the driver updates every position of the state in turn
                    return match state_len {
                        Some(n) if n > 0 => Known::Scalar((0, i128::from(n) - 1)),
                        _ => Known::Nothing,
                    };
                }
                match v {
                    Val::Nat(n) => Known::Scalar((i128::from(*n), i128::from(*n))),
                    Val::Int(n) => Known::Scalar((i128::from(*n), i128::from(*n))),
                    Val::Array(items) => Known::Array {
                        len: items.len() as u64,
                        // the state's labels are bounded by the update, not read here
                        elems: if k == state { None } else { elements(items) },
                    },
                    _ => Known::Nothing,
                }
            })
            .collect();
        DataFacts { params, state }
    }
}

/// The interval of an array of integers (`None` when empty or not integral).
fn elements(items: &[Val]) -> Option<Interval> {
    let mut out: Option<Interval> = None;
    for v in items {
        let x = match v {
            Val::Nat(n) => i128::from(*n),
            Val::Int(n) => i128::from(*n),
            _ => return None,
        };
        out = Some(match out {
            None => (x, x),
            Some((lo, hi)) => (lo.min(x), hi.max(x)),
        });
    }
    out
}

/// What [`decide_data`] did.
#[derive(Clone, Debug)]
pub struct Decided {
    /// The rewritten program (same type; the same meaning on the facts' arguments).
    pub term: TermId,
    /// Comparisons decided.
    pub decided: usize,
    /// `Some(K)` when a decision assumed every label of the state below `K`: the driver
    /// must check that of the initial state and of every label it writes.
    pub labels: Option<u64>,
}

/// `t` (a program: `fn`s around a measure) with the comparisons `facts` decide decided.
pub fn decide_data(store: &mut Store, t: TermId, facts: &DataFacts) -> Decided {
    let mut params = Vec::new();
    let mut lams = Vec::new();
    let mut body = t;
    while let Node::Lam(v, b) = store.node(body) {
        params.push(*v);
        lams.push(store.ty(body).clone());
        body = *b;
    }
    let mut env: FxHashMap<VarId, Known> = params
        .iter()
        .zip(&facts.params)
        .map(|(v, k)| (*v, k.clone()))
        .collect();
    // the state's labels: those the update's categorical draws
    let state_var = params.get(facts.state).copied();
    let labels = {
        let w = Walker::new(store, &env);
        w.labels(body, &params)
    };
    if let (Some(v), Some(k)) = (state_var, labels) {
        if let Some(Known::Array { elems, .. }) = env.get_mut(&v) {
            *elems = (k > 0).then(|| (0, i128::from(k) - 1));
        }
    }
    let mut w = Walker::new(store, &env);
    w.state = state_var;
    // the body walked with the parameters in scope, then wrapped again
    let mut term = w.go(body);
    for (v, ty) in params.iter().zip(lams).rev() {
        term = w.store.intern(Node::Lam(*v, term), ty);
    }
    Decided {
        term,
        decided: w.decided,
        labels: if w.used_state { labels } else { None },
    }
}

struct Walker<'s> {
    store: &'s mut Store,
    /// What is known of each variable in scope: the parameters, the loops' variables.
    env: FxHashMap<VarId, Known>,
    /// Which scope `env` is (memo entries hold under one scope only), and how many
    /// scopes there have been.
    epoch: u64,
    epochs: u64,
    memo: FxHashMap<(TermId, u64), TermId>,
    state: Option<VarId>,
    /// Whether the interval being computed read the state's assumed labels (a query
    /// takes `&self`), and whether any decision did.
    state_read: Cell<bool>,
    used_state: bool,
    decided: usize,
}

impl<'s> Walker<'s> {
    fn new(store: &'s mut Store, env: &FxHashMap<VarId, Known>) -> Walker<'s> {
        Walker {
            store,
            env: env.clone(),
            epoch: 0,
            epochs: 0,
            memo: FxHashMap::default(),
            state: None,
            state_read: Cell::new(false),
            used_state: false,
            decided: 0,
        }
    }

    /// The number of labels the measure `m` draws: `K` when every draw is of a
    /// categorical over `K` weights (`reject` draws none), the count known.
    fn labels(&self, m: TermId, params: &[VarId]) -> Option<u64> {
        self.labels_in(m, params).flatten()
    }

    /// `Some(None)` for a measure that draws nothing (`reject`), `None` when unknown.
    fn labels_in(&self, m: TermId, params: &[VarId]) -> Option<Option<u64>> {
        match self.store.node(m) {
            Node::Reject => Some(None),
            Node::If(_, a, b) => {
                let (a, b) = (self.labels_in(*a, params)?, self.labels_in(*b, params)?);
                match (a, b) {
                    (Some(x), Some(y)) if x != y => None,
                    (x, y) => Some(x.or(y)),
                }
            }
            Node::Weight(_, m) => self.labels_in(*m, params),
            // a binder that shadows a parameter could change what the size reads
            Node::Let(v, _, m) if !params.contains(v) => self.labels_in(*m, params),
            Node::Bind(x, m, k)
                if matches!(self.store.node(*k), Node::Dirac(r)
                if matches!(self.store.node(*r), Node::Var(y) if y == x)) =>
            {
                self.labels_in(*m, params)
            }
            Node::Dist(Dist::Categorical, args) if args.len() == 1 => {
                match self.store.node(args[0]) {
                    Node::Array(_, n, _) => match self.interval(*n)? {
                        (lo, hi) if lo == hi && lo >= 0 => Some(u64::try_from(lo).ok()),
                        _ => None,
                    },
                    Node::ArrayLit(items) => Some(Some(items.len() as u64)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&(t, self.epoch)) {
            return r;
        }
        let node = self.store.node(t).clone();
        let ch = node.children();
        let mut new = Vec::with_capacity(ch.len());
        for (i, &c) in ch.iter().enumerate() {
            let mut bound = Vec::new();
            vars::bound_in(&node, i, &mut bound);
            let range = match node {
                Node::Array(v, n, _) if i + 1 == ch.len() => {
                    Some((v, self.interval(n).map(|(_, hi)| (0, hi - 1))))
                }
                Node::Summate(v, lo, hi, _)
                | Node::Product(v, lo, hi, _)
                | Node::Bucket(v, lo, hi, _)
                    if i + 1 == ch.len() =>
                {
                    let r = match (self.interval(lo), self.interval(hi)) {
                        (Some((l, _)), Some((_, h))) => Some((l, h - 1)),
                        _ => None,
                    };
                    Some((v, r))
                }
                _ => None,
            };
            let r = if bound.is_empty() {
                stack::grow(|| self.go(c))
            } else {
                let saved = self.enter(&bound, range);
                let r = stack::grow(|| self.go(c));
                self.env = saved.0;
                self.epoch = saved.1;
                r
            };
            new.push(r);
        }
        let node = if new == ch {
            node
        } else {
            node.with_children(&new)
        };
        let ty = self.store.ty(t).clone();
        let r = self.fold(node, ty);
        self.memo.insert((t, self.epoch), r);
        r
    }

    /// Shadows the variables of `bound`, then records a loop variable's range (an empty
    /// range leaves it unknown: the body never runs). Returns what to restore.
    fn enter(
        &mut self,
        bound: &[VarId],
        range: Option<(VarId, Option<Interval>)>,
    ) -> (FxHashMap<VarId, Known>, u64) {
        let saved = (self.env.clone(), self.epoch);
        for v in bound {
            self.env.remove(v);
        }
        if let Some((v, Some((lo, hi)))) = range {
            if lo <= hi {
                self.env.insert(v, Known::Scalar((lo, hi)));
            }
        }
        self.epochs += 1;
        self.epoch = self.epochs;
        saved
    }

    /// The interval of an integral term, where the facts give one.
    fn interval(&self, t: TermId) -> Option<Interval> {
        if !matches!(self.store.ty(t), Type::Nat | Type::Int) {
            return None;
        }
        match self.store.node(t) {
            Node::Lit(r) => r.to_i64().map(|x| (i128::from(x), i128::from(x))),
            Node::Var(v) => match self.env.get(v)? {
                Known::Scalar(i) => Some(*i),
                _ => None,
            },
            Node::Prim(Prim::Size, a) if a.len() == 1 => match self.store.node(a[0]) {
                Node::Var(v) => match self.env.get(v)? {
                    Known::Array { len, .. } => Some((i128::from(*len), i128::from(*len))),
                    _ => None,
                },
                _ => None,
            },
            Node::Index(a, e) => {
                let Node::Var(v) = self.store.node(*a) else {
                    return None;
                };
                let Known::Array { len, elems } = self.env.get(v)? else {
                    return None;
                };
                let (lo, hi) = self.interval(*e)?;
                // only where the read is in range: out of it the read is an error, which
                // no decision may hide
                if lo < 0 || hi >= i128::from(*len) {
                    return None;
                }
                if elems.is_some() && Some(*v) == self.state {
                    self.state_read.set(true);
                }
                *elems
            }
            Node::Coerce(Coercion::Int2Nat, e) => self.interval(*e).filter(|(lo, _)| *lo >= 0),
            Node::Coerce(Coercion::Nat2Int, e) => self.interval(*e),
            Node::Prim(Prim::Add, args) => args.iter().try_fold((0i128, 0i128), |acc, &a| {
                let (lo, hi) = self.interval(a)?;
                Some((acc.0.checked_add(lo)?, acc.1.checked_add(hi)?))
            }),
            Node::Prim(Prim::Neg, a) if a.len() == 1 => {
                self.interval(a[0]).map(|(lo, hi)| (-hi, -lo))
            }
            Node::Prim(Prim::Mul, args) => args.iter().try_fold((1i128, 1i128), |acc, &a| {
                let (lo, hi) = self.interval(a)?;
                let c = [
                    acc.0.checked_mul(lo)?,
                    acc.0.checked_mul(hi)?,
                    acc.1.checked_mul(lo)?,
                    acc.1.checked_mul(hi)?,
                ];
                Some((*c.iter().min()?, *c.iter().max()?))
            }),
            Node::If(_, a, b) => {
                let (x, y) = (self.interval(*a)?, self.interval(*b)?);
                Some((x.0.min(y.0), x.1.max(y.1)))
            }
            _ => None,
        }
    }

    /// `node` rebuilt: a comparison the intervals decide, or a literal folded.
    fn fold(&mut self, node: Node, ty: Type) -> TermId {
        let lit = |store: &Store, t: TermId| match store.node(t) {
            Node::Lit(r) => r.to_i64(),
            _ => None,
        };
        match &node {
            Node::Prim(op @ (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne), args)
                if args.len() == 2 =>
            {
                self.state_read.set(false);
                let decided = match (self.interval(args[0]), self.interval(args[1])) {
                    (Some(a), Some(b)) => compare(*op, a, b),
                    _ => None,
                };
                match decided {
                    Some(v) => {
                        self.decided += 1;
                        self.used_state |= self.state_read.get();
                        self.store.intern(Node::Bool(v), Type::Bool)
                    }
                    None => self.store.intern(node, ty),
                }
            }
            // a product of ones, a sum of zeros
            Node::Product(_, _, _, b) if lit(self.store, *b) == Some(1) => *b,
            Node::Summate(_, _, _, b) if lit(self.store, *b) == Some(0) => *b,
            Node::Prim(p @ (Prim::Mul | Prim::Add), args) => {
                let unit = i64::from(*p == Prim::Mul);
                let kept: Vec<TermId> = args
                    .iter()
                    .copied()
                    .filter(|&a| lit(self.store, a) != Some(unit))
                    .collect();
                match kept.len() {
                    0 => self.store.int_lit(unit, ty),
                    1 => kept[0],
                    n if n == args.len() => self.store.intern(node, ty),
                    _ => self.store.prim(*p, kept, ty),
                }
            }
            _ => fold_connective(self.store, &node).unwrap_or_else(|| self.store.intern(node, ty)),
        }
    }
}

/// `a op b` for every `a` in the first interval and `b` in the second, where that is
/// one truth value.
fn compare(op: Prim, a: Interval, b: Interval) -> Option<bool> {
    let (lt_all, ge_all) = (a.1 < b.0, a.0 >= b.1);
    let (le_all, gt_all) = (a.1 <= b.0, a.0 > b.1);
    let disjoint = a.1 < b.0 || b.1 < a.0;
    let same_point = a.0 == a.1 && b.0 == b.1 && a.0 == b.0;
    match op {
        Prim::Lt if lt_all => Some(true),
        Prim::Lt if ge_all => Some(false),
        Prim::Le if le_all => Some(true),
        Prim::Le if gt_all => Some(false),
        Prim::Eq | Prim::Ne if same_point => Some(op == Prim::Eq),
        Prim::Eq | Prim::Ne if disjoint => Some(op == Prim::Ne),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_decide_only_what_holds_everywhere() {
        assert_eq!(compare(Prim::Lt, (0, 4), (5, 5)), Some(true));
        assert_eq!(compare(Prim::Lt, (0, 5), (5, 5)), None);
        assert_eq!(compare(Prim::Lt, (5, 9), (5, 5)), Some(false));
        assert_eq!(compare(Prim::Le, (0, 5), (5, 9)), Some(true));
        assert_eq!(compare(Prim::Le, (6, 9), (0, 5)), Some(false));
        assert_eq!(compare(Prim::Eq, (3, 3), (3, 3)), Some(true));
        assert_eq!(compare(Prim::Ne, (0, 2), (3, 4)), Some(true));
        assert_eq!(compare(Prim::Eq, (0, 3), (3, 4)), None);
    }
}
