//! The `act` command line of the front end: `act check`, `--help`,
//! `--version`, exit statuses and where the messages go.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the built `act` with a timeout.
fn act(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("act starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("act {args:?} timed out");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-front-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("temp file");
    path
}

#[test]
fn help_and_version_print_on_stdout_and_succeed() {
    let help = act(&["--help"]);
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("act check FILE..."), "{text}");
    let version = act(&["--version"]);
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("act "));
}

#[test]
fn unknown_options_and_missing_files_are_usage_errors() {
    let out = act(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown option '--frobnicate'"));
    assert_eq!(act(&["check"]).status.code(), Some(2));
    // `act` with no arguments starts the shell (tests/repl.rs).
}

#[test]
fn check_of_a_valid_file_is_silent_and_succeeds() {
    let path = temp_file(
        "ok.act",
        b"#!/usr/bin/env escript\nmain(_) -> io:format(\"hi~n\").\n",
    );
    let out = act(&["check", path.to_str().expect("UTF-8 path")]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn check_reports_every_error_on_stderr_with_file_line_col_and_fails() {
    let path = temp_file(
        "bad.act",
        b"main(_) ->\n    X = (1 + ,\n    X.\n\nf() -> Y.\n",
    );
    let name = path.to_str().expect("UTF-8 path");
    let out = act(&["check", name]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("{name}:2:14: error: syntax error")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{name}:5:8: error: variable 'Y' is unbound")),
        "{stderr}"
    );
    assert!(
        stderr.contains("X = (1 + ,") && stderr.contains('^'),
        "{stderr}"
    );
}

#[test]
fn warnings_alone_do_not_fail_a_check() {
    let path = temp_file("warn.act", b"main(_) -> X = 1, ok.\n");
    let out = act(&["check", path.to_str().expect("UTF-8 path")]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: variable 'X' is unused"));
}

#[test]
fn invalid_utf8_and_unreadable_files_are_errors_not_crashes() {
    let path = temp_file("latin1.act", b"main(_) -> \"caf\xe9\".\n");
    let out = act(&["check", path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":1:16: error: the file is not valid UTF-8"),
        "{stderr}"
    );
    let out = act(&["check", "/nonexistent/file.act"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read file"));
}

#[test]
fn several_files_are_all_checked() {
    let good = temp_file("good2.act", b"main(_) -> ok.\n");
    let bad = temp_file("bad2.act", b"main(_) -> nope().\n");
    let out = act(&[
        "check",
        good.to_str().expect("path"),
        bad.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("function nope/0 undefined"));
}
