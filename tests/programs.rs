//! The showcase programs of `programs/` (ring, chain, chameneos, bigbang
//! and idle) run at small sizes: their output is snapshot-tested with the
//! timings replaced by placeholders (insta filters), each must exit 0
//! (every program checks its own result and exits non-zero when a count
//! is wrong), the same file under `escript` must print the same thing
//! after the same filtering, and `ring.act scale` must stop cleanly, with
//! its reason, at a time cap, at the process limit and at the memory
//! budget. The bench script gets a smoke test too.
//!
//! Each child process runs under a timeout; no test looks at a timing.

mod support;

use regex::Regex;
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{Output, act_binary, have_escript, run_with_timeout};

const TIMEOUT: Duration = Duration::from_secs(120);

/// Timings differ on every run: each number followed by a time unit, and
/// the numeric columns of `ring.act scale`'s table, become placeholders.
/// Used as insta filters for the snapshots and, through `filtered`, before
/// comparing act's output with escript's.
const TIMINGS: &[(&str, &str)] = &[
    (r"\b\d+(\.\d+)? (us|ns|ms|s)\b", "[T] ${2}"),
    (r"(?m)^( +\d+) +[\d.]+ +[\d.]+$", "${1} [spawn us] [hop us]"),
];

/// Chameneos' meeting counts depend on scheduling, which differs between
/// act and BEAM (act's `--deterministic` fixes its own): a creature's
/// line, its meetings and its spelled-out self-meetings, becomes a
/// placeholder. The spelled-out total (a line starting with a space) must
/// still agree: it is always 2 N.
const CHAMENEOS_COUNTS: &[(&str, &str)] = &[(r"(?m)^\d+( [a-z]+)+$", "[meetings] [self]")];

fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs")
        .join(name)
}

/// Runs `act FLAGS programs/NAME ARGS`.
fn act(flags: &[&str], name: &str, args: &[&str]) -> Output {
    let path = program(name).to_string_lossy().into_owned();
    let mut argv: Vec<&str> = flags.to_vec();
    argv.push(&path);
    argv.extend(args);
    run_with_timeout(act_binary(), &argv, "", None, TIMEOUT)
}

fn escript(name: &str, args: &[&str]) -> Output {
    let path = program(name).to_string_lossy().into_owned();
    let mut argv = vec![path.as_str()];
    argv.extend(args);
    run_with_timeout("escript", &argv, "", None, TIMEOUT)
}

fn filtered(text: &str, table: &[(&str, &str)]) -> String {
    table
        .iter()
        .fold(text.to_string(), |text, (pattern, replacement)| {
            let regex = Regex::new(pattern).expect("a valid filter");
            regex.replace_all(&text, *replacement).into_owned()
        })
}

/// Snapshots `output` with the timings filtered out.
fn assert_snapshot(name: &str, output: &Output) {
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in TIMINGS {
        settings.add_filter(pattern, *replacement);
    }
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("programs/snapshots");
    settings.bind(|| insta::assert_snapshot!(name, output.render()));
}

fn assert_exits_0(what: &str, output: &Output) {
    assert!(
        !output.timed_out && output.status == Some(0),
        "{what} must exit 0 (it checks its own result)\n{}",
        output.render()
    );
}

/// Runs a program on act with one scheduler (snapshot, exit 0) and with
/// two (the same output once timings are filtered out).
fn check_on_act(snapshot: &str, name: &str, args: &[&str]) {
    let one = act(&["--schedulers", "1"], name, args);
    assert_exits_0(name, &one);
    assert_snapshot(snapshot, &one);
    let two = act(&["--schedulers", "2"], name, args);
    assert_exits_0(name, &two);
    assert_eq!(
        filtered(&two.stdout, TIMINGS),
        filtered(&one.stdout, TIMINGS),
        "{name} prints differently with 2 schedulers"
    );
}

