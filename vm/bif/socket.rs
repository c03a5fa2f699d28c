//! The BIFs of module `'$socket'`, which `stdlib/gen_tcp.act`,
//! `gen_udp.act` and `inet.act` are written on: they read their
//! arguments (options included), call `runtime::sockets`, and build the
//! answer. A call that must wait (`recv`, `accept`, `connect`) answers
//! `{wait, Ref}`; the library then receives `{Ref, Result}`.
//!
//! An option list that is not valid gives the atom `badarg` (not the
//! exception): `gen_tcp:listen` exits with it where `inet:setopts`
//! answers `{error, einval}`, as OTP does.

use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::runtime::sockets::{self, Active, Answer, Options, Packet, Setting};
use crate::sched::Pid;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4};
use std::time::Duration;

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

fn socket_of(heap: &Heap, t: Term) -> Result<u64, BifError> {
    super::port::port_of(heap, t).ok_or(BifError::Badarg)
}

fn me() -> Pid {
    super::process::services(|s| s.self_pid())
}

fn new_reference() -> u64 {
    super::process::services(|s| s.make_ref())
}

/// Builds `answer` (with `reference` for `{wait, Ref}`) on the caller's
/// heap.
fn answer(ctx: &mut Context, args: &mut [Term], answer: Answer, reference: u64) -> BifResult {
    let data_words = match &answer {
        Answer::Packet(d, binary) | Answer::Datagram(_, d, binary) => {
            if *binary {
                heap::words_for_binary(d.len())
            } else {
                2 * d.len()
            }
        }
        _ => 0,
    };
    ctx.ensure(24 + 2 * heap::REF_WORDS + data_words, args)?;
    let heap = ctx.heap();
    Ok(match answer {
        Answer::Wait => {
            let r = heap.reference(reference);
            heap.tuple(&[atom("wait"), r])
        }
        other => sockets::answer_term(heap, &other),
    })
}

fn error_tuple(ctx: &mut Context, args: &mut [Term], reason: &'static str) -> BifResult {
    answer(ctx, args, Answer::Error(reason), 0)
}

/// `ok` or `{error, Reason}`.
fn done(ctx: &mut Context, args: &mut [Term], result: Result<(), &'static str>) -> BifResult {
    match result {
        Ok(()) => Ok(Term::OK),
        Err(reason) => error_tuple(ctx, args, reason),
    }
}

/// `{A, B, C, D}` of bytes.
pub fn ipv4_of(heap: &Heap, t: Term) -> Option<Ipv4Addr> {
    let View::Tuple(parts) = heap.view(t) else {
        return None;
    };
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(parts) {
        *o = u8::try_from(p.as_small()?).ok()?;
    }
    Some(Ipv4Addr::from(octets))
}

