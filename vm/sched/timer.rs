//! Timers for `receive ... after` and `timer:sleep`: a binary heap per
//! scheduler of (deadline, process, tag), cancelled lazily by tag.
//!
//! A timer does not hold its process: it names it by pid, so a process that
//! dies with a timer pending is freed at once and the timer finds no one.
//! A timer whose tag is no longer its process's current tag (the receive
//! ended by a message) fires into nothing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::pid::Pid;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timer {
    /// Nanoseconds on the VM's clock.
    pub deadline: u64,
    /// Order of setting, so equal deadlines fire first-set first.
    pub sequence: u64,
    pub pid: Pid,
    pub tag: u64,
}

/// One scheduler's pending timers, earliest first.
#[derive(Default)]
pub struct TimerHeap {
    heap: BinaryHeap<Reverse<Timer>>,
    sequence: u64,
}

impl TimerHeap {
    pub fn insert(&mut self, deadline: u64, pid: Pid, tag: u64) {
        self.sequence += 1;
        self.heap.push(Reverse(Timer {
            deadline,
            sequence: self.sequence,
            pid,
            tag,
        }));
    }

    /// The earliest deadline, if any timer is pending.
    pub fn next_deadline(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(t)| t.deadline)
    }

    /// Takes the earliest timer if it is due at `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Timer> {
        match self.heap.peek() {
            Some(Reverse(t)) if t.deadline <= now => self.heap.pop().map(|Reverse(t)| t),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_in_deadline_order_then_in_order_set() {
        let mut h = TimerHeap::default();
        let p = Pid::new(1, 0);
        h.insert(30, p, 1);
        h.insert(10, p, 2);
        h.insert(10, p, 3);
        assert_eq!(h.next_deadline(), Some(10));
        assert!(h.pop_due(9).is_none(), "a timer fired before its deadline");
        let tags: Vec<u64> = std::iter::from_fn(|| h.pop_due(100))
            .map(|t| t.tag)
            .collect();
        assert_eq!(tags, vec![2, 3, 1]);
    }
}
