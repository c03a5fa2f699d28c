//! What erlc does to a parsed module before linting it, done on act's
//! AST: records become tuple operations (as OTP's erl_expand_records
//! does), and calls to functions named by `-import` become remote calls.
//!
//! Records, as in OTP 25:
//! - `#r{a = 1}` is the tuple `{r, 1, Default...}`, a default evaluated
//!   where the record is made; `_ = V` gives every field not named `V`.
//! - In a pattern, `#r{a = P}` is `{r, P, _, ...}`; `#r.a` is the field's
//!   position in the tuple.
//! - `R#r.a` in a body is `case R of {r, _, V, _} -> V; V ->
//!   erlang:error({badrecord, V}) end`; in a guard it is `element(2, R)`
//!   and the guard also tests that `R` is an `r` record.
//! - `R#r{a = 1}` evaluates the new values, then `R`, checks that it is an
//!   `r` record and builds the new tuple from the fields it keeps (erlc
//!   uses `setelement/3`; the value is the same).
//! - `record_info(fields | size, r)` and `is_record(X, r)` are resolved
//!   here; an undefined record or field is an error, as erl_lint reports.
//!
//! Fresh variables made here are named `%r<N>`, a name no source text can
//! spell, so they can never meet a variable of the program.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::span::Span;
use num_bigint::BigInt;
use std::collections::HashMap;

/// Expands records and imports in `module`; returns the errors found.
/// The module that comes out has no record expressions left, even when
/// there were errors, so later passes may check the rest of it.
pub fn expand(module: &mut Module) -> Vec<Diagnostic> {
    let mut defined = std::collections::HashSet::new();
    for form in &module.forms {
        if let Form::Function(f) = form {
            defined.insert((f.name.clone(), f.arity));
        }
    }
    let mut x = Expander {
        records: HashMap::new(),
        imports: HashMap::new(),
        defined,
        diagnostics: Vec::new(),
        fresh: 0,
    };
    for form in &mut module.forms {
        match form {
            Form::Attribute(Attribute {
                kind: AttributeKind::Record(def),
                ..
            }) => x.define(def),
            Form::Attribute(Attribute {
                kind: AttributeKind::Import(m, names),
                ..
            }) => {
                for n in names {
                    x.imports.insert((n.name.clone(), n.arity), m.clone());
                }
            }
            Form::Attribute(_) => {}
            Form::Function(f) => {
                for clause in &mut f.clauses {
                    x.clause(&mut clause.clause);
                }
            }
        }
    }
    x.diagnostics
}

struct Expander {
    records: HashMap<String, RecordDef>,
    imports: HashMap<(String, u32), String>,
    defined: std::collections::HashSet<(String, u32)>,
    diagnostics: Vec<Diagnostic>,
    fresh: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Body,
    Pattern,
    Guard,
}

fn atom(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Atom(name.to_string()), span)
}

fn int(n: usize, span: Span) -> Expr {
    Expr::new(ExprKind::Integer(BigInt::from(n)), span)
}

fn var(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Var(name.to_string()), span)
}

fn remote(module: &str, function: &str, args: Vec<Expr>, span: Span) -> Expr {
    Expr::new(
        ExprKind::Call(
            Box::new(CallTarget::Remote(atom(module, span), atom(function, span))),
            args,
        ),
        span,
    )
}

fn local(function: &str, args: Vec<Expr>, span: Span) -> Expr {
    Expr::new(
        ExprKind::Call(
            Box::new(CallTarget::Local(function.to_string(), span)),
            args,
        ),
        span,
    )
}

fn clause(patterns: Vec<Expr>, body: Vec<Expr>, span: Span) -> Clause {
    Clause {
        patterns,
        guard: Vec::new(),
        body,
        span,
    }
}

fn placeholder(span: Span) -> Expr {
    atom("undefined", span)
}

/// `E1 andalso E2`
fn and_also(a: Expr, b: Expr, span: Span) -> Expr {
    Expr::new(
        ExprKind::BinaryOp(BinaryOp::AndAlso, Box::new(a), Box::new(b)),
        span,
    )
}

/// The guard test that `e` is an `name` record of `size` elements.
fn record_test(e: &Expr, name: &str, size: usize, span: Span) -> Expr {
    let is_tuple = local("is_tuple", vec![e.clone()], span);
    let size_ok = Expr::new(
        ExprKind::BinaryOp(
            BinaryOp::ExactEq,
            Box::new(local("tuple_size", vec![e.clone()], span)),
            Box::new(int(size, span)),
        ),
        span,
    );
    let tag_ok = Expr::new(
        ExprKind::BinaryOp(
            BinaryOp::ExactEq,
            Box::new(local("element", vec![int(1, span), e.clone()], span)),
            Box::new(atom(name, span)),
        ),
        span,
    );
    and_also(is_tuple, and_also(size_ok, tag_ok, span), span)
}

