//! The process heap: bump allocation, and a Cheney copying collector run
//! only at safepoints.
//!
//! Invariant: after a collection nothing reachable from the roots points
//! into from-space; every heap term points at an object inside `words`
//! (below the top), and every ProcBin's index is valid in `off_heap`.
//! Literal terms (tag bit `L`) point into the global literal area and are
//! leaves for the collector and the copier.
//!
//! How to use it (the interpreter's contract):
//! - Before code that allocates, call `ensure(words, roots)` with every
//!   live term as a root (X registers, stack slots, message queue,
//!   dictionary...). It may collect, which moves objects and rewrites the
//!   roots in place; terms held anywhere else are stale afterwards.
//! - Then call the constructors (`cons`, `tuple`, `float`, ...), which
//!   assume the space is there. The `words_for_*` functions and constants
//!   say how much to ensure. (If too little was ensured the heap still
//!   grows safely, only outside the budget; debug builds assert.)
//! - Read terms with `view`, or the fast helpers `cons_parts`,
//!   `tuple_elements`, `float_value`; they work for heap and literal terms.
//!
//! Sizing: a heap starts empty, with no allocation, and gets its first
//! words (at least `MIN_HEAP_WORDS`) at the first `ensure` that needs
//! any; a process that only passes immediates (a ring node) never
//! allocates one. A collection copies into
//! a new space big enough for everything plus `need`; afterwards the heap
//! grows when the live data fill more than half of it, to four times the
//! live data (past 2K words: more than 3/4, to twice), and shrinks when they
//! fill less than a sixteenth (an eighth), so its size follows the live
//! data and a small heap churning short-lived data copies at most a word
//! per word allocated. A heap
//! that keeps collecting at its floor raises the floor (up to 256 words),
//! so a process churning short-lived data does not collect every few
//! allocations, while an idle process stays tiny.
//!
//! Generations: when a major collection leaves more than
//! `GENERATIONAL_WORDS` live, the survivors become the old generation
//! (the words below `old_top`), and the collections `ensure` makes are
//! minor while the old generation leaves a quarter of the heap free: a
//! minor collection copies only the young data reachable from the roots,
//! through a scratch space, back above the old generation, and what
//! survives joins it. So a process holding a large structure does not
//! copy it at every collection (as BEAM's generational collector does
//! not). This needs nothing below `old_top` to point above it, which holds
//! because terms are immutable and every constructor fills its object in
//! before the next safepoint. When the young data mostly survive and the
//! nursery is still too small, the heap grows instead (the data is
//! growing); when the old generation fills the heap, or holds too many
//! binaries promoted since the last major collection, a major collection
//! runs.
//!
//! Accounting: every heap's capacity and every off-heap binary is drawn
//! from `budget`; only growth touches the shared counter.
//!
//! Test mode: `set_gc_stress(true)` (global, for heaps created later),
//! `ACT_GC_STRESS=1` in the environment, or `Heap::set_gc_stress` makes
//! every `ensure` collect.

mod append;
pub mod budget;
mod copy;
pub mod footprint;
mod map;
#[cfg(test)]
mod tests;

pub use append::APPENDABLE_WORDS;
pub use budget::SystemLimit;
pub use copy::MESSAGE_BYTES;
pub use copy::{MessageBuffer, copy_term, size_of};
pub use map::{FLAT_MAX, words_for_map};

use crate::term::bits::Bits;
use crate::term::object::{
    self, FORWARD, HEAP_BINARY_MAX, Kind, header, header_kind, header_size, heap_binary_words,
    is_header, term_fields, words_as_bytes, words_as_bytes_mut,
};
use crate::term::view::{BigView, View};
use crate::term::{Atom, Constant, TAG_BOXED, TAG_CONS, Term, literal};
use num_bigint::{BigInt, Sign};
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Words of a new heap: tens of words, as most processes stay small.
pub const MIN_HEAP_WORDS: usize = 32;
/// The most a heap's floor rises to when it keeps collecting (BEAM's
/// default heap is 233 words).
const GROWN_MIN_HEAP_WORDS: usize = 256;
/// Live data from which a heap grows at 3/4 full to twice its live data,
/// not at half full to four times.
const LARGE_HEAP_WORDS: usize = 1 << 11;
/// Live data from which a collection's survivors become an old
/// generation that minor collections leave in place (below it, a major
/// collection costs little more than a minor one).
const GENERATIONAL_WORDS: usize = 1 << 10;
/// Bytes of off-heap binaries minor collections may promote before a
/// major one must look for the dead among them.
const PROMOTED_BINARY_BYTES: usize = 4 << 20;

pub const CONS_WORDS: usize = 2;
pub const FLOAT_WORDS: usize = 2;
pub const REF_WORDS: usize = 2;
pub const EXT_PID_WORDS: usize = 3;
pub const EXT_REF_WORDS: usize = 5;
pub const EXTERNAL_FUN_WORDS: usize = 4;
pub const SUB_BINARY_WORDS: usize = 4;
/// Largest size of an integer result from an i64: a one-limb bignum.
pub const MAX_I64_WORDS: usize = 2;

#[inline]
pub const fn words_for_tuple(arity: usize) -> usize {
    arity + 1
}
#[inline]
pub const fn words_for_fun(captured: usize) -> usize {
    captured + 2
}
/// Words for a bitstring of `bits` bits made by `Heap::bitstring_from_vec`.
#[inline]
pub const fn words_for_bitstring(bits: usize) -> usize {
    if bits.is_multiple_of(8) {
        words_for_binary(bits / 8)
    } else {
        words_for_binary(bits.div_ceil(8)) + SUB_BINARY_WORDS
    }
}
/// Words for a binary of `len` bytes made by `Heap::binary`.
#[inline]
pub const fn words_for_binary(len: usize) -> usize {
    if len <= HEAP_BINARY_MAX {
        heap_binary_words(len)
    } else {
        2
    }
}
#[inline]
pub fn words_for_int(i: i64) -> usize {
    if Term::try_small(i).is_some() { 0 } else { 2 }
}
#[inline]
pub fn words_for_bigint(i: &BigInt) -> usize {
    if i64::try_from(i).ok().and_then(Term::try_small).is_some() {
        0
    } else {
        1 + (i.bits() as usize).div_ceil(64)
    }
}

/// When set, every `ensure` collects: a test mode that makes GC bugs show.
static GC_STRESS: AtomicBool = AtomicBool::new(false);

/// Turns the collect-at-every-heap-test mode on or off for heaps created
/// from now on.
pub fn set_gc_stress(on: bool) {
    GC_STRESS.store(on, Ordering::Relaxed);
}

/// Whether new heaps collect at every heap test: `set_gc_stress`, or the
/// environment variable `ACT_GC_STRESS=1` (so any test suite can run in
/// this mode without code changes).
fn gc_stress() -> bool {
    static FROM_ENV: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    GC_STRESS.load(Ordering::Relaxed)
        || *FROM_ENV.get_or_init(|| std::env::var("ACT_GC_STRESS").is_ok_and(|v| v == "1"))
}

/// A binary too big for the heap: shared by reference count between heaps
/// and message buffers. Its bytes are accounted in the memory budget until
/// the last reference goes.
///
/// An appendable binary (see `append`) has room to grow at its end and is
/// only ever seen through sub-binaries, each with its own length, so the
/// bytes past its `bits` belong to no term and an append may fill them.
pub struct SharedBinary {
    bytes: Vec<u8>,
    /// Bits in use: `bytes.len() == bits.div_ceil(8)`.
    bits: usize,
    appendable: bool,
    /// Bytes drawn from the budget (the capacity of `bytes`).
    reserved: usize,
}

