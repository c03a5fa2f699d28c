//! Message digests and checksums: `erlang:md5/1` and its incremental
//! `md5_init/0`, `md5_update/2`, `md5_final/1` (on the `md-5` crate),
//! `erlang:crc32/1`, `erlang:adler32/1` and `crypto:hash/2` (md5, sha,
//! sha224, sha256, sha384, sha512; the SHAs written from FIPS 180-4, the
//! checksums from ISO 3309 and RFC 1950). HMAC and the incremental hash
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

pub fn hash_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let kind = args[0].as_atom().ok_or(BifError::Badarg)?;
    let bytes = data(ctx, args[1])?;
    let digest = match kind.name() {
        "md5" => md5(&bytes),
        "sha" => sha1(&bytes),
        "sha224" => sha2(&bytes, true),
        "sha256" => sha2(&bytes, false),
        "sha384" => sha512(&bytes, true),
        "sha512" => sha512(&bytes, false),
        _ => return Err(BifError::Badarg),
    };
    make_binary(ctx, digest, args)
}
