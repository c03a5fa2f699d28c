//! Bitstrings: a view of bits that need not start or end on a byte
//! boundary, and a writer that packs segments of any bit length.
//!
//! A binary is a bitstring whose length is a multiple of 8. On the heap a
//! bitstring that is not whole bytes is always a sub-binary (see
//! `object`), whose bit offset into its base may be anything; a whole-byte
//! sub-binary always starts on a byte boundary, so `Heap::binary_bytes`
//! can hand out a plain slice for every binary.

use std::cmp::Ordering;

/// `len` bits starting `offset` bits (0..8) into `bytes`; `bytes` covers
/// exactly the bytes those bits touch.
#[derive(Clone, Copy, Debug)]
pub struct Bits<'a> {
    pub bytes: &'a [u8],
    pub offset: usize,
    pub len: usize,
}

impl<'a> Bits<'a> {
    /// All the bits of `bytes`.
    pub fn whole(bytes: &'a [u8]) -> Bits<'a> {
        Bits {
            bytes,
            offset: 0,
            len: bytes.len() * 8,
        }
    }

    /// `len` bits at bit `start` of `base` (the caller checked the range).
    pub fn of(base: &'a [u8], start: usize, len: usize) -> Bits<'a> {
        let first = start / 8;
        let end = (start + len).div_ceil(8);
        Bits {
            bytes: &base[first..end.max(first)],
            offset: start % 8,
            len,
        }
    }

    /// The `n` (at most 64) bits at bit `start`, as an unsigned number
    /// (first bit most significant).
    #[inline]
    pub fn read(&self, start: usize, n: usize) -> u64 {
        debug_assert!(n <= 64 && start + n <= self.len);
        if n == 0 {
            return 0;
        }
        let pos = self.offset + start;
        let first = pos / 8;
        let shift = pos % 8;
        if shift + n <= 64
            && let Some(word) = self.bytes.get(first..first + 8)
        {
            let mut buf = [0u8; 8];
            buf.copy_from_slice(word);
            return (u64::from_be_bytes(buf) << shift) >> (64 - n);
        }
        let count = (shift + n).div_ceil(8);
        let mut acc: u128 = 0;
        for &b in &self.bytes[first..first + count] {
            acc = acc << 8 | b as u128;
        }
        acc >>= count * 8 - shift - n;
        (acc & ((1u128 << n) - 1)) as u64
    }

    /// The bits `start..start + len` of this bitstring.
    pub fn slice(&self, start: usize, len: usize) -> Bits<'a> {
        Bits::of(self.bytes, self.offset + start, len)
    }

    /// The whole bytes, then the trailing bits (fewer than 8) as a number
    /// and their count.
    pub fn split_tail(&self) -> (std::borrow::Cow<'a, [u8]>, u8, usize) {
        let whole = self.len / 8;
        let head = if self.offset == 0 {
            std::borrow::Cow::Borrowed(&self.bytes[..whole])
        } else {
            std::borrow::Cow::Owned((0..whole).map(|i| self.read(i * 8, 8) as u8).collect())
        };
        let rest = self.len % 8;
        (head, self.read(whole * 8, rest) as u8, rest)
    }

    /// The bits packed from the first byte, the unused low bits of the
    /// last byte zero.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut w = BitWriter::with_capacity(self.len.div_ceil(8));
        w.push_bits(*self);
        w.bytes
    }

    /// Term order of bitstrings: bit by bit, then the shorter first.
    pub fn compare(&self, other: &Bits) -> Ordering {
        if self.offset == 0
            && other.offset == 0
            && self.len.is_multiple_of(8)
            && other.len.is_multiple_of(8)
        {
            return self.bytes[..self.len / 8].cmp(&other.bytes[..other.len / 8]);
        }
        let common = self.len.min(other.len);
        let mut i = 0;
        while i < common {
            let n = (common - i).min(56);
            match self.read(i, n).cmp(&other.read(i, n)) {
                Ordering::Equal => i += n,
                o => return o,
            }
        }
        self.len.cmp(&other.len)
    }
}

