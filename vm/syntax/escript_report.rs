//! What escript prints about a script's compile errors and warnings, and
//! where: the product rule is that `act FILE` prints on stdout what
//! `escript FILE` prints on Erlang/OTP 25.
//!
//! escript compiles in one of two ways, chosen by the script's last
//! `-mode(...)` attribute:
//! - `compile` (and `debug`): `compile:forms(Forms, [report])`. Errors,
//!   then warnings, go to **stdout**, each as `FILE:LINE:COL: MESSAGE`
//!   (warnings say `Warning: ` before the message) followed by a quote of
//!   the source line, a caret line and a blank line. Both lists are sorted
//!   by file, position and text; equal warnings are printed once
//!   (but for `invalid function call`, which OTP gives twice for `1()`).
//! - anything else (no attribute, `interpret`, and `native`, which OTP 25
//!   ignores): `erl_lint:module(Forms)`. Each error and warning is one
//!   line on **stderr**; errors come in erl_lint's order (calls to
//!   undefined functions last, by name), warnings sorted as above.
//!
//! With any error the script does not run: escript ends with status 127
//! after `escript: There were compilation errors.` on stderr (act says
//! `act: ` instead, as for its other messages). Syntax and preprocessor
//! errors stop escript before either of these: each is one line on stderr,
//! `FILE:LINE:COL: MESSAGE` in erl_scan's, erl_parse's or epp's words
//! (`syntax error before: '.'`), then the same last line; act prints those
//! lines too (`syntax_listing`), from the words each error carries
//! (`Diagnostic::escript`), and its own explained rendering for an error
//! that carries none. `act check` always explains.
//!
//! `-compile` options that silence a kind of warning (`nowarn_unused_vars`,
//! `{nowarn_unused_function, [f/1]}`, ...) are honoured in both ways, as
//! erl_lint reads them from the module itself; see `Options`.

use super::ast::{Attribute, AttributeKind, Expr, ExprKind, Form, Module};
use super::diagnostic::{Diagnostic, Severity};
use super::preprocess::Sources;
use super::span::Span;
use std::collections::BTreeSet;

/// How escript compiles a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Compile,
    Interpret,
}

/// The source text of `span` (within one file).
fn text_of(sources: &Sources, span: Span) -> &str {
    let file = sources.file_of(span.start);
    let start = (span.start as usize - file.base).min(file.text.len());
    let end = (span.end as usize)
        .saturating_sub(file.base)
        .clamp(start, file.text.len());
    file.text.get(start..end).unwrap_or("")
}

/// The arguments of an attribute `-name(Args)` whose text is `text`.
fn attribute_arguments(text: &str) -> Vec<Expr> {
    let Some(open) = text.find('(') else {
        return Vec::new();
    };
    let inner = text[open..].trim_end().trim_end_matches('.');
    super::parse_exprs(&format!("{inner}.")).unwrap_or_default()
}

/// The attributes named `name` of the module, with their text.
fn attributes<'a>(
    module: &'a Module,
    sources: &'a Sources,
    name: &'a str,
) -> impl Iterator<Item = (&'a Attribute, &'a str)> + 'a {
    module.forms.iter().filter_map(move |form| match form {
        Form::Attribute(a) => {
            let text = text_of(sources, a.span);
            let named = match &a.kind {
                AttributeKind::Other(n) => {
                    n == name || (name == "compile" && n == "nowarn_export_all")
                }
                AttributeKind::ExportAll { .. } => name == "compile",
                _ => false,
            };
            named.then_some((a, text))
        }
        Form::Function(_) => None,
    })
}

/// The mode the script's last `-mode(...)` attribute chooses.
pub fn mode(module: &Module, sources: &Sources) -> Mode {
    let mut mode = Mode::Interpret;
    for (_, text) in attributes(module, sources, "mode") {
        if let [e] = attribute_arguments(text).as_slice()
            && let ExprKind::Atom(name) = &e.kind
        {
            mode = match name.as_str() {
                "compile" | "debug" => Mode::Compile,
                "native" => mode,
                _ => Mode::Interpret,
            };
        }
    }
    mode
}

