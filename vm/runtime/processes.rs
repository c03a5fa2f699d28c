//! The interpreter's processes on the scheduler runtime: `Actor` is the
//! `sched::ProcessBody` of an act process, and `run_main` runs a program's
//! main/1 as the main process.
//!
//! One run step of an actor:
//! 1. put back its live X registers (parked when it last stopped),
//! 2. take every signal from its inbox: messages are copied into its heap
//!    and appended to the private queue (`Process::mailbox`), exit signals
//!    kill it or become `{'EXIT', From, Reason}` messages, links and
//!    monitors are booked, `'DOWN'`s become messages, and the timeout of
//!    its current receive moves it to the `after` branch,
//! 3. run the interpreter with the BIF services installed, and map its
//!    outcome to the scheduler's.
//!
//! Invariants:
//! - Between run steps, the X registers the process may still read are
//!   parked on top of its stack (`Process::park_registers`); a run step
//!   puts them back first, so they are roots in the registers while
//!   signals are taken in.
//! - `timer_tag` is the tag of the timer of the receive the process waits
//!   in, or 0; timers are cancelled lazily: a `Timeout` with another tag,
//!   or one arriving after the receive ended, is ignored.
//! - Links and monitors live in the lazily boxed `Cold` part: most
//!   processes never link, so an idle process pays one pointer for them.

use crate::bif::inspect::{Snapshot, Want};
use crate::bif::process::{self as services_mod, Services, Spawn, Start};
use crate::heap::{MessageBuffer, SystemLimit, budget};
use crate::interp::{self, ExitKind, Outcome, Registers};
use crate::process::{Class, Footprint, Process};
use crate::sched::send_timer::Destination;
use crate::sched::{
    self, Config, Delivery, Finish, Pid, ProcessBody, ProcessCell, RunContext, RunOutcome, Signal,
};
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::sync::atomic::{AtomicBool, Ordering};

use super::aliases::Mode as AliasMode;
use super::links::{LinkSet, MonitorTable};
use super::output;

static DETERMINISTIC: AtomicBool = AtomicBool::new(false);

/// Whether the program runs under `--deterministic` (virtual clock).
pub fn deterministic() -> bool {
    DETERMINISTIC.load(Ordering::Relaxed)
}

/// What few processes need: links, monitors, the trap_exit flag, an
/// unusual start (a BIF, an undefined function), the main process's flag.
#[derive(Default)]
struct Cold {
    /// How the process starts, until its first run step, when that is
    /// not running code with its arguments parked on the stack.
    start: Option<Start>,
    /// This is the main process (whose end ends the program; one
    /// process, so its flag costs the others nothing here).
    is_main: bool,
    links: LinkSet,
    /// Monitors this process holds: reference -> target.
    monitors: MonitorTable,
    /// Processes monitoring this one: reference -> watcher.
    watchers: MonitorTable,
    trap_exit: bool,
    /// Monitors asked for by registered name: reference -> name (their
    /// 'DOWN' says `{Name, Node}`).
    named: Vec<(u64, Atom)>,
    /// Monitors made with `{tag, Tag}`: reference -> Tag (their 'DOWN'
    /// has Tag in place of 'DOWN').
    tagged: Vec<(u64, MessageBuffer)>,
    /// The processes this one sent a `kill` exit signal (the last 64 still
    /// in the process table): dead to its `is_process_alive/1` at once, as
    /// BEAM delivers a process's own signals before answering, though the
    /// target may not have run yet.
    killed: Vec<Pid>,
    /// A send to the (busy) connection to this node suspended it: it
    /// runs no code until that connection drains (`Signal::Resume`).
    suspended_on: Option<Atom>,
    /// An io request went to an act process with this monitor reference
    /// as its tag: the process runs no code until the reply or the
    /// monitor's 'DOWN' is in its mailbox (`bif::io_server`).
    io_reply: Option<u64>,
    /// `is_process_alive/1` asked about a process this one killed that
    /// had not finished exiting: this process yields until that one has
    /// left the process table (and given its memory back, see
    /// `on_exiting`), as BEAM's answer waits for the caller's own signals
    /// to reach the target.
    awaiting_exit: Option<Pid>,
    /// Its active aliases (`runtime::aliases`) and when each ends; a
    /// monitor's alias has the monitor's reference.
    aliases: Vec<(u64, AliasMode)>,
    /// Link and monitor requests that reached this process while it was
    /// exiting, kept by `on_exiting` for `on_exit` to answer with `noproc`
    /// (a monitor's reference, or `None` for a link).
    raced: Vec<(Pid, Option<u64>)>,
}

/// An act process as the scheduler runs it.
pub struct Actor {
    /// Between run steps its live X registers are parked on its stack
    /// (a fresh process's arguments too).
    process: Process,
    cold: Option<Box<Cold>>,
    /// The tag of the pending receive timer, or 0.
    timer_tag: u64,
    /// The next timer tag (receive generations; never 0).
    next_tag: u64,
}

impl Actor {
    /// What every process costs outside its own heap and stack, drawn from
    /// the memory budget while it lives: the process cell (its `Arc`
    /// counts, the scheduler's shared half and this body), the inbox stub
    /// and the table slot. Without it, a program spawning tens of millions
    /// of processes with tiny heaps would pass physical memory before the
    /// budget said `system_limit`.
    fn fixed_bytes() -> usize {
        2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<ProcessCell<Actor>>()
            + std::mem::size_of::<usize>()
            + std::mem::size_of::<(u32, Option<std::sync::Arc<ProcessCell<Actor>>>)>()
    }

    fn new(process: Process, start: Start, is_main: bool) -> Actor {
        budget::force_reserve(Actor::fixed_bytes());
        let mut actor = Actor {
            process,
            cold: None,
            timer_tag: 0,
            next_tag: 1,
        };
        if is_main {
            actor.cold().is_main = true;
        }
        match start {
            // The usual start: the arguments wait parked on the stack, as
            // a waiting process's registers do, in no allocation of their own.
            // (Not the main process of a node: its first step starts
            // the node's spawner, `start_spawner`.)
            Start::Run(args)
                if !(is_main && super::nodes::alive())
                    && actor.process.park_registers(&args).is_ok() => {}
            start => actor.cold().start = Some(start),
        }
        actor
    }

    fn cold(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
    }
}

/// Forgets (and gives) the name a monitor was asked for by, if any.
fn take_name(cold: &mut Cold, reference: u64) -> Option<Atom> {
    let i = cold.named.iter().position(|&(r, _)| r == reference)?;
    Some(cold.named.swap_remove(i).1)
}

fn take_tag(cold: &mut Cold, reference: u64) -> Option<MessageBuffer> {
    let i = cold.tagged.iter().position(|(r, _)| *r == reference)?;
    Some(cold.tagged.swap_remove(i).1)
}

/// Deactivates the alias `id` if it is active and `ends` says its mode
/// ends now: its mode then.
fn end_alias(cold: &mut Cold, id: u64, ends: impl Fn(AliasMode) -> bool) -> Option<AliasMode> {
    let i = cold.aliases.iter().position(|&(a, _)| a == id)?;
    let mode = cold.aliases[i].1;
    if !ends(mode) {
        return None;
    }
    cold.aliases.swap_remove(i);
    super::aliases::remove(id);
    Some(mode)
}

