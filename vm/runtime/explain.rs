//! The text of an uncaught exception, as OTP 25's erl_error writes it for
//! escript and erl: the reason in words, the stack trace, and for a BIF or
//! operator on top of it the call with its arguments and, as
//! erl_erts_errors explains them, what was wrong with each argument.

use crate::bif::{self, BifError};
use crate::code::ArithOp;
use crate::heap::Heap;
use crate::process::Class;
use crate::term::view::View;
use crate::term::{Atom, Term, print};

/// The operator an arithmetic instruction stands for.
pub fn arith_name(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Div => "/",
        ArithOp::IntDiv => "div",
        ArithOp::Rem => "rem",
        ArithOp::Band => "band",
        ArithOp::Bor => "bor",
        ArithOp::Bxor => "bxor",
        ArithOp::Bsl => "bsl",
        ArithOp::Bsr => "bsr",
    }
}

/// What a failing BIF puts in the stack trace.
pub enum BifFrame {
    /// BEAM's top frame `{M, F, Args, [{error_info, _}]}`.
    Top(Atom, Atom),
    /// `error(Reason, Args)`: the caller's frame shows `Args`.
    CallerArgs(Vec<Term>),
    None,
}

/// The frame BIF `index` adds when it fails with `e` on `args`.
pub fn bif_frame(index: u16, e: BifError, heap: &Heap, args: &[Term]) -> BifFrame {
    let Some(entry) = bif::TABLE.get(index as usize) else {
        return BifFrame::None;
    };
    // Internal helpers of library code written in act: the act function
    // that called them is the place to show.
    if entry.module.starts_with('$') || entry.name.starts_with('$') {
        return BifFrame::None;
    }
    let raises = matches!(
        (entry.module, entry.name),
        ("erlang", "error" | "exit" | "throw" | "raise")
    );
    match e {
        BifError::Halt(_) | BifError::RaiseTrace(..) | BifError::BsFail(_) => BifFrame::None,
        BifError::Raise(Class::Error, _) if entry.module == "erlang" && entry.name == "error" => {
            if entry.arity >= 2
                && let Some(list) = bif::erlang::list_elements(heap, args[1])
            {
                return BifFrame::CallerArgs(list);
            }
            BifFrame::None
        }
        BifError::Raise(_, _) if raises => BifFrame::None,
        BifError::Raise(class, _) if class != Class::Error => BifFrame::None,
        _ => {
            // What OTP 25 compiles these calls to.
            let (m, f) = match (entry.module, entry.name, entry.arity) {
                ("erlang", "!", 2) => ("erlang", "send"),
                ("maps", "get", 2) => ("erlang", "map_get"),
                (m, f, _) => (m, f),
            };
            BifFrame::Top(Atom::intern(m), Atom::intern(f))
        }
    }
}

/// The text after `escript: ` (indent 0) or `** ` (the shell, indent 3)
/// for an uncaught `class:reason` with stack trace `trace`.
pub fn format_exception(
    heap: &Heap,
    class: Term,
    reason: Term,
    trace: Term,
    indent: usize,
) -> String {
    let s0 = " ".repeat(indent);
    // Terms are printed as `~P` with escript's depth, 50; the shell
    // (indent 3) prints them with its line depth, 30.
    let depth = if indent == 0 { 50 } else { 30 };
    let class_name = class.as_atom().map_or("error", |a| a.name());
    let exited = format!("exception {class_name}: ");
    let mut frames = stack_frames(heap, trace);
    let is_trace = frames.is_some();
    let frames_list = frames.take().unwrap_or_default();
    let mut rest: &[Frame] = &frames_list;
    let mut header = String::new();
    header.push_str(&exited);
    let error = class_name == "error";
    let reason_text = if !is_trace {
        // Not a stack trace: erl_error shows `{Reason, Trace}` as the reason.
        None
    } else if error
        && reason == Term::atom(Atom::FUNCTION_CLAUSE)
        && !rest.is_empty()
        && rest[0].args.is_some()
    {
        let top = &rest[0];
        rest = &rest[1..];
        let err = "no function clause matching ";
        let pre1 = format!("{s0}{}", " ".repeat(exited.len()));
        let call = format_call(heap, err, &pre1, top, depth);
        Some(format!("{err}{call} {}", location(&top.location)))
    } else if error && reason == Term::atom(Atom::UNDEF) && !rest.is_empty() {
        let top = &rest[0];
        rest = &rest[1..];
        Some(format!("undefined function {}", mfa_to_string(top)))
    } else if error
        && reason == Term::atom(Atom::BADARG)
        && rest.first().is_some_and(|f| f.bs_cause.is_some())
    {
        Some("construction of binary failed".to_string())
    } else if error {
        explain_reason(heap, reason, &s0, exited.len(), depth)
    } else {
        None
    };
    let reason_text = match reason_text {
        Some(t) => t,
        None => {
            let shown = if is_trace {
                reason
            } else {
                // Printed as the pair; a trace that is no list is rare
                // enough to show both terms side by side.
                return format!(
                    "{exited}{{{},{}}}\n",
                    print::print_with(heap, reason, 0, 80, -1, print::Strings::Latin1),
                    print::print_with(heap, trace, 0, 80, -1, print::Strings::Latin1)
                );
            };
            pretty(heap, shown, s0.len() + exited.len(), depth)
        }
    };
    header.push_str(&reason_text);
    let mut out = header;
    out.push('\n');
    let s = format!("  {s0}");
    for (n, frame) in rest.iter().enumerate() {
        let origin = if n == 0 {
            if is_operator(frame) {
                "in operator "
            } else {
                "in function "
            }
        } else {
            "in call from"
        };
        let errors = if n == 0
            && error
            && let Some(cause) = frame.bs_cause
        {
            format!("\n{s}   *** {}", bs_fail_text(heap, cause))
        } else if n == 0 {
            argument_errors(heap, reason, frame, &s)
        } else {
            String::new()
        };
        match &frame.args {
            None => {
                out.push_str(&format!(
                    "{s}{origin} {} {}{errors}\n",
                    mfa_to_string(frame),
                    location(&frame.location)
                ));
            }
            Some(_) => {
                let called_as = format!("{s}   called as ");
                let call = format_call(heap, "", &called_as, frame, depth);
                out.push_str(&format!(
                    "{s}{origin} {}\n{called_as}{call}{errors}\n",
                    mfa_to_string(frame)
                ));
            }
        }
    }
    out
}

