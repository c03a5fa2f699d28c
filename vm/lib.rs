//! act: a small Erlang on a bytecode VM.
//!
//! The way of a program: text -> tokens -> AST (`syntax`) -> bytecode
//! (`compile`, `code`) -> processes on schedulers. Each stage depends only
//! on the ones before it.

pub mod bif;
pub mod code;
pub mod compile;
pub mod dist;
pub mod engine;
pub mod heap;
pub mod interp;
pub mod native;
pub mod process;
pub mod runtime;
pub mod syntax;
pub mod term;
// Out of alphabetical order only to merge cleanly with parallel branches.
pub mod repl;
pub mod sched;
