//! The names erlc gives the functions it makes of funs and comprehensions,
//! which show in stack traces and `module_info(functions)`.
//!
//! Two counters run per source function, as in OTP 25's compiler:
//! - v3_core numbers every fun after the funs inside it
//!   (`'-main/1-fun-3-'`), counting `fun f/1` too, the parts of a list,
//!   tuple or call last to first, and numbers each
//!   generator of a comprehension after the expressions of its qualifiers
//!   and before its head (`'lc$^2'`, `'lbc$^2'` for a binary one);
//! - v3_kernel numbers what it lifts out, each comprehension generator and
//!   each named fun, before what is inside it, a generator's list
//!   expression after the generators that follow it
//!   (`'-main/1-lc$^2/1-0-'`, `'-main/1-Loop/1-1-'`).
//!
//! A name is found again by the span of its fun or comprehension (a queue
//! per span, for the funs of one macro expansion, which share it).

use super::lower::{children, clause_children};
use crate::syntax::ast::{CallTarget, Clause, Expr, ExprKind, Fun, Qualifier};
use crate::syntax::span::Span;
use std::collections::{HashMap, VecDeque};

type Key = (u32, u32);

fn key(span: Span) -> Key {
    (span.start, span.end)
}

/// The names of one source function's funs and comprehension helpers.
#[derive(Default)]
pub(super) struct LambdaNames {
    funs: HashMap<Key, VecDeque<String>>,
    comprehensions: HashMap<Key, VecDeque<VecDeque<String>>>,
}

impl LambdaNames {
    /// Names the funs and comprehensions of function `name/arity`.
    pub(super) fn of(name: &str, arity: u32, clauses: &[Clause]) -> LambdaNames {
        let mut core = Numbers::default();
        let mut kernel = Numbers::default();
        let mut roots = Vec::new();
        for c in clauses {
            clause_children(c, &mut roots);
        }
        let mut n = 0;
        for e in &roots {
            core_walk(e, &mut n, &mut core);
        }
        let mut n = 0;
        for e in &roots {
            kernel_walk(e, &mut n, &mut kernel);
        }
        let prefix = format!("-{name}/{arity}-");
        let mut names = LambdaNames::default();
        for (k, mut core_numbers) in core.funs {
            let mut kernel_numbers = kernel.funs.remove(&k).unwrap_or_default();
            let queue = names.funs.entry(k).or_default();
            while let Some((c, named)) = core_numbers.pop_front() {
                queue.push_back(match named {
                    Some(n) => {
                        let k = kernel_numbers.pop_front().map_or(c, |(k, _)| k);
                        format!("{prefix}{n}-{k}-")
                    }
                    None => format!("{prefix}fun-{c}-"),
                });
            }
        }
        for (k, mut core_gens) in core.comprehensions {
            let mut kernel_gens = kernel.comprehensions.remove(&k).unwrap_or_default();
            let queue = names.comprehensions.entry(k).or_default();
            while let Some((cs, binary)) = core_gens.pop_front() {
                let ks = kernel_gens
                    .pop_front()
                    .map(|(ks, _)| ks)
                    .unwrap_or_default();
                let (kind, arity) = if binary { ("lbc", 2) } else { ("lc", 1) };
                queue.push_back(
                    cs.iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let k = ks.get(i).copied().unwrap_or(*c);
                            format!("{prefix}{kind}$^{c}/{arity}-{k}-")
                        })
                        .collect(),
                );
            }
        }
        names
    }

    /// The name of the fun at `span`. Code that act compiles twice (the
    /// `after` of a `try`) keeps its names.
    pub(super) fn fun(&mut self, span: Span) -> Option<String> {
        next(self.funs.get_mut(&key(span))?)
    }

    /// The names of the generators of the comprehension at `span`.
    pub(super) fn comprehension(&mut self, span: Span) -> Option<VecDeque<String>> {
        next(self.comprehensions.get_mut(&key(span))?)
    }
}

/// The next of `queue`, the last one again when it is the only one left.
fn next<T: Clone>(queue: &mut VecDeque<T>) -> Option<T> {
    if queue.len() == 1 {
        return queue.front().cloned();
    }
    queue.pop_front()
}

/// The numbers one counter gives: per fun its number and, for a named
/// fun, the name and arity it is lifted under; per comprehension its
/// generators' numbers and whether it builds a binary.
#[derive(Default)]
struct Numbers {
    funs: HashMap<Key, VecDeque<(u32, Option<String>)>>,
    comprehensions: HashMap<Key, VecDeque<(Vec<u32>, bool)>>,
}

fn named(fun: &Fun) -> Option<String> {
    match fun {
        Fun::Named(v, clauses) => Some(format!(
            "{}/{}",
            v.name,
            clauses.first().map_or(0, |c| c.patterns.len())
        )),
        _ => None,
    }
}

fn clause_roots(clauses: &[Clause]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for c in clauses {
        clause_children(c, &mut out);
    }
    out
}

