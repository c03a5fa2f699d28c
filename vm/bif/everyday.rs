//! Everyday OTP functions the library audit (scripts/library_gaps.sh)
//! found missing: local/universal time conversion, `halt/2`, `os`'s
//! performance counter, version, executables and environment, a few
//! `file` operations, `unicode`'s byte order marks, `io:printable_range`,
//! POSIX time conversion and `inet:gethostname/0`.

use super::erlang::{make_binary, make_string, per_second};
use super::{BifError, BifResult, Context};
use crate::term::view::View;
use crate::term::{Atom, Term};

fn atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}

fn small_field(t: Term, lo: i64, hi: i64) -> Result<i64, BifError> {
    t.as_small()
        .filter(|v| (lo..=hi).contains(v))
        .ok_or(BifError::Badarg)
}

/// `{{Y, Mo, D}, {H, Mi, S}}` read from a term (badarg if malformed).
fn datetime(ctx: &Context, t: Term) -> Result<[i64; 6], BifError> {
    let heap = &ctx.process.heap;
    let pair = heap
        .as_tuple(t)
        .filter(|p| p.len() == 2)
        .ok_or(BifError::Badarg)?;
    let date = heap
        .as_tuple(pair[0])
        .filter(|d| d.len() == 3)
        .ok_or(BifError::Badarg)?;
    let time = heap
        .as_tuple(pair[1])
        .filter(|d| d.len() == 3)
        .ok_or(BifError::Badarg)?;
    let y = small_field(date[0], 0, 1 << 40)?;
    let mo = small_field(date[1], 1, 12)?;
    let d = small_field(date[2], 1, 31)?;
    let days_in = match mo {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if d > days_in {
        return Err(BifError::Badarg);
    }
    let h = small_field(time[0], 0, 23)?;
    let mi = small_field(time[1], 0, 59)?;
    let s = small_field(time[2], 0, 59)?;
    Ok([y, mo, d, h, mi, s])
}

fn tm_of(dt: [i64; 6]) -> libc::tm {
    // SAFETY: `tm` is plain data; all-zero is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = (dt[0] - 1900) as i32;
    tm.tm_mon = (dt[1] - 1) as i32;
    tm.tm_mday = dt[2] as i32;
    tm.tm_hour = dt[3] as i32;
    tm.tm_min = dt[4] as i32;
    tm.tm_sec = dt[5] as i32;
    tm.tm_isdst = -1;
    tm
}

fn civil(secs: i64, local: bool) -> [i64; 6] {
    let t = secs as libc::time_t;
    // SAFETY: `tm` is plain data that `*_r` fills; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe {
        if local {
            !libc::localtime_r(&t, &mut tm).is_null()
        } else {
            !libc::gmtime_r(&t, &mut tm).is_null()
        }
    };
    if !ok {
        return [1970, 1, 1, 0, 0, 0];
    }
    [
        tm.tm_year as i64 + 1900,
        tm.tm_mon as i64 + 1,
        tm.tm_mday as i64,
        tm.tm_hour as i64,
        tm.tm_min as i64,
        tm.tm_sec as i64,
    ]
}

fn datetime_term(ctx: &mut Context, args: &mut [Term], dt: [i64; 6]) -> BifResult {
    ctx.ensure(12, args)?;
    let heap = ctx.heap();
    let date = heap.tuple(&[Term::small(dt[0]), Term::small(dt[1]), Term::small(dt[2])]);
    let time = heap.tuple(&[Term::small(dt[3]), Term::small(dt[4]), Term::small(dt[5])]);
    Ok(heap.tuple(&[date, time]))
}

/// `erlang:localtime_to_universaltime/1`.
pub fn localtime_to_universaltime_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let dt = datetime(ctx, args[0])?;
    let mut tm = tm_of(dt);
    // SAFETY: `tm` is a valid, initialised struct.
    let secs = unsafe { libc::mktime(&mut tm) };
    datetime_term(ctx, args, civil(secs as i64, false))
}

/// `erlang:localtime_to_universaltime/2`: the daylight-saving flag is
/// decided by the time zone, as `undefined` asks.
pub fn localtime_to_universaltime_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !matches!(
        args[1].as_atom().map(|a| a.name()),
        Some("true" | "false" | "undefined")
    ) {
        return Err(BifError::Badarg);
    }
    localtime_to_universaltime_1(ctx, args)
}

/// `erlang:universaltime_to_localtime/1`.
pub fn universaltime_to_localtime_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let dt = datetime(ctx, args[0])?;
    let mut tm = tm_of(dt);
    tm.tm_isdst = 0;
    // SAFETY: as above.
    let secs = unsafe { libc::timegm(&mut tm) };
    datetime_term(ctx, args, civil(secs as i64, true))
}

