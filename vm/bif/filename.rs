//! The one native part of `filename`: the working directory, for `absname/1`.

use super::{BifError, BifResult, Context};
use crate::term::Term;

/// `filename:'$cwd'()`: the current directory as a string.
pub fn cwd_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let dir = std::env::current_dir().map_err(|_| BifError::Badarg)?;
    let text = dir.to_string_lossy().into_owned();
    ctx.ensure(2 * text.chars().count(), args)?;
    Ok(ctx.process.heap.string(&text))
}
