//! The tokens of act source and the logos lexer that produces them.
//!
//! The lexer never fails: text it cannot read becomes `Token::Error`, carrying
//! what went wrong, so that the form splitter can report it with its place and
//! go on with the next form. Literals whose syntax logos regexes express badly
//! (numbers with bases and underscores, strings and quoted atoms with escapes,
//! `$c` characters) are scanned by hand in callbacks; every scan moves forward
//! by at least one byte, so lexing is linear in the input.

use logos::{Lexer, Logos};
use num_bigint::BigInt;
use num_traits::Num;

/// What was wrong with a piece of text the lexer could not read.
#[derive(Debug, Clone, PartialEq)]
pub enum LexError {
    /// a character that starts no token: `&`, `\`, ... (`tokenize` puts
    /// the character in; logos makes this error without it)
    UnexpectedCharacter(char),
    /// `"abc` running to the end of the file (its first 16 characters)
    UnterminatedString(String),
    /// `'abc` running to the end of the file (its first 16 characters)
    UnterminatedAtom(String),
    /// `$` at the end of the file
    UnterminatedChar,
    /// `"\x{zz}"`, `"\x4"`, ...
    BadEscape,
    /// `16#`, `37#1`, `1_`, `2#102`, `1.0e`: act's explanation, and what
    /// erl_scan makes of it
    BadNumber(String, NumberFault),
    /// an atom of more than `MAX_ATOM_CHARS` characters, as Erlang refuses
    AtomTooLong,
}

/// How erl_scan reads a number act refuses (for escript's wording).
#[derive(Debug, Clone, PartialEq)]
pub enum NumberFault {
    /// `1_`, `1__0`: the number, then the variable `_` or `__0` (this many
    /// bytes in)
    Underscore(u32, String),
    /// `37#1`: `illegal base '37'`
    Base(String),
    /// `2#102`: `2#10`, then the next token (`2`, this many bytes in)
    Digits(u32, String),
    /// `16#`, or an integer out of range: `illegal integer`
    Integer,
    /// `1.0e`, `1.0e999`: `illegal float`
    Float,
}

impl Default for LexError {
    fn default() -> LexError {
        LexError::UnexpectedCharacter('\0')
    }
}

/// Erlang's limit on the length of an atom, in characters.
pub const MAX_ATOM_CHARS: usize = 255;

/// An atom's name, if it is not too long.
fn atom_text(name: &str) -> Result<String, LexError> {
    if name.chars().count() > MAX_ATOM_CHARS {
        Err(LexError::AtomTooLong)
    } else {
        Ok(name.to_string())
    }
}

impl LexError {
    /// The message shown to the user.
    pub fn message(&self) -> String {
        match self {
            LexError::UnexpectedCharacter(_) => "unexpected character".into(),
            LexError::UnterminatedString(_) => {
                "unterminated string: no closing '\"' before the end of the file".into()
            }
            LexError::UnterminatedAtom(_) => {
                "unterminated quoted atom: no closing ' before the end of the file".into()
            }
            LexError::UnterminatedChar => {
                "unterminated character literal: '$' at the end of the file".into()
            }
            LexError::BadEscape => "illegal escape sequence".into(),
            LexError::BadNumber(why, _) => why.clone(),
            LexError::AtomTooLong => {
                format!("atom too long: an atom has at most {MAX_ATOM_CHARS} characters")
            }
        }
    }
}

