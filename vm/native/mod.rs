//! The native tier: act bytecode compiled to machine code with Cranelift,
//! function by function, and run under the engine contract
//! (`crate::engine`).
//!
//! A compiled function is `extern "C" fn(&mut Ctx, entry, depth) -> code`. It
//! works on the process state the interpreter uses, through `Ctx`: X
//! registers in the scheduler's array, Y slots in `process.stack`, the
//! heap's free space as a bump pointer. `entry` says where it starts: 0
//! at the function's first instruction, n at the instruction after its
//! n-th call (a return address), as `TierSlots` in the module records.
//!
//! Invariants:
//! - Between two instructions, native code holds no term anywhere but in
//!   X registers, Y slots and the heap (each instruction loads what it
//!   reads and stores what it writes), so a collection in a helper sees
//!   every root, and an exit at any instruction boundary leaves exactly
//!   the state the interpreter expects there.
//! - `Ctx::htop` is the heap's top while native code runs, and
//!   `Ctx::stack_top`/`frames_len` the tops of the Y and frame stacks
//!   (native code allocates, pushes and pops frames inline); every helper
//!   takes them back first (`enter`) and hands them out again after
//!   (`leave`), so Rust code always sees the process whole.
//! - A call calls the callee's native code directly on the machine
//!   stack, at most `NATIVE_STACK` bytes deep, without pushing a frame
//!   (the callee's `depth` counts such calls); the callee returns
//!   `RETURNED` and the caller goes on. Any other code goes up the machine stack to
//!   `run`, each caller pushing the frame of its call on the way
//!   (`Ctx::pushed`), so `run` carries on from `process.ip` with every
//!   frame on the process: unwinding the machine stack loses nothing.
//! - Helpers never unwind into native code (they return status codes).

mod codegen;
mod helpers;

use crate::code::{Instr, Label, ModuleRef, X_REGISTERS};
use crate::engine::{ExitKind, Mode, Outcome};
use crate::interp::Registers;
use crate::process::{Frame, Process};
use crate::term::Term;
use std::sync::Mutex;
use std::sync::atomic::Ordering;

/// What native code works on; field offsets are part of the generated
/// code (see `codegen::offsets`).
#[repr(C)]
pub struct Ctx {
    /// The scheduler's X registers (they never move while native code runs).
    pub x: *mut Term,
    /// The current frame's Y slots: `process.stack` at `y_base`.
    pub y: *mut Term,
    /// The heap's top and the end of its free space (equal in GC stress
    /// mode, so that every heap test collects).
    pub htop: *mut Term,
    pub hlimit: *mut Term,
    /// The heap's first word: a heap term's offset counts from here.
    pub hbase: *mut Term,
    /// Reductions left in this time slice.
    pub reds: i64,
    /// Where to go on after native code stopped.
    pub ip: u32,
    /// X registers live at a yield.
    pub live: u32,
    /// The lowest machine-stack address at which native code still calls
    /// native code directly (`NATIVE_STACK` bytes below where `run`
    /// began); past it a call goes up to `run`, which starts again at
    /// the top.
    pub stack_limit: u64,
    pub process: *mut Process,
    /// The module version the running code belongs to.
    pub module: ModuleRef,
    pub budget: u64,
    /// The Y stack (`process.stack`) as a raw vector, so that native code
    /// pushes and pops frames' slots without a call: its first slot, the
    /// slot after the last (its length) and the end of its capacity.
    pub stack: *mut Term,
    pub stack_top: *mut Term,
    pub stack_end: *mut Term,
    /// The frame stack (`process.frames`) likewise.
    pub frames: *mut Frame,
    pub frames_len: u64,
    pub frames_cap: u64,
    /// The timer of an `exit::WAIT_TIMEOUT`.
    pub wait_ms: u64,
    /// The running process's pid (a term), for `self()` inline.
    pub self_pid: u64,
    /// The last off-heap binary `helpers::bs_parts` found under a
    /// bitstring (a term; 0 for none) and the address of its first byte,
    /// so that a loop matching sub-binaries of it finds its bytes inline.
    /// `helpers::leave` forgets it, since a collection may reuse the term.
    pub bs_base: u64,
    pub bs_data: u64,
    /// Frames pushed on the way out since `run` last looked: innermost
    /// first, so `run` reverses them (`order_pushed`).
    pub pushed: u64,
    /// Set when `helpers::box_float` grew the heap (native code boxes
    /// between safepoints, where it cannot collect); the helper also
    /// spends the time slice, so the process yields at its next call and
    /// `run` collects there.
    pub collect: u64,
}

