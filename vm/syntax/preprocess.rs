//! The preprocessor, as OTP's epp does it, on tokens between the lexer and
//! the form splitter: macros (`-define`, `-undef`, `?NAME`, `?F(Args)`
//! overloaded by arity, `??Arg`, the predefined `?MODULE`, `?LINE`, ...),
//! conditionals (`-ifdef`, `-ifndef`, `-if`, `-elif`, `-else`, `-endif`),
//! `-include`/`-include_lib`, and `-error`/`-warning`.
//!
//! It also owns `Sources`: the files of one program (the script and the
//! files it includes) laid out in one offset space, each file after the
//! last, so that a `Span` also says which file it is in. Tokens that come
//! from a macro body take the span of the macro call (`?F(...)`), starting
//! at the macro's name as epp has it, so every error in an expansion points
//! to the place the macro was used; tokens of the arguments keep their own
//! spans.

use super::diagnostic::Diagnostic;
use super::lexer::{Number, Spanned, Token, tokenize};
use super::span::{LineIndex, Span};
use num_bigint::BigInt;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One file of a program: its name as shown in messages, its text and the
/// offset where its text starts in the program's offset space.
pub struct SourceFile {
    pub name: String,
    pub text: String,
    pub base: usize,
    pub lines: LineIndex,
    /// Where the script includes this file (through other includes, if
    /// nested): an offset in the script, so that messages about an
    /// included file come where it is included.
    pub site: u32,
}

/// The files of a program; the first is the script itself, at offset 0.
pub struct Sources {
    pub files: Vec<SourceFile>,
}

impl Sources {
    pub fn single(name: &str, text: &str) -> Sources {
        let mut sources = Sources { files: Vec::new() };
        sources.add(name, text, 0);
        sources
    }

    /// Adds a file after the others, included at offset `at`; returns its
    /// base offset.
    pub fn add(&mut self, name: &str, text: &str, at: u32) -> usize {
        let base = self.files.last().map_or(0, |f| f.base + f.text.len() + 1);
        let site = if self.files.is_empty() {
            0
        } else {
            self.site(at)
        };
        self.files.push(SourceFile {
            name: name.to_string(),
            text: text.to_string(),
            base,
            lines: LineIndex::new(text),
            site,
        });
        base
    }

    /// The offset in the script that `offset` is at or included from.
    fn site(&self, offset: u32) -> u32 {
        let file = self.file_of(offset);
        if file.base == 0 { offset } else { file.site }
    }

    /// Sorts diagnostics in reading order: those about an included file
    /// where it is included, in their order within it.
    pub fn sort(&self, diagnostics: &mut [Diagnostic]) {
        diagnostics.sort_by_key(|d| (self.site(d.span.start), d.span.start, d.span.end));
    }

    /// The file holding `offset`.
    pub fn file_of(&self, offset: u32) -> &SourceFile {
        let i = self
            .files
            .partition_point(|f| f.base <= offset as usize)
            .saturating_sub(1);
        &self.files[i]
    }

