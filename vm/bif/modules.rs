//! What a program may ask about modules: `erlang:function_exported/3`,
//! `erlang:module_loaded/1`, and the raw answers behind stdlib/code.act
//! (`code:which/1`, `ensure_loaded/1`, `is_loaded/1`, `all_loaded/0`).
//!
//! A module counts as loaded as in an escript on OTP 25: the modules OTP
//! has loaded when a script starts (those act provides), `erlang`, every
//! module act has loaded since (the script, stdlib modules on first use,
//! modules beside the script), and BIF-only modules that `ensure_loaded`
//! named.

use super::erlang::make_string;
use super::{BifError, BifResult, Context};
use crate::runtime;
use crate::term::{Atom, Term};
use std::collections::HashSet;
use std::sync::Mutex;

/// Modules an escript on OTP 25 finds loaded at its start (the ones act
/// provides: the rest cannot be named usefully here).
const LOADED_AT_START: &[&str] = &[
    "binary",
    "code",
    "digraph",
    "digraph_utils",
    "erlang",
    "escript",
    "ets",
    "file",
    "filename",
    "gb_sets",
    "gb_trees",
    "gen",
    "gen_event",
    "gen_server",
    "init",
    "io",
    "io_lib",
    "lists",
    "logger",
    "maps",
    "orddict",
    "ordsets",
    "os",
    "proc_lib",
    "proplists",
    "queue",
    "rand",
    "rpc",
    "sets",
    "string",
    "supervisor",
    "unicode",
];

/// BIF-only modules loaded by `code:ensure_loaded` (they have no entry in
/// the runtime's registry).
static ENSURED: Mutex<Option<HashSet<Atom>>> = Mutex::new(None);

/// A module of BIFs (not one of act's internal `$` ones).
fn bif_module(name: &str) -> bool {
    !name.starts_with('$') && super::TABLE.iter().any(|b| b.module == name)
}

/// Whether act has a module of this name without looking beside the script.
fn builtin(name: &str) -> bool {
    bif_module(name) || runtime::script::is_stdlib(name) || name == "code"
}

fn ensured(m: Atom) -> bool {
    let set = ENSURED.lock().unwrap_or_else(|e| e.into_inner());
    set.as_ref().is_some_and(|s| s.contains(&m))
}

fn is_loaded(m: Atom) -> bool {
    let name = m.name();
    runtime::loaded(m).is_some() || (LOADED_AT_START.contains(&name) && builtin(name)) || ensured(m)
}

/// Loads `m` if act can: `Ok(true)` loaded, `Ok(false)` no such module,
/// `Err` a module beside the script that does not compile.
fn load(m: Atom) -> Result<bool, ()> {
    if is_loaded(m) {
        return Ok(true);
    }
    match runtime::lookup(m) {
        Ok(Some(_)) => Ok(true),
        Err(_) => Err(()),
        Ok(None) if bif_module(m.name()) => {
            let mut set = ENSURED.lock().unwrap_or_else(|e| e.into_inner());
            set.get_or_insert_with(HashSet::new).insert(m);
            Ok(true)
        }
        Ok(None) => Ok(false),
    }
}

fn atom_arg(t: Term) -> Result<Atom, BifError> {
    t.as_atom().ok_or(BifError::Badarg)
}

/// `erlang:module_loaded(Module)`.
pub fn module_loaded_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    Ok(Term::boolean(is_loaded(atom_arg(args[0])?)))
}

/// `erlang:function_exported(Module, Function, Arity)`: false for a module
/// not loaded, as in OTP (a program calls `code:ensure_loaded` first).
pub fn function_exported_3(_: &mut Context, args: &mut [Term]) -> BifResult {
    let m = atom_arg(args[0])?;
    let f = atom_arg(args[1])?;
    let arity = args[2].as_small().ok_or(BifError::Badarg)?;
    if !(0..=255).contains(&arity) || !is_loaded(m) {
        return Ok(Term::boolean(false));
    }
    let arity = arity as u32;
    if f.name() == "module_info" && arity <= 1 {
        return Ok(Term::boolean(true));
    }
    let bif = !m.name().starts_with('$') && super::lookup(m.name(), f.name(), arity).is_some();
    let apply = m.name() == "erlang" && f.name() == "apply" && (arity == 2 || arity == 3);
    let code = match runtime::loaded(m) {
        Some(module) => Some(module),
        None if runtime::script::is_stdlib(m.name()) => runtime::lookup(m).ok().flatten(),
        None => None,
    };
    // escript exports a script's main/1 whatever its -export says.
    let in_code = code.is_some_and(|c| {
        c.exported(f, arity).is_some()
            || (f.name() == "main"
                && arity == 1
                && c.local_functions.contains_key(&(f, arity))
                && c.file.ends_with(".act")
                && !builtin(m.name()))
    });
    Ok(Term::boolean(bif || apply || in_code))
}

/// `'$code':load(Module)`: `{module, M}`, or `{error, nofile | badfile}`.
pub fn load_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let m = atom_arg(args[0])?;
    let (tag, value) = match load(m) {
        Ok(true) => ("module", Term::atom(m)),
        Ok(false) => ("error", Term::atom(Atom::intern("nofile"))),
        Err(()) => ("error", Term::atom(Atom::intern("badfile"))),
    };
    ctx.ensure(3, args)?;
    Ok(ctx.heap().tuple(&[Term::atom(Atom::intern(tag)), value]))
}

/// `'$code':where(Module)`: where a loaded module came from: `preloaded`
/// for act's own modules (they are built into it), the source file for
/// the script and modules beside it, `[]` for a module not loaded.
pub fn where_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let m = atom_arg(args[0])?;
    if !is_loaded(m) {
        return Ok(Term::NIL);
    }
    match runtime::loaded(m) {
        Some(module) if !builtin(m.name()) && module.file.ends_with(".act") => {
            let file = absolute(&module.file);
            make_string(ctx, &file, args)
        }
        _ => Ok(Term::atom(Atom::intern("preloaded"))),
    }
}

/// `file` as an absolute path, as `code:which/1` names a loaded module's
/// file; a relative name is taken from the current directory.
fn absolute(file: &str) -> String {
    let path = std::path::Path::new(file);
    if path.is_absolute() {
        return file.to_string();
    }
    match std::fs::canonicalize(path) {
        Ok(full) => full.to_string_lossy().into_owned(),
        Err(_) => file.to_string(),
    }
}

/// `'$code':find(Module)`: the file `code:which/1` names for a module not
/// loaded: `preloaded` for act's own, `non_existing` when there is none.
pub fn find_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let m = atom_arg(args[0])?;
    Ok(Term::atom(Atom::intern(if builtin(m.name()) {
        "preloaded"
    } else {
        "non_existing"
    })))
}

/// `'$code':loaded()`: the names of the loaded modules.
pub fn loaded_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // The shell's own evaluator module is act's plumbing, not a user's.
    let mut names: Vec<Atom> = runtime::loaded_names()
        .into_iter()
        .filter(|n| n.name() != "act_shell")
        .collect();
    names.extend(
        LOADED_AT_START
            .iter()
            .filter(|n| builtin(n))
            .map(|n| Atom::intern(n)),
    );
    if let Some(set) = ENSURED.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        names.extend(set.iter().copied());
    }
    names.sort_by(|a, b| a.name().cmp(b.name()));
    names.dedup();
    ctx.ensure(2 * names.len(), args)?;
    let items: Vec<Term> = names.into_iter().map(Term::atom).collect();
    Ok(ctx.heap().list(&items))
}
