//! Terms: every Erlang value is one tagged 64-bit word.
//!
//! Layout of a `Term` (low bits are the tag):
//!
//! ```text
//!   ...value...  011   small integer, 61-bit signed (value = word >> 3)
//!   ...index...  100   atom (index = word >> 3)
//!   ...pid.....  101   local pid (word >> 3)
//!   0..........  110   [] (nil); other values of this tag are reserved
//!                      for internal markers (see `Term::NONE`)
//!   ...offset.L  001   cons cell: 2 words at `offset`
//!   ...offset.L  010   boxed object: a header word at `offset`
//!   ...........  000   header word (only inside heap objects)
//!   ...........  111   reserved
//! ```
//!
//! `L` (bit 3) set means the offset addresses the global literal area
//! instead of the owning process's heap. A term never points into another
//! process's heap. Boxed objects, the heap and the literal area are
//! defined in the submodules; this file owns only the word itself.
//!
//! The submodules, and where to start reading:
//!
//! - `object`: the header word and the layout of every boxed kind.
//! - `view`: `View`, what a term is, as `Heap::view` decodes it.
//! - `literal`: the global literal area (`literal::build(&Constant)`).
//! - `arith`: Erlang arithmetic, returning `Number`s the caller places;
//!   `bignum`: the bignum magnitudes it works in place.
//! - `order`: term order, `==` and `=:=` (`compare`, `eq`, `exact_eq`).
//! - `print`: `~w` and `~p` (`print::write`, `print::print`).
//! - `format`: the io_lib:format engine (`format::format_term`).
//! - `etf`: `term_to_binary` / `binary_to_term`.
//! - `iolist`: the bytes and size of iolists.
//! - `zlib`: zlib streams (compressed external terms, the zlib module).
//!
//! The heap, the collector and message copying live in `crate::heap`.

pub mod arith;
pub mod atom;
pub mod bignum;
pub mod bits;
pub mod constant;
pub mod etf;
pub mod format;
pub mod hamt;
pub mod iolist;
pub mod literal;
pub mod node;
pub mod object;
pub mod order;
pub mod prehashed;
pub mod print;
pub mod view;
pub mod zlib;

pub use atom::Atom;
pub use constant::Constant;
pub use order::{compare, eq, exact_eq};
pub use view::View;

/// One Erlang value. `==` on `Term` is bit identity, not Erlang equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Term(pub u64);

pub const TAG_BITS: u32 = 3;
pub const TAG_MASK: u64 = 0b111;
pub const TAG_HEADER: u64 = 0b000;
pub const TAG_CONS: u64 = 0b001;
pub const TAG_BOXED: u64 = 0b010;
pub const TAG_SMALL: u64 = 0b011;
pub const TAG_ATOM: u64 = 0b100;
pub const TAG_PID: u64 = 0b101;
pub const TAG_SPECIAL: u64 = 0b110;
/// Bit 3 of a cons or boxed term: the offset is into the literal area.
pub const LITERAL_BIT: u64 = 0b1000;

/// Smallest and largest integers that fit in a small (immediate) integer.
pub const SMALL_MIN: i64 = -(1 << 60);
pub const SMALL_MAX: i64 = (1 << 60) - 1;

impl Term {
    /// `[]`
    pub const NIL: Term = Term(TAG_SPECIAL);
    /// Not a value: marks an empty register or slot, "no result".
    /// Never visible to a program.
    pub const NONE: Term = Term(TAG_SPECIAL | (1 << TAG_BITS));
    /// A stacktrace recorded but not built yet (`process::RawTrace`):
    /// only in the exception's slot and in x2 of a handler that does not
    /// bind the trace. Never visible to a program.
    pub const RAW_TRACE: Term = Term(TAG_SPECIAL | (2 << TAG_BITS));
    pub const TRUE: Term = Term::atom(Atom::TRUE);
    pub const FALSE: Term = Term::atom(Atom::FALSE);
    pub const OK: Term = Term::atom(Atom::OK);

    #[inline]
    pub const fn tag(self) -> u64 {
        self.0 & TAG_MASK
    }

    // Small integers.

    /// A small integer; the caller guarantees `SMALL_MIN <= i <= SMALL_MAX`.
    #[inline]
    pub const fn small(i: i64) -> Term {
        debug_assert!(i >= SMALL_MIN && i <= SMALL_MAX);
        Term(((i << TAG_BITS) as u64) | TAG_SMALL)
    }

    /// A small integer, or `None` if `i` needs a bignum.
    #[inline]
    pub fn try_small(i: i64) -> Option<Term> {
        if (SMALL_MIN..=SMALL_MAX).contains(&i) {
            Some(Term::small(i))
        } else {
            None
        }
    }

    #[inline]
    pub const fn is_small(self) -> bool {
        self.tag() == TAG_SMALL
    }

    #[inline]
    pub const fn as_small(self) -> Option<i64> {
        if self.is_small() {
            Some((self.0 as i64) >> TAG_BITS)
        } else {
            None
        }
    }

