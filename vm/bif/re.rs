//! The `re` module: `run/2,3`, `replace/3,4`, `split/2,3`, `compile/1,2`,
//! `inspect/2` and `version/0`, on the `regex` crate, and on `fancy-regex` (a backtracking engine)
//! for the patterns `regex` cannot express: back-references,
//! look-ahead and look-behind, atomic groups, conditionals.
//!
//! Subjects and patterns are bytes (latin1 lists and binaries) or, with
//! the `unicode` option, UTF-8; offsets in results are byte offsets, as
//! in OTP. Global matching follows PCRE's rule that an empty match is
//! followed by a search one character further on. A pattern neither
//! engine takes is a badarg from `run`, and `{error, ...}` from
//! `compile`.

use super::re_syntax::{self, Fault};
use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap};
use crate::term::view::View;
use crate::term::{Atom, Term};
use regex::bytes::{Regex, RegexBuilder};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct Flags {
    caseless: bool,
    multiline: bool,
    dotall: bool,
    extended: bool,
    unicode: bool,
    ungreedy: bool,
    anchored: bool,
    /// `ucp`: `\w`, `\d`, `\s` and the POSIX classes by Unicode's
    /// properties rather than PCRE's latin1 tables.
    ucp: bool,
}

impl Flags {
    fn bits(self) -> u8 {
        [
            self.caseless,
            self.multiline,
            self.dotall,
            self.extended,
            self.unicode,
            self.ungreedy,
            self.anchored,
            self.ucp,
        ]
        .iter()
        .enumerate()
        .fold(0, |acc, (i, &on)| acc | (u8::from(on) << i))
    }

    fn from_bits(b: u8) -> Flags {
        let on = |i: u8| b & (1 << i) != 0;
        Flags {
            caseless: on(0),
            multiline: on(1),
            dotall: on(2),
            extended: on(3),
            unicode: on(4),
            ungreedy: on(5),
            anchored: on(6),
            ucp: on(7),
        }
    }
}

#[derive(Clone)]
enum Group {
    Num(usize),
    Name(String),
}

#[derive(Clone)]
enum What {
    All,
    AllButFirst,
    First,
    None,
    AllNames,
    Groups(Vec<Group>),
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Index,
    List,
    Binary,
}

#[derive(Clone, Copy, PartialEq)]
enum Return {
    Iodata,
    List,
    Binary,
}

struct Opts {
    flags: Flags,
    global: bool,
    offset: usize,
    what: What,
    kind: Kind,
    ret: Return,
    trim: bool,
    parts: Option<usize>,
    /// `split`'s `group`: each piece with its groups as one list.
    group: bool,
    /// `run`'s `report_errors`: a bad pattern is `{error, {compile, E}}`.
    report_errors: bool,
}

fn atom_name(t: Term) -> Option<&'static str> {
    t.as_atom().map(|a| a.name())
}

/// Reads an option list; `None` for anything not understood.
fn options(heap: &Heap, list: Term) -> Option<Opts> {
    let mut o = Opts {
        flags: Flags::default(),
        global: false,
        offset: 0,
        what: What::All,
        kind: Kind::Index,
        ret: Return::Iodata,
        trim: false,
        parts: None,
        group: false,
        report_errors: false,
    };
    let mut t = list;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        t = tail;
        if let Some(name) = atom_name(h) {
            match name {
                "caseless" => o.flags.caseless = true,
                "multiline" => o.flags.multiline = true,
                "dotall" => o.flags.dotall = true,
                "extended" => o.flags.extended = true,
                "unicode" => o.flags.unicode = true,
                "ucp" => (o.flags.unicode, o.flags.ucp) = (true, true),
                "ungreedy" => o.flags.ungreedy = true,
                "anchored" => o.flags.anchored = true,
                "global" => o.global = true,
                // The last of `trim` and `{parts, N}` counts, as in OTP.
                "trim" => (o.trim, o.parts) = (true, None),
                "group" => o.group = true,
                "report_errors" => o.report_errors = true,
                "notempty" | "notbol" | "noteol" | "dollar_endonly" | "no_auto_capture"
                | "dupnames" | "firstline" | "bsr_anycrlf" | "bsr_unicode" | "never_utf"
                | "no_start_optimize" | "notempty_atstart" => {}
                _ => return None,
            }
            continue;
        }
        match heap.view(h) {
            View::Tuple([k, v]) => match (atom_name(*k)?, heap.view(*v)) {
                ("offset", View::Small(n)) if n >= 0 => o.offset = n as usize,
                ("capture", _) => o.what = what(heap, *v)?,
                ("return", View::Atom(a)) => {
                    o.ret = match a.name() {
                        "iodata" => Return::Iodata,
                        "list" => Return::List,
                        "binary" => Return::Binary,
                        _ => return None,
                    }
                }
                ("parts", View::Small(n)) if n >= 0 => {
                    (o.trim, o.parts) = if n == 0 {
                        (true, None)
                    } else {
                        (false, Some(n as usize))
                    };
                }
                ("parts", View::Atom(a)) if a.name() == "infinity" => {
                    (o.trim, o.parts) = (false, None)
                }
                ("newline", _) | ("match_limit", _) | ("match_limit_recursion", _) => {}
                _ => return None,
            },
            View::Tuple([k, w, kind]) if atom_name(*k)? == "capture" => {
                o.what = what(heap, *w)?;
                o.kind = match atom_name(*kind)? {
                    "index" => Kind::Index,
                    "list" => Kind::List,
                    "binary" => Kind::Binary,
                    _ => return None,
                };
            }
            _ => return None,
        }
    }
    t.is_nil().then_some(o)
}

fn what(heap: &Heap, t: Term) -> Option<What> {
    if let Some(name) = atom_name(t) {
        return Some(match name {
            "all" => What::All,
            "all_but_first" => What::AllButFirst,
            "first" => What::First,
            "none" => What::None,
            "all_names" => What::AllNames,
            _ => return None,
        });
    }
    let mut groups = Vec::new();
    let mut l = t;
    while l.is_cons() {
        let (h, tail) = heap.cons_parts(l);
        l = tail;
        groups.push(match heap.view(h) {
            View::Small(n) if n >= 0 => Group::Num(n as usize),
            View::Atom(a) => Group::Name(a.name().to_string()),
            _ => Group::Name(super::erlang::char_list(heap, h)?),
        });
    }
    l.is_nil().then_some(What::Groups(groups))
}

