//! Exceptions: recording the stack trace at a raise and building it as
//! a term when something looks at it, unwinding to the nearest catch,
//! and the text Erlang's shell prints for an uncaught one.
//!
//! A raise records the frames (`process::RawTrace`) and puts
//! `Term::RAW_TRACE` where the trace goes; `build_trace` makes the list
//! of `{M, F, Arity | Args, Location}` tuples when a handler binds the
//! trace (`build_stacktrace`), a `catch` wraps an error, or the
//! exception ends the process. A `throw` caught for control flow never
//! builds one.

use super::{ExitKind, Flow, Outcome, regs_used};
use crate::code::ModuleRef;
use crate::process::{CatchKind, Class, Process, TraceTop};
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

/// One frame of `process_info(P, current_stacktrace)`: module, function,
/// arity, and file and line if any.
pub type ShownFrame = (Atom, Atom, u32, Option<(String, u32)>);

/// The frames `process_info(P, current_stacktrace)` lists for `p` standing
/// at `ip` in `module`, innermost first, as a stack trace shows them
/// (OTP's library lines, escript's frames under a script's `main/1`).
pub fn current_stacktrace(p: &Process, module: ModuleRef, ip: usize) -> Vec<ShownFrame> {
    // As a raise records them (`record`): a return address the same as
    // the one before it shows once.
    let mut entries = Vec::new();
    let at = ip.saturating_sub(1) as u32;
    let mut previous = (module, at);
    if let Some(i) = function_index(&module, at) {
        entries.push((module, i, module.line_at(at)));
    }
    for f in p.frames.iter().rev() {
        if entries.len() >= TRACE_DEPTH {
            break;
        }
        let (m, at) = (f.module, f.return_ip.saturating_sub(1));
        if previous.0.same(m) && previous.1 == at {
            continue;
        }
        previous = (m, at);
        if let Some(i) = function_index(&m, at) {
            entries.push((m, i, m.line_at(at)));
        }
    }
    let mut out: Vec<ShownFrame> = (0..entries.len())
        .filter_map(|k| {
            let (name, arity, file, line) = frame_shown(&entries, k)?;
            Some((
                entries[k].0.name,
                name,
                arity,
                Some((file.into_owned(), line)),
            ))
        })
        .collect();
    if p.is_script_main() && entries.len() < TRACE_DEPTH {
        let room = TRACE_DEPTH - entries.len();
        for &(m, f, arity, location) in ESCRIPT_FRAMES.iter().take(room) {
            let location = location.map(|(file, line)| (file.to_string(), line));
            out.push((Atom::intern(m), Atom::intern(f), arity, location));
        }
    }
    out
}

