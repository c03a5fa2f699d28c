//! The warnings OTP's optimiser (sys_core_fold) gives under escript's
//! `-mode(compile)` about code that must fail or can never run, found by
//! propagating constants: each function clause is walked in order with
//! the values of the variables bound to constants so far (`Y = 0`,
//! `{A, B} = {1, 2}`, `F = list_to_atom("f")`).
//!
//! What is warned, as OTP 25 words and places it (checked against escript):
//! - an arithmetic operator on constants that raises: "evaluation of
//!   operator '+'/2 will fail with a 'badarith' exception", at the operator
//!   (`-`, `bnot` of one operand: at the operator too, the expression's
//!   start); `++` whose left operand, or `--` either of whose operands, is
//!   not a proper list: "... will fail with a 'badarg' exception";
//! - a call of an erlang BIF whose constant arguments make it fail:
//!   "the call to atom_to_list/1 will fail with a 'badarg' exception", at
//!   the call (`erlang:hd/1` is named `hd/1`; `maps:get/2` is `map_get/2`,
//!   failing with `{badkey,K}`); a `math` function likewise ("the call to
//!   math:sqrt/1 will fail with a 'badarith' exception"), and
//!   `lists:append/2` and `lists:subtract/2`, which OTP knows as `++` and
//!   `--` ("the call to lists:append/2 will fail with a 'badarg'
//!   exception");
//! - a call of a constant that is not a fun: "invalid function call",
//!   twice when the callee is written in place (`1()`), once through a
//!   variable;
//! - a match, `case` or `try ... of` on a constant that no clause
//!   matches: "no clause will ever match", at the match, `case` or `try`;
//! - a clause (of a function, `case` or `if`) whose guard is false on the
//!   constants: "this clause cannot match because its guard evaluates to
//!   'false'", at the clause; the `if` clauses after one whose guard is
//!   always true: "this clause cannot match because a previous clause at
//!   line N always matches";
//! - the clauses after one that always matches (its patterns unbound
//!   variables, its guard none or true), of a function ("this clause for
//!   f/1 cannot match because ..."), a fun, a `case`, a `receive` or a
//!   `try ... of` ("this clause cannot match because ..."). A variable is
//!   taken as unbound only when its name is written nowhere else in the
//!   function clause (a fun's head variables are always new); clauses a
//!   macro wrote are not looked at.
//!
//! Invariants: the walk never warns where it does not know; a value is
//! known only when it is a constant term (numbers, atoms, lists, tuples,
//! maps and funs as opaque values; binaries are never known). Bindings
//! made inside a clause body stay in that clause. Inside a macro's
//! expansion a warning is where OTP gives it: the replacement's tokens
//! sit at the macro's name (where epp places them), its arguments at their
//! own places, and an operator the replacement wrote is warned at its
//! left operand. What the
//! optimiser says after code that must fail (the later values it then
//! finds unused) is not followed.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::fold;
use super::lexer::Number;
use super::preprocess::Sources;
use super::span::Span;
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// A constant the walk knows.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Int(BigInt),
    Float(f64),
    Atom(String),
    Nil,
    Cons(Box<Value>, Box<Value>),
    Tuple(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// A fun written in the program: known to be a fun, nothing more.
    Fun,
}

type Env = HashMap<String, Value>;

/// What a match of a pattern against a value can do.
enum Matched {
    Never,
    /// It may match; these variables are then known.
    Maybe(Vec<(String, Value)>),
}

struct Walk<'a> {
    sources: &'a Sources,
    /// The module's own functions: a call of one is not a BIF's.
    local: HashSet<(String, usize)>,
    expansions: &'a [Span],
    warnings: Vec<Diagnostic>,
    /// The variables written in the function clause being walked, with
    /// their offsets (see `shadowed`).
    variables: Vec<(String, u32)>,
}

/// The optimiser's warnings about code that must fail or never runs.
pub fn warnings(module: &Module, sources: &Sources, expansions: &[Span]) -> Vec<Diagnostic> {
    let mut local = HashSet::new();
    for form in &module.forms {
        if let Form::Function(f) = form {
            local.insert((f.name.clone(), f.arity as usize));
        }
    }
    let mut walk = Walk {
        sources,
        local,
        expansions,
        warnings: Vec::new(),
        variables: Vec::new(),
    };
    for form in &module.forms {
        if let Form::Function(function) = form {
            let clauses: Vec<(&Clause, u32)> = function
                .clauses
                .iter()
                .map(|c| (&c.clause, c.name_span.start))
                .collect();
            let named = format!(" for {}/{}", function.name, function.arity);
            walk.shadowed(&clauses, &named, false);
            for clause in &function.clauses {
                let clause = &clause.clause;
                walk.variables = written_variables(clause);
                let mut env = Env::new();
                if guard_value(&clause.guard, &env) == Some(false) {
                    walk.warn(GUARD_FALSE.into(), clause.span.start as usize);
                }
                walk.body(&clause.body, &mut env);
            }
        }
    }
    walk.warnings.sort_by_key(|d| d.span.start);
    walk.warnings
}

/// Clauses with the offsets their warnings are given at (their starts).
fn at_starts(clauses: &[Clause]) -> Vec<(&Clause, u32)> {
    clauses.iter().map(|c| (c, c.span.start)).collect()
}

/// Every variable written in `clause` (patterns, guard, body, nested
/// funs too), with its offset.
fn written_variables(clause: &Clause) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut stack: Vec<&Expr> = Vec::new();
    super::walk::clause_exprs(clause, &mut stack);
    while let Some(e) = stack.pop() {
        if let ExprKind::Var(name) = &e.kind {
            out.push((name.clone(), e.span.start));
        }
        super::walk::children(e, &mut stack);
    }
    out
}