impl Expander {
    fn error(&mut self, message: String, span: Span) {
        self.diagnostics.push(Diagnostic::error(message, span));
    }

    fn fresh_var(&mut self, span: Span) -> Expr {
        self.fresh += 1;
        var(&format!("%r{}", self.fresh), span)
    }

    fn define(&mut self, def: &mut RecordDef) {
        if self.records.contains_key(&def.name.name) {
            self.error(
                format!("record {} already defined", def.name.name),
                def.name.span,
            );
            return;
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut duplicate = None;
        for field in &def.fields {
            if seen.contains(&field.name.name.as_str()) {
                duplicate = Some(field.name.clone());
                break;
            }
            seen.push(&field.name.name);
        }
        if let Some(field) = duplicate {
            self.error(
                format!(
                    "field {} already defined in record {}",
                    field.name, def.name.name
                ),
                field.span,
            );
            return;
        }
        for field in &mut def.fields {
            if let Some(default) = &mut field.default {
                self.expr(default, Ctx::Body, &mut Vec::new());
            }
        }
        self.records.insert(def.name.name.clone(), def.clone());
    }

    /// The definition of record `name`, or an error at its use.
    fn record(&mut self, name: &Name) -> Option<RecordDef> {
        let found = self.records.get(&name.name).cloned();
        if found.is_none() {
            self.error(format!("record {} undefined", name.name), name.span);
        }
        found
    }

    /// The 1-based tuple position of `field` in `def` (the name is at 1).
    fn index(&mut self, def: &RecordDef, field: &Name) -> Option<usize> {
        let found = def.fields.iter().position(|f| f.name.name == field.name);
        if found.is_none() {
            self.error(
                format!("field {} undefined in record {}", field.name, def.name.name),
                field.span,
            );
        }
        found.map(|i| i + 2)
    }

    fn clause(&mut self, c: &mut Clause) {
        for p in &mut c.patterns {
            self.expr(p, Ctx::Pattern, &mut Vec::new());
        }
        self.guard(&mut c.guard);
        for e in &mut c.body {
            self.expr(e, Ctx::Body, &mut Vec::new());
        }
    }

    /// Each test of a guard that reads a record field is preceded by the
    /// test that the value is such a record (a failing test fails the
    /// guard, where the body would raise `badrecord`).
    fn guard(&mut self, guard: &mut Guard) {
        for conjunction in guard.iter_mut() {
            let mut tests = Vec::with_capacity(conjunction.len());
            for mut test in std::mem::take(conjunction) {
                let mut checks = Vec::new();
                self.expr(&mut test, Ctx::Guard, &mut checks);
                tests.extend(checks);
                tests.push(test);
            }
            *conjunction = tests;
        }
    }

    fn exprs(&mut self, es: &mut [Expr], ctx: Ctx, checks: &mut Vec<Expr>) {
        for e in es {
            self.expr(e, ctx, checks);
        }
    }

    fn body(&mut self, es: &mut [Expr]) {
        for e in es {
            self.expr(e, Ctx::Body, &mut Vec::new());
        }
    }

    /// Expands `e` in place. In a guard, the record tests its field reads
    /// need are pushed to `checks`.
    fn expr(&mut self, e: &mut Expr, ctx: Ctx, checks: &mut Vec<Expr>) {
        let span = e.span;
        let spec = super::ms_transform::fun2ms_call(e).map(|(kind, clauses)| {
            super::ms_transform::translate(kind, clauses, &self.records, span)
        });
        if let Some(spec) = spec {
            *e = spec.unwrap_or_else(|d| {
                self.diagnostics.push(d);
                placeholder(span)
            });
            return;
        }
        match &mut e.kind {
            ExprKind::Integer(_)
            | ExprKind::Float(_)
            | ExprKind::Atom(_)
            | ExprKind::String(_)
            | ExprKind::Var(_) => {}
            ExprKind::List(elements, tail) => {
                self.exprs(elements, ctx, checks);
                if let Some(t) = tail {
                    self.expr(t, ctx, checks);
                }
            }
            ExprKind::Tuple(elements) => self.exprs(elements, ctx, checks),
            ExprKind::Block(elements) => self.exprs(elements, ctx, checks),
            ExprKind::Map(fields) => {
                for f in fields {
                    let key_ctx = if ctx == Ctx::Pattern { Ctx::Guard } else { ctx };
                    self.expr(&mut f.key, key_ctx, &mut Vec::new());
                    self.expr(&mut f.value, ctx, checks);
                }
            }
            ExprKind::MapUpdate(map, fields) => {
                self.expr(map, ctx, checks);
                for f in fields {
                    self.expr(&mut f.key, ctx, checks);
                    self.expr(&mut f.value, ctx, checks);
                }
            }
            ExprKind::Binary(elements) => {
                for el in elements {
                    self.expr(&mut el.value, ctx, checks);
                    if let Some(size) = &mut el.size {
                        let size_ctx = if ctx == Ctx::Pattern { Ctx::Guard } else { ctx };
                        self.expr(size, size_ctx, checks);
                    }
                }
            }
            ExprKind::BinaryOp(_, a, b) | ExprKind::Send(a, b) => {
                self.expr(a, ctx, checks);
                self.expr(b, ctx, checks);
            }
            ExprKind::Match(p, v) => {
                let left = if ctx == Ctx::Body { Ctx::Pattern } else { ctx };
                self.expr(p, left, checks);
                self.expr(v, ctx, checks);
            }
            ExprKind::UnaryOp(_, a) | ExprKind::Catch(a) => self.expr(a, ctx, checks),
            ExprKind::Call(target, args) => {
                self.exprs(args, ctx, checks);
                match target.as_mut() {
                    CallTarget::Local(..) => {}
                    CallTarget::Remote(m, f) => {
                        self.expr(m, ctx, checks);
                        self.expr(f, ctx, checks);
                    }
                    CallTarget::Fun(f) => self.expr(f, ctx, checks),
                }
                if let Some(replacement) = self.special_call(e, ctx) {
                    *e = replacement;
                }
            }
            ExprKind::Fun(fun) => match fun.as_mut() {
                Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                    for c in clauses {
                        self.clause(c);
                    }
                }
                Fun::Local(_) => {}
                Fun::Remote {
                    module,
                    function,
                    arity,
                } => {
                    self.expr(module, ctx, checks);
                    self.expr(function, ctx, checks);
                    self.expr(arity, ctx, checks);
                }
            },
            ExprKind::Case(subject, clauses) => {
                self.expr(subject, ctx, checks);
                for c in clauses {
                    self.clause(c);
                }
            }
            ExprKind::If(clauses) => {
                for c in clauses {
                    self.clause(c);
                }
            }
            ExprKind::Receive(clauses, after) => {
                for c in clauses {
                    self.clause(c);
                }
                if let Some(after) = after {
                    self.expr(&mut after.timeout, Ctx::Body, &mut Vec::new());
                    self.body(&mut after.body);
                }
            }
            ExprKind::Try(t) => {
                self.body(&mut t.body);
                for c in &mut t.of_clauses {
                    self.clause(c);
                }
                for c in &mut t.catch_clauses {
                    if let Some(class) = &mut c.class {
                        self.expr(class, Ctx::Pattern, &mut Vec::new());
                    }
                    self.expr(&mut c.reason, Ctx::Pattern, &mut Vec::new());
                    self.guard(&mut c.guard);
                    self.body(&mut c.body);
                }
                self.body(&mut t.after);
            }
            ExprKind::ListComprehension(head, qualifiers)
            | ExprKind::BinaryComprehension(head, qualifiers) => {
                self.expr(head, Ctx::Body, &mut Vec::new());
                for q in qualifiers {
                    match q {
                        Qualifier::Generator(p, l) | Qualifier::BinaryGenerator(p, l) => {
                            self.expr(p, Ctx::Pattern, &mut Vec::new());
                            self.expr(l, Ctx::Body, &mut Vec::new());
                        }
                        Qualifier::Filter(f) => self.expr(f, Ctx::Body, &mut Vec::new()),
                    }
                }
            }
            ExprKind::RecordIndex(name, field) => {
                let (name, field) = (name.clone(), field.clone());
                *e = match self.record(&name) {
                    Some(def) => match self.index(&def, &field) {
                        Some(i) => int(i, span),
                        None => placeholder(span),
                    },
                    None => placeholder(span),
                };
            }
            ExprKind::Record(name, fields) => {
                let name = name.clone();
                let mut fields = std::mem::take(fields);
                for f in &mut fields {
                    self.expr(&mut f.value, ctx, checks);
                }
                *e = self.construct(&name, fields, ctx, span);
            }
            ExprKind::RecordAccess(record, name, field) => {
                let (name, field) = (name.clone(), field.clone());
                let mut record = std::mem::replace(record.as_mut(), placeholder(span));
                self.expr(&mut record, ctx, checks);
                *e = self.access(record, &name, &field, ctx, checks, span);
            }
            ExprKind::RecordUpdate(record, name, fields) => {
                let name = name.clone();
                let mut record = std::mem::replace(record.as_mut(), placeholder(span));
                let mut fields = std::mem::take(fields);
                self.expr(&mut record, ctx, checks);
                for f in &mut fields {
                    self.expr(&mut f.value, ctx, checks);
                }
                *e = self.update(record, &name, fields, ctx, span);
            }
        }
    }