/// The warning options of a module's `-compile` attributes, in order: a
/// later `warn_X` undoes an earlier `nowarn_X`.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Kinds of warnings turned off (`unused_vars` for `nowarn_unused_vars`).
    off: BTreeSet<String>,
    /// Functions named in `{nowarn_unused_function, [{f, 1}]}`.
    quiet_functions: BTreeSet<(String, u32)>,
}

impl Options {
    pub fn of(module: &Module, sources: &Sources) -> Options {
        let mut options = Options::default();
        for (_, text) in attributes(module, sources, "compile") {
            for e in attribute_arguments(text) {
                options.read(&e);
            }
        }
        options
    }

    fn read(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::List(items, _) => {
                for item in items {
                    self.read(item);
                }
            }
            ExprKind::Atom(a) => {
                if let Some(kind) = a.strip_prefix("nowarn_") {
                    self.off.insert(kind.to_string());
                } else if let Some(kind) = a.strip_prefix("warn_") {
                    self.off.remove(kind);
                }
            }
            ExprKind::Tuple(items) => {
                if let [key, value] = items.as_slice()
                    && matches!(&key.kind, ExprKind::Atom(k) if k == "nowarn_unused_function")
                {
                    self.quiet(value);
                }
            }
            _ => {}
        }
    }

    /// `{f, 1}` or a list of them.
    fn quiet(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::List(items, _) => {
                for item in items {
                    self.quiet(item);
                }
            }
            ExprKind::Tuple(items) => {
                if let [name, arity] = items.as_slice()
                    && let (ExprKind::Atom(name), ExprKind::Integer(arity)) =
                        (&name.kind, &arity.kind)
                    && let Ok(arity) = u32::try_from(arity)
                {
                    self.quiet_functions.insert((name.clone(), arity));
                }
            }
            _ => {}
        }
    }

    /// Whether the options silence this warning.
    pub fn silences(&self, warning: &Diagnostic) -> bool {
        let m = warning.message.as_str();
        let kind = if m.starts_with("variable '") && m.ends_with("' is unused") {
            "unused_vars"
        } else if m.starts_with("variable '") && m.contains("' shadowed in ") {
            "shadow_vars"
        } else if let Some(f) = m
            .strip_prefix("function ")
            .and_then(|r| r.strip_suffix(" is unused"))
        {
            if let Some((name, arity)) = f.rsplit_once('/')
                && let Ok(arity) = arity.parse::<u32>()
                && self.quiet_functions.contains(&(name.to_string(), arity))
            {
                return true;
            }
            "unused_function"
        } else if m.starts_with("record ") && m.ends_with(" is unused") {
            "unused_record"
        } else if m.starts_with("type ") && m.ends_with(" is unused") {
            "unused_type"
        } else if m.contains(" is deprecated") {
            "deprecated_function"
        } else if m.starts_with("format ") || m.starts_with("the format string ") {
            "format"
        } else if m.starts_with("export_all flag enabled") {
            "export_all"
        } else {
            return false;
        };
        self.off.contains(kind)
    }
}

/// Under `-mode(compile)`, the optimiser's warnings about values thrown
/// away (`effects`), given the lint diagnostics found so far (for the
/// variables they say are unused); none when lint found an error.
pub fn optimiser_warnings(program: &super::Program, lint: &[Diagnostic]) -> Vec<Diagnostic> {
    if mode(&program.module, &program.sources) != Mode::Compile {
        return Vec::new();
    }
    let expansions: Vec<Span> = program.expansions.iter().map(|(s, _)| *s).collect();
    if lint.iter().any(|d| d.is_error()) {
        // A lint error stops the compiler before the optimiser runs: only
        // lint's own "invalid function call" (of a constant written in
        // place, which constprop gives twice, the optimiser's second) stays.
        let calls: Vec<Diagnostic> =
            super::constprop::warnings(&program.module, &program.sources, &expansions)
                .into_iter()
                .filter(|d| d.message == "invalid function call")
                .collect();
        return calls
            .windows(2)
            .filter(|pair| pair[0].span == pair[1].span)
            .map(|pair| pair[0].clone())
            .collect();
    }
    let unused: Vec<Span> = lint
        .iter()
        .filter(|d| {
            !d.is_error()
                && d.message.starts_with("variable '")
                && d.message.ends_with("' is unused")
        })
        .map(|d| d.span)
        .collect();
    let mut warnings = super::effects::warnings(&program.module, &program.sources, &unused);
    warnings.extend(super::constprop::warnings(
        &program.module,
        &program.sources,
        &expansions,
    ));
    warnings.extend(super::core_warnings::warnings(&program.module));
    warnings
}

