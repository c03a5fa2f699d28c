//! The shell's door into the runtime: BIFs through which the shell
//! server process (act code in `repl`) takes requests from the line
//! editor's thread and hands back results.
//!
//! The editor runs on its own thread, outside the schedulers; it cannot
//! send signals to a process. Instead it queues requests here, and the
//! server polls them with `'$shell':take()` between short `receive ...
//! after` waits, so it never blocks a scheduler thread. Results go back
//! over a channel. Ctrl-C raises `INTERRUPTED`, which the server polls
//! while an evaluation runs (`'$shell':interrupted()`).

use super::{BifError, BifResult, Context};
use crate::heap::MessageBuffer;
use crate::term::{Atom, Term};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

/// Set by the SIGINT handler; taken by `interrupted/0`.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

struct Door {
    /// Pushed by the editor's thread, popped by the server process.
    requests: Mutex<VecDeque<MessageBuffer>>,
    /// Set by the editor's thread (`open`); used by the server process
    /// and, once, by the runtime's thread when the runtime ends.
    replies: Mutex<Option<Sender<MessageBuffer>>>,
}

fn door() -> &'static Door {
    static DOOR: OnceLock<Door> = OnceLock::new();
    DOOR.get_or_init(|| Door {
        requests: Mutex::new(VecDeque::new()),
        replies: Mutex::new(None),
    })
}

/// Opens the door: results of `reply/1` arrive on the returned receiver
/// (a new call replaces the old channel).
pub fn open() -> Receiver<MessageBuffer> {
    let (tx, rx) = channel();
    *door().replies.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    rx
}

/// Queues a request for the server.
pub fn request(message: MessageBuffer) {
    door()
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push_back(message);
}

/// `'$shell':take()`: the next request, or `none`.
pub fn take_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let next = door()
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pop_front();
    let Some(buffer) = next else {
        return Ok(Term::atom(Atom::intern("none")));
    };
    let Some(heap) = buffer.heap() else {
        return Ok(buffer.term());
    };
    let words = crate::heap::size_of(heap, buffer.term()).map_err(|_| BifError::SystemLimit)?;
    ctx.ensure(words, args)?;
    Ok(crate::heap::copy_term(heap, buffer.term(), ctx.heap()))
}

/// `'$shell':reply(Term)`: hands `Term` to the editor's thread.
pub fn reply_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let buffer =
        MessageBuffer::copy_from(&ctx.process.heap, args[0]).map_err(|_| BifError::SystemLimit)?;
    if let Some(tx) = door()
        .replies
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        let _ = tx.send(buffer);
    }
    Ok(Term::atom(Atom::OK))
}

/// `'$shell':interrupted()`: true once after each Ctrl-C.
pub fn interrupted_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    let was = INTERRUPTED.swap(false, Ordering::SeqCst);
    Ok(Term::atom(if was { Atom::TRUE } else { Atom::FALSE }))
}

/// Tells the editor's thread that the runtime ended with `status` (an
/// integer reply; every other reply is an atom or a tuple).
pub fn finish(status: i32) {
    let term = Term::small(i64::from(status));
    if let Some(tx) = door()
        .replies
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        let _ = tx.send(MessageBuffer::immediate(term));
    }
}
