//! Printing terms as Erlang does: `~w` (`write`) and `~p` (`print`, with
//! io_lib_pretty's line breaking), byte for byte as OTP 25 prints them.
//!
//! `~w` writes every term flat: lists as lists (never strings), binaries
//! as bytes, atoms quoted where needed, floats in the shortest form that
//! reads back. It walks the term with an explicit stack.
//!
//! `~p` prints lists of printable characters as strings and printable
//! binaries as `<<"...">>`, and breaks a term that does not fit. The
//! breaking, in our words:
//!
//! 1. Measure: turn the term into a `Doc` tree where every node knows the
//!    length of its flat text. Leaves (numbers, atoms, strings, printable
//!    binaries...) are "atomic"; lists, tuples, maps and byte-binaries are
//!    structures.
//! 2. A node that fits in the rest of the line (`len < line_length - col -
//!    closers`, where `closers` counts the brackets that must still follow
//!    it on the same line) is written flat.
//! 3. Otherwise its elements go one by one after the opening bracket,
//!    aligned under the first: an atomic element joins the current line
//!    if it fits (with its comma), else starts a new one; a structure
//!    always starts a new line and forces the next element onto a new
//!    line too. So lists of numbers fill lines and lists of tuples go one
//!    per line. A map does the same with `Key => Value` pairs (atomic when
//!    both sides are); a pair that does not fit puts the value on the next
//!    line, indented.
//! 4. A tuple whose first element is an atom ("tagged") keeps the tag on
//!    the first line and aligns the rest after `{tag,`. Before printing,
//!    a trial pass checks whether that alignment keeps every tag column
//!    in the left half of the line; if not, the rest is indented by 4
//!    instead (and failing that, by 1).
//! 5. An improper tail follows `|`, on the same line if atomic and it
//!    fits, else on its own line.
//!
//! 6. A binary printed as bytes that does not fit fills lines of a fixed
//!    width, counted from after `<<` and reduced by the closers.
//!
//! Observed detail kept here: OTP checks fit from one column right of
//! where a term starts (a term of `line_length - column - 1` characters
//! already breaks).
//!
//! Nesting deeper than `MAX_PRETTY_DEPTH` is printed flat (as `~p` would
//! print it if it fitted) so printing never recurses without bound.

use super::view::View;
use super::{Atom, Term};
use crate::heap::Heap;
use std::fmt::Write;

/// How funs and pids print; the runtime installs its own once (the
/// defaults are `#Fun<act.INDEX.0>` and `<0.ID.0>`).
pub struct Namer {
    /// `#Fun<module.index.uniq>` for a fun-table index.
    pub fun: fn(index: u32) -> String,
    /// `<0.N.0>` for a pid's identity word.
    pub pid: fn(id: u64) -> String,
}

static NAMER: std::sync::OnceLock<Namer> = std::sync::OnceLock::new();

/// Installs how funs and pids print; the first call wins.
pub fn set_namer(namer: Namer) {
    let _ = NAMER.set(namer);
}

fn pid_name(id: u64) -> String {
    match NAMER.get() {
        Some(namer) => (namer.pid)(id),
        None => format!("<0.{id}.0>"),
    }
}

fn fun_name(index: u32) -> String {
    match NAMER.get() {
        Some(namer) => (namer.fun)(index),
        None => format!("#Fun<act.{index}.0>"),
    }
}

const MAX_PRETTY_DEPTH: usize = 1000;

// ---------------------------------------------------------------------
// Atoms, strings, numbers.

const RESERVED: &[&str] = &[
    "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
    "catch", "cond", "div", "end", "fun", "if", "let", "not", "of", "or", "orelse", "receive",
    "rem", "try", "when", "xor",
];

fn is_lower(c: char) -> bool {
    c.is_ascii_lowercase() || (('\u{df}'..='\u{ff}').contains(&c) && c != '\u{f7}')
}

fn is_name_char(c: char) -> bool {
    is_lower(c)
        || c.is_ascii_uppercase()
        || c.is_ascii_digit()
        || c == '_'
        || c == '@'
        || (('\u{c0}'..='\u{de}').contains(&c) && c != '\u{d7}')
}

/// Whether an atom prints without quotes.
pub fn atom_is_bare(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if is_lower(c) => chars.all(is_name_char) && !RESERVED.contains(&name),
        _ => false,
    }
}

/// An atom as `~w` writes it.
pub fn write_atom(out: &mut String, atom: Atom) {
    let name = atom.name();
    if atom_is_bare(name) {
        out.push_str(name);
    } else {
        write_atom_quoted(out, name);
    }
}

fn write_atom_quoted(out: &mut String, name: &str) {
    out.push('\'');
    for c in name.chars() {
        escape_char(out, c as u32, '\'');
    }
    out.push('\'');
}

/// The escape io_lib writes for a control character that has a name
/// (`\\n`, `\\t`, ... and DEL as `\\d`).
pub fn named_escape(c: u32) -> Option<&'static str> {
    Some(match c {
        0x0a => "\\n",
        0x0d => "\\r",
        0x09 => "\\t",
        0x0b => "\\v",
        0x08 => "\\b",
        0x0c => "\\f",
        0x1b => "\\e",
        0x7f => "\\d",
        _ => return None,
    })
}

/// One character inside quotes `quote` (`"` or `'`), escaped as
/// io_lib:write_string does.
fn escape_char(out: &mut String, c: u32, quote: char) {
    if let Some(escape) = named_escape(c) {
        out.push_str(escape);
        return;
    }
    match c {
        0x5c => out.push_str("\\\\"),
        _ if c == quote as u32 => {
            out.push('\\');
            out.push(quote);
        }
        // io_lib writes the other control characters as three octal
        // digits ('x\000y').
        0..=0x1f => {
            let _ = write!(out, "\\{c:03o}");
        }
        // Beyond latin1, as OTP writes them to a latin1 device.
        0x100.. => {
            let _ = write!(out, "\\x{{{c:X}}}");
        }
        _ => out.push(char::from_u32(c).unwrap_or('\u{fffd}')),
    }
}

