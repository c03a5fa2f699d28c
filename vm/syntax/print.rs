//! A compact, deterministic text form of the AST, for snapshot tests and
//! for debugging.
//!
//! Each form prints as a header line and, for functions, one line per
//! clause. Expressions print in prefix form, so precedence is explicit:
//! `1 + 2 * 3` prints as `(+ 1 (* 2 3))`. Spans are not printed. Trees are
//! bounded in depth by the parser, so the recursion here is bounded too.

use super::ast::*;
use std::fmt::Write;

/// The whole module, one form after another.
pub fn module_to_string(module: &Module) -> String {
    let mut out = String::new();
    for form in &module.forms {
        out.push_str(&form_to_string(form));
    }
    out
}

/// One form, ending with a newline.
pub fn form_to_string(form: &Form) -> String {
    let mut out = String::new();
    match form {
        Form::Attribute(attribute) => match &attribute.kind {
            AttributeKind::Module(name) => {
                let _ = writeln!(out, "-module({}).", atom(name));
            }
            AttributeKind::Export(names) => {
                let names: Vec<String> = names
                    .iter()
                    .map(|n| format!("{}/{}", atom(&n.name), n.arity))
                    .collect();
                let _ = writeln!(out, "-export([{}]).", names.join(", "));
            }
            AttributeKind::Other(name) => {
                let _ = writeln!(out, "-{}(...).", atom(name));
            }
            AttributeKind::Record(def) => {
                let fields: Vec<String> = def
                    .fields
                    .iter()
                    .map(|f| match &f.default {
                        Some(d) => format!("{} = {}", atom(&f.name.name), expr_to_string(d)),
                        None => atom(&f.name.name),
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "-record({}, {{{}}}).",
                    atom(&def.name.name),
                    fields.join(", ")
                );
            }
            AttributeKind::Import(module, names) => {
                let names: Vec<String> = names
                    .iter()
                    .map(|n| format!("{}/{}", atom(&n.name), n.arity))
                    .collect();
                let _ = writeln!(out, "-import({}, [{}]).", atom(module), names.join(", "));
            }
            AttributeKind::ExportAll { .. } => out.push_str("-compile(export_all).\n"),
        },
        Form::Function(function) => {
            let _ = writeln!(out, "function {}/{}", atom(&function.name), function.arity);
            for clause in &function.clauses {
                out.push_str("  ");
                out.push_str(&atom(&clause.name));
                clause_text(&mut out, &clause.clause);
                out.push('\n');
            }
        }
    }
    out
}

/// One expression.
pub fn expr_to_string(expr: &Expr) -> String {
    let mut out = String::new();
    expr_text(&mut out, expr);
    out
}

/// An atom as Erlang writes it: bare when it can be, quoted otherwise.
pub fn atom(name: &str) -> String {
    const RESERVED: &[&str] = &[
        "after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl", "bsr", "bxor", "case",
        "catch", "div", "end", "fun", "if", "not", "of", "or", "orelse", "receive", "rem", "try",
        "when", "xor",
    ];
    let mut chars = name.chars();
    let bare = matches!(chars.next(), Some('a'..='z'))
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
        && !RESERVED.contains(&name);
    if bare {
        name.to_string()
    } else {
        let mut quoted = String::from("'");
        for c in name.chars() {
            escape_char(&mut quoted, c as u32, '\'');
        }
        quoted.push('\'');
        quoted
    }
}

fn escape_char(out: &mut String, code: u32, quote: char) {
    match char::from_u32(code) {
        Some('\n') => out.push_str("\\n"),
        Some('\t') => out.push_str("\\t"),
        Some('\\') => out.push_str("\\\\"),
        Some(c) if c == quote => {
            out.push('\\');
            out.push(c);
        }
        Some(c) if !c.is_control() => out.push(c),
        _ => {
            let _ = write!(out, "\\x{{{code:X}}}");
        }
    }
}

fn clause_text(out: &mut String, clause: &Clause) {
    out.push('(');
    list_text(out, &clause.patterns, ", ");
    out.push(')');
    guard_text(out, &clause.guard);
    out.push_str(" -> ");
    list_text(out, &clause.body, ", ");
}

fn guard_text(out: &mut String, guard: &Guard) {
    if guard.is_empty() {
        return;
    }
    out.push_str(" when ");
    for (i, tests) in guard.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        list_text(out, tests, ", ");
    }
}

