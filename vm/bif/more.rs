//! erlang:* BIFs that an audit against OTP 25's export list found
//! missing: existing-atom and float conversions of binaries, the process
//! dictionary's key lists, checksums (crc32, adler32; md5 is in digest.rs), and the
//! single-node answers of the distribution BIFs.

use super::erlang::{list_elements, make_binary, make_string, small};
use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::iolist::iolist_bytes;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::cmp::Ordering;

fn binary_text(ctx: &Context, t: Term) -> Result<String, BifError> {
    let bytes = ctx.process.heap.binary_bytes(t).ok_or(BifError::Badarg)?;
    String::from_utf8(bytes.to_vec()).map_err(|_| BifError::Badarg)
}

pub fn binary_to_existing_atom_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = binary_text(ctx, args[0])?;
    Atom::existing(&s).map(Term::atom).ok_or(BifError::Badarg)
}

pub fn binary_to_existing_atom_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = super::erlang::atom_text(&ctx.process.heap, args[0], args[1])?;
    Atom::existing(&s).map(Term::atom).ok_or(BifError::Badarg)
}

/// Erlang's float syntax: digits, a dot, digits, then an optional
/// exponent; no bare integers, no `inf`.
fn erlang_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let mantissa = body.split(['e', 'E']).next().unwrap_or("");
    let ok = mantissa.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.chars().all(|c| c.is_ascii_digit())
            && b.chars().all(|c| c.is_ascii_digit())
    });
    let f: f64 = if ok { s.parse().ok()? } else { return None };
    f.is_finite().then_some(f)
}

pub fn binary_to_float_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = binary_text(ctx, args[0])?;
    let f = erlang_float(&s).ok_or(BifError::Badarg)?;
    ctx.ensure(heap::FLOAT_WORDS, args)?;
    Ok(ctx.heap().float(f))
}

/// `binary_to_list(Bin, Start, Stop)`: bytes Start..=Stop, 1-based.
pub fn binary_to_list_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len() as i64;
    let (start, stop) = (small(args[1])?, small(args[2])?);
    if start < 1 || stop < start || stop > n {
        return Err(BifError::Badarg);
    }
    let len = (stop - start + 1) as usize;
    ctx.ensure(2 * len, args)?;
    let heap = &mut ctx.process.heap;
    let bytes: Vec<Term> = heap.binary_bytes(args[0]).unwrap_or_default()
        [start as usize - 1..stop as usize]
        .iter()
        .map(|&b| Term::small(b as i64))
        .collect();
    Ok(heap.list(&bytes))
}

/// `binary_part(Bin, {Pos, Len})`.
pub fn binary_part_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (pos, len) = match ctx.process.heap.as_tuple(args[1]) {
        Some([p, l]) => (*p, *l),
        _ => return Err(BifError::Badarg),
    };
    let mut three = [args[0], pos, len];
    super::library::binary_part_3(ctx, &mut three)
}

/// What `term_to_binary/2`'s options ask for: the minor version and the
/// compression level (0 for none; `compressed` alone is zlib's default,
/// 6). `badarg` for an option OTP 25 does not know.
fn encoding_options(ctx: &Context, options: Term) -> Result<(u8, u32), BifError> {
    let heap = &ctx.process.heap;
    let mut minor = crate::term::etf::DEFAULT_MINOR_VERSION;
    let mut level = 0;
    for option in list_elements(heap, options).ok_or(BifError::Badarg)? {
        match heap.view(option) {
            View::Atom(a) if a.name() == "compressed" => {
                level = crate::term::zlib::DEFAULT_LEVEL;
            }
            View::Atom(a) if a.name() == "deterministic" => {}
            View::Tuple(&[key, value]) => match (key.as_atom().map(|a| a.name()), value.as_small())
            {
                (Some("compressed"), Some(n @ 0..=9)) => level = n as u32,
                (Some("minor_version"), Some(m @ 0..=2)) => minor = m as u8,
                _ => return Err(BifError::Badarg),
            },
            _ => return Err(BifError::Badarg),
        }
    }
    Ok((minor, level))
}

