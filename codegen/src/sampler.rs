//! The loop IR's randomness (issue 11, deliverable 5): a seeded generator and the laws a
//! measure program draws from, validated once from the draw's evaluated arguments.
//!
//! [`Rng`] is xoshiro256** seeded through splitmix64, so a seed gives the same stream on
//! every platform (the samplers use `libm`, not the platform's `ln`/`exp`). [`Law`] is a
//! primitive distribution with checked parameters (normal's standard deviation positive
//! and finite, uniform's bounds ordered, categorical's weights finite, ...); it samples,
//! and a categorical also hands its normalised weights to exact enumeration. Everything a
//! `prob` touches stays in log space: gamma and beta variates are drawn as logarithms, so
//! a shape of 0.01 still gives positive, finite logs where the linear value underflows.
//!
//! Written here, not borrowed from `slic-semantics`: the IR interpreter is an independent
//! evaluator, checked against the reference interpreter by tests only. `lebesgue` and
//! `counting` are not laws (they cannot be drawn; the verifier refuses such draws).

use crate::interp::{log_add, log_sum_exp, Val};
use slic_algebra::Dist;

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// One step of splitmix64: how a single `u64` seed is spread over xoshiro's 256 bits (and
/// how `gibbs::chains` derives each chain's seed from the run's).
pub(crate) fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// The generator of `seed`.
    pub fn seed_from_u64(seed: u64) -> Rng {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The generator's 256 bits: what a compiled kernel's own xoshiro256** starts from
    /// (`kernel.rs`), so that a seed means one stream on every backend.
    pub(crate) fn state(&self) -> [u64; 4] {
        self.s
    }

    /// The generator at the state a compiled kernel's own left it in (`kernel.rs`).
    pub(crate) fn from_state(s: [u64; 4]) -> Rng {
        Rng { s }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let out = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// Uniform on `[0, 1)`, 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on `(0, 1)`: safe to take the logarithm of.
    pub fn uniform_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal variate (Box-Muller; the second variate of the pair is dropped
    /// so that the generator carries no hidden state besides its 256 bits).
    pub fn normal(&mut self) -> f64 {
        let r = libm::sqrt(-2.0 * libm::log(self.uniform_open()));
        r * libm::cos(2.0 * std::f64::consts::PI * self.uniform())
    }

    /// `ln G` of a Gamma(shape, 1) variate `G`, `shape > 0` and finite. Marsaglia and
    /// Tsang (2000) for shape >= 1; below 1, their boost `G(a) = G(a + 1) · U^(1/a)`,
    /// taken in logs because `U^(1/a)` underflows for small `a`. `None` when the
    /// rejection loop fails `MAX_TRIES` times in a row (probability below 10^-1000).
    pub fn ln_gamma(&mut self, shape: f64) -> Option<f64> {
        if shape < 1.0 {
            let g = self.ln_gamma(shape + 1.0)?;
            return Some(g + libm::log(self.uniform_open()) / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / libm::sqrt(9.0 * d);
        for _ in 0..MAX_TRIES {
            let x = self.normal();
            let v = 1.0 + c * x;
            if v <= 0.0 {
                continue;
            }
            let v = v * v * v;
            let ln_v = libm::log(v);
            let u = self.uniform_open();
            if libm::log(u) < 0.5 * x * x + d - d * v + d * ln_v {
                return Some(libm::log(d) + ln_v);
            }
        }
        None
    }

    /// A Poisson(rate) variate, `0 <= rate <= MAX_POISSON_RATE`. Inversion: the support is
    /// walked in a fixed order, adding probabilities until they exceed a uniform `u`.
    /// Small rates walk up from 0; larger ones start at the mode and step each time to
    /// the more probable neighbour of the walked interval (any fixed order gives an exact
    /// sampler; this one takes O(√rate) steps).
    pub fn poisson(&mut self, rate: f64) -> u64 {
        if rate <= 0.0 {
            return 0;
        }
        let u = self.uniform();
        if rate < 30.0 {
            let mut k = 0u64;
            let mut p = libm::exp(-rate);
            let mut cum = p;
            // rounding may leave `cum` just below 1; past 400 the tail is below 1e-200
            while u >= cum && k < 400 {
                k += 1;
                p *= rate / k as f64;
                cum += p;
            }
            return k;
        }
        let m = rate.floor();
        let pm = libm::exp(-rate + m * libm::log(rate) - libm::lgamma(m + 1.0));
        let (mut lo, mut hi) = (m, m);
        let (mut p_lo, mut p_hi) = (pm, pm);
        let mut cum = pm;
        let mut last = m;
        while u >= cum {
            let up = p_hi * rate / (hi + 1.0);
            let down = if lo > 0.0 { p_lo * lo / rate } else { 0.0 };
            if up == 0.0 && down == 0.0 {
                // both tails underflowed: what is left is rounding
                break;
            }
            if up >= down {
                hi += 1.0;
                p_hi = up;
                cum += up;
                last = hi;
            } else {
                lo -= 1.0;
                p_lo = down;
                cum += down;
                last = lo;
            }
        }
        last as u64
    }

    /// An index drawn with probability proportional to `exp(ln_w[i])`; `None` when all
    /// weights are zero.
    pub fn categorical(&mut self, ln_w: &[f64]) -> Option<usize> {
        let m = ln_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            return None;
        }
        let w: Vec<f64> = ln_w.iter().map(|l| libm::exp(l - m)).collect();
        let total: f64 = w.iter().sum();
        let target = self.uniform() * total;
        let mut cum = 0.0;
        let mut pick = None;
        for (i, wi) in w.iter().enumerate() {
            if *wi > 0.0 {
                cum += wi;
                pick = Some(i);
                if target < cum {
                    break;
                }
            }
        }
        // past the end only by rounding: the last index of non-zero weight
        pick
    }
}

/// Rejection loops give up after this many tries (each accepts with probability > 0.9).
const MAX_TRIES: usize = 10_000;

/// The largest Poisson rate the sampler takes: its walk costs O(√rate) steps, and the
/// mode's probability, from `lgamma`, loses relative accuracy as the rate grows.
pub const MAX_POISSON_RATE: f64 = 1e10;

/// A primitive distribution with validated parameters. `prob` parameters are held as
/// logarithms where the sampler works in logs.
#[derive(Clone, Debug, PartialEq)]
pub enum Law {
    Uniform {
        lo: f64,
        hi: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// Gamma(shape, scale): density `x^(shape-1) e^(-x/scale) / (Γ(shape) scale^shape)`.
    Gamma {
        shape: f64,
        ln_scale: f64,
    },
    Beta {
        a: f64,
        b: f64,
    },
    Poisson {
        rate: f64,
    },
    /// Normalised log weights (`ln (w_i / Σ w)`); empty of finite entries when the
    /// weights sum to 0 (the zero measure).
    Categorical {
        ln_p: Vec<f64>,
    },
}

/// Does `dist` have finitely many values, so that exact inference can enumerate its
/// draws? Only `categorical` does (poisson's support is unbounded).
pub fn is_finite(dist: Dist) -> bool {
    dist == Dist::Categorical
}

/// A `prob` argument's linear value, positive and finite.
fn positive(dist: Dist, what: &str, l: f64) -> Result<f64, String> {
    let x = libm::exp(l);
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(format!(
            "{}'s {what} {x} is not positive and finite",
            dist.name()
        ))
    }
}

impl Law {
    /// The law of `dist(args)`, the arguments evaluated to the types `Dist::param_types`
    /// gives (the verifier saw to that); an error says which parameter is out of range.
    pub fn new(dist: Dist, args: &[Val]) -> Result<Law, String> {
        let wrong = || format!("{} cannot be drawn from arguments {args:?}", dist.name());
        Ok(match (dist, args) {
            (Dist::Uniform, [Val::Real(lo), Val::Real(hi)]) => {
                if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                    return Err(format!(
                        "uniform's bounds ({lo}, {hi}) must be finite with lo < hi"
                    ));
                }
                Law::Uniform { lo: *lo, hi: *hi }
            }
            (Dist::Normal, [Val::Real(mean), Val::Prob(l_sd)]) => {
                if !mean.is_finite() {
                    return Err(format!("normal's mean {mean} is not finite"));
                }
                Law::Normal {
                    mean: *mean,
                    sd: positive(dist, "standard deviation", *l_sd)?,
                }
            }
            (Dist::Gamma, [Val::Prob(l_shape), Val::Prob(l_scale)]) => {
                positive(dist, "scale", *l_scale)?;
                Law::Gamma {
                    shape: positive(dist, "shape", *l_shape)?,
                    ln_scale: *l_scale,
                }
            }
            (Dist::Beta, [Val::Prob(la), Val::Prob(lb)]) => Law::Beta {
                a: positive(dist, "first parameter", *la)?,
                b: positive(dist, "second parameter", *lb)?,
            },
            (Dist::Poisson, [Val::Prob(l_rate)]) => {
                let rate = libm::exp(*l_rate);
                if !(rate.is_finite() && rate <= MAX_POISSON_RATE) {
                    return Err(format!(
                        "poisson's rate {rate} is beyond the sampler's {MAX_POISSON_RATE}"
                    ));
                }
                Law::Poisson { rate }
            }
            (Dist::Categorical, [Val::Array(items)]) => {
                let mut ln_w = Vec::with_capacity(items.len());
                for it in items.iter() {
                    match it {
                        Val::Prob(l) if !l.is_nan() && *l < f64::INFINITY => ln_w.push(*l),
                        Val::Prob(l) => {
                            return Err(format!(
                                "categorical's weight {} is not finite",
                                libm::exp(*l)
                            ))
                        }
                        _ => return Err(wrong()),
                    }
                }
                let ln_total = log_sum_exp(&ln_w);
                if ln_total == f64::INFINITY {
                    return Err("categorical's weights sum to infinity".into());
                }
                let ln_p = ln_w
                    .iter()
                    .map(|l| {
                        if ln_total == f64::NEG_INFINITY {
                            f64::NEG_INFINITY
                        } else {
                            l - ln_total
                        }
                    })
                    .collect();
                Law::Categorical { ln_p }
            }
            _ => return Err(wrong()),
        })
    }

    /// The log density at `v` (a value of the support type; with respect to lebesgue on
    /// reals and probs, counting on naturals), `-inf` outside the support.
    pub fn log_density(&self, v: &Val) -> f64 {
        let ninf = f64::NEG_INFINITY;
        // x^(c-1) at x = 0: 0 for c > 1, 1 for c = 1, infinite for c < 1
        let power_at = |c: f64, ln_x: f64| {
            if ln_x == ninf {
                if c > 1.0 {
                    ninf
                } else if c == 1.0 {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                (c - 1.0) * ln_x
            }
        };
        match (self, v) {
            (Law::Uniform { lo, hi }, Val::Real(x)) => {
                if x >= lo && x <= hi {
                    -libm::log(hi - lo)
                } else {
                    ninf
                }
            }
            (Law::Normal { mean, sd }, Val::Real(x)) => {
                if !x.is_finite() {
                    return ninf;
                }
                let z = (x - mean) / sd;
                -0.5 * z * z - libm::log(*sd) - 0.5 * libm::log(2.0 * std::f64::consts::PI)
            }
            (Law::Gamma { shape, ln_scale }, Val::Prob(ln_x)) => {
                if *ln_x == f64::INFINITY {
                    return ninf;
                }
                power_at(*shape, *ln_x)
                    - libm::exp(ln_x - ln_scale)
                    - libm::lgamma(*shape)
                    - shape * ln_scale
            }
            (Law::Beta { a, b }, Val::Prob(ln_x)) => {
                if *ln_x > 0.0 {
                    return ninf;
                }
                // ln(1 - x), exact near x = 0 and x = 1
                let ln_1mx = if *ln_x > -std::f64::consts::LN_2 {
                    libm::log(-libm::expm1(*ln_x))
                } else {
                    libm::log1p(-libm::exp(*ln_x))
                };
                power_at(*a, *ln_x) + power_at(*b, ln_1mx) - libm::lgamma(*a) - libm::lgamma(*b)
                    + libm::lgamma(a + b)
            }
            (Law::Poisson { rate }, Val::Nat(k)) => {
                let k = *k as f64;
                if *rate == 0.0 {
                    return if k == 0.0 { 0.0 } else { ninf };
                }
                k * libm::log(*rate) - rate - libm::lgamma(k + 1.0)
            }
            (Law::Categorical { ln_p }, Val::Nat(k)) => usize::try_from(*k)
                .ok()
                .and_then(|k| ln_p.get(k))
                .copied()
                .unwrap_or(ninf),
            // a value of another type is never in the support (the verifier rules it out)
            _ => ninf,
        }
    }

    /// One draw, or `None` for the zero measure (a categorical of all-zero weights);
    /// an error only when a rejection sampler gives up.
    pub fn sample(&self, rng: &mut Rng) -> Result<Option<Val>, String> {
        let stuck = || "the gamma sampler did not accept a draw".to_string();
        Ok(Some(match self {
            Law::Uniform { lo, hi } => Val::Real(lo + (hi - lo) * rng.uniform()),
            Law::Normal { mean, sd } => Val::Real(mean + sd * rng.normal()),
            Law::Gamma { shape, ln_scale } => {
                Val::Prob(rng.ln_gamma(*shape).ok_or_else(stuck)? + ln_scale)
            }
            Law::Beta { a, b } => {
                // X / (X + Y) of independent Gamma(a, 1), Gamma(b, 1), in logs
                let x = rng.ln_gamma(*a).ok_or_else(stuck)?;
                let y = rng.ln_gamma(*b).ok_or_else(stuck)?;
                let xy = log_add(x, y);
                if xy == f64::NEG_INFINITY {
                    // both underflowed (parameters near 1e-300): the law is then all but
                    // a coin on {0, 1}, heads with probability a / (a + b)
                    let heads = rng.uniform() * (a + b) < *a;
                    Val::Prob(if heads { 0.0 } else { f64::NEG_INFINITY })
                } else {
                    Val::Prob(x - xy)
                }
            }
            Law::Poisson { rate } => Val::Nat(rng.poisson(*rate)),
            Law::Categorical { ln_p } => match rng.categorical(ln_p) {
                Some(i) => Val::Nat(i as u64),
                None => return Ok(None),
            },
        }))
    }
}
