//! `io_lib:format/2` as OTP 25 returns it: not a flat string but the deep
//! list io_lib_format builds, whose shape shows when a program prints the
//! result with `~p` or `~w`.
//!
//! OTP's shape (observed on OTP 25): each literal character of the format
//! is one element; the "small" directives (`~b ~B ~x ~X ~+ ~# ~c ~e ~f
//! ~g ~n ~i ~~`, and `~s` of an atom) are spliced in as characters; every
//! other directive is one element: `~s` of a list is the list itself
//! (padded as `[Pad | S]` or `[S | Pad...]`), `~w`/`~p` are io_lib:write's
//! nesting (`[$[, [E1, $,, E2 | Tail], $]]`, tuples and maps alike).
//!
//! Each directive is formatted once, alone (a `~p` after the text of its
//! line so far, so that it breaks lines at the same columns), and its
//! shape is built beside its characters and used only when it flattens
//! to the same characters (else the directive's characters form one flat
//! element), so a shape this module does not know can never change what
//! is printed. A format this module cannot split goes to the flat
//! formatter whole.

use super::{BifError, BifResult, Context};
use crate::heap::Heap;
use crate::term::format;
use crate::term::view::View;
use crate::term::{Term, print};

/// A deep character list being built.
enum Deep {
    Char(u32),
    /// A flat list of these characters: the same shape as a `List` of
    /// their `Char`s, in one allocation.
    Text(String),
    List(Vec<Deep>),
}

fn chars(s: &str) -> Deep {
    Deep::Text(s.to_owned())
}

/// The elements of a list-shaped `d` (a `Text` as its characters).
fn items(d: Deep) -> Result<Vec<Deep>, Deep> {
    match d {
        Deep::List(items) => Ok(items),
        Deep::Text(s) => Ok(s.chars().map(|c| Deep::Char(c as u32)).collect()),
        d => Err(d),
    }
}

fn flatten_into(d: &Deep, out: &mut String) {
    match d {
        Deep::Char(c) => out.push(char::from_u32(*c).unwrap_or('?')),
        Deep::Text(s) => out.push_str(s),
        Deep::List(items) => items.iter().for_each(|i| flatten_into(i, out)),
    }
}

/// Whether `d` flattens to exactly `flat` (compared as it is walked,
/// without building the flat text).
fn flattens_to(d: &Deep, flat: &str) -> bool {
    fn walk(d: &Deep, rest: &mut &str) -> bool {
        match d {
            Deep::Char(c) => {
                let mut it = rest.chars();
                let ok = it.next().is_some_and(|f| f as u32 == *c);
                *rest = it.as_str();
                ok
            }
            Deep::Text(s) => match rest.strip_prefix(s.as_str()) {
                Some(after) => {
                    *rest = after;
                    true
                }
                None => false,
            },
            Deep::List(items) => items.iter().all(|i| walk(i, rest)),
        }
    }
    let mut rest = flat;
    walk(d, &mut rest) && rest.is_empty()
}

/// Heap words the deep list needs: two per cons cell.
fn words(d: &Deep) -> usize {
    match d {
        Deep::Char(_) => 0,
        Deep::Text(s) => 2 * s.chars().count(),
        Deep::List(items) => items.iter().map(|i| 2 + words(i)).sum(),
    }
}

fn build(heap: &mut Heap, d: &Deep) -> Term {
    match d {
        Deep::Char(c) => Term::small(*c as i64),
        Deep::Text(s) => {
            let mut list = Term::NIL;
            for c in s.chars().rev() {
                list = heap.cons(Term::small(c as i64), list);
            }
            list
        }
        Deep::List(items) => {
            let mut list = Term::NIL;
            for item in items.iter().rev() {
                let t = build(heap, item);
                list = heap.cons(t, list);
            }
            list
        }
    }
}

/// One parsed directive: its text (from `~` to the control character),
/// the arguments it takes, and what the layout needs to know.
struct Directive {
    text: Vec<char>,
    args: Vec<Term>,
    control: char,
    /// Field width and precision: `None` when absent, `Some(None)` when
    /// given but unusable here (a negative `*` argument).
    width: Option<Option<usize>>,
    precision: Option<Option<usize>>,
    /// The pad character (`~W.P.Cs`), a space unless given.
    pad: u32,
    left: bool,
    lists: bool,
}

