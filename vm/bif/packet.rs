//! `erlang:decode_packet/3`: one packet off the front of a binary, framed
//! as gen_tcp's `{packet, Type}` frames them. Types: `raw` (or 0), 1, 2
//! and 4 (a big-endian length header), `line`, and the HTTP types `http`,
//! `httph` (request or response line, then header lines) with their
//! `_bin` forms, which give binaries where the others give strings.
//!
//! The result is `{ok, Packet, Rest}`, `{more, Length | undefined}` when
//! the binary holds too little, or `{error, invalid}` for a packet past
//! `packet_size`. HTTP lines decode to the tuples OTP 25 gives:
//! `http_request`, `http_response`, `http_header` (known header names
//! numbered as OTP numbers them), `http_eoh` and `http_error`.

use super::erlang::list_elements;
use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::view::View;
use crate::term::{Atom, Term};

/// A result described before it is built, so its size is known first.
enum Out {
    Atom(&'static str),
    Int(i64),
    /// A string in the list types, a binary in the `_bin` ones.
    Text(Vec<u8>),
    Bin(Vec<u8>),
    Tuple(Vec<Out>),
}

impl Out {
    fn words(&self, bin: bool) -> usize {
        match self {
            Out::Atom(_) | Out::Int(_) => 0,
            Out::Text(t) if !bin => 2 * t.len(),
            Out::Text(t) | Out::Bin(t) => heap::words_for_binary(t.len()),
            Out::Tuple(items) => {
                1 + items.len() + items.iter().map(|i| i.words(bin)).sum::<usize>()
            }
        }
    }

