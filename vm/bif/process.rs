//! The process BIFs: spawn, send, links, monitors, names, exit signals,
//! and the runtime queries (`processes()`, `system_info`, time).
//!
//! A BIF reaches the runtime through `Services`, the process's door to
//! the scheduler for the length of one run step. The runtime
//! (`runtime::processes`) installs it with `with_installed` around
//! `interp::run`; outside a run step (the sequential path, tests) the
//! `Solo` services of a lone process answer instead.
//!
//! Invariant: at most one `Services` is installed per thread, and only
//! for the duration of `with_installed`; `services()` hands it out to one
//! BIF at a time (BIFs never call act code, so they never nest).

use super::{BifError, BifResult, Context};
use crate::heap::{self, MessageBuffer};
use crate::process::Process;
use crate::runtime::aliases::Mode as AliasMode;
use crate::runtime::nodes::{SendOptions, Sent};
use crate::sched::Pid;
use crate::sched::send_timer::Destination;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::cell::Cell;

/// How a spawned process starts.
pub enum Start {
    /// Run the process's code with these terms (on its own heap) in x0...
    Run(Vec<Term>),
    /// The function is a BIF (`spawn(io, format, [...])`): the process
    /// calls it with these arguments (on its heap) and exits.
    Bif(u16, Vec<Term>),
    /// The call cannot be made: the process exits at once with this
    /// reason on its own heap (`{undef, [{M, F, Args, []}]}` for a
    /// function that does not exist).
    Fail(Term),
}

/// A process to spawn, built by the spawning BIF.
pub struct Spawn {
    pub process: Process,
    pub start: Start,
    /// `spawn_link`: the child starts linked to its parent.
    pub link: bool,
    /// `spawn_monitor`: the parent monitors the child with this reference.
    pub monitor: Option<u64>,
}

/// What the process BIFs need from the runtime, for the running process.
pub trait Services {
    fn self_pid(&self) -> Pid;
    /// Sends a message; a dead receiver drops it.
    fn send(&mut self, to: Pid, message: MessageBuffer);
    /// A send to another node found its connection busy: the process
    /// suspends at the end of this time slice until `node`'s connection
    /// drains.
    fn suspend_on(&mut self, _node: Atom) {}
    /// Spawns a process; `None` past `--max-processes`.
    fn spawn(&mut self, spawn: Spawn) -> Option<Pid>;
    /// `link(Pid)`; false if `pid` is dead (nothing is recorded then).
    fn link(&mut self, pid: Pid) -> bool;
    fn unlink(&mut self, pid: Pid);
    /// `monitor(process, Pid)`: the reference id; a dead target answers
    /// with a `noproc` 'DOWN' at once.
    fn monitor(&mut self, pid: Pid) -> u64;
    /// The monitor `reference` was asked for by registered `name`: its
    /// 'DOWN' names `{Name, Node}` instead of the pid, as in Erlang.
    fn name_monitor(&mut self, _reference: u64, _name: Atom) {}
    /// `monitor/3`'s `{tag, Tag}`: the monitor `reference`'s 'DOWN' has
    /// `tag` where 'DOWN' would be.
    fn tag_monitor(&mut self, _reference: u64, _tag: MessageBuffer) {}
    /// An io request went to an act process with the monitor
    /// `reference` as its reply tag: the process runs no code until the
    /// reply (or the monitor's 'DOWN') is in its mailbox
    /// (`bif::io_server`).
    fn await_io_reply(&mut self, _reference: u64) {}
    /// `demonitor(Ref)`: whether the monitor was still active.
    fn demonitor(&mut self, reference: u64) -> bool;
    /// The process makes the reference `id` an alias of itself, active
    /// until `mode` says (`runtime::aliases`).
    fn alias(&mut self, _id: u64, _mode: crate::runtime::aliases::Mode) {}
    /// `unalias(Ref)`: whether `id` was an active alias of this process.
    fn unalias(&mut self, _id: u64) -> bool {
        false
    }
    /// `Alias ! Msg` for a local reference that is no port: to the alias's
    /// owner, or nowhere when it is no alias.
    fn send_alias(&mut self, _id: u64, _message: MessageBuffer) {}
    /// An exit signal to `to` as if from `from` (`exit(Pid, Reason)` has
    /// `from` = self; a link to a dead pid answers itself from that pid).
    fn exit_signal(&mut self, to: Pid, from: Pid, reason: MessageBuffer);
    /// This process just sent `to` a `kill` exit signal.
    fn killed(&mut self, _to: Pid) {}
    /// `to` is a process this one killed that has not finished exiting:
    /// true, and the process runs no more code until `to` has left the
    /// process table (the caller ends the time slice).
    fn await_exit(&mut self, _to: Pid) -> bool {
        false
    }
    /// `process_flag(trap_exit, On)`: the old value.
    fn set_trap_exit(&mut self, on: bool) -> bool;
    fn trap_exit(&self) -> bool;
    fn register(&mut self, name: Atom, pid: Pid) -> bool;
    fn unregister(&mut self, name: Atom) -> bool;
    fn whereis(&self, name: Atom) -> Option<Pid>;
    fn registered(&self) -> Vec<Atom>;
    fn is_alive(&self, pid: Pid) -> bool;
    fn processes(&self) -> Vec<Pid>;
    fn process_count(&self) -> usize;
    fn schedulers(&self) -> usize;
    fn total_reductions(&self) -> u64;
    fn make_ref(&mut self) -> u64;
    /// Nanoseconds on the VM's clock (virtual under `--deterministic`).
    fn now_ns(&self) -> u64;
    /// `erlang:send_after` and `start_timer`: timer `id` sends `message`
    /// to `to` after `after_ns` (a lone process has no timers).
    fn start_send_timer(
        &mut self,
        _id: u64,
        _after_ns: u64,
        _to: Destination,
        _message: MessageBuffer,
    ) {
    }
    /// Cancels timer `id`: the nanoseconds it had left, if it was pending.
    fn cancel_send_timer(&mut self, _id: u64) -> Option<u64> {
        None
    }
    /// The nanoseconds timer `id` has left, if it is pending.
    fn read_send_timer(&self, _id: u64) -> Option<u64> {
        None
    }
    /// The running process's links, monitors it holds (reference, target)
    /// and the processes monitoring it, for `process_info`.
    fn relations(&self) -> (Vec<Pid>, Vec<(u64, Pid)>, Vec<Pid>) {
        (Vec::new(), Vec::new(), Vec::new())
    }
    /// The state of another live process that is not running right now
    /// (`None`: dead, running elsewhere, or no runtime).
    fn inspect(
        &mut self,
        _pid: Pid,
        _want: super::inspect::Want,
    ) -> Option<super::inspect::Snapshot> {
        None
    }
}

