//! Processes at scale: each test runs an `act` program from
//! `tests/processes/` under a timeout and checks what it prints. They
//! name the behaviour they check; a hang or a crash fails them.

mod support;

use std::path::Path;
use std::time::Duration;
use support::{Output, act_binary, run_with_timeout};

fn run(flags: &[&str], program: &str, args: &[&str], timeout_secs: u64) -> Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/processes")
        .join(program);
    let path = path.to_string_lossy().into_owned();
    let mut argv: Vec<&str> = flags.to_vec();
    argv.push(&path);
    argv.extend(args);
    let out = run_with_timeout(
        act_binary(),
        &argv,
        "",
        None,
        Duration::from_secs(timeout_secs),
    );
    assert!(!out.timed_out, "{program} timed out: {out:?}");
    out
}

fn assert_ok(out: &Output, stdout: &str) {
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, stdout, "{out:?}");
}

#[test]
fn a_million_spawned_processes_all_reply() {
    let out = run(&[], "million_reply.act", &["1000000"], 120);
    assert_ok(&out, "all 1000000 replied\n");
}

#[test]
fn a_token_goes_round_a_ring_of_100000() {
    let out = run(&[], "ring.act", &["100000", "3"], 120);
    assert_ok(&out, "ring of 100000: 300000 hops\n");
}

#[test]
fn endless_loops_do_not_stop_other_processes() {
    for schedulers in ["1", "2"] {
        let out = run(&["--schedulers", schedulers], "endless.act", &[], 60);
        assert_ok(&out, "20 workers done, last 200010000\n");
    }
}

#[test]
fn a_crash_takes_down_a_link_chain_of_10000() {
    let out = run(&[], "link_chain.act", &["10000"], 60);
    assert_ok(&out, "first exited: crashed\nall 10000 gone\n");
}

#[test]
fn monitors_on_dead_pids_answer_noproc() {
    let out = run(&[], "dead_monitors.act", &["10000"], 60);
    assert_ok(&out, "10000 noproc: true\n");
}

#[test]
fn request_reply_rounds_behind_10000_unmatched_messages() {
    let out = run(&[], "selective.act", &["10000", "1000"], 60);
    assert_ok(&out, "1000 rounds, 10000 junk left\n");
}

/// The reference trick: a receive for a fresh reference skips the backlog
/// queued before the reference was made. Scanning 20,000 messages in each
/// of 100,000 rounds would take about a minute; with the mark it takes
/// well under a second, so the 30 s timeout tells the two apart.
#[test]
fn fresh_reference_rounds_skip_the_backlog() {
    let out = run(&[], "selective.act", &["20000", "100000"], 30);
    assert_ok(&out, "100000 rounds, 20000 junk left\n");
}

#[test]
fn spawn_past_max_processes_raises_system_limit() {
    let out = run(&["--max-processes", "100"], "max_processes.act", &[], 60);
    // The main process is one of the 100.
    assert_ok(&out, "spawned 99 then system_limit\n");
}

#[test]
fn deterministic_runs_print_the_same() {
    let first = run(&["--deterministic"], "deterministic.act", &[], 60);
    assert_eq!(first.status, Some(0), "{first:?}");
    for _ in 0..3 {
        let again = run(&["--deterministic"], "deterministic.act", &[], 60);
        assert_eq!(again.stdout, first.stdout);
    }
}

#[test]
fn an_error_in_main_ends_the_program_with_127_whatever_else_runs() {
    let out = run(&[], "main_crash.act", &[], 60);
    assert_eq!(out.status, Some(127), "{out:?}");
    assert_eq!(out.stdout, "before\n");
    assert!(
        out.stderr.contains("no match of right hand side value 2"),
        "{out:?}"
    );
}

#[test]
fn a_budget_of_one_reduction_still_runs_every_program_right() {
    let out = run(&["--reductions", "1"], "ring.act", &["1000", "3"], 60);
    assert_ok(&out, "ring of 1000: 3000 hops\n");
}

#[test]
fn stats_are_reported_on_stderr() {
    let out = run(&["--stats"], "ring.act", &["100", "1"], 60);
    assert_ok(&out, "ring of 100: 100 hops\n");
    assert!(out.stderr.contains("processes spawned: 100"), "{out:?}");
}

#[test]
fn a_bad_runtime_option_is_a_usage_error() {
    let out = run(&["--schedulers", "0"], "ring.act", &["10", "1"], 60);
    assert_eq!(out.status, Some(2), "{out:?}");
    assert!(out.stderr.contains("--schedulers"), "{out:?}");
}
