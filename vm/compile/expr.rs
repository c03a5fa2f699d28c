//! Function clauses, bodies and expressions.

use super::lower::clause_vars;
use super::{MAX_DEPTH, MAX_X, ModuleCompiler, PendingFunction, Result, error};
use crate::code::{ArithOp, CmpOp, Dst, Instr, Label, SRC_X, SelectTable, Src, Tail};
use crate::syntax::ast::{self, BinaryOp, CallTarget, Expr, ExprKind, UnaryOp};
use crate::syntax::span::Span;
use crate::term::{Atom, Constant, Term};
use std::collections::{HashMap, HashSet};

/// The state of one function clause being compiled.
pub(super) struct Fc<'a> {
    pub m: &'a mut ModuleCompiler,
    /// The clause has a stack frame; its variables live in Y slots.
    pub frame: bool,
    /// The fixed place of every variable of the clause.
    pub vars: HashMap<String, Dst>,
    /// Variables bound at this point of the code.
    pub bound: HashSet<String>,
    pub next_y: u32,
    /// X registers below this hold variables (leaf clauses).
    pub x_top: u32,
    /// Next free temporary X register (never below `x_top`).
    pub x_floor: u32,
    /// Inside a guard: where a failing test or guard BIF jumps.
    pub guard_fail: Option<Label>,
    /// Inside `try`/`catch`: calls are not tail calls there.
    pub try_depth: u32,
    depth: u32,
    too_many_registers: bool,
}

/// Where an expression's value goes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Ctx {
    /// The clause's result: return it (or tail-call).
    Tail,
    /// A value, preferably in this register.
    Value(Option<Dst>),
}

impl ModuleCompiler {
    pub(super) fn compile_function(&mut self, p: PendingFunction) -> Result<()> {
        let index = p.index;
        let arity = self.functions[index as usize].arity;
        let span = p.clauses.first().map(|c| c.span).unwrap_or_default();
        self.set_line(span);
        let entry = self.function_labels[index as usize];
        self.bind(entry);
        self.emit(Instr::FuncInfo { function: index });
        let final_fail = self.new_label();
        let starts: Vec<Label> = p.clauses.iter().map(|_| self.new_label()).collect();
        if arity > 0 {
            let first_patterns: Vec<&Expr> = p.clauses.iter().map(|c| &c.patterns[0]).collect();
            if !self.select_on_literals(&first_patterns, Src::x(0), &starts, final_fail) {
                // The registers past the arguments are free before a clause.
                self.max_x = self.max_x.max(arity + 1);
                let scratch = Dst::x(arity as u16);
                self.select_on_tags(&first_patterns, Src::x(0), &starts, final_fail, scratch);
            }
        }
        for (i, clause) in p.clauses.iter().enumerate() {
            let next = starts.get(i + 1).copied().unwrap_or(final_fail);
            self.bind(starts[i]);
            self.set_line(clause.span);
            let frame = self.needs_frame(clause);
            let mut fc = Fc::new(self, frame, arity, clause);
            fc.function_clause(clause, next, &p.self_fun)?;
        }
        self.bind(final_fail);
        // BEAM reports function_clause at the function's first clause.
        self.set_line(span);
        self.emit(Instr::FunctionClause { function: index });
        Ok(())
    }

    /// Clause selection through a jump table: when enough clauses match
    /// an atom or small integer at this place, one `select_val` jumps to
    /// the first clause that can match the value. The clauses still test
    /// their own patterns, so order and fall-through stay as written.
    /// Says whether it made one.
    pub(super) fn select_on_literals(
        &mut self,
        patterns: &[&Expr],
        src: Src,
        starts: &[Label],
        fail: Label,
    ) -> bool {
        let keys: Vec<Option<Term>> = patterns.iter().map(|p| immediate_key(p)).collect();
        let literal_count = keys.iter().filter(|k| k.is_some()).count();
        if literal_count < 4 || keys[0].is_none() {
            return false;
        }
        // Values not in the table go to the first clause without a literal.
        let default = keys
            .iter()
            .position(|k| k.is_none())
            .map_or(fail, |i| starts[i]);
        let mut entries: Vec<(Term, Label)> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            match k {
                Some(t) => {
                    if !entries.iter().any(|(v, _)| v == t) {
                        entries.push((*t, starts[i]));
                    }
                }
                None => break,
            }
        }
        entries.sort_by_key(|(t, _)| t.0);
        let table = self.select_tables.len() as u32;
        self.select_tables.push(SelectTable {
            values: entries.iter().map(|e| e.0).collect(),
            targets: entries.iter().map(|e| e.1).collect(),
        });
        self.emit(Instr::SelectVal {
            src,
            table,
            fail: default,
        });
        true
    }

    /// Clause selection on tagged tuples, as erlc does for `{add, X}`,
    /// `{get, K}`, `{put, K, V}`: when enough clauses match a tuple whose
    /// first element is an atom at this place, `select_tuple_arity` picks
    /// the arity, and for each arity one `select_val` on the first element
    /// (read into `scratch`) jumps to the first clause that can match.
    /// As in `select_on_literals`, values in no table go to the first
    /// clause without such a pattern, and the clauses still test their
    /// own patterns.
    pub(super) fn select_on_tags(
        &mut self,
        patterns: &[&Expr],
        src: Src,
        starts: &[Label],
        fail: Label,
        scratch: Dst,
    ) {
        let keys: Vec<Option<(usize, Term)>> = patterns.iter().map(|p| tag_key(p)).collect();
        if keys.iter().filter(|k| k.is_some()).count() < 4 || keys[0].is_none() {
            return;
        }
        let default = keys
            .iter()
            .position(|k| k.is_none())
            .map_or(fail, |i| starts[i]);
        // Per arity, in order of first appearance: each tag's first clause.
        let mut arities: Vec<(usize, Vec<(Term, Label)>)> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            let Some((arity, tag)) = *k else { break };
            let at = match arities.iter().position(|(a, _)| *a == arity) {
                Some(at) => at,
                None => {
                    arities.push((arity, Vec::new()));
                    arities.len() - 1
                }
            };
            let tags = &mut arities[at].1;
            if !tags.iter().any(|(t, _)| *t == tag) {
                tags.push((tag, starts[i]));
            }
        }
        arities.sort_by_key(|(a, _)| *a);
        let blocks: Vec<Label> = arities.iter().map(|_| self.new_label()).collect();
        let table = self.select_tables.len() as u32;
        self.select_tables.push(SelectTable {
            values: arities
                .iter()
                .map(|(a, _)| Term::small(*a as i64))
                .collect(),
            targets: blocks.clone(),
        });
        self.emit(Instr::SelectTupleArity {
            src,
            table,
            fail: default,
        });
        for ((_, mut tags), block) in arities.into_iter().zip(blocks) {
            self.bind(block);
            self.emit(Instr::GetTupleElement {
                src,
                index: 0,
                dst: scratch,
            });
            tags.sort_by_key(|(t, _)| t.0);
            let table = self.select_tables.len() as u32;
            self.select_tables.push(SelectTable {
                values: tags.iter().map(|e| e.0).collect(),
                targets: tags.iter().map(|e| e.1).collect(),
            });
            self.emit(Instr::SelectVal {
                src: scratch.src(),
                table,
                fail: default,
            });
        }
    }
}