/// The bytes of a subject or pattern: a binary as it is; a list of
/// characters as latin1 bytes, or with `unicode` as UTF-8.
fn text_bytes(heap: &Heap, t: Term, unicode: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Binary(b) => out.extend_from_slice(b),
            View::Nil => {}
            View::Cons(h, tail) => {
                stack.push(tail);
                stack.push(h);
            }
            View::Small(c) if unicode => {
                let c = char::from_u32(u32::try_from(c).ok()?)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            View::Small(c) if (0..=255).contains(&c) => out.push(c as u8),
            _ => return None,
        }
    }
    Some(out)
}

/// The pattern in `regex` syntax: without `unicode`, bytes above 127
/// become `\xHH` (regex's byte escapes); PCRE's escapes that `regex`
/// lacks are rewritten (see `pcre_escapes`).
fn regex_source(pattern: &[u8], unicode: bool, ucp: bool) -> Option<String> {
    let chars: Vec<char> = if unicode {
        String::from_utf8(pattern.to_vec()).ok()?.chars().collect()
    } else {
        pattern.iter().map(|&b| b as char).collect()
    };
    let mut s = String::new();
    for c in pcre_escapes(&chars, unicode, ucp) {
        if c.is_ascii() || unicode {
            s.push(c);
        } else {
            s.push_str(&format!("\\x{:02X}", c as u32));
        }
    }
    Some(s)
}

