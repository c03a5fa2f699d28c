//! The checks erlc makes after parsing (placeholder; filled in next).

use super::ast::Module;
use super::diagnostic::Diagnostic;

pub fn check_module(_module: &Module) -> Vec<Diagnostic> {
    Vec::new()
}
