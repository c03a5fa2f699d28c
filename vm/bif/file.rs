//! The `file`, `os` and `init` BIFs, and the table of open files.
//!
//! An open file is a native handle in a global table. `file:open/2`
//! (stdlib/file.act) gives it an owner process, as OTP's file server
//! does: the handle is that process's pid, so `~p` prints a pid, and the
//! file is closed when its opener exits. A `raw` file is OTP's
//! `{file_descriptor, prim_file, #{handle => Ref, ...}}`, keyed by the
//! reference. Reads and writes on either are done here, by the caller,
//! synchronously (regular files do not block for long).

use super::erlang::{char_list, list_elements, make_binary, make_string};
use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::view::View;
use crate::term::{Atom, Term};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, OnceLock};

/// OTP's name of an OS error (`enoent`, `eacces`, ...).
pub fn errno_name(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "enoent",
        Some(libc::EACCES) => "eacces",
        Some(libc::EISDIR) => "eisdir",
        Some(libc::ENOTDIR) => "enotdir",
        Some(libc::EEXIST) | Some(libc::ENOTEMPTY) => "eexist",
        Some(libc::EBADF) => "ebadf",
        Some(libc::EINVAL) => "einval",
        Some(libc::EXDEV) => "exdev",
        Some(libc::ENOSPC) => "enospc",
        Some(libc::EROFS) => "erofs",
        Some(libc::EPERM) => "eperm",
        Some(libc::ELOOP) => "eloop",
        Some(libc::ENAMETOOLONG) => "enametoolong",
        Some(libc::EBUSY) => "ebusy",
        Some(libc::EMFILE) => "emfile",
        Some(libc::ENFILE) => "enfile",
        Some(libc::EIO) => "eio",
        Some(libc::EPIPE) => "epipe",
        Some(libc::ENXIO) => "enxio",
        Some(libc::ETXTBSY) => "etxtbsy",
        _ => match e.kind() {
            std::io::ErrorKind::NotFound => "enoent",
            std::io::ErrorKind::PermissionDenied => "eacces",
            std::io::ErrorKind::AlreadyExists => "eexist",
            std::io::ErrorKind::InvalidInput => "einval",
            _ => "eio",
        },
    }
}

// ---------------------------------------------------------------------
// Open files.

/// Where a handle lives in the table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Key {
    /// Opened, not yet given to its owner process.
    Fresh(u64),
    Pid(u64),
    Ref(u64),
}

pub struct OpenFile {
    file: std::fs::File,
    /// Read ahead, not yet handed out: `rbuf[rpos..]`.
    rbuf: Vec<u8>,
    rpos: usize,
    /// Written, not yet in the file.
    wbuf: Vec<u8>,
    pub binary: bool,
    /// `{encoding, unicode | utf8}`: text is UTF-8 in the file.
    pub unicode: bool,
    readable: bool,
    writable: bool,
}

const WRITE_BUFFER: usize = 64 * 1024;
const READ_CHUNK: usize = 64 * 1024;

impl OpenFile {
    fn flush_writes(&mut self) -> std::io::Result<()> {
        if !self.wbuf.is_empty() {
            let result = self.file.write_all(&self.wbuf);
            self.wbuf.clear();
            result?;
        }
        Ok(())
    }

