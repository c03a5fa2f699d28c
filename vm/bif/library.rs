//! Built-in functions of the library issue: the external term format,
//! tuple and binary helpers, time units, fun_info and memory.

use super::erlang::{make_binary, make_integer, per_second, small, system_nanos};
use super::{BifError, BifResult, Context};
use crate::heap::{self, budget};
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::BigInt;

pub fn term_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = crate::term::etf::term_to_binary(&ctx.process.heap, args[0])
        .map_err(|_| BifError::Badarg)?;
    make_binary(ctx, bytes, args)
}

pub fn binary_to_term_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    let buffer = crate::term::etf::binary_to_term(bytes).map_err(|_| BifError::Badarg)?;
    // Make room first (with the live registers as roots), so taking the
    // buffer in cannot collect.
    ctx.ensure(buffer.words(), args)?;
    Ok(ctx.process.heap.take_buffer(buffer))
}

/// `binary:part(Bin, Pos, Len)`; a negative `Len` counts back from `Pos`.
pub fn binary_part_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len() as i64;
    let (pos, len) = (small(args[1])?, small(args[2])?);
    let (start, end) = if len >= 0 {
        (pos, pos + len)
    } else {
        (pos + len, pos)
    };
    if start < 0 || end > size {
        return Err(BifError::Badarg);
    }
    ctx.ensure(heap::SUB_BINARY_WORDS, args)?;
    ctx.process
        .heap
        .sub_binary(args[0], start as usize, (end - start) as usize)
        .ok_or(BifError::Badarg)
}

pub fn split_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len();
    let at = small(args[1])?;
    if at < 0 || at as usize > size {
        return Err(BifError::Badarg);
    }
    ctx.ensure(2 * heap::SUB_BINARY_WORDS + 3, args)?;
    let heap = &mut ctx.process.heap;
    let left = heap
        .sub_binary(args[0], 0, at as usize)
        .ok_or(BifError::Badarg)?;
    let right = heap
        .sub_binary(args[0], at as usize, size - at as usize)
        .ok_or(BifError::Badarg)?;
    Ok(heap.tuple(&[left, right]))
}

fn tuple_of(ctx: &Context, t: Term) -> Result<Vec<Term>, BifError> {
    Ok(ctx
        .process
        .heap
        .as_tuple(t)
        .ok_or(BifError::Badarg)?
        .to_vec())
}

pub fn append_element_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = tuple_of(ctx, args[0])?.len();
    ctx.ensure(n + 2, args)?;
    let mut elements = tuple_of(ctx, args[0])?;
    elements.push(args[1]);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn insert_element_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let n = tuple_of(ctx, args[1])?.len();
    if i < 1 || i as usize > n + 1 {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n + 2, args)?;
    let mut elements = tuple_of(ctx, args[1])?;
    elements.insert(i as usize - 1, args[2]);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn delete_element_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let n = tuple_of(ctx, args[1])?.len();
    if i < 1 || i as usize > n {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n, args)?;
    let mut elements = tuple_of(ctx, args[1])?;
    elements.remove(i as usize - 1);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn make_tuple_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = small(args[0])?;
    if !(0..=(1 << 24)).contains(&n) {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n as usize + 1, args)?;
    let elements = vec![args[1]; n as usize];
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn timestamp_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let micros = system_nanos() / 1000;
    let (mega, secs, micro) = (
        micros / 1_000_000_000_000,
        (micros / 1_000_000) % 1_000_000,
        micros % 1_000_000,
    );
    ctx.ensure(4, args)?;
    Ok(ctx.process.heap.tuple(&[
        Term::small(mega as i64),
        Term::small(secs as i64),
        Term::small(micro as i64),
    ]))
}

/// `erlang:convert_time_unit(Time, From, To)`, rounding down as Erlang.
pub fn convert_time_unit_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let time: BigInt = match ctx.process.heap.view(args[0]) {
        View::Small(i) => BigInt::from(i),
        View::Big(b) => b.to_bigint(),
        _ => return Err(BifError::Badarg),
    };
    let from = BigInt::from(per_second(args[1])?);
    let to = BigInt::from(per_second(args[2])?);
    let scaled = time * to;
    let result = num_integer::Integer::div_floor(&scaled, &from);
    make_integer(ctx, result, args)
}

/// `erlang:fun_info(Fun, Item)` for the items programs ask about.
pub fn fun_info_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let item = args[1].as_atom().ok_or(BifError::Badarg)?;
    let value = match ctx.process.heap.view(args[0]) {
        View::ExternalFun {
            module,
            function,
            arity,
        } => match item.name() {
            "module" => Term::atom(module),
            "name" => Term::atom(function),
            "arity" => Term::small(arity as i64),
            "type" => Term::atom(Atom::intern("external")),
            "env" => Term::NIL,
            _ => return Err(BifError::Badarg),
        },
        View::Fun { index, .. } => {
            let entry = crate::runtime::fun_entry(index).ok_or(BifError::Badarg)?;
            let def = entry
                .module
                .funs
                .get(entry.fun as usize)
                .ok_or(BifError::Badarg)?;
            match item.name() {
                "module" => Term::atom(entry.module.name),
                "arity" => Term::small(def.arity as i64),
                "type" => Term::atom(Atom::intern("local")),
                "index" => Term::small(entry.fun as i64),
                _ => return Err(BifError::Badarg),
            }
        }
        _ => return Err(BifError::Badarg),
    };
    ctx.ensure(3, args)?;
    Ok(ctx.process.heap.tuple(&[args[1], value]))
}

/// `erlang:memory()`: act's accounted bytes, as `[{total, N}, {processes, N}]`.
pub fn memory_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let used = Term::try_small(budget::used() as i64).unwrap_or(Term::small(0));
    ctx.ensure(12, args)?;
    let heap = &mut ctx.process.heap;
    let total = heap.tuple(&[Term::atom(Atom::intern("total")), used]);
    let processes = heap.tuple(&[Term::atom(Atom::intern("processes")), used]);
    let tail = heap.cons(processes, Term::NIL);
    Ok(heap.cons(total, tail))
}

pub fn memory_1(_ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match args[0].as_atom().map(Atom::name) {
        Some("total" | "processes" | "processes_used") => {
            Ok(Term::try_small(budget::used() as i64).unwrap_or(Term::small(0)))
        }
        Some("system" | "atom" | "atom_used" | "binary" | "code" | "ets") => Ok(Term::small(0)),
        _ => Err(BifError::Badarg),
    }
}
