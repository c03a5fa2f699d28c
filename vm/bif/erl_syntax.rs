//! `erl_scan:string/1,2`, `erl_parse:parse_exprs/1` and
//! `erl_parse:parse_form/1`: act's own lexer and parser behind OTP's token
//! and abstract formats. Text is tokenized by the logos lexer and each token
//! becomes OTP's `{Category, Line, Value}` / `{Symbol, Line}`; OTP tokens
//! handed to the parser become lexer tokens again, spanned by their index so
//! that every node of the tree finds its line, and the tree is written out
//! as OTP's abstract format. stdlib/erl_parse.act and erl_eval.act do the
//! rest (parse_term, abstract, normalise, evaluation) in act.

use super::{BifResult, Context};
use crate::syntax::ast::*;
use crate::syntax::lexer::{self, LexError, Number, Spanned, Token};
use crate::term::constant::Constant;
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::BigInt;

type C = Constant;

fn a(name: &str) -> C {
    C::atom(name)
}

fn int(i: i64) -> C {
    C::int(i)
}

fn tuple(items: Vec<C>) -> C {
    C::Tuple(items)
}

fn list(items: Vec<C>) -> C {
    if items.is_empty() {
        C::Nil
    } else {
        C::List(items, Box::new(C::Nil))
    }
}

fn chars(text: &str) -> C {
    if text.is_empty() {
        C::Nil
    } else {
        C::String(text.chars().map(|c| c as u32).collect())
    }
}

fn codes(s: &[u32]) -> C {
    if s.is_empty() {
        C::Nil
    } else {
        C::String(s.to_vec())
    }
}

// ---------------------------------------------------------------------
// erl_scan:string

fn scan(ctx: &mut Context, args: &mut [Term], start_line: i64) -> BifResult {
    let Some(text) = super::io::unicode_chars(&ctx.process.heap, args[0]) else {
        return Err(super::BifError::Badarg);
    };
    let text: String = text.into_iter().collect();
    let line_at = |offset: usize| start_line + text[..offset].matches('\n').count() as i64;
    let end_line = line_at(text.len());
    // The lexer skips a first line starting with `#!`; erl_scan does not.
    let (skip, body) = if text.starts_with("#!") {
        (1, format!(" {}", &text[1..]))
    } else {
        (0, text.clone())
    };
    let _ = skip;
    let mut tokens = Vec::new();
    for (start, token, end) in lexer::tokenize(&body) {
        let line = int(line_at(start));
        let t = match token {
            Token::Atom(name) => tuple(vec![a("atom"), line, C::Atom(name)]),
            Token::Var(name) => tuple(vec![a("var"), line, C::Atom(name)]),
            Token::Number(Number::Integer(i)) => {
                if body[start..].starts_with('$') {
                    tuple(vec![a("char"), line, C::Integer(i)])
                } else {
                    tuple(vec![a("integer"), line, C::Integer(i)])
                }
            }
            Token::Number(Number::Float(f)) => tuple(vec![a("float"), line, C::Float(f)]),
            Token::Char(c) => tuple(vec![a("char"), line, int(i64::from(c))]),
            Token::String(s) => tuple(vec![a("string"), line, codes(&s)]),
            Token::Dot => tuple(vec![a("dot"), line]),
            Token::Error(error) => {
                let slice = &body[start..end];
                let info = match error {
                    // Control characters and latin1's 128..=160 are
                    // white space to erl_scan.
                    LexError::UnexpectedCharacter(_)
                        if slice.chars().count() == 1
                            && slice
                                .chars()
                                .all(|c| c <= ' ' || ('\u{80}'..='\u{a0}').contains(&c)) =>
                    {
                        continue;
                    }
                    LexError::UnexpectedCharacter(_) if slice.chars().count() == 1 => {
                        tokens.push(tuple(vec![a(slice), line]));
                        continue;
                    }
                    LexError::UnterminatedString(_) | LexError::UnterminatedAtom(_) => {
                        let quote = slice.chars().next().unwrap_or('"');
                        tuple(vec![
                            a("string"),
                            int(quote as i64),
                            chars(&body[start + quote.len_utf8()..]),
                        ])
                    }
                    LexError::UnterminatedChar => a("char"),
                    LexError::BadNumber(..) => tuple(vec![a("illegal"), a("integer")]),
                    LexError::AtomTooLong => tuple(vec![a("illegal"), a("atom")]),
                    _ => tuple(vec![a("illegal"), a("character")]),
                };
                let reply = tuple(vec![
                    a("error"),
                    tuple(vec![line, a("erl_scan"), info]),
                    int(end_line),
                ]);
                return build(ctx, &reply, args);
            }
            other => tuple(vec![a(other.symbol()), line]),
        };
        tokens.push(t);
    }
    let reply = tuple(vec![a("ok"), list(tokens), int(end_line)]);
    build(ctx, &reply, args)
}

