//! The process table: a sharded slab from pid to process cell, read
//! without a lock, and the registered names.
//!
//! # Invariants
//!
//! - A pid is (slot, generation). Slot `s` lives in shard `s % SHARDS` at
//!   index `s / SHARDS`. A slot's generation goes up by one each time it is
//!   freed, so a lookup with a dead pid's generation finds nothing: a dead
//!   pid never reaches a new process (until the 29-bit generation wraps).
//! - A slot holds the pid of its process (or, once freed, that pid with
//!   `FREE` set, which no pid equals) and the table's `Arc` reference to the
//!   cell as a raw pointer (null when free). Slots live in segments that
//!   are allocated once and never move, so a reader needs no lock: it loads
//!   the pointer and checks the cell's pid.
//! - A reader that dereferences a slot's pointer holds an epoch `Guard` of
//!   the table's collector; `remove` nulls the slot and *defers* dropping
//!   the table's reference until every guard pinned before is gone. So a
//!   pointer read under a guard stays valid while the guard lives.
//! - Inserting and freeing (the free lists) take the shard's mutex; lookups,
//!   `is_alive` and sends never do. Spawners on different schedulers use
//!   different shards.
//! - `alive` counts the cells in the table; spawning past `max_processes`
//!   fails with `SystemLimit` and changes nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use crossbeam_epoch::{Collector, Guard, LocalHandle};

use super::ProcessBody;
use super::cell::ProcessCell;
use super::pid::{GENERATION_BITS, Pid, SLOT_BITS};
use crate::term::atom::Atom;

/// Shards of the table (a power of two).
pub const SHARDS: usize = 64;
/// Slots in a shard's first segment; segment `k` holds `FIRST_SEGMENT << k`.
const FIRST_SEGMENT: usize = 64;
/// Enough segments for the 2^32 / SHARDS slots a shard can have.
const SEGMENTS: usize = 22;
/// Marks a slot's pid word as free (pids use 61 bits).
const FREE: u64 = 1 << 63;

/// The process limit (`--max-processes`) or the address space ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemLimit;

struct Slot<B: ProcessBody> {
    /// The pid of the process here, or the last one's with `FREE` set.
    pid: AtomicU64,
    /// `Arc::into_raw` of the table's reference, or null.
    cell: AtomicPtr<ProcessCell<B>>,
}

/// Which slots of a shard are in use; only under the shard's mutex.
struct FreeList {
    /// Slots ever used in this shard: indices `0..used`.
    used: usize,
    /// Freed indices, reused last-in first-out (deterministic on one thread).
    free: Vec<u32>,
}

struct Shard<B: ProcessBody> {
    segments: [OnceLock<Box<[Slot<B>]>>; SEGMENTS],
    free_list: Mutex<FreeList>,
}

impl<B: ProcessBody> Shard<B> {
    /// The slot at `index`, if its segment exists.
    fn slot(&self, index: usize) -> Option<&Slot<B>> {
        let (segment, offset) = locate(index)?;
        self.segments[segment].get()?.get(offset)
    }

    /// The slot at `index`, allocating its segment on first use.
    fn slot_or_new(&self, index: usize) -> Option<&Slot<B>> {
        let (segment, offset) = locate(index)?;
        let slots = self.segments[segment].get_or_init(|| {
            (0..FIRST_SEGMENT << segment)
                .map(|_| Slot {
                    pid: AtomicU64::new(FREE),
                    cell: AtomicPtr::new(std::ptr::null_mut()),
                })
                .collect()
        });
        slots.get(offset)
    }
}

/// Segment `k` holds indices `FIRST_SEGMENT * (2^k - 1) ..` up to the next
/// segment's start: (segment, offset) of an index.
fn locate(index: usize) -> Option<(usize, usize)> {
    let n = index / FIRST_SEGMENT + 1;
    let segment = (usize::BITS - 1 - n.leading_zeros()) as usize;
    let start = FIRST_SEGMENT * ((1 << segment) - 1);
    (segment < SEGMENTS).then_some((segment, index - start))
}

/// A cell found by a lookup, valid while the guard it was found under lives.
pub struct Found<'g, B: ProcessBody> {
    cell: &'g ProcessCell<B>,
}

impl<'g, B: ProcessBody> Found<'g, B> {
    pub fn cell(&self) -> &'g ProcessCell<B> {
        self.cell
    }

    /// A counted reference, to queue the process.
    pub fn to_arc(&self) -> Arc<ProcessCell<B>> {
        let raw: *const ProcessCell<B> = self.cell;
        // SAFETY: `cell` came from a slot's pointer, which is the table's
        // `Arc::into_raw` reference, read under a guard that is still alive;
        // that reference is dropped only after the guard goes (module
        // invariant), so the count is at least one here.
        unsafe {
            Arc::increment_strong_count(raw);
            Arc::from_raw(raw)
        }
    }
}

