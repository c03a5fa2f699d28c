//! Message digests and checksums: `erlang:md5/1` and its incremental
//! `md5_init/0`, `md5_update/2`, `md5_final/1` (on the `md-5` crate),
//! `erlang:crc32/1`, `erlang:adler32/1` and `crypto:hash/2` (md4, md5,
//! ripemd160, sha, sha224, sha256, sha384, sha512, sha3_224 ... sha3_512;
//! the SHAs written from FIPS 180-4 and FIPS 202, MD4 from RFC 1320,
//! RIPEMD-160 from its authors' paper, the checksums from ISO 3309 and
//! RFC 1950). HMAC and the incremental hash
//! API are built on `hash/2` in stdlib/crypto.act.

use super::erlang::make_binary;
use super::{BifError, BifResult, Context};
use crate::term::{Term, iolist};
use md5::digest::common::hazmat::{SerializableState, SerializedState};
use md5::{Digest, Md5};
use std::sync::OnceLock;

/// The bytes of an iodata argument.
fn data(ctx: &Context, t: Term) -> Result<Vec<u8>, BifError> {
    let heap = &ctx.process.heap;
    if let Some(b) = heap.binary_bytes(t) {
        return Ok(b.to_vec());
    }
    iolist::iolist_bytes(heap, t).ok_or(BifError::Badarg)
}

/// Message padding shared by MD5 and SHA: 0x80, zeros, then the bit
/// length (little-endian for MD5, big-endian for SHA).
fn padded(msg: &[u8], big_endian: bool) -> Vec<u8> {
    let bits = (msg.len() as u64).wrapping_mul(8);
    let mut m = msg.to_vec();
    m.push(0x80);
    while m.len() % 64 != 56 {
        m.push(0);
    }
    m.extend_from_slice(&if big_endian {
        bits.to_be_bytes()
    } else {
        bits.to_le_bytes()
    });
    m
}

fn md5(msg: &[u8]) -> Vec<u8> {
    Md5::digest(msg).to_vec()
}

/// `erlang:md5(Data)`.
pub fn md5_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = data(ctx, args[0])?;
    make_binary(ctx, md5(&bytes), args)
}

/// An MD5 context as the binary `md5_init/0` and `md5_update/2` return:
/// the hasher's serialized state (opaque, as OTP's context is).
fn md5_context(ctx: &Context, t: Term) -> Result<Md5, BifError> {
    let bytes = ctx.process.heap.binary_bytes(t).ok_or(BifError::Badarg)?;
    let state = SerializedState::<Md5>::try_from(bytes).map_err(|_| BifError::Badarg)?;
    Md5::deserialize(&state).map_err(|_| BifError::Badarg)
}

/// `erlang:md5_init()`.
pub fn md5_init_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    make_binary(ctx, Md5::new().serialize().to_vec(), args)
}

/// `erlang:md5_update(Context, Data)`.
pub fn md5_update_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut hasher = md5_context(ctx, args[0])?;
    hasher.update(data(ctx, args[1])?);
    make_binary(ctx, hasher.serialize().to_vec(), args)
}

/// `erlang:md5_final(Context)`.
pub fn md5_final_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let hasher = md5_context(ctx, args[0])?;
    make_binary(ctx, hasher.finalize().to_vec(), args)
}

fn sha1(msg: &[u8]) -> Vec<u8> {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    for chunk in padded(msg, true).chunks(64) {
        let mut w = [0u32; 80];
        for (i, b) in chunk.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, &wi) in w.iter().enumerate() {
            let (f, k) = match i / 20 {
                0 => ((b & c) | (!b & d), 0x5A827999),
                1 => (b ^ c ^ d, 0x6ED9EBA1),
                2 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6u32),
            };
            let t = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(wi);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, t);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// SHA-256, or SHA-224 (other initial values, first 28 bytes).
