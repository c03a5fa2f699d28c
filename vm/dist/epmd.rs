//! A built-in epmd: the Erlang port mapper, served by this node when no
//! epmd listens on this machine and the `epmd` program is not installed.
//!
//! It speaks the requests that nodes and tools send to epmd (as OTP's
//! `erts/epmd` documents them; every request is a 2-byte length and then
//! that many bytes, the first of them the request's tag):
//! - `ALIVE2_REQ` registers a node for as long as its connection stays
//!   open, answered with `ALIVE2_X_RESP` (a 32-bit creation) to nodes of
//!   protocol version 6 and later, `ALIVE2_RESP` (16 bits) to older ones;
//!   a name already registered is refused (result 1).
//! - `PORT_PLEASE2_REQ` answers `PORT2_RESP` with the node's entry, or
//!   result 1 for a name not registered.
//! - `NAMES_REQ` answers this epmd's port and a `name N at port P` line
//!   per node (what `net_adm:names/0` and `epmd -names` read); `DUMP_REQ`
//!   the same as `active name ...` lines.
//! - `KILL_REQ` and `STOP_REQ` are refused (`NO` and `STOP_NOTOK`): the
//!   port mapper lives as long as this node does, as part of it.
//!
//! Invariants: its threads are this module's own (an acceptor, and one
//! per open connection, which for a registration lasts as long as the
//! node it registered); the registry is one map under a lock, an entry
//! removed when the connection that made it closes. A peer is never
//! trusted: a request is read with a time bound (except on a connection
//! that registered, which waits only for its close), and a malformed or
//! unknown one closes its connection. It serves only while this node runs:
//! nodes registered with it are unregistered when it ends.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

const NAMES_REQ: u8 = 110;
const DUMP_REQ: u8 = 100;
const KILL_REQ: u8 = 107;
const STOP_REQ: u8 = 115;
const ALIVE2_REQ: u8 = 120;
const ALIVE2_RESP: u8 = 121;
const ALIVE2_X_RESP: u8 = 118;
const PORT_PLEASE2_REQ: u8 = 122;
const PORT2_RESP: u8 = 119;
/// How long a connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// A registered node: what `ALIVE2_REQ` said, and `PORT2_RESP` repeats.
struct Entry {
    port: u16,
    node_type: u8,
    protocol: u8,
    highest: u16,
    lowest: u16,
    extra: Vec<u8>,
    /// Which registration made it (a later one under the same name after
    /// a close must not be removed by the old connection's end).
    serial: u64,
}

fn registry() -> MutexGuard<'static, HashMap<Vec<u8>, Entry>> {
    static NODES: OnceLock<Mutex<HashMap<Vec<u8>, Entry>>> = OnceLock::new();
    NODES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The next creation handed out: starts somewhere that depends on the
/// time (as epmd's does), so a node restarted under the same name gets
/// another one, and is never 0.
fn next_creation() -> u32 {
    static NEXT: OnceLock<AtomicU32> = OnceLock::new();
    let next = NEXT.get_or_init(|| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(1);
        AtomicU32::new(now)
    });
    loop {
        let c = next.fetch_add(1, Ordering::Relaxed);
        if c != 0 {
            return c;
        }
    }
}

/// Starts serving epmd on `port` (all interfaces, as epmd listens).
/// Err when the port cannot be had (another epmd took it first).
pub(super) fn serve(port: u16) -> std::io::Result<()> {
    let listener = TcpListener::bind(("0.0.0.0", port))?;
    std::thread::Builder::new()
        .name("epmd".into())
        .spawn(move || accept_loop(listener, port))?;
    Ok(())
}

fn accept_loop(listener: TcpListener, port: u16) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        let _ = std::thread::Builder::new()
            .name("epmd conn".into())
            .spawn(move || {
                let _ = connection(stream, port);
            });
    }
}

/// Serves one connection: one request, and for a registration the wait
/// for its close.
fn connection(mut stream: TcpStream, port: u16) -> std::io::Result<()> {
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let mut len = [0u8; 2];
    stream.read_exact(&mut len)?;
    let len = u16::from_be_bytes(len) as usize;
    if len == 0 {
        return Ok(());
    }
    let mut request = vec![0u8; len];
    stream.read_exact(&mut request)?;
    let body = &request[1..];
    match request[0] {
        ALIVE2_REQ => register(stream, body),
        PORT_PLEASE2_REQ => stream.write_all(&port_please(body)),
        NAMES_REQ => stream.write_all(&names(port, "name", "")),
        DUMP_REQ => stream.write_all(&names(port, "active name", ", fd = 0")),
        KILL_REQ => stream.write_all(b"NO"),
        STOP_REQ => stream.write_all(b"STOP_NOTOK"),
        _ => Ok(()),
    }
}

/// A big-endian u16 at `at`.
fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