/// Whether pattern `p` matches every term: `_`, a variable not in
/// `earlier` (names that may be bound) nor already `seen` in the same
/// head, or an alias of such.
fn matches_anything<'a>(p: &'a Expr, earlier: &HashSet<&str>, seen: &mut HashSet<&'a str>) -> bool {
    match &p.kind {
        ExprKind::Var(name) if name == "_" => true,
        ExprKind::Var(name) => !earlier.contains(name.as_str()) && seen.insert(name.as_str()),
        ExprKind::Match(a, b) => {
            matches_anything(a, earlier, seen) && matches_anything(b, earlier, seen)
        }
        _ => false,
    }
}

const GUARD_FALSE: &str = "this clause cannot match because its guard evaluates to 'false'";

impl Walk<'_> {
    fn warn(&mut self, message: String, at: usize) {
        // The replacement's tokens are placed at the macro's name, as epp
        // places them, and a macro's arguments keep their own places: a
        // warning at either is where OTP gives it.
        self.warnings
            .push(Diagnostic::warning(message, Span::new(at, at + 1)));
    }

    /// Warns each clause after the first that always matches; `clauses`
    /// with the offsets to warn at, `named` what names a function's
    /// clauses (" for f/1"). With `scoped`, a variable written in the
    /// function clause outside the clause itself may be bound there (by
    /// code before it, or by a comprehension's generator after it) and
    /// is no catch-all; a function's or fun's head variables are always
    /// new. Clauses a macro's replacement wrote are left alone: their
    /// tokens all sit at the macro's name, and OTP's places for them
    /// differ. Clauses written in a macro's arguments keep their places.
    fn shadowed(&mut self, clauses: &[(&Clause, u32)], named: &str, scoped: bool) {
        let in_macro = |at: u32| self.expansions.iter().any(|s| s.start == at);
        if clauses
            .iter()
            .any(|&(c, at)| in_macro(at) || in_macro(c.span.start))
        {
            return;
        }
        let mut always: Option<u32> = None;
        for &(clause, at) in clauses {
            if let Some(first) = always {
                let line = self.sources.line(first);
                self.warn(
                    format!(
                        "this clause{named} cannot match because a previous clause at line \
                         {line} always matches"
                    ),
                    at as usize,
                );
                continue;
            }
            let outside: HashSet<&str> = if scoped {
                self.variables
                    .iter()
                    .filter(|(_, o)| *o < clause.span.start || *o >= clause.span.end)
                    .map(|(name, _)| name.as_str())
                    .collect()
            } else {
                HashSet::new()
            };
            let mut seen = HashSet::new();
            let guard_true =
                clause.guard.is_empty() || guard_value(&clause.guard, &Env::new()) == Some(true);
            if guard_true
                && clause
                    .patterns
                    .iter()
                    .all(|p| matches_anything(p, &outside, &mut seen))
            {
                always = Some(at);
            }
        }
    }

    fn body(&mut self, exprs: &[Expr], env: &mut Env) -> Option<Value> {
        let mut last = None;
        for e in exprs {
            last = self.expr(e, env);
        }
        last
    }

    /// A clause body run with the bindings of its patterns.
    fn clause_body(&mut self, clause: &Clause, env: &Env, bound: Vec<(String, Value)>) {
        let mut inner = env.clone();
        inner.extend(bound);
        self.body(&clause.body, &mut inner);
    }

    /// Walks `e`, warning where it must fail, and gives its value if known.
    fn expr(&mut self, e: &Expr, env: &mut Env) -> Option<Value> {
        match &e.kind {
            ExprKind::Integer(i) => Some(Value::Int(i.clone())),
            ExprKind::Float(f) => Some(Value::Float(*f)),
            ExprKind::Atom(a) => Some(Value::Atom(a.clone())),
            ExprKind::String(s) => Some(string(s)),
            ExprKind::Var(name) => env.get(name).cloned(),
            ExprKind::List(elements, tail) => {
                let values: Vec<Option<Value>> =
                    elements.iter().map(|x| self.expr(x, env)).collect();
                let tail = match tail {
                    Some(t) => self.expr(t, env),
                    None => Some(Value::Nil),
                };
                let mut list = tail?;
                for v in values.into_iter().rev() {
                    list = Value::Cons(Box::new(v?), Box::new(list));
                }
                Some(list)
            }
            ExprKind::Tuple(elements) => {
                let values: Vec<Option<Value>> =
                    elements.iter().map(|x| self.expr(x, env)).collect();
                values
                    .into_iter()
                    .collect::<Option<Vec<_>>>()
                    .map(Value::Tuple)
            }
            ExprKind::Map(fields) => {
                let mut pairs = Vec::new();
                let mut known = true;
                for f in fields {
                    let k = self.expr(&f.key, env);
                    let v = self.expr(&f.value, env);
                    match (k, v) {
                        (Some(k), Some(v)) if !f.exact => pairs.push((k, v)),
                        _ => known = false,
                    }
                }
                known.then_some(Value::Map(pairs))
            }
            ExprKind::BinaryOp(op, a, b) => {
                let x = self.expr(a, env);
                let y = self.expr(b, env);
                let (x, y) = (x?, y?);
                if list_operator_fails(*op, &x, &y) {
                    let at = self.operator_at(*op, a, b);
                    self.warn(
                        format!(
                            "evaluation of operator '{}'/2 will fail with a 'badarg' exception",
                            op.symbol()
                        ),
                        at,
                    );
                    return None;
                }
                match arith(*op, &x, &y) {
                    Some(Ok(v)) => Some(v),
                    Some(Err(())) => {
                        let at = self.operator_at(*op, a, b);
                        self.warn(
                            format!(
                                "evaluation of operator '{}'/2 will fail with a 'badarith' exception",
                                op.symbol()
                            ),
                            at,
                        );
                        None
                    }
                    None => operator(*op, &x, &y),
                }
            }
            ExprKind::UnaryOp(op, a) => {
                let x = self.expr(a, env)?;
                match op {
                    UnaryOp::Not => match x {
                        Value::Atom(ref b) if b == "true" => Some(boolean(false)),
                        Value::Atom(ref b) if b == "false" => Some(boolean(true)),
                        _ => None,
                    },
                    _ => match number_of(&x).and_then(|n| fold::unary(*op, n)) {
                        Some(n) => Some(from_number(n)),
                        None => {
                            self.warn(
                                format!(
                                    "evaluation of operator '{}'/1 will fail with a 'badarith' exception",
                                    op.symbol()
                                ),
                                e.span.start as usize,
                            );
                            None
                        }
                    },
                }
            }
            ExprKind::Match(pattern, value) => {
                let v = self.expr(value, env);
                match v.as_ref().map(|v| match_pattern(pattern, v, env)) {
                    Some(Matched::Never) => {
                        self.warn("no clause will ever match".into(), e.span.start as usize);
                        None
                    }
                    Some(Matched::Maybe(bound)) => {
                        env.extend(bound);
                        v
                    }
                    None => None,
                }
            }
            ExprKind::Call(target, args) => self.call(e, target, args, env),
            ExprKind::Fun(fun) => {
                if let Fun::Anonymous(clauses) | Fun::Named(_, clauses) = fun.as_ref() {
                    // A fun's head variables are new whatever came before.
                    let heads: Vec<(&Clause, u32)> =
                        clauses.iter().map(|c| (c, c.span.start)).collect();
                    self.shadowed(&heads, "", false);
                    for c in clauses {
                        let mut inner = env.clone();
                        for p in &c.patterns {
                            forget_vars(p, &mut inner);
                        }
                        if let Fun::Named(name, _) = fun.as_ref() {
                            inner.remove(&name.name);
                        }
                        self.body(&c.body, &mut inner);
                    }
                }
                Some(Value::Fun)
            }
            ExprKind::Case(subject, clauses) => {
                let v = self.expr(subject, env);
                self.case_clauses(e, v, clauses, env);
                None
            }
            ExprKind::If(clauses) => {
                let mut always: Option<usize> = None;
                for c in clauses {
                    if let Some(at) = always {
                        let line = self.sources.line(at as u32);
                        self.warn(
                            format!(
                                "this clause cannot match because a previous clause at line {line} always matches"
                            ),
                            c.span.start as usize,
                        );
                    } else {
                        match guard_value(&c.guard, env) {
                            Some(false) => self.warn(GUARD_FALSE.into(), c.span.start as usize),
                            Some(true) => always = Some(c.span.start as usize),
                            None => {}
                        }
                    }
                    self.clause_body(c, env, Vec::new());
                }
                None
            }
            ExprKind::Receive(clauses, after) => {
                self.shadowed(&at_starts(clauses), "", true);
                for c in clauses {
                    self.clause_body(c, env, Vec::new());
                }
                if let Some(after) = after {
                    self.expr(&after.timeout, env);
                    self.body(&after.body, &mut env.clone());
                }
                None
            }
            ExprKind::Try(t) => {
                // `try Body of Clauses` matches the body's value as a
                // `case` does (OTP compiles it to one).
                let v = self.body(&t.body, &mut env.clone());
                self.case_clauses(e, v, &t.of_clauses, env);
                for c in &t.catch_clauses {
                    self.body(&c.body, &mut env.clone());
                }
                self.body(&t.after, &mut env.clone());
                None
            }
            ExprKind::Catch(inner) => {
                self.expr(inner, &mut env.clone());
                None
            }
            ExprKind::Block(exprs) => self.body(exprs, env),
            ExprKind::ListComprehension(head, qualifiers)
            | ExprKind::BinaryComprehension(head, qualifiers) => {
                let mut inner = env.clone();
                for q in qualifiers {
                    match q {
                        Qualifier::Generator(p, source) | Qualifier::BinaryGenerator(p, source) => {
                            self.expr(source, &mut inner);
                            forget_vars(p, &mut inner);
                        }
                        Qualifier::Filter(f) => {
                            self.expr(f, &mut inner);
                        }
                    }
                }
                self.expr(head, &mut inner);
                None
            }
            _ => {
                let mut children = Vec::new();
                super::walk::children(e, &mut children);
                for child in children {
                    self.expr(child, env);
                }
                None
            }
        }
    }

    fn call(
        &mut self,
        e: &Expr,
        target: &CallTarget,
        args: &[Expr],
        env: &mut Env,
    ) -> Option<Value> {
        let at = e.span.start as usize;
        let name = match target {
            CallTarget::Local(name, _) if !self.local.contains(&(name.clone(), args.len())) => {
                Some(name.clone())
            }
            CallTarget::Local(..) => None,
            CallTarget::Remote(m, f) => {
                let m = self.expr(m, env);
                let f = self.expr(f, env);
                match (m, f) {
                    (Some(Value::Atom(m)), Some(Value::Atom(f))) if m == "erlang" => Some(f),
                    (Some(Value::Atom(m)), Some(Value::Atom(f))) if m == "math" => {
                        Some(format!("math:{f}"))
                    }
                    (Some(Value::Atom(m)), Some(Value::Atom(f)))
                        if m == "maps" && f == "get" && args.len() == 2 =>
                    {
                        Some("map_get".to_string())
                    }
                    // OTP's optimiser knows these two are `++` and `--`.
                    (Some(Value::Atom(m)), Some(Value::Atom(f)))
                        if m == "lists"
                            && (f == "append" || f == "subtract")
                            && args.len() == 2 =>
                    {
                        Some(format!("lists:{f}"))
                    }
                    _ => None,
                }
            }
            CallTarget::Fun(callee) => {
                let v = self.expr(callee, env);
                if let Some(v) = v
                    && v != Value::Fun
                {
                    self.warn("invalid function call".into(), at);
                    if !matches!(callee.kind, ExprKind::Var(_)) {
                        self.warn("invalid function call".into(), at);
                    }
                }
                None
            }
        };
        let values: Vec<Option<Value>> = args.iter().map(|a| self.expr(a, env)).collect();
        let name = name?;
        let values = values.into_iter().collect::<Option<Vec<_>>>()?;
        // `erlang:'++'(A, B)` is the operator, and warned as one.
        let op = match name.as_str() {
            "++" => Some(BinaryOp::Append),
            "--" => Some(BinaryOp::Subtract),
            _ => None,
        };
        if let (Some(op), [x, y]) = (op, values.as_slice()) {
            if list_operator_fails(op, x, y) {
                self.warn(
                    format!(
                        "evaluation of operator '{name}'/2 will fail with a 'badarg' exception"
                    ),
                    at,
                );
            }
            return None;
        }
        match bif(&name, &values)? {
            Ok(v) => v,
            Err(reason) => {
                self.warn(
                    format!(
                        "the call to {name}/{} will fail with a '{reason}' exception",
                        args.len()
                    ),
                    at,
                );
                None
            }
        }
    }

    /// The clauses of a `case` (or of `try ... of`) on the value `v` of
    /// its subject, when known: the clauses no value reaches and, when
    /// none can match, "no clause will ever match" at `e`.
    fn case_clauses(&mut self, e: &Expr, v: Option<Value>, clauses: &[Clause], env: &Env) {
        // On a known value the first clause that always matches decides
        // the case, and OTP drops the clauses after it unwarned.
        if v.is_none() {
            self.shadowed(&at_starts(clauses), "", true);
        }
        let mut all_never = true;
        // Once a clause surely matches the known value, OTP drops
        // the clauses after it unlooked at: no warnings there.
        let mut decided = false;
        for c in clauses {
            if decided {
                continue;
            }
            let bound = match (&v, c.patterns.first()) {
                (Some(v), Some(p)) => match match_pattern(p, v, env) {
                    Matched::Never => {
                        self.clause_body(c, env, Vec::new());
                        continue;
                    }
                    Matched::Maybe(bound) => bound,
                },
                _ => Vec::new(),
            };
            let mut guard_env = env.clone();
            guard_env.extend(bound.iter().cloned());
            let guard = guard_value(&c.guard, &guard_env);
            // A clause whose guard is false on the value never matches it.
            all_never &= v.is_some() && guard == Some(false);
            match guard {
                Some(false) => self.warn(GUARD_FALSE.into(), c.span.start as usize),
                Some(true) => {
                    decided = match (&v, c.patterns.first()) {
                        (Some(v), Some(p)) => sure_match(p, v, env),
                        _ => false,
                    }
                }
                None => {}
            }
            self.clause_body(c, env, bound);
        }
        if v.is_some() && all_never && !clauses.is_empty() {
            self.warn("no clause will ever match".into(), e.span.start as usize);
        }
    }

    /// Where OTP places a warning about the operator `op` between `a`
    /// and `b`: at the operator where it is written between them; an
    /// operator a macro's replacement wrote (its token sits at the macro's
    /// name) is placed at its left operand, as OTP places it.
    fn operator_at(&self, op: BinaryOp, a: &Expr, b: &Expr) -> usize {
        if a.span.end <= b.span.start {
            let at = self.sources.operator_between(a.span.end, b.span.start);
            if self.sources.text_at(at).starts_with(op.symbol()) {
                return at;
            }
        }
        a.span.start as usize
    }
}

