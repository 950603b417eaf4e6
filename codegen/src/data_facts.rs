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
//! interval arithmetic; a variable narrowed inside a branch by its test, `v < e`), writes
//! each comparison the intervals decide as `true`/`false`, and folds the connectives,
//! `if`s, products of 1 and sums of 0 that leaves. A histogram of a row-major table
//! (`r_index b = n * d of x * d + e`) that is read at one column alone (`h[row * d +
//! col]`, `col` the same parameter-only term everywhere) becomes that column, where the
//! intervals show `e` and `col` below `d`: LDA's document-by-topic table, read at the
//! updated token's document, is one row of `K` counts. The rewrite
//! is exact on those arguments, for every state whose labels are below `K`: the driver
//! checks the initial state and every label it writes ([`Decided::labels`]).
//!
//! The program is then specialised to its data (as run-time specialisation bakes in
//! sizes): it is only ever run on the arguments it was decided for, with the state and
//! index changing.

use std::cell::Cell;
use std::collections::HashMap;

use rustc_hash::FxHashMap;
use slic_algebra::{vars, Coercion, Dist, Node, Prim, Store, TermId, Type, VarId};

use crate::interp::Val;
use crate::ir::{Expr, Lit, Program};
use crate::precompute::{precompute, Precomputed};
use crate::ranges::{fold_connective, rebuild_scoped, ScopedRewrite};

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
    index: usize,
    /// The arguments themselves, for what they fix ([`Self::precompute`]).
    args: Vec<Val>,
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
        DataFacts {
            params,
            state,
            index,
            args: args.to_vec(),
        }
    }

    /// Is `index` (a `nat` literal or a parameter) below the length of the array
    /// parameter `array` on these arguments (the index ranging over the state's
    /// positions)? `params` are the program's, in the arguments' order.
    pub fn read_in_range(&self, params: &[(String, Type)], array: &str, index: &Expr) -> bool {
        let known = |x: &str| {
            params
                .iter()
                .position(|(y, _)| y == x)
                .and_then(|k| self.params.get(k))
        };
        let Some(Known::Array { len, .. }) = known(array) else {
            return false;
        };
        let hi = match index {
            Expr::Lit(Lit::Nat(n)) => i128::from(*n),
            Expr::Var(x) => match known(x) {
                Some(Known::Scalar((lo, hi))) if *lo >= 0 => *hi,
                _ => return false,
            },
            _ => return false,
        };
        hi < i128::from(*len)
    }

    /// `p` (over the facts' parameters) with the scalars only the fixed data define
    /// computed once, on these arguments ([`crate::precompute`]).
    pub fn precompute(&self, p: &Program) -> Precomputed {
        let name = |k: usize| p.params.get(k).map_or("", |(x, _)| x.as_str());
        precompute(p, &self.args, &[name(self.state), name(self.index)])
    }

    /// The values a program over these parameters (`params`, in order) may fold in
    /// (`crate::constants`): every integral scalar's value but the index's, by name, and
    /// every array's length.
    pub fn constants(
        &self,
        params: &[(String, Type)],
    ) -> (HashMap<String, Lit>, HashMap<String, u64>) {
        let mut values = HashMap::new();
        let mut sizes = HashMap::new();
        for (k, ((name, ty), known)) in params.iter().zip(&self.params).enumerate() {
            match known {
                Known::Scalar((lo, hi)) if lo == hi && k != self.index => {
                    let lit = match ty {
                        Type::Nat => u64::try_from(*lo).ok().map(Lit::Nat),
                        Type::Int => i64::try_from(*lo).ok().map(Lit::Int),
                        _ => None,
                    };
                    if let Some(l) = lit {
                        values.insert(name.clone(), l);
                    }
                }
                Known::Array { len, .. } => {
                    sizes.insert(name.clone(), *len);
                }
                _ => {}
            }
        }
        (values, sizes)
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
/// With `state_bounds` false, a test `z[e] < B` (or `<=`) of the state's read against
/// a bound is left as it is: before the histogram transform, that test is what gives a
/// stick-breaking prefix count `Σ_j [k < z[j] < K]` its histogram's length, and without
/// it the count stays a pass over the points inside the loop over the classes.
pub fn decide_data(store: &mut Store, t: TermId, facts: &DataFacts, state_bounds: bool) -> Decided {
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
    w.params = params.clone();
    w.state_bounds = state_bounds;
    // the body walked with the parameters in scope, then wrapped again
    let mut term = rebuild_scoped(&mut w, body);
    for (v, ty) in params.iter().zip(lams).rev() {
        term = w.store.intern(Node::Lam(*v, term), ty);
    }
    Decided {
        term,
        decided: w.decided,
        labels: if w.state_read.get() { labels } else { None },
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
    /// The program's parameters (what a restricted table's column may read).
    params: Vec<VarId>,
    /// Whether any interval read the state's assumed labels (a query takes `&self`):
    /// a decision, a loop's range, a branch's narrowing or a table's column may rest on
    /// it, so any use asks the driver to check the labels.
    state_read: Cell<bool>,
    decided: usize,
    /// Whether a state read's upper bound test is decided ([`decide_data`]).
    state_bounds: bool,
}

impl ScopedRewrite for Walker<'_> {
    type Saved = (FxHashMap<VarId, Known>, u64);

    fn store(&mut self) -> &mut Store {
        self.store
    }

    fn epoch(&self) -> u64 {
        self.epoch
    }

    fn memo(&mut self) -> &mut FxHashMap<(TermId, u64), TermId> {
        &mut self.memo
    }

    fn enter(&mut self, node: &Node, i: usize, bound: &[VarId]) -> Option<Self::Saved> {
        let last = i + 1 == node.children().len();
        let range = match *node {
            Node::Array(v, n, _) if last => Some((v, self.interval(n).map(|(_, hi)| (0, hi - 1)))),
            Node::Summate(v, lo, hi, _)
            | Node::Product(v, lo, hi, _)
            | Node::Bucket(v, lo, hi, _)
                if last =>
            {
                let r = match (self.interval(lo), self.interval(hi)) {
                    (Some((l, _)), Some((_, h))) => Some((l, h - 1)),
                    _ => None,
                };
                Some((v, r))
            }
            // a branch: what its test says of a variable
            Node::If(test, _, _) if i > 0 => self.refine(test, i == 1),
            _ => None,
        };
        (!bound.is_empty() || range.is_some()).then(|| self.enter_scope(bound, range))
    }

    fn leave(&mut self, (env, epoch): Self::Saved) {
        self.env = env;
        self.epoch = epoch;
    }

    fn fold(&mut self, node: Node, ty: Type) -> TermId {
        self.fold_node(node, ty)
    }
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
            params: Vec::new(),
            state_read: Cell::new(false),
            decided: 0,
            state_bounds: true,
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

    /// Shadows the variables of `bound`, then records a loop variable's range (an empty
    /// range leaves it unknown: the body never runs). Returns what to restore.
    fn enter_scope(
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

    /// What `test` being `truth` says of a variable's interval: `v < e`, `v <= e`,
    /// `e < v`, `e <= v` narrow `v` by `e`'s interval (`None` when it says nothing, or
    /// leaves nothing: a branch that never runs keeps what is known outside it).
    fn refine(&self, test: TermId, truth: bool) -> Option<(VarId, Option<Interval>)> {
        let Node::Prim(op @ (Prim::Lt | Prim::Le), args) = self.store.node(test) else {
            return None;
        };
        let var = |t: TermId| match self.store.node(t) {
            Node::Var(v) => match self.env.get(v) {
                Some(Known::Scalar(i)) => Some((*v, *i)),
                _ => None,
            },
            _ => None,
        };
        // `a < b` true, or `a <= b` false (`b < a`), puts a below b: strictly when
        // `strict`
        let (below, strict) = match (op, truth) {
            (Prim::Lt, true) => (true, true),
            (Prim::Le, true) => (true, false),
            (Prim::Lt, false) => (false, false),
            _ => (false, true),
        };
        let gap = i128::from(strict);
        let ((v, (lo, hi)), e, v_below) = match (var(args[0]), var(args[1])) {
            (Some(x), _) => (x, args[1], below),
            (None, Some(x)) => (x, args[0], !below),
            _ => return None,
        };
        let (elo, ehi) = self.interval(e)?;
        // v below e: v <= ehi - gap; v above e: v >= elo + gap
        let narrowed = if v_below {
            (lo, hi.min(ehi - gap))
        } else {
            (lo.max(elo + gap), hi)
        };
        (narrowed.0 <= narrowed.1).then_some((v, Some(narrowed)))
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
    fn fold_node(&mut self, node: Node, ty: Type) -> TermId {
        let lit = |store: &Store, t: TermId| match store.node(t) {
            Node::Lit(r) => r.to_i64(),
            _ => None,
        };
        match &node {
            Node::Prim(Prim::Lt | Prim::Le, args)
                if !self.state_bounds && self.reads_state(args[0]) =>
            {
                self.store.intern(node, ty)
            }
            Node::Prim(op @ (Prim::Lt | Prim::Le | Prim::Eq | Prim::Ne), args)
                if args.len() == 2 =>
            {
                let decided = match (self.interval(args[0]), self.interval(args[1])) {
                    (Some(a), Some(b)) => compare(*op, a, b),
                    _ => None,
                };
                match decided {
                    Some(v) => {
                        self.decided += 1;
                        self.store.intern(Node::Bool(v), Type::Bool)
                    }
                    None => self.store.intern(node, ty),
                }
            }
            Node::Let(h, table, body) => self
                .restrict(*h, *table, *body, &ty)
                .unwrap_or_else(|| self.store.intern(node, ty)),
            Node::Prim(Prim::Recip, a) if a.len() == 1 && lit(self.store, a[0]) == Some(1) => a[0],
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

impl Walker<'_> {
    /// Is `t` a read of the state, `z[e]`?
    fn reads_state(&self, t: TermId) -> bool {
        match self.store.node(t) {
            Node::Index(a, _) => {
                matches!(self.store.node(*a), Node::Var(v) if Some(*v) == self.state)
            }
            _ => false,
        }
    }

    /// `h = bucket j from lo to hi: r_index b = n * d of idx: r` in `body`, where `body`
    /// reads `h` only at `h[row * d + col]`, one `col` closed over the parameters: only
    /// column `col` built, `r_index b = n of idx'` with each bucket `x * d + e` of `idx`
    /// written `if e == col: x else n` (and its out-of-range `n * d`, `n`), read at
    /// `h[row]`. Exact where the intervals show `e` and `col` below `d`: then
    /// `x * d + e == row * d + col` exactly when `e == col` and `x == row`. LDA's
    /// document-by-topic table, read at the updated token's document, becomes one row.
    fn restrict(&mut self, h: VarId, table: TermId, body: TermId, ty: &Type) -> Option<TermId> {
        let Node::Bucket(j, lo, hi, r) = *self.store.node(table) else {
            return None;
        };
        let Node::RIndex(b, size, idx, inner) = *self.store.node(r) else {
            return None;
        };
        let Node::Prim(Prim::Mul, f) = self.store.node(size) else {
            return None;
        };
        let &[n, d] = f.as_slice() else {
            return None;
        };
        if vars::mentions_any(self.store, inner, &[b]) {
            return None;
        }
        let (dlo, _) = self.interval(d)?;
        // the reads, each `h[row * d + col]`, rewritten `h2[row]` (a name of its own, so
        // that any other use of `h` shows)
        let hv = self.store.var_term(h);
        let name = self.store.var_name(h).to_string();
        let h2 = self.store.fresh_var(&name, self.store.var_type(h).clone());
        let h2v = self.store.var_term(h2);
        let mut col: Option<TermId> = None;
        let mut ok = true;
        let new_body = self.store.rebuild(body, &mut |store, _, node| {
            let Node::Index(a, e) = node else {
                return None;
            };
            if *a != hv {
                return None;
            }
            match split_row(store, *e, d) {
                Some((row, c)) if col.is_none_or(|k| k == c) => {
                    col = Some(c);
                    let ty = store.ty(hv).array_of().cloned()?;
                    Some(store.intern(Node::Index(h2v, row), ty))
                }
                _ => {
                    ok = false;
                    None
                }
            }
        });
        let col = col?;
        if !ok || vars::mentions_any(self.store, new_body, &[h]) {
            return None;
        }
        // the column read: the same value at every read, and below d
        let params: Vec<VarId> = self.params.clone();
        if !vars::free_vars(self.store, col)
            .iter()
            .all(|v| params.contains(v))
        {
            return None;
        }
        if self
            .interval(col)
            .is_none_or(|(lo, hi)| lo < 0 || hi >= dlo)
        {
            return None;
        }
        // the buckets, under the loop's range
        let range = match (self.interval(lo), self.interval(hi)) {
            (Some((l, _)), Some((_, hh))) if l < hh => Some((l, hh - 1)),
            _ => None,
        };
        let saved = self.enter_scope(&[j], Some((j, range)));
        let new_idx = self.column_buckets(idx, n, d, size, col, dlo);
        self.leave(saved);
        let new_idx = new_idx?;
        let rty = self.store.ty(r).clone();
        let r2 = self.store.intern(Node::RIndex(b, n, new_idx, inner), rty);
        let bty = self.store.ty(table).clone();
        let t2 = self.store.intern(Node::Bucket(j, lo, hi, r2), bty);
        self.decided += 1;
        Some(self.store.intern(Node::Let(h2, t2, new_body), ty.clone()))
    }

    /// `idx` with each leaf bucket `x * d + e` written `if e == col: x else n`, and the
    /// out-of-range leaf `n * d` written `n`; `None` for another leaf or an `e` not
    /// provably below `d` (`dlo`, its least value).
    fn column_buckets(
        &mut self,
        idx: TermId,
        n: TermId,
        d: TermId,
        size: TermId,
        col: TermId,
        dlo: i128,
    ) -> Option<TermId> {
        if idx == size {
            return Some(n);
        }
        let ty = self.store.ty(idx).clone();
        match self.store.node(idx).clone() {
            Node::If(c, a, b) => {
                let a = self.column_buckets(a, n, d, size, col, dlo)?;
                let b = self.column_buckets(b, n, d, size, col, dlo)?;
                Some(self.store.intern(Node::If(c, a, b), ty))
            }
            Node::Let(v, e, body) => {
                let saved = self.enter_scope(&[v], None);
                let body = self.column_buckets(body, n, d, size, col, dlo);
                self.leave(saved);
                Some(self.store.intern(Node::Let(v, e, body?), ty))
            }
            _ => {
                let (x, e) = split_row(self.store, idx, d)?;
                let (elo, ehi) = self.interval(e)?;
                if elo < 0 || ehi >= dlo {
                    return None;
                }
                let same = self.store.prim(Prim::Eq, vec![e, col], Type::Bool);
                Some(self.store.intern(Node::If(same, x, n), ty))
            }
        }
    }
}

/// `row * d + col` (in either order) as `(row, col)`.
fn split_row(store: &Store, e: TermId, d: TermId) -> Option<(TermId, TermId)> {
    let Node::Prim(Prim::Add, terms) = store.node(e) else {
        return None;
    };
    let &[p, q] = terms.as_slice() else {
        return None;
    };
    let row_of = |t: TermId| match store.node(t) {
        Node::Prim(Prim::Mul, f) if f.len() == 2 && f[1] == d => Some(f[0]),
        Node::Prim(Prim::Mul, f) if f.len() == 2 && f[0] == d => Some(f[1]),
        _ => None,
    };
    match (row_of(p), row_of(q)) {
        (Some(r), _) => Some((r, q)),
        (None, Some(r)) => Some((r, p)),
        _ => None,
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
