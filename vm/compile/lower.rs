//! Walks over the AST (variables, calls) and the lowering of funs and
//! list comprehensions to new local functions, as erlc does it.
//!
//! Every walk here keeps an explicit stack, so no source nesting can
//! overflow the Rust stack.

use super::expr::Fc;
use super::{ModuleCompiler, PendingFunction, Result, error};
use crate::code::{Dst, FunDef, Src};
use crate::syntax::ast::{self, CallTarget, Expr, ExprKind, Fun, Qualifier};
use crate::syntax::span::Span;
use std::collections::{BTreeSet, HashSet};

/// The direct sub-expressions of `e`. With `into_closures`, also the
/// insides of funs and list comprehensions (which are compiled as other
/// functions).
pub(super) fn children<'a>(e: &'a Expr, into_closures: bool, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Integer(_)
        | ExprKind::Float(_)
        | ExprKind::Atom(_)
        | ExprKind::String(_)
        | ExprKind::Var(_) => {}
        ExprKind::List(es, tail) => {
            out.extend(es.iter());
            out.extend(tail.as_deref());
        }
        ExprKind::Tuple(es) | ExprKind::Block(es) => out.extend(es.iter()),
        ExprKind::Map(fields) => fields.iter().for_each(|f| out.extend([&f.key, &f.value])),
        ExprKind::MapUpdate(m, fields) => {
            out.push(m);
            fields.iter().for_each(|f| out.extend([&f.key, &f.value]));
        }
        ExprKind::Record(_, fields) => out.extend(fields.iter().map(|f| &f.value)),
        ExprKind::RecordUpdate(r, _, fields) => {
            out.push(r);
            out.extend(fields.iter().map(|f| &f.value));
        }
        ExprKind::RecordAccess(r, _, _) => out.push(r),
        ExprKind::RecordIndex(..) => {}
        ExprKind::Binary(els) => {
            for el in els {
                out.push(&el.value);
                out.extend(el.size.as_ref());
            }
        }
        ExprKind::BinaryOp(_, a, b) | ExprKind::Match(a, b) | ExprKind::Send(a, b) => {
            out.extend([&**a, &**b]);
        }
        ExprKind::UnaryOp(_, a) | ExprKind::Catch(a) => out.push(a),
        ExprKind::Call(target, args) => {
            match &**target {
                CallTarget::Local(..) => {}
                CallTarget::Remote(m, f) => out.extend([m, f]),
                CallTarget::Fun(f) => out.push(f),
            }
            out.extend(args.iter());
        }
        ExprKind::Fun(fun) => {
            if into_closures {
                match &**fun {
                    Fun::Anonymous(clauses) => clauses.iter().for_each(|c| clause_children(c, out)),
                    Fun::Named(_, clauses) => clauses.iter().for_each(|c| clause_children(c, out)),
                    Fun::Local(_) => {}
                    Fun::Remote {
                        module,
                        function,
                        arity,
                    } => out.extend([module, function, arity]),
                }
            } else if let Fun::Remote {
                module,
                function,
                arity,
            } = &**fun
            {
                out.extend([module, function, arity]);
            }
        }
        ExprKind::Case(subject, clauses) => {
            out.push(subject);
            clauses.iter().for_each(|c| clause_children(c, out));
        }
        ExprKind::If(clauses) => clauses.iter().for_each(|c| clause_children(c, out)),
        ExprKind::Receive(clauses, after) => {
            clauses.iter().for_each(|c| clause_children(c, out));
            if let Some(a) = after {
                out.push(&a.timeout);
                out.extend(a.body.iter());
            }
        }
        ExprKind::Try(t) => {
            out.extend(t.body.iter());
            t.of_clauses.iter().for_each(|c| clause_children(c, out));
            for c in &t.catch_clauses {
                out.extend(c.class.as_ref());
                out.push(&c.reason);
                c.guard.iter().for_each(|g| out.extend(g.iter()));
                out.extend(c.body.iter());
            }
            out.extend(t.after.iter());
        }
        ExprKind::ListComprehension(head, quals) | ExprKind::BinaryComprehension(head, quals) => {
            if into_closures {
                out.push(head);
                for q in quals {
                    match q {
                        Qualifier::Generator(p, l) | Qualifier::BinaryGenerator(p, l) => {
                            out.extend([p, l])
                        }
                        Qualifier::Filter(f) => out.push(f),
                    }
                }
            } else if let Some(Qualifier::Generator(_, l) | Qualifier::BinaryGenerator(_, l)) =
                quals.first()
            {
                // The first generator's list is evaluated where the
                // comprehension stands.
                out.push(l);
            }
        }
    }
}

