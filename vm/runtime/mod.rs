//! What all processes share: the loaded modules and the global fun table.
//!
//! Invariant: a module version, once registered, is never mutated; a new
//! version replaces the registry entry as a whole. The fun table is
//! append-only, so a fun's index stays valid forever.

pub mod aliases;
pub mod ets;
pub mod explain;
pub mod links;
pub mod nodes;
pub mod output;
pub mod processes;
pub mod script;
pub mod sockets;
pub mod stdin;

use crate::code::{Module, ModuleRef};
use crate::term::Atom;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// One entry of the global fun table: the module version a fun was made
/// in and which of its funs it is.
pub struct FunEntry {
    pub module: Arc<Module>,
    /// Index into `module.funs`.
    pub fun: u32,
    /// The same module, pinned, for the interpreter's fun calls.
    pub code: ModuleRef,
    /// Where a call of the fun enters (past its function's `FuncInfo`), and how
    /// many arguments it takes (not counting captured variables): a fun
    /// call needs nothing else from the module's tables.
    pub entry: u32,
    pub arity: u32,
    /// A slot the native tier keeps for this fun (its call-site record,
    /// made once the target has native code); opaque here, null until
    /// then.
    pub native: std::sync::atomic::AtomicPtr<()>,
}

/// Compiles the module named `name` from a source found by the loader;
/// set by the command line (the runtime does not depend on the compiler).
pub type Loader = dyn Fn(&str) -> Option<Result<Module, String>> + Send + Sync;

struct Registry {
    modules: RwLock<HashMap<Atom, Arc<Module>>>,
    funs: FunTable,
    loader: OnceLock<Box<Loader>>,
    /// Modules the loader failed or declined to load (so we ask once).
    missing: Mutex<HashMap<Atom, Option<String>>>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        modules: RwLock::new(HashMap::new()),
        funs: FunTable::new(),
        loader: OnceLock::new(),
        missing: Mutex::new(HashMap::new()),
    })
}

/// Installs the function that finds and compiles modules on first use.
pub fn set_loader(loader: Box<Loader>) {
    let _ = registry().loader.set(loader);
}

static MAX_X: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(4);

/// The most X registers any loaded module uses.
#[inline]
pub fn max_x() -> usize {
    MAX_X.load(std::sync::atomic::Ordering::Relaxed)
}

/// Registers `module` as the newest version of its name, giving its funs
/// their global indices.
pub fn load(mut module: Module) -> Arc<Module> {
    let r = registry();
    // Entries are appended under the table's lock, so a module's funs
    // get consecutive indices.
    let mut next = r.funs.next.lock().unwrap_or_else(|e| e.into_inner());
    module.fun_base = *next;
    MAX_X.fetch_max(module.max_x as usize, std::sync::atomic::Ordering::Relaxed);
    let count = module.funs.len() as u32;
    let module = Arc::new(module);
    let code = ModuleRef::pin(&module);
    for i in 0..count {
        let def = &module.funs[i as usize];
        r.funs.publish(
            *next,
            FunEntry {
                module: module.clone(),
                fun: i,
                code,
                entry: module.functions[def.function as usize].entry + 1,
                arity: def.arity,
                native: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            },
        );
        *next += 1;
    }
    drop(next);
    let old = r
        .modules
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(module.name, module.clone());
    // After the registry points at the new version: a call site that
    // sees the flag and looks again finds the new one.
    if let Some(old) = old {
        old.superseded
            .store(true, std::sync::atomic::Ordering::Release);
    }
    module
}

/// The newest version of module `name`, loading it on first use.
/// `Err` carries a load error message (a broken source file).
pub fn lookup(name: Atom) -> Result<Option<Arc<Module>>, String> {
    let r = registry();
    if let Some(m) = r
        .modules
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)
    {
        return Ok(Some(m.clone()));
    }
    let mut missing = r.missing.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(reason) = missing.get(&name) {
        return match reason {
            Some(e) => Err(e.clone()),
            None => Ok(None),
        };
    }
    let Some(loader) = r.loader.get() else {
        return Ok(None);
    };
    match loader(name.name()) {
        Some(Ok(module)) => {
            drop(missing);
            Ok(Some(load(module)))
        }
        Some(Err(message)) => {
            // A module beside the script that does not compile: its
            // diagnostics once, on stderr, then the call is `undef`.
            output::write_stderr(message.as_bytes());
            missing.insert(name, Some(message.clone()));
            Err(message)
        }
        None => {
            missing.insert(name, None);
            Ok(None)
        }
    }
}

/// The newest version of module `name` if it is loaded (never loads it).
pub fn loaded(name: Atom) -> Option<Arc<Module>> {
    registry()
        .modules
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&name)
        .cloned()
}

/// The names of the modules loaded so far.
pub fn loaded_names() -> Vec<Atom> {
    registry()
        .modules
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect()
}

/// The fun with global index `index`. Lock-free.
pub fn fun_entry(index: u32) -> Option<&'static FunEntry> {
    registry().funs.get(index)
}

const FUN_CHUNK: usize = 4096;
type FunChunk = Box<[OnceLock<FunEntry>]>;
const FUN_CHUNKS: usize = 4096;

/// The global fun table: append-only, read without a lock. Slots live in
/// fixed-size chunks allocated once and published through `OnceLock`, so
/// a reader only ever follows initialised pointers and an entry never
/// moves (the same scheme as the atom table).
struct FunTable {
    chunks: Box<[OnceLock<FunChunk>]>,
    /// The next free index; also serialises appends.
    next: Mutex<u32>,
}

impl FunTable {
    fn new() -> FunTable {
        FunTable {
            chunks: (0..FUN_CHUNKS).map(|_| OnceLock::new()).collect(),
            next: Mutex::new(0),
        }
    }

    fn publish(&self, index: u32, entry: FunEntry) {
        let i = index as usize;
        if let Some(chunk) = self.chunks.get(i / FUN_CHUNK) {
            let chunk = chunk.get_or_init(|| (0..FUN_CHUNK).map(|_| OnceLock::new()).collect());
            let _ = chunk[i % FUN_CHUNK].set(entry);
        }
    }

    #[inline]
    fn get(&self, index: u32) -> Option<&FunEntry> {
        let i = index as usize;
        self.chunks
            .get(i / FUN_CHUNK)?
            .get()?
            .get(i % FUN_CHUNK)?
            .get()
    }
}
