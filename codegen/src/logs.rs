//! Products of `real2prob` factors taken as one logarithm (issue 13: kernel speed). A
//! `prob` is a logarithm in the kernels, so each `real2prob(a)` of a product is a `log`:
//! LDA's weight of a topic, `(α_k + n_dk) (β_w + n_kw) / (Σβ + n_k)`, costs three per
//! topic and token, where one `log` of the product and quotient would do.
//!
//! [`merge_logs`] reads each product (its nested products flattened) as factors:
//! - `real2prob(a)`, `nat2prob(n)` (as `real2prob(nat2real(n))`) and `recip` of either
//!   (a divisor `a`);
//! - `if c: real2prob(a) else: Q` as `real2prob(if c: a else: 1)` times `if c: 1 else: Q`
//!   (the second left out where `Q` is 1), and either branch so; exact, since
//!   `real2prob(1) = 1`, and `a` is evaluated only where `c` holds, as before;
//! - anything else, kept as it is.
//!
//! Where at least two factors are logarithms, `m` of them (at most [`MAX_FACTORS`]), they
//! become `let a_1 = .. in .. in if b(a_1) && .. : real2prob(a_1 · .. · recip(d_1 · ..))
//! else: real2prob(a_1) · .. · recip(real2prob(d_1)) · ..`, with `b(x)` the test
//! `2^-e < x < 2^e`, `e = ⌊1000 / m⌋`. Under it every factor is positive and finite and
//! every partial product lies within `2^±1000`, inside the normal range of a double: each
//! multiplication rounds once, so the product carries a relative error of at most `m`
//! units in the last place, and its logarithm an absolute one of about `m · 2^-53`, as the
//! sum of `m` logarithms does. Elsewhere (a factor 0, negative, infinite, NaN or merely far
//! from 1) the factors are what they were: `real2prob` of a negative value errs as before.
//! The factors are evaluated once, in their order, before the test, where the product
//! evaluated them; the other factors follow.
//!
//! [`merge_logs_with`] takes a range analysis besides: a factor it bounds within `2^±b`
//! needs no test, while the bounds of all the factors merged still add up to at most
//! `2^±1000`. The draw-only program's (`crate::draw_only::bounded_logs`) shows LDA's
//! factors, each a prior plus a count, within `10^±50` under its condition on the
//! parameters: its topic weight then takes one `log` and no test.

use rustc_hash::{FxHashMap, FxHashSet};
use slic_algebra::{stack, vars, Coercion, Node, Prim, Rational, Store, TermId, Type, VarId};

use crate::split::{is_one, with_children};

/// The most logarithms merged into one (beyond, the rest stay as they are).
pub const MAX_FACTORS: usize = 8;

/// Every partial product of the merged factors lies within `2^±BUDGET`, inside the normal
/// range of a double (`2^±1022`).
pub const BUDGET: u32 = 1000;

/// The least range a tested factor is given (`2^±MIN_BITS`); below it, every factor is
/// tested.
const MIN_BITS: u32 = 64;

/// What [`merge_logs`] did.
#[derive(Clone, Debug)]
pub struct Merged {
    /// The rewritten term (same type and meaning).
    pub term: TermId,
    /// Products whose logarithms were merged.
    pub merged: usize,
    /// Factors merged without a run-time test (their bounds shown).
    pub untested: usize,
}

/// Every product of `t` with two or more `real2prob` factors, those taken as one.
pub fn merge_logs(store: &mut Store, t: TermId) -> Merged {
    merge_logs_with(store, t, &mut |_, _| None)
}

/// [`merge_logs`], where `bound` may show a factor (a real term) within `[2^-b, 2^b]`
/// (`Some(b)`) wherever the term is evaluated: such a factor needs no run-time test, as
/// long as the bounds of the factors merged, tested ones at their test's, add up to at
/// most `2^±`[`BUDGET`]. A caller that assumes something to show it (the draw-only
/// program's condition on its parameters) answers for it.
pub fn merge_logs_with(
    store: &mut Store,
    t: TermId,
    bound: &mut dyn FnMut(&mut Store, TermId) -> Option<u32>,
) -> Merged {
    let mut m = Merger {
        store,
        memo: FxHashMap::default(),
        merged: 0,
        untested: 0,
        bound,
    };
    let term = m.go(t);
    Merged {
        term,
        merged: m.merged,
        untested: m.untested,
    }
}

