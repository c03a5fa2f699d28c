//! Copying terms between heaps: for messages, and for anything that must
//! outlive its heap.
//!
//! Both walks are iterative: `size_of` keeps an explicit stack, and
//! `copy_term` copies objects shallowly and then scans the copies in the
//! destination (Cheney's trick), so deep terms never recurse on the Rust
//! stack. Sharing inside a term is not preserved (Erlang does not either),
//! and literal terms stay literal: they are never copied.

use super::{Heap, SharedBinary, SystemLimit, budget, relocate_objects};
use crate::term::object::{Kind, header_kind, header_size, is_header, term_fields};
use crate::term::{TAG_BOXED, TAG_CONS, Term};
use std::sync::Arc;

/// Words `t` needs on another heap (0 for immediates and literals).
/// Fails once the count passes the memory budget, so a term with huge
/// sharing cannot make this walk forever.
pub fn size_of(heap: &Heap, t: Term) -> Result<usize, SystemLimit> {
    if t.is_immediate() || t.is_literal() {
        return Ok(0);
    }
    let limit = budget::limit() / 8;
    let mut total = 0usize;
    // Only pointers to heap objects are pushed, so a small flat term
    // (a tuple of immediates) never allocates the stack.
    let mut stack = Vec::new();
    let mut next = Some(t);
    while let Some(t) = next {
        let words = heap.object(t);
        let fields = if t.is_cons() {
            total += 2;
            &words[..2]
        } else {
            let head = words[0];
            total += 1 + header_size(head);
            &words[term_fields(head)]
        };
        for &field in fields {
            if !field.is_immediate() && !field.is_literal() {
                stack.push(field);
            }
        }
        if total > limit {
            return Err(SystemLimit);
        }
        next = stack.pop();
    }
    Ok(total)
}

/// Copies `t` from `src` onto `dst`, which must have `size_of(src, t)`
/// words free. Returns the copy.
pub fn copy_term(src: &Heap, t: Term, dst: &mut Heap) -> Term {
    let copied = cheney(src, t, dst);
    debug_assert!(copied.is_some(), "a heap space never fills");
    copied.unwrap_or(t)
}

/// Where a copy goes: a heap with room made beforehand, or the few words
/// of an inline message, which may fill up.
trait Space {
    fn len(&self) -> usize;
    fn word(&self, at: usize) -> Term;
    fn set(&mut self, at: usize, t: Term);
    /// Appends one object's words; `None` when the space is full.
    fn append(&mut self, words: &[Term]) -> Option<()>;
    /// Takes a reference to an off-heap binary; its index, or `None` when
    /// the space holds no off-heap binaries.
    fn share(&mut self, binary: &Arc<SharedBinary>) -> Option<u64>;
}

impl Space for Heap {
    #[inline]
    fn len(&self) -> usize {
        self.words.len()
    }
    #[inline]
    fn word(&self, at: usize) -> Term {
        self.words[at]
    }
    #[inline]
    fn set(&mut self, at: usize, t: Term) {
        self.words[at] = t;
    }
    #[inline]
    fn append(&mut self, words: &[Term]) -> Option<()> {
        self.words.extend_from_slice(words);
        Some(())
    }
    fn share(&mut self, binary: &Arc<SharedBinary>) -> Option<u64> {
        let index = self.off_heap.len() as u64;
        self.off_heap.push(binary.clone());
        Some(index)
    }
}

/// The copy in Cheney's order: the root object, then each copied object's
/// fields in turn, scanning the destination. `None` if `dst` filled up
/// (what was copied so far is then garbage in `dst`).
#[inline(always)]
fn cheney(src: &Heap, t: Term, dst: &mut impl Space) -> Option<Term> {
    if t.is_immediate() || t.is_literal() {
        return Some(t);
    }
    let start = dst.len();
    let result = shallow_copy(src, t, dst)?;
    let mut scan = start;
    while scan < dst.len() {
        let word = dst.word(scan);
        if is_header(word) {
            for field in term_fields(word) {
                let copied = shallow_copy(src, dst.word(scan + field), dst)?;
                dst.set(scan + field, copied);
            }
            scan += 1 + header_size(word);
        } else {
            let head = shallow_copy(src, dst.word(scan), dst)?;
            dst.set(scan, head);
            let tail = shallow_copy(src, dst.word(scan + 1), dst)?;
            dst.set(scan + 1, tail);
            scan += 2;
        }
    }
    Some(result)
}

