//! The door for signals from threads that are not schedulers (the
//! distribution's connection readers): they queue here, and schedulers
//! deliver them from their loop.
//!
//! Invariants: a thread outside never touches the process table or a run
//! queue; it pushes `(target, signal)` under one lock and, when the queue
//! turns non-empty, unparks the first scheduler (the others look at the
//! queue at the top of their loops and before they park). One scheduler at a time
//! drains the whole queue in push order, so one outside thread's signals
//! to one receiver arrive in the order pushed (a connection's message
//! order holds). A
//! scheduler looks at `pending` at the top of its loop and before it
//! parks; a push that races the park finds the parker's token set, so no
//! signal waits for an unrelated wake-up.
//!
//! Idle waiting: whoever owns the sockets behind the queue may install
//! an `IdleWait`. Then one idle scheduler at a time (`waiting` names it)
//! waits in it instead of parking: it sleeps until input comes on those
//! sockets, reads what came without blocking (pushing its signals here),
//! and goes on to deliver them itself, so a message from another node
//! costs one thread wake-up instead of two (the socket's reader thread,
//! then a scheduler). Whoever would unpark that scheduler calls `wake`
//! too (a push from another thread, `notify_work`, the program's end);
//! both sides publish before they look (`waiting` against `pending` and
//! the run queues), so no wake-up is lost. A push made by the waiting
//! scheduler itself wakes nobody: it delivers next.

use super::pid::Pid;
use super::signal::Signal;
use crate::term::Atom;
use crossbeam_utils::sync::Unparker;
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// What an idle scheduler may wait in instead of parking (see "Idle
/// waiting" above).
pub trait IdleWait: Send + Sync {
    /// Sleeps until input comes on the sockets, `wake` is called, or
    /// `timeout` passes (`None`: no limit); reads the input that came,
    /// never blocking on a socket, and pushes its signals to the queue.
    fn wait(&self, timeout: Option<Duration>);
    /// Whether waiting here is worth it now (input came lately); else
    /// the scheduler parks as usual.
    fn worth(&self) -> bool;
    /// Ends the `wait` under way, or the next one at once.
    fn wake(&self);
}

thread_local! {
    /// This thread is a scheduler inside `IdleWait::wait`.
    static IN_WAIT: Cell<bool> = const { Cell::new(false) };
}

/// Whom an outside signal is for.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    Pid(Pid),
    /// A registered name; the signal is dropped if nobody holds it.
    Name(Atom),
}

/// One thing queued from outside.
pub(crate) enum Item<M> {
    Signal(Target, Signal<M>),
    /// Asks which live process `Target` names; the answer goes to the
    /// probe hook with the token.
    Probe(Target, u64),
}

/// Called on a scheduler with a probe's token and the live process its
/// target names (`None`: no such process).
pub type ProbeHook = Box<dyn Fn(u64, Option<Pid>) + Send + Sync>;

/// Signals waiting for a scheduler to deliver them.
pub struct Outside<M> {
    queue: Mutex<Vec<Item<M>>>,
    pending: AtomicBool,
    /// The schedulers' unparkers, set by `run` while the schedulers live.
    wake: Mutex<Vec<Unparker>>,
    probe_hook: std::sync::OnceLock<ProbeHook>,
    /// Held by the one scheduler delivering: two schedulers delivering
    /// two batches at once could interleave one sender's messages.
    drain: Mutex<()>,
    /// Things outside that may still push (open sockets): while there
    /// are any, a deterministic run with nothing runnable waits a little
    /// for them before it moves its clock or calls it a deadlock.
    sources: AtomicUsize,
    /// Where an idle scheduler may wait for the sockets (set once).
    idle_wait: std::sync::OnceLock<Box<dyn IdleWait>>,
    /// One more than the index of the scheduler waiting in `idle_wait`;
    /// 0 when none is.
    waiting: AtomicUsize,
}

impl<M> Default for Outside<M> {
    fn default() -> Self {
        Outside {
            queue: Mutex::new(Vec::new()),
            pending: AtomicBool::new(false),
            wake: Mutex::new(Vec::new()),
            probe_hook: std::sync::OnceLock::new(),
            drain: Mutex::new(()),
            sources: AtomicUsize::new(0),
            idle_wait: std::sync::OnceLock::new(),
            waiting: AtomicUsize::new(0),
        }
    }
}