/// The same file under escript prints what act prints, once `table`
/// has replaced what may differ.
fn check_against_escript(name: &str, args: &[&str], act_flags: &[&str], table: &[(&str, &str)]) {
    if !have_escript() {
        eprintln!("escript not installed: reference check of {name} skipped");
        return;
    }
    let ours = act(act_flags, name, args);
    let theirs = escript(name, args);
    assert_exits_0(&format!("{name} under escript"), &theirs);
    assert_eq!(
        (ours.status, filtered(&ours.stdout, table)),
        (theirs.status, filtered(&theirs.stdout, table)),
        "{name} {args:?}: act (left) and escript (right) disagree"
    );
}

#[test]
fn ring_reports_spawn_and_hop_costs() {
    check_on_act("ring", "ring.act", &["100", "10"]);
}

#[test]
fn chain_passes_the_number_through_every_process() {
    check_on_act("chain", "chain.act", &["1000"]);
}

#[test]
fn bigbang_counts_every_ping_and_pong() {
    check_on_act("bigbang", "bigbang.act", &["20"]);
}

#[test]
fn idle_starts_every_process_and_finds_it_alive() {
    check_on_act("idle", "idle.act", &["1000"]);
}

#[test]
fn chameneos_deterministic_counts_are_stable() {
    let flags = ["--schedulers", "1", "--deterministic"];
    let first = act(&flags, "chameneos.act", &["600"]);
    assert_exits_0("chameneos.act", &first);
    assert_snapshot("chameneos", &first);
    let second = act(&flags, "chameneos.act", &["600"]);
    assert_eq!(
        second.stdout, first.stdout,
        "two deterministic runs of chameneos differ"
    );
}

#[test]
fn chameneos_has_the_same_shape_with_two_schedulers() {
    let output = act(&["--schedulers", "2"], "chameneos.act", &["600"]);
    assert_exits_0("chameneos.act", &output);
    let reference = act(
        &["--schedulers", "1", "--deterministic"],
        "chameneos.act",
        &["600"],
    );
    assert_eq!(
        filtered(&output.stdout, CHAMENEOS_COUNTS),
        filtered(&reference.stdout, CHAMENEOS_COUNTS)
    );
}

#[test]
fn programs_print_what_escript_prints() {
    check_against_escript("ring.act", &["100", "10"], &[], TIMINGS);
    check_against_escript("chain.act", &["1000"], &[], TIMINGS);
    check_against_escript("bigbang.act", &["20"], &[], TIMINGS);
    check_against_escript("idle.act", &["1000"], &[], TIMINGS);
    let chameneos: Vec<(&str, &str)> = TIMINGS.iter().chain(CHAMENEOS_COUNTS).copied().collect();
    check_against_escript("chameneos.act", &["600"], &[], &chameneos);
    check_against_escript("ring.act", &["scale", "0", "10000"], &[], TIMINGS);
}

#[test]
fn ring_scale_stops_at_the_time_cap_and_says_so() {
    // A cap of 0 s: the first step is already over it.
    let output = act(&[], "ring.act", &["scale", "0", "10000"]);
    assert_exits_0("ring.act scale", &output);
    assert_snapshot("ring_scale_cap", &output);
}

#[test]
fn ring_scale_stops_cleanly_at_the_process_limit() {
    let output = act(
        &["--max-processes", "1500"],
        "ring.act",
        &["scale", "30", "10000"],
    );
    assert_exits_0("ring.act scale under --max-processes", &output);
    assert_snapshot("ring_scale_process_limit", &output);
}

#[test]
fn ring_scale_stops_cleanly_when_memory_runs_out() {
    // Which step fails depends on the process layout; that one fails, with
    // system_limit, and the program exits normally is what matters. The
    // ring's members may report their own system_limit on stderr.
    let stopped = Regex::new(r"^stopped: the step with N=\d+ failed with system_limit$").unwrap();
    for schedulers in ["1", "2"] {
        let output = act(
            &["--schedulers", schedulers, "--max-memory", "32M"],
            "ring.act",
            &["scale", "30", "10000"],
        );
        assert_exits_0("ring.act scale under --max-memory", &output);
        let last = output.stdout.lines().last().unwrap_or_default();
        assert!(
            stopped.is_match(last),
            "with {schedulers} scheduler(s), the last line says why it stopped: {last:?}\n{}",
            output.stdout
        );
    }
}

