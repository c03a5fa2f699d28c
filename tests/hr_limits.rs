//! `--max-memory` holds for messages: a process flooding a mailbox that is
//! not emptied (of atoms, which need no words, or of lists; to a process
//! waiting in a receive that never matches, or to a busy one; or its own)
//! meets the budget as `system_limit` in its send, the usual report and
//! status 127, instead of running until the operating system kills it.
//! Caught, the error leaves the program able to go on once the mailbox's
//! owner is gone: the messages' charge comes back. An error past the
//! budget is an error like any other: `catch` and `try` get its reason and
//! its stack trace (BEAM's top frame for the send), not a bare
//! `system_limit`.

mod support;

use std::path::PathBuf;
use std::time::Duration;
use support::{Output, run_with_timeout};

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-hr-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `source` under `--max-memory 50M` and an address-space limit of
/// 2 GB, so a budget that does not hold ends in an abort, not a swap.
fn run_budgeted(name: &str, source: &str, engine: &str) -> Output {
    run_budgeted_on(name, source, engine, None)
}

/// As `run_budgeted`, on `schedulers` scheduler threads (`None`: the
/// default, one per core).
fn run_budgeted_on(name: &str, source: &str, engine: &str, schedulers: Option<&str>) -> Output {
    let dir = temp_dir();
    std::fs::write(dir.join(name), source).expect("temp file");
    let mut args = vec!["--as=2000000000", support::act_binary(), "--engine", engine];
    if let Some(n) = schedulers {
        args.extend(["--schedulers", n]);
    }
    args.extend(["--max-memory", "50M", name]);
    run_with_timeout("prlimit", &args, "", Some(&dir), Duration::from_secs(120))
}

const FLOODS: [(&str, &str); 4] = [
    (
        "atoms",
        "P = spawn(fun() -> receive never -> ok end end),\n    flood(P).\nflood(P) -> P ! ok, flood(P).\n",
    ),
    (
        "lists",
        "P = spawn(fun() -> receive never -> ok end end),\n    flood(P).\nflood(P) -> P ! lists:seq(1, 1000), flood(P).\n",
    ),
    (
        "busy",
        "P = spawn(fun() -> spin(0) end),\n    flood(P).\nspin(N) -> spin(N + 1).\nflood(P) -> P ! ok, flood(P).\n",
    ),
    ("own", "flood(self()).\nflood(P) -> P ! {ok}, flood(P).\n"),
];

#[test]
fn hr_flooding_a_mailbox_is_system_limit_in_the_sender() {
    for engine in ["interp", "auto"] {
        for (kind, body) in FLOODS {
            let name = format!("hr_flood_{kind}_{engine}.erl");
            let source = format!("#!/usr/bin/env escript\nmain(_) ->\n    {body}");
            let out = run_budgeted(&name, &source, engine);
            assert_eq!(out.status, Some(127), "{kind} {engine}: {}", out.render());
            assert!(
                out.stderr
                    .starts_with("act: exception error: a system limit has been reached\n"),
                "{kind} {engine}: {}",
                out.render()
            );
            // In the sender: its send, or (lists) the making of the next
            // list, both in flood/1.
            assert!(
                out.stderr.contains("in function  erlang:send/2\n")
                    || (kind == "lists" && out.stderr.contains("flood/1")),
                "{kind} {engine}: {}",
                out.render()
            );
        }
    }
}

#[test]
fn hr_a_caught_flood_gives_its_memory_back_when_the_mailbox_goes() {
    let source = "#!/usr/bin/env escript\n\
        main(_) ->\n    [flood_round(Kind) || Kind <- [atoms, lists, busy, own, atoms, lists]],\n    io:format(\"done~n\").\n\
        flood_round(Kind) ->\n\
        \x20   P = spawn(fun() -> case Kind of busy -> spin(0); _ -> receive never -> ok end end end),\n\
        \x20   R = try flood(Kind, P) catch error:Reason -> Reason end,\n\
        \x20   exit(P, kill),\n\
        \x20   wait(P),\n\
        \x20   io:format(\"~p ~p~n\", [Kind, R]).\n\
        wait(P) -> case is_process_alive(P) of true -> receive after 10 -> wait(P) end; false -> ok end.\n\
        spin(N) -> spin(N + 1).\n\
        flood(own, _) -> self() ! ok, flood(own, self());\n\
        flood(lists, P) -> P ! lists:seq(1, 100), flood(lists, P);\n\
        flood(_, P) -> P ! ok, flood(atoms, P).\n";
    // On one scheduler the killed process has not run when its killer
    // asks `is_process_alive`: the answer waits for it to finish exiting,
    // so the next round's spawn finds its memory free.
    for (engine, schedulers) in [
        ("interp", None),
        ("auto", None),
        ("interp", Some("1")),
        ("auto", Some("1")),
    ] {
        let out = run_budgeted_on("hr_flood_again.erl", source, engine, schedulers);
        assert_eq!(
            out.status,
            Some(0),
            "{engine} {schedulers:?}: {}",
            out.render()
        );
        assert_eq!(
            out.stdout,
            "atoms system_limit\nlists system_limit\nbusy system_limit\nown system_limit\n\
             atoms system_limit\nlists system_limit\ndone\n",
            "{engine}: {}",
            out.render()
        );
    }
}

