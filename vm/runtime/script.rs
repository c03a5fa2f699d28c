//! Running a script: `act FILE ARGS` from source text to exit status.
//!
//! Parse and check (diagnostics to stderr, status 1 on errors), compile,
//! load, then run `main/1` with the arguments as strings. Other modules
//! (stdlib/, and `.act` files beside the script) load on first use.

use crate::interp::Registers;
use crate::process::Process;
use crate::syntax::{self, Diagnostic};
use crate::term::{Atom, Term};
use std::path::{Path, PathBuf};

use super::output;

/// The library modules written in act, embedded at build time.
pub const STDLIB: &[(&str, &str)] = &[
    ("ets", include_str!("../../stdlib/ets.act")),
    ("lists", include_str!("../../stdlib/lists.act")),
    ("maps", include_str!("../../stdlib/maps.act")),
    ("string", include_str!("../../stdlib/string.act")),
    ("timer", include_str!("../../stdlib/timer.act")),
    ("inet", include_str!("../../stdlib/inet.act")),
    ("inet_parse", include_str!("../../stdlib/inet_parse.act")),
    ("gen_tcp", include_str!("../../stdlib/gen_tcp.act")),
    ("gen_udp", include_str!("../../stdlib/gen_udp.act")),
    ("application", include_str!("../../stdlib/application.act")),
    ("crypto", include_str!("../../stdlib/crypto.act")),
    ("queue", include_str!("../../stdlib/queue.act")),
    ("sets", include_str!("../../stdlib/sets.act")),
    ("ordsets", include_str!("../../stdlib/ordsets.act")),
    ("orddict", include_str!("../../stdlib/orddict.act")),
    ("dict", include_str!("../../stdlib/dict.act")),
    ("proplists", include_str!("../../stdlib/proplists.act")),
    ("gb_trees", include_str!("../../stdlib/gb_trees.act")),
    ("gb_sets", include_str!("../../stdlib/gb_sets.act")),
    ("array", include_str!("../../stdlib/array.act")),
    ("calendar", include_str!("../../stdlib/calendar.act")),
    ("filename", include_str!("../../stdlib/filename.act")),
    ("base64", include_str!("../../stdlib/base64.act")),
    ("uri_string", include_str!("../../stdlib/uri_string.act")),
    // bifs
    ("rand", include_str!("../../stdlib/rand.act")),
    ("random", include_str!("../../stdlib/random.act")),
    // OTP behaviours and their support (the otp branch).
    ("gen", include_str!("../../stdlib/gen.act")),
    ("gen_server", include_str!("../../stdlib/gen_server.act")),
    ("gen_statem", include_str!("../../stdlib/gen_statem.act")),
    ("gen_fsm", include_str!("../../stdlib/gen_fsm.act")),
    ("supervisor", include_str!("../../stdlib/supervisor.act")),
    ("proc_lib", include_str!("../../stdlib/proc_lib.act")),
    ("sys", include_str!("../../stdlib/sys.act")),
    ("logger", include_str!("../../stdlib/logger.act")),
    (
        "error_logger",
        include_str!("../../stdlib/error_logger.act"),
    ),
    ("rpc", include_str!("../../stdlib/rpc.act")),
    ("erpc", include_str!("../../stdlib/erpc.act")),
    ("erts_dist", include_str!("../../stdlib/erts_dist.act")),
    // Reading and files (helper `hour`).
    ("io", include_str!("../../stdlib/io.act")),
    ("file", include_str!("../../stdlib/file.act")),
    ("c", include_str!("../../stdlib/c.act")),
    // Text and script support (helper `rosetta`).
    ("io_lib", include_str!("../../stdlib/io_lib.act")),
    ("erl_error", include_str!("../../stdlib/erl_error.act")),
    ("escript", include_str!("../../stdlib/escript.act")),
    ("eunit", include_str!("../../stdlib/eunit.act")),
    ("filelib", include_str!("../../stdlib/filelib.act")),
    ("erl_parse", include_str!("../../stdlib/erl_parse.act")),
    ("init", include_str!("../../stdlib/init.act")),
    // Book programs (helper `books`).
    ("gen_event", include_str!("../../stdlib/gen_event.act")),
    ("dets", include_str!("../../stdlib/dets.act")),
    // The library completeness work (helper `lib`).
    ("digraph", include_str!("../../stdlib/digraph.act")),
    (
        "digraph_utils",
        include_str!("../../stdlib/digraph_utils.act"),
    ),
    ("code", include_str!("../../stdlib/code.act")),
    ("atomics", include_str!("../../stdlib/atomics.act")),
    ("counters", include_str!("../../stdlib/counters.act")),
    (
        "persistent_term",
        include_str!("../../stdlib/persistent_term.act"),
    ),
    ("erl_eval", include_str!("../../stdlib/erl_eval.act")),
    ("erl_scan", include_str!("../../stdlib/erl_scan.act")),
    ("erl_pp", include_str!("../../stdlib/erl_pp.act")),
    (
        "erl_internal",
        include_str!("../../stdlib/erl_internal.act"),
    ),
    // Distribution (helper `nodes`).
    ("net_kernel", include_str!("../../stdlib/net_kernel.act")),
    ("net_adm", include_str!("../../stdlib/net_adm.act")),
    ("global", include_str!("../../stdlib/global.act")),
];