fn boolean(t: Term) -> Option<bool> {
    match t.as_atom()?.name() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// What an option list asks for.
#[derive(Default)]
struct Parsed {
    settings: Vec<Setting>,
    ip: Option<Ipv4Addr>,
}

/// Reads an option list (`None`: one is not valid).
fn parse_options(heap: &Heap, list: Term) -> Option<Parsed> {
    let mut parsed = Parsed::default();
    for option in super::erlang::list_elements(heap, list)? {
        let setting = match heap.view(option) {
            View::Atom(a) => match a.name() {
                "binary" => Setting::Binary(true),
                "list" => Setting::Binary(false),
                "inet" => continue,
                _ => return None,
            },
            View::Tuple([key, value]) => {
                let value = *value;
                match key.as_atom()?.name() {
                    "mode" => match value.as_atom()?.name() {
                        "binary" => Setting::Binary(true),
                        "list" => Setting::Binary(false),
                        _ => return None,
                    },
                    "packet" => Setting::Packet(packet_of(value)?),
                    "active" => match value.as_atom().map(|a| a.name()) {
                        Some("true") => Setting::Active(Active::On),
                        Some("false") => Setting::Active(Active::Off),
                        Some("once") => Setting::Active(Active::Once),
                        _ => {
                            let k = value.as_small()?;
                            if !(-32768..=32767).contains(&k) {
                                return None;
                            }
                            Setting::AddActive(k as i32)
                        }
                    },
                    "exit_on_close" => Setting::ExitOnClose(boolean(value)?),
                    "nodelay" => Setting::Nodelay(boolean(value)?),
                    "reuseaddr" => Setting::Reuseaddr(boolean(value)?),
                    "keepalive" => Setting::Keepalive(boolean(value)?),
                    "ip" | "ifaddr" => {
                        parsed.ip = Some(match value.as_atom().map(|a| a.name()) {
                            Some("any") => Ipv4Addr::UNSPECIFIED,
                            Some("loopback") => Ipv4Addr::LOCALHOST,
                            _ => ipv4_of(heap, value)?,
                        });
                        continue;
                    }
                    "backlog"
                    | "port"
                    | "buffer"
                    | "recbuf"
                    | "sndbuf"
                    | "priority"
                    | "tos"
                    | "header"
                    | "packet_size"
                    | "high_watermark"
                    | "low_watermark"
                    | "high_msgq_watermark"
                    | "low_msgq_watermark" => {
                        value.as_small()?;
                        continue;
                    }
                    "delay_send" | "send_timeout_close" | "show_econnreset" | "reuseport"
                    | "reuseport_lb" | "broadcast" | "dontroute" | "multicast_loop" => {
                        boolean(value)?;
                        continue;
                    }
                    "send_timeout" | "linger" | "deliver" | "multicast_ttl" => continue,
                    _ => return None,
                }
            }
            _ => return None,
        };
        parsed.settings.push(setting);
    }
    Some(parsed)
}

fn packet_of(t: Term) -> Option<Packet> {
    if let Some(a) = t.as_atom() {
        return match a.name() {
            "raw" => Some(Packet::Raw),
            "line" => Some(Packet::Line),
            _ => None,
        };
    }
    match t.as_small()? {
        0 => Some(Packet::Raw),
        n @ (1 | 2 | 4) => Some(Packet::Prefix(n as u8)),
        _ => None,
    }
}

/// A new socket's options: OTP's defaults with `settings` applied.
fn initial(settings: &[Setting], defaults: Options) -> Options {
    let mut o = defaults;
    for s in settings {
        match *s {
            Setting::Binary(b) => o.binary = b,
            Setting::Packet(p) => o.packet = p,
            Setting::Active(a) => o.active = a,
            Setting::AddActive(k) if k > 0 => o.active = Active::Count(k),
            Setting::AddActive(_) => o.active = Active::Off,
            Setting::ExitOnClose(b) => o.exit_on_close = b,
            Setting::Nodelay(b) => o.nodelay = b,
            Setting::Reuseaddr(b) => o.reuseaddr = b,
            Setting::Keepalive(b) => o.keepalive = b,
        }
    }
    o
}

fn port_number(t: Term) -> Option<u16> {
    u16::try_from(t.as_small()?).ok()
}

/// `'$socket':tcp_listen(Port, Options)`.
pub fn tcp_listen_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    open_on_port(ctx, args, sockets::listen)
}

/// A socket bound to the port `args[0]` with the options `args[1]`
/// (`{ip, Ip}` among them, or every address), opened by `open`.
fn open_on_port(
    ctx: &mut Context,
    args: &mut [Term],
    open: fn(Ipv4Addr, u16, Pid, Options) -> Answer,
) -> BifResult {
    let heap = &ctx.process.heap;
    let port = port_number(args[0]).ok_or(BifError::Badarg)?;
    let Some(parsed) = parse_options(heap, args[1]) else {
        return Ok(atom("badarg"));
    };
    let options = initial(&parsed.settings, Options::default());
    let ip = parsed.ip.unwrap_or(Ipv4Addr::UNSPECIFIED);
    let result = open(ip, port, me(), options);
    answer(ctx, args, result, 0)
}

/// `'$socket':tcp_connect(Ip, Port, Options, Timeout)`: `{wait, Ref}`.
pub fn tcp_connect_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let ip = ipv4_of(heap, args[0]).ok_or(BifError::Badarg)?;
    let port = port_number(args[1]).ok_or(BifError::Badarg)?;
    let Some(parsed) = parse_options(heap, args[2]) else {
        return Ok(atom("badarg"));
    };
    let timeout = match args[3].as_small() {
        Some(ms) if ms >= 0 => Some(Duration::from_millis(ms as u64)),
        _ if args[3].as_atom().map(|a| a.name()) == Some("infinity") => None,
        _ => return Err(BifError::Badarg),
    };
    let options = initial(&parsed.settings, Options::default());
    let reference = new_reference();
    sockets::connect(ip, port, me(), options, timeout, reference);
    answer(ctx, args, Answer::Wait, reference)
}