impl<M> Outside<M> {
    /// Queues `signal` for `target` and wakes the schedulers.
    pub fn push(&self, target: Target, signal: Signal<M>) {
        self.enqueue(Item::Signal(target, signal));
    }

    /// Asks a scheduler whether `target` names a live process; the hook
    /// set with `set_probe_hook` hears the answer (in queue order with
    /// the signals).
    pub fn probe(&self, target: Target, token: u64) {
        self.enqueue(Item::Probe(target, token));
    }

    /// Sets the hook that answers probes (once).
    pub fn set_probe_hook(&self, hook: ProbeHook) {
        let _ = self.probe_hook.set(hook);
    }

    pub(crate) fn answer_probe(&self, token: u64, pid: Option<Pid>) {
        if let Some(hook) = self.probe_hook.get() {
            hook(token, pid);
        }
    }

    fn enqueue(&self, item: Item<M>) {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(item);
        if self.pending.swap(true, Ordering::SeqCst) || IN_WAIT.with(Cell::get) {
            return;
        }
        if self.waiting.load(Ordering::SeqCst) != 0
            && let Some(w) = self.idle_wait.get()
        {
            // The scheduler waiting on the sockets delivers it.
            w.wake();
            return;
        }
        if let Some(u) = self.wake.lock().unwrap_or_else(|e| e.into_inner()).first() {
            // One scheduler is enough (it delivers the lot, and a woken
            // receiver runs next on it); waking them all costs more
            // than it saves.
            u.unpark();
        }
    }

    /// One more source of signals (see `sources`).
    pub fn add_source(&self) {
        self.sources.fetch_add(1, Ordering::SeqCst);
    }

    /// A source of signals is gone.
    pub fn remove_source(&self) {
        self.sources.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether anything outside may still push.
    pub(crate) fn has_sources(&self) -> bool {
        self.sources.load(Ordering::SeqCst) > 0
    }

    /// Whether signals wait.
    #[inline]
    pub(crate) fn pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    /// The right to deliver, if no other scheduler is delivering (it
    /// will see `pending` again when it is done).
    pub(crate) fn try_drain(&self) -> Option<std::sync::MutexGuard<'_, ()>> {
        match self.drain.try_lock() {
            Ok(guard) => Some(guard),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Everything queued so far, oldest first (call with `try_drain`'s
    /// guard held, and deliver before dropping it).
    pub(crate) fn take(&self) -> Vec<Item<M>> {
        self.pending.store(false, Ordering::SeqCst);
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Installs where an idle scheduler waits for the sockets (once).
    pub fn set_idle_wait(&self, wait: Box<dyn IdleWait>) {
        let _ = self.idle_wait.set(wait);
    }

    /// Scheduler `index`, idle, waits for the sockets at most `timeout`
    /// unless `ready()` (work or the program's end) says not to; false
    /// when it should park instead (no idle wait is installed, or another
    /// scheduler is waiting in it, or it is not worth it now).
    pub(crate) fn idle_wait(
        &self,
        index: usize,
        timeout: Option<Duration>,
        ready: impl Fn() -> bool,
    ) -> bool {
        let Some(w) = self.idle_wait.get().filter(|w| w.worth()) else {
            return false;
        };
        if self
            .waiting
            .compare_exchange(0, index + 1, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return false;
        }
        if !ready() && !self.pending() {
            IN_WAIT.with(|c| c.set(true));
            w.wait(timeout);
            IN_WAIT.with(|c| c.set(false));
        }
        self.waiting.store(0, Ordering::SeqCst);
        true
    }

    /// Called beside unparking scheduler `index` (`None`: every one): if
    /// it waits on the sockets, ends that wait.
    pub(crate) fn wake_waiter(&self, index: Option<usize>) {
        let w = self.waiting.load(Ordering::SeqCst);
        if w != 0
            && index.is_none_or(|i| i + 1 == w)
            && let Some(wait) = self.idle_wait.get()
        {
            wait.wake();
        }
    }

    pub(crate) fn set_wakers(&self, wakers: Vec<Unparker>) {
        *self.wake.lock().unwrap_or_else(|e| e.into_inner()) = wakers;
    }
}
