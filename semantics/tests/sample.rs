//! The importance sampler against closed forms: every primitive's mean and variance,
//! and the mass and moments of weight, superposition, reject, plate, observe, bind and
//! chain. Fixed seeds; estimates must lie within 5 standard errors.

mod common;

use common::{num, prog, weighted_mean, within};
use proptest::prelude::*;
use slic_semantics::{Moment, Rng, Summary, Value};

const N: usize = 40_000;

/// (program, mean, variance) of primitives.
const PRIMITIVES: &[(&str, f64, f64)] = &[
    ("normal(2, 3)", 2.0, 9.0),
    ("normal(-1, 0.01)", -1.0, 1e-4),
    ("uniform(3, 7)", 5.0, 16.0 / 12.0),
    ("gamma(2.5, 2)", 5.0, 10.0),
    ("gamma(0.3, 1.5)", 0.45, 0.675),
    ("gamma(1, 1)", 1.0, 1.0),
    ("beta(2, 5)", 2.0 / 7.0, 10.0 / 392.0),
    ("beta(0.5, 0.5)", 0.5, 0.125),
    ("poisson(3.5)", 3.5, 3.5),
    ("poisson(9.99)", 9.99, 9.99),
    ("poisson(50)", 50.0, 50.0),
    ("poisson(1000)", 1000.0, 1000.0),
    ("poisson(0)", 0.0, 0.0),
    (
        "categorical([1, 2, 3])",
        8.0 / 6.0,
        14.0 / 6.0 - 64.0 / 36.0,
    ),
    ("categorical([0, 5, 0])", 1.0, 0.0),
];

#[test]
fn primitives_match_their_moments() {
    for (k, (text, mean, var)) in PRIMITIVES.iter().enumerate() {
        let p = prog(&format!("{text}\n"));
        let d = p.draws(N, 1000 + k as u64);
        assert!(d.iter().all(|(_, w)| *w == 0.0), "{text}: unweighted draws");
        within(&format!("{text} mean"), weighted_mean(&d, num), *mean);
        let m = *mean;
        within(
            &format!("{text} variance"),
            weighted_mean(&d, |v| (num(v) - m).powi(2)),
            *var,
        );
    }
}

#[test]
fn categorical_frequencies() {
    let p = prog("categorical([1, 2, 3, 0])\n");
    let d = p.draws(N, 5);
    for (i, want) in [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0, 0.0].iter().enumerate() {
        let i = i as f64;
        within(
            &format!("P(x = {i})"),
            weighted_mean(&d, |v| f64::from(num(v) == i)),
            *want,
        );
    }
    let zero = Summary::from_samples(&prog("categorical([0, 0])\n").draws(100, 1));
    assert_eq!(zero.mass, 0.0);
}

fn summary(text: &str, n: usize, seed: u64) -> Summary {
    Summary::from_samples(&prog(text).draws(n, seed))
}

fn scalar(m: &Option<Moment>) -> f64 {
    match m {
        Some(Moment::Scalar(x)) => *x,
        other => panic!("not a scalar: {other:?}"),
    }
}

#[test]
fn weight_superpose_reject() {
    let s = summary("weight(2, normal(0, 1))\n", 1000, 1);
    assert!((s.mass - 2.0).abs() < 1e-12 && s.mass_se < 1e-12, "{s:?}");
    let s = summary("normal(0, 1) <|> normal(3, 1)\n", N, 2);
    assert!((s.mass - 2.0).abs() < 1e-12, "{s:?}");
    let d = prog("normal(0, 1) <|> normal(3, 1)\n").draws(N, 2);
    within("mixture mean", weighted_mean(&d, num), 1.5);
    assert!((scalar(&s.mean) - 1.5).abs() < 0.05, "{s:?}");
    let s = summary(
        "weight(1/4, return 1) <|> weight(3/4, return 2) <|> reject. measure(nat)\n",
        N,
        3,
    );
    within("superposed mass", (s.mass, s.mass_se), 1.0);
    let probs = s.probs.clone().unwrap_or_default();
    let p2 = probs.get("2").copied().unwrap_or(0.0);
    assert!((p2 - 0.75).abs() < 0.02, "{probs:?}");
    let s = summary("reject. measure(real)\n", 100, 4);
    assert_eq!(s.mass, 0.0);
    assert_eq!(s.mean, None);
    // A weight computed from a draw: E[e^x] = e^(1/2), tilted mean 1.
    let p = prog("x <~ normal(0, 1)\nweight(exp(x), return x)\n");
    let d = p.draws(N, 5);
    let s = Summary::from_samples(&d);
    within(
        "mass of exp-tilted normal",
        (s.mass, s.mass_se),
        0.5f64.exp(),
    );
    within("tilted mean", weighted_mean(&d, num), 1.0);
}

