//! Built-in functions: one signature, one registration table.
//!
//! A BIF gets its arguments in a mutable slice (they are GC roots: a BIF
//! that allocates calls `Context::ensure` first, which may move them, and
//! then re-reads them) and returns a term or an error. BIFs never call
//! act code; `apply` and friends are instructions.

pub mod binary;
pub mod bits;
pub mod digest;
pub mod dist;
// Helper `lib`: io_lib:format's deep list.
pub mod deep_format;
pub mod erl_syntax;
pub mod erlang;
// Helper `lib`: everyday gaps the library audit found.
pub mod ets;
pub mod everyday;
pub mod extras;
pub mod file;
pub mod filename;
pub mod fmt;
pub mod hash;
pub mod input;
// Helper `lib`: another process's state for process_info.
pub mod inspect;
pub mod io;
pub mod io_device;
pub mod io_server;
pub mod library;
pub mod lists;
pub mod maps;
// Helper `lib`: lists:sort/1 in OTP's order for equal but different terms.
pub mod otp_sort;
pub mod packet;
// Helper `lib`: function_exported, module_loaded, code:*.
pub mod math;
pub mod modules;
pub mod more;
pub mod port;
pub mod process;
pub mod random;
pub mod re;
pub mod re_syntax;
pub mod records;
pub mod script;
// Helper `lib`: atomics, counters' base, persistent_term.
pub mod shared;
pub mod shell;
// Helper `net`: gen_tcp, gen_udp and inet's BIFs.
pub mod socket;
pub mod unistr;
pub mod ziggurat;
pub mod zlib;

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
    #[inline]
    pub fn ensure(&mut self, words: usize, args: &mut [Term]) -> Result<(), BifError> {
        self.process
            .ensure_heap(words, self.x, args)
            .map_err(|_| BifError::SystemLimit)
    }

    pub fn heap(&mut self) -> &mut crate::heap::Heap {
        &mut self.process.heap
    }
}

thread_local! {
    /// The `cause` a failing BIF gives its `badarg` (BEAM's error_info
    /// says `#{cause => badopt, ...}` for a bad option), with the BIF's
    /// name: read, and cleared, when the error's stack trace is built.
    static BADARG_CAUSE: std::cell::Cell<Option<(Atom, Atom)>> =
        const { std::cell::Cell::new(None) };
}

/// The BIF `function` is about to fail with `badarg` for `cause`.
pub fn set_badarg_cause(function: Atom, cause: Atom) {
    BADARG_CAUSE.with(|c| c.set(Some((function, cause))));
}

/// The cause the failing BIF `function` left, if it left one (taken).
pub fn take_badarg_cause(function: Atom) -> Option<Atom> {
    BADARG_CAUSE
        .with(|c| c.take())
        .and_then(|(f, cause)| (f == function).then_some(cause))
}

/// The `cause` of the error_info of BIF `m:f`'s failure with `reason` on
/// `args`: the one the BIF left, else (ets) what its table tells.
pub fn badarg_cause(
    heap: &crate::heap::Heap,
    m: Atom,
    f: Atom,
    args: &[Term],
    reason: Term,
) -> Option<Atom> {
    let left = take_badarg_cause(f);
    if reason != Term::atom(Atom::BADARG) {
        return None;
    }
    left.or_else(|| {
        (m.name() == "ets")
            .then(|| ets::table_cause(heap, f, args))
            .flatten()
    })
}

/// Why a BIF failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BifError {
    Badarg,
    Badarith,
    SystemLimit,
    /// An exception with a reason already on the heap (`error(R)`, ...).
    Raise(Class, Term),
    /// `erlang:raise(Class, Reason, Trace)`: an exception with the given
    /// stack trace, as a rethrow.
    RaiseTrace(Class, Term, Term),
    /// `error(R, Args)`: the stack trace shows the arguments.
    /// `halt(Status)`.
    Halt(i32),
    /// A segment of a binary construction failed (`badarg`): the cause
    /// `{Position, Type, What, Value}` that BEAM puts in the caller's
    /// frame for erl_erts_errors:format_bs_fail.
    BsFail(Term),
}