/// `'$socket':udp_open(Port, Options)`.
pub fn udp_open_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    open_on_port(ctx, args, sockets::udp_open)
}

/// `'$socket':recv(S, Length)`.
pub fn recv_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    let length = args[1]
        .as_small()
        .and_then(|k| usize::try_from(k).ok())
        .ok_or(BifError::Badarg)?;
    let reference = new_reference();
    let result = sockets::recv(n, length, me(), reference);
    answer(ctx, args, result, reference)
}

/// `'$socket':accept(S)`.
pub fn accept_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    let reference = new_reference();
    let result = sockets::accept(n, me(), reference);
    answer(ctx, args, result, reference)
}

/// `'$socket':cancel(S, Ref)`: whether the wait was still on.
pub fn cancel_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = socket_of(heap, args[0])?;
    let reference = super::process::reference_id(heap, args[1]).ok_or(BifError::Badarg)?;
    Ok(Term::boolean(sockets::cancel(n, reference)))
}

/// `'$socket':send(S, Data)`.
pub fn send_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = socket_of(heap, args[0])?;
    let data = crate::term::iolist::iolist_bytes(heap, args[1]).ok_or(BifError::Badarg)?;
    let result = sockets::send(n, data, None);
    done(ctx, args, result)
}

/// `'$socket':send_to(S, Ip, Port, Data)`.
pub fn send_to_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = socket_of(heap, args[0])?;
    let ip = ipv4_of(heap, args[1]).ok_or(BifError::Badarg)?;
    let port = port_number(args[2]).ok_or(BifError::Badarg)?;
    let Some(data) = crate::term::iolist::iolist_bytes(heap, args[3]) else {
        return error_tuple(ctx, args, "einval");
    };
    let result = sockets::send(n, data, Some(SocketAddrV4::new(ip, port)));
    done(ctx, args, result)
}

/// `'$socket':close(S)`.
pub fn close_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    sockets::close(n);
    Ok(Term::OK)
}

/// `'$socket':shutdown(S, read | write | read_write)`.
pub fn shutdown_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    let how = match args[1].as_atom().map(|a| a.name()) {
        Some("read") => Shutdown::Read,
        Some("write") => Shutdown::Write,
        Some("read_write") => Shutdown::Both,
        _ => return Err(BifError::Badarg),
    };
    let result = sockets::shutdown(n, how);
    done(ctx, args, result)
}

/// `'$socket':owner(S)`: `{ok, Pid}` or `{error, closed}`.
pub fn owner_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    match sockets::owner(n) {
        Some(pid) => {
            ctx.ensure(3, args)?;
            Ok(ctx.heap().tuple(&[Term::OK, pid.to_term()]))
        }
        None => error_tuple(ctx, args, "closed"),
    }
}

/// `'$socket':hold(S)`: `{ok, Ref}`, and `{'$socket_held', Ref}` comes
/// after every message the socket has sent so far.
pub fn hold_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    let reference = new_reference();
    if !sockets::hold(n, me(), reference) {
        return error_tuple(ctx, args, "closed");
    }
    ctx.ensure(3 + heap::REF_WORDS, args)?;
    let heap = ctx.heap();
    let r = heap.reference(reference);
    Ok(heap.tuple(&[Term::OK, r]))
}

/// `'$socket':release(S, Pid)`: `Pid` controls `S` from now on.
pub fn release_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    let pid = Pid::from_term(args[1]).ok_or(BifError::Badarg)?;
    if sockets::release(n, pid) {
        Ok(Term::OK)
    } else {
        error_tuple(ctx, args, "closed")
    }
}

/// `'$socket':setopts(S, Options)`: `ok`, `{error, einval}`.
pub fn setopts_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = socket_of(heap, args[0])?;
    let Some(parsed) = parse_options(heap, args[1]) else {
        return error_tuple(ctx, args, "einval");
    };
    let result = sockets::setopts(n, &parsed.settings);
    done(ctx, args, result)
}

