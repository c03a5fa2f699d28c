//! Arithmetic with Erlang's semantics: small integers on a fast path,
//! bignums worked in place (`bignum`, with num-bigint for the rest),
//! floats that never become inf or NaN.
//!
//! The operations read their operands from a heap and return a `Number`,
//! a value not yet placed anywhere; the caller ensures `number.words()`
//! free words (a heap test, which may collect: the operands are no longer
//! needed by then) and places it with `Heap::number`. Results are
//! normalised: an integer that fits a small integer is always small.
//! `add_small` and friends are the inline fast paths for two small
//! integers, returning `None` when the slow path is needed.

use super::Term;
use super::bignum;
use crate::heap::{self, Heap, budget};
use crate::term::view::View;
use num_bigint::{BigInt, Sign};
use num_traits::{FromPrimitive, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;

/// Why an arithmetic operation failed; maps to the Erlang error atom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithError {
    /// `badarith`: a non-number, division by zero, a float overflow.
    Badarith,
    /// `system_limit`: a result too large to represent (`1 bsl (1 bsl 40)`).
    SystemLimit,
    /// `badarg`: a guard BIF (`abs`, `float`, `trunc`, `round`, `floor`,
    /// `ceil`) given a non-number; they are BIFs, not operators.
    Badarg,
}

/// A result value: an integer (small-or-not i64, or big) or a float.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    Int(i64),
    Big(Bignum),
    Float(f64),
}

/// An integer outside the i64 range: its sign and magnitude (`bignum`
/// limbs, no zero limb on top), as the heap stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bignum {
    pub negative: bool,
    pub limbs: Vec<u64>,
}

/// Integers larger than this many bits are a system limit.
const MAX_INTEGER_BITS: u64 = 1 << 32;

impl Number {
    /// Words `Heap::number` needs for this value.
    pub fn words(&self) -> usize {
        match self {
            Number::Int(i) => heap::words_for_int(*i),
            Number::Big(b) => 1 + b.limbs.len(),
            Number::Float(_) => heap::FLOAT_WORDS,
        }
    }

    /// The term, if it needs no heap (a small integer).
    pub fn as_immediate(&self) -> Option<Term> {
        match self {
            Number::Int(i) => Term::try_small(*i),
            _ => None,
        }
    }

    /// A num-bigint value, normalised.
    pub fn from_big(b: BigInt) -> Number {
        match b.to_i64() {
            Some(i) => Number::Int(i),
            None => {
                Number::from_magnitude(b.sign() == Sign::Minus, bignum::from_biguint(b.magnitude()))
            }
        }
    }

    /// Sign and magnitude, normalised (an i64 if it fits one).
    fn from_magnitude(negative: bool, limbs: Vec<u64>) -> Number {
        match limbs.as_slice() {
            [] => Number::Int(0),
            &[m] if !negative && m <= i64::MAX as u64 => Number::Int(m as i64),
            &[m] if negative && m <= 1 << 63 => Number::Int((m as i64).wrapping_neg()),
            _ => Number::Big(Bignum { negative, limbs }),
        }
    }

    fn float(f: f64) -> Result<Number, ArithError> {
        if f.is_finite() {
            Ok(Number::Float(f))
        } else {
            Err(ArithError::Badarith)
        }
    }
}

impl Heap {
    /// Places a number (with `number.words()` words ensured).
    pub fn number(&mut self, number: &Number) -> Term {
        match number {
            Number::Int(i) => self.int(*i),
            Number::Big(b) => self.bignum(b.negative, &b.limbs),
            Number::Float(f) => self.float(*f),
        }
    }
}

/// An operand, read from the heap: a bignum's magnitude is its heap words.
enum Operand<'a> {
    Int(i64),
    Big(bool, &'a [u64]),
    Float(f64),
}

fn operand(heap: &Heap, t: Term) -> Result<Operand<'_>, ArithError> {
    if let Some(i) = t.as_small() {
        return Ok(Operand::Int(i));
    }
    match heap.view(t) {
        View::Float(f) => Ok(Operand::Float(f)),
        View::Big(b) => Ok(Operand::Big(b.negative, b.magnitude())),
        _ => Err(ArithError::Badarith),
    }
}