    // Atoms.

    #[inline]
    pub const fn atom(a: Atom) -> Term {
        Term(((a.0 as u64) << TAG_BITS) | TAG_ATOM)
    }

    #[inline]
    pub const fn is_atom(self) -> bool {
        self.tag() == TAG_ATOM
    }

    #[inline]
    pub const fn as_atom(self) -> Option<Atom> {
        if self.is_atom() {
            Some(Atom((self.0 >> TAG_BITS) as u32))
        } else {
            None
        }
    }

    #[inline]
    pub const fn boolean(b: bool) -> Term {
        if b { Term::TRUE } else { Term::FALSE }
    }

    /// `Some(true)` / `Some(false)` for the atoms, `None` for anything else.
    #[inline]
    pub fn as_bool(self) -> Option<bool> {
        if self == Term::TRUE {
            Some(true)
        } else if self == Term::FALSE {
            Some(false)
        } else {
            None
        }
    }

    // Pids.

    /// A local pid from its 61-bit identity (slot and generation, as the
    /// process table packs them).
    #[inline]
    pub const fn pid(id: u64) -> Term {
        Term((id << TAG_BITS) | TAG_PID)
    }

    #[inline]
    pub const fn is_pid(self) -> bool {
        self.tag() == TAG_PID
    }

    #[inline]
    pub const fn as_pid(self) -> Option<u64> {
        if self.is_pid() {
            Some(self.0 >> TAG_BITS)
        } else {
            None
        }
    }

    // Nil and pointers.

    #[inline]
    pub const fn is_nil(self) -> bool {
        self.0 == Term::NIL.0
    }

    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == Term::NONE.0
    }

    #[inline]
    pub const fn is_cons(self) -> bool {
        self.tag() == TAG_CONS
    }

    #[inline]
    pub const fn is_boxed(self) -> bool {
        self.tag() == TAG_BOXED
    }

    /// A cons or boxed term that lives in the literal area.
    #[inline]
    pub const fn is_literal(self) -> bool {
        (self.tag() == TAG_CONS || self.tag() == TAG_BOXED) && self.0 & LITERAL_BIT != 0
    }

    /// An immediate needs no heap: copying it copies the word.
    #[inline]
    pub const fn is_immediate(self) -> bool {
        !self.is_cons() && !self.is_boxed()
    }

    /// A cons or boxed term pointing at `offset` of the process heap.
    #[inline]
    pub const fn heap_pointer(tag: u64, offset: usize) -> Term {
        Term(((offset as u64) << 4) | tag)
    }

    /// A cons or boxed term pointing at `offset` of the literal area.
    #[inline]
    pub const fn literal_pointer(tag: u64, offset: usize) -> Term {
        Term(((offset as u64) << 4) | LITERAL_BIT | tag)
    }

    /// The offset of a cons or boxed term (heap or literal area).
    #[inline]
    pub const fn offset(self) -> usize {
        (self.0 >> 4) as usize
    }
}

impl std::fmt::Debug for Term {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(i) = self.as_small() {
            write!(f, "{i}")
        } else if let Some(a) = self.as_atom() {
            write!(f, "{a:?}")
        } else if let Some(p) = self.as_pid() {
            write!(f, "<pid {p}>")
        } else if self.is_nil() {
            write!(f, "[]")
        } else if self.is_none() {
            write!(f, "NONE")
        } else if self.is_cons() {
            write!(
                f,
                "cons@{}{}",
                if self.is_literal() { "L" } else { "" },
                self.offset()
            )
        } else if self.is_boxed() {
            write!(
                f,
                "boxed@{}{}",
                if self.is_literal() { "L" } else { "" },
                self.offset()
            )
        } else {
            write!(f, "word({:#x})", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_integers_round_trip_at_the_limits() {
        for i in [0, 1, -1, 42, SMALL_MIN, SMALL_MAX] {
            assert_eq!(Term::small(i).as_small(), Some(i));
        }
        assert_eq!(Term::try_small(SMALL_MAX + 1), None);
        assert_eq!(Term::try_small(SMALL_MIN - 1), None);
    }

    #[test]
    fn immediates_are_distinct_kinds() {
        let a = Term::atom(Atom::OK);
        assert!(a.is_atom() && !a.is_small() && a.is_immediate());
        assert_eq!(a.as_atom(), Some(Atom::OK));
        assert!(Term::NIL.is_nil() && Term::NIL.is_immediate());
        assert!(!Term::NONE.is_nil());
        assert_eq!(Term::pid(77).as_pid(), Some(77));
        assert_eq!(Term::boolean(true), Term::TRUE);
    }

    #[test]
    fn pointers_keep_offset_and_literal_bit() {
        let h = Term::heap_pointer(TAG_CONS, 1234);
        let l = Term::literal_pointer(TAG_BOXED, 99);
        assert!(h.is_cons() && !h.is_literal() && h.offset() == 1234);
        assert!(l.is_boxed() && l.is_literal() && l.offset() == 99);
    }
}