/// v3_core's order.
fn core_walk(e: &Expr, n: &mut u32, out: &mut Numbers) {
    match &e.kind {
        ExprKind::Fun(fun) => match &**fun {
            Fun::Anonymous(clauses) | Fun::Named(_, clauses) => {
                for x in clause_roots(clauses) {
                    core_walk(x, n, out);
                }
                out.funs
                    .entry(key(e.span))
                    .or_default()
                    .push_back((*n, named(fun)));
                *n += 1;
            }
            Fun::Local(_) => *n += 1,
            Fun::Remote { .. } => each_child(e, |x| core_walk(x, n, out)),
        },
        ExprKind::ListComprehension(head, quals) | ExprKind::BinaryComprehension(head, quals) => {
            for q in quals {
                match q {
                    Qualifier::Generator(_, x)
                    | Qualifier::BinaryGenerator(_, x)
                    | Qualifier::Filter(x) => core_walk(x, n, out),
                }
            }
            let mut gens = Vec::new();
            for q in quals {
                if !matches!(q, Qualifier::Filter(_)) {
                    gens.push(*n);
                    *n += 1;
                }
            }
            let binary = matches!(e.kind, ExprKind::BinaryComprehension(..));
            out.comprehensions
                .entry(key(e.span))
                .or_default()
                .push_back((gens, binary));
            core_walk(head, n, out);
        }
        // v3_core translates the parts of a cons (tail first), a tuple
        // and a call (arguments, then the callee) last to first: the funs
        // of `[F1, F2]`, `{F1, F2}` and `f(F1, F2)` are numbered F2's first.
        ExprKind::List(elements, tail) => {
            if let Some(t) = tail {
                core_walk(t, n, out);
            }
            for x in elements.iter().rev() {
                core_walk(x, n, out);
            }
        }
        ExprKind::Tuple(elements) => {
            for x in elements.iter().rev() {
                core_walk(x, n, out);
            }
        }
        ExprKind::Call(target, args) => {
            for x in args.iter().rev() {
                core_walk(x, n, out);
            }
            match &**target {
                CallTarget::Remote(m, f) => {
                    core_walk(f, n, out);
                    core_walk(m, n, out);
                }
                CallTarget::Fun(f) => core_walk(f, n, out),
                CallTarget::Local(..) => {}
            }
        }
        _ => each_child(e, |x| core_walk(x, n, out)),
    }
}

/// v3_kernel's order.
fn kernel_walk(e: &Expr, n: &mut u32, out: &mut Numbers) {
    match &e.kind {
        ExprKind::Fun(fun) => match &**fun {
            Fun::Named(_, clauses) => {
                out.funs
                    .entry(key(e.span))
                    .or_default()
                    .push_back((*n, named(fun)));
                *n += 1;
                for x in clause_roots(clauses) {
                    kernel_walk(x, n, out);
                }
                fail_clause(clauses, n);
            }
            Fun::Anonymous(clauses) => {
                for x in clause_roots(clauses) {
                    kernel_walk(x, n, out);
                }
                fail_clause(clauses, n);
            }
            _ => each_child(e, |x| kernel_walk(x, n, out)),
        },
        ExprKind::ListComprehension(head, quals) | ExprKind::BinaryComprehension(head, quals) => {
            let mut gens = Vec::new();
            kernel_quals(head, quals, n, &mut gens, out);
            let binary = matches!(e.kind, ExprKind::BinaryComprehension(..));
            out.comprehensions
                .entry(key(e.span))
                .or_default()
                .push_back((gens, binary));
        }
        _ => each_child(e, |x| kernel_walk(x, n, out)),
    }
}

/// The `function_clause` failure of a fun whose clauses may all fail to
/// match: v3_kernel invents a name for it (`new_fun_name("inlined")`, as
/// the failure's arguments are not those of the function it is in), after
/// the clauses' bodies. A fun with a clause that matches anything (only
/// distinct variables, no guard) has none: sys_core_fold drops it, as
/// it drops every clause after such a one.
fn fail_clause(clauses: &[Clause], n: &mut u32) {
    let catch_all = clauses.iter().any(|c| {
        let mut seen = std::collections::HashSet::new();
        let guard_true = c.guard.iter().all(|alt| {
            alt.iter()
                .all(|t| matches!(&t.kind, ExprKind::Atom(a) if a == "true"))
        });
        guard_true
            && c.patterns.iter().all(|p| match &p.kind {
                ExprKind::Var(v) => v.starts_with('_') && v.len() == 1 || seen.insert(v.as_str()),
                _ => false,
            })
    });
    if !catch_all {
        *n += 1;
    }
}

fn kernel_quals(
    head: &Expr,
    quals: &[Qualifier],
    n: &mut u32,
    gens: &mut Vec<u32>,
    out: &mut Numbers,
) {
    match quals.split_first() {
        None => kernel_walk(head, n, out),
        Some((Qualifier::Filter(f), rest)) => {
            kernel_walk(f, n, out);
            kernel_quals(head, rest, n, gens, out);
        }
        Some((Qualifier::Generator(_, list) | Qualifier::BinaryGenerator(_, list), rest)) => {
            gens.push(*n);
            *n += 1;
            kernel_quals(head, rest, n, gens, out);
            kernel_walk(list, n, out);
        }
    }
}

fn each_child(e: &Expr, mut f: impl FnMut(&Expr)) {
    let mut kids = Vec::new();
    children(e, true, &mut kids);
    for k in kids {
        f(k);
    }
}
