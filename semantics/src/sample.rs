//! Importance sampling of measure values: one draw with its log weight.
//!
//! [`Interp::sample`] returns `(v, log w)` such that the average of `w * h(v)` over many
//! draws is an unbiased estimate of `integrate(m, h)` for every `h`. So `return e` has
//! weight 1, `weight(w, m)` multiplies by `w`, `reject` has weight 0 (its value is a
//! placeholder of the right type), `m1 <|> ... <|> mk` picks one branch uniformly and
//! multiplies by `k`, `x <~ m; k` and `plate` multiply the weights of their parts, and
//! `observe(m, v)` returns `v` weighted by m's density at `v` (element-wise for a plate).
//! `lebesgue` and `counting` have no normalised draw: sampling them is an
//! [`EvalError::Unsampleable`] (use `expect`).
//!
//! The same walk run *without* a generator (`draw` with `None`) computes the outcome of a
//! measure that needs no randomness (a weighted dirac); `expect` uses it to integrate
//! large plates of observations without nesting.

use slic_algebra::{Node, TermId, VarId};

use crate::dist::PrimMeasure;
use crate::error::{bad_arg, EvalError, EvalResult};
use crate::eval::{is_measure_node, EvalConfig, Interp};
use crate::rng::{log_sum_exp, Rng};
use crate::value::{Env, Value};

impl<'s> Interp<'s> {
    /// One weighted draw from a measure value.
    pub fn sample(&mut self, m: &Value, rng: &mut Rng) -> EvalResult<(Value, f64)> {
        self.begin();
        let Value::Measure(mv) = m else {
            return Err(bad_arg(
                "sample",
                format!("expected a measure, found {}", m.kind()),
            ));
        };
        match self.draw(mv.term, &mv.env, Some(rng))? {
            Some(r) => Ok(r),
            // Unreachable with a generator; reported rather than assumed.
            None => Err(bad_arg(
                "sample",
                "the sampler needed randomness it did not get",
            )),
        }
    }

    /// The placeholder outcome of a zero-weight draw from the measure term `t`.
    fn placeholder(&self, t: TermId) -> Value {
        match self.store.ty(t).measure_of() {
            Some(ty) => Value::default_of(ty),
            None => Value::Unit,
        }
    }

    /// A draw from the measure term `t` in `env`; `Ok(None)` when `rng` is `None` and the
    /// measure needs randomness.
    pub(crate) fn draw(
        &mut self,
        t: TermId,
        env: &Env,
        rng: Option<&mut Rng>,
    ) -> EvalResult<Option<(Value, f64)>> {
        self.enter()?;
        let r = self.draw_inner(t, env, rng);
        self.leave();
        r
    }

