//! The interpreter: one dispatch loop over the bytecode of `code`.
//!
//! Calls never recurse on the Rust stack: a call pushes a `Frame` on the
//! process and the loop goes on at the callee; `return` pops it. Tail
//! calls push nothing, so a loop runs in constant memory. Reductions are
//! charged in one place (`charge!`), at calls, with the named costs
//! below; when the budget is spent the process yields at its next call.
//!
//! Invariants:
//! - Every X register below `Registers::used` holds a valid term of the
//!   running process (or an immediate); they are all GC roots, so a
//!   collection anywhere keeps them valid.
//! - Code runs in pinned module versions (`ModuleRef`): they are never
//!   freed, so the loop, frames, catches and call caches hold plain
//!   references and a call between modules updates no reference count.

mod exception;

use crate::bif::{self, BifError, Context};
use crate::code::{ArithOp, CmpOp, Instr, Label, Module, ModuleRef, SRC_X, SRC_Y, Src, Tail};
use crate::engine::ops::{
    self, FloatOp, arith_number, arith_slow, arith_small, compare, eq, exact_eq, import_target,
    regs_used, resolve_export, type_test,
};
use crate::process::{CatchKind, Class, Frame, Process};
use crate::term::arith;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::cmp::Ordering;

pub use exception::{ShownFrame, current_stacktrace, format_exception, stacktrace_entries};

/// Reductions a process may spend before it yields (BEAM's value).
pub const CONTEXT_REDS: usize = 4000;

/// Named reduction costs.
pub mod cost {
    pub const CALL: usize = 1;
    pub const BIF: usize = 1;
    pub const GC: usize = 10;
}

pub use crate::code::X_REGISTERS;

/// The X registers of a scheduler.
pub struct Registers {
    pub x: Vec<Term>,
    /// Registers at or above this index are never read before written.
    pub used: usize,
}

impl Default for Registers {
    fn default() -> Self {
        Registers::new()
    }
}

impl Registers {
    pub fn new() -> Registers {
        Registers {
            x: vec![Term::NIL; X_REGISTERS],
            used: 4,
        }
    }
}

/// Why `run` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The reduction budget is spent; run again to continue. Only
    /// x[0..process.live_x] are live (the arguments of the call it
    /// stopped at): a scheduler saves those and may reuse the rest.
    Yield,
    /// A receive found no message; resume at `process.ip` when one comes.
    Wait,
    /// A receive with a timeout found no message; after `ms` milliseconds
    /// without one, resume at `process.timeout_ip`.
    WaitTimeout(u64),
    /// The process finished: normally (its first function returned, the
    /// value in x0) or by an uncaught exception (in `process.exception()`).
    Exit(ExitKind),
    /// `halt(Status)` was called.
    Halt(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    Normal,
    Exception,
}

/// Control after an exception or a dynamic call.
enum Flow {
    Continue,
    Stop(Outcome),
}

/// Runs `process` for at most `budget` reductions in the interpreter
/// alone (the `interp` engine; `crate::engine::run` is the contract the
/// schedulers use).
pub fn run(p: &mut Process, regs: &mut Registers, budget: usize) -> Outcome {
    p.reductions = 0;
    p.reduction_budget = budget;
    let outcome = match resume(p, regs, budget, false) {
        Step::Done(outcome) => outcome,
        // Unreachable with `tier` off; running on is always correct.
        Step::Native => run_rest(p, regs, budget),
    };
    p.total_reductions += p.reductions as u64;
    outcome
}

fn run_rest(p: &mut Process, regs: &mut Registers, budget: usize) -> Outcome {
    loop {
        if let Step::Done(outcome) = resume(p, regs, budget, false) {
            return outcome;
        }
    }
}

/// How an interpreter run ended.
pub enum Step {
    /// As the engine contract says (see `Outcome`).
    Done(Outcome),
    /// A call or return reached code with a native entry at
    /// `process.ip`: the engine runs it there (only with `tier` on).
    Native,
}

/// Interprets `process` from `process.ip` in `process.module`, with the
/// reductions already spent in this slice (`process.reductions`) counted
/// against `budget`. With `tier` on, calls are counted for the native
/// tier and a call or return that reaches native code hands over.
pub fn resume(p: &mut Process, regs: &mut Registers, budget: usize, tier: bool) -> Step {
    let mut module = p.module;
    let mut ip = p.ip as usize;
    let step = interpret(p, regs, budget, &mut module, &mut ip, tier);
    p.ip = ip as u32;
    p.module = module;
    step
}

macro_rules! get {
    ($p:expr, $x:expr, $m:expr, $s:expr) => {{
        let s: Src = $s;
        match s.kind() {
            // The mask is exact (the verifier keeps X operands below
            // X_REGISTERS) and lets the compiler drop the bounds check.
            SRC_X => $x[s.index() & (X_REGISTERS - 1)],
            SRC_Y => $p.stack[$p.y_base as usize + s.index()],
            _ => $m.literals[s.index()],
        }
    }};
}

macro_rules! put {
    ($p:expr, $x:expr, $d:expr, $v:expr) => {{
        let v: Term = $v;
        let d = $d;
        if d.is_y() {
            let i = $p.y_base as usize + d.index();
            $p.stack[i] = v;
        } else {
            $x[d.index() & (X_REGISTERS - 1)] = v;
        }
    }};
}