/// Rewrites the PCRE escapes `regex` does not know into ones it does:
/// `\Q...\E` (the characters between taken literally), `\h` and `\H`
/// (horizontal white space and its complement; inside a class `\h` is
/// its members) and `\R` (any line break, CR LF first). Other escapes
/// pass through whole, so `\\Q` stays an escaped backslash and a `Q`.
fn pcre_escapes(p: &[char], unicode: bool, ucp: bool) -> Vec<char> {
    let horizontal = if unicode {
        "\\t \\x{A0}\\x{1680}\\x{180E}\\x{2000}-\\x{200A}\\x{202F}\\x{205F}\\x{3000}"
    } else {
        "\\t \\xA0"
    };
    let mut out = Vec::with_capacity(p.len());
    let mut in_class = false;
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        match c {
            '\\' if i + 1 < p.len() => {
                let e = p[i + 1];
                i += 2;
                match e {
                    'Q' => {
                        while i < p.len() && !(p[i] == '\\' && p.get(i + 1) == Some(&'E')) {
                            if p[i].is_ascii_alphanumeric() || !p[i].is_ascii() {
                                out.push(p[i]);
                            } else {
                                out.push('\\');
                                out.push(p[i]);
                            }
                            i += 1;
                        }
                        i += 2;
                    }
                    'E' => {}
                    'd' | 'D' | 's' | 'S' | 'w' | 'W' if !ucp => {
                        let (set, negated) = class_escape(e);
                        match (in_class, negated) {
                            (true, false) => out.extend(set.chars()),
                            (true, true) | (false, _) => {
                                let repeat =
                                    (!in_class && unicode).then(|| repeat_at(p, i)).flatten();
                                match repeat {
                                    Some((rep, end)) if e == 'w' || e == 'W' => {
                                        out.extend(utf_type_repeat(set, negated, &rep).chars());
                                        i = end;
                                    }
                                    _ => out.extend(
                                        format!("[{}{set}]", if negated { "^" } else { "" })
                                            .chars(),
                                    ),
                                }
                            }
                        }
                    }
                    'p' | 'P' | 'x' if p.get(i) == Some(&'{') => {
                        // A property `\p{L}` or a code point `\x{FC}`:
                        // their braces are not a quantifier's.
                        let end = p[i..]
                            .iter()
                            .position(|&c| c == '}')
                            .map_or(p.len(), |k| i + k + 1);
                        out.extend(['\\', e]);
                        out.extend(&p[i..end]);
                        i = end;
                    }
                    'g' | 'k' if p.get(i) == Some(&'{') => {
                        // PCRE's back references `\g{1}`, `\g{-1}`,
                        // `\g{name}` and `\k{name}`, in fancy-regex's
                        // words (its `\g` calls a subroutine).
                        let end = p[i..]
                            .iter()
                            .position(|&c| c == '}')
                            .map_or(p.len(), |k| i + k);
                        out.extend("\\k<".chars());
                        out.extend(&p[i + 1..end]);
                        out.push('>');
                        i = (end + 1).min(p.len());
                    }
                    'g' if p.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '-') => {
                        let mut end = i + 1;
                        while p.get(end).is_some_and(char::is_ascii_digit) {
                            end += 1;
                        }
                        out.extend("\\k<".chars());
                        out.extend(&p[i..end]);
                        out.push('>');
                        i = end;
                    }
                    'b' | 'B' if !in_class && unicode && !ucp => {
                        // PCRE's word boundary in UTF mode without `ucp`
                        // looks at its latin1 table: a character above
                        // 255 is not a word character (regex's Unicode
                        // `\b` takes letters of every script).
                        let w = format!("[{WORD}]");
                        let boundary = if e == 'b' {
                            format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
                        } else {
                            format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
                        };
                        out.extend(boundary.chars());
                    }
                    'h' if in_class => out.extend(horizontal.chars()),
                    'h' => out.extend(format!("[{horizontal}]").chars()),
                    'H' if !in_class => out.extend(format!("[^{horizontal}]").chars()),
                    'R' if !in_class => out.extend("(?:\\r\\n|[\\n\\x0B\\x0C\\r])".chars()),
                    _ => {
                        out.push('\\');
                        out.push(e);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                i += 1;
                // A ']' first (after an optional '^') is a member.
                if p.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if p.get(i) == Some(&']') {
                    out.push('\\');
                    out.push(']');
                    i += 1;
                }
            }
            '{' if !in_class => {
                // PCRE reads `{` as a quantifier only in the forms `{n}`,
                // `{n,}` and `{n,m}`; anywhere else it is a literal.
                let end = quantifier_end(p, i);
                match end {
                    Some(end) => out.extend(&p[i..end]),
                    None => out.extend(['\\', '{']),
                }
                i = end.unwrap_or(i + 1);
            }
            '}' if !in_class => {
                out.extend(['\\', '}']);
                i += 1;
            }
            '-' if in_class && class_dash_literal(p, i) => {
                out.extend(['\\', '-']);
                i += 1;
            }
            '[' | '&' | '~' if in_class && p.get(i + 1) != Some(&':') => {
                // Nested classes and set operators (`&&`, `~~`) are the
                // `regex` crate's, not PCRE's: here they are members.
                out.extend(['\\', c]);
                i += 1;
            }
            '[' if in_class && p.get(i + 1) == Some(&':') => {
                // A POSIX class ([:alpha:], [:^alpha:]) inside a class:
                // its members by PCRE's latin1 tables (regex's own are
                // ASCII), or copied whole if it is not one PCRE knows.
                let start = i;
                while i < p.len() && !(p[i] == ']' && i > 0 && p[i - 1] == ':') {
                    i += 1;
                }
                if i >= p.len() {
                    out.extend(&p[start..]);
                    continue;
                }
                let body: String = p.get(start + 2..i - 1).unwrap_or_default().iter().collect();
                let (name, negated) = match body.strip_prefix('^') {
                    Some(name) => (name, true),
                    None => (body.as_str(), false),
                };
                // Under `ucp` they are left to regex (whose are ASCII).
                match posix_class(name).filter(|_| !ucp) {
                    Some(set) if negated => out.extend(format!("[^{set}]").chars()),
                    Some(set) => out.extend(set.chars()),
                    None => out.extend(&p[start..=i]),
                }
                i += 1;
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Where a PCRE quantifier `{n}`, `{n,}` or `{n,m}` that starts at
/// `i` ends, or `None` if the `{` there is a literal.
fn quantifier_end(p: &[char], i: usize) -> Option<usize> {
    let digits = |mut j: usize| {
        while p.get(j).is_some_and(char::is_ascii_digit) {
            j += 1;
        }
        j
    };
    let j = digits(i + 1);
    if j == i + 1 {
        return None;
    }
    let j = if p.get(j) == Some(&',') {
        digits(j + 1)
    } else {
        j
    };
    (p.get(j) == Some(&'}')).then_some(j + 1)
}

/// PCRE's word characters without `ucp`: its latin1 table (regex's
/// `\w` is ASCII in bytes mode and all of Unicode in Unicode mode).
const WORD: &str = "0-9A-Za-z_\\x{AA}\\x{B5}\\x{BA}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{FF}";
/// PCRE's `\s`: tab, newline, vertical tab, form feed, return and
/// space (not U+0085 or U+00A0, which regex's Unicode `\s` has).
const SPACE: &str = "\\t\\n\\x0B\\x0C\\r ";

/// The members of a class escape (`\d \s \w` and their complements)
/// as PCRE's tables have them, and whether the escape is the
/// complement of that set.
fn class_escape(e: char) -> (&'static str, bool) {
    match e {
        'd' => ("0-9", false),
        'D' => ("0-9", true),
        's' => (SPACE, false),
        'S' => (SPACE, true),
        'w' => (WORD, false),
        _ => (WORD, true),
    }
}

/// The members of a POSIX class as PCRE's latin1 tables have them
/// (the same with and without `unicode`, as there is no `ucp`).
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => "A-Za-z\\x{AA}\\x{B5}\\x{BA}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{FF}",
        "alnum" => "0-9A-Za-z\\x{AA}\\x{B5}\\x{BA}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{FF}",
        "word" => WORD,
        "upper" => "A-Z\\x{C0}-\\x{D6}\\x{D8}-\\x{DE}",
        "lower" => "a-z\\x{AA}\\x{B5}\\x{BA}\\x{DF}-\\x{F6}\\x{F8}-\\x{FF}",
        "digit" => "0-9",
        "xdigit" => "0-9A-Fa-f",
        "space" => SPACE,
        "blank" => "\\t ",
        "cntrl" => "\\x00-\\x1F\\x7F-\\x{9F}",
        "punct" => {
            "!-/:-@\\[-`{-~\\x{A0}-\\x{A9}\\x{AB}-\\x{B4}\\x{B6}-\\x{B9}\\x{BB}-\\x{BF}\\x{D7}\\x{F7}"
        }
        "print" => " -~\\x{A0}-\\x{FF}",
        "graph" => "!-~\\x{A0}-\\x{FF}",
        "ascii" => "\\x00-\\x7F",
        _ => return None,
    })
}

/// A quantifier at `i` (`*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`, with
/// a lazy `?` or possessive `+` after it): its text and where it ends.
fn repeat_at(p: &[char], i: usize) -> Option<(String, usize)> {
    let end = match p.get(i)? {
        '*' | '+' | '?' => i + 1,
        '{' => quantifier_end(p, i)?,
        _ => return None,
    };
    let end = if matches!(p.get(end), Some('?' | '+')) {
        end + 1
    } else {
        end
    };
    Some((p[i..end].iter().collect(), end))
}

/// `\w` or `\W` repeated, in UTF mode. PCRE (8.x, without `ucp`)
/// tests the repetitions a quantifier requires with a byte check that
/// takes any character above 127 for a non-word character, and the
/// optional ones with its latin1 table: so `\w+` cannot start at `ü`
/// but goes on through it, and `\W+` starts at `ü` and stops at the
/// next latin1 letter.
fn utf_type_repeat(set: &str, negated: bool, rep: &str) -> String {
    let hat = if negated { "^" } else { "" };
    let full = format!("[{hat}{set}]");
    let required = format!("[{hat}0-9A-Za-z_]");
    let (body, suffix) = match rep.char_indices().nth(1) {
        Some((k, c)) if !rep.starts_with('{') && (c == '?' || c == '+') => rep.split_at(k),
        _ => match rep.strip_prefix('{') {
            Some(_) if rep.ends_with("}?") || rep.ends_with("}+") => rep.split_at(rep.len() - 1),
            _ => (rep, ""),
        },
    };
    let (min, max): (usize, Option<usize>) = match body {
        "*" => (0, None),
        "+" => (1, None),
        "?" => (0, Some(1)),
        _ => {
            let inner = &body[1..body.len() - 1];
            match inner.split_once(',') {
                None => {
                    let n = inner.parse().unwrap_or(0);
                    (n, Some(n))
                }
                Some((a, "")) => (a.parse().unwrap_or(0), None),
                Some((a, b)) => {
                    let a = a.parse().unwrap_or(0);
                    (a, Some(b.parse().unwrap_or(a).max(a)))
                }
            }
        }
    };
    let optional = match max {
        None => format!("{full}*"),
        Some(m) if m == min => String::new(),
        Some(m) if m - min == 1 => format!("{full}?"),
        Some(m) => format!("{full}{{0,{}}}", m - min),
    };
    let lazy = if optional.is_empty() || suffix != "?" {
        ""
    } else {
        "?"
    };
    let mandatory = match min {
        0 => String::new(),
        1 => required,
        n => format!("{required}{{{n}}}"),
    };
    if suffix == "+" {
        format!("(?>{mandatory}{optional})")
    } else {
        format!("(?:{mandatory}{optional}{lazy})")
    }
}

/// Whether the `-` at `i` inside a class is a member rather than a
/// range: PCRE takes it literally next to a class escape (`[\w-.]`) and
/// last before the `]`; `regex` would refuse the first.
fn class_dash_literal(p: &[char], i: usize) -> bool {
    let after_escape = i >= 2
        && p[i - 2] == '\\'
        && (i < 3 || p[i - 3] != '\\')
        && "dDwWsShHvVpP".contains(p[i - 1]);
    let before_escape =
        p.get(i + 1) == Some(&'\\') && p.get(i + 2).is_some_and(|c| "dDwWsShHvV".contains(*c));
    after_escape || before_escape
}

/// A compiled pattern: on `regex` (automata, linear time) when it can
/// express the pattern, else on `fancy-regex`.
#[derive(Clone)]
enum Automaton {
    Plain(Regex),
    Fancy(fancy_regex::Regex),
}

/// A compiled pattern with what global matching needs besides: the
/// source (in `regex` syntax) and flags, from which the "non-empty match
/// right here" form is built the first time an empty match asks for it.
#[derive(Clone)]
struct Engine {
    /// Shared, not cloned: a cloned `regex::Regex` starts with an empty
    /// pool of search caches, so every `re:run` on a pattern fetched from
    /// `CACHE` built its lazy DFA again.
    main: Arc<Automaton>,
    source: Arc<str>,
    flags: Flags,
    nonempty: Arc<OnceLock<Option<fancy_regex::Regex>>>,
}

impl Engine {
    fn captures_at(&self, hay: &[u8], pos: usize) -> Option<Found> {
        self.main.captures_at(hay, pos)
    }

    fn captures_len(&self) -> usize {
        self.main.captures_len()
    }

    fn capture_names(&self) -> Vec<Option<String>> {
        self.main.capture_names()
    }

    /// PCRE's retry after an empty match at `pos` (`NOTEMPTY_ATSTART |
    /// ANCHORED`): the first match, in the pattern's own order of
    /// preference, that starts at `pos` and is not empty. `\G` pins the
    /// start; the `(?!\G)` after the pattern refuses an end at `pos`, so
    /// the backtracking engine goes on to the next alternative as PCRE
    /// does.
    fn nonempty_at(&self, hay: &[u8], pos: usize) -> Option<Found> {
        let re = self.nonempty.get_or_init(|| {
            let end = if self.flags.extended { "\n" } else { "" };
            let source = format!("\\G(?:{}{end})(?!\\G)", self.source);
            build_fancy(&source, self.flags).ok()
        });
        let caps = re.as_ref()?.captures_from_pos(hay, pos).ok()??;
        Some(
            (0..caps.len())
                .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                .collect(),
        )
    }
}

impl Automaton {
    /// The first match at or after `pos`, with its groups.
    fn captures_at(&self, hay: &[u8], pos: usize) -> Option<Found> {
        match self {
            Automaton::Plain(re) => {
                let caps = re.captures_at(hay, pos)?;
                Some(
                    (0..caps.len())
                        .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                        .collect(),
                )
            }
            // A run that exceeds the backtracking limit finds nothing
            // (PCRE's match limit likewise ends the search).
            Automaton::Fancy(re) => {
                let caps = re.captures_from_pos(hay, pos).ok()??;
                Some(
                    (0..caps.len())
                        .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                        .collect(),
                )
            }
        }
    }

    /// The number of groups, the whole match included.
    fn captures_len(&self) -> usize {
        match self {
            Automaton::Plain(re) => re.captures_len(),
            Automaton::Fancy(re) => re.captures_len(),
        }
    }

    /// Each group's name, by number (`None` for an unnamed group).
    fn capture_names(&self) -> Vec<Option<String>> {
        match self {
            Automaton::Plain(re) => re.capture_names().map(|n| n.map(str::to_string)).collect(),
            Automaton::Fancy(re) => re.capture_names().map(|n| n.map(str::to_string)).collect(),
        }
    }
}

/// A compiled pattern's key: its bytes, its flags, and whether the
/// subject ends in a newline (see `build_for`).
type CacheKey = (Vec<u8>, u8, bool);

thread_local! {
    static CACHE: RefCell<HashMap<CacheKey, Engine>> = RefCell::new(HashMap::new());
}

/// The pattern on `fancy-regex`, for what `regex` refuses.
fn build_fancy(source: &str, flags: Flags) -> Result<fancy_regex::Regex, String> {
    let mut source = source.to_string();
    if flags.ungreedy {
        source.insert_str(0, "(?U)");
    }
    fancy_regex::RegexBuilder::new(&source)
        .case_insensitive(flags.caseless)
        .multi_line(flags.multiline)
        .dot_matches_new_line(flags.dotall)
        .ignore_whitespace(flags.extended)
        .unicode_mode(true)
        .bytes_mode(fancy_regex::BytesMode::UnicodeBytes)
        .build()
        .map_err(|e| e.to_string())
}

/// The source with each `^` outside a character class made PCRE's under
/// `multiline` (start of subject, or after a newline that does not end
/// it), or `None` if it has no such `^`. Only the backtracking engine can
/// say "not at the end", so a pattern rewritten this way runs on it.
fn caret_not_after_final_newline(source: &str) -> Option<String> {
    rewrite_anchor(source, '^', "(?:\\A|^(?!\\z))")
}

/// The source with each `anchor` outside a character class written as
/// `with`, or `None` if it has no such anchor.
fn rewrite_anchor(source: &str, anchor: char, with: &str) -> Option<String> {
    let mut out = String::with_capacity(source.len() + 16);
    let mut chars = source.chars();
    let mut in_class = false;
    let mut changed = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `^` or `]` right after `[` belongs to the class.
                let rest = chars.as_str();
                let skip = usize::from(rest.starts_with('^'));
                let skip = skip + usize::from(rest[skip..].starts_with(']'));
                out.push_str(&rest[..skip]);
                chars = rest[skip..].chars();
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            c if c == anchor && !in_class => {
                out.push_str(with);
                changed = true;
            }
            _ => out.push(c),
        }
    }
    changed.then_some(out)
}

