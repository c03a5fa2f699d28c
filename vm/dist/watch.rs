//! Process monitors across nodes.
//!
//! Outgoing (an act process monitors a process of another node): the
//! monitor lives here, keyed by its reference; `MONITOR_P` goes to the
//! peer, and its `MONITOR_P_EXIT`, or the loss of the connection
//! (`noconnection`), becomes a `'DOWN'` message to the watcher.
//!
//! Incoming (a process of another node monitors an act process): the
//! monitor is recorded under the local pid before a scheduler is asked
//! whether that pid lives (a probe); the process's exit hook
//! (`runtime::nodes::exited`) or a probe that finds it dead answers with
//! `MONITOR_P_EXIT`. Whichever takes the entry out of the table answers,
//! so the peer hears exactly once.

use super::conn::{control, queue, tag};
use crate::runtime::nodes as rt;
use crate::sched::Pid;
use crate::sched::outside::Target;
use crate::term::{Atom, node};
use eetf::{Pid as EPid, Reference, Term as ETerm, Tuple};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

const MONITOR_P: i32 = 19;
const DEMONITOR_P: i32 = 20;
const MONITOR_P_EXIT: i32 = 21;

/// What an outgoing monitor watches.
#[derive(Clone)]
pub enum Watched {
    /// A pid of the peer: its node-table index and id.
    Pid(u32, u64),
    /// A registered name on the peer.
    Name(Atom),
}

struct Outgoing {
    peer: Atom,
    watcher: Pid,
    what: Watched,
}

struct Incoming {
    peer: Atom,
    watcher: EPid,
    reference: ETerm,
}

fn outgoing() -> MutexGuard<'static, HashMap<u64, Outgoing>> {
    static T: OnceLock<Mutex<HashMap<u64, Outgoing>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn incoming() -> MutexGuard<'static, HashMap<Pid, Vec<Incoming>>> {
    static T: OnceLock<Mutex<HashMap<Pid, Vec<Incoming>>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// What a probe asked about.
enum Probe {
    /// Whether this pid lives (its monitors are under `incoming`).
    Pid(Pid),
    /// Whom this name names, for this monitor.
    Name(Atom, Incoming),
}

/// Probes waiting for a scheduler's answer, by token.
fn probes() -> MutexGuard<'static, HashMap<u64, Probe>> {
    static T: OnceLock<Mutex<HashMap<u64, Probe>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Set once any peer monitors a local process: until then a process
/// exit costs one load here.
static WATCHED: AtomicBool = AtomicBool::new(false);
static TOKENS: AtomicU64 = AtomicU64::new(1);

pub fn watched() -> bool {
    WATCHED.load(Ordering::Relaxed)
}

/// A peer holds a monitor or a link on a local process from now on: the
/// exit hook must look.
pub(super) fn note_watched() {
    WATCHED.store(true, Ordering::SeqCst);
}

/// Asks a scheduler whether `pid` lives; a dead one answers `noproc` to
/// whatever peers recorded on it meanwhile.
pub(super) fn probe_pid(pid: Pid) {
    let token = TOKENS.fetch_add(1, Ordering::Relaxed);
    probes().insert(token, Probe::Pid(pid));
    rt::probe(Target::Pid(pid), token);
}

pub(super) fn local_ref(id: u64) -> ETerm {
    let t = node::this_node();
    ETerm::from(Reference {
        node: eetf::Atom::from(t.name.name()),
        id: vec![id as u32, (id >> 32) as u32],
        creation: t.creation,
    })
}

pub(super) fn local_ref_id(r: &ETerm) -> Option<u64> {
    let ETerm::Reference(r) = r else {
        return None;
    };
    (r.node.name == node::this_node().name.name()).then(|| {
        r.id.first().copied().unwrap_or(0) as u64 | (r.id.get(1).copied().unwrap_or(0) as u64) << 32
    })
}

fn watched_term(what: &Watched) -> ETerm {
    match what {
        Watched::Pid(index, id) => {
            let e = node::entry(*index);
            ETerm::from(EPid::new(
                e.name.name(),
                *id as u32,
                (*id >> 32) as u32,
                e.creation,
            ))
        }
        Watched::Name(name) => ETerm::from(eetf::Atom::from(name.name())),
    }
}