/// One `{M, F, ArityOrArgs, Location}` of a stack trace.
struct Frame {
    module: Term,
    function: Term,
    arity: usize,
    /// The argument list (a heap list) when the frame has one.
    args: Option<(Term, Vec<Term>)>,
    location: Vec<(String, String)>,
    /// A failed binary construction's `{Position, Type, What, Value}`
    /// (its error_info names erl_erts_errors:format_bs_fail).
    bs_cause: Option<Term>,
}

/// The frames of `trace`, or `None` when it is not a stack trace.
fn stack_frames(heap: &Heap, trace: Term) -> Option<Vec<Frame>> {
    let entries = bif::erlang::list_elements(heap, trace)?;
    let mut out = Vec::new();
    for e in entries {
        let t = heap.as_tuple(e)?;
        if t.len() != 4 || t[0].as_atom().is_none() || t[1].as_atom().is_none() {
            return None;
        }
        let (arity, args) = match t[2].as_small() {
            Some(a) if a >= 0 => (a as usize, None),
            _ => {
                let list = bif::erlang::list_elements(heap, t[2])?;
                (list.len(), Some((t[2], list)))
            }
        };
        let mut location = Vec::new();
        let mut bs_cause = None;
        for item in bif::erlang::list_elements(heap, t[3])? {
            if let Some(pair) = heap.as_tuple(item)
                && pair.len() == 2
                && let Some(key) = pair[0].as_atom()
            {
                if key.name() == "error_info"
                    && heap.map_get(pair[1], Term::atom(Atom::intern("function")))
                        == Some(Term::atom(Atom::intern("format_bs_fail")))
                    && let Some(cause) = heap.map_get(pair[1], Term::atom(Atom::intern("cause")))
                    && heap.as_tuple(cause).is_some_and(|c| c.len() == 4)
                {
                    bs_cause = Some(cause);
                }
                let value = match key.name() {
                    "file" => bif::erlang::char_list(heap, pair[1]).unwrap_or_default(),
                    _ => print::write(heap, pair[1]),
                };
                location.push((key.name().to_string(), value));
            }
        }
        out.push(Frame {
            module: t[0],
            function: t[1],
            arity,
            args,
            location,
            bs_cause,
        });
    }
    Some(out)
}

fn location(loc: &[(String, String)]) -> String {
    let get = |k: &str| loc.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    match (get("file"), get("line")) {
        (Some(file), Some(line)) => format!("({file}, line {line})"),
        _ => String::new(),
    }
}

fn atom_text(t: Term) -> String {
    let mut s = String::new();
    if let Some(a) = t.as_atom() {
        print::write_atom(&mut s, a);
    }
    s
}

fn operator(name: &str, arity: usize) -> bool {
    matches!(
        (name, arity),
        ("+" | "-" | "bnot" | "not", 1)
            | (
                "+" | "-"
                    | "*"
                    | "/"
                    | "div"
                    | "rem"
                    | "band"
                    | "bor"
                    | "bxor"
                    | "bsl"
                    | "bsr"
                    | "and"
                    | "or"
                    | "xor"
                    | "=="
                    | "/="
                    | "=<"
                    | "<"
                    | ">="
                    | ">"
                    | "=:="
                    | "=/="
                    | "++"
                    | "--"
                    | "!",
                2
            )
    )
}

fn is_operator(frame: &Frame) -> bool {
    frame.module == Term::atom(Atom::ERLANG)
        && frame
            .function
            .as_atom()
            .is_some_and(|f| operator(f.name(), frame.arity))
}

/// `M:F` as erl_error names it: a BIF the compiler imports by itself is
/// named alone, an operator by its symbol.
fn mf_to_string(frame: &Frame) -> String {
    let name = frame.function.as_atom().map_or("", |a| a.name());
    if frame.module == Term::atom(Atom::ERLANG) {
        if is_operator(frame) {
            // erl_error writes `/` as an atom, the others bare.
            return if name == "/" {
                "'/'".into()
            } else {
                name.to_string()
            };
        }
        if bif::lookup("erlang", name, frame.arity as u32).is_some_and(bif::is_auto_imported) {
            return atom_text(frame.function);
        }
    }
    format!("{}:{}", atom_text(frame.module), atom_text(frame.function))
}