/// Copies `programs/NAME` into a directory of its own with `from` replaced
/// by `to`, to make the program compute a wrong result on purpose.
fn mutant(name: &str, from: &str, to: &str) -> PathBuf {
    let source = std::fs::read_to_string(program(name)).expect("program exists");
    assert!(source.contains(from), "{name} no longer contains {from:?}");
    let dir = std::env::temp_dir().join(format!(
        "act-mutant-{}-{}",
        std::process::id(),
        name.trim_end_matches(".act")
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, source.replacen(from, to, 1)).expect("write mutant");
    path
}

#[test]
fn each_program_exits_nonzero_when_its_count_is_wrong() {
    let cases = [
        (
            "chain.act",
            "Next ! X + 1",
            "Next ! X + 2",
            "1000",
            "wrong result",
        ),
        (
            "bigbang.act",
            "Pings - 1, Sent + 1)",
            "Pings - 1, Sent + 2)",
            "20",
            "wrong count",
        ),
        (
            "chameneos.act",
            "Meetings + 1,",
            "Meetings + 2,",
            "600",
            "wrong total",
        ),
        (
            "idle.act",
            "wait() ->\n    receive stop -> ok end.",
            "wait() -> ok.",
            "1000",
            "wrong count",
        ),
        (
            "ring.act",
            "Last ! N * M,",
            "Last ! N * M + 1,",
            "100",
            "ring_broken",
        ),
    ];
    for (name, from, to, size, says) in cases {
        let path = mutant(name, from, to);
        let path = path.to_string_lossy().into_owned();
        let mut argv = vec!["--schedulers", "1", "--deterministic", path.as_str(), size];
        if name == "ring.act" {
            argv.push("10");
        }
        let output = run_with_timeout(act_binary(), &argv, "", None, TIMEOUT);
        assert!(
            !output.timed_out && output.status.is_some_and(|s| s != 0),
            "{name} with a wrong count must exit non-zero\n{}",
            output.render()
        );
        assert!(
            output.stdout.contains(says) || output.stderr.contains(says),
            "{name} with a wrong count must say {says:?}\n{}",
            output.render()
        );
        let _ = std::fs::remove_dir_all(Path::new(&path).parent().unwrap());
    }
}

#[test]
fn bench_script_prints_its_table_and_csv() {
    let have_python = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_python {
        eprintln!("python3 not installed: smoke test of programs/bench skipped");
        return;
    }
    let csv = std::env::temp_dir().join(format!("act-bench-smoke-{}.csv", std::process::id()));
    let csv_arg = csv.to_string_lossy().into_owned();
    let bench = program("bench").to_string_lossy().into_owned();
    let output = run_with_timeout(
        "python3",
        &[
            &bench,
            "--quick",
            "--no-beam",
            "--act",
            act_binary(),
            "--csv",
            &csv_arg,
            "--no-chart",
            "--timeout",
            "60",
        ],
        "",
        None,
        Duration::from_secs(300),
    );
    assert_exits_0("programs/bench --quick --no-beam", &output);
    let header = "| program | args | schedulers | metric | act | BEAM | act/BEAM |";
    assert!(output.stdout.starts_with(header), "{}", output.stdout);
    for row in [
        "| hello.act |  | 1 | start-up ms |",
        "| fib.act | 15 | 1 | fib ms |",
        "| ring.act | 100 10 | 2 | hop ns |",
        "| chain.act | 1000 | 2 | total ms |",
        "| bigbang.act | 20 | 1 | total ms |",
        "| chameneos.act | 600 | 2 | total ms |",
        "| idle.act | 1000 | 1 | bytes/process |",
    ] {
        assert!(
            output.stdout.contains(row),
            "no row {row:?} in\n{}",
            output.stdout
        );
    }
    assert!(
        !output.stdout.contains("error"),
        "a row failed:\n{}",
        output.stdout
    );
    let written = std::fs::read_to_string(&csv).unwrap_or_default();
    let _ = std::fs::remove_file(&csv);
    assert!(
        written.starts_with("program,args,schedulers,metric,act,beam\n")
            && written.contains("ring.act,100 10,1,hop ns,"),
        "the CSV of medians:\n{written}"
    );
}

/// Runs `programs/NAME ARGS` with `stdin` fed in, on act with `flags`
/// or, when `flags` is `None`, on escript.
fn run_game(flags: Option<&[&str]>, name: &str, args: &[&str], stdin: &str) -> Output {
    let path = program(name).to_string_lossy().into_owned();
    let mut argv: Vec<&str> = flags.unwrap_or_default().to_vec();
    argv.push(&path);
    argv.extend(args);
    let binary = if flags.is_some() {
        act_binary()
    } else {
        "escript"
    };
    run_with_timeout(binary, &argv, stdin, None, TIMEOUT)
}

/// fasta.act's output for `n`, made by act: the input of knucleotide.act
/// and revcomp.act.
fn fasta(n: &str) -> String {
    let output = run_game(Some(&[]), "fasta.act", &[n], "");
    assert_exits_0("fasta.act", &output);
    output.stdout
}

/// A Computer Language Benchmarks Game program at the size of the
/// benchmark's own test output: it exits 0 and prints the same on both
/// engines and, when Erlang is installed, what escript prints, byte for
/// byte once `table` has replaced what may differ. The time goes to
/// stderr, which is not compared.
fn check_game(name: &str, args: &[&str], stdin: &str, table: &[(&str, &str)]) {
    let interp = run_game(Some(&["--engine", "interp"]), name, args, stdin);
    assert_exits_0(&format!("{name} on the interpreter"), &interp);
    assert!(
        interp.stderr.starts_with("time: "),
        "{name} reports its time on stderr\n{}",
        interp.render()
    );
    for engine in ["native", "auto"] {
        let other = run_game(Some(&["--engine", engine]), name, args, stdin);
        assert_exits_0(&format!("{name} with --engine {engine}"), &other);
        assert_eq!(
            filtered(&other.stdout, table),
            filtered(&interp.stdout, table),
            "{name} {args:?}: --engine {engine} (left) and --engine interp (right) disagree"
        );
    }
    if !have_escript() {
        eprintln!("escript not installed: reference check of {name} skipped");
        return;
    }
    let theirs = run_game(None, name, args, stdin);
    assert_exits_0(&format!("{name} under escript"), &theirs);
    assert_eq!(
        filtered(&interp.stdout, table),
        filtered(&theirs.stdout, table),
        "{name} {args:?}: act (left) and escript (right) disagree"
    );
}

#[test]
fn game_fannkuch_redux() {
    check_game("fannkuch.act", &["7"], "", &[]);
}

#[test]
fn game_fasta() {
    check_game("fasta.act", &["1000"], "", &[]);
}

#[test]
fn game_binary_trees() {
    check_game("binary_trees.act", &["10"], "", &[]);
}

#[test]
fn game_spectral_norm() {
    check_game("spectral_norm.act", &["100"], "", &[]);
}

#[test]
fn game_pidigits() {
    check_game("pidigits.act", &["27"], "", &[]);
}

#[test]
fn game_thread_ring() {
    check_game("thread_ring.act", &["1000"], "", &[]);
}

#[test]
fn game_chameneos_redux() {
    check_game("chameneos_redux.act", &["600"], "", CHAMENEOS_COUNTS);
}

#[test]
fn game_knucleotide() {
    check_game("knucleotide.act", &[], &fasta("1000"), &[]);
}

#[test]
fn game_revcomp() {
    check_game("revcomp.act", &[], &fasta("1000"), &[]);
}

#[test]
fn everyday_workloads() {
    for (workload, n) in [
        ("trycatch", "3000"),
        ("maps", "3000"),
        ("records", "3000"),
        ("bincomp", "3000"),
        ("iolib", "200"),
        ("dict", "500"),
        ("qsort", "500"),
        ("strings", "200"),
    ] {
        check_game("everyday.act", &[workload, n], "", &[]);
    }
}
