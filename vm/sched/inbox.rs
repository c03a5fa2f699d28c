//! The signal inbox: a lock-free multi-producer single-consumer queue in the
//! manner of Vyukov's intrusive MPSC queue (one atomic swap per push).
//!
//! # Invariants
//!
//! - The queue is a singly linked list from `tail` (the oldest node, a stub
//!   whose value was already taken) to `head` (the newest node).
//! - `head` is written only by `swap`, by any producer; `tail` is read and
//!   written only by the single consumer (see `pop`'s contract).
//! - A node is freed only by the consumer, and only after it has read a
//!   non-null `next` from it. A producer links its node into `prev.next`
//!   after the swap, and `prev.next` is null until then, so no producer ever
//!   touches a freed node.
//! - A producer's value is written before the swap and its link is stored
//!   with release; the consumer loads `next` with acquire, so it sees the
//!   whole value. Pushes from one thread are ordered by their swaps, so one
//!   sender's signals come out in the order sent.
//!
//! Between a producer's swap and its link, the consumer sees the queue end
//! at the producer's predecessor (a later push may already be linked behind
//! it). That is harmless for the state protocol: the producer notifies only
//! after linking, so the consumer is told again once the link is there.

use std::cell::UnsafeCell;
use std::ptr;

use super::sync::{AtomicPtr, Ordering};

struct Node<T> {
    next: AtomicPtr<Node<T>>,
    value: Option<T>,
}

impl<T> Node<T> {
    fn boxed(value: Option<T>) -> *mut Node<T> {
        Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(ptr::null_mut()),
            value,
        }))
    }
}

/// A process's inbox of signals. Any thread pushes; only the owner pops.
pub struct Inbox<T> {
    /// The newest node. Swapped by every producer.
    head: AtomicPtr<Node<T>>,
    /// The oldest node (a stub with no value). Read and written only by the
    /// consumer.
    tail: UnsafeCell<*mut Node<T>>,
}

// SAFETY: values move from producers to the consumer, so T must be Send.
// `head` is atomic; `tail` is touched only by the one consumer at a time
// that `pop`'s contract requires.
unsafe impl<T: Send> Send for Inbox<T> {}
// SAFETY: as above: shared access is pushes (atomic) and the contract-bound
// single consumer.
unsafe impl<T: Send> Sync for Inbox<T> {}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Inbox<T> {
    pub fn new() -> Inbox<T> {
        let stub = Node::boxed(None);
        Inbox {
            head: AtomicPtr::new(stub),
            tail: UnsafeCell::new(stub),
        }
    }

    /// Appends a value. Lock-free: one allocation and one atomic swap.
    pub fn push(&self, value: T) {
        let node = Node::boxed(Some(value));
        let prev = self.head.swap(node, Ordering::AcqRel);
        // SAFETY: `prev` came from `head`, so it is in the list and its
        // `next` is null (it was the newest node); the consumer frees a node
        // only after reading a non-null `next` from it, so `prev` is alive.
        unsafe { (*prev).next.store(node, Ordering::Release) };
    }

    /// Takes the oldest value, or `None` if no (fully linked) value is there.
    ///
    /// # Safety
    /// At most one thread at a time may call `pop` on this inbox: the owner
    /// of the process, which holds its run right (see `state.rs`).
    pub unsafe fn pop(&self) -> Option<T> {
        // SAFETY: the caller is the only consumer, so `tail` is ours; the
        // tail node is alive (only we free nodes, and only past it).
        unsafe {
            let tail = *self.tail.get();
            let next = (*tail).next.load(Ordering::Acquire);
            if next.is_null() {
                return None;
            }
            *self.tail.get() = next;
            let value = (*next).value.take();
            drop(Box::from_raw(tail));
            value
        }
    }

    /// Whether a pushed, linked value is waiting. Exact only for the
    /// consumer; a hint for anyone else.
    ///
    /// # Safety
    /// As for `pop`: called only by the consumer.
    pub unsafe fn is_empty(&self) -> bool {
        // SAFETY: as in `pop`.
        unsafe { (**self.tail.get()).next.load(Ordering::Acquire).is_null() }
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        // `&mut self`: no producer or consumer is left. Walk and free, with a
        // loop rather than recursion, however long the list is.
        let mut node = *self.tail.get_mut();
        while !node.is_null() {
            // SAFETY: every node from tail on is alive and owned by the list.
            let boxed = unsafe { Box::from_raw(node) };
            node = boxed.next.load(Ordering::Relaxed);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn values_come_out_in_the_order_pushed() {
        let q = Inbox::new();
        for i in 0..100 {
            q.push(i);
        }
        let mut out = Vec::new();
        // SAFETY: this test is the only consumer.
        while let Some(v) = unsafe { q.pop() } {
            out.push(v);
        }
        assert_eq!(out, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn dropping_a_full_inbox_frees_every_value() {
        let token = Arc::new(());
        let q = Inbox::new();
        for _ in 0..10 {
            q.push(Arc::clone(&token));
        }
        // SAFETY: only consumer.
        drop(unsafe { q.pop() });
        drop(q);
        assert_eq!(
            Arc::strong_count(&token),
            1,
            "the inbox leaked or double-freed values"
        );
    }

    #[test]
    fn many_producers_lose_nothing_and_keep_each_senders_order() {
        let q = Arc::new(Inbox::new());
        let producers: Vec<_> = (0..4u64)
            .map(|p| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    for i in 0..20_000u64 {
                        q.push((p, i));
                    }
                })
            })
            .collect();
        let mut next = [0u64; 4];
        let mut got = 0;
        while got < 80_000 {
            // SAFETY: this thread is the only consumer.
            match unsafe { q.pop() } {
                Some((p, i)) => {
                    assert_eq!(next[p as usize], i, "sender {p}'s order broke");
                    next[p as usize] += 1;
                    got += 1;
                }
                None => std::hint::spin_loop(),
            }
        }
        for p in producers {
            p.join().unwrap();
        }
        // SAFETY: only consumer.
        assert!(unsafe { q.pop() }.is_none());
    }
}