/// `erlang:universaltime_to_posixtime({Date, Time})`: seconds since the
/// epoch.
pub fn universaltime_to_posixtime_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let dt = datetime(ctx, args[0])?;
    let mut tm = tm_of(dt);
    tm.tm_isdst = 0;
    // SAFETY: timegm reads and normalises the tm it is given.
    let secs = unsafe { libc::timegm(&mut tm) };
    ctx.ensure(4, args)?;
    Ok(ctx.heap().int(secs as i64))
}

/// `erlang:posixtime_to_universaltime(Seconds)`.
pub fn posixtime_to_universaltime_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let secs = args[0].as_small().ok_or(BifError::Badarg)?;
    datetime_term(ctx, args, civil(secs, false))
}

/// `inet:gethostname()`: `{ok, Name}`, the machine's name as the kernel
/// has it.
pub fn gethostname_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = make_string(ctx, &crate::dist::machine_name(), args)?;
    let mut keep = [name];
    ctx.ensure(3, &mut keep)?;
    Ok(ctx.heap().tuple(&[atom("ok"), keep[0]]))
}

/// `erlang:ports()`: act has no port a program can list.
pub fn ports_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::NIL)
}

/// `os:perf_counter()`: nanoseconds, the counter's own unit on Linux.
pub fn perf_counter_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let ns = super::process::services(|s| s.now_ns());
    ctx.ensure(4, args)?;
    Ok(ctx.heap().int(ns as i64))
}

/// `os:perf_counter(Unit)`.
pub fn perf_counter_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let per = per_second(args[0])?;
    let ns = super::process::services(|s| s.now_ns()) as i128;
    let v = ns * per / 1_000_000_000;
    ctx.ensure(4, args)?;
    Ok(ctx.heap().int(v as i64))
}

/// `os:version()`: `{Major, Minor, Release}` of the kernel.
pub fn version_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // SAFETY: `utsname` is plain data that `uname` fills.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    let release = if unsafe { libc::uname(&mut u) } == 0 {
        // SAFETY: `uname` wrote a NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    } else {
        String::new()
    };
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().unwrap_or(0));
    let v = [
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    ];
    ctx.ensure(4, args)?;
    Ok(ctx
        .heap()
        .tuple(&[Term::small(v[0]), Term::small(v[1]), Term::small(v[2])]))
}

fn text_arg(ctx: &Context, t: Term) -> Result<String, BifError> {
    let path = super::file::file_name(&ctx.process.heap, t).ok_or(BifError::Badarg)?;
    Ok(path.to_string_lossy().into_owned())
}

fn executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn find_in(ctx: &mut Context, args: &mut [Term], name: &str, path: &str) -> BifResult {
    if name.contains('/') {
        let p = std::path::Path::new(name);
        return if executable(p) {
            let full = if p.is_absolute() {
                name.to_string()
            } else {
                let cwd = std::env::current_dir().unwrap_or_default();
                cwd.join(p).to_string_lossy().into_owned()
            };
            make_string(ctx, &full, args)
        } else {
            Ok(Term::atom(Atom::FALSE))
        };
    }
    for dir in path.split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        let candidate = std::path::Path::new(dir).join(name);
        if executable(&candidate) {
            return make_string(ctx, &candidate.to_string_lossy(), args);
        }
    }
    Ok(Term::atom(Atom::FALSE))
}

/// `os:find_executable(Name)`: the first match on `$PATH`, or false.
pub fn find_executable_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = text_arg(ctx, args[0])?;
    let path = std::env::var("PATH").unwrap_or_default();
    find_in(ctx, args, &name, &path)
}

/// `os:find_executable(Name, Path)`.
pub fn find_executable_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = text_arg(ctx, args[0])?;
    let path = text_arg(ctx, args[1])?;
    find_in(ctx, args, &name, &path)
}

/// `os:cmd(Command, Options)`: the options (`max_size`) are accepted.
pub fn cmd_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if !matches!(ctx.process.heap.view(args[1]), View::Map { .. }) {
        return Err(BifError::Badarg);
    }
    super::file::cmd_1(ctx, args)
}

/// `os:env()`: `[{Name, Value}]` of the environment.
pub fn env_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let vars = super::file::getenv_0(ctx, args)?;
    // getenv/0 gives "Name=Value" strings; split each at its first `=`.
    let heap = &ctx.process.heap;
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut t = vars;
    while let View::Cons(h, tl) = heap.view(t) {
        let s = super::erlang::char_list(heap, h).unwrap_or_default();
        if let Some((k, v)) = s.split_once('=') {
            pairs.push((k.to_string(), v.to_string()));
        }
        t = tl;
    }
    let words: usize = pairs
        .iter()
        .map(|(k, v)| 2 * (k.chars().count() + v.chars().count()) + 5)
        .sum();
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    for (k, v) in pairs.iter().rev() {
        let k = heap.string(k);
        let v = heap.string(v);
        let pair = heap.tuple(&[k, v]);
        list = heap.cons(pair, list);
    }
    Ok(list)
}

