//! The process runtime core: state word, signal inbox, process table,
//! schedulers and timers, generic over what a process runs.
//!
//! # How the pieces fit
//!
//! - `state.rs`: the state word (waiting / runnable / running / exiting and
//!   a notified bit) and its wake-up protocol, one read-modify-write per
//!   transition. Read its table first.
//! - `inbox.rs`: the lock-free MPSC signal inbox (one swap per push).
//! - `signal.rs`: `Signal<M>`, everything processes send each other.
//! - `cell.rs`: `ProcessCell<B>`, the shared half (state, inbox, pid) beside
//!   the owned body `B`, and the run right that guards the body.
//! - `table.rs`: the sharded process table (pid -> cell) and registered names.
//! - `pid.rs`: `Pid`, a slot and generation in the 61 bits of `Term::pid`.
//! - `scheduler.rs`: the threads, run queues, next slot, stealing, parking,
//!   and `RunContext`, the door from a process to the runtime.
//! - `outside.rs`: the queue by which threads that are not schedulers (a
//!   distributed node's connections) hand signals to processes.
//! - `timer.rs`, `stats.rs`: timers per scheduler; `--stats` counters.
//!
//! # Plugging in a process
//!
//! The interpreter implements `ProcessBody` for its process struct (heap,
//! stack, private queue with its save position, links, ...), with
//! `Message = heap::MessageBuffer`, and calls `sched::run(config, |pid|
//! main_process)`:
//!
//! ```text
//! impl ProcessBody for Process {
//!     type Message = MessageBuffer;
//!     type Registers = XRegisters;
//!     fn run(&mut self, ctx: &mut RunContext<'_, Self>, x: &mut XRegisters, budget: u32)
//!         -> RunOutcome<MessageBuffer> {
//!         // move ctx.take_signal()s into the private queue (messages) or act
//!         // on them (links, exits, monitors, Timeout(tag) of the current
//!         // receive), run up to `budget` reductions, ctx.charge(used), and
//!         // return Yield (budget used), Wait (receive found nothing) or
//!         // Exit(reason).
//!     }
//!     fn on_exit(&mut self, ctx: &mut RunContext<'_, Self>, reason: &MessageBuffer) {
//!         // send Exit signals to links and Down to monitors via ctx.send.
//!     }
//! }
//! ```
//!
//! Rules for a body:
//! - A receive that returns `Wait` must have looked at its inbox (via
//!   `take_signal` until `None`) during this run step; the scheduler then
//!   sleeps it with the state protocol, or runs it again at once if a signal
//!   arrived meanwhile. It never misses a wake-up.
//! - `receive ... after T`: pick a fresh non-zero tag (a receive
//!   generation), `ctx.set_timer(T, tag)`, return `Wait`. A
//!   `Signal::Timeout(tag)` arrives when it fires; ignore timeouts whose tag
//!   is not the current one, and `ctx.cancel_timer()` when a message ends
//!   the receive. `after 0` needs no timer.
//! - Exit signals are ordinary signals: the body decides (trap_exit or not)
//!   and returns `Exit(reason)` to die; the runtime removes it from the
//!   table (its pid is dead at once) and calls `on_exit`.
//! - `spawn_link`/`spawn_monitor`: build the child's body with the link or
//!   monitor already in it (`ctx.spawn(|child_pid| ...)`), and record the
//!   child on the parent's side; no signal is needed, so nothing can race.
//! - A `Link` or `Monitor` racing its target's exit is never lost: either
//!   `send` says `Delivery::NoProcess` (then the sender answers itself with
//!   `noproc`), or the target's `on_exit` finds it in its inbox. Rarely both
//!   (a push before the exit, its notification after), so a receiver ignores
//!   a `Down` for a monitor it no longer holds and a link exit from a pid it
//!   is no longer linked to, as BEAM does.
//! - Suspending outside a receive (a send to a busy connection of
//!   another node): the body keeps why it is suspended, returns `Wait`
//!   (after taking its signals, as a receive does) and, on every later
//!   run step, asks again before running code; whoever clears the cause
//!   sends `Signal::Resume`, which only wakes it. The state word has no
//!   state for this: to the scheduler a suspended process waits.
//! - The program ends when the main process exits (`Finish::MainExited`),
//!   or at `ctx.halt(status)`, whatever else runs.
//!
//! # Costs (measured with mock processes, `tests/stress.rs`)
//!
//! - Per process, besides its body: one 64-byte allocation (the `Arc`'s
//!   counts and the cell: state word, timer tag, pid, inbox ends, stub
//!   pointer: one cache line), the inbox's 8-byte stub, and a 16-byte table
//!   entry: 88 bytes. A message costs one allocation of 8 bytes plus its
//!   `Signal` while it waits in the inbox. (`tests.rs` asserts these bounds.)
//! - Pid lookup on a send takes a read lock of one of 64 table shards (no
//!   global lock); the send itself is one swap and one `fetch_or`. (A
//!   lock-free lookup with epoch-deferred frees was tried and reverted: the
//!   collector fell behind a spawn-and-exit loop; see the stress test
//!   `exited_processes_are_freed_while_the_program_runs`.)
//! - A run queue is shared with siblings only when it has a backlog (its
//!   oldest process waited a time slice, `scheduler.rs`): hand-offs (ring,
//!   chain, chameneos) stay on one core; parallel work (big-bang, mass
//!   spawns) spreads.
//!
//! # Testing
//!
//! `tests.rs` (unit tests with closure-bodied mock processes),
//! `tests/stress.rs` (its own binary: every scenario under 1, 2 and 4
//! schedulers with a watchdog; `measure_ping_pong_and_spawn_throughput` is
//! an ignored measurement), and `loom_tests.rs`, the model checks of the
//! state word and the inbox:
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --release --lib sched::loom_tests`.

pub mod cell;
pub mod inbox;
pub mod outside;
pub mod pid;
pub mod scheduler;
pub mod send_timer;
pub mod signal;
pub mod state;
pub mod stats;
pub mod table;
pub mod timer;

mod sync;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

pub use cell::ProcessCell;
pub use pid::Pid;
pub use scheduler::{
    CONTEXT_REDS, Config, Delivery, Finish, Finished, RunContext, SCHEDULER_STACK, run,
    run_with_outside,
};
pub use signal::Signal;
pub use stats::{Counters, Stats};
pub use table::{ProcessTable, SystemLimit};

/// What a process body asks the scheduler to do after a run step.
#[derive(Debug)]
pub enum RunOutcome<M> {
    /// The budget is used up (or the process called `erlang:yield`): queue
    /// it at the back.
    Yield,
    /// A receive found nothing: sleep until a signal or a timer wakes it.
    Wait,
    /// The process is done, with this exit reason.
    Exit(M),
}

/// What a process runs: the owned half of a process. The scheduler that
/// holds the run right calls it; no other thread ever touches it.
pub trait ProcessBody: Send + Sized + 'static {
    /// The payload of messages and exit reasons (a `heap::MessageBuffer`).
    type Message: Send + 'static;

    /// Scratch state that belongs to the scheduler, not the process: the X
    /// registers. Each scheduler thread makes one (`Default`) and lends it
    /// to every run step; a body saves the live part before it returns.
    type Registers: Default;

    /// Runs the process for at most `budget` reductions (reporting those
    /// used with `ctx.charge`) and says what happens next.
    fn run(
        &mut self,
        ctx: &mut RunContext<'_, Self>,
        registers: &mut Self::Registers,
        budget: u32,
    ) -> RunOutcome<Self::Message>;

    /// Called once when the process exits, before it leaves the table:
    /// from here on no signal reaches its inbox. A body gives back what it
    /// holds here (its heap, the messages still queued), so that a process
    /// that finds it gone from the table finds its memory back as well.
    fn on_exiting(&mut self, ctx: &mut RunContext<'_, Self>) {
        let _ = ctx;
    }

    /// Called once after the process exited and left the table: send exit
    /// signals to links and `'DOWN'` to monitors; signals still in the inbox
    /// (`ctx.take_signal`) may be answered (a link to a dead process).
    fn on_exit(&mut self, ctx: &mut RunContext<'_, Self>, reason: &Self::Message) {
        let _ = (ctx, reason);
    }
}