/// Forgets the variables of a pattern that binds them afresh (a fun's
/// arguments, a generator's pattern), which shadow the outer ones.
fn forget_vars(pattern: &Expr, env: &mut Env) {
    let mut pending = vec![pattern];
    while let Some(p) = pending.pop() {
        if let ExprKind::Var(name) = &p.kind {
            env.remove(name);
        }
        super::walk::children(p, &mut pending);
    }
}

fn boolean(b: bool) -> Value {
    Value::Atom(if b { "true" } else { "false" }.to_string())
}

fn string(s: &[u32]) -> Value {
    let mut list = Value::Nil;
    for c in s.iter().rev() {
        list = Value::Cons(Box::new(Value::Int(BigInt::from(*c))), Box::new(list));
    }
    list
}

fn number_of(v: &Value) -> Option<Number> {
    match v {
        Value::Int(i) => Some(Number::Integer(i.clone())),
        Value::Float(f) => Some(Number::Float(*f)),
        _ => None,
    }
}

fn from_number(n: Number) -> Value {
    match n {
        Number::Integer(i) => Value::Int(i),
        Number::Float(f) => Value::Float(f),
    }
}

/// An arithmetic operator on known values: `Some(Err)` when it raises
/// `badarith`, `None` when `op` is not arithmetic (or a shift too wide to
/// fold, left to run time).
fn arith(op: BinaryOp, x: &Value, y: &Value) -> Option<Result<Value, ()>> {
    use BinaryOp::*;
    if !matches!(
        op,
        Add | Sub | Mul | Div | IntDiv | Rem | Band | Bor | Bxor | Bsl | Bsr
    ) {
        return None;
    }
    let (a, b) = match (number_of(x), number_of(y)) {
        (Some(a), Some(b)) => (a, b),
        _ => return Some(Err(())),
    };
    let shift =
        matches!(op, Bsl | Bsr) && matches!((&a, &b), (Number::Integer(_), Number::Integer(_)));
    match fold::binary(op, a, b) {
        Some(n) => Some(Ok(from_number(n))),
        None if shift => None,
        None => Some(Err(())),
    }
}