#[test]
fn observe_weights_by_the_density() {
    let pdf = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let cases: Vec<(&str, f64)> = vec![
        ("observe(normal(0, 1), 1)", pdf(1.0)),
        ("observe(normal(0, 1), 40)", pdf(40.0)),
        ("observe(poisson(3), 2)", 4.5 * (-3f64).exp()),
        ("observe(poisson(3), 0)", (-3f64).exp()),
        ("observe(categorical([1, 3]), 1)", 0.75),
        ("observe(categorical([1, 3]), 2)", 0.0),
        ("observe(gamma(2, 3), 1)", (-1f64 / 3.0).exp() / 9.0),
        ("observe(beta(2, 3), 0.5)", 1.5),
        ("observe(beta(2, 3), 1.5)", 0.0),
        ("observe(uniform(3, 7), 4)", 0.25),
        ("observe(uniform(3, 7), 8)", 0.0),
        ("observe(lebesgue(0, 1), 0.5)", 1.0),
        (
            "observe(plate i of 2: normal(0, 1), [1, 2])",
            pdf(1.0) * pdf(2.0),
        ),
        (
            "observe(plate i of 2: normal(nat2real(i), 1), [1, 2])",
            pdf(1.0) * pdf(1.0),
        ),
        ("observe(plate i of 2: normal(0, 1), [1, 2, 3])", 0.0),
        ("observe(plate i of 2: poisson(1), [0, 1])", (-2f64).exp()),
        ("observe(weight(2, normal(0, 1)), 1)", 2.0 * pdf(1.0)),
        (
            "observe(normal(0, 1) <|> normal(1, 1), 1)",
            pdf(1.0) + pdf(0.0),
        ),
    ];
    for (text, want) in cases {
        let s = summary(&format!("{text}\n"), 10, 1);
        assert!(
            (s.mass - want).abs() <= 1e-12 * want.max(1e-300),
            "{text}: mass {} want {want}",
            s.mass
        );
        // The observed value is returned.
        if want > 0.0 && !text.contains("plate") {
            let d = prog(&format!("{text}\n")).draws(1, 1);
            let v = num(&d[0].0);
            let written: f64 = text
                .rsplit(", ")
                .next()
                .and_then(|x| x.trim_end_matches(')').parse().ok())
                .unwrap_or(f64::NAN);
            assert_eq!(v, written, "{text} returned {v}");
        }
    }
    // Observing a bind has no density: an error.
    let (s, t) = common::hk("observe(x <~ normal(0, 1)\n        return x, 1)\n");
    let mv =
        slic_semantics::eval(&s, t, &slic_semantics::Env::new()).unwrap_or_else(|e| panic!("{e}"));
    let err = slic_semantics::sample(&s, &mv, &mut Rng::seed_from_u64(1));
    assert!(
        matches!(&err, Err(e) if e.to_string().starts_with("cannot observe a bind")),
        "{err:?}"
    );
}

