//! Reading: the `'$io'` BIFs under stdlib/io.act's `get_line`,
//! `get_chars`, `read` and `fread`, standard_io's options (`setopts`,
//! `getopts`), `io:columns/rows`, and the text-to-term reader that
//! `io:read` and `file:consult` share.
//!
//! Standard input comes from the VM's one reader (`runtime::stdin`); a
//! request whose data does not come within a short wait answers `wait`
//! and ends the caller's time slice, and io.act asks again, so the
//! scheduler runs other processes in between. Open files are read
//! directly.

use super::erlang::make_binary;
use super::{BifError, BifResult, Context};
use crate::runtime::output;
use crate::runtime::stdin::{self, Request, Taken};
use crate::syntax::ast::{Expr, ExprKind};
use crate::term::constant::Constant;
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::BigInt;
use std::sync::atomic::{AtomicBool, Ordering};

/// `io:setopts([binary])` on standard_io: reads return binaries.
static BINARY: AtomicBool = AtomicBool::new(false);

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

pub(super) fn is_stdin(device: Term) -> bool {
    match device.as_atom() {
        Some(Atom::STANDARD_IO) => true,
        Some(a) => a.name() == "user",
        None => device.is_pid() && !is_gone(device),
    }
}

/// Whether `device` is the pid of an io server that has ended: a local
/// process no longer alive (a closed file's pid, say), other than the
/// group leader, which no process holds. OTP answers a request to it
/// with `{error, terminated}` (a read) or raises `terminated` (a write).
pub(super) fn is_gone(device: Term) -> bool {
    let Some(pid) = crate::sched::Pid::from_term(device) else {
        return false;
    };
    device != super::extras::group_leader() && !super::process::services(|s| s.is_alive(pid))
}

/// `'$io':prompt(Device, Prompt)`: writes the prompt of a read from
/// standard input (an atom, or chardata) to standard output.
pub fn prompt_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !is_stdin(args[0]) || super::file::lookup(&ctx.process.heap, args[0]).is_some() {
        return Ok(Term::OK);
    }
    let heap = &ctx.process.heap;
    let text: String = match args[1].as_atom() {
        Some(a) => a.name().to_string(),
        None => match super::io::unicode_chars(heap, args[1]) {
            Some(chars) => chars.into_iter().collect(),
            None => super::fmt::write(heap, args[1]),
        },
    };
    if !text.is_empty() {
        output::write_text(&text);
    }
    Ok(Term::OK)
}

/// How long a read waits for standard input before it lets the other
/// processes of its scheduler run.
const STDIN_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// Reads from standard input: what is buffered or comes within
/// `STDIN_WAIT`, else `Pending` (under `--deterministic`, whenever it
/// comes). Output is flushed before a wait, so a prompt shows.
pub(super) fn take_stdin(request: Request) -> Taken {
    let mut taken = stdin::take_within(request, std::time::Duration::ZERO);
    if matches!(taken, Taken::Pending) {
        output::flush();
        taken = if crate::runtime::processes::deterministic() {
            stdin::take_blocking(request)
        } else {
            stdin::take_within(request, STDIN_WAIT)
        };
    }
    match (request, taken) {
        (Request::Line, Taken::Data(line)) => Taken::Data(crlf_to_lf(line)),
        (_, taken) => taken,
    }
}

/// `n` characters of standard input: bytes under latin1, UTF-8 sequences
/// under unicode (as OTP's io server counts `get_chars`). Bytes taken
/// before a wait are put back.
fn take_stdin_chars(n: usize) -> Taken {
    if !output::unicode() {
        return take_stdin(Request::Bytes(n));
    }
    let mut got: Vec<u8> = Vec::new();
    loop {
        let need = utf8_bytes_missing(&got, n);
        if need == 0 {
            return Taken::Data(got);
        }
        match take_stdin(Request::Bytes(need)) {
            Taken::Data(more) if !more.is_empty() => got.extend(more),
            Taken::Data(_) | Taken::Eof if !got.is_empty() => return Taken::Data(got),
            other => {
                if !got.is_empty() {
                    stdin::unread(&got);
                }
                return other;
            }
        }
    }
}

