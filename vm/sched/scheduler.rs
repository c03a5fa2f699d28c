//! Scheduler threads: run queues, the next slot, work stealing, parking,
//! timers, and the end of the program.
//!
//! Each scheduler owns a crossbeam-deque `Worker` (its local run queue,
//! first in first out), a `next` slot and a timer heap; all share one global
//! `Injector`, the `Stealer`s of every local queue, and the process table.
//!
//! # Invariants
//!
//! - A process is in at most one place at a time: one run queue, one next
//!   slot, or being run by one scheduler. Only whoever makes it runnable
//!   queues it (`state.rs`), and `begin_run` lets one taker run it.
//! - The next slot is never stolen. A process placed there inherits the rest
//!   of the running process's time slice; once the slice is used up it goes
//!   to the back of the local queue instead, so two processes waking each
//!   other cannot keep the others waiting longer than one slice.
//! - A local queue is stealable only while it has a *backlog*: the process
//!   its owner took from it last had waited at least `BACKLOG_REDUCTIONS`
//!   of the owner's reductions (its work clock), and more are queued behind
//!   it. Only then is a sibling woken, and only then do searching siblings
//!   take from it. Processes that hand messages to each other (chameneos'
//!   meeting place, a ring) are queued for a few reductions at a time, so
//!   they stay on one core instead of bouncing between two caches; a queue
//!   of real parallel work (big-bang, a million fresh spawns) ages past the
//!   bound within a slice or two and is shared.
//! - Stealing is only an optimisation: a scheduler never parks while its
//!   own queue or next slot holds work, and only the owner pushes to its
//!   local queue, so every queued process is run even if no one steals.
//! - A sibling is woken (unparked) only after a queue turned stealable, or
//!   work was pushed onto a stealable queue, and no scheduler is already
//!   searching. The pusher's `notify_work` and the sleeper's `idle` each
//!   write, fence (SeqCst), then read the other's side, so at least one of
//!   them sees the other: no sleeper misses stealable work that was pushed
//!   before it parked.
//! - On a distributed node one idle scheduler at a time waits on the
//!   sockets instead of parking (`outside.rs`, "Idle waiting"); every
//!   unpark of it (`notify_work`, `finish`) also ends that wait.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;
use crossbeam_utils::sync::{Parker, Unparker};

use super::cell::{ExitRight, InboxReader, ProcessCell};
use super::outside::{Item, Outside, Target};
use super::pid::Pid;
use super::send_timer::{Destination, Pending, SendTimers};
use super::signal::Signal;
use super::state::Notified;
use super::stats::{Counters, Stats};
use super::table::{ProcessTable, SystemLimit};
use super::timer::TimerHeap;
use super::{ProcessBody, RunOutcome};
use crate::term::atom::Atom;

/// Reductions a process may use before it must yield (BEAM's CONTEXT_REDS).
pub const CONTEXT_REDS: u32 = 4000;
/// Bytes of machine stack of a scheduler thread: native code may take
/// `native::NATIVE_STACK` of it for its calls, and the helpers and BIFs
/// above them (the compiler, regular expressions, printing) the rest.
/// Only the pages touched are memory.
pub const SCHEDULER_STACK: usize = 16 * 1024 * 1024;
/// Rounds an idle scheduler spends stealing before it parks.
const SEARCH_ROUNDS: u32 = 32;
/// How long (in the owner's reductions) the oldest queued process must have
/// waited before its queue counts as a backlog that siblings may share: one
/// time slice. A hand-off between a few processes waits a few dozen
/// reductions; waking a parked thread and moving a process's data to
/// another core costs about as much as a slice of work.
const BACKLOG_REDUCTIONS: u64 = CONTEXT_REDS as u64;
/// Every this many slices a scheduler looks at the global queue first, so
/// work there is not starved by a busy local queue.
const GLOBAL_QUEUE_INTERVAL: u64 = 61;
/// In `--deterministic` mode the virtual clock advances by this many
/// nanoseconds per reduction, so a busy program still sees time pass.
const VIRTUAL_NANOS_PER_REDUCTION: u64 = 10;
/// References are handed to schedulers in blocks, to keep `make_ref` off
/// the shared counter; with one scheduler they come out in order.
const REFERENCE_BLOCK: u64 = 1024;

/// How the runtime is set up (`--schedulers`, `--reductions`,
/// `--max-processes`, `--deterministic`).
#[derive(Clone, Debug)]
pub struct Config {
    /// Scheduler threads; forced to 1 when `deterministic`.
    pub schedulers: usize,
    /// The reduction budget of one time slice.
    pub reductions: u32,
    /// Spawning past this many live processes fails with `system_limit`.
    pub max_processes: usize,
    /// One scheduler, a virtual clock, pids and refs in order.
    pub deterministic: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            schedulers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            reductions: CONTEXT_REDS,
            max_processes: usize::MAX,
            deterministic: false,
        }
    }
}

impl Config {
    /// Applies one command-line option of the runtime: `--schedulers N`,
    /// `--reductions N`, `--max-processes N`, `--deterministic`. Returns
    /// `Ok(false)` for an option that is not the runtime's, and an error
    /// message for a bad value.
    pub fn apply_option(&mut self, name: &str, value: Option<&str>) -> Result<bool, String> {
        let number = |value: Option<&str>| -> Result<usize, String> {
            let text = value.ok_or_else(|| format!("{name} needs a number"))?;
            match text.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!(
                    "{name}: expected a positive number, found `{text}`"
                )),
            }
        };
        match name {
            "--schedulers" => self.schedulers = number(value)?,
            "--reductions" => self.reductions = number(value)?.min(u32::MAX as usize) as u32,
            "--max-processes" => self.max_processes = number(value)?,
            "--deterministic" => self.deterministic = true,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether a runtime option takes a value after it.
    pub fn option_takes_value(name: &str) -> bool {
        matches!(name, "--schedulers" | "--reductions" | "--max-processes")
    }
}

