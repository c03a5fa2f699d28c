//! The node table: the nodes that remote pids name, and this node's name.
//!
//! Invariant: the table is append-only, so an index stored in a remote
//! pid (`object::Kind::ExtPid`) names the same node (name and creation)
//! forever. A node that restarts comes back with another creation and so
//! gets a new entry: its old pids stay different from its new ones, as
//! in Erlang. Entry 0 is never used, so BEAM's `<0.X.Y>` stays local.

use super::Atom;
use std::sync::{Mutex, OnceLock, RwLock};

/// One node a remote pid can name.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct NodeEntry {
    pub name: Atom,
    pub creation: u32,
}

fn table() -> &'static RwLock<Vec<NodeEntry>> {
    static TABLE: OnceLock<RwLock<Vec<NodeEntry>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        RwLock::new(vec![NodeEntry {
            name: Atom::NONODE,
            creation: 0,
        }])
    })
}

/// The index of `(name, creation)`, added if new.
pub fn intern(name: Atom, creation: u32) -> u32 {
    let wanted = NodeEntry { name, creation };
    if let Some(i) = table()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .skip(1)
        .position(|e| *e == wanted)
    {
        return i as u32 + 1;
    }
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = t.iter().skip(1).position(|e| *e == wanted) {
        return i as u32 + 1;
    }
    t.push(wanted);
    t.len() as u32 - 1
}

/// The entry at `index` (an index taken from a remote pid always exists).
pub fn entry(index: u32) -> NodeEntry {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    t.get(index as usize).copied().unwrap_or(t[0])
}

/// This node's name and creation: `nonode@nohost` until the node is
/// started (`--sname`/`--name`), set once then.
#[derive(Clone, Copy, Debug)]
pub struct ThisNode {
    pub name: Atom,
    pub creation: u32,
}

fn this() -> &'static Mutex<ThisNode> {
    static THIS: OnceLock<Mutex<ThisNode>> = OnceLock::new();
    THIS.get_or_init(|| {
        Mutex::new(ThisNode {
            name: Atom::NONODE,
            creation: 0,
        })
    })
}

pub fn this_node() -> ThisNode {
    *this().lock().unwrap_or_else(|e| e.into_inner())
}

pub fn set_this_node(name: Atom, creation: u32) {
    *this().lock().unwrap_or_else(|e| e.into_inner()) = ThisNode { name, creation };
}
