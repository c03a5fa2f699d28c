//! `code:all_loaded/0` and `code:is_loaded/1`: which modules are loaded
//! and where from, as `c:m/0` and the shell's `m()` list them.
//!
//! Modules act carries inside itself (its BIF modules and the embedded
//! library) are `preloaded`, as OTP says of the modules in its boot
//! image; a module compiled from a file gives the file's absolute name.

use super::{BifResult, Context};
use crate::term::{Atom, Term};
use std::collections::BTreeMap;

/// Name -> where it came from (`None`: preloaded).
fn modules() -> BTreeMap<Atom, Option<String>> {
    let mut out = BTreeMap::new();
    for b in crate::bif::TABLE {
        if !b.module.starts_with('$') {
            out.insert(Atom::intern(b.module), None);
        }
    }
    let stdlib = crate::runtime::script::STDLIB;
    for (name, file) in crate::runtime::loaded() {
        if name.name().starts_with('$') {
            continue;
        }
        let embedded = stdlib.iter().any(|(n, _)| *n == name.name())
            || name.name() == "act_shell"
            || name.name() == crate::repl::eval::SHELL_MODULE;
        let place = (!embedded).then(|| {
            std::fs::canonicalize(&file)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or(file)
        });
        out.insert(name, place);
    }
    out
}

/// Heap words `place_term` needs.
fn place_words(place: &Option<String>) -> usize {
    place.as_ref().map_or(0, |p| 2 * p.chars().count())
}

/// Call only with `place_words(place)` words ensured.
fn place_term(ctx: &mut Context, place: &Option<String>) -> Term {
    match place {
        None => Term::atom(Atom::intern("preloaded")),
        Some(path) => ctx.heap().string(path),
    }
}

/// `[{Module, Loaded}]`, Loaded a file name or `preloaded`.
pub fn all_loaded_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let all = modules();
    let words: usize = all.values().map(|p| place_words(p) + 3 + 2).sum();
    ctx.ensure(words, args)?;
    let mut list = Term::NIL;
    for (name, place) in all.iter().rev() {
        let loaded = place_term(ctx, place);
        let h = ctx.heap();
        let pair = h.tuple(&[Term::atom(*name), loaded]);
        list = h.cons(pair, list);
    }
    Ok(list)
}

/// `{file, Loaded}` or `false`.
pub fn is_loaded_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[0].as_atom().ok_or(super::BifError::Badarg)?;
    let all = modules();
    let Some(place) = all.get(&name) else {
        return Ok(Term::atom(Atom::FALSE));
    };
    ctx.ensure(place_words(place) + 3, args)?;
    let loaded = place_term(ctx, place);
    Ok(ctx
        .heap()
        .tuple(&[Term::atom(Atom::intern("file")), loaded]))
}
