//! What a newcomer sees on stderr when a script goes wrong, compared with
//! OTP 25's escript: the uncaught-error text with the failing BIF or
//! operator, its arguments and what was wrong with them; and the answers
//! (and exit statuses) for files that cannot run.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{Output, run_with_timeout};

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-hr-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = temp_dir().join(name);
    std::fs::write(&path, bytes).expect("temp file");
    path
}

fn run(path: &Path) -> Output {
    let dir = path.parent().expect("a directory");
    let name = path
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    run_with_timeout(
        support::act_binary(),
        &[&name],
        "",
        Some(dir),
        Duration::from_secs(60),
    )
}

/// A script whose main/1 evaluates `expr` after printing a line.
fn crash(name: &str, expr: &str) -> Output {
    let source = format!(
        "#!/usr/bin/env escript\nmain(_) ->\n    io:format(\"start~n\"),\n    R = {expr},\n    io:format(\"~p~n\", [R]).\nid(X) -> X.\nf(1) -> one.\n"
    );
    let out = run(&write(&format!("{name}.erl"), source.as_bytes()));
    assert_eq!(out.status, Some(127), "{}", out.render());
    assert_eq!(out.stdout, "start\n");
    // Past the warning that f/1 is unused.
    let at = out.stderr.find("act: exception").unwrap_or(0);
    Output {
        stderr: out.stderr[at..].to_string(),
        ..out
    }
}

#[test]
fn a_failing_bif_is_named_with_its_arguments_and_the_reason() {
    let out = crash("l2i", "list_to_integer(id(\"x\"))");
    assert_eq!(
        out.stderr,
        "act: exception error: bad argument\n  in function  list_to_integer/1\n     called as list_to_integer(\"x\")\n     *** argument 1: not a textual representation of an integer\n  in call from l2i:main/1 (l2i.erl, line 4)\n  in call from escript:run/2 (escript.erl, line 750)\n  in call from escript:start/1 (escript.erl, line 277)\n  in call from init:start_em/1 \n  in call from init:do_boot/3 \n"
    );
    let cases = [
        (
            "el",
            "element(5, id({a}))",
            "element/2",
            "element(5,{a})",
            Some("*** argument 1: out of range"),
        ),
        (
            "hd",
            "hd(id([]))",
            "hd/1",
            "hd([])",
            Some("*** argument 1: not a nonempty list"),
        ),
        (
            "tl",
            "tl(id([]))",
            "tl/1",
            "tl([])",
            Some("*** argument 1: not a nonempty list"),
        ),
        (
            "a2l",
            "atom_to_list(id(1))",
            "atom_to_list/1",
            "atom_to_list(1)",
            Some("*** argument 1: not an atom"),
        ),
        (
            "i2l",
            "integer_to_list(id(a))",
            "integer_to_list/1",
            "integer_to_list(a)",
            Some("*** argument 1: not an integer"),
        ),
        (
            "b2a",
            "binary_to_atom(id(1), utf8)",
            "binary_to_atom/2",
            "binary_to_atom(1,utf8)",
            Some("*** argument 1: not a binary"),
        ),
        (
            "send",
            "id(foo) ! x",
            "erlang:send/2",
            "erlang:send(foo,x)",
            Some("*** argument 1: invalid destination"),
        ),
        (
            "mg",
            "maps:get(k, id(#{}))",
            "map_get/2",
            "map_get(k,#{})",
            Some("*** argument 1: not present in map"),
        ),
        (
            "len",
            "length(id(a))",
            "length/1",
            "length(a)",
            Some("*** argument 1: not a list"),
        ),
        (
            "sa",
            "erlang:send_after(-1, a, x)",
            "erlang:send_after/3",
            "erlang:send_after(-1,a,x)",
            Some("*** argument 1: out of range"),
        ),
    ];
    for (name, expr, mfa, call, why) in cases {
        let out = crash(name, expr);
        let mut expected = format!("  in function  {mfa}\n     called as {call}\n");
        if let Some(why) = why {
            expected.push_str(&format!("     {why}\n"));
        }
        assert!(out.stderr.contains(&expected), "{expr}:\n{}", out.stderr);
    }
}

