//! Erlang's term order and its two equalities, `==` and `=:=`.
//!
//! number < atom < reference < fun < port < pid < tuple < map < nil < list < binary
//!
//! Integers and floats compare by value (`1 == 1.0`); in exact mode
//! (`=:=`, and map keys) an integer never equals a float, and in map-key
//! order every integer sorts before every float, as OTP orders map keys.
//! Tuples compare by size, then element by element; maps by size, then
//! their keys (in key order), then their values; lists element by element;
//! binaries byte by byte. The walk keeps its pending pairs on an explicit
//! stack, so deep or long terms never recurse on the Rust stack.

use super::Term;
use super::view::{BigView, View};
use crate::heap::Heap;
use num_bigint::BigInt;
use num_traits::FromPrimitive;
use std::cmp::Ordering;

/// Erlang term order (`<`, `==`; `1` and `1.0` are equal).
pub fn compare(heap: &Heap, a: Term, b: Term) -> Ordering {
    compare_in(heap, a, heap, b, false)
}

/// Term order between terms on two heaps (an ets key against a table
/// object); `exact` orders as `=:=` does.
pub fn compare_across(ha: &Heap, a: Term, hb: &Heap, b: Term, exact: bool) -> Ordering {
    compare_in(ha, a, hb, b, exact)
}

/// `A == B`
pub fn eq(heap: &Heap, a: Term, b: Term) -> bool {
    a == b || compare_in(heap, a, heap, b, false) == Ordering::Equal
}

/// `A =:= B`
pub fn exact_eq(heap: &Heap, a: Term, b: Term) -> bool {
    a == b
        || exact_eq_shallow(heap, a, b, 0)
            .unwrap_or_else(|| compare_in(heap, a, heap, b, true) == Ordering::Equal)
}

/// `exact_eq` without the general walk, for what patterns and guards
/// compare most: immediates, and lists and tuples of them (a constant
/// `{reset}` against a message). `None` for anything else (floats,
/// bignums, binaries, maps, funs, terms nested past a few levels), which
/// the caller compares in full. Two different words of which one is an
/// immediate are never `=:=`: every immediate has one representation and
/// no boxed term equals one (bignums lie outside the small range).
fn exact_eq_shallow(heap: &Heap, mut a: Term, mut b: Term, depth: u32) -> Option<bool> {
    if depth > 8 {
        return None;
    }
    loop {
        if a == b {
            return Some(true);
        }
        if a.is_immediate() || b.is_immediate() || a.is_cons() != b.is_cons() {
            return Some(false);
        }
        if !a.is_cons() {
            break;
        }
        let ((ha, ta), (hb, tb)) = (heap.cons_parts(a), heap.cons_parts(b));
        if !exact_eq_shallow(heap, ha, hb, depth + 1)? {
            return Some(false);
        }
        (a, b) = (ta, tb);
    }
    match (heap.as_tuple(a), heap.as_tuple(b)) {
        (Some(x), Some(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            for (&e, &f) in x.iter().zip(y) {
                if !exact_eq_shallow(heap, e, f, depth + 1)? {
                    return Some(false);
                }
            }
            Some(true)
        }
        (Some(_), None) | (None, Some(_)) => Some(false),
        (None, None) => None,
    }
}

/// The order of map keys (integers before floats), also usable to sort
/// for `=:=`-based uniqueness.
#[inline]
pub fn compare_exact(heap: &Heap, a: Term, b: Term) -> Ordering {
    // Small integers, and one word twice (the same term on one heap),
    // without a call.
    if let (Some(x), Some(y)) = (a.as_small(), b.as_small()) {
        return x.cmp(&y);
    }
    if a == b {
        return Ordering::Equal;
    }
    // Atoms (map keys, records' tags) order by name.
    if let (Some(x), Some(y)) = (a.as_atom(), b.as_atom()) {
        return x.name().cmp(y.name());
    }
    compare_in(heap, a, heap, b, true)
}

/// What orders pids of several nodes: number first (as BEAM does), then
/// node name and creation.
fn pid_key(view: &View) -> (u64, &'static str, u32) {
    match *view {
        View::ExtPid { node, id } => {
            let entry = super::node::entry(node);
            (id, entry.name.name(), entry.creation)
        }
        View::Pid(id) => {
            let this = super::node::this_node();
            (id, this.name.name(), this.creation)
        }
        _ => (0, "", 0),
    }
}

/// What orders references of several nodes: node name, creation, then
/// the words from the most significant (a local reference counts as one
/// of this node).
fn ref_key(view: &View) -> (&'static str, u32, [u32; 5]) {
    match *view {
        View::ExtRef { node, words, .. } => {
            let entry = super::node::entry(node);
            let mut w = words;
            w.reverse();
            (entry.name.name(), entry.creation, w)
        }
        View::Ref(id) => {
            let this = super::node::this_node();
            (
                this.name.name(),
                this.creation,
                [0, 0, 0, (id >> 32) as u32, id as u32],
            )
        }
        _ => ("", 0, [0; 5]),
    }
}

fn rank(view: &View) -> u8 {
    match view {
        View::Small(_) | View::Big(_) | View::Float(_) => 0,
        View::Atom(_) => 1,
        View::Ref(_) | View::ExtRef { .. } => 2,
        View::Fun { .. } | View::ExternalFun { .. } => 3,
        View::Pid(_) | View::ExtPid { .. } => 5,
        View::Tuple(_) => 6,
        View::Map { .. } => 7,
        View::Nil => 8,
        View::Cons(..) => 9,
        View::Binary(_) | View::Bitstring(_) => 10,
        View::NotAValue => 11,
    }
}

fn bits_of_view<'a>(v: &View<'a>) -> super::bits::Bits<'a> {
    match *v {
        View::Binary(b) => super::bits::Bits::whole(b),
        View::Bitstring(b) => b,
        _ => super::bits::Bits::whole(&[]),
    }
}