/// The object a 'DOWN' names: the pid, or `{Name, Node}`.
fn down_object(peer: Atom, what: &Watched) -> ETerm {
    match what {
        Watched::Name(name) => ETerm::from(Tuple {
            elements: vec![
                ETerm::from(eetf::Atom::from(name.name())),
                ETerm::from(eetf::Atom::from(peer.name())),
            ],
        }),
        w => watched_term(w),
    }
}

fn send_down(id: u64, m: &Outgoing, reason: ETerm) {
    let down = ETerm::from(Tuple {
        elements: vec![
            ETerm::from(eetf::Atom::from("DOWN")),
            local_ref(id),
            ETerm::from(eetf::Atom::from("process")),
            down_object(m.peer, &m.what),
            reason,
        ],
    });
    if let Some(message) = to_buffer(&down) {
        rt::deliver(Target::Pid(m.watcher), message);
    }
}

pub(super) fn to_buffer(t: &ETerm) -> Option<crate::heap::MessageBuffer> {
    let mut bytes = Vec::new();
    t.encode(&mut bytes).ok()?;
    crate::term::etf::binary_to_term(&bytes).ok()
}

fn noconnection() -> ETerm {
    ETerm::from(eetf::Atom::from("noconnection"))
}

/// `monitor(process, Target)` for a process of `peer`, by reference `id`.
pub fn monitor(watcher: Pid, peer: Atom, what: Watched, id: u64) {
    let m = Outgoing {
        peer,
        watcher,
        what,
    };
    if !super::alive() || !super::conn::valid_name(peer) {
        send_down(id, &m, noconnection());
        return;
    }
    let ctrl = control(vec![
        tag(MONITOR_P),
        ETerm::from(super::conn::local_epid(watcher)),
        watched_term(&m.what),
        local_ref(id),
    ]);
    outgoing().insert(id, m);
    if !queue(peer, &ctrl, &[])
        && let Some(m) = outgoing().remove(&id)
    {
        send_down(id, &m, noconnection());
    }
}

/// Records an outgoing monitor the peer set up already (a spawn
/// request's).
pub(super) fn add_outgoing(id: u64, peer: Atom, watcher: Pid, what: Watched) {
    outgoing().insert(
        id,
        Outgoing {
            peer,
            watcher,
            what,
        },
    );
}

/// Records a monitor of the live local process `pid` by `watcher` of
/// `peer` (a spawn request's).
pub(super) fn add_incoming(pid: Pid, peer: Atom, watcher: EPid, reference: ETerm) {
    note_watched();
    incoming().entry(pid).or_default().push(Incoming {
        peer,
        watcher,
        reference,
    });
}

/// `demonitor(Ref)` of an outgoing monitor: whether it was one (and
/// active).
pub fn demonitor(id: u64) -> bool {
    let Some(m) = outgoing().remove(&id) else {
        return false;
    };
    let ctrl = control(vec![
        tag(DEMONITOR_P),
        ETerm::from(super::conn::local_epid(m.watcher)),
        watched_term(&m.what),
        local_ref(id),
    ]);
    queue(m.peer, &ctrl, &[]);
    true
}

/// The connection to `peer` is gone: every monitor of its processes
/// fires with `noconnection`, and its monitors of ours are forgotten.
pub fn node_down(peer: Atom) {
    let fired: Vec<(u64, Outgoing)> = {
        let mut t = outgoing();
        let ids: Vec<u64> = t
            .iter()
            .filter(|(_, m)| m.peer == peer)
            .map(|(&id, _)| id)
            .collect();
        ids.into_iter()
            .filter_map(|id| t.remove(&id).map(|m| (id, m)))
            .collect()
    };
    for (id, m) in fired {
        send_down(id, &m, noconnection());
    }
    let mut t = incoming();
    for list in t.values_mut() {
        list.retain(|m| m.peer != peer);
    }
    t.retain(|_, list| !list.is_empty());
    probes().retain(|_, p| !matches!(p, Probe::Name(_, m) if m.peer == peer));
}

