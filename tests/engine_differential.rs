//! Differential test of the two engines: programs generated at random
//! (from fixed seeds, so a failure repeats) run under `--engine interp`
//! and `--engine native`, and must print the same. With Erlang installed
//! they are also checked against `escript`.
//!
//! The generator mixes what the native tier does in its own way: small
//! integers at the edge of the small range, bignums, floats kept unboxed
//! between instructions, comparisons, tuple and list building and
//! matching, `math:sqrt`, and failures (badarith, badmatch) in the middle
//! of a computation, caught and printed. A failing seed's program is
//! written next to the test's temporary directory for a case.
//!
//! Every `act` run here has a timeout.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// xorshift64*: enough randomness for programs, and no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const LITERALS: &[&str] = &[
    "0",
    "1",
    "-3",
    "7",
    "1152921504606846975",
    "-1152921504606846976",
    "(1 bsl 64)",
    "0.5",
    "-2.25",
    "1.0e300",
    "3.0",
    "-0.0",
];

/// An expression over the variables in scope, at most `depth` deep.
fn expr(r: &mut Rng, vars: &[String], depth: u32) -> String {
    if depth == 0 || r.below(4) == 0 {
        return if !vars.is_empty() && r.below(3) != 0 {
            vars[r.below(vars.len())].clone()
        } else {
            r.pick(LITERALS).to_string()
        };
    }
    let a = expr(r, vars, depth - 1);
    let b = expr(r, vars, depth - 1);
    match r.below(14) {
        0..=2 => format!("({a} + {b})"),
        3..=4 => format!("({a} - {b})"),
        5..=6 => format!("({a} * {b})"),
        7 => format!("({a} / {b})"),
        8 => format!(
            "({a} {} {b})",
            r.pick(&["div", "rem", "band", "bor", "bxor"])
        ),
        9 => format!("({a} {} {})", r.pick(&["bsl", "bsr"]), r.below(70)),
        10 => format!("math:sqrt(abs({a}))"),
        11 => format!("element({}, {{{a}, {b}}})", 1 + r.below(2)),
        12 => format!(
            "(case {a} {} {b} of true -> {a}; false -> {b} end)",
            r.pick(&["<", ">=", "==", "=:=", "/=", "=<"])
        ),
        _ => format!("float({a})"),
    }
}

/// A function `f<n>(A, B, C)` of a few bindings, matches and a result
/// that collects them; a failure anywhere is caught by the caller.
fn function(r: &mut Rng, n: usize) -> String {
    let mut vars: Vec<String> = vec!["A".into(), "B".into(), "C".into()];
    let mut body = String::new();
    for k in 0..2 + r.below(6) {
        let e = expr(r, &vars, 3);
        match r.below(5) {
            0 => {
                let f = expr(r, &vars, 2);
                let _ = writeln!(body, "    {{V{k}, W{k}}} = {{{e}, {f}}},");
                vars.push(format!("W{k}"));
            }
            1 => {
                let f = expr(r, &vars, 2);
                let _ = writeln!(body, "    [V{k} | _] = [{e}, {f}],");
            }
            _ => {
                let _ = writeln!(body, "    V{k} = {e},");
            }
        }
        vars.push(format!("V{k}"));
    }
    let tail: Vec<&String> = vars.iter().rev().take(3).collect();
    let _ = writeln!(
        body,
        "    {{{}, {}, {}}}.",
        tail[0],
        tail[1],
        expr(r, &vars, 2)
    );
    // Every variable is used, so no compiler warning changes the output.
    let used: Vec<String> = vars.iter().map(|v| format!("_ = {v}")).collect();
    format!("f{n}(A, B, C) ->\n    {},\n{body}\n", used.join(", "))
}

fn program(seed: u64, functions: usize) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut src = String::from(
        "#!/usr/bin/env escript\n-mode(compile).\n\nmain(_) ->\n    Args = [{1, 2, 3}, {0.5, -7, 2.0}, {1152921504606846975, 1, -1.5}, {(1 bsl 70), 3, 0}, {-0.0, 1.0e300, 5}],\n",
    );
    for n in 0..functions {
        let _ = writeln!(
            src,
            "    [io:format(\"~p ~p~n\", [{n}, t(fun() -> f{n}(A, B, C) end)]) || {{A, B, C}} <- Args],"
        );
    }
    src.push_str("    ok.\n\nt(F) ->\n    try F() catch C:R -> {C, R} end.\n\n");
    for n in 0..functions {
        // The uses of each variable are written before they are bound:
        // put them after the bindings instead.
        let f = function(&mut r, n);
        src.push_str(&reorder_uses(&f));
    }
    src
}

/// Moves the `_ = V` line of a generated function to just before its
/// result, where every variable is bound.
fn reorder_uses(f: &str) -> String {
    let mut lines: Vec<&str> = f.lines().collect();
    let uses = lines.remove(1);
    let last = lines.len() - 1 - lines.iter().rev().position(|l| !l.is_empty()).unwrap_or(0);
    lines.insert(last, uses);
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

struct Run {
    stdout: String,
    status: i32,
}

fn run(cmd: &str, args: &[&str], dir: &Path) -> Run {
    let mut child = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("command starts");
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd} {args:?} did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        stdout: reader.join().expect("reader"),
        status: status.code().unwrap_or(-1),
    }
}

/// The program's own lines: compiler warnings (which escript prints on
/// stdout under `-mode(compile)`, with the line quoted) are the front
/// end's business, tested elsewhere. The program prints no blank line
/// and no line starting with `%` or the file name.
fn without_warnings(out: &str) -> String {
    out.lines()
        .filter(|l| !(l.is_empty() || l.starts_with('%') || l.starts_with("diff_")))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn escript_available() -> bool {
    Command::new("escript")
        .arg("-h")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act_engine_diff_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn engines_agree_on_random_programs() {
    let dir = scratch();
    let act = env!("CARGO_BIN_EXE_act");
    let erlang = escript_available();
    for seed in 1..=8u64 {
        let name = format!("diff_{seed}.act");
        let src = program(seed, 40);
        std::fs::write(dir.join(&name), &src).expect("write");
        let interp = run(act, &["--engine", "interp", &name], &dir);
        let native = run(act, &["--engine", "native", &name], &dir);
        let where_ = dir.join(&name);
        assert_eq!(interp.status, 0, "seed {seed}: interp failed on {where_:?}");
        assert_eq!(
            interp.stdout, native.stdout,
            "seed {seed}: the engines differ on {where_:?}"
        );
        assert_eq!(interp.status, native.status, "seed {seed}: exit status");
        if erlang {
            let beam = run("escript", &[&name], &dir);
            assert_eq!(
                without_warnings(&beam.stdout),
                without_warnings(&interp.stdout),
                "seed {seed}: act differs from escript on {where_:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
