//! Sockets: the operating system's TCP and UDP sockets behind
//! `gen_tcp`, `gen_udp` and `inet` (the Erlang side is in
//! `stdlib/gen_tcp.act`, `gen_udp.act` and `inet.act`; the BIFs that
//! reach this module are in `bif::socket`).
//!
//! A socket is a port term (`#Port<0.N>`, see `bif::port`) whose number
//! names an entry in one table. The entry holds the socket's options,
//! its owner (the controlling process) and what has arrived but not been
//! handed out yet.
//!
//! No scheduler thread ever waits on the network. Every socket that can
//! receive has a thread of its own (the reader) that blocks in
//! `read`, `recv_from` or `accept` and appends what it gets to the
//! entry; then the entry is "pumped": what it holds goes to whoever is
//! waiting for it, as messages through the runtime's outside queue
//! (`sched::outside`):
//!
//! - a process in `gen_tcp:recv` or `gen_tcp:accept` is a waiter: the
//!   BIF answered `{wait, Ref}` and the process is in a `receive` for
//!   `{Ref, Result}`, so it waits like any receive, timeout included (a
//!   timed-out waiter takes itself off the list with `cancel`);
//! - an active socket sends `{tcp, S, Data}` (`{udp, S, Ip, Port,
//!   Data}`) to its owner, and `{tcp_closed, S}`, `{tcp_error, S, R}`,
//!   `{tcp_passive, S}` as OTP does.
//!
//! Invariants: one lock guards the whole table, and every message about
//! a socket is queued while it is held, so a socket's messages reach a
//! process in the order they were made. A socket number is never used
//! twice; a reader that finds its number gone from the table stops. To
//! close a socket the entry is taken out and the operating system socket
//! is shut down, which wakes its reader (whose handle is then the last
//! and closes it). Sending writes from the caller's thread; on loopback
//! the peer's reader drains the data at once, so a write does not wait.

use crate::heap::{Heap, MessageBuffer};
use crate::sched::outside::{Outside, Target};
use crate::sched::{Pid, Signal};
use crate::term::{Atom, Term};
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::{
    Ipv4Addr, Shutdown, SocketAddr, SocketAddrV4, TcpListener, TcpStream, ToSocketAddrs, UdpSocket,
};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// How a byte stream is cut into packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Packet {
    /// As it comes (`{packet, 0}` or `raw`).
    Raw,
    /// Each packet after a big-endian length of 1, 2 or 4 bytes.
    Prefix(u8),
    /// Each packet a line, its newline included.
    Line,
}

/// Whether arriving data becomes messages to the owner.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Active {
    Off,
    Once,
    On,
    /// `{active, N}`: N more messages, then `{tcp_passive, S}`.
    Count(i32),
}

/// A socket's options (OTP's defaults).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub binary: bool,
    pub packet: Packet,
    pub active: Active,
    pub exit_on_close: bool,
    pub nodelay: bool,
    pub reuseaddr: bool,
    pub keepalive: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            binary: false,
            packet: Packet::Raw,
            active: Active::On,
            exit_on_close: true,
            nodelay: false,
            reuseaddr: false,
            keepalive: false,
        }
    }
}

/// One option as `setopts` (or a socket's creation) applies it.
#[derive(Clone, Copy, Debug)]
pub enum Setting {
    Binary(bool),
    Packet(Packet),
    Active(Active),
    /// `{active, N}`: added to the count.
    AddActive(i32),
    ExitOnClose(bool),
    Nodelay(bool),
    Reuseaddr(bool),
    Keepalive(bool),
}

/// The operating system socket of an entry.
enum Kind {
    Listener(Arc<TcpListener>),
    Stream(Arc<TcpStream>),
    Udp(Arc<UdpSocket>),
}

/// A process waiting for a packet (`length`: the bytes `recv` asked
/// for, 0 for any) or a connection.
struct Waiter {
    pid: Pid,
    reference: u64,
    length: usize,
}