/// Exit codes of native code.
pub mod exit {
    /// The function returned: the frame it returned through is popped and
    /// `Ctx::ip` is the return address (in the same module).
    pub const RETURNED: u32 = 0;
    /// Go on at `Ctx::ip` in `process.module` (a call or return native
    /// code does not make itself).
    pub const JUMP: u32 = 1;
    /// The time slice is spent: resume at `Ctx::ip` with `Ctx::live` X
    /// registers live.
    pub const YIELD: u32 = 2;
    /// The process's first function returned.
    pub const DONE: u32 = 3;
    /// The interpreter runs the instruction at `Ctx::ip` (and goes on).
    pub const BAIL: u32 = 4;
    /// The process waits for a message, then resumes at `Ctx::ip` (a
    /// receive's loop head).
    pub const WAIT: u32 = 5;
    /// The same with a timer of `Ctx::wait_ms` milliseconds.
    pub const WAIT_TIMEOUT: u32 = 6;
}

/// Bytes of machine stack native calls may take below `run` before a
/// call goes through `run` (a native frame takes 32-100 bytes, so about
/// ten thousand calls deep; the scheduler threads have
/// `sched::SCHEDULER_STACK`, and the helpers at the top of the native
/// calls keep the rest). Going through `run` pushes out every native
/// frame below (`helpers::push_frame_out`), and their returns then go
/// through `run`: with 64 KiB a comprehension over a thousand elements
/// did that every few hundred calls.
pub const NATIVE_STACK: u64 = 1024 * 1024;

/// The machine stack pointer, near enough: the address of a local.
#[inline(always)]
fn stack_pointer() -> u64 {
    let here = 0u8;
    std::hint::black_box(&raw const here) as u64
}

/// Calls an interpreted function takes in `auto` mode before it is compiled.
const HOT_CALLS: u32 = 1000;

/// How compiled code is called.
///
/// A compiled function is `(ctx, entry, depth) -> exit code` in
/// Cranelift's `Winch` convention, which has no callee-saved registers
/// (`codegen::NATIVE_CC`): a function that returns without making a
/// native call saves nothing. Rust cannot call that convention, so `run`
/// calls `Enter`, a trampoline in the platform's convention that the code
/// generator makes first: `(ctx, entry, depth, code)` calls `code`.
///
/// `depth` counts the native calls below this one on the machine stack
/// whose frames are not pushed (0 when `run` calls it): a call between
/// native functions pushes no frame, the callee runs at the caller's
/// depth plus one, and its `return` at a depth above zero only returns
/// `RETURNED`, the caller restoring its own Y slots and module. Whenever
/// native code leaves for `run` instead (yield, wait, bail-out, a call
/// or return it does not make), each caller on the way up pushes the
/// frame of its call (`helpers::push_frame_out`).
type Enter = unsafe extern "C" fn(*mut Ctx, u32, u64, usize) -> u32;

/// The trampoline's address (`Enter`), set once the code generator is made.
static ENTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Whether Cranelift can generate code for this machine.
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64") && cranelift_native::builder().is_ok()
}

/// The code generator, shared by all schedulers (a function is compiled
/// once, by whichever scheduler first finds it hot).
static JIT: Mutex<Option<codegen::Jit>> = Mutex::new(None);

/// Counts a call of the function whose `FuncInfo` is at `target` and
/// compiles it when it is hot (at once in `native` mode).
#[inline]
pub fn count_call(m: ModuleRef, target: Label) {
    let module = m.get();
    let Some(Instr::FuncInfo { function }) = module.code.get(target.0 as usize) else {
        return;
    };
    let Some(calls) = module.tier.calls.get(*function as usize) else {
        return;
    };
    let n = calls.load(Ordering::Relaxed);
    if n == u32::MAX {
        return;
    }
    let hot = match crate::engine::mode() {
        Mode::Native => 1,
        _ => HOT_CALLS,
    };
    if n + 1 < hot {
        calls.store(n + 1, Ordering::Relaxed);
        return;
    }
    compile(m, *function);
}