/// A printable character in OTP's latin1 sense (the range `~p` uses).
pub fn is_printable_char(c: i64) -> bool {
    matches!(c, 32..=126 | 160..=255 | 8..=13 | 27)
}

/// `"..."` for a list of character codes.
pub fn write_string(out: &mut String, chars: impl IntoIterator<Item = u32>) {
    out.push('"');
    for c in chars {
        escape_char(out, c, '"');
    }
    out.push('"');
}

/// The characters of `list` if it is a non-empty proper list of printable
/// characters.
pub fn printable_list(heap: &Heap, list: Term) -> Option<Vec<u32>> {
    let mut chars = Vec::new();
    let mut t = list;
    while t.is_cons() {
        let (head, tail) = heap.cons_parts(t);
        match head.as_small() {
            Some(c) if is_printable_char(c) => chars.push(c as u32),
            _ => return None,
        }
        t = tail;
    }
    if t.is_nil() && !chars.is_empty() {
        Some(chars)
    } else {
        None
    }
}

fn printable_bytes(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| is_printable_char(b as i64))
}

/// Under a depth limit (`~P`), how many leading bytes of a binary print
/// as text, as io_lib_pretty decides: it looks at no more than four
/// characters per level of the depth `d1` left below the binary; all of
/// them printable gives the whole binary (it ends there) or that prefix
/// followed by `...`; a non-printable byte after at least `d1` printable
/// ones gives the prefix before it; anything else prints as bytes (`None`).
fn printable_prefix(bytes: &[u8], d1: i64) -> Option<usize> {
    let len = bytes.len().min(4 * d1.max(0) as usize);
    if len == 0 {
        return None;
    }
    let printable = bytes[..len]
        .iter()
        .take_while(|&&b| is_printable_char(b as i64))
        .count();
    if printable == len || (d1 > 0 && printable as i64 >= d1) {
        Some(printable)
    } else {
        None
    }
}

/// The characters of a binary that `~tp` shows as `<<"..."/utf8>>`: valid
/// UTF-8, not plain ASCII, every character printable (latin1 range).
fn printable_utf8(bytes: &[u8]) -> Option<Vec<u32>> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_ascii() {
        return None;
    }
    text.chars()
        .map(|c| is_printable_char(c as i64).then_some(c as u32))
        .collect()
}

/// Which terms `~p` shows as text: none (`~lp`), printable lists and
/// binaries (`~p`), and also binaries of UTF-8 text (`~tp`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Strings {
    Off,
    Latin1,
    Unicode,
}

/// A float in the shortest form that reads back, as OTP prints it: the
/// shorter of plain decimal and scientific notation (decimal on a tie),
/// but scientific from 2^53 up, where the digits would suggest a
/// precision the float does not have.
pub fn format_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde-x".
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits = break_tie_to_even(f.abs(), mantissa.chars().filter(|c| *c != '.').collect());
    let sign = if f < 0.0 { "-" } else { "" };
    let scientific = {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}e{exp}")
    };
    if f.abs() >= 9007199254740992.0 {
        return scientific;
    }
    let n = digits.len() as i32;
    let decimal = if exp >= n - 1 {
        format!("{sign}{digits}{}.0", "0".repeat((exp - n + 1) as usize))
    } else if exp >= 0 {
        let (int, frac) = digits.split_at(exp as usize + 1);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    };
    if decimal.len() <= scientific.len() {
        decimal
    } else {
        scientific
    }
}

/// When the exact value of `f` lies exactly halfway between two shortest
/// candidates, OTP takes the one with an even last digit; Rust's
/// formatter may take the other. `digits` are Rust's shortest digits.
fn break_tie_to_even(f: f64, digits: String) -> String {
    let exact = format!("{f:.80e}");
    let exact: String = exact
        .split('e')
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| *c != '.')
        .collect();
    let n = digits.len();
    if exact.len() <= n || !exact[n..].starts_with('5') || !exact[n + 1..].chars().all(|c| c == '0')
    {
        return digits;
    }
    let low = &exact[..n];
    let low_even = low
        .bytes()
        .last()
        .is_some_and(|d| (d - b'0').is_multiple_of(2));
    if low_even && low != digits {
        let exponent = format!("{f:e}")
            .split_once('e')
            .map_or(0, |(_, e)| e.parse::<i32>().unwrap_or(0));
        let candidate = format!("{}.{}e{exponent}", &low[..1], &low[1..]);
        if candidate.parse::<f64>().ok() == Some(f) {
            return low.to_string();
        }
    }
    digits
}

fn write_leaf(out: &mut String, view: &View) {
    match view {
        View::Small(i) => {
            let _ = write!(out, "{i}");
        }
        View::Big(b) => {
            let _ = write!(out, "{}", b.to_bigint());
        }
        View::Float(f) => out.push_str(&format_float(*f)),
        View::Atom(a) => write_atom(out, *a),
        View::Nil => out.push_str("[]"),
        View::Pid(p) => out.push_str(&pid_name(*p)),
        View::ExtPid { node, id } => {
            let _ = write!(out, "<{node}.{}.{}>", *id as u32, id >> 32);
        }
        View::Ref(r) if *r >= crate::bif::port::PORT_BASE => {
            let _ = write!(out, "#Port<0.{}>", r - crate::bif::port::PORT_BASE);
        }
        View::Ref(r) => {
            let _ = write!(out, "#Ref<0.0.0.{r}>");
        }
        View::ExtRef { node, len, words } => {
            let _ = write!(out, "#Ref<{node}");
            for w in words[..*len as usize].iter().rev() {
                let _ = write!(out, ".{w}");
            }
            out.push('>');
        }
        View::Fun { index, .. } => out.push_str(&fun_name(*index)),
        View::ExternalFun {
            module,
            function,
            arity,
        } => {
            out.push_str("fun ");
            write_atom(out, *module);
            out.push(':');
            write_atom(out, *function);
            let _ = write!(out, "/{arity}");
        }
        View::Binary(bytes) => {
            out.push_str("<<");
            for (i, b) in bytes.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{b}");
            }
            out.push_str(">>");
        }
        View::Bitstring(bits) => {
            out.push_str("<<");
            out.push_str(&bitstring_elements(bits, usize::MAX).join(","));
            out.push_str(">>");
        }
        View::NotAValue => out.push_str("<none>"),
        // Structures are written by the callers' walks.
        View::Cons(..) | View::Tuple(_) | View::Map { .. } => {}
    }
}

