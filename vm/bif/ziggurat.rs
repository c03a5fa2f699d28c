//! The ziggurat tables behind `rand:normal`, computed from their definition.
//!
//! OTP 25 draws normal deviates with Marsaglia and Tsang's ziggurat: 256
//! layers of equal area `v` under the density `f(x) = exp(-x²/2)`, the base
//! layer ending at `r = 3.6541528853610087963519472518`, and a 51-bit draw
//! per attempt. Its tables `k` (the acceptance bound on the draw), `w` (the
//! scale from the draw to `x`) and `f` (the density at each layer's edge)
//! were computed in more than double precision and then rounded, so tables
//! computed in doubles differ from OTP's in their last bits, and so would
//! every `rand:normal` draw. Here they are computed with 192-bit fixed-point
//! arithmetic on big integers and rounded once to the nearest double, which
//! gives OTP's tables bit for bit (70 bits would already do).
//!
//! The setup, as in Marsaglia and Tsang's `zigset`, with `m = 2^51`:
//!
//! ```text
//! v     = r f(r) + ∫_r^∞ f(t) dt          the area of each layer
//! q     = v / f(r)                         the base layer's width
//! k[0]  = ⌊r / q · m⌋,  k[1] = 0
//! w[0]  = q / m,  w[255] = r / m,  f[0] = 1,  f[255] = f(r)
//! d₂₅₅ = r;  for i = 254 down to 1:
//!     dᵢ = sqrt(-2 ln(v / dᵢ₊₁ + f(dᵢ₊₁)))
//!     k[i+1] = ⌊dᵢ / dᵢ₊₁ · m⌋,  f[i] = f(dᵢ),  w[i] = dᵢ / m
//! ```
//!
//! The tables are built once, on the first normal draw (a few milliseconds).

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::sync::OnceLock;

pub const LAYERS: usize = 256;

/// The tables, indexed by layer (0..=255) as OTP's `normal_kiwi(Layer + 1)`
/// and `normal_fi(Layer + 1)` are.
pub struct Ziggurat {
    /// Acceptance bounds on the 51-bit draw.
    pub k: [i64; LAYERS],
    /// Scale from the draw to x.
    pub w: [f64; LAYERS],
    /// exp(-x²/2) at each layer's edge.
    pub f: [f64; LAYERS],
}

/// The tables, built on first use.
pub fn tables() -> &'static Ziggurat {
    static TABLES: OnceLock<Ziggurat> = OnceLock::new();
    TABLES.get_or_init(build)
}

/// The base layer's edge, as OTP writes it.
const R_DIGITS: &str = "36541528853610087963519472518";
const R_DECIMALS: u32 = 28;
/// log2 of the draw's range.
const DRAW_BITS: u32 = 51;

fn build() -> Ziggurat {
    let r = Fixed::from_decimal(R_DIGITS, R_DECIMALS);
    let density = |x: &Fixed| x.mul(x).half().neg().exp();
    let f_r = density(&r);
    let v = r.mul(&f_r).add(&upper_tail(&r));
    let q = v.div(&f_r);
    let mut z = Ziggurat {
        k: [0; LAYERS],
        w: [0.0; LAYERS],
        f: [0.0; LAYERS],
    };
    z.k[0] = r.div(&q).floor_scaled(DRAW_BITS);
    z.k[1] = 0;
    z.w[0] = q.to_f64_scaled(DRAW_BITS);
    z.w[LAYERS - 1] = r.to_f64_scaled(DRAW_BITS);
    z.f[0] = 1.0;
    z.f[LAYERS - 1] = f_r.to_f64_scaled(0);
    let mut outer = r;
    for i in (1..LAYERS - 1).rev() {
        let d = v
            .div(&outer)
            .add(&density(&outer))
            .ln()
            .twice()
            .neg()
            .sqrt();
        z.k[i + 1] = d.div(&outer).floor_scaled(DRAW_BITS);
        z.f[i] = density(&d).to_f64_scaled(0);
        z.w[i] = d.to_f64_scaled(DRAW_BITS);
        outer = d;
    }
    z
}