/// Whether act embeds a library module of this name written in act.
pub fn is_stdlib(name: &str) -> bool {
    STDLIB.iter().any(|(n, _)| *n == name)
}

/// Compiles a source text into a module, or the rendered diagnostics.
/// Warnings are not printed: this compiles act's own modules (the
/// embedded library), about which escript says nothing either.
pub fn compile_source(
    source: &str,
    file: &str,
    default_name: &str,
) -> Result<crate::code::Module, String> {
    compile_source_with(source, file, file, default_name, None, false)
}

/// `compile_source` for a file at `path` (what `?FILE` gives) whose
/// includes are looked up in `dir`.
pub fn compile_source_in(
    source: &str,
    file: &str,
    path: &str,
    default_name: &str,
    dir: Option<&Path>,
) -> Result<crate::code::Module, String> {
    compile_source_with(source, file, path, default_name, dir, true)
}

fn compile_source_with(
    source: &str,
    file: &str,
    path: &str,
    default_name: &str,
    dir: Option<&Path>,
    warn: bool,
) -> Result<crate::code::Module, String> {
    let program = syntax::read_program(file, path, source, dir, default_name);
    let mut diagnostics = program.diagnostics;
    // With syntax errors the checker would only add noise about the
    // forms that failed to parse.
    if !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.extend(syntax::check::check_module(&program.module, source));
    }
    program.sources.sort(&mut diagnostics);
    syntax::preprocess::name_macros(&mut diagnostics, &program.expansions);
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    let rendered = syntax::render_sources(&diagnostics, &program.sources);
    if has_errors {
        return Err(rendered);
    }
    if warn && !rendered.is_empty() {
        output::write_stderr(rendered.as_bytes());
    }
    let sources = &program.sources;
    syntax::with_big_stack(|| {
        crate::compile::compile_module_in(&program.module, default_name, file, sources)
    })
    .map_err(|e| {
        let d = Diagnostic::error(e.message, e.span);
        syntax::render_sources(&[d], sources)
    })
}

/// Finds module `name`: the embedded stdlib, then `name.act` in `dir`.
/// Every module act provides is sealed: a file of that name beside the
/// script is not loaded (escript loads no source beside a script, and
/// OTP refuses to reload a sticky module). Says so once, on stderr.
pub fn load_module(dir: &Path, name: &str) -> Option<Result<crate::code::Module, String>> {
    let valid = !name.is_empty() && !name.contains(['/', '\\', '.']);
    let stdlib = STDLIB.iter().find(|(n, _)| *n == name);
    let builtin = stdlib.is_some() || crate::bif::TABLE.iter().any(|b| b.module == name);
    if builtin && valid && dir.join(format!("{name}.act")).is_file() {
        let note = format!(
            "act: {name}.act beside the script is not loaded: {name} is a built-in module\n"
        );
        if stdlib.is_none() {
            // A module of BIFs only: a call it lacks is undef after this note.
            return Some(Err(note));
        }
        output::write_stderr(note.as_bytes());
    }
    if let Some((_, source)) = stdlib {
        return Some(compile_source(source, &format!("{name}.act"), name));
    }
    if !valid {
        return None;
    }
    let path = dir.join(format!("{name}.act"));
    let source = std::fs::read_to_string(&path).ok()?;
    let file = path
        .file_name()
        .map_or(name.to_string(), |f| f.to_string_lossy().into_owned());
    let path_text = path.to_string_lossy().into_owned();
    Some(compile_source_in(
        &source,
        &file,
        &path_text,
        name,
        Some(dir),
    ))
}