/// The elements `~w` and `~p` print for a bitstring that is not whole
/// bytes: its bytes, then `Value:Bits`; with a depth limit `d`, as
/// io_lib does, `...` in place of the element at position `d`.
fn bitstring_elements(bits: &crate::term::bits::Bits, d: usize) -> Vec<String> {
    let (whole, tail, tail_bits) = bits.split_tail();
    let mut out = Vec::new();
    for (i, b) in whole.iter().enumerate() {
        if i + 1 >= d {
            out.push("...".to_string());
            return out;
        }
        out.push(b.to_string());
    }
    if whole.len() + 1 >= d {
        out.push("...".to_string());
    } else {
        out.push(format!("{tail}:{tail_bits}"));
    }
    out
}

// ---------------------------------------------------------------------
// ~w

/// `~w` of `t`.
pub fn write(heap: &Heap, t: Term) -> String {
    let mut out = String::new();
    write_into(&mut out, heap, t);
    out
}

/// `~W`: `~w` with a depth limit (negative: none), as io_lib:write cuts
/// terms: `[1,2|...]`, `{a,...}`, `<<1,2,...>>`.
pub fn write_depth(heap: &Heap, t: Term, depth: i64) -> String {
    // Deep limits cannot cut anything a Rust-stack walk could reach.
    if !(0..=MAX_PRETTY_DEPTH as i64).contains(&depth) {
        return write(heap, t);
    }
    let mut out = String::new();
    write_limited(&mut out, heap, t, depth);
    out
}

/// Recursion is bounded by `d` (at most `MAX_PRETTY_DEPTH`).
fn write_limited(out: &mut String, heap: &Heap, t: Term, d: i64) {
    if d == 0 {
        out.push_str("...");
        return;
    }
    let view = heap.view(t);
    match view {
        View::Cons(..) if d == 1 => out.push_str("[...]"),
        View::Cons(head, mut rest) => {
            out.push('[');
            write_limited(out, heap, head, d - 1);
            let mut d = d - 1;
            loop {
                match heap.view(rest) {
                    View::Nil => break,
                    _ if d == 1 => {
                        out.push_str("|...");
                        break;
                    }
                    View::Cons(head, next) => {
                        out.push(',');
                        write_limited(out, heap, head, d - 1);
                        d -= 1;
                        rest = next;
                    }
                    _ => {
                        out.push('|');
                        write_limited(out, heap, rest, d - 1);
                        break;
                    }
                }
            }
            out.push(']');
        }
        View::Tuple(items) if !items.is_empty() && d == 1 => out.push_str("{...}"),
        View::Tuple(items) => {
            out.push('{');
            let mut d = d;
            for (i, &e) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                    if d == 1 {
                        out.push_str("...");
                        break;
                    }
                }
                write_limited(out, heap, e, d - 1);
                d -= 1;
            }
            out.push('}');
        }
        // io_lib:write's maps: `#{}` at depth 1 whatever the map holds;
        // every key and value one level below the map; the pairs after
        // the first count down from that level too, and reaching 1 writes
        // `,...` even when no pair is left (`#{a => 1,...}` for a map of
        // one pair at depth 2), as OTP 25 does.
        View::Map { .. } if d == 1 => out.push_str("#{}"),
        View::Map { keys, values } => {
            out.push_str("#{");
            let d0 = d - 1;
            let (keys, values) = super::hamt::walk(heap, &keys, &values);
            let mut pairs = keys.iter().zip(&values);
            if let Some((&k, &v)) = pairs.next() {
                write_limited(out, heap, k, d0);
                out.push_str(" => ");
                write_limited(out, heap, v, d0);
                let mut left = d0;
                loop {
                    if left == 1 {
                        out.push_str(",...");
                        break;
                    }
                    let Some((&k, &v)) = pairs.next() else { break };
                    out.push(',');
                    write_limited(out, heap, k, d0);
                    out.push_str(" => ");
                    write_limited(out, heap, v, d0);
                    left -= 1;
                }
            }
            out.push('}');
        }
        View::Binary(bytes) if !bytes.is_empty() && d == 1 => out.push_str("<<...>>"),
        View::Binary(bytes) if bytes.len() >= d as usize => {
            out.push_str("<<");
            for b in &bytes[..d as usize - 1] {
                let _ = write!(out, "{b},");
            }
            out.push_str("...>>");
        }
        View::Bitstring(bits) => {
            out.push_str("<<");
            out.push_str(&bitstring_elements(&bits, d as usize).join(","));
            out.push_str(">>");
        }
        _ => write_into(out, heap, t),
    }
}

