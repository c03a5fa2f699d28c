//! What a process costs in memory: every allocation it holds, each
//! rounded up to the size class the allocator (mimalloc) really gives.
//!
//! The figure that matters is the idle process (issue #8: at most 500
//! bytes; BEAM: about 2,600), and RSS is too noisy to guard it in a test,
//! so the allocations are listed and added up instead: `Heap::footprint`
//! and `Process::footprint` list the process's own, `runtime::processes`
//! adds the scheduler's (process cell, inbox stub, table slot), and a test
//! there holds the sum for a fresh process waiting in `receive` to a
//! budget.
//!
//! An idle process today (`wait(Prev) -> receive stop -> Prev ! stop end`,
//! spawned and waiting; the same after it has taken a message):
//!
//! ```text
//! process cell: Arc counts 16 + state, timer tag,     320 B (class 320)
//!   pid, inbox ends 48 + Actor 256 (Process 232)
//! inbox stub link                                        8 B
//! process table slot (generation, Arc)                  16 B (in a shared vector)
//! Y stack: its live variable and parked X registers     32 B (4 slots)
//! heap: none until it needs a word                       0 B
//! mailbox: none while one message at a time waits        0 B
//! cold parts (links, catches, dictionary...): none       0 B
//! total                                                376 B
//! ```
//!
//! (Before issue #8's work: 952 B; the cell was 456 B, in the 512-byte
//! class, with a 256-byte first heap, a 128-byte stack, saved registers in
//! a vector of their own.) Peak RSS per process measures about 450 B: the
//! table's and run queues' growth slack and mimalloc's pages come on top.

/// Bytes mimalloc hands out for a request of `bytes`: its size class.
///
/// Up to 64 bytes the classes are every word (8, 16, ..., 64); above, each
/// doubling is split in four (80, 96, 112, 128, 160, ..., 448, 512, 640,
/// ...), so a request just over a class boundary costs up to 25% more.
/// (mimalloc's `mi_bin`, for the small and medium sizes a process uses.)
pub fn allocation_size(bytes: usize) -> usize {
    if bytes == 0 {
        return 0;
    }
    let words = bytes.div_ceil(8);
    if words <= 8 {
        return words * 8;
    }
    // The top three bits of `words - 1` pick the class.
    let w = words - 1;
    let top = usize::BITS - 1 - w.leading_zeros();
    let step = 1usize << (top - 2);
    (w / step + 1) * step * 8
}

/// The allocations of one process: what each is for and its size.
#[derive(Debug, Default)]
pub struct Footprint {
    /// (what, bytes requested, bytes it costs).
    pub parts: Vec<(&'static str, usize, usize)>,
}

impl Footprint {
    /// A separate allocation of `bytes` (none if 0).
    pub fn allocation(&mut self, what: &'static str, bytes: usize) {
        if bytes > 0 {
            self.parts.push((what, bytes, allocation_size(bytes)));
        }
    }

    /// Bytes inside a shared allocation (a slot of a table), not rounded.
    pub fn share(&mut self, what: &'static str, bytes: usize) {
        self.parts.push((what, bytes, bytes));
    }

    /// What the process costs in all.
    pub fn total(&self) -> usize {
        self.parts.iter().map(|&(_, _, cost)| cost).sum()
    }
}

impl std::fmt::Display for Footprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for &(what, bytes, cost) in &self.parts {
            writeln!(f, "{what:<28} {bytes:>6} B -> {cost:>6} B")?;
        }
        write!(f, "{:<28} {:>6}      {:>6} B", "total", "", self.total())
    }
}

#[cfg(test)]
mod tests {
    use super::allocation_size;

    #[test]
    fn allocation_sizes_follow_mimallocs_classes() {
        let cases = [
            (1, 8),
            (8, 8),
            (9, 16),
            (64, 64),
            (65, 80),
            (80, 80),
            (81, 96),
            (128, 128),
            (129, 160),
            (256, 256),
            (257, 320),
            (320, 320),
            (321, 384),
            (440, 448),
            (456, 512),
            (513, 640),
        ];
        for (bytes, class) in cases {
            assert_eq!(allocation_size(bytes), class, "{bytes} bytes");
        }
    }
}