#[test]
fn operators_and_clauses_read_as_in_escript() {
    let out = crash("plus", "id(1) + id(a)");
    assert!(
        out.stderr.starts_with(
            "act: exception error: an error occurred when evaluating an arithmetic expression\n  in operator  +/2\n     called as 1 + a\n  in call from plus:main/1 (plus.erl, line 4)\n"
        ),
        "{}",
        out.stderr
    );
    let out = crash("divz", "id(1) div id(0)");
    assert!(
        out.stderr
            .contains("  in operator  div/2\n     called as 1 div 0\n"),
        "{}",
        out.stderr
    );
    let out = crash("fc", "f(id(3))");
    assert!(
        out.stderr.starts_with(
            "act: exception error: no function clause matching fc:f(3) (fc.erl, line 7)\n"
        ),
        "{}",
        out.stderr
    );
    let out = crash("nth", "lists:nth(5, id([1]))");
    assert!(
        out.stderr.starts_with(
            "act: exception error: no function clause matching lists:nth(4,[]) (lists.erl, line 198)\n"
        ),
        "{}",
        out.stderr
    );
    let out = crash("bm", "{a, _} = id({b, 1})");
    assert!(
        out.stderr
            .starts_with("act: exception error: no match of right hand side value {b,1}\n")
    );
    let out = crash("cc", "case id(3) of 1 -> ok end");
    assert!(
        out.stderr
            .starts_with("act: exception error: no case clause matching 3\n")
    );
    let out = crash("ud", "nomod:f(id(1))");
    assert!(out.stderr.starts_with("act: exception error: undefined function nomod:f/1\n  in function  ud:main/1 (ud.erl, line 4)\n"));
    let out = crash("tv", "receive after id(1 bsl 32) -> ok end");
    assert!(
        out.stderr
            .starts_with("act: exception error: bad receive timeout value\n"),
        "{}",
        out.stderr
    );
    let out = crash("ex", "exit(id(y))");
    assert!(out.stderr.starts_with("act: exception exit: y\n"));
    let out = crash("th", "throw(id(x))");
    assert!(out.stderr.starts_with("act: exception throw: x\n"));
}

