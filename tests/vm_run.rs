//! The `act` binary running programs: exit statuses, memory limits,
//! modules beside the script, and `act disasm` listings (snapshots).
//!
//! Every `act` run here has a timeout.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Run {
    stdout: String,
    stderr: String,
    status: i32,
}

/// Runs `act ARGS` in `dir` and waits at most `timeout`.
fn act(dir: &Path, args: &[&str], timeout: Duration) -> Run {
    act_env(dir, args, timeout, &[])
}

fn act_env(dir: &Path, args: &[&str], timeout: Duration, env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("act starts");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("act {args:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        stdout: reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
        status: status.code().unwrap_or(-1),
    }
}

/// A fresh directory holding `files`. A script (a file that is not a
/// `-module`) gets a `#!` first line, which escript and act skip, so its
/// text starts on line 2.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act_vm_test_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (file, text) in files {
        let text = if text.starts_with("-module") || text.starts_with("#!") {
            text.to_string()
        } else {
            format!("#!/usr/bin/env escript\n{text}")
        };
        std::fs::write(dir.join(file), text).expect("write");
    }
    dir
}

const SHORT: Duration = Duration::from_secs(30);

#[test]
fn main_returning_exits_zero_and_flushes_output() {
    let dir = scratch(
        "ok",
        &[("p.act", "main(_) -> io:format(\"a~nb~n\"), done.\n")],
    );
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!((r.stdout.as_str(), r.status), ("a\nb\n", 0));
}

#[test]
fn run_subcommand_passes_arguments_as_strings() {
    let dir = scratch(
        "args",
        &[("p.act", "main(A) -> io:format(\"~p~n\", [A]).\n")],
    );
    let r = act(&dir, &["run", "p.act", "x", "yz"], SHORT);
    assert_eq!(r.stdout, "[\"x\",\"yz\"]\n");
}

#[test]
fn uncaught_error_prints_erlang_words_to_stderr_and_exits_127() {
    let src = "main(_) ->\n    io:format(\"out~n\"),\n    {a, _} = id(b).\nid(X) -> X.\n";
    let dir = scratch("badmatch", &[("p.act", src)]);
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!(r.status, 127);
    assert_eq!(r.stdout, "out\n");
    assert!(
        r.stderr
            .starts_with("act: exception error: no match of right hand side value b\n"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("in function  p:main/1 (p.act, line 4)"),
        "{}",
        r.stderr
    );
}

#[test]
fn halt_ends_with_its_status_after_flushing() {
    let dir = scratch(
        "halt",
        &[(
            "p.act",
            "main(_) -> io:format(\"x\"), halt(7), io:format(\"y\").\n",
        )],
    );
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!((r.stdout.as_str(), r.status), ("x", 7));
}

#[test]
fn compile_errors_exit_127_before_running() {
    let dir = scratch(
        "compile_error",
        &[("p.act", "main(_) -> io:format(\"ran~n\"), X.\n")],
    );
    let r = act(&dir, &["p.act"], SHORT);
    // escript's status for a script with compilation errors.
    assert_eq!(r.status, 127);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("p.act:2:"), "{}", r.stderr);
}

#[test]
fn runaway_recursion_is_system_limit_under_the_memory_budget() {
    let src = "main(_) -> io:format(\"start~n\"), f(0).\nf(N) -> 1 + f(N + 1).\n";
    let dir = scratch("runaway", &[("p.act", src)]);
    let r = act(
        &dir,
        &["--max-memory", "64M", "p.act"],
        Duration::from_secs(60),
    );
    assert_eq!(r.status, 127, "{}", r.stderr);
    assert_eq!(r.stdout, "start\n");
    assert!(r.stderr.contains("system limit"), "{}", r.stderr);
}

#[test]
fn catching_system_limit_lets_the_program_go_on() {
    let src = "main(_) -> R = (catch f(0)), io:format(\"~p~n\", [element(1, element(2, R))]).\n\
               f(N) -> [N | f(N + 1)].\n";
    let dir = scratch("runaway_caught", &[("p.act", src)]);
    let r = act(
        &dir,
        &["--max-memory", "64M", "p.act"],
        Duration::from_secs(60),
    );
    assert_eq!(
        (r.stdout.as_str(), r.status),
        ("system_limit\n", 0),
        "{}",
        r.stderr
    );
}

#[test]
fn a_long_tail_recursive_loop_runs_in_constant_memory() {
    // 30 million iterations under a 16 MB budget: only possible if the
    // loop reuses its frame and allocates nothing that survives.
    let src = "main(_) -> io:format(\"~p~n\", [loop(30000000, 0)]).\n\
               loop(0, A) -> A;\nloop(N, A) -> loop(N - 1, A + 1).\n";
    let dir = scratch("tail", &[("p.act", src)]);
    let r = act(
        &dir,
        &["--max-memory", "16M", "p.act"],
        Duration::from_secs(120),
    );
    assert_eq!(
        (r.stdout.as_str(), r.status),
        ("30000000\n", 0),
        "{}",
        r.stderr
    );
}

#[test]
fn remote_calls_reach_modules_beside_the_script() {
    let main = "main(_) -> io:format(\"~p~n\", [helper:twice(21)]), io:format(\"~p~n\", [catch helper:hidden()]).\n";
    let helper = "-module(helper).\n-export([twice/1]).\ntwice(X) -> 2 * X.\nhidden() -> secret.\n";
    let dir = scratch("beside", &[("p.act", main), ("helper.act", helper)]);
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("42\n{'EXIT',{undef,"), "{}", r.stdout);
}

