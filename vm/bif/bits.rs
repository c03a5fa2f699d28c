//! Bitstring BIFs: `$bs_build` (binary construction), and the erlang
//! functions on bitstrings that are not whole bytes (`bit_size`,
//! `is_bitstring`, `bitstring_to_list`, `list_to_bitstring`).

use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::term::bits::{
    BitWriter, Packed, SIZE_ARG, SIZE_LITERAL, SIZE_NONE, SIZE_SHIFT, TY_BINARY, TY_FLOAT,
    TY_INTEGER, write_bigint, write_float, write_int, write_utf,
};
use crate::term::object::{HEAP_BINARY_MAX, Kind};
use crate::term::view::View;
use crate::term::{Term, arith};

/// The largest bitstring a construction may make (BEAM's limit is about
/// this too): past it, `system_limit`.
const MAX_BITS: usize = 1 << 45;

/// The size of a segment in bits: `Term::NONE` means none was written.
fn segment_bits(heap: &Heap, size: Term, unit: usize) -> Result<Option<usize>, BifError> {
    if size.is_none() {
        return Ok(None);
    }
    let n = match size.as_small() {
        Some(n) if n >= 0 => n,
        // A huge size is past the limit, as in OTP.
        None if size.is_boxed() && heap.boxed_kind(size) == Some(Kind::PosBig) => {
            return Err(BifError::SystemLimit);
        }
        _ => return Err(BifError::Badarg),
    };
    let bits = (n as usize)
        .checked_mul(unit)
        .ok_or(BifError::SystemLimit)?;
    if bits > MAX_BITS {
        return Err(BifError::SystemLimit);
    }
    Ok(Some(bits))
}

/// One segment of a construction: its value, its size (`Term::NONE` when
/// none was written) and its packed type (`Packed::of`).
#[derive(Clone, Copy)]
struct Seg {
    value: Term,
    size: Term,
    spec: u32,
}

const NO_SEGMENT: Seg = Seg {
    value: Term::NIL,
    size: Term::NONE,
    spec: 0,
};

/// The segments of a `$bs_build` call: up to four in the flat form (see
/// `term::bits::SIZE_SHIFT`) kept here, any number in the tuple form.
struct Segs {
    flat: [Seg; 4],
    n: usize,
    many: Vec<Seg>,
}

impl Segs {
    fn new() -> Segs {
        Segs {
            flat: [NO_SEGMENT; 4],
            n: 0,
            many: Vec::new(),
        }
    }

    fn all(&self) -> &[Seg] {
        if self.many.is_empty() {
            &self.flat[..self.n]
        } else {
            &self.many
        }
    }

    /// Reads the segments out of `$bs_build`'s arguments (again after a
    /// collection, which moves the terms).
    fn read(&mut self, heap: &Heap, args: &[Term]) -> Result<(), BifError> {
        let spec_of = |t: Term| -> Result<u64, BifError> {
            match t.as_small() {
                Some(w) if w >= 0 => Ok(w as u64),
                _ => Err(BifError::Badarg),
            }
        };
        if let [all] = args {
            let tuple = heap.as_tuple(*all).ok_or(BifError::Badarg)?;
            self.many.clear();
            for &s in tuple {
                let Some(&[value, size, spec]) = heap.as_tuple(s) else {
                    return Err(BifError::Badarg);
                };
                let spec = spec_of(spec)? as u32;
                self.many.push(Seg { value, size, spec });
            }
            return Ok(());
        }
        let (mut n, mut i) = (0, 0);
        while i < args.len() {
            let word = spec_of(*args.get(i + 1).ok_or(BifError::Badarg)?)?;
            let value = args[i];
            i += 2;
            let size = match word >> SIZE_SHIFT {
                SIZE_NONE => Term::NONE,
                SIZE_ARG => {
                    i += 1;
                    *args.get(i - 1).ok_or(BifError::Badarg)?
                }
                literal => Term::small((literal - SIZE_LITERAL) as i64),
            };
            *self.flat.get_mut(n).ok_or(BifError::Badarg)? = Seg {
                value,
                size,
                spec: word as u32,
            };
            n += 1;
        }
        self.n = n;
        Ok(())
    }
}

