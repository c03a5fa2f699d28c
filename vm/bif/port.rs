//! Ports, for standard output only (sockets are ports too, numbered
//! from the same count: `runtime::sockets`): `open_port({fd, 0, 1}, [out, ...])`
//! gives a port whose commands write raw bytes to stdout, in order with
//! io output (the benchmarks game's fasta writes this way). Any other
//! port is `badarg`, with a line on stderr saying why.
//!
//! A port is a reference whose id is at `PORT_BASE` or above; the printer
//! shows it as `#Port<0.N>`.

use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::runtime::output;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Reference ids from here on are ports.
pub const PORT_BASE: u64 = 1 << 62;

/// The next port number (OTP's first user port is #Port<0.5>).
static NEXT: AtomicU64 = AtomicU64::new(5);

/// A fresh port number (sockets number theirs from the same count).
pub fn next_number() -> u64 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn open_ports() -> std::sync::MutexGuard<'static, HashSet<u64>> {
    static OPEN: OnceLock<Mutex<HashSet<u64>>> = OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The port number of a port term.
pub fn port_of(heap: &Heap, t: Term) -> Option<u64> {
    match heap.view(t) {
        View::Ref(id) if id >= PORT_BASE => Some(id - PORT_BASE),
        _ => None,
    }
}

/// `is_port/1`.
pub fn is_port_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(Term::boolean(port_of(&ctx.process.heap, args[0]).is_some()))
}

fn refuse(why: &str) -> BifError {
    output::write_stderr(format!("act: open_port: {why}\n").as_bytes());
    BifError::Badarg
}

pub fn open_port_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let ok_name = match heap.view(args[0]) {
        View::Tuple([fd, input, out]) => {
            fd.as_atom().map(|a| a.name()) == Some("fd")
                && input.as_small().is_some()
                && out.as_small() == Some(1)
        }
        _ => false,
    };
    if !ok_name {
        return Err(refuse(
            "act has ports for standard output only: open_port({fd, 0, 1}, [out, binary])",
        ));
    }
    let settings = super::erlang::list_elements(heap, args[1]).ok_or(BifError::Badarg)?;
    for s in settings {
        let fine = match heap.view(s) {
            View::Atom(a) => matches!(
                a.name(),
                "out" | "binary" | "stream" | "eof" | "hide" | "exit_status" | "use_stdio"
            ),
            View::Tuple([k, _]) => k.as_atom().is_some(),
            _ => false,
        };
        if !fine {
            return Err(BifError::Badarg);
        }
    }
    let n = next_number();
    open_ports().insert(n);
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(PORT_BASE + n))
}

/// Writes iodata to stdout through an open port.
fn command(heap: &Heap, port: u64, data: Term) -> Result<(), BifError> {
    if !open_ports().contains(&port) {
        return Err(BifError::Badarg);
    }
    let mut bytes = Vec::new();
    let mut stack = vec![data];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(h, tail) => {
                stack.push(tail);
                match h.as_small() {
                    Some(c) => bytes.push(u8::try_from(c).map_err(|_| BifError::Badarg)?),
                    None => stack.push(h),
                }
            }
            View::Binary(b) => bytes.extend_from_slice(b),
            _ => return Err(BifError::Badarg),
        }
    }
    output::write_stdout(&bytes);
    Ok(())
}

pub fn port_command_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let port = port_of(heap, args[0]).ok_or(BifError::Badarg)?;
    command(heap, port, args[1])?;
    Ok(Term::TRUE)
}

pub fn port_close_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let port = port_of(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    if !open_ports().remove(&port) {
        return Err(BifError::Badarg);
    }
    Ok(Term::TRUE)
}

/// `Port ! {Pid, {command, Data}}` (and `{Pid, close}`): `None` if `to`
/// is no port.
pub fn send(ctx: &mut Context, to: Term, message: Term) -> Option<BifResult> {
    let heap = &ctx.process.heap;
    let port = port_of(heap, to)?;
    let result = match heap.view(message) {
        View::Tuple([from, request]) if from.is_pid() => match heap.view(*request) {
            View::Tuple([tag, data]) if tag.as_atom() == Some(Atom::intern("command")) => {
                command(heap, port, *data).map(|()| message)
            }
            View::Atom(a) if a.name() == "close" => {
                open_ports().remove(&port);
                Ok(message)
            }
            _ => Err(BifError::Badarg),
        },
        _ => Err(BifError::Badarg),
    };
    Some(result)
}