fn mfa_to_string(frame: &Frame) -> String {
    format!("{}/{}", mf_to_string(frame), frame.arity)
}

/// `~p` of `t` whose first character goes at `column` (0-based), erl_error's
/// depth of 30.
fn pretty(heap: &Heap, t: Term, column: usize, depth: i64) -> String {
    print::print_with(heap, t, column, 80, depth, print::Strings::Latin1)
}

fn lines(s: &str) -> usize {
    s.matches('\n').count()
}

/// The arguments `(A1,A2)` printed from `column` as a list is, brackets
/// turned into parentheses.
fn arguments(heap: &Heap, list: Term, items: &[Term], column: usize, depth: i64) -> String {
    let printed = if !items.is_empty() && print::printable_list(heap, list).is_some() {
        // A list of character codes would print as a string; erl_error
        // keeps them numbers.
        let parts: Vec<String> = items
            .iter()
            .map(|&a| pretty(heap, a, column + 1, depth))
            .collect();
        format!("[{}]", parts.join(","))
    } else {
        pretty(heap, list, column, depth)
    };
    let inner = printed
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(&printed);
    format!("({inner})")
}

/// erl_error's `format_call`: the call of `frame` written after `pre` and
/// `err`, on a line of its own when the arguments fit better there.
fn format_call(heap: &Heap, err: &str, pre: &str, frame: &Frame, depth: i64) -> String {
    let Some((list, items)) = &frame.args else {
        return mfa_to_string(frame);
    };
    if is_operator(frame) {
        let op = frame.function.as_atom().map_or("", |a| a.name());
        let i1 = err.chars().count() + pre.chars().count();
        return match items.as_slice() {
            [a] => format!("{op} {}", pretty(heap, *a, i1 + op.len() + 1, depth)),
            [a, b] => {
                let s1 = pretty(heap, *a, i1, depth);
                let s2 = pretty(heap, *b, i1, depth);
                let nl = format!("\n{}", " ".repeat(i1));
                if lines(&s1) > 0 {
                    return format!("{s1}{nl}{op}{nl}{s2}");
                }
                let col = i1 + op.len() + 2 + s1.chars().count();
                let s2b = pretty(heap, *b, col, depth);
                if lines(&s2) < lines(&s2b) {
                    format!("{s1}{nl}{op}{nl}{s2}")
                } else {
                    format!("{s1} {op} {s2b}")
                }
            }
            _ => mfa_to_string(frame),
        };
    }
    let mfs = mf_to_string(frame);
    let i1 = pre.chars().count() + err.chars().count() + mfs.chars().count();
    let s1 = arguments(heap, *list, items, i1, depth);
    let i2 = pre.chars().count() + mfs.chars().count();
    let s2 = arguments(heap, *list, items, i2, depth);
    // erl_error's probe: two 5-letter atoms that do not fit mean the
    // arguments start too far right.
    let long = i1 + 1 + "[a2345,b2345]".len() >= 80;
    if long || lines(&s2) < lines(&s1) {
        format!("\n{pre}{mfs}{s2}")
    } else {
        format!("{mfs}{s1}")
    }
}

/// The words for a reason of class error (erl_error's explain_reason),
/// or `None` to print the reason as a term.
fn explain_reason(
    heap: &Heap,
    reason: Term,
    s0: &str,
    exited: usize,
    depth: i64,
) -> Option<String> {
    let fixed = |a: Atom| -> Option<&'static str> {
        Some(match a.name() {
            "badarg" => "bad argument",
            "badarith" => "an error occurred when evaluating an arithmetic expression",
            "if_clause" => "no true branch found when evaluating an if expression",
            "noproc" => "no such process or port",
            "notalive" => "the node cannot be part of a distributed system",
            "system_limit" => "a system limit has been reached",
            "timeout_value" => "bad receive timeout value",
            _ => return None,
        })
    };
    if let Some(a) = reason.as_atom() {
        return fixed(a).map(str::to_string);
    }
    let t = heap.as_tuple(reason)?;
    if t.len() != 2 {
        return None;
    }
    let tag = t[0].as_atom()?;
    let value = t[1];
    let err = match tag.name() {
        "badarg" => "bad argument: ",
        "badkey" => "bad key: ",
        "badmap" => "bad map: ",
        "badfun" => "bad function ",
        "badmatch" => "no match of right hand side value ",
        "case_clause" => "no case clause matching ",
        "else_clause" => "no else clause matching ",
        "try_clause" => "no try clause matching ",
        "bad_filter" => "bad filter ",
        "bad_generator" => "bad generator ",
        "badarity" => {
            let pair = heap.as_tuple(value)?;
            if pair.len() != 2 {
                return None;
            }
            let n = bif::erlang::list_elements(heap, pair[1])?.len();
            if !matches!(
                heap.view(pair[0]),
                View::Fun { .. } | View::ExternalFun { .. }
            ) {
                return None;
            }
            let count = match n {
                0 => "no arguments".to_string(),
                1 => "one argument".to_string(),
                2 => "two arguments".to_string(),
                n => format!("{n} arguments"),
            };
            // erl_error names a compiled fun by its module, name and
            // arity (`m:'-main/1-fun-0-'/1`).
            let fun = match bif::library::fun_mfa(heap, pair[0]) {
                Some((module, function, arity)) => mfa_to_string(&Frame {
                    module: Term::atom(module),
                    function: Term::atom(function),
                    arity: arity as usize,
                    args: None,
                    location: Vec::new(),
                    bs_cause: None,
                }),
                None => print::write(heap, pair[0]),
            };
            return Some(format!("{fun} called with {count}"));
        }
        _ => return None,
    };
    // erl_error's format_value: on the next line when that takes fewer lines.
    let first = pretty(heap, value, exited + s0.len() + err.len(), depth);
    if lines(&first) > 1 {
        let below = pretty(heap, value, s0.len() + exited, depth);
        if lines(&below) < lines(&first) {
            return Some(format!("{err}\n{s0}{}{below}", " ".repeat(exited)));
        }
    }
    Some(format!("{err}{first}"))
}

