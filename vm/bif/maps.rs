//! The `maps` module (native part) and map construction and update.

use super::erlang::{error_tuple, list_elements, map_find};
use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::{Atom, Term};

/// Keys and values of a map, copied out (valid until the next GC).
fn entries(ctx: &Context, map: Term) -> Option<(Vec<Term>, Vec<Term>)> {
    ctx.process.heap.map_entries(map)
}

/// Pairs added to a map one by one (each O(log n) on a large map) rather
/// than by building the map again (O(n log n)).
const FEW_PAIRS: usize = 8;

fn badmap(ctx: &mut Context, map: Term) -> BifError {
    error_tuple(ctx, Atom::BADMAP, map)
}

/// `#{K1 => V1, ...}` from a tuple `{K1, V1, ...}`.
pub fn build_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = ctx
        .process
        .heap
        .as_tuple(args[0])
        .map_or(0, |t| t.len() / 2);
    ctx.ensure(heap::words_for_map(n), args)?;
    let heap = &mut ctx.process.heap;
    let flat = heap.as_tuple(args[0]).unwrap_or_default().to_vec();
    let pairs: Vec<(Term, Term)> = flat.chunks(2).map(|c| (c[0], c[1])).collect();
    Ok(heap.map(&pairs))
}

/// `M#{K => V, K2 := V2}`: pairs in a tuple, `:=` flags in another.
pub fn update_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(size) = ctx.process.heap.map_size(args[0]) else {
        return Err(badmap(ctx, args[0]));
    };
    let heap = &ctx.process.heap;
    let pairs = heap.as_tuple(args[1]).map_or(0, |t| t.len() / 2);
    for i in 0..pairs {
        let key = heap.as_tuple(args[1]).unwrap_or_default()[2 * i];
        let exact = heap.as_tuple(args[2]).unwrap_or_default().get(i) == Some(&Term::TRUE);
        if exact && matches!(map_find(heap, args[0], key), Ok(None)) {
            return Err(error_tuple(ctx, Atom::BADKEY, key));
        }
    }
    if pairs <= FEW_PAIRS {
        // One put at a time; the map under construction stays in args[0]
        // (a root), the pairs are read again after each collection.
        for i in 0..pairs {
            let need = ctx.process.heap.words_for_map_change(args[0]);
            ctx.ensure(need, args)?;
            let heap = &mut ctx.process.heap;
            let pair = &heap.as_tuple(args[1]).unwrap_or_default()[2 * i..2 * i + 2];
            let (k, v) = (pair[0], pair[1]);
            args[0] = heap.map_put(args[0], k, v).ok_or(BifError::Badarg)?;
        }
        return Ok(args[0]);
    }
    ctx.ensure(heap::words_for_map(size + pairs), args)?;
    let (keys, values) = entries(ctx, args[0]).unwrap_or_default();
    let heap = &mut ctx.process.heap;
    let flat = heap.as_tuple(args[1]).unwrap_or_default().to_vec();
    let mut pairs: Vec<(Term, Term)> = keys.into_iter().zip(values).collect();
    pairs.extend(flat.chunks(2).map(|c| (c[0], c[1])));
    Ok(heap.map(&pairs))
}

pub fn new_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    ctx.ensure(heap::words_for_map(0), args)?;
    Ok(ctx.heap().map(&[]))
}

pub fn get_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(error_tuple(ctx, Atom::BADKEY, args[0])),
        Err(super::erlang::NotAMap) => Err(badmap(ctx, args[1])),
    }
}

pub fn get_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Ok(args[2]),
        Err(super::erlang::NotAMap) => Err(badmap(ctx, args[1])),
    }
}

pub fn find_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(Some(_)) => {
            ctx.ensure(3, args)?;
            let v = map_find(&ctx.process.heap, args[1], args[0])
                .ok()
                .flatten()
                .unwrap_or(Term::NIL);
            Ok(ctx.heap().tuple(&[Term::OK, v]))
        }
        Ok(None) => Ok(Term::atom(Atom::intern("error"))),
        Err(super::erlang::NotAMap) => Err(badmap(ctx, args[1])),
    }
}

pub fn is_key_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[1], args[0]) {
        Ok(v) => Ok(Term::boolean(v.is_some())),
        Err(super::erlang::NotAMap) => Err(badmap(ctx, args[1])),
    }
}

