//! The signal inbox: Vyukov's intrusive multi-producer single-consumer
//! queue (one atomic swap per push), with a heap-allocated 8-byte stub.
//!
//! # Invariants
//!
//! - The queue is a singly linked list of `Link`s from `tail` (the oldest)
//!   to `head` (the newest). Every link is the first field of a `Node<T>`
//!   holding an unreceived value, except the `stub`, which holds none and is
//!   in the list at most once.
//! - `head` is written only by `swap`, by any producer (and by the consumer
//!   when it re-inserts the stub); `tail` is read and written only by the
//!   single consumer (see `pop`'s contract).
//! - A node is freed only by the consumer, and only after it has read a
//!   non-null `next` from it (so no producer is still linking onto it). A
//!   producer links its node into `prev.next` after the swap, and
//!   `prev.next` is null until then.
//! - A producer's value is written before the swap and the link is stored
//!   with release; the consumer loads `next` with acquire, so it sees the
//!   whole value. Pushes from one thread are ordered by their swaps, so one
//!   sender's signals come out in the order sent.
//!
//! An idle inbox costs three words and the stub, not a whole node: that is
//! why the stub is separate from the nodes (the non-intrusive variant keeps
//! a consumed node of full size as its stub).
//!
//! Nodes come from a per-thread cache of fixed-size blocks (`blocks`):
//! a node is allocated by the sender and freed by the receiver, one for
//! one, which is the pattern a general allocator serves worst (mimalloc
//! takes its slow path on nearly every such allocation).
//!
//! Between a producer's swap and its link the consumer sees the queue end
//! early (and `pop` says `None` though a later push may be linked). That is
//! harmless for the state protocol: the producer notifies only after
//! linking, so the consumer is told again once the link is there.

use std::cell::UnsafeCell;
use std::ptr;

use super::sync::{AtomicPtr, Ordering};

struct Link {
    next: AtomicPtr<Link>,
}

/// A value and its link; `link` first, so a `*mut Link` of a node is a
/// `*mut Node<T>`.
#[repr(C)]
struct Node<T> {
    link: Link,
    value: T,
}

/// A process's inbox of signals. Any thread pushes; only the owner pops.
pub struct Inbox<T> {
    /// The newest link. Swapped by every producer.
    head: AtomicPtr<Link>,
    /// The oldest link. Read and written only by the consumer.
    tail: UnsafeCell<*mut Link>,
    /// The stub link, owned by the inbox for its whole life.
    stub: *mut Link,
    _values: std::marker::PhantomData<T>,
}

// SAFETY: values move from producers to the consumer, so T must be Send.
// `head` is atomic; `tail` and the stub's re-insertion are done only by the
// one consumer at a time that `pop`'s contract requires.
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
        let stub = Box::into_raw(Box::new(Link {
            next: AtomicPtr::new(ptr::null_mut()),
        }));
        Inbox {
            head: AtomicPtr::new(stub),
            tail: UnsafeCell::new(stub),
            stub,
            _values: std::marker::PhantomData,
        }
    }

    /// Appends a value. Lock-free: one block from the cache (or one
    /// allocation) and one atomic swap.
    pub fn push(&self, value: T) {
        let node = blocks::alloc::<Node<T>>();
        // SAFETY: a fresh block with the layout of a node, not yet shared.
        unsafe {
            node.write(Node {
                link: Link {
                    next: AtomicPtr::new(ptr::null_mut()),
                },
                value,
            });
            self.push_link(node.cast::<Link>());
        }
    }

    /// # Safety
    /// `link` is a fresh node's link, or the stub while it is out of the
    /// list (then only the consumer calls this); its `next` is null.
    unsafe fn push_link(&self, link: *mut Link) {
        let prev = self.head.swap(link, Ordering::AcqRel);
        // SAFETY: `prev` came from `head`, so it is in the list and its
        // `next` is null (it was the newest link); the consumer frees or
        // recycles a link only after reading a non-null `next` from it, so
        // `prev` is alive and ours to link.
        unsafe { (*prev).next.store(link, Ordering::Release) };
    }

    /// Takes the oldest value, or `None` if no (fully linked) value is there.
    ///
    /// # Safety
    /// At most one thread at a time may call `pop` on this inbox: the owner
    /// of the process, which holds its run right (see `state.rs`).
    pub unsafe fn pop(&self) -> Option<T> {
        // SAFETY: as the caller promises; the node is ours once unlinked.
        unsafe {
            let node = self.unlink()?;
            let value = ptr::addr_of!((*node).value).read();
            blocks::free(node);
            Some(value)
        }
    }

    /// Takes the oldest node out of the list: the caller owns it (its
    /// value and its block).
    ///
    /// # Safety
    /// As for `pop`.
    #[inline]
    unsafe fn unlink(&self) -> Option<*mut Node<T>> {
        // SAFETY: the caller is the only consumer, so `tail` is ours, and
        // every link from `tail` on is alive (only we free links, and only
        // links we have passed).
        unsafe {
            let mut tail = *self.tail.get();
            let mut next = (*tail).next.load(Ordering::Acquire);
            if tail == self.stub {
                if next.is_null() {
                    return None;
                }
                // Step over the stub; it is out of the list now.
                *self.tail.get() = next;
                tail = next;
                next = (*next).next.load(Ordering::Acquire);
            }
            if next.is_null() {
                // `tail` is the last linked node. Unless a producer is
                // between its swap and its link, put the stub behind it, so
                // that `tail` gets a successor and can be taken.
                if tail != self.head.load(Ordering::Acquire) {
                    return None;
                }
                (*self.stub).next.store(ptr::null_mut(), Ordering::Relaxed);
                self.push_link(self.stub);
                next = (*tail).next.load(Ordering::Acquire);
                if next.is_null() {
                    return None;
                }
            }
            *self.tail.get() = next;
            prefetch(next);
            // `tail` is a node (not the stub) we have passed: take it.
            Some(tail.cast::<Node<T>>())
        }
    }

    /// Takes the oldest value as `pop` does, but leaves it in its node:
    /// the consumer reads it in place, and the node goes back to the cache
    /// when the handle drops (no copy of a large value on the way out).
    ///
    /// # Safety
    /// As for `pop`.
    #[inline]
    pub unsafe fn pop_in_place(&self) -> Option<Popped<T>> {
        // SAFETY: as for `pop`; `unlink` hands over a node out of the list.
        unsafe { self.unlink().map(|node| Popped { node }) }
    }

    /// Whether no value is waiting. Exact only for the consumer (up to a
    /// producer between its swap and its link).
    ///
    /// # Safety
    /// As for `pop`: called only by the consumer.
    pub unsafe fn is_empty(&self) -> bool {
        // SAFETY: as in `pop`.
        unsafe {
            let tail = *self.tail.get();
            tail == self.stub && (*tail).next.load(Ordering::Acquire).is_null()
        }
    }
}

