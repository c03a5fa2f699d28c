//! Evaluating shell input: expression sequences with the shell's
//! bindings, and functions defined at the prompt.
//!
//! Both go through the ordinary compiler. The shell keeps the source text
//! of every function defined at the prompt and builds, for each input, a
//! module `shell_default` holding those functions plus one function
//! `'$eval'` whose parameters are the bound variables and whose body is
//! the input:
//!
//! ```text
//! '$eval'(X, Y) ->
//!     '$value' = begin <input> end,
//!     {'$value', {X, Y, Z}}.
//! ```
//!
//! (`'$value'` stands for a variable name no user writes.) Calling it (in
//! the evaluator process, see `server`) returns the value and the new
//! values of all bindings, so a variable that is already bound is
//! matched, not rebound, exactly as in erl. Which variables the input
//! binds is left to the checker: every variable the input mentions is a
//! candidate, and those it reports unbound or unsafe at the end are
//! dropped and the module rebuilt. Each
//! load makes a new version of `shell_default`; funs made by older inputs
//! keep their own version (the fun table of `runtime` names the version
//! each fun was made in), so they keep working after
//! a redefinition.
//!
//! Invariant: every term in `bindings` and `history` lives on `store` (or
//! is an immediate, or a literal, whose block is never freed even when its
//! module version is); `store` is rebuilt from scratch after each
//! evaluation, so garbage never accumulates there.

use super::server::{self, Reply, Server};
use crate::heap::{Heap, MessageBuffer};
use crate::heap::{copy_term, size_of};
use crate::process::Process;
use crate::syntax::ast::{Expr, ExprKind, Form};
use crate::syntax::span::Span;
use crate::syntax::{self, Diagnostic};
use crate::term::{Atom, Term};
use std::collections::BTreeSet;

/// The module that holds functions defined at the prompt.
pub use crate::code::module::SHELL_MODULE;
/// The function that evaluates one input.
const EVAL_FUNCTION: &str = "$eval";
/// The parameter that carries the results for `v(N)` inside expressions.
const HISTORY_VAR: &str = "ActShellHistory__";
/// The function behind `flush()`.
const FLUSH_FUNCTION: &str = "$flush";
/// The helpers erl's shell takes from module `c`: the shell module calls
/// them there unless a function of that name was defined at the prompt.
const FROM_C: &[(&str, u32)] = &[
    ("cd", 1),
    ("i", 0),
    ("ls", 0),
    ("ls", 1),
    ("m", 0),
    ("nregs", 0),
    ("pwd", 0),
    ("regs", 0),
];
/// The variable that holds the input's value inside `'$eval'`.
const VALUE_VAR: &str = "ActShellValue__";
/// How many results `v(N)` can recall (erl keeps 20 too).
const HISTORY: usize = 20;
/// The file name diagnostics show for shell input.
pub const INPUT_NAME: &str = "shell";

/// A function typed at the prompt: its name, arity and source text.
#[derive(Clone)]
struct Definition {
    name: String,
    arity: u32,
    text: String,
}

/// What an evaluation came to.
pub enum Evaluated {
    /// A value, printed as `~p` prints it.
    Value(String),
    /// An error to show (already formatted, ends with a newline).
    Error(String),
    /// `halt()` or `halt(Status)`.
    Halt(i32),
}

/// How deep erl's shell prints a result (its `?LINEMAX`): deeper parts
/// and list elements past it print as `...`.
const RESULT_DEPTH: i64 = 30;

/// The most characters of a result erl's shell puts on one line (its
/// `?CHAR_MAX`), not counting the indentation.
const RESULT_CHARS: usize = 60;

/// The shell's state between inputs.
pub struct Shell {
    definitions: Vec<Definition>,
    /// Bound variables in name order, values on `store`.
    bindings: Vec<(String, Term)>,
    /// The last results: (command number, value on `store`).
    history: Vec<(u64, Term)>,
    store: Heap,
    /// This shell's job number in the user-switch menu: its evaluator
    /// on the shared runtime (`server`).
    job: u32,
    /// Whether the input being evaluated calls `v/1`: then `'$eval'`
    /// takes the results as one more argument and `v/1` is defined.
    with_history: bool,
    /// The number of the next input (the prompt's `N>`).
    pub counter: u64,
    /// How deep results print: erl's 30, or none for `rp/1`.
    depth: i64,
}

