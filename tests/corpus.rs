//! End-to-end tests over `corpus/`: every case and example type-checks and verifies; every
//! file that loads round-trips through the printer (parse, print, parse gives an
//! alpha-equivalent term, and printing is a fixpoint); every bad input gives the error its
//! header promises (or loads, if it says `# expect: ok`), never a panic.

use slic_algebra::{alpha, front, print, verify, Store};
use slic_semantics::{CompareConfig, Verdict};
use slic_suite::{corpus_files, header, with_big_stack};

fn load_file(path: &std::path::Path) -> (Store, Result<slic_algebra::TermId, String>) {
    let bytes = std::fs::read(path).expect("read corpus file");
    let mut store = Store::new();
    // an error's notes (hints such as "did you mean ...") count as part of its text
    // as `slic-cas` loads it: an `import` finds the module beside the file
    // and as the commands that give it a meaning load it: `disint` and `density`
    // computed, their errors the file's (issue 15)
    let r = slic_suite::load_at(&mut store, path, &bytes)
        .and_then(|p| {
            slic_simplify::expand_transforms(&mut store, p.term, &p.spans).map_err(|d| vec![d])?;
            Ok(p.term)
        })
        .map_err(|ds| {
            ds.iter()
                .map(|d| {
                    std::iter::once(d.message.clone())
                        .chain(d.notes.clone())
                        .collect::<Vec<_>>()
                        .join(" | ")
                })
                .collect::<Vec<_>>()
                .join("; ")
        });
    (store, r)
}

