//! Standard output: one buffered writer for the whole VM, flushed when
//! the program ends by any path and before anything goes to stderr.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

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
    let _ = out.flush();
}