/// What the reader has seen end the input.
#[derive(Clone, Copy, PartialEq)]
enum End {
    Open,
    /// The peer closed its side.
    Eof,
    /// A read failed with this reason.
    Error(&'static str),
}

struct Socket {
    kind: Kind,
    owner: Pid,
    options: Options,
    /// Stream bytes read and not handed out.
    input: Vec<u8>,
    /// Datagrams read and not handed out.
    datagrams: VecDeque<(SocketAddrV4, Vec<u8>)>,
    /// Connections accepted and not handed out (listeners).
    connections: VecDeque<TcpStream>,
    end: End,
    /// The end has been told (a recv answered `closed`, or `tcp_closed`
    /// sent): from then on the socket answers `enotconn`.
    end_told: bool,
    waiters: VecDeque<Waiter>,
    /// While `controlling_process` moves the owner, no active messages.
    held: bool,
}

/// The result a waiter gets, or a BIF returns.
pub enum Answer {
    /// `{ok, Data}` (a packet), `{ok, {Ip, Port, Data}}` (a datagram),
    /// `{ok, Socket}` (a connection).
    Packet(Vec<u8>, bool),
    Datagram(SocketAddrV4, Vec<u8>, bool),
    Socket(u64),
    Error(&'static str),
    /// `{wait, Ref}`: the answer comes as `{Ref, Answer}`.
    Wait,
}

fn table() -> MutexGuard<'static, HashMap<u64, Socket>> {
    static TABLE: OnceLock<Mutex<HashMap<u64, Socket>>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Open sockets (so that a process exit with none open costs one load).
static OPEN: AtomicUsize = AtomicUsize::new(0);

fn queue() -> &'static Mutex<Option<Arc<Outside<MessageBuffer>>>> {
    static QUEUE: OnceLock<Mutex<Option<Arc<Outside<MessageBuffer>>>>> = OnceLock::new();
    QUEUE.get_or_init(|| Mutex::new(None))
}

/// The run's outside queue, through which sockets' messages go (set by
/// `run_main` before the first process runs).
pub fn attach(outside: Arc<Outside<MessageBuffer>>) {
    *queue().lock().unwrap_or_else(|e| e.into_inner()) = Some(outside);
}

/// Queues `message` for `to`.
fn post(to: Pid, message: MessageBuffer) {
    let q = queue().lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(q) = q {
        q.push(Target::Pid(to), Signal::Message(message));
    }
}

// ---------------------------------------------------------------------
// Terms

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

/// A port term for socket `n`.
pub fn port_term(heap: &mut Heap, n: u64) -> Term {
    heap.reference(crate::bif::port::PORT_BASE + n)
}

/// `{A, B, C, D}`.
pub fn ip_term(heap: &mut Heap, ip: Ipv4Addr) -> Term {
    let o = ip.octets();
    heap.tuple(&o.map(|b| Term::small(i64::from(b))))
}

/// Packet bytes as a binary or a list.
pub fn data_term(heap: &mut Heap, data: &[u8], binary: bool) -> Term {
    if binary {
        heap.binary(data)
    } else {
        let bytes: Vec<Term> = data.iter().map(|&b| Term::small(i64::from(b))).collect();
        heap.list(&bytes)
    }
}

/// An answer as a term: `{ok, _}` or `{error, Reason}`.
pub fn answer_term(heap: &mut Heap, answer: &Answer) -> Term {
    let ok = |heap: &mut Heap, t: Term| heap.tuple(&[Term::OK, t]);
    match answer {
        Answer::Packet(data, binary) => {
            let d = data_term(heap, data, *binary);
            ok(heap, d)
        }
        Answer::Datagram(from, data, binary) => {
            let d = data_term(heap, data, *binary);
            let ip = ip_term(heap, *from.ip());
            let t = heap.tuple(&[ip, Term::small(i64::from(from.port())), d]);
            ok(heap, t)
        }
        Answer::Socket(n) => {
            let s = port_term(heap, *n);
            ok(heap, s)
        }
        Answer::Error(reason) => heap.tuple(&[atom("error"), atom(reason)]),
        Answer::Wait => atom("wait"),
    }
}

/// Builds a message on a heap of its own.
fn message(build: impl FnOnce(&mut Heap) -> Term) -> MessageBuffer {
    let mut heap = Heap::new();
    let t = build(&mut heap);
    MessageBuffer::from_heap(heap, t)
}

/// Sends `{Ref, Answer}` to a waiter.
fn reply(waiter: &Waiter, answer: &Answer) {
    let reference = waiter.reference;
    post(
        waiter.pid,
        message(|heap| {
            let r = heap.reference(reference);
            let a = answer_term(heap, answer);
            heap.tuple(&[r, a])
        }),
    );
}

/// The name OTP gives an operating system error.
pub fn posix(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EADDRINUSE) => "eaddrinuse",
        Some(libc::EADDRNOTAVAIL) => "eaddrnotavail",
        Some(libc::ECONNREFUSED) => "econnrefused",
        Some(libc::ECONNRESET) => "econnreset",
        Some(libc::ECONNABORTED) => "econnaborted",
        Some(libc::EACCES) => "eacces",
        Some(libc::EPIPE) => "epipe",
        Some(libc::ETIMEDOUT) => "etimedout",
        Some(libc::EHOSTUNREACH) => "ehostunreach",
        Some(libc::ENETUNREACH) => "enetunreach",
        Some(libc::ENOTCONN) => "enotconn",
        Some(libc::EMFILE) => "emfile",
        Some(libc::ENFILE) => "enfile",
        Some(libc::EMSGSIZE) => "emsgsize",
        _ if e.kind() == std::io::ErrorKind::TimedOut => "timeout",
        _ => "einval",
    }
}

