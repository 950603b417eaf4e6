//! `slic-equiv`: do two programs mean the same?
//!
//! The decision procedure behind `slic-cas equiv`. It sits above both the simplifier
//! (`slic-simplify`) and the reference semantics (`slic-semantics`), which stay
//! independent of each other: the symbolic side asks whether both programs simplify to
//! alpha-equivalent terms; the numeric side asks the reference semantics' judge
//! ([`slic_semantics::compare`]) on the given arguments and on distinct random ones.
//!
//! "Equal" needs a proof: alpha-equivalence after simplification, or agreement on every
//! judged input by deterministic means only (every probe integrated by quadrature with a
//! tight error estimate, or plain values). Agreement where any side was sampled is
//! [`Conclusion::NoDifferenceFound`], which states the smallest differences the sampling
//! could have detected: sampling cannot tell a program from one that differs by less than
//! its noise (issue "Trustworthy verdicts": `x*y` against `x*y + 0.03` once came out
//! "equal").
//!
//! ```
//! use slic_algebra::{front, Store};
//! use slic_equiv::{equiv, Conclusion, EquivConfig};
//! let mut store = Store::new();
//! let a = front::load(&mut store, "fn m real:\nx <~ normal(m, 1)\nreturn x + 1").unwrap();
//! let b = front::load(&mut store, "fn m real: normal(m + 1, 1)").unwrap();
//! let report = equiv(&mut store, a, b, None, &EquivConfig::default()).unwrap();
//! assert!(matches!(report.conclusion, Conclusion::Equal(_)));
//! ```
//!
//! Architecture invariant: this crate decides and reports; it does no IO. The command
//! prints the [`Report`] and maps its [`Conclusion`] to an exit code.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use slic_algebra::{alpha, Store, TermId, Type};
use slic_semantics::{
    compare, random_args, CompareConfig, Method, Rng, Value, Verdict, TIGHT_QUAD_REL_ERR,
};
use slic_simplify::{simplify, SimplifyConfig};

/// Budgets and seeds of one decision.
#[derive(Clone, Debug)]
pub struct EquivConfig {
    /// How many distinct random argument tuples to compare on besides the given ones.
    pub trials: u64,
    /// Seed of the random arguments and of the samplers.
    pub seed: u64,
    /// How long the simplifier may work on each program.
    pub simplify_budget: Duration,
    /// The numeric judge's budgets and tolerances (its seed is replaced by `seed`). The
    /// default allows twice the judge's default draws: a user's question deserves a
    /// finer resolution than the test suites' bulk checks.
    pub compare: CompareConfig,
}

impl Default for EquivConfig {
    fn default() -> EquivConfig {
        EquivConfig {
            trials: 3,
            seed: 0,
            simplify_budget: Duration::from_secs(10),
            compare: CompareConfig {
                samples: 100_000,
                ..CompareConfig::default()
            },
        }
    }
}

/// Where an argument tuple came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Given by the caller (`--args`).
    Given,
    /// Drawn at random from the parameter types.
    Random,
    /// The programs take no parameters: the one input there is.
    NoParameters,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Origin::Given => "--args",
            Origin::Random => "random",
            Origin::NoParameters => "no parameters",
        })
    }
}

/// One argument tuple and the judge's verdict on it.
#[derive(Clone, Debug)]
pub struct Trial {
    pub origin: Origin,
    /// The arguments as a JSON array (the given text for [`Origin::Given`], since a prob
    /// read into log space does not print back digit for digit).
    pub shown: String,
    pub verdict: Verdict,
}

/// How equality was established.
#[derive(Clone, Debug, PartialEq)]
pub enum Proof {
    /// Both programs simplify to alpha-equivalent terms.
    Symbolic,
    /// Every judged input (`agreed` of them; `undecided` more could not be judged) agreed
    /// on every probe, each integrated by quadrature with an error estimate at most
    /// `tight` of the probe's value plus the mass.
    Quadrature {
        agreed: usize,
        undecided: usize,
        tight: f64,
    },
    /// The programs compute plain values (not measures), equal on every judged input
    /// within the relative tolerance `rel_tol`.
    Values {
        agreed: usize,
        undecided: usize,
        rel_tol: f64,
    },
}