/// How a program ended.
#[derive(Debug)]
pub enum Finish<M> {
    /// The main process exited with this reason (`normal` when main/1 returned).
    MainExited(M),
    /// A process called `halt(Status)`.
    Halted(i32),
    /// `--deterministic` only: every process waits and no timer is pending,
    /// so nothing can ever happen again.
    Deadlock,
    /// A scheduler thread panicked (a bug in act, never in a program): the
    /// program is stopped rather than left hanging. Carries the message.
    Panicked(String),
}

/// The result of `run`: how the program ended and its statistics.
#[derive(Debug)]
pub struct Finished<M> {
    pub finish: Finish<M>,
    pub stats: Stats,
}

/// Where a signal went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Into the live receiver's inbox.
    Delivered,
    /// The pid names no live process (or it is exiting): the signal is
    /// dropped, unless the exiting receiver's exit hook still takes it (a
    /// push that came before the exit, its notification after). Either the
    /// sender sees `NoProcess` or the exit hook sees the signal; rarely both.
    NoProcess,
}

/// The VM's clock: real monotonic time, or a virtual one.
enum Clock {
    Real(Instant),
    /// Nanoseconds; advanced by reductions and, when every process waits,
    /// straight to the next timer.
    Virtual(AtomicU64),
}

impl Clock {
    fn now(&self) -> u64 {
        match self {
            Clock::Real(start) => start.elapsed().as_nanos() as u64,
            Clock::Virtual(now) => now.load(Ordering::Relaxed),
        }
    }

    fn charge(&self, reductions: u32) {
        if let Clock::Virtual(now) = self {
            now.fetch_add(
                u64::from(reductions) * VIRTUAL_NANOS_PER_REDUCTION,
                Ordering::Relaxed,
            );
        }
    }

    fn advance_to(&self, nanos: u64) {
        if let Clock::Virtual(now) = self {
            now.fetch_max(nanos, Ordering::Relaxed);
        }
    }
}

type Queued<B> = Arc<ProcessCell<B>>;

/// A run queue entry: a runnable process and the owner's work clock (its
/// reductions so far) when it was queued, to tell how long it has waited.
struct Entry<B: ProcessBody> {
    cell: Queued<B>,
    queued_at: u64,
}

/// What all schedulers share.
struct Shared<B: ProcessBody> {
    config: Config,
    table: ProcessTable<B>,
    /// Processes queued from no scheduler (the main process).
    injector: Injector<Entry<B>>,
    /// One per scheduler, by index.
    stealers: Vec<Stealer<Entry<B>>>,
    /// Whether each scheduler's local queue has a backlog (module
    /// invariants): written only by its owner, read by searching siblings.
    backlog: Box<[CachePadded<AtomicBool>]>,
    unparkers: Vec<Unparker>,
    /// Schedulers stealing right now.
    searching: AtomicUsize,
    /// Schedulers registered in `sleepers` (kept beside it, to read it
    /// without the lock).
    sleeping: AtomicUsize,
    /// Indices of the parked (or parking) schedulers.
    sleepers: Mutex<Vec<usize>>,
    /// Set once, when the program ends; every scheduler then returns.
    stopped: AtomicBool,
    finish: Mutex<Option<Finish<B::Message>>>,
    main_pid: Pid,
    clock: Clock,
    references: AtomicU64,
    /// Reductions run by each scheduler, for `statistics(reductions)`.
    /// Written only by its own scheduler (a plain load and store, no
    /// read-modify-write), read by anyone; one cache line each.
    reductions: Box<[CachePadded<AtomicU64>]>,
    /// Messages waiting for their `send_after` / `start_timer` deadline.
    send_timers: SendTimers<B::Message>,
    /// Signals from threads outside the schedulers (a distributed node's
    /// connections); `None` on a node that is not alive.
    outside: Option<Arc<Outside<B::Message>>>,
    /// The reclamation epoch: one more each time a process leaves the
    /// table (see `Retired`).
    epoch: AtomicU64,
    /// The epoch each scheduler read as it began a send's lookup, until
    /// the send is done; `u64::MAX` the rest of the time (it holds no
    /// cell found by `ProcessTable::lookup` then).
    pinned: Box<[CachePadded<AtomicU64>]>,
    /// Retired cells a scheduler handed over as it parked or stopped, for
    /// whichever scheduler reclaims next to drop (a parked one would keep
    /// them while it sleeps; what is left goes after every scheduler has
    /// stopped); `orphaned` says some are there.
    orphans: Mutex<Vec<(u64, Queued<B>)>>,
    orphaned: AtomicBool,
}

