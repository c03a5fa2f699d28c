//! Built-in functions: one signature, one registration table.
//!
//! A BIF gets its arguments in a mutable slice (they are GC roots: a BIF
//! that allocates calls `Context::ensure` first, which may move them, and
//! then re-reads them) and returns a term or an error. BIFs never call
//! act code; `apply` and friends are instructions.

pub mod bits;
pub mod erlang;
pub mod fmt;
pub mod io;
pub mod library;
pub mod lists;
pub mod maps;
pub mod process;
pub mod shell;

use crate::process::{Class, Process};
use crate::term::{Atom, Term};
use std::collections::HashMap;
use std::sync::OnceLock;

/// What a BIF can see: its process and the X registers (as GC roots).
pub struct Context<'a> {
    pub process: &'a mut Process,
    pub x: &'a mut [Term],
}

impl Context<'_> {
    /// Makes `words` heap words free; `args` are roots and may move.
    pub fn ensure(&mut self, words: usize, args: &mut [Term]) -> Result<(), BifError> {
        self.process
            .ensure_heap(words, self.x, args)
            .map_err(|_| BifError::SystemLimit)
    }

    pub fn heap(&mut self) -> &mut crate::heap::Heap {
        &mut self.process.heap
    }
}

/// Why a BIF failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BifError {
    Badarg,
    Badarith,
    SystemLimit,
    /// An exception with a reason already on the heap (`error(R)`, ...).
    Raise(Class, Term),
    /// `error(R, Args)`: the stack trace shows the arguments.
    /// `halt(Status)`.
    Halt(i32),
}

pub type BifResult = Result<Term, BifError>;
pub type BifFn = fn(&mut Context, &mut [Term]) -> BifResult;

pub struct BifEntry {
    pub module: &'static str,
    pub name: &'static str,
    pub arity: u32,
    pub func: BifFn,
    /// Callable without a module prefix (erlang's auto-imports).
    pub auto_imported: bool,
}

macro_rules! bifs {
    ($( $module:literal => { $( $name:literal, $arity:literal => $func:path $(, $auto:ident)? ; )* } )*) => {
        pub static TABLE: &[BifEntry] = &[
            $($( BifEntry {
                module: $module,
                name: $name,
                arity: $arity,
                func: $func,
                auto_imported: bifs!(@auto $($auto)?),
            }, )*)*
        ];
    };
    (@auto auto) => { true };
    (@auto) => { false };
}

