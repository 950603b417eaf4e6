//! Random arguments of the Gibbs update programs the tests run (the GMM of case 18, the
//! Naive Bayes of case 19, the LDA of case 20, the two mixtures of `corpus/gibbs/`), in
//! their parameter order, labels below `k`, the index 0; and a uniform integer below
//! `k` from the IR's own generator. Small shapes for the interpreter: data of the
//! benchmarks' shapes come from `datagen`.

use slic_codegen::sampler::Rng;
use slic_codegen::Val;

/// Arguments of `n` points (or documents, or tokens) and `k` classes.
pub type Args = fn(usize, usize, &mut Rng) -> Vec<Val>;

/// A uniform integer below `k > 0`.
pub fn below(rng: &mut Rng, k: usize) -> u64 {
    ((rng.uniform() * k as f64) as u64).min(k as u64 - 1)
}

/// `k` probs uniform in `[lo, lo + spread)`.
pub fn probs(k: usize, lo: f64, spread: f64, rng: &mut Rng) -> Val {
    Val::array(
        (0..k)
            .map(|_| Val::prob(lo + spread * rng.uniform()))
            .collect(),
    )
}

/// `n` nats below `k`.
pub fn nats(n: usize, k: usize, rng: &mut Rng) -> Val {
    Val::array((0..n).map(|_| Val::Nat(below(rng, k))).collect())
}

/// The GMM update (case 18): `s`, `as`, `z`, `t`, `u`.
pub fn gmm(n: usize, k: usize, rng: &mut Rng) -> Vec<Val> {
    vec![
        Val::prob(0.5 + 3.0 * rng.uniform()),
        probs(k, 0.2, 1.0, rng),
        nats(n, k, rng),
        Val::array(
            (0..n)
                .map(|_| Val::Real(10.0 * rng.uniform() - 5.0))
                .collect(),
        ),
        Val::Nat(0),
    ]
}

/// The Poisson mixture of `corpus/gibbs/`.
pub fn poisson(n: usize, k: usize, rng: &mut Rng) -> Vec<Val> {
    vec![
        probs(k, 0.2, 1.0, rng),
        Val::prob(0.5 + 2.0 * rng.uniform()),
        Val::prob(0.5 + 2.0 * rng.uniform()),
        nats(n, k, rng),
        nats(n, 12, rng),
        Val::Nat(0),
    ]
}

/// The exponential mixture of `corpus/gibbs/`.
pub fn exponential(n: usize, k: usize, rng: &mut Rng) -> Vec<Val> {
    vec![
        probs(k, 0.2, 1.0, rng),
        Val::prob(1.0 + 2.0 * rng.uniform()),
        Val::prob(0.5 + 2.0 * rng.uniform()),
        nats(n, k, rng),
        probs(n, 0.05, 4.0, rng),
        Val::Nat(0),
    ]
}

/// The Naive Bayes update (case 19): `n` documents over `k` topics, 5 words, 3 tokens
/// a document on average.
pub fn naive_bayes(n: usize, k: usize, rng: &mut Rng) -> Vec<Val> {
    let tokens = 3 * n;
    vec![
        probs(k, 0.2, 1.0, rng),
        probs(5, 0.05, 0.5, rng),
        nats(n, k, rng),
        nats(tokens, 5, rng),
        nats(tokens, n, rng),
        Val::Nat(0),
    ]
}

/// The LDA update (case 20): `n` tokens over 3 documents, `k` topics, 4 words.
pub fn lda(n: usize, k: usize, rng: &mut Rng) -> Vec<Val> {
    vec![
        probs(k, 0.2, 1.0, rng),
        probs(4, 0.05, 0.5, rng),
        Val::Nat(3),
        nats(n, 4, rng),
        nats(n, 3, rng),
        nats(n, k, rng),
        Val::Nat(0),
    ]
}