/// A difference in one probe that the sampling could not have told from noise.
#[derive(Clone, Debug, PartialEq)]
pub struct Detectable {
    /// The probe's name (`mass`, `E[f]`, ...).
    pub probe: &'static str,
    /// Differences of this probe up to this size pass as agreement.
    pub below: f64,
    /// `below` relative to the probe's larger value in absolute value (`None` where that
    /// is 0).
    pub relative: Option<f64>,
}

/// The decision.
#[derive(Clone, Debug)]
pub enum Conclusion {
    Equal(Proof),
    /// Every judged input agreed, but on `sampled` of the `agreed` inputs a side was
    /// sampled, so a difference below the sampling's resolution could have gone unseen:
    /// over the probes of those inputs, `smallest` and `largest` are the least and the
    /// greatest difference that would still have passed.
    NoDifferenceFound {
        agreed: usize,
        sampled: usize,
        undecided: usize,
        smallest: Detectable,
        largest: Detectable,
    },
    /// The programs differ on the input `shown`.
    Different {
        shown: String,
    },
    /// No input could be judged.
    Unknown,
}

/// How the random argument tuples were drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RandomInputs {
    /// Tuples asked for ([`EquivConfig::trials`], or 0 for programs without parameters).
    pub asked: u64,
    /// Distinct tuples found (compared by their JSON text, and distinct from `--args`).
    pub distinct: usize,
    /// Draws made: at most [`MAX_DRAWS_PER_TRIAL`] per tuple asked.
    pub draws: u64,
}

/// Draws of random tuples allowed per distinct tuple asked: a parameter type with few
/// values (`bool` has 2) runs out of new tuples, and the search for them must end.
pub const MAX_DRAWS_PER_TRIAL: u64 = 20;

/// Everything the decision found, in order, for the command to print.
#[derive(Clone, Debug)]
pub struct Report {
    /// Notes of the simplifier on either program.
    pub notes: Vec<String>,
    /// Why random inputs could not be drawn, if they could not.
    pub no_random: Option<String>,
    /// How many distinct random inputs were found.
    pub random: RandomInputs,
    /// The inputs judged, in order (the last one decided a difference).
    pub trials: Vec<Trial>,
    pub conclusion: Conclusion,
}

/// Why no decision could be attempted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EquivError {
    /// The programs have different types (so they cannot be equal).
    DifferentTypes { first: Type, second: Type },
}

impl std::fmt::Display for EquivError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EquivError::DifferentTypes { first, second } => write!(
                f,
                "the programs have different types, so they cannot be equal: {first} and {second}"
            ),
        }
    }
}

