//! Measure programs in the loop IR (issue 11, deliverables 3 and 5): draws, factors and
//! rejects, verified and run by exact enumeration or by sampling.
//!
//! Exact runs of hand-built discrete programs (a categorical over computed weights, two
//! dependent draws, a draw inside an `if`, a reject on one branch, a factor, a plate of
//! categoricals into an array) are compared value by value, to 1e-12 relative, with the
//! reference interpreter (`slic-semantics`) integrating the indicator of each value
//! against the same computation written as a `.hk` term, and their total mass with its.
//! Sampled runs of each continuous or unbounded law (normal, uniform, gamma of shape 0.5
//! and 3, beta, poisson below and above the sampler's switch) give weighted means and
//! variances within 5 standard errors of the moments the reference interpreter
//! integrates. The work counts show that a fork copies the machine instead of re-running
//! what came before the draw. The verifier's new rejections each sit beside a repaired
//! twin.

use proptest::prelude::*;
use slic_algebra::{Coercion, Dist, Prim, Store, Type};
use slic_codegen::{
    enumerable, run, run_measure, verify, AssignOp, Enumerated, Expr, Mode, Outcome, Program,
    RunError, Sample, Stats, Stmt, Val, VerifyError,
};
use slic_semantics::Value;

fn v(x: &str) -> Expr {
    Expr::var(x)
}
fn ix(a: Expr, i: Expr) -> Expr {
    Expr::index(a, i)
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::prim(Prim::Add, vec![a, b])
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::prim(Prim::Mul, vec![a, b])
}
fn arr(t: Type) -> Type {
    Type::array(t)
}
fn size(a: &str) -> Expr {
    Expr::size(v(a))
}
fn each(i: &str, n: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::for_(i, Expr::nat(0), n, body)
}
fn draw(x: &str, dist: Dist, args: Vec<Expr>) -> Stmt {
    Stmt::draw(x, dist.support_type(), dist, args)
}
fn reals(xs: &[f64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Real(x)).collect())
}
fn probs(xs: &[f64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::prob(x)).collect())
}
fn nats(xs: &[u64]) -> Val {
    Val::array(xs.iter().map(|&x| Val::Nat(x)).collect())
}
fn measure(params: Vec<(&str, Type)>, body: Vec<Stmt>, result: Expr) -> Program {
    Program {
        params: params
            .into_iter()
            .map(|(x, t)| (x.to_string(), t))
            .collect(),
        body,
        result,
        measure: true,
        inout: Vec::new(),
    }
}

/// The IR's value to the reference interpreter's.
fn to_semantics(x: &Val) -> Value {
    match x {
        Val::Nat(n) => Value::Nat(*n),
        Val::Int(n) => Value::Int(*n),
        Val::Real(r) => Value::Real(*r),
        Val::Prob(l) => Value::Prob(*l),
        Val::Bool(b) => Value::Bool(*b),
        Val::Array(items) => Value::array(items.iter().map(to_semantics).collect()),
        Val::Pair(p) => Value::pair(to_semantics(&p.0), to_semantics(&p.1)),
        Val::Unit => Value::Unit,
    }
}

/// The reference interpreter's measure: `src` loaded, evaluated and applied to `args`.
struct Reference {
    store: Store,
    m: Value,
}

impl Reference {
    fn new(src: &str, args: &[Val]) -> Reference {
        let mut store = Store::new();
        let t = match slic_algebra::front::load(&mut store, src) {
            Ok(t) => t,
            Err(d) => panic!("{src} does not load: {d:?}"),
        };
        let f = slic_semantics::eval(&store, t, &slic_semantics::Env::new()).expect("evaluates");
        let args: Vec<Value> = args.iter().map(to_semantics).collect();
        let m = slic_semantics::apply_args(&store, &f, &args).expect("applies");
        Reference { store, m }
    }

    /// `integrate(m, h)`, with the quadrature's error estimate.
    fn expect(&self, h: &dyn Fn(f64) -> f64) -> (f64, f64) {
        let e = slic_semantics::expect(&self.store, &self.m, &|x| {
            Ok(h(x.as_f64().unwrap_or(f64::NAN)))
        })
        .expect("integrates");
        (e.value, e.error)
    }

    /// The measure of the one value `val`.
    fn weight_of(&self, val: &Val) -> f64 {
        let want = to_semantics(val);
        slic_semantics::expect(&self.store, &self.m, &|x| {
            Ok(if x.data_eq(&want) { 1.0 } else { 0.0 })
        })
        .expect("integrates")
        .value
    }
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-300
}

fn exact(p: &Program, args: &[Val]) -> Enumerated {
    match run_measure(p, args, Mode::Exact { max_paths: 100_000 }) {
        Ok(Outcome::Exact(e)) => e,
        other => panic!("exact run failed: {other:?}\n{p}"),
    }
}

fn sampled(p: &Program, args: &[Val], n: usize, seed: u64) -> (Vec<Sample>, Stats) {
    match run_measure(p, args, Mode::Sample { n, seed }) {
        Ok(Outcome::Sampled(s)) => (s.samples, s.stats),
        other => panic!("sampled run failed: {other:?}\n{p}"),
    }
}