struct Merger<'s> {
    store: &'s mut Store,
    memo: FxHashMap<TermId, TermId>,
    merged: usize,
    untested: usize,
    bound: &'s mut dyn FnMut(&mut Store, TermId) -> Option<u32>,
}

/// A product's factors and the `let`s around them, each with the `let`s it was under.
#[derive(Default)]
struct Flat {
    leaves: Vec<(TermId, Vec<usize>)>,
    binds: Vec<(VarId, TermId, Vec<usize>)>,
}

impl Flat {
    /// Can the `let`s move around the whole product? Each binds its own name, read
    /// nowhere outside its scope (so moving it captures nothing).
    fn hoistable(&self, store: &Store) -> bool {
        let names: Vec<VarId> = self.binds.iter().map(|b| b.0).collect();
        let mut seen = FxHashSet::default();
        if !names.iter().all(|v| seen.insert(*v)) {
            return false;
        }
        let outside = |t: TermId, scope: &[usize], own: Option<usize>| {
            names
                .iter()
                .enumerate()
                .any(|(k, &v)| Some(k) != own && !scope.contains(&k) && vars::mentions(store, t, v))
        };
        self.leaves
            .iter()
            .all(|(t, scope)| !outside(*t, scope, None))
            && self
                .binds
                .iter()
                .enumerate()
                .all(|(k, (_, e, scope))| !outside(*e, scope, Some(k)))
    }
}

/// A factor of a product, read apart.
enum Factor {
    /// `real2prob` of this real.
    Log(TermId),
    /// `recip(real2prob(..))` of this real.
    Divisor(TermId),
}

