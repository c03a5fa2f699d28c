//! `View`: what a term is, read out of a heap or the literal area.
//!
//! `Heap::view(t)` decodes a term into this enum without copying: slices
//! borrow the heap (or the literal area, which lives forever). Immediates
//! need no heap. Binaries are shown as `&[u8]`, whether their bytes are on
//! the heap, off the heap or a slice of another binary (sub-binary).

use super::{Atom, Term};
use num_bigint::{BigInt, BigUint, Sign};
use std::borrow::Cow;

#[derive(Clone, Debug)]
pub enum View<'a> {
    Small(i64),
    Atom(Atom),
    Nil,
    Pid(u64),
    Cons(Term, Term),
    Tuple(&'a [Term]),
    Float(f64),
    Big(BigView<'a>),
    /// A closure: its index in the interpreter's fun table, and the terms
    /// it captured.
    Fun {
        index: u32,
        captured: &'a [Term],
    },
    /// `fun M:F/A`.
    ExternalFun {
        module: Atom,
        function: Atom,
        arity: u32,
    },
    Ref(u64),
    /// A pid of another node: its node-table index (`term::node`) and
    /// its id and serial packed as a local pid's (`id | serial << 32`).
    ExtPid {
        node: u32,
        id: u64,
    },
    /// A reference of another node: its node-table index and its `len`
    /// 32-bit words (least significant first, as NEWER_REFERENCE_EXT
    /// carries them; the rest are 0).
    ExtRef {
        node: u32,
        len: u32,
        words: [u32; 5],
    },
    /// Keys in term order, values in the same order; `keys.len() == values.len()`.
    /// Borrowed for a flat map, collected for a large one (`heap::map`).
    Map {
        keys: Cow<'a, [Term]>,
        values: Cow<'a, [Term]>,
    },
    Binary(&'a [u8]),
    /// A bitstring whose length is not a multiple of 8 (a binary is
    /// always `Binary`).
    Bitstring(super::bits::Bits<'a>),
    /// `Term::NONE` or a header word: not a value.
    NotAValue,
}

/// A bignum on the heap: sign and magnitude limbs (u64, least significant
/// first, as raw words). Always outside the small-integer range.
#[derive(Clone, Copy, Debug)]
pub struct BigView<'a> {
    pub negative: bool,
    pub limbs: &'a [Term],
}

impl<'a> BigView<'a> {
    /// The limbs as plain words (what `term::bignum` works on).
    pub fn magnitude(&self) -> &'a [u64] {
        // SAFETY: `Term` is a `repr(transparent)` u64, so a slice of terms
        // is a slice of u64 of the same length and alignment.
        unsafe { std::slice::from_raw_parts(self.limbs.as_ptr().cast::<u64>(), self.limbs.len()) }
    }

    pub fn to_bigint(&self) -> BigInt {
        // As 32-bit digits, which num-bigint packs straight into its own
        // (from bytes it goes through a general radix conversion).
        let mut digits = Vec::with_capacity(self.limbs.len() * 2);
        for limb in self.limbs {
            digits.push(limb.0 as u32);
            digits.push((limb.0 >> 32) as u32);
        }
        let magnitude = BigUint::new(digits);
        BigInt::from_biguint(
            if self.negative {
                Sign::Minus
            } else {
                Sign::Plus
            },
            magnitude,
        )
    }
}