pub type BifResult = Result<Term, BifError>;

/// Whether a BIF that spent the rest of the time slice ends it at once,
/// before the next instruction: output (in Erlang a request to the io
/// server that the caller waits for, see `io`), `exit/2`, whose signal to
/// the caller itself must be handled before it goes on, and
/// `is_process_alive/1`, which may wait for a process the caller killed
/// to finish exiting.
pub fn ends_slice(entry: &BifEntry) -> bool {
    entry.module == "io"
        || (entry.module == "erlang" && matches!(entry.name, "exit" | "is_process_alive"))
}

/// Whether a BIF only reads: on every path, errors included, it reads
/// its arguments' terms and nothing else, allocates nothing (so it never
/// collects), spends no reductions of its own, touches neither the X
/// registers nor the process beyond its heap, and fails with a plain
/// `badarg`. Native code calls these without bringing the process up to
/// date around the call (`native::helpers::call_reading_bif`). A BIF
/// whose error builds a term (`{badmap, M}`) does not qualify.
pub fn only_reads(entry: &BifEntry) -> bool {
    matches!(
        (entry.module, entry.name, entry.arity),
        ("erlang", "length" | "hd" | "tl" | "tuple_size" | "size", 1)
            | ("erlang", "bit_size" | "byte_size", 1)
            | ("lists", "member", 2)
            | ("lists", "keyfind" | "keymember", 3)
    )
}

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
        "is_port", 1 => port::is_port_1, auto;
        "element", 2 => erlang::element_2, auto;
        "setelement", 3 => erlang::setelement_3, auto;
        "is_record", 2 => records::is_record_2, auto;
        "is_record", 3 => records::is_record_3, auto;
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
        "node", 0 => dist::node_0, auto;
        "map_get", 2 => erlang::map_get_2, auto;
        "is_map_key", 2 => erlang::is_map_key_2, auto;
        "map_size", 1 => erlang::map_size_1, auto;
        "make_fun", 3 => erlang::make_fun_3;
        "display", 1 => erlang::display_1;
        "display_string", 1 => erlang::display_string_1;
        "$map_build", 1 => maps::build_1;
        "$map_update", 3 => maps::update_3;
        "$map_update1", 3 => maps::update_3_exact;
        // A later step of the same `M#{K := V, ...}`: the same update
        // (native code may write it into the copy the step before made).
        "$map_update1_chain", 3 => maps::update_3_exact;
        "$badbool", 1 => erlang::badbool_1;
        "send", 2 => process::send_2;
        "send", 3 => process::send_3;
        "send_nosuspend", 2 => process::send_nosuspend_2;
        "send_nosuspend", 3 => process::send_nosuspend_3;
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
        "monitor", 3 => process::monitor_3, auto;
        "demonitor", 1 => process::demonitor_1, auto;
        "demonitor", 2 => process::demonitor_2, auto;
        "alias", 0 => process::alias_0, auto;
        "alias", 1 => process::alias_1, auto;
        "unalias", 1 => process::unalias_1, auto;
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
        "node", 1 => dist::node_1, auto;
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
        "reverse", 2 => lists::reverse_2;
        "member", 2 => lists::member_2;
        "keyfind", 3 => lists::keyfind_3;
        "keymember", 3 => lists::keymember_3;
        "keysearch", 3 => lists::keysearch_3;
        "sort", 1 => lists::sort_1;
        "usort", 1 => lists::usort_1;
        "$keysort", 2 => lists::keysort_fast_2;
        "$ukeysort", 2 => lists::ukeysort_fast_2;
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
        "binary_part", 3 => library::binary_part_3, auto;
        "split_binary", 2 => library::split_binary_2, auto;
        "append_element", 2 => library::append_element_2;
        "insert_element", 3 => library::insert_element_3;
        "delete_element", 2 => library::delete_element_2;
        "make_tuple", 2 => library::make_tuple_2;
        "timestamp", 0 => library::timestamp_0;
        "convert_time_unit", 3 => library::convert_time_unit_3;
        "fun_info", 1 => library::fun_info_1;
        "fun_info", 2 => library::fun_info_2;
        "memory", 0 => library::memory_0;
        "memory", 1 => library::memory_1;
    }
    "binary" => {
        "part", 3 => library::binary_part_3;
    }
    "erlang" => {
        "phash", 2 => hash::phash_2;
        "phash2", 1 => hash::phash2_1;
        "phash2", 2 => hash::phash2_2;
    }
    "filename" => {
        "$cwd", 0 => filename::cwd_0;
    }
    // bifs: math, rand helpers, erlang extras, binary, unicode.
    "math" => {
        "pi", 0 => math::pi_0;
        "sqrt", 1 => math::sqrt_1;
        "pow", 2 => math::pow_2;
        "exp", 1 => math::exp_1;
        "log", 1 => math::log_1;
        "log2", 1 => math::log2_1;
        "log10", 1 => math::log10_1;
        "sin", 1 => math::sin_1;
        "cos", 1 => math::cos_1;
        "tan", 1 => math::tan_1;
        "asin", 1 => math::asin_1;
        "acos", 1 => math::acos_1;
        "atan", 1 => math::atan_1;
        "atan2", 2 => math::atan2_2;
        "sinh", 1 => math::sinh_1;
        "cosh", 1 => math::cosh_1;
        "tanh", 1 => math::tanh_1;
        "asinh", 1 => math::asinh_1;
        "acosh", 1 => math::acosh_1;
        "atanh", 1 => math::atanh_1;
        "ceil", 1 => math::ceil_1;
        "floor", 1 => math::floor_1;
        "fmod", 2 => math::fmod_2;
        "erf", 1 => math::erf_1;
        "erfc", 1 => math::erfc_1;
    }
    "rand" => {
        "$normal_kw", 1 => random::normal_kw_1;
        "$normal_f", 1 => random::normal_f_1;
        "$exsss_next", 2 => random::exsss_next_2;
    }
    "crypto" => {
        "strong_rand_bytes", 1 => random::strong_rand_bytes_1;
    }
    "erlang" => {
        "decode_packet", 3 => packet::decode_packet_3;
    }
    "erl_error" => {
        "$format", 4 => extras::format_exception_4;
    }
    "zlib" => {
        "compress", 1 => zlib::compress_1;
        "uncompress", 1 => zlib::uncompress_1;
        "zip", 1 => zlib::zip_1;
        "unzip", 1 => zlib::unzip_1;
        "gzip", 1 => zlib::gzip_1;
        "gunzip", 1 => zlib::gunzip_1;
    }
    "atomics" => {
        "new", 2 => shared::new_2;
        "$info", 1 => shared::info_raw_1;
        "get", 2 => shared::get_2;
        "put", 3 => shared::put_3;
        "add", 3 => shared::add_3;
        "sub", 3 => shared::sub_3;
        "add_get", 3 => shared::add_get_3;
        "sub_get", 3 => shared::sub_get_3;
        "exchange", 3 => shared::exchange_3;
        "compare_exchange", 4 => shared::compare_exchange_4;
    }
    "persistent_term" => {
        "put", 2 => shared::pt_put_2;
        "get", 1 => shared::pt_get_1;
        "get", 2 => shared::pt_get_2;
        "get", 0 => shared::pt_get_0;
        "erase", 1 => shared::pt_erase_1;
        "$info", 0 => shared::pt_info_raw_0;
    }
    "erlang" => {
        "send_after", 3 => extras::send_after_3;
        "send_after", 4 => extras::send_after_4;
        "start_timer", 3 => extras::start_timer_3;
        "start_timer", 4 => extras::start_timer_4;
        "cancel_timer", 1 => extras::cancel_timer_1;
        "cancel_timer", 2 => extras::cancel_timer_2;
        "read_timer", 1 => extras::read_timer_1;
        "read_timer", 2 => extras::read_timer_2;
        "error", 3 => extras::error_3, auto;
        "raise", 3 => extras::raise_3;
        "unique_integer", 0 => extras::unique_integer_0;
        "unique_integer", 1 => extras::unique_integer_1;
        "now", 0 => extras::now_0, auto;
        "localtime", 0 => extras::localtime_0;
        "universaltime", 0 => extras::universaltime_0;
        "date", 0 => extras::date_0, auto;
        "time", 0 => extras::time_0, auto;
        "process_info", 1 => extras::process_info_1, auto;
        "process_info", 2 => extras::process_info_2, auto;
        "group_leader", 0 => extras::group_leader_0, auto;
        "group_leader", 2 => extras::group_leader_2, auto;
        "garbage_collect", 0 => extras::garbage_collect_0, auto;
        "garbage_collect", 1 => extras::garbage_collect_1, auto;
        "yield", 0 => extras::yield_0;
        "bump_reductions", 1 => extras::bump_reductions_1;
        "spawn_opt", 2 => extras::spawn_opt_2, auto;
        "spawn_opt", 3 => extras::spawn_opt_3, auto;
        "spawn_opt", 4 => extras::spawn_opt_4, auto;
        "spawn_opt", 5 => extras::spawn_opt_5, auto;
        "pid_to_list", 1 => extras::pid_to_list_1, auto;
        "ref_to_list", 1 => extras::ref_to_list_1, auto;
        "list_to_pid", 1 => extras::list_to_pid_1, auto;
        "list_to_ref", 1 => extras::list_to_ref_1, auto;
    }
    "binary" => {
        "part", 2 => binary::part_2;
        "match", 2 => binary::match_2;
        "match", 3 => binary::match_3;
        "matches", 2 => binary::matches_2;
        "matches", 3 => binary::matches_3;
        "compile_pattern", 1 => binary::compile_pattern_1;
        "split", 2 => binary::split_2;
        "split", 3 => binary::split_3;
        "replace", 3 => binary::replace_3;
        "replace", 4 => binary::replace_4;
        "copy", 1 => binary::copy_1;
        "copy", 2 => binary::copy_2;
        "first", 1 => binary::first_1;
        "last", 1 => binary::last_1;
        "at", 2 => binary::at_2;
        "bin_to_list", 1 => binary::bin_to_list_1;
        "bin_to_list", 2 => binary::bin_to_list_2;
        "bin_to_list", 3 => binary::bin_to_list_3;
        "list_to_bin", 1 => binary::list_to_bin_1;
        "longest_common_prefix", 1 => binary::longest_common_prefix_1;
        "longest_common_suffix", 1 => binary::longest_common_suffix_1;
        "referenced_byte_size", 1 => binary::referenced_byte_size_1;
        "decode_unsigned", 1 => binary::decode_unsigned_1;
        "decode_unsigned", 2 => binary::decode_unsigned_2;
        "encode_unsigned", 1 => binary::encode_unsigned_1;
        "encode_unsigned", 2 => binary::encode_unsigned_2;
    }
    "unicode" => {
        "characters_to_list", 1 => binary::characters_to_list_1;
        "characters_to_list", 2 => binary::characters_to_list_2;
        "characters_to_binary", 1 => binary::characters_to_binary_1;
        "characters_to_binary", 2 => binary::characters_to_binary_2;
        "characters_to_binary", 3 => binary::characters_to_binary_3;
        "characters_to_nfc_list", 1 => binary::characters_to_nfc_list_1;
        "characters_to_nfd_list", 1 => binary::characters_to_nfd_list_1;
        "characters_to_nfkc_list", 1 => binary::characters_to_nfkc_list_1;
        "characters_to_nfkd_list", 1 => binary::characters_to_nfkd_list_1;
        "characters_to_nfc_binary", 1 => binary::characters_to_nfc_binary_1;
        "characters_to_nfd_binary", 1 => binary::characters_to_nfd_binary_1;
        "characters_to_nfkc_binary", 1 => binary::characters_to_nfkc_binary_1;
        "characters_to_nfkd_binary", 1 => binary::characters_to_nfkd_binary_1;
    }
    "ets" => {
        "new", 2 => ets::new_2;
        "delete", 1 => ets::delete_1;
        "delete", 2 => ets::delete_2;
        "delete_all_objects", 1 => ets::delete_all_objects_1;
        "delete_object", 2 => ets::delete_object_2;
        "insert", 2 => ets::insert_2;
        "insert_new", 2 => ets::insert_new_2;
        "lookup", 2 => ets::lookup_2;
        "lookup_element", 3 => ets::lookup_element_3;
        "member", 2 => ets::member_2;
        "take", 2 => ets::take_2;
        "update_counter", 3 => ets::update_counter_3;
        "update_counter", 4 => ets::update_counter_4;
        "update_element", 3 => ets::update_element_3;
        "tab2list", 1 => ets::tab2list_1;
        "first", 1 => ets::first_1;
        "last", 1 => ets::last_1;
        "next", 2 => ets::next_2;
        "prev", 2 => ets::prev_2;
        "info", 1 => ets::info_1;
        "info", 2 => ets::info_2;
        "match", 1 => ets::select_1;
        "match", 2 => ets::match_2;
        "match", 3 => ets::match_3;
        "match_object", 1 => ets::select_1;
        "match_object", 2 => ets::match_object_2;
        "match_object", 3 => ets::match_object_3;
        "match_delete", 2 => ets::match_delete_2;
        "select", 1 => ets::select_1;
        "select", 2 => ets::select_2;
        "select", 3 => ets::select_3;
        "select_reverse", 2 => ets::select_reverse_2;
        "select_count", 2 => ets::select_count_2;
        "select_delete", 2 => ets::select_delete_2;
        "select_replace", 2 => ets::select_replace_2;
        "all", 0 => ets::all_0;
        "rename", 2 => ets::rename_2;
        "give_away", 3 => ets::give_away_3;
        "setopts", 2 => ets::setopts_2;
        "whereis", 1 => ets::whereis_1;
        "slot", 2 => ets::slot_2;
        "match_spec_compile", 1 => ets::match_spec_compile_1;
        "match_spec_run", 2 => ets::match_spec_run_2;
    }
    // io input and options, files, os, init, ports (helper `hour`).
    "io" => {
        "nl", 1 => io::nl_1;
        "write", 2 => io::write_2;
        "fwrite", 3 => io::format_3;
        "setopts", 1 => input::setopts_1;
        "setopts", 2 => input::setopts_2;
        "getopts", 0 => input::getopts_0;
        "getopts", 1 => input::getopts_1;
        "columns", 0 => input::columns_0;
        "columns", 1 => input::columns_1;
        "rows", 0 => input::rows_0;
        "rows", 1 => input::rows_1;
    }
    "$io" => {
        "prompt", 2 => input::prompt_2;
        "take", 2 => input::take_2;
    }
    "$file" => {
        "open", 2 => file::open_2;
        "bind", 2 => file::bind_2;
        "close", 1 => file::close_1;
        "consult_text", 1 => input::consult_text_1;
        "read_line", 1 => file::read_line_1;
        "read", 2 => file::read_2;
    }
    "file" => {
        "read_file", 1 => file::read_file_1;
        "write_file", 2 => file::write_file_2;
        "write_file", 3 => file::write_file_3;
        "write", 2 => file::write_2;
        "position", 2 => file::position_2;
        "sync", 1 => file::sync_1;
        "datasync", 1 => file::sync_1;
        "truncate", 1 => file::truncate_1;
        "delete", 1 => file::delete_1;
        "rename", 2 => file::rename_2;
        "make_dir", 1 => file::make_dir_1;
        "del_dir", 1 => file::del_dir_1;
        "list_dir", 1 => file::list_dir_1;
        "get_cwd", 0 => file::get_cwd_0;
        "read_file_info", 1 => file::read_file_info_1;
        "set_cwd", 1 => file::set_cwd_1;
    }
    "os" => {
        "getenv", 0 => file::getenv_0;
        "getenv", 1 => file::getenv_1;
        "getenv", 2 => file::getenv_2;
        "putenv", 2 => file::putenv_2;
        "unsetenv", 1 => file::unsetenv_1;
        "getpid", 0 => file::getpid_0;
        "timestamp", 0 => file::timestamp_0;
        "system_time", 0 => file::system_time_0;
        "system_time", 1 => file::system_time_1;
        "type", 0 => file::type_0;
        "cmd", 1 => file::cmd_1;
    }
    "init" => {
        "get_plain_arguments", 0 => file::get_plain_arguments_0;
    }
    "erlang" => {
        "open_port", 2 => port::open_port_2, auto;
        "port_command", 2 => port::port_command_2, auto;
        "port_close", 1 => port::port_close_1, auto;
        "$bs_build", 1 => bits::bs_build;
        "$bs_build", 2 => bits::bs_build;
        "$bs_build", 3 => bits::bs_build;
        "$bs_build", 4 => bits::bs_build;
        "$bs_build", 5 => bits::bs_build;
        "$bs_build", 6 => bits::bs_build;
        "$bs_build", 7 => bits::bs_build;
        "$bs_build", 8 => bits::bs_build;
        "bit_size", 1 => bits::bit_size_1, auto;
        "byte_size", 1 => bits::byte_size_1, auto;
        "is_bitstring", 1 => bits::is_bitstring_1, auto;
        "bitstring_to_list", 1 => bits::bitstring_to_list_1, auto;
        "list_to_bitstring", 1 => bits::list_to_bitstring_1, auto;
    }
    "$string" => {
        "upper", 1 => unistr::upper_1;
        "lower", 1 => unistr::lower_1;
        "fold", 1 => unistr::fold_1;
        "title", 1 => unistr::title_1;
        "graphemes", 1 => unistr::graphemes_1;
    }
    "crypto" => {
        "hash", 2 => digest::hash_2;
    }
    "io_lib" => {
        "fread", 2 => input::lib_fread_2;
    }
    "re" => {
        "run", 2 => re::run_2;
        "run", 3 => re::run_3;
        "replace", 3 => re::replace_3;
        "replace", 4 => re::replace_4;
        "split", 2 => re::split_2;
        "split", 3 => re::split_3;
        "compile", 1 => re::compile_1;
        "compile", 2 => re::compile_2;
        "inspect", 2 => re::inspect_2;
        "version", 0 => re::version_0;
    }
    // The library completeness work (helper `lib`).
    "erl_scan" => {
        "string", 1 => erl_syntax::string_1;
        "string", 2 => erl_syntax::string_2;
    }
    "$erl_parse" => {
        "parse_exprs", 1 => erl_syntax::parse_exprs_1;
        "parse_form", 1 => erl_syntax::parse_form_1;
    }
    "$maps" => {
        "walk_list", 1 => maps::walk_list_1;
    }
    "erlang" => {
        "binary_to_existing_atom", 1 => more::binary_to_existing_atom_1, auto;
        "binary_to_existing_atom", 2 => more::binary_to_existing_atom_2, auto;
        "binary_to_float", 1 => more::binary_to_float_1, auto;
        "binary_to_list", 3 => more::binary_to_list_3, auto;
        "binary_part", 2 => more::binary_part_2, auto;
        "term_to_binary", 2 => more::term_to_binary_2, auto;
        "binary_to_term", 2 => more::binary_to_term_2, auto;
        "external_size", 1 => more::external_size_1;
        "external_size", 2 => more::external_size_2;
        "erase", 0 => more::erase_0, auto;
        "get_keys", 0 => more::get_keys_0, auto;
        "get_keys", 1 => more::get_keys_1, auto;
        "make_tuple", 3 => more::make_tuple_3;
        "is_alive", 0 => dist::is_alive_0, auto;
        "nodes", 0 => dist::nodes_0, auto;
        "nodes", 1 => dist::nodes_1, auto;
        "monitor_node", 2 => dist::monitor_node_2, auto;
        "disconnect_node", 1 => dist::disconnect_node_1;
        "get_cookie", 0 => dist::get_cookie_0;
        "set_cookie", 1 => dist::set_cookie_1;
        "set_cookie", 2 => dist::set_cookie_2;
        "$dist_connect", 1 => dist::dist_connect_1;
        "$dist_spawn_request", 5 => dist::dist_spawn_request_5;
        "$dist_spawned", 2 => dist::dist_spawned_2;
        "$dist_ready", 0 => dist::dist_ready_0;
        "$epmd_names", 1 => dist::epmd_names_1;
        "$dist_monitor_nodes", 1 => dist::dist_monitor_nodes_1;
        "$dist_net_ticktime", 0 => dist::get_net_ticktime_0;
        "$dist_set_net_ticktime", 1 => dist::dist_set_net_ticktime_1;
        "fun_to_list", 1 => more::fun_to_list_1, auto;
        "append", 2 => more::append_2;
        "subtract", 2 => more::subtract_2;
        "md5", 1 => digest::md5_1;
        "md5_init", 0 => digest::md5_init_0;
        "md5_update", 2 => digest::md5_update_2;
        "md5_final", 1 => digest::md5_final_1;
        "crc32", 1 => more::crc32_1;
        "crc32", 2 => more::crc32_2;
        "adler32", 1 => more::adler32_1;
        "adler32", 2 => more::adler32_2;
    }
    "binary" => {
        "encode_hex", 1 => more::encode_hex_1;
        "decode_hex", 1 => more::decode_hex_1;
    }
    "erlang" => {
        "function_exported", 3 => modules::function_exported_3;
        "module_loaded", 1 => modules::module_loaded_1;
    }
    "erlang" => {
        "localtime_to_universaltime", 1 => everyday::localtime_to_universaltime_1;
        "localtime_to_universaltime", 2 => everyday::localtime_to_universaltime_2;
        "universaltime_to_localtime", 1 => everyday::universaltime_to_localtime_1;
        "universaltime_to_posixtime", 1 => everyday::universaltime_to_posixtime_1;
        "posixtime_to_universaltime", 1 => everyday::posixtime_to_universaltime_1;
        "ports", 0 => everyday::ports_0;
    }
    "inet" => {
        "gethostname", 0 => everyday::gethostname_0;
    }
    "os" => {
        "perf_counter", 0 => everyday::perf_counter_0;
        "perf_counter", 1 => everyday::perf_counter_1;
        "version", 0 => everyday::version_0;
        "find_executable", 1 => everyday::find_executable_1;
        "find_executable", 2 => everyday::find_executable_2;
        "cmd", 2 => everyday::cmd_2;
        "env", 0 => everyday::env_0;
    }
    "file" => {
        "del_dir_r", 1 => everyday::del_dir_r_1;
        "copy", 2 => everyday::copy_2;
    }
    "unicode" => {
        "bom_to_encoding", 1 => everyday::bom_to_encoding_1;
        "encoding_to_bom", 1 => everyday::encoding_to_bom_1;
    }
    "io" => {
        "printable_range", 0 => everyday::printable_range_0;
    }
    "$socket" => {
        "tcp_listen", 2 => socket::tcp_listen_2;
        "tcp_connect", 4 => socket::tcp_connect_4;
        "udp_open", 2 => socket::udp_open_2;
        "recv", 2 => socket::recv_2;
        "accept", 1 => socket::accept_1;
        "cancel", 2 => socket::cancel_2;
        "send", 2 => socket::send_2;
        "send_to", 4 => socket::send_to_4;
        "close", 1 => socket::close_1;
        "shutdown", 2 => socket::shutdown_2;
        "owner", 1 => socket::owner_1;
        "hold", 1 => socket::hold_1;
        "release", 2 => socket::release_2;
        "setopts", 2 => socket::setopts_2;
        "getopts", 2 => socket::getopts_2;
        "sockname", 1 => socket::sockname_1;
        "peername", 1 => socket::peername_1;
        "getaddr", 1 => socket::getaddr_1;
        "is_listener", 1 => socket::is_listener_1;
    }
    "$code" => {
        "load", 1 => modules::load_1;
        "where", 1 => modules::where_1;
        "find", 1 => modules::find_1;
        "loaded", 0 => modules::loaded_0;
    }
    // Script behaviour (helper `rosetta`).
    "erlang" => {
        "halt", 2 => script::halt_2, auto;
    }
}

/// The most arguments a BIF takes (callers keep them in an array this long).
pub const MAX_ARITY: usize = 8;

#[cfg(test)]
#[test]
fn every_bif_fits_the_argument_array() {
    for b in TABLE.iter() {
        assert!(
            b.arity as usize <= MAX_ARITY,
            "{}:{}/{}",
            b.module,
            b.name,
            b.arity
        );
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