/// The arity and tag of a pattern that is a tuple whose first element is
/// an atom (`{get, K}`, a record), if it is one.
fn tag_key(p: &Expr) -> Option<(usize, Term)> {
    let ExprKind::Tuple(elements) = &p.kind else {
        return None;
    };
    match elements.first().and_then(as_constant) {
        Some(Constant::Atom(name)) => Some((elements.len(), Term::atom(Atom::try_intern(&name)?))),
        _ => None,
    }
}

/// The atom or small integer a pattern is, if it is one.
fn immediate_key(p: &Expr) -> Option<Term> {
    match &p.kind {
        ExprKind::Atom(a) => Some(Term::atom(Atom::intern(a))),
        ExprKind::Integer(i) => i64::try_from(i).ok().and_then(Term::try_small),
        _ => None,
    }
}

impl<'a> Fc<'a> {
    pub fn new(m: &'a mut ModuleCompiler, frame: bool, arity: u32, clause: &ast::Clause) -> Fc<'a> {
        let names = clause_vars(clause);
        let mut vars = HashMap::new();
        let mut next_y = 0;
        let mut x_top = arity;
        if frame {
            for n in &names {
                vars.insert(n.clone(), Dst::y(next_y as u16));
                next_y += 1;
            }
        } else {
            // A variable that is a whole argument, and appears nowhere else
            // in the head, stays in its argument register (elsewhere, a
            // binding could overwrite an argument not yet matched).
            let head_vars = super::lower::vars_of(&clause.patterns.iter().collect::<Vec<_>>());
            let mut counts: HashMap<&str, usize> = HashMap::new();
            for p in &clause.patterns {
                super::lower::count_vars(p, &mut counts);
            }
            for (i, p) in clause.patterns.iter().enumerate() {
                if let ExprKind::Var(n) = &p.kind
                    && n != "_"
                    && head_vars.contains(n)
                    && counts.get(n.as_str()) == Some(&1)
                {
                    vars.insert(n.clone(), Dst::x(i as u16));
                }
            }
            for n in &names {
                if !vars.contains_key(n) {
                    vars.insert(n.clone(), Dst::x(x_top as u16));
                    x_top += 1;
                }
            }
        }
        let too_many = x_top >= MAX_X || next_y >= 0x7000;
        m.max_x = m.max_x.max(x_top + 1);
        Fc {
            m,
            frame,
            vars,
            bound: HashSet::new(),
            next_y,
            x_top,
            x_floor: x_top,
            guard_fail: None,
            try_depth: 0,
            depth: 0,
            too_many_registers: too_many,
        }
    }

    fn function_clause(
        &mut self,
        clause: &ast::Clause,
        next: Label,
        self_fun: &Option<(String, u32, Vec<String>)>,
    ) -> Result<()> {
        let arity = clause.patterns.len() as u32;
        let mut allocate_at = None;
        let fail = if self.frame {
            allocate_at = Some(self.m.emit(Instr::Allocate {
                slots: 0,
                live: arity as u16,
            }));
            self.m.new_label()
        } else {
            next
        };
        self.x_floor = self.x_top.max(arity);
        for (i, p) in clause.patterns.iter().enumerate() {
            self.pattern(p, Src::x(i as u32), fail)?;
        }
        self.guard(&clause.guard, fail)?;
        // The name may be used only inside funs nested in the body: it
        // must still be bound here for them to capture it.
        if let Some((name, fun, free)) = self_fun
            && (self.vars.contains_key(name) || {
                let mut roots: Vec<&Expr> = clause.body.iter().collect();
                clause.guard.iter().for_each(|g| roots.extend(g.iter()));
                super::lower::vars_of(&roots).contains(name)
            })
        {
            let captured: Vec<Src> = free.iter().map(|f| self.var_src(f)).collect();
            let dst = self.place(name);
            self.make_fun(*fun, &captured, dst);
            self.bound.insert(name.clone());
        }
        self.body(&clause.body, Ctx::Tail)?;
        if let Some(at) = allocate_at {
            self.m.code[at] = Instr::Allocate {
                slots: self.next_y,
                live: arity as u16,
            };
            self.m.bind(fail);
            self.m.emit(Instr::Deallocate {});
            self.m.emit(Instr::Jump { to: next });
        }
        if self.too_many_registers || self.x_floor >= MAX_X || self.next_y >= 0x7000 {
            return error(
                clause.span,
                "function clause too large (too many registers)",
            );
        }
        Ok(())
    }

    // ---------------------------------------------------------------
    // Registers.

    pub fn temp(&mut self) -> Dst {
        let r = self.x_floor.max(self.x_top);
        self.x_floor = r + 1;
        self.m.max_x = self.m.max_x.max(r + 1);
        if r >= MAX_X {
            self.too_many_registers = true;
            return Dst::x(0);
        }
        Dst::x(r as u16)
    }

    pub fn new_y(&mut self) -> Dst {
        let y = self.next_y;
        self.next_y += 1;
        if y >= 0x7000 {
            self.too_many_registers = true;
            return Dst::y(0);
        }
        Dst::y(y as u16)
    }

    /// Keeps an X register holding a value from being reused as a temporary.
    pub fn protect(&mut self, s: Src) {
        if s.kind() == SRC_X {
            self.x_floor = self.x_floor.max(s.index() as u32 + 1);
        }
    }

    /// The fixed place of a variable (every variable of the clause has
    /// one from the start; a missing one gets one here).
    pub fn place(&mut self, name: &str) -> Dst {
        if let Some(&d) = self.vars.get(name) {
            return d;
        }
        let d = if self.frame {
            self.new_y()
        } else {
            let r = self.x_top.max(self.x_floor);
            self.x_top = r + 1;
            self.x_floor = self.x_floor.max(self.x_top);
            self.m.max_x = self.m.max_x.max(r + 1);
            Dst::x(r as u16)
        };
        self.vars.insert(name.to_string(), d);
        d
    }

    pub fn var_src(&self, name: &str) -> Src {
        self.vars.get(name).map_or(Src::lit(0), |d| d.src())
    }

    fn target(&mut self, hint: Option<Dst>) -> Dst {
        match hint {
            Some(d) => d,
            None => self.temp(),
        }
    }

    pub fn mov(&mut self, src: Src, dst: Dst) {
        if src != dst.src() {
            self.m.emit(Instr::Move { src, dst });
        }
    }

    fn fail_label(&self) -> Label {
        self.guard_fail.unwrap_or(Label::RAISE)
    }

    pub fn lit(&mut self, t: Term) -> Src {
        self.m.literal(t)
    }

    // ---------------------------------------------------------------
    // Bodies.

    /// A sequence; the last expression gives the value (or is returned).
    pub fn body(&mut self, exprs: &[Expr], ctx: Ctx) -> Result<Src> {
        let Some((last, init)) = exprs.split_last() else {
            return Ok(self.lit(Term::atom(Atom::OK)));
        };
        for (i, e) in init.iter().enumerate() {
            // `V = E, V` at the end of a function is `E` (erlc's
            // sys_core_fold), so a call in `E` is a tail call: its
            // caller's frame is gone from a stack trace, as on BEAM.
            if i + 1 == init.len()
                && matches!(ctx, Ctx::Tail)
                && let ExprKind::Match(pattern, value) = &e.kind
                && let (ExprKind::Var(bound), ExprKind::Var(result)) = (&pattern.kind, &last.kind)
                && bound == result
                && bound != "_"
                && !self.bound.contains(bound)
            {
                return self.expr(value, ctx);
            }
            let saved = self.x_floor;
            if let ExprKind::ListComprehension(head, quals) = &e.kind {
                let lowered = self.lower_effect_comprehension(head, quals, e.span)?;
                self.expr(&lowered, Ctx::Value(None))?;
            } else {
                self.expr(e, Ctx::Value(None))?;
            }
            self.x_floor = saved;
        }
        self.expr(last, ctx)
    }

    /// Finishes a clause with `value` as its result.
    fn ret(&mut self, value: Src) {
        self.mov(value, Dst::x(0));
        if self.frame {
            self.m.emit(Instr::DeallocateReturn {});
        } else {
            self.m.emit(Instr::Return {});
        }
    }

    /// Delivers `value` according to `ctx`.
    pub(super) fn deliver(&mut self, value: Src, ctx: Ctx) -> Src {
        match ctx {
            Ctx::Tail => {
                self.ret(value);
                value
            }
            Ctx::Value(Some(d)) => {
                self.mov(value, d);
                d.src()
            }
            Ctx::Value(None) => value,
        }
    }

    /// Evaluates `es` left to right; a value that a later call would
    /// clobber goes to a fresh Y slot. Every result stays valid until the
    /// caller resets `x_floor`.
    pub fn exprs(&mut self, es: &[&Expr]) -> Result<Vec<Src>> {
        let calls: Vec<bool> = es.iter().map(|e| self.m.contains_call(e)).collect();
        let mut out = Vec::with_capacity(es.len());
        for (i, e) in es.iter().enumerate() {
            let s = self.expr(e, Ctx::Value(None))?;
            if calls[i + 1..].iter().any(|&c| c) && s.kind() == SRC_X {
                let y = self.new_y();
                self.mov(s, y);
                out.push(y.src());
            } else {
                self.protect(s);
                out.push(s);
            }
        }
        Ok(out)
    }

    // ---------------------------------------------------------------
    // Expressions.

    pub fn expr(&mut self, e: &Expr, ctx: Ctx) -> Result<Src> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return error(e.span, "expression nested too deeply");
        }
        let r = self.expr_inner(e, ctx);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &Expr, ctx: Ctx) -> Result<Src> {
        self.m.set_line(e.span);
        if let Some(c) = as_constant(e) {
            let s = self.m.constant(&c, e.span)?;
            return Ok(self.deliver(s, ctx));
        }
        let hint = match ctx {
            Ctx::Value(h) => h,
            Ctx::Tail => Some(Dst::x(0)),
        };
        let value = match &e.kind {
            ExprKind::Var(name) => {
                if !self.bound.contains(name) {
                    return error(e.span, format!("variable '{name}' is unbound"));
                }
                self.var_src(name)
            }
            ExprKind::List(elements, tail) => self.list(elements, tail.as_deref(), hint)?,
            ExprKind::Tuple(elements) => {
                let saved = self.x_floor;
                let es: Vec<&Expr> = elements.iter().collect();
                let srcs = self.exprs(&es)?;
                self.x_floor = saved;
                self.put_tuple(&srcs, hint)
            }
            ExprKind::Map(fields) => self.map(None, fields, hint)?,
            ExprKind::MapUpdate(map, fields) => self.map(Some(map), fields, hint)?,
            ExprKind::Record(..)
            | ExprKind::RecordUpdate(..)
            | ExprKind::RecordAccess(..)
            | ExprKind::RecordIndex(..) => {
                return error(e.span, "records are not supported here");
            }
            ExprKind::Binary(elements) => self.binary(elements, hint, e.span)?,
            ExprKind::BinaryOp(op, a, b) => self.binary_op(*op, a, b, hint, e.span)?,
            ExprKind::UnaryOp(op, a) => self.unary_op(*op, a, hint)?,
            ExprKind::Match(pattern, value) => {
                let v = self.expr(value, Ctx::Value(None))?;
                self.protect(v);
                if let ExprKind::Var(n) = &pattern.kind
                    && !self.bound.contains(n)
                    && n != "_"
                {
                    let d = self.place(n);
                    self.mov(v, d);
                    self.bound.insert(n.clone());
                    return Ok(self.deliver(d.src(), ctx));
                }
                let fail = self.m.new_label();
                let ok = self.m.new_label();
                self.pattern(pattern, v, fail)?;
                self.m.emit(Instr::Jump { to: ok });
                self.m.bind(fail);
                self.m.set_line(e.span);
                self.m.emit(Instr::Badmatch { src: v });
                self.m.bind(ok);
                v
            }
            ExprKind::Send(to, msg) => {
                let index = bif_index("erlang", "!", 2, e.span)?;
                self.bif_call(index, &[&**to, &**msg], hint)?
            }
            ExprKind::Call(target, args) => {
                return self.call(target, args, ctx, e.span);
            }
            ExprKind::Fun(fun) => self.fun_expr(fun, hint, e.span)?,
            ExprKind::Case(subject, clauses) => return self.case(subject, clauses, ctx),
            ExprKind::If(clauses) => return self.if_expr(clauses, ctx),
            ExprKind::Receive(clauses, after) => {
                return self.receive(clauses, after.as_deref(), ctx);
            }
            ExprKind::Try(t) => return self.try_expr(t, e.span, ctx),
            ExprKind::Catch(body) => self.catch_expr(body, hint)?,
            ExprKind::Block(body) => return self.body(body, ctx),
            ExprKind::ListComprehension(head, quals) => {
                let lowered = self.lower_comprehension(head, quals, e.span)?;
                return self.expr(&lowered, ctx);
            }
            ExprKind::BinaryComprehension(head, quals) => {
                let lowered = self.lower_binary_comprehension(head, quals, e.span)?;
                return self.expr(&lowered, ctx);
            }
            // Literals became constants above; an integer too large for
            // the literal area is the only way here.
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
                return error(e.span, "literal too large");
            }
        };
        Ok(self.deliver(value, ctx))
    }

    fn list(&mut self, elements: &[Expr], tail: Option<&Expr>, hint: Option<Dst>) -> Result<Src> {
        let saved = self.x_floor;
        let mut es: Vec<&Expr> = elements.iter().collect();
        if let Some(t) = tail {
            es.push(t);
        }
        let srcs = self.exprs(&es)?;
        let (mut acc, heads) = if tail.is_some() {
            (srcs[srcs.len() - 1], &srcs[..srcs.len() - 1])
        } else {
            (self.lit(Term::NIL), &srcs[..])
        };
        // Build into a fresh register: the operands may sit in the hint.
        let dst = self.temp();
        self.m.emit(Instr::TestHeap {
            words: 2 * heads.len() as u32,
            live: self.x_floor as u16,
        });
        for &h in heads.iter().rev() {
            self.m.emit(Instr::PutList {
                head: h,
                tail: acc,
                dst,
            });
            acc = dst.src();
        }
        self.x_floor = saved;
        match hint {
            Some(d) => {
                self.mov(dst.src(), d);
                Ok(d.src())
            }
            None => {
                self.protect(dst.src());
                Ok(dst.src())
            }
        }
    }

    pub fn put_tuple(&mut self, srcs: &[Src], hint: Option<Dst>) -> Src {
        let dst = self.target(hint);
        self.m.emit(Instr::TestHeap {
            words: srcs.len() as u32 + 1,
            live: self.x_floor as u16,
        });
        let elements = self.m.operand_list(srcs);
        self.m.emit(Instr::PutTuple {
            arity: srcs.len() as u32,
            elements,
            dst,
        });
        dst.src()
    }

    pub fn make_fun(&mut self, fun: u32, captured: &[Src], dst: Dst) {
        let words = crate::heap::words_for_fun(captured.len()) as u32;
        self.m.emit(Instr::TestHeap {
            words,
            live: self.x_floor as u16,
        });
        let list = self.m.operand_list(captured);
        self.m.emit(Instr::MakeFun {
            fun,
            captured: list,
            dst,
        });
    }

    fn map(
        &mut self,
        base: Option<&Expr>,
        fields: &[ast::MapField],
        hint: Option<Dst>,
    ) -> Result<Src> {
        let saved = self.x_floor;
        let mut es: Vec<&Expr> = Vec::new();
        if let Some(b) = base {
            es.push(b);
        }
        for f in fields {
            es.push(&f.key);
            es.push(&f.value);
        }
        let srcs = self.exprs(&es)?;
        let (base_src, pairs) = match base {
            Some(_) => (Some(srcs[0]), &srcs[1..]),
            None => (None, &srcs[..]),
        };
        let result = match base_src {
            // `M#{K1 := V1, ...}`: updates of keys that must be there, one
            // key at a time in order (the first key missing is the one
            // reported, as with one update of them all), with no pairs
            // tuple; native code does each inline.
            Some(b) if fields.iter().all(|f| f.exact) => {
                let index = bif_index("erlang", "$map_update1", 3, Span::default())?;
                // Each later step updates the temporary the step before
                // made, which nothing else sees: native code may write
                // into it in place (`$map_update1_chain`).
                let chain = bif_index("erlang", "$map_update1_chain", 3, Span::default())?;
                let mut map = b;
                for (i, pair) in pairs.chunks(2).enumerate() {
                    let index = if i == 0 { index } else { chain };
                    let dst = if i + 1 == fields.len() {
                        self.target(hint)
                    } else {
                        self.temp()
                    };
                    map = self.emit_bif(index, &[pair[0], pair[1], map], dst);
                    self.protect(map);
                }
                map
            }
            None => {
                let pairs_tuple = self.put_tuple(pairs, None);
                self.protect(pairs_tuple);
                let dst = self.target(hint);
                let index = bif_index("erlang", "$map_build", 1, Span::default())?;
                self.emit_bif(index, &[pairs_tuple], dst)
            }
            Some(b) => {
                let pairs_tuple = self.put_tuple(pairs, None);
                self.protect(pairs_tuple);
                let dst = self.target(hint);
                let exact: Vec<Term> = fields.iter().map(|f| Term::boolean(f.exact)).collect();
                let flags = {
                    let c = Constant::Tuple(
                        exact
                            .iter()
                            .map(|t| Constant::atom(t.as_atom().map_or("false", |a| a.name())))
                            .collect(),
                    );
                    self.m.constant(&c, Span::default())?
                };
                let index = bif_index("erlang", "$map_update", 3, Span::default())?;
                self.emit_bif(index, &[b, pairs_tuple, flags], dst)
            }
        };
        self.x_floor = saved;
        Ok(result)
    }

    fn binary_op(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        hint: Option<Dst>,
        span: Span,
    ) -> Result<Src> {
        match op {
            BinaryOp::AndAlso | BinaryOp::OrElse => return self.short_circuit(op, a, b, hint),
            BinaryOp::Append
            | BinaryOp::Subtract
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Xor => {
                let index = bif_index("erlang", op.symbol(), 2, span)?;
                return self.bif_call(index, &[a, b], hint);
            }
            _ => {}
        }
        // erlc puts a literal operand of a commutative operator second,
        // which shows in the arguments of a badarith's stack frame.
        let (a, b) = if self.m.erlc_arith()
            && matches!(
                op,
                BinaryOp::Add | BinaryOp::Mul | BinaryOp::Band | BinaryOp::Bor | BinaryOp::Bxor
            )
            && as_constant(a).is_some()
            && as_constant(b).is_none()
            && !folds_to_constant(b, &self.m.local_functions)
        {
            (b, a)
        } else {
            (a, b)
        };
        let saved = self.x_floor;
        let srcs = self.exprs(&[a, b])?;
        self.x_floor = saved;
        let (x, y) = (srcs[0], srcs[1]);
        let dst = self.target(hint);
        let fail = self.fail_label();
        let instr = match op {
            // The three commonest have instructions of their own, with
            // small-integer fast paths.
            BinaryOp::Add => Instr::Add {
                a: x,
                b: y,
                fail,
                dst,
            },
            BinaryOp::Sub => Instr::Sub {
                a: x,
                b: y,
                fail,
                dst,
            },
            BinaryOp::Mul => Instr::Mul {
                a: x,
                b: y,
                fail,
                dst,
            },
            _ => {
                if let Some(op) = arith_op(op) {
                    Instr::Arith {
                        op,
                        a: x,
                        b: y,
                        fail,
                        dst,
                    }
                } else if let Some(op) = compare_op(op) {
                    Instr::Compare {
                        op,
                        a: x,
                        b: y,
                        dst,
                    }
                } else {
                    return error(span, "unsupported operator");
                }
            }
        };
        self.m.emit(instr);
        Ok(dst.src())
    }

    /// `A andalso B`: B only when A is true, and B's value is the result
    /// (it need not be a boolean). A non-boolean A is `{badarg, A}`.
    fn short_circuit(
        &mut self,
        op: BinaryOp,
        a: &Expr,
        b: &Expr,
        hint: Option<Dst>,
    ) -> Result<Src> {
        let dst = match hint {
            Some(d) => d,
            None => {
                if self.m.contains_call(b) {
                    self.new_y()
                } else {
                    self.temp()
                }
            }
        };
        let saved = self.x_floor;
        let v = self.expr(a, Ctx::Value(None))?;
        self.protect(v);
        let (go_on, stop) = if op == BinaryOp::AndAlso {
            (Term::TRUE, Term::FALSE)
        } else {
            (Term::FALSE, Term::TRUE)
        };
        let not_go_on = self.m.new_label();
        let end = self.m.new_label();
        let go_on_lit = self.lit(go_on);
        let stop_lit = self.lit(stop);
        self.m.emit(Instr::IsEqExact {
            a: v,
            b: go_on_lit,
            fail: not_go_on,
        });
        self.x_floor = saved;
        self.expr(b, Ctx::Value(Some(dst)))?;
        self.m.emit(Instr::Jump { to: end });
        self.m.bind(not_go_on);
        let bad = match self.guard_fail {
            Some(l) => l,
            None => self.m.new_label(),
        };
        self.m.emit(Instr::IsEqExact {
            a: v,
            b: stop_lit,
            fail: bad,
        });
        self.mov(stop_lit, dst);
        if self.guard_fail.is_none() {
            self.m.emit(Instr::Jump { to: end });
            self.m.bind(bad);
            let index = bif_index("erlang", "$badbool", 1, Span::default())?;
            self.emit_bif(index, &[v], dst);
        }
        self.m.bind(end);
        self.x_floor = saved;
        if dst.is_y() {
            Ok(dst.src())
        } else {
            self.protect(dst.src());
            Ok(dst.src())
        }
    }

    fn unary_op(&mut self, op: UnaryOp, a: &Expr, hint: Option<Dst>) -> Result<Src> {
        match op {
            UnaryOp::Plus => {
                let zero = self.lit(Term::small(0));
                let saved = self.x_floor;
                let v = self.expr(a, Ctx::Value(None))?;
                self.x_floor = saved;
                let dst = self.target(hint);
                let fail = self.fail_label();
                self.m.emit(Instr::Add {
                    a: zero,
                    b: v,
                    fail,
                    dst,
                });
                Ok(dst.src())
            }
            UnaryOp::Minus => {
                let zero = self.lit(Term::small(0));
                let saved = self.x_floor;
                let v = self.expr(a, Ctx::Value(None))?;
                self.x_floor = saved;
                let dst = self.target(hint);
                let fail = self.fail_label();
                self.m.emit(Instr::Sub {
                    a: zero,
                    b: v,
                    fail,
                    dst,
                });
                Ok(dst.src())
            }
            UnaryOp::Not => {
                let index = bif_index("erlang", "not", 1, a.span)?;
                self.bif_call(index, &[a], hint)
            }
            UnaryOp::Bnot => {
                let index = bif_index("erlang", "bnot", 1, a.span)?;
                self.bif_call(index, &[a], hint)
            }
        }
    }

    // ---------------------------------------------------------------
    // Calls.

    pub fn bif_call(&mut self, index: u16, args: &[&Expr], hint: Option<Dst>) -> Result<Src> {
        let saved = self.x_floor;
        let srcs = self.exprs(args)?;
        self.x_floor = saved;
        let dst = self.target(hint);
        Ok(self.emit_bif(index, &srcs, dst))
    }

    /// A call of a BIF written as a call (`error(...)`, `erlang:hd(L)`):
    /// an exception it raises is at the call's line, as on BEAM, not at
    /// the line of its last argument.
    fn bif_call_at(
        &mut self,
        index: u16,
        args: &[&Expr],
        hint: Option<Dst>,
        span: Span,
    ) -> Result<Src> {
        let saved = self.x_floor;
        let srcs = self.exprs(args)?;
        self.x_floor = saved;
        let dst = self.target(hint);
        self.m.set_line(span);
        Ok(self.emit_bif(index, &srcs, dst))
    }

    pub fn emit_bif(&mut self, index: u16, srcs: &[Src], dst: Dst) -> Src {
        let args = self.m.operand_list(srcs);
        let fail = self.fail_label();
        let live = self.x_floor.min(255) as u8;
        self.m.emit(Instr::Bif {
            bif: index,
            live,
            args,
            fail,
            dst,
        });
        dst.src()
    }

    fn call(&mut self, target: &CallTarget, args: &[Expr], ctx: Ctx, span: Span) -> Result<Src> {
        let arity = args.len() as u32;
        let arg_refs: Vec<&Expr> = args.iter().collect();
        let hint = match ctx {
            Ctx::Value(h) => h,
            Ctx::Tail => Some(Dst::x(0)),
        };
        match target {
            CallTarget::Local(name, _) => {
                if let Some(&f) = self.m.local_functions.get(&(name.clone(), arity)) {
                    let label = self.m.function_labels[f as usize];
                    return self.emit_call(&arg_refs, CallKind::Local(label), ctx, span);
                }
                if (name == "apply") && (arity == 2 || arity == 3) {
                    let kind = if arity == 3 {
                        CallKind::ApplyList
                    } else {
                        CallKind::ApplyFunList
                    };
                    return self.emit_call(&arg_refs, kind, ctx, span);
                }
                match crate::bif::lookup("erlang", name, arity) {
                    Some(index) if crate::bif::is_auto_imported(index) => {
                        let v = self.bif_call_at(index, &arg_refs, hint, span)?;
                        Ok(self.deliver(v, ctx))
                    }
                    // hibernate/3 is not auto-imported.
                    _ if erlang_in_act(name, arity) && name != "hibernate" => {
                        let import =
                            self.m
                                .import(Atom::intern(ERLANG_IN_ACT), Atom::intern(name), arity);
                        self.emit_call(&arg_refs, CallKind::External(import), ctx, span)
                    }
                    _ => error(span, format!("function {name}/{arity} undefined")),
                }
            }
            CallTarget::Remote(module, function) => {
                if let (ExprKind::Atom(m), ExprKind::Atom(f)) = (&module.kind, &function.kind) {
                    if m == "erlang" && f == "apply" && (arity == 2 || arity == 3) {
                        let kind = if arity == 3 {
                            CallKind::ApplyList
                        } else {
                            CallKind::ApplyFunList
                        };
                        return self.emit_call(&arg_refs, kind, ctx, span);
                    }
                    if let Some(index) = crate::bif::lookup(m, f, arity) {
                        let v = self.bif_call_at(index, &arg_refs, hint, span)?;
                        return Ok(self.deliver(v, ctx));
                    }
                    let m = if m == "erlang" && erlang_in_act(f, arity) {
                        ERLANG_IN_ACT
                    } else {
                        m.as_str()
                    };
                    let import = self.m.import(Atom::intern(m), Atom::intern(f), arity);
                    return self.emit_call(&arg_refs, CallKind::External(import), ctx, span);
                }
                let mut all = arg_refs.clone();
                all.push(module);
                all.push(function);
                self.emit_call(&all, CallKind::Apply(arity), ctx, span)
            }
            CallTarget::Fun(f) => {
                let mut all = arg_refs.clone();
                all.push(f);
                self.emit_call(&all, CallKind::Fun(arity), ctx, span)
            }
        }
    }

    /// Puts `args` in x0.. and calls. Values live across the call are
    /// already in Y slots (the clause has a frame); the result is x0.
    fn emit_call(&mut self, args: &[&Expr], kind: CallKind, ctx: Ctx, span: Span) -> Result<Src> {
        let n = args.len() as u32;
        self.x_floor = self.x_floor.max(n);
        self.m.max_x = self.m.max_x.max(n + 1);
        let mut srcs = self.call_args(args)?;
        // A parallel move: a source in a register that an earlier move
        // overwrites is copied out of the way first.
        for (i, slot) in srcs.iter_mut().enumerate() {
            let s = *slot;
            if s.kind() == SRC_X && (s.index() as u32) < n && s.index() != i {
                let t = self.temp();
                self.mov(s, t);
                *slot = t.src();
            }
        }
        for (i, &s) in srcs.iter().enumerate() {
            self.mov(s, Dst::x(i as u16));
        }
        self.m.set_line(span);
        let tail = ctx == Ctx::Tail && self.try_depth == 0;
        let tail_mode = match (tail, self.frame) {
            (false, _) => Tail::No,
            (true, true) => Tail::Last,
            (true, false) => Tail::Only,
        };
        let arity = match kind {
            CallKind::Apply(a) | CallKind::Fun(a) => a as u16,
            _ => n as u16,
        };
        let instr = match kind {
            CallKind::Local(target) => match tail_mode {
                Tail::No => Instr::Call { arity, target },
                Tail::Last => Instr::CallLast { arity, target },
                Tail::Only => Instr::CallOnly { arity, target },
            },
            CallKind::External(import) => match tail_mode {
                Tail::No => Instr::CallExt { arity, import },
                Tail::Last => Instr::CallExtLast { arity, import },
                Tail::Only => Instr::CallExtOnly { arity, import },
            },
            CallKind::Apply(_) => Instr::Apply {
                arity,
                tail: tail_mode,
            },
            CallKind::Fun(_) => Instr::CallFun {
                arity,
                tail: tail_mode,
            },
            CallKind::ApplyList => Instr::ApplyList { tail: tail_mode },
            CallKind::ApplyFunList => Instr::ApplyFunList { tail: tail_mode },
        };
        self.m.emit(instr);
        // Nothing in an X register survives a call.
        self.x_floor = self.x_top;
        if tail {
            return Ok(Src::x(0));
        }
        if ctx == Ctx::Tail {
            self.ret(Src::x(0));
            return Ok(Src::x(0));
        }
        Ok(self.deliver(Src::x(0), ctx))
    }
}

