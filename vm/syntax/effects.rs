//! The warnings OTP's optimiser (sys_core_fold) gives under escript's
//! `-mode(compile)` about values computed and then thrown away: an
//! expression whose result is ignored (not the last of a body, or the
//! value bound to a variable never used) and that has no side effect.
//!
//! What is warned, as OTP 25 does (checked against escript):
//! - a term built for nothing: a number, a non-empty string, a tuple,
//!   list, map, binary or `fun`, record construction ("a term is
//!   constructed, but never used"); atoms, `[]` and `""` are not warned.
//!   Bound to an unused variable, only a term with variables in it is.
//! - an operator: arithmetic, list and boolean ones "the result of
//!   evaluating operator ... is ignored", comparisons "use of operator
//!   ... has no effect" (`andalso`/`orelse` nothing);
//! - a call of a pure BIF: "the result of calling f/N is ignored" when it
//!   may fail, "the call to f/N has no effect" when it cannot;
//! - `fun m:f/N`: "the result of fun construction is ignored".
//!
//! The thrown-away context reaches into `begin`, `case`, `if` and
//! `receive` clause bodies and list comprehension heads, not into `try`
//! or `catch`. The optimiser also propagates constants and inlines funs,
//! which finds more (and can word them differently); act does not follow
//! values here, so it warns only where the expression alone decides
//! (inside a macro's expansion too: at the macro's name for what its
//! replacement wrote, at their places for its arguments). Code that
//! must fail (`1 + a`) is `constprop`'s to warn about.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::preprocess::Sources;
use super::span::Span;

const IGNORED: &str = "(suppress the warning by assigning the expression to the _ variable)";

/// erlang's BIFs that have no side effect but may fail (erl_bifs).
const PURE: &[(&str, u32)] = &[
    ("abs", 1),
    ("atom_to_binary", 1),
    ("atom_to_binary", 2),
    ("atom_to_list", 1),
    ("binary_part", 2),
    ("binary_part", 3),
    ("binary_to_atom", 1),
    ("binary_to_atom", 2),
    ("binary_to_float", 1),
    ("binary_to_integer", 1),
    ("binary_to_list", 1),
    ("binary_to_list", 3),
    ("bit_size", 1),
    ("byte_size", 1),
    ("ceil", 1),
    ("element", 2),
    ("float", 1),
    ("float_to_binary", 1),
    ("float_to_list", 1),
    ("floor", 1),
    ("hd", 1),
    ("integer_to_binary", 1),
    ("integer_to_list", 1),
    ("is_function", 2),
    ("is_map_key", 2),
    ("is_record", 2),
    ("is_record", 3),
    ("length", 1),
    ("list_to_atom", 1),
    ("list_to_binary", 1),
    ("list_to_float", 1),
    ("list_to_integer", 1),
    ("list_to_integer", 2),
    ("list_to_pid", 1),
    ("list_to_tuple", 1),
    ("make_fun", 3),
    ("map_get", 2),
    ("pid_to_list", 1),
    ("round", 1),
    ("setelement", 3),
    ("size", 1),
    ("split_binary", 2),
    ("tl", 1),
    ("trunc", 1),
    ("tuple_size", 1),
    ("tuple_to_list", 1),
];

/// erlang's BIFs that have no side effect and cannot fail (erl_bifs).
const SAFE: &[(&str, u32)] = &[
    ("date", 0),
    ("get", 0),
    ("get", 1),
    ("get_cookie", 0),
    ("get_keys", 1),
    ("group_leader", 0),
    ("is_alive", 0),
    ("is_atom", 1),
    ("is_binary", 1),
    ("is_bitstring", 1),
    ("is_boolean", 1),
    ("is_float", 1),
    ("is_function", 1),
    ("is_integer", 1),
    ("is_list", 1),
    ("is_map", 1),
    ("is_number", 1),
    ("is_pid", 1),
    ("is_port", 1),
    ("is_reference", 1),
    ("is_tuple", 1),
    ("make_ref", 0),
    ("max", 2),
    ("min", 2),
    ("node", 0),
    ("nodes", 0),
    ("ports", 0),
    ("pre_loaded", 0),
    ("processes", 0),
    ("registered", 0),
    ("self", 0),
    ("term_to_binary", 1),
    ("time", 0),
];