/// Splits a format into literal characters and directives; `None` when
/// it is malformed (the flat formatter has said badarg already then).
fn parse(fmt: &[char], args: &[Term]) -> Option<Vec<Result<char, Directive>>> {
    let mut out = Vec::new();
    let mut args = args.iter().copied();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != '~' {
            out.push(Ok(fmt[i]));
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut taken = Vec::new();
        let mut d = Directive {
            text: Vec::new(),
            args: Vec::new(),
            control: ' ',
            width: None,
            precision: None,
            pad: ' ' as u32,
            left: false,
            lists: false,
        };
        if fmt.get(i) == Some(&'-') {
            d.left = true;
            i += 1;
        }
        let field = |i: &mut usize, taken: &mut Vec<Term>, args: &mut dyn Iterator<Item = Term>| {
            if fmt.get(*i) == Some(&'*') {
                *i += 1;
                let arg = args.next()?;
                taken.push(arg);
                return Some(Some(arg.as_small()));
            }
            let from = *i;
            while fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            if *i == from {
                return Some(None);
            }
            let digits: String = fmt[from..*i].iter().collect();
            Some(Some(digits.parse().ok()))
        };
        let size = |n: Option<Option<i64>>| n.map(|n| n.and_then(|n| usize::try_from(n).ok()));
        let width = field(&mut i, &mut taken, &mut args)?;
        // A negative `*` width adjusts to the left.
        if let Some(Some(n)) = width.filter(|w| w.is_some_and(|n| n < 0)) {
            d.left = true;
            d.width = Some(Some(n.unsigned_abs() as usize));
        } else {
            d.width = size(width);
        }
        if fmt.get(i) == Some(&'.') {
            i += 1;
            d.precision = size(field(&mut i, &mut taken, &mut args)?);
            if fmt.get(i) == Some(&'.') {
                i += 1;
                if fmt.get(i) == Some(&'*') {
                    let arg = args.next()?;
                    taken.push(arg);
                    d.pad = arg.as_small().map_or(0, |c| c as u32);
                } else if let Some(&c) = fmt.get(i) {
                    d.pad = c as u32;
                }
                i += 1;
            }
        }
        while let Some(&m) = fmt.get(i) {
            match m {
                't' => {}
                'l' => d.lists = true,
                _ => break,
            }
            i += 1;
        }
        d.control = *fmt.get(i)?;
        i += 1;
        let n = match d.control {
            'n' | '~' => 0,
            'P' | 'W' | 'x' | 'X' => 2,
            _ => 1,
        };
        for _ in 0..n {
            taken.push(args.next()?);
        }
        d.text = fmt[start..i].to_vec();
        d.args = taken;
        out.push(Err(d));
    }
    // Arguments left over are the flat formatter's `badarg`.
    args.next().is_none().then_some(out)
}

/// io_lib:write's nesting of `t`, or `None` where this module does not
/// know OTP's shape. `pretty`: `~p` (strings and printable binaries are
/// flat quoted text; an improper tail is spliced).
fn term_shape(heap: &Heap, t: Term, pretty: bool) -> Option<Deep> {
    let leaf = |t: Term| {
        // A number prints the same either way; `write` skips the layout.
        let number = matches!(heap.view(t), View::Small(_) | View::Big(_) | View::Float(_));
        if pretty && !number {
            chars(&print::print(heap, t, 0, usize::MAX / 4))
        } else {
            chars(&print::write(heap, t))
        }
    };
    Some(match heap.view(t) {
        View::Cons(..) => {
            // `~p` shows a printable list as a string (as `print` decides).
            if pretty && let Some(cs) = print::printable_list(heap, t) {
                let mut text = String::new();
                print::write_string(&mut text, cs);
                return Some(Deep::Text(text));
            }
            let mut items = Vec::new();
            let mut rest = t;
            let mut first = true;
            loop {
                match heap.view(rest) {
                    View::Cons(h, tl) => {
                        if !first {
                            items.push(Deep::Char(',' as u32));
                        }
                        first = false;
                        items.push(term_shape(heap, h, pretty)?);
                        rest = tl;
                    }
                    View::Nil => break,
                    _ => {
                        items.push(Deep::Char('|' as u32));
                        match term_shape(heap, rest, pretty)? {
                            tail @ (Deep::List(_) | Deep::Text(_)) if pretty => {
                                items.extend(self::items(tail).unwrap_or_default())
                            }
                            tail => items.push(tail),
                        }
                        break;
                    }
                }
            }
            Deep::List(vec![
                Deep::Char('[' as u32),
                Deep::List(items),
                Deep::Char(']' as u32),
            ])
        }
        View::Tuple(es) if !es.is_empty() => {
            let mut items = Vec::new();
            for (i, &e) in es.iter().enumerate() {
                if i > 0 {
                    items.push(Deep::Char(',' as u32));
                }
                items.push(term_shape(heap, e, pretty)?);
            }
            Deep::List(vec![
                Deep::Char('{' as u32),
                Deep::List(items),
                Deep::Char('}' as u32),
            ])
        }
        View::Map { keys, values } if !keys.is_empty() => {
            let mut items = Vec::new();
            for (i, (&k, &v)) in keys.iter().zip(values.iter()).enumerate() {
                if i > 0 {
                    items.push(Deep::Char(',' as u32));
                }
                items.push(Deep::List(vec![
                    term_shape(heap, k, pretty)?,
                    chars(" => "),
                    term_shape(heap, v, pretty)?,
                ]));
            }
            Deep::List(vec![
                Deep::Char('#' as u32),
                Deep::Char('{' as u32),
                Deep::List(items),
                Deep::Char('}' as u32),
            ])
        }
        View::Binary(bytes) => {
            let text = leaf(t);
            let mut inner = String::new();
            flatten_into(&text, &mut inner);
            let body = &inner[2..inner.len() - 2];
            let middle = if bytes.is_empty() {
                if pretty {
                    return Some(chars("<<>>"));
                }
                Deep::List(Vec::new())
            } else if body.starts_with('"') {
                chars(body)
            } else {
                let parts: Vec<Deep> = body
                    .split(',')
                    .enumerate()
                    .flat_map(|(i, b)| {
                        let sep = (i > 0).then_some(Deep::Char(',' as u32));
                        sep.into_iter().chain([chars(b)])
                    })
                    .collect();
                Deep::List(parts)
            };
            Deep::List(vec![
                Deep::Char('<' as u32),
                Deep::Char('<' as u32),
                middle,
                Deep::Char('>' as u32),
                Deep::Char('>' as u32),
            ])
        }
        View::Bitstring(_) => return None,
        _ => leaf(t),
    })
}

