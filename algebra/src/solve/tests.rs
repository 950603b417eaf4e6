//! Solving table: `(variables, facts, equation, variable to solve for, want)` where want
//! is `value | condition` printed, or `none`.

use crate::cond::tests::{round_trips, setup, show};
use crate::solve::solve_linear;
use crate::term::Store;

fn check_solve(vars: &str, facts: &[&str], eq: &str, var: &str, want: &str) -> Option<String> {
    let mut s = Store::new();
    let (ctx, vs, q) = setup(&mut s, vars, facts, &[eq]);
    let v = *vs.iter().find(|&&v| s.var_name(v) == var)?;
    let got = match solve_linear(&mut s, &ctx, q[0], v) {
        None => "none".to_string(),
        Some(sol) => {
            for t in [sol.value, sol.condition] {
                if let Err(e) = crate::verify::verify(&s, t) {
                    return Some(format!("{eq}: ill-typed {e:?}"));
                }
                if let Err(e) = round_trips(&mut s, &vs, t) {
                    return Some(format!("{eq}: {e}"));
                }
            }
            if s.ty(sol.value) != s.var_type(v) {
                return Some(format!("{eq}: value of type {}", s.ty(sol.value)));
            }
            format!("{} | {}", show(&s, sol.value), show(&s, sol.condition))
        }
    };
    (got != want).then(|| format!("{eq} for {var}\n    want {want}\n    got  {got}"))
}

#[rustfmt::skip]
const SOLVE: &[(&str, &[&str], &str, &str, &str)] = &[
    ("i nat, j nat", &[], "i == j - 1", "j", "i + 1 | true"),
    ("i nat, j nat", &[], "i == j + 1", "j", "int2nat(nat2int(i) - 1) | 1 <= i"),
    ("i int, j int", &[], "i == j + 1", "j", "i - 1 | true"),
    ("i int, j int", &[], "j - 1 == i", "j", "i + 1 | true"),
    ("i nat, j nat, n nat", &["j: 0..n"], "i == j - 1", "j", "i + 1 | i + 2 <= n"),
    ("i nat, j nat, n nat", &["j: 0..n", "i < n"], "j == i", "j", "i | true"),
    ("i nat, j nat, n nat", &["j: 0..n", "j < i"], "j == i", "j", "i | i + 1 <= n"),
    ("i int, j int", &[], "2*j == i", "j", "real2int((1/2) * int2real(i)) | i == 2 * real2int((1/2) * int2real(i))"),
    ("i int, j int", &[], "2*j == 4", "j", "+2 | true"),
    ("i int, j int", &[], "2*j == 3", "j", "+0 | false"),
    ("i int, j int", &[], "j == j", "j", "none"),
    ("i nat, j nat, y array(nat)", &[], "i == y[j]", "j", "none"),
    ("i nat, j nat, y array(nat)", &[], "y[i] == j", "j", "y[i] | true"),
    ("i nat, j nat", &[], "i < j", "j", "none"),
    ("i int, j int", &[], "i == 3", "j", "none"),
    ("x real, y real", &[], "2*x + y == 1", "x", "-(1/2) * y + 1/2 | true"),
    ("p prob, x real", &[], "prob2real(p) == x + 1", "p", "real2prob(x + 1) | 0 <= x + 1"),
    ("i int, j int, k int", &[], "i + j + k == 0", "k", "-i - j | true"),
];

#[test]
fn solve_table() {
    let bad: Vec<String> = SOLVE
        .iter()
        .filter_map(|(v, f, e, x, w)| check_solve(v, f, e, x, w))
        .collect();
    assert!(bad.is_empty(), "\n{}", bad.join("\n"));
}

/// One random equation in j (nat) with i (nat) and k (int), maybe a range on j: for
/// every assignment in a box and every j in its range, the equation holds exactly when
/// the condition holds and j is the value.
fn random_solve(seed: u64) -> Result<bool, String> {
    use crate::cond::tests::oracle::{eval, Val};
    use crate::cond::tests::Gen;
    use crate::num::Rational;
    let mut g = Gen(seed | 1);
    let c = g.next(3) + 1;
    let lhs = g.linear(&["i", "k"]);
    let rhs = g.linear(&["i", "k"]);
    let eq = format!("{lhs} == {c}*j + {rhs}");
    let mut facts = Vec::new();
    if g.next(2) == 0 {
        let lo = ["0", "1", "i"][g.next(3) as usize];
        let hi = ["3", "i", "i + 2"][g.next(3) as usize];
        facts.push(format!("j: {lo}..{hi}"));
    }
    let refs: Vec<&str> = facts.iter().map(String::as_str).collect();
    let mut s = Store::new();
    let (ctx, vs, q) = setup(&mut s, "i nat, j nat, k int", &refs, &[&eq]);
    let Some(sol) = solve_linear(&mut s, &ctx, q[0], vs[1]) else {
        return Ok(false);
    };
    let range = ctx.range_of(vs[1]);
    let r = Rational::from_integer;
    for i in 0..5 {
        for k in -3..4 {
            for j in 0..8 {
                let env = |v| {
                    [r(i), r(j), r(k)]
                        .get(vs.iter().position(|&w| w == v)?)
                        .cloned()
                };
                let num = |t| match eval(&s, t, &env) {
                    Some(Val::Num(q)) => Some(q),
                    _ => None,
                };
                if let Some((lo, hi)) = range {
                    let (lo, hi) = (num(lo).ok_or("lo")?, num(hi).ok_or("hi")?);
                    if !(lo <= r(j) && r(j) < hi) {
                        continue;
                    }
                }
                let holds = eval(&s, q[0], &env) == Some(Val::Bool(true));
                let cond = match eval(&s, sol.condition, &env) {
                    Some(Val::Bool(b)) => b,
                    _ => return Err(format!("{eq}: cannot evaluate the condition")),
                };
                let solved = cond && num(sol.value).ok_or("value")? == r(j);
                if holds != solved {
                    return Err(format!(
                        "{eq} {facts:?} at i={i} j={j} k={k}: holds {holds}, but value {} cond {}",
                        show(&s, sol.value),
                        show(&s, sol.condition)
                    ));
                }
            }
        }
    }
    Ok(true)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    #[test]
    fn solutions_keep_meaning(seed in proptest::prelude::any::<u64>()) {
        random_solve(seed).map_err(proptest::test_runner::TestCaseError::fail)?;
    }
}

/// Most random equations are solved (the proptest is not vacuous).
#[test]
fn random_equations_are_solved() {
    let solved = (0..50u64)
        .filter(|&seed| random_solve(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)) == Ok(true))
        .count();
    assert!(solved >= 40, "only {solved} of 50 solved");
}
