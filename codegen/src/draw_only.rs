//! Draw-only updates (issues 12 and 13): a Gibbs update's products common to every
//! proposed label, dropped where a cheap test on the parameters shows them positive and
//! finite.
//!
//! After the point split a Gibbs update evaluates, per update, products over every class
//! that all proposals share: the split writes `Π_l g(l, i)` as `let all = Π_l g(l) in let
//! q = g(i) in if 0 < q < ∞: all / q else: Π_{l /= i} g(l)` times the point's own factor
//! (sums inside an `exp` alike, `all - q`). Naive Bayes' `Π_l Π_w Γ(β_w + n_lw)` is a
//! million `lgamma`s per update; only the measure's mass needs it. A Gibbs driver draws
//! from the normalised measure and needs of its mass only whether it is zero: a measure
//! scaled by a constant in `(0, ∞)` is, for it, the same measure.
//!
//! [`draw_only`] finds the `all`s whose products (or sums) are closed over the program's
//! parameters and a range analysis bounds: in `(0, ∞)` with a finite logarithm (sums:
//! finite), and each split's `q` likewise, under a condition on the parameters alone
//! (every element of a prob array in `[10^-30, 10^30]`, a real one within `±10^30`, and
//! so on; counts are bounded by their type). Under that condition every split's test
//! holds, so its `if` is its quotient, and the program is a function of the symbol `all`
//! that is homogeneous: the mass's weight `W` and every categorical weight `A[i]` are
//! `all^d` times themselves at `all = 1` (an `all` of a sum appears as `exp(d · all)`),
//! with `d` the same for every label (a degree analysis on the term: products add
//! degrees, sums and branches must agree, `exp` reads the sum's coefficient, anything else
//! that reads `all` refuses). Then `all := 1` (sums: `0`) scales the measure by a constant
//! in `(0, ∞)`, and the products are never evaluated.
//!
//! The result is a second program with the same parameters and a condition program: the
//! driver evaluates the condition once on its data (it reads no label and no index) and
//! runs the draw-only program where it holds, the full one elsewhere. The draw-only
//! program's distribution of each label is the full one's up to a positive factor; its
//! mass is zero exactly where the full one's is; it is defined wherever the full one is
//! (it evaluates less, never more).

use rustc_hash::{FxHashMap, FxHashSet};
use slic_algebra::alpha::alpha_eq;
use slic_algebra::vars::{self, FreeVars};
use slic_algebra::{stack, Coercion, Dist, Node, Prim, Rational, Store, TermId, Type, VarId};

use crate::split::{divisor_test, is_one, real_finite, total};

/// A Gibbs update without its common products, and where that is exact.
#[derive(Clone, Debug)]
pub struct DrawOnly {
    /// The program (same parameters and type) with every accepted `all` set to its unit.
    pub term: TermId,
    /// `fn params: bool`: where it is true the draw-only program's measure is the full
    /// program's times a constant in `(0, ∞)`.
    pub condition: TermId,
    /// How many common products or sums were dropped.
    pub dropped: usize,
}

impl DrawOnly {
    /// `t` (a program) as it is: nothing dropped, its condition `true`.
    pub fn unchanged(store: &mut Store, t: TermId) -> DrawOnly {
        let (params, _) = lambdas(store, t);
        let yes = store.intern(Node::Bool(true), Type::Bool);
        DrawOnly {
            term: t,
            condition: wrap(store, &params, yes),
            dropped: 0,
        }
    }
}

/// The draw-only form of a summarized update program (its `fn` parameters around a
/// measure), or `None` when no common product can be dropped.
pub fn draw_only(store: &mut Store, t: TermId) -> Option<DrawOnly> {
    let (params, body) = lambdas(store, t);
    if !matches!(store.ty(body), Type::Measure(_)) {
        return None;
    }
    let buckets = buckets(store, body);
    let mut d = Dropper {
        store,
        params: params.iter().copied().collect(),
        constants: FxHashSet::default(),
        buckets,
        fv: FreeVars::new(),
        conds: Vec::new(),
    };
    // one symbol at a time, each checked on the term the drops before it left (so the
    // drops together are a product of constants in (0, ∞)): first the splits' `all`s,
    // then any other product (or gamma function) every weight shares, outermost first,
    // then products that read what varies with the label only at one point `a`, split
    // there (`Π_l B(l) = Π_l g(l) · (if a is in range: B(a) / g(a) else: 1)`), then gamma
    // functions shifted by one at a label (`Γ(x + [b]) = Γ(x) · (if b: x else: 1)`)
    let mut current = body;
    let mut tried: FxHashSet<TermId> = FxHashSet::default();
    let mut conds: Vec<TermId> = Vec::new();
    let mut dropped = 0;
    for phase in [Phase::Splits, Phase::Products, Phase::Points, Phase::Shifts] {
        loop {
            let scan = d.scan(current);
            d.constants = scan.constants.clone();
            let next = match phase {
                Phase::Splits => d.next_split(current, &scan, &tried),
                Phase::Products => d.next_product(current, &scan, &tried),
                Phase::Points => d.next_point_product(current, &tried),
                Phase::Shifts => d.next_shift(current, &tried),
            };
            let Some(c) = next else {
                break;
            };
            tried.insert(c.key);
            let trial = match c.replace {
                Some((product, split)) => d.store.rebuild(current, &mut |_, orig, _| {
                    (orig == product).then_some(split)
                }),
                None => d.resolve(current, &c.sites),
            };
            if homogeneous(d.store, &scan.constants, c.symbol, c.index, trial) {
                current = d.drop_symbol(trial, c.symbol);
                dropped += 1;
                union(d.store, &mut conds, c.conds);
            }
        }
    }
    if dropped == 0 {
        return None;
    }
    // what the condition decides besides: `0 < x` of a bounded positive `x` (the gamma
    // ratios' tests), and the point products those leave
    d.conds.clear();
    current = d.settle(current);
    current = d.drop_masses(current);
    let settled = std::mem::take(&mut d.conds);
    union(d.store, &mut conds, settled);
    let cond = match conds.len() {
        0 => d.store.intern(Node::Bool(true), Type::Bool),
        1 => conds[0],
        _ => d.store.prim(Prim::And, conds, Type::Bool),
    };
    let term = wrap(d.store, &params, current);
    let condition = wrap(d.store, &params, cond);
    Some(DrawOnly {
        term,
        condition,
        dropped,
    })
}

/// The draw-only program `d` with its products' `real2prob` factors merged
/// ([`crate::logs::merge_logs_with`]; its one merging pass: `lower_draw_only` does not
/// merge again), each factor the range analysis bounds positive, within `10^±k`, merged
/// without a run-time test, the conditions that assumed joined to `d`'s condition (so the
/// program still runs only where they hold). How many factors went untested is returned
/// beside it.
pub fn bounded_logs(store: &mut Store, d: DrawOnly) -> (DrawOnly, usize) {
    let (params, body) = lambdas(store, d.term);
    let (_, cond) = lambdas(store, d.condition);
    let buckets = buckets(store, body);
    let param_set: FxHashSet<VarId> = params.iter().copied().collect();
    let mut conds: Vec<TermId> = Vec::new();
    let merged = crate::logs::merge_logs_with(store, body, &mut |store, t| {
        let mut b = Bounds {
            store,
            params: &param_set,
            buckets: &buckets,
            conds: Vec::new(),
        };
        let mut env = FxHashMap::default();
        match b.range(t, &mut env) {
            Some(Range::Pos { lo, hi }) => {
                let more = std::mem::take(&mut b.conds);
                // 10^k < 2^(10k/3)
                let bits = u32::try_from(lo.max(hi)).ok()?.checked_mul(10)? / 3 + 1;
                union(b.store, &mut conds, more);
                Some(bits)
            }
            _ => None,
        }
    });
    // the condition grows only where a factor went untested on what it assumed
    let cond = if merged.untested == 0 {
        cond
    } else {
        let mut all = vec![cond];
        all.extend(conds);
        store.prim(Prim::And, all, Type::Bool)
    };
    (
        DrawOnly {
            term: wrap(store, &params, merged.term),
            condition: wrap(store, &params, cond),
            dropped: d.dropped,
        },
        merged.untested,
    )
}

