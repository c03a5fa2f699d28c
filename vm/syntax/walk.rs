//! Non-recursive traversal of the AST: direct children of a node, and
//! taking a tree apart without recursion.
//!
//! The parser builds trees of any depth (lalrpop's parser is iterative), so
//! the passes that must see a tree before its depth is known to be bounded
//! (the depth check, dropping a rejected tree) use these explicit-stack
//! helpers instead of recursion.

use super::ast::*;

/// The expressions directly inside one clause: patterns, guard, body.
pub fn clause_exprs<'a>(clause: &'a Clause, out: &mut Vec<&'a Expr>) {
    out.extend(clause.patterns.iter());
    out.extend(clause.guard.iter().flatten());
    out.extend(clause.body.iter());
}

/// The top-level expressions of a form.
pub fn form_roots<'a>(form: &'a Form, out: &mut Vec<&'a Expr>) {
    if let Form::Function(function) = form {
        for clause in &function.clauses {
            clause_exprs(&clause.clause, out);
        }
    }
}

/// Pushes the direct sub-expressions of `expr` onto `out`.
pub fn children<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &expr.kind {
        ExprKind::Integer(_)
        | ExprKind::Float(_)
        | ExprKind::Atom(_)
        | ExprKind::String(_)
        | ExprKind::Var(_) => {}
        ExprKind::List(elements, tail) => {
            out.extend(elements.iter());
            out.extend(tail.as_deref());
        }
        ExprKind::Tuple(elements) | ExprKind::Block(elements) => out.extend(elements.iter()),
        ExprKind::Map(fields) => map_fields(fields, out),
        ExprKind::MapUpdate(map, fields) => {
            out.push(map);
            map_fields(fields, out);
        }
        ExprKind::Record(_, fields) => out.extend(fields.iter().map(|f| &f.value)),
        ExprKind::RecordUpdate(record, _, fields) => {
            out.push(record);
            out.extend(fields.iter().map(|f| &f.value));
        }
        ExprKind::RecordAccess(record, _, _) => out.push(record),
        ExprKind::RecordIndex(..) => {}
        ExprKind::Binary(elements) => {
            for element in elements {
                out.push(&element.value);
                out.extend(element.size.as_ref());
            }
        }
        ExprKind::BinaryOp(_, a, b) | ExprKind::Match(a, b) | ExprKind::Send(a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::UnaryOp(_, e) | ExprKind::Catch(e) => out.push(e),
        ExprKind::Call(target, args) => {
            match target.as_ref() {
                CallTarget::Local(..) => {}
                CallTarget::Remote(m, f) => {
                    out.push(m);
                    out.push(f);
                }
                CallTarget::Fun(f) => out.push(f),
            }
            out.extend(args.iter());
        }
        ExprKind::Fun(fun) => match fun.as_ref() {
            Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                for clause in clauses {
                    clause_exprs(clause, out);
                }
            }
            Fun::Local(_) => {}
            Fun::Remote {
                module,
                function,
                arity,
            } => {
                out.push(module);
                out.push(function);
                out.push(arity);
            }
        },
        ExprKind::Case(subject, clauses) => {
            out.push(subject);
            for clause in clauses {
                clause_exprs(clause, out);
            }
        }
        ExprKind::If(clauses) => {
            for clause in clauses {
                clause_exprs(clause, out);
            }
        }
        ExprKind::Receive(clauses, after) => {
            for clause in clauses {
                clause_exprs(clause, out);
            }
            if let Some(after) = after {
                out.push(&after.timeout);
                out.extend(after.body.iter());
            }
        }
        ExprKind::Try(t) => {
            out.extend(t.body.iter());
            for clause in &t.of_clauses {
                clause_exprs(clause, out);
            }
            for clause in &t.catch_clauses {
                out.extend(clause.class.as_ref());
                out.push(&clause.reason);
                out.extend(clause.guard.iter().flatten());
                out.extend(clause.body.iter());
            }
            out.extend(t.after.iter());
        }
        ExprKind::ListComprehension(e, qualifiers)
        | ExprKind::BinaryComprehension(e, qualifiers) => {
            out.push(e);
            for qualifier in qualifiers {
                match qualifier {
                    Qualifier::Generator(p, e) | Qualifier::BinaryGenerator(p, e) => {
                        out.push(p);
                        out.push(e);
                    }
                    Qualifier::Filter(e) => out.push(e),
                }
            }
        }
    }
}

fn map_fields<'a>(fields: &'a [MapField], out: &mut Vec<&'a Expr>) {
    for field in fields {
        out.push(&field.key);
        out.push(&field.value);
    }
}

/// The span of the first expression found deeper than `limit` levels
/// below `roots` (the roots are at level 1), if any.
pub fn deeper_than(roots: Vec<&Expr>, limit: usize) -> Option<super::span::Span> {
    let mut stack: Vec<(&Expr, usize)> = roots.into_iter().map(|e| (e, 1)).collect();
    let mut children_buffer = Vec::new();
    while let Some((expr, depth)) = stack.pop() {
        if depth > limit {
            return Some(expr.span);
        }
        children(expr, &mut children_buffer);
        stack.extend(children_buffer.drain(..).map(|e| (e, depth + 1)));
    }
    None
}

