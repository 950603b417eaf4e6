//! The programs of `corpus/hakaru-layouts/`, written in the layouts Hakaru's own printer
//! emits (issue 14, section 1): operator-led continuation lines, flush-left bodies,
//! bindings whose right-hand side is a block. Each must parse, type-check, pass `verify`,
//! and round-trip through the printer (print, load again: alpha-equivalent; printing is
//! a fixpoint), so that `fmt` turns Hakaru's layout into ours without changing a term.
//! Files are loaded as `slic-cas` loads them, so an `import` finds the module beside its
//! file; a module (a file of definitions, imported by another) ends in a final
//! expression, as Hakaru's grammar wants, so it is a program of its own too.

use slic_algebra::{verify, Store};
use slic_suite::{corpus_files, load_at, print_round_trip, with_big_stack};

fn check(path: &std::path::Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let messages = |ds: Vec<slic_algebra::diag::Diagnostic>| {
        ds.iter()
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut store = Store::new();
    let t = load_at(&mut store, path, &bytes).map_err(messages)?.term;
    verify::verify(&store, t).map_err(|e| format!("verify: {e}"))?;
    print_round_trip(&mut store, t)
}

#[test]
fn every_hakaru_layout_program_loads_verifies_and_round_trips() {
    let files = corpus_files("hakaru-layouts");
    assert!(
        files.len() >= 30,
        "corpus/hakaru-layouts has {} files",
        files.len()
    );
    let failures = with_big_stack(move || {
        files
            .iter()
            .filter_map(|f| check(f).err().map(|e| format!("{}: {e}", f.display())))
            .collect::<Vec<_>>()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Imports and data types change no meaning: each program below is judged equal (by
/// `slic_semantics::compare`, at the given arguments) to the program it spells out with
/// the definitions written in and the constructors' cases decided by hand.
#[test]
fn import_and_data_programs_mean_what_they_spell_out() {
    let cases = [
        // weight w on circle(1) (area pi), mass 1 on rect(2, 3) (area 6)
        (
            "42-data-match.hk",
            "fn w prob:\nweight(w, return prob2real(pi)) <|> return 6. real",
            "[0.3]",
        ),
        // heads (probability p): sq(3); tails: sq(-1)
        (
            "41-import-helpers.hk",
            "fn p prob:\nc <~ categorical([p, real2prob(1 - p)])\nreturn if c == 0: 9. real else: 1. real",
            "[0.25]",
        ),
        // winter: rain (p) gives snowy(1, 1/2), whose umbrella is 1/2; else sunny, 0
        (
            "43-import-data-module.hk",
            "fn s either(unit, unit):\nfn p prob:\nc <~ categorical([p, real2prob(1 - p)])\nreturn if c == 0: 1/2 else: 0. prob",
            "[{\"left\": []}, 0.4]",
        ),
        // summer: rain gives rainy(p), whose umbrella is p
        (
            "43-import-data-module.hk",
            "fn s either(unit, unit):\nfn p prob:\nc <~ categorical([p, real2prob(1 - p)])\nreturn if c == 0: p else: 0. prob",
            "[{\"right\": []}, 0.4]",
        ),
    ];
    let failures = with_big_stack(move || {
        let mut failures = Vec::new();
        for (file, reference, args) in cases {
            let path = slic_suite::root().join("corpus/hakaru-layouts").join(file);
            let mut store = Store::new();
            let bytes = std::fs::read(&path).unwrap_or_default();
            let a = match load_at(&mut store, &path, &bytes) {
                Ok(p) => p.term,
                Err(e) => {
                    failures.push(format!("{file}: does not load: {e:?}"));
                    continue;
                }
            };
            let b = match slic_algebra::front::load(&mut store, reference) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{file}: the reference does not load: {e:?}"));
                    continue;
                }
            };
            let values = match slic_semantics::args_from_json(args, "the arguments", store.ty(a)) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{file}: {e}"));
                    continue;
                }
            };
            let config = slic_semantics::CompareConfig::default();
            match slic_semantics::compare(&store, a, b, &values, &config) {
                slic_semantics::Verdict::Equal { .. }
                | slic_semantics::Verdict::NoDifferenceFound { .. } => {}
                other => failures.push(format!("{file} at {args}: {other:?}")),
            }
        }
        failures
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
