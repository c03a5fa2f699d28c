//! Patterns, guards, and the constructs made of clauses: case, if,
//! receive, try and catch.

use super::expr::{Ctx, Fc, as_constant};
use super::{Result, error};
use crate::code::{Dst, Instr, Label, Src, TypeTest};
use crate::syntax::ast::{self, BinaryOp, CallTarget, Expr, ExprKind, UnaryOp};
use crate::syntax::span::Span;
use crate::term::{Atom, Constant, Term};
use std::collections::HashSet;

impl Fc<'_> {
    /// Matches `src` against pattern `p`, binding its unbound variables;
    /// jumps to `fail` on a mismatch.
    pub fn pattern(&mut self, p: &Expr, src: Src, fail: Label) -> Result<()> {
        self.protect(src);
        if let Some(c) = as_constant(p)
            && !(matches!(p.kind, ExprKind::Tuple(_) | ExprKind::List(..)) && structured(&c))
        {
            let lit = self.m.constant(&c, p.span)?;
            self.m.emit(Instr::IsEqExact {
                a: src,
                b: lit,
                fail,
            });
            return Ok(());
        }
        match &p.kind {
            ExprKind::Var(name) if name == "_" => {}
            ExprKind::Var(name) => {
                let place = self.place(name);
                if self.bound.contains(name) {
                    self.m.emit(Instr::IsEqExact {
                        a: src,
                        b: place.src(),
                        fail,
                    });
                } else {
                    self.mov(src, place);
                    self.bound.insert(name.clone());
                }
            }
            ExprKind::Tuple(elements) => {
                // A tuple tagged by an atom ({data, X}, a record) is tested
                // in one instruction: shape and tag together.
                let tag = match (elements.first().and_then(as_constant), elements.len()) {
                    (Some(Constant::Atom(name)), n) if n <= u16::MAX as usize => {
                        Atom::try_intern(&name)
                    }
                    _ => None,
                };
                match tag {
                    Some(tag) => self.m.emit(Instr::IsTaggedTuple {
                        src,
                        arity: elements.len() as u16,
                        tag,
                        fail,
                    }),
                    None => self.m.emit(Instr::IsTuple {
                        src,
                        arity: elements.len() as u32,
                        fail,
                    }),
                };
                for (i, e) in elements.iter().enumerate() {
                    if is_wildcard(e) || (i == 0 && tag.is_some()) {
                        continue;
                    }
                    let dst = self.element_place(e);
                    self.m.emit(Instr::GetTupleElement {
                        src,
                        index: i as u32,
                        dst,
                    });
                    self.pattern(e, dst.src(), fail)?;
                }
            }
            ExprKind::List(elements, tail) => {
                let mut current = src;
                for e in elements {
                    self.m.emit(Instr::IsCons { src: current, fail });
                    let head = if is_wildcard(e) {
                        None
                    } else {
                        Some(self.element_place(e))
                    };
                    let tail_dst = self.temp();
                    match head {
                        Some(h) => {
                            self.m.emit(Instr::GetList {
                                src: current,
                                head: h,
                                tail: tail_dst,
                            });
                            self.pattern(e, h.src(), fail)?;
                        }
                        None => {
                            self.m.emit(Instr::GetTl {
                                src: current,
                                dst: tail_dst,
                            });
                        }
                    }
                    current = tail_dst.src();
                }
                match tail {
                    Some(t) => self.pattern(t, current, fail)?,
                    None => {
                        self.m.emit(Instr::IsNil { src: current, fail });
                    }
                }
            }
            // Strings are constants, matched above.
            ExprKind::String(_) => {}
            ExprKind::BinaryOp(BinaryOp::Append, prefix, rest) => {
                // "abc" ++ Rest is [$a, $b, $c | Rest].
                let chars = match &prefix.kind {
                    ExprKind::String(s) => s.clone(),
                    _ => return error(p.span, "illegal pattern"),
                };
                let elements = chars
                    .iter()
                    .map(|&c| Expr::new(ExprKind::Integer((c as i64).into()), prefix.span))
                    .collect();
                let list = Expr::new(ExprKind::List(elements, Some(rest.clone())), p.span);
                self.pattern(&list, src, fail)?;
            }
            ExprKind::Match(a, b) => {
                self.pattern(a, src, fail)?;
                self.pattern(b, src, fail)?;
            }
            ExprKind::Map(fields) => {
                self.m.emit(Instr::IsType {
                    test: TypeTest::Map,
                    src,
                    fail,
                });
                for f in fields {
                    let saved = self.guard_fail;
                    self.guard_fail = Some(fail);
                    let key = self.expr(&f.key, Ctx::Value(None))?;
                    self.protect(key);
                    let index = super::expr::bif_index("erlang", "map_get", 2, f.span)?;
                    let dst = self.element_place(&f.value);
                    self.emit_bif(index, &[key, src], dst);
                    self.guard_fail = saved;
                    self.pattern(&f.value, dst.src(), fail)?;
                }
            }
            ExprKind::Binary(elements) => self.binary_pattern(elements, src, fail)?,
            ExprKind::UnaryOp(UnaryOp::Minus | UnaryOp::Plus, _) => {
                return error(p.span, "illegal pattern");
            }
            _ => return error(p.span, "illegal pattern"),
        }
        Ok(())
    }

    /// Where to extract a sub-term: straight into an unbound variable's
    /// place, else a temporary.
    pub(super) fn element_place(&mut self, e: &Expr) -> Dst {
        if let ExprKind::Var(n) = &e.kind
            && n != "_"
            && !self.bound.contains(n)
        {
            return self.place(n);
        }
        self.temp()
    }

    // ---------------------------------------------------------------
    // Guards.

    /// Jumps to `fail` unless the guard holds. A guard BIF that fails, or
    /// raises, makes the guard false.
    pub fn guard(&mut self, guard: &ast::Guard, fail: Label) -> Result<()> {
        if guard.is_empty() {
            return Ok(());
        }
        let saved = self.guard_fail;
        let ok = self.m.new_label();
        for (i, alternative) in guard.iter().enumerate() {
            let last = i + 1 == guard.len();
            let alt_fail = if last { fail } else { self.m.new_label() };
            // An exception anywhere in an alternative fails all of it,
            // even inside `orelse`, whose false left side tries the right.
            self.guard_fail = Some(alt_fail);
            for test in alternative {
                let floor = self.x_floor;
                self.guard_test(test, alt_fail)?;
                self.x_floor = floor;
            }
            if !last {
                self.m.emit(Instr::Jump { to: ok });
                self.m.bind(alt_fail);
            }
        }
        self.m.bind(ok);
        self.guard_fail = saved;
        Ok(())
    }

    /// Jumps to `fail` if the test `e` is false; an exception jumps to
    /// `self.guard_fail`, the alternative's failure.
    fn guard_test(&mut self, e: &Expr, fail: Label) -> Result<()> {
        match &e.kind {
            ExprKind::Atom(a) if a == "true" => return Ok(()),
            ExprKind::BinaryOp(op, a, b) if is_comparison(*op) => {
                let srcs = self.exprs(&[a, b])?;
                let (x, y) = (srcs[0], srcs[1]);
                let instr = match op {
                    BinaryOp::Less => Instr::IsLt { a: x, b: y, fail },
                    BinaryOp::Greater => Instr::IsLt { a: y, b: x, fail },
                    BinaryOp::GreaterEq => Instr::IsGe { a: x, b: y, fail },
                    BinaryOp::LessEq => Instr::IsGe { a: y, b: x, fail },
                    BinaryOp::Eq => Instr::IsEq { a: x, b: y, fail },
                    BinaryOp::NotEq => Instr::IsNe { a: x, b: y, fail },
                    BinaryOp::ExactEq => Instr::IsEqExact { a: x, b: y, fail },
                    _ => Instr::IsNeExact { a: x, b: y, fail },
                };
                self.m.emit(instr);
                return Ok(());
            }
            ExprKind::BinaryOp(BinaryOp::AndAlso, a, b) => {
                self.guard_test(a, fail)?;
                return self.guard_test(b, fail);
            }
            ExprKind::BinaryOp(BinaryOp::OrElse, a, b) => {
                let second = self.m.new_label();
                let ok = self.m.new_label();
                self.guard_test(a, second)?;
                self.m.emit(Instr::Jump { to: ok });
                self.m.bind(second);
                self.guard_test(b, fail)?;
                self.m.bind(ok);
                return Ok(());
            }
            ExprKind::Call(target, args) => {
                let name = match &**target {
                    CallTarget::Local(n, _) => Some(n.as_str()),
                    CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                        (ExprKind::Atom(m), ExprKind::Atom(f)) if m == "erlang" => Some(f.as_str()),
                        _ => None,
                    },
                    CallTarget::Fun(_) => None,
                };
                if let Some(test) = name.and_then(|n| type_test(n, args.len())) {
                    let v = self.expr(&args[0], Ctx::Value(None))?;
                    self.m.emit(Instr::IsType { test, src: v, fail });
                    return Ok(());
                }
                if name == Some("is_function") && args.len() == 2 {
                    let srcs = self.exprs(&[&args[0], &args[1]])?;
                    self.m.emit(Instr::IsFunction2 {
                        src: srcs[0],
                        arity: srcs[1],
                        fail,
                    });
                    return Ok(());
                }
            }
            _ => {}
        }
        let v = self.expr(e, Ctx::Value(None))?;
        let t = self.lit(Term::TRUE);
        self.m.emit(Instr::IsEqExact { a: v, b: t, fail });
        Ok(())
    }

    // ---------------------------------------------------------------
    // Clause constructs.

    /// Binds the result register of a construct with several branches.
    fn result_place(&mut self, ctx: Ctx) -> Option<Dst> {
        match ctx {
            Ctx::Tail => None,
            Ctx::Value(Some(d)) => Some(d),
            Ctx::Value(None) => Some(self.temp()),
        }
    }

    fn branch_ctx(place: Option<Dst>) -> Ctx {
        match place {
            None => Ctx::Tail,
            Some(d) => Ctx::Value(Some(d)),
        }
    }

    pub fn case(&mut self, subject: &Expr, clauses: &[ast::Clause], ctx: Ctx) -> Result<Src> {
        let v = self.expr(subject, Ctx::Value(None))?;
        self.protect(v);
        let place = self.result_place(ctx);
        let end = self.m.new_label();
        let before = self.bound.clone();
        let mut after: Option<HashSet<String>> = None;
        let floor = self.x_floor;
        let final_fail = self.m.new_label();
        let starts: Vec<Label> = clauses.iter().map(|_| self.m.new_label()).collect();
        let patterns: Vec<&Expr> = clauses.iter().map(|c| &c.patterns[0]).collect();
        if !self.m.select_on_literals(&patterns, v, &starts, final_fail) {
            let saved = self.x_floor;
            let scratch = self.temp();
            self.x_floor = saved;
            self.m
                .select_on_tags(&patterns, v, &starts, final_fail, scratch);
        }
        for (i, c) in clauses.iter().enumerate() {
            self.m.bind(starts[i]);
            self.bound = before.clone();
            self.x_floor = floor;
            let next = starts.get(i + 1).copied().unwrap_or(final_fail);
            self.pattern(&c.patterns[0], v, next)?;
            self.guard(&c.guard, next)?;
            self.body(&c.body, Self::branch_ctx(place))?;
            if place.is_some() {
                self.m.emit(Instr::Jump { to: end });
            }
            merge_bound(&mut after, &self.bound);
        }
        self.m.bind(final_fail);
        self.m.set_line(subject.span);
        self.m.emit(Instr::CaseClause { src: v });
        self.m.bind(end);
        self.finish_branches(before, after, floor, place)
    }

    fn finish_branches(
        &mut self,
        before: HashSet<String>,
        after: Option<HashSet<String>>,
        floor: u32,
        place: Option<Dst>,
    ) -> Result<Src> {
        self.bound = after.unwrap_or(before);
        self.x_floor = floor;
        match place {
            Some(d) => {
                self.protect(d.src());
                Ok(d.src())
            }
            None => Ok(Src::x(0)),
        }
    }

    pub fn if_expr(&mut self, clauses: &[ast::Clause], ctx: Ctx) -> Result<Src> {
        let place = self.result_place(ctx);
        let end = self.m.new_label();
        let before = self.bound.clone();
        let mut after = None;
        let floor = self.x_floor;
        for c in clauses {
            self.bound = before.clone();
            self.x_floor = floor;
            let next = self.m.new_label();
            self.guard(&c.guard, next)?;
            self.body(&c.body, Self::branch_ctx(place))?;
            if place.is_some() {
                self.m.emit(Instr::Jump { to: end });
            }
            merge_bound(&mut after, &self.bound);
            self.m.bind(next);
        }
        self.m.emit(Instr::IfClause {});
        self.m.bind(end);
        self.finish_branches(before, after, floor, place)
    }

    pub fn receive(
        &mut self,
        clauses: &[ast::Clause],
        after: Option<&ast::After>,
        ctx: Ctx,
    ) -> Result<Src> {
        // The timeout is evaluated once, before the mailbox loop; it must
        // survive waiting, so it goes to a Y slot.
        let timeout = match after {
            Some(a) => {
                let t = self.expr(&a.timeout, Ctx::Value(None))?;
                if t.kind() == crate::code::SRC_LIT {
                    Some(t)
                } else {
                    let y = self.new_y();
                    self.mov(t, y);
                    Some(y.src())
                }
            }
            None => None,
        };
        let place = self.result_place(ctx);
        let end = self.m.new_label();
        let before = self.bound.clone();
        let mut bound_after = None;
        let floor = self.x_floor;
        let head = self.m.new_label();
        let no_message = self.m.new_label();
        let message = self.temp();
        // The reference trick: a receive that only takes messages holding
        // an already bound variable may skip what was queued before that
        // reference was made (checked at run time by `$recv_use`).
        // Which of the common variables holds the newest reference is
        // known only at run time, so each is offered (a few at most).
        for var in common_bound_vars(clauses, &self.bound).iter().take(4) {
            let index = super::expr::bif_index("erlang", "$recv_use", 1, ast_span(clauses))?;
            let src = self.var_src(var);
            self.emit_bif(index, &[src], message);
        }
        self.m.bind(head);
        self.m.emit(Instr::LoopRec {
            fail: no_message,
            dst: message,
        });
        let floor_in_loop = self.x_floor;
        for c in clauses {
            self.bound = before.clone();
            self.x_floor = floor_in_loop;
            let next = self.m.new_label();
            self.pattern(&c.patterns[0], message.src(), next)?;
            self.guard(&c.guard, next)?;
            self.m.emit(Instr::RemoveMessage {});
            self.x_floor = floor;
            self.body(&c.body, Self::branch_ctx(place))?;
            if place.is_some() {
                self.m.emit(Instr::Jump { to: end });
            }
            merge_bound(&mut bound_after, &self.bound);
            self.m.bind(next);
        }
        self.m.emit(Instr::LoopRecEnd { to: head });
        self.m.bind(no_message);
        match (after, timeout) {
            (Some(a), Some(t)) => {
                self.m.emit(Instr::WaitTimeout {
                    to: head,
                    timeout: t,
                    live: floor as u16,
                });
                self.m.emit(Instr::Timeout {});
                self.bound = before.clone();
                self.x_floor = floor;
                self.body(&a.body, Self::branch_ctx(place))?;
                merge_bound(&mut bound_after, &self.bound);
            }
            _ => {
                self.m.emit(Instr::Wait {
                    to: head,
                    live: floor as u16,
                });
            }
        }
        self.m.bind(end);
        self.finish_branches(before, bound_after, floor, place)
    }

    pub fn catch_expr(&mut self, body: &Expr, hint: Option<Dst>) -> Result<Src> {
        let slot = self.new_y();
        let handler = self.m.new_label();
        self.m.emit(Instr::Catch {
            slot: slot.index() as u32,
            handler,
        });
        self.try_depth += 1;
        let floor = self.x_floor;
        self.expr(body, Ctx::Value(Some(Dst::x(0))))?;
        self.try_depth -= 1;
        self.m.emit(Instr::CatchEnd {
            slot: slot.index() as u32,
        });
        self.m.bind(handler);
        self.x_floor = floor;
        let dst = hint.unwrap_or(Dst::x(0));
        self.mov(Src::x(0), dst);
        self.protect(dst.src());
        Ok(dst.src())
    }

    /// try ... end. With no `after`, the `of` and `catch` clause bodies
    /// run outside the protected region, so in tail position they are
    /// compiled as tail (a call there is a tail call, as on BEAM); with
    /// `after`, nothing inside is in tail position.
    pub fn try_expr(&mut self, t: &ast::Try, span: Span, ctx: Ctx) -> Result<Src> {
        let floor = self.x_floor;
        if t.after.is_empty() && ctx == Ctx::Tail {
            self.try_of_catch(t, span, None)?;
            self.x_floor = floor;
            return Ok(Src::x(0));
        }
        let result = self.new_y();
        if t.after.is_empty() {
            self.try_of_catch(t, span, Some(result))?;
        } else {
            // try ... after A end: A runs on every way out, so the whole
            // try/of/catch sits in an outer try whose handler runs A and
            // re-raises.
            let slot = self.new_y();
            let handler = self.m.new_label();
            let end = self.m.new_label();
            self.m.emit(Instr::Try {
                slot: slot.index() as u32,
                handler,
            });
            self.try_depth += 1;
            if t.of_clauses.is_empty() && t.catch_clauses.is_empty() {
                // try Body after A end: one try, as on BEAM (what
                // `process_info(P, catchlevel)` counts).
                let v = self.body(&t.body, Ctx::Value(None))?;
                self.mov(v, result);
            } else {
                self.try_of_catch(t, span, Some(result))?;
            }
            self.try_depth -= 1;
            self.m.emit(Instr::TryEnd {
                slot: slot.index() as u32,
            });
            self.x_floor = floor;
            self.body(&t.after, Ctx::Value(None))?;
            self.m.emit(Instr::Jump { to: end });
            self.m.bind(handler);
            self.m.emit(Instr::TryCase {
                slot: slot.index() as u32,
            });
            // The after body may raise and catch on its own: the trace
            // to re-raise with is built before it runs.
            self.m.emit(Instr::BuildStacktrace {});
            let saved: Vec<Dst> = (0..3).map(|_| self.new_y()).collect();
            for (i, &y) in saved.iter().enumerate() {
                self.mov(Src::x(i as u32), y);
            }
            self.x_floor = floor;
            self.body(&t.after, Ctx::Value(None))?;
            for (i, &y) in saved.iter().enumerate() {
                self.mov(y.src(), Dst::x(i as u16));
            }
            self.m.emit(Instr::Raise {});
            self.m.bind(end);
        }
        self.x_floor = floor;
        Ok(self.deliver(result.src(), ctx))
    }

    /// try Body of Clauses catch CatchClauses end, result to `result`
    /// (None: in tail position, each clause body returns). A value no
    /// `of` clause matches raises try_clause at the `try` (`span`), as
    /// BEAM places it.
    fn try_of_catch(&mut self, t: &ast::Try, span: Span, result: Option<Dst>) -> Result<()> {
        let slot = self.new_y();
        let handler = self.m.new_label();
        let end = self.m.new_label();
        let floor = self.x_floor;
        let before = self.bound.clone();
        self.m.emit(Instr::Try {
            slot: slot.index() as u32,
            handler,
        });
        self.try_depth += 1;
        let v = self.body(&t.body, Ctx::Value(None))?;
        self.try_depth -= 1;
        let value = self.new_y();
        self.mov(v, value);
        self.m.emit(Instr::TryEnd {
            slot: slot.index() as u32,
        });
        let mut after_bound = None;
        if t.of_clauses.is_empty() {
            self.deliver(value.src(), Self::branch_ctx(result));
            if result.is_some() {
                self.m.emit(Instr::Jump { to: end });
            }
            merge_bound(&mut after_bound, &self.bound);
        } else {
            let body_bound = self.bound.clone();
            for c in &t.of_clauses {
                self.bound = body_bound.clone();
                self.x_floor = floor;
                let next = self.m.new_label();
                self.pattern(&c.patterns[0], value.src(), next)?;
                self.guard(&c.guard, next)?;
                self.body(&c.body, Self::branch_ctx(result))?;
                if result.is_some() {
                    self.m.emit(Instr::Jump { to: end });
                }
                merge_bound(&mut after_bound, &self.bound);
                self.m.bind(next);
            }
            self.m.set_line(span);
            self.m.emit(Instr::TryClause { src: value.src() });
        }
        // The handler: x0 class, x1 reason, x2 stacktrace.
        self.m.bind(handler);
        self.m.emit(Instr::TryCase {
            slot: slot.index() as u32,
        });
        // A raise records the trace without building it; only a clause
        // that binds it needs the term (a re-raise takes it as it is).
        if t.catch_clauses.iter().any(|c| c.stack.is_some()) {
            self.m.emit(Instr::BuildStacktrace {});
        }
        let saved: Vec<Dst> = (0..3).map(|_| self.new_y()).collect();
        for (i, &y) in saved.iter().enumerate() {
            self.mov(Src::x(i as u32), y);
        }
        for c in &t.catch_clauses {
            self.bound = before.clone();
            self.x_floor = floor;
            let next = self.m.new_label();
            let class = c
                .class
                .clone()
                .unwrap_or_else(|| Expr::new(ExprKind::Atom("throw".into()), c.span));
            self.pattern(&class, saved[0].src(), next)?;
            self.pattern(&c.reason, saved[1].src(), next)?;
            if let Some(stack) = &c.stack {
                let var = Expr::new(ExprKind::Var(stack.name.clone()), stack.span);
                self.pattern(&var, saved[2].src(), next)?;
            }
            self.guard(&c.guard, next)?;
            self.body(&c.body, Self::branch_ctx(result))?;
            if result.is_some() {
                self.m.emit(Instr::Jump { to: end });
            }
            merge_bound(&mut after_bound, &self.bound);
            self.m.bind(next);
        }
        for (i, &y) in saved.iter().enumerate() {
            self.mov(y.src(), Dst::x(i as u16));
        }
        self.m.emit(Instr::Raise {});
        self.m.bind(end);
        self.bound = after_bound.unwrap_or(before);
        self.x_floor = floor;
        Ok(())
    }
}

