//! BIFs of escript-facing behaviour the rest of the table lacks:
//! `halt/2`, and the death of the main process by its own exit signal.

use super::{BifError, BifResult, Context};
use crate::sched::Pid;
use crate::term::Term;
use crate::term::atom::Atom;

/// `halt(Status, Options)`: `halt/1` after checking the options (a proper
/// list of `{flush, Boolean}`; output written so far is always flushed).
pub fn halt_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let mut rest = args[1];
    while rest.is_cons() {
        let (head, tail) = heap.cons_parts(rest);
        let ok = heap.as_tuple(head).is_some_and(|e| {
            e.len() == 2 && e[0] == Term::atom(Atom::intern("flush")) && e[1].as_bool().is_some()
        });
        if !ok {
            return Err(BifError::Badarg);
        }
        rest = tail;
    }
    if rest != Term::NIL {
        return Err(BifError::Badarg);
    }
    super::erlang::halt_1(ctx, &mut args[..1])
}

/// `exit(self(), Reason)` in the script's main process, which the signal
/// kills (it cannot be caught): escript's boot process dies with it, the
/// runtime writes its slogan on stdout and exits with status 1. `None`
/// for any other process.
/// Whether `pid` is the script's main process: the first the table made
/// (see `sched::table`).
pub fn is_main(pid: Pid) -> bool {
    pid.slot() == 0 && pid.generation() == 0
}

pub fn main_killed(ctx: &Context, me: Pid, kill: bool, reason: Term) -> Option<BifError> {
    if !is_main(me) {
        return None;
    }
    let text = if kill {
        "killed".to_string()
    } else {
        crate::term::print::display(&ctx.process.heap, reason)
    };
    let slogan = format!("{{\"init terminating in do_boot\",{text}}}\r\n");
    crate::runtime::output::write_stdout(slogan.as_bytes());
    crate::runtime::output::write_stderr(format!("act: main process killed: {text}\n").as_bytes());
    Some(BifError::Halt(1))
}