/// erl_erts_errors's words for a failed segment of a binary
/// construction, its cause `{Position, Type, What, Value}`.
fn bs_fail_text(heap: &Heap, cause: Term) -> String {
    let Some(&[position, ty, what, value]) = heap.as_tuple(cause) else {
        return String::new();
    };
    let ty = ty.as_atom().map_or("", |a| a.name());
    // The value as erl_erts_errors shows it: an integer in full (up to
    // 47 digits), anything else as `~P` with depth 20.
    let shown = match heap.view(value) {
        View::Small(i) => i.to_string(),
        View::Big(b) if b.to_bigint().to_string().len() < 48 => b.to_bigint().to_string(),
        _ => print::print_with(heap, value, 1, 80, 20, print::Strings::Latin1),
    };
    let text = match what.as_atom().map_or("", |a| a.name()) {
        "invalid" => format!("expected one of the supported sizes 16, 32, or 64 but got: {shown}"),
        "no_float" => format!("the value {shown} is outside the range expressible as a float"),
        "unit" => {
            format!("the size of the value {shown} is not a multiple of the unit for the segment")
        }
        "short" => format!("the value {shown} is shorter than the size of the segment"),
        "size" => format!("expected a non-negative integer as size but got: {shown}"),
        _ => {
            let expected = match ty {
                "binary" => " binary".to_string(),
                "float" => " float or an integer".to_string(),
                "integer" => "n integer".to_string(),
                other => format!(" non-negative integer encodable as {other}"),
            };
            format!("expected a{expected} but got: {shown}")
        }
    };
    format!(
        "segment {} of type '{ty}': {text}",
        print::write(heap, position)
    )
}

/// The `*** argument N: ...` lines under a failed BIF's call.
fn argument_errors(heap: &Heap, reason: Term, frame: &Frame, s: &str) -> String {
    let Some((_, args)) = &frame.args else {
        return String::new();
    };
    if !frame.location.iter().any(|(k, _)| k == "error_info") {
        return String::new();
    }
    let (Some(m), Some(f)) = (frame.module.as_atom(), frame.function.as_atom()) else {
        return String::new();
    };
    if reason == Term::atom(Atom::SYSTEM_LIMIT) {
        return String::new();
    }
    let causes = causes(heap, m.name(), f.name(), args, reason);
    let mut out = String::new();
    for (i, cause) in causes.iter().enumerate() {
        if let Some(text) = cause {
            if i < args.len() {
                out.push_str(&format!("\n{s}   *** argument {}: {text}", i + 1));
            } else {
                out.push_str(&format!("\n{s}   *** {text}"));
            }
        }
    }
    out
}

