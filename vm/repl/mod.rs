//! The interactive shell: `act` with no file. An Erlang-style read, eval,
//! print loop on rustyline.
//!
//! Input is read until a complete form (a `.` token) and may span lines.
//! A form is a shell command (`b()`, `f(X)`, `c("m.act")`, ...), a
//! function definition, or an expression sequence to evaluate with the
//! bindings (`eval`). On a terminal the prompt counts inputs (`1>`), lines
//! are edited with history (`~/.act_history`, or `$ACT_HISTORY`) and tab
//! completion, Ctrl-C interrupts an evaluation (at the prompt it opens
//! erl's BREAK menu) and Ctrl-G opens erl's user-switch menu of shell
//! jobs (`jobs`). When stdin is not a
//! terminal there is no prompt: each result is printed on its own line,
//! so the shell can be scripted.

pub mod complete;
pub mod eval;
pub mod interrupt;
pub mod jobs;
pub mod server;

use crate::syntax::ast::{CallTarget, Expr, ExprKind};
use crate::syntax::{self, ReplInput};
use crate::term::Atom;
use complete::{COMMANDS, Names, ShellHelper};
use eval::{Evaluated, Shell};
use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the loop does after one input.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    /// Leave the shell with this exit status.
    Exit(i32),
}

/// The shell and what it remembers besides bindings: which file each
/// module was compiled from (for `l(Mod)`).
pub struct Session {
    pub shell: Shell,
    sources: HashMap<String, PathBuf>,
    /// The text of the last inputs, by number (for `h()` and `e(N)`).
    inputs: Vec<(u64, String)>,
    /// Whether the input just run took a number (a syntax error or an
    /// unknown `e(N)` does not, as in erl).
    counted: bool,
    /// The text `e(N)` ran, recorded in place of `e(N)` itself.
    replayed: Option<String>,
}

/// How many inputs `h()` and `e(N)` reach back (erl's default, 20).
const INPUTS_KEPT: usize = 20;

/// An input as erl's `h()` shows it when it is made of flat expressions
/// (no `fun ... end`, `case`, `if`, `receive`, `try`, `begin`, binaries):
/// erl_pp's spacing (`X = 1 + 2`, `[1, 2, 3]`, `#{a => 1}`, `m:f(A, B)`),
/// literals as erl_pp writes them (`16#FF` as `255`, adjacent strings
/// joined), the expressions on one line. `None` for anything else, and
/// for a line longer than erl_pp surely keeps on one line
/// (`command_text` then shows it as typed).
fn erl_pp_command(input: &str) -> Option<String> {
    use syntax::lexer::{Token, tokenize};
    let mut tokens: Vec<Token> = tokenize(input).into_iter().map(|t| t.1).collect();
    if tokens.last() == Some(&Token::Dot) {
        tokens.pop();
    }
    if tokens.is_empty() || tokens.contains(&Token::Dot) {
        return None;
    }
    let mut lines: Vec<String> = vec![String::new()];
    let mut depth = 0usize;
    let mut previous: Option<&Token> = None;
    for (i, token) in tokens.iter().enumerate() {
        let out = lines.last_mut()?;
        match token {
            Token::Case
            | Token::If
            | Token::Receive
            | Token::Try
            | Token::Begin
            | Token::Catch
            | Token::When
            | Token::Of
            | Token::End
            | Token::After
            | Token::OpenBin
            | Token::CloseBin
            | Token::Question
            | Token::DoubleQuestion
            | Token::Error(_) => return None,
            Token::Fun if tokens.get(i + 1) == Some(&Token::LParen) => return None,
            Token::Fun if matches!(tokens.get(i + 1), Some(Token::Var(_))) => return None,
            Token::LParen | Token::LBracket | Token::LBrace => {
                depth += 1;
                out.push_str(token.symbol());
            }
            Token::RParen | Token::RBracket | Token::RBrace => {
                depth = depth.checked_sub(1)?;
                out.push_str(token.symbol());
            }
            Token::Comma if depth == 0 => lines.push(String::new()),
            Token::Comma => out.push_str(", "),
            Token::Colon | Token::Hash | Token::Period => out.push_str(token.symbol()),
            // `fun f/1` and `fun m:f/1` keep their slash tight.
            Token::Slash
                if i >= 2 && matches!(tokens[..i].iter().rev().nth(1), Some(Token::Fun))
                    || i >= 4 && matches!(tokens[..i].iter().rev().nth(3), Some(Token::Fun)) =>
            {
                out.push('/')
            }
            Token::Minus | Token::Plus | Token::Not | Token::Bnot if is_prefix(previous) => {
                out.push_str(token.symbol());
                if matches!(token, Token::Not | Token::Bnot) {
                    out.push(' ');
                }
            }
            Token::String(_) if matches!(previous, Some(Token::String(_))) => {
                // Adjacent strings are one string: reopen the last one.
                let Token::String(s) = token else { return None };
                out.pop();
                let mut text = String::new();
                crate::term::print::write_string(&mut text, s.iter().copied());
                out.push_str(&text[1..]);
            }
            Token::Fun => out.push_str("fun "),
            Token::Atom(_)
            | Token::Var(_)
            | Token::Number(_)
            | Token::Char(_)
            | Token::String(_) => out.push_str(&token.escript_text()),
            other => {
                out.push(' ');
                out.push_str(other.symbol());
                out.push(' ');
            }
        }
        previous = Some(token);
    }
    let joined = lines.join(", ");
    if depth != 0 || lines.iter().any(String::is_empty) || joined.chars().count() > 60 {
        return None;
    }
    Some(joined)
}

