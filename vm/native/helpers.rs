//! The Rust functions native code calls for what it does not inline:
//! frames, heap tests that collect, the general paths of arithmetic and
//! comparison, BIFs. Each takes the `Ctx`, brings the process up to date
//! from it (`enter`), does its work with the shared operations of
//! `crate::engine::ops`, and writes the new heap and frame pointers back
//! (`leave`). None of them unwinds: failures are status codes, and native
//! code then bails out to the interpreter, which raises the error.

use super::{Ctx, exit};
use crate::bif::{self, Context};
use crate::code::{ArithOp, Instr, X_REGISTERS};
use crate::engine::ops::{self, FloatOp};
use crate::interp::cost;
use crate::process::{Frame, Process};
use crate::term::Term;

/// Takes the heap top back from native code.
#[inline]
pub(super) fn enter(ctx: &mut Ctx, p: &mut Process) {
    // SAFETY: `htop` came from `leave` on this heap and native code only
    // moved it up over words it wrote, never past `hlimit` (the capacity).
    unsafe { p.heap.set_native_top(ctx.htop) };
}

/// Hands the heap's free space and the current frame out to native code.
#[inline]
pub(super) fn leave(ctx: &mut Ctx, p: &mut Process) {
    let (base, top, limit) = p.heap.native_window();
    ctx.hbase = base;
    ctx.htop = top;
    ctx.hlimit = limit;
    // SAFETY: `y_base` is at most the stack's length (frames keep it so).
    ctx.y = unsafe { p.stack.as_mut_ptr().add(p.y_base as usize) };
}

/// The process and registers behind `ctx`, brought up to date.
///
/// # Safety
/// `ctx` must be the context `super::run` made, while its native code runs.
unsafe fn parts<'a>(ctx: *mut Ctx) -> (&'a mut Ctx, &'a mut Process, &'a mut [Term; X_REGISTERS]) {
    // SAFETY: as the caller promises, `ctx`, its process and its register
    // array are live and touched by nothing else while native code runs.
    unsafe {
        let ctx = &mut *ctx;
        let p = &mut *ctx.process;
        let x = &mut *(ctx.x as *mut [Term; X_REGISTERS]);
        enter(ctx, p);
        (ctx, p, x)
    }
}

/// `x[dst] := a op b` past the small-integer fast path; 0 when it fails
/// (the interpreter then raises or takes the fail label).
pub(super) unsafe extern "C" fn arith(ctx: *mut Ctx, op: u32, a: u64, b: u64) -> u64 {
    let (ctx, p, x) = unsafe { parts(ctx) };
    let module = ctx.module.get();
    let (a, b) = (Term(a), Term(b));
    let float = match op {
        0 => Some(FloatOp::add),
        1 => Some(FloatOp::sub),
        2 => Some(FloatOp::mul),
        3 => Some(FloatOp::divide),
        _ => None,
    };
    let result = match float {
        Some(op) => ops::arith_number(p, x, module, op, a, b),
        None => {
            let op = arith_op(op);
            match ops::arith_small(op, a, b) {
                Some(r) => Ok(r),
                None => ops::arith_slow(p, x, module, ops::general(op), a, b),
            }
        }
    };
    leave(ctx, p);
    result.map_or(0, |t| t.0)
}

/// The operator numbers `codegen` passes to `arith` past `/` (3).
pub(super) fn arith_op(op: u32) -> ArithOp {
    match op {
        4 => ArithOp::IntDiv,
        5 => ArithOp::Rem,
        6 => ArithOp::Band,
        7 => ArithOp::Bor,
        8 => ArithOp::Bxor,
        9 => ArithOp::Bsl,
        10 => ArithOp::Bsr,
        _ => ArithOp::Div,
    }
}

/// Term order of `a` and `b`: -1, 0 or 1.
pub(super) unsafe extern "C" fn compare(ctx: *mut Ctx, a: u64, b: u64) -> i64 {
    let (_, p, _) = unsafe { parts(ctx) };
    ops::compare(p, Term(a), Term(b)) as i64
}

/// `a == b` (1) or not (0).
pub(super) unsafe extern "C" fn eq(ctx: *mut Ctx, a: u64, b: u64) -> i64 {
    let (_, p, _) = unsafe { parts(ctx) };
    ops::eq(p, Term(a), Term(b)) as i64
}

/// `a =:= b` (1) or not (0).
pub(super) unsafe extern "C" fn exact_eq(ctx: *mut Ctx, a: u64, b: u64) -> i64 {
    let (_, p, _) = unsafe { parts(ctx) };
    ops::exact_eq(p, Term(a), Term(b)) as i64
}

/// The type test `test` (a `TypeTest` as a number) on `v`.
pub(super) unsafe extern "C" fn type_test(ctx: *mut Ctx, test: u32, v: u64) -> u32 {
    let (_, p, _) = unsafe { parts(ctx) };
    ops::type_test(p, super::codegen::type_test_from(test), Term(v)) as u32
}

/// The words of the literal object at `offset` of the literal area.
pub(super) extern "C" fn literal(offset: u64) -> *const Term {
    crate::term::literal::words_from(offset as usize).as_ptr()
}

/// A heap test that needs a collection: 1 when `words` are free after
/// it, 0 past the memory budget.
pub(super) unsafe extern "C" fn test_heap(ctx: *mut Ctx, words: u64) -> u32 {
    let (ctx, p, x) = unsafe { parts(ctx) };
    let used = ops::regs_used(ctx.module.get());
    let ok = p
        .ensure_heap(words as usize, &mut x[..used], &mut [])
        .is_ok();
    leave(ctx, p);
    ok as u32
}