/// The IR's exact distribution equals the reference's: the same total mass, and each
/// value's weight the reference's measure of that value (so no value is missing either:
/// the weights add up to the mass). Values are distinct and sorted.
fn check_exact(p: &Program, args: &[Val], src: &str) -> Enumerated {
    assert_eq!(verify(p), Ok(()), "{p}");
    let e = exact(p, args);
    let r = Reference::new(src, args);
    let (mass, _) = r.expect(&|_| 1.0);
    assert!(
        close(e.mass(), mass, 1e-12),
        "mass {} vs {mass}\n{p}",
        e.mass()
    );
    for w in e.weights.windows(2) {
        assert_eq!(w[0].0.total_cmp(&w[1].0), std::cmp::Ordering::Less, "{e:?}");
    }
    for (val, lw) in &e.weights {
        let want = r.weight_of(val);
        assert!(
            close(lw.exp(), want, 1e-12),
            "weight of {val:?}: {} vs {want}\n{p}",
            lw.exp()
        );
    }
    let probs = e.probabilities();
    if mass > 0.0 {
        let total: f64 = probs.iter().map(|(_, q)| q).sum();
        assert!(close(total, 1.0, 1e-12), "{probs:?}");
    } else {
        assert!(probs.is_empty());
    }
    e
}

/// `p[i] = exp(c · w[i])` for each `i`: class weights computed in a loop.
fn weights_loop(p: &str, w: &str, c: Expr) -> Vec<Stmt> {
    vec![
        Stmt::alloc(p, Type::Prob, size(w)),
        each(
            "i",
            size(w),
            vec![Stmt::store(
                p,
                v("i"),
                AssignOp::Set,
                Expr::prim(Prim::Exp, vec![mul(c, ix(v(w), v("i")))]),
            )],
        ),
    ]
}

/// `k ~ categorical(exp(c · w))`, then `(k - 2)²` (as an int: two values of `k` meet).
fn categorical_program() -> Program {
    let mut body = weights_loop("p", "w", v("c"));
    body.push(draw("k", Dist::Categorical, vec![v("p")]));
    let shifted = add(Expr::convert(Coercion::Nat2Int, v("k")), Expr::int(-2));
    measure(
        vec![("w", arr(Type::Real)), ("c", Type::Real)],
        body,
        Expr::prim(Prim::Pow, vec![shifted, Expr::nat(2)]),
    )
}
const CATEGORICAL_HK: &str = "fn w array(real): fn c real:\n    \
    k <~ categorical(array i of size(w): exp(c * w[i]))\n    \
    return (nat2int(k) + -2) ^ 2";

/// `k ~ categorical(exp(w))`, then `j ~ categorical(exp(k · u))`: the second draw's
/// weights depend on the first; the result `k + j`.
fn two_draws_program() -> Program {
    let mut body = weights_loop("p", "w", Expr::real(1.0));
    body.push(draw("k", Dist::Categorical, vec![v("p")]));
    body.extend(weights_loop(
        "q",
        "u",
        Expr::convert(Coercion::Nat2Real, v("k")),
    ));
    body.push(draw("j", Dist::Categorical, vec![v("q")]));
    measure(
        vec![("w", arr(Type::Real)), ("u", arr(Type::Real))],
        body,
        add(v("k"), v("j")),
    )
}
const TWO_DRAWS_HK: &str = "fn w array(real): fn u array(real):\n    \
    k <~ categorical(array i of size(w): exp(+1.0 * w[i]))\n    \
    j <~ categorical(array i of size(u): exp(nat2real(k) * u[i]))\n    \
    return k + j";

/// `if 0 < x { k ~ categorical(p); r = k + 1 } else { r = size(p) }`
fn draw_in_if_program() -> Program {
    measure(
        vec![("p", arr(Type::Prob)), ("x", Type::Real)],
        vec![
            Stmt::var("r", Type::Nat, None),
            Stmt::if_(
                Expr::prim(Prim::Lt, vec![Expr::real(0.0), v("x")]),
                vec![
                    draw("k", Dist::Categorical, vec![v("p")]),
                    Stmt::assign("r", AssignOp::Set, add(v("k"), Expr::nat(1))),
                ],
                vec![Stmt::assign("r", AssignOp::Set, size("p"))],
            ),
        ],
        v("r"),
    )
}
const DRAW_IN_IF_HK: &str = "fn p array(prob): fn x real:\n    \
    if +0.0 < x:\n        k <~ categorical(p)\n        return k + 1\n    \
    else:\n        return size(p)";

