//! The process state word: one atomic that says who may run a process and
//! who must queue it.
//!
//! # The protocol
//!
//! The word holds one of four states in its low two bits plus a `NOTIFIED`
//! bit. **Every transition is one read-modify-write** on the word; a plain
//! store followed by a re-check would be a Dekker pattern and lose wake-ups.
//!
//! | who           | from                              | to                 | operation                 | then                                    |
//! |---------------|-----------------------------------|--------------------|---------------------------|-----------------------------------------|
//! | a sender      | `WAITING`                         | `WAITING+NOTIFIED` | `fetch_or(NOTIFIED)`      | it saw plain `WAITING`: it queues it    |
//! | a sender      | anything else                     | same `+NOTIFIED`   | `fetch_or(NOTIFIED)`      | nothing (someone else runs or queued it)|
//! | a scheduler   | runnable (`RUNNABLE[+N]`, `WAITING+N`) | `RUNNING`     | CAS loop                  | it holds the run right                  |
//! | the runner    | `RUNNING`                         | `WAITING`          | CAS, fails if `NOTIFIED`  | sleeps; the process is in no queue      |
//! | the runner    | `RUNNING+NOTIFIED`                | `RUNNING`          | `swap(RUNNING)`           | rescans its inbox, tries again          |
//! | the runner    | `RUNNING[+N]`                     | `RUNNABLE`         | `swap(RUNNABLE)`          | it queues it (yield)                    |
//! | the runner    | `RUNNING[+N]`                     | `EXITING`          | `swap(EXITING)`           | terminal: no one queues it again        |
//!
//! `WAITING+NOTIFIED` is a runnable state: the sender whose `fetch_or` found
//! plain `WAITING` is the only one that turned it runnable, so the process is
//! queued exactly once. A send is therefore one swap on the inbox and one
//! `fetch_or` here, and nothing more.
//!
//! Why no wake-up is lost: a sender pushes its signal *before* its
//! `fetch_or`. A runner that found its inbox empty then tries `RUNNING ->
//! WAITING`; if any sender's `fetch_or` came after the runner took the run
//! right, `NOTIFIED` is set, the CAS fails, and the runner rescans and sees
//! the signal (the `fetch_or` releases the push, the failed CAS acquires
//! it). If the CAS succeeds, every later sender finds plain `WAITING`
//! and the first of them queues it. Taking the run right clears `NOTIFIED`,
//! which is safe because a runner always looks at its inbox before it waits.
//!
//! Who may touch what: any thread may `notify`; only the holder of the run
//! right (see `cell.rs`) performs the runner's transitions.

use super::sync::{AtomicU32, Ordering};

/// Parked in a receive; in no run queue. Only a sender or a timer wakes it.
const WAITING: u32 = 0;
/// In exactly one run queue (or a scheduler's next slot), not running.
const RUNNABLE: u32 = 1;
/// Running on exactly one scheduler, the holder of the run right.
const RUNNING: u32 = 2;
/// Terminal: the process has exited; signals still pushed are dropped.
const EXITING: u32 = 3;
const STATE_MASK: u32 = 0b11;
/// Set by every sender after its push; cleared when a runner takes the run
/// right or rescans.
const NOTIFIED: u32 = 0b100;
/// Beside `RUNNING`: not a scheduler but another process's BIF holds the
/// run right for a moment, to read the body (`process_info`). A scheduler
/// that pops the process meanwhile waits for the inspection to end instead
/// of dropping it (see `ProcessCell::inspect`).
const INSPECTED: u32 = 0b1000;

/// The state of a process as one word. Concurrent reads and `notify` from
/// any thread; the other transitions only by the scheduler that holds (or is
/// taking) the run right.
#[derive(Debug)]
pub struct StateWord(AtomicU32);

/// What a sender's notification did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notified {
    /// This notification turned a waiting process runnable: the caller must
    /// queue it, and is the only one that does.
    Woken,
    /// The process was runnable or running already; it will see the signal.
    Active,
    /// The process has exited; the signal will never be received.
    Exiting,
}

/// What a runner's attempt to sleep did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitAttempt {
    /// The process now waits and is in no queue; the runner lost the run right.
    Sleeping,
    /// A signal arrived since the last scan: `NOTIFIED` was cleared, the
    /// runner keeps the run right and must rescan its inbox.
    Rescan,
}

/// A coarse reading of the word, for assertions, tests and statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Waiting,
    Runnable,
    Running,
    Exiting,
}

impl StateWord {
    /// A new process starts runnable: its spawner queues it.
    pub fn new_runnable() -> StateWord {
        StateWord(AtomicU32::new(RUNNABLE))
    }

    /// A process starting in a receive (used by tests of the protocol).
    pub fn new_waiting() -> StateWord {
        StateWord(AtomicU32::new(WAITING))
    }

    /// A sender's half of the protocol, called after its push to the inbox.
    pub fn notify(&self) -> Notified {
        // AcqRel: release our push to the runner; acquire so that a waker
        // that queues the process sees everything the runner did before
        // sleeping.
        let before = self.0.fetch_or(NOTIFIED, Ordering::AcqRel);
        match before {
            WAITING => Notified::Woken,
            b if b & STATE_MASK == EXITING => Notified::Exiting,
            _ => Notified::Active,
        }
    }

    /// A scheduler takes the run right of a queued process. Fails (returns
    /// false) unless the process is runnable, so at most one taker wins.
    pub fn begin_run(&self) -> bool {
        let mut current = self.0.load(Ordering::Relaxed);
        loop {
            let runnable = current & STATE_MASK == RUNNABLE || current == WAITING | NOTIFIED;
            if !runnable {
                return false;
            }
            match self.0.compare_exchange_weak(
                current,
                RUNNING,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => current = now,
            }
        }
    }

