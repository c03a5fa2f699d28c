//! The `erlang` module: arithmetic, comparisons, type tests, conversions,
//! exceptions, the process dictionary.

use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::process::Class;
use crate::term::arith::{self, ArithError, Number};
use crate::term::view::View;
use crate::term::{Atom, Term};
use crate::term::{iolist, order};
use num_bigint::BigInt;
use num_traits::Num;
use std::cmp::Ordering;

// ---------------------------------------------------------------------
// Helpers shared by the BIF modules.

fn arith_error(e: ArithError) -> BifError {
    match e {
        ArithError::Badarith => BifError::Badarith,
        ArithError::SystemLimit => BifError::SystemLimit,
        ArithError::Badarg => BifError::Badarg,
    }
}

/// Places a computed number on the heap (ensuring space first).
pub fn put_number(
    ctx: &mut Context,
    n: Result<Number, ArithError>,
    args: &mut [Term],
) -> BifResult {
    let n = n.map_err(arith_error)?;
    if let Some(t) = n.as_immediate() {
        return Ok(t);
    }
    ctx.ensure(n.words(), args)?;
    Ok(ctx.heap().number(&n))
}

/// The elements of a proper list; `None` for anything else.
pub fn list_elements(heap: &Heap, mut t: Term) -> Option<Vec<Term>> {
    let mut out = Vec::new();
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        out.push(h);
        t = tail;
    }
    if t.is_nil() { Some(out) } else { None }
}

/// Length of a proper list.
pub fn list_length(heap: &Heap, mut t: Term) -> Option<usize> {
    let mut n = 0;
    while t.is_cons() {
        t = heap.cons_parts(t).1;
        n += 1;
    }
    if t.is_nil() { Some(n) } else { None }
}

/// A list of character codes as a String.
pub fn char_list(heap: &Heap, t: Term) -> Option<String> {
    let mut s = String::new();
    let mut t = t;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        s.push(char::from_u32(u32::try_from(h.as_small()?).ok()?)?);
        t = tail;
    }
    if t.is_nil() { Some(s) } else { None }
}

/// The text of a string-like term: a char list, a binary or an atom.
pub fn text_of(heap: &Heap, t: Term) -> Option<String> {
    if let Some(a) = t.as_atom() {
        return Some(a.name().to_string());
    }
    if let Some(bytes) = heap.binary_bytes(t) {
        return Some(String::from_utf8_lossy(bytes).into_owned());
    }
    let mut bytes = Vec::new();
    chardata_bytes(heap, t, &mut bytes)?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Like `term::iolist::iolist_bytes`, but characters above 255 are written as UTF-8
/// (Erlang's chardata, for output).
pub fn chardata_bytes(heap: &Heap, t: Term, out: &mut Vec<u8>) -> Option<()> {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        if t.is_nil() {
            continue;
        }
        if t.is_cons() {
            let (h, tail) = heap.cons_parts(t);
            stack.push(tail);
            if let Some(c) = h.as_small() {
                let c = char::from_u32(u32::try_from(c).ok()?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                stack.push(h);
            }
            continue;
        }
        out.extend_from_slice(heap.binary_bytes(t)?);
    }
    Some(())
}

/// Builds a string (list of chars) on the heap.
pub fn make_string(ctx: &mut Context, s: &str, args: &mut [Term]) -> BifResult {
    let n = s.chars().count();
    ctx.ensure(2 * n, args)?;
    Ok(ctx.heap().string(s))
}

/// Whether a binary of `len` bytes may be made: one too big for a heap
/// lives off-heap and draws on the memory budget (`--max-memory`), so
/// past it the process that asked gets `system_limit`, as on BEAM.
pub fn room_for_binary(len: usize) -> Result<(), BifError> {
    if len > crate::term::object::HEAP_BINARY_MAX && !heap::budget::has_room(len) {
        return Err(BifError::SystemLimit);
    }
    Ok(())
}

/// An empty buffer with room for `len` bytes of a binary to be: checked
/// against the budget first, and an allocation the OS refuses is
/// `system_limit` too, never an abort of the VM.
pub fn binary_buffer(len: usize) -> Result<Vec<u8>, BifError> {
    room_for_binary(len)?;
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(len)
        .map_err(|_| BifError::SystemLimit)?;
    Ok(buffer)
}

/// Builds a binary on the heap.
pub fn make_binary(ctx: &mut Context, bytes: Vec<u8>, args: &mut [Term]) -> BifResult {
    room_for_binary(bytes.len())?;
    ctx.ensure(heap::words_for_binary(bytes.len()), args)?;
    Ok(ctx.heap().binary_from_vec(bytes))
}

/// `{Tag, Value}` as an error reason.
pub fn error_tuple(ctx: &mut Context, tag: Atom, value: Term) -> BifError {
    let mut keep = [value];
    if let Err(e) = ctx.ensure(3, &mut keep) {
        return e;
    }
    let t = ctx.heap().tuple(&[Term::atom(tag), keep[0]]);
    BifError::Raise(Class::Error, t)
}

pub(crate) fn small(t: Term) -> Result<i64, BifError> {
    t.as_small().ok_or(BifError::Badarg)
}

fn integer(heap: &Heap, t: Term) -> Result<BigInt, BifError> {
    match heap.view(t) {
        View::Small(i) => Ok(BigInt::from(i)),
        View::Big(b) => Ok(b.to_bigint()),
        _ => Err(BifError::Badarg),
    }
}

pub(crate) fn make_integer(ctx: &mut Context, i: BigInt, args: &mut [Term]) -> BifResult {
    ctx.ensure(heap::words_for_bigint(&i), args)?;
    Ok(ctx.heap().bigint(&i))
}

// ---------------------------------------------------------------------
// Operators as functions.

macro_rules! arith2 {
    ($($name:ident => $op:path),*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let r = $op(&ctx.process.heap, args[0], args[1]);
            put_number(ctx, r, args)
        }
    )*};
}
arith2!(plus_2 => arith::add, minus_2 => arith::sub, times_2 => arith::mul,
    divide_2 => arith::divide, div_2 => arith::int_div, rem_2 => arith::rem,
    band_2 => arith::band, bor_2 => arith::bor, bxor_2 => arith::bxor,
    bsl_2 => arith::bsl, bsr_2 => arith::bsr);