/// A monitor's end (its 'DOWN' or `demonitor`) ends its alias.
fn monitor_ended(cold: &mut Cold, reference: u64) {
    if !cold.aliases.is_empty() {
        end_alias(cold, reference, |m| {
            matches!(m, AliasMode::Demonitor | AliasMode::ReplyDemonitor)
        });
    }
}

impl Drop for Actor {
    fn drop(&mut self) {
        budget::release(Actor::fixed_bytes());
    }
}

impl Actor {
    /// Parks the X registers of a process that waits: the ones its
    /// `wait` keeps (`Process::live_x`, which the compiler knows; the
    /// others are dead there and come back as nil).
    fn save_registers(&mut self, regs: &Registers, live: usize) -> Result<(), SystemLimit> {
        let n = (self.process.live_x as usize).min(live);
        self.process.park_registers(&regs.x[..n])
    }

    /// Lists every allocation the process holds, the scheduler's included
    /// (see `heap::footprint`): the process cell (the `Arc`'s two counts,
    /// the shared half and this body), the inbox's stub link, the slot in
    /// the process table, and the body's own allocations.
    pub fn footprint(&self) -> Footprint {
        let mut f = Footprint::default();
        f.allocation(
            "process cell (Arc + body)",
            2 * std::mem::size_of::<usize>() + std::mem::size_of::<ProcessCell<Actor>>(),
        );
        f.allocation("inbox stub", std::mem::size_of::<usize>());
        // A table entry is a generation and an `Option<Arc<cell>>`.
        f.share(
            "process table slot",
            std::mem::size_of::<(u32, Option<std::sync::Arc<ProcessCell<Actor>>>)>(),
        );
        self.process.footprint(&mut f);
        if let Some(cold) = &self.cold {
            f.allocation("links and monitors", std::mem::size_of::<Cold>());
            if let Some(Start::Run(args) | Start::Bif(_, args)) = &cold.start {
                f.allocation("start arguments", args.capacity() * 8);
            }
            f.allocation("links", cold.links.heap_bytes());
            f.allocation("monitors", cold.monitors.heap_bytes());
            f.allocation("watchers", cold.watchers.heap_bytes());
        }
        f
    }

    /// Leaves the scheduler suspended (see `Cold::suspended_on`), its
    /// registers parked as for a yield.
    fn suspend(&mut self, regs: &mut Registers, live: usize) -> RunOutcome<MessageBuffer> {
        self.pause(regs, live, RunOutcome::Wait)
    }

    /// Parks the registers of a process that stopped between two
    /// instructions and answers `outcome` (`Wait` to sleep until a signal
    /// comes, `Yield` to be queued again).
    fn pause(
        &mut self,
        regs: &mut Registers,
        live: usize,
        outcome: RunOutcome<MessageBuffer>,
    ) -> RunOutcome<MessageBuffer> {
        let n = (self.process.live_x as usize).min(live);
        if self.process.park_registers(&regs.x[..n]).is_err() {
            return RunOutcome::Exit(atom_buffer(Atom::SYSTEM_LIMIT));
        }
        outcome
    }

    /// Takes the reply to the io request tagged `reference` out of the
    /// mailbox (`{io_reply, Ref, _}`, or the server's 'DOWN'), ending the
    /// wait: false while neither has come.
    fn take_io_reply(&mut self, ctx: &mut RunContext<'_, Actor>, reference: u64) -> bool {
        let heap = &self.process.heap;
        let mut replied = false;
        let Some(at) = self.process.mailbox.iter().position(|&m| {
            let kind = io_answer(heap, m, reference);
            replied = kind == Some(true);
            kind.is_some()
        }) else {
            return false;
        };
        self.process.mailbox.remove(at);
        if let Some(c) = self.cold.as_mut() {
            c.io_reply = None;
        }
        if replied {
            // The monitor goes, and a 'DOWN' it may have sent already.
            let mut services = ActorServices {
                ctx: &mut *ctx,
                cold: &mut self.cold,
            };
            services.demonitor(reference);
            let heap = &self.process.heap;
            self.process
                .mailbox
                .retain(|&m| io_answer(heap, m, reference) != Some(false));
        }
        true
    }

    fn is_main(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.is_main)
    }

    fn trapping(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.trap_exit)
    }
}

/// How many X registers may be live: the most any loaded module uses.
fn live_registers() -> usize {
    super::max_x().clamp(4, interp::X_REGISTERS)
}

/// A copy of a buffer (a signal to several processes).
fn duplicate(buffer: &MessageBuffer) -> MessageBuffer {
    buffer
        .duplicate()
        .unwrap_or_else(|_| MessageBuffer::immediate(Term::atom(Atom::SYSTEM_LIMIT)))
}

fn atom_buffer(a: Atom) -> MessageBuffer {
    MessageBuffer::immediate(Term::atom(a))
}

/// Moves a buffer into the process heap with every root of the process
/// and the registers `x`.
fn take_in(p: &mut Process, x: &mut [Term], buffer: &MessageBuffer) -> Result<Term, ()> {
    take_in_rooted(p, x, &mut [], buffer)
}

/// `take_in`, with the terms `extra` (parts of a message being built)
/// kept as roots too.
fn take_in_rooted(
    p: &mut Process,
    x: &mut [Term],
    extra: &mut [Term],
    buffer: &MessageBuffer,
) -> Result<Term, ()> {
    let (heap, [stack, first, older, newer, dictionary, exception]) = p.heap_and_roots();
    heap.receive_buffer_ref(
        buffer,
        &mut [x, extra, stack, first, older, newer, dictionary, exception],
    )
    .map_err(|_| ())
}

/// `take_in` for a message entering the mailbox: past the memory budget
/// the heap still grows to take it (`Heap::receive_past_budget`), since
/// its words exist already (a heap-backed buffer gives them back right
/// after) or travelled in its charge (an inline one). So the process that
/// keeps sending meets the limit (`system_limit` in its send), not this
/// one, which did not ask for the words.
#[inline]
fn take_message(p: &mut Process, x: &mut [Term], buffer: &MessageBuffer) -> Result<Term, ()> {
    let (heap, [stack, first, older, newer, dictionary, exception]) = p.heap_and_roots();
    heap.receive_past_budget(
        buffer,
        &mut [x, stack, first, older, newer, dictionary, exception],
    )
    .map_err(|_| ())
}

/// Appends a tuple made of `elements` (on the heap or immediate) to the
/// mailbox; `elements` are roots while room is made.
fn push_tuple(p: &mut Process, x: &mut [Term], elements: &mut [Term]) -> Result<(), ()> {
    p.ensure_heap(elements.len() + 1, x, elements)
        .map_err(|_| ())?;
    let t = p.heap.tuple(elements);
    p.mailbox.push(t);
    Ok(())
}

/// What taking the inbox did.
enum Taken {
    Alive,
    Dies(MessageBuffer),
}

