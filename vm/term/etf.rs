//! The external term format: `term_to_binary` and `binary_to_term`,
//! byte for byte as OTP 25 writes them (version 131), compressed or not.
//!
//! Encoding walks the term with an explicit stack. Decoding reads into a
//! fresh heap sized from the input (no ETF item makes more than two heap
//! words per input byte, plus a constant), filling containers that are
//! allocated first and completed as their elements arrive, so neither
//! direction recurses on the Rust stack. The result of decoding is a
//! `MessageBuffer`, which the caller moves into its heap with
//! `Heap::receive_buffer`.
//!
//! Supported: integers, floats, atoms, `[]`, strings, lists (proper and
//! improper), tuples, maps, binaries, `fun M:F/A`, pids and references
//! of any node. Local funs are not encodable yet (`Unsupported`). Maps
//! are written in act's key order, which is OTP's for maps of up to 32
//! keys.

use super::node;
use super::view::View;
use super::{Atom, Term};
use crate::heap::{self, Heap, MessageBuffer, SystemLimit};
use num_bigint::{BigInt, Sign};

const VERSION: u8 = 131;
/// A zlib stream of the term's bytes follows, after their size.
const COMPRESSED: u8 = 80;
const NEW_FLOAT_EXT: u8 = 70;
const FLOAT_EXT: u8 = 99;
/// The bytes of a FLOAT_EXT's text.
const FLOAT_TEXT_LEN: usize = 31;
const NEW_PID_EXT: u8 = 88;
const PID_EXT: u8 = 103;
const NEWER_REFERENCE_EXT: u8 = 90;
const SMALL_INTEGER_EXT: u8 = 97;
const INTEGER_EXT: u8 = 98;
const ATOM_EXT: u8 = 100;
const SMALL_TUPLE_EXT: u8 = 104;
const LARGE_TUPLE_EXT: u8 = 105;
const NIL_EXT: u8 = 106;
const STRING_EXT: u8 = 107;
const LIST_EXT: u8 = 108;
const BINARY_EXT: u8 = 109;
const BIT_BINARY_EXT: u8 = 77;
const SMALL_BIG_EXT: u8 = 110;
const LARGE_BIG_EXT: u8 = 111;
const EXPORT_EXT: u8 = 113;
const NEW_FUN_EXT: u8 = 112;
const SMALL_ATOM_EXT: u8 = 115;
const MAP_EXT: u8 = 116;
const ATOM_UTF8_EXT: u8 = 118;
const SMALL_ATOM_UTF8_EXT: u8 = 119;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EtfError {
    /// Not a valid external term (binary_to_term raises `badarg`).
    Badarg,
    /// A term act cannot encode yet (a local fun).
    Unsupported,
    /// Past the memory budget or the atom table.
    SystemLimit,
}

impl From<SystemLimit> for EtfError {
    fn from(_: SystemLimit) -> Self {
        EtfError::SystemLimit
    }
}

// ---------------------------------------------------------------------
// Encoding.

/// `term_to_binary(T)`.
pub fn term_to_binary(heap: &Heap, t: Term) -> Result<Vec<u8>, EtfError> {
    term_to_binary_minor(heap, t, DEFAULT_MINOR_VERSION)
}

/// OTP 25's `minor_version` when `term_to_binary/2` is given none.
pub const DEFAULT_MINOR_VERSION: u8 = 1;

/// `term_to_binary(T, [{minor_version, Minor}])`: 0 writes floats as
/// text (FLOAT_EXT), 1 and up as IEEE bytes; 2 writes every atom in
/// UTF-8, below that atoms that fit Latin-1 are written as Latin-1.
pub fn term_to_binary_minor(heap: &Heap, t: Term, minor: u8) -> Result<Vec<u8>, EtfError> {
    let mut out = vec![VERSION];
    encode(heap, t, &mut out, minor, 0)?;
    Ok(out)
}