pub fn string_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    scan(ctx, args, 1)
}

pub fn string_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let line = match ctx.process.heap.view(args[1]) {
        View::Small(n) => n,
        View::Tuple([l, _]) => l.as_small().ok_or(super::BifError::Badarg)?,
        _ => return Err(super::BifError::Badarg),
    };
    scan(ctx, args, line)
}

// ---------------------------------------------------------------------
// OTP tokens back to lexer tokens

const SYMBOLS: &[Token] = &[
    Token::After,
    Token::And,
    Token::AndAlso,
    Token::Band,
    Token::Begin,
    Token::Bnot,
    Token::Bor,
    Token::Bsl,
    Token::Bsr,
    Token::Bxor,
    Token::Case,
    Token::Catch,
    Token::Div,
    Token::End,
    Token::Fun,
    Token::If,
    Token::Not,
    Token::Of,
    Token::Or,
    Token::OrElse,
    Token::Receive,
    Token::Rem,
    Token::Try,
    Token::When,
    Token::Xor,
    Token::LParen,
    Token::RParen,
    Token::LBracket,
    Token::RBracket,
    Token::LBrace,
    Token::RBrace,
    Token::OpenBin,
    Token::CloseBin,
    Token::Comma,
    Token::Period,
    Token::Semicolon,
    Token::Colon,
    Token::Arrow,
    Token::FatArrow,
    Token::ColonEq,
    Token::Pipe,
    Token::DoublePipe,
    Token::LeftArrow,
    Token::DoubleLeftArrow,
    Token::Bang,
    Token::Equals,
    Token::Hash,
    Token::Question,
    Token::DoubleQuestion,
    Token::ColonColon,
    Token::Slash,
    Token::Plus,
    Token::Minus,
    Token::Star,
    Token::EqEq,
    Token::SlashEq,
    Token::LessEq,
    Token::Less,
    Token::GreaterEq,
    Token::Greater,
    Token::ExactEq,
    Token::ExactNotEq,
    Token::PlusPlus,
    Token::MinusMinus,
];

/// One OTP token: its line, the lexer token, and how erl_parse names it
/// in "syntax error before: ".
struct Tok {
    line: i64,
    token: Token,
    text: String,
}

fn quote_atom(name: &str) -> String {
    let mut it = name.chars();
    let plain = matches!(it.next(), Some(c) if c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '@')
        && SYMBOLS.iter().all(|s| s.symbol() != name);
    if plain {
        name.to_string()
    } else {
        let mut out = String::from("'");
        for c in name.chars() {
            match c {
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                _ => out.push(c),
            }
        }
        out.push('\'');
        out
    }
}

fn term_int(heap: &crate::heap::Heap, t: Term) -> Option<BigInt> {
    match heap.view(t) {
        View::Small(n) => Some(BigInt::from(n)),
        View::Big(b) => Some(b.to_bigint()),
        _ => None,
    }
}

fn anno_line(heap: &crate::heap::Heap, t: Term) -> Option<i64> {
    match heap.view(t) {
        View::Small(n) => Some(n),
        View::Tuple([l, _]) => l.as_small(),
        _ => None,
    }
}