/// `∫_x^∞ exp(-t²/2) dt` for x > 0: `sqrt(π/2)` less the integral from 0,
/// which is `exp(-x²/2) · Σₙ x^(2n+1) / (1·3·5···(2n+1))` (all terms
/// positive, so no digits cancel in the sum).
fn upper_tail(x: &Fixed) -> Fixed {
    let x2 = x.mul(x);
    let mut term = x.clone();
    let mut sum = Fixed::zero();
    let mut odd = 1u32;
    while !term.is_zero() {
        sum = sum.add(&term);
        odd += 2;
        term = term.mul(&x2).div_int(odd);
    }
    let from_zero = x2.half().neg().exp().mul(&sum);
    pi().half().sqrt().sub(&from_zero)
}

/// π by Machin's formula, 16 atan(1/5) - 4 atan(1/239).
fn pi() -> Fixed {
    let atan_inv = |n: u32| {
        let n2 = n * n;
        let mut power = Fixed::one().div_int(n);
        let mut sum = Fixed::zero();
        let mut k = 0u32;
        while !power.is_zero() {
            let term = power.div_int(2 * k + 1);
            sum = if k.is_multiple_of(2) {
                sum.add(&term)
            } else {
                sum.sub(&term)
            };
            power = power.div_int(n2);
            k += 1;
        }
        sum
    };
    atan_inv(5).mul_int(16).sub(&atan_inv(239).mul_int(4))
}

/// Fraction bits of a [`Fixed`].
const FRACTION: u32 = 192;

/// A real number as an integer count of 2^-192: exact addition, and
/// products and quotients truncated to the last fraction bit.
#[derive(Clone)]
struct Fixed(BigInt);

impl Fixed {
    fn zero() -> Fixed {
        Fixed(BigInt::zero())
    }

    fn one() -> Fixed {
        Fixed(BigInt::one() << FRACTION)
    }

    /// `digits · 10^-decimals`.
    fn from_decimal(digits: &str, decimals: u32) -> Fixed {
        let n: BigInt = digits.parse().expect("decimal digits");
        Fixed((n << FRACTION) / BigInt::from(10u32).pow(decimals))
    }

    fn from_f64(x: f64) -> Fixed {
        let (mantissa, exponent) = split_f64(x);
        let shift = exponent + FRACTION as i32;
        let n = BigInt::from(mantissa);
        Fixed(if shift >= 0 {
            n << shift as u32
        } else {
            n >> (-shift) as u32
        })
    }

    fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    fn add(&self, other: &Fixed) -> Fixed {
        Fixed(&self.0 + &other.0)
    }

    fn sub(&self, other: &Fixed) -> Fixed {
        Fixed(&self.0 - &other.0)
    }

    fn neg(&self) -> Fixed {
        Fixed(-&self.0)
    }

    fn half(&self) -> Fixed {
        Fixed(&self.0 >> 1u32)
    }

    fn twice(&self) -> Fixed {
        Fixed(&self.0 << 1u32)
    }

    fn mul(&self, other: &Fixed) -> Fixed {
        Fixed((&self.0 * &other.0) >> FRACTION)
    }

    fn div(&self, other: &Fixed) -> Fixed {
        Fixed((&self.0 << FRACTION) / &other.0)
    }

    fn mul_int(&self, n: u32) -> Fixed {
        Fixed(&self.0 * n)
    }

    fn div_int(&self, n: u32) -> Fixed {
        Fixed(&self.0 / n)
    }

    /// The square root of a non-negative number.
    fn sqrt(&self) -> Fixed {
        Fixed((&self.0 << FRACTION).sqrt())
    }