pub struct ProcessTable<B: ProcessBody> {
    shards: Box<[Shard<B>]>,
    /// Defers dropping removed cells past every reader (module invariants).
    collector: Collector,
    alive: AtomicUsize,
    peak_alive: AtomicUsize,
    max_processes: usize,
    names: RwLock<HashMap<Atom, Pid>>,
}

impl<B: ProcessBody> ProcessTable<B> {
    /// An empty table; `max_processes` of `usize::MAX` means no limit.
    pub fn new(max_processes: usize) -> ProcessTable<B> {
        let shards = (0..SHARDS)
            .map(|_| Shard {
                segments: std::array::from_fn(|_| OnceLock::new()),
                free_list: Mutex::new(FreeList {
                    used: 0,
                    free: Vec::new(),
                }),
            })
            .collect();
        ProcessTable {
            shards,
            collector: Collector::new(),
            alive: AtomicUsize::new(0),
            peak_alive: AtomicUsize::new(0),
            max_processes,
            names: RwLock::new(HashMap::new()),
        }
    }

    /// A handle for one thread to pin guards with (each scheduler keeps one).
    pub fn register_reader(&self) -> LocalHandle {
        self.collector.register()
    }

    /// Allocates a pid in shard `hint % SHARDS` and stores the cell `make`
    /// builds for it. The cell is returned runnable: the caller queues it.
    pub fn insert(
        &self,
        hint: usize,
        make: impl FnOnce(Pid) -> B,
    ) -> Result<Arc<ProcessCell<B>>, SystemLimit> {
        let count = self.alive.fetch_add(1, Ordering::Relaxed) + 1;
        if count > self.max_processes {
            self.alive.fetch_sub(1, Ordering::Relaxed);
            return Err(SystemLimit);
        }
        if count > self.peak_alive.load(Ordering::Relaxed) {
            self.peak_alive.fetch_max(count, Ordering::Relaxed);
        }
        let shard_index = hint % SHARDS;
        let shard = &self.shards[shard_index];
        let mut free_list = shard.free_list.lock().unwrap_or_else(|e| e.into_inner());
        let (index, reused) = match free_list.free.pop() {
            Some(i) => (i as usize, true),
            None => (free_list.used, false),
        };
        let slot_number = index * SHARDS + shard_index;
        let slot = if slot_number < 1 << SLOT_BITS {
            shard.slot_or_new(index)
        } else {
            None
        };
        let Some(slot) = slot else {
            if reused {
                free_list.free.push(index as u32);
            }
            drop(free_list);
            self.alive.fetch_sub(1, Ordering::Relaxed);
            return Err(SystemLimit);
        };
        if !reused {
            free_list.used += 1;
        }
        // A freed slot keeps its last pid: the new one is a generation on.
        let last = slot.pid.load(Ordering::Relaxed);
        let generation = if reused {
            (Pid::from_id(last & !FREE).generation() + 1) & ((1 << GENERATION_BITS) - 1)
        } else {
            0
        };
        let pid = Pid::new(slot_number as u32, generation);
        let cell = Arc::new(ProcessCell::new(pid, make(pid)));
        // The cell first, then the pid that makes it findable (`is_alive`).
        slot.cell.store(
            Arc::into_raw(Arc::clone(&cell)).cast_mut(),
            Ordering::Release,
        );
        slot.pid.store(pid.id(), Ordering::Release);
        Ok(cell)
    }

