//! A process: its heap, its stack of frames and Y slots, where it is in
//! the code, its catches, mailbox and dictionary.
//!
//! This is what the interpreter runs; `runtime::processes::Actor` wraps
//! it for the scheduler (links, monitors, timers), and moves arriving
//! messages into `heap` and `mailbox`. The hot fields (code position,
//! stack bounds, reductions, heap, mailbox) are inline; what few
//! processes use (catches, dictionary, the exception) is in `Cold`,
//! boxed on first use, so an idle process stays small (see `footprint`
//! for what one holds in all).
//!
//! Invariant: every term the process can reach is in `heap` or the
//! literal area, and is rooted in one of: the X registers of the
//! scheduler running it (parked on top of `stack` between run steps),
//! `stack`, `mailbox`, and the dictionary and exception in `cold`
//! (`heap_and_roots` lists them all).

mod mailbox;

pub use crate::heap::footprint::{self, Footprint};
pub use mailbox::Mailbox;

use crate::code::{Module, ModuleRef};
use crate::heap::Heap;
use crate::heap::budget::{self, SystemLimit};
use crate::term::prehashed::PrehashedMap;
use crate::term::{Atom, Term};
use std::collections::HashMap;
use std::sync::Arc;

/// A return point, pushed by a call and popped by `return`. Native code
/// reads and writes frames itself, so the layout is fixed.
#[derive(Debug)]
#[repr(C)]
pub struct Frame {
    /// Instruction to continue at.
    pub return_ip: u32,
    /// The caller's Y base.
    pub y_base: u32,
    /// The caller's module version, to return into.
    pub module: ModuleRef,
}

/// What a catch entry catches: a `try` (all classes, to the handler
/// with class/reason/stack in x0..x2) or a `catch Expr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatchKind {
    Try,
    Catch,
}

/// An active `try` or `catch`: where to resume and how much of the stack
/// to keep.
#[derive(Debug)]
pub struct CatchEntry {
    pub kind: CatchKind,
    pub handler: u32,
    pub module: ModuleRef,
    pub frames: u32,
    pub stack_len: u32,
    pub y_base: u32,
}

/// The class of an exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Error,
    Throw,
    Exit,
}

impl Class {
    pub fn atom(self) -> Atom {
        match self {
            Class::Error => Atom::ERROR,
            Class::Throw => Atom::THROW,
            Class::Exit => Atom::EXIT,
        }
    }

    pub fn from_atom(a: Atom) -> Option<Class> {
        match a {
            Atom::ERROR => Some(Class::Error),
            Atom::THROW => Some(Class::Throw),
            Atom::EXIT => Some(Class::Exit),
            _ => None,
        }
    }
}

/// Bytes one frame costs against the memory budget.
pub const FRAME_BYTES: usize = std::mem::size_of::<Frame>();

/// The part of a process that most processes never touch: an idle process
/// pays one pointer for it.
struct Cold {
    /// Active `try`s and `catch`es, innermost last.
    catches: Vec<CatchEntry>,
    /// The process dictionary as key, value, key, value... in the order
    /// the keys were put.
    dictionary: Vec<Term>,
    /// The hash of each key (`hashes[i]` for pair `i`), as the caller
    /// computed it: a function of the key's value, so collections keep it.
    hashes: Vec<u64>,
    /// Pair indices by hash, once the dictionary is past
    /// `DICTIONARY_SCAN` pairs (a scan is cheaper below).
    index: Option<PrehashedMap<Vec<u32>>>,
    /// The exception being raised or handled: class, reason, stacktrace,
    /// and the arguments of the failed call (a list, or nil) while the
    /// stacktrace is `Term::RAW_TRACE` (see `RawTrace`).
    exception: [Term; 4],
    /// Where the stack stood at the last raise, for a stacktrace still
    /// `Term::RAW_TRACE`.
    raw_trace: RawTrace,
    /// This is the script's main process, which escript's own functions
    /// call in BEAM (its stack traces end with their frames).
    script_main: bool,
    /// `{M, F, Arity}` of a process spawned as `spawn(M, F, Args)`, for
    /// `process_info(P, initial_call)` (a fun shows `erlang:apply/2`).
    initial_call: Option<(Atom, Atom, u32)>,
}

