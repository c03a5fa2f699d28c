//! Binary matching, shared by both engines: `bs_get` reads one segment
//! of a bitstring at a position kept in a register, without copying the
//! bitstring (a binary segment is a sub-binary of it), so a loop that
//! takes a binary apart segment by segment runs in linear time. It may
//! collect (to make room for the value), with the X registers below
//! `ops::regs_used` as roots.

use super::ops::regs_used;
use crate::code::{Dst, Module, SRC_X, SRC_Y, Src, X_REGISTERS};
use crate::heap::{self, SystemLimit};
use crate::process::Process;
use crate::term::Term;
use crate::term::bits::{Bits, Packed, Segment, TY_BINARY, TY_INTEGER, read_segment};

#[inline]
fn read(p: &Process, x: &[Term; X_REGISTERS], m: &Module, s: Src) -> Term {
    match s.kind() {
        SRC_X => x[s.index() & (X_REGISTERS - 1)],
        SRC_Y => p.stack[p.y_base as usize + s.index()],
        _ => m.literals[s.index()],
    }
}

#[inline]
fn write(p: &mut Process, x: &mut [Term; X_REGISTERS], d: Dst, v: Term) {
    if d.is_y() {
        let i = p.y_base as usize + d.index();
        p.stack[i] = v;
    } else {
        x[d.index() & (X_REGISTERS - 1)] = v;
    }
}

/// A register operand of an operand list, as a destination.
#[inline]
fn as_dst(s: Src) -> Dst {
    if s.kind() == SRC_Y {
        Dst::y(s.index() as u16)
    } else {
        Dst::x(s.index() as u16)
    }
}

/// `bs_get`: operand_lists[seg..seg + 3] are the bitstring, the position
/// register (bits from its start) and the size (`Term::NONE` for "the
/// rest", a value no program can make).
/// On a match the value goes to `dst` and the position moves on:
/// `Ok(true)`; `Ok(false)` if the segment does not match.
#[inline]
pub fn bs_get(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    m: &Module,
    spec: u32,
    seg: u32,
    dst: Dst,
) -> Result<bool, SystemLimit> {
    let at = seg as usize;
    let (bin_src, pos_src, size_src) = (
        m.operand_lists[at],
        m.operand_lists[at + 1],
        m.operand_lists[at + 2],
    );
    let bin = read(p, x, m, bin_src);
    let Some(pos) = read(p, x, m, pos_src).as_small() else {
        return Ok(false);
    };
    let size_term = read(p, x, m, size_src);
    let size = if size_term.is_none() {
        None
    } else {
        match size_term.as_small() {
            Some(s) if s >= 0 => Some(s as usize),
            _ => return Ok(false),
        }
    };
    let packed = Packed::of(spec);
    let Some((base, bytes, offset, len)) = p.heap.bitstring_parts(bin) else {
        return Ok(false);
    };
    let pos = pos as usize;
    // The common cases first: a big-endian integer of at most 64 bits,
    // and a binary segment, which becomes a sub-binary of the base.
    if packed.ty == TY_INTEGER && !packed.little {
        if let Some(n) = size.and_then(|s| s.checked_mul(packed.unit))
            && n <= 64
            && n <= len.saturating_sub(pos)
        {
            let raw = Bits {
                bytes,
                offset: 0,
                len: offset + len,
            }
            .read(offset + pos, n);
            let v = if packed.signed && n > 0 {
                let shift = 64 - n;
                ((raw << shift) as i64) >> shift
            } else if n == 64 && raw > i64::MAX as u64 {
                ensure(p, x, m, heap::MAX_I64_WORDS + 1)?;
                let big = p.heap.bigint(&raw.into());
                return Ok(finish(p, x, dst, pos_src, big, pos + n));
            } else {
                raw as i64
            };
            let value = match Term::try_small(v) {
                Some(t) => t,
                None => {
                    ensure(p, x, m, heap::MAX_I64_WORDS)?;
                    p.heap.int(v)
                }
            };
            return Ok(finish(p, x, dst, pos_src, value, pos + n));
        }
    } else if packed.ty == TY_BINARY {
        let left = len.saturating_sub(pos);
        let n = match size {
            Some(s) => match s.checked_mul(packed.unit) {
                Some(n) if n <= left => n,
                _ => return Ok(false),
            },
            None if packed.unit == 1 || left.is_multiple_of(packed.unit) => left,
            None => return Ok(false),
        };
        let start = offset + pos;
        if !n.is_multiple_of(8) || start.is_multiple_of(8) {
            let collections = p.heap.collections;
            ensure(p, x, m, heap::SUB_BINARY_WORDS)?;
            let base = if p.heap.collections == collections {
                base
            } else {
                // The collection moved the bitstring.
                match p.heap.bitstring_parts(read(p, x, m, bin_src)) {
                    Some(parts) => parts.0,
                    None => return Ok(false),
                }
            };
            let value = p.heap.sub_bits_of_base(base, start, n);
            return Ok(finish(p, x, dst, pos_src, value, pos + n));
        }
    }
    let bits = Bits::of(bytes, offset, len);
    let Some((segment, taken)) = read_segment(&bits, pos, packed, size) else {
        return Ok(false);
    };
    let value = match segment {
        Segment::Int(i) => match Term::try_small(i) {
            Some(t) => t,
            None => {
                ensure(p, x, m, heap::MAX_I64_WORDS)?;
                p.heap.int(i)
            }
        },
        Segment::Big(b) => {
            ensure(p, x, m, heap::words_for_bigint(&b))?;
            p.heap.bigint(&b)
        }
        Segment::Float(f) => {
            ensure(p, x, m, heap::FLOAT_WORDS)?;
            p.heap.float(f)
        }
        Segment::Slice(start, len) => {
            ensure(p, x, m, p.heap.slice_bits_words(bin, start, len))?;
            // The collection may have moved the bitstring.
            let bin = read(p, x, m, bin_src);
            p.heap.slice_bits(bin, start, len)
        }
    };
    Ok(finish(p, x, dst, pos_src, value, pos + taken))
}

#[inline]
fn finish(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    dst: Dst,
    pos_src: Src,
    value: Term,
    pos: usize,
) -> bool {
    write(p, x, dst, value);
    write(p, x, as_dst(pos_src), Term::small(pos as i64));
    true
}

fn ensure(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    m: &Module,
    words: usize,
) -> Result<(), SystemLimit> {
    let used = regs_used(m);
    p.ensure_heap(words, &mut x[..used], &mut [])
}
