//! Spawning across nodes: the spawn requests of the distribution
//! protocol (`SPAWN_REQUEST` / `SPAWN_REPLY`, OTP 23+), both ways.
//!
//! Outgoing (`spawn(Node, M, F, A)` and friends, stdlib/erts_dist.act):
//! the request goes out under a reference of the requester; the reply
//! (or the loss of the connection: `noconnection`) reaches the requester
//! as `{'$spawn_reply', Ref, ok | error, PidOrReason}`, after the link and
//! the monitor it set up are recorded (`links.rs`, `watch.rs`; the
//! monitor's reference is the request's).
//!
//! Incoming (`spawn/4`, `erpc:call`, `rpc:call` from another node): the
//! request is handed, with a token, to the spawner process
//! (`$dist_spawner`, stdlib/erts_dist.act), which spawns a child that
//! waits for a go, tells `spawned` its pid (the link and monitor are
//! recorded and the reply goes out), then lets it run. So the reply
//! always precedes anything the child's peer can hear of it, and the
//! child cannot end before its link and monitor exist. A request with
//! a spawn option act does not know is answered `badopt`, as BEAM does.

use super::conn::{control, local_epid, queue, tag};
use crate::runtime::nodes as rt;
use crate::sched::Pid;
use crate::sched::outside::Target;
use crate::term::{Atom, node};
use eetf::{Pid as EPid, Term as ETerm, Tuple};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

const SPAWN_REQUEST: i32 = 29;
const SPAWN_REPLY: i32 = 31;
/// Flags of a reply: a link, a monitor was set up.
const LINKED: i32 = 1;
const MONITORED: i32 = 2;
/// The `{Name, Value}` spawn options of BEAM that a spawn request may
/// carry and act accepts without acting on them; any other option is
/// answered `badopt`, as a BEAM node answers it.
const IGNORED: &[&str] = &[
    "priority",
    "fullsweep_after",
    "min_heap_size",
    "min_bin_vheap_size",
    "max_heap_size",
    "message_queue_data",
    "async_dist",
    "reply",
    "reply_tag",
];

/// A request this node sent, by reference id.
struct Sent {
    peer: Atom,
    requester: Pid,
}

/// A request a peer sent, waiting for the spawner, by token.
struct Asked {
    peer: Atom,
    req_id: ETerm,
    from: EPid,
    /// The requester's group leader.
    leader: Option<EPid>,
    link: bool,
    monitor: bool,
}

fn sent() -> MutexGuard<'static, HashMap<u64, Sent>> {
    static T: OnceLock<Mutex<HashMap<u64, Sent>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn asked() -> MutexGuard<'static, HashMap<u64, Asked>> {
    static T: OnceLock<Mutex<HashMap<u64, Asked>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

static TOKENS: AtomicU64 = AtomicU64::new(1);

fn atom(name: &str) -> ETerm {
    ETerm::from(eetf::Atom::from(name))
}

fn tuple(elements: Vec<ETerm>) -> ETerm {
    ETerm::from(Tuple { elements })
}

/// Hands `{'$spawn_reply', Ref, Status, What}` to the requester.
fn answer(requester: Pid, id: u64, status: &str, what: ETerm) {
    let reply = tuple(vec![
        atom("$spawn_reply"),
        super::watch::local_ref(id),
        atom(status),
        what,
    ]);
    if let Some(message) = super::watch::to_buffer(&reply) {
        rt::deliver(Target::Pid(requester), message);
    }
}

/// What a spawn asks for besides the process.
#[derive(Clone, Copy, Default)]
pub struct Options {
    pub link: bool,
    pub monitor: bool,
    /// No reply wanted (`erpc:cast`).
    pub noreply: bool,
}

/// Sends a spawn request for `m:f(Args)` (`args`: the argument list in
/// the external format, `arity` its length) to `peer`, as request `id`
/// of `requester`.
pub fn request(
    requester: Pid,
    peer: Atom,
    mfa: (Atom, Atom, u32),
    args: &[u8],
    options: Options,
    id: u64,
) {
    if !super::alive() || !super::conn::valid_name(peer) || peer == node::this_node().name {
        if !options.noreply {
            answer(requester, id, "error", atom("noconnection"));
        }
        return;
    }
    let mut opts = Vec::new();
    if options.link {
        opts.push(atom("link"));
    }
    if options.monitor {
        opts.push(atom("monitor"));
    }
    let me = ETerm::from(local_epid(requester));
    let ctrl = control(vec![
        tag(SPAWN_REQUEST),
        super::watch::local_ref(id),
        me,
        ETerm::from(super::gl::leader_for_request(requester)),
        tuple(vec![
            atom(mfa.0.name()),
            atom(mfa.1.name()),
            ETerm::from(eetf::FixInteger {
                value: mfa.2 as i32,
            }),
        ]),
        ETerm::from(eetf::List { elements: opts }),
    ]);
    if !options.noreply {
        sent().insert(id, Sent { peer, requester });
    }
    if !queue(peer, &ctrl, args) && sent().remove(&id).is_some() {
        answer(requester, id, "error", atom("noconnection"));
    }
}