    /// `record_info/2`, `is_record/2` with a record name, and calls to
    /// imported functions.
    fn special_call(&mut self, e: &Expr, ctx: Ctx) -> Option<Expr> {
        let span = e.span;
        let ExprKind::Call(target, args) = &e.kind else {
            return None;
        };
        let CallTarget::Local(fname, _) = target.as_ref() else {
            return None;
        };
        let arity = args.len() as u32;
        if self.defined.contains(&(fname.clone(), arity)) {
            return None;
        }
        match (fname.as_str(), args.as_slice()) {
            ("record_info", [what, record]) => {
                let (ExprKind::Atom(what), ExprKind::Atom(record)) = (&what.kind, &record.kind)
                else {
                    self.error("illegal record info".to_string(), span);
                    return Some(placeholder(span));
                };
                // erl_lint reports an undefined record here at the call.
                let Some(def) = self.record(&Name {
                    name: record.clone(),
                    span,
                }) else {
                    return Some(placeholder(span));
                };
                return Some(match what.as_str() {
                    "fields" => Expr::new(
                        ExprKind::List(
                            def.fields
                                .iter()
                                .map(|f| atom(&f.name.name, span))
                                .collect(),
                            None,
                        ),
                        span,
                    ),
                    "size" => int(def.fields.len() + 1, span),
                    _ => {
                        self.error("illegal record info".to_string(), span);
                        placeholder(span)
                    }
                });
            }
            ("is_record", [value, record]) => {
                let ExprKind::Atom(record) = &record.kind else {
                    // erl_lint: the record name of is_record/2 in a guard
                    // must be written out.
                    if ctx == Ctx::Guard {
                        self.error("illegal guard expression".to_string(), span);
                    }
                    return None;
                };
                let def = self.record(&Name {
                    name: record.clone(),
                    span: args[1].span,
                })?;
                let size = def.fields.len() + 1;
                return Some(match ctx {
                    Ctx::Guard | Ctx::Pattern => record_test(value, record, size, span),
                    Ctx::Body => {
                        // Evaluated once, as the call would.
                        let v = self.fresh_var(span);
                        let block = vec![
                            Expr::new(
                                ExprKind::Match(Box::new(v.clone()), Box::new(value.clone())),
                                span,
                            ),
                            record_test(&v, record, size, span),
                        ];
                        Expr::new(ExprKind::Block(block), span)
                    }
                });
            }
            _ => {}
        }
        let module = self.imports.get(&(fname.clone(), arity))?.clone();
        Some(remote(&module, fname, args.clone(), span))
    }