impl LexError {
    /// What escript says about this error: how far from the start of the
    /// bad token it reports it, and erl_scan's or erl_parse's words.
    /// `None` for a character that is not plain ASCII: act names it and
    /// says what to type instead (see `diagnostic::describe_character`),
    /// which serves better than erl_scan's `illegal character`.
    pub fn escript_words(&self) -> Option<(u32, String)> {
        Some(match self {
            LexError::UnexpectedCharacter(c) if !c.is_ascii_graphic() => return None,
            // A stray ASCII character is a token erl_parse refuses.
            LexError::UnexpectedCharacter(c) => {
                let mut out = String::new();
                crate::term::print::write_atom(&mut out, crate::term::Atom::intern(&c.to_string()));
                (0, format!("syntax error before: {out}"))
            }
            LexError::UnterminatedString(head) => {
                let mut out = String::new();
                crate::term::print::write_string(&mut out, head.chars().map(|c| c as u32));
                (0, format!("unterminated string starting with {out}"))
            }
            LexError::UnterminatedAtom(head) => {
                let mut s = String::new();
                crate::term::print::write_string(&mut s, head.chars().map(|c| c as u32));
                let inner = s[1..s.len() - 1].replace("\\\"", "\"").replace('\'', "\\'");
                (0, format!("unterminated atom starting with '{inner}'"))
            }
            LexError::UnterminatedChar => (0, "unterminated character".into()),
            LexError::BadEscape => (0, "illegal character".into()),
            LexError::AtomTooLong => (0, "illegal atom".into()),
            LexError::BadNumber(_, fault) => match fault {
                NumberFault::Underscore(at, var) => (*at, format!("syntax error before: {var}")),
                NumberFault::Base(base) => (0, format!("illegal base '{base}'")),
                NumberFault::Digits(at, token) => (*at, format!("syntax error before: {token}")),
                NumberFault::Integer => (0, "illegal integer".into()),
                NumberFault::Float => (0, "illegal float".into()),
            },
        })
    }
}

/// `2#102`: erl_scan reads `2#10` and then a token from the first digit
/// the base does not have (`digits` are those after `#`); the syntax error
/// is before that token, `at` bytes into the number.
fn digits_fault(base: &str, digits: &str) -> NumberFault {
    let radix: u32 = base.parse().unwrap_or(10);
    let bad = digits
        .char_indices()
        .find(|(_, c)| !c.is_digit(radix))
        .map_or(digits.len(), |(i, _)| i);
    let rest = &digits[bad..];
    let at = (base.len() + 1 + bad) as u32;
    let token: String = match rest.chars().next() {
        Some(c) if c.is_ascii_digit() => rest.chars().take_while(char::is_ascii_digit).collect(),
        _ => rest.to_string(),
    };
    let token = match token.parse::<u64>() {
        Ok(n) => n.to_string(),
        Err(_) if token.starts_with(|c: char| c.is_ascii_lowercase()) => {
            let mut out = String::new();
            crate::term::print::write_atom(&mut out, crate::term::Atom::intern(&token));
            out
        }
        Err(_) => token,
    };
    NumberFault::Digits(at, token)
}

/// One token. `Dot` is Erlang's form terminator: a `.` followed by white
/// space, `%` or the end of the file; any other `.` is `Period`.
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(error = LexError)]
// White space is erl_scan's: the characters up to the space, control
// characters and all, and those from U+0080 to the no-break space U+00A0.
#[logos(skip r"[\x00-\x20\u{80}-\u{A0}]+")]
#[logos(skip(r"%[^\n]*", allow_greedy = true))]
pub enum Token {
    #[regex(r"[a-zß-öø-ÿ][a-zA-Z0-9_@À-ÖØ-Þß-öø-ÿ]*", |lex| atom_text(lex.slice()))]
    #[token("'", quoted_atom)]
    Atom(String),
    #[regex(r"[A-Z_À-ÖØ-Þ][a-zA-Z0-9_@À-ÖØ-Þß-öø-ÿ]*", |lex| lex.slice().to_string())]
    Var(String),
    /// Integers (`42`, `16#ff`, `1_000`) and characters (`$a`).
    #[regex(r"[0-9]", number)]
    Number(Number),
    #[token("$", character)]
    Char(u32),
    #[token("\"", string)]
    String(Vec<u32>),

