//! `gen-data`: writes a seeded dataset of one of the arrays paper's benchmark shapes as the
//! JSON (and `.npy` files) that the update programs of `corpus/cases/18-*.hk` to `22-*.hk`
//! take, for `slic-cas gibbs` and `slic-cas run` (issue 12, deliverable 6).
//!
//! ```text
//! cargo run --release --example gen-data -- --shape gmm --n 10000 --k 50 --seed 1 --out DIR
//! ```
//!
//! A thin command line over `slic_suite::datagen` (see `benches/README.md`): it parses
//! flags, draws and writes, and holds no generation logic of its own.

use std::path::PathBuf;
use std::process::ExitCode;

use slic_suite::datagen::{Clinical, Gmm, Lda, LinReg, Means, NaiveBayes, KOS, NEWSGROUPS};

const USAGE: &str = "usage: gen-data --shape gmm|nb|lda|clinical|linreg --out DIR [--seed S]
  gmm:      [--n 10000] [--k 50] [--means separated|paper]
  nb:       [--docs 19997] [--vocab 50000] [--tokens 2600000] [--k 20]
  lda:      [--docs 3430] [--vocab 6906] [--tokens 467714] [--k 50]
  clinical: [--n 10000]
  linreg:   [--n 10000]";

struct Options {
    shape: String,
    out: PathBuf,
    seed: u64,
    n: Option<usize>,
    k: Option<usize>,
    docs: Option<usize>,
    vocab: Option<usize>,
    tokens: Option<usize>,
    means: Means,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        shape: String::new(),
        out: PathBuf::new(),
        seed: 1,
        n: None,
        k: None,
        docs: None,
        vocab: None,
        tokens: None,
        means: Means::Separated,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .as_str();
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: '{value}' is not a non-negative integer"))
        };
        match flag.as_str() {
            "--shape" => o.shape = value.to_string(),
            "--out" => o.out = PathBuf::from(value),
            "--seed" => o.seed = number()?,
            "--n" => o.n = Some(number()? as usize),
            "--k" => o.k = Some(number()? as usize),
            "--docs" => o.docs = Some(number()? as usize),
            "--vocab" => o.vocab = Some(number()? as usize),
            "--tokens" => o.tokens = Some(number()? as usize),
            "--means" => {
                o.means = match value {
                    "separated" => Means::Separated,
                    "paper" => Means::Paper,
                    _ => return Err(format!("--means: '{value}' is not separated or paper")),
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if o.out.as_os_str().is_empty() {
        return Err("--out DIR is required".into());
    }
    if o.k == Some(0) {
        return Err("--k must be at least 1".into());
    }
    Ok(o)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("gen-data: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let started = std::time::Instant::now();
    let corpus = |(docs, vocab, tokens, k): (usize, usize, usize, usize)| {
        (
            o.docs.unwrap_or(docs),
            o.vocab.unwrap_or(vocab),
            o.tokens.unwrap_or(tokens),
            o.k.unwrap_or(k),
        )
    };
    let (data, what) = match o.shape.as_str() {
        "gmm" => {
            let (n, k) = (o.n.unwrap_or(10_000), o.k.unwrap_or(50));
            let g = Gmm::generate(n, k, o.means, o.seed);
            (g.dataset(), format!("GMM, {n} points, {k} classes"))
        }
        "nb" => {
            let (d, v, t, k) = corpus(NEWSGROUPS);
            let g = NaiveBayes::generate(d, v, t, k, o.seed);
            let what = format!(
                "Naive Bayes, {d} documents, {} tokens, {v} words, {k} topics",
                g.w.len()
            );
            (g.dataset(), what)
        }
        "lda" => {
            let (d, v, t, k) = corpus(KOS);
            let g = Lda::generate(d, v, t, k, o.seed);
            let what = format!(
                "LDA, {d} documents, {} tokens, {v} words, {k} topics",
                g.w.len()
            );
            (g.dataset(), what)
        }
        "clinical" => {
            let n = o.n.unwrap_or(10_000);
            (
                Clinical::generate(n, o.seed).dataset(),
                format!("ClinicalTrial, {n} patients per group"),
            )
        }
        "linreg" => {
            let n = o.n.unwrap_or(10_000);
            (
                LinReg::generate(n, o.seed).dataset(),
                format!("LinearRegression, {n} points"),
            )
        }
        other => {
            eprintln!("gen-data: unknown --shape '{other}'\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = data.write(&o.out) {
        eprintln!("gen-data: cannot write {}: {e}", o.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "{what}: {} in {:.2} s",
        o.out.join("data.json").display(),
        started.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}
