//! The Rust functions native code calls for what it does not inline:
//! frames, heap tests that collect, the general paths of arithmetic and
//! comparison, BIFs. Each takes the `Ctx`, brings the process up to date
//! from it (`enter`), does its work with the shared operations of
//! `crate::engine::ops`, and writes the new heap and frame pointers back
//! (`leave`). None of them unwinds: failures are status codes, and native
//! code then bails out to the interpreter, which raises the error.

use super::Ctx;
use crate::bif::{self, Context};
use crate::code::{ArithOp, Instr, Label, ModuleRef, Tail, X_REGISTERS};
use crate::engine::ops::{self, FloatOp};
use crate::interp::cost;
use crate::process::{CatchKind, Frame, Process};
use crate::term::Term;
use crate::term::view::View;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Takes the heap top, the Y stack and the frame stack back from native
/// code, which moved them within the capacities `leave` gave out.
#[inline]
pub(super) fn enter(ctx: &mut Ctx, p: &mut Process) {
    // SAFETY: `htop` came from `leave` on this heap and native code only
    // moved it up over words it wrote, never past `hlimit` (the capacity).
    // The same holds for both stacks: native code keeps each length within
    // the capacity `leave` read and writes every slot and frame below it
    // before it counts it; `y` points into the Y stack, at most at its top.
    unsafe {
        p.heap.set_native_top(ctx.htop);
        p.stack
            .set_len(ctx.stack_top.offset_from(ctx.stack) as usize);
        p.frames.set_len(ctx.frames_len as usize);
        p.y_base = ctx.y.offset_from(ctx.stack) as u32;
    }
    // Native calls and returns switch `ctx.module` without touching the
    // process; it catches up here.
    p.module = ctx.module;
}

