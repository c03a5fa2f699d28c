//! The `erlang` extras of the library issue: message timers (`send_after`,
//! `start_timer`, `cancel_timer`, `read_timer`), `process_info`, the
//! `system_info` items programs ask about, dates and clocks, unique
//! integers, `raise/3` and `error/3`, `spawn_opt`, `statistics`, pid and
//! reference text, and the scheduling hints (`yield`, `bump_reductions`, `garbage_collect`).

use super::erlang::{list_elements, make_string};
use super::process::{self, reference_id, services};
use super::{BifError, BifResult, Context};
use crate::heap::{self, MessageBuffer};
use crate::process::Class;
use crate::sched::Pid;
use crate::sched::send_timer::Destination;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::sync::atomic::{AtomicI64, Ordering};

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

/// Words any `i64` needs on the heap.
const INT_WORDS: usize = 4;

// ---------------------------------------------------------------------
// Timers.

/// A timer's time: a non-negative integer of milliseconds (with
/// `{abs, true}`, a point on the monotonic clock in milliseconds).
/// `badarg` with BEAM's `cause` (`time`, `badopt`) for timer BIF
/// `function`.
fn timer_badarg(function: &str, cause: &str) -> BifError {
    super::set_badarg_cause(Atom::intern(function), Atom::intern(cause));
    BifError::Badarg
}

fn timer_delay(ctx: &Context, t: Term, absolute: bool, function: &str) -> Result<u64, BifError> {
    let bad_time = || timer_badarg(function, "time");
    let ms = match ctx.process.heap.view(t) {
        View::Small(i) => i,
        _ => return Err(bad_time()),
    };
    if absolute {
        let now_ms = (services(|s| s.now_ns()) / 1_000_000) as i64;
        return Ok(ms.saturating_sub(now_ms).max(0) as u64 * 1_000_000);
    }
    // BEAM takes any time whose end still fits its nanosecond clock (a
    // signed 64-bit count, about 292 years): above 2^32 ms too.
    let now_ns = services(|s| s.now_ns());
    let after = u64::try_from(ms)
        .ok()
        .and_then(|ms| ms.checked_mul(1_000_000))
        .filter(|ns| {
            ns.checked_add(now_ns)
                .is_some_and(|end| end <= i64::MAX as u64)
        })
        .ok_or_else(bad_time)?;
    Ok(after)
}

fn destination(t: Term) -> Result<Destination, BifError> {
    if let Some(name) = t.as_atom() {
        return Ok(Destination::Name(name));
    }
    Pid::from_term(t)
        .map(Destination::Pid)
        .ok_or(BifError::Badarg)
}

/// `[{abs, Bool}]`: whether the time is absolute.
fn timer_options(ctx: &Context, t: Term, function: &str) -> Result<bool, BifError> {
    let bad_option = || timer_badarg(function, "badopt");
    let mut absolute = false;
    for option in list_elements(&ctx.process.heap, t).ok_or_else(bad_option)? {
        match ctx.process.heap.as_tuple(option) {
            Some(&[key, value]) if key == atom("abs") => {
                absolute = value.as_bool().ok_or_else(bad_option)?;
            }
            _ => return Err(bad_option()),
        }
    }
    Ok(absolute)
}

/// Arms a timer; `timeout` wraps the message as `{timeout, TRef, Msg}`.
fn start(ctx: &mut Context, args: &mut [Term], absolute: bool, timeout: bool) -> BifResult {
    let function = if timeout { "start_timer" } else { "send_after" };
    let after = timer_delay(ctx, args[0], absolute, function)?;
    let to = destination(args[1])?;
    let id = services(|s| s.make_ref());
    ctx.ensure(heap::REF_WORDS + 4, args)?;
    let reference = ctx.heap().reference(id);
    let message = if timeout {
        let msg = args[2];
        ctx.heap().tuple(&[atom("timeout"), reference, msg])
    } else {
        args[2]
    };
    let buffer =
        MessageBuffer::copy_from(&ctx.process.heap, message).map_err(|_| BifError::SystemLimit)?;
    services(|s| s.start_send_timer(id, after, to, buffer));
    Ok(reference)
}

pub fn send_after_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    start(ctx, args, false, false)
}

pub fn send_after_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let absolute = timer_options(ctx, args[3], "send_after")?;
    start(ctx, args, absolute, false)
}

pub fn start_timer_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    start(ctx, args, false, true)
}

pub fn start_timer_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let absolute = timer_options(ctx, args[3], "start_timer")?;
    start(ctx, args, absolute, true)
}

/// Milliseconds left (rounded up, so a fresh timer shows its whole
/// time, as BEAM's), or `false`.
fn time_left(ns: Option<u64>) -> Term {
    match ns {
        Some(ns) => Term::small(ns.div_ceil(1_000_000).min(i64::MAX as u64 >> 4) as i64),
        None => Term::atom(Atom::FALSE),
    }
}

/// `[{async, Bool}, {info, Bool}]`.
fn async_info(ctx: &Context, t: Term) -> Result<(bool, bool), BifError> {
    let (mut asynchronous, mut info) = (false, true);
    for option in list_elements(&ctx.process.heap, t).ok_or(BifError::Badarg)? {
        match ctx.process.heap.as_tuple(option) {
            Some(&[key, value]) if key == atom("async") => {
                asynchronous = value.as_bool().ok_or(BifError::Badarg)?;
            }
            Some(&[key, value]) if key == atom("info") => {
                info = value.as_bool().ok_or(BifError::Badarg)?;
            }
            _ => return Err(BifError::Badarg),
        }
    }
    Ok((asynchronous, info))
}

