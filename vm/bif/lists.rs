//! The native part of `lists` (the rest is stdlib/lists.act).

use super::erlang::{list_elements, list_length};
use super::{BifError, BifResult, Context};
use crate::term::Term;
use crate::term::order;

/// lists:reverse/1, sort/1 and usort/1 are Erlang functions in OTP, so a
/// bad argument is a `function_clause` there, not a `badarg`.
fn function_clause() -> BifError {
    BifError::Raise(
        crate::process::Class::Error,
        Term::atom(crate::term::Atom::FUNCTION_CLAUSE),
    )
}

pub fn reverse_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut two = [args[0], Term::NIL];
    let r = reverse_2(ctx, &mut two);
    args[0] = two[0];
    // With `[]` as the tail, only a non-list first argument fails.
    r.map_err(|e| match e {
        BifError::Badarg => function_clause(),
        other => other,
    })
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
    let key = args[0];
    // Equal immediates are the same word; anything else may be `==` to
    // a term of another kind (1 and 1.0).
    let immediate = key.is_immediate();
    let mut t = args[2];
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        if let Some(elements) = heap.as_tuple(h)
            && elements.len() >= n
        {
            let e = elements[n - 1];
            if e == key || (!(immediate && e.is_immediate()) && order::eq(heap, e, key)) {
                return Ok(h);
            }
        }
        t = tail;
    }
    if t.is_nil() {
        Ok(Term::FALSE)
    } else {
        Err(BifError::Badarg)
    }
}

/// `lists:sort/1`: a stable merge sort in term order. The heap space for
/// the result is ensured first, so the terms read afterwards stay valid.
/// The elements of the list in `args[0]` in term order, with room made
/// on the heap for the sorted list.
fn sorted(ctx: &mut Context, args: &mut [Term]) -> Result<Vec<Term>, BifError> {
    let n = list_length(&ctx.process.heap, args[0]).ok_or_else(function_clause)?;
    ctx.ensure(2 * n, args)?;
    let heap = &ctx.process.heap;
    let mut items = list_elements(heap, args[0]).unwrap_or_default();
    items.sort_by(|&a, &b| order::compare(heap, a, b));
    Ok(items)
}

pub fn sort_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut items = sorted(ctx, args)?;
    // Equal elements that differ (1 and 1.0) come out in OTP's order,
    // which is not the stable one.
    let heap = &ctx.process.heap;
    if items
        .windows(2)
        .any(|w| order::eq(heap, w[0], w[1]) && !order::exact_eq(heap, w[0], w[1]))
    {
        let input = list_elements(heap, args[0]).unwrap_or_default();
        let cmp = |a: Term, b: Term| order::compare(heap, a, b);
        items = super::otp_sort::Sorter { cmp: &cmp }.sort(&input);
    }
    Ok(ctx.process.heap.list(&items))
}

pub fn usort_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut items = sorted(ctx, args)?;
    let heap = &ctx.process.heap;
    items.dedup_by(|a, b| order::eq(heap, *a, *b));
    Ok(ctx.process.heap.list(&items))
}