bifs! {
    "erlang" => {
        "+", 2 => erlang::plus_2;
        "-", 2 => erlang::minus_2;
        "*", 2 => erlang::times_2;
        "/", 2 => erlang::divide_2;
        "div", 2 => erlang::div_2;
        "rem", 2 => erlang::rem_2;
        "band", 2 => erlang::band_2;
        "bor", 2 => erlang::bor_2;
        "bxor", 2 => erlang::bxor_2;
        "bsl", 2 => erlang::bsl_2;
        "bsr", 2 => erlang::bsr_2;
        "bnot", 1 => erlang::bnot_1;
        "-", 1 => erlang::neg_1;
        "+", 1 => erlang::plus_1;
        "==", 2 => erlang::eq_2;
        "/=", 2 => erlang::ne_2;
        "=:=", 2 => erlang::exact_eq_2;
        "=/=", 2 => erlang::exact_ne_2;
        "<", 2 => erlang::lt_2;
        "=<", 2 => erlang::le_2;
        ">", 2 => erlang::gt_2;
        ">=", 2 => erlang::ge_2;
        "not", 1 => erlang::not_1;
        "and", 2 => erlang::and_2;
        "or", 2 => erlang::or_2;
        "xor", 2 => erlang::xor_2;
        "++", 2 => erlang::append_2;
        "--", 2 => erlang::subtract_2;
        "!", 2 => process::send_2;
        "abs", 1 => erlang::abs_1, auto;
        "float", 1 => erlang::float_1, auto;
        "trunc", 1 => erlang::trunc_1, auto;
        "round", 1 => erlang::round_1, auto;
        "floor", 1 => erlang::floor_1, auto;
        "ceil", 1 => erlang::ceil_1, auto;
        "max", 2 => erlang::max_2, auto;
        "min", 2 => erlang::min_2, auto;
        "is_atom", 1 => erlang::is_atom_1, auto;
        "is_integer", 1 => erlang::is_integer_1, auto;
        "is_float", 1 => erlang::is_float_1, auto;
        "is_number", 1 => erlang::is_number_1, auto;
        "is_boolean", 1 => erlang::is_boolean_1, auto;
        "is_list", 1 => erlang::is_list_1, auto;
        "is_tuple", 1 => erlang::is_tuple_1, auto;
        "is_binary", 1 => erlang::is_binary_1, auto;
        "is_map", 1 => erlang::is_map_1, auto;
        "is_function", 1 => erlang::is_function_1, auto;
        "is_function", 2 => erlang::is_function_2, auto;
        "is_pid", 1 => erlang::is_pid_1, auto;
        "is_reference", 1 => erlang::is_reference_1, auto;
        "element", 2 => erlang::element_2, auto;
        "setelement", 3 => erlang::setelement_3, auto;
        "tuple_size", 1 => erlang::tuple_size_1, auto;
        "size", 1 => erlang::size_1, auto;
        "length", 1 => erlang::length_1, auto;
        "hd", 1 => erlang::hd_1, auto;
        "tl", 1 => erlang::tl_1, auto;
        "atom_to_list", 1 => erlang::atom_to_list_1, auto;
        "list_to_atom", 1 => erlang::list_to_atom_1, auto;
        "list_to_existing_atom", 1 => erlang::list_to_existing_atom_1, auto;
        "atom_to_binary", 1 => erlang::atom_to_binary_1, auto;
        "atom_to_binary", 2 => erlang::atom_to_binary_2, auto;
        "binary_to_atom", 1 => erlang::binary_to_atom_1, auto;
        "binary_to_atom", 2 => erlang::binary_to_atom_2, auto;
        "integer_to_list", 1 => erlang::integer_to_list_1, auto;
        "integer_to_list", 2 => erlang::integer_to_list_2, auto;
        "list_to_integer", 1 => erlang::list_to_integer_1, auto;
        "list_to_integer", 2 => erlang::list_to_integer_2, auto;
        "integer_to_binary", 1 => erlang::integer_to_binary_1, auto;
        "binary_to_integer", 1 => erlang::binary_to_integer_1, auto;
        "float_to_list", 1 => erlang::float_to_list_1, auto;
        "float_to_list", 2 => erlang::float_to_list_2, auto;
        "float_to_binary", 1 => erlang::float_to_binary_1, auto;
        "float_to_binary", 2 => erlang::float_to_binary_2, auto;
        "integer_to_binary", 2 => erlang::integer_to_binary_2, auto;
        "binary_to_integer", 2 => erlang::binary_to_integer_2, auto;
        "list_to_float", 1 => erlang::list_to_float_1, auto;
        "binary_to_list", 1 => erlang::binary_to_list_1, auto;
        "list_to_binary", 1 => erlang::list_to_binary_1, auto;
        "iolist_to_binary", 1 => erlang::iolist_to_binary_1, auto;
        "iolist_size", 1 => erlang::iolist_size_1, auto;
        "tuple_to_list", 1 => erlang::tuple_to_list_1, auto;
        "list_to_tuple", 1 => erlang::list_to_tuple_1, auto;
        "throw", 1 => erlang::throw_1, auto;
        "error", 1 => erlang::error_1, auto;
        "error", 2 => erlang::error_2, auto;
        "exit", 1 => erlang::exit_1, auto;
        "halt", 0 => erlang::halt_0, auto;
        "halt", 1 => erlang::halt_1, auto;
        "put", 2 => erlang::put_2, auto;
        "get", 1 => erlang::get_1, auto;
        "get", 0 => erlang::get_0, auto;
        "erase", 1 => erlang::erase_1, auto;
        "make_ref", 0 => process::make_ref_0, auto;
        "self", 0 => process::self_0, auto;
        "node", 0 => erlang::node_0, auto;
        "map_get", 2 => erlang::map_get_2, auto;
        "is_map_key", 2 => erlang::is_map_key_2, auto;
        "map_size", 1 => erlang::map_size_1, auto;
        "make_fun", 3 => erlang::make_fun_3;
        "display", 1 => erlang::display_1;
        "$map_build", 1 => maps::build_1;
        "$map_update", 3 => maps::update_3;
        "$badbool", 1 => erlang::badbool_1;
        "send", 2 => process::send_2;
        "$recv_use", 1 => process::recv_use_1;
        "spawn", 1 => process::spawn_1, auto;
        "spawn", 3 => process::spawn_3, auto;
        "spawn_link", 1 => process::spawn_link_1, auto;
        "spawn_link", 3 => process::spawn_link_3, auto;
        "spawn_monitor", 1 => process::spawn_monitor_1, auto;
        "spawn_monitor", 3 => process::spawn_monitor_3, auto;
        "link", 1 => process::link_1, auto;
        "unlink", 1 => process::unlink_1, auto;
        "monitor", 2 => process::monitor_2, auto;
        "demonitor", 1 => process::demonitor_1, auto;
        "demonitor", 2 => process::demonitor_2, auto;
        "exit", 2 => process::exit_2, auto;
        "process_flag", 2 => process::process_flag_2, auto;
        "register", 2 => process::register_2, auto;
        "unregister", 1 => process::unregister_1, auto;
        "whereis", 1 => process::whereis_1, auto;
        "registered", 0 => process::registered_0, auto;
        "is_process_alive", 1 => process::is_process_alive_1, auto;
        "processes", 0 => process::processes_0, auto;
        "system_info", 1 => process::system_info_1;
        "statistics", 1 => process::statistics_1, auto;
        "monotonic_time", 0 => process::monotonic_time_0;
        "monotonic_time", 1 => process::monotonic_time_1;
        "system_time", 0 => process::system_time_0;
        "system_time", 1 => process::system_time_1;
        "node", 1 => erlang::node_1, auto;
    }
    "$shell" => {
        "take", 0 => shell::take_0;
        "reply", 1 => shell::reply_1;
        "interrupted", 0 => shell::interrupted_0;
    }
    "io" => {
        "format", 1 => io::format_1;
        "format", 2 => io::format_2;
        "format", 3 => io::format_3;
        "fwrite", 1 => io::format_1;
        "fwrite", 2 => io::format_2;
        "put_chars", 1 => io::put_chars_1;
        "put_chars", 2 => io::put_chars_2;
        "nl", 0 => io::nl_0;
        "write", 1 => io::write_1;
    }
    "io_lib" => {
        "format", 2 => io::lib_format_2;
    }
    "lists" => {
        "reverse", 1 => lists::reverse_1;
        "reverse", 2 => lists::reverse_2;
        "member", 2 => lists::member_2;
        "keyfind", 3 => lists::keyfind_3;
        "sort", 1 => lists::sort_1;
        "usort", 1 => lists::usort_1;
    }
    "maps" => {
        "new", 0 => maps::new_0;
        "get", 2 => maps::get_2;
        "get", 3 => maps::get_3;
        "put", 3 => maps::put_3;
        "find", 2 => maps::find_2;
        "is_key", 2 => maps::is_key_2;
        "remove", 2 => maps::remove_2;
        "size", 1 => maps::size_1;
        "keys", 1 => maps::keys_1;
        "values", 1 => maps::values_1;
        "to_list", 1 => maps::to_list_1;
        "from_list", 1 => maps::from_list_1;
        "merge", 2 => maps::merge_2;
        "update", 3 => maps::update_3_exact;
    }
    "erlang" => {
        "term_to_binary", 1 => library::term_to_binary_1, auto;
        "binary_to_term", 1 => library::binary_to_term_1, auto;
        "phash2", 1 => library::phash2_1;
        "phash2", 2 => library::phash2_2;
        "binary_part", 3 => library::binary_part_3, auto;
        "split_binary", 2 => library::split_binary_2, auto;
        "append_element", 2 => library::append_element_2;
        "insert_element", 3 => library::insert_element_3;
        "delete_element", 2 => library::delete_element_2;
        "make_tuple", 2 => library::make_tuple_2;
        "timestamp", 0 => library::timestamp_0;
        "convert_time_unit", 3 => library::convert_time_unit_3;
        "fun_info", 2 => library::fun_info_2;
        "memory", 0 => library::memory_0;
        "memory", 1 => library::memory_1;
    }
    "binary" => {
        "part", 3 => library::binary_part_3;
    }
    "erlang" => {
        "$bs_build", 1 => bits::bs_build_1;
        "bit_size", 1 => bits::bit_size_1, auto;
        "byte_size", 1 => bits::byte_size_1, auto;
        "is_bitstring", 1 => bits::is_bitstring_1, auto;
        "bitstring_to_list", 1 => bits::bitstring_to_list_1, auto;
        "list_to_bitstring", 1 => bits::list_to_bitstring_1, auto;
    }
}

fn index() -> &'static HashMap<(&'static str, &'static str, u32), u16> {
    static INDEX: OnceLock<HashMap<(&'static str, &'static str, u32), u16>> = OnceLock::new();
    INDEX.get_or_init(|| {
        TABLE
            .iter()
            .enumerate()
            .map(|(i, b)| ((b.module, b.name, b.arity), i as u16))
            .collect()
    })
}

/// The BIF `module:name/arity`, if there is one.
pub fn lookup(module: &str, name: &str, arity: u32) -> Option<u16> {
    index().get(&(module, name, arity)).copied()
}

/// The BIF for atoms (for `apply` and `erlang:make_fun` at run time).
pub fn lookup_atoms(module: Atom, name: Atom, arity: u32) -> Option<u16> {
    lookup(module.name(), name.name(), arity)
}

pub fn is_auto_imported(index: u16) -> bool {
    TABLE.get(index as usize).is_some_and(|b| b.auto_imported)
}

/// `module:name` and arity of a BIF, for listings and stack traces.
pub fn name_of(index: usize) -> (String, u32) {
    match TABLE.get(index) {
        Some(b) => (format!("{}:{}", b.module, b.name), b.arity),
        None => ("?".to_string(), 0),
    }
}