/// The result of a timer operation with options: the value itself, `ok`,
/// or (async with info) `ok` and the message `{Tag, TRef, Value}` to self.
fn answer(ctx: &mut Context, args: &mut [Term], tag: &str, value: Term) -> BifResult {
    let (asynchronous, info) = async_info(ctx, args[1])?;
    if !asynchronous {
        return Ok(if info { value } else { Term::atom(Atom::OK) });
    }
    if info {
        ctx.ensure(4, args)?;
        let reference = args[0];
        let message = ctx.heap().tuple(&[atom(tag), reference, value]);
        ctx.process.mailbox.push(message);
    }
    Ok(Term::atom(Atom::OK))
}

fn timer_id(ctx: &Context, t: Term) -> Result<u64, BifError> {
    reference_id(&ctx.process.heap, t).ok_or(BifError::Badarg)
}

pub fn cancel_timer_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = timer_id(ctx, args[0])?;
    Ok(time_left(services(|s| s.cancel_send_timer(id))))
}

pub fn cancel_timer_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = timer_id(ctx, args[0])?;
    async_info(ctx, args[1])?;
    let left = time_left(services(|s| s.cancel_send_timer(id)));
    answer(ctx, args, "cancel_timer", left)
}

pub fn read_timer_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = timer_id(ctx, args[0])?;
    Ok(time_left(services(|s| s.read_send_timer(id))))
}

pub fn read_timer_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = timer_id(ctx, args[0])?;
    async_info(ctx, args[1])?;
    let left = time_left(services(|s| s.read_send_timer(id)));
    answer(ctx, args, "read_timer", left)
}

// ---------------------------------------------------------------------
// Exceptions.

/// `erlang:error(Reason, Args, Options)`: the arguments and options only
/// shape BEAM's stack trace.
pub fn error_3(_: &mut Context, args: &mut [Term]) -> BifResult {
    Err(BifError::Raise(Class::Error, args[0]))
}

/// `erlang:raise(Class, Reason, Stacktrace)`: with an unknown class or a
/// stack trace that is not a list it raises nothing and returns `badarg`,
/// as BEAM's does.
pub fn raise_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let class = args[0].as_atom().and_then(Class::from_atom);
    match class {
        Some(class) if list_elements(&ctx.process.heap, args[2]).is_some() => {
            Err(BifError::RaiseTrace(class, args[1], args[2]))
        }
        _ => Ok(Term::atom(Atom::BADARG)),
    }
}

// ---------------------------------------------------------------------
// Unique integers and clocks.

/// BEAM's unique integers start at the bottom of the small range; the
/// positive ones at 1.
static UNIQUE: AtomicI64 = AtomicI64::new(0);

fn unique(positive: bool) -> i64 {
    let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
    if positive { n + 1 } else { n - (1 << 59) + 2 }
}

pub fn unique_integer_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = unique(false);
    ctx.ensure(INT_WORDS, args)?;
    Ok(ctx.heap().int(n))
}

pub fn unique_integer_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut positive = false;
    for option in list_elements(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)? {
        match option.as_atom().map(Atom::name) {
            Some("positive") => positive = true,
            Some("monotonic") => {}
            _ => return Err(BifError::Badarg),
        }
    }
    let n = unique(positive);
    ctx.ensure(INT_WORDS, args)?;
    Ok(ctx.heap().int(n))
}

/// Wall-clock nanoseconds since 1970 (the virtual clock under
/// `--deterministic`).
fn system_ns() -> u64 {
    if crate::runtime::processes::deterministic() {
        return services(|s| s.now_ns());
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// `erlang:now()`: `{MegaSecs, Secs, MicroSecs}`, strictly increasing
/// between calls as BEAM's.
pub fn now_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let micros = system_ns() / 1000;
    let mut last = LAST.load(Ordering::Relaxed);
    let micros = loop {
        let next = micros.max(last + 1);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => last = seen,
        }
    };
    ctx.ensure(4, args)?;
    Ok(ctx.heap().tuple(&[
        Term::small((micros / 1_000_000_000_000) as i64),
        Term::small((micros / 1_000_000 % 1_000_000) as i64),
        Term::small((micros % 1_000_000) as i64),
    ]))
}

/// The civil date and time of `secs` since 1970, in UTC or local time.
fn civil(secs: i64, local: bool) -> [i64; 6] {
    let t = secs as libc::time_t;
    // SAFETY: `tm` is plain data that `*_r` fills; both pointers are valid
    // for the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe {
        if local {
            !libc::localtime_r(&t, &mut tm).is_null()
        } else {
            !libc::gmtime_r(&t, &mut tm).is_null()
        }
    };
    if !ok {
        return [1970, 1, 1, 0, 0, 0];
    }
    [
        tm.tm_year as i64 + 1900,
        tm.tm_mon as i64 + 1,
        tm.tm_mday as i64,
        tm.tm_hour as i64,
        tm.tm_min as i64,
        tm.tm_sec as i64,
    ]
}

