//! Connections to other nodes: dialing and accepting (the handshake),
//! the outbound buffer and its writer thread, the reader thread and the
//! control messages it understands.
//!
//! A connection is `Connecting` from the first send or connect (frames
//! queue meanwhile), `Up` once a handshake succeeded, and `Down` for good
//! after a failure or a close (a later send dials again with a fresh
//! connection). Per connection one writer drains the buffer (whole
//! batches in one `write`, a tick after a quarter of `net_ticktime`
//! without traffic) and one reader reads frames in order and hands
//! messages to `runtime::nodes`. The reader thread sleeps in `poll` and
//! reads without blocking; an idle scheduler may do the same for every
//! connection (`Poller`), so a message is read by the thread that will
//! run its receiver. Whoever holds a connection's `input` lock reads it
//! and handles its frames, so one connection's frames are handled in
//! order by one thread at a time; a scheduler only `try_lock`s it.
//!
//! Back-pressure, as BEAM's busy distribution port: when a connection's
//! outbound bytes (queued plus the batch being written) pass
//! `BUSY_LIMIT`, the connection is busy, and a process whose message
//! made it so, or that sends while it is, is told to suspend
//! (`Sent::Suspend`; its message is queued all the same) and is listed
//! on the connection. When the writer has drained it below `BUSY_LOW`
//! (or the connection fails) the listed processes are resumed. A send
//! with `nosuspend` to a busy connection is not made (`Sent::NoSuspend`).
//!
//! Invariants on input (a peer is never trusted): a handshake is bounded
//! in time, and at most `MAX_HANDSHAKES` run at once (the acceptor drops
//! connections beyond that, with one line on stderr per burst); a frame
//! buffer grows only as bytes arrive (a huge length field costs nothing
//! until the bytes come); a frame longer than `MAX_FRAME`, of an unknown
//! type, or cut short closes that connection with a line on stderr; a
//! peer silent for `net_ticktime` is taken for dead. None of these stops
//! the node or touches another connection.

use super::{Blocking, block_on, cookie_for, log, this};
use crate::runtime::nodes as rt;
use crate::sched::Pid;
use crate::sched::outside::Target;
use crate::term::{Atom, node};
use eetf::{FixInteger, Pid as EPid, Term as ETerm, Tuple};
use erl_dist::DistributionFlags;
use erl_dist::LOWEST_DISTRIBUTION_PROTOCOL_VERSION;
use erl_dist::epmd::EpmdClient;
use erl_dist::handshake::{ClientSideHandshake, HandshakeStatus, ServerSideHandshake};
use erl_dist::node::{Creation, LocalNode};
use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

const SEND: i32 = 2;
const REG_SEND: i32 = 6;
const SEND_TT: i32 = 12;
const REG_SEND_TT: i32 = 16;
const SEND_SENDER: i32 = 22;
const SEND_SENDER_TT: i32 = 23;
const MONITOR_P: i32 = 19;
const DEMONITOR_P: i32 = 20;
const MONITOR_P_EXIT: i32 = 21;
const SPAWN_REQUEST: i32 = 29;
const SPAWN_REQUEST_TT: i32 = 30;
const SPAWN_REPLY: i32 = 31;
const SPAWN_REPLY_TT: i32 = 32;
/// The pass-through type byte of every frame after the handshake.
const PASS_THROUGH: u8 = 112;
/// A frame longer than this is taken for garbage and closes the connection.
const MAX_FRAME: usize = 1 << 30;
/// `net_ticktime` in seconds (60 as in OTP): a peer silent that long is
/// taken for dead, and a connection with nothing to send ticks four
/// times in that span.
static NET_TICKTIME: AtomicU64 = AtomicU64::new(60);
/// Handshakes under way on accepted sockets, and whether the acceptor
/// is refusing connections because there are `MAX_HANDSHAKES` of them.
static HANDSHAKES: AtomicUsize = AtomicUsize::new(0);
static REFUSING: AtomicBool = AtomicBool::new(false);
const MAX_HANDSHAKES: usize = 64;
/// How often a reader thread standing aside for a scheduler that waits
/// on the connections (`Poller`) looks again: the longest a message
/// waits when every scheduler turned busy meanwhile.
const STANDBY: Duration = Duration::from_millis(5);
/// The most bytes an idle scheduler reads from one connection before it
/// goes back to deliver them and run processes (a flood of input must
/// not keep it reading while the receivers wait).
const POLLER_BUDGET: usize = 1 << 18;
/// The most bytes the reader thread reads before it looks again whether
/// a scheduler watches.
const READER_BUDGET: usize = 1 << 20;
/// Sends closer together than this are a burst (see `Out::last_direct`).
const BURST: Duration = Duration::from_micros(20);
/// A connection with more outbound bytes than this is busy (BEAM's
/// default `dist_buf_busy_limit`, 1 MB)...
pub const BUSY_LIMIT: usize = 1 << 20;
/// ...until the writer drains it below this.
const BUSY_LOW: usize = BUSY_LIMIT / 2;
/// How long the end of the program waits for outbound frames to go.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// Bounds on the steps of dialing and of a handshake.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Connecting,
    Up,
    Down,
}

struct Out {
    state: State,
    /// The socket's descriptor once up, for sends straight from the
    /// sender (non-blocking) when nothing else is in flight.
    fd: i32,
    /// The writer holds a batch it has not finished writing.
    writing: bool,
    /// When a sender last wrote to the socket itself. A send soon after
    /// another is part of a burst: it joins the writer's next batch (one
    /// `write` for many frames) instead of costing a system call.
    last_direct: Option<Instant>,
    /// Whole frames waiting for the writer, back to back.
    buf: Vec<u8>,
    /// The bytes of the batch the writer is writing.
    in_flight: usize,
    /// Past `BUSY_LIMIT` and not yet drained below `BUSY_LOW`.
    busy: bool,
    /// Processes suspended until the connection is no longer busy.
    suspended: Vec<Pid>,
    /// Processes waiting in `net_kernel:connect_node` for the outcome.
    waiters: Vec<Pid>,
    /// Why the writer could not write: it shut the socket down and left
    /// the report (and `fail`) to whoever reads the end (see `drain`).
    lost: Option<String>,
}

struct Conn {
    peer: Atom,
    /// The peer connected as a hidden node (no `PUBLISHED` flag):
    /// listed by `nodes(hidden)`, not `nodes()`.
    hidden: AtomicBool,
    out: Mutex<Out>,
    changed: Condvar,
    /// The socket once up, kept to shut it down (which ends the reader).
    socket: Mutex<Option<TcpStream>>,
    /// The reading end once up: whoever holds this lock reads the
    /// socket (without blocking) and handles the frames, in order.
    input: Mutex<Option<Input>>,
    /// The reading end's descriptor while the connection is up, else -1:
    /// what an idle scheduler waits on (`Poller`). The descriptor stays
    /// open as long as the connection (`input` keeps its stream).
    input_fd: AtomicI32,
    /// When bytes last came, in `since_start` nanoseconds (a peer silent
    /// for `net_ticktime` is dead).
    last_input: AtomicU64,
}

