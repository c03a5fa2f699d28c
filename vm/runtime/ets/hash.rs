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
    match view {
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
        View::Map { keys, values } => {
            h = mix(h, MAP ^ keys.len() as u64);
            children(&mut h, keys);
            children(&mut h, values);
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
