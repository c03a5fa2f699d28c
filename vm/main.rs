//! The `act` command line.
//!
//! `act check FILE...` parses and checks files and reports every error;
//! `act test [PATH...]` snapshot-tests scripts (`test_runner.rs`);
//! `act --help` and `act --version` say what act is. Running programs
//! (`act FILE ARGS`) is added by the VM. Work starts only after the
//! arguments are read, so `act` starts fast. Options follow GNU
//! conventions: `--name value` or `--name=value`; a usage error prints a
//! short usage line and exits with status 2.

mod test_runner;

use act::runtime::processes;
use act::syntax::{self, Diagnostic};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
act: a small Erlang on a bytecode VM

Usage:
  act                  start the interactive shell
  act check FILE...    check files for syntax and compile errors
  act test [PATH...]   run the scripts under PATH and compare their output
                       with the snapshots beside them (act test --help)
  act FILE [ARGS...]   run FILE's main/1 with ARGS as a list of strings
  act run FILE [ARGS...]
                       the same
  act disasm FILE      print FILE's bytecode
  act --help           print this help
  act --version        print the version

Options:
  -h, --help           print this help
  -V, --version        print the version
  --max-memory BYTES   memory budget for running programs (suffix K, M or G)
  --schedulers N       scheduler threads (default: one per core)
  --reductions N       reductions per time slice (default 4000)
  --max-processes N    spawning past N live processes raises system_limit
  --deterministic      one scheduler, a virtual clock, pids and refs in order
  --stats              print runtime statistics on stderr at the end
  --engine E           interp, native (compile every function) or auto
                       (compile hot functions; the default; also ACT_ENGINE)
  --engine-stats       print what the native tier compiled, on stderr
  --sname NAME         run as a distributed node NAME@host (short host name)
  --name NAME@HOST     the same with a long (fully qualified) name
  --cookie COOKIE      the node's cookie (default: ~/.erlang.cookie)
";

/// The line printed after a usage error.
const SHORT_USAGE: &str = "Usage: act [OPTIONS] FILE [ARGS...] | act check FILE... | act test [PATH...]\n\
Try 'act --help' for more.";

/// What the command line asks for.
enum Command {
    Test(Vec<String>),
    Help,
    Version,
    Check(Vec<String>),
    Run {
        file: String,
        args: Vec<String>,
    },
    Disasm(String),
    /// No arguments: the interactive shell.
    Shell,
}

/// Splits `--name=value` into its name and value.
fn split_option(arg: &str) -> (&str, Option<&str>) {
    match arg.split_once('=') {
        Some((name, value)) if name.starts_with("--") => (name, Some(value)),
        _ => (arg, None),
    }
}

/// Reads the arguments after the program name.
fn parse_args(args: &[String]) -> Result<Command, String> {
    match args.first().map(String::as_str) {
        None => Ok(Command::Shell),
        Some("-h" | "--help" | "help") => Ok(Command::Help),
        Some("-V" | "--version") => Ok(Command::Version),
        Some("check") => {
            let files: Vec<String> = args[1..].to_vec();
            if files.is_empty() {
                return Err("'act check' needs at least one FILE".to_string());
            }
            if let Some(option) = files.iter().find(|f| f.starts_with('-') && f.len() > 1) {
                return Err(format!("unknown option '{option}' for 'act check'"));
            }
            Ok(Command::Check(files))
        }
        Some("test") => Ok(Command::Test(args[1..].to_vec())),
        Some("run") => match args.get(1) {
            Some(file) => Ok(Command::Run {
                file: file.clone(),
                args: args[2..].to_vec(),
            }),
            None => Err("'act run' needs a FILE".to_string()),
        },
        Some("disasm") => match args.get(1) {
            Some(file) if args.len() == 2 => Ok(Command::Disasm(file.clone())),
            _ => Err("'act disasm' needs exactly one FILE".to_string()),
        },
        Some(arg) if arg.starts_with("--") => {
            let (name, inline) = split_option(arg);
            let takes_value = name == "--max-memory" || processes::option_takes_value(name);
            let (value, skip) = match (takes_value, inline) {
                (true, Some(v)) => (Some(v), 1),
                (true, None) => (args.get(1).map(String::as_str), 2),
                (false, Some(_)) => return Err(format!("'{name}' takes no value")),
                (false, None) => (None, 1),
            };
            if takes_value && value.is_none() {
                return Err(format!("'{name}' needs a value"));
            }
            if name == "--max-memory" {
                let bytes = value
                    .and_then(parse_bytes)
                    .ok_or("'--max-memory' needs a size like 512M")?;
                act::heap::budget::set_limit(bytes);
            } else if !processes::apply_option(name, value)? {
                return Err(format!("unknown option '{name}'"));
            }
            parse_args(&args[skip.min(args.len())..])
        }
        Some(option) if option.starts_with('-') && option.len() > 1 => {
            Err(format!("unknown option '{option}'"))
        }
        Some(file) => Ok(Command::Run {
            file: file.to_string(),
            args: args[1..].to_vec(),
        }),
    }
}