    /// Drops the read-ahead, moving the file position back to where the
    /// reader is.
    fn drop_reads(&mut self) -> std::io::Result<()> {
        let unread = (self.rbuf.len() - self.rpos) as i64;
        self.rbuf.clear();
        self.rpos = 0;
        if unread > 0 {
            self.file.seek(SeekFrom::Current(-unread))?;
        }
        Ok(())
    }

    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if !self.writable {
            return Err(std::io::Error::from_raw_os_error(libc::EBADF));
        }
        self.drop_reads()?;
        self.wbuf.extend_from_slice(bytes);
        if self.wbuf.len() >= WRITE_BUFFER {
            self.flush_writes()?;
        }
        Ok(())
    }

    /// Fills the read buffer; false at the end of the file.
    fn fill(&mut self) -> std::io::Result<bool> {
        if !self.readable {
            return Err(std::io::Error::from_raw_os_error(libc::EBADF));
        }
        self.flush_writes()?;
        if self.rpos > 0 {
            self.rbuf.drain(..self.rpos);
            self.rpos = 0;
        }
        let start = self.rbuf.len();
        self.rbuf.resize(start + READ_CHUNK, 0);
        let n = loop {
            match self.file.read(&mut self.rbuf[start..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.rbuf.truncate(start);
                    return Err(e);
                }
            }
        };
        self.rbuf.truncate(start + n);
        Ok(n > 0)
    }

    /// The next line with its newline (a `\r\n` read as `\n`, as OTP's
    /// file servers do); `None` at the end.
    pub fn read_line(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(i) = self.rbuf[self.rpos..].iter().position(|&b| b == b'\n') {
                let line = self.rbuf[self.rpos..self.rpos + i + 1].to_vec();
                self.rpos += i + 1;
                return Ok(Some(super::input::crlf_to_lf(line)));
            }
            if !self.fill()? {
                if self.rpos == self.rbuf.len() {
                    return Ok(None);
                }
                let line = self.rbuf[self.rpos..].to_vec();
                self.rpos = self.rbuf.len();
                return Ok(Some(line));
            }
        }
    }

    /// Puts `bytes` (read from this file) back, to be read next.
    pub fn unread(&mut self, bytes: &[u8]) {
        self.rbuf
            .splice(self.rpos..self.rpos, bytes.iter().copied());
    }

    /// Up to `n` bytes; `None` at the end.
    pub fn read(&mut self, n: usize) -> std::io::Result<Option<Vec<u8>>> {
        while self.rbuf.len() - self.rpos < n {
            if !self.fill()? {
                break;
            }
        }
        let available = (self.rbuf.len() - self.rpos).min(n);
        if available == 0 && n > 0 {
            return Ok(None);
        }
        let out = self.rbuf[self.rpos..self.rpos + available].to_vec();
        self.rpos += available;
        Ok(Some(out))
    }

    fn position(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.flush_writes()?;
        self.drop_reads()?;
        self.file.seek(to)
    }
}

struct Table {
    files: Mutex<HashMap<Key, Arc<Mutex<OpenFile>>>>,
    next: Mutex<u64>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table {
        files: Mutex::new(HashMap::new()),
        next: Mutex::new(1),
    })
}

fn files() -> std::sync::MutexGuard<'static, HashMap<Key, Arc<Mutex<OpenFile>>>> {
    table().files.lock().unwrap_or_else(|e| e.into_inner())
}

/// The table key of a device term: an owner pid or a raw file tuple.
fn key_of(heap: &heap::Heap, device: Term) -> Option<Key> {
    match heap.view(device) {
        View::Pid(id) => Some(Key::Pid(id)),
        View::Tuple([tag, module, inner])
            if tag.as_atom() == Some(Atom::intern("file_descriptor"))
                && module.as_atom() == Some(Atom::intern("raw_file_io_list")) =>
        {
            key_of(heap, *inner)
        }
        View::Tuple([tag, module, map])
            if tag.as_atom() == Some(Atom::intern("file_descriptor"))
                && module.as_atom() == Some(Atom::intern("prim_file")) =>
        {
            let handle = heap.map_get(*map, Term::atom(Atom::intern("handle")))?;
            match heap.view(handle) {
                View::Ref(id) => Some(Key::Ref(id)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The open file a device term names, if it is one.
pub fn lookup(heap: &heap::Heap, device: Term) -> Option<Arc<Mutex<OpenFile>>> {
    let key = key_of(heap, device)?;
    files().get(&key).cloned()
}

/// Writes every buffered write of every open file (at the end of a run).
pub fn flush_all() {
    let all: Vec<_> = files().values().cloned().collect();
    for f in all {
        let _ = f.lock().unwrap_or_else(|e| e.into_inner()).flush_writes();
    }
}

fn lock(f: &Arc<Mutex<OpenFile>>) -> std::sync::MutexGuard<'_, OpenFile> {
    f.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------
// Terms.

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

/// `{error, Reason}` for an OS error.
fn os_error(ctx: &mut Context, e: &std::io::Error, args: &mut [Term]) -> BifResult {
    reply_error(ctx, errno_name(e), args)
}

fn reply_error(ctx: &mut Context, reason: &str, args: &mut [Term]) -> BifResult {
    ctx.ensure(3, args)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::ERROR), atom(reason)]))
}

fn ok_tuple(ctx: &mut Context, value: Term) -> BifResult {
    let mut keep = [value];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::OK), keep[0]]))
}