    /// `#name{fields}`: a tuple pattern, or a tuple with defaults.
    fn construct(&mut self, name: &Name, fields: Vec<RecordField>, ctx: Ctx, span: Span) -> Expr {
        let Some(def) = self.record(name) else {
            let mut elements = vec![atom(&name.name, span)];
            elements.extend(fields.into_iter().map(|f| f.value));
            return Expr::new(ExprKind::Tuple(elements), span);
        };
        let mut given: Vec<Option<Expr>> = vec![None; def.fields.len()];
        let mut rest: Option<Expr> = None;
        // Values of unknown fields are kept (after the error) so that
        // their variables are still seen by the checker.
        let mut unknown = Vec::new();
        for f in fields {
            if f.name.name == "_" {
                rest = Some(f.value);
                continue;
            }
            let Some(i) = self.index(&def, &f.name) else {
                unknown.push(f.value);
                continue;
            };
            {
                if given[i - 2].is_some() {
                    self.error(
                        format!(
                            "field {} already defined in record {}",
                            f.name.name, name.name
                        ),
                        f.name.span,
                    );
                }
                given[i - 2] = Some(f.value);
            }
        }
        let mut elements = vec![atom(&name.name, span)];
        for (i, field) in def.fields.iter().enumerate() {
            let value = match given[i].take() {
                Some(v) => v,
                None => match (&rest, ctx) {
                    (Some(r), _) => r.clone(),
                    (None, Ctx::Pattern) => var("_", span),
                    (None, _) => match &field.default {
                        Some(d) => d.clone(),
                        None => atom("undefined", span),
                    },
                },
            };
            elements.push(value);
        }
        elements.extend(unknown);
        Expr::new(ExprKind::Tuple(elements), span)
    }