/// Drops the warnings the module's `-compile` options turn off.
pub fn apply_options(diagnostics: &mut Vec<Diagnostic>, module: &Module, sources: &Sources) {
    let options = Options::of(module, sources);
    diagnostics.retain(|d| d.is_error() || !options.silences(d));
}

/// What escript prints: text for stdout (in characters; the caller
/// encodes it as standard_io does) and for stderr.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Listing {
    pub stdout: String,
    pub stderr: String,
    pub failed: bool,
}

/// One diagnostic placed: the file name as shown, line, column, the line's
/// text and the message.
struct Placed<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    text: &'a str,
    diagnostic: &'a Diagnostic,
}

/// `header` is the script's first line when escript left it out (see
/// `syntax::script_text`): the script's lines are then numbered one short,
/// and the compiler quotes the line of the file with the number it
/// reports, one line above the one meant.
fn place<'a>(
    d: &'a Diagnostic,
    sources: &'a Sources,
    main: &'a str,
    header: Option<&'a str>,
) -> Placed<'a> {
    let file = sources.file_of(d.span.start);
    let offset = (d.span.start as usize - file.base).min(file.text.len());
    let (line, column) = file.lines.line_col(&file.text, offset as u32);
    let line_text = |line: u32| {
        let start = file.lines.line_start(line) as usize;
        let rest = &file.text[start..];
        match rest.find('\n') {
            Some(i) => rest[..i].strip_suffix('\r').unwrap_or(&rest[..i]),
            None => rest,
        }
    };
    if d.span == LINE_ZERO && d.is_error() {
        return Placed {
            file: main,
            line: 0,
            column: 0,
            text: "",
            diagnostic: d,
        };
    }
    let text = match header {
        Some(header) if file.base == 0 && line == 1 => header,
        Some(_) if file.base == 0 => line_text(line - 1),
        _ => line_text(line),
    };
    Placed {
        file: if file.base == 0 { main } else { &file.name },
        line,
        column,
        text,
        diagnostic: d,
    }
}

impl Placed<'_> {
    /// `FILE:LINE:COL`, or `FILE:0` for no line.
    fn position(&self) -> String {
        if self.line == 0 {
            format!("{}:0", self.file)
        } else {
            format!("{}:{}:{}", self.file, self.line, self.column)
        }
    }

    fn head(&self) -> String {
        let warning = if self.diagnostic.severity == Severity::Warning {
            "Warning: "
        } else {
            ""
        };
        format!(
            "{}: {warning}{}\n",
            self.position(),
            self.diagnostic.message
        )
    }

    fn sort_key(&self) -> (&str, u32, u32, String) {
        (self.file, self.line, self.column, self.head())
    }

    /// The compiler's quote of the line: `%` lines with the line number
    /// in a field of four, a caret under the column (tabs kept, so that it
    /// lines up), then a blank line.
    fn excerpt(&self) -> String {
        if self.line == 0 {
            return String::new();
        }
        let number: String = self.line.to_string().chars().take(4).collect();
        let mut out = format!("% {number:>4}| {}\n%     | ", self.text);
        let mut n = 1;
        for c in self.text.chars() {
            if n >= self.column {
                break;
            }
            out.push(if c == '\t' { '\t' } else { ' ' });
            n += 1;
        }
        // Past the end of the line the compiler marks up to the column.
        for _ in n..=self.column {
            out.push('^');
        }
        out.push_str("\n\n");
        out
    }
}