/// Pure functions of other modules (erl_bifs), named `m:f/N` in messages.
const PURE_REMOTE: &[(&str, &str, u32)] = &[
    ("math", "acos", 1),
    ("math", "acosh", 1),
    ("math", "asin", 1),
    ("math", "asinh", 1),
    ("math", "atan", 1),
    ("math", "atan2", 2),
    ("math", "atanh", 1),
    ("math", "ceil", 1),
    ("math", "cos", 1),
    ("math", "cosh", 1),
    ("math", "erf", 1),
    ("math", "erfc", 1),
    ("math", "exp", 1),
    ("math", "floor", 1),
    ("math", "fmod", 2),
    ("math", "log", 1),
    ("math", "log10", 1),
    ("math", "log2", 1),
    ("math", "pi", 0),
    ("math", "pow", 2),
    ("math", "sin", 1),
    ("math", "sinh", 1),
    ("math", "sqrt", 1),
    ("math", "tan", 1),
    ("math", "tanh", 1),
    ("lists", "append", 2),
    ("lists", "subtract", 2),
];

/// How a thrown-away value was thrown away.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Drop {
    /// A statement of a body.
    Statement,
    /// The value of a variable never used.
    Unbound,
    /// Inside a term built for nothing (already warned).
    Inside,
}

struct Effects<'a> {
    sources: &'a Sources,
    table: &'a super::check::FunctionTable,
    /// Spans of the variables the checker found unused.
    unused: &'a [Span],
    warnings: Vec<Diagnostic>,
}

/// The optimiser's warnings about values thrown away, for a module whose
/// unused variables are at `unused`.
pub fn warnings(module: &Module, sources: &Sources, unused: &[Span]) -> Vec<Diagnostic> {
    let table = super::check::FunctionTable::of(module);
    let mut effects = Effects {
        sources,
        table: &table,
        unused,
        warnings: Vec::new(),
    };
    for form in &module.forms {
        if let Form::Function(function) = form {
            for clause in &function.clauses {
                effects.clause(&clause.clause, false);
            }
        }
    }
    effects.warnings.sort_by_key(|d| d.span.start);
    effects.warnings
}