/// The services of a process that runs alone (the sequential path): it
/// is pid 0, sends to others go nowhere, and it cannot spawn.
#[derive(Default)]
pub struct Solo {
    next_ref: u64,
    trap_exit: bool,
}

impl Services for Solo {
    fn self_pid(&self) -> Pid {
        Pid::from_id(0)
    }
    fn send(&mut self, _: Pid, _: MessageBuffer) {}
    fn spawn(&mut self, _: Spawn) -> Option<Pid> {
        None
    }
    fn link(&mut self, pid: Pid) -> bool {
        pid == self.self_pid()
    }
    fn unlink(&mut self, _: Pid) {}
    fn monitor(&mut self, _: Pid) -> u64 {
        self.make_ref()
    }
    fn demonitor(&mut self, _: u64) -> bool {
        false
    }
    fn exit_signal(&mut self, _: Pid, _: Pid, _: MessageBuffer) {}
    fn set_trap_exit(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.trap_exit, on)
    }
    fn trap_exit(&self) -> bool {
        self.trap_exit
    }
    fn register(&mut self, _: Atom, _: Pid) -> bool {
        false
    }
    fn unregister(&mut self, _: Atom) -> bool {
        false
    }
    fn whereis(&self, _: Atom) -> Option<Pid> {
        None
    }
    fn registered(&self) -> Vec<Atom> {
        Vec::new()
    }
    fn is_alive(&self, pid: Pid) -> bool {
        pid == self.self_pid()
    }
    fn processes(&self) -> Vec<Pid> {
        vec![self.self_pid()]
    }
    fn process_count(&self) -> usize {
        1
    }
    fn schedulers(&self) -> usize {
        1
    }
    fn total_reductions(&self) -> u64 {
        0
    }
    fn make_ref(&mut self) -> u64 {
        self.next_ref += 1;
        self.next_ref
    }
    fn now_ns(&self) -> u64 {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

type Installed = *mut (dyn Services + 'static);

thread_local! {
    /// The services of the run step on this thread (null outside one, or
    /// while a BIF holds them).
    static INSTALLED: Cell<Option<Installed>> = const { Cell::new(None) };
}

/// Runs `f` with `services` installed for the BIFs it runs on this thread.
pub fn with_installed<R>(services: &mut dyn Services, f: impl FnOnce() -> R) -> R {
    // SAFETY (the lifetime erasure): the pointer is only dereferenced by
    // `services()` while this call is on the stack (it is removed before
    // returning, by the guard, even on unwind), so it never outlives
    // the borrow it came from.
    let ptr: *mut (dyn Services + '_) = services;
    let ptr: Installed = unsafe { std::mem::transmute(ptr) };
    struct Restore(Option<Installed>);
    impl Drop for Restore {
        fn drop(&mut self) {
            INSTALLED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(INSTALLED.with(|c| c.replace(Some(ptr))));
    f()
}

/// Calls `f` with the installed services, or with a fresh `Solo` when no
/// run step installed any.
pub fn services<R>(f: impl FnOnce(&mut dyn Services) -> R) -> R {
    match INSTALLED.with(|c| c.take()) {
        Some(ptr) => {
            struct PutBack(Installed);
            impl Drop for PutBack {
                fn drop(&mut self) {
                    INSTALLED.with(|c| c.set(Some(self.0)));
                }
            }
            let guard = PutBack(ptr);
            // SAFETY: `ptr` came from the `&mut` that `with_installed`
            // holds for this whole call, and it was taken out of the cell,
            // so no other `&mut` to it exists until `guard` puts it back.
            let s = unsafe { &mut *guard.0 };
            f(s)
        }
        None => f(&mut Solo::default()),
    }
}

fn pid_of(t: Term) -> Result<Pid, BifError> {
    Pid::from_term(t).ok_or(BifError::Badarg)
}

fn copy_out(ctx: &Context, t: Term) -> Result<MessageBuffer, BifError> {
    MessageBuffer::copy_from(&ctx.process.heap, t).map_err(|_| BifError::SystemLimit)
}

/// The reference id of a reference term.
pub fn reference_id(heap: &heap::Heap, t: Term) -> Option<u64> {
    match heap.view(t) {
        View::Ref(id) => Some(id),
        _ => None,
    }
}

/// A fresh reference term for `id`.
fn reference(ctx: &mut Context, args: &mut [Term], id: u64) -> BifResult {
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(id))
}

// ---------------------------------------------------------------------
// Sending.

/// `To ! Msg` and `erlang:send/2`: to a pid or a registered name.
pub fn send_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let msg = args[1];
    // The common case first: a local pid (an immediate), no port.
    match Pid::from_term(args[0]) {
        Some(pid) => send_local(ctx.process, pid, msg)?,
        None => {
            send_other(ctx, args[0], msg, SendOptions::default())?;
        }
    }
    Ok(msg)
}

/// A message from `process` to the local `pid` (the native tier's send
/// comes here straight, `native::helpers::send_local`).
pub(crate) fn send_local(process: &mut Process, pid: Pid, msg: Term) -> Result<(), BifError> {
    // One visit to the services for the test and the send.
    services(|s| {
        if pid == s.self_pid() {
            // To itself: the term is on this heap already, and a process's
            // signals to itself arrive in order, so it goes straight in,
            // charged as any message (see `heap::MESSAGE_BYTES`).
            heap::budget::charge(heap::MESSAGE_BYTES).map_err(|_| BifError::SystemLimit)?;
            process.mailbox.push_charged(msg);
            return Ok(());
        }
        let buffer =
            MessageBuffer::for_send(&process.heap, msg).map_err(|_| BifError::SystemLimit)?;
        s.send(pid, buffer);
        Ok(())
    })
}

/// A send to anything but a local pid: a name, `{Name, Node}`, a port,
/// a pid of another node.
#[cold]
fn send_other(
    ctx: &mut Context,
    to: Term,
    msg: Term,
    options: SendOptions,
) -> Result<Sent, BifError> {
    match send_target(ctx, to, msg, options)? {
        Ok(pid) => send_local(ctx.process, pid, msg).map(|_| Sent::Ok),
        Err(sent) => Ok(sent),
    }
}

/// The options of `erlang:send/3` (`nosuspend`, `noconnect`); `badarg`
/// for anything else or an improper list, with BEAM's cause `badopt`
/// for the error report of `function`.
fn send_options(ctx: &Context, function: &str, mut options: Term) -> Result<SendOptions, BifError> {
    let badopt = || {
        super::set_badarg_cause(Atom::intern(function), Atom::intern("badopt"));
        BifError::Badarg
    };
    let heap = &ctx.process.heap;
    let mut parsed = SendOptions::default();
    while options.is_cons() {
        let (option, rest) = heap.cons_parts(options);
        if option == Term::atom(Atom::intern("nosuspend")) {
            parsed.nosuspend = true;
        } else if option == Term::atom(Atom::intern("noconnect")) {
            parsed.noconnect = true;
        } else {
            return Err(badopt());
        }
        options = rest;
    }
    if !options.is_nil() {
        return Err(badopt());
    }
    Ok(parsed)
}

/// `erlang:send(Dest, Msg, Options)`: `ok` when the message went (or was
/// dropped, as a send to a name on an unreachable node is); to another
/// node, `nosuspend` when the send said so and the connection is busy,
/// and `noconnect` when it said so and there is no connection, the
/// message not sent in both cases, as BEAM answers.
pub fn send_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let options = send_options(ctx, "send", args[2])?;
    let sent = match Pid::from_term(args[0]) {
        Some(pid) => send_local(ctx.process, pid, args[1]).map(|_| Sent::Ok)?,
        None => send_other(ctx, args[0], args[1], options)?,
    };
    Ok(match sent {
        Sent::Ok | Sent::Suspend(_) => Term::OK,
        Sent::NoSuspend => Term::atom(Atom::intern("nosuspend")),
        Sent::NoConnect => Term::atom(Atom::intern("noconnect")),
    })
}

/// `erlang:send_nosuspend(Dest, Msg)`: `erlang:send/3` with `nosuspend`,
/// true when the message went.
pub fn send_nosuspend_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let options = SendOptions {
        nosuspend: true,
        noconnect: false,
    };
    nosuspend(ctx, args[0], args[1], options)
}

/// `erlang:send_nosuspend(Dest, Msg, Options)`: the same with
/// `Options` (`noconnect`) too; false when the message did not go.
pub fn send_nosuspend_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut options = send_options(ctx, "send_nosuspend", args[2])?;
    options.nosuspend = true;
    nosuspend(ctx, args[0], args[1], options)
}