/// `term_to_binary(T, [{compressed, Level}])`: the uncompressed bytes
/// deflated at `Level` (1 to 9; 0 writes them as they are). As in OTP,
/// the compressed form is kept only when it is no longer than the plain
/// one: tag, size and stream take at most the plain term's bytes plus
/// its version byte.
pub fn term_to_binary_compressed(
    heap: &Heap,
    t: Term,
    minor: u8,
    level: u32,
) -> Result<Vec<u8>, EtfError> {
    let plain = term_to_binary_minor(heap, t, minor)?;
    if level == 0 {
        return Ok(plain);
    }
    let term = &plain[1..];
    let stream = super::zlib::compress(term, level, super::zlib::Wrapper::Zlib);
    let Ok(size) = u32::try_from(term.len()) else {
        return Ok(plain);
    };
    if stream.len() + 5 > term.len() {
        return Ok(plain);
    }
    let mut out = Vec::with_capacity(6 + stream.len());
    out.push(VERSION);
    out.push(COMPRESSED);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&stream);
    Ok(out)
}

/// How deep funs captured by funs may nest in one term: each level is a
/// Rust call (a fun's size comes before its captured terms).
const FUN_NESTING: usize = 1000;

/// Appends the encoding of `t`; `funs` is how many funs enclose it.
fn encode(heap: &Heap, t: Term, out: &mut Vec<u8>, minor: u8, funs: usize) -> Result<(), EtfError> {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Small(i) => encode_integer(out, &BigInt::from(i)),
            View::Big(b) => encode_integer(out, &b.to_bigint()),
            View::Float(f) if minor == 0 => encode_text_float(out, f),
            View::Float(f) => {
                out.push(NEW_FLOAT_EXT);
                out.extend_from_slice(&f.to_bits().to_be_bytes());
            }
            View::Atom(a) => encode_atom(out, minor, a),
            View::Nil => out.push(NIL_EXT),
            View::Cons(..) => {
                if let Some(bytes) = byte_string(heap, t) {
                    out.push(STRING_EXT);
                    out.extend_from_slice(&(bytes.len() as u16).to_be_bytes());
                    out.extend_from_slice(&bytes);
                    continue;
                }
                let mut elements = Vec::new();
                let mut rest = t;
                while let View::Cons(head, tail) = heap.view(rest) {
                    elements.push(head);
                    rest = tail;
                }
                out.push(LIST_EXT);
                out.extend_from_slice(
                    &u32::try_from(elements.len())
                        .map_err(|_| EtfError::SystemLimit)?
                        .to_be_bytes(),
                );
                stack.push(rest);
                stack.extend(elements.into_iter().rev());
            }
            View::Tuple(elements) => {
                if elements.len() < 256 {
                    out.push(SMALL_TUPLE_EXT);
                    out.push(elements.len() as u8);
                } else {
                    out.push(LARGE_TUPLE_EXT);
                    out.extend_from_slice(&(elements.len() as u32).to_be_bytes());
                }
                stack.extend(elements.iter().rev());
            }
            View::Map { keys, values } => {
                out.push(MAP_EXT);
                out.extend_from_slice(&(keys.len() as u32).to_be_bytes());
                for (k, v) in keys.iter().zip(values.iter()).rev() {
                    stack.push(*v);
                    stack.push(*k);
                }
            }
            View::Binary(bytes) => {
                out.push(BINARY_EXT);
                out.extend_from_slice(
                    &u32::try_from(bytes.len())
                        .map_err(|_| EtfError::SystemLimit)?
                        .to_be_bytes(),
                );
                out.extend_from_slice(bytes);
            }
            View::Bitstring(bits) => {
                let (whole, tail, tail_bits) = bits.split_tail();
                out.push(BIT_BINARY_EXT);
                out.extend_from_slice(
                    &u32::try_from(whole.len() + 1)
                        .map_err(|_| EtfError::SystemLimit)?
                        .to_be_bytes(),
                );
                out.push(tail_bits as u8);
                out.extend_from_slice(&whole);
                out.push(tail << (8 - tail_bits));
            }
            View::ExternalFun {
                module,
                function,
                arity,
            } => {
                out.push(EXPORT_EXT);
                encode_atom(out, minor, module);
                encode_atom(out, minor, function);
                out.push(SMALL_INTEGER_EXT);
                out.push(arity as u8);
            }
            View::Pid(id) => {
                let this = node::this_node();
                encode_pid(out, minor, this.name, this.creation, id);
            }
            View::ExtPid { node, id } => {
                let entry = node::entry(node);
                encode_pid(out, minor, entry.name, entry.creation, id);
            }
            View::Ref(id) => {
                let this = node::this_node();
                out.push(NEWER_REFERENCE_EXT);
                out.extend_from_slice(&2u16.to_be_bytes());
                encode_atom(out, minor, this.name);
                out.extend_from_slice(&this.creation.to_be_bytes());
                out.extend_from_slice(&(id as u32).to_be_bytes());
                out.extend_from_slice(&((id >> 32) as u32).to_be_bytes());
            }
            View::ExtRef { node, len, words } => {
                let entry = node::entry(node);
                out.push(NEWER_REFERENCE_EXT);
                out.extend_from_slice(&(len as u16).to_be_bytes());
                encode_atom(out, minor, entry.name);
                out.extend_from_slice(&entry.creation.to_be_bytes());
                for w in &words[..len as usize] {
                    out.extend_from_slice(&w.to_be_bytes());
                }
            }
            View::Fun { index, captured } => encode_fun(heap, index, captured, out, minor, funs)?,
            View::NotAValue => return Err(EtfError::Unsupported),
        }
    }
    Ok(())
}