fn date_time(ctx: &mut Context, args: &mut [Term], local: bool) -> BifResult {
    let [y, mo, d, h, mi, s] = civil((system_ns() / 1_000_000_000) as i64, local);
    ctx.ensure(12, args)?;
    let heap = ctx.heap();
    let date = heap.tuple(&[Term::small(y), Term::small(mo), Term::small(d)]);
    let time = heap.tuple(&[Term::small(h), Term::small(mi), Term::small(s)]);
    Ok(heap.tuple(&[date, time]))
}

pub fn localtime_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    date_time(ctx, args, true)
}

pub fn universaltime_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    date_time(ctx, args, false)
}

pub fn date_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let [y, mo, d, ..] = civil((system_ns() / 1_000_000_000) as i64, true);
    ctx.ensure(4, args)?;
    Ok(ctx
        .heap()
        .tuple(&[Term::small(y), Term::small(mo), Term::small(d)]))
}

pub fn time_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let [.., h, mi, s] = civil((system_ns() / 1_000_000_000) as i64, true);
    ctx.ensure(4, args)?;
    Ok(ctx
        .heap()
        .tuple(&[Term::small(h), Term::small(mi), Term::small(s)]))
}

// ---------------------------------------------------------------------
// Processes.

fn pid_arg(t: Term) -> Result<Pid, BifError> {
    Pid::from_term(t).ok_or(BifError::Badarg)
}

/// The items `process_info/1` lists, in BEAM's order.
const INFO_ITEMS: &[&str] = &[
    "current_function",
    "initial_call",
    "status",
    "message_queue_len",
    "links",
    "dictionary",
    "trap_exit",
    "error_handler",
    "priority",
    "group_leader",
    "total_heap_size",
    "heap_size",
    "stack_size",
    "reductions",
    "garbage_collection",
    "suspending",
];

/// The registered name of `pid`, if any.
fn name_of(pid: Pid) -> Option<Atom> {
    services(|s| {
        s.registered()
            .into_iter()
            .find(|&n| s.whereis(n) == Some(pid))
    })
}

/// `{current_function, {M, F, A}}` of the running process.
fn current_function(ctx: &mut Context, args: &mut [Term]) -> Result<Term, BifError> {
    let module = ctx.process.module;
    let ip = ctx.process.ip;
    let f = module
        .functions
        .iter()
        .filter(|f| f.entry <= ip)
        .max_by_key(|f| f.entry);
    ctx.ensure(4, args)?;
    Ok(match f {
        Some(f) => ctx.heap().tuple(&[
            Term::atom(module.name),
            Term::atom(f.name),
            Term::small(f.arity as i64),
        ]),
        None => Term::atom(Atom::UNDEFINED),
    })
}

