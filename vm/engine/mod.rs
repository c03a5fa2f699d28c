//! The engine contract: how a scheduler runs a process, whichever engine
//! executes its code.
//!
//! A scheduler calls `run(process, registers, budget)` and gets back an
//! `Outcome`: the budget of reductions is spent (`Yield`), a receive waits
//! (`Wait`, `WaitTimeout`), the process ended (`Exit`) or asked to end the
//! program (`Halt`). Two engines keep this contract over the same process
//! state (X registers, Y slots in `process.stack`, frames, heap, catches,
//! `process.ip` in `process.module`):
//!
//! - the interpreter (`crate::interp`), the reference: it runs every
//!   instruction;
//! - the native tier (`crate::native`), which compiles a function's
//!   bytecode to machine code with Cranelift and runs that.
//!
//! Both charge reductions at calls (`interp::cost`), yield at the same
//! points, collect only at heap tests and in the shared operations
//! (`ops`) with the same roots, and leave raising exceptions, receives
//! and the rarer instructions to the interpreter: native code that meets
//! one stops *before* it with all state in place ("bails out"), and the
//! interpreter runs it. So the two always agree, and a process may move
//! between them at any instruction boundary. It moves to native code at
//! calls and returns that reach a native entry (a function's first
//! instruction, or the instruction after one of its calls), and back at
//! a bail-out or a call the native code does not make itself.
//!
//! Which engine runs is chosen once per program (`set_mode`): `interp`,
//! `native` (compile each function at its first call) or `auto` (compile
//! functions once they are hot).

pub mod bits;
pub mod ops;

use crate::interp::{self, Registers, Step};
use crate::process::Process;
use std::sync::atomic::{AtomicU8, Ordering};

pub use crate::interp::{ExitKind, Outcome};

/// Which engine runs act code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The interpreter alone.
    Interp,
    /// Native code for every function it can compile, at its first call.
    Native,
    /// The interpreter, and native code for functions that get hot.
    Auto,
}

impl Mode {
    /// The mode named on the command line or in `ACT_ENGINE`.
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "interp" => Some(Mode::Interp),
            "native" => Some(Mode::Native),
            "auto" => Some(Mode::Auto),
            _ => None,
        }
    }
}

/// The mode, as `Mode as u8`; set before any process runs.
static MODE: AtomicU8 = AtomicU8::new(Mode::Auto as u8);

/// Chooses the engine for the rest of the program. The native tier is
/// used only where Cranelift supports the machine.
pub fn set_mode(mode: Mode) {
    let mode = if mode != Mode::Interp && !crate::native::supported() {
        Mode::Interp
    } else {
        mode
    };
    MODE.store(mode as u8, Ordering::Relaxed);
}

/// The engine in use.
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        0 => Mode::Interp,
        1 => Mode::Native,
        _ => Mode::Auto,
    }
}

/// Runs `process` for at most `budget` reductions: the contract.
pub fn run(p: &mut Process, regs: &mut Registers, budget: usize) -> Outcome {
    if mode() == Mode::Interp {
        return interp::run(p, regs, budget);
    }
    p.reductions = 0;
    p.reduction_budget = budget;
    let outcome = loop {
        if let Some(outcome) = crate::native::run(p, regs, budget) {
            break outcome;
        }
        if let Step::Done(outcome) = interp::resume(p, regs, budget, true) {
            break outcome;
        }
    };
    p.total_reductions += p.reductions as u64;
    outcome
}