impl SharedBinary {
    fn new(mut bytes: Vec<u8>) -> Arc<SharedBinary> {
        bytes.shrink_to_fit();
        let reserved = bytes.capacity();
        budget::force_reserve(reserved);
        Arc::new(SharedBinary {
            bits: bytes.len() * 8,
            bytes,
            appendable: false,
            reserved,
        })
    }
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for SharedBinary {
    fn drop(&mut self) {
        budget::release(self.reserved);
    }
}

/// The off-heap binaries a heap refers to: a list that costs one pointer
/// while empty (most heaps never hold a large binary).
/// (The box is deliberate: one word in every heap instead of several.)
#[derive(Default)]
struct OffHeap(Option<Box<OffHeapList>>);

#[derive(Default)]
struct OffHeapList {
    list: Vec<Arc<SharedBinary>>,
    /// Entries below this belong to ProcBins of the old generation (see
    /// `Heap::old_top`): the list's length at the end of the last
    /// collection, which keeps exactly the binaries that survived it.
    old: usize,
    /// Bytes of binaries promoted by minor collections since the last
    /// major one: dead old binaries are only given back by a major
    /// collection, so these many force one.
    promoted: usize,
}

impl OffHeap {
    fn push(&mut self, binary: Arc<SharedBinary>) {
        self.0.get_or_insert_with(Box::default).list.push(binary);
    }

    fn extend(&mut self, binaries: impl Iterator<Item = Arc<SharedBinary>>) {
        self.0
            .get_or_insert_with(Box::default)
            .list
            .extend(binaries);
    }

    fn capacity(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.list.capacity())
    }

    fn is_allocated(&self) -> bool {
        self.0.is_some()
    }

    fn get_mut(&mut self, index: usize) -> Option<&mut Arc<SharedBinary>> {
        self.0.as_mut()?.list.get_mut(index)
    }

    fn old(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.old)
    }

    fn promoted(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.promoted)
    }

    /// Marks every entry old (the end of a collection), adding `promoted`
    /// bytes to the count since the last major collection, or starting it
    /// again after one (`major`).
    fn age(&mut self, promoted: usize, major: bool) {
        if let Some(v) = self.0.as_mut() {
            v.old = v.list.len();
            v.promoted = if major { 0 } else { v.promoted + promoted };
        }
    }
}

impl std::ops::Deref for OffHeap {
    type Target = [Arc<SharedBinary>];

    fn deref(&self) -> &[Arc<SharedBinary>] {
        self.0.as_deref().map_or(&[], |v| &v.list)
    }
}

/// A process heap (also the storage of a message buffer, and the scratch
/// space where literals are built).
pub struct Heap {
    /// The words; `len()` is the top, `capacity()` the heap size.
    words: Vec<Term>,
    /// Off-heap binaries referenced by this heap's ProcBins (by index).
    off_heap: OffHeap,
    /// Bytes of `words`' capacity reserved from the budget.
    reserved: usize,
    /// The size a collection never shrinks the heap below (at most
    /// `GROWN_MIN_HEAP_WORDS`).
    min_words: u32,
    /// Build every binary on the heap (for the literal area).
    inline_binaries: bool,
    gc_stress: bool,
    /// The last collection grew the heap: the data is growing, so the
    /// next collection copies straight into a heap twice the size instead
    /// of copying into one of the old size and then again into a bigger one.
    growing: bool,
    /// Collections so far, minor and major (statistics and tests; wraps).
    pub collections: u32,
    /// The old generation: the words below are the data that survived
    /// the last collection, which a minor collection leaves in place (0:
    /// every collection is major). Nothing below points above it (terms
    /// are immutable, and code that fills an object in does so before
    /// any collection can run), so the minor collection need not look
    /// below it. See `collect_minor`.
    old_top: u32,
}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        budget::release(self.reserved);
    }
}

/// The smallest heap size of the growth series (about x1.5 per step) that
/// holds `words`.
fn size_class(words: usize) -> usize {
    let mut size = MIN_HEAP_WORDS;
    while size < words {
        size = size.saturating_add(size / 2);
    }
    size
}

impl Heap {
    /// An empty heap: its words are allocated when it first needs one
    /// (a process that only passes immediates around never does).
    pub fn new() -> Heap {
        Heap::with_words(0)
    }

    fn with_words(words: usize) -> Heap {
        budget::force_reserve(words * 8);
        Heap {
            words: Vec::with_capacity(words),
            off_heap: OffHeap::default(),
            reserved: words * 8,
            min_words: MIN_HEAP_WORDS as u32,
            inline_binaries: false,
            gc_stress: gc_stress(),
            growing: false,
            collections: 0,
            old_top: 0,
        }
    }

    /// A heap of exactly `words` words, failing cleanly past the budget.
    pub(crate) fn try_with_words(words: usize) -> Result<Heap, SystemLimit> {
        let bytes = words.checked_mul(8).ok_or(SystemLimit)?;
        budget::reserve(bytes)?;
        let mut vec = Vec::new();
        if vec.try_reserve_exact(words).is_err() {
            budget::release(bytes);
            return Err(SystemLimit);
        }
        Ok(Heap {
            words: vec,
            off_heap: OffHeap::default(),
            reserved: bytes,
            min_words: MIN_HEAP_WORDS as u32,
            inline_binaries: false,
            gc_stress: false,
            growing: false,
            collections: 0,
            old_top: 0,
        })
    }

    /// A heap that keeps every binary inline (for building literals).
    pub(crate) fn inline_scratch() -> Heap {
        let mut heap = Heap::new();
        heap.inline_binaries = true;
        heap.gc_stress = false;
        heap
    }

    /// Turns collect-at-every-`ensure` on or off for this heap.
    pub fn set_gc_stress(&mut self, on: bool) {
        self.gc_stress = on;
    }

    /// Words in use (the top).
    pub fn used(&self) -> usize {
        self.words.len()
    }

    /// The heap size in words.
    pub fn capacity(&self) -> usize {
        self.words.capacity()
    }

    /// Off-heap binaries this heap holds a reference to.
    pub fn off_heap_count(&self) -> usize {
        self.off_heap.len()
    }

    /// Bytes this heap accounts for (words and off-heap binaries, which
    /// may be shared).
    pub fn memory_bytes(&self) -> usize {
        self.reserved + self.off_heap.iter().map(|b| b.reserved).sum::<usize>()
    }

    /// Lists this heap's allocations (see `footprint`).
    pub fn footprint(&self, f: &mut footprint::Footprint) {
        f.allocation("heap", self.words.capacity() * 8);
        if self.off_heap.is_allocated() {
            f.allocation("off-heap binary list", std::mem::size_of::<Vec<()>>());
            f.allocation(
                "off-heap binaries",
                self.off_heap.capacity() * std::mem::size_of::<Arc<SharedBinary>>(),
            );
        }
    }

    /// Overwrites one heap word (for decoders filling containers they
    /// allocated).
    pub(crate) fn set_word(&mut self, offset: usize, value: Term) {
        self.words[offset] = value;
    }

    pub(crate) fn words(&self) -> &[Term] {
        &self.words
    }

    /// Makes `need` words free by growing, never collecting: for a
    /// scratch heap whose terms are held in Rust locals rather than
    /// roots (ets builds match results on one). Offsets stay valid when
    /// the words move, so terms built earlier stay good.
    pub fn grow_unrooted(&mut self, need: usize) -> Result<(), SystemLimit> {
        if self.words.capacity() - self.words.len() >= need {
            return Ok(());
        }
        let wanted = self.words.len().checked_add(need).ok_or(SystemLimit)?;
        let size = size_class(wanted.saturating_mul(2).max(MIN_HEAP_WORDS));
        let bytes = size.checked_mul(8).ok_or(SystemLimit)?;
        budget::reserve(bytes.saturating_sub(self.reserved))?;
        let extra = size - self.words.len();
        let grown = self.words.try_reserve_exact(extra).is_ok();
        budget::release(bytes.saturating_sub(self.reserved));
        self.account_capacity();
        if grown { Ok(()) } else { Err(SystemLimit) }
    }