/// The value of one `process_info` item, for a process that is the
/// caller (`me`) or another live one (read by `inspect` unless it runs on
/// another scheduler right now: then its queue, heap and dictionary show
/// as empty).
fn info_value(ctx: &mut Context, args: &mut [Term], pid: Pid, item: &str) -> BifResult {
    let me = pid == services(|s| s.self_pid());
    if !me && let Some(value) = super::inspect::other_value(ctx, args, pid, item) {
        return value;
    }
    let words = |ctx: &Context| if me { ctx.process.heap.used() } else { 233 };
    Ok(match item {
        "registered_name" => match name_of(pid) {
            Some(n) => Term::atom(n),
            None => Term::NIL,
        },
        "status" => atom(if me { "running" } else { "waiting" }),
        "message_queue_len" => Term::small(if me {
            ctx.process.mailbox.len() as i64
        } else {
            0
        }),
        "messages" => {
            if !me {
                return Ok(Term::NIL);
            }
            let messages: Vec<Term> = ctx.process.mailbox.iter().copied().collect();
            ctx.ensure(2 * messages.len(), args)?;
            let messages: Vec<Term> = ctx.process.mailbox.iter().copied().collect();
            ctx.heap().list(&messages)
        }
        "links" | "monitors" | "monitored_by" => {
            if !me {
                return Ok(Term::NIL);
            }
            let (links, monitors, watchers) = services(|s| s.relations());
            match item {
                "links" => {
                    ctx.ensure(2 * links.len(), args)?;
                    let items: Vec<Term> = links.into_iter().map(Pid::to_term).collect();
                    ctx.heap().list(&items)
                }
                "monitored_by" => {
                    ctx.ensure(2 * watchers.len(), args)?;
                    let items: Vec<Term> = watchers.into_iter().map(Pid::to_term).collect();
                    ctx.heap().list(&items)
                }
                _ => {
                    ctx.ensure(5 * monitors.len(), args)?;
                    let heap = ctx.heap();
                    let items: Vec<Term> = monitors
                        .into_iter()
                        .map(|(_, target)| {
                            heap.tuple(&[Term::atom(Atom::PROCESS), target.to_term()])
                        })
                        .collect();
                    heap.list(&items)
                }
            }
        }
        "dictionary" => {
            if !me {
                return Ok(Term::NIL);
            }
            let n = ctx.process.dictionary().len() / 2;
            ctx.ensure(5 * n, args)?;
            let pairs: Vec<Term> = ctx.process.dictionary().to_vec();
            let heap = ctx.heap();
            let items: Vec<Term> = pairs.chunks(2).map(|kv| heap.tuple(kv)).collect();
            heap.list(&items)
        }
        "trap_exit" => Term::boolean(me && services(|s| s.trap_exit())),
        "error_handler" => atom("error_handler"),
        "priority" => Term::atom(priority::of(pid)),
        "group_leader" => match super::io_server::leader_of(pid) {
            Some(leader) => leader.to_term(),
            None => group_leader(),
        },
        "heap_size" | "total_heap_size" => Term::small(words(ctx) as i64),
        "stack_size" => Term::small(if me {
            ctx.process.stack.len() as i64
        } else {
            1
        }),
        "memory" => Term::small(8 * words(ctx) as i64 + 1000),
        "reductions" => {
            let r = if me {
                ctx.process.total_reductions + ctx.process.reductions as u64
            } else {
                0
            };
            ctx.ensure(INT_WORDS, args)?;
            ctx.heap().int(r.min(i64::MAX as u64) as i64)
        }
        "current_function" => {
            if me {
                current_function(ctx, args)?
            } else {
                Term::atom(Atom::UNDEFINED)
            }
        }
        "catchlevel" => Term::small(if me {
            ctx.process.catch_level() as i64
        } else {
            0
        }),
        "current_stacktrace" => {
            let frames = if me {
                let p = &*ctx.process;
                crate::interp::current_stacktrace(p, p.module, p.ip as usize)
            } else {
                Vec::new()
            };
            super::inspect::stacktrace(ctx, args, &frames)?
        }
        "initial_call" => {
            let (m, f, a) = ctx.process.initial_call();
            ctx.ensure(4, args)?;
            ctx.heap()
                .tuple(&[Term::atom(m), Term::atom(f), Term::small(a as i64)])
        }
        "garbage_collection" => {
            // BEAM's settings (max_heap_size as the map process_info
            // gives), then the count of minor collections.
            ctx.ensure(3 * 5 + 5 + 3 + crate::heap::words_for_map(3) + 10, args)?;
            let heap = ctx.heap();
            let max = heap.map(&[
                (atom("error_logger"), Term::TRUE),
                (atom("kill"), Term::TRUE),
                (atom("size"), Term::small(0)),
            ]);
            let mut pairs = vec![heap.tuple(&[atom("max_heap_size"), max])];
            for k in ["min_bin_vheap_size", "min_heap_size", "fullsweep_after"] {
                pairs.push(heap.tuple(&[atom(k), gc_setting(k)]));
            }
            pairs.push(heap.tuple(&[atom("minor_gcs"), Term::small(0)]));
            heap.list(&pairs)
        }
        "min_heap_size" | "min_bin_vheap_size" | "fullsweep_after" => gc_setting(item),
        "message_queue_data" => atom("on_heap"),
        "suspending" => Term::NIL,
        _ => return Err(BifError::Badarg),
    })
}

/// `info_pair` while `pairs` (made earlier) stay roots too.
fn info_pair_keeping(
    ctx: &mut Context,
    args: &mut [Term],
    pairs: &mut Vec<Term>,
    pid: Pid,
    item: Term,
) -> BifResult {
    let n = pairs.len();
    let mut roots: Vec<Term> = pairs.drain(..).chain(args.iter().copied()).collect();
    let result = info_pair(ctx, &mut roots, pid, item);
    args.copy_from_slice(&roots[n..]);
    pairs.extend_from_slice(&roots[..n]);
    result
}

fn info_pair(ctx: &mut Context, args: &mut [Term], pid: Pid, item: Term) -> BifResult {
    let name = item.as_atom().ok_or(BifError::Badarg)?;
    let value = info_value(ctx, args, pid, name.name())?;
    // The value and every root the caller gave stay live across the
    // collection the tuple may need (the earlier pairs are among them).
    let mut keep: Vec<Term> = std::iter::once(value).chain(args.iter().copied()).collect();
    ctx.ensure(3, &mut keep)?;
    args.copy_from_slice(&keep[1..]);
    Ok(ctx.heap().tuple(&[Term::atom(name), keep[0]]))
}

pub fn process_info_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = pid_arg(args[0])?;
    if !services(|s| s.is_alive(pid)) {
        return Ok(Term::atom(Atom::UNDEFINED));
    }
    let mut items: Vec<&str> = INFO_ITEMS.to_vec();
    if name_of(pid).is_some() {
        items.insert(0, "registered_name");
    }
    let mut pairs = Vec::new();
    for item in items {
        let pair = info_pair_keeping(ctx, args, &mut pairs, pid, atom(item))?;
        pairs.push(pair);
    }
    // The pairs are roots while the list is built.
    ctx.ensure(2 * pairs.len(), &mut pairs)?;
    Ok(ctx.heap().list(&pairs))
}