    /// Where the operator written between the expression ending at
    /// `after` and the one starting at `before` is: the first character
    /// past closing parentheses, blanks and comments.
    pub fn operator_between(&self, after: u32, before: u32) -> usize {
        let file = self.file_of(after);
        let from = (after as usize).saturating_sub(file.base);
        let to = (before as usize)
            .saturating_sub(file.base)
            .min(file.text.len());
        let bytes = file.text.as_bytes();
        let mut i = from;
        while i < to {
            match bytes[i] {
                b' ' | b'\t' | b'\r' | b'\n' | b')' => i += 1,
                b'%' => {
                    while i < to && bytes[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => return file.base + i,
            }
        }
        after as usize
    }

    /// The text of `offset`'s file from `offset` on.
    pub fn text_at(&self, offset: usize) -> &str {
        let file = self.file_of(offset as u32);
        let from = offset.saturating_sub(file.base).min(file.text.len());
        file.text.get(from..).unwrap_or("")
    }

    /// The 1-based line of `offset` in its own file.
    pub fn line(&self, offset: u32) -> u32 {
        let file = self.file_of(offset);
        file.lines.line(offset - file.base as u32)
    }
}

/// What the preprocessor made of a program.
pub struct Preprocessed {
    pub tokens: Vec<Spanned>,
    pub diagnostics: Vec<Diagnostic>,
    pub sources: Sources,
    /// Functions whose forms were dropped for a preprocessor error.
    pub broken_functions: Vec<String>,
    /// The span of each macro call written in the source (from the
    /// macro's name, where its replacement's tokens are), in order, with
    /// the macro's name.
    pub expansions: Vec<(Span, String)>,
}

/// Adds to each diagnostic about the tokens of a macro's replacement (it
/// starts where the macro's name does) a hint naming the macro.
pub fn name_macros(diagnostics: &mut [Diagnostic], expansions: &[(Span, String)]) {
    for d in diagnostics.iter_mut().filter(|d| d.hint.is_none()) {
        let i = expansions.partition_point(|(s, _)| s.start < d.span.start);
        if let Some((call, name)) = expansions.get(i)
            && call.start == d.span.start
            && d.span.end <= call.end
        {
            d.hint = Some(format!("in the expansion of macro '{name}'"));
        }
    }
}

/// Includes may nest this deep (epp's limit is about as low).
const MAX_INCLUDE_DEPTH: usize = 40;
/// Macros may expand inside each other this deep.
const MAX_MACRO_DEPTH: usize = 200;
/// One form may grow to this many tokens by expansion.
const MAX_EXPANDED_TOKENS: usize = 1 << 21;

/// Preprocesses the script `source`, shown as `name`; includes are looked
/// up beside the including file, then in `dir` (the script's directory)
/// and its `include/` folder. `module` is the module name used by `?MODULE`
/// until a `-module` attribute names one.
pub fn preprocess(name: &str, source: &str, dir: Option<&Path>, module: &str) -> Preprocessed {
    preprocess_as(name, name, source, dir, module)
}

/// `preprocess`, with `?FILE` of the script being `path` (the path it was
/// run by, as escript gives it) while messages name it `name`.
pub fn preprocess_as(
    name: &str,
    path: &str,
    source: &str,
    dir: Option<&Path>,
    module: &str,
) -> Preprocessed {
    let mut pp = Pp {
        script_path: path.to_string(),
        broken_functions: Vec::new(),
        expansions: Vec::new(),
        sources: Sources::single(name, source),
        macros: HashMap::new(),
        out: Vec::new(),
        diagnostics: Vec::new(),
        conds: Vec::new(),
        module: module.to_string(),
        dir: dir.map(Path::to_path_buf),
        function: None,
        include_depth: 0,
    };
    let tokens = tokenize(source);
    pp.file(tokens, 0, dir.map(Path::to_path_buf));
    Preprocessed {
        tokens: pp.out,
        diagnostics: pp.diagnostics,
        sources: pp.sources,
        broken_functions: pp.broken_functions,
        expansions: pp.expansions,
    }
}

struct Macro {
    /// The parameter names; `None` for a macro without parentheses.
    params: Option<Vec<String>>,
    body: Vec<Spanned>,
}

/// One open `-ifdef`/`-ifndef`/`-if`.
struct Cond {
    directive: &'static str,
    /// Forms of the current branch are kept.
    active: bool,
    /// A branch has been taken (or the whole conditional is inside a
    /// skipped region): later `-elif`/`-else` branches are skipped.
    taken: bool,
    else_seen: bool,
    span: Span,
}

struct Pp {
    sources: Sources,
    /// Definitions by name; several with different arities may coexist.
    macros: HashMap<String, Vec<Macro>>,
    out: Vec<Spanned>,
    diagnostics: Vec<Diagnostic>,
    conds: Vec<Cond>,
    module: String,
    dir: Option<PathBuf>,
    /// Name and arity of the function whose form is being expanded.
    function: Option<(String, usize)>,
    include_depth: usize,
    script_path: String,
    broken_functions: Vec<String>,
    expansions: Vec<(Span, String)>,
}

const PREDEFINED: &[&str] = &[
    "MODULE",
    "MODULE_STRING",
    "FILE",
    "LINE",
    "FUNCTION_NAME",
    "FUNCTION_ARITY",
    "MACHINE",
    "BEAM",
    "OTP_RELEASE",
];

fn span_of(t: &Spanned) -> Span {
    Span::new(t.0, t.2)
}

/// The `)` that closes the `(` at `tokens[open]`, counting every kind of
/// bracket (a form's own brackets are checked later by the parser).
fn closing_paren(tokens: &[Spanned], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, (_, t, _)) in tokens.iter().enumerate().skip(open) {
        match t {
            Token::LParen | Token::LBracket | Token::LBrace | Token::OpenBin => depth += 1,
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return if *t == Token::RParen { Some(i) } else { None };
                }
            }
            Token::Dot => return None,
            _ => {}
        }
    }
    None
}