impl Fc<'_> {
    /// Evaluates call arguments, each straight into its argument register
    /// when nothing evaluated later reads or clobbers that register.
    fn call_args(&mut self, args: &[&Expr]) -> Result<Vec<Src>> {
        let calls: Vec<bool> = args.iter().map(|e| self.m.contains_call(e)).collect();
        let mut srcs: Vec<Src> = Vec::with_capacity(args.len());
        for (i, e) in args.iter().enumerate() {
            let later_call = calls[i + 1..].iter().any(|&c| c);
            let target = Dst::x(i as u16);
            let direct = !later_call
                && !srcs.contains(&target.src())
                && (self.frame || (is_simple(e) && !self.read_by(&args[i + 1..], target)));
            if direct {
                self.expr(e, Ctx::Value(Some(target)))?;
                self.protect(target.src());
                srcs.push(target.src());
                continue;
            }
            let s = self.expr(e, Ctx::Value(None))?;
            if later_call && s.kind() == SRC_X {
                let y = self.new_y();
                self.mov(s, y);
                srcs.push(y.src());
            } else {
                self.protect(s);
                srcs.push(s);
            }
        }
        Ok(srcs)
    }

    /// Whether any of `es` reads a variable kept in register `d`.
    fn read_by(&self, es: &[&Expr], d: Dst) -> bool {
        super::lower::vars_of(es)
            .iter()
            .any(|v| self.vars.get(v) == Some(&d))
    }
}