    // Keywords.
    #[token("after")]
    After,
    #[token("and")]
    And,
    #[token("andalso")]
    AndAlso,
    #[token("band")]
    Band,
    #[token("begin")]
    Begin,
    #[token("bnot")]
    Bnot,
    #[token("bor")]
    Bor,
    #[token("bsl")]
    Bsl,
    #[token("bsr")]
    Bsr,
    #[token("bxor")]
    Bxor,
    #[token("case")]
    Case,
    #[token("catch")]
    Catch,
    #[token("div")]
    Div,
    #[token("end")]
    End,
    #[token("fun")]
    Fun,
    #[token("if")]
    If,
    #[token("not")]
    Not,
    #[token("of")]
    Of,
    #[token("or")]
    Or,
    #[token("orelse")]
    OrElse,
    #[token("receive")]
    Receive,
    #[token("rem")]
    Rem,
    #[token("try")]
    Try,
    #[token("when")]
    When,
    #[token("xor")]
    Xor,

    // Punctuation.
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<<")]
    OpenBin,
    #[token(">>")]
    CloseBin,
    #[token(",")]
    Comma,
    /// `.` that ends a form; made from `Period` by `tokenize`.
    Dot,
    #[token(".")]
    Period,
    #[token(";")]
    Semicolon,
    #[token(":")]
    Colon,
    #[token("->")]
    Arrow,
    #[token("=>")]
    FatArrow,
    #[token(":=")]
    ColonEq,
    #[token("|")]
    Pipe,
    #[token("||")]
    DoublePipe,
    #[token("<-")]
    LeftArrow,
    #[token("<=")]
    DoubleLeftArrow,
    #[token("!")]
    Bang,
    #[token("=")]
    Equals,
    #[token("#")]
    Hash,
    /// `?NAME`: a macro use, replaced by the preprocessor.
    #[token("?")]
    Question,
    /// `??Arg`: a macro argument as a string, inside a macro body.
    #[token("??")]
    DoubleQuestion,
    /// `::` of a type annotation (`-record(r, {a :: integer()})`).
    #[token("::")]
    ColonColon,
    #[token("/")]
    Slash,

    // Operators.
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("==")]
    EqEq,
    #[token("/=")]
    SlashEq,
    #[token("=<")]
    LessEq,
    #[token("<")]
    Less,
    #[token(">=")]
    GreaterEq,
    #[token(">")]
    Greater,
    #[token("=:=")]
    ExactEq,
    #[token("=/=")]
    ExactNotEq,
    #[token("++")]
    PlusPlus,
    #[token("--")]
    MinusMinus,

    /// Text the lexer could not read; the parser never accepts it.
    Error(LexError),
}

/// A numeric literal: integers are exact, floats are `f64`.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    Integer(BigInt),
    Float(f64),
}

impl Token {
    /// How the token is named in messages: `'end'`, `atom 'foo'`, ...
    pub fn describe(&self) -> String {
        match self {
            Token::Atom(a) => format!("atom '{a}'"),
            Token::Var(v) => format!("variable '{v}'"),
            Token::Number(Number::Integer(i)) => format!("integer {i}"),
            Token::Number(Number::Float(f)) => format!("float {f}"),
            Token::Char(c) => format!("character ${}", char::from_u32(*c).unwrap_or('?')),
            Token::String(s) => {
                let text: String = s
                    .iter()
                    .take(20)
                    .map(|&c| char::from_u32(c).unwrap_or('?'))
                    .collect();
                format!("string {text:?}")
            }
            Token::Dot => "end of form '.'".to_string(),
            Token::Error(e) => e.message(),
            other => format!("'{}'", other.symbol()),
        }
    }

    /// The token as erl_parse names it in `syntax error before: TOKEN`
    /// (yecc's token2string): atoms and symbols as `~w` writes an atom
    /// (`'end'`, `'.'`, `foo`), numbers as `~w`, variables bare, strings
    /// and characters as Erlang source.
    pub fn escript_text(&self) -> String {
        use crate::term::print;
        let atom = |name: &str| {
            let mut out = String::new();
            print::write_atom(&mut out, crate::term::Atom::intern(name));
            out
        };
        match self {
            Token::Atom(a) => atom(a),
            Token::Var(v) => v.clone(),
            Token::Number(Number::Integer(i)) => i.to_string(),
            Token::Number(Number::Float(f)) => print::format_float(*f),
            Token::Char(c) => {
                let mut out = String::new();
                print::write_string(&mut out, [*c]);
                format!("${}", &out[1..out.len() - 1])
            }
            Token::String(s) => {
                let mut out = String::new();
                print::write_string(&mut out, s.iter().copied());
                out
            }
            Token::Dot | Token::Period => "'.'".into(),
            Token::Error(_) => String::new(),
            other => atom(other.symbol()),
        }
    }