/// Whether `++` or `--` on known values raises `badarg`: the left
/// operand (and for `--` the right too) must be a proper list.
fn list_operator_fails(op: BinaryOp, x: &Value, y: &Value) -> bool {
    match op {
        BinaryOp::Append => list_of(x).is_none(),
        BinaryOp::Subtract => list_of(x).is_none() || list_of(y).is_none(),
        _ => false,
    }
}

/// The comparison and boolean operators on known values.
fn operator(op: BinaryOp, x: &Value, y: &Value) -> Option<Value> {
    use BinaryOp::*;
    let bool_of = |v: &Value| match v {
        Value::Atom(a) if a == "true" => Some(true),
        Value::Atom(a) if a == "false" => Some(false),
        _ => None,
    };
    let b = match op {
        ExactEq => x == y,
        ExactNotEq => x != y,
        Eq => compare(x, y)? == Ordering::Equal,
        NotEq => compare(x, y)? != Ordering::Equal,
        Less => compare(x, y)? == Ordering::Less,
        LessEq => compare(x, y)? != Ordering::Greater,
        Greater => compare(x, y)? == Ordering::Greater,
        GreaterEq => compare(x, y)? != Ordering::Less,
        And | AndAlso => bool_of(x)? && bool_of(y)?,
        Or | OrElse => bool_of(x)? || bool_of(y)?,
        Xor => bool_of(x)? != bool_of(y)?,
        _ => return None,
    };
    Some(boolean(b))
}