// ---------------------------------------------------------------------
// Packets

/// The next packet in `input` for a request of `length` bytes (0: any),
/// if a whole one is there.
fn take_packet(input: &mut Vec<u8>, packet: Packet, length: usize) -> Option<Vec<u8>> {
    match packet {
        Packet::Raw if length == 0 => (!input.is_empty()).then(|| std::mem::take(input)),
        Packet::Raw => (input.len() >= length).then(|| input.drain(..length).collect()),
        Packet::Line => {
            let end = input.iter().position(|&b| b == b'\n')?;
            Some(input.drain(..=end).collect())
        }
        Packet::Prefix(size) => {
            let size = usize::from(size);
            if input.len() < size {
                return None;
            }
            let body = input[..size]
                .iter()
                .fold(0usize, |n, &b| (n << 8) | usize::from(b));
            if input.len() < size + body {
                return None;
            }
            input.drain(..size);
            Some(input.drain(..body).collect())
        }
    }
}

/// `data` with the header its packet type puts before it on the wire
/// (`None`: too long for the header).
fn frame(data: Vec<u8>, packet: Packet) -> Option<Vec<u8>> {
    let Packet::Prefix(size) = packet else {
        return Some(data);
    };
    let size = usize::from(size);
    if size < 8 && data.len() >> (8 * size) != 0 {
        return None;
    }
    let mut framed = Vec::with_capacity(size + data.len());
    framed.extend_from_slice(&(data.len() as u64).to_be_bytes()[8 - size..]);
    framed.extend_from_slice(&data);
    Some(framed)
}

// ---------------------------------------------------------------------
// Delivery

impl Socket {
    fn new(kind: Kind, owner: Pid, options: Options) -> Socket {
        Socket {
            kind,
            owner,
            options,
            input: Vec::new(),
            datagrams: VecDeque::new(),
            connections: VecDeque::new(),
            end: End::Open,
            end_told: false,
            waiters: VecDeque::new(),
            held: false,
        }
    }

    /// The next packet for a request of `length` bytes.
    fn next(&mut self, length: usize) -> Option<Answer> {
        let binary = self.options.binary;
        match self.kind {
            Kind::Udp(_) => {
                // A datagram comes whole, whatever length was asked.
                let (from, data) = self.datagrams.pop_front()?;
                Some(Answer::Datagram(from, data, binary))
            }
            _ => take_packet(&mut self.input, self.options.packet, length)
                .map(|data| Answer::Packet(data, binary)),
        }
    }

    /// Why the input has ended, if it has (and nothing whole is left).
    fn ended(&self) -> Option<&'static str> {
        match self.end {
            End::Open => None,
            End::Eof => Some("closed"),
            End::Error(reason) => Some(reason),
        }
    }

    fn protocol(&self) -> &'static str {
        match self.kind {
            Kind::Udp(_) => "udp",
            _ => "tcp",
        }
    }
}