/// `<<Segments>>`. The compiler passes up to four segments flat, each
/// as its value and a spec word with the size folded in when it is a
/// constant (see `term::bits::SIZE_SHIFT`), more as one tuple of
/// `{Value, Size, Type}` per segment. A bad value or size is `badarg`,
/// as in OTP.
///
/// When the first segment is a whole bitstring (`<<Acc/binary, ...>>`),
/// the result is appendable (see `heap::append`): the next append to it
/// writes in place, so a loop of appends takes linear time in all.
pub fn bs_build(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut segs = Segs::new();
    segs.read(&ctx.process.heap, args)?;
    let append = match segs.all().first() {
        Some(s) if s.size.is_none() && Packed::of(s.spec).ty == TY_BINARY => {
            Some(Packed::of(s.spec).unit)
        }
        _ => None,
    };
    if let Some(unit) = append
        && let Some(target) = appendable(&ctx.process.heap, &segs, unit)
    {
        let mut target = Some(target);
        if !ctx.process.heap.has_room(heap::SUB_BINARY_WORDS) {
            ctx.ensure(heap::SUB_BINARY_WORDS, args)?;
            // The collection moved the terms.
            segs.read(&ctx.process.heap, args)?;
            target = appendable(&ctx.process.heap, &segs, unit);
        }
        if let Some(target) = target {
            let mut failed = None;
            let done = ctx.heap().append_in_place(target, |heap, out| {
                for (i, s) in segs.all()[1..].iter().enumerate() {
                    write_segment(heap, s, out).map_err(|f| {
                        let e = f.error();
                        failed = Some((i + 1, f));
                        e
                    })?;
                }
                Ok(())
            });
            if let Some((i, f)) = failed {
                return Err(segment_error(ctx, args, i, f));
            }
            if let Some(result) = done {
                return result;
            }
        }
    }
    let heap = &ctx.process.heap;
    let mut out = BitWriter::default();
    for (i, s) in segs.all().iter().enumerate() {
        if let Err(f) = write_segment(heap, s, &mut out) {
            return Err(segment_error(ctx, args, i, f));
        }
    }
    let bits = out.bits;
    super::erlang::room_for_binary(out.bytes.len())?;
    if append.is_some() && out.bytes.len() > HEAP_BINARY_MAX {
        ctx.ensure(heap::APPENDABLE_WORDS, args)?;
        return Ok(ctx.heap().appendable_binary(out.bytes, bits));
    }
    ctx.ensure(heap::words_for_bitstring(bits), args)?;
    Ok(ctx.heap().bitstring_from_vec(out.bytes, bits))
}

/// The append target of the first segment (`heap::append`), if the
/// construction may append in place: the first segment is whole units
/// and no later one reads the buffer.
fn appendable(heap: &Heap, segs: &Segs, unit: usize) -> Option<(Term, usize)> {
    let all = segs.all();
    let acc = all[0].value;
    let target = heap.append_target(acc)?;
    (heap.bit_size(acc).is_some_and(|n| n % unit == 0)
        && !all[1..]
            .iter()
            .any(|s| uses_buffer(heap, s.value, target.0)))
    .then_some(target)
}

/// Whether the segment value `value` reads the buffer `base`.
fn uses_buffer(heap: &Heap, value: Term, base: Term) -> bool {
    value.is_boxed() && heap.bitstring_parts(value).is_some_and(|p| p.0 == base)
}

/// Why a segment failed: an error of its own, or `badarg` for the
/// reason BEAM names in the cause (`type`, `size`, `unit`, `short`,
/// `invalid`, `no_float`) with the value it names (the segment's value,
/// or its size for `size` and `invalid`).
enum SegFail {
    Plain(BifError),
    Bad(&'static str, bool),
}

impl SegFail {
    fn error(&self) -> BifError {
        match self {
            SegFail::Plain(e) => *e,
            SegFail::Bad(..) => BifError::Badarg,
        }
    }
}

impl From<BifError> for SegFail {
    fn from(e: BifError) -> SegFail {
        SegFail::Plain(e)
    }
}

/// The error of segment `i` (from 0) of the construction in `args`:
/// `badarg` with BEAM's cause `{Position, Type, What, Value}`.
fn segment_error(ctx: &mut Context, args: &mut [Term], i: usize, f: SegFail) -> BifError {
    let SegFail::Bad(what, of_size) = f else {
        return f.error();
    };
    if ctx.ensure(5, args).is_err() {
        return BifError::Badarg;
    }
    let heap = ctx.heap();
    // The collection may have moved the terms.
    let mut segs = Segs::new();
    if segs.read(heap, args).is_err() {
        return BifError::Badarg;
    }
    let Some(&Seg { value, size, spec }) = segs.all().get(i) else {
        return BifError::Badarg;
    };
    // A failure erlc saw coming (a literal bad size, a literal value not
    // of an integer, float or binary segment's type) is a bare badarg.
    let literal_value = spec & crate::term::bits::FLAG_LITERAL_VALUE != 0;
    let literal_size = spec & crate::term::bits::FLAG_LITERAL_SIZE != 0;
    let typed = matches!(Packed::of(spec).ty, TY_INTEGER | TY_FLOAT | TY_BINARY);
    if (what == "size" && literal_size && size != Term::NONE)
        || (what == "type" && literal_value && typed)
    {
        return BifError::Badarg;
    }
    let position = (spec >> crate::term::bits::SEG_SHIFT).max(1);
    let ty = match Packed::of(spec).ty {
        TY_INTEGER => "integer",
        TY_FLOAT => "float",
        TY_BINARY => "binary",
        crate::term::bits::TY_UTF8 => "utf8",
        crate::term::bits::TY_UTF16 => "utf16",
        _ => "utf32",
    };
    let named = if of_size { size } else { value };
    let cause = heap.tuple(&[
        Term::small(position as i64),
        Term::atom(crate::term::Atom::intern(ty)),
        Term::atom(crate::term::Atom::intern(what)),
        named,
    ]);
    BifError::BsFail(cause)
}

/// The size of a segment in bits, a bad size being the cause `size`.
fn size_bits(heap: &Heap, size: Term, unit: usize) -> Result<Option<usize>, SegFail> {
    segment_bits(heap, size, unit).map_err(|e| match e {
        BifError::Badarg => SegFail::Bad("size", true),
        e => SegFail::Plain(e),
    })
}

/// Writes one segment.
fn write_segment(heap: &Heap, s: &Seg, out: &mut BitWriter) -> Result<(), SegFail> {
    let (value, size, spec) = (s.value, s.size, Packed::of(s.spec));
    let bad_type = SegFail::Bad("type", false);
    match spec.ty {
        TY_INTEGER => {
            let n = size_bits(heap, size, spec.unit)?.unwrap_or(8);
            match value.as_small() {
                Some(i) => write_int(out, i, n, spec.little),
                None => match heap.view(value) {
                    View::Big(b) => write_bigint(out, &b.to_bigint(), n, spec.little),
                    _ => return Err(bad_type),
                },
            }
        }
        TY_FLOAT => {
            let f = arith::to_f64(heap, value).map_err(|_| bad_type)?;
            let n = size_bits(heap, size, spec.unit)?.unwrap_or(64);
            if !write_float(out, f, n, spec.little) {
                return Err(if matches!(n, 16 | 32 | 64) {
                    SegFail::Bad("no_float", false)
                } else {
                    SegFail::Bad("invalid", true)
                });
            }
        }
        TY_BINARY => {
            let bits = heap.bits_of(value).ok_or(bad_type)?;
            // A segment past the memory budget fails before its copy.
            super::erlang::room_for_binary(bits.len / 8)?;
            match size_bits(heap, size, spec.unit)? {
                None => {
                    if bits.len % spec.unit != 0 {
                        return Err(SegFail::Bad("unit", false));
                    }
                    out.push_bits(bits);
                }
                Some(n) => {
                    if n > bits.len {
                        return Err(SegFail::Bad("short", false));
                    }
                    out.push_bits(bits.slice(0, n));
                }
            }
        }
        ty => {
            let c = value.as_small().ok_or(bad_type)?;
            if !write_utf(out, ty, c, spec.little) {
                return Err(SegFail::Bad("type", false));
            }
        }
    }
    if out.bits > MAX_BITS {
        return Err(BifError::SystemLimit.into());
    }
    Ok(())
}

pub fn bit_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx.process.heap.bit_size(args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small(n as i64))
}

