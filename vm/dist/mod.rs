//! Distribution: act as a node of an Erlang cluster.
//!
//! This room owns this node's name, creation and cookie, its listening
//! socket and epmd registration (with a built-in epmd, `epmd.rs`, where
//! the machine has none), and the connections to other nodes
//! (`conn.rs`): the handshake (the `erl_dist` crate, driven by a small
//! `block_on` over blocking std sockets), the framing of the
//! distribution protocol, and the control messages (decoded and encoded
//! with `eetf`; message payloads use act's own `term::etf`, straight
//! from and into process heaps).
//!
//! Invariants:
//! - Sockets are read and written by threads of this room (an
//!   acceptor, a connector per outgoing connection attempt, and a reader
//!   and a writer per connection), and by schedulers only without
//!   blocking: a send to an idle connection is tried on the socket with
//!   `MSG_DONTWAIT` (else it appends a frame to that connection's
//!   outbound buffer under a short lock and returns), and an idle
//!   scheduler may wait for input on the connections in place of parking
//!   (`conn::Poller`, woken by anything that would unpark it) and read
//!   what came with `MSG_DONTWAIT`, unless the reader thread is reading
//!   (it never waits for that lock). A scheduler never blocks on a socket. A connection
//!   holding more than its limit suspends the sending process (never
//!   the scheduler) until it drains (`conn.rs`); at the program's end
//!   `flush` gives queued frames a bounded time to go out.
//! - Inbound messages reach processes only through
//!   `runtime::nodes::deliver` (the schedulers' outside queue), so they
//!   land in the receiver's inbox exactly like local ones, and one
//!   connection's messages keep their order.
//! - Links (`links.rs`) and spawn requests (`spawn.rs`) across nodes
//!   are kept here, beside monitors (`watch.rs`) and group leaders on
//!   other nodes (`gl.rs`), never in a process.
//! - The scheduler and the BIFs reach this room only through
//!   `runtime::nodes`.
//! - `start` runs at most once, before the first process runs; a node
//!   that is not started answers as `nonode@nohost` and sends nowhere.
//! - No handshake, accepted or dialed, is made before the node's own
//!   servers run (`set_ready`), within a bound.

mod conn;
mod epmd;
pub mod gl;
mod links;
mod spawn;
mod watch;

use crate::term::node;
use crate::term::{Atom, Term};
use erl_dist::epmd::{DEFAULT_EPMD_PORT, EpmdClient, NodeEntry};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::pin::Pin;
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

pub use conn::{
    BUSY_LIMIT, Connect, FLUSH_TIMEOUT, SendOptions, Sent, connect, demonitor_node, disconnect,
    flush, monitor_node, monitor_nodes, net_ticktime, nodes, send_to_name, send_to_pid,
    set_net_ticktime, still_busy,
};
pub use links::{exit as exit_remote, link as link_remote, unlink as unlink_remote};
pub use spawn::{Options as SpawnOptions, request as spawn_request, spawned};
pub use watch::{
    Watched, demonitor as demonitor_process, exited, monitor as monitor_process, probed, watched,
};

/// Where an idle scheduler waits for this node's connections (see
/// "Idle waiting" in `sched/outside.rs`), if the system gives an eventfd.
pub fn idle_wait() -> Option<Box<dyn crate::sched::outside::IdleWait>> {
    struct Shared(&'static conn::Poller);
    impl crate::sched::outside::IdleWait for Shared {
        fn wait(&self, timeout: Option<std::time::Duration>) {
            self.0.wait(timeout)
        }
        fn worth(&self) -> bool {
            self.0.worth()
        }
        fn wake(&self) {
            self.0.wake()
        }
    }
    conn::Poller::get().map(|p| Box::new(Shared(p)) as Box<dyn crate::sched::outside::IdleWait>)
}

/// A started node.
struct Node {
    /// `name@host`.
    name: Atom,
    creation: u32,
    cookie: Mutex<String>,
    /// Cookies set with `erlang:set_cookie(Node, Cookie)` for other nodes.
    cookies: Mutex<HashMap<Atom, String>>,
    /// The registration with epmd lasts as long as this connection.
    _epmd: TcpStream,
}

static NODE: OnceLock<Node> = OnceLock::new();

fn this() -> Option<&'static Node> {
    NODE.get()
}

