//! The front end on the test programs of tests/syntax: every valid program
//! parses and checks cleanly (and is valid Erlang, per `escript -s`), with
//! its printed AST snapshotted; every invalid program gets diagnostics,
//! snapshotted as rendered.

use act::syntax::{self, Severity, print};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn programs(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/syntax")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/syntax exists")
        .map(|entry| entry.expect("readable directory").path())
        .filter(|path| path.extension().is_some_and(|e| e == "act"))
        .collect();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn valid_programs_parse_and_check_without_errors_and_print_as_snapshotted() {
    let files = programs("valid");
    assert!(
        files.len() >= 40,
        "at least 40 valid programs, found {}",
        files.len()
    );
    for path in files {
        let source = std::fs::read_to_string(&path).expect("UTF-8 test program");
        let (module, parse_errors) = syntax::parse_module(&source);
        let diagnostics = syntax::check_source(&source);
        let errors: Vec<_> = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert!(
            parse_errors.is_empty() && errors.is_empty(),
            "{}:\n{}",
            path.display(),
            syntax::render(&diagnostics, &stem(&path), &source)
        );
        let warnings = syntax::render(&diagnostics, &stem(&path), &source);
        assert!(
            warnings.is_empty(),
            "valid programs are warning-free: {warnings}"
        );
        insta::with_settings!({
            snapshot_path => "syntax/snapshots/valid",
            prepend_module_to_snapshot => false,
            description => source.clone(),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(stem(&path), print::module_to_string(&module));
        });
    }
}

#[test]
fn invalid_programs_report_diagnostics_as_snapshotted() {
    let files = programs("invalid");
    assert!(
        files.len() >= 30,
        "at least 30 invalid programs, found {}",
        files.len()
    );
    for path in files {
        let name = stem(&path);
        let source = std::fs::read_to_string(&path).expect("UTF-8 test program");
        let diagnostics = syntax::check_source(&source);
        assert!(!diagnostics.is_empty(), "{name}: expected diagnostics");
        let file_name = format!("{name}.act");
        let rendered = syntax::render(&diagnostics, &file_name, &source);
        assert!(rendered.starts_with(&format!("{file_name}:")), "{rendered}");
        insta::with_settings!({
            snapshot_path => "syntax/snapshots/invalid",
            prepend_module_to_snapshot => false,
            description => source.clone(),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name, rendered);
        });
    }
}

/// Runs `escript -s FILE` (syntax check only) with a timeout; `None` when
/// escript is not installed.
fn escript_accepts(path: &Path) -> Option<Result<(), String>> {
    let mut child = match Command::new("escript")
        .arg("-s")
        .arg(path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(_) => return None,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let output = child.wait_with_output().ok()?;
                return Some(if status.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "{}{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    ))
                });
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(Err("escript timed out".to_string()));
            }
        }
    }
}

#[test]
fn valid_programs_are_valid_erlang_for_escript() {
    let files = programs("valid");
    let (left, right) = files.split_at(files.len() / 2);
    // Two at a time: the machine is shared.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let runners: Vec<_> = [left, right]
            .into_iter()
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|path| match escript_accepts(path) {
                            None | Some(Ok(())) => None,
                            Some(Err(message)) => Some(format!("{}: {message}", path.display())),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        runners
            .into_iter()
            .flat_map(|runner| runner.join().expect("escript runner"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "escript rejects:\n{}",
        failures.join("\n")
    );
}

/// Runs a command with a timeout; `None` when it cannot start.
fn run_with_timeout(command: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Read stdout on a thread so a large output cannot fill the pipe.
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} timed out");
            }
        }
    };
    let stdout = reader.join().ok()?;
    let mut stderr = Vec::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = std::io::Read::read_to_end(&mut pipe, &mut stderr);
    }
    Some(std::process::Output {
        status,
        stdout,
        stderr,
    })
}

#[test]
fn valid_programs_parse_to_the_same_trees_as_erlangs_own_parser() {
    let files = programs("valid");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax/erl_print.escript");
    let Some(output) = run_with_timeout(
        Command::new("escript").arg(&script).args(&files),
        Duration::from_secs(120),
    ) else {
        eprintln!("escript is not installed: skipping the comparison with erl_parse");
        return;
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut sections = text.split("==> ").skip(1);
    for path in &files {
        let section = sections.next().expect("one section per file");
        let (name, erlang) = section.split_once('\n').expect("a header line");
        assert_eq!(Path::new(name), path.as_path());
        let source = std::fs::read_to_string(path).expect("UTF-8 test program");
        let (module, _) = syntax::parse_module(&source);
        let ours = print::module_to_string(&module);
        assert_eq!(
            ours,
            erlang,
            "{} parses differently from erl_parse",
            path.display()
        );
    }
}