enum Task {
    Term(Term),
    Tail(Term),
    Text(&'static str),
}

/// `~w` of `t`, appended to `out`.
pub fn write_into(out: &mut String, heap: &Heap, t: Term) {
    walk(out, heap, t, " => ", |_, _, _, _| false);
}

/// The layout `~w` and erlang:display share: lists, tuples and maps,
/// walked with an explicit stack (no recursion on deep terms). `special`
/// prints a term its own way when it returns true; `arrow` separates a
/// map's keys from its values; everything else is `write_leaf`.
fn walk(
    out: &mut String,
    heap: &Heap,
    t: Term,
    arrow: &'static str,
    special: fn(&mut String, &Heap, Term, &View) -> bool,
) {
    let mut stack: Vec<Task> = vec![Task::Term(t)];
    while let Some(task) = stack.pop() {
        match task {
            Task::Text(s) => out.push_str(s),
            Task::Tail(t) => match heap.view(t) {
                View::Nil => {}
                View::Cons(head, tail) => {
                    out.push(',');
                    stack.push(Task::Tail(tail));
                    stack.push(Task::Term(head));
                }
                _ => {
                    out.push('|');
                    stack.push(Task::Term(t));
                }
            },
            Task::Term(t) => {
                let view = heap.view(t);
                if special(out, heap, t, &view) {
                    continue;
                }
                match view {
                    View::Cons(head, tail) => {
                        out.push('[');
                        stack.push(Task::Text("]"));
                        stack.push(Task::Tail(tail));
                        stack.push(Task::Term(head));
                    }
                    View::Tuple(elements) => {
                        out.push('{');
                        stack.push(Task::Text("}"));
                        for (i, &e) in elements.iter().enumerate().rev() {
                            stack.push(Task::Term(e));
                            if i > 0 {
                                stack.push(Task::Text(","));
                            }
                        }
                    }
                    View::Map { keys, values } => {
                        out.push_str("#{");
                        stack.push(Task::Text("}"));
                        let (keys, values) = super::hamt::walk(heap, &keys, &values);
                        for i in (0..keys.len()).rev() {
                            stack.push(Task::Term(values[i]));
                            stack.push(Task::Text(arrow));
                            stack.push(Task::Term(keys[i]));
                            if i > 0 {
                                stack.push(Task::Text(","));
                            }
                        }
                    }
                    _ => write_leaf(out, &view),
                }
            }
        }
    }
}

// ---------------------------------------------------------------------
// erlang:display

/// `erlang:display/1` of `t`: the runtime system's own printer, not
/// io_lib's. It never wraps, writes floats as C's `%e` (`1.500000e+00`),
/// maps as `#{k=>v}`, binaries of ASCII text as `<<"text">>` and others
/// as bytes, and lists of latin1 text as strings where only `\n` and `"`
/// are escaped.
pub fn display(heap: &Heap, t: Term) -> String {
    let mut out = String::new();
    walk(&mut out, heap, t, "=>", display_special);
    out.chars()
        .map(|c| latin1_byte(c).map_or(c, char::from))
        .collect()
}

/// What erlang:display writes: like `display`, but the latin1 characters
/// of a string go out as single bytes, as BEAM's terminal driver writes
/// them (atoms and everything else stay UTF-8).
pub fn display_bytes(heap: &Heap, t: Term) -> Vec<u8> {
    let mut out = String::new();
    walk(&mut out, heap, t, "=>", display_special);
    let mut bytes = Vec::with_capacity(out.len());
    for c in out.chars() {
        match latin1_byte(c) {
            Some(b) => bytes.push(b),
            None => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    bytes
}

/// A string's character 128..=255 as `display_special` marks it: moved to
/// the top of plane 16, where no latin1 string character can be.
const LATIN1_MARK: u32 = 0x10_FF00;

fn latin1_byte(c: char) -> Option<u8> {
    let c = c as u32;
    (LATIN1_MARK + 0x80..=LATIN1_MARK + 0xFF)
        .contains(&c)
        .then(|| (c - LATIN1_MARK) as u8)
}

/// The terms erlang:display prints unlike `~w` (see `display`).
fn display_special(out: &mut String, heap: &Heap, t: Term, view: &View) -> bool {
    match view {
        View::Cons(..) => {
            let Some(chars) = display_string(heap, t) else {
                return false;
            };
            out.push('"');
            for c in chars {
                match c {
                    '\n' => out.push_str("\\n"),
                    '"' => out.push_str("\\\""),
                    c if (c as u32) >= 0x80 => {
                        out.push(char::from_u32(LATIN1_MARK + c as u32).unwrap_or(c));
                    }
                    c => out.push(c),
                }
            }
            out.push('"');
        }
        View::Float(f) => {
            // `{:.6e}` rounds like C's printf; C writes the
            // exponent signed, with at least two digits.
            let sci = format!("{f:.6e}");
            let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let sign = if exp < 0 { '-' } else { '+' };
            let _ = write!(out, "{mantissa}e{sign}{:02}", exp.abs());
        }
        View::Atom(a) => {
            let name = a.name();
            let mut chars = name.chars();
            let bare =
                chars.next().is_some_and(is_lower) && chars.all(|c| c != '@' && is_name_char(c));
            if bare {
                out.push_str(name);
            } else {
                write_atom_quoted(out, name);
            }
        }
        View::Binary(bytes) if !bytes.is_empty() && bytes.iter().all(|b| (32..127).contains(b)) => {
            out.push_str("<<\"");
            for &b in bytes.iter() {
                if b == b'"' {
                    out.push('\\');
                }
                out.push(b as char);
            }
            out.push_str("\">>");
        }
        _ => return false,
    }
    true
}

/// The characters of `list` if the runtime system's printer shows it as a
/// string: a non-empty proper list of latin1 characters that are not
/// control characters (tab, newline and carriage return are allowed).
fn display_string(heap: &Heap, list: Term) -> Option<Vec<char>> {
    let mut chars = Vec::new();
    let mut t = list;
    while t.is_cons() {
        let (head, tail) = heap.cons_parts(t);
        match head.as_small() {
            Some(c @ (9 | 10 | 13 | 32..=126 | 160..=255)) => {
                chars.push(char::from_u32(c as u32)?);
            }
            _ => return None,
        }
        t = tail;
    }
    (t.is_nil() && !chars.is_empty()).then_some(chars)
}

// ---------------------------------------------------------------------
// ~p

/// A term measured for `~p`: its node and the length of its flat text.
struct Doc {
    node: Node,
    len: i64,
}

enum Node {
    /// Flat text that is never broken: numbers, atoms, strings, ...
    Leaf(String),
    /// The `...` where a depth limit cuts a list, tuple or map short: it
    /// always stays on the line of the element before it (`,...` `|...`).
    Dots,
    List {
        elements: Vec<Doc>,
        tail: Option<Box<Doc>>,
    },
    Tuple {
        tagged: bool,
        elements: Vec<Doc>,
    },
    Map(Vec<Pair>),
    /// A binary that is not printable: its bytes, filled like a list.
    Bytes(Vec<Doc>),
}

struct Pair {
    key: Doc,
    /// `None` for the `...` that ends a depth-limited map.
    value: Option<Doc>,
    len: i64,
}

impl Doc {
    fn leaf(text: String) -> Doc {
        let len = text.chars().count() as i64;
        Doc {
            node: Node::Leaf(text),
            len,
        }
    }
    fn is_atomic(&self) -> bool {
        matches!(self.node, Node::Leaf(_) | Node::Dots)
    }
    fn dots() -> Doc {
        Doc {
            node: Node::Dots,
            len: 3,
        }
    }
    fn is_dots(&self) -> bool {
        matches!(self.node, Node::Dots)
    }
}

impl Pair {
    fn is_atomic(&self) -> bool {
        self.key.is_atomic() && self.value.as_ref().is_none_or(Doc::is_atomic)
    }
}

/// Length of a bracketed sequence: `brackets` plus the elements and the
/// separators between them (and `|tail`).
fn sequence_len(brackets: i64, elements: &[Doc], tail: Option<&Doc>) -> i64 {
    let mut len = brackets + elements.iter().map(|e| e.len).sum::<i64>();
    len += (elements.len() as i64 - 1).max(0);
    if let Some(t) = tail {
        len += 1 + t.len;
    }
    len
}

/// One level deeper under a depth limit (negative: no limit).
fn deeper(d: i64) -> i64 {
    if d < 0 { d } else { d - 1 }
}

/// `<<"..."/utf8>>`, out of line (see `measure_map`).
#[inline(never)]
fn utf8_leaf(chars: Vec<u32>) -> Doc {
    let mut s = String::from("<<");
    write_string(&mut s, chars);
    s.push_str("/utf8>>");
    Doc::leaf(s)
}

/// `measure` of a non-empty map, out of line: it keeps `measure`'s own
/// stack frame small, which bounds how deep `MAX_PRETTY_DEPTH` may go on
/// a small stack.
#[inline(never)]
fn measure_map(
    heap: &Heap,
    keys: &[Term],
    values: &[Term],
    nest: usize,
    d: i64,
    strings: Strings,
) -> Doc {
    let mut pairs = Vec::with_capacity(keys.len());
    // As io_lib_pretty: every key and value one level below the map,
    // while the depth that cuts the pairs off with `...` runs down by
    // one per pair.
    let inner = deeper(d);
    let mut d = d;
    let (keys, values) = super::hamt::walk(heap, keys, values);
    for (i, (&k, &v)) in keys.iter().zip(&values).enumerate() {
        if i > 0 && d == 1 {
            pairs.push(Pair {
                key: Doc::leaf("...".into()),
                value: None,
                len: 3,
            });
            break;
        }
        let key = measure(heap, k, nest + 1, inner, strings);
        let value = measure(heap, v, nest + 1, inner, strings);
        let len = key.len + 4 + value.len;
        pairs.push(Pair {
            key,
            value: Some(value),
            len,
        });
        d = deeper(d);
    }
    let len = 3 + pairs.iter().map(|p| p.len).sum::<i64>() + pairs.len() as i64 - 1;
    Doc {
        node: Node::Map(pairs),
        len,
    }
}

/// Measures `t` for `~p`: `nest` counts the nesting (to bound recursion),
/// `d` is the depth limit of `~P` (negative: none), `strings` which
/// lists and binaries print as text (none with the `l` modifier).
fn measure(heap: &Heap, t: Term, nest: usize, d: i64, strings: Strings) -> Doc {
    if d == 0 {
        return Doc::leaf("...".into());
    }
    if nest > MAX_PRETTY_DEPTH {
        return Doc::leaf(write(heap, t));
    }
    let view = heap.view(t);
    match view {
        // A list cut off at once is still a list for the layout (io_lib_pretty
        // gives it no elements and a `...` tail), so never atomic.
        View::Cons(..) if d == 1 => Doc {
            node: Node::List {
                elements: Vec::new(),
                tail: Some(Box::new(Doc::dots())),
            },
            len: 5,
        },
        View::Cons(..) => {
            if strings != Strings::Off
                && let Some(chars) = printable_list(heap, t)
            {
                let mut s = String::new();
                write_string(&mut s, chars);
                return Doc::leaf(s);
            }
            // As io_lib:write: each further element one level deeper,
            // and `|...` once the depth runs out.
            let (head, mut rest) = heap.cons_parts(t);
            let mut elements = vec![measure(heap, head, nest + 1, deeper(d), strings)];
            let mut tail = None;
            let mut d = deeper(d);
            loop {
                match heap.view(rest) {
                    View::Nil => break,
                    _ if d == 1 => {
                        tail = Some(Box::new(Doc::dots()));
                        break;
                    }
                    View::Cons(head, next) => {
                        elements.push(measure(heap, head, nest + 1, deeper(d), strings));
                        d = deeper(d);
                        rest = next;
                    }
                    _ => {
                        tail = Some(Box::new(measure(heap, rest, nest + 1, deeper(d), strings)));
                        break;
                    }
                }
            }
            let len = sequence_len(2, &elements, tail.as_deref());
            Doc {
                node: Node::List { elements, tail },
                len,
            }
        }
        View::Tuple(items) if !items.is_empty() && d == 1 => Doc::leaf("{...}".into()),
        View::Tuple(items) if !items.is_empty() => {
            let tagged = items.len() > 1 && items[0].is_atom();
            let mut elements = Vec::with_capacity(items.len());
            let mut d = d;
            for (i, &e) in items.iter().enumerate() {
                if i > 0 && d == 1 {
                    elements.push(Doc::dots());
                    break;
                }
                elements.push(measure(heap, e, nest + 1, deeper(d), strings));
                d = deeper(d);
            }
            let len = sequence_len(2, &elements, None);
            Doc {
                node: Node::Tuple { tagged, elements },
                len,
            }
        }
        View::Tuple(_) => Doc::leaf("{}".into()),
        View::Map { keys, .. } if !keys.is_empty() && d == 1 => Doc::leaf("#{...}".into()),
        View::Map { keys, values } if !keys.is_empty() => {
            measure_map(heap, &keys, &values, nest, d, strings)
        }
        View::Map { .. } => Doc::leaf("#{}".into()),
        View::Binary(bytes) if !bytes.is_empty() && d == 1 => Doc::leaf("<<...>>".into()),
        View::Binary(bytes)
            if strings == Strings::Unicode
                && let Some(chars) = printable_utf8(bytes) =>
        {
            utf8_leaf(chars)
        }
        View::Binary(bytes)
            if strings != Strings::Off
                && d > 0
                && let Some(shown) = printable_prefix(bytes, d - 1) =>
        {
            let mut s = String::from("<<");
            write_string(&mut s, bytes[..shown].iter().map(|&b| b as u32));
            s.push_str(if shown < bytes.len() { "...>>" } else { ">>" });
            Doc::leaf(s)
        }
        View::Binary(bytes)
            if strings != Strings::Off && d < 0 && !bytes.is_empty() && printable_bytes(bytes) =>
        {
            let mut s = String::from("<<");
            write_string(&mut s, bytes.iter().map(|&b| b as u32));
            s.push_str(">>");
            Doc::leaf(s)
        }
        View::Bitstring(bits) => {
            let limit = if d > 0 { d as usize } else { usize::MAX };
            let elements: Vec<Doc> = bitstring_elements(&bits, limit)
                .into_iter()
                .map(Doc::leaf)
                .collect();
            let len = sequence_len(4, &elements, None);
            Doc {
                node: Node::Bytes(elements),
                len,
            }
        }
        View::Binary(bytes) if !bytes.is_empty() => {
            let shown = if d > 0 {
                bytes.len().min(d as usize - 1)
            } else {
                bytes.len()
            };
            let mut elements: Vec<Doc> = bytes[..shown]
                .iter()
                .map(|b| Doc::leaf(b.to_string()))
                .collect();
            if shown < bytes.len() {
                elements.push(Doc::leaf("...".into()));
            }
            let len = sequence_len(4, &elements, None);
            Doc {
                node: Node::Bytes(elements),
                len,
            }
        }
        _ => {
            let mut s = String::new();
            write_leaf(&mut s, &view);
            Doc::leaf(s)
        }
    }
}

/// The flat text of a doc.
fn flat(out: &mut String, doc: &Doc) {
    match &doc.node {
        Node::Leaf(s) => out.push_str(s),
        Node::Dots => out.push_str("..."),
        Node::List { elements, tail } => {
            out.push('[');
            flat_sequence(out, elements);
            if let Some(t) = tail {
                if !elements.is_empty() {
                    out.push('|');
                }
                flat(out, t);
            }
            out.push(']');
        }
        Node::Tuple { elements, .. } => {
            out.push('{');
            flat_sequence(out, elements);
            out.push('}');
        }
        Node::Map(pairs) => {
            out.push_str("#{");
            for (i, p) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                flat_pair(out, p);
            }
            out.push('}');
        }
        Node::Bytes(elements) => {
            out.push_str("<<");
            flat_sequence(out, elements);
            out.push_str(">>");
        }
    }
}

fn flat_sequence(out: &mut String, elements: &[Doc]) {
    for (i, e) in elements.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        flat(out, e);
    }
}

fn flat_pair(out: &mut String, p: &Pair) {
    flat(out, &p.key);
    if let Some(value) = &p.value {
        out.push_str(" => ");
        flat(out, value);
    }
}

/// `~p` of `t` whose first character goes at `column` (0-based: 0 at the
/// start of a line), breaking lines of `line_length` (80 for `~p`).
/// Like io_lib, this works in characters: a binary's bytes are latin1
/// characters; how characters become output bytes is the writer's choice.
pub fn print(heap: &Heap, t: Term, column: usize, line_length: usize) -> String {
    print_with(heap, t, column, line_length, -1, Strings::Latin1)
}

/// `~P` (with `depth`; negative for none) and `~lp` (`strings` false).
pub fn print_with(
    heap: &Heap,
    t: Term,
    column: usize,
    line_length: usize,
    depth: i64,
    strings: Strings,
) -> String {
    print_limited(heap, t, column, line_length, depth, None, strings)
}

/// `print_with` with io_lib_pretty's `line_max_chars`: at most
/// `max_chars` characters of the term on a line (not counting the
/// indentation); erl's shell prints results with 60.
pub fn print_limited(
    heap: &Heap,
    t: Term,
    column: usize,
    line_length: usize,
    depth: i64,
    max_chars: Option<usize>,
    strings: Strings,
) -> String {
    let doc = measure(heap, t, 0, depth, strings);
    let mut out = String::new();
    // OTP measures fit from one column further right than the term
    // starts (observed: a term of length `ll - col - 1` already breaks);
    // indentation uses the real column.
    let (ind, ll) = (column as i64, line_length as i64);
    let col = ind + 1;
    let m = max_chars.map_or(doc.len, |m| m as i64);
    let p = Pretty { ll, m };
    // A line length of 0 (`~0p`) writes the term on one line, as OTP.
    if ll == 0 || (doc.len < ll - col && doc.len <= p.m) {
        flat(&mut out, &doc);
        return out;
    }
    let tind = [-1, 4]
        .into_iter()
        .find(|&i| p.cind(&doc, col, i, 0, 0).is_ok())
        .unwrap_or(1);
    p.pp(&mut out, &doc, col, tind, ind, 0, 0);
    out
}

/// io_lib_pretty's `last_depth`: the closers `ld` count for the element
/// before `elements[next]` when nothing but the `...` of a depth limit
/// follows it (that `...` is written after it on its line uncounted, as
/// OTP does); an element with more after it counts none.
fn last_depth(elements: &[Doc], next: usize, ld: i64) -> i64 {
    match elements.get(next) {
        None => ld,
        Some(e) if e.is_dots() => ld,
        Some(_) => 0,
    }
}

/// `last_depth` for the pairs of a map.
fn last_pair_depth(pairs: &[Pair], next: usize, ld: i64) -> i64 {
    match pairs.get(next) {
        None => ld,
        Some(p) if p.value.is_none() => ld,
        Some(_) => 0,
    }
}

/// The fixed parameters of one `~p`: the line length and the most
/// characters a line may hold (the term's whole length: no limit).
struct Pretty {
    ll: i64,
    m: i64,
}

/// The trial layout found a tag column too far right.
struct NoGood;

fn newline(out: &mut String, indent: i64) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', indent.max(0) as usize));
}

