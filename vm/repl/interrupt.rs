//! Ctrl-C during an evaluation: a SIGINT handler that only raises the
//! flag the shell server polls (`bif::shell::INTERRUPTED`).
//!
//! The server checks the flag every few milliseconds while an evaluation
//! runs, and then kills the evaluator process, so even an endless loop
//! is stopped. While the line editor reads a line the terminal is in raw
//! mode, and Ctrl-C reaches the editor as a key, not as a signal.

use crate::bif::shell::INTERRUPTED;
use std::sync::atomic::Ordering;

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT raise the flag instead of ending the program.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: `signal` replaces the disposition of SIGINT with a handler
    // that does nothing but an atomic store, which is async-signal-safe;
    // no Rust invariant depends on the previous disposition. Exercised by
    // the pseudo-terminal test that sends Ctrl-C to a running loop
    // (tests/repl_pty.rs).
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Forgets a Ctrl-C that came while nothing was running.
pub fn clear() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}
