//! Writing terms and io_lib:format, as the BIFs need them: a bridge to
//! the printer of `term` where it exists, with a small flat writer of our
//! own meanwhile.

use super::erlang::{chardata_bytes, list_elements};
use crate::heap::Heap;
use crate::term::view::View;
use crate::term::{Atom, Term};

/// `~w`
pub fn write(heap: &Heap, t: Term) -> String {
    let mut out = String::new();
    write_flat(&mut out, heap, t, false);
    out
}

/// `~p`, flat (no line breaking yet).
pub fn print(heap: &Heap, t: Term) -> String {
    let mut out = String::new();
    write_flat(&mut out, heap, t, true);
    out
}

fn atom_text(a: Atom) -> String {
    let name = a.name();
    let bare = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '@')
        && !matches!(
            name,
            "after"
                | "and"
                | "andalso"
                | "band"
                | "begin"
                | "bnot"
                | "bor"
                | "bsl"
                | "bsr"
                | "bxor"
                | "case"
                | "catch"
                | "cond"
                | "div"
                | "end"
                | "fun"
                | "if"
                | "let"
                | "not"
                | "of"
                | "or"
                | "orelse"
                | "receive"
                | "rem"
                | "try"
                | "when"
                | "xor"
        );
    if bare {
        name.to_string()
    } else {
        let mut s = String::from("'");
        for c in name.chars() {
            match c {
                '\'' => s.push_str("\\'"),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                _ => s.push(c),
            }
        }
        s.push('\'');
        s
    }
}

/// Erlang's shortest float that reads back: the shorter of the plain
/// and the scientific form (`0.1`, `1.0e10`, `1.5e-7`); plain on a tie.
pub fn float_text(f: f64) -> String {
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, digits) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m.replace('.', "")),
        None => (false, mantissa.replace('.', "")),
    };
    let sign = if neg { "-" } else { "" };
    let n = digits.len() as i32;
    let plain = if exp >= 0 {
        let int_len = exp + 1;
        if n <= int_len {
            format!("{}{}.0", digits, "0".repeat((int_len - n) as usize))
        } else {
            format!(
                "{}.{}",
                &digits[..int_len as usize],
                &digits[int_len as usize..]
            )
        }
    } else {
        format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    };
    let frac = if digits.len() > 1 { &digits[1..] } else { "0" };
    let scientific = format!("{}.{}e{}", &digits[..1], frac, exp);
    if scientific.len() < plain.len() {
        format!("{sign}{scientific}")
    } else {
        format!("{sign}{plain}")
    }
}

fn printable(heap: &Heap, t: Term) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    let mut t = t;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        let c = h.as_small()?;
        let ok = (32..=126).contains(&c) || (160..=255).contains(&c) || matches!(c, 8..=13 | 27);
        if !ok {
            return None;
        }
        out.push(c as u32);
        t = tail;
    }
    if t.is_nil() && !out.is_empty() {
        Some(out)
    } else {
        None
    }
}

fn string_text(chars: &[u32]) -> String {
    let mut s = String::from("\"");
    for &c in chars {
        match c {
            34 => s.push_str("\\\""),
            92 => s.push_str("\\\\"),
            10 => s.push_str("\\n"),
            9 => s.push_str("\\t"),
            13 => s.push_str("\\r"),
            8 => s.push_str("\\b"),
            11 => s.push_str("\\v"),
            12 => s.push_str("\\f"),
            27 => s.push_str("\\e"),
            _ => s.push(char::from_u32(c).unwrap_or('?')),
        }
    }
    s.push('"');
    s
}

