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

/// The budget in bytes: as set, or three quarters of the memory the
/// process may really have: physical memory, the cgroup's `memory.max`,
/// and `RLIMIT_DATA`; half of `RLIMIT_AS` (which counts address space
/// that is only reserved, such as thread stacks). Going past the budget
/// is `system_limit` in one process, where going past the OS's limit
/// would abort the VM.
pub fn limit() -> usize {
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit != 0 {
        return limit;
    }
    let mut default = physical_memory().map_or(4 << 30, |m| m / 4 * 3);
    if let Some(cgroup) = cgroup_memory() {
        default = default.min(cgroup / 4 * 3);
    }
    if let Some(data) = resource_limit(libc::RLIMIT_DATA) {
        default = default.min(data / 4 * 3);
    }
    if let Some(space) = resource_limit(libc::RLIMIT_AS) {
        default = default.min(space / 2);
    }
    let default = default.max(1);
    // Another thread may have set it meanwhile; theirs wins.
    let _ = LIMIT.compare_exchange(0, default, Ordering::Relaxed, Ordering::Relaxed);
    LIMIT.load(Ordering::Relaxed)
}

/// Bytes reserved right now.
pub fn used() -> usize {
    USED.load(Ordering::Relaxed)
}

/// A soft resource limit of this process, if it has one.
fn resource_limit(resource: libc::__rlimit_resource_t) -> Option<usize> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    let ok = unsafe { libc::getrlimit(resource, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY)
        .then(|| usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX))
}

/// The memory limit of this process's cgroup (v2 `memory.max`, or v1
/// `memory.limit_in_bytes`), if there is one.
fn cgroup_memory() -> Option<usize> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.is_empty() {
            candidates.push(format!("/sys/fs/cgroup{path}/memory.max"));
        } else if controllers.split(',').any(|c| c == "memory") {
            candidates.push(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"));
        }
    }
    candidates.push("/sys/fs/cgroup/memory.max".to_string());
    candidates.into_iter().find_map(|file| {
        let text = std::fs::read_to_string(file).ok()?;
        let bytes: u64 = text.trim().parse().ok()?;
        // cgroup v1 says "no limit" with a huge number.
        (bytes < 1 << 60).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
    })
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