pub fn process_info_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = pid_arg(args[0])?;
    let alive = services(|s| s.is_alive(pid));
    if let Some(items) = list_elements(&ctx.process.heap, args[1]) {
        if items.iter().any(|i| !i.is_atom()) {
            return Err(BifError::Badarg);
        }
        if !alive {
            return Ok(Term::atom(Atom::UNDEFINED));
        }
        let mut pairs = Vec::new();
        for item in items {
            if item == atom("registered_name") && name_of(pid).is_none() {
                ctx.ensure(3, &mut pairs)?;
                pairs.push(ctx.heap().tuple(&[item, Term::NIL]));
                continue;
            }
            let pair = info_pair_keeping(ctx, args, &mut pairs, pid, item)?;
            pairs.push(pair);
        }
        ctx.ensure(2 * pairs.len(), &mut pairs)?;
        return Ok(ctx.heap().list(&pairs));
    }
    let item = args[1].as_atom().ok_or(BifError::Badarg)?;
    if !alive {
        // Check the item still: a bad one is badarg even for a dead pid.
        if item.name() != "registered_name" && !INFO_ITEMS.contains(&item.name()) {
            let known = ["messages", "monitors", "monitored_by", "memory"];
            if !known.contains(&item.name()) {
                return Err(BifError::Badarg);
            }
        }
        return Ok(Term::atom(Atom::UNDEFINED));
    }
    if item.name() == "registered_name" && name_of(pid).is_none() {
        return Ok(Term::NIL);
    }
    info_pair(ctx, args, pid, args[1])
}

/// The group leader: act has one io server, the runtime itself; it is
/// named by a pid no process holds (printed `<0.65.0>` as escript's is).
pub(super) fn group_leader() -> Term {
    Term::pid(Pid::from_id(super::fmt::GROUP_LEADER_SLOT).id())
}

/// `group_leader()`: a process that another node spawned (or that was
/// given a leader there) names that node's group leader (`dist::gl`);
/// one given an act process as its leader names that (`io_server`).
pub fn group_leader_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let me = services(|s| s.self_pid());
    if let Some(leader) = super::io_server::leader_of(me) {
        return Ok(leader.to_term());
    }
    if crate::runtime::nodes::remote_group_leaders()
        && let Some((node, id)) = crate::runtime::nodes::group_leader_of(me)
    {
        ctx.ensure(heap::EXT_PID_WORDS, args)?;
        return Ok(ctx.heap().external_pid(node, id));
    }
    Ok(group_leader())
}

/// `group_leader(Leader, Pid)`: a leader on another node is recorded for
/// a local `Pid` (its output goes there), and so is a local process
/// (`io_server`); act's own io server takes the records out.
pub fn group_leader_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let leader = match ctx.process.heap.view(args[0]) {
        View::Pid(_) => None,
        View::ExtPid { node, id } => Some((node, id)),
        _ => return Err(BifError::Badarg),
    };
    match ctx.process.heap.view(args[1]) {
        View::Pid(_) => {
            let pid = pid_arg(args[1])?;
            if leader.is_some() || crate::runtime::nodes::remote_group_leaders() {
                crate::runtime::nodes::set_group_leader(pid, leader);
            }
            match Pid::from_term(args[0]) {
                Some(local) => super::io_server::set_leader(pid, local),
                None => {
                    super::io_server::set_leader(pid, Pid::from_id(super::fmt::GROUP_LEADER_SLOT))
                }
            }
        }
        View::ExtPid { .. } => {}
        _ => return Err(BifError::Badarg),
    }
    Ok(Term::atom(Atom::TRUE))
}

pub fn garbage_collect_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::atom(Atom::TRUE))
}

pub fn garbage_collect_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = pid_arg(args[0])?;
    Ok(Term::boolean(services(|s| s.is_alive(pid))))
}

/// `erlang:yield()`: the process gives up the rest of its time slice.
pub fn yield_0(ctx: &mut Context, _: &mut [Term]) -> BifResult {
    ctx.process.reductions = ctx.process.reductions.max(ctx.process.reduction_budget);
    Ok(Term::atom(Atom::TRUE))
}

pub fn bump_reductions_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = args[0]
        .as_small()
        .filter(|&n| n >= 0)
        .ok_or(BifError::Badarg)?;
    ctx.process.reductions = ctx.process.reductions.saturating_add(n as usize);
    Ok(Term::atom(Atom::TRUE))
}

/// `spawn_opt`: `link`, `monitor` (then `{Pid, Ref}`), and the tuning
/// options BEAM takes (`{min_heap_size, N}`, ...), which act accepts and
/// ignores, but for a `{priority, P}` it remembers (see `priority`).
fn spawn_with(
    ctx: &mut Context,
    args: &mut [Term],
    what: process::SpawnOf,
    options: Term,
) -> BifResult {
    let mut link = false;
    let mut monitor = false;
    let mut level = None;
    // BEAM's cause for an option it does not take.
    let badopt = || {
        super::set_badarg_cause(Atom::intern("spawn_opt"), Atom::intern("badopt"));
        BifError::Badarg
    };
    for option in list_elements(&ctx.process.heap, options).ok_or_else(badopt)? {
        if let Some(a) = option.as_atom() {
            match a.name() {
                "link" => link = true,
                "monitor" => monitor = true,
                _ => return Err(badopt()),
            }
            continue;
        }
        match ctx.process.heap.as_tuple(option) {
            Some(&[key, value]) => match key.as_atom().map(Atom::name) {
                Some("monitor") if list_elements(&ctx.process.heap, value).is_some() => {
                    monitor = true
                }
                Some("priority")
                    if matches!(
                        value.as_atom().map(Atom::name),
                        Some("low" | "normal" | "high" | "max")
                    ) =>
                {
                    level = value.as_atom()
                }
                Some(
                    "min_heap_size" | "min_bin_vheap_size" | "fullsweep_after" | "max_heap_size",
                ) if value.as_small().is_some_and(|n| n >= 0) || ctx.process.heap.is_map(value) => {
                }
                Some("message_queue_data")
                    if matches!(
                        value.as_atom().map(Atom::name),
                        Some("off_heap" | "on_heap")
                    ) => {}
                _ => return Err(badopt()),
            },
            _ => return Err(badopt()),
        }
    }
    let (pid, reference) = process::spawn_child(ctx, what, link, monitor)?;
    if let Some(level) = level {
        priority::set(pid, level);
    }
    match reference {
        Some(id) => {
            ctx.ensure(heap::REF_WORDS + 3, args)?;
            let r = ctx.heap().reference(id);
            Ok(ctx.heap().tuple(&[pid.to_term(), r]))
        }
        None => Ok(pid.to_term()),
    }
}

