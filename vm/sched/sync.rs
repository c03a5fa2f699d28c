//! The atomics the runtime core uses: std's normally, loom's under `--cfg loom`.
//!
//! Only the lock-free pieces (the state word and the inbox) go through this
//! shim, so that loom can model-check them on their own.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