impl Pretty {
    fn fits(&self, len: i64, col: i64, ld: i64, w: i64) -> bool {
        len < self.ll - col - ld && len + w + ld <= self.m
    }

    /// Whether an atomic element (with its comma) joins the current line.
    fn joins(&self, elen: i64, col: i64, ld1: i64, w: i64) -> bool {
        if ld1 == 0 {
            elen + 1 < self.ll - col && w + elen < self.m
        } else {
            elen < self.ll - col - ld1 && w + elen + ld1 <= self.m
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pp(&self, out: &mut String, doc: &Doc, col: i64, tind: i64, ind: i64, ld: i64, w: i64) {
        if self.fits(doc.len, col, ld, w) {
            flat(out, doc);
            return;
        }
        match &doc.node {
            Node::Leaf(s) => out.push_str(s),
            Node::Dots => out.push_str("..."),
            Node::List { elements, tail } => {
                out.push('[');
                self.pp_list(
                    out,
                    elements,
                    tail.as_deref(),
                    col + 1,
                    tind,
                    ind + 1,
                    ld + 1,
                    '|',
                    w + 1,
                );
                out.push(']');
            }
            Node::Tuple {
                tagged: true,
                elements,
            } => {
                out.push('{');
                self.pp_tag_tuple(out, elements, col, tind, ind, ld + 1, w + 1);
                out.push('}');
            }
            Node::Tuple {
                tagged: false,
                elements,
            } => {
                out.push('{');
                self.pp_list(
                    out,
                    elements,
                    None,
                    col + 1,
                    tind,
                    ind + 1,
                    ld + 1,
                    ',',
                    w + 1,
                );
                out.push('}');
            }
            Node::Map(pairs) => {
                out.push_str("#{");
                self.pp_map(out, pairs, col + 2, tind, ind + 2, ld + 1, w + 2);
                out.push('}');
            }
            Node::Bytes(elements) => self.pp_bytes(out, elements, col + 2, ind + 2, ld, w),
        }
    }

    /// A binary printed as bytes fills lines of a fixed width `n0` (at
    /// least 8), measured from after `<<`; the last byte must fit too.
    fn pp_bytes(&self, out: &mut String, elements: &[Doc], col: i64, ind: i64, ld: i64, w: i64) {
        out.push_str("<<");
        let n0 = ((self.ll - col).min(self.m - 4 - w) - ld).max(8);
        let mut n = n0;
        for (i, e) in elements.iter().enumerate() {
            if i + 1 < elements.len() {
                let len = e.len + 1;
                if n - len < 0 {
                    newline(out, ind);
                    n = n0 - len;
                } else {
                    n -= len;
                }
                flat(out, e);
                out.push(',');
            } else {
                if e.len > n {
                    newline(out, ind);
                }
                flat(out, e);
            }
        }
        out.push_str(">>");
    }

    #[allow(clippy::too_many_arguments)]
    fn pp_list(
        &self,
        out: &mut String,
        elements: &[Doc],
        tail: Option<&Doc>,
        col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        sep: char,
        w: i64,
    ) {
        let Some((first, rest)) = elements.split_first() else {
            if let Some(t) = tail {
                flat(out, t);
            }
            return;
        };
        let ld_first = last_depth(rest, 0, ld);
        let w1 = self.pp_element(out, first, col, tind, ind, ld_first, w);
        // The line already holds `w` characters before the first element.
        self.pp_tail(out, rest, tail, col, col + w1, tind, ind, ld, sep, w + w1);
    }

    /// Writes one element, returning its width, or the line length when
    /// the next element must start a new line.
    #[allow(clippy::too_many_arguments)]
    fn pp_element(
        &self,
        out: &mut String,
        e: &Doc,
        col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> i64 {
        if e.is_atomic() && self.fits(e.len, col, ld, w) {
            flat(out, e);
            e.len
        } else {
            self.pp(out, e, col, tind, ind, ld, w);
            self.ll
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pp_tail(
        &self,
        out: &mut String,
        rest: &[Doc],
        tail: Option<&Doc>,
        col0: i64,
        mut col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        sep: char,
        mut w: i64,
    ) {
        for (i, e) in rest.iter().enumerate() {
            let ld1 = last_depth(rest, i + 1, ld);
            let elen = 1 + e.len;
            if e.is_dots() || e.is_atomic() && self.joins(elen, col, ld1, w) {
                out.push(',');
                flat(out, e);
                col += elen;
                w += elen;
            } else {
                out.push(',');
                newline(out, ind);
                let w1 = self.pp_element(out, e, col0, tind, ind, ld1, 0);
                col = col0 + w1;
                w = w1;
            }
        }
        if let Some(t) = tail {
            out.push(sep);
            if t.is_dots()
                || t.is_atomic() && t.len + 1 < self.ll - col - ld && t.len + 1 + w + ld <= self.m
            {
                flat(out, t);
            } else {
                newline(out, ind);
                self.pp(out, t, col0, tind, ind, ld, 0);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pp_tag_tuple(
        &self,
        out: &mut String,
        elements: &[Doc],
        col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) {
        // A tagged tuple has at least two elements (see `measure`).
        let Some((tag, rest)) = elements.split_first() else {
            return;
        };
        let tag_ind = tag.len + 2;
        let tcol = col + tag_ind;
        flat(out, tag);
        if tind > 0 && tag_ind > tind {
            self.pp_tail(
                out,
                rest,
                None,
                col + tind,
                tcol,
                tind,
                ind + tind,
                ld,
                ',',
                w + tag.len,
            );
        } else {
            out.push(',');
            self.pp_list(
                out,
                rest,
                None,
                tcol,
                tind,
                ind + tag_ind,
                ld,
                ',',
                w + tag.len + 1,
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pp_map(
        &self,
        out: &mut String,
        pairs: &[Pair],
        col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) {
        let Some((first, rest)) = pairs.split_first() else {
            return;
        };
        let ld_first = last_pair_depth(rest, 0, ld);
        let pw = self.pp_pair(out, first, col, tind, ind, ld_first, w);
        let (mut c, mut w) = (col + pw, pw);
        for (i, p) in rest.iter().enumerate() {
            let ld1 = last_pair_depth(rest, i + 1, ld);
            let elen = 1 + p.len;
            out.push(',');
            if p.value.is_none() || p.is_atomic() && self.joins(elen, c, ld1, w) {
                flat_pair(out, p);
                c += elen;
                w += elen;
            } else {
                newline(out, ind);
                let pw = self.pp_pair(out, p, col, tind, ind, ld1, 0);
                c = col + pw;
                w = pw;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn pp_pair(
        &self,
        out: &mut String,
        p: &Pair,
        col: i64,
        tind: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> i64 {
        if self.fits(p.len, col, ld, w) {
            flat_pair(out, p);
            return if p.is_atomic() { p.len } else { self.ll };
        }
        let i = if tind > 0 { tind } else { 4 };
        self.pp(out, &p.key, col, tind, ind, ld, w);
        if let Some(value) = &p.value {
            out.push_str(" =>");
            newline(out, ind + i);
            self.pp(out, value, col + i, tind, ind + i, ld, 0);
        }
        self.ll
    }

    // The trial layout: the same walk as `pp`, writing nothing, failing
    // where a tagged tuple's alignment would not fit.

    fn cind(&self, doc: &Doc, col: i64, ind: i64, ld: i64, w: i64) -> Result<(), NoGood> {
        if self.fits(doc.len, col, ld, w) {
            return Ok(());
        }
        match &doc.node {
            Node::Leaf(_) | Node::Dots => Ok(()),
            Node::List { elements, tail } => {
                self.cind_list(elements, tail.as_deref(), col + 1, ind, ld + 1, w + 1)
            }
            Node::Tuple {
                tagged: true,
                elements,
            } => {
                let Some((tag, rest)) = elements.split_first() else {
                    return Ok(());
                };
                let tag_ind = tag.len + 2;
                let tcol = col + tag_ind;
                let (ld, w) = (ld + 1, w + 1);
                if ind > 0 && tag_ind > ind {
                    let col1 = col + ind;
                    if self.m + col1 <= self.ll || col1 <= self.ll / 2 {
                        self.cind_tail(rest, None, col1, tcol, ind, ld, w + tag.len)
                    } else {
                        Err(NoGood)
                    }
                } else if self.m + tcol < self.ll || tcol < self.ll / 2 {
                    self.cind_list(rest, None, tcol, ind, ld, w + tag.len + 1)
                } else {
                    Err(NoGood)
                }
            }
            Node::Tuple {
                tagged: false,
                elements,
            } => self.cind_list(elements, None, col + 1, ind, ld + 1, w + 1),
            Node::Map(pairs) => {
                let (col, ld, w) = (col + 2, ld + 1, w + 2);
                let Some((first, rest)) = pairs.split_first() else {
                    return Ok(());
                };
                let pw = self.cind_pair(first, col, ind, last_pair_depth(rest, 0, ld), w)?;
                let (mut c, mut w) = (col + pw, w + pw);
                for (i, p) in rest.iter().enumerate() {
                    let ld1 = last_pair_depth(rest, i + 1, ld);
                    let elen = 1 + p.len;
                    if p.value.is_none() || p.is_atomic() && self.joins(elen, c, ld1, w) {
                        c += elen;
                        w += elen;
                    } else {
                        let pw = self.cind_pair(p, col, ind, ld1, 0)?;
                        c = col + pw;
                        w = pw;
                    }
                }
                Ok(())
            }
            Node::Bytes(_) => Ok(()),
        }
    }

    fn cind_pair(&self, p: &Pair, col: i64, ind: i64, ld: i64, w: i64) -> Result<i64, NoGood> {
        if self.fits(p.len, col, ld, w) {
            return Ok(if p.is_atomic() { p.len } else { self.ll });
        }
        self.cind(&p.key, col, ind, ld, w)?;
        let i = if ind > 0 { ind } else { 4 };
        if let Some(value) = &p.value {
            self.cind(value, col + i, ind, ld, 0)?;
        }
        Ok(self.ll)
    }

    fn cind_list(
        &self,
        elements: &[Doc],
        tail: Option<&Doc>,
        col: i64,
        ind: i64,
        ld: i64,
        w: i64,
    ) -> Result<(), NoGood> {
        let Some((first, rest)) = elements.split_first() else {
            return Ok(());
        };
        let ld_first = last_depth(rest, 0, ld);
        let we = self.cind_element(first, col, ind, ld_first, w)?;
        self.cind_tail(rest, tail, col, col + we, ind, ld, w + we)
    }

    fn cind_element(&self, e: &Doc, col: i64, ind: i64, ld: i64, w: i64) -> Result<i64, NoGood> {
        if e.is_atomic() && self.fits(e.len, col, ld, w) {
            return Ok(e.len);
        }
        self.cind(e, col, ind, ld, w)?;
        Ok(self.ll)
    }

    #[allow(clippy::too_many_arguments)]
    fn cind_tail(
        &self,
        rest: &[Doc],
        tail: Option<&Doc>,
        col0: i64,
        mut col: i64,
        ind: i64,
        ld: i64,
        mut w: i64,
    ) -> Result<(), NoGood> {
        for (i, e) in rest.iter().enumerate() {
            let ld1 = last_depth(rest, i + 1, ld);
            let elen = 1 + e.len;
            if e.is_dots() || e.is_atomic() && self.joins(elen, col, ld1, w) {
                col += elen;
                w += elen;
            } else {
                let we = self.cind_element(e, col0, ind, ld1, 0)?;
                col = col0 + we;
                w = we;
            }
        }
        match tail {
            Some(t)
                if !(t.is_dots()
                    || t.is_atomic()
                        && t.len + 1 < self.ll - col - ld
                        && t.len + 1 + w + ld <= self.m) =>
            {
                self.cind(t, col, ind, ld, 0)
            }
            _ => Ok(()),
        }
    }
}