/// Splits `tokens` at commas outside brackets and `... end` blocks, as
/// epp reads macro arguments.
fn split_args(tokens: &[Spanned]) -> Vec<Vec<Spanned>> {
    let mut args = Vec::new();
    let mut current = Vec::new();
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match &token.1 {
            Token::LParen
            | Token::LBracket
            | Token::LBrace
            | Token::OpenBin
            | Token::Begin
            | Token::Case
            | Token::If
            | Token::Receive
            | Token::Try => depth += 1,
            Token::Fun => {
                let block = match tokens.get(i + 1) {
                    Some((_, Token::LParen, _)) => true,
                    Some((_, Token::Var(_), _)) => {
                        matches!(tokens.get(i + 2), Some((_, Token::LParen, _)))
                    }
                    _ => false,
                };
                if block {
                    depth += 1;
                }
            }
            Token::RParen | Token::RBracket | Token::RBrace | Token::CloseBin | Token::End => {
                depth = depth.saturating_sub(1)
            }
            Token::Comma if depth == 0 => {
                args.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(token.clone());
    }
    args.push(current);
    args
}

/// A token as `??Arg` writes it (epp's token_src).
fn token_text(token: &Token) -> String {
    match token {
        Token::Atom(name) => {
            let mut out = String::new();
            crate::term::print::write_atom(&mut out, crate::term::Atom::intern(name));
            out
        }
        Token::Var(name) => name.clone(),
        Token::Number(Number::Integer(i)) => i.to_string(),
        Token::Number(Number::Float(f)) => crate::term::print::format_float(*f),
        Token::Char(c) => char_literal_text(*c),
        Token::String(s) => string_literal_text(s),
        Token::Error(_) => String::new(),
        other => other.symbol().to_string(),
    }
}

/// A character literal as io_lib:write_char/1 writes it (epp's
/// token_src): `$\\s` for a space, else as in a string (without a quote).
fn char_literal_text(c: u32) -> String {
    if c == 0x20 {
        return "$\\s".to_string();
    }
    let mut out = String::from("$");
    push_source_char(&mut out, c, None);
    out
}

/// A string literal as io_lib:write_string/1 writes it.
fn string_literal_text(chars: &[u32]) -> String {
    let mut out = String::from("\"");
    for &c in chars {
        push_source_char(&mut out, c, Some('"'));
    }
    out.push('"');
    out
}

/// One character as io_lib writes it in source form with Unicode kept:
/// the quote and the backslash escaped, printable ASCII and everything
/// from U+00A0 on as the character itself, the usual control escapes,
/// and any other control character in three octal digits.
fn push_source_char(out: &mut String, c: u32, quote: Option<char>) {
    if let Some(escape) = crate::term::print::named_escape(c) {
        out.push_str(escape);
        return;
    }
    match c {
        _ if quote.is_some_and(|q| q as u32 == c) => {
            out.push('\\');
            out.push(char::from_u32(c).unwrap_or('"'));
        }
        0x5c => out.push_str("\\\\"),
        0x20..=0x7e => out.push(char::from_u32(c).unwrap_or(' ')),
        c if c < 0xa0 => out.push_str(&format!("\\{}{}{}", c >> 6, (c >> 3) & 7, c & 7)),
        c => out.push(char::from_u32(c).unwrap_or('\u{fffd}')),
    }
}

fn stringify(tokens: &[Spanned]) -> Vec<u32> {
    let texts: Vec<String> = tokens.iter().map(|t| token_text(&t.1)).collect();
    texts.join(" ").chars().map(|c| c as u32).collect()
}

/// The name of a macro: an atom or a variable token.
fn macro_name(token: &Token) -> Option<&str> {
    match token {
        Token::Atom(n) | Token::Var(n) => Some(n),
        _ => None,
    }
}

impl Pp {
    /// An error in epp's words (escript prints the same message).
    fn error(&mut self, message: impl Into<String>, span: Span) {
        let message = message.into();
        self.diagnostics
            .push(Diagnostic::error(message.clone(), span).escript_says(message));
    }

    fn skipping(&self) -> bool {
        self.conds.iter().any(|c| !c.active)
    }

    /// Preprocesses the tokens of one file (the script or an include).
    fn file(&mut self, tokens: Vec<Spanned>, base: usize, dir: Option<PathBuf>) {
        let tokens: Vec<Spanned> = if base == 0 {
            tokens
        } else {
            tokens
                .into_iter()
                .map(|(l, t, r)| (l + base, t, r + base))
                .collect()
        };
        let open_at_start = self.conds.len();
        let mut start = 0;
        while start < tokens.len() {
            let end = tokens[start..]
                .iter()
                .position(|t| t.1 == Token::Dot)
                .map_or(tokens.len(), |i| start + i + 1);
            self.form(&tokens[start..end], dir.as_deref());
            start = end;
        }
        // epp reports an open conditional at the end of its file.
        let file_end = self
            .sources
            .files
            .iter()
            .find(|f| f.base == base)
            .map_or(0, |f| (f.base + f.text.len()) as u32);
        while self.conds.len() > open_at_start {
            if let Some(cond) = self.conds.pop() {
                let message = format!("unterminated '-{}'", cond.directive);
                self.diagnostics.push(
                    Diagnostic::error(message.clone(), cond.span).escript_at(file_end, message),
                );
            }
        }
    }

    fn form(&mut self, form: &[Spanned], dir: Option<&Path>) {
        let directive = match form {
            [(_, Token::Minus, _), (_, Token::Atom(name), _), ..] => Some(name.as_str()),
            [(_, Token::Minus, _), (_, Token::If, _), ..] => Some("if"),
            _ => None,
        };
        let conditional = matches!(
            directive,
            Some("ifdef" | "ifndef" | "if" | "elif" | "else" | "endif")
        );
        if conditional {
            self.conditional(directive.unwrap_or_default(), form);
            return;
        }
        if self.skipping() {
            return;
        }
        match directive {
            Some("define") => self.define(form),
            Some("undef") => self.undef(form),
            Some(kind @ ("include" | "include_lib")) => self.include(kind, form, dir),
            Some(kind @ ("error" | "warning")) => self.message(kind, form),
            _ => {
                self.function = match form {
                    [(_, Token::Atom(name), _), (_, Token::LParen, _), ..] => {
                        let arity = closing_paren(form, 1).map_or(0, |close| {
                            if close == 2 {
                                0
                            } else {
                                split_args(&form[2..close]).len()
                            }
                        });
                        Some((name.clone(), arity))
                    }
                    _ => None,
                };
                let mut expanded = Vec::with_capacity(form.len());
                let mut active = Vec::new();
                match self.expand(form, &mut expanded, &mut active) {
                    Ok(()) => {
                        if let [
                            (_, Token::Minus, _),
                            (_, Token::Atom(attr), _),
                            (_, Token::LParen, _),
                            (_, Token::Atom(module), _),
                            ..,
                        ] = expanded.as_slice()
                            && attr == "module"
                        {
                            self.module = module.clone();
                        }
                        self.out.extend(expanded);
                    }
                    Err(diagnostic) => {
                        // The form is dropped, as epp does; calls to its
                        // function are not reported as undefined.
                        self.diagnostics.push(diagnostic);
                        if let Some((name, _)) = &self.function {
                            self.broken_functions.push(name.clone());
                        }
                    }
                }
            }
        }
    }

    /// The tokens between the parentheses of `-name(...).`, or an error
    /// "badly formed 'name'".
    fn directive_args<'f>(&mut self, name: &str, form: &'f [Spanned]) -> Option<&'f [Spanned]> {
        let bad = span_of(form.get(2).or(form.get(1)).unwrap_or(&form[0]));
        let ok = matches!(form.get(2), Some((_, Token::LParen, _)))
            && form.len() >= 5
            && form[form.len() - 1].1 == Token::Dot
            && form[form.len() - 2].1 == Token::RParen;
        if ok {
            Some(&form[3..form.len() - 2])
        } else {
            self.error(format!("badly formed '{name}'"), bad);
            None
        }
    }

    fn conditional(&mut self, directive: &str, form: &[Spanned]) {
        let span = Span::new(form[0].0, form[1].2);
        let outer_active = !self.skipping();
        match directive {
            "ifdef" | "ifndef" => {
                let name = if outer_active {
                    match self.directive_args(directive, form) {
                        Some([t]) if macro_name(&t.1).is_some() => {
                            macro_name(&t.1).map(str::to_string)
                        }
                        Some(_) => {
                            self.error(format!("badly formed '{directive}'"), span_of(&form[1]));
                            None
                        }
                        None => None,
                    }
                } else {
                    None
                };
                let defined = name.is_some_and(|n| self.is_defined(&n));
                let active = outer_active && (defined == (directive == "ifdef"));
                self.conds.push(Cond {
                    directive: if directive == "ifdef" {
                        "ifdef"
                    } else {
                        "ifndef"
                    },
                    active,
                    taken: active || !outer_active,
                    else_seen: false,
                    span,
                });
            }
            "if" => {
                let active = outer_active && self.condition("if", form);
                self.conds.push(Cond {
                    directive: "if",
                    active,
                    taken: active || !outer_active,
                    else_seen: false,
                    span,
                });
            }
            "elif" | "else" => {
                let Some(last) = self.conds.len().checked_sub(1) else {
                    self.error(format!("unbalanced '-{directive}'"), span_of(&form[1]));
                    return;
                };
                if self.conds[last].else_seen {
                    self.error(format!("unbalanced '-{directive}'"), span_of(&form[1]));
                    return;
                }
                let outer_active = self.conds[..last].iter().all(|c| c.active);
                let active = if self.conds[last].taken || !outer_active {
                    false
                } else if directive == "elif" {
                    self.condition("elif", form)
                } else {
                    true
                };
                let cond = &mut self.conds[last];
                cond.active = active;
                cond.taken |= active;
                cond.else_seen = directive == "else";
            }
            _ => {
                if self.conds.pop().is_none() {
                    self.error("unbalanced '-endif'", span_of(&form[1]));
                }
            }
        }
    }

    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name)
            || (PREDEFINED.contains(&name) && !matches!(name, "FUNCTION_NAME" | "FUNCTION_ARITY"))
    }

    /// Evaluates the condition of `-if(Expr)` or `-elif(Expr)`.
    fn condition(&mut self, directive: &str, form: &[Spanned]) -> bool {
        let Some(args) = self.directive_args(directive, form) else {
            return false;
        };
        // `defined(NAME)` is answered before macros are expanded.
        let mut replaced = Vec::with_capacity(args.len());
        let mut i = 0;
        while i < args.len() {
            if let (
                Some((l, Token::Atom(f), _)),
                Some((_, Token::LParen, _)),
                Some(name),
                Some((_, Token::RParen, r)),
            ) = (
                args.get(i),
                args.get(i + 1),
                args.get(i + 2),
                args.get(i + 3),
            ) && f == "defined"
                && let Some(name) = macro_name(&name.1)
            {
                let value = if self.is_defined(name) {
                    "true"
                } else {
                    "false"
                };
                replaced.push((*l, Token::Atom(value.to_string()), *r));
                i += 4;
                continue;
            }
            replaced.push(args[i].clone());
            i += 1;
        }
        let mut expanded = Vec::new();
        if let Err(d) = self.expand(&replaced, &mut expanded, &mut Vec::new()) {
            self.diagnostics.push(d);
            return false;
        }
        let at = span_of(&form[1]);
        match super::parser::parse_expr_tokens(&expanded) {
            Ok(exprs) if exprs.len() == 1 => match eval(&exprs[0]) {
                Some(Value::Atom(a)) if a == "true" => true,
                Some(Value::Atom(a)) if a == "false" => false,
                _ => {
                    self.error(format!("badly formed '{directive}'"), at);
                    false
                }
            },
            Ok(_) => {
                self.error(format!("badly formed '{directive}'"), at);
                false
            }
            Err(mut d) => {
                // The condition ends at the `)` of the directive.
                if let Some(close) = form.len().checked_sub(2).map(|i| &form[i])
                    && d.message.contains("unexpected the end of the file")
                {
                    d.message = d.message.replace("the end of the file", "')'");
                    d.span = span_of(close);
                }
                self.diagnostics.push(d);
                false
            }
        }
    }

    fn define(&mut self, form: &[Spanned]) {
        let Some(args) = self.directive_args("define", form) else {
            return;
        };
        let bad = |pp: &mut Pp, at: &Spanned| pp.error("badly formed 'define'", span_of(at));
        let Some(first) = args.first() else {
            bad(self, &form[2]);
            return;
        };
        let Some(name) = macro_name(&first.1).map(str::to_string) else {
            bad(self, first);
            return;
        };
        let name_span = span_of(first);
        let mut i = 1;
        let params = if matches!(args.get(1), Some((_, Token::LParen, _))) {
            let mut params: Vec<String> = Vec::new();
            i = 2;
            if matches!(args.get(2), Some((_, Token::RParen, _))) {
                i = 3;
            } else {
                loop {
                    match (args.get(i), args.get(i + 1)) {
                        (Some((l, Token::Var(p), r)), Some((_, sep, _)))
                            if matches!(sep, Token::Comma | Token::RParen) =>
                        {
                            if params.contains(p) {
                                self.error(
                                    format!("argument '{p}' already used"),
                                    Span::new(*l, *r),
                                );
                                return;
                            }
                            params.push(p.clone());
                            i += 2;
                            if *sep == Token::RParen {
                                break;
                            }
                        }
                        (Some(t), _) => {
                            bad(self, t);
                            return;
                        }
                        (None, _) => {
                            bad(self, &form[form.len() - 2]);
                            return;
                        }
                    }
                }
            }
            Some(params)
        } else {
            None
        };
        let body: Vec<Spanned> = match args.get(i) {
            // `-define(NAME).` is refused by OTP 25's epp too.
            None => {
                bad(self, &form[form.len() - 2]);
                return;
            }
            Some((_, Token::Comma, _)) => args[i + 1..].to_vec(),
            Some(t) => {
                bad(self, t);
                return;
            }
        };
        if PREDEFINED.contains(&name.as_str()) {
            self.error(format!("redefining predefined macro '{name}'"), name_span);
            return;
        }
        let arity = params.as_ref().map(Vec::len);
        let defs = self.macros.entry(name.clone()).or_default();
        if defs
            .iter()
            .any(|m| m.params.as_ref().map(Vec::len) == arity)
        {
            self.error(format!("redefining macro '{name}'"), name_span);
            return;
        }
        defs.push(Macro { params, body });
    }

    fn undef(&mut self, form: &[Spanned]) {
        match self.directive_args("undef", form) {
            Some([t]) if macro_name(&t.1).is_some() => {
                if let Some(name) = macro_name(&t.1) {
                    self.macros.remove(name);
                }
            }
            Some(_) => self.error("badly formed 'undef'", span_of(&form[1])),
            None => {}
        }
    }

    fn include(&mut self, kind: &str, form: &[Spanned], dir: Option<&Path>) {
        let Some(args) = self.directive_args(kind, form) else {
            return;
        };
        let mut expanded = Vec::new();
        if let Err(d) = self.expand(args, &mut expanded, &mut Vec::new()) {
            self.diagnostics.push(d);
            return;
        }
        let at = args.first().map_or(span_of(&form[1]), span_of);
        let name: String = match expanded.as_slice() {
            [] => {
                self.error(format!("badly formed '{kind}'"), at);
                return;
            }
            parts => {
                let mut codes = Vec::new();
                for part in parts {
                    match &part.1 {
                        Token::String(s) => codes.extend(s),
                        _ => {
                            self.error(format!("badly formed '{kind}'"), at);
                            return;
                        }
                    }
                }
                codes
                    .iter()
                    .map(|&c| char::from_u32(c).unwrap_or('\u{fffd}'))
                    .collect()
            }
        };
        if self.include_depth >= MAX_INCLUDE_DEPTH {
            self.error(format!("{kind} too deep"), at);
            return;
        }
        let (text, shown, inner_dir) = match self.find_include(kind, &name, dir) {
            Some(path) => {
                let text = match std::fs::read(&path) {
                    Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    Err(e) => {
                        self.error(format!("can't read include file \"{name}\": {e}"), at);
                        return;
                    }
                };
                let shown = path.to_string_lossy().into_owned();
                (text, shown, path.parent().map(Path::to_path_buf))
            }
            None => match otp_header(kind, &name) {
                Some(text) => (text.to_string(), name.clone(), None),
                None => {
                    let what = if kind == "include" { "file" } else { "lib" };
                    self.error(format!("can't find include {what} \"{name}\""), at);
                    return;
                }
            },
        };
        let base = self.sources.add(&shown, &text, form[0].0 as u32);
        let tokens = tokenize(&text);
        self.include_depth += 1;
        self.file(tokens, base, inner_dir);
        self.include_depth -= 1;
    }

    /// Where an included file is: beside the including file, then beside
    /// the script, then in the script's `include/` folder. For
    /// `-include_lib("app/include/f.hrl")` the same places are tried
    /// without the application name too.
    fn find_include(&self, kind: &str, name: &str, dir: Option<&Path>) -> Option<PathBuf> {
        let path = Path::new(name);
        if path.is_absolute() {
            return path.is_file().then(|| path.to_path_buf());
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        dirs.extend(dir.map(Path::to_path_buf));
        dirs.extend(self.dir.clone());
        dirs.extend(self.dir.as_ref().map(|d| d.join("include")));
        if dirs.is_empty() {
            dirs.push(PathBuf::from("."));
        }
        let mut names = vec![path.to_path_buf()];
        if kind == "include_lib" {
            let mut parts = path.components();
            parts.next();
            let rest = parts.as_path();
            if !rest.as_os_str().is_empty() {
                names.push(rest.to_path_buf());
                if let Ok(inner) = rest.strip_prefix("include") {
                    names.push(inner.to_path_buf());
                }
            }
        }
        for name in &names {
            for dir in &dirs {
                let candidate = if dir == Path::new(".") {
                    name.clone()
                } else {
                    dir.join(name)
                };
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
        }
        None
    }

    /// `-error(Term).` and `-warning(Term).`
    fn message(&mut self, kind: &str, form: &[Spanned]) {
        let Some(args) = self.directive_args(kind, form) else {
            return;
        };
        let mut expanded = Vec::new();
        if let Err(d) = self.expand(args, &mut expanded, &mut Vec::new()) {
            self.diagnostics.push(d);
            return;
        }
        let text = match (args.first(), args.last()) {
            (Some(first), Some(last)) => {
                let file = self.sources.file_of(first.0 as u32);
                let (a, b) = (first.0 - file.base, last.2 - file.base);
                file.text.get(a..b).unwrap_or_default().to_string()
            }
            _ => String::new(),
        };
        let message = format!("-{kind}({text}).");
        let span = span_of(&form[1]);
        if kind == "error" {
            self.error(message, span);
        } else {
            self.diagnostics.push(Diagnostic::warning(message, span));
        }
    }

    /// Expands every macro call in `tokens` into `out`. `active` holds the
    /// macros being expanded around this point: meeting one again is a
    /// circular definition.
    fn expand(
        &mut self,
        tokens: &[Spanned],
        out: &mut Vec<Spanned>,
        active: &mut Vec<(String, Option<usize>)>,
    ) -> Result<(), Diagnostic> {
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i].1 == Token::DoubleQuestion {
                // `??` outside a macro's body: epp reads `?` and then a
                // second `?` where the macro's name should be.
                let at = tokens[i].0 as u32 + 1;
                return Err(Diagnostic::error(
                    "'??' turns a macro argument into a string: it belongs in a macro's body",
                    span_of(&tokens[i]),
                )
                .escript_at(at, "illegal macro call '?'?''"));
            }
            if tokens[i].1 != Token::Question {
                out.push(tokens[i].clone());
                i += 1;
                continue;
            }
            let question = &tokens[i];
            let Some(name_token) = tokens.get(i + 1) else {
                return Err(Diagnostic::error(
                    "syntax error: a macro name must follow '?'",
                    span_of(question),
                ));
            };
            let name_span = span_of(name_token);
            let Some(name) = macro_name(&name_token.1).map(str::to_string) else {
                // epp names the token as it prints it (`dot` for the end).
                let text = match name_token.1 {
                    Token::Dot => "dot".to_string(),
                    ref other => other.escript_text(),
                };
                return Err(Diagnostic::error(
                    format!(
                        "syntax error: a macro name must follow '?', found {}",
                        name_token.1.describe()
                    ),
                    name_span,
                )
                .escript_at(name_token.0 as u32, format!("illegal macro call '?{text}'")));
            };
            // The arguments, if a '(' follows the name.
            let mut args: Option<(Vec<Vec<Spanned>>, usize)> = None;
            if matches!(tokens.get(i + 2), Some((_, Token::LParen, _))) {
                match closing_paren(tokens, i + 2) {
                    Some(close) => {
                        let inner = &tokens[i + 3..close];
                        let list = if inner.is_empty() {
                            Vec::new()
                        } else {
                            split_args(inner)
                        };
                        args = Some((list, close + 1));
                    }
                    None if self
                        .macros
                        .get(&name)
                        .is_some_and(|defs| defs.iter().any(|m| m.params.is_some())) =>
                    {
                        return Err(Diagnostic::error(
                            format!("badly formed argument for macro '{name}'"),
                            name_span,
                        )
                        .escript_says(format!("badly formed argument for macro '{name}'")));
                    }
                    None => {}
                }
            }
            let arity = args.as_ref().map(|(list, _)| list.len());
            let Some(defs) = self.macros.get(&name) else {
                if let Some(token) = self.predefined(&name, question, name_span)? {
                    out.push(token);
                    i += 2;
                    continue;
                }
                let shown = match arity {
                    Some(n) => format!("{name}/{n}"),
                    None => name.clone(),
                };
                return Err(
                    Diagnostic::error(format!("undefined macro '{shown}'"), name_span)
                        .escript_says(format!("undefined macro '{shown}'")),
                );
            };
            // A call with parentheses uses the definition of that arity,
            // or else the one without parameters (followed by the
            // parenthesized tokens, as epp does).
            let chosen = defs
                .iter()
                .position(|m| m.params.as_ref().map(Vec::len) == arity)
                .or_else(|| defs.iter().position(|m| m.params.is_none()));
            let Some(chosen) = chosen else {
                return Err(Diagnostic::error(
                    format!("argument mismatch for macro '{name}'"),
                    name_span,
                )
                .escript_says(format!("argument mismatch for macro '{name}'")));
            };
            let params = defs[chosen].params.clone();
            let body = defs[chosen].body.clone();
            let (arg_list, end) = match (&params, args) {
                (Some(_), Some((list, end))) => (list, end),
                _ => (Vec::new(), i + 2),
            };
            let key = (name.clone(), params.as_ref().map(Vec::len));
            if active.contains(&key) {
                return Err(
                    Diagnostic::error(format!("circular macro '{name}'"), name_span)
                        .escript_says(format!("circular macro '{name}'")),
                );
            }
            if active.len() >= MAX_MACRO_DEPTH {
                return Err(Diagnostic::error(
                    format!("macro '{name}' nested too deeply"),
                    name_span,
                ));
            }
            let call = Span::new(question.0, tokens[end - 1].2);
            // As epp: the body's tokens are where the macro's name is.
            let at = name_span.start as usize;
            let params = params.unwrap_or_default();
            let mut expanded_args: Vec<Option<Vec<Spanned>>> = vec![None; params.len()];
            let mut substituted = Vec::with_capacity(body.len());
            let mut j = 0;
            while j < body.len() {
                let (_, token, _) = &body[j];
                if *token == Token::DoubleQuestion
                    && let Some((_, Token::Var(p), _)) = body.get(j + 1)
                    && let Some(k) = params.iter().position(|q| q == p)
                {
                    let text = stringify(&arg_list[k]);
                    substituted.push((at, Token::String(text), call.end as usize));
                    j += 2;
                    continue;
                }
                if let Token::Var(p) = token
                    && let Some(k) = params.iter().position(|q| q == p)
                {
                    if expanded_args[k].is_none() {
                        let mut e = Vec::new();
                        self.expand(&arg_list[k], &mut e, active)?;
                        expanded_args[k] = Some(e);
                    }
                    substituted.extend(expanded_args[k].iter().flatten().cloned());
                } else {
                    substituted.push((at, token.clone(), call.end as usize));
                }
                j += 1;
            }
            if active.is_empty() {
                self.expansions
                    .push((Span::new(at, call.end as usize), name.clone()));
            }
            active.push(key);
            let result = self.expand(&substituted, out, active);
            active.pop();
            result?;
            if out.len() > MAX_EXPANDED_TOKENS {
                return Err(Diagnostic::error(
                    format!("the expansion of macro '{name}' is too large"),
                    name_span,
                ));
            }
            i = end;
        }
        Ok(())
    }

    /// The token a predefined macro stands for, `None` if `name` is not one.
    fn predefined(
        &self,
        name: &str,
        question: &Spanned,
        name_span: Span,
    ) -> Result<Option<Spanned>, Diagnostic> {
        let (l, r) = (question.0, name_span.end as usize);
        let token = match name {
            "MODULE" => Token::Atom(self.module.clone()),
            "MODULE_STRING" => Token::String(self.module.chars().map(|c| c as u32).collect()),
            "FILE" => {
                let file = self.sources.file_of(l as u32);
                let name = if file.base == 0 {
                    &self.script_path
                } else {
                    &file.name
                };
                Token::String(name.chars().map(|c| c as u32).collect())
            }
            "LINE" => Token::Number(Number::Integer(BigInt::from(self.sources.line(l as u32)))),
            "MACHINE" => Token::Atom("BEAM".into()),
            "BEAM" => Token::Atom("true".into()),
            "OTP_RELEASE" => Token::Number(Number::Integer(BigInt::from(25))),
            "FUNCTION_NAME" | "FUNCTION_ARITY" => match &self.function {
                Some((f, _)) if name == "FUNCTION_NAME" => Token::Atom(f.clone()),
                Some((_, a)) => Token::Number(Number::Integer(BigInt::from(*a))),
                None => {
                    return Err(Diagnostic::error(
                        format!("?{name} can only be used within a function"),
                        name_span,
                    ));
                }
            },
            _ => return Ok(None),
        };
        Ok(Some((name_span.start as usize, token, r)))
    }
}

