//! Unproduct's specification checked by evaluation: `e = rest · Π_{i<k} g(i, x[i])` on
//! random arrays and label arrays, for the shapes of the paper (direct and indirect
//! indexing, the stick-breaking products of eq. (13), guards) and a fallback.

use std::rc::Rc;

use super::*;
use crate::eval::{eval_f64_value, Value};
use crate::front;

/// The body of `text` (a chain of `fn`s) and its parameters, outermost first.
fn load(store: &mut Store, text: &str) -> (TermId, Vec<VarId>) {
    let mut t = front::load(store, text).expect("loads");
    let mut params = Vec::new();
    while let Node::Lam(v, b) = *store.node(t) {
        params.push(v);
        t = b;
    }
    (t, params)
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
    fn below(&mut self, n: usize) -> usize {
        ((self.next() * n as f64) as usize).min(n.saturating_sub(1))
    }
}

fn num(v: Option<Value<f64>>) -> f64 {
    match v {
        Some(Value::Num(x)) => x,
        other => panic!("not a number: {other:?}"),
    }
}

/// Checks the specification on `tries` random environments. Parameters: `k` (the array
/// size), `x` (the array), then arrays named in `labels` (values below k) or reals.
fn check(text: &str, must_split: bool) {
    let mut store = Store::new();
    let (e, params) = load(&mut store, text);
    let (k, x) = (params[0], params[1]);
    let kt = store.var_term(k);
    let u = unproduct(&mut store, &Context::new(), e, x, kt).expect("splits");
    assert!(!vars::mentions(&store, u.body, x), "g mentions x");
    if must_split {
        assert!(
            !vars::mentions(&store, u.rest, x),
            "rest mentions x: {}",
            crate::print::print_term(&store, u.rest)
        );
    }
    let mut rng = Lcg(7);
    for _ in 0..40 {
        let size = rng.below(4);
        let mut env: Vec<(VarId, Value<f64>)> = vec![(k, Value::Num(size as f64))];
        let xs: Vec<Value<f64>> = (0..size)
            .map(|_| Value::Num(0.05 + 0.9 * rng.next()))
            .collect();
        env.push((x, Value::Array(Rc::from(xs.clone()))));
        for &p in &params[2..] {
            let name = store.var_name(p).to_string();
            let n = rng.below(5);
            let vals: Vec<Value<f64>> = if name.starts_with('y') {
                if size == 0 {
                    Vec::new()
                } else {
                    (0..n).map(|_| Value::Num(rng.below(size) as f64)).collect()
                }
            } else {
                (0..n).map(|_| Value::Num(2.0 * rng.next() - 1.0)).collect()
            };
            env.push((p, Value::Array(Rc::from(vals))));
        }
        let lookup = |env: &Vec<(VarId, Value<f64>)>, v: VarId| {
            env.iter()
                .find(|(w, _)| *w == v)
                .map(|(_, val)| val.clone())
        };
        let lhs = num(eval_f64_value(&store, e, &|v| lookup(&env, v)));
        let mut rhs = num(eval_f64_value(&store, u.rest, &|v| lookup(&env, v)));
        for (i, xi) in xs.iter().enumerate() {
            let mut env2 = env.clone();
            env2.push((u.index, Value::Num(i as f64)));
            env2.push((u.elem, xi.clone()));
            rhs *= num(eval_f64_value(&store, u.body, &|v| lookup(&env2, v)));
        }
        assert!(
            (lhs - rhs).abs() <= 1e-9 * lhs.abs().max(1.0),
            "{text}: {lhs} != {rhs} (size {size})\ng = {}",
            crate::print::print_term(&store, u.body)
        );
    }
}

#[test]
fn indirect_indexing_groups_by_class() {
    // eq. (11): the points of class i
    check(
        "fn k nat: fn x array(real): fn y array(nat): fn s array(real):\n\
         exp(summate j from 0 to int2nat(min(size(y), size(s))): s[j] * x[y[j]] - x[y[j]] ^ 2 / 2)",
        true,
    );
}

#[test]
fn direct_indexing_is_the_product_itself() {
    check(
        "fn k nat: fn x array(real): fn t array(real):\n\
         product i from 0 to k: exp(-(x[i] - 1/2) ^ 2) * real2prob(x[i])",
        true,
    );
}

#[test]
fn stick_breaking_products_become_powers() {
    // eq. (13) -> (14): Π_j Π_{q < y[j]} x[q]
    check(
        "fn k nat: fn x array(prob): fn y array(nat):\n\
         product j from 0 to size(y): product q from 0 to y[j]: x[q]",
        true,
    );
}

#[test]
fn guards_free_of_the_array_split_the_term() {
    check(
        "fn k nat: fn x array(prob): fn y array(nat):\n\
         product j from 0 to size(y): if y[j] + 1 < k: real2prob(1 - x[y[j]]) else: 1",
        true,
    );
}

#[test]
fn several_indices_in_one_sum_fall_back() {
    check(
        "fn k nat: fn x array(prob): fn y array(nat):\n\
         (if 1 < k: x[0] + x[1] else: 1) * (if 0 < k: x[0] else: 1)",
        false,
    );
}

/// Issue 10, corpus case 19: a Gibbs label `if j == u: a else: y[j]` (here u is
/// `size(s)`, a nat the check draws) read as a loop bound and an index is lifted out of
/// the read, so the counts are over the points other than u plus u's own term, with no
/// difference of counts (which a beta's parameter could not be proved positive with).
#[test]
fn a_gibbs_label_is_lifted_out_of_bounds_and_indices() {
    let text = "fn k nat: fn x array(prob): fn y array(nat): fn s array(real):\n\
         product j from 0 to size(y): (product q from 0 to (if j == size(s): 0 else: y[j]): x[q])\n\
             * (if (if j == size(s): 0 else: y[j]) + 1 < k: real2prob(1 - x[if j == size(s): 0 else: y[j]]) else: 1)";
    check(text, true);
    let mut store = Store::new();
    let (e, params) = load(&mut store, text);
    let kt = store.var_term(params[0]);
    let u = unproduct(&mut store, &Context::new(), e, params[1], kt).expect("splits");
    let g = crate::print::print_term(&store, u.body);
    // every count is over `j /= u`, u's own term a guard (no `if` left inside a count)
    assert_eq!(
        g,
        "x_i ** (summate j from 0 to size(y): if i + 1 <= y[j] && j /= size(s): 1 else: 0)\n    * (if i + 2 <= k: real2prob(-x_i + 1) else: 1) ** (summate j from 0 to size(y):\n                                                           if i == y[j] && j /= size(s):\n                                                               1\n                                                           else:\n                                                               0)\n    * (if i + 2 <= k && size(s) + 1 <= size(y) && i == 0: real2prob(-x_i + 1) else: 1)\n"
    );
}
