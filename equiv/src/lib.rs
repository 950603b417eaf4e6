//! `slic-equiv`: do two programs mean the same?
//!
//! The decision procedure behind `slic-cas equiv`. It sits above both the simplifier
//! (`slic-simplify`) and the reference semantics (`slic-semantics`), which stay
//! independent of each other: the symbolic side asks whether both programs simplify to
//! alpha-equivalent terms; the numeric side asks the reference semantics' judge
//! ([`slic_semantics::compare`]) on the given arguments and on random ones.
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

use std::time::{Duration, Instant};

use slic_algebra::{alpha, Store, TermId, Type};
use slic_semantics::{compare, random_args, CompareConfig, Rng, Value, Verdict};
use slic_simplify::{simplify, SimplifyConfig};

/// Budgets and seeds of one decision.
#[derive(Clone, Debug)]
pub struct EquivConfig {
    /// How many random argument tuples to compare on besides the given ones.
    pub trials: u64,
    /// Seed of the random arguments and of the samplers.
    pub seed: u64,
    /// How long the simplifier may work on each program.
    pub simplify_budget: Duration,
    /// The numeric judge's budgets and tolerances (its seed is replaced by `seed`).
    pub compare: CompareConfig,
}

impl Default for EquivConfig {
    fn default() -> EquivConfig {
        EquivConfig {
            trials: 3,
            seed: 0,
            simplify_budget: Duration::from_secs(10),
            compare: CompareConfig::default(),
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proof {
    /// Both programs simplify to alpha-equivalent terms.
    Symbolic,
    /// Every compared input agreed numerically (`agreed` of `tried` inputs).
    Numeric { agreed: usize, tried: usize },
}

/// The decision.
#[derive(Clone, Debug)]
pub enum Conclusion {
    Equal(Proof),
    /// The programs differ on the input `shown`.
    Different {
        shown: String,
    },
    /// No input could be judged.
    Unknown,
}

/// Everything the decision found, in order, for the command to print.
#[derive(Clone, Debug)]
pub struct Report {
    /// Notes of the simplifier on either program.
    pub notes: Vec<String>,
    /// Why random inputs could not be drawn, if they could not.
    pub no_random: Option<String>,
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
/// numerically on `given` (the arguments as values, with their text) and on
/// `config.trials` random argument tuples.
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
        trials: Vec::new(),
        conclusion: Conclusion::Unknown,
    };
    if alpha::alpha_eq(store, sa.term, sb.term) {
        report.conclusion = Conclusion::Equal(Proof::Symbolic);
        return Ok(report);
    }

    let (params, _) = ta.parameter_types();
    let mut inputs: Vec<(Origin, String, Vec<Value>)> = Vec::new();
    if let Some((values, shown)) = given {
        inputs.push((Origin::Given, shown, values));
    }
    // a program without parameters has one input: random tuples would all be empty
    let (trials, origin) = if params.is_empty() {
        (u64::from(inputs.is_empty()), Origin::NoParameters)
    } else {
        (config.trials, Origin::Random)
    };
    let mut rng = Rng::seed_from_u64(config.seed);
    for _ in 0..trials {
        match random_args(&ta, &mut rng) {
            Ok(values) => inputs.push((origin, slic_semantics::args_to_json(&values), values)),
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
    let (mut equal, mut tried) = (0usize, 0usize);
    for (origin, shown, values) in inputs {
        let verdict = compare(store, a, b, &values, &compare_config);
        tried += 1;
        let different = verdict.is_different();
        equal += usize::from(verdict.is_equal());
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
    if equal > 0 {
        report.conclusion = Conclusion::Equal(Proof::Numeric {
            agreed: equal,
            tried,
        });
    }
    Ok(report)
}