/// Compiles `file` only (for `act disasm`).
/// The diagnostic for a source file that is not UTF-8, at its first bad
/// byte, and the text to show it in (the same for `act check` and a run).
pub fn not_utf8(error: std::string::FromUtf8Error) -> (String, Diagnostic) {
    let at = error.utf8_error().valid_up_to();
    let source = String::from_utf8_lossy(error.as_bytes()).into_owned();
    let diagnostic = Diagnostic {
        severity: syntax::diagnostic::Severity::Error,
        message: "the file is not valid UTF-8".to_string(),
        span: syntax::span::Span::new(at, at + 1),
        hint: Some("act source files are UTF-8 text".to_string()),
        escript: Vec::new(),
    };
    (source, diagnostic)
}

pub fn compile_file(file: &str) -> Result<crate::code::Module, String> {
    compile_file_as(file, None)
}

/// `compile_file`; with `shown`, reporting as escript does (see
/// `compile_script_source`).
fn compile_file_as(file: &str, shown: Option<&str>) -> Result<crate::code::Module, String> {
    let bytes = std::fs::read(file).map_err(|e| {
        let reason = e.to_string();
        let reason = reason
            .split(" (os error")
            .next()
            .unwrap_or_default()
            .to_string();
        format!("act: cannot read {file}: {reason}\n")
    })?;
    let source = match String::from_utf8(bytes) {
        Ok(source) => source,
        Err(error) => {
            let (source, diagnostic) = not_utf8(error);
            let sources = syntax::Sources::single(file, &source);
            return Err(syntax::render_sources(&[diagnostic], &sources));
        }
    };
    // A script is read as escript reads it (see `syntax::script_text`).
    let (text, header) = match shown {
        Some(shown) => {
            let (text, header) = syntax::script_text(&source);
            // escript starts the node its `%%!` line names.
            if let Some(args) = syntax::emulator_args(&source) {
                super::nodes::apply_emulator_args(args)
                    .map_err(|message| format!("act: {shown}: {message}\n"))?;
            }
            if header.is_some_and(syntax::first_line_has_code) {
                output::write_stderr(syntax::first_line_warning(shown).as_bytes());
            }
            (text, header)
        }
        None => (source.as_str(), None),
    };
    // An empty script is one without main/1, not a module to compile; a
    // script whose only form did not even scan is not empty.
    let (parsed, problems) = syntax::parse_module(text);
    if parsed.forms.is_empty() && problems.is_empty() {
        return Err(PREMATURE_END.to_string());
    }
    crate::bif::fmt::set_compiled_script(says_mode_compile(&parsed, text));
    let path = Path::new(file);
    let mut stem = path
        .file_stem()
        .map_or("main".to_string(), |s| s.to_string_lossy().into_owned());
    // A script named like a library module (lists.act) must not hide it:
    // without a -module attribute it gets a name of its own, as escript
    // gives every script one.
    let library = ["erlang", "io_lib", "os", "init"];
    if STDLIB.iter().any(|(n, _)| *n == stem) || library.contains(&stem.as_str()) {
        stem.push_str("_script");
    }
    let name = path
        .file_name()
        .map_or(file.to_string(), |s| s.to_string_lossy().into_owned());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    match shown {
        Some(shown) => compile_script_source(text, header, shown, &name, file, &stem, dir),
        None => compile_source_in(&source, &name, file, &stem, dir),
    }
}

