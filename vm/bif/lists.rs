//! The native part of `lists` (the rest is stdlib/lists.act).

use super::erlang::{list_elements, list_length};
use super::{BifError, BifResult, Context};
use crate::term::Term;
use crate::term::order;

/// lists:sort/1 and usort/1 are Erlang functions in OTP, so a bad
/// argument is a `function_clause` there, not a `badarg`.
fn function_clause() -> BifError {
    BifError::Raise(
        crate::process::Class::Error,
        Term::atom(crate::term::Atom::FUNCTION_CLAUSE),
    )
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

/// `lists:keymember/3`, a BIF in OTP as keyfind/3 is.
pub fn keymember_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let found = keyfind_3(ctx, args)?;
    Ok(Term::boolean(found != Term::FALSE))
}

/// `lists:keysearch/3`, a BIF in OTP as keyfind/3 is.
pub fn keysearch_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let found = keyfind_3(ctx, args)?;
    if found == Term::FALSE {
        return Ok(found);
    }
    let mut keep = [found];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx
        .heap()
        .tuple(&[Term::atom(crate::term::Atom::intern("value")), keep[0]]))
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

/// The tuples of the proper list `args[1]` sorted stably by element
/// `args[0]`, with room made on the heap for the sorted list; `None` when
/// that is not the whole story (a bad position, an improper list, an
/// element that is no tuple or too short): lists.act then sorts as before,
/// raising what it raises.
fn keysorted(ctx: &mut Context, args: &mut [Term]) -> Result<Option<Vec<Term>>, BifError> {
    let Some(n) = args[0].as_small().filter(|&n| n >= 1) else {
        return Ok(None);
    };
    let n = n as usize;
    let Some(len) = list_length(&ctx.process.heap, args[1]) else {
        return Ok(None);
    };
    ctx.ensure(2 * len, args)?;
    let heap = &ctx.process.heap;
    let items = list_elements(heap, args[1]).unwrap_or_default();
    let mut keyed = Vec::with_capacity(items.len());
    for &t in &items {
        match heap.as_tuple(t) {
            Some(elements) if elements.len() >= n => keyed.push((elements[n - 1], t)),
            _ => return Ok(None),
        }
    }
    // Stable, as OTP's keysort is.
    keyed.sort_by(|a, b| order::compare(heap, a.0, b.0));
    Ok(Some(keyed.into_iter().map(|(_, t)| t).collect()))
}

/// `lists:'$keysort'(N, L)`: `lists:keysort/2` when `keysorted` can do
/// it, else `false`.
pub fn keysort_fast_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match keysorted(ctx, args)? {
        Some(items) => Ok(ctx.process.heap.list(&items)),
        None => Ok(Term::FALSE),
    }
}

/// `lists:'$ukeysort'(N, L)`: `lists:ukeysort/2` (of the tuples whose
/// keys compare equal the first stays) when `keysorted` can do it, else
/// `false`.
pub fn ukeysort_fast_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(mut items) = keysorted(ctx, args)? else {
        return Ok(Term::FALSE);
    };
    let n = args[0].as_small().unwrap_or(1) as usize;
    let heap = &ctx.process.heap;
    let key = |t: Term| heap.as_tuple(t).map_or(t, |e| e[n - 1]);
    items.dedup_by(|later, kept| order::eq(heap, key(*later), key(*kept)));
    Ok(ctx.process.heap.list(&items))
}