/// Compiles `function` of `m` and publishes its entries, unless it was
/// taken or refused before.
fn compile(m: ModuleRef, function: u32) {
    let module = m.get();
    let mut jit = JIT.lock().unwrap_or_else(|e| e.into_inner());
    if module.tier.calls[function as usize].swap(u32::MAX, Ordering::Relaxed) == u32::MAX {
        return;
    }
    if jit.is_none() {
        match codegen::Jit::new() {
            Ok(j) => {
                ENTER.store(j.enter, Ordering::Release);
                *jit = Some(j);
            }
            Err(_) => return,
        }
    }
    let Some(jit) = jit.as_mut() else { return };
    let started = std::time::Instant::now();
    let result = jit.compile(m, function);
    stats::record(module, function, started.elapsed(), result.as_ref().err());
    if let Ok((code, entries)) = result {
        module.tier.publish(function, code, &entries);
    }
}

/// Runs native code from `process.ip` for as long as there is native code
/// to run. `None`: the interpreter goes on from `process.ip`.
pub fn run(p: &mut Process, regs: &mut Registers, budget: usize) -> Option<Outcome> {
    if regs.x.len() != X_REGISTERS {
        regs.x.resize(X_REGISTERS, Term::NIL);
    }
    let self_pid = crate::bif::process::services(|s| s.self_pid()).to_term().0;
    loop {
        let m = p.module;
        let ip = p.ip as usize;
        let (code, entry) = match m.tier.entry_at(ip) {
            Some(found) => found,
            None => {
                // A function entered by spawn, apply or a call native code
                // did not make: count it as a call.
                if ip > 0 && matches!(m.get().code.get(ip - 1), Some(Instr::FuncInfo { .. })) {
                    count_call(m, Label(ip as u32 - 1));
                }
                m.tier.entry_at(ip)?
            }
        };
        let mut ctx = Ctx {
            x: regs.x.as_mut_ptr(),
            y: std::ptr::null_mut(),
            htop: std::ptr::null_mut(),
            hlimit: std::ptr::null_mut(),
            hbase: std::ptr::null_mut(),
            reds: budget as i64 - p.reductions as i64,
            ip: p.ip,
            live: 0,
            stack_limit: stack_pointer().saturating_sub(NATIVE_STACK),
            process: &raw mut *p,
            module: m,
            budget: budget as u64,
            stack: std::ptr::null_mut(),
            stack_top: std::ptr::null_mut(),
            stack_end: std::ptr::null_mut(),
            frames: std::ptr::null_mut(),
            frames_len: 0,
            frames_cap: 0,
            wait_ms: 0,
            self_pid,
            bs_base: 0,
            bs_data: 0,
            pushed: 0,
            collect: 0,
        };
        helpers::leave(&mut ctx, p);
        let (mut code, mut entry) = (code, entry);
        // Native code exists, so the code generator and its trampoline do.
        let enter = ENTER.load(Ordering::Acquire);
        let code = loop {
            // SAFETY: `code` is a function the code generator made for
            // this module version with the signature `Enter` calls (published
            // only after it was finalised, and never freed), and `enter`
            // the trampoline it made first (`Enter`); `ctx` points at this
            // process and these registers, which nothing else touches
            // while it runs.
            let exit = unsafe {
                let f: Enter = std::mem::transmute::<usize, Enter>(enter);
                f(&mut ctx, entry, 0, code)
            };
            order_pushed(&mut ctx);
            // A return past the bottom of the machine stack, or a call
            // native code left to `run`: when native code goes on there,
            // call it with the same context (it is up to date), without
            // the round trip through the process. Deep body recursion
            // returns this way once per frame.
            if matches!(exit, exit::RETURNED | exit::JUMP)
                && let Some(found) = ctx.module.tier.entry_at(ctx.ip as usize)
            {
                (code, entry) = found;
                continue;
            }
            break exit;
        };
        helpers::enter(&mut ctx, p);
        p.reductions = (budget as i64 - ctx.reds).max(0) as usize;
        p.ip = ctx.ip;
        match code {
            exit::RETURNED | exit::JUMP => continue,
            exit::YIELD => {
                p.live_x = ctx.live;
                if ctx.collect != 0 {
                    // A loop that boxes floats and builds nothing else
                    // reaches no `test_heap`: without this its heap would
                    // only grow. Only the call's arguments are live here.
                    // A failure (live data past the budget) is found again
                    // by the next allocation, which raises it.
                    let live = (ctx.live as usize).min(regs.x.len());
                    let _ = p.collect(&mut regs.x[..live]);
                }
                return Some(Outcome::Yield);
            }
            exit::DONE => return Some(Outcome::Exit(ExitKind::Normal)),
            exit::WAIT => {
                p.live_x = ctx.live;
                return Some(Outcome::Wait);
            }
            exit::WAIT_TIMEOUT => {
                p.live_x = ctx.live;
                return Some(Outcome::WaitTimeout(ctx.wait_ms));
            }
            _ => {
                if stats::ENABLED.load(Ordering::Relaxed) {
                    stats::bailed(&p.module, p.ip);
                }
                return None;
            }
        }
    }
}