/// NEW_PID_EXT: node name, id, serial, creation.
fn encode_pid(out: &mut Vec<u8>, minor: u8, name: Atom, creation: u32, id: u64) {
    out.push(NEW_PID_EXT);
    encode_atom(out, minor, name);
    out.extend_from_slice(&(id as u32).to_be_bytes());
    out.extend_from_slice(&((id >> 32) as u32).to_be_bytes());
    out.extend_from_slice(&creation.to_be_bytes());
}

/// A name's 64-bit FNV-1a hash: the part of a fun's `Uniq` that names
/// its module.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether a NEW_FUN_EXT's version fields, `Uniq` and `OldUniq`, are
/// those act writes for a fun of `module` (`encode_fun`). A fun BEAM
/// wrote carries the MD5 of its module's BEAM code there (and a hash of
/// it in `OldUniq`): code act does not have, so such a fun is refused.
pub fn written_by_act(module: &str, uniq: &[u8; 16], old_uniq: i64) -> bool {
    let hash = name_hash(module);
    uniq[8..16] == hash.to_be_bytes() && old_uniq == (hash & 0x07ff_ffff) as i64
}

/// A local fun as NEW_FUN_EXT. OTP's `Uniq` is the MD5 of the module's
/// code; act's names the fun's entry in this VM's fun table (the index
/// and the module version's first index) and the module, so that
/// `binary_to_term` in the same VM finds that very version again.
fn encode_fun(
    heap: &Heap,
    index: u32,
    captured: &[Term],
    out: &mut Vec<u8>,
    minor: u8,
    funs: usize,
) -> Result<(), EtfError> {
    if funs >= FUN_NESTING {
        return Err(EtfError::SystemLimit);
    }
    let entry = crate::runtime::fun_entry(index).ok_or(EtfError::Unsupported)?;
    let module = entry.module.name;
    let hash = name_hash(module.name());
    let start = out.len();
    out.push(NEW_FUN_EXT);
    out.extend_from_slice(&[0; 4]);
    out.push(u8::try_from(entry.arity).map_err(|_| EtfError::Unsupported)?);
    out.extend_from_slice(&index.to_be_bytes());
    out.extend_from_slice(&entry.module.fun_base.to_be_bytes());
    out.extend_from_slice(&hash.to_be_bytes());
    out.extend_from_slice(&entry.fun.to_be_bytes());
    out.extend_from_slice(&(captured.len() as u32).to_be_bytes());
    encode_atom(out, minor, module);
    encode_integer(out, &BigInt::from(entry.fun));
    encode_integer(out, &BigInt::from((hash & 0x07ff_ffff) as i64));
    // The creator's pid: act's funs do not keep it.
    out.push(NEW_PID_EXT);
    encode_atom(out, minor, Atom::NONODE);
    out.extend_from_slice(&[0; 12]);
    for &c in captured {
        encode(heap, c, out, minor, funs + 1)?;
    }
    let size = u32::try_from(out.len() - start - 1).map_err(|_| EtfError::SystemLimit)?;
    out[start + 1..start + 5].copy_from_slice(&size.to_be_bytes());
    Ok(())
}