/// `k ~ categorical(p)`; `reject` when `k == 0`; then `factor q[k]`; the result `k`.
fn reject_and_factor_program(reject: bool, factor: bool) -> Program {
    let mut body = vec![draw("k", Dist::Categorical, vec![v("p")])];
    if reject {
        body.push(Stmt::if_(
            Expr::prim(Prim::Eq, vec![v("k"), Expr::nat(0)]),
            vec![Stmt::Reject],
            vec![],
        ));
    }
    if factor {
        body.push(Stmt::Factor(ix(v("q"), v("k"))));
    }
    measure(
        vec![("p", arr(Type::Prob)), ("q", arr(Type::Prob))],
        body,
        v("k"),
    )
}
fn reject_and_factor_hk(reject: bool, factor: bool) -> String {
    let ret = if factor {
        "weight(q[k], return k)"
    } else {
        "return k"
    };
    let tail = if reject {
        format!("if k == 0:\n        reject. measure(nat)\n    else:\n        {ret}")
    } else {
        ret.to_string()
    };
    format!("fn p array(prob): fn q array(prob):\n    k <~ categorical(p)\n    {tail}")
}

/// A plate of categoricals into an array, `z[i] ~ categorical(w[i])`, then
/// `Σ_i (i + 1) · z[i]`.
fn plate_program() -> Program {
    measure(
        vec![("w", arr(arr(Type::Prob)))],
        vec![
            Stmt::alloc("z", Type::Nat, size("w")),
            each(
                "i",
                size("w"),
                vec![
                    draw("zi", Dist::Categorical, vec![ix(v("w"), v("i"))]),
                    Stmt::store("z", v("i"), AssignOp::Set, v("zi")),
                ],
            ),
            Stmt::var("s", Type::Nat, Some(Expr::nat(0))),
            each(
                "i",
                size("w"),
                vec![Stmt::assign(
                    "s",
                    AssignOp::Add,
                    mul(add(v("i"), Expr::nat(1)), ix(v("z"), v("i"))),
                )],
            ),
        ],
        v("s"),
    )
}
const PLATE_HK: &str = "fn w array(array(prob)):\n    \
    z <~ plate i of size(w): categorical(w[i])\n    \
    return summate i from 0 to size(z): (i + 1) * z[i]";