/// A file name: a (deep) list of characters, a binary or an atom.
pub fn file_name(heap: &heap::Heap, t: Term) -> Option<std::path::PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(a) = t.as_atom() {
        return Some(a.name().into());
    }
    if let Some(bytes) = heap.binary_bytes(t) {
        return Some(std::ffi::OsStr::from_bytes(bytes).into());
    }
    let mut text = String::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(h, tail) => {
                stack.push(tail);
                match h.as_small() {
                    Some(c) => text.push(char::from_u32(u32::try_from(c).ok()?)?),
                    None => stack.push(h),
                }
            }
            View::Atom(a) => text.push_str(a.name()),
            View::Binary(b) => text.push_str(std::str::from_utf8(b).ok()?),
            _ => return None,
        }
    }
    if text.contains('\0') {
        return None;
    }
    Some(text.into())
}

/// The bytes of iodata (bytes and binaries, deep); characters above 255
/// are not bytes.
fn iodata(heap: &heap::Heap, t: Term, out: &mut Vec<u8>) -> Option<()> {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(h, tail) => {
                stack.push(tail);
                match h.as_small() {
                    Some(c) => out.push(u8::try_from(c).ok()?),
                    None => stack.push(h),
                }
            }
            View::Binary(b) => out.extend_from_slice(b),
            _ => return None,
        }
    }
    Some(())
}

/// Text read from a file as the file's mode returns it: a binary, or a
/// list of bytes (latin1) or of characters (UTF-8).
pub fn make_data(
    ctx: &mut Context,
    bytes: Vec<u8>,
    binary: bool,
    unicode: bool,
    args: &mut [Term],
) -> BifResult {
    if binary {
        return make_binary(ctx, bytes, args);
    }
    if unicode && let Ok(text) = std::str::from_utf8(&bytes) {
        return make_string(ctx, text, args);
    }
    ctx.ensure(2 * bytes.len(), args)?;
    let chars: Vec<Term> = bytes.iter().map(|&b| Term::small(i64::from(b))).collect();
    Ok(ctx.heap().list(&chars))
}

// ---------------------------------------------------------------------
// Whole files.

pub fn read_file_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(path) = file_name(&ctx.process.heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    match std::fs::read(&path) {
        Ok(bytes) => {
            let bin = make_binary(ctx, bytes, args)?;
            ok_tuple(ctx, bin)
        }
        Err(e) => os_error(ctx, &e, args),
    }
}