/// An expression that writes its destination only as its last step.
fn is_simple(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::Integer(_) | ExprKind::Atom(_) | ExprKind::Float(_) => true,
        ExprKind::BinaryOp(op, _, _) => !matches!(op, BinaryOp::AndAlso | BinaryOp::OrElse),
        ExprKind::Tuple(_) => true,
        _ => as_constant(e).is_some(),
    }
}

#[derive(Clone, Copy)]
enum CallKind {
    Local(Label),
    External(u32),
    /// Module and function after the arguments.
    Apply(u32),
    /// The fun after the arguments.
    Fun(u32),
    ApplyList,
    ApplyFunList,
}

pub(super) fn bif_index(module: &str, name: &str, arity: u32, span: Span) -> Result<u16> {
    match crate::bif::lookup(module, name, arity) {
        Some(i) => Ok(i),
        None => error(span, format!("built-in {module}:{name}/{arity} missing")),
    }
}

/// The value of an expression made only of literals.
pub(super) fn as_constant(e: &Expr) -> Option<Constant> {
    match &e.kind {
        ExprKind::Integer(i) => Some(Constant::Integer(i.clone())),
        ExprKind::Float(f) => Some(Constant::Float(*f)),
        ExprKind::Atom(a) => Some(Constant::Atom(a.clone())),
        ExprKind::String(s) => {
            if s.is_empty() {
                Some(Constant::Nil)
            } else {
                Some(Constant::String(s.clone()))
            }
        }
        ExprKind::List(elements, tail) => {
            if elements.is_empty() && tail.is_none() {
                return Some(Constant::Nil);
            }
            let items: Option<Vec<Constant>> = elements.iter().map(as_constant).collect();
            let tail = match tail {
                Some(t) => as_constant(t)?,
                None => Constant::Nil,
            };
            Some(Constant::List(items?, Box::new(tail)))
        }
        ExprKind::Tuple(elements) => {
            let items: Option<Vec<Constant>> = elements.iter().map(as_constant).collect();
            Some(Constant::Tuple(items?))
        }
        // Erlang folds arithmetic on number literals (`-1`, `1 + 1`).
        ExprKind::UnaryOp(..) | ExprKind::BinaryOp(..) => match crate::syntax::fold::number(e)? {
            crate::syntax::lexer::Number::Integer(i) => Some(Constant::Integer(i)),
            crate::syntax::lexer::Number::Float(f) => Some(Constant::Float(f)),
        },
        _ => None,
    }
}