/// Copies the one object `t` points at (its fields still point into
/// `src` until the scan reaches them).
#[inline(always)]
fn shallow_copy(src: &Heap, t: Term, dst: &mut impl Space) -> Option<Term> {
    if t.is_immediate() || t.is_literal() {
        return Some(t);
    }
    let words = src.object(t);
    let at = dst.len();
    if t.is_cons() {
        dst.append(&words[..2])?;
        return Some(Term::heap_pointer(TAG_CONS, at));
    }
    let head = words[0];
    dst.append(&words[..1 + header_size(head)])?;
    if header_kind(head) == Kind::ProcBin {
        let index = dst.share(&src.off_heap[words[1].0 as usize])?;
        dst.set(at + 1, Term(index));
    }
    Some(Term::heap_pointer(TAG_BOXED, at))
}

/// Words a message may hold in its buffer, without a heap of its own:
/// enough for the tuples most protocols send (`{met, Pid, Colour}`,
/// `{Ref, Reply}`, a short list), no more than a heap-backed buffer's
/// own size, so a signal is no bigger for it.
pub const INLINE_WORDS: usize = 7;

/// The words of a small message, in the buffer itself.
///
/// Invariant: bit `k` of `pointers` is set exactly when word `k` is a
/// pointer to another of these words (offsets count from the first), so
/// moving the words into a heap shifts just those, without walking the
/// objects.
#[derive(Clone, Copy)]
struct Inline {
    len: u8,
    pointers: u8,
    words: [Term; INLINE_WORDS],
}

const _: () = assert!(INLINE_WORDS <= u8::BITS as usize);

impl Space for Inline {
    #[inline]
    fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    fn word(&self, at: usize) -> Term {
        self.words[at]
    }
    #[inline]
    fn set(&mut self, at: usize, t: Term) {
        self.words[at] = t;
        // Only fields are set (with their copies), and a copied field
        // that is a heap pointer points into these words.
        let pointer = !t.is_immediate() && !t.is_literal();
        let bit = 1u8 << at;
        self.pointers = if pointer {
            self.pointers | bit
        } else {
            self.pointers & !bit
        };
    }
    #[inline]
    fn append(&mut self, words: &[Term]) -> Option<()> {
        let at = self.len as usize;
        let end = at + words.len();
        self.words.get_mut(at..end)?.copy_from_slice(words);
        self.len = end as u8;
        Some(())
    }
    fn share(&mut self, _: &Arc<SharedBinary>) -> Option<u64> {
        None
    }
}

/// A self-contained copy of one term, as a message travels: its own
/// words and references to its off-heap binaries. An immediate (or
/// literal) message needs no words at all; a small one without off-heap
/// binaries keeps its words inline (see `for_send`).
///
/// Invariant: the term's pointers are offsets into the buffer's words
/// (the inline ones or its heap's).
pub struct MessageBuffer {
    store: Store,
    term: Term,
    /// Holds the `MESSAGE_BYTES` of a message sent with `!` (see
    /// `for_send`): given back when the buffer drops unless handed over
    /// to a mailbox first (`hand_over_charge`).
    charged: bool,
}

/// Bytes one message costs the memory budget beyond its words, from its
/// send until it leaves the receiver's mailbox: its inbox node (a 128-byte
/// block, which holds an inline message's words too) and then its slot in
/// the mailbox. Charged so that a flood of messages (even of atoms, which
/// need no words) to a process that does not take them runs into
/// `--max-memory` as `system_limit` in the sender, not into the operating
/// system's limit. Charged through the thread's credit (`budget::charge`),
/// so the send path touches no shared counter.
pub const MESSAGE_BYTES: usize = 128;

impl Drop for MessageBuffer {
    #[inline]
    fn drop(&mut self) {
        if self.charged {
            budget::credit(MESSAGE_BYTES);
        }
    }
}

enum Store {
    /// An immediate or literal term: no words.
    Empty,
    /// Built only by `for_send`, and read only by moving it into a heap
    /// (`take_buffer`, `append_buffer`): `heap()` is `None` for it.
    Inline(Inline),
    Heap(Heap),
}

impl MessageBuffer {
    /// Copies `t` out of `src` onto a heap of its own (or none, for an
    /// immediate), readable in place through `heap()`.
    pub fn copy_from(src: &Heap, t: Term) -> Result<MessageBuffer, SystemLimit> {
        let words = size_of(src, t)?;
        if words == 0 {
            return Ok(MessageBuffer::immediate(t));
        }
        let mut heap = Heap::try_with_words(words)?;
        let term = copy_term(src, t, &mut heap);
        Ok(MessageBuffer {
            store: Store::Heap(heap),
            term,
            charged: false,
        })
    }

