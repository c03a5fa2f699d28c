//! The io_lib:format engine: `~` directives with field width, precision,
//! padding and modifiers, as OTP 25 formats them.
//!
//! A directive is `~[-][F][.[P][.Pad]][t|l]C`, where F, P (and the pad)
//! may be `*`, taking an integer argument. F is the field width (`-`
//! negates it and must be followed by digits or `*`; a negative width
//! left-adjusts), P the precision, Pad the padding character (default
//! space). A `~s` or `~c` field narrower than its precision, a `~p` or
//! `~n` with a negative width, are errors, as in OTP. The controls:
//!
//! ```text
//!   ~w ~p        a term (~p: F is the line length, not a field width)
//!   ~W ~P        the same with a depth argument
//!   ~s           a string: char list, iolist, binary or atom
//!   ~c           a character, repeated (~5c) or padded (~5.2c)
//!   ~e ~f ~g     floats: scientific, fixed, general (P defaults to 6)
//!   ~b ~B        an integer in base P (default 10), lower/upper case
//!   ~x ~X        the same with a prefix argument
//!   ~# ~+        the same with Erlang's base prefix (16#FF, 16#ff)
//!   ~i           skips an argument
//!   ~n ~~        a newline, a tilde
//! ```
//!
//! Wrong argument types or counts are `badarg` (`FormatError`). The
//! column where `~p` starts counts characters since the last newline,
//! tabs to the next multiple of 8, as io_lib_format does.

use super::print;
use super::view::View;
use super::{Atom, Term};
use crate::heap::Heap;

/// The largest field width or precision accepted (16M characters);
/// larger ones are `badarg` instead of an allocation that could abort.
pub const MAX_FIELD: usize = 1 << 24;

/// A format call that Erlang rejects with `badarg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError;

type Result<T> = std::result::Result<T, FormatError>;

/// Formats `fmt` (a char list, binary or atom) with `args` (a proper list).
/// The characters of a format term: an atom, a binary or a flat string;
/// unlike a `~s` argument, never a deep list.
pub fn format_chars(heap: &Heap, fmt: Term) -> Result<Vec<char>> {
    let mut t = fmt;
    while let View::Cons(head, tail) = heap.view(t) {
        if head.as_small().is_none() {
            return Err(FormatError);
        }
        t = tail;
    }
    // A binary format is read byte by byte, as io_lib's binary_to_list.
    Ok(match heap.view(fmt) {
        View::Binary(bytes) => bytes.iter().map(|&b| b as char).collect(),
        _ => chardata(heap, fmt, true)?,
    })
}

pub fn format_term(heap: &Heap, fmt: Term, args: Term) -> Result<String> {
    let fmt = format_chars(heap, fmt)?;
    let mut list = Vec::new();
    let mut t = args;
    while let View::Cons(head, tail) = heap.view(t) {
        list.push(head);
        t = tail;
    }
    if !t.is_nil() {
        return Err(FormatError);
    }
    format(heap, &fmt, &list)
}

