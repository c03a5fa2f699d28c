//! The global atom table: interned, append-only, read without a lock.
//!
//! Invariant: an atom's index never changes and its name is never freed, so
//! an `Atom` is a plain `u32` that any thread may copy and resolve at any
//! time. Interning takes a lock; resolving a name does not: names live in
//! fixed-size chunks that are allocated once and published through
//! `OnceLock`, so a reader only ever follows initialised pointers.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// An interned atom: an index into the global table.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Atom(pub u32);

/// Erlang's default atom limit; interning past it is `system_limit`.
pub const MAX_ATOMS: usize = CHUNK_SIZE * CHUNKS;
const CHUNK_SIZE: usize = 4096;
const CHUNKS: usize = 256;

type Chunk = Box<[OnceLock<Box<str>>]>;

struct AtomTable {
    /// Written once per slot under `index`'s lock; read by anyone.
    chunks: [OnceLock<Chunk>; CHUNKS],
    /// Name -> index; also serialises appends.
    index: Mutex<HashMap<Box<str>, u32>>,
}

fn table() -> &'static AtomTable {
    static TABLE: OnceLock<AtomTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let table = AtomTable {
            chunks: [const { OnceLock::new() }; CHUNKS],
            index: Mutex::new(HashMap::new()),
        };
        // The predefined atoms take the first indices, in the order of
        // `predefined_atoms!`, so that their constants below are right.
        {
            let mut index = table.index.lock().unwrap_or_else(|e| e.into_inner());
            for name in PREDEFINED {
                append(&table, &mut index, name);
            }
        }
        table
    })
}

fn append(table: &AtomTable, index: &mut HashMap<Box<str>, u32>, name: &str) -> Option<u32> {
    let next = index.len();
    if next >= MAX_ATOMS {
        return None;
    }
    let chunk = table.chunks[next / CHUNK_SIZE]
        .get_or_init(|| (0..CHUNK_SIZE).map(|_| OnceLock::new()).collect());
    // Cannot fail: `next` is fresh and we hold the lock.
    let _ = chunk[next % CHUNK_SIZE].set(name.into());
    index.insert(name.into(), next as u32);
    Some(next as u32)
}

impl Atom {
    /// The atom named `name`, interning it if new. `None` past `MAX_ATOMS`
    /// (the caller raises `system_limit`).
    pub fn try_intern(name: &str) -> Option<Atom> {
        let table = table();
        let mut index = table.index.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = index.get(name) {
            return Some(Atom(i));
        }
        append(table, &mut index, name).map(Atom)
    }

    /// Interns `name`. For names from source code and the runtime, whose
    /// number is bounded; data-driven atoms go through `try_intern`.
    pub fn intern(name: &str) -> Atom {
        Atom::try_intern(name).unwrap_or(Atom(0))
    }

    /// The atom named `name` if it already exists (`list_to_existing_atom`).
    pub fn existing(name: &str) -> Option<Atom> {
        let table = table();
        let index = table.index.lock().unwrap_or_else(|e| e.into_inner());
        index.get(name).map(|&i| Atom(i))
    }

    /// How many atoms exist (`system_info(atom_count)`).
    pub fn count() -> usize {
        let table = table();
        table.index.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The atom's name. Lock-free.
    pub fn name(self) -> &'static str {
        let table = table();
        let i = self.0 as usize;
        table.chunks[i / CHUNK_SIZE]
            .get()
            .and_then(|chunk| chunk[i % CHUNK_SIZE].get())
            .map_or("", |name| name)
    }
}

impl std::fmt::Debug for Atom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "'{}'", self.name())
    }
}

/// Defines the predefined atoms once: the constant, and its name at the
/// constant's index of the table.
macro_rules! predefined_atoms {
    ($($constant:ident = $name:literal,)*) => {
        const PREDEFINED: &[&str] = &[$($name),*];
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u32)]
        enum Index { $($constant),* }
        impl Atom {
            $(pub const $constant: Atom = Atom(Index::$constant as u32);)*
        }
    };
}

predefined_atoms! {
    EMPTY = "",
    FALSE = "false",
    TRUE = "true",
    OK = "ok",
    ERROR = "error",
    THROW = "throw",
    EXIT = "exit",
    UNDEFINED = "undefined",
    NORMAL = "normal",
    KILL = "kill",
    KILLED = "killed",
    INFINITY = "infinity",
    NOPROC = "noproc",
    BADARG = "badarg",
    BADARITH = "badarith",
    BADMATCH = "badmatch",
    BADFUN = "badfun",
    BADARITY = "badarity",
    BADKEY = "badkey",
    BADMAP = "badmap",
    BAD_GENERATOR = "bad_generator",
    FUNCTION_CLAUSE = "function_clause",
    CASE_CLAUSE = "case_clause",
    IF_CLAUSE = "if_clause",
    TRY_CLAUSE = "try_clause",
    UNDEF = "undef",
    SYSTEM_LIMIT = "system_limit",
    TIMEOUT_VALUE = "timeout_value",
    NOCATCH = "nocatch",
    EXIT_UPPER = "EXIT",
    DOWN = "DOWN",
    PROCESS = "process",
    TRAP_EXIT = "trap_exit",
    NONODE = "nonode@nohost",
    ERLANG = "erlang",
    STANDARD_IO = "standard_io",
    STANDARD_ERROR = "standard_error",
    FILE = "file",
    LINE = "line",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_atoms_have_their_names() {
        assert_eq!(Atom::TRUE.name(), "true");
        assert_eq!(Atom::LINE.name(), "line");
        assert_eq!(Atom::intern("false"), Atom::FALSE);
    }

    #[test]
    fn interning_is_idempotent_and_names_round_trip() {
        let a = Atom::intern("hello_atom_test");
        assert_eq!(Atom::intern("hello_atom_test"), a);
        assert_eq!(a.name(), "hello_atom_test");
        assert_eq!(Atom::existing("hello_atom_test"), Some(a));
        assert_eq!(Atom::existing("surely_never_interned_xyz"), None);
    }

    #[test]
    fn atoms_intern_from_many_threads_consistently() {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..1000)
                        .map(|i| Atom::intern(&format!("thr_{i}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for r in &results[1..] {
            assert_eq!(r, &results[0]);
        }
        assert_eq!(results[0][7].name(), "thr_7");
    }
}