/// How many more bytes `bytes` needs at least to hold `n` UTF-8
/// characters (a byte that starts no sequence counts as one).
fn utf8_bytes_missing(bytes: &[u8], n: usize) -> usize {
    let (mut chars, mut i) = (0, 0);
    while i < bytes.len() {
        let len = match bytes[i] {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        if i + len > bytes.len() {
            // A sequence cut short: its rest, then the characters after it.
            return i + len - bytes.len() + n.saturating_sub(chars + 1);
        }
        chars += 1;
        i += len;
    }
    n.saturating_sub(chars)
}

/// A line as OTP's io servers hand it out (io_lib:collect_line): a
/// `\r\n` that ends it is one `\n`. Standard input and files read by
/// lines both do this; reads by characters keep the `\r`.
pub(super) fn crlf_to_lf(mut line: Vec<u8>) -> Vec<u8> {
    if line.ends_with(b"\r\n") {
        line.truncate(line.len() - 2);
        line.push(b'\n');
    }
    line
}

/// `wait`, ending the caller's time slice so it yields at its next call.
pub(super) fn wait(ctx: &mut Context) -> BifResult {
    let p = &mut ctx.process;
    p.reductions = p.reductions.max(p.reduction_budget);
    Ok(atom("wait"))
}

/// Whether reads from standard input return binaries.
pub(super) fn stdin_binary() -> bool {
    BINARY.load(Ordering::Relaxed)
}

/// Text read from standard input as its options return it.
fn stdin_data(ctx: &mut Context, bytes: Vec<u8>, args: &mut [Term]) -> BifResult {
    let binary = BINARY.load(Ordering::Relaxed);
    if binary && !output::unicode() {
        // A binary read is UTF-8, of the bytes read as latin1 characters.
        let text: String = bytes.iter().map(|&b| b as char).collect();
        return make_binary(ctx, text.into_bytes(), args);
    }
    super::file::make_data(ctx, bytes, binary, output::unicode(), args)
}

fn error_reply(ctx: &mut Context, reason: &str, args: &mut [Term]) -> BifResult {
    ctx.ensure(3, args)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::ERROR), atom(reason)]))
}

fn eof() -> Term {
    atom("eof")
}

/// `'$io':take(Device, What)`: `What` is `line`, `{chars, N}`, `term` or
/// `{fread, Format}`. Answers the data, `eof`, `{error, R}`, or `wait`.
pub fn take_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let device = args[0];
    let what = args[1];
    if let Some(file) = super::file::lookup(&ctx.process.heap, device) {
        return take_file(ctx, file, what, args);
    }
    if is_gone(device) {
        return error_reply(ctx, "terminated", args);
    }
    if device == super::process::services(|s| s.self_pid()).to_term() {
        return error_reply(ctx, "calling_self", args);
    }
    if !is_stdin(device) {
        // OTP's io:request to a name nobody has registered.
        return error_reply(ctx, "arguments", args);
    }
    let heap = &ctx.process.heap;
    match heap.view(what) {
        View::Atom(a) if a.name() == "line" => match take_stdin(Request::Line) {
            Taken::Data(bytes) => stdin_data(ctx, bytes, args),
            Taken::Eof => Ok(eof()),
            Taken::Error(e) => error_reply(ctx, &e, args),
            Taken::Pending => wait(ctx),
        },
        View::Tuple([tag, n]) if tag.as_atom() == Some(Atom::intern("chars")) => {
            let n = n.as_small().and_then(|n| usize::try_from(n).ok());
            let Some(n) = n else {
                return Err(BifError::Badarg);
            };
            if n == 0 {
                // OTP answers eof at the end of the input and an empty
                // string before it: look at one byte and put it back.
                return match take_stdin(Request::Bytes(1)) {
                    Taken::Data(bytes) => {
                        stdin::unread(&bytes);
                        stdin_data(ctx, Vec::new(), args)
                    }
                    Taken::Eof => Ok(eof()),
                    Taken::Error(e) => error_reply(ctx, &e, args),
                    Taken::Pending => wait(ctx),
                };
            }
            match take_stdin_chars(n) {
                Taken::Data(bytes) => stdin_data(ctx, bytes, args),
                Taken::Eof => Ok(eof()),
                Taken::Error(e) => error_reply(ctx, &e, args),
                Taken::Pending => wait(ctx),
            }
        }
        View::Atom(a) if a.name() == "term" => match take_stdin(Request::Term) {
            Taken::Data(bytes) => read_term_reply(ctx, &bytes, args),
            Taken::Eof => Ok(eof()),
            Taken::Error(e) => error_reply(ctx, &e, args),
            Taken::Pending => wait(ctx),
        },
        View::Tuple([tag, format]) if tag.as_atom() == Some(Atom::intern("fread")) => {
            let format: Vec<char> = super::io::unicode_chars(heap, *format)
                .or_else(|| format.as_atom().map(|a| a.name().chars().collect()))
                .ok_or(BifError::Badarg)?;
            fread_stdin(ctx, &format, args)
        }
        _ => Err(BifError::Badarg),
    }
}

/// Lines read for an unfinished `fread` (it may span lines), kept
/// between polls.
fn fread_pending() -> &'static std::sync::Mutex<Vec<u8>> {
    static PENDING: std::sync::OnceLock<std::sync::Mutex<Vec<u8>>> = std::sync::OnceLock::new();
    PENDING.get_or_init(|| std::sync::Mutex::new(Vec::new()))
}