pub(super) fn clause_children<'a>(c: &'a ast::Clause, out: &mut Vec<&'a Expr>) {
    out.extend(c.patterns.iter());
    c.guard.iter().for_each(|g| out.extend(g.iter()));
    out.extend(c.body.iter());
}

/// Visits every node of `roots` (pre-order, iteratively).
fn walk<'a>(
    roots: Vec<&'a Expr>,
    into_closures: bool,
    mut visit: impl FnMut(&'a Expr) -> bool,
) -> bool {
    let mut stack = roots;
    stack.reverse();
    let mut kids = Vec::new();
    while let Some(e) = stack.pop() {
        if visit(e) {
            return true;
        }
        kids.clear();
        children(e, into_closures, &mut kids);
        stack.extend(kids.iter().rev());
    }
    false
}

/// The variables of a clause, in order of first appearance, without `_`;
/// not those inside funs and comprehensions (they belong to other
/// functions), except the stack variable of `catch C:R:S`.
pub(super) fn clause_vars(c: &ast::Clause) -> Vec<String> {
    let mut roots = Vec::new();
    clause_children(c, &mut roots);
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    walk(roots, false, |e| {
        match &e.kind {
            ExprKind::Var(n) if n != "_" && seen.insert(n.clone()) => {
                names.push(n.clone());
            }
            ExprKind::Try(t) => {
                for cc in &t.catch_clauses {
                    if let Some(s) = &cc.stack
                        && s.name != "_"
                        && seen.insert(s.name.clone())
                    {
                        names.push(s.name.clone());
                    }
                }
            }
            _ => {}
        }
        false
    });
    names
}

/// Counts the occurrences of each variable in `e`.
pub(super) fn count_vars<'a>(e: &'a Expr, counts: &mut std::collections::HashMap<&'a str, usize>) {
    walk(vec![e], true, |e| {
        if let ExprKind::Var(n) = &e.kind {
            *counts.entry(n.as_str()).or_insert(0) += 1;
        }
        false
    });
}

/// Every variable named in `es`, closures included.
pub(super) fn vars_of(es: &[&Expr]) -> BTreeSet<String> {
    all_vars(es.to_vec())
}

/// Every variable named anywhere in `roots`, closures included.
fn all_vars(roots: Vec<&Expr>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    walk(roots, true, |e| {
        if let ExprKind::Var(n) = &e.kind
            && n != "_"
        {
            names.insert(n.clone());
        }
        false
    });
    names
}

