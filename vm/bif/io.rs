//! The `io` and `io_lib` modules' output: formatted text to standard
//! output, standard error or an open file, in the device's encoding
//! (`runtime::output`). Reading is `input.rs`.

use super::io_server::Request;
use super::{BifError, BifResult, Context};
use crate::heap::Heap;
use crate::runtime::output;
use crate::term::view::View;
use crate::term::{Atom, Term};

/// Writes characters to `device`: standard_io (and `user`, a pid that is
/// no open file: the group leader), standard_error, or an open file; the
/// pid of an io server that has ended raises `terminated`.
///
/// A process whose group leader is on another node (`dist::gl`) writes
/// standard_io there, as does output to a pid of another node.
fn emit(heap: &Heap, device: Term, text: &str) -> Result<(), BifError> {
    if crate::runtime::nodes::remote_group_leaders() || device.is_boxed() {
        let me = || super::process::services(|s| s.self_pid());
        if device.as_atom() == Some(Atom::STANDARD_IO)
            && crate::runtime::nodes::put_chars_remote(me(), text)
        {
            return Ok(());
        }
        if let View::ExtPid { node, id } = heap.view(device) {
            crate::runtime::nodes::put_chars_at(me(), node, id, text);
            return Ok(());
        }
    }
    match device.as_atom() {
        Some(Atom::STANDARD_IO) => output::write_text(text),
        Some(a) if a.name() == "user" => output::write_text(text),
        Some(Atom::STANDARD_ERROR) => {
            let mut bytes = Vec::new();
            output::encode(text.chars(), &mut bytes);
            output::write_stderr(&bytes);
        }
        Some(_) => return Err(BifError::Badarg),
        None => {
            let chars: Vec<char> = text.chars().collect();
            match super::file::write_device(heap, device, &chars) {
                Some(Ok(())) => {}
                Some(Err(())) => return Err(BifError::Badarg),
                // An io server that has ended: OTP's io raises terminated.
                None if super::input::is_gone(device) => {
                    return Err(BifError::Raise(
                        crate::process::Class::Error,
                        Term::atom(Atom::intern("terminated")),
                    ));
                }
                None if device.is_pid() => output::write_text(text),
                None => return Err(BifError::Badarg),
            }
        }
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
    emit(&ctx.process.heap, device, &text)?;
    end_slice(ctx);
    Ok(Term::OK)
}

/// The act process that output to `device` goes to, if any (see
/// `io_server`).
fn server(ctx: &Context, device: Term) -> Option<crate::sched::Pid> {
    super::io_server::server_for(ctx, device)
}

pub fn format_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, Term::atom(Atom::STANDARD_IO)) {
        return super::io_server::send(ctx, to, Request::Format(0, None), args);
    }
    format_to(ctx, Term::atom(Atom::STANDARD_IO), args[0], Term::NIL)
}

pub fn format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, Term::atom(Atom::STANDARD_IO)) {
        return super::io_server::send(ctx, to, Request::Format(0, Some(1)), args);
    }
    format_to(ctx, Term::atom(Atom::STANDARD_IO), args[0], args[1])
}

pub fn format_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, args[0]) {
        return super::io_server::send(ctx, to, Request::Format(1, Some(2)), args);
    }
    format_to(ctx, args[0], args[1], args[2])
}

/// The characters of unicode chardata, as io:put_chars takes it: a
/// (deep) list of code points and UTF-8 binaries.
pub fn unicode_chars(heap: &Heap, t: Term) -> Option<Vec<char>> {
    let mut out = Vec::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(h, tail) => {
                stack.push(tail);
                match h.as_small() {
                    Some(c) => out.push(char::from_u32(u32::try_from(c).ok()?)?),
                    None => stack.push(h),
                }
            }
            View::Binary(b) => out.extend(std::str::from_utf8(b).ok()?.chars()),
            _ => return None,
        }
    }
    Some(out)
}

fn put_chars(ctx: &mut Context, device: Term, chars: Term) -> BifResult {
    let heap = &ctx.process.heap;
    let chars = unicode_chars(heap, chars).ok_or(BifError::Badarg)?;
    let text: String = chars.into_iter().collect();
    emit(heap, device, &text)?;
    end_slice(ctx);
    Ok(Term::OK)
}

/// Whether `device` names an io device rather than an open file:
/// standard_io, standard_error, user, or a pid (an io server).
pub fn is_io_device(device: Term) -> bool {
    match device.as_atom() {
        Some(Atom::STANDARD_IO | Atom::STANDARD_ERROR) => true,
        Some(a) => a.name() == "user",
        None => device.is_pid() || device.is_boxed(),
    }
}

/// `file:write/2` on an io device: bytes, each one character (latin1),
/// written in the device's encoding. `args[0]` is the device; an io
/// server gets `{put_chars, latin1, Binary}` of the bytes, as OTP sends.
pub fn put_latin1(ctx: &mut Context, args: &mut [Term], bytes: &[u8]) -> BifResult {
    if let Some(to) = server(ctx, args[0]) {
        ctx.ensure(crate::heap::words_for_binary(bytes.len()), args)?;
        args[1] = ctx.heap().binary(bytes);
        return super::io_server::send(ctx, to, Request::Latin1(1), args);
    }
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    emit(&ctx.process.heap, args[0], &text)?;
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn put_chars_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, Term::atom(Atom::STANDARD_IO)) {
        return super::io_server::send(ctx, to, Request::Chars(Some(0)), args);
    }
    put_chars(ctx, Term::atom(Atom::STANDARD_IO), args[0])
}

pub fn put_chars_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, args[0]) {
        return super::io_server::send(ctx, to, Request::Chars(Some(1)), args);
    }
    put_chars(ctx, args[0], args[1])
}

pub fn nl_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, Term::atom(Atom::STANDARD_IO)) {
        return super::io_server::send(ctx, to, Request::Chars(None), args);
    }
    output::write_stdout(b"\n");
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn nl_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, args[0]) {
        return super::io_server::send(ctx, to, Request::Chars(None), args);
    }
    emit(&ctx.process.heap, args[0], "\n")?;
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn write_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, Term::atom(Atom::STANDARD_IO)) {
        return super::io_server::send(ctx, to, Request::Write(0), args);
    }
    let s = super::fmt::write(&ctx.process.heap, args[0]);
    output::write_text(&s);
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn write_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(to) = server(ctx, args[0]) {
        return super::io_server::send(ctx, to, Request::Write(1), args);
    }
    let s = super::fmt::write(&ctx.process.heap, args[1]);
    emit(&ctx.process.heap, args[0], &s)?;
    end_slice(ctx);
    Ok(Term::OK)
}

pub fn lib_format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // OTP's result is a deep list whose shape shows under ~p.
    super::deep_format::lib_format_2(ctx, args)
}
