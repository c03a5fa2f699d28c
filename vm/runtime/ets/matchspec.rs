//! Match specifications (`ets:select/2`, `match/2`, ...): compiled once
//! per call from the term the program gave, then run on each candidate
//! object.
//!
//! Everything happens on one scratch heap: the specification is copied
//! there first, each candidate object is appended next to it, and guards
//! and bodies build their values there. A candidate that does not match
//! is cut off again (`truncate_unrooted`), so the scratch heap holds only
//! the specification and the results; the caller copies the results into
//! the process heap at the end. The scratch heap is never collected: no
//! term on it needs rooting.
//!
//! Errors follow OTP: a malformed specification is `badarg` (at compile
//! time, before any object is seen); a guard that fails or raises makes
//! its clause not match; in a body, a call that raises is the atom 'EXIT'
//! in its place (the value around it is still built).
//! Nesting is limited to `MAX_DEPTH` (deeper specifications are badarg),
//! so the recursive compile and evaluation never exhaust the Rust stack.

use crate::heap::{self, Heap, MessageBuffer, SystemLimit};
use crate::sched::Pid;
use crate::term::arith::{self, Number};
use crate::term::{Atom, Term, View, compare, eq, exact_eq};
use std::cmp::Ordering;

const MAX_DEPTH: usize = 200;

/// A malformed specification (badarg).
#[derive(Debug)]
pub struct Invalid;

enum Pat {
    Any,
    /// Binds (first time) or checks (later) a variable slot.
    Var(usize),
    /// Matches a term `=:=` to this one (on the scratch heap).
    Const(Term),
    Tuple(Vec<Pat>),
    /// Elements, then the tail.
    List(Vec<Pat>, Box<Pat>),
    /// Keys (constants) and the patterns of their values.
    Map(Vec<(Term, Pat)>),
}

#[derive(Clone, Copy)]
enum Op {
    IsAtom,
    IsFloat,
    IsInteger,
    IsList,
    IsNumber,
    IsPid,
    IsPort,
    IsReference,
    IsTuple,
    IsMap,
    IsBinary,
    IsFunction,
    IsBoolean,
    IsRecord,
    IsMapKey,
    Abs,
    Element,
    Hd,
    Tl,
    Length,
    MapGet,
    MapSize,
    Node,
    Round,
    Trunc,
    Float,
    Size,
    TupleSize,
    ByteSize,
    BitSize,
    SelfPid,
    Add,
    Sub,
    Mul,
    Divide,
    Div,
    Rem,
    Band,
    Bor,
    Bxor,
    Bnot,
    Bsl,
    Bsr,
    Neg,
    Plus,
    Gt,
    Ge,
    Lt,
    Le,
    ExactEq,
    Eq,
    ExactNe,
    Ne,
    And,
    Or,
    Xor,
    Not,
    AndAlso,
    OrElse,
}