impl<B: ProcessBody> Shared<B> {
    /// Ends the program (the first ending wins) and wakes every scheduler.
    fn finish(&self, how: Finish<B::Message>) {
        let mut finish = self.finish.lock().unwrap_or_else(|e| e.into_inner());
        if finish.is_none() {
            *finish = Some(how);
        }
        drop(finish);
        self.stopped.store(true, Ordering::SeqCst);
        for u in &self.unparkers {
            u.unpark();
        }
        if let Some(o) = &self.outside {
            o.wake_waiter(None);
        }
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Called after pushing stealable work: wakes one parked sibling, unless
    /// someone is already searching (it will find the work) or none sleeps.
    /// Returns whether it woke one.
    fn notify_work(&self) -> bool {
        fence(Ordering::SeqCst);
        if self.searching.load(Ordering::SeqCst) != 0 || self.sleeping.load(Ordering::SeqCst) == 0 {
            return false;
        }
        let mut sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        let Some(index) = sleepers.pop() else {
            return false;
        };
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
        drop(sleepers);
        self.unparkers[index].unpark();
        if let Some(o) = &self.outside {
            o.wake_waiter(Some(index));
        }
        true
    }

    /// Whether any queue holds work a sibling may take: the global queue,
    /// or a local queue with a backlog.
    fn has_work(&self) -> bool {
        !self.injector.is_empty()
            || self
                .stealers
                .iter()
                .zip(self.backlog.iter())
                .any(|(s, backlog)| backlog.load(Ordering::SeqCst) && !s.is_empty())
    }
}

/// What one scheduler owns.
struct Local<B: ProcessBody> {
    index: usize,
    worker: Worker<Entry<B>>,
    /// Where a stolen batch lands before it is restamped into `worker` (the
    /// victim's stamps count the victim's reductions). Never shared.
    scratch: Worker<Entry<B>>,
    /// This scheduler's own copy of `Shared::backlog[index]`.
    backlogged: bool,
    /// The process woken last by the running one: it runs next, here.
    next: Option<Queued<B>>,
    /// Reductions left in the current time slice, inherited by `next`.
    slice_left: u32,
    timers: TimerHeap,
    /// When this scheduler's `send_after` timers are due (by timer id).
    send_heap: TimerHeap,
    counters: Counters,
    parker: Parker,
    /// Slices started; paces the look at the global queue.
    ticks: u64,
    /// Where this scheduler allocates pids (spread over the table's shards).
    spawn_hint: usize,
    /// References left in this scheduler's block: `next_reference..reference_end`.
    next_reference: u64,
    reference_end: u64,
    idle_time: Duration,
    retired: Retired<B>,
}

/// Cells of processes this scheduler took out of the table, each with the
/// epoch of its removal. A send finds its receiver without a reference
/// count (`ProcessTable::lookup`), pinned at the epoch it read first
/// (`Shared::pinned`); a cell removed at epoch `e` may still be held only
/// by a scheduler pinned at `e` or before, so once none is, it is dropped.
struct Retired<B: ProcessBody> {
    cells: Vec<(u64, Queued<B>)>,
}

/// Keeps the cell of a process that left the table until no send can
/// still hold it (see `Retired`).
fn retire<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>, cell: Queued<B>) {
    let epoch = shared.epoch.fetch_add(1, Ordering::SeqCst);
    local.retired.cells.push((epoch, cell));
}

/// Drops the retired cells (this scheduler's, and those handed over by
/// parked ones) that no send can hold any more.
fn reclaim<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) {
    let orphaned = shared.orphaned.load(Ordering::Relaxed);
    if local.retired.cells.is_empty() && !orphaned {
        return;
    }
    let oldest = shared
        .pinned
        .iter()
        .map(|s| s.load(Ordering::SeqCst))
        .min()
        .unwrap_or(u64::MAX);
    // Removed at `e`: a send pinned later than `e` found the slot empty.
    local.retired.cells.retain(|(e, _)| *e >= oldest);
    if orphaned {
        let mut orphans = shared.orphans.lock().unwrap_or_else(|e| e.into_inner());
        orphans.retain(|(e, _)| *e >= oldest);
        shared
            .orphaned
            .store(!orphans.is_empty(), Ordering::Relaxed);
    }
}

/// Before parking or stopping: the retired cells not yet free go to
/// `Shared::orphans`, so that a sleeping scheduler does not keep them.
fn hand_over_retired<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) {
    reclaim(shared, local);
    if local.retired.cells.is_empty() {
        return;
    }
    let mut orphans = shared.orphans.lock().unwrap_or_else(|e| e.into_inner());
    orphans.append(&mut local.retired.cells);
    shared.orphaned.store(true, Ordering::Relaxed);
}

/// What a running process may do to the world: the only door from a
/// process body to the runtime.
pub struct RunContext<'a, B: ProcessBody> {
    shared: &'a Shared<B>,
    local: &'a mut Local<B>,
    inbox: InboxReader<'a, B>,
    reductions: u32,
}