    /// e^x: the Taylor series at x / 2^10, squared ten times (the squaring
    /// costs ten of the 192 bits).
    fn exp(&self) -> Fixed {
        const HALVINGS: u32 = 10;
        let y = Fixed(&self.0 >> HALVINGS);
        let mut sum = Fixed::one();
        let mut term = Fixed::one();
        let mut n = 1u32;
        while !term.is_zero() {
            term = term.mul(&y).div_int(n);
            sum = sum.add(&term);
            n += 1;
        }
        for _ in 0..HALVINGS {
            sum = sum.mul(&sum);
        }
        sum
    }

    /// ln x for x > 0: Newton's method on e^z = x from the double's
    /// logarithm, each step doubling the good bits (53, 106, 212).
    fn ln(&self) -> Fixed {
        let mut z = Fixed::from_f64(self.to_f64_scaled(0).ln());
        for _ in 0..3 {
            z = z.add(&self.mul(&z.neg().exp())).sub(&Fixed::one());
        }
        z
    }

    /// ⌊x · 2^bits⌋ for 0 <= x · 2^bits < 2^63.
    fn floor_scaled(&self, bits: u32) -> i64 {
        ((&self.0 << bits) >> FRACTION)
            .to_i64()
            .expect("a table bound fits 63 bits")
    }

    /// x / 2^bits rounded to the nearest double (ties to even), for a
    /// positive x whose result is a normal double.
    fn to_f64_scaled(&self, bits: u32) -> f64 {
        assert!(self.0.is_positive());
        let width = self.0.bits() as i32;
        let drop = width - 53;
        let mut mantissa: u64;
        if drop > 0 {
            let kept: BigInt = &self.0 >> drop as u32;
            mantissa = kept.to_u64().expect("53 bits");
            let rest: BigInt = &self.0 - (kept << drop as u32);
            let half = BigInt::one() << (drop - 1) as u32;
            if rest > half || (rest == half && mantissa & 1 == 1) {
                mantissa += 1;
            }
        } else {
            mantissa = (&self.0 << (-drop) as u32).to_u64().expect("53 bits");
        }
        // x = mantissa · 2^drop (rounded); a mantissa up to 2^53 is exact as
        // a double, and the scale is a power of two.
        mantissa as f64 * pow2(drop - FRACTION as i32 - bits as i32)
    }
}

/// 2^e for an exponent within the normal doubles.
fn pow2(e: i32) -> f64 {
    assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// A finite double as `mantissa · 2^exponent`.
fn split_f64(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let sign = if bits >> 63 == 1 { -1 } else { 1 };
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1 << 52) - 1)) as i64;
    if biased == 0 {
        (sign * fraction, -1074)
    } else {
        (sign * (fraction | 1 << 52), biased - 1075)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few entries of OTP 25's tables (rand.erl's `normal_kiwi` and
    /// `normal_fi`), as the bits of the doubles.
    #[test]
    fn tables_are_otps() {
        let z = tables();
        assert_eq!(z.k[0], 2104047571236786);
        assert_eq!(z.k[2], 1693657211986787);
        assert_eq!(z.k[255], 2125549880839716);
        assert_eq!(z.w[0].to_bits(), 4386305081848748418);
        assert_eq!(z.w[1].to_bits(), 4367239345875056456);
        assert_eq!(z.w[255].to_bits(), 4385727258590555443);
        assert_eq!(z.f[1].to_bits(), 4606976169260740736);
        assert_eq!(z.f[253].to_bits(), 4571305487591584261);
        assert_eq!(z.f[255].to_bits(), 4563454865903843085);
    }

    #[test]
    fn arithmetic() {
        let two = Fixed::from_f64(2.0);
        assert_eq!(two.sqrt().to_f64_scaled(0), std::f64::consts::SQRT_2);
        assert_eq!(pi().to_f64_scaled(0), std::f64::consts::PI);
        assert_eq!(Fixed::one().exp().to_f64_scaled(0), std::f64::consts::E);
        assert_eq!(two.ln().to_f64_scaled(0), std::f64::consts::LN_2);
        assert_eq!(Fixed::from_f64(0.75).to_f64_scaled(3), 0.09375);
    }
}