    /// The source text of a keyword or punctuation token.
    pub fn symbol(&self) -> &'static str {
        use Token::*;
        match self {
            After => "after",
            And => "and",
            AndAlso => "andalso",
            Band => "band",
            Begin => "begin",
            Bnot => "bnot",
            Bor => "bor",
            Bsl => "bsl",
            Bsr => "bsr",
            Bxor => "bxor",
            Case => "case",
            Catch => "catch",
            Div => "div",
            End => "end",
            Fun => "fun",
            If => "if",
            Not => "not",
            Of => "of",
            Or => "or",
            OrElse => "orelse",
            Receive => "receive",
            Rem => "rem",
            Try => "try",
            When => "when",
            Xor => "xor",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            OpenBin => "<<",
            CloseBin => ">>",
            Comma => ",",
            Dot | Period => ".",
            Semicolon => ";",
            Colon => ":",
            Arrow => "->",
            FatArrow => "=>",
            ColonEq => ":=",
            Pipe => "|",
            DoublePipe => "||",
            LeftArrow => "<-",
            DoubleLeftArrow => "<=",
            Bang => "!",
            Equals => "=",
            Hash => "#",
            Question => "?",
            DoubleQuestion => "??",
            ColonColon => "::",
            Slash => "/",
            Plus => "+",
            Minus => "-",
            Star => "*",
            EqEq => "==",
            SlashEq => "/=",
            LessEq => "=<",
            Less => "<",
            GreaterEq => ">=",
            Greater => ">",
            ExactEq => "=:=",
            ExactNotEq => "=/=",
            PlusPlus => "++",
            MinusMinus => "--",
            Atom(_) | Var(_) | Number(_) | Char(_) | String(_) | Error(_) => "",
        }
    }
}

/// A token with its byte range in the source: `(start, token, end)`, the
/// triple lalrpop expects.
pub type Spanned = (usize, Token, usize);

/// Splits a whole source text into tokens. A first line starting with `#!`
/// is skipped (escript's convention). Lexical errors become `Token::Error`.
pub fn tokenize(source: &str) -> Vec<Spanned> {
    // A byte order mark at the very start is what some editors write
    // there: skipped, as escript does (anywhere else it is an error).
    let bom = if source.starts_with('\u{FEFF}') { 3 } else { 0 };
    let skip = if source[bom..].starts_with("#!") {
        source.find('\n').unwrap_or(source.len())
    } else {
        bom
    };
    let text = &source[skip..];
    let mut tokens = Vec::new();
    let mut lexer = Token::lexer(text);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let token = match result {
            Ok(Token::Period) if is_dot_end(&text[span.end..]) => Token::Dot,
            Ok(token) => token,
            Err(LexError::UnexpectedCharacter(_)) => Token::Error(LexError::UnexpectedCharacter(
                text[span.clone()].chars().next().unwrap_or('\0'),
            )),
            Err(error) => Token::Error(error),
        };
        tokens.push((span.start + skip, token, span.end + skip));
    }
    tokens
}

/// A `.` ends a form when white space, a comment or the end follows it.
fn is_dot_end(rest: &str) -> bool {
    match rest.chars().next() {
        None => true,
        Some(c) => is_white_space(c) || c == '%',
    }
}

/// erl_scan's white space (see the `skip` rule on `Token`).
pub fn is_white_space(c: char) -> bool {
    matches!(c, '\0'..=' ' | '\u{80}'..='\u{A0}')
}