#[test]
fn funs_keep_working_across_modules() {
    let main = "main(_) -> F = helper:adder(5), io:format(\"~p~n\", [lists:map(F, [1, 2])]).\n";
    let helper = "-module(helper).\n-export([adder/1]).\nadder(N) -> fun(X) -> X + N end.\n";
    let dir = scratch("funs_across", &[("p.act", main), ("helper.act", helper)]);
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!(
        (r.stdout.as_str(), r.status),
        ("[6,7]\n", 0),
        "{}",
        r.stderr
    );
}

#[test]
fn returning_through_a_tail_call_into_another_module_lands_in_the_caller() {
    // g/0 calls h/0 (a frame in this module), h/0 tail-calls lists:seq
    // (another module): the return must come back here.
    let src =
        "main(_) -> io:format(\"~p~n\", [g()]).\ng() -> {h(), here}.\nh() -> lists:seq(1, 3).\n";
    let dir = scratch("tail_remote", &[("p.act", src)]);
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!(
        (r.stdout.as_str(), r.status),
        ("{[1,2,3],here}\n", 0),
        "{}",
        r.stderr
    );
}

fn disasm(name: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm");
    let r = act(&dir, &["disasm", &format!("{name}.act")], SHORT);
    assert_eq!(r.status, 0, "{}", r.stderr);
    r.stdout
}

#[test]
fn disasm_of_a_recursive_function() {
    insta::assert_snapshot!(disasm("fact"));
}

#[test]
fn disasm_of_a_comprehension_and_try() {
    insta::assert_snapshot!(disasm("shapes"));
}

#[test]
fn disasm_of_clause_selection_by_jump_table() {
    let text = disasm("dispatch");
    assert!(text.contains("select_val"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn programs_print_the_same_when_every_heap_test_collects() {
    // GC stress: a collection at every safepoint moves every term; a BIF
    // or instruction that kept a stale term would print garbage or crash.
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    for name in [
        "lists_module",
        "maps_basic",
        "closures",
        "try_catch",
        "binaries",
        "binary_patterns",
        "conversions",
        "list_comprehension",
        "classic_algorithms",
        "exceptions_nested",
        "error_caught_kinds",
        "state_machine",
        "pretty_print_wrapping",
        "factorial_bignum",
        "eng_int_ops",
        "arith_floats",
        "eng_known_floats",
        // BIF errors after the BIF collected (its argument copy went stale).
        "rx_try_catch",
        // Terms built from parsed text (erl_scan, io:read) with live Y slots.
        "lib_erl_parse",
    ] {
        let file = format!("{name}.act");
        let normal = act(&cases, &[&file], SHORT);
        // Both engines: native code collects at its own safepoints (heap
        // tests, float boxes, helpers), which must keep every root too.
        for engine in ["interp", "native"] {
            let stressed = act_env(
                &cases,
                &[&file],
                Duration::from_secs(120),
                &[("ACT_GC_STRESS", "1"), ("ACT_ENGINE", engine)],
            );
            assert_eq!(
                (&normal.stdout, normal.status),
                (&stressed.stdout, stressed.status),
                "{name} under GC stress with --engine {engine}: {}",
                stressed.stderr
            );
        }
    }
}

#[test]
fn a_script_named_like_a_library_module_does_not_hide_it() {
    let src = "main(_) -> io:format(\"~p~n\", [lists:seq(1, 3)]).\n";
    let dir = scratch("named_lists", &[("lists.act", src)]);
    let r = act(&dir, &["lists.act"], SHORT);
    assert_eq!(
        (r.stdout.as_str(), r.status),
        ("[1,2,3]\n", 0),
        "{}",
        r.stderr
    );
}

#[test]
fn output_reaches_stdout_while_the_program_still_runs() {
    // Printed, then an endless loop: the line must arrive without the
    // program ending (and so survive a kill), not wait in a buffer.
    let src = "main(_) -> io:format(\"started~n\"), loop(0).\nloop(N) -> loop(N + 1).\n";
    let dir = scratch("live_output", &[("p.act", src)]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .arg("p.act")
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("act starts");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(SHORT);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(line.as_deref(), Ok("started\n"));
}

#[test]
fn a_module_beside_the_script_that_does_not_compile_shows_its_diagnostics() {
    let dir = scratch(
        "broken_module",
        &[
            ("p.act", "main(_) -> io:format(\"~p~n\", [other:f()]).\n"),
            ("other.act", "-module(other).\n-export([f/0]).\nf() -> X.\n"),
        ],
    );
    let r = act(&dir, &["p.act"], SHORT);
    assert_eq!(r.status, 127);
    assert!(
        r.stderr
            .contains("other.act:3:8: error: variable 'X' is unbound"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("undefined function other:f/0"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_loop_reached_only_through_remote_calls_is_compiled() {
    // `?MODULE:loop(N)` is how server loops pick up new code: under the
    // default engine it must count towards compiling `loop/1` as a local
    // call does (it stayed interpreted, every call, before session 27).
    let src = "-module(rloop).\n-export([loop/1]).\n\
               main(_) -> io:format(\"~p~n\", [?MODULE:loop(200000)]).\n\
               loop(0) -> done;\nloop(N) -> ?MODULE:loop(N - 1).\n";
    let dir = scratch("remote_loop", &[("rloop.act", src)]);
    let r = act_env(
        &dir,
        &["--engine-stats", "rloop.act"],
        SHORT,
        &[("ACT_ENGINE", "auto")],
    );
    assert_eq!((r.stdout.as_str(), r.status), ("done\n", 0), "{}", r.stderr);
    let compiled: Option<u32> = r
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("native: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok());
    assert!(
        compiled >= Some(1),
        "loop/1 was not compiled:\n{}",
        r.stderr
    );
}