#[test]
fn every_case_and_example_type_checks_and_verifies() {
    let files: Vec<_> = corpus_files("cases")
        .into_iter()
        .chain(corpus_files("examples"))
        .collect();
    assert!(files.len() >= 26, "the corpus lost files: {}", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let (store, r) = load_file(f);
        match r {
            Ok(t) => {
                if let Err(e) = verify::verify(&store, t) {
                    failures.push(format!("{}: verify: {e}", f.display()));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// parse → print → parse is alpha-equivalent, and print(parse(print(t))) == print(t).
fn round_trip(path: &std::path::Path) -> Result<(), String> {
    let (mut store, r) = load_file(path);
    let t = match r {
        Ok(t) => t,
        // malformed on purpose: `every_bad_input_gives_its_promised_error` checks these
        Err(_) if path.starts_with(slic_suite::root().join("corpus/bad")) => return Ok(()),
        Err(e) => return Err(format!("does not load: {e}")),
    };
    slic_suite::print_round_trip(&mut store, t)
}

#[test]
fn every_corpus_file_round_trips_through_the_printer() {
    let failures = with_big_stack(|| {
        let mut failures = Vec::new();
        for f in corpus_files("") {
            if let Err(e) = round_trip(&f) {
                failures.push(format!("{}: {e}", f.display()));
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_bad_input_gives_its_promised_error() {
    let files = corpus_files("bad");
    assert!(files.len() >= 40, "corpus/bad has {} files", files.len());
    let failures = with_big_stack(move || {
        let mut failures = Vec::new();
        for f in &files {
            let bytes = std::fs::read(f).expect("read");
            let text = String::from_utf8_lossy(&bytes);
            // a 0-byte file cannot carry a header; corpus/README.md gives its expectation
            let expect = if bytes.is_empty() {
                Some("empty".to_string())
            } else {
                header(&text, "expect")
            };
            let Some(expect) = expect else {
                failures.push(format!("{}: no '# expect:' header", f.display()));
                continue;
            };
            let (_, r) = load_file(f);
            match (expect.as_str(), r) {
                ("ok", Ok(_)) => {}
                ("ok", Err(e)) => failures.push(format!("{}: expected ok, got: {e}", f.display())),
                (_, Ok(_)) => failures.push(format!(
                    "{}: expected an error containing '{expect}', but it loaded",
                    f.display()
                )),
                (want, Err(e)) if !e.to_lowercase().contains(&want.to_lowercase()) => failures
                    .push(format!(
                        "{}: expected an error containing '{want}', got: {e}",
                        f.display()
                    )),
                _ => {}
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_generated_10000_line_program_loads_and_round_trips() {
    with_big_stack(|| {
        let text = slic_suite::generated_program(10_000);
        assert!(text.lines().count() >= 9_990);
        let mut store = Store::new();
        let t = front::load(&mut store, &text).expect("the generated program type-checks");
        assert_eq!(
            store.ty(t).to_string(),
            "real -> prob -> measure(pair(real, real))"
        );
        verify::verify(&store, t).expect("verifies");
        let printed = print::print_term(&store, t);
        let t2 = front::load(&mut store, &printed).expect("printed program loads");
        assert!(alpha::alpha_eq(&store, t, t2));
    });
}

/// Do `a` and `b` denote the same measure on the case's example arguments? The judge is
/// `slic_semantics::compare` (quadrature where its budget allows, else sampling).
fn same_meaning(
    store: &Store,
    a: slic_algebra::TermId,
    b: slic_algebra::TermId,
    args: &str,
) -> Verdict {
    let values = match slic_semantics::args_from_json(args, "the arguments", store.ty(a)) {
        Ok(v) => v,
        Err(why) => return Verdict::Unknown { why },
    };
    let config = CompareConfig {
        max_depth: 20_000,
        ..CompareConfig::default()
    };
    slic_semantics::compare(store, a, b, &values, &config)
}

/// Cases the oracle cannot judge today, each with the reason. Empty since issue 10: case
/// 18 (GMM Gibbs), whose prior importance sampling had an effective sample size of about
/// 3 in 20,000 draws, is judged by summing over its labels and sampling its parameters
/// from an adapted proposal (`semantics/src/enumerate.rs`, `guide.rs`).
const BEYOND_THE_ORACLE: &[&str] = &[];

#[test]
fn canonicalisation_keeps_the_meaning_of_every_case() {
    let (failures, checked, unchecked) = with_big_stack(|| {
        let mut failures = Vec::new();
        let (mut checked, mut unchecked) = (0, Vec::new());
        for f in corpus_files("cases")
            .into_iter()
            .chain(corpus_files("examples"))
        {
            let text = std::fs::read_to_string(&f).expect("read");
            let mut store = Store::new();
            let t = match front::load(&mut store, &text) {
                Ok(t) => t,
                Err(ds) => {
                    failures.push(format!("{}: does not load: {}", f.display(), ds[0].message));
                    continue;
                }
            };
            let c = slic_algebra::canon::canonicalize(
                &mut store,
                &slic_algebra::assume::Context::new(),
                t,
            );
            if let Err(e) = verify::verify(&store, c) {
                failures.push(format!(
                    "{}: canonical form does not verify: {e}",
                    f.display()
                ));
                continue;
            }
            let args = header(&text, "args").unwrap_or_else(|| "[]".to_string());
            let started = std::time::Instant::now();
            let verdict = same_meaning(&store, t, c, &args);
            if std::env::var_os("SLIC_TIMINGS").is_some() {
                let how = match &verdict {
                    Verdict::Equal { method, .. } | Verdict::NoDifferenceFound { method, .. } => {
                        method.to_string()
                    }
                    other => other.kind().to_string(),
                };
                eprintln!(
                    "{:>8.2}s {how:24} {}",
                    started.elapsed().as_secs_f64(),
                    f.display()
                );
            }
            match verdict {
                Verdict::Equal { .. } | Verdict::NoDifferenceFound { .. } => checked += 1,
                Verdict::Unknown { why } => {
                    if !BEYOND_THE_ORACLE.iter().any(|n| f.ends_with(n)) {
                        unchecked.push(format!("{}: {why}", f.display()));
                    }
                }
                different @ Verdict::Different { .. } => failures.push(format!(
                    "{}: {different}\n{}",
                    f.display(),
                    print::print_term(&store, c)
                )),
            }
        }
        (failures, checked, unchecked)
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // every case must be checkable one way or the other (quadrature or sampling; run with
    // SLIC_TIMINGS=1 to see which): a case the oracle cannot evaluate is a gap to fix
    assert!(
        unchecked.is_empty(),
        "{checked} checked; unchecked:\n{}",
        unchecked.join("\n")
    );
    assert!(checked >= 60, "only {checked} cases checked");
}

#[test]
fn the_meaning_check_can_fail() {
    with_big_stack(|| {
        let pairs = [
            // quadrature path: a shifted mean, a changed weight
            (
                "fn m real: normal(m, 1)",
                "fn m real: normal(m + 1/10, 1)",
                "[0.5]",
            ),
            (
                "fn m real: weight(1/2, normal(m, 1))",
                "fn m real: weight(1/3, normal(m, 1))",
                "[0.5]",
            ),
            // sampling path (a plate of 6 draws is beyond quadrature): a changed weight
            (
                "fn n nat:\nxs <~ plate i of n: normal(0, 1)\nweight(exp(xs[0]), return xs)",
                "fn n nat:\nxs <~ plate i of n: normal(0, 1)\nweight(exp(xs[0]) * 6/5, return xs)",
                "[6]",
            ),
        ];
        for (a, b, args) in pairs {
            let mut store = Store::new();
            let ta = front::load(&mut store, a).expect("a loads");
            let tb = front::load(&mut store, b).expect("b loads");
            let v = same_meaning(&store, ta, tb, args);
            assert!(
                v.is_different(),
                "the check did not notice that\n{a}\nand\n{b}\ndiffer: {v}"
            );
            let same = same_meaning(&store, ta, ta, args);
            assert!(same.agrees(), "{a} is not equal to itself: {same}");
        }
    });
}

/// `corpus/disint/` (issue 15): every program's transforms expand, the expansion verifies
/// and keeps its type, and simplifying it keeps its meaning on the file's `# args:`.
#[test]
fn every_disintegration_example_expands_and_simplifies_to_its_meaning() {
    let files = corpus_files("disint");
    assert!(files.len() >= 5, "corpus/disint has {} files", files.len());
    let failures = with_big_stack(move || {
        let mut failures = Vec::new();
        for f in &files {
            let bytes = std::fs::read(f).expect("read");
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut store = Store::new();
            let p = match slic_suite::load_at(&mut store, f, &bytes) {
                Ok(p) => p,
                Err(ds) => {
                    failures.push(format!("{}: does not load: {}", f.display(), ds[0].message));
                    continue;
                }
            };
            let e = match slic_simplify::expand_transforms(&mut store, p.term, &p.spans) {
                Ok(e) => e,
                Err(d) => {
                    failures.push(format!("{}: does not expand: {}", f.display(), d.message));
                    continue;
                }
            };
            if let Err(err) = verify::verify(&store, e) {
                failures.push(format!(
                    "{}: the expansion does not verify: {err}",
                    f.display()
                ));
                continue;
            }
            assert_eq!(store.ty(e), store.ty(p.term), "{}", f.display());
            let s = slic_simplify::simplify(&mut store, e, &Default::default());
            let args = header(&text, "args").unwrap_or_else(|| "[]".to_string());
            match same_meaning(&store, e, s.term, &args) {
                v if v.agrees() => {}
                v => failures.push(format!("{}: simplified: {v}", f.display())),
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
