//! End-to-end tests over `corpus/`: every case and example type-checks and verifies; every
//! file that loads round-trips through the printer (parse, print, parse gives an
//! alpha-equivalent term, and printing is a fixpoint); every bad input gives the error its
//! header promises (or loads, if it says `# expect: ok`), never a panic.

use slic_algebra::{alpha, front, print, verify, Store};
use slic_suite::{corpus_files, header, with_big_stack};

fn load_file(path: &std::path::Path) -> (Store, Result<slic_algebra::TermId, String>) {
    let bytes = std::fs::read(path).expect("read corpus file");
    let mut store = Store::new();
    let r = front::load_bytes(&mut store, &bytes).map_err(|ds| {
        ds.iter()
            .map(|d| d.message.clone())
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
    let Ok(t) = r else { return Ok(()) };
    let text = print::print_term(&store, t);
    let t2 = front::load(&mut store, &text).map_err(|ds| {
        format!(
            "printed text does not load ({}):\n{text}",
            ds.iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    if !alpha::alpha_eq(&store, t, t2) {
        return Err(format!("not alpha-equivalent after printing:\n{text}"));
    }
    let text2 = print::print_term(&store, t2);
    if text != text2 {
        return Err(format!("printing is not a fixpoint:\n{text}\n---\n{text2}"));
    }
    Ok(())
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