impl<B: ProcessBody> RunContext<'_, B> {
    /// The running process.
    pub fn pid(&self) -> Pid {
        self.inbox.pid()
    }

    /// Adds reductions used in this run step (the scheduler charges at least
    /// one per step, and never more than the budget).
    pub fn charge(&mut self, reductions: u32) {
        self.reductions = self.reductions.saturating_add(reductions);
    }

    /// The oldest signal in the running process's inbox.
    pub fn take_signal(&mut self) -> Option<Signal<B::Message>> {
        self.inbox.take()
    }

    /// The oldest signal, read in place: cheaper than `take_signal` for
    /// the common signal, a message, that is read and then dropped.
    #[inline]
    pub fn take_signal_in_place(&mut self) -> Option<super::inbox::Popped<Signal<B::Message>>> {
        self.inbox.take_in_place()
    }

    /// Whether the inbox holds a signal (a receive that would block checks
    /// this before returning `Wait`; returning `Wait` with signals queued is
    /// also safe, only slower).
    pub fn has_signals(&self) -> bool {
        !self.inbox.is_empty()
    }

    /// Sends a signal. If it wakes the receiver, the receiver runs next on
    /// this scheduler, in the rest of this time slice.
    pub fn send(&mut self, to: Pid, signal: Signal<B::Message>) -> Delivery {
        // Pinned (see `Retired`): a cell removed from now on is kept.
        let pin = &self.shared.pinned[self.local.index];
        pin.store(self.shared.epoch.load(Ordering::SeqCst), Ordering::SeqCst);
        // SAFETY: pinned until the cell is no longer used, below.
        let (delivery, woken) = match unsafe { self.shared.table.lookup(to) } {
            None => (Delivery::NoProcess, None),
            Some(cell) => {
                self.local.counters.messages_sent += 1;
                match cell.deliver(signal) {
                    // SAFETY: the cell is alive (in the table or retired,
                    // so an `Arc` holds it); this counts one more, for the
                    // run queue.
                    Notified::Woken => (
                        Delivery::Delivered,
                        Some(unsafe {
                            let raw: *const ProcessCell<B> = cell;
                            Arc::increment_strong_count(raw);
                            Arc::from_raw(raw)
                        }),
                    ),
                    Notified::Active => (Delivery::Delivered, None),
                    Notified::Exiting => (Delivery::NoProcess, None),
                }
            }
        };
        pin.store(u64::MAX, Ordering::Release);
        if let Some(cell) = woken {
            make_next(self.shared, self.local, cell);
        }
        delivery
    }

    /// Reads another process's body and waiting signals while it is not
    /// running (see `ProcessCell::inspect`); `None` if it is dead, running
    /// on another scheduler, or held by another inspection.
    pub fn inspect<R>(
        &mut self,
        pid: Pid,
        read: impl FnOnce(&B, bool, super::cell::Peek<'_, B::Message>) -> R,
    ) -> Option<R> {
        let cell = self.shared.table.get(pid)?;
        // A process running on another scheduler stops within its time
        // slice (BEAM too makes the asker wait for the target); the bound
        // only guards against two processes inspecting each other.
        let deadline = Instant::now() + Duration::from_millis(20);
        while cell.state() == super::state::State::Running && Instant::now() < deadline {
            std::thread::yield_now();
        }
        let (result, queue) = cell.inspect(read)?;
        if queue {
            push_local(self.shared, self.local, cell);
        }
        Some(result)
    }

    /// `To ! Message`.
    pub fn send_message(&mut self, to: Pid, message: B::Message) -> Delivery {
        self.send(to, Signal::Message(message))
    }

    /// Spawns a process whose body `make` builds from its new pid. The new
    /// process is queued at the back of this scheduler's queue (stealable).
    /// Fails with `SystemLimit` past `--max-processes`.
    pub fn spawn(&mut self, make: impl FnOnce(Pid) -> B) -> Result<Pid, SystemLimit> {
        let hint = self.local.spawn_hint;
        let cell = self.shared.table.insert(hint, make)?;
        self.local.spawn_hint = hint.wrapping_add(self.shared.stealers.len());
        self.local.counters.spawned += 1;
        let pid = cell.pid();
        push_local(self.shared, self.local, cell);
        Ok(pid)
    }

    /// Arms a timer: after `after_ms` milliseconds a `Signal::Timeout(tag)`
    /// reaches this process (and wakes it), unless the process has set
    /// another tag or cancelled meanwhile. `tag` must not be 0; the process
    /// layer uses a fresh one per receive (its receive generation).
    pub fn set_timer(&mut self, after_ms: u64, tag: u64) {
        debug_assert!(tag != 0, "timer tag 0 means no timer");
        self.inbox.set_timer_tag(tag);
        let deadline = self
            .shared
            .clock
            .now()
            .saturating_add(after_ms.saturating_mul(1_000_000));
        self.local.timers.insert(deadline, self.pid(), tag);
    }

    /// Cancels the pending timer (lazily: it will fire into nothing).
    pub fn cancel_timer(&mut self) {
        self.inbox.set_timer_tag(0);
    }

    /// Arms timer `id`: after `after_ns` nanoseconds `message` is sent to
    /// `to`, unless the timer is cancelled first.
    pub fn start_send_timer(
        &mut self,
        id: u64,
        after_ns: u64,
        to: Destination,
        message: B::Message,
    ) {
        let deadline = self.shared.clock.now().saturating_add(after_ns);
        self.shared.send_timers.insert(
            id,
            Pending {
                deadline,
                to,
                message,
            },
        );
        self.local.send_heap.insert(deadline, self.pid(), id);
    }

    /// Cancels timer `id`: the nanoseconds it had left, or `None` if it
    /// has fired, was cancelled, or its destination process is gone.
    pub fn cancel_send_timer(&mut self, id: u64) -> Option<u64> {
        let pending = self.shared.send_timers.take(id)?;
        self.left(id, pending.deadline, pending.to)
    }

    /// The nanoseconds timer `id` has left (as `cancel_send_timer`, but
    /// the timer keeps running).
    pub fn read_send_timer(&self, id: u64) -> Option<u64> {
        let (deadline, to) = self.shared.send_timers.peek(id)?;
        self.left(id, deadline, to)
    }

    fn left(&self, id: u64, deadline: u64, to: Destination) -> Option<u64> {
        if let Destination::Pid(pid) = to
            && !self.shared.table.is_alive(pid)
        {
            // BEAM cancels a timer whose receiver died.
            self.shared.send_timers.take(id);
            return None;
        }
        Some(deadline.saturating_sub(self.shared.clock.now()))
    }

    /// Milliseconds on the VM's clock (real or, with `--deterministic`, virtual).
    pub fn now_ms(&self) -> u64 {
        self.shared.clock.now() / 1_000_000
    }

    /// Nanoseconds on the VM's clock.
    pub fn now_ns(&self) -> u64 {
        self.shared.clock.now()
    }

    /// A fresh reference id, unique in this run (in order with one scheduler).
    pub fn make_ref(&mut self) -> u64 {
        if self.local.next_reference == self.local.reference_end {
            let start = self
                .shared
                .references
                .fetch_add(REFERENCE_BLOCK, Ordering::Relaxed);
            self.local.next_reference = start;
            self.local.reference_end = start + REFERENCE_BLOCK;
        }
        self.local.next_reference += 1;
        self.local.next_reference - 1
    }

    pub fn register(&mut self, name: Atom, pid: Pid) -> bool {
        self.shared.table.register(name, pid)
    }

    pub fn unregister(&mut self, name: Atom) -> bool {
        self.shared.table.unregister(name)
    }

    pub fn whereis(&self, name: Atom) -> Option<Pid> {
        self.shared.table.whereis(name)
    }

    pub fn registered(&self) -> Vec<Atom> {
        self.shared.table.registered()
    }

    pub fn is_alive(&self, pid: Pid) -> bool {
        self.shared.table.is_alive(pid)
    }

    /// The live pids, in slot order (`processes()`).
    pub fn processes(&self) -> Vec<Pid> {
        self.shared.table.pids()
    }

    /// Reductions run so far by all schedulers (`statistics(reductions)`);
    /// other schedulers' counts may lag by a run step.
    pub fn total_reductions(&self) -> u64 {
        let before_this_step: u64 = self
            .shared
            .reductions
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .sum();
        before_this_step + u64::from(self.reductions)
    }

    /// Scheduler threads (`system_info(schedulers)`).
    pub fn schedulers(&self) -> usize {
        self.shared.stealers.len()
    }

    /// Processes alive now.
    pub fn process_count(&self) -> usize {
        self.shared.table.alive()
    }

    /// `halt(Status)`: ends the program; every scheduler stops after its
    /// current step. The caller should return from its run step.
    pub fn halt(&mut self, status: i32) {
        self.shared.finish(Finish::Halted(status));
    }

    /// Whether the program has ended (a long BIF may check it).
    pub fn stopping(&self) -> bool {
        self.shared.stopped()
    }

    /// This scheduler's counters (the process layer adds `collections`).
    pub fn counters(&mut self) -> &mut Counters {
        &mut self.local.counters
    }

    /// The index of the scheduler running this step (0-based).
    pub fn scheduler_index(&self) -> usize {
        self.local.index
    }
}