/// A stack trace recorded at a raise but not built as a term: a
/// program that catches an exception and never looks at its trace (a
/// `throw` used for control flow, `catch` of a throw) pays for a walk
/// of a few frames, not for a list of tuples with file names. The
/// interpreter builds the term when a handler binds the trace, a
/// `catch` wraps an error, or the exception ends the process (BEAM
/// keeps its raw trace the same way until `build_stacktrace`).
#[derive(Default)]
pub struct RawTrace {
    /// The functions on the stack, innermost first: their module and
    /// the instruction of the raise or of the call.
    pub frames: Vec<(ModuleRef, u32)>,
    /// How many of escript's own frames go under them (script main).
    pub under: u8,
    /// A call that failed outside act code, shown on top.
    pub top: Option<TraceTop>,
    /// A binary construction failed in the first frame: the exception's
    /// argument list holds the cause, for that frame's `error_info`.
    pub bs_fail: bool,
}

/// The call on top of a `RawTrace` that has no frame of its own; its
/// arguments are in the exception's fourth slot.
#[derive(Clone, Copy)]
pub enum TraceTop {
    /// `m:f` does not exist (`undef`): `{M, F, Args, []}`.
    Undefined(Atom, Atom),
    /// The BIF or operator `m:f` failed, as BEAM's top frame
    /// `{M, F, Args, [{error_info, #{module => ...}}]}`, which erl_error
    /// reads to explain the bad argument.
    Bif(Atom, Atom),
}

/// Pairs a dictionary holds before it gets its hash index.
const DICTIONARY_SCAN: usize = 16;

impl Default for Cold {
    fn default() -> Cold {
        Cold {
            catches: Vec::new(),
            dictionary: Vec::new(),
            hashes: Vec::new(),
            index: None,
            exception: [Term::NIL; 4],
            raw_trace: RawTrace::default(),
            script_main: false,
            initial_call: None,
        }
    }
}

impl Cold {
    fn index_pairs(&mut self) {
        let mut index: PrehashedMap<Vec<u32>> =
            HashMap::with_capacity_and_hasher(self.hashes.len(), Default::default());
        for (i, &h) in self.hashes.iter().enumerate() {
            index.entry(h).or_default().push(i as u32);
        }
        self.index = Some(index);
    }
}

pub struct Process {
    // Hot: the code position and stack bounds.
    /// The module version running (pinned: see `ModuleRef`).
    pub module: ModuleRef,
    pub ip: u32,
    pub y_base: u32,
    /// Y slots of all frames; the current frame's slots start at `y_base`.
    pub stack: Vec<Term>,
    pub frames: Vec<Frame>,
    /// Reductions spent in the current time slice, and its budget.
    pub reductions: usize,
    pub reduction_budget: usize,
    /// Reductions spent in total.
    pub total_reductions: u64,
    pub heap: Heap,
    /// The private message queue (already copied into `heap`) and the
    /// receive's save position in it.
    pub mailbox: Mailbox,
    pub save: usize,
    /// What few processes use, allocated on first use (see `Cold`).
    cold: Option<Box<Cold>>,
    /// Where a receive with a timeout resumes when the time is up.
    pub timeout_ip: u32,
    /// A receive with a timeout is waiting (its timer is armed); cleared
    /// when a message or the timeout ends the receive.
    pub in_timed_receive: bool,
    /// X registers live when the process last yielded (see `Outcome::Yield`).
    pub live_x: u32,
    /// X registers parked on top of `stack` while the process is not
    /// running (see `park_registers`).
    parked_x: u32,
    /// Bytes of stack reserved from the memory budget.
    stack_reserved: usize,
}