/// Whether a `-`, `+`, `not` or `bnot` after `previous` is a prefix
/// operator (nothing before it that could be its left operand).
fn is_prefix(previous: Option<&syntax::lexer::Token>) -> bool {
    use syntax::lexer::Token;
    !matches!(
        previous,
        Some(
            Token::Atom(_)
                | Token::Var(_)
                | Token::Number(_)
                | Token::Char(_)
                | Token::String(_)
                | Token::RParen
                | Token::RBracket
                | Token::RBrace
        )
    )
}

/// An input as `h()` shows it: on one line, without its dot; a line
/// break and the blanks around it become one space outside quotes.
fn command_text(input: &str) -> String {
    let t = input.trim();
    let t = t.strip_suffix('.').unwrap_or(t).trim_end();
    let mut out = String::with_capacity(t.len());
    let mut quote: Option<char> = None;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '$' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                    if n == '\\'
                        && let Some(m) = chars.next()
                    {
                        out.push(m);
                    }
                }
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '%' => {
                // A comment runs to the end of its line.
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            None if c.is_whitespace() => {
                let mut newline = c == '\n';
                while let Some(&n) = chars.peek().filter(|n| n.is_whitespace()) {
                    newline |= n == '\n';
                    chars.next();
                }
                let joined = out.ends_with(['(', '[', '{'])
                    || chars.peek().is_some_and(|&n| matches!(n, ')' | ']' | '}'));
                if !(newline && joined) {
                    out.push(' ');
                }
            }
            None => out.push(c),
        }
    }
    out
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