/// Hands out what socket `n` holds: to waiters first, then (if active)
/// to the owner. Returns whether the socket must now close (its input
/// ended, it said so, and it closes on exit).
fn pump(n: u64, s: &mut Socket) -> bool {
    if matches!(s.kind, Kind::Listener(_)) {
        return false;
    }
    while let Some(length) = s.waiters.front().map(|w| w.length) {
        let answer = match s.next(length) {
            Some(answer) => answer,
            None => match s.ended() {
                Some(reason) => {
                    s.input.clear();
                    s.end_told = true;
                    Answer::Error(reason)
                }
                None => break,
            },
        };
        if let Some(w) = s.waiters.pop_front() {
            reply(&w, &answer);
        }
    }
    if !s.waiters.is_empty() || s.held {
        return false;
    }
    let tag = s.protocol();
    while s.options.active != Active::Off {
        match s.next(0) {
            Some(answer) => {
                let owner = s.owner;
                post(
                    owner,
                    message(|heap| {
                        let port = port_term(heap, n);
                        match answer {
                            Answer::Packet(data, binary) => {
                                let d = data_term(heap, &data, binary);
                                heap.tuple(&[atom(tag), port, d])
                            }
                            Answer::Datagram(from, data, binary) => {
                                let d = data_term(heap, &data, binary);
                                let ip = ip_term(heap, *from.ip());
                                let p = Term::small(i64::from(from.port()));
                                heap.tuple(&[atom(tag), port, ip, p, d])
                            }
                            _ => Term::NIL,
                        }
                    }),
                );
                s.options.active = match s.options.active {
                    Active::Once => Active::Off,
                    Active::Count(1) => {
                        tell_passive(n, s);
                        Active::Off
                    }
                    Active::Count(k) => Active::Count(k - 1),
                    other => other,
                };
            }
            None => {
                let Some(reason) = s.ended() else {
                    break;
                };
                if s.end_told {
                    break;
                }
                s.end_told = true;
                s.input.clear();
                let owner = s.owner;
                if reason != "closed" {
                    post(
                        owner,
                        message(|heap| {
                            let port = port_term(heap, n);
                            heap.tuple(&[atom("tcp_error"), port, atom(reason)])
                        }),
                    );
                }
                post(
                    owner,
                    message(|heap| {
                        let port = port_term(heap, n);
                        heap.tuple(&[atom("tcp_closed"), port])
                    }),
                );
                return s.options.exit_on_close;
            }
        }
    }
    false
}

/// `{tcp_passive, S}` (or `udp_passive`) to the owner.
fn tell_passive(n: u64, s: &Socket) {
    let tag = format!("{}_passive", s.protocol());
    post(
        s.owner,
        message(|heap| {
            let port = port_term(heap, n);
            heap.tuple(&[atom(&tag), port])
        }),
    );
}

/// Gives listener `n`'s accepted connections to the processes waiting
/// in `accept`.
fn pump_listener(t: &mut HashMap<u64, Socket>, n: u64) {
    loop {
        let Some(s) = t.get_mut(&n) else {
            return;
        };
        if s.waiters.is_empty() || s.connections.is_empty() {
            return;
        }
        let (Some(w), Some(stream)) = (s.waiters.pop_front(), s.connections.pop_front()) else {
            return;
        };
        let options = s.options;
        let m = adopt(t, stream, w.pid, options);
        reply(&w, &Answer::Socket(m));
    }
}

/// Pumps `n` under the table's lock and closes it if it must close.
fn pump_and_settle(t: &mut HashMap<u64, Socket>, n: u64) {
    if t.get(&n)
        .is_some_and(|s| matches!(s.kind, Kind::Listener(_)))
    {
        pump_listener(t, n);
        return;
    }
    let close = t.get_mut(&n).is_some_and(|s| pump(n, s));
    if close && let Some(s) = t.remove(&n) {
        shut(s);
    }
}

// ---------------------------------------------------------------------
// Opening

/// A new socket number (shared with the other ports).
fn number() -> u64 {
    crate::bif::port::next_number()
}

