//! loom model checks of the state word and the inbox on their own: every
//! interleaving of a few threads, for the races the protocol must win.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test --lib --release sched::loom_tests`
//! (best in its own target directory: `CARGO_TARGET_DIR=target/loom`).

use loom::sync::Arc;
use loom::thread;

use super::inbox::Inbox;
use super::state::{Notified, StateWord, WaitAttempt};

/// The shared half of a process as the protocol sees it.
struct Process {
    state: StateWord,
    inbox: Inbox<u32>,
}

/// A sender's whole send: push, then notify.
fn send(p: &Process, message: u32) -> Notified {
    p.inbox.push(message);
    p.state.notify()
}

/// The runner's receive: drain the inbox, then try to sleep; rescan while
/// told to. Returns what it received before sleeping.
fn receive_then_sleep(p: &Process) -> Vec<u32> {
    let mut got = Vec::new();
    loop {
        // SAFETY: this thread holds the run right: the only consumer.
        while let Some(m) = unsafe { p.inbox.pop() } {
            got.push(m);
        }
        match p.state.try_wait() {
            WaitAttempt::Sleeping => return got,
            WaitAttempt::Rescan => continue,
        }
    }
}

#[test]
fn a_send_racing_a_receiver_going_to_sleep_is_never_lost() {
    loom::model(|| {
        let p = Arc::new(Process {
            state: StateWord::new_runnable(),
            inbox: Inbox::new(),
        });
        assert!(p.state.begin_run());
        let sender = {
            let p = Arc::clone(&p);
            thread::spawn(move || send(&p, 1))
        };
        let got = receive_then_sleep(&p);
        let notified = sender.join().unwrap();
        // Either the runner saw the message, or it slept first and then the
        // sender (and only it) was told to queue it. (A sender may also wake
        // a runner that already took its message: a harmless extra run.)
        if notified == Notified::Woken {
            assert!(p.state.begin_run(), "the woken process is not runnable");
        }
        if got.is_empty() {
            assert_eq!(notified, Notified::Woken, "the wake-up was lost");
            // SAFETY: we now hold the run right.
            assert_eq!(unsafe { p.inbox.pop() }, Some(1));
        } else {
            assert_eq!(got, vec![1]);
        }
    });
}

#[test]
fn of_two_senders_exactly_one_queues_a_sleeping_process() {
    loom::model(|| {
        let p = Arc::new(Process {
            state: StateWord::new_runnable(),
            inbox: Inbox::new(),
        });
        assert!(p.state.begin_run());
        let senders: Vec<_> = (1..=2)
            .map(|m| {
                let p = Arc::clone(&p);
                thread::spawn(move || send(&p, m))
            })
            .collect();
        let got = receive_then_sleep(&p);
        let woken = senders
            .into_iter()
            .map(|s| s.join().unwrap())
            .filter(|n| *n == Notified::Woken)
            .count();
        assert!(woken <= 1, "the process was queued twice");
        if got.len() < 2 {
            assert_eq!(
                woken, 1,
                "a message waits in a sleeping process no one queued"
            );
            assert!(p.state.begin_run());
            let mut rest = got;
            // SAFETY: we hold the run right.
            while let Some(m) = unsafe { p.inbox.pop() } {
                rest.push(m);
            }
            rest.sort();
            assert_eq!(rest, vec![1, 2]);
        }
    });
}

#[test]
fn two_schedulers_cannot_both_take_the_run_right() {
    loom::model(|| {
        let p = Arc::new(Process {
            state: StateWord::new_waiting(),
            inbox: Inbox::new(),
        });
        assert_eq!(send(&p, 1), Notified::Woken);
        let other = {
            let p = Arc::clone(&p);
            thread::spawn(move || p.state.begin_run())
        };
        let mine = p.state.begin_run();
        let theirs = other.join().unwrap();
        assert!(
            mine ^ theirs,
            "run right taken {} times",
            mine as u8 + theirs as u8
        );
    });
}

#[test]
fn a_send_racing_an_exit_never_queues_the_dead_process() {
    loom::model(|| {
        let p = Arc::new(Process {
            state: StateWord::new_runnable(),
            inbox: Inbox::new(),
        });
        assert!(p.state.begin_run());
        let sender = {
            let p = Arc::clone(&p);
            thread::spawn(move || send(&p, 1))
        };
        p.state.exit();
        let notified = sender.join().unwrap();
        assert_ne!(notified, Notified::Woken, "an exiting process was queued");
        assert!(!p.state.begin_run(), "an exited process ran again");
    });
}

#[test]
fn a_yield_racing_a_send_queues_the_process_once() {
    loom::model(|| {
        let p = Arc::new(Process {
            state: StateWord::new_runnable(),
            inbox: Inbox::new(),
        });
        assert!(p.state.begin_run());
        let sender = {
            let p = Arc::clone(&p);
            thread::spawn(move || send(&p, 1))
        };
        p.state.yield_now(); // the runner queues it itself
        let notified = sender.join().unwrap();
        assert_ne!(
            notified,
            Notified::Woken,
            "a yielded process was queued twice"
        );
        assert!(p.state.begin_run());
    });
}

#[test]
fn the_inbox_keeps_each_senders_order_and_loses_nothing() {
    loom::model(|| {
        let inbox = Arc::new(Inbox::new());
        let senders: Vec<_> = [10u32, 20]
            .into_iter()
            .map(|base| {
                let inbox = Arc::clone(&inbox);
                thread::spawn(move || {
                    inbox.push(base);
                    inbox.push(base + 1);
                })
            })
            .collect();
        let mut got = Vec::new();
        // Consume concurrently with the senders, then the rest after.
        // SAFETY: this thread is the only consumer.
        if let Some(m) = unsafe { inbox.pop() } {
            got.push(m);
        }
        for s in senders {
            s.join().unwrap();
        }
        // SAFETY: as above.
        while let Some(m) = unsafe { inbox.pop() } {
            got.push(m);
        }
        assert_eq!(got.len(), 4, "lost or duplicated: {got:?}");
        for base in [10, 20] {
            let first = got.iter().position(|&m| m == base);
            let second = got.iter().position(|&m| m == base + 1);
            assert!(first < second, "sender {base}'s order broke: {got:?}");
        }
    });
}

#[test]
fn a_consumer_racing_producers_sees_every_value_once_in_order() {
    // A spinning consumer makes the space large: bound the preemptions
    // (three is where most known bugs of this shape show up).
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        let inbox = Arc::new(Inbox::new());
        let senders: Vec<_> = [(10u32, 2u32), (20, 1)]
            .into_iter()
            .map(|(base, count)| {
                let inbox = Arc::clone(&inbox);
                thread::spawn(move || {
                    for i in 0..count {
                        inbox.push(base + i);
                    }
                })
            })
            .collect();
        // Pop while the producers push: the stub leaves and rejoins the list
        // in every interleaving loom finds.
        let mut got = Vec::new();
        while got.len() < 3 {
            // SAFETY: this thread is the only consumer.
            match unsafe { inbox.pop() } {
                Some(m) => got.push(m),
                None => thread::yield_now(),
            }
        }
        for s in senders {
            s.join().unwrap();
        }
        // SAFETY: as above.
        assert!(unsafe { inbox.pop() }.is_none(), "a value came out twice");
        let first = got.iter().position(|&m| m == 10);
        let second = got.iter().position(|&m| m == 11);
        assert!(
            first.is_some() && first < second,
            "sender 10's order broke: {got:?}"
        );
        assert!(got.contains(&20), "a value was lost: {got:?}");
    });
}
