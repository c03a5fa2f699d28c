//! `erlang:phash/2` and `erlang:phash2/1,2` with BEAM's exact values.
//!
//! Programs print these hashes and `dict`/`sets` lay out their buckets by
//! them, so act computes the two portable term hashes the way BEAM
//! defines them: `phash` is the old bytewise multiply-and-add hash over
//! prime constants, `phash2` Bob Jenkins' mix over 32-bit words. Both read
//! the term's value, never its layout, so they agree across machines.
//! Pids, refs and funs have no portable value in act; they get a stable
//! hash of their own.

use super::{BifError, BifResult, Context};
use crate::heap::Heap;
use crate::term::view::View;
use crate::term::{Atom, Term};

/// Large primes (just above 2^28) of the old `phash` hash.
const P1: u32 = 268_440_163;
const P2: u32 = 268_439_161;
const P3: u32 = 268_435_459;
const P4: u32 = 268_436_141;
const P5: u32 = 268_438_633;
const P6: u32 = 268_437_017;
const P8: u32 = 268_437_511;
const P9: u32 = 268_439_627;
const P10: u32 = 268_440_479;
const P13: u32 = 268_440_593;
const P14: u32 = 268_440_611;

/// The golden ratio constant and its multiples, which `phash2` adds to a
/// word to say what kind of value it came from.
const GOLDEN: u32 = 0x9e37_79b9;
const fn golden(n: u32) -> u32 {
    GOLDEN.wrapping_mul(n)
}

/// BEAM's tag number for `[]`, mixed in when a list ends.
const NIL_TAG: u32 = 2;

/// The hash BEAM's atom table keeps for an atom: hashpjw over its latin-1
/// bytes (a two-byte UTF-8 sequence for U+0080..U+00FF counts as the one
/// latin-1 byte).
fn atom_hash(atom: Atom) -> u32 {
    let bytes = atom.name().as_bytes();
    let mut h: u32 = 0;
    let mut i = 0;
    while i < bytes.len() {
        let mut v = bytes[i] as u32;
        i += 1;
        if i < bytes.len() && (v & 0xFE) == 0xC2 && (bytes[i] & 0xC0) == 0x80 {
            v = ((v << 6) | (bytes[i] as u32 & 0x3F)) & 0xFF;
            i += 1;
        }
        h = (h << 4).wrapping_add(v);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
            h ^= g;
        }
    }
    h
}

fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    macro_rules! step {
        ($x:ident, $y:ident, $z:ident, $op:tt, $n:literal) => {
            *$x = $x.wrapping_sub(*$y).wrapping_sub(*$z);
            *$x ^= *$z $op $n;
        };
    }
    step!(a, b, c, >>, 13);
    step!(b, c, a, <<, 8);
    step!(c, a, b, >>, 13);
    step!(a, b, c, >>, 12);
    step!(b, c, a, <<, 16);
    step!(c, a, b, >>, 5);
    step!(a, b, c, >>, 3);
    step!(b, c, a, <<, 10);
    step!(c, a, b, >>, 15);
}

/// Jenkins' block hash of a byte string, seeded with `init`.
fn block_hash(bytes: &[u8], init: u32) -> u32 {
    let word = |k: &[u8]| u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
    let (mut a, mut b, mut c) = (GOLDEN, GOLDEN, init);
    let mut k = bytes;
    while k.len() >= 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    c = c.wrapping_add(bytes.len() as u32);
    // The tail: bytes 0..4 go to a, 4..8 to b, 8..11 to c above its
    // lowest byte (which the length took).
    for (i, &byte) in k.iter().enumerate() {
        let v = byte as u32;
        match i {
            0..=3 => a = a.wrapping_add(v << (8 * i)),
            4..=7 => b = b.wrapping_add(v << (8 * (i - 4))),
            _ => c = c.wrapping_add(v << (8 * (i - 7))),
        }
    }
    mix(&mut a, &mut b, &mut c);
    c
}