pub fn term_to_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (minor, level) = encoding_options(ctx, args[1])?;
    let bytes =
        crate::term::etf::term_to_binary_compressed(&ctx.process.heap, args[0], minor, level)
            .map_err(|_| BifError::Badarg)?;
    make_binary(ctx, bytes, args)
}

/// `erlang:external_size(Term)`: the size in bytes of `term_to_binary(Term)`.
pub fn external_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = crate::term::etf::term_to_binary(&ctx.process.heap, args[0])
        .map_err(|_| BifError::Badarg)?;
    Ok(Term::small(bytes.len() as i64))
}

/// `erlang:external_size(Term, Options)`: OTP 25 takes only
/// `{minor_version, 0 | 1}` here; `compressed`, `deterministic` and minor
/// version 2 are `badarg`.
pub fn external_size_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let mut minor = crate::term::etf::DEFAULT_MINOR_VERSION;
    for option in list_elements(heap, args[1]).ok_or(BifError::Badarg)? {
        match heap.view(option) {
            View::Tuple(&[key, value]) => match (key.as_atom().map(|a| a.name()), value.as_small())
            {
                (Some("minor_version"), Some(m @ 0..=1)) => minor = m as u8,
                _ => return Err(BifError::Badarg),
            },
            _ => return Err(BifError::Badarg),
        }
    }
    let bytes = crate::term::etf::term_to_binary_minor(&ctx.process.heap, args[0], minor)
        .map_err(|_| BifError::Badarg)?;
    Ok(Term::small(bytes.len() as i64))
}

/// `binary_to_term(Bin, Opts)`: `used` returns `{Term, BytesUsed}`;
/// `safe` is accepted but does not refuse new atoms (which atoms exist
/// is not the same set as in a BEAM node, so it could not match anyway).
pub fn binary_to_term_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let mut used = false;
    for option in list_elements(heap, args[1]).ok_or(BifError::Badarg)? {
        match option.as_atom().map(|a| a.name()) {
            Some("safe") => {}
            Some("used") => used = true,
            _ => return Err(BifError::Badarg),
        }
    }
    if !used {
        return super::library::binary_to_term_1(ctx, &mut args[..1]);
    }
    let bytes = heap.binary_bytes(args[0]).ok_or(BifError::Badarg)?;
    let (buffer, count) = crate::term::etf::decode_prefix(bytes).map_err(|_| BifError::Badarg)?;
    ctx.ensure(buffer.words() + 3, args)?;
    let term = ctx.process.heap.take_buffer(buffer);
    Ok(ctx.heap().tuple(&[term, Term::small(count as i64)]))
}

/// `erase()`: the whole dictionary as `get()` gives it, then empty.
pub fn erase_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let all = super::erlang::get_0(ctx, args)?;
    ctx.process.dictionary_clear();
    Ok(all)
}

pub fn get_keys_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx.process.dictionary().len() / 2;
    ctx.ensure(2 * n, args)?;
    let keys: Vec<Term> = ctx
        .process
        .dictionary()
        .iter()
        .step_by(2)
        .copied()
        .collect();
    Ok(ctx.heap().list(&keys))
}

/// `get_keys(Value)`: the keys whose value is exactly `Value`.
pub fn get_keys_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx.process.dictionary().len() / 2;
    ctx.ensure(2 * n, args)?;
    let heap = &ctx.process.heap;
    let keys: Vec<Term> = ctx
        .process
        .dictionary()
        .chunks(2)
        .filter(|kv| crate::term::order::compare_exact(heap, kv[1], args[0]) == Ordering::Equal)
        .map(|kv| kv[0])
        .collect();
    Ok(ctx.heap().list(&keys))
}

