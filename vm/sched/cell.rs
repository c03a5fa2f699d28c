//! The process cell: the shared half of a process (state word, inbox, pid)
//! beside its owned half (the body `B`), behind one `Arc`.
//!
//! # Invariant
//!
//! The body and the consumer end of the inbox are touched only through a
//! `RunRight` (or the `ExitRight` it becomes), and a `RunRight` exists only
//! for the one scheduler whose `begin_run` turned the state word runnable ->
//! running (see `state.rs`: that transition succeeds for one taker only).
//! The right ends with the transition out of running (`try_wait`,
//! `yield_now`) or becomes an `ExitRight` (`exit`, terminal, so no one can
//! take the right again). Hence at most one `&mut B` exists at a time, and
//! it is used by the thread that holds the right.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use super::ProcessBody;
use super::inbox::Inbox;
use super::pid::Pid;
use super::signal::Signal;
use super::state::{State, StateWord, WaitAttempt};

/// What an inspection lends its reader to visit the signals waiting in
/// the inbox (see `ProcessCell::inspect`).
pub type Peek<'a, M> = &'a mut dyn FnMut(&mut dyn FnMut(&Signal<M>));

/// A process: shared fields first (read by any thread), then the body.
pub struct ProcessCell<B: ProcessBody> {
    /// The state word. Any thread notifies; the run right holder transitions.
    state: StateWord,
    /// The tag of the timer the process waits on, 0 for none. Written only by
    /// the run right holder; read by the scheduler whose timer fires, which
    /// drops the timeout if the tag has changed (lazy cancel).
    timer_tag: AtomicU64,
    /// Immutable.
    pid: Pid,
    /// Pushed by any sender; popped only by the run right holder.
    inbox: Inbox<Signal<B::Message>>,
    /// The owned half. Only through a `RunRight` (see the module invariant).
    body: UnsafeCell<B>,
}

// SAFETY: the body moves between scheduler threads (B: Send) but is used by
// one at a time (the module invariant); the rest is atomics and the inbox.
unsafe impl<B: ProcessBody> Sync for ProcessCell<B> {}
// SAFETY: all fields are Send when B and its messages are.
unsafe impl<B: ProcessBody> Send for ProcessCell<B> {}

impl<B: ProcessBody> ProcessCell<B> {
    /// A runnable cell; its creator must queue it once.
    pub fn new(pid: Pid, body: B) -> ProcessCell<B> {
        ProcessCell {
            state: StateWord::new_runnable(),
            timer_tag: AtomicU64::new(0),
            pid,
            inbox: Inbox::new(),
            body: UnsafeCell::new(body),
        }
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// A snapshot of the state.
    pub fn state(&self) -> State {
        self.state.load()
    }

    /// Delivers a signal: push, then notify. Returns what the notification
    /// did; on `Notified::Woken` the caller must queue the process.
    pub fn deliver(&self, signal: Signal<B::Message>) -> super::state::Notified {
        self.inbox.push(signal);
        self.state.notify()
    }

    /// The current timer tag (0: none).
    pub fn timer_tag(&self) -> u64 {
        self.timer_tag.load(Ordering::Acquire)
    }

    /// Takes the run right of a queued process; `None` if it is not
    /// runnable (then another scheduler has it, or it has exited).
    pub fn begin_run(&self) -> Option<RunRight<'_, B>> {
        self.state.begin_run().then_some(RunRight { cell: self })
    }