/// The function `{Name, Args...}` names, if it takes `arity` arguments.
fn op(name: &str, arity: usize) -> Option<Op> {
    use Op::*;
    let (op, want) = match name {
        "is_atom" => (IsAtom, 1),
        "is_float" => (IsFloat, 1),
        "is_integer" => (IsInteger, 1),
        "is_list" => (IsList, 1),
        "is_number" => (IsNumber, 1),
        "is_pid" => (IsPid, 1),
        "is_port" => (IsPort, 1),
        "is_reference" => (IsReference, 1),
        "is_tuple" => (IsTuple, 1),
        "is_map" => (IsMap, 1),
        "is_binary" => (IsBinary, 1),
        "is_function" => (IsFunction, 1),
        "is_boolean" => (IsBoolean, 1),
        "is_record" => (IsRecord, 3),
        "is_map_key" => (IsMapKey, 2),
        "abs" => (Abs, 1),
        "element" => (Element, 2),
        "hd" => (Hd, 1),
        "tl" => (Tl, 1),
        "length" => (Length, 1),
        "map_get" => (MapGet, 2),
        "map_size" => (MapSize, 1),
        "node" => (Node, 0),
        "round" => (Round, 1),
        "trunc" => (Trunc, 1),
        "float" => (Float, 1),
        "size" => (Size, 1),
        "tuple_size" => (TupleSize, 1),
        "byte_size" => (ByteSize, 1),
        "bit_size" => (BitSize, 1),
        "self" => (SelfPid, 0),
        "+" if arity == 1 => (Plus, 1),
        "-" if arity == 1 => (Neg, 1),
        "+" => (Add, 2),
        "-" => (Sub, 2),
        "*" => (Mul, 2),
        "/" => (Divide, 2),
        "div" => (Div, 2),
        "rem" => (Rem, 2),
        "band" => (Band, 2),
        "bor" => (Bor, 2),
        "bxor" => (Bxor, 2),
        "bnot" => (Bnot, 1),
        "bsl" => (Bsl, 2),
        "bsr" => (Bsr, 2),
        ">" => (Gt, 2),
        ">=" => (Ge, 2),
        "<" => (Lt, 2),
        "=<" => (Le, 2),
        "=:=" => (ExactEq, 2),
        "==" => (Eq, 2),
        "=/=" => (ExactNe, 2),
        "/=" => (Ne, 2),
        "and" => (And, 2),
        "or" => (Or, 2),
        "xor" => (Xor, 2),
        "not" => (Not, 1),
        "andalso" | "orelse" if arity >= 1 => {
            return Some(if name == "andalso" { AndAlso } else { OrElse });
        }
        _ => return None,
    };
    (want == arity).then_some(op)
}

enum Expr {
    Var(usize),
    /// `'$_'`: the whole object.
    Whole,
    /// `'$$'`: the head's variables, in number order.
    AllVars,
    Const(Term),
    Tuple(Vec<Expr>),
    List(Vec<Expr>, Box<Expr>),
    /// A map whose keys and values are expressions (`#{'$1' => '$2'}`).
    Map(Vec<(Expr, Expr)>),
    Call(Op, Vec<Expr>),
}

struct Clause {
    head: Pat,
    guards: Vec<Expr>,
    body: Vec<Expr>,
    /// Variable slots in `'$N'` number order (for `'$$'`).
    slots: usize,
}

/// A compiled specification.
pub struct MatchSpec {
    clauses: Vec<Clause>,
}

/// What `match/2` and friends return per object.
pub enum Returns {
    /// `'$$'` (ets:match).
    Bindings,
    /// `'$_'` (ets:match_object).
    Object,
    /// `true` (ets:match_delete).
    True,
}

/// `'$N'` → N.
fn variable(a: Atom) -> Option<u32> {
    let name = a.name();
    let digits = name.strip_prefix('$')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 9 {
        return None;
    }
    digits.parse().ok()
}

/// Compiles heads: maps `'$N'` to slots in number order.
struct Vars {
    numbers: Vec<u32>,
}

impl Vars {
    fn collect(heap: &Heap, t: Term) -> Vars {
        let mut numbers = Vec::new();
        let mut stack = vec![t];
        while let Some(t) = stack.pop() {
            match heap.view(t) {
                View::Atom(a) => {
                    if let Some(n) = variable(a) {
                        numbers.push(n);
                    }
                }
                View::Tuple(es) => stack.extend_from_slice(es),
                View::Cons(h, tl) => {
                    stack.push(h);
                    stack.push(tl);
                }
                View::Map { values, .. } => stack.extend_from_slice(&values),
                _ => {}
            }
        }
        numbers.sort_unstable();
        numbers.dedup();
        Vars { numbers }
    }

    fn slot(&self, n: u32) -> Option<usize> {
        self.numbers.binary_search(&n).ok()
    }
}

