//! The process table: a sharded slab from pid to process cell, and the
//! registered names.
//!
//! # Invariants
//!
//! - A pid is (slot, generation). Slot `s` lives in shard `s % SHARDS` at
//!   index `s / SHARDS`. The generation is the table's spawn serial (0 for
//!   the first process, then 1, 2, ... across all shards), so a slot gets a
//!   new generation each time it is reused and a lookup with a dead pid's
//!   generation finds nothing: a dead pid never reaches a new process
//!   (until the 29-bit serial wraps). The serial is also what pids print
//!   (BEAM numbers processes in spawn order) and how they sort.
//! - `alive` counts the cells in the table; spawning past `max_processes`
//!   fails with `SystemLimit` and changes nothing.
//! - Each shard has its own lock, held for a slot read or write only; there
//!   is no global lock. Spawners on different schedulers use different shards.
//! - Beside the locked entries, every slot has an atomic pointer to its
//!   cell (null while free), in segments that never move (`Slots`): a
//!   send looks its receiver up there (`lookup`) with no lock and no
//!   reference count. The pointer is set after the entry (insert) and
//!   cleared before it (remove), under the shard's lock. A removed cell
//!   stays allocated until no scheduler is in a lookup that began before
//!   the removal (the scheduler's `Retired` list, epochs pinned by each
//!   send), so a pointer read before the removal stays good while the
//!   send that read it lasts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use super::ProcessBody;
use super::cell::ProcessCell;
use super::pid::{Pid, SLOT_BITS};
use crate::term::atom::Atom;

/// Shards of the table (a power of two).
pub const SHARDS: usize = 64;

/// The process limit (`--max-processes`) or the address space ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemLimit;

struct Entry<B: ProcessBody> {
    generation: u32,
    cell: Option<Arc<ProcessCell<B>>>,
}

struct Shard<B: ProcessBody> {
    entries: Vec<Entry<B>>,
    /// Free indices, reused last-in first-out (deterministic on one thread).
    free: Vec<u32>,
}

/// Slots in a shard's first segment of cell pointers; segment `k` holds
/// `FIRST_SEGMENT << k`, so a shard needs at most `SEGMENTS` of them.
const FIRST_SEGMENT: usize = 64;
const SEGMENTS: usize = (SLOT_BITS as usize) - 6 + 1;

/// One shard's cell pointers by index, for lookups without the lock:
/// segments allocated as the shard grows (under its lock) and freed only
/// with the table, so a pointer to a slot never dangles.
struct Slots<B: ProcessBody> {
    segments: [AtomicPtr<AtomicPtr<ProcessCell<B>>>; SEGMENTS],
}

impl<B: ProcessBody> Slots<B> {
    fn new() -> Slots<B> {
        Slots {
            segments: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
        }
    }

    /// The segment of index `i` and the position in it.
    fn locate(i: usize) -> (usize, usize) {
        let k = (i / FIRST_SEGMENT + 1).ilog2() as usize;
        (k, i - FIRST_SEGMENT * ((1 << k) - 1))
    }

    /// The slot of index `i`, if its segment exists.
    fn slot(&self, i: usize) -> Option<&AtomicPtr<ProcessCell<B>>> {
        let (k, at) = Self::locate(i);
        let segment = self.segments.get(k)?.load(Ordering::Acquire);
        if segment.is_null() {
            return None;
        }
        // SAFETY: a segment `k` holds `FIRST_SEGMENT << k` slots, lives as
        // long as the table, and `at` is below that size (`locate`).
        Some(unsafe { &*segment.add(at) })
    }

    /// The slot of index `i`, making its segment (under the shard's lock).
    fn slot_made(&self, i: usize) -> &AtomicPtr<ProcessCell<B>> {
        let (k, _) = Self::locate(i);
        if self.segments[k].load(Ordering::Acquire).is_null() {
            let segment: Box<[AtomicPtr<ProcessCell<B>>]> = (0..FIRST_SEGMENT << k)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect();
            let segment = Box::into_raw(segment) as *mut AtomicPtr<ProcessCell<B>>;
            self.segments[k].store(segment, Ordering::Release);
        }
        self.slot(i).expect("segment just made")
    }
}

impl<B: ProcessBody> Drop for Slots<B> {
    fn drop(&mut self) {
        for (k, segment) in self.segments.iter().enumerate() {
            let segment = segment.load(Ordering::Acquire);
            if !segment.is_null() {
                // SAFETY: made by `slot_made` from a boxed slice of this length.
                drop(unsafe {
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                        segment,
                        FIRST_SEGMENT << k,
                    ))
                });
            }
        }
    }
}

pub struct ProcessTable<B: ProcessBody> {
    shards: Box<[RwLock<Shard<B>>]>,
    /// The cell pointers of each shard, read without its lock.
    slots: Box<[Slots<B>]>,
    alive: AtomicUsize,
    peak_alive: AtomicUsize,
    /// The next spawn serial (the generation of the next pid).
    serial: AtomicU32,
    max_processes: usize,
    names: RwLock<HashMap<Atom, Pid>>,
}

