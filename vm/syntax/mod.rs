//! The front end: tokens, the AST, parsing, checks and diagnostics.
//!
//! The way of a source file: `lexer::tokenize` -> forms split at each dot
//! -> `parser` (generated from grammar/act.lalrpop) -> `ast::Module` ->
//! `check::check_module` -> diagnostics, rendered by `render`.

pub mod ast;
pub mod bitspec;
pub mod check;
pub mod diagnostic;
pub mod fold;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod span;
pub mod walk;

pub use diagnostic::{Diagnostic, Severity, render};
pub use parser::{
    ParsedModule, ReplInput, is_complete, parse_exprs, parse_form, parse_module,
    parse_module_detailed, parse_repl,
};

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

/// Parses and checks a whole file: every error and warning, in source
/// order. Calls to functions whose forms failed to parse are not reported
/// as undefined, since the definition may be the broken form.
pub fn check_source(source: &str) -> Vec<Diagnostic> {
    with_big_stack(|| {
        let parsed = parser::parse_module_detailed(source);
        let mut diagnostics = parsed.diagnostics;
        diagnostics.extend(check::check_module_assuming(
            &parsed.module,
            source,
            &parsed.broken_functions,
        ));
        diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
        diagnostics
    })
}
