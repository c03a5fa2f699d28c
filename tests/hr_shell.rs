//! erl's shell helpers in act's shell: `pwd()`, `cd/1`, `ls/0,1`, `i()`,
//! `regs()`, `m()`, `h()`, `e(N)`, driven through a pipe (no prompts)
//! and compared with what erl prints; and, on a pseudo-terminal, Tab
//! listing several candidates, completing library modules written in act
//! and their functions, and Ctrl-D inside an unfinished input.

use rexpect::reader::Options;
use rexpect::session::{PtySession, spawn_with_options};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pipes `input` into `act` (no arguments) run in `dir`; stdout and the
/// exit status. Killed after 60 s.
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
    let dir = std::env::temp_dir().join(format!("act-hr-shell-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn hr_pwd_cd_and_ls_print_as_erl_prints() {
    let dir = temp_dir("files");
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    for name in [
        "x", "yy", "zzz", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "qa", "qb", "qc",
        "qd", "qe", "qf", "qg", "qh", "qi", "qj", "qk",
    ] {
        std::fs::write(sub.join(name), "").unwrap();
    }
    let wide = dir.join("wide");
    std::fs::create_dir_all(&wide).unwrap();
    std::fs::write(wide.join("l".repeat(40)), "").unwrap();
    std::fs::write(wide.join("m".repeat(90)), "").unwrap();
    std::fs::write(wide.join("s"), "").unwrap();
    let (text, status) = shell_in(
        &dir,
        "cd(sub).\nls().\ncd(\"..\").\nls(wide).\nls(\"sub/x\").\nls(\"nope\").\n\
         cd(\"nope\").\npwd().\n",
    );
    assert_eq!(status, Some(0));
    let real = std::fs::canonicalize(&dir).unwrap();
    let text = text.replace(&real.to_string_lossy().into_owned(), "DIR");
    // Columns 5 wider than the longest name (at most 40 + 5), as many as
    // fit before column 80; a line that fills up ends before the list's
    // own newline (hence the empty line after `wide`).
    let row = |names: &[&str]| -> String {
        names.iter().map(|n| format!("{n:<8}")).collect::<String>() + "\n"
    };
    let expected = format!(
        "DIR/sub\nok\n{}{}{}ok\nDIR\nok\n{:<45}\n{:<45}\n{:<45}\n\nok\nsub/x     \nok\n\
         no such file or directory\nok\nDIR\nok\nDIR\nok\n",
        row(&["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"]),
        row(&["qa", "qb", "qc", "qd", "qe", "qf", "qg", "qh", "qi"]),
        row(&["qj", "qk", "x", "yy", "zzz"]),
        "l".repeat(40),
        "m".repeat(45),
        "s",
    );
    assert_eq!(text, expected);
}

#[test]
fn hr_i_and_regs_show_erls_tables() {
    let dir = temp_dir("procs");
    let (text, status) = shell_in(
        &dir,
        "register(my_shell, self()).\nregs().\nP = spawn(fun() -> receive stop -> ok end end).\ni().\n",
    );
    assert_eq!(status, Some(0));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "true");
    assert_eq!(lines[1], "");
    assert_eq!(lines[2], "** Registered procs on node nonode@nohost **");
    assert_eq!(
        lines[3],
        "Name                  Pid          Initial Call                      Reds Msgs"
    );
    assert!(lines[4].starts_with("my_shell              <0."), "{text}");
    assert!(lines[4].contains(" erlang:apply/2 "), "{text}");
    assert_eq!(lines[5], "");
    assert_eq!(lines[6], "** Registered ports on node nonode@nohost **");
    assert_eq!(
        lines[7],
        "Name                  Id              Command                                 "
    );
    assert_eq!(lines[8], "ok");
    assert!(
        lines[9].starts_with("<0.") && lines[9].ends_with('>'),
        "{text}"
    );
    assert_eq!(
        lines[10],
        "Pid                   Initial Call                          Heap     Reds Msgs"
    );
    assert_eq!(
        lines[11],
        "Registered            Current Function                     Stack              "
    );
    // Every process takes two lines; the pid of the one just spawned is
    // among them, and the shell's own under its registered name.
    let spawned = lines[9];
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{spawned:<21} "))),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.starts_with("my_shell ")), "{text}");
    let total = lines.iter().position(|l| l.starts_with("Total ")).unwrap();
    assert_eq!((total - 12) % 2, 0, "{text}");
    assert_eq!(lines[total + 2], "ok");
    for l in &lines[10..total + 2] {
        assert_eq!(l.chars().count(), 78, "a row of i(): {l:?}");
    }
}