/// The pattern without the option settings PCRE allows at its start,
/// `(*UTF8)`, `(*UCP)`, `(*CRLF)` and the like (the engines have no
/// use for them).
fn strip_start_options(mut pattern: &[u8]) -> &[u8] {
    const STARTS: [&[u8]; 11] = [
        b"(*UTF8)",
        b"(*UTF)",
        b"(*UCP)",
        b"(*CRLF)",
        b"(*CR)",
        b"(*LF)",
        b"(*ANYCRLF)",
        b"(*ANY)",
        b"(*BSR_ANYCRLF)",
        b"(*BSR_UNICODE)",
        b"(*NO_START_OPT)",
    ];
    while let Some(start) = STARTS.iter().find(|s| pattern.starts_with(s)) {
        pattern = &pattern[start.len()..];
    }
    pattern
}

/// The source with each `$` outside a character class made PCRE's
/// (end of subject, or before a newline that ends it), or `None` if it
/// has no such `$`.
fn dollar_before_final_newline(source: &str) -> Option<String> {
    rewrite_anchor(source, '$', "(?=\\n?\\z)")
}

/// The pattern compiled for a subject: `final_newline` says the subject
/// ends in a newline, where PCRE's `$` (without `multiline`) also
/// matches before it, which needs a look-ahead.
fn build_for(pattern: &[u8], flags: Flags, final_newline: bool) -> Result<Engine, Fault> {
    let dollar = final_newline && !flags.multiline;
    // Under multiline the final newline matters to `^` instead.
    let key = (pattern.to_vec(), flags.bits(), final_newline);
    if let Some(re) = CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(re);
    }
    re_syntax::check(pattern, flags.extended, flags.unicode)?;
    let body = strip_start_options(pattern);
    let ucp = flags.ucp
        || pattern[..pattern.len() - body.len()]
            .windows(6)
            .any(|w| w == b"(*UCP)");
    let mut source = regex_source(body, flags.unicode, ucp).ok_or(Fault {
        message: "invalid UTF-8 string",
        offset: 0,
    })?;
    if dollar && let Some(rewritten) = dollar_before_final_newline(&source) {
        source = rewritten;
    }
    let mut caret = false;
    if final_newline
        && flags.multiline
        && let Some(rewritten) = caret_not_after_final_newline(&source)
    {
        source = rewritten;
        caret = true;
    }
    let plain = if caret {
        // Look-ahead: straight to the backtracking engine.
        Err(regex::Error::Syntax(String::new()))
    } else {
        RegexBuilder::new(&source)
            .case_insensitive(flags.caseless)
            .multi_line(flags.multiline)
            .dot_matches_new_line(flags.dotall)
            .ignore_whitespace(flags.extended)
            .unicode(true)
            .swap_greed(flags.ungreedy)
            .build()
    };
    let main = match plain {
        Ok(re) => Automaton::Plain(re),
        Err(plain) => match build_fancy(&source, flags) {
            Ok(re) => Automaton::Fancy(re),
            Err(_) => return Err(pcre_error(&plain.to_string(), pattern.len())),
        },
    };
    let re = Engine {
        main: Arc::new(main),
        source: source.into(),
        flags,
        nonempty: Arc::new(OnceLock::new()),
    };
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 256 {
            c.clear();
        }
        c.insert(key, re.clone());
    });
    Ok(re)
}