    /// The runner found nothing to receive and tries to sleep.
    pub fn try_wait(&self) -> WaitAttempt {
        match self
            .0
            .compare_exchange(RUNNING, WAITING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => WaitAttempt::Sleeping,
            Err(_) => {
                // Only NOTIFIED can differ (only the runner changes the state
                // bits while RUNNING). Clear it; the acquire makes the
                // senders' pushes visible to the rescan.
                self.0.swap(RUNNING, Ordering::AcqRel);
                WaitAttempt::Rescan
            }
        }
    }

    /// The runner yields: the process becomes runnable and the runner
    /// queues it.
    pub fn yield_now(&self) {
        self.0.swap(RUNNABLE, Ordering::AcqRel);
    }

    /// The runner exits the process. Terminal.
    pub fn exit(&self) {
        self.0.swap(EXITING, Ordering::AcqRel);
    }

    /// Another process takes the run right of a process that is waiting or
    /// queued, to read its body. `Some(true)` if it was waiting in no queue
    /// (then `end_inspect` may have to queue it), `Some(false)` if it was
    /// queued; `None` if it runs, exits or is inspected already.
    pub fn begin_inspect(&self) -> Option<bool> {
        let mut current = self.0.load(Ordering::Relaxed);
        loop {
            let waiting = current == WAITING;
            let queued = current & STATE_MASK == RUNNABLE || current == WAITING | NOTIFIED;
            if !(waiting || queued) {
                return None;
            }
            match self.0.compare_exchange_weak(
                current,
                RUNNING | INSPECTED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(waiting),
                Err(now) => current = now,
            }
        }
    }

    /// Ends an inspection. A process that was queued is runnable again (its
    /// queue entry is still there); one that was waiting waits again unless
    /// a signal came meanwhile: then it is runnable and, as the sender whose
    /// notification found it "active" did not, the caller must queue it
    /// (returns true).
    pub fn end_inspect(&self, was_waiting: bool) -> bool {
        if !was_waiting {
            self.0.swap(RUNNABLE, Ordering::AcqRel);
            return false;
        }
        match self.0.compare_exchange(
            RUNNING | INSPECTED,
            WAITING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => false,
            Err(_) => {
                self.0.swap(RUNNABLE, Ordering::AcqRel);
                true
            }
        }
    }

    /// Whether another process's BIF is reading the body right now.
    pub fn inspected(&self) -> bool {
        self.0.load(Ordering::Acquire) & INSPECTED != 0
    }

    /// A snapshot of the state; stale as soon as it is read.
    pub fn load(&self) -> State {
        let word = self.0.load(Ordering::Acquire);
        match word & STATE_MASK {
            WAITING if word & NOTIFIED != 0 => State::Runnable,
            WAITING => State::Waiting,
            RUNNABLE => State::Runnable,
            RUNNING => State::Running,
            _ => State::Exiting,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_send_to_a_waiting_process_wakes_it_once() {
        let s = StateWord::new_waiting();
        assert_eq!(s.notify(), Notified::Woken);
        assert_eq!(
            s.notify(),
            Notified::Active,
            "second sender must not queue it again"
        );
        assert_eq!(s.load(), State::Runnable);
        assert!(s.begin_run());
        assert!(!s.begin_run(), "the run right is taken only once");
    }

    #[test]
    fn a_notified_runner_cannot_sleep_and_must_rescan() {
        let s = StateWord::new_runnable();
        assert!(s.begin_run());
        assert_eq!(s.notify(), Notified::Active);
        assert_eq!(s.try_wait(), WaitAttempt::Rescan);
        assert_eq!(s.load(), State::Running);
        assert_eq!(s.try_wait(), WaitAttempt::Sleeping);
        assert_eq!(s.load(), State::Waiting);
    }

    #[test]
    fn exiting_is_terminal() {
        let s = StateWord::new_runnable();
        assert!(s.begin_run());
        s.exit();
        assert_eq!(s.notify(), Notified::Exiting);
        assert!(!s.begin_run());
        assert_eq!(s.load(), State::Exiting);
    }

    #[test]
    fn an_inspected_process_is_not_run_and_a_wake_meanwhile_is_kept() {
        let s = StateWord::new_waiting();
        assert_eq!(s.begin_inspect(), Some(true));
        assert!(!s.begin_run());
        assert!(s.inspected());
        assert_eq!(s.begin_inspect(), None, "one inspector at a time");
        assert_eq!(s.notify(), Notified::Active);
        assert!(s.end_inspect(true), "the inspector queues it");
        assert_eq!(s.load(), State::Runnable);
        assert!(s.begin_run());
        assert_eq!(s.begin_inspect(), None, "a running process is not read");
        assert_eq!(s.try_wait(), WaitAttempt::Sleeping);
        assert_eq!(s.begin_inspect(), Some(true));
        assert!(!s.end_inspect(true));
        assert_eq!(s.load(), State::Waiting);
        assert_eq!(s.notify(), Notified::Woken);
        assert_eq!(s.begin_inspect(), Some(false));
        assert!(!s.end_inspect(false));
        assert!(s.begin_run(), "its queue entry runs it");
    }

    #[test]
    fn a_waiting_process_cannot_be_run_without_a_wake() {
        let s = StateWord::new_waiting();
        assert!(!s.begin_run());
    }
}