/// What one scan of the term knows: its `let`s, the names fixed for a call, the product
/// indices.
struct Scan {
    /// What each `let` binds (a name bound to two different values, as passes may copy a
    /// binder, is left out, so a split's `all` is always the one product it names).
    lets: FxHashMap<VarId, TermId>,
    /// The parameters, and the names bound to values that read only such names (a
    /// histogram bound once outside the loops).
    constants: FxHashSet<VarId>,
    /// The index of every product.
    products: FxHashSet<VarId>,
}

/// The kinds of symbol, tried in this order.
#[derive(Clone, Copy)]
enum Phase {
    Splits,
    Products,
    Points,
    Shifts,
}

/// `conds` with the conditions of `more` it lacks (equal up to their bound names: each
/// array's condition binds a fresh index).
fn union(store: &Store, conds: &mut Vec<TermId>, more: Vec<TermId>) {
    for c in more {
        if !conds.iter().any(|&d| d == c || alpha_eq(store, d, c)) {
            conds.push(c);
        }
    }
}

/// A symbol to try: its splits (none for a plain product), its index, its conditions;
/// for a product split at its point, the product and what replaces it (`Π_l g(l)`, the
/// symbol, times the point's quotient). `key` is what is not tried again.
struct Candidate {
    key: TermId,
    symbol: TermId,
    sites: Vec<Site>,
    index: Option<VarId>,
    conds: Vec<TermId>,
    replace: Option<(TermId, TermId)>,
}

/// The parameters of a program (`fn` binders around a body) and its body.
fn lambdas(store: &Store, t: TermId) -> (Vec<VarId>, TermId) {
    let mut params = Vec::new();
    let mut body = t;
    while let Node::Lam(x, b) = *store.node(body) {
        params.push(x);
        body = b;
    }
    (params, body)
}