/// `a` lives on `ha` and `b` on `hb` (the same heap for the common case);
/// children keep their sides, so a pair never mixes the two.
fn compare_in(ha: &Heap, a: Term, hb: &Heap, b: Term, exact: bool) -> Ordering {
    // Two small integers (sorting numbers, searching integer keys).
    if let (Some(x), Some(y)) = (a.as_small(), b.as_small()) {
        return x.cmp(&y);
    }
    // Two tuples of small integers (the `{X, Y}` keys of a grid map,
    // searched on every `maps:get/2`): element by element, no walk.
    if let (Some(p), Some(q)) = (ha.as_tuple(a), hb.as_tuple(b))
        && let Ok(order) = compare_small_prefix(p, q)
    {
        return order;
    }
    // Bit-identical words are the same term only on the same heap (or
    // when immediate or literal).
    let same = std::ptr::eq(ha, hb);
    // Pending pairs, each with its own exactness (map keys are exact).
    // The first few live inline, so comparing small tuples (the `{X, Y}`
    // keys of a grid map, searched on every `maps:get/2`) and walking
    // lists never allocates; only wide or deeply nested terms spill.
    let mut stack = Pending::new();
    let mut next = Some((a, b, exact));
    while let Some((a, b, exact)) = next {
        if a.is_cons() && b.is_cons() && (a != b || !same) {
            // Two lists (strings, mostly): while both heads are small
            // integers, compare them here, not a pair at a time.
            let (mut a, mut b) = (a, b);
            loop {
                let ((h1, t1), (h2, t2)) = (ha.cons_parts(a), hb.cons_parts(b));
                match (h1.as_small(), h2.as_small()) {
                    (Some(x), Some(y)) if x != y => return x.cmp(&y),
                    (Some(_), Some(_)) => {}
                    _ => {
                        stack.push((t1, t2, exact));
                        stack.push((h1, h2, exact));
                        break;
                    }
                }
                if t1.is_cons() && t2.is_cons() && (t1 != t2 || !same) {
                    (a, b) = (t1, t2);
                } else {
                    stack.push((t1, t2, exact));
                    break;
                }
            }
        } else if a != b || !(same || a.is_immediate() || a.is_literal()) {
            let order = compare_one(ha, a, hb, b, exact, &mut stack);
            if order != Ordering::Equal {
                return order;
            }
        }
        next = stack.pop();
    }
    Ordering::Equal
}