/// An integer operand's sign and magnitude; a small one's limb goes in
/// `buf`. (A float has none: callers have dealt with floats.)
fn sign_magnitude<'c, 'a: 'c>(o: &Operand<'a>, buf: &'c mut [u64; 1]) -> (bool, &'c [u64]) {
    match *o {
        Operand::Int(i) => {
            buf[0] = i.unsigned_abs();
            (i < 0, if i == 0 { &[] } else { &buf[..] })
        }
        Operand::Big(negative, limbs) => (negative, limbs),
        Operand::Float(_) => (false, &[]),
    }
}

fn to_big(o: &Operand) -> BigInt {
    match *o {
        Operand::Int(i) => BigInt::from(i),
        Operand::Big(negative, limbs) => {
            let sign = if negative { Sign::Minus } else { Sign::Plus };
            BigInt::from_biguint(sign, bignum::to_biguint(limbs))
        }
        Operand::Float(f) => BigInt::from_f64(f).unwrap_or_default(),
    }
}

fn to_float(o: &Operand) -> Result<f64, ArithError> {
    let f = match o {
        Operand::Int(i) => *i as f64,
        Operand::Big(..) => to_big(o).to_f64().unwrap_or(f64::INFINITY),
        Operand::Float(f) => *f,
    };
    if f.is_finite() {
        Ok(f)
    } else {
        Err(ArithError::Badarith)
    }
}

fn is_float(o: &Operand) -> bool {
    matches!(o, Operand::Float(_))
}

/// The numeric value of `t` as a float (`float/1`): badarith for non-numbers
/// and integers too large for a float.
pub fn to_f64(heap: &Heap, t: Term) -> Result<f64, ArithError> {
    to_float(&operand(heap, t)?)
}

/// An integer operand for the integer-only operators.
fn integer(heap: &Heap, t: Term) -> Result<BigInt, ArithError> {
    match operand(heap, t)? {
        Operand::Float(_) => Err(ArithError::Badarith),
        o => Ok(to_big(&o)),
    }
}

macro_rules! small_fast_path {
    ($name:ident, $op:ident) => {
        /// Two small integers: the result if it is small, else `None`.
        #[inline]
        pub fn $name(a: Term, b: Term) -> Option<Term> {
            let r = a.as_small()?.$op(b.as_small()?)?;
            Term::try_small(r)
        }
    };
}
small_fast_path!(add_small, checked_add);
small_fast_path!(sub_small, checked_sub);
small_fast_path!(mul_small, checked_mul);

/// An integer as its sign (negative?) and magnitude.
type SignMag<'a> = (bool, &'a [u64]);

/// An integer result, or `system_limit` past `MAX_INTEGER_BITS`.
fn limited(negative: bool, limbs: Vec<u64>) -> Result<Number, ArithError> {
    if bignum::bits(&limbs) > MAX_INTEGER_BITS {
        return Err(ArithError::SystemLimit);
    }
    Ok(Number::from_magnitude(negative, limbs))
}

/// `a + b` on signs and magnitudes.
fn add_signed((an, a): SignMag, (bn, b): SignMag) -> Result<Number, ArithError> {
    if an == bn {
        return limited(an, bignum::add(a, b));
    }
    match bignum::cmp(a, b) {
        Ordering::Equal => Ok(Number::Int(0)),
        Ordering::Greater => limited(an, bignum::sub(a, b)),
        Ordering::Less => limited(bn, bignum::sub(b, a)),
    }
}

fn sub_signed(a: SignMag, (bn, b): SignMag) -> Result<Number, ArithError> {
    add_signed(a, (!bn, b))
}

fn mul_signed((an, a): SignMag, (bn, b): SignMag) -> Result<Number, ArithError> {
    if bignum::bits(a) + bignum::bits(b) > MAX_INTEGER_BITS {
        return Err(ArithError::SystemLimit);
    }
    limited(an != bn, bignum::mul(a, b))
}