/// Erlang's term order on known values (numbers compare by value); `None`
/// where a fun takes part.
fn compare(x: &Value, y: &Value) -> Option<Ordering> {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Int(_) | Value::Float(_) => 0,
            Value::Atom(_) => 1,
            Value::Fun => 3,
            Value::Tuple(_) => 6,
            Value::Map(_) => 7,
            Value::Nil => 8,
            Value::Cons(..) => 9,
        }
    }
    match (x, y) {
        (Value::Fun, _) | (_, Value::Fun) => None,
        (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let a = number_of(x).and_then(|n| float_of(&n))?;
            let b = number_of(y).and_then(|n| float_of(&n))?;
            a.partial_cmp(&b)
        }
        (Value::Atom(a), Value::Atom(b)) => Some(a.cmp(b)),
        (Value::Tuple(a), Value::Tuple(b)) => {
            if a.len() != b.len() {
                return Some(a.len().cmp(&b.len()));
            }
            for (p, q) in a.iter().zip(b) {
                match compare(p, q)? {
                    Ordering::Equal => {}
                    other => return Some(other),
                }
            }
            Some(Ordering::Equal)
        }
        (Value::Cons(h1, t1), Value::Cons(h2, t2)) => match compare(h1, h2)? {
            Ordering::Equal => compare(t1, t2),
            other => Some(other),
        },
        (Value::Nil, Value::Nil) => Some(Ordering::Equal),
        (Value::Map(_), Value::Map(_)) => None,
        _ => Some(rank(x).cmp(&rank(y))),
    }
}

fn float_of(n: &Number) -> Option<f64> {
    match n {
        Number::Integer(i) => i.to_f64(),
        Number::Float(f) => Some(*f),
    }
}

/// Matches `pattern` against a known value. Variables already known
/// compare; others may be bound (or bound to something unknown: then
/// the match may still succeed, and inside the clause they equal `v`).
fn match_pattern(pattern: &Expr, v: &Value, env: &Env) -> Matched {
    let mut bound = Vec::new();
    if matches(pattern, v, env, &mut bound) {
        Matched::Maybe(bound)
    } else {
        Matched::Never
    }
}

/// Whether `pattern` may match `v`, collecting the variables it binds.
fn matches(pattern: &Expr, v: &Value, env: &Env, bound: &mut Vec<(String, Value)>) -> bool {
    match &pattern.kind {
        ExprKind::Var(name) if name == "_" => true,
        ExprKind::Var(name) => {
            if let Some(known) = env.get(name) {
                return known == v;
            }
            if let Some((_, earlier)) = bound.iter().find(|(n, _)| n == name) {
                return earlier == v;
            }
            if !name.starts_with('%') {
                bound.push((name.clone(), v.clone()));
            }
            true
        }
        ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            Walk::quiet_value(pattern).is_none_or(|p| &p == v)
        }
        ExprKind::UnaryOp(..) | ExprKind::BinaryOp(..) => match fold::number(pattern) {
            Some(n) => &from_number(n) == v,
            None => true,
        },
        ExprKind::Tuple(elements) => match v {
            Value::Tuple(values) => {
                values.len() == elements.len()
                    && elements
                        .iter()
                        .zip(values)
                        .all(|(p, x)| matches(p, x, env, bound))
            }
            Value::Fun => true,
            _ => false,
        },
        ExprKind::List(elements, tail) => {
            let mut rest = v;
            for p in elements {
                match rest {
                    Value::Cons(h, t) => {
                        if !matches(p, h, env, bound) {
                            return false;
                        }
                        rest = t;
                    }
                    Value::Fun => return true,
                    _ => return false,
                }
            }
            match tail {
                Some(t) => matches(t, rest, env, bound),
                None => matches!(rest, Value::Nil),
            }
        }
        ExprKind::Map(_) => matches!(v, Value::Map(_) | Value::Fun),
        ExprKind::Binary(_) => matches!(v, Value::Fun),
        ExprKind::Match(a, b) => matches(a, v, env, bound) && matches(b, v, env, bound),
        _ => true,
    }
}

