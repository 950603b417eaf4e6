//! Table tests of discrete recognition: one line per factor, its support and the
//! expected family, parameters, weight and shift (all as canonical terms, printed), or
//! the miss.

use slic_algebra::assume::Context;
use slic_algebra::{front, print, Coercion, Node, Store, TermId, Type, VarId};

use super::super::Miss;
use crate::family::{Family, Recognised};
use crate::recognise::recognise;
use crate::support::Support;

/// Load `fn a T: ... fn k T: body`: the body and the parameters, the variable last.
fn load(store: &mut Store, src: &str) -> (TermId, Vec<VarId>) {
    let mut t = match front::load(store, src) {
        Ok(t) => t,
        Err(e) => panic!("{src}: {e:?}"),
    };
    let mut vars = Vec::new();
    while let Node::Lam(v, b) = store.node(t) {
        vars.push(*v);
        t = *b;
    }
    (t, vars)
}

/// One end of a support: empty (infinite), an integer, or a parameter's name.
fn bound(store: &mut Store, vars: &[VarId], s: &str) -> Option<TermId> {
    if s.is_empty() {
        return None;
    }
    if let Ok(v) = s.parse::<i64>() {
        return Some(store.int_lit(v, Type::Int));
    }
    let v = *vars.iter().find(|&&v| store.var_name(v) == s)?;
    let t = store.var_term(v);
    Some(match store.var_type(v) {
        Type::Nat => store.intern(Node::Coerce(Coercion::Nat2Int, t), Type::Int),
        _ => t,
    })
}

/// `lo..hi` (either end may be empty) or `nat`.
fn support(store: &mut Store, vars: &[VarId], s: &str) -> Support {
    let (lo, hi) = match s {
        "nat" => ("0", ""),
        _ => s.split_once("..").unwrap_or((s, s)),
    };
    Support::Int {
        lo: bound(store, vars, lo),
        hi: bound(store, vars, hi),
    }
}

fn show(store: &Store, t: TermId) -> String {
    print::print_term(store, t).trim().replace('\n', " ")
}

pub(crate) fn describe(store: &Store, r: &Recognised) -> String {
    let fam = match &r.family {
        Family::Poisson { rate } => format!("poisson({})", show(store, *rate)),
        Family::NegBinomial { r, p } => {
            format!("negbinomial({}, {})", show(store, *r), show(store, *p))
        }
        Family::Categorical { weights } => format!("categorical({})", show(store, *weights)),
        other => format!("{other:?}"),
    };
    let mut s = format!("{fam} weight {}", show(store, r.weight));
    if let Some(t) = r.map.shift {
        s += &format!(" shift {}", show(store, t));
    }
    if let Some(t) = r.map.scale {
        s += &format!(" scale {}", show(store, t));
    }
    s
}

fn check(src: &str, on: &str, expect: Result<&str, Miss>) {
    let mut store = Store::new();
    let (f, vars) = load(&mut store, src);
    let Some(&x) = vars.last() else {
        panic!("{src}: no variable");
    };
    let sup = support(&mut store, &vars, on);
    let got = recognise(&mut store, &Context::new(), f, x, &sup).map(|r| describe(&store, &r));
    assert_eq!(
        got.as_deref().map_err(Clone::clone),
        expect,
        "{src} on {on}"
    );
}

/// Poisson and negative binomial (geometric) on nat and on `lo..`: parameters read off
/// the ratio, weight `f(lo)` times the kernel's sum.
#[rustfmt::skip]
#[test]
fn rays() {
    check("fn k nat: (1/2)^(k+1)", "nat", Ok("negbinomial(1. prob, 1/2) weight 1. prob"));
    check("fn l prob: fn k nat: l^k * exp(-l) / gammaFunc(k+1)", "nat", Ok("poisson(l) weight 1. prob"));
    check("fn c prob: fn k nat: c * 3^k / gammaFunc(k+1)", "nat", Ok("poisson(3. prob) weight c * exp(3)"));
    check("fn r prob: fn k nat: gammaFunc(k + r) / gammaFunc(k + 1) * (1/3)^k", "nat", Ok("negbinomial(r, 2/3) weight 2 ** (-r) * 3 ** r * gammaFunc(r)"));
    check("fn q prob: fn k nat: (q/(1+q))^k", "nat", Ok("negbinomial(1. prob, 1 / (q + 1)) weight q + 1"));
    check("fn l prob: fn k int: l^int2nat(k - 2) / gammaFunc(k - 1)", "2..", Ok("poisson(l) weight exp(l) shift +2"));
    check("fn k nat: (1/2)^k", "3..", Ok("negbinomial(1. prob, 1/2) weight 1/4 shift +3"));
    check("fn k nat: (k+1) * (1/2)^k", "nat", Ok("negbinomial(2. prob, 1/2) weight 4. prob"));
    check("fn l real: fn k nat: exp(l * k) / gammaFunc(k + 1)", "nat", Ok("poisson(exp(l)) weight exp(exp(l))"));
    check("fn k nat: (k + 1) * (k + 2) / 2 * (1/4)^k * 3", "nat", Ok("negbinomial(3. prob, 3/4) weight 64/9"));
}

