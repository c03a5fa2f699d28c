//! Bignum magnitudes worked in place: `+ - * div rem` on little-endian
//! u64 limbs, the way a bignum's words lie on the heap.
//!
//! `arith` reads a bignum operand as the slice of its heap words and
//! hands it here; the result is one new vector. Going through num-bigint
//! instead meant copying every operand into num-bigint's own digits and
//! the result out again, which took half of pidigits' time (a spigot
//! whose every step is a bignum times a small integer, a sum, or a
//! quotient of two bignums that fits a word). Products of two large
//! operands still go to num-bigint, whose Karatsuba and Toom-3 beat the
//! schoolbook product here.
//!
//! Invariant: a magnitude has no zero limb at its top, so zero is the
//! empty slice and two equal values have equal slices. Every function
//! returns its result so trimmed.

use num_bigint::BigUint;
use std::cmp::Ordering;

/// From this many limbs in both factors on, products go to num-bigint.
const LARGE_PRODUCT: usize = 48;

/// Drops zero limbs from the top.
fn trim(mut v: Vec<u64>) -> Vec<u64> {
    while v.last() == Some(&0) {
        v.pop();
    }
    v
}

/// The magnitude of a machine integer.
fn of_u64(u: u64) -> Vec<u64> {
    if u == 0 { Vec::new() } else { vec![u] }
}

/// Bits in magnitude `a` (0 for zero).
pub fn bits(a: &[u64]) -> u64 {
    match a.last() {
        None => 0,
        Some(top) => (a.len() as u64 - 1) * 64 + (64 - top.leading_zeros() as u64),
    }
}

/// Orders two magnitudes.
pub fn cmp(a: &[u64], b: &[u64]) -> Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

/// `a + b`
pub fn add(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0u64;
    for (i, &x) in long.iter().enumerate() {
        let y = if i < short.len() { short[i] } else { 0 };
        let s = x as u128 + y as u128 + carry as u128;
        out.push(s as u64);
        carry = (s >> 64) as u64;
    }
    if carry != 0 {
        out.push(carry);
    }
    out
}

/// `a - b`, for `a >= b`.
pub fn sub(a: &[u64], b: &[u64]) -> Vec<u64> {
    debug_assert!(cmp(a, b) != Ordering::Less);
    let mut out = Vec::with_capacity(a.len());
    let mut borrow = false;
    for (i, &x) in a.iter().enumerate() {
        let y = if i < b.len() { b[i] } else { 0 };
        let (d, b1) = x.overflowing_sub(y);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out.push(d);
        borrow = b1 || b2;
    }
    trim(out)
}

/// `a * b`
pub fn mul(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    match short {
        [] => return Vec::new(),
        &[m] => return mul_limb(long, m),
        _ if short.len() >= LARGE_PRODUCT => {
            return from_biguint(&(to_biguint(a) * to_biguint(b)));
        }
        _ => {}
    }
    let mut out = vec![0u64; long.len() + short.len()];
    for (i, &x) in short.iter().enumerate() {
        let mut carry = 0u64;
        for (o, &y) in out[i..i + long.len()].iter_mut().zip(long) {
            let t = x as u128 * y as u128 + *o as u128 + carry as u128;
            *o = t as u64;
            carry = (t >> 64) as u64;
        }
        out[i + long.len()] = carry;
    }
    trim(out)
}

/// `a * m` for one limb `m` (not zero): a bignum times a small integer,
/// the commonest product.
fn mul_limb(a: &[u64], m: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry = 0u64;
    for &x in a {
        let t = x as u128 * m as u128 + carry as u128;
        out.push(t as u64);
        carry = (t >> 64) as u64;
    }
    if carry != 0 {
        out.push(carry);
    }
    out
}

/// Quotient and remainder of `a / b`, for `b` not zero.
pub fn divrem(a: &[u64], b: &[u64]) -> (Vec<u64>, Vec<u64>) {
    assert!(!b.is_empty(), "division by a zero magnitude");
    if cmp(a, b) == Ordering::Less {
        return (Vec::new(), a.to_vec());
    }
    if b.len() == 1 {
        let d = b[0] as u128;
        let mut q = vec![0u64; a.len()];
        let mut r = 0u128;
        for i in (0..a.len()).rev() {
            let cur = (r << 64) | a[i] as u128;
            q[i] = (cur / d) as u64;
            r = cur % d;
        }
        return (trim(q), of_u64(r as u64));
    }
    long_division(a, b)
}