impl Default for Shell {
    fn default() -> Self {
        Shell::new()
    }
}

/// Source text of the shell module being built, and where the user's text
/// sits in it (to move diagnostics back onto the input).
struct Generated {
    source: String,
    /// Offset of the input text in `source`, and its offset in the input.
    user_at: usize,
    user_from: usize,
    user_len: usize,
}

impl Shell {
    pub fn new() -> Shell {
        Shell {
            definitions: Vec::new(),
            bindings: Vec::new(),
            history: Vec::new(),
            store: Heap::new(),
            job: 1,
            with_history: false,
            counter: 1,
            depth: RESULT_DEPTH,
        }
    }

    /// Names of the bound variables, in order.
    pub fn binding_names(&self) -> Vec<String> {
        self.bindings.iter().map(|(n, _)| n.clone()).collect()
    }

    /// Names and arities of the functions defined at the prompt.
    pub fn function_names(&self) -> Vec<(String, u32)> {
        self.definitions
            .iter()
            .map(|d| (d.name.clone(), d.arity))
            .collect()
    }

    /// `b()`: every binding as `Name = Value`, one a line.
    pub fn show_bindings(&self) -> String {
        let mut out = String::new();
        for (name, value) in &self.bindings {
            let lead = format!("{name} = ");
            let shown = self.show_at(*value, lead.len(), RESULT_DEPTH);
            out.push_str(&format!("{lead}{shown}\n"));
        }
        out
    }

    /// `f()`: forgets every binding.
    pub fn forget_all(&mut self) {
        self.bindings.clear();
        self.rebuild_store(None, &[]);
    }

    /// `f(X)`: forgets one binding.
    pub fn forget(&mut self, name: &str) {
        self.bindings.retain(|(n, _)| n != name);
        self.rebuild_store(None, &[]);
    }

    /// `v(N)`: the value of result N; `v(-1)` is the result of the input
    /// before this one, as in erl. It becomes this input's result too.
    pub fn recall(&mut self, n: i64) -> Option<String> {
        let wanted = if n < 0 { self.counter as i64 + n } else { n };
        let value = self
            .history
            .iter()
            .find(|(i, _)| *i as i64 == wanted)
            .map(|(_, v)| *v)?;
        // The value is on `store` already: the history may hold it twice.
        self.remember_immediate(value);
        Some(self.show(value))
    }

    /// A term on `store` as results print: from the line's start.
    fn show(&self, t: Term) -> String {
        self.show_at(t, 0, self.depth)
    }

    /// `rp(Expr)`: evaluates `exprs` and prints the value whole (no depth
    /// limit); as in erl, the input's result is `ok`.
    pub fn eval_whole(&mut self, input: &str, exprs: &[Expr]) -> Evaluated {
        self.depth = -1;
        let result = self.eval(input, exprs);
        self.depth = RESULT_DEPTH;
        if let Evaluated::Value(_) = result
            && let Some(last) = self.history.last_mut()
        {
            last.1 = Term::atom(Atom::OK);
        }
        result
    }

    /// Defines (or redefines) a function typed at the prompt. `input` is
    /// the whole input text and `form` its parse.
    pub fn define(&mut self, input: &str, form: &Form) -> Result<(), String> {
        let Form::Function(function) = form else {
            return Err("* attributes cannot be given at the prompt; \
                        put them in a module and load it with c(File)\n"
                .to_string());
        };
        let span = function.span;
        let text = input[span.start as usize..span.end as usize].to_string();
        let definition = Definition {
            name: function.name.clone(),
            arity: function.arity,
            text,
        };
        let old = self.definitions.clone();
        match self
            .definitions
            .iter_mut()
            .find(|d| d.name == definition.name && d.arity == definition.arity)
        {
            Some(d) => *d = definition,
            None => self.definitions.push(definition),
        }
        let at = self
            .definitions
            .iter()
            .position(|d| d.name == function.name && d.arity == function.arity)
            .unwrap_or(0);
        self.with_history = false;
        let generated = self.generate(None, &[], &[], Some((at, span.start as usize)));
        match compile(&generated, input) {
            Ok(module) => {
                crate::runtime::load(module);
                Ok(())
            }
            Err(text) => {
                self.definitions = old;
                Err(text)
            }
        }
    }

