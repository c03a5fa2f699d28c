//! The shell on a real pseudo-terminal (rexpect): the counting prompt,
//! the continuation prompt of multi-line input, tab completion, Ctrl-C
//! interrupting a running evaluation, Ctrl-D leaving, and the history
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

    // Ctrl-C at the prompt drops an unfinished input.
    p.send_line("{dropped,").unwrap();
    p.exp_string(".. ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("10> ").expect("a fresh prompt after Ctrl-C");
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
    q.exp_eof().expect("q() leaves");
}
