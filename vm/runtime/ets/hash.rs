//! Hashing terms for the hash tables of ets (`set`, `bag`,
//! `duplicate_bag`): terms equal under `=:=` hash alike, wherever they
//! live (a process heap, a table object, the literal area).
//!
//! The walk is iterative and hashes what a term is (`View`), never where
//! it is. Immediate elements are mixed in place, so a flat key (an
//! integer, an atom, a tuple of immediates) hashes without allocating.

use crate::heap::Heap;
use crate::term::{Term, View};

const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// Marks that keep structures apart (`{a}` from `[a]` from `a`).
const TUPLE: u64 = 0x1000_0000_0000_0001;
const CONS: u64 = 0x2000_0000_0000_0002;
const FLOAT: u64 = 0x3000_0000_0000_0003;
const BIG: u64 = 0x4000_0000_0000_0004;
const FUN: u64 = 0x5000_0000_0000_0005;
const EXPORT: u64 = 0x6000_0000_0000_0006;
const REF: u64 = 0x7000_0000_0000_0007;
const MAP: u64 = 0x8000_0000_0000_0008;
const BINARY: u64 = 0x9000_0000_0000_0009;

#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(26) ^ v).wrapping_mul(SEED)
}

/// A final avalanche (splitmix64's), so every bit of the input reaches
/// the low bits the hash table indexes by and the high bits it tags with.
#[inline]
fn finish(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// The hash of `t` (on `heap`).
#[inline]
pub fn hash(heap: &Heap, t: Term) -> u64 {
    if t.is_immediate() {
        return finish(t.0);
    }
    hash_compound(heap, t)
}

fn hash_compound(heap: &Heap, t: Term) -> u64 {
    let mut h = SEED;
    let mut stack: Vec<Term> = Vec::new();
    let mut next = Some(t);
    while let Some(mut t) = next {
        // A list's spine is followed in this loop, not pushed, so a long
        // list needs no stack.
        loop {
            if t.is_immediate() {
                h = mix(h, t.0);
                break;
            }
            match heap.view(t) {
                View::Cons(head, tail) => {
                    h = mix(h, CONS);
                    if head.is_immediate() {
                        h = mix(h, head.0);
                    } else {
                        h = mix(h, 0);
                        stack.push(head);
                    }
                    t = tail;
                }
                view => {
                    h = hash_leaf(h, view, &mut stack);
                    break;
                }
            }
        }
        next = stack.pop();
    }
    finish(h)
}

/// Mixes one non-list object; pushes its compound children.
fn hash_leaf(mut h: u64, view: View, stack: &mut Vec<Term>) -> u64 {
    let mut children = |h: &mut u64, terms: &[Term]| {
        for &e in terms {
            if e.is_immediate() {
                *h = mix(*h, e.0);
            } else {
                *h = mix(*h, 0);
                stack.push(e);
            }
        }
    };
    // A bitstring hashes as its bytes (its length in bits tells apart
    // the rare pairs that share them).
    let owned;
    let view = match view {
        View::Bitstring(b) => {
            h = mix(h, b.len as u64);
            owned = b.to_vec();
            View::Binary(&owned)
        }
        v => v,
    };
    match view {
        // Mapped to its bytes above.
        View::Bitstring(_) => {}
        View::Tuple(elements) => {
            h = mix(h, TUPLE ^ elements.len() as u64);
            children(&mut h, elements);
        }
        View::Float(f) => {
            // 0.0 =:= -0.0 in OTP 25.
            h = mix(mix(h, FLOAT), (f + 0.0).to_bits());
        }
        View::Big(b) => {
            h = mix(h, BIG ^ b.negative as u64);
            for limb in b.limbs {
                h = mix(h, limb.0);
            }
        }
        View::Fun { index, captured } => {
            h = mix(mix(h, FUN), index as u64);
            children(&mut h, captured);
        }
        View::ExternalFun {
            module,
            function,
            arity,
        } => {
            h = mix(h, EXPORT);
            h = mix(h, Term::atom(module).0);
            h = mix(h, Term::atom(function).0);
            h = mix(h, arity as u64);
        }
        View::Ref(id) => h = mix(mix(h, REF), id),
        View::ExtPid { node, id } => h = mix(mix(mix(h, REF ^ 1), node as u64), id),
        View::ExtRef { node, words, .. } => {
            h = mix(mix(h, REF ^ 2), node as u64);
            for w in words {
                h = mix(h, w as u64);
            }
        }
        View::Map { keys, values } => {
            h = mix(h, MAP ^ keys.len() as u64);
            children(&mut h, &keys);
            children(&mut h, &values);
        }
        View::Binary(bytes) => {
            h = mix(h, BINARY ^ bytes.len() as u64);
            let mut chunks = bytes.chunks_exact(8);
            for c in &mut chunks {
                h = mix(h, u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
            }
            let mut last = [0u8; 8];
            last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
            h = mix(h, u64::from_le_bytes(last));
        }
        // Immediates and lists are handled by the caller.
        View::Small(_) | View::Atom(_) | View::Nil | View::Pid(_) | View::Cons(..) => {}
        View::NotAValue => {}
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Atom;

    /// `{N, [a, <<"xy">>], F}` built on a heap of its own.
    fn sample(n: i64, f: f64) -> (Heap, Term) {
        let mut heap = Heap::new();
        heap.ensure(64, &mut []).unwrap();
        let bin = heap.binary(b"xy");
        let list = heap.list(&[Term::atom(Atom::intern("a")), bin]);
        let float = heap.float(f);
        let t = heap.tuple(&[Term::small(n), list, float]);
        (heap, t)
    }

    #[test]
    fn equal_terms_on_different_heaps_hash_alike() {
        let (h1, t1) = sample(7, 1.5);
        // A second heap with other words first, so the offsets differ.
        let mut h2 = Heap::new();
        h2.ensure(64, &mut []).unwrap();
        let _padding = h2.float(9.0);
        let bin = h2.binary(b"xy");
        let list = h2.list(&[Term::atom(Atom::intern("a")), bin]);
        let float = h2.float(1.5);
        let t2 = h2.tuple(&[Term::small(7), list, float]);
        assert_ne!(t1, t2);
        assert_eq!(hash(&h1, t1), hash(&h2, t2));
        let (h3, t3) = sample(8, 1.5);
        assert_ne!(hash(&h1, t1), hash(&h3, t3));
    }

    #[test]
    fn zero_and_minus_zero_hash_alike_and_ints_differ_from_floats() {
        let (h1, t1) = sample(1, 0.0);
        let (h2, t2) = sample(1, -0.0);
        assert_eq!(hash(&h1, t1), hash(&h2, t2));
        let mut heap = Heap::new();
        heap.ensure(8, &mut []).unwrap();
        let one = heap.float(1.0);
        assert_ne!(hash(&heap, one), hash(&heap, Term::small(1)));
    }

    #[test]
    fn long_and_deep_lists_hash_without_recursion() {
        let mut heap = Heap::new();
        heap.ensure(2 * 200_001, &mut []).unwrap();
        let mut list = Term::NIL;
        for i in 0..100_000 {
            list = heap.cons(Term::small(i), list);
        }
        let mut deep = Term::NIL;
        for _ in 0..100_000 {
            deep = heap.cons(deep, Term::NIL);
        }
        assert_ne!(hash(&heap, list), hash(&heap, deep));
    }
}