    /// Builds the shell module's source: the definitions, then `'$eval'`
    /// over `exprs` of `input` when given. `user` marks which definition
    /// is the input (its index, and its offset in the input).
    fn generate(
        &self,
        exprs: Option<(&str, usize, usize)>,
        params: &[String],
        results: &[String],
        user: Option<(usize, usize)>,
    ) -> Generated {
        let mut source = format!("-module({SHELL_MODULE}).\n-export([");
        let mut exports: Vec<String> = self
            .definitions
            .iter()
            .map(|d| format!("{}/{}", quote_atom(&d.name), d.arity))
            .collect();
        exports.push(format!("'{FLUSH_FUNCTION}'/0"));
        let from_c: Vec<(&str, u32)> = FROM_C
            .iter()
            .copied()
            .filter(|(n, a)| {
                !self
                    .definitions
                    .iter()
                    .any(|d| d.name == *n && d.arity == *a)
            })
            .collect();
        exports.extend(from_c.iter().map(|(n, a)| format!("{n}/{a}")));
        let history = self.with_history && exprs.is_some();
        let mut params = params.to_vec();
        if history {
            params.push(HISTORY_VAR.to_string());
            exports.push("v/1".to_string());
        }
        if exprs.is_some() {
            exports.push(format!("'{EVAL_FUNCTION}'/{}", params.len()));
        }
        source.push_str(&exports.join(", "));
        source.push_str("]).\n");
        let mut generated = Generated {
            source,
            user_at: 0,
            user_from: 0,
            user_len: 0,
        };
        // flush(): the evaluator's mailbox, as erl shows it.
        generated.source.push_str(&format!(
            "'{FLUSH_FUNCTION}'() -> receive M -> io:format(\"Shell got ~p~n\", [M]), \
             '{FLUSH_FUNCTION}'() after 0 -> ok end.\n"
        ));
        // v(N) inside an expression: the results the shell passes in.
        if history {
            generated.source.push_str(
                "v(N) ->\n\
                 H = get('$shell_history'),\n\
                 Found = if N < 0 -> lists:keyfind(COUNTER + N, 1, H);\n\
                 true -> lists:keyfind(N, 1, H) end,\n\
                 case Found of {_, V} -> V; _ -> erlang:error({bad_history, N}) end.\n"
                    .replace("COUNTER", &self.counter.to_string())
                    .as_str(),
            );
        }
        for (i, d) in self.definitions.iter().enumerate() {
            if let Some((index, from)) = user
                && index == i
            {
                generated.user_at = generated.source.len();
                generated.user_from = from;
                generated.user_len = d.text.len();
            }
            generated.source.push_str(&d.text);
            generated.source.push_str(".\n");
        }
        if let Some((text, from, _)) = exprs {
            let s = &mut generated.source;
            s.push_str(&format!("'{EVAL_FUNCTION}'({}) ->\n", params.join(", ")));
            if history {
                s.push_str(&format!("put('$shell_history', {HISTORY_VAR}),\n"));
            }
            s.push_str(&format!("{VALUE_VAR} = begin\n"));
            generated.user_at = s.len();
            generated.user_from = from;
            generated.user_len = text.len();
            s.push_str(text);
            s.push_str(&format!(
                "\nend,\n{{{VALUE_VAR}, {{{}}}}}.\n",
                results.join(", ")
            ));
        }
        // Last, so the lines of the input stay where they were.
        for (name, arity) in &from_c {
            let params: Vec<String> = (1..=*arity).map(|i| format!("A{i}")).collect();
            let params = params.join(", ");
            generated
                .source
                .push_str(&format!("{name}({params}) -> c:{name}({params}).\n"));
        }
        generated
    }

