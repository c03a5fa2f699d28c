//! Exceptions: building the stack trace, unwinding to the nearest catch,
//! and the text Erlang's shell prints for an uncaught one.

use super::{ExitKind, Flow, Outcome, regs_used};
use crate::code::ModuleRef;
use crate::process::{CatchKind, Class, Process};
use crate::term::{Atom, Term};

/// Erlang's default `backtrace_depth`.
const TRACE_DEPTH: usize = 8;

/// The functions on the stack, innermost first: module, function index,
/// line of the current instruction or call.
pub fn stacktrace_entries(p: &Process, module: ModuleRef, ip: usize) -> Vec<(ModuleRef, u32, u32)> {
    let mut out = Vec::new();
    let at = ip.saturating_sub(1) as u32;
    if let Some(i) = function_index(&module, at) {
        out.push((module, i, module.line_at(at)));
    }
    for f in p.frames.iter().rev() {
        if out.len() >= TRACE_DEPTH {
            break;
        }
        let m = f.module;
        let at = f.return_ip.saturating_sub(1);
        if let Some(i) = function_index(&m, at) {
            out.push((m, i, m.line_at(at)));
        }
    }
    out
}

fn function_index(m: &crate::code::Module, ip: u32) -> Option<u32> {
    let f = m.function_at(ip)?;
    m.functions
        .iter()
        .position(|g| g.entry == f.entry)
        .map(|i| i as u32)
}

/// `{Tag, Value}` on the heap (a safepoint).
pub(super) fn tuple2(p: &mut Process, x: &mut [Term], tag: Atom, value: Term) -> Term {
    let used = regs_used(&p.module).min(x.len());
    let mut keep = [value];
    if p.ensure_heap(3, &mut x[..used], &mut keep).is_err() {
        return Term::atom(Atom::SYSTEM_LIMIT);
    }
    p.heap.tuple(&[Term::atom(tag), keep[0]])
}

/// Raises `class:reason` with a fresh stack trace. `args` (the arguments,
/// for `function_clause`) replace the arity in the first entry.
pub(super) fn raise(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    class: Class,
    reason: Term,
    args: Option<Vec<Term>>,
) -> Flow {
    raise_traced(p, x, module, ip, class, reason, args, None)
}

/// `raise`, where `called` names a function `m:f` that was called with
/// `args` but never entered (`undef`): as in Erlang, the trace starts
/// with `{M, F, Args, []}`.
#[allow(clippy::too_many_arguments)]
fn raise_traced(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    class: Class,
    reason: Term,
    args: Option<Vec<Term>>,
    called: Option<(Atom, Atom)>,
) -> Flow {
    p.set_exception([Term::atom(class.atom()), reason, Term::NIL]);
    let entries = stacktrace_entries(p, *module, *ip);
    let arg_count = args.as_ref().map_or(0, |a| a.len());
    let mut words = 2 * arg_count + 7;
    for (m, _, line) in &entries {
        words += 5 + 4 + 6 + 2 * m.location(*line).0.chars().count() + 2;
    }
    let used = regs_used(module).min(x.len());
    let mut args = args.unwrap_or_default();
    if p.ensure_heap(words, &mut x[..used], &mut args).is_ok() {
        let mut trace = Term::NIL;
        for (k, (m, f, line)) in entries.iter().enumerate().rev() {
            let info = &m.functions[*f as usize];
            let heap = &mut p.heap;
            let (file, line) = m.location(*line);
            let file = heap.string(file);
            let file = heap.tuple(&[Term::atom(Atom::FILE), file]);
            let line = heap.tuple(&[Term::atom(Atom::LINE), Term::small(line as i64)]);
            let location = heap.list(&[file, line]);
            let arity = if k == 0 && called.is_none() && (arg_count > 0 || !args.is_empty()) {
                heap.list(&args)
            } else {
                Term::small(info.arity as i64)
            };
            let entry = heap.tuple(&[Term::atom(m.name), Term::atom(info.name), arity, location]);
            trace = heap.cons(entry, trace);
        }
        if let Some((m, f)) = called {
            let heap = &mut p.heap;
            let args = heap.list(&args);
            let entry = heap.tuple(&[Term::atom(m), Term::atom(f), args, Term::NIL]);
            trace = heap.cons(entry, trace);
        }
        p.exception_mut()[2] = trace;
    }
    unwind(p, x, module, ip, class)
}