    /// As `grow_unrooted`, but past the budget if it must: for the few
    /// words native code boxes between safepoints (where it cannot
    /// collect), so that the next collection checks the budget again.
    pub fn grow_unrooted_past_budget(&mut self, need: usize) {
        if self.grow_unrooted(need).is_err() {
            self.words.reserve(need);
            self.account_capacity();
        }
    }

    /// Drops every word from `top` up (a scratch heap giving back what it
    /// built for a candidate that did not match). Nothing may still refer
    /// to them.
    pub fn truncate_unrooted(&mut self, top: usize) {
        self.words.truncate(top);
        self.old_top = self.old_top.min(top as u32);
    }

    // ---------------------------------------------------------------
    // The safepoint.

    /// Makes sure `need` words are free, collecting if they are not (or
    /// always, in stress mode). Every live term must be in `roots`; they
    /// are updated in place. Fails with `SystemLimit` past the budget.
    #[inline]
    pub fn ensure(&mut self, need: usize, roots: &mut [&mut [Term]]) -> Result<(), SystemLimit> {
        if self.has_room(need) {
            return Ok(());
        }
        self.collect_young_first(need, roots)
    }

    /// Whether `need` words are free without a collection (never in GC
    /// stress mode, where every heap test collects).
    #[inline(always)]
    pub fn has_room(&self, need: usize) -> bool {
        self.words.capacity() - self.words.len() >= need && !self.gc_stress
    }

    /// A major collection (a full sweep, as `erlang:garbage_collect/0`
    /// asks): copies everything reachable from `roots` into a new space
    /// with room for `need` more words, then resizes the heap from the
    /// live data.
    pub fn collect(&mut self, need: usize, roots: &mut [&mut [Term]]) -> Result<(), SystemLimit> {
        self.collect_sized(need, roots, false)
    }

    /// A collection that grows the heap even past the budget, into a space
    /// of what may survive plus `need` and an eighth: for words that exist
    /// already elsewhere (a message moving from its buffer into the heap)
    /// and for the few words of an exception being raised. The eighth is
    /// room for the next messages of a backlog, so taking many in is not a
    /// collection each. Fails only if the operating system refuses.
    #[cold]
    pub fn collect_past_budget(
        &mut self,
        need: usize,
        roots: &mut [&mut [Term]],
    ) -> Result<(), SystemLimit> {
        self.collect_sized(need, roots, true)
    }

    fn collect_sized(
        &mut self,
        need: usize,
        roots: &mut [&mut [Term]],
        past_budget: bool,
    ) -> Result<(), SystemLimit> {
        if self.words.capacity() == 0 && !past_budget {
            return self.allocate_first(need);
        }
        self.collect_major(need, roots, past_budget)
    }

    /// The collection `ensure` makes: a minor one when there is an old
    /// generation (see `minor_first`), and a major one if that does not
    /// free enough.
    fn collect_young_first(
        &mut self,
        need: usize,
        roots: &mut [&mut [Term]],
    ) -> Result<(), SystemLimit> {
        if self.minor_first(need)
            && let Some((root_words, kept_most)) = self.collect_minor(roots)
        {
            // The nursery is free again: if it has room enough, the old
            // generation waits for a major collection. If not, and the
            // young data mostly survived, the data is growing: the heap
            // grows (offsets stay valid) rather than copy it all again.
            let wanted = need.saturating_add(root_words / 2);
            let free = self.words.capacity() - self.words.len();
            if free >= wanted && free >= self.words.capacity() / 4 {
                return Ok(());
            }
            if kept_most && self.grow_for(wanted) {
                return Ok(());
            }
        }
        self.collect_sized(need, roots, false)
    }

    /// A major collection: everything reachable from `roots` is copied.
    fn collect_major(
        &mut self,
        need: usize,
        roots: &mut [&mut [Term]],
        past_budget: bool,
    ) -> Result<(), SystemLimit> {
        let bound = self.words.len().checked_add(need).ok_or(SystemLimit)?;
        // While the heap grows, size the to-space as the resize below would
        // (twice what may survive), so the live data is copied once.
        let size = if past_budget {
            bound.saturating_add(bound / 8).max(MIN_HEAP_WORDS)
        } else if self.growing {
            size_class(bound.saturating_mul(2))
        } else {
            size_class(bound)
        };
        let bytes = size.checked_mul(8).ok_or(SystemLimit)?;
        // Only growth draws on the budget (the from-space is given back
        // right after the copy), so a collection that keeps the heap's
        // size touches no shared counter.
        let growth = bytes.saturating_sub(self.reserved);
        if past_budget {
            budget::force_reserve(growth);
        } else {
            budget::reserve(growth)?;
        }
        let mut to_space = Vec::new();
        if to_space.try_reserve_exact(size).is_err() {
            budget::release(growth);
            return Err(SystemLimit);
        }
        let old_capacity = self.words.capacity();
        let mut from_space = std::mem::replace(&mut self.words, to_space);
        let from_off_heap = std::mem::take(&mut self.off_heap);
        let mut gc = Evacuator::new(
            &mut from_space,
            &from_off_heap[..],
            &mut self.words,
            &mut self.off_heap,
        );
        let mut root_words = 0usize;
        for root in roots.iter_mut() {
            root_words += root.len();
            for term in root.iter_mut() {
                *term = gc.evacuate(*term);
            }
        }
        gc.scan();
        let top = gc.top;
        // SAFETY: the evacuator wrote every word below `top`, within the
        // capacity (`Evacuator::claim`).
        unsafe { self.words.set_len(top) };
        drop(from_space);
        drop(from_off_heap); // releases the dead off-heap binaries
        budget::release(self.reserved.saturating_sub(bytes));
        self.reserved = bytes;
        self.collections = self.collections.wrapping_add(1);
        // A collection costs the roots too (a stack or mailbox of
        // immediates): leave room in proportion, so their scans amortize.
        self.resize_after_collection(need.saturating_add(root_words / 2), old_capacity);
        // What survived is the old generation, when there is enough of it
        // that copying it again would cost more than a minor collection.
        let live = self.words.len();
        let threshold = if self.gc_stress {
            1
        } else {
            GENERATIONAL_WORDS
        };
        self.old_top = if live >= threshold {
            u32::try_from(live).unwrap_or(0)
        } else {
            0
        };
        self.off_heap.age(0, true);
        Ok(())
    }

    /// Whether the next collection should be a minor one: there is an old
    /// generation, it leaves a nursery of at least a quarter of the heap,
    /// and the binaries it kept since the last major collection are few.
    /// (In stress mode every other collection is minor.)
    fn minor_first(&self, need: usize) -> bool {
        let old = self.old_top as usize;
        if old == 0 {
            return false;
        }
        if self.gc_stress {
            return self.collections % 2 == 1;
        }
        let capacity = self.words.capacity();
        old <= capacity / 4 * 3
            && need <= capacity - old
            && self.off_heap.promoted() < PROMOTED_BINARY_BYTES
    }