fn write_file(ctx: &mut Context, args: &mut [Term], modes: Term) -> BifResult {
    let heap = &ctx.process.heap;
    let Some(path) = file_name(heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    let mut bytes = Vec::new();
    if iodata(heap, args[1], &mut bytes).is_none() {
        return reply_error(ctx, "badarg", args);
    }
    let Some(modes) = list_elements(heap, modes) else {
        return Err(BifError::Badarg);
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    for m in modes {
        match m.as_atom().map(|a| a.name()) {
            Some("append") => {
                options.append(true).truncate(false);
            }
            Some("exclusive") => {
                options.create_new(true);
            }
            Some("write" | "binary" | "raw" | "sync" | "delayed_write") => {}
            _ => {}
        }
    }
    let result = options.open(&path).and_then(|mut f| f.write_all(&bytes));
    match result {
        Ok(()) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

pub fn write_file_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    write_file(ctx, args, Term::NIL)
}

pub fn write_file_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let modes = args[2];
    write_file(ctx, args, modes)
}

// ---------------------------------------------------------------------
// Open files.

/// `'$file':open(Name, Modes)`: `{ok, Id}` (a fresh handle for the owner
/// process that stdlib/file.act starts), `{ok, RawTuple}` with `raw`, or
/// `{error, Reason}`.
pub fn open_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let Some(path) = file_name(heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    let Some(modes) = list_elements(heap, args[1]) else {
        return reply_error(ctx, "badarg", args);
    };
    let (mut read, mut write, mut append, mut exclusive) = (false, false, false, false);
    let (mut binary, mut unicode, mut raw) = (false, false, false);
    for m in modes {
        match heap.view(m) {
            View::Atom(a) => match a.name() {
                "read" => read = true,
                "write" => write = true,
                "append" => append = true,
                "exclusive" => exclusive = true,
                "binary" => binary = true,
                "list" => binary = false,
                "raw" => raw = true,
                "read_ahead" | "delayed_write" | "compressed" | "sync" | "ram" => {}
                _ => return reply_error(ctx, "badarg", args),
            },
            View::Tuple([k, v]) if k.as_atom() == Some(Atom::intern("encoding")) => {
                unicode = matches!(v.as_atom().map(|a| a.name()), Some("unicode" | "utf8"));
            }
            View::Tuple([k, ..])
                if matches!(
                    k.as_atom().map(|a| a.name()),
                    Some("read_ahead" | "delayed_write")
                ) => {}
            _ => return reply_error(ctx, "badarg", args),
        }
    }
    if !write && !append && !exclusive {
        read = true;
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(read);
    if write || append || exclusive {
        options.write(true);
        if exclusive {
            options.create_new(true);
        } else {
            options.create(true);
        }
        if append {
            options.append(true);
        } else if !read {
            options.truncate(true);
        }
    }
    let file = match options.open(&path) {
        Ok(f) => f,
        Err(e) => return os_error(ctx, &e, args),
    };
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return reply_error(ctx, "eisdir", args);
    }
    let open = Arc::new(Mutex::new(OpenFile {
        file,
        rbuf: Vec::new(),
        rpos: 0,
        wbuf: Vec::new(),
        binary,
        unicode,
        readable: read,
        writable: write || append || exclusive,
    }));
    if raw {
        let handle = super::process::services(|s| s.make_ref());
        let buffer = super::process::services(|s| s.make_ref());
        let owner = super::process::services(|s| s.self_pid()).to_term();
        files().insert(Key::Ref(handle), open);
        ctx.ensure(2 * heap::REF_WORDS + 40, args)?;
        let h = ctx.heap();
        let handle = h.reference(handle);
        let buffer = h.reference(buffer);
        let keys = [
            atom("handle"),
            atom("owner"),
            atom("r_ahead_size"),
            atom("r_buffer"),
        ];
        let values = [handle, owner, Term::small(0), buffer];
        let map = h.map(&keys.into_iter().zip(values).collect::<Vec<_>>());
        let mut fd = h.tuple(&[atom("file_descriptor"), atom("prim_file"), map]);
        if !binary {
            // A raw file in list mode wraps the binary one, as OTP 25's.
            fd = h.tuple(&[atom("file_descriptor"), atom("raw_file_io_list"), fd]);
        }
        return ok_tuple(ctx, fd);
    }
    let id = {
        let mut next = table().next.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        *next
    };
    files().insert(Key::Fresh(id), open);
    ok_tuple(ctx, Term::small(id as i64))
}

/// `'$file':bind(Id, Pid)`: the fresh handle `Id` is now `Pid`'s.
pub fn bind_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let id = args[0].as_small().ok_or(BifError::Badarg)?;
    let View::Pid(pid) = ctx.process.heap.view(args[1]) else {
        return Err(BifError::Badarg);
    };
    let mut files = files();
    let f = files
        .remove(&Key::Fresh(id as u64))
        .ok_or(BifError::Badarg)?;
    files.insert(Key::Pid(pid), f);
    Ok(Term::OK)
}

/// `'$file':close(Fd)`: ok, or `{error, einval}` for a closed file.
pub fn close_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(key) = key_of(&ctx.process.heap, args[0]) else {
        return reply_error(ctx, "einval", args);
    };
    let Some(f) = files().remove(&key) else {
        return reply_error(ctx, "einval", args);
    };
    let result = lock(&f).flush_writes();
    match result {
        Ok(()) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

fn open_file(ctx: &Context, device: Term) -> Option<Arc<Mutex<OpenFile>>> {
    lookup(&ctx.process.heap, device)
}

pub fn read_line_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(f) = open_file(ctx, args[0]) else {
        if let Some(Key::Ref(_)) = key_of(&ctx.process.heap, args[0]) {
            return reply_error(ctx, "einval", args);
        }
        return super::io_device::read(ctx, None, args);
    };
    let (line, binary, unicode) = {
        let mut f = lock(&f);
        (f.read_line(), f.binary, f.unicode)
    };
    match line {
        Ok(Some(bytes)) => {
            let data = make_data(ctx, bytes, binary, unicode, args)?;
            ok_tuple(ctx, data)
        }
        Ok(None) => Ok(Term::atom(Atom::intern("eof"))),
        Err(e) => os_error(ctx, &e, args),
    }
}

pub fn read_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // OTP answers a bad size with an error, not an exception.
    let Some(n) = args[1].as_small().and_then(|n| usize::try_from(n).ok()) else {
        return reply_error(ctx, "badarg", args);
    };
    let Some(f) = open_file(ctx, args[0]) else {
        if let Some(Key::Ref(_)) = key_of(&ctx.process.heap, args[0]) {
            return reply_error(ctx, "einval", args);
        }
        return super::io_device::read(ctx, Some(n), args);
    };
    let (data, binary, unicode) = {
        let mut f = lock(&f);
        (f.read(n), f.binary, f.unicode)
    };
    match data {
        Ok(Some(bytes)) => {
            let data = make_data(ctx, bytes, binary, unicode, args)?;
            ok_tuple(ctx, data)
        }
        Ok(None) => Ok(Term::atom(Atom::intern("eof"))),
        Err(e) => os_error(ctx, &e, args),
    }
}