macro_rules! arith1 {
    ($($name:ident => $op:path),*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let r = $op(&ctx.process.heap, args[0]);
            put_number(ctx, r, args)
        }
    )*};
}
arith1!(bnot_1 => arith::bnot, neg_1 => arith::neg);

pub fn plus_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let r = arith::add(&ctx.process.heap, Term::small(0), args[0]);
    match r {
        Ok(_) => Ok(args[0]),
        Err(e) => Err(arith_error(e)),
    }
}

macro_rules! arith1_badarg {
    ($($name:ident => $op:path),*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let r = $op(&ctx.process.heap, args[0]).map_err(|_| ArithError::Badarith);
            put_number(ctx, r, args).map_err(|e| if e == BifError::Badarith { BifError::Badarg } else { e })
        }
    )*};
}
arith1_badarg!(abs_1 => arith::abs, float_1 => arith::float, trunc_1 => arith::trunc,
    round_1 => arith::round, floor_1 => arith::floor, ceil_1 => arith::ceil);

macro_rules! compare2 {
    ($($name:ident => $test:expr),*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let f: fn(&Heap, Term, Term) -> bool = $test;
            Ok(Term::boolean(f(&ctx.process.heap, args[0], args[1])))
        }
    )*};
}
compare2!(
    eq_2 => |h, a, b| order::eq(h, a, b),
    ne_2 => |h, a, b| !order::eq(h, a, b),
    exact_eq_2 => |h, a, b| order::exact_eq(h, a, b),
    exact_ne_2 => |h, a, b| !order::exact_eq(h, a, b),
    lt_2 => |h, a, b| order::compare(h, a, b) == Ordering::Less,
    le_2 => |h, a, b| order::compare(h, a, b) != Ordering::Greater,
    gt_2 => |h, a, b| order::compare(h, a, b) == Ordering::Greater,
    ge_2 => |h, a, b| order::compare(h, a, b) != Ordering::Less
);

pub fn max_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let less = order::compare(&ctx.process.heap, args[0], args[1]) == Ordering::Less;
    Ok(if less { args[1] } else { args[0] })
}

pub fn min_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let greater = order::compare(&ctx.process.heap, args[0], args[1]) == Ordering::Greater;
    Ok(if greater { args[1] } else { args[0] })
}

fn boolean(t: Term) -> Result<bool, BifError> {
    t.as_bool().ok_or(BifError::Badarg)
}