/// Pops a frame: returns to the caller, or ends the process.
#[inline]
fn do_return(p: &mut Process, module: &mut ModuleRef, ip: &mut usize) -> Option<Outcome> {
    match p.frames.pop() {
        Some(f) => {
            *ip = f.return_ip as usize;
            p.y_base = f.y_base;
            *module = f.module;
            None
        }
        None => Some(Outcome::Exit(ExitKind::Normal)),
    }
}

fn interpret(
    p: &mut Process,
    regs: &mut Registers,
    budget: usize,
    module: &mut ModuleRef,
    ip_slot: &mut usize,
    tier: bool,
) -> Step {
    if regs.x.len() != X_REGISTERS {
        regs.x.resize(X_REGISTERS, Term::NIL);
    }
    // A fixed-size array, so register indices masked to its size need
    // no bounds check.
    let Ok(x) = <&mut [Term; X_REGISTERS]>::try_from(&mut regs.x[..]) else {
        return Step::Done(Outcome::Exit(ExitKind::Exception));
    };
    // The instruction pointer lives in a local (a register); helpers that
    // move it get it through `ip_slot`, synchronised around each call.
    let mut ip: usize = *ip_slot;
    // The engine starts the interpreter where native code does not go on
    // (a bail-out may stop at an entry): only later arrivals hand over.
    let mut arrived = false;
    'outer: loop {
        // The current module's code in locals; a call or return that
        // changes modules goes round the outer loop to reload them.
        let m: ModuleRef = *module;
        if tier && arrived && m.tier.has_entry(ip) {
            *ip_slot = ip;
            return Step::Native;
        }
        arrived = true;
        let code: &'static [Instr] = &m.get().code;
        // Entering a module's code (at the start, or after a call or
        // return switched modules) is where `ip` is checked; inside, every
        // way it moves stays in the code (see the invariants of `Module`).
        let entered_in_code = ip < code.len();
        // Charges reductions for a call; yields when the budget is spent. The
        // call's effect is already done, so resuming continues at the callee.
        macro_rules! charge {
            ($cost:expr, $live:expr) => {{
                p.reductions += $cost;
                if p.reductions >= budget {
                    *ip_slot = ip;
                    p.live_x = $live as u32;
                    return Step::Done(Outcome::Yield);
                }
            }};
        }
        // After a local call or return: counts a call towards compiling
        // its callee, and hands over to native code found at `ip`.
        macro_rules! arrive {
            ($call:expr, $live:expr) => {{
                if tier {
                    if let Some(function) = $call {
                        crate::native::count_call(m, function);
                    }
                    if m.tier.has_entry(ip) {
                        *ip_slot = ip;
                        p.live_x = $live as u32;
                        return Step::Native;
                    }
                }
            }};
        }
        macro_rules! raise {
            ($class:expr, $reason:expr) => {{
                *ip_slot = ip;
                let r = exception::raise(p, x, module, ip_slot, $class, $reason, None);
                ip = *ip_slot;
                match r {
                    Flow::Continue => {
                        if !m.same(*module) {
                            continue 'outer;
                        }
                        continue;
                    }
                    Flow::Stop(o) => return Step::Done(o),
                }
            }};
        }
        macro_rules! error_tuple {
            ($tag:expr, $value:expr) => {{
                let value = $value;
                flow!(raise_error_tuple(p, x, module, ip_slot, $tag, value))
            }};
        }
        // An operator that fails outside a guard names itself and its
        // operands on top of the trace, as BEAM's `{erlang, '+', [A, B], _}`.
        // The operands are read again: the failed attempt may have collected.
        macro_rules! arith_fail {
            ($fail:expr, $reason:expr, $op:expr, $a:expr, $b:expr) => {{
                let fail: Label = $fail;
                if fail != Label::RAISE {
                    ip = fail.0 as usize;
                    continue;
                }
                let args = [get!(p, x, m, $a), get!(p, x, m, $b)];
                // A float operation on two numbers (`/` by zero, a result
                // past the float range) fails in BEAM's float instructions,
                // not in the operator's BIF: no `erlang` frame on top.
                if $reason == Term::atom(Atom::BADARITH)
                    && matches!($op, "/" | "+" | "-" | "*")
                    && m.name.name() != crate::code::module::SHELL_MODULE
                    && args.iter().all(|&t| p.heap.is_number(t))
                {
                    flow!(exception::raise(
                        p,
                        x,
                        module,
                        ip_slot,
                        Class::Error,
                        $reason,
                        None
                    ))
                }
                let unary =
                    $op == "-" && $a.kind() == crate::code::SRC_LIT && args[0] == Term::small(0);
                let args = if unary { &args[1..] } else { &args[..] };
                flow!(exception::raise_bif(
                    p,
                    x,
                    module,
                    ip_slot,
                    Class::Error,
                    $reason,
                    Atom::ERLANG,
                    Atom::intern($op),
                    args
                ))
            }};
        }
        macro_rules! arith_arm {
            ($a:ident, $b:ident, $fail:ident, $dst:ident, $fast:ident, $slow:ident, $op:literal) => {{
                let (va, vb) = (get!(p, x, m, $a), get!(p, x, m, $b));
                if let Some(r) = arith::$fast(va, vb) {
                    put!(p, x, $dst, r);
                    continue;
                }
                match arith_number(p, x, &m, FloatOp::$slow, va, vb) {
                    Ok(v) => put!(p, x, $dst, v),
                    Err(reason) => arith_fail!($fail, reason, $op, $a, $b),
                }
            }};
        }
        macro_rules! flow {
            ($e:expr) => {{
                *ip_slot = ip;
                let r = $e;
                ip = *ip_slot;
                match r {
                    Flow::Continue => {
                        if !m.same(*module) {
                            continue 'outer;
                        }
                        continue;
                    }
                    Flow::Stop(o) => return Step::Done(o),
                }
            }};
        }
        // A remote call: as `flow!`, and the call counts towards
        // compiling its callee, and a call into the same module arrives
        // as a local one does (`arrive!`), handing over to the callee's
        // native code (`?MODULE:loop(State)` loops stayed interpreted).
        macro_rules! flow_call {
            ($e:expr, $live:expr) => {{
                *ip_slot = ip;
                let r = $e;
                ip = *ip_slot;
                match r {
                    Flow::Continue => {
                        if !m.same(*module) {
                            // The outer loop hands over to native code.
                            if tier && let Some(i) = ip.checked_sub(1) {
                                crate::native::count_call(*module, Label(i as u32));
                            }
                            continue 'outer;
                        }
                        arrive!(ip.checked_sub(1).map(|i| Label(i as u32)), $live);
                        continue;
                    }
                    Flow::Stop(o) => return Step::Done(o),
                }
            }};
        }
        if !entered_in_code {
            raise!(Class::Error, Term::atom(Atom::UNDEF));
        }
        loop {
            // SAFETY: `ip < code.len()`. It was checked above on entering
            // this code; within it, `ip` only steps past an instruction
            // that falls through (never the last one), or jumps to a label,
            // a handler or one past a call target's `FuncInfo` (all inside
            // the code, as `Module::new` verified), or returns to a frame
            // pushed after a call in this same code, which falls through.
            // Any change of module goes round the outer loop and its check.
            let instr: &Instr = unsafe { code.get_unchecked(ip) };
            ip += 1;
            match *instr {
                Instr::FuncInfo { .. } => {}
                // The stack trace's line is this instruction's: the
                // compiler gives it the function's first clause, as BEAM.
                Instr::FunctionClause { function } => {
                    flow!(function_clause(p, x, module, ip_slot, function))
                }
                Instr::Allocate { slots, .. } => {
                    if p.stack.len() + slots as usize > p.stack.capacity()
                        && p.grow_stack(slots as usize).is_err()
                    {
                        raise!(Class::Error, Term::atom(Atom::SYSTEM_LIMIT))
                    }
                    p.y_base = p.stack.len() as u32;
                    // Frames are small: a fixed-size copy of []s beats
                    // `resize`'s generic fill loop.
                    const NILS: [Term; 8] = [Term::NIL; 8];
                    if slots as usize <= NILS.len() {
                        p.stack.extend_from_slice(&NILS[..slots as usize]);
                    } else {
                        p.stack.resize(p.stack.len() + slots as usize, Term::NIL);
                    }
                }
                Instr::Deallocate {} => {
                    p.stack.truncate(p.y_base as usize);
                }
                Instr::Return {} => {
                    *ip_slot = ip;
                    let done = do_return(p, module, ip_slot);
                    ip = *ip_slot;
                    if let Some(o) = done {
                        return Step::Done(o);
                    }
                    if !m.same(*module) {
                        continue 'outer;
                    }
                    arrive!(None::<Label>, 1);
                }
                Instr::DeallocateReturn {} => {
                    p.stack.truncate(p.y_base as usize);
                    *ip_slot = ip;
                    let done = do_return(p, module, ip_slot);
                    ip = *ip_slot;
                    if let Some(o) = done {
                        return Step::Done(o);
                    }
                    if !m.same(*module) {
                        continue 'outer;
                    }
                    arrive!(None::<Label>, 1);
                }
                Instr::TestHeap { words, .. } => {
                    let used = regs_used(&m);
                    if p.ensure_heap(words as usize, &mut x[..used], &mut [])
                        .is_err()
                    {
                        raise!(Class::Error, Term::atom(Atom::SYSTEM_LIMIT))
                    }
                }
                Instr::Move { src, dst } => {
                    let v = get!(p, x, m, src);
                    put!(p, x, dst, v);
                }
                Instr::Move2 { a, to_a, b, to_b } => {
                    let v = get!(p, x, m, a);
                    put!(p, x, to_a, v);
                    let v = get!(p, x, m, b);
                    put!(p, x, to_b, v);
                }
                Instr::Swap { a, b } => {
                    let va = get!(p, x, m, a.src());
                    let vb = get!(p, x, m, b.src());
                    put!(p, x, a, vb);
                    put!(p, x, b, va);
                }
                Instr::Jump { to } => ip = to.0 as usize,

                Instr::Call { target, arity } => {
                    if p.frames.len() == p.frames.capacity() && p.grow_frames().is_err() {
                        raise!(Class::Error, Term::atom(Atom::SYSTEM_LIMIT))
                    }
                    p.frames.push(Frame {
                        return_ip: ip as u32,
                        y_base: p.y_base,
                        module: m,
                    });
                    ip = target.0 as usize + 1;
                    charge!(cost::CALL, arity);
                    arrive!(Some(target), arity);
                }
                Instr::CallLast { target, arity } => {
                    p.stack.truncate(p.y_base as usize);
                    ip = target.0 as usize + 1;
                    charge!(cost::CALL, arity);
                    arrive!(Some(target), arity);
                }
                Instr::CallOnly { target, arity } => {
                    ip = target.0 as usize + 1;
                    charge!(cost::CALL, arity);
                    arrive!(Some(target), arity);
                }
                Instr::CallExt { arity, import } => {
                    flow_call!(
                        call_import(p, x, module, ip_slot, import, arity, Tail::No),
                        arity
                    )
                }
                Instr::CallExtLast { arity, import } => {
                    flow_call!(
                        call_import(p, x, module, ip_slot, import, arity, Tail::Last),
                        arity
                    )
                }
                Instr::CallExtOnly { arity, import } => {
                    flow_call!(
                        call_import(p, x, module, ip_slot, import, arity, Tail::Only),
                        arity
                    )
                }
                Instr::CallFun { arity, tail } => {
                    flow!(call_fun(p, x, module, ip_slot, arity as usize, tail));
                }
                Instr::Apply { arity, tail } => {
                    let (m, f) = (x[arity as usize], x[arity as usize + 1]);
                    match (m.as_atom(), f.as_atom()) {
                        (Some(m), Some(f)) => {
                            flow!(call_mfa(p, x, module, ip_slot, m, f, arity as usize, tail))
                        }
                        _ => raise!(Class::Error, Term::atom(Atom::BADARG)),
                    }
                }
                Instr::ApplyList { tail } => flow!(apply_list(p, x, module, ip_slot, tail)),
                Instr::ApplyFunList { tail } => {
                    flow!(apply_fun_list(p, x, module, ip_slot, tail))
                }
                Instr::Bif {
                    bif: index,
                    args,
                    fail,
                    dst,
                    ..
                } => {
                    let entry = &bif::TABLE[index as usize];
                    let arity = entry.arity as usize;
                    let mut a = [Term::NIL; bif::MAX_ARITY];
                    for (i, slot) in a.iter_mut().enumerate().take(arity) {
                        *slot = get!(p, x, m, m.operand_lists[args as usize + i]);
                    }
                    let func = entry.func;
                    let used = regs_used(&m);
                    // Where the process is, for the BIFs that ask
                    // (`process_info(self(), current_function)`): the
                    // process's own fields are otherwise written only when
                    // the interpreter stops.
                    p.ip = ip as u32;
                    p.module = m;
                    let result = {
                        let mut ctx = Context {
                            process: p,
                            x: &mut x[..used],
                        };
                        func(&mut ctx, &mut a[..arity])
                    };
                    p.reductions += cost::BIF;
                    match result {
                        Ok(v) => {
                            put!(p, x, dst, v);
                            // Output and exit/2 end the time slice at once (see
                            // bif::ends_slice): every register in use is live.
                            if p.reductions >= budget && bif::ends_slice(entry) {
                                *ip_slot = ip;
                                p.live_x = used as u32;
                                return Step::Done(Outcome::Yield);
                            }
                        }
                        Err(e) => {
                            if fail != Label::RAISE {
                                ip = fail.0 as usize;
                                continue;
                            }
                            // A BIF that collected may have left its copy
                            // of the arguments stale; the operands are
                            // roots, so read them again for the error.
                            for (i, slot) in a.iter_mut().enumerate().take(arity) {
                                *slot = get!(p, x, m, m.operand_lists[args as usize + i]);
                            }
                            flow!(bif_error(
                                p,
                                x,
                                module,
                                ip_slot,
                                e,
                                Some((index, &a[..arity]))
                            ))
                        }
                    }
                }

                // x[dst] := x[a] op x[b]: the small-integer fast path
                // inline, anything else through `arith` and the heap.
                Instr::Add { a, b, fail, dst } => arith_arm!(a, b, fail, dst, add_small, add, "+"),
                Instr::Sub { a, b, fail, dst } => arith_arm!(a, b, fail, dst, sub_small, sub, "-"),
                Instr::Mul { a, b, fail, dst } => arith_arm!(a, b, fail, dst, mul_small, mul, "*"),
                Instr::Arith {
                    op,
                    a,
                    b,
                    fail,
                    dst,
                } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if let Some(v) = arith_small(op, va, vb) {
                        put!(p, x, dst, v);
                        continue;
                    }
                    let result = if op == ArithOp::Div {
                        arith_number(p, x, &m, FloatOp::divide, va, vb)
                    } else {
                        arith_slow(p, x, &m, ops::general(op), va, vb)
                    };
                    match result {
                        Ok(v) => put!(p, x, dst, v),
                        Err(reason) => {
                            arith_fail!(fail, reason, crate::runtime::explain::arith_name(op), a, b)
                        }
                    }
                }
                Instr::Compare { op, a, b, dst } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    let r = match op {
                        CmpOp::Eq => eq(p, va, vb),
                        CmpOp::Ne => !eq(p, va, vb),
                        CmpOp::ExactEq => exact_eq(p, va, vb),
                        CmpOp::ExactNe => !exact_eq(p, va, vb),
                        CmpOp::Lt => compare(p, va, vb) == Ordering::Less,
                        CmpOp::Le => compare(p, va, vb) != Ordering::Greater,
                        CmpOp::Gt => compare(p, va, vb) == Ordering::Greater,
                        CmpOp::Ge => compare(p, va, vb) != Ordering::Less,
                    };
                    put!(p, x, dst, Term::boolean(r));
                }

                Instr::IsLt { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if compare(p, va, vb) != Ordering::Less {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsGe { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if compare(p, va, vb) == Ordering::Less {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsEq { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if !eq(p, va, vb) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsNe { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if eq(p, va, vb) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsEqExact { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if !exact_eq(p, va, vb) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsNeExact { a, b, fail } => {
                    let (va, vb) = (get!(p, x, m, a), get!(p, x, m, b));
                    if exact_eq(p, va, vb) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsType { test, src, fail } => {
                    let v = get!(p, x, m, src);
                    if !type_test(p, test, v) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsTuple { src, arity, fail } => {
                    let v = get!(p, x, m, src);
                    if !p.heap.is_tuple_of_arity(v, arity as usize) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsTaggedTuple {
                    src,
                    arity,
                    tag,
                    fail,
                } => {
                    let v = get!(p, x, m, src);
                    let tagged = p.heap.is_tuple_of_arity(v, arity as usize)
                        && p.heap.tuple_elements(v).first() == Some(&Term::atom(tag));
                    if !tagged {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsCons { src, fail } => {
                    if !get!(p, x, m, src).is_cons() {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsNil { src, fail } => {
                    if !get!(p, x, m, src).is_nil() {
                        ip = fail.0 as usize;
                    }
                }
                Instr::IsFunction2 { src, arity, fail } => {
                    let (v, a) = (get!(p, x, m, src), get!(p, x, m, arity));
                    if !ops::is_function2(p, v, a) {
                        ip = fail.0 as usize;
                    }
                }
                Instr::SelectVal { src, table, fail } => {
                    let v = get!(p, x, m, src);
                    let t = &m.select_tables[table as usize];
                    ip = match t.values.binary_search_by_key(&v.0, |t| t.0) {
                        Ok(i) => t.targets[i].0 as usize,
                        Err(_) => fail.0 as usize,
                    };
                }
                Instr::SelectTupleArity { src, table, fail } => {
                    let v = get!(p, x, m, src);
                    let t = &m.select_tables[table as usize];
                    let arity = p.heap.as_tuple(v).map(|e| Term::small(e.len() as i64));
                    ip = match arity.and_then(|a| t.values.binary_search_by_key(&a.0, |t| t.0).ok())
                    {
                        Some(i) => t.targets[i].0 as usize,
                        None => fail.0 as usize,
                    };
                }

                Instr::IsConsGetList {
                    src,
                    fail,
                    head,
                    tail,
                } => {
                    let v = get!(p, x, m, src);
                    if v.is_cons() {
                        let (h, t) = p.heap.cons_parts(v);
                        put!(p, x, head, h);
                        put!(p, x, tail, t);
                    } else {
                        ip = fail.0 as usize;
                    }
                }
                Instr::GetList { src, head, tail } => {
                    let (h, t) = p.heap.cons_parts(get!(p, x, m, src));
                    put!(p, x, head, h);
                    put!(p, x, tail, t);
                }
                Instr::GetHd { src, dst } => {
                    let (h, _) = p.heap.cons_parts(get!(p, x, m, src));
                    put!(p, x, dst, h);
                }
                Instr::GetTl { src, dst } => {
                    let (_, t) = p.heap.cons_parts(get!(p, x, m, src));
                    put!(p, x, dst, t);
                }
                Instr::GetTupleElement { src, index, dst } => {
                    let v = p.heap.tuple_elements(get!(p, x, m, src))[index as usize];
                    put!(p, x, dst, v);
                }
                Instr::PutList { head, tail, dst } => {
                    let (h, t) = (get!(p, x, m, head), get!(p, x, m, tail));
                    let v = p.heap.cons(h, t);
                    put!(p, x, dst, v);
                }
                Instr::PutTuple {
                    arity,
                    elements,
                    dst,
                } => {
                    // Small tuples are built from fixed-size arrays, so the
                    // copy into the heap is a few stores, not a memcpy call.
                    macro_rules! fixed {
                        ($($i:literal)*) => {
                            p.heap.tuple(&[$(get!(p, x, m, m.operand_lists[elements as usize + $i])),*])
                        };
                    }
                    let v = if arity == 2 {
                        fixed!(0 1)
                    } else if arity == 3 {
                        fixed!(0 1 2)
                    } else if arity == 1 {
                        fixed!(0)
                    } else if arity == 4 {
                        fixed!(0 1 2 3)
                    } else {
                        put_tuple_large(p, x, &m, arity as usize, elements as usize)
                    };
                    put!(p, x, dst, v);
                }
                Instr::MakeFun { fun, captured, dst } => {
                    let v = make_fun(p, x, &m, fun, captured as usize);
                    put!(p, x, dst, v);
                }

                Instr::Try { handler, .. } | Instr::Catch { handler, .. } => {
                    let kind = if matches!(instr, Instr::Try { .. }) {
                        CatchKind::Try
                    } else {
                        CatchKind::Catch
                    };
                    p.push_catch(kind, handler.0, m, 0);
                }
                Instr::TryEnd { .. } | Instr::CatchEnd { .. } => {
                    p.pop_catch();
                }
                Instr::TryCase { .. } => {}
                Instr::BuildStacktrace {} => {
                    if x[2] == Term::RAW_TRACE {
                        x[2] = exception::build_trace(p, x, &m);
                    }
                }
                Instr::Raise {} => {
                    let class = x[0]
                        .as_atom()
                        .and_then(Class::from_atom)
                        .unwrap_or(Class::Error);
                    p.set_exception([x[0], x[1], x[2]]);
                    flow!(exception::unwind(p, x, module, ip_slot, class))
                }
                Instr::Badmatch { src } => error_tuple!(Atom::BADMATCH, get!(p, x, m, src)),
                Instr::CaseClause { src } => error_tuple!(Atom::CASE_CLAUSE, get!(p, x, m, src)),
                Instr::TryClause { src } => error_tuple!(Atom::TRY_CLAUSE, get!(p, x, m, src)),
                Instr::BadGenerator { src } => {
                    error_tuple!(Atom::BAD_GENERATOR, get!(p, x, m, src))
                }
                Instr::IfClause {} => raise!(Class::Error, Term::atom(Atom::IF_CLAUSE)),

                Instr::BsStart { src, fail, pos } => {
                    if p.heap.is_bitstring(get!(p, x, m, src)) {
                        put!(p, x, pos, Term::small(0));
                    } else {
                        ip = fail.0 as usize;
                    }
                }
                Instr::BsGet {
                    spec,
                    seg,
                    fail,
                    dst,
                } => match crate::engine::bits::bs_get(p, x, &m, spec, seg, dst) {
                    Ok(true) => {}
                    Ok(false) => ip = fail.0 as usize,
                    Err(_) => raise!(Class::Error, Term::atom(Atom::SYSTEM_LIMIT)),
                },
                Instr::BsEnd { bin, pos, fail } => {
                    let end = p.heap.bit_size(get!(p, x, m, bin)).map(|n| n as i64);
                    if end != get!(p, x, m, pos).as_small() {
                        ip = fail.0 as usize;
                    }
                }
                Instr::LoopRec { fail, dst } => {
                    if p.save < p.mailbox.len() {
                        let m = p.mailbox[p.save];
                        put!(p, x, dst, m);
                    } else {
                        ip = fail.0 as usize;
                    }
                }
                Instr::LoopRecEnd { to } => {
                    p.save += 1;
                    ip = to.0 as usize;
                }
                Instr::RemoveMessage {} => {
                    if p.save < p.mailbox.len() {
                        p.mailbox.remove(p.save);
                    }
                    p.save = 0;
                    p.in_timed_receive = false;
                }
                Instr::Wait { to, live } => {
                    p.live_x = live as u32;
                    ip = to.0 as usize;
                    {
                        *ip_slot = ip;
                        return Step::Done(Outcome::Wait);
                    }
                }
                Instr::WaitTimeout { to, timeout, live } => {
                    p.live_x = live as u32;
                    let t = get!(p, x, m, timeout);
                    if t == Term::atom(Atom::INFINITY) {
                        ip = to.0 as usize;
                        {
                            *ip_slot = ip;
                            return Step::Done(Outcome::Wait);
                        }
                    }
                    match t.as_small() {
                        Some(0) => {}
                        // OTP 25 takes at most 2^32-1 ms (about 49 days).
                        Some(ms) if ms > 0 && ms <= 0xFFFF_FFFF => {
                            p.timeout_ip = ip as u32;
                            ip = to.0 as usize;
                            {
                                *ip_slot = ip;
                                return Step::Done(Outcome::WaitTimeout(ms as u64));
                            }
                        }
                        _ => raise!(Class::Error, Term::atom(Atom::TIMEOUT_VALUE)),
                    }
                }
                Instr::Timeout {} => {
                    p.save = 0;
                    p.in_timed_receive = false;
                }
            }
        }
    }
}

// Rare or large instruction bodies live out of line, so that the
// dispatch loop stays small enough to keep `ip` and the code pointer in
// machine registers.

/// Raises `error:{tag, value}` (badmatch, case_clause, ...).
#[cold]
#[inline(never)]
fn raise_error_tuple(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &mut ModuleRef,
    ip: &mut usize,
    tag: Atom,
    value: Term,
) -> Flow {
    let t = exception::tuple2(p, x, tag, value);
    exception::raise(p, x, module, ip, Class::Error, t, None)
}

/// Raises `function_clause` with the arguments of `function` (x0..).
#[cold]
#[inline(never)]
fn function_clause(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &mut ModuleRef,
    ip: &mut usize,
    function: u32,
) -> Flow {
    let arity = module.functions[function as usize].arity as usize;
    let args: Vec<Term> = x[..arity.min(X_REGISTERS)].to_vec();
    let reason = Term::atom(Atom::FUNCTION_CLAUSE);
    exception::raise(p, x, module, ip, Class::Error, reason, Some(args))
}

/// `apply(M, F, Args)` with M, F, Args in x0..x2.
#[inline(never)]
fn apply_list(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &mut ModuleRef,
    ip: &mut usize,
    tail: Tail,
) -> Flow {
    let (m, f, args) = (x[0], x[1], x[2]);
    let badarg = Term::atom(Atom::BADARG);
    let Some(elements) = bif::erlang::list_elements(&p.heap, args) else {
        return exception::raise(p, x, module, ip, Class::Error, badarg, None);
    };
    let (Some(m), Some(f)) = (m.as_atom(), f.as_atom()) else {
        return exception::raise(p, x, module, ip, Class::Error, badarg, None);
    };
    if elements.len() > 255 {
        return exception::raise(p, x, module, ip, Class::Error, badarg, None);
    }
    x[..elements.len()].copy_from_slice(&elements);
    call_mfa(p, x, module, ip, m, f, elements.len(), tail)
}

/// `apply(Fun, Args)` with Fun, Args in x0, x1.
#[inline(never)]
fn apply_fun_list(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &mut ModuleRef,
    ip: &mut usize,
    tail: Tail,
) -> Flow {
    let (fun, args) = (x[0], x[1]);
    let badarg = Term::atom(Atom::BADARG);
    let Some(elements) = bif::erlang::list_elements(&p.heap, args) else {
        return exception::raise(p, x, module, ip, Class::Error, badarg, None);
    };
    if elements.len() > 255 {
        return exception::raise(p, x, module, ip, Class::Error, badarg, None);
    }
    x[..elements.len()].copy_from_slice(&elements);
    x[elements.len()] = fun;
    call_fun(p, x, module, ip, elements.len(), tail)
}

/// Reads operand `s` outside the loop (same rules as `get!`).
#[inline]
fn read(p: &Process, x: &[Term; X_REGISTERS], module: &Module, s: Src) -> Term {
    get!(p, x, module, s)
}

/// `put_tuple` of more than four elements, read from the operand list at
/// `elements`.
#[inline(never)]
fn put_tuple_large(
    p: &mut Process,
    x: &[Term; X_REGISTERS],
    module: &Module,
    arity: usize,
    elements: usize,
) -> Term {
    let mut buf = [Term::NIL; 16];
    if arity <= buf.len() {
        for (i, slot) in buf.iter_mut().enumerate().take(arity) {
            *slot = read(p, x, module, module.operand_lists[elements + i]);
        }
        p.heap.tuple(&buf[..arity])
    } else {
        let items: Vec<Term> = (0..arity)
            .map(|i| read(p, x, module, module.operand_lists[elements + i]))
            .collect();
        p.heap.tuple(&items)
    }
}

/// Builds fun `fun` of `module` capturing the operands listed at `captured`.
#[inline(never)]
fn make_fun(
    p: &mut Process,
    x: &[Term; X_REGISTERS],
    module: &Module,
    fun: u32,
    captured: usize,
) -> Term {
    let free = module.funs[fun as usize].free as usize;
    let items: Vec<Term> = (0..free)
        .map(|i| read(p, x, module, module.operand_lists[captured + i]))
        .collect();
    p.heap.fun(module.fun_base + fun, &items)
}

/// Raises the error of a BIF called with `bif`'s arguments. A BIF's own
/// failure puts the BIF on top of the trace (as BEAM); `error/2` puts its
/// argument list in the caller's frame.
#[cold]
#[inline(never)]
fn bif_error(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    e: BifError,
    bif: Option<(u16, &[Term])>,
) -> Flow {
    let (class, reason) = match e {
        BifError::Badarg => (Class::Error, Term::atom(Atom::BADARG)),
        BifError::Badarith => (Class::Error, Term::atom(Atom::BADARITH)),
        BifError::SystemLimit => (Class::Error, Term::atom(Atom::SYSTEM_LIMIT)),
        BifError::Raise(class, reason) => (class, reason),
        BifError::Halt(status) => return Flow::Stop(Outcome::Halt(status)),
        BifError::RaiseTrace(class, reason, trace) => {
            p.set_exception([Term::atom(class.atom()), reason, trace]);
            return exception::unwind(p, x, module, ip, class);
        }
        BifError::BsFail(cause) => return exception::raise_bs_fail(p, x, module, ip, cause),
    };
    if let Some((index, args)) = bif {
        match crate::runtime::explain::bif_frame(index, e, &p.heap, args) {
            crate::runtime::explain::BifFrame::Top(m, f) => {
                return exception::raise_bif(p, x, module, ip, class, reason, m, f, args);
            }
            crate::runtime::explain::BifFrame::CallerArgs(list) => {
                return exception::raise(p, x, module, ip, class, reason, Some(list));
            }
            crate::runtime::explain::BifFrame::None => {}
        }
    }
    exception::raise(p, x, module, ip, class, reason, None)
}

/// Finishes a call whose result is already in x0 (a BIF reached
/// dynamically): as a return for tail calls, else go on.
fn after_inline_call(p: &mut Process, module: &mut ModuleRef, ip: &mut usize, tail: Tail) -> Flow {
    match tail {
        Tail::No => Flow::Continue,
        Tail::Last => {
            p.stack.truncate(p.y_base as usize);
            match do_return(p, module, ip) {
                Some(o) => Flow::Stop(o),
                None => Flow::Continue,
            }
        }
        Tail::Only => match do_return(p, module, ip) {
            Some(o) => Flow::Stop(o),
            None => Flow::Continue,
        },
    }
}

/// Enters `entry` of `target` as a call of kind `tail`; false if the
/// frame stack cannot grow.
#[inline]
fn enter(
    p: &mut Process,
    module: &mut ModuleRef,
    ip: &mut usize,
    target: ModuleRef,
    entry: u32,
    tail: Tail,
) -> bool {
    match tail {
        Tail::No => {
            if p.frames.len() == p.frames.capacity() && p.grow_frames().is_err() {
                return false;
            }
            p.frames.push(Frame {
                return_ip: *ip as u32,
                y_base: p.y_base,
                module: *module,
            });
        }
        Tail::Last => p.stack.truncate(p.y_base as usize),
        Tail::Only => {}
    }
    *module = target;
    *ip = entry as usize;
    true
}

/// Calls `m:f/arity` with the arguments in x0..: a BIF, or the newest
/// version of an exported function.
#[allow(clippy::too_many_arguments)]
fn call_mfa(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    m: Atom,
    f: Atom,
    arity: usize,
    tail: Tail,
) -> Flow {
    if let Some(index) = bif::lookup_atoms(m, f, arity as u32) {
        p.reductions += cost::CALL;
        let entry = &bif::TABLE[index as usize];
        let mut a = [Term::NIL; bif::MAX_ARITY];
        a[..arity].copy_from_slice(&x[..arity]);
        let used = regs_used(module);
        let result = {
            let mut ctx = Context {
                process: p,
                x: &mut x[..used],
            };
            (entry.func)(&mut ctx, &mut a[..arity])
        };
        return match result {
            Ok(v) => {
                x[0] = v;
                after_inline_call(p, module, ip, tail)
            }
            Err(e) => {
                // The arguments again, from the registers (roots of any
                // collection the BIF made; its copy may be stale).
                a[..arity].copy_from_slice(&x[..arity]);
                bif_error(p, x, module, ip, e, Some((index, &a[..arity])))
            }
        };
    }
    call_export(p, x, module, ip, m, f, arity, tail)
}

/// `call_ext`: the import's target (see `ops::import_target`).
fn call_import(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    import: u32,
    arity: u16,
    tail: Tail,
) -> Flow {
    match import_target(module.get(), import, arity as u32) {
        Ok(target) => call_counted(
            p,
            x,
            module,
            ip,
            target.module,
            target.entry,
            tail,
            arity as usize,
        ),
        Err((m, f)) => {
            p.reductions += cost::CALL;
            exception::undef(p, x, module, ip, m, f, arity as usize, tail != Tail::No)
        }
    }
}

/// Calls the newest version of the exported function `m:f/arity`.
#[allow(clippy::too_many_arguments)]
fn call_export(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    m: Atom,
    f: Atom,
    arity: usize,
    tail: Tail,
) -> Flow {
    let Some(target) = resolve_export(m, f, arity as u32) else {
        // `fun erlang:apply/2,3` and `apply(erlang, apply, ...)`: apply
        // is an instruction, not a function, so it is redone here.
        if m == Atom::ERLANG && (arity == 2 || arity == 3) && f.name() == "apply" {
            let len = x.len();
            if let Ok(regs) = <&mut [Term; X_REGISTERS]>::try_from(&mut x[..X_REGISTERS.min(len)]) {
                return if arity == 3 {
                    apply_list(p, regs, module, ip, tail)
                } else {
                    apply_fun_list(p, regs, module, ip, tail)
                };
            }
        }
        p.reductions += cost::CALL;
        return exception::undef(p, x, module, ip, m, f, arity, tail != Tail::No);
    };
    call_counted(p, x, module, ip, target.module, target.entry, tail, arity)
}

/// Enters `target` at `entry` with `live` argument registers and counts
/// the call: `system_limit` when the stack cannot grow, a yield (the
/// arguments kept live) when the time slice is spent.
#[allow(clippy::too_many_arguments)]
#[inline]
fn call_counted(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    target: ModuleRef,
    entry: u32,
    tail: Tail,
    live: usize,
) -> Flow {
    p.reductions += cost::CALL;
    if !enter(p, module, ip, target, entry, tail) {
        let reason = Term::atom(Atom::SYSTEM_LIMIT);
        return exception::raise(p, x, module, ip, Class::Error, reason, None);
    }
    if p.reductions >= p.reduction_budget {
        p.live_x = live as u32;
        return Flow::Stop(Outcome::Yield);
    }
    Flow::Continue
}

/// Calls the fun in x[arity] with x0.. as arguments.
fn call_fun(
    p: &mut Process,
    x: &mut [Term],
    module: &mut ModuleRef,
    ip: &mut usize,
    arity: usize,
    tail: Tail,
) -> Flow {
    let fun = x[arity];
    let view = match p.heap.fun_parts(fun) {
        Some((index, captured)) => View::Fun { index, captured },
        None => p.heap.view(fun),
    };
    match view {
        View::Fun { index, captured } => {
            let Some(entry) = crate::runtime::fun_entry(index) else {
                let t = exception::tuple2(p, x, Atom::BADFUN, fun);
                return exception::raise(p, x, module, ip, Class::Error, t, None);
            };
            if entry.arity as usize != arity {
                return exception::badarity(p, x, module, ip, fun, arity);
            }
            let free = captured.len();
            if arity + free >= X_REGISTERS {
                return exception::raise(
                    p,
                    x,
                    module,
                    ip,
                    Class::Error,
                    Term::atom(Atom::SYSTEM_LIMIT),
                    None,
                );
            }
            x[arity..arity + free].copy_from_slice(captured);
            call_counted(
                p,
                x,
                module,
                ip,
                entry.code,
                entry.entry,
                tail,
                arity + free,
            )
        }
        View::ExternalFun {
            module: m,
            function: f,
            arity: a,
        } => {
            if a as usize != arity {
                return exception::badarity(p, x, module, ip, fun, arity);
            }
            call_mfa(p, x, module, ip, m, f, arity, tail)
        }
        _ => {
            let t = exception::tuple2(p, x, Atom::BADFUN, fun);
            exception::raise(p, x, module, ip, Class::Error, t, None)
        }
    }
}
