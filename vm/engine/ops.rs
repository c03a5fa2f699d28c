//! The meaning of the instructions both engines share: arithmetic with
//! its float and bignum paths, comparisons, type tests. The interpreter
//! and the native tier call these for everything past their inline fast
//! paths, so the two cannot disagree on a result.
//!
//! Invariant: a function here that may collect (`arith_number`,
//! `arith_slow`, `place_number`) reads its operands before the
//! collection and treats X registers below `regs_used` as the roots, so
//! a caller must hold no other term across the call.

use crate::code::{ArithOp, CallTarget, Module, ModuleRef, TypeTest, X_REGISTERS};
use crate::heap::Heap;
use crate::process::Process;
use crate::term::arith::{self, ArithError, Number};
use crate::term::order;
use crate::term::{Atom, Term};
use std::cmp::Ordering;
use std::sync::atomic::Ordering as MemoryOrder;

/// X registers to treat as roots: the most any loaded module uses (a
/// register one module never touches may still hold another's value).
#[inline]
pub fn regs_used(_module: &Module) -> usize {
    crate::runtime::max_x().clamp(4, X_REGISTERS)
}

/// The other arithmetic operators on two small integers, when the result
/// is a small integer too; `None` sends the operation to the slow path.
#[inline]
pub fn arith_small(op: ArithOp, a: Term, b: Term) -> Option<Term> {
    let (i, j) = (a.as_small()?, b.as_small()?);
    let r = match op {
        ArithOp::IntDiv => i.checked_div(j)?,
        ArithOp::Rem => i.checked_rem(j)?,
        ArithOp::Band => i & j,
        ArithOp::Bor => i | j,
        ArithOp::Bxor => i ^ j,
        ArithOp::Bsr if (0..64).contains(&j) => i >> j,
        ArithOp::Bsl if (0..62).contains(&j) => {
            let r = i << j;
            if r >> j != i {
                return None;
            }
            r
        }
        _ => return None,
    };
    Term::try_small(r)
}

#[inline]
pub fn compare(p: &Process, a: Term, b: Term) -> Ordering {
    if a.is_small() && b.is_small() {
        return (a.0 as i64).cmp(&(b.0 as i64));
    }
    if let Some((x, y)) = float_operands(&p.heap, a, b, false)
        && let Some(o) = x.partial_cmp(&y)
    {
        return o;
    }
    order::compare(&p.heap, a, b)
}

/// `a =:= b`. An immediate is exactly equal only to the same word:
/// integers are normalised (a value that fits a small integer is never a
/// bignum) and floats are boxed, so only two boxed terms need the walk.
#[inline]
pub fn exact_eq(p: &Process, a: Term, b: Term) -> bool {
    if a == b {
        return true;
    }
    if a.is_immediate() || b.is_immediate() {
        return false;
    }
    order::exact_eq(&p.heap, a, b)
}

/// `a == b`. As `exact_eq`, except that a small integer may equal a
/// float (`1 == 1.0`): an immediate that is not a small integer (an atom,
/// `[]`, a pid) equals only itself, and two small integers compare as words.
#[inline]
pub fn eq(p: &Process, a: Term, b: Term) -> bool {
    if a == b {
        return true;
    }
    let only_itself = |t: Term| t.is_immediate() && !t.is_small();
    if only_itself(a) || only_itself(b) || (a.is_small() && b.is_small()) {
        return false;
    }
    order::eq(&p.heap, a, b)
}

pub fn type_test(p: &Process, test: TypeTest, v: Term) -> bool {
    let h = &p.heap;
    match test {
        TypeTest::Integer => h.is_integer(v),
        TypeTest::Float => h.is_float(v),
        TypeTest::Number => h.is_number(v),
        TypeTest::Atom => v.is_atom(),
        TypeTest::Boolean => v.as_bool().is_some(),
        TypeTest::List => v.is_cons() || v.is_nil(),
        TypeTest::Tuple => h.as_tuple(v).is_some(),
        TypeTest::Binary => h.is_binary(v),
        TypeTest::Map => h.is_map(v),
        TypeTest::Function => h.is_function(v),
        TypeTest::Pid => h.is_pid(v),
        TypeTest::Reference => h.is_reference(v),
    }
}

/// The float operators of `+ - * /`, with the general operation each
/// falls back to.
#[derive(Clone, Copy)]
pub struct FloatOp {
    float: fn(f64, f64) -> f64,
    general: fn(&Heap, Term, Term) -> Result<Number, ArithError>,
    /// `/` is a float operation even on two integers.
    on_integers: bool,
}

#[allow(non_upper_case_globals)]
impl FloatOp {
    pub const add: FloatOp = FloatOp {
        float: |a, b| a + b,
        general: arith::add,
        on_integers: false,
    };
    pub const sub: FloatOp = FloatOp {
        float: |a, b| a - b,
        general: arith::sub,
        on_integers: false,
    };
    pub const mul: FloatOp = FloatOp {
        float: |a, b| a * b,
        general: arith::mul,
        on_integers: false,
    };
    pub const divide: FloatOp = FloatOp {
        float: |a, b| a / b,
        general: arith::divide,
        on_integers: true,
    };
}

