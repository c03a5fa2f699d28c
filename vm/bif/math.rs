//! The `math` module: the C library's floating-point functions, with
//! integers accepted and `badarith` wherever OTP's result would not be a
//! finite float (NaN, infinity, an integer too large for a float).

use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::Term;
use crate::term::arith;

unsafe extern "C" {
    // Not in Rust's std; the C library (linked by std) has them, and OTP
    // calls the same ones.
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
}

/// A numeric argument as a float: `badarg` for a non-number, `badarith`
/// for an integer beyond the float range (as OTP).
fn arg(ctx: &Context, t: Term) -> Result<f64, BifError> {
    if !ctx.process.heap.is_number(t) {
        return Err(BifError::Badarg);
    }
    arith::to_f64(&ctx.process.heap, t).map_err(|_| BifError::Badarith)
}

fn result(ctx: &mut Context, args: &mut [Term], f: f64) -> BifResult {
    if !f.is_finite() {
        return Err(BifError::Badarith);
    }
    ctx.ensure(heap::FLOAT_WORDS, args)?;
    Ok(ctx.heap().float(f))
}

macro_rules! unary {
    ($($name:ident => $f:expr;)*) => {$(
        pub fn $name(ctx: &mut Context, args: &mut [Term]) -> BifResult {
            let x = arg(ctx, args[0])?;
            let f: fn(f64) -> f64 = $f;
            result(ctx, args, f(x))
        }
    )*};
}

unary! {
    sqrt_1 => f64::sqrt;
    exp_1 => f64::exp;
    log_1 => f64::ln;
    log2_1 => f64::log2;
    log10_1 => f64::log10;
    sin_1 => f64::sin;
    cos_1 => f64::cos;
    tan_1 => f64::tan;
    asin_1 => f64::asin;
    acos_1 => f64::acos;
    atan_1 => f64::atan;
    sinh_1 => f64::sinh;
    cosh_1 => f64::cosh;
    tanh_1 => f64::tanh;
    asinh_1 => f64::asinh;
    acosh_1 => f64::acosh;
    atanh_1 => f64::atanh;
    ceil_1 => f64::ceil;
    floor_1 => f64::floor;
    // SAFETY: pure C functions of one double, defined for every input.
    erf_1 => |x| unsafe { erf(x) };
    erfc_1 => |x| unsafe { erfc(x) };
}

pub fn pow_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (x, y) = (arg(ctx, args[0])?, arg(ctx, args[1])?);
    result(ctx, args, x.powf(y))
}

pub fn atan2_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (y, x) = (arg(ctx, args[0])?, arg(ctx, args[1])?);
    result(ctx, args, y.atan2(x))
}

/// C's `fmod`: the remainder with the dividend's sign (Rust's `%`).
pub fn fmod_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (x, y) = (arg(ctx, args[0])?, arg(ctx, args[1])?);
    result(ctx, args, x % y)
}

pub fn pi_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    result(ctx, args, std::f64::consts::PI)
}