/// erl_erts_errors's facts: for each argument, what was wrong with it.
/// An entry past the last argument is a general remark.
fn causes(heap: &Heap, m: &str, f: &str, args: &[Term], reason: Term) -> Vec<Option<String>> {
    let v = |t: Term| heap.view(t);
    let is_atom = |t: Term| t.as_atom().is_some();
    let is_int = |t: Term| matches!(v(t), View::Small(_) | View::Big(_));
    let is_float = |t: Term| matches!(v(t), View::Float(_));
    let is_list = |t: Term| matches!(v(t), View::Cons(..) | View::Nil);
    let is_proper = |t: Term| bif::erlang::list_elements(heap, t).is_some();
    let is_tuple = |t: Term| matches!(v(t), View::Tuple(_));
    let is_binary = |t: Term| matches!(v(t), View::Binary(_));
    let is_map = |t: Term| matches!(v(t), View::Map { .. });
    let is_pid = |t: Term| matches!(v(t), View::Pid(_));
    let is_ref = |t: Term| matches!(v(t), View::Ref(_));
    let is_fun = |t: Term| matches!(v(t), View::Fun { .. } | View::ExternalFun { .. });
    let s = |t: &str| Some(t.to_string());
    let must = |ok: bool, err: &str| if ok { None } else { s(err) };
    let textual = |what: &str| format!("not a textual representation of {what}");
    let list_to = |t: Term, what: &str| {
        if is_proper(t) {
            Some(textual(what))
        } else {
            s("not a list")
        }
    };
    let must_list = |t: Term, otherwise: Option<String>| {
        if !is_list(t) {
            s("not a list")
        } else if !is_proper(t) {
            s("not a proper list")
        } else {
            otherwise
        }
    };
    let base_ok = |t: Term| t.as_small().is_some_and(|b| (2..=36).contains(&b));
    let bad_base = "not an integer in the range 2 through 36";
    let index_err = |i: Term, t: Term| {
        if !is_int(i) {
            s("not an integer")
        } else {
            // As erl_erts_errors: an index below 1 is out of range; one
            // past the end only when there is a tuple to be past.
            let size = heap.as_tuple(t).map(|t| t.len() as i64);
            let below = match v(i) {
                View::Small(k) => k < 1,
                View::Big(b) => b.negative,
                _ => false,
            };
            let past = size.is_some_and(|n| i.as_small().is_none_or(|k| k > n));
            if below || past {
                s("out of range")
            } else {
                None
            }
        }
    };
    let time_err = |t: Term| match v(t) {
        View::Small(n) if n >= 0 => None,
        View::Small(_) => s("out of range"),
        View::Big(b) if !b.negative => s("exceeds the maximum supported time value"),
        View::Big(_) => s("out of range"),
        _ => s("not an integer"),
    };
    let a = |i: usize| args.get(i).copied().unwrap_or(Term::NIL);
    if m == "io" && reason == Term::atom(Atom::intern("terminated")) && !args.is_empty() {
        return vec![s("the device has terminated")];
    }
    if m == "io" && matches!(f, "format" | "fwrite") && !args.is_empty() {
        let (device, format, data) = match args.len() {
            1 => (None, a(0), Term::NIL),
            2 => (None, a(0), a(1)),
            _ => (Some(a(0)), a(1), a(2)),
        };
        let shift = usize::from(device.is_some());
        let mut out = vec![None; shift];
        let text = if let Some(a) = format.as_atom() {
            Some(a.name().to_string())
        } else if let Some(bytes) = heap.binary_bytes(format) {
            String::from_utf8(bytes.to_vec()).ok()
        } else {
            bif::erlang::char_list(heap, format)
        };
        let Some(text) = text else {
            out.push(s("not a valid format string"));
            return out;
        };
        let Some(items) = bif::erlang::list_elements(heap, data) else {
            out.extend([None, s("not a list")]);
            return out;
        };
        match format_problem(heap, &text, &items) {
            Some((true, why)) => out.push(Some(why)),
            Some((false, why)) => out.extend([None, Some(why)]),
            // Format and arguments look fine, yet formatting fails (a
            // negative width where OTP takes none, say).
            None if crate::term::format::format(
                heap,
                &text.chars().collect::<Vec<_>>(),
                &items,
            )
            .is_err() =>
            {
                out.push(s("failed to format string"))
            }
            // The device was at fault (an unregistered name, a dead process).
            None if device.is_some() => out[0] = s("the device does not exist"),
            None => {}
        }
        return out;
    }
    if let Some(found) = stdlib_causes(heap, m, f, args) {
        return found;
    }
    if m == "erlang" {
        return match (f, args.len()) {
            ("abs" | "float" | "trunc" | "round" | "ceil" | "floor", 1) => vec![s("not a number")],
            ("atom_to_list" | "atom_to_binary", 1) => vec![s("not an atom")],
            ("atom_to_binary", 2) => vec![
                must(is_atom(a(0)), "not an atom"),
                must(
                    matches!(
                        a(1).as_atom().map(|x| x.name()),
                        Some("latin1" | "unicode" | "utf8")
                    ),
                    "is an invalid encoding option",
                ),
            ],
            ("binary_to_atom" | "binary_to_existing_atom", 1 | 2) => {
                let enc = if args.len() == 2 {
                    a(1).as_atom().map(|x| x.name())
                } else {
                    Some("utf8")
                };
                match enc {
                    Some("latin1") => vec![must(is_binary(a(0)), "not a binary")],
                    Some("unicode" | "utf8") => {
                        if !is_binary(a(0)) {
                            vec![s("not a binary")]
                        } else if heap
                            .binary_bytes(a(0))
                            .is_some_and(|b| std::str::from_utf8(b).is_err())
                        {
                            vec![s("invalid UTF8 encoding")]
                        } else if f == "binary_to_existing_atom" {
                            vec![s("not an already existing atom")]
                        } else {
                            vec![None]
                        }
                    }
                    _ => vec![
                        must(is_binary(a(0)), "not a binary"),
                        s("not one of the atoms: latin1, utf8, or unicode"),
                    ],
                }
            }
            ("binary_to_float", 1) => vec![Some(if is_binary(a(0)) {
                textual("a float")
            } else {
                "not a binary".into()
            })],
            ("binary_to_integer", 1) => vec![Some(if is_binary(a(0)) {
                textual("an integer")
            } else {
                "not a binary".into()
            })],
            ("binary_to_integer", 2) => {
                if base_ok(a(1)) {
                    vec![Some(if is_binary(a(0)) {
                        textual("an integer")
                    } else {
                        "not a binary".into()
                    })]
                } else {
                    vec![must(is_binary(a(0)), "not a binary"), s(bad_base)]
                }
            }
            ("binary_to_list" | "binary_to_term", 1) if !is_binary(a(0)) => vec![s("not a binary")],
            ("binary_to_list", 3) if !is_binary(a(0)) => vec![s("not a binary")],
            ("binary_to_term", 1) => vec![s("invalid external representation of a term")],
            ("bit_size" | "byte_size" | "bitstring_to_list", 1) => vec![s("not a bitstring")],
            ("element", 2) => vec![index_err(a(0), a(1)), must(is_tuple(a(1)), "not a tuple")],
            ("setelement", 3) | ("insert_element", 3) | ("delete_element", 2) => {
                vec![index_err(a(0), a(1)), must(is_tuple(a(1)), "not a tuple")]
            }
            ("append_element", 2) => vec![s("not a tuple")],
            ("exit", 2) => vec![s("not a pid")],
            ("float_to_list" | "float_to_binary", 1) => vec![s("not a float")],
            ("float_to_list" | "float_to_binary", 2) => {
                let first = must(is_float(a(0)), "not a float");
                let second = if first.is_none() {
                    must_list(a(1), s("invalid option in list"))
                } else {
                    must_list(a(1), None)
                };
                vec![first, second]
            }
            ("fun_info", 1) => vec![s("not a fun")],
            ("fun_info", 2) => {
                if is_fun(a(0)) {
                    vec![None, s("invalid item")]
                } else {
                    vec![s("not a fun")]
                }
            }
            ("halt", 1) => vec![s("invalid status")],
            // The options are checked first, then the status.
            ("halt", 2) => {
                let flush = Term::atom(Atom::intern("flush"));
                let valid = bif::erlang::list_elements(heap, a(1)).is_some_and(|options| {
                    options.iter().all(|&o| {
                        heap.as_tuple(o).is_some_and(|e| {
                            e.len() == 2 && e[0] == flush && e[1].as_bool().is_some()
                        })
                    })
                });
                match must_list(a(1), (!valid).then(|| "invalid option in list".to_string())) {
                    None => vec![s("invalid status")],
                    bad => vec![None, bad],
                }
            }
            ("hd" | "tl", 1) => vec![s("not a nonempty list")],
            ("integer_to_list" | "integer_to_binary", 1) => vec![s("not an integer")],
            ("integer_to_list" | "integer_to_binary", 2) => {
                vec![
                    must(is_int(a(0)), "not an integer"),
                    must(base_ok(a(1)), bad_base),
                ]
            }
            ("iolist_size" | "iolist_to_binary", 1) => vec![s("not an iodata term")],
            ("is_function", 2) => vec![
                None,
                Some(if is_int(a(1)) {
                    "out of range".into()
                } else {
                    "not an integer".into()
                }),
            ],
            ("is_map_key", 2) => vec![None, s("not a map")],
            ("is_process_alive" | "unlink", 1) => vec![s("not a pid")],
            ("length", 1) => vec![s("not a list")],
            ("link", 1) => vec![Some(if is_pid(a(0)) {
                "the pid does not refer to an existing process".into()
            } else {
                "not a pid".into()
            })],
            ("list_to_atom", 1) => vec![must_list(a(0), s("not a list of characters"))],
            ("list_to_existing_atom", 1) => {
                let flat = bif::erlang::char_list(heap, a(0)).is_some();
                vec![if flat {
                    s("not an already existing atom")
                } else {
                    must_list(a(0), s("not a list of characters"))
                }]
            }
            ("list_to_binary", 1) => vec![s("not an iolist term")],
            ("list_to_bitstring", 1) => vec![s("not a bitstring list")],
            ("list_to_float", 1) => vec![list_to(a(0), "a float")],
            ("list_to_integer", 1) => vec![list_to(a(0), "an integer")],
            ("list_to_integer", 2) => {
                if base_ok(a(1)) {
                    vec![must_list(a(0), Some(textual("an integer")))]
                } else {
                    vec![must_list(a(0), None), s(bad_base)]
                }
            }
            ("list_to_pid", 1) => vec![list_to(a(0), "a pid")],
            ("list_to_ref", 1) => vec![list_to(a(0), "a reference")],
            ("list_to_tuple", 1) => vec![s("not a list")],
            ("make_tuple", 2) => vec![s("out of range")],
            ("map_size", 1) => vec![s("not a map")],
            ("map_get", 2) => {
                if is_map(a(1)) {
                    vec![s("not present in map")]
                } else {
                    vec![None, s("not a map")]
                }
            }
            ("node", 1) => vec![s("not a pid")],
            ("phash" | "phash2", 2) => vec![
                None,
                must(
                    a(1).as_small().is_some_and(|n| n >= 1),
                    if is_int(a(1)) {
                        "out of range"
                    } else {
                        "not an integer"
                    },
                ),
            ],
            ("pid_to_list", 1) => vec![s("not a pid")],
            ("ref_to_list", 1) => vec![s("not a reference")],
            ("register", 2) => {
                let name = a(0).as_atom();
                let first = match name {
                    Some(n) if n.name() == "undefined" => s("'undefined' is not a valid name"),
                    Some(_) => None,
                    None => s("not an atom"),
                };
                let second = must(is_pid(a(1)), "not a pid or port");
                if first.is_none() && second.is_none() {
                    vec![s("name is in use")]
                } else {
                    vec![first, second]
                }
            }
            ("send", 2) => vec![s("invalid destination")],
            ("send_after" | "start_timer", 3 | 4) => {
                let dest = a(1);
                let mut out = vec![
                    time_err(a(0)),
                    must(is_pid(dest) || is_atom(dest), "not a pid or an atom"),
                ];
                if args.len() == 4 {
                    // erl_erts_errors explains the options (the fourth
                    // argument) as argument 3, and so does escript.
                    let options = a(3);
                    let valid = bif::erlang::list_elements(heap, options).is_some_and(|items| {
                        items.iter().all(|&o| match heap.as_tuple(o) {
                            Some([k, b]) => {
                                k.as_atom().is_some_and(|k| k.name() == "abs")
                                    && (*b == Term::TRUE || *b == Term::FALSE)
                            }
                            _ => false,
                        })
                    });
                    out.push(must_list(
                        options,
                        (!valid).then(|| "invalid option in list".to_string()),
                    ));
                }
                out
            }
            ("cancel_timer" | "read_timer", 1) => vec![s("not a reference")],
            ("size", 1) => vec![s("not tuple or binary")],
            ("spawn" | "spawn_link" | "spawn_monitor", 1) => vec![s("not a fun")],
            ("spawn" | "spawn_link" | "spawn_monitor", 3) => vec![
                must(is_atom(a(0)), "not an atom"),
                must(is_atom(a(1)), "not an atom"),
                must_list(a(2), None),
            ],
            ("split_binary", 2) => {
                if !is_binary(a(0)) {
                    vec![s("not a binary"), None]
                } else if a(1).as_small().is_none_or(|n| n < 0) {
                    vec![
                        None,
                        Some(if is_int(a(1)) {
                            "out of range".into()
                        } else {
                            "not an integer".into()
                        }),
                    ]
                } else {
                    vec![None, s("out of range")]
                }
            }
            ("binary_part", 3) => {
                let e = [
                    must(is_binary(a(0)), "not a binary"),
                    if !is_int(a(1)) {
                        s("not an integer")
                    } else if a(1).as_small().is_some_and(|n| n >= 0) {
                        None
                    } else {
                        s("out of range")
                    },
                    must(is_int(a(2)), "not an integer"),
                ];
                if e.iter().all(Option::is_none) {
                    let size = heap.binary_bytes(a(0)).map_or(0, |b| b.len() as i64);
                    if a(1).as_small().is_some_and(|p| p > size) {
                        vec![None, s("out of range")]
                    } else {
                        vec![None, None, s("out of range")]
                    }
                } else {
                    e.to_vec()
                }
            }
            // OTP 25's erl_erts_errors explains neither `++` nor `--`.
            ("tuple_size" | "tuple_to_list", 1) => vec![s("not a tuple")],
            ("whereis", 1) => vec![s("not an atom")],
            ("unregister", 1) => vec![s("not a pid")],
            ("system_info", 1) => vec![s("invalid system info item")],
            ("statistics", 1) => vec![s("invalid statistics item")],
            ("process_info", 1) => vec![must(is_pid(a(0)), "not a pid")],
            ("process_info", 2) => {
                if is_pid(a(0)) {
                    vec![None, s("invalid item or item list")]
                } else {
                    vec![s("not a pid")]
                }
            }
            ("monitor", 2 | 3) => match a(0).as_atom().map(|x| x.name()) {
                Some("process") if !(is_pid(a(1)) || is_atom(a(1)) || is_tuple(a(1))) => {
                    vec![None, s("not a pid")]
                }
                Some("process") if args.len() == 3 => vec![None, None, s("invalid option in list")],
                Some("process") => vec![None, None],
                // No ports here: a pid (or other non-atom) is not one.
                Some("port") if !is_atom(a(1)) => vec![None, s("not a port")],
                Some("time_offset") => vec![None, None],
                _ => vec![s("invalid monitor type")],
            },
            ("demonitor", 1) => vec![s("not a reference")],
            ("convert_time_unit", 3) => vec![must(is_int(a(0)), "not an integer"), None, None],
            ("make_ref", 0) | ("self", 0) => vec![],
            ("unique_integer", 1) => vec![must_list(a(0), s("invalid modifier"))],
            ("bump_reductions", 1) => vec![must(
                a(0).as_small().is_some_and(|n| n >= 0),
                "out of range",
            )],
            ("is_record", 2) => vec![s("not an atom")],
            _ => {
                let _ = (is_ref, reason);
                vec![]
            }
        };
    }
    vec![]
}