fn nosuspend(ctx: &mut Context, to: Term, msg: Term, options: SendOptions) -> BifResult {
    let sent = match Pid::from_term(to) {
        Some(pid) => send_local(ctx.process, pid, msg).map(|_| Sent::Ok)?,
        None => send_other(ctx, to, msg, options)?,
    };
    Ok(Term::boolean(matches!(sent, Sent::Ok)))
}

/// The local process a send to `to` (not a local pid) goes to
/// (`Ok(pid)`): a registered name, `{Name, Node}`; or what became of
/// the message (`Err`) when it went elsewhere (another node, a port) or
/// was dropped (a name nobody holds on a node).
#[cold]
fn send_target(
    ctx: &mut Context,
    to: Term,
    msg: Term,
    options: SendOptions,
) -> Result<Result<Pid, Sent>, BifError> {
    if let Some(result) = super::port::send(ctx, to, msg) {
        return result.map(|_| Err(Sent::Ok));
    }
    Ok(Ok(match to.as_atom() {
        Some(name) => services(|s| s.whereis(name)).ok_or(BifError::Badarg)?,
        None => match ctx.process.heap.as_tuple(to) {
            // `{Name, Node} ! Msg`: a registered name on a node. As in
            // Erlang, a name nobody holds (or an unreachable node) drops
            // the message instead of raising.
            Some(&[name, node]) if name.is_atom() && node.is_atom() => {
                let (Some(name), Some(node)) = (name.as_atom(), node.as_atom()) else {
                    return Ok(Err(Sent::Ok));
                };
                let this = crate::term::node::this_node().name;
                if node != Atom::NONODE && node != this {
                    return send_remote_name(ctx, name, node, msg, options).map(Err);
                }
                match services(|s| s.whereis(name)) {
                    Some(pid) => pid,
                    None => return Ok(Err(Sent::Ok)),
                }
            }
            _ => match ctx.process.heap.view(to) {
                View::ExtPid { node, id } => {
                    return send_remote_pid(ctx, node, id, msg, options).map(Err);
                }
                // An alias (ports went above), or a reference that is
                // none: the message goes to its owner or nowhere.
                View::Ref(id) => {
                    let buffer = MessageBuffer::for_send(&ctx.process.heap, msg)
                        .map_err(|_| BifError::SystemLimit)?;
                    services(|s| s.send_alias(id, buffer));
                    return Ok(Err(Sent::Ok));
                }
                // An alias of another node: act reaches none.
                View::ExtRef { .. } => return Ok(Err(Sent::Ok)),
                _ => pid_of(to)?,
            },
        },
    }))
}

/// The message in the external format, for another node (a term the
/// format cannot carry, such as a local fun, is `badarg`).
pub(super) fn external(ctx: &Context, msg: Term) -> Result<Vec<u8>, BifError> {
    crate::term::etf::term_to_binary(&ctx.process.heap, msg).map_err(|e| match e {
        crate::term::etf::EtfError::SystemLimit => BifError::SystemLimit,
        _ => BifError::Badarg,
    })
}

/// `Pid ! Msg` to a pid of another node: encoded from this heap straight
/// into the connection's outbound buffer.
fn send_remote_pid(
    ctx: &mut Context,
    node: u32,
    id: u64,
    msg: Term,
    options: SendOptions,
) -> Result<Sent, BifError> {
    let payload = external(ctx, msg)?;
    let me = services(|s| s.self_pid());
    let sent = crate::runtime::nodes::send_to_pid(me, node, id, &payload, options);
    suspend_if_busy(ctx, sent);
    Ok(sent)
}