pub fn spawn_opt_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    spawn_with(ctx, args, process::SpawnOf::Fun(args[0]), args[1])
}

/// `spawn_opt(Node, Fun, Options)`: only this node exists.
pub fn spawn_opt_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[0].is_atom() {
        return Err(BifError::Badarg);
    }
    spawn_with(ctx, args, process::SpawnOf::Fun(args[1]), args[2])
}

pub fn spawn_opt_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let what = process::SpawnOf::Mfa(args[0], args[1], args[2]);
    spawn_with(ctx, args, what, args[3])
}

pub fn spawn_opt_5(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[0].is_atom() {
        return Err(BifError::Badarg);
    }
    let what = process::SpawnOf::Mfa(args[1], args[2], args[3]);
    spawn_with(ctx, args, what, args[4])
}

// ---------------------------------------------------------------------
// Pids and references as text.

fn printed(ctx: &Context, t: Term) -> String {
    super::fmt::print(&ctx.process.heap, t)
}

pub fn pid_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    pid_arg(args[0])?;
    let s = printed(ctx, args[0]);
    make_string(ctx, &s, args)
}

pub fn ref_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !ctx.process.heap.is_reference(args[0]) {
        return Err(BifError::Badarg);
    }
    let s = printed(ctx, args[0]);
    make_string(ctx, &s, args)
}

/// `list_to_ref("#Ref<0.0.0.N>")`: the reference `ref_to_list` prints so.
/// A local reference here is one number, so the other forms OTP reads
/// (`#Ref<0.A.B.C>` with A or B set, other nodes' references) are
/// `badarg`.
pub fn list_to_ref_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = super::erlang::char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let n = s
        .strip_prefix("#Ref<0.0.0.")
        .and_then(|s| s.strip_suffix('>'))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n < super::port::PORT_BASE)
        .ok_or(BifError::Badarg)?;
    ctx.ensure(4, args)?;
    Ok(ctx.heap().reference(n))
}

/// `list_to_pid("<0.N.S>")`: the process `pid_to_list` prints so (see
/// `fmt::pid_text`), or a pid no process holds.
pub fn list_to_pid_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = super::erlang::char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let inner = s
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .ok_or(BifError::Badarg)?;
    let parts: Vec<&str> = inner.split('.').collect();
    let [node, number, serial] = parts[..] else {
        return Err(BifError::Badarg);
    };
    let parse = |p: &str| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u64>().ok())
            .flatten()
    };
    let (Some(node), Some(number), Some(serial)) = (parse(node), parse(number), parse(serial))
    else {
        return Err(BifError::Badarg);
    };
    if node != 0 {
        return Err(BifError::Badarg);
    }
    let Some(serial) = super::fmt::serial_of_printed(number, serial) else {
        return Ok(group_leader());
    };
    let live = services(|s| s.processes())
        .into_iter()
        .find(|p| u64::from(p.generation()) == serial);
    // A dead or never-spawned process: its serial in a slot no process uses.
    let nobody = (serial << 32) | (super::fmt::GROUP_LEADER_SLOT - 1);
    Ok(live.unwrap_or_else(|| Pid::from_id(nobody)).to_term())
}

// ---------------------------------------------------------------------
// The system.