/// Orders two tuples' element lists by size, then by their leading small
/// integers: `Err(i)` when that does not decide it, `i` being the first
/// element that is not a small integer on both sides (the pairs from `i`
/// on are still to compare).
fn compare_small_prefix(p: &[Term], q: &[Term]) -> Result<Ordering, usize> {
    if p.len() != q.len() {
        return Ok(p.len().cmp(&q.len()));
    }
    for (i, (s, t)) in p.iter().zip(q).enumerate() {
        match (s.as_small(), t.as_small()) {
            (Some(x), Some(y)) if x != y => return Ok(x.cmp(&y)),
            (Some(_), Some(_)) => {}
            _ => return Err(i),
        }
    }
    Ok(Ordering::Equal)
}

/// How many pending pairs a comparison holds before it allocates.
const INLINE_PENDING: usize = 16;

/// The pairs a comparison has still to visit, last pushed first out: an
/// inline array, then a vector for whatever does not fit.
struct Pending {
    inline: [(Term, Term, bool); INLINE_PENDING],
    len: usize,
    spill: Vec<(Term, Term, bool)>,
}

impl Pending {
    fn new() -> Pending {
        Pending {
            inline: [(Term::NIL, Term::NIL, false); INLINE_PENDING],
            len: 0,
            spill: Vec::new(),
        }
    }

    fn push(&mut self, pair: (Term, Term, bool)) {
        if self.len < INLINE_PENDING && self.spill.is_empty() {
            self.inline[self.len] = pair;
            self.len += 1;
        } else {
            self.spill.push(pair);
        }
    }

    fn pop(&mut self) -> Option<(Term, Term, bool)> {
        if let Some(pair) = self.spill.pop() {
            return Some(pair);
        }
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.inline[self.len])
    }

    fn extend(&mut self, pairs: impl Iterator<Item = (Term, Term, bool)>) {
        for pair in pairs {
            self.push(pair);
        }
    }
}