/// What a file function answers for a device that is no open file, as
/// OTP's file module does: a raw file that was closed is `einval`, a
/// process that has ended (a file closed, an io server gone)
/// `terminated`; `None` for a device that may still take the request.
fn not_open(ctx: &Context, device: Term) -> Option<&'static str> {
    match key_of(&ctx.process.heap, device) {
        Some(Key::Ref(_)) => Some("einval"),
        Some(_) if super::input::is_gone(device) => Some("terminated"),
        _ => None,
    }
}

pub fn write_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(f) = open_file(ctx, args[0]) else {
        // An io device (standard_io, standard_error, user, an io server's
        // pid, a registered name): OTP sends it the bytes as
        // `{put_chars, latin1, Bin}`, after checking they are iodata.
        let device = args[0];
        if let Some(reason) = not_open(ctx, device) {
            return reply_error(ctx, reason, args);
        }
        if !(device.is_atom() || device.is_pid() || super::io::is_io_device(device)) {
            return reply_error(ctx, "badarg", args);
        }
        let mut bytes = Vec::new();
        if iodata(&ctx.process.heap, args[1], &mut bytes).is_none() {
            return reply_error(ctx, "badarg", args);
        }
        if let Some(name) = device.as_atom()
            && !matches!(name, Atom::STANDARD_IO | Atom::STANDARD_ERROR)
            && name.name() != "user"
        {
            // A registered io server, or no one: OTP's io:request answers
            // `{error, arguments}` for a name nobody holds.
            match super::process::services(|s| s.whereis(name)) {
                Some(pid) => args[0] = Term::pid(pid.id()),
                None => return reply_error(ctx, "arguments", args),
            }
        }
        return super::io::put_latin1(ctx, args, &bytes);
    };
    let mut bytes = Vec::new();
    let unicode = lock(&f).unicode;
    let ok = if unicode {
        super::io::unicode_chars(&ctx.process.heap, args[1]).map(|chars| {
            bytes.extend(chars.iter().collect::<String>().bytes());
        })
    } else {
        iodata(&ctx.process.heap, args[1], &mut bytes)
    };
    if ok.is_none() {
        return reply_error(ctx, "badarg", args);
    }
    let result = lock(&f).write(&bytes);
    match result {
        Ok(()) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

pub fn position_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let offset = |t: Term| t.as_small();
    let to = match heap.view(args[1]) {
        View::Small(n) if n >= 0 => SeekFrom::Start(n as u64),
        View::Atom(a) if a.name() == "bof" => SeekFrom::Start(0),
        View::Atom(a) if a.name() == "cur" => SeekFrom::Current(0),
        View::Atom(a) if a.name() == "eof" => SeekFrom::End(0),
        View::Tuple([k, n]) => {
            let n = offset(*n).ok_or(BifError::Badarg)?;
            match k.as_atom().map(|a| a.name()) {
                Some("bof") if n >= 0 => SeekFrom::Start(n as u64),
                Some("cur") => SeekFrom::Current(n),
                Some("eof") => SeekFrom::End(n),
                _ => return reply_error(ctx, "einval", args),
            }
        }
        _ => return reply_error(ctx, "einval", args),
    };
    let Some(f) = open_file(ctx, args[0]) else {
        let reason = not_open(ctx, args[0]).unwrap_or("einval");
        return reply_error(ctx, reason, args);
    };
    let result = lock(&f).position(to);
    match result {
        Ok(p) => {
            let p = Term::small(p as i64);
            ok_tuple(ctx, p)
        }
        Err(e) => os_error(ctx, &e, args),
    }
}