/// Applies an operator that works on ints (i64 first, then bignums) and
/// on floats when either side is a float.
fn mixed(
    heap: &Heap,
    a: Term,
    b: Term,
    int: fn(i64, i64) -> Option<i64>,
    big: fn(SignMag, SignMag) -> Result<Number, ArithError>,
    float: fn(f64, f64) -> f64,
) -> Result<Number, ArithError> {
    let (x, y) = (operand(heap, a)?, operand(heap, b)?);
    if is_float(&x) || is_float(&y) {
        return Number::float(float(to_float(&x)?, to_float(&y)?));
    }
    if let (Operand::Int(i), Operand::Int(j)) = (&x, &y)
        && let Some(r) = int(*i, *j)
    {
        return Ok(Number::Int(r));
    }
    let (mut bx, mut by) = ([0u64], [0u64]);
    big(sign_magnitude(&x, &mut bx), sign_magnitude(&y, &mut by))
}

/// `A + B`
pub fn add(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    mixed(heap, a, b, i64::checked_add, add_signed, |x, y| x + y)
}

/// `A - B`
pub fn sub(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    mixed(heap, a, b, i64::checked_sub, sub_signed, |x, y| x - y)
}

/// `A * B`
pub fn mul(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    mixed(heap, a, b, i64::checked_mul, mul_signed, |x, y| x * y)
}

/// `A / B`: always a float; badarith on division by zero.
pub fn divide(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    let x = to_float(&operand(heap, a)?)?;
    let y = to_float(&operand(heap, b)?)?;
    if y == 0.0 {
        return Err(ArithError::Badarith);
    }
    Number::float(x / y)
}

/// Quotient (toward zero) and remainder (the sign of `A`) of two
/// integers, at least one of them big.
fn divide_integers(heap: &Heap, a: Term, b: Term) -> Result<(Number, Number), ArithError> {
    let (x, y) = (operand(heap, a)?, operand(heap, b)?);
    if is_float(&x) || is_float(&y) {
        return Err(ArithError::Badarith);
    }
    let (mut bx, mut by) = ([0u64], [0u64]);
    let (xn, xm) = sign_magnitude(&x, &mut bx);
    let (yn, ym) = sign_magnitude(&y, &mut by);
    if ym.is_empty() {
        return Err(ArithError::Badarith);
    }
    let (q, r) = bignum::divrem(xm, ym);
    Ok((
        Number::from_magnitude(xn != yn, q),
        Number::from_magnitude(xn, r),
    ))
}

/// `A div B`: integer division truncating toward zero.
pub fn int_div(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    if let (Some(i), Some(j)) = (a.as_small(), b.as_small()) {
        return i
            .checked_div(j)
            .map(Number::Int)
            .ok_or(ArithError::Badarith);
    }
    Ok(divide_integers(heap, a, b)?.0)
}

/// `A rem B`: the remainder takes the sign of `A`.
pub fn rem(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    if let (Some(i), Some(j)) = (a.as_small(), b.as_small()) {
        return i
            .checked_rem(j)
            .map(Number::Int)
            .ok_or(ArithError::Badarith);
    }
    Ok(divide_integers(heap, a, b)?.1)
}

fn bitwise(
    heap: &Heap,
    a: Term,
    b: Term,
    int: fn(i64, i64) -> i64,
    big: fn(&BigInt, &BigInt) -> BigInt,
) -> Result<Number, ArithError> {
    if let (Some(i), Some(j)) = (a.as_small(), b.as_small()) {
        return Ok(Number::Int(int(i, j)));
    }
    let (x, y) = (integer(heap, a)?, integer(heap, b)?);
    Ok(Number::from_big(big(&x, &y)))
}

/// `A band B` (two's complement, as Erlang).
pub fn band(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    bitwise(heap, a, b, |x, y| x & y, |x, y| x & y)
}

/// `A bor B`
pub fn bor(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    bitwise(heap, a, b, |x, y| x | y, |x, y| x | y)
}

/// `A bxor B`
pub fn bxor(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    bitwise(heap, a, b, |x, y| x ^ y, |x, y| x ^ y)
}