/// Whether `pattern` surely matches the known `v`: made of literals equal
/// to their parts, `_`, and variables (known ones equal to their parts;
/// an unknown one is taken as new, so a clause matching on a variable
/// bound earlier to an unknown value may lose the later clauses' warnings,
/// never gain a wrong one).
fn sure_match(pattern: &Expr, v: &Value, env: &Env) -> bool {
    match &pattern.kind {
        ExprKind::Var(name) => env.get(name).is_none_or(|known| known == v),
        ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            Walk::quiet_value(pattern).is_some_and(|p| &p == v)
        }
        ExprKind::Tuple(elements) => match v {
            Value::Tuple(values) => {
                values.len() == elements.len()
                    && elements
                        .iter()
                        .zip(values)
                        .all(|(p, x)| sure_match(p, x, env))
            }
            _ => false,
        },
        ExprKind::List(elements, tail) => {
            let mut rest = v;
            for p in elements {
                match rest {
                    Value::Cons(h, t) if sure_match(p, h, env) => rest = t,
                    _ => return false,
                }
            }
            match tail {
                Some(t) => sure_match(t, rest, env),
                None => matches!(rest, Value::Nil),
            }
        }
        ExprKind::Match(a, b) => sure_match(a, v, env) && sure_match(b, v, env),
        _ => false,
    }
}

impl Walk<'_> {
    /// The value of a literal, without warnings.
    fn quiet_value(e: &Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Integer(i) => Some(Value::Int(i.clone())),
            ExprKind::Float(f) => Some(Value::Float(*f)),
            ExprKind::Atom(a) => Some(Value::Atom(a.clone())),
            ExprKind::String(s) => Some(string(s)),
            _ => None,
        }
    }
}

/// A guard's truth on what is known: `Some(false)` when every alternative
/// has a test that is known not to be `true`, `Some(true)` when one
/// alternative's tests are all known `true`. An empty guard is true.
fn guard_value(guard: &Guard, env: &Env) -> Option<bool> {
    if guard.is_empty() {
        return Some(true);
    }
    let mut all_false = true;
    for alternative in guard {
        let mut all_true = true;
        let mut is_false = false;
        for test in alternative {
            match guard_expr(test, env) {
                Some(Value::Atom(a)) if a == "true" => {}
                Some(_) => is_false = true,
                None => all_true = false,
            }
        }
        if is_false {
            continue;
        }
        all_false = false;
        if all_true {
            return Some(true);
        }
    }
    if all_false { Some(false) } else { None }
}

/// A guard expression's value where known. Failures are not known values
/// here: a guard that raises is false, but OTP words that differently.
fn guard_expr(e: &Expr, env: &Env) -> Option<Value> {
    match &e.kind {
        ExprKind::Var(name) => env.get(name).cloned(),
        ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            Walk::quiet_value(e)
        }
        ExprKind::Tuple(elements) => elements
            .iter()
            .map(|x| guard_expr(x, env))
            .collect::<Option<Vec<_>>>()
            .map(Value::Tuple),
        ExprKind::List(elements, tail) => {
            let mut list = match tail {
                Some(t) => guard_expr(t, env)?,
                None => Value::Nil,
            };
            for x in elements.iter().rev() {
                list = Value::Cons(Box::new(guard_expr(x, env)?), Box::new(list));
            }
            Some(list)
        }
        ExprKind::BinaryOp(op @ (BinaryOp::AndAlso | BinaryOp::OrElse), a, b) => {
            let x = guard_expr(a, env)?;
            match (op, &x) {
                (BinaryOp::AndAlso, Value::Atom(f)) if f == "false" => Some(x),
                (BinaryOp::OrElse, Value::Atom(t)) if t == "true" => Some(x),
                _ => operator(*op, &x, &guard_expr(b, env)?),
            }
        }
        ExprKind::BinaryOp(op, a, b) => {
            let (x, y) = (guard_expr(a, env)?, guard_expr(b, env)?);
            match arith(*op, &x, &y) {
                Some(Ok(v)) => Some(v),
                Some(Err(())) => None,
                None => operator(*op, &x, &y),
            }
        }
        ExprKind::UnaryOp(UnaryOp::Not, a) => match guard_expr(a, env)? {
            Value::Atom(b) if b == "true" => Some(boolean(false)),
            Value::Atom(b) if b == "false" => Some(boolean(true)),
            _ => None,
        },
        ExprKind::UnaryOp(op, a) => {
            fold::unary(*op, number_of(&guard_expr(a, env)?)?).map(from_number)
        }
        ExprKind::Call(target, args) => {
            let name = match target.as_ref() {
                CallTarget::Local(name, _) => name.clone(),
                CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                    (ExprKind::Atom(m), ExprKind::Atom(f)) if m == "erlang" => f.clone(),
                    _ => return None,
                },
                CallTarget::Fun(_) => return None,
            };
            let values = args
                .iter()
                .map(|a| guard_expr(a, env))
                .collect::<Option<Vec<_>>>()?;
            bif(&name, &values)?.ok()?
        }
        _ => None,
    }
}

fn list_of(v: &Value) -> Option<Vec<&Value>> {
    let mut out = Vec::new();
    let mut rest = v;
    loop {
        match rest {
            Value::Nil => return Some(out),
            Value::Cons(h, t) => {
                out.push(h.as_ref());
                rest = t;
            }
            _ => return None,
        }
    }
}