/// Formats `fmt` with `args`.
pub fn format(heap: &Heap, fmt: &[char], args: &[Term]) -> Result<String> {
    let mut out = String::new();
    let mut args = args.iter().copied();
    let mut next = || args.next().ok_or(FormatError);
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != '~' {
            out.push(c);
            continue;
        }
        let mut spec = Spec {
            width: None,
            left: false,
            precision: None,
            pad: ' ',
            unicode: false,
            lists: false,
        };
        // Field width F: `-` negates the number or `*` argument after it
        // (there must be one), and a negative F left-adjusts, so `~-*s`
        // of -5 is right-adjusted, as in OTP.
        let minus = fmt.get(i) == Some(&'-');
        if minus {
            i += 1;
        }
        let width = if fmt.get(i) == Some(&'*') {
            i += 1;
            Some(small(next()?)?)
        } else {
            digits(fmt, &mut i).map(|n| n.min(i64::MAX as usize) as i64)
        };
        match width {
            Some(w) => {
                let f = if minus { -w } else { w };
                spec.left = f < 0;
                spec.width = Some(f.unsigned_abs() as usize);
            }
            None if minus => return Err(FormatError),
            None => {}
        }
        // Precision and padding.
        if fmt.get(i) == Some(&'.') {
            i += 1;
            if fmt.get(i) == Some(&'*') {
                i += 1;
                spec.precision = Some(usize::try_from(small(next()?)?).map_err(|_| FormatError)?);
            } else {
                spec.precision = digits(fmt, &mut i);
            }
            if fmt.get(i) == Some(&'.') {
                i += 1;
                match fmt.get(i) {
                    Some('*') => {
                        let c = small(next()?)?;
                        spec.pad = char::from_u32(c as u32).ok_or(FormatError)?;
                    }
                    Some(&c) => spec.pad = c,
                    None => return Err(FormatError),
                }
                i += 1;
            }
        }
        // Modifiers.
        while let Some(&m) = fmt.get(i) {
            match m {
                't' => spec.unicode = true,
                'l' => spec.lists = true,
                _ => break,
            }
            i += 1;
        }
        // A field of millions of characters is a mistake, not output:
        // refuse it rather than allocate it.
        if spec.width.unwrap_or(0) > MAX_FIELD || spec.precision.unwrap_or(0) > MAX_FIELD {
            return Err(FormatError);
        }
        let control = *fmt.get(i).ok_or(FormatError)?;
        i += 1;
        // A string or character field narrower than its precision is
        // an error, as is a left-adjusted newline.
        if matches!(control, 's' | 'c')
            && let (Some(w), Some(p)) = (spec.width, spec.precision)
            && w < p
        {
            return Err(FormatError);
        }
        match control {
            'n' if spec.left => return Err(FormatError),
            'n' => out.extend(std::iter::repeat_n('\n', spec.width.unwrap_or(1))),
            '~' => out.extend(std::iter::repeat_n('~', spec.width.unwrap_or(1))),
            'i' => {
                next()?;
            }
            'w' | 'W' => {
                let t = next()?;
                let text = if control == 'W' {
                    let depth = small(next()?)?;
                    print::write_depth(heap, t, depth)
                } else {
                    print::write(heap, t)
                };
                out.push_str(&spec.term(text));
            }
            'p' | 'P' => {
                if spec.left {
                    return Err(FormatError);
                }
                let t = next()?;
                let depth = if control == 'P' { small(next()?)? } else { -1 };
                // A precision is the column the term starts in (1 the
                // first), as OTP's io_lib_format gives io_lib_pretty.
                let column = match spec.precision {
                    Some(p) => p.saturating_sub(1),
                    None => column_of(&out),
                };
                let line_length = spec.width.unwrap_or(80);
                let strings = match (spec.lists, spec.unicode) {
                    (true, _) => print::Strings::Off,
                    (false, false) => print::Strings::Latin1,
                    (false, true) => print::Strings::Unicode,
                };
                let text = print::print_with(heap, t, column, line_length, depth, strings);
                out.push_str(&text);
            }
            's' => {
                let chars = string_arg(heap, next()?, spec.unicode)?;
                out.push_str(&spec.string(chars));
            }
            'c' => {
                let arg = next()?;
                let code = match arg.as_small() {
                    Some(c) if spec.unicode => c,
                    Some(c) => c & 255,
                    // A bignum's low byte, as Erlang's `band 255`.
                    None if !spec.unicode => {
                        let n = heap.to_bigint(arg).ok_or(FormatError)?;
                        i64::try_from(n & num_bigint::BigInt::from(255)).map_err(|_| FormatError)?
                    }
                    None => return Err(FormatError),
                };
                let c = char::from_u32(u32::try_from(code).map_err(|_| FormatError)?)
                    .ok_or(FormatError)?;
                let count = spec.precision.or(spec.width).unwrap_or(1);
                let s: String = std::iter::repeat_n(c, count).collect();
                out.push_str(&spec.adjust(s));
            }
            'e' | 'f' | 'g' => {
                let f = heap.float_value(next()?).ok_or(FormatError)?;
                let p = spec.precision.unwrap_or(6);
                let text = match control {
                    'e' => format_e(f, p)?,
                    'f' => format_f(f, p)?,
                    _ => format_g(f, p)?,
                };
                out.push_str(&spec.number(text));
            }
            'b' | 'B' | 'x' | 'X' | '#' | '+' => {
                let n = heap.to_bigint(next()?).ok_or(FormatError)?;
                let base = spec.precision.unwrap_or(10);
                if !(2..=36).contains(&base) {
                    return Err(FormatError);
                }
                let lower = matches!(control, 'b' | 'x' | '+');
                let mut digits = n.magnitude().to_str_radix(base as u32);
                if !lower {
                    digits = digits.to_uppercase();
                }
                let prefix = match control {
                    'x' | 'X' => prefix(heap, next()?)?,
                    '#' | '+' => format!("{base}#"),
                    _ => String::new(),
                };
                let sign = if n.sign() == num_bigint::Sign::Minus {
                    "-"
                } else {
                    ""
                };
                out.push_str(&spec.number(format!("{sign}{prefix}{digits}")));
            }
            _ => return Err(FormatError),
        }
    }
    if next().is_ok() {
        return Err(FormatError);
    }
    Ok(out)
}