fn fread_stdin(ctx: &mut Context, format: &[char], args: &mut [Term]) -> BifResult {
    let mut pending = fread_pending().lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let at_eof = match take_stdin(Request::Line) {
            Taken::Data(bytes) => {
                pending.extend_from_slice(&bytes);
                false
            }
            Taken::Eof | Taken::Error(_) => true,
            Taken::Pending => return wait(ctx),
        };
        match fread_lines(format, &pending, at_eof) {
            Lines::More => continue,
            Lines::Eof => {
                pending.clear();
                return Ok(eof());
            }
            Lines::Done(values, rest) => {
                stdin::unread(&rest);
                pending.clear();
                drop(pending);
                return fread_reply(ctx, values, args);
            }
            Lines::Fail(what) => {
                pending.clear();
                drop(pending);
                ctx.ensure(6, args)?;
                let h = ctx.heap();
                let inner = h.tuple(&[atom("fread"), atom(what)]);
                return Ok(h.tuple(&[Term::atom(Atom::ERROR), inner]));
            }
        }
    }
}

fn take_file(
    ctx: &mut Context,
    file: std::sync::Arc<std::sync::Mutex<super::file::OpenFile>>,
    what: Term,
    args: &mut [Term],
) -> BifResult {
    let heap = &ctx.process.heap;
    let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
    let (binary, unicode) = (f.binary, f.unicode);
    let result = match heap.view(what) {
        View::Atom(a) if a.name() == "line" => f.read_line(),
        View::Tuple([_, n]) if n.as_small().is_some() => {
            f.read(usize::try_from(n.as_small().unwrap_or(0)).unwrap_or(0))
        }
        View::Atom(a) if a.name() == "term" => {
            let mut text = Vec::new();
            loop {
                match f.read_line() {
                    Ok(Some(line)) => {
                        text.extend_from_slice(&line);
                        if stdin::term_end(&text).is_some() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        drop(f);
                        return error_reply(ctx, super::file::errno_name(&e), args);
                    }
                }
            }
            drop(f);
            if text.iter().all(u8::is_ascii_whitespace) {
                return Ok(eof());
            }
            return read_term_reply(ctx, &text, args);
        }
        View::Tuple([_, format]) => {
            let format: Vec<char> =
                super::io::unicode_chars(heap, *format).ok_or(BifError::Badarg)?;
            // As from standard input (`fread_lines`): a line at a time,
            // and what the read leaves of its last line stays unread.
            let mut pending = Vec::new();
            loop {
                let at_eof = match f.read_line() {
                    Ok(Some(line)) => {
                        pending.extend_from_slice(&line);
                        false
                    }
                    _ => true,
                };
                match fread_lines(&format, &pending, at_eof) {
                    Lines::More => continue,
                    Lines::Eof => return Ok(eof()),
                    Lines::Done(values, rest) => {
                        f.unread(&rest);
                        drop(f);
                        return fread_reply(ctx, values, args);
                    }
                    Lines::Fail(what) => {
                        drop(f);
                        ctx.ensure(6, args)?;
                        let h = ctx.heap();
                        let inner = h.tuple(&[atom("fread"), atom(what)]);
                        return Ok(h.tuple(&[Term::atom(Atom::ERROR), inner]));
                    }
                }
            }
        }
        _ => return Err(BifError::Badarg),
    };
    drop(f);
    match result {
        Ok(Some(bytes)) => super::file::make_data(ctx, bytes, binary, unicode, args),
        Ok(None) => Ok(eof()),
        Err(e) => error_reply(ctx, super::file::errno_name(&e), args),
    }
}

// ---------------------------------------------------------------------
// Options.

fn parse_options(ctx: &Context, options: Term) -> Option<(Option<bool>, Option<bool>)> {
    let heap = &ctx.process.heap;
    let (mut binary, mut unicode) = (None, None);
    for o in super::erlang::list_elements(heap, options)? {
        match heap.view(o) {
            View::Atom(a) if a.name() == "binary" => binary = Some(true),
            View::Atom(a) if a.name() == "list" => binary = Some(false),
            View::Tuple([k, v]) => match (k.as_atom()?.name(), v.as_atom()?.name()) {
                ("binary", "true") => binary = Some(true),
                ("binary", "false") => binary = Some(false),
                ("encoding", "latin1") => unicode = Some(false),
                ("encoding", "unicode" | "utf8") => unicode = Some(true),
                ("echo" | "expand_fun" | "log", _) => {}
                _ => return None,
            },
            _ => return None,
        }
    }
    Some((binary, unicode))
}

fn setopts(ctx: &mut Context, device: Term, options: Term, args: &mut [Term]) -> BifResult {
    let Some((binary, unicode)) = parse_options(ctx, options) else {
        return error_reply(ctx, "enotsup", args);
    };
    if let Some(file) = super::file::lookup(&ctx.process.heap, device) {
        let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = binary {
            f.binary = b;
        }
        if let Some(u) = unicode {
            f.unicode = u;
        }
        return Ok(Term::OK);
    }
    if is_gone(device) {
        return error_reply(ctx, "terminated", args);
    }
    if device.is_atom() && !is_stdin(device) {
        // A name nobody has registered.
        return error_reply(ctx, "arguments", args);
    }
    if !is_stdin(device) {
        return Err(BifError::Badarg);
    }
    if let Some(b) = binary {
        BINARY.store(b, Ordering::Relaxed);
    }
    if let Some(u) = unicode {
        output::set_unicode(u);
    }
    Ok(Term::OK)
}

