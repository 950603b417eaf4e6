//! Property tests of discrete recognition, one per family: random rational parameters,
//! the mass written in several shapes (nat powers, `**`, `exp(k * log q)`, shifted
//! factorials, binomials, extra constant factors and observation factors in another
//! variable), and the answer checked twice: exactly (family, parameters and weight equal
//! the expected canonical terms) and numerically (the weight is the sum of the factor
//! over its support, and the factor is `weight * density` pointwise).
//!
//! Each case is one program `fn t prob: fn k nat: (f, (p1, (p2, ... weight)))`: the
//! factor and the expected terms share the variables, so canonical forms compare.

use proptest::prelude::*;
use slic_algebra::assume::Context;
use slic_algebra::canon::canonicalize;
use slic_algebra::eval::eval_f64;
use slic_algebra::{front, print, Node, Store, TermId, Type, VarId};
use slic_holonomic::{recognise, Family, Miss, Support};

/// A loaded case: the factor, the expected terms, the parameters (variable last).
struct Case {
    store: Store,
    f: TermId,
    expect: Vec<TermId>,
    vars: Vec<VarId>,
}

fn load(src: &str) -> Case {
    let mut store = Store::new();
    let mut t = match front::load(&mut store, src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {e:?}"),
    };
    let mut vars = Vec::new();
    while let Node::Lam(v, b) = store.node(t) {
        vars.push(*v);
        t = *b;
    }
    let mut parts = Vec::new();
    while let Node::Pair(a, b) = store.node(t) {
        parts.push(*a);
        t = *b;
    }
    parts.push(t);
    let f = parts.remove(0);
    let ctx = Context::new();
    let expect = parts
        .into_iter()
        .map(|e| canonicalize(&mut store, &ctx, e))
        .collect();
    Case {
        store,
        f,
        expect,
        vars,
    }
}

/// `a/b` as a prob literal in the language.
fn lit(a: u32, b: u32) -> String {
    format!("({a}/{b})")
}

/// `gammaFunc(a/b)` as recognition writes it: an integer for a positive integer argument
/// (closed factorials are evaluated), the call otherwise.
fn gamma(a: u32, b: u32) -> String {
    if (a / b) * b == a {
        let f: u64 = (1..u64::from(a / b)).product();
        format!("{f}")
    } else {
        format!("gammaFunc({})", lit(a, b))
    }
}

/// The value every parameter other than the variable takes in numeric checks.
const PARAM: f64 = 0.7;

fn value(store: &Store, t: TermId, vars: &[VarId], k: f64) -> f64 {
    let Some(&x) = vars.last() else {
        return f64::NAN;
    };
    let env = |v: VarId| Some(if v == x { k } else { PARAM });
    eval_f64(store, t, &env).unwrap_or(f64::NAN)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}

fn show(store: &Store, t: TermId) -> String {
    print::print_term(store, t).trim().to_string()
}

