//! The simplifier keeps the meaning of random array models (issue 10): models from
//! `slic_suite::array_models` (plates of a symbolic size `n`, classes `k`, observations
//! through a random label array, conjugate and non-conjugate bodies, nested plates) are
//! simplified; the output must verify, bind every variable it uses, keep the type,
//! simplify to itself again, and denote the same measure as the input
//! (`slic_semantics::compare`) on argument tuples with no points, one point, and two or
//! three points: never Different. Unknown is counted, and a coverage test on a fixed
//! sample requires most models to be really decided.
//!
//! The mutant test shows the check can fail: outputs made wrong on purpose
//! (`slic_suite::mutate`: the whole measure weighted by 21/20, a normal's mean shifted by
//! 1/10 inside a plate) must be judged Different from their inputs.
//!
//! 8 proptest cases by default (each simplifies a model and judges it three times); set
//! PROPTEST_CASES for more.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use slic_algebra::{alpha, front, print, verify, Store, TermId};
use slic_semantics::{compare, CompareConfig, Rng, Value, Verdict};
use slic_simplify::SimplifyConfig;
use slic_suite::array_models::{arb_array_model, judged_args, ArrayModel};
use slic_suite::mutate;

/// Smaller budgets than the judge's defaults: models are small and the property runs many.
fn judge_config(seed: u64) -> CompareConfig {
    CompareConfig {
        quad_evals: 100_000,
        samples: 10_000,
        seed,
        max_depth: 20_000,
        ..CompareConfig::default()
    }
}

/// The judge of the mutant test: quadrature may spend enough evaluations on the three
/// nested integrals of a one-point model to decide it (then a 5% difference is far above
/// its tolerance), and sampling, where it must, the default budget.
fn mutant_judge(seed: u64) -> CompareConfig {
    CompareConfig {
        quad_evals: 400_000,
        seed,
        max_depth: 20_000,
        ..CompareConfig::default()
    }
}

fn simplify_config() -> SimplifyConfig {
    SimplifyConfig {
        deadline: Some(Instant::now() + Duration::from_secs(10)),
    }
}

fn show_args(args: &[Value]) -> String {
    serde_json::Value::Array(args.iter().map(slic_semantics::value_to_json).collect()).to_string()
}

/// What the check did with one model: comparisons decided, and undecided ones with why.
#[derive(Debug, Default)]
struct Outcome {
    equal: usize,
    unknown: Vec<String>,
}

/// Loads and simplifies a model, checking everything but meaning.
fn simplified(m: &ArrayModel, store: &mut Store) -> Result<(TermId, TermId), TestCaseError> {
    let t = front::load(store, &m.text).map_err(|ds| {
        TestCaseError::fail(format!(
            "the generator wrote a model that does not load ({}):\n{}",
            ds.iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; "),
            m.text
        ))
    })?;
    let s = slic_simplify::simplify(store, t, &simplify_config()).term;
    let show = |store: &Store| {
        format!(
            "{}--- simplified ---\n{}",
            m.text,
            print::print_term(store, s)
        )
    };
    if let Err(e) = verify::verify(store, s) {
        return Err(TestCaseError::fail(format!(
            "the output does not verify: {e}\n{}",
            show(store)
        )));
    }
    let free = slic_suite::unbound_vars(store, s);
    prop_assert!(
        free.is_empty(),
        "the output uses variables it does not bind ({})\n{}",
        free.join(", "),
        show(store)
    );
    prop_assert_eq!(
        store.ty(s),
        store.ty(t),
        "the type changed\n{}",
        show(store)
    );
    let again = slic_simplify::simplify(store, s, &simplify_config()).term;
    prop_assert!(
        alpha::alpha_eq(store, s, again),
        "not idempotent: simplifying again gives\n{}\n{}",
        print::print_term(store, again),
        show(store)
    );
    Ok((t, s))
}

