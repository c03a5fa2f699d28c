//! Helpers of stdlib/rand.act that need a table or the OS: the ziggurat
//! layers of `rand:normal` (the tables, OTP's bit for bit, are built in
//! ziggurat.rs), the step of the default generator, and
//! `crypto:strong_rand_bytes/1` from the OS's random source.

use super::erlang::{make_binary, small};
use super::ziggurat::{LAYERS, tables};
use super::{BifError, BifResult, Context};
use crate::heap;
use crate::term::Term;

fn layer(t: Term) -> Result<usize, BifError> {
    usize::try_from(small(t)?)
        .ok()
        .filter(|&i| i < LAYERS)
        .ok_or(BifError::Badarg)
}

/// `rand:'$normal_kw'(Layer)`: `{K, W}` of layer 0..255.
pub fn normal_kw_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = layer(args[0])?;
    let z = tables();
    ctx.ensure(3 + heap::FLOAT_WORDS, args)?;
    let w = ctx.heap().float(z.w[i]);
    Ok(ctx.heap().tuple(&[Term::small(z.k[i]), w]))
}

/// `rand:'$normal_f'(Layer)`: the density at the edge of layer 0..255.
pub fn normal_f_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let f = tables().f[layer(args[0])?];
    ctx.ensure(heap::FLOAT_WORDS, args)?;
    Ok(ctx.heap().float(f))
}

/// `crypto:strong_rand_bytes(N)`: N bytes from the OS (`getrandom`).
pub fn strong_rand_bytes_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = usize::try_from(small(args[0])?).map_err(|_| BifError::Badarg)?;
    if n > 1 << 30 {
        return Err(BifError::Badarg);
    }
    let mut bytes = vec![0u8; n];
    os_random(&mut bytes).map_err(|_| BifError::Badarg)?;
    make_binary(ctx, bytes, args)
}

/// Fills `buf` from the OS's random source.
fn os_random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe `rest`, writable memory.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        filled += n as usize;
    }
    Ok(())
}

const M58: i64 = (1 << 58) - 1;

/// `X` shifted left by `n` within 58 bits.
fn shl58(x: i64, n: u32) -> i64 {
    (x & ((1 << (58 - n)) - 1)) << n
}

/// `rand:'$exsss_next'(S1, S0)`: one step of Xorshift116** on the swapped
/// pair `[S1 | S0]`, as stdlib/rand.act's `exsss_next` computes it:
/// `{V, [NewS0 | NewS1]}`, or `false` when a word is not a small integer
/// (the act code then does the step itself).
pub fn exsss_next_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (Some(s1), Some(s0)) = (args[0].as_small(), args[1].as_small()) else {
        return Ok(Term::atom(crate::term::Atom::FALSE));
    };
    let t = s0 & M58;
    let b = (s1 & M58) ^ shl58(s1, 24);
    let n = b ^ t ^ (b >> 11) ^ (t >> 41);
    let a = t + shl58(t, 2);
    let r = shl58(a, 7) | ((a >> 51) & 127);
    let v = (r + shl58(r, 3)) & M58;
    ctx.ensure(5, args)?;
    let heap = ctx.heap();
    let state = heap.cons(Term::small(t), Term::small(n));
    Ok(heap.tuple(&[Term::small(v), state]))
}