/// Nanoseconds since the first call: a clock that fits an atomic.
fn since_start() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A connection's reading end and the bytes read but not yet handled.
struct Input {
    stream: TcpStream,
    /// Bytes read: whole frames are handled and dropped, a partial one
    /// waits for the rest. It grows only as bytes arrive.
    buf: Vec<u8>,
    /// The connection ended here (closed, or broken by the peer): the
    /// other thread that reads must not report it again.
    closed: bool,
}

impl Conn {
    fn lock(&self) -> MutexGuard<'_, Out> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn conns() -> MutexGuard<'static, HashMap<Atom, Arc<Conn>>> {
    static CONNS: OnceLock<Mutex<HashMap<Atom, Arc<Conn>>>> = OnceLock::new();
    CONNS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `monitor_node(Node, true)` calls not yet answered, per node.
fn node_watchers() -> MutexGuard<'static, HashMap<Atom, Vec<Pid>>> {
    static WATCHERS: OnceLock<Mutex<HashMap<Atom, Vec<Pid>>>> = OnceLock::new();
    WATCHERS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn new_conn(peer: Atom) -> Arc<Conn> {
    Arc::new(Conn {
        peer,
        hidden: AtomicBool::new(false),
        out: Mutex::new(Out {
            state: State::Connecting,
            fd: -1,
            writing: false,
            last_direct: None,
            buf: Vec::new(),
            in_flight: 0,
            busy: false,
            suspended: Vec::new(),
            waiters: Vec::new(),
            lost: None,
        }),
        changed: Condvar::new(),
        socket: Mutex::new(None),
        input: Mutex::new(None),
        input_fd: AtomicI32::new(-1),
        last_input: AtomicU64::new(0),
    })
}

/// The live connection to `peer`, dialing it first if there is none.
fn conn_for(peer: Atom) -> Arc<Conn> {
    let mut map = conns();
    if let Some(c) = map.get(&peer) {
        return c.clone();
    }
    let c = new_conn(peer);
    map.insert(peer, c.clone());
    drop(map);
    let dialing = c.clone();
    if std::thread::Builder::new()
        .name("dist connect".into())
        .spawn(move || connector(dialing))
        .is_err()
    {
        fail(&c);
    }
    c
}

/// What `connect` found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Connect {
    Yes,
    No,
    /// A handshake is under way: `{'$dist_connected', Node, Bool}` will
    /// reach the waiter.
    Wait,
}

/// `net_kernel:connect_node(Peer)`, without blocking: the outcome now,
/// or `Wait` after registering `waiter` for it.
pub fn connect(peer: Atom, waiter: Pid) -> Connect {
    let Some(n) = this() else {
        return Connect::No;
    };
    if peer == n.name {
        return Connect::Yes;
    }
    if !valid_name(peer) {
        return Connect::No;
    }
    let c = conn_for(peer);
    let mut out = c.lock();
    match out.state {
        State::Up => Connect::Yes,
        State::Down => Connect::No,
        State::Connecting => {
            out.waiters.push(waiter);
            Connect::Wait
        }
    }
}

pub(super) fn valid_name(peer: Atom) -> bool {
    matches!(peer.name().split_once('@'), Some((a, h)) if !a.is_empty() && !h.is_empty())
}

/// `erlang:disconnect_node(Peer)`: whether a connection was there.
pub fn disconnect(peer: Atom) -> bool {
    let c = conns().get(&peer).cloned();
    match c {
        Some(c) => {
            let was_up = c.lock().state == State::Up;
            fail(&c);
            was_up
        }
        None => false,
    }
}

/// The nodes connected now: the visible ones (`nodes()`) when `hidden`
/// is false, else the hidden ones (`nodes(hidden)`).
pub fn nodes(hidden: bool) -> Vec<Atom> {
    let mut v: Vec<Atom> = conns()
        .values()
        .filter(|c| c.lock().state == State::Up && c.hidden.load(Ordering::Relaxed) == hidden)
        .map(|c| c.peer)
        .collect();
    v.sort_by(|a, b| a.name().cmp(b.name()));
    v
}

/// Processes that asked `net_kernel:monitor_nodes(true)`: each gets
/// `{nodeup, Node}` and `{nodedown, Node}` for visible nodes.
fn node_subscribers() -> MutexGuard<'static, Vec<Pid>> {
    static SUBSCRIBERS: OnceLock<Mutex<Vec<Pid>>> = OnceLock::new();
    SUBSCRIBERS
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `net_kernel:monitor_nodes(Flag)` for `subscriber`: on adds one
/// subscription, off drops one (as OTP counts them).
pub fn monitor_nodes(subscriber: Pid, on: bool) {
    let mut s = node_subscribers();
    if on {
        s.push(subscriber);
    } else if let Some(i) = s.iter().position(|&p| p == subscriber) {
        s.remove(i);
    }
}

fn tell_subscribers(c: &Conn, up: bool) {
    if c.hidden.load(Ordering::Relaxed) {
        return;
    }
    let subscribers = node_subscribers().clone();
    for p in subscribers {
        let message = if up {
            rt::nodeup(c.peer)
        } else {
            rt::nodedown(c.peer)
        };
        rt::deliver(Target::Pid(p), message);
    }
}

/// `net_kernel:get_net_ticktime()`.
pub fn net_ticktime() -> u64 {
    NET_TICKTIME.load(Ordering::Relaxed)
}

/// `net_kernel:set_net_ticktime(Seconds)`: applies to the connections
/// up now and to later ones. False when `seconds` is already the value.
pub fn set_net_ticktime(seconds: u64) -> bool {
    let seconds = seconds.max(1);
    if NET_TICKTIME.swap(seconds, Ordering::Relaxed) == seconds {
        return false;
    }
    let all: Vec<Arc<Conn>> = conns().values().cloned().collect();
    for c in all {
        if let Some(s) = c.socket.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = s.set_read_timeout(Some(Duration::from_secs(seconds)));
        }
        c.changed.notify_all();
    }
    true
}

/// How long a connection with nothing to send waits before a tick.
fn tick_interval() -> Duration {
    Duration::from_millis(net_ticktime() * 1000 / 4)
}

/// `monitor_node(Peer, true)`: `{nodedown, Peer}` reaches `watcher` when
/// the connection goes down, or at once if it cannot be made.
pub fn monitor_node(peer: Atom, watcher: Pid) {
    if this().is_some_and(|n| n.name == peer) {
        return;
    }
    if this().is_none() || !valid_name(peer) {
        rt::deliver(Target::Pid(watcher), rt::nodedown(peer));
        return;
    }
    let c = conn_for(peer);
    let out = c.lock();
    if out.state == State::Down {
        drop(out);
        rt::deliver(Target::Pid(watcher), rt::nodedown(peer));
        return;
    }
    // Registered under the connection's lock: `fail` takes the watchers
    // after it marks the connection down, so none is missed.
    node_watchers().entry(peer).or_default().push(watcher);
}