/// The histograms `body` binds, by name: their reducers.
fn buckets(store: &Store, body: TermId) -> FxHashMap<VarId, TermId> {
    store
        .subterms(body)
        .filter_map(|t| match *store.node(t) {
            Node::Let(x, e, _) => match *store.node(e) {
                Node::Bucket(_, _, _, r) => Some((x, r)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `fn params: body`.
fn wrap(store: &mut Store, params: &[VarId], body: TermId) -> TermId {
    let mut out = body;
    for &x in params.iter().rev() {
        let ty = Type::fun(store.var_type(x).clone(), store.ty(out).clone());
        out = store.intern(Node::Lam(x, out), ty);
    }
    out
}

/// One point split's test, of a product (`all / q`) or of a real sum (`all - q`).
#[derive(Clone, Copy, Debug)]
struct Site {
    /// `let q = Q in if test: all ⊙ q⁻¹ else: others`.
    term: TermId,
    /// The product (or sum) over every class.
    all: TermId,
    /// The proposed class's factor (or summand).
    q: TermId,
    /// The quotient (or difference) of the split's fast branch.
    quotient: TermId,
    real: bool,
}

/// Parameters are bounded by `10^±PARAM`.
const PARAM: i32 = 30;
/// Every bound stays within `10^±CAP`, far inside a double's range (`10^±308`).
const CAP: i32 = 300;
/// A count or a loop's trip count is below `2^64 < 10^20`.
const COUNT: i32 = 20;

/// What the range analysis knows of a numeric term's value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Range {
    /// `0 <= x <= 10^hi`.
    NonNeg { hi: i32 },
    /// `10^-lo <= x <= 10^hi`.
    Pos { lo: i32, hi: i32 },
    /// `|x| <= 10^mag`.
    Fin { mag: i32 },
    /// A prob in `(0, ∞)` with `|ln x| <= 10^l`.
    LogFin { l: i32 },
}

impl Range {
    fn capped(self) -> Option<Range> {
        let ok = match self {
            Range::NonNeg { hi } => hi <= CAP,
            Range::Pos { lo, hi } => lo <= CAP && hi <= CAP,
            Range::Fin { mag } => mag <= CAP,
            Range::LogFin { l } => l <= CAP,
        };
        ok.then_some(self)
    }

    /// `|x| <= 10^mag` for a value that is not a prob of unbounded magnitude.
    fn mag(self) -> Option<i32> {
        match self {
            Range::NonNeg { hi } | Range::Pos { hi, .. } => Some(hi),
            Range::Fin { mag } => Some(mag),
            Range::LogFin { .. } => None,
        }
    }

    /// `|ln x| <= 10^l` for a positive value.
    fn log(self) -> Option<i32> {
        match self {
            // ln of a value within 10^±300 is below 700 in magnitude
            Range::Pos { .. } => Some(3),
            Range::LogFin { l } => Some(l),
            _ => None,
        }
    }

    fn nonneg_hi(self) -> Option<i32> {
        match self {
            Range::NonNeg { hi } | Range::Pos { hi, .. } => Some(hi),
            _ => None,
        }
    }
}

struct Dropper<'s> {
    store: &'s mut Store,
    params: FxHashSet<VarId>,
    /// The names fixed for a call: the parameters and names bound once to their functions.
    constants: FxHashSet<VarId>,
    /// The histograms the program binds, by name: their reducers.
    buckets: FxHashMap<VarId, TermId>,
    fv: FreeVars,
    /// The conditions the current range analysis assumed.
    conds: Vec<TermId>,
}

impl Dropper<'_> {
    /// `t` as a split's test: `let q = Q in if test(q): all ⊙ q⁻¹ else: others`, where
    /// `all` is bound to `P` around it (by the split itself, or by the gamma ratios'
    /// rewrite that moved it out: [`crate::ratios`]).
    fn site(&mut self, t: TermId, lets: &FxHashMap<VarId, TermId>) -> Option<Site> {
        let Node::Let(q_v, q, pick) = *self.store.node(t) else {
            return None;
        };
        let Node::If(test, fast, _) = *self.store.node(pick) else {
            return None;
        };
        let real = match self.store.ty(t) {
            Type::Prob => false,
            Type::Real => true,
            _ => return None,
        };
        let (all_v, inv) = match self.store.node(fast) {
            Node::Prim(Prim::Mul, args) if !real && args.len() == 2 => (args[0], args[1]),
            Node::Prim(Prim::Add, args) if real && args.len() == 2 => (args[0], args[1]),
            _ => return None,
        };
        let Node::Var(all_v) = *self.store.node(all_v) else {
            return None;
        };
        let all = *lets.get(&all_v)?;
        let q_t = self.store.var_term(q_v);
        let all_t = self.store.var_term(all_v);
        let (want_test, want_fast) = if real {
            let minus = self.store.prim(Prim::Neg, vec![q_t], Type::Real);
            let diff = self.store.prim(Prim::Add, vec![all_t, minus], Type::Real);
            (real_finite(self.store, q_t), diff)
        } else {
            let inv = self.store.prim(Prim::Recip, vec![q_t], Type::Prob);
            let quot = self.store.prim(Prim::Mul, vec![all_t, inv], Type::Prob);
            (divisor_test(self.store, q_t), quot)
        };
        let _ = inv;
        (test == want_test && fast == want_fast).then_some(Site {
            term: t,
            all,
            q,
            quotient: fast,
            real,
        })
    }

    /// Does the range analysis bound `t` as a split needs (a prob positive with a finite
    /// logarithm, a real finite)? The conditions it assumes are added to `self.conds`.
    fn bounded(&mut self, t: TermId, real: bool) -> bool {
        let mut b = Bounds {
            store: self.store,
            params: &self.params,
            buckets: &self.buckets,
            conds: Vec::new(),
        };
        let ok = b.bounded(t, real);
        if ok {
            self.conds.extend(b.conds);
        }
        ok
    }

    /// `Some(None)` where `t` reads nothing but names fixed for a call (parameters, and
    /// names bound once to what reads only those), `Some(Some(l))` where it reads one other
    /// name, the index `l` of a product.
    fn index_of(&mut self, t: TermId, products: &FxHashSet<VarId>) -> Option<Option<VarId>> {
        let others: Vec<VarId> = self
            .fv
            .of(self.store, t)
            .iter()
            .copied()
            .filter(|v| !self.constants.contains(v))
            .collect();
        match others.as_slice() {
            [] => Some(None),
            [l] if products.contains(l) => Some(Some(*l)),
            _ => None,
        }
    }

    fn scan(&mut self, t: TermId) -> Scan {
        let mut lets: FxHashMap<VarId, TermId> = FxHashMap::default();
        let mut twice: FxHashSet<VarId> = FxHashSet::default();
        let mut products = FxHashSet::default();
        for s in self.store.subterms(t) {
            match *self.store.node(s) {
                Node::Let(x, e, _) if *lets.entry(x).or_insert(e) != e => {
                    twice.insert(x);
                }
                Node::Product(l, ..) => {
                    products.insert(l);
                }
                _ => {}
            }
        }
        lets.retain(|x, _| !twice.contains(x));
        let mut constants = self.params.clone();
        loop {
            let before = constants.len();
            for (&x, &e) in &lets {
                if !constants.contains(&x)
                    && self
                        .fv
                        .of(self.store, e)
                        .iter()
                        .all(|v| constants.contains(v))
                {
                    constants.insert(x);
                }
            }
            if constants.len() == before {
                break;
            }
        }
        Scan {
            lets,
            constants,
            products,
        }
    }

    /// The next untried `all` of splits whose `all` and `q` are bounded.
    fn next_split(
        &mut self,
        t: TermId,
        scan: &Scan,
        tried: &FxHashSet<TermId>,
    ) -> Option<Candidate> {
        let mut out: Option<Candidate> = None;
        for s in self.store.subterms(t).collect::<Vec<_>>() {
            let Some(site) = self.site(s, &scan.lets) else {
                continue;
            };
            if tried.contains(&site.all) || out.as_ref().is_some_and(|c| c.symbol != site.all) {
                continue;
            }
            // closed over the names fixed for a call, or over them and one product's
            // index (the product of such products over it is then the constant dropped)
            let Some(index) = self.index_of(site.all, &scan.products) else {
                continue;
            };
            if index.is_some() && site.real {
                continue;
            }
            self.conds.clear();
            if !(self.bounded(site.all, site.real) && self.bounded(site.q, site.real)) {
                continue;
            }
            let c = out.get_or_insert_with(|| Candidate {
                key: site.all,
                symbol: site.all,
                sites: Vec::new(),
                index,
                conds: Vec::new(),
                replace: None,
            });
            c.sites.push(site);
            c.conds.extend(self.conds.iter().copied());
        }
        out
    }

    /// The next untried product or gamma function, outermost first, that is fixed for a
    /// call (or reads one product's index besides) and bounded.
    fn next_product(
        &mut self,
        t: TermId,
        scan: &Scan,
        tried: &FxHashSet<TermId>,
    ) -> Option<Candidate> {
        for s in self.store.subterms(t).collect::<Vec<_>>() {
            if tried.contains(&s)
                || !matches!(
                    self.store.node(s),
                    Node::Product(..) | Node::Prim(Prim::GammaFunc, _)
                )
                || *self.store.ty(s) != Type::Prob
            {
                continue;
            }
            let Some(index) = self.index_of(s, &scan.products) else {
                continue;
            };
            self.conds.clear();
            if self.bounded(s, false) {
                return Some(Candidate {
                    key: s,
                    symbol: s,
                    sites: Vec::new(),
                    index,
                    conds: self.conds.clone(),
                    replace: None,
                });
            }
        }
        None
    }

    /// `t` with what the parameters' bounds decide decided (the conditions assumed added
    /// to `self.conds`): `0 < x` where `x` is bounded positive is true; then the tests and
    /// loops that leaves folded: `if true`, `&&`/`||` of a literal, `Σ 0`, `1 · x`, a
    /// product of one point ([`point_product`]) and a product of a test free of its
    /// index ([`unswitch_product`]).
    fn settle(&mut self, t: TermId) -> TermId {
        let mut conds = Vec::new();
        let out = self.store.rebuild(t, &mut |store, _, node| {
            let ty = |store: &Store, x: TermId| store.ty(x).clone();
            match node {
                Node::Prim(Prim::Lt, args) if args.len() == 2 && is_lit_zero(store, args[0]) => {
                    let x = args[1];
                    let mut b = Bounds {
                        store,
                        params: &self.params,
                        buckets: &self.buckets,
                        conds: Vec::new(),
                    };
                    if !b.bounded(x, false) {
                        return None;
                    }
                    conds.extend(b.conds);
                    Some(store.intern(Node::Bool(true), Type::Bool))
                }
                Node::If(c, a, b) => match store.node(*c) {
                    Node::Bool(true) => Some(*a),
                    Node::Bool(false) => Some(*b),
                    _ if a == b => Some(*a),
                    _ => None,
                },
                Node::Prim(op @ (Prim::And | Prim::Or), args) => {
                    let (absorb, unit) = if *op == Prim::And {
                        (false, true)
                    } else {
                        (true, false)
                    };
                    // an absorbing literal decides it (what precedes it is then not
                    // evaluated: the draw-only program evaluates less, never more)
                    if args
                        .iter()
                        .any(|&a| matches!(store.node(a), Node::Bool(v) if *v == absorb))
                    {
                        return Some(store.intern(Node::Bool(absorb), Type::Bool));
                    }
                    let kept: Vec<TermId> = args
                        .iter()
                        .copied()
                        .filter(|&a| !matches!(store.node(a), Node::Bool(v) if *v == unit))
                        .collect();
                    if kept.len() == args.len() {
                        return None;
                    }
                    Some(match kept.len() {
                        0 => store.intern(Node::Bool(unit), Type::Bool),
                        1 => kept[0],
                        _ => store.prim(*op, kept, Type::Bool),
                    })
                }
                Node::Prim(Prim::Eq, args)
                    if args.len() == 2
                        && matches!(
                            (store.node(args[0]), store.node(args[1])),
                            (Node::Lit(_), Node::Lit(_))
                        ) =>
                {
                    let eq = store.node(args[0]) == store.node(args[1]);
                    Some(store.intern(Node::Bool(eq), Type::Bool))
                }
                Node::Summate(_, _, _, body) if is_lit_zero(store, *body) => Some(*body),
                Node::Prim(Prim::Mul, args) => {
                    let kept: Vec<TermId> = args
                        .iter()
                        .copied()
                        .filter(|&a| !matches!(store.node(a), Node::Lit(v) if v.is_one()))
                        .collect();
                    match kept.len() {
                        n if n == args.len() => None,
                        0 => Some(store.int_lit(1, ty(store, args[0]))),
                        1 => Some(kept[0]),
                        _ => Some(store.prim(Prim::Mul, kept, ty(store, args[0]))),
                    }
                }
                Node::Product(l, lo, hi, body) => point_product(store, *l, *lo, *hi, *body)
                    .or_else(|| unswitch_product(store, *l, *lo, *hi, *body)),
                _ => None,
            }
        });
        self.conds.extend(conds);
        out
    }

    /// Every `weight(W, categorical(array i of n: tab[i] · H(i)))` whose mass `W` is
    /// `G · Σ_{l<n} tab[l] · C` (the weights' own sum, as [`crate::share`] leaves it) with
    /// `C` and every `H(i)` bounded positive (or `n`'s own `1/n`) keeps of its mass only
    /// `G`, and of its weights only `tab[i]`: the mass is then zero exactly where it was
    /// (where every weight is, the categorical is the zero measure) and otherwise a
    /// constant in `(0, ∞)` apart, and the categorical normalises its weights.
    fn drop_masses(&mut self, t: TermId) -> TermId {
        let mut conds = Vec::new();
        let out = self.store.rebuild(t, &mut |store, _, node| {
            let Node::Weight(w, m) = *node else {
                return None;
            };
            let arr = match store.node(m) {
                Node::Dist(Dist::Categorical, args) if args.len() == 1 => args[0],
                _ => return None,
            };
            let Node::Array(i, n, body) = *store.node(arr) else {
                return None;
            };
            let mut d = Bounds {
                store,
                params: &self.params,
                buckets: &self.buckets,
                conds: Vec::new(),
            };
            // the weights: one `tab[i]`, the rest bounded positive
            let i_t = d.store.var_term(i);
            let mut tab = None;
            for f in factors(d.store, body) {
                let read = match *d.store.node(f) {
                    Node::Index(a, ix) if ix == i_t && tab.is_none() => Some(a),
                    _ => None,
                };
                match read {
                    Some(a) => tab = Some((a, f)),
                    None if d.factor_positive(f, n) => {}
                    None => return None,
                }
            }
            let (tab, read) = tab?;
            if vars::mentions(d.store, tab, i) {
                return None;
            }
            // the mass: the weights' sum, bounded positive factors, and what is kept
            let mut kept = Vec::new();
            let mut summed = false;
            for f in factors(d.store, w) {
                if let Node::Summate(l, lo, hi, b) = *d.store.node(f) {
                    let l_t = d.store.var_term(l);
                    if !summed
                        && is_lit_zero(d.store, lo)
                        && hi == n
                        && *d.store.node(b) == Node::Index(tab, l_t)
                    {
                        summed = true;
                        continue;
                    }
                }
                if !d.factor_positive(f, n) {
                    kept.push(f);
                }
            }
            if !summed {
                return None;
            }
            conds.extend(d.conds);
            let store = d.store;
            let weights = store.intern(Node::Array(i, n, read), store.ty(arr).clone());
            let cat = store.intern(
                Node::Dist(Dist::Categorical, vec![weights]),
                store.ty(m).clone(),
            );
            Some(match kept.len() {
                0 => cat,
                1 => store.intern(Node::Weight(kept[0], cat), store.ty(m).clone()),
                _ => {
                    let g = store.prim(Prim::Mul, kept, Type::Prob);
                    store.intern(Node::Weight(g, cat), store.ty(m).clone())
                }
            })
        });
        self.conds.extend(conds);
        out
    }

    /// The next untried product `Π_{l=lo}^{hi-1} B(l)` that reads a name not fixed for the
    /// call, whose tests `l == a` all name one point `a` fixed for the call, and which off
    /// that point (`g`: the tests false) reads only names fixed for the call and is
    /// bounded positive: rewritten `Π_l g(l) · (if def(a) && lo <= a && a < hi: B(a) ·
    /// recip(g(a)) else: 1)`, exact where `g(a)` is in `(0, ∞)` (which the bounds show),
    /// `def(a)` being where `a` is defined.
    fn next_point_product(&mut self, t: TermId, tried: &FxHashSet<TermId>) -> Option<Candidate> {
        for p in self.store.subterms(t).collect::<Vec<_>>() {
            let Node::Product(l, lo, hi, body) = *self.store.node(p) else {
                continue;
            };
            if tried.contains(&p) || *self.store.ty(p) != Type::Prob {
                continue;
            }
            let fixed = |d: &mut Self, x: TermId| {
                let fv = d.fv.of(d.store, x).to_vec();
                fv.iter().all(|v| *v == l || d.constants.contains(v))
            };
            if fixed(self, body) || !fixed(self, lo) || !fixed(self, hi) {
                continue;
            }
            // the point tests
            let l_t = self.store.var_term(l);
            let mut tests = Vec::new();
            let mut point = None;
            let mut one_point = true;
            for x in self.store.subterms(body).collect::<Vec<_>>() {
                let a = match self.store.node(x) {
                    Node::Prim(Prim::Eq, args) if args.len() == 2 && args[0] == l_t => args[1],
                    Node::Prim(Prim::Eq, args) if args.len() == 2 && args[1] == l_t => args[0],
                    _ => continue,
                };
                if vars::mentions(self.store, a, l) || !fixed(self, a) {
                    one_point = false;
                    break;
                }
                match point {
                    None => point = Some(a),
                    Some(b) if b == a => {}
                    Some(_) => {
                        one_point = false;
                        break;
                    }
                }
                tests.push(x);
            }
            let (true, Some(a)) = (one_point, point) else {
                continue;
            };
            let no = self.store.intern(Node::Bool(false), Type::Bool);
            let mut g = body;
            for x in tests {
                g = vars::replace_free(self.store, g, x, no);
            }
            self.conds.clear();
            let g = self.settle(g);
            if !fixed(self, g) || !self.bounded(g, false) {
                continue;
            }
            let Some(defined) = crate::split::defined_cond(self.store, a) else {
                continue;
            };
            let ty = Type::Prob;
            let symbol = self.store.intern(Node::Product(l, lo, hi, g), ty.clone());
            if !self.bounded(symbol, false) {
                continue;
            }
            let b_a = vars::substitute1(self.store, body, l, a);
            let g_a = vars::substitute1(self.store, g, l, a);
            let inv = self.store.prim(Prim::Recip, vec![g_a], ty.clone());
            let quotient = self.store.prim(Prim::Mul, vec![b_a, inv], ty.clone());
            let above = self.store.prim(Prim::Le, vec![lo, a], Type::Bool);
            let below = self.store.prim(Prim::Lt, vec![a, hi], Type::Bool);
            let test = self
                .store
                .prim(Prim::And, vec![defined, above, below], Type::Bool);
            let one = self.store.int_lit(1, Type::Prob);
            let at = self.store.intern(Node::If(test, quotient, one), ty.clone());
            let split = self.store.prim(Prim::Mul, vec![symbol, at], ty);
            return Some(self.replacing(p, symbol, split));
        }
        None
    }

    /// The candidate that replaces `key` by `split` (the symbol times what stays of it)
    /// and drops `symbol`, under the conditions the range analysis just assumed.
    fn replacing(&mut self, key: TermId, symbol: TermId, split: TermId) -> Candidate {
        Candidate {
            key,
            symbol,
            sites: Vec::new(),
            index: None,
            conds: std::mem::take(&mut self.conds),
            replace: Some((key, split)),
        }
    }

    /// The next untried gamma function of a sum that varies with the label only in one
    /// summand `[b]` (`if b: 1 else: 0`, through coercions and nested sums): `Γ(x + [b])`
    /// with `x` fixed for a call. It is replaced by `Γ(x) · (if b: x else: 1)`, exact where
    /// `0 < x` (`Γ(x + 1) = x Γ(x)`; `x + 0` is `x`), which the symbol `Γ(x)` being bounded
    /// shows (a gamma function is bounded only of a positive argument). The last class of
    /// a Dirichlet's stick-breaking form reads its count so: two `lgamma`s per update
    /// become one that every label shares, and then none.
    fn next_shift(&mut self, t: TermId, tried: &FxHashSet<TermId>) -> Option<Candidate> {
        for s in self.store.subterms(t).collect::<Vec<_>>() {
            let Node::Prim(Prim::GammaFunc, args) = self.store.node(s).clone() else {
                continue;
            };
            if tried.contains(&s) || *self.store.ty(s) != Type::Prob || args.len() != 1 {
                continue;
            }
            let Some((x, b)) = self.shift_of(args[0]) else {
                continue;
            };
            let ty = Type::Prob;
            let symbol = self.store.prim(Prim::GammaFunc, vec![x], ty.clone());
            self.conds.clear();
            if !self.bounded(symbol, false) {
                continue;
            }
            // `x` bound outside the test on the label, where `Γ(x + [b])` evaluated it, so
            // that it stays out of the loop over the labels
            let x_ty = self.store.ty(x).clone();
            let x_v = self.store.fresh_var("x", x_ty.clone());
            let x_t = self.store.var_term(x_v);
            let x_prob = match x_ty {
                Type::Prob => x_t,
                _ => self
                    .store
                    .intern(Node::Coerce(Coercion::Real2Prob, x_t), ty.clone()),
            };
            let one = self.store.int_lit(1, ty.clone());
            let step = self.store.intern(Node::If(b, x_prob, one), ty.clone());
            let product = self.store.prim(Prim::Mul, vec![symbol, step], ty.clone());
            let split = self.store.intern(Node::Let(x_v, x, product), ty);
            return Some(self.replacing(s, symbol, split));
        }
        None
    }

    /// `(x, b)` where `t` is the sum `x` with `[b]` in place of one of its `0`s: one
    /// summand (through coercions and nested sums) is `if b: 1 else: 0`, and every other
    /// is fixed for a call, `b` not.
    fn shift_of(&mut self, t: TermId) -> Option<(TermId, TermId)> {
        let fixed = |d: &mut Self, x: TermId| {
            let fv = d.fv.of(d.store, x).to_vec();
            fv.iter().all(|v| d.constants.contains(v))
        };
        if fixed(self, t) {
            return None;
        }
        let ty = self.store.ty(t).clone();
        match self.store.node(t).clone() {
            Node::If(b, one, zero) if is_one(self.store, one) && is_lit_zero(self.store, zero) => {
                Some((self.store.int_lit(0, ty), b))
            }
            Node::Coerce(c, a) => {
                let (a0, b) = stack::grow(|| self.shift_of(a))?;
                Some((self.store.intern(Node::Coerce(c, a0), ty), b))
            }
            Node::Prim(Prim::Add, mut xs) => {
                let varying: Vec<usize> = (0..xs.len()).filter(|&k| !fixed(self, xs[k])).collect();
                let [k] = varying.as_slice() else {
                    return None;
                };
                let (inner, b) = stack::grow(|| self.shift_of(xs[*k]))?;
                xs[*k] = inner;
                Some((self.store.prim(Prim::Add, xs, ty), b))
            }
            _ => None,
        }
    }

    /// `t` with the tests of `sites` decided: each is `let q = Q in all ⊙ q⁻¹`.
    fn resolve(&mut self, t: TermId, sites: &[Site]) -> TermId {
        if sites.is_empty() {
            return t;
        }
        let by_term: FxHashMap<TermId, Site> = sites.iter().map(|s| (s.term, *s)).collect();
        self.store.rebuild(t, &mut |store, orig, node| {
            let site = by_term.get(&orig)?;
            // `q` is rebuilt; the fast branch reads only `all` and `q`
            let Node::Let(q_v, q, _) = node else {
                return None;
            };
            let ty = store.ty(orig).clone();
            Some(store.intern(Node::Let(*q_v, *q, site.quotient), ty))
        })
    }

    /// `t` with the symbol `p` replaced by its unit (1 for a product, 0 for a sum), and
    /// every `let x = p` by its body at that unit.
    fn drop_symbol(&mut self, t: TermId, p: TermId) -> TermId {
        let unit = match self.store.ty(p) {
            Type::Prob => self.store.int_lit(1, Type::Prob),
            _ => self.store.int_lit(0, Type::Real),
        };
        self.store.rebuild(t, &mut |store, orig, node| {
            if orig == p {
                return Some(unit);
            }
            let Node::Let(_, e0, _) = *store.node(orig) else {
                return None;
            };
            let Node::Let(x, _, b) = node else {
                return None;
            };
            (e0 == p).then(|| vars::substitute1(store, *b, *x, unit))
        })
    }
}

/// The factors of a product (`a * b * ...`, nested), in order.
fn factors(store: &Store, t: TermId) -> Vec<TermId> {
    match store.node(t) {
        Node::Prim(Prim::Mul, args) => args.iter().flat_map(|&a| factors(store, a)).collect(),
        _ => vec![t],
    }
}

fn is_lit_zero(store: &Store, t: TermId) -> bool {
    matches!(store.node(t), Node::Lit(v) if v.is_zero())
}

/// `Π_{l=lo}^{hi-1} (if c && l == a && d: f(l) else: 1)` as `if lo < hi && c && lo <= a
/// && a < hi && d: f(a) else: 1`, where `c`, `a` and `d` do not mention `l`: each is
/// evaluated where the loop evaluated it (`d` only at the point).
fn point_product(
    store: &mut Store,
    l: VarId,
    lo: TermId,
    hi: TermId,
    body: TermId,
) -> Option<TermId> {
    let Node::If(test, f, one) = *store.node(body) else {
        return None;
    };
    if !matches!(store.node(one), Node::Lit(v) if v.is_one()) {
        return None;
    }
    let mut conj = Vec::new();
    crate::split::conjuncts_of(store, test, &mut conj);
    let l_t = store.var_term(l);
    let mut point = None;
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for c in conj {
        let eq = match store.node(c) {
            Node::Prim(Prim::Eq, args) if args.len() == 2 && args[0] == l_t => Some(args[1]),
            Node::Prim(Prim::Eq, args) if args.len() == 2 && args[1] == l_t => Some(args[0]),
            _ => None,
        };
        match eq {
            Some(a) if point.is_none() && !vars::mentions(store, a, l) => point = Some(a),
            _ if point.is_none() => before.push(c),
            _ => after.push(c),
        }
    }
    let a = point?;
    if before
        .iter()
        .chain(&after)
        .any(|&c| vars::mentions(store, c, l))
    {
        return None;
    }
    // in the loop's order: the conjuncts before the point's test at every index, the
    // point, the ones after it only at the point
    let ty = store.ty(body).clone();
    let nonempty = store.prim(Prim::Lt, vec![lo, hi], Type::Bool);
    let above = store.prim(Prim::Le, vec![lo, a], Type::Bool);
    let below = store.prim(Prim::Lt, vec![a, hi], Type::Bool);
    let mut all = vec![nonempty];
    all.extend(before);
    all.push(above);
    all.push(below);
    all.extend(after);
    let cond = store.prim(Prim::And, all, Type::Bool);
    let at = vars::substitute1(store, f, l, a);
    Some(store.intern(Node::If(cond, at, one), ty))
}

/// `Π_{l=lo}^{hi-1} (if c: A(l) else: B(l))` with `c` free of `l` as `if lo < hi && c:
/// Π_l A(l) else: Π_l B(l)` (`c` evaluated where the loop evaluated it; an empty loop is
/// 1 either way), each side then settled on its own.
fn unswitch_product(
    store: &mut Store,
    l: VarId,
    lo: TermId,
    hi: TermId,
    body: TermId,
) -> Option<TermId> {
    let Node::If(c, a, b) = *store.node(body) else {
        return None;
    };
    if vars::mentions(store, c, l) {
        return None;
    }
    let ty = store.ty(body).clone();
    let pa = store.intern(Node::Product(l, lo, hi, a), ty.clone());
    let pa = point_product(store, l, lo, hi, a).unwrap_or(pa);
    let pb = store.intern(Node::Product(l, lo, hi, b), ty.clone());
    let pb = point_product(store, l, lo, hi, b).unwrap_or(pb);
    let nonempty = store.prim(Prim::Lt, vec![lo, hi], Type::Bool);
    let test = store.prim(Prim::And, vec![nonempty, c], Type::Bool);
    Some(store.intern(Node::If(test, pa, pb), ty))
}

/// The range analysis: what it knows of a term's value, under conditions on the
/// parameters that it assumes (`conds`), each a total program over them.
struct Bounds<'a> {
    store: &'a mut Store,
    params: &'a FxHashSet<VarId>,
    /// The histograms the program binds, by name: their reducers.
    buckets: &'a FxHashMap<VarId, TermId>,
    conds: Vec<TermId>,
}

impl Bounds<'_> {
    /// Is `t` a prob positive with a finite logarithm (`real`: a finite real)? The
    /// conditions assumed are added to `self.conds` (also where it is not).
    fn bounded(&mut self, t: TermId, real: bool) -> bool {
        let mut env = FxHashMap::default();
        match self.range(t, &mut env) {
            Some(r) if real => r.mag().is_some(),
            Some(r) => r.log().is_some(),
            None => false,
        }
    }

    fn range(&mut self, t: TermId, env: &mut FxHashMap<VarId, Range>) -> Option<Range> {
        match self.store.ty(t) {
            Type::Nat => return Some(Range::NonNeg { hi: COUNT }),
            Type::Int => return Some(Range::Fin { mag: COUNT }),
            Type::Prob | Type::Real => {}
            _ => return None,
        }
        let node = self.store.node(t).clone();
        let r = match node {
            Node::Lit(v) => literal(&v)?,
            Node::Var(x) => match env.get(&x) {
                Some(r) => *r,
                None if self.params.contains(&x) => self.scalar_param(x)?,
                None => return None,
            },
            Node::Index(a, _) => {
                let Node::Var(x) = *self.store.node(a) else {
                    return None;
                };
                match env.get(&x) {
                    Some(r) => *r,
                    None if self.params.contains(&x) => self.array_param(a)?,
                    None => return None,
                }
            }
            Node::Coerce(c, x) => {
                let r = stack::grow(|| self.range(x, env))?;
                match c {
                    Coercion::Prob2Real => {
                        r.mag()?;
                        r
                    }
                    Coercion::Real2Prob => {
                        r.nonneg_hi()?;
                        r
                    }
                    _ => r,
                }
            }
            Node::Prim(p, args) => self.prim(p, &args, env)?,
            Node::If(_, a, b) => {
                let ra = stack::grow(|| self.range(a, env))?;
                let rb = stack::grow(|| self.range(b, env))?;
                join(ra, rb)?
            }
            Node::Let(x, e, b) => {
                if let Node::Bucket(_, _, _, r) = *self.store.node(e) {
                    // a histogram's components: sums of at most 2^64 reducer values
                    let m = self.reducer_mag(r, env)?;
                    env.insert(x, Range::Fin { mag: m + COUNT });
                } else if let Some(r) = stack::grow(|| self.range(e, env)) {
                    env.insert(x, r);
                }
                stack::grow(|| self.range(b, env))?
            }
            Node::Match(scrut, arms) => {
                // a histogram's entry: its components bounded as the histogram's
                let Node::Index(h, _) = *self.store.node(scrut) else {
                    return None;
                };
                let Node::Var(hv) = *self.store.node(h) else {
                    return None;
                };
                let mag = match env.get(&hv) {
                    Some(r) => r.mag()?,
                    // a histogram bound around the split
                    None => {
                        let r = *self.buckets.get(&hv)?;
                        self.reducer_mag(r, env)? + COUNT
                    }
                };
                let mut out: Option<Range> = None;
                for (pat, body) in arms {
                    let mut vs = Vec::new();
                    pat.vars(&mut vs);
                    for v in vs {
                        let r = match self.store.var_type(v) {
                            Type::Prob => Range::NonNeg { hi: mag },
                            _ => Range::Fin { mag },
                        };
                        env.insert(v, r);
                    }
                    let r = stack::grow(|| self.range(body, env))?;
                    out = Some(match out {
                        None => r,
                        Some(o) => join(o, r)?,
                    });
                }
                out?
            }
            Node::Summate(_, lo, hi, body) => match stack::grow(|| self.range(body, env))? {
                // a sum of positive terms over a range the parameters show non-empty
                Range::Pos { lo: l, hi: h } if self.nonempty(lo, hi) => Range::Pos {
                    lo: l,
                    hi: h + COUNT,
                },
                Range::NonNeg { hi } | Range::Pos { hi, .. } => Range::NonNeg { hi: hi + COUNT },
                Range::Fin { mag } => Range::Fin { mag: mag + COUNT },
                Range::LogFin { .. } => return None,
            },
            Node::Product(_, _, _, body) => {
                let l = stack::grow(|| self.range(body, env))?.log()?;
                Range::LogFin { l: l + COUNT }
            }
            _ => return None,
        };
        r.capped()
    }

    fn prim(
        &mut self,
        p: Prim,
        args: &[TermId],
        env: &mut FxHashMap<VarId, Range>,
    ) -> Option<Range> {
        let mut rs = Vec::with_capacity(args.len());
        let arg = |s: &mut Self, env: &mut FxHashMap<VarId, Range>, i: usize| {
            stack::grow(|| s.range(args[i], env))
        };
        Some(match p {
            Prim::Pi => Range::Pos { lo: 0, hi: 1 },
            Prim::Add | Prim::Mul => {
                let op = if p == Prim::Add { add } else { mul };
                for i in 0..args.len() {
                    rs.push(arg(self, env, i)?);
                }
                let mut acc = *rs.first()?;
                for &r in &rs[1..] {
                    acc = op(acc, r)?;
                }
                acc
            }
            Prim::Neg => Range::Fin {
                mag: arg(self, env, 0)?.mag()?,
            },
            Prim::Recip => match arg(self, env, 0)? {
                Range::Pos { lo, hi } => Range::Pos { lo: hi, hi: lo },
                Range::LogFin { l } => Range::LogFin { l },
                _ => return None,
            },
            Prim::Sqrt => match arg(self, env, 0)? {
                Range::Pos { lo, hi } => Range::Pos {
                    lo: lo / 2 + 1,
                    hi: hi / 2 + 1,
                },
                Range::NonNeg { hi } => Range::NonNeg { hi: hi / 2 + 1 },
                Range::LogFin { l } => Range::LogFin { l },
                _ => return None,
            },
            Prim::Pow => {
                let base = arg(self, env, 0)?;
                match literal_int(self.store, args[1]) {
                    Some(k) => {
                        let k32 = i32::try_from(k.unsigned_abs()).ok()?;
                        match base {
                            Range::Pos { lo, hi } if k >= 0 => Range::Pos {
                                lo: lo.checked_mul(k32)?,
                                hi: hi.checked_mul(k32)?,
                            },
                            Range::Pos { lo, hi } => Range::Pos {
                                lo: hi.checked_mul(k32)?,
                                hi: lo.checked_mul(k32)?,
                            },
                            Range::NonNeg { hi } if k >= 0 => Range::NonNeg {
                                hi: hi.checked_mul(k32)?,
                            },
                            Range::Fin { mag } if k >= 0 => Range::Fin {
                                mag: mag.checked_mul(k32)?,
                            },
                            Range::LogFin { l } => Range::LogFin { l: l + digits(k32) },
                            _ => return None,
                        }
                    }
                    // a power of at most 2^64: a positive base's logarithm times it
                    None if *self.store.ty(args[1]) == Type::Nat => Range::LogFin {
                        l: base.log()? + COUNT,
                    },
                    None => return None,
                }
            }
            Prim::RealPow => {
                let base = arg(self, env, 0)?.log()?;
                let e = arg(self, env, 1)?.mag()?;
                Range::LogFin { l: base + e + 1 }
            }
            Prim::Exp => Range::LogFin {
                l: arg(self, env, 0)?.mag()?,
            },
            Prim::Log => Range::Fin {
                mag: arg(self, env, 0)?.log()?,
            },
            Prim::GammaFunc => match arg(self, env, 0)? {
                // |ln Γ(x)| <= x ln x for large x, about -ln x for small x
                Range::Pos { lo, hi } => Range::LogFin { l: lo.max(hi) + 3 },
                _ => return None,
            },
            Prim::BetaFunc => match (arg(self, env, 0)?, arg(self, env, 1)?) {
                (Range::Pos { lo: l1, hi: h1 }, Range::Pos { lo: l2, hi: h2 }) => Range::LogFin {
                    l: l1.max(h1).max(l2).max(h2) + 4,
                },
                _ => return None,
            },
            _ => return None,
        })
    }

    /// Is `lo < hi` a condition on the parameters that cannot fail? Then it is assumed.
    fn nonempty(&mut self, lo: TermId, hi: TermId) -> bool {
        let params = self.params;
        let closed = |store: &Store, x: TermId| {
            total(store, x) && vars::free_vars(store, x).iter().all(|v| params.contains(v))
        };
        if !(closed(self.store, lo) && closed(self.store, hi)) {
            return false;
        }
        let c = self.store.prim(Prim::Lt, vec![lo, hi], Type::Bool);
        self.conds.push(c);
        true
    }

    /// The largest magnitude of a histogram's reducer values (`r_add` bodies).
    fn reducer_mag(&mut self, r: TermId, env: &mut FxHashMap<VarId, Range>) -> Option<i32> {
        match self.store.node(r).clone() {
            Node::RAdd(e) => stack::grow(|| self.range(e, env))?.mag(),
            Node::RNop => Some(0),
            Node::RIndex(_, _, _, r) => self.reducer_mag(r, env),
            Node::RSplit(_, a, b) | Node::RFanout(a, b) => {
                Some(self.reducer_mag(a, env)?.max(self.reducer_mag(b, env)?))
            }
            _ => None,
        }
    }

    /// A prob or real parameter, bounded by a condition on it.
    fn scalar_param(&mut self, x: VarId) -> Option<Range> {
        let ty = self.store.var_type(x).clone();
        let xt = self.store.var_term(x);
        let c = self.within(xt, &ty)?;
        self.conds.push(c);
        Some(param_range(&ty))
    }

    /// An element of a prob or real array parameter `a`: every element bounded.
    fn array_param(&mut self, a: TermId) -> Option<Range> {
        let Type::Array(elem) = self.store.ty(a).clone() else {
            return None;
        };
        let m = self.store.fresh_var("m", Type::Nat);
        let mt = self.store.var_term(m);
        let read = self.store.intern(Node::Index(a, mt), (*elem).clone());
        let ok = self.within(read, &elem)?;
        let zero = self.store.int_lit(0, Type::Nat);
        let one = self.store.int_lit(1, Type::Nat);
        let miss = self.store.intern(Node::If(ok, zero, one), Type::Nat);
        let size = self.store.prim(Prim::Size, vec![a], Type::Nat);
        let count = self
            .store
            .intern(Node::Summate(m, zero, size, miss), Type::Nat);
        let c = self.store.prim(Prim::Eq, vec![count, zero], Type::Bool);
        self.conds.push(c);
        Some(param_range(&elem))
    }

    /// `10^-PARAM < x < 10^PARAM` (prob), `-10^PARAM < x < 10^PARAM` (real).
    fn within(&mut self, x: TermId, ty: &Type) -> Option<TermId> {
        let big = Rational::from_integer(10).pow(i64::from(PARAM))?;
        let hi = self.store.lit(big.to_big(), ty.clone());
        let lo = match ty {
            Type::Prob => {
                let small = big.recip()?;
                self.store.lit(small.to_big(), Type::Prob)
            }
            Type::Real => self.store.lit(-big.to_big(), Type::Real),
            _ => return None,
        };
        let above = self.store.prim(Prim::Lt, vec![lo, x], Type::Bool);
        let below = self.store.prim(Prim::Lt, vec![x, hi], Type::Bool);
        Some(self.store.prim(Prim::And, vec![above, below], Type::Bool))
    }

    /// Is the factor `f` bounded positive (its conditions assumed), or `n`'s `1/n` or `n`?
    fn factor_positive(&mut self, f: TermId, n: TermId) -> bool {
        let size_factor = |store: &Store, x: TermId| matches!(store.node(x), Node::Coerce(Coercion::Nat2Prob, y) if *y == n);
        match self.store.node(f) {
            Node::Prim(Prim::Recip, a) if a.len() == 1 && size_factor(self.store, a[0]) => {
                return true
            }
            _ if size_factor(self.store, f) => return true,
            _ => {}
        }
        let saved = self.conds.len();
        let ok = self.bounded(f, false);
        if !ok {
            self.conds.truncate(saved);
        }
        ok
    }
}