/// Packs segments of any bit length, most significant bit first.
/// Invariant: `bytes.len() == bits.div_ceil(8)`, and the unused low bits
/// of the last byte are zero.
#[derive(Default)]
pub struct BitWriter {
    pub bytes: Vec<u8>,
    pub bits: usize,
}

impl BitWriter {
    pub fn with_capacity(bytes: usize) -> BitWriter {
        BitWriter {
            bytes: Vec::with_capacity(bytes),
            bits: 0,
        }
    }

    /// Appends the low `n` (at most 64) bits of `v`.
    #[inline]
    pub fn push_u64(&mut self, v: u64, n: usize) {
        debug_assert!(n <= 64);
        if n == 0 {
            return;
        }
        let v = if n == 64 { v } else { v & ((1u64 << n) - 1) };
        let shift = self.bits % 8;
        if shift == 0 && n.is_multiple_of(8) {
            self.bytes.extend_from_slice(&v.to_be_bytes()[8 - n / 8..]);
            self.bits += n;
            return;
        }
        // Merge into the partial last byte, then whole bytes, then a
        // partial one.
        let mut left = n;
        if shift != 0 {
            let room = 8 - shift;
            let take = room.min(left);
            let part = ((v >> (left - take)) & ((1 << take) - 1)) as u8;
            if let Some(last) = self.bytes.last_mut() {
                *last |= part << (room - take);
            }
            left -= take;
        }
        while left >= 8 {
            self.bytes.push((v >> (left - 8)) as u8);
            left -= 8;
        }
        if left > 0 {
            self.bytes
                .push(((v & ((1 << left) - 1)) as u8) << (8 - left));
        }
        self.bits += n;
    }

    /// Appends whole bytes.
    pub fn push_bytes(&mut self, b: &[u8]) {
        if self.bits.is_multiple_of(8) {
            self.bytes.extend_from_slice(b);
            self.bits += b.len() * 8;
        } else {
            for &byte in b {
                self.push_u64(byte as u64, 8);
            }
        }
    }

    /// Appends a bitstring.
    pub fn push_bits(&mut self, b: Bits) {
        if b.offset == 0 && self.bits.is_multiple_of(8) {
            self.bytes.extend_from_slice(&b.bytes[..b.len / 8]);
            self.bits += b.len / 8 * 8;
        } else {
            let mut i = 0;
            while i + 56 <= b.len / 8 * 8 {
                self.push_u64(b.read(i, 56), 56);
                i += 56;
            }
            while i + 8 <= b.len {
                self.push_u64(b.read(i, 8), 8);
                i += 8;
            }
        }
        let done = b.len / 8 * 8;
        if b.len > done {
            self.push_u64(b.read(done, b.len - done), b.len - done);
        }
    }

    /// Drops every bit from `bits` on, keeping the invariant (the unused
    /// low bits of the last byte zero).
    pub fn truncate(&mut self, bits: usize) {
        if bits >= self.bits {
            return;
        }
        self.bytes.truncate(bits.div_ceil(8));
        let rest = bits % 8;
        if let Some(last) = self.bytes.last_mut()
            && rest != 0
        {
            *last &= 0xffu8 << (8 - rest);
        }
        self.bits = bits;
    }

    /// The bits written so far.
    pub fn view(&self) -> Bits<'_> {
        Bits {
            bytes: &self.bytes,
            offset: 0,
            len: self.bits,
        }
    }
}

// ---------------------------------------------------------------------
// Segments: what matching one segment reads, and what construction
// writes. The segment's type comes packed (see `syntax::bitspec`).

/// Packed type codes (bits 0-2 of `SegSpec::encode`).
pub const TY_INTEGER: u32 = 0;
pub const TY_FLOAT: u32 = 1;
pub const TY_BINARY: u32 = 2;
pub const TY_UTF8: u32 = 3;
pub const TY_UTF16: u32 = 4;
pub const TY_UTF32: u32 = 5;
pub const FLAG_SIGNED: u32 = 8;
pub const FLAG_LITTLE: u32 = 16;
pub const UNIT_SHIFT: u32 = 8;
/// A construction's segment carries its position in the source (from 1,
/// a string one segment) above its unit, for the error of a segment
/// that fails (`{Position, Type, What, Value}`).
pub const SEG_SHIFT: u32 = 24;
/// A construction's segment whose value is a literal: erlc sees its
/// failure coming and raises a bare `badarg`, with no cause.
pub const FLAG_LITERAL_VALUE: u32 = 1 << 22;
/// A construction's segment whose size is a literal (see above).
pub const FLAG_LITERAL_SIZE: u32 = 1 << 23;