/// `MONITOR_P_EXIT` from `peer`.
pub fn monitored_exit(elements: &[ETerm]) {
    let (Some(reference), Some(reason)) = (elements.get(3), elements.get(4)) else {
        return;
    };
    let Some(id) = local_ref_id(reference) else {
        return;
    };
    if let Some(m) = outgoing().remove(&id) {
        send_down(id, &m, reason.clone());
    }
}

/// `MONITOR_P` from `peer`: `{19, FromPid, ToProc, Ref}`.
pub fn monitor_request(peer: Atom, elements: &[ETerm]) {
    let (Some(ETerm::Pid(watcher)), Some(to), Some(reference)) =
        (elements.get(1), elements.get(2), elements.get(3))
    else {
        return;
    };
    let m = Incoming {
        peer,
        watcher: watcher.clone(),
        reference: reference.clone(),
    };
    WATCHED.store(true, Ordering::SeqCst);
    let token = TOKENS.fetch_add(1, Ordering::Relaxed);
    match to {
        ETerm::Pid(p) => {
            let Some(pid) = super::conn::local_pid(p) else {
                return;
            };
            // The group leader (the runtime's io server) lives as long
            // as the node: a peer's io request monitors it.
            if pid == super::gl::local_leader() {
                return;
            }
            incoming().entry(pid).or_default().push(m);
            probes().insert(token, Probe::Pid(pid));
            rt::probe(Target::Pid(pid), token);
        }
        // net_kernel is served by this room itself (conn.rs) and lives
        // as long as the node: a monitor of it never fires.
        ETerm::Atom(name) if name.name == "net_kernel" => {}
        ETerm::Atom(name) => {
            let Some(name) = Atom::try_intern(&name.name) else {
                return;
            };
            probes().insert(token, Probe::Name(name, m));
            rt::probe(Target::Name(name), token);
        }
        _ => {}
    }
}

/// `DEMONITOR_P` from `peer`: `{20, FromPid, ToProc, Ref}`.
pub fn demonitor_request(elements: &[ETerm]) {
    let Some(reference) = elements.get(3) else {
        return;
    };
    let mut t = incoming();
    for list in t.values_mut() {
        list.retain(|m| &m.reference != reference);
    }
    t.retain(|_, list| !list.is_empty());
}

/// A scheduler's answer to a probe: the live process, if any.
pub fn probed(token: u64, live: Option<Pid>) {
    let Some(probe) = probes().remove(&token) else {
        return;
    };
    match (probe, live) {
        (Probe::Name(_, m), Some(pid)) => incoming().entry(pid).or_default().push(m),
        (Probe::Name(name, m), None) => {
            answer(ETerm::from(eetf::Atom::from(name.name())), m, noproc())
        }
        (Probe::Pid(_), Some(_)) => {}
        // Not there: whatever is still recorded under it (the exit hook
        // may have answered already) hears noproc.
        (Probe::Pid(pid), None) => {
            let list = incoming().remove(&pid).unwrap_or_default();
            for m in list {
                answer(ETerm::from(super::conn::local_epid(pid)), m, noproc());
            }
            super::links::dead(pid);
        }
    }
}

fn noproc() -> ETerm {
    ETerm::from(eetf::Atom::from("noproc"))
}

fn answer(from: ETerm, m: Incoming, reason: ETerm) {
    let ctrl = control(vec![
        tag(MONITOR_P_EXIT),
        from,
        ETerm::from(m.watcher),
        m.reference,
        reason,
    ]);
    queue(m.peer, &ctrl, &[]);
}

/// A local process ended with `reason` (in the external format): its
/// watchers and links on other nodes hear it.
pub fn exited(pid: Pid, reason: &[u8]) {
    let reason = ETerm::decode(reason).unwrap_or_else(|_| noproc());
    let list = incoming().remove(&pid);
    for m in list.unwrap_or_default() {
        answer(ETerm::from(super::conn::local_epid(pid)), m, reason.clone());
    }
    super::links::exited(pid, &reason);
    super::gl::exited(pid);
}
