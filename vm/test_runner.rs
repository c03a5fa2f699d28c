//! `act test [PATH...]`: snapshot tests of a user's own scripts.
//!
//! Every script (`.act` with a `main/1`) under the paths runs as
//! `act --deterministic NAME.act ARGS`, with `NAME.args` as its arguments
//! and `NAME.in` as its standard input where present; its stdout must be
//! `NAME.out` and its exit status `NAME.code` (0 when absent). A mismatch
//! prints a unified diff; `--update` writes missing snapshots and
//! `--update=all` rewrites them all. Scripts run in parallel (`-j N`),
//! each under a timeout, and results print in path order.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const HELP: &str = "\
Usage: act test [OPTIONS] [PATH...]

Runs every script (a .act file with main/1) under the PATHs (default: .)
with --deterministic, NAME.args as its arguments and NAME.in as its
standard input where present, and compares its stdout with NAME.out and
its exit status with NAME.code (0 when there is no NAME.code).

Options:
  --update         write the snapshots of scripts that have none
  --update=all     rewrite every snapshot from this run
  -j N, --jobs N   run N scripts at a time (default: one per core)
  --timeout SECS   a script still running after SECS fails as hung (default 60)
  -h, --help       print this help
";

#[derive(Clone, Copy, PartialEq)]
enum Update {
    No,
    Missing,
    All,
}

struct Options {
    paths: Vec<String>,
    update: Update,
    jobs: usize,
    timeout: Duration,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        paths: Vec::new(),
        update: Update::No,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        timeout: Duration::from_secs(60),
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (arg, None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            if let Some(v) = inline {
                return Ok(v.to_string());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("'{name}' needs {what}"))
        };
        match name {
            "-h" | "--help" => return Ok(None),
            "--update" => {
                options.update = match inline {
                    None => Update::Missing,
                    Some("all") => Update::All,
                    Some(other) => {
                        return Err(format!(
                            "--update={other}: expected --update or --update=all"
                        ));
                    }
                }
            }
            "-j" | "--jobs" => {
                let v = value("a number")?;
                options.jobs = match v.parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(format!("{name}: expected a positive number, found `{v}`")),
                };
            }
            "--timeout" => {
                let v = value("a number of seconds")?;
                options.timeout = match v.parse::<f64>() {
                    Ok(s) if s > 0.0 && s < 1e9 => Duration::from_secs_f64(s),
                    _ => return Err(format!("--timeout: expected seconds, found `{v}`")),
                };
            }
            _ if arg.starts_with('-') && arg.len() > 1 => {
                return Err(format!("unknown option '{arg}' for 'act test'"));
            }
            _ => options.paths.push(arg.to_string()),
        }
        i += 1;
    }
    if options.paths.is_empty() {
        options.paths.push(".".to_string());
    }
    Ok(Some(options))
}

/// `act test ARGS`: the exit status is 1 when any script failed, 2 for a
/// usage error.
pub fn main(args: &[String]) -> ExitCode {
    let options = match parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!(
                "act: {message}\nUsage: act test [--update[=all]] [-j N] [--timeout SECS] [PATH...]"
            );
            return ExitCode::from(2);
        }
    };
    let mut scripts = Vec::new();
    for path in &options.paths {
        let p = Path::new(path);
        if !p.exists() {
            eprintln!("act: {path}: no such file or directory");
            return ExitCode::from(2);
        }
        collect(p, &mut scripts);
    }
    scripts.sort();
    scripts.dedup();
    if scripts.is_empty() {
        println!("no scripts found under {}", options.paths.join(" "));
        return ExitCode::SUCCESS;
    }
    let color = std::io::stdout().is_terminal();
    let results = run_all(&scripts, &options);
    let (mut passed, mut failed) = (0, 0);
    let mut out = std::io::stdout().lock();
    for (script, result) in scripts.iter().zip(results) {
        let report = judge(script, result, options.update, color);
        let _ = out.write_all(report.text.as_bytes());
        if report.ok {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    let _ = writeln!(out, "{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The scripts under `path`: `.act` files that define `main/1`.
fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            collect(&entry.path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "act") && is_script(path) {
        out.push(path.to_path_buf());
    }
}

fn is_script(path: &Path) -> bool {
    let Ok(source) = std::fs::read_to_string(path) else {
        return true;
    };
    let (module, _) = act::syntax::parse_module(&source);
    let has_main = module.forms.iter().any(|f| {
        matches!(f, act::syntax::ast::Form::Function(func) if func.name == "main" && func.arity == 1)
    });
    // A file that does not parse runs too: its error is the test's result.
    has_main || module.forms.is_empty() && !source.trim().is_empty()
}

/// What one run left.
struct Run {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    hung: bool,
    elapsed: Duration,
}

fn sibling(script: &Path, ext: &str) -> PathBuf {
    script.with_extension(ext)
}

fn run_all(scripts: &[PathBuf], options: &Options) -> Vec<std::io::Result<Run>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<std::io::Result<Run>>>> = scripts
        .iter()
        .map(|_| std::sync::Mutex::new(None))
        .collect();
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.min(scripts.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(script) = scripts.get(i) else { break };
                    let result = run_one(script, options.timeout);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|s| {
            s.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| Err(std::io::Error::other("not run")))
        })
        .collect()
}

