//! The architecture's invariants that the dependency graph carries, checked on the
//! crates' manifests: the reference semantics (the judge) never depends on the simplifier
//! it judges, the simplifier sees the reference semantics only in its tests, `algebra`
//! depends on no other crate of the workspace, and only `cli` pulls in the command-line
//! and diagnostic-rendering crates. A change that breaks one of these fails here rather
//! than silently weakening the tests that rely on it.

use std::collections::BTreeSet;

/// The names listed in one `[section]` of a crate's `Cargo.toml` (`name = ...` or
/// `name.workspace = true` lines up to the next section header).
fn section(krate: &str, name: &str) -> BTreeSet<String> {
    let path = slic_suite::root().join(krate).join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = format!("[{name}]");
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.']).next().unwrap_or("").trim();
        if !key.is_empty() {
            out.insert(key.to_string());
        }
    }
    out
}

/// The workspace crates among a set of dependency names.
fn workspace_deps(deps: &BTreeSet<String>) -> Vec<&str> {
    deps.iter()
        .map(String::as_str)
        .filter(|d| d.starts_with("slic-"))
        .collect()
}

#[test]
fn algebra_depends_on_no_other_workspace_crate() {
    assert_eq!(
        workspace_deps(&section("algebra", "dependencies")),
        Vec::<&str>::new()
    );
}

#[test]
fn the_reference_semantics_is_independent_of_the_simplifier() {
    // the judge may read terms (algebra) and nothing that rewrites them
    assert_eq!(
        workspace_deps(&section("semantics", "dependencies")),
        vec!["slic-algebra"]
    );
    assert_eq!(
        workspace_deps(&section("semantics", "dev-dependencies")),
        Vec::<&str>::new()
    );
}

#[test]
fn the_simplifier_sees_the_reference_semantics_only_in_its_tests() {
    let deps = section("simplify", "dependencies");
    assert!(
        !deps.contains("slic-semantics"),
        "slic-simplify must not depend on slic-semantics outside its tests: {deps:?}"
    );
    assert!(section("simplify", "dev-dependencies").contains("slic-semantics"));
}

#[test]
fn holonomic_recognition_depends_only_on_algebra() {
    assert_eq!(
        workspace_deps(&section("holonomic", "dependencies")),
        vec!["slic-algebra"]
    );
}

#[test]
fn only_the_command_renders_diagnostics_and_parses_arguments() {
    for krate in [
        "algebra",
        "holonomic",
        "semantics",
        "simplify",
        "equiv",
        "codegen",
    ] {
        let deps = section(krate, "dependencies");
        for edge_only in ["clap", "codespan-reporting", "anyhow"] {
            assert!(
                !deps.contains(edge_only),
                "{krate} depends on {edge_only}, which belongs to cli alone"
            );
        }
    }
}
