//! The shell (`act` with no file) driven through a pipe: transcripts of
//! scripted input, snapshotted with insta. With stdin not a terminal the
//! shell prints no prompts, only each input's result.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pipes `input` into `act` (no arguments) run in `dir`; returns stdout
/// and the exit status. Killed after 60 s.
fn shell_in(dir: &Path, input: &str) -> (String, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .current_dir(dir)
        .env("ACT_HISTORY", dir.join("history"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("act starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let text = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the shell timed out on {input:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = writer.join();
    let out = child.wait_with_output().expect("output");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (text, out.status.code())
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-repl-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn shell(input: &str) -> String {
    let (text, status) = shell_in(&temp_dir("plain"), input);
    assert_eq!(
        status,
        Some(0),
        "the shell ends with status 0 at EOF:\n{text}"
    );
    text
}

#[test]
fn expressions_print_their_values_and_bindings_persist() {
    insta::assert_snapshot!(shell(
        "X = 1 + 2.\nY = X * 10, {X, Y}.\n\"abc\".\n[1, 2.5, atom, <<\"bin\">>, #{a => 1}].\nX + Y.\n"
    ));
}

#[test]
fn an_expression_may_span_lines_and_a_line_may_hold_several() {
    insta::assert_snapshot!(shell("{1,\n 2,\n 3}.\nA = 1. B = 2. A + B.\n\"a\nb\".\n"));
}

#[test]
fn a_binding_conflict_is_a_badmatch_and_keeps_the_old_binding() {
    insta::assert_snapshot!(shell("X = 1.\nX = 2.\nX.\n"));
}

#[test]
fn errors_print_like_erl_and_bindings_made_before_survive() {
    insta::assert_snapshot!(shell(
        "A = 5.\n1 + a.\nthrow(oops).\nexit(bye).\nerror(my_reason).\nB = A + 1, 1 / 0.\nA.\nB.\n"
    ));
}

#[test]
fn f_forgets_b_lists_and_v_recalls() {
    insta::assert_snapshot!(shell(
        "X = 1.\nY = {two, X}.\nb().\nf(X).\nb().\nv(2).\nv(-1).\nf().\nb().\nX.\n"
    ));
}

#[test]
fn variables_bound_in_all_case_branches_are_kept() {
    insta::assert_snapshot!(shell(
        "case 1 of 1 -> Z = one; _ -> Z = other end.\nZ.\nF = fun(Q) -> Q * 2 end.\nF(21).\n"
    ));
}

#[test]
fn functions_defined_at_the_prompt_can_be_called_and_redefined() {
    insta::assert_snapshot!(shell(
        "fac(0) -> 1; fac(N) -> N * fac(N - 1).\nfac(20).\nOld = fun(N) -> fac(N) end.\n\
         fac(N) -> {redefined, N}.\nfac(5).\nOld(5).\n\
         double(X) -> 2 * X.\nlists:map(fun double/1, [1, 2, 3]).\n"
    ));
}

#[test]
fn syntax_and_compile_errors_point_into_the_input() {
    insta::assert_snapshot!(shell("1 +.\nfoo(.\nnope(1).\nUnbound + 1.\n1 + 1.\n"));
}

#[test]
fn output_of_io_format_comes_before_the_value() {
    insta::assert_snapshot!(shell(
        "io:format(\"hello ~p~n\", [world]).\n[io:format(\"~b \", [N]) || N <- [1, 2, 3]].\n"
    ));
}

#[test]
fn halt_and_q_leave_with_their_status() {
    let dir = temp_dir("halt");
    let (text, status) = shell_in(&dir, "1.\nhalt(3).\n2.\n");
    assert_eq!((text.as_str(), status), ("1\n", Some(3)));
    // q() answers ok before leaving, as erl's does (init:stop/0 is
    // asynchronous there); halt() leaves without a word.
    let (text, status) = shell_in(&dir, "1.\nq().\n2.\n");
    assert_eq!((text.as_str(), status), ("1\nok\n", Some(0)));
    let (text, status) = shell_in(&dir, "1.\nhalt().\n2.\n");
    assert_eq!((text.as_str(), status), ("1\n", Some(0)));
}

#[test]
fn c_loads_a_module_l_reloads_it_and_m_lists_it() {
    let dir = temp_dir("load");
    let module = |body: &str| {
        let source = format!("-module(greet).\n-export([hello/1, twice/1]).\n{body}");
        std::fs::write(dir.join("greet.act"), source).expect("module file");
    };
    module("hello(N) -> {hello, N}.\ntwice(X) -> [X, X].\n");
    let script = "\
c(\"greet.act\").
greet:hello(1).
F = fun greet:hello/1.
m(greet).
";
    let (first, status) = shell_in(&dir, script);
    assert_eq!(status, Some(0));
    insta::assert_snapshot!("c_and_m", first);
    module("hello(N) -> {goodbye, N}.\ntwice(X) -> [X, X, X].\n");
    let (second, _) = shell_in(
        &dir,
        "c(greet).\ngreet:twice(1).\nl(greet).\ngreet:hello(2).\nc(\"missing.act\").\n",
    );
    insta::assert_snapshot!("c_l_reload", second);
}

#[test]
fn an_unfinished_input_at_the_end_is_an_error_not_a_hang() {
    insta::assert_snapshot!(shell("1 + 2.\n{1, 2\n"));
}

#[test]
fn help_lists_the_shell_commands() {
    let text = shell("help().\n");
    for command in [
        "b()", "f(X)", "v(N)", "c(File)", "l(Mod)", "m(Mod)", "flush()", "q()",
    ] {
        assert!(text.contains(command), "help() lacks {command}:\n{text}");
    }
}

#[test]
fn the_shell_is_a_process_that_spawns_sends_receives_and_flushes() {
    insta::assert_snapshot!(shell(
        "Me = self(), is_pid(Me).\n\
         self() ! hello, self() ! {more, 1}.\n\
         flush().\n\
         flush().\n\
         P = spawn(fun() -> receive {From, M} -> From ! {echo, M} end end), is_pid(P).\n\
         P ! {self(), hi}, sent.\n\
         receive R -> R after 5000 -> timeout end.\n\
         1 + a.\n\
         self() =:= Me.\n\
         receive after 10 -> waited end.\n"
    ));
}

#[test]
fn funs_made_before_a_redefinition_keep_their_version() {
    insta::assert_snapshot!(shell(
        "g() -> 1.\nF = fun() -> g() end.\ng() -> 2.\n{F(), g()}.\n"
    ));
}

#[test]
fn an_undefined_remote_function_is_named_like_erl_names_it() {
    insta::assert_snapshot!(shell(
        "foo:bar().\nX = [1], lists:reverse(X), lists:nosuch(X, 2).\nlists:reverse([1, 2]).\n"
    ));
}

#[test]
fn input_that_is_not_utf8_or_lacks_a_final_newline_is_still_read() {
    let (text, status) = shell_in(&temp_dir("bytes"), "X = 1.\n\"\u{fffd}\".\nX + 1.");
    assert_eq!((text.as_str(), status), ("1\n[65533]\n2\n", Some(0)));
    // Raw bytes through a file handle: an invalid byte becomes U+FFFD.
    let dir = temp_dir("raw");
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("act starts");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"\"\xff\".\nok.\n").expect("write");
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        assert!(Instant::now() < deadline, "the shell timed out");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[65533]\nok\n");
}

#[test]
fn what_a_process_prints_between_inputs_shows_without_more_input() {
    use std::io::Read;
    let dir = temp_dir("async");
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("act starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let mut chunk = [0u8; 256];
            while let Ok(n) = stdout.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        })
    };
    stdin
        .write_all(
            b"spawn(fun() -> receive after 200 -> io:format(\"late~n\") end end), started.\n",
        )
        .expect("write");
    stdin.flush().expect("flush");
    // stdin stays open: the shell is waiting for input when `late` comes.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.lock().unwrap().contains("late") {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the late output never showed: {:?}", seen.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(stdin);
    let _ = child.wait();
    let _ = reader.join();
    assert_eq!(seen.lock().unwrap().as_str(), "started\nlate\n");
}

#[test]
fn v_recalls_results_inside_expressions_too() {
    insta::assert_snapshot!(shell(
        "X = 10.\n{a, X}.\nY = v(1) + 5.\nelement(2, v(-2)) * 2.\n[v(N) || N <- [1, 3]].\nv(99).\nh(1) -> one.\nh(2).\n"
    ));
}

#[test]
fn a_cached_remote_call_site_reaches_the_reloaded_module() {
    // `caller` is loaded once; its call sites to `callee:value/0` cache
    // their target on the first run and must reach each newer version
    // after `c/1` and `l/1`, and raise undef once it is not exported.
    let dir = temp_dir("cache");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
        std::fs::write(path, text).expect("module file");
    };
    write(
        "caller.act",
        "-module(caller).\n-export([go/0, loop/1]).\n\
         go() -> callee:value().\n\
         loop(0) -> callee:value();\nloop(N) -> callee:value(), loop(N - 1).\n",
    );
    let callee =
        |answer: &str| format!("-module(callee).\n-export([value/0]).\nvalue() -> {answer}.\n");
    write("v1/callee.act", &callee("first"));
    write("v2/callee.act", &callee("second"));
    write("callee.act", &callee("third"));
    write(
        "v4/callee.act",
        "-module(callee).\n-export([other/0]).\nother() -> gone.\n",
    );
    let session = "c(caller).\nc(\"v1/callee.act\").\ncaller:go().\ncaller:loop(10000).\n\
         l(callee).\ncaller:go().\n\
         c(\"v2/callee.act\").\ncaller:go().\ncaller:loop(10000).\n\
         c(callee).\ncaller:go().\ncaller:loop(10000).\n\
         c(\"v4/callee.act\").\ncatch caller:go().\n";
    let (text, status) = shell_in(&dir, session);
    assert_eq!(status, Some(0), "{text}");
    insta::assert_snapshot!("cached_call_reload", text);
}

