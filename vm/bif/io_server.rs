//! Io servers that are act processes: a group leader set with
//! `group_leader(Pid, Self)`, or a pid given to `io:format/3` and the
//! other output functions as the device.
//!
//! Output to such a process follows Erlang's io protocol: the writer
//! monitors the server, sends `{io_request, Self, Ref, Request}` with the
//! monitor's reference as the reply tag, and waits for `{io_reply, Ref,
//! Reply}` (or the server's 'DOWN'). The request is the one OTP's `io`
//! sends: `{put_chars, unicode, Chars}` for `put_chars` and `nl`, and
//! `{put_chars, unicode, io_lib, F, Args}` for `format` and `write`, so a
//! server formats the text itself. The wait happens outside the BIF: it
//! records the reference (`Services::await_io_reply`) and ends the time
//! slice, and the runtime keeps the process from running again until the
//! reply or the 'DOWN' is in its mailbox, which it takes out
//! (`runtime::processes`). The reply's value is not returned: the output
//! functions answer `ok`.
//!
//! The group leaders themselves: act's own io server is a pid no process
//! holds (`fmt::GROUP_LEADER_SLOT`). Only processes whose leader is an
//! act process are recorded here, by pid; their children inherit it, and
//! a process's entry goes when it exits.

use super::{BifError, BifResult, Context};
use crate::heap;
use crate::sched::Pid;
use crate::term::{Atom, Term};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Set once some process has an act process as its group leader.
static ANY: AtomicBool = AtomicBool::new(false);

fn leaders() -> MutexGuard<'static, HashMap<Pid, Pid>> {
    static T: OnceLock<Mutex<HashMap<Pid, Pid>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `pid`'s group leader when that is an act process.
pub fn leader_of(pid: Pid) -> Option<Pid> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    leaders().get(&pid).copied()
}

/// `group_leader(Leader, Pid)` with a local `leader`: act's own io server
/// takes the entry out.
pub fn set_leader(pid: Pid, leader: Pid) {
    if leader == Pid::from_id(super::fmt::GROUP_LEADER_SLOT) {
        if ANY.load(Ordering::Relaxed) {
            leaders().remove(&pid);
        }
        return;
    }
    ANY.store(true, Ordering::SeqCst);
    leaders().insert(pid, leader);
}

/// A process spawned by `parent` gets its group leader.
pub fn inherit(parent: Pid, child: Pid) {
    if let Some(leader) = leader_of(parent) {
        leaders().insert(child, leader);
    }
}

/// `pid` ended.
pub fn exited(pid: Pid) {
    if ANY.load(Ordering::Relaxed) {
        leaders().remove(&pid);
    }
}

/// The act process that output to `device` by the running process goes
/// to, if any: its group leader for `standard_io`, or `device` itself
/// when that is a live process that is not an open file.
pub fn server_for(ctx: &Context, device: Term) -> Option<Pid> {
    if device.as_atom() == Some(Atom::STANDARD_IO) {
        if !ANY.load(Ordering::Relaxed) {
            return None;
        }
        return leader_of(super::process::services(|s| s.self_pid()));
    }
    let pid = Pid::from_term(device)?;
    if device == super::extras::group_leader()
        || super::file::lookup(&ctx.process.heap, device).is_some()
    {
        return None;
    }
    super::process::services(|s| s.is_alive(pid)).then_some(pid)
}

/// What an output function asks the server for, naming its arguments
/// by position (they are the roots of the allocation here, so they are
/// read after it).
pub enum Request {
    /// `{put_chars, unicode, Binary}`, the chardata argument as UTF-8
    /// (`badarg` if it is not chardata); no argument: a newline, `"\n"`.
    Chars(Option<usize>),
    /// `{put_chars, unicode, io_lib, format, [Format, Args]}` (no
    /// argument for Args: `[]`).
    Format(usize, Option<usize>),
    /// `{put_chars, unicode, io_lib, write, [Term]}`.
    Write(usize),
    /// `{put_chars, latin1, Binary}` (`file:write/2`): the argument is
    /// the binary of the bytes.
    Latin1(usize),
}

/// Sends `request` to `server` and has the caller wait for its reply.
pub fn send(ctx: &mut Context, server: Pid, request: Request, args: &mut [Term]) -> BifResult {
    let text = match request {
        Request::Chars(Some(i)) => {
            let chars = super::io::unicode_chars(&ctx.process.heap, args[i]);
            Some(
                chars
                    .ok_or(BifError::Badarg)?
                    .into_iter()
                    .collect::<String>(),
            )
        }
        _ => None,
    };
    let text_words = text.as_ref().map_or(0, |t| heap::words_for_binary(t.len()));
    // A reference, the request (at most 6 + 4 words) and its envelope.
    ctx.ensure(heap::REF_WORDS + 10 + 5 + text_words, args)?;
    let (reference, me) = super::process::services(|s| (s.monitor(server), s.self_pid()));
    let atom = |name: &str| Term::atom(Atom::intern(name));
    let heap = ctx.heap();
    let tag = heap.reference(reference);
    let apply = |heap: &mut heap::Heap, function: &str, list: Term| {
        heap.tuple(&[
            atom("put_chars"),
            atom("unicode"),
            atom("io_lib"),
            atom(function),
            list,
        ])
    };
    let body = match request {
        Request::Chars(chars) => {
            let chars = match (chars, &text) {
                (Some(_), Some(text)) => heap.binary(text.as_bytes()),
                _ => heap.cons(Term::small(10), Term::NIL),
            };
            heap.tuple(&[atom("put_chars"), atom("unicode"), chars])
        }
        Request::Format(format, list) => {
            let list = list.map_or(Term::NIL, |i| args[i]);
            let list = heap.cons(list, Term::NIL);
            let list = heap.cons(args[format], list);
            apply(heap, "format", list)
        }
        Request::Write(term) => {
            let list = heap.cons(args[term], Term::NIL);
            apply(heap, "write", list)
        }
        Request::Latin1(bytes) => heap.tuple(&[atom("put_chars"), atom("latin1"), args[bytes]]),
    };
    let message = heap.tuple(&[atom("io_request"), Term::pid(me.id()), tag, body]);
    let buffer = heap::MessageBuffer::for_send(&ctx.process.heap, message)
        .map_err(|_| BifError::SystemLimit)?;
    super::process::services(|s| {
        s.send(server, buffer);
        s.await_io_reply(reference);
    });
    let p = &mut ctx.process;
    p.reductions = p.reductions.max(p.reduction_budget);
    Ok(Term::OK)
}