/// A compiled pattern term: `{re_pattern, Groups, Unicode, 0, Bin}` as in
/// OTP, where Bin holds the flags byte and the pattern's bytes.
fn compiled(heap: &Heap, t: Term) -> Option<(Vec<u8>, Flags)> {
    match heap.view(t) {
        View::Tuple([tag, _, _, _, bin]) if atom_name(*tag) == Some("re_pattern") => {
            let bytes = heap.binary_bytes(*bin)?;
            let (&flags, pattern) = bytes.split_first()?;
            Some((pattern.to_vec(), Flags::from_bits(flags)))
        }
        _ => None,
    }
}

/// The pattern compiled, for `compile`.
fn build(pattern: &[u8], flags: Flags) -> Result<Engine, Fault> {
    build_for(pattern, flags, false)
}

/// The pattern argument (source or compiled) and the subject as bytes,
/// with the options' flags added, and the pattern compiled for it.
fn pattern_and_subject(
    heap: &Heap,
    t: Term,
    subject: Term,
    flags: Flags,
) -> Result<(Engine, Flags, Vec<u8>), BifError> {
    let (bytes, flags) = match compiled(heap, t) {
        Some((bytes, f)) => (bytes, merge(f, flags)),
        None => (
            text_bytes(heap, t, flags.unicode).ok_or(BifError::Badarg)?,
            flags,
        ),
    };
    let hay = text_bytes(heap, subject, flags.unicode).ok_or(BifError::Badarg)?;
    let re = build_for(&bytes, flags, hay.last() == Some(&b'\n')).map_err(|_| BifError::Badarg)?;
    Ok((re, flags, hay))
}

/// Why a pattern given as source does not compile, if it does not.
fn source_fault(heap: &Heap, t: Term, flags: Flags) -> Option<Fault> {
    let bytes = text_bytes(heap, t, flags.unicode)?;
    build(&bytes, flags).err()
}

fn merge(a: Flags, b: Flags) -> Flags {
    Flags::from_bits(a.bits() | b.bits())
}

/// One match: the span of each group (`None` if it did not take part).
type Found = Vec<Option<(usize, usize)>>;

/// The matches from `offset`: one, or with `global` all of them, PCRE's
/// way (after an empty match, the next search starts one character on).
fn matches(re: &Engine, hay: &[u8], offset: usize, global: bool, flags: Flags) -> Vec<Found> {
    if flags.unicode || hay.is_ascii() {
        return matches_in(re, hay, offset, global, flags.anchored, flags.unicode);
    }
    // A latin1 subject with characters above 127 is searched as UTF-8
    // (the patterns are compiled for characters, with PCRE's latin1
    // tables spelled out), and the spans are taken back to its bytes.
    let mut utf8 = Vec::with_capacity(hay.len() + hay.len() / 4);
    let mut back = Vec::with_capacity(hay.len() + hay.len() / 4 + 1);
    let mut forward = Vec::with_capacity(hay.len() + 1);
    for (i, &b) in hay.iter().enumerate() {
        forward.push(utf8.len());
        let mut buf = [0u8; 2];
        let encoded = char::from(b).encode_utf8(&mut buf);
        for _ in 0..encoded.len() {
            back.push(i);
        }
        utf8.extend_from_slice(encoded.as_bytes());
    }
    forward.push(utf8.len());
    back.push(hay.len());
    let start = forward.get(offset).copied().unwrap_or(utf8.len() + 1);
    let mut found = matches_in(re, &utf8, start, global, flags.anchored, true);
    for f in &mut found {
        for span in f.iter_mut().flatten() {
            *span = (back[span.0], back[span.1]);
        }
    }
    found
}