/// Results print as erl's shell prints them: io_lib_pretty from column 1
/// (continuation lines indented by one), at most 60 characters of the
/// term on a line, depth 30; `b()` indents under `Name = `, `h()` under
/// `-> `, and `rp/1` prints the whole term and returns ok. The expected
/// text is erl's (OTP 25) for the same input.
#[test]
fn results_print_at_erls_width_and_depth() {
    let out = shell(concat!(
        "X = lists:seq(1,40).\n",
        "Y = {aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccc, ddddddddddddd}.\n",
        "rp(lists:seq(1,40)).\n",
        "b().\n",
        "v(1).\n",
        "v(3).\n",
    ));
    let expected = concat!(
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,\n",
        " 23,24,25,26,27,28,29|...]\n",
        "{aaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbbbbb,\n",
        "                      cccccccccccccccccccc,ddddddddddddd}\n",
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,\n",
        " 23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40]\n",
        "ok\n",
        "X = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,\n",
        "     23,24,25,26,27,28,29|...]\n",
        "Y = {aaaaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbbbbb,\n",
        "                          cccccccccccccccccccc,ddddddddddddd}\n",
        "ok\n",
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,\n",
        " 23,24,25,26,27,28,29|...]\n",
        "ok\n",
    );
    assert_eq!(out, expected);
}