/// The process and context behind `ctx`, for the helpers that touch
/// frames only (no heap: the top stays with native code).
///
/// # Safety
/// As for `parts`.
unsafe fn frames<'a>(ctx: *mut Ctx) -> (&'a mut Ctx, &'a mut Process) {
    // SAFETY: as the caller promises.
    unsafe {
        let ctx = &mut *ctx;
        let p = &mut *ctx.process;
        (ctx, p)
    }
}

/// Points `ctx.y` at the current frame.
#[inline]
fn frame_changed(ctx: &mut Ctx, p: &mut Process) {
    // SAFETY: `y_base` is at most the stack's length (frames keep it so).
    ctx.y = unsafe { p.stack.as_mut_ptr().add(p.y_base as usize) };
}

/// Pushes a frame of `slots` Y slots (as `[]`); 0 past the budget.
pub(super) unsafe extern "C" fn allocate(ctx: *mut Ctx, slots: u32) -> u32 {
    let (ctx, p) = unsafe { frames(ctx) };
    let slots = slots as usize;
    if p.stack.len() + slots > p.stack.capacity() && p.grow_stack(slots).is_err() {
        return 0;
    }
    p.y_base = p.stack.len() as u32;
    const NILS: [Term; 8] = [Term::NIL; 8];
    if slots <= NILS.len() {
        p.stack.extend_from_slice(&NILS[..slots]);
    } else {
        p.stack.resize(p.stack.len() + slots, Term::NIL);
    }
    frame_changed(ctx, p);
    1
}

/// Pops the current frame's Y slots.
pub(super) unsafe extern "C" fn deallocate(ctx: *mut Ctx) {
    let (_, p) = unsafe { frames(ctx) };
    p.stack.truncate(p.y_base as usize);
}

/// Pushes the frame of a call that returns to `return_ip`; 0 past the budget.
pub(super) unsafe extern "C" fn push_frame(ctx: *mut Ctx, return_ip: u32) -> u32 {
    let (ctx, p) = unsafe { frames(ctx) };
    if p.frames.len() == p.frames.capacity() && p.grow_frames().is_err() {
        return 0;
    }
    p.frames.push(Frame {
        return_ip,
        y_base: p.y_base,
        module: ctx.module,
    });
    1
}

/// Returns through the top frame: `RETURNED` into the same module,
/// `JUMP` into another (now `process.module`), `DONE` with none left.
pub(super) unsafe extern "C" fn return_(ctx: *mut Ctx) -> u32 {
    let (ctx, p) = unsafe { frames(ctx) };
    let Some(frame) = p.frames.pop() else {
        return exit::DONE;
    };
    p.y_base = frame.y_base;
    ctx.ip = frame.return_ip;
    frame_changed(ctx, p);
    if frame.module.same(ctx.module) {
        exit::RETURNED
    } else {
        p.module = frame.module.to_arc();
        exit::JUMP
    }
}

/// Runs the BIF instruction at `ip`: 0 done, 1 failed with a fail label
/// to take, 2 failed (the interpreter runs the instruction again and
/// raises; a failing BIF has done nothing), 3 done and the time slice
/// ends (output, as the interpreter does).
pub(super) unsafe extern "C" fn call_bif(ctx: *mut Ctx, ip: u32) -> u32 {
    let (ctx, p, x) = unsafe { parts(ctx) };
    let m = ctx.module;
    let Some(&Instr::Bif {
        bif: index,
        args,
        fail,
        dst,
        ..
    }) = m.get().code.get(ip as usize)
    else {
        return 2;
    };
    let entry = &bif::TABLE[index as usize];
    let arity = entry.arity as usize;
    let mut a = [Term::NIL; 4];
    for (i, slot) in a.iter_mut().enumerate().take(arity) {
        *slot = read(p, x, m.get(), m.get().operand_lists[args as usize + i]);
    }
    let used = ops::regs_used(m.get());
    // A BIF may spend reductions itself (output ends the slice at once).
    let budget = ctx.budget as i64;
    p.reductions = (budget - ctx.reds).max(0) as usize;
    let result = {
        let mut bif_ctx = Context {
            process: p,
            x: &mut x[..used],
        };
        (entry.func)(&mut bif_ctx, &mut a[..arity])
    };
    ctx.reds = budget - p.reductions as i64;
    let status = match result {
        Ok(v) => {
            ctx.reds -= cost::BIF as i64;
            if dst.is_y() {
                p.stack[p.y_base as usize + dst.index()] = v;
            } else {
                x[dst.index() & (X_REGISTERS - 1)] = v;
            }
            if ctx.reds <= 0 && entry.module == "io" {
                ctx.live = used as u32;
                3
            } else {
                0
            }
        }
        Err(_) if fail != crate::code::Label::RAISE => {
            ctx.reds -= cost::BIF as i64;
            1
        }
        Err(_) => 2,
    };
    leave(ctx, p);
    status
}

fn read(
    p: &Process,
    x: &[Term; X_REGISTERS],
    m: &crate::code::Module,
    s: crate::code::Src,
) -> Term {
    match s.kind() {
        crate::code::SRC_X => x[s.index() & (X_REGISTERS - 1)],
        crate::code::SRC_Y => p.stack[p.y_base as usize + s.index()],
        _ => m.literals[s.index()],
    }
}
