//! A loaded module: bytecode and the tables it refers to.

use super::{Instr, Operands, SRC_X, SelectTable, Src, X_REGISTERS};
use crate::term::{Atom, Term};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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

/// The module the shell's expressions and functions compile into. The
/// shell evaluates as erl_eval does, where an operator is a call of its
/// BIF, so its errors carry the operator's frame where compiled code's
/// float instructions would not (see the interpreter's `arith_fail`).
pub const SHELL_MODULE: &str = "shell_default";

/// A compiled module. Immutable once built (apart from the call caches
/// below, which only remember lookups); shared behind an `Arc`.
///
/// Invariants, checked by `Module::new` (the only way to make one), on
/// which the interpreter's unchecked instruction fetch and register
/// access rely:
/// - the code is not empty and its last instruction never falls through;
/// - every label (in instructions and jump tables) is inside the code;
/// - every local call targets a `FuncInfo` (calls enter one past it);
/// - every X register operand is below `X_REGISTERS`.
#[derive(Debug)]
pub struct Module {
    pub name: Atom,
    /// The source file name, for stack traces.
    pub file: String,
    pub code: Vec<Instr>,
    /// Source line of each instruction (same length as `code`); a line of
    /// an included file carries its number in `include_files` (from 1)
    /// above `LINE_BITS` (see `location`).
    pub lines: Vec<u32>,
    /// The included files (`.hrl`) that code of this module comes from.
    pub include_files: Vec<String>,
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
    /// One inline cache per import: the resolved target of `imports[i]`,
    /// or null before the first call. Filled by the interpreter; valid
    /// while the target's module version is current (not `superseded`).
    pub import_cache: Box<[AtomicPtr<CallTarget>]>,
    /// The call targets of this version's functions (one per entry of
    /// `functions`), made on first need, so a cache entry can point here.
    pub call_targets: OnceLock<Box<[CallTarget]>>,
    /// Set once a newer version of this module is loaded: remote calls
    /// cached to this version must look the function up again.
    pub superseded: AtomicBool,
    /// Set once `ModuleRef::pin` has kept this version alive for good.
    pinned: AtomicBool,
    /// Where native code of this version may be entered (filled by the
    /// native tier, read by the engine at calls and returns).
    pub tier: TierSlots,
}

/// Bits of a line number in `Module::lines`; the file's number is above.
pub const LINE_BITS: u32 = 24;

/// The native tier's tables of one module version. They only remember
/// what the tier compiled: code that finds nothing here is interpreted,
/// and both engines run the same instructions on the same process state,
/// so an empty or partly filled table never changes what a program does.
pub struct TierSlots {
    /// Per instruction: 0, or the native entry that resumes there, as
    /// `function << ENTRY_BITS | entry` plus one (see `entry_at`).
    entries: Box<[AtomicU32]>,
    /// Per function: the address of its native code, or 0.
    code: Box<[AtomicUsize]>,
    /// Per function: calls counted by the interpreter (hotness), or
    /// `u32::MAX` once the tier has taken or refused the function.
    pub calls: Box<[AtomicU32]>,
}

impl std::fmt::Debug for TierSlots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let compiled = self.code.iter().filter(|c| c.load(Ordering::Relaxed) != 0);
        write!(f, "TierSlots {{ compiled: {} }}", compiled.count())
    }
}

/// Bits of an entry number in `TierSlots::entries`.
pub const ENTRY_BITS: u32 = 12;

impl TierSlots {
    fn new(instructions: usize, functions: usize) -> TierSlots {
        let zeros32 = |n| (0..n).map(|_| AtomicU32::new(0)).collect();
        TierSlots {
            entries: zeros32(instructions),
            code: (0..functions).map(|_| AtomicUsize::new(0)).collect(),
            calls: zeros32(functions),
        }
    }

    /// The native code and entry number that resume at instruction `ip`.
    #[inline(always)]
    pub fn entry_at(&self, ip: usize) -> Option<(usize, u32)> {
        let e = self.entries.get(ip)?.load(Ordering::Relaxed);
        if e == 0 {
            return None;
        }
        let e = e - 1;
        let code = self.code[(e >> ENTRY_BITS) as usize].load(Ordering::Acquire);
        (code != 0).then_some((code, e & ((1 << ENTRY_BITS) - 1)))
    }

