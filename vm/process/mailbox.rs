//! The private message queue of a process: messages already copied into
//! its heap, oldest first, scanned by `receive` from its save position.
//!
//! A ring buffer, so that taking the oldest message (the common case) and
//! the newest (a reply matched by a fresh reference behind a backlog) are
//! both O(1); only a match in the middle shifts messages.

use crate::term::Term;
use std::collections::VecDeque;

#[derive(Default, Debug)]
pub struct Mailbox {
    queue: VecDeque<Term>,
}

impl Mailbox {
    pub fn new() -> Mailbox {
        Mailbox::default()
    }

    /// Appends a message (the newest).
    #[inline]
    pub fn push(&mut self, message: Term) {
        self.queue.push_back(message);
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Takes the message at `index` out of the queue.
    #[inline]
    pub fn remove(&mut self, index: usize) -> Option<Term> {
        self.queue.remove(index)
    }

    pub fn retain(&mut self, keep: impl FnMut(&Term) -> bool) {
        self.queue.retain(keep);
    }

    /// The messages as two slices (oldest first), for the collector.
    pub fn as_mut_slices(&mut self) -> (&mut [Term], &mut [Term]) {
        self.queue.as_mut_slices()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Term> {
        self.queue.iter()
    }
}

impl std::ops::Index<usize> for Mailbox {
    type Output = Term;

    #[inline]
    fn index(&self, index: usize) -> &Term {
        &self.queue[index]
    }
}