/// Enters `kind` in the table `t` for `owner` and starts its reader.
fn enter(t: &mut HashMap<u64, Socket>, kind: Kind, owner: Pid, options: Options) -> u64 {
    let n = number();
    let reader = match &kind {
        Kind::Listener(l) => Reader::Listener(l.clone()),
        Kind::Stream(s) => Reader::Stream(s.clone()),
        Kind::Udp(u) => Reader::Udp(u.clone()),
    };
    let mut socket = Socket::new(kind, owner, options);
    let started = std::thread::Builder::new()
        .name(format!("socket {n}"))
        .stack_size(64 * 1024)
        .spawn(move || read_loop(n, reader));
    if started.is_err() {
        // No thread: the socket never receives; it can still send.
        socket.end = End::Error("emfile");
    }
    t.insert(n, socket);
    OPEN.fetch_add(1, Ordering::Relaxed);
    sources(1);
    n
}

/// Counts a source of messages in (`1`) or out (`-1`) with the outside
/// queue (see `Outside::add_source`).
fn sources(change: i32) {
    let q = queue().lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(q) = q {
        if change > 0 {
            q.add_source();
        } else {
            q.remove_source();
        }
    }
}

/// A connection accepted by a listener, entered as a socket of
/// `owner`'s with the listener's options.
fn adopt(t: &mut HashMap<u64, Socket>, stream: TcpStream, owner: Pid, options: Options) -> u64 {
    let _ = stream.set_nodelay(options.nodelay);
    enter(t, Kind::Stream(Arc::new(stream)), owner, options)
}

enum Reader {
    Listener(Arc<TcpListener>),
    Stream(Arc<TcpStream>),
    Udp(Arc<UdpSocket>),
}

/// The reader thread of socket `n`: blocks in the operating system and
/// files what comes in, until the socket is gone or its input ends.
fn read_loop(n: u64, reader: Reader) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let got = match &reader {
            Reader::Listener(l) => l.accept().map(|(stream, _)| Got::Connection(stream)),
            Reader::Stream(s) => (&**s).read(&mut buffer).map(Got::Bytes),
            Reader::Udp(u) => {
                receive_datagram(u, &mut buffer).map(|(k, from)| Got::Datagram(k, from))
            }
        };
        if let Err(e) = &got
            && e.kind() == std::io::ErrorKind::Interrupted
        {
            continue;
        }
        let mut t = table();
        let Some(s) = t.get_mut(&n) else {
            return;
        };
        let mut stop = false;
        match got {
            Ok(Got::Connection(stream)) => s.connections.push_back(stream),
            Ok(Got::Bytes(0)) => {
                s.end = End::Eof;
                stop = true;
            }
            Ok(Got::Bytes(k)) => s.input.extend_from_slice(&buffer[..k]),
            Ok(Got::Datagram(k, Some(from))) => s.datagrams.push_back((from, buffer[..k].to_vec())),
            Ok(Got::Datagram(..)) => {}
            Err(e) => {
                if matches!(reader, Reader::Listener(_)) {
                    // A failed accept (the peer gave up, or no file
                    // descriptors): try again a little later.
                    drop(t);
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
                if matches!(reader, Reader::Udp(_)) {
                    // A datagram socket goes on after an error (an
                    // unreachable port's report, say), but not in a rush.
                    drop(t);
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                s.end = match posix(&e) {
                    "econnreset" | "epipe" | "enotconn" => End::Eof,
                    reason => End::Error(reason),
                };
                stop = true;
            }
        }
        pump_and_settle(&mut t, n);
        if stop {
            return;
        }
    }
}

enum Got {
    Connection(TcpStream),
    Bytes(usize),
    /// A datagram and its sender (`None`: the wake-up of a shut down
    /// socket, which has none).
    Datagram(usize, Option<SocketAddrV4>),
}

/// `recvfrom(2)`: std's `recv_from` cannot return from the wake-up
/// `shutdown` gives, which comes without a sender address.
fn receive_datagram(
    u: &UdpSocket,
    buffer: &mut [u8],
) -> std::io::Result<(usize, Option<SocketAddrV4>)> {
    let size = std::mem::size_of::<libc::sockaddr_in>();
    // SAFETY: an all-zero sockaddr_in is a valid value.
    let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut length = size as libc::socklen_t;
    // SAFETY: a valid descriptor, a buffer of the given length, and an
    // address buffer whose length is passed.
    let k = unsafe {
        libc::recvfrom(
            u.as_raw_fd(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
            0,
            (&mut from as *mut libc::sockaddr_in).cast(),
            &mut length,
        )
    };
    if k < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let sender =
        (length as usize >= size && i32::from(from.sin_family) == libc::AF_INET).then(|| {
            SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(from.sin_addr.s_addr)),
                u16::from_be(from.sin_port),
            )
        });
    Ok((k as usize, sender))
}