/// Rays to -∞ (`k < hi`), reflected: `k = (hi - 1) - u`. (`1 - exp(-1) > 0` is beyond
/// the sign rules, so that geometric is honestly unproved.)
#[rustfmt::skip]
#[test]
fn reflected() {
    check("fn k int: 2 ** k", "..0", Ok("negbinomial(1. prob, 1/2) weight 1. prob shift -1 scale -1"));
    check("fn k int: (1/3) ** (-k) * 5", "..3", Ok("negbinomial(1. prob, 2/3) weight 135/2 shift +2 scale -1"));
    check("fn l prob: fn k int: l ** (-k) / gammaFunc(1 - k)", "..1", Ok("poisson(l) weight exp(l) scale -1"));
    check("fn k int: exp(k)", "..0", Err(Miss::Unproved));
    check("fn k int: (1/2) ** k", "..0", Err(Miss::NoFamily));
}

/// Finite ranges: categorical over the values (literal arrays for short literal ranges),
/// weight the exact sum.
#[rustfmt::skip]
#[test]
fn ranges() {
    check("fn k nat: (1/2)^k", "0..4", Ok("categorical([1, 1/2, 1/4, 1/8]) weight 15/8"));
    check("fn k nat: (k + 1) / 10", "0..4", Ok("categorical([1/10, 1/5, 3/10, 2/5]) weight 1. prob"));
    check("fn k nat: (k + 1) / 10", "2..4", Ok("categorical([3/10, 2/5]) weight 7/10 shift +2"));
    check("fn k nat: (k + 1) / 10", "4..4", Ok("categorical([]. array(prob)) weight 0. prob shift +4"));
    check("fn n nat: fn k nat: (1/2)^k", "0..n", Ok("categorical(array i of n: (1/2) ^ i) weight summate j from 0 to n: (1/2) ^ j"));
    check("fn n nat: fn k nat: k", "0..n", Ok("categorical(array i of n: nat2prob(i)) weight real2prob(nat2real(n) ^ 2 / 2 - nat2real(n) / 2)"));
    check("fn l prob: fn k nat: l^k / gammaFunc(k+1)", "0..40", Ok("categorical(array i of 40: l ^ i / gammaFunc(nat2real(i) + 1)) weight summate j from 0 to 40: l ^ j / gammaFunc(nat2real(j) + 1)"));
    check("fn p prob: fn k nat: p^k", "0..3", Ok("categorical([1, p, p ^ 2]) weight p ^ 2 + p + 1"));
    check("fn c prob: fn k nat: c * gammaFunc(k + 1)", "1..4", Ok("categorical([c, 2 * c, 6 * c]) weight 9 * c shift +1"));
    check("fn k nat: choose(4, k)", "0..5", Ok("categorical([1, 4, 6, 4, 1]. array(prob)) weight 16. prob"));
    check("fn k nat: (1/2)^k", "0..2", Ok("categorical([1, 1/2]) weight 3/2"));
}

/// Nothing, honestly: divergent sums (`q >= 1`), families outside the table (binomial),
/// unproved parameters or bounds, supports without a family.
#[rustfmt::skip]
#[test]
fn misses() {
    check("fn r prob: fn q prob: fn k nat: gammaFunc(k + r) / gammaFunc(k + 1) * q^k", "nat", Err(Miss::Unproved));
    check("fn k nat: 2^k", "nat", Err(Miss::NoFamily));
    check("fn k nat: 1", "nat", Err(Miss::NoFamily));
    check("fn n nat: fn k nat: choose(n, k) * (1/3)^k", "nat", Err(Miss::NoFamily));
    check("fn k int: exp(-k)", "..", Err(Miss::NoFamily));
    check("fn k nat: exp(-k*k)", "nat", Err(Miss::NotHolonomic));
    check("fn a nat: fn b nat: fn k nat: (1/2)^k", "a..b", Err(Miss::Unproved));
    check("fn k nat: gammaFunc(k + 1)", "nat", Err(Miss::NoFamily));
    check("fn k nat: (1/2)^k / (k + 1)", "nat", Err(Miss::NoFamily));
    check("fn k nat: (1/2)^k", "-3..", Err(Miss::NotHolonomic));
}

/// The recognised family's primitive measure (if the language has one) and its mass at
/// the variable, as printed.
fn check_row(src: &str, on: &str, dist: Option<&str>, mass: &str) {
    let mut store = Store::new();
    let (f, vars) = load(&mut store, src);
    let Some(&x) = vars.last() else {
        panic!("{src}: no variable");
    };
    let sup = support(&mut store, &vars, on);
    let r = match recognise(&mut store, &Context::new(), f, x, &sup) {
        Ok(r) => r,
        Err(m) => panic!("{src} on {on}: {m:?}"),
    };
    let d = r.family.dist_term(&mut store).map(|t| show(&store, t));
    let xt = store.var_term(x);
    let m = r
        .family
        .density(&mut store, xt)
        .expect("the table has the row");
    let got = (d, show(&store, m));
    assert_eq!(
        (got.0.as_deref(), got.1.as_str()),
        (dist, mass),
        "{src} on {on}"
    );
}

/// The discrete rows of the table: primitive terms and masses.
#[rustfmt::skip]
#[test]
fn table_rows() {
    check_row("fn l prob: fn k nat: l^k * exp(-l) / gammaFunc(k+1)", "nat", Some("poisson(l)"), "l ** k * exp(-l) / gammaFunc(nat2real(k) + 1)");
    check_row("fn r prob: fn k nat: gammaFunc(k + r) / gammaFunc(k + 1) * (1/3)^k", "nat", None, "2 ** r     * 3 ** (-r - k)     * gammaFunc(prob2real(r) + k)     / (gammaFunc(nat2real(k) + 1) * gammaFunc(r))");
    check_row("fn k nat: (1/2)^k", "0..3", Some("categorical([1, 1/2, 1/4])"), "[1, 1/2, 1/4][k] / (summate j from 0 to size([1, 1/2, 1/4]): [1, 1/2, 1/4][j])");
}
