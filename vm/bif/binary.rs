//! The `binary` module (searching, splitting, replacing, slicing and
//! integer coding of binaries, results sharing the subject as sub-binaries
//! where OTP's do) and `unicode:characters_to_list/binary` with OTP's
//! `{error, Done, Rest}` and `{incomplete, Done, Rest}` answers, and the
//! `unicode:characters_to_nf*` normalizations.

use super::erlang::{list_elements, make_binary, make_integer, small};
use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::{BigInt, Sign};

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

fn bytes_of(ctx: &Context, t: Term) -> Result<Vec<u8>, BifError> {
    ctx.process
        .heap
        .binary_bytes(t)
        .map(<[u8]>::to_vec)
        .ok_or(BifError::Badarg)
}

fn size_of(ctx: &Context, t: Term) -> Result<usize, BifError> {
    Ok(ctx
        .process
        .heap
        .binary_bytes(t)
        .ok_or(BifError::Badarg)?
        .len())
}

// ---------------------------------------------------------------------
// Patterns.

/// A pattern: one binary, a non-empty list of them, or what
/// `compile_pattern` made of those (`{ac, [Binary]}`); none may be empty.
fn patterns(ctx: &Context, t: Term) -> Result<Vec<Vec<u8>>, BifError> {
    let heap = &ctx.process.heap;
    if let Some(b) = heap.binary_bytes(t) {
        if b.is_empty() {
            return Err(BifError::Badarg);
        }
        return Ok(vec![b.to_vec()]);
    }
    let list = match heap.as_tuple(t) {
        Some(&[tag, list]) if tag == atom("ac") || tag == atom("bm") => list,
        _ => t,
    };
    let items = list_elements(heap, list).ok_or(BifError::Badarg)?;
    if items.is_empty() {
        return Err(BifError::Badarg);
    }
    items
        .into_iter()
        .map(|p| match heap.binary_bytes(p) {
            Some(b) if !b.is_empty() => Ok(b.to_vec()),
            _ => Err(BifError::Badarg),
        })
        .collect()
}

/// The longest pattern matching at `at`, if any.
fn match_at(subject: &[u8], at: usize, end: usize, patterns: &[Vec<u8>]) -> Option<usize> {
    patterns
        .iter()
        .filter(|p| at + p.len() <= end && subject[at..at + p.len()] == p[..])
        .map(Vec::len)
        .max()
}

/// Non-overlapping matches `(pos, len)` in `start..end`, leftmost and then
/// longest first; only the first unless `global`.
fn find(
    subject: &[u8],
    (start, end): (usize, usize),
    patterns: &[Vec<u8>],
    global: bool,
) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut at = start;
    while at < end {
        match match_at(subject, at, end, patterns) {
            Some(len) => {
                found.push((at, len));
                if !global {
                    break;
                }
                at += len;
            }
            None => at += 1,
        }
    }
    found
}

/// `{scope, {Start, Length}}` (a negative length counts back) as a range.
fn scope(ctx: &Context, value: Term, size: usize) -> Result<(usize, usize), BifError> {
    let Some(&[start, len]) = ctx.process.heap.as_tuple(value) else {
        return Err(BifError::Badarg);
    };
    let (start, len) = (small(start)?, small(len)?);
    let (from, to) = if len >= 0 {
        (start, start + len)
    } else {
        (start + len, start)
    };
    if from < 0 || to > size as i64 {
        return Err(BifError::Badarg);
    }
    Ok((from as usize, to as usize))
}

#[derive(Default)]
struct Options {
    global: bool,
    trim: bool,
    trim_all: bool,
    scope: Option<(usize, usize)>,
    insert: Vec<usize>,
}

fn options(ctx: &Context, t: Term, size: usize, allowed: &[&str]) -> Result<Options, BifError> {
    let mut o = Options::default();
    let heap = &ctx.process.heap;
    for option in list_elements(heap, t).ok_or(BifError::Badarg)? {
        let name = match option.as_atom() {
            Some(a) => a.name(),
            None => match heap.as_tuple(option) {
                Some(&[k, _]) => k.as_atom().ok_or(BifError::Badarg)?.name(),
                _ => return Err(BifError::Badarg),
            },
        };
        if !allowed.contains(&name) {
            return Err(BifError::Badarg);
        }
        match (name, heap.as_tuple(option)) {
            ("global", None) => o.global = true,
            ("trim", None) => o.trim = true,
            ("trim_all", None) => o.trim_all = true,
            ("scope", Some(&[_, v])) => o.scope = Some(scope(ctx, v, size)?),
            ("insert_replaced", Some(&[_, v])) => {
                let positions = match v.as_small() {
                    Some(_) => vec![v],
                    None => list_elements(heap, v).ok_or(BifError::Badarg)?,
                };
                for p in positions {
                    let p = small(p)?;
                    if p < 0 {
                        return Err(BifError::Badarg);
                    }
                    o.insert.push(p as usize);
                }
            }
            _ => return Err(BifError::Badarg),
        }
    }
    Ok(o)
}

