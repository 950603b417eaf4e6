//! The seeded data generator for the arrays paper's benchmark shapes (issue 12,
//! deliverable 6): GMM points, a Naive Bayes corpus shaped like 20 Newsgroups, an LDA corpus
//! shaped like KOS, and ClinicalTrial and LinearRegression data, each drawn from the model
//! of its corpus program (`corpus/cases/18-*.hk` to `22-*.hk`) so the update programs'
//! priors are the generating process's. Deterministic from a seed: the draws are the loop
//! IR's own seeded samplers (`slic_codegen::sampler`, xoshiro256** and our own normal and
//! gamma), never a crate whose streams may change.
//!
//! [`Dataset::write`] saves a dataset as the JSON the update programs take (keys are their
//! parameter names, plus `truth`), large arrays as `.npy` files beside it. The example
//! `gen-data` is its command line; the benchmarks call it in process.
//!
//! Test and benchmark input only: nothing here is an algorithm of slic-cas, and it must
//! not become a second implementation of the models' inference.

use std::path::Path;

use serde_json::{json, Map, Value as Json};
use slic_codegen::sampler::Rng;
use slic_data::npy::{self, NpyArray};

/// Arrays longer than this go to `.npy` files; shorter ones stay in the JSON.
pub const INLINE_MAX: usize = 256;

/// Where the GMM's class means come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Means {
    /// Drawn from the prior `normal(0, 14)`, as in the paper (section 6.1): at K = 50 the
    /// classes overlap.
    Paper,
    /// Evenly spaced 10 standard deviations apart (in a shuffled order), `s` the spread's
    /// standard deviation: well-separated classes that Gibbs sampling recovers.
    Separated,
}

/// GMM data for `18-gmm-gibbs.hk` (`s`, `as`, `z`, `t`, `u`).
#[derive(Clone, Debug)]
pub struct Gmm {
    pub s: f64,
    pub as_: Vec<f64>,
    /// The initial state: uniform random labels.
    pub z: Vec<i64>,
    pub t: Vec<f64>,
    pub truth: Vec<i64>,
}

/// Naive Bayes data for `19-naive-bayes-gibbs.hk` (`topic_prior`, `word_prior`, `z`, `w`,
/// `doc`, `u`).
#[derive(Clone, Debug)]
pub struct NaiveBayes {
    pub topic_prior: Vec<f64>,
    pub word_prior: Vec<f64>,
    pub z: Vec<i64>,
    pub w: Vec<i64>,
    pub doc: Vec<i64>,
    pub truth: Vec<i64>,
}

/// LDA data for `20-lda-gibbs.hk` (`topic_prior`, `word_prior`, `numDocs`, `w`, `doc`,
/// `z`, `wordUpdate`).
#[derive(Clone, Debug)]
pub struct Lda {
    pub topic_prior: Vec<f64>,
    pub word_prior: Vec<f64>,
    pub num_docs: i64,
    pub w: Vec<i64>,
    pub doc: Vec<i64>,
    pub z: Vec<i64>,
    pub truth: Vec<i64>,
}

/// ClinicalTrial data for `21-clinical-trial.hk` (`n`, `control`, `treated`).
#[derive(Clone, Debug)]
pub struct Clinical {
    pub control: Vec<bool>,
    pub treated: Vec<bool>,
    pub truth: bool,
}

/// LinearRegression data for `22-linear-regression.hk` (`x`, `y`); `truth` is
/// `(invNoise, a, b)`.
#[derive(Clone, Debug)]
pub struct LinReg {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub truth: (f64, f64, f64),
}

/// One field of a dataset, typed as the program's parameter is.
#[derive(Clone, Debug)]
pub enum Field {
    Real(f64),
    Nat(i64),
    Reals(Vec<f64>),
    Nats(Vec<i64>),
    Bools(Vec<bool>),
    Json(Json),
}