/// Puts a just-woken process into the next slot when nothing else is
/// waiting here, else at the back of the local queue. The slot then only
/// ever holds what FIFO order would run next anyway, so processes run in
/// the order they became runnable, as on BEAM: three workers woken in
/// turn run in that order, and a process spawned before its spawner wakes
/// someone runs before the one woken.
fn make_next<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>, cell: Queued<B>) {
    if local.next.is_none() && local.worker.is_empty() {
        local.next = Some(cell);
    } else {
        push_local(shared, local, cell);
    }
}

/// Queues a runnable process at the back of the local queue, stamped with
/// the work clock; a sibling is told only if the queue has a backlog.
fn push_local<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>, cell: Queued<B>) {
    local.worker.push(Entry {
        cell,
        queued_at: local.counters.reductions,
    });
    if local.backlogged && shared.notify_work() {
        local.counters.wakes += 1;
    }
}

/// Takes the oldest process of the local queue, and from how long it
/// waited decides whether the queue has a backlog (module invariants).
fn pop_local<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) -> Option<Queued<B>> {
    let entry = local.worker.pop();
    let backlogged = entry.as_ref().is_some_and(|e| {
        local.counters.reductions.saturating_sub(e.queued_at) >= BACKLOG_REDUCTIONS
            && !local.worker.is_empty()
    });
    if backlogged != local.backlogged {
        local.backlogged = backlogged;
        shared.backlog[local.index].store(backlogged, Ordering::SeqCst);
        if backlogged && shared.notify_work() {
            local.counters.wakes += 1;
        }
    }
    entry.map(|e| e.cell)
}

/// Moves a stolen batch from the scratch queue to the local one, stamped
/// with this scheduler's work clock.
fn restamp_stolen<B: ProcessBody>(local: &mut Local<B>) {
    while let Some(entry) = local.scratch.pop() {
        local.worker.push(Entry {
            cell: entry.cell,
            queued_at: local.counters.reductions,
        });
    }
}

/// Runs `main` as the main process on `config.schedulers` threads until the
/// program ends: main exits, a process halts, or (deterministic) deadlock.
/// When it returns every scheduler thread has stopped and every process is
/// gone.
pub fn run<B: ProcessBody>(config: Config, main: impl FnOnce(Pid) -> B) -> Finished<B::Message> {
    run_with_outside(config, None, main)
}

