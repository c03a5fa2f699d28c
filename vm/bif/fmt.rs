//! Writing terms and io_lib:format for the BIFs: a thin bridge to the
//! printer and format engine of `term`, plus how this runtime names funs
//! and pids.

use crate::heap::Heap;
use crate::term::{Term, format, print};

/// `~w`
pub fn write(heap: &Heap, t: Term) -> String {
    print::write(heap, t)
}

/// `~p` starting at column 1 of an 80-column line.
pub fn print(heap: &Heap, t: Term) -> String {
    install_namer();
    print::print(heap, t, 1, 80)
}

/// `io_lib:format(Format, Args)` flattened to a string; `None` is badarg.
pub fn format(heap: &Heap, fmt: Term, args: Term) -> Option<String> {
    install_namer();
    format::format_term(heap, fmt, args).ok()
}

/// Funs print as `#Fun<Module.Index.0>` (BEAM adds a hash where we put 0).
fn install_namer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        print::set_namer(print::Namer {
            fun: |index| match crate::runtime::fun_entry(index) {
                Some(e) => format!("#Fun<{}.{}.0>", e.module.name.name(), e.fun),
                None => format!("#Fun<act.{index}.0>"),
            },
            // The table slot (the low 32 bits); its generation is not shown.
            pid: |id| format!("<0.{}.0>", (id & 0xffff_ffff) + 80),
        })
    });
}