fn pos_len(ctx: &mut Context, args: &mut [Term], (pos, len): (usize, usize)) -> BifResult {
    ctx.ensure(3, args)?;
    Ok(ctx
        .heap()
        .tuple(&[Term::small(pos as i64), Term::small(len as i64)]))
}

fn do_match(ctx: &mut Context, args: &mut [Term], opts: Term, global: bool) -> BifResult {
    let subject = bytes_of(ctx, args[0])?;
    let pats = patterns(ctx, args[1])?;
    let o = options(ctx, opts, subject.len(), &["scope"])?;
    let range = o.scope.unwrap_or((0, subject.len()));
    let found = find(&subject, range, &pats, global);
    if !global {
        return match found.first() {
            Some(&m) => pos_len(ctx, args, m),
            None => Ok(atom("nomatch")),
        };
    }
    ctx.ensure(5 * found.len(), args)?;
    let heap = ctx.heap();
    let items: Vec<Term> = found
        .iter()
        .map(|&(p, l)| heap.tuple(&[Term::small(p as i64), Term::small(l as i64)]))
        .collect();
    Ok(heap.list(&items))
}

pub fn match_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_match(ctx, args, Term::NIL, false)
}

pub fn match_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_match(ctx, args, args[2], false)
}

pub fn matches_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_match(ctx, args, Term::NIL, true)
}

pub fn matches_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_match(ctx, args, args[2], true)
}

pub fn compile_pattern_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pats = patterns(ctx, args[0])?;
    let words: usize = pats
        .iter()
        .map(|p| heap::words_for_binary(p.len()) + 2)
        .sum();
    ctx.ensure(words + 3, args)?;
    let heap = ctx.heap();
    let items: Vec<Term> = pats.iter().map(|p| heap.binary(p)).collect();
    let list = heap.list(&items);
    let tag = if items.len() == 1 { "bm" } else { "ac" };
    Ok(heap.tuple(&[atom(tag), list]))
}

/// Sub-binaries of `args[0]` for the ranges, as a list.
fn parts(ctx: &mut Context, args: &mut [Term], ranges: &[(usize, usize)]) -> BifResult {
    ctx.ensure(ranges.len() * (heap::SUB_BINARY_WORDS + 2), args)?;
    let heap = &mut ctx.process.heap;
    let mut items = Vec::with_capacity(ranges.len());
    for &(from, to) in ranges {
        items.push(
            heap.sub_binary(args[0], from, to - from)
                .ok_or(BifError::Badarg)?,
        );
    }
    Ok(heap.list(&items))
}

fn do_split(ctx: &mut Context, args: &mut [Term], opts: Term) -> BifResult {
    let subject = bytes_of(ctx, args[0])?;
    let pats = patterns(ctx, args[1])?;
    let o = options(
        ctx,
        opts,
        subject.len(),
        &["global", "trim", "trim_all", "scope"],
    )?;
    let range = o.scope.unwrap_or((0, subject.len()));
    let found = find(&subject, range, &pats, o.global);
    let mut ranges = Vec::with_capacity(found.len() + 1);
    let mut from = 0;
    for (pos, len) in found {
        ranges.push((from, pos));
        from = pos + len;
    }
    ranges.push((from, subject.len()));
    if o.trim_all {
        ranges.retain(|&(a, b)| a < b);
    } else if o.trim {
        while ranges.last().is_some_and(|&(a, b)| a == b) {
            ranges.pop();
        }
    }
    parts(ctx, args, &ranges)
}

pub fn split_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_split(ctx, args, Term::NIL)
}

pub fn split_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_split(ctx, args, args[2])
}