impl Actor {
    /// Takes every signal of the inbox (see the module comment).
    fn take_signals(&mut self, ctx: &mut RunContext<'_, Actor>, x: &mut [Term]) -> Taken {
        let me = ctx.pid();
        while let Some(mut popped) = ctx.take_signal_in_place() {
            // A message, the common signal, is read where it lies; its
            // charge passes to the mailbox. Past the budget it is still
            // taken in (`take_message`).
            if let Signal::Message(buffer) = &mut *popped {
                match take_message(&mut self.process, x, buffer) {
                    Ok(t) => {
                        buffer.hand_over_charge();
                        self.process.mailbox.push_charged(t);
                    }
                    Err(()) => return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT)),
                }
                continue;
            }
            match popped.into_inner() {
                // Taken in place above.
                Signal::Message(_) => {}
                Signal::AliasMessage { alias, mut message } => {
                    // Through an alias this process has deactivated: lost.
                    // A reply alias ends with the first message through it.
                    let ended = self.cold.as_mut().and_then(|c| {
                        let &(_, mode) = c.aliases.iter().find(|&&(a, _)| a == alias)?;
                        if matches!(mode, AliasMode::Reply | AliasMode::ReplyDemonitor) {
                            end_alias(c, alias, |_| true);
                        }
                        Some(mode)
                    });
                    let Some(mode) = ended else {
                        continue;
                    };
                    if mode == AliasMode::ReplyDemonitor {
                        let c = self.cold();
                        take_name(c, alias);
                        take_tag(c, alias);
                        if let Some(target) = c.monitors.remove(alias) {
                            ctx.send(
                                target,
                                Signal::Demonitor {
                                    from: me,
                                    reference: alias,
                                },
                            );
                        }
                    }
                    match take_message(&mut self.process, x, &message) {
                        Ok(t) => {
                            message.hand_over_charge();
                            self.process.mailbox.push_charged(t);
                        }
                        Err(()) => return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT)),
                    }
                }
                Signal::Exit {
                    from,
                    reason,
                    linked,
                } => {
                    // A link whose other end died is gone; a signal from
                    // a link this process has already removed (`unlink`)
                    // is not delivered, as in Erlang.
                    if linked {
                        let held = self.cold.as_mut().and_then(|c| c.links.remove(from));
                        if held.is_none() {
                            continue;
                        }
                    }
                    let r = reason.term();
                    // `exit(Pid, kill)` is untrappable. A linked process
                    // that died of `exit(kill)` sends an ordinary `kill`.
                    if r == Term::atom(Atom::KILL) && !linked {
                        return Taken::Dies(atom_buffer(Atom::KILLED));
                    }
                    if self.trapping() {
                        let Ok(r) = take_in(&mut self.process, x, &reason) else {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        };
                        let mut e = [Term::atom(Atom::EXIT_UPPER), from.to_term(), r];
                        if push_tuple(&mut self.process, x, &mut e).is_err() {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        }
                    } else if r != Term::atom(Atom::NORMAL) || from == me {
                        return Taken::Dies(reason);
                    }
                }
                Signal::RemoteExit {
                    from_reason,
                    linked,
                } => {
                    let (from, reason) = *from_reason;
                    // As `Exit`, from a process of another node (whose
                    // links are kept by `dist`, not in the link set).
                    let r = reason.term();
                    if r == Term::atom(Atom::KILL) && !linked {
                        return Taken::Dies(atom_buffer(Atom::KILLED));
                    }
                    if self.trapping() {
                        let Ok(f) = take_in(&mut self.process, x, &from) else {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        };
                        let mut e = [Term::atom(Atom::EXIT_UPPER), f, Term::NIL];
                        let taken = take_in_rooted(&mut self.process, x, &mut e, &reason);
                        let Ok(r) = taken else {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        };
                        e[2] = r;
                        if push_tuple(&mut self.process, x, &mut e).is_err() {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        }
                    } else if r != Term::atom(Atom::NORMAL) {
                        return Taken::Dies(reason);
                    }
                }
                Signal::Link(from) => {
                    self.cold().links.insert(from, ());
                }
                Signal::Unlink(from) => {
                    if let Some(c) = self.cold.as_mut() {
                        c.links.remove(from);
                    }
                }
                Signal::Monitor { from, reference } => {
                    self.cold().watchers.insert(reference, from);
                }
                Signal::Demonitor { reference, .. } => {
                    if let Some(c) = self.cold.as_mut() {
                        c.watchers.remove(reference);
                    }
                }
                Signal::Down {
                    from,
                    reference,
                    reason,
                } => {
                    let held = self.cold.as_mut().and_then(|c| {
                        let target = c.monitors.remove(reference)?;
                        monitor_ended(c, reference);
                        Some((reference, target))
                    });
                    if held.is_none() {
                        continue;
                    }
                    let name = self.cold.as_mut().and_then(|c| take_name(c, reference));
                    let tag = self.cold.as_mut().and_then(|c| take_tag(c, reference));
                    // [reason, the tag or 'DOWN']: the tag comes in
                    // first and stays rooted while the reason does.
                    let mut rooted = [Term::NIL, Term::atom(Atom::DOWN)];
                    if let Some(tag) = tag {
                        let Ok(t) = take_in(&mut self.process, x, &tag) else {
                            return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                        };
                        rooted[1] = t;
                    }
                    let taken = take_in_rooted(&mut self.process, x, &mut rooted, &reason);
                    let Ok(r) = taken else {
                        return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                    };
                    rooted[0] = r;
                    if self
                        .process
                        .ensure_heap(crate::heap::REF_WORDS + 6 + 3, x, &mut rooted)
                        .is_err()
                    {
                        return Taken::Dies(atom_buffer(Atom::SYSTEM_LIMIT));
                    }
                    let reference = self.process.heap.reference(reference);
                    let who = match name {
                        Some(name) => self
                            .process
                            .heap
                            .tuple(&[Term::atom(name), Term::atom(Atom::NONODE)]),
                        None => from.to_term(),
                    };
                    let t = self.process.heap.tuple(&[
                        rooted[1],
                        reference,
                        Term::atom(Atom::PROCESS),
                        who,
                        rooted[0],
                    ]);
                    self.process.mailbox.push(t);
                }
                Signal::Resume => {}
                Signal::Timeout(tag) => {
                    if tag == self.timer_tag && self.process.in_timed_receive {
                        if self.process.save < self.process.mailbox.len() {
                            // Messages came in before the time was up and
                            // the receive has not looked at them: it looks
                            // first (one may match), and a timer of 0 ms
                            // ends it at once if none does.
                            let tag = self.next_tag;
                            self.next_tag += 1;
                            self.timer_tag = tag;
                            ctx.set_timer(0, tag);
                        } else {
                            // The receive's time is up: on to its `after`.
                            self.timer_tag = 0;
                            self.process.ip = self.process.timeout_ip;
                        }
                    }
                }
            }
        }
        Taken::Alive
    }

    /// The exit reason of an uncaught exception, as Erlang reports it:
    /// `{Reason, Stack}` for errors, `{{nocatch, V}, Stack}` for throws,
    /// the reason itself for exits.
    fn exception_reason(&mut self, x: &mut [Term]) -> MessageBuffer {
        let [class, reason, trace] = self.process.exception();
        let class = class
            .as_atom()
            .and_then(Class::from_atom)
            .unwrap_or(Class::Error);
        if class == Class::Exit {
            return MessageBuffer::copy_from(&self.process.heap, reason)
                .unwrap_or_else(|_| atom_buffer(Atom::SYSTEM_LIMIT));
        }
        let mut roots = [reason, trace];
        if self.process.ensure_heap(6, x, &mut roots).is_err() {
            return atom_buffer(Atom::SYSTEM_LIMIT);
        }
        let [mut reason, trace] = roots;
        if class == Class::Throw {
            reason = self
                .process
                .heap
                .tuple(&[Term::atom(Atom::NOCATCH), reason]);
        }
        let t = self.process.heap.tuple(&[reason, trace]);
        MessageBuffer::copy_from(&self.process.heap, t)
            .unwrap_or_else(|_| atom_buffer(Atom::SYSTEM_LIMIT))
    }

    /// A process spawned on a BIF: calls it once and exits (`normal`, or
    /// `{Reason, [{M, F, Args, []}]}` with a report if it fails).
    fn run_bif(
        &mut self,
        ctx: &mut RunContext<'_, Actor>,
        regs: &mut Registers,
        index: u16,
        args: &mut [Term],
    ) -> RunOutcome<MessageBuffer> {
        let live = live_registers();
        regs.x[..live].fill(Term::NIL);
        let entry = &crate::bif::TABLE[index as usize];
        let result = {
            let mut services = ActorServices {
                ctx: &mut *ctx,
                cold: &mut self.cold,
            };
            services_mod::with_installed(&mut services, || {
                let mut bif_ctx = crate::bif::Context {
                    process: &mut self.process,
                    x: &mut regs.x[..live],
                };
                (entry.func)(&mut bif_ctx, args)
            })
        };
        let reason = match result {
            Ok(_) => return RunOutcome::Exit(atom_buffer(Atom::NORMAL)),
            Err(crate::bif::BifError::Halt(status)) => {
                output::flush();
                ctx.halt(status);
                return RunOutcome::Exit(atom_buffer(Atom::NORMAL));
            }
            Err(
                crate::bif::BifError::Raise(Class::Exit, r)
                | crate::bif::BifError::RaiseTrace(Class::Exit, r, _),
            ) => {
                return RunOutcome::Exit(
                    MessageBuffer::copy_from(&self.process.heap, r)
                        .unwrap_or_else(|_| atom_buffer(Atom::SYSTEM_LIMIT)),
                );
            }
            Err(crate::bif::BifError::Raise(_, r) | crate::bif::BifError::RaiseTrace(_, r, _)) => r,
            Err(crate::bif::BifError::Badarith) => Term::atom(Atom::BADARITH),
            Err(crate::bif::BifError::SystemLimit) => Term::atom(Atom::SYSTEM_LIMIT),
            Err(_) => Term::atom(Atom::BADARG),
        };
        let list_words = 2 * args.len();
        let mut roots = [reason];
        if self
            .process
            .ensure_heap(list_words + 5 + 2 + 3, args, &mut roots)
            .is_err()
        {
            return RunOutcome::Exit(atom_buffer(Atom::SYSTEM_LIMIT));
        }
        let list = self.process.heap.list(args);
        let (m, f) = (Atom::intern(entry.module), Atom::intern(entry.name));
        let mfa = self
            .process
            .heap
            .tuple(&[Term::atom(m), Term::atom(f), list, Term::NIL]);
        let stack = self.process.heap.cons(mfa, Term::NIL);
        let t = self.process.heap.tuple(&[roots[0], stack]);
        let reason = MessageBuffer::copy_from(&self.process.heap, t)
            .unwrap_or_else(|_| atom_buffer(Atom::SYSTEM_LIMIT));
        error_report(ctx, ctx.pid(), &reason);
        RunOutcome::Exit(reason)
    }

    /// Ends the process with `reason` from a run step.
    fn die(
        &mut self,
        ctx: &mut RunContext<'_, Actor>,
        reason: MessageBuffer,
    ) -> RunOutcome<MessageBuffer> {
        if self.is_main() && reason.term() != Term::atom(Atom::NORMAL) {
            // Killed by an exit signal: escript's boot process dies with
            // it, and the runtime prints its slogan on stdout, status 1.
            let heap = reason.heap().unwrap_or(&self.process.heap);
            let text = crate::term::print::display(heap, reason.term());
            let slogan = format!("{{\"init terminating in do_boot\",{text}}}\r\n");
            output::write_stdout(slogan.as_bytes());
            output::write_stderr(format!("act: main process killed: {text}\n").as_bytes());
            ctx.halt(1);
        }
        RunOutcome::Exit(reason)
    }
}