fn chars_of(v: &Value) -> Option<String> {
    list_of(v)?
        .into_iter()
        .map(|c| match c {
            Value::Int(i) => i.to_u32().and_then(char::from_u32),
            _ => None,
        })
        .collect()
}

/// The outcome of an erlang BIF on known arguments: `None` when the walk
/// does not evaluate it, `Some(Err(reason))` when it must fail, else
/// `Some(Ok(value))` with the value where known.
fn bif(name: &str, args: &[Value]) -> Option<Result<Option<Value>, String>> {
    use Value::*;
    let badarg = || Some(Err("badarg".to_string()));
    let ok = |v: Value| Some(Ok(Some(v)));
    let int = |v: &Value| match v {
        Int(i) => Some(i.clone()),
        _ => None,
    };
    let type_test = |b: bool| Some(Ok(Some(boolean(b))));
    match (name, args) {
        ("lists:append", [x, y]) if list_operator_fails(BinaryOp::Append, x, y) => badarg(),
        ("lists:subtract", [x, y]) if list_operator_fails(BinaryOp::Subtract, x, y) => badarg(),
        ("lists:append" | "lists:subtract", [_, _]) => Some(Ok(None)),
        ("is_atom", [x]) => type_test(matches!(x, Atom(_))),
        ("is_integer", [x]) => type_test(matches!(x, Int(_))),
        ("is_float", [x]) => type_test(matches!(x, Float(_))),
        ("is_number", [x]) => type_test(matches!(x, Int(_) | Float(_))),
        ("is_list", [x]) => type_test(matches!(x, Nil | Cons(..))),
        ("is_tuple", [x]) => type_test(matches!(x, Tuple(_))),
        ("is_map", [x]) => type_test(matches!(x, Map(_))),
        ("is_function", [x]) => type_test(matches!(x, Fun)),
        ("is_boolean", [Atom(a)]) => type_test(a == "true" || a == "false"),
        ("is_boolean", [_]) => type_test(false),
        ("is_binary" | "is_bitstring" | "is_pid" | "is_port" | "is_reference", [x]) => {
            if matches!(x, Fun) {
                None
            } else {
                type_test(false)
            }
        }
        ("atom_to_list", [Atom(a)]) => ok(string(&a.chars().map(|c| c as u32).collect::<Vec<_>>())),
        ("atom_to_binary", [Atom(_)]) => Some(Ok(None)),
        ("atom_to_list" | "atom_to_binary", [_]) => badarg(),
        ("list_to_atom", [x]) => match chars_of(x) {
            Some(s) => ok(Atom(s)),
            None => badarg(),
        },
        ("integer_to_list", [Int(i)]) => ok(string(
            &i.to_string().chars().map(|c| c as u32).collect::<Vec<_>>(),
        )),
        ("integer_to_binary", [Int(_)]) => Some(Ok(None)),
        ("integer_to_list" | "integer_to_binary", [_]) => badarg(),
        ("list_to_integer" | "list_to_float" | "list_to_binary", [Fun]) => None,
        ("list_to_integer" | "list_to_float" | "list_to_binary", [x])
            if !matches!(x, Nil | Cons(..)) =>
        {
            badarg()
        }
        ("list_to_integer", [x]) => {
            let Some(s) = chars_of(x) else {
                return not_chars(x);
            };
            let digits = s.strip_prefix(['-', '+']).unwrap_or(&s);
            if !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()) {
                s.parse::<BigInt>().ok().map(|i| Ok(Some(Int(i))))
            } else {
                badarg()
            }
        }
        ("list_to_integer", [x, base]) => {
            if matches!(x, Fun) || matches!(base, Fun) {
                return None;
            }
            let base = int(base)
                .and_then(|b| b.to_u32())
                .filter(|b| (2..=36).contains(b));
            let (Some(base), Some(_)) = (base, list_of(x)) else {
                return badarg();
            };
            let Some(s) = chars_of(x) else {
                return not_chars(x);
            };
            let digits = s.strip_prefix(['-', '+']).unwrap_or(&s);
            if !digits.is_empty() && digits.chars().all(|c| c.is_digit(base)) {
                Some(Ok(None))
            } else {
                badarg()
            }
        }
        ("list_to_float", [x]) => match chars_of(x) {
            None => not_chars(x),
            Some(s) => match float_syntax(&s) {
                Some(f) => ok(Float(f)),
                None => badarg(),
            },
        },
        ("list_to_binary", [x]) => {
            if iolist_known(x)? {
                Some(Ok(None))
            } else {
                badarg()
            }
        }
        ("float_to_list" | "float_to_binary", [Float(_)]) => Some(Ok(None)),
        ("float_to_list" | "float_to_binary", [Fun]) => None,
        ("float_to_list" | "float_to_binary", [_]) => badarg(),
        ("atom_to_binary", [Atom(_), Atom(enc)]) => match enc.as_str() {
            "latin1" | "unicode" | "utf8" => Some(Ok(None)),
            _ => badarg(),
        },
        ("atom_to_binary", [Fun, _] | [_, Fun]) => None,
        ("atom_to_binary", [_, _]) => badarg(),
        ("hd", [Cons(h, _)]) => ok((**h).clone()),
        ("tl", [Cons(_, t)]) => ok((**t).clone()),
        ("hd" | "tl", [_]) => badarg(),
        ("length", [x]) => match list_of(x) {
            Some(items) => ok(Int(BigInt::from(items.len()))),
            None => badarg(),
        },
        ("tuple_size" | "size", [Tuple(t)]) => ok(Int(BigInt::from(t.len()))),
        ("tuple_size" | "size", [_]) => badarg(),
        ("element", [n, Tuple(t)]) => match int(n).and_then(|n| n.to_usize()) {
            Some(n) if n >= 1 && n <= t.len() => ok(t[n - 1].clone()),
            _ => badarg(),
        },
        ("element", [_, _]) => badarg(),
        ("setelement", [n, Tuple(t), v]) => match int(n).and_then(|n| n.to_usize()) {
            Some(n) if n >= 1 && n <= t.len() => {
                let mut t = t.clone();
                t[n - 1] = v.clone();
                ok(Tuple(t))
            }
            _ => badarg(),
        },
        ("setelement", [_, _, _]) => badarg(),
        ("tuple_to_list", [Tuple(t)]) => {
            let mut list = Nil;
            for x in t.iter().rev() {
                list = Cons(Box::new(x.clone()), Box::new(list));
            }
            ok(list)
        }
        ("tuple_to_list", [_]) => badarg(),
        ("list_to_tuple", [x]) => match list_of(x) {
            Some(items) => ok(Tuple(items.into_iter().cloned().collect())),
            None => badarg(),
        },
        ("abs", [Int(i)]) => ok(Int(if i < &BigInt::zero() { -i } else { i.clone() })),
        ("abs", [Float(f)]) => ok(Float(f.abs())),
        ("float", [Int(i)]) => i.to_f64().map(|f| Ok(Some(Float(f)))),
        ("float", [Float(f)]) => ok(Float(*f)),
        ("trunc" | "round" | "floor" | "ceil", [Int(_) | Float(_)]) => None,
        ("abs" | "float" | "trunc" | "round" | "floor" | "ceil", [_]) => badarg(),
        ("binary_to_list" | "bit_size" | "byte_size", [x]) => {
            if matches!(x, Fun) {
                None
            } else {
                badarg()
            }
        }
        (_, _) if name.starts_with("math:") => math(&name[5..], args),
        ("map_get", [k, Map(pairs)]) => match pairs.iter().rev().find(|(key, _)| key == k) {
            Some((_, v)) => ok(v.clone()),
            None => Some(Err(format!("{{badkey,{}}}", show(k)?))),
        },
        ("map_get", [_, Fun]) => None,
        ("map_get", [_, m]) => Some(Err(format!("{{badmap,{}}}", show(m)?))),
        _ => None,
    }
}

