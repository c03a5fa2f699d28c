//! The memory budget: one global account that every heap, message buffer
//! and off-heap binary draws from.
//!
//! Invariant: `USED` is the sum of all live reservations. A reservation
//! that would take `USED` past `LIMIT` fails, and the caller raises
//! `system_limit` in the process that asked; the VM itself never aborts.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes currently reserved. Written by every thread with atomic adds.
static USED: AtomicUsize = AtomicUsize::new(0);
/// The limit in bytes; 0 means "not yet set" (computed on first use).
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// A request went past the memory budget (or was absurd in size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemLimit;

/// Sets the budget in bytes (`--max-memory`).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes.max(1), Ordering::Relaxed);
}

/// The budget in bytes: as set, or three quarters of physical memory.
pub fn limit() -> usize {
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit != 0 {
        return limit;
    }
    let default = physical_memory().map_or(4 << 30, |m| m / 4 * 3);
    // Another thread may have set it meanwhile; theirs wins.
    let _ = LIMIT.compare_exchange(0, default, Ordering::Relaxed, Ordering::Relaxed);
    LIMIT.load(Ordering::Relaxed)
}

/// Bytes reserved right now.
pub fn used() -> usize {
    USED.load(Ordering::Relaxed)
}

fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// Takes `bytes` from the budget.
pub fn reserve(bytes: usize) -> Result<(), SystemLimit> {
    let limit = limit();
    let mut used = USED.load(Ordering::Relaxed);
    loop {
        let next = used.checked_add(bytes).ok_or(SystemLimit)?;
        if next > limit {
            return Err(SystemLimit);
        }
        match USED.compare_exchange_weak(used, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return Ok(()),
            Err(now) => used = now,
        }
    }
}

/// Whether `bytes` more would fit now: a check without taking them, for
/// a caller that takes them with `force_reserve` a moment later (racing
/// callers may overshoot by their own small amounts).
pub fn has_room(bytes: usize) -> bool {
    used().saturating_add(bytes) <= limit()
}

/// Gives `bytes` back; pairs with an earlier successful `reserve`.
pub fn release(bytes: usize) {
    USED.fetch_sub(bytes, Ordering::Relaxed);
}

/// Takes `bytes` without checking the limit: for small fixed costs (a new
/// tiny heap) and bytes that already exist, where refusing helps no one.
pub fn force_reserve(bytes: usize) {
    USED.fetch_add(bytes, Ordering::Relaxed);
}