const HELP: &str = "\
Shell commands:
  b()          show all variable bindings
  f()          forget all variable bindings
  f(X)         forget the binding of X
  h()          history: the last inputs and their results
  e(N)         repeat input N (e(-1): the one before)
  v(N)         the result of input N (v(-1): the last one), also inside
               expressions
  c(File)      compile and load a module from File (\"m.act\" or m)
  l(Mod)       reload module Mod from its file
  m()          which modules are loaded
  m(Mod)       list the functions Mod exports
  i()          information about the processes
  regs()       information about the registered processes
  rp(Term)     print Term whole (results stop at depth 30)
  flush()      print and empty the shell's mailbox
  pwd()        print the working directory
  cd(Dir)      change the working directory
  ls(), ls(Dir)  list the files in a directory
  help()       this text
  q(), halt()  leave the shell (so does Ctrl-D at an empty prompt)
Define a function by typing it: fac(0) -> 1; fac(N) -> N * fac(N - 1).
";

impl Session {
    /// A new shell; modules load from the embedded library and from
    /// `name.act` files in the current directory.
    pub fn new() -> Session {
        crate::runtime::set_loader(Box::new(|name| {
            crate::runtime::script::load_module(Path::new("."), name)
        }));
        // The printer names funs and pids the runtime's way.
        let heap = crate::heap::Heap::new();
        let _ = crate::bif::fmt::print(&heap, crate::term::Term::NIL);
        Session {
            shell: Shell::new(),
            sources: HashMap::new(),
            inputs: Vec::new(),
            counted: false,
            replayed: None,
        }
    }

    /// Handles one complete input (ending in a dot); writes what it shows
    /// to `out`.
    pub fn handle(&mut self, input: &str, out: &mut String) -> Step {
        // Line numbers in messages count from the input's first line.
        let input = input.trim_start();
        let number = self.shell.counter;
        self.replayed = None;
        let step = self.run_input(input, out);
        if self.counted {
            let text = self
                .replayed
                .take()
                .or_else(|| erl_pp_command(input))
                .unwrap_or_else(|| command_text(input));
            if self.inputs.len() >= INPUTS_KEPT {
                self.inputs.remove(0);
            }
            self.inputs.push((number, text));
            self.shell.next();
        }
        step
    }

    /// Runs one input; sets `counted` when it takes a number.
    fn run_input(&mut self, input: &str, out: &mut String) -> Step {
        self.counted = true;
        let parsed = syntax::with_big_stack(|| syntax::parse_repl(input));
        match parsed {
            Err(diagnostics) => {
                out.push_str(&eval::erl_error(&diagnostics, input));
                self.counted = false;
                Step::Continue
            }
            Ok(ReplInput::Form(form)) => {
                match self.shell.define(input, &form) {
                    Ok(()) => {
                        out.push_str("ok\n");
                        self.shell
                            .remember_immediate(crate::term::Term::atom(Atom::OK));
                    }
                    Err(text) => out.push_str(&text),
                }
                Step::Continue
            }
            Ok(ReplInput::Exprs(exprs)) => {
                if let [single] = exprs.as_slice()
                    && let Some(step) = self.command(input, single, out)
                {
                    return step;
                }
                let result = syntax::with_big_stack(|| self.shell.eval(input, &exprs));
                self.show(result, out)
            }
        }
    }

    /// `h()`: the inputs kept, each with its result when it had one.
    fn show_history(&self, out: &mut String) {
        for (n, text) in &self.inputs {
            out.push_str(&format!("{n}: {text}\n"));
            if let Some(value) = self.shell.has_result(*n) {
                out.push_str(&format!("-> {value}\n"));
            }
        }
    }

    /// `e(N)`: runs input N again (`e(-1)`: the one before this).
    fn replay(&mut self, n: i64, out: &mut String) -> Step {
        let wanted = if n < 0 {
            self.shell.counter as i64 + n
        } else {
            n
        };
        let found = self
            .inputs
            .iter()
            .find(|(i, _)| *i as i64 == wanted)
            .map(|(_, t)| t.clone());
        let Some(text) = found else {
            out.push_str(&format!("* {n}: command not found\n"));
            self.counted = false;
            return Step::Continue;
        };
        let step = self.run_input(&format!("{text}."), out);
        self.replayed = Some(text);
        step
    }

    /// Writes what an evaluation came to.
    fn show(&mut self, result: Evaluated, out: &mut String) -> Step {
        match result {
            Evaluated::Value(text) => {
                out.push_str(&text);
                out.push('\n');
                Step::Continue
            }
            Evaluated::Error(text) => {
                out.push_str(&text);
                Step::Continue
            }
            Evaluated::Halt(status) => Step::Exit(status),
        }
    }

    /// A shell command, if `expr` is one: `help()`, `b()`, `c(File)`...
    fn command(&mut self, input: &str, expr: &Expr, out: &mut String) -> Option<Step> {
        let ExprKind::Call(target, args) = &expr.kind else {
            return None;
        };
        let CallTarget::Local(name, _) = target.as_ref() else {
            return None;
        };
        let arity = args.len() as u32;
        if !COMMANDS.contains(&(name.as_str(), arity)) {
            return None;
        }
        let arg = args.first().map(|a| &a.kind);
        match (name.as_str(), arg) {
            ("help", None) => out.push_str(HELP),
            ("q", None) | ("halt", None) => {
                // erl's q() returns ok (init:stop/0 is asynchronous);
                // halt() ends at once.
                if name == "q" {
                    out.push_str("ok\n");
                }
                self.shell.quit();
                return Some(Step::Exit(0));
            }
            ("b", None) => {
                out.push_str(&self.shell.show_bindings());
                self.ok(out);
            }
            ("f", None) => {
                self.shell.forget_all();
                self.ok(out);
            }
            ("f", Some(ExprKind::Var(v))) => {
                self.shell.forget(v);
                self.ok(out);
            }
            ("h", None) => {
                self.show_history(out);
                self.ok(out);
            }
            ("e", Some(_)) => {
                let n = integer_arg(&args[0])?;
                return Some(self.replay(n, out));
            }
            ("v", Some(_)) => {
                let n = integer_arg(&args[0])?;
                match self.shell.recall(n) {
                    Some(text) => {
                        out.push_str(&text);
                        out.push('\n');
                    }
                    None => {
                        out.push_str(&format!("* {n}: command not found\n"));
                        self.counted = false;
                    }
                }
            }
            ("rp", Some(_)) => {
                let result = syntax::with_big_stack(|| self.shell.eval_whole(input, args));
                // rp/1 prints the value and returns ok.
                let printed = matches!(result, Evaluated::Value(_));
                let step = self.show(result, out);
                if printed {
                    out.push_str("ok\n");
                }
                return Some(step);
            }
            ("flush", None) => {
                let text = "'$flush'().";
                let Ok(exprs) = syntax::parse_exprs(text) else {
                    return None;
                };
                let result = self.shell.eval(text, &exprs);
                return Some(self.show(result, out));
            }
            ("c", Some(kind)) => {
                let file = match kind {
                    // A module with no source here: erl's c/1 answers
                    // {error,non_existing} (it looks for the module's
                    // object code next, and act has none to find).
                    ExprKind::Atom(a) if !Path::new(&format!("{a}.act")).is_file() => {
                        out.push_str("{error,non_existing}\n");
                        return Some(Step::Continue);
                    }
                    ExprKind::Atom(a) => format!("{a}.act"),
                    ExprKind::String(s) => {
                        let s: String = s.iter().filter_map(|&c| char::from_u32(c)).collect();
                        if Path::new(&s).extension().is_none() {
                            format!("{s}.act")
                        } else {
                            s
                        }
                    }
                    _ => return None,
                };
                self.compile_file(&file, out);
            }
            ("l", Some(ExprKind::Atom(m))) => {
                let path = self
                    .sources
                    .get(m)
                    .cloned()
                    .unwrap_or_else(|| PathBuf::from(format!("{m}.act")));
                self.reload(m, &path, out);
            }
            ("m", Some(ExprKind::Atom(m))) => self.list_module(m, out),
            _ => return None,
        }
        Some(Step::Continue)
    }

    /// Shows a command's `ok` and keeps it as the input's result.
    fn ok(&mut self, out: &mut String) {
        out.push_str("ok\n");
        self.shell
            .remember_immediate(crate::term::Term::atom(Atom::OK));
    }

    /// `c(File)`: compiles and loads a module; its errors and warnings
    /// as erl's c/1 prints them, then `{ok,Mod}` or `error`.
    fn compile_file(&mut self, file: &str, out: &mut String) {
        let (module, report) =
            syntax::with_big_stack(|| crate::runtime::script::compile_file_reported(file));
        out.push_str(&report);
        match module {
            Some(module) => {
                let name = module.name.name().to_string();
                crate::runtime::load(module);
                self.sources.insert(name.clone(), PathBuf::from(file));
                out.push_str(&format!("{{ok,{}}}\n", quote(&name)));
            }
            None => out.push_str("error\n"),
        }
    }

    /// `l(Mod)`: loads the newest source of Mod; `{module,Mod}`.
    fn reload(&mut self, name: &str, path: &Path, out: &mut String) {
        let file = path.to_string_lossy().into_owned();
        let compiled = if path.exists() {
            Some(syntax::with_big_stack(|| {
                crate::runtime::script::compile_file(&file)
            }))
        } else {
            syntax::with_big_stack(|| crate::runtime::script::load_module(Path::new("."), name))
        };
        match compiled {
            Some(Ok(module)) => {
                let loaded = module.name.name().to_string();
                crate::runtime::load(module);
                out.push_str(&format!("{{module,{}}}\n", quote(&loaded)));
            }
            Some(Err(text)) => {
                out.push_str(&text);
                out.push_str("error\n");
            }
            None => out.push_str("{error,nofile}\n"),
        }
    }

    /// `m(Mod)`: the module's exported functions.
    fn list_module(&mut self, name: &str, out: &mut String) {
        let functions = complete::module_functions(name);
        let known = crate::runtime::lookup(Atom::intern(name))
            .ok()
            .flatten()
            .is_some();
        if functions.is_empty() && !known {
            out.push_str(&format!(
                "** exception error: undefined module {}\n",
                quote(name)
            ));
            return;
        }
        out.push_str(&format!("Module: {}\nExports:\n", quote(name)));
        for (f, a) in functions {
            out.push_str(&format!("  {}/{a}\n", quote(&f)));
        }
        out.push_str("ok\n");
    }

    /// What completion can offer now.
    pub fn names(&self) -> Names {
        let mut modules: BTreeSet<String> = crate::bif::TABLE
            .iter()
            .map(|b| b.module.to_string())
            .collect();
        // The library modules written in act (stdlib/), loaded when named.
        modules.extend(
            crate::runtime::script::STDLIB
                .iter()
                .map(|(name, _)| name.to_string()),
        );
        modules.extend(self.sources.keys().cloned());
        modules.insert(eval::SHELL_MODULE.to_string());
        if let Ok(dir) = std::fs::read_dir(".") {
            for entry in dir.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "act")
                    && let Some(stem) = path.file_stem()
                {
                    modules.insert(stem.to_string_lossy().into_owned());
                }
            }
        }
        Names {
            variables: self.shell.binding_names(),
            functions: self.shell.function_names(),
            modules,
        }
    }
}