pub fn setopts_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let options = args[0];
    setopts(ctx, Term::atom(Atom::STANDARD_IO), options, args)
}

pub fn setopts_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (device, options) = (args[0], args[1]);
    setopts(ctx, device, options, args)
}

fn getopts(ctx: &mut Context, device: Term, args: &mut [Term]) -> BifResult {
    let (binary, unicode) = match super::file::lookup(&ctx.process.heap, device) {
        Some(file) => {
            let f = file.lock().unwrap_or_else(|e| e.into_inner());
            (f.binary, f.unicode)
        }
        None if is_gone(device) => return error_reply(ctx, "terminated", args),
        None if device.is_atom() && !is_stdin(device) => {
            return error_reply(ctx, "arguments", args);
        }
        None => (BINARY.load(Ordering::Relaxed), output::unicode()),
    };
    ctx.ensure(10, args)?;
    let h = ctx.heap();
    let b = h.tuple(&[
        atom("binary"),
        Term::atom(if binary { Atom::TRUE } else { Atom::FALSE }),
    ]);
    let e = h.tuple(&[
        atom("encoding"),
        atom(if unicode { "unicode" } else { "latin1" }),
    ]);
    Ok(h.list(&[b, e]))
}

pub fn getopts_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    getopts(ctx, Term::atom(Atom::STANDARD_IO), args)
}

pub fn getopts_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let device = args[0];
    getopts(ctx, device, args)
}

/// The terminal's size, when standard output is a terminal.
fn window() -> Option<(u16, u16)> {
    // SAFETY: TIOCGWINSZ only writes the winsize it is given.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::isatty(1) == 1
            && libc::ioctl(1, libc::TIOCGWINSZ, &mut size) == 0
            && size.ws_col > 0
        {
            Some((size.ws_col, size.ws_row))
        } else {
            None
        }
    }
}

fn size_reply(ctx: &mut Context, n: Option<u16>, args: &mut [Term]) -> BifResult {
    match n {
        Some(n) => {
            ctx.ensure(3, args)?;
            Ok(ctx.heap().tuple(&[Term::OK, Term::small(i64::from(n))]))
        }
        None => error_reply(ctx, "enotsup", args),
    }
}

pub fn columns_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    size_reply(ctx, window().map(|w| w.0), args)
}

pub fn columns_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = if is_stdin(args[0]) {
        window().map(|w| w.0)
    } else {
        None
    };
    size_reply(ctx, n, args)
}

pub fn rows_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    size_reply(ctx, window().map(|w| w.1), args)
}

pub fn rows_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = if is_stdin(args[0]) {
        window().map(|w| w.1)
    } else {
        None
    };
    size_reply(ctx, n, args)
}

// ---------------------------------------------------------------------
// Text to terms (io:read, file:consult).

/// Why a text is not a term, as erl_parse says it: the line and the
/// message (`["syntax error before: ", Token]` or `"bad term"`).
pub enum TermError {
    Syntax(u32, String),
    BadTerm(u32),
}

/// The line of a byte offset (which may fall inside a character).
fn line_at(text: &str, offset: usize) -> u32 {
    let before = &text.as_bytes()[..offset.min(text.len())];
    1 + before.iter().filter(|&&b| b == b'\n').count() as u32
}

/// Parses one term ending in a full stop (`{a, 1}.`). Text that the end
/// of input cut off before its full stop fails as erl_parse fails on the
/// tokens it has: at the first token that cannot go on a term, else
/// "before: []" on the line of the last token.
pub fn parse_term(text: &str) -> Result<Constant, TermError> {
    if stdin::term_end(text.as_bytes()).is_none() && !text.trim_end().ends_with('.') {
        let last_token = text.trim_end().len().saturating_sub(1);
        let cut_off = TermError::Syntax(line_at(text, last_token), String::new());
        return match parse_dotted(&format!("{text}\n.")) {
            Err(TermError::Syntax(line, token)) if line <= line_at(text, last_token) => {
                Err(TermError::Syntax(line, token))
            }
            _ => Err(cut_off),
        };
    }
    parse_dotted(text)
}

fn parse_dotted(text: &str) -> Result<Constant, TermError> {
    match crate::syntax::parser::parse_exprs(text) {
        Ok(exprs) => {
            let line = exprs
                .first()
                .map_or(1, |e| line_at(text, e.span.start as usize));
            match exprs.as_slice() {
                [e] => to_constant(e).ok_or(TermError::BadTerm(line)),
                _ => Err(TermError::BadTerm(line)),
            }
        }
        Err(diagnostics) => {
            let span = diagnostics.first().map(|d| d.span).unwrap_or_default();
            let (start, end) = (span.start as usize, span.end as usize);
            let token = text.get(start..end.max(start)).unwrap_or("").trim();
            Err(TermError::Syntax(line_at(text, start), quote_token(token)))
        }
    }
}