/// A dataset: named fields in the program's parameter order, then `truth`.
#[derive(Clone, Debug)]
pub struct Dataset(pub Vec<(&'static str, Field)>);

/// 20 Newsgroups' shape: documents, vocabulary, tokens, topics.
pub const NEWSGROUPS: (usize, usize, usize, usize) = (19_997, 50_000, 2_600_000, 20);
/// KOS's shape (section 6.1), with the paper's 50 topics.
pub const KOS: (usize, usize, usize, usize) = (3_430, 6_906, 467_714, 50);

impl Gmm {
    /// `n` points from `k` classes; mixture weights from the flat Dirichlet.
    pub fn generate(n: usize, k: usize, means: Means, seed: u64) -> Gmm {
        let mut rng = Rng::seed_from_u64(seed);
        let k = k.max(1);
        let (s, mu): (f64, Vec<f64>) = match means {
            Means::Paper => (14.0, (0..k).map(|_| 14.0 * rng.normal()).collect()),
            Means::Separated => {
                let mut mu: Vec<f64> = (0..k)
                    .map(|c| 10.0 * (c as f64 - (k - 1) as f64 / 2.0))
                    .collect();
                shuffle(&mut mu, &mut rng);
                (10.0 * k as f64 / 12f64.sqrt(), mu)
            }
        };
        let as_ = vec![1.0; k];
        let theta = dirichlet(&as_, &mut rng);
        let cdf = cumulative(&theta);
        let truth: Vec<i64> = (0..n).map(|_| pick(&cdf, rng.uniform()) as i64).collect();
        let t = truth
            .iter()
            .map(|&c| mu[c as usize] + rng.normal())
            .collect();
        let z = (0..n).map(|_| below(&mut rng, k) as i64).collect();
        Gmm {
            s,
            as_,
            z,
            t,
            truth,
        }
    }

    pub fn dataset(&self) -> Dataset {
        Dataset(vec![
            ("s", Field::Real(self.s)),
            ("as", Field::Reals(self.as_.clone())),
            ("z", Field::Nats(self.z.clone())),
            ("t", Field::Reals(self.t.clone())),
            ("u", Field::Nat(0)),
            ("truth", Field::Nats(self.truth.clone())),
        ])
    }
}

impl NaiveBayes {
    /// `docs` documents of about `tokens / docs` tokens each (log-normal lengths, at least
    /// one) over a vocabulary of `vocab` words: a topic per document from a flat
    /// Dirichlet's mixture, a word per token from its topic's `dirichlet(word_prior)` distribution.
    pub fn generate(
        docs: usize,
        vocab: usize,
        tokens: usize,
        topics: usize,
        seed: u64,
    ) -> NaiveBayes {
        let mut rng = Rng::seed_from_u64(seed);
        let (topics, vocab) = (topics.max(1), vocab.max(1));
        let topic_prior = vec![1.0; topics];
        let word_prior = vec![0.1; vocab];
        let theta = dirichlet(&topic_prior, &mut rng);
        let phi: Vec<Vec<f64>> = (0..topics)
            .map(|_| cumulative(&dirichlet(&word_prior, &mut rng)))
            .collect();
        let topic_cdf = cumulative(&theta);
        let truth: Vec<i64> = (0..docs)
            .map(|_| pick(&topic_cdf, rng.uniform()) as i64)
            .collect();
        let lengths = lengths(docs, tokens, &mut rng);
        let total = lengths.iter().sum();
        let (mut w, mut doc) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (d, &len) in lengths.iter().enumerate() {
            let cdf = &phi[truth[d] as usize];
            for _ in 0..len {
                w.push(pick(cdf, rng.uniform()) as i64);
                doc.push(d as i64);
            }
        }
        let z = (0..docs).map(|_| below(&mut rng, topics) as i64).collect();
        NaiveBayes {
            topic_prior,
            word_prior,
            z,
            w,
            doc,
            truth,
        }
    }

    pub fn dataset(&self) -> Dataset {
        Dataset(vec![
            ("topic_prior", Field::Reals(self.topic_prior.clone())),
            ("word_prior", Field::Reals(self.word_prior.clone())),
            ("z", Field::Nats(self.z.clone())),
            ("w", Field::Nats(self.w.clone())),
            ("doc", Field::Nats(self.doc.clone())),
            ("u", Field::Nat(0)),
            ("truth", Field::Nats(self.truth.clone())),
        ])
    }
}

impl Lda {
    /// `docs` documents of about `tokens / docs` tokens each over `vocab` words: per
    /// document a topic mixture from `dirichlet(topic_prior)`, per token a topic from it and
    /// a word from that topic's `dirichlet(word_prior)` distribution.
    pub fn generate(docs: usize, vocab: usize, tokens: usize, topics: usize, seed: u64) -> Lda {
        let mut rng = Rng::seed_from_u64(seed);
        let (topics, vocab) = (topics.max(1), vocab.max(1));
        let topic_prior = vec![0.5; topics];
        let word_prior = vec![0.1; vocab];
        let phi: Vec<Vec<f64>> = (0..topics)
            .map(|_| cumulative(&dirichlet(&word_prior, &mut rng)))
            .collect();
        let lengths = lengths(docs, tokens, &mut rng);
        let total = lengths.iter().sum();
        let (mut w, mut doc, mut truth) = (
            Vec::with_capacity(total),
            Vec::with_capacity(total),
            Vec::with_capacity(total),
        );
        for (d, &len) in lengths.iter().enumerate() {
            let theta = cumulative(&dirichlet(&topic_prior, &mut rng));
            for _ in 0..len {
                let c = pick(&theta, rng.uniform());
                truth.push(c as i64);
                w.push(pick(&phi[c], rng.uniform()) as i64);
                doc.push(d as i64);
            }
        }
        let z = (0..total).map(|_| below(&mut rng, topics) as i64).collect();
        Lda {
            topic_prior,
            word_prior,
            num_docs: docs as i64,
            w,
            doc,
            z,
            truth,
        }
    }

    pub fn dataset(&self) -> Dataset {
        Dataset(vec![
            ("topic_prior", Field::Reals(self.topic_prior.clone())),
            ("word_prior", Field::Reals(self.word_prior.clone())),
            ("numDocs", Field::Nat(self.num_docs)),
            ("w", Field::Nats(self.w.clone())),
            ("doc", Field::Nats(self.doc.clone())),
            ("z", Field::Nats(self.z.clone())),
            ("wordUpdate", Field::Nat(0)),
            ("truth", Field::Nats(self.truth.clone())),
        ])
    }
}

impl Clinical {
    /// `n` patients per group, from the model: the treatment is effective with
    /// probability 1/2, success probabilities uniform (one per group if effective, else one
    /// shared).
    pub fn generate(n: usize, seed: u64) -> Clinical {
        let mut rng = Rng::seed_from_u64(seed);
        let truth = rng.uniform() < 0.5;
        let (pc, pt) = if truth {
            (rng.uniform(), rng.uniform())
        } else {
            let p = rng.uniform();
            (p, p)
        };
        let control = (0..n).map(|_| rng.uniform() < pc).collect();
        let treated = (0..n).map(|_| rng.uniform() < pt).collect();
        Clinical {
            control,
            treated,
            truth,
        }
    }

    pub fn dataset(&self) -> Dataset {
        Dataset(vec![
            ("n", Field::Nat(self.control.len() as i64)),
            ("control", Field::Bools(self.control.clone())),
            ("treated", Field::Bools(self.treated.clone())),
            ("truth", Field::Json(json!({ "isEffective": self.truth }))),
        ])
    }
}

impl LinReg {
    /// `n` points from the model: `invNoise ~ gamma(1, 1)`, `a ~ normal(0, 1/sqrt(invNoise))`,
    /// `b ~ normal(5, sqrt(10/3)/sqrt(invNoise))`, `x[i] ~ normal(0, 1)`,
    /// `y[i] ~ normal(a x[i] + b, 1/sqrt(invNoise))`.
    pub fn generate(n: usize, seed: u64) -> LinReg {
        let mut rng = Rng::seed_from_u64(seed);
        let inv_noise = rng.ln_gamma(1.0).map_or(1.0, f64::exp);
        let sd = 1.0 / inv_noise.sqrt();
        let a = sd * rng.normal();
        let b = 5.0 + (10.0f64 / 3.0).sqrt() * sd * rng.normal();
        let x: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let y = x.iter().map(|&xi| a * xi + b + sd * rng.normal()).collect();
        LinReg {
            x,
            y,
            truth: (inv_noise, a, b),
        }
    }

    pub fn dataset(&self) -> Dataset {
        let (inv_noise, a, b) = self.truth;
        Dataset(vec![
            ("x", Field::Reals(self.x.clone())),
            ("y", Field::Reals(self.y.clone())),
            (
                "truth",
                Field::Json(json!({ "invNoise": inv_noise, "a": a, "b": b })),
            ),
        ])
    }
}

impl Dataset {
    /// Writes `dir/data.json` and, for arrays longer than [`INLINE_MAX`], `dir/KEY.npy`
    /// (reals `<f8`, nats `<u8`, booleans `|b1`) referenced as `{"npy": "KEY.npy"}`.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut obj = Map::new();
        for (key, field) in &self.0 {
            let array = match field {
                Field::Reals(v) if v.len() > INLINE_MAX => Some(NpyArray::F64(v.clone())),
                Field::Nats(v) if v.len() > INLINE_MAX => {
                    Some(NpyArray::U64(v.iter().map(|&x| x.max(0) as u64).collect()))
                }
                Field::Bools(v) if v.len() > INLINE_MAX => Some(NpyArray::Bool(v.clone())),
                _ => None,
            };
            let value = match (array, field) {
                (Some(a), _) => {
                    let file = format!("{key}.npy");
                    npy::write_file(&dir.join(&file), &a)?;
                    json!({ "npy": file })
                }
                (None, Field::Real(x)) => json!(x),
                (None, Field::Nat(x)) => json!(x),
                (None, Field::Reals(v)) => json!(v),
                (None, Field::Nats(v)) => json!(v),
                (None, Field::Bools(v)) => json!(v),
                (None, Field::Json(j)) => j.clone(),
            };
            obj.insert((*key).to_string(), value);
        }
        let text = serde_json::to_string_pretty(&Json::Object(obj))?;
        std::fs::write(dir.join("data.json"), text + "\n")
    }
}

/// A Dirichlet draw, normalised in log space (shapes below 1 underflow in linear space).
pub fn dirichlet(alpha: &[f64], rng: &mut Rng) -> Vec<f64> {
    let logs: Vec<f64> = alpha
        .iter()
        .map(|&a| rng.ln_gamma(a).unwrap_or(f64::NEG_INFINITY))
        .collect();
    let m = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lin: Vec<f64> = logs.iter().map(|&l| (l - m).exp()).collect();
    let total: f64 = lin.iter().sum();
    lin.iter().map(|&x| x / total).collect()
}

/// The running sums of probabilities (the last one is the total).
fn cumulative(p: &[f64]) -> Vec<f64> {
    p.iter()
        .scan(0.0, |acc, &x| {
            *acc += x;
            Some(*acc)
        })
        .collect()
}

/// The index whose cumulative interval holds `u` times the total (binary search).
fn pick(cdf: &[f64], u: f64) -> usize {
    let target = u * cdf.last().copied().unwrap_or(0.0);
    cdf.partition_point(|&c| c <= target)
        .min(cdf.len().saturating_sub(1))
}

/// A uniform integer below `k > 0`.
fn below(rng: &mut Rng, k: usize) -> usize {
    ((rng.uniform() * k as f64) as usize).min(k - 1)
}

fn shuffle<T>(v: &mut [T], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, below(rng, i + 1));
    }
}

/// Document lengths, log-normal around `tokens / docs` (a spread like real corpora's), at
/// least one token each.
fn lengths(docs: usize, tokens: usize, rng: &mut Rng) -> Vec<usize> {
    let mean = (tokens as f64 / docs.max(1) as f64).max(1.0);
    let sigma: f64 = 0.8;
    let mu = mean.ln() - sigma * sigma / 2.0;
    (0..docs)
        .map(|_| ((mu + sigma * rng.normal()).exp().round() as usize).max(1))
        .collect()
}