fn do_replace(ctx: &mut Context, args: &mut [Term], opts: Term) -> BifResult {
    let subject = bytes_of(ctx, args[0])?;
    let pats = patterns(ctx, args[1])?;
    let replacement = bytes_of(ctx, args[2])?;
    let mut o = options(
        ctx,
        opts,
        subject.len(),
        &["global", "scope", "insert_replaced"],
    )?;
    o.insert.sort_unstable();
    if o.insert.iter().any(|&p| p > replacement.len()) {
        return Err(BifError::Badarg);
    }
    let range = o.scope.unwrap_or((0, subject.len()));
    let found = find(&subject, range, &pats, o.global);
    let mut out = Vec::with_capacity(subject.len());
    let mut from = 0;
    for (pos, len) in found {
        out.extend_from_slice(&subject[from..pos]);
        let matched = &subject[pos..pos + len];
        let mut last = 0;
        for &at in &o.insert {
            out.extend_from_slice(&replacement[last..at]);
            out.extend_from_slice(matched);
            last = at;
        }
        out.extend_from_slice(&replacement[last..]);
        from = pos + len;
    }
    out.extend_from_slice(&subject[from..]);
    make_binary(ctx, out, args)
}

pub fn replace_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_replace(ctx, args, Term::NIL)
}

pub fn replace_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    do_replace(ctx, args, args[3])
}

// ---------------------------------------------------------------------
// Slices and bytes.

/// `binary:part(Bin, {Pos, Len})`.
pub fn part_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(&[pos, len]) = ctx.process.heap.as_tuple(args[1]) else {
        return Err(BifError::Badarg);
    };
    let mut three = [args[0], pos, len];
    let r = super::library::binary_part_3(ctx, &mut three);
    args[0] = three[0];
    r
}

pub fn copy_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = bytes_of(ctx, args[0])?;
    make_binary(ctx, bytes, args)
}

pub fn copy_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = bytes_of(ctx, args[0])?;
    let n = usize::try_from(small(args[1])?).map_err(|_| BifError::Badarg)?;
    let total = bytes.len().checked_mul(n).ok_or(BifError::SystemLimit)?;
    if total > 1 << 32 {
        return Err(BifError::SystemLimit);
    }
    let mut out = super::erlang::binary_buffer(total)?;
    for _ in 0..n {
        out.extend_from_slice(&bytes);
    }
    make_binary(ctx, out, args)
}

pub fn first_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let b = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    b.first()
        .map(|&c| Term::small(c as i64))
        .ok_or(BifError::Badarg)
}

pub fn last_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let b = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    b.last()
        .map(|&c| Term::small(c as i64))
        .ok_or(BifError::Badarg)
}

pub fn at_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let b = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    let i = usize::try_from(small(args[1])?).map_err(|_| BifError::Badarg)?;
    b.get(i)
        .map(|&c| Term::small(c as i64))
        .ok_or(BifError::Badarg)
}

fn byte_list(ctx: &mut Context, args: &mut [Term], from: usize, to: usize) -> BifResult {
    ctx.ensure(2 * (to - from), args)?;
    let bytes = bytes_of(ctx, args[0])?;
    let items: Vec<Term> = bytes[from..to]
        .iter()
        .map(|&b| Term::small(b as i64))
        .collect();
    Ok(ctx.heap().list(&items))
}

pub fn bin_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = size_of(ctx, args[0])?;
    byte_list(ctx, args, 0, n)
}

pub fn bin_to_list_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = size_of(ctx, args[0])?;
    let (from, to) = scope(ctx, args[1], n)?;
    byte_list(ctx, args, from, to)
}

pub fn bin_to_list_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = size_of(ctx, args[0])?;
    let (pos, len) = (small(args[1])?, small(args[2])?);
    let (from, to) = if len >= 0 {
        (pos, pos + len)
    } else {
        (pos + len, pos)
    };
    if from < 0 || to > n as i64 {
        return Err(BifError::Badarg);
    }
    byte_list(ctx, args, from as usize, to as usize)
}

pub fn list_to_bin_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[0].is_cons() && !args[0].is_nil() {
        return Err(BifError::Badarg);
    }
    super::erlang::list_to_binary_1(ctx, args)
}

fn binaries(ctx: &Context, t: Term) -> Result<Vec<Vec<u8>>, BifError> {
    let items = list_elements(&ctx.process.heap, t).ok_or(BifError::Badarg)?;
    if items.is_empty() {
        return Err(BifError::Badarg);
    }
    items.into_iter().map(|b| bytes_of(ctx, b)).collect()
}