/// An integer literal argument (`v(3)`, `v(-1)`).
fn integer_arg(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Integer(i) => i64::try_from(i).ok(),
        ExprKind::UnaryOp(crate::syntax::ast::UnaryOp::Minus, inner) => {
            integer_arg(inner).map(|i| -i)
        }
        _ => None,
    }
}

fn quote(atom: &str) -> String {
    let mut s = String::new();
    crate::term::print::write_atom(&mut s, Atom::intern(atom));
    s
}

/// Splits the first complete form off `buffer`: the text up to and
/// including its dot. `None` while no dot has been typed.
pub fn split_input(buffer: &str) -> Option<(String, String)> {
    let tokens = crate::syntax::lexer::tokenize(buffer);
    let (_, _, end) = tokens
        .iter()
        .find(|(_, t, _)| *t == crate::syntax::lexer::Token::Dot)?;
    Some((buffer[..*end].to_string(), buffer[*end..].to_string()))
}

/// True when `text` holds no tokens (only blanks and comments).
fn is_blank(text: &str) -> bool {
    crate::syntax::lexer::tokenize(text).is_empty()
}

/// Runs the shell on this process's stdin and stdout; the exit status.
pub fn run() -> i32 {
    // As in erl's shell, standard_io is unicode: everything goes out as UTF-8.
    crate::runtime::output::set_unicode(true);
    start_flusher();
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        run_terminal()
    } else {
        let stdin = std::io::stdin();
        let mut out = std::io::stdout();
        run_script(stdin.lock(), &mut out)
    }
}