/// What is left to do on `phash2`'s explicit stack.
enum Job2 {
    Term(Term),
    /// End of one key-value pair of a map: fold its hash into the xor.
    MapPair,
    /// End of a map: restore the outer hash and xor, mix in this xor.
    MapTail {
        outer: u32,
        outer_xor: u32,
    },
}

struct Hash2 {
    hash: u32,
    xor: u32,
}

impl Hash2 {
    fn word2(&mut self, x: u32, y: u32, constant: u32) {
        let mut a = constant.wrapping_add(x);
        let mut b = constant.wrapping_add(y);
        mix(&mut a, &mut b, &mut self.hash);
    }

    fn word(&mut self, x: u32, constant: u32) {
        self.word2(x, 0, constant);
    }

    /// Magnitude as 32-bit words, least significant first, taken in pairs.
    fn bignum(&mut self, negative: bool, words: &[u32]) {
        let constant = if negative { golden(10) } else { golden(11) };
        for pair in words.chunks(2) {
            self.word2(pair[0], pair.get(1).copied().unwrap_or(0), constant);
        }
    }

    fn small(&mut self, i: i64) {
        if (-(1 << 27)..(1 << 27)).contains(&i) {
            let y = i as i32;
            if y < 0 {
                self.word(y.wrapping_neg() as u32, GOLDEN);
            }
            self.word(y as u32, GOLDEN);
        } else {
            let m = i.unsigned_abs();
            self.bignum(i < 0, &[m as u32, (m >> 32) as u32]);
        }
    }
}

/// `make_hash2`: the value `phash2` reduces.
fn hash2(heap: &Heap, term: Term) -> u32 {
    let mut h = Hash2 { hash: 0, xor: 0 };
    let mut stack = vec![Job2::Term(term)];
    while let Some(job) = stack.pop() {
        let t = match job {
            Job2::Term(t) => t,
            Job2::MapPair => {
                h.xor ^= h.hash;
                h.hash = 0;
                continue;
            }
            Job2::MapTail { outer, outer_xor } => {
                h.hash = outer;
                let x = h.xor;
                h.word(x, golden(19));
                h.xor = outer_xor;
                continue;
            }
        };
        match heap.view(t) {
            // As OTP: the whole bytes as a binary's (even none), then the
            // bits left over and how many they are.
            View::Bitstring(b) => {
                let bytes = b.to_vec();
                let rest = b.len % 8;
                let whole = &bytes[..b.len / 8];
                h.hash = block_hash(whole, golden(13).wrapping_add(h.hash));
                if rest > 0 {
                    let last = bytes[whole.len()] >> (8 - rest);
                    h.word2(rest as u32, last as u32, golden(15));
                }
            }
            View::Small(i) => h.small(i),
            View::Atom(a) => {
                if h.hash == 0 {
                    h.hash = atom_hash(a);
                } else {
                    h.word(atom_hash(a), golden(3));
                }
            }
            View::Nil => {
                if h.hash == 0 {
                    h.hash = 3_468_870_702;
                } else {
                    h.word(NIL_TAG, golden(2));
                }
            }
            View::Cons(..) => {
                // Runs of bytes go four to a word; any other element is a
                // term of its own, and the tail is hashed after it.
                let mut t = t;
                let mut packed: u32 = 0;
                let mut count = 0;
                loop {
                    let (head, tail) = heap.cons_parts(t);
                    match head.as_small() {
                        Some(b @ 0..=255) => {
                            packed = (packed << 8).wrapping_add(b as u32);
                            count += 1;
                            if count == 4 {
                                h.word(packed, golden(4));
                                packed = 0;
                                count = 0;
                            }
                            if !tail.is_cons() {
                                if count > 0 {
                                    h.word(packed, golden(4));
                                }
                                stack.push(Job2::Term(tail));
                                break;
                            }
                            t = tail;
                        }
                        _ => {
                            if count > 0 {
                                h.word(packed, golden(4));
                            }
                            stack.push(Job2::Term(tail));
                            stack.push(Job2::Term(head));
                            break;
                        }
                    }
                }
            }
            View::Tuple(elements) => {
                h.word(elements.len() as u32, golden(9));
                stack.extend(elements.iter().rev().map(|&e| Job2::Term(e)));
            }
            View::Map { keys, values } => {
                h.word(keys.len() as u32, golden(16));
                if !keys.is_empty() {
                    stack.push(Job2::MapTail {
                        outer: h.hash,
                        outer_xor: h.xor,
                    });
                    h.hash = 0;
                    h.xor = 0;
                    for (&k, &v) in keys.iter().zip(values.iter()).rev() {
                        stack.push(Job2::MapPair);
                        stack.push(Job2::Term(v));
                        stack.push(Job2::Term(k));
                    }
                }
            }
            View::Float(f) => {
                let bits = if f == 0.0 { 0 } else { f.to_bits() };
                h.word2((bits >> 32) as u32, bits as u32, golden(12));
            }
            View::Big(big) => {
                let words: Vec<u32> = big
                    .limbs
                    .iter()
                    .flat_map(|l| [l.0 as u32, (l.0 >> 32) as u32])
                    .collect();
                h.bignum(big.negative, &words);
            }
            View::Binary(bytes) => {
                let seed = golden(13).wrapping_add(h.hash);
                h.hash = if bytes.is_empty() {
                    seed
                } else {
                    block_hash(bytes, seed)
                };
            }
            View::Pid(id) => h.word(id as u32, golden(5)),
            View::ExtPid { node, id } => h.word2(id as u32, node, golden(5)),
            View::Ref(id) => h.word(id as u32, golden(7)),
            View::ExtRef { node, words, .. } => h.word2(words[0], node, golden(7)),
            View::Fun { index, captured } => {
                h.word2(captured.len() as u32, index, GOLDEN);
                stack.extend(captured.iter().rev().map(|&e| Job2::Term(e)));
            }
            View::ExternalFun {
                module,
                function,
                arity,
            } => {
                h.word2(arity, atom_hash(module), GOLDEN);
                h.word(atom_hash(function), golden(14));
            }
            View::NotAValue => {}
        }
    }
    h.hash
}

