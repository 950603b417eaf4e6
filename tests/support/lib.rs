//! Shared helpers for the end-to-end tests and the benchmarks: finding corpus files,
//! reading their header comments (`# args:`, `# expect:`), running work on a thread with a
//! large stack, generating large programs, and random small models (`models`).
//!
//! Nothing here is an algorithm of slic-cas; it only feeds the library crates inputs.

pub mod gen;
pub mod models;

use std::path::{Path, PathBuf};

/// The repository root (this package's manifest directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.hk` file below `corpus/<sub>` (recursively), sorted.
pub fn corpus_files(sub: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    collect(&root().join("corpus").join(sub), &mut out);
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    // a corpus directory that cannot be read fails the test that asked for it, rather
    // than leaving it with nothing to check
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read corpus directory {}: {e}", dir.display()));
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "hk") {
            out.push(p);
        }
    }
}

/// The value of a `# key: value` header comment in a corpus file, if present.
pub fn header(text: &str, key: &str) -> Option<String> {
    let prefix = format!("# {key}:");
    text.lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))
}

/// The `# args:` header of a corpus file read as values of the parameter types of a
/// program of type `ty`; no header means no arguments.
pub fn header_args(
    text: &str,
    ty: &slic_algebra::Type,
) -> Result<Vec<slic_semantics::Value>, String> {
    let json = header(text, "args").unwrap_or_else(|| "[]".to_string());
    slic_semantics::args_from_json(&json, "the '# args:' header", ty)
}

/// The names of the free variables of `t` (for a closed program, none; standard-library
/// variables are closed). A rewrite that
/// drops a binder while a use of its variable survives shows up here even where the
/// interpreter never reaches the use.
pub fn unbound_vars(store: &slic_algebra::Store, t: slic_algebra::TermId) -> Vec<String> {
    slic_algebra::vars::open_vars(store, t)
        .into_iter()
        .map(|v| store.var_name(v).to_string())
        .collect()
}

/// Run `f` on a thread with a 512 MiB stack (deep programs recurse deeply; the CLI does
/// the same) and return its result, propagating panics.
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024 * 1024)
        .spawn(f)
        .expect("spawn test thread");
    match handle.join() {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    }
}

/// A well-typed program of about `lines` lines: two parameters, then a long chain of
/// binds, lets, weights and conditionals mixing every numeric type, returning a pair.
/// Used by the front-end benchmark and the stress tests.
pub fn generated_program(lines: usize) -> String {
    let mut s = String::with_capacity(lines * 40);
    s.push_str("fn a real:\nfn b prob:\n");
    s.push_str("x0 <~ normal(a, b)\n");
    s.push_str("y0 = x0 * 2 + a - 1/2\n");
    let mut i = 1;
    while 4 + 4 * i <= lines {
        let p = i - 1;
        s.push_str(&format!("x{i} <~ normal(y{p} * 3/4 - x{p}, b + {i})\n"));
        s.push_str(&format!(
            "y{i} = if x{i} < y{p}: exp(x{i}) * b else: real2prob(x{i} ^ 2 + 1)\n"
        ));
        s.push_str(&format!("z{i} = prob2real(y{i}) + x{i} / (1 + b)\n"));
        s.push_str(&format!("w{i} <~ weight(y{i} + 1/{i}, return ())\n"));
        i += 1;
    }
    let last = i - 1;
    s.push_str(&format!("return (x{last}, z{last})\n"));
    s
}

/// The printer's contract on a loaded term `t`: its printed text loads again to an
/// alpha-equivalent term, and printing that term gives the same text (a fixpoint).
pub fn print_round_trip(
    store: &mut slic_algebra::Store,
    t: slic_algebra::TermId,
) -> Result<(), String> {
    use slic_algebra::{alpha, front, print};
    let text = print::print_term(store, t);
    let t2 = front::load(store, &text).map_err(|ds| {
        let messages: Vec<String> = ds.iter().map(|d| d.message.clone()).collect();
        format!(
            "printed text does not load ({}):\n{text}",
            messages.join("; ")
        )
    })?;
    if !alpha::alpha_eq(store, t, t2) {
        return Err(format!("not alpha-equivalent after printing:\n{text}"));
    }
    let text2 = print::print_term(store, t2);
    if text != text2 {
        return Err(format!("printing is not a fixpoint:\n{text}\n---\n{text2}"));
    }
    Ok(())
}
