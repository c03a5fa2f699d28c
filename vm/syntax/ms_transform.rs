//! `ets:fun2ms/1` and `dbg:fun2ms/1` applied to a literal fun: the match
//! specification the fun stands for, built at compile time as OTP's
//! ms_transform parse transform builds it (escript's interpreter does the
//! same at run time, so a script needs no `-include_lib` of
//! `ms_transform.hrl` for it).
//!
//! The translation, per fun clause and per `;` alternative of its guard:
//! - The head (one parameter: a tuple, record or variable for ets, a list
//!   for dbg) becomes a match pattern: each variable is `'$N'`, numbered
//!   in order of first appearance; `_` stays `'_'`; record fields not
//!   named are `'_'`. A variable bound to the whole parameter (`X = {..}`)
//!   is `'$_'`; a parameter that is only a variable is `'$1'`.
//! - Guard tests and body expressions become match-spec expressions:
//!   `{Op, A, B}` for operators, `{F, Args...}` for the guard BIFs, `{{...}}`
//!   for tuples, `{element, N, V}` for record fields, `{const, X}` for
//!   variables bound outside the fun and for atoms that start with `$`.
//!
//! Runs before records are expanded: the records of the module are
//! needed to lay out record patterns and constructions.

use std::collections::HashMap;

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::span::Span;
use num_bigint::BigInt;

/// Which `fun2ms` (the parameter each accepts and the functions allowed).
#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    Ets,
    Dbg,
}

/// The kind of `fun2ms` call `e` is, with its literal fun's clauses.
pub fn fun2ms_call(e: &Expr) -> Option<(Kind, &[Clause])> {
    let ExprKind::Call(target, args) = &e.kind else {
        return None;
    };
    let CallTarget::Remote(m, f) = target.as_ref() else {
        return None;
    };
    let (ExprKind::Atom(m), ExprKind::Atom(f)) = (&m.kind, &f.kind) else {
        return None;
    };
    let kind = match (m.as_str(), f.as_str()) {
        ("ets", "fun2ms") => Kind::Ets,
        ("dbg", "fun2ms") => Kind::Dbg,
        _ => return None,
    };
    match args.as_slice() {
        [
            Expr {
                kind: ExprKind::Fun(fun),
                ..
            },
        ] => match fun.as_ref() {
            Fun::Anonymous(clauses) => Some((kind, clauses)),
            _ => None,
        },
        _ => None,
    }
}

/// The match specification of a `fun2ms` fun, as an expression (it holds
/// the variables the fun takes from outside, so it is built at run time).
pub fn translate(
    kind: Kind,
    clauses: &[Clause],
    records: &HashMap<String, RecordDef>,
    span: Span,
) -> Result<Expr, Diagnostic> {
    let mut out = Vec::new();
    for clause in clauses {
        let mut t = Translator {
            kind,
            records,
            vars: HashMap::new(),
            next: 1,
            span,
        };
        let head = t.head(clause)?;
        let body = clause
            .body
            .iter()
            .map(|e| t.expr(e, Place::Body))
            .collect::<Result<Vec<_>, _>>()?;
        let alternatives: Vec<&[Expr]> = if clause.guard.is_empty() {
            vec![&[]]
        } else {
            clause.guard.iter().map(Vec::as_slice).collect()
        };
        for tests in alternatives {
            let conditions = tests
                .iter()
                .map(|e| t.expr(e, Place::Guard))
                .collect::<Result<Vec<_>, _>>()?;
            out.push(tuple(
                vec![
                    head.clone(),
                    list(conditions, span),
                    list(body.clone(), span),
                ],
                span,
            ));
        }
    }
    Ok(list(out, span))
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Guard,
    Body,
}

impl Place {
    fn name(self) -> &'static str {
        match self {
            Place::Guard => "guard",
            Place::Body => "body",
        }
    }
}

struct Translator<'a> {
    kind: Kind,
    records: &'a HashMap<String, RecordDef>,
    /// Head variables and the match variable each stands for.
    vars: HashMap<String, String>,
    next: usize,
    span: Span,
}

fn atom(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Atom(name.to_string()), span)
}

fn tuple(elements: Vec<Expr>, span: Span) -> Expr {
    Expr::new(ExprKind::Tuple(elements), span)
}

fn list(elements: Vec<Expr>, span: Span) -> Expr {
    Expr::new(ExprKind::List(elements, None), span)
}