/// The variables bound before a receive that every clause's pattern
/// contains (so every message the receive takes holds their values).
fn common_bound_vars(clauses: &[ast::Clause], bound: &HashSet<String>) -> Vec<String> {
    let mut common: Option<HashSet<String>> = None;
    for c in clauses {
        let Some(pattern) = c.patterns.first() else {
            return Vec::new();
        };
        let mut vars = HashSet::new();
        // An explicit stack: patterns may nest deeply.
        let mut stack = vec![pattern];
        while let Some(e) = stack.pop() {
            if let ExprKind::Var(name) = &e.kind
                && bound.contains(name)
            {
                vars.insert(name.clone());
            }
            crate::syntax::walk::children(e, &mut stack);
        }
        common = Some(match common {
            None => vars,
            Some(acc) => acc.intersection(&vars).cloned().collect(),
        });
    }
    let mut names: Vec<String> = common.unwrap_or_default().into_iter().collect();
    names.sort();
    names
}

fn ast_span(clauses: &[ast::Clause]) -> crate::syntax::span::Span {
    clauses
        .first()
        .and_then(|c| c.patterns.first())
        .map(|p| p.span)
        .unwrap_or_default()
}

fn merge_bound(acc: &mut Option<HashSet<String>>, bound: &HashSet<String>) {
    match acc {
        None => *acc = Some(bound.clone()),
        Some(a) => a.retain(|v| bound.contains(v)),
    }
}