/// `{Name, Node} ! Msg` for another node.
fn send_remote_name(
    ctx: &mut Context,
    name: Atom,
    node: Atom,
    msg: Term,
    options: SendOptions,
) -> Result<Sent, BifError> {
    let payload = external(ctx, msg)?;
    let me = services(|s| s.self_pid());
    let sent = crate::runtime::nodes::send_to_name(me, node, name, &payload, options);
    suspend_if_busy(ctx, sent);
    Ok(sent)
}

/// The message went onto a busy connection: the process suspends, as
/// BEAM suspends a sender on a busy distribution port. Its time slice
/// ends here, and the runtime keeps it off the schedulers until the
/// connection drains.
fn suspend_if_busy(ctx: &mut Context, sent: Sent) {
    if let Sent::Suspend(node) = sent {
        services(|s| s.suspend_on(node));
        let p = &mut ctx.process;
        p.reductions = p.reductions.max(p.reduction_budget);
    }
}

pub fn self_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(services(|s| s.self_pid()).to_term())
}

pub fn make_ref_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = services(|s| s.make_ref());
    ctx.process.mailbox.set_mark(id);
    reference(ctx, args, id)
}

/// `alias()`: a fresh reference that is an alias of this process until
/// `unalias/1`.
pub fn alias_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    new_alias(ctx, args, AliasMode::Explicit)
}

/// `alias(Options)`: `[explicit_unalias]` (the default) or `[reply]`
/// (the alias ends with the first message through it); the last one
/// counts.
pub fn alias_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let options =
        super::erlang::list_elements(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let mut mode = AliasMode::Explicit;
    for option in options {
        mode = match option.as_atom().map(Atom::name) {
            Some("explicit_unalias") => AliasMode::Explicit,
            Some("reply") => AliasMode::Reply,
            _ => return Err(BifError::Badarg),
        };
    }
    new_alias(ctx, &mut args[..0], mode)
}

fn new_alias(ctx: &mut Context, args: &mut [Term], mode: AliasMode) -> BifResult {
    let id = services(|s| {
        let id = s.make_ref();
        s.alias(id, mode);
        id
    });
    ctx.process.mailbox.set_mark(id);
    reference(ctx, args, id)
}

/// `unalias(Alias)`: whether it was an active alias of this process.
pub fn unalias_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let id = match heap.view(args[0]) {
        View::Ref(id) if id < super::port::PORT_BASE => id,
        View::ExtRef { .. } => return Ok(Term::FALSE),
        _ => return Err(BifError::Badarg),
    };
    Ok(Term::boolean(services(|s| s.unalias(id))))
}

/// `erlang:'$recv_use'(Ref)`, emitted by the compiler before a receive
/// whose every pattern needs the bound `Ref`: starts the scan past the
/// messages queued before `Ref` was made (none of them can hold it).
/// Anything but the newest reference leaves the scan where it is.
pub fn recv_use_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some(id) = reference_id(&ctx.process.heap, args[0]) {
        let at = ctx.process.mailbox.mark_of(id);
        if ctx.process.save < at {
            ctx.process.save = at;
        }
    }
    Ok(args[0])
}

// ---------------------------------------------------------------------
// Spawning.

/// Builds the child process for `Fun` (arity 0) or `M:F(Args)`; the
/// arguments are copied onto the child's heap.
fn build_child(ctx: &Context, what: SpawnOf) -> Result<(Process, Start), BifError> {
    let heap = &ctx.process.heap;
    let (module, entry, args, undef) = match what {
        SpawnOf::Fun(fun) => return build_fun_child(ctx, fun, Term::NIL, Vec::new()),
        SpawnOf::Mfa(m, f, a) => {
            let (Some(m), Some(f)) = (m.as_atom(), f.as_atom()) else {
                return Err(BifError::Badarg);
            };
            let args = super::erlang::list_elements(heap, a).ok_or(BifError::Badarg)?;
            // `spawn(erlang, apply, [Fun, Args])` and `[M, F, Args]`:
            // apply is an instruction, not a function, so the child
            // starts in what it applies (a bad call fails in the child).
            if m == Atom::ERLANG && f.name() == "apply" {
                match args[..] {
                    [fun, list]
                        if matches!(
                            heap.view(fun),
                            View::Fun { .. } | View::ExternalFun { .. }
                        ) =>
                    {
                        if let Some(fargs) = super::erlang::list_elements(heap, list) {
                            return match build_fun_child(ctx, fun, list, fargs) {
                                Ok(started) => Ok(started),
                                // BEAM's child dies as its apply/2 would.
                                Err(BifError::Badarg) => {
                                    failed_apply(ctx, Atom::BADARITY, fun, list)
                                }
                                Err(e) => Err(e),
                            };
                        }
                    }
                    [fun, list] if super::erlang::list_elements(heap, list).is_some() => {
                        return failed_apply(ctx, Atom::BADFUN, fun, list);
                    }
                    [m2, f2, list]
                        if m2.as_atom().is_some()
                            && f2.as_atom().is_some()
                            && super::erlang::list_elements(heap, list).is_some() =>
                    {
                        return build_child(ctx, SpawnOf::Mfa(m2, f2, list));
                    }
                    _ => {}
                }
            }
            if let Some(index) = super::lookup_atoms(m, f, args.len() as u32) {
                let mut child = Process::new(ctx.process.module.to_arc(), 0);
                let copied = copy_args(heap, &args, &mut child)?;
                return Ok((child, Start::Bif(index, copied)));
            }
            let found = match crate::runtime::lookup(m) {
                Ok(Some(module)) => module
                    .exported(f, args.len() as u32)
                    .map(|entry| (module, entry)),
                _ => None,
            };
            match found {
                Some((module, entry)) => (module, entry, args, None),
                None => (ctx.process.module.to_arc(), 0, args, Some((m, f, a))),
            }
        }
    };
    let mut child = Process::new(module, entry);
    if let SpawnOf::Mfa(m, f, _) = what
        && let (Some(m), Some(f)) = (m.as_atom(), f.as_atom())
    {
        child.set_initial_call(m, f, args.len() as u32);
    }
    if let Some((m, f, a)) = undef {
        // {undef, [{M, F, Args, []}]}
        let words = heap::size_of(heap, a).map_err(|_| BifError::SystemLimit)? + 5 + 2 + 3;
        child
            .ensure_heap(words, &mut [], &mut [])
            .map_err(|_| BifError::SystemLimit)?;
        let a = heap::copy_term(heap, a, &mut child.heap);
        let mfa = child
            .heap
            .tuple(&[Term::atom(m), Term::atom(f), a, Term::NIL]);
        let stack = child.heap.cons(mfa, Term::NIL);
        let reason = child.heap.tuple(&[Term::atom(Atom::UNDEF), stack]);
        return Ok((child, Start::Fail(reason)));
    }
    if args.len() >= crate::interp::X_REGISTERS {
        return Err(BifError::SystemLimit);
    }
    let copied = copy_args(heap, &args, &mut child)?;
    Ok((child, Start::Run(copied)))
}