/// Reads a NEW_FUN_EXT up to its captured terms: the fun's index in this
/// VM's fun table and how many terms it captured. A fun another act node
/// encoded is found by module and index in this node's newest version of
/// the module (loaded if need be). A fun act did not encode (BEAM's),
/// or whose module version is gone, is `Badarg`.
fn fun_header(input: &mut Input) -> Result<(u32, usize), EtfError> {
    let size = input.u32()?;
    let from = input.at;
    let arity = input.u8()? as u32;
    let uniq = input.take(16)?;
    let global = u32::from_be_bytes([uniq[0], uniq[1], uniq[2], uniq[3]]);
    let base = u32::from_be_bytes([uniq[4], uniq[5], uniq[6], uniq[7]]);
    let mut hash = [0u8; 8];
    hash.copy_from_slice(&uniq[8..16]);
    let index = input.u32()?;
    let free = input.u32()?;
    let module = decode_any_atom(input)?;
    // OldIndex, then OldUniq: the second version field.
    let mut old_uniq = 0;
    for _ in 0..2 {
        old_uniq = match input.u8()? {
            SMALL_INTEGER_EXT => input.u8()? as i64,
            INTEGER_EXT => input.u32()? as i32 as i64,
            _ => return Err(EtfError::Badarg),
        };
    }
    let mut uniq_bytes = [0u8; 16];
    uniq_bytes.copy_from_slice(uniq);
    if !written_by_act(module.name(), &uniq_bytes, old_uniq) {
        // BEAM's code (or another version of it): act cannot run it.
        return Err(EtfError::Badarg);
    }
    if input.u8()? != NEW_PID_EXT {
        return Err(EtfError::Badarg);
    }
    decode_any_atom(input)?;
    input.take(12)?;
    // The size counts itself and every captured term.
    if size < input.at - from + 4 || from + size - 4 > input.bytes.len() {
        return Err(EtfError::Badarg);
    }
    let same = |entry: &crate::runtime::FunEntry| {
        u64::from_be_bytes(hash) == name_hash(module.name())
            && entry.module.name == module
            && entry.fun as usize == index
            && entry.arity == arity
            && entry
                .module
                .funs
                .get(entry.fun as usize)
                .is_some_and(|f| f.free as usize == free)
    };
    let entry = crate::runtime::fun_entry(global).filter(|e| same(e));
    // Written by another act node (its fun table is numbered its own
    // way): the fun of the same index in this node's version of the
    // module, as Erlang finds a fun by module and index.
    let Some(entry) = entry else {
        let newest = crate::runtime::lookup(module)
            .ok()
            .flatten()
            .ok_or(EtfError::Badarg)?;
        let global = newest.fun_base + index as u32;
        let entry = crate::runtime::fun_entry(global).ok_or(EtfError::Badarg)?;
        if entry.module.fun_base != newest.fun_base || !same(entry) {
            return Err(EtfError::Badarg);
        }
        return Ok((global, input.plausible(free, 1)?));
    };
    let found = entry.module.name == module
        && entry.module.fun_base == base
        && u64::from_be_bytes(hash) == name_hash(module.name())
        && entry.fun as usize == index
        && entry.arity == arity
        && entry
            .module
            .funs
            .get(entry.fun as usize)
            .is_some_and(|f| f.free as usize == free);
    if !found {
        return Err(EtfError::Badarg);
    }
    Ok((global, input.plausible(free, 1)?))
}

/// The bytes of a proper list of 0..=255 shorter than 65536 (STRING_EXT).
fn byte_string(heap: &Heap, t: Term) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut rest = t;
    while let View::Cons(head, tail) = heap.view(rest) {
        bytes.push(u8::try_from(head.as_small()?).ok()?);
        if bytes.len() >= 65536 {
            return None;
        }
        rest = tail;
    }
    rest.is_nil().then_some(bytes)
}

fn encode_integer(out: &mut Vec<u8>, i: &BigInt) {
    if let Ok(small) = u8::try_from(i) {
        out.extend_from_slice(&[SMALL_INTEGER_EXT, small]);
    } else if let Ok(word) = i32::try_from(i) {
        out.push(INTEGER_EXT);
        out.extend_from_slice(&word.to_be_bytes());
    } else {
        let (sign, digits) = i.to_bytes_le();
        if digits.len() < 256 {
            out.extend_from_slice(&[SMALL_BIG_EXT, digits.len() as u8]);
        } else {
            out.push(LARGE_BIG_EXT);
            out.extend_from_slice(&(digits.len() as u32).to_be_bytes());
        }
        out.push((sign == Sign::Minus) as u8);
        out.extend_from_slice(&digits);
    }
}