fn read_tokens(heap: &crate::heap::Heap, list: Term) -> Option<Vec<Tok>> {
    let items = heap.list_to_vec(list)?;
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let View::Tuple(fields) = heap.view(item) else {
            return None;
        };
        let kind = fields.first()?.as_atom()?;
        let kind: &str = kind.name();
        let line = anno_line(heap, *fields.get(1)?)?;
        let tok = match (kind, fields.len()) {
            ("atom", 3) => {
                let name = fields[2].as_atom()?.name().to_string();
                Tok {
                    line,
                    text: quote_atom(&name),
                    token: Token::Atom(name),
                }
            }
            ("var", 3) => {
                let name = fields[2].as_atom()?.name().to_string();
                Tok {
                    line,
                    text: name.clone(),
                    token: Token::Var(name),
                }
            }
            ("integer", 3) => {
                let i = term_int(heap, fields[2])?;
                Tok {
                    line,
                    text: i.to_string(),
                    token: Token::Number(Number::Integer(i)),
                }
            }
            ("char", 3) => {
                let c = fields[2].as_small()?;
                Tok {
                    line,
                    text: format!("${}", char::from_u32(c as u32).unwrap_or('?')),
                    token: Token::Char(c as u32),
                }
            }
            ("float", 3) => {
                let View::Float(f) = heap.view(fields[2]) else {
                    return None;
                };
                Tok {
                    line,
                    text: super::fmt::write(heap, fields[2]),
                    token: Token::Number(Number::Float(f)),
                }
            }
            ("string", 3) => {
                let s: Vec<u32> = if fields[2] == Term::NIL {
                    Vec::new()
                } else {
                    super::io::unicode_chars(heap, fields[2])?
                        .into_iter()
                        .map(|c| c as u32)
                        .collect()
                };
                Tok {
                    line,
                    text: super::fmt::write(heap, fields[2]),
                    token: Token::String(s),
                }
            }
            ("dot", 2) => Tok {
                line,
                text: "'.'".into(),
                token: Token::Dot,
            },
            (sym, 2) => {
                let token = SYMBOLS.iter().find(|t| t.symbol() == sym)?.clone();
                Tok {
                    line,
                    text: format!("'{sym}'"),
                    token,
                }
            }
            _ => return None,
        };
        out.push(tok);
    }
    Some(out)
}

fn spanned(toks: &[Tok]) -> Vec<Spanned> {
    toks.iter()
        .enumerate()
        .map(|(i, t)| (i, t.token.clone(), i + 1))
        .collect()
}

/// `{error, {Line, erl_parse, ["syntax error before: ", Token]}}` for a
/// failure at token `at` (past the end: the end of the input).
fn syntax_error(toks: &[Tok], at: usize) -> C {
    let (line, text) = match toks.get(at) {
        Some(t) => (t.line, chars(&t.text)),
        None => (toks.last().map_or(0, |t| t.line), C::Nil),
    };
    tuple(vec![
        a("error"),
        tuple(vec![
            int(line),
            a("erl_parse"),
            list(vec![chars("syntax error before: "), text]),
        ]),
    ])
}

// ---------------------------------------------------------------------
// The tree to OTP's abstract format

struct Abs<'t> {
    toks: &'t [Tok],
}

