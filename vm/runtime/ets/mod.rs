//! ets: tables of tuples that every process can reach, owned by one
//! process and deleted when it exits (or handed to its heir).
//!
//! Invariants:
//! - A table keeps its own storage (`store`): objects are copied in when
//!   written and out when read, as BEAM does; no process heap ever points
//!   into a table, and a table never points into a process heap.
//! - The registry is read-mostly and sharded: finding a table takes a read
//!   lock on one shard (by id or by name), then the table's own `RwLock`
//!   guards its objects. Reads of different tables share no lock.
//! - The owner of a table is recorded both in the table and in the
//!   `owners` shard of its pid, so a process that exits finds its tables
//!   without a scan; a process that owns none pays one atomic load.
//!
//! The BIFs live in `bif::ets`; match specifications in `matchspec`.

/// An interned atom, looked up once per call site (interning takes a
/// lock; the hot BIFs must not).
macro_rules! atom {
    ($name:literal) => {{
        static A: std::sync::OnceLock<$crate::term::Atom> = std::sync::OnceLock::new();
        *A.get_or_init(|| $crate::term::Atom::intern($name))
    }};
}
pub(crate) use atom;

pub mod hash;
pub mod matchspec;
pub mod store;

use crate::heap::{Heap, MessageBuffer};
use crate::sched::Pid;
use crate::term::{Atom, Term, View};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
pub use store::{Kind, Store};

/// Who may do what with a table.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Protection {
    Public,
    Protected,
    Private,
}

/// The options `ets:new` accepts but act does not act on (its tables
/// are always safe for concurrent use); `info` reports them back.
#[derive(Clone, Copy, Default, Debug)]
pub struct Tuning {
    pub read_concurrency: bool,
    pub write_concurrency: bool,
    pub decentralized_counters: bool,
    pub compressed: bool,
}

pub struct Table {
    /// The reference id of the table (`#Ref<...>`).
    pub id: u64,
    name: AtomicU32,
    pub named: bool,
    pub kind: Kind,
    /// 1-based.
    pub keypos: usize,
    pub protection: Protection,
    pub tuning: Tuning,
    owner: AtomicU64,
    /// `{heir, Pid, Data}`: who inherits the table when its owner exits.
    heir: Mutex<Option<(Pid, MessageBuffer)>>,
    alive: AtomicBool,
    pub store: RwLock<Store>,
}

impl Table {
    pub fn name(&self) -> Atom {
        Atom(self.name.load(Ordering::Relaxed))
    }

    pub fn owner(&self) -> Pid {
        Pid::from_id(self.owner.load(Ordering::Acquire))
    }

    pub fn heir(&self) -> Option<Pid> {
        lock(&self.heir).as_ref().map(|(p, _)| *p)
    }

    pub fn set_heir(&self, heir: Option<(Pid, MessageBuffer)>) {
        *lock(&self.heir) = heir;
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// May `pid` read the table?
    #[inline]
    pub fn can_read(&self, pid: impl FnOnce() -> Pid) -> bool {
        self.protection != Protection::Private || pid() == self.owner()
    }

    /// May `pid` write it?
    #[inline]
    pub fn can_write(&self, pid: impl FnOnce() -> Pid) -> bool {
        self.protection == Protection::Public || pid() == self.owner()
    }

    pub fn read(&self) -> std::sync::RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write(&self) -> std::sync::RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const SHARDS: usize = 32;

struct Registry {
    by_id: [RwLock<HashMap<u64, Arc<Table>>>; SHARDS],
    by_name: [RwLock<HashMap<Atom, Arc<Table>>>; SHARDS],
    /// Owner pid id -> ids of the tables it owns.
    owners: [Mutex<HashMap<u64, Vec<u64>>>; SHARDS],
    /// Tables alive; while 0, an exiting process skips the owner lookup.
    count: AtomicUsize,
    /// Ids of deleted tables: `info` answers `undefined` for them, but
    /// `badarg` for a reference that never was a table (as OTP, whose
    /// table ids are references of their own kind).
    deleted: Mutex<std::collections::HashSet<u64>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        by_id: std::array::from_fn(|_| RwLock::new(HashMap::new())),
        by_name: std::array::from_fn(|_| RwLock::new(HashMap::new())),
        owners: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        count: AtomicUsize::new(0),
        deleted: Mutex::new(std::collections::HashSet::new()),
    })
}

