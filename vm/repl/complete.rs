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
    /// Modules that can be named: loaded, built in, or beside the shell.
    pub modules: BTreeSet<String>,
}

/// The shell commands, with their arities (for completion and `help()`).
pub const COMMANDS: &[(&str, u32)] = &[
    ("b", 0),
    ("c", 1),
    ("f", 0),
    ("f", 1),
    ("flush", 0),
    ("halt", 0),
    ("help", 0),
    ("l", 1),
    ("m", 1),
    ("q", 0),
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
    if let Some(atom) = crate::term::Atom::existing(module)
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
    let mut out = BTreeSet::new();
    if let Some((module, prefix)) = word.split_once(':') {
        for (name, _) in module_functions(module) {
            if name.starts_with(prefix) {
                out.insert(format!("{module}:{name}("));
            }
        }
        return out.into_iter().collect();
    }
    if word.starts_with(|c: char| c.is_uppercase() || c == '_') {
        for v in &names.variables {
            if v.starts_with(word) {
                out.insert(v.clone());
            }
        }
        return out.into_iter().collect();
    }
    for m in &names.modules {
        if m.starts_with(word) {
            out.insert(format!("{m}:"));
        }
    }
    for b in crate::bif::TABLE {
        if b.auto_imported && b.name.starts_with(word) {
            out.insert(format!("{}(", b.name));
        }
    }
    for (name, _) in COMMANDS {
        if name.starts_with(word) {
            out.insert(format!("{name}("));
        }
    }
    for (name, _) in &names.functions {
        if name.starts_with(word) {
            out.insert(format!("{name}("));
        }
    }
    out.into_iter().collect()
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
        let pairs = candidates(&names, word)
            .into_iter()
            .map(|c| Pair {
                display: c.clone(),
                replacement: c,
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
