//! A generator of random small *array models*, for the simplifier's property test on
//! plates (issue 10): `.hk` programs over a symbolic number of points `n`, a number of
//! classes `k`, a label array `y` (one label below `k` per point) and a data array `t`
//! (one real per point), built from one to three blocks, each a latent variable and the
//! observations that depend on it:
//! - conjugate bodies: a plate of normal means observed at `t[j]` (in its own plate, or
//!   inside the plate that draws it), beta biases observed through the categorical that
//!   defines a Bernoulli, gamma rates observed through a Poisson, a scalar normal observed
//!   by every point (case 12's shape);
//! - non-conjugate ones: a logistic factor of a latent plate, a latent log-scale;
//! - latent arrays used at `x[j]` (one per point) and at `x[y[j]]` (one per class, reached
//!   through the random labels), and nested plates (`plate i of n: plate c of k: ...`).
//!
//! The model returns one latent array or scalar (or a pair of two). Every model is well
//! typed, and a measure for every argument tuple of [`args`] (labels below `k`, `t` and
//! `y` of size `n`): distribution parameters are positive by construction.
//!
//! As in `models`, generation reads a *choice sequence* of bytes (0 past its end), option 0
//! of every decision is the simplest, and the generator writes text, so a failing model
//! prints as a program one can paste into `slic-cas equiv`. It must not depend on the
//! simplifier it tests.

use std::fmt;

use proptest::prelude::*;
use slic_semantics::{Rng, Value};

use crate::models::Chooser;

/// A generated array model: its program text (parameters `n`, `k`, `y`, `t`).
#[derive(Clone)]
pub struct ArrayModel {
    pub text: String,
}

impl fmt::Debug for ArrayModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArrayModel:\n{}", self.text)
    }
}

/// Random array models from random choice sequences.
pub fn arb_array_model() -> impl Strategy<Value = ArrayModel> {
    prop::collection::vec(any::<u8>(), 0..24).prop_map(|bytes| array_model_from_choices(&bytes))
}

const MEANS: [&str; 3] = ["0", "1/2", "-1"];
const SCALES: [&str; 3] = ["1", "2", "1/2"];
const SHAPES: [&str; 3] = ["2", "1", "3"];

/// One block: the statements that draw latent `x` and observe through it.
fn block(c: &mut Chooser<'_>, x: &str) -> String {
    match c.pick(9) {
        // a point's mean, observed in its own plate (eq. (9)'s shape)
        1 => {
            let (m, s) = (c.one_of(&MEANS), c.one_of(&SCALES));
            format!(
                "{x} <~ plate i of n: normal({m}, {s})\n\
                 _ <~ plate j of n: observe(normal({x}[j], 1), t[j])\n"
            )
        }
        // one mean per class, observed through the labels (eq. (11)'s grouping)
        2 => {
            let (m, s) = (c.one_of(&MEANS), c.one_of(&SCALES));
            format!(
                "{x} <~ plate c of k: normal({m}, {s})\n\
                 _ <~ plate j of n: observe(normal({x}[y[j]], 1), t[j])\n"
            )
        }
        // one bias per class, a Bernoulli (index 0 = true) of the sign of t[j]
        3 => {
            let (a, b) = (c.one_of(&SHAPES), c.one_of(&SHAPES));
            format!(
                "{x} <~ plate c of k: beta({a}, {b})\n\
                 _ <~ plate j of n: observe(categorical([{x}[y[j]], real2prob(1 - {x}[y[j]])]), if t[j] < 0: 0 else: 1)\n"
            )
        }
        // a rate per point, the label read as a count
        4 => {
            let (a, b) = (c.one_of(&SHAPES), c.one_of(&SCALES));
            format!(
                "{x} <~ plate i of n: gamma({a}, {b})\n\
                 _ <~ plate j of n: observe(poisson({x}[j]), y[j])\n"
            )
        }
        // a scalar mean observed by every point (case 12)
        5 => {
            let s = c.one_of(&SCALES);
            format!(
                "{x} <~ normal(0, {s})\n\
                 _ <~ plate j of n: observe(normal({x}, 1), t[j])\n"
            )
        }
        // non-conjugate: a logistic factor on each point's latent
        6 => format!(
            "{x} <~ plate i of n: normal(0, 1)\n\
             _ <~ plate j of n: factor(recip(1 + exp(-({x}[j] * t[j]))))\n"
        ),
        // non-conjugate: a latent log-scale shared by the points
        7 => format!(
            "{x} <~ normal(0, 1/2)\n\
             _ <~ plate j of n: observe(normal(0, exp({x} / 2)), t[j])\n"
        ),
        // nested plates: a mean per point and class, observed at t[i] + c
        8 => {
            let m = c.one_of(&MEANS);
            format!(
                "{x} <~ plate i of n: plate c of k: normal({m}, 1)\n\
                 _ <~ plate i of n: plate c of k: observe(normal({x}[i][c], 1), t[i] + c)\n"
            )
        }
        // a point's mean observed inside the plate that draws it (eq. (10)'s fused shape)
        _ => {
            let (m, s) = (c.one_of(&MEANS), c.one_of(&SCALES));
            format!(
                "{x} <~ plate i of n:\n    v <~ normal({m}, {s})\n    _ <~ observe(normal(v, 1), t[i])\n    return v\n"
            )
        }
    }
}