fn list_text(out: &mut String, exprs: &[Expr], separator: &str) {
    for (i, e) in exprs.iter().enumerate() {
        if i > 0 {
            out.push_str(separator);
        }
        expr_text(out, e);
    }
}

fn clauses_text(out: &mut String, clauses: &[Clause]) {
    for clause in clauses {
        out.push_str(" (clause ");
        clause_text(out, clause);
        out.push(')');
    }
}

fn expr_text(out: &mut String, expr: &Expr) {
    match &expr.kind {
        ExprKind::Integer(i) => {
            let _ = write!(out, "{i}");
        }
        ExprKind::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        ExprKind::Atom(a) => out.push_str(&atom(a)),
        ExprKind::String(codes) => {
            out.push('"');
            for &code in codes {
                escape_char(out, code, '"');
            }
            out.push('"');
        }
        ExprKind::Var(v) => out.push_str(v),
        ExprKind::List(elements, tail) => {
            // `[a | [b | T]]` prints as `[a, b | T]`: the same list, and
            // the way Erlang's own printer shows it.
            out.push('[');
            list_text(out, elements, ", ");
            let mut tail = tail.as_deref();
            while let Some(rest) = tail {
                match &rest.kind {
                    ExprKind::List(more, next) => {
                        if !more.is_empty() {
                            out.push_str(", ");
                            list_text(out, more, ", ");
                        }
                        tail = next.as_deref();
                    }
                    _ => {
                        out.push_str(" | ");
                        expr_text(out, rest);
                        tail = None;
                    }
                }
            }
            out.push(']');
        }
        ExprKind::Tuple(elements) => {
            out.push('{');
            list_text(out, elements, ", ");
            out.push('}');
        }
        ExprKind::Map(fields) => map_text(out, fields),
        ExprKind::MapUpdate(map, fields) => {
            out.push_str("(update ");
            expr_text(out, map);
            out.push(' ');
            map_text(out, fields);
            out.push(')');
        }
        ExprKind::Record(name, fields) => {
            out.push('#');
            out.push_str(&atom(&name.name));
            record_fields_text(out, fields);
        }
        ExprKind::RecordUpdate(record, name, fields) => {
            out.push_str("(update ");
            expr_text(out, record);
            out.push_str(" #");
            out.push_str(&atom(&name.name));
            record_fields_text(out, fields);
            out.push(')');
        }
        ExprKind::RecordAccess(record, name, field) => {
            out.push_str("(field ");
            expr_text(out, record);
            let _ = write!(out, " #{}.{})", atom(&name.name), atom(&field.name));
        }
        ExprKind::RecordIndex(name, field) => {
            let _ = write!(out, "#{}.{}", atom(&name.name), atom(&field.name));
        }
        ExprKind::Binary(elements) => {
            out.push_str("<<");
            for (i, element) in elements.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                expr_text(out, &element.value);
                if let Some(size) = &element.size {
                    out.push(':');
                    expr_text(out, size);
                }
                for (j, specifier) in element.specifiers.iter().enumerate() {
                    out.push(if j == 0 { '/' } else { '-' });
                    out.push_str(&specifier.name);
                    if let Some(value) = specifier.value {
                        let _ = write!(out, ":{value}");
                    }
                }
            }
            out.push_str(">>");
        }
        ExprKind::BinaryOp(op, a, b) => {
            let _ = write!(out, "({} ", op.symbol());
            expr_text(out, a);
            out.push(' ');
            expr_text(out, b);
            out.push(')');
        }
        ExprKind::UnaryOp(op, e) => {
            let _ = write!(out, "({} ", op.symbol());
            expr_text(out, e);
            out.push(')');
        }
        ExprKind::Match(p, e) => {
            out.push_str("(= ");
            expr_text(out, p);
            out.push(' ');
            expr_text(out, e);
            out.push(')');
        }
        ExprKind::Send(p, e) => {
            out.push_str("(! ");
            expr_text(out, p);
            out.push(' ');
            expr_text(out, e);
            out.push(')');
        }
        ExprKind::Call(target, args) => {
            out.push_str("(call ");
            match target.as_ref() {
                CallTarget::Local(name, _) => out.push_str(&atom(name)),
                CallTarget::Remote(m, f) => {
                    expr_text(out, m);
                    out.push(':');
                    expr_text(out, f);
                }
                CallTarget::Fun(f) => {
                    out.push_str("fun ");
                    expr_text(out, f);
                }
            }
            for arg in args {
                out.push(' ');
                expr_text(out, arg);
            }
            out.push(')');
        }
        ExprKind::Fun(fun) => match fun.as_ref() {
            Fun::Anonymous(clauses) => {
                out.push_str("(fun");
                clauses_text(out, clauses);
                out.push(')');
            }
            Fun::Named(name, clauses) => {
                let _ = write!(out, "(fun {}", name.name);
                clauses_text(out, clauses);
                out.push(')');
            }
            Fun::Local(name) => {
                let _ = write!(out, "(fun {}/{})", atom(&name.name), name.arity);
            }
            Fun::Remote {
                module,
                function,
                arity,
            } => {
                out.push_str("(fun ");
                expr_text(out, module);
                out.push(':');
                expr_text(out, function);
                out.push('/');
                expr_text(out, arity);
                out.push(')');
            }
        },
        ExprKind::Case(subject, clauses) => {
            out.push_str("(case ");
            expr_text(out, subject);
            clauses_text(out, clauses);
            out.push(')');
        }
        ExprKind::If(clauses) => {
            out.push_str("(if");
            clauses_text(out, clauses);
            out.push(')');
        }
        ExprKind::Receive(clauses, after) => {
            out.push_str("(receive");
            clauses_text(out, clauses);
            if let Some(after) = after {
                out.push_str(" (after ");
                expr_text(out, &after.timeout);
                out.push_str(" -> ");
                list_text(out, &after.body, ", ");
                out.push(')');
            }
            out.push(')');
        }
        ExprKind::Try(t) => {
            out.push_str("(try ");
            list_text(out, &t.body, ", ");
            if !t.of_clauses.is_empty() {
                out.push_str(" (of");
                clauses_text(out, &t.of_clauses);
                out.push(')');
            }
            for clause in &t.catch_clauses {
                out.push_str(" (catch ");
                if let Some(class) = &clause.class {
                    expr_text(out, class);
                    out.push(':');
                }
                expr_text(out, &clause.reason);
                if let Some(stack) = &clause.stack {
                    out.push(':');
                    out.push_str(&stack.name);
                }
                guard_text(out, &clause.guard);
                out.push_str(" -> ");
                list_text(out, &clause.body, ", ");
                out.push(')');
            }
            if !t.after.is_empty() {
                out.push_str(" (after ");
                list_text(out, &t.after, ", ");
                out.push(')');
            }
            out.push(')');
        }
        ExprKind::Catch(e) => {
            out.push_str("(catch ");
            expr_text(out, e);
            out.push(')');
        }
        ExprKind::Block(body) => {
            out.push_str("(begin ");
            list_text(out, body, ", ");
            out.push(')');
        }
        ExprKind::ListComprehension(e, qualifiers)
        | ExprKind::BinaryComprehension(e, qualifiers) => {
            out.push_str(if matches!(expr.kind, ExprKind::ListComprehension(..)) {
                "(lc "
            } else {
                "(bc "
            });
            expr_text(out, e);
            for qualifier in qualifiers {
                out.push_str(" (");
                match qualifier {
                    Qualifier::Generator(p, e) => {
                        out.push_str("<- ");
                        expr_text(out, p);
                        out.push(' ');
                        expr_text(out, e);
                    }
                    Qualifier::BinaryGenerator(p, e) => {
                        out.push_str("<= ");
                        expr_text(out, p);
                        out.push(' ');
                        expr_text(out, e);
                    }
                    Qualifier::Filter(e) => {
                        out.push_str("filter ");
                        expr_text(out, e);
                    }
                }
                out.push(')');
            }
            out.push(')');
        }
    }
}

fn map_text(out: &mut String, fields: &[MapField]) {
    out.push_str("#{");
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        expr_text(out, &field.key);
        out.push_str(if field.exact { " := " } else { " => " });
        expr_text(out, &field.value);
    }
    out.push('}');
}

fn record_fields_text(out: &mut String, fields: &[RecordField]) {
    out.push('{');
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if field.name.name == "_" {
            out.push('_');
        } else {
            out.push_str(&atom(&field.name.name));
        }
        out.push_str(" = ");
        expr_text(out, &field.value);
    }
    out.push('}');
}