/// `monitor_node(Peer, false)`: drops one of `watcher`'s monitors.
pub fn demonitor_node(peer: Atom, watcher: Pid) {
    let mut w = node_watchers();
    if let Some(list) = w.get_mut(&peer)
        && let Some(i) = list.iter().position(|&p| p == watcher)
    {
        list.remove(i);
    }
}

// ---------------------------------------------------------------------
// Sending.

pub(super) fn local_epid(pid: Pid) -> EPid {
    let t = node::this_node();
    EPid::new(
        t.name.name(),
        pid.id() as u32,
        (pid.id() >> 32) as u32,
        t.creation,
    )
}

pub(super) fn control(elements: Vec<ETerm>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    // Encoding into a Vec cannot fail for these terms.
    let _ = ETerm::from(Tuple { elements }).encode(&mut out);
    out
}

pub(super) fn tag(n: i32) -> ETerm {
    ETerm::from(FixInteger { value: n })
}

fn atom(name: &str) -> ETerm {
    ETerm::from(eetf::Atom::from(name))
}

/// How a message to another node went (what `erlang:send/3` answers).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sent {
    /// Queued (or dropped, as Erlang drops a message to a node that
    /// cannot be reached).
    Ok,
    /// Queued on a busy connection to this node: the sender must
    /// suspend; it is resumed (`runtime::nodes::resume`) when the
    /// connection drains, and asks `still_busy` then.
    Suspend(Atom),
    /// Not sent: the connection is busy and the send said `nosuspend`.
    NoSuspend,
    /// Not sent: there is no connection and the send said `noconnect`.
    NoConnect,
}

/// The options of `erlang:send/3` that matter for another node.
#[derive(Clone, Copy, Default, Debug)]
pub struct SendOptions {
    pub nosuspend: bool,
    pub noconnect: bool,
}

/// `Pid ! Msg` from `from` to the pid `id` of node table entry
/// `node_index`; `payload` is the message in the external format (with
/// its 131).
pub fn send_to_pid(
    from: Pid,
    node_index: u32,
    id: u64,
    payload: &[u8],
    options: SendOptions,
) -> Sent {
    let entry = node::entry(node_index);
    let name = entry.name.name();
    // `{2, '', To}` written by hand: this is the hot path of a remote
    // send, and the term is always the same shape.
    let mut ctrl = Vec::with_capacity(24 + name.len());
    ctrl.extend_from_slice(&[131, 104, 3, 97, SEND as u8, 119, 0, 88]);
    put_atom(&mut ctrl, name);
    ctrl.extend_from_slice(&(id as u32).to_be_bytes());
    ctrl.extend_from_slice(&((id >> 32) as u32).to_be_bytes());
    ctrl.extend_from_slice(&entry.creation.to_be_bytes());
    send_message(from, entry.name, &ctrl, payload, options)
}

/// An atom in the external format (UTF-8, short or long form).
fn put_atom(out: &mut Vec<u8>, name: &str) {
    if let Ok(len) = u8::try_from(name.len()) {
        out.extend_from_slice(&[119, len]);
    } else {
        out.push(118);
        out.extend_from_slice(&(name.len() as u16).to_be_bytes());
    }
    out.extend_from_slice(name.as_bytes());
}

/// The addressee and payload of a SEND or SEND_SENDER frame to a pid of
/// this node, read without building the control term (the hot path of
/// a remote receive). `None` for any other frame, or an encoding this
/// does not expect: the full decoder takes those.
fn fast_send(bytes: &[u8]) -> Option<(Pid, &[u8])> {
    if bytes.get(..4)? != [131, 104, 3, 97] {
        return None;
    }
    let at = match *bytes.get(4)? as i32 {
        SEND => skip_atom(bytes, 5)?,
        SEND_SENDER => skip_pid(bytes, 5)?,
        _ => return None,
    };
    if *bytes.get(at)? != 88 {
        return None;
    }
    let (name, at) = atom_at(bytes, at + 1)?;
    if name != node::this_node().name.name().as_bytes() {
        return None;
    }
    let word = |i: usize| -> Option<u64> {
        Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?) as u64)
    };
    let (id, serial) = (word(at)?, word(at + 4)?);
    word(at + 8)?; // the creation, which local_pid does not check either
    Some((Pid::from_id(id | serial << 32), &bytes[at + 12..]))
}

/// The name of the atom at `at` and the index after it.
fn atom_at(bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let (len, start) = match *bytes.get(at)? {
        119 | 115 => (*bytes.get(at + 1)? as usize, at + 2),
        118 | 100 => (
            u16::from_be_bytes(bytes.get(at + 1..at + 3)?.try_into().ok()?) as usize,
            at + 3,
        ),
        _ => return None,
    };
    Some((bytes.get(start..start + len)?, start + len))
}

fn skip_atom(bytes: &[u8], at: usize) -> Option<usize> {
    atom_at(bytes, at).map(|(_, next)| next)
}

fn skip_pid(bytes: &[u8], at: usize) -> Option<usize> {
    if *bytes.get(at)? != 88 {
        return None;
    }
    let next = skip_atom(bytes, at + 1)? + 12;
    (next <= bytes.len()).then_some(next)
}

/// `{Name, Peer} ! Msg` from `from`.
pub fn send_to_name(
    from: Pid,
    peer: Atom,
    name: Atom,
    payload: &[u8],
    options: SendOptions,
) -> Sent {
    let ctrl = control(vec![
        tag(REG_SEND),
        ETerm::from(local_epid(from)),
        atom(""),
        atom(name.name()),
    ]);
    send_message(from, peer, &ctrl, payload, options)
}

/// A message frame from `from` for `peer`, under back-pressure.
fn send_message(from: Pid, peer: Atom, ctrl: &[u8], payload: &[u8], options: SendOptions) -> Sent {
    if this().is_none() || !valid_name(peer) {
        // Dropped, as Erlang drops it; unless the send said it would
        // rather not connect, which BEAM answers so here too.
        return if options.noconnect {
            Sent::NoConnect
        } else {
            Sent::Ok
        };
    }
    let c = if options.noconnect {
        match conns().get(&peer) {
            Some(c) => c.clone(),
            None => return Sent::NoConnect,
        }
    } else {
        conn_for(peer)
    };
    let mode = if options.nosuspend {
        Mode::NoSuspend
    } else {
        Mode::Message(from)
    };
    match push_frame(&c, ctrl, payload, mode) {
        Pushed::Queued | Pushed::Dropped => Sent::Ok,
        Pushed::Busy => Sent::Suspend(peer),
        Pushed::Refused => Sent::NoSuspend,
    }
}