/// The model a choice sequence describes (see the module doc).
pub fn array_model_from_choices(bytes: &[u8]) -> ArrayModel {
    let mut c = Chooser::new(bytes);
    let mut text = String::from("fn n nat:\nfn k nat:\nfn y array(nat):\nfn t array(real):\n");
    let blocks = 1 + c.pick(3);
    for b in 0..blocks {
        text.push_str(&block(&mut c, &format!("x{b}")));
    }
    let first = c.pick(blocks);
    let ret = if blocks > 1 && c.pick(3) == 2 {
        let second = (first + 1 + c.pick(blocks - 1)) % blocks;
        format!("(x{first}, x{second})")
    } else {
        format!("x{first}")
    };
    text.push_str(&format!("return {ret}\n"));
    ArrayModel { text }
}

/// An argument tuple `[n, k, y, t]` for the models: `n` points with labels below `k` and
/// reals of moderate size (so sampled weights stay well conditioned).
pub fn args(n: u64, k: u64, rng: &mut Rng) -> Vec<Value> {
    let labels = (0..n)
        .map(|_| Value::Nat(if k == 0 { 0 } else { rng.below(k) }))
        .collect();
    let data = (0..n).map(|_| Value::Real(1.5 * rng.normal())).collect();
    vec![
        Value::Nat(n),
        Value::Nat(k),
        Value::array(labels),
        Value::array(data),
    ]
}

/// The argument tuples a model is judged on: no points and no classes, one point of one
/// class, and two or three points among two or three classes.
pub fn judged_args(rng: &mut Rng) -> Vec<Vec<Value>> {
    let n = 2 + rng.below(2);
    let k = 2 + rng.below(2);
    vec![args(0, 0, rng), args(1, 1, rng), args(n, k, rng)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_choice_sequence_is_the_simplest_model() {
        let m = array_model_from_choices(&[]);
        assert_eq!(
            m.text,
            "fn n nat:\nfn k nat:\nfn y array(nat):\nfn t array(real):\n\
             x0 <~ plate i of n:\n    v <~ normal(0, 1)\n    _ <~ observe(normal(v, 1), t[i])\n    return v\n\
             return x0\n"
        );
    }

    #[test]
    fn every_block_loads() {
        for b in 0..9u8 {
            let m = array_model_from_choices(&[1, b, 0, 0, 0]);
            let mut store = slic_algebra::Store::new();
            if let Err(ds) = slic_algebra::front::load(&mut store, &m.text) {
                panic!(
                    "{}\n{:?}",
                    m.text,
                    ds.iter().map(|d| &d.message).collect::<Vec<_>>()
                );
            }
        }
    }
}