/// Functions a match specification may call in guards and bodies.
const GUARD_FUNCTIONS: &[(&str, usize)] = &[
    ("is_atom", 1),
    ("is_float", 1),
    ("is_integer", 1),
    ("is_list", 1),
    ("is_number", 1),
    ("is_pid", 1),
    ("is_port", 1),
    ("is_reference", 1),
    ("is_tuple", 1),
    ("is_map", 1),
    ("is_map_key", 2),
    ("is_binary", 1),
    ("is_function", 1),
    ("is_record", 3),
    ("is_seq_trace", 0),
    ("abs", 1),
    ("element", 2),
    ("hd", 1),
    ("length", 1),
    ("map_get", 2),
    ("map_size", 1),
    ("node", 0),
    ("node", 1),
    ("round", 1),
    ("size", 1),
    ("bit_size", 1),
    ("byte_size", 1),
    ("tl", 1),
    ("trunc", 1),
    ("binary_part", 2),
    ("binary_part", 3),
    ("float", 1),
    ("self", 0),
    ("get_tcw", 0),
];

/// The trace actions only `dbg:fun2ms` bodies may call.
const ACTION_FUNCTIONS: &[(&str, usize)] = &[
    ("set_seq_token", 2),
    ("get_seq_token", 0),
    ("message", 1),
    ("return_trace", 0),
    ("exception_trace", 0),
    ("process_dump", 0),
    ("enable_trace", 1),
    ("enable_trace", 2),
    ("disable_trace", 1),
    ("disable_trace", 2),
    ("trace", 2),
    ("trace", 3),
    ("display", 1),
    ("caller", 0),
    ("set_tcw", 1),
    ("silent", 1),
];