pub fn not_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(Term::boolean(!boolean(args[0])?))
}
pub fn and_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, b) = (boolean(args[0])?, boolean(args[1])?);
    Ok(Term::boolean(a && b))
}
pub fn or_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, b) = (boolean(args[0])?, boolean(args[1])?);
    Ok(Term::boolean(a || b))
}
pub fn xor_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, b) = (boolean(args[0])?, boolean(args[1])?);
    Ok(Term::boolean(a ^ b))
}

/// `A ++ B`: copies A in front of B.
pub fn append_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(n) = list_length(&ctx.process.heap, args[0]) else {
        return Err(BifError::Badarg);
    };
    if n == 0 {
        return Ok(args[1]);
    }
    ctx.ensure(2 * n, args)?;
    Ok(ctx.process.heap.copy_list_front(args[0], n, args[1]))
}

/// `A -- B`: A without the first occurrence of each element of B.
pub fn subtract_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let (Some(n), Some(_)) = (list_length(heap, args[0]), list_length(heap, args[1])) else {
        return Err(BifError::Badarg);
    };
    // Room for all of A (what is kept is at most that), so the result is
    // computed once, after any collection.
    ctx.ensure(2 * n, args)?;
    let heap = &ctx.process.heap;
    let a = list_elements(heap, args[0]).unwrap_or_default();
    let b = list_elements(heap, args[1]).unwrap_or_default();
    let kept = subtracted(heap, &a, &b);
    Ok(ctx.process.heap.list(&kept))
}

/// The elements of `a` left when each element of `b` takes away its first
/// occurrence (`=:=`). Removing each element of `b` from `a` in turn costs
/// |a|·|b|; counting `b`'s elements by hash and walking `a` once costs
/// |a| + |b| (the first occurrences are the ones a count still claims).
fn subtracted(heap: &Heap, a: &[Term], b: &[Term]) -> Vec<Term> {
    if b.len() <= 8 {
        let mut a = a.to_vec();
        for &x in b {
            if let Some(i) = a.iter().position(|&y| order::exact_eq(heap, x, y)) {
                a.remove(i);
            }
        }
        return a;
    }
    use crate::runtime::ets::hash::hash;
    let mut counts: std::collections::HashMap<u64, Vec<(Term, usize)>> =
        std::collections::HashMap::with_capacity(b.len());
    for &x in b {
        let bucket = counts.entry(hash(heap, x)).or_default();
        match bucket
            .iter_mut()
            .find(|(t, _)| order::exact_eq(heap, *t, x))
        {
            Some((_, n)) => *n += 1,
            None => bucket.push((x, 1)),
        }
    }
    let mut kept = Vec::with_capacity(a.len());
    for &y in a {
        let claimed = counts.get_mut(&hash(heap, y)).and_then(|bucket| {
            bucket
                .iter_mut()
                .find(|(t, n)| *n > 0 && order::exact_eq(heap, *t, y))
        });
        match claimed {
            Some((_, n)) => *n -= 1,
            None => kept.push(y),
        }
    }
    kept
}

/// `Pid ! Msg`: the only process so far is this one.
pub fn send_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (to, msg) = (args[0], args[1]);
    if to == self_pid() {
        ctx.process.mailbox.push(msg);
        return Ok(msg);
    }
    if to.is_pid() {
        return Ok(msg);
    }
    Err(BifError::Badarg)
}

pub fn self_pid() -> Term {
    Term::pid(0)
}

// ---------------------------------------------------------------------
// Type tests.

macro_rules! type_test {
    ($($name:ident => $test:expr),*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let f: fn(&Heap, Term) -> bool = $test;
            Ok(Term::boolean(f(&ctx.process.heap, args[0])))
        }
    )*};
}
type_test!(
    is_atom_1 => |_, t| t.is_atom(),
    is_integer_1 => |h, t| h.is_integer(t),
    is_float_1 => |h, t| h.is_float(t),
    is_number_1 => |h, t| h.is_number(t),
    is_boolean_1 => |_, t| t.as_bool().is_some(),
    is_list_1 => |_, t| t.is_cons() || t.is_nil(),
    is_tuple_1 => |h, t| h.as_tuple(t).is_some(),
    is_binary_1 => |h, t| h.is_binary(t),
    is_map_1 => |h, t| h.is_map(t),
    is_function_1 => |h, t| h.is_function(t),
    is_pid_1 => |h, t| h.is_pid(t),
    is_reference_1 => |h, t| h.is_reference(t) && super::port::port_of(h, t).is_none()
);