/// `erlang:system_info(Item)` for the items programs ask about.
pub fn system_info(ctx: &mut Context, args: &mut [Term], item: Atom) -> BifResult {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let schedulers = services(|s| s.schedulers()) as i64;
    let value = match item.name() {
        "process_count" => Term::small(services(|s| s.process_count()) as i64),
        "schedulers" | "schedulers_online" => Term::small(schedulers),
        "logical_processors" | "logical_processors_available" | "logical_processors_online" => {
            Term::small(cores)
        }
        "dirty_cpu_schedulers" | "dirty_cpu_schedulers_online" => Term::small(schedulers),
        "dirty_io_schedulers" => Term::small(10),
        "thread_pool_size" => Term::small(1),
        "wordsize" => Term::small(8),
        "process_limit" => Term::small(1_048_576),
        "atom_limit" => Term::small(1_048_576),
        "port_limit" | "port_count" => Term::small(if item.name() == "port_count" {
            0
        } else {
            65536
        }),
        "atom_count" => Term::small(Atom::count() as i64),
        "ets_limit" => Term::small(8192),
        "threads" | "smp_support" => Term::atom(Atom::TRUE),
        "otp_release" => return make_string(ctx, "25", args),
        "version" => return make_string(ctx, "13.1.5", args),
        "system_version" => {
            let text = format!(
                "Erlang/OTP 25 [erts-13.1.5] [act] [64-bit] [smp:{schedulers}:{schedulers}]\n"
            );
            return make_string(ctx, &text, args);
        }
        "machine" => return make_string(ctx, "BEAM", args),
        "system_architecture" => {
            let arch = format!("{}-pc-linux-gnu", std::env::consts::ARCH);
            return make_string(ctx, &arch, args);
        }
        "os_type" => {
            ctx.ensure(3, args)?;
            return Ok(ctx.heap().tuple(&[atom("unix"), atom("linux")]));
        }
        "endian" => atom("little"),
        "debug_compiled" => Term::atom(Atom::FALSE),
        "kernel_poll" => Term::atom(Atom::TRUE),
        "scheduler_id" => Term::small(1),
        "start_time" => Term::small(0),
        // What OTP 25's escript answers, for the items that describe the
        // emulator rather than anything act can vary.
        "creation" | "trace_control_word" => Term::small(0),
        "compat_rel" => Term::small(25),
        "outstanding_system_requests_limit" => Term::small(4),
        "heap_type" => atom("private"),
        "time_warp_mode" => atom("no_time_warp"),
        "build_type" | "emu_type" => atom("opt"),
        "emu_flavor" => atom("jit"),
        "multi_scheduling" | "tolerant_timeofday" => atom("enabled"),
        "scheduler_bind_type" => atom("unbound"),
        "modified_timing_level" => Term::atom(Atom::UNDEFINED),
        "update_cpu_info" => atom("unchanged"),
        "dist_ctrl" => Term::NIL,
        "dist_buf_busy_limit" => Term::small(crate::runtime::nodes::DIST_BUF_BUSY_LIMIT as i64),
        "nif_version" => return make_string(ctx, "2.16", args),
        "driver_version" => return make_string(ctx, "3.3", args),
        "min_heap_size" | "min_bin_vheap_size" | "fullsweep_after" | "sequential_tracer" => {
            ctx.ensure(3, args)?;
            let value = gc_setting(item.name());
            return Ok(ctx.heap().tuple(&[Term::atom(item), value]));
        }
        "garbage_collection" => {
            const KEYS: [&str; 4] = [
                "max_heap_size",
                "min_bin_vheap_size",
                "min_heap_size",
                "fullsweep_after",
            ];
            ctx.ensure(5 * KEYS.len(), args)?;
            let heap = ctx.heap();
            let pairs: Vec<Term> = KEYS
                .iter()
                .map(|&k| heap.tuple(&[atom(k), gc_setting(k)]))
                .collect();
            return Ok(heap.list(&pairs));
        }
        "c_compiler_used" => {
            ctx.ensure(7, args)?;
            let heap = ctx.heap();
            let version = heap.tuple(&[Term::small(12), Term::small(2), Term::small(0)]);
            return Ok(heap.tuple(&[atom("gnuc"), version]));
        }
        "dist" => {
            let node = crate::term::node::this_node().name;
            let text = format!("=node:'{}'\n=no_distribution\n", node.name());
            ctx.ensure(crate::heap::words_for_binary(text.len()), args)?;
            return Ok(ctx.heap().binary(text.as_bytes()));
        }
        _ => return Err(BifError::Badarg),
    };
    Ok(value)
}

/// BEAM's default of a garbage collection setting (an immediate).
fn gc_setting(name: &str) -> Term {
    match name {
        "min_heap_size" => Term::small(233),
        "min_bin_vheap_size" => Term::small(46422),
        "fullsweep_after" => Term::small(65535),
        "sequential_tracer" => Term::FALSE,
        _ => Term::small(0),
    }
}