/// The operands of a float operation: at least one boxed float and the
/// other a float or a small integer (both small integers too for `/`).
/// Integers beyond 2^53 are left to the general path, which converts them
/// exactly as Erlang does.
#[inline(always)]
pub fn float_operands(heap: &Heap, a: Term, b: Term, on_integers: bool) -> Option<(f64, f64)> {
    const EXACT: i64 = 1 << 53;
    let small = |t: Term| {
        t.as_small()
            .filter(|i| (-EXACT..=EXACT).contains(i))
            .map(|i| i as f64)
    };
    match (heap.float_value(a), heap.float_value(b)) {
        (Some(x), Some(y)) => Some((x, y)),
        (Some(x), None) => Some((x, small(b)?)),
        (None, Some(y)) => Some((small(a)?, y)),
        (None, None) if on_integers => Some((small(a)?, small(b)?)),
        (None, None) => None,
    }
}

/// The second path of `+ - * /`, taken when the operands are not two
/// small integers: a float result is computed here and bumped onto the
/// heap when it has room (the compiler's heap tests come right before the
/// constructors they pay for, so no reservation is in the way); bignums,
/// a full heap, a result that is not finite and errors go on to the
/// general path.
#[inline(never)]
pub fn arith_number(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &Module,
    op: FloatOp,
    a: Term,
    b: Term,
) -> Result<Term, Term> {
    if let Some((fa, fb)) = float_operands(&p.heap, a, b, op.on_integers) {
        let r = (op.float)(fa, fb);
        if r.is_finite()
            && let Some(t) = p.heap.try_float(r)
        {
            return Ok(t);
        }
    }
    arith_slow(p, x, module, op.general, a, b)
}

/// The slow path of an arithmetic instruction: bignums, floats, errors.
#[cold]
#[inline(never)]
pub fn arith_slow(
    p: &mut Process,
    x: &mut [Term; X_REGISTERS],
    module: &Module,
    op: fn(&Heap, Term, Term) -> Result<Number, ArithError>,
    a: Term,
    b: Term,
) -> Result<Term, Term> {
    let r = op(&p.heap, a, b);
    place_number(p, x, module, r)
}

/// Puts an arithmetic result on the heap (a safepoint: every X register
/// in use is a root); `Err` is the error reason.
pub fn place_number(
    p: &mut Process,
    x: &mut [Term],
    module: &Module,
    r: Result<Number, ArithError>,
) -> Result<Term, Term> {
    match r {
        Ok(n) => {
            if let Some(t) = n.as_immediate() {
                return Ok(t);
            }
            let used = regs_used(module);
            if p.ensure_heap(n.words(), &mut x[..used], &mut []).is_err() {
                return Err(Term::atom(Atom::SYSTEM_LIMIT));
            }
            Ok(p.heap.number(&n))
        }
        Err(ArithError::Badarith) => Err(Term::atom(Atom::BADARITH)),
        Err(ArithError::SystemLimit) => Err(Term::atom(Atom::SYSTEM_LIMIT)),
        Err(ArithError::Badarg) => Err(Term::atom(Atom::BADARG)),
    }
}

/// The general operation of an arithmetic operator other than `+ - *`.
pub fn general(op: ArithOp) -> fn(&Heap, Term, Term) -> Result<Number, ArithError> {
    match op {
        ArithOp::Div => arith::divide,
        ArithOp::IntDiv => arith::int_div,
        ArithOp::Rem => arith::rem,
        ArithOp::Band => arith::band,
        ArithOp::Bor => arith::bor,
        ArithOp::Bxor => arith::bxor,
        ArithOp::Bsl => arith::bsl,
        ArithOp::Bsr => arith::bsr,
    }
}

/// The newest version of exported `m:f/arity`, loading `m` on first use.
pub fn resolve_export(m: Atom, f: Atom, arity: u32) -> Option<&'static CallTarget> {
    let target = crate::runtime::lookup(m).ok()??;
    let function = *target.exports.get(&(f, arity))?;
    Some(ModuleRef::pin(&target).call_target(function))
}

/// What `call_ext` of `import` in `caller` calls. An import names an
/// exported function, never a BIF (the compiler emits BIF calls
/// directly). The caller's inline cache remembers the target, so a call
/// takes the registry's lock and hashes the names only on its first run
/// and after the target module is reloaded. `Err` names the function
/// that is not there (`undef`).
#[inline]
pub fn import_target(
    caller: &Module,
    import: u32,
    arity: u32,
) -> Result<&'static CallTarget, (Atom, Atom)> {
    let cell = &caller.import_cache[import as usize];
    let cached = cell.load(MemoryOrder::Acquire);
    // SAFETY: a non-null cell holds a pointer made below from a
    // `&'static CallTarget`: it lives in the `call_targets` of a pinned
    // module version, which is never freed and, once made, never changed.
    match unsafe { cached.as_ref() } {
        Some(t) if !t.module.superseded.load(MemoryOrder::Acquire) => Ok(t),
        _ => {
            let i = &caller.imports[import as usize];
            let (m, f) = (i.module, i.function);
            let t = resolve_export(m, f, arity).ok_or((m, f))?;
            cell.store(
                t as *const CallTarget as *mut CallTarget,
                MemoryOrder::Release,
            );
            Ok(t)
        }
    }
}

/// `is_function(V, Arity)`: whether `v` is a fun taking `arity` arguments.
pub fn is_function2(p: &Process, v: Term, arity: Term) -> bool {
    arity
        .as_small()
        .is_some_and(|a| a >= 0 && crate::bif::erlang::fun_arity(&p.heap, v) == Some(a as u32))
}