fn matches_in(
    re: &Engine,
    hay: &[u8],
    offset: usize,
    global: bool,
    anchored: bool,
    unicode: bool,
) -> Vec<Found> {
    let mut out = Vec::new();
    let mut pos = offset;
    while pos <= hay.len() {
        let Some(found) = re.captures_at(hay, pos) else {
            break;
        };
        let whole = found.first().copied().flatten().unwrap_or((pos, pos));
        if anchored && whole.0 != pos {
            break;
        }
        out.push(found);
        if !global {
            break;
        }
        pos = whole.1;
        // After an empty match PCRE looks for a non-empty one at the
        // same place before moving a character on.
        if whole.0 == whole.1 {
            match re.nonempty_at(hay, pos) {
                Some(found) => {
                    pos = found[0].map_or(pos + 1, |(_, b)| b);
                    out.push(found);
                }
                None => pos = next_char(hay, pos, unicode),
            }
        }
        if pos > hay.len() {
            break;
        }
    }
    out
}

fn next_char(hay: &[u8], at: usize, unicode: bool) -> usize {
    let mut n = at + 1;
    if unicode {
        while n < hay.len() && (hay[n] & 0xC0) == 0x80 {
            n += 1;
        }
    }
    n
}

/// The group numbers a capture spec selects, for a regex with
/// `groups` groups (0 the whole match); `None` marks a name that is not
/// a group (OTP gives an unset group for it).
fn selected(re: &Engine, what: &What, found: &Found) -> Vec<Option<usize>> {
    match what {
        What::All => {
            // OTP leaves out the unset groups after the last set one.
            let last = found.iter().rposition(Option::is_some).unwrap_or(0);
            (0..=last).map(Some).collect()
        }
        What::AllButFirst => {
            let last = found.iter().rposition(Option::is_some).unwrap_or(0);
            (1..=last).map(Some).collect()
        }
        What::First => vec![Some(0)],
        What::None => vec![],
        What::AllNames => {
            let all = re.capture_names();
            let mut names: Vec<(&str, usize)> = all
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.as_deref().map(|n| (n, i)))
                .collect();
            names.sort();
            names.into_iter().map(|(_, i)| Some(i)).collect()
        }
        What::Groups(gs) => gs
            .iter()
            .map(|g| match g {
                Group::Num(n) => (*n < found.len()).then_some(*n),
                Group::Name(name) => re
                    .capture_names()
                    .iter()
                    .position(|n| n.as_deref() == Some(name.as_str())),
            })
            .collect(),
    }
}

/// A piece of the subject as a list (characters; UTF-8 decoded with
/// `unicode`) or a binary.
fn piece(heap: &mut Heap, bytes: &[u8], as_list: bool, unicode: bool) -> Term {
    if !as_list {
        return heap.binary_from_vec(bytes.to_vec());
    }
    if unicode && let Ok(s) = std::str::from_utf8(bytes) {
        return heap.string(s);
    }
    let items: Vec<Term> = bytes.iter().map(|&b| Term::small(b as i64)).collect();
    heap.list(&items)
}

fn piece_words(len: usize) -> usize {
    2 * len + heap::words_for_binary(len) + 4
}

fn run(ctx: &mut Context, args: &mut [Term], opts: Opts) -> BifResult {
    let heap = &ctx.process.heap;
    let (re, flags, hay) = match pattern_and_subject(heap, args[1], args[0], opts.flags) {
        Ok(compiled) => compiled,
        Err(error) => {
            let fault = opts
                .report_errors
                .then(|| source_fault(heap, args[1], opts.flags))
                .flatten();
            let Some(fault) = fault else {
                return Err(error);
            };
            ctx.ensure(2 * fault.message.len() + 10, args)?;
            let inner = fault_term(ctx.heap(), &fault);
            let h = ctx.heap();
            let compile = h.tuple(&[Term::atom(Atom::intern("compile")), inner]);
            return Ok(h.tuple(&[Term::atom(Atom::ERROR), compile]));
        }
    };
    if opts.offset > hay.len() {
        return Err(BifError::Badarg);
    }
    let found = matches(&re, &hay, opts.offset, opts.global, flags);
    if found.is_empty() {
        return Ok(Term::atom(Atom::intern("nomatch")));
    }
    if matches!(opts.what, What::None) {
        return Ok(Term::atom(Atom::intern("match")));
    }
    let per: Vec<Vec<Option<(usize, usize)>>> = found
        .iter()
        .map(|f| {
            selected(&re, &opts.what, f)
                .into_iter()
                .map(|g| g.and_then(|i| f.get(i).copied().flatten()))
                .collect()
        })
        .collect();
    let words: usize = per
        .iter()
        .map(|g| {
            g.iter()
                .map(|s| piece_words(s.map_or(0, |(a, b)| b - a)))
                .sum::<usize>()
                + 4
        })
        .sum::<usize>()
        + 8;
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let mut results = Vec::new();
    for groups in &per {
        let items: Vec<Term> = groups
            .iter()
            .map(|span| match (opts.kind, span) {
                (Kind::Index, Some((a, b))) => {
                    heap.tuple(&[Term::small(*a as i64), Term::small((b - a) as i64)])
                }
                (Kind::Index, None) => heap.tuple(&[Term::small(-1), Term::small(0)]),
                (kind, span) => {
                    let bytes = span.map_or(&[][..], |(a, b)| &hay[a..b]);
                    piece(heap, bytes, kind == Kind::List, flags.unicode)
                }
            })
            .collect();
        results.push(heap.list(&items));
    }
    let captured = if opts.global {
        heap.list(&results)
    } else {
        results[0]
    };
    Ok(heap.tuple(&[Term::atom(Atom::intern("match")), captured]))
}

pub fn run_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, Term::NIL).ok_or(BifError::Badarg)?;
    run(ctx, args, opts)
}

pub fn run_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, args[2]).ok_or(BifError::Badarg)?;
    run(ctx, args, opts)
}

/// A replacement string, parsed: literal bytes and group references.
/// `&` is the whole match; `\N` (N starting with 1-9), `\gN` and
/// `\g{N}` are group N (all the digits that follow), so `\g0` is the
/// whole match too. A backslash before anything else, `0` included,
/// stands for that character: `\0` is a literal `0`, as in OTP. A
/// `\g{` that does not close on digits is refused (`None`, a badarg).
enum Part {
    Lit(Vec<u8>),
    Group(usize),
}

