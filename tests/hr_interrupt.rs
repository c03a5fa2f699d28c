//! Ctrl-C in a running script (`act FILE` on a terminal) ends it at once,
//! as escript does: the process dies of SIGINT (a shell shows status
//! 130), and what the script printed before is on the terminal. (Ctrl-C
//! in the shell interrupts the evaluation and keeps the session: see
//! tests/repl_pty.rs.)

use rexpect::process::Signal;
use rexpect::process::WaitStatus;
use rexpect::reader::Options;
use rexpect::session::spawn_with_options;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn hr_ctrl_c_ends_a_running_script_with_sigint_and_its_output_shown() {
    let dir = std::env::temp_dir().join(format!("act-hr-interrupt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("spin.erl"),
        "#!/usr/bin/env escript\nmain(_) -> io:format(\"started~n\"), loop(0).\n\
         loop(N) when N rem 5000000 =:= 0 -> io:format(\"tick~n\"), loop(N + 1);\n\
         loop(N) -> loop(N + 1).\n",
    )
    .expect("temp file");
    let mut command = Command::new(env!("CARGO_BIN_EXE_act"));
    command
        .current_dir(&dir)
        .arg("spin.erl")
        .env("TERM", "xterm");
    let options = Options::new()
        .timeout_ms(Some(20_000))
        .strip_ansi_escape_codes(true);
    let mut p = spawn_with_options(command, options).expect("act starts on a pty");
    p.exp_string("started\r\n").expect("the script runs");
    p.exp_string("tick\r\n")
        .expect("the script prints as it runs");
    p.send_control('c').unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match p.process().status() {
            Some(WaitStatus::StillAlive) | None if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => break other,
        }
    };
    if !matches!(status, Some(WaitStatus::Signaled(_, Signal::SIGINT, _))) {
        let _ = p.process_mut().signal(Signal::SIGKILL);
        panic!("Ctrl-C did not end the script with SIGINT: {status:?}");
    }
}