/// Closes the operating system socket of a removed entry, waking its
/// reader; waiters hear `closed`.
fn shut(s: Socket) {
    OPEN.fetch_sub(1, Ordering::Relaxed);
    sources(-1);
    for w in &s.waiters {
        reply(w, &Answer::Error("closed"));
    }
    match &s.kind {
        Kind::Stream(stream) => {
            let _ = stream.shutdown(Shutdown::Both);
        }
        Kind::Listener(l) => unsafe_shutdown(l.as_raw_fd()),
        Kind::Udp(u) => unsafe_shutdown(u.as_raw_fd()),
    }
}

/// `shutdown(2)` on a listening or datagram socket, which std offers
/// only for streams: it stops a listener listening at once and wakes a
/// thread blocked in `accept` or `recvfrom` on it.
fn unsafe_shutdown(fd: std::os::fd::RawFd) {
    // SAFETY: `fd` belongs to a socket this module still holds open.
    unsafe {
        libc::shutdown(fd, libc::SHUT_RDWR);
    }
}

/// `gen_tcp:listen`: a listening socket on `ip:port` for `owner`.
pub fn listen(ip: Ipv4Addr, port: u16, owner: Pid, options: Options) -> Answer {
    match TcpListener::bind(SocketAddrV4::new(ip, port)) {
        Ok(l) => Answer::Socket(enter(
            &mut table(),
            Kind::Listener(Arc::new(l)),
            owner,
            options,
        )),
        Err(e) => Answer::Error(posix(&e)),
    }
}

/// `gen_tcp:connect`: connects on a thread of its own and answers
/// `{Ref, Result}` to `owner`.
pub fn connect(
    ip: Ipv4Addr,
    port: u16,
    owner: Pid,
    options: Options,
    timeout: Option<Duration>,
    reference: u64,
) {
    let waiter = Waiter {
        pid: owner,
        reference,
        length: 0,
    };
    sources(1);
    let run = move || {
        let address = SocketAddr::V4(SocketAddrV4::new(ip, port));
        let connected = match timeout {
            Some(t) if t.is_zero() => Err(std::io::Error::from(std::io::ErrorKind::TimedOut)),
            Some(t) => TcpStream::connect_timeout(&address, t),
            None => TcpStream::connect(address),
        };
        // The answer is queued under the table's lock, so it goes
        // before anything the new socket's reader sends.
        let mut t = table();
        let answer = match connected {
            Ok(stream) => {
                let _ = stream.set_nodelay(options.nodelay);
                let _ = set_keepalive(&stream, options.keepalive);
                Answer::Socket(enter(
                    &mut t,
                    Kind::Stream(Arc::new(stream)),
                    owner,
                    options,
                ))
            }
            Err(e) => Answer::Error(posix(&e)),
        };
        reply(&waiter, &answer);
        sources(-1);
    };
    let started = std::thread::Builder::new()
        .name("connect".into())
        .spawn(run);
    if started.is_err() {
        sources(-1);
        reply(
            &Waiter {
                pid: owner,
                reference,
                length: 0,
            },
            &Answer::Error("emfile"),
        );
    }
}

fn set_keepalive(stream: &TcpStream, on: bool) -> std::io::Result<()> {
    let value: libc::c_int = on.into();
    // SAFETY: a valid descriptor and an int option of the right size.
    let r = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `gen_udp:open`.
pub fn udp_open(ip: Ipv4Addr, port: u16, owner: Pid, options: Options) -> Answer {
    match UdpSocket::bind(SocketAddrV4::new(ip, port)) {
        Ok(u) => Answer::Socket(enter(&mut table(), Kind::Udp(Arc::new(u)), owner, options)),
        Err(e) => Answer::Error(posix(&e)),
    }
}

/// The IPv4 addresses `host` names (`inet:getaddr`).
pub fn resolve(host: &str) -> Result<Ipv4Addr, &'static str> {
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(ip);
    }
    let found = (host, 0u16).to_socket_addrs().map_err(|_| "nxdomain")?;
    found
        .filter_map(|a| match a {
            SocketAddr::V4(v4) => Some(*v4.ip()),
            SocketAddr::V6(_) => None,
        })
        .next()
        .ok_or("nxdomain")
}