/// Builds the child that calls `fun` with `fargs` (the elements of the
/// list `list`): badarg when the arity does not match.
fn build_fun_child(
    ctx: &Context,
    fun: Term,
    list: Term,
    fargs: Vec<Term>,
) -> Result<(Process, Start), BifError> {
    match ctx.process.heap.view(fun) {
        View::Fun { index, captured } => {
            let e = crate::runtime::fun_entry(index).ok_or(BifError::Badarg)?;
            let def = &e.module.funs[e.fun as usize];
            if def.arity as usize != fargs.len() {
                return Err(BifError::Badarg);
            }
            let entry = e.module.functions[def.function as usize].entry;
            let mut args = fargs;
            args.extend_from_slice(captured);
            if args.len() >= crate::interp::X_REGISTERS {
                return Err(BifError::SystemLimit);
            }
            let mut child = Process::new(e.module.clone(), entry);
            let copied = copy_args(&ctx.process.heap, &args, &mut child)?;
            Ok((child, Start::Run(copied)))
        }
        View::ExternalFun {
            module,
            function,
            arity,
        } if arity as usize == fargs.len() => build_child(
            ctx,
            SpawnOf::Mfa(Term::atom(module), Term::atom(function), list),
        ),
        _ => Err(BifError::Badarg),
    }
}

/// The child of `spawn(erlang, apply, [Fun, Args])` when the call cannot
/// be made: it dies at once with BEAM's reason, `{{badarity, {Fun,
/// Args}}, Trace}` (`why` is `badarity`) or `{{badfun, Fun}, Trace}`,
/// where the trace is `[{erlang, apply, 2, []}]`.
fn failed_apply(
    ctx: &Context,
    why: Atom,
    fun: Term,
    list: Term,
) -> Result<(Process, Start), BifError> {
    let heap = &ctx.process.heap;
    let mut child = Process::new(ctx.process.module.to_arc(), 0);
    let words = heap::size_of(heap, fun).map_err(|_| BifError::SystemLimit)?
        + heap::size_of(heap, list).map_err(|_| BifError::SystemLimit)?
        + 3
        + 3
        + 5
        + 2
        + 3;
    child
        .ensure_heap(words, &mut [], &mut [])
        .map_err(|_| BifError::SystemLimit)?;
    let fun = heap::copy_term(heap, fun, &mut child.heap);
    let h = &mut child.heap;
    let error = if why == Atom::BADARITY {
        let list = heap::copy_term(heap, list, h);
        let call = h.tuple(&[fun, list]);
        h.tuple(&[Term::atom(why), call])
    } else {
        h.tuple(&[Term::atom(why), fun])
    };
    let apply = Term::atom(Atom::intern("apply"));
    let frame = h.tuple(&[Term::atom(Atom::ERLANG), apply, Term::small(2), Term::NIL]);
    let trace = h.cons(frame, Term::NIL);
    let reason = h.tuple(&[error, trace]);
    Ok((child, Start::Fail(reason)))
}

/// Copies `args` from `heap` onto the child's heap.
fn copy_args(heap: &heap::Heap, args: &[Term], child: &mut Process) -> Result<Vec<Term>, BifError> {
    let mut words = 0;
    for &t in args {
        words += heap::size_of(heap, t).map_err(|_| BifError::SystemLimit)?;
    }
    child
        .ensure_heap(words, &mut [], &mut [])
        .map_err(|_| BifError::SystemLimit)?;
    Ok(args
        .iter()
        .map(|&t| heap::copy_term(heap, t, &mut child.heap))
        .collect())
}

pub enum SpawnOf {
    Fun(Term),
    Mfa(Term, Term, Term),
}

/// Spawns `what`, linked and/or monitored: the pid and the monitor's
/// reference id (for `spawn_opt`).
pub fn spawn_child(
    ctx: &mut Context,
    what: SpawnOf,
    link: bool,
    monitor: bool,
) -> Result<(Pid, Option<u64>), BifError> {
    let (process, start) = build_child(ctx, what)?;
    services(|s| {
        let monitor = monitor.then(|| s.make_ref());
        let spawn = Spawn {
            process,
            start,
            link,
            monitor,
        };
        s.spawn(spawn)
            .map(|pid| (pid, monitor))
            .ok_or(BifError::SystemLimit)
    })
    .inspect(|&(child, _)| inherit_group_leader(child))
}

/// A child of a process whose group leader is on another node has that
/// leader too (`dist::gl`); one load otherwise.
fn inherit_group_leader(child: Pid) {
    if crate::runtime::nodes::remote_group_leaders() {
        let me = services(|s| s.self_pid());
        crate::runtime::nodes::inherit_group_leader(me, child);
    }
}

fn do_spawn(ctx: &mut Context, what: SpawnOf, link: bool) -> Result<Pid, BifError> {
    let (process, start) = build_child(ctx, what)?;
    services(|s| {
        let spawn = Spawn {
            process,
            start,
            link,
            monitor: None,
        };
        s.spawn(spawn).ok_or(BifError::SystemLimit)
    })
    .inspect(|&child| inherit_group_leader(child))
}

pub fn spawn_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = do_spawn(ctx, SpawnOf::Fun(args[0]), false)?;
    Ok(pid.to_term())
}

pub fn spawn_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = do_spawn(ctx, SpawnOf::Mfa(args[0], args[1], args[2]), false)?;
    Ok(pid.to_term())
}

pub fn spawn_link_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = do_spawn(ctx, SpawnOf::Fun(args[0]), true)?;
    Ok(pid.to_term())
}

pub fn spawn_link_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = do_spawn(ctx, SpawnOf::Mfa(args[0], args[1], args[2]), true)?;
    Ok(pid.to_term())
}

