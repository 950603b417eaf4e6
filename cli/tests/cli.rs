//! The `slic-cas` binary end to end: commands, exit codes (0 ok, 1 user error, 2 internal
//! error), `file:line:col` diagnostics with the source line, and that no input in
//! `corpus/bad/` makes it panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn slic(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slic-cas"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run slic-cas")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("slic-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, contents).expect("write temp file");
    p
}

#[test]
fn check_prints_the_type() {
    let f = temp_file("check.hk", b"fn n nat:\nx <~ normal(0, 1)\nreturn x + n\n");
    let o = slic(&["check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "nat -> measure(real)");
}

#[test]
fn type_errors_name_file_line_column_and_show_the_line() {
    let f = temp_file("bad-type.hk", b"fn x real:\nreturn log(x)\n");
    let o = slic(&["check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bad-type.hk:2:12"), "{e}");
    assert!(e.contains("expects prob, found real"), "{e}");
    assert!(e.contains("return log(x)"), "{e}");
}

#[test]
fn missing_file_is_a_user_error() {
    let o = slic(&["check", "no/such/file.hk"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no/such/file.hk"), "{}", stderr(&o));
}

#[test]
fn fmt_prints_text_that_checks_to_the_same_type() {
    let f = temp_file(
        "fmt.hk",
        "fn mu real:\nx <~ normal(mu,1)\ny<~normal(x ,1)\nreturn [x, y]\n".as_bytes(),
    );
    let o = slic(&["fmt", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = stdout(&o);
    assert!(printed.contains("normal(mu, 1)"), "{printed}");
    let g = temp_file("fmt2.hk", printed.as_bytes());
    let again = slic(&["fmt", g.to_str().unwrap()]);
    assert_eq!(stdout(&again), printed, "fmt is idempotent");
}

#[test]
fn sample_prints_json_lines_reproducibly() {
    let f = temp_file("s.hk", b"fn m real:\nnormal(m, 1)\n");
    let a = slic(&[
        "sample",
        f.to_str().unwrap(),
        "--args",
        "[2.5]",
        "-n",
        "5",
        "--seed",
        "7",
    ]);
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    let lines: Vec<_> = stdout(&a).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 5);
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).expect("json line");
        assert!(v["value"].is_number() && v["log_weight"].is_number(), "{l}");
    }
    let b = slic(&[
        "sample",
        f.to_str().unwrap(),
        "--args",
        "[2.5]",
        "-n",
        "5",
        "--seed",
        "7",
    ]);
    assert_eq!(stdout(&a), stdout(&b), "same seed, same samples");
}

#[test]
fn sample_summary_estimates_mean_and_mass() {
    let f = temp_file("w.hk", b"x <~ normal(3, 2)\nweight(1/4, return x)\n");
    let o = slic(&["sample", f.to_str().unwrap(), "-n", "40000", "--summary"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).expect("json");
    assert_eq!(v["n"], 40000);
    assert!((v["mass"].as_f64().unwrap() - 0.25).abs() < 1e-9, "{v}");
    assert!((v["mean"].as_f64().unwrap() - 3.0).abs() < 0.05, "{v}");
    assert!((v["sd"].as_f64().unwrap() - 2.0).abs() < 0.05, "{v}");
}

#[test]
fn sample_reads_arguments_from_a_file_and_reports_bad_ones() {
    let f = temp_file("a.hk", b"fn xs array(real):\nreturn size(xs)\n");
    let args = temp_file("args.json", b"[[1.0, 2.0, 3.0]]");
    let o = slic(&[
        "sample",
        f.to_str().unwrap(),
        "--args",
        &format!("@{}", args.display()),
        "-n",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"value\":3"), "{}", stdout(&o));
    let bad = slic(&["sample", f.to_str().unwrap(), "--args", "[true]", "-n", "1"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(stderr(&bad).contains("array(real)"), "{}", stderr(&bad));
    let wrong_count = slic(&["sample", f.to_str().unwrap(), "--args", "[]", "-n", "1"]);
    assert_eq!(wrong_count.status.code(), Some(1));
}

#[test]
fn sampling_lebesgue_is_a_clear_user_error() {
    let f = temp_file("leb.hk", "lebesgue(-∞, ∞)\n".as_bytes());
    let o = slic(&["sample", f.to_str().unwrap(), "-n", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("lebesgue"), "{}", stderr(&o));
}

#[test]
fn no_bad_input_makes_the_binary_panic() {
    let dir = root().join("corpus/bad");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).expect("corpus/bad").flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "hk") {
            continue;
        }
        seen += 1;
        let o = slic(&["check", p.to_str().unwrap()]);
        let code = o.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "{}: exit {code:?}\n{}",
            p.display(),
            stderr(&o)
        );
        if code == Some(1) {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                stderr(&o).contains(&name),
                "{}: {}",
                p.display(),
                stderr(&o)
            );
        }
    }
    assert!(seen >= 40);
}
