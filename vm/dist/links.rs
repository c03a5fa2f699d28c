//! Links across nodes and exit signals between nodes.
//!
//! A link between an act process and a process of another node lives
//! here, not in the process's link set (which holds local pids only):
//! one table, local pid -> the remote ends. Both directions use it: a
//! `link/1` from here (`LINK` goes out), a `LINK` from a peer, and the
//! links a spawn request set up.
//!
//! Invariants:
//! - An entry is taken out of the table exactly once, by whichever comes
//!   first: the local process's exit hook (`EXIT` goes to the peer), an
//!   `EXIT` from the peer (the local process hears it, linked), an
//!   unlink from either side, or the loss of the connection (the local
//!   process hears `noconnection`). So each end hears of a link's end at
//!   most once, and a linked exit signal is only delivered for a link
//!   that is still held.
//! - A `LINK` for a local pid is recorded before a scheduler is asked
//!   whether the pid lives (a probe, as for monitors): the exit hook or
//!   the probe's `noproc` answers, never both.

use super::conn::{control, local_epid, queue, tag};
use crate::runtime::nodes as rt;
use crate::sched::Pid;
use crate::term::{Atom, node};
use eetf::{Pid as EPid, Term as ETerm};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

const LINK: i32 = 1;
const EXIT: i32 = 3;
const UNLINK: i32 = 4;
const EXIT2: i32 = 8;
const UNLINK_ID: i32 = 35;
const UNLINK_ID_ACK: i32 = 36;

/// The remote end of a link.
#[derive(Clone)]
struct End {
    peer: Atom,
    pid: EPid,
}

fn table() -> MutexGuard<'static, HashMap<Pid, Vec<End>>> {
    static T: OnceLock<Mutex<HashMap<Pid, Vec<End>>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

static UNLINK_IDS: AtomicU64 = AtomicU64::new(1);

/// The pid of node-table entry `index` with id `id`, as the wire names it.
pub(super) fn remote_epid(index: u32, id: u64) -> (Atom, EPid) {
    let e = node::entry(index);
    (
        e.name,
        EPid::new(e.name.name(), id as u32, (id >> 32) as u32, e.creation),
    )
}

/// Records a link; false if it was there.
pub(super) fn record(local: Pid, peer: Atom, remote: EPid) -> bool {
    super::watch::note_watched();
    let mut t = table();
    let ends = t.entry(local).or_default();
    if ends.iter().any(|e| e.pid == remote) {
        return false;
    }
    ends.push(End { peer, pid: remote });
    true
}

/// Takes the link `local`-`remote` out; whether it was there.
fn take(local: Pid, remote: &EPid) -> bool {
    let mut t = table();
    let Some(ends) = t.get_mut(&local) else {
        return false;
    };
    let Some(i) = ends.iter().position(|e| &e.pid == remote) else {
        return false;
    };
    ends.swap_remove(i);
    if ends.is_empty() {
        t.remove(&local);
    }
    true
}

/// Delivers an exit signal from `from` (a remote pid) to `to`.
fn deliver_exit(to: Pid, from: &EPid, reason: &ETerm, linked: bool) {
    let (Some(from), Some(reason)) = (
        super::watch::to_buffer(&ETerm::from(from.clone())),
        super::watch::to_buffer(reason),
    ) else {
        return;
    };
    rt::deliver_exit(to, from, reason, linked);
}

fn atom(name: &str) -> ETerm {
    ETerm::from(eetf::Atom::from(name))
}

/// `link(RemotePid)` from `local`.
pub fn link(local: Pid, index: u32, id: u64) {
    let (peer, remote) = remote_epid(index, id);
    if !super::alive() || !super::conn::valid_name(peer) {
        deliver_exit(local, &remote, &atom("noconnection"), true);
        return;
    }
    if !record(local, peer, remote.clone()) {
        return;
    }
    let ctrl = control(vec![
        tag(LINK),
        ETerm::from(local_epid(local)),
        ETerm::from(remote.clone()),
    ]);
    if !queue(peer, &ctrl, &[]) && take(local, &remote) {
        deliver_exit(local, &remote, &atom("noconnection"), true);
    }
}

