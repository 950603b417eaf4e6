//! The user's guide is tested: every runnable example in `docs/*.md` and in `README.md`
//! is run with the built `slic-cas`, and its output and exit code compared with what the
//! page shows. The format of examples is the one `docs/README.md` states:
//! - a fenced block whose info string is `hk title=NAME` gives the contents of the file
//!   NAME (for the examples after it on the same page);
//! - a fenced `console` block holds commands, each on a line starting `$ `, each followed
//!   by its expected output (stdout, then stderr); `...` in the expected output stands for
//!   any text (sampled numbers, long error messages); a last line `[exit N]` says the
//!   exit code is N (otherwise it must be 0);
//! - the commands are `slic-cas ARGS` (arguments split as a shell does, with '...' and
//!   "..." quoting) and `cat NAME`, whose shown output *is* the file NAME (a second way
//!   of giving an input file).
//!
//! Each page runs in a fresh temporary directory holding its files and a link to the
//! repository's `corpus/`, so examples can name corpus programs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One command of a console block and what the page says it prints.
#[derive(Debug)]
struct Run {
    /// The 1-based line of the `$ ` line in the page.
    line: usize,
    words: Vec<String>,
    expected: String,
    exit: i32,
}

/// What a page asks for, in page order.
#[derive(Debug)]
enum Step {
    /// Write a file.
    File(String, String),
    Run(Run),
}

/// The steps of a page (see the module doc for the format), or why the page is malformed.
fn steps(page: &str) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    let lines: Vec<&str> = page.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let info = info.trim();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim() != "```" {
            end += 1;
        }
        if end == lines.len() {
            return Err(format!("line {i}: unclosed code block"));
        }
        let body = &lines[start..end];
        if let Some(title) = info.strip_prefix("hk title=") {
            let name = title.trim().trim_matches('"').to_string();
            out.push(Step::File(name, text_of(body)));
        } else if info == "console" {
            console(body, start, &mut out)?;
        }
        i = end + 1;
    }
    Ok(out)
}

/// Lines joined with a final newline.
fn text_of(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The steps of one console block whose first line is page line `first` (0-based).
fn console(body: &[&str], first: usize, out: &mut Vec<Step>) -> Result<(), String> {
    let mut i = 0;
    while i < body.len() {
        let Some(cmd) = body[i].strip_prefix("$ ") else {
            return Err(format!(
                "line {}: a console block's lines come after a `$ ` command",
                first + i + 1
            ));
        };
        let line = first + i + 1;
        let mut j = i + 1;
        while j < body.len() && !body[j].starts_with("$ ") {
            j += 1;
        }
        let mut shown: Vec<&str> = body[i + 1..j].to_vec();
        let mut exit = 0;
        if let Some(code) = shown
            .last()
            .and_then(|l| l.strip_prefix("[exit "))
            .and_then(|l| l.strip_suffix(']'))
        {
            exit = code
                .parse()
                .map_err(|_| format!("line {line}: bad exit line [exit {code}]"))?;
            shown.pop();
        }
        let words = shell_words(cmd).map_err(|e| format!("line {line}: {e}"))?;
        match words.first().map(String::as_str) {
            Some("cat") if words.len() == 2 => {
                out.push(Step::File(words[1].clone(), text_of(&shown)));
            }
            Some("slic-cas") => out.push(Step::Run(Run {
                line,
                words: words[1..].to_vec(),
                expected: text_of(&shown),
                exit,
            })),
            _ => {
                return Err(format!(
                    "line {line}: only `slic-cas ...` and `cat FILE` can be run: {cmd}"
                ))
            }
        }
        i = j;
    }
    Ok(())
}

/// Split a command line into words as a POSIX shell does for plain words and '...' /
/// "..." quoting (no variables, escapes or globs).
fn shell_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = cur.take() {
                    words.push(w);
                }
            }
            '\'' | '"' => {
                let w = cur.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some(q) if q == c => break,
                        Some(x) => w.push(x),
                        None => return Err(format!("unclosed quote in: {s}")),
                    }
                }
            }
            _ => cur.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(cur);
    Ok(words)
}

