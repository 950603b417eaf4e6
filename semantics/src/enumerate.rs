//! Runs of a measure that sum over its finite choices and sample only its continuous
//! draws, from a proposal: the walk of the judge's adaptive importance sampler (issue 10).
//!
//! One *run* walks the measure term forward, carrying the log weight of the path so far,
//! and ends in a list of *leaves*, each an outcome with its log weight, such that
//! `Σ_leaves w · h(v)` is an unbiased estimate of `integrate(m, h)` for every `h`:
//! - a `categorical` draw (and a `<|>`) is *enumerated*: the walk continues once per
//!   value, the path weight times the value's probability (a Rao-Blackwellisation of the
//!   finite part), while the product of the branchings on the path stays within
//!   `max_paths`; past that budget the value is drawn instead (weight 1, the prior as
//!   proposal), so a run never has more than `max_paths` leaves;
//! - a continuous draw (normal, gamma, beta, uniform) is drawn once per path, from the
//!   prior or from a fitted [`Guide`], and the path remembers its coordinate and the log
//!   densities of the prior and of the guide there (`guide.rs`);
//! - `poisson` is drawn from its prior; `lebesgue` and `counting` cannot be (an error:
//!   quadrature handles those);
//! - weights, observations and measures that need no randomness are applied in place.
//!
//! At a leaf, the path's weight is the program's weights times `P / (α P + (1 - α) Q)`,
//! where `P` and `Q` are the products of the prior's and the guide's densities of the
//! path's continuous draws (in the guide's coordinates) and the run used the prior with
//! probability `α` and the guide otherwise (defensive importance sampling: the weight is
//! at most `1/α` times the program's own weights, so a bad fit costs efficiency, never
//! correctness). The guide is consulted one draw at a time, at the draw's position on the
//! path: a draw of another kind than the guide expects there, or beyond its dimension,
//! is proposed by the prior from there on (the guide's density is then the prior's), so
//! runs whose draws vary in number or kind stay exact estimates. A run that made no
//! random choice at all is exact: every run would give the same leaves.
//!
//! This module reads terms and never rewrites them, like the rest of the interpreter.

use slic_algebra::{Node, TermId, VarId};

use crate::dist::PrimMeasure;
use crate::error::{bad_arg, budget, EvalError, EvalResult};
use crate::eval::Interp;
use crate::guide::{Coord, Cursor, Guide, Trace};
use crate::rng::{log_add_exp, log_sum_exp, Rng};
use crate::value::{Env, Value};