/// What a literal is.
fn literal(v: &Rational) -> Option<Range> {
    if v.is_zero() {
        return Some(Range::NonNeg { hi: 0 });
    }
    let f = v.to_f64().abs();
    if !f.is_finite() || f == 0.0 {
        return None;
    }
    let e = f.log10();
    let hi = (e.ceil() as i32).max(0);
    let lo = ((-e).ceil() as i32).max(0);
    Some(if v.is_positive() {
        Range::Pos { lo, hi }
    } else {
        Range::Fin { mag: hi }
    })
}

/// An integer literal's value.
fn literal_int(store: &Store, t: TermId) -> Option<i64> {
    match store.node(t) {
        Node::Lit(v) if v.is_integer() => v.to_i64(),
        _ => None,
    }
}

fn param_range(ty: &Type) -> Range {
    match ty {
        Type::Prob => Range::Pos {
            lo: PARAM,
            hi: PARAM,
        },
        _ => Range::Fin { mag: PARAM },
    }
}

fn digits(k: i32) -> i32 {
    let mut d = 1;
    let mut k = k / 10;
    while k > 0 {
        d += 1;
        k /= 10;
    }
    d
}

fn add(a: Range, b: Range) -> Option<Range> {
    use Range::*;
    Some(match (a, b) {
        (Pos { lo: l1, hi: h1 }, Pos { lo: l2, hi: h2 }) => Pos {
            lo: l1.min(l2),
            hi: h1.max(h2) + 1,
        },
        (Pos { lo, hi: h1 }, NonNeg { hi: h2 }) | (NonNeg { hi: h2 }, Pos { lo, hi: h1 }) => Pos {
            lo,
            hi: h1.max(h2) + 1,
        },
        (NonNeg { hi: h1 }, NonNeg { hi: h2 }) => NonNeg { hi: h1.max(h2) + 1 },
        _ => Fin {
            mag: a.mag()?.max(b.mag()?) + 1,
        },
    })
}

