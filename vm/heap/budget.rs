//! The memory budget: one global account that every heap, message buffer
//! and off-heap binary draws from.
//!
//! Invariant: `USED` is the sum of all live reservations. A reservation
//! that would take `USED` past `LIMIT` fails, and the caller raises
//! `system_limit` in the process that asked; the VM itself never aborts.
//!
//! Messages are charged through a per-thread credit (`charge`, `credit`):
//! a thread draws budget from `USED` in chunks of `CREDIT_CHUNK` bytes and
//! charges and credits each message against its own credit, so the
//! message path touches no shared cache line; a thread whose credit grows
//! past `CREDIT_KEEP` (it takes in more messages than it sends) gives the
//! surplus back. Invariant: `USED` is the sum of the live reservations
//! plus every thread's credit, so the budget holds to within
//! `CREDIT_KEEP` bytes a thread (a thread may fail a charge while another
//! holds unspent credit). Messages stop at `limit() - limit() / MESSAGE_MARGIN`:
//! a flood is refused while the last part of the budget is still free for
//! heaps, so the process told `system_limit` can still handle it (print,
//! kill the receiver) however the credit is spread over the threads.

use std::cell::Cell;
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
/// and `RLIMIT_DATA`; two thirds of what `RLIMIT_AS` leaves beyond the address
/// space mapped when the budget is first asked for (it counts space that
/// is only reserved, such as thread stacks and the allocator's arenas). Going past the budget
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
        // Address space already mapped (the code, the compiler's big
        // stack, the allocator's first arena) is not there for heaps.
        let free = space.saturating_sub(mapped_bytes().unwrap_or(0));
        default = default.min(free / 3 * 2);
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

/// Address space this process has mapped now (`VmSize`).
fn mapped_bytes() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

fn physical_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The share of the budget (one part in this many) that messages leave
/// free for heaps.
const MESSAGE_MARGIN: usize = 32;
/// Bytes a thread draws from `USED` when its credit runs out.
const CREDIT_CHUNK: usize = 64 << 10;
/// Credit a thread keeps at most; past it, all but one chunk goes back.
const CREDIT_KEEP: usize = 2 * CREDIT_CHUNK;

thread_local! {
    /// This thread's credit: bytes counted in `USED` that no reservation
    /// holds yet (see the module comment).
    static CREDIT: Cell<usize> = const { Cell::new(0) };
}

/// Charges `bytes` to this thread's credit, drawing a chunk from the
/// budget when the credit is short; fails past the budget.
#[inline]
pub fn charge(bytes: usize) -> Result<(), SystemLimit> {
    CREDIT.with(|credit| {
        let have = credit.get();
        if have >= bytes {
            credit.set(have - bytes);
            Ok(())
        } else {
            refill(credit, bytes, false)
        }
    })
}

/// `charge` that never fails: for messages the runtime makes, and bytes
/// that exist already.
#[inline]
pub fn force_charge(bytes: usize) {
    CREDIT.with(|credit| {
        let have = credit.get();
        if have >= bytes {
            credit.set(have - bytes);
        } else {
            let _ = refill(credit, bytes, true);
        }
    });
}

/// Draws a chunk (or, near the limit, just what is missing) and charges
/// `bytes` from the credit.
#[cold]
fn refill(credit: &Cell<usize>, bytes: usize, force: bool) -> Result<(), SystemLimit> {
    let have = credit.get();
    let missing = bytes - have;
    let chunk = missing.saturating_add(CREDIT_CHUNK);
    let limit = limit();
    let ceiling = limit - limit / MESSAGE_MARGIN;
    if reserve_below(chunk, ceiling).is_ok() {
        credit.set(chunk - missing);
        return Ok(());
    }
    if force {
        force_reserve(missing);
    } else {
        reserve_below(missing, ceiling)?;
    }
    credit.set(0);
    Ok(())
}

/// Gives back `bytes` of an earlier `charge` (made on any thread) to
/// this thread's credit, returning the surplus past `CREDIT_KEEP`.
#[inline]
pub fn credit(bytes: usize) {
    CREDIT.with(|credit| {
        let have = credit.get() + bytes;
        if have > CREDIT_KEEP {
            release(have - CREDIT_CHUNK);
            credit.set(CREDIT_CHUNK);
        } else {
            credit.set(have);
        }
    });
}

/// Returns this thread's whole credit to the budget: for a thread that
/// ends (a scheduler), so that its unspent chunk is not lost.
pub fn return_credit() {
    release(CREDIT.with(|credit| credit.replace(0)));
}

/// Takes `bytes` from the budget.
pub fn reserve(bytes: usize) -> Result<(), SystemLimit> {
    reserve_below(bytes, limit())
}

/// Takes `bytes` from the budget if `USED` stays at most `limit`.
fn reserve_below(bytes: usize, limit: usize) -> Result<(), SystemLimit> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> usize {
        CREDIT.with(Cell::get)
    }

    /// A thread draws credit a chunk at a time, charges messages from it
    /// without touching `USED`, and keeps at most `CREDIT_KEEP` of what
    /// comes back (a thread that takes in more messages than it sends).
    #[test]
    fn message_charges_come_from_the_thread_credit() {
        std::thread::spawn(|| {
            assert_eq!(held(), 0);
            charge(128).unwrap();
            assert_eq!(held(), CREDIT_CHUNK, "one chunk drawn for the first charge");
            for _ in 0..100 {
                charge(128).unwrap();
            }
            assert_eq!(held(), CREDIT_CHUNK - 100 * 128);
            for _ in 0..101 {
                credit(128);
            }
            assert_eq!(held(), CREDIT_CHUNK + 128);
            charge(3 * CREDIT_CHUNK).unwrap();
            assert_eq!(
                held(),
                CREDIT_CHUNK,
                "a short credit draws what is missing and a chunk"
            );
            credit(3 * CREDIT_CHUNK);
            assert_eq!(held(), CREDIT_CHUNK, "the surplus went back");
            force_charge(2 * CREDIT_CHUNK);
            assert_eq!(held(), CREDIT_CHUNK);
            credit(2 * CREDIT_CHUNK);
            return_credit();
            assert_eq!(held(), 0);
        })
        .join()
        .unwrap();
    }
}
