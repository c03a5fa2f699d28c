//! Constant arithmetic, as Erlang evaluates it at compile time: the value
//! of `-1`, `1 + 1` or `2.5 * 2` in a pattern, where the checker accepts
//! arithmetic on number literals.
//!
//! The rules are Erlang's: integers are exact; `+ - *` of two integers is
//! an integer and otherwise a float; `/` is always a float; `div`, `rem`,
//! `band`, `bor`, `bxor`, `bsl`, `bsr` and `bnot` take integers only.
//! Whatever would raise at run time (`badarith`: division by zero, a float
//! operand of `div`, an infinite float) folds to `None`, and so do shifts
//! by more than `MAX_FOLDED_SHIFT` bits, which the program may still do
//! at run time but a compiler should not do eagerly.

use super::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use super::lexer::Number;
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};

/// Shifts beyond this many bits are left to run time.
pub const MAX_FOLDED_SHIFT: u64 = 1 << 16;

/// The value of a constant numeric expression, or `None` if `expr` is not
/// one (a variable, a call, ...) or would raise.
pub fn number(expr: &Expr) -> Option<Number> {
    match &expr.kind {
        ExprKind::Integer(i) => Some(Number::Integer(i.clone())),
        ExprKind::Float(f) => Some(Number::Float(*f)),
        ExprKind::UnaryOp(op, a) => unary(*op, number(a)?),
        ExprKind::BinaryOp(op, a, b) => binary(*op, number(a)?, number(b)?),
        _ => None,
    }
}

pub fn unary(op: UnaryOp, a: Number) -> Option<Number> {
    match (op, a) {
        (UnaryOp::Plus, a) => Some(a),
        (UnaryOp::Minus, Number::Integer(i)) => Some(Number::Integer(-i)),
        (UnaryOp::Minus, Number::Float(f)) => Some(Number::Float(-f)),
        (UnaryOp::Bnot, Number::Integer(i)) => Some(Number::Integer(-i - 1)),
        _ => None,
    }
}

fn to_float(n: &Number) -> Option<f64> {
    match n {
        Number::Integer(i) => i.to_f64().filter(|f| f.is_finite()),
        Number::Float(f) => Some(*f),
    }
}

fn finite(f: f64) -> Option<Number> {
    f.is_finite().then_some(Number::Float(f))
}

pub fn binary(op: BinaryOp, a: Number, b: Number) -> Option<Number> {
    use BinaryOp::*;
    match op {
        Add | Sub | Mul => match (&a, &b) {
            (Number::Integer(x), Number::Integer(y)) => Some(Number::Integer(match op {
                Add => x + y,
                Sub => x - y,
                _ => x * y,
            })),
            _ => {
                let (x, y) = (to_float(&a)?, to_float(&b)?);
                finite(match op {
                    Add => x + y,
                    Sub => x - y,
                    _ => x * y,
                })
            }
        },
        Div => {
            let (x, y) = (to_float(&a)?, to_float(&b)?);
            if y == 0.0 { None } else { finite(x / y) }
        }
        IntDiv | Rem | Band | Bor | Bxor | Bsl | Bsr => {
            let (Number::Integer(x), Number::Integer(y)) = (a, b) else {
                return None;
            };
            integer_op(op, x, y).map(Number::Integer)
        }
        _ => None,
    }
}

fn integer_op(op: BinaryOp, x: BigInt, y: BigInt) -> Option<BigInt> {
    use BinaryOp::*;
    match op {
        // num-bigint's `/` and `%` truncate toward zero, as `div` and
        // `rem` do: `-7 div 2` is -3 and `-7 rem 2` is -1.
        IntDiv if !y.is_zero() => Some(x / y),
        Rem if !y.is_zero() => Some(x % y),
        Band => Some(x & y),
        Bor => Some(x | y),
        Bxor => Some(x ^ y),
        Bsl | Bsr => {
            // `bsl` by a negative amount shifts right, and `bsr` left.
            let left = if op == Bsl { y } else { -y };
            let amount = left
                .magnitude()
                .to_u64()
                .filter(|&n| n <= MAX_FOLDED_SHIFT)?;
            Some(if left.sign() == num_bigint::Sign::Minus {
                x >> amount
            } else {
                x << amount
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_exprs;

    fn fold(source: &str) -> Option<Number> {
        let exprs = parse_exprs(source).expect("parses");
        number(&exprs[0])
    }

    fn int(i: i64) -> Option<Number> {
        Some(Number::Integer(BigInt::from(i)))
    }

    #[test]
    fn integer_arithmetic_is_exact_and_truncates_like_erlang() {
        assert_eq!(fold("-1."), int(-1));
        assert_eq!(fold("1 + 2 * 3."), int(7));
        assert_eq!(fold("-7 div 2."), int(-3));
        assert_eq!(fold("-7 rem 2."), int(-1));
        assert_eq!(fold("bnot 5."), int(-6));
        assert_eq!(
            fold("1 bsl 100."),
            Some(Number::Integer(BigInt::from(1) << 100))
        );
        assert_eq!(fold("-8 bsr 1."), int(-4));
        assert_eq!(fold("8 bsl -2."), int(2));
        assert_eq!(fold("6 band 3 bor 8 bxor 1."), int(11));
    }

    #[test]
    fn mixed_and_divided_numbers_are_floats() {
        assert_eq!(fold("1 + 1.5."), Some(Number::Float(2.5)));
        assert_eq!(fold("4 / 2."), Some(Number::Float(2.0)));
        assert_eq!(fold("-2.5."), Some(Number::Float(-2.5)));
    }

    #[test]
    fn what_would_raise_or_is_not_constant_does_not_fold() {
        assert_eq!(fold("1 / 0."), None);
        assert_eq!(fold("1 div 0."), None);
        assert_eq!(fold("1.0 div 1."), None);
        assert_eq!(fold("bnot 1.0."), None);
        assert_eq!(fold("X + 1."), None);
        assert_eq!(fold("1 bsl 100000000000."), None);
        assert_eq!(fold("1.0e300 * 1.0e300."), None);
    }
}