/// The flat form of `$bs_build` takes each segment as its value and a
/// spec word, plus its size when that is not a constant: the word's low
/// 32 bits are the packed spec, and the bits above say where the size is:
/// `SIZE_NONE` (no size written), `SIZE_ARG` (the next argument), or a
/// constant size `n` as `n + SIZE_LITERAL`.
pub const SIZE_SHIFT: u32 = 32;
pub const SIZE_NONE: u64 = 0;
pub const SIZE_ARG: u64 = 1;
pub const SIZE_LITERAL: u64 = 2;
/// Constant sizes below this fit the spec word (a small integer).
pub const SIZE_LITERAL_MAX: u64 = 1 << 26;

/// The parts of a packed spec.
#[derive(Clone, Copy, Debug)]
pub struct Packed {
    pub ty: u32,
    pub signed: bool,
    pub little: bool,
    pub unit: usize,
}

impl Packed {
    #[inline]
    pub fn of(spec: u32) -> Packed {
        Packed {
            ty: spec & 7,
            signed: spec & FLAG_SIGNED != 0,
            little: spec & FLAG_LITTLE != 0,
            unit: (((spec >> UNIT_SHIFT) & 0x1ff) as usize).max(1),
        }
    }
}

use num_bigint::{BigInt, Sign};

/// A segment read out of a bitstring.
#[derive(Debug)]
pub enum Segment {
    Int(i64),
    Big(BigInt),
    Float(f64),
    /// The bits `start..start + len` of the bitstring itself.
    Slice(usize, usize),
}

/// Reads one segment at bit `pos` of `bits`: `size` is the segment's
/// size (in units) or `None` for "the rest" (binaries) or no size (utf).
/// Returns what it read and the bits it took, or `None` if the segment
/// does not match there.
pub fn read_segment(
    bits: &Bits,
    pos: usize,
    spec: Packed,
    size: Option<usize>,
) -> Option<(Segment, usize)> {
    let left = bits.len.checked_sub(pos)?;
    let n = match size {
        Some(s) => s.checked_mul(spec.unit)?,
        None => left,
    };
    match spec.ty {
        TY_INTEGER => {
            if n > left {
                return None;
            }
            Some((read_integer(bits, pos, n, spec.signed, spec.little), n))
        }
        TY_FLOAT => {
            if n > left {
                return None;
            }
            if !matches!(n, 16 | 32 | 64) {
                return None;
            }
            let mut raw = bits.read(pos, n);
            if spec.little {
                raw = raw.swap_bytes() >> (64 - n);
            }
            let f = match n {
                64 => f64::from_bits(raw),
                32 => f32::from_bits(raw as u32) as f64,
                16 => f16_to_f64(raw as u16),
                _ => return None,
            };
            f.is_finite().then_some((Segment::Float(f), n))
        }
        TY_BINARY => {
            if n > left || (size.is_none() && n % spec.unit != 0) {
                return None;
            }
            Some((Segment::Slice(pos, n), n))
        }
        TY_UTF8 => read_utf8(bits, pos, left).map(|(c, n)| (Segment::Int(c as i64), n)),
        TY_UTF16 => {
            if left < 16 {
                return None;
            }
            let unit = |at: usize| {
                let v = bits.read(at, 16) as u16;
                if spec.little { v.swap_bytes() } else { v }
            };
            let first = unit(pos) as u32;
            if (0xdc00..0xe000).contains(&first) {
                return None;
            }
            if (0xd800..0xdc00).contains(&first) {
                if left < 32 {
                    return None;
                }
                let second = unit(pos + 16) as u32;
                if !(0xdc00..0xe000).contains(&second) {
                    return None;
                }
                let c = 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
                return Some((Segment::Int(c as i64), 32));
            }
            Some((Segment::Int(first as i64), 16))
        }
        _ => {
            if left < 32 {
                return None;
            }
            let mut v = bits.read(pos, 32) as u32;
            if spec.little {
                v = v.swap_bytes();
            }
            char::from_u32(v).map(|c| (Segment::Int(c as i64), 32))
        }
    }
}