/// The arity of a fun term, if it is one.
pub fn fun_arity(heap: &Heap, t: Term) -> Option<u32> {
    if let Some((index, _)) = heap.fun_parts(t) {
        return Some(crate::runtime::fun_entry(index)?.arity);
    }
    match heap.view(t) {
        View::Fun { index, .. } => {
            let entry = crate::runtime::fun_entry(index)?;
            Some(entry.module.funs[entry.fun as usize].arity)
        }
        View::ExternalFun { arity, .. } => Some(arity),
        _ => None,
    }
}

pub fn is_function_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let arity = small(args[1])?;
    if arity < 0 {
        return Err(BifError::Badarg);
    }
    Ok(Term::boolean(
        fun_arity(&ctx.process.heap, args[0]) == Some(arity as u32),
    ))
}

// ---------------------------------------------------------------------
// Tuples and lists.

pub fn element_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let tuple = ctx.process.heap.as_tuple(args[1]).ok_or(BifError::Badarg)?;
    if i < 1 || i as usize > tuple.len() {
        return Err(BifError::Badarg);
    }
    Ok(tuple[i as usize - 1])
}

pub fn setelement_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let n = ctx
        .process
        .heap
        .as_tuple(args[1])
        .ok_or(BifError::Badarg)?
        .len();
    if i < 1 || i as usize > n {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n + 1, args)?;
    Ok(ctx
        .process
        .heap
        .tuple_with(args[1], i as usize - 1, args[2]))
}

pub fn tuple_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let t = ctx.process.heap.as_tuple(args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small(t.len() as i64))
}

pub fn size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    if let Some(t) = heap.as_tuple(args[0]) {
        return Ok(Term::small(t.len() as i64));
    }
    // Of a bitstring, the whole bytes only (byte_size/1 rounds up).
    let bits = heap.bit_size(args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small((bits / 8) as i64))
}

pub fn length_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = list_length(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small(n as i64))
}

pub fn hd_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[0].is_cons() {
        return Err(BifError::Badarg);
    }
    Ok(ctx.process.heap.cons_parts(args[0]).0)
}

pub fn tl_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[0].is_cons() {
        return Err(BifError::Badarg);
    }
    Ok(ctx.process.heap.cons_parts(args[0]).1)
}

pub fn tuple_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx
        .process
        .heap
        .as_tuple(args[0])
        .ok_or(BifError::Badarg)?
        .len();
    ctx.ensure(2 * n, args)?;
    let heap = &mut ctx.process.heap;
    let elements = heap.tuple_elements(args[0]).to_vec();
    Ok(heap.list(&elements))
}

pub fn list_to_tuple_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = list_length(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    ctx.ensure(n + 1, args)?;
    let heap = &mut ctx.process.heap;
    let elements = list_elements(heap, args[0]).unwrap_or_default();
    Ok(heap.tuple(&elements))
}

// ---------------------------------------------------------------------
// Conversions.

pub fn atom_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let a = args[0].as_atom().ok_or(BifError::Badarg)?;
    make_string(ctx, a.name(), args)
}

pub fn list_to_atom_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    if s.chars().count() > 255 {
        return Err(BifError::SystemLimit);
    }
    Atom::try_intern(&s)
        .map(Term::atom)
        .ok_or(BifError::SystemLimit)
}

pub fn list_to_existing_atom_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    Atom::existing(&s).map(Term::atom).ok_or(BifError::Badarg)
}

pub fn atom_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let a = args[0].as_atom().ok_or(BifError::Badarg)?;
    make_binary(ctx, a.name().as_bytes().to_vec(), args)
}

pub fn atom_to_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match args[1].as_atom().map(Atom::name) {
        Some("utf8" | "unicode") => atom_to_binary_1(ctx, args),
        // One byte a character, so 'é' is <<233>>.
        Some("latin1") => {
            let a = args[0].as_atom().ok_or(BifError::Badarg)?;
            let bytes = a
                .name()
                .chars()
                .map(|c| u8::try_from(u32::from(c)).map_err(|_| BifError::Badarg))
                .collect::<Result<Vec<u8>, BifError>>()?;
            make_binary(ctx, bytes, args)
        }
        _ => Err(BifError::Badarg),
    }
}