/// What erl's `c/1` does with a file: compiles it and reports as the
/// compiler does with `report`, errors then warnings, each
/// `FILE:LINE:COL: [Warning: ]MESSAGE` with a quote of the line and a
/// caret (in OTP's words where act has them), all in the
/// returned text, which the shell prints before `{ok,Mod}` or `error`. A
/// missing file is `FILE: no such file or directory`.
pub fn compile_file_reported(file: &str) -> (Option<crate::code::Module>, String) {
    use crate::syntax::escript_report;
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return (None, format!("{file}: no such file or directory\n"));
        }
        Err(e) => {
            let reason = crate::bif::file::errno_name(&e);
            return (None, format!("{file}: {reason}\n"));
        }
    };
    let Ok(source) = String::from_utf8(bytes) else {
        return (None, compile_file(file).err().unwrap_or_default());
    };
    let path = Path::new(file);
    let stem = path
        .file_stem()
        .map_or("main".to_string(), |s| s.to_string_lossy().into_owned());
    let name = path
        .file_name()
        .map_or(file.to_string(), |s| s.to_string_lossy().into_owned());
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let mut program = syntax::read_program(&name, file, &source, dir, &stem);
    let mut diagnostics = std::mem::take(&mut program.diagnostics);
    if stops_at_parse_errors(&program, &mut diagnostics) {
        // In OTP's words where act has them, with the quote of the line
        // as the compiler prints every error.
        let mut errors: Vec<Diagnostic> = Vec::new();
        for d in diagnostics.into_iter().filter(Diagnostic::is_error) {
            if d.escript.is_empty() {
                errors.push(d);
                continue;
            }
            for (at, words) in &d.escript {
                let mut said = d.clone();
                said.message = words.clone();
                said.span = crate::syntax::span::Span {
                    start: *at,
                    end: *at,
                };
                said.escript = Vec::new();
                errors.push(said);
            }
        }
        let listing = escript_report::listing(
            &errors,
            &program.sources,
            file,
            escript_report::Mode::Compile,
            None,
        );
        return (None, listing.stdout);
    }
    diagnostics.extend(syntax::check::check_module(&program.module, &source));
    escript_report::apply_options(&mut diagnostics, &program.module, &program.sources);
    let listing = escript_report::listing(
        &diagnostics,
        &program.sources,
        file,
        escript_report::Mode::Compile,
        None,
    );
    if listing.failed {
        return (None, listing.stdout);
    }
    let sources = &program.sources;
    let compiled = syntax::with_big_stack(|| {
        crate::compile::compile_module_in(&program.module, &stem, &name, sources)
    });
    match compiled {
        Ok(module) => (Some(module), listing.stdout),
        Err(e) => {
            let d = Diagnostic::error(e.message, e.span);
            (None, syntax::render_sources(&[d], sources))
        }
    }
}

/// Whether the parse and preprocessor diagnostics of `program` hold an
/// error, where escript stops before the checks (and record errors);
/// then `diagnostics` keeps only those, sorted and with macro names.
fn stops_at_parse_errors(program: &syntax::Program, diagnostics: &mut Vec<Diagnostic>) -> bool {
    if !diagnostics[..program.parse_diagnostics]
        .iter()
        .any(Diagnostic::is_error)
    {
        return false;
    }
    diagnostics.truncate(program.parse_diagnostics);
    program.sources.sort(diagnostics);
    syntax::preprocess::name_macros(diagnostics, &program.expansions);
    true
}

