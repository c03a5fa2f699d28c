//! The `io` and `io_lib` modules: formatted output to the buffered stdout.

use super::erlang::{chardata_bytes, make_string};
use super::{BifError, BifResult, Context};
use crate::runtime::output;
use crate::term::{Atom, Term};

fn emit(device: Term, text: &[u8]) -> Result<(), BifError> {
    if device == Term::atom(Atom::STANDARD_ERROR) {
        output::write_stderr(text);
    } else if device == Term::atom(Atom::STANDARD_IO) || device.is_pid() {
        output::write_stdout(text);
    } else {
        return Err(BifError::Badarg);
    }
    Ok(())
}

/// Ends the caller's time slice at its next call. In Erlang, output is a
/// request to the io server that the caller waits for, so processes that
/// print take turns line by line; spending the budget gives the same
/// round-robin order here.
fn end_slice(ctx: &mut Context) {
    let p = &mut ctx.process;
    p.reductions = p.reductions.max(p.reduction_budget);
}

fn format_to(ctx: &mut Context, device: Term, format: Term, args: Term) -> BifResult {
    let text = super::fmt::format(&ctx.process.heap, format, args).ok_or(BifError::Badarg)?;
    emit(device, text.as_bytes())?;
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn format_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    format_to(ctx, Term::atom(Atom::STANDARD_IO), args[0], Term::NIL)
}

pub fn format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    format_to(ctx, Term::atom(Atom::STANDARD_IO), args[0], args[1])
}

pub fn format_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    format_to(ctx, args[0], args[1], args[2])
}

fn put_chars(ctx: &mut Context, device: Term, chars: Term) -> BifResult {
    let heap = &ctx.process.heap;
    let mut bytes = Vec::new();
    if let Some(a) = chars.as_atom() {
        bytes.extend_from_slice(a.name().as_bytes());
    } else {
        chardata_bytes(heap, chars, &mut bytes).ok_or(BifError::Badarg)?;
    }
    emit(device, &bytes)?;
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn put_chars_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    put_chars(ctx, Term::atom(Atom::STANDARD_IO), args[0])
}

pub fn put_chars_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    put_chars(ctx, args[0], args[1])
}

pub fn nl_0(ctx: &mut Context, _: &mut [Term]) -> BifResult {
    output::write_stdout(b"\n");
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn write_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let s = super::fmt::write(&ctx.process.heap, args[0]);
    output::write_stdout(s.as_bytes());
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn lib_format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let text = super::fmt::format(&ctx.process.heap, args[0], args[1]).ok_or(BifError::Badarg)?;
    make_string(ctx, &text, args)
}
