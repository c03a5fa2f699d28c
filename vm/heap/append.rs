//! Appendable binaries: `<<Acc/binary, ...>>` in a loop takes amortized
//! constant time per append, as BEAM's writable binaries do.
//!
//! A construction whose first segment is a whole bitstring and whose
//! result is too big for the heap puts its result in an off-heap buffer
//! with room to spare (`appendable_binary`), seen through a sub-binary.
//! The next such construction on that sub-binary writes the new segments
//! into the spare room instead of copying (`append_in_place`), when:
//! - the sub-binary ends where the buffer's written bits end (it is the
//!   latest version: an older `Acc` would see its successor's bytes
//!   overwritten, so it is copied instead), and
//! - this heap holds the only reference to the buffer (`Arc::get_mut`):
//!   no other process, message or table can be reading it, so nothing
//!   else observes the bytes change.
//!
//! Every term keeps its value: the bytes below the buffer's `bits` never
//! change, and no term covers the bytes above it.

use super::{Heap, SUB_BINARY_WORDS, SharedBinary, budget};
use crate::term::Term;
use crate::term::bits::BitWriter;
use crate::term::object::Kind;
use std::sync::Arc;

impl Heap {
    /// Whether `t` is the latest version of an appendable binary that only
    /// this heap refers to: its buffer (a ProcBin term) and the sub-binary's
    /// start bit in it.
    pub fn append_target(&self, t: Term) -> Option<(Term, usize)> {
        if !t.is_boxed() || t.is_literal() || self.boxed_kind(t) != Some(Kind::SubBin) {
            return None;
        }
        let words = self.object(t);
        let (base, start, len) = (words[1], words[2].0 as usize, words[3].0 as usize);
        if self.boxed_kind(base) != Some(Kind::ProcBin) || !start.is_multiple_of(8) {
            return None;
        }
        let shared = &self.off_heap[self.object(base)[1].0 as usize];
        let unique = Arc::strong_count(shared) == 1 && Arc::weak_count(shared) == 0;
        (shared.appendable && unique && start + len == shared.bits).then_some((base, start))
    }

    /// Appends in place to the appendable binary whose `append_target`
    /// is `(base, start)` (found since the last collection): `write` adds
    /// the new segments, reading any term of this heap except ones in the
    /// buffer `base` itself (the caller checks), whose bytes are out while
    /// it writes. The result is a new sub-binary of the buffer
    /// (`SUB_BINARY_WORDS` ensured); if `write` fails, the buffer is as
    /// it was.
    pub fn append_in_place<E>(
        &mut self,
        (base, start): (Term, usize),
        write: impl FnOnce(&Heap, &mut BitWriter) -> Result<(), E>,
    ) -> Option<Result<Term, E>> {
        let index = self.object(base)[1].0 as usize;
        let shared = Arc::get_mut(self.off_heap.get_mut(index)?)?;
        let old = shared.bits;
        let mut w = BitWriter {
            bytes: std::mem::take(&mut shared.bytes),
            bits: old,
        };
        let result = write(self, &mut w);
        let shared = Arc::get_mut(self.off_heap.get_mut(index)?)?;
        if result.is_err() {
            w.truncate(old);
        }
        account(shared, w.bytes.capacity());
        let bits = w.bits;
        shared.bytes = w.bytes;
        shared.bits = bits;
        Some(result.map(|()| self.sub_bits_of_base(base, start, bits - start)))
    }

    /// The bitstring `bytes` (its first `bits` bits) in a buffer with room
    /// to grow, so appends to it can be made in place; needs
    /// `APPENDABLE_WORDS`. Builds an ordinary bitstring on a heap that
    /// keeps its binaries inline.
    pub fn appendable_binary(&mut self, mut bytes: Vec<u8>, bits: usize) -> Term {
        if self.inline_binaries {
            return self.bitstring_from_vec(bytes, bits);
        }
        // Doubling keeps a loop of appends amortized linear; BEAM grows
        // its writable binaries the same way.
        bytes.reserve(bytes.len().max(256));
        let reserved = bytes.capacity();
        budget::force_reserve(reserved);
        let shared = Arc::new(SharedBinary {
            bytes,
            bits,
            appendable: true,
            reserved,
        });
        let buffer = self.shared_binary(shared);
        self.sub_bits_of_base(buffer, 0, bits)
    }
}

/// Heap words `appendable_binary` takes: a ProcBin and a sub-binary.
pub const APPENDABLE_WORDS: usize = 2 + SUB_BINARY_WORDS;

/// Draws a grown buffer's new capacity from the budget.
fn account(shared: &mut SharedBinary, capacity: usize) {
    if capacity > shared.reserved {
        budget::force_reserve(capacity - shared.reserved);
        shared.reserved = capacity;
    }
}