/// Compiles the script of a run, printing its warnings and errors where
/// and as escript prints them (`syntax::escript_report`): on stdout with
/// a quote of the line under `-mode(compile)`, one line each on stderr
/// otherwise, the file named `shown` (as given on the command line).
/// Syntax and preprocessor errors, which stop escript before it lints,
/// are one line each on stderr in OTP's words (status 127 too).
fn compile_script_source(
    source: &str,
    header: Option<&str>,
    shown: &str,
    name: &str,
    path: &str,
    default_name: &str,
    dir: Option<&Path>,
) -> Result<crate::code::Module, String> {
    use crate::syntax::escript_report;
    let mut program = syntax::read_program(name, path, source, dir, default_name);
    let mut diagnostics = std::mem::take(&mut program.diagnostics);
    if stops_at_parse_errors(&program, &mut diagnostics) {
        return Err(escript_report::syntax_listing(
            &diagnostics,
            &program.sources,
            shown,
        ));
    }
    diagnostics.extend(syntax::check::check_module(&program.module, source));
    diagnostics.extend(escript_report::redefined_module(&program.module));
    diagnostics.extend(escript_report::implicit_main_export(
        &program.module,
        &program.broken_functions,
    ));
    let optimiser = escript_report::optimiser_warnings(&program, &diagnostics);
    diagnostics.extend(optimiser);
    diagnostics.extend(syntax::lint_extra::unused_records_and_types(
        &program.module,
        &program.sources,
        &program.record_uses,
    ));
    diagnostics.extend(syntax::lint_extra::missing_callbacks(
        &program.module,
        &program.sources,
    ));
    escript_report::apply_options(&mut diagnostics, &program.module, &program.sources);
    let mode = escript_report::mode(&program.module, &program.sources);
    let listing = escript_report::listing(&diagnostics, &program.sources, shown, mode, header);
    output::write_text(&listing.stdout);
    if listing.failed {
        return Err(listing.stderr);
    }
    if !listing.stderr.is_empty() {
        output::write_stderr(listing.stderr.as_bytes());
    }
    let sources = &program.sources;
    syntax::with_big_stack(|| {
        crate::compile::compile_module_in(&program.module, default_name, path, sources)
    })
    .map_err(|e| {
        let d = Diagnostic::error(e.message, e.span);
        syntax::render_sources(&[d], sources)
    })
}

/// Whether the script has `-mode(compile).` (the pids it spawns print
/// as escript numbers them then).
fn says_mode_compile(parsed: &syntax::ast::Module, source: &str) -> bool {
    use syntax::ast::{Attribute, AttributeKind, Form};
    parsed.forms.iter().any(|form| match form {
        Form::Attribute(Attribute {
            kind: AttributeKind::Other(name),
            span,
        }) if name == "mode" => source
            .get(span.start as usize..span.end as usize)
            .is_some_and(|text| text.contains("compile")),
        _ => false,
    })
}

const NO_MAIN: &str = "act: the script has no function main/1\n";

/// What escript says about a script with no forms (empty, or only its
/// `#!` line and comments), in its words.
pub const PREMATURE_END: &str = "act: Premature end of file reached\n";

/// Runs a script; returns the exit status. (`ACT_GC_STRESS=1` in the
/// environment makes every heap test collect: see `heap`.)
pub fn run_script(file: &str, args: &[String]) -> i32 {
    let module = match compile_file_as(file, Some(file)) {
        Ok(m) => m,
        Err(text) => {
            output::write_stderr(text.as_bytes());
            // escript: 127 for a script it cannot compile (a directory
            // too), 1 only for a file it cannot open.
            return if text.starts_with("act: cannot read ") && !Path::new(file).is_dir() {
                1
            } else {
                127
            };
        }
    };
    let dir: PathBuf = Path::new(file).parent().map_or(PathBuf::from("."), |d| {
        if d.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            d.to_path_buf()
        }
    });
    super::set_loader(Box::new(move |name| load_module(&dir, name)));
    let module = super::load(module);
    let Some(&main) = module.local_functions.get(&(Atom::intern("main"), 1)) else {
        output::write_stderr(NO_MAIN.as_bytes());
        return 127;
    };
    let entry = module.functions[main as usize].entry;
    let mut process = Process::new(module, entry);
    process.set_script_main();
    let mut regs = Registers::new();
    // The arguments as a list of strings.
    let words: usize = args.iter().map(|a| 2 * a.chars().count() + 2).sum();
    if process
        .ensure_heap(words, &mut regs.x[..0], &mut [])
        .is_err()
    {
        output::write_stderr(b"act: the arguments do not fit in memory\n");
        return 1;
    }
    let mut list = Term::NIL;
    for a in args.iter().rev() {
        let s = process.heap.string(a);
        list = process.heap.cons(s, list);
    }
    let mut plain = vec![file.to_string()];
    plain.extend(args.iter().cloned());
    crate::bif::file::set_plain_arguments(plain);
    let (config, stats) = super::processes::configured();
    let status = super::processes::run_main(config, process, vec![list], stats);
    if let Some(report) = super::processes::engine_report() {
        output::flush();
        output::write_stderr(report.as_bytes());
    }
    status
}
