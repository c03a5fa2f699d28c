//! The instruction set, loaded modules and the disassembler.
//!
//! A register machine in the manner of BEAM: X registers hold arguments
//! and temporaries (they belong to the scheduler loop), Y slots live in
//! the current stack frame. Every instruction is defined once, in the
//! `instructions!` table below: its operands, its one-line meaning and
//! (through the operand types) its disassembly.
//!
//! Invariant: a `Module` is immutable once built (its call caches only
//! remember lookups). Loading a module again makes a new `Module` behind
//! a new `Arc` and marks the old one superseded; code that runs keeps the
//! version it started in. Versions that code may run in are pinned for
//! the rest of the program (`ModuleRef`), so the interpreter refers to
//! them without reference counts. `Module::new` verifies the code (see
//! `Module`), which lets the dispatch loop skip bounds checks.
//!
//! Superinstructions (`move2`, `is_nonempty_list_get_list`) are made by
//! the compiler's `emit` from pairs the profile showed to be frequent.

pub mod disasm;
pub mod module;

pub use disasm::Operands;
pub use module::{CallTarget, FunDef, FunctionInfo, Import, Module, ModuleRef};

/// A source operand, packed in 32 bits: the low 2 bits say where the value
/// is (X register, Y slot, or the module's literal table), the rest is the
/// index. Literals include pre-built immediates (small ints, atoms, `[]`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Src(pub u32);

pub const SRC_X: u32 = 0;
pub const SRC_Y: u32 = 1;
pub const SRC_LIT: u32 = 2;

impl Src {
    pub const fn x(i: u32) -> Src {
        Src(i << 2 | SRC_X)
    }
    pub const fn y(i: u32) -> Src {
        Src(i << 2 | SRC_Y)
    }
    pub const fn lit(i: u32) -> Src {
        Src(i << 2 | SRC_LIT)
    }
    #[inline(always)]
    pub const fn kind(self) -> u32 {
        self.0 & 3
    }
    #[inline(always)]
    pub const fn index(self) -> usize {
        (self.0 >> 2) as usize
    }
}

/// A destination register, packed in 16 bits: the top bit set means a Y
/// slot, clear an X register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Dst(pub u16);

impl Dst {
    pub const fn x(i: u16) -> Dst {
        Dst(i)
    }
    pub const fn y(i: u16) -> Dst {
        Dst(i | 0x8000)
    }
    #[inline(always)]
    pub const fn is_y(self) -> bool {
        self.0 & 0x8000 != 0
    }
    #[inline(always)]
    pub const fn index(self) -> usize {
        (self.0 & 0x7fff) as usize
    }
    /// The same register read as a source.
    pub const fn src(self) -> Src {
        if self.is_y() {
            Src::y(self.index() as u32)
        } else {
            Src::x(self.index() as u32)
        }
    }
}

/// Number of X registers a scheduler has; the verifier rejects code
/// naming a register at or above it.
pub const X_REGISTERS: usize = 1024;

/// An instruction index in the module's code. `Label(0)` as a failure
/// target means "no label: raise the error" (index 0 is never a jump
/// target, it holds the module's first `FuncInfo`). The target of a
/// local call is always a function's `FuncInfo` (the assembler checks
/// it), so a call enters at the instruction after it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Label(pub u32);

impl Label {
    pub const RAISE: Label = Label(0);
}