fn file_error(ctx: &mut Context, args: &mut [Term], e: &std::io::Error) -> BifResult {
    let reason = super::file::errno_name(e);
    ctx.ensure(3, args)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::ERROR), atom(reason)]))
}

fn unit(ctx: &mut Context, args: &mut [Term], r: std::io::Result<()>) -> BifResult {
    match r {
        Ok(()) => Ok(Term::atom(Atom::OK)),
        Err(e) => file_error(ctx, args, &e),
    }
}

fn path_of(ctx: &Context, t: Term) -> Option<std::path::PathBuf> {
    super::file::file_name(&ctx.process.heap, t)
}

/// `file:del_dir_r(Dir)`: a directory and everything in it.
pub fn del_dir_r_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(dir) = path_of(ctx, args[0]) else {
        return Err(BifError::Badarg);
    };
    let r = match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dir),
        Ok(_) => Err(std::io::Error::from_raw_os_error(libc::ENOTDIR)),
        Err(e) => Err(e),
    };
    unit(ctx, args, r)
}

/// `file:copy(Source, Destination)`: `{ok, BytesCopied}`.
pub fn copy_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (Some(from), Some(to)) = (path_of(ctx, args[0]), path_of(ctx, args[1])) else {
        return Err(BifError::Badarg);
    };
    match std::fs::copy(from, to) {
        Ok(n) => {
            ctx.ensure(7, args)?;
            let heap = ctx.heap();
            let n = heap.int(n as i64);
            Ok(heap.tuple(&[Term::atom(Atom::OK), n]))
        }
        Err(e) => file_error(ctx, args, &e),
    }
}

/// `unicode:bom_to_encoding(Bin)`: `{Encoding, Length}` of a byte order
/// mark at the start of `Bin` (`{latin1, 0}` for none).
pub fn bom_to_encoding_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .to_vec();
    let (name, end, n) = match bytes.as_slice() {
        [0xEF, 0xBB, 0xBF, ..] => ("utf8", None, 3),
        [0x00, 0x00, 0xFE, 0xFF, ..] => ("utf32", Some("big"), 4),
        [0xFF, 0xFE, 0x00, 0x00, ..] => ("utf32", Some("little"), 4),
        [0xFE, 0xFF, ..] => ("utf16", Some("big"), 2),
        [0xFF, 0xFE, ..] => ("utf16", Some("little"), 2),
        _ => ("latin1", None, 0),
    };
    ctx.ensure(6, args)?;
    let heap = ctx.heap();
    let enc = match end {
        Some(end) => heap.tuple(&[atom(name), atom(end)]),
        None => atom(name),
    };
    Ok(heap.tuple(&[enc, Term::small(n)]))
}

/// `unicode:encoding_to_bom(Encoding)`.
pub fn encoding_to_bom_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let name = |t: Term| t.as_atom().map(|a| a.name());
    let bom: &[u8] = match name(args[0]) {
        Some("utf8" | "unicode") => &[0xEF, 0xBB, 0xBF],
        Some("utf16") => &[0xFE, 0xFF],
        Some("utf32") => &[0x00, 0x00, 0xFE, 0xFF],
        Some("latin1") => &[],
        _ => match heap.as_tuple(args[0]) {
            Some([e, end]) => match (name(*e), name(*end)) {
                (Some("utf16"), Some("big")) => &[0xFE, 0xFF],
                (Some("utf16"), Some("little")) => &[0xFF, 0xFE],
                (Some("utf32"), Some("big")) => &[0x00, 0x00, 0xFE, 0xFF],
                (Some("utf32"), Some("little")) => &[0xFF, 0xFE, 0x00, 0x00],
                _ => {
                    return Err(BifError::Raise(
                        crate::process::Class::Error,
                        Term::atom(Atom::FUNCTION_CLAUSE),
                    ));
                }
            },
            _ => {
                return Err(BifError::Raise(
                    crate::process::Class::Error,
                    Term::atom(Atom::FUNCTION_CLAUSE),
                ));
            }
        },
    };
    make_binary(ctx, bom.to_vec(), args)
}

/// `io:printable_range()`: escript starts without `+pc unicode`.
pub fn printable_range_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(atom("latin1"))
}
