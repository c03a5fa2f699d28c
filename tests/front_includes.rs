//! Programs of several files: `-include` found beside the script and in
//! its `include/` folder, and diagnostics that name the included file
//! they are about, the same for `act check` and `act FILE`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn act(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_act"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("act starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("act {args:?} timed out");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

/// A fresh directory holding `files` (paths relative to it).
fn project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("act-front-includes-{}-{name}", std::process::id()));
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(&path, text).expect("write");
    }
    dir
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[test]
fn includes_are_found_beside_the_script_and_in_its_include_folder() {
    let dir = project(
        "found",
        &[
            (
                "main.act",
                "#!/usr/bin/env escript\n-module(main).\n-include(\"defs.hrl\").\n-include(\"point.hrl\").\n\
                 main(_) -> io:format(\"~p ~p~n\", [?ANSWER, #point{x = 1}]).\n",
            ),
            ("defs.hrl", "-define(ANSWER, 42).\n"),
            ("include/point.hrl", "-record(point, {x, y = 0}).\n"),
        ],
    );
    let script = path_text(&dir.join("main.act"));
    let run = act(&[&script]);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "42 {point,1,0}\n");
    assert!(run.status.success());
    let check = act(&["check", &script]);
    assert!(check.status.success(), "{check:?}");
    assert!(check.stderr.is_empty(), "{check:?}");
}

#[test]
fn an_error_in_an_included_file_names_that_file_and_comes_where_it_is_included() {
    let dir = project(
        "broken",
        &[
            (
                "main.act",
                "#!/usr/bin/env escript\n-include(\"broken.hrl\").\nmain(_) -> #nope{}.\n",
            ),
            ("broken.hrl", "-define(X, 1).\nbad( -> ok.\n"),
        ],
    );
    let script = path_text(&dir.join("main.act"));
    let hrl = path_text(&dir.join("broken.hrl"));
    let out = act(&["check", script.as_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(errors.len(), 2, "{stderr}");
    assert!(
        errors[0].starts_with(&format!("{hrl}:2:6: error: syntax error")),
        "{stderr}"
    );
    assert!(
        errors[1].contains("main.act:3:12: error: record nope undefined"),
        "{stderr}"
    );
    // A run stops at the syntax error with escript's line, which names
    // the script even for a line of the include, and exits 127.
    let out = act(&[script.as_str()]);
    assert_eq!(out.status.code(), Some(127), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("{script}:2:6: syntax error before: '->'\nact: There were compilation errors.\n")
    );
}