/// `n` bits at `pos` as an integer, big- or little-endian (little: whole
/// bytes from the least significant, then the leftover high bits).
fn read_integer(bits: &Bits, pos: usize, n: usize, signed: bool, little: bool) -> Segment {
    if n <= 64 {
        let raw = if little && n > 8 {
            let full = n / 8;
            let mut v = 0u64;
            for i in 0..full {
                v |= bits.read(pos + 8 * i, 8) << (8 * i);
            }
            let rest = n % 8;
            if rest > 0 {
                v |= bits.read(pos + 8 * full, rest) << (8 * full);
            }
            v
        } else {
            bits.read(pos, n)
        };
        if signed && n > 0 {
            let shift = 64 - n;
            return Segment::Int(((raw << shift) as i64) >> shift);
        }
        return match i64::try_from(raw) {
            Ok(v) => Segment::Int(v),
            Err(_) => Segment::Big(BigInt::from(raw)),
        };
    }
    // Little-endian bytes of the magnitude, least significant first.
    let full = n / 8;
    let rest = n % 8;
    let mut le = Vec::with_capacity(full + 1);
    if little {
        for i in 0..full {
            le.push(bits.read(pos + 8 * i, 8) as u8);
        }
        if rest > 0 {
            le.push(bits.read(pos + 8 * full, rest) as u8);
        }
    } else {
        // Big-endian: the last `full` bytes end at `pos + n`, the first
        // `rest` bits are the high part.
        for i in 0..full {
            le.push(bits.read(pos + n - 8 * (i + 1), 8) as u8);
        }
        if rest > 0 {
            le.push(bits.read(pos, rest) as u8);
        }
    }
    let mut v = BigInt::from_bytes_le(Sign::Plus, &le);
    if signed && v.bit(n as u64 - 1) {
        v -= BigInt::from(1) << n;
    }
    Segment::Big(v)
}

fn read_utf8(bits: &Bits, pos: usize, left: usize) -> Option<(u32, usize)> {
    if left < 8 {
        return None;
    }
    let b0 = bits.read(pos, 8) as u32;
    let (len, init, min) = match b0 {
        0..=0x7f => return Some((b0, 8)),
        0xc0..=0xdf => (2, b0 & 0x1f, 0x80),
        0xe0..=0xef => (3, b0 & 0x0f, 0x800),
        0xf0..=0xf7 => (4, b0 & 0x07, 0x10000),
        _ => return None,
    };
    if left < 8 * len {
        return None;
    }
    let mut c = init;
    for i in 1..len {
        let b = bits.read(pos + 8 * i, 8) as u32;
        if b & 0xc0 != 0x80 {
            return None;
        }
        c = c << 6 | (b & 0x3f);
    }
    if c < min || char::from_u32(c).is_none() {
        return None;
    }
    Some((c, 8 * len))
}

/// Writes the low `n` bits of `v`, big- or little-endian.
pub fn write_int(w: &mut BitWriter, v: i64, n: usize, little: bool) {
    if n > 64 {
        write_bigint(w, &BigInt::from(v), n, little);
    } else if !little || n <= 8 {
        w.push_u64(v as u64, n);
    } else {
        let full = n / 8;
        for i in 0..full {
            w.push_u64((v >> (8 * i)) as u64 & 0xff, 8);
        }
        let rest = n % 8;
        if rest > 0 {
            w.push_u64((v >> (8 * full)) as u64, rest);
        }
    }
}