/// Asks the processor to fetch the node `link` (the next one `unlink`
/// takes) while the caller deals with the one just taken. A node was
/// written by its sender on another core or long ago, so reading its
/// `next` missed the cache on nearly every pop: a quarter of big-bang's
/// time went to that one load. Two cache lines: a node with an inline
/// message fills a 128-byte block.
#[inline(always)]
fn prefetch(link: *mut Link) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint; it never faults, even on an
    // address that is not mapped.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(link.cast::<i8>());
        _mm_prefetch::<_MM_HINT_T0>(link.cast::<i8>().wrapping_add(64));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = link;
}

impl<T> Inbox<T> {
    /// Visits the values waiting, oldest first, without taking them.
    ///
    /// # Safety
    /// As for `pop`: called only by the consumer (nodes from `tail` on stay
    /// alive because only the consumer frees them).
    pub unsafe fn peek(&self, mut visit: impl FnMut(&T)) {
        // SAFETY: as in `pop`; we only read, and stop at the first
        // unlinked `next`.
        unsafe {
            let mut link = *self.tail.get();
            while !link.is_null() {
                if link != self.stub {
                    visit(&(*link.cast::<Node<T>>()).value);
                }
                link = (*link).next.load(Ordering::Acquire);
            }
        }
    }
}

impl<T> Drop for Inbox<T> {
    fn drop(&mut self) {
        // `&mut self`: no producer or consumer is left. Walk and free, with a
        // loop rather than recursion, however long the list is.
        let mut link = *self.tail.get_mut();
        while !link.is_null() {
            // SAFETY: every link from tail on is alive and owned by the
            // list; all but the stub are nodes.
            unsafe {
                let next = (*link).next.load(Ordering::Relaxed);
                if link != self.stub {
                    let node = link.cast::<Node<T>>();
                    ptr::drop_in_place(node);
                    blocks::free(node);
                }
                link = next;
            }
        }
        // SAFETY: the stub was made by `Box::into_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.stub) });
    }
}

/// A value taken from an inbox, still in its node: read it in place
/// (`Deref`), or move it out (`into_inner`); dropping the handle drops the
/// value and gives the node back.
///
/// Invariant: `node` is a node unlinked by `pop_in_place`, owned by this
/// handle alone, with its value initialised.
pub struct Popped<T> {
    node: *mut Node<T>,
}

impl<T> Popped<T> {
    /// The value, moved out; the node goes back.
    #[inline]
    pub fn into_inner(self) -> T {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the handle owns the node and its value (see the type's
        // invariant); `this` is never dropped, so the value is read once.
        unsafe {
            let value = ptr::addr_of!((*this.node).value).read();
            blocks::free(this.node);
            value
        }
    }
}

impl<T> std::ops::Deref for Popped<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: as in the type's invariant.
        unsafe { &(*self.node).value }
    }
}

impl<T> std::ops::DerefMut for Popped<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in the type's invariant: the handle alone owns the node.
        unsafe { &mut (*self.node).value }
    }
}

impl<T> Drop for Popped<T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: as in the type's invariant; dropped once, here.
        unsafe {
            ptr::drop_in_place(ptr::addr_of_mut!((*self.node).value));
            blocks::free(self.node);
        }
    }
}

