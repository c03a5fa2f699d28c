//! Timers that deliver a message (`erlang:send_after`, `start_timer`): the
//! pending messages by timer id, shared by all schedulers so any process can
//! cancel or read any timer; each scheduler's heap of (deadline, id) says
//! when to look (`Local::send_heap`).
//!
//! A timer lives in the map until it fires or is cancelled: firing takes it
//! out first, so a cancel racing the firing either gets the time left (and
//! the message is never sent) or gets nothing (and the message is on its
//! way), never both.

use std::collections::HashMap;
use std::sync::Mutex;

use super::pid::Pid;
use crate::term::atom::Atom;

/// Where a timer's message goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Destination {
    Pid(Pid),
    /// A registered name, looked up when the timer fires (none: dropped).
    Name(Atom),
}

pub struct Pending<M> {
    pub deadline: u64,
    pub to: Destination,
    pub message: M,
}

pub struct SendTimers<M> {
    pending: Mutex<HashMap<u64, Pending<M>>>,
}

impl<M> Default for SendTimers<M> {
    fn default() -> Self {
        SendTimers {
            pending: Mutex::new(HashMap::new()),
        }
    }
}

impl<M> SendTimers<M> {
    pub fn insert(&self, id: u64, pending: Pending<M>) {
        self.lock().insert(id, pending);
    }

    /// Takes the timer out (it fired or is cancelled).
    pub fn take(&self, id: u64) -> Option<Pending<M>> {
        self.lock().remove(&id)
    }

    /// The deadline and destination of a pending timer.
    pub fn peek(&self, id: u64) -> Option<(u64, Destination)> {
        self.lock().get(&id).map(|p| (p.deadline, p.to))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending<M>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}
