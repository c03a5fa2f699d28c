//! zlib streams, as OTP's zlib writes and reads them: the deflate behind
//! `term_to_binary(T, [compressed])`, compressed external terms, and the
//! `zlib` module's one-shot functions.
//!
//! Compression goes through the C zlib (flate2's `zlib` backend) with
//! zlib's own defaults (window bits 15, memory level 8, the default
//! strategy), which is what OTP links: the same input and level give the
//! same bytes as a BEAM node. A pure-Rust deflate would read the same
//! data but write different bytes.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The shape of a stream: its header and trailer around the deflate data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    /// A zlib header and Adler-32 trailer (`zlib:compress`, external terms).
    Zlib,
    /// Bare deflate data (`zlib:zip`).
    Raw,
    /// A gzip header and CRC-32 trailer (`zlib:gzip`).
    Gzip,
}

/// zlib's default level, what `-1` (Z_DEFAULT_COMPRESSION) stands for.
pub const DEFAULT_LEVEL: u32 = 6;

/// The whole of `data` compressed at `level` (0 to 9) in one stream.
pub fn compress(data: &[u8], level: u32, wrapper: Wrapper) -> Vec<u8> {
    let level = Compression::new(level);
    let mut stream = match wrapper {
        Wrapper::Zlib => Compress::new(level, true),
        Wrapper::Raw => Compress::new(level, false),
        Wrapper::Gzip => Compress::new_gzip(level, 15),
    };
    let mut out = Vec::with_capacity(data.len() / 2 + 64);
    loop {
        let read = stream.total_in() as usize;
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(256));
        }
        match stream.compress_vec(&data[read..], &mut out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => return out,
            Ok(_) => {}
            // Finishing a stream held in memory cannot fail.
            Err(_) => return out,
        }
    }
}

/// The data of one whole stream, and how many input bytes the stream
/// took; `None` when `data` does not start with a valid, complete stream.
pub fn decompress(data: &[u8], wrapper: Wrapper) -> Option<(Vec<u8>, usize)> {
    let mut stream = match wrapper {
        Wrapper::Zlib => Decompress::new(true),
        Wrapper::Raw => Decompress::new(false),
        Wrapper::Gzip => Decompress::new_gzip(15),
    };
    let mut out = Vec::with_capacity(data.len() * 2 + 64);
    loop {
        let read = stream.total_in() as usize;
        let before = (stream.total_in(), stream.total_out());
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(256));
        }
        match stream.decompress_vec(&data[read..], &mut out, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) => return Some((out, stream.total_in() as usize)),
            Ok(_) if (stream.total_in(), stream.total_out()) == before => return None,
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// Decompresses a stream whose size is known in advance (a compressed
/// external term records it): `None` unless it holds exactly `size` bytes.
/// The output never grows past `size`, so a lying header cannot make it
/// allocate without bound.
pub fn decompress_exact(data: &[u8], size: usize) -> Option<(Vec<u8>, usize)> {
    let mut stream = Decompress::new(true);
    let mut out = Vec::with_capacity(size.min(data.len().saturating_mul(1032) + 64));
    loop {
        let read = stream.total_in() as usize;
        let before = (stream.total_in(), stream.total_out());
        if out.len() == out.capacity() {
            if out.len() >= size {
                // Full, and the stream has not ended: it holds more.
                let mut probe = Vec::with_capacity(1);
                return match stream.decompress_vec(
                    &data[read..],
                    &mut probe,
                    FlushDecompress::Finish,
                ) {
                    Ok(Status::StreamEnd) if probe.is_empty() => {
                        Some((out, stream.total_in() as usize))
                    }
                    _ => None,
                };
            }
            out.reserve_exact((size - out.len()).min(out.capacity().max(256)));
        }
        match stream.decompress_vec(&data[read..], &mut out, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) if out.len() == size => {
                return Some((out, stream.total_in() as usize));
            }
            Ok(Status::StreamEnd) => return None,
            Ok(_)
                if (stream.total_in(), stream.total_out()) == before
                    && out.len() < out.capacity() =>
            {
                return None;
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}