/// `file:sync/1` and `file:datasync/1`: what was written is on the disk.
pub fn sync_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(f) = open_file(ctx, args[0]) else {
        let reason = not_open(ctx, args[0]).unwrap_or("einval");
        return reply_error(ctx, reason, args);
    };
    let result = {
        let mut f = lock(&f);
        f.flush_writes().and_then(|()| f.file.sync_data())
    };
    match result {
        Ok(()) => Ok(Term::OK),
        // A device that cannot sync (a pipe, a terminal) has nothing to do.
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

/// `file:truncate/1`: the file ends at the current position.
pub fn truncate_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(f) = open_file(ctx, args[0]) else {
        let reason = not_open(ctx, args[0]).unwrap_or("einval");
        return reply_error(ctx, reason, args);
    };
    let result = {
        let mut f = lock(&f);
        if f.writable {
            f.position(SeekFrom::Current(0))
                .and_then(|at| f.file.set_len(at))
        } else {
            Err(std::io::Error::from_raw_os_error(libc::EBADF))
        }
    };
    match result {
        Ok(()) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

/// Writes `bytes` to the open file `device` names; `None` if it names none.
pub fn write_device(heap: &heap::Heap, device: Term, chars: &[char]) -> Option<Result<(), ()>> {
    let f = lookup(heap, device)?;
    let mut f = lock(&f);
    let mut bytes = Vec::with_capacity(chars.len());
    if f.unicode {
        bytes.extend(chars.iter().collect::<String>().bytes());
    } else {
        for &c in chars {
            match u8::try_from(c as u32) {
                Ok(b) => bytes.push(b),
                Err(_) => return Some(Err(())),
            }
        }
    }
    Some(f.write(&bytes).map_err(|_| ()))
}

// ---------------------------------------------------------------------
// Directories and names.

fn unit_result(ctx: &mut Context, result: std::io::Result<()>, args: &mut [Term]) -> BifResult {
    match result {
        Ok(()) => Ok(Term::OK),
        Err(e) => os_error(ctx, &e, args),
    }
}

macro_rules! path_op {
    ($name:ident, $op:expr) => {
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let Some(path) = file_name(&ctx.process.heap, args[0]) else {
                return reply_error(ctx, "badarg", args);
            };
            let result = $op(&path);
            unit_result(ctx, result, args)
        }
    };
}

path_op!(delete_1, |p: &std::path::Path| {
    if p.is_dir() {
        Err(std::io::Error::from_raw_os_error(libc::EPERM))
    } else {
        std::fs::remove_file(p)
    }
});
path_op!(make_dir_1, std::fs::create_dir);
path_op!(del_dir_1, std::fs::remove_dir);

pub fn rename_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let (Some(from), Some(to)) = (file_name(heap, args[0]), file_name(heap, args[1])) else {
        return reply_error(ctx, "badarg", args);
    };
    let result = std::fs::rename(from, to);
    unit_result(ctx, result, args)
}

fn os_text(name: &std::ffi::OsStr) -> String {
    String::from_utf8_lossy(std::os::unix::ffi::OsStrExt::as_bytes(name)).into_owned()
}

pub fn list_dir_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(path) = file_name(&ctx.process.heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    let names: Vec<String> = match std::fs::read_dir(&path) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .map(|e| os_text(&e.file_name()))
            .collect(),
        Err(e) => return os_error(ctx, &e, args),
    };
    let words: usize = names.iter().map(|n| 2 * n.chars().count() + 2).sum();
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let mut list = Term::NIL;
    for n in names.iter().rev() {
        let s = h.string(n);
        list = h.cons(s, list);
    }
    ok_tuple(ctx, list)
}

/// `file:set_cwd(Dir)`: `ok`, or `{error, Posix}`; a name that is no
/// file name is `{error, badarg}`, as OTP answers (no exception).
pub fn set_cwd_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(path) = file_name(&ctx.process.heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    match std::env::set_current_dir(&path) {
        Ok(()) => Ok(Term::atom(Atom::OK)),
        Err(e) => os_error(ctx, &e, args),
    }
}