/// `run`, with a door for signals from threads outside the schedulers
/// (`outside.rs`).
pub fn run_with_outside<B: ProcessBody>(
    config: Config,
    outside: Option<Arc<Outside<B::Message>>>,
    main: impl FnOnce(Pid) -> B,
) -> Finished<B::Message> {
    let mut config = config;
    if config.deterministic {
        config.schedulers = 1;
    }
    config.schedulers = config.schedulers.max(1);
    config.reductions = config.reductions.max(1);
    let started = Instant::now();
    let n = config.schedulers;
    let workers: Vec<Worker<Entry<B>>> = (0..n).map(|_| Worker::new_fifo()).collect();
    let parkers: Vec<Parker> = (0..n).map(|_| Parker::new()).collect();
    let table = ProcessTable::new(config.max_processes.max(1));
    let main_cell = match table.insert(0, main) {
        Ok(cell) => cell,
        // The limit is at least 1 and the table empty: insert cannot fail.
        Err(SystemLimit) => unreachable!("the first process always fits"),
    };
    let clock = if config.deterministic {
        Clock::Virtual(AtomicU64::new(0))
    } else {
        Clock::Real(started)
    };
    let shared = Shared {
        table,
        injector: Injector::new(),
        stealers: workers.iter().map(Worker::stealer).collect(),
        backlog: (0..n)
            .map(|_| CachePadded::new(AtomicBool::new(false)))
            .collect(),
        unparkers: parkers.iter().map(|p| p.unparker().clone()).collect(),
        searching: AtomicUsize::new(0),
        sleeping: AtomicUsize::new(0),
        sleepers: Mutex::new(Vec::new()),
        stopped: AtomicBool::new(false),
        finish: Mutex::new(None),
        main_pid: main_cell.pid(),
        clock,
        references: AtomicU64::new(1),
        reductions: (0..n)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect(),
        send_timers: SendTimers::default(),
        outside,
        epoch: AtomicU64::new(0),
        pinned: (0..n)
            .map(|_| CachePadded::new(AtomicU64::new(u64::MAX)))
            .collect(),
        orphans: Mutex::new(Vec::new()),
        orphaned: AtomicBool::new(false),
        config,
    };
    if let Some(outside) = &shared.outside {
        outside.set_wakers(shared.unparkers.clone());
    }
    shared.injector.push(Entry {
        cell: main_cell,
        queued_at: 0,
    });
    let counters: Vec<Counters> = std::thread::scope(|scope| {
        let shared = &shared;
        let handles: Vec<_> = workers
            .into_iter()
            .zip(parkers)
            .enumerate()
            .map(|(index, (worker, parker))| {
                let local = Local {
                    index,
                    worker,
                    scratch: Worker::new_fifo(),
                    backlogged: false,
                    next: None,
                    slice_left: 0,
                    timers: TimerHeap::default(),
                    send_heap: TimerHeap::default(),
                    counters: Counters::default(),
                    parker,
                    ticks: 0,
                    spawn_hint: index + n,
                    next_reference: 0,
                    reference_end: 0,
                    idle_time: Duration::ZERO,
                    retired: Retired { cells: Vec::new() },
                };
                std::thread::Builder::new()
                    .name(format!("scheduler {}", index + 1))
                    .stack_size(SCHEDULER_STACK)
                    .spawn_scoped(scope, move || {
                        let run = std::panic::AssertUnwindSafe(|| {
                            let counters = scheduler_loop(shared, local);
                            // The thread's unspent message credit goes back.
                            crate::heap::budget::return_credit();
                            counters
                        });
                        std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                            let message = panic
                                .downcast_ref::<&str>()
                                .map(|s| s.to_string())
                                .or_else(|| panic.downcast_ref::<String>().cloned())
                                .unwrap_or_default();
                            shared.finish(Finish::Panicked(message));
                            Counters::default()
                        })
                    })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(handle) => handle.join().unwrap_or_default(),
                Err(_) => {
                    // A thread that could not start: the others carry on.
                    Counters::default()
                }
            })
            .collect()
    });
    let wall = started.elapsed();
    let peak_alive = shared.table.peak_alive();
    shared.table.clear();
    let finish = shared
        .finish
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or(Finish::Deadlock);
    Finished {
        finish,
        stats: Stats {
            wall,
            peak_alive,
            schedulers: counters,
        },
    }
}

/// One scheduler thread: run the next process or a local one, else steal,
/// else take from the global queue, else park; until the program ends.
fn scheduler_loop<B: ProcessBody>(shared: &Shared<B>, mut local: Local<B>) -> Counters {
    let started = Instant::now();
    let mut registers = B::Registers::default();
    while !shared.stopped() {
        reclaim(shared, &mut local);
        fire_due_timers(shared, &mut local);
        if let Some(outside) = &shared.outside
            && outside.pending()
        {
            deliver_outside(shared, &mut local, outside);
        }
        if let Some((cell, budget)) = next_local(shared, &mut local) {
            run_process(shared, &mut local, &mut registers, cell, budget);
            continue;
        }
        let idle_since = Instant::now();
        if let Some(cell) = steal(shared, &mut local) {
            local.idle_time += idle_since.elapsed();
            local.slice_left = shared.config.reductions;
            run_process(
                shared,
                &mut local,
                &mut registers,
                cell,
                shared.config.reductions,
            );
            continue;
        }
        idle(shared, &mut local);
        local.idle_time += idle_since.elapsed();
    }
    local.counters.busy = started.elapsed().saturating_sub(local.idle_time);
    // Drop what is still queued here now, on this thread.
    local.next = None;
    while local.worker.pop().is_some() {}
    // Retired cells others may still hold go when every scheduler has stopped.
    hand_over_retired(shared, &mut local);
    local.counters
}