    /// `Record#name.field`
    fn access(
        &mut self,
        record: Expr,
        name: &Name,
        field: &Name,
        ctx: Ctx,
        checks: &mut Vec<Expr>,
        span: Span,
    ) -> Expr {
        let Some(def) = self.record(name) else {
            return record;
        };
        let Some(index) = self.index(&def, field) else {
            return record;
        };
        let size = def.fields.len() + 1;
        match ctx {
            Ctx::Guard | Ctx::Pattern => {
                checks.push(record_test(&record, &name.name, size, span));
                local("element", vec![int(index, span), record], span)
            }
            Ctx::Body => {
                let v = self.fresh_var(span);
                let mut elements = vec![atom(&name.name, span)];
                for i in 2..=size {
                    elements.push(if i == index {
                        v.clone()
                    } else {
                        var("_", span)
                    });
                }
                let tuple = Expr::new(ExprKind::Tuple(elements), span);
                let badrecord = self.badrecord(v.clone(), span);
                Expr::new(
                    ExprKind::Case(
                        Box::new(record),
                        vec![
                            clause(vec![tuple], vec![v.clone()], span),
                            clause(vec![v], vec![badrecord], span),
                        ],
                    ),
                    span,
                )
            }
        }
    }

    fn badrecord(&mut self, value: Expr, span: Span) -> Expr {
        let reason = Expr::new(ExprKind::Tuple(vec![atom("badrecord", span), value]), span);
        remote("erlang", "error", vec![reason], span)
    }

    /// `Record#name{fields}`
    fn update(
        &mut self,
        record: Expr,
        name: &Name,
        fields: Vec<RecordField>,
        ctx: Ctx,
        span: Span,
    ) -> Expr {
        let Some(def) = self.record(name) else {
            let mut elements = vec![record];
            elements.extend(fields.into_iter().map(|f| f.value));
            return Expr::new(ExprKind::Tuple(elements), span);
        };
        if ctx != Ctx::Body {
            self.error("illegal record update here".to_string(), span);
            return record;
        }
        // The new values first, then the record, as erlc orders them.
        let mut block = Vec::new();
        let mut sets: Vec<(usize, Expr)> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for f in fields {
            if seen.contains(&f.name.name) {
                self.error(
                    format!(
                        "field {} already defined in record {}",
                        f.name.name, name.name
                    ),
                    f.name.span,
                );
            }
            seen.push(f.name.name.clone());
            if f.name.name == "_" {
                self.error(
                    format!("meaningless use of _ in update of record {}", name.name),
                    f.name.span,
                );
                continue;
            }
            let Some(i) = self.index(&def, &f.name) else {
                continue;
            };
            let value = match f.value.kind {
                ExprKind::Var(_)
                | ExprKind::Atom(_)
                | ExprKind::Integer(_)
                | ExprKind::Float(_)
                | ExprKind::String(_) => f.value,
                _ => {
                    let v = self.fresh_var(f.value.span);
                    block.push(Expr::new(
                        ExprKind::Match(Box::new(v.clone()), Box::new(f.value)),
                        span,
                    ));
                    v
                }
            };
            sets.push((i, value));
        }
        let r = self.fresh_var(span);
        block.push(Expr::new(
            ExprKind::Match(Box::new(r.clone()), Box::new(record)),
            span,
        ));
        // The clause that matches the record binds the fields that stay
        // and builds the new tuple from them: one construction, inline in
        // either engine, where a `setelement/3` per field would copy the
        // tuple once for each.
        let size = def.fields.len() + 1;
        let mut pattern = vec![atom(&name.name, span)];
        let mut elements = vec![atom(&name.name, span)];
        for j in 2..=size {
            match sets.iter().rev().find(|(i, _)| *i == j) {
                Some((_, value)) => {
                    pattern.push(var("_", span));
                    elements.push(value.clone());
                }
                None => {
                    let kept = self.fresh_var(span);
                    pattern.push(kept.clone());
                    elements.push(kept);
                }
            }
        }
        let updated = Expr::new(ExprKind::Tuple(elements), span);
        let badrecord = self.badrecord(r.clone(), span);
        block.push(Expr::new(
            ExprKind::Case(
                Box::new(r),
                vec![
                    clause(
                        vec![Expr::new(ExprKind::Tuple(pattern), span)],
                        vec![updated],
                        span,
                    ),
                    clause(vec![var("_", span)], vec![badrecord], span),
                ],
            ),
            span,
        ));
        Expr::new(ExprKind::Block(block), span)
    }
}
