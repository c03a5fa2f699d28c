//! Tab completion for the line editor: module names, `module:function`,
//! built-in functions, shell commands, functions defined at the prompt
//! and bound variables.
//!
//! The shell publishes what it knows (`Names`) after every input; the
//! completer only reads it, so completing never runs act code.

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// What can be completed, as the shell last saw it.
#[derive(Default, Clone)]
pub struct Names {
    pub variables: Vec<String>,
    /// Functions defined at the prompt: `name/arity`.
    pub functions: Vec<(String, u32)>,
    /// Modules that can be named: loaded, built in (in Rust or in act,
    /// `stdlib/`), or beside the shell.
    pub modules: BTreeSet<String>,
}

/// The shell commands, with their arities (for completion and `help()`).
pub const COMMANDS: &[(&str, u32)] = &[
    ("b", 0),
    ("c", 1),
    ("cd", 1),
    ("e", 1),
    ("f", 0),
    ("f", 1),
    ("flush", 0),
    ("h", 0),
    ("halt", 0),
    ("help", 0),
    ("i", 0),
    ("l", 1),
    ("ls", 0),
    ("ls", 1),
    ("m", 0),
    ("m", 1),
    ("pwd", 0),
    ("q", 0),
    ("regs", 0),
    ("rp", 1),
    ("v", 1),
];

/// The rustyline helper: completion only.
pub struct ShellHelper {
    pub names: Arc<Mutex<Names>>,
}

/// The word before the cursor: letters, digits, `_`, `@` and one `:`.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '@' | ':'))
        .last()
        .map_or(pos, |(i, _)| i)
}

/// Functions of `module` as `name/arity`: its exports if it is loaded or
/// loadable, and its built-ins.
pub fn module_functions(module: &str) -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    for b in crate::bif::TABLE {
        if b.module == module && !b.name.starts_with('$') {
            out.insert((b.name.to_string(), b.arity));
        }
    }
    // A library module or one beside the shell may not be loaded (nor
    // its name made an atom) yet: looking it up loads it.
    let loadable = crate::runtime::script::STDLIB
        .iter()
        .any(|(n, _)| *n == module)
        || (!module.contains(['/', '\\', '.'])
            && std::path::Path::new(&format!("{module}.act")).is_file());
    let atom = if loadable {
        Some(crate::term::Atom::intern(module))
    } else {
        crate::term::Atom::existing(module)
    };
    if let Some(atom) = atom
        && let Ok(Some(m)) = crate::runtime::lookup(atom)
    {
        for (name, arity) in m.exports.keys() {
            out.insert((name.name().to_string(), *arity));
        }
    }
    out
}

/// Completions of the word `word`: each candidate's full text.
pub fn candidates(names: &Names, word: &str) -> Vec<String> {
    let mut out: Vec<String> = offers(names, word).into_iter().map(|(_, r)| r).collect();
    out.dedup();
    out
}

/// Completions of `word` as (what the list shows, what replaces the
/// word): a function shows its arities (`reverse/1`, `reverse/2`, as erl
/// lists them) and completes to its name and an open parenthesis.
pub fn offers(names: &Names, word: &str) -> Vec<(String, String)> {
    let mut out = BTreeSet::new();
    if let Some((module, prefix)) = word.split_once(':') {
        for (name, arity) in module_functions(module) {
            if name.starts_with(prefix) {
                out.insert((format!("{name}/{arity}"), format!("{module}:{name}(")));
            }
        }
        return sorted_by_replacement(out);
    }
    if word.starts_with(|c: char| c.is_uppercase() || c == '_') {
        for v in &names.variables {
            if v.starts_with(word) {
                out.insert((v.clone(), v.clone()));
            }
        }
        return sorted_by_replacement(out);
    }
    for m in &names.modules {
        if m.starts_with(word) {
            out.insert((format!("{m}:"), format!("{m}:")));
        }
    }
    for b in crate::bif::TABLE {
        if b.auto_imported && b.name.starts_with(word) {
            out.insert((format!("{}/{}", b.name, b.arity), format!("{}(", b.name)));
        }
    }
    for (name, arity) in COMMANDS {
        if name.starts_with(word) {
            out.insert((format!("{name}/{arity}"), format!("{name}(")));
        }
    }
    for (name, arity) in &names.functions {
        if name.starts_with(word) {
            out.insert((format!("{name}/{arity}"), format!("{name}(")));
        }
    }
    sorted_by_replacement(out)
}

fn sorted_by_replacement(set: BTreeSet<(String, String)>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = set.into_iter().collect();
    v.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    v
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = word_start(line, pos);
        let word = &line[start..pos];
        if word.is_empty() {
            return Ok((pos, Vec::new()));
        }
        let names = self.names.lock().map(|n| n.clone()).unwrap_or_default();
        let pairs = offers(&names, word)
            .into_iter()
            .map(|(display, replacement)| Pair {
                display,
                replacement,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}
impl Highlighter for ShellHelper {}
impl Validator for ShellHelper {}
impl Helper for ShellHelper {}