/// Whether a pattern term has any variable or `'_'` in it.
fn is_ground(heap: &Heap, t: Term) -> bool {
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Atom(a) if a.name() == "_" || variable(a).is_some() => return false,
            View::Tuple(es) => stack.extend_from_slice(es),
            View::Cons(h, tl) => {
                stack.push(h);
                stack.push(tl);
            }
            View::Map { values, .. } => stack.extend_from_slice(&values),
            _ => {}
        }
    }
    true
}

fn compile_pat(heap: &Heap, t: Term, vars: &Vars, depth: usize) -> Result<Pat, Invalid> {
    if depth > MAX_DEPTH {
        return Err(Invalid);
    }
    match heap.view(t) {
        View::Atom(a) if a.name() == "_" => Ok(Pat::Any),
        View::Atom(a) => match variable(a) {
            Some(n) => Ok(Pat::Var(vars.slot(n).ok_or(Invalid)?)),
            None => Ok(Pat::Const(t)),
        },
        _ if is_ground(heap, t) => Ok(Pat::Const(t)),
        View::Tuple(es) => Ok(Pat::Tuple(
            es.iter()
                .map(|&e| compile_pat(heap, e, vars, depth + 1))
                .collect::<Result<_, _>>()?,
        )),
        View::Cons(..) => {
            let mut elements = Vec::new();
            let mut t = t;
            while let View::Cons(h, tl) = heap.view(t) {
                elements.push(compile_pat(heap, h, vars, depth + 1)?);
                t = tl;
            }
            let tail = compile_pat(heap, t, vars, depth + 1)?;
            Ok(Pat::List(elements, Box::new(tail)))
        }
        View::Map { keys, values } => Ok(Pat::Map(
            keys.iter()
                .zip(values.iter())
                .map(|(&k, &v)| Ok((k, compile_pat(heap, v, vars, depth + 1)?)))
                .collect::<Result<_, _>>()?,
        )),
        _ => Ok(Pat::Const(t)),
    }
}

fn compile_expr(heap: &Heap, t: Term, vars: &Vars, depth: usize) -> Result<Expr, Invalid> {
    if depth > MAX_DEPTH {
        return Err(Invalid);
    }
    match heap.view(t) {
        View::Atom(a) => match a.name() {
            "$_" => Ok(Expr::Whole),
            "$$" => Ok(Expr::AllVars),
            "_" => Err(Invalid),
            _ => match variable(a) {
                Some(n) => Ok(Expr::Var(vars.slot(n).ok_or(Invalid)?)),
                None => Ok(Expr::Const(t)),
            },
        },
        View::Tuple([inner]) if heap.as_tuple(*inner).is_some() => {
            let es = heap.tuple_elements(*inner);
            Ok(Expr::Tuple(
                es.iter()
                    .map(|&e| compile_expr(heap, e, vars, depth + 1))
                    .collect::<Result<_, _>>()?,
            ))
        }
        View::Tuple([name, args @ ..]) => {
            let name = name.as_atom().ok_or(Invalid)?;
            if name.name() == "const" && args.len() == 1 {
                return Ok(Expr::Const(args[0]));
            }
            let op = op(name.name(), args.len()).ok_or(Invalid)?;
            Ok(Expr::Call(
                op,
                args.iter()
                    .map(|&e| compile_expr(heap, e, vars, depth + 1))
                    .collect::<Result<_, _>>()?,
            ))
        }
        View::Tuple([]) => Err(Invalid),
        View::Cons(..) => {
            let mut elements = Vec::new();
            let mut t = t;
            while let View::Cons(h, tl) = heap.view(t) {
                elements.push(compile_expr(heap, h, vars, depth + 1)?);
                t = tl;
            }
            let tail = compile_expr(heap, t, vars, depth + 1)?;
            Ok(Expr::List(elements, Box::new(tail)))
        }
        View::Map { keys, values } => Ok(Expr::Map(
            keys.iter()
                .zip(values.iter())
                .map(|(&k, &v)| {
                    Ok((
                        compile_expr(heap, k, vars, depth + 1)?,
                        compile_expr(heap, v, vars, depth + 1)?,
                    ))
                })
                .collect::<Result<_, _>>()?,
        )),
        _ => Ok(Expr::Const(t)),
    }
}