/// Whether erlc would fold `e` into a literal: `e` is a BIF call (not a call of a function of the module) whose
/// arguments are all literals (`list_to_atom("a")`), which leaves both
/// operands of an operator literal and their order as written.
fn folds_to_constant(e: &Expr, locals: &HashMap<(String, u32), u32>) -> bool {
    let ExprKind::Call(target, args) = &e.kind else {
        return false;
    };
    let bif = match &**target {
        CallTarget::Local(name, _) => !locals.contains_key(&(name.clone(), args.len() as u32)),
        CallTarget::Remote(m, _) => matches!(&m.kind, ExprKind::Atom(m) if m == "erlang"),
        CallTarget::Fun(_) => false,
    };
    bif && args.iter().all(|a| as_constant(a).is_some())
}

/// The generic arithmetic instruction's operation for `op`, if it is one.
fn arith_op(op: BinaryOp) -> Option<ArithOp> {
    Some(match op {
        BinaryOp::Div => ArithOp::Div,
        BinaryOp::IntDiv => ArithOp::IntDiv,
        BinaryOp::Rem => ArithOp::Rem,
        BinaryOp::Band => ArithOp::Band,
        BinaryOp::Bor => ArithOp::Bor,
        BinaryOp::Bxor => ArithOp::Bxor,
        BinaryOp::Bsl => ArithOp::Bsl,
        BinaryOp::Bsr => ArithOp::Bsr,
        _ => return None,
    })
}