/// The name a binary spells in `encoding` (`latin1`: a character a
/// byte; `utf8`/`unicode`: UTF-8), or badarg.
pub(super) fn atom_text(heap: &Heap, bin: Term, encoding: Term) -> Result<String, BifError> {
    let b = heap.binary_bytes(bin).ok_or(BifError::Badarg)?;
    match encoding.as_atom().map(Atom::name) {
        Some("latin1") => Ok(b.iter().map(|&c| char::from(c)).collect()),
        Some("utf8" | "unicode") => std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| BifError::Badarg),
        _ => Err(BifError::Badarg),
    }
}

pub fn binary_to_atom_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let b = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    let s = std::str::from_utf8(b).map_err(|_| BifError::Badarg)?;
    Atom::try_intern(s)
        .map(Term::atom)
        .ok_or(BifError::SystemLimit)
}

pub fn binary_to_atom_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = atom_text(&ctx.process.heap, args[0], args[1])?;
    if s.chars().count() > 255 {
        return Err(BifError::SystemLimit);
    }
    Atom::try_intern(&s)
        .map(Term::atom)
        .ok_or(BifError::SystemLimit)
}

fn radix_string(i: &BigInt, base: u32) -> String {
    i.to_str_radix(base).to_uppercase()
}

pub fn integer_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = integer(&ctx.process.heap, args[0])?;
    make_string(ctx, &i.to_string(), args)
}

pub fn integer_to_list_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = integer(&ctx.process.heap, args[0])?;
    let base = radix(args[1])?;
    make_string(ctx, &radix_string(&i, base), args)
}

pub fn integer_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = integer(&ctx.process.heap, args[0])?;
    make_binary(ctx, i.to_string().into_bytes(), args)
}

pub fn integer_to_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = integer(&ctx.process.heap, args[0])?;
    let base = radix(args[1])?;
    make_binary(ctx, radix_string(&i, base).into_bytes(), args)
}

pub fn binary_to_integer_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = binary_text(&ctx.process.heap, args[0])?;
    let base = radix(args[1])?;
    let i = parse_integer(&s, base).ok_or(BifError::Badarg)?;
    make_integer(ctx, i, args)
}

/// The base argument of the integer conversions: 2 to 36.
fn radix(t: Term) -> Result<u32, BifError> {
    let base = small(t)?;
    if (2..=36).contains(&base) {
        Ok(base as u32)
    } else {
        Err(BifError::Badarg)
    }
}

/// The text of a binary holding UTF-8 (the digits of `binary_to_integer`).
fn binary_text(heap: &crate::heap::Heap, t: Term) -> Result<String, BifError> {
    let bytes = heap.binary_bytes(t).ok_or(BifError::Badarg)?;
    let text = std::str::from_utf8(bytes).map_err(|_| BifError::Badarg)?;
    Ok(text.to_string())
}

fn parse_integer(s: &str, base: u32) -> Option<BigInt> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(base)) {
        return None;
    }
    let v = BigInt::from_str_radix(digits, base).ok()?;
    Some(if neg { -v } else { v })
}

pub fn list_to_integer_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let i = parse_integer(&s, 10).ok_or(BifError::Badarg)?;
    make_integer(ctx, i, args)
}

pub fn list_to_integer_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let base = radix(args[1])?;
    let i = parse_integer(&s, base).ok_or(BifError::Badarg)?;
    make_integer(ctx, i, args)
}

pub fn binary_to_integer_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = binary_text(&ctx.process.heap, args[0])?;
    let i = parse_integer(&s, 10).ok_or(BifError::Badarg)?;
    make_integer(ctx, i, args)
}

fn float_arg(heap: &Heap, t: Term) -> Result<f64, BifError> {
    heap.float_value(t).ok_or(BifError::Badarg)
}

/// Erlang's `float_to_list/1`: `%.20e` with a two-digit exponent.
fn scientific(f: f64, digits: usize) -> String {
    let s = format!("{f:.digits$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => {
            let (sign, exp) = match exp.strip_prefix('-') {
                Some(e) => ('-', e),
                None => ('+', exp),
            };
            format!("{mantissa}e{sign}{exp:0>2}")
        }
        None => s,
    }
}

pub fn float_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let f = float_arg(&ctx.process.heap, args[0])?;
    make_string(ctx, &scientific(f, 20), args)
}

pub fn float_to_list_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let text = float_text(&ctx.process.heap, args[0], args[1])?;
    make_string(ctx, &text, args)
}