/// FLOAT_EXT: the float as C's `%.20e` writes it, NUL-padded to 31 bytes.
fn encode_text_float(out: &mut Vec<u8>, f: f64) {
    // Rust's `{:e}` rounds as C's does but writes the exponent bare
    // (`e-1`); C writes a sign and at least two digits (`e-01`).
    let text = format!("{f:.20e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    let c_text = format!("{mantissa}e{sign}{digits:0>2}");
    let mut field = [0u8; FLOAT_TEXT_LEN];
    field[..c_text.len()].copy_from_slice(c_text.as_bytes());
    out.push(FLOAT_EXT);
    out.extend_from_slice(&field);
}

/// Below minor version 2, Latin-1 atoms as ATOM_EXT (OTP 25's default);
/// others, and every atom from minor version 2 on, in UTF-8.
fn encode_atom(out: &mut Vec<u8>, minor: u8, atom: Atom) {
    let name = atom.name();
    if minor < 2 && name.chars().all(|c| (c as u32) < 256) {
        out.push(ATOM_EXT);
        out.extend_from_slice(&(name.chars().count() as u16).to_be_bytes());
        out.extend(name.chars().map(|c| c as u8));
    } else if name.len() < 256 {
        out.extend_from_slice(&[SMALL_ATOM_UTF8_EXT, name.len() as u8]);
        out.extend_from_slice(name.as_bytes());
    } else {
        out.push(ATOM_UTF8_EXT);
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
    }
}

// ---------------------------------------------------------------------
// Decoding.

struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], EtfError> {
        let end = self.at.checked_add(n).ok_or(EtfError::Badarg)?;
        let s = self.bytes.get(self.at..end).ok_or(EtfError::Badarg)?;
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, EtfError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<usize, EtfError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]) as usize)
    }
    fn u32(&mut self) -> Result<usize, EtfError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
    /// Rejects a count that the rest of the input cannot possibly hold,
    /// before anything is allocated for it.
    fn plausible(&self, count: usize, min_bytes_each: usize) -> Result<usize, EtfError> {
        if count.saturating_mul(min_bytes_each) > self.bytes.len() - self.at {
            Err(EtfError::Badarg)
        } else {
            Ok(count)
        }
    }
}

/// A container waiting for its elements.
enum Pending {
    Tuple {
        tuple: Term,
        next: usize,
        arity: usize,
    },
    /// `count` cons cells allocated in a row from `first`; element
    /// `count` is the tail.
    List {
        first: usize,
        next: usize,
        count: usize,
    },
    Map {
        parts: Vec<Term>,
        count: usize,
    },
    /// The captured terms of fun `global` (its table index).
    Fun {
        global: u32,
        parts: Vec<Term>,
        count: usize,
    },
}

/// A whole binary as one external term (bytes after the term are an
/// error), in a buffer of its own.
pub fn binary_to_term(bytes: &[u8]) -> Result<MessageBuffer, EtfError> {
    match decode_prefix(bytes)? {
        (buffer, used) if used == bytes.len() => Ok(buffer),
        _ => Err(EtfError::Badarg),
    }
}

/// A compressed term (`131, 80, Size:32, ZlibStream`): the stream must
/// inflate to exactly `Size` bytes holding exactly one term. The bytes
/// used are those up to the stream's end.
fn decode_compressed(bytes: &[u8]) -> Result<(MessageBuffer, usize), EtfError> {
    let size = bytes
        .get(2..6)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or(EtfError::Badarg)?;
    let (term, used) = super::zlib::decompress_exact(&bytes[6..], size).ok_or(EtfError::Badarg)?;
    let mut plain = Vec::with_capacity(1 + term.len());
    plain.push(VERSION);
    plain.extend_from_slice(&term);
    if plain.get(1) == Some(&COMPRESSED) {
        return Err(EtfError::Badarg);
    }
    let buffer = binary_to_term(&plain)?;
    Ok((buffer, 6 + used))
}

