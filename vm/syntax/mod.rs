//! The front end: tokens, the AST, parsing and diagnostics.

pub mod ast;
pub mod span;