/// Flushes the VM's stdout every 50 ms, so that what processes print
/// while the shell waits for input (a spawned process, a timer) shows at
/// once rather than with the next result.
fn start_flusher() {
    let _ = std::thread::Builder::new()
        .name("act shell output".to_string())
        .spawn(|| {
            loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
                crate::runtime::output::flush();
            }
        });
}

/// The scripted shell: reads forms from `input` until its end, writes
/// each result on its own line, no prompts. Status 0 at the end of input.
pub fn run_script(mut input: impl BufRead, out: &mut impl Write) -> i32 {
    let mut session = Session::new();
    let mut buffer = String::new();
    let emit = |text: &str, out: &mut dyn Write| {
        crate::runtime::output::flush();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    };
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bytes, not `lines()`: a line that is not UTF-8 is read with
        // replacement characters instead of ending the input.
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        buffer.push_str(&String::from_utf8_lossy(&line));
        if !buffer.ends_with('\n') {
            buffer.push('\n');
        }
        while let Some((form, rest)) = split_input(&buffer) {
            buffer = rest;
            let mut text = String::new();
            let step = session.handle(&form, &mut text);
            emit(&text, out);
            if let Step::Exit(status) = step {
                return status;
            }
        }
    }
    if !is_blank(&buffer) {
        let mut text = String::new();
        session.handle(&buffer, &mut text);
        emit(&text, out);
    }
    0
}