fn weight_vec(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<f64>> {
    // some weights exactly 0: those values are never forked into
    prop::collection::vec(prop_oneof![1 => Just(0.0), 4 => 0.01f64..5.0], len)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_categorical_over_computed_weights(
        w in prop::collection::vec(-3f64..3.0, 1..7),
        c in -2f64..2.0,
    ) {
        let p = categorical_program();
        let args = [reals(&w), Val::Real(c)];
        let e = check_exact(&p, &args, CATEGORICAL_HK);
        // one loop of size(w) before the draw, run once however many branches follow
        prop_assert_eq!(e.stats.iterations, w.len() as u64);
        prop_assert_eq!(e.paths, w.len() as u64);
    }

    #[test]
    fn two_dependent_draws(
        w in prop::collection::vec(-2f64..2.0, 1..5),
        u in prop::collection::vec(-2f64..2.0, 1..5),
    ) {
        let p = two_draws_program();
        let e = check_exact(&p, &[reals(&w), reals(&u)], TWO_DRAWS_HK);
        // the first loop once, the second once per branch of the first draw
        prop_assert_eq!(e.stats.iterations, (w.len() + w.len() * u.len()) as u64);
    }

    #[test]
    fn a_draw_inside_an_if(p in weight_vec(0..6), x in -1f64..1.0) {
        let prog = draw_in_if_program();
        check_exact(&prog, &[probs(&p), Val::Real(x)], DRAW_IN_IF_HK);
    }

    #[test]
    fn a_reject_on_one_branch_and_a_factor(
        pq in prop::collection::vec((0.01f64..5.0, 0.0f64..3.0), 1..6),
        reject in any::<bool>(),
        factor in any::<bool>(),
    ) {
        let (p, q): (Vec<f64>, Vec<f64>) = pq.into_iter().unzip();
        let prog = reject_and_factor_program(reject, factor);
        let e = check_exact(&prog, &[probs(&p), probs(&q)], &reject_and_factor_hk(reject, factor));
        if reject {
            prop_assert!(e.weights.iter().all(|(k, _)| *k != Val::Nat(0)));
        }
    }

    #[test]
    fn a_plate_of_categoricals_into_an_array(
        w in prop::collection::vec(weight_vec(1..4), 0..4),
    ) {
        let prog = plate_program();
        let rows = Val::array(w.iter().map(|r| probs(r)).collect());
        let e = check_exact(&prog, &[rows], PLATE_HK);
        let paths: u64 = w.iter().map(|r| r.iter().filter(|x| **x > 0.0).count().max(1) as u64).product();
        prop_assert!(e.paths <= paths);
    }
}

#[test]
fn all_zero_weights_are_the_zero_measure() {
    let p = reject_and_factor_program(false, false);
    let e = check_exact(
        &p,
        &[probs(&[0.0, 0.0]), probs(&[1.0, 1.0])],
        &reject_and_factor_hk(false, false),
    );
    assert_eq!(e.mass(), 0.0);
    assert!(e.weights.is_empty() && e.probabilities().is_empty());
    let (s, _) = sampled(&p, &[probs(&[0.0, 0.0]), probs(&[1.0, 1.0])], 10, 1);
    assert!(s
        .iter()
        .all(|x| x.value.is_none() && x.ln_w == f64::NEG_INFINITY));
}

/// The Gibbs update's shape: a histogram over `n` points into `K` classes, the class
/// weights from it, one categorical draw.
fn gibbs_program() -> Program {
    measure(
        vec![
            ("z", arr(Type::Nat)),
            ("t", arr(Type::Real)),
            ("K", Type::Nat),
        ],
        vec![
            Stmt::alloc("h", Type::Real, v("K")),
            each(
                "j",
                size("z"),
                vec![Stmt::store(
                    "h",
                    ix(v("z"), v("j")),
                    AssignOp::Add,
                    ix(v("t"), v("j")),
                )],
            ),
            Stmt::alloc("p", Type::Prob, v("K")),
            each(
                "k",
                v("K"),
                vec![Stmt::store(
                    "p",
                    v("k"),
                    AssignOp::Set,
                    Expr::prim(Prim::Exp, vec![ix(v("h"), v("k"))]),
                )],
            ),
            draw("c", Dist::Categorical, vec![v("p")]),
        ],
        v("c"),
    )
}
const GIBBS_HK: &str = "fn z array(nat): fn t array(real): fn K nat:\n    \
    categorical(array k of K: exp(summate j from 0 to size(z): if z[j] == k: t[j] else: +0.0))";

#[test]
fn a_draw_after_a_loop_costs_the_loop_once_not_once_per_class() {
    for (n, k) in [(0usize, 1usize), (1, 1), (40, 5), (400, 12)] {
        let z: Vec<u64> = (0..n).map(|j| ((j * 7 + 3) % k) as u64).collect();
        let t: Vec<f64> = (0..n).map(|j| ((j % 5) as f64 - 2.0) / 10.0).collect();
        let args = [nats(&z), reals(&t), Val::Nat(k as u64)];
        let e = check_exact(&gibbs_program(), &args, GIBBS_HK);
        let (n, k) = (n as u64, k as u64);
        assert_eq!(
            e.stats,
            Stats {
                // n + K, not K·(n + K): the fork copies the state at the draw
                iterations: n + k,
                // z[j] and t[j]; h[k]; the draw reads the K weights once
                array_reads: 2 * n + k + k,
                allocations: 2,
            }
        );
        assert_eq!(e.paths, k);
        // sampling runs the whole program once per sample
        let (_, stats) = sampled(&gibbs_program(), &args, 3, 7);
        assert_eq!(stats.iterations, 3 * (n + k));
    }
}

#[test]
fn work_after_a_draw_is_counted_in_every_branch() {
    // two draws: the second loop (over u) runs once per value of the first draw
    let e = exact(&two_draws_program(), &[reals(&[0.0; 3]), reals(&[0.0; 4])]);
    assert_eq!(e.stats.iterations, 3 + 3 * 4);
    assert_eq!(e.stats.allocations, 1 + 3);
    assert_eq!(e.paths, 3 * 4);
}

#[test]
fn exact_enumeration_refuses_what_it_cannot_enumerate() {
    let p = measure(
        vec![],
        vec![draw(
            "x",
            Dist::Normal,
            vec![Expr::real(0.0), Expr::prob(1.0)],
        )],
        v("x"),
    );
    assert!(!enumerable(&p));
    assert!(enumerable(&plate_program()) && enumerable(&draw_in_if_program()));
    match run_measure(&p, &[], Mode::Exact { max_paths: 10 }) {
        Err(e @ RunError::NotFinite { dist: "normal", .. }) => {
            assert!(e.to_string().contains("draw x: real ~ normal"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    // 3 rows of 4 values: 64 paths, more than 50
    let rows = Val::array(vec![probs(&[1.0; 4]); 3]);
    match run_measure(
        &plate_program(),
        std::slice::from_ref(&rows),
        Mode::Exact { max_paths: 50 },
    ) {
        Err(RunError::TooManyPaths { max_paths: 50, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(exact(&plate_program(), &[rows]).paths, 64);
}

#[test]
fn bad_parameters_are_errors_not_panics() {
    let normal = |sd: f64| {
        measure(
            vec![],
            vec![draw(
                "x",
                Dist::Normal,
                vec![Expr::real(0.0), Expr::prob(sd)],
            )],
            v("x"),
        )
    };
    let s = Mode::Sample { n: 5, seed: 3 };
    assert!(matches!(
        run_measure(&normal(0.0), &[], s),
        Err(RunError::BadDraw { .. })
    ));
    assert!(run_measure(&normal(1.0), &[], s).is_ok());
    let cat = reject_and_factor_program(false, false);
    let inf = Val::array(vec![Val::Prob(f64::INFINITY)]);
    assert!(matches!(
        run_measure(&cat, &[inf, probs(&[1.0])], Mode::Exact { max_paths: 9 }),
        Err(RunError::BadDraw { .. })
    ));
    // `run` is for programs that are not measures
    assert_eq!(run(&normal(1.0), &[]), Err(RunError::IsAMeasure));
}

/// One draw `x ~ dist(params)` and its return, as a program and as `.hk` (`hk_args`
/// spells the arguments).
fn one_draw(dist: Dist, args: Vec<Expr>) -> Program {
    measure(vec![], vec![draw("x", dist, args)], v("x"))
}

/// Weighted sample mean and variance of the linear values, against the reference's
/// exact moments, within 5 standard errors (the variance's from the fourth central
/// moment), with the effective sample size of the weights. The mean weight estimates
/// the mass.
fn check_moments(p: &Program, src: &str, n: usize, seed: u64) {
    let (samples, stats) = sampled(p, &[], n, seed);
    assert_eq!(samples.len(), n);
    assert_eq!(stats.allocations, 0);
    let r = Reference::new(src, &[]);
    let (mass, _) = r.expect(&|_| 1.0);
    let (m1, _) = r.expect(&|x| x);
    let mean = m1 / mass;
    let (var, _) = r.expect(&|x| (x - mean).powi(2));
    let var = var / mass;
    let (m4, _) = r.expect(&|x| (x - mean).powi(4));
    let m4 = m4 / mass;

    let ws: Vec<f64> = samples.iter().map(|s| s.ln_w.exp()).collect();
    let xs: Vec<f64> = samples
        .iter()
        .map(|s| s.value.as_ref().and_then(Val::to_f64).unwrap_or(0.0))
        .collect();
    let sw: f64 = ws.iter().sum();
    let sw2: f64 = ws.iter().map(|w| w * w).sum();
    let n_eff = sw * sw / sw2;
    let got_mean = ws.iter().zip(&xs).map(|(w, x)| w * x).sum::<f64>() / sw;
    let got_var = ws
        .iter()
        .zip(&xs)
        .map(|(w, x)| w * (x - got_mean).powi(2))
        .sum::<f64>()
        / sw;
    let se_mean = (var / n_eff).sqrt();
    let se_var = ((m4 - var * var) / n_eff).sqrt();
    assert!(
        (got_mean - mean).abs() <= 5.0 * se_mean,
        "{src}: mean {got_mean} vs {mean} (se {se_mean})"
    );
    assert!(
        (got_var - var).abs() <= 5.0 * se_var,
        "{src}: variance {got_var} vs {var} (se {se_var})"
    );
    // the mass, as the mean of the weights, within 5 of its standard errors
    let mean_w = sw / n as f64;
    let var_w = ws.iter().map(|w| (w - mean_w).powi(2)).sum::<f64>() / n as f64;
    let se_w = (var_w / n as f64).sqrt().max(1e-12);
    assert!(
        (mean_w - mass).abs() <= 5.0 * se_w,
        "{src}: mass {mean_w} vs {mass}"
    );
}

#[test]
fn sampled_laws_have_the_reference_moments() {
    let r = Expr::real;
    let q = Expr::prob;
    let cases: Vec<(Program, &str)> = vec![
        (
            one_draw(Dist::Normal, vec![r(1.5), q(0.5)]),
            "normal(+1.5, 0.5)",
        ),
        (
            one_draw(Dist::Uniform, vec![r(-1.0), r(3.0)]),
            "uniform(-1.0, +3.0)",
        ),
        (one_draw(Dist::Gamma, vec![q(0.5), q(2.0)]), "gamma(0.5, 2)"),
        (one_draw(Dist::Gamma, vec![q(3.0), q(0.5)]), "gamma(3, 0.5)"),
        (one_draw(Dist::Beta, vec![q(2.0), q(5.0)]), "beta(2, 5)"),
        (one_draw(Dist::Beta, vec![q(0.5), q(0.5)]), "beta(0.5, 0.5)"),
        (one_draw(Dist::Poisson, vec![q(3.5)]), "poisson(3.5)"),
        (one_draw(Dist::Poisson, vec![q(70.0)]), "poisson(70)"),
        (one_draw(Dist::Poisson, vec![q(5000.0)]), "poisson(5000)"),
        (
            one_draw(Dist::Gamma, vec![q(0.05), q(1.0)]),
            "gamma(0.05, 1)",
        ),
        (one_draw(Dist::Beta, vec![q(0.3), q(0.7)]), "beta(0.3, 0.7)"),
    ];
    for (seed, (p, src)) in cases.iter().enumerate() {
        assert_eq!(verify(p), Ok(()), "{p}");
        check_moments(p, src, 20_000, 100 + seed as u64);
    }
}

#[test]
fn sampled_weights_factors_and_rejects() {
    // x ~ normal(0, 1) weighted by e^x: normal(1, 1) with mass e^(1/2)
    let tilted = measure(
        vec![],
        vec![
            draw("x", Dist::Normal, vec![Expr::real(0.0), Expr::prob(1.0)]),
            Stmt::Factor(Expr::prim(Prim::Exp, vec![v("x")])),
        ],
        v("x"),
    );
    check_moments(
        &tilted,
        "x <~ normal(+0.0, 1)\nweight(exp(x), return x)",
        20_000,
        5,
    );
    // x ~ uniform(-1, 3), rejected below 0: uniform(0, 3) with mass 3/4
    let cut = measure(
        vec![],
        vec![
            draw("x", Dist::Uniform, vec![Expr::real(-1.0), Expr::real(3.0)]),
            Stmt::if_(
                Expr::prim(Prim::Lt, vec![v("x"), Expr::real(0.0)]),
                vec![Stmt::Reject],
                vec![],
            ),
        ],
        v("x"),
    );
    check_moments(
        &cut,
        "x <~ uniform(-1.0, +3.0)\nif x < +0.0: reject. measure(real) else: return x",
        20_000,
        6,
    );
    let (s, _) = sampled(&cut, &[], 200, 6);
    assert!(s
        .iter()
        .all(|x| x.value.is_none() == (x.ln_w == f64::NEG_INFINITY)));
}

/// Sampling a discrete program estimates each value's weight (the mean of `w · [x == v]`
/// over the runs) within 5 standard errors of the exact enumeration, and the mass too.
fn check_sampling_matches_enumeration(p: &Program, args: &[Val], n: usize, seed: u64) {
    let e = exact(p, args);
    let (samples, _) = sampled(p, args, n, seed);
    let mut values: Vec<Option<&Val>> = e.weights.iter().map(|(v, _)| Some(v)).collect();
    values.push(None); // the whole mass
    for want in values {
        let hits: Vec<f64> = samples
            .iter()
            .map(|s| match (&s.value, want) {
                (Some(x), Some(v)) if x == v => s.ln_w.exp(),
                (Some(_), None) => s.ln_w.exp(),
                _ => 0.0,
            })
            .collect();
        let mean = hits.iter().sum::<f64>() / n as f64;
        let var = hits.iter().map(|h| (h - mean).powi(2)).sum::<f64>() / n as f64;
        let se = (var / n as f64).sqrt();
        let exact_w = match want {
            Some(v) => e
                .weights
                .iter()
                .find(|(x, _)| x == v)
                .map_or(0.0, |(_, l)| l.exp()),
            None => e.mass(),
        };
        assert!(
            (mean - exact_w).abs() <= 5.0 * se + 1e-12,
            "{want:?}: sampled {mean} vs exact {exact_w} (se {se})\n{p}"
        );
    }
}

#[test]
fn sampling_a_discrete_program_agrees_with_its_enumeration() {
    let pq = [
        probs(&[0.5, 2.0, 1.0, 0.0, 3.0]),
        probs(&[1.0, 0.2, 2.5, 1.0, 0.7]),
    ];
    check_sampling_matches_enumeration(&reject_and_factor_program(true, true), &pq, 20_000, 11);
    let rows = Val::array(vec![
        probs(&[1.0, 2.0]),
        probs(&[0.5, 0.0, 1.5]),
        probs(&[3.0, 1.0]),
    ]);
    check_sampling_matches_enumeration(&plate_program(), &[rows], 20_000, 12);
    check_sampling_matches_enumeration(
        &two_draws_program(),
        &[reals(&[0.3, -1.0, 0.8]), reals(&[0.5, -0.5])],
        20_000,
        13,
    );
}

/// A plate of normals whose means are read from an array, `x_i ~ normal(mu[i], sd)`,
/// summed: `normal(Σ mu, sd · √n)`. A scalar argument read from an array is one read.
#[test]
fn a_plate_of_normals_with_means_from_an_array() {
    let p = measure(
        vec![("mu", arr(Type::Real))],
        vec![
            Stmt::var("s", Type::Real, Some(Expr::real(0.0))),
            each(
                "i",
                size("mu"),
                vec![
                    draw(
                        "x",
                        Dist::Normal,
                        vec![ix(v("mu"), v("i")), Expr::prob(0.5)],
                    ),
                    Stmt::assign("s", AssignOp::Add, v("x")),
                ],
            ),
        ],
        v("s"),
    );
    let mu = [1.0, -2.0, 0.5, 4.0];
    let n = 20_000;
    let (samples, stats) = sampled(&p, &[reals(&mu)], n, 21);
    assert_eq!(stats.iterations, (n * mu.len()) as u64);
    assert_eq!(stats.array_reads, (n * mu.len()) as u64);
    let xs: Vec<f64> = samples
        .iter()
        .map(|s| s.value.as_ref().and_then(Val::to_f64).unwrap_or(f64::NAN))
        .collect();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    let (want_mean, want_var) = (mu.iter().sum::<f64>(), 0.25 * mu.len() as f64);
    let se_mean = (want_var / n as f64).sqrt();
    // a normal's fourth central moment is 3σ⁴
    let se_var = (2.0 * want_var * want_var / n as f64).sqrt();
    assert!(
        (mean - want_mean).abs() <= 5.0 * se_mean,
        "{mean} vs {want_mean}"
    );
    assert!(
        (var - want_var).abs() <= 5.0 * se_var,
        "{var} vs {want_var}"
    );
}

/// A program without draws, run as a measure, is the point mass at `run`'s value, with
/// `run`'s counts: the two entry points share one machine.
#[test]
fn a_program_without_draws_is_a_point_mass() {
    let mut p = gibbs_program();
    p.body.pop();
    p.result = ix(v("p"), Expr::nat(1));
    let args = [
        nats(&[0, 1, 1, 2]),
        reals(&[0.5, -1.0, 2.0, 0.25]),
        Val::Nat(3),
    ];
    let e = exact(&p, &args);
    p.measure = false;
    let (val, stats) = run(&p, &args).expect("runs");
    assert_eq!(e.weights, vec![(val, 0.0)]);
    assert_eq!((e.paths, e.stats), (1, stats));
    assert_eq!(stats.iterations, 4 + 3);
}

#[test]
fn beta_of_vanishing_parameters_is_a_coin_not_a_nan() {
    // beta(a, b) as a, b -> 0 tends to a coin on {0, 1} with P(1) = a / (a + b)
    let p = one_draw(Dist::Beta, vec![Expr::prob(1e-310), Expr::prob(3e-310)]);
    let (s, _) = sampled(&p, &[], 4000, 3);
    let xs: Vec<f64> = s
        .iter()
        .map(|x| x.value.as_ref().and_then(Val::to_f64).unwrap_or(f64::NAN))
        .collect();
    assert!(xs.iter().all(|x| *x < 1e-300 || *x > 1.0 - 1e-12), "{xs:?}");
    let ones = xs.iter().filter(|x| **x > 0.5).count();
    // 1000 expected, standard deviation √(4000 · 1/4 · 3/4) ≈ 27
    assert!((ones as f64 - 1000.0).abs() < 5.0 * 27.4, "{ones}");
}

#[test]
fn a_seed_gives_the_same_samples() {
    let p = one_draw(Dist::Gamma, vec![Expr::prob(0.3), Expr::prob(1.0)]);
    assert_eq!(sampled(&p, &[], 50, 9).0, sampled(&p, &[], 50, 9).0);
    assert_ne!(sampled(&p, &[], 50, 9).0, sampled(&p, &[], 50, 10).0);
}

/// `broken` is rejected with an error of the kind `is_kind` names, whose one-line message
/// quotes a statement, and `fixed`, the same program repaired, verifies.
fn check_rejects(broken: Program, fixed: Program, is_kind: fn(&VerifyError) -> bool) {
    match verify(&broken) {
        Ok(()) => panic!("accepted:\n{broken}"),
        Err(e) => {
            assert!(is_kind(&e), "wrong error {e:?} for\n{broken}");
            let msg = e.to_string();
            assert!(!msg.contains('\n') && msg.contains('`'), "{msg}");
        }
    }
    assert_eq!(verify(&fixed), Ok(()), "{fixed}");
    assert!(matches!(
        run_measure(&broken, &[probs(&[1.0])], Mode::Exact { max_paths: 9 }),
        Err(RunError::Verify(_))
    ));
}

/// A measure program over weights `p: array(prob)`.
fn over_p(body: Vec<Stmt>, result: Expr) -> Program {
    measure(vec![("p", arr(Type::Prob))], body, result)
}

#[test]
fn rejects_a_draw_in_a_program_that_is_not_a_measure() {
    let fixed = over_p(vec![draw("k", Dist::Categorical, vec![v("p")])], v("k"));
    for stmt in [
        draw("k", Dist::Categorical, vec![v("p")]),
        Stmt::Factor(ix(v("p"), Expr::nat(0))),
        Stmt::Reject,
    ] {
        let mut broken = over_p(vec![stmt], Expr::nat(0));
        broken.measure = false;
        check_rejects(broken, fixed.clone(), |e| {
            matches!(e, VerifyError::NotAMeasure { .. })
        });
    }
}

#[test]
fn rejects_a_draw_from_lebesgue_or_counting() {
    let fixed = over_p(
        vec![draw(
            "x",
            Dist::Uniform,
            vec![Expr::real(0.0), Expr::real(1.0)],
        )],
        v("x"),
    );
    check_rejects(
        over_p(
            vec![draw(
                "x",
                Dist::Lebesgue,
                vec![Expr::real(0.0), Expr::real(1.0)],
            )],
            v("x"),
        ),
        fixed,
        |e| {
            matches!(
                e,
                VerifyError::NotDrawable {
                    dist: Dist::Lebesgue,
                    ..
                }
            )
        },
    );
    check_rejects(
        over_p(vec![draw("x", Dist::Counting, vec![])], v("x")),
        over_p(
            vec![draw("x", Dist::Poisson, vec![Expr::prob(2.0)])],
            v("x"),
        ),
        |e| {
            matches!(
                e,
                VerifyError::NotDrawable {
                    dist: Dist::Counting,
                    ..
                }
            )
        },
    );
}

#[test]
fn rejects_draw_arguments_of_the_wrong_type_or_number() {
    let normal = |sd: Expr| {
        over_p(
            vec![draw("x", Dist::Normal, vec![Expr::real(0.0), sd])],
            v("x"),
        )
    };
    // normal's standard deviation is a prob, not a real
    check_rejects(normal(Expr::real(1.0)), normal(Expr::prob(1.0)), |e| {
        matches!(
            e,
            VerifyError::TypeMismatch {
                found: Type::Real,
                ..
            }
        )
    });
    // categorical takes an array of probs, not one prob or an array of reals
    let cat = |w: Expr| over_p(vec![draw("k", Dist::Categorical, vec![w])], v("k"));
    check_rejects(cat(ix(v("p"), Expr::nat(0))), cat(v("p")), |e| {
        matches!(e, VerifyError::TypeMismatch { .. })
    });
    let reals_w = measure(
        vec![("w", arr(Type::Real))],
        vec![draw("k", Dist::Categorical, vec![v("w")])],
        v("k"),
    );
    match verify(&reals_w) {
        Err(VerifyError::TypeMismatch { found, .. }) => assert_eq!(found, arr(Type::Real)),
        other => panic!("{other:?}"),
    }
    check_rejects(
        over_p(vec![draw("x", Dist::Poisson, vec![])], v("x")),
        over_p(
            vec![draw("x", Dist::Poisson, vec![Expr::prob(1.0)])],
            v("x"),
        ),
        |e| {
            matches!(
                e,
                VerifyError::DrawArity {
                    expected: 1,
                    found: 0,
                    ..
                }
            )
        },
    );
    // the declared type is the support's: a gamma draw is a prob
    let gamma = |ty: Type| {
        over_p(
            vec![Stmt::draw(
                "g",
                ty,
                Dist::Gamma,
                vec![Expr::prob(2.0), Expr::prob(1.0)],
            )],
            Expr::convert(Coercion::Prob2Real, v("g")),
        )
    };
    check_rejects(gamma(Type::Real), gamma(Type::Prob), |e| {
        matches!(
            e,
            VerifyError::TypeMismatch {
                found: Type::Real,
                ..
            }
        )
    });
}

#[test]
fn rejects_a_factor_of_a_real() {
    let factor = |w: Expr| {
        over_p(
            vec![
                draw("x", Dist::Normal, vec![Expr::real(0.0), Expr::prob(1.0)]),
                Stmt::Factor(w),
            ],
            v("x"),
        )
    };
    check_rejects(
        factor(mul(v("x"), v("x"))),
        factor(Expr::prim(Prim::Exp, vec![mul(v("x"), v("x"))])),
        |e| {
            matches!(
                e,
                VerifyError::TypeMismatch {
                    found: Type::Real,
                    ..
                }
            )
        },
    );
}

#[test]
fn a_drawn_name_is_an_immutable_scalar_in_its_block() {
    // assigned to: not an accumulator
    check_rejects(
        over_p(
            vec![
                draw("k", Dist::Categorical, vec![v("p")]),
                Stmt::assign("k", AssignOp::Set, Expr::nat(1)),
            ],
            v("k"),
        ),
        over_p(
            vec![
                draw("k", Dist::Categorical, vec![v("p")]),
                Stmt::let_("k1", Type::Nat, add(v("k"), Expr::nat(1))),
            ],
            v("k1"),
        ),
        |e| matches!(e, VerifyError::NotWritable { .. }),
    );
    // read after the `if` it was drawn in
    let mut broken = draw_in_if_program();
    broken.result = v("k");
    check_rejects(broken, draw_in_if_program(), |e| {
        matches!(e, VerifyError::Unbound { .. })
    });
    // drawn twice in one scope
    check_rejects(
        over_p(
            vec![
                draw("k", Dist::Categorical, vec![v("p")]),
                draw("k", Dist::Categorical, vec![v("p")]),
            ],
            v("k"),
        ),
        over_p(
            vec![
                draw("k", Dist::Categorical, vec![v("p")]),
                draw("j", Dist::Categorical, vec![v("p")]),
            ],
            add(v("k"), v("j")),
        ),
        |e| matches!(e, VerifyError::Redeclared { .. }),
    );
}

#[test]
fn the_printer_writes_measure_statements() {
    let text = plate_program().to_string();
    assert!(
        text.starts_with("fn(w: array(array(prob))) measure {"),
        "{text}"
    );
    assert!(
        text.contains("        draw zi: nat ~ categorical(w[i])"),
        "{text}"
    );
    let rf = reject_and_factor_program(true, true).to_string();
    assert!(
        rf.contains("        reject\n") && rf.contains("    factor q[k]\n"),
        "{rf}"
    );
}

/// A sampled measure's mass estimate in log space: the log of the mean weight, exact
/// where the weights are beyond `f64` (e^-2000), `-inf` for no weight, NaN for a NaN.
#[test]
fn the_mass_of_samples_is_kept_in_log_space() {
    let of = |ws: &[f64]| {
        slic_codegen::Sampled {
            samples: ws
                .iter()
                .map(|&ln_w| Sample { value: None, ln_w })
                .collect(),
            stats: Stats::default(),
        }
        .ln_mass()
    };
    let l = of(&[-2000.0, -2000.0 + 2f64.ln()]);
    assert!((l - (-2000.0 + 1.5f64.ln())).abs() < 1e-12, "{l}");
    assert!((of(&[0.0, f64::NEG_INFINITY]) - 0.5f64.ln()).abs() < 1e-15);
    assert_eq!(of(&[]), f64::NEG_INFINITY);
    assert_eq!(of(&[f64::NEG_INFINITY]), f64::NEG_INFINITY);
    assert!(of(&[0.0, f64::NAN]).is_nan());
    assert_eq!(of(&[f64::INFINITY, 0.0]), f64::INFINITY);
}
