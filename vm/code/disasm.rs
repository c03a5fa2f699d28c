//! The disassembler: a readable listing of a module's bytecode.

use super::{
    ArithOp, CmpOp, Dst, Instr, Label, Module, SRC_LIT, SRC_X, SRC_Y, Src, Tail, TypeTest,
};
use crate::term::Term;
use std::fmt::Write;

/// An operand as the verifier sees it.
pub enum Operands {
    Src(Src),
    Dst(Dst),
    Label(Label),
}

/// How an operand prints in a listing.
pub trait Operand {
    fn show(&self, module: &Module) -> String;
    /// Label operands are rewritten by the assembler; others ignore this.
    fn map_label(&mut self, _f: &mut dyn FnMut(Label) -> Label) {}
    /// Registers and labels show themselves to the verifier.
    fn visit(&self, _f: &mut dyn FnMut(Operands)) {}
}

impl Operand for Src {
    fn visit(&self, f: &mut dyn FnMut(Operands)) {
        f(Operands::Src(*self))
    }
    fn show(&self, module: &Module) -> String {
        match self.kind() {
            SRC_X => format!("x{}", self.index()),
            SRC_Y => format!("y{}", self.index()),
            SRC_LIT => match module.literals.get(self.index()) {
                Some(&t) => show_term(t),
                None => format!("lit{}?", self.index()),
            },
            _ => "?".to_string(),
        }
    }
}

impl Operand for Dst {
    fn visit(&self, f: &mut dyn FnMut(Operands)) {
        f(Operands::Dst(*self))
    }
    fn show(&self, _: &Module) -> String {
        if self.is_y() {
            format!("y{}", self.index())
        } else {
            format!("x{}", self.index())
        }
    }
}

impl Operand for Label {
    fn show(&self, _: &Module) -> String {
        if *self == Label::RAISE {
            "raise".to_string()
        } else {
            format!("@{}", self.0)
        }
    }
    fn map_label(&mut self, f: &mut dyn FnMut(Label) -> Label) {
        *self = f(*self);
    }
    fn visit(&self, f: &mut dyn FnMut(Operands)) {
        f(Operands::Label(*self))
    }
}

macro_rules! plain_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            fn show(&self, _: &Module) -> String {
                self.to_string()
            }
        }
    )*};
}
plain_operand!(u8, u16, u32);

macro_rules! debug_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            fn show(&self, _: &Module) -> String {
                format!("{:?}", self).to_lowercase()
            }
        }
    )*};
}
debug_operand!(ArithOp, CmpOp, TypeTest, Tail);

impl Operand for crate::term::Atom {
    fn show(&self, _: &Module) -> String {
        show_term(crate::term::Term::atom(*self))
    }
}

/// A literal as Erlang's `~p` prints it, on one line.
pub fn show_term(t: Term) -> String {
    thread_local!(static EMPTY: crate::heap::Heap = crate::heap::Heap::new());
    // ~p on one long line: strings read as strings.
    EMPTY.with(|heap| crate::term::print::print(heap, t, 1, 100_000))
}

/// The listing of a whole module: each function with its instructions,
/// and the tables the instructions refer to shown inline.
pub fn disassemble(module: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "module {} (file {})", module.name.name(), module.file);
    let mut by_entry: Vec<&super::FunctionInfo> = module.functions.iter().collect();
    by_entry.sort_by_key(|f| f.entry);
    let mut next_function = 0;
    for (ip, instr) in module.code.iter().enumerate() {
        while let Some(f) = by_entry.get(next_function) {
            if f.entry as usize != ip {
                break;
            }
            let exported = module.exports.contains_key(&(f.name, f.arity));
            let _ = writeln!(
                out,
                "\nfunction {}/{}{}:",
                f.name.name(),
                f.arity,
                if exported { " (exported)" } else { "" }
            );
            next_function += 1;
        }
        let mut line = format!("  {ip:>4}  {}", instr.name());
        let mut operands = instr.operands(module);
        // A BIF's index depends on the table's order; its name does not.
        if let Instr::Bif { bif, .. } = *instr {
            operands[0] = crate::bif::name_of(bif as usize).0;
        }
        for operand in operands {
            line.push(' ');
            line.push_str(&operand);
        }
        match *instr {
            Instr::Bif { bif, args, .. } => {
                let (name, arity) = crate::bif::name_of(bif as usize);
                let list = &module.operand_lists[args as usize..args as usize + arity as usize];
                let shown: Vec<String> = list.iter().map(|s| s.show(module)).collect();
                let _ = write!(line, "    ; {name}/{arity}({})", shown.join(", "));
            }
            Instr::PutTuple {
                arity, elements, ..
            } => {
                let list = &module.operand_lists[elements as usize..(elements + arity) as usize];
                let shown: Vec<String> = list.iter().map(|s| s.show(module)).collect();
                let _ = write!(line, "    ; {{{}}}", shown.join(", "));
            }
            Instr::MakeFun { fun, captured, .. } => {
                let def = &module.funs[fun as usize];
                let name = module.functions[def.function as usize].name.name();
                let list = &module.operand_lists[captured as usize..(captured + def.free) as usize];
                let shown: Vec<String> = list.iter().map(|s| s.show(module)).collect();
                let _ = write!(
                    line,
                    "    ; {name}/{} capturing [{}]",
                    def.arity,
                    shown.join(", ")
                );
            }
            Instr::CallExt { import, .. }
            | Instr::CallExtLast { import, .. }
            | Instr::CallExtOnly { import, .. } => {
                let i = &module.imports[import as usize];
                let _ = write!(
                    line,
                    "    ; {}:{}/{}",
                    i.module.name(),
                    i.function.name(),
                    i.arity
                );
            }
            Instr::Call { target, .. }
            | Instr::CallLast { target, .. }
            | Instr::CallOnly { target, .. } => {
                if let Some(f) = module.function_at(target.0) {
                    let _ = write!(line, "    ; {}/{}", f.name.name(), f.arity);
                }
            }
            Instr::SelectVal { table, .. } | Instr::SelectTupleArity { table, .. } => {
                let t = &module.select_tables[table as usize];
                let shown: Vec<String> = t
                    .values
                    .iter()
                    .zip(&t.targets)
                    .map(|(&v, l)| format!("{} => {}", show_term(v), l.show(module)))
                    .collect();
                let _ = write!(line, "    ; [{}]", shown.join(", "));
            }
            _ => {}
        }
        let _ = writeln!(out, "{line}");
    }
    out
}