fn mul(a: Range, b: Range) -> Option<Range> {
    use Range::*;
    Some(match (a, b) {
        (Pos { lo: l1, hi: h1 }, Pos { lo: l2, hi: h2 }) => Pos {
            lo: l1 + l2,
            hi: h1 + h2,
        },
        (LogFin { .. }, _) | (_, LogFin { .. }) => LogFin {
            l: a.log()?.max(b.log()?) + 1,
        },
        (Pos { hi: h1, .. } | NonNeg { hi: h1 }, Pos { hi: h2, .. } | NonNeg { hi: h2 }) => {
            NonNeg { hi: h1 + h2 }
        }
        _ => Fin {
            mag: a.mag()? + b.mag()?,
        },
    })
}

fn join(a: Range, b: Range) -> Option<Range> {
    use Range::*;
    Some(match (a, b) {
        (Pos { lo: l1, hi: h1 }, Pos { lo: l2, hi: h2 }) => Pos {
            lo: l1.max(l2),
            hi: h1.max(h2),
        },
        (LogFin { .. }, _) | (_, LogFin { .. }) => LogFin {
            l: a.log()?.max(b.log()?),
        },
        (Pos { hi: h1, .. } | NonNeg { hi: h1 }, Pos { hi: h2, .. } | NonNeg { hi: h2 }) => {
            NonNeg { hi: h1.max(h2) }
        }
        _ => Fin {
            mag: a.mag()?.max(b.mag()?),
        },
    })
}