#[inline]
fn shard(x: u64) -> usize {
    (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 59) as usize % SHARDS
}

/// What `ets:new` was asked for.
pub struct Spec {
    pub name: Atom,
    pub named: bool,
    pub kind: Kind,
    pub keypos: usize,
    pub protection: Protection,
    pub tuning: Tuning,
    pub heir: Option<(Pid, MessageBuffer)>,
}

/// Creates a table owned by `owner` with reference id `id`; `None` if
/// it is named and the name is taken.
pub fn create(spec: Spec, id: u64, owner: Pid) -> Option<Arc<Table>> {
    let r = registry();
    let table = Arc::new(Table {
        id,
        name: AtomicU32::new(spec.name.0),
        named: spec.named,
        kind: spec.kind,
        keypos: spec.keypos,
        protection: spec.protection,
        tuning: spec.tuning,
        owner: AtomicU64::new(owner.id()),
        heir: Mutex::new(spec.heir),
        alive: AtomicBool::new(true),
        store: RwLock::new(Store::new(spec.kind, spec.keypos)),
    });
    if spec.named {
        let mut names = r.by_name[shard(spec.name.0 as u64)]
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if names.contains_key(&spec.name) {
            return None;
        }
        names.insert(spec.name, table.clone());
    }
    r.by_id[shard(id)]
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, table.clone());
    lock(&r.owners[shard(owner.id())])
        .entry(owner.id())
        .or_default()
        .push(id);
    r.count.fetch_add(1, Ordering::Release);
    Some(table)
}

/// The table a term names: its reference, or its name if it is named.
#[inline]
pub fn resolve(heap: &Heap, t: Term) -> Option<Arc<Table>> {
    let key = if let Some(name) = t.as_atom() {
        Recent::Name(name)
    } else if t.is_boxed() {
        match heap.view(t) {
            View::Ref(id) => Recent::Id(id),
            _ => return None,
        }
    } else {
        return None;
    };
    // A loop over one table names it call after call: the thread keeps
    // the last table it found, and takes it again while it is alive and
    // still has that name (a deleted or renamed table goes the long way).
    let cached = RECENT.with_borrow(|recent| match recent {
        Some((k, table)) if *k == key && table.is_alive() => match key {
            Recent::Name(name) if table.name() != name => None,
            _ => Some(table.clone()),
        },
        _ => None,
    });
    if cached.is_some() {
        return cached;
    }
    let r = registry();
    let found = match key {
        Recent::Name(name) => r.by_name[shard(name.0 as u64)]
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&name)
            .cloned(),
        Recent::Id(id) => r.by_id[shard(id)]
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned(),
    }?;
    RECENT.with_borrow_mut(|recent| *recent = Some((key, found.clone())));
    Some(found)
}

/// How a table was named to `resolve`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recent {
    Name(Atom),
    Id(u64),
}