pub fn float_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let f = float_arg(&ctx.process.heap, args[0])?;
    make_binary(ctx, scientific(f, 20).into_bytes(), args)
}

pub fn float_to_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let text = float_text(&ctx.process.heap, args[0], args[1])?;
    make_binary(ctx, text.into_bytes(), args)
}

/// `{decimals, N}`: as OTP, which rounds the fraction scaled to an
/// integer, halves away from zero (`2.5` -> `"3"`, `0.125` -> `"0.13"`),
/// except for huge numbers or precisions, where it uses C's exact `%.*f`.
fn fixed_decimals(f: f64, decimals: usize) -> String {
    let af = f.abs();
    if af > (1u64 << 53) as f64 || decimals >= 19 {
        return format!("{f:.decimals$}");
    }
    // The sign bit, as C's printf: -0.0 and values that round to zero
    // keep their minus ("-0.00").
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if decimals == 0 {
        return format!("{sign}{}", af.round() as u64);
    }
    let scale = 10f64.powi(decimals as i32);
    let mut int_part = af.floor() as u64;
    let mut frac = ((af - af.floor()) * scale).round();
    if frac >= scale {
        int_part += 1;
        frac = 0.0;
    }
    format!("{sign}{int_part}.{:0decimals$}", frac as u64)
}

/// The text `float_to_list/2` and `float_to_binary/2` make of `float`
/// with `options`.
fn float_text(heap: &Heap, float: Term, options: Term) -> Result<String, BifError> {
    let f = float_arg(heap, float)?;
    let options = list_elements(heap, options).ok_or(BifError::Badarg)?;
    let mut text = scientific(f, 20);
    let mut compact = false;
    for o in options {
        if o == Term::atom(Atom::intern("compact")) {
            compact = true;
            continue;
        }
        if o == Term::atom(Atom::intern("short")) {
            text = crate::term::print::format_float(f);
            continue;
        }
        let t = heap.as_tuple(o).ok_or(BifError::Badarg)?;
        if t.len() != 2 {
            return Err(BifError::Badarg);
        }
        let n = small(t[1])?;
        match t[0].as_atom().map(|a| a.name()) {
            // OTP writes into a 256-byte buffer, its NUL included.
            Some("decimals") if (0..=253).contains(&n) => {
                text = fixed_decimals(f, n as usize);
                if text.len() >= 256 {
                    return Err(BifError::Badarg);
                }
            }
            Some("scientific") if (0..=249).contains(&n) => text = scientific(f, n as usize),
            _ => return Err(BifError::Badarg),
        }
    }
    if compact && text.contains('.') && !text.contains('e') {
        while text.ends_with('0') && !text.ends_with(".0") {
            text.pop();
        }
    }
    Ok(text)
}

pub fn list_to_float_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    // Erlang wants digits, a dot and digits, then an optional exponent.
    let body = s.strip_prefix(['-', '+']).unwrap_or(&s);
    let mantissa = body.split(['e', 'E']).next().unwrap_or("");
    let ok = mantissa.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.chars().all(|c| c.is_ascii_digit())
            && b.chars().all(|c| c.is_ascii_digit())
    });
    let f: f64 = if ok {
        s.parse().map_err(|_| BifError::Badarg)?
    } else {
        return Err(BifError::Badarg);
    };
    if !f.is_finite() {
        return Err(BifError::Badarg);
    }
    ctx.ensure(heap::FLOAT_WORDS, args)?;
    Ok(ctx.heap().float(f))
}

pub fn binary_to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len();
    ctx.ensure(2 * n, args)?;
    let heap = &mut ctx.process.heap;
    let bytes: Vec<Term> = heap
        .binary_bytes(args[0])
        .unwrap_or_default()
        .iter()
        .map(|&b| Term::small(b as i64))
        .collect();
    Ok(heap.list(&bytes))
}

pub fn list_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !(args[0].is_cons() || args[0].is_nil()) {
        return Err(BifError::Badarg);
    }
    iolist_to_binary_1(ctx, args)
}

pub fn iolist_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if ctx.process.heap.is_binary(args[0]) {
        return Ok(args[0]);
    }
    let bytes = iolist::iolist_bytes_within(&ctx.process.heap, args[0], |len| {
        room_for_binary(len).is_ok()
    })
    .map_err(|e| match e {
        iolist::TooBig::NotIolist => BifError::Badarg,
        iolist::TooBig::SystemLimit => BifError::SystemLimit,
    })?;
    make_binary(ctx, bytes, args)
}