/// Writes the low `n` bits of `v` (two's complement), big- or
/// little-endian.
pub fn write_bigint(w: &mut BitWriter, v: &BigInt, n: usize, little: bool) {
    let bytes = n.div_ceil(8);
    let mut le = v.to_signed_bytes_le();
    let fill = if v.sign() == Sign::Minus { 0xff } else { 0 };
    le.resize(bytes.max(le.len()), fill);
    le.truncate(bytes);
    let rest = n % 8;
    if little {
        let full = n / 8;
        w.push_bytes(&le[..full]);
        if rest > 0 {
            w.push_u64(le[full] as u64, rest);
        }
    } else {
        le.reverse();
        let skip = bytes * 8 - n;
        w.push_bits(Bits::of(&le, skip, n));
    }
}

/// Writes a float of 16, 32 or 64 bits; `false` for another size.
pub fn write_float(w: &mut BitWriter, f: f64, n: usize, little: bool) -> bool {
    let raw = match n {
        64 => f.to_bits(),
        32 => (f as f32).to_bits() as u64,
        16 => f64_to_f16(f) as u64,
        _ => return false,
    };
    if little {
        w.push_bytes(&raw.to_le_bytes()[..n / 8]);
    } else {
        w.push_u64(raw, n);
    }
    true
}

/// Writes a code point as UTF-8, UTF-16 or UTF-32; `false` if it is not
/// a Unicode scalar value.
pub fn write_utf(w: &mut BitWriter, ty: u32, c: i64, little: bool) -> bool {
    let Some(ch) = u32::try_from(c).ok().and_then(char::from_u32) else {
        return false;
    };
    match ty {
        TY_UTF8 => {
            let mut buf = [0u8; 4];
            w.push_bytes(ch.encode_utf8(&mut buf).as_bytes());
        }
        TY_UTF16 => {
            let mut buf = [0u16; 2];
            for &unit in ch.encode_utf16(&mut buf).iter() {
                let unit = if little { unit.swap_bytes() } else { unit };
                w.push_u64(unit as u64, 16);
            }
        }
        _ => {
            let v = if little {
                (ch as u32).swap_bytes()
            } else {
                ch as u32
            };
            w.push_u64(v as u64, 32);
        }
    }
    true
}

/// An IEEE half-precision float, rounded to nearest even (infinity on
/// overflow).
pub fn f64_to_f16(f: f64) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i64;
    let man = b & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 1023 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    let full = if exp == 0 { man } else { man | 1 << 52 };
    // Bits dropped from the 53-bit mantissa: 42 for a normal half, more
    // below its range.
    let shift = if e > 0 { 42 } else { (43 - e) as u64 };
    if shift >= 64 {
        return sign;
    }
    let mut q = full >> shift;
    let rem = full & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q += 1;
    }
    let bits = if e > 0 {
        ((e as u64) << 10) + (q - 1024)
    } else {
        q
    };
    sign | bits.min(0x7c00) as u16
}

pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-24),
        31 => {
            if man == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => sign * (1.0 + man / 1024.0) * 2f64.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_and_reader_agree_on_odd_sizes() {
        let mut w = BitWriter::default();
        w.push_u64(0b101, 3);
        w.push_u64(0xabcd, 16);
        w.push_u64(1, 1);
        w.push_bytes(&[0xff, 0x01]);
        let b = w.view();
        assert_eq!(b.len, 36);
        assert_eq!(b.read(0, 3), 0b101);
        assert_eq!(b.read(3, 16), 0xabcd);
        assert_eq!(b.read(19, 1), 1);
        assert_eq!(b.read(20, 16), 0xff01);
        let s = b.slice(3, 17);
        assert_eq!(s.read(0, 16), 0xabcd);
        let mut w2 = BitWriter::default();
        w2.push_u64(1, 1);
        w2.push_bits(s);
        assert_eq!(w2.view().read(1, 17), (0xabcd << 1) | 1);
        assert_eq!(w.view().to_vec(), w.bytes);
    }

    #[test]
    fn half_floats_round_trip() {
        for f in [1.5, -2.0, 65504.0, 6.1e-5, 5.96e-8, 0.0, 0.1] {
            let h = f64_to_f16(f);
            assert!((f16_to_f64(h) - f).abs() <= f.abs() / 1000.0 + 6e-8, "{f}");
        }
        assert_eq!(f64_to_f16(1.0e10), 0x7c00);
        assert_eq!(f64_to_f16(1.5), 0x3e00);
    }
}