impl MatchSpec {
    /// Compiles `spec` (on `heap`), copying it onto `scratch` first.
    pub fn compile(heap: &Heap, spec: Term, scratch: &mut Heap) -> Result<MatchSpec, Invalid> {
        let spec = copy_onto(heap, spec, scratch).map_err(|_| Invalid)?;
        let heap = &*scratch;
        let clauses = heap.list_to_vec(spec).ok_or(Invalid)?;
        let mut compiled = Vec::with_capacity(clauses.len());
        for clause in clauses {
            let &[head, guards, body] = heap.as_tuple(clause).ok_or(Invalid)? else {
                return Err(Invalid);
            };
            let vars = Vars::collect(heap, head);
            let guards = heap.list_to_vec(guards).ok_or(Invalid)?;
            let body = heap.list_to_vec(body).ok_or(Invalid)?;
            compiled.push(Clause {
                head: compile_pat(heap, head, &vars, 0)?,
                guards: guards
                    .iter()
                    .map(|&g| compile_expr(heap, g, &vars, 0))
                    .collect::<Result<_, _>>()?,
                body: body
                    .iter()
                    .map(|&b| compile_expr(heap, b, &vars, 0))
                    .collect::<Result<_, _>>()?,
                slots: vars.numbers.len(),
            });
        }
        Ok(MatchSpec { clauses: compiled })
    }

    /// The specification of `ets:match(T, Pattern)` and its kin.
    pub fn from_pattern(
        heap: &Heap,
        pattern: Term,
        returns: Returns,
        scratch: &mut Heap,
    ) -> Result<MatchSpec, Invalid> {
        let pattern = copy_onto(heap, pattern, scratch).map_err(|_| Invalid)?;
        let heap = &*scratch;
        let vars = Vars::collect(heap, pattern);
        let body = match returns {
            Returns::Bindings => Expr::AllVars,
            Returns::Object => Expr::Whole,
            Returns::True => Expr::Const(Term::TRUE),
        };
        Ok(MatchSpec {
            clauses: vec![Clause {
                head: compile_pat(heap, pattern, &vars, 0)?,
                guards: Vec::new(),
                body: vec![body],
                slots: vars.numbers.len(),
            }],
        })
    }

    /// The key every match must have, when the one clause's head fixes
    /// it (`{Key, '$1'}`): then only that key's objects are candidates.
    pub fn bound_key(&self, keypos: usize) -> Option<Term> {
        match &self.clauses[..] {
            [
                Clause {
                    head: Pat::Tuple(es),
                    ..
                },
            ] => match es.get(keypos - 1)? {
                Pat::Const(k) => Some(*k),
                _ => None,
            },
            _ => None,
        }
    }

    /// Runs the clauses on `object`, which is appended to `scratch`:
    /// the body's value (on `scratch`) of the first clause that matches,
    /// or `None` (and `scratch` is as it was).
    pub fn run(
        &self,
        scratch: &mut Heap,
        object: &MessageBuffer,
        me: Pid,
    ) -> Result<Option<Term>, SystemLimit> {
        let mark = scratch.used();
        scratch.grow_unrooted(object.words())?;
        let whole = scratch.append_buffer(object);
        let mut bindings: Vec<Term> = Vec::new();
        for clause in &self.clauses {
            bindings.clear();
            bindings.resize(clause.slots, Term::NONE);
            if !match_pat(scratch, &clause.head, whole, &mut bindings) {
                continue;
            }
            let mut env = Env {
                heap: &mut *scratch,
                bindings: &bindings,
                whole,
                me,
                failed_limit: false,
                in_body: false,
            };
            let guards_hold = clause.guards.iter().all(|g| env.eval(g) == Ok(Term::TRUE));
            if env.failed_limit {
                return Err(SystemLimit);
            }
            if !guards_hold {
                continue;
            }
            let mut value = Term::atom(atom!("EXIT"));
            env.in_body = true;
            for b in &clause.body {
                value = env.eval(b).unwrap_or(Term::atom(atom!("EXIT")));
            }
            if env.failed_limit {
                return Err(SystemLimit);
            }
            return Ok(Some(value));
        }
        scratch.truncate_unrooted(mark);
        Ok(None)
    }
}

