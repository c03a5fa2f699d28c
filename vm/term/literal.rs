//! The literal area: module constants, built once at load time and shared
//! read-only by every process.
//!
//! Invariant: the area is append-only. A constant is built in a private
//! scratch heap, its offsets are shifted into a fresh block, and only then
//! is the block's address published (`BASES`, with release ordering), so
//! a reader never sees a half-built block and never takes a lock. A literal offset is
//! `block << 32 | index in block`. A block is one allocation whose first
//! word holds the number of words after it, the literal's words (so a
//! reader finds a block's bounds with the same two loads that find its
//! address). Blocks are never freed; the collector
//! and the copier treat literal terms as leaves. Binaries in literals are
//! always stored inline, whatever their size.

use super::{Atom, Constant, Term};
use crate::heap::{self, Heap, SystemLimit};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

const BLOCK_BITS: u32 = 32;
const DIRECTORY_SIZE: usize = 4096;
const BLOCKS_PER_DIRECTORY: usize = 4096;
/// Most constants the area can hold.
pub const MAX_BLOCKS: usize = DIRECTORY_SIZE * BLOCKS_PER_DIRECTORY;

/// The next free block number.
static NEXT_BLOCK: AtomicUsize = AtomicUsize::new(0);

/// The same blocks' first words as plain pointers, two levels deep
/// (`BASES[block / BLOCKS_PER_DIRECTORY][block % BLOCKS_PER_DIRECTORY]`),
/// for code that finds a literal's address with two loads and no call
/// (native code, see `bases`; `words_from`). Set when a block is
/// published, before its term exists; never changed after. The word
/// before a block's first word is the block's length.
static BASES: [AtomicPtr<AtomicPtr<Term>>; DIRECTORY_SIZE] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; DIRECTORY_SIZE];

/// Where `BASES` is: a literal offset `o` has its words at
/// `BASES[o >> 44][(o >> 32) & 4095] + (o & 0xffff_ffff) * 8`.
pub fn bases() -> *const AtomicPtr<AtomicPtr<Term>> {
    BASES.as_ptr()
}

/// `bases`' shifts and masks, for code generators.
pub const DIRECTORY_SHIFT: u32 = BLOCK_BITS + BLOCKS_PER_DIRECTORY.trailing_zeros();
pub const BLOCK_SHIFT: u32 = BLOCK_BITS;
pub const BLOCK_MASK: u64 = BLOCKS_PER_DIRECTORY as u64 - 1;
pub const INDEX_MASK: u64 = (1 << BLOCK_BITS) - 1;

/// Records where `block`'s words are in `BASES`.
fn publish_base(block: usize, words: *const Term) {
    let slot = &BASES[block / BLOCKS_PER_DIRECTORY];
    let mut directory = slot.load(Ordering::Acquire);
    if directory.is_null() {
        let made: Box<[AtomicPtr<Term>]> = (0..BLOCKS_PER_DIRECTORY)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        let made = Box::into_raw(made) as *mut AtomicPtr<Term>;
        directory = match slot.compare_exchange(
            std::ptr::null_mut(),
            made,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => made,
            Err(other) => {
                // SAFETY: `made` came from `Box::into_raw` of a slice of
                // this length and was never published.
                drop(unsafe {
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                        made,
                        BLOCKS_PER_DIRECTORY,
                    ))
                });
                other
            }
        };
    }
    // SAFETY: a published directory has `BLOCKS_PER_DIRECTORY` entries and
    // is never freed.
    unsafe { &*directory.add(block % BLOCKS_PER_DIRECTORY) }
        .store(words as *mut Term, Ordering::Release);
}

/// The literal words from `offset` to the end of its block.
#[inline]
pub fn words_from(offset: usize) -> &'static [Term] {
    let index = offset & INDEX_MASK as usize;
    let Some(slot) = BASES.get(offset >> DIRECTORY_SHIFT) else {
        return &[];
    };
    let directory = slot.load(Ordering::Acquire);
    if directory.is_null() {
        return &[];
    }
    // SAFETY: a published directory has `BLOCKS_PER_DIRECTORY` entries
    // and is never freed; the mask keeps the index within them.
    let words = unsafe { &*directory.add((offset >> BLOCK_SHIFT) & BLOCK_MASK as usize) }
        .load(Ordering::Acquire);
    // A literal term exists only once its block is published.
    if words.is_null() {
        return &[];
    }
    // SAFETY: a published block's address is one word past its length
    // word, in an allocation that is never freed or written again.
    unsafe {
        let len = (*words.sub(1)).0 as usize;
        if index > len {
            return &[];
        }
        std::slice::from_raw_parts(words.add(index), len - index)
    }
}