fn main() -> ExitCode {
    if let Ok(name) = std::env::var("ACT_ENGINE")
        && let Some(mode) = act::engine::Mode::parse(&name)
    {
        act::engine::set_mode(mode);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("act {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Check(files)) => syntax::with_big_stack(|| check_files(&files)),
        Ok(Command::Test(args)) => test_runner::main(&args),
        Ok(Command::Run { file, args }) => {
            // The interpreter never recurses on the Rust stack; the big
            // stack is only a margin for the compiler's passes.
            let status = syntax::with_big_stack(|| act::runtime::script::run_script(&file, &args));
            act::runtime::output::flush();
            ExitCode::from(status.clamp(0, 255) as u8)
        }
        Ok(Command::Shell) => {
            let status = act::repl::run();
            act::runtime::output::flush();
            ExitCode::from(status.clamp(0, 255) as u8)
        }
        Ok(Command::Disasm(file)) => {
            match syntax::with_big_stack(|| act::runtime::script::compile_file(&file)) {
                Ok(module) => {
                    print!("{}", act::code::disasm::disassemble(&module));
                    ExitCode::SUCCESS
                }
                Err(text) => {
                    eprint!("{text}");
                    ExitCode::from(1)
                }
            }
        }
        Err(message) => {
            eprintln!("act: {message}\n{SHORT_USAGE}");
            ExitCode::from(2)
        }
    }
}

/// `512M` -> bytes.
fn parse_bytes(text: &str) -> Option<usize> {
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: usize = digits.parse().ok()?;
    let shift = match unit {
        "" | "B" => 0,
        "K" | "k" | "KB" => 10,
        "M" | "m" | "MB" => 20,
        "G" | "g" | "GB" => 30,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// `act check`: every diagnostic of every file on stderr; status 1 when
/// any file has an error (warnings do not fail).
fn check_files(files: &[String]) -> ExitCode {
    let mut failed = false;
    for file in files {
        if let Err(error) = std::fs::read(file) {
            eprintln!("act: cannot read {file}: {}", io_reason(&error));
            failed = true;
            continue;
        }
        let (sources, diagnostics) = check_file(file);
        let empty = std::fs::read_to_string(file).is_ok_and(|text| {
            syntax::parse_module(syntax::script_text(&text).0)
                .0
                .forms
                .is_empty()
        });
        if diagnostics.is_empty() && empty {
            // The same words as running it.
            eprint!("{}", act::runtime::script::PREMATURE_END);
            failed = true;
            continue;
        }
        failed |= diagnostics.iter().any(Diagnostic::is_error);
        eprint!("{}", syntax::render_sources(&diagnostics, &sources));
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Reads, parses and checks one file: its files (the file and what it
/// includes, as shown in messages) and its diagnostics in source order.
fn check_file(file: &str) -> (syntax::Sources, Vec<Diagnostic>) {
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(error) => {
            let diagnostic =
                Diagnostic::error(format!("cannot read file: {error}"), Default::default());
            return (syntax::Sources::single(file, ""), vec![diagnostic]);
        }
    };
    match String::from_utf8(bytes) {
        Ok(source) => {
            let path = std::path::Path::new(file);
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            // A script is read as escript (and `act FILE`) reads it.
            let (text, header) = syntax::script_text(&source);
            if header.is_some_and(syntax::first_line_has_code) {
                eprint!("{}", syntax::first_line_warning(file));
            }
            syntax::check_program(file, text, dir)
        }
        Err(error) => {
            let (source, diagnostic) = act::runtime::script::not_utf8(error);
            (syntax::Sources::single(file, &source), vec![diagnostic])
        }
    }
}

/// An I/O error without Rust's "(os error N)" suffix.
fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}
