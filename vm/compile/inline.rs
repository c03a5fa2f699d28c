//! Inlining a fun applied where it is written, `(fun() -> Body end)()`,
//! as OTP's sys_core_fold does: the body runs in the calling function,
//! so a stack trace shows that function (and no frame of the fun). The
//! assert macros of `assert.hrl` and eunit are written this way, and an
//! uncaught `?assertEqual` shows `main/1`, not `'-main/1-fun-0-'/0`.
//!
//! Only a fun of no arguments with one clause and no guard is inlined.
//! Its body becomes a block whose own variables (those not bound where
//! the fun stands) are renamed apart, so they stay local to it as they
//! were to the fun. Whether a variable is bound there is judged in
//! evaluation order (a match's right side before its pattern, a clause's
//! patterns before its body); the fun's name is still counted by
//! `names`, which runs on the source before this pass.

use crate::syntax::ast::{CallTarget, CatchClause, Clause, Expr, ExprKind, Fun, Qualifier};
use std::collections::HashSet;

/// Deeper than this, the pass leaves the tree as it is (the compiler
/// refuses such nesting anyway).
const MAX_DEPTH: u32 = 1500;

/// Inlines the applied funs of the clauses of one source function.
pub(super) fn applied_funs(clauses: &mut [Clause]) {
    let mut pass = Pass { fresh: 0, depth: 0 };
    for c in clauses {
        let mut scope = HashSet::new();
        for p in &c.patterns {
            vars_outside_closures(p, &mut scope);
        }
        pass.body(&mut c.body, scope);
    }
}

struct Pass {
    fresh: u32,
    depth: u32,
}

impl Pass {
    fn body(&mut self, body: &mut [Expr], mut scope: HashSet<String>) {
        for e in body {
            self.expr(e, &mut scope);
            vars_outside_closures(e, &mut scope);
        }
    }

    fn clause(&mut self, c: &mut Clause, scope: &HashSet<String>) {
        let mut inner = scope.clone();
        for p in &c.patterns {
            vars_outside_closures(p, &mut inner);
        }
        self.body(&mut c.body, inner);
    }

    /// Walks `e` with `scope` the variables bound before it; adds those
    /// its parts bind as it goes.
    fn expr(&mut self, e: &mut Expr, scope: &mut HashSet<String>) {
        if self.depth > MAX_DEPTH {
            return;
        }
        self.depth += 1;
        if let Some(body) = applied_fun_body(e) {
            let mut body = body.clone();
            self.rename_locals(&mut body, scope);
            self.body(&mut body, scope.clone());
            e.kind = ExprKind::Block(body);
            self.depth -= 1;
            return;
        }
        match &mut e.kind {
            ExprKind::Match(pattern, value) => {
                self.expr(value, scope);
                vars_outside_closures(value, scope);
                self.expr(pattern, scope);
            }
            ExprKind::Case(subject, clauses) => {
                self.expr(subject, scope);
                vars_outside_closures(subject, scope);
                for c in clauses {
                    self.clause(c, scope);
                }
            }
            ExprKind::If(clauses) => {
                for c in clauses {
                    self.clause(c, scope);
                }
            }
            ExprKind::Receive(clauses, after) => {
                for c in clauses.iter_mut() {
                    self.clause(c, scope);
                }
                if let Some(a) = after {
                    self.expr(&mut a.timeout, scope);
                    self.body(&mut a.body, scope.clone());
                }
            }
            ExprKind::Try(t) => {
                self.body(&mut t.body, scope.clone());
                let mut after_body = scope.clone();
                for b in &t.body {
                    vars_outside_closures(b, &mut after_body);
                }
                for c in &mut t.of_clauses {
                    self.clause(c, &after_body);
                }
                for c in &mut t.catch_clauses {
                    let mut inner = scope.clone();
                    catch_head_vars(c, &mut inner);
                    self.body(&mut c.body, inner);
                }
                self.body(&mut t.after, scope.clone());
            }
            ExprKind::Fun(fun) => match &mut **fun {
                Fun::Anonymous(clauses) => clauses.iter_mut().for_each(|c| self.clause(c, scope)),
                Fun::Named(name, clauses) => {
                    let mut inner = scope.clone();
                    inner.insert(name.name.clone());
                    clauses.iter_mut().for_each(|c| self.clause(c, &inner));
                }
                Fun::Local(_) | Fun::Remote { .. } => {}
            },
            ExprKind::ListComprehension(head, quals)
            | ExprKind::BinaryComprehension(head, quals) => {
                let mut inner = scope.clone();
                for q in quals.iter_mut() {
                    match q {
                        Qualifier::Generator(p, l) | Qualifier::BinaryGenerator(p, l) => {
                            self.expr(l, &mut inner.clone());
                            vars_outside_closures(p, &mut inner);
                        }
                        Qualifier::Filter(f) => {
                            self.expr(f, &mut inner.clone());
                            vars_outside_closures(f, &mut inner);
                        }
                    }
                }
                self.expr(head, &mut inner);
            }
            _ => {
                for child in children_mut(e) {
                    self.expr(child, scope);
                    vars_outside_closures(child, scope);
                }
            }
        }
        self.depth -= 1;
    }