    /// A minor collection: copies what is reachable from `roots` in the
    /// young data (above `old_top`) to a scratch space, then back above
    /// the old generation, which is not looked at (nothing in it points
    /// at younger data); what survives joins the old generation. Returns
    /// the number of root words and whether most of the young data
    /// survived, or `None` (nothing done) when the scratch space cannot
    /// be had.
    fn collect_minor(&mut self, roots: &mut [&mut [Term]]) -> Option<(usize, bool)> {
        let old = self.old_top as usize;
        let young = self.words.len() - old;
        let mut scratch: Vec<Term> = Vec::new();
        scratch.try_reserve_exact(young).ok()?;
        let mut off_heap = std::mem::take(&mut self.off_heap);
        let old_binaries = off_heap.old();
        let mut young_off_heap = OffHeap::default();
        let mut gc = Evacuator::new(
            &mut self.words[..],
            &off_heap[..],
            &mut scratch,
            &mut young_off_heap,
        );
        gc.floor = old;
        gc.base = old;
        gc.off_base = old_binaries;
        let mut root_words = 0usize;
        for root in roots.iter_mut() {
            root_words += root.len();
            for term in root.iter_mut() {
                *term = gc.evacuate(*term);
            }
        }
        gc.scan();
        let (top, promoted) = (gc.top, gc.binary_bytes);
        // SAFETY: the evacuator wrote every word below `top`, within the
        // capacity (`Evacuator::claim`).
        unsafe { scratch.set_len(top) };
        // The survivors go back where the evacuator addressed them; the
        // heap's capacity holds them, as they were part of its young data.
        self.words.truncate(old);
        self.words.extend_from_slice(&scratch);
        if let Some(list) = off_heap.0.as_mut() {
            list.list.truncate(old_binaries); // releases the dead young binaries
        }
        if let Some(survivors) = young_off_heap.0 {
            off_heap.extend(survivors.list.into_iter());
        }
        self.off_heap = off_heap;
        self.off_heap.age(promoted, false);
        self.old_top = u32::try_from(self.words.len()).unwrap_or(0);
        self.collections = self.collections.wrapping_add(1);
        Some((root_words, top * 2 > young))
    }

    /// Grows the heap so that `wanted` words are free and the data can
    /// double, within the budget; false if it cannot.
    fn grow_for(&mut self, wanted: usize) -> bool {
        let Some(target) = self
            .words
            .len()
            .checked_add(wanted)
            .and_then(|w| w.checked_mul(2))
        else {
            return false;
        };
        let target = size_class(target);
        let capacity = self.words.capacity();
        let Some(bytes) = target.checked_sub(capacity).and_then(|w| w.checked_mul(8)) else {
            return false;
        };
        if budget::reserve(bytes).is_err() {
            return false;
        }
        let grown = self
            .words
            .try_reserve_exact(target - self.words.len())
            .is_ok();
        budget::release(bytes);
        self.account_capacity();
        grown
    }

    /// The first words of a heap, the smallest size that holds `need`
    /// (at least `MIN_HEAP_WORDS`). Nothing to collect: with no words
    /// there is no heap term, so the roots hold only immediates and
    /// literals.
    #[cold]
    fn allocate_first(&mut self, need: usize) -> Result<(), SystemLimit> {
        let size = size_class(need);
        let bytes = size.checked_mul(8).ok_or(SystemLimit)?;
        budget::reserve(bytes)?;
        let reserved = self.words.try_reserve_exact(size).is_ok();
        budget::release(bytes);
        self.account_capacity();
        if reserved { Ok(()) } else { Err(SystemLimit) }
    }

    fn resize_after_collection(&mut self, need: usize, old_capacity: usize) {
        let wanted = self.words.len() + need;
        let capacity = self.words.capacity();
        // A heap that collects while at its floor allocates steadily: raise
        // the floor (up to about BEAM's default heap) so it collects less
        // often. A process that never collects keeps its tiny first heap.
        let min_words = self.min_words as usize;
        if old_capacity <= min_words {
            self.min_words = (min_words * 2).min(GROWN_MIN_HEAP_WORDS).max(min_words) as u32;
        }
        let min_words = self.min_words as usize;
        // A copying collection costs the live data; the words allocated
        // until the next one are the free space. Keeping a small heap at
        // two to four times its live data bounds the copying at one word
        // per word allocated (at 3/4 full it was three words); a larger
        // heap (a process with real state, of which there may be many)
        // grows at 3/4 full to twice, to spare memory.
        let (factor, full) = if wanted < LARGE_HEAP_WORDS {
            (4, capacity / 2)
        } else {
            (2, capacity / 4 * 3)
        };
        let target = size_class(wanted.saturating_mul(factor)).max(min_words);
        if target > capacity && (wanted > full || capacity < min_words) {
            // Growing is optional: the space for `need` is already there.
            let extra = target - self.words.len();
            if budget::reserve((target - capacity) * 8).is_ok() {
                if self.words.try_reserve_exact(extra).is_ok() {
                    budget::release((target - capacity) * 8);
                    self.account_capacity();
                } else {
                    budget::release((target - capacity) * 8);
                }
            }
        } else if wanted < capacity / (4 * factor) && target < capacity {
            self.words.shrink_to(target);
            self.account_capacity();
        }
        // More than a third survived: the data is growing (or large and
        // stable); the next to-space is sized for growth up front.
        self.growing = wanted.saturating_mul(3) > self.words.capacity();
    }

    /// Re-syncs the reservation with the vector's real capacity.
    fn account_capacity(&mut self) {
        let bytes = self.words.capacity() * 8;
        if bytes > self.reserved {
            budget::force_reserve(bytes - self.reserved);
        } else {
            budget::release(self.reserved - bytes);
        }
        self.reserved = bytes;
    }

    // ---------------------------------------------------------------
    // Constructors. Each assumes its words were ensured.

    #[inline]
    fn alloc(&mut self, words: &[Term]) -> usize {
        debug_assert!(
            self.words.capacity() - self.words.len() >= words.len(),
            "allocation without a heap test"
        );
        let at = self.words.len();
        self.words.extend_from_slice(words);
        at
    }

    /// `[head | tail]`
    #[inline]
    pub fn cons(&mut self, head: Term, tail: Term) -> Term {
        let at = self.alloc(&[head, tail]);
        Term::heap_pointer(TAG_CONS, at)
    }