/// Whether `actual` matches `pattern`, where `...` in the pattern matches any text
/// (including line breaks), and a line that is only `...` any number of lines, none
/// included. Trailing blanks of lines and final newlines are ignored.
fn matches(pattern: &str, actual: &str) -> bool {
    let tidy = |s: &str| {
        s.lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_string()
    };
    // framed by line breaks, so that a `...` line can absorb its own line break
    let pattern = format!("\n{}\n", tidy(pattern)).replace("\n...\n", "\n...");
    let actual = format!("\n{}\n", tidy(actual));
    let pieces: Vec<&str> = pattern.split("...").collect();
    if pieces.len() == 1 {
        return pattern == actual;
    }
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(k) => rest = &rest[k + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Run the steps of the page `name` in a fresh directory; a description of each failure.
fn run_page(name: &str, steps: &[Step]) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!(
        "slic-docs-{}-{}",
        std::process::id(),
        name.replace(['/', '.'], "-")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return vec![format!("{name}: cannot create {}: {e}", dir.display())];
    }
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink(root().join("corpus"), dir.join("corpus")) {
        return vec![format!("{name}: cannot link corpus/: {e}")];
    }
    let mut failures = Vec::new();
    for step in steps {
        match step {
            Step::File(file, text) => {
                if let Err(e) = std::fs::write(dir.join(file), text) {
                    failures.push(format!("{name}: cannot write {file}: {e}"));
                }
            }
            Step::Run(run) => {
                let output = Command::new(env!("CARGO_BIN_EXE_slic-cas"))
                    .args(&run.words)
                    .current_dir(&dir)
                    // compiled kernels (`run --backend c`) are cached in the page's directory
                    .env("SLIC_CACHE_DIR", dir.join("kernel-cache"))
                    .output();
                let output = match output {
                    Ok(o) => o,
                    Err(e) => {
                        failures.push(format!("{name}:{}: cannot run slic-cas: {e}", run.line));
                        continue;
                    }
                };
                let actual = format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
                let code = output.status.code().unwrap_or(-1);
                if code != run.exit || !matches(&run.expected, &actual) {
                    failures.push(format!(
                        "{name}:{}: $ slic-cas {}\n--- expected (exit {}) ---\n{}--- got (exit {code}) ---\n{actual}",
                        run.line,
                        run.words.join(" "),
                        run.exit,
                        run.expected,
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    failures
}

/// The pages: every `docs/*.md` (sorted) and the README.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md"))
                .collect()
        })
        .unwrap_or_default();
    pages.sort();
    pages.push(root().join("README.md"));
    pages
}

#[test]
fn every_example_in_the_guide_runs_as_shown() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for page in pages() {
        let name = page
            .strip_prefix(root())
            .unwrap_or(&page)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(&page) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: cannot read: {e}"));
                continue;
            }
        };
        let steps = match steps(&text) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let runs = steps.iter().filter(|s| matches!(s, Step::Run(_))).count();
        // a page of the guide without a runnable example is a page nobody checks
        if runs == 0 {
            failures.push(format!("{name}: no runnable example"));
        }
        counts.push(format!("{name}: {runs}"));
        failures.extend(run_page(&name, &steps));
    }
    assert!(
        counts.len() >= 4,
        "expected docs/README.md, language.md, commands.md and README.md: {counts:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failing example(s) (examples per page: {})\n\n{}",
        failures.len(),
        counts.join(", "),
        failures.join("\n\n")
    );
}

#[test]
fn the_example_format_is_read_as_documented() {
    let page = "text\n```hk title=a.hk\nreturn 1\n```\n```console\n$ cat b.hk\nreturn 2\n$ slic-cas check 'a b.hk' x\nmeasure(nat)\n...\n[exit 1]\n```\n";
    let steps = steps(page).unwrap_or_default();
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert!(matches!(&steps[0], Step::File(n, t) if n == "a.hk" && t == "return 1\n"));
    assert!(matches!(&steps[1], Step::File(n, t) if n == "b.hk" && t == "return 2\n"));
    let Step::Run(run) = &steps[2] else {
        panic!("{steps:?}")
    };
    assert_eq!(run.words, ["check", "a b.hk", "x"]);
    assert_eq!((run.exit, run.line), (1, 8));
    assert!(steps_error("```console\nno dollar\n```\n"));
    assert!(steps_error("```console\n$ ls\n```\n"));
    assert!(steps_error("```hk title=x.hk\nreturn 1\n"));
}

fn steps_error(page: &str) -> bool {
    steps(page).is_err()
}

#[test]
fn dots_match_any_text_and_nothing_else_does() {
    assert!(matches("a...c", "abc"));
    assert!(matches("a...c", "a\nb\nc\n"));
    assert!(matches(
        "{\"mean\":3.00...,\"n\":5}",
        "{\"mean\":3.0012,\"n\":5}"
    ));
    assert!(matches("x  \n\n", "x\n"));
    assert!(!matches("a...c", "abd"));
    assert!(!matches("abc", "abcd"));
    assert!(!matches("ab...bc", "abc"));
    assert!(matches("...", "anything"));
    assert!(matches("a\n...\nb", "a\nb"));
    assert!(matches("a\n...\nb", "a\nx\ny\nb\n"));
    assert!(matches("a\n...", "a"));
    assert!(matches("...\nb", "b"));
    assert!(!matches("a\n...\nb", "a\nb\nc"));
}