    /// Evaluates an expression sequence of `input`.
    pub fn eval(&mut self, input: &str, exprs: &[Expr]) -> Evaluated {
        let (Some(first), Some(last)) = (exprs.first(), exprs.last()) else {
            return Evaluated::Error("* nothing to evaluate\n".to_string());
        };
        let from = first.span.start as usize;
        let to = last.span.end as usize;
        let text = &input[from..to];
        let params: Vec<String> = self.binding_names();
        self.with_history = calls_v(exprs)
            && !self
                .definitions
                .iter()
                .any(|d| d.name == "v" && d.arity == 1);
        // Candidates for the bindings after the input: the old ones and
        // every variable the input mentions; those the checker says are
        // not bound (or unsafe) at the end are dropped, one round each.
        let mut candidates: BTreeSet<String> = params.iter().cloned().collect();
        candidates.extend(variables(exprs));
        let module = loop {
            let results: Vec<String> = candidates.iter().cloned().collect();
            let generated = self.generate(Some((text, from, to)), &params, &results, None);
            match compile_checked(&generated) {
                Ok(module) => break module,
                Err(diagnostics) => {
                    let tail = generated.user_at + generated.user_len;
                    let (ours, theirs): (Vec<_>, Vec<_>) = diagnostics
                        .into_iter()
                        .partition(|d| d.span.start as usize > tail);
                    if !theirs.is_empty() {
                        return Evaluated::Error(render_user(&generated, &theirs, input));
                    }
                    let before = candidates.len();
                    for d in &ours {
                        if let Some(name) = quoted_variable(&d.message) {
                            candidates.remove(name);
                        }
                    }
                    if candidates.len() == before {
                        let text = syntax::render(&ours, INPUT_NAME, &generated.source);
                        return Evaluated::Error(text);
                    }
                }
            }
        };
        let results: Vec<String> = candidates.into_iter().collect();
        self.run(module, &params, &results, exprs)
    }

    /// Loads the compiled shell module and runs `'$eval'` in the shell's
    /// evaluator process with the current bindings as arguments.
    fn run(
        &mut self,
        module: crate::code::Module,
        params: &[String],
        results: &[String],
        exprs: &[Expr],
    ) -> Evaluated {
        let module = crate::runtime::load(module);
        let values: Vec<Term> = self.bindings.iter().map(|(_, v)| *v).collect();
        debug_assert_eq!(values.len(), params.len());
        let history = self.with_history.then_some(&self.history[..]);
        let call = server::with_server(|server| {
            server.call(
                self.job,
                module.name,
                Atom::intern(EVAL_FUNCTION),
                &self.store,
                &values,
                history,
            )
        });
        let reply = match call {
            Ok(reply) => reply,
            Err(text) => return Evaluated::Error(text),
        };
        crate::runtime::output::flush();
        let buffer = match reply {
            Reply::Value(buffer) => buffer,
            Reply::Exception(buffer) => {
                let mut text = exception_text(&module, &buffer);
                if text == "** exception error: undefined function\n"
                    && let Some((m, f, a)) = first_undefined_call(exprs)
                {
                    text = format!(
                        "** exception error: undefined function {}:{}/{a}\n",
                        quote_atom(&m),
                        quote_atom(&f)
                    );
                }
                return Evaluated::Error(text);
            }
            Reply::Died(buffer) => {
                let empty = Heap::new();
                let heap = buffer.heap().unwrap_or(&empty);
                let reason = heap
                    .as_tuple(buffer.term())
                    .and_then(|t| t.get(1).copied())
                    .unwrap_or(Term::NIL);
                return Evaluated::Error(format!(
                    "** exception exit: {}\n",
                    crate::bif::fmt::print(heap, reason)
                ));
            }
            Reply::Interrupted => {
                return Evaluated::Error(
                    "** exception exit: killed (interrupted by Ctrl-C; the shell has a new process)\n"
                        .to_string(),
                );
            }
            Reply::Ended(status) => return Evaluated::Halt(status),
        };
        // {value, {Value, {Bindings...}}}
        let empty = Heap::new();
        let heap = buffer.heap().unwrap_or(&empty);
        let pair = heap
            .as_tuple(buffer.term())
            .and_then(|t| t.get(1).copied())
            .and_then(|r| heap.as_tuple(r));
        let Some([value, bound]) = pair.and_then(|t| <[Term; 2]>::try_from(t).ok()) else {
            return Evaluated::Error("** the shell lost its result\n".to_string());
        };
        let bound: Vec<Term> = heap
            .as_tuple(bound)
            .map(<[Term]>::to_vec)
            .unwrap_or_default();
        let new: Vec<(String, Term)> = results.iter().cloned().zip(bound).collect();
        self.rebuild_store(Some((heap, value)), &new);
        let shown = self
            .history
            .last()
            .map_or(String::new(), |(_, v)| self.show(*v));
        Evaluated::Value(shown)
    }

