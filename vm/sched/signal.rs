//! Signals: everything one process sends another travels as a `Signal`
//! through the receiver's one inbox, so one sender's signals arrive in the
//! order sent (`P ! hi, exit(P, bye)` delivers `hi` first).

use super::pid::Pid;

/// A signal, generic over the payload `M` that carries terms across heaps
/// (the process layer's `heap::MessageBuffer`). Reference ids are the `u64`s
/// that `Heap::reference` takes.
#[derive(Debug)]
pub enum Signal<M> {
    /// `To ! Message`.
    Message(M),
    /// `Alias ! Message`: a message sent through the receiver's alias
    /// `alias`, taken only if the receiver still has it active
    /// (`runtime::aliases`).
    AliasMessage { alias: u64, message: M },
    /// An exit signal: `exit(To, Reason)` (`linked` false), or the death
    /// of a linked process (`linked` true). The two differ for `kill`:
    /// only `exit(To, kill)` is untrappable; a linked process that died
    /// of `exit(kill)` sends an ordinary reason `kill`.
    Exit { from: Pid, reason: M, linked: bool },
    /// An exit signal from a process of another node (the distribution
    /// delivers it): `from` holds that remote pid, `reason` the reason.
    /// A linked one was checked against the link table of `dist`.
    /// Boxed: two buffers inline would make every signal too big for an
    /// inbox block (`inbox::node_fits_block`), and this one is rare.
    RemoteExit {
        from_reason: Box<(M, M)>,
        linked: bool,
    },
    /// `link(To)`: the receiver adds `from` to its links.
    Link(Pid),
    /// `unlink(To)`.
    Unlink(Pid),
    /// `monitor(process, To)`.
    Monitor { from: Pid, reference: u64 },
    /// `demonitor(Ref)`.
    Demonitor { from: Pid, reference: u64 },
    /// A monitored process went down: becomes `{'DOWN', Ref, process, From, Reason}`.
    Down {
        from: Pid,
        reference: u64,
        reason: M,
    },
    /// A timer the receiver set with this tag fired (see `RunContext::set_timer`).
    /// Lazily cancelled: a tag that is not the receiver's current one is stale.
    Timeout(u64),
    /// What the receiver was suspended on (a busy connection to another
    /// node) has cleared: it only wakes the receiver, whose body checks
    /// for itself whether to go on (see "Suspending" in `mod.rs`).
    Resume,
}
