//! The case suite: every `tests/cases/*.act` program is run by `act` and its
//! output (exit status, stdout, stderr) is snapshot-tested with insta; where
//! Erlang is installed, the same file is run by `escript` and its stdout
//! and exit status must be the same as act's.
//!
//! Markers, in `%%` comment lines anywhere in a case:
//! - `%% args: a b c` — the program's command-line arguments (both runs).
//! - `%% act-flags: --schedulers 1 --deterministic` — flags for act only.
//! - `%% differs: REASON` — act's output cannot match escript's, for the
//!   documented REASON; the escript check skips this case.
//! - `%% stdin: FILE` — the file in tests/cases/ fed as standard input
//!   (both runs; without it, stdin is empty).
//!
//! Every case that runs processes (it spawns or receives) is also run under
//! `--schedulers 1` and `--schedulers 2` and must print its snapshot under
//! both, except cases whose output depends on the interleaving: those say
//! `--deterministic` in their act-flags and run only that way.
//!
//! Adding a test case is adding a file: write the `.act`, run
//! `cargo insta test --accept --test cases` (or `INSTA_UPDATE=always`),
//! and review the new snapshot in `tests/cases/snapshots/`.
//!
//! `ACT_CASES=prefix1,prefix2` runs only the cases whose names start with
//! one of the prefixes (for working on a few cases at a time).

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{Output, act_binary, have_escript, run_with_timeout};

const TIMEOUT: Duration = Duration::from_secs(60);

/// `ERL_FLAGS` for escript runs (see `Case::run_escript`).
const ESCRIPT_LOGGER_TO_STDERR: &str =
    "ERL_FLAGS=-kernel logger [{handler,default,logger_std_h,#{config=>#{type=>standard_error}}}]";

/// Keeps escript from writing `erl_crash.dump` when a case halts with a
/// slogan (`halt("...")`): BEAM then only prints the slogan.
const NO_CRASH_DUMP: &str = "ERL_CRASH_DUMP_SECONDS=0";

struct Case {
    path: PathBuf,
    name: String,
    source: String,
}

impl Case {
    fn marker(&self, key: &str) -> Option<&str> {
        let prefix = format!("%% {key}:");
        self.source
            .lines()
            .find_map(|line| line.trim().strip_prefix(prefix.as_str()).map(str::trim))
    }

    fn args(&self) -> Vec<&str> {
        self.marker("args")
            .map(|a| a.split_whitespace().collect())
            .unwrap_or_default()
    }

    fn act_flags(&self) -> Vec<&str> {
        self.marker("act-flags")
            .map(|a| a.split_whitespace().collect())
            .unwrap_or_default()
    }

    /// The standard input of both runs (`%% stdin: FILE`).
    fn stdin(&self) -> String {
        match self.marker("stdin") {
            Some(file) => {
                let path = self.path.with_file_name(file);
                std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: stdin {file}: {e}", self.name))
            }
            None => String::new(),
        }
    }

    fn run_act(&self) -> Output {
        self.run_act_with(&[])
    }

    /// Runs act with `extra` flags before the case's own act-flags.
    fn run_act_with(&self, extra: &[&str]) -> Output {
        let file = self.file_name();
        let mut argv: Vec<&str> = extra.to_vec();
        argv.extend(self.act_flags());
        argv.push(&file);
        argv.extend(self.args());
        run_with_timeout(
            act_binary(),
            &argv,
            &self.stdin(),
            Some(self.dir()),
            TIMEOUT,
        )
    }

    /// Both VMs run a case from its directory by its file name, so the
    /// file names in their stack traces and messages (the script's path
    /// as given, on both) are the same on every checkout.
    fn dir(&self) -> &Path {
        self.path.parent().expect("a case lives in tests/cases")
    }

    fn file_name(&self) -> String {
        self.path
            .file_name()
            .expect("a case file")
            .to_string_lossy()
            .into_owned()
    }

    /// Whether the case runs processes and may be run on any number of
    /// schedulers (see the module comment).
    fn in_scheduler_matrix(&self) -> bool {
        let uses_processes = self.source.contains("spawn") || self.source.contains("receive");
        uses_processes && !self.act_flags().contains(&"--deterministic")
    }

