//! `file:read_line/1` and `file:read/2` on an io device rather than an
//! open file: standard_io, user or the group leader's pid. OTP sends
//! these as latin1 `get_line` / `get_chars` requests, so the answer is
//! the bytes read (a list, or a binary once `io:setopts([binary])`),
//! wrapped in `{ok, Data}`. stdlib/file.act asks again while the answer
//! is `wait`, as io.act does for `io:get_line`.

use super::{BifResult, Context};
use crate::runtime::output;
use crate::runtime::stdin::{Request, Taken};
use crate::term::{Atom, Term};

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

fn error(ctx: &mut Context, reason: Term) -> BifResult {
    let mut keep = [reason];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::ERROR), keep[0]]))
}

/// Reads for `file:read_line(Device)` (`n` is `None`) or
/// `file:read(Device, N)` when `Device` is no open file; `args[0]` is the
/// device.
pub fn read(ctx: &mut Context, n: Option<usize>, args: &mut [Term]) -> BifResult {
    let device = args[0];
    if !device.is_pid() && device.as_atom().is_none() {
        return error(ctx, atom("badarg"));
    }
    if device == super::process::services(|s| s.self_pid()).to_term() {
        return error(ctx, atom("calling_self"));
    }
    if super::input::is_gone(device) {
        return error(ctx, atom("terminated"));
    }
    if !super::input::is_stdin(device) {
        // OTP's io:request to a name nobody has registered.
        return error(ctx, atom("arguments"));
    }
    let request = match n {
        None => Request::Line,
        Some(0) => return ok_data(ctx, Vec::new(), args),
        Some(n) => Request::Bytes(n),
    };
    match super::input::take_stdin(request) {
        Taken::Data(bytes) => ok_data(ctx, bytes, args),
        Taken::Eof => Ok(atom("eof")),
        Taken::Error(e) => error(ctx, atom(&e)),
        Taken::Pending => super::input::wait(ctx),
    }
}

/// `{ok, Data}` of the bytes as latin1 characters. With standard_io's
/// encoding set to unicode the bytes are UTF-8 and each character must
/// fit in latin1.
fn ok_data(ctx: &mut Context, bytes: Vec<u8>, args: &mut [Term]) -> BifResult {
    let bytes = if output::unicode() {
        let latin1: Option<Vec<u8>> = std::str::from_utf8(&bytes).ok().and_then(|text| {
            text.chars()
                .map(|c| u8::try_from(u32::from(c)).ok())
                .collect()
        });
        match latin1 {
            Some(latin1) => latin1,
            None => {
                ctx.ensure(4, args)?;
                let reason =
                    ctx.heap()
                        .tuple(&[atom("no_translation"), atom("unicode"), atom("latin1")]);
                return error(ctx, reason);
            }
        }
    } else {
        bytes
    };
    let binary = super::input::stdin_binary();
    let data = super::file::make_data(ctx, bytes, binary, false, args)?;
    let mut keep = [data];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::OK), keep[0]]))
}