    /// Stops the runtime (q()).
    pub fn quit(&mut self) {
        server::if_started(Server::quit);
    }

    /// This shell as job `job` of the user-switch menu.
    pub fn set_job(&mut self, job: u32) {
        self.job = job;
    }

    /// Kills this shell's evaluator (the menu's `k` and `i`): its next
    /// input runs in a new process, with the bindings kept.
    pub fn kill_evaluator(&mut self) {
        let job = self.job;
        server::if_started(|s| s.kill(job));
    }

    /// The result of input `n` (`v(N)` numbering), if it is kept.
    pub fn has_result(&self, n: u64) -> Option<String> {
        self.history
            .iter()
            .find(|(i, _)| *i == n)
            .map(|(_, v)| self.show_at(*v, 3, RESULT_DEPTH))
    }

    /// A term on `store` whose first character goes at `column` (0 at
    /// a line's start), laid out as erl's shell does: io_lib_pretty at 80
    /// columns with at most 60 characters of the term on a line, nested
    /// `depth` deep (negative: no limit).
    fn show_at(&self, t: Term, column: usize, depth: i64) -> String {
        crate::term::print::print_limited(
            &self.store,
            t,
            column,
            80,
            depth,
            Some(RESULT_CHARS),
            crate::term::print::Strings::Latin1,
        )
    }

    /// Records a result for the current input, as erl's history keeps
    /// it: an immediate (a shell command's `ok`) or a term on `store`.
    pub fn remember_immediate(&mut self, value: Term) {
        if self.history.len() >= HISTORY {
            self.history.remove(0);
        }
        self.history.push((self.counter, value));
    }

    /// Records a failed or valueless input in the count only.
    pub fn next(&mut self) {
        self.counter += 1;
    }

    /// Makes a fresh `store` with the surviving history, `value` (from
    /// `from`, added to the history as result `counter`) and the bindings:
    /// `new` (terms on `from`) replace all bindings when given.
    fn rebuild_store(&mut self, value: Option<(&Heap, Term)>, new: &[(String, Term)]) {
        let mut words = 0usize;
        // Room for the new result, if there is one.
        let room = if value.is_some() {
            HISTORY - 1
        } else {
            HISTORY
        };
        let keep = self.history.len().saturating_sub(room);
        let old_history = &self.history[keep..];
        for (_, v) in old_history {
            words = words.saturating_add(size_of(&self.store, *v).unwrap_or(0));
        }
        let from = value.map(|(h, _)| h);
        if let Some((h, v)) = value {
            words = words.saturating_add(size_of(h, v).unwrap_or(0));
            for (_, t) in new {
                words = words.saturating_add(size_of(h, *t).unwrap_or(0));
            }
        } else {
            for (_, t) in &self.bindings {
                words = words.saturating_add(size_of(&self.store, *t).unwrap_or(0));
            }
        }
        let mut store = Heap::new();
        if store.ensure(words, &mut []).is_err() {
            return;
        }
        let mut history: Vec<(u64, Term)> = old_history
            .iter()
            .map(|(i, v)| (*i, copy_term(&self.store, *v, &mut store)))
            .collect();
        let bindings: Vec<(String, Term)> = match from {
            Some(h) => new
                .iter()
                .map(|(n, t)| (n.clone(), copy_term(h, *t, &mut store)))
                .collect(),
            None => self
                .bindings
                .iter()
                .map(|(n, t)| (n.clone(), copy_term(&self.store, *t, &mut store)))
                .collect(),
        };
        if let Some((h, v)) = value {
            history.push((self.counter, copy_term(h, v, &mut store)));
        }
        self.history = history;
        self.bindings = bindings;
        self.store = store;
    }
}

