//! Bytecode to Cranelift IR, one function at a time.
//!
//! Every instruction of the function gets a block. Moves, jumps, type
//! and tuple tests, list and tuple access, construction by bumping the
//! heap top, small-integer arithmetic and comparisons, `select_val`,
//! local calls and returns are generated inline; the general paths call
//! the helpers (`super::helpers`); everything else bails out to the
//! interpreter at that instruction (`exit::BAIL`), with all state in
//! place. The function starts with a dispatch on its entry number.

use super::{Ctx, exit, helpers};
use crate::code::{
    CmpOp, Dst, Instr, Label, ModuleRef, SRC_LIT, SRC_X, SRC_Y, Src, Tail, TypeTest, X_REGISTERS,
};
use crate::process::Frame;
use crate::term::object::{Kind, header};
use crate::term::{
    LITERAL_BIT, TAG_ATOM, TAG_BITS, TAG_BOXED, TAG_CONS, TAG_MASK, TAG_PID, TAG_SMALL, Term,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, InstBuilder, MemFlagsData, SigRef, Signature, Value, types,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::{Context, isa::CallConv};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module as _, default_libcall_names};
use std::collections::HashMap;
use std::mem::{offset_of, size_of};

const I64: types::Type = types::I64;
const I32: types::Type = types::I32;

/// A body call between native functions checks the machine stack
/// (`Gen::stack_room`) only when the caller's depth is a multiple of this:
/// between two checks at most this many frames are added, each a few
/// hundred bytes, well within the scheduler thread's stack below
/// `Ctx::stack_limit` (`sched::SCHEDULER_STACK` less `native::NATIVE_STACK`).
/// A tail call keeps its depth, so it checks every time: mutual tail
/// recursion would otherwise never check.
const STACK_CHECK_EVERY: u64 = 64;

/// The longest left operand `++` copies inline (`Gen::append`); longer
/// ones go to the BIF, whose cost per call then matters less.
const APPEND_INLINE: i64 = 64;

/// Most Y slots an inline `allocate` sets (bigger frames: the interpreter).
const MAX_INLINE_SLOTS: usize = 64;

/// Most entries one function may have (`ENTRY_BITS`).
const MAX_ENTRIES: usize = 1 << crate::code::module::ENTRY_BITS;

/// The Cranelift module that owns all generated code (never freed:
/// code addresses are kept in module tables for the rest of the run).
pub struct Jit {
    module: JITModule,
    context: Context,
    builder_context: FunctionBuilderContext,
    next: u64,
    /// The address of `enter` (see `Jit::trampoline`).
    pub enter: usize,
}

/// The calling convention of compiled functions: Cranelift's `Winch`
/// convention, which has no callee-saved registers. A function that
/// reaches its `return` without a native call (fib's base cases, a
/// list loop's last step) saves and restores nothing; values live across
/// a native call are kept in stack slots by the caller instead, and the
/// helpers (Rust, `SystemV`) still keep them in callee-saved registers.
/// Rust enters compiled code only through the trampoline.
const NATIVE_CC: CallConv = CallConv::Winch;

impl Jit {
    pub fn new() -> Result<Jit, String> {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").map_err(|e| e.to_string())?;
        flags.set("is_pic", "false").map_err(|e| e.to_string())?;
        // The generated code is small and regular; checking each function
        // again costs more than generating it.
        flags
            .set(
                "enable_verifier",
                if cfg!(debug_assertions) {
                    "true"
                } else {
                    "false"
                },
            )
            .map_err(|e| e.to_string())?;
        let isa = cranelift_native::builder()?
            .finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())?;
        let module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
        let context = module.make_context();
        let mut jit = Jit {
            module,
            context,
            builder_context: FunctionBuilderContext::new(),
            next: 0,
            enter: 0,
        };
        jit.enter = jit.trampoline()?;
        Ok(jit)
    }

    /// `enter(ctx, entry, depth, code) -> exit code`, in the platform's
    /// convention (`native::Enter`): calls the compiled function `code`,
    /// which uses `NATIVE_CC`. Its prologue saves the callee-saved
    /// registers Rust expects kept, once per entry from `native::run`.
    fn trampoline(&mut self) -> Result<usize, String> {
        let call_conv = self.module.isa().default_call_conv();
        let config = self.module.target_config();
        let mut sig = native_signature(call_conv);
        sig.params.push(AbiParam::new(I64));
        self.context.func.signature = sig.clone();
        let id = self
            .module
            .declare_function("act_enter", Linkage::Local, &sig)
            .map_err(|e| e.to_string())?;
        let mut b = FunctionBuilder::new(&mut self.context.func, &mut self.builder_context);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let params = b.block_params(block).to_vec();
        let native = b.import_signature(native_signature(NATIVE_CC));
        let call = b
            .ins()
            .call_indirect(native, params[3], &[params[0], params[1], params[2]]);
        let result = b.inst_results(call)[0];
        b.ins().return_(&[result]);
        b.seal_all_blocks();
        b.finalize(config);
        let defined = self.module.define_function(id, &mut self.context);
        self.module.clear_context(&mut self.context);
        defined.map_err(|e| format!("code generation failed: {e}"))?;
        self.module
            .finalize_definitions()
            .map_err(|e| e.to_string())?;
        Ok(self.module.get_finalized_function(id) as usize)
    }

    /// Compiles `function` of `m`: its code address and the instruction
    /// each entry number resumes at; `Err` says why it was not compiled.
    pub fn compile(&mut self, m: ModuleRef, function: u32) -> Result<(usize, Vec<u32>), String> {
        let module = m.get();
        let info = module
            .functions
            .get(function as usize)
            .ok_or("no such function")?;
        let start = info.entry as usize + 1;
        let end = module.code[start..]
            .iter()
            .position(|i| matches!(i, Instr::FuncInfo { .. }))
            .map_or(module.code.len(), |n| start + n);
        let mut entries = vec![start as u32];
        for ip in start..end {
            if pushes_frame(&module.code[ip]) && ip + 1 < end {
                entries.push(ip as u32 + 1);
            }
            // A receive resumes at its loop head after a wait, and after
            // the instruction that set a timer when the timer fires.
            match module.code[ip] {
                Instr::Wait { to, .. } => entries.push(to.0),
                Instr::WaitTimeout { to, .. } => {
                    entries.push(to.0);
                    entries.push(ip as u32 + 1);
                }
                _ => {}
            }
        }
        entries.retain(|&e| (start..end).contains(&(e as usize)));
        entries[1..].sort_unstable();
        entries.dedup();
        if entries.len() > MAX_ENTRIES {
            return Err("too many calls for one function".into());
        }

        let call_conv = self.module.isa().default_call_conv();
        let config = self.module.target_config();
        self.context.func.signature = native_signature(NATIVE_CC);
        self.next += 1;
        let name = format!("act_{}", self.next);
        let id = self
            .module
            .declare_function(&name, Linkage::Local, &self.context.func.signature)
            .map_err(|e| e.to_string())?;
        // Calls of the function itself go straight to it.
        let itself = self.module.declare_func_in_func(id, &mut self.context.func);
        let mut b = FunctionBuilder::new(&mut self.context.func, &mut self.builder_context);
        let mut g = Gen::new(&mut b, m, start, end, call_conv, itself);
        g.function(&entries);
        b.seal_all_blocks();
        b.finalize(config);

        let dump = std::env::var_os("ACT_NATIVE_DUMP").is_some();
        // `ACT_NATIVE_BYTES=DIR` writes each function's machine code to
        // DIR/ADDRESS.bin, to read beside a profile of the run
        // (`objdump -D -b binary -mi386:x86-64 --adjust-vma=ADDRESS`).
        let bytes_dir = std::env::var_os("ACT_NATIVE_BYTES");
        if dump {
            self.context.set_disasm(true);
            eprintln!("{}", self.context.func.display());
        }
        let defined = self.module.define_function(id, &mut self.context);
        if dump && let Some(code) = self.context.compiled_code() {
            eprintln!("{}", code.vcode.as_deref().unwrap_or(""));
        }
        let machine_code = match (&bytes_dir, self.context.compiled_code()) {
            (Some(_), Some(code)) => code.code_buffer().to_vec(),
            _ => Vec::new(),
        };
        self.module.clear_context(&mut self.context);
        defined.map_err(|e| format!("code generation failed: {e}"))?;
        self.module
            .finalize_definitions()
            .map_err(|e| e.to_string())?;
        let code = self.module.get_finalized_function(id) as usize;
        if let Some(dir) = bytes_dir {
            let name = format!("{code:x}.bin");
            let _ = std::fs::write(std::path::Path::new(&dir).join(name), machine_code);
        }
        Ok((code, entries))
    }
}

/// `fn(ctx, entry, depth) -> exit code` (see `native::Enter`)
fn native_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    sig.params.push(AbiParam::new(I64));
    sig.params.push(AbiParam::new(I32));
    sig.params.push(AbiParam::new(I64));
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// Instructions after which execution resumes at the next instruction
/// when a frame they pushed is popped: the return addresses.
fn pushes_frame(i: &Instr) -> bool {
    match *i {
        Instr::Call { .. } | Instr::CallExt { .. } => true,
        Instr::CallFun { tail, .. }
        | Instr::Apply { tail, .. }
        | Instr::ApplyList { tail }
        | Instr::ApplyFunList { tail } => tail == Tail::No,
        _ => false,
    }
}

/// `TypeTest` as the number passed to `helpers::type_test`.
/// Instructions that work with pending (unboxed) floats in registers;
/// before any other, they are boxed (`Gen::flush`).
fn keeps_floats(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Add { .. }
            | Instr::Sub { .. }
            | Instr::Mul { .. }
            | Instr::Arith {
                op: crate::code::ArithOp::Div,
                ..
            }
            | Instr::Move { .. }
            | Instr::Move2 { .. }
            | Instr::GetTupleElement { .. }
            | Instr::GetHd { .. }
            | Instr::GetTl { .. }
            | Instr::GetList { .. }
            | Instr::Compare { .. }
            | Instr::IsLt { .. }
            | Instr::IsGe { .. }
            | Instr::IsEq { .. }
            | Instr::IsNe { .. }
            | Instr::IsEqExact { .. }
            | Instr::IsNeExact { .. }
    ) || matches!(i, Instr::Bif { bif, .. } if is_sqrt(*bif))
}

/// The operands of `+ - * /`, the operations a float run starts with.
fn float_operands(i: &Instr) -> Option<(Src, Src)> {
    match *i {
        Instr::Add { a, b, .. } | Instr::Sub { a, b, .. } | Instr::Mul { a, b, .. } => Some((a, b)),
        Instr::Arith {
            op: crate::code::ArithOp::Div,
            a,
            b,
            ..
        } => Some((a, b)),
        _ => None,
    }
}

/// The BIFs generated inline, by their numbers in the BIF table.
struct InlineBifs {
    sqrt: Option<u16>,
    element: Option<u16>,
    tuple_size: Option<u16>,
    self_: Option<u16>,
    send: Option<u16>,
    map_get: Option<u16>,
    maps_get: Option<u16>,
    map_update1: Option<u16>,
    map_update1_chain: Option<u16>,
    append: Option<u16>,
    max: Option<u16>,
    min: Option<u16>,
    hd: Option<u16>,
    tl: Option<u16>,
    length: Option<u16>,
    abs: Option<u16>,
}

/// Where an inline BIF's code ends (`Gen::inline_exits`).
struct InlineExits {
    done: Block,
    result: Value,
    inline: Block,
    answer: Value,
    general: Block,
}

/// The inline BIFs of one operand (`Gen::one_operand`).
#[derive(Clone, Copy)]
enum Inline1 {
    Hd,
    Tl,
    Length,
    Abs,
}

/// The inline BIFs of two operands (`Gen::two_operands`).
#[derive(Clone, Copy)]
enum Inline2 {
    Max,
    Min,
    Append,
    MapGet,
    Send,
}

impl InlineBifs {
    /// Which inline BIF of one operand BIF number `bif` is, if any.
    fn one_operand(&self, bif: u16) -> Option<Inline1> {
        let bif = Some(bif);
        [
            (self.hd, Inline1::Hd),
            (self.tl, Inline1::Tl),
            (self.length, Inline1::Length),
            (self.abs, Inline1::Abs),
        ]
        .into_iter()
        .find_map(|(n, which)| (n == bif).then_some(which))
    }

    /// Which inline BIF of two operands BIF number `bif` is, if any.
    fn two_operands(&self, bif: u16) -> Option<Inline2> {
        let bif = Some(bif);
        [
            (self.max, Inline2::Max),
            (self.min, Inline2::Min),
            (self.append, Inline2::Append),
            (self.map_get, Inline2::MapGet),
            (self.maps_get, Inline2::MapGet),
            (self.send, Inline2::Send),
        ]
        .into_iter()
        .find_map(|(n, which)| (n == bif).then_some(which))
    }
}

fn inline_bifs() -> &'static InlineBifs {
    static BIFS: std::sync::OnceLock<InlineBifs> = std::sync::OnceLock::new();
    BIFS.get_or_init(|| InlineBifs {
        sqrt: crate::bif::lookup("math", "sqrt", 1),
        element: crate::bif::lookup("erlang", "element", 2),
        tuple_size: crate::bif::lookup("erlang", "tuple_size", 1),
        self_: crate::bif::lookup("erlang", "self", 0),
        send: crate::bif::lookup("erlang", "!", 2),
        map_get: crate::bif::lookup("erlang", "map_get", 2),
        maps_get: crate::bif::lookup("maps", "get", 2),
        map_update1: crate::bif::lookup("erlang", "$map_update1", 3),
        map_update1_chain: crate::bif::lookup("erlang", "$map_update1_chain", 3),
        append: crate::bif::lookup("erlang", "++", 2),
        max: crate::bif::lookup("erlang", "max", 2),
        min: crate::bif::lookup("erlang", "min", 2),
        hd: crate::bif::lookup("erlang", "hd", 1),
        tl: crate::bif::lookup("erlang", "tl", 1),
        length: crate::bif::lookup("erlang", "length", 1),
        abs: crate::bif::lookup("erlang", "abs", 1),
    })
}

/// Whether BIF number `bif` is `math:sqrt/1` (generated inline).
fn is_sqrt(bif: u16) -> bool {
    inline_bifs().sqrt == Some(bif)
}

fn type_test_number(t: TypeTest) -> u32 {
    TYPE_TESTS.iter().position(|&x| x == t).unwrap_or(0) as u32
}

pub(super) fn type_test_from(n: u32) -> TypeTest {
    TYPE_TESTS
        .get(n as usize)
        .copied()
        .unwrap_or(TypeTest::Integer)
}

const TYPE_TESTS: [TypeTest; 12] = [
    TypeTest::Integer,
    TypeTest::Float,
    TypeTest::Number,
    TypeTest::Atom,
    TypeTest::Boolean,
    TypeTest::List,
    TypeTest::Tuple,
    TypeTest::Binary,
    TypeTest::Map,
    TypeTest::Function,
    TypeTest::Pid,
    TypeTest::Reference,
];

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

macro_rules! off {
    ($field:ident) => {
        offset_of!(Ctx, $field) as i32
    };
}

/// Which memory a region covers (see `Mem`).
#[derive(Clone, Copy)]
enum Kind8 {
    /// One `Ctx` field, by byte offset.
    Ctx = 1,
    /// One X register, by index.
    X = 2,
    /// One Y slot of the current frame, by index.
    Y = 3,
}

/// Memory flags that put each place native code reads and writes in an
/// alias region of its own: each `Ctx` field, each X register, each Y
/// slot of the frame, the frame stack, and heap and literal objects.
/// Cranelift then forwards a stored value to the next load of the same
/// place and drops repeated loads, across stores to other places (its
/// alias analysis remembers one last store per region, so a region per
/// place is what lets `x0`, `y0`, `Ctx::y` and `Ctx::htop` stay known
/// through a run of code).
///
/// Sound because no two regions share an address while a function runs
/// between two calls (calls fence every region): `Ctx` fields and X
/// registers sit at fixed addresses; a frame's Y slot `i` is always
/// addressed as slot `i` (a later frame at the same address comes after
/// a call or a return); frames and objects are separate allocations.
/// An access with plain `flags()` belongs to no region: a store with it
/// fences every region, so it is never wrong, only slower, but a *load*
/// with it must not read a place some region's store writes.
struct Mem {
    regions: HashMap<(u8, u32), MemFlagsData>,
    frames: MemFlagsData,
    heap: MemFlagsData,
}

impl Mem {
    fn new(func: &mut cranelift_codegen::ir::Function) -> Mem {
        let mut region = |id: u32, name: &'static str| {
            let r = func
                .dfg
                .alias_regions
                .insert(cranelift_codegen::ir::AliasRegionData {
                    user_id: id,
                    description: name.into(),
                });
            flags().with_alias_region(Some(r))
        };
        Mem {
            regions: HashMap::new(),
            frames: region(1, "frames"),
            heap: region(2, "heap objects"),
        }
    }

    /// The flags of place `at` of `kind`, its region made at first use.
    fn region(
        &mut self,
        func: &mut cranelift_codegen::ir::Function,
        kind: Kind8,
        at: u32,
    ) -> MemFlagsData {
        *self.regions.entry((kind as u8, at)).or_insert_with(|| {
            let r = func
                .dfg
                .alias_regions
                .insert(cranelift_codegen::ir::AliasRegionData {
                    user_id: ((kind as u32) << 24) | at,
                    description: "".into(),
                });
            flags().with_alias_region(Some(r))
        })
    }
}

/// The helpers' signatures, imported once per function.
struct Sigs {
    arith: SigRef,
    cmp: SigRef,
    test: SigRef,
    unary: SigRef,
    ctx_word: SigRef,
    ctx_u32: SigRef,
    ctx_u32_word: SigRef,
    ctx_ret: SigRef,
    push_frame: SigRef,
    native: SigRef,
    remote: SigRef,
    fun: SigRef,
    box_float: SigRef,
    wait: SigRef,
    send: SigRef,
}

/// A float result kept out of the heap (the issue's "unboxed floats"):
/// while `isf` (an i8) is set, X register `reg` holds `[]` or a box of
/// `f`, and `f` is its value; with `isf` clear the register holds the
/// result as always. Only a run of instructions that falls through
/// (no jump target inside) carries these; the value is boxed where
/// anything else may look at the register (see `Gen::flush`).
/// `known`: the value is a float on every path (an operation with a
/// float operand gives a float or fails), so `isf` is not tested.
/// `boxed`: the register holds a box of `f` already (a float a run's
/// guard unboxed, see `Gen::speculate`), so boxing it is nothing to do.
#[derive(Clone, Copy)]
struct Pending {
    reg: u16,
    f: Value,
    isf: Value,
    known: bool,
    boxed: bool,
}

/// A run of fall-through code with float arithmetic in it, compiled
/// twice (see `Gen::speculate`): instructions `start..end`, and the X
/// registers its arithmetic reads as they were at `start`.
struct FloatRun {
    start: usize,
    end: usize,
    regs: Vec<u16>,
    /// Its float operations.
    ops: usize,
}

/// A bitstring `bs_start` took apart (`helpers::bs_parts`), for the
/// `bs_get` and `bs_end` on it later in the same run of fall-through
/// code: register `bin` holds it, `base` is the binary holding its bits
/// (a term), `data` the address of the base's first byte, `offset` and
/// `len` the bitstring's bit offset and bit length in it. Valid while
/// `bin` is not written and no call may have collected (`epoch`).
#[derive(Clone, Copy)]
struct BsParts {
    bin: Src,
    base: Value,
    data: Value,
    offset: Value,
    len: Value,
    epoch: u32,
}

/// The result of a map update at `ip` (in register `dst`), with `fresh`
/// (an i8) set when it is a copy this code just made, which no other
/// term can see yet: the next step of the same `M#{K1 := V1, ...}`
/// (`$map_update1_chain`, whose map operand the compiler guarantees is
/// that temporary and dead after) may then write into it in place.
/// Valid in `done`, the block the update ended in, and the instruction
/// that block falls through to.
#[derive(Clone, Copy)]
struct FreshMap {
    ip: usize,
    dst: Dst,
    fresh: Value,
    /// The copy's address, when `fresh`.
    addr: Value,
    done: Block,
}