    fn draw_inner(
        &mut self,
        term: TermId,
        env: &Env,
        mut rng: Option<&mut Rng>,
    ) -> EvalResult<Option<(Value, f64)>> {
        let store = self.store;
        let mut t = term;
        let mut env = env.clone();
        let mut lw = 0.0f64;
        loop {
            match store.node(t) {
                Node::Dirac(e) => return Ok(Some((self.ev(*e, &env)?, lw))),
                Node::Weight(w, m) => {
                    let l = self.ln_prob(*w, &env, "weight")?;
                    if l == f64::NEG_INFINITY {
                        return Ok(Some((self.placeholder(term), l)));
                    }
                    lw += l;
                    t = *m;
                }
                Node::Reject => return Ok(Some((self.placeholder(term), f64::NEG_INFINITY))),
                Node::Superpose(ms) => {
                    let Some(r) = rng.as_deref_mut() else {
                        return Ok(None);
                    };
                    let k = ms.len() as u64;
                    let Some(&pick) = ms.get(r.below(k) as usize) else {
                        return Ok(Some((self.placeholder(term), f64::NEG_INFINITY)));
                    };
                    lw += (k as f64).ln();
                    t = pick;
                }
                Node::Bind(x, m, k) => {
                    let Some((v, w)) = self.draw(*m, &env, rng.as_deref_mut())? else {
                        return Ok(None);
                    };
                    if w == f64::NEG_INFINITY {
                        return Ok(Some((self.placeholder(term), w)));
                    }
                    lw += w;
                    env = env.bind(*x, v);
                    t = *k;
                }
                Node::Plate(i, n, m) => {
                    let n = self.nat(*n, &env, "plate")?;
                    self.check_len(n)?;
                    self.spend(u128::from(n), "plate")?;
                    let mut items = Vec::with_capacity(n as usize);
                    for j in 0..n {
                        let iv = self.index_value(*i, i128::from(j))?;
                        let Some((v, w)) = self.draw(*m, &env.bind(*i, iv), rng.as_deref_mut())?
                        else {
                            return Ok(None);
                        };
                        lw += w;
                        items.push(v);
                    }
                    return Ok(Some((Value::array(items), lw)));
                }
                Node::Chain(s, s0, n, m) => {
                    let mut state = self.ev(*s0, &env)?;
                    let n = self.nat(*n, &env, "chain")?;
                    self.check_len(n)?;
                    self.spend(u128::from(n), "chain")?;
                    let mut items = Vec::with_capacity(n as usize);
                    for _ in 0..n {
                        let Some((v, w)) =
                            self.draw(*m, &env.bind(*s, state.clone()), rng.as_deref_mut())?
                        else {
                            return Ok(None);
                        };
                        lw += w;
                        let Value::Pair(p) = v else {
                            return Err(bad_arg(
                                "chain",
                                format!("a step gave {}, not a pair", v.kind()),
                            ));
                        };
                        items.push(p.0.clone());
                        state = p.1.clone();
                    }
                    return Ok(Some((Value::pair(Value::array(items), state), lw)));
                }
                Node::Dist(d, args) => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.ev(*a, &env)?);
                    }
                    // bad parameters and unsampleable measures are reported at the draw
                    let pm = PrimMeasure::new(*d, &vals);
                    let pm = self.at(t, pm)?;
                    let Some(r) = rng.as_deref_mut() else {
                        return Ok(None);
                    };
                    if matches!(pm, PrimMeasure::Lebesgue { .. } | PrimMeasure::Counting) {
                        let e = Err(EvalError::Unsampleable { measure: pm.name() });
                        return self.at(t, e);
                    }
                    let drawn = pm.sample(r);
                    return Ok(Some(match self.at(t, drawn)? {
                        Some(v) => (v, lw),
                        None => (self.placeholder(term), f64::NEG_INFINITY),
                    }));
                }
                Node::Observe(m, v) => {
                    let val = self.ev(*v, &env)?;
                    let ld = self.observe_density(*m, &env, &val)?;
                    return Ok(Some((val, lw + ld)));
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

    /// Evaluates a measure-typed term that is not itself a measure constructor (a
    /// variable, `let`, `if`, `match`, application, index...) to its measure closure.
    pub(crate) fn as_measure(&mut self, t: TermId, env: &Env) -> EvalResult<(Env, TermId)> {
        match self.ev(t, env)? {
            Value::Measure(mv) if is_measure_node(self.store.node(mv.term)) => {
                Ok((mv.env.clone(), mv.term))
            }
            other => Err(bad_arg(
                "measure",
                format!("expected a measure, found {}", other.kind()),
            )),
        }
    }

    /// The log density of the measure term `m` at `v`: primitives by their density,
    /// `plate` element-wise (a size mismatch is density 0), `weight` scales, `<|>` adds,
    /// `reject` is 0. Other measures (dirac, bind, chain) have no density here.
    pub(crate) fn observe_density(&mut self, m: TermId, env: &Env, v: &Value) -> EvalResult<f64> {
        self.enter()?;
        let r = self.observe_inner(m, env, v);
        self.leave();
        r
    }

    fn observe_inner(&mut self, m: TermId, env: &Env, v: &Value) -> EvalResult<f64> {
        let store = self.store;
        let mut t = m;
        let mut env = env.clone();
        let mut lw = 0.0;
        loop {
            match store.node(t) {
                Node::Dist(d, args) => {
                    let mut vals = Vec::with_capacity(args.len());
                    for a in args {
                        vals.push(self.ev(*a, &env)?);
                    }
                    return Ok(lw + PrimMeasure::new(*d, &vals)?.log_density(v)?);
                }
                Node::Plate(i, n, body) => {
                    let n = self.nat(*n, &env, "plate")?;
                    let Value::Array(items) = v else {
                        return Err(bad_arg(
                            "observe(plate)",
                            format!("cannot observe {}", v.kind()),
                        ));
                    };
                    if items.len() as u128 != u128::from(n) {
                        return Ok(f64::NEG_INFINITY);
                    }
                    self.spend(u128::from(n), "plate")?;
                    for (j, item) in items.iter().enumerate() {
                        let iv = self.index_value(*i, j as i128)?;
                        lw += self.observe_density(*body, &env.bind(*i, iv), item)?;
                        if lw == f64::NEG_INFINITY {
                            return Ok(lw);
                        }
                    }
                    return Ok(lw);
                }
                Node::Weight(w, inner) => {
                    lw += self.ln_prob(*w, &env, "weight")?;
                    if lw == f64::NEG_INFINITY {
                        return Ok(lw);
                    }
                    t = *inner;
                }
                Node::Reject => return Ok(f64::NEG_INFINITY),
                Node::Superpose(ms) => {
                    let mut ls = Vec::with_capacity(ms.len());
                    for mi in ms {
                        ls.push(self.observe_density(*mi, &env, v)?);
                    }
                    return Ok(lw + log_sum_exp(&ls));
                }
                Node::Transform(_, inner) => t = *inner,
                Node::Dirac(_) | Node::Bind(..) | Node::Chain(..) | Node::Observe(..) => {
                    return Err(EvalError::Unobservable {
                        what: describe_measure(store.node(t)).to_string(),
                    })
                }
                _ => {
                    let (e2, t2) = self.as_measure(t, &env)?;
                    env = e2;
                    t = t2;
                }
            }
        }
    }

    /// `env` with the loop index `i` bound to `j` (typed as `i` is).
    pub(crate) fn bind_index(&self, env: &Env, i: VarId, j: u64) -> EvalResult<Env> {
        Ok(env.bind(i, self.index_value(i, i128::from(j))?))
    }
}

fn describe_measure(n: &Node) -> &'static str {
    match n {
        Node::Dirac(_) => "a dirac measure",
        Node::Bind(..) => "a bind (use the observed variable's own measure)",
        Node::Chain(..) => "a chain",
        Node::Observe(..) => "an observation",
        _ => "this measure",
    }
}

/// One weighted draw from a measure value with the default configuration.
pub fn sample(store: &slic_algebra::Store, m: &Value, rng: &mut Rng) -> EvalResult<(Value, f64)> {
    Interp::new(store, EvalConfig::default()).sample(m, rng)
}

/// `n` weighted draws (one top-level budget per draw).
pub fn sample_n(
    store: &slic_algebra::Store,
    m: &Value,
    rng: &mut Rng,
    n: usize,
) -> EvalResult<Vec<(Value, f64)>> {
    let mut it = Interp::new(store, EvalConfig::default());
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(it.sample(m, rng)?);
    }
    Ok(out)
}