impl Merger<'_> {
    fn go(&mut self, t: TermId) -> TermId {
        if let Some(&r) = self.memo.get(&t) {
            return r;
        }
        let r = if self.is_product(t) {
            self.product(t)
        } else {
            self.children(t)
        };
        self.memo.insert(t, r);
        r
    }

    /// The product `t`, its logarithms merged: the whole product, nested products and the
    /// `let`s around factors flattened, so that a factor inside an inner product or under
    /// a `let` merges with the outer ones.
    fn product(&mut self, t: TermId) -> TermId {
        let mut flat = Flat::default();
        self.flatten(t, &mut Vec::new(), &mut flat);
        let hoist = flat.hoistable(self.store);
        if !hoist {
            // a name a `let` binds is read elsewhere: only the nested products flattened
            flat = Flat::default();
            self.flatten_products(t, &mut flat.leaves);
        }
        // each factor read apart: merged (what stays in its place, if anything) or kept
        let mut logs: Vec<Factor> = Vec::new();
        let mut place: FxHashMap<TermId, Option<TermId>> = FxHashMap::default();
        // a factor that occurs twice is merged at both places or at neither
        let mut merged_leaves: FxHashSet<TermId> = FxHashSet::default();
        for &(f, _) in &flat.leaves {
            let new = self.children(f);
            let take =
                merged_leaves.contains(&f) || (!place.contains_key(&f) && logs.len() < MAX_FACTORS);
            match self.factor(new) {
                (Some(l), keep) if take => {
                    logs.push(l);
                    merged_leaves.insert(f);
                    place.insert(f, keep);
                }
                _ => {
                    place.insert(f, Some(new));
                }
            }
        }
        if logs.len() < 2 {
            // nothing to merge: the product as it was nested, its factors rewritten
            return self.children(t);
        }
        let binds: Vec<(VarId, TermId)> = flat
            .binds
            .iter()
            .map(|&(v, e, _)| (v, stack::grow(|| self.go(e))))
            .collect();
        // the product's own nesting kept (A-normal form binds an inner product once, as
        // `emit/monomial.rs` reads it), the merged factors gone from it
        let rest = self.strip(t, hoist, &place);
        let merged = self.merge(logs);
        let prob = Type::Prob;
        let mut out = match rest {
            Some(r) => self.store.prim(Prim::Mul, vec![r, merged], prob.clone()),
            None => merged,
        };
        for &(v, e) in binds.iter().rev() {
            out = self.store.intern(Node::Let(v, e, out), prob.clone());
        }
        out
    }

    /// The product `t` as it was nested, each factor in its `place` (none where it was
    /// merged whole), the `let`s moved out (`hoist`) left out; `None` where nothing is
    /// left.
    fn strip(
        &mut self,
        t: TermId,
        hoist: bool,
        place: &FxHashMap<TermId, Option<TermId>>,
    ) -> Option<TermId> {
        match self.store.node(t).clone() {
            Node::Prim(Prim::Mul, xs) if self.is_product(t) => {
                let parts: Vec<TermId> = xs
                    .iter()
                    .filter_map(|&x| self.strip(x, hoist, place))
                    .collect();
                match parts.len() {
                    0 => None,
                    1 => Some(parts[0]),
                    _ => Some(self.store.prim(Prim::Mul, parts, Type::Prob)),
                }
            }
            Node::Let(_, _, b) if hoist && *self.store.ty(t) == Type::Prob => {
                self.strip(b, hoist, place)
            }
            _ => match place.get(&t) {
                Some(at) => *at,
                None => Some(self.children(t)),
            },
        }
    }

    /// The factors of the product `t` (nested products and `let`s around factors taken
    /// apart), each with the `let`s it was under (indices into `flat.binds`).
    fn flatten(&self, t: TermId, scope: &mut Vec<usize>, flat: &mut Flat) {
        match self.store.node(t) {
            Node::Prim(Prim::Mul, xs) if self.is_product(t) => {
                for &x in xs {
                    self.flatten(x, scope, flat);
                }
            }
            Node::Let(v, e, b) if *self.store.ty(t) == Type::Prob => {
                flat.binds.push((*v, *e, scope.clone()));
                scope.push(flat.binds.len() - 1);
                self.flatten(*b, scope, flat);
                scope.pop();
            }
            _ => flat.leaves.push((t, scope.clone())),
        }
    }

    /// The factors of the product `t`, nested products taken apart.
    fn flatten_products(&self, t: TermId, out: &mut Vec<(TermId, Vec<usize>)>) {
        match self.store.node(t) {
            Node::Prim(Prim::Mul, xs) if self.is_product(t) => {
                for &x in xs {
                    self.flatten_products(x, out);
                }
            }
            _ => out.push((t, Vec::new())),
        }
    }

    /// `t` with its children rewritten.
    fn children(&mut self, t: TermId) -> TermId {
        let ch = self.store.node(t).children();
        let new: Vec<TermId> = ch.iter().map(|&c| stack::grow(|| self.go(c))).collect();
        with_children(self.store, t, &new)
    }

    fn is_product(&self, t: TermId) -> bool {
        matches!(self.store.node(t), Node::Prim(Prim::Mul, _)) && *self.store.ty(t) == Type::Prob
    }

    /// The logarithm factors `logs` (two or more) as one, under the range test.
    fn merge(&mut self, logs: Vec<Factor>) -> TermId {
        self.merged += 1;
        let prob = Type::Prob;
        let real = Type::Real;
        // the factors a caller's analysis bounds within 2^±b need no test while their
        // bounds and the tested factors' 2^±e add up to at most 2^±BUDGET
        let values: Vec<TermId> = logs
            .iter()
            .map(|f| match f {
                Factor::Log(a) | Factor::Divisor(a) => *a,
            })
            .collect();
        let mut bits: Vec<Option<u32>> = values
            .iter()
            .map(|&a| (self.bound)(self.store, a))
            .collect();
        let known: u32 = bits.iter().flatten().sum();
        let tested = bits.iter().filter(|b| b.is_none()).count() as u32;
        let e = match BUDGET.checked_sub(known) {
            Some(left) if tested == 0 || left / tested >= MIN_BITS => {
                left.checked_div(tested).unwrap_or(0)
            }
            // too wide together: every factor tested
            _ => {
                bits = vec![None; values.len()];
                BUDGET / values.len() as u32
            }
        };
        self.untested += bits.iter().flatten().count();
        // 2^e for e <= BUDGET is always a rational; were it not, the bounds 1 and 1 would
        // fail every test, and the factors would stay as they were
        let two = Rational::from_integer(2);
        let hi = two
            .pow(i64::from(e))
            .unwrap_or_else(|| Rational::from_integer(1));
        let lo = hi.recip().unwrap_or_else(|| Rational::from_integer(1));
        let hi = self.store.lit(hi.to_big(), real.clone());
        let lo = self.store.lit(lo.to_big(), real.clone());
        let mut logs_bound = Vec::new();
        let (mut nums, mut dens, mut tests, mut slow) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (f, b) in logs.into_iter().zip(bits) {
            let (value, divisor) = match f {
                Factor::Log(a) => (a, false),
                Factor::Divisor(a) => (a, true),
            };
            let v = self.store.fresh_var("f", real.clone());
            logs_bound.push((v, value));
            let x = self.store.var_term(v);
            if b.is_none() {
                let above = self.store.prim(Prim::Lt, vec![lo, x], Type::Bool);
                let below = self.store.prim(Prim::Lt, vec![x, hi], Type::Bool);
                tests.push(above);
                tests.push(below);
            }
            let log = self
                .store
                .intern(Node::Coerce(Coercion::Real2Prob, x), prob.clone());
            if divisor {
                dens.push(x);
                slow.push(self.store.prim(Prim::Recip, vec![log], prob.clone()));
            } else {
                nums.push(x);
                slow.push(log);
            }
        }
        let mut value = match nums.len() {
            1 => nums[0],
            _ => self.store.prim(Prim::Mul, nums, real.clone()),
        };
        if !dens.is_empty() {
            let d = match dens.len() {
                1 => dens[0],
                _ => self.store.prim(Prim::Mul, dens, real.clone()),
            };
            let inv = self.store.prim(Prim::Recip, vec![d], real.clone());
            value = self.store.prim(Prim::Mul, vec![value, inv], real);
        }
        let fast = self
            .store
            .intern(Node::Coerce(Coercion::Real2Prob, value), prob.clone());
        let slow = self.store.prim(Prim::Mul, slow, prob.clone());
        let mut merged = match tests.len() {
            0 => fast,
            _ => {
                let test = self.store.prim(Prim::And, tests, Type::Bool);
                self.store.intern(Node::If(test, fast, slow), prob.clone())
            }
        };
        for &(v, e) in logs_bound.iter().rev() {
            merged = self.store.intern(Node::Let(v, e, merged), prob.clone());
        }
        merged
    }

    /// `f` as a logarithm factor and what stays beside it, or `(None, _)`.
    fn factor(&mut self, f: TermId) -> (Option<Factor>, Option<TermId>) {
        if let Some(a) = self.log_of(f) {
            return (Some(Factor::Log(a)), None);
        }
        match self.store.node(f).clone() {
            Node::Prim(Prim::Recip, xs) if xs.len() == 1 => match self.log_of(xs[0]) {
                Some(a) => (Some(Factor::Divisor(a)), None),
                None => (None, None),
            },
            Node::If(c, x, y) => {
                let real = Type::Real;
                let prob = Type::Prob;
                let (lx, ly) = (self.log_of(x), self.log_of(y));
                let one_r = self.store.int_lit(1, real.clone());
                let one_p = self.store.int_lit(1, prob.clone());
                let (a, b, keep) = match (lx, ly) {
                    (Some(a), Some(b)) => (a, b, None),
                    (Some(a), None) => (a, one_r, (!is_one(self.store, y)).then_some((one_p, y))),
                    (None, Some(b)) => (one_r, b, (!is_one(self.store, x)).then_some((x, one_p))),
                    (None, None) => return (None, None),
                };
                let sel = self.store.intern(Node::If(c, a, b), real);
                let keep = keep.map(|(p, q)| self.store.intern(Node::If(c, p, q), prob));
                (Some(Factor::Log(sel)), keep)
            }
            _ => (None, None),
        }
    }

    /// `a` where `t` is `real2prob(a)`, `nat2real(n)` where it is `nat2prob(n)`.
    fn log_of(&mut self, t: TermId) -> Option<TermId> {
        match *self.store.node(t) {
            Node::Coerce(Coercion::Real2Prob, a) => Some(a),
            Node::Coerce(Coercion::Nat2Prob, n) => Some(
                self.store
                    .intern(Node::Coerce(Coercion::Nat2Real, n), Type::Real),
            ),
            _ => None,
        }
    }
}
