//! The `act` command line.
//!
//! `act check FILE...` parses and checks files and reports every error;
//! `act --help` and `act --version` say what act is. Running programs
//! (`act FILE ARGS`) is added by the VM. Work starts only after the
//! arguments are read, so `act` starts fast.

use act::runtime::processes;
use act::syntax::{self, Diagnostic, Severity};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "\
act: a small Erlang on a bytecode VM

Usage:
  act                  start the interactive shell
  act check FILE...    check files for syntax and compile errors
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
";

/// What the command line asks for.
enum Command {
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
        Some("--max-memory") => {
            let bytes = args
                .get(1)
                .and_then(|b| parse_bytes(b))
                .ok_or("'--max-memory' needs a size like 512M")?;
            act::heap::budget::set_limit(bytes);
            parse_args(&args[2..])
        }
        Some(option) if option.starts_with("--") && runtime_option(option, args.get(1))? => {
            let skip = if processes::option_takes_value(option) {
                2
            } else {
                1
            };
            parse_args(&args[skip..])
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
            eprintln!("act: {message}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// Applies a runtime option (`--schedulers N`, ...); false if `option`
/// is not one.
fn runtime_option(option: &str, value: Option<&String>) -> Result<bool, String> {
    let value = processes::option_takes_value(option)
        .then(|| value.map(String::as_str))
        .flatten();
    processes::apply_option(option, value)
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
        let (sources, diagnostics) = check_file(file);
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
            syntax::check_program(file, &source, dir)
        }
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let source = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let diagnostic = Diagnostic {
                severity: Severity::Error,
                message: "the file is not valid UTF-8".to_string(),
                span: syntax::span::Span::new(at, at + 1),
                hint: Some("act source files are UTF-8 text".to_string()),
            };
            (syntax::Sources::single(file, &source), vec![diagnostic])
        }
    }
}