/// `binary_to_term(B)` as OTP's BIF does it: the term at the start of
/// `bytes`, in a buffer of its own, and how many bytes it took (the BIF
/// ignores any after it; `[used]` returns the count).
pub fn decode_prefix(bytes: &[u8]) -> Result<(MessageBuffer, usize), EtfError> {
    let mut input = Input { bytes, at: 0 };
    if input.u8()? != VERSION {
        return Err(EtfError::Badarg);
    }
    if bytes.get(1) == Some(&COMPRESSED) {
        return decode_compressed(bytes);
    }
    // A first pass checks the structure and counts the words (an upper
    // bound), so the heap is allocated once and decoding cannot overflow it.
    let words = heap_words(bytes)?;
    let mut heap = Heap::try_with_words(words.max(1))?;
    let mut stack: Vec<Pending> = Vec::new();
    loop {
        let mut value = decode_one(&mut input, &mut heap, &mut stack)?;
        // Deliver the value to the innermost container, completing as
        // many containers as it finishes.
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok((MessageBuffer::from_heap(heap, value), input.at));
            };
            match top {
                Pending::Tuple { tuple, next, arity } => {
                    heap.tuple_elements_mut(*tuple)[*next] = value;
                    *next += 1;
                    if *next < *arity {
                        break;
                    }
                    value = *tuple;
                }
                Pending::List { first, next, count } => {
                    let cell = *first + 2 * (*next).min(*count - 1);
                    let slot = if *next < *count { cell } else { cell + 1 };
                    heap.set_word(slot, value);
                    *next += 1;
                    if *next <= *count {
                        break;
                    }
                    value = Term::heap_pointer(crate::term::TAG_CONS, *first);
                }
                Pending::Map { parts, count } => {
                    parts.push(value);
                    if parts.len() < 2 * *count {
                        break;
                    }
                    let pairs: Vec<(Term, Term)> =
                        parts.chunks(2).map(|kv| (kv[0], kv[1])).collect();
                    value = heap.map(&pairs);
                }
                Pending::Fun {
                    global,
                    parts,
                    count,
                } => {
                    parts.push(value);
                    if parts.len() < *count {
                        break;
                    }
                    value = heap.fun(*global, parts);
                }
            }
            stack.pop();
        }
    }
}

/// The heap words decoding `bytes` (after the version byte) needs, at
/// most; `Badarg` if the input does not start with a complete term. Items are counted
/// down from one: each item read adds the items it contains.
fn heap_words(bytes: &[u8]) -> Result<usize, EtfError> {
    let mut input = Input { bytes, at: 1 };
    let mut pending: usize = 1;
    let mut words: usize = 0;
    while pending > 0 {
        pending -= 1;
        let tag = input.u8()?;
        let (own, children) = match tag {
            SMALL_INTEGER_EXT => (0, input.take(1).map(|_| 0)?),
            INTEGER_EXT => (0, input.take(4).map(|_| 0)?),
            SMALL_BIG_EXT | LARGE_BIG_EXT => {
                let n = if tag == SMALL_BIG_EXT {
                    input.u8()? as usize
                } else {
                    input.u32()?
                };
                input.take(1 + n)?;
                (1 + n.div_ceil(8), 0)
            }
            NEW_FLOAT_EXT => (input.take(8).map(|_| heap::FLOAT_WORDS)?, 0),
            FLOAT_EXT => (input.take(FLOAT_TEXT_LEN).map(|_| heap::FLOAT_WORDS)?, 0),
            ATOM_EXT | ATOM_UTF8_EXT => {
                let n = input.u16()?;
                (input.take(n).map(|_| 0)?, 0)
            }
            SMALL_ATOM_EXT | SMALL_ATOM_UTF8_EXT => {
                let n = input.u8()? as usize;
                (input.take(n).map(|_| 0)?, 0)
            }
            NIL_EXT => (0, 0),
            STRING_EXT => {
                let n = input.u16()?;
                (input.take(n).map(|_| 2 * n)?, 0)
            }
            BINARY_EXT => {
                let n = input.u32()?;
                (input.take(n).map(|_| heap::words_for_binary(n))?, 0)
            }
            BIT_BINARY_EXT => {
                let n = input.u32()?;
                let bits = bit_binary_bits(n, input.u8()?)?;
                (input.take(n).map(|_| heap::words_for_bitstring(bits))?, 0)
            }
            SMALL_TUPLE_EXT => {
                let n = input.u8()? as usize;
                (n + 1, n)
            }
            LARGE_TUPLE_EXT => {
                let n = input.u32()?;
                let n = input.plausible(n, 1)?;
                (n + 1, n)
            }
            LIST_EXT => {
                let n = input.u32()?;
                let n = input.plausible(n, 1)?;
                (2 * n, n + 1)
            }
            MAP_EXT => {
                let n = input.u32()?;
                let n = input.plausible(n, 2)?;
                (heap::words_for_map(n), 2 * n)
            }
            EXPORT_EXT => (heap::EXTERNAL_FUN_WORDS, 3),
            NEW_FUN_EXT => {
                let (_, free) = fun_header(&mut input)?;
                (2 + free, free)
            }
            // A pid of another node is boxed (one of this node is not).
            NEW_PID_EXT => {
                decode_any_atom(&mut input)?;
                (input.take(12).map(|_| heap::EXT_PID_WORDS)?, 0)
            }
            PID_EXT => {
                decode_any_atom(&mut input)?;
                (input.take(9).map(|_| heap::EXT_PID_WORDS)?, 0)
            }
            // A reference of another node is boxed bigger than a local one.
            NEWER_REFERENCE_EXT => {
                let n = input.u16()?;
                if !(1..=5).contains(&n) {
                    return Err(EtfError::Badarg);
                }
                decode_any_atom(&mut input)?;
                (input.take(4 + 4 * n).map(|_| heap::EXT_REF_WORDS)?, 0)
            }
            _ => return Err(EtfError::Badarg),
        };
        words = words.checked_add(own).ok_or(EtfError::SystemLimit)?;
        pending = pending.checked_add(children).ok_or(EtfError::Badarg)?;
    }
    Ok(words)
}