/// Copies `t` from `src` onto the scratch heap.
pub fn copy_onto(src: &Heap, t: Term, scratch: &mut Heap) -> Result<Term, SystemLimit> {
    let words = heap::size_of(src, t)?;
    scratch.grow_unrooted(words)?;
    Ok(heap::copy_term(src, t, scratch))
}

fn match_pat(heap: &Heap, pat: &Pat, t: Term, bindings: &mut [Term]) -> bool {
    match pat {
        Pat::Any => true,
        Pat::Var(slot) => {
            let bound = bindings[*slot];
            if bound.is_none() {
                bindings[*slot] = t;
                true
            } else {
                exact_eq(heap, bound, t)
            }
        }
        Pat::Const(c) => exact_eq(heap, *c, t),
        Pat::Tuple(ps) => match heap.as_tuple(t) {
            Some(es) if es.len() == ps.len() => ps
                .iter()
                .zip(es)
                .all(|(p, &e)| match_pat(heap, p, e, bindings)),
            _ => false,
        },
        Pat::List(ps, tail) => {
            let mut t = t;
            for p in ps {
                match heap.view(t) {
                    View::Cons(h, tl) => {
                        if !match_pat(heap, p, h, bindings) {
                            return false;
                        }
                        t = tl;
                    }
                    _ => return false,
                }
            }
            match_pat(heap, tail, t, bindings)
        }
        Pat::Map(pairs) => {
            if !heap.is_map(t) {
                return false;
            }
            pairs.iter().all(|(k, p)| match heap.map_get(t, *k) {
                Some(v) => match_pat(heap, p, v, bindings),
                None => false,
            })
        }
    }
}

/// Why an expression has no value: it raised (a guard fails, a body
/// gives `'EXIT'`).
#[derive(Debug, PartialEq)]
struct Raised;

struct Env<'a> {
    heap: &'a mut Heap,
    bindings: &'a [Term],
    whole: Term,
    me: Pid,
    /// The scratch heap could not grow: the whole call fails.
    failed_limit: bool,
    /// Evaluating a body: a call that raises is `'EXIT'` in its place,
    /// and what contains it is still built (as OTP: `{{'$1', {'+',
    /// '$2', 1}}}` of `{a, x}` is `{a, 'EXIT'}`).
    in_body: bool,
}