#[test]
fn files_that_cannot_run_say_why_with_escripts_status() {
    let missing = temp_dir().join("missing.erl");
    let out = run(&missing);
    assert_eq!(out.status, Some(1), "{}", out.render());
    assert!(
        out.stderr.contains("cannot read missing.erl"),
        "{}",
        out.stderr
    );

    let dir = temp_dir().join("adir");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = run(&dir);
    assert_eq!(out.status, Some(127), "{}", out.render());
    assert!(out.stderr.contains("Is a directory"), "{}", out.stderr);

    for (name, source, status, first_line) in [
        ("empty.erl", "", 127, "act: Premature end of file reached"),
        (
            "main0.erl",
            "#!/usr/bin/env escript\nmain() -> ok.\n",
            127,
            "main0.erl:0: function main/1 undefined\n",
        ),
        (
            "eof.erl",
            "#!/usr/bin/env escript\nmain(_) -> ok",
            127,
            "eof.erl:2:12: syntax error before: \n",
        ),
        (
            "unstr.erl",
            "#!/usr/bin/env escript\nmain(_) -> io:format(\"abc).\n",
            127,
            "unstr.erl:2:22: unterminated string starting with \"abc).\\n\"\n",
        ),
        (
            "unatom.erl",
            "#!/usr/bin/env escript\nmain(_) -> 'abc.\n",
            127,
            "unatom.erl:2:12: unterminated atom starting with 'abc.\\n'\n",
        ),
        (
            "zw.erl",
            "#!/usr/bin/env escript\nmain(_) -> \u{200B} ok.\n",
            127,
            "zw.erl:2:12: error: unexpected character U+200B (zero-width space)",
        ),
        (
            "rlo.erl",
            "#!/usr/bin/env escript\nmain(_) -> \u{202E} ok.\n",
            127,
            "rlo.erl:2:12: error: unexpected character U+202E (right-to-left override)",
        ),
    ] {
        let out = run(&write(name, source.as_bytes()));
        assert_eq!(out.status, Some(status), "{name}: {}", out.render());
        assert!(out.stderr.contains(first_line), "{name}: {}", out.stderr);
        // Invisible characters are never echoed raw, and get a caret.
        assert!(
            !out.stderr.contains(['\u{200B}', '\u{202E}']),
            "{name}: {}",
            out.stderr
        );
        if name.starts_with("zw") || name.starts_with("rlo") {
            assert!(
                out.stderr.contains("            ^^^^^^^^\n"),
                "{name}: {}",
                out.stderr
            );
        }
    }
    let out = run(&write(
        "badutf.erl",
        b"#!/usr/bin/env escript\nmain(_) -> \"\xff\".\n",
    ));
    assert_eq!(out.status, Some(127), "{}", out.render());
    assert!(
        out.stderr
            .starts_with("badutf.erl:2:13: error: the file is not valid UTF-8"),
        "{}",
        out.stderr
    );
    // act check words it the same way.
    let check = support::act(&["check", &temp_dir().join("badutf.erl").to_string_lossy()]);
    assert!(
        check
            .stderr
            .contains("2:13: error: the file is not valid UTF-8"),
        "{}",
        check.stderr
    );
}

/// Runs `source` as a script under `--max-memory 100M`.
fn run_budgeted(name: &str, source: &str) -> Output {
    let path = write(name, source.as_bytes());
    let dir = path.parent().expect("a directory");
    run_with_timeout(
        support::act_binary(),
        &["--max-memory", "100M", name],
        "",
        Some(dir),
        Duration::from_secs(60),
    )
}

#[test]
fn hr_binaries_past_the_memory_budget_are_system_limit_in_the_process_that_asked() {
    // Caught: each way of making a big binary fails alone, and the
    // process goes on (a smaller binary still fits).
    let out = run_budgeted(
        "hr_budget_caught.erl",
        "#!/usr/bin/env escript\nmain(_) ->\n    B = binary:copy(<<1>>, 1000000),\n\
         T = fun(F) -> try F(), fits catch error:R -> R end end,\n\
         io:format(\"~p~n\", [T(fun() -> binary:copy(B, 500) end)]),\n\
         io:format(\"~p~n\", [T(fun() -> list_to_binary(lists:duplicate(500, B)) end)]),\n\
         io:format(\"~p~n\", [T(fun() -> iolist_to_binary([B, [B, B] | lists:duplicate(400, B)]) end)]),\n\
         Big = binary:copy(B, 40),\n\
         io:format(\"~p~n\", [T(fun() -> <<Big/binary, Big/binary, Big/binary>> end)]),\n\
         io:format(\"~p~n\", [byte_size(binary:copy(B, 20))]).\n",
    );
    assert_eq!(out.status, Some(0), "{}", out.render());
    assert_eq!(
        out.stdout,
        "system_limit\nsystem_limit\nsystem_limit\nsystem_limit\n20000000\n"
    );
    // Uncaught: the usual report and status 127, not a killed runtime.
    let out = run_budgeted(
        "hr_budget_uncaught.erl",
        "#!/usr/bin/env escript\nmain(_) ->\n    B = binary:copy(<<0>>, 500000000),\n\
         io:format(\"~p~n\", [byte_size(B)]).\n",
    );
    assert_eq!(out.status, Some(127), "{}", out.render());
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .starts_with("act: exception error: a system limit has been reached\n"),
        "{}",
        out.render()
    );
}