impl ModuleCompiler {
    /// Whether a call target is a real call (it clobbers the X
    /// registers), not a BIF.
    fn is_real_call(&self, target: &CallTarget, arity: u32) -> bool {
        match target {
            CallTarget::Local(name, _) => {
                if self.local_functions.contains_key(&(name.clone(), arity)) {
                    return true;
                }
                crate::bif::lookup("erlang", name, arity).is_none()
            }
            CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                (ExprKind::Atom(m), ExprKind::Atom(f)) => {
                    (m == "erlang" && f == "apply") || crate::bif::lookup(m, f, arity).is_none()
                }
                _ => true,
            },
            CallTarget::Fun(_) => true,
        }
    }

    /// Whether evaluating `e` may clobber X registers or needs a frame.
    pub(super) fn contains_call(&self, e: &Expr) -> bool {
        walk(vec![e], false, |e| match &e.kind {
            ExprKind::Call(target, args) => self.is_real_call(target, args.len() as u32),
            ExprKind::Receive(..)
            | ExprKind::Try(_)
            | ExprKind::Catch(_)
            | ExprKind::ListComprehension(..)
            | ExprKind::BinaryComprehension(..) => true,
            _ => false,
        })
    }

    /// A clause needs a frame if it calls anything other than in tail
    /// position (or has receive/try/catch/a comprehension).
    pub(super) fn needs_frame(&self, c: &ast::Clause) -> bool {
        // (expressions, in tail position)
        let mut stack: Vec<(&[Expr], bool)> = vec![(&c.body, true)];
        while let Some((body, tail)) = stack.pop() {
            for (i, e) in body.iter().enumerate() {
                let tail = tail && i + 1 == body.len();
                match &e.kind {
                    ExprKind::Call(target, args) => {
                        if !tail && self.is_real_call(target, args.len() as u32) {
                            return true;
                        }
                        if let CallTarget::Fun(f) = &**target
                            && self.contains_call(f)
                        {
                            return true;
                        }
                        if args.iter().any(|a| self.contains_call(a)) {
                            return true;
                        }
                    }
                    ExprKind::Case(subject, clauses) => {
                        if self.contains_call(subject) {
                            return true;
                        }
                        clauses.iter().for_each(|c| stack.push((&c.body, tail)));
                    }
                    ExprKind::If(clauses) => {
                        clauses.iter().for_each(|c| stack.push((&c.body, tail)))
                    }
                    ExprKind::Block(body) => stack.push((body, tail)),
                    _ => {
                        if self.contains_call(e) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }
}

impl Fc<'_> {
    pub fn fun_expr(&mut self, fun: &Fun, hint: Option<Dst>, span: Span) -> Result<Src> {
        match fun {
            Fun::Local(name) => {
                let Some(&function) = self.m.local_functions.get(&(name.name.clone(), name.arity))
                else {
                    // `fun is_integer/1` names the auto-imported BIF: Erlang
                    // compiles it as `fun erlang:is_integer/1`.
                    if crate::syntax::check::is_auto_imported(&name.name, name.arity) {
                        let literal = |kind| Expr { kind, span };
                        let target = [
                            literal(ExprKind::Atom("erlang".to_string())),
                            literal(ExprKind::Atom(name.name.clone())),
                            literal(ExprKind::Integer(name.arity.into())),
                        ];
                        let index = super::expr::bif_index("erlang", "make_fun", 3, span)?;
                        let [m, f, a] = &target;
                        return self.bif_call(index, &[m, f, a], hint);
                    }
                    return error(
                        span,
                        format!("function {}/{} undefined", name.name, name.arity),
                    );
                };
                let fun = self.m.funs.len() as u32;
                self.m.funs.push(FunDef {
                    function,
                    arity: name.arity,
                    free: 0,
                });
                let dst = hint.unwrap_or_else(|| self.temp());
                self.make_fun(fun, &[], dst);
                Ok(dst.src())
            }
            Fun::Remote {
                module,
                function,
                arity,
            } => {
                let index = super::expr::bif_index("erlang", "make_fun", 3, span)?;
                self.bif_call(index, &[module, function, arity], hint)
            }
            Fun::Anonymous(clauses) => self.closure(None, clauses, hint, span),
            Fun::Named(name, clauses) => self.closure(Some(&name.name), clauses, hint, span),
        }
    }

    /// A fun with clauses: a new function taking the arguments and then
    /// the captured variables.
    fn closure(
        &mut self,
        self_name: Option<&str>,
        clauses: &[ast::Clause],
        hint: Option<Dst>,
        span: Span,
    ) -> Result<Src> {
        let Some(first) = clauses.first() else {
            return error(span, "fun without clauses");
        };
        let arity = first.patterns.len() as u32;
        let mut free = BTreeSet::new();
        for c in clauses {
            let heads = all_vars(c.patterns.iter().collect());
            let mut roots = Vec::new();
            c.guard.iter().for_each(|g| roots.extend(g.iter()));
            roots.extend(c.body.iter());
            for v in all_vars(roots) {
                if self.bound.contains(&v) && !heads.contains(&v) && Some(v.as_str()) != self_name {
                    free.insert(v);
                }
            }
        }
        let free: Vec<String> = free.into_iter().collect();
        let fallback = self.m.lambda_name("fun");
        let name = self.m.lambda_names.fun(span).unwrap_or(fallback);
        let function = self.m.declare_function(&name, arity + free.len() as u32);
        let fun = self.m.funs.len() as u32;
        self.m.funs.push(FunDef {
            function,
            arity,
            free: free.len() as u32,
        });
        let lowered: Vec<ast::Clause> = clauses
            .iter()
            .map(|c| {
                let heads = all_vars(c.patterns.iter().collect());
                let mut c = c.clone();
                for f in &free {
                    let n = if heads.contains(f) {
                        "_".to_string()
                    } else {
                        f.clone()
                    };
                    c.patterns.push(Expr::new(ExprKind::Var(n), span));
                }
                c
            })
            .collect();
        self.m.pending.push(PendingFunction {
            index: function,
            clauses: lowered,
            self_fun: self_name.map(|n| (n.to_string(), fun, free.clone())),
        });
        let captured: Vec<Src> = free.iter().map(|f| self.var_src(f)).collect();
        let dst = hint.unwrap_or_else(|| self.temp());
        self.make_fun(fun, &captured, dst);
        Ok(dst.src())
    }

    /// `[E || Qs]` becomes `H1(List1, Free...)` where each generator
    /// `P <- L` is a helper that builds its part of the list by body
    /// recursion, as erlc's (so a stack trace shows the same frames: the
    /// helper of arity 1 + free variables, twice past the first element,
    /// and no frame of a function that ends in the comprehension):
    ///
    /// ```text
    /// H([P | T], Free...) -> <rest of Qs, each element [E | H(T, Free...)]>;
    /// H([_ | T], Free...) -> H(T, Free...);
    /// H([], Free...) -> More;
    /// H(Other, Free...) -> error({bad_generator, Other}).
    /// ```
    ///
    /// `More` is `[]` for the first generator, and the enclosing
    /// generator's `H(T, Free...)` for a later one (a free variable).
    pub fn lower_comprehension(
        &mut self,
        head: &Expr,
        quals: &[Qualifier],
        span: Span,
    ) -> Result<Expr> {
        self.lower_list_comprehension(head, quals, Collect::List, span)
    }

    /// A list comprehension whose value is not used (a statement that is
    /// not the last of its body) builds no list, as erlc compiles it: each
    /// element is `E, H(T, Free...)`, a loop, so a stack trace shows its
    /// helper once.
    pub fn lower_effect_comprehension(
        &mut self,
        head: &Expr,
        quals: &[Qualifier],
        span: Span,
    ) -> Result<Expr> {
        self.lower_list_comprehension(head, quals, Collect::Effect, span)
    }

    fn lower_list_comprehension(
        &mut self,
        head: &Expr,
        quals: &[Qualifier],
        into: Collect,
        span: Span,
    ) -> Result<Expr> {
        let bound: BTreeSet<String> = self.bound.iter().cloned().collect();
        let nil = Expr::new(ExprKind::List(vec![], None), span);
        let names = self.m.lambda_names.comprehension(span).unwrap_or_default();
        let outer = std::mem::replace(&mut self.m.generator_names, names);
        let built = self.comprehension_acc(head, quals, &bound, nil, into, span);
        self.m.generator_names = outer;
        built
    }

    /// `<< E || Qs >>` is lowered as `[E || Qs]` is, but accumulates in
    /// a bitstring: each element appends its segments to the accumulator
    /// (`<<Acc/bitstring, Segments...>>`, a head that is not a binary
    /// expression being `E/bitstring`, so a piece that is not a bitstring
    /// is `badarg`, as in OTP). The append is in place (`heap::append`),
    /// so the whole comprehension takes linear time and builds no list.
    pub fn lower_binary_comprehension(
        &mut self,
        head: &Expr,
        quals: &[Qualifier],
        span: Span,
    ) -> Result<Expr> {
        let bound: BTreeSet<String> = self.bound.iter().cloned().collect();
        let empty = Expr::new(ExprKind::Binary(vec![]), span);
        let names = self.m.lambda_names.comprehension(span).unwrap_or_default();
        let outer = std::mem::replace(&mut self.m.generator_names, names);
        let built = self.comprehension_acc(head, quals, &bound, empty, Collect::Bitstring, span);
        self.m.generator_names = outer;
        built
    }

    fn comprehension_acc(
        &mut self,
        head: &Expr,
        quals: &[Qualifier],
        bound: &BTreeSet<String>,
        acc: Expr,
        into: Collect,
        span: Span,
    ) -> Result<Expr> {
        let Some((first, rest)) = quals.split_first() else {
            return Ok(match into {
                Collect::List => Expr::new(
                    ExprKind::List(vec![head.clone()], Some(Box::new(acc))),
                    span,
                ),
                Collect::Effect => Expr::new(ExprKind::Block(vec![head.clone(), acc]), span),
                Collect::Bitstring => {
                    let mut elements = vec![bits_segment(acc, span)];
                    match &head.kind {
                        ExprKind::Binary(pieces) => elements.extend(pieces.iter().cloned()),
                        _ => elements.push(ast::BinElement {
                            specifiers: bits_segment(head.clone(), span).specifiers,
                            value: head.clone(),
                            size: None,
                            span: head.span,
                        }),
                    }
                    Expr::new(ExprKind::Binary(elements), span)
                }
            });
        };
        match first {
            Qualifier::Filter(f) => {
                let yes = self.comprehension_acc(head, rest, bound, acc.clone(), into, span)?;
                if is_guard_test(f) {
                    // As OTP: a filter that is a guard test is a guard,
                    // where an exception or a non-boolean is false.
                    let test = ast::Clause {
                        patterns: vec![],
                        guard: vec![vec![f.clone()]],
                        body: vec![yes],
                        span,
                    };
                    let otherwise = ast::Clause {
                        patterns: vec![],
                        guard: vec![vec![atom("true", span)]],
                        body: vec![acc],
                        span,
                    };
                    return Ok(Expr::new(ExprKind::If(vec![test, otherwise]), span));
                }
                // Any other filter must be a boolean: `{bad_filter, V}`.
                let other = format!("_@filter{}", span.start);
                let bad = Expr::new(
                    ExprKind::Call(
                        Box::new(ast::CallTarget::Remote(
                            atom("erlang", span),
                            atom("error", span),
                        )),
                        vec![Expr::new(
                            ExprKind::Tuple(vec![atom("bad_filter", span), var(&other, span)]),
                            span,
                        )],
                    ),
                    span,
                );
                let clauses = vec![
                    clause(vec![atom("true", span)], vec![yes], span),
                    clause(vec![atom("false", span)], vec![acc], span),
                    clause(vec![var(&other, span)], vec![bad], span),
                ];
                Ok(Expr::new(
                    ExprKind::Case(Box::new(f.clone()), clauses),
                    span,
                ))
            }
            Qualifier::Generator(pattern, list) | Qualifier::BinaryGenerator(pattern, list) => {
                let binary = matches!(first, Qualifier::BinaryGenerator(..));
                let shapes = if binary {
                    let ExprKind::Binary(elements) = &pattern.kind else {
                        return error(
                            pattern.span,
                            "a binary generator's pattern must be a binary",
                        );
                    };
                    Some(elements)
                } else {
                    None
                };
                // What a binary pattern binds: its segment values; a
                // variable only in a size comes from outside.
                let pattern_vars = match shapes {
                    Some(elements) => all_vars(elements.iter().map(|el| &el.value).collect()),
                    None => all_vars(vec![pattern]),
                };
                let mut roots: Vec<&Expr> = vec![head];
                if let Collect::List | Collect::Effect = into {
                    // What comes after this generator's list is done.
                    roots.push(&acc);
                }
                if let Some(elements) = shapes {
                    roots.extend(elements.iter().filter_map(|el| el.size.as_ref()));
                }
                for q in rest {
                    match q {
                        Qualifier::Generator(p, l) | Qualifier::BinaryGenerator(p, l) => {
                            roots.extend([p, l])
                        }
                        Qualifier::Filter(f) => roots.push(f),
                    }
                }
                let free: Vec<String> = all_vars(roots)
                    .into_iter()
                    .filter(|v| bound.contains(v) && !pattern_vars.contains(v))
                    .collect();
                let mut inner_bound = bound.clone();
                inner_bound.extend(pattern_vars.iter().cloned());
                // erlc gives the calls of the generator's helper the
                // place of its `<-` (taken here as the pattern's last
                // character, on the same line but for odd layouts), and
                // its bad_generator error the place of the list.
                let arrow = Span::new(
                    pattern.span.end.saturating_sub(1).max(pattern.span.start) as usize,
                    pattern.span.end.max(pattern.span.start + 1) as usize,
                );
                let fallback = self.m.lambda_name("lc");
                let name = self.m.generator_names.pop_front().unwrap_or(fallback);
                let n = self.m.lambda_counter;
                let acc_var = var(&format!("@acc{n}"), span);
                let tail_name = format!("@tail{n}");
                let tail_var = var(&tail_name, span);
                let other_var = var(&format!("@other{n}"), span);
                let free_vars: Vec<Expr> = free.iter().map(|f| var(f, span)).collect();
                // A list is built by body recursion (no accumulator), a
                // bitstring is appended to an accumulator.
                let to_list = matches!(into, Collect::List | Collect::Effect);
                // A binary pattern's sizes may use the free variables, so
                // they come first there (a head binds left to right).
                let params = |first: Expr, acc: Expr| {
                    let mut p = if binary { vec![] } else { vec![first.clone()] };
                    p.extend(free_vars.iter().cloned());
                    if binary {
                        p.push(first);
                    }
                    if !to_list {
                        p.push(acc);
                    }
                    p
                };
                let inner = if to_list {
                    let mut after_bound = inner_bound.clone();
                    after_bound.insert(tail_name.clone());
                    let next = Expr::new(
                        ExprKind::Call(
                            Box::new(CallTarget::Local(name.clone(), arrow)),
                            params(tail_var.clone(), acc_var.clone()),
                        ),
                        arrow,
                    );
                    self.comprehension_acc(head, rest, &after_bound, next, into, span)?
                } else {
                    self.comprehension_acc(head, rest, &inner_bound, acc_var.clone(), into, span)?
                };
                let recurse = |acc: Expr| {
                    let target = CallTarget::Local(name.clone(), arrow);
                    Expr::new(
                        ExprKind::Call(Box::new(target), params(tail_var.clone(), acc)),
                        arrow,
                    )
                };
                let cons = |h: Expr| {
                    Expr::new(
                        ExprKind::List(vec![h], Some(Box::new(tail_var.clone()))),
                        span,
                    )
                };
                // The shapes of the walk: the element matches, does not
                // match (skipped), the end.
                let (matched, skipped, done) = match shapes {
                    Some(elements) => {
                        let tail = || bits_segment(tail_var.clone(), span);
                        let mut with_tail = elements.clone();
                        with_tail.push(tail());
                        let mut skip = skip_segments(elements);
                        skip.push(tail());
                        let rest = bits_segment(var("_", span), span);
                        (
                            Expr::new(ExprKind::Binary(with_tail), span),
                            Expr::new(ExprKind::Binary(skip), span),
                            Expr::new(ExprKind::Binary(vec![rest]), span),
                        )
                    }
                    None => (
                        cons(pattern.clone()),
                        cons(var("_", span)),
                        Expr::new(ExprKind::List(vec![], None), span),
                    ),
                };
                let at = list.span;
                let bad = Expr::new(
                    ExprKind::Call(
                        Box::new(CallTarget::Remote(atom("erlang", at), atom("error", at))),
                        vec![Expr::new(
                            ExprKind::Tuple(vec![atom("bad_generator", at), other_var.clone()]),
                            at,
                        )],
                    ),
                    at,
                );
                let (matched_body, done_body) = if to_list {
                    (inner, acc.clone())
                } else {
                    (recurse(inner), acc_var.clone())
                };
                let clauses = vec![
                    clause(params(matched, acc_var.clone()), vec![matched_body], span),
                    clause(
                        params(skipped, acc_var.clone()),
                        vec![recurse(acc_var.clone())],
                        span,
                    ),
                    clause(params(done, acc_var.clone()), vec![done_body], span),
                    clause(params(other_var.clone(), acc_var.clone()), vec![bad], at),
                ];
                let arity = 1 + free.len() as u32 + u32::from(!to_list);
                let function = self.m.declare_function(&name, arity);
                self.m.pending.push(PendingFunction {
                    index: function,
                    clauses,
                    self_fun: None,
                });
                let args = params(list.clone(), acc);
                let target = CallTarget::Local(name.clone(), arrow);
                Ok(Expr::new(ExprKind::Call(Box::new(target), args), arrow))
            }
        }
    }
}

/// `Value/bitstring`: the segment that takes the rest of a binary.
/// What a comprehension builds: a list (by body recursion), nothing
/// (its value is not used), or a bitstring appended to in order.
#[derive(Clone, Copy)]
enum Collect {
    List,
    Effect,
    Bitstring,
}

fn bits_segment(value: Expr, span: Span) -> ast::BinElement {
    ast::BinElement {
        value,
        size: None,
        specifiers: vec![ast::BinSpecifier {
            name: "bitstring".to_string(),
            value: None,
            span,
        }],
        span,
    }
}

/// The segments of a binary generator's pattern with every value that is
/// not a variable made `_`: they match where the pattern has the right
/// shape but the wrong values, and the generator skips that element
/// (variables stay, as a later size may use them).
fn skip_segments(elements: &[ast::BinElement]) -> Vec<ast::BinElement> {
    let mut out = Vec::new();
    for el in elements {
        let blank = |el: &ast::BinElement| ast::BinElement {
            value: var("_", el.span),
            ..el.clone()
        };
        match &el.value.kind {
            ExprKind::Var(_) => out.push(el.clone()),
            ExprKind::String(chars) => out.extend(chars.iter().map(|_| blank(el))),
            _ => out.push(blank(el)),
        }
    }
    out
}

/// Whether a comprehension filter is a guard test in erl_lint's sense:
/// literals, variables, constructions, operators and guard BIFs.
fn is_guard_test(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Integer(_)
        | ExprKind::Float(_)
        | ExprKind::Atom(_)
        | ExprKind::String(_)
        | ExprKind::Var(_) => true,
        ExprKind::List(elements, tail) => {
            elements.iter().all(is_guard_test) && tail.as_deref().is_none_or(is_guard_test)
        }
        ExprKind::Tuple(elements) => elements.iter().all(is_guard_test),
        ExprKind::BinaryOp(_, a, b) => is_guard_test(a) && is_guard_test(b),
        ExprKind::UnaryOp(_, a) => is_guard_test(a),
        ExprKind::Call(target, args) => {
            let arity = args.len() as u32;
            args.iter().all(is_guard_test)
                && match target.as_ref() {
                    ast::CallTarget::Local(name, _) => {
                        crate::syntax::check::is_guard_bif(name, arity)
                    }
                    ast::CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                        (ExprKind::Atom(m), ExprKind::Atom(f)) => {
                            m == "erlang" && crate::syntax::check::is_guard_bif(f, arity)
                        }
                        _ => false,
                    },
                    ast::CallTarget::Fun(_) => false,
                }
        }
        _ => false,
    }
}

fn atom(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Atom(name.to_string()), span)
}

fn var(name: &str, span: Span) -> Expr {
    Expr::new(ExprKind::Var(name.to_string()), span)
}

fn clause(patterns: Vec<Expr>, body: Vec<Expr>, span: Span) -> ast::Clause {
    ast::Clause {
        patterns,
        guard: vec![],
        body,
        span,
    }
}