/// Decodes one item: a complete value, or (for a non-empty container)
/// pushes it on `stack` and decodes its first element next.
fn decode_one(
    input: &mut Input,
    heap: &mut Heap,
    stack: &mut Vec<Pending>,
) -> Result<Term, EtfError> {
    loop {
        let tag = input.u8()?;
        let value = match tag {
            SMALL_INTEGER_EXT => Term::small(input.u8()? as i64),
            INTEGER_EXT => {
                let b = input.take(4)?;
                Term::small(i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64)
            }
            SMALL_BIG_EXT | LARGE_BIG_EXT => {
                let n = if tag == SMALL_BIG_EXT {
                    input.u8()? as usize
                } else {
                    input.u32()?
                };
                let sign = input.u8()?;
                let digits = input.take(n)?;
                let i =
                    BigInt::from_bytes_le(if sign == 0 { Sign::Plus } else { Sign::Minus }, digits);
                heap.bigint(&i)
            }
            FLOAT_EXT => {
                let field = input.take(FLOAT_TEXT_LEN)?;
                let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
                let f: f64 = std::str::from_utf8(&field[..end])
                    .ok()
                    .and_then(|text| text.trim().parse().ok())
                    .ok_or(EtfError::Badarg)?;
                if !f.is_finite() {
                    return Err(EtfError::Badarg);
                }
                heap.float(f)
            }
            NEW_FLOAT_EXT => {
                let b = input.take(8)?;
                let f = f64::from_be_bytes(b.try_into().map_err(|_| EtfError::Badarg)?);
                if !f.is_finite() {
                    return Err(EtfError::Badarg);
                }
                heap.float(f)
            }
            ATOM_EXT | SMALL_ATOM_EXT | ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT => {
                Term::atom(decode_atom(input, tag)?)
            }
            NIL_EXT => Term::NIL,
            STRING_EXT => {
                let n = input.u16()?;
                let chars: Vec<Term> = input
                    .take(n)?
                    .iter()
                    .map(|&b| Term::small(b as i64))
                    .collect();
                heap.list(&chars)
            }
            BINARY_EXT => {
                let n = input.u32()?;
                let bytes = input.take(n)?;
                heap.binary(bytes)
            }
            BIT_BINARY_EXT => {
                let n = input.u32()?;
                let bits = bit_binary_bits(n, input.u8()?)?;
                let mut w = super::bits::BitWriter::with_capacity(n);
                w.push_bits(super::bits::Bits::of(input.take(n)?, 0, bits));
                heap.bitstring_from_vec(w.bytes, bits)
            }
            SMALL_TUPLE_EXT | LARGE_TUPLE_EXT => {
                let arity = if tag == SMALL_TUPLE_EXT {
                    input.u8()? as usize
                } else {
                    input.u32()?
                };
                let arity = input.plausible(arity, 1)?;
                let tuple = heap.alloc_tuple(arity);
                if arity == 0 {
                    tuple
                } else {
                    stack.push(Pending::Tuple {
                        tuple,
                        next: 0,
                        arity,
                    });
                    continue;
                }
            }
            LIST_EXT => {
                let n = input.u32()?;
                let count = input.plausible(n, 1)?;
                if count == 0 {
                    // Only the tail follows: `[] ++ Tail` is the tail.
                    continue;
                }
                let first = heap.used();
                for i in 0..count {
                    let next = if i + 1 < count {
                        Term::heap_pointer(crate::term::TAG_CONS, first + 2 * (i + 1))
                    } else {
                        Term::NIL
                    };
                    heap.cons(Term::NIL, next);
                }
                stack.push(Pending::List {
                    first,
                    next: 0,
                    count,
                });
                continue;
            }
            MAP_EXT => {
                let n = input.u32()?;
                let count = input.plausible(n, 2)?;
                if count == 0 {
                    heap.map(&[])
                } else {
                    stack.push(Pending::Map {
                        parts: Vec::with_capacity(2 * count),
                        count,
                    });
                    continue;
                }
            }
            NEW_FUN_EXT => {
                let (global, free) = fun_header(input)?;
                if free == 0 {
                    heap.fun(global, &[])
                } else {
                    stack.push(Pending::Fun {
                        global,
                        parts: Vec::with_capacity(free),
                        count: free,
                    });
                    continue;
                }
            }
            EXPORT_EXT => {
                let module = decode_any_atom(input)?;
                let function = decode_any_atom(input)?;
                if input.u8()? != SMALL_INTEGER_EXT {
                    return Err(EtfError::Badarg);
                }
                let arity = input.u8()?;
                heap.external_fun(module, function, arity as u32)
            }
            NEW_PID_EXT | PID_EXT => {
                let name = decode_any_atom(input)?;
                let id = input.u32()? as u64;
                let serial = input.u32()? as u64;
                let creation = if tag == PID_EXT {
                    input.u8()? as u32
                } else {
                    input.u32()? as u32
                };
                let id = id | (serial << 32);
                if is_this_node(name, creation) {
                    Term::pid(id)
                } else {
                    heap.external_pid(node::intern(name, creation), id)
                }
            }
            NEWER_REFERENCE_EXT => {
                let n = input.u16()?;
                let name = decode_any_atom(input)?;
                let creation = input.u32()? as u32;
                let mut words = Vec::new();
                for _ in 0..n {
                    words.push(input.u32()? as u32);
                }
                if is_this_node(name, creation) {
                    let id = words.first().copied().unwrap_or(0) as u64
                        | (words.get(1).copied().unwrap_or(0) as u64) << 32;
                    heap.reference(id)
                } else {
                    heap.external_ref(node::intern(name, creation), &words)
                }
            }
            _ => return Err(EtfError::Badarg),
        };
        return Ok(value);
    }
}