/// Knuth's algorithm D (TAOCP 4.3.1): `b` has two limbs or more and is
/// at most `a`. Both are shifted so that `b`'s top limb has its top bit
/// set; then each quotient limb, estimated from the top two limbs of the
/// running remainder and of `b`, is off by at most one after the test
/// against `b`'s second limb, and an add-back fixes the rare excess.
fn long_division(a: &[u64], b: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let shift = b[b.len() - 1].leading_zeros();
    let v = shl_bits(b, shift, 0);
    let mut u = shl_bits(a, shift, 1);
    let n = v.len();
    let m = a.len() - n;
    let (top, second) = (v[n - 1] as u128, v[n - 2] as u128);
    let mut q = vec![0u64; m + 1];
    for j in (0..=m).rev() {
        let num = (u[j + n] as u128) << 64 | u[j + n - 1] as u128;
        let mut qhat = num / top;
        let mut rhat = num % top;
        while qhat > u64::MAX as u128 || qhat * second > (rhat << 64 | u[j + n - 2] as u128) {
            qhat -= 1;
            rhat += top;
            if rhat > u64::MAX as u128 {
                break;
            }
        }
        // u[j..=j+n] -= qhat * v
        let mut carry = 0u128;
        let mut borrow = 0i128;
        for i in 0..n {
            let p = qhat * v[i] as u128 + carry;
            carry = p >> 64;
            let t = u[i + j] as i128 - borrow - (p as u64) as i128;
            u[i + j] = t as u64;
            borrow = (t < 0) as i128;
        }
        let t = u[j + n] as i128 - borrow - carry as i128;
        u[j + n] = t as u64;
        if t < 0 {
            // qhat was one too many: add v back once.
            qhat -= 1;
            let mut c = 0u128;
            for i in 0..n {
                let s = u[i + j] as u128 + v[i] as u128 + c;
                u[i + j] = s as u64;
                c = s >> 64;
            }
            u[j + n] = u[j + n].wrapping_add(c as u64);
        }
        q[j] = qhat as u64;
    }
    u.truncate(n);
    (trim(q), trim(shr_bits(&u, shift)))
}

/// `a` shifted left by `shift` (< 64) bits, with `extra` more limbs on
/// top (zero unless the shift carries into them).
fn shl_bits(a: &[u64], shift: u32, extra: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len() + extra);
    if shift == 0 {
        out.extend_from_slice(a);
        out.resize(a.len() + extra, 0);
        return out;
    }
    let mut carry = 0u64;
    for &x in a {
        out.push(x << shift | carry);
        carry = x >> (64 - shift);
    }
    if extra > 0 {
        out.push(carry);
        out.resize(a.len() + extra, 0);
    }
    out
}

/// `a` shifted right by `shift` (< 64) bits.
fn shr_bits(a: &[u64], shift: u32) -> Vec<u64> {
    if shift == 0 {
        return a.to_vec();
    }
    (0..a.len())
        .map(|i| {
            let high = if i + 1 < a.len() {
                a[i + 1] << (64 - shift)
            } else {
                0
            };
            a[i] >> shift | high
        })
        .collect()
}

/// The magnitude as num-bigint's, for the operations left to it.
pub fn to_biguint(a: &[u64]) -> BigUint {
    let mut digits = Vec::with_capacity(a.len() * 2);
    for &limb in a {
        digits.push(limb as u32);
        digits.push((limb >> 32) as u32);
    }
    BigUint::new(digits)
}

/// num-bigint's magnitude as limbs.
pub fn from_biguint(b: &BigUint) -> Vec<u64> {
    trim(b.to_u64_digits())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so failures repeat.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// A magnitude of up to `max` limbs, often with limbs at the
        /// edges (all ones, zero, one) where carries and estimates slip.
        fn magnitude(&mut self, max: usize) -> Vec<u64> {
            let len = (self.next() % (max as u64 + 1)) as usize;
            let v = (0..len)
                .map(|_| match self.next() % 5 {
                    0 => u64::MAX,
                    1 => 0,
                    2 => 1,
                    3 => 1 << 63,
                    _ => self.next(),
                })
                .collect();
            trim(v)
        }
    }

    #[test]
    fn agrees_with_num_bigint_on_random_operands() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let a = rng.magnitude(8);
            let b = rng.magnitude(8);
            let (x, y) = (to_biguint(&a), to_biguint(&b));
            assert_eq!(to_biguint(&add(&a, &b)), &x + &y);
            assert_eq!(to_biguint(&mul(&a, &b)), &x * &y);
            assert_eq!(cmp(&a, &b), x.cmp(&y));
            assert_eq!(bits(&a), x.bits());
            if x >= y {
                assert_eq!(to_biguint(&sub(&a, &b)), &x - &y);
            }
            if !b.is_empty() {
                let (q, r) = divrem(&a, &b);
                assert_eq!(to_biguint(&q), &x / &y, "{a:x?} / {b:x?}");
                assert_eq!(to_biguint(&r), &x % &y, "{a:x?} rem {b:x?}");
                assert_eq!(q, trim(q.clone()));
                assert_eq!(r, trim(r.clone()));
            }
        }
    }

    #[test]
    fn long_division_needs_its_add_back_step() {
        // Knuth's example of a quotient digit estimated one too high even
        // after the second-limb test, scaled to 64-bit limbs.
        let a = [0, 0, 1 << 63, 0x7fff_ffff_ffff_ffff];
        let b = [1, 0, 1 << 63];
        let (q, r) = divrem(&a, &b);
        let (x, y) = (to_biguint(&a), to_biguint(&b));
        assert_eq!(to_biguint(&q), &x / &y);
        assert_eq!(to_biguint(&r), &x % &y);
    }

    #[test]
    fn large_products_go_through_num_bigint_unchanged() {
        let mut rng = Rng(42);
        let a: Vec<u64> = (0..LARGE_PRODUCT + 3).map(|_| rng.next()).collect();
        let b: Vec<u64> = (0..LARGE_PRODUCT).map(|_| rng.next()).collect();
        assert_eq!(to_biguint(&mul(&a, &b)), to_biguint(&a) * to_biguint(&b));
    }
}