/// Scans the rest of a number whose first digit has been matched: digits
/// with `_` separators, `Base#digits`, or a float `1.5e-3`. A `.` not followed
/// by a digit is left alone (`1.` at the end of a form is `1` then dot).
fn number(lex: &mut Lexer<Token>) -> Result<Number, LexError> {
    let rest = lex.remainder().as_bytes();
    let first = lex.slice().as_bytes()[0];
    let mut digits = vec![first];
    let mut i = 0;
    scan_digits(rest, &mut i, &mut digits, |b| b.is_ascii_digit());
    let bad = |msg: &str, fault| LexError::BadNumber(msg.to_string(), fault);
    if i < rest.len() && rest[i] == b'_' {
        let var_end = i + rest[i..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'@')
            .count();
        let var = String::from_utf8_lossy(&rest[i..var_end]).into_owned();
        lex.bump(i + 1);
        return Err(bad(
            "illegal '_' in number: it must stand between two digits",
            NumberFault::Underscore(i as u32 + 1, var),
        ));
    }
    if i + 1 < rest.len() && rest[i] == b'#' && rest[i + 1].is_ascii_alphanumeric() {
        let base_text = String::from_utf8_lossy(&digits).into_owned();
        let base: u32 = base_text.parse().unwrap_or(0);
        i += 1;
        let mut value = Vec::new();
        scan_digits(rest, &mut i, &mut value, |b| b.is_ascii_alphanumeric());
        lex.bump(i);
        if !(2..=36).contains(&base) {
            return Err(LexError::BadNumber(
                format!("illegal base {base_text}: a base is from 2 to 36"),
                NumberFault::Base(base_text),
            ));
        }
        let text = String::from_utf8_lossy(&value).into_owned();
        return BigInt::from_str_radix(&text, base)
            .map(Number::Integer)
            .map_err(|_| {
                LexError::BadNumber(
                    format!("illegal digits for base {base}: {text}"),
                    digits_fault(&base_text, &text),
                )
            });
    }
    if i < rest.len() && rest[i] == b'#' {
        lex.bump(i + 1);
        return Err(bad(
            "illegal based integer: no digits after '#'",
            NumberFault::Integer,
        ));
    }
    if i + 1 < rest.len() && rest[i] == b'.' && rest[i + 1].is_ascii_digit() {
        digits.push(b'.');
        i += 1;
        scan_digits(rest, &mut i, &mut digits, |b| b.is_ascii_digit());
        if i < rest.len() && (rest[i] == b'e' || rest[i] == b'E') {
            let mut j = i + 1;
            let mut exponent = vec![b'e'];
            if j < rest.len() && (rest[j] == b'+' || rest[j] == b'-') {
                exponent.push(rest[j]);
                j += 1;
            }
            if j < rest.len() && rest[j].is_ascii_digit() {
                scan_digits(rest, &mut j, &mut exponent, |b| b.is_ascii_digit());
                digits.extend_from_slice(&exponent);
                i = j;
            } else {
                // erl_scan: an `e` after the fraction starts the exponent,
                // which must have digits (`1.0e` is an illegal float).
                lex.bump(j);
                return Err(bad(
                    "illegal float: the exponent has no digits",
                    NumberFault::Float,
                ));
            }
        }
        lex.bump(i);
        let text = String::from_utf8_lossy(&digits).into_owned();
        return match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Number::Float(f)),
            _ => Err(LexError::BadNumber(
                format!("float {text} is out of range"),
                NumberFault::Float,
            )),
        };
    }
    lex.bump(i);
    let text = String::from_utf8_lossy(&digits).into_owned();
    BigInt::from_str_radix(&text, 10)
        .map(Number::Integer)
        .map_err(|_| bad("illegal integer", NumberFault::Integer))
}

/// Appends the digits at `rest[*i..]` accepted by `is_digit`, allowing single
/// `_` between two digits, and advances `*i` past them.
fn scan_digits(rest: &[u8], i: &mut usize, out: &mut Vec<u8>, is_digit: impl Fn(u8) -> bool) {
    while *i < rest.len() {
        let b = rest[*i];
        if is_digit(b) {
            out.push(b);
            *i += 1;
        } else if b == b'_' && !out.is_empty() && *i + 1 < rest.len() && is_digit(rest[*i + 1]) {
            *i += 1;
        } else {
            break;
        }
    }
}