fn is_wildcard(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(n) if n == "_")
}

fn is_comparison(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Eq | NotEq | ExactEq | ExactNotEq | Less | LessEq | Greater | GreaterEq
    )
}

/// The type test instruction for a guard BIF like `is_atom/1`.
fn type_test(name: &str, arity: usize) -> Option<TypeTest> {
    if arity != 1 {
        return None;
    }
    Some(match name {
        "is_integer" => TypeTest::Integer,
        "is_float" => TypeTest::Float,
        "is_number" => TypeTest::Number,
        "is_atom" => TypeTest::Atom,
        "is_boolean" => TypeTest::Boolean,
        "is_list" => TypeTest::List,
        "is_tuple" => TypeTest::Tuple,
        "is_binary" => TypeTest::Binary,
        "is_map" => TypeTest::Map,
        "is_function" => TypeTest::Function,
        "is_pid" => TypeTest::Pid,
        "is_reference" => TypeTest::Reference,
        _ => return None,
    })
}

/// Whether a constant tuple or list pattern (`{reset}`, `{error, enoent}`,
/// `[a, b]`) is matched part by part rather than compared with a literal:
/// when it is small and made of immediates, its type tests and immediate
/// comparisons are a few inline instructions each, where comparing two
/// compound terms is a general walk (a helper call in native code).
fn structured(c: &Constant) -> bool {
    /// Counts the nodes, `None` past the limit or for a leaf that is not
    /// an immediate.
    fn nodes(c: &Constant, budget: &mut usize) -> Option<()> {
        *budget = budget.checked_sub(1)?;
        match c {
            Constant::Atom(_) | Constant::Nil => Some(()),
            Constant::Integer(i) => i64::try_from(i).ok().and_then(Term::try_small).map(|_| ()),
            Constant::Tuple(elements) => elements.iter().try_for_each(|e| nodes(e, budget)),
            Constant::List(elements, tail) => {
                elements.iter().try_for_each(|e| nodes(e, budget))?;
                nodes(tail, budget)
            }
            _ => None,
        }
    }
    nodes(c, &mut 12).is_some()
}