/// The CPU time of the whole VM in nanoseconds (the virtual clock under
/// `--deterministic`).
fn cpu_ns() -> u64 {
    if crate::runtime::processes::deterministic() {
        return services(|s| s.now_ns());
    }
    // SAFETY: `ts` is plain data the call fills.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return services(|s| s.now_ns());
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `{Total, SinceLastCall}` with the last total kept in `last` (the "since
/// last call" of BEAM's statistics is VM-wide, not per process).
fn since_last(last: &std::sync::atomic::AtomicU64, total: u64) -> (u64, u64) {
    let before = last.swap(total, Ordering::Relaxed);
    (total, total.saturating_sub(before))
}

/// `erlang:statistics(Item)`: `runtime` (CPU milliseconds), `wall_clock`,
/// `reductions` as `{Total, SinceLast}`, and the queue and counter items
/// programs print (act keeps no such counters: they read as zero).
pub fn statistics(ctx: &mut Context, args: &mut [Term], what: Atom) -> BifResult {
    use std::sync::atomic::AtomicU64;
    static RUNTIME: AtomicU64 = AtomicU64::new(0);
    static WALL: AtomicU64 = AtomicU64::new(0);
    static REDUCTIONS: AtomicU64 = AtomicU64::new(0);
    let (total, since) = match what.name() {
        "runtime" => since_last(&RUNTIME, cpu_ns() / 1_000_000),
        "wall_clock" => since_last(&WALL, services(|s| s.now_ns()) / 1_000_000),
        "reductions" | "exact_reductions" => {
            since_last(&REDUCTIONS, services(|s| s.total_reductions()))
        }
        "run_queue" | "total_run_queue_lengths" | "total_active_tasks" => {
            return Ok(Term::small(0));
        }
        "context_switches" => (0, 0),
        "garbage_collection" => {
            ctx.ensure(4, args)?;
            let zero = Term::small(0);
            return Ok(ctx.heap().tuple(&[zero, zero, zero]));
        }
        "io" => {
            ctx.ensure(9, args)?;
            let heap = ctx.heap();
            let input = heap.tuple(&[atom("input"), Term::small(0)]);
            let output = heap.tuple(&[atom("output"), Term::small(0)]);
            return Ok(heap.tuple(&[input, output]));
        }
        _ => return Err(BifError::Badarg),
    };
    ctx.ensure(2 * INT_WORDS + 3, args)?;
    let total = ctx.heap().int(total.min(i64::MAX as u64 >> 4) as i64);
    let since = ctx.heap().int(since.min(i64::MAX as u64 >> 4) as i64);
    Ok(ctx.heap().tuple(&[total, since]))
}

/// Process priorities. act schedules every process alike, so a priority
/// is only remembered, for `process_flag/2` (which answers the old one)
/// and `process_info/2`; processes at `normal` are not recorded.
mod priority {
    use crate::sched::Pid;
    use crate::term::Atom;
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Mutex, MutexGuard, OnceLock};

    /// Set once a process has left `normal`.
    static ANY: AtomicBool = AtomicBool::new(false);

    fn table() -> MutexGuard<'static, HashMap<Pid, Atom>> {
        static T: OnceLock<Mutex<HashMap<Pid, Atom>>> = OnceLock::new();
        T.get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// `pid`'s priority (`low`, `normal`, `high` or `max`).
    pub fn of(pid: Pid) -> Atom {
        let normal = || Atom::intern("normal");
        if !ANY.load(Ordering::Relaxed) {
            return normal();
        }
        table().get(&pid).copied().unwrap_or_else(normal)
    }

    /// Sets `pid`'s priority; the old one.
    pub fn set(pid: Pid, priority: Atom) -> Atom {
        let old = of(pid);
        if priority.name() == "normal" {
            if ANY.load(Ordering::Relaxed) {
                table().remove(&pid);
            }
        } else {
            ANY.store(true, Ordering::SeqCst);
            table().insert(pid, priority);
        }
        old
    }

    /// `pid` ended.
    pub fn exited(pid: Pid) {
        if ANY.load(Ordering::Relaxed) {
            table().remove(&pid);
        }
    }
}

pub use priority::exited as priority_exited;

/// `process_flag/2` for the flags besides `trap_exit`: checked and
/// accepted. act has one heap policy, so for those the old value
/// returned is always BEAM's default; a priority is remembered (see
/// `priority`).
pub fn process_flag(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let flag = args[0].as_atom().ok_or(BifError::Badarg)?;
    let value = args[1];
    let is = |names: &[&str]| value.as_atom().is_some_and(|a| names.contains(&a.name()));
    let size = value.as_small().is_some_and(|n| n >= 0);
    Ok(match flag.name() {
        "priority" if is(&["low", "normal", "high", "max"]) => {
            let me = services(|s| s.self_pid());
            Term::atom(priority::set(me, value.as_atom().ok_or(BifError::Badarg)?))
        }
        "min_heap_size" if size => Term::small(233),
        "min_bin_vheap_size" if size => Term::small(46422),
        "message_queue_data" if is(&["on_heap", "off_heap"]) => atom("on_heap"),
        "sensitive" if value.as_bool().is_some() => Term::atom(Atom::FALSE),
        "save_calls" if value.as_small().is_some_and(|n| (0..=10_000).contains(&n)) => {
            Term::small(0)
        }
        "fullsweep_after" if size => Term::small(65535),
        "max_heap_size" if size || ctx.process.heap.is_map(value) => {
            ctx.ensure(heap::words_for_map(3), args)?;
            let zero = Term::small(0);
            let t = Term::atom(Atom::TRUE);
            ctx.heap().map(&[
                (atom("error_logger"), t),
                (atom("kill"), t),
                (atom("size"), zero),
            ])
        }
        "priority" | "min_heap_size" | "min_bin_vheap_size" | "message_queue_data"
        | "sensitive" | "save_calls" | "fullsweep_after" | "max_heap_size" => {
            return Err(BifError::Badarg);
        }
        // A flag BEAM does not know: its cause is `badopt`.
        _ => {
            super::set_badarg_cause(Atom::intern("process_flag"), Atom::intern("badopt"));
            return Err(BifError::Badarg);
        }
    })
}

/// `erl_error:'$format'(Class, Reason, Stack, Column)`: the text of
/// `erl_error:format_exception/4` for a trace already trimmed, as
/// escript prints an uncaught exception (without its last newline).
/// Lines after the first are indented to `Column` (1 is no indent).
pub fn format_exception_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if args[0].as_atom().and_then(Class::from_atom).is_none() {
        return Err(BifError::Badarg);
    }
    let column = match args[3].as_small() {
        Some(c) if (1..=1000).contains(&c) => c as usize,
        _ => return Err(BifError::Badarg),
    };
    let heap = &ctx.process.heap;
    let mut text =
        crate::runtime::explain::format_exception(heap, args[0], args[1], args[2], column - 1);
    if text.ends_with('\n') {
        text.pop();
    }
    ctx.ensure(2 * text.chars().count(), args)?;
    Ok(ctx.heap().string(&text))
}