/// `ALIVE2_REQ`: registers the node, answers, and keeps the entry until
/// the connection closes.
fn register(mut stream: TcpStream, body: &[u8]) -> std::io::Result<()> {
    let parsed = (|| {
        let port = u16_at(body, 0)?;
        let (node_type, protocol) = (*body.get(2)?, *body.get(3)?);
        let (highest, lowest) = (u16_at(body, 4)?, u16_at(body, 6)?);
        let nlen = u16_at(body, 8)? as usize;
        let name = body.get(10..10 + nlen)?.to_vec();
        let elen = u16_at(body, 10 + nlen)? as usize;
        let extra = body.get(12 + nlen..12 + nlen + elen)?.to_vec();
        Some((
            name,
            Entry {
                port,
                node_type,
                protocol,
                highest,
                lowest,
                extra,
                serial: 0,
            },
        ))
    })();
    let Some((name, mut entry)) = parsed else {
        return Ok(());
    };
    let x = entry.highest >= 6;
    let creation = next_creation();
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    entry.serial = serial;
    let taken = {
        let mut nodes = registry();
        if name.is_empty() || nodes.contains_key(&name) {
            true
        } else {
            nodes.insert(name.clone(), entry);
            false
        }
    };
    let mut reply = vec![if x { ALIVE2_X_RESP } else { ALIVE2_RESP }, taken as u8];
    if x {
        reply.extend_from_slice(&creation.to_be_bytes());
    } else {
        // The old 16-bit creation is 1, 2 or 3.
        reply.extend_from_slice(&((creation % 3 + 1) as u16).to_be_bytes());
    }
    let written = stream.write_all(&reply);
    if taken {
        return written;
    }
    if written.is_ok() {
        // The registration lasts until the node closes (or sends
        // anything, which a node never does).
        let _ = stream.set_read_timeout(None);
        let mut byte = [0u8; 1];
        while matches!(stream.read(&mut byte), Ok(n) if n > 0) {}
    }
    let mut nodes = registry();
    if nodes.get(&name).is_some_and(|e| e.serial == serial) {
        nodes.remove(&name);
    }
    written
}

/// `PORT_PLEASE2_REQ`: the entry of the node named `body`.
fn port_please(body: &[u8]) -> Vec<u8> {
    let nodes = registry();
    let Some(e) = nodes.get(body) else {
        return vec![PORT2_RESP, 1];
    };
    let mut out = vec![PORT2_RESP, 0];
    out.extend_from_slice(&e.port.to_be_bytes());
    out.extend_from_slice(&[e.node_type, e.protocol]);
    out.extend_from_slice(&e.highest.to_be_bytes());
    out.extend_from_slice(&e.lowest.to_be_bytes());
    out.extend_from_slice(&(body.len() as u16).to_be_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&(e.extra.len() as u16).to_be_bytes());
    out.extend_from_slice(&e.extra);
    out
}

/// `NAMES_REQ` and `DUMP_REQ`: this epmd's port, then a line per node
/// (`{lead} N at port P{tail}`), in name order.
fn names(port: u16, lead: &str, tail: &str) -> Vec<u8> {
    let mut out = (port as u32).to_be_bytes().to_vec();
    let nodes = registry();
    let mut all: Vec<(&Vec<u8>, &Entry)> = nodes.iter().collect();
    all.sort_by(|a, b| a.0.cmp(b.0));
    for (name, e) in all {
        out.extend_from_slice(lead.as_bytes());
        out.push(b' ');
        out.extend_from_slice(name);
        out.extend_from_slice(format!(" at port {}{tail}\n", e.port).as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_look_up_list_and_unregister() {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        serve(port).unwrap();
        let request = |bytes: &[u8]| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let mut framed = (bytes.len() as u16).to_be_bytes().to_vec();
            framed.extend_from_slice(bytes);
            s.write_all(&framed).unwrap();
            s
        };
        let mut alive = vec![ALIVE2_REQ, 0x12, 0x34, 77, 0, 0, 6, 0, 5, 0, 3];
        alive.extend_from_slice(b"abc\0\0");
        let mut reg = request(&alive);
        let mut resp = [0u8; 6];
        reg.read_exact(&mut resp).unwrap();
        assert_eq!(resp[..2], [ALIVE2_X_RESP, 0]);
        // The same name again is refused.
        let mut again = request(&alive);
        let mut resp2 = [0u8; 6];
        again.read_exact(&mut resp2).unwrap();
        assert_eq!(resp2[..2], [ALIVE2_X_RESP, 1]);
        let mut look = request(&[PORT_PLEASE2_REQ, b'a', b'b', b'c']);
        let mut out = Vec::new();
        look.read_to_end(&mut out).unwrap();
        assert_eq!(
            out,
            [
                119, 0, 0x12, 0x34, 77, 0, 0, 6, 0, 5, 0, 3, b'a', b'b', b'c', 0, 0
            ]
        );
        let mut names = request(&[NAMES_REQ]);
        let mut out = Vec::new();
        names.read_to_end(&mut out).unwrap();
        assert_eq!(out[..4], (port as u32).to_be_bytes());
        assert_eq!(&out[4..], b"name abc at port 4660\n");
        drop(reg);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let mut look = request(&[PORT_PLEASE2_REQ, b'a', b'b', b'c']);
            let mut out = Vec::new();
            look.read_to_end(&mut out).unwrap();
            if out == [119, 1] {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "still registered");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