/// `byte_size/1`: bytes, the last one counted even if partial.
pub fn byte_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx.process.heap.bit_size(args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small(n.div_ceil(8) as i64))
}

pub fn is_bitstring_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(Term::boolean(ctx.process.heap.is_bitstring(args[0])))
}

/// `bitstring_to_list/1`: the bytes, then the leftover bits as a
/// bitstring (`[1, <<2:3>>]`).
pub fn bitstring_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bits = ctx.process.heap.bits_of(args[0]).ok_or(BifError::Badarg)?;
    let (whole, tail, tail_bits) = bits.split_tail();
    let bytes: Vec<u8> = whole.into_owned();
    let mut words = 2 * bytes.len();
    if tail_bits > 0 {
        words += 2 + heap::words_for_bitstring(tail_bits);
    }
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    if tail_bits > 0 {
        let t = heap.bitstring_from_vec(vec![tail << (8 - tail_bits)], tail_bits);
        list = heap.cons(t, list);
    }
    for &b in bytes.iter().rev() {
        list = heap.cons(Term::small(b as i64), list);
    }
    Ok(list)
}

/// `list_to_bitstring/1`: a bitstring list (bytes, bitstrings and such
/// lists, any tail a bitstring) flattened.
pub fn list_to_bitstring_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    if !args[0].is_cons() && !args[0].is_nil() {
        return Err(BifError::Badarg);
    }
    let mut out = BitWriter::default();
    let mut stack = vec![args[0]];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(h, tail) => {
                match heap.view(h) {
                    View::Small(b) if (0..256).contains(&b) => {
                        out.push_u64(b as u64, 8);
                        // The tail may be a bitstring, not only a list.
                        if !tail.is_nil() {
                            stack.push(tail);
                        }
                        continue;
                    }
                    View::Cons(..) | View::Nil | View::Binary(_) | View::Bitstring(_) => {}
                    _ => return Err(BifError::Badarg),
                }
                if !matches!(
                    heap.view(tail),
                    View::Cons(..) | View::Nil | View::Binary(_) | View::Bitstring(_)
                ) {
                    return Err(BifError::Badarg);
                }
                stack.push(tail);
                stack.push(h);
            }
            View::Binary(b) => out.push_bytes(b),
            View::Bitstring(b) => out.push_bits(b),
            _ => return Err(BifError::Badarg),
        }
        if out.bits > MAX_BITS {
            return Err(BifError::SystemLimit);
        }
    }
    let bits = out.bits;
    ctx.ensure(heap::words_for_bitstring(bits), args)?;
    Ok(ctx.heap().bitstring_from_vec(out.bytes, bits))
}