    /// Whether instruction `ip` has a native entry (one load).
    #[inline(always)]
    pub fn has_entry(&self, ip: usize) -> bool {
        self.entries
            .get(ip)
            .is_some_and(|e| e.load(Ordering::Relaxed) != 0)
    }

    /// Publishes the native code of `function` and its entries: `entries`
    /// lists the instruction each entry number resumes at.
    pub fn publish(&self, function: u32, code: usize, entries: &[u32]) {
        self.code[function as usize].store(code, Ordering::Release);
        for (n, &ip) in entries.iter().enumerate() {
            let e = (function << ENTRY_BITS | n as u32) + 1;
            self.entries[ip as usize].store(e, Ordering::Relaxed);
        }
    }

    /// The address of the slot that holds `function`'s native code (native
    /// code loads it to call that function directly).
    pub fn code_slot(&self, function: u32) -> *const AtomicUsize {
        &self.code[function as usize]
    }
}

/// A function of a particular module version, as a remote call site
/// caches it: where to jump, and in which code.
#[derive(Debug)]
pub struct CallTarget {
    pub module: ModuleRef,
    /// Where a call enters: the instruction after the function's `FuncInfo`.
    pub entry: u32,
}

impl Module {
    /// A module of the given parts, with empty caches; `Err` says which
    /// invariant (see `Module`) the code breaks.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: Atom,
        file: String,
        code: Vec<Instr>,
        lines: Vec<u32>,
        literals: Vec<Term>,
        operand_lists: Vec<Src>,
        select_tables: Vec<SelectTable>,
        functions: Vec<FunctionInfo>,
        exports: HashMap<(Atom, u32), u32>,
        local_functions: HashMap<(Atom, u32), u32>,
        imports: Vec<Import>,
        funs: Vec<FunDef>,
        max_x: u32,
    ) -> Result<Module, String> {
        verify(&code, &operand_lists, &select_tables)?;
        let (code_len, function_count) = (code.len(), functions.len());
        let import_cache = imports
            .iter()
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect();
        Ok(Module {
            name,
            file,
            code,
            lines,
            include_files: Vec::new(),
            literals,
            operand_lists,
            select_tables,
            functions,
            exports,
            local_functions,
            imports,
            funs,
            fun_base: 0,
            max_x,
            import_cache,
            call_targets: OnceLock::new(),
            superseded: AtomicBool::new(false),
            pinned: AtomicBool::new(false),
            tier: TierSlots::new(code_len, function_count),
        })
    }

    /// The function whose code contains instruction `ip`.
    pub fn function_at(&self, ip: u32) -> Option<&FunctionInfo> {
        // Lowered functions are declared after their source function but
        // compiled right behind it, so entries are not in index order.
        self.functions
            .iter()
            .filter(|f| f.entry <= ip)
            .max_by_key(|f| f.entry)
    }

    /// The source line of instruction `ip` (0 if unknown), with its file
    /// (see `location`).
    pub fn line_at(&self, ip: u32) -> u32 {
        self.lines.get(ip as usize).copied().unwrap_or(0)
    }

    /// The file and line of a `line_at` value, as stack traces show them.
    pub fn location(&self, line: u32) -> (&str, u32) {
        let file = (line >> LINE_BITS) as usize;
        let name = match file.checked_sub(1).and_then(|i| self.include_files.get(i)) {
            Some(name) => name,
            None => &self.file,
        };
        (name, line & ((1 << LINE_BITS) - 1))
    }

    /// The entry instruction of exported `name/arity`.
    pub fn exported(&self, name: Atom, arity: u32) -> Option<u32> {
        self.exports
            .get(&(name, arity))
            .map(|&f| self.functions[f as usize].entry)
    }
}