fn check(m: &ArrayModel, seed: u64) -> Result<Outcome, TestCaseError> {
    let mut store = Store::new();
    let (t, s) = simplified(m, &mut store)?;
    let mut rng = Rng::seed_from_u64(seed);
    let mut outcome = Outcome::default();
    for a in judged_args(&mut rng) {
        match compare(&store, t, s, &a, &judge_config(seed)) {
            Verdict::Equal { .. } | Verdict::NoDifferenceFound { .. } => outcome.equal += 1,
            Verdict::Unknown { why } => outcome.unknown.push(format!("{}: {why}", show_args(&a))),
            d @ Verdict::Different { .. } => {
                return Err(TestCaseError::fail(format!(
                    "the meaning changed on {}: {d}\n{}--- simplified ---\n{}",
                    show_args(&a),
                    m.text,
                    print::print_term(&store, s)
                )))
            }
        }
    }
    Ok(outcome)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(8),
        ..ProptestConfig::default()
    })]

    #[test]
    fn simplify_keeps_the_meaning_of_random_array_models(
        m in arb_array_model(),
        seed in any::<u64>(),
    ) {
        check(&m, seed)?;
    }
}

/// The first `n` models of a deterministic run of the generator.
fn fixed_sample(n: usize) -> Vec<ArrayModel> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = arb_array_model();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).expect("generate").current())
        .collect()
}

/// The property is only as strong as the share of comparisons it really decides.
#[test]
fn most_random_array_models_are_really_compared() {
    let (mut equal, mut unknown, mut failed) = (0, Vec::new(), Vec::new());
    let models = fixed_sample(12);
    for (i, m) in models.iter().enumerate() {
        match check(m, i as u64) {
            Ok(o) => {
                equal += o.equal;
                unknown.extend(o.unknown.into_iter().map(|u| format!("{}=> {u}", m.text)));
            }
            Err(e) => failed.push(e.to_string()),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} models fail:\n\n{}",
        failed.len(),
        models.len(),
        failed.join("\n\n")
    );
    let total = equal + unknown.len();
    eprintln!(
        "{equal} of {total} comparisons equal; undecided:\n{}",
        unknown.join("\n")
    );
    assert!(
        equal * 4 >= total * 3,
        "only {equal} of {total} comparisons decided; undecided:\n{}",
        unknown.join("\n")
    );
}

/// Outputs made wrong on purpose are told apart from their inputs, on one point of one
/// class: a plate then has one element (with none, a shifted plate is empty and the mutant
/// means the same), so a model has at most three continuous latents and the judge
/// integrates both sides by quadrature, where a difference of 5% is far above its
/// tolerance (sampling would need far more draws to see it past uneven weights).
#[test]
fn wrong_outputs_of_array_models_are_caught() {
    let (mut caught, mut missed, mut shifted) = (0, Vec::new(), 0);
    for (i, m) in fixed_sample(10).iter().enumerate() {
        let mut store = Store::new();
        let (t, s) = simplified(m, &mut store).expect("the model simplifies");
        // one point of one class at 1/2: near the priors' means, so that no weight is tiny
        let a = vec![
            Value::Nat(1),
            Value::Nat(1),
            Value::array(vec![Value::Nat(0)]),
            Value::array(vec![Value::Real(0.5)]),
        ];
        let mut mutants = vec![("weighted by 21/20", mutate::weighted(&mut store, s, 21, 20))];
        if let Some(moved) = mutate::plate_mean_shifted(&mut store, s, 1, 10) {
            shifted += 1;
            mutants.push(("a plate's normal mean shifted by 1/10", Some(moved)));
        }
        for (what, wrong) in mutants {
            let wrong = wrong.expect("a measure under fn parameters");
            verify::verify(&store, wrong).expect("the mutant is well typed");
            match compare(&store, t, wrong, &a, &mutant_judge(i as u64)) {
                Verdict::Different { .. } => caught += 1,
                v => missed.push(format!(
                    "{} ({what}) on {}:\n{}\n=> {v}",
                    m.text,
                    show_args(&a),
                    print::print_term(&store, wrong)
                )),
            }
        }
    }
    eprintln!(
        "{caught} wrong outputs caught ({shifted} with a shifted mean); missed:\n{}",
        missed.join("\n")
    );
    assert!(
        shifted >= 4,
        "only {shifted} outputs had a normal in a plate"
    );
    assert!(
        missed.is_empty(),
        "{caught} caught, {} missed:\n{}",
        missed.len(),
        missed.join("\n\n")
    );
}
