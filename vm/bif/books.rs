//! Process-dictionary BIFs the book programs use beside `put`/`get`/`erase/1`:
//! `erase/0` and `get_keys/0,1`; and the node queries of a non-distributed
//! node (`nodes/0,1`, `is_alive/0`).

use super::{BifResult, Context};
use crate::term::Term;
use crate::term::order;

/// The keys of the dictionary (in its order) whose value is `value`, or
/// every key; `value` is a root while the list's room is made.
fn keys(ctx: &mut Context, value: Option<Term>) -> BifResult {
    let n = ctx.process.dictionary().len() / 2;
    let mut roots = [value.unwrap_or(Term::NIL)];
    ctx.ensure(2 * n, &mut roots)?;
    let d = ctx.process.dictionary().to_vec();
    let mut list = Term::NIL;
    for i in (0..n).rev() {
        let wanted = value.is_none() || order::exact_eq(&ctx.process.heap, d[2 * i + 1], roots[0]);
        if wanted {
            list = ctx.process.heap.cons(d[2 * i], list);
        }
    }
    Ok(list)
}

pub fn get_keys_0(ctx: &mut Context, _: &mut [Term]) -> BifResult {
    keys(ctx, None)
}

pub fn get_keys_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    keys(ctx, Some(args[0]))
}

/// `erase()`: the whole dictionary as `[{Key, Value}]`, which is then empty.
pub fn erase_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let list = super::erlang::get_0(ctx, args)?;
    ctx.process.dictionary_mut().clear();
    Ok(list)
}

/// `nodes()`, `nodes(Type)`: act is one node that is not distributed, so
/// it sees no other node.
pub fn nodes_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::NIL)
}

pub fn nodes_1(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::NIL)
}

/// `is_alive()`: false, as for an Erlang node started without a name.
pub fn is_alive_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::atom(crate::term::Atom::FALSE))
}