/// Transfers control to the innermost catch, or ends the process.
/// The exception is in `p.exception()`.
pub(super) fn unwind(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    class: Class,
) -> Flow {
    let Some(c) = p.pop_catch() else {
        return Flow::Stop(Outcome::Exit(ExitKind::Exception));
    };
    p.frames.truncate(c.frames as usize);
    p.stack.truncate(c.stack_len as usize);
    p.y_base = c.y_base;
    *module = c.module;
    *ip = c.handler as usize;
    p.shrink_stack();
    let [class_atom, reason, trace] = p.exception();
    match c.kind {
        CatchKind::Try => {
            x[0] = class_atom;
            x[1] = reason;
            x[2] = trace;
        }
        CatchKind::Catch => {
            x[0] = match class {
                Class::Throw => reason,
                Class::Exit => tuple2(p, x, Atom::EXIT_UPPER, reason),
                Class::Error => {
                    let used = regs_used(module).min(x.len());
                    if p.ensure_heap(6, &mut x[..used], &mut []).is_err() {
                        Term::atom(Atom::SYSTEM_LIMIT)
                    } else {
                        let [_, reason, trace] = p.exception();
                        let inner = p.heap.tuple(&[reason, trace]);
                        p.heap.tuple(&[Term::atom(Atom::EXIT_UPPER), inner])
                    }
                }
            };
        }
    }
    Flow::Continue
}

/// `undef` for `m:f/arity` (the arguments are in x0..).
pub(super) fn undef(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    m: Atom,
    f: Atom,
    arity: usize,
) -> Flow {
    let args = x[..arity.min(x.len())].to_vec();
    raise_traced(
        p,
        x,
        module,
        ip,
        Class::Error,
        Term::atom(Atom::UNDEF),
        Some(args),
        Some((m, f)),
    )
}

/// `{badarity, {Fun, Args}}`.
pub(super) fn badarity(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    _fun: Term,
    arity: usize,
) -> Flow {
    let used = regs_used(module).min(x.len());
    if p.ensure_heap(2 * arity + 6, &mut x[..used], &mut [])
        .is_err()
    {
        return raise(
            p,
            x,
            module,
            ip,
            Class::Error,
            Term::atom(Atom::SYSTEM_LIMIT),
            None,
        );
    }
    let fun = x[arity];
    let args = p.heap.list(&x[..arity]);
    let inner = p.heap.tuple(&[fun, args]);
    let reason = p.heap.tuple(&[Term::atom(Atom::BADARITY), inner]);
    raise(p, x, module, ip, Class::Error, reason, None)
}

/// `M:F/Arity` of a trace that starts with `{M, F, Args, []}`, and the
/// rest of the trace.
fn undefined_call(heap: &crate::heap::Heap, trace: Term) -> Option<(String, Term)> {
    if !trace.is_cons() {
        return None;
    }
    let (head, rest) = heap.cons_parts(trace);
    let t = heap.as_tuple(head)?;
    if t.len() != 4 || t[3] != Term::NIL {
        return None;
    }
    let (m, f) = (t[0].as_atom()?, t[1].as_atom()?);
    let arity = crate::bif::erlang::list_elements(heap, t[2])?.len();
    let mut text = String::new();
    crate::term::print::write_atom(&mut text, m);
    text.push(':');
    crate::term::print::write_atom(&mut text, f);
    Some((format!("{text}/{arity}"), rest))
}