/// A value of a `-if` condition.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(BigInt),
    Float(f64),
    Atom(String),
}

impl Value {
    fn boolean(b: bool) -> Value {
        Value::Atom(if b { "true" } else { "false" }.to_string())
    }

    fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Atom(a) if a == "true" => Some(true),
            Value::Atom(a) if a == "false" => Some(false),
            _ => None,
        }
    }

    /// Erlang's term order among numbers and atoms (numbers first).
    fn compare(&self, other: &Value) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let number = |v: &Value| match v {
            Value::Int(i) => Some(i.to_string().parse::<f64>().unwrap_or(0.0)),
            Value::Float(f) => Some(*f),
            Value::Atom(_) => None,
        };
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Atom(a), Value::Atom(b)) => a.cmp(b),
            (Value::Atom(_), _) => Ordering::Greater,
            (_, Value::Atom(_)) => Ordering::Less,
            _ => number(self)
                .partial_cmp(&number(other))
                .unwrap_or(Ordering::Equal),
        }
    }
}

/// Evaluates a `-if` condition: constants, arithmetic, comparisons and
/// boolean operators (what the condition of an `-if` may use in practice).
fn eval(e: &super::ast::Expr) -> Option<Value> {
    use super::ast::{BinaryOp as B, ExprKind as K, UnaryOp as U};
    Some(match &e.kind {
        K::Integer(i) => Value::Int(i.clone()),
        K::Float(f) => Value::Float(*f),
        K::Atom(a) => Value::Atom(a.clone()),
        K::UnaryOp(U::Not, a) => Value::boolean(!eval(a)?.as_bool()?),
        K::UnaryOp(U::Minus, a) => match eval(a)? {
            Value::Int(i) => Value::Int(-i),
            Value::Float(f) => Value::Float(-f),
            Value::Atom(_) => return None,
        },
        K::UnaryOp(U::Plus, a) => eval(a)?,
        K::BinaryOp(op, a, b) => {
            let x = eval(a)?;
            match op {
                B::AndAlso => {
                    return if x.as_bool()? { eval(b) } else { Some(x) };
                }
                B::OrElse => {
                    return if x.as_bool()? { Some(x) } else { eval(b) };
                }
                _ => {}
            }
            let y = eval(b)?;
            use std::cmp::Ordering::*;
            match op {
                B::And => Value::boolean(x.as_bool()? && y.as_bool()?),
                B::Or => Value::boolean(x.as_bool()? || y.as_bool()?),
                B::Xor => Value::boolean(x.as_bool()? != y.as_bool()?),
                B::ExactEq => Value::boolean(x == y),
                B::ExactNotEq => Value::boolean(x != y),
                B::Eq => Value::boolean(x.compare(&y) == Equal),
                B::NotEq => Value::boolean(x.compare(&y) != Equal),
                B::Less => Value::boolean(x.compare(&y) == Less),
                B::LessEq => Value::boolean(x.compare(&y) != Greater),
                B::Greater => Value::boolean(x.compare(&y) == Greater),
                B::GreaterEq => Value::boolean(x.compare(&y) != Less),
                B::Add | B::Sub | B::Mul => match (x, y) {
                    (Value::Int(a), Value::Int(b)) => Value::Int(match op {
                        B::Add => a + b,
                        B::Sub => a - b,
                        _ => a * b,
                    }),
                    _ => return None,
                },
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The OTP headers scripts include that act provides itself (there is no
/// OTP installation to find them in): `-include_lib("app/include/f.hrl")`.
fn otp_header(kind: &str, name: &str) -> Option<&'static str> {
    if kind != "include_lib" {
        return None;
    }
    Some(match name {
        "stdlib/include/assert.hrl" => include_str!("../../stdlib/include/assert.hrl"),
        "stdlib/include/ms_transform.hrl" => {
            include_str!("../../stdlib/include/ms_transform.hrl")
        }
        "kernel/include/file.hrl" => include_str!("../../stdlib/include/file.hrl"),
        "kernel/include/logger.hrl" => include_str!("../../stdlib/include/logger.hrl"),
        "eunit/include/eunit.hrl" => include_str!("../../stdlib/include/eunit.hrl"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(source: &str) -> (String, Vec<String>) {
        let pp = preprocess("t.act", source, None, "t");
        let text: Vec<String> = pp.tokens.iter().map(|t| token_text(&t.1)).collect();
        let messages = pp.diagnostics.iter().map(|d| d.message.clone()).collect();
        (text.join(" "), messages)
    }

    #[test]
    fn macros_expand_with_and_without_arguments() {
        let (text, errors) = expand(
            "-define(X, 1).\n-define(F(A), {A, ?X}).\n-define(F(A, B), A + B).\nf() -> ?F(?X, 2) + ?F(3).\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(text, "f ( ) -> 1 + 2 + { 3 , 1 } .");
    }

    #[test]
    fn conditionals_keep_one_branch() {
        let (text, errors) = expand(
            "-define(A, 1).\n-ifdef(A).\na() -> 1.\n-else.\nb() -> 2.\n-endif.\n-if(?A > 0 andalso not defined(B)).\nc() -> 3.\n-elif(true).\nd() -> 4.\n-endif.\n",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(text, "a ( ) -> 1 . c ( ) -> 3 .");
    }

    #[test]
    fn errors_say_what_epp_says() {
        assert_eq!(expand("f() -> ?Y.").1, vec!["undefined macro 'Y'"]);
        assert_eq!(
            expand("-define(F(A), A).\nf() -> ?F(1, 2).").1,
            vec!["argument mismatch for macro 'F'"]
        );
        assert_eq!(
            expand("-define(A, ?B).\n-define(B, ?A).\nf() -> ?A.").1,
            vec!["circular macro 'A'"]
        );
        assert_eq!(expand("-ifdef(X).\n").1, vec!["unterminated '-ifdef'"]);
        assert_eq!(expand("-endif.\n").1, vec!["unbalanced '-endif'"]);
        assert_eq!(
            expand("-include(\"nope.hrl\").\n").1,
            vec!["can't find include file \"nope.hrl\""]
        );
    }

    #[test]
    fn stringified_arguments_are_spaced_tokens() {
        let (text, _) = expand("-define(S(X), ??X).\nf() -> ?S(g(1, 'A b') + \"s\").");
        assert!(text.contains(r#""g ( 1 , 'A b' ) + \"s\"""#), "{text}");
    }
}