/// Recognise on the ray from `end` (`end..` when `up`, else `..end + 1`), compare
/// parameters and weight exactly, then check the weight against the sum of the first
/// `terms` values and the density pointwise.
fn check_ray(src: &str, end: i64, up: bool, terms: i64) -> Result<(), TestCaseError> {
    let mut c = load(src);
    let Some(&x) = c.vars.last() else {
        return Err(TestCaseError::fail("no variable"));
    };
    let support = if up {
        let lo = c.store.int_lit(end, Type::Int);
        Support::Int {
            lo: Some(lo),
            hi: None,
        }
    } else {
        let hi = c.store.int_lit(end + 1, Type::Int);
        Support::Int {
            lo: None,
            hi: Some(hi),
        }
    };
    // the k of the u-th point of the ray
    let at = |u: i64| if up { end + u } else { end - u };
    let r = recognise(&mut c.store, &Context::new(), c.f, x, &support)
        .map_err(|m| TestCaseError::fail(format!("{src}: {m:?}")))?;
    let params = match &r.family {
        Family::Poisson { rate } => vec![*rate],
        Family::NegBinomial { r, p } => vec![*r, *p],
        other => return Err(TestCaseError::fail(format!("{src}: {other:?}"))),
    };
    let mut got = params;
    got.push(r.weight);
    let shown = |c: &Case, ts: &[TermId]| {
        ts.iter()
            .map(|&t| show(&c.store, t))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    prop_assert_eq!(
        shown(&c, &got),
        shown(&c, &c.expect),
        "{} (family {:?})",
        src,
        r.family
    );
    // the map x = shift + scale * u
    let shift = r.map.shift.map(|t| show(&c.store, t));
    let scale = r.map.scale.map(|t| show(&c.store, t));
    let want_shift = (end != 0).then(|| format!("{end:+}"));
    let want_scale = (!up).then(|| "-1".to_string());
    prop_assert_eq!((shift, scale), (want_shift, want_scale), "{}", src);
    // numerically: Σ f = weight, f = weight * density
    let mut sum = 0.0;
    for u in 0..terms {
        sum += value(&c.store, c.f, &c.vars, at(u) as f64);
    }
    let w = value(&c.store, r.weight, &c.vars, 0.0);
    prop_assert!(close(sum, w), "{}: sum {} weight {}", src, sum, w);
    for u in [0u32, 1, 3, 7] {
        let ut = c.store.int_lit(i64::from(u), Type::Nat);
        let d = r
            .family
            .density(&mut c.store, ut)
            .expect("the table has the row");
        let dv = value(&c.store, d, &c.vars, 0.0);
        let fv = value(&c.store, c.f, &c.vars, at(i64::from(u)) as f64);
        prop_assert!(close(fv, w * dv), "{}: f({}) {} vs {}", src, u, fv, w * dv);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Poisson masses: rate `a/b`, a constant `c/d`, six shapes.
    #[test]
    fn poisson(a in 1u32..15, b in 1u32..4, c in 1u32..9, d in 1u32..5, shape in 0usize..6) {
        let (l, cc) = (lit(a, b), lit(c, d));
        let src = match shape {
            0 => format!("fn t prob: fn k nat: ({cc} * {l}^k * exp(-{l}) / gammaFunc(k+1), ({l}, {cc}))"),
            1 => format!("fn t prob: fn k nat: ({cc} * exp(k * log({l})) / gammaFunc(k + 1), ({l}, {cc} * exp({l})))"),
            2 => format!("fn t prob: fn k nat: ({cc} * {l} ** k / gammaFunc(k+1), ({l}, {cc} * exp({l})))"),
            3 => format!("fn t prob: fn k nat: ({cc} * (k + 1) * {l}^k / gammaFunc(k + 2), ({l}, {cc} * exp({l})))"),
            4 => format!("fn t prob: fn k nat: ({l}^(k+2) / (gammaFunc(k+1) * 7) * {cc}, ({l}, {cc} * {l}^2 / 7 * exp({l})))"),
            // an observation factor in another variable: rate l t, weight e^(l t - t)
            _ => format!("fn t prob: fn k nat: ({cc} * ({l} * t)^k * exp(-t) / gammaFunc(k+1), ({l} * t, {cc} * exp({l} * t - t)))"),
        };
        check_ray(&src, 0, true, 150)?;
    }

    /// Negative binomial masses: `r = a/b`, failure probability `q = m/(m+n)`, a
    /// constant, six shapes (geometric and binomial-coefficient ones included).
    #[test]
    fn negative_binomial(a in 1u32..9, b in 1u32..3, m in 1u32..5, n in 1u32..5, c in 1u32..9, shape in 0usize..6) {
        let (r, q, p, cc) = (lit(a, b), lit(m, m + n), lit(n, m + n), lit(c, 3));
        let one = lit(1, 1);
        let g = gamma(a, b);
        let src = match shape {
            0 => format!("fn t prob: fn k nat: ({cc} * gammaFunc(k + {r}) / gammaFunc(k + 1) * {q}^k, ({r}, ({p}, {cc} * {g} * {p} ** (-{r}))))"),
            1 => format!("fn t prob: fn k nat: ({cc} * gammaFunc(k + {r}) / (gammaFunc(k + 1) * gammaFunc({r})) * {p} ** {r} * {q} ** k, ({r}, ({p}, {cc})))"),
            2 => format!("fn t prob: fn k nat: ({cc} * exp(k * log({q})) * gammaFunc(k + {r}) / gammaFunc(k + 1), ({r}, ({p}, {cc} * {g} * {p} ** (-{r}))))"),
            3 => format!("fn t prob: fn k nat: ({cc} * {q}^(k+1), ({one}, ({p}, {cc} * {q} / {p})))"),
            4 => format!("fn t prob: fn k nat: ({cc} * choose(k + {a}, k) * {q}^k, ({}, ({p}, {cc} * {p} ** (-{}))))", lit(a + 1, 1), a + 1),
            // an observation factor in t, and a failure probability 1/(1+t) in it
            _ => format!("fn t prob: fn k nat: ({cc} * exp(-t) * (1 / (1 + t))^k * gammaFunc(k + {r}) / gammaFunc(k + 1), ({r}, (t / (1 + t), {cc} * exp(-t) * {g} * (t / (1 + t)) ** (-{r}))))"),
        };
        check_ray(&src, 0, true, 400)?;
    }

    /// Geometric masses on a shifted ray `lo..` (weight `f(lo)` times the sum) and on a
    /// reflected one `..hi` (`q ** -k`: the same law counted down from `hi - 1`).
    #[test]
    fn shifted(end in -5i64..6, m in 1u32..5, n in 1u32..5, up in any::<bool>()) {
        let (q, p) = (lit(m, m + n), lit(n, m + n));
        let (f, w) = if up {
            ("k", format!("{q} ** {end}"))
        } else {
            ("-k", format!("{q} ** ({})", -end))
        };
        let src = format!("fn t prob: fn k int: ({q} ** ({f}), ({}, ({p}, {w} / {p})))", lit(1, 1));
        check_ray(&src, end, up, 400)?;
    }

    /// Categorical on literal ranges (unrolled up to the limit, an array beyond it):
    /// every weight is the factor's value there and the weight is their sum.
    #[test]
    fn categorical(lo in 0i64..5, len in 0i64..40, a in 1u32..5, c in 1u32..9, shape in 0usize..3) {
        let f = match shape {
            0 => format!("{} * (k + {a})^2", lit(c, 2)),
            1 => format!("{} * {}^k", lit(c, 2), lit(a, a + 1)),
            _ => format!("t * (k + 1) / {a}"),
        };
        let src = format!("fn t prob: fn k nat: {f}");
        let mut cs = load(&src);
        let Some(&x) = cs.vars.last() else {
            return Err(TestCaseError::fail("no variable"));
        };
        let lo_t = cs.store.int_lit(lo, Type::Int);
        let hi_t = cs.store.int_lit(lo + len, Type::Int);
        let support = Support::Int { lo: Some(lo_t), hi: Some(hi_t) };
        let r = recognise(&mut cs.store, &Context::new(), cs.f, x, &support)
            .map_err(|m| TestCaseError::fail(format!("{src}: {m:?}")))?;
        let Family::Categorical { weights } = r.family else {
            return Err(TestCaseError::fail(format!("{src}: {:?}", r.family)));
        };
        let literal = matches!(cs.store.node(weights), Node::ArrayLit(_));
        prop_assert_eq!(literal, len <= 32, "{}", src);
        let mut sum = 0.0;
        for i in 0..len {
            let it = cs.store.int_lit(i, Type::Nat);
            let wi = cs.store.intern(Node::Index(weights, it), Type::Prob);
            let got = value(&cs.store, wi, &cs.vars, 0.0);
            let want = value(&cs.store, cs.f, &cs.vars, (lo + i) as f64);
            prop_assert!(close(got, want), "{}: weight {} is {} not {}", src, i, got, want);
            sum += want;
        }
        let w = value(&cs.store, r.weight, &cs.vars, 0.0);
        prop_assert!(close(sum, w) || (sum == 0.0 && w == 0.0), "{}: sum {} weight {}", src, sum, w);
    }

    /// Never a family for a sum that diverges (`q >= 1`) or a ratio outside the table
    /// (binomial: the coefficient of `k` is negative), whatever the shape.
    #[test]
    fn no_family(m in 1u32..5, n in 0u32..5, shape in 0usize..3) {
        let q = lit(m + n, m);
        let f = match shape {
            0 => format!("{q}^k"),
            1 => format!("gammaFunc(k + 2) / gammaFunc(k + 1) * {q} ** k"),
            _ => format!("choose({}, k) * {}^k", m + n, lit(1, m)),
        };
        let src = format!("fn t prob: fn k nat: {f}");
        let mut c = load(&src);
        let Some(&x) = c.vars.last() else {
            return Err(TestCaseError::fail("no variable"));
        };
        let zero = c.store.int_lit(0, Type::Int);
        let support = Support::Int { lo: Some(zero), hi: None };
        let got = recognise(&mut c.store, &Context::new(), c.f, x, &support);
        prop_assert_eq!(got.map(|r| r.family), Err(Miss::NoFamily), "{}", src);
    }
}
