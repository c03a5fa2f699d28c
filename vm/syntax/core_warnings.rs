//! The warnings OTP's translation to Core Erlang (v3_core) gives under
//! escript's `-mode(compile)` about maps and patterns, found from the
//! program's text alone:
//!
//! - a map expression (`#{...}` or `M#{...}`) that gives a literal key
//!   twice: "key K will be overridden in expression", at each field whose
//!   key a later field of the same expression gives again (`-1` and `1+1`
//!   are not literals there, as in OTP);
//! - a clause (of a function, fun, `case`, `receive` or `try ... of`)
//!   with a pattern that no term can match: "pattern cannot possibly
//!   match", at the clause. A pattern is impossible when two patterns it
//!   joins must match the same term and clash: the two sides of `P1 = P2`,
//!   or the values of one literal key given twice in a map pattern
//!   (`#{k := 1, k := 2}`). Two patterns clash when they are different
//!   literals or different shapes (a tuple and a list, tuples of different
//!   sizes, `[]` and `[_|_]`), or when their parts do.
//! - a binary construction whose literal segments must fail: "binary
//!   construction will fail because the size of a segment is invalid" at
//!   the segment (a negative or non-integer size), "... because of a type
//!   mismatch" (`<<a:8>>`, `<<1.5/integer>>`, `<<"s"/binary>>`) and
//!   "... with a 'badarg' exception (invalid Unicode code point in a
//!   utf8/utf16/utf32 segment)" at the binary; the first failing segment
//!   only.
//!
//! Invariants: only literal terms are compared, so a warning is never
//! given where a match could succeed. Inside a macro's expansion a
//! warning is where OTP gives it: at the macro's name for what its
//! replacement wrote, at their own places for its arguments.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::span::Span;
use crate::term::print::{format_float, is_printable_char, write_atom, write_string};

const OVERRIDDEN: &str = "will be overridden in expression";
const CANNOT_MATCH: &str = "pattern cannot possibly match";

struct Walk {
    warnings: Vec<Diagnostic>,
}

/// The warnings about repeated map keys and impossible patterns, in the
/// order of the module's text.
pub fn warnings(module: &Module) -> Vec<Diagnostic> {
    let mut walk = Walk {
        warnings: Vec::new(),
    };
    for form in &module.forms {
        if let Form::Function(function) = form {
            for clause in &function.clauses {
                walk.clause(&clause.clause, clause.name_span.start);
            }
        }
    }
    walk.warnings.sort_by_key(|d| d.span.start);
    walk.warnings
}

impl Walk {
    /// Warns at `at` (inside a macro's expansion too, as OTP does: at the
    /// macro's name for what its replacement wrote).
    fn warn(&mut self, message: String, at: u32) {
        let at = at as usize;
        self.warnings
            .push(Diagnostic::warning(message, Span::new(at, at + 1)));
    }

    /// A clause whose warning about its patterns is given at `at`.
    fn clause(&mut self, clause: &Clause, at: u32) {
        if clause.patterns.iter().any(impossible) {
            self.warn(CANNOT_MATCH.into(), at);
        }
        for e in clause.guard.iter().flatten().chain(&clause.body) {
            self.expr(e);
        }
    }

    fn clauses(&mut self, clauses: &[Clause]) {
        for clause in clauses {
            self.clause(clause, clause.span.start);
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Map(fields) if fields.iter().any(|f| !f.exact) => self.map(fields),
            ExprKind::MapUpdate(_, fields) => self.map(fields),
            ExprKind::Case(_, clauses) => self.clauses(clauses),
            ExprKind::Receive(clauses, _) => self.clauses(clauses),
            ExprKind::Try(t) => self.clauses(&t.of_clauses),
            ExprKind::Fun(f) => match &**f {
                Fun::Anonymous(clauses) | Fun::Named(_, clauses) => self.clauses(clauses),
                _ => {}
            },
            _ => {}
        }
        // The clauses were walked above; everything else is reached here.
        let mut children = Vec::new();
        match &expr.kind {
            ExprKind::Case(subject, _) => children.push(&**subject),
            ExprKind::Receive(_, after) => {
                if let Some(after) = after {
                    children.push(&after.timeout);
                    children.extend(&after.body);
                }
            }
            ExprKind::Try(t) => {
                children.extend(&t.body);
                children.extend(&t.after);
                for c in &t.catch_clauses {
                    children.extend(c.guard.iter().flatten().chain(&c.body));
                }
            }
            ExprKind::Fun(_) => {}
            // Patterns are not constructions: only the matched side.
            ExprKind::Match(_, value) => children.push(&**value),
            ExprKind::ListComprehension(head, qualifiers)
            | ExprKind::BinaryComprehension(head, qualifiers) => {
                children.push(&**head);
                for q in qualifiers {
                    match q {
                        Qualifier::Generator(_, e)
                        | Qualifier::BinaryGenerator(_, e)
                        | Qualifier::Filter(e) => children.push(e),
                    }
                }
            }
            ExprKind::Binary(elements) => {
                if let Some((message, at)) = failing_construction(elements) {
                    self.warn(message, at.unwrap_or(expr.span.start));
                }
                super::walk::children(expr, &mut children);
            }
            _ => super::walk::children(expr, &mut children),
        }
        for child in children {
            self.expr(child);
        }
    }