/// A deep list of character codes given as a `~s` argument, as it is,
/// except that a binary inside it becomes the flat list of its
/// characters (io_lib_format's `cdata_to_chars`).
fn as_given(heap: &Heap, t: Term) -> Option<Deep> {
    match heap.view(t) {
        View::Nil => Some(Deep::List(Vec::new())),
        View::Binary(_) => Some(chars(
            &format::string_arg(heap, t, true)
                .ok()?
                .into_iter()
                .collect::<String>(),
        )),
        View::Small(c) if (0..=0x10ffff).contains(&c) => Some(Deep::Char(c as u32)),
        View::Cons(..) => {
            let mut items = Vec::new();
            let mut rest = t;
            while let View::Cons(h, tl) = heap.view(rest) {
                items.push(as_given(heap, h)?);
                rest = tl;
            }
            rest.is_nil().then_some(Deep::List(items))
        }
        _ => None,
    }
}

/// The last line of what is formatted so far, escaped as format text, so
/// that a `~p` formatted alone starts at the same column.
fn line_prefix(done: &str) -> Vec<char> {
    let line = done.rsplit('\n').next().unwrap_or("");
    line.chars()
        .flat_map(|c| if c == '~' { vec!['~', '~'] } else { vec![c] })
        .collect()
}

/// io_lib_format's `chars(C, N)`: N copies of C, built by halving
/// (`[S | S]`, or `[C, S | S]` for an odd N above 3).
fn pad_chars(c: u32, n: usize) -> Deep {
    match n {
        0..=3 => Deep::List((0..n).map(|_| Deep::Char(c)).collect()),
        _ => {
            let half = pad_chars(c, n / 2);
            let tail = items(pad_chars(c, n / 2)).unwrap_or_default();
            let mut items = Vec::with_capacity(tail.len() + 2);
            if n % 2 == 1 {
                items.push(Deep::Char(c));
            }
            items.push(half);
            items.extend(tail);
            Deep::List(items)
        }
    }
}

/// io_lib_format's `adjust(Data, Pad, Adj)`: `[Data | Pad]` left-adjusted,
/// `[Pad | Data]` right-adjusted, `Data` when there is no padding.
fn adjust(data: Deep, pad: Deep, left: bool) -> Deep {
    match (pad, data) {
        (Deep::List(pad), data) if pad.is_empty() => data,
        (Deep::List(pad), data) if left => {
            let mut items = vec![data];
            items.extend(pad);
            Deep::List(items)
        }
        (pad, data) => match items(data) {
            Ok(data) => {
                let mut items = vec![pad];
                items.extend(data);
                Deep::List(items)
            }
            Err(data) => Deep::List(vec![pad, data]),
        },
    }
}

fn char_count(d: &Deep) -> usize {
    match d {
        Deep::Char(_) => 1,
        Deep::Text(s) => s.chars().count(),
        Deep::List(items) => items.iter().map(char_count).sum(),
    }
}

/// The first `n` characters of `d`, flat (io_lib_format's `flat_trunc`).
fn flat_trunc(d: &Deep, n: usize) -> Deep {
    let mut text = String::new();
    flatten_into(d, &mut text);
    Deep::Text(text.chars().take(n).collect())
}