/// `spawn_monitor`: `{Pid, Ref}`.
fn spawn_monitor(ctx: &mut Context, args: &mut [Term], what: SpawnOf) -> BifResult {
    let (process, start) = build_child(ctx, what)?;
    let (pid, id) = services(|s| {
        let id = s.make_ref();
        let spawn = Spawn {
            process,
            start,
            link: false,
            monitor: Some(id),
        };
        s.spawn(spawn)
            .map(|pid| (pid, id))
            .ok_or(BifError::SystemLimit)
    })?;
    ctx.ensure(heap::REF_WORDS + 3, args)?;
    let r = ctx.heap().reference(id);
    Ok(ctx.heap().tuple(&[pid.to_term(), r]))
}

pub fn spawn_monitor_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    spawn_monitor(ctx, args, SpawnOf::Fun(args[0]))
}

pub fn spawn_monitor_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    spawn_monitor(ctx, args, SpawnOf::Mfa(args[0], args[1], args[2]))
}

// ---------------------------------------------------------------------
// Links, monitors, exit signals.

/// A pid of another node: its node-table index and id.
fn remote_pid(ctx: &Context, t: Term) -> Option<(u32, u64)> {
    match ctx.process.heap.view(t) {
        View::ExtPid { node, id } => Some((node, id)),
        _ => None,
    }
}

pub fn link_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some((node, id)) = remote_pid(ctx, args[0]) {
        let me = services(|s| s.self_pid());
        crate::runtime::nodes::link_remote(me, node, id);
        return Ok(Term::atom(Atom::TRUE));
    }
    let pid = pid_of(args[0])?;
    let (alive, trapping) = services(|s| (s.link(pid), s.trap_exit()));
    if !alive {
        if !trapping {
            return Err(BifError::Raise(
                crate::process::Class::Error,
                Term::atom(Atom::NOPROC),
            ));
        }
        // A trapping process hears of it as an exit message.
        let me = services(|s| s.self_pid());
        services(|s| s.exit_signal(me, pid, MessageBuffer::immediate(Term::atom(Atom::NOPROC))));
    }
    Ok(Term::atom(Atom::TRUE))
}

pub fn unlink_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some((node, id)) = remote_pid(ctx, args[0]) {
        let me = services(|s| s.self_pid());
        crate::runtime::nodes::unlink_remote(me, node, id);
        return Ok(Term::atom(Atom::TRUE));
    }
    let pid = pid_of(args[0])?;
    services(|s| s.unlink(pid));
    Ok(Term::atom(Atom::TRUE))
}

pub fn monitor_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    monitor(ctx, args, None)
}

/// `monitor(Type, Item, Options)`: `[]` is monitor/2; `{tag, Tag}` (the
/// last one counts) puts Tag where the 'DOWN' message has 'DOWN';
/// `{alias, Mode}` makes the monitor's reference an alias of this
/// process too (`explicit_unalias`, `demonitor`: until the monitor ends,
/// `reply_demonitor`: also until the first message through it, which
/// ends the monitor too). Neither is supported on a monitor of another
/// node's process (badarg).
pub fn monitor_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let badopt = || {
        super::set_badarg_cause(Atom::intern("monitor"), Atom::intern("badopt"));
        BifError::Badarg
    };
    let options = super::erlang::list_elements(&ctx.process.heap, args[2]).ok_or_else(badopt)?;
    let mut tag = None;
    let mut alias = None;
    for option in options {
        match ctx.process.heap.as_tuple(option) {
            Some(&[key, value]) if key == Term::atom(Atom::intern("tag")) => tag = Some(value),
            Some(&[key, value]) if key == Term::atom(Atom::intern("alias")) => {
                alias = Some(match value.as_atom().map(Atom::name) {
                    Some("explicit_unalias") => AliasMode::Explicit,
                    Some("demonitor") => AliasMode::Demonitor,
                    Some("reply_demonitor") => AliasMode::ReplyDemonitor,
                    _ => return Err(badopt()),
                })
            }
            _ => return Err(badopt()),
        }
    }
    if alias.is_some() && remote_target(ctx, args[1]) {
        return Err(BifError::Badarg);
    }
    let reference = monitor(ctx, &mut args[..2], tag)?;
    if let Some(mode) = alias {
        let id = reference_id(&ctx.process.heap, reference).ok_or(BifError::Badarg)?;
        services(|s| s.alias(id, mode));
    }
    Ok(reference)
}

fn monitor(ctx: &mut Context, args: &mut [Term], tag: Option<Term>) -> BifResult {
    if args[0] != Term::atom(Atom::PROCESS) {
        // BEAM's cause for a type it does not monitor.
        if !matches!(
            args[0].as_atom().map(Atom::name),
            Some("port" | "time_offset")
        ) {
            super::set_badarg_cause(Atom::intern("monitor"), Atom::intern("badtype"));
        }
        return Err(BifError::Badarg);
    }
    let tag = tag.map(|t| copy_out(ctx, t)).transpose()?;
    if tag.is_some() && remote_target(ctx, args[1]) {
        return Err(BifError::Badarg);
    }
    if let Some(reference) = monitor_remote(ctx, args)? {
        return Ok(reference);
    }
    let name = match ctx.process.heap.as_tuple(args[1]) {
        // `{Name, Node}` of this node: the name.
        Some(&[name, _]) => Some(name.as_atom().ok_or(BifError::Badarg)?),
        _ => args[1].as_atom(),
    };
    let target = match name {
        Some(name) => services(|s| s.whereis(name)),
        None => Some(pid_of(args[1])?),
    };
    let id = match target {
        Some(pid) => services(|s| s.monitor(pid)),
        // A name nobody holds: monitor "nothing", answered with noproc.
        None => services(|s| s.monitor(Pid::from_id((1 << 61) - 1))),
    };
    if let Some(name) = name {
        services(|s| s.name_monitor(id, name));
    }
    if let Some(tag) = tag {
        services(|s| s.tag_monitor(id, tag));
    }
    reference(ctx, args, id)
}

/// The monitor target is a process of another node.
fn remote_target(ctx: &Context, item: Term) -> bool {
    match ctx.process.heap.view(item) {
        View::ExtPid { .. } => true,
        View::Tuple(&[_, node]) => node.as_atom().is_some_and(|node| {
            node != Atom::NONODE && node != crate::term::node::this_node().name
        }),
        _ => false,
    }
}