fn parts(repl: &[u8]) -> Option<Vec<Part>> {
    let mut out: Vec<Part> = Vec::new();
    let lit = |out: &mut Vec<Part>, c: u8| match out.last_mut() {
        Some(Part::Lit(l)) => l.push(c),
        _ => out.push(Part::Lit(vec![c])),
    };
    let number = |digits: &[u8]| {
        std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(usize::MAX)
    };
    let digit_run = |s: &[u8]| s.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = 0;
    while i < repl.len() {
        match repl[i] {
            b'&' => {
                out.push(Part::Group(0));
                i += 1;
            }
            b'\\' if i + 1 < repl.len() => {
                let rest = &repl[i + 1..];
                match rest[0] {
                    b'g' if rest.get(1) == Some(&b'{') => {
                        let close = rest.iter().position(|&c| c == b'}')?;
                        let digits = &rest[2..close];
                        if digits.is_empty() || digit_run(digits) != digits.len() {
                            return None;
                        }
                        out.push(Part::Group(number(digits)));
                        i += 2 + close;
                    }
                    b'g' if rest.get(1).is_some_and(u8::is_ascii_digit) => {
                        let n = digit_run(&rest[1..]);
                        out.push(Part::Group(number(&rest[1..1 + n])));
                        i += 2 + n;
                    }
                    b'1'..=b'9' => {
                        let n = digit_run(rest);
                        out.push(Part::Group(number(&rest[..n])));
                        i += 1 + n;
                    }
                    c => {
                        lit(&mut out, c);
                        i += 2;
                    }
                }
            }
            c => {
                lit(&mut out, c);
                i += 1;
            }
        }
    }
    Some(out)
}

fn part_bytes<'a>(part: &'a Part, hay: &'a [u8], found: &Found) -> &'a [u8] {
    match part {
        Part::Lit(l) => l,
        Part::Group(n) => match found.get(*n) {
            Some(Some((a, b))) => &hay[*a..*b],
            _ => &[],
        },
    }
}

fn replace(ctx: &mut Context, args: &mut [Term], opts: Opts) -> BifResult {
    let heap = &ctx.process.heap;
    let (re, flags, hay) = pattern_and_subject(heap, args[1], args[0], opts.flags)?;
    let repl = text_bytes(heap, args[2], flags.unicode).ok_or(BifError::Badarg)?;
    let found = matches(&re, &hay, opts.offset, opts.global, flags);
    let parts = parts(&repl).ok_or(BifError::Badarg)?;
    if opts.ret == Return::Iodata {
        if found.is_empty() {
            return Ok(args[0]);
        }
        return replace_iodata(ctx, args, &hay, &found, &parts);
    }
    let mut out = Vec::with_capacity(hay.len());
    let mut at = 0;
    for f in &found {
        let Some((a, b)) = f[0] else { continue };
        out.extend_from_slice(&hay[at..a]);
        for p in &parts {
            out.extend_from_slice(part_bytes(p, &hay, f));
        }
        at = b;
    }
    out.extend_from_slice(&hay[at..]);
    ctx.ensure(piece_words(out.len()), args)?;
    let as_list = opts.ret == Return::List;
    Ok(piece(ctx.heap(), &out, as_list, flags.unicode))
}

/// OTP's iodata shape: `[Before, Replacement, ... | Rest]`, binaries,
/// with empty pieces left out; a replacement of one piece is that binary,
/// of several a list of them, of none `[]`.
fn replace_iodata(
    ctx: &mut Context,
    args: &mut [Term],
    hay: &[u8],
    found: &[Found],
    parts: &[Part],
) -> BifResult {
    // The pieces first, to size the heap.
    enum Item {
        Before(Vec<u8>),
        Replacement(Vec<Vec<u8>>),
    }
    let mut items = Vec::new();
    let mut at = 0;
    for f in found {
        let Some((a, b)) = f[0] else { continue };
        if a > at {
            items.push(Item::Before(hay[at..a].to_vec()));
        }
        items.push(Item::Replacement(
            parts
                .iter()
                .map(|p| part_bytes(p, hay, f).to_vec())
                .collect(),
        ));
        at = b;
    }
    let rest = hay[at..].to_vec();
    let words: usize = items
        .iter()
        .map(|i| match i {
            Item::Before(b) => heap::words_for_binary(b.len()) + 2,
            Item::Replacement(bs) => {
                bs.iter()
                    .map(|b| heap::words_for_binary(b.len()) + 2)
                    .sum::<usize>()
                    + 2
            }
        })
        .sum::<usize>()
        + heap::words_for_binary(rest.len())
        + 4;
    ctx.ensure(words, args)?;
    let h = ctx.heap();
    let terms: Vec<Term> = items
        .into_iter()
        .map(|i| match i {
            Item::Before(b) => h.binary_from_vec(b),
            Item::Replacement(bs) => {
                let bins: Vec<Term> = bs.into_iter().map(|b| h.binary_from_vec(b)).collect();
                match bins.as_slice() {
                    [] => Term::NIL,
                    [one] => *one,
                    many => h.list(many),
                }
            }
        })
        .collect();
    let tail = if rest.is_empty() {
        Term::NIL
    } else {
        h.binary_from_vec(rest)
    };
    Ok(h.list_with_tail(&terms, tail))
}

pub fn replace_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, Term::NIL).ok_or(BifError::Badarg)?;
    replace(ctx, args, opts)
}

pub fn replace_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, args[3]).ok_or(BifError::Badarg)?;
    replace(ctx, args, opts)
}