/// A term's degree in the symbol: `Some(d)` when the term is `P^d` times itself at
/// `P = 1` (a product's symbol) or `exp(d · P)` times itself at `P = 0` (a sum's).
type Degree = i64;

/// At most this many conditions on the parameters are split on (`2^n` analyses).
const MAX_CASES: usize = 3;

/// Is the measure `root` homogeneous in `symbol`? A branch on the parameters alone may
/// give its two sides different degrees (the scale is then one constant or another, as
/// the parameters decide): such conditions are split on, each case analysed alone.
fn homogeneous(
    store: &Store,
    params: &FxHashSet<VarId>,
    symbol: TermId,
    index: Option<VarId>,
    root: TermId,
) -> bool {
    let mut cases: Vec<TermId> = Vec::new();
    loop {
        let mut wanted: Vec<TermId> = Vec::new();
        let mut ok = true;
        for mask in 0..(1usize << cases.len()) {
            let mut h = Homogeneity::new(store, params, symbol, index, root);
            for (k, &c) in cases.iter().enumerate() {
                h.assume.insert(c, mask >> k & 1 == 1);
            }
            if !h.measure(root) {
                ok = false;
                for w in h.wanted {
                    if !cases.contains(&w) && !wanted.contains(&w) {
                        wanted.push(w);
                    }
                }
            }
        }
        if ok {
            return true;
        }
        if wanted.is_empty() || cases.len() + wanted.len() > MAX_CASES {
            return false;
        }
        cases.extend(wanted);
    }
}