    /// Copies `t` out of `src` as a message to another process (`!`),
    /// charging its `MESSAGE_BYTES` (fails past the budget): a term of
    /// up to `INLINE_WORDS` words and no off-heap binary is kept inline,
    /// with no allocation and no reservation for its words (it travels
    /// inside its signal); any other as `copy_from` does.
    #[inline]
    pub fn for_send(src: &Heap, t: Term) -> Result<MessageBuffer, SystemLimit> {
        budget::charge(MESSAGE_BYTES)?;
        let mut buffer = MessageBuffer::copy_for_send(src, t).inspect_err(|_| {
            budget::credit(MESSAGE_BYTES);
        })?;
        buffer.charged = true;
        Ok(buffer)
    }

    #[inline]
    fn copy_for_send(src: &Heap, t: Term) -> Result<MessageBuffer, SystemLimit> {
        if t.is_immediate() || t.is_literal() {
            return Ok(MessageBuffer::immediate(t));
        }
        let mut inline = Inline {
            len: 0,
            pointers: 0,
            words: [Term::NIL; INLINE_WORDS],
        };
        // The message most protocols send, a small tuple of immediates
        // (`{meet, Pid, Colour}`), is its words as they are: no scan.
        if t.is_boxed() {
            let words = src.object(t);
            let head = words[0];
            let n = 1 + header_size(head);
            if header_kind(head) == Kind::Tuple
                && n <= INLINE_WORDS
                && words[1..n]
                    .iter()
                    .all(|w| w.is_immediate() || w.is_literal())
            {
                inline.words[..n].copy_from_slice(&words[..n]);
                inline.len = n as u8;
                return Ok(MessageBuffer {
                    store: Store::Inline(inline),
                    term: Term::heap_pointer(TAG_BOXED, 0),
                    charged: false,
                });
            }
        }
        match cheney(src, t, &mut inline) {
            Some(term) => Ok(MessageBuffer {
                store: Store::Inline(inline),
                term,
                charged: false,
            }),
            None => MessageBuffer::copy_from(src, t),
        }
    }

    /// Hands the message's `MESSAGE_BYTES` over to the mailbox it enters
    /// (which gives them back when the message leaves it): the charge of
    /// `for_send`, or one drawn now, past the limit if need be, for a
    /// buffer built another way (a timer's message).
    #[inline]
    pub fn hand_over_charge(&mut self) {
        if self.charged {
            self.charged = false;
        } else {
            budget::force_charge(MESSAGE_BYTES);
        }
    }

    /// Wraps a heap built for one term (by `binary_to_term`); every
    /// object in it must belong to `term`.
    pub(crate) fn from_heap(heap: Heap, term: Term) -> MessageBuffer {
        if term.is_immediate() || term.is_literal() {
            return MessageBuffer::immediate(term);
        }
        MessageBuffer {
            store: Store::Heap(heap),
            term,
            charged: false,
        }
    }

    /// A buffer holding just an immediate or literal term.
    pub fn immediate(t: Term) -> MessageBuffer {
        debug_assert!(t.is_immediate() || t.is_literal());
        MessageBuffer {
            store: Store::Empty,
            term: t,
            charged: false,
        }
    }

    /// The message, readable through `heap()`.
    pub fn term(&self) -> Term {
        self.term
    }

    /// The buffer's storage, for reading the message in place (e.g. to
    /// print it); `None` when the message needs no words. An inline
    /// buffer (only messages built by `for_send` are) has no heap to read
    /// it through: it is read by moving it into one.
    pub fn heap(&self) -> Option<&Heap> {
        match &self.store {
            Store::Heap(h) => Some(h),
            Store::Inline(_) => {
                debug_assert!(false, "an inline message is read through a heap");
                None
            }
            Store::Empty => None,
        }
    }

    /// The elements of the tuple this buffer holds on a heap of its own
    /// (an ets object), to write immediates into in place: a word that
    /// is an immediate can become another immediate without breaking the
    /// invariant (no pointer is written). `None` for any other buffer.
    pub fn tuple_elements_mut(&mut self) -> Option<&mut [Term]> {
        match &mut self.store {
            Store::Heap(h) if self.term.is_boxed() && !self.term.is_literal() => {
                h.as_tuple(self.term)?;
                Some(h.tuple_elements_mut(self.term))
            }
            _ => None,
        }
    }

    /// A second copy of the message (a signal to several processes).
    pub fn duplicate(&self) -> Result<MessageBuffer, SystemLimit> {
        match &self.store {
            Store::Empty => Ok(MessageBuffer::immediate(self.term)),
            Store::Inline(i) => Ok(MessageBuffer {
                store: Store::Inline(*i),
                term: self.term,
                charged: false,
            }),
            Store::Heap(h) => MessageBuffer::copy_from(h, self.term),
        }
    }