    /// Each field of a map expression whose literal key a later one repeats.
    fn map(&mut self, fields: &[MapField]) {
        let keys: Vec<Option<Literal>> = fields.iter().map(|f| literal(&f.key)).collect();
        for (i, key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            if keys[i + 1..].iter().any(|k| k.as_ref() == Some(key))
                && let Some(shown) = show(key)
            {
                self.warn(
                    format!("key {shown} {OVERRIDDEN}"),
                    fields[i].key.span.start,
                );
            }
        }
    }
}

/// A literal term as written: the terms compare equal exactly when these do.
#[derive(Debug, Clone, PartialEq)]
enum Literal {
    Int(num_bigint::BigInt),
    /// The bits, so that equality is exact (`1` and `1.0` differ).
    Float(u64),
    Atom(String),
    Nil,
    Cons(Box<Literal>, Box<Literal>),
    Tuple(Vec<Literal>),
    Binary(Vec<u8>),
}

/// The literal `expr` writes, if it is one.
fn literal(expr: &Expr) -> Option<Literal> {
    Some(match &expr.kind {
        ExprKind::Integer(i) => Literal::Int(i.clone()),
        ExprKind::Float(f) => Literal::Float(f.to_bits()),
        ExprKind::Atom(a) => Literal::Atom(a.clone()),
        ExprKind::String(chars) => chars.iter().rev().fold(Literal::Nil, |tail, c| {
            Literal::Cons(Box::new(Literal::Int((*c).into())), Box::new(tail))
        }),
        ExprKind::List(elements, tail) => {
            let mut list = match tail {
                Some(tail) => literal(tail)?,
                None => Literal::Nil,
            };
            for e in elements.iter().rev() {
                list = Literal::Cons(Box::new(literal(e)?), Box::new(list));
            }
            list
        }
        ExprKind::Tuple(elements) => {
            Literal::Tuple(elements.iter().map(literal).collect::<Option<_>>()?)
        }
        ExprKind::Binary(elements) => {
            let mut bytes = Vec::new();
            for e in elements {
                if e.size.is_some() || !e.specifiers.is_empty() {
                    return None;
                }
                match &e.value.kind {
                    ExprKind::String(chars) => bytes.extend(chars.iter().map(|c| *c as u8)),
                    ExprKind::Integer(i) => {
                        let low = i & num_bigint::BigInt::from(255);
                        bytes.push(u8::try_from(low).ok()?);
                    }
                    _ => return None,
                }
            }
            Literal::Binary(bytes)
        }
        _ => return None,
    })
}

/// A literal as OTP's `~P` writes it in the warning, or `None` where act
/// is not sure of the text (then nothing is warned).
fn show(l: &Literal) -> Option<String> {
    let mut out = String::new();
    show_into(&mut out, l)?;
    // An atom key is always quoted (`key 'a' will be ...`).
    if matches!(l, Literal::Atom(_)) && !out.starts_with('\'') {
        out = format!("'{out}'");
    }
    Some(out)
}

fn show_into(out: &mut String, l: &Literal) -> Option<()> {
    match l {
        Literal::Int(i) => out.push_str(&i.to_string()),
        Literal::Float(bits) => out.push_str(&format_float(f64::from_bits(*bits))),
        Literal::Atom(a) => write_atom(out, crate::term::Atom::intern(a)),
        Literal::Nil => out.push_str("[]"),
        Literal::Cons(..) => {
            let mut items = Vec::new();
            let mut rest = l;
            while let Literal::Cons(head, tail) = rest {
                items.push(&**head);
                rest = tail;
            }
            let chars: Option<Vec<u32>> = items
                .iter()
                .map(|i| match i {
                    Literal::Int(c) => u32::try_from(c)
                        .ok()
                        .filter(|c| is_printable_char(*c as i64)),
                    _ => None,
                })
                .collect();
            match chars {
                Some(chars) if *rest == Literal::Nil => write_string(out, chars),
                _ => {
                    out.push('[');
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            out.push(',');
                        }
                        show_into(out, item)?;
                    }
                    if *rest != Literal::Nil {
                        out.push('|');
                        show_into(out, rest)?;
                    }
                    out.push(']');
                }
            }
        }
        Literal::Tuple(items) => {
            out.push('{');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(',');
                }
                show_into(out, item)?;
            }
            out.push('}');
        }
        Literal::Binary(bytes) => {
            out.push_str("<<");
            if !bytes.is_empty() && bytes.iter().all(|b| is_printable_char(*b as i64)) {
                write_string(out, bytes.iter().map(|b| *b as u32));
            } else {
                let shown: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
                out.push_str(&shown.join(","));
            }
            out.push_str(">>");
        }
    }
    Some(())
}