/// Checks the invariants of `Module` on its code.
fn verify(
    code: &[Instr],
    operand_lists: &[Src],
    select_tables: &[SelectTable],
) -> Result<(), String> {
    let ends = matches!(
        code.last(),
        Some(
            Instr::FunctionClause { .. }
                | Instr::Jump { .. }
                | Instr::Return {}
                | Instr::DeallocateReturn {}
                | Instr::CallLast { .. }
                | Instr::CallOnly { .. }
                | Instr::CallExtLast { .. }
                | Instr::CallExtOnly { .. }
        )
    );
    if !ends {
        return Err("the code is empty or falls off its end".to_string());
    }
    let in_code = |l: super::Label| (l.0 as usize) < code.len();
    let x_ok = |s: Src| s.kind() != SRC_X || s.index() < X_REGISTERS;
    let mut bad = None;
    for (ip, instr) in code.iter().enumerate() {
        instr.visit_operands(&mut |o| {
            let ok = match o {
                Operands::Src(s) => x_ok(s),
                Operands::Dst(d) => d.is_y() || d.index() < X_REGISTERS,
                Operands::Label(l) => in_code(l),
            };
            if !ok && bad.is_none() {
                bad = Some(ip);
            }
        });
        if let Instr::Call { target, .. }
        | Instr::CallLast { target, .. }
        | Instr::CallOnly { target, .. } = *instr
            && !matches!(code.get(target.0 as usize), Some(Instr::FuncInfo { .. }))
        {
            bad = bad.or(Some(ip));
        }
    }
    if let Some(ip) = bad {
        return Err(format!("instruction {ip} has an operand out of range"));
    }
    if !operand_lists.iter().all(|&s| x_ok(s)) {
        return Err("an operand list names a register out of range".to_string());
    }
    if !select_tables
        .iter()
        .flat_map(|t| &t.targets)
        .all(|&l| in_code(l))
    {
        return Err("a jump table leaves the code".to_string());
    }
    Ok(())
}

/// A module version that stays alive until the program ends: a plain
/// shared reference, copied freely, with no reference count to update.
/// This is what the interpreter runs, keeps in frames and catches, and
/// what call caches point at.
///
/// Invariant: a `ModuleRef` is made only by `pin`, which first stores a
/// clone of the module's `Arc` in `PINNED`, a list that is never emptied.
/// So module versions are never freed once code may run in them (a
/// reloaded module costs its memory for the rest of the run, as the
/// global fun table already required for modules with funs).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct ModuleRef(&'static Module);

/// Every pinned module version (see `ModuleRef`); append-only.
static PINNED: Mutex<Vec<Arc<Module>>> = Mutex::new(Vec::new());

impl ModuleRef {
    /// Keeps `module` alive for good and returns a reference to it. After
    /// the first call per version this is one atomic load.
    #[inline]
    pub fn pin(module: &Arc<Module>) -> ModuleRef {
        if !module.pinned.load(Ordering::Acquire) {
            let mut pinned = PINNED.lock().unwrap_or_else(|e| e.into_inner());
            if !module.pinned.load(Ordering::Acquire) {
                pinned.push(module.clone());
                module.pinned.store(true, Ordering::Release);
            }
        }
        // SAFETY: `PINNED` holds a clone of this `Arc` and never drops
        // it, so the `Module` it points to lives (and stays put) until
        // the program ends.
        ModuleRef(unsafe { &*Arc::as_ptr(module) })
    }

    /// The module version behind `ptr`, the address of a pinned one
    /// (native code holds its module version so, as a constant).
    ///
    /// # Safety
    /// `ptr` must be the address of a module version `pin` returned.
    #[inline]
    pub unsafe fn from_pinned(ptr: *const Module) -> ModuleRef {
        // SAFETY: as the caller promises, `PINNED` keeps it for good.
        ModuleRef(unsafe { &*ptr })
    }

    /// The module's `Arc`, for the places that keep one (a process
    /// between time slices).
    pub fn to_arc(self) -> Arc<Module> {
        let ptr: *const Module = self.0;
        // SAFETY: `self.0` came from `Arc::as_ptr` of an `Arc` that
        // `PINNED` keeps (see `pin`), so the strong count is at least one
        // and stays so; adding one and rebuilding an `Arc` from the same
        // pointer is then exactly an `Arc::clone`.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// The same module version (pointer equality).
    #[inline(always)]
    pub fn same(self, other: ModuleRef) -> bool {
        std::ptr::eq(self.0, other.0)
    }

    /// The same module version as `arc`.
    #[inline]
    pub fn is(self, arc: &Arc<Module>) -> bool {
        std::ptr::eq(self.0, Arc::as_ptr(arc))
    }

    /// The module itself, with its full lifetime.
    #[inline(always)]
    pub fn get(self) -> &'static Module {
        self.0
    }

