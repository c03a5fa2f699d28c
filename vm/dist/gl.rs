//! Group leaders on other nodes, as Erlang keeps them: a process spawned
//! here by another node's spawn request (`spawn/4`, `erpc`, `rpc`'s rex)
//! has the requester's group leader, so what it prints is written on
//! the requester's node; and a process of another node spawned from here
//! has this node's group leader, whose io requests are answered here.
//!
//! act has one io server, the runtime, named by a pid no process holds
//! (`bif::fmt::GROUP_LEADER_SLOT`). Only processes whose group leader is
//! on another node are recorded, by local pid; their children inherit
//! it (`inherit`), and their exit takes the entry out (`exited`).
//!
//! Output of such a process becomes an io request to its group leader,
//! `{io_request, Self, '$act_io', {put_chars, unicode, Binary}}`, sent
//! without waiting for the reply: the request travels on the same
//! connection as anything the process sends afterwards, and the peer's
//! group leader writes such a request (`own_put_chars`) on the thread
//! that reads the connection, before it delivers anything that came
//! after it, so the text comes out before whatever the process's later
//! messages (or its exit) cause there. The replies
//! (`{io_reply, '$act_io', _}`) are dropped when they arrive.
//!
//! Io requests that other nodes' processes send to this node's group
//! leader go to the `'$dist_io'` process (stdlib/erts_dist.act).

use super::conn::{control, local_epid, queue, tag};
use crate::sched::Pid;
use crate::term::{Atom, node};
use eetf::{Pid as EPid, Term as ETerm, Tuple};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The reply tag of the io requests sent from here.
const REPLY_AS: &[u8] = b"$act_io";

/// Set once some process has a group leader on another node.
static ANY: AtomicBool = AtomicBool::new(false);

fn leaders() -> MutexGuard<'static, HashMap<Pid, EPid>> {
    static T: OnceLock<Mutex<HashMap<Pid, EPid>>> = OnceLock::new();
    T.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Whether any process has a group leader on another node (one load).
#[inline]
pub fn any() -> bool {
    ANY.load(Ordering::Relaxed)
}

/// The pid that names this node's group leader.
pub(super) fn local_leader() -> Pid {
    Pid::from_id(crate::bif::fmt::GROUP_LEADER_SLOT)
}

/// The group leader spawn requests from `pid` name: its own on another
/// node, else this node's.
pub(super) fn leader_for_request(pid: Pid) -> EPid {
    if any()
        && let Some(gl) = leaders().get(&pid)
    {
        return gl.clone();
    }
    local_epid(local_leader())
}

/// Records `leader` (a pid of another node) as `pid`'s group leader.
pub(super) fn set_external(pid: Pid, leader: EPid) {
    if leader.node.name == node::this_node().name.name() {
        leaders().remove(&pid);
        return;
    }
    ANY.store(true, Ordering::SeqCst);
    super::watch::note_watched();
    leaders().insert(pid, leader);
}

/// `group_leader(Leader, Pid)`: `leader` a pid of another node (its
/// node-table index and id), or `None` for a local one.
pub fn set(pid: Pid, leader: Option<(u32, u64)>) {
    match leader {
        Some((index, id)) => {
            let entry = node::entry(index);
            let epid = EPid::new(
                entry.name.name(),
                id as u32,
                (id >> 32) as u32,
                entry.creation,
            );
            set_external(pid, epid);
        }
        None => {
            if any() {
                leaders().remove(&pid);
            }
        }
    }
}

/// `pid`'s group leader when it is on another node: its node-table index
/// and id.
pub fn of(pid: Pid) -> Option<(u32, u64)> {
    if !any() {
        return None;
    }
    let gl = leaders().get(&pid)?.clone();
    let name = Atom::try_intern(&gl.node.name)?;
    let index = node::intern(name, gl.creation);
    Some((index, gl.id as u64 | (gl.serial as u64) << 32))
}

/// A process spawned by `parent` gets its group leader.
pub fn inherit(parent: Pid, child: Pid) {
    if !any() {
        return;
    }
    let mut t = leaders();
    if let Some(gl) = t.get(&parent).cloned() {
        t.insert(child, gl);
    }
}

/// `pid` ended.
pub(super) fn exited(pid: Pid) {
    if any() {
        leaders().remove(&pid);
    }
}

/// Output of `me` to its group leader: sent there as an io request when
/// that is on another node (true), else left to the caller (false).
pub fn put_chars(me: Pid, text: &str) -> bool {
    if !any() {
        return false;
    }
    let Some(gl) = leaders().get(&me).cloned() else {
        return false;
    };
    put_chars_to(me, gl, text);
    true
}

/// Output of `me` to the pid `(index, id)` of another node, as an io
/// request.
pub fn put_chars_at(me: Pid, index: u32, id: u64, text: &str) {
    let entry = node::entry(index);
    let epid = EPid::new(
        entry.name.name(),
        id as u32,
        (id >> 32) as u32,
        entry.creation,
    );
    put_chars_to(me, epid, text);
}

fn put_chars_to(me: Pid, gl: EPid, text: &str) {
    let Some(peer) = Atom::try_intern(&gl.node.name) else {
        return;
    };
    let atom = |name: &str| ETerm::from(eetf::Atom::from(name));
    let request = ETerm::from(Tuple {
        elements: vec![
            atom("io_request"),
            ETerm::from(local_epid(me)),
            atom("$act_io"),
            ETerm::from(Tuple {
                elements: vec![
                    atom("put_chars"),
                    atom("unicode"),
                    ETerm::from(eetf::Binary::from(text.as_bytes())),
                ],
            }),
        ],
    });
    let mut payload = Vec::with_capacity(text.len() + 64);
    if request.encode(&mut payload).is_err() {
        return;
    }
    let ctrl = control(vec![tag(2), atom(""), ETerm::from(gl)]);
    queue(peer, &ctrl, &payload);
}

/// The text of `payload` when it is an io request as an act node sends
/// one (`{io_request, _, '$act_io', {put_chars, unicode, Binary}}`),
/// whose sender does not wait for the reply.
pub(super) fn own_put_chars(payload: &[u8]) -> Option<String> {
    let ETerm::Tuple(t) = ETerm::decode(payload).ok()? else {
        return None;
    };
    let [ETerm::Atom(io), _, ETerm::Atom(reply_as), ETerm::Tuple(req)] = t.elements.as_slice()
    else {
        return None;
    };
    if io.name != "io_request" || reply_as.name.as_bytes() != REPLY_AS {
        return None;
    }
    let [ETerm::Atom(put), ETerm::Atom(enc), ETerm::Binary(b)] = req.elements.as_slice() else {
        return None;
    };
    if put.name != "put_chars" || enc.name != "unicode" {
        return None;
    }
    String::from_utf8(b.bytes.clone()).ok()
}

/// Whether `payload` is the reply to an io request sent from here
/// (`{io_reply, '$act_io', _}`), which nobody waits for.
pub(super) fn is_own_reply(payload: &[u8]) -> bool {
    const HEAD: &[u8] = &[131, 104, 3, 119, 8];
    let Some(rest) = payload.strip_prefix(HEAD) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix(b"io_reply".as_slice()) else {
        return false;
    };
    let Some(rest) = rest.strip_prefix([119, REPLY_AS.len() as u8].as_slice()) else {
        return false;
    };
    rest.starts_with(REPLY_AS)
}