pub fn longest_common_prefix_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bins = binaries(ctx, args[0])?;
    let first = &bins[0];
    let n = bins
        .iter()
        .map(|b| b.iter().zip(first).take_while(|(a, b)| a == b).count())
        .min()
        .unwrap_or(0);
    Ok(Term::small(n as i64))
}

pub fn longest_common_suffix_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bins = binaries(ctx, args[0])?;
    let first = &bins[0];
    let n = bins
        .iter()
        .map(|b| {
            b.iter()
                .rev()
                .zip(first.iter().rev())
                .take_while(|(a, b)| a == b)
                .count()
        })
        .min()
        .unwrap_or(0);
    Ok(Term::small(n as i64))
}

pub fn referenced_byte_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // Only a binary may be looked into: shared_binary_of reads a box.
    let size = size_of(ctx, args[0])?;
    let heap = &ctx.process.heap;
    let n = match heap.shared_binary_of(args[0]) {
        Some(shared) => shared.bytes().len(),
        None => size,
    };
    Ok(Term::small(n as i64))
}

fn big_endian(ctx: &Context, t: Term) -> Result<bool, BifError> {
    match t.as_atom().map(Atom::name) {
        Some("big") => Ok(true),
        Some("little") => Ok(false),
        _ => {
            let _ = ctx;
            Err(BifError::Badarg)
        }
    }
}

fn decode(ctx: &mut Context, args: &mut [Term], big: bool) -> BifResult {
    let mut bytes = bytes_of(ctx, args[0])?;
    if !big {
        bytes.reverse();
    }
    make_integer(ctx, BigInt::from_bytes_be(Sign::Plus, &bytes), args)
}

pub fn decode_unsigned_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    decode(ctx, args, true)
}

pub fn decode_unsigned_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let big = big_endian(ctx, args[1])?;
    decode(ctx, args, big)
}

fn encode(ctx: &mut Context, args: &mut [Term], big: bool) -> BifResult {
    let n: BigInt = match ctx.process.heap.view(args[0]) {
        View::Small(i) if i >= 0 => BigInt::from(i),
        View::Big(b) => b.to_bigint(),
        _ => return Err(BifError::Badarg),
    };
    if n.sign() == Sign::Minus {
        return Err(BifError::Badarg);
    }
    let (_, mut bytes) = n.to_bytes_be();
    if !big {
        bytes.reverse();
    }
    make_binary(ctx, bytes, args)
}

pub fn encode_unsigned_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    encode(ctx, args, true)
}

pub fn encode_unsigned_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let big = big_endian(ctx, args[1])?;
    encode(ctx, args, big)
}

// ---------------------------------------------------------------------
// unicode.

#[derive(Clone, Copy, PartialEq)]
enum Encoding {
    Latin1,
    Utf8,
    Utf16(bool),
    Utf32(bool),
}

fn encoding(ctx: &Context, t: Term) -> Result<Encoding, BifError> {
    let endian = |e: Term| match e.as_atom().map(Atom::name) {
        Some("big") => Ok(true),
        Some("little") => Ok(false),
        _ => Err(BifError::Badarg),
    };
    if let Some(&[name, e]) = ctx.process.heap.as_tuple(t) {
        return match name.as_atom().map(Atom::name) {
            Some("utf16") => Ok(Encoding::Utf16(endian(e)?)),
            Some("utf32") => Ok(Encoding::Utf32(endian(e)?)),
            _ => Err(BifError::Badarg),
        };
    }
    match t.as_atom().map(Atom::name) {
        Some("latin1") => Ok(Encoding::Latin1),
        Some("unicode" | "utf8") => Ok(Encoding::Utf8),
        Some("utf16") => Ok(Encoding::Utf16(true)),
        Some("utf32") => Ok(Encoding::Utf32(true)),
        _ => Err(BifError::Badarg),
    }
}

/// Where decoding stopped short.
enum Stop {
    /// A bad element: the rest of the data from it, rebuilt on the heap
    /// the way OTP shows it (see `rest_term`).
    Error(Rest),
    /// A binary ends inside a character: its tail.
    Incomplete(Rest),
}

/// The undecoded rest: a path of list levels, innermost last (indices,
/// not terms: the heap may move before the rest is built).
struct Rest {
    /// At each list level, the index of the element the stop is in.
    levels: Vec<usize>,
    /// For a stop inside a binary, the byte offset there.
    binary_offset: Option<usize>,
}