/// Decide whether `a` and `b` (in one store) mean the same: symbolically first, then
/// numerically on `given` (the arguments as values, with their text) and on up to
/// `config.trials` distinct random argument tuples.
pub fn equiv(
    store: &mut Store,
    a: TermId,
    b: TermId,
    given: Option<(Vec<Value>, String)>,
    config: &EquivConfig,
) -> Result<Report, EquivError> {
    let (ta, tb) = (store.ty(a).clone(), store.ty(b).clone());
    if ta != tb {
        return Err(EquivError::DifferentTypes {
            first: ta,
            second: tb,
        });
    }
    // each side's simplification is bounded, so the symbolic phase cannot hold up the
    // numeric one (a stopped simplification is still equivalent, only less simplified)
    let budget = || SimplifyConfig {
        deadline: Instant::now().checked_add(config.simplify_budget),
    };
    let sa = simplify(store, a, &budget());
    let sb = simplify(store, b, &budget());
    let notes: Vec<String> = sa.notes.iter().chain(&sb.notes).cloned().collect();
    let mut report = Report {
        notes,
        no_random: None,
        random: RandomInputs {
            asked: 0,
            distinct: 0,
            draws: 0,
        },
        trials: Vec::new(),
        conclusion: Conclusion::Unknown,
    };
    if alpha::alpha_eq(store, sa.term, sb.term) {
        report.conclusion = Conclusion::Equal(Proof::Symbolic);
        return Ok(report);
    }

    let (params, _) = ta.parameter_types();
    let mut inputs: Vec<(Origin, String, Vec<Value>)> = Vec::new();
    // tuples already chosen, by their JSON text, so that no input is judged twice
    let mut seen: BTreeSet<String> = BTreeSet::new();
    if let Some((values, shown)) = given {
        seen.insert(slic_semantics::args_to_json(&values));
        inputs.push((Origin::Given, shown, values));
    }
    // a program without parameters has one input: random tuples would all be empty
    let (asked, origin) = if params.is_empty() {
        (u64::from(inputs.is_empty()), Origin::NoParameters)
    } else {
        (config.trials, Origin::Random)
    };
    report.random.asked = asked;
    let mut rng = Rng::seed_from_u64(config.seed);
    let max_draws = asked.saturating_mul(MAX_DRAWS_PER_TRIAL);
    while (report.random.distinct as u64) < asked && report.random.draws < max_draws {
        report.random.draws += 1;
        match random_args(&ta, &mut rng) {
            Ok(values) => {
                let shown = slic_semantics::args_to_json(&values);
                if seen.insert(shown.clone()) {
                    report.random.distinct += 1;
                    inputs.push((origin, shown, values));
                }
            }
            Err(why) => {
                report.no_random = Some(why);
                break;
            }
        }
    }
    let compare_config = CompareConfig {
        seed: config.seed,
        ..config.compare.clone()
    };
    for (origin, shown, values) in inputs {
        let verdict = compare(store, a, b, &values, &compare_config);
        let different = verdict.is_different();
        report.trials.push(Trial {
            origin,
            shown: shown.clone(),
            verdict,
        });
        if different {
            report.conclusion = Conclusion::Different { shown };
            return Ok(report);
        }
    }
    report.conclusion = conclude(&report.trials, &compare_config);
    Ok(report)
}

/// The conclusion from inputs none of which differed: equal only if every judged input
/// agreed deterministically, no difference found if any was sampled, unknown if none
/// could be judged.
fn conclude(trials: &[Trial], config: &CompareConfig) -> Conclusion {
    let undecided = trials
        .iter()
        .filter(|t| matches!(t.verdict, Verdict::Unknown { .. }))
        .count();
    let agreed = trials.len() - undecided;
    if agreed == 0 {
        return Conclusion::Unknown;
    }
    // every probe's tolerance on every input where a side was sampled: a difference up
    // to it would have passed
    let mut sampled = 0usize;
    let mut range: Option<(Detectable, Detectable)> = None;
    let mut all_values = true;
    for t in trials {
        match &t.verdict {
            Verdict::NoDifferenceFound { checks, .. } => {
                sampled += 1;
                for c in checks {
                    let scale = c.a.abs().max(c.b.abs());
                    let d = Detectable {
                        probe: c.probe,
                        below: c.allowed,
                        relative: (scale > 0.0).then(|| c.allowed / scale),
                    };
                    range = Some(match range {
                        None => (d.clone(), d),
                        Some((lo, hi)) => (
                            if d.below < lo.below { d.clone() } else { lo },
                            if d.below > hi.below { d } else { hi },
                        ),
                    });
                }
            }
            Verdict::Equal { method, .. } => all_values &= *method == Method::Value,
            Verdict::Different { .. } | Verdict::Unknown { .. } => {}
        }
    }
    if sampled > 0 {
        // a sampled verdict always has checks (one per probe); if it somehow had none,
        // nothing bounds what it could have missed, and "unknown" is the honest answer
        let Some((smallest, largest)) = range else {
            return Conclusion::Unknown;
        };
        return Conclusion::NoDifferenceFound {
            agreed,
            sampled,
            undecided,
            smallest,
            largest,
        };
    }
    Conclusion::Equal(if all_values {
        Proof::Values {
            agreed,
            undecided,
            rel_tol: config.rel_tol,
        }
    } else {
        Proof::Quadrature {
            agreed,
            undecided,
            tight: TIGHT_QUAD_REL_ERR,
        }
    })
}
