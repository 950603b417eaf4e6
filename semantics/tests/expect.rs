//! Deterministic integration (`expect`) against closed forms, including measures with
//! lebesgue and counting binders that cannot be sampled, and its budgets.

mod common;

use common::{hk, num, prog, weighted_mean, within};
use slic_semantics::{Env, Estimate, EvalConfig, Interp, Value};

/// |got - want| <= tol * max(1, |want|), and the reported error is small too.
fn close(what: &str, got: Estimate, want: f64, tol: f64) {
    let scale = want.abs().max(1.0);
    assert!(
        (got.value - want).abs() <= tol * scale,
        "{what}: got {} (± {}), want {want}",
        got.value,
        got.error
    );
    assert!(
        got.error <= 1e3 * tol * scale,
        "{what}: error estimate {} too large",
        got.error
    );
}

fn mass(text: &str) -> Estimate {
    prog(text).expect(&|_| Ok(1.0))
}

fn mean(text: &str) -> Estimate {
    prog(text).expect(&|v| Ok(num(v)))
}

fn moment2(text: &str, c: f64) -> Estimate {
    prog(text).expect(&|v| Ok((num(v) - c).powi(2)))
}

#[test]
fn primitive_masses_means_and_variances() {
    // (program, mean, variance); every one has mass 1.
    let cases: &[(&str, f64, f64)] = &[
        ("uniform(3, 7)\n", 5.0, 16.0 / 12.0),
        ("normal(2, 3)\n", 2.0, 9.0),
        ("normal(1000, 0.001)\n", 1000.0, 1e-6),
        ("gamma(2.5, 2)\n", 5.0, 10.0),
        ("gamma(0.3, 1.5)\n", 0.45, 0.675),
        ("gamma(1, 1)\n", 1.0, 1.0),
        ("gamma(400, 0.5)\n", 200.0, 100.0),
        ("beta(2, 5)\n", 2.0 / 7.0, 10.0 / 392.0),
        ("beta(0.5, 0.5)\n", 0.5, 0.125),
        ("beta(0.5, 3)\n", 0.5 / 3.5, 1.5 / (3.5 * 3.5 * 4.5)),
        ("beta(1000, 1000)\n", 0.5, 0.25 / 2001.0),
        ("poisson(3.5)\n", 3.5, 3.5),
        ("poisson(0)\n", 0.0, 0.0),
        ("poisson(1000)\n", 1000.0, 1000.0),
        (
            "categorical([1, 2, 3])\n",
            8.0 / 6.0,
            14.0 / 6.0 - 64.0 / 36.0,
        ),
    ];
    for (text, m, v) in cases {
        close(&format!("{text} mass"), mass(text), 1.0, 1e-9);
        close(&format!("{text} mean"), mean(text), *m, 1e-9);
        close(&format!("{text} variance"), moment2(text, *m), *v, 1e-9);
    }
}

#[test]
fn lebesgue_and_counting_binders() {
    let sqrt2pi = (2.0 * std::f64::consts::PI).sqrt();
    close(
        "gaussian kernel",
        mass("x <~ lebesgue(-∞, ∞)\nweight(exp(-x^2/2), return x)\n"),
        sqrt2pi,
        1e-9,
    );
    close(
        "shifted kernel",
        mean("x <~ lebesgue(-∞, ∞)\nweight(exp(-(x - 3)^2/2), return x)\n"),
        3.0 * sqrt2pi,
        1e-9,
    );
    close(
        "half line",
        mass("x <~ lebesgue(0, ∞)\nweight(exp(-x), return x)\n"),
        1.0,
        1e-9,
    );
    close(
        "finite lebesgue",
        mass("x <~ lebesgue(0, 2)\nreturn x\n"),
        2.0,
        1e-12,
    );
    close(
        "finite lebesgue mean",
        mean("x <~ lebesgue(0, 2)\nreturn x\n"),
        2.0,
        1e-12,
    );
    close(
        "two lebesgue binders",
        mass("x <~ lebesgue(0, 1)\ny <~ lebesgue(0, 1)\nweight(real2prob(x * y), return ())\n"),
        0.25,
        1e-9,
    );
    let geo = "n <~ counting\nweight(if 0 <= n: (1/2)^int2nat(n) else: 0, return n)\n";
    close("geometric mass", mass(geo), 2.0, 1e-12);
    close("geometric mean", mean(geo), 2.0, 1e-12);
    let two_sided = "n <~ counting\nweight((1/2)^abs(n), return n)\n";
    close("two-sided mass", mass(two_sided), 3.0, 1e-12);
    close("two-sided mean", mean(two_sided), 0.0, 1e-12);
    close(
        "counting with a lebesgue inside",
        mass("n <~ counting\nx <~ lebesgue(0, 1)\nweight(if 0 <= n && n < 3: real2prob(x) else: 0, return n)\n"),
        1.5,
        1e-9,
    );
}