fn valid(c: u32) -> bool {
    c < 0x11_0000 && !(0xD800..0xE000).contains(&c)
}

/// Decodes one binary's bytes from `at`: `Ok(None)` when done,
/// `Err(Some(offset))` bad, `Err(None)` incomplete at the end.
fn decode_bytes(bytes: &[u8], enc: Encoding, out: &mut Vec<u32>) -> Result<(), (usize, bool)> {
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let (c, n) = match enc {
            Encoding::Latin1 => (rest[0] as u32, 1),
            Encoding::Utf8 => {
                let b = rest[0];
                let n = match b {
                    0x00..=0x7F => 1,
                    0xC2..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF4 => 4,
                    _ => return Err((i, false)),
                };
                if rest.len() < n {
                    // Incomplete only if what is there could start a character.
                    let ok = rest[1..].iter().all(|&c| c & 0xC0 == 0x80);
                    return Err((i, ok));
                }
                match std::str::from_utf8(&rest[..n]) {
                    Ok(s) => (s.chars().next().map_or(0, |c| c as u32), n),
                    Err(_) => return Err((i, false)),
                }
            }
            Encoding::Utf16(big) => {
                if rest.len() < 2 {
                    return Err((i, true));
                }
                let unit = |k: usize| {
                    let p = [rest[k], rest[k + 1]];
                    if big {
                        u16::from_be_bytes(p)
                    } else {
                        u16::from_le_bytes(p)
                    }
                };
                let u = unit(0) as u32;
                if (0xD800..0xDC00).contains(&u) {
                    if rest.len() < 4 {
                        return Err((i, true));
                    }
                    let v = unit(2) as u32;
                    if !(0xDC00..0xE000).contains(&v) {
                        return Err((i, false));
                    }
                    (0x10000 + ((u - 0xD800) << 10) + (v - 0xDC00), 4)
                } else if (0xDC00..0xE000).contains(&u) {
                    return Err((i, false));
                } else {
                    (u, 2)
                }
            }
            Encoding::Utf32(big) => {
                if rest.len() < 4 {
                    return Err((i, true));
                }
                let p = [rest[0], rest[1], rest[2], rest[3]];
                let c = if big {
                    u32::from_be_bytes(p)
                } else {
                    u32::from_le_bytes(p)
                };
                if !valid(c) {
                    return Err((i, false));
                }
                (c, 4)
            }
        };
        out.push(c);
        i += n;
    }
    Ok(())
}

/// Decodes chardata to code points; `Err(badarg)` for what is not
/// chardata at all.
fn decode_chardata(
    heap: &Heap,
    t: Term,
    enc: Encoding,
    out: &mut Vec<u32>,
) -> Result<Option<Stop>, BifError> {
    if let Some(bytes) = heap.binary_bytes(t) {
        return Ok(decode_bytes(bytes, enc, out).err().map(|(at, incomplete)| {
            let rest = Rest {
                levels: Vec::new(),
                binary_offset: Some(at),
            };
            if incomplete {
                Stop::Incomplete(rest)
            } else {
                Stop::Error(rest)
            }
        }));
    }
    if !t.is_cons() && !t.is_nil() {
        return Err(BifError::Badarg);
    }
    // Check the whole term is chardata first: a bad shape anywhere is
    // badarg even after a bad character.
    check_shape(heap, t)?;
    let mut t = t;
    let mut index = 0;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        if let Some(c) = h.as_small() {
            let ok = u32::try_from(c)
                .ok()
                .filter(|&c| valid(c) && (enc != Encoding::Latin1 || c < 256));
            match ok {
                Some(c) => out.push(c),
                None => {
                    return Ok(Some(Stop::Error(Rest {
                        levels: vec![index],
                        binary_offset: None,
                    })));
                }
            }
        } else {
            match decode_chardata(heap, h, enc, out)? {
                None => {}
                Some(Stop::Error(mut rest)) => {
                    rest.levels.insert(0, index);
                    return Ok(Some(Stop::Error(rest)));
                }
                Some(Stop::Incomplete(mut rest)) => {
                    rest.levels.insert(0, index);
                    return Ok(Some(Stop::Incomplete(rest)));
                }
            }
        }
        t = tail;
        index += 1;
    }
    if t.is_nil() {
        return Ok(None);
    }
    // An improper tail that is a binary: shown as the rest itself.
    decode_chardata(heap, t, enc, out)
}

