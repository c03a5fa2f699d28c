//! Counters for `--stats`: each scheduler counts into its own `Counters`
//! (no shared cache line on the hot path) and the totals are added up when
//! the program ends.

use std::io::Write;
use std::time::Duration;

/// One scheduler's counters. Written only by its own thread.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Processes spawned on this scheduler.
    pub spawned: u64,
    /// Signals (messages, links, exits, ...) sent from this scheduler.
    pub messages_sent: u64,
    /// Reductions charged by the processes it ran.
    pub reductions: u64,
    /// Garbage collections, counted by the process layer (`RunContext::stats`).
    pub collections: u64,
    /// Run steps: times a process was given the processor.
    pub runs: u64,
    /// Processes taken from a sibling's queue.
    pub steals: u64,
    /// Times the scheduler parked for lack of work.
    pub parks: u64,
    /// Parked siblings this scheduler woke to share its backlog.
    pub wakes: u64,
    /// Time spent running processes.
    pub busy: Duration,
    /// Queue entries of processes that were not runnable when taken: a
    /// process queued twice. Always 0 while the state protocol holds; the
    /// stress tests assert it.
    pub queued_twice: u64,
}

/// What `--stats` prints after a program.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub wall: Duration,
    pub peak_alive: usize,
    pub schedulers: Vec<Counters>,
}

impl Stats {
    fn total(&self, f: impl Fn(&Counters) -> u64) -> u64 {
        self.schedulers.iter().map(f).sum()
    }

    pub fn spawned(&self) -> u64 {
        self.total(|c| c.spawned)
    }

    pub fn messages_sent(&self) -> u64 {
        self.total(|c| c.messages_sent)
    }

    pub fn reductions(&self) -> u64 {
        self.total(|c| c.reductions)
    }

    pub fn steals(&self) -> u64 {
        self.total(|c| c.steals)
    }

    pub fn queued_twice(&self) -> u64 {
        self.total(|c| c.queued_twice)
    }

    /// Writes the report `--stats` prints to stderr.
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "wall time:         {:.3} s", self.wall.as_secs_f64())?;
        writeln!(out, "processes spawned: {}", self.spawned())?;
        writeln!(out, "peak alive:        {}", self.peak_alive)?;
        writeln!(out, "messages sent:     {}", self.messages_sent())?;
        writeln!(out, "reductions:        {}", self.reductions())?;
        writeln!(out, "collections:       {}", self.total(|c| c.collections))?;
        if let Some(cpu) = cpu_time() {
            writeln!(out, "cpu time:          {:.3} s", cpu.as_secs_f64())?;
        }
        match peak_memory_bytes() {
            Some(bytes) => writeln!(out, "peak memory:       {} KiB", bytes / 1024)?,
            None => writeln!(out, "peak memory:       unknown")?,
        }
        let wall = self.wall.as_secs_f64().max(1e-9);
        for (i, c) in self.schedulers.iter().enumerate() {
            writeln!(
                out,
                "scheduler {}:       busy {:5.1}%  steals {}  runs {}  parks {}  wakes {}",
                i + 1,
                100.0 * c.busy.as_secs_f64() / wall,
                c.steals,
                c.runs,
                c.parks,
                c.wakes
            )?;
        }
        Ok(())
    }
}

/// The process's peak resident memory, from Linux's `/proc/self/status`.
pub fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// User plus system CPU time of the whole process so far, from Linux's
/// `/proc/self/stat` (in clock ticks of 10 ms). Shows whether idle
/// schedulers really sleep: a program that only waits on timers uses ~0.
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may contain spaces: count fields after its ')'.
    // utime and stime are the 12th and 13th fields after it.
    let after = stat.rsplit_once(')')?.1;
    let mut fields = after.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((user + system) * 10))
}
