//! Writing terms and io_lib:format for the BIFs: a thin bridge to the
//! printer and format engine of `term`, plus how this runtime names funs
//! and pids.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::heap::Heap;
use crate::term::{Term, format, print};

/// `~w`
pub fn write(heap: &Heap, t: Term) -> String {
    print::write(heap, t)
}

/// `~p` at the start of an 80-column line (as the "Error in process"
/// report prints its exit value).
pub fn print(heap: &Heap, t: Term) -> String {
    install_namer();
    print::print(heap, t, 0, 80)
}

/// `io_lib:format(Format, Args)` flattened to a string; `None` is badarg.
pub fn format(heap: &Heap, fmt: Term, args: Term) -> Option<String> {
    install_namer();
    format::format_term(heap, fmt, args).ok()
}

/// Funs print as `#Fun<Module.Index.0>` (BEAM adds a hash where we put 0).
pub(super) fn install_namer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        print::set_namer(print::Namer {
            fun: |index| match crate::runtime::fun_entry(index) {
                Some(e) if e.module.name.name() == "erl_eval" => erl_eval_fun(e),
                Some(e) => format!("#Fun<{}.{}.0>", e.module.name.name(), e.fun),
                None => format!("#Fun<act.{index}.0>"),
            },
            pid: pid_text,
        })
    });
}

/// A fun that erl_eval made for evaluated code prints as OTP 25's
/// erl_eval funs do: `#Fun<erl_eval.N.3316493>`, N by arity (43 - arity,
/// or 20 - arity for a named fun; stdlib/erl_eval.act makes those two
/// kinds in `make_fun` and `make_named_fun`).
fn erl_eval_fun(e: &crate::runtime::FunEntry) -> String {
    let def = &e.module.funs[e.fun as usize];
    let function = e.module.functions[def.function as usize].name.name();
    let base = if function.contains("make_named_fun") {
        20
    } else if function.contains("make_fun") {
        43
    } else {
        return format!("#Fun<erl_eval.{}.0>", e.fun);
    };
    let n = base - i64::from(def.arity);
    format!("#Fun<erl_eval.{n}.3316493>")
}

/// Whether the script said `-mode(compile).`: escript then numbers the
/// first process the script spawns 80, and 79 when it interprets it.
static COMPILED_SCRIPT: AtomicBool = AtomicBool::new(true);

/// Records the script's escript mode (see `COMPILED_SCRIPT`).
pub fn set_compiled_script(compiled: bool) {
    COMPILED_SCRIPT.store(compiled, Ordering::Relaxed);
}

/// BEAM's group leader of a script, as `group_leader()` names it.
pub const GROUP_LEADER_SLOT: u64 = u32::MAX as u64 - 1;
const GROUP_LEADER_NUMBER: u64 = 65;
/// escript's main process.
const MAIN_NUMBER: u64 = 9;
/// BEAM's pid numbers wrap into the serial field at 2^15.
const NUMBER_WRAP: u64 = 1 << 15;

fn first_spawn_number() -> u64 {
    if COMPILED_SCRIPT.load(Ordering::Relaxed) {
        80
    } else {
        79
    }
}

/// `<0.N.S>` for a pid's identity word. The generation is the spawn
/// serial (see `sched::table`): the main process is escript's `<0.9.0>`
/// and the n-th process spawned after it gets the number BEAM gives it
/// in a script that starts no other processes.
fn pid_text(id: u64) -> String {
    let (slot, serial) = (id & 0xffff_ffff, id >> 32);
    let number = if slot == GROUP_LEADER_SLOT && serial == 0 {
        GROUP_LEADER_NUMBER
    } else if serial == 0 {
        MAIN_NUMBER
    } else {
        serial - 1 + first_spawn_number()
    };
    format!("<0.{}.{}>", number % NUMBER_WRAP, number / NUMBER_WRAP)
}

/// The spawn serial `pid_text` printed as `<0.Number.Serial>`, if any
/// process can have it (`None` for the group leader).
pub fn serial_of_printed(number: u64, serial: u64) -> Option<u64> {
    let n = serial.checked_mul(NUMBER_WRAP)?.checked_add(number)?;
    match n {
        GROUP_LEADER_NUMBER if serial == 0 => None,
        MAIN_NUMBER => Some(0),
        _ => n.checked_sub(first_spawn_number()).map(|s| s + 1),
    }
}
