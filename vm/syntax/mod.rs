//! The front end: tokens, the AST, parsing, checks and diagnostics.
//!
//! The way of a source file: `lexer::tokenize` -> `preprocess` (macros,
//! includes, conditionals) -> forms split at each dot -> `parser`
//! (generated from grammar/act.lalrpop) -> `ast::Module` -> `expand`
//! (records, imports) -> `check::check_module` -> diagnostics, rendered by
//! `render` (one file) or `render_sources` (a script and its includes).
//! `read_program` is that way up to the checker, for `act check` and
//! `act FILE` alike.

pub mod ast;
pub mod bitspec;
pub mod check;
pub mod constprop;
pub mod core_warnings;
pub mod diagnostic;
pub mod effects;
pub mod escript_report;
pub mod eunit_autoexport;
pub mod expand;
pub mod fold;
pub mod format_lint;
pub mod lexer;
pub mod lint_extra;
pub mod ms_transform;
pub mod parser;
pub mod preprocess;
pub mod print;
pub mod span;
pub mod walk;

pub use diagnostic::{Diagnostic, Severity, render, render_sources};
pub use parser::{
    ParsedModule, ReplInput, is_complete, parse_exprs, parse_form, parse_module,
    parse_module_detailed, parse_repl,
};
pub use preprocess::Sources;

/// Stack size of the thread `with_big_stack` runs on. Trees are bounded in
/// depth by the parser, but passes over them recurse, and every frame of
/// a deep recursion over a bounded tree must still fit.
pub const BIG_STACK: usize = 256 << 20;

/// Runs `f` on a fresh thread with a `BIG_STACK`-byte stack and returns its
/// result; a panic in `f` is resumed in the caller. If no thread can be
/// started, `f` runs on the current one.
pub fn with_big_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let cell = std::sync::Mutex::new(Some(f));
    let take = || {
        cell.lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    };
    let ran = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .stack_size(BIG_STACK)
            .spawn_scoped(scope, || take().map(|f| f()));
        match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(_) => None,
        }
    });
    match ran {
        Some(result) => result,
        None => match take() {
            Some(f) => f(),
            None => unreachable!("the closure runs either on the thread or here"),
        },
    }
}

/// A program read from source, up to the checker.
pub struct Program {
    pub module: ast::Module,
    /// Errors and warnings of preprocessing, parsing and expansion.
    pub diagnostics: Vec<Diagnostic>,
    /// How many of `diagnostics` come before expansion's: escript stops
    /// at those (syntax and preprocessor errors) before it lints.
    pub parse_diagnostics: usize,
    pub sources: Sources,
    /// See `ParsedModule::broken_functions`.
    pub broken_functions: Vec<String>,
    /// Where macros were used (see `preprocess::name_macros`).
    pub expansions: Vec<(span::Span, String)>,
    /// The records the program names (see `lint_extra`).
    pub record_uses: std::collections::BTreeSet<String>,
}

/// Preprocesses, parses and expands the script `source`: `name` is how
/// messages name it, `path` is what `?FILE` gives, `dir` is where its
/// includes are looked up and `module` the name `?MODULE` has until a
/// `-module` attribute gives one.
/// The text of a script as escript reads it, and the first line when it
/// is left out. escript always takes a script's first line for its `#!`
/// line: a `#!` line is skipped in place (the lexer blanks it, so lines
/// keep their numbers), but any other first line is dropped, and the
/// lines after it are numbered from 1 (a warning on line 3 of the file is
/// reported at line 2, and `?LINE` says 2). act reads a script the same
/// way, so that line numbers, `?LINE` and what the first line held come
/// out as escript's; modules and includes are read whole.
pub fn script_text(source: &str) -> (&str, Option<&str>) {
    let body = source.strip_prefix('\u{FEFF}').unwrap_or(source);
    if body.starts_with("#!") {
        return (source, None);
    }
    match body.find('\n') {
        Some(i) => (&body[i + 1..], Some(body[..i].trim_end_matches('\r'))),
        None => ("", Some(body)),
    }
}

/// The emulator arguments of a script (`%%! -sname a -setcookie c`), as
/// escript finds them: on the second line, or on the third when the
/// second is another comment (an Emacs mode line, say). escript hands
/// them to `erl`; act takes the node options among them
/// (`runtime::nodes::apply_emulator_args`) and leaves the rest.
pub fn emulator_args(source: &str) -> Option<&str> {
    let body = source.strip_prefix('\u{FEFF}').unwrap_or(source);
    let mut lines = body.lines().skip(1).map(|l| l.trim_end_matches('\r'));
    let second = lines.next()?;
    if let Some(args) = second.strip_prefix("%%!") {
        return Some(args);
    }
    if second.starts_with('%') {
        return lines.next()?.strip_prefix("%%!");
    }
    None
}