/// io_lib_format's `term/5`: `~w` text `t` in a field of width `f` and
/// precision `p` (too long: `*`s).
fn term_field(t: Deep, f: Option<usize>, p: Option<usize>, left: bool, pad: u32) -> Deep {
    let Some(f) = f.or(p) else {
        return t;
    };
    let len = char_count(&t);
    let p = len.min(p.map_or(f, |p| p.min(f)));
    if len > p {
        adjust(pad_chars('*' as u32, p), pad_chars(pad, f - p), left)
    } else {
        adjust(t, pad_chars(pad, f - len), left)
    }
}

/// io_lib_format's `string/6`: `~s` characters `s` in a field of width
/// `f` and precision `p`; `None` where OTP fails (`f < p`).
fn string_field(s: Deep, f: Option<usize>, p: Option<usize>, left: bool, pad: u32) -> Option<Deep> {
    let n = char_count(&s);
    let field = |s: Deep, f: usize, left: bool| {
        if n > f {
            flat_trunc(&s, f)
        } else {
            adjust(s, pad_chars(pad, f - n), left)
        }
    };
    Some(match (f, p) {
        (None, None) => s,
        (Some(f), None) => field(s, f, left),
        (None, Some(p)) => field(s, p, true),
        (Some(f), Some(p)) if f > p => {
            let inner = if n > p {
                flat_trunc(&s, p)
            } else {
                adjust(s, pad_chars(pad, p - n), true)
            };
            adjust(inner, pad_chars(pad, f - p), left)
        }
        (Some(f), Some(p)) if f == p => field(s, f, left),
        _ => return None,
    })
}

/// The shape of one directive whose flat characters are `text`.
fn directive_shape(heap: &Heap, d: &Directive, text: &str) -> Option<Deep> {
    // A `*` field given a negative number: leave it to the flat text.
    let width = d.width.map(|w| w.ok_or(())).transpose().ok()?;
    let precision = d.precision.map(|p| p.ok_or(())).transpose().ok()?;
    let arg = *d.args.last()?;
    let shaped = match d.control {
        's' => {
            let body = match heap.view(arg) {
                View::Atom(_) => return None,
                View::Binary(_) => chars(
                    &format::string_arg(heap, arg, true)
                        .ok()?
                        .into_iter()
                        .collect::<String>(),
                ),
                _ => as_given(heap, arg)?,
            };
            string_field(body, width, precision, d.left, d.pad)
        }
        'w' => term_shape(heap, arg, false).map(|t| term_field(t, width, precision, d.left, d.pad)),
        'p' if !d.lists && !text.contains('\n') => term_shape(heap, arg, true),
        _ => None,
    };
    let shaped = shaped?;
    flattens_to(&shaped, text).then_some(shaped)
}

/// `io_lib:format(Format, Args)`.
pub fn lib_format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    super::fmt::install_namer();
    let heap = &ctx.process.heap;
    let deep = match shape(heap, args[0], args[1]) {
        Some(deep) => deep,
        None => chars(&super::fmt::format(heap, args[0], args[1]).ok_or(BifError::Badarg)?),
    };
    ctx.ensure(words(&deep), args)?;
    Ok(build(ctx.heap(), &deep))
}

/// The whole deep list, or `None` if this module cannot split the format.
fn shape(heap: &Heap, fmt: Term, args: Term) -> Option<Deep> {
    let fmt = format::format_chars(heap, fmt).ok()?;
    let mut list = Vec::new();
    let mut t = args;
    while let View::Cons(h, tl) = heap.view(t) {
        list.push(h);
        t = tl;
    }
    if !t.is_nil() {
        return None;
    }
    let pieces = parse(&fmt, &list)?;
    let mut out = Vec::new();
    let mut done = String::new();
    for piece in pieces {
        match piece {
            Ok(c) => {
                out.push(Deep::Char(c as u32));
                done.push(c);
            }
            Err(d) => {
                let text = if matches!(d.control, 'p' | 'P') {
                    let prefix = line_prefix(&done);
                    let mut fmt = prefix.clone();
                    fmt.extend_from_slice(&d.text);
                    let all = format::format(heap, &fmt, &d.args).ok()?;
                    let skip: usize = done.rsplit('\n').next().unwrap_or("").len();
                    all[skip..].to_string()
                } else {
                    format::format(heap, &d.text, &d.args).ok()?
                };
                done.push_str(&text);
                let small = matches!(
                    d.control,
                    'b' | 'B' | 'x' | 'X' | '+' | '#' | 'c' | 'e' | 'f' | 'g' | 'n' | 'i' | '~'
                ) || (d.control == 's'
                    && matches!(heap.view(*d.args.last()?), View::Atom(_)));
                if small {
                    out.extend(text.chars().map(|c| Deep::Char(c as u32)));
                } else {
                    out.push(directive_shape(heap, &d, &text).unwrap_or_else(|| chars(&text)));
                }
            }
        }
    }
    Some(Deep::List(out))
}