/// `$a`, `$\n`, `$\x{41}`: the character code of one (escaped) character.
fn character(lex: &mut Lexer<Token>) -> Result<u32, LexError> {
    let rest = lex.remainder();
    let mut chars = rest.char_indices();
    match chars.next() {
        None => Err(LexError::UnterminatedChar),
        Some((_, '\\')) => {
            let (code, used) = escape(&rest[1..]);
            lex.bump(1 + used);
            code.ok_or(LexError::BadEscape)
        }
        Some((_, c)) => {
            lex.bump(c.len_utf8());
            Ok(c as u32)
        }
    }
}

/// A string literal after its opening `"`.
fn string(lex: &mut Lexer<Token>) -> Result<Vec<u32>, LexError> {
    let head: String = lex.remainder().chars().take(16).collect();
    quoted(lex, '"').ok_or(LexError::UnterminatedString(head))?
}

/// A quoted atom after its opening `'`.
fn quoted_atom(lex: &mut Lexer<Token>) -> Result<String, LexError> {
    let head: String = lex.remainder().chars().take(16).collect();
    let codes = quoted(lex, '\'').ok_or(LexError::UnterminatedAtom(head))??;
    let name: String = codes
        .iter()
        .map(|&c| char::from_u32(c).unwrap_or('\u{FFFD}'))
        .collect();
    atom_text(&name)
}

/// Reads up to the closing `quote`, decoding escapes. `None` when the text
/// ends first (the lexer then stands at the end of the file); `Some(Err)`
/// when an escape was illegal (the lexer stands after the closing quote).
fn quoted(lex: &mut Lexer<Token>, quote: char) -> Option<Result<Vec<u32>, LexError>> {
    let rest = lex.remainder();
    let mut codes = Vec::new();
    let mut bad_escape = false;
    let mut i = 0;
    while let Some(c) = rest[i..].chars().next() {
        if c == quote {
            lex.bump(i + 1);
            return Some(if bad_escape {
                Err(LexError::BadEscape)
            } else {
                Ok(codes)
            });
        }
        if c == '\\' {
            let (code, used) = escape(&rest[i + 1..]);
            match code {
                Some(code) => codes.push(code),
                None => bad_escape = true,
            }
            i += 1 + used;
        } else {
            codes.push(c as u32);
            i += c.len_utf8();
        }
    }
    lex.bump(rest.len());
    None
}