pub fn iolist_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = iolist::iolist_size(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    Ok(Term::small(size as i64))
}

// ---------------------------------------------------------------------
// Exceptions and the system.

pub fn throw_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    Err(BifError::Raise(Class::Throw, args[0]))
}

pub fn error_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    Err(BifError::Raise(Class::Error, args[0]))
}

pub fn error_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    Err(BifError::Raise(Class::Error, args[0]))
}

pub fn exit_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    Err(BifError::Raise(Class::Exit, args[0]))
}

pub fn halt_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Err(BifError::Halt(0))
}

/// `halt(Status)`: a non-negative integer exits with its low byte,
/// `abort` with 134 (SIGABRT), and a string is a crash slogan.
pub fn halt_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match halt_status(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)? {
        HaltStatus::Code(code) => Err(BifError::Halt(code)),
        HaltStatus::Slogan(text) => {
            // BEAM writes the slogan as it starts a crash dump (act writes
            // none), after what the program printed, and exits with 1.
            crate::runtime::output::write_stderr(&text);
            Err(BifError::Halt(1))
        }
    }
}

pub enum HaltStatus {
    Code(i32),
    /// The bytes BEAM writes on stderr for `halt(String)`.
    Slogan(Vec<u8>),
}

/// The longest slogan, in characters, BEAM reads from `halt(String)`:
/// the rest of the list is not looked at.
const SLOGAN_CHARS: usize = 1023;

/// What `halt/1,2` does with `status`, or `None` if it is invalid.
pub fn halt_status(heap: &Heap, status: Term) -> Option<HaltStatus> {
    if let Some(i) = status.as_small() {
        return (i >= 0).then_some(HaltStatus::Code((i & 0xff) as i32));
    }
    if let Some(big) = heap.to_bigint(status) {
        let low = big.iter_u64_digits().next().unwrap_or(0) & 0xff;
        return (big.sign() != num_bigint::Sign::Minus).then_some(HaltStatus::Code(low as i32));
    }
    if status == Term::atom(Atom::intern("abort")) {
        return Some(HaltStatus::Code(134));
    }
    // The slogan: its first characters in UTF-8, each newline (the one
    // ending it too) written as CR LF.
    let mut text = Vec::new();
    let mut rest = status;
    let mut count = 0;
    while rest.is_cons() && count < SLOGAN_CHARS {
        let (head, tail) = heap.cons_parts(rest);
        let c = char::from_u32(u32::try_from(head.as_small()?).ok()?)?;
        if c == '\n' {
            text.push(b'\r');
        }
        let mut buf = [0u8; 4];
        text.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        rest = tail;
        count += 1;
    }
    if count < SLOGAN_CHARS && !rest.is_nil() {
        return None;
    }
    text.extend_from_slice(b"\r\n");
    Some(HaltStatus::Slogan(text))
}

/// `A andalso B` with a non-boolean A: `{badarg, A}`.
pub fn badbool_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    Err(error_tuple(ctx, Atom::BADARG, args[0]))
}

/// The key's hash (as ets hashes keys, for `=:=`) and its pair, if any.
fn dictionary_find(ctx: &Context, key: Term) -> (u64, Option<usize>) {
    let heap = &ctx.process.heap;
    let hash = crate::runtime::ets::hash::hash(heap, key);
    let i = ctx
        .process
        .dictionary_find(hash, |k| order::exact_eq(heap, k, key));
    (hash, i)
}

pub fn put_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match dictionary_find(ctx, args[0]) {
        (_, Some(i)) => Ok(ctx.process.dictionary_replace(i, args[1])),
        (hash, None) => {
            ctx.process.dictionary_insert(hash, args[0], args[1]);
            Ok(Term::atom(Atom::UNDEFINED))
        }
    }
}

pub fn get_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(dictionary_find(ctx, args[0])
        .1
        .map_or(Term::atom(Atom::UNDEFINED), |i| {
            ctx.process.dictionary()[2 * i + 1]
        }))
}

pub fn get_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx.process.dictionary().len() / 2;
    ctx.ensure(5 * n, args)?;
    let mut list = Term::NIL;
    for i in (0..n).rev() {
        let (k, v) = (
            ctx.process.dictionary()[2 * i],
            ctx.process.dictionary()[2 * i + 1],
        );
        let heap = &mut ctx.process.heap;
        let pair = heap.tuple(&[k, v]);
        list = heap.cons(pair, list);
    }
    Ok(list)
}

