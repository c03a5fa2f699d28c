//! Copying terms between heaps: for messages, and for anything that must
//! outlive its heap.
//!
//! Both walks are iterative: `size_of` keeps an explicit stack, and
//! `copy_term` copies objects shallowly and then scans the copies in the
//! destination (Cheney's trick), so deep terms never recurse on the Rust
//! stack. Sharing inside a term is not preserved (Erlang does not either),
//! and literal terms stay literal: they are never copied.

use super::{Heap, SystemLimit, budget, relocate_objects};
use crate::term::object::{Kind, header_kind, header_size, is_header, term_fields};
use crate::term::{TAG_BOXED, TAG_CONS, Term};

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
    if t.is_immediate() || t.is_literal() {
        return t;
    }
    let start = dst.words.len();
    let result = shallow_copy(src, t, dst);
    let mut scan = start;
    while scan < dst.words.len() {
        let word = dst.words[scan];
        if is_header(word) {
            for field in term_fields(word) {
                let copied = shallow_copy(src, dst.words[scan + field], dst);
                dst.words[scan + field] = copied;
            }
            scan += 1 + header_size(word);
        } else {
            let head = shallow_copy(src, dst.words[scan], dst);
            dst.words[scan] = head;
            let tail = shallow_copy(src, dst.words[scan + 1], dst);
            dst.words[scan + 1] = tail;
            scan += 2;
        }
    }
    result
}

/// Copies the one object `t` points at (its fields still point into
/// `src` until the scan reaches them).
fn shallow_copy(src: &Heap, t: Term, dst: &mut Heap) -> Term {
    if t.is_immediate() || t.is_literal() {
        return t;
    }
    let words = src.object(t);
    let at = dst.words.len();
    if t.is_cons() {
        dst.words.extend_from_slice(&words[..2]);
        return Term::heap_pointer(TAG_CONS, at);
    }
    let head = words[0];
    dst.words.extend_from_slice(&words[..1 + header_size(head)]);
    if header_kind(head) == Kind::ProcBin {
        let binary = src.off_heap[words[1].0 as usize].clone();
        dst.words[at + 1] = Term(dst.off_heap.len() as u64);
        dst.off_heap.push(binary);
    }
    Term::heap_pointer(TAG_BOXED, at)
}

/// A self-contained copy of one term, as a message travels: its own
/// words and references to its off-heap binaries. An immediate (or
/// literal) message needs no words at all.
pub struct MessageBuffer {
    heap: Option<Heap>,
    term: Term,
}

impl MessageBuffer {
    /// Copies `t` out of `src`.
    pub fn copy_from(src: &Heap, t: Term) -> Result<MessageBuffer, SystemLimit> {
        let words = size_of(src, t)?;
        if words == 0 {
            return Ok(MessageBuffer {
                heap: None,
                term: t,
            });
        }
        let mut heap = Heap::try_with_words(words)?;
        let term = copy_term(src, t, &mut heap);
        Ok(MessageBuffer {
            heap: Some(heap),
            term,
        })
    }

    /// Wraps a heap built for one term (by `binary_to_term`); every
    /// object in it must belong to `term`.
    pub(crate) fn from_heap(heap: Heap, term: Term) -> MessageBuffer {
        if term.is_immediate() || term.is_literal() {
            return MessageBuffer { heap: None, term };
        }
        MessageBuffer {
            heap: Some(heap),
            term,
        }
    }

    /// A buffer holding just an immediate or literal term.
    pub fn immediate(t: Term) -> MessageBuffer {
        debug_assert!(t.is_immediate() || t.is_literal());
        MessageBuffer {
            heap: None,
            term: t,
        }
    }

    /// The message, readable through `heap()`.
    pub fn term(&self) -> Term {
        self.term
    }

    /// The buffer's storage, for reading the message in place (e.g. to
    /// print it); `None` when the message needs no words.
    pub fn heap(&self) -> Option<&Heap> {
        self.heap.as_ref()
    }

    /// Words the receiver must have free to take the message.
    pub fn words(&self) -> usize {
        self.heap.as_ref().map_or(0, |h| h.words.len())
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
        self.ensure(buffer.words(), roots)?;
        Ok(self.append_buffer(&buffer))
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
        let Some(src) = &buffer.heap else {
            return buffer.term;
        };
        debug_assert!(self.words.capacity() - self.words.len() >= src.words.len());
        let base = self.words.len();
        let off_base = self.off_heap.len() as u64;
        self.words.extend_from_slice(&src.words);
        self.off_heap.extend(src.off_heap.iter().cloned());
        relocate_objects(
            &mut self.words[base..],
            |tag, offset| Term::heap_pointer(tag, offset + base),
            |index| index + off_base,
        );
        let t = buffer.term;
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