/// Drops a tree of any depth using an explicit stack: each node is emptied
/// of its children before it is dropped, so no drop recurses deeply.
pub fn dismantle(roots: Vec<Expr>) {
    let mut stack = roots;
    while let Some(mut expr) = stack.pop() {
        take_children(&mut expr, &mut stack);
    }
}

/// Takes a form apart without recursion.
pub fn dismantle_form(form: Form) {
    if let Form::Function(function) = form {
        let mut roots = Vec::new();
        for clause in function.clauses {
            take_clause(clause.clause, &mut roots);
        }
        dismantle(roots);
    }
}

fn take_clause(clause: Clause, out: &mut Vec<Expr>) {
    out.extend(clause.patterns);
    out.extend(clause.guard.into_iter().flatten());
    out.extend(clause.body);
}

fn take_box(expr: &mut Box<Expr>, out: &mut Vec<Expr>) {
    let placeholder = Expr::new(ExprKind::Atom(String::new()), expr.span);
    out.push(std::mem::replace(expr.as_mut(), placeholder));
}

/// Moves the direct children of `expr` onto `out`, leaving `expr` shallow.
fn take_children(expr: &mut Expr, out: &mut Vec<Expr>) {
    match &mut expr.kind {
        ExprKind::Integer(_)
        | ExprKind::Float(_)
        | ExprKind::Atom(_)
        | ExprKind::String(_)
        | ExprKind::Var(_) => {}
        ExprKind::List(elements, tail) => {
            out.append(elements);
            if let Some(tail) = tail {
                take_box(tail, out);
            }
        }
        ExprKind::Tuple(elements) | ExprKind::Block(elements) => out.append(elements),
        ExprKind::Map(fields) => take_fields(fields, out),
        ExprKind::MapUpdate(map, fields) => {
            take_box(map, out);
            take_fields(fields, out);
        }
        ExprKind::Record(_, fields) => {
            out.extend(std::mem::take(fields).into_iter().map(|f| f.value));
        }
        ExprKind::RecordUpdate(record, _, fields) => {
            take_box(record, out);
            out.extend(std::mem::take(fields).into_iter().map(|f| f.value));
        }
        ExprKind::RecordAccess(record, _, _) => take_box(record, out),
        ExprKind::RecordIndex(..) => {}
        ExprKind::Binary(elements) => {
            for element in std::mem::take(elements) {
                out.push(element.value);
                out.extend(element.size);
            }
        }
        ExprKind::BinaryOp(_, a, b) | ExprKind::Match(a, b) | ExprKind::Send(a, b) => {
            take_box(a, out);
            take_box(b, out);
        }
        ExprKind::UnaryOp(_, e) | ExprKind::Catch(e) => take_box(e, out),
        ExprKind::Call(target, args) => {
            match target.as_mut() {
                CallTarget::Local(..) => {}
                CallTarget::Remote(m, f) => {
                    out.push(std::mem::replace(
                        m,
                        Expr::new(ExprKind::Atom(String::new()), m.span),
                    ));
                    out.push(std::mem::replace(
                        f,
                        Expr::new(ExprKind::Atom(String::new()), f.span),
                    ));
                }
                CallTarget::Fun(f) => out.push(std::mem::replace(
                    f,
                    Expr::new(ExprKind::Atom(String::new()), f.span),
                )),
            }
            out.append(args);
        }
        ExprKind::Fun(fun) => match fun.as_mut() {
            Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                for clause in std::mem::take(clauses) {
                    take_clause(clause, out);
                }
            }
            Fun::Local(_) | Fun::Remote { .. } => {}
        },
        ExprKind::Case(subject, clauses) => {
            take_box(subject, out);
            for clause in std::mem::take(clauses) {
                take_clause(clause, out);
            }
        }
        ExprKind::If(clauses) => {
            for clause in std::mem::take(clauses) {
                take_clause(clause, out);
            }
        }
        ExprKind::Receive(clauses, after) => {
            for clause in std::mem::take(clauses) {
                take_clause(clause, out);
            }
            if let Some(after) = after.take() {
                out.push(after.timeout);
                out.extend(after.body);
            }
        }
        ExprKind::Try(t) => {
            out.append(&mut t.body);
            for clause in std::mem::take(&mut t.of_clauses) {
                take_clause(clause, out);
            }
            for clause in std::mem::take(&mut t.catch_clauses) {
                out.extend(clause.class);
                out.push(clause.reason);
                out.extend(clause.guard.into_iter().flatten());
                out.extend(clause.body);
            }
            out.append(&mut t.after);
        }
        ExprKind::ListComprehension(e, qualifiers)
        | ExprKind::BinaryComprehension(e, qualifiers) => {
            take_box(e, out);
            for qualifier in std::mem::take(qualifiers) {
                match qualifier {
                    Qualifier::Generator(p, e) | Qualifier::BinaryGenerator(p, e) => {
                        out.push(p);
                        out.push(e);
                    }
                    Qualifier::Filter(e) => out.push(e),
                }
            }
        }
    }
}

fn take_fields(fields: &mut Vec<MapField>, out: &mut Vec<Expr>) {
    for field in std::mem::take(fields) {
        out.push(field.key);
        out.push(field.value);
    }
}