/// Where the history file is: `$ACT_HISTORY`, else `~/.act_history`.
pub fn history_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ACT_HISTORY") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".act_history"))
}

/// The interactive shell on a terminal.
fn run_terminal() -> i32 {
    use rustyline::error::ReadlineError;
    let names = Arc::new(Mutex::new(Names::default()));
    // Tab completes what all candidates share, and a second Tab lists
    // them, as erl and bash do.
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .completion_show_all_if_ambiguous(true)
        .auto_add_history(false)
        .max_history_size(1000)
        .map(|b| b.build())
        .unwrap_or_default();
    let mut editor = match rustyline::Editor::<ShellHelper, _>::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("act: cannot start the line editor: {e}");
            let stdin = std::io::stdin();
            return run_script(stdin.lock(), &mut std::io::stdout());
        }
    };
    editor.set_helper(Some(ShellHelper {
        names: names.clone(),
    }));
    let history = history_path();
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    interrupt::install();
    // Ctrl-G reaches the editor as a key: it raises `switch` and ends the
    // line as Ctrl-C does, so the loop below tells the two apart.
    let switch = Arc::new(std::sync::atomic::AtomicBool::new(false));
    editor.bind_sequence(
        rustyline::KeyEvent::ctrl('G'),
        rustyline::EventHandler::Conditional(Box::new(CtrlG(switch.clone()))),
    );
    let mut jobs = jobs::Jobs::new(Session::new());
    println!("{}", jobs::banner());
    let mut buffer = String::new();
    let status = 'outer: loop {
        let Some(job) = jobs.current() else {
            break 1;
        };
        let session = &mut job.session;
        if let Ok(mut n) = names.lock() {
            *n = session.names();
        }
        let prompt = if is_blank(&buffer) {
            // A distributed shell names its node, as erl's does.
            let node = crate::term::node::this_node().name;
            if node == crate::term::Atom::NONODE {
                format!("{}> ", session.shell.counter)
            } else {
                format!("({}){}> ", node.name(), session.shell.counter)
            }
        } else {
            format!(
                "{}.. ",
                " ".repeat(session.shell.counter.to_string().len().saturating_sub(1))
            )
        };
        match editor.readline(&prompt) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                    if let Some(path) = &history {
                        let _ = editor.append_history(path);
                    }
                }
                buffer.push_str(&line);
                buffer.push('\n');
                while let Some((form, rest)) = split_input(&buffer) {
                    buffer = if is_blank(&rest) { String::new() } else { rest };
                    let mut text = String::new();
                    let step = session.handle(&form, &mut text);
                    crate::runtime::output::flush();
                    print!("{text}");
                    let _ = std::io::stdout().flush();
                    if let Step::Exit(status) = step {
                        break 'outer status;
                    }
                }
            }
            Err(ReadlineError::Interrupted)
                if switch.swap(false, std::sync::atomic::Ordering::SeqCst) =>
            {
                // Ctrl-G: the user-switch menu; the unfinished input goes.
                buffer.clear();
                if let Some(status) = user_switch(&mut editor, &mut jobs, &switch) {
                    break status;
                }
            }
            Err(ReadlineError::Interrupted) => {
                // Ctrl-C at the prompt: erl's BREAK menu; the unfinished
                // input goes.
                buffer.clear();
                interrupt::clear();
                if let Some(status) = break_menu(&mut editor) {
                    break status;
                }
            }
            Err(ReadlineError::Eof) if !is_blank(&buffer) => {
                // Ctrl-D inside an unfinished input drops that input and
                // keeps the shell; at an empty prompt it leaves.
                buffer.clear();
                println!("* the unfinished input was dropped (Ctrl-D)");
            }
            Err(ReadlineError::Eof) => break 0,
            Err(e) => {
                eprintln!("act: {e}");
                break 1;
            }
        }
    };
    for session in jobs.sessions() {
        session.shell.quit();
    }
    crate::runtime::output::flush();
    status
}