/// Whether the connection to `peer` is still busy, for `pid` suspended
/// on it; if so `pid` is listed again to be resumed.
pub fn still_busy(peer: Atom, pid: Pid) -> bool {
    let Some(c) = conns().get(&peer).cloned() else {
        return false;
    };
    let mut out = c.lock();
    if !out.busy || out.state == State::Down {
        return false;
    }
    if !out.suspended.contains(&pid) {
        out.suspended.push(pid);
    }
    true
}

/// Waits (at most `timeout`) until every connection has written what
/// was queued for it or is down: the end of the program, so that no
/// message sent before it is lost.
pub fn flush(timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let all: Vec<Arc<Conn>> = conns().values().cloned().collect();
        let pending = all.iter().any(|c| {
            let out = c.lock();
            out.state != State::Down && (!out.buf.is_empty() || out.writing)
        });
        if !pending || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Appends a frame for `peer`, dialing it if needed. Dropped (as Erlang
/// drops a message to an unreachable node) when this node is not alive
/// or the connection failed; false then.
pub(super) fn queue(peer: Atom, ctrl: &[u8], payload: &[u8]) -> bool {
    if this().is_none() || !valid_name(peer) {
        return false;
    }
    let c = conn_for(peer);
    push_frame(&c, ctrl, payload, Mode::Control) != Pushed::Dropped
}

/// Who pushes a frame, for back-pressure.
#[derive(Clone, Copy)]
enum Mode {
    /// A control message of this node's own: never held back.
    Control,
    /// A message from this process, which suspends on a busy connection.
    Message(Pid),
    /// A message sent with `nosuspend`: not made on a busy connection.
    NoSuspend,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pushed {
    Queued,
    /// Queued, and the connection is busy: the sender is listed to be
    /// resumed and must suspend.
    Busy,
    /// Not queued: busy, and the sender would not suspend.
    Refused,
    /// The connection is down.
    Dropped,
}

fn push_frame(c: &Conn, ctrl: &[u8], payload: &[u8], mode: Mode) -> Pushed {
    let mut out = c.lock();
    if out.state == State::Down {
        return Pushed::Dropped;
    }
    if out.busy && matches!(mode, Mode::NoSuspend) {
        return Pushed::Refused;
    }
    let was_empty = out.buf.is_empty();
    let len = (1 + ctrl.len() + payload.len()) as u32;
    out.buf.extend_from_slice(&len.to_be_bytes());
    out.buf.push(PASS_THROUGH);
    out.buf.extend_from_slice(ctrl);
    out.buf.extend_from_slice(payload);
    let mut pushed = Pushed::Queued;
    if let Mode::Message(sender) = mode
        && (out.busy || out.buf.len() + out.in_flight >= BUSY_LIMIT)
    {
        out.busy = true;
        if !out.suspended.contains(&sender) {
            out.suspended.push(sender);
        }
        pushed = Pushed::Busy;
    }
    let up = out.state == State::Up;
    if !(was_empty && up) {
        // The writer is awake, or will be when the connection is up.
        return pushed;
    }
    let now = Instant::now();
    let burst = out
        .last_direct
        .is_some_and(|t| now.saturating_duration_since(t) < BURST);
    if !out.writing && out.fd >= 0 && !burst {
        out.last_direct = Some(now);
        // Nothing in flight: try the socket now, without blocking, and
        // leave the writer asleep if it all went (order is kept: the
        // buffer was empty and the writer idle).
        // SAFETY: `fd` is the connection's open socket (closed only after
        // the state turns Down, under this lock); the pointer and length
        // describe `out.buf`.
        let n = unsafe {
            libc::send(
                out.fd,
                out.buf.as_ptr().cast(),
                out.buf.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n > 0 {
            out.buf.drain(..n as usize);
            if out.buf.is_empty() {
                return pushed;
            }
        }
    }
    drop(out);
    // The writer only waits on an empty buffer.
    c.changed.notify_one();
    pushed
}

// ---------------------------------------------------------------------
// Connection set-up.

fn local_node() -> Option<LocalNode> {
    let n = this()?;
    let mut local = LocalNode::new(n.name.name().parse().ok()?, Creation::new(n.creation));
    local.flags |= DistributionFlags::PUBLISHED
        | DistributionFlags::DIST_MONITOR
        | DistributionFlags::DIST_MONITOR_NAME
        | DistributionFlags::SPAWN
        | DistributionFlags::UNICODE_IO;
    Some(local)
}

/// Dials `c.peer` and installs the connection, or fails it.
fn connector(c: Arc<Conn>) {
    super::wait_ready();
    match dial(c.peer) {
        Ok(Some((stream, hidden))) => install(&c, stream, hidden),
        Ok(None) => {
            // The peer is dialing us at the same time and its connection
            // wins: wait for the acceptor to install it.
            let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
            let mut out = c.lock();
            while out.state == State::Connecting && Instant::now() < deadline {
                out = c
                    .changed
                    .wait_timeout(out, Duration::from_millis(200))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            let still = out.state == State::Connecting;
            drop(out);
            if still {
                fail(&c);
            }
        }
        Err(Dial::Unreachable) => fail(&c),
        Err(Dial::Refused(e)) => {
            log(&format!("cannot connect to {}: {e}", c.peer.name()));
            fail(&c);
        }
    }
}

/// Why dialing failed: the peer is not there (quietly `pang`, as in
/// Erlang), or it refused us (worth a line on stderr).
enum Dial {
    Unreachable,
    Refused(String),
}

impl From<String> for Dial {
    fn from(e: String) -> Dial {
        Dial::Refused(e)
    }
}

impl From<&str> for Dial {
    fn from(e: &str) -> Dial {
        Dial::Refused(e.to_string())
    }
}

fn dial(peer: Atom) -> Result<Option<(TcpStream, bool)>, Dial> {
    let (alive, host) = peer.name().split_once('@').ok_or("not a node name")?;
    let resolve = |port: u16| -> Result<std::net::SocketAddr, Dial> {
        (host, port)
            .to_socket_addrs()
            .map_err(|_| Dial::Unreachable)?
            .find(|a| a.is_ipv4())
            .ok_or(Dial::Unreachable)
    };
    let epmd = TcpStream::connect_timeout(&resolve(super::epmd_port())?, CONNECT_TIMEOUT)
        .map_err(|_| Dial::Unreachable)?;
    let _ = epmd.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let entry = block_on(EpmdClient::new(Blocking(epmd)).get_node(alive))
        .map_err(|_| Dial::Unreachable)?
        .ok_or(Dial::Unreachable)?;
    let stream = TcpStream::connect_timeout(&resolve(entry.port)?, CONNECT_TIMEOUT)
        .map_err(|_| Dial::Unreachable)?;
    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let local = local_node().ok_or("not alive")?;
    let mut hs = ClientSideHandshake::new(Blocking(stream), local, &cookie_for(peer));
    let status = block_on(hs.execute_send_name(LOWEST_DISTRIBUTION_PROTOCOL_VERSION))
        .map_err(|e| format!("handshake: {e}"))?;
    match status {
        HandshakeStatus::Nok => return Ok(None),
        HandshakeStatus::NotAllowed => return Err("the peer does not allow us".into()),
        _ => {}
    }
    let (stream, node) = block_on(hs.execute_rest(true)).map_err(|e| format!("handshake: {e}"))?;
    Ok(Some((stream.0, hidden(&node))))
}

/// Accepts connections for as long as the program runs.
pub(super) fn accept_loop(listener: TcpListener) {
    for stream in listener.incoming() {
        match stream {
            Ok(stream) => {
                if HANDSHAKES.load(Ordering::Relaxed) >= MAX_HANDSHAKES {
                    // A flood: drop the socket at once, one line per burst.
                    if !REFUSING.swap(true, Ordering::Relaxed) {
                        log(&format!(
                            "{MAX_HANDSHAKES} handshakes under way: refusing connections until they end"
                        ));
                    }
                    drop(stream);
                    continue;
                }
                REFUSING.store(false, Ordering::Relaxed);
                HANDSHAKES.fetch_add(1, Ordering::Relaxed);
                let spawned = std::thread::Builder::new()
                    .name("dist accept".into())
                    .spawn(move || {
                        accept(stream);
                        HANDSHAKES.fetch_sub(1, Ordering::Relaxed);
                    });
                if spawned.is_err() {
                    HANDSHAKES.fetch_sub(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                log(&format!("accept: {e}"));
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn accept(stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    // A socket closed (or silent) before its first byte is not worth a
    // line: port scanners and floods do that.
    if !matches!(stream.peek(&mut [0u8; 1]), Ok(n) if n > 0) {
        return;
    }
    super::wait_ready();
    let (Some(local), Some(n)) = (local_node(), this()) else {
        return;
    };
    let cookie = n.cookie.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut hs = ServerSideHandshake::new(Blocking(stream), local, &cookie);
    let peer = match block_on(hs.execute_recv_name()) {
        Ok(Some(name)) => name.to_string(),
        Ok(None) => {
            let _ = block_on(hs.execute_rest(HandshakeStatus::NotAllowed));
            log("refused a peer that asked for a dynamic name");
            return;
        }
        Err(e) => {
            log(&format!("refused a peer: {e}"));
            return;
        }
    };
    let Some(peer) = Atom::try_intern(&peer) else {
        return;
    };
    // Which connection this handshake is for, and what to answer.
    let (conn, status, created) = {
        let mut map = conns();
        match map.get(&peer) {
            Some(c) => {
                let state = c.lock().state;
                if state == State::Up || n.name.name() > peer.name() {
                    // Up already, or our own dialing wins a simultaneous
                    // connect.
                    (None, HandshakeStatus::Nok, false)
                } else {
                    (Some(c.clone()), HandshakeStatus::OkSimultaneous, false)
                }
            }
            None => {
                let c = new_conn(peer);
                map.insert(peer, c.clone());
                (Some(c), HandshakeStatus::Ok, true)
            }
        }
    };
    let Some(conn) = conn else {
        let _ = block_on(hs.execute_rest(HandshakeStatus::Nok));
        return;
    };
    match block_on(hs.execute_rest(status)) {
        Ok((stream, node)) => install(&conn, stream.0, hidden(&node)),
        Err(e) => {
            log(&format!("refused {}: {e}", peer.name()));
            if created {
                fail(&conn);
            }
        }
    }
}

/// Whether a peer connected as a hidden node.
fn hidden(peer: &erl_dist::node::PeerNode) -> bool {
    !peer.flags.contains(DistributionFlags::PUBLISHED)
}

/// Puts a connection whose handshake succeeded to work: its reader and
/// writer threads, and the answer to whoever waited.
fn install(c: &Arc<Conn>, stream: TcpStream, hidden: bool) {
    let (Ok(reader), Ok(writer)) = (stream.try_clone(), stream.try_clone()) else {
        fail(c);
        return;
    };
    // Reads never block (see `drain`); writes by the writer thread do.
    let _ = stream.set_read_timeout(None);
    let _ = stream.set_nodelay(true);
    c.hidden.store(hidden, Ordering::Relaxed);
    let waiters = {
        let mut out = c.lock();
        if out.state != State::Connecting {
            // The other handshake of a simultaneous connect got there first.
            return;
        }
        out.state = State::Up;
        out.fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
        let fd = std::os::fd::AsRawFd::as_raw_fd(&reader);
        *c.input.lock().unwrap_or_else(|e| e.into_inner()) = Some(Input {
            stream: reader,
            buf: Vec::new(),
            closed: false,
        });
        c.last_input.store(since_start(), Ordering::Relaxed);
        c.input_fd.store(fd, Ordering::SeqCst);
        LIVE.fetch_add(1, Ordering::SeqCst);
        Poller::renew();
        *c.socket.lock().unwrap_or_else(|e| e.into_inner()) = Some(stream);
        std::mem::take(&mut out.waiters)
    };
    c.changed.notify_all();
    for w in waiters {
        rt::deliver(Target::Pid(w), rt::connected(c.peer, true));
    }
    tell_subscribers(c, true);
    let (r, w) = (c.clone(), c.clone());
    let ok = std::thread::Builder::new()
        .name("dist write".into())
        .spawn(move || write_loop(&w, writer))
        .is_ok()
        && std::thread::Builder::new()
            .name("dist read".into())
            .spawn(move || read_loop(&r))
            .is_ok();
    if !ok {
        fail(c);
    }
}

/// Marks the connection down for good: drops what was queued, answers
/// the waiters, tells the `monitor_node` watchers, closes the socket.
fn fail(c: &Arc<Conn>) {
    let (waiters, was_up, suspended) = {
        let mut out = c.lock();
        if out.state == State::Down {
            return;
        }
        let was_up = out.state == State::Up;
        out.state = State::Down;
        out.fd = -1;
        if c.input_fd.swap(-1, Ordering::SeqCst) >= 0 {
            LIVE.fetch_sub(1, Ordering::SeqCst);
        }
        out.buf = Vec::new();
        out.busy = false;
        (
            std::mem::take(&mut out.waiters),
            was_up,
            std::mem::take(&mut out.suspended),
        )
    };
    for p in suspended {
        rt::resume(p);
    }
    c.changed.notify_all();
    {
        let mut map = conns();
        if map.get(&c.peer).is_some_and(|m| Arc::ptr_eq(m, c)) {
            map.remove(&c.peer);
        }
    }
    if let Some(s) = c.socket.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
    for w in waiters {
        rt::deliver(Target::Pid(w), rt::connected(c.peer, false));
    }
    if was_up {
        tell_subscribers(c, false);
    }
    super::watch::node_down(c.peer);
    super::links::node_down(c.peer);
    super::spawn::node_down(c.peer);
    let watchers = node_watchers().remove(&c.peer).unwrap_or_default();
    for w in watchers {
        rt::deliver(Target::Pid(w), rt::nodedown(c.peer));
    }
}

// ---------------------------------------------------------------------
// The threads of a connection.

fn write_loop(c: &Arc<Conn>, mut stream: TcpStream) {
    let mut batch: Vec<u8> = Vec::new();
    loop {
        {
            let mut out = c.lock();
            loop {
                if out.state == State::Down {
                    return;
                }
                if !out.buf.is_empty() {
                    std::mem::swap(&mut out.buf, &mut batch);
                    out.in_flight = batch.len();
                    out.writing = true;
                    break;
                }
                let (o, timeout) = c
                    .changed
                    .wait_timeout(out, tick_interval())
                    .unwrap_or_else(|e| e.into_inner());
                out = o;
                if timeout.timed_out() && out.buf.is_empty() && out.state == State::Up {
                    batch.extend_from_slice(&[0, 0, 0, 0]);
                    out.writing = true;
                    break;
                }
            }
        }
        if let Err(e) = stream.write_all(&batch) {
            // The peer is gone (or broke the connection). The reading
            // side reports the end, once: it may still hold the start of
            // a frame the peer cut short, which says more than this
            // error. Shutting the socket down makes sure it sees the end.
            {
                let mut out = c.lock();
                out.lost = Some(format!("lost {}: {e}", c.peer.name()));
                out.writing = false;
                out.fd = -1;
            }
            let _ = stream.shutdown(std::net::Shutdown::Both);
            return;
        }
        batch.clear();
        let resumed = {
            let mut out = c.lock();
            out.writing = false;
            out.in_flight = 0;
            if out.busy && out.buf.len() < BUSY_LOW {
                out.busy = false;
                std::mem::take(&mut out.suspended)
            } else {
                Vec::new()
            }
        };
        for p in resumed {
            rt::resume(p);
        }
    }
}

/// The reader thread of a connection: it sleeps until input comes, then
/// reads and handles it; whoever holds `input` reads, so frames keep
/// their order. While an idle scheduler watches the connections
/// (`Poller`) the reader stands aside (it looks again every `STANDBY`),
/// so one message wakes one thread: the scheduler that will run its
/// receiver.
fn read_loop(c: &Arc<Conn>) {
    let fd = c.input_fd.load(Ordering::SeqCst);
    loop {
        if fd < 0 || c.lock().state == State::Down {
            break;
        }
        let silence = Duration::from_secs(net_ticktime());
        let since = Duration::from_nanos(
            since_start().saturating_sub(c.last_input.load(Ordering::Relaxed)),
        );
        if since >= silence {
            log(&format!(
                "{} sent nothing for {} s (net_ticktime): closing",
                c.peer.name(),
                net_ticktime()
            ));
            break;
        }
        if Poller::watching() {
            std::thread::sleep(STANDBY);
            continue;
        }
        // At most a second at a time, so a shorter net_ticktime set
        // meanwhile is seen.
        wait_input(&[fd], Some((silence - since).min(Duration::from_secs(1))));
        if Poller::watching() {
            continue; // the scheduler reads it
        }
        let mut input = c.input.lock().unwrap_or_else(|e| e.into_inner());
        let Some(i) = input.as_mut() else {
            break;
        };
        // Bounded too: a scheduler that starts watching meanwhile would
        // otherwise find the socket readable and the lock taken, again
        // and again, for as long as a flood lasts.
        if let Err(e) = drain(c, i, READER_BUDGET) {
            drop(input);
            if let Some(e) = e {
                log(&e);
            }
            break;
        }
    }
    fail(c);
}

/// Sleeps until one of `fds` has input or is closed, or `timeout`
/// passes; the descriptors with something to read.
fn wait_input(fds: &[i32], timeout: Option<Duration>) -> Vec<bool> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    // SAFETY: `polled` is a live array of `fds.len()` pollfds, `ts` a
    // timespec or null.
    let n = unsafe {
        libc::ppoll(
            polled.as_mut_ptr(),
            polled.len() as libc::nfds_t,
            ts.as_ref().map_or(std::ptr::null(), |t| t as *const _),
            std::ptr::null(),
        )
    };
    polled.iter().map(|p| n > 0 && p.revents != 0).collect()
}

/// Reads what the socket holds now, without blocking, and handles every
/// whole frame in it. `Err` when the connection must close (with the
/// line to log, if any): the peer closed it, or sent what breaks it.
fn drain(c: &Arc<Conn>, input: &mut Input, budget: usize) -> Result<(), Option<String>> {
    if input.closed {
        return Err(None); // told once already, by whoever read it first
    }
    let result = drain_open(c, input, budget);
    if result.is_err() {
        input.closed = true;
        input.buf = Vec::new();
    }
    result
}

fn drain_open(c: &Arc<Conn>, input: &mut Input, budget: usize) -> Result<(), Option<String>> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&input.stream);
    let mut taken = 0;
    loop {
        if taken >= budget {
            return Ok(()); // the rest is still there for the next `poll`
        }
        let buf = &mut input.buf;
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(1 << 16);
        }
        let spare = buf.capacity() - buf.len();
        // SAFETY: the pointer and length name the vector's spare
        // capacity; `recv` writes at most that many bytes.
        let n = unsafe {
            libc::recv(
                fd,
                buf.as_mut_ptr().add(buf.len()).cast(),
                spare,
                libc::MSG_DONTWAIT,
            )
        };
        if n > 0 {
            // SAFETY: `recv` initialized `n` more bytes.
            unsafe { buf.set_len(buf.len() + n as usize) };
            let now = since_start();
            c.last_input.store(now, Ordering::Relaxed);
            LAST_INPUT.store(now, Ordering::Relaxed);
            taken += n as usize;
            frames(c, &mut input.buf)?;
            if (n as usize) < spare {
                // A short read took all there was: no second call just
                // to hear EAGAIN (what comes later wakes `poll` again).
                return Ok(());
            }
            continue;
        }
        if n == 0 {
            return Err(ended(c, &input.buf));
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::WouldBlock => return Ok(()),
            std::io::ErrorKind::Interrupted => continue,
            // A reset: the peer closed with our bytes unread (say, a
            // message sent while it was closing), or the writer shut the
            // socket down on its error. Still an end like the other.
            _ => return Err(ended(c, &input.buf)),
        }
    }
}

/// The line that reports the end of a connection's input, if any: the
/// one place that says how a connection ended, whether the end came as
/// a close or a reset and whoever read it (the reader thread or an idle
/// scheduler). A frame cut short says so; else the writer's error, if
/// it failed first; a plain close says nothing.
fn ended(c: &Conn, buf: &[u8]) -> Option<String> {
    if let Some(head) = buf.get(..4) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        return Some(format!(
            "{} closed in the middle of a frame ({} of {len} bytes): closing",
            c.peer.name(),
            buf.len() - 4
        ));
    }
    if !buf.is_empty() {
        return Some(format!(
            "{} closed in the middle of a frame's length ({} of 4 bytes): closing",
            c.peer.name(),
            buf.len()
        ));
    }
    c.lock().lost.take()
}

/// Handles the whole frames at the start of `buf` and drops them.
fn frames(c: &Arc<Conn>, buf: &mut Vec<u8>) -> Result<(), Option<String>> {
    let mut at = 0;
    let result = loop {
        let Some(head) = buf.get(at..at + 4) else {
            break Ok(());
        };
        let n = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if n == 0 {
            at += 4; // a tick
            continue;
        }
        if n > MAX_FRAME {
            break Err(Some(format!(
                "{} sent a frame of {n} bytes: closing",
                c.peer.name()
            )));
        }
        let Some(frame) = buf.get(at + 4..at + 4 + n) else {
            break Ok(());
        };
        if frame[0] != PASS_THROUGH {
            break Err(Some(format!(
                "{} sent a frame of type {}: closing",
                c.peer.name(),
                frame[0]
            )));
        }
        if let Err(e) = handle(c, &frame[1..]) {
            log(&format!("{}: {e}", c.peer.name()));
        }
        at += 4 + n;
    };
    buf.drain(..at);
    if buf.is_empty() && buf.capacity() > 1 << 20 {
        *buf = Vec::new(); // a big message passed: give its memory back
    }
    result
}

/// Where an idle scheduler waits (`sched::outside::IdleWait`): on every
/// connection that is up and on an eventfd that `wake` writes. What came
/// is read and handled on the scheduler, which then delivers it itself:
/// no hop through the reader thread. A connection whose reader thread
/// is reading is left to it (the scheduler never waits for a lock).
pub(super) struct Poller {
    event: i32,
    /// A scheduler is in `wait`.
    active: AtomicBool,
    /// The eventfd was written and not yet read: one write is enough.
    signalled: AtomicBool,
}

/// Connections up (with a reading end to watch).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// When any connection last had input (`since_start` nanoseconds).
static LAST_INPUT: AtomicU64 = AtomicU64::new(0);
/// An idle scheduler waits on the connections only while input came
/// this recently; else it parks (cheaper to wake for local work), and
/// the reader threads read.
const RECENT: u64 = 100_000_000;

static POLLER: OnceLock<Poller> = OnceLock::new();

impl Poller {
    /// The node's poller (one: readers look at whether it watches).
    pub(super) fn get() -> Option<&'static Poller> {
        if let Some(p) = POLLER.get() {
            return Some(p);
        }
        // SAFETY: plain system call.
        let event = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if event < 0 {
            return None;
        }
        let _ = POLLER.set(Poller {
            event,
            active: AtomicBool::new(false),
            signalled: AtomicBool::new(false),
        });
        POLLER.get()
    }

    /// Whether a scheduler watches the connections now.
    fn watching() -> bool {
        POLLER
            .get()
            .is_some_and(|p| p.active.load(Ordering::SeqCst))
    }

    /// A connection came up: a scheduler watching now takes it in.
    fn renew() {
        if let Some(p) = POLLER.get() {
            crate::sched::outside::IdleWait::wake(p);
        }
    }
}

impl crate::sched::outside::IdleWait for Poller {
    fn wait(&self, timeout: Option<Duration>) {
        // At most `RECENT` at a time: once input has stopped, the
        // scheduler parks and the reader threads (which stand aside,
        // waking every `STANDBY`, while a scheduler watches) sleep in
        // `poll` again, so an idle node does not wake 200 times a second.
        let cap = Duration::from_nanos(RECENT);
        let timeout = Some(timeout.map_or(cap, |t| t.min(cap)));
        self.active.store(true, Ordering::SeqCst);
        self.watch(timeout);
        self.active.store(false, Ordering::SeqCst);
    }

    fn worth(&self) -> bool {
        LIVE.load(Ordering::SeqCst) > 0
            && since_start().saturating_sub(LAST_INPUT.load(Ordering::Relaxed)) < RECENT
    }

    fn wake(&self) {
        if self.signalled.swap(true, Ordering::SeqCst) {
            return;
        }
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from `one` to the eventfd.
        unsafe { libc::write(self.event, one.as_ptr().cast(), 8) };
    }
}

impl Poller {
    fn watch(&self, timeout: Option<Duration>) {
        let live: Vec<(i32, Arc<Conn>)> = conns()
            .values()
            .filter_map(|c| {
                let fd = c.input_fd.load(Ordering::SeqCst);
                (fd >= 0).then(|| (fd, c.clone()))
            })
            .collect();
        let mut fds = Vec::with_capacity(live.len() + 1);
        fds.push(self.event);
        fds.extend(live.iter().map(|(fd, _)| *fd));
        let ready = wait_input(&fds, timeout);
        if ready[0] {
            let mut count = [0u8; 8];
            // SAFETY: reads 8 bytes into `count` (it clears the eventfd).
            unsafe { libc::read(self.event, count.as_mut_ptr().cast(), 8) };
        }
        // After the read: a wake that found the flag set came before it,
        // and what it published is seen by the scheduler's next checks.
        self.signalled.store(false, Ordering::SeqCst);
        for ((_, c), _) in live.iter().zip(&ready[1..]).filter(|(_, r)| **r) {
            let Ok(mut input) = c.input.try_lock() else {
                continue; // the reader thread has it
            };
            let Some(i) = input.as_mut() else {
                continue;
            };
            if let Err(e) = drain(c, i, POLLER_BUDGET) {
                drop(input);
                if let Some(e) = e {
                    log(&e);
                }
                fail(c);
            }
        }
    }
}

/// One frame's control message and payload.
fn handle(c: &Arc<Conn>, bytes: &[u8]) -> Result<(), String> {
    if let Some((pid, payload)) = fast_send(bytes) {
        return deliver_to_pid(pid, payload);
    }
    let mut rest = bytes;
    let ctrl = ETerm::decode(&mut rest).map_err(|e| format!("bad control message: {e}"))?;
    let ETerm::Tuple(Tuple { elements }) = ctrl else {
        return Err("control message is not a tuple".into());
    };
    let op = match elements.first() {
        Some(ETerm::FixInteger(FixInteger { value })) => *value,
        _ => return Err("control message without an operation".into()),
    };
    match op {
        SEND | SEND_TT | SEND_SENDER | SEND_SENDER_TT => {
            let Some(ETerm::Pid(to)) = elements.get(2) else {
                return Err("SEND without a pid".into());
            };
            if let Some(pid) = local_pid(to) {
                deliver_to_pid(pid, rest)?;
            }
        }
        REG_SEND | REG_SEND_TT => {
            let Some(ETerm::Atom(name)) = elements.get(3) else {
                return Err("REG_SEND without a name".into());
            };
            if name.name == "net_kernel" {
                return net_kernel(c, rest);
            }
            if name.name == "global_name_server" {
                return deliver_to_global(rest);
            }
            let name = Atom::try_intern(&name.name).ok_or("atom table full")?;
            deliver_payload(Target::Name(name), rest)?;
        }
        MONITOR_P => super::watch::monitor_request(c.peer, &elements),
        DEMONITOR_P => super::watch::demonitor_request(&elements),
        MONITOR_P_EXIT => super::watch::monitored_exit(&elements),
        24 | 26 => {
            let reason = ETerm::decode(rest).map_err(|e| format!("bad exit reason: {e}"))?;
            super::links::handle(c.peer, op, &elements, Some(reason));
        }
        SPAWN_REQUEST | SPAWN_REQUEST_TT => super::spawn::request_from(c.peer, &elements, rest)?,
        SPAWN_REPLY | SPAWN_REPLY_TT => super::spawn::reply(c.peer, &elements),
        _ => {
            super::links::handle(c.peer, op, &elements, None);
        }
    }
    Ok(())
}

/// A pid of this node named in a control message.
pub(super) fn local_pid(p: &EPid) -> Option<Pid> {
    let t = node::this_node();
    (p.node.name == t.name.name()).then(|| Pid::from_id(p.id as u64 | (p.serial as u64) << 32))
}

/// A message for the local `pid`: this node's group leader's io
/// requests are written here when an act node sent them, else go to its
/// io server, and the replies to io requests sent from here are dropped
/// (`gl.rs`).
fn deliver_to_pid(pid: Pid, payload: &[u8]) -> Result<(), String> {
    if pid == super::gl::local_leader() {
        if let Some(text) = super::gl::own_put_chars(payload) {
            rt::print(&text);
            return Ok(());
        }
        return deliver_payload(Target::Name(Atom::intern("$dist_io")), payload);
    }
    if super::gl::any() && super::gl::is_own_reply(payload) {
        return Ok(());
    }
    deliver_payload(Target::Pid(pid), payload)
}

fn deliver_payload(to: Target, payload: &[u8]) -> Result<(), String> {
    let message = crate::term::etf::binary_to_term(payload).map_err(|e| undecodable(payload, e))?;
    rt::deliver(to, message);
    Ok(())
}

/// Why a message could not be taken, in words: most often a fun whose
/// version fields name BEAM's code of its module.
fn undecodable(payload: &[u8], e: crate::term::etf::EtfError) -> String {
    if let Ok(term) = ETerm::decode(payload)
        && let Some((module, name)) = foreign_fun(&term)
    {
        return format!(
            "dropped a message holding {name}: a fun of module {module} as BEAM compiled it \
             (its Uniq and OldUniq fields name that code, which act does not have); \
             only funs made by act nodes and fun M:F/A cross to act"
        );
    }
    format!("dropped a message act cannot decode ({e:?})")
}

/// The first local fun in `term` that act did not write: its module and
/// how it prints.
fn foreign_fun(term: &ETerm) -> Option<(String, String)> {
    match term {
        ETerm::InternalFun(f) => match &**f {
            eetf::InternalFun::New {
                module,
                uniq,
                old_uniq,
                index,
                ..
            } => (!crate::term::etf::written_by_act(&module.name, uniq, *old_uniq as i64)).then(
                || {
                    (
                        module.name.clone(),
                        format!("#Fun<{}.{index}.{old_uniq}>", module.name),
                    )
                },
            ),
            eetf::InternalFun::Old {
                module,
                index,
                uniq,
                ..
            } => Some((
                module.name.clone(),
                format!("#Fun<{}.{index}.{uniq}>", module.name),
            )),
        },
        ETerm::Tuple(t) => t.elements.iter().find_map(foreign_fun),
        ETerm::List(l) => l.elements.iter().find_map(foreign_fun),
        ETerm::ImproperList(l) => l
            .elements
            .iter()
            .find_map(foreign_fun)
            .or_else(|| foreign_fun(&l.last)),
        ETerm::Map(m) => m
            .map
            .iter()
            .find_map(|(k, v)| foreign_fun(k).or_else(|| foreign_fun(v))),
        _ => None,
    }
}

/// A message for this node's global_name_server (stdlib/global.act).
/// BEAM's `global:register_name/2` sends its resolve method, a local fun
/// of BEAM's global module, which act cannot hold: such a fun arrives as
/// `fun global:random_exit_name/3`, the method it stands for by default.
fn deliver_to_global(payload: &[u8]) -> Result<(), String> {
    let to = Target::Name(Atom::intern("global_name_server"));
    if deliver_payload(to, payload).is_ok() {
        return Ok(());
    }
    let term = ETerm::decode(payload).map_err(|e| format!("global_name_server: {e}"))?;
    let mut bytes = Vec::new();
    without_local_funs(term)
        .encode(&mut bytes)
        .map_err(|e| format!("global_name_server: {e}"))?;
    deliver_payload(to, &bytes)
}

fn without_local_funs(term: ETerm) -> ETerm {
    let each = |v: Vec<ETerm>| v.into_iter().map(without_local_funs).collect();
    match term {
        ETerm::InternalFun(_) => ETerm::from(eetf::ExternalFun {
            module: eetf::Atom::from("global"),
            function: eetf::Atom::from("random_exit_name"),
            arity: 3,
        }),
        ETerm::Tuple(t) => ETerm::from(Tuple {
            elements: each(t.elements),
        }),
        ETerm::List(l) => ETerm::from(eetf::List {
            elements: each(l.elements),
        }),
        ETerm::ImproperList(l) => ETerm::from(eetf::ImproperList {
            elements: each(l.elements),
            last: Box::new(without_local_funs(*l.last)),
        }),
        ETerm::Map(m) => ETerm::from(eetf::Map {
            map: m
                .map
                .into_iter()
                .map(|(k, v)| (without_local_funs(k), without_local_funs(v)))
                .collect(),
        }),
        other => other,
    }
}

/// The part of net_kernel a peer talks to: `net_adm:ping` asks
/// `{'$gen_call', {From, Tag}, {is_auth, Node}}` and gets `{Tag, yes}`.
fn net_kernel(c: &Arc<Conn>, payload: &[u8]) -> Result<(), String> {
    let message = ETerm::decode(payload).map_err(|e| format!("net_kernel: {e}"))?;
    let ETerm::Tuple(Tuple { elements }) = message else {
        return Ok(());
    };
    let [
        ETerm::Atom(label),
        ETerm::Tuple(from),
        ETerm::Tuple(request),
    ] = elements.as_slice()
    else {
        return Ok(());
    };
    let is_auth = matches!(request.elements.first(), Some(ETerm::Atom(a)) if a.name == "is_auth");
    if label.name != "$gen_call" || !is_auth {
        return Ok(());
    }
    let [ETerm::Pid(from), tag_term] = from.elements.as_slice() else {
        return Ok(());
    };
    let ctrl = control(vec![tag(SEND), atom(""), ETerm::from(from.clone())]);
    let mut reply = Vec::new();
    ETerm::from(Tuple {
        elements: vec![tag_term.clone(), atom("yes")],
    })
    .encode(&mut reply)
    .map_err(|e| e.to_string())?;
    push_frame(c, &ctrl, &reply, Mode::Control);
    Ok(())
}