/// The degree analysis of one symbol `P` (a term), over a measure whose splits of `P` are
/// resolved: every `let x = P` makes `x` of degree 1.
struct Homogeneity<'s> {
    store: &'s Store,
    params: &'s FxHashSet<VarId>,
    symbol: TermId,
    /// The product index the symbol reads, if any: it has a degree only inside that
    /// product, whose degree is then the constant `Π_l P(l)`'s.
    index: Option<VarId>,
    /// Conditions on the parameters taken as decided (a case of [`homogeneous`]).
    assume: FxHashMap<TermId, bool>,
    /// Conditions on the parameters whose branches had different degrees.
    wanted: Vec<TermId>,
    /// Variables bound to values that read the symbol (found before the analysis, so
    /// that what reads the symbol is a function of the term alone).
    tainted: FxHashSet<VarId>,
    /// The degrees of the tainted variables in scope (arrays: of every element; a sum's
    /// symbol: a real variable's coefficient, a prob variable's degree).
    env: FxHashMap<VarId, Degree>,
    /// Which subterms read the symbol or a tainted variable.
    reads: FxHashMap<TermId, bool>,
}

impl<'s> Homogeneity<'s> {
    fn new(
        store: &'s Store,
        params: &'s FxHashSet<VarId>,
        symbol: TermId,
        index: Option<VarId>,
        root: TermId,
    ) -> Homogeneity<'s> {
        let mut h = Homogeneity {
            store,
            params,
            symbol,
            index,
            assume: FxHashMap::default(),
            wanted: Vec::new(),
            tainted: FxHashSet::default(),
            env: FxHashMap::default(),
            reads: FxHashMap::default(),
        };
        let lets: Vec<(VarId, TermId)> = store
            .subterms(root)
            .filter_map(|t| match *store.node(t) {
                Node::Let(x, e, _) => Some((x, e)),
                _ => None,
            })
            .collect();
        loop {
            h.reads.clear();
            let before = h.tainted.len();
            for &(x, e) in &lets {
                if !h.tainted.contains(&x) && h.mentions(e) {
                    h.tainted.insert(x);
                }
            }
            if h.tainted.len() == before {
                break;
            }
        }
        h.reads.clear();
        h
    }

    /// Does `t` read the symbol, directly or through a tainted variable?
    fn mentions(&mut self, t: TermId) -> bool {
        if let Some(&r) = self.reads.get(&t) {
            return r;
        }
        let r = t == self.symbol
            || matches!(self.store.node(t), Node::Var(x) if self.tainted.contains(x))
            || self
                .store
                .node(t)
                .children()
                .into_iter()
                .any(|c| stack::grow(|| self.mentions(c)));
        self.reads.insert(t, r);
        r
    }

    /// Is the measure `m` the measure at `P = 1` times a constant in `(0, ∞)`?
    fn measure(&mut self, m: TermId) -> bool {
        if !self.mentions(m) {
            return true;
        }
        match self.store.node(m).clone() {
            Node::Weight(w, m) => {
                stack::grow(|| self.degree(w)).is_some() && stack::grow(|| self.measure(m))
            }
            Node::Dist(Dist::Categorical, args) => {
                args.len() == 1 && stack::grow(|| self.degree(args[0])).is_some()
            }
            Node::If(c, a, b) => match self.assume.get(&c) {
                Some(&v) => stack::grow(|| self.measure(if v { a } else { b })),
                None => {
                    self.free(c)
                        && stack::grow(|| self.measure(a))
                        && stack::grow(|| self.measure(b))
                }
            },
            Node::Let(x, e, b) => {
                if !self.bind(x, e) {
                    return false;
                }
                stack::grow(|| self.measure(b))
            }
            Node::Bind(_, m1, k) => stack::grow(|| self.measure(m1)) && self.free(k),
            _ => self.free(m),
        }
    }

    /// `let x = e`: `x`'s degree recorded when `e` reads the symbol (a real `x` of a
    /// sum's symbol: its coefficient).
    fn bind(&mut self, x: VarId, e: TermId) -> bool {
        if !self.mentions(e) {
            // (a name may be bound elsewhere to what reads the symbol)
            self.env.insert(x, 0);
            return true;
        }
        let d = if e == self.symbol {
            Some(1)
        } else if self.is_sum_symbol() && *self.store.ty(e) == Type::Real {
            stack::grow(|| self.linear(e))
        } else {
            stack::grow(|| self.degree(e))
        };
        match d {
            Some(d) => {
                self.env.insert(x, d);
                true
            }
            None => false,
        }
    }

    fn free(&mut self, t: TermId) -> bool {
        !self.mentions(t)
    }

    /// The degree of a prob or real term, or of every element of an array.
    fn degree(&mut self, t: TermId) -> Option<Degree> {
        if !self.mentions(t) {
            return Some(0);
        }
        if t == self.symbol {
            return (*self.store.ty(t) == Type::Prob).then_some(1);
        }
        match self.store.node(t).clone() {
            Node::Var(x) => {
                let d = *self.env.get(&x)?;
                // a sum's symbol is read only inside an `exp`: a real variable bound to
                // it has a coefficient, not a degree
                let coefficient = self.is_sum_symbol() && *self.store.var_type(x) == Type::Real;
                (!coefficient || d == 0).then_some(d)
            }
            Node::Prim(Prim::Mul, args) => {
                let mut d = 0;
                for a in args {
                    d += stack::grow(|| self.degree(a))?;
                }
                Some(d)
            }
            Node::Prim(Prim::Recip, args) => Some(-stack::grow(|| self.degree(args[0]))?),
            Node::Prim(Prim::Neg, args) => stack::grow(|| self.degree(args[0])),
            Node::Prim(Prim::Pow | Prim::RealPow, args) => {
                if !self.free(args[1]) {
                    return None;
                }
                let k = literal_int(self.store, args[1])?;
                stack::grow(|| self.degree(args[0]))?.checked_mul(k)
            }
            Node::Prim(Prim::Add, args) => self.same(&args, |s, a| s.degree(a)),
            Node::Prim(Prim::Exp, args) => stack::grow(|| self.linear(args[0])),
            Node::Coerce(Coercion::Prob2Real | Coercion::Real2Prob, x) => {
                stack::grow(|| self.degree(x))
            }
            Node::Summate(l, lo, hi, body) => {
                if !self.free(lo) || !self.free(hi) || Some(l) == self.index {
                    return None;
                }
                stack::grow(|| self.degree(body))
            }
            Node::Array(l, n, body) => {
                if !self.free(n) || Some(l) == self.index {
                    return None;
                }
                stack::grow(|| self.degree(body))
            }
            // `Π_l P(l)^d r(l)`: the constant `(Π_l P(l))^d` times the product at `P = 1`,
            // where the range is the parameters'
            Node::Product(l, lo, hi, body) if Some(l) == self.index => {
                let params = self.params;
                let constant = |t: TermId| {
                    vars::free_vars(self.store, t)
                        .iter()
                        .all(|v| params.contains(v))
                };
                if !constant(lo) || !constant(hi) {
                    return None;
                }
                stack::grow(|| self.degree(body))
            }
            Node::Index(a, i) => {
                if !self.free(i) {
                    return None;
                }
                let Node::Var(x) = *self.store.node(a) else {
                    return None;
                };
                self.env.get(&x).copied()
            }
            Node::If(c, a, b) => self.branches(c, a, b, Self::degree),
            Node::Let(x, e, b) => {
                if !self.bind(x, e) {
                    return None;
                }
                stack::grow(|| self.degree(b))
            }
            _ => None,
        }
    }

    /// The coefficient of a sum's symbol in a real term that is affine in it (the
    /// argument of an `exp`); 0 for a product's symbol, which may not appear.
    fn linear(&mut self, t: TermId) -> Option<Degree> {
        if !self.mentions(t) {
            return Some(0);
        }
        if !self.is_sum_symbol() {
            return None;
        }
        if t == self.symbol {
            return Some(1);
        }
        match self.store.node(t).clone() {
            Node::Var(x) if *self.store.var_type(x) == Type::Real => self.env.get(&x).copied(),
            Node::Prim(Prim::Add, args) => {
                let mut d = 0;
                for a in args {
                    d += stack::grow(|| self.linear(a))?;
                }
                Some(d)
            }
            Node::Prim(Prim::Neg, args) => Some(-stack::grow(|| self.linear(args[0]))?),
            Node::Prim(Prim::Mul, args) => {
                // one factor reads the symbol, the others are integer literals
                let mut d = None;
                let mut k: i64 = 1;
                for a in args {
                    if self.mentions(a) {
                        if d.is_some() {
                            return None;
                        }
                        d = Some(stack::grow(|| self.linear(a))?);
                    } else {
                        k = k.checked_mul(literal_int(self.store, a)?)?;
                    }
                }
                d?.checked_mul(k)
            }
            Node::If(c, a, b) => self.branches(c, a, b, Self::linear),
            Node::Let(x, e, b) => {
                if !self.bind(x, e) {
                    return None;
                }
                stack::grow(|| self.linear(b))
            }
            _ => None,
        }
    }

    /// `if c: a else: b` of one degree: both sides', or the side an assumed `c` takes. A
    /// condition on the parameters alone whose sides differ is wanted as a case.
    fn branches(
        &mut self,
        c: TermId,
        a: TermId,
        b: TermId,
        f: fn(&mut Self, TermId) -> Option<Degree>,
    ) -> Option<Degree> {
        if let Some(&v) = self.assume.get(&c) {
            return stack::grow(|| f(self, if v { a } else { b }));
        }
        if !self.free(c) {
            return None;
        }
        let da = stack::grow(|| f(self, a))?;
        let db = stack::grow(|| f(self, b))?;
        if da == db {
            return Some(da);
        }
        let params = self.params;
        if vars::free_vars(self.store, c)
            .iter()
            .all(|v| params.contains(v))
            && !self.wanted.contains(&c)
        {
            self.wanted.push(c);
        }
        None
    }

    fn is_sum_symbol(&self) -> bool {
        *self.store.ty(self.symbol) == Type::Real
    }

    /// The one degree every term of `ts` has.
    fn same(
        &mut self,
        ts: &[TermId],
        mut f: impl FnMut(&mut Self, TermId) -> Option<Degree>,
    ) -> Option<Degree> {
        let mut out = None;
        for &t in ts {
            let d = stack::grow(|| f(self, t))?;
            match out {
                None => out = Some(d),
                Some(o) if o == d => {}
                Some(_) => return None,
            }
        }
        out
    }
}
