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