/// Whether a pid or reference of `(name, creation)` is this node's: its
/// name now, or `nonode@nohost` (what it was called before it was alive).
fn is_this_node(name: Atom, creation: u32) -> bool {
    let this = node::this_node();
    name == Atom::NONODE || (name == this.name && (creation == this.creation || creation == 0))
}

fn decode_any_atom(input: &mut Input) -> Result<Atom, EtfError> {
    let tag = input.u8()?;
    decode_atom(input, tag)
}

fn decode_atom(input: &mut Input, tag: u8) -> Result<Atom, EtfError> {
    let name: String = match tag {
        ATOM_EXT | SMALL_ATOM_EXT => {
            let n = if tag == ATOM_EXT {
                input.u16()?
            } else {
                input.u8()? as usize
            };
            input.take(n)?.iter().map(|&b| b as char).collect()
        }
        ATOM_UTF8_EXT | SMALL_ATOM_UTF8_EXT => {
            let n = if tag == ATOM_UTF8_EXT {
                input.u16()?
            } else {
                input.u8()? as usize
            };
            std::str::from_utf8(input.take(n)?)
                .map_err(|_| EtfError::Badarg)?
                .to_string()
        }
        _ => return Err(EtfError::Badarg),
    };
    if name.chars().count() > 255 {
        return Err(EtfError::SystemLimit);
    }
    Atom::try_intern(&name).ok_or(EtfError::SystemLimit)
}

/// The length in bits of a BIT_BINARY_EXT of `n` bytes whose last byte
/// holds `last` bits (1 to 8).
fn bit_binary_bits(n: usize, last: u8) -> Result<usize, EtfError> {
    if n == 0 || !(1..=8).contains(&last) {
        return Err(EtfError::Badarg);
    }
    Ok((n - 1) * 8 + last as usize)
}