pub fn get_cwd_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match std::env::current_dir() {
        Ok(dir) => {
            let s = make_string(ctx, &os_text(dir.as_os_str()), args)?;
            ok_tuple(ctx, s)
        }
        Err(e) => os_error(ctx, &e, args),
    }
}

/// `{{Y, M, D}, {H, Mi, S}}` in local time for seconds since the epoch.
fn local_datetime(ctx: &mut Context, secs: i64) -> Term {
    let t = secs as libc::time_t;
    // SAFETY: localtime_r only writes the tm it is given.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm
    };
    let h = ctx.heap();
    let date = h.tuple(&[
        Term::small(i64::from(tm.tm_year) + 1900),
        Term::small(i64::from(tm.tm_mon) + 1),
        Term::small(i64::from(tm.tm_mday)),
    ]);
    let time = h.tuple(&[
        Term::small(i64::from(tm.tm_hour)),
        Term::small(i64::from(tm.tm_min)),
        Term::small(i64::from(tm.tm_sec)),
    ]);
    h.tuple(&[date, time])
}

/// `file:read_file_info/1`: OTP's `#file_info{}` record as a tuple.
pub fn read_file_info_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    use std::os::unix::fs::MetadataExt;
    let Some(path) = file_name(&ctx.process.heap, args[0]) else {
        return reply_error(ctx, "badarg", args);
    };
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) => return os_error(ctx, &e, args),
    };
    let kind = if meta.is_file() {
        "regular"
    } else if meta.is_dir() {
        "directory"
    } else if meta.file_type().is_symlink() {
        "symlink"
    } else {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_block_device() || t.is_char_device() {
            "device"
        } else {
            "other"
        }
    };
    let access = {
        let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
            .unwrap_or_default();
        // SAFETY: access(2) reads the NUL-terminated path only.
        let r = unsafe { libc::access(c.as_ptr(), libc::R_OK) } == 0;
        let w = unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
        match (r, w) {
            (true, true) => "read_write",
            (true, false) => "read",
            (false, true) => "write",
            (false, false) => "none",
        }
    };
    let dev = meta.dev();
    ctx.ensure(64, args)?;
    let atime = local_datetime(ctx, meta.atime());
    let mtime = local_datetime(ctx, meta.mtime());
    let ctime = local_datetime(ctx, meta.ctime());
    let h = ctx.heap();
    let num = |n: u64| Term::try_small(n as i64).unwrap_or(Term::small(0));
    let info = h.tuple(&[
        atom("file_info"),
        num(meta.size()),
        atom(kind),
        atom(access),
        atime,
        mtime,
        ctime,
        num(u64::from(meta.mode())),
        num(meta.nlink()),
        num(dev),
        num(0),
        num(meta.ino()),
        num(u64::from(meta.uid())),
        num(u64::from(meta.gid())),
    ]);
    ok_tuple(ctx, info)
}

// ---------------------------------------------------------------------
// os and init.

/// Variables set by `os:putenv/2`: changing the real environment while
/// scheduler threads may read it is unsound, so the VM keeps its own
/// layer on top (passed on to `os:cmd/1`); `None` is a variable that
/// `os:unsetenv/1` removed.
fn env_overlay() -> std::sync::MutexGuard<'static, HashMap<String, Option<String>>> {
    static ENV: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    ENV.get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn getenv(name: &str) -> Option<String> {
    if let Some(v) = env_overlay().get(name) {
        return v.clone();
    }
    std::env::var_os(name).map(|v| os_text(&v))
}

fn env_name(ctx: &Context, t: Term) -> Result<String, BifError> {
    char_list(&ctx.process.heap, t).ok_or(BifError::Badarg)
}

pub fn getenv_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut vars: HashMap<String, String> = std::env::vars_os()
        .map(|(k, v)| (os_text(&k), os_text(&v)))
        .collect();
    for (k, v) in env_overlay().iter() {
        match v {
            Some(v) => vars.insert(k.clone(), v.clone()),
            None => vars.remove(k),
        };
    }
    let entries: Vec<String> = vars.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    let words: usize = entries.iter().map(|n| 2 * n.chars().count() + 2).sum();
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let mut list = Term::NIL;
    for e in entries.iter().rev() {
        let s = h.string(e);
        list = h.cons(s, list);
    }
    Ok(list)
}