impl Effects<'_> {
    /// Warns at `at`. A macro's replacement sits at the macro's name and
    /// its arguments keep their places, where OTP warns too.
    fn warn(&mut self, message: String, at: usize) {
        self.warnings
            .push(Diagnostic::warning(message, Span::new(at, at + 1)));
    }

    fn clause(&mut self, clause: &Clause, thrown: bool) {
        self.body(&clause.body, thrown);
    }

    /// A body; `thrown`: its value (its last expression's) is thrown away.
    fn body(&mut self, exprs: &[Expr], thrown: bool) {
        for (i, e) in exprs.iter().enumerate() {
            let last = i + 1 == exprs.len();
            if !last
                && let ExprKind::Match(pattern, value) = &e.kind
                && let ExprKind::Var(_) = pattern.kind
                && self.unused.contains(&pattern.span)
            {
                self.dropped(value, Drop::Unbound);
            } else if !last || thrown {
                self.dropped(e, Drop::Statement);
            } else {
                self.value(e);
            }
        }
    }

    /// An expression whose value is used: only the bodies inside it matter.
    fn value(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Fun(fun) => match fun.as_ref() {
                Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                    for c in clauses {
                        self.clause(c, false);
                    }
                }
                Fun::Local(_) | Fun::Remote { .. } => {}
            },
            ExprKind::Case(subject, clauses) => {
                self.value(subject);
                for c in clauses {
                    self.clause(c, false);
                }
            }
            ExprKind::If(clauses) => {
                for c in clauses {
                    self.clause(c, false);
                }
            }
            ExprKind::Receive(clauses, after) => {
                for c in clauses {
                    self.clause(c, false);
                }
                if let Some(after) = after {
                    self.value(&after.timeout);
                    self.body(&after.body, false);
                }
            }
            ExprKind::Try(t) => {
                self.body(&t.body, false);
                for c in &t.of_clauses {
                    self.clause(c, false);
                }
                for c in &t.catch_clauses {
                    self.body(&c.body, false);
                }
                self.body(&t.after, false);
            }
            ExprKind::Block(exprs) => self.body(exprs, false),
            _ => {
                let mut children = Vec::new();
                super::walk::children(e, &mut children);
                for child in children {
                    self.value(child);
                }
            }
        }
    }

    /// An expression whose value is thrown away.
    fn dropped(&mut self, e: &Expr, how: Drop) {
        let at = e.span.start as usize;
        match &e.kind {
            ExprKind::Atom(_) | ExprKind::Var(_) => {}
            ExprKind::String(s) if s.is_empty() => {}
            ExprKind::List(elements, None) if elements.is_empty() => {}
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::String(_) => {
                if how == Drop::Statement {
                    self.warn("a term is constructed, but never used".into(), at);
                }
            }
            ExprKind::List(..) | ExprKind::Tuple(_) | ExprKind::Map(_) | ExprKind::Binary(_) => {
                let literal = is_literal(e);
                if how == Drop::Statement || (how == Drop::Unbound && !literal) {
                    self.warn("a term is constructed, but never used".into(), at);
                }
                if !literal {
                    let mut children = Vec::new();
                    super::walk::children(e, &mut children);
                    for child in children {
                        self.dropped(child, Drop::Inside);
                    }
                }
            }
            ExprKind::Fun(fun) => match fun.as_ref() {
                Fun::Anonymous(_) | Fun::Named(..) => {
                    if how != Drop::Inside {
                        self.warn("a term is constructed, but never used".into(), at);
                    }
                    self.value(e);
                }
                Fun::Remote {
                    module,
                    function,
                    arity,
                } => {
                    if how == Drop::Statement
                        && matches!(module.kind, ExprKind::Atom(_))
                        && matches!(function.kind, ExprKind::Atom(_))
                        && matches!(arity.kind, ExprKind::Integer(_))
                    {
                        self.warn(
                            format!("the result of fun construction is ignored {IGNORED}"),
                            at,
                        );
                    }
                }
                Fun::Local(_) => {}
            },
            ExprKind::UnaryOp(op, a) => {
                let folded = *op == UnaryOp::Minus && super::fold::number(e).is_some();
                if how == Drop::Statement || !folded {
                    self.warn(
                        format!(
                            "the result of evaluating operator '{}'/1 is ignored {IGNORED}",
                            op.symbol()
                        ),
                        at,
                    );
                }
                self.value(a);
            }
            ExprKind::BinaryOp(op, a, b) => {
                use BinaryOp::*;
                match op {
                    AndAlso | OrElse => {}
                    Eq | NotEq | ExactEq | ExactNotEq | Less | LessEq | Greater | GreaterEq => {
                        let at = self.operator_at(a, b);
                        self.warn(
                            format!("use of operator '{}' has no effect", op.symbol()),
                            at,
                        );
                    }
                    _ => {
                        let at = self.operator_at(a, b);
                        self.warn(
                            format!(
                                "the result of evaluating operator '{}'/2 is ignored {IGNORED}",
                                op.symbol()
                            ),
                            at,
                        );
                    }
                }
                self.value(a);
                self.value(b);
            }
            ExprKind::Call(target, args) => {
                let arity = args.len() as u32;
                let bif = match target.as_ref() {
                    CallTarget::Local(name, _)
                        if self.table.resolve(name, arity)
                            == super::check::LocalCall::AutoImported =>
                    {
                        Some(name.clone())
                    }
                    CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                        (ExprKind::Atom(m), ExprKind::Atom(f))
                            if m == "erlang" && is_operator(f, arity) =>
                        {
                            self.warn(
                                format!("the result of evaluating operator '{f}'/{arity} is ignored {IGNORED}"),
                                at,
                            );
                            None
                        }
                        (ExprKind::Atom(m), ExprKind::Atom(f)) if m == "erlang" => Some(f.clone()),
                        (ExprKind::Atom(m), ExprKind::Atom(f))
                            if PURE_REMOTE
                                .iter()
                                .any(|&(pm, pf, pa)| pm == m && pf == f && pa == arity) =>
                        {
                            self.warn(
                                format!(
                                    "the result of calling {m}:{f}/{arity} is ignored {IGNORED}"
                                ),
                                at,
                            );
                            None
                        }
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(name) = bif {
                    let key = (name.as_str(), arity);
                    if PURE.contains(&key) {
                        self.warn(
                            format!("the result of calling {name}/{arity} is ignored {IGNORED}"),
                            at,
                        );
                    } else if SAFE.contains(&key) {
                        self.warn(format!("the call to {name}/{arity} has no effect"), at);
                    }
                }
                self.value(e);
            }
            ExprKind::Block(exprs) if how == Drop::Statement && !generated(e) => {
                self.body(exprs, true)
            }
            ExprKind::Case(subject, clauses) if how == Drop::Statement && !generated(e) => {
                self.value(subject);
                for c in clauses {
                    self.clause(c, true);
                }
            }
            ExprKind::If(clauses) if how == Drop::Statement => {
                for c in clauses {
                    self.clause(c, true);
                }
            }
            ExprKind::Receive(clauses, after) if how == Drop::Statement => {
                for c in clauses {
                    self.clause(c, true);
                }
                if let Some(after) = after {
                    self.value(&after.timeout);
                    self.body(&after.body, true);
                }
            }
            ExprKind::ListComprehension(head, qualifiers) if how == Drop::Statement => {
                for q in qualifiers {
                    match q {
                        Qualifier::Generator(_, source) | Qualifier::BinaryGenerator(_, source) => {
                            self.value(source)
                        }
                        Qualifier::Filter(f) => self.value(f),
                    }
                }
                self.dropped(head, Drop::Statement);
            }
            _ => self.value(e),
        }
    }

    /// Where the operator of `a OP b` is: the first character after `a`
    /// (and any closing parentheses and comments) in the source.
    fn operator_at(&self, a: &Expr, b: &Expr) -> usize {
        self.sources.operator_between(a.span.end, b.span.start)
    }
}

