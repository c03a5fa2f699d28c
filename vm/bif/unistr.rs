//! Unicode text for stdlib/string.act: full case mapping (`ß` uppercases
//! to `SS`, Greek and Cyrillic change case) and grapheme clusters, as the
//! hidden `'$string'` BIFs; and `binary_to_list/3`, `binary_to_float/1`.
//!
//! OTP's string module works on grapheme clusters and Unicode case
//! tables; these give stdlib/string.act the same answers without an act
//! port of those tables.

use super::{BifError, BifResult, Context};
use crate::heap::Heap;
use crate::term::Term;
use unicode_segmentation::UnicodeSegmentation;

/// The code points of a proper list of integers, or `None`.
fn points(heap: &Heap, t: Term) -> Option<Vec<char>> {
    let mut out = Vec::new();
    let mut t = t;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        out.push(char::from_u32(u32::try_from(h.as_small()?).ok()?)?);
        t = tail;
    }
    t.is_nil().then_some(out)
}

/// The integers of a proper list of small integers, or `None`.
fn integers(heap: &Heap, t: Term) -> Option<Vec<i64>> {
    let mut out = Vec::new();
    let mut t = t;
    while t.is_cons() {
        let (h, tail) = heap.cons_parts(t);
        out.push(h.as_small()?);
        t = tail;
    }
    t.is_nil().then_some(out)
}

/// A flat list of the characters `map` gives for each input character;
/// an integer that is no character passes as it is, as in OTP.
fn map_chars<I: Iterator<Item = char>>(
    ctx: &mut Context,
    args: &mut [Term],
    map: impl Fn(char) -> I,
) -> BifResult {
    let input = integers(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let out: Vec<Term> = input
        .into_iter()
        .flat_map(|n| match u32::try_from(n).ok().and_then(char::from_u32) {
            Some(c) => map(c).map(|c| c as i64).collect::<Vec<_>>(),
            None => vec![n],
        })
        .map(Term::small)
        .collect();
    ctx.ensure(2 * out.len() + 2, args)?;
    Ok(ctx.heap().list(&out))
}

pub fn upper_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    map_chars(ctx, args, char::to_uppercase)
}

pub fn lower_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    map_chars(ctx, args, char::to_lowercase)
}

/// Case folding: lowercase of the uppercase, which folds `ß` to "ss" and
/// final sigma to sigma as Unicode's full folding does. Where the folding
/// table says otherwise: dotless `ı` stays itself, capital `ẞ` is "ss" as
/// `ß` is, and Cherokee folds to its uppercase letters.
fn fold(c: char) -> Vec<char> {
    let cherokee = match c as u32 {
        0x13A0..=0x13F5 => Some(c as u32),
        0x13F8..=0x13FD => Some(c as u32 - 8),
        0xAB70..=0xABBF => Some(c as u32 - 0xAB70 + 0x13A0),
        _ => None,
    };
    if let Some(u) = cherokee.and_then(char::from_u32) {
        return vec![u];
    }
    match c {
        '\u{131}' => vec![c],
        '\u{1E9E}' => vec!['s', 's'],
        _ => c.to_uppercase().flat_map(char::to_lowercase).collect(),
    }
}

pub fn fold_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    map_chars(ctx, args, |c| fold(c).into_iter())
}

/// The titlecase of one character: the digraph letters have their own
/// titlecase form; otherwise the uppercase, with any letters after the
/// first lowercased (`ß` -> "Ss", `ﬁ` -> "Fi").
fn title(c: char) -> Vec<char> {
    let digraph = match c as u32 {
        0x01C4..=0x01C6 => Some(0x01C5),
        0x01C7..=0x01C9 => Some(0x01C8),
        0x01CA..=0x01CC => Some(0x01CB),
        0x01F1..=0x01F3 => Some(0x01F2),
        _ => None,
    };
    if let Some(t) = digraph.and_then(char::from_u32) {
        return vec![t];
    }
    match c as u32 {
        // Georgian Mkhedruli letters are their own titlecase.
        0x10D0..=0x10FA | 0x10FD..=0x10FF => return vec![c],
        0x149 => return vec!['\u{2BC}', 'N'],
        // Greek with ypogegrammeni: the titlecase keeps the iota below,
        // as one precomposed letter where there is one.
        0x1F80..=0x1FAF => return char::from_u32(c as u32 | 8).into_iter().collect(),
        0x1FB3 | 0x1FC3 | 0x1FF3 => return char::from_u32(c as u32 + 9).into_iter().collect(),
        0x1FBC | 0x1FCC | 0x1FFC => return vec![c],
        0x1FB2 | 0x1FB4 | 0x1FB7 | 0x1FC2 | 0x1FC4 | 0x1FC7 | 0x1FF2 | 0x1FF4 | 0x1FF7 => {
            let mut up: Vec<char> = c.to_uppercase().collect();
            up.pop();
            up.push('\u{345}');
            return up;
        }
        _ => {}
    }
    let mut up = c.to_uppercase();
    let mut out: Vec<char> = up.next().into_iter().collect();
    out.extend(up.flat_map(char::to_lowercase));
    out
}

pub fn title_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    map_chars(ctx, args, |c| title(c).into_iter())
}

/// The extended grapheme clusters of a list of code points: a cluster of
/// one code point is that integer, a longer one a list (OTP's shape, as
/// in `string:to_graphemes("e\x{301}")` = `[[101,769]]`).
pub fn graphemes_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let input = points(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let text: String = input.iter().collect();
    let clusters: Vec<Vec<char>> = text.graphemes(true).map(|g| g.chars().collect()).collect();
    let words: usize = clusters.iter().map(|g| 2 * g.len() + 2).sum();
    ctx.ensure(words + 2, args)?;
    let heap = ctx.heap();
    let items: Vec<Term> = clusters
        .iter()
        .map(|g| match g.as_slice() {
            [c] => Term::small(*c as i64),
            many => {
                let cps: Vec<Term> = many.iter().map(|&c| Term::small(c as i64)).collect();
                heap.list(&cps)
            }
        })
        .collect();
    Ok(heap.list(&items))
}