#[test]
fn hr_an_error_past_the_budget_has_its_stack_trace() {
    let source = "#!/usr/bin/env escript\n\
        main(_) ->\n\
        \x20   P = spawn(fun() -> receive never -> ok end end),\n\
        \x20   {'EXIT', {system_limit, [{erlang, send, [P, ok], _}, {_, flood, 1, _} | _]}} = (catch flood(P)),\n\
        \x20   {error, system_limit, [{erlang, send, [P, ok], _} | _]} = try flood(P) catch C:E:S -> {C, E, S} end,\n\
        \x20   {'EXIT', {system_limit, [{_, grow, 2, _} | _]}} = (catch grow([], 0)),\n\
        \x20   io:format(\"ok~n\").\n\
        flood(P) -> P ! ok, flood(P).\n\
        grow(L, N) -> grow([N | L], N + 1).\n";
    for engine in ["interp", "auto"] {
        let out = run_budgeted("hr_flood_caught.erl", source, engine);
        assert_eq!(out.status, Some(0), "{engine}: {}", out.render());
        assert_eq!(out.stdout, "ok\n", "{engine}: {}", out.render());
    }
}

/// Under an address-space limit (`prlimit --as`), the default budget
/// follows what the limit leaves beyond the space mapped at start (the
/// code, the compiler's stack, the allocator's arena), so spawning
/// processes without end is `system_limit` in `spawn/1`, not an abort
/// when the allocator is refused.
#[test]
fn hr_an_address_space_limit_is_system_limit_not_an_abort() {
    let dir = temp_dir();
    let name = "hr_spawn_as.erl";
    let source = "#!/usr/bin/env escript\n\
        main(_) ->\n\
        \x20   Ps = [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, 2000000)],\n\
        \x20   io:format(\"~p~n\", [length(Ps)]).\n";
    std::fs::write(dir.join(name), source).expect("temp file");
    let out = run_with_timeout(
        "prlimit",
        &["--as=500000000", support::act_binary(), name],
        "",
        Some(&dir),
        Duration::from_secs(120),
    );
    assert_eq!(out.status, Some(127), "{}", out.render());
    assert!(
        out.stderr
            .starts_with("act: exception error: a system limit has been reached\n"),
        "{}",
        out.render()
    );
}

/// Timers under load: with the cores busy with other programs (two busy
/// shells here) and two schedulers, forty `timer:sleep(1)` in a row end
/// before one `receive after 300`. An idle scheduler used to yield its core
/// while searching for work, and the OS gave it back only after a whole
/// time slice of the other programs (about 12 ms a sleep, so the forty took
/// some 480 ms); it now parks with the timer's timeout instead.
#[test]
fn hr_short_timers_fire_on_time_when_other_programs_load_the_cores() {
    let dir = temp_dir();
    let name = "hr_timer_load.act";
    let source = "-module(hr_timer_load).\n-export([main/1]).\n\
        main(_) ->\n\
        \x20   Self = self(),\n\
        \x20   spawn(fun() -> receive after 300 -> Self ! slow end end),\n\
        \x20   spawn(fun() -> [timer:sleep(1) || _ <- lists:seq(1, 40)], Self ! quick end),\n\
        \x20   First = receive M1 -> M1 end,\n\
        \x20   Second = receive M2 -> M2 end,\n\
        \x20   io:format(\"~p ~p~n\", [First, Second]).\n";
    std::fs::write(dir.join(name), source).expect("temp file");
    // Each busy shell spins while the test runs (`kill -0` is a builtin: it
    // ends on its own if the test dies) and is killed at the end, even on
    // a failed assertion.
    struct Busy(Vec<std::process::Child>);
    impl Drop for Busy {
        fn drop(&mut self) {
            for child in &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let busy = Busy(
        (0..2)
            .map(|_| {
                std::process::Command::new("sh")
                    .args(["-c", "while kill -0 $PPID 2>/dev/null; do :; done"])
                    .spawn()
                    .expect("busy shell")
            })
            .collect(),
    );
    let out = run_with_timeout(
        support::act_binary(),
        &["--schedulers", "2", name],
        "",
        Some(&dir),
        Duration::from_secs(30),
    );
    drop(busy);
    assert_eq!(out.stdout, "quick slow\n", "{}", out.render());
    assert_eq!(out.status, Some(0), "{}", out.render());
}
