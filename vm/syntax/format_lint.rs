//! erl_lint's check of format calls: `io:format`, `io:fwrite`,
//! `io_lib:format` and `io_lib:fwrite` with a literal format string (a
//! string or an atom) are checked at compile time, and a bad format string
//! or an argument list of the wrong length is a warning, in OTP 25's words
//! and at its places (the format string, or the argument list).
//!
//! Only what erl_lint warns about at its default level is reported: a
//! format that is not a literal, or arguments whose length cannot be known
//! (`[X | T]`), are left alone.

use super::ast::{Expr, ExprKind};
use super::span::Span;

/// The warning, if any, for a call `module:name(args)`.
pub fn check_call(module: &str, name: &str, args: &[Expr]) -> Option<(String, Span)> {
    let (format, arguments) = match (module, name, args) {
        ("io", "format" | "fwrite", [format]) => (format, None),
        ("io", "format" | "fwrite", [format, arguments])
        | ("io", "format" | "fwrite", [_, format, arguments])
        | ("io_lib", "format" | "fwrite", [format, arguments]) => (format, Some(arguments)),
        _ => return None,
    };
    let text: Vec<u32> = match &format.kind {
        ExprKind::String(codes) => codes.clone(),
        ExprKind::Atom(atom) => atom.chars().map(u32::from).collect(),
        _ => return None,
    };
    let need = match needed_arguments(&text) {
        Ok(need) => need,
        Err(reason) => return Some((format!("format string invalid ({reason})"), format.span)),
    };
    let Some(arguments) = arguments else {
        return (need > 0).then(|| {
            let message = format!(
                "the format string requires an argument list with {}, but no argument list is given",
                count(need)
            );
            (message, format.span)
        });
    };
    let given = match list_length(arguments) {
        ListLength::Known(n) => n,
        ListLength::NotAList => {
            return Some(("format arguments not a list".to_string(), arguments.span));
        }
        ListLength::Unknown => return None,
    };
    if given == need {
        return None;
    }
    let requires = if need == 0 {
        "the format string requires an empty argument list".to_string()
    } else {
        format!(
            "the format string requires an argument list with {}",
            count(need)
        )
    };
    let contains = if given == 0 {
        "the argument list is empty".to_string()
    } else if given < need {
        format!("the argument list contains only {}", count(given))
    } else {
        format!("the argument list contains {}", count(given))
    };
    Some((format!("{requires}, but {contains}"), arguments.span))
}

/// `1 argument`, `2 arguments`.
fn count(n: usize) -> String {
    if n == 1 {
        "1 argument".to_string()
    } else {
        format!("{n} arguments")
    }
}

enum ListLength {
    Known(usize),
    /// A number or an atom: certainly not a list.
    NotAList,
    /// Anything else (a variable tail, a call, ...).
    Unknown,
}

/// The length of a literal argument list, as erl_lint's `args_length`
/// sees it: a string literal is its characters.
fn list_length(e: &Expr) -> ListLength {
    match &e.kind {
        ExprKind::String(codes) => ListLength::Known(codes.len()),
        ExprKind::List(items, None) => ListLength::Known(items.len()),
        ExprKind::List(items, Some(tail)) => match &tail.kind {
            // `[a | "bcd"]`: erl_lint does not guess.
            ExprKind::String(_) => ListLength::Unknown,
            _ => match list_length(tail) {
                ListLength::Known(n) => ListLength::Known(items.len() + n),
                other => other,
            },
        },
        ExprKind::Atom(_) | ExprKind::Integer(_) | ExprKind::Float(_) => ListLength::NotAList,
        _ => ListLength::Unknown,
    }
}

/// How many arguments a format string consumes, or why it is invalid
/// (erl_lint's `extract_sequences`).
fn needed_arguments(format: &[u32]) -> Result<usize, String> {
    let chars: Vec<char> = format
        .iter()
        .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    let mut need = 0;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '~' {
            i += 1;
            continue;
        }
        i += 1;
        let at = |i: usize| chars.get(i).copied();
        // Field width: digits, or `*` (an argument), either after a `-`.
        if at(i) == Some('-') && matches!(at(i + 1), Some(c) if c == '*' || c.is_ascii_digit()) {
            i += 1;
        }
        if at(i) == Some('*') {
            need += 1;
            i += 1;
        } else {
            while matches!(at(i), Some(c) if c.is_ascii_digit()) {
                i += 1;
            }
        }
        // Precision, then the padding character.
        if at(i) == Some('.') {
            i += 1;
            if at(i) == Some('*') {
                need += 1;
                i += 1;
            } else {
                while matches!(at(i), Some(c) if c.is_ascii_digit()) {
                    i += 1;
                }
            }
            if at(i) == Some('.') {
                match at(i + 1) {
                    Some('*') => need += 1,
                    Some(_) => {}
                    None => return Err("truncated".to_string()),
                }
                i += 2;
            }
        }
        // The modifiers `t` and `l`, then the control character.
        let mut modifiers = String::new();
        while let Some(m @ ('t' | 'l')) = at(i) {
            if modifiers.contains(m) {
                break;
            }
            modifiers.push(m);
            i += 1;
        }
        let Some(control) = at(i) else {
            return Err("truncated".to_string());
        };
        i += 1;
        let modifiers_allowed = match modifiers.as_str() {
            "" => true,
            "t" => matches!(control, 'c' | 's' | 'p' | 'P' | 'w' | 'W'),
            _ => matches!(control, 'p' | 'P'),
        };
        // erl_lint names a bad control with its modifiers, `l` first.
        let invalid = || {
            let sorted: String = ['l', 't']
                .iter()
                .filter(|m| modifiers.contains(**m))
                .collect();
            format!("invalid control ~{sorted}{control}")
        };
        if !modifiers_allowed {
            return Err(invalid());
        }
        need += match control {
            '~' | 'n' => 0,
            'c' | 'f' | 'e' | 'g' | 's' | 'w' | 'p' | 'b' | 'B' | '+' | '#' | 'i' => 1,
            'W' | 'P' | 'x' | 'X' => 2,
            _ => return Err(invalid()),
        };
    }
    Ok(need)
}

#[cfg(test)]
mod tests {
    use super::needed_arguments;

    fn need(s: &str) -> Result<usize, String> {
        needed_arguments(&s.chars().map(u32::from).collect::<Vec<_>>())
    }

    #[test]
    fn counts_what_each_control_consumes() {
        assert_eq!(need("~p ~w~n~~"), Ok(2));
        assert_eq!(need("~*c ~.*f ~-*s"), Ok(6));
        assert_eq!(need("~10.3.xB ~P ~x"), Ok(5));
        assert_eq!(need("~-10.2f|~tp|~ltP"), Ok(4));
    }

    #[test]
    fn names_a_bad_control_as_erl_lint_does() {
        assert_eq!(need("~q"), Err("invalid control ~q".into()));
        assert_eq!(need("~lw"), Err("invalid control ~lw".into()));
        assert_eq!(need("~tl~"), Err("invalid control ~lt~".into()));
        assert_eq!(need("~ltz"), Err("invalid control ~ltz".into()));
        assert_eq!(need("abc~"), Err("truncated".into()));
        assert_eq!(need("~5"), Err("truncated".into()));
    }
}