impl Abs<'_> {
    fn line(&self, at: usize) -> C {
        let i = at.min(self.toks.len().saturating_sub(1));
        int(self.toks.get(i).map_or(0, |t| t.line))
    }

    fn l(&self, e: &Expr) -> C {
        self.line(e.span.start as usize)
    }

    fn exprs(&self, es: &[Expr]) -> C {
        list(es.iter().map(|e| self.expr(e)).collect())
    }

    fn guard(&self, g: &Guard) -> C {
        list(g.iter().map(|alt| self.exprs(alt)).collect())
    }

    fn clause(&self, c: &Clause) -> C {
        tuple(vec![
            a("clause"),
            self.line(c.span.start as usize),
            self.exprs(&c.patterns),
            self.guard(&c.guard),
            self.exprs(&c.body),
        ])
    }

    fn clauses(&self, cs: &[Clause]) -> C {
        list(cs.iter().map(|c| self.clause(c)).collect())
    }

    fn name(&self, n: &Name) -> C {
        tuple(vec![
            a("atom"),
            self.line(n.span.start as usize),
            C::Atom(n.name.clone()),
        ])
    }

    fn record_fields(&self, fs: &[RecordField]) -> C {
        list(
            fs.iter()
                .map(|f| {
                    let l = self.line(f.span.start as usize);
                    let field = if f.name.name == "_" {
                        tuple(vec![a("var"), l.clone(), a("_")])
                    } else {
                        self.name(&f.name)
                    };
                    tuple(vec![a("record_field"), l, field, self.expr(&f.value)])
                })
                .collect(),
        )
    }

    fn map_fields(&self, fs: &[MapField]) -> C {
        list(
            fs.iter()
                .map(|f| {
                    let kind = if f.exact {
                        "map_field_exact"
                    } else {
                        "map_field_assoc"
                    };
                    tuple(vec![
                        a(kind),
                        self.line(f.span.start as usize),
                        self.expr(&f.key),
                        self.expr(&f.value),
                    ])
                })
                .collect(),
        )
    }

    fn qualifiers(&self, qs: &[Qualifier]) -> C {
        list(
            qs.iter()
                .map(|q| match q {
                    Qualifier::Generator(p, e) => {
                        tuple(vec![a("generate"), self.l(p), self.expr(p), self.expr(e)])
                    }
                    Qualifier::BinaryGenerator(p, e) => {
                        tuple(vec![a("b_generate"), self.l(p), self.expr(p), self.expr(e)])
                    }
                    Qualifier::Filter(e) => self.expr(e),
                })
                .collect(),
        )
    }

    fn expr(&self, e: &Expr) -> C {
        let l = self.l(e);
        match &e.kind {
            ExprKind::Integer(i) => {
                let is_char = matches!(
                    self.toks.get(e.span.start as usize),
                    Some(Tok {
                        token: Token::Char(_),
                        ..
                    })
                );
                tuple(vec![
                    a(if is_char { "char" } else { "integer" }),
                    l,
                    C::Integer(i.clone()),
                ])
            }
            ExprKind::Float(f) => tuple(vec![a("float"), l, C::Float(*f)]),
            ExprKind::Atom(s) => tuple(vec![a("atom"), l, C::Atom(s.clone())]),
            ExprKind::String(s) => tuple(vec![a("string"), l, codes(s)]),
            ExprKind::Var(v) => tuple(vec![a("var"), l, C::Atom(v.clone())]),
            ExprKind::List(items, tail) => {
                let mut acc = match tail {
                    Some(t) => self.expr(t),
                    None => {
                        let end = (e.span.end as usize).saturating_sub(1);
                        tuple(vec![a("nil"), self.line(end)])
                    }
                };
                if items.is_empty() && tail.is_none() {
                    return tuple(vec![a("nil"), l]);
                }
                for item in items.iter().rev() {
                    acc = tuple(vec![a("cons"), self.l(item), self.expr(item), acc]);
                }
                acc
            }
            ExprKind::Tuple(items) => tuple(vec![a("tuple"), l, self.exprs(items)]),
            ExprKind::Map(fs) => tuple(vec![a("map"), l, self.map_fields(fs)]),
            ExprKind::MapUpdate(m, fs) => {
                tuple(vec![a("map"), l, self.expr(m), self.map_fields(fs)])
            }
            ExprKind::Binary(els) => {
                let els = els
                    .iter()
                    .map(|el| {
                        let size = el.size.as_ref().map_or(a("default"), |s| self.expr(s));
                        let tsl = if el.specifiers.is_empty() {
                            a("default")
                        } else {
                            list(
                                el.specifiers
                                    .iter()
                                    .map(|s| match s.value {
                                        Some(n) => tuple(vec![a(&s.name), int(i64::from(n))]),
                                        None => a(&s.name),
                                    })
                                    .collect(),
                            )
                        };
                        tuple(vec![
                            a("bin_element"),
                            self.line(el.span.start as usize),
                            self.expr(&el.value),
                            size,
                            tsl,
                        ])
                    })
                    .collect();
                tuple(vec![a("bin"), l, list(els)])
            }
            ExprKind::BinaryOp(op, x, y) => tuple(vec![
                a("op"),
                self.line(x.span.end as usize),
                a(op.symbol()),
                self.expr(x),
                self.expr(y),
            ]),
            ExprKind::UnaryOp(op, x) => tuple(vec![a("op"), l, a(op.symbol()), self.expr(x)]),
            ExprKind::Match(p, x) => tuple(vec![a("match"), l, self.expr(p), self.expr(x)]),
            ExprKind::Send(p, x) => tuple(vec![
                a("op"),
                self.line(p.span.end as usize),
                a("!"),
                self.expr(p),
                self.expr(x),
            ]),
            ExprKind::Call(target, args) => {
                let callee = match &**target {
                    CallTarget::Local(name, span) => tuple(vec![
                        a("atom"),
                        self.line(span.start as usize),
                        C::Atom(name.clone()),
                    ]),
                    CallTarget::Remote(m, f) => {
                        tuple(vec![a("remote"), self.l(m), self.expr(m), self.expr(f)])
                    }
                    CallTarget::Fun(f) => self.expr(f),
                };
                tuple(vec![a("call"), l, callee, self.exprs(args)])
            }
            ExprKind::Fun(f) => match &**f {
                Fun::Anonymous(cs) => tuple(vec![
                    a("fun"),
                    l,
                    tuple(vec![a("clauses"), self.clauses(cs)]),
                ]),
                Fun::Named(v, cs) => tuple(vec![
                    a("named_fun"),
                    l,
                    C::Atom(v.name.clone()),
                    self.clauses(cs),
                ]),
                Fun::Local(n) => tuple(vec![
                    a("fun"),
                    l,
                    tuple(vec![
                        a("function"),
                        C::Atom(n.name.clone()),
                        int(i64::from(n.arity)),
                    ]),
                ]),
                Fun::Remote {
                    module,
                    function,
                    arity,
                } => tuple(vec![
                    a("fun"),
                    l,
                    tuple(vec![
                        a("function"),
                        self.expr(module),
                        self.expr(function),
                        self.expr(arity),
                    ]),
                ]),
            },
            ExprKind::Case(x, cs) => tuple(vec![a("case"), l, self.expr(x), self.clauses(cs)]),
            ExprKind::If(cs) => tuple(vec![a("if"), l, self.clauses(cs)]),
            ExprKind::Receive(cs, after) => match after {
                None => tuple(vec![a("receive"), l, self.clauses(cs)]),
                Some(af) => tuple(vec![
                    a("receive"),
                    l,
                    self.clauses(cs),
                    self.expr(&af.timeout),
                    self.exprs(&af.body),
                ]),
            },
            ExprKind::Try(t) => {
                let catches = t
                    .catch_clauses
                    .iter()
                    .map(|c| {
                        let cl = self.line(c.span.start as usize);
                        let class = c.class.as_ref().map_or_else(
                            || tuple(vec![a("atom"), self.l(&c.reason), a("throw")]),
                            |k| self.expr(k),
                        );
                        let stack = c.stack.as_ref().map_or_else(
                            || tuple(vec![a("var"), self.l(&c.reason), a("_")]),
                            |v| {
                                tuple(vec![
                                    a("var"),
                                    self.line(v.span.start as usize),
                                    C::Atom(v.name.clone()),
                                ])
                            },
                        );
                        let pat = tuple(vec![
                            a("tuple"),
                            self.l(c.class.as_ref().unwrap_or(&c.reason)),
                            list(vec![class, self.expr(&c.reason), stack]),
                        ]);
                        tuple(vec![
                            a("clause"),
                            cl,
                            list(vec![pat]),
                            self.guard(&c.guard),
                            self.exprs(&c.body),
                        ])
                    })
                    .collect();
                tuple(vec![
                    a("try"),
                    l,
                    self.exprs(&t.body),
                    self.clauses(&t.of_clauses),
                    list(catches),
                    self.exprs(&t.after),
                ])
            }
            ExprKind::Catch(x) => tuple(vec![a("catch"), l, self.expr(x)]),
            ExprKind::Block(es) => tuple(vec![a("block"), l, self.exprs(es)]),
            ExprKind::ListComprehension(x, qs) => {
                tuple(vec![a("lc"), l, self.expr(x), self.qualifiers(qs)])
            }
            ExprKind::BinaryComprehension(x, qs) => {
                tuple(vec![a("bc"), l, self.expr(x), self.qualifiers(qs)])
            }
            ExprKind::Record(n, fs) => tuple(vec![
                a("record"),
                l,
                C::Atom(n.name.clone()),
                self.record_fields(fs),
            ]),
            ExprKind::RecordUpdate(x, n, fs) => tuple(vec![
                a("record"),
                l,
                self.expr(x),
                C::Atom(n.name.clone()),
                self.record_fields(fs),
            ]),
            ExprKind::RecordAccess(x, n, f) => tuple(vec![
                a("record_field"),
                l,
                self.expr(x),
                C::Atom(n.name.clone()),
                self.name(f),
            ]),
            ExprKind::RecordIndex(n, f) => tuple(vec![
                a("record_index"),
                l,
                C::Atom(n.name.clone()),
                self.name(f),
            ]),
        }
    }

    fn form(&self, f: &Form) -> C {
        match f {
            Form::Function(fun) => tuple(vec![
                a("function"),
                self.line(fun.span.start as usize),
                C::Atom(fun.name.clone()),
                int(i64::from(fun.arity)),
                list(fun.clauses.iter().map(|c| self.clause(&c.clause)).collect()),
            ]),
            Form::Attribute(attr) => {
                let l = self.line(attr.span.start as usize);
                let fa = |names: &[FunctionName]| {
                    list(
                        names
                            .iter()
                            .map(|n| tuple(vec![C::Atom(n.name.clone()), int(i64::from(n.arity))]))
                            .collect(),
                    )
                };
                let (name, value) = match &attr.kind {
                    AttributeKind::Module(m) => ("module", C::Atom(m.clone())),
                    AttributeKind::Export(names) => ("export", fa(names)),
                    AttributeKind::Import(m, names) => {
                        ("import", tuple(vec![C::Atom(m.clone()), fa(names)]))
                    }
                    AttributeKind::ExportAll { .. } => ("compile", a("export_all")),
                    AttributeKind::Record(def) => {
                        let fields = def
                            .fields
                            .iter()
                            .map(|f| {
                                let fl = self.line(f.name.span.start as usize);
                                match &f.default {
                                    None => tuple(vec![a("record_field"), fl, self.name(&f.name)]),
                                    Some(d) => tuple(vec![
                                        a("record_field"),
                                        fl,
                                        self.name(&f.name),
                                        self.expr(d),
                                    ]),
                                }
                            })
                            .collect();
                        (
                            "record",
                            tuple(vec![C::Atom(def.name.name.clone()), list(fields)]),
                        )
                    }
                    AttributeKind::Other(n) => {
                        return tuple(vec![a("attribute"), l, C::Atom(n.clone()), a("undefined")]);
                    }
                };
                tuple(vec![a("attribute"), l, a(name), value])
            }
        }
    }
}