fn check_shape(heap: &Heap, t: Term) -> Result<(), BifError> {
    let mut stack = vec![t];
    while let Some(mut t) = stack.pop() {
        while t.is_cons() {
            let (h, tail) = heap.cons_parts(t);
            if !h.is_small() {
                if h.is_cons() || h.is_nil() {
                    stack.push(h);
                } else if heap.binary_bytes(h).is_none() {
                    return Err(BifError::Badarg);
                }
            }
            t = tail;
        }
        if !t.is_nil() && heap.binary_bytes(t).is_none() {
            return Err(BifError::Badarg);
        }
    }
    Ok(())
}

/// The element at `index` of list `t` and the tail after it.
fn nth(heap: &Heap, mut t: Term, index: usize) -> Option<(Term, Term)> {
    for _ in 0..index {
        if !t.is_cons() {
            return None;
        }
        t = heap.cons_parts(t).1;
    }
    t.is_cons().then(|| heap.cons_parts(t))
}

/// The rest term: the innermost stop (the bad element and the tail after
/// it, or the binary's tail), then wrapped as `[Inner | Tail]` per level
/// (an incomplete binary's tail stands alone).
fn rest_term(ctx: &mut Context, args: &mut [Term], rest: &Rest, incomplete: bool) -> BifResult {
    let words = 4 * (rest.levels.len() + 2) + heap::SUB_BINARY_WORDS;
    ctx.ensure(words, args)?;
    let heap = &mut ctx.process.heap;
    // Walk down the path, remembering each level's element and tail.
    let mut path = Vec::with_capacity(rest.levels.len());
    let mut t = args[0];
    for &i in &rest.levels {
        let (h, after) = nth(heap, t, i).ok_or(BifError::Badarg)?;
        path.push((h, after));
        t = h;
    }
    // `t` is now the innermost element (or the whole data).
    let mut inner = match rest.binary_offset {
        Some(at) => {
            let size = heap.binary_bytes(t).map_or(0, <[u8]>::len);
            let tail = heap.sub_binary(t, at, size - at).ok_or(BifError::Badarg)?;
            if incomplete {
                return Ok(tail);
            }
            match path.pop() {
                Some((_, after)) => heap.cons(tail, after),
                None => tail,
            }
        }
        None => {
            let (bad, after) = path.pop().ok_or(BifError::Badarg)?;
            heap.cons(bad, after)
        }
    };
    while let Some((_, after)) = path.pop() {
        inner = heap.cons(inner, after);
    }
    Ok(inner)
}

/// Encodes code points; `Err(i)` at the first that `enc` cannot hold.
fn encode_points(points: &[u32], enc: Encoding) -> Result<Vec<u8>, (usize, Vec<u8>)> {
    let mut out = Vec::with_capacity(points.len());
    for (i, &c) in points.iter().enumerate() {
        match enc {
            Encoding::Latin1 => {
                if c > 255 {
                    return Err((i, out));
                }
                out.push(c as u8);
            }
            Encoding::Utf8 => {
                let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            Encoding::Utf16(big) => {
                let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
                let mut buf = [0u16; 2];
                for u in ch.encode_utf16(&mut buf) {
                    out.extend_from_slice(&if big {
                        u.to_be_bytes()
                    } else {
                        u.to_le_bytes()
                    });
                }
            }
            Encoding::Utf32(big) => {
                out.extend_from_slice(&if big {
                    c.to_be_bytes()
                } else {
                    c.to_le_bytes()
                });
            }
        }
    }
    Ok(out)
}

fn points_list(ctx: &mut Context, args: &mut [Term], points: &[u32]) -> BifResult {
    ctx.ensure(2 * points.len(), args)?;
    let items: Vec<Term> = points.iter().map(|&c| Term::small(c as i64)).collect();
    Ok(ctx.heap().list(&items))
}

fn to_list(ctx: &mut Context, args: &mut [Term], enc: Encoding) -> BifResult {
    let mut points = Vec::new();
    let stop = decode_chardata(&ctx.process.heap, args[0], enc, &mut points)?;
    let done = points_list(ctx, args, &points)?;
    match stop {
        None => Ok(done),
        Some(stop) => {
            let mut all = [args[0], done];
            stopped_with(ctx, &mut all, stop)
        }
    }
}

/// `{Tag, Done, Rest}` where `all` is `[Data, Done]` (kept as roots).
fn stopped_with(ctx: &mut Context, all: &mut [Term], stop: Stop) -> BifResult {
    let (tag, rest) = match &stop {
        Stop::Error(r) => ("error", rest_term(ctx, all, r, false)?),
        Stop::Incomplete(r) => ("incomplete", rest_term(ctx, all, r, true)?),
    };
    let mut keep = [all[1], rest];
    ctx.ensure(4, &mut keep)?;
    Ok(ctx.heap().tuple(&[atom(tag), keep[0], keep[1]]))
}

pub fn characters_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    to_list(ctx, args, Encoding::Utf8)
}