/// Whether this node has been started (`is_alive()`).
pub fn alive() -> bool {
    NODE.get().is_some()
}

/// The cookie used towards `peer`.
fn cookie_for(peer: Atom) -> String {
    let Some(n) = this() else {
        return String::new();
    };
    if let Some(c) = n
        .cookies
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&peer)
    {
        return c.clone();
    }
    n.cookie.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `erlang:get_cookie()`.
pub fn cookie() -> Option<String> {
    this().map(|n| n.cookie.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

/// `erlang:set_cookie(Node, Cookie)`: this node's own cookie when `peer`
/// is this node, else the cookie towards `peer`. False when not alive.
pub fn set_cookie(peer: Atom, cookie: &str) -> bool {
    let Some(n) = this() else {
        return false;
    };
    if peer == n.name {
        *n.cookie.lock().unwrap_or_else(|e| e.into_inner()) = cookie.to_string();
    } else {
        n.cookies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(peer, cookie.to_string());
    }
    true
}

/// How the command line named the node.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--sname a` (false) or `--name a@host` (true).
    pub name: String,
    pub long: bool,
    pub cookie: Option<String>,
}

/// The epmd port: `ERL_EPMD_PORT`, as erl reads it, else 4369.
fn epmd_port() -> u16 {
    std::env::var("ERL_EPMD_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(DEFAULT_EPMD_PORT)
}

/// The machine's name as the kernel has it (`inet:gethostname/0`),
/// `localhost` if it cannot be read.
pub fn machine_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes a
    // NUL-terminated name into it (truncated at worst).
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    if ok {
        String::from_utf8_lossy(&buf[..end]).into_owned()
    } else {
        "localhost".to_string()
    }
}

/// This machine's host name: short for `--sname`, as given for `--name`.
fn host_name(long: bool) -> String {
    let name = machine_name();
    if long {
        name
    } else {
        name.split('.').next().unwrap_or("localhost").to_string()
    }
}

/// The cookie in `~/.erlang.cookie`, created as erl creates it (twenty
/// random capital letters, readable by the owner only) when absent.
fn home_cookie() -> Result<String, String> {
    let home = std::env::var("HOME").map_err(|_| "HOME is not set: no cookie".to_string())?;
    let path = std::path::Path::new(&home).join(".erlang.cookie");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let cookie = random_cookie();
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            file.write_all(cookie.as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400));
            Ok(cookie)
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn random_cookie() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::new();
    let state = std::collections::hash_map::RandomState::new();
    let mut h = state.build_hasher();
    for i in 0..20u64 {
        h.write_u64(i ^ std::process::id() as u64);
        let v = h.finish();
        out.push((b'A' + (v % 26) as u8) as char);
    }
    out
}

/// Connects to epmd on this machine. When none listens, starts one as
/// erl does (`epmd -daemon`), or, when the `epmd` program is not
/// installed, serves the port mapper itself (`epmd.rs`), for as long as
/// this node runs.
fn epmd_connection() -> Result<TcpStream, String> {
    let port = epmd_port();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(2)) {
        return Ok(s);
    }
    let mut command = std::process::Command::new("epmd");
    command
        .arg("-daemon")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if port != DEFAULT_EPMD_PORT {
        command.arg("-port").arg(port.to_string());
    }
    match command.status() {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // No epmd program: serve it here. Losing the port to another
            // node starting at the same moment is fine: its epmd serves.
            if let Err(e) = epmd::serve(port)
                && e.kind() != std::io::ErrorKind::AddrInUse
            {
                return Err(format!("cannot serve epmd on port {port}: {e}"));
            }
        }
        Err(e) => {
            return Err(format!(
                "no epmd listens on port {port}, and `epmd -daemon` failed: {e}"
            ));
        }
    }
    for _ in 0..50 {
        if let Ok(s) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            return Ok(s);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("epmd did not start on port {port}"))
}