fn run_one(script: &Path, timeout: Duration) -> std::io::Result<Run> {
    let exe = std::env::current_exe()?;
    let args: Vec<String> = std::fs::read_to_string(sibling(script, "args"))
        .map(|a| a.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let input = sibling(script, "in");
    let stdin = if input.exists() {
        Stdio::from(std::fs::File::open(&input)?)
    } else {
        Stdio::null()
    };
    let started = Instant::now();
    let mut child = Command::new(exe)
        .arg("--deterministic")
        .arg(script)
        .args(&args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut buf);
        }
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut buf);
        }
        buf
    });
    let mut hung = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() >= timeout {
            hung = true;
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Run {
        status: status.code(),
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        hung,
        elapsed: started.elapsed(),
    })
}

struct Report {
    ok: bool,
    text: String,
}

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A script's stderr, shortened to a few indented lines.
fn stderr_excerpt(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().collect();
    let mut out: String = lines.iter().take(8).map(|l| format!("    {l}\n")).collect();
    if lines.len() > 8 {
        out.push_str(&format!("    ... ({} more lines)\n", lines.len() - 8));
    }
    out
}

fn judge(script: &Path, result: std::io::Result<Run>, update: Update, color: bool) -> Report {
    let name = script.display();
    let fail = |why: String| Report {
        ok: false,
        text: format!("{} {name}: {why}\n", paint(color, "31", "FAIL")),
    };
    let run = match result {
        Ok(run) => run,
        Err(e) => return fail(format!("could not run: {e}")),
    };
    if run.hung {
        return fail(format!(
            "hung: still running after {:.1}s (killed; see --timeout)",
            run.elapsed.as_secs_f64()
        ));
    }
    let Some(status) = run.status else {
        return fail(format!(
            "crashed: killed by a signal\n{}",
            stderr_excerpt(&run.stderr)
        ));
    };
    if status == 70 {
        return fail(format!(
            "crashed: act itself failed (status 70)\n{}",
            stderr_excerpt(&run.stderr)
        ));
    }
    let out_path = sibling(script, "out");
    let code_path = sibling(script, "code");
    let expected_out = std::fs::read(&out_path).ok();
    let expected_code = std::fs::read_to_string(&code_path)
        .ok()
        .map(|c| c.trim().parse::<i32>().unwrap_or(-1));
    let write_snapshot = || -> std::io::Result<()> {
        std::fs::write(&out_path, &run.stdout)?;
        if status != 0 {
            std::fs::write(&code_path, format!("{status}\n"))?;
        } else if code_path.exists() {
            std::fs::remove_file(&code_path)?;
        }
        Ok(())
    };
    let stderr_note = if run.stderr.is_empty() {
        String::new()
    } else {
        format!(
            "  {name} printed to stderr:\n{}",
            stderr_excerpt(&run.stderr)
        )
    };
    let Some(expected_out) = expected_out else {
        if update == Update::No {
            return fail(format!(
                "no snapshot {} (write it with act test --update)",
                out_path.display()
            ));
        }
        return match write_snapshot() {
            Ok(()) => Report {
                ok: true,
                text: format!(
                    "{} {name}: snapshot written\n{stderr_note}",
                    paint(color, "33", "NEW ")
                ),
            },
            Err(e) => fail(format!("cannot write the snapshot: {e}")),
        };
    };
    let expected_code = expected_code.unwrap_or(0);
    if expected_out == run.stdout && expected_code == status {
        return Report {
            ok: true,
            text: if stderr_note.is_empty() {
                String::new()
            } else {
                format!("{} {name}\n{stderr_note}", paint(color, "32", "ok  "))
            },
        };
    }
    if update == Update::All {
        return match write_snapshot() {
            Ok(()) => Report {
                ok: true,
                text: format!("{} {name}: snapshot updated\n", paint(color, "33", "UPD ")),
            },
            Err(e) => fail(format!("cannot write the snapshot: {e}")),
        };
    }
    let mut why = String::new();
    if expected_code != status {
        why.push_str(&format!("exit status {status}, expected {expected_code}\n"));
    }
    if expected_out != run.stdout {
        why.push_str("stdout differs from the snapshot:\n");
        why.push_str(&unified_diff(
            &String::from_utf8_lossy(&expected_out),
            &String::from_utf8_lossy(&run.stdout),
            &out_path.display().to_string(),
            color,
        ));
    }
    why.push_str(&stderr_note);
    fail(why.trim_end().to_string())
}