/// What Erlang's shell prints for an uncaught exception, after `prefix: `.
pub fn format_exception(p: &Process) -> String {
    let [class, reason, mut trace] = p.exception();
    let heap = &p.heap;
    let show = |t: Term| crate::bif::fmt::print(heap, t);
    let class_name = class.as_atom().map_or("error", |a| a.name());
    let tagged = |tag: Atom| -> Option<Term> {
        let t = heap.as_tuple(reason)?;
        (t.len() == 2 && t[0] == Term::atom(tag)).then(|| t[1])
    };
    let mut text = if class_name != "error" {
        format!("exception {class_name}: {}", show(reason))
    } else if reason == Term::atom(Atom::BADARITH) {
        "exception error: an error occurred when evaluating an arithmetic expression".into()
    } else if reason == Term::atom(Atom::BADARG) {
        "exception error: bad argument".into()
    } else if reason == Term::atom(Atom::IF_CLAUSE) {
        "exception error: no true branch found when evaluating an if expression".into()
    } else if reason == Term::atom(Atom::FUNCTION_CLAUSE) {
        "exception error: no function clause matching".into()
    } else if reason == Term::atom(Atom::UNDEF) {
        // The first entry is the function that does not exist: it is
        // named in the message, not listed as a place.
        match undefined_call(heap, trace) {
            Some((mfa, rest)) => {
                trace = rest;
                format!("exception error: undefined function {mfa}")
            }
            None => "exception error: undefined function".into(),
        }
    } else if reason == Term::atom(Atom::SYSTEM_LIMIT) {
        "exception error: a system limit has been reached".into()
    } else if let Some(v) = tagged(Atom::BADMATCH) {
        format!(
            "exception error: no match of right hand side value {}",
            show(v)
        )
    } else if let Some(v) = tagged(Atom::CASE_CLAUSE) {
        format!("exception error: no case clause matching {}", show(v))
    } else if let Some(v) = tagged(Atom::TRY_CLAUSE) {
        format!("exception error: no try clause matching {}", show(v))
    } else if let Some(v) = tagged(Atom::BADFUN) {
        format!("exception error: bad function {}", show(v))
    } else if let Some(v) = tagged(Atom::BADKEY) {
        format!("exception error: bad key: {}", show(v))
    } else {
        format!("exception error: {}", show(reason))
    };
    text.push('\n');
    let entries = crate::bif::erlang::list_elements(heap, trace).unwrap_or_default();
    for (i, e) in entries.iter().enumerate() {
        let Some(t) = heap.as_tuple(*e) else { continue };
        if t.len() != 4 {
            continue;
        }
        let (m, f) = (show(t[0]), show(t[1]));
        let arity = match t[2].as_small() {
            Some(a) => format!("{m}:{f}/{a}"),
            None => {
                let args = crate::bif::erlang::list_elements(heap, t[2]).unwrap_or_default();
                let shown: Vec<String> = args.iter().map(|&a| show(a)).collect();
                format!("{m}:{f}({})", shown.join(","))
            }
        };
        let mut place = String::new();
        if let Some(loc) = crate::bif::erlang::list_elements(heap, t[3]) {
            let mut file = String::new();
            let mut line = 0;
            for l in loc {
                if let Some(pair) = heap.as_tuple(l) {
                    if pair.len() == 2 && pair[0] == Term::atom(Atom::FILE) {
                        file = crate::bif::erlang::char_list(heap, pair[1]).unwrap_or_default();
                    } else if pair.len() == 2 && pair[0] == Term::atom(Atom::LINE) {
                        line = pair[1].as_small().unwrap_or(0);
                    }
                }
            }
            place = format!(" ({file}, line {line})");
        }
        let lead = if i == 0 {
            "in function "
        } else {
            "in call from"
        };
        text.push_str(&format!("  {lead} {arity}{place}\n"));
    }
    text
}