/// A token as erl_parse names it in "syntax error before: ": a reserved
/// word is an atom there, written quoted (`'of'`).
fn quote_token(token: &str) -> String {
    const RESERVED: &[&str] = &[
        "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
        "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
        "rem", "try", "when", "xor",
    ];
    let Some(first) = token.chars().next() else {
        return String::new();
    };
    let plain = (first.is_alphanumeric() || matches!(first, '"' | '\'' | '_'))
        && !RESERVED.contains(&token);
    if plain {
        token.to_string()
    } else {
        format!("'{token}'")
    }
}

fn to_constant(e: &Expr) -> Option<Constant> {
    Some(match &e.kind {
        ExprKind::Integer(i) => Constant::Integer(i.clone()),
        ExprKind::Float(f) => Constant::Float(*f),
        ExprKind::Atom(a) => Constant::Atom(a.clone()),
        ExprKind::String(s) if s.is_empty() => Constant::Nil,
        ExprKind::String(s) => Constant::String(s.clone()),
        ExprKind::List(elements, tail) => {
            if elements.is_empty() && tail.is_none() {
                return Some(Constant::Nil);
            }
            let items: Option<Vec<Constant>> = elements.iter().map(to_constant).collect();
            let tail = match tail {
                Some(t) => to_constant(t)?,
                None => Constant::Nil,
            };
            Constant::List(items?, Box::new(tail))
        }
        ExprKind::Tuple(elements) => {
            Constant::Tuple(elements.iter().map(to_constant).collect::<Option<_>>()?)
        }
        ExprKind::Map(fields) => Constant::Map(
            fields
                .iter()
                .map(|f| {
                    (!f.exact)
                        .then(|| Some((to_constant(&f.key)?, to_constant(&f.value)?)))
                        .flatten()
                })
                .collect::<Option<_>>()?,
        ),
        ExprKind::Binary(elements) => {
            let mut bytes = Vec::new();
            for el in elements {
                if el.size.is_some() {
                    return None;
                }
                let utf8 = el.specifiers.iter().any(|s| s.name == "utf8");
                if el.specifiers.iter().any(|s| s.name != "utf8") {
                    return None;
                }
                match &el.value.kind {
                    ExprKind::String(chars) if utf8 => {
                        let s: Option<String> = chars.iter().map(|&c| char::from_u32(c)).collect();
                        bytes.extend(s?.bytes());
                    }
                    ExprKind::String(chars) => bytes.extend(chars.iter().map(|&c| c as u8)),
                    ExprKind::Integer(i) if !utf8 => {
                        let v = i64::try_from(i).ok()?;
                        bytes.push(v as u8);
                    }
                    _ => return None,
                }
            }
            Constant::Binary(bytes)
        }
        ExprKind::UnaryOp(..) => match crate::syntax::fold::number(e)? {
            crate::syntax::lexer::Number::Integer(i) => Constant::Integer(i),
            crate::syntax::lexer::Number::Float(f) => Constant::Float(f),
        },
        _ => return None,
    })
}

/// `{error, {Line, erl_parse, Message}}` on the heap.
fn term_error(ctx: &mut Context, error: TermError, args: &mut [Term]) -> BifResult {
    let (line, message) = match error {
        TermError::Syntax(line, token) => (line, Some(token)),
        TermError::BadTerm(line) => (line, None),
    };
    let words = 32 + message.as_ref().map_or(16, |m| 2 * m.len() + 48);
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let message = match message {
        Some(token) => {
            let before = h.string("syntax error before: ");
            let token = h.string(&token);
            h.list(&[before, token])
        }
        None => h.string("bad term"),
    };
    let info = h.tuple(&[Term::small(i64::from(line)), atom("erl_parse"), message]);
    Ok(h.tuple(&[Term::atom(Atom::ERROR), info]))
}

/// Builds a parsed term on the heap.
pub fn build(ctx: &mut Context, c: &Constant, args: &mut [Term]) -> BifResult {
    ctx.process
        .build_constant(c, ctx.x, args)
        .map_err(|_| BifError::SystemLimit)
}

fn read_term_reply(ctx: &mut Context, bytes: &[u8], args: &mut [Term]) -> BifResult {
    let text: String = if output::unicode() {
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        bytes.iter().map(|&b| b as char).collect()
    };
    if only_blank(&text) {
        return Ok(eof());
    }
    match parse_term(&text) {
        Ok(c) => {
            let t = build(ctx, &c, args)?;
            let mut keep = [t];
            ctx.ensure(3, &mut keep)?;
            Ok(ctx.heap().tuple(&[Term::OK, keep[0]]))
        }
        Err(e) => term_error(ctx, e, args),
    }
}

/// Only white space and comments.
fn only_blank(text: &str) -> bool {
    text.lines()
        .all(|l| l.split('%').next().unwrap_or("").trim().is_empty())
}