/// Defines `Instr` from one table: for each instruction its doc line (the
/// meaning, Lua-style), its name as the disassembler prints it, and its
/// operands, each printed by the `Operand` trait.
macro_rules! instructions {
    ($( $(#[doc = $doc:literal])* $variant:ident $name:literal { $($field:ident : $ty:ty),* } )*) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Instr {
            $( $(#[doc = $doc])* $variant { $($field: $ty),* }, )*
        }

        impl Instr {
            /// The name the disassembler prints.
            pub fn name(&self) -> &'static str {
                match self { $( Instr::$variant { .. } => $name, )* }
            }

            /// The one-line meaning from the table.
            pub fn meaning(&self) -> &'static str {
                match self { $( Instr::$variant { .. } => concat!($($doc),*).trim_ascii(), )* }
            }

            /// Calls `f` on every register and label operand (the verifier's walk).
            pub fn visit_operands(&self, f: &mut dyn FnMut(disasm::Operands)) {
                #[allow(unused_variables)]
                match self {
                    $( Instr::$variant { $($field),* } => { $(disasm::Operand::visit($field, f);)* } )*
                }
            }

            /// Rewrites every label operand through `f` (the assembler's fix-up).
            pub fn map_labels(&mut self, f: &mut dyn FnMut(Label) -> Label) {
                #[allow(unused_variables)]
                match self {
                    $( Instr::$variant { $($field),* } => { $(disasm::Operand::map_label($field, f);)* } )*
                }
            }

            /// The operands, formatted against `module` (literals shown as
            /// values, labels as instruction indices).
            pub fn operands(&self, module: &Module) -> Vec<String> {
                #[allow(unused_variables)]
                match self {
                    $( Instr::$variant { $($field),* } => vec![$(disasm::Operand::show($field, module)),*], )*
                }
            }
        }
    };
}

instructions! {
    /// entry of function `function` (index in the function table): no-op, marks the start
    FuncInfo "func_info" { function: u32 }
    /// error function_clause with the arguments x[0..arity] of function `function`
    FunctionClause "function_clause" { function: u32 }
    /// push a frame of `slots` Y slots (set to []); `live` X registers stay live
    Allocate "allocate" { slots: u32, live: u16 }
    /// pop the current frame
    Deallocate "deallocate" { }
    /// return x[0] to the caller (to the frame's return address)
    Return "return" { }
    /// pop the current frame, then return x[0] (deallocate + return in one dispatch)
    DeallocateReturn "deallocate_return" { }
    /// make sure `words` heap words are free; GC safepoint with x[0..live] as roots
    TestHeap "test_heap" { words: u32, live: u16 }
    /// dst := src
    Move "move" { src: Src, dst: Dst }
    /// to_a := a, then to_b := b (two `move`s in one dispatch; the second reads after the first wrote)
    Move2 "move2" { a: Src, to_a: Dst, b: Src, to_b: Dst }
    /// swap two registers
    Swap "swap" { a: Dst, b: Dst }
    /// jump to label
    Jump "jump" { to: Label }

    /// call local function at `target` (its func_info, which the call skips) with `arity` args in x[0..]; result in x[0]
    Call "call" { arity: u16, target: Label }
    /// deallocate the frame, then jump past local `target`'s func_info (a tail call)
    CallLast "call_last" { arity: u16, target: Label }
    /// jump past local `target`'s func_info (a tail call from a function with no frame)
    CallOnly "call_only" { arity: u16, target: Label }
    /// call imports[import] (module:function/arity, newest version) with x[0..]
    CallExt "call_ext" { arity: u16, import: u32 }
    /// deallocate, then tail-call imports[import]
    CallExtLast "call_ext_last" { arity: u16, import: u32 }
    /// tail-call imports[import] from a function with no frame
    CallExtOnly "call_ext_only" { arity: u16, import: u32 }
    /// call the fun in x[arity] with x[0..arity]; badfun / badarity; `tail` as for apply
    CallFun "call_fun" { arity: u16, tail: Tail }
    /// call x[arity]:x[arity+1](x[0..arity]) (newest version, BIFs too); undef if not exported
    Apply "apply" { arity: u16, tail: Tail }
    /// apply(x[0], x[1], x[2]) with the arguments as a list
    ApplyList "apply_list" { tail: Tail }
    /// apply(x[0], x[1]): call the fun x[0] with the argument list x[1]
    ApplyFunList "apply_fun_list" { tail: Tail }
    /// dst := bifs[bif](operand_lists[args..]) (as many as the BIF's arity); on error jump to fail, or raise if fail is 0
    Bif "bif" { bif: u16, live: u8, args: u32, fail: Label, dst: Dst }

    /// dst := a + b; badarith unless both are numbers
    Add "add" { a: Src, b: Src, fail: Label, dst: Dst }
    /// dst := a - b; badarith unless both are numbers
    Sub "sub" { a: Src, b: Src, fail: Label, dst: Dst }
    /// dst := a * b; badarith unless both are numbers
    Mul "mul" { a: Src, b: Src, fail: Label, dst: Dst }
    /// dst := a (op) b for the other arithmetic operators (/ div rem band bor bxor bsl bsr)
    Arith "arith" { op: ArithOp, a: Src, b: Src, fail: Label, dst: Dst }
    /// dst := a == b etc., as a boolean (comparisons in value position)
    Compare "compare" { op: CmpOp, a: Src, b: Src, dst: Dst }

    /// jump to fail unless a < b (term order)
    IsLt "is_lt" { a: Src, b: Src, fail: Label }
    /// jump to fail unless a >= b
    IsGe "is_ge" { a: Src, b: Src, fail: Label }
    /// jump to fail unless a == b (numbers compared by value)
    IsEq "is_eq" { a: Src, b: Src, fail: Label }
    /// jump to fail unless a /= b
    IsNe "is_ne" { a: Src, b: Src, fail: Label }
    /// jump to fail unless a =:= b
    IsEqExact "is_eq_exact" { a: Src, b: Src, fail: Label }
    /// jump to fail unless a =/= b
    IsNeExact "is_ne_exact" { a: Src, b: Src, fail: Label }
    /// jump to fail unless src is of the given type
    IsType "is_type" { test: TypeTest, src: Src, fail: Label }
    /// jump to fail unless src is a tuple of `arity` elements
    IsTuple "is_tuple_of_arity" { src: Src, arity: u32, fail: Label }
    /// jump to fail unless src is a tuple of `arity` (at least 1) elements whose first is the atom `tag`
    IsTaggedTuple "is_tagged_tuple" { src: Src, arity: u16, tag: crate::term::Atom, fail: Label }
    /// jump to fail unless src is a cons cell
    IsCons "is_nonempty_list" { src: Src, fail: Label }
    /// jump to fail unless src is []
    IsNil "is_nil" { src: Src, fail: Label }
    /// jump to fail unless src is a fun of `arity`
    IsFunction2 "is_function2" { src: Src, arity: Src, fail: Label }
    /// jump through select_tables[table] on the value of src (atoms, integers); else fail
    SelectVal "select_val" { src: Src, table: u32, fail: Label }
    /// jump to table entry `arity` of select_tables[table] if src is a tuple; else fail
    SelectTupleArity "select_tuple_arity" { src: Src, table: u32, fail: Label }

    /// head := hd(src), tail := tl(src); src is known to be a cons
    GetList "get_list" { src: Src, head: Dst, tail: Dst }
    /// jump to fail unless src is a cons; else head := hd(src), tail := tl(src) (is_nonempty_list + get_list)
    IsConsGetList "is_nonempty_list_get_list" { src: Src, fail: Label, head: Dst, tail: Dst }
    /// dst := hd(src); src is known to be a cons
    GetHd "get_hd" { src: Src, dst: Dst }
    /// dst := tl(src); src is known to be a cons
    GetTl "get_tl" { src: Src, dst: Dst }
    /// dst := element(index + 1, src); src is known to be a big enough tuple
    GetTupleElement "get_tuple_element" { src: Src, index: u32, dst: Dst }
    /// dst := [head | tail] (heap space ensured before)
    PutList "put_list" { head: Src, tail: Src, dst: Dst }
    /// dst := {operand_lists[elements..elements+arity]} (heap space ensured before)
    PutTuple "put_tuple" { arity: u32, elements: u32, dst: Dst }
    /// dst := the closure funs[fun] capturing operand_lists[captured..+free] (heap ensured)
    MakeFun "make_fun" { fun: u32, captured: u32, dst: Dst }

    /// push a catch of kind try on the catch stack, handler at `handler`, marker in y[slot]
    Try "try" { slot: u32, handler: Label }
    /// pop the try of y[slot]: the body finished without an exception
    TryEnd "try_end" { slot: u32 }
    /// entered from the handler: x[0..3] = class, reason, stacktrace
    TryCase "try_case" { slot: u32 }
    /// x[2] := the stacktrace of the exception being handled, built now (a raise only records it)
    BuildStacktrace "build_stacktrace" { }
    /// push a catch of kind `catch Expr`, handler at `handler`
    Catch "catch" { slot: u32, handler: Label }
    /// pop the catch of y[slot]; after an exception x[0] holds the catch value
    CatchEnd "catch_end" { slot: u32 }
    /// re-raise: class x[0], reason x[1], stacktrace x[2]
    Raise "raise" { }
    /// raise an error: reason {badmatch, src}
    Badmatch "badmatch" { src: Src }
    /// raise an error: reason {case_clause, src}
    CaseClause "case_clause" { src: Src }
    /// raise an error: reason {try_clause, src}
    TryClause "try_clause" { src: Src }
    /// raise an error: reason if_clause
    IfClause "if_clause" { }
    /// raise an error: reason {bad_generator, src}
    BadGenerator "bad_generator" { src: Src }

    /// jump to fail unless src is a bitstring; pos := 0 (a binary match begins)
    BsStart "bs_start" { src: Src, fail: Label, pos: Dst }
    /// read one segment (packed type `spec`) of operand_lists[seg] at position operand_lists[seg+1] with size operand_lists[seg+2]: dst := value and advance the position, or jump to fail
    BsGet "bs_get" { spec: u32, seg: u32, fail: Label, dst: Dst }
    /// jump to fail unless position pos is the end of bitstring bin
    BsEnd "bs_end" { bin: Src, pos: Src, fail: Label }

    /// dst := the next message after the save position, or jump to fail if there is none
    LoopRec "loop_rec" { fail: Label, dst: Dst }
    /// advance the save position and jump back to the loop head
    LoopRecEnd "loop_rec_end" { to: Label }
    /// remove the current message and reset the save position
    RemoveMessage "remove_message" { }
    /// wait for a message, then resume at `to`; x0..x(live-1) are kept
    Wait "wait" { to: Label, live: u16 }
    /// wait at most src milliseconds (or infinity), then fall through to the timeout code
    WaitTimeout "wait_timeout" { to: Label, timeout: Src, live: u16 }
    /// the receive timed out: reset the save position
    Timeout "timeout" { }
}

/// How a dynamic call returns: as a normal call, or as a tail call that
/// first drops the frame (`Last`) or has none to drop (`Only`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    No,
    Last,
    Only,
}

/// The arithmetic operators of `Instr::Arith`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Div,
    IntDiv,
    Rem,
    Band,
    Bor,
    Bxor,
    Bsl,
    Bsr,
}

/// Comparisons in value position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    ExactEq,
    ExactNe,
    Lt,
    Le,
    Gt,
    Ge,
}

/// The type tests of `Instr::IsType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeTest {
    Integer,
    Float,
    Number,
    Atom,
    Boolean,
    List,
    Tuple,
    Binary,
    Map,
    Function,
    Pid,
    Reference,
}

/// A jump table of `select_val`: sorted values and their targets.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectTable {
    pub values: Vec<crate::term::Term>,
    pub targets: Vec<Label>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_fit_in_sixteen_bytes() {
        assert!(
            std::mem::size_of::<Instr>() <= 16,
            "{}",
            std::mem::size_of::<Instr>()
        );
    }

    #[test]
    fn every_instruction_has_a_meaning() {
        let i = Instr::Add {
            a: Src::x(0),
            b: Src::y(1),
            fail: Label::RAISE,
            dst: Dst::x(0),
        };
        assert_eq!(i.name(), "add");
        assert!(i.meaning().starts_with("dst := a + b"));
    }
}