fn sha2(msg: &[u8], is224: bool) -> Vec<u8> {
    // The first 32 bits of the fractional parts of the cube roots of the
    // first 64 primes (FIPS 180-4, 4.2.2), worked out once.
    static K: OnceLock<Vec<u32>> = OnceLock::new();
    let k = K.get_or_init(|| {
        primes(64)
            .iter()
            .map(|&p| ((p as f64).cbrt().fract() * 4294967296.0) as u32)
            .collect()
    });
    let mut h: [u32; 8] = if is224 {
        [
            0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7,
            0xbefa4fa4,
        ]
    } else {
        [
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
            0x5be0cd19,
        ]
    };
    for chunk in padded(msg, true).chunks(64) {
        let mut w = [0u32; 64];
        for (i, b) in chunk.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let [a, b, c, d, e, f, g, hh] = v;
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(k[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            v = [t1.wrapping_add(t2), a, b, c, d.wrapping_add(t1), e, f, g];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    let out: Vec<u8> = h.iter().flat_map(|x| x.to_be_bytes()).collect();
    out[..if is224 { 28 } else { 32 }].to_vec()
}

/// The first `n` primes.
fn primes(n: usize) -> Vec<u64> {
    (2u64..)
        .filter(|n| (2..*n).take_while(|d| d * d <= *n).all(|d| n % d != 0))
        .take(n)
        .collect()
}

/// The low 64 bits of a root of `p << shift` (FIPS 180-4's constants are
/// the first 64 fractional bits of square and cube roots of primes).
fn root_bits(p: u64, cube: bool) -> u64 {
    use num_bigint::BigUint;
    let n: BigUint = BigUint::from(p) << if cube { 192u32 } else { 128u32 };
    let r = if cube { n.cbrt() } else { n.sqrt() };
    r.iter_u64_digits().next().unwrap_or(0)
}

/// SHA-512, or SHA-384 (other initial values, first 48 bytes).
fn sha512(msg: &[u8], is384: bool) -> Vec<u8> {
    // The round constants: cube roots of the first 80 primes; the initial
    // values: square roots of the first 16 (the first eight for SHA-512,
    // the ninth to sixteenth for SHA-384; FIPS 180-4, 4.2.3, 5.3.4 and
    // 5.3.5). Worked out once (bignum roots).
    static CONSTANTS: OnceLock<(Vec<u64>, Vec<u64>)> = OnceLock::new();
    let (k, roots) = CONSTANTS.get_or_init(|| {
        let primes = primes(80);
        let k = primes.iter().map(|&p| root_bits(p, true)).collect();
        let roots = primes[..16].iter().map(|&p| root_bits(p, false)).collect();
        (k, roots)
    });
    let first = if is384 { 8 } else { 0 };
    let mut h = [0u64; 8];
    h.copy_from_slice(&roots[first..first + 8]);
    let bits = (msg.len() as u128).wrapping_mul(8);
    let mut m = msg.to_vec();
    m.push(0x80);
    while m.len() % 128 != 112 {
        m.push(0);
    }
    m.extend_from_slice(&bits.to_be_bytes());
    for chunk in m.chunks(128) {
        let mut w = [0u64; 80];
        for (i, b) in chunk.chunks(8).enumerate() {
            w[i] = u64::from_be_bytes(b.try_into().expect("8 bytes"));
        }
        for i in 16..80 {
            let s0 = w[i - 15].rotate_right(1) ^ w[i - 15].rotate_right(8) ^ (w[i - 15] >> 7);
            let s1 = w[i - 2].rotate_right(19) ^ w[i - 2].rotate_right(61) ^ (w[i - 2] >> 6);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..80 {
            let [a, b, c, d, e, f, g, hh] = v;
            let s1 = e.rotate_right(14) ^ e.rotate_right(18) ^ e.rotate_right(41);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(k[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(28) ^ a.rotate_right(34) ^ a.rotate_right(39);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            v = [
                t1.wrapping_add(s0.wrapping_add(maj)),
                a,
                b,
                c,
                d.wrapping_add(t1),
                e,
                f,
                g,
            ];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    let out: Vec<u8> = h.iter().flat_map(|x| x.to_be_bytes()).collect();
    out[..if is384 { 48 } else { 64 }].to_vec()
}

/// One MD4 round: its boolean function, additive constant, the order in
/// which it takes the block's words, and the four rotations it cycles.
type Md4Round = (fn(u32, u32, u32) -> u32, u32, [usize; 16], [u32; 4]);

/// MD4 (RFC 1320): three rounds of sixteen steps over each 64-byte block.
fn md4(msg: &[u8]) -> Vec<u8> {
    let mut h: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    for block in padded(msg, false).chunks(64) {
        let x: Vec<u32> = block
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let mut v = h;
        let rounds: [Md4Round; 3] = [
            (
                |x, y, z| (x & y) | (!x & z),
                0,
                std::array::from_fn(|i| i),
                [3, 7, 11, 19],
            ),
            (
                |x, y, z| (x & y) | (x & z) | (y & z),
                0x5a827999,
                [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15],
                [3, 5, 9, 13],
            ),
            (
                |x, y, z| x ^ y ^ z,
                0x6ed9eba1,
                [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15],
                [3, 9, 11, 15],
            ),
        ];
        for (f, k, order, shifts) in rounds {
            for (j, &word) in order.iter().enumerate() {
                // Steps update a, d, c, b in turn, each from the other three.
                let t = [0, 3, 2, 1][j % 4];
                let mixed = f(v[(t + 1) % 4], v[(t + 2) % 4], v[(t + 3) % 4]);
                v[t] = v[t]
                    .wrapping_add(mixed)
                    .wrapping_add(x[word])
                    .wrapping_add(k)
                    .rotate_left(shifts[j % 4]);
            }
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    h.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// RIPEMD-160: two parallel lines of five rounds, combined crosswise.
fn ripemd160(msg: &[u8]) -> Vec<u8> {
    const R: [[usize; 16]; 5] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [7, 4, 13, 1, 10, 6, 15, 3, 12, 0, 9, 5, 2, 14, 11, 8],
        [3, 10, 14, 4, 9, 15, 8, 1, 2, 7, 0, 6, 13, 11, 5, 12],
        [1, 9, 11, 10, 0, 8, 12, 4, 13, 3, 7, 15, 14, 5, 6, 2],
        [4, 0, 5, 9, 7, 12, 2, 10, 14, 1, 3, 8, 11, 6, 15, 13],
    ];
    const RR: [[usize; 16]; 5] = [
        [5, 14, 7, 0, 9, 2, 11, 4, 13, 6, 15, 8, 1, 10, 3, 12],
        [6, 11, 3, 7, 0, 13, 5, 10, 14, 15, 8, 12, 4, 9, 1, 2],
        [15, 5, 1, 3, 7, 14, 6, 9, 11, 8, 12, 2, 10, 0, 4, 13],
        [8, 6, 4, 1, 3, 11, 15, 0, 5, 12, 2, 13, 9, 7, 10, 14],
        [12, 15, 10, 4, 1, 5, 8, 7, 6, 2, 13, 14, 0, 3, 9, 11],
    ];
    const S: [[u32; 16]; 5] = [
        [11, 14, 15, 12, 5, 8, 7, 9, 11, 13, 14, 15, 6, 7, 9, 8],
        [7, 6, 8, 13, 11, 9, 7, 15, 7, 12, 15, 9, 11, 7, 13, 12],
        [11, 13, 6, 7, 14, 9, 13, 15, 14, 8, 13, 6, 5, 12, 7, 5],
        [11, 12, 14, 15, 14, 15, 9, 8, 9, 14, 5, 6, 8, 6, 5, 12],
        [9, 15, 5, 11, 6, 8, 13, 12, 5, 12, 13, 14, 11, 8, 5, 6],
    ];
    const SR: [[u32; 16]; 5] = [
        [8, 9, 9, 11, 13, 15, 15, 5, 7, 7, 8, 11, 14, 14, 12, 6],
        [9, 13, 15, 7, 12, 8, 9, 11, 7, 7, 12, 7, 6, 15, 13, 11],
        [9, 7, 15, 11, 8, 6, 6, 14, 12, 13, 5, 14, 13, 13, 7, 5],
        [15, 5, 8, 11, 14, 14, 6, 14, 6, 9, 12, 9, 12, 5, 15, 8],
        [8, 5, 12, 9, 12, 5, 14, 6, 8, 13, 6, 5, 15, 13, 11, 11],
    ];
    const K: [u32; 5] = [0, 0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xa953fd4e];
    const KR: [u32; 5] = [0x50a28be6, 0x5c4dd124, 0x6d703ef3, 0x7a6d76e9, 0];
    fn f(round: usize, x: u32, y: u32, z: u32) -> u32 {
        match round {
            0 => x ^ y ^ z,
            1 => (x & y) | (!x & z),
            2 => (x | !y) ^ z,
            3 => (x & z) | (y & !z),
            _ => x ^ (y | !z),
        }
    }
    // One line: `order` picks the word, `round_of` the boolean function.
    let line = |x: &[u32],
                h: &[u32; 5],
                r: &[[usize; 16]; 5],
                s: &[[u32; 16]; 5],
                k: &[u32; 5],
                right: bool| {
        let [mut a, mut b, mut c, mut d, mut e] = *h;
        for round in 0..5 {
            for j in 0..16 {
                let fr = if right { 4 - round } else { round };
                let t = a
                    .wrapping_add(f(fr, b, c, d))
                    .wrapping_add(x[r[round][j]])
                    .wrapping_add(k[round])
                    .rotate_left(s[round][j])
                    .wrapping_add(e);
                a = e;
                e = d;
                d = c.rotate_left(10);
                c = b;
                b = t;
            }
        }
        [a, b, c, d, e]
    };
    let mut h: [u32; 5] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
    for block in padded(msg, false).chunks(64) {
        let x: Vec<u32> = block
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let l = line(&x, &h, &R, &S, &K, false);
        let r = line(&x, &h, &RR, &SR, &KR, true);
        h = [
            h[1].wrapping_add(l[2]).wrapping_add(r[3]),
            h[2].wrapping_add(l[3]).wrapping_add(r[4]),
            h[3].wrapping_add(l[4]).wrapping_add(r[0]),
            h[4].wrapping_add(l[0]).wrapping_add(r[1]),
            h[0].wrapping_add(l[1]).wrapping_add(r[2]),
        ];
    }
    h.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The Keccak-f[1600] permutation on 25 lanes, lane (x, y) at x + 5y.
/// Round constants and rotation offsets are generated as FIPS 202
/// defines them (the rc LFSR and the (x, y) walk) rather than listed.
fn keccak_f(a: &mut [u64; 25]) {
    static TABLES: OnceLock<([u64; 24], [u32; 25])> = OnceLock::new();
    let (rc, rot) = TABLES.get_or_init(|| {
        let mut lfsr: u32 = 1;
        let mut bit = |t: usize| -> u64 {
            // rc(t) for successive t: the LFSR x^8 + x^6 + x^5 + x^4 + 1.
            let out = if t == 0 {
                1
            } else {
                lfsr <<= 1;
                if lfsr & 0x100 != 0 {
                    lfsr ^= 0x171;
                }
                lfsr & 1
            };
            u64::from(out)
        };
        let mut rc = [0u64; 24];
        let mut t = 0;
        for c in rc.iter_mut() {
            for j in 0..7 {
                *c |= bit(t) << ((1 << j) - 1);
                t += 1;
            }
        }
        let mut rot = [0u32; 25];
        let (mut x, mut y) = (1, 0);
        for t in 0..24 {
            rot[x + 5 * y] = (((t + 1) * (t + 2) / 2) % 64) as u32;
            (x, y) = (y, (2 * x + 3 * y) % 5);
        }
        (rc, rot)
    });
    for &round_constant in rc {
        let c: [u64; 5] =
            std::array::from_fn(|x| a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20]);
        for x in 0..5 {
            let d = c[(x + 4) % 5] ^ c[(x + 1) % 5].rotate_left(1);
            for y in 0..5 {
                a[x + 5 * y] ^= d;
            }
        }
        let mut b = [0u64; 25];
        for x in 0..5 {
            for y in 0..5 {
                b[y + 5 * ((2 * x + 3 * y) % 5)] = a[x + 5 * y].rotate_left(rot[x + 5 * y]);
            }
        }
        for x in 0..5 {
            for y in 0..5 {
                a[x + 5 * y] = b[x + 5 * y] ^ (!b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
            }
        }
        a[0] ^= round_constant;
    }
}

/// SHA-3 with an `out`-byte digest: a sponge of rate 200 - 2 * out bytes.
fn sha3(msg: &[u8], out: usize) -> Vec<u8> {
    let rate = 200 - 2 * out;
    let mut m = msg.to_vec();
    m.push(0x06);
    while !m.len().is_multiple_of(rate) {
        m.push(0);
    }
    *m.last_mut().expect("a padded block") |= 0x80;
    let mut a = [0u64; 25];
    for block in m.chunks(rate) {
        for (lane, w) in a.iter_mut().zip(block.chunks(8)) {
            *lane ^= u64::from_le_bytes(w.try_into().expect("8-byte lane"));
        }
        keccak_f(&mut a);
    }
    a.iter().flat_map(|l| l.to_le_bytes()).take(out).collect()
}

pub fn hash_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let kind = args[0].as_atom().ok_or(BifError::Badarg)?;
    let bytes = data(ctx, args[1])?;
    let digest = match kind.name() {
        "md4" => md4(&bytes),
        "md5" => md5(&bytes),
        "ripemd160" => ripemd160(&bytes),
        "sha3_224" => sha3(&bytes, 28),
        "sha3_256" => sha3(&bytes, 32),
        "sha3_384" => sha3(&bytes, 48),
        "sha3_512" => sha3(&bytes, 64),
        "sha" => sha1(&bytes),
        "sha224" => sha2(&bytes, true),
        "sha256" => sha2(&bytes, false),
        "sha384" => sha512(&bytes, true),
        "sha512" => sha512(&bytes, false),
        _ => return Err(BifError::Badarg),
    };
    make_binary(ctx, digest, args)
}