impl Translator<'_> {
    fn error(&self, message: String, span: Span) -> Diagnostic {
        Diagnostic::error(message, span)
    }

    fn record(&self, name: &Name) -> Result<&RecordDef, Diagnostic> {
        self.records
            .get(&name.name)
            .ok_or_else(|| self.error(format!("record {} undefined", name.name), name.span))
    }

    fn field_index(&self, def: &RecordDef, field: &Name) -> Result<usize, Diagnostic> {
        def.fields
            .iter()
            .position(|f| f.name.name == field.name)
            .map(|i| i + 2)
            .ok_or_else(|| {
                self.error(
                    format!("field {} undefined in record {}", field.name, def.name.name),
                    field.span,
                )
            })
    }

    /// The match pattern of a clause's one parameter.
    fn head(&mut self, clause: &Clause) -> Result<Expr, Diagnostic> {
        let (what, name) = match self.kind {
            Kind::Ets => ("tuple", "ets"),
            Kind::Dbg => ("list", "dbg"),
        };
        let bad = || {
            Diagnostic::error(
                format!("{name}:fun2ms requires fun with single variable or {what} parameter"),
                clause.span,
            )
        };
        let [param] = clause.patterns.as_slice() else {
            return Err(bad());
        };
        let shape_ok = |e: &Expr| {
            matches!(
                (&e.kind, self.kind),
                (ExprKind::Var(_), _)
                    | (ExprKind::Tuple(_) | ExprKind::Record(..), Kind::Ets)
                    | (ExprKind::List(..) | ExprKind::String(_), Kind::Dbg)
            )
        };
        match &param.kind {
            ExprKind::Var(v) if v != "_" => {
                self.vars.insert(v.clone(), "$1".to_string());
                self.next = 2;
                Ok(atom("$1", self.span))
            }
            ExprKind::Match(a, b) => {
                let (whole, pattern) = match (&a.kind, &b.kind) {
                    (ExprKind::Var(v), _) if shape_ok(b) => (v, b),
                    (_, ExprKind::Var(v)) if shape_ok(a) => (v, a),
                    _ => return Err(bad()),
                };
                if whole != "_" {
                    self.vars.insert(whole.clone(), "$_".to_string());
                }
                self.pattern(pattern)
            }
            _ if shape_ok(param) => self.pattern(param),
            _ => Err(bad()),
        }
    }

    fn pattern(&mut self, p: &Expr) -> Result<Expr, Diagnostic> {
        let span = self.span;
        Ok(match &p.kind {
            ExprKind::Var(v) if v == "_" => atom("_", span),
            ExprKind::Var(v) => match self.vars.get(v) {
                Some(m) => atom(m, span),
                None => {
                    let m = format!("${}", self.next);
                    self.next += 1;
                    self.vars.insert(v.clone(), m.clone());
                    atom(&m, span)
                }
            },
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
                p.clone()
            }
            ExprKind::UnaryOp(UnaryOp::Minus | UnaryOp::Plus, inner)
                if matches!(inner.kind, ExprKind::Integer(_) | ExprKind::Float(_)) =>
            {
                p.clone()
            }
            ExprKind::Binary(_) => p.clone(),
            ExprKind::Tuple(es) => tuple(
                es.iter()
                    .map(|e| self.pattern(e))
                    .collect::<Result<_, _>>()?,
                span,
            ),
            ExprKind::List(es, tail) => {
                let es = es
                    .iter()
                    .map(|e| self.pattern(e))
                    .collect::<Result<_, _>>()?;
                let tail = match tail {
                    Some(t) => Some(Box::new(self.pattern(t)?)),
                    None => None,
                };
                Expr::new(ExprKind::List(es, tail), span)
            }
            ExprKind::Map(fields) => {
                let mut out = Vec::new();
                for f in fields {
                    out.push(MapField {
                        key: f.key.clone(),
                        value: self.pattern(&f.value)?,
                        exact: false,
                        span,
                    });
                }
                Expr::new(ExprKind::Map(out), span)
            }
            ExprKind::Record(name, fields) => {
                let def = self.record(name)?.clone();
                let rest = fields.iter().find(|f| f.name.name == "_");
                let mut elements = vec![atom(&def.name.name, span)];
                for field in &def.fields {
                    let given = fields.iter().find(|f| f.name.name == field.name.name);
                    elements.push(match (given, rest) {
                        (Some(f), _) | (None, Some(f)) => self.pattern(&f.value)?,
                        (None, None) => atom("_", span),
                    });
                }
                for f in fields {
                    if f.name.name != "_" {
                        self.field_index(&def, &f.name)?;
                    }
                }
                tuple(elements, span)
            }
            ExprKind::RecordIndex(name, field) => {
                let def = self.record(name)?.clone();
                let i = self.field_index(&def, field)?;
                Expr::new(ExprKind::Integer(BigInt::from(i)), span)
            }
            ExprKind::Match(..) => {
                return Err(self.error(
                    "fun with match in head other than of the whole parameter cannot be \
                     translated into match_spec"
                        .to_string(),
                    p.span,
                ));
            }
            _ => {
                return Err(self.error(
                    "fun head cannot be translated into match_spec".to_string(),
                    p.span,
                ));
            }
        })
    }

    /// A guard test or body expression as a match-spec expression.
    fn expr(&mut self, e: &Expr, place: Place) -> Result<Expr, Diagnostic> {
        let span = self.span;
        Ok(match &e.kind {
            ExprKind::Var(v) => match self.vars.get(v) {
                Some(m) => atom(m, span),
                None => tuple(vec![atom("const", span), e.clone()], span),
            },
            ExprKind::Atom(a) if a.starts_with('$') => {
                tuple(vec![atom("const", span), e.clone()], span)
            }
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
                e.clone()
            }
            ExprKind::Binary(elements)
                if elements.iter().all(|el| {
                    matches!(el.value.kind, ExprKind::String(_) | ExprKind::Integer(_))
                        && el.size.is_none()
                        && el.specifiers.is_empty()
                }) =>
            {
                e.clone()
            }
            ExprKind::Tuple(es) => {
                let es = self.exprs(es, place)?;
                tuple(vec![tuple(es, span)], span)
            }
            ExprKind::List(es, tail) => {
                let es = self.exprs(es, place)?;
                let tail = match tail {
                    Some(t) => Some(Box::new(self.expr(t, place)?)),
                    None => None,
                };
                Expr::new(ExprKind::List(es, tail), span)
            }
            ExprKind::Map(fields) => {
                let mut out = Vec::new();
                for f in fields {
                    out.push(MapField {
                        key: self.expr(&f.key, place)?,
                        value: self.expr(&f.value, place)?,
                        exact: false,
                        span,
                    });
                }
                Expr::new(ExprKind::Map(out), span)
            }
            ExprKind::BinaryOp(op, a, b) => {
                let (a, b) = (self.expr(a, place)?, self.expr(b, place)?);
                tuple(vec![atom(op.symbol(), span), a, b], span)
            }
            ExprKind::UnaryOp(op, a) => {
                if let (UnaryOp::Minus, ExprKind::Integer(n)) = (op, &a.kind) {
                    return Ok(Expr::new(ExprKind::Integer(-n.clone()), span));
                }
                if let (UnaryOp::Minus, ExprKind::Float(f)) = (op, &a.kind) {
                    return Ok(Expr::new(ExprKind::Float(-f), span));
                }
                let a = self.expr(a, place)?;
                tuple(vec![atom(op.symbol(), span), a], span)
            }
            ExprKind::Block(es) if es.len() == 1 => self.expr(&es[0], place)?,
            ExprKind::Call(target, args) => self.call(e, target, args, place)?,
            ExprKind::Record(name, fields) => {
                let def = self.record(name)?.clone();
                let rest = fields.iter().find(|f| f.name.name == "_");
                let mut elements = vec![atom(&def.name.name, span)];
                for field in &def.fields {
                    let given = fields.iter().find(|f| f.name.name == field.name.name);
                    elements.push(match (given, rest, &field.default) {
                        (Some(f), _, _) | (None, Some(f), _) => self.expr(&f.value, place)?,
                        (None, None, Some(default)) => self.expr(default, place)?,
                        (None, None, None) => atom("undefined", span),
                    });
                }
                for f in fields {
                    if f.name.name != "_" {
                        self.field_index(&def, &f.name)?;
                    }
                }
                tuple(vec![tuple(elements, span)], span)
            }
            ExprKind::RecordAccess(record, name, field) => {
                let def = self.record(name)?.clone();
                let i = self.field_index(&def, field)?;
                let record = self.expr(record, place)?;
                let index = Expr::new(ExprKind::Integer(BigInt::from(i)), span);
                tuple(vec![atom("element", span), index, record], span)
            }
            ExprKind::RecordUpdate(record, name, fields) => {
                let def = self.record(name)?.clone();
                let record = self.expr(record, place)?;
                let mut elements = vec![atom(&def.name.name, span)];
                for (i, field) in def.fields.iter().enumerate() {
                    let given = fields.iter().find(|f| f.name.name == field.name.name);
                    elements.push(match given {
                        Some(f) => self.expr(&f.value, place)?,
                        None => {
                            let index = Expr::new(ExprKind::Integer(BigInt::from(i + 2)), span);
                            tuple(vec![atom("element", span), index, record.clone()], span)
                        }
                    });
                }
                for f in fields {
                    self.field_index(&def, &f.name)?;
                }
                tuple(vec![tuple(elements, span)], span)
            }
            ExprKind::RecordIndex(name, field) => {
                let def = self.record(name)?.clone();
                let i = self.field_index(&def, field)?;
                Expr::new(ExprKind::Integer(BigInt::from(i)), span)
            }
            ExprKind::Match(..) => {
                return Err(self.error(
                    format!(
                        "fun with {} matching ('=' in {}) is illegal as match_spec",
                        place.name(),
                        place.name()
                    ),
                    e.span,
                ));
            }
            _ => {
                return Err(self.error(
                    format!(
                        "fun with this expression in its {} cannot be translated into \
                         match_spec",
                        place.name()
                    ),
                    e.span,
                ));
            }
        })
    }

    fn exprs(&mut self, es: &[Expr], place: Place) -> Result<Vec<Expr>, Diagnostic> {
        es.iter().map(|e| self.expr(e, place)).collect()
    }

    fn call(
        &mut self,
        e: &Expr,
        target: &CallTarget,
        args: &[Expr],
        place: Place,
    ) -> Result<Expr, Diagnostic> {
        let span = self.span;
        let name = match target {
            CallTarget::Local(name, _) => name.clone(),
            CallTarget::Remote(
                Expr {
                    kind: ExprKind::Atom(m),
                    ..
                },
                Expr {
                    kind: ExprKind::Atom(f),
                    ..
                },
            ) if m == "erlang" => f.clone(),
            CallTarget::Remote(
                Expr {
                    kind: ExprKind::Atom(m),
                    ..
                },
                Expr {
                    kind: ExprKind::Atom(f),
                    ..
                },
            ) => {
                return Err(self.error(
                    format!(
                        "fun containing the remote function call '{m}:{f}/{}' (called in {}) \
                         cannot be translated into match_spec",
                        args.len(),
                        place.name()
                    ),
                    e.span,
                ));
            }
            _ => {
                return Err(self.error(
                    format!(
                        "fun containing a call of a fun (in {}) cannot be translated into \
                         match_spec",
                        place.name()
                    ),
                    e.span,
                ));
            }
        };
        let arity = args.len();
        match (name.as_str(), args) {
            ("object", []) => return Ok(atom("$_", span)),
            ("bindings", []) => return Ok(atom("$*", span)),
            ("is_record", [value, record]) => {
                if let ExprKind::Atom(r) = &record.kind
                    && let Some(def) = self.records.get(r)
                {
                    let size = def.fields.len() + 1;
                    let value = self.expr(value, place)?;
                    return Ok(tuple(
                        vec![
                            atom("is_record", span),
                            value,
                            record.clone(),
                            Expr::new(ExprKind::Integer(BigInt::from(size)), span),
                        ],
                        span,
                    ));
                }
            }
            _ => {}
        }
        let allowed = GUARD_FUNCTIONS.contains(&(name.as_str(), arity))
            || (self.kind == Kind::Dbg
                && place == Place::Body
                && ACTION_FUNCTIONS.contains(&(name.as_str(), arity)));
        if !allowed {
            return Err(self.error(
                format!(
                    "fun containing the local function call '{name}/{arity}' (called in {}) \
                     cannot be translated into match_spec",
                    place.name()
                ),
                e.span,
            ));
        }
        let mut elements = vec![atom(&name, span)];
        elements.extend(self.exprs(args, place)?);
        Ok(tuple(elements, span))
    }
}