fn split(ctx: &mut Context, args: &mut [Term], opts: Opts) -> BifResult {
    if opts.global || !matches!(opts.what, What::All) || opts.kind != Kind::Index {
        return Err(BifError::Badarg);
    }
    let heap = &ctx.process.heap;
    let (re, flags, hay) = pattern_and_subject(heap, args[1], args[0], opts.flags)?;
    let found = matches(&re, &hay, opts.offset, true, flags);
    let groups = re.captures_len() - 1;
    // OTP's do_split: each match cuts off the piece before it, followed
    // by what its groups captured; an empty match right where the last
    // one ended, with nothing captured, cuts nothing. `{parts, N}` stops
    // after N - 1 cuts, and the rest of the subject is the last piece.
    let mut rows: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut at = 0;
    let mut cuts_left = opts.parts.map(|n| n - 1);
    let mut done = false;
    for f in &found {
        if cuts_left == Some(0) {
            break;
        }
        if at >= hay.len() {
            rows.push(vec![(at, at)]);
            done = true;
            break;
        }
        let Some((a, b)) = f[0] else { continue };
        let subs: Vec<(usize, usize)> = (1..=groups)
            .map(|g| f.get(g).copied().flatten().unwrap_or((0, 0)))
            .collect();
        if a == at && a == b && subs.iter().all(|(x, y)| x == y) {
            at = b;
            continue;
        }
        let mut row = vec![(at, a)];
        row.extend(subs);
        rows.push(row);
        at = b;
        cuts_left = cuts_left.map(|n| n - 1);
    }
    if !done {
        rows.push(vec![(at.min(hay.len()), hay.len())]);
    }
    if opts.trim {
        let empty = |row: &Vec<(usize, usize)>| row.iter().all(|(a, b)| a == b);
        if opts.group {
            while rows.last().is_some_and(empty) {
                rows.pop();
            }
        } else {
            let mut flat: Vec<(usize, usize)> = rows.concat();
            while flat.last().is_some_and(|(a, b)| a == b) {
                flat.pop();
            }
            rows = vec![flat];
        }
    }
    let pieces = rows.iter().map(Vec::len).sum::<usize>();
    let words: usize = rows
        .iter()
        .flatten()
        .map(|(a, b)| piece_words(b - a))
        .sum::<usize>()
        + 2 * pieces
        + 2 * rows.len()
        + 4;
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let as_list = opts.ret == Return::List;
    let piece_list = |heap: &mut Heap, row: &[(usize, usize)]| -> Term {
        let items: Vec<Term> = row
            .iter()
            .map(|&(a, b)| piece(heap, &hay[a..b], as_list, flags.unicode))
            .collect();
        heap.list(&items)
    };
    if opts.group {
        let lists: Vec<Term> = rows.iter().map(|row| piece_list(heap, row)).collect();
        Ok(heap.list(&lists))
    } else {
        Ok(piece_list(heap, &rows.concat()))
    }
}

pub fn split_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, Term::NIL).ok_or(BifError::Badarg)?;
    split(ctx, args, opts)
}

pub fn split_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, args[2]).ok_or(BifError::Badarg)?;
    split(ctx, args, opts)
}

fn compile(ctx: &mut Context, args: &mut [Term], flags: Flags) -> BifResult {
    let heap = &ctx.process.heap;
    let source = text_bytes(heap, args[0], flags.unicode).ok_or(BifError::Badarg)?;
    match build(&source, flags) {
        Ok(re) => {
            let mut bin = vec![flags.bits()];
            bin.extend_from_slice(&source);
            ctx.ensure(heap::words_for_binary(bin.len()) + 8, args)?;
            let h = ctx.heap();
            let b = h.binary_from_vec(bin);
            let groups = Term::small(re.captures_len() as i64 - 1);
            let pattern = h.tuple(&[
                Term::atom(Atom::intern("re_pattern")),
                groups,
                Term::small(i64::from(flags.unicode)),
                Term::small(0),
                b,
            ]);
            Ok(h.tuple(&[Term::OK, pattern]))
        }
        Err(fault) => {
            ctx.ensure(2 * fault.message.len() + 10, args)?;
            let inner = fault_term(ctx.heap(), &fault);
            Ok(ctx.heap().tuple(&[Term::atom(Atom::ERROR), inner]))
        }
    }
}

/// `{Message, Offset}` for a compile error; the caller has ensured
/// `2 * message.len() + 3` words.
fn fault_term(h: &mut Heap, fault: &Fault) -> Term {
    let text = h.string(fault.message);
    h.tuple(&[text, Term::small(fault.offset as i64)])
}

/// PCRE's words and offset for a `regex` parse error (whose text shows
/// the pattern with carets under the fault), where the two agree on what
/// is wrong; else `regex`'s words.
fn pcre_error(message: &str, len: usize) -> Fault {
    let lines: Vec<&str> = message.lines().collect();
    let what = lines
        .last()
        .map_or("", |l| l.trim().trim_start_matches("error: "));
    // The caret line: its first and last caret, as columns of the pattern.
    let carets = lines.iter().rev().find(|l| l.trim_start().starts_with('^'));
    let (first, last) = carets.map_or((0, 0), |l| {
        let body = l.get(4..).unwrap_or("");
        let first = body.find('^').unwrap_or(0);
        (first, body.rfind('^').unwrap_or(first))
    });
    let pcre = |message: &'static str, at: usize| Fault {
        message,
        offset: at.min(len),
    };
    match what {
        "unclosed group" => pcre("missing )", len),
        "unopened group" => pcre("unmatched parentheses", first),
        "unclosed character class" => pcre("missing terminating ] for character class", len),
        "repetition operator missing expression" => pcre("nothing to repeat", first),
        w if w.starts_with("incomplete escape sequence") => pcre("\\ at end of pattern", len),
        w if w.starts_with("invalid character class range") => {
            pcre("range out of order in character class", last)
        }
        "unrecognized flag" => pcre("unrecognized character after (? or (?-", first),
        w if w.starts_with("invalid repetition count range") => {
            pcre("numbers out of order in {} quantifier", last + 1)
        }
        "duplicate capture group name" => {
            pcre("two named subpatterns have the same name", last + 1)
        }
        // Something the syntax check let through and neither engine
        // takes (a feature they lack): PCRE has no words for it.
        _ => pcre("internal error: unsupported pattern", first),
    }
}

/// `re:version()`: the PCRE release OTP 25 is built with (act's engines
/// aim at its behaviour).
pub fn version_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    super::erlang::make_binary(ctx, b"8.44 2020-02-12".to_vec(), args)
}

/// `re:inspect(MP, namelist)`: `{namelist, Names}`, the pattern's named
/// groups as binaries in alphabetical order, as PCRE's name table has them.
pub fn inspect_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let (pattern, flags) = compiled(heap, args[0]).ok_or(BifError::Badarg)?;
    if atom_name(args[1]) != Some("namelist") {
        return Err(BifError::Badarg);
    }
    let re = build(&pattern, flags).map_err(|_| BifError::Badarg)?;
    let mut names: Vec<String> = re.capture_names().into_iter().flatten().collect();
    names.sort();
    names.dedup();
    let words: usize = names
        .iter()
        .map(|n| heap::words_for_binary(n.len()) + 2)
        .sum();
    ctx.ensure(words + 3, args)?;
    let h = ctx.heap();
    let binaries: Vec<Term> = names
        .iter()
        .map(|n| h.binary_from_vec(n.as_bytes().to_vec()))
        .collect();
    let list = h.list(&binaries);
    Ok(h.tuple(&[Term::atom(Atom::intern("namelist")), list]))
}

pub fn compile_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    compile(ctx, args, Flags::default())
}

pub fn compile_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let opts = options(&ctx.process.heap, args[1]).ok_or(BifError::Badarg)?;
    compile(ctx, args, opts.flags)
}