/// A `math` function on known arguments, as `bif` answers: `badarg` for
/// an argument that is not a number, `badarith` for a result (or an
/// integer argument) out of the floats' range or not a number at all.
fn math(f: &str, args: &[Value]) -> Option<Result<Option<Value>, String>> {
    let arity = match f {
        "pow" | "atan2" | "fmod" => 2,
        "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" | "asinh"
        | "acosh" | "atanh" | "exp" | "log" | "log2" | "log10" | "sqrt" | "erf" | "erfc"
        | "ceil" | "floor" => 1,
        _ => return None,
    };
    if args.len() != arity || args.iter().any(|a| matches!(a, Value::Fun)) {
        return None;
    }
    let mut xs = Vec::with_capacity(arity);
    for a in args {
        match a {
            Value::Float(f) => xs.push(*f),
            Value::Int(i) => match i.to_f64() {
                Some(f) if f.is_finite() => xs.push(f),
                _ => return Some(Err("badarith".to_string())),
            },
            _ => return Some(Err("badarg".to_string())),
        }
    }
    let x = xs[0];
    let r = match f {
        "pow" => x.powf(xs[1]),
        "atan2" => x.atan2(xs[1]),
        "fmod" => x % xs[1],
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tan" => x.tan(),
        "asin" => x.asin(),
        "acos" => x.acos(),
        "atan" => x.atan(),
        "sinh" => x.sinh(),
        "cosh" => x.cosh(),
        "tanh" => x.tanh(),
        "asinh" => x.asinh(),
        "acosh" => x.acosh(),
        "atanh" => x.atanh(),
        "exp" => x.exp(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "log10" => x.log10(),
        "sqrt" => x.sqrt(),
        // erf and erfc are defined and finite on every float.
        _ => 0.0,
    };
    if r.is_finite() {
        Some(Ok(None))
    } else {
        Some(Err("badarith".to_string()))
    }
}

/// The answer for a list given where a string of digits is wanted that
/// is not a string: it fails, unless a fun in it leaves that unknown.
fn not_chars(list: &Value) -> Option<Result<Option<Value>, String>> {
    match list_of(list) {
        Some(items) if !items.iter().any(|v| matches!(v, Value::Fun)) => {
            Some(Err("badarg".to_string()))
        }
        _ => None,
    }
}

/// Erlang's float syntax as `list_to_float/1` reads it (a sign, digits, a
/// point, digits, an optional exponent); `None` for anything else or a
/// value beyond the floats' range.
fn float_syntax(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) || b.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    if !digits(&mut i) {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Whether a known term is an iolist of bytes: `Some(false)` when it is
/// not, `None` where a fun makes it unknown.
fn iolist_known(v: &Value) -> Option<bool> {
    let mut rest = v;
    loop {
        match rest {
            Value::Nil => return Some(true),
            Value::Cons(h, t) => {
                match h.as_ref() {
                    Value::Int(i) if i.to_u8().is_some() => {}
                    Value::Nil | Value::Cons(..) => {
                        if !iolist_known(h)? {
                            return Some(false);
                        }
                    }
                    Value::Fun => return None,
                    _ => return Some(false),
                }
                rest = t;
            }
            Value::Fun => return None,
            _ => return Some(false),
        }
    }
}

/// A value as `~w` writes it, for the simple keys named in messages.
fn show(v: &Value) -> Option<String> {
    match v {
        Value::Int(i) => Some(i.to_string()),
        Value::Atom(a)
            if a.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@') =>
        {
            Some(a.clone())
        }
        _ => None,
    }
}