/// Starts the node: listens, registers with epmd, and accepts
/// connections from then on. Called once, before the program runs.
pub fn start(options: &Options) -> Result<(), String> {
    if NODE.get().is_some() {
        return Ok(());
    }
    let full = if options.name.contains('@') {
        options.name.clone()
    } else {
        format!("{}@{}", options.name, host_name(options.long))
    };
    let (alive_name, host) = full.split_once('@').unwrap_or((&full, ""));
    if alive_name.is_empty() || host.is_empty() {
        return Err(format!("invalid node name '{full}'"));
    }
    if !options.long && host.contains('.') {
        return Err(format!(
            "--sname: the host part of '{full}' has dots; use --name for long names"
        ));
    }
    let cookie = match &options.cookie {
        Some(c) => c.clone(),
        None => home_cookie()?,
    };
    let listener = TcpListener::bind(("0.0.0.0", 0)).map_err(|e| format!("cannot listen: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen: {e}"))?
        .port();
    let epmd = epmd_connection()?;
    let (epmd, creation) =
        block_on(EpmdClient::new(Blocking(epmd)).register(NodeEntry::new(alive_name, port)))
            .map_err(|e| format!("epmd refused the name '{alive_name}': {e}"))?;
    let name = Atom::try_intern(&full).ok_or("the atom table is full")?;
    let creation = creation.get();
    node::set_this_node(name, creation);
    let _ = NODE.set(Node {
        name,
        creation,
        cookie: Mutex::new(cookie),
        cookies: Mutex::new(HashMap::new()),
        _epmd: epmd.0,
    });
    std::thread::Builder::new()
        .name("dist accept".into())
        .spawn(move || conn::accept_loop(listener))
        .map_err(|e| format!("cannot start the acceptor: {e}"))?;
    Ok(())
}

/// Whether this node's servers run (global_name_server, rex, the io
/// server and the spawner, started by `stdlib/erts_dist.act`): until
/// then no handshake is made either way, so that a peer that connects
/// finds them, as a BEAM node's kernel has booted before it connects.
fn readiness() -> &'static (Mutex<bool>, std::sync::Condvar) {
    static READY: OnceLock<(Mutex<bool>, std::sync::Condvar)> = OnceLock::new();
    READY.get_or_init(|| (Mutex::new(false), std::sync::Condvar::new()))
}

/// How long a handshake waits for the node to be ready before it goes
/// ahead all the same (a program whose start is stuck still answers).
const READY_TIMEOUT: Duration = Duration::from_secs(5);

/// The node's servers run: connections go ahead.
pub fn set_ready() {
    let (ready, changed) = readiness();
    *ready.lock().unwrap_or_else(|e| e.into_inner()) = true;
    changed.notify_all();
}

/// Waits (at most `READY_TIMEOUT`) until the node is ready. Called by
/// the threads that dial and accept, never by a scheduler.
fn wait_ready() {
    let (ready, changed) = readiness();
    let guard = ready.lock().unwrap_or_else(|e| e.into_inner());
    let _ = changed
        .wait_timeout_while(guard, READY_TIMEOUT, |r| !*r)
        .unwrap_or_else(|e| e.into_inner());
}

/// `net_adm:names(Host)`: the nodes epmd on `host` lists, name and port,
/// or why not, as OTP's `erl_epmd:names/1` says it (`nxdomain`: the host
/// is not found; `address`: no epmd answers there). Bounded in time;
/// called on a thread of its own on a live node (a scheduler never
/// waits on a socket of the network there).
pub fn epmd_names(host: &str) -> Result<Vec<(String, u16)>, &'static str> {
    use std::net::ToSocketAddrs;
    let addr = (host, epmd_port())
        .to_socket_addrs()
        .map_err(|_| "nxdomain")?
        .find(|a| a.is_ipv4())
        .ok_or("nxdomain")?;
    let stream =
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|_| "address")?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    block_on(EpmdClient::new(Blocking(stream)).get_names()).map_err(|_| "address")
}

/// `node()`.
pub fn this_name() -> Term {
    Term::atom(node::this_node().name)
}

/// A blocking std socket seen as a futures socket: every poll completes
/// at once (the calling thread blocks in the system call instead).
struct Blocking(TcpStream);

impl futures::io::AsyncRead for Blocking {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.0.read(buf))
    }
}

impl futures::io::AsyncWrite for Blocking {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.0.write(buf))
    }
    fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(self.0.flush())
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(self.0.shutdown(std::net::Shutdown::Both))
    }
}

/// Runs a future whose every poll completes (it only awaits `Blocking`).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// A line on stderr about the network (a refused peer, a bad frame).
fn log(text: &str) {
    crate::runtime::output::write_stderr(format!("act dist: {text}\n").as_bytes());
}