/// `monitor(process, RemotePid | {Name, OtherNode})`: `None` when the
/// target is of this node.
fn monitor_remote(ctx: &mut Context, args: &mut [Term]) -> Result<Option<Term>, BifError> {
    use crate::runtime::nodes::{self, Watched};
    let heap = &ctx.process.heap;
    let (node, what) = match heap.view(args[1]) {
        View::ExtPid { node, id } => (crate::term::node::entry(node).name, Watched::Pid(node, id)),
        View::Tuple(&[name, node]) => {
            let (Some(name), Some(node)) = (name.as_atom(), node.as_atom()) else {
                return Err(BifError::Badarg);
            };
            if node == Atom::NONODE || node == crate::term::node::this_node().name {
                return Ok(None);
            }
            (node, Watched::Name(name))
        }
        _ => return Ok(None),
    };
    let (me, id) = services(|s| (s.self_pid(), s.make_ref()));
    ctx.process.mailbox.set_mark(id);
    nodes::monitor_remote(me, node, what, id);
    reference(ctx, args, id).map(Some)
}

pub fn demonitor_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = reference_id(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    if !crate::runtime::nodes::demonitor_remote(id) {
        services(|s| s.demonitor(id));
    }
    Ok(Term::atom(Atom::TRUE))
}

/// `demonitor(Ref, Options)`: `flush` also drops a 'DOWN' already queued.
pub fn demonitor_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = reference_id(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let options =
        super::erlang::list_elements(&ctx.process.heap, args[1]).ok_or(BifError::Badarg)?;
    let active = crate::runtime::nodes::demonitor_remote(id) || services(|s| s.demonitor(id));
    let flush = options.contains(&Term::atom(Atom::intern("flush")));
    if flush {
        let heap = &ctx.process.heap;
        ctx.process.mailbox.retain(|&m| {
            let Some(t) = heap.as_tuple(m) else {
                return true;
            };
            // Any first element: a `{tag, Tag}` monitor's 'DOWN' has Tag.
            !(t.len() == 5 && reference_id(heap, t[1]) == Some(id))
        });
        ctx.process.save = 0;
    }
    if options.contains(&Term::atom(Atom::intern("info"))) {
        return Ok(Term::boolean(active));
    }
    Ok(Term::atom(Atom::TRUE))
}

/// `exit(Pid, Reason)`.
pub fn exit_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if let Some((node, id)) = remote_pid(ctx, args[0]) {
        let reason = external(ctx, args[1])?;
        let me = services(|s| s.self_pid());
        crate::runtime::nodes::exit_remote(me, node, id, &reason);
        return Ok(Term::atom(Atom::TRUE));
    }
    let pid = pid_of(args[0])?;
    let reason = args[1];
    let me = services(|s| s.self_pid());
    if pid == me {
        let trapping = services(|s| s.trap_exit());
        let kill = reason == Term::atom(Atom::KILL);
        if (kill || !trapping && reason != Term::atom(Atom::NORMAL))
            && let Some(halt) = super::script::main_killed(ctx, me, kill, reason)
        {
            return Err(halt);
        }
        // The signal, as BEAM's, is no exception that a catch could
        // take: the process handles it as soon as the BIF returns (the
        // time slice ends, see `bif::ends_slice`), and dies of it (even
        // of reason normal, BEAM's exception to "normal kills nobody"),
        // or, trapping exits, finds it in its mailbox as an 'EXIT'.
        let p = &mut ctx.process;
        p.reductions = p.reductions.max(p.reduction_budget);
    }
    let buffer = copy_out(ctx, reason)?;
    services(|s| s.exit_signal(pid, me, buffer));
    if reason == Term::atom(Atom::KILL) && pid != me {
        services(|s| s.killed(pid));
    }
    Ok(Term::atom(Atom::TRUE))
}

pub fn process_flag_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if args[0] != Term::atom(Atom::TRAP_EXIT) {
        return super::extras::process_flag(ctx, args);
    }
    let on = args[1].as_bool().ok_or(BifError::Badarg)?;
    Ok(Term::boolean(services(|s| s.set_trap_exit(on))))
}

// ---------------------------------------------------------------------
// Names and queries.

/// `register(Name, Pid)`; a failure's cause is BEAM's: `notalive` for a
/// dead process, `registered_name` for one that has a name already,
/// `none` for anything else (a bad or taken name, not a pid).
pub fn register_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let fail = |cause: &str| {
        super::set_badarg_cause(Atom::intern("register"), Atom::intern(cause));
        Err(BifError::Badarg)
    };
    let (Some(name), Ok(pid)) = (args[0].as_atom(), pid_of(args[1])) else {
        return fail("none");
    };
    if name == Atom::UNDEFINED {
        return fail("none");
    }
    if !services(|s| s.is_alive(pid)) {
        return fail("notalive");
    }
    // A process has at most one name.
    let named = services(|s| {
        s.registered()
            .into_iter()
            .any(|n| s.whereis(n) == Some(pid))
    });
    if named {
        return fail("registered_name");
    }
    if !services(|s| s.register(name, pid)) {
        return fail("none");
    }
    Ok(Term::atom(Atom::TRUE))
}

pub fn unregister_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[0].as_atom().ok_or(BifError::Badarg)?;
    if !services(|s| s.unregister(name)) {
        return Err(BifError::Badarg);
    }
    Ok(Term::atom(Atom::TRUE))
}

pub fn whereis_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[0].as_atom().ok_or(BifError::Badarg)?;
    Ok(services(|s| s.whereis(name)).map_or(Term::atom(Atom::UNDEFINED), Pid::to_term))
}

pub fn registered_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let names = services(|s| s.registered());
    ctx.ensure(2 * names.len(), args)?;
    let items: Vec<Term> = names.into_iter().map(Term::atom).collect();
    Ok(ctx.heap().list(&items))
}

/// `is_process_alive(Pid)`. A process the caller killed is dead to it
/// at once, as in BEAM, whose answer comes after the caller's own signals
/// reached the target; if it has not finished exiting, the caller waits
/// (ends its time slice, see `bif::ends_slice`) until it has, so that
/// what it held is free by the time the caller goes on.
pub fn is_process_alive_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pid = pid_of(args[0])?;
    if services(|s| s.await_exit(pid)) {
        let p = &mut ctx.process;
        p.reductions = p.reductions.max(p.reduction_budget);
        return Ok(Term::atom(Atom::FALSE));
    }
    Ok(Term::boolean(services(|s| s.is_alive(pid))))
}

