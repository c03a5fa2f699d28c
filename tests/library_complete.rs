//! Every function that LANGUAGE.md's "Built-in modules" section (and the
//! library issue) promises exists in act: as a built-in function, as an
//! exported function of a stdlib/ module, or as a compiler intrinsic. The
//! list below is that section, written out; a function removed or renamed
//! makes this test fail, so the spec and the code cannot drift apart.

use act::term::Atom;

/// A function name with the arities promised for it.
type Arities = (&'static str, &'static [u32]);

/// `module:function/arity`, grouped as LANGUAGE.md lists them.
const PROMISED: &[(&str, &[Arities])] = &[
    (
        "erlang",
        &[
            ("+", &[1, 2]),
            ("-", &[1, 2]),
            ("*", &[2]),
            ("/", &[2]),
            ("div", &[2]),
            ("rem", &[2]),
            ("band", &[2]),
            ("bor", &[2]),
            ("bxor", &[2]),
            ("bsl", &[2]),
            ("bsr", &[2]),
            ("bnot", &[1]),
            ("not", &[1]),
            ("and", &[2]),
            ("or", &[2]),
            ("xor", &[2]),
            ("==", &[2]),
            ("/=", &[2]),
            ("=:=", &[2]),
            ("=/=", &[2]),
            ("<", &[2]),
            ("=<", &[2]),
            (">", &[2]),
            (">=", &[2]),
            ("is_atom", &[1]),
            ("is_integer", &[1]),
            ("is_float", &[1]),
            ("is_number", &[1]),
            ("is_list", &[1]),
            ("is_tuple", &[1]),
            ("is_pid", &[1]),
            ("is_reference", &[1]),
            ("is_function", &[1, 2]),
            ("is_binary", &[1]),
            ("is_map", &[1]),
            ("is_boolean", &[1]),
            ("abs", &[1]),
            ("element", &[2]),
            ("setelement", &[3]),
            ("hd", &[1]),
            ("tl", &[1]),
            ("length", &[1]),
            ("size", &[1]),
            ("tuple_size", &[1]),
            ("map_size", &[1]),
            ("byte_size", &[1]),
            ("node", &[0]),
            ("self", &[0]),
            ("float", &[1]),
            ("trunc", &[1]),
            ("round", &[1]),
            ("map_get", &[2]),
            ("is_map_key", &[2]),
            ("tuple_to_list", &[1]),
            ("list_to_tuple", &[1]),
            ("atom_to_list", &[1]),
            ("list_to_atom", &[1]),
            ("integer_to_list", &[1, 2]),
            ("list_to_integer", &[1, 2]),
            ("float_to_list", &[1, 2]),
            ("list_to_float", &[1]),
            ("binary_to_list", &[1]),
            ("list_to_binary", &[1]),
            ("term_to_binary", &[1]),
            ("binary_to_term", &[1]),
            ("integer_to_binary", &[1]),
            ("binary_to_integer", &[1]),
            ("atom_to_binary", &[1]),
            ("binary_to_atom", &[1]),
            ("iolist_size", &[1]),
            ("iolist_to_binary", &[1]),
            ("make_ref", &[0]),
            ("monotonic_time", &[0, 1]),
            ("system_time", &[0, 1]),
            ("convert_time_unit", &[3]),
            ("memory", &[0, 1]),
            ("max", &[2]),
            ("min", &[2]),
            ("apply", &[2, 3]),
            ("put", &[2]),
            ("get", &[0, 1]),
            ("erase", &[1]),
            ("display", &[1]),
            ("fun_info", &[2]),
            ("throw", &[1]),
            ("error", &[1, 2]),
            ("exit", &[1, 2]),
            ("halt", &[0, 1]),
            // Processes.
            ("spawn", &[1, 3]),
            ("spawn_link", &[1, 3]),
            ("spawn_monitor", &[1, 3]),
            ("register", &[2]),
            ("unregister", &[1]),
            ("whereis", &[1]),
            ("registered", &[0]),
            ("link", &[1]),
            ("unlink", &[1]),
            ("monitor", &[2]),
            ("demonitor", &[1, 2]),
            ("process_flag", &[2]),
            ("is_process_alive", &[1]),
            ("processes", &[0]),
            ("statistics", &[1]),
            ("system_info", &[1]),
            ("send", &[2]),
        ],
    ),
    (
        "io",
        &[
            ("format", &[1, 2, 3]),
            ("put_chars", &[1]),
            ("nl", &[0]),
            ("write", &[1]),
        ],
    ),
    ("io_lib", &[("format", &[2])]),
    (
        "lists",
        &[
            ("reverse", &[1, 2]),
            ("map", &[2]),
            ("foldl", &[3]),
            ("foldr", &[3]),
            ("filter", &[2]),
            ("foreach", &[2]),
            ("seq", &[2, 3]),
            ("nth", &[2]),
            ("sum", &[1]),
            ("max", &[1]),
            ("min", &[1]),
            ("sort", &[1, 2]),
            ("usort", &[1]),
            ("append", &[1, 2]),
            ("member", &[2]),
            ("keyfind", &[3]),
            ("keystore", &[4]),
            ("keydelete", &[3]),
            ("split", &[2]),
            ("zip", &[2]),
            ("unzip", &[1]),
            ("flatten", &[1]),
            ("last", &[1]),
            ("duplicate", &[2]),
            ("any", &[2]),
            ("all", &[2]),
            ("partition", &[2]),
            ("nthtail", &[2]),
            ("sublist", &[2, 3]),
            ("delete", &[2]),
            ("subtract", &[2]),
            ("join", &[2]),
            ("prefix", &[2]),
            ("suffix", &[2]),
            ("keysort", &[2]),
            ("flatmap", &[2]),
            ("zipwith", &[3]),
            ("mapfoldl", &[3]),
            ("takewhile", &[2]),
            ("dropwhile", &[2]),
            ("concat", &[1]),
            ("uniq", &[1]),
        ],
    ),
    (
        "maps",
        &[
            ("new", &[0]),
            ("get", &[2, 3]),
            ("put", &[3]),
            ("remove", &[2]),
            ("find", &[2]),
            ("keys", &[1]),
            ("values", &[1]),
            ("to_list", &[1]),
            ("from_list", &[1]),
            ("size", &[1]),
            ("is_key", &[2]),
            ("fold", &[3]),
            ("merge", &[2]),
            ("update", &[3]),
            ("update_with", &[3, 4]),
            ("map", &[2]),
            ("filter", &[2]),
        ],
    ),
    (
        "string",
        &[
            ("to_upper", &[1]),
            ("to_lower", &[1]),
            ("split", &[2, 3]),
            ("join", &[2]),
            ("trim", &[1]),
            ("length", &[1]),
            ("tokens", &[2]),
        ],
    ),
    ("timer", &[("sleep", &[1]), ("tc", &[1, 2, 3])]),
    // Reading, files, os, init and stdout ports (helper `hour`).
    (
        "io",
        &[
            ("get_line", &[1, 2]),
            ("get_chars", &[2, 3]),
            ("read", &[1, 2]),
            ("fread", &[2, 3]),
            ("setopts", &[1, 2]),
            ("getopts", &[0, 1]),
            ("columns", &[0, 1]),
            ("rows", &[0, 1]),
            ("put_chars", &[2]),
            ("nl", &[1]),
            ("write", &[2]),
            ("fwrite", &[1, 2, 3]),
        ],
    ),
    (
        "file",
        &[
            ("read_file", &[1]),
            ("write_file", &[2, 3]),
            ("open", &[2]),
            ("close", &[1]),
            ("read_line", &[1]),
            ("read", &[2]),
            ("write", &[2]),
            ("position", &[2]),
            ("consult", &[1]),
            ("list_dir", &[1]),
            ("delete", &[1]),
            ("rename", &[2]),
            ("make_dir", &[1]),
            ("del_dir", &[1]),
            ("read_file_info", &[1]),
            ("get_cwd", &[0]),
        ],
    ),
    (
        "os",
        &[
            ("getenv", &[0, 1, 2]),
            ("putenv", &[2]),
            ("getpid", &[0]),
            ("timestamp", &[0]),
            ("system_time", &[0, 1]),
            ("type", &[0]),
            ("cmd", &[1]),
        ],
    ),
    ("init", &[("get_plain_arguments", &[0]), ("stop", &[0, 1])]),
    (
        "erlang",
        &[
            ("open_port", &[2]),
            ("port_command", &[2]),
            ("port_close", &[1]),
        ],
    ),
];