/// `SPAWN_REPLY` {31, ReqId, To, Flags, Result} (or `_TT`, with a token
/// after the result) from `peer`.
pub fn reply(peer: Atom, elements: &[ETerm]) {
    let (Some(reference), Some(ETerm::FixInteger(flags)), Some(result)) =
        (elements.get(1), elements.get(3), elements.get(4))
    else {
        return;
    };
    let Some(id) = super::watch::local_ref_id(reference) else {
        return;
    };
    let Some(s) = sent().remove(&id) else {
        return;
    };
    match result {
        ETerm::Pid(pid) => {
            if flags.value & LINKED != 0 {
                super::links::record(s.requester, peer, pid.clone());
            }
            if flags.value & MONITORED != 0 {
                let index = node::intern(peer, pid.creation);
                let remote = pid.id as u64 | (pid.serial as u64) << 32;
                super::watch::add_outgoing(
                    id,
                    peer,
                    s.requester,
                    super::watch::Watched::Pid(index, remote),
                );
            }
            answer(s.requester, id, "ok", result.clone());
        }
        reason => answer(s.requester, id, "error", reason.clone()),
    }
}

/// `SPAWN_REQUEST` {29, ReqId, From, GroupLeader, {M, F, Arity}, Opts}
/// (or `_TT`, with a token last) from `peer`; `payload`: the arguments.
pub fn request_from(peer: Atom, elements: &[ETerm], payload: &[u8]) -> Result<(), String> {
    let (Some(req_id), Some(ETerm::Pid(from)), Some(ETerm::Tuple(mfa)), Some(opts)) = (
        elements.get(1),
        elements.get(2),
        elements.get(4),
        elements.get(5),
    ) else {
        return Err("bad SPAWN_REQUEST".into());
    };
    let (Some(ETerm::Atom(m)), Some(ETerm::Atom(f))) = (mfa.elements.first(), mfa.elements.get(1))
    else {
        return Err("bad SPAWN_REQUEST".into());
    };
    let args = ETerm::decode(payload).map_err(|e| format!("bad spawn arguments: {e}"))?;
    let mut link = false;
    let mut monitor = false;
    let options: &[ETerm] = match opts {
        ETerm::List(list) => &list.elements,
        _ => &[],
    };
    for o in options {
        match o {
            ETerm::Atom(a) if a.name == "link" => link = true,
            ETerm::Atom(a) if a.name == "monitor" => monitor = true,
            ETerm::Tuple(t) if matches!(t.elements.first(), Some(ETerm::Atom(a)) if a.name == "monitor") => {
                monitor = true
            }
            // Options of BEAM's spawn_opt that act takes and ignores (it
            // has no priorities or heap tuning of its own).
            ETerm::Tuple(t)
                if t.elements.len() == 2
                    && matches!(t.elements.first(), Some(ETerm::Atom(a)) if IGNORED.contains(&a.name.as_str())) =>
                {}
            // Anything else is refused as BEAM refuses it.
            _ => {
                reply_error(peer, req_id, from, "badopt");
                return Ok(());
            }
        }
    }
    let token = TOKENS.fetch_add(1, Ordering::Relaxed);
    let message = tuple(vec![
        atom("$spawn_request"),
        ETerm::from(eetf::FixInteger {
            value: (token & 0x7fff_ffff) as i32,
        }),
        ETerm::from(m.clone()),
        ETerm::from(f.clone()),
        args,
    ]);
    let Some(message) = super::watch::to_buffer(&message) else {
        reply_error(peer, req_id, from, "badarg");
        return Ok(());
    };
    asked().insert(
        token & 0x7fff_ffff,
        Asked {
            peer,
            req_id: req_id.clone(),
            from: from.clone(),
            leader: match elements.get(3) {
                Some(ETerm::Pid(gl)) => Some(gl.clone()),
                _ => None,
            },
            link,
            monitor,
        },
    );
    rt::deliver(Target::Name(Atom::intern("$dist_spawner")), message);
    Ok(())
}

fn reply_error(peer: Atom, req_id: &ETerm, from: &EPid, reason: &str) {
    let ctrl = control(vec![
        tag(SPAWN_REPLY),
        req_id.clone(),
        ETerm::from(from.clone()),
        ETerm::from(eetf::FixInteger { value: 0 }),
        atom(reason),
    ]);
    queue(peer, &ctrl, &[]);
}

/// The spawner made `child` (waiting for its go) for request `token`:
/// its link and monitor are recorded and the reply goes out. `None`
/// (the spawn failed): the reply says `system_limit`.
pub fn spawned(token: u64, child: Option<Pid>) {
    let Some(a) = asked().remove(&token) else {
        return;
    };
    let Some(child) = child else {
        reply_error(a.peer, &a.req_id, &a.from, "system_limit");
        return;
    };
    if let Some(leader) = a.leader {
        super::gl::set_external(child, leader);
    }
    let mut flags = 0;
    if a.link {
        super::links::record(child, a.peer, a.from.clone());
        flags |= LINKED;
    }
    if a.monitor {
        super::watch::add_incoming(child, a.peer, a.from.clone(), a.req_id.clone());
        flags |= MONITORED;
    }
    let ctrl = control(vec![
        tag(SPAWN_REPLY),
        a.req_id,
        ETerm::from(a.from),
        ETerm::from(eetf::FixInteger { value: flags }),
        ETerm::from(local_epid(child)),
    ]);
    queue(a.peer, &ctrl, &[]);
}

/// The connection to `peer` is gone: its requests waiting here are
/// dropped, and ours to it fail with `noconnection`.
pub fn node_down(peer: Atom) {
    asked().retain(|_, a| a.peer != peer);
    let failed: Vec<(u64, Pid)> = {
        let mut t = sent();
        let ids: Vec<u64> = t
            .iter()
            .filter(|(_, s)| s.peer == peer)
            .map(|(&id, _)| id)
            .collect();
        ids.into_iter()
            .filter_map(|id| t.remove(&id).map(|s| (id, s.requester)))
            .collect()
    };
    for (id, requester) in failed {
        answer(requester, id, "error", atom("noconnection"));
    }
}