    /// Reads the body and the waiting signals of a process that is not
    /// running (waiting or queued), for another process's `process_info`;
    /// `read` is told whether it waits in a receive (or is queued).
    /// `None` if it runs, has exited, or another inspection holds it.
    /// The second value says the caller must queue the process: a signal
    /// woke it while it was held.
    pub fn inspect<R>(
        &self,
        read: impl FnOnce(&B, bool, Peek<'_, B::Message>) -> R,
    ) -> Option<(R, bool)> {
        let was_waiting = self.state.begin_inspect()?;
        // SAFETY: `begin_inspect` took the run right (state RUNNING, which
        // no scheduler takes), so no one else touches the body or pops the
        // inbox until `end_inspect`; we only read.
        let body = unsafe { &*self.body.get() };
        let mut peek = |visit: &mut dyn FnMut(&Signal<B::Message>)| {
            // SAFETY: as above, we are the one consumer for now.
            unsafe { self.inbox.peek(|s| visit(s)) }
        };
        let result = read(body, was_waiting, &mut peek);
        let queue = self.state.end_inspect(was_waiting);
        Some((result, queue))
    }

    /// Whether an inspection holds the run right for a moment.
    pub fn inspected(&self) -> bool {
        self.state.inspected()
    }
}

/// The right to run a process: its body and its inbox's consumer end.
pub struct RunRight<'a, B: ProcessBody> {
    cell: &'a ProcessCell<B>,
}

/// The consumer end of an inbox, lent by a `RunRight` or `ExitRight`.
pub struct InboxReader<'a, B: ProcessBody> {
    cell: &'a ProcessCell<B>,
}

impl<B: ProcessBody> InboxReader<'_, B> {
    /// The oldest signal in the inbox.
    pub fn take(&mut self) -> Option<Signal<B::Message>> {
        // SAFETY: a reader exists only while its lender holds the run right,
        // and it borrows the lender mutably, so this is the one consumer.
        unsafe { self.cell.inbox.pop() }
    }

    /// The oldest signal, left in its node (see `Inbox::pop_in_place`).
    #[inline]
    pub fn take_in_place(&mut self) -> Option<super::inbox::Popped<Signal<B::Message>>> {
        // SAFETY: as in `take`.
        unsafe { self.cell.inbox.pop_in_place() }
    }

    /// Whether no signal is waiting in the inbox.
    pub fn is_empty(&self) -> bool {
        // SAFETY: as in `take`.
        unsafe { self.cell.inbox.is_empty() }
    }

    /// Sets (non-zero) or clears (0) the tag of the timer the process waits on.
    pub fn set_timer_tag(&mut self, tag: u64) {
        self.cell.timer_tag.store(tag, Ordering::Release);
    }

    pub fn pid(&self) -> Pid {
        self.cell.pid
    }
}

impl<'a, B: ProcessBody> RunRight<'a, B> {
    /// The body and the inbox reader, for one run step.
    pub fn split(&mut self) -> (&mut B, InboxReader<'_, B>) {
        // SAFETY: we hold the run right (module invariant), and `&mut self`
        // keeps this the only borrow of the body.
        let body = unsafe { &mut *self.cell.body.get() };
        (body, InboxReader { cell: self.cell })
    }

    /// Tries to sleep after a receive found nothing; `Err` gives the right
    /// back when a signal arrived meanwhile (rescan).
    pub fn try_wait(self) -> Result<(), RunRight<'a, B>> {
        match self.cell.state.try_wait() {
            WaitAttempt::Sleeping => Ok(()),
            WaitAttempt::Rescan => Err(self),
        }
    }

    /// Gives up the processor; the caller must queue the process again.
    pub fn yield_now(self) {
        self.cell.state.yield_now();
    }

    /// The process exits. The right remains, to run the exit hook.
    pub fn exit(self) -> ExitRight<'a, B> {
        self.cell.state.exit();
        ExitRight { cell: self.cell }
    }
}

/// The owned half of an exited process, for its exit hook.
pub struct ExitRight<'a, B: ProcessBody> {
    cell: &'a ProcessCell<B>,
}

impl<B: ProcessBody> ExitRight<'_, B> {
    pub fn split(&mut self) -> (&mut B, InboxReader<'_, B>) {
        // SAFETY: exiting is terminal and only the holder of the run right
        // made it so; no one else can take the right again.
        let body = unsafe { &mut *self.cell.body.get() };
        (body, InboxReader { cell: self.cell })
    }
}