/// The first storage for frames and for Y slots: small, as an idle
/// process needs a few slots at most (its live variables and parked
/// registers) and deep recursion doubles the storage anyway.
const FIRST_FRAMES: usize = 4;
const FIRST_STACK_SLOTS: usize = 4;

/// A stack smaller than this is not worth shrinking.
const STACK_CHUNK: usize = 1 << 20;

impl Process {
    /// A process about to run instruction `ip` of `module`.
    pub fn new(module: Arc<Module>, ip: u32) -> Process {
        Process {
            module: ModuleRef::pin(&module),
            ip,
            y_base: 0,
            stack: Vec::new(),
            frames: Vec::new(),
            reductions: 0,
            reduction_budget: 0,
            total_reductions: 0,
            heap: Heap::new(),
            mailbox: Mailbox::new(),
            save: 0,
            cold: None,
            timeout_ip: 0,
            in_timed_receive: false,
            live_x: 0,
            parked_x: 0,
            stack_reserved: 0,
        }
    }

    fn cold(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
    }

    /// Marks this process as the script's main process (see `Cold`).
    pub fn set_script_main(&mut self) {
        self.cold().script_main = true;
    }

    /// Records what `spawn(M, F, Args)` started this process with.
    pub fn set_initial_call(&mut self, m: Atom, f: Atom, arity: u32) {
        self.cold().initial_call = Some((m, f, arity));
    }

    /// `{M, F, Arity}` for `process_info(P, initial_call)`.
    pub fn initial_call(&self) -> (Atom, Atom, u32) {
        self.cold.as_ref().and_then(|c| c.initial_call).unwrap_or((
            Atom::ERLANG,
            Atom::intern("apply"),
            2,
        ))
    }