/// Where a path continues: the outcome so far and the path's log weight.
type Sink<'c, 's> = dyn Fn(&mut Interp<'s>, &mut RunState, Value, f64) -> EvalResult<()> + 'c;

/// Most elements of a `plate` or `chain` with random elements that a run nests (each
/// element is a level of the walk's recursion).
const MAX_NESTED_ELEMENTS: u64 = 256;

/// One continuous draw on the current path.
#[derive(Clone, Debug)]
struct Step {
    kind: Coord,
    z: f64,
    /// Σ of the prior's log densities (in the coordinates) up to and including this draw.
    cum_lp: f64,
    /// Σ of the guide's log densities likewise.
    cum_lq: f64,
    /// The guide's cursor after this draw; `None` once the guide no longer applies.
    cursor: Option<Cursor>,
}

/// The state of the runs of one sampler: its generator, its proposal, and the current
/// run's path and leaves.
pub struct RunState {
    rng: Rng,
    guide: Option<Guide>,
    /// The probability that a run proposes from the prior when there is a guide.
    alpha: f64,
    /// Budget of enumerated paths per run.
    max_paths: u64,
    use_guide: bool,
    branching: u64,
    path: Vec<Step>,
    /// The current run's leaves: outcome and final log weight.
    pub leaves: Vec<(Value, f64)>,
    /// Did the current run draw anything at random?
    pub random: bool,
    /// The continuous coordinates of the run's first leaf, and whether every leaf had
    /// the same (the run is then one trace, usable to fit a guide).
    first: Option<(Vec<Coord>, Vec<f64>)>,
    shared: bool,
}

impl RunState {
    /// A sampler seeded with `seed`, proposing from `guide` in a fraction `1 - alpha` of
    /// its runs (from the prior in all of them without a guide).
    pub fn new(seed: u64, guide: Option<Guide>, alpha: f64, max_paths: u64) -> RunState {
        RunState {
            rng: Rng::seed_from_u64(seed),
            guide,
            alpha: alpha.clamp(0.0, 1.0),
            max_paths: max_paths.max(1),
            use_guide: false,
            branching: 1,
            path: Vec::new(),
            leaves: Vec::new(),
            random: false,
            first: None,
            shared: true,
        }
    }

    fn reset(&mut self) {
        self.branching = 1;
        self.path.clear();
        self.leaves.clear();
        self.random = false;
        self.first = None;
        self.shared = true;
        self.use_guide = match self.guide {
            Some(_) => self.rng.uniform() >= self.alpha,
            None => false,
        };
    }

    /// The current run as one weighted trace (its continuous coordinates and total
    /// weight), when all its leaves share the same coordinates and there are some.
    pub fn trace(&self) -> Option<Trace> {
        let (kinds, z) = self.first.clone()?;
        if !self.shared || z.is_empty() {
            return None;
        }
        let lws: Vec<f64> = self.leaves.iter().map(|(_, l)| *l).collect();
        Some(Trace {
            kinds,
            z,
            ln_w: log_sum_exp(&lws),
        })
    }

    /// A leaf: the path's final weight (see the module doc) and its coordinates.
    fn leaf(&mut self, v: Value, lw: f64) {
        let (lp, lq) = self
            .path
            .last()
            .map_or((0.0, 0.0), |s| (s.cum_lp, s.cum_lq));
        let lw = if self.guide.is_some() && !self.path.is_empty() {
            let a = self.alpha;
            let mix = log_add_exp(a.ln() + lp, (1.0 - a).ln() + lq);
            lw + lp - mix
        } else {
            lw
        };
        match &self.first {
            None => {
                self.first = Some((
                    self.path.iter().map(|s| s.kind).collect(),
                    self.path.iter().map(|s| s.z).collect(),
                ));
            }
            Some((kinds, z)) => {
                let same = kinds.len() == self.path.len()
                    && self
                        .path
                        .iter()
                        .zip(kinds.iter().zip(z))
                        .all(|(s, (k, z))| s.kind == *k && s.z == *z);
                self.shared &= same;
            }
        }
        self.leaves.push((v, lw));
    }

    /// The guide's cursor for the next draw, if the guide applies to a draw of `kind`.
    fn cursor_for(&self, kind: Coord) -> Option<Cursor> {
        let g = self.guide.as_ref()?;
        let k = self.path.len();
        if g.kinds.get(k) != Some(&kind) {
            return None;
        }
        match self.path.last() {
            None => Some(Cursor::default()),
            Some(s) => s.cursor.clone(),
        }
    }
}

impl<'s> Interp<'s> {
    /// One run of the measure value `m` (see the module doc): afterwards `st.leaves` holds
    /// its weighted outcomes and `st.random` says whether it drew anything.
    pub fn run_paths(&mut self, m: &Value, st: &mut RunState) -> EvalResult<()> {
        self.begin();
        st.reset();
        let Value::Measure(mv) = m else {
            return Err(bad_arg(
                "sample",
                format!("expected a measure, found {}", m.kind()),
            ));
        };
        self.walk(st, mv.term, &mv.env, 0.0, &|_, st, v, lw| {
            st.leaf(v, lw);
            Ok(())
        })
    }

    fn walk(
        &mut self,
        st: &mut RunState,
        t: TermId,
        env: &Env,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        self.enter()?;
        let r = self.walk_inner(st, t, env, lw, k);
        self.leave();
        r
    }

    fn walk_inner(
        &mut self,
        st: &mut RunState,
        term: TermId,
        env: &Env,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        let store = self.store;
        let mut t = term;
        let mut env = env.clone();
        let mut lw = lw;
        loop {
            if lw == f64::NEG_INFINITY {
                // a path of weight 0 adds nothing to any integral
                return Ok(());
            }
            match store.node(t) {
                Node::Dirac(e) => {
                    let v = self.ev(*e, &env)?;
                    return k(self, st, v, lw);
                }
                Node::Weight(w, m) => {
                    lw += self.ln_prob(*w, &env, "weight")?;
                    t = *m;
                }
                Node::Reject => return Ok(()),
                Node::Superpose(ms) => {
                    let n = ms.len() as u64;
                    if st.branching.saturating_mul(n) <= st.max_paths {
                        let saved = st.branching;
                        st.branching = saved * n;
                        for mi in ms {
                            self.walk(st, *mi, &env, lw, k)?;
                        }
                        st.branching = saved;
                        return Ok(());
                    }
                    st.random = true;
                    let Some(&pick) = ms.get(st.rng.below(n) as usize) else {
                        return Ok(());
                    };
                    lw += (n as f64).ln();
                    t = pick;
                }
                Node::Bind(x, m, body) => {
                    // a bound measure that needs no randomness is stepped over in place
                    if let Some((v, w)) = self.draw(*m, &env, None)? {
                        lw += w;
                        env = env.bind(*x, v);
                        t = *body;
                        continue;
                    }
                    let (x, body) = (*x, *body);
                    let outer = env.clone();
                    return self.walk(st, *m, &env, lw, &|it, st, v, lw2| {
                        it.walk(st, body, &outer.bind(x, v), lw2, k)
                    });
                }
                Node::Dist(d, args) => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.ev(*a, &env)?);
                    }
                    let pm = PrimMeasure::new(*d, &vals);
                    let pm = self.at(t, pm)?;
                    return self.walk_prim(st, t, &pm, lw, k);
                }
                Node::Observe(m, v) => {
                    let val = self.ev(*v, &env)?;
                    let ld = self.observe_density(*m, &env, &val)?;
                    if ld == f64::NEG_INFINITY {
                        return Ok(());
                    }
                    return k(self, st, val, lw + ld);
                }
                Node::Plate(i, n, body) => {
                    if let Some((v, w)) = self.draw(t, &env, None)? {
                        return k(self, st, v, lw + w);
                    }
                    let n = self.nat(*n, &env, "plate")?;
                    self.nested_ok(n, "plate")?;
                    return self.plate_walk(st, *i, *body, &env, n, Vec::new(), lw, k);
                }
                Node::Chain(s, s0, n, body) => {
                    if let Some((v, w)) = self.draw(t, &env, None)? {
                        return k(self, st, v, lw + w);
                    }
                    let n = self.nat(*n, &env, "chain")?;
                    self.nested_ok(n, "chain")?;
                    let state = self.ev(*s0, &env)?;
                    return self.chain_walk(st, *s, *body, &env, n, Vec::new(), state, lw, k);
                }
                Node::Transform(_, m) => t = *m,
                _ => {
                    let (e2, t2) = self.as_measure(t, &env)?;
                    env = e2;
                    t = t2;
                }
            }
        }
    }

    fn nested_ok(&self, n: u64, what: &str) -> EvalResult<()> {
        if n > MAX_NESTED_ELEMENTS {
            return Err(budget(format!(
                "a {what} of {n} random elements is too large to enumerate over (limit {MAX_NESTED_ELEMENTS})"
            )));
        }
        Ok(())
    }

    /// A primitive measure: enumerated, or drawn from the prior or the guide.
    fn walk_prim(
        &mut self,
        st: &mut RunState,
        t: TermId,
        pm: &PrimMeasure,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        match pm {
            PrimMeasure::Categorical { ln_w, ln_total } => {
                if *ln_total == f64::NEG_INFINITY {
                    return Ok(());
                }
                let live = ln_w.iter().filter(|l| **l > f64::NEG_INFINITY).count() as u64;
                if st.branching.saturating_mul(live) <= st.max_paths {
                    let saved = st.branching;
                    st.branching = saved * live;
                    for (i, l) in ln_w.iter().enumerate() {
                        if *l == f64::NEG_INFINITY {
                            continue;
                        }
                        self.tick()?;
                        self.walk_value(st, Value::Nat(i as u64), lw + l - ln_total, k)?;
                    }
                    st.branching = saved;
                    return Ok(());
                }
                st.random = true;
                match st.rng.categorical(ln_w) {
                    Some(i) => k(self, st, Value::Nat(i as u64), lw),
                    None => Ok(()),
                }
            }
            PrimMeasure::Lebesgue { .. } | PrimMeasure::Counting => {
                let e = Err(EvalError::Unsampleable { measure: pm.name() });
                self.at(t, e)
            }
            PrimMeasure::Poisson { .. } => {
                st.random = true;
                let drawn = pm.sample(&mut st.rng);
                match self.at(t, drawn)? {
                    Some(v) => k(self, st, v, lw),
                    None => Ok(()),
                }
            }
            _ => {
                let Some(kind) = Coord::of(pm) else {
                    return Err(bad_arg("sample", format!("cannot draw {}", pm.name())));
                };
                st.random = true;
                let cursor = st.cursor_for(kind);
                let located = match (&cursor, st.use_guide) {
                    (Some(c), true) => {
                        let guide = st.guide.as_ref();
                        match guide.and_then(|g| g.draw(c, &mut st.rng)) {
                            Some((z, _)) => kind.from_z(pm, z),
                            None => None,
                        }
                    }
                    _ => match kind.prior_draw(pm, &mut st.rng) {
                        Some(loc) => Some(loc),
                        None => {
                            let e = Err(EvalError::Budget {
                                what: format!("the {} sampler did not accept a draw", pm.name()),
                            });
                            return self.at(t, e);
                        }
                    },
                };
                // a proposed coordinate whose prior density is 0 (or not a number) adds
                // nothing to any integral
                let Some(loc) = located else {
                    return Ok(());
                };
                if loc.ln_prior_z == f64::NEG_INFINITY || loc.ln_prior_z.is_nan() {
                    return Ok(());
                }
                let (lq, next) = match (&cursor, st.guide.as_ref()) {
                    (Some(c), Some(g)) => match g.density(c, loc.z) {
                        Some((lq, next)) => (lq, Some(next)),
                        None => (loc.ln_prior_z, None),
                    },
                    _ => (loc.ln_prior_z, None),
                };
                let (lp0, lq0) = st.path.last().map_or((0.0, 0.0), |s| (s.cum_lp, s.cum_lq));
                st.path.push(Step {
                    kind,
                    z: loc.z,
                    cum_lp: lp0 + loc.ln_prior_z,
                    cum_lq: lq0 + lq,
                    cursor: next,
                });
                let r = k(self, st, loc.value, lw);
                st.path.pop();
                r
            }
        }
    }

    /// Continue with an enumerated value.
    fn walk_value(
        &mut self,
        st: &mut RunState,
        v: Value,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        self.enter()?;
        let r = k(self, st, v, lw);
        self.leave();
        r
    }

    #[allow(clippy::too_many_arguments)]
    fn plate_walk(
        &mut self,
        st: &mut RunState,
        i: VarId,
        body: TermId,
        env: &Env,
        n: u64,
        acc: Vec<Value>,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        let j = acc.len() as u64;
        if j >= n {
            return k(self, st, Value::array(acc), lw);
        }
        let envj = self.bind_index(env, i, j)?;
        self.walk(st, body, &envj, lw, &|it, st, v, lw2| {
            let mut next = acc.clone();
            next.push(v);
            it.plate_walk(st, i, body, env, n, next, lw2, k)
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn chain_walk(
        &mut self,
        st: &mut RunState,
        s: VarId,
        body: TermId,
        env: &Env,
        n: u64,
        acc: Vec<Value>,
        state: Value,
        lw: f64,
        k: &Sink<'_, 's>,
    ) -> EvalResult<()> {
        if acc.len() as u64 >= n {
            return k(self, st, Value::pair(Value::array(acc), state), lw);
        }
        let envs = env.bind(s, state);
        self.walk(st, body, &envs, lw, &|it, st, v, lw2| {
            let Value::Pair(p) = v else {
                return Err(bad_arg(
                    "chain",
                    format!("a step gave {}, not a pair", v.kind()),
                ));
            };
            let mut next = acc.clone();
            next.push(p.0.clone());
            it.chain_walk(st, s, body, env, n, next, p.1.clone(), lw2, k)
        })
    }
}