/// A unified diff (3 lines of context) from `old` (the snapshot) to `new`.
pub fn unified_diff(old: &str, new: &str, name: &str, color: bool) -> String {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = diff_lines(&a, &b);
    let mut out = format!(
        "{}\n{}\n",
        paint(color, "31", &format!("--- {name}")),
        paint(color, "32", "+++ this run")
    );
    const CONTEXT: usize = 3;
    // Group the edits into hunks with their context.
    let mut i = 0;
    while i < ops.len() {
        if matches!(ops[i], Op::Same(..)) {
            i += 1;
            continue;
        }
        let start = i.saturating_sub(CONTEXT);
        let mut end = i;
        let mut last_change = i;
        while end < ops.len() {
            if !matches!(ops[end], Op::Same(..)) {
                last_change = end;
            } else if end - last_change > 2 * CONTEXT {
                break;
            }
            end += 1;
        }
        let end = (last_change + CONTEXT + 1).min(ops.len());
        let (mut a_start, mut b_start) = (0, 0);
        for op in &ops[..start] {
            match op {
                Op::Same(..) => {
                    a_start += 1;
                    b_start += 1;
                }
                Op::Del(_) => a_start += 1,
                Op::Add(_) => b_start += 1,
            }
        }
        let a_len = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Add(_)))
            .count();
        let b_len = ops[start..end]
            .iter()
            .filter(|o| !matches!(o, Op::Del(_)))
            .count();
        out.push_str(&paint(
            color,
            "36",
            &format!("@@ -{},{a_len} +{},{b_len} @@", a_start + 1, b_start + 1),
        ));
        out.push('\n');
        for op in &ops[start..end] {
            let (mark, line, code) = match op {
                Op::Same(l) => (' ', *l, ""),
                Op::Del(l) => ('-', *l, "31"),
                Op::Add(l) => ('+', *l, "32"),
            };
            let text = format!("{mark}{}", line.strip_suffix('\n').unwrap_or(line));
            out.push_str(&if code.is_empty() {
                text
            } else {
                paint(color, code, &text)
            });
            out.push('\n');
            if !line.ends_with('\n') {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        i = end;
    }
    out
}

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// A shortest line edit script (longest common subsequence); past a few
/// million cells it gives up on alignment and replaces the middle whole.
fn diff_lines<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op> = a[..prefix].iter().map(|l| Op::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > 4_000_000 {
        ops.extend(am.iter().map(|l| Op::Del(l)));
        ops.extend(bm.iter().map(|l| Op::Add(l)));
    } else {
        let (n, m) = (am.len(), bm.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                ops.push(Op::Same(am[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
                ops.push(Op::Del(am[i]));
                i += 1;
            } else {
                ops.push(Op::Add(bm[j]));
                j += 1;
            }
        }
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| Op::Same(l)));
    ops
}