/// `unlink(RemotePid)` from `local`.
pub fn unlink(local: Pid, index: u32, id: u64) {
    let (peer, remote) = remote_epid(index, id);
    if !take(local, &remote) {
        return;
    }
    let unlink_id = UNLINK_IDS.fetch_add(1, Ordering::Relaxed);
    let ctrl = control(vec![
        tag(UNLINK_ID),
        ETerm::from(eetf::FixInteger {
            value: (unlink_id & 0x7fff_ffff) as i32,
        }),
        ETerm::from(local_epid(local)),
        ETerm::from(remote),
    ]);
    queue(peer, &ctrl, &[]);
}

/// `exit(RemotePid, Reason)` from `local` (`reason` in the external
/// format).
pub fn exit(local: Pid, index: u32, id: u64, reason: &[u8]) {
    let (peer, remote) = remote_epid(index, id);
    let Ok(reason) = ETerm::decode(reason) else {
        return;
    };
    let ctrl = control(vec![
        tag(EXIT2),
        ETerm::from(local_epid(local)),
        ETerm::from(remote),
        reason,
    ]);
    queue(peer, &ctrl, &[]);
}

/// A local process ended with `reason`: its remote links hear it.
pub fn exited(local: Pid, reason: &ETerm) {
    let Some(ends) = table().remove(&local) else {
        return;
    };
    let from = ETerm::from(local_epid(local));
    for e in ends {
        let ctrl = control(vec![
            tag(EXIT),
            from.clone(),
            ETerm::from(e.pid),
            reason.clone(),
        ]);
        queue(e.peer, &ctrl, &[]);
    }
}

/// The connection to `peer` is gone: every link to its processes breaks
/// with `noconnection`.
pub fn node_down(peer: Atom) {
    let mut broken = Vec::new();
    {
        let mut t = table();
        for (&local, ends) in t.iter_mut() {
            ends.retain(|e| {
                if e.peer == peer {
                    broken.push((local, e.pid.clone()));
                    false
                } else {
                    true
                }
            });
        }
        t.retain(|_, ends| !ends.is_empty());
    }
    for (local, remote) in broken {
        deliver_exit(local, &remote, &atom("noconnection"), true);
    }
}

/// A probe found `local` dead: links recorded on it answer `noproc`.
pub fn dead(local: Pid) {
    exited(local, &atom("noproc"));
}

/// The control messages of links and exits, from `peer`. Whether `op`
/// was one of them.
pub fn handle(peer: Atom, op: i32, elements: &[ETerm], payload: Option<ETerm>) -> bool {
    let pid = |i: usize| match elements.get(i) {
        Some(ETerm::Pid(p)) => Some(p.clone()),
        _ => None,
    };
    match op {
        LINK => {
            let (Some(from), Some(to)) = (pid(1), pid(2)) else {
                return true;
            };
            let Some(local) = super::conn::local_pid(&to) else {
                return true;
            };
            if record(local, peer, from) {
                super::watch::probe_pid(local);
            }
        }
        UNLINK => {
            if let (Some(from), Some(to)) = (pid(1), pid(2))
                && let Some(local) = super::conn::local_pid(&to)
            {
                take(local, &from);
            }
        }
        UNLINK_ID => {
            // {35, Id, From, To}: answered with {36, Id, To, From}.
            let (Some(id), Some(from), Some(to)) = (elements.get(1), pid(2), pid(3)) else {
                return true;
            };
            if let Some(local) = super::conn::local_pid(&to) {
                take(local, &from);
            }
            let ctrl = control(vec![
                tag(UNLINK_ID_ACK),
                id.clone(),
                ETerm::from(to),
                ETerm::from(from),
            ]);
            queue(peer, &ctrl, &[]);
        }
        UNLINK_ID_ACK => {}
        // EXIT {3, From, To, Reason}, EXIT_TT {13, From, To, Token,
        // Reason}, PAYLOAD_EXIT {24, From, To} + Reason; the same for
        // EXIT2 (8, 18, 26), which needs no link.
        3 | 13 | 24 | 8 | 18 | 26 => {
            let (Some(from), Some(to)) = (pid(1), pid(2)) else {
                return true;
            };
            let reason = match op {
                3 | 8 => elements.get(3).cloned(),
                13 | 18 => elements.get(4).cloned(),
                _ => payload,
            };
            let (Some(reason), Some(local)) = (reason, super::conn::local_pid(&to)) else {
                return true;
            };
            let linked = matches!(op, 3 | 13 | 24);
            if linked && !take(local, &from) {
                return true;
            }
            deliver_exit(local, &from, &reason, linked);
        }
        _ => return false,
    }
    true
}