/// Hands the heap's free space, both stacks and the current frame out to
/// native code.
#[inline]
pub(super) fn leave(ctx: &mut Ctx, p: &mut Process) {
    let (base, top, limit) = p.heap.native_window();
    ctx.hbase = base;
    ctx.htop = top;
    ctx.hlimit = limit;
    ctx.stack = p.stack.as_mut_ptr();
    // SAFETY: both are within (or one past) the stack's allocation.
    unsafe {
        ctx.stack_top = ctx.stack.add(p.stack.len());
        ctx.stack_end = ctx.stack.add(p.stack.capacity());
    }
    ctx.frames = p.frames.as_mut_ptr();
    ctx.frames_len = p.frames.len() as u64;
    ctx.frames_cap = p.frames.capacity() as u64;
    // SAFETY: `y_base` is at most the stack's length (frames keep it so).
    ctx.y = unsafe { ctx.stack.add(p.y_base as usize) };
    // The helper may have collected: another object may now be the term
    // `bs_base` names.
    ctx.bs_base = 0;
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

/// The process behind `ctx`, with only its heap top brought up to date:
/// for the helpers that just read terms (comparisons, type tests). The
/// stacks and the module switch are left for the next `enter`, which
/// saves their cost on the paths a guard takes in every call.
///
/// # Safety
/// As for `parts`.
unsafe fn reader<'a>(ctx: *mut Ctx) -> &'a Process {
    // SAFETY: as the caller promises; `htop` is valid as in `enter`.
    unsafe {
        let ctx = &*ctx;
        let p = &mut *ctx.process;
        p.heap.set_native_top(ctx.htop);
        p
    }
}

/// `To ! Msg` when `to` is a local pid: 0 sent; 1 not a local pid, or
/// the send failed (nothing was sent), and the BIF's own path makes it,
/// with its errors. A send changes nothing on the sender's heap or
/// stacks (a message to itself joins its mailbox as it is), so only the
/// heap top is brought up to date, as for a reader.
///
/// # Safety
/// As for `parts`.
pub(super) unsafe extern "C" fn send_local(ctx: *mut Ctx, to: u64, msg: u64) -> u32 {
    let Some(pid) = crate::sched::Pid::from_term(Term(to)) else {
        return 1;
    };
    // SAFETY: as the caller promises; `htop` is valid as in `enter`.
    let p = unsafe {
        let ctx = &*ctx;
        let p = &mut *ctx.process;
        p.heap.set_native_top(ctx.htop);
        p
    };
    match bif::process::send_local(p, pid, Term(msg)) {
        Ok(()) => 0,
        Err(_) => 1,
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
    let p = unsafe { reader(ctx) };
    ops::compare(p, Term(a), Term(b)) as i64
}

/// `a == b` (1) or not (0).
pub(super) unsafe extern "C" fn eq(ctx: *mut Ctx, a: u64, b: u64) -> i64 {
    let p = unsafe { reader(ctx) };
    ops::eq(p, Term(a), Term(b)) as i64
}

/// `a =:= b` (1) or not (0).
pub(super) unsafe extern "C" fn exact_eq(ctx: *mut Ctx, a: u64, b: u64) -> i64 {
    let p = unsafe { reader(ctx) };
    ops::exact_eq(p, Term(a), Term(b)) as i64
}

/// `is_function(f, arity)` (1) or not (0).
pub(super) unsafe extern "C" fn is_function2(ctx: *mut Ctx, f: u64, arity: u64) -> i64 {
    let p = unsafe { reader(ctx) };
    ops::is_function2(p, Term(f), Term(arity)) as i64
}

/// The type test `test` (a `TypeTest` as a number) on `v`.
pub(super) unsafe extern "C" fn type_test(ctx: *mut Ctx, test: u32, v: u64) -> u32 {
    let p = unsafe { reader(ctx) };
    ops::type_test(p, super::codegen::type_test_from(test), Term(v)) as u32
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

/// Boxes a float native code kept unboxed, when the heap is full. The
/// heap grows rather than collects: registers may hold floats not yet
/// boxed, so this is no safepoint. Offsets stay valid when words move.
/// The collection comes at the next call, which yields.
pub(super) unsafe extern "C" fn box_float(ctx: *mut Ctx, f: f64) -> u64 {
    let (ctx, p, _) = unsafe { parts(ctx) };
    p.heap.grow_unrooted_past_budget(crate::heap::FLOAT_WORDS);
    let t = p.heap.float(f);
    leave(ctx, p);
    // Collect at the next call (see `Ctx::collect`).
    ctx.collect = 1;
    ctx.reds = ctx.reds.min(0);
    t.0
}

// Receive. The mailbox and the save position belong to the process;
// these helpers touch nothing else (no heap, no registers), so they skip
// `enter`/`leave`. They do what the interpreter's instructions do.

/// `loop_rec`: the message at the save position, or 0 (no term) when
/// the mailbox has no more.
pub(super) unsafe extern "C" fn loop_rec(ctx: *mut Ctx) -> u64 {
    // SAFETY: as for `parts`: the process is live and only this thread
    // touches it while native code runs.
    let p = unsafe { &*(*ctx).process };
    if p.save < p.mailbox.len() {
        p.mailbox[p.save].0
    } else {
        0
    }
}

/// `loop_rec_end`: the message at the save position did not match.
pub(super) unsafe extern "C" fn loop_rec_end(ctx: *mut Ctx) -> u32 {
    // SAFETY: as in `loop_rec`.
    let p = unsafe { &mut *(*ctx).process };
    p.save += 1;
    1
}

/// `remove_message`: the matched message leaves the mailbox.
pub(super) unsafe extern "C" fn remove_message(ctx: *mut Ctx) -> u32 {
    // SAFETY: as in `loop_rec`.
    let p = unsafe { &mut *(*ctx).process };
    if p.save < p.mailbox.len() {
        p.mailbox.remove(p.save);
    }
    p.save = 0;
    p.in_timed_receive = false;
    1
}

/// `timeout`: the receive timed out.
pub(super) unsafe extern "C" fn receive_timeout(ctx: *mut Ctx) -> u32 {
    // SAFETY: as in `loop_rec`.
    let p = unsafe { &mut *(*ctx).process };
    p.save = 0;
    p.in_timed_receive = false;
    1
}

/// What `wait_timeout` tells native code besides a timer in milliseconds.
pub(super) mod wait {
    /// `after 0`: fall through to the timeout code.
    pub const NOW: u64 = 0;
    /// `after infinity`: a plain wait.
    pub const FOREVER: u64 = u64::MAX - 1;
    /// Not a timeout value: the interpreter raises `timeout_value`.
    pub const BAD: u64 = u64::MAX;
}

/// `wait_timeout` at `ip` with timeout `t`: one of `wait`'s codes, or the
/// milliseconds to wait (the resume point of the timeout noted, as the
/// interpreter does).
pub(super) unsafe extern "C" fn wait_timeout(ctx: *mut Ctx, t: u64, ip: u32) -> u64 {
    // SAFETY: as in `loop_rec`.
    let p = unsafe { &mut *(*ctx).process };
    let t = Term(t);
    if t == Term::atom(crate::term::Atom::INFINITY) {
        return wait::FOREVER;
    }
    match t.as_small() {
        Some(0) => wait::NOW,
        // OTP 25 takes at most 2^32-1 ms (about 49 days).
        Some(ms) if ms > 0 && ms <= 0xFFFF_FFFF => {
            p.timeout_ip = ip;
            ms as u64
        }
        _ => wait::BAD,
    }
}

/// Makes room for `slots` more Y slots (native code then pushes them);
/// 0 past the budget.
pub(super) unsafe extern "C" fn grow_stack(ctx: *mut Ctx, slots: u32) -> u32 {
    let (ctx, p, _) = unsafe { parts(ctx) };
    let slots = slots as usize;
    let ok = p.stack.len() + slots <= p.stack.capacity() || p.grow_stack(slots).is_ok();
    leave(ctx, p);
    ok as u32
}

/// Pushes the frame of a call native code made without one (`native::Enter`)
/// as the code leaves for `run`: the call returns to `return_ip` in
/// `module`, with the caller's Y slots at `y_base`. Frames pushed so come
/// innermost first; `run` puts them in order (`Ctx::pushed`).
///
/// `status`: the exit code the callee left with, handed back (the call
/// is made, so the frame is pushed all the same past the memory budget,
/// `push_frame_forced`); or `STOP`, a call about to leave for its callee
/// through `run`: 0 when the budget has no room for the frame, and the
/// caller bails out at the call, which the interpreter makes again and
/// fails with `system_limit` (so runaway recursion in native code is
/// caught each time it leaves the machine stack), else 1.
///
/// # Safety
/// As `parts`; `module` is a module version's pointer (a `ModuleRef`).
pub(super) unsafe extern "C" fn push_frame_out(
    ctx: *mut Ctx,
    return_ip: u32,
    y_base: u64,
    module: *const crate::code::Module,
    status: u32,
) -> u32 {
    let (ctx, p, _) = unsafe { parts(ctx) };
    if status == STOP && p.frames.len() == p.frames.capacity() && p.grow_frames().is_err() {
        leave(ctx, p);
        return 0;
    }
    // SAFETY: native code passes its own module version, pinned for good.
    let module = unsafe { ModuleRef::from_pinned(module) };
    push_out(
        ctx,
        p,
        Frame {
            return_ip,
            y_base: y_base as u32,
            module,
        },
    );
    leave(ctx, p);
    if status == STOP { 1 } else { status }
}

/// `call_remote`'s common case without bringing the process up to date:
/// a `call_ext` (body or last call) whose import is resolved, whose
/// callee has native code, with reductions and machine stack to spare.
/// Such a call changes nothing in the process (a native call pushes no
/// frame; a last call pops this function's Y slots, the context's stack
/// top), only the context's reductions, module and instruction pointer.
/// `None` for anything else, with nothing changed.
fn call_ext_compiled(ctx: &mut Ctx, ip: u32) -> Option<u64> {
    let module = ctx.module.get();
    let (arity, import, pop) = match *module.code.get(ip as usize)? {
        Instr::CallExt { arity, import } | Instr::CallExtOnly { arity, import } => {
            (arity, import, false)
        }
        Instr::CallExtLast { arity, import } => (arity, import, true),
        _ => return None,
    };
    if ctx.reds <= cost::CALL as i64 || super::stack_pointer() <= ctx.stack_limit {
        return None;
    }
    let t = ops::import_target(module, import, arity as u32).ok()?;
    let target = t.module;
    let code = compiled_code(target, function_at(target, t.entry)?);
    if code <= remote::YIELD {
        return None;
    }
    if pop {
        // As `finish_call`'s truncation to the frame's base.
        ctx.stack_top = ctx.y;
    }
    ctx.reds -= cost::CALL as i64;
    ctx.module = target;
    ctx.ip = t.entry;
    Some(code)
}

/// The function whose code starts at `entry` (after its `FuncInfo`).
fn function_at(target: ModuleRef, entry: u32) -> Option<u32> {
    match target.get().code.get((entry as usize).checked_sub(1)?)? {
        &Instr::FuncInfo { function } => Some(function),
        _ => None,
    }
}

/// Function `function`'s native code address, or 0 (`remote::JUMP`)
/// while it has none.
fn compiled_code(target: ModuleRef, function: u32) -> u64 {
    // SAFETY: the slot belongs to the target module version, which is
    // pinned for good.
    let slot = unsafe { &*target.get().tier.code_slot(function) };
    slot.load(std::sync::atomic::Ordering::Acquire) as u64
}

/// Pushes the frame of a call native code made, on its way out to `run`,
/// which orders such frames (`Ctx::pushed`).
fn push_out(ctx: &mut Ctx, p: &mut Process, frame: Frame) {
    p.push_frame_forced(frame);
    ctx.pushed += 1;
}

/// `push_frame_out`'s `status` for a call not made yet.
pub(super) const STOP: u32 = u32::MAX;

/// What `call_remote` tells native code to do (or a code address).
pub(super) mod remote {
    /// Go on at `Ctx::ip` in `Ctx::module` through `run`.
    pub const JUMP: u64 = 0;
    /// Nothing was done: the interpreter runs the call (and raises).
    pub const BAIL: u64 = 1;
    /// The call is made and the time slice is spent.
    pub const YIELD: u64 = 2;
}

/// A call native code does not make inline: `call_ext` (any kind),
/// `call_fun` or `apply` at `ip`. Pushes the frame (or pops this function's Y slots
/// for a last call), charges the call, switches `Ctx::module` and
/// `Ctx::ip` to the callee, and returns its native code's address, or a
/// `remote` code when there is none to call directly. A call that would
/// fail (`undef`, `badfun`, `badarity`) or that needs the general path
/// (a fun of a BIF, a BIF applied) changes nothing and says `BAIL`.
pub(super) unsafe extern "C" fn call_remote(ctx: *mut Ctx, ip: u32) -> u64 {
    // SAFETY: as the caller promises.
    if let Some(code) = unsafe { call_ext_compiled(&mut *ctx, ip) } {
        return code;
    }
    let (ctx, p, x) = unsafe { parts(ctx) };
    let module = ctx.module.get();
    let import = |import: u32, arity: u16, tail: Tail| {
        let t = ops::import_target(module, import, arity as u32).ok()?;
        Some((t.module, t.entry, tail, arity as usize))
    };
    let call = match module.code.get(ip as usize) {
        Some(&Instr::CallExt { arity, import: i }) => import(i, arity, Tail::No),
        Some(&Instr::CallExtLast { arity, import: i }) => import(i, arity, Tail::Last),
        Some(&Instr::CallExtOnly { arity, import: i }) => import(i, arity, Tail::Only),
        Some(&Instr::CallFun { arity, tail }) => {
            let arity = arity as usize;
            match p.heap.fun_parts(x[arity]) {
                Some((index, captured)) => crate::runtime::fun_entry(index).and_then(|fun| {
                    let live = arity + captured.len();
                    (fun.arity as usize == arity && live < X_REGISTERS).then(|| {
                        x[arity..live].copy_from_slice(captured);
                        (fun.code, fun.entry, tail, live)
                    })
                }),
                // `fun M:F/A` of a function in act code (a BIF's goes the
                // interpreter's general way, as `apply` does).
                None => match p.heap.view(x[arity]) {
                    View::ExternalFun {
                        module: m,
                        function: f,
                        arity: a,
                    } if a as usize == arity && bif::lookup_atoms(m, f, a).is_none() => {
                        ops::resolve_export(m, f, a).map(|t| (t.module, t.entry, tail, arity))
                    }
                    _ => None,
                },
            }
        }
        Some(&Instr::Apply { arity, tail }) => {
            let n = arity as usize;
            match (x[n].as_atom(), x[n + 1].as_atom()) {
                // A BIF applied goes the interpreter's general way.
                (Some(m), Some(f)) if bif::lookup_atoms(m, f, n as u32).is_none() => {
                    ops::resolve_export(m, f, n as u32).map(|t| (t.module, t.entry, tail, n))
                }
                _ => None,
            }
        }
        _ => None,
    };
    let Some((target, entry, tail, live)) = call else {
        return remote::BAIL;
    };
    finish_call(ctx, p, ip + 1, (target, entry), tail, live)
}

/// A `call_fun` site's inline cache: one per site in native code, made
/// when its function is compiled and, like the code, never freed.
///
/// It remembers the last fun called through the site whose target has
/// native code (`SiteEntry`), and native code calls that target directly
/// while the fun objects that come have the same header (kind and number
/// of captured terms) and fun-table index, with no helper at all. A miss
/// goes through `call_fun`, which points the site at the new fun's entry:
/// a library function such as `lists:map` is called with one fun for a
/// whole list, then with another, and each run hits after its first call.
///
/// Invariant: `current` always points at a complete, immutable entry
/// (`EMPTY_ENTRY` first); entries are made once per fun and never freed,
/// so a reader that loaded the pointer (acquire) may read it at leisure.
#[repr(C)]
pub struct FunSite {
    pub current: AtomicPtr<SiteEntry>,
}

/// What a site needs to call one fun's target: made once per fun (kept in
/// its fun-table entry's `native` slot), when its target has native code.
#[repr(C)]
pub struct SiteEntry {
    /// The fun object's header word (`EMPTY_SITE` in the empty entry).
    pub header: u64,
    /// Its fun-table index (the word after the header).
    pub index: u64,
    /// The target's native code.
    pub code: u64,
    /// The target's module version (a `ModuleRef`, pointer-sized).
    pub module: Option<ModuleRef>,
    /// The target's entry instruction (`Ctx::ip` at the call).
    pub entry: u64,
    /// How many captured terms go to the X registers after the arguments.
    pub free: u64,
}

/// No header word is all ones.
pub const EMPTY_SITE: u64 = u64::MAX;

/// The entry of a site that has called nothing yet (matches no fun).
static EMPTY_ENTRY: SiteEntry = SiteEntry {
    header: EMPTY_SITE,
    index: 0,
    code: 0,
    module: None,
    entry: 0,
    free: 0,
};

impl FunSite {
    /// Points the site at fun `index`'s entry, making the entry first if
    /// this is the fun's first call from native code.
    fn point_at(
        &self,
        header: Term,
        index: u32,
        code: u64,
        module: ModuleRef,
        entry: u32,
        free: usize,
    ) {
        let Some(fun) = crate::runtime::fun_entry(index) else {
            return;
        };
        let mut e = fun.native.load(Ordering::Acquire) as *mut SiteEntry;
        if e.is_null() {
            let made = Box::into_raw(Box::new(SiteEntry {
                header: header.0,
                index: index as u64,
                code,
                module: Some(module),
                entry: entry as u64,
                free: free as u64,
            }));
            e = match fun.native.compare_exchange(
                std::ptr::null_mut(),
                made as *mut (),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => made,
                Err(other) => {
                    // SAFETY: `made` was never published.
                    drop(unsafe { Box::from_raw(made) });
                    other as *mut SiteEntry
                }
            };
        }
        self.current.store(e, Ordering::Release);
    }
}

impl Default for FunSite {
    /// An empty site.
    fn default() -> FunSite {
        FunSite {
            current: AtomicPtr::new(&raw const EMPTY_ENTRY as *mut SiteEntry),
        }
    }
}

/// `call_fun` at `ip` when its site's cache missed: the call as
/// `call_remote` makes it, and the site pointed at the callee when it was
/// a fun object whose target has native code.
///
/// # Safety
/// As `call_remote`; `site` is the site's cache, which outlives the code.
pub(super) unsafe extern "C" fn call_fun(ctx: *mut Ctx, ip: u32, site: *const FunSite) -> u64 {
    // Read the fun before the call: its captured terms overwrite it.
    let fun = {
        // SAFETY: the context, its process and its registers are live
        // (as for `parts`); `reader` brings the heap top up to date.
        let p = unsafe { reader(ctx) };
        let c = unsafe { &*ctx };
        let m = c.module.get();
        match m.code.get(ip as usize) {
            Some(&Instr::CallFun { arity, .. }) => {
                let x = unsafe { &*(c.x as *const [Term; X_REGISTERS]) };
                p.heap
                    .fun_parts(x[arity as usize])
                    .map(|(index, captured)| (index, captured.len()))
            }
            _ => None,
        }
    };
    // SAFETY: as the caller promises.
    let code = unsafe { call_remote(ctx, ip) };
    if code > remote::YIELD
        && let Some((index, free)) = fun
    {
        // SAFETY: as above; `call_remote` left the callee in the context.
        let c = unsafe { &*ctx };
        let header = crate::term::object::header(crate::term::object::Kind::Fun, free + 1);
        unsafe { &*site }.point_at(header, index, code, c.module, c.ip, free);
    }
    code
}

/// The second half of `call_remote`, once the callee is known.
fn finish_call(
    ctx: &mut Ctx,
    p: &mut Process,
    return_ip: u32,
    (target, entry): (ModuleRef, u32),
    tail: Tail,
    live: usize,
) -> u64 {
    let caller = ctx.module;
    if tail == Tail::Last {
        p.stack.truncate(p.y_base as usize);
    }
    ctx.reds -= cost::CALL as i64;
    ctx.module = target;
    ctx.ip = entry;
    let code = if ctx.reds <= 0 {
        ctx.live = live as u32;
        remote::YIELD
    } else {
        match function_at(target, entry) {
            Some(f) if super::stack_pointer() > ctx.stack_limit => {
                super::count_call(target, Label(entry - 1));
                compiled_code(target, f)
            }
            _ => remote::JUMP,
        }
    };
    // Native code called straight pushes no frame (see `native::Enter`);
    // leaving for `run` needs the frame on the stack now.
    if tail == Tail::No && code <= remote::YIELD {
        let y_base = p.y_base;
        push_out(
            ctx,
            p,
            Frame {
                return_ip,
                y_base,
                module: caller,
            },
        );
    }
    leave(ctx, p);
    code
}

/// The bit of `call_bif`'s BIF number that says the instruction has a
/// fail label.
pub const FAIL_LABEL: u32 = 1 << 31;

/// Calls BIF number `index` (bit 31 set when the instruction has a fail
/// label; native code stored the instruction's place in `Ctx::ip`) on
/// the arguments native code put at `args` (room for
/// `bif::MAX_ARITY` terms), leaving its result in `args[0]`:
/// 0 done, 1 failed (native code takes the instruction's fail label), 2
/// failed with no fail label (the interpreter runs the instruction again
/// and raises; a failing BIF has done nothing), 3 done and the time slice
/// ends (output, as the interpreter does).
///
/// # Safety
/// As `parts`; `args` points at `bif::MAX_ARITY` writable terms.
pub(super) unsafe extern "C" fn call_bif(ctx: *mut Ctx, index: u32, args: *mut Term) -> u32 {
    let (ctx, p, x) = unsafe { parts(ctx) };
    // Native code stored the BIF's place: the process is there.
    p.ip = ctx.ip;
    let has_fail = index & FAIL_LABEL != 0;
    let Some(entry) = bif::TABLE.get((index & !FAIL_LABEL) as usize) else {
        leave(ctx, p);
        return 2;
    };
    // SAFETY: as the caller promises (an arity is at most `MAX_ARITY`).
    let a = unsafe { std::slice::from_raw_parts_mut(args, bif::MAX_ARITY) };
    let arity = entry.arity as usize;
    let used = ops::regs_used(ctx.module.get());
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
            a[0] = v;
            ctx.reds -= cost::BIF as i64;
            if ctx.reds <= 0 && bif::ends_slice(entry) {
                ctx.live = used as u32;
                3
            } else {
                0
            }
        }
        Err(_) if has_fail => {
            ctx.reds -= cost::BIF as i64;
            1
        }
        Err(_) => 2,
    };
    leave(ctx, p);
    status
}

/// `call_bif` for a BIF that only reads (`bif::only_reads`), with the
/// same arguments and statuses (never 3): such a BIF changes nothing, so
/// only the heap top is brought up to date for it to read what native
/// code built, and nothing is handed back.
///
/// # Safety
/// As `call_bif`; `index` names a BIF for which `bif::only_reads` holds.
pub(super) unsafe extern "C" fn call_reading_bif(
    ctx: *mut Ctx,
    index: u32,
    args: *mut Term,
) -> u32 {
    let Some(entry) = bif::TABLE.get((index & !FAIL_LABEL) as usize) else {
        return 2;
    };
    // SAFETY: as the caller promises; the BIF reads the heap up to the
    // top native code reached and writes nothing but its result.
    let (ctx, p, a) = unsafe {
        let ctx = &mut *ctx;
        let p = &mut *ctx.process;
        p.heap.set_native_top(ctx.htop);
        let a = std::slice::from_raw_parts_mut(args, entry.arity as usize);
        (ctx, p, a)
    };
    debug_assert!(bif::only_reads(entry));
    let mut bif_ctx = Context {
        process: p,
        x: &mut [],
    };
    match (entry.func)(&mut bif_ctx, a) {
        Ok(v) => {
            a[0] = v;
            ctx.reds -= cost::BIF as i64;
            0
        }
        Err(_) if index & FAIL_LABEL != 0 => {
            ctx.reds -= cost::BIF as i64;
            1
        }
        Err(_) => 2,
    }
}

/// `try` or `catch` at `ip`: pushes the catch entry the interpreter
/// pushes (the handler, and the frame and stack depths to unwind to; the
/// frames include the `depth` native calls whose frames are pushed only
/// on the way out). An exception is still raised by the interpreter,
/// which unwinds to it.
pub(super) unsafe extern "C" fn push_catch(ctx: *mut Ctx, ip: u32, depth: u64) -> u32 {
    let (ctx, p, _) = unsafe { parts(ctx) };
    let m = ctx.module;
    let (kind, handler) = match m.get().code.get(ip as usize) {
        Some(&Instr::Try { handler, .. }) => (CatchKind::Try, handler),
        Some(&Instr::Catch { handler, .. }) => (CatchKind::Catch, handler),
        _ => return 1,
    };
    p.push_catch(kind, handler.0, m, depth as u32);
    leave(ctx, p);
    0
}

/// `try_end` or `catch_end`: the body finished without an exception.
pub(super) unsafe extern "C" fn pop_catch(ctx: *mut Ctx) -> u32 {
    let (ctx, p, _) = unsafe { parts(ctx) };
    p.pop_catch();
    leave(ctx, p);
    0
}

/// `bs_start`, `bs_get` or `bs_end` at `ip`: 0 the match goes on, 1 it
/// fails (native code takes the fail label), 2 the interpreter runs the
/// instruction again and raises (`system_limit`: a value too big for the
/// memory budget; nothing was written).
pub(super) unsafe extern "C" fn bs_match(ctx: *mut Ctx, ip: u32) -> u32 {
    // SAFETY: as for `parts`.
    let module = unsafe { (*ctx).module }.get();
    match module.code.get(ip as usize) {
        // The two tests only read terms and write a small integer to a
        // register, so they skip the full `enter`/`leave`.
        Some(&Instr::BsStart { src, pos, .. }) => {
            // SAFETY: as for `parts`; `reader` brings the heap top up to date.
            let (p, c) = unsafe { (reader(ctx), &*ctx) };
            if p.heap.is_bitstring(unsafe { register(c, module, src) }) {
                unsafe { set_register(c, pos, Term::small(0)) };
                0
            } else {
                1
            }
        }
        Some(&Instr::BsEnd { bin, pos, .. }) => {
            // SAFETY: as above.
            let (p, c) = unsafe { (reader(ctx), &*ctx) };
            let end = p
                .heap
                .bit_size(unsafe { register(c, module, bin) })
                .map(|n| n as i64);
            (end != unsafe { register(c, module, pos) }.as_small()) as u32
        }
        Some(&Instr::BsGet { spec, seg, dst, .. }) => {
            let (ctx, p, x) = unsafe { parts(ctx) };
            let status = match crate::engine::bits::bs_get(p, x, module, spec, seg, dst) {
                Ok(true) => 0,
                Ok(false) => 1,
                Err(_) => 2,
            };
            leave(ctx, p);
            status
        }
        _ => 2,
    }
}

/// `bs_start`'s look at the term `t`: when it is a bitstring, the binary
/// holding its bits (a term), the address of that binary's first byte,
/// and the bitstring's bit offset and bit length in it go to
/// `out[0..4]`, and the answer is 1; 0 for any other term. Only reads
/// (native code keeps what it knows of the heap across it).
///
/// # Safety
/// As `parts`; `out` points at four writable words.
pub(super) unsafe extern "C" fn bs_parts(ctx: *mut Ctx, t: u64, out: *mut u64) -> u64 {
    // SAFETY: as the caller promises.
    let p = unsafe { reader(ctx) };
    match p.heap.bitstring_parts(Term(t)) {
        Some((base, bytes, offset, len)) => {
            // SAFETY: as the caller promises.
            let (c, out) = unsafe { (&mut *ctx, std::slice::from_raw_parts_mut(out, 4)) };
            out[0] = base.0;
            out[1] = bytes.as_ptr() as u64;
            out[2] = offset as u64;
            out[3] = len as u64;
            c.bs_base = base.0;
            c.bs_data = out[1];
            1
        }
        None => 0,
    }
}

/// Operand `s` read through the context's register pointers (valid
/// without `enter`: native code keeps `x` and `y` current).
///
/// # Safety
/// `c` is a live context; a Y operand is a slot of the current frame.
unsafe fn register(c: &Ctx, m: &crate::code::Module, s: crate::code::Src) -> Term {
    match s.kind() {
        crate::code::SRC_X => unsafe { *c.x.add(s.index() & (X_REGISTERS - 1)) },
        crate::code::SRC_Y => unsafe { *c.y.add(s.index()) },
        _ => m.literals[s.index()],
    }
}

/// Writes register `d` through the context's pointers.
///
/// # Safety
/// As for `register`.
unsafe fn set_register(c: &Ctx, d: crate::code::Dst, v: Term) {
    if d.is_y() {
        unsafe { *c.y.add(d.index()) = v };
    } else {
        unsafe { *c.x.add(d.index() & (X_REGISTERS - 1)) = v };
    }
}
