//! Standard input: one reader for the whole VM, shared by all processes.
//!
//! A thread of its own reads fd 0 ahead into a bounded buffer, so no
//! scheduler thread ever blocks in `read(2)`. A process asks with
//! `take_within`, which waits for the reader at most a couple of
//! milliseconds; when the data is still not there it gets `Pending`, and
//! the io module yields and asks again, so the other processes of its
//! scheduler run between the waits. (Piped input arrives within the
//! wait; timers are not used because a loaded machine delays them.)
//! Under `--deterministic`, input is instantaneous on the virtual clock:
//! `take_blocking` waits for the reader right there, so a run never
//! depends on how fast the pipe fills.
//!
//! The buffer holds at most `HIGH_WATER` bytes beyond what a request
//! needs: reading a large input line by line takes flat memory.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Condvar, Mutex, OnceLock};

/// The reader stops reading ahead once this much is buffered.
const HIGH_WATER: usize = 1 << 20;
const CHUNK: usize = 64 * 1024;

#[derive(Default)]
struct State {
    data: VecDeque<u8>,
    eof: bool,
    /// A read error (its errno name), reported once the buffer is drained.
    error: Option<String>,
    started: bool,
    /// Bytes a waiting request needs buffered (the reader reads past the
    /// high water mark for a longer line).
    want: usize,
    /// The reader waits for room; takers wake it only once the buffer
    /// is down to half (waking it per line would cost a context switch
    /// per line).
    reader_waiting: bool,
    /// A `take_blocking` waits for data.
    taker_waiting: bool,
}

struct Stdin {
    state: Mutex<State>,
    /// Signalled by the reader when data arrives, by takers when room frees.
    changed: Condvar,
}

fn stdin() -> &'static Stdin {
    static STDIN: OnceLock<Stdin> = OnceLock::new();
    STDIN.get_or_init(|| Stdin {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
    })
}

/// What a read request asks for.
#[derive(Clone, Copy, Debug)]
pub enum Request {
    /// Up to and including the next newline (or the rest, at the end).
    Line,
    /// Up to `n` bytes (fewer only at the end).
    Bytes(usize),
    /// Up to the first `.` followed by white space or the end, for
    /// `io:read`; `%` comments and quoted text do not end it.
    Term,
}

/// The answer to a request.
#[derive(Debug)]
pub enum Taken {
    Data(Vec<u8>),
    Eof,
    Error(String),
    /// Not enough data yet: ask again later.
    Pending,
}

fn start(state: &mut State) {
    if state.started {
        return;
    }
    state.started = true;
    let spawned = std::thread::Builder::new()
        .name("stdin".to_string())
        .spawn(reader);
    if spawned.is_err() {
        state.eof = true;
        state.error = Some("enomem".to_string());
    }
}

/// The reader thread: fills the buffer up to the high water mark (or what
/// a waiting request needs), until the end of input.
fn reader() {
    let s = stdin();
    let mut input = std::io::stdin().lock();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        {
            let mut state = s.state.lock().unwrap_or_else(|e| e.into_inner());
            while state.data.len() >= HIGH_WATER.max(state.want) {
                state.reader_waiting = true;
                state = s.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            state.reader_waiting = false;
        }
        let result = input.read(&mut chunk);
        let mut state = s.state.lock().unwrap_or_else(|e| e.into_inner());
        match result {
            Ok(0) => {
                state.eof = true;
                s.changed.notify_all();
                return;
            }
            Ok(n) => {
                state.data.extend(&chunk[..n]);
                if !state.taker_waiting {
                    continue;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                state.eof = true;
                state.error = Some(crate::bif::file::errno_name(&e).to_string());
                s.changed.notify_all();
                return;
            }
        }
        s.changed.notify_all();
    }
}

/// How many bytes of `data` the request takes, if enough is buffered.
fn span(data: &mut VecDeque<u8>, request: Request, eof: bool) -> Option<usize> {
    match request {
        Request::Line => match data.iter().position(|&b| b == b'\n') {
            Some(i) => Some(i + 1),
            None if eof => Some(data.len()),
            None => None,
        },
        Request::Bytes(n) => {
            if data.len() >= n {
                Some(n)
            } else if eof {
                Some(data.len())
            } else {
                None
            }
        }
        Request::Term => match term_end(data.make_contiguous()) {
            Some(i) => Some(i),
            None if eof => Some(data.len()),
            None => None,
        },
    }
}

/// The length of the text up to and including a full stop (a `.` that
/// ends a term: followed by white space, `%` or the end), if it is there.
pub fn term_end(data: &[u8]) -> Option<usize> {
    let mut quote: Option<u8> = None;
    let mut comment = false;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if comment {
            comment = b != b'\n';
        } else if let Some(q) = quote {
            if b == b'\\' {
                i += 1;
            } else if b == q {
                quote = None;
            }
        } else {
            match b {
                b'"' | b'\'' => quote = Some(b),
                b'%' => comment = true,
                b'$' => i += 1 + usize::from(data.get(i + 1) == Some(&b'\\')),
                b'.' => match data.get(i + 1) {
                    Some(c) if c.is_ascii_whitespace() || *c == b'%' => return Some(i + 2),
                    Some(_) => {}
                    None => return None,
                },
                _ => {}
            }
        }
        i += 1;
    }
    None
}

fn take_from(state: &mut State, request: Request) -> Taken {
    if let Some(n) = span(&mut state.data, request, state.eof) {
        if n == 0 {
            return match state.error.clone() {
                Some(e) => Taken::Error(e),
                None => Taken::Eof,
            };
        }
        state.want = 0;
        return Taken::Data(state.data.drain(..n).collect());
    }
    // Let the reader read past the high water mark for this request.
    state.want = state.data.len() + CHUNK;
    Taken::Pending
}

/// Wakes the reader if it waits for room and there is room, or for a
/// request that needs more than the high water mark.
fn wake_reader(s: &Stdin, state: &State) {
    if state.reader_waiting && (state.data.len() <= HIGH_WATER / 2 || state.want > state.data.len())
    {
        s.changed.notify_all();
    }
}

/// Takes what `request` asks for, waiting for the reader at most `limit`.
pub fn take_within(request: Request, limit: std::time::Duration) -> Taken {
    let s = stdin();
    let deadline = std::time::Instant::now() + limit;
    let mut state = s.state.lock().unwrap_or_else(|e| e.into_inner());
    start(&mut state);
    loop {
        let taken = take_from(&mut state, request);
        wake_reader(s, &state);
        let now = std::time::Instant::now();
        if !matches!(taken, Taken::Pending) || now >= deadline {
            state.taker_waiting = false;
            return taken;
        }
        state.taker_waiting = true;
        state = s
            .changed
            .wait_timeout(state, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
}

/// Takes what `request` asks for, waiting for the reader as long as it takes.
pub fn take_blocking(request: Request) -> Taken {
    let s = stdin();
    let mut state = s.state.lock().unwrap_or_else(|e| e.into_inner());
    start(&mut state);
    loop {
        let taken = take_from(&mut state, request);
        wake_reader(s, &state);
        if !matches!(taken, Taken::Pending) {
            state.taker_waiting = false;
            return taken;
        }
        state.taker_waiting = true;
        state = s.changed.wait(state).unwrap_or_else(|e| e.into_inner());
    }
}

/// Puts text back in front of the input (what `io:read` read past its term).
pub fn unread(bytes: &[u8]) {
    let s = stdin();
    let mut state = s.state.lock().unwrap_or_else(|e| e.into_inner());
    for &b in bytes.iter().rev() {
        state.data.push_front(b);
    }
}
