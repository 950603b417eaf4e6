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