/// A frame BEAM has and act has not: module, function, arity, and file
/// and line if any.
type ForeignFrame = (&'static str, &'static str, u32, Option<(&'static str, u32)>);

/// The frames under `main/1` in a BEAM stack trace of an escript's main
/// process (OTP 25).
const ESCRIPT_FRAMES: [ForeignFrame; 4] = [
    ("escript", "run", 2, Some(("escript.erl", 750))),
    ("escript", "start", 1, Some(("escript.erl", 277))),
    ("init", "start_em", 1, None),
    ("init", "do_boot", 3, None),
];

/// How a frame of act's library shows in a stack trace, where it stands
/// for a frame of OTP's: at OTP's line (in OTP's file, `MODULE.erl`), as
/// another function of OTP's (name, arity, line), or not at all (a
/// helper of act's that OTP's code has not).
enum OtpFrame {
    At(u32),
    As(&'static str, u32, u32),
    Hidden,
    /// At OTP's line for each of act's lines listed (act's line, OTP's);
    /// where act's file and line for a line not listed.
    Lines(&'static [(u32, u32)]),
}

/// Frames of functions of act's library written in the shape of OTP 25's:
/// module, function, arity, the function called from the frame (`""`:
/// any), and how it shows. Only modules act provides (`stdlib/`) are
/// looked up.
#[rustfmt::skip]
const OTP_FRAMES: [(&str, &str, u32, &str, OtpFrame); 98] = {
    use OtpFrame::{As, At, Hidden, Lines};
    [
        // A call to a server that is not there or does not answer.
        ("gen_server", "call", 2, "", At(370)),
        ("gen_server", "call", 3, "", At(385)),
        ("gen_server", "init_it", 2, "", At(851)),
        ("gen_server", "init_it", 6, "", At(814)),
        ("gen_server", "try_dispatch", 4, "", At(1123)),
        ("gen_server", "try_handle_call", 4, "", At(1149)),
        ("gen_server", "handle_msg", 6, "try_handle_call", At(1178)),
        ("gen_server", "handle_msg", 6, "try_dispatch", At(1200)),
        ("gen_statem", "call_state", 5, "", As("loop_state_callback", 11, 1426)),
        ("gen_statem", "call_event", 5, "", As("loop_state_callback", 11, 1428)),
        ("gen_statem", "event", 3, "", Hidden),
        ("gen_statem", "enter_call", 4, "", Hidden),
        ("io_lib", "fwrite", 2, "", Hidden),
        ("io_lib", "format", 3, "", Hidden),
        ("gen_fsm", "catch_call", 3, "", Hidden),
        ("gen_fsm", "init_it", 6, "catch_call", At(333)),
        ("gen_fsm", "decode_msg", 6, "catch_call", As("handle_msg", 8, 479)),
        ("gen_event", "server_update", 4, "", At(802)),
        ("gen_event", "server_notify", 4, "server_update", At(784)),
        ("gen_event", "handle_notify", 4, "", As("handle_msg", 6, 526)),
        ("gen_event", "handle_sync_notify", 5, "", As("handle_msg", 6, 529)),
        ("gen_event", "handle_info_msg", 4, "", As("handle_msg", 6, 573)),
        ("gen_event", "call_update", 3, "", As("server_call_update", 3, 925)),
        ("gen_event", "server_call", 4, "", At(874)),
        ("gen_event", "decode_msg", 4, "server_call", As("handle_msg", 6, 536)),
        ("supervisor", "do_start_child_i", 3, "", At(414)),
        ("supervisor", "do_start_child", 2, "", At(400)),
        ("supervisor", "handle_start_child", 2, "", At(706)),
        ("supervisor", "-start_children/2-fun-0-", 3, "", At(384)),
        ("supervisor", "children_map", 4, "", At(1250)),
        ("supervisor", "init_children", 2, "", At(350)),
        ("supervisor", "handle_call", 3, "do_start_child_i", At(439)),
        ("supervisor", "handle_call", 3, "handle_start_child", At(455)),
        ("proc_lib", "init_p", 3, "", At(225)),
        ("proc_lib", "init_p_do_apply", 3, "", At(240)),
        ("timer", "sleep", 1, "", At(219)),
        ("erpc", "local", 3, "", As("call", 5, 137)),
        ("erpc", "local_timeout", 3, "", As("call", 5, 702)),
        // The list and dictionary functions programs see fail most: a
        // bad argument (function_clause, badarg) or a fun that raised.
        ("lists", "seq", 2, "", At(271)),
        ("lists", "seq", 3, "", At(299)),
        ("lists", "nth", 2, "", At(198)),
        ("lists", "nthtail", 2, "", At(208)),
        ("lists", "last", 1, "", At(256)),
        ("lists", "min", 1, "", At(343)),
        ("lists", "max", 1, "", At(356)),
        ("lists", "zip", 2, "", At(419)),
        ("lists", "sum", 2, "", At(319)),
        ("lists", "duplicate", 2, "", At(331)),
        ("lists", "sublist", 2, "", As("sublist_2", 2, 388)),
        ("lists", "split", 2, "", At(1568)),
        ("lists", "zipwith", 3, "", At(483)),
        ("lists", "all", 2, "", At(1268)),
        ("lists", "any", 2, "", At(1291)),
        ("lists", "map", 2, "", At(1315)),
        ("lists", "map_1", 2, "", At(1320)),
        ("lists", "flatmap", 2, "", As("flatmap_1", 2, 1335)),
        ("lists", "foldl", 3, "", At(1350)),
        ("lists", "foldl_1", 3, "", At(1355)),
        ("lists", "foreach", 2, "", As("foreach_1", 2, 1442)),
        ("lists", "mapfoldl", 3, "", As("mapfoldl_1", 3, 1462)),
        ("lists", "takewhile", 2, "", As("takewhile_1", 2, 1499)),
        ("lists", "dropwhile", 2, "", As("dropwhile_1", 2, 1516)),
        ("dict", "fetch", 2, "", At(132)),
        ("orddict", "fetch", 2, "", At(80)),
        ("gb_trees", "insert", 3, "", At(278)),
        ("gb_trees", "insert_1", 4, "", At(319)),
        ("gb_trees", "get_1", 2, "", At(244)),
        ("proplists", "get_value", 3, "", At(216)),
        ("queue", "get", 1, "", At(188)),
        ("array", "get", 2, "", At(642)),
        // Lines of act's files that raise (or call on) where OTP's do.
        ("array", "set", 3, "", Lines(&[(85, 584), (87, 587)])),
        ("maps", "update_with", 3, "", Lines(&[(44, 265)])),
        ("orddict", "update", 3, "", Lines(&[(70, 169), (71, 170), (73, 172)])),
        ("gb_trees", "update", 3, "", At(258)),
        ("gb_trees", "update_1", 3, "", Lines(&[(46, 263), (47, 264), (49, 266)])),
        ("gb_sets", "delete", 2, "", At(401)),
        ("gb_sets", "delete_1", 2, "", Lines(&[(133, 403), (134, 404), (136, 407)])),
        ("gb_sets", "insert", 2, "", At(264)),
        ("gb_sets", "insert_1", 3, "", Lines(&[(44, 267), (51, 284), (59, 305)])),
        ("lists", "append", 1, "", Lines(&[(27, 154), (28, 155)])),
        ("lists", "reverse", 1, "", Lines(&[(492, 175), (495, 182)])),
        ("lists", "append", 2, "", At(144)),
        ("lists", "subtract", 2, "", At(166)),
        ("lists", "keysort", 2, "", Lines(&[(456, 784), (459, 785)])),
        ("lists", "ukeysort", 2, "", Lines(&[(468, 879), (471, 880)])),
        ("lists", "splitwith_1", 3, "", Lines(&[(131, 1550)])),
        ("lists", "filtermap", 2, "", Lines(&[(177, 1413)])),
        ("lists", "filtermap_1", 2, "", Lines(&[(180, 1417)])),
        ("lists", "partition", 2, "", Lines(&[(234, 1395)])),
        ("lists", "partition_1", 4, "", Lines(&[(237, 1399)])),
        ("lists", "-filter/2-lc$^0/1-0-", 2, "", Lines(&[(175, 1383)])),
        // A non-list given to inet:parse_ipv4_address/1 and its kin.
        ("inet_parse", "ipv4_addr", 2, "", At(511)),
        ("inet_parse", "ipv4_addr", 1, "", At(495)),
        ("inet_parse", "ipv4_address", 1, "", At(486)),
        ("inet_parse", "ipv6_address", 1, "", At(608)),
        ("inet_parse", "ipv4strict_addr", 2, "", At(562)),
        ("inet_parse", "ipv4strict_addr", 1, "", At(555)),
        ("inet_parse", "ipv4strict_address", 1, "", At(546)),
    ]
};

/// Where OTP 25's Erlang code raises `badarg` for a bad format given to
/// `io:format`/`fwrite`/`put_chars` (io.erl line 99, the device refusing the request;
/// line 94 for a device that is no process) or to `io_lib:format/2`
/// (io_lib.erl line 187), and `function_clause` for a non-list given to
/// `lists:sort/1` or `usort/1` (lists.erl lines 512, 1112): act's BIFs
/// stand for these
/// functions, and their top frame carries OTP's file and line and
/// error_info cause.
type IoSite = (&'static str, u32, Option<(&'static str, &'static str)>);

/// Words an `IoSite`'s location list takes: the longest file name as a
/// string, `{file, F}`, `{line, L}`, `{What, Detail}`, the error_info map
/// of two, `{error_info, Map}` and the list of three.
const IO_SITE_WORDS: usize =
    2 * "io_lib.erl".len() + 3 + 3 + 3 + crate::heap::words_for_map(2) + 3 + 6;

fn io_site(m: Atom, f: Atom, reason: Term, args: &[Term]) -> Option<IoSite> {
    // lists:sort/1 and usort/1 are Erlang code in OTP: a non-list, or an
    // improper list that does not start with two elements, fails their
    // clauses.
    if reason == Term::atom(Atom::intern("function_clause")) && args.len() == 1 {
        match (m.name(), f.name()) {
            ("lists", "sort") => return Some(("lists.erl", 512, None)),
            ("lists", "usort") => return Some(("lists.erl", 1112, None)),
            _ => {}
        }
    }
    // Output to an io server that has ended.
    if reason == Term::atom(Atom::intern("terminated")) {
        return match (m.name(), f.name()) {
            ("io", "format" | "fwrite" | "put_chars" | "write" | "nl") => {
                Some(("io.erl", 94, Some(("io", "terminated"))))
            }
            _ => None,
        };
    }
    if reason != Term::atom(Atom::intern("badarg")) {
        return None;
    }
    match (m.name(), f.name()) {
        ("io_lib", "format") if args.len() == 2 => Some(("io_lib.erl", 187, None)),
        ("io", "format" | "fwrite" | "put_chars") => {
            let device = match (f.name(), args.len()) {
                ("put_chars", 2) | (_, 3) => Some(args[0]),
                _ => None,
            };
            let known = device.is_none_or(|d| {
                d.as_atom()
                    .is_none_or(|a| matches!(a.name(), "standard_io" | "standard_error" | "user"))
            });
            if known {
                Some(("io.erl", 99, Some(("device", "put_chars"))))
            } else {
                Some(("io.erl", 94, Some(("io", "arguments"))))
            }
        }
        _ => None,
    }
}

/// What stack trace entry `k` of `entries` shows: `None` for a hidden
/// frame, else its function, arity, file and line (OTP's, for a frame
/// of `OTP_FRAMES`).
fn frame_shown(
    entries: &[(ModuleRef, u32, u32)],
    k: usize,
) -> Option<(Atom, u32, std::borrow::Cow<'_, str>, u32)> {
    let (m, f, line) = &entries[k];
    let info = &m.functions[*f as usize];
    let called = k.checked_sub(1).map(|j| {
        let (cm, cf, _) = &entries[j];
        cm.functions[*cf as usize].name
    });
    let (module, function) = (m.name.name(), info.name.name());
    let (act_file, act_line) = m.location(*line);
    for (om, of, arity, callee, shown) in &OTP_FRAMES {
        if *om == module
            && *of == function
            && *arity == info.arity
            && (callee.is_empty() || called.is_some_and(|c| c.name() == *callee))
            && crate::runtime::script::is_stdlib(module)
        {
            let file = || format!("{module}.erl").into();
            return match *shown {
                OtpFrame::At(line) => Some((info.name, info.arity, file(), line)),
                OtpFrame::As(name, arity, line) => Some((Atom::intern(name), arity, file(), line)),
                OtpFrame::Hidden => None,
                OtpFrame::Lines(lines) => match lines.iter().find(|&&(a, _)| a == act_line) {
                    Some(&(_, line)) => Some((info.name, info.arity, file(), line)),
                    None => Some((info.name, info.arity, act_file.into(), act_line)),
                },
            };
        }
    }
    Some((info.name, info.arity, act_file.into(), act_line))
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
    if p.ensure_heap_for_exception(3, &mut x[..used], &mut keep)
        .is_err()
    {
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
    raise_traced(p, x, module, ip, class, reason, args, None, false)
}

/// `raise`, where `top` names a function `m:f` that was called with
/// `args` but has no frame of its own (see `TraceTop`). The trace is
/// recorded, not built (see `RawTrace`); `build_trace` builds it.
#[allow(clippy::too_many_arguments)]
fn raise_traced(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    class: Class,
    reason: Term,
    args: Option<Vec<Term>>,
    top: Option<TraceTop>,
    tail: bool,
) -> Flow {
    p.set_exception([Term::atom(class.atom()), reason, Term::NIL]);
    let mut args = args.unwrap_or_default();
    let list = if args.is_empty() {
        Term::NIL
    } else {
        let used = regs_used(module).min(x.len());
        if p.ensure_heap_for_exception(2 * args.len(), &mut x[..used], &mut args)
            .is_err()
        {
            // No room: the exception goes on without a trace.
            return unwind(p, x, module, ip, class);
        }
        p.heap.list(&args)
    };
    record(p, *module, *ip, top, tail);
    let e = p.exception_mut();
    e[2] = Term::RAW_TRACE;
    e[3] = list;
    unwind(p, x, module, ip, class)
}

/// Records where the stack stands (`RawTrace`): the raise at `ip` in
/// `module` (unless it was a tail call, whose caller's frame is gone on
/// BEAM), then the callers, each return address once where it repeats,
/// as many as a trace shows.
fn record(p: &mut Process, module: ModuleRef, ip: usize, top: Option<TraceTop>, tail: bool) {
    // Taken out and put back, so the walk can read the frames; the
    // vector keeps its storage from one raise to the next.
    let mut raw = std::mem::take(p.raw_trace_mut());
    raw.frames.clear();
    raw.top = top;
    raw.bs_fail = false;
    let in_function = |m: &ModuleRef, at: u32| m.functions.iter().any(|f| f.entry <= at);
    let at = ip.saturating_sub(1) as u32;
    if !tail && in_function(&module, at) {
        raw.frames.push((module, at));
    }
    // The frame BEAM puts on top for a BIF or undefined function counts
    // towards the depth.
    let depth = TRACE_DEPTH - usize::from(top.is_some());
    if raw.frames.len() > depth {
        raw.frames.truncate(depth);
    }
    // As BEAM's walk, a return address the same as the one just taken
    // (the raise's own place first) is left out: a body recursion shows
    // as one frame of the recursive call, however deep it went.
    let mut previous = raw.frames.last().copied();
    let mut cut = false;
    for f in p.frames.iter().rev() {
        let at = f.return_ip.saturating_sub(1);
        if previous.is_some_and(|(m, a): (ModuleRef, u32)| m.same(f.module) && a == at) {
            continue;
        }
        if raw.frames.len() >= depth {
            cut = true;
            break;
        }
        previous = Some((f.module, at));
        if in_function(&f.module, at) {
            raw.frames.push((f.module, at));
        }
    }
    raw.under = if !cut && p.is_script_main() {
        ESCRIPT_FRAMES
            .len()
            .min(depth - raw.frames.len().min(depth)) as u8
    } else {
        0
    };
    *p.raw_trace_mut() = raw;
}

/// The stacktrace of the exception being raised or handled, built as
/// a term now if the raise only recorded it (`Term::RAW_TRACE`); the
/// exception keeps the term. `module` is the code running (its X
/// registers in use are roots). Without heap room the trace is `[]`.
pub(super) fn build_trace(p: &mut Process, x: &mut [Term], module: &ModuleRef) -> Term {
    let [_, _, trace, list] = *p.exception_mut();
    if trace != Term::RAW_TRACE {
        return trace;
    }
    let raw = std::mem::take(p.raw_trace_mut());
    let entries: Vec<(ModuleRef, u32, u32)> = raw
        .frames
        .iter()
        .filter_map(|&(m, at)| function_index(&m, at).map(|i| (m, i, m.line_at(at))))
        .collect();
    let under = raw.under as usize;
    let called = raw.top;
    let mut args = p.heap.list_to_vec(list).unwrap_or_default();
    // A failed construction's cause, for the first frame's error_info.
    let bs_cause = if raw.bs_fail { args.pop() } else { None };
    if bs_cause.is_some() {
        args.clear();
    }
    if let Some(cause) = bs_cause {
        args.push(cause);
    }
    // The top frame's error_info list: 2 (cons) + 3 (tuple) + a map of
    // one or two (`module`, and the BIF's `cause` when it left one).
    let mut words = 2 * args.len() + 7 + 5 + crate::heap::words_for_map(3) + IO_SITE_WORDS;
    for k in 0..entries.len() {
        if let Some((_, _, file, _)) = frame_shown(&entries, k) {
            words += 5 + 4 + 6 + 2 * file.chars().count() + 2;
        }
    }
    words += under * (5 + 4 + 6 + 2 * "escript.erl".len() + 2);
    let used = regs_used(module).min(x.len());
    let mut trace = Term::NIL;
    if p.ensure_heap_for_exception(words, &mut x[..used], &mut args)
        .is_ok()
    {
        let reason = p.exception()[1];
        for &(m, f, arity, location) in ESCRIPT_FRAMES[..under].iter().rev() {
            let heap = &mut p.heap;
            let location = match location {
                Some((file, line)) => {
                    let file = heap.string(file);
                    let file = heap.tuple(&[Term::atom(Atom::FILE), file]);
                    let line = heap.tuple(&[Term::atom(Atom::LINE), Term::small(line as i64)]);
                    heap.list(&[file, line])
                }
                None => Term::NIL,
            };
            let entry = heap.tuple(&[
                Term::atom(Atom::intern(m)),
                Term::atom(Atom::intern(f)),
                Term::small(arity as i64),
                location,
            ]);
            trace = heap.cons(entry, trace);
        }
        for (k, (m, _, _)) in entries.iter().enumerate().rev() {
            let Some((name, shown_arity, file, line)) = frame_shown(&entries, k) else {
                continue;
            };
            let heap = &mut p.heap;
            let file = heap.string(&file);
            let file = heap.tuple(&[Term::atom(Atom::FILE), file]);
            let line = heap.tuple(&[Term::atom(Atom::LINE), Term::small(line as i64)]);
            let mut location = vec![file, line];
            if k == 0
                && let Some(&cause) = args.first().filter(|_| bs_cause.is_some())
            {
                let map = heap.map(&[
                    (Term::atom(Atom::intern("cause")), cause),
                    (
                        Term::atom(Atom::intern("function")),
                        Term::atom(Atom::intern("format_bs_fail")),
                    ),
                    (
                        Term::atom(Atom::intern("module")),
                        Term::atom(Atom::intern("erl_erts_errors")),
                    ),
                ]);
                location.push(heap.tuple(&[Term::atom(Atom::intern("error_info")), map]));
            }
            let location = heap.list(&location);
            let arity = if k == 0 && called.is_none() && !args.is_empty() && bs_cause.is_none() {
                heap.list(&args)
            } else {
                Term::small(shown_arity as i64)
            };
            let entry = heap.tuple(&[Term::atom(m.name), Term::atom(name), arity, location]);
            trace = heap.cons(entry, trace);
        }
        if let Some(top) = called {
            let entry = top_frame(p, top, reason, &args);
            trace = p.heap.cons(entry, trace);
        }
    }
    let e = p.exception_mut();
    e[2] = trace;
    e[3] = Term::NIL;
    *p.raw_trace_mut() = raw;
    trace
}

/// The frame BEAM puts on top of a trace for `top` called with `args`
/// (the heap has room: `build_trace` counted it).
fn top_frame(p: &mut Process, top: TraceTop, reason: Term, args: &[Term]) -> Term {
    let cause = match top {
        TraceTop::Bif(m, f) => crate::bif::badarg_cause(&p.heap, m, f, args, reason),
        TraceTop::Undefined(..) => None,
    };
    let site = match top {
        TraceTop::Bif(m, f) if cause.is_none() => io_site(m, f, reason, args),
        _ => None,
    };
    let heap = &mut p.heap;
    let args = heap.list(args);
    let (m, f, info) = match top {
        TraceTop::Undefined(m, f) => (m, f, Term::NIL),
        TraceTop::Bif(m, f) if site.is_some() => {
            let (file, line, why) = site.expect("checked");
            let file = heap.string(file);
            let file = heap.tuple(&[Term::atom(Atom::FILE), file]);
            let line = heap.tuple(&[Term::atom(Atom::LINE), Term::small(line as i64)]);
            let mut location = vec![file, line];
            if let Some((what, detail)) = why {
                let why = heap.tuple(&[
                    Term::atom(Atom::intern(what)),
                    Term::atom(Atom::intern(detail)),
                ]);
                let map = heap.map(&[
                    (Term::atom(Atom::intern("cause")), why),
                    (
                        Term::atom(Atom::intern("module")),
                        Term::atom(Atom::intern("erl_stdlib_errors")),
                    ),
                ]);
                location.push(heap.tuple(&[Term::atom(Atom::intern("error_info")), map]));
            }
            (m, f, heap.list(&location))
        }
        TraceTop::Bif(m, f) => {
            // The application that owns the module explains its errors.
            let explainer = match m.name() {
                "erlang" | "persistent_term" | "atomics" | "counters" => "erl_erts_errors",
                "os" => "erl_kernel_errors",
                _ => "erl_stdlib_errors",
            };
            let mut pairs = vec![(
                Term::atom(Atom::intern("module")),
                Term::atom(Atom::intern(explainer)),
            )];
            if let Some(cause) = cause {
                pairs.push((Term::atom(Atom::intern("cause")), Term::atom(cause)));
            }
            let map = heap.map(&pairs);
            let info = heap.tuple(&[Term::atom(Atom::intern("error_info")), map]);
            (m, f, heap.list(&[info]))
        }
    };
    heap.tuple(&[Term::atom(m), Term::atom(f), args, info])
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
        // How the process ends shows the trace: build it.
        build_trace(p, x, module);
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
                    build_trace(p, x, module);
                    let used = regs_used(module).min(x.len());
                    if p.ensure_heap_for_exception(6, &mut x[..used], &mut [])
                        .is_err()
                    {
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

/// `undef` for `m:f/arity` (the arguments are in x0..), called as a
/// tail call or not.
#[allow(clippy::too_many_arguments)]
pub(super) fn undef(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    m: Atom,
    f: Atom,
    arity: usize,
    tail: bool,
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
        Some(TraceTop::Undefined(m, f)),
        tail,
    )
}

/// Raises the `badarg` of a binary construction whose segment failed for
/// `cause` (`{Position, Type, What, Value}`): the frame of the
/// construction carries `{error_info, #{cause => Cause, function =>
/// format_bs_fail, module => erl_erts_errors}}`, as BEAM's.
pub(super) fn raise_bs_fail(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    cause: Term,
) -> Flow {
    let reason = Term::atom(Atom::BADARG);
    p.set_exception([Term::atom(Class::Error.atom()), reason, Term::NIL]);
    let used = regs_used(module).min(x.len());
    let mut keep = [cause];
    if p.ensure_heap_for_exception(2, &mut x[..used], &mut keep)
        .is_err()
    {
        return raise(p, x, module, ip, Class::Error, reason, None);
    }
    let list = p.heap.list(&keep);
    record(p, *module, *ip, None, false);
    p.raw_trace_mut().bs_fail = true;
    let e = p.exception_mut();
    e[2] = Term::RAW_TRACE;
    e[3] = list;
    unwind(p, x, module, ip, Class::Error)
}

/// Raises the error of BIF or operator `m:f` called with `args`, with
/// BEAM's top frame for it (see `Top::Bif`).
#[allow(clippy::too_many_arguments)]
pub(super) fn raise_bif(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    class: Class,
    reason: Term,
    m: Atom,
    f: Atom,
    args: &[Term],
) -> Flow {
    raise_traced(
        p,
        x,
        module,
        ip,
        class,
        reason,
        Some(args.to_vec()),
        Some(TraceTop::Bif(m, f)),
        false,
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

/// What escript prints for an uncaught exception, after `escript: `
/// (the words live in runtime::explain).
pub fn format_exception(p: &Process) -> String {
    let [class, reason, trace] = p.exception();
    crate::runtime::explain::format_exception(&p.heap, class, reason, trace, 0)
}