    fn build(self, heap: &mut heap::Heap, bin: bool) -> Term {
        match self {
            Out::Atom(a) => Term::atom(Atom::intern(a)),
            Out::Int(i) => Term::small(i),
            Out::Text(t) if !bin => {
                let chars: Vec<Term> = t.iter().map(|&b| Term::small(b as i64)).collect();
                heap.list(&chars)
            }
            Out::Text(t) | Out::Bin(t) => heap.binary_from_vec(t),
            Out::Tuple(items) => {
                let terms: Vec<Term> = items.into_iter().map(|i| i.build(heap, bin)).collect();
                heap.tuple(&terms)
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Raw,
    Length(usize),
    Line,
    /// A request or response line (`first`), or header lines.
    Http {
        first: bool,
        bin: bool,
    },
}

struct Options {
    packet_size: usize,
    line_length: usize,
    delimiter: u8,
}

fn kind_of(t: Term) -> Option<Kind> {
    if let Some(n) = t.as_small() {
        return match n {
            0 => Some(Kind::Raw),
            1 | 2 | 4 => Some(Kind::Length(n as usize)),
            _ => None,
        };
    }
    Some(match t.as_atom()?.name() {
        "raw" => Kind::Raw,
        "line" => Kind::Line,
        "http" => Kind::Http {
            first: true,
            bin: false,
        },
        "httph" => Kind::Http {
            first: false,
            bin: false,
        },
        "http_bin" => Kind::Http {
            first: true,
            bin: true,
        },
        "httph_bin" => Kind::Http {
            first: false,
            bin: true,
        },
        _ => return None,
    })
}

fn options_of(ctx: &Context, t: Term) -> Option<Options> {
    let heap = &ctx.process.heap;
    let mut o = Options {
        packet_size: 0,
        line_length: 0,
        delimiter: b'\n',
    };
    for option in list_elements(heap, t)? {
        let View::Tuple(&[key, value]) = heap.view(option) else {
            return None;
        };
        let n = value.as_small().filter(|n| *n >= 0)? as usize;
        match key.as_atom()?.name() {
            "packet_size" => o.packet_size = n,
            "line_length" => o.line_length = n,
            "line_delimiter" if n < 256 => o.delimiter = n as u8,
            _ => return None,
        }
    }
    Some(o)
}

/// What one decoding step found.
enum Found {
    /// The packet's term and how many bytes it took.
    Packet(Out, usize),
    More(Option<usize>),
    Invalid,
}

pub fn decode_packet_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let kind = kind_of(args[0]).ok_or(BifError::Badarg)?;
    let options = options_of(ctx, args[2]).ok_or(BifError::Badarg)?;
    let data = ctx
        .process
        .heap
        .binary_bytes(args[1])
        .ok_or(BifError::Badarg)?
        .to_vec();
    let bin = matches!(kind, Kind::Http { bin: true, .. });
    let found = match kind {
        Kind::Raw if data.is_empty() => Found::More(None),
        Kind::Raw => Found::Packet(Out::Bin(data.clone()), data.len()),
        Kind::Length(n) => by_length(&data, n, &options),
        Kind::Line => by_line(&data, &options),
        Kind::Http { first, .. } => http(&data, first, &options),
    };
    let out = match found {
        Found::Packet(packet, used) => Out::Tuple(vec![
            Out::Atom("ok"),
            packet,
            Out::Bin(data[used..].to_vec()),
        ]),
        Found::More(n) => Out::Tuple(vec![
            Out::Atom("more"),
            n.map_or(Out::Atom("undefined"), |n| Out::Int(n as i64)),
        ]),
        Found::Invalid => Out::Tuple(vec![Out::Atom("error"), Out::Atom("invalid")]),
    };
    ctx.ensure(out.words(bin), args)?;
    Ok(out.build(ctx.heap(), bin))
}

fn by_length(data: &[u8], header: usize, o: &Options) -> Found {
    if data.len() < header {
        return Found::More(None);
    }
    let len = data[..header]
        .iter()
        .fold(0usize, |n, &b| n << 8 | b as usize);
    if o.packet_size > 0 && len > o.packet_size {
        return Found::Invalid;
    }
    if data.len() < header + len {
        return Found::More(Some(header + len));
    }
    Found::Packet(Out::Bin(data[header..header + len].to_vec()), header + len)
}

fn by_line(data: &[u8], o: &Options) -> Found {
    let end = data.iter().position(|&b| b == o.delimiter).map(|i| i + 1);
    let limit = if o.line_length > 0 {
        Some(o.line_length)
    } else {
        None
    };
    let take = match (end, limit) {
        (Some(e), Some(l)) => e.min(l),
        (Some(e), None) => e,
        (None, Some(l)) if data.len() >= l => l,
        (None, _) => {
            if o.packet_size > 0 && data.len() >= o.packet_size {
                return Found::Invalid;
            }
            return Found::More(None);
        }
    };
    if o.packet_size > 0 && take > o.packet_size {
        return Found::Invalid;
    }
    Found::Packet(Out::Bin(data[..take].to_vec()), take)
}

/// The end of the line starting at `from` (just past its `\n`).
fn line_end(data: &[u8], from: usize) -> Option<usize> {
    data[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| from + i + 1)
}

/// A line without its `\r\n` or `\n`.
fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn http(data: &[u8], first: bool, o: &Options) -> Found {
    let Some(mut end) = line_end(data, 0) else {
        if o.packet_size > 0 && data.len() > o.packet_size {
            return Found::Invalid;
        }
        return Found::More(None);
    };
    if first {
        let line = &data[..end];
        let term = request_or_response(trim_eol(line)).unwrap_or_else(|| http_error(line));
        return Found::Packet(term, end);
    }
    if trim_eol(&data[..end]).is_empty() {
        return Found::Packet(Out::Atom("http_eoh"), end);
    }
    // A header goes on over lines that start with a space or a tab: the
    // byte after each line decides, so it must be there.
    loop {
        match data.get(end) {
            None => return Found::More(None),
            Some(b' ' | b'\t') => match line_end(data, end) {
                Some(e) => end = e,
                None => return Found::More(None),
            },
            Some(_) => break,
        }
    }
    if o.packet_size > 0 && end > o.packet_size {
        return Found::Invalid;
    }
    let line = &data[..end];
    Found::Packet(
        header(trim_eol(line)).unwrap_or_else(|| http_error(line)),
        end,
    )
}

fn http_error(line: &[u8]) -> Out {
    Out::Tuple(vec![Out::Atom("http_error"), Out::Text(line.to_vec())])
}

/// `HTTP/Major.Minor`.
fn version(text: &[u8]) -> Option<Out> {
    let rest = text.strip_prefix(b"HTTP/")?;
    let dot = rest.iter().position(|&b| b == b'.')?;
    let number = |t: &[u8]| -> Option<i64> {
        if t.is_empty() || t.len() > 9 || !t.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(t).ok()?.parse().ok()
    };
    Some(Out::Tuple(vec![
        Out::Int(number(&rest[..dot])?),
        Out::Int(number(&rest[dot + 1..])?),
    ]))
}

fn request_or_response(line: &[u8]) -> Option<Out> {
    if line.starts_with(b"HTTP/") {
        let mut parts = line.splitn(3, |&b| b == b' ');
        let version = version(parts.next()?)?;
        let status = parts.next()?;
        if status.len() != 3 || !status.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let status = std::str::from_utf8(status).ok()?.parse().ok()?;
        let reason = parts.next().unwrap_or(b"");
        return Some(Out::Tuple(vec![
            Out::Atom("http_response"),
            version,
            Out::Int(status),
            Out::Text(reason.to_vec()),
        ]));
    }
    let parts: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let (method, uri, version) = match parts.as_slice() {
        [m, u, v] => (*m, *u, self::version(v)?),
        [m, u] => (*m, *u, Out::Tuple(vec![Out::Int(0), Out::Int(9)])),
        _ => return None,
    };
    if method.is_empty() || uri.is_empty() {
        return None;
    }
    const METHODS: [&str; 7] = ["OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "TRACE"];
    let method = match METHODS.iter().find(|m| m.as_bytes() == method) {
        Some(m) => Out::Atom(m),
        None => Out::Text(method.to_vec()),
    };
    Some(Out::Tuple(vec![
        Out::Atom("http_request"),
        method,
        uri_of(uri),
        version,
    ]))
}

fn uri_of(uri: &[u8]) -> Out {
    if uri == b"*" {
        return Out::Atom("*");
    }
    if uri.starts_with(b"/") {
        return Out::Tuple(vec![Out::Atom("abs_path"), Out::Text(uri.to_vec())]);
    }
    let lower = uri.to_ascii_lowercase();
    for (prefix, scheme) in [(&b"http://"[..], "http"), (&b"https://"[..], "https")] {
        if lower.starts_with(prefix) {
            let rest = &uri[prefix.len()..];
            let slash = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(slash);
            let path = if path.is_empty() { &b"/"[..] } else { path };
            let (host, port) = match authority.iter().rposition(|&b| b == b':') {
                Some(c) => {
                    let port = std::str::from_utf8(&authority[c + 1..])
                        .ok()
                        .and_then(|p| p.parse::<u16>().ok());
                    match port {
                        Some(p) => (&authority[..c], Out::Int(p as i64)),
                        None => (authority, Out::Atom("undefined")),
                    }
                }
                None => (authority, Out::Atom("undefined")),
            };
            return Out::Tuple(vec![
                Out::Atom("absoluteURI"),
                Out::Atom(scheme),
                Out::Text(host.to_vec()),
                port,
                Out::Text(path.to_vec()),
            ]);
        }
    }
    match uri.iter().position(|&b| b == b':') {
        Some(c) => Out::Tuple(vec![
            Out::Atom("scheme"),
            Out::Text(uri[..c].to_vec()),
            Out::Text(uri[c + 1..].to_vec()),
        ]),
        None => Out::Tuple(vec![Out::Atom("abs_path"), Out::Text(uri.to_vec())]),
    }
}

/// The header names OTP knows, numbered from 1 in this order.
const HEADERS: [&str; 52] = [
    "Cache-Control",
    "Connection",
    "Date",
    "Pragma",
    "Transfer-Encoding",
    "Upgrade",
    "Via",
    "Accept",
    "Accept-Charset",
    "Accept-Encoding",
    "Accept-Language",
    "Authorization",
    "From",
    "Host",
    "If-Modified-Since",
    "If-Match",
    "If-None-Match",
    "If-Range",
    "If-Unmodified-Since",
    "Max-Forwards",
    "Proxy-Authorization",
    "Range",
    "Referer",
    "User-Agent",
    "Age",
    "Location",
    "Proxy-Authenticate",
    "Public",
    "Retry-After",
    "Server",
    "Vary",
    "Warning",
    "Www-Authenticate",
    "Allow",
    "Content-Base",
    "Content-Encoding",
    "Content-Language",
    "Content-Length",
    "Content-Location",
    "Content-Md5",
    "Content-Range",
    "Content-Type",
    "Etag",
    "Expires",
    "Last-Modified",
    "Accept-Ranges",
    "Set-Cookie",
    "Set-Cookie2",
    "X-Forwarded-For",
    "Cookie",
    "Keep-Alive",
    "Proxy-Connection",
];

fn header(line: &[u8]) -> Option<Out> {
    let colon = line.iter().position(|&b| b == b':')?;
    let name = &line[..colon];
    if name.is_empty() || name.iter().any(|b| b.is_ascii_whitespace()) {
        return None;
    }
    let value = &line[colon + 1..];
    let skip = value
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    let value = &value[skip..];
    // Each word's first letter up, the rest down.
    let mut canonical = Vec::with_capacity(name.len());
    let mut up = true;
    for &b in name {
        canonical.push(if up {
            b.to_ascii_uppercase()
        } else {
            b.to_ascii_lowercase()
        });
        up = b == b'-';
    }
    let (index, field) = match HEADERS
        .iter()
        .position(|h| h.as_bytes() == canonical.as_slice())
    {
        Some(i) => (i as i64 + 1, Out::Atom(HEADERS[i])),
        None => (0, Out::Text(canonical)),
    };
    Some(Out::Tuple(vec![
        Out::Atom("http_header"),
        Out::Int(index),
        field,
        Out::Text(name.to_vec()),
        Out::Text(value.to_vec()),
    ]))
}