/// Whether `message` answers the io request tagged `reference`: the
/// reply (`{io_reply, Ref, _}`: true) or the server's 'DOWN' (false).
fn io_answer(heap: &crate::heap::Heap, message: Term, reference: u64) -> Option<bool> {
    let View::Tuple(e) = heap.view(message) else {
        return None;
    };
    let first = e.first()?.as_atom()?;
    if e.len() < 3 || !matches!(heap.view(e[1]), View::Ref(r) if r == reference) {
        return None;
    }
    match (first.name(), e.len()) {
        ("io_reply", 3) => Some(true),
        ("DOWN", 5) => Some(false),
        _ => None,
    }
}

/// Erlang's crash report for a process that died of an error.
fn error_report(ctx: &RunContext<'_, Actor>, pid: Pid, reason: &MessageBuffer) {
    let text = match reason.heap() {
        Some(h) => crate::bif::fmt::print(h, reason.term()),
        None => crate::bif::fmt::print(&crate::heap::Heap::new(), reason.term()),
    };
    let ns = if deterministic() {
        ctx.now_ns()
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    let report = format!(
        "=ERROR REPORT==== {} ===\nError in process {} with exit value:\n{}\n\n",
        timestamp(ns),
        pid_name(pid.id()),
        text
    );
    output::write_stderr(report.as_bytes());
}

/// `2-Dec-2026::14:16:03.532122` (UTC) for nanoseconds since 1970.
fn timestamp(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let micros = (ns / 1_000) % 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{day}-{}-{year}::{:02}:{:02}:{:02}.{micros:06}",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// How pids print (as `bif::fmt` installs it for `~p`).
fn pid_name(id: u64) -> String {
    let mut heap = crate::heap::Heap::new();
    let _ = heap.ensure(0, &mut []);
    crate::bif::fmt::print(&heap, Term::pid(id))
}

impl Actor {
    /// One run step: the process runs until it waits, yields or ends.
    fn step(
        &mut self,
        ctx: &mut RunContext<'_, Actor>,
        regs: &mut Registers,
        budget: u32,
    ) -> RunOutcome<MessageBuffer> {
        let live = live_registers();
        match self.cold.as_mut().and_then(|c| c.start.take()) {
            Some(Start::Run(args)) => {
                if self.is_main() && super::nodes::alive() {
                    start_spawner(ctx);
                }
                // The registers hold the last process's terms: clear them,
                // every live one is a GC root of this process now.
                regs.x[..args.len()].copy_from_slice(&args);
                regs.x[args.len()..live.max(args.len())].fill(Term::NIL);
            }
            Some(Start::Bif(index, mut args)) => {
                return self.run_bif(ctx, regs, index, &mut args);
            }
            Some(Start::Fail(reason)) => {
                let reason = MessageBuffer::copy_from(&self.process.heap, reason)
                    .unwrap_or_else(|_| atom_buffer(Atom::UNDEF));
                error_report(ctx, ctx.pid(), &reason);
                return self.die(ctx, reason);
            }
            None => {
                // Modules loaded since may use more registers.
                let n = self.process.parked_registers();
                self.process.unpark_registers(&mut regs.x[..live.max(n)]);
            }
        }
        if let Taken::Dies(reason) = self.take_signals(ctx, &mut regs.x[..live]) {
            return self.die(ctx, reason);
        }
        if let Some(reference) = self.cold.as_ref().and_then(|c| c.io_reply)
            && !self.take_io_reply(ctx, reference)
        {
            return self.suspend(regs, live);
        }
        if let Some(pid) = self.cold.as_ref().and_then(|c| c.awaiting_exit) {
            if ctx.is_alive(pid) {
                return self.pause(regs, live, RunOutcome::Yield);
            }
            if let Some(c) = self.cold.as_mut() {
                c.awaiting_exit = None;
            }
        }
        if let Some(peer) = self.cold.as_ref().and_then(|c| c.suspended_on) {
            if super::nodes::still_busy(peer, ctx.pid()) {
                return self.suspend(regs, live);
            }
            if let Some(c) = self.cold.as_mut() {
                c.suspended_on = None;
            }
        }
        let outcome = {
            let mut services = ActorServices {
                ctx: &mut *ctx,
                cold: &mut self.cold,
            };
            services_mod::with_installed(&mut services, || {
                crate::engine::run(&mut self.process, regs, budget as usize)
            })
        };
        ctx.charge(self.process.reductions.min(u32::MAX as usize) as u32);
        match outcome {
            Outcome::Yield
                if self
                    .cold
                    .as_ref()
                    .is_some_and(|c| c.suspended_on.is_some() || c.io_reply.is_some()) =>
            {
                self.suspend(regs, live)
            }
            Outcome::Yield
                if self
                    .cold
                    .as_ref()
                    .is_some_and(|c| c.awaiting_exit.is_some()) =>
            {
                self.pause(regs, live, RunOutcome::Yield)
            }
            Outcome::Yield => {
                // Only the arguments of the call it stopped at are live.
                let n = (self.process.live_x as usize).min(live);
                if self.process.park_registers(&regs.x[..n]).is_err() {
                    return self.die(ctx, atom_buffer(Atom::SYSTEM_LIMIT));
                }
                RunOutcome::Yield
            }
            Outcome::Wait => {
                if self.save_registers(regs, live).is_err() {
                    return self.die(ctx, atom_buffer(Atom::SYSTEM_LIMIT));
                }
                RunOutcome::Wait
            }
            Outcome::WaitTimeout(ms) => {
                if self.save_registers(regs, live).is_err() {
                    return self.die(ctx, atom_buffer(Atom::SYSTEM_LIMIT));
                }
                if !self.process.in_timed_receive || self.timer_tag == 0 {
                    // A new receive: its timer starts now. (A receive woken
                    // by a message it did not match keeps its timer.)
                    let tag = self.next_tag;
                    self.next_tag += 1;
                    self.timer_tag = tag;
                    self.process.in_timed_receive = true;
                    ctx.set_timer(ms, tag);
                }
                RunOutcome::Wait
            }
            Outcome::Exit(ExitKind::Normal) => RunOutcome::Exit(atom_buffer(Atom::NORMAL)),
            Outcome::Exit(ExitKind::Exception) => {
                if self.is_main() {
                    let text = format!("act: {}", interp::format_exception(&self.process));
                    // escript writes the report to a latin1 device: a
                    // character below 256 is one byte (the report prints
                    // terms as latin1, so there are no others but in names).
                    let bytes: Vec<u8> = text
                        .chars()
                        .flat_map(|c| match u8::try_from(u32::from(c)) {
                            Ok(b) => vec![b],
                            Err(_) => c.to_string().into_bytes(),
                        })
                        .collect();
                    output::write_stderr(&bytes);
                    ctx.halt(127);
                    return RunOutcome::Exit(atom_buffer(Atom::NORMAL));
                }
                let class = self.process.exception()[0];
                let reason = self.exception_reason(&mut regs.x[..live]);
                if class != Term::atom(Atom::EXIT) {
                    error_report(ctx, ctx.pid(), &reason);
                }
                RunOutcome::Exit(reason)
            }
            Outcome::Halt(status) => {
                output::flush();
                ctx.halt(status);
                RunOutcome::Exit(atom_buffer(Atom::NORMAL))
            }
        }
    }
}

impl ProcessBody for Actor {
    type Message = MessageBuffer;
    type Registers = Registers;

    fn run(
        &mut self,
        ctx: &mut RunContext<'_, Actor>,
        regs: &mut Registers,
        budget: u32,
    ) -> RunOutcome<MessageBuffer> {
        let outcome = self.step(ctx, regs, budget);
        // What the step printed goes out now, not when the buffer fills:
        // a program's output is never held longer than one time slice
        // (and is not lost if the VM is killed later).
        output::flush_if_written();
        outcome
    }

    fn on_exiting(&mut self, ctx: &mut RunContext<'_, Actor>) {
        self.process.release_memory();
        // The messages still queued go too; link and monitor requests
        // wait for `on_exit`, which answers them once the process has
        // left the table.
        let mut raced = Vec::new();
        while let Some(signal) = ctx.take_signal() {
            match signal {
                Signal::Link(from) => raced.push((from, None)),
                Signal::Monitor { from, reference } => raced.push((from, Some(reference))),
                _ => {}
            }
        }
        if !raced.is_empty() {
            self.cold().raced = raced;
        }
    }

    fn on_exit(&mut self, ctx: &mut RunContext<'_, Actor>, reason: &MessageBuffer) {
        let me = ctx.pid();
        super::nodes::exited(me, reason);
        crate::bif::io_server::exited(me);
        super::sockets::exited(me);
        crate::bif::extras::priority_exited(me);
        // Its ets tables go to their heirs or away.
        for (heir, message) in super::ets::owner_exited(me, |p| ctx.is_alive(p)) {
            ctx.send(heir, Signal::Message(message));
        }
        let mut raced = Vec::new();
        if let Some(cold) = self.cold.take() {
            raced = cold.raced;
            for (alias, _) in cold.aliases {
                super::aliases::remove(alias);
            }
            for (link, ()) in cold.links.iter() {
                ctx.send(
                    link,
                    Signal::Exit {
                        from: me,
                        reason: duplicate(reason),
                        linked: true,
                    },
                );
            }
            for (reference, watcher) in cold.watchers.iter() {
                ctx.send(
                    watcher,
                    Signal::Down {
                        from: me,
                        reference,
                        reason: duplicate(reason),
                    },
                );
            }
            for (reference, target) in cold.monitors.iter() {
                ctx.send(
                    target,
                    Signal::Demonitor {
                        from: me,
                        reference,
                    },
                );
            }
        }
        // Links and monitors that raced with this exit hear `noproc`.
        for (from, monitor) in raced {
            let signal = match monitor {
                None => Signal::Link(from),
                Some(reference) => Signal::Monitor { from, reference },
            };
            answer_raced(ctx, me, signal);
        }
        while let Some(signal) = ctx.take_signal() {
            answer_raced(ctx, me, signal);
        }
    }
}

/// Answers a link or monitor request that reached process `me` as it
/// exited: `noproc`, as if it had come a moment later. Other signals are
/// dropped.
fn answer_raced(ctx: &mut RunContext<'_, Actor>, me: Pid, signal: Signal<MessageBuffer>) {
    match signal {
        Signal::Link(from) => {
            ctx.send(
                from,
                Signal::Exit {
                    from: me,
                    reason: atom_buffer(Atom::NOPROC),
                    linked: true,
                },
            );
        }
        Signal::Monitor { from, reference } => {
            ctx.send(
                from,
                Signal::Down {
                    from: me,
                    reference,
                    reason: atom_buffer(Atom::NOPROC),
                },
            );
        }
        _ => {}
    }
}

impl Actor {
    /// A copy of what `process_info` shows of this (not running) process;
    /// `peek` visits the signals still in its inbox.
    fn snapshot(
        &self,
        want: Want,
        waiting: bool,
        peek: crate::sched::cell::Peek<'_, MessageBuffer>,
    ) -> Snapshot {
        let p = &self.process;
        let mut snap = Snapshot {
            runnable: !waiting,
            heap_words: p.heap.used(),
            stack_words: p.stack.len(),
            reductions: p.total_reductions,
            trap_exit: self.trapping(),
            suspended: self.cold.as_ref().is_some_and(|c| c.suspended_on.is_some()),
            ..Snapshot::default()
        };
        let copy = |t: Term| {
            MessageBuffer::copy_from(&p.heap, t)
                .unwrap_or_else(|_| MessageBuffer::immediate(Term::atom(Atom::SYSTEM_LIMIT)))
        };
        snap.message_queue_len = p.mailbox.len();
        if want.messages {
            snap.messages = p.mailbox.iter().map(|&t| copy(t)).collect();
        }
        if let Some(c) = &self.cold {
            snap.links = c.links.iter().map(|(pid, ())| pid).collect();
            snap.monitors = c.monitors.iter().collect();
            snap.monitored_by = c.watchers.iter().map(|(_, pid)| pid).collect();
        }
        // What its next run step will book from the inbox counts already:
        // the sender has done its part (BEAM's signal order says the same).
        let aliases: Vec<u64> = self
            .cold
            .as_ref()
            .map(|c| c.aliases.iter().map(|&(a, _)| a).collect())
            .unwrap_or_default();
        peek(&mut |signal| match signal {
            Signal::Message(buffer) => {
                snap.message_queue_len += 1;
                if want.messages {
                    snap.messages.push(duplicate(buffer));
                }
            }
            // Through an alias still active (a reply alias's later
            // messages are counted too: a close enough guess).
            Signal::AliasMessage { alias, message } if aliases.contains(alias) => {
                snap.message_queue_len += 1;
                if want.messages {
                    snap.messages.push(duplicate(message));
                }
            }
            Signal::Link(from) if !snap.links.contains(from) => snap.links.push(*from),
            Signal::Unlink(from) => snap.links.retain(|p| p != from),
            Signal::Monitor { from, .. } => snap.monitored_by.push(*from),
            Signal::Demonitor { from, .. } => {
                if let Some(i) = snap.monitored_by.iter().position(|p| p == from) {
                    snap.monitored_by.remove(i);
                }
            }
            _ => {}
        });
        if want.dictionary {
            snap.dictionary = p
                .dictionary()
                .chunks(2)
                .map(|kv| (copy(kv[0]), copy(kv[1])))
                .collect();
        }
        snap.initial_call = Some(p.initial_call());
        snap.catch_level = p.catch_level();
        if want.stacktrace {
            snap.stacktrace = crate::interp::current_stacktrace(p, p.module, p.ip as usize);
        }
        let ip = p.ip;
        snap.current_function = p
            .module
            .functions
            .iter()
            .filter(|f| f.entry <= ip)
            .max_by_key(|f| f.entry)
            .map(|f| (p.module.name, f.name, f.arity));
        snap
    }
}

/// The BIF services of a running actor: its run context and cold part.
struct ActorServices<'a, 'b> {
    ctx: &'a mut RunContext<'b, Actor>,
    cold: &'a mut Option<Box<Cold>>,
}

impl ActorServices<'_, '_> {
    fn cold(&mut self) -> &mut Cold {
        self.cold.get_or_insert_with(Box::default)
    }
}

impl Services for ActorServices<'_, '_> {
    fn self_pid(&self) -> Pid {
        self.ctx.pid()
    }

    fn send(&mut self, to: Pid, message: MessageBuffer) {
        self.ctx.send_message(to, message);
    }

    fn suspend_on(&mut self, node: Atom) {
        self.cold().suspended_on = Some(node);
    }

    fn await_io_reply(&mut self, reference: u64) {
        self.cold().io_reply = Some(reference);
    }

    fn spawn(&mut self, spawn: Spawn) -> Option<Pid> {
        let me = self.ctx.pid();
        let Spawn {
            process,
            start,
            link,
            monitor,
        } = spawn;
        // Only a check (one load): `Actor::new` draws the bytes itself.
        if !budget::has_room(Actor::fixed_bytes()) {
            return None;
        }
        let pid = self
            .ctx
            .spawn(|child_pid| {
                // Before the child can run: it prints to its group leader.
                crate::bif::io_server::inherit(me, child_pid);
                let mut child = Actor::new(process, start, false);
                if link || monitor.is_some() {
                    let cold = child.cold();
                    if link {
                        cold.links.insert(me, ());
                    }
                    if let Some(reference) = monitor {
                        cold.watchers.insert(reference, me);
                    }
                }
                child
            })
            .ok()?;
        if link {
            self.cold().links.insert(pid, ());
        }
        if let Some(reference) = monitor {
            self.cold().monitors.insert(reference, pid);
        }
        Some(pid)
    }

    fn link(&mut self, pid: Pid) -> bool {
        let me = self.ctx.pid();
        if pid == me {
            return true;
        }
        if self.cold().links.contains(pid) {
            return self.ctx.is_alive(pid);
        }
        if self.ctx.send(pid, Signal::Link(me)) == Delivery::NoProcess {
            return false;
        }
        self.cold().links.insert(pid, ());
        true
    }

    fn unlink(&mut self, pid: Pid) {
        let me = self.ctx.pid();
        if let Some(c) = self.cold.as_mut() {
            c.links.remove(pid);
        }
        self.ctx.send(pid, Signal::Unlink(me));
    }

    fn name_monitor(&mut self, reference: u64, name: Atom) {
        self.cold().named.push((reference, name));
    }

    fn tag_monitor(&mut self, reference: u64, tag: MessageBuffer) {
        self.cold().tagged.push((reference, tag));
    }

    fn monitor(&mut self, pid: Pid) -> u64 {
        let me = self.ctx.pid();
        let reference = self.ctx.make_ref();
        self.cold().monitors.insert(reference, pid);
        if self.ctx.send(
            pid,
            Signal::Monitor {
                from: me,
                reference,
            },
        ) == Delivery::NoProcess
        {
            // The target is gone: the 'DOWN' comes at once, in order.
            self.ctx.send(
                me,
                Signal::Down {
                    from: pid,
                    reference,
                    reason: atom_buffer(Atom::NOPROC),
                },
            );
        }
        reference
    }

    fn demonitor(&mut self, reference: u64) -> bool {
        let me = self.ctx.pid();
        let Some(c) = self.cold.as_mut() else {
            return false;
        };
        monitor_ended(c, reference);
        take_name(c, reference);
        take_tag(c, reference);
        let Some(target) = c.monitors.remove(reference) else {
            return false;
        };
        self.ctx.send(
            target,
            Signal::Demonitor {
                from: me,
                reference,
            },
        );
        true
    }

    fn alias(&mut self, id: u64, mode: AliasMode) {
        let me = self.ctx.pid();
        self.cold().aliases.push((id, mode));
        super::aliases::add(id, me);
    }

    fn unalias(&mut self, id: u64) -> bool {
        self.cold
            .as_mut()
            .is_some_and(|c| end_alias(c, id, |_| true).is_some())
    }

    fn send_alias(&mut self, id: u64, message: MessageBuffer) {
        if let Some(owner) = super::aliases::owner(id) {
            self.ctx
                .send(owner, Signal::AliasMessage { alias: id, message });
        }
    }

    fn exit_signal(&mut self, to: Pid, from: Pid, reason: MessageBuffer) {
        self.ctx.send(
            to,
            Signal::Exit {
                from,
                reason,
                linked: false,
            },
        );
    }

    fn set_trap_exit(&mut self, on: bool) -> bool {
        if !on && self.cold.is_none() {
            return false;
        }
        std::mem::replace(&mut self.cold().trap_exit, on)
    }

    fn trap_exit(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.trap_exit)
    }

    fn register(&mut self, name: Atom, pid: Pid) -> bool {
        self.ctx.register(name, pid)
    }

    fn unregister(&mut self, name: Atom) -> bool {
        self.ctx.unregister(name)
    }

    fn whereis(&self, name: Atom) -> Option<Pid> {
        self.ctx.whereis(name)
    }

    fn registered(&self) -> Vec<Atom> {
        self.ctx.registered()
    }

    fn is_alive(&self, pid: Pid) -> bool {
        let killed = self.cold.as_ref().is_some_and(|c| c.killed.contains(&pid));
        !killed && self.ctx.is_alive(pid)
    }

    fn await_exit(&mut self, pid: Pid) -> bool {
        let killed = self.cold.as_ref().is_some_and(|c| c.killed.contains(&pid));
        if killed && self.ctx.is_alive(pid) {
            self.cold().awaiting_exit = Some(pid);
            return true;
        }
        false
    }

    fn killed(&mut self, pid: Pid) {
        let mut killed = std::mem::take(&mut self.cold().killed);
        // Once a target is gone from the table the entry is not needed.
        killed.retain(|&p| self.ctx.is_alive(p));
        if killed.len() == 64 {
            killed.remove(0);
        }
        killed.push(pid);
        self.cold().killed = killed;
    }

    fn processes(&self) -> Vec<Pid> {
        self.ctx.processes()
    }

    fn process_count(&self) -> usize {
        self.ctx.process_count()
    }

    fn schedulers(&self) -> usize {
        self.ctx.schedulers()
    }

    fn total_reductions(&self) -> u64 {
        self.ctx.total_reductions()
    }

    fn make_ref(&mut self) -> u64 {
        self.ctx.make_ref()
    }

    fn now_ns(&self) -> u64 {
        self.ctx.now_ns()
    }

    fn start_send_timer(
        &mut self,
        id: u64,
        after_ns: u64,
        to: Destination,
        message: MessageBuffer,
    ) {
        self.ctx.start_send_timer(id, after_ns, to, message);
    }

    fn cancel_send_timer(&mut self, id: u64) -> Option<u64> {
        self.ctx.cancel_send_timer(id)
    }

    fn read_send_timer(&self, id: u64) -> Option<u64> {
        self.ctx.read_send_timer(id)
    }

    fn inspect(&mut self, pid: Pid, want: Want) -> Option<Snapshot> {
        self.ctx.inspect(pid, |actor, waiting, peek| {
            actor.snapshot(want, waiting, peek)
        })
    }

    fn relations(&self) -> (Vec<Pid>, Vec<(u64, Pid)>, Vec<Pid>) {
        let Some(c) = self.cold.as_ref() else {
            return (Vec::new(), Vec::new(), Vec::new());
        };
        (
            c.links.iter().map(|(pid, ())| pid).collect(),
            c.monitors.iter().collect(),
            c.watchers.iter().map(|(_, pid)| pid).collect(),
        )
    }
}

/// Starts the process that serves other nodes' spawn requests
/// (`erts_dist:spawner/0`, registered as `$dist_spawner`); a node's main
/// process does it in its first step, before any peer can ask.
fn start_spawner(ctx: &mut RunContext<'_, Actor>) {
    let Ok(Some(module)) = super::lookup(Atom::intern("erts_dist")) else {
        return;
    };
    let Some(entry) = module.exported(Atom::intern("spawner"), 0) else {
        return;
    };
    let process = Process::new(module, entry);
    if let Ok(pid) = ctx.spawn(|_| Actor::new(process, Start::Run(Vec::new()), false)) {
        ctx.register(Atom::intern("$dist_spawner"), pid);
    }
}

/// Runs `process` (about to run main/1, `args` in x0...) as the main
/// process of a runtime set up by `config`; returns the exit status:
/// 0 when main returns, 127 for an uncaught error in main, N for halt(N).
/// `stats` asks for the `--stats` report on stderr.
pub fn run_main(config: Config, process: Process, args: Vec<Term>, stats: bool) -> i32 {
    DETERMINISTIC.store(config.deterministic, Ordering::Relaxed);
    if let Err(message) = super::nodes::start_if_asked(config.deterministic) {
        output::write_stderr(format!("act: {message}\n").as_bytes());
        return 1;
    }
    // The outside queue: the distribution's when the node is alive, else
    // one for the sockets' reader threads alone.
    let outside = super::nodes::outside().unwrap_or_default();
    super::sockets::attach(outside.clone());
    let finished = sched::run_with_outside(config, Some(outside), move |_| {
        Actor::new(process, Start::Run(args), true)
    });
    super::nodes::flush();
    output::flush();
    crate::bif::file::flush_all();
    if stats {
        let mut text = Vec::new();
        let _ = finished.stats.write(&mut text);
        output::write_stderr(&text);
    }
    match finished.finish {
        Finish::MainExited(_) => 0,
        Finish::Halted(status) => status,
        Finish::Deadlock => {
            output::write_stderr(b"act: every process waits for a message that can never arrive\n");
            1
        }
        Finish::Panicked(message) => {
            output::write_stderr(format!("act: internal error: {message}\n").as_bytes());
            70
        }
    }
}

/// The runtime options of this run, set from the command line before
/// the program starts (`--schedulers`, `--reductions`, `--max-processes`,
/// `--deterministic`, `--stats`).
fn options() -> &'static std::sync::Mutex<(Config, bool)> {
    static OPTIONS: std::sync::OnceLock<std::sync::Mutex<(Config, bool)>> =
        std::sync::OnceLock::new();
    OPTIONS.get_or_init(|| std::sync::Mutex::new((Config::default(), false)))
}

