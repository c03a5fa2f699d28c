//! Standard output: one buffered writer for the whole VM, flushed after
//! each run step that wrote, when the program ends by any path, and
//! before anything goes to stderr.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Something was written since the last flush.
static WRITTEN: AtomicBool = AtomicBool::new(false);

fn stdout() -> &'static Mutex<std::io::BufWriter<std::io::Stdout>> {
    static OUT: OnceLock<Mutex<std::io::BufWriter<std::io::Stdout>>> = OnceLock::new();
    OUT.get_or_init(|| {
        Mutex::new(std::io::BufWriter::with_capacity(
            1 << 16,
            std::io::stdout(),
        ))
    })
}

/// Writes `bytes` to stdout as one piece (never interleaved).
pub fn write_stdout(bytes: &[u8]) {
    let mut out = stdout().lock().unwrap_or_else(|e| e.into_inner());
    let _ = out.write_all(bytes);
    WRITTEN.store(true, Ordering::Relaxed);
}

/// Writes to stderr, after flushing stdout so the order is kept.
pub fn write_stderr(bytes: &[u8]) {
    flush();
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
}

pub fn flush() {
    let mut out = stdout().lock().unwrap_or_else(|e| e.into_inner());
    WRITTEN.store(false, Ordering::Relaxed);
    let _ = out.flush();
}

/// Flushes if anything was written since the last flush: called after
/// each run step, so output reaches stdout within a time slice while a
/// print loop still writes in large pieces.
pub fn flush_if_written() {
    if WRITTEN.load(Ordering::Relaxed) {
        flush();
    }
}