/// `'$file':consult_text(Binary)`: the terms of a file's text, each
/// ending in a full stop: `{ok, Terms}` or `{error, {Line, erl_parse, M}}`.
pub fn consult_text_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .to_vec();
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => e.as_bytes().iter().map(|&b| b as char).collect(),
    };
    let mut constants = Vec::new();
    let mut rest = text.as_str();
    let mut line_base = 0u32;
    loop {
        if only_blank(rest) {
            break;
        }
        let end = stdin::term_end(rest.as_bytes()).unwrap_or(rest.len());
        let piece = &rest[..end];
        match parse_term(piece) {
            Ok(c) => constants.push(c),
            Err(TermError::Syntax(line, token)) => {
                return term_error(ctx, TermError::Syntax(line + line_base, token), args);
            }
            Err(TermError::BadTerm(line)) => {
                return term_error(ctx, TermError::BadTerm(line + line_base), args);
            }
        }
        line_base += piece.matches('\n').count() as u32;
        rest = &rest[end..];
    }
    let list = Constant::list(constants);
    let t = build(ctx, &list, args)?;
    let mut keep = [t];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx.heap().tuple(&[Term::OK, keep[0]]))
}

// ---------------------------------------------------------------------
// fread.

/// A value read by `fread`.
enum Value {
    Int(BigInt),
    Float(f64),
    Text(String),
    Atom(String),
}