/// The node allocator: blocks of one size, kept per thread for reuse.
///
/// Invariant: every block in a cache was allocated with `BLOCK` and is
/// owned by nobody else. A node type that does not fit a block (none the
/// VM uses; a unit test checks the signal's) goes to the global allocator.
/// At most `KEEP` blocks stay cached per thread; the cache frees them when
/// its thread ends. Under loom, every node goes to the global allocator.
mod blocks {
    use std::alloc::Layout;
    #[cfg(not(loom))]
    use std::cell::RefCell;

    pub const BLOCK: Layout = match Layout::from_size_align(128, 16) {
        Ok(layout) => layout,
        Err(_) => panic!("a valid layout"),
    };
    #[cfg(not(loom))]
    const KEEP: usize = 1024;

    #[cfg(not(loom))]
    struct Cache(Vec<*mut u8>);

    #[cfg(not(loom))]
    impl Drop for Cache {
        fn drop(&mut self) {
            for &block in &self.0 {
                // SAFETY: allocated with BLOCK and owned by the cache.
                unsafe { std::alloc::dealloc(block, BLOCK) };
            }
        }
    }

    #[cfg(not(loom))]
    thread_local! {
        static CACHE: RefCell<Cache> = const { RefCell::new(Cache(Vec::new())) };
    }

    pub(super) const fn fits<N>() -> bool {
        std::mem::size_of::<N>() <= BLOCK.size() && std::mem::align_of::<N>() <= BLOCK.align()
    }

    /// Uninitialised room for one `N`.
    #[inline]
    pub fn alloc<N>() -> *mut N {
        if !fits::<N>() {
            let layout = Layout::new::<N>();
            // SAFETY: a node's layout is never zero-sized (it has a link).
            let p = unsafe { std::alloc::alloc(layout) };
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            return p.cast();
        }
        #[cfg(not(loom))]
        if let Ok(Some(block)) = CACHE.try_with(|c| c.borrow_mut().0.pop()) {
            return block.cast();
        }
        // SAFETY: BLOCK is not zero-sized.
        let p = unsafe { std::alloc::alloc(BLOCK) };
        if p.is_null() {
            std::alloc::handle_alloc_error(BLOCK);
        }
        p.cast()
    }

    /// Gives back room `alloc::<N>` made (its value already dropped or
    /// moved out).
    ///
    /// # Safety
    /// `p` came from `alloc::<N>` and is not used again.
    #[inline]
    pub unsafe fn free<N>(p: *mut N) {
        let p = p.cast::<u8>();
        if !fits::<N>() {
            // SAFETY: allocated with this layout by `alloc`.
            unsafe { std::alloc::dealloc(p, Layout::new::<N>()) };
            return;
        }
        #[cfg(not(loom))]
        {
            let kept = CACHE.try_with(|c| {
                let mut c = c.borrow_mut();
                if c.0.len() < KEEP {
                    c.0.push(p);
                    true
                } else {
                    false
                }
            });
            if kept == Ok(true) {
                return;
            }
        }
        // SAFETY: allocated with BLOCK by `alloc`.
        unsafe { std::alloc::dealloc(p, BLOCK) };
    }
}

/// Whether the inbox's nodes for `T` come from the block cache (a test
/// of the signal type the VM sends).
#[cfg(test)]
pub fn node_fits_block<T>() -> bool {
    blocks::fits::<Node<T>>()
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
    fn pushes_and_pops_interleaved_keep_order_across_stub_reuse() {
        let q = Inbox::new();
        let mut out = Vec::new();
        let mut next = 0;
        // Empty, one, two, and back to empty, several times over, so the
        // stub leaves and rejoins the list.
        for batch in [1, 2, 1, 3, 1, 0, 5] {
            for _ in 0..batch {
                q.push(next);
                next += 1;
            }
            // SAFETY: this test is the only consumer.
            unsafe {
                if let Some(v) = q.pop() {
                    out.push(v);
                }
                assert_eq!(q.is_empty(), out.len() == next);
            }
        }
        // SAFETY: only consumer.
        while let Some(v) = unsafe { q.pop() } {
            out.push(v);
        }
        assert_eq!(out, (0..next).collect::<Vec<_>>());
        // SAFETY: only consumer.
        assert!(unsafe { q.is_empty() });
    }

    #[test]
    fn values_read_in_place_come_out_in_order_and_are_dropped_once() {
        let token = Arc::new(());
        let q = Inbox::new();
        for i in 0..5 {
            q.push((i, Arc::clone(&token)));
        }
        // SAFETY (each pop below): this test is the only consumer.
        let first = unsafe { q.pop_in_place() }.unwrap();
        assert_eq!(first.0, 0);
        drop(first);
        let second = unsafe { q.pop_in_place() }.unwrap().into_inner();
        assert_eq!(second.0, 1);
        drop(second);
        assert_eq!(unsafe { q.pop() }.map(|v| v.0), Some(2));
        let rest: Vec<_> = std::iter::from_fn(|| unsafe { q.pop_in_place() })
            .map(|p| p.0)
            .collect();
        assert_eq!(rest, [3, 4]);
        assert_eq!(
            Arc::strong_count(&token),
            1,
            "a value leaked or was dropped twice"
        );
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
