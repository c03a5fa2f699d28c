//! Boxed objects: the header word and the layout of every boxed kind.
//!
//! A boxed term points at a header word (tag `000`), followed by `size`
//! payload words:
//!
//! ```text
//!   header = size << 8 | kind << 3 | 000
//!
//!   Tuple    size = arity     elements (terms)
//!   Float    size = 1         f64 bits (raw)
//!   PosBig   size = limbs     magnitude, u64 limbs, least significant first (raw)
//!   NegBig   size = limbs     as PosBig, the value is negative
//!   Fun      size = 1 + n     fun-table index (raw u64), then n captured terms
//!   Export   size = 3         module atom, function atom, arity (small)
//!   Ref      size = 1         unique id (raw u64)
//!   Map      size = 2n        n keys in term order, then the n values (terms);
//!                             a map of at most `heap::map::FLAT_MAX` keys
//!   MapTree  size = 2         key count (small), root node (boxed): a larger map
//!   MapNode  size = 1 + 2n    level (small), n keys in term order, then n values
//!                             (level 0, a leaf) or n child nodes whose smallest
//!                             keys the n keys are (a branch); never a term itself
//!   HeapBin  size = 1 + w     byte length (raw), then the bytes packed in w words
//!   ProcBin  size = 1         index into the owning heap's off-heap list (raw)
//!   ExtPid   size = 2         node-table index (raw), id | serial << 32 (raw): a pid of another node
//!   SubBin   size = 3         the underlying HeapBin/ProcBin (term), bit offset, bit length (raw);
//!                             a whole-byte SubBin starts on a byte (see `term::bits`)
//! ```
//!
//! "(raw)" words are not terms: the collector and the copier skip them.
//! Which payload words are terms is decided by `term_fields` alone, so the
//! collector, the copier and the literal relocator cannot disagree.
//! A cons cell has no header: its two words are the head and the tail.
//! No term has tag `000`, so a word with tag `000` at the start of an
//! object is a header and anything else starts a cons cell.

use super::{TAG_HEADER, Term};

/// The kinds of boxed objects; the numbers are part of the header layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    Tuple = 0,
    Float = 1,
    PosBig = 2,
    NegBig = 3,
    Fun = 4,
    Export = 5,
    Ref = 6,
    Map = 7,
    HeapBin = 8,
    ProcBin = 9,
    SubBin = 10,
    ExtPid = 11,
    MapTree = 12,
    MapNode = 13,
}

const KIND_SHIFT: u32 = 3;
const KIND_MASK: u64 = 0x1f;
const SIZE_SHIFT: u32 = 8;

/// Binaries up to this many bytes live on the process heap; larger ones are
/// reference-counted off the heap.
pub const HEAP_BINARY_MAX: usize = 64;

/// Marks a moved object in from-space during a collection (tag `111`,
/// which no term uses). A moved cons cell has this in its head and the
/// new location in its tail; a moved boxed object has its new location
/// (a boxed term) in place of its header.
pub const FORWARD: Term = Term(0b111);

impl Kind {
    fn from_bits(bits: u64) -> Kind {
        match bits {
            0 => Kind::Tuple,
            1 => Kind::Float,
            2 => Kind::PosBig,
            3 => Kind::NegBig,
            4 => Kind::Fun,
            5 => Kind::Export,
            6 => Kind::Ref,
            7 => Kind::Map,
            8 => Kind::HeapBin,
            9 => Kind::ProcBin,
            10 => Kind::SubBin,
            12 => Kind::MapTree,
            13 => Kind::MapNode,
            _ => Kind::ExtPid,
        }
    }
}

/// The header word of an object of `kind` with `size` payload words.
#[inline]
pub const fn header(kind: Kind, size: usize) -> Term {
    Term(((size as u64) << SIZE_SHIFT) | ((kind as u64) << KIND_SHIFT) | TAG_HEADER)
}

#[inline]
pub const fn is_header(word: Term) -> bool {
    word.0 & super::TAG_MASK == TAG_HEADER
}

#[inline]
pub fn header_kind(word: Term) -> Kind {
    Kind::from_bits((word.0 >> KIND_SHIFT) & KIND_MASK)
}

/// Payload words after the header.
#[inline]
pub const fn header_size(word: Term) -> usize {
    (word.0 >> SIZE_SHIFT) as usize
}

/// The payload words (indices relative to the header, 1-based) that hold
/// terms, for an object with header `word`.
#[inline]
pub fn term_fields(word: Term) -> std::ops::Range<usize> {
    let size = header_size(word);
    match header_kind(word) {
        Kind::Tuple | Kind::Map | Kind::MapTree | Kind::MapNode | Kind::Export => 1..size + 1,
        Kind::Fun => 2..size + 1,
        Kind::SubBin => 1..2,
        _ => 1..1,
    }
}

/// Words a heap binary of `len` bytes needs, header included.
#[inline]
pub const fn heap_binary_words(len: usize) -> usize {
    2 + len.div_ceil(8)
}

/// The bytes packed in `words`.
///
/// `Term` is `repr(transparent)` over `u64`, so a slice of `n` terms is
/// `8 * n` initialised bytes with no padding, and `u8` has alignment 1:
/// viewing them as bytes is sound. Tested by
/// `heap::tests::binaries_keep_their_bytes`.
#[inline]
pub fn words_as_bytes(words: &[Term]) -> &[u8] {
    // SAFETY: see above; the lifetime and length come from `words`.
    unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, std::mem::size_of_val(words)) }
}

/// Mutable byte view of `words`; every byte pattern is a valid `u64`, so
/// writing arbitrary bytes leaves valid (raw) words.
#[inline]
pub fn words_as_bytes_mut(words: &mut [Term]) -> &mut [u8] {
    // SAFETY: as `words_as_bytes`; the borrow is exclusive.
    unsafe {
        std::slice::from_raw_parts_mut(words.as_mut_ptr() as *mut u8, std::mem::size_of_val(words))
    }
}
