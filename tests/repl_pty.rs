//! The shell on a real pseudo-terminal (rexpect): the counting prompt,
//! the continuation prompt of multi-line input, tab completion, Ctrl-C
//! interrupting a running evaluation, Ctrl-C at the prompt opening the
//! BREAK menu, Ctrl-G the user-switch menu, Ctrl-D leaving, and the history
//! file being read back by the next session. Every expectation has a
//! timeout, and dropping a session kills its process.

use rexpect::reader::Options;
use rexpect::session::{PtySession, spawn_with_options};
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-repl-pty-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `act` with no arguments on a fresh pseudo-terminal in `dir`.
fn start(dir: &Path) -> PtySession {
    let mut command = Command::new(env!("CARGO_BIN_EXE_act"));
    command
        .current_dir(dir)
        .env("ACT_HISTORY", dir.join("history"))
        .env("TERM", "xterm");
    let options = Options::new()
        .timeout_ms(Some(20_000))
        .strip_ansi_escape_codes(true);
    spawn_with_options(command, options).expect("act starts on a pty")
}

const UP: &str = "\x1b[A";

#[test]
fn prompt_multiline_completion_interrupt_and_history() {
    let dir = temp_dir("session");
    let mut p = start(&dir);
    p.exp_string("1> ").expect("first prompt");
    p.send_line("X = 21 * 2.").unwrap();
    p.exp_string("42").expect("value");
    p.exp_string("2> ").expect("the prompt counts up");

    // An unfinished tuple keeps reading with a continuation prompt.
    p.send_line("{X,").unwrap();
    p.exp_string(".. ").expect("continuation prompt");
    p.send_line("X}.").unwrap();
    p.exp_string("{42,42}").expect("multi-line value");
    p.exp_string("3> ").unwrap();

    // Completion of module:function and of a bound variable.
    p.send("lists:reve").unwrap();
    p.send("\t").unwrap();
    p.send_line("[1,2]).").unwrap();
    p.exp_string("[2,1]").expect("lists:reverse completed");
    p.exp_string("4> ").unwrap();
    p.send_line("LongName = 7.").unwrap();
    p.exp_string("5> ").unwrap();
    p.send("LongN").unwrap();
    p.send("\t").unwrap();
    p.send_line(" + 1.").unwrap();
    p.exp_string("8").expect("variable completed");
    p.exp_string("6> ").unwrap();

    // Ctrl-C stops an endless loop and keeps the bindings.
    p.send_line("loop() -> loop().").unwrap();
    p.exp_string("ok").unwrap();
    p.exp_string("7> ").unwrap();
    // The loop announces itself, so Ctrl-C surely comes while it runs.
    p.send_line("io:format(\"looping~n\"), loop().").unwrap();
    p.exp_string("looping\r\n").expect("the loop started");
    std::thread::sleep(std::time::Duration::from_millis(100));
    p.send_control('c').unwrap();
    p.exp_string("interrupted")
        .expect("Ctrl-C interrupts the evaluation");
    p.exp_string("8> ").unwrap();
    p.send_line("X + 1.").unwrap();
    p.exp_string("43").expect("bindings survive the interrupt");
    p.exp_string("9> ").unwrap();

    // Up arrow recalls the previous line.
    p.send(UP).unwrap();
    p.send_line("").unwrap();
    p.exp_string("43").expect("history recall");
    p.exp_string("10> ").unwrap();

    // Ctrl-C at the prompt opens erl's BREAK menu and drops an
    // unfinished input; `c` continues.
    p.send_line("{dropped,").unwrap();
    p.exp_string(".. ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("BREAK: (a)bort (A)bort with dump (c)ontinue")
        .expect("the BREAK menu");
    p.send_line("c").unwrap();
    p.exp_string("10> ")
        .expect("a fresh prompt after continuing");
    p.send_line("kept.").unwrap();
    p.exp_string("kept").unwrap();
    p.exp_string("11> ").unwrap();

    p.send_control('d').unwrap();
    p.exp_eof().expect("Ctrl-D leaves");

    let history = std::fs::read_to_string(dir.join("history")).expect("history file");
    assert!(history.contains("X = 21 * 2."), "history: {history}");

    // The next session finds the history.
    let mut q = start(&dir);
    q.exp_string("1> ").unwrap();
    q.send_line("X = 5.").unwrap();
    q.exp_string("2> ").unwrap();
    q.send(UP).unwrap();
    q.send(UP).unwrap();
    q.send_line("").unwrap();
    q.exp_string("kept")
        .expect("a line of the last session, recalled: kept.");
    q.send_line("q().").unwrap();
    q.exp_string("ok").expect("q() answers ok");
    q.exp_eof().expect("q() leaves");
}

#[test]
fn ctrl_g_opens_the_user_switch_menu_and_ctrl_c_the_break_menu() {
    let dir = temp_dir("menus");
    let mut p = start(&dir);
    p.exp_string("1> ").expect("first prompt");
    p.send_line("X = 1.").unwrap();
    p.exp_string("2> ").unwrap();
    p.send_control('g').unwrap();
    p.exp_string("User switch command")
        .expect("Ctrl-G opens the menu");
    p.exp_string(" --> ").unwrap();
    p.send_line("h").unwrap();
    p.exp_string("  c [nn]            - connect to job")
        .expect("h shows erl's help");
    p.exp_string("  q                 - quit erlang").unwrap();
    p.exp_string(" --> ").unwrap();
    p.send_line("j").unwrap();
    p.exp_string("   1* {shell,start,[init]}")
        .expect("j lists the job");
    // A new shell has its own bindings. (The editor redraws the prompt
    // as keys come, so the end of the echoed line is what tells that the
    // line was taken: keys sent before that could be read with it.)
    p.send_line("s").unwrap();
    p.exp_string("s\r\n").unwrap();
    p.send_line("c").unwrap();
    p.exp_string("1> ").expect("the new shell counts from 1");
    p.send_line("X.").unwrap();
    p.exp_string("variable 'X' is unbound").unwrap();
    p.exp_string("2> ").unwrap();
    // Interrupting job 1 kills its evaluator; its bindings stay.
    p.send_control('g').unwrap();
    p.exp_string(" --> ").unwrap();
    p.send_line("i 1").unwrap();
    p.exp_string("i 1\r\n").unwrap();
    p.send_line("c 9").unwrap();
    p.exp_string("Unknown job").unwrap();
    p.exp_string(" --> ").unwrap();
    p.send_line("c 1").unwrap();
    p.exp_string("** exception exit: killed").unwrap();
    p.exp_string("2> ").expect("back in job 1");
    p.send_line("X + 1.").unwrap();
    p.exp_string("2").expect("job 1 kept X");
    p.exp_string("3> ").unwrap();
    // Ctrl-C: the BREAK menu; a letter it does not know shows it again.
    p.send_control('c').unwrap();
    p.exp_string("(l)oaded (v)ersion (k)ill (D)b-tables (d)istribution")
        .expect("the BREAK menu");
    p.send_line("x").unwrap();
    p.exp_string("Invalid option 'x'").unwrap();
    p.exp_string("(d)istribution").expect("the menu again");
    p.send_line("a").unwrap();
    p.exp_eof().expect("a aborts");

    // q in the user-switch menu leaves too.
    let mut q = start(&dir);
    q.exp_string("1> ").unwrap();
    q.send_control('g').unwrap();
    q.exp_string(" --> ").unwrap();
    q.send_line("q").unwrap();
    q.exp_eof().expect("q quits");
}