    /// The call target of this version's function `function`.
    pub fn call_target(self, function: u32) -> &'static CallTarget {
        let targets = self.0.call_targets.get_or_init(|| {
            self.0
                .functions
                .iter()
                .map(|f| CallTarget {
                    module: self,
                    entry: f.entry + 1,
                })
                .collect()
        });
        &targets[function as usize]
    }
}

impl std::ops::Deref for ModuleRef {
    type Target = Module;
    #[inline(always)]
    fn deref(&self) -> &Module {
        self.0
    }
}

impl std::fmt::Debug for ModuleRef {
    // Only the name: the module's own call targets point back at it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModuleRef({})", self.0.name.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty(name: &str) -> Module {
        Module::new(
            Atom::intern(name),
            format!("{name}.act"),
            vec![Instr::FuncInfo { function: 0 }, Instr::Return {}],
            vec![0, 0],
            Vec::new(),
            Vec::new(),
            Vec::new(),
            vec![FunctionInfo {
                name: Atom::intern("f"),
                arity: 0,
                entry: 0,
            }],
            HashMap::new(),
            HashMap::new(),
            Vec::new(),
            Vec::new(),
            1,
        )
        .expect("valid code")
    }

    #[test]
    fn a_pinned_module_outlives_its_last_arc() {
        let arc = Arc::new(empty("pinned_outlives"));
        let r = ModuleRef::pin(&arc);
        assert!(r.is(&arc));
        drop(arc);
        // Only `PINNED` keeps it now; reading it must still be valid
        // (Miri or a sanitizer would flag a use after free here).
        assert_eq!(r.name, Atom::intern("pinned_outlives"));
        let again = r.to_arc();
        assert!(r.is(&again));
        assert!(
            ModuleRef::pin(&again).same(r),
            "pinning twice is the same version"
        );
        // PINNED's clone and `again`: to_arc counted itself.
        assert_eq!(Arc::strong_count(&again), 2);
    }

    #[test]
    fn a_call_target_enters_past_the_func_info_in_its_own_version() {
        let r = ModuleRef::pin(&Arc::new(empty("call_target")));
        let t = r.call_target(0);
        assert_eq!(t.entry, 1);
        assert!(t.module.same(r));
        assert!(std::ptr::eq(t, r.call_target(0)), "made once, then reused");
    }
}

#[cfg(test)]
mod verify_tests {
    use super::*;
    use crate::code::{Dst, Label};

    fn check(code: Vec<Instr>) -> Result<(), String> {
        verify(&code, &[], &[])
    }

    #[test]
    fn the_verifier_rejects_code_that_could_run_off_its_end() {
        assert!(check(vec![]).is_err());
        assert!(check(vec![Instr::FuncInfo { function: 0 }]).is_err());
        assert!(check(vec![Instr::FuncInfo { function: 0 }, Instr::Return {}]).is_ok());
    }

    #[test]
    fn the_verifier_rejects_labels_and_registers_out_of_range() {
        let ret = Instr::Return {};
        assert!(check(vec![Instr::Jump { to: Label(2) }, ret]).is_err());
        assert!(check(vec![Instr::Jump { to: Label(1) }, ret]).is_ok());
        let far = Instr::Move {
            src: Src::x(X_REGISTERS as u32),
            dst: Dst::x(0),
        };
        assert!(check(vec![far, ret]).is_err());
        let far = Instr::Move {
            src: Src::x(0),
            dst: Dst::x(X_REGISTERS as u16),
        };
        assert!(check(vec![far, ret]).is_err());
    }

    #[test]
    fn the_verifier_rejects_a_call_that_is_not_to_a_function_entry() {
        let call = |t| Instr::CallOnly {
            arity: 0,
            target: Label(t),
        };
        assert!(check(vec![Instr::FuncInfo { function: 0 }, call(0)]).is_ok());
        assert!(check(vec![Instr::Return {}, call(0)]).is_err());
    }
}