    /// The live process a pid names, found without a lock; valid while
    /// `guard` (pinned from this table's `register_reader`) lives.
    pub fn lookup<'g>(&self, pid: Pid, guard: &'g Guard) -> Option<Found<'g, B>> {
        debug_assert!(
            guard.collector() == Some(&self.collector),
            "a guard of another collector does not protect this table"
        );
        let slot_number = pid.slot() as usize;
        let slot = self.shards[slot_number % SHARDS].slot(slot_number / SHARDS)?;
        let raw = slot.cell.load(Ordering::Acquire);
        if raw.is_null() {
            return None;
        }
        // SAFETY: a non-null slot pointer is the table's reference, published
        // with release after the cell was built; `remove` defers dropping it
        // past every guard pinned now, and `guard` is one (module invariant).
        let cell: &'g ProcessCell<B> = unsafe { &*raw };
        (cell.pid() == pid).then_some(Found { cell })
    }

    /// The live process a pid names, as a counted reference. Pins a guard
    /// of its own (slower than `lookup`: for tests and rare paths).
    pub fn get(&self, pid: Pid) -> Option<Arc<ProcessCell<B>>> {
        let handle = self.register_reader();
        let guard = handle.pin();
        self.lookup(pid, &guard).map(|found| found.to_arc())
    }

    /// Whether a pid names a live process (a snapshot; no guard needed: it
    /// reads only the slot's pid word).
    pub fn is_alive(&self, pid: Pid) -> bool {
        let slot_number = pid.slot() as usize;
        self.shards[slot_number % SHARDS]
            .slot(slot_number / SHARDS)
            .is_some_and(|slot| slot.pid.load(Ordering::Acquire) == pid.id())
    }

    /// Removes an exited process; its pid is dead from now on. The table's
    /// reference is dropped once no reader pinned before can hold it.
    /// Returns whether the pid named a process in the table.
    pub fn remove_in(&self, pid: Pid, guard: &Guard) -> bool {
        let slot_number = pid.slot() as usize;
        let shard = &self.shards[slot_number % SHARDS];
        let index = slot_number / SHARDS;
        let mut free_list = shard.free_list.lock().unwrap_or_else(|e| e.into_inner());
        let Some(slot) = shard.slot(index) else {
            return false;
        };
        if slot.pid.load(Ordering::Relaxed) != pid.id() {
            return false;
        }
        slot.pid.store(pid.id() | FREE, Ordering::Release);
        let raw = slot.cell.swap(std::ptr::null_mut(), Ordering::AcqRel);
        free_list.free.push(index as u32);
        drop(free_list);
        self.alive.fetch_sub(1, Ordering::Relaxed);
        if !raw.is_null() {
            let reference = TableReference(raw);
            // SAFETY: `raw` is the table's `Arc::into_raw` reference, now
            // unreachable from the slot; readers that loaded it before hold
            // guards pinned before this point, which the collector waits for.
            // The cell is `Send + Sync`, so it may be dropped on any thread.
            unsafe { guard.defer_unchecked(move || drop(reference)) };
        }
        true
    }

    /// `remove_in` with a guard of its own (tests and rare paths).
    pub fn remove(&self, pid: Pid) -> bool {
        let handle = self.register_reader();
        let guard = handle.pin();
        self.remove_in(pid, &guard)
    }

    /// Empties the table (at the end of a run, when no reader is left),
    /// dropping every cell.
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            let mut free_list = shard.free_list.lock().unwrap_or_else(|e| e.into_inner());
            for index in 0..free_list.used {
                let Some(slot) = shard.slot(index) else {
                    continue;
                };
                let pid = slot.pid.load(Ordering::Relaxed);
                slot.pid.store(pid | FREE, Ordering::Relaxed);
                let raw = slot.cell.swap(std::ptr::null_mut(), Ordering::AcqRel);
                if !raw.is_null() {
                    drop(TableReference(raw));
                }
            }
            free_list.used = 0;
            free_list.free.clear();
        }
        self.alive.store(0, Ordering::Relaxed);
    }

    /// The live pids, in slot order (`processes()`).
    pub fn pids(&self) -> Vec<Pid> {
        let mut pids = Vec::new();
        for shard in self.shards.iter() {
            let used = shard
                .free_list
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .used;
            pids.extend((0..used).filter_map(|index| {
                let id = shard.slot(index)?.pid.load(Ordering::Acquire);
                (id & FREE == 0).then(|| Pid::from_id(id))
            }));
        }
        pids.sort_by_key(|p| p.slot());
        pids
    }

    /// Processes alive now.
    pub fn alive(&self) -> usize {
        self.alive.load(Ordering::Relaxed)
    }

    /// The most processes alive at once.
    pub fn peak_alive(&self) -> usize {
        self.peak_alive.load(Ordering::Relaxed)
    }

    /// `register(Name, Pid)`: false if the name is taken by a live process
    /// or the pid is dead. A name whose process died is free again (names
    /// are released lazily, here and in `whereis`).
    pub fn register(&self, name: Atom, pid: Pid) -> bool {
        if !self.is_alive(pid) {
            return false;
        }
        let mut names = self.names.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&holder) = names.get(&name)
            && self.is_alive(holder)
        {
            return false;
        }
        names.insert(name, pid);
        true
    }

    /// `unregister(Name)`: false if no live process had the name.
    pub fn unregister(&self, name: Atom) -> bool {
        let mut names = self.names.write().unwrap_or_else(|e| e.into_inner());
        names.remove(&name).is_some_and(|pid| self.is_alive(pid))
    }

    /// `whereis(Name)`.
    pub fn whereis(&self, name: Atom) -> Option<Pid> {
        let names = self.names.read().unwrap_or_else(|e| e.into_inner());
        names.get(&name).copied().filter(|&pid| self.is_alive(pid))
    }

    /// The names held by live processes, for `registered()`.
    pub fn registered(&self) -> Vec<Atom> {
        let names = self.names.read().unwrap_or_else(|e| e.into_inner());
        let mut live: Vec<Atom> = names
            .iter()
            .filter(|(_, pid)| self.is_alive(**pid))
            .map(|(n, _)| *n)
            .collect();
        live.sort();
        live
    }
}

/// The table's reference to a cell, taken out of its slot.
struct TableReference<B: ProcessBody>(*mut ProcessCell<B>);

impl<B: ProcessBody> Drop for TableReference<B> {
    fn drop(&mut self) {
        // SAFETY: made from a slot's pointer, which `insert` got from
        // `Arc::into_raw`; the slot was nulled, so this is its only owner.
        drop(unsafe { Arc::from_raw(self.0) });
    }
}

impl<B: ProcessBody> Drop for ProcessTable<B> {
    fn drop(&mut self) {
        self.clear();
    }
}
