//! `slic-cas fmt` on the whole corpus (issue: "`fmt` keeps comments"): for every program
//! that loads, the formatted text keeps every `#` comment of the input, reads back to an
//! alpha-equivalent term, and is its own `fmt` (a fixpoint). The corpus files carry
//! header comments, comments between statements and comments inside blocks, so this is
//! the layout of comments on real programs; `algebra/src/front/comments.rs` has the
//! one-line cases.

use std::path::Path;

use slic_algebra::{alpha, front, print, Store};
use slic_suite::{corpus_files, load_at, with_big_stack};

/// The program `text`, read as if it were the file `path` (its imports beside it).
fn load(store: &mut Store, path: &Path, text: &str) -> Result<front::FileProgram, String> {
    load_at(store, path, text.as_bytes()).map_err(|e| format!("{e:?}"))
}

/// `fmt` of `text` (as the file `path`) in `store`, or the first error.
fn fmt(store: &mut Store, path: &Path, text: &str) -> Result<String, String> {
    let p = load(store, path, text)?;
    Ok(print::print_with_comments(
        store,
        p.term,
        &print::PrintOptions::default(),
        p.comments,
    ))
}

/// Why `fmt` mishandles the program `text` of the file `path`, if it does.
fn problem(path: &Path, text: &str) -> Option<String> {
    let mut store = Store::new();
    let Ok(first) = fmt(&mut store, path, text) else {
        return None; // not a program (corpus/bad/): nothing to format
    };
    for line in text.lines() {
        if let Some(i) = line.find('#') {
            let comment = line[i..].trim_end();
            if !first.contains(comment) {
                return Some(format!("lost the comment {comment:?}:\n{first}"));
            }
        }
    }
    let second = match fmt(&mut store, path, &first) {
        Ok(s) => s,
        Err(e) => return Some(format!("its output does not load: {e}\n{first}")),
    };
    if second != first {
        return Some(format!("not a fixpoint:\n{first}---\n{second}"));
    }
    let (Ok(a), Ok(b)) = (
        load(&mut store, path, text).map(|p| p.term),
        load(&mut store, path, &first).map(|p| p.term),
    ) else {
        return Some("does not load twice".to_string());
    };
    if !alpha::alpha_eq(&store, a, b) {
        return Some(format!("reads back to another term:\n{first}"));
    }
    None
}

#[test]
fn fmt_keeps_every_comment_of_the_corpus() {
    let (checked, failures) = with_big_stack(|| {
        let mut checked = 0;
        let mut failures = Vec::new();
        for path in corpus_files("") {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            checked += usize::from(text.contains('#'));
            if let Some(p) = problem(&path, &text) {
                failures.push(format!("{}: {p}", path.display()));
            }
        }
        (checked, failures)
    });
    assert!(
        checked >= 100,
        "the corpus lost its comments: {checked} files"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