thread_local! {
    /// The table this thread found last (see `resolve`). A deleted
    /// table's objects are freed at once (`delete`); only its empty
    /// shell stays here until the thread looks up another table.
    static RECENT: std::cell::RefCell<Option<(Recent, Arc<Table>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The table named `name` (`ets:whereis`).
pub fn by_name(name: Atom) -> Option<Arc<Table>> {
    registry().by_name[shard(name.0 as u64)]
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)
        .cloned()
}

/// Every table (`ets:all`), oldest first.
pub fn all() -> Vec<Arc<Table>> {
    let mut tables: Vec<Arc<Table>> = registry()
        .by_id
        .iter()
        .flat_map(|s| {
            s.read()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    tables.sort_by_key(|t| t.id);
    tables
}

/// Deletes a table: it disappears from the registry and its objects are
/// freed (a process still inside an operation on it finishes first).
pub fn delete(table: &Table) {
    if !table.alive.swap(false, Ordering::AcqRel) {
        return;
    }
    let r = registry();
    r.by_id[shard(table.id)]
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&table.id);
    if table.named {
        let name = table.name();
        let mut names = r.by_name[shard(name.0 as u64)]
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if names.get(&name).is_some_and(|t| t.id == table.id) {
            names.remove(&name);
        }
    }
    let owner = table.owner.load(Ordering::Acquire);
    if let Some(ids) = lock(&r.owners[shard(owner)]).get_mut(&owner) {
        ids.retain(|&i| i != table.id);
    }
    r.count.fetch_sub(1, Ordering::Release);
    lock(&r.deleted).insert(table.id);
    table.write().clear();
    table.set_heir(None);
}

/// Whether reference `id` named a table that has been deleted.
pub fn was_table(id: u64) -> bool {
    lock(&registry().deleted).contains(&id)
}

/// Renames a table; `false` if it is named and `name` is taken.
pub fn rename(table: &Table, name: Atom) -> bool {
    if table.named {
        let r = registry();
        let old = table.name();
        if old == name {
            return true;
        }
        // Both shards, in a fixed order so two renames cannot deadlock.
        let (a, b) = (shard(old.0 as u64), shard(name.0 as u64));
        if a == b {
            let mut names = r.by_name[a].write().unwrap_or_else(|e| e.into_inner());
            if names.contains_key(&name) {
                return false;
            }
            if let Some(t) = names.remove(&old) {
                names.insert(name, t);
            }
        } else {
            let (first, second) = if a < b { (a, b) } else { (b, a) };
            let mut g1 = r.by_name[first].write().unwrap_or_else(|e| e.into_inner());
            let mut g2 = r.by_name[second].write().unwrap_or_else(|e| e.into_inner());
            let (olds, news) = if a < b {
                (&mut g1, &mut g2)
            } else {
                (&mut g2, &mut g1)
            };
            if news.contains_key(&name) {
                return false;
            }
            if let Some(t) = olds.remove(&old) {
                news.insert(name, t);
            }
        }
    }
    table.name.store(name.0, Ordering::Relaxed);
    true
}

/// Makes `to` the owner of `table`.
pub fn transfer(table: &Table, to: Pid) {
    let r = registry();
    let from = table.owner.swap(to.id(), Ordering::AcqRel);
    if let Some(ids) = lock(&r.owners[shard(from)]).get_mut(&from) {
        ids.retain(|&i| i != table.id);
    }
    lock(&r.owners[shard(to.id())])
        .entry(to.id())
        .or_default()
        .push(table.id);
}

/// The message an heir or a new owner gets:
/// `{'ETS-TRANSFER', Tab, FromPid, Data}`, `Tab` as `ets:new` returned it.
pub fn transfer_message(table: &Table, from: Pid, data: &MessageBuffer) -> Option<MessageBuffer> {
    let mut scratch = Heap::new();
    let data_heap = store::heap_of(data);
    let words = crate::heap::size_of(data_heap, data.term()).ok()?;
    scratch
        .grow_unrooted(words + crate::heap::REF_WORDS + 5)
        .ok()?;
    let tab = table_term(&mut scratch, table);
    let data = crate::heap::copy_term(data_heap, data.term(), &mut scratch);
    let message = scratch.tuple(&[Term::atom(atom!("ETS-TRANSFER")), tab, from.to_term(), data]);
    MessageBuffer::copy_from(&scratch, message).ok()
}

/// The term that names `table` as `ets:new` returned it (room for
/// `REF_WORDS` ensured).
pub fn table_term(heap: &mut Heap, table: &Table) -> Term {
    if table.named {
        Term::atom(table.name())
    } else {
        heap.reference(table.id)
    }
}

/// A process exited: its tables go to their heirs (when alive) or are
/// deleted. Returns the `'ETS-TRANSFER'` messages to send to the heirs.
pub fn owner_exited(pid: Pid, alive: impl Fn(Pid) -> bool) -> Vec<(Pid, MessageBuffer)> {
    let r = registry();
    if r.count.load(Ordering::Acquire) == 0 {
        return Vec::new();
    }
    let Some(ids) = lock(&r.owners[shard(pid.id())]).remove(&pid.id()) else {
        return Vec::new();
    };
    let mut messages = Vec::new();
    for id in ids {
        let Some(table) = r.by_id[shard(id)]
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
        else {
            continue;
        };
        // `transfer` books the table under its new owner; the entry for
        // `pid` is gone already, so record the owner first.
        table.owner.store(pid.id(), Ordering::Release);
        // The heir stays the heir after inheriting, as in OTP.
        let heir = lock(&table.heir)
            .as_ref()
            .map(|(heir, data)| (*heir, transfer_message(&table, pid, data)));
        match heir {
            Some((heir, message)) if heir != pid && alive(heir) => {
                transfer(&table, heir);
                if let Some(m) = message {
                    messages.push((heir, m));
                }
            }
            _ => delete(&table),
        }
    }
    messages
}
