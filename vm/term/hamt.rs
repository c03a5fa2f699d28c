//! The order in which OTP 25 walks a map of more than 32 keys.
//!
//! act keeps every map as sorted keys, so small maps (at most 32 keys, a
//! "flatmap" in OTP) already come out in term order as OTP's do. A larger
//! map in OTP is a hash trie: printing it, `maps:fold/3`, `maps:iterator/1`
//! and `maps:next/1` visit the keys by their internal hash, four bits per
//! trie level starting with the lowest four, and `maps:to_list/1`,
//! `keys/1` and `values/1` hand the same walk back reversed. This module
//! computes OTP's internal hash for the keys whose hash does not depend on
//! the running VM (numbers, binaries, lists and tuples of those) and gives
//! the walk; a map with any other key (one holding an atom, a pid, a fun,
//! a map) keeps term order, because in OTP that order depends on
//! atom-table indices and addresses no other VM can reproduce.

use super::Term;
use super::view::View;
use crate::heap::Heap;

/// Maps up to this many keys are flat (term order) in OTP.
const FLATMAP_MAX: usize = 32;

const GOLDEN: u32 = 0x9e37_79b9;
/// The salt OTP starts its internal hash with.
const INTERNAL_SALT: u32 = 3_432_918_353;
/// OTP's raw word for `[]`, hashed as an immediate after a byte string.
const NIL_WORD: u64 = 0x3b;
/// OTP's small integers are 60-bit; beyond that they hash as bignums.
const OTP_SMALL_MIN: i64 = -(1 << 59);
const OTP_SMALL_MAX: i64 = (1 << 59) - 1;

/// `GOLDEN * k` (mod 2^32): the per-type constants of the hash.
const fn hconst(k: u32) -> u32 {
    GOLDEN.wrapping_mul(k)
}

/// Bob Jenkins' 96-bit mix.
fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    let (mut x, mut y, mut z) = (*a, *b, *c);
    x = x.wrapping_sub(y).wrapping_sub(z) ^ (z >> 13);
    y = y.wrapping_sub(z).wrapping_sub(x) ^ (x << 8);
    z = z.wrapping_sub(x).wrapping_sub(y) ^ (y >> 13);
    x = x.wrapping_sub(y).wrapping_sub(z) ^ (z >> 12);
    y = y.wrapping_sub(z).wrapping_sub(x) ^ (x << 16);
    z = z.wrapping_sub(x).wrapping_sub(y) ^ (y >> 5);
    x = x.wrapping_sub(y).wrapping_sub(z) ^ (z >> 3);
    y = y.wrapping_sub(z).wrapping_sub(x) ^ (x << 10);
    z = z.wrapping_sub(x).wrapping_sub(y) ^ (y >> 15);
    (*a, *b, *c) = (x, y, z);
}

struct Hasher(u32);

impl Hasher {
    fn two(&mut self, x: u32, y: u32, k: u32) {
        let mut a = k.wrapping_add(x);
        let mut b = k.wrapping_add(y);
        mix(&mut a, &mut b, &mut self.0);
    }

    /// A light mix of a structure marker.
    fn mark(&mut self, k: u32) {
        self.0 ^= k;
        self.0 = self.0.rotate_left(17);
    }

    fn immediate(&mut self, word: u64) {
        self.two(word as u32, (word >> 32) as u32, GOLDEN);
    }

