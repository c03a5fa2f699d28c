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
//! The characters always come from the flat formatter; the shape is built
//! beside them and used only when it flattens to the same characters
//! (else the directive's characters form one flat element), so a shape
//! this module does not know can never change what is printed.

use super::{BifError, BifResult, Context};
use crate::heap::Heap;
use crate::term::format;
use crate::term::view::View;
use crate::term::{Term, print};

/// A deep character list being built.
enum Deep {
    Char(u32),
    List(Vec<Deep>),
}

fn chars(s: &str) -> Deep {
    Deep::List(s.chars().map(|c| Deep::Char(c as u32)).collect())
}

fn flatten_into(d: &Deep, out: &mut String) {
    match d {
        Deep::Char(c) => out.push(char::from_u32(*c).unwrap_or('?')),
        Deep::List(items) => items.iter().for_each(|i| flatten_into(i, out)),
    }
}

/// Heap words the deep list needs: two per cons cell.
fn words(d: &Deep) -> usize {
    match d {
        Deep::Char(_) => 0,
        Deep::List(items) => items.iter().map(|i| 2 + words(i)).sum(),
    }
}

fn build(heap: &mut Heap, d: &Deep) -> Term {
    match d {
        Deep::Char(c) => Term::small(*c as i64),
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
    width: bool,
    precision: bool,
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
            width: false,
            precision: false,
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
                taken.push(args.next()?);
                return Some(true);
            }
            let from = *i;
            while fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            Some(*i > from)
        };
        d.width = field(&mut i, &mut taken, &mut args)?;
        if fmt.get(i) == Some(&'.') {
            i += 1;
            d.precision = field(&mut i, &mut taken, &mut args)?;
            if fmt.get(i) == Some(&'.') {
                i += 1;
                if fmt.get(i) == Some(&'*') {
                    taken.push(args.next()?);
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
    Some(out)
}

/// io_lib:write's nesting of `t`, or `None` where this module does not
/// know OTP's shape. `pretty`: `~p` (strings and printable binaries are
/// flat quoted text; an improper tail is spliced).
fn term_shape(heap: &Heap, t: Term, pretty: bool) -> Option<Deep> {
    let leaf = |t: Term| {
        if pretty {
            chars(&print::print(heap, t, 0, usize::MAX / 4))
        } else {
            chars(&print::write(heap, t))
        }
    };
    Some(match heap.view(t) {
        View::Cons(..) => {
            if pretty {
                let text = print::print(heap, t, 0, usize::MAX / 4);
                if text.starts_with('"') {
                    return Some(chars(&text));
                }
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
                            Deep::List(tail) if pretty => items.extend(tail),
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

/// A deep list of character codes given as a `~s` argument, as it is.
fn as_given(heap: &Heap, t: Term) -> Option<Deep> {
    match heap.view(t) {
        View::Nil => Some(Deep::List(Vec::new())),
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

/// The shape of one directive whose flat characters are `text`.
fn directive_shape(heap: &Heap, d: &Directive, text: &str) -> Option<Deep> {
    let shaped = match d.control {
        's' => {
            let arg = *d.args.last()?;
            match heap.view(arg) {
                View::Atom(_) => return None,
                _ if !d.width && !d.precision => match heap.view(arg) {
                    View::Binary(_) => Some(chars(text)),
                    _ => as_given(heap, arg),
                },
                _ if d.width && !d.precision => {
                    // `[Pad | S]` right-adjusted, `[S | Pad...]` left-adjusted.
                    let body = format::chardata(heap, arg, true).ok()?.len();
                    let all: Vec<char> = text.chars().collect();
                    let pad = all.len().checked_sub(body)?;
                    if pad == 0 {
                        return Some(chars(text));
                    }
                    let one = |cs: &[char]| {
                        Deep::List(cs.iter().map(|&c| Deep::Char(c as u32)).collect())
                    };
                    let mut parts = Vec::new();
                    if d.left {
                        parts.push(one(&all[..body]));
                        parts.extend(all[body..].iter().map(|&c| Deep::Char(c as u32)));
                    } else {
                        parts.push(one(&all[..pad]));
                        parts.extend(all[pad..].iter().map(|&c| Deep::Char(c as u32)));
                    }
                    Some(Deep::List(parts))
                }
                _ => Some(chars(text)),
            }
        }
        'w' => term_shape(heap, d.args[0], false),
        'p' if !d.lists && !text.contains('\n') => term_shape(heap, d.args[0], true),
        _ => None,
    };
    let shaped = shaped?;
    let mut check = String::new();
    flatten_into(&shaped, &mut check);
    (check == text).then_some(shaped)
}

/// `io_lib:format(Format, Args)`.
pub fn lib_format_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let flat = super::fmt::format(heap, args[0], args[1]).ok_or(BifError::Badarg)?;
    let deep = shape(heap, args[0], args[1]).unwrap_or_else(|| chars(&flat));
    let mut check = String::new();
    flatten_into(&deep, &mut check);
    let deep = if check == flat { deep } else { chars(&flat) };
    ctx.ensure(words(&deep), args)?;
    Ok(build(ctx.heap(), &deep))
}

/// The whole deep list, or `None` if this module cannot split the format.
fn shape(heap: &Heap, fmt: Term, args: Term) -> Option<Deep> {
    let fmt: Vec<char> = match heap.view(fmt) {
        View::Binary(bytes) => bytes.iter().map(|&b| b as char).collect(),
        _ => format::chardata(heap, fmt, true).ok()?,
    };
    let mut list = Vec::new();
    let mut t = args;
    while let View::Cons(h, tl) = heap.view(t) {
        list.push(h);
        t = tl;
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