    /// A tuple of `elements`.
    #[inline]
    pub fn tuple(&mut self, elements: &[Term]) -> Term {
        let at = self.alloc(&[header(Kind::Tuple, elements.len())]);
        self.words.extend_from_slice(elements);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A copy of the tuple `t` with its element `index` (from 0, within
    /// the tuple) replaced by `v`, copied once, straight from the old
    /// tuple (`setelement/3`). The words must be free (`ensure`).
    pub fn tuple_with(&mut self, t: Term, index: usize, v: Term) -> Term {
        let arity = self.tuple_elements(t).len();
        debug_assert!(index < arity);
        let at = self.alloc(&[header(Kind::Tuple, arity)]);
        self.extend_from_object(t, 1..1 + arity);
        self.words[at + 1 + index] = v;
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// Appends the words `range` of the object `t` (counted from its
    /// header), which may be on this heap or a literal: a copy of an
    /// object made without going through a vector. The words must be free.
    fn extend_from_object(&mut self, t: Term, range: std::ops::Range<usize>) {
        if t.is_literal() {
            self.words.extend_from_slice(&literal_object(t)[range]);
        } else {
            let at = t.offset();
            self.words
                .extend_from_within(at + range.start..at + range.end);
        }
    }

    /// A tuple of `arity` elements, all `[]`, to be filled through
    /// `tuple_elements_mut`.
    pub fn alloc_tuple(&mut self, arity: usize) -> Term {
        let at = self.alloc(&[header(Kind::Tuple, arity)]);
        self.words.resize(at + 1 + arity, Term::NIL);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// The elements of a heap tuple, for filling in.
    pub fn tuple_elements_mut(&mut self, tuple: Term) -> &mut [Term] {
        debug_assert!(tuple.is_boxed() && !tuple.is_literal());
        let at = tuple.offset();
        let arity = header_size(self.words[at]);
        &mut self.words[at + 1..at + 1 + arity]
    }

    #[inline]
    pub fn float(&mut self, f: f64) -> Term {
        let at = self.alloc(&[header(Kind::Float, 1), Term(f.to_bits())]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// The free space for native code to bump-allocate in: the first
    /// word, the top and the end of the capacity (the top again in stress
    /// mode, so that every heap test collects).
    pub(crate) fn native_window(&mut self) -> (*mut Term, *mut Term, *mut Term) {
        let (len, cap) = (self.words.len(), self.words.capacity());
        let base = self.words.as_mut_ptr();
        // SAFETY: `len <= cap`, both within (or one past) the allocation.
        unsafe {
            let top = base.add(len);
            (base, top, if self.gc_stress { top } else { base.add(cap) })
        }
    }

    /// Takes back the top after native code allocated above it.
    ///
    /// # Safety
    /// `top` must lie between the top and the end of the window
    /// `native_window` gave out, with every word below it written.
    pub(crate) unsafe fn set_native_top(&mut self, top: *mut Term) {
        let base = self.words.as_mut_ptr();
        // SAFETY: as the caller promises.
        unsafe { self.words.set_len(top.offset_from(base) as usize) };
    }

    /// A float, if the heap has room for it without a collection (and
    /// the stress mode does not ask for one at every allocation); `None`
    /// sends the caller through a safepoint instead.
    #[inline]
    pub fn try_float(&mut self, f: f64) -> Option<Term> {
        if self.words.capacity() - self.words.len() < 2 || self.gc_stress {
            return None;
        }
        Some(self.float(f))
    }

    /// An integer: small if it fits, else a bignum (`words_for_int`).
    #[inline]
    pub fn int(&mut self, i: i64) -> Term {
        match Term::try_small(i) {
            Some(t) => t,
            None => {
                let kind = if i < 0 { Kind::NegBig } else { Kind::PosBig };
                let at = self.alloc(&[header(kind, 1), Term(i.unsigned_abs())]);
                Term::heap_pointer(TAG_BOXED, at)
            }
        }
    }

    /// An integer from a bignum value, normalised: small if it fits
    /// (`words_for_bigint`).
    pub fn bigint(&mut self, i: &BigInt) -> Term {
        if let Some(t) = i64::try_from(i).ok().and_then(Term::try_small) {
            return t;
        }
        let (sign, limbs) = i.to_u64_digits();
        self.bignum(sign == Sign::Minus, &limbs)
    }

    /// A bignum from its sign and magnitude (little-endian limbs, no zero
    /// limb on top, outside the small range): `1 + limbs.len()` words.
    pub fn bignum(&mut self, negative: bool, limbs: &[u64]) -> Term {
        let kind = if negative { Kind::NegBig } else { Kind::PosBig };
        let at = self.alloc(&[header(kind, limbs.len())]);
        self.words.extend(limbs.iter().map(|&l| Term(l)));
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A binary holding a copy of `bytes` (`words_for_binary`).
    pub fn binary(&mut self, bytes: &[u8]) -> Term {
        if bytes.len() <= HEAP_BINARY_MAX || self.inline_binaries {
            self.heap_binary(bytes)
        } else {
            self.shared_binary(SharedBinary::new(bytes.to_vec()))
        }
    }

    /// A binary taking ownership of `bytes` (no copy if it goes off-heap).
    pub fn binary_from_vec(&mut self, bytes: Vec<u8>) -> Term {
        if bytes.len() <= HEAP_BINARY_MAX || self.inline_binaries {
            self.heap_binary(&bytes)
        } else {
            self.shared_binary(SharedBinary::new(bytes))
        }
    }

    fn heap_binary(&mut self, bytes: &[u8]) -> Term {
        let payload = bytes.len().div_ceil(8);
        let at = self.alloc(&[header(Kind::HeapBin, 1 + payload), Term(bytes.len() as u64)]);
        self.words.resize(at + 2 + payload, Term(0));
        words_as_bytes_mut(&mut self.words[at + 2..])[..bytes.len()].copy_from_slice(bytes);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A ProcBin referencing an off-heap binary (2 words).
    pub fn shared_binary(&mut self, binary: Arc<SharedBinary>) -> Term {
        let index = self.off_heap.len() as u64;
        self.off_heap.push(binary);
        let at = self.alloc(&[header(Kind::ProcBin, 1), Term(index)]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// The bytes `offset..offset + len` of the binary `binary` without
    /// copying them (`SUB_BINARY_WORDS`); a sub-binary of a sub-binary
    /// refers to the original. `None` if `binary` is not a binary or the
    /// range is out of it. Always a sub-binary, so the size is predictable.
    pub fn sub_binary(&mut self, binary: Term, offset: usize, len: usize) -> Option<Term> {
        let total = self.binary_bytes(binary)?.len();
        if offset.checked_add(len)? > total {
            return None;
        }
        Some(self.sub_bits_unchecked(binary, offset * 8, len * 8))
    }

    /// Words `slice_bits(t, start, len)` needs: a sub-binary, or a copy
    /// when a whole-byte slice would not start on a byte.
    pub fn slice_bits_words(&self, t: Term, start: usize, len: usize) -> usize {
        let base_offset = match self.boxed_kind(t) {
            Some(Kind::SubBin) => self.object(t)[2].0 as usize,
            _ => 0,
        };
        if len.is_multiple_of(8) && !(base_offset + start).is_multiple_of(8) {
            words_for_binary(len / 8)
        } else {
            SUB_BINARY_WORDS
        }
    }

    /// The bits `start..start + len` of the bitstring `t`, which the
    /// caller checked are inside it, with `slice_bits_words` ensured.
    /// Shares the bytes, except for a whole-byte slice that does not start
    /// on a byte, which is copied (so every binary is a plain byte slice).
    pub fn slice_bits(&mut self, t: Term, start: usize, len: usize) -> Term {
        let base_offset = match self.boxed_kind(t) {
            Some(Kind::SubBin) => self.object(t)[2].0 as usize,
            _ => 0,
        };
        if len.is_multiple_of(8) && !(base_offset + start).is_multiple_of(8) {
            let bytes = match self.bits_of(t) {
                Some(b) => b.slice(start, len).to_vec(),
                None => Vec::new(),
            };
            return self.binary_from_vec(bytes);
        }
        self.sub_bits_unchecked(t, start, len)
    }

    fn sub_bits_unchecked(&mut self, t: Term, start: usize, len: usize) -> Term {
        let (base, base_offset) = match self.boxed_kind(t) {
            Some(Kind::SubBin) => {
                let words = self.object(t);
                (words[1], words[2].0 as usize)
            }
            _ => (t, 0),
        };
        let at = self.alloc(&[
            header(Kind::SubBin, 3),
            base,
            Term((base_offset + start) as u64),
            Term(len as u64),
        ]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A bitstring of the first `bits` bits of `bytes` (which holds
    /// `bits.div_ceil(8)` bytes); needs `words_for_bitstring(bits)`.
    pub fn bitstring_from_vec(&mut self, bytes: Vec<u8>, bits: usize) -> Term {
        let b = self.binary_from_vec(bytes);
        if bits.is_multiple_of(8) {
            b
        } else {
            self.sub_bits_unchecked(b, 0, bits)
        }
    }

    /// A closure: fun-table `index` and its captured terms
    /// (`words_for_fun`).
    pub fn fun(&mut self, index: u32, captured: &[Term]) -> Term {
        let at = self.alloc(&[header(Kind::Fun, 1 + captured.len()), Term(index as u64)]);
        self.words.extend_from_slice(captured);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// `fun Module:Function/Arity` (`EXTERNAL_FUN_WORDS`).
    pub fn external_fun(&mut self, module: Atom, function: Atom, arity: u32) -> Term {
        let at = self.alloc(&[
            header(Kind::Export, 3),
            Term::atom(module),
            Term::atom(function),
            Term::small(arity as i64),
        ]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A reference with a unique `id` (`REF_WORDS`).
    /// A pid of another node (needs `EXT_PID_WORDS`).
    pub fn external_pid(&mut self, node: u32, id: u64) -> Term {
        let at = self.alloc(&[header(Kind::ExtPid, 2), Term(node as u64), Term(id)]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// A reference of another node (needs `EXT_REF_WORDS`): a `Ref`
    /// object of four raw words (a local one has one), the 32-bit words
    /// packed in pairs, then the count, then the node-table index.
    pub fn external_ref(&mut self, node: u32, words: &[u32]) -> Term {
        let mut w = [0u32; 5];
        let len = words.len().min(5);
        w[..len].copy_from_slice(&words[..len]);
        let pair = |a: u32, b: u32| Term(a as u64 | (b as u64) << 32);
        let at = self.alloc(&[
            header(Kind::Ref, 4),
            pair(w[0], w[1]),
            pair(w[2], w[3]),
            pair(w[4], len as u32),
            Term(node as u64),
        ]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    pub fn reference(&mut self, id: u64) -> Term {
        let at = self.alloc(&[header(Kind::Ref, 1), Term(id)]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// The elements of a proper list and its length, or `None` for an
    /// improper list or a non-list.
    pub fn list_to_vec(&self, list: Term) -> Option<Vec<Term>> {
        let mut out = Vec::new();
        let mut t = list;
        while t.is_cons() {
            let (head, tail) = self.cons_parts(t);
            out.push(head);
            t = tail;
        }
        t.is_nil().then_some(out)
    }

    /// `length(List)`, or `None` for an improper list or a non-list.
    pub fn list_length(&self, list: Term) -> Option<usize> {
        let mut n = 0;
        let mut t = list;
        while t.is_cons() {
            n += 1;
            t = self.cons_parts(t).1;
        }
        t.is_nil().then_some(n)
    }

    /// A proper list of `elements` (`2 * len` words).
    pub fn list(&mut self, elements: &[Term]) -> Term {
        self.list_with_tail(elements, Term::NIL)
    }

    pub fn list_with_tail(&mut self, elements: &[Term], tail: Term) -> Term {
        elements
            .iter()
            .rev()
            .fold(tail, |tail, &head| self.cons(head, tail))
    }

    /// A copy of the first `n` cells of `list` (a list of at least `n`
    /// cells) ending in `tail`, in one pass and in order on the heap
    /// (`2 * n` words, ensured before): `++` without a buffer.
    pub fn copy_list_front(&mut self, list: Term, n: usize, tail: Term) -> Term {
        if n == 0 {
            return tail;
        }
        let first = self.words.len();
        self.words.reserve(2 * n);
        // Writes go through a raw pointer into the spare capacity while
        // `cons_parts` reads the initialised words below it: the two never
        // overlap, and nothing reallocates the vector in between.
        let free = self.words.spare_capacity_mut().as_mut_ptr();
        let mut t = list;
        for i in 0..n {
            let (head, rest) = self.cons_parts(t);
            let next = if i + 1 == n {
                tail
            } else {
                Term::heap_pointer(TAG_CONS, first + 2 * (i + 1))
            };
            // SAFETY: 2i + 1 < 2n, within the capacity reserved above.
            unsafe {
                free.add(2 * i).write(std::mem::MaybeUninit::new(head));
                free.add(2 * i + 1).write(std::mem::MaybeUninit::new(next));
            }
            t = rest;
        }
        // SAFETY: the loop wrote the 2n words past the old length, within
        // the capacity reserved above.
        unsafe { self.words.set_len(first + 2 * n) };
        Term::heap_pointer(TAG_CONS, first)
    }

    /// A string as a list of character codes (`2 * chars` words).
    pub fn string(&mut self, s: &str) -> Term {
        let chars: Vec<Term> = s.chars().map(|c| Term::small(c as i64)).collect();
        self.list(&chars)
    }

    /// Builds a constant on this heap (collecting first if needed, so
    /// `roots` are updated like for `ensure`).
    pub fn build_constant(
        &mut self,
        constant: &Constant,
        roots: &mut [&mut [Term]],
    ) -> Result<Term, SystemLimit> {
        literal::build_on_heap(self, constant, roots)
    }

    // ---------------------------------------------------------------
    // Reading.

    /// The words of the object `t` points at, from its header (or head)
    /// to the end of its space.
    #[inline(always)]
    pub(crate) fn object(&self, t: Term) -> &[Term] {
        if t.is_literal() {
            literal_object(t)
        } else {
            &self.words[t.offset()..]
        }
    }

    /// The kind of a boxed term; `None` for other terms.
    #[inline]
    pub fn boxed_kind(&self, t: Term) -> Option<Kind> {
        if t.is_boxed() {
            Some(header_kind(self.object(t)[0]))
        } else {
            None
        }
    }

    /// A local fun's index in the fun table and its captured values;
    /// `None` for any other term (the call path's shortcut past `view`).
    #[inline]
    pub fn fun_parts(&self, t: Term) -> Option<(u32, &[Term])> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        if header_kind(words[0]) != Kind::Fun {
            return None;
        }
        let size = header_size(words[0]);
        Some((words[1].0 as u32, words.get(2..1 + size)?))
    }

    /// Head and tail of a cons cell.
    #[inline]
    pub fn cons_parts(&self, t: Term) -> (Term, Term) {
        debug_assert!(t.is_cons());
        // The cell's two words as one range: one bounds check, not three
        // (`object` slices to the end of the heap, then indexes twice).
        let words = if t.is_literal() {
            // Inline here: lists walked in loops are often literals
            // (constant lists, format strings).
            &literal::words_from(t.offset())[..2]
        } else {
            let at = t.offset();
            &self.words[at..at + 2]
        };
        (words[0], words[1])
    }

    /// The elements of a tuple term (which the caller has checked).
    #[inline]
    pub fn tuple_elements(&self, t: Term) -> &[Term] {
        let words = self.object(t);
        &words[1..1 + header_size(words[0])]
    }

    /// The elements if `t` is a tuple.
    #[inline]
    pub fn as_tuple(&self, t: Term) -> Option<&[Term]> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        if header_kind(words[0]) == Kind::Tuple {
            Some(&words[1..1 + header_size(words[0])])
        } else {
            None
        }
    }

    #[inline]
    pub fn is_tuple_of_arity(&self, t: Term, arity: usize) -> bool {
        t.is_boxed() && self.object(t)[0] == header(Kind::Tuple, arity)
    }

    #[inline]
    pub fn is_float(&self, t: Term) -> bool {
        t.is_boxed() && self.object(t)[0] == header(Kind::Float, 1)
    }

    #[inline]
    pub fn float_value(&self, t: Term) -> Option<f64> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        if words[0] == header(Kind::Float, 1) {
            Some(f64::from_bits(words[1].0))
        } else {
            None
        }
    }

    /// Small or big integer.
    #[inline]
    pub fn is_integer(&self, t: Term) -> bool {
        t.is_small() || matches!(self.boxed_kind(t), Some(Kind::PosBig | Kind::NegBig))
    }

    #[inline]
    pub fn is_number(&self, t: Term) -> bool {
        t.is_small()
            || matches!(
                self.boxed_kind(t),
                Some(Kind::PosBig | Kind::NegBig | Kind::Float)
            )
    }

    /// A binary: a bitstring of whole bytes.
    pub fn is_binary(&self, t: Term) -> bool {
        match self.boxed_kind(t) {
            Some(Kind::HeapBin | Kind::ProcBin) => true,
            Some(Kind::SubBin) => self.object(t)[3].0.is_multiple_of(8),
            _ => false,
        }
    }

    pub fn is_bitstring(&self, t: Term) -> bool {
        matches!(
            self.boxed_kind(t),
            Some(Kind::HeapBin | Kind::ProcBin | Kind::SubBin)
        )
    }

    pub fn is_map(&self, t: Term) -> bool {
        matches!(self.boxed_kind(t), Some(Kind::Map | Kind::MapTree))
    }

    pub fn is_function(&self, t: Term) -> bool {
        matches!(self.boxed_kind(t), Some(Kind::Fun | Kind::Export))
    }

    /// `is_pid/1`: a local pid, or a pid of another node.
    pub fn is_pid(&self, t: Term) -> bool {
        t.is_pid() || self.boxed_kind(t) == Some(Kind::ExtPid)
    }

    pub fn is_reference(&self, t: Term) -> bool {
        self.boxed_kind(t) == Some(Kind::Ref)
    }

    /// The value of a small or big integer.
    pub fn to_bigint(&self, t: Term) -> Option<BigInt> {
        match self.view(t) {
            View::Small(i) => Some(BigInt::from(i)),
            View::Big(big) => Some(big.to_bigint()),
            _ => None,
        }
    }

    /// The bytes of a binary (heap, off-heap or sub-binary).
    pub fn binary_bytes(&self, t: Term) -> Option<&[u8]> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        match header_kind(words[0]) {
            Kind::HeapBin => {
                let len = words[1].0 as usize;
                Some(&words_as_bytes(&words[2..2 + header_size(words[0]) - 1])[..len])
            }
            Kind::ProcBin => Some(self.off_heap[words[1].0 as usize].bytes()),
            Kind::SubBin => {
                let (offset, len) = (words[2].0 as usize, words[3].0 as usize);
                if !len.is_multiple_of(8) {
                    return None;
                }
                let (offset, len) = (offset / 8, len / 8);
                Some(&self.binary_bytes(words[1])?[offset..offset + len])
            }
            _ => None,
        }
    }

    /// A bitstring taken apart: the heap or off-heap binary holding its
    /// bits (a term), that binary's bytes, and the bit offset and bit
    /// length of the bitstring in them. One lookup, for the matching loop.
    #[inline]
    pub fn bitstring_parts(&self, t: Term) -> Option<(Term, &[u8], usize, usize)> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        let (base, offset, len) = match header_kind(words[0]) {
            Kind::SubBin => (words[1], words[2].0 as usize, words[3].0 as usize),
            Kind::HeapBin => {
                let len = words[1].0 as usize;
                let bytes = &words_as_bytes(&words[2..2 + header_size(words[0]) - 1])[..len];
                return Some((t, bytes, 0, len * 8));
            }
            Kind::ProcBin => {
                let bytes = self.off_heap[words[1].0 as usize].bytes();
                return Some((t, bytes, 0, bytes.len() * 8));
            }
            _ => return None,
        };
        let words = self.object(base);
        let bytes = match header_kind(words[0]) {
            Kind::HeapBin => {
                let len = words[1].0 as usize;
                &words_as_bytes(&words[2..2 + header_size(words[0]) - 1])[..len]
            }
            Kind::ProcBin => self.off_heap[words[1].0 as usize].bytes(),
            _ => return None,
        };
        Some((base, bytes, offset, len))
    }

    /// A sub-binary of `len` bits at bit `start` of the heap or off-heap
    /// binary `base` (`SUB_BINARY_WORDS`). The caller keeps the invariant
    /// that a whole-byte sub-binary starts on a byte.
    #[inline]
    pub fn sub_bits_of_base(&mut self, base: Term, start: usize, len: usize) -> Term {
        debug_assert!(!len.is_multiple_of(8) || start.is_multiple_of(8));
        let at = self.alloc(&[
            header(Kind::SubBin, 3),
            base,
            Term(start as u64),
            Term(len as u64),
        ]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// The bits of any bitstring (binaries included).
    pub fn bits_of(&self, t: Term) -> Option<Bits<'_>> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        match header_kind(words[0]) {
            Kind::HeapBin | Kind::ProcBin => self.binary_bytes(t).map(Bits::whole),
            Kind::SubBin => {
                let (offset, len) = (words[2].0 as usize, words[3].0 as usize);
                let base = self.binary_bytes(words[1])?;
                Some(Bits::of(base, offset, len))
            }
            _ => None,
        }
    }

    /// The length in bits of a bitstring.
    #[inline]
    pub fn bit_size(&self, t: Term) -> Option<usize> {
        if !t.is_boxed() {
            return None;
        }
        let words = self.object(t);
        match header_kind(words[0]) {
            Kind::HeapBin => Some(words[1].0 as usize * 8),
            Kind::ProcBin => Some(self.off_heap[words[1].0 as usize].bytes().len() * 8),
            Kind::SubBin => Some(words[3].0 as usize),
            _ => None,
        }
    }

    /// The off-heap binary behind a ProcBin (or a sub-binary of one), so
    /// a BIF can share it rather than copy.
    pub fn shared_binary_of(&self, t: Term) -> Option<&Arc<SharedBinary>> {
        let words = self.object(t);
        match header_kind(words[0]) {
            Kind::ProcBin => Some(&self.off_heap[words[1].0 as usize]),
            Kind::SubBin => self.shared_binary_of(words[1]),
            _ => None,
        }
    }

    /// Decodes any term.
    pub fn view(&self, t: Term) -> View<'_> {
        match t.tag() {
            crate::term::TAG_SMALL => View::Small((t.0 as i64) >> 3),
            crate::term::TAG_ATOM => View::Atom(Atom((t.0 >> 3) as u32)),
            crate::term::TAG_PID => View::Pid(t.0 >> 3),
            crate::term::TAG_SPECIAL if t.is_nil() => View::Nil,
            TAG_CONS => {
                let words = self.object(t);
                View::Cons(words[0], words[1])
            }
            TAG_BOXED => {
                let words = self.object(t);
                let size = header_size(words[0]);
                let payload = &words[1..1 + size];
                match header_kind(words[0]) {
                    Kind::Tuple => View::Tuple(payload),
                    Kind::Float => View::Float(f64::from_bits(payload[0].0)),
                    Kind::PosBig => View::Big(BigView {
                        negative: false,
                        limbs: payload,
                    }),
                    Kind::NegBig => View::Big(BigView {
                        negative: true,
                        limbs: payload,
                    }),
                    Kind::Fun => View::Fun {
                        index: payload[0].0 as u32,
                        captured: &payload[1..],
                    },
                    Kind::Export => View::ExternalFun {
                        module: payload[0].as_atom().unwrap_or(Atom::EMPTY),
                        function: payload[1].as_atom().unwrap_or(Atom::EMPTY),
                        arity: payload[2].as_small().unwrap_or(0) as u32,
                    },
                    Kind::Ref if size == 1 => View::Ref(payload[0].0),
                    Kind::Ref => {
                        let word = |i: usize| payload[i / 2].0.checked_shr(32 * (i as u32 % 2));
                        let mut words = [0u32; 5];
                        for (i, w) in words.iter_mut().enumerate() {
                            *w = word(i).unwrap_or(0) as u32;
                        }
                        View::ExtRef {
                            node: payload[3].0 as u32,
                            len: (payload[2].0 >> 32) as u32,
                            words,
                        }
                    }
                    Kind::ExtPid => View::ExtPid {
                        node: payload[0].0 as u32,
                        id: payload[1].0,
                    },
                    Kind::Map => {
                        let (keys, values) = payload.split_at(size / 2);
                        View::Map {
                            keys: Cow::Borrowed(keys),
                            values: Cow::Borrowed(values),
                        }
                    }
                    Kind::MapTree => {
                        let (keys, values) = self.map_entries(t).unwrap_or_default();
                        View::Map {
                            keys: Cow::Owned(keys),
                            values: Cow::Owned(values),
                        }
                    }
                    Kind::MapNode => View::NotAValue,
                    Kind::HeapBin | Kind::ProcBin => {
                        View::Binary(self.binary_bytes(t).unwrap_or(&[]))
                    }
                    Kind::SubBin => match self.binary_bytes(t) {
                        Some(bytes) => View::Binary(bytes),
                        None => View::Bitstring(self.bits_of(t).unwrap_or(Bits::whole(&[]))),
                    },
                }
            }
            _ => View::NotAValue,
        }
    }
}

/// The words of a literal object (kept out of line: heap objects are the
/// common case of `Heap::object`).
#[inline(never)]
fn literal_object(t: Term) -> &'static [Term] {
    literal::words_from(t.offset())
}

/// The state of one collection: from-space (where forwarding marks are
/// written) and to-space, filled from `top` up through a raw pointer.
///
/// Invariant: the to-space is an empty vector whose capacity holds every
/// word that can survive (`collect_sized` sizes it at least the
/// from-space's length), and the forwarding marks copy each object once,
/// so `top` stays within the capacity. `claim` checks that once per
/// object (the copy itself then needs no bounds or growth test per
/// word), and each read of the from-space is one range check per object.
struct Evacuator<'a> {
    from: &'a mut [Term],
    from_off_heap: &'a [Arc<SharedBinary>],
    /// The to-space's buffer (`Vec::as_mut_ptr`), `capacity` words.
    to: *mut Term,
    capacity: usize,
    /// Words written so far; `collect_sized` sets the length to it.
    top: usize,
    to_off_heap: &'a mut OffHeap,
    /// Objects below this offset stay where they are (the old generation,
    /// in a minor collection; 0 in a major one).
    floor: usize,
    /// The offset the to-space's first word will have in the heap.
    base: usize,
    /// The index the to-space's first off-heap binary will have.
    off_base: usize,
    /// Bytes of the off-heap binaries copied.
    binary_bytes: usize,
}

/// Objects this small are copied a word at a time (a `memcpy` call costs
/// more than the copy).
const INLINE_COPY_WORDS: usize = 8;

impl<'a> Evacuator<'a> {
    fn new(
        from: &'a mut [Term],
        from_off_heap: &'a [Arc<SharedBinary>],
        to: &'a mut Vec<Term>,
        to_off_heap: &'a mut OffHeap,
    ) -> Evacuator<'a> {
        assert!(to.is_empty(), "the to-space starts empty");
        Evacuator {
            from,
            from_off_heap,
            to: to.as_mut_ptr(),
            capacity: to.capacity(),
            top: 0,
            to_off_heap,
            floor: 0,
            base: 0,
            off_base: 0,
            binary_bytes: 0,
        }
    }

    /// The offset of `n` fresh to-space words.
    #[inline(always)]
    fn claim(&mut self, n: usize) -> usize {
        let at = self.top;
        assert!(n <= self.capacity - at, "to-space overflow");
        self.top = at + n;
        at
    }

    /// The to-space copy of `t`: copies the object the first time and
    /// leaves a forwarding mark, follows the mark afterwards. Immediates
    /// and literals are returned as they are.
    #[inline(always)]
    fn evacuate(&mut self, t: Term) -> Term {
        if t.is_immediate() || t.is_literal() {
            return t;
        }
        let at = t.offset();
        if at < self.floor {
            return t;
        }
        if t.is_cons() {
            let cell = &self.from[at..at + 2];
            let (head, tail) = (cell[0], cell[1]);
            if head == FORWARD {
                return tail;
            }
            let new_at = self.claim(2);
            // SAFETY: `claim` checked the two words are within the capacity.
            unsafe {
                self.to.add(new_at).write(head);
                self.to.add(new_at + 1).write(tail);
            }
            let new = Term::heap_pointer(TAG_CONS, self.base + new_at);
            self.from[at] = FORWARD;
            self.from[at + 1] = new;
            return new;
        }
        let head = self.from[at];
        if head.is_boxed() {
            return head; // already moved: the header was replaced by its new place
        }
        let words = 1 + header_size(head);
        let object = self.from[at..at + words].as_ptr();
        let new_at = self.claim(words);
        // SAFETY: `claim` checked the words are within the capacity, the
        // slice above that `object` is `words` words of the from-space,
        // and the two spaces are different buffers.
        unsafe {
            let to = self.to.add(new_at);
            if words <= INLINE_COPY_WORDS {
                for i in 0..words {
                    to.add(i).write(object.add(i).read());
                }
            } else {
                std::ptr::copy_nonoverlapping(object, to, words);
            }
        }
        if header_kind(head) == Kind::ProcBin {
            let binary = self.from_off_heap[self.from[at + 1].0 as usize].clone();
            self.binary_bytes += binary.reserved;
            let index = Term((self.off_base + self.to_off_heap.len()) as u64);
            // SAFETY: within the words just written.
            unsafe { self.to.add(new_at + 1).write(index) };
            self.to_off_heap.push(binary);
        }
        let new = Term::heap_pointer(TAG_BOXED, self.base + new_at);
        self.from[at] = new;
        new
    }

    /// Cheney's scan: evacuates what the to-space's words point at, from
    /// the first word until the scan meets `top`.
    fn scan(&mut self) {
        let mut scan = 0;
        while scan < self.top {
            // SAFETY: every word below `top` was written, and an object's
            // fields lie below `top` (it was copied whole).
            let word = unsafe { self.to.add(scan).read() };
            if is_header(word) {
                for field in term_fields(word) {
                    let slot = unsafe { self.to.add(scan + field) };
                    let moved = self.evacuate(unsafe { slot.read() });
                    unsafe { slot.write(moved) };
                }
                scan += 1 + header_size(word);
            } else {
                for field in 0..2 {
                    let slot = unsafe { self.to.add(scan + field) };
                    let moved = self.evacuate(unsafe { slot.read() });
                    unsafe { slot.write(moved) };
                }
                scan += 2;
            }
        }
    }
}

/// Rewrites every heap pointer in `words` (a self-contained run of
/// objects built at offset 0) with `relocate(tag, offset)`, and every
/// ProcBin index with `rebind(index)`. A linear walk: no recursion.
pub(crate) fn relocate_objects(
    words: &mut [Term],
    relocate: impl Fn(u64, usize) -> Term,
    mut rebind: impl FnMut(u64) -> u64,
) {
    let fix = |t: Term| {
        if (t.is_cons() || t.is_boxed()) && !t.is_literal() {
            relocate(t.tag(), t.offset())
        } else {
            t
        }
    };
    let mut scan = 0;
    while scan < words.len() {
        let word = words[scan];
        if object::is_header(word) {
            for field in term_fields(word) {
                words[scan + field] = fix(words[scan + field]);
            }
            if header_kind(word) == Kind::ProcBin {
                words[scan + 1] = Term(rebind(words[scan + 1].0));
            }
            scan += 1 + header_size(word);
        } else {
            words[scan] = fix(words[scan]);
            words[scan + 1] = fix(words[scan + 1]);
            scan += 2;
        }
    }
}