/// The next process from this scheduler's own work: the next slot while
/// the slice lasts, else the local queue (and now and then the global one).
fn next_local<B: ProcessBody>(
    shared: &Shared<B>,
    local: &mut Local<B>,
) -> Option<(Queued<B>, u32)> {
    if let Some(cell) = local.next.take() {
        if local.slice_left > 0 {
            return Some((cell, local.slice_left));
        }
        // The slice is used up: the woken process waits its turn like the rest.
        push_local(shared, local, cell);
    }
    let budget = shared.config.reductions;
    local.slice_left = budget;
    local.ticks += 1;
    if local.ticks.is_multiple_of(GLOBAL_QUEUE_INTERVAL)
        && let Some(cell) = take_global(shared, local)
    {
        return Some((cell, budget));
    }
    if let Some(cell) = pop_local(shared, local) {
        return Some((cell, budget));
    }
    take_global(shared, local).map(|cell| (cell, budget))
}

/// A batch from the global queue into the local one, and its first process.
fn take_global<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) -> Option<Queued<B>> {
    loop {
        match shared.injector.steal_batch_and_pop(&local.scratch) {
            Steal::Success(entry) => {
                restamp_stolen(local);
                return Some(entry.cell);
            }
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// Searches the global queue and the siblings' queues for a while.
fn steal<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) -> Option<Queued<B>> {
    let n = shared.stealers.len();
    shared.searching.fetch_add(1, Ordering::SeqCst);
    let timer_pending = !local.timers.is_empty() || !local.send_heap.is_empty();
    let mut found = None;
    'search: for round in 0..SEARCH_ROUNDS {
        if shared.stopped() {
            break;
        }
        if let Some(cell) = take_global(shared, local) {
            found = Some(cell);
            break;
        }
        for offset in 1..n {
            let victim = (local.index + offset + round as usize) % n;
            if victim == local.index || !shared.backlog[victim].load(Ordering::Acquire) {
                continue;
            }
            loop {
                match shared.stealers[victim].steal_batch_and_pop(&local.scratch) {
                    Steal::Success(entry) => {
                        restamp_stolen(local);
                        local.counters.steals += 1;
                        found = Some(entry.cell);
                        break 'search;
                    }
                    Steal::Empty => break,
                    Steal::Retry => std::hint::spin_loop(),
                }
            }
        }
        if n == 1 {
            break;
        }
        if round < SEARCH_ROUNDS / 2 {
            std::hint::spin_loop();
        } else if timer_pending {
            // A yield on a machine busy with other programs can give the
            // core away for a whole OS time slice (milliseconds), long past
            // a timer's deadline: park instead, with the timer's timeout.
            break;
        } else {
            std::thread::yield_now();
        }
    }
    shared.searching.fetch_sub(1, Ordering::SeqCst);
    found
}

/// No work anywhere: park until woken or until the next timer is due.
fn idle<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) {
    let deadline = match (
        local.timers.next_deadline(),
        local.send_heap.next_deadline(),
    ) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    if shared.config.deterministic {
        // Something outside (a socket) may still deliver: give it a
        // moment of real time before the clock jumps, and wait for it
        // rather than call the run a deadlock.
        if let Some(outside) = &shared.outside
            && outside.has_sources()
        {
            // (A wake-up left over from earlier ends a park at once, so
            // the pause is measured, not trusted to one park.)
            let pause = Duration::from_millis(100);
            let until = Instant::now() + pause;
            while !outside.pending() {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                local.parker.park_timeout(until - now);
            }
            if outside.pending() || deadline.is_none() {
                return;
            }
        }
        // One scheduler, nothing runnable: jump the clock to the next timer.
        match deadline {
            Some(at) => shared.clock.advance_to(at),
            None => shared.finish(Finish::Deadlock),
        }
        return;
    }
    {
        let mut sleepers = shared.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        sleepers.push(local.index);
        shared.sleeping.fetch_add(1, Ordering::SeqCst);
    }
    fence(Ordering::SeqCst);
    let outside = shared.outside.as_ref().is_some_and(|o| o.pending());
    if !shared.has_work() && !shared.stopped() && !outside {
        local.counters.parks += 1;
        hand_over_retired(shared, local);
        let timeout =
            deadline.map(|at| Duration::from_nanos(at.saturating_sub(shared.clock.now())));
        let waited = shared.outside.as_ref().is_some_and(|o| {
            o.idle_wait(local.index, timeout, || {
                shared.has_work() || shared.stopped()
            })
        });
        match deadline {
            _ if waited => {}
            Some(at) => {
                let now = shared.clock.now();
                if at > now {
                    local.parker.park_timeout(Duration::from_nanos(at - now));
                }
            }
            None => local.parker.park(),
        }
    }
    // Woken by a timeout, or found work before parking: leave the list. (A
    // waker that unparked us already took us out.)
    let mut sleepers = shared.sleepers.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(position) = sleepers.iter().position(|&i| i == local.index) {
        sleepers.swap_remove(position);
        shared.sleeping.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Delivers the timeouts that are due; a stale tag (the process moved on
/// or died) fires into nothing.
fn fire_due_timers<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) {
    if !local.send_heap.is_empty() {
        fire_send_timers(shared, local);
    }
    if local.timers.is_empty() {
        return;
    }
    let now = shared.clock.now();
    while let Some(timer) = local.timers.pop_due(now) {
        let Some(cell) = shared.table.get(timer.pid) else {
            continue;
        };
        if cell.timer_tag() != timer.tag {
            continue;
        }
        if cell.deliver(Signal::Timeout(timer.tag)) == Notified::Woken {
            push_local(shared, local, cell);
        }
    }
}

/// Delivers the signals queued by threads outside the schedulers, in the
/// order they were queued.
fn deliver_outside<B: ProcessBody>(
    shared: &Shared<B>,
    local: &mut Local<B>,
    outside: &Outside<B::Message>,
) {
    let Some(_draining) = outside.try_drain() else {
        return;
    };
    for item in outside.take() {
        let (target, signal) = match item {
            Item::Signal(target, signal) => (target, signal),
            Item::Probe(target, token) => {
                let pid = match target {
                    Target::Pid(pid) => Some(pid),
                    Target::Name(name) => shared.table.whereis(name),
                };
                let live = pid.filter(|&pid| shared.table.get(pid).is_some());
                outside.answer_probe(token, live);
                continue;
            }
        };
        let pid = match target {
            Target::Pid(pid) => Some(pid),
            Target::Name(name) => shared.table.whereis(name),
        };
        let Some(cell) = pid.and_then(|pid| shared.table.get(pid)) else {
            continue;
        };
        local.counters.messages_sent += 1;
        if cell.deliver(signal) == Notified::Woken {
            push_local(shared, local, cell);
        }
    }
}

/// Sends the messages of the due `send_after` timers that are still
/// pending (a cancelled one is gone from the map).
fn fire_send_timers<B: ProcessBody>(shared: &Shared<B>, local: &mut Local<B>) {
    let now = shared.clock.now();
    while let Some(timer) = local.send_heap.pop_due(now) {
        let Some(pending) = shared.send_timers.take(timer.tag) else {
            continue;
        };
        let pid = match pending.to {
            Destination::Pid(pid) => Some(pid),
            Destination::Name(name) => shared.table.whereis(name),
        };
        let Some(cell) = pid.and_then(|pid| shared.table.get(pid)) else {
            continue;
        };
        local.counters.messages_sent += 1;
        if cell.deliver(Signal::Message(pending.message)) == Notified::Woken {
            push_local(shared, local, cell);
        }
    }
}

/// Runs one of an exited process's hooks (`on_exiting`, `on_exit`) with
/// a context of its own.
fn exit_hook<B: ProcessBody>(
    shared: &Shared<B>,
    local: &mut Local<B>,
    exiting: &mut ExitRight<'_, B>,
    hook: impl FnOnce(&mut B, &mut RunContext<'_, B>),
) {
    let (body, inbox) = exiting.split();
    let mut context = RunContext {
        shared,
        local,
        inbox,
        reductions: 0,
    };
    hook(body, &mut context);
}

/// Runs one process for at most `budget` reductions and does what its
/// outcome asks: requeue it, let it sleep, or retire it.
fn run_process<B: ProcessBody>(
    shared: &Shared<B>,
    local: &mut Local<B>,
    registers: &mut B::Registers,
    cell: Queued<B>,
    budget: u32,
) {
    // An inspection (another process's `process_info`) holds the run right
    // for the few microseconds of a copy: wait for it rather than drop the
    // entry, which is the process's only one.
    let mut right = loop {
        if let Some(right) = cell.begin_run() {
            break right;
        }
        if !cell.inspected() {
            // Not runnable: cannot happen while the queue invariant holds.
            // Skip it (running it would break the body's exclusivity).
            local.counters.queued_twice += 1;
            return;
        }
        std::thread::yield_now();
    };
    local.counters.runs += 1;
    let mut budget = budget.max(1);
    loop {
        let (outcome, used) = {
            let (body, inbox) = right.split();
            let mut context = RunContext {
                shared,
                local: &mut *local,
                inbox,
                reductions: 0,
            };
            let outcome = body.run(&mut context, registers, budget);
            (outcome, context.reductions)
        };
        let used = used.clamp(1, budget);
        budget -= used;
        local.counters.reductions += u64::from(used);
        shared.reductions[local.index].store(local.counters.reductions, Ordering::Relaxed);
        shared.clock.charge(used);
        match outcome {
            RunOutcome::Yield => {
                right.yield_now();
                local.slice_left = budget;
                push_local(shared, local, cell);
                return;
            }
            RunOutcome::Wait => match right.try_wait() {
                Ok(()) => {
                    local.slice_left = budget;
                    return;
                }
                Err(still_running) => {
                    // A signal came in since the body looked: scan again.
                    right = still_running;
                    if budget == 0 {
                        right.yield_now();
                        local.slice_left = 0;
                        push_local(shared, local, cell);
                        return;
                    }
                }
            },
            RunOutcome::Exit(reason) => {
                let mut exiting = right.exit();
                exit_hook(shared, local, &mut exiting, |body, ctx| {
                    body.on_exiting(ctx)
                });
                if let Some(cell) = shared.table.remove(cell.pid()) {
                    retire(shared, local, cell);
                }
                exit_hook(shared, local, &mut exiting, |body, ctx| {
                    body.on_exit(ctx, &reason)
                });
                if cell.pid() == shared.main_pid {
                    shared.finish(Finish::MainExited(reason));
                }
                local.slice_left = budget;
                return;
            }
        }
    }
}