/// The shape of a pattern as far as a clash can be seen.
enum Shape {
    /// A variable, or anything whose value is not fixed here.
    Any,
    Literal(Literal),
    Tuple(Vec<Expr>),
    Cons(Expr, Expr),
    Map,
}

fn shape(p: &Expr) -> Shape {
    let at = |kind| Expr { kind, span: p.span };
    match &p.kind {
        ExprKind::Tuple(elements) => Shape::Tuple(elements.clone()),
        ExprKind::String(chars) if !chars.is_empty() => Shape::Cons(
            at(ExprKind::Integer(chars[0].into())),
            at(ExprKind::String(chars[1..].to_vec())),
        ),
        ExprKind::List(elements, tail) if !elements.is_empty() => {
            let rest = match (elements.len(), tail) {
                (1, Some(tail)) => (**tail).clone(),
                _ => at(ExprKind::List(elements[1..].to_vec(), tail.clone())),
            };
            Shape::Cons(elements[0].clone(), rest)
        }
        ExprKind::Map(_) => Shape::Map,
        ExprKind::Match(a, b) => match shape(a) {
            Shape::Any => shape(b),
            s => s,
        },
        _ => match literal(p) {
            Some(l) => Shape::Literal(l),
            None => Shape::Any,
        },
    }
}

/// Whether no term can match both `a` and `b`.
fn clash(a: &Expr, b: &Expr) -> bool {
    match (shape(a), shape(b)) {
        (Shape::Any, _) | (_, Shape::Any) => false,
        (Shape::Literal(x), Shape::Literal(y)) => x != y,
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() != y.len() || x.iter().zip(&y).any(|(p, q)| clash(p, q))
        }
        (Shape::Cons(h1, t1), Shape::Cons(h2, t2)) => clash(&h1, &h2) || clash(&t1, &t2),
        (Shape::Map, Shape::Map) => false,
        // Different kinds of term: a literal (a number, an atom, `[]`, a
        // binary) against a tuple, a list cell or a map, and so on.
        _ => true,
    }
}

/// Whether no term can match the pattern.
fn impossible(p: &Expr) -> bool {
    match &p.kind {
        ExprKind::Match(a, b) => impossible(a) || impossible(b) || clash(a, b),
        ExprKind::Map(fields) => {
            fields.iter().any(|f| impossible(&f.value))
                || fields.iter().enumerate().any(|(i, f)| {
                    literal(&f.key).is_some_and(|key| {
                        fields[i + 1..].iter().any(|g| {
                            literal(&g.key).as_ref() == Some(&key) && clash(&f.value, &g.value)
                        })
                    })
                })
        }
        ExprKind::Tuple(elements) => elements.iter().any(impossible),
        ExprKind::List(elements, tail) => {
            elements.iter().any(impossible) || tail.as_deref().is_some_and(impossible)
        }
        _ => false,
    }
}

/// Why building a binary of these segments must fail, with the offset of
/// the segment when the warning is given there (else at the binary).
fn failing_construction(elements: &[BinElement]) -> Option<(String, Option<u32>)> {
    use super::bitspec::{SegSpec, SegType};
    const FAIL: &str = "binary construction will fail";
    for element in elements {
        let spec = SegSpec::of(element).ok()?;
        if let Some(size) = &element.size {
            let bad = match super::fold::number(size) {
                Some(super::lexer::Number::Integer(n)) => n < num_bigint::BigInt::from(0),
                Some(super::lexer::Number::Float(_)) => true,
                None => matches!(
                    size.kind,
                    ExprKind::Atom(_) | ExprKind::String(_) | ExprKind::Tuple(_)
                ),
            };
            if bad {
                let why = "because the size of a segment is invalid";
                return Some((format!("{FAIL} {why}"), Some(element.span.start)));
            }
        }
        let value = &element.value.kind;
        let mismatch = match spec.ty {
            SegType::Integer => matches!(
                value,
                ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::Tuple(_) | ExprKind::Map(_)
            ),
            SegType::Float => {
                matches!(
                    value,
                    ExprKind::Atom(_) | ExprKind::Tuple(_) | ExprKind::Map(_)
                )
            }
            SegType::Binary | SegType::Bitstring => matches!(
                value,
                ExprKind::Integer(_)
                    | ExprKind::Float(_)
                    | ExprKind::Atom(_)
                    | ExprKind::String(_)
                    | ExprKind::Tuple(_)
                    | ExprKind::Map(_)
            ),
            SegType::Utf8 | SegType::Utf16 | SegType::Utf32 => {
                if let Some(super::lexer::Number::Integer(n)) = super::fold::number(&element.value)
                {
                    let code = num_traits::ToPrimitive::to_u32(&n);
                    if code.is_none_or(|c| char::from_u32(c).is_none()) {
                        let why = "with a 'badarg' exception (invalid Unicode code point \
                                   in a utf8/utf16/utf32 segment)";
                        return Some((format!("{FAIL} {why}"), None));
                    }
                }
                matches!(
                    value,
                    ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::Tuple(_) | ExprKind::Map(_)
                )
            }
        };
        if mismatch {
            return Some((format!("{FAIL} because of a type mismatch"), None));
        }
    }
    None
}
