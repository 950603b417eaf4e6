//! Continuous recognition, operators and indicator splitting, as data: each row is a
//! factor (a `.hk` expression under `fn` parameters), its variable and support, and the
//! expected answer (the printed family, weight and affine map, or the miss). Every
//! recognised row is also checked by meaning: at points of the support and values of the
//! parameters, `f(x) = weight · density(u) / |scale|` with `x = shift + scale · u`,
//! evaluated in floating point by the reference evaluator. Property tests draw random
//! rational parameters and write each family's density in several shapes.

use num_rational::BigRational;
use proptest::prelude::*;
use rustc_hash::FxHashMap;
use slic_algebra::assume::Context;
use slic_algebra::eval::eval_f64;
use slic_algebra::verify::verify;
use slic_algebra::{canon, front, print, Node, Prim, Store, TermId, Type, VarId};
use slic_holonomic::support::split_indicators;
use slic_holonomic::{ode, recognise, Family, Recognised, Support};

/// A loaded factor: the store, the factor, its variable, its support and the parameters.
struct Case {
    store: Store,
    f: TermId,
    x: VarId,
    support: Support,
    params: Vec<VarId>,
}

/// `params` is a chain of `fn v T:` binders naming every free variable, `var` one of
/// them; `lo`/`hi` are bound expressions (`-∞`, `∞` for none).
fn load(params: &str, var: &str, f: &str, lo: &str, hi: &str) -> Case {
    let mut store = Store::new();
    let src = format!("{params} ({f}, ({lo}, {hi}))");
    let t = front::load(&mut store, &src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
    let mut params = Vec::new();
    let mut body = t;
    while let Node::Lam(v, b) = store.node(body) {
        params.push(*v);
        body = *b;
    }
    let Node::Pair(f, bounds) = *store.node(body) else {
        panic!("{src}: not a pair")
    };
    let Node::Pair(lo, hi) = *store.node(bounds) else {
        panic!("{src}: bounds not a pair")
    };
    let x = *params
        .iter()
        .find(|v| store.var_name(**v) == var)
        .unwrap_or_else(|| panic!("no parameter {var}"));
    let support = Support::real(&store, lo, hi);
    Case {
        store,
        f,
        x,
        support,
        params,
    }
}

fn show(store: &Store, t: TermId) -> String {
    print::print_term(store, t)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The answer as one line: `dist; weight W` and `; x = shift + scale * u` when mapped.
fn describe(store: &mut Store, r: &Recognised) -> String {
    let fam = match r.family.dist_term(store) {
        Some(d) => show(store, d),
        None => match r.family {
            Family::StudentT { nu, loc, scale } => format!(
                "student_t({}, {}, {})",
                show(store, nu),
                show(store, loc),
                show(store, scale)
            ),
            _ => format!("{:?}", r.family),
        },
    };
    let mut s = format!("{fam}; weight {}", show(store, r.weight));
    if r.map.shift.is_some() || r.map.scale.is_some() {
        let sh = r.map.shift.map_or("0".into(), |t| show(store, t));
        let sc = r.map.scale.map_or("1".into(), |t| show(store, t));
        s.push_str(&format!("; x = {sh} + {sc} * u"));
    }
    s
}

/// Values for the parameters: reals around 1 with both signs, probs positive.
fn values(store: &Store, params: &[VarId], x: VarId) -> FxHashMap<VarId, f64> {
    let reals = [0.35, -0.8, 1.25, 0.6, -0.45, 2.1, 0.15, -1.3];
    let probs = [1.7, 0.65, 2.4, 1.15, 3.2, 0.9, 1.45, 2.05];
    let mut out = FxHashMap::default();
    for (i, &v) in params.iter().enumerate() {
        if v == x {
            continue;
        }
        let val = match store.var_type(v) {
            Type::Prob => probs[i % probs.len()],
            Type::Nat => (i % 3 + 1) as f64,
            _ => reals[i % reals.len()],
        };
        out.insert(v, val);
    }
    out
}

/// `f(x) = weight · density(u) / |scale|` at points of the support (see the module doc).
fn check_meaning(case: &mut Case, r: &Recognised, env: &FxHashMap<VarId, f64>) {
    let store = &mut case.store;
    let get = |env: &FxHashMap<VarId, f64>, t: TermId, store: &Store| {
        eval_f64(store, t, &|v| env.get(&v).copied())
    };
    let (lo, hi) = case.support.bounds();
    let lo = lo.and_then(|t| get(env, t, store));
    let hi = hi.and_then(|t| get(env, t, store));
    let points: Vec<f64> = match (lo, hi) {
        (Some(a), Some(b)) if a < b => [0.13, 0.5, 0.77].iter().map(|t| a + (b - a) * t).collect(),
        (Some(_), Some(_)) => return,
        (Some(a), None) => [0.3, 1.1, 2.6].iter().map(|d| a + d).collect(),
        (None, Some(b)) => [0.3, 1.1, 2.6].iter().map(|d| b - d).collect(),
        (None, None) => vec![-1.3, 0.2, 1.7],
    };
    let ty = match &r.family {
        Family::Gamma { .. } | Family::Beta { .. } => Type::Prob,
        _ => Type::Real,
    };
    let u = store.fresh_var("u", ty);
    let ut = store.var_term(u);
    let dens = r.family.density(store, ut);
    verify(store, dens).unwrap_or_else(|e| panic!("density does not verify: {e}"));
    let w = get(env, r.weight, store).expect("weight evaluates");
    let shift = r
        .map
        .shift
        .map_or(Some(0.0), |t| get(env, t, store))
        .expect("shift");
    let scale = r
        .map
        .scale
        .map_or(Some(1.0), |t| get(env, t, store))
        .expect("scale");
    for xv in points {
        let mut e = env.clone();
        e.insert(case.x, xv);
        let Some(fx) = get(&e, case.f, store) else {
            continue;
        };
        e.insert(u, (xv - shift) / scale);
        let d = get(&e, dens, store).expect("density evaluates");
        let want = w * d / scale.abs();
        let tol = 1e-9 * fx.abs().max(want.abs()).max(1e-300);
        assert!(
            (fx - want).abs() <= tol,
            "at x = {xv}: f = {fx}, weight · density = {want}"
        );
    }
}

/// Recognise and compare with `expect` (a `describe` line, or `miss Variant`).
fn check(params: &str, var: &str, f: &str, lo: &str, hi: &str, expect: &str) {
    let mut case = load(params, var, f, lo, hi);
    let got = recognise(
        &mut case.store,
        &Context::new(),
        case.f,
        case.x,
        &case.support,
    );
    let text = match &got {
        Ok(r) => describe(&mut case.store, r),
        Err(m) => format!("miss {m:?}"),
    };
    if let Ok(r) = got {
        verify(&case.store, r.weight).expect("weight verifies");
        assert_eq!(*case.store.ty(r.weight), Type::Prob);
        let canon_w = canon::canonicalize(&mut case.store, &Context::new(), r.weight);
        assert_eq!(canon_w, r.weight, "weight is canonical");
        let env = values(&case.store, &case.params, case.x);
        check_meaning(&mut case, &r, &env);
    }
    assert_eq!(text, expect, "recognising {f} in {var} on ({lo}, {hi})");
}

const XR: &str = "fn x real:";

#[rustfmt::skip]
#[test]
fn normal_densities() {
    check(XR, "x", "exp(-x^2/2)", "-∞", "∞", "normal(0, 1); weight sqrt(2) * sqrt(pi)");
    check(XR, "x", "exp(-x^2/2) / sqrt(2*pi)", "-∞", "∞", "normal(0, 1); weight 1/1");
    check("fn mu real: fn s prob: fn x real:", "x", "exp(-(x - mu)^2 / (2 * s^2)) / (sqrt(2 * pi) * s)", "-∞", "∞",
          "normal(mu, s); weight 1/1");
    check("fn mu real: fn x real:", "x", "exp(-x^2 + 2*mu*x)", "-∞", "∞",
          "normal(mu, sqrt(2) / 2); weight exp(mu ^ 2) * sqrt(pi)");
    check("fn a real: fn x real:", "x", "3 * exp(x*a) * exp(-(x-1)^2/8)", "-∞", "∞",
          "normal(4 * a + 1, 2); weight 6 * exp(2 * a ^ 2 + a) * sqrt(2) * sqrt(pi)");
}

/// The paper's eq. (7): the factor in z gives `3 f'(z) = (mu + y - 2z) f(z)`, the
/// density of normal((mu + y)/2, sqrt(6)/2) at z times that of normal(mu, sqrt 2) at y.
#[rustfmt::skip]
#[test]
fn paper_equation_7() {
    let p = "fn mu real: fn y real: fn z real:";
    let f = "exp(-1/3*mu^2) * exp(-1/3*y^2) * exp(1/3*mu*y) * exp(-1/3*z^2) * exp(1/3*mu*z) * exp(1/3*y*z) / (2 * sqrt(3) * pi)";
    check(p, "z", f, "-∞", "∞",
          "normal(mu / 2 + y / 2, sqrt(6) / 2); weight exp(-mu ^ 2 / 4 + mu * y / 2 - y ^ 2 / 4) / (2 * sqrt(pi))");
    let mut case = load(p, "z", f, "-∞", "∞");
    let op = ode::operator(&mut case.store, &Context::new(), case.f, case.x).expect("operator");
    let cs: Vec<String> = op.coeffs.iter().map(|&c| show(&case.store, c)).collect();
    assert_eq!(cs, ["-mu - y + 2 * z", "+3/1"]);
}

#[rustfmt::skip]
#[test]
fn gamma_densities() {
    let p = "fn a prob: fn b prob: fn x real:";
    check(p, "x", "real2prob(x) ** (a - 1) * exp(-b * x)", "0", "∞",
          "gamma(a, 1 / b); weight b ** (-a) * gammaFunc(a)");
    check(XR, "x", "exp(-2*x)", "0", "∞", "gamma(1, 1/2); weight 1/2");
    check(XR, "x", "real2prob(x)^3 * exp(-x)", "0", "∞", "gamma(4, 1); weight 6/1");
    check(XR, "x", "real2prob(x - 3)^3 * exp(-x)", "3", "∞",
          "gamma(4, 1); weight 6 * exp(-3); x = +3/1 + 1 * u");
    check(XR, "x", "exp(x)", "-∞", "2", "gamma(1, 1); weight exp(2); x = +2/1 + -1/1 * u");
    check("fn a prob: fn x prob:", "x", "x ** (a - 1) * exp(-x)", "0", "∞",
          "gamma(a, 1); weight gammaFunc(a)");
}

#[rustfmt::skip]
#[test]
fn beta_and_uniform_densities() {
    let p = "fn a prob: fn b prob: fn x real:";
    check(p, "x", "real2prob(x) ** (a - 1) * real2prob(1 - x) ** (b - 1)", "0", "1",
          "beta(a, b); weight betaFunc(a, b)");
    check(XR, "x", "real2prob(x) * real2prob(1 - x)", "0", "1", "beta(2, 2); weight 1/6");
    check(XR, "x", "real2prob(x - 2) * real2prob(4 - x)^2", "2", "4",
          "beta(2, 3); weight 4/3; x = +2/1 + +2/1 * u");
    check(XR, "x", "1/2", "3", "7", "uniform(3, 7); weight 2/1");
    check("fn lo real: fn x real:", "x", "3", "lo", "lo + 2", "uniform(lo, lo + 2); weight 6/1");
}

#[rustfmt::skip]
#[test]
fn student_t_densities() {
    check(XR, "x", "1 / (1 + x^2)", "-∞", "∞", "student_t(1/1, +0/1, 1/1); weight pi");
    check("fn nu prob: fn x real:", "x", "real2prob(1 + x^2/nu) ** (-(nu + 1)/2)", "-∞", "∞",
          "student_t(nu, +0/1, 1/1); weight sqrt(nu) * betaFunc(1/2, nu / 2)");
    check(XR, "x", "real2prob((x - 1)^2 + 4) ** (-3/2)", "-∞", "∞",
          "student_t(2/1, +1/1, sqrt(2)); weight 1/2");
}

#[rustfmt::skip]
#[test]
fn negative_cases() {
    check(XR, "x", "exp(x^3)", "-∞", "∞", "miss NoFamily");
    check(XR, "x", "1 / (1 + exp(x))", "-∞", "∞", "miss NotHolonomic");
    check("fn x prob:", "x", "x ** x", "0", "∞", "miss NotHolonomic");
    check(XR, "x", "exp(-x^2/2)", "0", "1", "miss NoFamily");
    check(XR, "x", "exp(-x^2/2)", "0", "∞", "miss NoFamily");
    check(XR, "x", "exp(x^2/2)", "-∞", "∞", "miss NoFamily");
    check("fn c real: fn x real:", "x", "exp(c * x^2)", "-∞", "∞", "miss Unproved");
    check(XR, "x", "erf(x)", "0", "1", "miss NotHolonomic");
    check(XR, "x", "exp(-(x-1)^2/2) + exp(-(x+1)^2/2)", "-∞", "∞", "miss Order(2)");
    check(XR, "x", "exp(-x^2) + exp(-x) + 1", "-∞", "∞", "miss Order(3)");
    check(XR, "x", "exp(-x) / real2prob(x)^2", "0", "∞", "miss NoFamily");
    check(XR, "x", "1", "-∞", "∞", "miss NoFamily");
}

/// Operators as printed coefficient lists `[c0, c1, ...]` (`Σ c_k f^(k) = 0`).
fn check_op(params: &str, var: &str, f: &str, expect: &str) {
    let mut case = load(params, var, f, "-∞", "∞");
    let got = match ode::operator(&mut case.store, &Context::new(), case.f, case.x) {
        Ok(op) => {
            let cs: Vec<String> = op.coeffs.iter().map(|&c| show(&case.store, c)).collect();
            format!("[{}]", cs.join(", "))
        }
        Err(m) => format!("miss {m:?}"),
    };
    assert_eq!(got, expect, "operator of {f}");
}

#[rustfmt::skip]
#[test]
fn operators() {
    check_op(XR, "x", "exp(-x^2/2)", "[x, +1/1]");
    check_op("fn s prob: fn x real:", "x", "exp(-x^2/(2*s^2))", "[x, prob2real(s) ^ 2]");
    check_op(XR, "x", "(x^2 + 1) * exp(x)", "[-x ^ 2 - 2 * x - 1, x ^ 2 + 1]");
    check_op(XR, "x", "exp(x) + exp(-x)", "[-1/1, +0/1, +1/1]");
    check_op(XR, "x", "exp(x) + 1", "[+0/1, -1/1, +1/1]");
    check_op(XR, "x", "exp(x^3)", "[-3 * x ^ 2, +1/1]");
    check_op(XR, "x", "1 / (1 + exp(x))", "miss NotHolonomic");
    check_op(XR, "x", "exp(exp(x))", "miss NotHolonomic");
    check_op("fn y real: fn x real:", "x", "exp(x + y) + exp(x - y)", "[-1/1, +1/1]");
}

/// The conjugate case of issue 4: the posterior of a normal mean under 50 observation
/// factors `exp(-(y_i - mu)^2 / 2)` (the `y_i` free) and a normal(0, 1) prior.
#[test]
fn normal_mean_posterior_with_50_observations() {
    let n = 50;
    let mut params = String::new();
    for i in 0..n {
        params.push_str(&format!("fn y{i} real: "));
    }
    params.push_str("fn mu real:");
    let mut f = String::from("exp(-mu^2/2)");
    for i in 0..n {
        f.push_str(&format!(" * exp(-(y{i} - mu)^2/2)"));
    }
    let mut case = load(&params, "mu", &f, "-∞", "∞");
    let r = recognise(
        &mut case.store,
        &Context::new(),
        case.f,
        case.x,
        &case.support,
    )
    .expect("recognised");
    let Family::Normal { mean, sd } = r.family else {
        panic!("not normal: {:?}", r.family)
    };
    // mean = Σ y_i / 51 exactly (as canonical terms), sd = 1 / sqrt(51)
    let ys: Vec<TermId> = case
        .params
        .iter()
        .filter(|v| **v != case.x)
        .map(|&v| case.store.var_term(v))
        .collect();
    let sum = case.store.prim(Prim::Add, ys, Type::Real);
    let k = case
        .store
        .lit(BigRational::new(1.into(), 51.into()), Type::Real);
    let expect = case.store.prim(Prim::Mul, vec![k, sum], Type::Real);
    let expect = canon::canonicalize(&mut case.store, &Context::new(), expect);
    assert_eq!(mean, expect, "mean {}", show(&case.store, mean));
    assert_eq!(show(&case.store, sd), "sqrt(51) / 51");
    let env = values(&case.store, &case.params, case.x);
    check_meaning(&mut case, &r, &env);
}

/// `split_indicators`: the support and the factor left, printed.
fn check_split(params: &str, var: &str, f: &str, lo: &str, hi: &str, expect: &str) {
    let mut case = load(params, var, f, lo, hi);
    let ctx = Context::new();
    let f = canon::canonicalize(&mut case.store, &ctx, case.f);
    let (s, rest) = split_indicators(&mut case.store, &ctx, f, case.x, case.support);
    let (lo, hi) = s.bounds();
    let b = |t: Option<TermId>, store: &Store| t.map_or("inf".into(), |t| show(store, t));
    let got = format!(
        "({}, {}) {}",
        b(lo, &case.store),
        b(hi, &case.store),
        show(&case.store, rest)
    );
    assert_eq!(got, expect, "split of {f:?}");
    verify(&case.store, rest).expect("rest verifies");
}

#[rustfmt::skip]
#[test]
fn indicators() {
    check_split(XR, "x", "if 3 < x && x < 7: 1/2 else: 0", "-∞", "∞", "(+3/1, +7/1) 1/2");
    check_split(XR, "x", "if 3 < x: exp(-x) else: 0", "0", "∞", "(+3/1, inf) exp(-x)");
    check_split(XR, "x", "if 3 < x: exp(-x) else: 0", "5", "∞", "(5, inf) exp(-x)");
    check_split("fn a real: fn x real:", "x", "if a < x: exp(-x) else: 0", "0", "∞",
                "(0, inf) if a < x: exp(-x) else: 0");
    check_split("fn a real: fn x real:", "x", "if a < x: exp(-x) else: 0", "-∞", "∞",
                "(a, inf) exp(-x)");
    check_split(XR, "x", "if 2*x < 6: exp(x) else: 0", "-∞", "∞", "(inf, +3/1) exp(x)");
    check_split("fn a real: fn x real:", "x", "if a < 1: exp(x) else: 0", "-∞", "∞",
                "(inf, inf) if a < 1: exp(x) else: 0");
    check_split(XR, "x", "if x == 1: exp(x) else: 0", "-∞", "∞", "(inf, inf) if x == 1: exp(x) else: 0");
    check_split(XR, "x", "if x < 1: 0 else: exp(x)", "-∞", "∞", "(+1/1, inf) exp(x)");
    check_split("fn a real: fn x real:", "x", "if a < x && x < 2: exp(-x) else: 0", "0", "∞",
                "(0, +2/1) if a < x: exp(-x) else: 0");
}

/// The simplifier's use: `x <~ lebesgue(-∞, ∞); weight(1/2 if 3 < x < 7 else 0)` is
/// weight 2 times uniform(3, 7).
#[test]
fn indicator_then_uniform() {
    let mut case = load(XR, "x", "if 3 < x && x < 7: 1/2 else: 0", "-∞", "∞");
    let ctx = Context::new();
    let (s, rest) = split_indicators(&mut case.store, &ctx, case.f, case.x, case.support);
    let r = recognise(&mut case.store, &ctx, rest, case.x, &s).expect("recognised");
    assert_eq!(describe(&mut case.store, &r), "uniform(3, 7); weight 2/1");
}

// ---- property tests --------------------------------------------------------------

/// A small non-zero rational `p/q` as `.hk` text and as an exact value.
fn frac() -> impl Strategy<Value = (i64, i64)> {
    (-9i64..10, 1i64..5).prop_filter("non-zero", |(p, _)| *p != 0)
}

fn txt((p, q): (i64, i64)) -> String {
    if p < 0 {
        format!("(-{}/{q})", -p)
    } else {
        format!("({p}/{q})")
    }
}

fn val((p, q): (i64, i64)) -> f64 {
    p as f64 / q as f64
}

/// Recognise `f` and check the family's parameters (by value, exactly as rationals
/// compared in f64 with tight tolerance) and the weight (by meaning).
fn recognise_f(params: &str, f: &str, lo: &str, hi: &str) -> (Case, Recognised) {
    let mut case = load(params, "x", f, lo, hi);
    let r = recognise(
        &mut case.store,
        &Context::new(),
        case.f,
        case.x,
        &case.support,
    )
    .unwrap_or_else(|m| panic!("{f}: {m:?}"));
    let env = values(&case.store, &case.params, case.x);
    check_meaning(&mut case, &r, &env);
    (case, r)
}

fn num(case: &Case, t: TermId) -> f64 {
    let env = values(&case.store, &case.params, case.x);
    eval_f64(&case.store, t, &|v| env.get(&v).copied()).expect("evaluates")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Normal(m, sqrt(v)) written expanded, factored, as a product of exponentials,
    /// with a constant factor, and with an observation factor `exp(-(y - x)^2/2)`.
    #[test]
    fn normal_in_many_shapes(m in frac(), v in frac(), k in 1i64..7, y in frac(), shape in 0usize..5) {
        let v = (v.0.abs(), v.1);
        let (mt, vt, yt) = (txt(m), txt(v), txt(y));
        let f = match shape {
            0 => format!("exp(-(x - {mt})^2 / (2 * {vt}))"),
            1 => format!("exp(-x^2/(2*{vt}) + x*{mt}/{vt} - {mt}^2/(2*{vt}))"),
            2 => format!("exp(-x^2/(2*{vt})) * exp(x*{mt}/{vt})"),
            3 => format!("{k} * exp(-(x - {mt})^2 / (2 * {vt})) / sqrt(2 * pi * {vt})"),
            _ => format!("exp(-(x - {mt})^2 / (2 * {vt})) * exp(-({yt} - x)^2 / 2)"),
        };
        let (case, r) = recognise_f(XR, &f, "-∞", "∞");
        let Family::Normal { mean, sd } = r.family else { panic!("{f}: {:?}", r.family) };
        let (mut em, mut ev) = (val(m), val(v));
        if shape == 4 {
            // prior (m, v) times likelihood of y with variance 1
            let prec = 1.0 / ev + 1.0;
            em = (em / ev + val(y)) / prec;
            ev = 1.0 / prec;
        }
        prop_assert!(close(num(&case, mean), em), "{f}: mean");
        prop_assert!(close(num(&case, sd), ev.sqrt()), "{f}: sd");
    }

    /// Gamma(shape, scale) with rational shape on (lo, ∞).
    #[test]
    fn gamma_in_many_shapes(a in 1i64..12, b in 1i64..4, s in 1i64..6, lo in -3i64..4, shape in 0usize..3) {
        let sh = (a, b); // shape a/b
        let (sht, lot) = (txt(sh), format!("({lo})"));
        let f = match shape {
            0 => format!("real2prob(x - {lot}) ** ({sht} - 1) * exp(-(x - {lot}) / {s})"),
            1 => format!("3 * exp(-x / {s}) * real2prob(x - {lot}) ** {sht} / real2prob(x - {lot})"),
            _ => format!("exp({lo}/{s}) * exp(-x/{s}) * real2prob(x - {lot}) ** ({sht} - 1) / gammaFunc({sht})"),
        };
        let (case, r) = recognise_f(XR, &f, &lot, "∞");
        let Family::Gamma { shape: k, scale } = r.family else { panic!("{f}: {:?}", r.family) };
        prop_assert!(close(num(&case, k), val(sh)), "{f}: shape");
        prop_assert!(close(num(&case, scale), s as f64), "{f}: scale");
    }

    /// Beta(a, b) on (lo, lo + w) and uniform when a = b = 1.
    #[test]
    fn beta_in_many_shapes(a in 1i64..9, b in 1i64..9, q in 1i64..4, lo in -2i64..3, w in 1i64..4, k in 1i64..5) {
        let (at, bt) = (txt((a, q)), txt((b, q)));
        let hi = lo + w;
        let f = format!("{k} * real2prob(x - ({lo})) ** ({at} - 1) * real2prob(({hi}) - x) ** ({bt} - 1)");
        let (case, r) = recognise_f(XR, &f, &format!("({lo})"), &format!("({hi})"));
        match r.family {
            Family::Uniform { lo: l, hi: h } => {
                prop_assert!(a == q && b == q, "{f}: uniform");
                prop_assert!(close(num(&case, l), lo as f64) && close(num(&case, h), hi as f64));
            }
            Family::Beta { a: ra, b: rb } => {
                prop_assert!(close(num(&case, ra), val((a, q))), "{f}: a");
                prop_assert!(close(num(&case, rb), val((b, q))), "{f}: b");
            }
            other => prop_assert!(false, "{f}: {other:?}"),
        }
    }

    /// Student-t(nu, loc, scale) written as a power of `1 + z^2/nu`.
    #[test]
    fn student_t_in_many_shapes(n in 1i64..9, loc in frac(), sc in 1i64..4, k in 1i64..4) {
        let lt = txt(loc);
        let f = format!("{k} * real2prob(1 + ((x - {lt})/{sc})^2/{n}) ** (-({n} + 1)/2)");
        let (case, r) = recognise_f(XR, &f, "-∞", "∞");
        let Family::StudentT { nu, loc: l, scale } = r.family else { panic!("{f}: {:?}", r.family) };
        prop_assert!(close(num(&case, nu), n as f64), "{f}: nu");
        prop_assert!(close(num(&case, l), val(loc)), "{f}: loc");
        prop_assert!(close(num(&case, scale), sc as f64), "{f}: scale");
    }
}