    /// Renames the variables of `body` not bound in `scope` apart.
    fn rename_locals(&mut self, body: &mut [Expr], scope: &HashSet<String>) {
        let mut names = HashSet::new();
        for e in body.iter() {
            all_names(e, &mut names);
        }
        self.fresh += 1;
        let suffix = format!("@inlined{}", self.fresh);
        let locals: HashSet<String> = names
            .into_iter()
            .filter(|n| n != "_" && !scope.contains(n))
            .collect();
        if locals.is_empty() {
            return;
        }
        for e in body.iter_mut() {
            rename(e, &locals, &suffix);
        }
    }
}

/// The body of `(fun() -> Body end)()`.
fn applied_fun_body(e: &Expr) -> Option<&Vec<Expr>> {
    let ExprKind::Call(target, args) = &e.kind else {
        return None;
    };
    let CallTarget::Fun(f) = &**target else {
        return None;
    };
    let ExprKind::Fun(fun) = &f.kind else {
        return None;
    };
    match &**fun {
        Fun::Anonymous(clauses)
            if args.is_empty()
                && clauses.len() == 1
                && clauses[0].patterns.is_empty()
                && clauses[0].guard.is_empty() =>
        {
            Some(&clauses[0].body)
        }
        _ => None,
    }
}

fn catch_head_vars(c: &CatchClause, out: &mut HashSet<String>) {
    if let Some(class) = &c.class {
        vars_outside_closures(class, out);
    }
    vars_outside_closures(&c.reason, out);
    if let Some(s) = &c.stack {
        out.insert(s.name.clone());
    }
}

/// The variables of `e`, not those inside funs and comprehensions.
fn vars_outside_closures(e: &Expr, out: &mut HashSet<String>) {
    names_in(e, false, out);
}

/// Every variable name in `e`, closures included (and the names of
/// named funs and stack variables).
fn all_names(e: &Expr, out: &mut HashSet<String>) {
    names_in(e, true, out);
}

/// The variable names of `e` and its stack variables; with `closures`,
/// also those inside funs and comprehensions, `_`, and named funs' names.
fn names_in(e: &Expr, closures: bool, out: &mut HashSet<String>) {
    let mut stack = vec![e];
    let mut kids = Vec::new();
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExprKind::Var(n) if closures || n != "_" => {
                out.insert(n.clone());
            }
            ExprKind::Fun(_)
            | ExprKind::ListComprehension(..)
            | ExprKind::BinaryComprehension(..)
                if !closures =>
            {
                continue;
            }
            ExprKind::Fun(fun) => {
                if let Fun::Named(v, _) = &**fun {
                    out.insert(v.name.clone());
                }
            }
            ExprKind::Try(t) => {
                for c in &t.catch_clauses {
                    if let Some(s) = &c.stack {
                        out.insert(s.name.clone());
                    }
                }
            }
            _ => {}
        }
        kids.clear();
        crate::syntax::walk::children(e, &mut kids);
        stack.extend(kids.iter().copied());
    }
}

fn rename(e: &mut Expr, locals: &HashSet<String>, suffix: &str) {
    let fix = |n: &mut String| {
        if locals.contains(n.as_str()) {
            n.push_str(suffix);
        }
    };
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &mut e.kind {
            ExprKind::Var(n) => fix(n),
            ExprKind::Fun(fun) => {
                if let Fun::Named(v, _) = &mut **fun {
                    fix(&mut v.name);
                }
            }
            ExprKind::Try(t) => {
                for c in &mut t.catch_clauses {
                    if let Some(s) = &mut c.stack {
                        fix(&mut s.name);
                    }
                }
            }
            _ => {}
        }
        stack.extend(children_mut(e));
    }
}