impl Env<'_> {
    fn room(&mut self, words: usize) -> Result<(), Raised> {
        self.heap.grow_unrooted(words).map_err(|_| {
            self.failed_limit = true;
            Raised
        })
    }

    fn number(&mut self, n: Result<Number, arith::ArithError>) -> Result<Term, Raised> {
        let n = n.map_err(|_| Raised)?;
        self.room(n.words())?;
        Ok(self.heap.number(&n))
    }

    /// Recursion is bounded: compiled expressions nest at most `MAX_DEPTH`.
    fn eval(&mut self, e: &Expr) -> Result<Term, Raised> {
        let value = self.eval_here(e);
        match value {
            Err(Raised) if self.in_body && !self.failed_limit && matches!(e, Expr::Call(..)) => {
                Ok(Term::atom(atom!("EXIT")))
            }
            _ => value,
        }
    }

    fn eval_here(&mut self, e: &Expr) -> Result<Term, Raised> {
        match e {
            Expr::Var(slot) => Ok(self.bindings[*slot]),
            Expr::Whole => Ok(self.whole),
            Expr::AllVars => {
                let n = self.bindings.len();
                self.room(2 * n)?;
                Ok(self.heap.list(self.bindings))
            }
            Expr::Const(t) => Ok(*t),
            Expr::Tuple(es) => {
                let mut values = Vec::with_capacity(es.len());
                for e in es {
                    values.push(self.eval(e)?);
                }
                self.room(values.len() + 1)?;
                Ok(self.heap.tuple(&values))
            }
            Expr::List(es, tail) => {
                let mut values = Vec::with_capacity(es.len());
                for e in es {
                    values.push(self.eval(e)?);
                }
                let tail = self.eval(tail)?;
                self.room(2 * values.len())?;
                Ok(self.heap.list_with_tail(&values, tail))
            }
            Expr::Map(pairs) => {
                let mut built = Vec::with_capacity(pairs.len());
                for (k, v) in pairs {
                    built.push((self.eval(k)?, self.eval(v)?));
                }
                self.room(heap::words_for_map(built.len()))?;
                Ok(self.heap.map(&built))
            }
            Expr::Call(Op::AndAlso, args) => {
                for (i, a) in args.iter().enumerate() {
                    let v = self.eval(a)?;
                    if i + 1 == args.len() {
                        return Ok(v);
                    }
                    match v.as_bool() {
                        Some(true) => {}
                        Some(false) => return Ok(Term::FALSE),
                        None => return Err(Raised),
                    }
                }
                Ok(Term::TRUE)
            }
            Expr::Call(Op::OrElse, args) => {
                for (i, a) in args.iter().enumerate() {
                    let v = self.eval(a)?;
                    if i + 1 == args.len() {
                        return Ok(v);
                    }
                    match v.as_bool() {
                        Some(false) => {}
                        Some(true) => return Ok(Term::TRUE),
                        None => return Err(Raised),
                    }
                }
                Ok(Term::FALSE)
            }
            Expr::Call(op, args) => {
                let mut values = [Term::NIL; 3];
                for (i, a) in args.iter().enumerate() {
                    values[i] = self.eval(a)?;
                }
                self.apply(*op, &values[..args.len()])
            }
        }
    }

    fn apply(&mut self, op: Op, a: &[Term]) -> Result<Term, Raised> {
        let h = &*self.heap;
        let b = Term::boolean;
        let bool_of = |t: Term| t.as_bool().ok_or(Raised);
        Ok(match op {
            Op::IsAtom => b(a[0].is_atom()),
            Op::IsFloat => b(h.is_float(a[0])),
            Op::IsInteger => b(h.is_integer(a[0])),
            Op::IsList => b(a[0].is_nil() || a[0].is_cons()),
            Op::IsNumber => b(h.is_number(a[0])),
            Op::IsPid => b(a[0].is_pid()),
            Op::IsPort => Term::FALSE,
            Op::IsReference => b(h.is_reference(a[0])),
            Op::IsTuple => b(h.as_tuple(a[0]).is_some()),
            Op::IsMap => b(h.is_map(a[0])),
            Op::IsBinary => b(h.is_binary(a[0])),
            Op::IsFunction => b(h.is_function(a[0])),
            Op::IsBoolean => b(a[0].as_bool().is_some()),
            Op::IsRecord => {
                let size = a[2].as_small().ok_or(Raised)?;
                if !a[1].is_atom() {
                    return Err(Raised);
                }
                b(h.as_tuple(a[0])
                    .is_some_and(|es| es.len() as i64 == size && es.first() == Some(&a[1])))
            }
            Op::IsMapKey => {
                if !h.is_map(a[1]) {
                    return Err(Raised);
                }
                b(h.map_get(a[1], a[0]).is_some())
            }
            Op::MapGet => {
                if !h.is_map(a[1]) {
                    return Err(Raised);
                }
                h.map_get(a[1], a[0]).ok_or(Raised)?
            }
            Op::MapSize => Term::small(h.map_size(a[0]).ok_or(Raised)? as i64),
            Op::Element => {
                let es = h.as_tuple(a[1]).ok_or(Raised)?;
                let n = a[0].as_small().ok_or(Raised)?;
                if n < 1 || n as usize > es.len() {
                    return Err(Raised);
                }
                es[n as usize - 1]
            }
            Op::Hd | Op::Tl => match h.view(a[0]) {
                View::Cons(hd, tl) => {
                    if matches!(op, Op::Hd) {
                        hd
                    } else {
                        tl
                    }
                }
                _ => return Err(Raised),
            },
            Op::Length => Term::small(h.list_length(a[0]).ok_or(Raised)? as i64),
            Op::Size => match h.view(a[0]) {
                View::Tuple(es) => Term::small(es.len() as i64),
                View::Binary(bytes) => Term::small(bytes.len() as i64),
                _ => return Err(Raised),
            },
            Op::TupleSize => Term::small(h.as_tuple(a[0]).ok_or(Raised)?.len() as i64),
            Op::ByteSize => Term::small(h.binary_bytes(a[0]).ok_or(Raised)?.len() as i64),
            Op::BitSize => Term::small(8 * h.binary_bytes(a[0]).ok_or(Raised)?.len() as i64),
            Op::Node => Term::atom(Atom::NONODE),
            Op::SelfPid => self.me.to_term(),
            Op::Abs => return self.number(arith::abs(h, a[0])),
            Op::Round => return self.number(arith::round(h, a[0])),
            Op::Trunc => return self.number(arith::trunc(h, a[0])),
            Op::Float => return self.number(arith::float(h, a[0])),
            Op::Add => return self.number(arith::add(h, a[0], a[1])),
            Op::Sub => return self.number(arith::sub(h, a[0], a[1])),
            Op::Mul => return self.number(arith::mul(h, a[0], a[1])),
            Op::Divide => return self.number(arith::divide(h, a[0], a[1])),
            Op::Div => return self.number(arith::int_div(h, a[0], a[1])),
            Op::Rem => return self.number(arith::rem(h, a[0], a[1])),
            Op::Band => return self.number(arith::band(h, a[0], a[1])),
            Op::Bor => return self.number(arith::bor(h, a[0], a[1])),
            Op::Bxor => return self.number(arith::bxor(h, a[0], a[1])),
            Op::Bnot => return self.number(arith::bnot(h, a[0])),
            Op::Bsl => return self.number(arith::bsl(h, a[0], a[1])),
            Op::Bsr => return self.number(arith::bsr(h, a[0], a[1])),
            Op::Neg => return self.number(arith::neg(h, a[0])),
            Op::Plus => {
                if !h.is_number(a[0]) {
                    return Err(Raised);
                }
                a[0]
            }
            Op::Gt => b(compare(h, a[0], a[1]) == Ordering::Greater),
            Op::Ge => b(compare(h, a[0], a[1]) != Ordering::Less),
            Op::Lt => b(compare(h, a[0], a[1]) == Ordering::Less),
            Op::Le => b(compare(h, a[0], a[1]) != Ordering::Greater),
            Op::ExactEq => b(exact_eq(h, a[0], a[1])),
            Op::Eq => b(eq(h, a[0], a[1])),
            Op::ExactNe => b(!exact_eq(h, a[0], a[1])),
            Op::Ne => b(!eq(h, a[0], a[1])),
            Op::And => b(bool_of(a[0])? & bool_of(a[1])?),
            Op::Or => b(bool_of(a[0])? | bool_of(a[1])?),
            Op::Xor => b(bool_of(a[0])? ^ bool_of(a[1])?),
            Op::Not => b(!bool_of(a[0])?),
            Op::AndAlso | Op::OrElse => return Err(Raised),
        })
    }
}