/// Whether a first line that escript leaves out held code (not a comment
/// or white space): act then says that it was not read.
pub fn first_line_has_code(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && !line.starts_with('%')
}

/// The warning for a first line with code that escript leaves out.
pub fn first_line_warning(file: &str) -> String {
    format!(
        "{file}:1: warning: line 1 is not read: escript takes a script's first line for \
         its #! line (start the script with #!/usr/bin/env escript)\n"
    )
}

pub fn read_program(
    name: &str,
    path: &str,
    source: &str,
    dir: Option<&std::path::Path>,
    module: &str,
) -> Program {
    with_big_stack(|| {
        let pp = preprocess::preprocess_as(name, path, source, dir, module);
        let parsed = parser::parse_tokens(&pp.tokens, source.len());
        let record_uses = lint_extra::record_uses(&pp.tokens);
        let mut diagnostics = pp.diagnostics;
        diagnostics.extend(parsed.diagnostics);
        let default_name = module;
        let mut module = parsed.module;
        if eunit_autoexport::wanted(&pp.tokens) {
            eunit_autoexport::apply(&mut module, default_name);
        }
        let parse_diagnostics = diagnostics.len();
        diagnostics.extend(expand::expand(&mut module));
        let mut broken_functions = parsed.broken_functions;
        broken_functions.extend(pp.broken_functions);
        Program {
            module,
            diagnostics,
            parse_diagnostics,
            sources: pp.sources,
            broken_functions,
            expansions: pp.expansions,
            record_uses,
        }
    })
}

/// `read_program` and the checker: every diagnostic of a script, in
/// source order, and its files.
pub fn check_program(
    name: &str,
    source: &str,
    dir: Option<&std::path::Path>,
) -> (Sources, Vec<Diagnostic>) {
    with_big_stack(|| {
        let stem = std::path::Path::new(name)
            .file_stem()
            .map_or("main".to_string(), |s| s.to_string_lossy().into_owned());
        let mut program = read_program(name, name, source, dir, &stem);
        let mut diagnostics = std::mem::take(&mut program.diagnostics);
        diagnostics.extend(check::check_module_assuming(
            &program.module,
            source,
            &program.broken_functions,
        ));
        diagnostics.extend(escript_report::redefined_module(&program.module));
        diagnostics.extend(escript_report::implicit_main_export(
            &program.module,
            &program.broken_functions,
        ));
        if program.broken_functions.is_empty() {
            let optimiser = escript_report::optimiser_warnings(&program, &diagnostics);
            diagnostics.extend(optimiser);
            diagnostics.extend(lint_extra::unused_records_and_types(
                &program.module,
                &program.sources,
                &program.record_uses,
            ));
            diagnostics.extend(lint_extra::missing_callbacks(
                &program.module,
                &program.sources,
            ));
        }
        escript_report::apply_options(&mut diagnostics, &program.module, &program.sources);
        program.sources.sort(&mut diagnostics);
        preprocess::name_macros(&mut diagnostics, &program.expansions);
        (program.sources, diagnostics)
    })
}

/// Parses and checks a whole file: every error and warning, in source
/// order. Calls to functions whose forms failed to parse are not reported
/// as undefined, since the definition may be the broken form.
pub fn check_source(source: &str) -> Vec<Diagnostic> {
    check_program("", source, None).1
}

#[cfg(test)]
mod tests {
    use super::emulator_args;

    #[test]
    fn emulator_line_is_the_second_or_after_a_comment_the_third() {
        assert_eq!(
            emulator_args("#!/usr/bin/env escript\n%%! -sname a\nmain(_) -> ok.\n"),
            Some(" -sname a")
        );
        assert_eq!(
            emulator_args("#!/usr/bin/env escript\r\n%% -*- erlang -*-\r\n%%! -name b\r\n"),
            Some(" -name b")
        );
        // Not after code, not on the fourth line, not on the first.
        assert_eq!(emulator_args("#!x\nmain(_) -> ok.\n%%! -sname a\n"), None);
        assert_eq!(emulator_args("#!x\n%% a\n%% b\n%%! -sname a\n"), None);
        assert_eq!(emulator_args("%%! -sname a\nmain(_) -> ok.\n"), None);
        assert_eq!(emulator_args(""), None);
    }
}