enum Item {
    Term(Term),
    Text(&'static str),
    /// The rest of a list after its first element.
    ListTail(Term),
}

fn write_flat(out: &mut String, heap: &Heap, t: Term, pretty: bool) {
    let mut stack = vec![Item::Term(t)];
    while let Some(item) = stack.pop() {
        let t = match item {
            Item::Text(s) => {
                out.push_str(s);
                continue;
            }
            Item::ListTail(rest) => {
                if rest.is_nil() {
                    out.push(']');
                } else if rest.is_cons() {
                    out.push(',');
                    let (h, tl) = heap.cons_parts(rest);
                    stack.push(Item::ListTail(tl));
                    stack.push(Item::Term(h));
                } else {
                    out.push('|');
                    stack.push(Item::Text("]"));
                    stack.push(Item::Term(rest));
                }
                continue;
            }
            Item::Term(t) => t,
        };
        match heap.view(t) {
            View::Small(i) => out.push_str(&i.to_string()),
            View::Big(b) => out.push_str(&b.to_bigint().to_string()),
            View::Float(f) => out.push_str(&float_text(f)),
            View::Atom(a) => out.push_str(&atom_text(a)),
            View::Nil => out.push_str("[]"),
            View::Pid(p) => out.push_str(&format!("<0.{}.0>", p + 80)),
            View::Ref(r) => out.push_str(&format!("#Ref<0.0.0.{r}>")),
            View::Fun { index, .. } => out.push_str(&format!("#Fun<erl_eval.{index}.0>")),
            View::ExternalFun {
                module,
                function,
                arity,
            } => out.push_str(&format!(
                "fun {}:{}/{}",
                atom_text(module),
                atom_text(function),
                arity
            )),
            View::Binary(bytes) => {
                let text = bytes
                    .iter()
                    .all(|&b| (32..=126).contains(&b) || matches!(b, 9 | 10));
                if pretty && text && !bytes.is_empty() {
                    let chars: Vec<u32> = bytes.iter().map(|&b| b as u32).collect();
                    out.push_str(&format!("<<{}>>", string_text(&chars)));
                } else {
                    let parts: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
                    out.push_str(&format!("<<{}>>", parts.join(",")));
                }
            }
            View::Cons(h, tl) => {
                if pretty && let Some(chars) = printable(heap, t) {
                    out.push_str(&string_text(&chars));
                    continue;
                }
                out.push('[');
                stack.push(Item::ListTail(tl));
                stack.push(Item::Term(h));
            }
            View::Tuple(elements) => {
                out.push('{');
                stack.push(Item::Text("}"));
                for (i, &e) in elements.iter().enumerate().rev() {
                    stack.push(Item::Term(e));
                    if i > 0 {
                        stack.push(Item::Text(","));
                    }
                }
            }
            View::Map { keys, values } => {
                out.push_str("#{");
                stack.push(Item::Text("}"));
                for i in (0..keys.len()).rev() {
                    stack.push(Item::Term(values[i]));
                    stack.push(Item::Text(" => "));
                    stack.push(Item::Term(keys[i]));
                    if i > 0 {
                        stack.push(Item::Text(","));
                    }
                }
            }
            View::NotAValue => out.push_str("<?>"),
        }
    }
}

/// `io_lib:format(Format, Args)` flattened to a string; `None` is badarg.
pub fn format(heap: &Heap, format: Term, args: Term) -> Option<String> {
    let fmt: Vec<char> = if let Some(a) = format.as_atom() {
        a.name().chars().collect()
    } else {
        let mut bytes = Vec::new();
        chardata_bytes(heap, format, &mut bytes)?;
        String::from_utf8_lossy(&bytes).chars().collect()
    };
    let args = list_elements(heap, args)?;
    let mut args = args.into_iter();
    let mut out = String::new();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != '~' {
            out.push(c);
            continue;
        }
        // ~F.P.PadModC
        let mut field: Option<i64> = None;
        let mut precision: Option<i64> = None;
        let mut pad = ' ';
        let mut left = false;
        if fmt.get(i) == Some(&'-') {
            left = true;
            i += 1;
        }
        let read_num =
            |i: &mut usize, args: &mut std::vec::IntoIter<Term>| -> Option<Option<i64>> {
                if fmt.get(*i) == Some(&'*') {
                    *i += 1;
                    return Some(Some(args.next()?.as_small()?));
                }
                let start = *i;
                while fmt.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                    *i += 1;
                }
                if *i == start {
                    Some(None)
                } else {
                    Some(fmt[start..*i].iter().collect::<String>().parse().ok())
                }
            };
        field = read_num(&mut i, &mut args)?.or(field);
        if fmt.get(i) == Some(&'.') {
            i += 1;
            precision = read_num(&mut i, &mut args)?;
            if fmt.get(i) == Some(&'.') {
                i += 1;
                pad = *fmt.get(i)?;
                i += 1;
            }
        }
        while fmt.get(i) == Some(&'t') || fmt.get(i) == Some(&'l') {
            i += 1;
        }
        let directive = *fmt.get(i)?;
        i += 1;
        let text = match directive {
            '~' => "~".to_string(),
            'n' => "\n".to_string(),
            'p' => print(heap, args.next()?),
            'w' => write(heap, args.next()?),
            's' => {
                let a = args.next()?;
                let s = super::erlang::text_of(heap, a)?;
                match precision {
                    Some(p) => s.chars().take(p as usize).collect(),
                    None => s,
                }
            }
            'c' => {
                let ch = char::from_u32(args.next()?.as_small()? as u32)?;
                let n = precision.or(field).unwrap_or(1).max(0) as usize;
                let s: String = std::iter::repeat_n(ch, n).collect();
                if field.is_some() && precision.is_none() {
                    out.push_str(&s);
                    continue;
                }
                s
            }
            'd' | 'b' | 'B' | 'x' | 'X' | '#' | '+' => {
                let a = args.next()?;
                let v = match heap.view(a) {
                    View::Small(i) => num_bigint::BigInt::from(i),
                    View::Big(b) => b.to_bigint(),
                    _ => return None,
                };
                let base = if directive == 'd' {
                    10
                } else {
                    precision.unwrap_or(10) as u32
                };
                precision = None;
                let mut s = v.to_str_radix(base);
                if directive != 'b' && directive != 'x' {
                    s = s.to_uppercase();
                }
                if directive == 'x' || directive == 'X' {
                    let prefix = super::erlang::text_of(heap, args.next()?)?;
                    s = match s.strip_prefix('-') {
                        Some(rest) => format!("-{prefix}{rest}"),
                        None => format!("{prefix}{s}"),
                    };
                }
                s
            }
            'i' => {
                args.next()?;
                continue;
            }
            'f' | 'e' | 'g' => {
                let f = heap.float_value(args.next()?)?;
                let p = precision.unwrap_or(6).max(0) as usize;
                precision = None;
                match directive {
                    'f' => format!("{f:.p$}"),
                    'e' => {
                        let s = format!("{f:.prec$e}", prec = p.saturating_sub(1));
                        match s.split_once('e') {
                            Some((m, e)) => {
                                let (sign, e) = match e.strip_prefix('-') {
                                    Some(e) => ("-", e),
                                    None => ("+", e),
                                };
                                format!("{m}e{sign}{e}")
                            }
                            None => s,
                        }
                    }
                    _ => {
                        let a = f.abs();
                        if a == 0.0 || (0.1..10f64.powi(p as i32)).contains(&a) {
                            let digits = if a == 0.0 {
                                p - 1
                            } else {
                                p - 1 - a.log10().floor() as usize
                            };
                            format!("{f:.digits$}")
                        } else {
                            format!("{f:.prec$e}", prec = p.saturating_sub(1))
                        }
                    }
                }
            }
            _ => return None,
        };
        let text = match precision {
            Some(p) if matches!(directive, 'p' | 'w') => {
                text.chars().take(p.max(0) as usize).collect()
            }
            _ => text,
        };
        match field {
            Some(w) => {
                let w = w.max(0) as usize;
                let n = text.chars().count();
                if n > w
                    && matches!(
                        directive,
                        'p' | 'w' | 's' | 'd' | 'f' | 'e' | 'g' | 'b' | 'B' | 'x' | 'X'
                    )
                {
                    if matches!(directive, 'p' | 'w' | 's') {
                        out.extend(text.chars().take(w));
                    } else {
                        out.extend(std::iter::repeat_n('*', w));
                    }
                } else if left {
                    out.push_str(&text);
                    out.extend(std::iter::repeat_n(pad, w - n.min(w)));
                } else {
                    out.extend(std::iter::repeat_n(pad, w - n.min(w)));
                    out.push_str(&text);
                }
            }
            None => out.push_str(&text),
        }
    }
    if args.next().is_some() {
        return None;
    }
    Some(out)
}