/// The listing escript prints for the checker's diagnostics of a script
/// (errors of expansion and checking, and every warning), named `main`
/// as on escript's command line; `header` as for `place`.
pub fn listing(
    diagnostics: &[Diagnostic],
    sources: &Sources,
    main: &str,
    mode: Mode,
    header: Option<&str>,
) -> Listing {
    let placed: Vec<Placed> = diagnostics
        .iter()
        .map(|d| place(d, sources, main, header))
        .collect();
    let mut errors: Vec<&Placed> = placed.iter().filter(|p| p.diagnostic.is_error()).collect();
    let mut warnings: Vec<&Placed> = placed.iter().filter(|p| !p.diagnostic.is_error()).collect();
    warnings.sort_by_key(|p| p.sort_key());
    // A call of a non-fun written in place (`1()`) is reported by two of
    // OTP's passes, as two warnings that escript prints both.
    warnings.dedup_by(|a, b| {
        a.sort_key() == b.sort_key() && a.diagnostic.message != "invalid function call"
    });
    let mut listing = Listing {
        failed: !errors.is_empty(),
        ..Listing::default()
    };
    match mode {
        Mode::Compile => {
            errors.sort_by_key(|p| p.sort_key());
            for p in errors.iter().chain(&warnings) {
                listing.stdout.push_str(&p.head());
                listing.stdout.push_str(&p.excerpt());
            }
        }
        Mode::Interpret => {
            // erl_lint finds calls to undefined functions after the whole
            // module, and reports them by name and arity.
            errors.sort_by_key(|p| match undefined_function(&p.diagnostic.message) {
                None => (false, String::new(), 0, p.line, p.column),
                Some((name, arity)) => (true, name.to_string(), arity, p.line, p.column),
            });
            for p in errors.iter().chain(&warnings) {
                listing.stderr.push_str(&p.head());
            }
        }
    }
    if listing.failed {
        for p in &errors {
            if let Some(hint) = &p.diagnostic.hint {
                listing
                    .stderr
                    .push_str(&format!("{}: hint: {hint}\n", p.position()));
            }
        }
        listing
            .stderr
            .push_str("act: There were compilation errors.\n");
    }
    listing
}

/// What escript prints on stderr for syntax and preprocessor errors
/// (which stop it before checking): one line each in OTP's words, named
/// `main` (the script, as escript names it even when the line is in an
/// included file), then
/// `There were compilation errors.`. An error without OTP's words gets
/// act's rendering with its source line.
pub fn syntax_listing(diagnostics: &[Diagnostic], sources: &Sources, main: &str) -> String {
    let mut out = String::new();
    for d in diagnostics.iter().filter(|d| d.is_error()) {
        if d.escript.is_empty() {
            out.push_str(&super::render_sources(std::slice::from_ref(d), sources));
        }
        for (at, message) in &d.escript {
            let file = sources.file_of(*at);
            let offset = (*at as usize - file.base).min(file.text.len());
            let (line, column) = file.lines.line_col(&file.text, offset as u32);
            // escript names the script even for a line of an include.
            out.push_str(&format!("{main}:{line}:{column}: {message}\n"));
        }
    }
    out.push_str("act: There were compilation errors.\n");
    out
}

/// escript gives a script whose first form is not `-module` a module
/// attribute of its own, so a `-module` after another form, or a second
/// one, is erl_lint's `redefining module`, at the attribute's name.
pub fn redefined_module(module: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, form) in module.forms.iter().enumerate() {
        if let Form::Attribute(Attribute {
            kind: AttributeKind::Module(_),
            span,
        }) = form
            && i > 0
        {
            let at = span.start as usize + 1;
            out.push(Diagnostic::error(
                "redefining module",
                Span::new(at, at + "module".len()),
            ));
        }
    }
    out
}