/// The explanations OTP's stdlib BIFs give (maps, lists, binary, math,
/// ets), or `None` for a function not listed here.
fn stdlib_causes(heap: &Heap, m: &str, f: &str, args: &[Term]) -> Option<Vec<Option<String>>> {
    let v = |t: Term| heap.view(t);
    let a = |i: usize| args.get(i).copied().unwrap_or(Term::NIL);
    let s = |t: &str| Some(t.to_string());
    let is_map = |t: Term| matches!(v(t), View::Map { .. });
    let is_list = |t: Term| matches!(v(t), View::Cons(..) | View::Nil);
    let is_binary = |t: Term| matches!(v(t), View::Binary(_));
    let is_number = |t: Term| matches!(v(t), View::Small(_) | View::Big(_) | View::Float(_));
    // erl_stdlib_errors's must_be_list.
    let list_fault = |t: Term| {
        if !is_list(t) {
            s("not a list")
        } else if bif::erlang::list_elements(heap, t).is_none() {
            s("not a proper list")
        } else {
            None
        }
    };
    // The first argument among `which` that fails `ok`, blamed with `why`.
    let first_bad = |which: &[usize], ok: &dyn Fn(Term) -> bool, why: &str| {
        let mut out = vec![None; args.len()];
        let i = which.iter().copied().find(|&i| !ok(a(i)))?;
        out[i] = s(why);
        Some(out)
    };
    match (m, f, args.len()) {
        ("maps", "get" | "find" | "is_key" | "remove" | "take", 2) => {
            first_bad(&[1], &is_map, "not a map")
        }
        ("maps", "put" | "update", 3) => first_bad(&[2], &is_map, "not a map"),
        ("maps", "keys" | "values" | "to_list" | "size", 1) => {
            first_bad(&[0], &is_map, "not a map")
        }
        ("maps", "merge", 2) => first_bad(&[0, 1], &is_map, "not a map"),
        ("maps", "from_list", 1) => first_bad(&[0], &is_list, "not a list"),
        ("lists", "keyfind" | "keymember" | "keysearch", 3) => {
            if a(1).as_small().is_some_and(|n| n < 1) {
                Some(vec![None, s("out of range"), None])
            } else {
                Some(vec![None, None, list_fault(a(2))])
            }
        }
        ("lists", "member", 2) => Some(vec![None, list_fault(a(1))]),
        ("lists", "reverse", 2) => Some(vec![list_fault(a(0)), None]),
        ("binary", "split" | "match" | "matches" | "replace", _) => {
            first_bad(&[0], &is_binary, "not a binary").or_else(|| {
                let mut out = vec![None; args.len()];
                out[1] = s("not a valid pattern");
                Some(out)
            })
        }
        ("binary", "copy" | "bin_to_list" | "decode_unsigned" | "referenced_byte_size", _) => {
            first_bad(&[0], &is_binary, "not a binary")
        }
        ("binary", "first" | "last", 1) => Some(vec![if is_binary(a(0)) {
            s("a zero-sized binary is not allowed")
        } else {
            s("not a binary")
        }]),
        ("binary", "part", 3) => first_bad(&[0], &is_binary, "not a binary").or_else(|| {
            let size = heap.binary_bytes(a(0)).map_or(0, |b| b.len() as i64);
            if a(1).as_small().is_none_or(|p| p < 0 || p > size) {
                Some(vec![None, s("out of range"), None])
            } else {
                Some(vec![None, None, s("out of range")])
            }
        }),
        ("math", _, 1 | 2) => {
            let all: Vec<usize> = (0..args.len()).collect();
            first_bad(&all, &is_number, "not a number").or_else(|| {
                matches!(
                    f,
                    "sqrt" | "log" | "log2" | "log10" | "acos" | "asin" | "acosh" | "atanh"
                )
                .then(|| vec![s("is outside the domain for this function")])
            })
        }
        ("ets", _, n)
            if n >= 1
                && !matches!(f, "new" | "whereis" | "all")
                && crate::runtime::ets::resolve(heap, a(0)).is_none() =>
        {
            let mut out = vec![None; n];
            out[0] = s("the table identifier does not refer to an existing ETS table");
            Some(out)
        }
        ("ets", "insert" | "insert_new", 2)
            if !matches!(v(a(1)), View::Tuple(_) | View::Cons(..) | View::Nil) =>
        {
            Some(vec![None, s("not a tuple")])
        }
        _ => None,
    }
}