/// Applies one runtime option (`Ok(false)`: not a runtime option).
pub fn apply_option(name: &str, value: Option<&str>) -> Result<bool, String> {
    if super::nodes::option_takes_value(name) {
        return super::nodes::apply_option(name, value);
    }
    let mut options = options().lock().unwrap_or_else(|e| e.into_inner());
    match name {
        "--stats" => {
            options.1 = true;
            return Ok(true);
        }
        "--engine" => {
            let text = value.ok_or("--engine needs one of interp, native, auto")?;
            let mode = crate::engine::Mode::parse(text).ok_or_else(|| {
                format!("--engine: expected interp, native or auto, found `{text}`")
            })?;
            crate::engine::set_mode(mode);
            return Ok(true);
        }
        "--engine-stats" => {
            ENGINE_STATS.store(true, std::sync::atomic::Ordering::Relaxed);
            crate::native::stats::ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(true);
        }
        _ => {}
    }
    options.0.apply_option(name, value)
}

/// `--engine-stats`: print what the native tier did when the program ends.
static ENGINE_STATS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The native tier's report, if `--engine-stats` asked for it.
pub fn engine_report() -> Option<String> {
    ENGINE_STATS
        .load(std::sync::atomic::Ordering::Relaxed)
        .then(crate::native::stats::report)
}