    /// Whether this is the script's main process.
    pub fn is_script_main(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.script_main)
    }

    /// Enters a `try` or `catch` whose handler is `handler` in `module`:
    /// the entry records the frame and stack depths to unwind to.
    /// `unpushed`: frames of calls already made but not yet on the frame
    /// stack (native code's nested calls, `native::Ctx::lazy`), which
    /// will be under this entry's frames when they are.
    #[inline]
    pub fn push_catch(&mut self, kind: CatchKind, handler: u32, module: ModuleRef, unpushed: u32) {
        let entry = CatchEntry {
            kind,
            handler,
            module,
            frames: self.frames.len() as u32 + unpushed,
            stack_len: self.stack.len() as u32,
            y_base: self.y_base,
        };
        self.cold().catches.push(entry);
    }

    /// How many `try`s and `catch`es are active, as
    /// `process_info(P, catchlevel)` counts them (escript's own two under
    /// a script's `main/1` included).
    pub fn catch_level(&self) -> usize {
        let own = self.cold.as_ref().map_or(0, |c| c.catches.len());
        own + if self.is_script_main() { 2 } else { 0 }
    }

    /// Leaves the innermost `try` or `catch` (normally or by an exception).
    #[inline]
    pub fn pop_catch(&mut self) -> Option<CatchEntry> {
        self.cold.as_mut()?.catches.pop()
    }

    /// The process dictionary as key, value, key, value...
    pub fn dictionary(&self) -> &[Term] {
        self.cold.as_ref().map_or(&[], |c| &c.dictionary)
    }

    /// The pair whose key has `hash` and is the one `same` accepts.
    pub fn dictionary_find(&self, hash: u64, same: impl Fn(Term) -> bool) -> Option<usize> {
        let c = self.cold.as_ref()?;
        match &c.index {
            Some(index) => index
                .get(&hash)?
                .iter()
                .map(|&i| i as usize)
                .find(|&i| same(c.dictionary[2 * i])),
            None => (0..c.hashes.len()).find(|&i| c.hashes[i] == hash && same(c.dictionary[2 * i])),
        }
    }

    /// Adds a pair whose key (of hash `hash`) is not in the dictionary.
    pub fn dictionary_insert(&mut self, hash: u64, key: Term, value: Term) {
        let c = self.cold();
        c.dictionary.extend([key, value]);
        c.hashes.push(hash);
        let i = c.hashes.len() - 1;
        match &mut c.index {
            Some(index) => index.entry(hash).or_default().push(i as u32),
            None if c.hashes.len() > DICTIONARY_SCAN => c.index_pairs(),
            None => {}
        }
    }

    /// Replaces the value of pair `i`; returns the old one.
    pub fn dictionary_replace(&mut self, i: usize, value: Term) -> Term {
        std::mem::replace(&mut self.cold().dictionary[2 * i + 1], value)
    }

    /// Removes pair `i` (the others keep their order); returns its value.
    pub fn dictionary_remove(&mut self, i: usize) -> Term {
        let c = self.cold();
        let value = c.dictionary[2 * i + 1];
        c.dictionary.drain(2 * i..2 * i + 2);
        c.hashes.remove(i);
        if c.index.is_some() {
            c.index_pairs();
        }
        value
    }

    pub fn dictionary_clear(&mut self) {
        let c = self.cold();
        c.dictionary.clear();
        c.hashes.clear();
        c.index = None;
    }

    /// The exception being raised or handled: class, reason, stacktrace
    /// (nil before the first one).
    pub fn exception(&self) -> [Term; 3] {
        self.cold.as_ref().map_or([Term::NIL; 3], |c| {
            let [class, reason, trace, _] = c.exception;
            [class, reason, trace]
        })
    }

    /// Sets the exception; a stacktrace of `Term::RAW_TRACE` keeps the
    /// recorded trace and its arguments (a re-raise of one not built).
    pub fn set_exception(&mut self, [class, reason, trace]: [Term; 3]) {
        let e = &mut self.cold().exception;
        let args = if trace == Term::RAW_TRACE {
            e[3]
        } else {
            Term::NIL
        };
        *e = [class, reason, trace, args];
    }

    /// The exception's slots: class, reason, stacktrace and the failed
    /// call's arguments (see `Cold::exception`).
    pub fn exception_mut(&mut self) -> &mut [Term; 4] {
        &mut self.cold().exception
    }

    /// The trace recorded by the last raise (see `RawTrace`).
    pub fn raw_trace(&self) -> Option<&RawTrace> {
        self.cold.as_ref().map(|c| &c.raw_trace)
    }

    pub fn raw_trace_mut(&mut self) -> &mut RawTrace {
        &mut self.cold().raw_trace
    }

    /// The heap and every root of the process but the X registers: the
    /// stack, the mailbox (three slices), the dictionary and the exception.
    pub fn heap_and_roots(&mut self) -> (&mut Heap, [&mut [Term]; 6]) {
        let Process {
            heap,
            stack,
            mailbox,
            cold,
            ..
        } = self;
        let [first, older, newer] = mailbox.as_mut_slices();
        let (dictionary, exception): (&mut [Term], &mut [Term]) = match cold {
            Some(c) => (&mut c.dictionary, &mut c.exception),
            None => (&mut [], &mut []),
        };
        (heap, [stack, first, older, newer, dictionary, exception])
    }

    /// Bytes the stack uses now (Y slots and frames).
    pub fn stack_bytes(&self) -> usize {
        self.stack.len() * 8 + self.frames.len() * FRAME_BYTES
    }

    /// Bytes the stack's storage takes (what the budget is charged).
    fn stack_capacity_bytes(&self) -> usize {
        self.stack.capacity() * 8 + self.frames.capacity() * FRAME_BYTES
    }

    /// Brings the budget charge in line with the storage after it changed.
    fn account_stack(&mut self) {
        let now = self.stack_capacity_bytes();
        if now > self.stack_reserved {
            budget::force_reserve(now - self.stack_reserved);
        } else {
            budget::release(self.stack_reserved - now);
        }
        self.stack_reserved = now;
    }

    /// Makes room for one more frame, doubling the frame storage after
    /// asking the memory budget: `SystemLimit` when it says no, which the
    /// interpreter raises as `system_limit` (deep recursion never crashes).
    #[cold]
    pub fn grow_frames(&mut self) -> Result<(), SystemLimit> {
        let cap = self.frames.capacity();
        let new = (cap * 2).max(FIRST_FRAMES);
        budget::reserve((new - cap) * FRAME_BYTES)?;
        let reserved = self
            .frames
            .try_reserve_exact(new - self.frames.len())
            .is_ok();
        budget::release((new - cap) * FRAME_BYTES);
        self.account_stack();
        if reserved { Ok(()) } else { Err(SystemLimit) }
    }

    /// Pushes `frame` of a call already made, which cannot be refused
    /// (native code's nested calls push their frames only as they leave
    /// it, see `native::Ctx::lazy`): past the memory budget the storage
    /// grows all the same, charged, so the next `grow_frames` says no.
    pub fn push_frame_forced(&mut self, frame: Frame) {
        if self.frames.len() == self.frames.capacity() && self.grow_frames().is_err() {
            self.frames.reserve(1);
            self.account_stack();
        }
        self.frames.push(frame);
    }

    /// Makes room for `slots` more Y slots (see `grow_frames`).
    #[cold]
    pub fn grow_stack(&mut self, slots: usize) -> Result<(), SystemLimit> {
        let cap = self.stack.capacity();
        let new = (cap * 2)
            .max(self.stack.len() + slots)
            .max(FIRST_STACK_SLOTS);
        budget::reserve((new - cap) * 8)?;
        let reserved = self.stack.try_reserve_exact(new - self.stack.len()).is_ok();
        budget::release((new - cap) * 8);
        self.account_stack();
        if reserved { Ok(()) } else { Err(SystemLimit) }
    }

    /// Parks the X registers `x` on top of the stack while the process is
    /// not running (a fresh process's arguments, a waiting process's live
    /// registers), so they need no allocation of their own. `SystemLimit`
    /// when the stack cannot grow.
    ///
    /// Invariant: while registers are parked the process does not run, so
    /// no Y slot above `y_base` is read and no collection sees them as
    /// stack slots; `unpark_registers` takes them off before it runs.
    pub fn park_registers(&mut self, x: &[Term]) -> Result<(), SystemLimit> {
        debug_assert_eq!(self.parked_x, 0, "registers parked twice");
        if self.stack.len() + x.len() > self.stack.capacity() && self.grow_stack(x.len()).is_err() {
            // A process must be able to stop (its registers are few):
            // past the memory budget the slots are taken all the same,
            // charged, as `push_frame_forced` takes a frame.
            self.stack.try_reserve(x.len()).map_err(|_| SystemLimit)?;
            self.account_stack();
        }
        self.stack.extend_from_slice(x);
        self.parked_x = x.len() as u32;
        Ok(())
    }

    /// Gives back the memory of a process that has exited: its heap, its
    /// mailbox and its stack (see `ProcessBody::on_exiting`).
    pub fn release_memory(&mut self) {
        self.heap = Heap::new();
        self.mailbox = Mailbox::new();
        self.save = 0;
        self.stack = Vec::new();
        self.frames = Vec::new();
        self.parked_x = 0;
        self.cold = None;
        self.account_stack();
    }

    /// Moves the parked registers back into `x` (nil after them) and off
    /// the stack.
    pub fn unpark_registers(&mut self, x: &mut [Term]) {
        let n = self.parked_x as usize;
        let from = self.stack.len() - n;
        x[..n].copy_from_slice(&self.stack[from..]);
        x[n..].fill(Term::NIL);
        self.stack.truncate(from);
        self.parked_x = 0;
    }

    /// Registers parked now.
    pub fn parked_registers(&self) -> usize {
        self.parked_x as usize
    }

    /// Gives storage back after an exception unwound a deep stack.
    pub fn shrink_stack(&mut self) {
        if self.stack_capacity_bytes() > 4 * self.stack_bytes() + STACK_CHUNK {
            self.stack.shrink_to(self.stack.len() * 2);
            self.frames.shrink_to(self.frames.len() * 2);
            self.account_stack();
        }
    }

    /// Lists the allocations the process holds (see `footprint`).
    pub fn footprint(&self, f: &mut Footprint) {
        self.heap.footprint(f);
        f.allocation("Y stack", self.stack.capacity() * 8);
        f.allocation("frames", self.frames.capacity() * FRAME_BYTES);
        f.allocation("mailbox", self.mailbox.capacity() * 8);
        if self.mailbox.has_mark() {
            f.allocation("reference mark", 16);
        }
        if let Some(cold) = &self.cold {
            f.allocation(
                "catches, dictionary, exception",
                std::mem::size_of::<Cold>(),
            );
            f.allocation(
                "catches",
                cold.catches.capacity() * std::mem::size_of::<CatchEntry>(),
            );
            f.allocation("dictionary", cold.dictionary.capacity() * 8);
        }
    }

    /// Makes `words` heap words free, collecting with every root of the
    /// process plus `x` (the X registers) and `extra` (a BIF's arguments).
    #[inline]
    pub fn ensure_heap(
        &mut self,
        words: usize,
        x: &mut [Term],
        extra: &mut [Term],
    ) -> Result<(), SystemLimit> {
        // The common case, before the roots are gathered.
        if self.heap.has_room(words) {
            return Ok(());
        }
        let (heap, [stack, first, older, newer, dictionary, exception]) = self.heap_and_roots();
        heap.ensure(
            words,
            &mut [x, extra, stack, first, older, newer, dictionary, exception],
        )
    }
}