    fn bignum(&mut self, negative: bool, limbs: impl Iterator<Item = u64>) {
        let k = if negative { hconst(10) } else { hconst(11) };
        for limb in limbs {
            self.two(limb as u32, (limb >> 32) as u32, k);
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        let init = hconst(13).wrapping_add(self.0);
        self.0 = if bytes.is_empty() {
            init
        } else {
            block_hash(bytes, init)
        };
    }
}

fn word_le(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w[..b.len()].copy_from_slice(b);
    u32::from_le_bytes(w)
}

/// Jenkins' lookup2 over a byte block, as OTP hashes binaries.
fn block_hash(bytes: &[u8], init: u32) -> u32 {
    let (mut a, mut b, mut c) = (GOLDEN, GOLDEN, init);
    let mut chunks = bytes.chunks_exact(12);
    for k in &mut chunks {
        a = a.wrapping_add(word_le(&k[0..4]));
        b = b.wrapping_add(word_le(&k[4..8]));
        c = c.wrapping_add(word_le(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
    }
    let rest = chunks.remainder();
    c = c.wrapping_add(bytes.len() as u32);
    let mut tail = [0u8; 12];
    tail[..rest.len()].copy_from_slice(rest);
    // The lowest byte of `c` is reserved for the length.
    c = c.wrapping_add(word_le(&tail[8..11]) << 8);
    b = b.wrapping_add(word_le(&tail[4..8]));
    a = a.wrapping_add(word_le(&tail[0..4]));
    mix(&mut a, &mut b, &mut c);
    c
}

/// OTP's internal hash of `t`, or `None` when it is not reproducible
/// here (see the module comment).
fn internal_hash(heap: &Heap, t: Term) -> Option<u32> {
    internal_hash_at_depth(heap, t, 0)
}

/// OTP 25's map hash of `t` at trie depth `depth` (0 for the first
/// eight levels, 1 for the next eight, ...). When 32 bits of hash have
/// not told two keys apart, OTP hashes them again with a salt made from
/// the depth: the depth mixed in as a one-byte string would be (OTP
/// calls this `make_map_hash`), folded into the internal hash's own salt.
fn internal_hash_at_depth(heap: &Heap, t: Term, depth: u32) -> Option<u32> {
    let mut salt = Hasher(0);
    if depth > 0 {
        salt.two(depth, 1, hconst(22));
    }
    internal_hash_salted(heap, t, salt.0 ^ INTERNAL_SALT)
}

/// OTP's internal hash of `t`, started from `start`.
fn internal_hash_salted(heap: &Heap, t: Term, start: u32) -> Option<u32> {
    enum Next {
        Term(Term),
        /// The tail of a list is next: OTP mixes in a marker first.
        Tail,
    }
    let mut h = Hasher(start);
    let mut stack: Vec<Next> = Vec::new();
    let mut t = t;
    loop {
        match heap.view(t) {
            View::Cons(..) => {
                // A run of bytes (Latin-1 text) is packed four to a word.
                let (mut packed, mut count) = (0u32, 0u32);
                let mut rest = t;
                while let View::Cons(head, tail) = heap.view(rest) {
                    let Some(byte) = head.as_small().filter(|b| (0..=255).contains(b)) else {
                        break;
                    };
                    packed = (packed << 8).wrapping_add(byte as u32);
                    if count == 3 {
                        h.two(packed, 0, hconst(4));
                        packed = 0;
                        count = 0;
                    } else {
                        count += 1;
                    }
                    rest = tail;
                }
                if count > 0 {
                    h.two(packed, count, hconst(22));
                }
                if let View::Cons(head, tail) = heap.view(rest) {
                    h.mark(hconst(17));
                    stack.push(Next::Term(tail));
                    if !matches!(heap.view(tail), View::Cons(..)) {
                        stack.push(Next::Tail);
                    }
                    t = head;
                } else {
                    t = rest;
                }
                continue;
            }
            View::Small(i) if (OTP_SMALL_MIN..=OTP_SMALL_MAX).contains(&i) => {
                h.immediate(((i << 4) as u64) | 0xf);
            }
            View::Small(i) => h.bignum(i < 0, std::iter::once(i.unsigned_abs())),
            View::Big(big) => h.bignum(big.negative, big.limbs.iter().map(|l| l.0)),
            View::Float(f) => {
                let f = if f == 0.0 { 0.0 } else { f };
                let bits = f.to_bits();
                h.two(bits as u32, (bits >> 32) as u32, hconst(12));
            }
            View::Binary(bytes) => h.bytes(bytes),
            View::Nil => h.immediate(NIL_WORD),
            View::Tuple(elements) => {
                h.two(elements.len() as u32, 0, hconst(9));
                if let Some((&first, rest)) = elements.split_first() {
                    stack.extend(rest.iter().rev().map(|&e| Next::Term(e)));
                    t = first;
                    continue;
                }
            }
            _ => return None,
        }
        loop {
            match stack.pop() {
                None => return Some(h.0),
                Some(Next::Tail) => h.mark(hconst(18)),
                Some(Next::Term(next)) => {
                    t = next;
                    break;
                }
            }
        }
    }
}

/// The hash read as the trie reads it: lowest nibble first.
fn trie_key(hash: u32) -> u32 {
    let mut key = 0;
    for level in 0..8 {
        key = (key << 4) | ((hash >> (4 * level)) & 0xf);
    }
    key
}

/// The positions of `keys` (a map's keys in term order) in the order OTP
/// 25 walks that map (print, fold, iterator), or `None` when that is term
/// order itself or not reproducible.
pub fn walk_order(heap: &Heap, keys: &[Term]) -> Option<Vec<usize>> {
    if keys.len() <= FLATMAP_MAX {
        return None;
    }
    let mut ranked = Vec::with_capacity(keys.len());
    for (i, &k) in keys.iter().enumerate() {
        ranked.push((trie_key(internal_hash(heap, k)?), i));
    }
    ranked.sort_unstable();
    // Keys whose 32 bits of hash are equal: OTP goes on eight levels
    // deeper with their hash at depth 1, then depth 2, and so on.
    let mut start = 0;
    while start < ranked.len() {
        let mut end = start + 1;
        while end < ranked.len() && ranked[end].0 == ranked[start].0 {
            end += 1;
        }
        if end - start > 1 {
            untie(heap, keys, &mut ranked[start..end], 1)?;
        }
        start = end;
    }
    Some(ranked.into_iter().map(|(_, i)| i).collect())
}

/// Orders `tied` (keys whose hashes agree so far) by their hash at
/// `depth`, deeper while they still agree; after a few rounds (never
/// seen in practice) what is left stays in term order.
fn untie(heap: &Heap, keys: &[Term], tied: &mut [(u32, usize)], depth: u32) -> Option<()> {
    if depth > 4 {
        tied.sort_unstable_by_key(|&(_, i)| i);
        return Some(());
    }
    let mut deeper = Vec::with_capacity(tied.len());
    for &(_, i) in tied.iter() {
        deeper.push((trie_key(internal_hash_at_depth(heap, keys[i], depth)?), i));
    }
    deeper.sort_unstable();
    let mut start = 0;
    while start < deeper.len() {
        let mut end = start + 1;
        while end < deeper.len() && deeper[end].0 == deeper[start].0 {
            end += 1;
        }
        if end - start > 1 {
            untie(heap, keys, &mut deeper[start..end], depth + 1)?;
        }
        start = end;
    }
    for (slot, d) in tied.iter_mut().zip(deeper) {
        *slot = d;
    }
    Some(())
}

/// `keys` and `values` rearranged into OTP's walk order (see `walk_order`),
/// or as they are.
pub fn walk(heap: &Heap, keys: &[Term], values: &[Term]) -> (Vec<Term>, Vec<Term>) {
    match walk_order(heap, keys) {
        Some(order) => (
            order.iter().map(|&i| keys[i]).collect(),
            order.iter().map(|&i| values[i]).collect(),
        ),
        None => (keys.to_vec(), values.to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_integer_keys_walk_as_otp_25() {
        let mut heap = Heap::new();
        let keys: Vec<Term> = (1..=33).map(Term::small).collect();
        let order = walk_order(&heap, &keys).unwrap();
        let walked: Vec<i64> = order.iter().map(|&i| i as i64 + 1).collect();
        // What OTP 25 prints for maps:from_list([{I, x} || I <- lists:seq(1, 33)]).
        assert_eq!(
            walked,
            [
                16, 18, 5, 19, 27, 10, 24, 4, 21, 22, 17, 3, 8, 1, 7, 2, 14, 15, 20, 13, 6, 28, 25,
                32, 9, 11, 31, 26, 30, 29, 23, 12, 33
            ]
        );
        let _ = &mut heap;
    }
}