/// Compares the outer layer of `a` and `b`; pushes their children (in
/// reverse, so the first pair is compared first) when the outer layers
/// are equal.
fn compare_one(
    ha: &Heap,
    a: Term,
    hb: &Heap,
    b: Term,
    exact: bool,
    stack: &mut Pending,
) -> Ordering {
    let (x, y) = (ha.view(a), hb.view(b));
    let (rx, ry) = (rank(&x), rank(&y));
    if rx != ry {
        return rx.cmp(&ry);
    }
    match (x, y) {
        (View::Atom(p), View::Atom(q)) => p.name().cmp(q.name()),
        (View::Ref(p), View::Ref(q)) => p.cmp(&q),
        (x @ (View::Ref(_) | View::ExtRef { .. }), y @ (View::Ref(_) | View::ExtRef { .. })) => {
            ref_key(&x).cmp(&ref_key(&y))
        }
        (View::Pid(p), View::Pid(q)) => p.cmp(&q),
        // Pids of different nodes order by node name, then creation, then
        // number (a local pid counts as one of this node).
        (x @ (View::Pid(_) | View::ExtPid { .. }), y @ (View::Pid(_) | View::ExtPid { .. })) => {
            pid_key(&x).cmp(&pid_key(&y))
        }
        (View::Binary(p), View::Binary(q)) => p.cmp(q),
        (
            x @ (View::Binary(_) | View::Bitstring(_)),
            y @ (View::Binary(_) | View::Bitstring(_)),
        ) => bits_of_view(&x).compare(&bits_of_view(&y)),
        (View::Tuple(p), View::Tuple(q)) => {
            // Leading small integers (grid coordinates, counters) compare
            // here; the rest waits on the stack.
            let start = match compare_small_prefix(p, q) {
                Ok(order) => return order,
                Err(start) => start,
            };
            stack.extend(
                p[start..]
                    .iter()
                    .zip(&q[start..])
                    .rev()
                    .map(|(&s, &t)| (s, t, exact)),
            );
            Ordering::Equal
        }
        (View::Cons(h1, t1), View::Cons(h2, t2)) => {
            stack.push((t1, t2, exact));
            stack.push((h1, h2, exact));
            Ordering::Equal
        }
        (
            View::Map {
                keys: k1,
                values: v1,
            },
            View::Map {
                keys: k2,
                values: v2,
            },
        ) => {
            let order = k1.len().cmp(&k2.len());
            if order == Ordering::Equal {
                stack.extend(v1.iter().zip(v2.iter()).rev().map(|(&s, &t)| (s, t, exact)));
                stack.extend(k1.iter().zip(k2.iter()).rev().map(|(&s, &t)| (s, t, true)));
            }
            order
        }
        (
            View::Fun {
                index: i,
                captured: c,
            },
            View::Fun {
                index: j,
                captured: d,
            },
        ) => {
            let order = i.cmp(&j).then(c.len().cmp(&d.len()));
            if order == Ordering::Equal {
                stack.extend(c.iter().zip(d).rev().map(|(&s, &t)| (s, t, exact)));
            }
            order
        }
        (View::ExternalFun { .. }, View::Fun { .. }) => Ordering::Less,
        (View::Fun { .. }, View::ExternalFun { .. }) => Ordering::Greater,
        (
            View::ExternalFun {
                module: m1,
                function: f1,
                arity: a1,
            },
            View::ExternalFun {
                module: m2,
                function: f2,
                arity: a2,
            },
        ) => m1
            .name()
            .cmp(m2.name())
            .then(f1.name().cmp(f2.name()))
            .then(a1.cmp(&a2)),
        (x, y) => compare_numbers(&x, &y, exact),
    }
}

/// Orders two numbers (or two non-values, which are equal).
fn compare_numbers(x: &View, y: &View, exact: bool) -> Ordering {
    match (x, y) {
        (View::Small(i), View::Small(j)) => i.cmp(j),
        (View::Float(f), View::Float(g)) => f.partial_cmp(g).unwrap_or(Ordering::Equal),
        (View::Big(p), View::Big(q)) => compare_bigs(p, q),
        // A bignum lies outside the small range: its sign decides.
        (View::Small(_), View::Big(q)) => {
            if q.negative {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (View::Big(p), View::Small(_)) => {
            if p.negative {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (View::Float(_), _) if exact => Ordering::Greater,
        (_, View::Float(_)) if exact => Ordering::Less,
        (View::Float(f), int) => compare_int_float(int, *f).reverse(),
        (int, View::Float(f)) => compare_int_float(int, *f),
        _ => Ordering::Equal,
    }
}

fn compare_bigs(p: &BigView, q: &BigView) -> Ordering {
    let magnitude = p.limbs.len().cmp(&q.limbs.len()).then_with(|| {
        p.limbs
            .iter()
            .rev()
            .map(|l| l.0)
            .cmp(q.limbs.iter().rev().map(|l| l.0))
    });
    match (p.negative, q.negative) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    }
}

/// An integer against a float, exactly (no rounding of large integers).
fn compare_int_float(int: &View, f: f64) -> Ordering {
    if let View::Small(i) = int
        && i.unsigned_abs() < (1 << 53)
    {
        return (*i as f64).partial_cmp(&f).unwrap_or(Ordering::Equal);
    }
    let i = match int {
        View::Small(i) => BigInt::from(*i),
        View::Big(b) => b.to_bigint(),
        _ => return Ordering::Equal,
    };
    let whole = f.trunc();
    let Some(w) = BigInt::from_f64(whole) else {
        return Ordering::Equal;
    };
    i.cmp(&w)
        .then_with(|| 0.0f64.partial_cmp(&(f - whole)).unwrap_or(Ordering::Equal))
}