pub fn erase_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match dictionary_find(ctx, args[0]).1 {
        Some(i) => Ok(ctx.process.dictionary_remove(i)),
        None => Ok(Term::atom(Atom::UNDEFINED)),
    }
}

pub fn make_ref_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(id))
}

pub fn self_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(self_pid())
}

pub fn make_fun_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (m, f) = (
        args[0].as_atom().ok_or(BifError::Badarg)?,
        args[1].as_atom().ok_or(BifError::Badarg)?,
    );
    let a = small(args[2])?;
    if !(0..=255).contains(&a) {
        return Err(BifError::Badarg);
    }
    ctx.ensure(heap::EXTERNAL_FUN_WORDS, args)?;
    Ok(ctx.heap().external_fun(m, f, a as u32))
}

pub fn display_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // BEAM writes the display line straight to the terminal driver,
    // which ends it with CR LF; escript's output shows that.
    let mut s = crate::term::print::display_bytes(&ctx.process.heap, args[0]);
    s.extend_from_slice(b"\r\n");
    crate::runtime::output::write_stdout(&s);
    Ok(Term::TRUE)
}

/// `erlang:display_string(String)`: BEAM writes a flat list of
/// characters to standard error as UTF-8 and returns true; anything else
/// (a binary, a deep list) is badarg.
pub fn display_string_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let text = char_list(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    crate::runtime::output::write_stderr(text.as_bytes());
    Ok(Term::TRUE)
}

// ---------------------------------------------------------------------
// Maps (the auto-imported guard BIFs).

/// Not a map (the caller raises `{badmap, M}`).
#[derive(Debug)]
pub struct NotAMap;

/// The value of `key` in map `map`, if present.
pub fn map_find(heap: &Heap, map: Term, key: Term) -> Result<Option<Term>, NotAMap> {
    if heap.is_map(map) {
        Ok(heap.map_get(map, key))
    } else {
        Err(NotAMap)
    }
}

pub fn map_get_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(error_tuple(ctx, Atom::BADKEY, args[0])),
        Err(NotAMap) => Err(error_tuple(ctx, Atom::BADMAP, args[1])),
    }
}

pub fn is_map_key_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(v) => Ok(Term::boolean(v.is_some())),
        Err(NotAMap) => Err(error_tuple(ctx, Atom::BADMAP, args[1])),
    }
}

pub fn map_size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match ctx.process.heap.map_size(args[0]) {
        Some(n) => Ok(Term::small(n as i64)),
        None => Err(error_tuple(ctx, Atom::BADMAP, args[0])),
    }
}

// ---------------------------------------------------------------------
// Time.

/// Nanoseconds in `unit` (`second`, `millisecond`, `microsecond`,
/// `nanosecond`, `native`, or parts per second as an integer).
pub(crate) fn per_second(unit: Term) -> Result<i128, BifError> {
    if let Some(n) = unit.as_small() {
        return if n > 0 {
            Ok(n as i128)
        } else {
            Err(BifError::Badarg)
        };
    }
    match unit.as_atom().map(|a| a.name()) {
        Some("second" | "seconds") => Ok(1),
        Some("millisecond" | "milli_seconds") => Ok(1_000),
        Some("microsecond" | "micro_seconds") => Ok(1_000_000),
        Some("nanosecond" | "nano_seconds" | "native" | "perf_counter") => Ok(1_000_000_000),
        _ => Err(BifError::Badarg),
    }
}

fn time_in(ctx: &mut Context, args: &mut [Term], nanos: i128, unit: Term) -> BifResult {
    let per = per_second(unit)?;
    let v = nanos * per / 1_000_000_000;
    make_integer(ctx, BigInt::from(v), args)
}

pub(crate) fn monotonic_nanos() -> i128 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as i128
}

pub(crate) fn system_nanos() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

pub fn monotonic_time_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    time_in(
        ctx,
        args,
        monotonic_nanos(),
        Term::atom(Atom::intern("native")),
    )
}

pub fn monotonic_time_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let unit = args[0];
    time_in(ctx, args, monotonic_nanos(), unit)
}

pub fn system_time_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    time_in(
        ctx,
        args,
        system_nanos(),
        Term::atom(Atom::intern("native")),
    )
}

pub fn system_time_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let unit = args[0];
    time_in(ctx, args, system_nanos(), unit)
}