enum Fread {
    /// Every directive matched: the values and the characters used.
    Done(Vec<Value>, usize),
    /// The text ended before the format did (and more may come).
    More,
    /// `io_lib:fread/2`'s string ended where a directive or a literal
    /// wanted more: the format from there, the characters used and the
    /// values so far.
    Suspended(usize, usize, Vec<Value>),
    /// A directive failed: what it wanted (`integer`, `float`, ...).
    Fail(&'static str),
}

/// What `io:fread` makes of the lines read so far.
enum Lines {
    /// Every directive matched: the values, and what is left to read
    /// next.
    Done(Vec<Value>, Vec<u8>),
    /// The format wants another line.
    More,
    /// Input ended before anything was read.
    Eof,
    /// A directive failed (the lines read are used up).
    Fail(&'static str),
}

/// `io:fread` on `pending` (the lines read so far; at end of input the
/// last may have no newline), as OTP's io server does it: each line,
/// without its newline, is read as `io_lib:fread/2` reads a string, and
/// a format left wanting goes on with the next line. So an empty line
/// is passed over while a line of only white space fails `~d` (and
/// reads `""` for `~s`); what a finished read leaves of its line is
/// read next, a bare newline excepted.
fn fread_lines(format: &[char], pending: &[u8], at_eof: bool) -> Lines {
    let mut values = Vec::new();
    let mut at = 0;
    // Characters used, newlines counted: at end of input, nothing used
    // is `eof`, anything else a failed read.
    let mut used = 0;
    let mut start = 0;
    while start < pending.len() {
        let (end, next) = match pending[start..].iter().position(|&b| b == b'\n') {
            Some(i) => (start + i, start + i + 1),
            None if at_eof => (pending.len(), pending.len()),
            None => return Lines::More,
        };
        let end = if next > end && end > start && pending[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        let text: Vec<char> = pending[start..end].iter().map(|&b| b as char).collect();
        match fread_text(&format[at..], &text, true, true) {
            Fread::Done(mut more, n) => {
                values.append(&mut more);
                let rest = if n == text.len() {
                    pending[next..].to_vec()
                } else {
                    pending[start + n..].to_vec()
                };
                return Lines::Done(values, rest);
            }
            Fread::Suspended(i, n, mut more) => {
                values.append(&mut more);
                at += i;
                used += n + (next - end);
            }
            Fread::Fail(what) => return Lines::Fail(what),
            Fread::More => return Lines::Fail("input"),
        }
        start = next;
    }
    if !at_eof {
        Lines::More
    } else if used == 0 && values.is_empty() {
        Lines::Eof
    } else {
        Lines::Fail("input")
    }
}

/// `fread`, where `string` says the text is `io_lib:fread/2`'s string:
/// as io_lib_fread does, a directive or a literal that finds the string
/// used up suspends (`{more, ...}`), while one that finds only white
/// space reads an empty string or atom, and a fixed-width field the
/// string cannot fill fails.
fn fread_text(format: &[char], text: &[char], at_eof: bool, string: bool) -> Fread {
    let mut values = Vec::new();
    let mut pos = 0;
    let mut i = 0;
    let skip_white = |pos: &mut usize| {
        while *pos < text.len() && text[*pos].is_whitespace() {
            *pos += 1;
        }
    };
    while i < format.len() {
        let c = format[i];
        i += 1;
        if c.is_whitespace() {
            skip_white(&mut pos);
            if pos == text.len() && !at_eof && i < format.len() {
                return Fread::More;
            }
            continue;
        }
        if c != '~' {
            if string && pos == text.len() {
                return Fread::Suspended(i - 1, pos, values);
            }
            if pos == text.len() {
                return if at_eof {
                    Fread::Fail("input")
                } else {
                    Fread::More
                };
            }
            if text[pos] != c {
                return Fread::Fail("input");
            }
            pos += 1;
            continue;
        }
        let directive = i - 1;
        let suppress = format.get(i) == Some(&'*');
        if suppress {
            i += 1;
        }
        let mut width = None;
        while let Some(d) = format.get(i).and_then(|c| c.to_digit(10)) {
            width = Some(width.unwrap_or(0) * 10 + d as usize);
            i += 1;
        }
        if format.get(i) == Some(&'t') {
            i += 1;
        }
        let Some(&control) = format.get(i) else {
            return fail_format();
        };
        i += 1;
        if string && control != 'l' && pos == text.len() {
            return Fread::Suspended(directive, pos, values);
        }
        // `~Nu` reads digits in base N, not N characters.
        let field_width = width.filter(|_| control != 'u');
        if string && field_width.is_some_and(|w| pos + w > text.len()) {
            return Fread::Fail(name_of(control));
        }
        if control == '~' {
            if text.get(pos) != Some(&'~') {
                return Fread::Fail("input");
            }
            pos += 1;
            continue;
        }
        if control == 'l' {
            if !suppress {
                values.push(Value::Int(BigInt::from(pos)));
            }
            continue;
        }
        let before_white = pos;
        if control != 'c' {
            skip_white(&mut pos);
            if string && pos == text.len() && matches!(control, 's' | 'a') {
                if !suppress {
                    values.push(if control == 's' {
                        Value::Text(String::new())
                    } else {
                        Value::Atom(String::new())
                    });
                }
                continue;
            }
            if pos == text.len() {
                return if at_eof {
                    Fread::Fail(name_of(control))
                } else {
                    Fread::More
                };
            }
        }
        if control == 'u'
            && let Some(base) = width
        {
            if !(2..=36).contains(&base) {
                return fail_format();
            }
            let used = base_digits(&text[pos..], base);
            let digits: String = text[pos..pos + used].iter().collect();
            let Some(n) = BigInt::parse_bytes(digits.as_bytes(), base as u32) else {
                return Fread::Fail("unsigned");
            };
            pos += used;
            if !suppress {
                values.push(Value::Int(n));
            }
            continue;
        }
        if control == '#' {
            // `Base#Digits`, the base signed (a negative base reads a
            // negative number), within `width` characters if given.
            // A fixed-width field may start with white space (the white
            // space skipped above counts in its width), and its base may
            // not be negative, as OTP reads it.
            let limit = width.map_or(text.len(), |w| (before_white + w).min(text.len()));
            if width.is_some() && text.get(pos) == Some(&'-') {
                return Fread::Fail("based");
            }
            let Some((n, used)) = based_integer(&text[pos.min(limit)..limit]) else {
                return Fread::Fail("based");
            };
            if width.is_some_and(|w| pos - before_white + used != w) {
                return Fread::Fail("based");
            }
            pos += used;
            if !suppress {
                values.push(Value::Int(n));
            }
            continue;
        }
        // The field: `width` characters, or up to white space.
        let end = match width {
            Some(w) => (pos + w).min(text.len()),
            None if control == 'c' => (pos + 1).min(text.len()),
            None => {
                let mut e = pos;
                while e < text.len() && !text[e].is_whitespace() {
                    e += 1;
                }
                e
            }
        };
        if control == 'c' && end - pos < width.unwrap_or(1) && !at_eof {
            return Fread::More;
        }
        let field: String = text[pos..end].iter().collect();
        let value = match control {
            'd' | 'u' | '-' => {
                let (n, used) = leading_integer(&field, control == 'd');
                if control == '-' {
                    let sign = match field.chars().next() {
                        Some('-') => -1,
                        _ => 1,
                    };
                    let used = usize::from(matches!(field.chars().next(), Some('-' | '+')));
                    pos += used;
                    if !suppress {
                        values.push(Value::Int(BigInt::from(sign)));
                    }
                    continue;
                }
                match n {
                    Some(n) if width.is_none() || used == field.chars().count() => {
                        pos += used;
                        Value::Int(n)
                    }
                    _ => return Fread::Fail(name_of(control)),
                }
            }
            'f' => match leading_float(&field) {
                Some((f, used)) if width.is_none() || used == field.chars().count() => {
                    pos += used;
                    Value::Float(f)
                }
                _ => return Fread::Fail("float"),
            },
            's' => {
                pos = end;
                Value::Text(field)
            }
            'a' => {
                pos = end;
                Value::Atom(field)
            }
            'c' => {
                pos = end;
                Value::Text(field)
            }
            _ => return fail_format(),
        };
        if !suppress {
            values.push(value);
        }
    }
    Fread::Done(values, pos)
}

fn fail_format() -> Fread {
    Fread::Fail("format")
}

fn name_of(control: char) -> &'static str {
    match control {
        'd' => "integer",
        'u' => "unsigned",
        'f' => "float",
        's' => "string",
        'a' => "atom",
        'c' => "character",
        '#' => "based",
        _ => "format",
    }
}

/// How many characters at the start of `text` io_lib_fread takes as
/// digits of `base`: 0-9 whatever the base, and the letters below it.
fn base_digits(text: &[char], base: usize) -> usize {
    let letters = base.saturating_sub(10) as u32;
    text.iter()
        .take_while(|&&c| {
            c.is_ascii_digit()
                || (c.is_ascii_uppercase() && (c as u32 - 'A' as u32) < letters)
                || (c.is_ascii_lowercase() && (c as u32 - 'a' as u32) < letters)
        })
        .count()
}

/// `~#`'s `Base#Digits` at the start of `text`: its value and the
/// characters it takes, or `None` where OTP's reading fails (`based`).
fn based_integer(text: &[char]) -> Option<(BigInt, usize)> {
    let mut i = usize::from(matches!(text.first(), Some('-' | '+')));
    while text.get(i).is_some_and(char::is_ascii_digit) {
        i += 1;
    }
    if text.get(i) != Some(&'#') {
        return None;
    }
    let base: i64 = text[..i].iter().collect::<String>().parse().ok()?;
    let b = base.unsigned_abs() as usize;
    if !(2..=36).contains(&b) {
        return None;
    }
    let used = base_digits(&text[i + 1..], b);
    let digits: String = text[i + 1..i + 1 + used].iter().collect();
    let n = BigInt::parse_bytes(digits.as_bytes(), b as u32)?;
    Some((if base < 0 { -n } else { n }, i + 1 + used))
}

/// The integer at the start of `field` and the characters it takes.
fn leading_integer(field: &str, signed: bool) -> (Option<BigInt>, usize) {
    let bytes = field.as_bytes();
    let mut i = 0;
    if signed && matches!(bytes.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == start {
        return (None, 0);
    }
    (field[..i].parse::<BigInt>().ok(), i)
}

/// A float (`1.5`, `-2.0e3`) at the start of `field`.
fn leading_float(field: &str) -> Option<(f64, usize)> {
    let bytes = field.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    if !digits(&mut i) || bytes.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    if !digits(&mut i) {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        if digits(&mut j) {
            i = j;
        }
    }
    Some((field[..i].parse().ok()?, i))
}

fn fread_reply(ctx: &mut Context, values: Vec<Value>, args: &mut [Term]) -> BifResult {
    let words: usize = values
        .iter()
        .map(|v| match v {
            Value::Text(s) => 2 * s.chars().count() + 2,
            Value::Int(i) => crate::heap::words_for_bigint(i) + 2,
            _ => 6,
        })
        .sum::<usize>()
        + 4;
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let terms: Vec<Term> = values
        .iter()
        .map(|v| match v {
            Value::Int(i) => h.bigint(i),
            Value::Float(f) => h.float(*f),
            Value::Text(s) => h.string(s),
            Value::Atom(a) => Term::atom(Atom::intern(a)),
        })
        .collect();
    let list = h.list(&terms);
    Ok(h.tuple(&[Term::OK, list]))
}

/// `io_lib:fread(Format, String)`: the same directives as `io:fread` on a
/// string: `{ok, Values, Rest}`, `{error, {fread, What}}`, or, where the
/// string ends before the format does, `{more, RestFormat, Used,
/// ValuesSoFarReversed}` (what `io_lib:fread/3` would go on from).
pub fn lib_fread_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let format: Vec<char> = super::erlang::char_list(heap, args[0])
        .ok_or(BifError::Badarg)?
        .chars()
        .collect();
    let text: Vec<char> = super::erlang::char_list(heap, args[1])
        .ok_or(BifError::Badarg)?
        .chars()
        .collect();
    match fread_text(&format, &text, true, true) {
        Fread::Suspended(at, used, mut values) => {
            values.reverse();
            let rest: String = format[at..].iter().collect();
            let ok = fread_reply(ctx, values, args)?;
            let mut keep = [ok];
            ctx.ensure(2 * rest.chars().count() + 5, &mut keep)?;
            let h = ctx.heap();
            let values = h.tuple_elements(keep[0])[1];
            let rest = h.string(&rest);
            Ok(h.tuple(&[atom("more"), rest, Term::small(used as i64), values]))
        }
        Fread::Done(values, used) => {
            let rest: String = text[used..].iter().collect();
            let ok = fread_reply(ctx, values, args)?;
            let mut keep = [ok];
            ctx.ensure(2 * rest.chars().count() + 4, &mut keep)?;
            let h = ctx.heap();
            let values = h.tuple_elements(keep[0])[1];
            let rest = h.string(&rest);
            Ok(h.tuple(&[Term::OK, values, rest]))
        }
        failed => {
            let what = match failed {
                Fread::Fail(what) => what,
                _ => "input",
            };
            ctx.ensure(6, args)?;
            let h = ctx.heap();
            let inner = h.tuple(&[atom("fread"), atom(what)]);
            Ok(h.tuple(&[Term::atom(Atom::ERROR), inner]))
        }
    }
}