/// Whether a runtime option takes a value after it.
pub fn option_takes_value(name: &str) -> bool {
    name == "--engine" || Config::option_takes_value(name) || super::nodes::option_takes_value(name)
}

/// The configuration the options set, and whether `--stats` was given.
pub fn configured() -> (Config, bool) {
    options().lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::CONTEXT_REDS;

    /// A signal's inbox node takes a block of the inbox's cache, not a
    /// general allocation (the send path's cost depends on it).
    #[test]
    fn a_signal_node_fits_the_inbox_block() {
        let signal = std::mem::size_of::<Signal<MessageBuffer>>();
        eprintln!(
            "Signal {signal} B, MessageBuffer {} B",
            std::mem::size_of::<MessageBuffer>()
        );
        assert!(crate::sched::inbox::node_fits_block::<Signal<MessageBuffer>>());
    }

    /// The process cell (the `Arc`'s two counts, the shared half, the
    /// Actor) fills mimalloc's 320-byte class exactly: one byte more in
    /// `Actor` or `Process` costs 64 per process (the next class is 384).
    #[test]
    fn an_actor_fits_the_320_byte_class() {
        let actor = std::mem::size_of::<Actor>();
        let process = std::mem::size_of::<Process>();
        let cell = 16 + std::mem::size_of::<ProcessCell<Actor>>();
        eprintln!("Actor {actor} B, Process {process} B, cell {cell} B");
        assert!(process <= 232, "Process is {process} bytes");
        assert!(actor <= 256, "Actor is {actor} bytes");
        assert!(cell <= 320, "the process cell is {cell} bytes");
    }

    /// What a process holds, everything counted (see `heap::footprint`),
    /// at most: a fresh process waiting in `receive` with one live
    /// variable (the idle process of issue #8), and one that has taken
    /// and handled a message (a ring node between hops). Today both hold
    /// the cell (320), the inbox stub (8), a table slot (16) and 4 Y
    /// slots (32): no heap (nothing boxed), no mailbox storage (one
    /// message at a time waits inline).
    const IDLE_BUDGET: usize = 1024;

    /// A process running `name/1` of `source` with `arg`, as `spawn`
    /// makes it.
    fn spawned(source: &str, name: &str, arg: Term) -> Actor {
        let module = crate::runtime::script::compile_source(source, "idle.act", "idle")
            .expect("the test module compiles");
        let module = crate::runtime::load(module);
        let index = module.local_functions[&(Atom::intern(name), 1)];
        let entry = module.functions[index as usize].entry;
        Actor::new(Process::new(module, entry), Start::Run(vec![arg]), false)
    }

    /// One run step as `Actor::run` takes it, minus the scheduler: the
    /// registers are restored, the process runs until its receive waits,
    /// and the live registers are saved.
    fn run_until_waiting(actor: &mut Actor, regs: &mut Registers) {
        let live = live_registers();
        assert!(actor.cold.is_none(), "the arguments are parked");
        actor.process.unpark_registers(&mut regs.x[..live]);
        let outcome = crate::engine::run(&mut actor.process, regs, CONTEXT_REDS as usize);
        assert!(matches!(outcome, Outcome::Wait), "the process waits");
        actor.save_registers(regs, live).expect("the registers fit");
    }

    #[test]
    fn an_idle_process_stays_within_its_memory_budget() {
        let source = "-export([wait/1, loop/1]).\n\
                      wait(Prev) -> receive stop -> Prev ! stop end.\n\
                      loop(N) -> receive K -> loop(N + K) end.\n";
        let mut regs = Registers::new();
        let mut idle = spawned(source, "wait", Term::pid(7));
        run_until_waiting(&mut idle, &mut regs);
        let footprint = idle.footprint();
        eprintln!("a fresh process waiting in receive:\n{footprint}");
        assert!(
            footprint.total() <= IDLE_BUDGET,
            "an idle process holds {} bytes, over its budget of {IDLE_BUDGET}:\n{footprint}",
            footprint.total()
        );

        let mut node = spawned(source, "loop", Term::small(0));
        run_until_waiting(&mut node, &mut regs);
        node.process.mailbox.push(Term::small(5));
        run_until_waiting(&mut node, &mut regs);
        let footprint = node.footprint();
        eprintln!("a process waiting again after one message:\n{footprint}");
        assert!(
            footprint.total() <= IDLE_BUDGET,
            "a process between messages holds {} bytes, over its budget of {IDLE_BUDGET}:\n{footprint}",
            footprint.total()
        );
    }

    #[test]
    fn timestamps_read_like_erlangs() {
        assert_eq!(timestamp(0), "1-Jan-1970::00:00:00.000000");
        assert_eq!(
            timestamp(1_795_000_000_123_456_000),
            "18-Nov-2026::11:06:40.123456"
        );
    }
}
