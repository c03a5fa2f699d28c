//! The private message queue of a process: messages already copied into
//! its heap, oldest first, scanned by `receive` from its save position.
//!
//! A ring buffer, so that taking the oldest message (the common case) and
//! the newest (a reply matched by a fresh reference behind a backlog) are
//! both O(1); only a match in the middle shifts messages. In front of it,
//! one message lives inline (`first`): a process that takes its messages
//! one at a time (a ring node, a server between calls) never allocates the
//! ring buffer, so an empty mailbox holds no storage.
//!
//! Invariant: when `first` holds a message (is not `Term::NONE`) it is the
//! oldest, and `queue` holds the rest in order; when it is vacant, `queue`
//! holds them all. (A message is never `NONE`: that is an internal marker.)
//!
//! The reference mark (BEAM's receive marker): `make_ref` records the
//! queue length beside the new reference's id. No message queued before
//! can contain that reference, so a receive whose every pattern needs it
//! (the compiler proves that and emits `erlang:'$recv_use'(Ref)`) starts
//! its scan at the mark, not at the oldest message. Invariant: `mark`
//! counts the messages queued before the reference was made that are
//! still queued (`remove` keeps it so).
//!
//! Accounting: every message in the mailbox holds `MESSAGE_BYTES` of the
//! memory budget (handed over from its buffer, or drawn by `push`), given
//! back to the thread's credit when it leaves, so a mailbox that only
//! fills runs into `--max-memory`.

use crate::heap::{MESSAGE_BYTES, budget};
use crate::term::Term;
use std::collections::VecDeque;

#[derive(Debug)]
pub struct Mailbox {
    /// The oldest message, or `Term::NONE` (see the module invariant).
    first: Term,
    queue: VecDeque<Term>,
    /// The newest reference's id and the queue length when it was made
    /// (boxed: most processes never make a reference, and an idle one
    /// should not carry the two words).
    mark: Option<Box<(u64, usize)>>,
}

impl Default for Mailbox {
    fn default() -> Mailbox {
        Mailbox {
            first: Term::NONE,
            queue: VecDeque::new(),
            mark: None,
        }
    }
}

impl Mailbox {
    pub fn new() -> Mailbox {
        Mailbox::default()
    }

    #[inline]
    fn has_first(&self) -> bool {
        self.first != Term::NONE
    }

    /// Appends a message the runtime made (the newest), drawing its
    /// charge even past the limit.
    #[inline]
    pub fn push(&mut self, message: Term) {
        budget::force_charge(MESSAGE_BYTES);
        self.push_charged(message);
    }

    /// Appends a message whose `MESSAGE_BYTES` the caller has charged
    /// already (and hands over).
    #[inline]
    pub fn push_charged(&mut self, message: Term) {
        debug_assert!(message != Term::NONE, "NONE is not a message");
        if !self.has_first() && self.queue.is_empty() {
            self.first = message;
        } else {
            self.queue.push_back(message);
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.queue.len() + usize::from(self.has_first())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        !self.has_first() && self.queue.is_empty()
    }

    /// Messages the ring buffer holds without growing (the inline one
    /// not counted).
    pub fn capacity(&self) -> usize {
        self.queue.capacity()
    }

    /// Takes the message at `index` out of the queue.
    #[inline]
    pub fn remove(&mut self, index: usize) -> Option<Term> {
        if let Some(mark) = &mut self.mark
            && index < mark.1
        {
            mark.1 -= 1;
        }
        let index = if self.has_first() {
            if index == 0 {
                budget::credit(MESSAGE_BYTES);
                return Some(std::mem::replace(&mut self.first, Term::NONE));
            }
            index - 1
        } else {
            index
        };
        // The oldest is the one a receive takes most often.
        let taken = if index == 0 {
            self.queue.pop_front()
        } else {
            self.queue.remove(index)
        };
        if taken.is_some() {
            budget::credit(MESSAGE_BYTES);
        }
        taken
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Term) -> bool) {
        let before = self.len();
        if self.has_first() && !keep(&self.first) {
            self.first = Term::NONE;
        }
        self.queue.retain(keep);
        self.mark = None;
        budget::credit((before - self.len()) * MESSAGE_BYTES);
    }

    /// Whether a reference mark is held (an allocation of its own).
    pub fn has_mark(&self) -> bool {
        self.mark.is_some()
    }

    /// Records that the reference `id` is made now.
    #[inline]
    pub fn set_mark(&mut self, id: u64) {
        let len = self.len();
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

    /// The messages as three slices (oldest first), for the collector.
    /// The first is the inline slot, vacant or not (`NONE` is an
    /// immediate, which the collector leaves alone).
    pub fn as_mut_slices(&mut self) -> [&mut [Term]; 3] {
        let (older, newer) = self.queue.as_mut_slices();
        [std::slice::from_mut(&mut self.first), older, newer]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Term> {
        let first = self.has_first().then_some(&self.first);
        first.into_iter().chain(self.queue.iter())
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        budget::credit(self.len() * MESSAGE_BYTES);
    }
}

impl std::ops::Index<usize> for Mailbox {
    type Output = Term;

    #[inline]
    fn index(&self, index: usize) -> &Term {
        if !self.has_first() {
            &self.queue[index]
        } else if index == 0 {
            &self.first
        } else {
            &self.queue[index - 1]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Mailbox;
    use crate::term::Term;

    fn contents(m: &Mailbox) -> Vec<i64> {
        m.iter().map(|t| t.as_small().unwrap()).collect()
    }

    #[test]
    fn messages_keep_their_order_across_the_inline_slot() {
        let mut m = Mailbox::new();
        m.push(Term::small(1));
        assert_eq!(m.capacity(), 0, "one message needs no ring buffer");
        m.push(Term::small(2));
        m.push(Term::small(3));
        assert_eq!(contents(&m), [1, 2, 3]);
        assert_eq!(m.remove(0), Some(Term::small(1)));
        // The slot is vacant but messages wait: a new one goes behind them.
        m.push(Term::small(4));
        assert_eq!(contents(&m), [2, 3, 4]);
        assert_eq!((m[0], m[2], m.len()), (Term::small(2), Term::small(4), 3));
        assert_eq!(m.remove(1), Some(Term::small(3)));
        assert_eq!(m.remove(0), Some(Term::small(2)));
        assert_eq!(m.remove(0), Some(Term::small(4)));
        assert!(m.is_empty());
        m.push(Term::small(5));
        m.push(Term::small(6));
        assert_eq!(m.remove(1), Some(Term::small(6)));
        assert_eq!(contents(&m), [5]);
        m.retain(|t| *t != Term::small(5));
        assert!(m.is_empty());
        assert_eq!(m.remove(0), None);
    }

    #[test]
    fn the_reference_mark_counts_the_inline_message() {
        let mut m = Mailbox::new();
        m.push(Term::small(1));
        m.push(Term::small(2));
        m.set_mark(9);
        assert_eq!(m.mark_of(9), 2);
        m.remove(0);
        assert_eq!(m.mark_of(9), 1);
        assert_eq!(m.mark_of(8), 0);
    }
}