/// escript exports `main/1` itself (a script whose first form is not
/// `-module` also gets that attribute), at line 0, so a script without
/// `main/1` is erl_lint's `function main/1 undefined` there, with or
/// without `-module`. A script that exports `main/1` itself gets the
/// error at its own `-export`. The error has the empty span at the start
/// of the script, which `place` reports as line 0. A `main` whose form
/// failed to parse (`broken`) is not reported again.
pub fn implicit_main_export(module: &Module, broken: &[String]) -> Vec<Diagnostic> {
    let exported = module.forms.iter().any(|form| match form {
        Form::Attribute(Attribute {
            kind: AttributeKind::Export(names),
            ..
        }) => names.iter().any(|n| n.name == "main" && n.arity == 1),
        _ => false,
    });
    let has_main = module
        .forms
        .iter()
        .any(|form| matches!(form, Form::Function(f) if f.name == "main" && f.arity == 1));
    if exported || has_main || module.forms.is_empty() || broken.iter().any(|b| b == "main") {
        return Vec::new();
    }
    vec![
        Diagnostic::error("function main/1 undefined", LINE_ZERO)
            .with_hint("a script starts in main/1: define main(Args)"),
    ]
}

/// The span of an error about no line of the script (erl_lint's line 0).
const LINE_ZERO: Span = Span { start: 0, end: 0 };

/// `function f/1 undefined` -> `("f", 1)`.
fn undefined_function(message: &str) -> Option<(&str, u32)> {
    let f = message
        .strip_prefix("function ")?
        .strip_suffix(" undefined")?;
    let (name, arity) = f.rsplit_once('/')?;
    Some((name, arity.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing_of(source: &str, mode: Mode) -> Listing {
        let (sources, diagnostics) = crate::syntax::check_program("w.erl", source, None);
        listing(&diagnostics, &sources, "w.erl", mode, None)
    }

    #[test]
    fn compile_mode_quotes_the_line_with_a_caret_under_the_column() {
        let out = listing_of("main(_) ->\n\tX = 1,\n    ok.\n", Mode::Compile);
        assert_eq!(
            out.stdout,
            "w.erl:2:2: Warning: variable 'X' is unused\n%    2| \tX = 1,\n%     | \t^\n\n"
        );
        assert!(out.stderr.is_empty() && !out.failed);
    }

    #[test]
    fn interpreted_mode_prints_one_line_each_on_stderr() {
        let out = listing_of("main(_) -> X = 1, ok.\nf() -> ok.\n", Mode::Interpret);
        assert_eq!(
            out.stderr,
            "w.erl:1:12: Warning: variable 'X' is unused\nw.erl:2:1: Warning: function f/0 is unused\n"
        );
        assert!(out.stdout.is_empty());
    }

    #[test]
    fn errors_come_first_and_fail() {
        let out = listing_of("main(_) -> X = 1, g(), Y.\n", Mode::Interpret);
        assert_eq!(
            out.stderr,
            "w.erl:1:24: variable 'Y' is unbound\nw.erl:1:19: function g/0 undefined\n\
             w.erl:1:12: Warning: variable 'X' is unused\nact: There were compilation errors.\n"
        );
        assert!(out.failed);
    }

    #[test]
    fn compile_options_silence_warnings() {
        let source = "-compile([nowarn_unused_vars, {nowarn_unused_function, [{f, 0}]}]).\n\
                      main(_) -> X = 1, ok.\nf() -> ok.\ng() -> ok.\n";
        let (sources, mut diagnostics) = crate::syntax::check_program("w.erl", source, None);
        let (module, _) = crate::syntax::parse_module(source);
        apply_options(&mut diagnostics, &module, &sources);
        let messages: Vec<&str> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, vec!["function g/0 is unused"]);
    }

    #[test]
    fn the_mode_is_the_last_mode_attribute() {
        let mode_of = |source: &str| {
            let (module, _) = crate::syntax::parse_module(source);
            mode(&module, &Sources::single("w.erl", source))
        };
        assert_eq!(mode_of("main(_) -> ok."), Mode::Interpret);
        assert_eq!(mode_of("-mode(compile).\nmain(_) -> ok."), Mode::Compile);
        assert_eq!(
            mode_of("-mode(compile).\n-mode(native).\nmain(_) -> ok."),
            Mode::Compile
        );
        assert_eq!(mode_of("-mode(native).\nmain(_) -> ok."), Mode::Interpret);
    }
}