impl<B: ProcessBody> ProcessTable<B> {
    /// An empty table; `max_processes` of `usize::MAX` means no limit.
    pub fn new(max_processes: usize) -> ProcessTable<B> {
        let shards = (0..SHARDS)
            .map(|_| {
                RwLock::new(Shard {
                    entries: Vec::new(),
                    free: Vec::new(),
                })
            })
            .collect();
        ProcessTable {
            shards,
            slots: (0..SHARDS).map(|_| Slots::new()).collect(),
            alive: AtomicUsize::new(0),
            peak_alive: AtomicUsize::new(0),
            serial: AtomicU32::new(0),
            max_processes,
            names: RwLock::new(HashMap::new()),
        }
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
        let mut shard = self.shards[shard_index]
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let index = match shard.free.pop() {
            Some(i) => i,
            None => {
                let i = shard.entries.len();
                let slot = i * SHARDS + shard_index;
                if slot >= 1 << SLOT_BITS {
                    drop(shard);
                    self.alive.fetch_sub(1, Ordering::Relaxed);
                    return Err(SystemLimit);
                }
                shard.entries.push(Entry {
                    generation: 0,
                    cell: None,
                });
                i as u32
            }
        };
        let slot = index as usize * SHARDS + shard_index;
        let entry = &mut shard.entries[index as usize];
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        entry.generation = serial & ((1 << super::pid::GENERATION_BITS) - 1);
        let pid = Pid::new(slot as u32, entry.generation);
        let cell = Arc::new(ProcessCell::new(pid, make(pid)));
        entry.cell = Some(Arc::clone(&cell));
        self.slots[shard_index]
            .slot_made(index as usize)
            .store(Arc::as_ptr(&cell).cast_mut(), Ordering::SeqCst);
        Ok(cell)
    }

    /// The live process a pid names, found without a lock or a reference
    /// count: the send path's lookup.
    ///
    /// # Safety
    /// Only a scheduler thread may call this, pinned at an epoch read
    /// before the call (`scheduler::Retired`), and it must not use the
    /// cell once it unpins: until then a removed cell is not freed.
    pub unsafe fn lookup(&self, pid: Pid) -> Option<&ProcessCell<B>> {
        let slot = pid.slot() as usize;
        let cell = self.slots[slot % SHARDS]
            .slot(slot / SHARDS)?
            .load(Ordering::SeqCst);
        if cell.is_null() {
            return None;
        }
        // SAFETY: a cell stays allocated while the caller is pinned at an
        // epoch from before its removal (the caller's contract).
        let cell = unsafe { &*cell };
        // A reused slot holds another process: its pid differs.
        (cell.pid() == pid).then_some(cell)
    }

    /// The live process a pid names.
    pub fn get(&self, pid: Pid) -> Option<Arc<ProcessCell<B>>> {
        let slot = pid.slot() as usize;
        let shard = self.shards[slot % SHARDS]
            .read()
            .unwrap_or_else(|e| e.into_inner());
        let entry = shard.entries.get(slot / SHARDS)?;
        if entry.generation != pid.generation() {
            return None;
        }
        entry.cell.clone()
    }

    /// Whether a pid names a live process.
    pub fn is_alive(&self, pid: Pid) -> bool {
        let slot = pid.slot() as usize;
        let shard = self.shards[slot % SHARDS]
            .read()
            .unwrap_or_else(|e| e.into_inner());
        shard
            .entries
            .get(slot / SHARDS)
            .is_some_and(|e| e.generation == pid.generation() && e.cell.is_some())
    }

    /// Removes an exited process; its pid is dead from now on. Returns the
    /// table's reference to the cell (the caller usually still holds one).
    pub fn remove(&self, pid: Pid) -> Option<Arc<ProcessCell<B>>> {
        let slot = pid.slot() as usize;
        let mut shard = self.shards[slot % SHARDS]
            .write()
            .unwrap_or_else(|e| e.into_inner());
        let index = slot / SHARDS;
        let entry = shard.entries.get_mut(index)?;
        if entry.generation != pid.generation() || entry.cell.is_none() {
            return None;
        }
        if let Some(slot) = self.slots[slot % SHARDS].slot(index) {
            slot.store(std::ptr::null_mut(), Ordering::SeqCst);
        }
        let cell = entry.cell.take();
        shard.free.push(index as u32);
        drop(shard);
        self.alive.fetch_sub(1, Ordering::Relaxed);
        cell
    }

    /// Empties the table (at the end of a run), dropping every cell.
    pub fn clear(&self) {
        for (shard, slots) in self.shards.iter().zip(self.slots.iter()) {
            let mut shard = shard.write().unwrap_or_else(|e| e.into_inner());
            for i in 0..shard.entries.len() {
                if let Some(slot) = slots.slot(i) {
                    slot.store(std::ptr::null_mut(), Ordering::SeqCst);
                }
            }
            let taken: Vec<_> = shard
                .entries
                .iter_mut()
                .filter_map(|e| e.cell.take())
                .collect();
            drop(shard);
            drop(taken);
        }
        self.alive.store(0, Ordering::Relaxed);
    }

    /// The live pids, in slot order (`processes()`).
    pub fn pids(&self) -> Vec<Pid> {
        let mut pids = Vec::new();
        for shard in self.shards.iter() {
            let shard = shard.read().unwrap_or_else(|e| e.into_inner());
            pids.extend(
                shard
                    .entries
                    .iter()
                    .filter_map(|e| e.cell.as_ref().map(|c| c.pid())),
            );
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
