//! What `process_info` may learn about another process: a copy of its
//! state taken while it does not run (`Services::inspect`), with the
//! terms (messages, dictionary) copied out of its heap into buffers.

use crate::heap::MessageBuffer;
use crate::sched::Pid;
use crate::term::Atom;

/// Which costly parts to copy (the rest is a few words each).
#[derive(Clone, Copy, Default)]
pub struct Want {
    pub messages: bool,
    pub dictionary: bool,
    pub stacktrace: bool,
}

/// Another process's state, read while it was waiting or queued.
#[derive(Default)]
pub struct Snapshot {
    /// Queued to run (`runnable`) rather than waiting in a receive.
    pub runnable: bool,
    /// Suspended on a busy connection to another node.
    pub suspended: bool,
    /// Its private queue, then the messages still in its inbox.
    pub messages: Vec<MessageBuffer>,
    pub message_queue_len: usize,
    /// `{Key, Value}` pairs, as `get()` returns them.
    pub dictionary: Vec<(MessageBuffer, MessageBuffer)>,
    pub links: Vec<Pid>,
    /// (reference, target) of the monitors it holds.
    pub monitors: Vec<(u64, Pid)>,
    pub monitored_by: Vec<Pid>,
    pub trap_exit: bool,
    pub heap_words: usize,
    pub stack_words: usize,
    pub reductions: u64,
    pub current_function: Option<(Atom, Atom, u32)>,
    pub initial_call: Option<(Atom, Atom, u32)>,
    /// Active `try`s and `catch`es (`Process::catch_level`).
    pub catch_level: usize,
    /// Its frames, when `Want::stacktrace` asked for them.
    pub stacktrace: Vec<crate::interp::ShownFrame>,
}

use super::process::services;
use super::{BifResult, Context};
use crate::term::Term;

/// Words of a boxed integer.
const INT_WORDS: usize = 4;

fn pids(ctx: &mut Context, args: &mut [Term], pids: &[Pid]) -> BifResult {
    ctx.ensure(2 * pids.len(), args)?;
    let items: Vec<Term> = pids.iter().map(|p| p.to_term()).collect();
    Ok(ctx.heap().list(&items))
}

/// The value of `process_info` item `item` of another process, or `None`
/// when its state cannot be read now (it runs on another scheduler) or
/// the item needs none of it: the caller answers those.
pub fn other_value(
    ctx: &mut Context,
    args: &mut [Term],
    pid: Pid,
    item: &str,
) -> Option<BifResult> {
    let want = Want {
        messages: item == "messages",
        dictionary: item == "dictionary",
        stacktrace: item == "current_stacktrace",
    };
    let known = [
        "status",
        "message_queue_len",
        "messages",
        "links",
        "monitors",
        "monitored_by",
        "dictionary",
        "trap_exit",
        "heap_size",
        "total_heap_size",
        "stack_size",
        "memory",
        "reductions",
        "current_function",
        "initial_call",
        "catchlevel",
        "current_stacktrace",
    ];
    if !known.contains(&item) {
        return None;
    }
    let snap = services(|s| s.inspect(pid, want))?;
    Some(value_of(ctx, args, snap, item))
}

fn value_of(ctx: &mut Context, args: &mut [Term], snap: Snapshot, item: &str) -> BifResult {
    let atom = |s: &str| Term::atom(Atom::intern(s));
    Ok(match item {
        "status" => atom(if snap.suspended {
            "suspended"
        } else if snap.runnable {
            "runnable"
        } else {
            "waiting"
        }),
        "message_queue_len" => Term::small(snap.message_queue_len as i64),
        "messages" => {
            let words: usize = snap.messages.iter().map(|m| m.words() + 2).sum();
            ctx.ensure(words, args)?;
            let heap = ctx.heap();
            let mut list = Term::NIL;
            for m in snap.messages.iter().rev() {
                let t = heap.append_buffer(m);
                list = heap.cons(t, list);
            }
            list
        }
        "dictionary" => {
            let words: usize = snap
                .dictionary
                .iter()
                .map(|(k, v)| k.words() + v.words() + 5)
                .sum();
            ctx.ensure(words, args)?;
            let heap = ctx.heap();
            let mut list = Term::NIL;
            for (k, v) in snap.dictionary.iter().rev() {
                let k = heap.append_buffer(k);
                let v = heap.append_buffer(v);
                let pair = heap.tuple(&[k, v]);
                list = heap.cons(pair, list);
            }
            list
        }
        "links" => pids(ctx, args, &snap.links)?,
        "monitored_by" => pids(ctx, args, &snap.monitored_by)?,
        "monitors" => {
            ctx.ensure(5 * snap.monitors.len(), args)?;
            let heap = ctx.heap();
            let items: Vec<Term> = snap
                .monitors
                .iter()
                .map(|(_, target)| heap.tuple(&[Term::atom(Atom::PROCESS), target.to_term()]))
                .collect();
            heap.list(&items)
        }
        "trap_exit" => Term::boolean(snap.trap_exit),
        "heap_size" | "total_heap_size" => Term::small(snap.heap_words as i64),
        "stack_size" => Term::small(snap.stack_words as i64),
        "memory" => Term::small(8 * snap.heap_words as i64 + 1000),
        "reductions" => {
            ctx.ensure(INT_WORDS, args)?;
            ctx.heap().int(snap.reductions.min(i64::MAX as u64) as i64)
        }
        "current_function" => match snap.current_function {
            Some((m, f, a)) => {
                ctx.ensure(4, args)?;
                ctx.heap()
                    .tuple(&[Term::atom(m), Term::atom(f), Term::small(a as i64)])
            }
            None => Term::atom(Atom::UNDEFINED),
        },
        "initial_call" => match snap.initial_call {
            Some((m, f, a)) => {
                ctx.ensure(4, args)?;
                ctx.heap()
                    .tuple(&[Term::atom(m), Term::atom(f), Term::small(a as i64)])
            }
            None => Term::atom(Atom::UNDEFINED),
        },
        "catchlevel" => Term::small(snap.catch_level as i64),
        "current_stacktrace" => stacktrace(ctx, args, &snap.stacktrace)?,
        _ => Term::atom(Atom::UNDEFINED),
    })
}

/// The list `process_info(P, current_stacktrace)` gives for `frames`:
/// `{M, F, Arity, Location}` tuples.
pub fn stacktrace(
    ctx: &mut Context,
    args: &mut [Term],
    frames: &[crate::interp::ShownFrame],
) -> BifResult {
    let words: usize = frames
        .iter()
        .map(|(.., at)| 5 + 2 + at.as_ref().map_or(0, |(f, _)| 2 * f.chars().count() + 10))
        .sum();
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    for (m, f, arity, at) in frames.iter().rev() {
        let location = match at {
            Some((file, line)) => {
                let file = heap.string(file);
                let file = heap.tuple(&[Term::atom(Atom::FILE), file]);
                let line = heap.tuple(&[Term::atom(Atom::LINE), Term::small(*line as i64)]);
                heap.list(&[file, line])
            }
            None => Term::NIL,
        };
        let entry = heap.tuple(&[
            Term::atom(*m),
            Term::atom(*f),
            Term::small(*arity as i64),
            location,
        ]);
        list = heap.cons(entry, list);
    }
    Ok(list)
}