// ---------------------------------------------------------------------
// Using

/// `gen_tcp:recv` and `gen_udp:recv` by `pid`: the answer now, or
/// `Wait` (then `{Ref, Answer}` follows).
pub fn recv(n: u64, length: usize, pid: Pid, reference: u64) -> Answer {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return Answer::Error("closed");
    };
    if matches!(s.kind, Kind::Listener(_)) {
        return Answer::Error("enotconn");
    }
    if s.options.active != Active::Off
        || (length != 0 && s.options.packet != Packet::Raw && matches!(s.kind, Kind::Stream(_)))
    {
        return Answer::Error("einval");
    }
    if s.end_told {
        return Answer::Error("enotconn");
    }
    if s.waiters.is_empty() {
        if let Some(answer) = s.next(length) {
            return answer;
        }
        if let Some(reason) = s.ended() {
            s.input.clear();
            s.end_told = true;
            return Answer::Error(reason);
        }
    }
    s.waiters.push_back(Waiter {
        pid,
        reference,
        length,
    });
    Answer::Wait
}

/// `gen_tcp:accept` by `pid`.
pub fn accept(n: u64, pid: Pid, reference: u64) -> Answer {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return Answer::Error("closed");
    };
    if !matches!(s.kind, Kind::Listener(_)) {
        return Answer::Error("einval");
    }
    if s.waiters.is_empty()
        && let Some(stream) = s.connections.pop_front()
    {
        let options = s.options;
        return Answer::Socket(adopt(&mut t, stream, pid, options));
    }
    s.waiters.push_back(Waiter {
        pid,
        reference,
        length: 0,
    });
    Answer::Wait
}

/// Takes `reference` off `n`'s waiters: false if it was answered
/// already (the answer is on its way).
pub fn cancel(n: u64, reference: u64) -> bool {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return false;
    };
    let before = s.waiters.len();
    s.waiters.retain(|w| w.reference != reference);
    let cancelled = s.waiters.len() < before;
    if cancelled {
        // A packet the cancelled waiter was in the way of may be due to
        // the next one, or to the owner.
        pump_and_settle(&mut t, n);
    }
    cancelled
}

/// `gen_tcp:send` (`to`: the datagram's destination for `gen_udp`).
pub fn send(n: u64, data: Vec<u8>, to: Option<SocketAddrV4>) -> Result<(), &'static str> {
    let (kind, packet) = {
        let t = table();
        let Some(s) = t.get(&n) else {
            return Err("closed");
        };
        if s.end_told && s.options.exit_on_close {
            return Err("closed");
        }
        let kind = match &s.kind {
            Kind::Stream(stream) => Kind::Stream(stream.clone()),
            Kind::Udp(u) => Kind::Udp(u.clone()),
            Kind::Listener(_) => return Err("enotconn"),
        };
        (kind, s.options.packet)
    };
    match (kind, to) {
        (Kind::Stream(stream), _) => {
            let framed = frame(data, packet).ok_or("einval")?;
            write_all(&stream, &framed).map_err(|e| match posix(&e) {
                "epipe" | "econnreset" | "enotconn" => "closed",
                reason => reason,
            })
        }
        (Kind::Udp(u), Some(to)) => u.send_to(&data, to).map(drop).map_err(|e| posix(&e)),
        _ => Err("einval"),
    }
}

/// Writes all of `bytes`, without the signal a write to a closed peer
/// would raise.
fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> std::io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: a valid descriptor and a buffer of the given length.
        let k = unsafe {
            libc::send(
                stream.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if k < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        bytes = &bytes[k as usize..];
    }
    Ok(())
}

/// `gen_tcp:close`: takes the socket out and closes it.
pub fn close(n: u64) {
    let removed = table().remove(&n);
    if let Some(s) = removed {
        shut(s);
    }
}

/// `gen_tcp:shutdown(S, How)`.
pub fn shutdown(n: u64, how: Shutdown) -> Result<(), &'static str> {
    let t = table();
    match t.get(&n).map(|s| &s.kind) {
        None => Err("closed"),
        Some(Kind::Stream(stream)) => stream.shutdown(how).map_err(|e| posix(&e)),
        Some(_) => Err("enotconn"),
    }
}