pub fn processes_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let pids = services(|s| s.processes());
    ctx.ensure(2 * pids.len(), args)?;
    let items: Vec<Term> = pids.into_iter().map(Pid::to_term).collect();
    Ok(ctx.heap().list(&items))
}

pub fn system_info_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // `{wordsize, internal | external}`: 8 either way on a 64-bit VM.
    if let Some(&[key, kind]) = ctx.process.heap.as_tuple(args[0])
        && key == Term::atom(Atom::intern("wordsize"))
        && matches!(
            kind.as_atom().map(Atom::name),
            Some("internal" | "external")
        )
    {
        return Ok(Term::small(8));
    }
    let what = args[0].as_atom().ok_or(BifError::Badarg)?;
    super::extras::system_info(ctx, args, what)
}

/// `statistics(Item)`: see `extras::statistics`.
pub fn statistics_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let what = args[0].as_atom().ok_or(BifError::Badarg)?;
    super::extras::statistics(ctx, args, what)
}

fn time_in(unit: Term, ns: u64) -> Result<i64, BifError> {
    let ns = ns as i64;
    Ok(match unit.as_atom().map(|a| a.name()) {
        Some("nanosecond" | "native") => ns,
        Some("microsecond") => ns / 1_000,
        Some("millisecond") => ns / 1_000_000,
        Some("second") => ns / 1_000_000_000,
        _ => return Err(BifError::Badarg),
    })
}

/// Words any `i64` needs on the heap.
const INT_WORDS: usize = 4;

fn int(ctx: &mut Context, args: &mut [Term], v: i64) -> BifResult {
    ctx.ensure(INT_WORDS, args)?;
    Ok(ctx.heap().int(v))
}

pub fn monotonic_time_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let ns = services(|s| s.now_ns());
    int(ctx, args, ns as i64)
}

pub fn monotonic_time_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let v = time_in(args[0], services(|s| s.now_ns()))?;
    int(ctx, args, v)
}

/// Wall-clock nanoseconds since 1970 (the virtual clock under
/// `--deterministic`, so runs print the same).
fn system_ns() -> u64 {
    let virtual_ns = services(|s| s.now_ns());
    if crate::runtime::processes::deterministic() {
        return virtual_ns;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

pub fn system_time_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let ns = system_ns();
    int(ctx, args, ns as i64)
}

pub fn system_time_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let v = time_in(args[0], system_ns())?;
    int(ctx, args, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Services that answer with a chosen pid.
    struct Fixed(Solo, Pid);

    impl Services for Fixed {
        fn self_pid(&self) -> Pid {
            self.1
        }
        fn send(&mut self, to: Pid, m: MessageBuffer) {
            self.0.send(to, m)
        }
        fn spawn(&mut self, s: Spawn) -> Option<Pid> {
            self.0.spawn(s)
        }
        fn link(&mut self, p: Pid) -> bool {
            self.0.link(p)
        }
        fn unlink(&mut self, p: Pid) {
            self.0.unlink(p)
        }
        fn monitor(&mut self, p: Pid) -> u64 {
            self.0.monitor(p)
        }
        fn demonitor(&mut self, r: u64) -> bool {
            self.0.demonitor(r)
        }
        fn exit_signal(&mut self, to: Pid, from: Pid, r: MessageBuffer) {
            self.0.exit_signal(to, from, r)
        }
        fn set_trap_exit(&mut self, on: bool) -> bool {
            self.0.set_trap_exit(on)
        }
        fn trap_exit(&self) -> bool {
            self.0.trap_exit()
        }
        fn register(&mut self, n: Atom, p: Pid) -> bool {
            self.0.register(n, p)
        }
        fn unregister(&mut self, n: Atom) -> bool {
            self.0.unregister(n)
        }
        fn whereis(&self, n: Atom) -> Option<Pid> {
            self.0.whereis(n)
        }
        fn registered(&self) -> Vec<Atom> {
            self.0.registered()
        }
        fn is_alive(&self, p: Pid) -> bool {
            self.0.is_alive(p)
        }
        fn processes(&self) -> Vec<Pid> {
            self.0.processes()
        }
        fn process_count(&self) -> usize {
            self.0.process_count()
        }
        fn schedulers(&self) -> usize {
            self.0.schedulers()
        }
        fn total_reductions(&self) -> u64 {
            self.0.total_reductions()
        }
        fn make_ref(&mut self) -> u64 {
            self.0.make_ref()
        }
        fn now_ns(&self) -> u64 {
            self.0.now_ns()
        }
    }

    #[test]
    fn installed_services_are_seen_only_inside_the_scope_and_one_at_a_time() {
        // Outside any run step: the lone process's services (pid 0).
        assert_eq!(services(|s| s.self_pid()), Pid::from_id(0));
        let mut outer = Fixed(Solo::default(), Pid::from_id(7));
        with_installed(&mut outer, || {
            assert_eq!(services(|s| s.self_pid()), Pid::from_id(7));
            // While a BIF holds them, nobody else can: a nested look-up
            // sees none installed rather than a second `&mut`.
            services(|_| assert_eq!(services(|s| s.self_pid()), Pid::from_id(0)));
            // Nested scopes restore the outer one.
            let mut inner = Fixed(Solo::default(), Pid::from_id(9));
            with_installed(&mut inner, || {
                assert_eq!(services(|s| s.self_pid()), Pid::from_id(9));
            });
            assert_eq!(services(|s| s.self_pid()), Pid::from_id(7));
            assert_eq!(services(|s| s.make_ref()), 1);
            assert_eq!(services(|s| s.make_ref()), 2);
        });
        assert_eq!(services(|s| s.self_pid()), Pid::from_id(0));
    }

    #[test]
    fn a_panic_inside_the_scope_uninstalls_the_services() {
        let mut fixed = Fixed(Solo::default(), Pid::from_id(5));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            with_installed(&mut fixed, || services(|_| panic!("inside a BIF")))
        }));
        assert!(result.is_err());
        assert_eq!(services(|s| s.self_pid()), Pid::from_id(0));
    }
}