    /// Words the receiver must have free to take the message.
    #[inline]
    pub fn words(&self) -> usize {
        match &self.store {
            Store::Empty => 0,
            Store::Inline(i) => i.len as usize,
            Store::Heap(h) => h.words.len(),
        }
    }
}

impl Heap {
    /// Moves a message into this heap: ensures room (collecting with
    /// `roots` if needed), then copies the buffer's words as one block and
    /// shifts their offsets, a linear pass with no graph walk.
    pub fn receive_buffer(
        &mut self,
        buffer: MessageBuffer,
        roots: &mut [&mut [Term]],
    ) -> Result<Term, SystemLimit> {
        self.receive_buffer_ref(&buffer, roots)
    }

    /// `receive_buffer` of a buffer its owner keeps (and drops).
    #[inline]
    pub fn receive_buffer_ref(
        &mut self,
        buffer: &MessageBuffer,
        roots: &mut [&mut [Term]],
    ) -> Result<Term, SystemLimit> {
        self.ensure(buffer.words(), roots)?;
        Ok(self.take_buffer_ref(buffer))
    }

    /// `receive_buffer_ref` for a message entering a mailbox: past the
    /// budget the heap still grows to take it (`collect_past_budget`),
    /// since its words exist already; fails only if the operating system
    /// refuses the memory.
    #[inline]
    pub fn receive_past_budget(
        &mut self,
        buffer: &MessageBuffer,
        roots: &mut [&mut [Term]],
    ) -> Result<Term, SystemLimit> {
        let words = buffer.words();
        if self.ensure(words, roots).is_err() {
            self.collect_past_budget(words, roots)?;
        }
        Ok(self.take_buffer_ref(buffer))
    }

    /// Copies a buffer's term into this heap, leaving the buffer as it
    /// was (an ets object read out of its table); `buffer.words()` words
    /// must be free. One block copy and a linear relocation pass.
    pub fn append_buffer(&mut self, buffer: &MessageBuffer) -> Term {
        self.take_buffer_ref(buffer)
    }

    /// `receive_buffer` into a heap that already has `buffer.words()`
    /// free (ensured by the caller with its own roots): never collects.
    pub fn take_buffer(&mut self, buffer: MessageBuffer) -> Term {
        self.take_buffer_ref(&buffer)
    }

    fn take_buffer_ref(&mut self, buffer: &MessageBuffer) -> Term {
        let t = buffer.term;
        if t.is_immediate() || t.is_literal() {
            return t;
        }
        debug_assert!(self.words.capacity() - self.words.len() >= buffer.words());
        let base = self.words.len();
        let to_here = |tag, offset| Term::heap_pointer(tag, offset + base);
        match &buffer.store {
            Store::Inline(inline) => {
                // The pointers are known: shift them, copy the rest.
                let n = inline.len as usize;
                if inline.pointers == 0 {
                    // One object (a flat tuple): its words as they are.
                    self.words.extend_from_slice(&inline.words[..n]);
                    return Term::heap_pointer(t.tag(), t.offset() + base);
                }
                if self.words.capacity() - base < n {
                    // Room is made before a message is taken; were it not,
                    // the vector grows rather than the write overflow.
                    self.words.reserve(n);
                }
                let spare = &mut self.words.spare_capacity_mut()[..n];
                for (k, (slot, &w)) in spare.iter_mut().zip(&inline.words[..n]).enumerate() {
                    slot.write(if inline.pointers & (1 << k) != 0 {
                        to_here(w.tag(), w.offset())
                    } else {
                        w
                    });
                }
                // SAFETY: the `n` words past the length were just written,
                // within the capacity.
                unsafe { self.words.set_len(base + n) };
            }
            Store::Heap(h) => {
                self.words.extend_from_slice(&h.words);
                let off_base = self.off_heap.len() as u64;
                if !h.off_heap.is_empty() {
                    self.off_heap.extend(h.off_heap.iter().cloned());
                }
                relocate_objects(&mut self.words[base..], to_here, |index| index + off_base);
            }
            Store::Empty => return t,
        }
        Term::heap_pointer(t.tag(), t.offset() + base)
    }

    /// Copies `t` from `src` into this heap, ensuring room first.
    pub fn copy_in(
        &mut self,
        src: &Heap,
        t: Term,
        roots: &mut [&mut [Term]],
    ) -> Result<Term, SystemLimit> {
        let words = size_of(src, t)?;
        self.ensure(words, roots)?;
        Ok(copy_term(src, t, self))
    }
}