/// What is left to do on `phash`'s explicit stack.
enum Job1 {
    Term(Term),
    /// The elements of a tuple are done: mix in its arity.
    TupleEnd(u32),
    /// A list's tail is done.
    ListEnd,
}

/// The bytes of `n`'s magnitude, least significant first: whole 32-bit
/// words, as `phash` reads integers.
fn phash_integer(hash: u32, negative: bool, words: &[u32]) -> u32 {
    let mut hash = hash;
    for w in words {
        for byte in w.to_le_bytes() {
            hash = hash.wrapping_mul(P2).wrapping_add(byte as u32);
        }
    }
    hash.wrapping_mul(if negative { P4 } else { P3 })
}

/// Magnitude words without high zero words (at least one word).
fn trimmed(mut words: Vec<u32>) -> Vec<u32> {
    while words.len() > 1 && words.last() == Some(&0) {
        words.pop();
    }
    words
}

/// `make_hash`: the value `phash` reduces.
fn hash1(heap: &Heap, term: Term) -> u32 {
    let mut hash: u32 = 0;
    let mut stack = vec![Job1::Term(term)];
    while let Some(job) = stack.pop() {
        let t = match job {
            Job1::Term(t) => t,
            Job1::TupleEnd(arity) => {
                hash = hash.wrapping_mul(P9).wrapping_add(arity);
                continue;
            }
            Job1::ListEnd => {
                hash = hash.wrapping_mul(P8);
                continue;
            }
        };
        // A bitstring hashes as its bytes (OTP mixes in its bit length
        // too; act's values for bitstrings are its own).
        let owned;
        let view = match heap.view(t) {
            View::Bitstring(b) => {
                owned = b.to_vec();
                View::Binary(&owned)
            }
            v => v,
        };
        match view {
            // Mapped to its bytes above.
            View::Bitstring(_) => {}
            View::Nil => hash = hash.wrapping_mul(P3).wrapping_add(1),
            View::Atom(a) => hash = hash.wrapping_mul(P1).wrapping_add(atom_hash(a)),
            View::Small(i) => {
                let m = i.unsigned_abs();
                hash = phash_integer(hash, i < 0, &trimmed(vec![m as u32, (m >> 32) as u32]));
            }
            View::Big(big) => {
                let words: Vec<u32> = big
                    .limbs
                    .iter()
                    .flat_map(|l| [l.0 as u32, (l.0 >> 32) as u32])
                    .collect();
                hash = phash_integer(hash, big.negative, &trimmed(words));
            }
            View::Binary(bytes) => {
                for &b in bytes {
                    hash = hash.wrapping_mul(P1).wrapping_add(b as u32);
                }
                hash = hash.wrapping_mul(P4).wrapping_add(bytes.len() as u32);
            }
            View::Float(f) => {
                let bits = if f == 0.0 { 0 } else { f.to_bits() };
                hash = hash
                    .wrapping_mul(P6)
                    .wrapping_add((bits as u32) ^ ((bits >> 32) as u32));
            }
            View::Cons(..) => {
                // Bytes mix in directly; any other element is hashed as a
                // term before the rest of the list. The list's final tail
                // is hashed last, then its end is marked.
                let mut t = t;
                loop {
                    let (head, tail) = heap.cons_parts(t);
                    if let Some(b @ 0..=255) = head.as_small() {
                        hash = hash.wrapping_mul(P2).wrapping_add(b as u32);
                        if tail.is_cons() {
                            t = tail;
                            continue;
                        }
                        stack.push(Job1::ListEnd);
                        stack.push(Job1::Term(tail));
                    } else {
                        if !tail.is_cons() {
                            stack.push(Job1::ListEnd);
                        }
                        stack.push(Job1::Term(tail));
                        stack.push(Job1::Term(head));
                    }
                    break;
                }
            }
            View::Tuple(elements) => {
                stack.push(Job1::TupleEnd(elements.len() as u32));
                stack.extend(elements.iter().rev().map(|&e| Job1::Term(e)));
            }
            View::Map { .. } => {
                hash = hash
                    .wrapping_mul(P13)
                    .wrapping_add(P14)
                    .wrapping_add(hash2(heap, t));
            }
            View::ExtPid { node, id } => {
                hash = phash_integer(hash, false, &[id as u32, node]);
                hash = hash.wrapping_mul(P6);
            }
            View::Pid(id) => {
                hash = phash_integer(hash, false, &[id as u32]);
                hash = hash.wrapping_mul(P6);
            }
            View::Ref(id) => hash = phash_integer(hash, false, &[id as u32]).wrapping_mul(P10),
            View::ExtRef { node, words, .. } => {
                hash = phash_integer(hash, false, &[words[0], node]).wrapping_mul(P10)
            }
            View::Fun { index, captured } => {
                hash = hash
                    .wrapping_mul(P10)
                    .wrapping_add(captured.len() as u32)
                    .wrapping_mul(P2)
                    .wrapping_add(index);
                stack.extend(captured.iter().rev().map(|&e| Job1::Term(e)));
            }
            View::ExternalFun {
                module,
                function,
                arity,
            } => {
                hash = hash
                    .wrapping_mul(P5)
                    .wrapping_add(arity)
                    .wrapping_mul(P1)
                    .wrapping_add(atom_hash(module))
                    .wrapping_mul(P1)
                    .wrapping_add(atom_hash(function));
            }
            View::NotAValue => {}
        }
    }
    hash
}

fn range(t: Term) -> Result<u64, BifError> {
    let r = t.as_small().ok_or(BifError::Badarg)?;
    if (1..=(1 << 32)).contains(&r) {
        Ok(r as u64)
    } else {
        Err(BifError::Badarg)
    }
}

pub fn phash_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let range = range(args[1])?;
    let h = hash1(&ctx.process.heap, args[0]) as u64;
    Ok(Term::small((h % range + 1) as i64))
}

pub fn phash2_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(Term::small(
        (hash2(&ctx.process.heap, args[0]) & ((1 << 27) - 1)) as i64,
    ))
}

pub fn phash2_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let range = range(args[1])?;
    let h = hash2(&ctx.process.heap, args[0]) as u64;
    Ok(Term::small((h % range) as i64))
}