/// The controlling process of `n`.
pub fn owner(n: u64) -> Option<Pid> {
    table().get(&n).map(|s| s.owner)
}

/// Starts moving `n` to another owner: no active messages until
/// `release`, and `{'$socket_held', Ref}` to the old owner after every
/// message already on its way.
pub fn hold(n: u64, pid: Pid, reference: u64) -> bool {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return false;
    };
    s.held = true;
    post(
        pid,
        message(|heap| {
            let r = heap.reference(reference);
            heap.tuple(&[atom("$socket_held"), r])
        }),
    );
    true
}

/// Ends a move: `owner` controls `n`.
pub fn release(n: u64, owner: Pid) -> bool {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return false;
    };
    s.owner = owner;
    s.held = false;
    pump_and_settle(&mut t, n);
    true
}

/// `inet:setopts`: applies `settings` (false: the socket is closed).
pub fn setopts(n: u64, settings: &[Setting]) -> Result<(), &'static str> {
    let mut t = table();
    let Some(s) = t.get_mut(&n) else {
        return Err("einval");
    };
    if s.end_told && s.options.exit_on_close && !matches!(s.kind, Kind::Udp(_)) {
        return Err("einval");
    }
    let mut passive = false;
    for setting in settings {
        let o = &mut s.options;
        match *setting {
            Setting::Binary(b) => o.binary = b,
            Setting::Packet(p) => o.packet = p,
            Setting::Active(a) => o.active = a,
            Setting::AddActive(k) => {
                let now = match o.active {
                    Active::Count(c) => c,
                    _ => 0,
                };
                let sum = now + k;
                if sum > 32767 {
                    return Err("einval");
                }
                if sum <= 0 {
                    o.active = Active::Off;
                    passive = true;
                } else {
                    o.active = Active::Count(sum);
                }
            }
            Setting::ExitOnClose(b) => o.exit_on_close = b,
            Setting::Nodelay(b) => {
                o.nodelay = b;
                if let Kind::Stream(stream) = &s.kind {
                    let _ = stream.set_nodelay(b);
                }
            }
            Setting::Reuseaddr(b) => o.reuseaddr = b,
            Setting::Keepalive(b) => {
                o.keepalive = b;
                if let Kind::Stream(stream) = &s.kind {
                    let _ = set_keepalive(stream, b);
                }
            }
        }
    }
    if passive {
        tell_passive(n, s);
    }
    pump_and_settle(&mut t, n);
    Ok(())
}

/// The options of `n` (`None`: closed).
pub fn options(n: u64) -> Option<Options> {
    table().get(&n).map(|s| s.options)
}

/// Whether `n` is a listening socket.
pub fn is_listener(n: u64) -> Option<bool> {
    table().get(&n).map(|s| matches!(s.kind, Kind::Listener(_)))
}

/// The local (`peer` false) or remote address of `n`.
pub fn address(n: u64, peer: bool) -> Result<SocketAddrV4, &'static str> {
    let t = table();
    let Some(s) = t.get(&n) else {
        return Err("einval");
    };
    if peer && s.end_told {
        return Err("enotconn");
    }
    let found = match (&s.kind, peer) {
        (Kind::Listener(l), false) => l.local_addr(),
        (Kind::Stream(stream), false) => stream.local_addr(),
        (Kind::Stream(stream), true) => stream.peer_addr(),
        (Kind::Udp(u), false) => u.local_addr(),
        (Kind::Udp(u), true) => u.peer_addr(),
        (Kind::Listener(_), true) => return Err("enotconn"),
    };
    match found {
        Ok(SocketAddr::V4(a)) => Ok(a),
        Ok(SocketAddr::V6(_)) => Err("einval"),
        Err(e) => Err(posix(&e)),
    }
}

/// A process ended: the sockets it controlled close, and it waits for
/// nothing any more.
pub fn exited(pid: Pid) {
    if OPEN.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut t = table();
    let owned: Vec<u64> = t
        .iter()
        .filter(|(_, s)| s.owner == pid)
        .map(|(&n, _)| n)
        .collect();
    for s in t.values_mut() {
        s.waiters.retain(|w| w.pid != pid);
    }
    for n in owned {
        if let Some(s) = t.remove(&n) {
            shut(s);
        }
    }
}