/// The comparison instruction's operation for `op`, if it is one.
fn compare_op(op: BinaryOp) -> Option<CmpOp> {
    Some(match op {
        BinaryOp::Eq => CmpOp::Eq,
        BinaryOp::NotEq => CmpOp::Ne,
        BinaryOp::ExactEq => CmpOp::ExactEq,
        BinaryOp::ExactNotEq => CmpOp::ExactNe,
        BinaryOp::Less => CmpOp::Lt,
        BinaryOp::LessEq => CmpOp::Le,
        BinaryOp::Greater => CmpOp::Gt,
        BinaryOp::GreaterEq => CmpOp::Ge,
        _ => return None,
    })
}

/// The module holding the erlang functions written in act: spawning on
/// another node (`spawn/2,4`, `spawn_link/2,4`, `spawn_monitor/2,4`)
/// waits for that node's reply, which a BIF cannot do; `hibernate/3`
/// calls a function.
pub const ERLANG_IN_ACT: &str = "erts_dist";

/// Whether `erlang:name/arity` is one of those (calls to it go to
/// `ERLANG_IN_ACT`).
pub fn erlang_in_act(name: &str, arity: u32) -> bool {
    matches!(
        (name, arity),
        ("spawn" | "spawn_link" | "spawn_monitor", 2 | 4) | ("hibernate", 3)
    )
}
