//! A loaded module: bytecode and the tables it refers to.

use super::{Instr, SelectTable, Src};
use crate::term::{Atom, Term};
use std::collections::HashMap;

/// One function of a module.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    pub name: Atom,
    pub arity: u32,
    /// Index of its `FuncInfo` instruction; the code follows it.
    pub entry: u32,
}

/// A remote call target, resolved at run time to the newest version.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Import {
    pub module: Atom,
    pub function: Atom,
    pub arity: u32,
}

/// A fun defined in this module (a `fun ... end`, or `fun f/1`).
#[derive(Clone, Debug)]
pub struct FunDef {
    /// The function that implements it (its arity is `arity + free`).
    pub function: u32,
    pub arity: u32,
    /// Number of captured variables, passed after the arguments.
    pub free: u32,
}

/// A compiled module. Immutable once built; shared behind an `Arc`.
#[derive(Debug)]
pub struct Module {
    pub name: Atom,
    /// The source file name, for stack traces.
    pub file: String,
    pub code: Vec<Instr>,
    /// Source line of each instruction (same length as `code`).
    pub lines: Vec<u32>,
    /// Literal terms referred to by `Src::lit`.
    pub literals: Vec<Term>,
    /// Variable-length operand lists (tuple elements, BIF arguments).
    pub operand_lists: Vec<Src>,
    pub select_tables: Vec<SelectTable>,
    pub functions: Vec<FunctionInfo>,
    /// Exported name/arity -> index into `functions`.
    pub exports: HashMap<(Atom, u32), u32>,
    /// All functions by name/arity (for `fun f/1` and local apply).
    pub local_functions: HashMap<(Atom, u32), u32>,
    pub imports: Vec<Import>,
    pub funs: Vec<FunDef>,
    /// Index of this module's first fun in the global fun table.
    pub fun_base: u32,
    /// X registers this module's code may touch (all below this index):
    /// the interpreter passes only these to the collector.
    pub max_x: u32,
}

impl Module {
    /// The function whose code contains instruction `ip`.
    pub fn function_at(&self, ip: u32) -> Option<&FunctionInfo> {
        // Lowered functions are declared after their source function but
        // compiled right behind it, so entries are not in index order.
        self.functions
            .iter()
            .filter(|f| f.entry <= ip)
            .max_by_key(|f| f.entry)
    }

    /// The source line of instruction `ip` (0 if unknown).
    pub fn line_at(&self, ip: u32) -> u32 {
        self.lines.get(ip as usize).copied().unwrap_or(0)
    }

    /// The entry instruction of exported `name/arity`.
    pub fn exported(&self, name: Atom, arity: u32) -> Option<u32> {
        self.exports
            .get(&(name, arity))
            .map(|&f| self.functions[f as usize].entry)
    }
}