pub fn getenv_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = env_name(ctx, args[0])?;
    match getenv(&name) {
        Some(v) => make_string(ctx, &v, args),
        None => Ok(Term::atom(Atom::FALSE)),
    }
}

pub fn getenv_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = env_name(ctx, args[0])?;
    match getenv(&name) {
        Some(v) => make_string(ctx, &v, args),
        None => Ok(args[1]),
    }
}

pub fn putenv_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = env_name(ctx, args[0])?;
    let value = env_name(ctx, args[1])?;
    if name.is_empty() || name.contains('=') {
        return Err(BifError::Badarg);
    }
    env_overlay().insert(name, Some(value));
    Ok(Term::atom(Atom::TRUE))
}

pub fn unsetenv_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = env_name(ctx, args[0])?;
    if name.is_empty() || name.contains('=') {
        return Err(BifError::Badarg);
    }
    env_overlay().insert(name, None);
    Ok(Term::atom(Atom::TRUE))
}

pub fn getpid_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    make_string(ctx, &std::process::id().to_string(), args)
}

fn system_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

pub fn timestamp_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let micros = system_nanos() / 1000;
    let secs = micros / 1_000_000;
    ctx.ensure(4, args)?;
    Ok(ctx.heap().tuple(&[
        Term::small((secs / 1_000_000) as i64),
        Term::small((secs % 1_000_000) as i64),
        Term::small((micros % 1_000_000) as i64),
    ]))
}

pub fn system_time_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::small(system_nanos() as i64))
}

pub fn system_time_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let nanos = system_nanos();
    let per_second: u128 = match args[0].as_atom().map(|a| a.name()) {
        Some("second" | "seconds") => 1,
        Some("millisecond" | "milli_seconds") => 1_000,
        Some("microsecond" | "micro_seconds") => 1_000_000,
        Some("nanosecond" | "nano_seconds" | "native") => 1_000_000_000,
        _ => match args[0].as_small() {
            Some(n) if n > 0 => n as u128,
            _ => return Err(BifError::Badarg),
        },
    };
    Ok(Term::small((nanos * per_second / 1_000_000_000) as i64))
}

pub fn type_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    ctx.ensure(3, args)?;
    Ok(ctx.heap().tuple(&[atom("unix"), atom("linux")]))
}

/// `os:cmd/1`: the command's standard output, run by `/bin/sh -c`.
pub fn cmd_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let command = {
        let mut bytes = Vec::new();
        super::erlang::chardata_bytes(&ctx.process.heap, args[0], &mut bytes)
            .ok_or(BifError::Badarg)?;
        if args[0].as_atom().is_some() {
            bytes = args[0]
                .as_atom()
                .map(|a| a.name().as_bytes().to_vec())
                .unwrap_or_default();
        }
        String::from_utf8_lossy(&bytes).into_owned()
    };
    crate::runtime::output::flush();
    let mut shell = std::process::Command::new("/bin/sh");
    shell.arg("-c").arg(format!("exec 2>&1\n{command}"));
    let overlay = env_overlay().clone();
    for (k, v) in overlay {
        match v {
            Some(v) => shell.env(k, v),
            None => shell.env_remove(k),
        };
    }
    let output = shell.stdin(std::process::Stdio::null()).output();
    let bytes = output.map(|o| o.stdout).unwrap_or_default();
    make_data(ctx, bytes, false, false, args)
}

/// The script's arguments (`init:get_plain_arguments/0`): escript's
/// are the script's name and its arguments.
static PLAIN_ARGUMENTS: OnceLock<Vec<String>> = OnceLock::new();

pub fn set_plain_arguments(args: Vec<String>) {
    let _ = PLAIN_ARGUMENTS.set(args);
}

pub fn get_plain_arguments_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let plain = PLAIN_ARGUMENTS.get().cloned().unwrap_or_default();
    let words: usize = plain.iter().map(|n| 2 * n.chars().count() + 2).sum();
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let mut list = Term::NIL;
    for a in plain.iter().rev() {
        let s = h.string(a);
        list = h.cons(s, list);
    }
    Ok(list)
}