impl Process {
    /// Collects now, with every root of the process and the X registers
    /// `x` (native code's boxing grew the heap where it could not).
    pub fn collect(&mut self, x: &mut [Term]) -> Result<(), SystemLimit> {
        let (heap, [stack, first, older, newer, dictionary, exception]) = self.heap_and_roots();
        heap.collect(
            0,
            &mut [
                x,
                &mut [],
                stack,
                first,
                older,
                newer,
                dictionary,
                exception,
            ],
        )
    }

    /// Builds `c` on the heap; a collection it needs keeps every root of
    /// the process, with the X registers `x` and the terms `extra`.
    pub fn build_constant(
        &mut self,
        c: &crate::term::Constant,
        x: &mut [Term],
        extra: &mut [Term],
    ) -> Result<Term, SystemLimit> {
        let (heap, [stack, first, older, newer, dictionary, exception]) = self.heap_and_roots();
        heap.build_constant(
            c,
            &mut [x, extra, stack, first, older, newer, dictionary, exception],
        )
    }

    /// `ensure_heap` for the few words of an exception being raised (its
    /// stack trace, the `{'EXIT', ...}` of a catch): past the memory budget
    /// it still collects into a space big enough, so a process that hit
    /// the limit is told why and where, as any other error, instead of a
    /// bare `system_limit`.
    pub fn ensure_heap_for_exception(
        &mut self,
        words: usize,
        x: &mut [Term],
        extra: &mut [Term],
    ) -> Result<(), SystemLimit> {
        if self.ensure_heap(words, x, extra).is_ok() {
            return Ok(());
        }
        let (heap, [stack, first, older, newer, dictionary, exception]) = self.heap_and_roots();
        heap.collect_past_budget(
            words,
            &mut [x, extra, stack, first, older, newer, dictionary, exception],
        )
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        budget::release(self.stack_reserved);
    }
}