/// Puts the frames native code pushed on its way out (`Ctx::pushed`),
/// which came innermost first, in stack order.
fn order_pushed(ctx: &mut Ctx) {
    let k = ctx.pushed as usize;
    if k > 1 {
        let len = ctx.frames_len as usize;
        // SAFETY: `frames` and `frames_len` are the process's frame stack
        // as the last helper (`push_frame_out`) left it.
        let frames = unsafe { std::slice::from_raw_parts_mut(ctx.frames, len) };
        frames[len - k..].reverse();
    }
    ctx.pushed = 0;
}

/// What the native tier did, for `--engine-stats`.
pub mod stats {
    use crate::code::Module;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    struct Stats {
        compiled: usize,
        time: Duration,
        refused: Vec<String>,
        /// Bail-outs to the interpreter, by instruction name.
        bails: Vec<(&'static str, u64)>,
    }

    static STATS: Mutex<Stats> = Mutex::new(Stats {
        compiled: 0,
        time: Duration::ZERO,
        refused: Vec::new(),
        bails: Vec::new(),
    });

    /// Whether bail-outs are counted (`--engine-stats`; they are
    /// frequent, so only when asked).
    pub static ENABLED: AtomicBool = AtomicBool::new(false);

    /// Counts a bail-out at `ip` of `module`.
    pub(super) fn bailed(module: &Module, ip: u32) {
        let Some(instr) = module.code.get(ip as usize) else {
            return;
        };
        let name = instr.name();
        let mut s = STATS.lock().unwrap_or_else(|e| e.into_inner());
        match s.bails.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => s.bails.push((name, 1)),
        }
    }

    pub(super) fn record(module: &Module, function: u32, time: Duration, refused: Option<&String>) {
        let mut s = STATS.lock().unwrap_or_else(|e| e.into_inner());
        s.time += time;
        match refused {
            None => s.compiled += 1,
            Some(why) => {
                let f = &module.functions[function as usize];
                s.refused.push(format!(
                    "{}:{}/{}: {why}",
                    module.name.name(),
                    f.name.name(),
                    f.arity
                ));
            }
        }
    }

    /// The report `--engine-stats` prints after a run.
    pub fn report() -> String {
        let s = STATS.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = format!(
            "engine: {:?}\nnative: {} functions compiled in {:.3} ms, {} left to the interpreter\n",
            crate::engine::mode(),
            s.compiled,
            s.time.as_secs_f64() * 1e3,
            s.refused.len()
        );
        for why in &s.refused {
            out.push_str("  ");
            out.push_str(why);
            out.push('\n');
        }
        let mut bails = s.bails.clone();
        bails.sort_by_key(|b| std::cmp::Reverse(b.1));
        if !bails.is_empty() {
            out.push_str("bail-outs to the interpreter, by instruction:\n");
        }
        for (name, count) in bails {
            out.push_str(&format!("  {name}: {count}\n"));
        }
        out
    }
}