/// `bnot A`
pub fn bnot(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    if let Some(i) = a.as_small() {
        return Ok(Number::Int(!i));
    }
    Ok(Number::from_big(-integer(heap, a)? - 1))
}

/// `A bsl B`; a negative `B` shifts right.
pub fn bsl(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    shift(heap, a, b, false)
}

/// `A bsr B`: arithmetic shift (rounds toward negative infinity).
pub fn bsr(heap: &Heap, a: Term, b: Term) -> Result<Number, ArithError> {
    shift(heap, a, b, true)
}

fn shift(heap: &Heap, a: Term, b: Term, right: bool) -> Result<Number, ArithError> {
    let x = integer(heap, a)?;
    let amount = integer(heap, b)?;
    let amount = if right { -amount } else { amount };
    if x.is_zero() {
        return Ok(Number::Int(0));
    }
    if amount.is_negative() {
        // A right shift by more than the width leaves the sign.
        let by = (-amount).to_u64().unwrap_or(u64::MAX);
        if by >= x.bits() {
            return Ok(Number::Int(if x.is_negative() { -1 } else { 0 }));
        }
        return Ok(Number::from_big(x >> by));
    }
    let by = amount.to_u64().ok_or(ArithError::SystemLimit)?;
    let bits = x.bits().checked_add(by).ok_or(ArithError::SystemLimit)?;
    if bits > MAX_INTEGER_BITS {
        return Err(ArithError::SystemLimit);
    }
    // Check the budget before num-bigint allocates the result.
    let bytes = (bits / 8) as usize;
    budget::reserve(bytes).map_err(|_| ArithError::SystemLimit)?;
    budget::release(bytes);
    Ok(Number::from_big(x << by))
}

/// `-A`
pub fn neg(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    match operand(heap, a)? {
        Operand::Int(i) => Ok(i
            .checked_neg()
            .map_or_else(|| Number::from_big(-BigInt::from(i)), Number::Int)),
        Operand::Big(negative, limbs) => Ok(Number::from_magnitude(!negative, limbs.to_vec())),
        Operand::Float(f) => Ok(Number::Float(-f)),
    }
}

/// A BIF's operand: a non-number is `badarg`.
fn bif_operand(heap: &Heap, a: Term) -> Result<Operand<'_>, ArithError> {
    operand(heap, a).map_err(|_| ArithError::Badarg)
}

/// `abs(A)`
pub fn abs(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    match bif_operand(heap, a)? {
        Operand::Int(i) => Ok(i
            .checked_abs()
            .map_or_else(|| Number::from_big(BigInt::from(i).abs()), Number::Int)),
        Operand::Big(_, limbs) => Ok(Number::from_magnitude(false, limbs.to_vec())),
        // OTP 25 keeps the sign of -0.0 here.
        Operand::Float(f) => Ok(Number::Float(if f < 0.0 { -f } else { f })),
    }
}

/// `float(A)`
pub fn float(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    match bif_operand(heap, a)? {
        Operand::Float(f) => Ok(Number::Float(f)),
        o => Ok(Number::Float(to_float(&o).map_err(|_| ArithError::Badarg)?)),
    }
}

fn float_to_int(heap: &Heap, a: Term, f: fn(f64) -> f64) -> Result<Number, ArithError> {
    match bif_operand(heap, a)? {
        Operand::Float(x) => {
            let r = f(x);
            match BigInt::from_f64(r) {
                Some(b) => Ok(Number::from_big(b)),
                None => Err(ArithError::Badarith),
            }
        }
        Operand::Int(i) => Ok(Number::Int(i)),
        Operand::Big(negative, limbs) => Ok(Number::from_magnitude(negative, limbs.to_vec())),
    }
}

/// `trunc(A)`
pub fn trunc(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    float_to_int(heap, a, f64::trunc)
}

/// `round(A)`: halves away from zero.
pub fn round(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    float_to_int(heap, a, f64::round)
}

/// `floor(A)`
pub fn floor(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    float_to_int(heap, a, f64::floor)
}

/// `ceil(A)`
pub fn ceil(heap: &Heap, a: Term) -> Result<Number, ArithError> {
    float_to_int(heap, a, f64::ceil)
}