/// Every variable name `exprs` mention (except `_`), at any depth.
fn variables(exprs: &[Expr]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut pending: Vec<&Expr> = exprs.iter().collect();
    while let Some(e) = pending.pop() {
        if let ExprKind::Var(name) = &e.kind
            && name != "_"
        {
            names.insert(name.clone());
        }
        syntax::walk::children(e, &mut pending);
    }
    names
}

/// The variable a checker message is about: `variable 'X' is unbound`.
fn quoted_variable(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("variable '")?;
    let end = rest.find('\'')?;
    Some(&rest[..end])
}

/// An atom as source text.
fn quote_atom(name: &str) -> String {
    if crate::term::print::atom_is_bare(name) {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// Parses, checks and compiles generated source; errors are the checker's
/// and compiler's diagnostics, spans in the generated source.
fn compile_checked(generated: &Generated) -> Result<crate::code::Module, Vec<Diagnostic>> {
    let source = &generated.source;
    let (module, mut diagnostics) = syntax::parse_module(source);
    if !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.extend(syntax::check::check_module(&module, source));
    }
    diagnostics.retain(Diagnostic::is_error);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    crate::compile::compile_module(&module, SHELL_MODULE, INPUT_NAME, source)
        .map_err(|e| vec![Diagnostic::error(e.message, e.span)])
}

/// `compile_checked`, errors rendered against the input.
fn compile(generated: &Generated, input: &str) -> Result<crate::code::Module, String> {
    compile_checked(generated).map_err(|d| render_user(generated, &d, input))
}

/// Renders diagnostics of generated source: those that fall inside the
/// input's text as erl does (`erl_error`), others (about the shell's own
/// code) against the generated source.
fn render_user(generated: &Generated, diagnostics: &[Diagnostic], input: &str) -> String {
    let (at, len, from) = (generated.user_at, generated.user_len, generated.user_from);
    let mut moved = Vec::new();
    let mut out = String::new();
    for d in diagnostics {
        let (start, end) = (d.span.start as usize, d.span.end as usize);
        if start >= at && start <= at + len {
            let mut d = d.clone();
            let end = end.clamp(start, at + len);
            d.span = Span::new(start - at + from, end - at + from);
            for (e, _) in &mut d.escript {
                *e = (*e as usize).saturating_sub(at) as u32 + from as u32;
            }
            moved.push(d);
        } else {
            out.push_str(&syntax::render(
                std::slice::from_ref(d),
                INPUT_NAME,
                &generated.source,
            ));
        }
    }
    if !moved.is_empty() {
        return erl_error(&moved, input);
    }
    out
}

/// The first error about `input` as erl's shell prints it: `* 1:5: syntax
/// error before: '.'`, `* 1:1: variable 'X' is unbound` (line and column
/// within the input, OTP's words); a call to a function that does not
/// exist is erl's run-time `undefined shell command f/1`.
pub fn erl_error(diagnostics: &[Diagnostic], input: &str) -> String {
    let index = syntax::span::LineIndex::new(input);
    let placed = diagnostics.iter().filter(|d| d.is_error()).map(|d| {
        let (at, message) = match d.escript.first() {
            Some((at, message)) => (*at, message.as_str()),
            None => (d.span.start, d.message.as_str()),
        };
        let at = at.min(input.len() as u32);
        (index.line_col(input, at), message)
    });
    let Some(((line, column), message)) = placed.min_by_key(|(place, _)| *place) else {
        return String::new();
    };
    if let Some(name) = message
        .strip_prefix("function ")
        .and_then(|m| m.strip_suffix(" undefined"))
    {
        return format!("** exception error: undefined shell command {name}\n");
    }
    format!("* {line}:{column}: {message}\n")
}

/// An uncaught exception as erl shows it: `** exception error: ...`, with
/// the stack trace minus the shell's own frames.
fn format_error(process: &Process) -> String {
    let [class, reason, trace] = process.exception();
    // erl indents the trace under `** ` by three columns.
    let text = crate::runtime::explain::format_exception(&process.heap, class, reason, trace, 3);
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = &interpreted_fun(line);
        if i == 0 {
            out.push_str("** ");
        } else if line.contains(EVAL_FUNCTION) || line.contains("act_shell:") {
            continue;
        }
        // Lines of the generated shell module mean nothing to the user.
        let line = match line.find(&format!("{SHELL_MODULE}:")) {
            Some(_) => line
                .split(&format!(" ({INPUT_NAME}, line"))
                .next()
                .unwrap_or(line),
            None => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A line of an exception with a fun typed at the prompt named as erl
/// names it (erl's shell interprets such funs): the generated
/// `shell_default:'-$eval/N-fun-K-'` becomes
/// `erl_eval:'-inside-an-interpreted-fun-'`, without a location.
fn interpreted_fun(line: &str) -> String {
    let generated = format!("{SHELL_MODULE}:'-{EVAL_FUNCTION}/");
    let Some(at) = line.find(&generated) else {
        return line.to_string();
    };
    let name_end = line[at + generated.len()..]
        .find('\'')
        .map_or(line.len(), |e| at + generated.len() + e + 1);
    let rest = &line[name_end..];
    // erl leaves the blank before the (empty) location.
    let rest = match rest.find(&format!("({INPUT_NAME}, line")) {
        Some(loc) => {
            let after = rest[loc..].find(')').map_or(rest.len(), |e| loc + e + 1);
            format!("{}{}", &rest[..loc], &rest[after..])
        }
        None => rest.to_string(),
    };
    format!(
        "{}erl_eval:'-inside-an-interpreted-fun-'{rest}",
        &line[..at]
    )
}

/// The text of an `{exception, Class, Reason, Stack}` reply: the terms go
/// onto a scratch process so the interpreter's formatter can show them.
fn exception_text(module: &std::sync::Arc<crate::code::Module>, buffer: &MessageBuffer) -> String {
    let empty = Heap::new();
    let heap = buffer.heap().unwrap_or(&empty);
    let mut process = Process::new(module.clone(), 0);
    // One copy of the whole tuple: a second copy could collect the heap
    // and lose the first (a scratch process has no other roots).
    let Ok(tuple) = process.heap.copy_in(heap, buffer.term(), &mut []) else {
        return "** exception error: system_limit\n".to_string();
    };
    let Some([_, class, reason, stack]) = process
        .heap
        .as_tuple(tuple)
        .and_then(|t| <[Term; 4]>::try_from(t).ok())
    else {
        return "** exception error: (unreadable)\n".to_string();
    };
    let copied = [class, reason, stack];
    process.set_exception(copied);
    format_error(&process)
}

/// The first remote call `m:f(...)` with literal names in `exprs` (in
/// source order) that names no function: the likely cause of an `undef`
/// (the interpreter's stack trace does not name the missing callee).
fn first_undefined_call(exprs: &[Expr]) -> Option<(String, String, u32)> {
    use crate::syntax::ast::CallTarget;
    let mut calls = Vec::new();
    let mut pending: Vec<&Expr> = exprs.iter().rev().collect();
    while let Some(e) = pending.pop() {
        if let ExprKind::Call(target, args) = &e.kind
            && let CallTarget::Remote(m, f) = target.as_ref()
            && let (ExprKind::Atom(m), ExprKind::Atom(f)) = (&m.kind, &f.kind)
        {
            calls.push((e.span.start, m.clone(), f.clone(), args.len() as u32));
        }
        syntax::walk::children(e, &mut pending);
    }
    calls.sort_by_key(|c| c.0);
    calls.into_iter().find_map(|(_, m, f, a)| {
        // erlang:apply/2,3 are instructions, not BIFs.
        let defined = (m == "erlang" && f == "apply")
            || crate::bif::lookup(&m, &f, a).is_some()
            || crate::runtime::lookup(Atom::intern(&m))
                .ok()
                .flatten()
                .is_some_and(|module| module.exported(Atom::intern(&f), a).is_some());
        (!defined).then_some((m, f, a))
    })
}

/// Whether `exprs` call `v/1` (the shell's result history) anywhere.
fn calls_v(exprs: &[Expr]) -> bool {
    use crate::syntax::ast::CallTarget;
    let mut pending: Vec<&Expr> = exprs.iter().collect();
    while let Some(e) = pending.pop() {
        if let ExprKind::Call(target, args) = &e.kind
            && let CallTarget::Local(name, _) = target.as_ref()
            && name == "v"
            && args.len() == 1
        {
            return true;
        }
        syntax::walk::children(e, &mut pending);
    }
    false
}