#[test]
fn bind_plate_and_chain() {
    // Normal-normal: variances add.
    let d = prog("x <~ normal(0, 1)\ny <~ normal(x, 2)\nreturn y\n").draws(N, 7);
    within("normal-normal mean", weighted_mean(&d, num), 0.0);
    within(
        "normal-normal variance",
        weighted_mean(&d, |v| num(v).powi(2)),
        5.0,
    );
    // Plate: element-wise means, the right size.
    let d = prog("plate i of 3: normal(nat2real(i), 1)\n").draws(N, 8);
    for k in 0..3 {
        let elem = |v: &Value| match v {
            Value::Array(xs) => {
                assert_eq!(xs.len(), 3);
                num(&xs[k])
            }
            other => panic!("{other:?}"),
        };
        within(
            &format!("plate element {k}"),
            weighted_mean(&d, elem),
            k as f64,
        );
    }
    let s = Summary::from_samples(&d);
    assert!(
        matches!(&s.mean, Some(Moment::List(xs)) if xs.len() == 3),
        "{s:?}"
    );
    // Plate with weights: the weights multiply.
    let s = summary("plate i of 3: weight(2, return i)\n", 10, 1);
    assert!((s.mass - 8.0).abs() < 1e-12, "{s:?}");
    // Chain: a random walk of 3 steps; the final state has variance 3.
    let d =
        prog("chain s from 0.0 - 0.0 of 3:\n  x <~ normal(s, 1)\n  return (x, x)\n").draws(N, 9);
    let last = |v: &Value| match v {
        Value::Pair(p) => num(&p.1),
        other => panic!("{other:?}"),
    };
    within(
        "chain final variance",
        weighted_mean(&d, |v| last(v).powi(2)),
        3.0,
    );
}

#[test]
fn unsampleable_and_bad_parameters_are_errors() {
    for (text, msg) in [
        (
            "lebesgue(0, 1)\n",
            "cannot sample from lebesgue: it is not a probability measure; use numeric integration",
        ),
        (
            "counting\n",
            "cannot sample from counting: it is not a probability measure; use numeric integration",
        ),
        (
            "x <~ normal(0, 1)\ny <~ lebesgue(x, 2 + x)\nreturn y\n",
            "cannot sample from lebesgue",
        ),
        ("normal(0, 0)\n", "bad parameter for normal"),
        ("uniform(1, 1)\n", "bad parameter for uniform"),
        (
            "x <~ categorical([1, 1])\nreturn [1, 2][x + 1]\n",
            "index 2 is out of bounds for an array of size 2",
        ),
    ] {
        let (s, t) = common::hk(text);
        let mv = slic_semantics::eval(&s, t, &slic_semantics::Env::new())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut rng = Rng::seed_from_u64(3);
        let mut got = None;
        for _ in 0..20 {
            if let Err(e) = slic_semantics::sample(&s, &mv, &mut rng) {
                got = Some(e.to_string());
                break;
            }
        }
        match got {
            Some(e) => assert!(e.contains(msg), "{text}: {e}"),
            None => panic!("{text}: no error"),
        }
    }
}

#[test]
fn seeds_are_reproducible() {
    let p = prog("x <~ gamma(0.5, 1)\ny <~ poisson(x * 20)\nz <~ beta(2, 3)\nreturn (x, (y, z))\n");
    let a = p.draws(50, 42);
    let b = p.draws(50, 42);
    let c = p.draws(50, 43);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn summary_json_has_every_field() {
    let s = summary("x <~ categorical([1, 1])\nreturn x == 1\n", 1000, 1);
    let j = s.to_json();
    for f in ["n", "mass", "mass_se", "ess", "mean", "sd", "probs"] {
        assert!(j.get(f).is_some(), "{f} missing in {j}");
    }
    assert_eq!(j["n"], 1000);
    let probs = j["probs"].as_object().map(|o| o.len());
    assert_eq!(probs, Some(2));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn normal_and_gamma_samplers_match_their_means(
        mu in -5.0f64..5.0, sd in 0.1f64..5.0, shape in 0.1f64..10.0, scale in 0.1f64..5.0, seed in 0u64..1000
    ) {
        let n = prog(&format!("normal({mu:.4}, {sd:.4})\n"));
        let mu = (mu * 1e4).round() / 1e4;
        within("normal mean", weighted_mean(&n.draws(20_000, seed), num), mu);
        let g = prog(&format!("gamma({shape:.4}, {scale:.4})\n"));
        let want = ((shape * 1e4).round() / 1e4) * ((scale * 1e4).round() / 1e4);
        within("gamma mean", weighted_mean(&g.draws(20_000, seed), num), want);
    }
}