/// Decodes the escape after a backslash: returns the character code (None if
/// illegal) and the number of bytes used (at least one unless `text` is empty).
fn escape(text: &str) -> (Option<u32>, usize) {
    let bytes = text.as_bytes();
    let Some(c) = text.chars().next() else {
        return (None, 0);
    };
    let simple = match c {
        'b' => Some(8),
        'd' => Some(127),
        'e' => Some(27),
        'f' => Some(12),
        'n' => Some(10),
        'r' => Some(13),
        's' => Some(32),
        't' => Some(9),
        'v' => Some(11),
        _ => None,
    };
    if let Some(code) = simple {
        return (Some(code), 1);
    }
    match c {
        '0'..='7' => {
            let mut code = 0;
            let mut n = 0;
            while n < 3 && n < bytes.len() && (b'0'..=b'7').contains(&bytes[n]) {
                code = code * 8 + (bytes[n] - b'0') as u32;
                n += 1;
            }
            (Some(code), n)
        }
        'x' => {
            if bytes.get(1) == Some(&b'{') {
                let Some(close) = text[2..].find('}') else {
                    return (None, 1);
                };
                let hex = &text[2..2 + close];
                let code = u32::from_str_radix(hex, 16)
                    .ok()
                    .filter(|&c| c <= 0x10FFFF && !hex.is_empty());
                (code, 3 + close)
            } else if bytes.len() >= 3
                && bytes[1].is_ascii_hexdigit()
                && bytes[2].is_ascii_hexdigit()
            {
                (u32::from_str_radix(&text[1..3], 16).ok(), 3)
            } else {
                (None, 1)
            }
        }
        // erl_scan takes any character after `\^` and keeps its low five
        // bits (`$\^?` is 31, `$\^@` is 0).
        '^' => match text[1..].chars().next() {
            Some(k) => (Some((k as u32) & 31), 1 + k.len_utf8()),
            None => (None, 1),
        },
        other => (Some(other as u32), other.len_utf8()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> Vec<Token> {
        tokenize(source).into_iter().map(|(_, t, _)| t).collect()
    }

    fn int(n: i64) -> Token {
        Token::Number(Number::Integer(BigInt::from(n)))
    }

    #[test]
    fn integers_in_every_notation() {
        assert_eq!(
            kinds("42 1_000 16#ff 2#1010 36#zz"),
            vec![int(42), int(1000), int(255), int(10), int(1295)]
        );
        assert_eq!(
            kinds("$a $\\n $\\s $\\\\ $\\x{41} $\\101"),
            vec![
                Token::Char(97),
                Token::Char(10),
                Token::Char(32),
                Token::Char(92),
                Token::Char(65),
                Token::Char(65)
            ]
        );
    }

    #[test]
    fn floats_need_digits_on_both_sides_of_the_point() {
        assert_eq!(
            kinds("1.0e10 2.5E-3"),
            vec![
                Token::Number(Number::Float(1.0e10)),
                Token::Number(Number::Float(2.5e-3))
            ]
        );
        assert_eq!(kinds("1. "), vec![int(1), Token::Dot]);
        assert_eq!(
            kinds("1.e"),
            vec![int(1), Token::Period, Token::Atom("e".into())]
        );
    }

    #[test]
    fn strings_decode_every_escape() {
        let s = r#""\b\d\e\f\n\r\s\t\v\\\"\'\0\101\x41\x{1F600}\^a""#;
        assert_eq!(
            kinds(s),
            vec![Token::String(vec![
                8, 127, 27, 12, 10, 13, 32, 9, 11, 92, 34, 39, 0, 65, 65, 0x1F600, 1
            ])]
        );
        assert_eq!(kinds("'a b\\n'"), vec![Token::Atom("a b\n".into())]);
    }

    #[test]
    fn dot_ends_a_form_only_before_space_comment_or_end() {
        assert_eq!(
            kinds("a.%c\nb.\nc."),
            vec![
                Token::Atom("a".into()),
                Token::Dot,
                Token::Atom("b".into()),
                Token::Dot,
                Token::Atom("c".into()),
                Token::Dot
            ]
        );
    }

    #[test]
    fn unterminated_literals_become_error_tokens() {
        assert_eq!(
            kinds("x \"abc"),
            vec![
                Token::Atom("x".into()),
                Token::Error(LexError::UnterminatedString("abc".into()))
            ]
        );
        assert_eq!(
            kinds("'abc"),
            vec![Token::Error(LexError::UnterminatedAtom("abc".into()))]
        );
        assert_eq!(kinds("$"), vec![Token::Error(LexError::UnterminatedChar)]);
        assert_eq!(
            kinds("&"),
            vec![Token::Error(LexError::UnexpectedCharacter('&'))]
        );
    }

    #[test]
    fn atoms_and_variables_may_use_latin1_letters_as_in_erlang() {
        assert_eq!(
            kinds("café Ärger _ö"),
            vec![
                Token::Atom("café".into()),
                Token::Var("Ärger".into()),
                Token::Var("_ö".into())
            ]
        );
    }

    #[test]
    fn atoms_have_at_most_255_characters() {
        assert_eq!(kinds(&"a".repeat(255)), vec![Token::Atom("a".repeat(255))]);
        assert_eq!(
            kinds(&"a".repeat(256)),
            vec![Token::Error(LexError::AtomTooLong)]
        );
        assert_eq!(
            kinds(&format!("'{}'", "é".repeat(256))),
            vec![Token::Error(LexError::AtomTooLong)]
        );
    }

    #[test]
    fn shebang_line_is_skipped() {
        assert_eq!(
            kinds("#!/usr/bin/env escript\nok"),
            vec![Token::Atom("ok".into())]
        );
        assert_eq!(tokenize("#!x\nok")[0].0, 4);
    }
}