/// The parsed options of one directive.
#[derive(Clone, Copy)]
struct Spec {
    width: Option<usize>,
    left: bool,
    precision: Option<usize>,
    pad: char,
    unicode: bool,
    lists: bool,
}

impl Spec {
    /// Pads `s` to the field width (it fits).
    fn adjust(&self, s: String) -> String {
        let len = s.chars().count();
        match self.width {
            Some(w) if w > len => {
                let padding: String = std::iter::repeat_n(self.pad, w - len).collect();
                if self.left {
                    s + &padding
                } else {
                    padding + &s
                }
            }
            _ => s,
        }
    }

    /// A term's text in the field: padded, or all `*` if too long. For
    /// `~w` the precision is a limit too (`~.3w` of `abcdef` is `***`).
    fn term(&self, s: String) -> String {
        let len = s.chars().count();
        let Some(width) = self.width.or(self.precision) else {
            return s;
        };
        let limit = len.min(self.precision.map_or(width, |p| p.min(width)));
        if len > limit {
            let stars = "*".repeat(limit);
            let inner = Spec {
                width: Some(width),
                ..*self
            };
            inner.adjust(stars)
        } else {
            let inner = Spec {
                width: Some(width),
                ..*self
            };
            inner.adjust(s)
        }
    }

    /// Numbers use only the width: their precision is a base or digits.
    fn number(&self, s: String) -> String {
        Spec {
            precision: None,
            ..*self
        }
        .term(s)
    }

    /// A string in the field: cut to the precision, then to the width.
    fn string(&self, chars: Vec<char>) -> String {
        let mut chars = chars;
        if let Some(p) = self.precision {
            chars.truncate(p);
        }
        // The precision is a field too: short strings are padded to it,
        // always on the right (`~10.4.*s` of "ab" is "------ab--"), but
        // for a field as wide as it, which adjusts as any (`~5.5s`).
        if let Some(p) = self.precision
            && self.width != Some(p)
        {
            let inner = Spec {
                width: Some(p),
                left: true,
                ..*self
            };
            chars = inner.adjust(chars.into_iter().collect()).chars().collect();
        }
        if let Some(w) = self.width {
            chars.truncate(w);
        }
        self.adjust(chars.into_iter().collect())
    }
}

fn digits(fmt: &[char], i: &mut usize) -> Option<usize> {
    let start = *i;
    let mut n: usize = 0;
    while let Some(d) = fmt.get(*i).and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize);
        *i += 1;
    }
    (*i > start).then_some(n)
}

fn small(t: Term) -> Result<i64> {
    t.as_small().ok_or(FormatError)
}

/// The prefix of `~x`/`~X`: an atom or a (deep) list of characters.
fn prefix(heap: &Heap, t: Term) -> Result<String> {
    if let Some(a) = t.as_atom() {
        return Ok(a.name().to_string());
    }
    let mut out = String::new();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(head, tail) => {
                stack.push(tail);
                match head.as_small() {
                    Some(c) => out.push(
                        char::from_u32(u32::try_from(c).map_err(|_| FormatError)?)
                            .ok_or(FormatError)?,
                    ),
                    None if head.is_cons() || head.is_nil() => stack.push(head),
                    None => return Err(FormatError),
                }
            }
            _ => return Err(FormatError),
        }
    }
    Ok(out)
}