    /// Runs escript with logger's default handler on standard_error, where
    /// act writes its logger output and crash reports (escript's default
    /// is standard_io, which would mix them into the compared stdout), and
    /// without crash dumps.
    fn run_escript(&self) -> Output {
        let file = self.file_name();
        let mut argv = vec![
            ESCRIPT_LOGGER_TO_STDERR,
            NO_CRASH_DUMP,
            "escript",
            file.as_str(),
        ];
        argv.extend(self.args());
        run_with_timeout("env", &argv, &self.stdin(), Some(self.dir()), TIMEOUT)
    }
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .expect("tests/cases exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "act"))
        .filter(|path| selected(&path.file_stem().unwrap().to_string_lossy()))
        .map(|path| Case {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            source: std::fs::read_to_string(&path).unwrap_or_default(),
            path,
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// Whether `ACT_CASES` (comma-separated name prefixes) selects case `name`.
fn selected(name: &str) -> bool {
    match std::env::var("ACT_CASES") {
        Ok(prefixes) if !prefixes.trim().is_empty() => prefixes
            .split(',')
            .any(|prefix| name.starts_with(prefix.trim())),
        _ => true,
    }
}

/// Runs `f` over the cases on a few threads, returning results in order.
fn par_map<T: Send>(cases: &[Case], f: impl Fn(&Case) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<T>>> =
        cases.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= cases.len() {
                        break;
                    }
                    *results[i].lock().unwrap() = Some(f(&cases[i]));
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every case ran"))
        .collect()
}

#[test]
fn cases_match_their_snapshots() {
    let cases = cases();
    assert!(!cases.is_empty(), "no cases found in tests/cases");
    let outputs = par_map(&cases, Case::run_act);
    check_snapshots(cases.iter().zip(outputs), "");
}

#[test]
fn process_cases_print_their_snapshot_on_one_and_on_two_schedulers() {
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(Case::in_scheduler_matrix)
        .collect();
    assert!(
        cases.len() >= 10,
        "the process cases went missing from the matrix"
    );
    for schedulers in ["1", "2"] {
        let outputs = par_map(&cases, |case| {
            case.run_act_with(&["--schedulers", schedulers])
        });
        check_snapshots(
            cases.iter().zip(outputs),
            &format!(" with --schedulers {schedulers}"),
        );
    }
}

/// `text` with the cases' directory taken out of file names (a case that
/// prints a path it built from `filename:absname` or `file:get_cwd`).
fn relative(text: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    text.replace(&format!("{}/", dir.display()), "")
}

/// Asserts each output against its case's snapshot; `label` says how the
/// cases were run, for the failure message.
fn check_snapshots<'a>(results: impl Iterator<Item = (&'a Case, Output)>, label: &str) {
    let mut failures = Vec::new();
    for (case, output) in results {
        let result = std::panic::catch_unwind(|| {
            insta::with_settings!({
                snapshot_path => "cases/snapshots",
                prepend_module_to_snapshot => false,
                description => case.source.as_str(),
                omit_expression => true,
            }, {
                insta::assert_snapshot!(case.name.as_str(), relative(&output.render()));
            });
        });
        if result.is_err() {
            failures.push(case.name.clone());
        }
    }
    assert!(
        failures.is_empty(),
        "cases whose output changed{label}: {failures:?}"
    );
}

/// The compiler warnings act does not (yet) print as escript does: OTP's
/// optimisation passes under `-mode(compile)` find that a `case` or
/// function clause is shadowed by an earlier one that always matches
/// (act gives this only for `if`), and word some format checks it makes
/// after inlining.
/// Each is dropped, with its `%` source excerpt and the blank line after
/// it, from both outputs before they are compared; every other warning
/// must be the same, where and as escript prints it.
const UNMATCHED_WARNINGS: &[&str] = &[
    "cannot match because a previous clause at line",
    "the format argument",
];

fn without_unmatched_warnings(stdout: &str) -> String {
    let mut kept = String::new();
    let mut in_warning = false;
    for line in stdout.split_inclusive('\n') {
        let is_warning_head = line.contains(": Warning: ")
            && line
                .split(':')
                .nth(1)
                .is_some_and(|n| n.trim().parse::<u32>().is_ok());
        if is_warning_head {
            in_warning = UNMATCHED_WARNINGS.iter().any(|w| line.contains(w));
            if in_warning {
                continue;
            }
        }
        if in_warning && (line.starts_with('%') || line.trim().is_empty()) {
            if line.trim().is_empty() {
                in_warning = false;
            }
            continue;
        }
        in_warning = false;
        kept.push_str(line);
    }
    kept
}

#[test]
fn cases_print_what_escript_prints() {
    if !have_escript() {
        eprintln!("escript not installed: reference check skipped");
        return;
    }
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.marker("differs").is_none())
        .collect();
    let results = par_map(&cases, |case| (case.run_act(), case.run_escript()));
    let mut failures = Vec::new();
    for (case, (act, erlang)) in cases.iter().zip(results) {
        let erlang_stdout = without_unmatched_warnings(&erlang.stdout);
        let act_stdout = without_unmatched_warnings(&act.stdout);
        if act_stdout != erlang_stdout || act.status != erlang.status {
            failures.push(format!(
                "{}: act exited {:?}, escript exited {:?}\n--- act stdout\n{}--- escript stdout\n{}",
                case.name, act.status, erlang.status, act_stdout, erlang_stdout
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from escript:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn warning_filter_drops_only_the_unmatched_kinds() {
    let stdout = "w.act:4:3: Warning: variable 'X' is unused\n%    4|   X = 1,\n%     |   ^\n\n\
                  w.act:5:3: Warning: this clause cannot match because a previous clause at line 4 always matches\n%    5|   _ -> b\n%     |   ^\n\nhi\n";
    assert_eq!(
        without_unmatched_warnings(stdout),
        "w.act:4:3: Warning: variable 'X' is unused\n%    4|   X = 1,\n%     |   ^\n\nhi\n"
    );
    assert_eq!(
        without_unmatched_warnings("a: Warning: b\n"),
        "a: Warning: b\n"
    );
}