/// `'$socket':getopts(S, Names)`: `{ok, [{Name, Value}]}`.
pub fn getopts_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let n = socket_of(heap, args[0])?;
    let Some(names) = super::erlang::list_elements(heap, args[1]) else {
        return error_tuple(ctx, args, "einval");
    };
    let Some(o) = sockets::options(n) else {
        return error_tuple(ctx, args, "einval");
    };
    let mut values = Vec::new();
    for name in names {
        let Some(a) = name.as_atom() else {
            return error_tuple(ctx, args, "einval");
        };
        let value = match a.name() {
            "active" => match o.active {
                Active::Off => Term::FALSE,
                Active::On => Term::TRUE,
                Active::Once => atom("once"),
                Active::Count(k) => Term::small(i64::from(k)),
            },
            "packet" => match o.packet {
                Packet::Raw => Term::small(0),
                Packet::Line => atom("line"),
                Packet::Prefix(k) => Term::small(i64::from(k)),
            },
            "mode" => atom(if o.binary { "binary" } else { "list" }),
            "exit_on_close" => Term::boolean(o.exit_on_close),
            "nodelay" => Term::boolean(o.nodelay),
            "reuseaddr" => Term::boolean(o.reuseaddr),
            "keepalive" => Term::boolean(o.keepalive),
            "header" | "packet_size" => Term::small(0),
            "delay_send" => Term::FALSE,
            "send_timeout" => atom("infinity"),
            "deliver" => atom("term"),
            // Options of OTP's that act does not keep: left out of the
            // answer, as OTP leaves out those it cannot read.
            "buffer" | "recbuf" | "sndbuf" | "linger" | "priority" | "tos" | "high_watermark"
            | "low_watermark" | "send_timeout_close" | "show_econnreset" | "reuseport" => {
                continue;
            }
            _ => return error_tuple(ctx, args, "einval"),
        };
        values.push((a, value));
    }
    ctx.ensure(3 + 5 * values.len(), args)?;
    let heap = ctx.heap();
    let pairs: Vec<Term> = values
        .into_iter()
        .map(|(a, v)| heap.tuple(&[Term::atom(a), v]))
        .collect();
    let list = heap.list(&pairs);
    Ok(heap.tuple(&[Term::OK, list]))
}

fn address(ctx: &mut Context, args: &mut [Term], peer: bool) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    match sockets::address(n, peer) {
        Ok(a) => {
            ctx.ensure(16, args)?;
            let heap = ctx.heap();
            let ip = sockets::ip_term(heap, *a.ip());
            let pair = heap.tuple(&[ip, Term::small(i64::from(a.port()))]);
            Ok(heap.tuple(&[Term::OK, pair]))
        }
        Err(reason) => error_tuple(ctx, args, reason),
    }
}

/// `'$socket':sockname(S)`.
pub fn sockname_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    address(ctx, args, false)
}

/// `'$socket':peername(S)`.
pub fn peername_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    address(ctx, args, true)
}

/// `'$socket':getaddr(Host)`: a host name (string or atom) to
/// `{ok, Ip}` or `{error, nxdomain}`.
pub fn getaddr_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let host = match args[0].as_atom() {
        Some(a) => a.name().to_string(),
        None => {
            let chars = super::io::unicode_chars(heap, args[0]).ok_or(BifError::Badarg)?;
            chars.into_iter().collect()
        }
    };
    match sockets::resolve(&host) {
        Ok(ip) => {
            ctx.ensure(10, args)?;
            let heap = ctx.heap();
            let t = sockets::ip_term(heap, ip);
            Ok(heap.tuple(&[Term::OK, t]))
        }
        Err(reason) => error_tuple(ctx, args, reason),
    }
}

/// Whether `S` is a listening socket (`'$socket':is_listener/1`;
/// `{error, closed}` when it is closed).
pub fn is_listener_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = socket_of(&ctx.process.heap, args[0])?;
    match sockets::is_listener(n) {
        Some(b) => Ok(Term::boolean(b)),
        None => error_tuple(ctx, args, "closed"),
    }
}