pub fn characters_to_list_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let enc = encoding(ctx, args[1])?;
    to_list(ctx, args, enc)
}

fn to_binary(ctx: &mut Context, args: &mut [Term], input: Encoding, output: Encoding) -> BifResult {
    let mut points = Vec::new();
    let stop = decode_chardata(&ctx.process.heap, args[0], input, &mut points)?;
    match encode_points(&points, output) {
        Ok(bytes) => {
            let done = make_binary(ctx, bytes, args)?;
            match stop {
                None => Ok(done),
                Some(stop) => {
                    let mut all = [args[0], done];
                    stopped_with(ctx, &mut all, stop)
                }
            }
        }
        Err((i, bytes)) => {
            // A character the output cannot hold: OTP answers with the
            // rest from that character, the character in a list of its own.
            let done = make_binary(ctx, bytes, args)?;
            let rest_points = &points[i..];
            let mut keep = [done];
            ctx.ensure(2 * rest_points.len() + 6, &mut keep)?;
            let heap = ctx.heap();
            let items: Vec<Term> = rest_points.iter().map(|&c| Term::small(c as i64)).collect();
            let tail = heap.list(&items[1..]);
            let first = heap.cons(items[0], Term::NIL);
            let rest = heap.cons(first, tail);
            Ok(heap.tuple(&[atom("error"), keep[0], rest]))
        }
    }
}

pub fn characters_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    to_binary(ctx, args, Encoding::Utf8, Encoding::Utf8)
}

pub fn characters_to_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let input = encoding(ctx, args[1])?;
    to_binary(ctx, args, input, Encoding::Utf8)
}

pub fn characters_to_binary_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let input = encoding(ctx, args[1])?;
    let output = encoding(ctx, args[2])?;
    to_binary(ctx, args, input, output)
}

/// A Unicode normalization form.
#[derive(Clone, Copy)]
enum Form {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

/// `unicode:characters_to_nf*_list/1` and `_binary/1`: the chardata
/// decoded as UTF-8 and normalized; invalid data stops it as
/// `characters_to_list` stops, with what was normalized so far.
fn normalized(ctx: &mut Context, args: &mut [Term], form: Form, binary: bool) -> BifResult {
    use unicode_normalization::UnicodeNormalization;
    let mut points = Vec::new();
    let stop = decode_chardata(&ctx.process.heap, args[0], Encoding::Utf8, &mut points)?;
    let text: String = points.iter().filter_map(|&c| char::from_u32(c)).collect();
    let out: String = match form {
        Form::Nfc => text.nfc().collect(),
        Form::Nfd => text.nfd().collect(),
        Form::Nfkc => text.nfkc().collect(),
        Form::Nfkd => text.nfkd().collect(),
    };
    let done = if binary {
        make_binary(ctx, out.into_bytes(), args)?
    } else {
        let points: Vec<u32> = out.chars().map(u32::from).collect();
        points_list(ctx, args, &points)?
    };
    match stop {
        None => Ok(done),
        Some(stop) => {
            let mut all = [args[0], done];
            stopped_with(ctx, &mut all, stop)
        }
    }
}

pub fn characters_to_nfc_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfc, false)
}

pub fn characters_to_nfd_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfd, false)
}

pub fn characters_to_nfkc_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfkc, false)
}

pub fn characters_to_nfkd_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfkd, false)
}

pub fn characters_to_nfc_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfc, true)
}

pub fn characters_to_nfd_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfd, true)
}

pub fn characters_to_nfkc_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfkc, true)
}

pub fn characters_to_nfkd_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    normalized(ctx, args, Form::Nfkd, true)
}