/// What io_lib finds wrong with format `text` and its arguments: `true`
/// for a fault of the format itself, `false` for one of the arguments.
fn format_problem(heap: &Heap, text: &str, items: &[Term]) -> Option<(bool, String)> {
    let mut chars = text.chars().peekable();
    let mut needed: Vec<Option<&'static str>> = Vec::new();
    while let Some(c) = chars.next() {
        if c != '~' {
            continue;
        }
        // Field width, precision and pad character, then modifiers.
        let mut dots = 0;
        while let Some(&n) = chars.peek() {
            if n.is_ascii_digit() || n == '-' {
                chars.next();
            } else if n == '*' {
                chars.next();
                needed.push(Some("integer"));
            } else if n == '.' {
                chars.next();
                dots += 1;
                if dots == 2 {
                    chars.next();
                }
            } else {
                break;
            }
        }
        while matches!(chars.peek(), Some('t' | 'l' | 'k' | 'K')) {
            chars.next();
        }
        let Some(control) = chars.next() else {
            return Some((true, "format string invalid (truncated)".into()));
        };
        match control {
            'n' | '~' => {}
            'c' | 'B' | '#' | 'b' | '+' => needed.push(Some("integer")),
            'X' | 'x' => needed.extend([Some("integer"), None]),
            'f' | 'e' | 'g' => needed.push(Some("float")),
            's' => needed.push(Some("string")),
            'w' | 'p' | 'i' => needed.push(None),
            'W' | 'P' => needed.extend([None, Some("integer")]),
            other => {
                return Some((
                    true,
                    format!("format string invalid (invalid control ~{other})"),
                ));
            }
        }
    }
    if needed.len() != items.len() {
        return Some((true, "wrong number of arguments".into()));
    }
    for (i, (want, &item)) in needed.iter().zip(items).enumerate() {
        let ok = match want {
            Some("integer") => matches!(heap.view(item), View::Small(_) | View::Big(_)),
            Some("float") => matches!(heap.view(item), View::Float(_)),
            Some("string") => {
                item.as_atom().is_some()
                    || crate::term::iolist::iolist_size(heap, item).is_some()
                    || bif::erlang::char_list(heap, item).is_some()
            }
            _ => true,
        };
        if !ok {
            let want = want.unwrap_or("term");
            return Some((false, format!("element {} must be of type {want}", i + 1)));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_operators_have_their_symbols() {
        assert_eq!(arith_name(ArithOp::IntDiv), "div");
        assert!(operator("div", 2));
        assert!(operator("-", 1));
        assert!(!operator("element", 2));
    }
}