/// Calls the compiler turns into instructions rather than BIF calls.
const INTRINSICS: &[(&str, &str, u32)] = &[("erlang", "apply", 2), ("erlang", "apply", 3)];

const STDLIB: &[(&str, &str)] = &[
    ("lists", include_str!("../stdlib/lists.act")),
    ("maps", include_str!("../stdlib/maps.act")),
    ("string", include_str!("../stdlib/string.act")),
    ("timer", include_str!("../stdlib/timer.act")),
    ("io", include_str!("../stdlib/io.act")),
    ("file", include_str!("../stdlib/file.act")),
];

#[test]
fn every_promised_library_function_exists() {
    let stdlib: Vec<(&str, act::code::Module)> = STDLIB
        .iter()
        .map(|(name, source)| {
            let module = act::runtime::script::compile_source(source, &format!("{name}.act"), name)
                .unwrap_or_else(|e| panic!("stdlib/{name}.act does not compile:\n{e}"));
            (*name, module)
        })
        .collect();
    let mut missing = Vec::new();
    for (module, functions) in PROMISED {
        for (name, arities) in *functions {
            for &arity in *arities {
                let builtin = act::bif::lookup(module, name, arity).is_some();
                let intrinsic = INTRINSICS.contains(&(module, name, arity));
                let in_act = stdlib.iter().any(|(m, code)| {
                    m == module && code.exported(Atom::intern(name), arity).is_some()
                });
                if !(builtin || intrinsic || in_act) {
                    missing.push(format!("{module}:{name}/{arity}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "promised by LANGUAGE.md but missing: {missing:?}"
    );
}