#[test]
fn combinators() {
    close("weight", mass("weight(2, normal(0, 1))\n"), 2.0, 1e-12);
    close(
        "superpose",
        mass("normal(0, 1) <|> normal(3, 1)\n"),
        2.0,
        1e-9,
    );
    close(
        "superpose mean",
        mean("normal(0, 1) <|> normal(3, 1)\n"),
        3.0,
        1e-9,
    );
    close("reject", mass("reject. measure(real)\n"), 0.0, 0.0);
    close(
        "weight zero skips the inner measure",
        mass("weight(0, lebesgue(-∞, ∞))\n"),
        0.0,
        0.0,
    );
    let pdf1 = (-0.5f64).exp() / (2.0 * std::f64::consts::PI).sqrt();
    close("observe", mass("observe(normal(0, 1), 1)\n"), pdf1, 1e-15);
    close(
        "normal-normal",
        moment2("x <~ normal(0, 1)\ny <~ normal(x, 2)\nreturn y\n", 0.0),
        5.0,
        1e-9,
    );
    close(
        "if/let/match in measure position",
        mean("x <~ categorical([1, 1])\nm = if x == 0: normal(1, 1) else: normal(3, 1)\ny <~ m\nreturn y\n"),
        2.0,
        1e-9,
    );
    close(
        "a random plate of 3, by nesting",
        prog("plate i of 3: normal(nat2real(i), 1)\n").expect(&|v| match v {
            Value::Array(xs) => Ok(xs.iter().map(num).sum::<f64>()),
            _ => Ok(f64::NAN),
        }),
        3.0,
        1e-8,
    );
    close(
        "chain of 2 steps",
        prog("chain s from 0.0 - 0.0 of 2:\n  x <~ normal(s, 1)\n  return (x, x)\n").expect(&|v| {
            match v {
                Value::Pair(p) => Ok(num(&p.1).powi(2)),
                _ => Ok(f64::NAN),
            }
        }),
        2.0,
        1e-8,
    );
}

#[test]
fn large_plates_of_observations_need_no_nesting() {
    // 1000 observations: the mass is the product of the densities.
    let data: Vec<String> = (0..1000).map(|i| format!("{}.{}", i % 3, i % 7)).collect();
    let text = format!(
        "observe(plate i of 1000: normal(1, 2), [{}])\n",
        data.join(", ")
    );
    let p = prog(&text);
    let ln_want: f64 = data
        .iter()
        .map(|x| {
            let x: f64 = x.parse().unwrap_or(f64::NAN);
            -0.5 * ((x - 1.0) / 2.0).powi(2) - 2f64.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
        })
        .sum();
    let got = p.expect(&|_| Ok(1.0));
    // The mass underflows f64 here (ln ≈ -1600), so compare through the sampler's log weight.
    assert_eq!(got.value, 0.0);
    let d = p.draws(1, 1);
    assert!(
        (d[0].1 - ln_want).abs() < 1e-9 * ln_want.abs(),
        "{} vs {ln_want}",
        d[0].1
    );
    // A moderate one integrates directly.
    let t = "mu <~ normal(0, 1)\n_ <~ observe(plate i of 50: normal(mu, 1), array i of 50: 0.5)\nreturn mu\n";
    let p = prog(t);
    let m = p.expect(&|_| Ok(1.0));
    let e = p.expect(&|v| Ok(num(v)));
    // Posterior of mu given 50 observations 0.5 with unit noise: mean 50*0.5/51.
    close(
        "posterior mean",
        Estimate {
            value: e.value / m.value,
            error: 0.0,
        },
        25.0 / 51.0,
        1e-8,
    );
}

