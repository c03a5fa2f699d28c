//! The native part of `lists` (the rest is stdlib/lists.act).

use super::erlang::{list_elements, list_length};
use super::{BifError, BifResult, Context};
use crate::term::Term;
use crate::term::order;

pub fn reverse_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut two = [args[0], Term::NIL];
    let r = reverse_2(ctx, &mut two);
    args[0] = two[0];
    r
}

pub fn reverse_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = list_length(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    ctx.ensure(2 * n, args)?;
    let heap = &mut ctx.process.heap;
    let mut acc = args[1];
    let mut t = args[0];
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        acc = heap.cons(h, acc);
        t = tail;
    }
    Ok(acc)
}

pub fn member_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let mut t = args[1];
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        if order::exact_eq(heap, h, args[0]) {
            return Ok(Term::TRUE);
        }
        t = tail;
    }
    if t.is_nil() {
        Ok(Term::FALSE)
    } else {
        Err(BifError::Badarg)
    }
}

pub fn keyfind_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = args[1]
        .as_small()
        .filter(|&n| n >= 1)
        .ok_or(BifError::Badarg)? as usize;
    let list = list_elements(heap, args[2]).ok_or(BifError::Badarg)?;
    for t in list {
        if let Some(elements) = heap.as_tuple(t)
            && elements.len() >= n
            && order::eq(heap, elements[n - 1], args[0])
        {
            return Ok(t);
        }
    }
    Ok(Term::FALSE)
}

/// `lists:sort/1`: a stable merge sort in term order. The heap space for
/// the result is ensured first, so the terms read afterwards stay valid.
pub fn sort_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = list_length(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    ctx.ensure(2 * n, args)?;
    let heap = &ctx.process.heap;
    let mut items = list_elements(heap, args[0]).unwrap_or_default();
    items.sort_by(|&a, &b| order::compare(heap, a, b));
    Ok(ctx.process.heap.list(&items))
}

/// `lists:usort/1`: sorted, without duplicates (`==`).
pub fn usort_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = list_length(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    ctx.ensure(2 * n, args)?;
    let heap = &ctx.process.heap;
    let mut items = list_elements(heap, args[0]).unwrap_or_default();
    items.sort_by(|&a, &b| order::compare(heap, a, b));
    items.dedup_by(|a, b| order::eq(heap, *a, *b));
    Ok(ctx.process.heap.list(&items))
}
