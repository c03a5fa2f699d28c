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
    let dir = temp_dir();
    std::fs::write(dir.join(name), source).expect("temp file");
    run_with_timeout(
        "prlimit",
        &[
            "--as=2000000000",
            support::act_binary(),
            "--engine",
            engine,
            "--max-memory",
            "50M",
            name,
        ],
        "",
        Some(&dir),
        Duration::from_secs(120),
    )
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
        main(_) ->\n    [round(Kind) || Kind <- [atoms, lists, busy, own, atoms, lists]],\n    io:format(\"done~n\").\n\
        round(Kind) ->\n\
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
    for engine in ["interp", "auto"] {
        let out = run_budgeted("hr_flood_again.erl", source, engine);
        assert_eq!(out.status, Some(0), "{engine}: {}", out.render());
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