#[test]
fn sampler_and_integrator_agree() {
    let text = "x <~ beta(2, 2)\nn <~ poisson(x * 10)\nreturn n\n";
    let exact = mean(text);
    close("beta-poisson mean", exact, 5.0, 1e-9);
    let d = prog(text).draws(40_000, 11);
    within(
        "sampled beta-poisson mean",
        weighted_mean(&d, num),
        exact.value,
    );
}

#[test]
fn function_integrands() {
    let (s, h) = hk("fn x real: x * x\n");
    let hv = slic_semantics::eval(&s, h, &Env::new()).unwrap_or_else(|e| panic!("{e}"));
    let mut s2 = s.clone();
    let m =
        slic_algebra::front::load(&mut s2, "normal(1, 2)\n").unwrap_or_else(|e| panic!("{e:?}"));
    let mv = slic_semantics::eval(&s2, m, &Env::new()).unwrap_or_else(|e| panic!("{e}"));
    let got = slic_semantics::expect_apply(&s2, &mv, &hv).unwrap_or_else(|e| panic!("{e}"));
    close("E[x^2] for normal(1, 2)", got, 5.0, 1e-9);
}

#[test]
fn budgets() {
    for (text, msg) in [
        ("plate i of 10: normal(0, 1)\n", "a plate of 10 random elements is too large to integrate numerically (limit 4)"),
        (
            "a <~ lebesgue(0, 1)\nb <~ lebesgue(0, 1)\nc <~ lebesgue(0, 1)\nd <~ lebesgue(0, 1)\ne <~ lebesgue(0, 1)\nreturn a\n",
            "more than 4 nested continuous integrals",
        ),
        ("n <~ counting\nweight(real2prob(1/(1 + int2real(n)^2)), return n)\n", "did not converge within"),
    ] {
        let p = prog(text);
        let cfg = EvalConfig {
            max_series_terms: 20_000,
            ..EvalConfig::default()
        };
        let mut it = Interp::new(&p.s, cfg);
        match it.expect(&p.v, &|_, _| Ok(1.0)) {
            Err(e) => assert!(e.to_string().contains(msg), "{text}: {e}"),
            Ok(r) => panic!("{text}: no error, got {r:?}"),
        }
    }
    // The evaluation budget stops a 3-D integral that would take too long.
    let p = prog("a <~ normal(0, 1)\nb <~ normal(a, 1)\nc <~ normal(b, 1)\nreturn c\n");
    let cfg = EvalConfig {
        max_integrand_evals: 10_000,
        ..EvalConfig::default()
    };
    let mut it = Interp::new(&p.s, cfg);
    let r = it.expect(&p.v, &|_, _| Ok(1.0));
    assert!(
        matches!(&r, Err(e) if e.to_string().contains("more than 10000 integrand evaluations")),
        "{r:?}"
    );
}

#[test]
fn long_bind_chains_stay_within_the_stack() {
    // Deterministic binds are stepped over without recursion; random ones nest, up to the
    // depth budget. Never a crash, on a 2 MiB stack in any build.
    for (n, random) in [(50usize, true), (300, false), (300, true)] {
        let mut text = String::from("x0 <~ normal(0, 1)\n");
        for i in 1..n {
            if random {
                text.push_str(&format!("x{i} <~ normal(x{}, 1)\n", i - 1));
            } else {
                text.push_str(&format!("x{i} <~ return x{} + 1\n", i - 1));
            }
        }
        text.push_str(&format!("return x{}\n", n - 1));
        let handle = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let p = prog(&text);
                let e = slic_semantics::expect(&p.s, &p.v, &|v| Ok(num(v))).map(|e| e.value);
                let d =
                    slic_semantics::sample(&p.s, &p.v, &mut slic_semantics::Rng::seed_from_u64(1))
                        .map(|(v, _)| v.to_string());
                (e.map_err(|e| e.to_string()), d.map_err(|e| e.to_string()))
            });
        let (e, d) = handle
            .unwrap_or_else(|e| panic!("{e}"))
            .join()
            .unwrap_or_else(|_| panic!("crashed at {n}"));
        if !random {
            let got = e.unwrap_or_else(|e| panic!("{e}"));
            assert!((got - (n as f64 - 1.0)).abs() < 1e-9, "{got}");
        } else {
            assert!(
                matches!(&e, Err(m) if m.contains("nested deeper") || m.contains("nested continuous")),
                "{e:?}"
            );
        }
        assert!(d.is_ok(), "{d:?}");
    }
}