/// The Ctrl-G key: raises its flag and ends the line being read.
struct CtrlG(Arc<std::sync::atomic::AtomicBool>);

impl rustyline::ConditionalEventHandler for CtrlG {
    fn handle(
        &self,
        _: &rustyline::Event,
        _: rustyline::RepeatCount,
        _: bool,
        _: &rustyline::EventContext,
    ) -> Option<rustyline::Cmd> {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        Some(rustyline::Cmd::Interrupt)
    }
}

type Editor = rustyline::Editor<ShellHelper, rustyline::history::FileHistory>;

/// erl's user-switch menu, until a job is connected to (`None`) or `q`
/// (the exit status).
fn user_switch(
    editor: &mut Editor,
    jobs: &mut jobs::Jobs,
    switch: &std::sync::atomic::AtomicBool,
) -> Option<i32> {
    use rustyline::error::ReadlineError;
    println!("\nUser switch command");
    loop {
        let line = match editor.readline(" --> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                switch.store(false, std::sync::atomic::Ordering::SeqCst);
                continue;
            }
            Err(_) => return Some(0),
        };
        let mut out = String::new();
        let step = jobs.switch(&line, &mut out);
        print!("{out}");
        match step {
            jobs::Switch::Stay => {}
            jobs::Switch::Quit => return Some(0),
            jobs::Switch::Connect => {
                let mut out = String::new();
                jobs.connected(&mut out);
                print!("{out}");
                let _ = std::io::stdout().flush();
                return None;
            }
        }
    }
}

/// erl's BREAK menu: `None` to go on, or the exit status to leave with.
fn break_menu(editor: &mut Editor) -> Option<i32> {
    use rustyline::error::ReadlineError;
    println!();
    loop {
        print!("{}", jobs::BREAK_MENU);
        let _ = std::io::stdout().flush();
        let line = match editor.readline("") {
            Ok(line) => line,
            // A second Ctrl-C leaves, as in erl.
            Err(ReadlineError::Interrupted) => return Some(0),
            Err(_) => return None,
        };
        let mut out = String::new();
        let step = jobs::break_option(&line, &mut out);
        print!("{out}");
        match step {
            jobs::Break::Continue => return None,
            jobs::Break::Abort => return Some(0),
            jobs::Break::Again => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_input_cuts_after_the_first_dot_token_only() {
        assert_eq!(split_input("1 + 2"), None);
        assert_eq!(split_input("{1,\n2"), None);
        // A period inside a float or a string is no end of form.
        assert_eq!(split_input("1.5 + \"a. b\""), None);
        let (first, rest) = split_input("X = 1. Y = 2.\n").expect("a form");
        assert_eq!(first, "X = 1.");
        assert_eq!(
            split_input(&rest).map(|(f, _)| f),
            Some(" Y = 2.".to_string())
        );
        assert!(is_blank(" % a comment\n  "));
    }

    #[test]
    fn completion_offers_modules_functions_builtins_commands_and_variables() {
        let names = Names {
            variables: vec!["Count".to_string(), "Cat".to_string()],
            functions: vec![("fac".to_string(), 1)],
            modules: ["lists", "io"].iter().map(|s| s.to_string()).collect(),
        };
        assert_eq!(complete::candidates(&names, "Co"), vec!["Count"]);
        assert!(complete::candidates(&names, "lis").contains(&"lists:".to_string()));
        assert!(complete::candidates(&names, "io:form").contains(&"io:format(".to_string()));
        assert!(complete::candidates(&names, "fa").contains(&"fac(".to_string()));
        assert!(complete::candidates(&names, "self").contains(&"self(".to_string()));
        assert!(complete::candidates(&names, "hel").contains(&"help(".to_string()));
        // The shell's own built-ins are not offered.
        assert!(complete::candidates(&names, "$").is_empty());
    }
}