/// `make_tuple(N, Default, [{Pos, Value}])`: later pairs win.
pub fn make_tuple_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = small(args[0])?;
    if !(0..=(1 << 24)).contains(&n) {
        return Err(BifError::Badarg);
    }
    let heap = &ctx.process.heap;
    let inits = list_elements(heap, args[2]).ok_or(BifError::Badarg)?;
    let mut sets = Vec::with_capacity(inits.len());
    for init in inits {
        match heap.as_tuple(init) {
            Some([p, v]) => match p.as_small() {
                Some(p) if (1..=n).contains(&p) => sets.push((p as usize - 1, *v)),
                _ => return Err(BifError::Badarg),
            },
            _ => return Err(BifError::Badarg),
        }
    }
    ctx.ensure(n as usize + 1, args)?;
    // The values may have moved in a collection: read them again.
    let heap = &ctx.process.heap;
    let inits = list_elements(heap, args[2]).unwrap_or_default();
    let mut elements = vec![args[1]; n as usize];
    for (init, (i, _)) in inits.iter().zip(&sets) {
        if let Some([_, v]) = heap.as_tuple(*init) {
            elements[*i] = *v;
        }
    }
    Ok(ctx.heap().tuple(&elements))
}

pub fn fun_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match ctx.process.heap.view(args[0]) {
        View::Fun { .. } | View::ExternalFun { .. } => {
            let text = crate::term::print::write(&ctx.process.heap, args[0]);
            make_string(ctx, &text, args)
        }
        _ => Err(BifError::Badarg),
    }
}

pub fn append_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    super::erlang::append_2(ctx, args)
}

pub fn subtract_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    super::erlang::subtract_2(ctx, args)
}

fn iodata(ctx: &Context, t: Term) -> Result<Vec<u8>, BifError> {
    iolist_bytes(&ctx.process.heap, t).ok_or(BifError::Badarg)
}

pub fn crc32_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = iodata(ctx, args[0])?;
    Ok(Term::small(crc32(0, &bytes) as i64))
}

pub fn crc32_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let old = small(args[0])
        .ok()
        .filter(|c| (0..=u32::MAX as i64).contains(c));
    let old = old.ok_or(BifError::Badarg)? as u32;
    let bytes = iodata(ctx, args[1])?;
    Ok(Term::small(crc32(old, &bytes) as i64))
}

pub fn adler32_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = iodata(ctx, args[0])?;
    Ok(Term::small(adler32(1, &bytes) as i64))
}

pub fn adler32_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let old = small(args[0])
        .ok()
        .filter(|c| (0..=u32::MAX as i64).contains(c));
    let old = old.ok_or(BifError::Badarg)? as u32;
    let bytes = iodata(ctx, args[1])?;
    Ok(Term::small(adler32(old, &bytes) as i64))
}

/// `binary:encode_hex/1`: upper-case hex digits, as OTP 25's.
pub fn encode_hex_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    let hex: Vec<u8> = bytes
        .iter()
        .flat_map(|b| format!("{b:02X}").into_bytes())
        .collect();
    make_binary(ctx, hex, args)
}

/// `binary:decode_hex/1`: pairs of hex digits of either case.
pub fn decode_hex_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    if bytes.len() % 2 != 0 {
        return Err(BifError::Badarg);
    }
    let digit = |c: u8| (c as char).to_digit(16).ok_or(BifError::Badarg);
    let mut out = Vec::with_capacity(bytes.len() / 2);
    for pair in bytes.chunks_exact(2) {
        out.push((digit(pair[0])? * 16 + digit(pair[1])?) as u8);
    }
    make_binary(ctx, out, args)
}

/// zlib's CRC-32 (reflected, polynomial 0xEDB88320), continuing `crc`.
fn crc32(crc: u32, bytes: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// zlib's Adler-32, continuing `adler`.
fn adler32(adler: u32, bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (adler & 0xffff, adler >> 16);
    for &x in bytes {
        a = (a + x as u32) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_the_reference_values() {
        assert_eq!(
            crc32(0, b"The quick brown fox jumps over the lazy dog"),
            0x414f_a339
        );
        assert_eq!(adler32(1, b"Wikipedia"), 0x11e6_0398);
    }
}