/// The column after `out`, as io_lib_format counts it.
fn column_of(out: &str) -> usize {
    let line = out.rsplit('\n').next().unwrap_or("");
    line.chars().fold(0, |col, c| {
        if c == '\t' {
            (col + 8) / 8 * 8
        } else {
            col + 1
        }
    })
}

/// The characters of chardata: a (deep) list of characters, binaries and
/// (at top level) an atom. Without `unicode`, list characters must be
/// bytes and binaries are read as latin1; with it, binaries are UTF-8.
pub fn chardata(heap: &Heap, t: Term, unicode: bool) -> Result<Vec<char>> {
    chardata_with(heap, t, unicode, false)
}

/// The characters of a `~s`/`~ts` argument: `chardata`, except that under
/// `~ts` a binary that is not valid UTF-8 is taken byte by byte, as latin1
/// (OTP's io_lib_format falls back to `binary_to_list/1` for it).
pub fn string_arg(heap: &Heap, t: Term, unicode: bool) -> Result<Vec<char>> {
    chardata_with(heap, t, unicode, true)
}

fn chardata_with(heap: &Heap, t: Term, unicode: bool, lenient: bool) -> Result<Vec<char>> {
    if let Some(a) = t.as_atom() {
        return Ok(Atom::name(a).chars().collect());
    }
    let top = if unicode { 0x10ffff } else { 255 };
    // A flat string, the usual format or argument: one pass, no stack.
    let mut out = Vec::new();
    let mut rest = t;
    while rest.is_cons() {
        let (head, tail) = heap.cons_parts(rest);
        match head.as_small().filter(|c| (0..=top).contains(c)) {
            Some(c) => out.push(char::from_u32(c as u32).ok_or(FormatError)?),
            None => break,
        }
        rest = tail;
    }
    if rest.is_nil() {
        return Ok(out);
    }
    // Deep lists and binaries: walked again from the start.
    out.clear();
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Cons(head, tail) => {
                stack.push(tail);
                match heap.view(head) {
                    View::Small(c) => {
                        if !(0..=top).contains(&c) {
                            return Err(FormatError);
                        }
                        out.push(char::from_u32(c as u32).ok_or(FormatError)?);
                    }
                    View::Cons(..) | View::Nil | View::Binary(_) => stack.push(head),
                    _ => return Err(FormatError),
                }
            }
            View::Binary(bytes) => {
                if unicode {
                    match std::str::from_utf8(bytes) {
                        Ok(text) => out.extend(text.chars()),
                        Err(_) if lenient => out.extend(bytes.iter().map(|&b| b as char)),
                        Err(_) => return Err(FormatError),
                    }
                } else {
                    out.extend(bytes.iter().map(|&b| b as char));
                }
            }
            _ => return Err(FormatError),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------
// Floats: from the exact decimal value, rounding halves away from zero
// (OTP's rule; C's printf rounds them to even).

/// The exact decimal digits of `|f|` and the position of the decimal
/// point (digits before it).
fn exact_digits(f: f64) -> (Vec<u8>, i64) {
    let s = format!("{:.1100}", f.abs());
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    let mut point = int.len() as i64;
    // Drop leading zeros, keeping the point in place.
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    point -= lead as i64;
    while digits.last() == Some(&0) {
        digits.pop();
    }
    (digits, point)
}

/// OTP computes fixed notation from 21 significant digits; the rest
/// print as zeros (`~f` of 1.0e100 is 10000000000000000159000...0.0).
const FIXED_DIGITS: usize = 21;

/// Rounds `digits` to `keep` digits, halves away from zero; returns the
/// digits (`keep` of them, or `keep + 1` when a carry added a leading 1)
/// and whether that happened.
fn round_digits(digits: &[u8], keep: usize) -> (Vec<u8>, bool) {
    let mut kept: Vec<u8> = digits.iter().copied().take(keep).collect();
    kept.resize(keep, 0);
    if digits.get(keep).is_some_and(|&d| d >= 5) {
        let mut i = keep;
        loop {
            if i == 0 {
                // All nines: one digit more (the caller shifts the point).
                kept.insert(0, 1);
                return (kept, true);
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    (kept, false)
}

fn sign(f: f64) -> &'static str {
    if f.is_sign_negative() { "-" } else { "" }
}

fn text(digits: &[u8]) -> String {
    digits.iter().map(|d| (b'0' + d) as char).collect()
}

/// `~.Pe`: P significant digits, `d.ddde±x`.
pub fn format_e(f: f64, p: usize) -> Result<String> {
    if p < 2 {
        return Err(FormatError);
    }
    let (digits, point) = exact_digits(f);
    if digits.is_empty() {
        return Ok(format!("{}0.{}e+0", sign(f), "0".repeat(p - 1)));
    }
    let (rounded, carry) = round_digits(&digits, p);
    let exp = point - 1 + carry as i64;
    let exp = if exp < 0 {
        format!("-{}", -exp)
    } else {
        format!("+{exp}")
    };
    Ok(format!(
        "{}{}.{}e{exp}",
        sign(f),
        rounded[0],
        text(&rounded[1..p])
    ))
}

/// `~.Pf`: P digits after the point.
pub fn format_f(f: f64, p: usize) -> Result<String> {
    if p < 1 {
        return Err(FormatError);
    }
    let (digits, mut point) = exact_digits(f);
    let digits = if digits.len() > FIXED_DIGITS {
        let (rounded, carry) = round_digits(&digits, FIXED_DIGITS);
        point += carry as i64;
        rounded
    } else {
        digits
    };
    // Digits of the integer part and P fraction digits, as one number.
    let keep = point + p as i64;
    let (all, carry) = if keep < 0 {
        (vec![0; p], false)
    } else if digits.is_empty() {
        (Vec::new(), false)
    } else {
        round_digits(&digits, keep as usize)
    };
    let int_len = point + carry as i64;
    let mut all = all;
    // Pad on the left so there is at least one integer digit.
    let total_int = int_len.max(1) as usize;
    while all.len() < total_int + p {
        all.insert(0, 0);
    }
    let (int, frac) = all.split_at(all.len() - p);
    Ok(format!("{}{}.{}", sign(f), text(int), text(frac)))
}

/// `~.Pg`: `~f` with P significant digits for 0.1 <= |f| < 10000, else `~e`.
pub fn format_g(f: f64, p: usize) -> Result<String> {
    let a = f.abs();
    let e: i64 = if a < 0.1 {
        -2
    } else if a < 1.0 {
        -1
    } else if a < 10.0 {
        0
    } else if a < 100.0 {
        1
    } else if a < 1000.0 {
        2
    } else if a < 10000.0 {
        3
    } else {
        i64::MAX
    };
    let p = p as i64;
    if (p <= 1 && e == -1) || (p - 1 > e && e >= -1) {
        format_f(f, (p - 1 - e) as usize)
    } else {
        format_e(f, (p as usize).max(2))
    }
}

/// `float_to_list(F, [{scientific, D}])` (and `float_to_list(F)`, which
/// is D = 20): D digits after the point and a two-digit exponent, as C's
/// `%.De`: `1.00000000000000005551e-01`.
pub fn float_to_list_scientific(f: f64, decimals: usize) -> String {
    let text = format_e(f, decimals + 1).unwrap_or_default();
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "+0"));
    let (sign, digits) = exp.split_at(1);
    format!("{mantissa}e{sign}{digits:0>2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_list_writes_like_otp() {
        assert_eq!(
            float_to_list_scientific(0.1, 20),
            "1.00000000000000005551e-01"
        );
        assert_eq!(
            float_to_list_scientific(1.0e10, 20),
            "1.00000000000000000000e+10"
        );
        assert_eq!(
            float_to_list_scientific(-2.5, 20),
            "-2.50000000000000000000e+00"
        );
        assert_eq!(
            float_to_list_scientific(1.0e-300, 20),
            "1.00000000000000002506e-300"
        );
        assert_eq!(float_to_list_scientific(123.456, 3), "1.235e+02");
        assert_eq!(format_f(0.0005, 3).unwrap(), "0.001");
        assert_eq!(format_f(2.0005, 3).unwrap(), "2.001");
    }
}
