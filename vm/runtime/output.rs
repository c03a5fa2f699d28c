//! Standard output: one buffered writer for the whole VM, flushed after
//! each run step that wrote, when the program ends by any path, and
//! before anything goes to stderr; and the encoding of standard_io.
//!
//! escript's standard_io is latin1: characters 0-255 go out as one byte
//! each, and a character above 255 as the text `\x{3BB}` (its code in
//! upper-case hex), as escript writes it. With
//! `io:setopts([{encoding, unicode}])` (and in the shell) every character
//! is written as UTF-8.

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

static UNICODE: AtomicBool = AtomicBool::new(false);

/// Whether standard_io's encoding is `unicode` (else `latin1`).
pub fn unicode() -> bool {
    UNICODE.load(Ordering::Relaxed)
}

pub fn set_unicode(on: bool) {
    UNICODE.store(on, Ordering::Relaxed);
}

/// The bytes standard_io writes for `chars` in its current encoding.
pub fn encode(chars: impl IntoIterator<Item = char>, out: &mut Vec<u8>) {
    let unicode = unicode();
    for c in chars {
        if !unicode && (c as u32) < 256 {
            out.push(c as u8);
        } else if !unicode {
            out.extend_from_slice(format!("\\x{{{:X}}}", c as u32).as_bytes());
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// Writes characters to stdout in standard_io's encoding.
pub fn write_text(text: &str) {
    if text.is_ascii() {
        return write_stdout(text.as_bytes());
    }
    let mut bytes = Vec::with_capacity(text.len());
    encode(text.chars(), &mut bytes);
    write_stdout(&bytes);
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
