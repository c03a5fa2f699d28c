//! Process aliases (`alias/0,1`, `unalias/1`, `monitor/3`'s `{alias, _}`):
//! which process each active alias reference belongs to, so that a send
//! to the reference reaches its owner.
//!
//! The owner decides whether a message sent through an alias is taken:
//! it keeps its active aliases and their modes itself
//! (`runtime::processes`), and drops what arrives through one it has
//! deactivated, as BEAM does, so a reply that races a deactivation is
//! lost however the schedulers interleave. This table only routes: it
//! holds an entry from the alias's creation until its owner deactivates
//! it or exits, and a send through a reference with no entry is dropped.
//!
//! Invariant: only the owner adds or removes its entries.

use crate::sched::Pid;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// When an alias stops working, besides `unalias/1` (BEAM's modes).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Only `unalias/1` ends it (`alias()`, `{alias, explicit_unalias}`).
    Explicit,
    /// The first message through it ends it (`alias([reply])`).
    Reply,
    /// Its monitor's end ends it: `demonitor/1,2` or the 'DOWN'.
    Demonitor,
    /// Either of the two above, and the first message also removes the
    /// monitor.
    ReplyDemonitor,
}

const SHARDS: usize = 16;

struct Table {
    shards: [Mutex<HashMap<u64, Pid>>; SHARDS],
    /// Entries in all shards: a send finds none without taking a lock.
    live: AtomicUsize,
}

fn table() -> &'static Table {
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| Table {
        shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        live: AtomicUsize::new(0),
    })
}

fn shard(id: u64) -> &'static Mutex<HashMap<u64, Pid>> {
    &table().shards[(id as usize) % SHARDS]
}

/// `owner` made the alias `id`.
pub fn add(id: u64, owner: Pid) {
    let mut s = shard(id).lock().unwrap_or_else(|e| e.into_inner());
    if s.insert(id, owner).is_none() {
        table().live.fetch_add(1, Ordering::Relaxed);
    }
}

/// The alias `id` is no longer active (its owner says so).
pub fn remove(id: u64) {
    let mut s = shard(id).lock().unwrap_or_else(|e| e.into_inner());
    if s.remove(&id).is_some() {
        table().live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The process a send to the reference `id` goes to, if it is an alias.
pub fn owner(id: u64) -> Option<Pid> {
    if table().live.load(Ordering::Relaxed) == 0 {
        return None;
    }
    shard(id)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .copied()
}