/// The direct sub-expressions of `e`, closures included, mutably (the
/// same as `walk::children`).
fn children_mut(e: &mut Expr) -> Vec<&mut Expr> {
    let mut out: Vec<&mut Expr> = Vec::new();
    fn clause<'a>(c: &'a mut Clause, out: &mut Vec<&'a mut Expr>) {
        out.extend(c.patterns.iter_mut());
        c.guard.iter_mut().for_each(|g| out.extend(g.iter_mut()));
        out.extend(c.body.iter_mut());
    }
    match &mut e.kind {
        ExprKind::Integer(_)
        | ExprKind::Float(_)
        | ExprKind::Atom(_)
        | ExprKind::String(_)
        | ExprKind::Var(_)
        | ExprKind::RecordIndex(..) => {}
        ExprKind::List(es, tail) => {
            out.extend(es.iter_mut());
            if let Some(t) = tail {
                out.push(t);
            }
        }
        ExprKind::Tuple(es) | ExprKind::Block(es) => out.extend(es.iter_mut()),
        ExprKind::Map(fields) => fields
            .iter_mut()
            .for_each(|f| out.extend([&mut f.key, &mut f.value])),
        ExprKind::MapUpdate(m, fields) => {
            out.push(m);
            fields
                .iter_mut()
                .for_each(|f| out.extend([&mut f.key, &mut f.value]));
        }
        ExprKind::Record(_, fields) => out.extend(fields.iter_mut().map(|f| &mut f.value)),
        ExprKind::RecordUpdate(r, _, fields) => {
            out.push(r);
            out.extend(fields.iter_mut().map(|f| &mut f.value));
        }
        ExprKind::RecordAccess(r, _, _) => out.push(r),
        ExprKind::Binary(els) => {
            for el in els {
                out.push(&mut el.value);
                if let Some(s) = &mut el.size {
                    out.push(s);
                }
            }
        }
        ExprKind::BinaryOp(_, a, b) | ExprKind::Match(a, b) | ExprKind::Send(a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::UnaryOp(_, a) | ExprKind::Catch(a) => out.push(a),
        ExprKind::Call(target, args) => {
            match &mut **target {
                CallTarget::Local(..) => {}
                CallTarget::Remote(m, f) => {
                    out.push(m);
                    out.push(f);
                }
                CallTarget::Fun(f) => out.push(f),
            }
            out.extend(args.iter_mut());
        }
        ExprKind::Fun(fun) => match &mut **fun {
            Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                clauses.iter_mut().for_each(|c| clause(c, &mut out))
            }
            Fun::Local(_) => {}
            Fun::Remote {
                module,
                function,
                arity,
            } => out.extend([module, function, arity]),
        },
        ExprKind::Case(subject, clauses) => {
            out.push(subject);
            clauses.iter_mut().for_each(|c| clause(c, &mut out));
        }
        ExprKind::If(clauses) => clauses.iter_mut().for_each(|c| clause(c, &mut out)),
        ExprKind::Receive(clauses, after) => {
            clauses.iter_mut().for_each(|c| clause(c, &mut out));
            if let Some(a) = after {
                out.push(&mut a.timeout);
                out.extend(a.body.iter_mut());
            }
        }
        ExprKind::Try(t) => {
            out.extend(t.body.iter_mut());
            t.of_clauses.iter_mut().for_each(|c| clause(c, &mut out));
            for c in &mut t.catch_clauses {
                if let Some(class) = &mut c.class {
                    out.push(class);
                }
                out.push(&mut c.reason);
                c.guard.iter_mut().for_each(|g| out.extend(g.iter_mut()));
                out.extend(c.body.iter_mut());
            }
            out.extend(t.after.iter_mut());
        }
        ExprKind::ListComprehension(head, quals) | ExprKind::BinaryComprehension(head, quals) => {
            out.push(head);
            for q in quals {
                match q {
                    Qualifier::Generator(p, l) | Qualifier::BinaryGenerator(p, l) => {
                        out.push(p);
                        out.push(l);
                    }
                    Qualifier::Filter(f) => out.push(f),
                }
            }
        }
    }
    out
}