pub fn put_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !ctx.process.heap.is_map(args[2]) {
        return Err(badmap(ctx, args[2]));
    }
    let need = ctx.process.heap.words_for_map_change(args[2]);
    ctx.ensure(need, args)?;
    ctx.heap()
        .map_put(args[2], args[0], args[1])
        .ok_or(BifError::Badarg)
}

pub fn update_3_exact(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match map_find(&ctx.process.heap, args[2], args[0]) {
        Ok(Some(_)) => put_3(ctx, args),
        Ok(None) => Err(error_tuple(ctx, Atom::BADKEY, args[0])),
        Err(super::erlang::NotAMap) => Err(badmap(ctx, args[2])),
    }
}

pub fn remove_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !ctx.process.heap.is_map(args[1]) {
        return Err(badmap(ctx, args[1]));
    }
    let need = ctx.process.heap.words_for_map_change(args[1]);
    ctx.ensure(need, args)?;
    ctx.heap()
        .map_remove(args[1], args[0])
        .ok_or(BifError::Badarg)
}

pub fn size_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match ctx.process.heap.map_size(args[0]) {
        Some(n) => Ok(Term::small(n as i64)),
        None => Err(badmap(ctx, args[0])),
    }
}

fn list_of(
    ctx: &mut Context,
    args: &mut [Term],
    pick: fn(Term, Term, &mut heap::Heap) -> Term,
    words_each: usize,
) -> BifResult {
    let Some((keys, _)) = entries(ctx, args[0]) else {
        return Err(badmap(ctx, args[0]));
    };
    ctx.ensure((2 + words_each) * keys.len(), args)?;
    let (keys, values) = entries(ctx, args[0]).unwrap_or_default();
    let heap = &mut ctx.process.heap;
    // OTP lists a large map's walk backwards; a small one in term order.
    let order: Vec<usize> = crate::term::hamt::walk_order(heap, &keys)
        .unwrap_or_else(|| (0..keys.len()).rev().collect());
    let mut list = Term::NIL;
    for i in order {
        let item = pick(keys[i], values[i], heap);
        list = heap.cons(item, list);
    }
    Ok(list)
}

/// `[{K, V}]` in the order OTP walks the map (fold, iterator, printing).
pub fn walk_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some((keys, _)) = entries(ctx, args[0]) else {
        return Err(badmap(ctx, args[0]));
    };
    ctx.ensure(5 * keys.len(), args)?;
    let (keys, values) = entries(ctx, args[0]).unwrap_or_default();
    let heap = &mut ctx.process.heap;
    let (keys, values) = crate::term::hamt::walk(heap, &keys, &values);
    let mut list = Term::NIL;
    for i in (0..keys.len()).rev() {
        let item = heap.tuple(&[keys[i], values[i]]);
        list = heap.cons(item, list);
    }
    Ok(list)
}

pub fn keys_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    list_of(ctx, args, |k, _, _| k, 0)
}

pub fn values_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    list_of(ctx, args, |_, v, _| v, 0)
}

pub fn to_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    list_of(ctx, args, |k, v, heap| heap.tuple(&[k, v]), 3)
}

pub fn from_list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let items = list_elements(heap, args[0]).ok_or(BifError::Badarg)?;
    if items
        .iter()
        .any(|&t| heap.as_tuple(t).is_none_or(|e| e.len() != 2))
    {
        return Err(BifError::Badarg);
    }
    ctx.ensure(heap::words_for_map(items.len()), args)?;
    let heap = &mut ctx.process.heap;
    let items = list_elements(heap, args[0]).unwrap_or_default();
    let pairs: Vec<(Term, Term)> = items
        .iter()
        .map(|&t| {
            let e = heap.tuple_elements(t);
            (e[0], e[1])
        })
        .collect();
    Ok(heap.map(&pairs))
}

pub fn merge_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (Some((a, _)), Some((b, _))) = (entries(ctx, args[0]), entries(ctx, args[1])) else {
        let bad = if entries(ctx, args[0]).is_none() {
            args[0]
        } else {
            args[1]
        };
        return Err(badmap(ctx, bad));
    };
    ctx.ensure(heap::words_for_map(a.len() + b.len()), args)?;
    let (ak, av) = entries(ctx, args[0]).unwrap_or_default();
    let (bk, bv) = entries(ctx, args[1]).unwrap_or_default();
    let mut pairs: Vec<(Term, Term)> = ak.into_iter().zip(av).collect();
    pairs.extend(bk.into_iter().zip(bv));
    Ok(ctx.heap().map(&pairs))
}
