//! Ctrl-C during an evaluation: a SIGINT handler that only raises a flag,
//! and the checks the evaluation loop makes between time slices.
//!
//! The interpreter yields every `CONTEXT_REDS` reductions, so a running
//! evaluation sees the flag within one time slice, even in an endless
//! loop; the shell then drops the evaluation and prompts again. While the
//! line editor reads a line the terminal is in raw mode and Ctrl-C reaches
//! the editor as a key, not as a signal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes SIGINT set the flag instead of ending the program.
pub fn install() {
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: `signal` replaces the disposition of SIGINT with a handler
    // that does nothing but an atomic store, which is async-signal-safe;
    // no Rust invariant depends on the previous disposition. Exercised by
    // the pseudo-terminal test that sends Ctrl-C to a running loop.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Raises the flag (for tests and for callers that detect Ctrl-C
/// themselves).
pub fn raise() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Forgets an interrupt that came while nothing was running.
pub fn clear() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// True (once) when Ctrl-C was pressed since the last check.
pub fn take() -> bool {
    INTERRUPTED.swap(false, Ordering::SeqCst)
}

/// Sleeps `ms` milliseconds unless interrupted first; true when the whole
/// time passed. The flag stays raised for the caller's next `take`.
pub fn sleep(ms: u64) -> bool {
    let until = Instant::now() + Duration::from_millis(ms);
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(20)));
    }
}