/// `erlang:'+'/2` and the other operators that may fail, called by name.
fn is_operator(name: &str, arity: u32) -> bool {
    const BINARY: &[&str] = &[
        "+", "-", "*", "/", "div", "rem", "band", "bor", "bxor", "bsl", "bsr", "and", "or", "xor",
        "++", "--",
    ];
    const UNARY: &[&str] = &["+", "-", "not", "bnot"];
    (arity == 2 && BINARY.contains(&name)) || (arity == 1 && UNARY.contains(&name))
}

/// A constant term: the optimiser builds it at compile time.
fn is_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => true,
        ExprKind::List(elements, tail) => {
            elements.iter().all(is_literal) && tail.as_deref().is_none_or(is_literal)
        }
        ExprKind::Tuple(elements) => elements.iter().all(is_literal),
        ExprKind::Map(fields) => fields
            .iter()
            .all(|f| !f.exact && is_literal(&f.key) && is_literal(&f.value)),
        ExprKind::Binary(elements) => elements
            .iter()
            .all(|el| is_literal(&el.value) && el.size.as_ref().is_none_or(is_literal)),
        ExprKind::UnaryOp(UnaryOp::Minus | UnaryOp::Plus, _) => super::fold::number(e).is_some(),
        _ => false,
    }
}

/// Code the record expansion made (it binds variables named `%r<N>`): not
/// the program's own expressions, so not warned about.
fn generated(e: &Expr) -> bool {
    let mut pending = vec![e];
    while let Some(e) = pending.pop() {
        if let ExprKind::Var(name) = &e.kind
            && name.starts_with('%')
        {
            return true;
        }
        super::walk::children(e, &mut pending);
    }
    false
}