#[test]
fn history_results_print_under_the_arrow() {
    let out = shell("lists:seq(1,40).\nh().\n");
    assert!(
        out.contains(concat!(
            "1: lists:seq(1, 40)\n",
            "-> [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,\n",
            "    23,24,25,26,27,28,29|...]\n",
        )),
        "{out}"
    );
}

/// A clause failure in a fun typed at the prompt names the fun as erl
/// does (it was blank), and element/2 of a non-tuple blames only the
/// tuple, as erl_erts_errors does. The expected text is erl's.
#[test]
fn exceptions_in_prompt_funs_and_bifs_read_as_erls() {
    let out = shell("(fun(1) -> ok end)(2).\nelement(1, foo).\nelement(0, foo).\n");
    let expected = concat!(
        "** exception error: no function clause matching \n",
        "                    erl_eval:'-inside-an-interpreted-fun-'(2) \n",
        "** exception error: bad argument\n",
        "     in function  element/2\n",
        "        called as element(1,foo)\n",
        "        *** argument 2: not a tuple\n",
        "** exception error: bad argument\n",
        "     in function  element/2\n",
        "        called as element(0,foo)\n",
        "        *** argument 1: out of range\n",
        "        *** argument 2: not a tuple\n",
    );
    assert_eq!(out, expected);
}

/// `h()` shows a flat input as erl_pp writes it (checked against erl):
/// operators and commas spaced, literals normalised, expressions on one
/// line; an input with a block (`case`) is shown as typed.
#[test]
fn h_shows_flat_inputs_as_erl_pp_writes_them() {
    let out = shell(
        "X  =  1+2 .\nY = -X, [H|T] = [X, 16#ff, $a], {Y, not true}.\n\"abc\" \"def\".\n\
         case X of 3->three;_->other end.\nh().\n",
    );
    for line in [
        "1: X = 1 + 2\n",
        "2: Y = -X, [H | T] = [X, 255, $a], {Y, not true}\n",
        "3: \"abcdef\"\n",
        "4: case X of 3->three;_->other end\n",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
}

#[test]
fn c_reports_warnings_and_errors_as_erls_c_does() {
    let dir = temp_dir("c_report");
    std::fs::write(
        dir.join("w.act"),
        "-module(w).\n-export([f/0]).\nf() -> X = 1, ok.\ng() -> ok.\n",
    )
    .unwrap();
    std::fs::write(dir.join("syn.act"), "-module(syn).\nf( -> .\n").unwrap();
    let (text, status) = shell_in(&dir, "c(nosuch).\nc(\"nosuch\").\nc(w).\nc(syn).\n");
    assert_eq!(status, Some(0));
    assert_eq!(
        text,
        "{error,non_existing}\n\
         nosuch.act: no such file or directory\nerror\n\
         w.act:3:8: Warning: variable 'X' is unused\n\
         %    3| f() -> X = 1, ok.\n\
         %     |        ^\n\n\
         w.act:4:1: Warning: function g/0 is unused\n\
         %    4| g() -> ok.\n\
         %     | ^\n\n\
         {ok,w}\n\
         syn.act:2:4: syntax error before: '->'\n\
         %    2| f( -> .\n\
         %     |    ^\n\n\
         error\n"
    );
}