#[test]
fn hr_h_lists_inputs_and_results_and_e_repeats_one() {
    let dir = temp_dir("history");
    let (text, status) = shell_in(
        &dir,
        "X = 1.\nio:format(\"hi~n\").\n{X,\n [a]}.\nbad(.\nh().\ne(2).\ne(-5).\ne(99).\nv(99).\nh().\n",
    );
    assert_eq!(status, Some(0));
    insta::assert_snapshot!(text);
}

#[test]
fn hr_m_lists_modules_and_c_helpers_run_from_scripts_too() {
    let dir = temp_dir("modules");
    std::fs::write(
        dir.join("mine.act"),
        "-module(mine).\n-export([f/0]).\nf() -> c:pwd().\n",
    )
    .unwrap();
    let (text, status) = shell_in(&dir, "mine:f().\nm().\n");
    assert_eq!(status, Some(0));
    let real = std::fs::canonicalize(&dir).unwrap();
    let real = real.to_string_lossy();
    assert!(
        text.starts_with(&format!("{real}\nok\nModule                File\n")),
        "{text}"
    );
    assert!(text.contains("lists                 preloaded\n"), "{text}");
    assert!(
        text.contains(&format!("mine                  {real}/mine.act\n")),
        "{text}"
    );
    assert!(text.ends_with("ok\n"), "{text}");
}

#[test]
fn hr_a_function_defined_at_the_prompt_hides_the_helper_of_its_name() {
    let dir = temp_dir("hide");
    let (text, status) = shell_in(
        &dir,
        "pwd() -> mine.\npwd().\nls(X) -> {mine, X}.\nls(1).\n",
    );
    assert_eq!(status, Some(0));
    assert_eq!(text, "ok\nmine\nok\n{mine,1}\n");
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

#[test]
fn hr_tab_lists_candidates_and_ctrl_d_drops_an_unfinished_input() {
    let dir = temp_dir("pty");
    let mut p = start(&dir);
    p.exp_string("1> ").expect("first prompt");
    // Tab lists the functions with their arities when several fit.
    p.send("lists:su").unwrap();
    p.send("\t").unwrap();
    p.flush().unwrap();
    p.exp_string("sublist/2")
        .expect("the candidates are listed");
    p.exp_string("sublist/3").expect("each arity");
    p.exp_string("subtract/2").unwrap();
    p.send("m").unwrap();
    p.send("\t").unwrap();
    p.flush().unwrap();
    p.send_line("[1,2]).").unwrap();
    p.exp_string("3").expect("one candidate left, completed");
    p.exp_string("2> ").unwrap();

    // Library modules written in act (stdlib/) complete as well as the
    // built-in ones, and so do their functions.
    p.send("calend").unwrap();
    p.send("\t").unwrap();
    p.flush().unwrap();
    p.exp_string("calendar:")
        .expect("the module name completed");
    p.send("is_leap").unwrap();
    p.send("\t").unwrap();
    p.flush().unwrap();
    p.exp_string("calendar:is_leap_year(")
        .expect("the function completed");
    p.send_line("2024).").unwrap();
    p.exp_string("true").unwrap();
    p.exp_string("3> ").unwrap();

    // Ctrl-D in the middle of an input: the input goes, the shell stays.
    p.send_line("{dropped,").unwrap();
    p.exp_string(".. ").unwrap();
    p.send_control('d').unwrap();
    p.exp_string("dropped (Ctrl-D)")
        .expect("says what happened");
    p.exp_string("3> ").expect("a fresh prompt");
    p.send_line("kept.").unwrap();
    p.exp_string("kept").unwrap();
    p.exp_string("4> ").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().expect("Ctrl-D at an empty prompt leaves");
}