fn with_dot(toks: &[Tok]) -> (&[Tok], bool) {
    match toks.last() {
        Some(Tok {
            token: Token::Dot, ..
        }) => (&toks[..toks.len() - 1], true),
        _ => (toks, false),
    }
}

/// `erl_parse:parse_exprs(Tokens)`.
pub fn parse_exprs_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let toks = read_tokens(&ctx.process.heap, args[0]).ok_or(super::BifError::Badarg)?;
    let (body, dot) = with_dot(&toks);
    let reply = if !dot {
        syntax_error(&toks, toks.len())
    } else if body.is_empty() {
        syntax_error(&toks, 0)
    } else {
        match crate::syntax::parser::parse_expr_tokens(&spanned(body)) {
            Ok(exprs) => {
                let abs = Abs { toks: &toks };
                tuple(vec![a("ok"), abs.exprs(&exprs)])
            }
            Err(d) => syntax_error(&toks, d.span.start as usize),
        }
    };
    build(ctx, &reply, args)
}

/// `erl_parse:parse_form(Tokens)`.
pub fn parse_form_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let toks = read_tokens(&ctx.process.heap, args[0]).ok_or(super::BifError::Badarg)?;
    let (body, dot) = with_dot(&toks);
    let reply = if !dot {
        syntax_error(&toks, toks.len())
    } else if body.is_empty() {
        syntax_error(&toks, 0)
    } else {
        match crate::syntax::parser::parse_form_tokens(&spanned(body)) {
            Ok(form) => {
                let abs = Abs { toks: &toks };
                tuple(vec![a("ok"), abs.form(&form)])
            }
            Err(d) => syntax_error(&toks, d.span.start as usize),
        }
    };
    build(ctx, &reply, args)
}

/// Words a constant takes on the heap, generously.
fn words(c: &C) -> usize {
    match c {
        C::Integer(i) => 4 + (i.bits() as usize) / 32,
        C::Float(_) => 4,
        C::Atom(_) | C::Nil => 1,
        C::List(items, tail) => items.iter().map(|i| 3 + words(i)).sum::<usize>() + words(tail),
        C::String(s) => 3 * s.len() + 1,
        C::Tuple(items) => 2 + items.iter().map(|i| 1 + words(i)).sum::<usize>(),
        C::Map(kv) => {
            4 + kv
                .iter()
                .map(|(k, v)| 2 + words(k) + words(v))
                .sum::<usize>()
        }
        C::Binary(b) => 8 + b.len() / 4,
    }
}

/// Makes room first, so that building never collects.
fn build(ctx: &mut Context, c: &C, args: &mut [Term]) -> BifResult {
    ctx.ensure(words(c) + 16, args)?;
    super::input::build(ctx, c, args)
}

#[allow(dead_code)]
fn _atom(name: &str) -> Term {
    Term::atom(Atom::intern(name))
}