/// The function's parameters and the X registers' address, as variables.
///
/// Compiled functions keep no callee-saved registers (`NATIVE_CC`), so a
/// value live across a native call would be spilled and every later use
/// would load it again. Instead a body call stores the context and the
/// depth in `saved` before the call and defines the variables anew from
/// there after it: each definition lives between two native calls, in a
/// register (helpers keep callee-saved registers, so helper calls in
/// between cost nothing).
///
/// `y` is the current frame's Y slots' address, always equal to `Ctx::y`
/// (which helpers read): code that changes one changes the other
/// (`allocate`, the return from a body call), and reads use the variable.
struct Vars {
    ctx: Variable,
    x: Variable,
    depth: Variable,
    y: Variable,
    saved: Option<cranelift_codegen::ir::StackSlot>,
}

/// What a native call calls.
#[derive(Clone, Copy)]
enum Callee {
    /// The function being compiled (a direct call).
    Itself,
    /// Native code at this address.
    Code(Value),
}

struct Gen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    m: ModuleRef,
    start: usize,
    end: usize,
    blocks: Vec<Block>,
    /// The context (`Ctx`), the X registers' address and the native calls
    /// below this one on the machine stack whose frames are not pushed
    /// (the `depth` parameter, see `native::Enter`): variables, not
    /// values, so that each native call ends their live ranges (`Vars`).
    vars: Vars,
    /// `returns_in_own_module`, once found.
    own_module_returns: Option<bool>,
    sigs: Sigs,
    /// This function's entry block for entry 0 (self tail calls jump here).
    body: Block,
    /// This function, for its calls of itself.
    itself: FuncRef,
    /// Float results not boxed yet, in the current fall-through run.
    pending: Vec<Pending>,
    /// Instructions that something jumps to (a run of fall-through code
    /// ends before each).
    targets: Vec<bool>,
    /// Addresses of the objects registers point at, found in this run of
    /// fall-through code: (register, address, epoch). An entry holds
    /// until the register is written or a helper or native call may have
    /// moved the heap (`epoch` counts the calls emitted).
    addrs: Vec<(Src, Value, u32)>,
    epoch: u32,
    /// Where BIF calls put their arguments (see `bif_call`).
    bif_area: Option<cranelift_codegen::ir::StackSlot>,
    /// Where a body call keeps the caller's Y offset while the callee
    /// runs: in memory, since a register would be a callee-saved one,
    /// saved and restored by every call of this function.
    y_saved: Option<cranelift_codegen::ir::StackSlot>,
    /// Bitstrings taken apart by `bs_start` in this run of fall-through
    /// code (see `BsParts`).
    matches: Vec<BsParts>,
    /// The map the last `$map_update1` made, for an update chained to it
    /// (see `FreshMap`).
    fresh_map: Option<FreshMap>,
    /// Where `helpers::bs_parts` writes its answer.
    bs_area: Option<cranelift_codegen::ir::StackSlot>,
    mem: Mem,
}

impl<'a, 'b> Gen<'a, 'b> {
    fn new(
        b: &'a mut FunctionBuilder<'b>,
        m: ModuleRef,
        start: usize,
        end: usize,
        call_conv: CallConv,
        itself: FuncRef,
    ) -> Gen<'a, 'b> {
        let sig = |params: &[types::Type], returns: &[types::Type]| {
            let mut s = Signature::new(call_conv);
            s.params.extend(params.iter().map(|&t| AbiParam::new(t)));
            s.returns.extend(returns.iter().map(|&t| AbiParam::new(t)));
            s
        };
        let sigs = Sigs {
            arith: b.import_signature(sig(&[I64, I32, I64, I64], &[I64])),
            cmp: b.import_signature(sig(&[I64, I64, I64], &[I64])),
            test: b.import_signature(sig(&[I64, I32, I64], &[I32])),
            unary: b.import_signature(sig(&[I64], &[I64])),
            ctx_word: b.import_signature(sig(&[I64, I64], &[I32])),
            ctx_u32: b.import_signature(sig(&[I64, I32], &[I32])),
            ctx_u32_word: b.import_signature(sig(&[I64, I32, I64], &[I32])),
            ctx_ret: b.import_signature(sig(&[I64], &[I32])),
            push_frame: b.import_signature(sig(&[I64, I32, I64, I64, I32], &[I32])),
            native: b.import_signature(native_signature(NATIVE_CC)),
            remote: b.import_signature(sig(&[I64, I32], &[I64])),
            fun: b.import_signature(sig(&[I64, I32, I64], &[I64])),
            box_float: b.import_signature(sig(&[I64, types::F64], &[I64])),
            wait: b.import_signature(sig(&[I64, I64, I32], &[I64])),
            send: b.import_signature(sig(&[I64, I64, I64], &[I32])),
        };
        let blocks = (start..end).map(|_| b.create_block()).collect::<Vec<_>>();
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ctx = b.block_params(entry)[0];
        let depth = b.block_params(entry)[2];
        let mem = Mem::new(b.func);
        // Never stored by native code, so no region is needed.
        let x = b.ins().load(I64, flags(), ctx, off!(x));
        let vars = Vars {
            ctx: b.declare_var(I64),
            x: b.declare_var(I64),
            depth: b.declare_var(I64),
            y: b.declare_var(I64),
            saved: None,
        };
        b.def_var(vars.ctx, ctx);
        b.def_var(vars.x, x);
        b.def_var(vars.depth, depth);
        let body = blocks[0];
        Gen {
            b,
            m,
            start,
            end,
            blocks,
            vars,
            own_module_returns: None,
            sigs,
            body,
            itself,
            pending: Vec::new(),
            targets: vec![false; end - start],
            addrs: Vec::new(),
            epoch: 0,
            bif_area: None,
            y_saved: None,
            matches: Vec::new(),
            fresh_map: None,
            bs_area: None,
            mem,
        }
    }

    fn ctx(&mut self) -> Value {
        self.b.use_var(self.vars.ctx)
    }

    fn xs(&mut self) -> Value {
        self.b.use_var(self.vars.x)
    }

    fn depth(&mut self) -> Value {
        self.b.use_var(self.vars.depth)
    }

    /// The current frame's Y slots' address (`Ctx::y`).
    fn ybase(&mut self) -> Value {
        self.b.use_var(self.vars.y)
    }

    /// Makes `y` the current frame's Y slots' address.
    fn set_ybase(&mut self, y: Value) {
        self.store_ctx(y, off!(y));
        self.b.def_var(self.vars.y, y);
    }

