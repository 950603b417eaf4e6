//! The lowering pipeline on the corpus (issue 11): every program of `corpus/cases/` (inputs
//! and their simplified outputs), `corpus/simplify/` and `corpus/examples/` goes through
//! the term-level passes (the point split and histogram transform; A-normal form, LICM and
//! sharing) with every ablation setting, and each stage
//! - verifies and keeps the input's type (checked by `term_stages` itself);
//! - prints to text that loads back alpha-equivalently;
//! - means the input (`slic_semantics::compare`) on the `# args:` example and random
//!   argument tuples (array cases: all of those of the simplifier's test, respecting
//!   `# assume:`, sizes 0 and 1 steered for; scalar programs: the example and one):
//!   never Different, and most comparisons decided.

use std::path::{Path, PathBuf};

use slic_algebra::{alpha, front, print, Store, TermId};
use slic_codegen::{term_stages, Passes};
use slic_semantics::{compare, CompareConfig, Value, Verdict};
use slic_suite::cases::{args_json, argument_tuples, case_number, is_input, short, Kind};
use slic_suite::{corpus_files, with_big_stack};

/// A program to lower: the file, the text whose headers give its arguments (the input's,
/// for a simplified output), and the harness kind.
struct Program {
    path: PathBuf,
    headers: PathBuf,
    kind: Kind,
}

fn programs() -> Vec<Program> {
    let mut out = Vec::new();
    for p in corpus_files("cases")
        .into_iter()
        .chain(corpus_files("simplify"))
        .chain(corpus_files("examples"))
    {
        let name = p.to_string_lossy().into_owned();
        if name.ends_with(".expected.hk") {
            continue;
        }
        let kind = if name.contains("/cases/") && case_number(&p).is_some_and(|n| n >= 11) {
            Kind::Array
        } else {
            Kind::Scalar
        };
        let headers = if is_input(&p) {
            p.clone()
        } else {
            PathBuf::from(name.replace(".simplified.hk", ".hk"))
        };
        out.push(Program {
            path: p,
            headers,
            kind,
        });
    }
    assert!(out.len() >= 100, "the corpus lost programs: {}", out.len());
    out
}

fn judge() -> CompareConfig {
    CompareConfig {
        seed: 7,
        max_depth: 20_000,
        ..CompareConfig::default()
    }
}

/// The ablation settings every stage is checked under (fusion acts on the loop IR only).
const SETTINGS: [(&str, Passes); 3] = [
    (
        "all passes",
        Passes {
            histogram: true,
            licm: true,
            fusion: true,
        },
    ),
    (
        "--no-histogram",
        Passes {
            histogram: false,
            licm: true,
            fusion: true,
        },
    ),
    (
        "--no-licm",
        Passes {
            histogram: true,
            licm: false,
            fusion: true,
        },
    ),
];

#[derive(Default)]
struct Report {
    equal: usize,
    unknown: Vec<String>,
    failures: Vec<String>,
}

fn check_program(p: &Program, report: &mut Report) {
    let name = short(&p.path);
    let (Ok(text), Ok(head)) = (
        std::fs::read_to_string(&p.path),
        std::fs::read_to_string(&p.headers),
    ) else {
        return report.failures.push(format!("{name}: cannot read"));
    };
    let mut store = Store::new();
    let Ok(t) = front::load(&mut store, &text) else {
        return report.failures.push(format!("{name}: does not load"));
    };
    let mut tuples = match argument_tuples(&store, t, &p.headers, &head, p.kind) {
        Ok(ts) => ts.tuples,
        Err(e) => return report.failures.push(format!("{name}: arguments: {e}")),
    };
    // a scalar program: its example and one random tuple (the simplifier's test runs
    // more; here the passes change loops, which array programs have)
    if p.kind == Kind::Scalar {
        tuples.truncate(2);
    }
    let started = std::time::Instant::now();
    // a stage equal to one already judged (up to bound names) is not judged again
    let mut judged = vec![t];
    for (setting, passes) in SETTINGS {
        let stages = match term_stages(&mut store, t, passes) {
            Ok(s) => s,
            Err(e) => return report.failures.push(format!("{name} ({setting}): {e}")),
        };
        for (stage, s) in [("summarized", stages.summarized), ("anf", stages.anf)] {
            if judged.iter().any(|&j| alpha::alpha_eq(&store, j, s)) {
                continue;
            }
            judged.push(s);
            check_stage(
                &mut store,
                t,
                s,
                &tuples,
                &format!("{name} {stage} ({setting})"),
                report,
            );
        }
    }
    if std::env::var_os("SLIC_TIMINGS").is_some() {
        eprintln!("{:>9.1} ms {name}", started.elapsed().as_secs_f64() * 1e3);
    }
}

fn check_stage(
    store: &mut Store,
    t: TermId,
    s: TermId,
    tuples: &[Vec<Value>],
    what: &str,
    report: &mut Report,
) {
    let printed = print::print_term(store, s);
    match front::load(store, &printed) {
        Ok(back) if alpha::alpha_eq(store, s, back) => {}
        _ => {
            return report.failures.push(format!(
                "{what}: the printed stage does not load back\n{printed}"
            ))
        }
    }
    for args in tuples {
        match compare(store, t, s, args, &judge()) {
            Verdict::Equal { .. } | Verdict::NoDifferenceFound { .. } => report.equal += 1,
            Verdict::Unknown { why } => report
                .unknown
                .push(format!("{what} on {}: {why}", args_json(args))),
            d @ Verdict::Different { .. } => report.failures.push(format!(
                "{what}: the meaning changed on {}: {d}\n{printed}",
                args_json(args)
            )),
        }
    }
}

fn check_all(filter: fn(&Path) -> bool) {
    let report = with_big_stack(move || {
        let mut report = Report::default();
        for p in programs().iter().filter(|p| filter(&p.path)) {
            check_program(p, &mut report);
        }
        report
    });
    assert!(
        report.failures.is_empty(),
        "{} failures:\n\n{}",
        report.failures.len(),
        report.failures.join("\n\n")
    );
    let total = report.equal + report.unknown.len();
    eprintln!(
        "{} of {total} comparisons equal, {} unknown:\n{}",
        report.equal,
        report.unknown.len(),
        report.unknown.join("\n")
    );
    assert!(
        report.equal * 10 >= total * 9,
        "only {} of {total} comparisons decided",
        report.equal
    );
}

fn is_array_case(p: &Path) -> bool {
    p.to_string_lossy().contains("/cases/") && case_number(p).is_some_and(|n| n >= 11)
}

#[test]
fn term_passes_keep_the_meaning_of_every_array_case() {
    check_all(is_array_case);
}

#[test]
fn term_passes_keep_the_meaning_of_every_scalar_program() {
    check_all(|p| !is_array_case(p));
}
