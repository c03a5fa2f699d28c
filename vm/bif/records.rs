//! `erlang:is_record/2,3`: the run-time test behind records, for calls
//! whose record name is not a literal (`expand` resolves the others).

use super::{BifError, BifResult, Context};
use crate::term::Term;

/// Whether `t` is a tuple whose first element is `tag` (and, with
/// `size`, of that many elements).
fn test(ctx: &Context, t: Term, tag: Term, size: Option<usize>) -> bool {
    match ctx.process.heap.as_tuple(t) {
        Some(elements) => {
            !elements.is_empty() && elements[0] == tag && size.is_none_or(|n| elements.len() == n)
        }
        None => false,
    }
}

pub fn is_record_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !args[1].is_atom() {
        return Err(BifError::Badarg);
    }
    Ok(Term::boolean(test(ctx, args[0], args[1], None)))
}

pub fn is_record_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = args[2].as_small().ok_or(BifError::Badarg)?;
    if !args[1].is_atom() || size < 0 {
        return Err(BifError::Badarg);
    }
    Ok(Term::boolean(test(
        ctx,
        args[0],
        args[1],
        Some(size as usize),
    )))
}
