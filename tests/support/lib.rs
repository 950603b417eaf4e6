//! Shared helpers for the end-to-end tests and the benchmarks: finding corpus files,
//! reading their header comments (`# args:`, `# expect:`), running work on a thread with a
//! large stack, generating large programs, and random small models (`models`); the seeded
//! data generator of the benchmark shapes (`datagen`), small random arguments of the Gibbs
//! updates (`gibbs_args`) and the loader of the hand-written C baselines (`baselines`).
//!
//! Nothing here is an algorithm of slic-cas; it only feeds the library crates inputs.

pub mod array_models;
pub mod assume;
pub mod baselines;
pub mod cases;
pub mod datagen;
pub mod gen;
pub mod gibbs_args;
pub mod models;
pub mod mutate;

use std::path::{Path, PathBuf};

/// A program's text loaded and lowered to the loop IR with every pass, with its type;
/// panics (the caller is a test) when it does not load or lower.
pub fn lowered(text: &str) -> (slic_codegen::Program, slic_algebra::Type) {
    let mut store = slic_algebra::Store::new();
    let t = slic_algebra::front::load(&mut store, text).expect("the program loads");
    let ty = store.ty(t).clone();
    let l = slic_codegen::lower_program(&mut store, t, slic_codegen::Passes::default())
        .expect("the program lowers");
    (l.program, ty)
}

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

/// A program as `slic-cas` reads it from `path`: `bytes` as if they were that file, with
/// the modules its `import` lines name read from beside it.
pub fn load_at(
    store: &mut slic_algebra::Store,
    path: &Path,
    bytes: &[u8],
) -> Result<slic_algebra::front::FileProgram, Vec<slic_algebra::Diagnostic>> {
    let mut read = |p: &Path| std::fs::read(p);
    slic_algebra::front::load_file(store, path, bytes, &mut read)
}

/// The value of a `# key: value` header comment in a corpus file, if present, with its
/// continuation lines (`#` and at least three spaces, `corpus/README.md`) joined by spaces:
/// an `# assume:` expression may span several lines.
pub fn header(text: &str, key: &str) -> Option<String> {
    let prefix = format!("# {key}:");
    let mut lines = text
        .lines()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty());
    let mut value = lines.find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))?;
    for l in lines {
        match l.strip_prefix("#   ") {
            Some(more) => {
                value.push(' ');
                value.push_str(more.trim());
            }
            None => break,
        }
    }
    Some(value)
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

/// How many variables a term draws, as "reaches its expected form" counts them (issue
/// 10): every primitive measure (`normal(...)`, `lebesgue(...)`) and every call of a
/// standard-library measure (`dirichlet(as)`) counts one, except the measure of an
/// `observe` (conditioning draws nothing); a plate's body counts once, whatever its size,
/// so `plate i of n: normal(0, 1)` is one draw and `plate i of n: x <~ normal(0, 1);
/// normal(x, 1)` two. A local `def`'s body counts once, where it is defined.
pub fn draw_count(store: &slic_algebra::Store, t: slic_algebra::TermId) -> usize {
    use slic_algebra::Node;
    let mut count = 0;
    let mut todo = vec![t];
    while let Some(t) = todo.pop() {
        match store.node(t) {
            Node::Dist(..) => count += 1,
            Node::Observe(_, value) => todo.push(*value),
            Node::App(..) if store.ty(t).measure_of().is_some() => {
                let mut head = t;
                while let Node::App(f, arg) = store.node(head) {
                    todo.push(*arg);
                    head = *f;
                }
                match store.node(head) {
                    Node::Var(v) if store.library_def(*v).is_some() => count += 1,
                    _ => todo.push(head),
                }
            }
            n => todo.extend(n.children()),
        }
    }
    count
}

/// How many weights and observations of a term depend on a drawn variable (one bound by
/// `<~`): the likelihood factors an expected form has folded into its draws (a conjugate
/// posterior) and a simplified output may still carry (`p <~ beta(a, b); weight(p ^ k, ...)`
/// draws as many variables as `beta(a + k, b)` but has not eliminated the observation).
/// A weight on parameters only (an evidence) or an observation of data given parameters
/// does not count. Plate and local `def` bodies count once, as in [`draw_count`].
pub fn conditioning_count(store: &slic_algebra::Store, t: slic_algebra::TermId) -> usize {
    use slic_algebra::{vars, Node, VarId};
    let mut count = 0;
    let mut todo: Vec<(slic_algebra::TermId, Vec<VarId>)> = vec![(t, Vec::new())];
    while let Some((t, drawn)) = todo.pop() {
        let node = store.node(t);
        match node {
            Node::Weight(w, _) if vars::mentions_any(store, *w, &drawn) => count += 1,
            Node::Observe(..) if vars::mentions_any(store, t, &drawn) => count += 1,
            _ => {}
        }
        for c in node.children() {
            let mut inner = drawn.clone();
            if let Node::Bind(x, _, body) = node {
                if c == *body {
                    inner.push(*x);
                }
            }
            todo.push((c, inner));
        }
    }
    count
}
