//! State shared by every process: `atomics` (arrays of 64-bit atomic
//! integers, which stdlib/counters.act builds `counters` on) and
//! `persistent_term` (a global key-value store of copied terms).
//!
//! An atomics array is named by a reference whose id keys a global
//! registry; the array lives as long as the program (BEAM frees it when
//! the last reference goes, which a program cannot observe except through
//! memory). Values are stored as 64 raw bits and read back signed or
//! unsigned as the array was made; an increment may be anything in
//! -2^63..2^64-1 and wraps around, as in OTP. persistent_term copies the
//! key and value into a buffer of their own, and copies the value out on
//! `get`: a lookup hashes the key and compares it across heaps.

use super::process::services;
use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap, MessageBuffer};
use crate::runtime::ets::hash::hash;
use crate::term::arith::Number;
use crate::term::order::compare_across;
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::cmp::Ordering as Cmp;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

struct Atomics {
    signed: bool,
    cells: Box<[AtomicU64]>,
}

fn registry() -> &'static RwLock<HashMap<u64, Arc<Atomics>>> {
    static R: OnceLock<RwLock<HashMap<u64, Arc<Atomics>>>> = OnceLock::new();
    R.get_or_init(|| RwLock::new(HashMap::new()))
}

fn badarg<T>() -> Result<T, BifError> {
    Err(BifError::Badarg)
}

/// An integer term as an i128, if it fits one.
fn int_of(heap: &Heap, t: Term) -> Option<i128> {
    if let Some(i) = t.as_small() {
        return Some(i as i128);
    }
    match heap.view(t) {
        View::Big(b) => b.to_bigint().to_i128(),
        _ => None,
    }
}

fn place(ctx: &mut Context, args: &mut [Term], n: Number) -> BifResult {
    if let Some(t) = n.as_immediate() {
        return Ok(t);
    }
    ctx.ensure(n.words(), args)?;
    Ok(ctx.heap().number(&n))
}

impl Atomics {
    fn value(&self, bits: u64) -> Number {
        if self.signed || bits <= i64::MAX as u64 {
            Number::Int(bits as i64)
        } else {
            Number::from_big(BigInt::from(bits))
        }
    }

    /// A value to store: in range for the array's signedness.
    fn bits(&self, heap: &Heap, t: Term) -> Result<u64, BifError> {
        let v = int_of(heap, t).ok_or(BifError::Badarg)?;
        let ok = if self.signed {
            (i64::MIN as i128..=i64::MAX as i128).contains(&v)
        } else {
            (0..=u64::MAX as i128).contains(&v)
        };
        if ok { Ok(v as u64) } else { badarg() }
    }
}

/// An increment: anything in -2^63..2^64-1, as 64 wrapping bits.
fn incr(heap: &Heap, t: Term) -> Result<u64, BifError> {
    match int_of(heap, t) {
        Some(v) if (i64::MIN as i128..=u64::MAX as i128).contains(&v) => Ok(v as u64),
        _ => badarg(),
    }
}

/// The array `args[0]` names and the cell `args[1]` indexes (from 1).
fn cell(ctx: &Context, args: &[Term]) -> Result<(Arc<Atomics>, usize), BifError> {
    let id = match ctx.process.heap.view(args[0]) {
        View::Ref(id) => id,
        _ => return badarg(),
    };
    let a = registry()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
        .ok_or(BifError::Badarg)?;
    match args[1].as_small() {
        Some(i) if i >= 1 && (i as usize) <= a.cells.len() => Ok((a, i as usize - 1)),
        _ => badarg(),
    }
}

/// `atomics:new(Arity, Opts)`.
pub fn new_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = match args[0].as_small() {
        Some(n) if (1..=(1 << 28)).contains(&n) => n as usize,
        _ => return badarg(),
    };
    let heap = &ctx.process.heap;
    let opts = heap.list_to_vec(args[1]).ok_or(BifError::Badarg)?;
    let mut signed = true;
    for o in opts {
        match heap.as_tuple(o) {
            Some(&[k, v]) if k.as_atom().map(Atom::name) == Some("signed") => {
                signed = v.as_bool().ok_or(BifError::Badarg)?
            }
            _ => return badarg(),
        }
    }
    let cells = (0..size).map(|_| AtomicU64::new(0)).collect();
    let id = services(|s| s.make_ref());
    registry()
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, Arc::new(Atomics { signed, cells }));
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(id))
}