    /// Before a native body call: keeps the context and depth in this
    /// function's stack frame (`Vars`).
    fn save_vars(&mut self) {
        let slot = *self.vars.saved.get_or_insert_with(|| {
            self.b
                .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                    cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                    16,
                    3,
                ))
        });
        let ctx = self.ctx();
        let depth = self.depth();
        self.b.ins().stack_store(I64, ctx, slot, 0);
        self.b.ins().stack_store(I64, depth, slot, 8);
    }

    /// After a native body call: the context, X registers' address and
    /// depth are loaded again, so none of them lives across the call.
    fn restore_vars(&mut self) {
        let slot = self.vars.saved.expect("save_vars first");
        let ctx = self.b.ins().stack_load(I64, I64, slot, 0);
        let depth = self.b.ins().stack_load(I64, I64, slot, 8);
        let x = self.b.ins().load(I64, flags(), ctx, off!(x));
        self.b.def_var(self.vars.ctx, ctx);
        self.b.def_var(self.vars.depth, depth);
        self.b.def_var(self.vars.x, x);
    }

    fn block(&self, ip: usize) -> Block {
        self.blocks[ip - self.start]
    }

    /// The block of a jump target, or a bail-out block for a target
    /// outside this function (never made by the compiler, but cheap to
    /// keep correct).
    fn target(&mut self, label: Label) -> Block {
        let ip = label.0 as usize;
        if (self.start..self.end).contains(&ip) {
            self.block(ip)
        } else {
            self.bail_block(ip as u32)
        }
    }

    fn function(&mut self, entries: &[u32]) {
        let entry_block = self.b.current_block().expect("entry block");
        let entry_no = self.b.block_params(entry_block)[1];
        // Dispatch on the entry number; 0 (a call) is the common one.
        // Each entry's edge reads the current frame's Y slots' address
        // (`Vars::y`), so that a path that never uses it does not load it.
        let first = self.block(entries[0] as usize);
        let first_edge = self.b.create_block();
        let mut edges = vec![(first_edge, first)];
        if entries.len() > 1 {
            let resume = self.b.create_block();
            self.b.ins().brif(entry_no, resume, &[], first_edge, &[]);
            self.b.switch_to_block(resume);
        }
        for (n, &ip) in entries.iter().enumerate().skip(1) {
            let is = self.b.ins().icmp_imm_s(IntCC::Equal, entry_no, n as i64);
            let next = self.b.create_block();
            let edge = self.b.create_block();
            edges.push((edge, self.block(ip as usize)));
            self.b.ins().brif(is, edge, &[], next, &[]);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(first_edge, &[]);
        for (edge, to) in edges {
            self.b.switch_to_block(edge);
            // Read-only as far as Cranelift knows, so that it drops the
            // load where the value is not used: nothing between the
            // function's entry and here stores `Ctx::y`, and no other
            // code loads it.
            let ctx = self.ctx();
            let y = self
                .b
                .ins()
                .load(I64, flags().with_readonly().with_can_move(), ctx, off!(y));
            self.b.def_var(self.vars.y, y);
            self.b.ins().jump(to, &[]);
        }

        self.find_targets(entries);
        let runs = self.float_runs();
        let gets = self.map_get_runs(&runs);
        let mut runs = runs.into_iter().peekable();
        let mut gets = gets.into_iter().peekable();
        let mut ip = self.start;
        while ip < self.end {
            if let Some(run) = runs.next_if(|r| r.start == ip) {
                self.speculate(&run);
                ip = run.end;
            } else if let Some((start, end)) = gets.next_if(|&(s, _)| s == ip) {
                self.map_gets(start, end);
                ip = end;
            } else {
                self.emit(ip);
                ip += 1;
            }
        }
    }

    /// Compiles the instruction at `ip` into its block, and the way on
    /// to the next one.
    fn emit(&mut self, ip: usize) {
        let block = self.block(ip);
        self.b.switch_to_block(block);
        let instr = self.m.get().code[ip];
        if self.targets[ip - self.start]
            || matches!(instr, Instr::Allocate { .. } | Instr::Deallocate {})
        {
            // Another way in, or the Y slots renumbered.
            self.addrs.clear();
            self.matches.clear();
        }
        if !keeps_floats(&instr) {
            self.flush();
        }
        // A fresh map reaches only the instruction its update falls into.
        if self.targets[ip - self.start] {
            self.fresh_map = None;
        }
        if self.instruction(ip, instr) {
            // Kept only if this instruction made it and ends in its block.
            if self
                .fresh_map
                .is_some_and(|f| f.ip != ip || self.b.current_block() != Some(f.done))
            {
                self.fresh_map = None;
            }
            if ip + 1 < self.end {
                if self.targets[ip + 1 - self.start] {
                    self.flush();
                }
                let next = self.block(ip + 1);
                self.b.ins().jump(next, &[]);
            } else {
                self.flush();
                self.exit_at(ip as u32 + 1, exit::BAIL);
            }
        } else {
            // Every way out of the instruction flushed before it left.
            self.fresh_map = None;
            self.pending.clear();
            self.addrs.clear();
            self.matches.clear();
        }
    }

    /// The runs of a map pattern: an `is_type map` of a register followed,
    /// in fall-through code, by `map_get`s of that register with immediate
    /// literal keys and the same failure label (what the compiler makes
    /// of `#{a := A, b := B} = M`). Each run is `start..end`, `start` the
    /// type test; the instruction after it becomes a jump target, where
    /// the run's two versions (`Gen::map_gets`) meet. Runs overlapping a
    /// float run are left alone.
    fn map_get_runs(&mut self, floats: &[FloatRun]) -> Vec<(usize, usize)> {
        let module = self.m.get();
        let code = &module.code;
        let map_get = inline_bifs().map_get;
        let mut runs = Vec::new();
        let mut ip = self.start;
        while ip < self.end {
            let Instr::IsType {
                test: TypeTest::Map,
                src,
                fail,
            } = code[ip]
            else {
                ip += 1;
                continue;
            };
            let mut end = ip + 1;
            while end < self.end && !self.targets[end - self.start] {
                let Instr::Bif {
                    bif,
                    args,
                    dst,
                    fail: f,
                    ..
                } = code[end]
                else {
                    break;
                };
                let [key, map] = [0, 1].map(|i| module.operand_lists[args as usize + i]);
                let immediate_key = key.kind() == SRC_LIT && {
                    let tag = module.literals[key.index()].0 & TAG_MASK;
                    tag != TAG_CONS && tag != TAG_BOXED
                };
                if Some(bif) != map_get
                    || f != fail
                    || map != src
                    || dst.src() == src
                    || !immediate_key
                {
                    break;
                }
                end += 1;
            }
            let overlaps = floats.iter().any(|r| r.start < end && ip < r.end);
            if end > ip + 1 && end < self.end && !overlaps {
                self.targets[end - self.start] = true;
                runs.push((ip, end));
                ip = end;
            } else {
                ip += 1;
            }
        }
        runs
    }

    /// A map pattern (see `map_get_runs`) in two versions: when the map is
    /// a flat map, one dereference and header test, then a scan of its
    /// keys for each `map_get`; any other map (a large one), or no map,
    /// takes the instructions one by one.
    fn map_gets(&mut self, start: usize, end: usize) {
        let code = &self.m.get().code;
        let Instr::IsType { src, fail, .. } = code[start] else {
            unreachable!("a map pattern starts with its type test")
        };
        let gets: Vec<(Src, Dst)> = code[start + 1..end]
            .iter()
            .map(|i| match *i {
                Instr::Bif { args, dst, .. } => (self.m.get().operand_lists[args as usize], dst),
                _ => unreachable!("a map pattern's gets"),
            })
            .collect();
        let head = self.block(start);
        self.b.switch_to_block(head);
        if self.targets[start - self.start] {
            self.addrs.clear();
            self.matches.clear();
        }
        self.flush();
        self.fresh_map = None;
        let saved = (
            self.pending.clone(),
            self.addrs.clone(),
            self.matches.clone(),
        );
        let general = self.b.create_block();
        let check = self.b.create_block();
        let vm = self.get(src);
        let boxed = self.tag_is(vm, TAG_BOXED);
        self.b.ins().brif(boxed, check, &[], general, &[]);
        self.b.switch_to_block(check);
        let (addr, size) = self.flat_map(vm, general);
        let missing = self.b.create_block();
        for (key, dst) in gets {
            let vk = self.get(key);
            let at = self.find_flat_key(addr, size, vk, missing);
            let v = self.b.ins().load(I64, self.mem.heap, at, 0);
            self.put(dst, v);
            self.charge_bif();
        }
        self.flush();
        let next = self.block(end);
        self.b.ins().jump(next, &[]);
        self.b.switch_to_block(missing);
        // The BIF charges a miss too (see `helpers::call_bif`).
        self.charge_bif();
        self.materialize_all();
        let fail = self.fail_target(fail, start);
        self.b.ins().jump(fail, &[]);

        // The general version, from the state before the test.
        (self.pending, self.addrs, self.matches) = saved;
        let at = start - self.start;
        self.blocks[at] = general;
        for ip in start..end {
            self.emit(ip);
        }
        self.blocks[at] = head;
    }

    /// The runs worth a float version: fall-through code from a float
    /// operation (`+ - * /`) on, while the instructions keep floats,
    /// with at least two such operations and some X register they read
    /// as it was at the start that meets a float (`float_suspects`).
    /// The instruction after each run becomes a jump target, so each
    /// version flushes before going on to it.
    fn float_runs(&mut self) -> Vec<FloatRun> {
        let module = self.m.get();
        let code = &module.code;
        let mut runs = Vec::new();
        let mut ip = self.start;
        while ip < self.end {
            if float_operands(&code[ip]).is_none() {
                ip += 1;
                continue;
            }
            let mut end = ip + 1;
            while end < self.end && !self.targets[end - self.start] && keeps_floats(&code[end]) {
                end += 1;
            }
            let ops = code[ip..end]
                .iter()
                .filter(|i| float_operands(i).is_some())
                .count();
            let regs = self.float_suspects(&code[ip..end]);
            if !regs.is_empty() && regs.len() <= 8 && ops >= 2 {
                if end < self.end {
                    self.targets[end - self.start] = true;
                }
                runs.push(FloatRun {
                    start: ip,
                    end,
                    regs,
                    ops,
                });
            }
            ip = end;
        }
        runs
    }

    /// The X registers a run's arithmetic reads, as they were at its
    /// start, that meet a float there: an operand of an operation whose
    /// other operand is a float literal, a float result of the run, or
    /// another such register (found again until nothing changes, since
    /// `Zr * Zr` comes before `2.0 * Zr`). Integer code, even beside a
    /// float literal elsewhere in the run (`1.0 / (I + J)`), has none.
    fn float_suspects(&self, run: &[Instr]) -> Vec<u16> {
        let mut suspects: Vec<u16> = Vec::new();
        loop {
            let before = suspects.len();
            // Registers written so far in the run, and whether each
            // holds a float result now.
            let mut written: Vec<(u16, bool)> = Vec::new();
            for instr in run {
                let is_float = |s: Src, written: &Vec<(u16, bool)>, suspects: &Vec<u16>| {
                    if s.kind() != SRC_X {
                        return self.is_float_literal(s);
                    }
                    let r = s.index() as u16;
                    match written.iter().rev().find(|w| w.0 == r) {
                        Some(&(_, f)) => f,
                        None => suspects.contains(&r),
                    }
                };
                let mut results: Vec<(Dst, bool)> = Vec::new();
                match *instr {
                    Instr::Move { src, dst } => {
                        results.push((dst, is_float(src, &written, &suspects)))
                    }
                    Instr::Move2 { a, to_a, b, to_b } => {
                        results.push((to_a, is_float(a, &written, &suspects)));
                        results.push((to_b, is_float(b, &written, &suspects)));
                    }
                    _ => match float_operands(instr) {
                        Some((a, b)) => {
                            let float = is_float(a, &written, &suspects)
                                || is_float(b, &written, &suspects);
                            if float {
                                for s in [a, b] {
                                    let r = s.index() as u16;
                                    if s.kind() == SRC_X
                                        && !written.iter().any(|w| w.0 == r)
                                        && !suspects.contains(&r)
                                    {
                                        suspects.push(r);
                                    }
                                }
                            }
                            instr.visit_operands(&mut |o| {
                                if let crate::code::Operands::Dst(d) = o {
                                    results.push((d, float));
                                }
                            });
                        }
                        None => instr.visit_operands(&mut |o| {
                            if let crate::code::Operands::Dst(d) = o {
                                results.push((d, false));
                            }
                        }),
                    },
                }
                for (d, float) in results {
                    if !d.is_y() {
                        written.push((d.index() as u16, float));
                    }
                }
            }
            if suspects.len() == before {
                return suspects;
            }
        }
    }

    /// Compiles `run` twice behind a guard: when every register in
    /// `run.regs` holds a boxed float, a version where they are known
    /// floats (unboxed once here, their arithmetic with no integer
    /// paths and no type tests); otherwise the general version. This is
    /// what makes float loops such as mandelbrot's cheap: a function
    /// receives its floats boxed, and without the guard each operation
    /// would test its operands' types again. Both versions end by
    /// flushing before the instruction after the run (a jump target).
    fn speculate(&mut self, run: &FloatRun) {
        let (s, e) = (run.start - self.start, run.end - self.start);
        // The guard goes in the run's own block (the way in from before);
        // `emit` clears what a jump target invalidates, in each version.
        let block = self.blocks[s];
        self.b.switch_to_block(block);
        // A register holding a pending float holds `[]`, not a box.
        let regs: Vec<u16> = run
            .regs
            .iter()
            .copied()
            .filter(|&r| self.pending_of(Src::x(r as u32)).is_none())
            .collect();
        if regs.is_empty() {
            for ip in run.start..run.end {
                self.emit(ip);
            }
            return;
        }
        // Room for every box the run may make (a result and its flush),
        // made here where a collection is safe: the registers hold terms
        // and the pending floats (none here) would be lost to a bail-out.
        // Boxing with a full heap would grow it instead (`box_float`).
        if self.pending.is_empty() {
            self.test_heap(run.start, (4 * run.ops) as i64);
        }
        let originals = self.blocks[s..e].to_vec();
        let general = self.b.create_block();
        let mut floats = Vec::with_capacity(regs.len());
        for &r in &regs {
            let v = self.get(Src::x(r as u32));
            let boxed = self.tag_is(v, TAG_BOXED);
            let check = self.b.create_block();
            self.b.ins().brif(boxed, check, &[], general, &[]);
            self.b.switch_to_block(check);
            let addr = self.deref(v);
            let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
            let is_float =
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, h, header(Kind::Float, 1).0 as i64);
            let unbox = self.b.create_block();
            self.b.ins().brif(is_float, unbox, &[], general, &[]);
            self.b.switch_to_block(unbox);
            let f = self.b.ins().load(types::F64, self.mem.heap, addr, 8);
            floats.push((r, f));
        }
        let yes = self.b.ins().iconst(types::I8, 1);
        let saved = (
            self.pending.clone(),
            self.addrs.clone(),
            self.matches.clone(),
        );

        // The float version.
        for i in s..e {
            self.blocks[i] = self.b.create_block();
        }
        let first = self.blocks[s];
        self.b.ins().jump(first, &[]);
        for (reg, f) in floats {
            self.pending.push(Pending {
                reg,
                f,
                isf: yes,
                known: true,
                boxed: true,
            });
        }
        for ip in run.start..run.end {
            self.emit(ip);
        }

        // The general version, from the state before the guard.
        (self.pending, self.addrs, self.matches) = saved;
        for i in s..e {
            self.blocks[i] = self.b.create_block();
        }
        self.b.switch_to_block(general);
        let first = self.blocks[s];
        self.b.ins().jump(first, &[]);
        for ip in run.start..run.end {
            self.emit(ip);
        }
        self.blocks[s..e].copy_from_slice(&originals);
    }

    fn find_targets(&mut self, entries: &[u32]) {
        let module = self.m.get();
        let (start, end) = (self.start, self.end);
        let mark = |l: Label, targets: &mut Vec<bool>| {
            let ip = l.0 as usize;
            if (start..end).contains(&ip) {
                targets[ip - start] = true;
            }
        };
        for &e in entries {
            mark(Label(e), &mut self.targets);
        }
        for instr in &module.code[start..end] {
            instr.visit_operands(&mut |o| {
                if let crate::code::Operands::Label(l) = o {
                    mark(l, &mut self.targets);
                }
            });
            if let Instr::SelectVal { table, .. } | Instr::SelectTupleArity { table, .. } = instr {
                for &l in &module.select_tables[*table as usize].targets {
                    mark(l, &mut self.targets);
                }
            }
        }
    }

    // Unboxed floats.

    fn pending_of(&self, s: Src) -> Option<Pending> {
        if s.kind() != SRC_X {
            return None;
        }
        self.pending
            .iter()
            .rev()
            .find(|p| p.reg as usize == s.index())
            .copied()
    }

    /// `d` is written: what it held before is no longer pending.
    fn forget(&mut self, d: Dst) {
        if !d.is_y() {
            self.pending.retain(|p| p.reg as usize != d.index());
        }
    }

    /// Boxes `p`'s float into its register if it is one (the entry
    /// stays: the register then holds a box of it, which is allowed).
    fn materialize(&mut self, p: Pending) {
        if p.boxed {
            return;
        }
        if p.known {
            let t = self.box_float(p.f);
            self.store_reg(Dst::x(p.reg), t);
            return;
        }
        let boxing = self.b.create_block();
        let join = self.b.create_block();
        self.b.ins().brif(p.isf, boxing, &[], join, &[]);
        self.b.switch_to_block(boxing);
        let t = self.box_float(p.f);
        self.store_reg(Dst::x(p.reg), t);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    /// Boxes the pending values among `srcs` into their registers.
    fn materialize_srcs(&mut self, srcs: &[Src]) {
        for &s in srcs {
            if let Some(p) = self.pending_of(s) {
                self.materialize(p);
            }
        }
    }

    /// Boxes every pending value, keeping the entries (for a side path
    /// that leaves the run: a failure, a bail-out, a helper).
    fn materialize_all(&mut self) {
        for p in self.pending.clone() {
            self.materialize(p);
        }
    }

    /// Boxes every pending value and ends their run: before anything
    /// that may look at registers other than as float operands.
    fn flush(&mut self) {
        self.materialize_all();
        self.pending.clear();
    }

    /// A box of `f` at the heap top, or through the helper when the heap
    /// is full (it grows; no collection between safepoints).
    fn box_float(&mut self, f: Value) -> Value {
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        let join = self.b.create_block();
        let t = self.b.append_block_param(join, I64);
        let top = self.bump_within(crate::heap::FLOAT_WORDS, slow);
        let h = self.konst(header(Kind::Float, 1));
        self.b.ins().store(self.mem.heap, h, top, 0);
        self.b.ins().store(self.mem.heap, f, top, 8);
        let boxed = self.pointer(top, TAG_BOXED);
        self.b.ins().jump(join, &[BlockArg::Value(boxed)]);
        self.b.switch_to_block(slow);
        let sig = self.sigs.box_float;
        let ctx = self.ctx();
        let r = self
            .call(sig, helpers::box_float as *const () as usize, &[ctx, f])
            .expect("box_float returns");
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        t
    }

    // Operands.

    fn get(&mut self, s: Src) -> Value {
        match s.kind() {
            SRC_X => {
                let i = (s.index() & (X_REGISTERS - 1)) as i32;
                let f = self.mem.region(self.b.func, Kind8::X, i as u32);
                let xs = self.xs();
                self.b.ins().load(I64, f, xs, i * 8)
            }
            SRC_Y => {
                let y = self.ybase();
                let f = self.mem.region(self.b.func, Kind8::Y, s.index() as u32);
                self.b.ins().load(I64, f, y, s.index() as i32 * 8)
            }
            _ => {
                let t = self.m.get().literals[s.index()];
                self.b.ins().iconst(I64, t.0 as i64)
            }
        }
    }

    fn put(&mut self, d: Dst, v: Value) {
        self.forget(d);
        self.store_reg(d, v);
    }

    /// Stores into a register without touching the pending floats.
    fn store_reg(&mut self, d: Dst, v: Value) {
        let written = d.src();
        self.addrs.retain(|(r, ..)| *r != written);
        self.matches.retain(|m| m.bin != written);
        if d.is_y() {
            let y = self.ybase();
            let f = self.mem.region(self.b.func, Kind8::Y, d.index() as u32);
            self.b.ins().store(f, v, y, d.index() as i32 * 8);
        } else {
            let i = (d.index() & (X_REGISTERS - 1)) as i32;
            let f = self.mem.region(self.b.func, Kind8::X, i as u32);
            let xs = self.xs();
            self.b.ins().store(f, v, xs, i * 8);
        }
    }

    fn konst(&mut self, t: Term) -> Value {
        self.b.ins().iconst(I64, t.0 as i64)
    }

    // Exits and helper calls.

    /// Says how many X registers are live where the process stops to
    /// wait (`Ctx::live`, which `native::run` hands to the process).
    fn set_live(&mut self, live: u16) {
        let v = self.b.ins().iconst(I32, i64::from(live));
        self.store_ctx(v, off!(live));
    }

    /// Stores `ip` as where to go on and returns `code`.
    fn exit_at(&mut self, ip: u32, code: u32) {
        let v = self.b.ins().iconst(I32, ip as i64);
        self.store_ctx(v, off!(ip));
        let c = self.b.ins().iconst(I32, code as i64);
        self.b.ins().return_(&[c]);
    }

    fn call(&mut self, sig: SigRef, f: usize, args: &[Value]) -> Option<Value> {
        self.epoch += 1;
        let callee = self.b.ins().iconst(I64, f as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call).first().copied()
    }

    /// A block that bails out at `ip`, made without leaving the current one.
    fn bail_block(&mut self, ip: u32) -> Block {
        let bail = self.b.create_block();
        self.b.set_cold_block(bail);
        let here = self.b.current_block();
        self.b.switch_to_block(bail);
        self.exit_at(ip, exit::BAIL);
        if let Some(h) = here {
            self.b.switch_to_block(h);
        }
        bail
    }

    /// Branches to a new block that bails out at `ip` when `cond` holds,
    /// and goes on in a fresh block otherwise.
    fn bail_if(&mut self, cond: Value, ip: usize) {
        let bail = self.b.create_block();
        self.b.set_cold_block(bail);
        let go_on = self.b.create_block();
        self.b.ins().brif(cond, bail, &[], go_on, &[]);
        self.b.switch_to_block(bail);
        self.exit_at(ip as u32, exit::BAIL);
        self.b.switch_to_block(go_on);
    }

    /// Where a failed test or operation goes: its fail label, or with
    /// none a bail-out, so that the interpreter runs it again and raises.
    fn fail_target(&mut self, fail: Label, ip: usize) -> Block {
        if fail == Label::RAISE {
            self.bail_block(ip as u32)
        } else {
            self.target(fail)
        }
    }

    /// `cond` true goes on; false jumps to `fail`.
    fn branch(&mut self, cond: Value, fail: Label, ip: usize) {
        let go_on = self.b.create_block();
        let fail = self.fail_target(fail, ip);
        self.b.ins().brif(cond, go_on, &[], fail, &[]);
        self.b.switch_to_block(go_on);
    }

    /// The address of the words of a cons or boxed term.
    fn deref(&mut self, v: Value) -> Value {
        let lit = self.b.ins().band_imm_s(v, LITERAL_BIT as i64);
        let off = self.b.ins().ushr_imm_s(v, 4);
        let heap = self.b.create_block();
        let literal = self.b.create_block();
        self.b.set_cold_block(literal);
        let join = self.b.create_block();
        let addr = self.b.append_block_param(join, I64);
        self.b.ins().brif(lit, literal, &[], heap, &[]);
        self.b.switch_to_block(heap);
        let base = self.load_ctx(off!(hbase));
        let bytes = self.b.ins().ishl_imm_s(off, 3);
        let a = self.b.ins().iadd(base, bytes);
        self.b.ins().jump(join, &[BlockArg::Value(a)]);
        self.b.switch_to_block(literal);
        // The literal area's block table, two loads deep (see
        // `term::literal::bases`); its entries never change.
        use crate::term::literal as lit;
        let bases = self.b.ins().iconst(I64, lit::bases() as i64);
        let dir = self.b.ins().ushr_imm_s(off, lit::DIRECTORY_SHIFT as i64);
        let dir = self.b.ins().ishl_imm_s(dir, 3);
        let dir = self.b.ins().iadd(bases, dir);
        let dir = self.b.ins().load(I64, flags(), dir, 0);
        let block = self.b.ins().ushr_imm_s(off, lit::BLOCK_SHIFT as i64);
        let block = self.b.ins().band_imm_s(block, lit::BLOCK_MASK as i64);
        let block = self.b.ins().ishl_imm_s(block, 3);
        let block = self.b.ins().iadd(dir, block);
        let base = self.b.ins().load(I64, flags(), block, 0);
        let index = self.b.ins().band_imm_s(off, lit::INDEX_MASK as i64);
        let index = self.b.ins().ishl_imm_s(index, 3);
        let a = self.b.ins().iadd(base, index);
        self.b.ins().jump(join, &[BlockArg::Value(a)]);
        self.b.switch_to_block(join);
        addr
    }

    /// `deref` of the term `v` read from `s`, once per run of fall-through
    /// code while `s` and the heap stay as they are.
    fn addr_of(&mut self, s: Src, v: Value) -> Value {
        let register = s.kind() == SRC_X || s.kind() == SRC_Y;
        if register
            && let Some(&(_, a, _)) = self
                .addrs
                .iter()
                .find(|&&(r, _, e)| r == s && e == self.epoch)
        {
            return a;
        }
        let a = self.deref(v);
        if register {
            self.addrs.retain(|(r, ..)| *r != s);
            self.addrs.push((s, a, self.epoch));
        }
        a
    }

    /// Goes on when `v` (read from `s`) points at an object with header
    /// `want`, else to `fail`; returns the object's address.
    fn test_boxed_header(&mut self, s: Src, v: Value, want: Term, fail: Label, ip: usize) -> Value {
        let is_boxed = self.tag_is(v, TAG_BOXED);
        let check = self.b.create_block();
        let fail = self.fail_target(fail, ip);
        self.b.ins().brif(is_boxed, check, &[], fail, &[]);
        self.b.switch_to_block(check);
        let addr = self.addr_of(s, v);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let yes = self.b.ins().icmp_imm_s(IntCC::Equal, h, want.0 as i64);
        let go_on = self.b.create_block();
        self.b.ins().brif(yes, go_on, &[], fail, &[]);
        self.b.switch_to_block(go_on);
        addr
    }

    fn tag_is(&mut self, v: Value, tag: u64) -> Value {
        let t = self.b.ins().band_imm_s(v, TAG_MASK as i64);
        self.b.ins().icmp_imm_s(IntCC::Equal, t, tag as i64)
    }

    /// The value of `s` when it is a small-integer literal.
    fn small_literal(&self, s: Src) -> Option<i64> {
        if s.kind() == SRC_X || s.kind() == SRC_Y {
            return None;
        }
        self.m.get().literals[s.index()].as_small()
    }

    /// Whether `s` holds a float on every path here: a float literal or
    /// a pending float known to be one.
    fn known_float(&self, s: Src) -> bool {
        self.is_float_literal(s) || self.pending_of(s).is_some_and(|p| p.known)
    }

    /// `+ - * /` with an operand known to be a float: the result is a
    /// float or the operation fails, so there is no integer path and
    /// the result is a known pending float (boxed at once for a Y slot).
    /// What the inline path does not cover (a bignum operand, an
    /// infinite result, a non-number) goes through the helper, whose
    /// result, when it has one, is a boxed float and is unboxed here.
    fn float_only_arith(
        &mut self,
        ip: usize,
        op: u32,
        a: Src,
        b: Src,
        fail: Label,
        dst: Dst,
    ) -> bool {
        let va = self.get(a);
        let vb = self.get(b);
        let general = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, types::F64);
        let fa = self.float_of(a, va, general);
        let fb = if a == b {
            fa
        } else {
            self.float_of(b, vb, general)
        };
        let r = match op {
            0 => self.b.ins().fadd(fa, fb),
            1 => self.b.ins().fsub(fa, fb),
            2 => self.b.ins().fmul(fa, fb),
            _ => self.b.ins().fdiv(fa, fb),
        };
        // Finite: r - r is 0.0 (it is NaN for infinities and NaN).
        let d = self.b.ins().fsub(r, r);
        let zero = self.b.ins().f64const(0.0);
        let finite = self.b.ins().fcmp(FloatCC::Equal, d, zero);
        self.b
            .ins()
            .brif(finite, done, &[BlockArg::Value(r)], general, &[]);
        self.b.switch_to_block(general);
        self.materialize_all();
        let (va, vb) = (self.get(a), self.get(b));
        let opv = self.b.ins().iconst(I32, op as i64);
        let sig = self.sigs.arith;
        let ctx = self.ctx();
        let t = self
            .call(
                sig,
                helpers::arith as *const () as usize,
                &[ctx, opv, va, vb],
            )
            .unwrap();
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, t, 0);
        let failure = self.fail_target(fail, ip);
        let unbox = self.b.create_block();
        self.b.ins().brif(failed, failure, &[], unbox, &[]);
        self.b.switch_to_block(unbox);
        let addr = self.deref(t);
        let f = self.b.ins().load(types::F64, self.mem.heap, addr, 8);
        self.b.ins().jump(done, &[BlockArg::Value(f)]);
        self.b.switch_to_block(done);
        if dst.is_y() {
            let t = self.box_float(result);
            self.put(dst, t);
        } else {
            let nil = self.konst(Term::NIL);
            self.put(dst, nil);
            let yes = self.b.ins().iconst(types::I8, 1);
            self.pending.push(Pending {
                reg: dst.index() as u16,
                f: result,
                isf: yes,
                known: true,
                boxed: false,
            });
        }
        true
    }

    /// Whether `s` is a float literal.
    fn is_float_literal(&self, s: Src) -> bool {
        if s.kind() == SRC_X || s.kind() == SRC_Y {
            return false;
        }
        let t = self.m.get().literals[s.index()];
        t.is_boxed()
            && t.is_literal()
            && crate::term::literal::words_from(t.offset()).first() == Some(&header(Kind::Float, 1))
    }

    /// Whether both operands are small integers; a literal operand known
    /// to be one (`k`) is not tested.
    fn small_operands(
        &mut self,
        (a, ka): (Value, Option<i64>),
        (b, kb): (Value, Option<i64>),
    ) -> Value {
        match (ka.is_some(), kb.is_some()) {
            (true, true) => self.b.ins().iconst(types::I8, 1),
            (true, false) => self.tag_is(b, TAG_SMALL),
            (false, true) => self.tag_is(a, TAG_SMALL),
            (false, false) => self.both_small(a, b),
        }
    }

    /// Whether the instruction after `ip` reads pending floats as they are
    /// (so a float result is worth keeping unboxed for it).
    fn next_keeps_floats(&self, ip: usize) -> bool {
        let next = ip + 1;
        next < self.end
            && !self.targets[next - self.start]
            && keeps_floats(&self.m.get().code[next])
    }

    /// Whether both words are small integers.
    fn both_small(&mut self, a: Value, b: Value) -> Value {
        let x = self.b.ins().bxor_imm_s(a, TAG_SMALL as i64);
        let y = self.b.ins().bxor_imm_s(b, TAG_SMALL as i64);
        let o = self.b.ins().bor(x, y);
        let t = self.b.ins().band_imm_s(o, TAG_MASK as i64);
        self.b.ins().icmp_imm_s(IntCC::Equal, t, 0)
    }

    /// Whether `v` is an immediate (not a cons or boxed pointer).
    fn is_immediate(&mut self, v: Value) -> Value {
        // Tags 1 (cons) and 2 (boxed): (tag - 1) < 2 unsigned.
        let t = self.b.ins().band_imm_s(v, TAG_MASK as i64);
        let t1 = self.b.ins().iadd_imm_s(t, -1);
        self.b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, t1, 2)
    }

    /// Allocates `words` at the heap top (ensured by a heap test before)
    /// and returns their address.
    fn bump(&mut self, words: usize) -> Value {
        let top = self.load_ctx(off!(htop));
        let new = self.b.ins().iadd_imm_s(top, words as i64 * 8);
        self.store_ctx(new, off!(htop));
        top
    }

    /// `bump`, when the heap has room for `words`; else to `full`.
    fn bump_within(&mut self, words: usize, full: Block) -> Value {
        let top = self.load_ctx(off!(htop));
        let limit = self.load_ctx(off!(hlimit));
        let new = self.b.ins().iadd_imm_s(top, words as i64 * 8);
        let room = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, new, limit);
        let store = self.b.create_block();
        self.b.ins().brif(room, store, &[], full, &[]);
        self.b.switch_to_block(store);
        self.store_ctx(new, off!(htop));
        top
    }

    /// Makes `words` words free on the heap, collecting through the
    /// helper when they are not (`test_heap`; a failure bails out at `ip`).
    fn test_heap(&mut self, ip: usize, words: i64) {
        let top = self.load_ctx(off!(htop));
        let limit = self.load_ctx(off!(hlimit));
        let free = self.b.ins().isub(limit, top);
        let enough = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, free, words * 8);
        let collect = self.b.create_block();
        self.b.set_cold_block(collect);
        let go_on = self.b.create_block();
        self.b.ins().brif(enough, go_on, &[], collect, &[]);
        self.b.switch_to_block(collect);
        let w = self.b.ins().iconst(I64, words);
        let sig = self.sigs.ctx_word;
        let f = helpers::test_heap as *const () as usize;
        let ctx = self.ctx();
        self.call_or_bail(ip, sig, f, &[ctx, w]);
        self.b.ins().jump(go_on, &[]);
        self.b.switch_to_block(go_on);
    }

    /// The term pointing at heap address `addr` with `tag`.
    fn pointer(&mut self, addr: Value, tag: u64) -> Value {
        let base = self.load_ctx(off!(hbase));
        let bytes = self.b.ins().isub(addr, base);
        // offset << 4 == bytes << 1
        let shifted = self.b.ins().ishl_imm_s(bytes, 1);
        self.b.ins().bor_imm_s(shifted, tag as i64)
    }

    // Instructions. Each returns whether control falls through.

    fn instruction(&mut self, ip: usize, instr: Instr) -> bool {
        match instr {
            Instr::FuncInfo { .. } => {
                self.exit_at(ip as u32, exit::BAIL);
                false
            }
            Instr::Move { src, dst } => {
                self.move_reg(src, dst);
                true
            }
            Instr::Move2 { a, to_a, b, to_b } => {
                self.move_reg(a, to_a);
                self.move_reg(b, to_b);
                true
            }
            Instr::Swap { a, b } => {
                let va = self.get(a.src());
                let vb = self.get(b.src());
                self.put(a, vb);
                self.put(b, va);
                true
            }
            Instr::Jump { to } => {
                let t = self.target(to);
                self.b.ins().jump(t, &[]);
                false
            }
            Instr::Allocate { slots, .. } => {
                self.allocate(ip, slots as usize);
                true
            }
            Instr::Deallocate {} => {
                self.deallocate();
                true
            }
            Instr::Return {} => {
                self.do_return();
                false
            }
            Instr::DeallocateReturn {} => {
                self.deallocate();
                self.do_return();
                false
            }
            Instr::TestHeap { words, .. } => {
                self.test_heap(ip, words as i64);
                true
            }
            Instr::Call { arity, target } => {
                self.local_call(ip, arity, target, false, false);
                true
            }
            Instr::CallLast { arity, target } => {
                self.local_call(ip, arity, target, true, true);
                false
            }
            Instr::CallOnly { arity, target } => {
                self.local_call(ip, arity, target, true, false);
                false
            }
            Instr::CallFun { arity, tail } => {
                self.fun_call(ip, arity, tail);
                tail == Tail::No
            }
            Instr::CallExt { .. } | Instr::Apply { tail: Tail::No, .. } => {
                self.remote_call(ip, false);
                true
            }
            Instr::CallExtLast { .. } | Instr::CallExtOnly { .. } | Instr::Apply { .. } => {
                self.remote_call(ip, true);
                false
            }
            Instr::Bif { bif, args, dst, .. } if is_sqrt(bif) => {
                let src = self.m.get().operand_lists[args as usize];
                self.sqrt(ip, instr, src, dst);
                true
            }
            Instr::Bif {
                bif,
                args,
                fail,
                dst,
                ..
            } if Some(bif) == inline_bifs().element || Some(bif) == inline_bifs().tuple_size => {
                let module = self.m.get();
                let element = Some(bif) == inline_bifs().element;
                let operands: Vec<Src> = module.operand_lists
                    [args as usize..args as usize + if element { 2 } else { 1 }]
                    .to_vec();
                self.tuple_bif(ip, fail, &operands, dst);
                true
            }
            Instr::Bif {
                bif,
                args,
                fail,
                dst,
                ..
            } if inline_bifs().one_operand(bif).is_some() => {
                let a = self.m.get().operand_lists[args as usize];
                let which = inline_bifs().one_operand(bif).expect("the guard found it");
                self.one_operand(ip, fail, which, a, dst);
                true
            }
            Instr::Bif {
                bif,
                args,
                fail,
                dst,
                ..
            } if inline_bifs().two_operands(bif).is_some() => {
                let (a, b) = self.two_operands(args);
                match inline_bifs().two_operands(bif) {
                    Some(Inline2::Max) => self.min_max(ip, fail, a, b, dst, true),
                    Some(Inline2::Min) => self.min_max(ip, fail, a, b, dst, false),
                    Some(Inline2::Append) => self.append(ip, fail, a, b, dst),
                    Some(Inline2::MapGet) => self.map_get(ip, fail, a, b, dst, None, false),
                    Some(Inline2::Send) => self.send(ip, fail, a, b, dst),
                    None => unreachable!("the guard found it"),
                }
                true
            }
            Instr::Bif {
                bif,
                args,
                fail,
                dst,
                ..
            } if Some(bif) == inline_bifs().map_update1
                || Some(bif) == inline_bifs().map_update1_chain =>
            {
                let module = self.m.get();
                let [key, value, map] =
                    std::array::from_fn(|i| module.operand_lists[args as usize + i]);
                let chained = Some(bif) == inline_bifs().map_update1_chain;
                self.map_get(ip, fail, key, map, dst, Some(value), chained);
                true
            }
            // `self()`: the running process's pid, kept in the context;
            // it costs the reductions of a BIF call, as in the interpreter
            // (the deterministic clock counts them).
            Instr::Bif { bif, dst, .. } if Some(bif) == inline_bifs().self_ => {
                let v = self.load_ctx(off!(self_pid));
                self.charge_bif();
                self.put(dst, v);
                true
            }
            Instr::Bif { fail, .. } => {
                self.bif_call(ip, fail);
                true
            }
            Instr::Add { a, b, fail, dst } => self.arith(ip, 0, a, b, fail, dst),
            Instr::Sub { a, b, fail, dst } => self.arith(ip, 1, a, b, fail, dst),
            Instr::Mul { a, b, fail, dst } => self.arith(ip, 2, a, b, fail, dst),
            Instr::Arith {
                op,
                a,
                b,
                fail,
                dst,
            } => {
                let n = match op {
                    crate::code::ArithOp::Div => 3,
                    crate::code::ArithOp::IntDiv => 4,
                    crate::code::ArithOp::Rem => 5,
                    crate::code::ArithOp::Band => 6,
                    crate::code::ArithOp::Bor => 7,
                    crate::code::ArithOp::Bxor => 8,
                    crate::code::ArithOp::Bsl => 9,
                    crate::code::ArithOp::Bsr => 10,
                };
                self.arith(ip, n, a, b, fail, dst)
            }
            Instr::Compare { op, a, b, dst } => {
                self.materialize_for_compare(op, a, b);
                let va = self.get(a);
                let vb = self.get(b);
                let r = self.comparison(op, (a, va), (b, vb));
                let t = self.konst(Term::TRUE);
                let f = self.konst(Term::FALSE);
                let v = self.b.ins().select(r, t, f);
                self.put(dst, v);
                true
            }
            Instr::IsLt { a, b, fail } => self.cmp_test(ip, CmpOp::Lt, a, b, fail),
            Instr::IsGe { a, b, fail } => self.cmp_test(ip, CmpOp::Ge, a, b, fail),
            Instr::IsEq { a, b, fail } => self.cmp_test(ip, CmpOp::Eq, a, b, fail),
            Instr::IsNe { a, b, fail } => self.cmp_test(ip, CmpOp::Ne, a, b, fail),
            Instr::IsEqExact { a, b, fail } => self.cmp_test(ip, CmpOp::ExactEq, a, b, fail),
            Instr::IsNeExact { a, b, fail } => self.cmp_test(ip, CmpOp::ExactNe, a, b, fail),
            Instr::IsType { test, src, fail } => {
                let v = self.get(src);
                let r = self.type_test(test, v);
                self.branch(r, fail, ip);
                true
            }
            Instr::IsFunction2 { src, arity, fail } => {
                let v = self.get(src);
                let a = self.get(arity);
                let sig = self.sigs.cmp;
                let f = helpers::is_function2 as *const () as usize;
                let ctx = self.ctx();
                let r = self.call(sig, f, &[ctx, v, a]).unwrap();
                let r = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.branch(r, fail, ip);
                true
            }
            Instr::IsTuple { src, arity, fail } => {
                let v = self.get(src);
                self.test_boxed_header(src, v, header(Kind::Tuple, arity as usize), fail, ip);
                true
            }
            Instr::IsTaggedTuple {
                src,
                arity,
                tag,
                fail,
            } => {
                let v = self.get(src);
                let want = header(Kind::Tuple, arity as usize);
                let addr = self.test_boxed_header(src, v, want, fail, ip);
                let first = self.b.ins().load(I64, self.mem.heap, addr, 8);
                let want = Term::atom(tag).0 as i64;
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, first, want);
                self.branch(r, fail, ip);
                true
            }
            Instr::IsCons { src, fail } => {
                let v = self.get(src);
                let r = self.tag_is(v, TAG_CONS);
                self.branch(r, fail, ip);
                true
            }
            Instr::IsNil { src, fail } => {
                let v = self.get(src);
                let r = self.b.ins().icmp_imm_s(IntCC::Equal, v, Term::NIL.0 as i64);
                self.branch(r, fail, ip);
                true
            }
            Instr::SelectVal { src, table, fail } => {
                let t = &self.m.get().select_tables[table as usize];
                if t.values.iter().any(|v| !v.is_immediate()) {
                    self.exit_at(ip as u32, exit::BAIL);
                    return false;
                }
                let pairs: Vec<(Term, Label)> = t
                    .values
                    .iter()
                    .copied()
                    .zip(t.targets.iter().copied())
                    .collect();
                let v = self.get(src);
                for (value, to) in pairs {
                    let is = self.b.ins().icmp_imm_s(IntCC::Equal, v, value.0 as i64);
                    let next = self.b.create_block();
                    let to = self.target(to);
                    self.b.ins().brif(is, to, &[], next, &[]);
                    self.b.switch_to_block(next);
                }
                if fail == Label::RAISE {
                    self.exit_at(ip as u32, exit::BAIL);
                } else {
                    let f = self.target(fail);
                    self.b.ins().jump(f, &[]);
                }
                false
            }
            Instr::SelectTupleArity { src, table, fail } => {
                let t = &self.m.get().select_tables[table as usize];
                let pairs: Vec<(Term, Label)> = t
                    .values
                    .iter()
                    .copied()
                    .zip(t.targets.iter().copied())
                    .collect();
                let fail_block = self.fail_target(fail, ip);
                let v = self.get(src);
                let boxed = self.tag_is(v, TAG_BOXED);
                let check = self.b.create_block();
                self.b.ins().brif(boxed, check, &[], fail_block, &[]);
                self.b.switch_to_block(check);
                // A tuple's header says its arity: compare whole headers.
                let addr = self.deref(v);
                let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
                for (arity, to) in pairs {
                    let Some(n) = arity.as_small().filter(|&n| n >= 0) else {
                        continue;
                    };
                    let want = header(Kind::Tuple, n as usize).0 as i64;
                    let is = self.b.ins().icmp_imm_s(IntCC::Equal, h, want);
                    let next = self.b.create_block();
                    let to = self.target(to);
                    self.b.ins().brif(is, to, &[], next, &[]);
                    self.b.switch_to_block(next);
                }
                self.b.ins().jump(fail_block, &[]);
                false
            }
            Instr::GetList { src, head, tail } => {
                self.materialize_srcs(&[src]);
                let v = self.get(src);
                self.get_list(src, v, head, tail);
                true
            }
            Instr::IsConsGetList {
                src,
                fail,
                head,
                tail,
            } => {
                let v = self.get(src);
                let r = self.tag_is(v, TAG_CONS);
                self.branch(r, fail, ip);
                self.get_list(src, v, head, tail);
                true
            }
            Instr::GetHd { src, dst } => {
                self.materialize_srcs(&[src]);
                let v = self.get(src);
                let addr = self.addr_of(src, v);
                let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
                self.put(dst, h);
                true
            }
            Instr::GetTl { src, dst } => {
                self.materialize_srcs(&[src]);
                let v = self.get(src);
                let addr = self.addr_of(src, v);
                let t = self.b.ins().load(I64, self.mem.heap, addr, 8);
                self.put(dst, t);
                true
            }
            Instr::GetTupleElement { src, index, dst } => {
                self.materialize_srcs(&[src]);
                let v = self.get(src);
                let addr = self.addr_of(src, v);
                let e = self
                    .b
                    .ins()
                    .load(I64, self.mem.heap, addr, (index as i32 + 1) * 8);
                self.put(dst, e);
                true
            }
            Instr::PutList { head, tail, dst } => {
                let h = self.get(head);
                let t = self.get(tail);
                let addr = self.bump(2);
                self.b.ins().store(self.mem.heap, h, addr, 0);
                self.b.ins().store(self.mem.heap, t, addr, 8);
                let v = self.pointer(addr, TAG_CONS);
                self.put(dst, v);
                true
            }
            Instr::PutTuple {
                arity,
                elements,
                dst,
            } => {
                let module = self.m.get();
                let srcs: Vec<Src> = module.operand_lists
                    [elements as usize..elements as usize + arity as usize]
                    .to_vec();
                let values: Vec<Value> = srcs.iter().map(|&s| self.get(s)).collect();
                let addr = self.bump(arity as usize + 1);
                let h = self.konst(header(Kind::Tuple, arity as usize));
                self.b.ins().store(self.mem.heap, h, addr, 0);
                for (i, v) in values.into_iter().enumerate() {
                    self.b
                        .ins()
                        .store(self.mem.heap, v, addr, (i as i32 + 1) * 8);
                }
                let v = self.pointer(addr, TAG_BOXED);
                self.put(dst, v);
                true
            }
            // A closure: header, fun-table index, captured terms, bumped
            // at the heap top (the compiler put a heap test before it).
            Instr::MakeFun { fun, captured, dst } => {
                let module = self.m.get();
                let free = module.funs[fun as usize].free as usize;
                let index = module.fun_base + fun;
                let srcs: Vec<Src> =
                    module.operand_lists[captured as usize..captured as usize + free].to_vec();
                let values: Vec<Value> = srcs.iter().map(|&s| self.get(s)).collect();
                let addr = self.bump(free + 2);
                let h = self.konst(header(Kind::Fun, 1 + free));
                self.b.ins().store(self.mem.heap, h, addr, 0);
                let i = self.b.ins().iconst(I64, index as i64);
                self.b.ins().store(self.mem.heap, i, addr, 8);
                for (k, v) in values.into_iter().enumerate() {
                    self.b
                        .ins()
                        .store(self.mem.heap, v, addr, (k as i32 + 2) * 8);
                }
                let v = self.pointer(addr, TAG_BOXED);
                self.put(dst, v);
                true
            }
            Instr::LoopRec { fail, dst } => {
                let sig = self.sigs.unary;
                let f = helpers::loop_rec as *const () as usize;
                let ctx = self.ctx();
                let m = self.call(sig, f, &[ctx]).expect("loop_rec returns");
                let some = self.b.ins().icmp_imm_s(IntCC::NotEqual, m, 0);
                self.branch(some, fail, ip);
                self.put(dst, m);
                true
            }
            Instr::LoopRecEnd { to } => {
                let f = helpers::loop_rec_end as *const () as usize;
                let ctx = self.ctx();
                self.call(self.sigs.ctx_ret, f, &[ctx]);
                let t = self.target(to);
                self.b.ins().jump(t, &[]);
                false
            }
            Instr::RemoveMessage {} => {
                let f = helpers::remove_message as *const () as usize;
                let ctx = self.ctx();
                self.call(self.sigs.ctx_ret, f, &[ctx]);
                true
            }
            Instr::Timeout {} => {
                let f = helpers::receive_timeout as *const () as usize;
                let ctx = self.ctx();
                self.call(self.sigs.ctx_ret, f, &[ctx]);
                true
            }
            Instr::Wait { to, live } => {
                self.set_live(live);
                self.exit_at(to.0, exit::WAIT);
                false
            }
            Instr::WaitTimeout { to, timeout, live } => {
                self.set_live(live);
                self.wait_timeout(ip, to, timeout);
                true
            }
            // A `try` or `catch` pushes its entry on the process's catch
            // stack and pops it at the end; the exception itself is the
            // interpreter's (native code bails out before the failing
            // instruction, and the interpreter unwinds to the handler).
            Instr::Try { .. } | Instr::Catch { .. } => {
                let at = self.b.ins().iconst(I32, ip as i64);
                let f = helpers::push_catch as *const () as usize;
                let sig = self.sigs.ctx_u32_word;
                let ctx = self.ctx();
                let depth = self.depth();
                let status = self.call(sig, f, &[ctx, at, depth]).unwrap();
                let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, status, 0);
                self.bail_if(bad, ip);
                true
            }
            Instr::TryEnd { .. } | Instr::CatchEnd { .. } => {
                let f = helpers::pop_catch as *const () as usize;
                let ctx = self.ctx();
                self.call(self.sigs.ctx_ret, f, &[ctx]);
                true
            }
            Instr::TryCase { .. } => true,
            // Building a trace is the interpreter's (exceptions are too).
            Instr::BuildStacktrace {} => {
                self.exit_at(ip as u32, exit::BAIL);
                false
            }
            // Binary matching: one helper call per instruction (the
            // shared `engine::bits`), which moves the position on.
            Instr::BsStart { src, fail, pos } => {
                self.bs_start(ip, src, fail, pos);
                true
            }
            Instr::BsGet {
                spec,
                seg,
                fail,
                dst,
            } if self.bs_get_inline(spec, seg).is_some() => {
                self.bs_get(ip, spec, seg, fail, dst);
                true
            }
            Instr::BsEnd { bin, pos, fail } if self.parts_of(bin).is_some() => {
                let parts = self.parts_of(bin).expect("parts");
                let at = self.get(pos);
                let end = self.small_of(parts.len);
                let is_end = self.b.ins().icmp(IntCC::Equal, at, end);
                self.branch(is_end, fail, ip);
                true
            }
            Instr::BsGet { fail, .. } | Instr::BsEnd { fail, .. } => {
                let at = self.b.ins().iconst(I32, ip as i64);
                let f = helpers::bs_match as *const () as usize;
                let ctx = self.ctx();
                let status = self.call(self.sigs.ctx_u32, f, &[ctx, at]).unwrap();
                let matched = self.b.ins().icmp_imm_s(IntCC::Equal, status, 0);
                let not_matched = self.b.create_block();
                let go_on = self.b.create_block();
                self.b.ins().brif(matched, go_on, &[], not_matched, &[]);
                self.b.switch_to_block(not_matched);
                let failed = self.b.ins().icmp_imm_s(IntCC::Equal, status, 1);
                let fail_block = self.fail_target(fail, ip);
                let bail = self.bail_block(ip as u32);
                self.b.ins().brif(failed, fail_block, &[], bail, &[]);
                self.b.switch_to_block(go_on);
                true
            }
            // Everything else: the interpreter runs it.
            _ => {
                self.exit_at(ip as u32, exit::BAIL);
                false
            }
        }
    }

    /// `bif`: its operands go to an argument area on the machine stack,
    /// and the helper calls the BIF on them, leaving the result in the
    /// area's first word; a failure goes to `fail`, a full output buffer
    /// ends the slice after it.
    fn bif_call(&mut self, ip: usize, fail: Label) {
        let Instr::Bif { bif, args, dst, .. } = self.m.get().code[ip] else {
            unreachable!("bif_call on a BIF instruction")
        };
        let entry = &crate::bif::TABLE[bif as usize];
        let arity = entry.arity as usize;
        let helper = if crate::bif::only_reads(entry) {
            helpers::call_reading_bif as *const () as usize
        } else {
            helpers::call_bif as *const () as usize
        };
        let area = self.bif_args();
        for i in 0..arity {
            let src = self.m.get().operand_lists[args as usize + i];
            let v = self.get(src);
            self.b.ins().stack_store(I64, v, area, i as i32 * 8);
        }
        let flag = if fail == Label::RAISE {
            0
        } else {
            helpers::FAIL_LABEL
        };
        let at = self.b.ins().iconst(I32, (bif as u32 | flag) as i64);
        if helper == helpers::call_bif as *const () as usize {
            // Where the process is, for the BIFs that ask
            // (`process_info(self(), current_function)`).
            let here = self.b.ins().iconst(I32, ip as i64);
            self.store_ctx(here, off!(ip));
        }
        let area_addr = self.b.ins().stack_addr(I64, area, 0);
        let sig = self.sigs.test;
        let ctx = self.ctx();
        let status = self.call(sig, helper, &[ctx, at, area_addr]).unwrap();
        let done = self.b.create_block();
        let not_ok = self.b.create_block();
        let is_ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, 0);
        self.b.ins().brif(is_ok, done, &[], not_ok, &[]);
        self.b.switch_to_block(not_ok);
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, status, 1);
        let fail_block = self.fail_target(fail, ip);
        let other = self.b.create_block();
        self.b.ins().brif(failed, fail_block, &[], other, &[]);
        self.b.switch_to_block(other);
        // 3: done, and the slice ends (output); 2: bail out.
        let yields = self.b.ins().icmp_imm_s(IntCC::Equal, status, 3);
        let yield_block = self.b.create_block();
        let bail_block = self.b.create_block();
        self.b.ins().brif(yields, yield_block, &[], bail_block, &[]);
        self.b.switch_to_block(yield_block);
        let v = self.b.ins().stack_load(I64, I64, area, 0);
        self.put(dst, v);
        self.exit_at(ip as u32 + 1, exit::YIELD);
        self.b.switch_to_block(bail_block);
        self.exit_at(ip as u32, exit::BAIL);
        self.b.switch_to_block(done);
        let v = self.b.ins().stack_load(I64, I64, area, 0);
        self.put(dst, v);
    }

    // Binary matching.

    /// `bs_start`: `helpers::bs_parts` takes the bitstring apart once, and
    /// the `bs_get`s and `bs_end` that follow read its bytes inline.
    fn bs_start(&mut self, ip: usize, src: Src, fail: Label, pos: Dst) {
        let v = self.get(src);
        // Inline: a heap binary, or a sub-binary of a heap binary or of
        // the off-heap binary `Ctx::bs_base` names; anything else asks
        // the helper. `found` takes the base, its first byte's address,
        // the bit offset and the bit length.
        let found = self.b.create_block();
        for _ in 0..4 {
            self.b.append_block_param(found, I64);
        }
        let slow = self.b.create_block();
        let boxed = self.tag_is(v, TAG_BOXED);
        let is_boxed = self.b.create_block();
        self.b.ins().brif(boxed, is_boxed, &[], slow, &[]);
        self.b.switch_to_block(is_boxed);
        let obj = self.addr_of(src, v);
        let h = self.b.ins().load(I64, self.mem.heap, obj, 0);
        let kind_of = |g: &mut Self, h: Value| {
            let k = g.b.ins().ushr_imm_s(h, 3);
            g.b.ins().band_imm_s(k, 0x1f)
        };
        let kind = kind_of(self, h);
        let sub = self.b.create_block();
        let not_sub = self.b.create_block();
        let is_sub = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, kind, Kind::SubBin as i64);
        self.b.ins().brif(is_sub, sub, &[], not_sub, &[]);
        self.b.switch_to_block(not_sub);
        let heap_bin = self.b.create_block();
        let is_heap_bin = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, kind, Kind::HeapBin as i64);
        self.b.ins().brif(is_heap_bin, heap_bin, &[], slow, &[]);
        self.b.switch_to_block(heap_bin);
        let data = self.b.ins().iadd_imm_s(obj, 16);
        let zero = self.b.ins().iconst(I64, 0);
        let bytes = self.b.ins().load(I64, self.mem.heap, obj, 8);
        let len = self.b.ins().ishl_imm_s(bytes, 3);
        self.b
            .ins()
            .jump(found, &[v, data, zero, len].map(BlockArg::Value));
        self.b.switch_to_block(sub);
        let base = self.b.ins().load(I64, self.mem.heap, obj, 8);
        let offset = self.b.ins().load(I64, self.mem.heap, obj, 16);
        let len = self.b.ins().load(I64, self.mem.heap, obj, 24);
        let cached = self.load_ctx(off!(bs_base));
        let hit = self.b.ins().icmp(IntCC::Equal, base, cached);
        let from_cache = self.b.create_block();
        let look = self.b.create_block();
        self.b.ins().brif(hit, from_cache, &[], look, &[]);
        self.b.switch_to_block(from_cache);
        let data = self.load_ctx(off!(bs_data));
        self.b
            .ins()
            .jump(found, &[base, data, offset, len].map(BlockArg::Value));
        self.b.switch_to_block(look);
        let base_obj = self.deref(base);
        let bh = self.b.ins().load(I64, self.mem.heap, base_obj, 0);
        let base_kind = kind_of(self, bh);
        let base_heap_bin = self.b.create_block();
        let is_heap_bin = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, base_kind, Kind::HeapBin as i64);
        self.b
            .ins()
            .brif(is_heap_bin, base_heap_bin, &[], slow, &[]);
        self.b.switch_to_block(base_heap_bin);
        let data = self.b.ins().iadd_imm_s(base_obj, 16);
        self.b
            .ins()
            .jump(found, &[base, data, offset, len].map(BlockArg::Value));

        self.b.switch_to_block(slow);
        let area = *self.bs_area.get_or_insert_with(|| {
            self.b
                .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                    cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                    32,
                    3,
                ))
        });
        let out = self.b.ins().stack_addr(I64, area, 0);
        // Not `call`: the helper only reads, so what is known of the heap
        // holds across it.
        let f = self
            .b
            .ins()
            .iconst(I64, helpers::bs_parts as *const () as usize as i64);
        let sig = self.sigs.cmp;
        let ctx = self.ctx();
        let call = self.b.ins().call_indirect(sig, f, &[ctx, v, out]);
        let answer = self.b.inst_results(call)[0];
        let is = self.b.ins().icmp_imm_s(IntCC::NotEqual, answer, 0);
        self.branch(is, fail, ip);
        let words =
            [0, 1, 2, 3].map(|i| BlockArg::Value(self.b.ins().load(I64, flags(), out, i * 8)));
        self.b.ins().jump(found, &words);
        self.b.switch_to_block(found);
        let [base, data, offset, len] = [0, 1, 2, 3].map(|i| self.b.block_params(found)[i]);
        let parts = BsParts {
            bin: src,
            base,
            data,
            offset,
            len,
            epoch: self.epoch,
        };
        let zero = self.konst(Term::small(0));
        self.put(pos, zero);
        if src.kind() == SRC_X || src.kind() == SRC_Y {
            self.matches.push(parts);
        }
    }

    /// What `bs_start` found of the bitstring in `bin`, if it still holds.
    fn parts_of(&self, bin: Src) -> Option<BsParts> {
        self.matches
            .iter()
            .rev()
            .find(|m| m.bin == bin && m.epoch == self.epoch)
            .copied()
    }

    /// The tagged small integer of the untagged `v`.
    fn small_of(&mut self, v: Value) -> Value {
        let shifted = self.b.ins().ishl_imm_s(v, TAG_BITS as i64);
        self.b.ins().bor_imm_s(shifted, TAG_SMALL as i64)
    }

    /// Whether `bs_get` with `spec` on operand list `seg` has an inline
    /// form: a big-endian integer of 8, 16 or 32 bits (a literal size),
    /// or the rest of the bitstring as a binary, read from a bitstring
    /// `bs_start` took apart. `Some(bits)` for an integer, `Some(0)` for
    /// the rest.
    fn bs_get_inline(&self, spec: u32, seg: u32) -> Option<usize> {
        use crate::term::bits::{Packed, TY_BINARY, TY_INTEGER};
        let m = self.m.get();
        let at = seg as usize;
        let (bin, size) = (m.operand_lists[at], m.operand_lists[at + 2]);
        self.parts_of(bin)?;
        let packed = Packed::of(spec);
        let size = match size.kind() {
            SRC_X | SRC_Y => return None,
            _ => m.literals[size.index()],
        };
        if packed.ty == TY_INTEGER && !packed.little {
            let n = (size.as_small()? as usize).checked_mul(packed.unit)?;
            [8, 16, 32].contains(&n).then_some(n)
        } else if packed.ty == TY_BINARY && size.is_none() && matches!(packed.unit, 1 | 8) {
            Some(0)
        } else {
            None
        }
    }

    /// `bs_get` inline (see `bs_get_inline`). A segment past the end
    /// fails the match; anything the inline form does not cover (an
    /// integer off a byte boundary, no heap room for the sub-binary)
    /// leaves for the interpreter, which runs the instruction.
    fn bs_get(&mut self, ip: usize, spec: u32, seg: u32, fail: Label, dst: Dst) {
        let bits = self.bs_get_inline(spec, seg).expect("inline bs_get");
        let m = self.m.get();
        let at = seg as usize;
        let (bin, pos_src) = (m.operand_lists[at], m.operand_lists[at + 1]);
        let parts = self.parts_of(bin).expect("parts");
        let pos_t = self.get(pos_src);
        let pos = self.b.ins().sshr_imm_s(pos_t, TAG_BITS as i64);
        let left = self.b.ins().isub(parts.len, pos);
        let start = self.b.ins().iadd(parts.offset, pos);
        let bail = self.bail_block(ip as u32);
        let (value, taken) = if bits > 0 {
            let fits =
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, left, bits as i64);
            self.branch(fits, fail, ip);
            let odd = self.b.ins().band_imm_s(start, 7);
            let go_on = self.b.create_block();
            self.b.ins().brif(odd, bail, &[], go_on, &[]);
            self.b.switch_to_block(go_on);
            let byte = self.b.ins().ushr_imm_s(start, 3);
            let addr = self.b.ins().iadd(parts.data, byte);
            // The bytes are immutable: no region, no ordering.
            let raw = match bits {
                8 => self.b.ins().uload8(I64, flags(), addr, 0),
                _ => {
                    let ty = if bits == 16 { types::I16 } else { I32 };
                    let w = self.b.ins().load(ty, flags(), addr, 0);
                    let w = self.b.ins().bswap(w);
                    self.b.ins().uextend(I64, w)
                }
            };
            let packed = crate::term::bits::Packed::of(spec);
            let raw = if packed.signed {
                let shift = 64 - bits as i64;
                let up = self.b.ins().ishl_imm_s(raw, shift);
                self.b.ins().sshr_imm_s(up, shift)
            } else {
                raw
            };
            let taken = self.b.ins().iconst(I64, bits as i64);
            (self.small_of(raw), taken)
        } else {
            // The rest, as a sub-binary of the base: in whole units (else
            // the segment does not match); a whole number of bytes starts
            // on a byte (the sub-binary invariant).
            let whole = self.b.ins().band_imm_s(left, 7);
            if crate::term::bits::Packed::of(spec).unit == 8 {
                let bytes = self.b.ins().icmp_imm_s(IntCC::Equal, whole, 0);
                self.branch(bytes, fail, ip);
            }
            let odd = self.b.ins().band_imm_s(start, 7);
            let aligned_or_bits = self.b.ins().icmp_imm_s(IntCC::Equal, odd, 0);
            let not_whole = self.b.ins().icmp_imm_s(IntCC::NotEqual, whole, 0);
            let ok = self.b.ins().bor(aligned_or_bits, not_whole);
            let room_check = self.b.create_block();
            self.b.ins().brif(ok, room_check, &[], bail, &[]);
            self.b.switch_to_block(room_check);
            let top = self.bump_within(crate::heap::SUB_BINARY_WORDS, bail);
            let h = self.konst(header(Kind::SubBin, 3));
            self.b.ins().store(self.mem.heap, h, top, 0);
            self.b.ins().store(self.mem.heap, parts.base, top, 8);
            self.b.ins().store(self.mem.heap, start, top, 16);
            self.b.ins().store(self.mem.heap, left, top, 24);
            (self.pointer(top, TAG_BOXED), left)
        };
        self.put(dst, value);
        let next = self.b.ins().iadd(pos, taken);
        let next = self.small_of(next);
        let pos_dst = if pos_src.kind() == SRC_Y {
            Dst::y(pos_src.index() as u16)
        } else {
            Dst::x(pos_src.index() as u16)
        };
        self.put(pos_dst, next);
    }

    fn y_saved(&mut self) -> cranelift_codegen::ir::StackSlot {
        *self.y_saved.get_or_insert_with(|| {
            self.b
                .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                    cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                    8,
                    3,
                ))
        })
    }

    fn bif_args(&mut self) -> cranelift_codegen::ir::StackSlot {
        *self.bif_area.get_or_insert_with(|| {
            self.b
                .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                    cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                    (crate::bif::MAX_ARITY * 8) as u32,
                    3,
                ))
        })
    }

    /// `element(I, T)` (two operands) or `tuple_size(T)` (one) inline on
    /// a tuple; anything else takes the BIF's own path.
    /// Charges the reductions of a BIF call made inline, as the
    /// interpreter charges every BIF (the deterministic clock counts them).
    /// `To ! Msg`: a local pid goes straight to `helpers::send_local`
    /// (charged as the BIF is), without the generic BIF call; a name, a
    /// pid of another node, a port or a failing send takes the BIF's own
    /// path. Its value is `Msg`.
    fn send(&mut self, ip: usize, fail: Label, to: Src, msg: Src, dst: Dst) {
        let vto = self.get(to);
        let vmsg = self.get(msg);
        let sig = self.sigs.send;
        let ctx = self.ctx();
        let status = self
            .call(
                sig,
                helpers::send_local as *const () as usize,
                &[ctx, vto, vmsg],
            )
            .expect("send_local returns");
        let sent = self.b.create_block();
        let general = self.b.create_block();
        self.b.set_cold_block(general);
        let join = self.b.create_block();
        let ok = self.b.ins().icmp_imm_s(IntCC::Equal, status, 0);
        self.b.ins().brif(ok, sent, &[], general, &[]);
        self.b.switch_to_block(sent);
        self.charge_bif();
        self.put(dst, vmsg);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(general);
        self.bif_call(ip, fail);
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
    }

    fn charge_bif(&mut self) {
        self.spend(crate::interp::cost::BIF);
    }

    fn tuple_bif(&mut self, ip: usize, fail: Label, operands: &[Src], dst: Dst) {
        let tuple_src = *operands.last().expect("a tuple operand");
        let vt = self.get(tuple_src);
        let vi = (operands.len() == 2).then(|| self.get(operands[0]));
        let exits = self.inline_exits();
        let (inline_done, general) = (exits.inline, exits.general);
        let check = self.b.create_block();
        let boxed = self.tag_is(vt, TAG_BOXED);
        let fine = match vi {
            Some(i) => {
                let small = self.tag_is(i, TAG_SMALL);
                self.b.ins().band(boxed, small)
            }
            None => boxed,
        };
        self.b.ins().brif(fine, check, &[], general, &[]);
        self.b.switch_to_block(check);
        let addr = self.deref(vt);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        // A tuple's header: tag and kind 0 in the low byte, arity above.
        let low = self.b.ins().band_imm_s(h, 0xff);
        let is_tuple = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let arity = self.b.ins().ushr_imm_s(h, 8);
        match vi {
            Some(vi) => {
                let i = self.b.ins().sshr_imm_s(vi, 3);
                // 1 =< I =< arity: (I - 1) below the arity, unsigned.
                let i0 = self.b.ins().iadd_imm_s(i, -1);
                let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, i0, arity);
                let ok = self.b.ins().band(is_tuple, inside);
                let fetch = self.b.create_block();
                self.b.ins().brif(ok, fetch, &[], general, &[]);
                self.b.switch_to_block(fetch);
                let bytes = self.b.ins().ishl_imm_s(i, 3);
                let at = self.b.ins().iadd(addr, bytes);
                let e = self.b.ins().load(I64, self.mem.heap, at, 0);
                self.b.ins().jump(inline_done, &[BlockArg::Value(e)]);
            }
            None => {
                let shifted = self.b.ins().ishl_imm_s(arity, 3);
                let n = self.b.ins().bor_imm_s(shifted, TAG_SMALL as i64);
                self.b
                    .ins()
                    .brif(is_tuple, inline_done, &[BlockArg::Value(n)], general, &[]);
            }
        }
        self.finish_inline(exits, ip, fail, dst);
    }

    /// The two operands of a BIF call whose operand list starts at `args`.
    fn two_operands(&self, args: u32) -> (Src, Src) {
        let module = self.m.get();
        (
            module.operand_lists[args as usize],
            module.operand_lists[args as usize + 1],
        )
    }

    /// `max(A, B)` (or `min`) inline for two small integers: their
    /// tagged words compare as the integers do. Anything else takes the
    /// BIF (the general term order). With equal terms `A` is the answer,
    /// as in OTP.
    fn min_max(&mut self, ip: usize, fail: Label, a: Src, b: Src, dst: Dst, max: bool) {
        let va = self.get(a);
        let vb = self.get(b);
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, I64);
        let fast = self.b.create_block();
        let general = self.b.create_block();
        self.b.set_cold_block(general);
        let small = self.both_small(va, vb);
        self.b.ins().brif(small, fast, &[], general, &[]);
        self.b.switch_to_block(fast);
        let cc = if max {
            IntCC::SignedLessThan
        } else {
            IntCC::SignedGreaterThan
        };
        let take_b = self.b.ins().icmp(cc, va, vb);
        let r = self.b.ins().select(take_b, vb, va);
        self.charge_bif();
        self.b.ins().jump(done, &[BlockArg::Value(r)]);
        self.b.switch_to_block(general);
        self.bif_call(ip, fail);
        let v = self.get(dst.src());
        self.b.ins().jump(done, &[BlockArg::Value(v)]);
        self.b.switch_to_block(done);
        self.put(dst, result);
    }

    /// The blocks an inline BIF ends in: an inline answer jumps to
    /// `inline` with it and is charged there, anything else goes to
    /// `general`, the BIF's own path (which charges in the call); both
    /// meet at `done` (`finish_inline`).
    fn inline_exits(&mut self) -> InlineExits {
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, I64);
        let inline = self.b.create_block();
        let answer = self.b.append_block_param(inline, I64);
        let general = self.b.create_block();
        self.b.set_cold_block(general);
        InlineExits {
            done,
            result,
            inline,
            answer,
            general,
        }
    }

    /// Fills in the blocks of `inline_exits` and puts the answer in `dst`.
    fn finish_inline(&mut self, e: InlineExits, ip: usize, fail: Label, dst: Dst) {
        self.b.switch_to_block(e.inline);
        self.charge_bif();
        self.b.ins().jump(e.done, &[BlockArg::Value(e.answer)]);
        self.b.switch_to_block(e.general);
        self.bif_call(ip, fail);
        let v = self.get(dst.src());
        self.b.ins().jump(e.done, &[BlockArg::Value(v)]);
        self.b.switch_to_block(e.done);
        self.put(dst, e.result);
    }

    /// Counts the cells of the proper list `list` (heap or literal
    /// cells), going to `general` for an improper list or, with a
    /// `limit`, one of more cells; goes on in a block where the count
    /// (untagged) is the value returned.
    fn count_cells(&mut self, list: Value, limit: Option<i64>, general: Block) -> Value {
        // (list, cells so far)
        let count = self.b.create_block();
        let t = self.b.append_block_param(count, I64);
        let n = self.b.append_block_param(count, I64);
        let zero = self.b.ins().iconst(I64, 0);
        self.b
            .ins()
            .jump(count, &[BlockArg::Value(list), BlockArg::Value(zero)]);
        self.b.switch_to_block(count);
        let counted = self.b.create_block();
        let step = self.b.create_block();
        let is_nil = self.b.ins().icmp_imm_s(IntCC::Equal, t, Term::NIL.0 as i64);
        self.b.ins().brif(is_nil, counted, &[], step, &[]);
        self.b.switch_to_block(step);
        let mut go = self.tag_is(t, TAG_CONS);
        if let Some(limit) = limit {
            let short = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, n, limit);
            go = self.b.ins().band(go, short);
        }
        let next = self.b.create_block();
        self.b.ins().brif(go, next, &[], general, &[]);
        self.b.switch_to_block(next);
        let addr = self.deref(t);
        let tail = self.b.ins().load(I64, self.mem.heap, addr, 8);
        let n1 = self.b.ins().iadd_imm_s(n, 1);
        self.b
            .ins()
            .jump(count, &[BlockArg::Value(tail), BlockArg::Value(n1)]);
        self.b.switch_to_block(counted);
        n
    }

    /// `hd/1`, `tl/1`, `length/1` and `abs/1` inline: the head or tail of
    /// a cons cell; the cells of a proper list counted in one walk (heap
    /// or literal cells alike); the absolute value of a small integer
    /// whose negation is small. Anything else (not a list, an improper
    /// list, a float, a bignum, `abs` of the smallest small) takes the
    /// BIF's path, which answers or raises. Each costs a BIF's
    /// reductions, as in the interpreter.
    fn one_operand(&mut self, ip: usize, fail: Label, which: Inline1, a: Src, dst: Dst) {
        let v = self.get(a);
        let exits = self.inline_exits();
        let (inline_done, general) = (exits.inline, exits.general);
        match which {
            Inline1::Hd | Inline1::Tl => {
                let cons = self.tag_is(v, TAG_CONS);
                let fetch = self.b.create_block();
                self.b.ins().brif(cons, fetch, &[], general, &[]);
                self.b.switch_to_block(fetch);
                let addr = self.addr_of(a, v);
                let at = if matches!(which, Inline1::Hd) { 0 } else { 8 };
                let part = self.b.ins().load(I64, self.mem.heap, addr, at);
                self.b.ins().jump(inline_done, &[BlockArg::Value(part)]);
            }
            Inline1::Length => {
                let n = self.count_cells(v, None, general);
                let len = self.small_of(n);
                self.b.ins().jump(inline_done, &[BlockArg::Value(len)]);
            }
            Inline1::Abs => {
                // Tagged, -i is 6 - t; the smallest small's negation is a
                // bignum.
                let small = self.tag_is(v, TAG_SMALL);
                let smallest = Term::small(crate::term::SMALL_MIN).0 as i64;
                let negatable = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, smallest);
                let fine = self.b.ins().band(small, negatable);
                let fast = self.b.create_block();
                self.b.ins().brif(fine, fast, &[], general, &[]);
                self.b.switch_to_block(fast);
                let six = self.b.ins().iconst(I64, 2 * TAG_SMALL as i64);
                let negated = self.b.ins().isub(six, v);
                let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                let r = self.b.ins().select(negative, negated, v);
                self.b.ins().jump(inline_done, &[BlockArg::Value(r)]);
            }
        }
        self.finish_inline(exits, ip, fail, dst);
    }

    /// `A ++ B` inline when `A` is `[]` (the answer is `B`) or a proper
    /// list of at most `APPEND_INLINE` elements and the heap has room for
    /// its copy: one walk counts the cells, a second copies them at the
    /// heap top, the last one's tail `B`. An improper or longer list, or
    /// a full heap, takes the BIF's path (which raises `badarg` or
    /// collects). fannkuch's `Reversed ++ Rest` spent ~470 instructions a
    /// call in the BIF and the helper that calls it.
    fn append(&mut self, ip: usize, fail: Label, a: Src, b: Src, dst: Dst) {
        let va = self.get(a);
        let vb = self.get(b);
        let exits = self.inline_exits();
        let (inline_done, general) = (exits.inline, exits.general);

        let n = self.count_cells(va, Some(APPEND_INLINE), general);
        // [] ++ B is B; else room for 2n words.
        let copy = self.b.create_block();
        self.b
            .ins()
            .brif(n, copy, &[], inline_done, &[BlockArg::Value(vb)]);
        self.b.switch_to_block(copy);
        let top = self.load_ctx(off!(htop));
        let limit = self.load_ctx(off!(hlimit));
        let bytes = self.b.ins().ishl_imm_s(n, 4);
        let end = self.b.ins().iadd(top, bytes);
        let room = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, limit);
        let start = self.b.create_block();
        self.b.ins().brif(room, start, &[], general, &[]);
        self.b.switch_to_block(start);
        self.store_ctx(end, off!(htop));
        let first = self.pointer(top, TAG_CONS);

        // Copy: (cell of A, where its copy goes).
        let cell = self.b.create_block();
        let t = self.b.append_block_param(cell, I64);
        let out = self.b.append_block_param(cell, I64);
        self.b
            .ins()
            .jump(cell, &[BlockArg::Value(va), BlockArg::Value(top)]);
        self.b.switch_to_block(cell);
        let addr = self.deref(t);
        let head = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let tail = self.b.ins().load(I64, self.mem.heap, addr, 8);
        self.b.ins().store(self.mem.heap, head, out, 0);
        let last = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tail, Term::NIL.0 as i64);
        let more = self.b.create_block();
        let finish = self.b.create_block();
        self.b.ins().brif(last, finish, &[], more, &[]);
        self.b.switch_to_block(finish);
        self.b.ins().store(self.mem.heap, vb, out, 8);
        self.b.ins().jump(inline_done, &[BlockArg::Value(first)]);
        self.b.switch_to_block(more);
        let out2 = self.b.ins().iadd_imm_s(out, 16);
        let link = self.pointer(out2, TAG_CONS);
        self.b.ins().store(self.mem.heap, link, out, 8);
        self.b
            .ins()
            .jump(cell, &[BlockArg::Value(tail), BlockArg::Value(out2)]);

        self.finish_inline(exits, ip, fail, dst);
    }

    /// `map_get(K, M)` or `maps:get(K, M)` inline when `K` is an
    /// immediate (an atom, a small integer) found in the flat map `M`: a
    /// scan of its keys for the very word (see `heap::map`). With `put`,
    /// `M#{K := V}` instead: a copy of `M` with `V` for `K`'s value,
    /// when the heap has room for it. A key not there, a map in tree
    /// form, a full heap or anything else takes the BIF's path.
    #[allow(clippy::too_many_arguments)]
    fn map_get(
        &mut self,
        ip: usize,
        fail: Label,
        key: Src,
        map: Src,
        dst: Dst,
        put: Option<Src>,
        chained: bool,
    ) {
        let vput = put.map(|s| self.get(s));
        let vk = self.get(key);
        let vm = self.get(map);
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, I64);
        let made = self.b.append_block_param(done, types::I8);
        let made_at = self.b.append_block_param(done, I64);
        let yes = self.b.ins().iconst(types::I8, 1);
        let no = self.b.ins().iconst(types::I8, 0);
        let nowhere = self.b.ins().iconst(I64, 0);
        let general = self.b.create_block();
        self.b.set_cold_block(general);
        let check = self.b.create_block();
        // The next step of a chain writes into the copy the last one made.
        if let (true, Some(new_value), Some(f)) = (chained, vput, self.fresh_map)
            && f.ip + 1 == ip
            && f.dst.src() == map
        {
            let in_place = self.b.create_block();
            let copying = self.b.create_block();
            self.b.ins().brif(f.fresh, in_place, &[], copying, &[]);
            self.b.switch_to_block(in_place);
            let immediate = self.is_immediate(vk);
            let scan = self.b.create_block();
            self.b.ins().brif(immediate, scan, &[], copying, &[]);
            self.b.switch_to_block(scan);
            // A flat map on the heap (the copy): header, n keys, n values.
            let addr = f.addr;
            let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
            let size = self.b.ins().ushr_imm_s(h, 8);
            let value_at = self.find_flat_key(addr, size, vk, copying);
            self.b.ins().store(self.mem.heap, new_value, value_at, 0);
            self.charge_bif();
            self.b
                .ins()
                .jump(done, &[vm, yes, addr].map(BlockArg::Value));
            self.b.switch_to_block(copying);
        }
        let boxed = self.tag_is(vm, TAG_BOXED);
        let immediate = self.is_immediate(vk);
        let fine = self.b.ins().band(boxed, immediate);
        self.b.ins().brif(fine, check, &[], general, &[]);
        self.b.switch_to_block(check);
        let (addr, size) = self.flat_map(vm, general);
        let value_at = self.find_flat_key(addr, size, vk, general);
        let (v, at) = match vput {
            None => (self.b.ins().load(I64, self.mem.heap, value_at, 0), nowhere),
            Some(new_value) => {
                // The copy: header and 2n words.
                let words = self.b.ins().iadd_imm_s(size, 1);
                let bytes = self.b.ins().ishl_imm_s(words, 3);
                let top = self.load_ctx(off!(htop));
                let limit = self.load_ctx(off!(hlimit));
                let new_top = self.b.ins().iadd(top, bytes);
                let room = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedLessThanOrEqual, new_top, limit);
                let copy = self.b.create_block();
                self.b.ins().brif(room, copy, &[], general, &[]);
                self.b.switch_to_block(copy);
                self.copy_words(addr, top, bytes);
                let within = self.b.ins().isub(value_at, addr);
                let slot = self.b.ins().iadd(top, within);
                self.b.ins().store(self.mem.heap, new_value, slot, 0);
                self.store_ctx(new_top, off!(htop));
                (self.pointer(top, TAG_BOXED), top)
            }
        };
        self.charge_bif();
        let fresh = if vput.is_some() { yes } else { no };
        self.b
            .ins()
            .jump(done, &[v, fresh, at].map(BlockArg::Value));
        self.b.switch_to_block(general);
        self.bif_call(ip, fail);
        let v = self.get(dst.src());
        self.b
            .ins()
            .jump(done, &[v, no, nowhere].map(BlockArg::Value));
        self.b.switch_to_block(done);
        self.put(dst, result);
        if vput.is_some() {
            self.fresh_map = Some(FreshMap {
                ip,
                dst,
                fresh: made,
                addr: made_at,
                done,
            });
        }
    }

    /// The address and header size field of the boxed map `vm` when it
    /// is a flat map; any other object goes to `other`. A flat map's
    /// header has kind Map in the low byte and 2n above (n keys, then n
    /// values).
    fn flat_map(&mut self, vm: Value, other: Block) -> (Value, Value) {
        let addr = self.deref(vm);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let low = self.b.ins().band_imm_s(h, 0xff);
        let is_flat = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, low, header(Kind::Map, 0).0 as i64);
        let flat = self.b.create_block();
        self.b.ins().brif(is_flat, flat, &[], other, &[]);
        self.b.switch_to_block(flat);
        (addr, self.b.ins().ushr_imm_s(h, 8))
    }

    /// The address of the value of key `vk` (an immediate) in the flat map
    /// at `addr` whose header's size field is `size` (2n: n keys, then n
    /// values); goes to `miss` when the key is not there. The loop tests
    /// at its bottom: a load, a compare and a step per key.
    fn find_flat_key(&mut self, addr: Value, size: Value, vk: Value, miss: Block) -> Value {
        // Bytes of the keys: n * 8 = size * 4.
        let key_bytes = self.b.ins().ishl_imm_s(size, 2);
        let keys = self.b.ins().iadd_imm_s(addr, 8);
        let end = self.b.ins().iadd(keys, key_bytes);
        let body = self.b.create_block();
        let at = self.b.append_block_param(body, I64);
        let next_key = self.b.create_block();
        let found = self.b.create_block();
        let any = self.b.ins().icmp(IntCC::UnsignedLessThan, keys, end);
        self.b
            .ins()
            .brif(any, body, &[BlockArg::Value(keys)], miss, &[]);
        self.b.switch_to_block(body);
        let k = self.b.ins().load(I64, self.mem.heap, at, 0);
        let same = self.b.ins().icmp(IntCC::Equal, k, vk);
        self.b.ins().brif(same, found, &[], next_key, &[]);
        self.b.switch_to_block(next_key);
        let next = self.b.ins().iadd_imm_s(at, 8);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, next, end);
        self.b
            .ins()
            .brif(more, body, &[BlockArg::Value(next)], miss, &[]);
        self.b.switch_to_block(found);
        // The value sits n words after its key.
        self.b.ins().iadd(at, key_bytes)
    }

    /// Copies `bytes` (a multiple of 8) of heap words from `from` to `to`:
    /// an odd word first, then two words at a time in a loop that tests at
    /// its bottom; the code goes on after the copy.
    fn copy_words(&mut self, from: Value, to: Value, bytes: Value) {
        // Two heap words need not be 16-byte aligned: the pair moves
        // without the `aligned` flag.
        let pair_flags = MemFlagsData::new()
            .with_notrap()
            .with_alias_region(self.mem.heap.alias_region());
        let odd = self.b.ins().band_imm_s(bytes, 8);
        let one = self.b.create_block();
        let pairs = self.b.create_block();
        let start = self.b.append_block_param(pairs, I64);
        let body = self.b.create_block();
        let offset = self.b.append_block_param(body, I64);
        let done = self.b.create_block();
        let zero = self.b.ins().iconst(I64, 0);
        self.b
            .ins()
            .brif(odd, one, &[], pairs, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(one);
        let w = self.b.ins().load(I64, self.mem.heap, from, 0);
        self.b.ins().store(self.mem.heap, w, to, 0);
        self.b.ins().jump(pairs, &[BlockArg::Value(odd)]);
        self.b.switch_to_block(pairs);
        let any = self.b.ins().icmp(IntCC::UnsignedLessThan, start, bytes);
        self.b
            .ins()
            .brif(any, body, &[BlockArg::Value(start)], done, &[]);
        self.b.switch_to_block(body);
        let source = self.b.ins().iadd(from, offset);
        let w = self.b.ins().load(types::I64X2, pair_flags, source, 0);
        let target = self.b.ins().iadd(to, offset);
        self.b.ins().store(pair_flags, w, target, 0);
        let next = self.b.ins().iadd_imm_s(offset, 16);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, next, bytes);
        self.b
            .ins()
            .brif(more, body, &[BlockArg::Value(next)], done, &[]);
        self.b.switch_to_block(done);
    }

    /// `math:sqrt/1` inline on a float (or small integer): its result
    /// stays unboxed like arithmetic's; anything else (a negative
    /// number, another type) takes the BIF's own path.
    fn sqrt(&mut self, ip: usize, instr: Instr, src: Src, dst: Dst) {
        let Instr::Bif { fail, .. } = instr else {
            unreachable!("sqrt of a bif instruction")
        };
        let v = self.get(src);
        let general = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, I64);
        let result_f = self.b.append_block_param(done, types::F64);
        let result_isf = self.b.append_block_param(done, types::I8);
        let f = self.float_of(src, v, general);
        let r = self.b.ins().sqrt(f);
        // NaN (a negative operand) is the BIF's badarith.
        let ordered = self.b.ins().fcmp(FloatCC::Equal, r, r);
        let fits = self.b.create_block();
        self.b.ins().brif(ordered, fits, &[], general, &[]);
        self.b.switch_to_block(fits);
        self.charge_bif();
        let (t, rf, isf) = if dst.is_y() {
            let t = self.box_float(r);
            let zero = self.b.ins().f64const(0.0);
            (t, zero, self.b.ins().iconst(types::I8, 0))
        } else {
            (self.konst(Term::NIL), r, self.b.ins().iconst(types::I8, 1))
        };
        self.b.ins().jump(
            done,
            &[
                BlockArg::Value(t),
                BlockArg::Value(rf),
                BlockArg::Value(isf),
            ],
        );
        self.b.switch_to_block(general);
        self.materialize_all();
        self.bif_call(ip, fail);
        let t = self.get(dst.src());
        let zero = self.b.ins().f64const(0.0);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(
            done,
            &[
                BlockArg::Value(t),
                BlockArg::Value(zero),
                BlockArg::Value(no),
            ],
        );
        self.b.switch_to_block(done);
        self.put(dst, result);
        if !dst.is_y() {
            self.pending.push(Pending {
                reg: dst.index() as u16,
                f: result_f,
                isf: result_isf,
                known: false,
                boxed: false,
            });
        }
    }

    /// `wait_timeout`: `after 0` falls through to the timeout code; a
    /// wait (with or without a timer) leaves for the scheduler and
    /// resumes at the loop head `to`; a bad value bails out for the
    /// interpreter to raise `timeout_value`.
    fn wait_timeout(&mut self, ip: usize, to: Label, timeout: Src) {
        use helpers::wait;
        let t = self.get(timeout);
        let resume = self.b.ins().iconst(I32, ip as i64 + 1);
        let f = helpers::wait_timeout as *const () as usize;
        let ctx = self.ctx();
        let r = self
            .call(self.sigs.wait, f, &[ctx, t, resume])
            .expect("wait_timeout returns");
        let now = self.b.ins().icmp_imm_s(IntCC::Equal, r, wait::NOW as i64);
        let later = self.b.create_block();
        let go_on = self.b.create_block();
        self.b.ins().brif(now, go_on, &[], later, &[]);
        self.b.switch_to_block(later);
        let bad = self.b.ins().icmp_imm_s(IntCC::Equal, r, wait::BAD as i64);
        let bail = self.bail_block(ip as u32);
        let valid = self.b.create_block();
        self.b.ins().brif(bad, bail, &[], valid, &[]);
        self.b.switch_to_block(valid);
        let forever = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, r, wait::FOREVER as i64);
        let plain = self.b.create_block();
        let timed = self.b.create_block();
        self.b.ins().brif(forever, plain, &[], timed, &[]);
        self.b.switch_to_block(plain);
        self.exit_at(to.0, exit::WAIT);
        self.b.switch_to_block(timed);
        self.store_ctx(r, off!(wait_ms));
        self.exit_at(to.0, exit::WAIT_TIMEOUT);
        self.b.switch_to_block(go_on);
    }

    /// `dst := src`; a pending float moves as one (both registers then
    /// hold `[]` or a box of it while it is a float).
    fn move_reg(&mut self, src: Src, dst: Dst) {
        match self.pending_of(src) {
            Some(p) if !dst.is_y() => {
                let v = self.get(src);
                self.put(dst, v);
                self.pending.push(Pending {
                    reg: dst.index() as u16,
                    ..p
                });
            }
            Some(p) => {
                self.materialize(p);
                let v = self.get(src);
                self.put(dst, v);
            }
            None => {
                let v = self.get(src);
                self.put(dst, v);
            }
        }
    }

    /// Equality compares words first, so its pending operands are boxed;
    /// an ordering reads pending floats as they are (`float_of`) and boxes
    /// only on its general path.
    fn materialize_for_compare(&mut self, op: CmpOp, a: Src, b: Src) {
        if !matches!(op, CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge) {
            self.materialize_srcs(&[a, b]);
        }
    }

    fn get_list(&mut self, src: Src, v: Value, head: Dst, tail: Dst) {
        let addr = self.addr_of(src, v);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let t = self.b.ins().load(I64, self.mem.heap, addr, 8);
        self.put(head, h);
        self.put(tail, t);
    }

    /// Loads the 64-bit `Ctx` field at `offset`.
    fn load_ctx(&mut self, offset: i32) -> Value {
        let f = self.mem.region(self.b.func, Kind8::Ctx, offset as u32);
        let ctx = self.ctx();
        self.b.ins().load(I64, f, ctx, offset)
    }

    /// Stores `v` (of the field's type) into the `Ctx` field at `offset`.
    fn store_ctx(&mut self, v: Value, offset: i32) {
        let f = self.mem.region(self.b.func, Kind8::Ctx, offset as u32);
        let ctx = self.ctx();
        self.b.ins().store(f, v, ctx, offset);
    }

    /// Calls a helper that may fail (returns 0) and bails out at `ip` then.
    fn call_or_bail(&mut self, ip: usize, sig: SigRef, f: usize, args: &[Value]) {
        let ok = self.call(sig, f, args).expect("status");
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, ok, 0);
        self.bail_if(failed, ip);
    }

    /// `allocate`: pushes `slots` Y slots set to `[]` and makes them the
    /// current frame's. When the stack is full it grows through a helper,
    /// only with no native caller below (`depth` zero): callers keep
    /// their Y slots' addresses across a call (`call_native`), so the Y
    /// stack must not move under them; with callers, the code bails out
    /// at the `allocate` and the interpreter grows it.
    fn allocate(&mut self, ip: usize, slots: usize) {
        if slots > MAX_INLINE_SLOTS {
            self.exit_at(ip as u32, exit::BAIL);
            let dead = self.b.create_block();
            self.b.switch_to_block(dead);
            return;
        }
        let top = self.load_ctx(off!(stack_top));
        let end = self.load_ctx(off!(stack_end));
        let new = self.b.ins().iadd_imm_s(top, slots as i64 * 8);
        let full = self.b.ins().icmp(IntCC::UnsignedGreaterThan, new, end);
        let grow = self.b.create_block();
        self.b.set_cold_block(grow);
        let push = self.b.create_block();
        let y = self.b.append_block_param(push, I64);
        self.b
            .ins()
            .brif(full, grow, &[], push, &[BlockArg::Value(top)]);
        self.b.switch_to_block(grow);
        let depth = self.depth();
        self.bail_if(depth, ip);
        let n = self.b.ins().iconst(I32, slots as i64);
        let sig = self.sigs.ctx_u32;
        let ctx = self.ctx();
        self.call_or_bail(
            ip,
            sig,
            helpers::grow_stack as *const () as usize,
            &[ctx, n],
        );
        let top = self.load_ctx(off!(stack_top));
        self.b.ins().jump(push, &[BlockArg::Value(top)]);
        self.b.switch_to_block(push);
        let nil = self.konst(Term::NIL);
        for i in 0..slots {
            let f = self.mem.region(self.b.func, Kind8::Y, i as u32);
            self.b.ins().store(f, nil, y, i as i32 * 8);
        }
        self.set_ybase(y);
        let new = self.b.ins().iadd_imm_s(y, slots as i64 * 8);
        self.store_ctx(new, off!(stack_top));
    }

    /// `deallocate`: the current frame's Y slots are popped.
    fn deallocate(&mut self) {
        let y = self.ybase();
        self.store_ctx(y, off!(stack_top));
    }

    /// The current frame's Y base, as an offset into the Y stack.
    fn y_offset(&mut self) -> Value {
        let y = self.ybase();
        self.offset_in_stack(y)
    }

    /// The Y-slot pointer `y` as an offset into the Y stack.
    fn offset_in_stack(&mut self, y: Value) -> Value {
        let base = self.load_ctx(off!(stack));
        let bytes = self.b.ins().isub(y, base);
        self.b.ins().ushr_imm_s(bytes, 3)
    }

    /// This function's module version, a constant.
    fn own_module(&mut self) -> Value {
        let module = self.m.get() as *const crate::code::Module as i64;
        self.b.ins().iconst(I64, module)
    }

    /// Pushes the frame of this function's call at `ip`, with its Y
    /// slots at `y_offset`, as the code leaves for `run` (see `native::Enter`;
    /// `helpers::push_frame_out`): `status` is the callee's exit code,
    /// handed back, or `helpers::STOP` before the callee is entered, when
    /// the call bails out if the memory budget has no room for the frame.
    fn push_frame_out(&mut self, ip: usize, y_offset: Value, status: Value) -> Value {
        let ret = self.b.ins().iconst(I32, ip as i64 + 1);
        let module = self.own_module();
        let sig = self.sigs.push_frame;
        let f = helpers::push_frame_out as *const () as usize;
        let ctx = self.ctx();
        self.call(sig, f, &[ctx, ret, y_offset, module, status])
            .expect("status")
    }

    /// Spends `reductions` and returns what is left.
    fn spend(&mut self, reductions: usize) -> Value {
        let reds = self.load_ctx(off!(reds));
        let reds = self.b.ins().iadd_imm_s(reds, -(reductions as i64));
        self.store_ctx(reds, off!(reds));
        reds
    }

    /// `return`: pops the top frame and returns `RETURNED` to the native
    /// caller (or `run`), with `Ctx::ip` and `Ctx::module` the return
    /// address and its module version; `DONE` when there is no frame.
    fn do_return(&mut self) {
        // Called straight by native code: no frame to pop (`depth`).
        let straight = self.b.create_block();
        let popping = self.b.create_block();
        let depth = self.depth();
        self.b.ins().brif(depth, straight, &[], popping, &[]);
        self.b.switch_to_block(straight);
        let code = self.b.ins().iconst(I32, exit::RETURNED as i64);
        self.b.ins().return_(&[code]);
        self.b.switch_to_block(popping);
        let len = self.load_ctx(off!(frames_len));
        let pop = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(len, pop, &[], done, &[]);
        self.b.switch_to_block(done);
        let code = self.b.ins().iconst(I32, exit::DONE as i64);
        self.b.ins().return_(&[code]);
        self.b.switch_to_block(pop);
        let frames = self.load_ctx(off!(frames));
        let top = self.b.ins().iadd_imm_s(len, -1);
        let bytes = self.b.ins().imul_imm_s(top, size_of::<Frame>() as i64);
        let frame = self.b.ins().iadd(frames, bytes);
        let module = self.b.ins().load(
            I64,
            self.mem.frames,
            frame,
            offset_of!(Frame, module) as i32,
        );
        self.store_ctx(module, off!(module));
        let ret = self.b.ins().load(
            I32,
            self.mem.frames,
            frame,
            offset_of!(Frame, return_ip) as i32,
        );
        self.store_ctx(ret, off!(ip));
        let y_base = self
            .b
            .ins()
            .uload32(self.mem.frames, frame, offset_of!(Frame, y_base) as i32);
        let base = self.load_ctx(off!(stack));
        let bytes = self.b.ins().ishl_imm_s(y_base, 3);
        let y = self.b.ins().iadd(base, bytes);
        self.store_ctx(y, off!(y));
        self.store_ctx(top, off!(frames_len));
        let code = self.b.ins().iconst(I32, exit::RETURNED as i64);
        self.b.ins().return_(&[code]);
    }

    /// A `call_ext`, `call_fun` or `apply`: the helper resolves the callee, pushes
    /// the frame and charges the call; its native code, if any, is then
    /// called directly, else `run` goes on at the callee.
    fn remote_call(&mut self, ip: usize, tail: bool) {
        let at = self.b.ins().iconst(I32, ip as i64);
        let sig = self.sigs.remote;
        let ctx = self.ctx();
        let r = self
            .call(sig, helpers::call_remote as *const () as usize, &[ctx, at])
            .expect("remote returns");
        let call_block = self.b.create_block();
        let code = self.b.append_block_param(call_block, I64);
        self.dispatch_remote(ip, r, call_block);
        self.b.switch_to_block(call_block);
        self.call_native(ip, Callee::Code(code), tail);
    }

    /// Where a call helper's answer `r` leads: a `remote` status leaves
    /// through `remote_status`, a code address goes to `call_block`
    /// (whose one parameter takes it).
    fn dispatch_remote(&mut self, ip: usize, r: Value, call_block: Block) {
        let status_block = self.b.create_block();
        let is_status = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, r, 2);
        self.b.ins().brif(
            is_status,
            status_block,
            &[],
            call_block,
            &[BlockArg::Value(r)],
        );
        self.b.switch_to_block(status_block);
        self.remote_status(ip, r);
    }

    /// Calls native code at entry 0 (the caller checked the machine
    /// stack has room: `stack_room`) and goes on as `after_call` says. A
    /// body call pushes no frame: the callee runs at `depth + 1`, and the
    /// caller keeps the address of its Y slots in its machine frame (the
    /// Y stack does not move while native callers are below: see
    /// `allocate`). A tail call runs the callee at this `depth`.
    fn call_native(&mut self, ip: usize, callee: Callee, tail: bool) {
        let (y_saved, depth) = if tail {
            (None, self.depth())
        } else {
            let y = self.ybase();
            let slot = self.y_saved();
            self.b.ins().stack_store(I64, y, slot, 0);
            let depth = self.depth();
            self.save_vars();
            (Some(slot), self.b.ins().iadd_imm_s(depth, 1))
        };
        let zero = self.b.ins().iconst(I32, 0);
        self.epoch += 1;
        let ctx = self.ctx();
        let args = [ctx, zero, depth];
        let call = match callee {
            Callee::Itself => self.b.ins().call(self.itself, &args),
            Callee::Code(code) => {
                let sig = self.sigs.native;
                self.b.ins().call_indirect(sig, code, &args)
            }
        };
        let result = self.b.inst_results(call)[0];
        // The module to put back after the call: none when this function
        // called itself and can only return in its own module.
        let module_back = !matches!(callee, Callee::Itself) || !self.returns_in_own_module();
        self.after_call(ip, y_saved, result, module_back);
    }

    /// Whether this function, called natively, is in its own module
    /// whenever it returns `RETURNED`: it makes no tail call other than
    /// of itself (a tail call of another function, local or remote, may
    /// return from another module; body calls put the module back).
    /// Asked by every self call, so found once.
    fn returns_in_own_module(&mut self) -> bool {
        if let Some(known) = self.own_module_returns {
            return known;
        }
        let code = &self.m.get().code[self.start..self.end];
        let itself = self.start as u32 - 1;
        let known = code.iter().all(|i| match *i {
            Instr::CallLast { target, .. } | Instr::CallOnly { target, .. } => target.0 == itself,
            Instr::CallExtLast { .. } | Instr::CallExtOnly { .. } => false,
            Instr::CallFun { tail, .. }
            | Instr::Apply { tail, .. }
            | Instr::ApplyList { tail }
            | Instr::ApplyFunList { tail } => tail == Tail::No,
            _ => true,
        });
        self.own_module_returns = Some(known);
        known
    }

    /// Whether the machine stack has room for one more native call
    /// (above `Ctx::stack_limit`).
    fn stack_room(&mut self) -> Value {
        let sp = self.b.ins().get_stack_pointer(I64);
        let limit = self.load_ctx(off!(stack_limit));
        self.b.ins().icmp(IntCC::UnsignedGreaterThan, sp, limit)
    }

    /// `call_fun`: through the site's inline cache (see
    /// `helpers::FunSite`) when the fun object is the one the site saw
    /// first, the reductions last and the machine stack has room: the
    /// frame is pushed (or the Y slots popped), the captured terms go
    /// after the arguments and the target's native code is called
    /// directly. Anything else goes through `helpers::call_fun`, which
    /// makes the call as `remote_call` does and fills the cache.
    fn fun_call(&mut self, ip: usize, arity: u16, tail: Tail) {
        let site: &'static helpers::FunSite = Box::leak(Box::default());
        let site = self.b.ins().iconst(I64, site as *const _ as i64);
        let call_block = self.b.create_block();
        let code = self.b.append_block_param(call_block, I64);
        let slow = self.b.create_block();

        let fun = self.get(Src::x(arity as u32));
        let boxed = self.tag_is(fun, TAG_BOXED);
        let check = self.b.create_block();
        self.b.ins().brif(boxed, check, &[], slow, &[]);
        self.b.switch_to_block(check);
        let obj = self.deref(fun);
        let h = self.b.ins().load(I64, self.mem.heap, obj, 0);
        let current_at = self
            .b
            .ins()
            .iadd_imm_s(site, offset_of!(helpers::FunSite, current) as i64);
        // The site's entry: complete and immutable once published.
        let e = self.b.ins().atomic_load(I64, flags(), current_at);
        let want = self.b.ins().load(
            I64,
            flags(),
            e,
            offset_of!(helpers::SiteEntry, header) as i32,
        );
        let same = self.b.ins().icmp(IntCC::Equal, h, want);
        let check2 = self.b.create_block();
        self.b.ins().brif(same, check2, &[], slow, &[]);
        self.b.switch_to_block(check2);
        let index = self.b.ins().load(I64, self.mem.heap, obj, 8);
        let want = self.b.ins().load(
            I64,
            flags(),
            e,
            offset_of!(helpers::SiteEntry, index) as i32,
        );
        let same = self.b.ins().icmp(IntCC::Equal, index, want);
        let room = self.stack_room();
        let reds = self.load_ctx(off!(reds));
        let reds = self
            .b
            .ins()
            .iadd_imm_s(reds, -(crate::interp::cost::CALL as i64));
        let left = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, reds, 0);
        let go = self.b.ins().band(same, room);
        let go = self.b.ins().band(go, left);
        let hit = self.b.create_block();
        self.b.ins().brif(go, hit, &[], slow, &[]);

        self.b.switch_to_block(hit);
        if tail == Tail::Last {
            self.deallocate();
        }
        self.store_ctx(reds, off!(reds));
        // x[arity + i] := captured[i], for i below the site's count.
        let free = self
            .b
            .ins()
            .load(I64, flags(), e, offset_of!(helpers::SiteEntry, free) as i32);
        let head = self.b.create_block();
        let i = self.b.append_block_param(head, I64);
        let body = self.b.create_block();
        let copied = self.b.create_block();
        let zero = self.b.ins().iconst(I64, 0);
        self.b.ins().jump(head, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(head);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, free);
        self.b.ins().brif(more, body, &[], copied, &[]);
        self.b.switch_to_block(body);
        let bytes = self.b.ins().ishl_imm_s(i, 3);
        let from = self.b.ins().iadd(obj, bytes);
        let t = self.b.ins().load(I64, self.mem.heap, from, 16);
        let xs = self.xs();
        let to = self.b.ins().iadd(xs, bytes);
        // Any X register: no region, so the store fences them all.
        self.b.ins().store(flags(), t, to, arity as i32 * 8);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[BlockArg::Value(next)]);
        self.b.switch_to_block(copied);
        let module = self.b.ins().load(
            I64,
            flags(),
            e,
            offset_of!(helpers::SiteEntry, module) as i32,
        );
        self.store_ctx(module, off!(module));
        let entry = self.b.ins().load(
            I32,
            flags(),
            e,
            offset_of!(helpers::SiteEntry, entry) as i32,
        );
        self.store_ctx(entry, off!(ip));
        let target =
            self.b
                .ins()
                .load(I64, flags(), e, offset_of!(helpers::SiteEntry, code) as i32);
        self.b.ins().jump(call_block, &[BlockArg::Value(target)]);

        self.b.switch_to_block(slow);
        let at = self.b.ins().iconst(I32, ip as i64);
        let sig = self.sigs.fun;
        let ctx = self.ctx();
        let r = self
            .call(
                sig,
                helpers::call_fun as *const () as usize,
                &[ctx, at, site],
            )
            .expect("call_fun returns");
        self.dispatch_remote(ip, r, call_block);

        self.b.switch_to_block(call_block);
        self.call_native(ip, Callee::Code(code), tail != Tail::No);
    }

    /// A `remote` status `r` from a call helper: bail out at `ip`, or
    /// leave native code for `run` (the helper set `Ctx::ip`, and `live`
    /// for a yield).
    fn remote_status(&mut self, ip: usize, r: Value) {
        let bail = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, r, helpers::remote::BAIL as i64);
        let bail_block = self.bail_block(ip as u32);
        let up = self.b.create_block();
        self.b.ins().brif(bail, bail_block, &[], up, &[]);
        self.b.switch_to_block(up);
        let yields = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, r, helpers::remote::YIELD as i64);
        let y = self.b.ins().iconst(I32, exit::YIELD as i64);
        let j = self.b.ins().iconst(I32, exit::JUMP as i64);
        let code = self.b.ins().select(yields, y, j);
        self.b.ins().return_(&[code]);
    }

    /// After a native call returned `result`: a tail call returns it; a
    /// body call (its Y slots' address kept in `y_saved`) goes on after
    /// the call when the callee returned, with its own Y slots and module
    /// back (a local callee may have tail-called another module; with
    /// `module_back` false the callee cannot have), and else pushes its
    /// frame and passes `result` up.
    fn after_call(
        &mut self,
        ip: usize,
        y_saved: Option<cranelift_codegen::ir::StackSlot>,
        result: Value,
        module_back: bool,
    ) {
        match y_saved {
            None => {
                self.b.ins().return_(&[result]);
            }
            Some(slot) => {
                self.restore_vars();
                // `Ctx::y` is the callee's now: this frame's Y slots come
                // back from `slot`, and go back into `Ctx::y` (which
                // helpers read) where the code goes on.
                let y = self.b.ins().stack_load(I64, I64, slot, 0);
                self.b.def_var(self.vars.y, y);
                let returned = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, result, exit::RETURNED as i64);
                let back = self.b.create_block();
                let up = self.b.create_block();
                self.b.set_cold_block(up);
                self.b.ins().brif(returned, back, &[], up, &[]);
                self.b.switch_to_block(back);
                self.store_ctx(y, off!(y));
                if module_back {
                    let module = self.own_module();
                    self.store_ctx(module, off!(module));
                }
                let after = self.block(ip + 1);
                self.b.ins().jump(after, &[]);
                self.b.switch_to_block(up);
                // The helper hands `result` back (so it needs no register
                // kept across the call).
                let y_offset = self.offset_in_stack(y);
                let passed = self.push_frame_out(ip, y_offset, result);
                self.b.ins().return_(&[passed]);
            }
        }
        // The caller's code goes on in the block of the next instruction,
        // which `function` switches to; make the fall-through a no-op.
        let dead = self.b.create_block();
        self.b.switch_to_block(dead);
    }

    /// A local call: charge a reduction, then call the callee's native
    /// code directly, or stop at its entry for `run` to go on from (a
    /// body call pushing its frame first).
    fn local_call(&mut self, ip: usize, arity: u16, target: Label, tail: bool, dealloc: bool) {
        let entry = target.0 + 1;
        if dealloc {
            self.deallocate();
        }
        // Reductions: the call is made; a spent slice yields at the callee.
        let reds = self.spend(crate::interp::cost::CALL);
        let spent = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, reds, 0);
        let yield_block = self.b.create_block();
        self.b.set_cold_block(yield_block);
        let go_on = self.b.create_block();
        self.b.ins().brif(spent, yield_block, &[], go_on, &[]);
        self.b.switch_to_block(yield_block);
        let live = self.b.ins().iconst(I32, arity as i64);
        self.store_ctx(live, off!(live));
        self.stop_at_callee(ip, entry, tail, exit::YIELD);
        self.b.switch_to_block(go_on);

        // A tail call of this very function is a loop.
        if tail && entry as usize == self.start {
            let body = self.body;
            self.b.ins().jump(body, &[]);
            return;
        }
        let module = self.m.get();
        let function = match module.code.get(target.0 as usize) {
            Some(Instr::FuncInfo { function }) => *function,
            _ => {
                self.stop_at_callee(ip, entry, tail, exit::JUMP);
                return;
            }
        };
        // This very function is called straight; another through its
        // code slot, which is empty until it is compiled.
        let stop_block = self.b.create_block();
        self.b.set_cold_block(stop_block);
        let call_block = self.b.create_block();
        let callee = if entry as usize == self.start {
            Callee::Itself
        } else {
            let slot = module.tier.code_slot(function) as usize as i64;
            let slot = self.b.ins().iconst(I64, slot);
            let code = self.b.ins().load(I64, flags(), slot, 0);
            let has_code = self.b.ins().icmp_imm_s(IntCC::NotEqual, code, 0);
            let check = self.b.create_block();
            self.b.ins().brif(has_code, check, &[], stop_block, &[]);
            self.b.switch_to_block(check);
            Callee::Code(code)
        };
        if !tail {
            // A body call deepens `depth`: the machine stack is checked
            // at every `STACK_CHECK_EVERY`th depth only.
            let depth = self.depth();
            let between = self.b.ins().band_imm_s(depth, STACK_CHECK_EVERY as i64 - 1);
            let check = self.b.create_block();
            self.b.set_cold_block(check);
            self.b.ins().brif(between, call_block, &[], check, &[]);
            self.b.switch_to_block(check);
        }
        let room = self.stack_room();
        self.b.ins().brif(room, call_block, &[], stop_block, &[]);
        self.b.switch_to_block(stop_block);
        self.stop_at_callee(ip, entry, tail, exit::JUMP);
        self.b.switch_to_block(call_block);
        self.call_native(ip, callee, tail);
    }

    /// Leaves for `run` at the callee's `entry` with `code`, the call at
    /// `ip` made: a body call pushes its frame first.
    fn stop_at_callee(&mut self, ip: usize, entry: u32, tail: bool, code: u32) {
        if !tail {
            let y_offset = self.y_offset();
            let stop = self.b.ins().iconst(I32, helpers::STOP as i64);
            let pushed = self.push_frame_out(ip, y_offset, stop);
            let refused = self.b.ins().icmp_imm_s(IntCC::Equal, pushed, 0);
            self.bail_if(refused, ip);
        }
        self.exit_at(entry, code);
    }

    fn arith(&mut self, ip: usize, op: u32, a: Src, b: Src, fail: Label, dst: Dst) -> bool {
        if op <= 3 && (self.known_float(a) || self.known_float(b)) {
            return self.float_only_arith(ip, op, a, b, fail, dst);
        }
        // A pending operand's register holds `[]` (not a small integer)
        // while it is a float, so the integer paths pass it by.
        let va = self.get(a);
        let vb = self.get(b);
        let slow = self.b.create_block();
        // A float is kept unboxed only for an X register and when the next
        // instruction can take it so (else it would be boxed at once, and
        // the integer result would pay for the flag).
        // A small-integer literal operand marks integer code (as for
        // `float_runs`): the float result, if ever, is boxed at once, and
        // the integer result does not pass through the flag's merge.
        let defer = !dst.is_y()
            && self.next_keeps_floats(ip)
            && self.small_literal(a).is_none()
            && self.small_literal(b).is_none();
        // `term_done` takes a result term. With `defer`, `done` takes the
        // result term, or for a float result kept unboxed the float and a
        // set flag instead.
        let term_done = self.b.create_block();
        let t = self.b.append_block_param(term_done, I64);
        let done = self.b.create_block();
        if defer {
            self.b.append_block_param(done, I64);
            self.b.append_block_param(done, types::F64);
            self.b.append_block_param(done, types::I8);
        }
        let ka = self.small_literal(a);
        let kb = self.small_literal(b);
        let float_literal = self.is_float_literal(a) || self.is_float_literal(b);
        if float_literal && op <= 3 {
            // No integer result is possible.
            self.b.ins().jump(slow, &[]);
        } else if op <= 2 {
            let small = self.small_operands((va, ka), (vb, kb));
            let fast = self.b.create_block();
            self.b.ins().brif(small, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
            // Tagged words: (a - 3) + b, a - b + 3, (a >> 3) * (b - 3);
            // with a literal b = k: a + 8k, a - 8k. i64 overflow is exactly
            // small-integer overflow.
            let (r, of) = match (op, kb) {
                (0, Some(k)) if k.unsigned_abs() < 1 << 56 => {
                    let k8 = self.b.ins().iconst(I64, k << 3);
                    self.b.ins().sadd_overflow(va, k8)
                }
                (1, Some(k)) if k.unsigned_abs() < 1 << 56 => {
                    let k8 = self.b.ins().iconst(I64, k << 3);
                    self.b.ins().ssub_overflow(va, k8)
                }
                (0, _) => {
                    let a0 = self.b.ins().iadd_imm_s(va, -(TAG_SMALL as i64));
                    self.b.ins().sadd_overflow(a0, vb)
                }
                (1, _) => {
                    let (d, of) = self.b.ins().ssub_overflow(va, vb);
                    let r = self.b.ins().iadd_imm_s(d, TAG_SMALL as i64);
                    (r, of)
                }
                _ => {
                    let a0 = self.b.ins().sshr_imm_s(va, 3);
                    let b0 = self.b.ins().iadd_imm_s(vb, -(TAG_SMALL as i64));
                    let (p, of) = self.b.ins().smul_overflow(a0, b0);
                    let r = self.b.ins().bor_imm_s(p, TAG_SMALL as i64);
                    (r, of)
                }
            };
            self.b
                .ins()
                .brif(of, slow, &[], term_done, &[BlockArg::Value(r)]);
        } else if op >= 4 {
            let small = self.small_operands((va, ka), (vb, kb));
            let fast = self.b.create_block();
            self.b.ins().brif(small, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
            self.integer_op(op, va, vb, slow, term_done);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.b.switch_to_block(slow);
        if op <= 3 {
            let to = if defer { done } else { term_done };
            self.float_arith(op, (a, va), (b, vb), to, defer);
        }
        // The general path: pending floats are boxed first (the helper
        // reads its operands as terms; a failure leaves the run).
        let (va, vb) = if self.pending.is_empty() {
            (va, vb)
        } else {
            self.materialize_all();
            (self.get(a), self.get(b))
        };
        let opv = self.b.ins().iconst(I32, op as i64);
        let sig = self.sigs.arith;
        let ctx = self.ctx();
        let r = self
            .call(
                sig,
                helpers::arith as *const () as usize,
                &[ctx, opv, va, vb],
            )
            .unwrap();
        let failed = self.b.ins().icmp_imm_s(IntCC::Equal, r, 0);
        let failure = self.fail_target(fail, ip);
        self.b
            .ins()
            .brif(failed, failure, &[], term_done, &[BlockArg::Value(r)]);
        self.b.switch_to_block(term_done);
        if !defer {
            self.put(dst, t);
            return true;
        }
        let zero = self.b.ins().f64const(0.0);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.ins().jump(
            done,
            &[
                BlockArg::Value(t),
                BlockArg::Value(zero),
                BlockArg::Value(no),
            ],
        );
        self.b.switch_to_block(done);
        let (result, result_f, result_isf) = match *self.b.block_params(done) {
            [r, f, isf] => (r, f, isf),
            _ => unreachable!("done takes three parameters with defer"),
        };
        self.put(dst, result);
        if op <= 3 {
            self.pending.push(Pending {
                reg: dst.index() as u16,
                f: result_f,
                isf: result_isf,
                known: false,
                boxed: false,
            });
        }
        true
    }

    /// `div rem band bor bxor bsl bsr` (`op` 4 to 10) on two small
    /// integers `a` and `b`: the tagged result goes to `done`, anything
    /// the fast path does not cover (a zero divisor, a result past the
    /// small range, a shift out of 0..64) to `slow`.
    fn integer_op(&mut self, op: u32, a: Value, b: Value, slow: Block, done: Block) {
        let tag = TAG_SMALL as i64;
        let r = match op {
            6 => self.b.ins().band(a, b),
            7 => self.b.ins().bor(a, b),
            8 => {
                let r = self.b.ins().bxor(a, b);
                self.b.ins().bor_imm_s(r, tag)
            }
            _ => {
                let i = self.b.ins().sshr_imm_s(a, 3);
                let j = self.b.ins().sshr_imm_s(b, 3);
                let go_on = self.b.create_block();
                // Divisors: not zero. Shifts: 0..64 (a small is 61 bits,
                // so a right shift by 63 already gives 0 or -1).
                let bad = if op <= 5 {
                    self.b.ins().icmp_imm_s(IntCC::Equal, j, 0)
                } else {
                    self.b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, j, 64)
                };
                self.b.ins().brif(bad, slow, &[], go_on, &[]);
                self.b.switch_to_block(go_on);
                let v = match op {
                    4 => self.b.ins().sdiv(i, j),
                    5 => self.b.ins().srem(i, j),
                    10 => self.b.ins().sshr(i, j),
                    _ => {
                        // bsl: the bits shifted out must be copies of the sign.
                        let v = self.b.ins().ishl(i, j);
                        let back = self.b.ins().sshr(v, j);
                        let lost = self.b.ins().icmp(IntCC::NotEqual, back, i);
                        let kept = self.b.create_block();
                        self.b.ins().brif(lost, slow, &[], kept, &[]);
                        self.b.switch_to_block(kept);
                        v
                    }
                };
                // Back to a tagged word, if the value is still small.
                let t = self.b.ins().ishl_imm_s(v, 3);
                let back = self.b.ins().sshr_imm_s(t, 3);
                let fits = self.b.ins().icmp(IntCC::Equal, back, v);
                let tagged = self.b.ins().bor_imm_s(t, tag);
                self.b
                    .ins()
                    .brif(fits, done, &[BlockArg::Value(tagged)], slow, &[]);
                return;
            }
        };
        self.b.ins().jump(done, &[BlockArg::Value(r)]);
    }

    /// `+ - * /` on floats (and a float with a small integer, or two small
    /// integers for `/`), inline: the result is boxed at the heap top and
    /// `done` gets it. Anything else, a result that is not finite or a
    /// full heap falls through to the general path after this code.
    fn float_arith(
        &mut self,
        op: u32,
        (sa, a): (Src, Value),
        (sb, b): (Src, Value),
        done: Block,
        defer: bool,
    ) {
        let general = self.b.create_block();
        if op != 3 && !self.is_float_literal(sa) && !self.is_float_literal(sb) {
            // Two small integers here overflowed: that is for bignums.
            let small = self.both_small(a, b);
            let go_on = self.b.create_block();
            self.b.ins().brif(small, general, &[], go_on, &[]);
            self.b.switch_to_block(go_on);
        }
        let fa = self.float_of(sa, a, general);
        // `X * X`: one register, unboxed once.
        let fb = if sa == sb {
            fa
        } else {
            self.float_of(sb, b, general)
        };
        let r = match op {
            0 => self.b.ins().fadd(fa, fb),
            1 => self.b.ins().fsub(fa, fb),
            2 => self.b.ins().fmul(fa, fb),
            _ => self.b.ins().fdiv(fa, fb),
        };
        // Finite: r - r is 0.0 (it is NaN for infinities and NaN).
        let d = self.b.ins().fsub(r, r);
        let zero = self.b.ins().f64const(0.0);
        let finite = self.b.ins().fcmp(FloatCC::Equal, d, zero);
        let fits = self.b.create_block();
        self.b.ins().brif(finite, fits, &[], general, &[]);
        self.b.switch_to_block(fits);
        if defer {
            let nil = self.konst(Term::NIL);
            let yes = self.b.ins().iconst(types::I8, 1);
            self.b.ins().jump(
                done,
                &[
                    BlockArg::Value(nil),
                    BlockArg::Value(r),
                    BlockArg::Value(yes),
                ],
            );
            self.b.switch_to_block(general);
            return;
        }
        let top = self.bump_within(crate::heap::FLOAT_WORDS, general);
        let h = self.konst(header(Kind::Float, 1));
        self.b.ins().store(self.mem.heap, h, top, 0);
        self.b.ins().store(self.mem.heap, r, top, 8);
        let t = self.pointer(top, TAG_BOXED);
        self.b.ins().jump(done, &[BlockArg::Value(t)]);
        self.b.switch_to_block(general);
    }

    /// `v` (read from `s`) as a float: a boxed float's value, or a small
    /// integer within 2^53 (converted exactly); anything else jumps to
    /// `other`. A literal operand is converted here, once.
    fn float_of(&mut self, s: Src, v: Value, other: Block) -> Value {
        let Some(p) = self.pending_of(s) else {
            return self.float_of_term(s, v, other);
        };
        if p.known {
            return p.f;
        }
        let join = self.b.create_block();
        let f = self.b.append_block_param(join, types::F64);
        let term = self.b.create_block();
        self.b
            .ins()
            .brif(p.isf, join, &[BlockArg::Value(p.f)], term, &[]);
        self.b.switch_to_block(term);
        let g = self.float_of_term(s, v, other);
        self.b.ins().jump(join, &[BlockArg::Value(g)]);
        self.b.switch_to_block(join);
        f
    }

    /// `float_of` for a register that holds its term.
    fn float_of_term(&mut self, s: Src, v: Value, other: Block) -> Value {
        if s.kind() != SRC_X && s.kind() != SRC_Y {
            let t = self.m.get().literals[s.index()];
            let known = match t.as_small() {
                Some(i) if i.abs() <= 1 << 53 => Some(i as f64),
                Some(_) => None,
                None if t.is_boxed() && t.is_literal() => {
                    let words = crate::term::literal::words_from(t.offset());
                    (words.first() == Some(&header(Kind::Float, 1)))
                        .then(|| f64::from_bits(words[1].0))
                }
                None => None,
            };
            if let Some(f) = known {
                return self.b.ins().f64const(f);
            }
        }
        let join = self.b.create_block();
        let f = self.b.append_block_param(join, types::F64);
        // A boxed float first: it is what float code passes around.
        let boxed = self.tag_is(v, TAG_BOXED);
        let check = self.b.create_block();
        let not_boxed = self.b.create_block();
        self.b.ins().brif(boxed, check, &[], not_boxed, &[]);
        self.b.switch_to_block(check);
        let addr = self.deref(v);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let is_float = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, h, header(Kind::Float, 1).0 as i64);
        let load = self.b.create_block();
        self.b.ins().brif(is_float, load, &[], other, &[]);
        self.b.switch_to_block(load);
        let x = self.b.ins().load(types::F64, self.mem.heap, addr, 8);
        self.b.ins().jump(join, &[BlockArg::Value(x)]);
        self.b.switch_to_block(not_boxed);
        let small = self.tag_is(v, TAG_SMALL);
        let int = self.b.create_block();
        self.b.ins().brif(small, int, &[], other, &[]);
        self.b.switch_to_block(int);
        let i = self.b.ins().sshr_imm_s(v, 3);
        // |i| <= 2^53: (i + 2^53) as unsigned <= 2^54.
        let shifted = self.b.ins().iadd_imm_s(i, 1 << 53);
        let exact = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, shifted, 1 << 54);
        let convert = self.b.create_block();
        self.b.ins().brif(exact, convert, &[], other, &[]);
        self.b.switch_to_block(convert);
        let x = self.b.ins().fcvt_from_sint(types::F64, i);
        self.b.ins().jump(join, &[BlockArg::Value(x)]);
        self.b.switch_to_block(join);
        f
    }

    /// The comparison `op` of two terms, as an i8 truth value.
    fn comparison(&mut self, op: CmpOp, (sa, a): (Src, Value), (sb, b): (Src, Value)) -> Value {
        let join = self.b.create_block();
        let r = self.b.append_block_param(join, types::I8);
        match op {
            CmpOp::ExactEq | CmpOp::ExactNe | CmpOp::Eq | CmpOp::Ne => {
                let exact = matches!(op, CmpOp::ExactEq | CmpOp::ExactNe);
                let negate = matches!(op, CmpOp::ExactNe | CmpOp::Ne);
                let same = self.b.ins().icmp(IntCC::Equal, a, b);
                let yes = self.b.ins().iconst(types::I8, 1);
                let no = self.b.ins().iconst(types::I8, 0);
                let differ = self.b.create_block();
                self.b
                    .ins()
                    .brif(same, join, &[BlockArg::Value(yes)], differ, &[]);
                self.b.switch_to_block(differ);
                // Two different words are equal only if a pointer is
                // involved (or, for ==, an integer against a float).
                let ia = self.is_immediate(a);
                let ib = self.is_immediate(b);
                let both = self.b.ins().band(ia, ib);
                let general = self.b.create_block();
                self.b
                    .ins()
                    .brif(both, join, &[BlockArg::Value(no)], general, &[]);
                self.b.switch_to_block(general);
                let sig = self.sigs.cmp;
                let f = if exact {
                    helpers::exact_eq as *const () as usize
                } else {
                    helpers::eq as *const () as usize
                };
                let callee = self.b.ins().iconst(I64, f as i64);
                self.epoch += 1;
                let ctx = self.ctx();
                let call = self.b.ins().call_indirect(sig, callee, &[ctx, a, b]);
                let v = self.b.inst_results(call)[0];
                let t = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                self.b.ins().jump(join, &[BlockArg::Value(t)]);
                self.b.switch_to_block(join);
                if negate {
                    let one = self.b.ins().iconst(types::I8, 1);
                    self.b.ins().bxor(r, one)
                } else {
                    r
                }
            }
            CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => {
                let cc = match op {
                    CmpOp::Lt => IntCC::SignedLessThan,
                    CmpOp::Le => IntCC::SignedLessThanOrEqual,
                    CmpOp::Gt => IntCC::SignedGreaterThan,
                    _ => IntCC::SignedGreaterThanOrEqual,
                };
                let small = self.both_small(a, b);
                let fast = self.b.create_block();
                let general = self.b.create_block();
                self.b.ins().brif(small, fast, &[], general, &[]);
                self.b.switch_to_block(fast);
                // Tagged small integers order as their values.
                let t = self.b.ins().icmp(cc, a, b);
                self.b.ins().jump(join, &[BlockArg::Value(t)]);
                self.b.switch_to_block(general);
                // Numbers as floats (exact for these), else term order.
                let helper = self.b.create_block();
                let fa = self.float_of(sa, a, helper);
                let fb = self.float_of(sb, b, helper);
                let fcc = match op {
                    CmpOp::Lt => FloatCC::LessThan,
                    CmpOp::Le => FloatCC::LessThanOrEqual,
                    CmpOp::Gt => FloatCC::GreaterThan,
                    _ => FloatCC::GreaterThanOrEqual,
                };
                let t = self.b.ins().fcmp(fcc, fa, fb);
                self.b.ins().jump(join, &[BlockArg::Value(t)]);
                self.b.switch_to_block(helper);
                // A pending float reads as `[]` in its register: box it.
                let (a, b) = if self.pending_of(sa).is_some() || self.pending_of(sb).is_some() {
                    self.materialize_srcs(&[sa, sb]);
                    (self.get(sa), self.get(sb))
                } else {
                    (a, b)
                };
                let sig = self.sigs.cmp;
                let ctx = self.ctx();
                let o = self
                    .call(sig, helpers::compare as *const () as usize, &[ctx, a, b])
                    .unwrap();
                let t = self.b.ins().icmp_imm_s(cc, o, 0);
                self.b.ins().jump(join, &[BlockArg::Value(t)]);
                self.b.switch_to_block(join);
                r
            }
        }
    }

    /// A literal operand that equals only the very same word (an atom,
    /// `[]`, a pid, and for `=:=` a small integer too).
    fn word_literal(&self, s: Src, exact: bool) -> bool {
        s.kind() != SRC_X && s.kind() != SRC_Y && {
            let t = self.m.get().literals[s.index()];
            t.is_immediate() && (exact || !t.is_small())
        }
    }

    fn cmp_test(&mut self, ip: usize, op: CmpOp, a: Src, b: Src, fail: Label) -> bool {
        self.materialize_for_compare(op, a, b);
        let va = self.get(a);
        let vb = self.get(b);
        let equality = match op {
            CmpOp::ExactEq | CmpOp::Eq => Some(IntCC::Equal),
            CmpOp::ExactNe | CmpOp::Ne => Some(IntCC::NotEqual),
            _ => None,
        };
        let exact = matches!(op, CmpOp::ExactEq | CmpOp::ExactNe);
        if let Some(cc) = equality
            && (self.word_literal(a, exact) || self.word_literal(b, exact))
        {
            let r = self.b.ins().icmp(cc, va, vb);
            self.branch_boxing(r, fail, ip);
            return true;
        }
        let r = self.comparison(op, (a, va), (b, vb));
        self.branch_boxing(r, fail, ip);
        true
    }

    /// `branch`, boxing the pending floats on the way to `fail` (the run
    /// of fall-through code ends there).
    fn branch_boxing(&mut self, cond: Value, fail: Label, ip: usize) {
        if self.pending.is_empty() {
            return self.branch(cond, fail, ip);
        }
        let go_on = self.b.create_block();
        let failing = self.b.create_block();
        self.b.ins().brif(cond, go_on, &[], failing, &[]);
        self.b.switch_to_block(failing);
        self.materialize_all();
        let fail = self.fail_target(fail, ip);
        self.b.ins().jump(fail, &[]);
        self.b.switch_to_block(go_on);
    }

    fn type_test(&mut self, test: TypeTest, v: Value) -> Value {
        match test {
            TypeTest::Atom => self.tag_is(v, TAG_ATOM),
            TypeTest::List => {
                let cons = self.tag_is(v, TAG_CONS);
                let nil = self.b.ins().icmp_imm_s(IntCC::Equal, v, Term::NIL.0 as i64);
                self.b.ins().bor(cons, nil)
            }
            TypeTest::Boolean => {
                let t = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, v, Term::TRUE.0 as i64);
                let f = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, v, Term::FALSE.0 as i64);
                self.b.ins().bor(t, f)
            }
            // Tests decided by an immediate's tag or a boxed object's
            // header kind: both read inline (the header through `deref`).
            TypeTest::Tuple
            | TypeTest::Map
            | TypeTest::Function
            | TypeTest::Float
            | TypeTest::Integer
            | TypeTest::Number
            | TypeTest::Pid => {
                let kinds = |ks: &[Kind]| ks.iter().fold(0i64, |m, &k| m | 1 << k as u32);
                let (quick, mask) = match test {
                    TypeTest::Tuple => (None, kinds(&[Kind::Tuple])),
                    TypeTest::Map => (None, kinds(&[Kind::Map, Kind::MapTree])),
                    TypeTest::Function => (None, kinds(&[Kind::Fun, Kind::Export])),
                    TypeTest::Float => (None, kinds(&[Kind::Float])),
                    TypeTest::Integer => (Some(TAG_SMALL), kinds(&[Kind::PosBig, Kind::NegBig])),
                    TypeTest::Number => (
                        Some(TAG_SMALL),
                        kinds(&[Kind::PosBig, Kind::NegBig, Kind::Float]),
                    ),
                    _ => (Some(TAG_PID), kinds(&[Kind::ExtPid])),
                };
                self.boxed_kind_test(v, quick, mask)
            }
            _ => self.type_test_call(test, v),
        }
    }

    /// Whether `v` has the immediate tag `quick` or is a boxed term whose
    /// header kind is in `mask` (bit `k` for `Kind` `k`), as an i8.
    fn boxed_kind_test(&mut self, v: Value, quick: Option<u64>, mask: i64) -> Value {
        let join = self.b.create_block();
        let r = self.b.append_block_param(join, types::I8);
        let yes = self.b.ins().iconst(types::I8, 1);
        let no = self.b.ins().iconst(types::I8, 0);
        if let Some(tag) = quick {
            let is = self.tag_is(v, tag);
            let other = self.b.create_block();
            self.b
                .ins()
                .brif(is, join, &[BlockArg::Value(yes)], other, &[]);
            self.b.switch_to_block(other);
        }
        let boxed = self.tag_is(v, TAG_BOXED);
        let check = self.b.create_block();
        self.b
            .ins()
            .brif(boxed, check, &[], join, &[BlockArg::Value(no)]);
        self.b.switch_to_block(check);
        let addr = self.deref(v);
        let h = self.b.ins().load(I64, self.mem.heap, addr, 0);
        let kind = self.b.ins().ushr_imm_s(h, 3);
        let kind = self.b.ins().band_imm_s(kind, 0x1f);
        let m = self.b.ins().iconst(I64, mask);
        let bit = self.b.ins().ushr(m, kind);
        let bit = self.b.ins().band_imm_s(bit, 1);
        let bit = self.b.ins().ireduce(types::I8, bit);
        self.b.ins().jump(join, &[BlockArg::Value(bit)]);
        self.b.switch_to_block(join);
        r
    }

    /// The type test `test` of `v` through the helper, as an i8.
    fn type_test_call(&mut self, test: TypeTest, v: Value) -> Value {
        let sig = self.sigs.test;
        let n = self.b.ins().iconst(I32, type_test_number(test) as i64);
        let f = helpers::type_test as *const () as usize;
        let ctx = self.ctx();
        let t = self.call(sig, f, &[ctx, n, v]).unwrap();
        self.b.ins().icmp_imm_s(IntCC::NotEqual, t, 0)
    }
}
