//! The private message queue of a process: messages already copied into
//! its heap, oldest first, scanned by `receive` from its save position.
//!
//! A ring buffer, so that taking the oldest message (the common case) and
//! the newest (a reply matched by a fresh reference behind a backlog) are
//! both O(1); only a match in the middle shifts messages.
//!
//! The reference mark (BEAM's receive marker): `make_ref` records the
//! queue length beside the new reference's id. No message queued before
//! can contain that reference, so a receive whose every pattern needs it
//! (the compiler proves that and emits `erlang:'$recv_use'(Ref)`) starts
//! its scan at the mark, not at the oldest message. Invariant: `mark`
//! counts the messages queued before the reference was made that are
//! still queued (`remove` keeps it so).

use crate::term::Term;
use std::collections::VecDeque;

#[derive(Default, Debug)]
pub struct Mailbox {
    queue: VecDeque<Term>,
    /// The newest reference's id and the queue length when it was made
    /// (boxed: most processes never make a reference, and an idle one
    /// should not carry the two words).
    mark: Option<Box<(u64, usize)>>,
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

    /// Messages the storage holds without growing.
    pub fn capacity(&self) -> usize {
        self.queue.capacity()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Takes the message at `index` out of the queue.
    #[inline]
    pub fn remove(&mut self, index: usize) -> Option<Term> {
        if let Some(mark) = &mut self.mark
            && index < mark.1
        {
            mark.1 -= 1;
        }
        self.queue.remove(index)
    }

    pub fn retain(&mut self, keep: impl FnMut(&Term) -> bool) {
        self.queue.retain(keep);
        self.mark = None;
    }

    /// Whether a reference mark is held (an allocation of its own).
    pub fn has_mark(&self) -> bool {
        self.mark.is_some()
    }

    /// Records that the reference `id` is made now.
    #[inline]
    pub fn set_mark(&mut self, id: u64) {
        let len = self.queue.len();
        match &mut self.mark {
            Some(mark) => **mark = (id, len),
            None => self.mark = Some(Box::new((id, len))),
        }
    }

    /// Where a scan for messages holding reference `id` may start: after
    /// every message queued before it was made (0 if `id` is not marked).
    #[inline]
    pub fn mark_of(&self, id: u64) -> usize {
        match self.mark.as_deref() {
            Some(&(marked, at)) if marked == id => at,
            _ => 0,
        }
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
