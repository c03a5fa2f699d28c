//! Helpers shared by the integration tests: running `act` and `escript`
//! as child processes, always under a timeout, so a hang fails a test
//! instead of eating CI's time.

#![allow(dead_code)]

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

/// What a finished child process left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The exit status, or `None` if it was killed by a signal.
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

impl Output {
    /// The exit status, stdout and stderr as one text, the form the
    /// snapshot tests store.
    pub fn render(&self) -> String {
        let status = match (self.timed_out, self.status) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => code.to_string(),
            (false, None) => "killed by a signal".to_string(),
        };
        format!(
            "status: {status}\n--- stdout\n{}--- stderr\n{}",
            self.stdout, self.stderr
        )
    }
}

/// The `act` binary cargo built for these tests.
pub fn act_binary() -> &'static str {
    env!("CARGO_BIN_EXE_act")
}

/// Runs `program args` with `stdin` fed in, killing it after `timeout`.
pub fn run_with_timeout(
    program: &str,
    args: &[&str],
    stdin: &str,
    dir: Option<&Path>,
    timeout: Duration,
) -> Output {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    // Feed stdin and drain both pipes on their own threads, so a child that
    // writes a lot never blocks on a full pipe while we wait for it.
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = input.write_all(stdin.as_bytes());
    });
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let (status, timed_out) = match child.wait_timeout(timeout).expect("wait for child") {
        Some(status) => (status.code(), false),
        None => {
            let _ = child.kill();
            let status = child.wait().expect("wait for killed child");
            (status.code(), true)
        }
    };
    let _ = writer.join();
    let stdout = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
    Output {
        status,
        stdout,
        stderr,
        timed_out,
    }
}

/// Runs `act args` with the default timeout of the tests.
pub fn act(args: &[&str]) -> Output {
    run_with_timeout(act_binary(), args, "", None, Duration::from_secs(60))
}

/// Whether `escript` (Erlang/OTP) is installed, for reference checks.
pub fn have_escript() -> bool {
    Command::new("escript")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}
