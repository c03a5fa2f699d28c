//! Compiler warnings and errors of a script run, differentially against
//! escript: each program of the corpus below is run as `NAME.act` both
//! under `-mode(compile)` (warnings and errors on stdout, with the line
//! quoted) and without it (one line each on stderr), by act and, where
//! Erlang is installed, by escript; stdout, stderr and the exit status
//! must be the same. (act ends a failed compile with `act: There were
//! compilation errors.` where escript says `escript: ...`.) The programs
//! do not crash, so stderr holds nothing but the compiler's messages.

mod support;

use std::path::PathBuf;
use std::time::Duration;
use support::{Output, act_binary, have_escript, run_with_timeout};

/// (name, body after the shebang and mode lines).
const CORPUS: &[(&str, &str)] = &[
    (
        "unused_vars",
        "main(Args) ->\n    X = 1,\n    F = fun(Y) -> ok end,\n    F(1),\n    [Z || Z <- Args, W <- [1]],\n    case Args of\n        [] -> A = 1;\n        _ -> A = 2\n    end,\n    io:format(\"~p~n\", [A]),\n    receive M -> ok after 0 -> ok end,\n    try Args of Q -> Q catch E:R -> ok end,\n    ok.\n",
    ),
    (
        "tabs_and_wide",
        "main(_) ->\n\tX = 1,\n    \"h\u{e9}\u{e9}\", Y = 2,\n    \"\u{65e5}\u{672c}\", Z = 3,\n    ok.\n",
    ),
    (
        "shadowing",
        "main(Args) ->\n    X = 1,\n    F = fun(X) -> X end,\n    G = fun N(0) -> 0; N(K) -> N(K - 1) end,\n    H = fun Unused() -> ok end,\n    [X || X <- Args],\n    {F(X), G(2), H()}.\n",
    ),
    (
        "unused_functions",
        "-export([x/0]).\nmain(_) -> a(), ok.\na() -> ok.\nb() -> c().\nc() -> b().\nx() -> ok.\nd(1) -> one.\nd(2) -> two.\n",
    ),
    (
        "records_types",
        "-record(used, {a}).\n-record(unused, {b}).\n-record(in_type, {c}).\n-type t() :: #in_type{}.\n-type u(A) :: [A].\n-spec main(t()) -> ok.\nmain(_) -> _ = #used{}, ok.\n",
    ),
    (
        "deprecated",
        "main(_) ->\n    _ = (catch now()),\n    _ = (catch erlang:now()),\n    _ = (catch random:uniform()),\n    ok.\n",
    ),
    (
        "nowarn_options",
        "-compile([nowarn_unused_vars, {nowarn_unused_function, [{f, 0}]}]).\nmain(_) -> X = 1, ok.\nf() -> ok.\ng() -> ok.\n",
    ),
    (
        "export_all",
        "-compile(export_all).\nmain(_) -> ok.\nf() -> ok.\n",
    ),
    (
        "ignored_values",
        "main(Args) ->\n    X = length(Args),\n    ok,\n    1,\n    {a, X},\n    [X],\n    X + 1,\n    X == 1,\n    -X,\n    length(Args),\n    self(),\n    math:sqrt(4),\n    fun lists:map/2,\n    [Y * 2 || Y <- Args],\n    [io:format(\"~p\", [Y]) || Y <- Args],\n    case X of 0 -> {zero}; _ -> other end,\n    B = {b, X},\n    C = {c, d},\n    try {t} catch _ -> ok end,\n    ok.\n",
    ),
    (
        "errors",
        "-export([nope/0]).\nmain(_) ->\n    g(),\n    X = 1,\n    io:format(\"~p~n\", [Y]),\n    case 1 of 1 -> Z = 1; _ -> ok end,\n    Z,\n    ok.\nf(1) -> ok.\nf(2) -> ok.\n",
    ),
];

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-warnings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Writes the program as `NAME.act` (`compile`: with `-mode(compile).`).
fn write(name: &str, body: &str, compile: bool) -> String {
    let file = format!("{name}_{}.act", if compile { "c" } else { "i" });
    let mode = if compile { "-mode(compile).\n" } else { "" };
    let text = format!("#!/usr/bin/env escript\n{mode}{body}");
    std::fs::write(temp_dir().join(&file), text).expect("write");
    file
}

fn run(program: &str, file: &str) -> Output {
    let mut out = run_with_timeout(
        program,
        &[file],
        "",
        Some(&temp_dir()),
        Duration::from_secs(60),
    );
    out.stderr = out.stderr.replace(
        "act: There were compilation errors.",
        "escript: There were compilation errors.",
    );
    out
}

#[test]
fn warnings_and_errors_print_as_escript_prints_them() {
    let mut failures = Vec::new();
    for (name, body) in CORPUS {
        for compile in [true, false] {
            let file = write(name, body, compile);
            let act = run(act_binary(), &file);
            if !have_escript() {
                continue;
            }
            let erlang = run("escript", &file);
            if act.stdout != erlang.stdout
                || act.stderr != erlang.stderr
                || act.status != erlang.status
            {
                failures.push(format!(
                    "{file}:\n--- act\n{}--- escript\n{}",
                    act.render(),
                    erlang.render()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn compile_mode_quotes_the_line_on_stdout_and_interpreted_mode_uses_stderr() {
    let body = "main(_) ->\n    X = 1,\n    io:format(\"hi~n\").\n";
    let compiled = run(act_binary(), &write("quote", body, true));
    assert_eq!(
        compiled.stdout,
        "quote_c.act:4:5: Warning: variable 'X' is unused\n%    4|     X = 1,\n%     |     ^\n\nhi\n"
    );
    assert_eq!(compiled.stderr, "");
    let interpreted = run(act_binary(), &write("quote", body, false));
    assert_eq!(interpreted.stdout, "hi\n");
    assert_eq!(
        interpreted.stderr,
        "quote_i.act:3:5: Warning: variable 'X' is unused\n"
    );
}

#[test]
fn a_compile_error_stops_the_script_with_status_127() {
    let body = "main(_) ->\n    io:format(\"~p~n\", [Y]).\n";
    let compiled = run(act_binary(), &write("fails", body, true));
    assert_eq!(compiled.status, Some(127));
    assert_eq!(
        compiled.stdout,
        "fails_c.act:4:24: variable 'Y' is unbound\n%    4|     io:format(\"~p~n\", [Y]).\n%     |                        ^\n\n"
    );
    assert_eq!(compiled.stderr, "escript: There were compilation errors.\n");
    let interpreted = run(act_binary(), &write("fails", body, false));
    assert_eq!(interpreted.status, Some(127));
    assert_eq!(interpreted.stdout, "");
    assert_eq!(
        interpreted.stderr,
        "fails_i.act:3:24: variable 'Y' is unbound\nescript: There were compilation errors.\n"
    );
}