/// Builds `constant` in the literal area and returns its term (an
/// immediate for atoms, small integers and `[]`).
pub fn build(constant: &Constant) -> Result<Term, SystemLimit> {
    let mut scratch = Heap::inline_scratch();
    let term = build_on_heap(&mut scratch, constant, &mut [])?;
    if term.is_immediate() {
        return Ok(term);
    }
    let block = NEXT_BLOCK.fetch_add(1, Ordering::Relaxed);
    if block >= MAX_BLOCKS || scratch.used() >= 1 << BLOCK_BITS {
        return Err(SystemLimit);
    }
    let base = block << BLOCK_BITS;
    let mut words: Vec<Term> = Vec::with_capacity(scratch.used() + 1);
    words.push(Term(scratch.used() as u64));
    words.extend_from_slice(scratch.words());
    heap::relocate_objects(
        &mut words[1..],
        |tag, offset| Term::literal_pointer(tag, base + offset),
        |i| i,
    );
    // Blocks live as long as the program: the area is append-only.
    let block_words: &'static mut [Term] = Vec::leak(words);
    publish_base(block, block_words[1..].as_ptr());
    Ok(Term::literal_pointer(term.tag(), base + term.offset()))
}

/// Words `constant` needs on a heap (binaries counted as `Heap::binary`
/// would make them).
fn constant_words(constant: &Constant) -> usize {
    let mut total = 0usize;
    let mut stack = vec![constant];
    while let Some(c) = stack.pop() {
        total = total.saturating_add(match c {
            Constant::Integer(i) => heap::words_for_bigint(i),
            Constant::Float(_) => heap::FLOAT_WORDS,
            Constant::Atom(_) | Constant::Nil => 0,
            Constant::List(elements, tail) => {
                stack.extend(elements.iter());
                stack.push(tail);
                2 * elements.len()
            }
            Constant::String(chars) => 2 * chars.len(),
            Constant::Tuple(elements) => {
                stack.extend(elements.iter());
                heap::words_for_tuple(elements.len())
            }
            Constant::Map(pairs) => {
                for (k, v) in pairs {
                    stack.push(k);
                    stack.push(v);
                }
                heap::words_for_map(pairs.len())
            }
            // Inline on a scratch heap, so count the inline size (an upper bound).
            Constant::Binary(bytes) => super::object::heap_binary_words(bytes.len()),
        });
    }
    total
}

/// Builds `constant` on `heap`, ensuring room first (with `roots`).
/// Iterative: children are built before their parent from an explicit
/// stack of pending steps.
pub(crate) fn build_on_heap(
    heap: &mut Heap,
    constant: &Constant,
    roots: &mut [&mut [Term]],
) -> Result<Term, SystemLimit> {
    heap.ensure(constant_words(constant), roots)?;
    enum Step<'c> {
        Enter(&'c Constant),
        Exit(&'c Constant),
    }
    let mut steps = vec![Step::Enter(constant)];
    let mut values: Vec<Term> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(c) => {
                steps.push(Step::Exit(c));
                let children: Vec<&Constant> = match c {
                    Constant::List(elements, tail) => elements.iter().chain([&**tail]).collect(),
                    Constant::Tuple(elements) => elements.iter().collect(),
                    Constant::Map(pairs) => pairs.iter().flat_map(|(k, v)| [k, v]).collect(),
                    _ => Vec::new(),
                };
                // Reversed, so the children's values land in order.
                steps.extend(children.into_iter().rev().map(Step::Enter));
            }
            Step::Exit(c) => {
                let value = match c {
                    Constant::Integer(i) => heap.bigint(i),
                    Constant::Float(f) => heap.float(*f),
                    Constant::Atom(name) => Term::atom(Atom::try_intern(name).ok_or(SystemLimit)?),
                    Constant::Nil => Term::NIL,
                    Constant::String(chars) => {
                        let chars: Vec<Term> =
                            chars.iter().map(|&c| Term::small(c as i64)).collect();
                        heap.list(&chars)
                    }
                    Constant::Binary(bytes) => heap.binary(bytes),
                    Constant::List(elements, _) => {
                        let children = values.split_off(values.len() - elements.len() - 1);
                        let (tail, heads) = children.split_last().unwrap_or((&Term::NIL, &[]));
                        heap.list_with_tail(heads, *tail)
                    }
                    Constant::Tuple(elements) => {
                        let children = values.split_off(values.len() - elements.len());
                        heap.tuple(&children)
                    }
                    Constant::Map(pairs) => {
                        let children = values.split_off(values.len() - 2 * pairs.len());
                        let pairs: Vec<(Term, Term)> =
                            children.chunks(2).map(|kv| (kv[0], kv[1])).collect();
                        heap.map(&pairs)
                    }
                };
                values.push(value);
            }
        }
    }
    Ok(values.pop().unwrap_or(Term::NIL))
}