/// `atomics:'$info'(Ref)`: `{Size, Signed}` (stdlib/atomics.act builds
/// the map).
pub fn info_raw_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, _) = cell(ctx, &[args[0], Term::small(1)])?;
    ctx.ensure(3, args)?;
    let size = Term::small(a.cells.len() as i64);
    Ok(ctx.heap().tuple(&[
        size,
        Term::atom(Atom::intern(if a.signed { "true" } else { "false" })),
    ]))
}

pub fn get_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let n = a.value(a.cells[i].load(Ordering::SeqCst));
    place(ctx, args, n)
}

pub fn put_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let v = a.bits(&ctx.process.heap, args[2])?;
    a.cells[i].store(v, Ordering::SeqCst);
    Ok(Term::atom(Atom::intern("ok")))
}

pub fn add_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let d = incr(&ctx.process.heap, args[2])?;
    a.cells[i].fetch_add(d, Ordering::SeqCst);
    Ok(Term::atom(Atom::intern("ok")))
}

pub fn sub_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let d = incr(&ctx.process.heap, args[2])?;
    a.cells[i].fetch_sub(d, Ordering::SeqCst);
    Ok(Term::atom(Atom::intern("ok")))
}

pub fn add_get_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let d = incr(&ctx.process.heap, args[2])?;
    let n = a.value(a.cells[i].fetch_add(d, Ordering::SeqCst).wrapping_add(d));
    place(ctx, args, n)
}

pub fn sub_get_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let d = incr(&ctx.process.heap, args[2])?;
    let n = a.value(a.cells[i].fetch_sub(d, Ordering::SeqCst).wrapping_sub(d));
    place(ctx, args, n)
}

pub fn exchange_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let v = a.bits(&ctx.process.heap, args[2])?;
    let n = a.value(a.cells[i].swap(v, Ordering::SeqCst));
    place(ctx, args, n)
}

/// `atomics:compare_exchange(Ref, Ix, Expected, Desired)`: `ok`, or the
/// value found when it was not `Expected`.
pub fn compare_exchange_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (a, i) = cell(ctx, args)?;
    let expected = a.bits(&ctx.process.heap, args[2])?;
    let desired = a.bits(&ctx.process.heap, args[3])?;
    match a.cells[i].compare_exchange(expected, desired, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => Ok(Term::atom(Atom::intern("ok"))),
        Err(found) => {
            let n = a.value(found);
            place(ctx, args, n)
        }
    }
}

// ---------------------------------------------------------------------
// persistent_term.

/// Each entry is one buffer holding `{Key, Value}`, filed by the key's hash.
type Terms = HashMap<u64, Vec<Arc<MessageBuffer>>>;

fn terms() -> &'static Mutex<Terms> {
    static T: OnceLock<Mutex<Terms>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(HashMap::new()))
}

fn pair_of(b: &MessageBuffer) -> (Term, Term) {
    let h = crate::runtime::ets::store::heap_of(b);
    match h.as_tuple(b.term()) {
        Some(&[k, v]) => (k, v),
        _ => unreachable!("a persistent_term entry is a pair"),
    }
}

/// Whether the stored pair `b` is one act's own library keeps here (a
/// key `{'$act', _}`, as logger's configuration): `get/0` and `info/0`
/// leave those out, as they list only the program's own terms.
fn library_entry(b: &MessageBuffer) -> bool {
    let (k, _) = pair_of(b);
    let h = crate::runtime::ets::store::heap_of(b);
    matches!(h.as_tuple(k), Some(&[tag, _]) if tag.as_atom().is_some_and(|a| a.name() == "$act"))
}

