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
        b"#!/usr/bin/env escript\nmain(_) ->\n    X = (1 + ,\n    X.\n\nf() -> Y.\n",
    );
    let name = path.to_str().expect("UTF-8 path");
    let out = act(&["check", name]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!("{name}:3:14: error: syntax error")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{name}:6:8: error: variable 'Y' is unbound")),
        "{stderr}"
    );
    assert!(
        stderr.contains("X = (1 + ,") && stderr.contains('^'),
        "{stderr}"
    );
}

#[test]
fn warnings_alone_do_not_fail_a_check() {
    let path = temp_file(
        "warn.act",
        b"#!/usr/bin/env escript\nmain(_) -> X = 1, ok.\n",
    );
    let out = act(&["check", path.to_str().expect("UTF-8 path")]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: variable 'X' is unused"));
}

#[test]
fn invalid_utf8_and_unreadable_files_are_errors_not_crashes() {
    let path = temp_file(
        "latin1.act",
        b"#!/usr/bin/env escript\nmain(_) -> \"caf\xe9\".\n",
    );
    let out = act(&["check", path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":2:16: error: the file is not valid UTF-8"),
        "{stderr}"
    );
    let out = act(&["check", "/nonexistent/file.act"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        "act: cannot read /nonexistent/file.act: No such file or directory\n"
    );
}

// ---------------------------------------------------------------------
// Options, usage errors and `act test` (helper `hour`).

#[test]
fn a_directory_or_an_empty_file_is_named_without_a_code_frame() {
    let dir = std::env::temp_dir();
    let out = act(&["check", dir.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.ends_with(": Is a directory\n"), "{stderr}");
    assert!(!stderr.contains('│'), "{stderr}");
    let empty = temp_file("empty.act", b"");
    let path = empty.to_str().expect("path");
    let check = act(&["check", path]);
    let run = act(&[path]);
    let expected = "act: Premature end of file reached\n";
    assert_eq!(String::from_utf8_lossy(&check.stderr), expected);
    assert_eq!(String::from_utf8_lossy(&run.stderr), expected);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(run.status.code(), Some(127));
}

#[test]
fn valued_options_take_their_value_after_an_equals_sign_too() {
    let script = temp_file(
        "opts.act",
        b"#!/usr/bin/env escript\nmain(_) -> io:format(\"~p~n\", [erlang:system_info(schedulers)]).\n",
    );
    let path = script.to_str().expect("path");
    for args in [
        vec!["--schedulers=1", path],
        vec!["--schedulers", "1", path],
        vec![
            "--max-memory=64M",
            "--reductions=100",
            "--schedulers=1",
            path,
        ],
    ] {
        let out = act(&args);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n", "{args:?}");
        assert!(out.status.success(), "{args:?}");
    }
}

#[test]
fn usage_errors_print_a_short_usage_line_and_exit_2() {
    for args in [
        vec!["--frobnicate"],
        vec!["--schedulers"],
        vec!["--schedulers=zero", "x.act"],
        vec!["--deterministic=yes", "x.act"],
        vec!["check"],
        vec!["test", "--update=some"],
        vec!["test", "-j", "0"],
    ] {
        let out = act(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("act: "), "{args:?}: {stderr}");
        assert!(stderr.contains("Usage: act"), "{args:?}: {stderr}");
        assert!(
            stderr.lines().count() <= 3,
            "{args:?}: the whole help: {stderr}"
        );
    }
}

/// A fresh directory of scripts for `act test`.
fn test_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write");
    }
    dir
}

#[test]
fn act_test_passes_fails_with_a_diff_and_updates() {
    let dir = test_dir(
        "runner",
        &[
            (
                "echo.act",
                "#!/usr/bin/env escript\nmain(Args) -> [io:format(\"~s~n\", [A]) || A <- Args], \
                 io:format(\"~p~n\", [io:get_line('')]).\n",
            ),
            ("echo.args", "a b\n"),
            ("echo.in", "input line\n"),
            (
                "fails.act",
                "#!/usr/bin/env escript\nmain(_) -> io:format(\"one~ntwo~n\"), halt(3).\n",
            ),
            (
                "helper.act",
                "-module(helper).\n-export([f/0]).\nf() -> 1.\n",
            ),
        ],
    );
    let d = dir.to_str().expect("path");
    // No snapshots yet: both scripts fail; the helper module is no script.
    let out = act(&["test", d]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("no snapshot"), "{stdout}");
    assert!(stdout.ends_with("0 passed, 2 failed\n"), "{stdout}");
    // --update writes them.
    let out = act(&["test", "--update", "-j", "2", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("echo.out")).expect("echo.out"),
        "a\nb\n\"input line\\n\"\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("fails.code")).expect("code"),
        "3\n"
    );
    let out = act(&["test", d]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("2 passed, 0 failed\n"));
    // A changed output fails with a unified diff (no colours: not a terminal).
    std::fs::write(dir.join("fails.out"), "one\n2\n").expect("write");
    let out = act(&["test", "--timeout=30", d]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("@@ -1,2 +1,2 @@\n one\n-2\n+two\n"),
        "{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "{stdout}");
    assert!(stdout.ends_with("1 passed, 1 failed\n"), "{stdout}");
    // --update leaves it; --update=all rewrites it.
    assert_eq!(act(&["test", "--update", d]).status.code(), Some(1));
    assert!(act(&["test", "--update=all", d]).status.success());
    assert!(act(&["test", d]).status.success());
}

#[test]
fn act_test_names_a_script_that_hangs() {
    let dir = test_dir(
        "hang",
        &[(
            "spin.act",
            "#!/usr/bin/env escript\nmain(_) -> spin(0).\nspin(N) -> spin(N + 1).\n",
        )],
    );
    let out = act(&[
        "test",
        "--update",
        "--timeout",
        "1",
        dir.to_str().expect("path"),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout.contains("spin.act: hung"), "{stdout}");
}

#[test]
fn several_files_are_all_checked() {
    let good = temp_file("good2.act", b"#!/usr/bin/env escript\nmain(_) -> ok.\n");
    let bad = temp_file("bad2.act", b"#!/usr/bin/env escript\nmain(_) -> nope().\n");
    let out = act(&[
        "check",
        good.to_str().expect("path"),
        bad.to_str().expect("path"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("function nope/0 undefined"));
}

#[test]
fn a_memory_budget_too_small_to_load_the_program_says_so() {
    let script = temp_file(
        "tiny_budget.act",
        b"#!/usr/bin/env escript\nmain(_) -> io:format(\"~p~n\", [{a, b}]).\n",
    );
    let out = act(&["--max-memory", "100", script.to_str().expect("path")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the memory budget (--max-memory) is too small to load this program"),
        "{stderr}"
    );
    assert!(!stderr.contains("literal too large"), "{stderr}");
    assert!(!out.status.success());
}

/// escript takes a script's first line for its `#!` line: any other first
/// line is left out and the lines after it are numbered one short (the
/// compiler then quotes the file's line of that number). act reads a
/// script the same way; a left-out line that held code gets a warning.
/// The expected texts are escript's (OTP 25).
#[test]
fn the_first_line_is_skipped_and_the_rest_numbered_as_escript_does() {
    let path = temp_file(
        "first_comment.act",
        b"%% a first line, which escript skips\n-mode(compile).\n\
          main(_) -> io:format(\"~p~n\", [?LINE]), X = 1.\n",
    );
    let name = path.to_str().expect("UTF-8 path");
    let out = act(&[name]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{name}:2:40: Warning: variable 'X' is unused\n\
             %    2| -mode(compile).\n\
             %     |                ^^^^^^^^^^^^^^^^^^^^^^^^^\n\n2\n"
        )
    );
    assert!(out.stderr.is_empty(), "{out:?}");
    let check = act(&["check", name]);
    assert!(
        String::from_utf8_lossy(&check.stderr).contains(":2:40: warning: variable 'X' is unused"),
        "{check:?}"
    );

    let path = temp_file(
        "first_code.act",
        b"main(_) -> io:format(\"one~n\").\nmain(_) -> io:format(\"two ~p~n\", [?LINE]).\n",
    );
    let name = path.to_str().expect("UTF-8 path");
    let out = act(&[name]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "two 1\n");
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!(
            "{name}:1: warning: line 1 is not read: escript takes a script's first line"
        )),
        "{out:?}"
    );
}
