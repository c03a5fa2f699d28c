//! The `zlib` module's one-shot functions: `compress`/`uncompress` (zlib
//! streams), `zip`/`unzip` (bare deflate) and `gzip`/`gunzip`, each on
//! iodata and returning a binary. The streams are `term::zlib`'s, so the
//! bytes are those OTP's zlib writes. Input that is not iodata is
//! `badarg`; a stream that does not inflate is `data_error`, as in OTP.

use super::erlang::make_binary;
use super::{BifError, BifResult, Context};
use crate::process::Class;
use crate::term::zlib::{self, Wrapper};
use crate::term::{Atom, Term};

fn input(ctx: &Context, t: Term) -> Result<Vec<u8>, BifError> {
    crate::term::iolist::iolist_bytes(&ctx.process.heap, t).ok_or(BifError::Badarg)
}

fn deflate(ctx: &mut Context, args: &mut [Term], wrapper: Wrapper) -> BifResult {
    let data = input(ctx, args[0])?;
    let bytes = zlib::compress(&data, zlib::DEFAULT_LEVEL, wrapper);
    make_binary(ctx, bytes, args)
}

fn inflate(ctx: &mut Context, args: &mut [Term], wrapper: Wrapper) -> BifResult {
    let data = input(ctx, args[0])?;
    let Some((bytes, _)) = zlib::decompress(&data, wrapper) else {
        return Err(BifError::Raise(
            Class::Error,
            Term::atom(Atom::intern("data_error")),
        ));
    };
    make_binary(ctx, bytes, args)
}

pub fn compress_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    deflate(ctx, args, Wrapper::Zlib)
}

pub fn uncompress_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    inflate(ctx, args, Wrapper::Zlib)
}

pub fn zip_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    deflate(ctx, args, Wrapper::Raw)
}

pub fn unzip_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    inflate(ctx, args, Wrapper::Raw)
}

pub fn gzip_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    deflate(ctx, args, Wrapper::Gzip)
}

pub fn gunzip_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    inflate(ctx, args, Wrapper::Gzip)
}