/// The entry for `key`, if any.
fn find(heap: &Heap, key: Term) -> Option<Arc<MessageBuffer>> {
    let h = hash(heap, key);
    let t = terms().lock().unwrap_or_else(|e| e.into_inner());
    t.get(&h)?.iter().find(|b| keyed_by(heap, key, b)).cloned()
}

/// Whether the stored pair `b` has the key `key` (a term of `heap`).
fn keyed_by(heap: &Heap, key: Term, b: &MessageBuffer) -> bool {
    let (k, _) = pair_of(b);
    compare_across(heap, key, crate::runtime::ets::store::heap_of(b), k, true) == Cmp::Equal
}

fn value_out(ctx: &mut Context, args: &mut [Term], b: &MessageBuffer) -> BifResult {
    let src = crate::runtime::ets::store::heap_of(b);
    let (_, v) = pair_of(b);
    let words = heap::size_of(src, v).map_err(|_| BifError::SystemLimit)?;
    ctx.ensure(words, args)?;
    Ok(heap::copy_term(src, v, ctx.heap()))
}

/// `persistent_term:put(Key, Value)`.
pub fn pt_put_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    ctx.ensure(3, args)?;
    let pair = ctx.heap().tuple(&[args[0], args[1]]);
    let heap = &ctx.process.heap;
    let buffer = MessageBuffer::copy_from(heap, pair).map_err(|_| BifError::SystemLimit)?;
    let h = hash(heap, args[0]);
    let mut t = terms().lock().unwrap_or_else(|e| e.into_inner());
    let bucket = t.entry(h).or_default();
    bucket.retain(|b| !keyed_by(heap, args[0], b));
    bucket.push(Arc::new(buffer));
    Ok(Term::atom(Atom::intern("ok")))
}

/// `persistent_term:get(Key)`: badarg when absent.
pub fn pt_get_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match find(&ctx.process.heap, args[0]) {
        Some(b) => value_out(ctx, args, &b),
        None => badarg(),
    }
}

/// `persistent_term:get(Key, Default)`.
pub fn pt_get_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match find(&ctx.process.heap, args[0]) {
        Some(b) => value_out(ctx, args, &b),
        None => Ok(args[1]),
    }
}

/// `persistent_term:erase(Key)`: whether there was one.
pub fn pt_erase_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let h = hash(heap, args[0]);
    let mut t = terms().lock().unwrap_or_else(|e| e.into_inner());
    let Some(bucket) = t.get_mut(&h) else {
        return Ok(Term::atom(Atom::intern("false")));
    };
    let before = bucket.len();
    bucket.retain(|b| !keyed_by(heap, args[0], b));
    let erased = bucket.len() < before;
    if bucket.is_empty() {
        t.remove(&h);
    }
    Ok(Term::atom(Atom::intern(if erased {
        "true"
    } else {
        "false"
    })))
}

/// `persistent_term:get()`: every `{Key, Value}`.
pub fn pt_get_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let all: Vec<Arc<MessageBuffer>> = terms()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .flatten()
        .filter(|b| !library_entry(b))
        .cloned()
        .collect();
    let mut words = 2 * all.len();
    for b in &all {
        let src = crate::runtime::ets::store::heap_of(b);
        words += heap::size_of(src, b.term()).map_err(|_| BifError::SystemLimit)?;
    }
    ctx.ensure(words, args)?;
    let mut list = Term::NIL;
    for b in &all {
        let src = crate::runtime::ets::store::heap_of(b);
        let pair = heap::copy_term(src, b.term(), ctx.heap());
        list = ctx.heap().cons(pair, list);
    }
    Ok(list)
}

/// `persistent_term:'$info'()`: `{Count, Bytes}`.
pub fn pt_info_raw_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (mut count, mut words) = (0usize, 0usize);
    for b in terms()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .flatten()
        .filter(|b| !library_entry(b))
    {
        count += 1;
        let src = crate::runtime::ets::store::heap_of(b);
        words += heap::size_of(src, b.term()).unwrap_or(0);
    }
    ctx.ensure(3, args)?;
    let pair = [Term::small(count as i64), Term::small(words as i64 * 8)];
    Ok(ctx.heap().tuple(&pair))
}
