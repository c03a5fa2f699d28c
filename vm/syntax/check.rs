//! The checks erlc makes after parsing: variable scope, defined functions,
//! legal patterns and guards, and function forms that belong together.
//!
//! Scope follows erl_lint. A function clause starts with no variables;
//! patterns bind the variables they do not find bound (a bound one is a
//! match test). Sub-expressions that are siblings (the elements of a tuple,
//! the arguments of a call) do not see each other's bindings. A variable
//! bound in every branch of a `case`, `if` or `receive` is bound after it;
//! bound in only some, it is *unsafe*, and any later use is an error, as
//! are uses of variables bound inside `try` or `catch`. Funs and list
//! comprehensions see the outer variables, but what they bind stays inside;
//! their head and generator patterns bind fresh variables that shadow outer
//! ones. Every binding that is never used gets a warning unless its name
//! starts with `_`.
//!
//! Trees reaching this pass are at most `parser::MAX_EXPR_DEPTH` deep, so
//! the recursion here is bounded.

use super::ast::*;
use super::diagnostic::Diagnostic;
use super::span::{LineIndex, Span};
use std::collections::{BTreeMap, BTreeSet};

/// The functions of the `erlang` module that a local call reaches without
/// the `erlang:` prefix, as in Erlang/OTP 25 (name, arity). A call `f(...)`
/// is local when the module defines `f` with that arity; otherwise it is
/// one of these, or an error ("function f/1 undefined").
pub const AUTO_IMPORTED: &[(&str, u32)] = &[
    ("abs", 1),
    ("alias", 0),
    ("alias", 1),
    ("apply", 2),
    ("apply", 3),
    ("atom_to_binary", 1),
    ("atom_to_binary", 2),
    ("atom_to_list", 1),
    ("binary_part", 2),
    ("binary_part", 3),
    ("binary_to_atom", 1),
    ("binary_to_atom", 2),
    ("binary_to_existing_atom", 1),
    ("binary_to_existing_atom", 2),
    ("binary_to_float", 1),
    ("binary_to_integer", 1),
    ("binary_to_integer", 2),
    ("binary_to_list", 1),
    ("binary_to_list", 3),
    ("binary_to_term", 1),
    ("binary_to_term", 2),
    ("bit_size", 1),
    ("bitstring_to_list", 1),
    ("byte_size", 1),
    ("ceil", 1),
    ("date", 0),
    ("demonitor", 1),
    ("demonitor", 2),
    ("element", 2),
    ("erase", 0),
    ("erase", 1),
    ("error", 1),
    ("error", 2),
    ("error", 3),
    ("exit", 1),
    ("exit", 2),
    ("float", 1),
    ("float_to_binary", 1),
    ("float_to_binary", 2),
    ("float_to_list", 1),
    ("float_to_list", 2),
    ("floor", 1),
    ("garbage_collect", 0),
    ("garbage_collect", 1),
    ("get", 0),
    ("get", 1),
    ("get_keys", 0),
    ("get_keys", 1),
    ("group_leader", 0),
    ("group_leader", 2),
    ("halt", 0),
    ("halt", 1),
    ("halt", 2),
    ("hd", 1),
    ("integer_to_binary", 1),
    ("integer_to_binary", 2),
    ("integer_to_list", 1),
    ("integer_to_list", 2),
    ("iolist_size", 1),
    ("iolist_to_binary", 1),
    ("is_alive", 0),
    ("is_atom", 1),
    ("is_binary", 1),
    ("is_bitstring", 1),
    ("is_boolean", 1),
    ("is_float", 1),
    ("is_function", 1),
    ("is_function", 2),
    ("is_integer", 1),
    ("is_list", 1),
    ("is_map", 1),
    ("is_map_key", 2),
    ("is_number", 1),
    ("is_pid", 1),
    ("is_port", 1),
    ("is_process_alive", 1),
    ("is_record", 2),
    ("is_record", 3),
    ("is_reference", 1),
    ("is_tuple", 1),
    ("length", 1),
    ("link", 1),
    ("list_to_atom", 1),
    ("list_to_binary", 1),
    ("list_to_bitstring", 1),
    ("list_to_existing_atom", 1),
    ("list_to_float", 1),
    ("list_to_integer", 1),
    ("list_to_integer", 2),
    ("list_to_pid", 1),
    ("list_to_ref", 1),
    ("list_to_tuple", 1),
    ("make_ref", 0),
    ("map_get", 2),
    ("map_size", 1),
    ("max", 2),
    ("min", 2),
    ("monitor", 2),
    ("monitor", 3),
    ("monitor_node", 2),
    ("node", 0),
    ("node", 1),
    ("nodes", 0),
    ("nodes", 1),
    ("now", 0),
    ("open_port", 2),
    ("pid_to_list", 1),
    ("port_close", 1),
    ("port_command", 2),
    ("process_flag", 2),
    ("process_flag", 3),
    ("process_info", 1),
    ("process_info", 2),
    ("processes", 0),
    ("put", 2),
    ("ref_to_list", 1),
    ("register", 2),
    ("registered", 0),
    ("round", 1),
    ("self", 0),
    ("setelement", 3),
    ("size", 1),
    ("spawn", 1),
    ("spawn", 2),
    ("spawn", 3),
    ("spawn", 4),
    ("spawn_link", 1),
    ("spawn_link", 2),
    ("spawn_link", 3),
    ("spawn_link", 4),
    ("spawn_monitor", 1),
    ("spawn_monitor", 2),
    ("spawn_monitor", 3),
    ("spawn_monitor", 4),
    ("spawn_opt", 2),
    ("spawn_opt", 3),
    ("spawn_opt", 4),
    ("spawn_opt", 5),
    ("split_binary", 2),
    ("statistics", 1),
    ("term_to_binary", 1),
    ("term_to_binary", 2),
    ("throw", 1),
    ("time", 0),
    ("tl", 1),
    ("trunc", 1),
    ("tuple_size", 1),
    ("tuple_to_list", 1),
    ("unalias", 1),
    ("unlink", 1),
    ("unregister", 1),
    ("whereis", 1),
];

/// The BIFs allowed in guards (OTP 25), called bare or as `erlang:f(...)`.
pub const GUARD_BIFS: &[(&str, u32)] = &[
    ("abs", 1),
    ("binary_part", 2),
    ("binary_part", 3),
    ("bit_size", 1),
    ("byte_size", 1),
    ("ceil", 1),
    ("element", 2),
    ("float", 1),
    ("floor", 1),
    ("hd", 1),
    ("is_atom", 1),
    ("is_binary", 1),
    ("is_bitstring", 1),
    ("is_boolean", 1),
    ("is_float", 1),
    ("is_function", 1),
    ("is_function", 2),
    ("is_integer", 1),
    ("is_list", 1),
    ("is_map", 1),
    ("is_map_key", 2),
    ("is_number", 1),
    ("is_pid", 1),
    ("is_port", 1),
    ("is_record", 2),
    ("is_record", 3),
    ("is_reference", 1),
    ("is_tuple", 1),
    ("length", 1),
    ("map_get", 2),
    ("map_size", 1),
    ("node", 0),
    ("node", 1),
    ("round", 1),
    ("self", 0),
    ("size", 1),
    ("tl", 1),
    ("trunc", 1),
    ("tuple_size", 1),
];

/// Is `name/arity` one of Erlang's auto-imported BIFs?
pub fn is_auto_imported(name: &str, arity: u32) -> bool {
    AUTO_IMPORTED.iter().any(|&(n, a)| n == name && a == arity)
}

/// The BIFs auto-imported before R14 (erl_internal:old_bif/2): a module
/// that defines one of these may not call its own unqualified without
/// `-compile({no_auto_import, [F/A]})`, as erl_lint refuses the call.
const OLD_BIFS: &[(&str, u32)] = &[
    ("abs", 1),
    ("apply", 2),
    ("apply", 3),
    ("atom_to_binary", 2),
    ("atom_to_list", 1),
    ("binary_to_atom", 2),
    ("binary_to_existing_atom", 2),
    ("binary_to_list", 1),
    ("binary_to_list", 3),
    ("binary_to_term", 1),
    ("bit_size", 1),
    ("bitstring_to_list", 1),
    ("byte_size", 1),
    ("check_process_code", 2),
    ("date", 0),
    ("delete_module", 1),
    ("disconnect_node", 1),
    ("element", 2),
    ("erase", 0),
    ("erase", 1),
    ("exit", 1),
    ("exit", 2),
    ("float", 1),
    ("float_to_list", 1),
    ("garbage_collect", 0),
    ("garbage_collect", 1),
    ("get", 0),
    ("get", 1),
    ("get_keys", 1),
    ("group_leader", 0),
    ("group_leader", 2),
    ("halt", 0),
    ("halt", 1),
    ("hd", 1),
    ("integer_to_list", 1),
    ("iolist_size", 1),
    ("iolist_to_binary", 1),
    ("is_alive", 0),
    ("is_atom", 1),
    ("is_binary", 1),
    ("is_bitstring", 1),
    ("is_boolean", 1),
    ("is_float", 1),
    ("is_function", 1),
    ("is_function", 2),
    ("is_integer", 1),
    ("is_list", 1),
    ("is_number", 1),
    ("is_pid", 1),
    ("is_port", 1),
    ("is_process_alive", 1),
    ("is_record", 2),
    ("is_record", 3),
    ("is_reference", 1),
    ("is_tuple", 1),
    ("length", 1),
    ("link", 1),
    ("list_to_atom", 1),
    ("list_to_binary", 1),
    ("list_to_bitstring", 1),
    ("list_to_existing_atom", 1),
    ("list_to_float", 1),
    ("list_to_integer", 1),
    ("list_to_pid", 1),
    ("list_to_tuple", 1),
    ("load_module", 2),
    ("make_ref", 0),
    ("module_loaded", 1),
    ("monitor_node", 2),
    ("node", 0),
    ("node", 1),
    ("nodes", 0),
    ("nodes", 1),
    ("now", 0),
    ("open_port", 2),
    ("pid_to_list", 1),
    ("port_close", 1),
    ("port_command", 2),
    ("port_connect", 2),
    ("port_control", 3),
    ("pre_loaded", 0),
    ("process_flag", 2),
    ("process_flag", 3),
    ("process_info", 1),
    ("process_info", 2),
    ("processes", 0),
    ("purge_module", 1),
    ("put", 2),
    ("register", 2),
    ("registered", 0),
    ("round", 1),
    ("self", 0),
    ("setelement", 3),
    ("size", 1),
    ("spawn", 1),
    ("spawn", 2),
    ("spawn", 3),
    ("spawn", 4),
    ("spawn_link", 1),
    ("spawn_link", 2),
    ("spawn_link", 3),
    ("spawn_link", 4),
    ("spawn_monitor", 1),
    ("spawn_monitor", 3),
    ("spawn_opt", 2),
    ("spawn_opt", 3),
    ("spawn_opt", 4),
    ("spawn_opt", 5),
    ("split_binary", 2),
    ("statistics", 1),
    ("term_to_binary", 1),
    ("term_to_binary", 2),
    ("throw", 1),
    ("time", 0),
    ("tl", 1),
    ("trunc", 1),
    ("tuple_size", 1),
    ("tuple_to_list", 1),
    ("unlink", 1),
    ("unregister", 1),
    ("whereis", 1),
];

/// The BIFs auto-imported since R14 (erl_internal:bif/2 less old_bif/2):
/// a module's own function of one of these names wins over it, with a
/// warning at each unqualified call.
const NEW_BIFS: &[(&str, u32)] = &[
    ("alias", 0),
    ("alias", 1),
    ("atom_to_binary", 1),
    ("binary_part", 2),
    ("binary_part", 3),
    ("binary_to_atom", 1),
    ("binary_to_existing_atom", 1),
    ("binary_to_float", 1),
    ("binary_to_integer", 1),
    ("binary_to_integer", 2),
    ("binary_to_term", 2),
    ("ceil", 1),
    ("check_old_code", 1),
    ("check_process_code", 3),
    ("demonitor", 1),
    ("demonitor", 2),
    ("error", 1),
    ("error", 2),
    ("error", 3),
    ("float_to_binary", 1),
    ("float_to_binary", 2),
    ("float_to_list", 2),
    ("floor", 1),
    ("garbage_collect", 2),
    ("get_keys", 0),
    ("halt", 2),
    ("integer_to_binary", 1),
    ("integer_to_binary", 2),
    ("integer_to_list", 2),
    ("is_map", 1),
    ("is_map_key", 2),
    ("list_to_integer", 2),
    ("list_to_port", 1),
    ("list_to_ref", 1),
    ("map_get", 2),
    ("map_size", 1),
    ("max", 2),
    ("min", 2),
    ("monitor", 2),
    ("monitor", 3),
    ("nodes", 2),
    ("port_command", 3),
    ("port_to_list", 1),
    ("ref_to_list", 1),
    ("spawn_monitor", 2),
    ("spawn_monitor", 4),
    ("spawn_request", 1),
    ("spawn_request", 2),
    ("spawn_request", 3),
    ("spawn_request", 4),
    ("spawn_request", 5),
    ("spawn_request_abandon", 1),
    ("term_to_iovec", 1),
    ("term_to_iovec", 2),
    ("unalias", 1),
];

/// Is `name/arity` allowed in a guard?
pub fn is_guard_bif(name: &str, arity: u32) -> bool {
    GUARD_BIFS.iter().any(|&(n, a)| n == name && a == arity)
}

/// The functions a module defines: `(name, arity)` -> the span of the name
/// in the first clause of its (first) definition.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FunctionTable {
    pub defined: BTreeMap<(String, u32), Span>,
    /// Names of functions whose forms did not parse; see
    /// `check_module_assuming`.
    pub broken: Vec<String>,
    /// What `-compile(no_auto_import)` or `{no_auto_import, [F/A]}`
    /// names: a call of the module's own function of that name is not
    /// ambiguous.
    pub no_auto_import: NoAutoImport,
}

/// The functions a module's `-compile` options take out of the
/// auto-imports.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum NoAutoImport {
    #[default]
    None,
    Some(BTreeSet<(String, u32)>),
    All,
}

impl NoAutoImport {
    /// Reads the `-compile` attributes of `module` (their text is in
    /// `source`).
    fn of(module: &Module, source: &str) -> NoAutoImport {
        let mut found = NoAutoImport::None;
        for form in &module.forms {
            let Form::Attribute(attribute) = form else {
                continue;
            };
            let compile = match &attribute.kind {
                AttributeKind::Other(name) => name == "compile",
                AttributeKind::ExportAll { .. } => true,
                _ => false,
            };
            let text = source
                .get(attribute.span.start as usize..attribute.span.end as usize)
                .unwrap_or("");
            if !compile || !text.contains("no_auto_import") {
                continue;
            }
            let Some(open) = text.find('(') else {
                continue;
            };
            let inner = text[open..].trim_end().trim_end_matches('.');
            for e in super::parse_exprs(&format!("{inner}.")).unwrap_or_default() {
                found.read(&e);
            }
        }
        found
    }

    fn read(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::List(items, _) => items.iter().for_each(|i| self.read(i)),
            ExprKind::Atom(a) if a == "no_auto_import" => *self = NoAutoImport::All,
            ExprKind::Tuple(items) => {
                if let [key, names] = items.as_slice()
                    && matches!(&key.kind, ExprKind::Atom(k) if k == "no_auto_import")
                {
                    self.names(names);
                }
            }
            _ => {}
        }
    }

    /// `F/A`, `{F, A}` or a list of them.
    fn names(&mut self, e: &Expr) {
        let name = match &e.kind {
            ExprKind::List(items, _) => return items.iter().for_each(|i| self.names(i)),
            ExprKind::Tuple(items) => match items.as_slice() {
                [f, a] => Some((f, a)),
                _ => None,
            },
            ExprKind::BinaryOp(BinaryOp::Div, f, a) => Some((f.as_ref(), a.as_ref())),
            _ => None,
        };
        if let Some((f, a)) = name
            && let (ExprKind::Atom(f), ExprKind::Integer(a)) = (&f.kind, &a.kind)
            && let Ok(a) = u32::try_from(a)
        {
            match self {
                NoAutoImport::All => {}
                NoAutoImport::None => *self = NoAutoImport::Some([(f.clone(), a)].into()),
                NoAutoImport::Some(set) => {
                    set.insert((f.clone(), a));
                }
            }
        }
    }

    /// What erl_lint says of a local call of the module's own
    /// `name/arity`: nothing, unless it is also an auto-imported BIF that
    /// the options leave imported; then an error for a BIF imported
    /// before R14, a warning for a later one.
    pub fn clash(&self, name: &str, arity: u32) -> Option<Diagnostic> {
        let named = match self {
            NoAutoImport::All => true,
            NoAutoImport::None => false,
            NoAutoImport::Some(set) => set.contains(&(name.to_string(), arity)),
        };
        let is = |table: &[(&str, u32)]| table.iter().any(|&(n, a)| n == name && a == arity);
        let how = |old: &str| {
            format!(
                "ambiguous call of overridden {old}auto-imported BIF {name}/{arity}\n - use \
                 erlang:{name}/{arity} or \"-compile({{no_auto_import,[{name}/{arity}]}}).\" \
                 to resolve name clash"
            )
        };
        let span = Span::default();
        if named {
            None
        } else if is(OLD_BIFS) {
            Some(Diagnostic::error(how("pre R14 "), span))
        } else if is(NEW_BIFS) {
            Some(Diagnostic::warning(how(""), span))
        } else {
            None
        }
    }
}

/// Levenshtein distance between two short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// What a local call `name(Args)` reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalCall {
    /// A function defined in the module (a local definition wins over an
    /// auto-imported BIF of the same name).
    Local,
    /// `erlang:name/arity`, auto-imported.
    AutoImported,
    /// Neither: "function name/arity undefined".
    Undefined,
}

impl FunctionTable {
    /// The table of the functions a module defines.
    pub fn of(module: &Module) -> FunctionTable {
        let mut defined = BTreeMap::new();
        for form in &module.forms {
            if let Form::Function(function) = form
                && let Some(first) = function.clauses.first()
            {
                defined
                    .entry((function.name.clone(), function.arity))
                    .or_insert(first.name_span);
            }
        }
        FunctionTable {
            defined,
            broken: Vec::new(),
            no_auto_import: NoAutoImport::None,
        }
    }

    pub fn is_defined(&self, name: &str, arity: u32) -> bool {
        self.defined.contains_key(&(name.to_string(), arity))
            || self.broken.iter().any(|b| b == name)
            || (name == "module_info" && arity <= 1)
    }

    /// A hint for a call to `name/arity`, which is not defined: the
    /// arities `name` has, or a defined function of that arity with a
    /// name one or two edits away (a typo).
    pub fn suggest(&self, name: &str, arity: u32) -> Option<String> {
        let arities: Vec<String> = self
            .defined
            .keys()
            .filter(|(n, _)| n == name)
            .map(|(_, a)| a.to_string())
            .collect();
        if !arities.is_empty() {
            let plural = if arity == 1 { "" } else { "s" };
            return Some(format!(
                "{name} is defined with arity {}, and this call passes {arity} argument{plural}",
                arities.join(" and ")
            ));
        }
        if name.chars().count() < 3 {
            return None;
        }
        let defined = self.defined.keys().map(|(n, a)| (n.as_str(), *a));
        let mut close: Vec<String> = defined
            .chain(AUTO_IMPORTED.iter().copied())
            .filter(|&(n, a)| a == arity && edit_distance(n, name) <= 2)
            .map(|(n, a)| format!("{n}/{a}"))
            .collect();
        close.dedup();
        match close.as_slice() {
            [one] => Some(format!("did you mean {one}?")),
            _ => None,
        }
    }

    /// Resolves a local call by name and arity.
    pub fn resolve(&self, name: &str, arity: u32) -> LocalCall {
        if self.is_defined(name, arity) {
            LocalCall::Local
        } else if is_auto_imported(name, arity) {
            LocalCall::AutoImported
        } else {
            LocalCall::Undefined
        }
    }
}

/// Checks a parsed module; `source` is its text (for the line numbers that
/// some messages quote). Returns errors and warnings in source order.
pub fn check_module(module: &Module, source: &str) -> Vec<Diagnostic> {
    check_module_assuming(module, source, &[])
}

/// `check_module`, taking every function named in `broken` (of any arity)
/// as defined: their forms failed to parse, and calls to them should not
/// add "undefined" errors to the syntax errors already reported.
///
/// Runs on a `with_big_stack` thread: the recursion over a tree of
/// `MAX_EXPR_DEPTH` must fit even when the caller's stack is small.
pub fn check_module_assuming(module: &Module, source: &str, broken: &[String]) -> Vec<Diagnostic> {
    super::with_big_stack(|| check_here(module, source, broken))
}

fn check_here(module: &Module, source: &str, broken: &[String]) -> Vec<Diagnostic> {
    let mut table = FunctionTable::of(module);
    table.broken = broken.to_vec();
    table.no_auto_import = NoAutoImport::of(module, source);
    let lines = LineIndex::new(source);
    let mut checker = Checker {
        table: &table,
        source,
        lines: &lines,
        diagnostics: Vec::new(),
        bindings: Vec::new(),
        unbound_uses: Vec::new(),
        illegal_guard_calls: BTreeSet::new(),
    };
    checker.forms(module);
    if broken.is_empty() {
        checker.unused_functions(module);
    }
    let mut diagnostics = checker.diagnostics;
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    diagnostics
}

/// One binding of a variable, made by a pattern.
struct Binding {
    name: String,
    span: Span,
    used: bool,
}

/// Whether a variable may be used at a point of the program.
#[derive(Clone, Debug)]
enum Status {
    Bound,
    /// Bound in only some branches of a `case`/`if`/`receive`, or inside a
    /// `try` or `catch` (named by `construct`, which starts at `span`).
    Unsafe {
        construct: &'static str,
        span: Span,
    },
    /// Bound in every branch of a `case`/`if`/`receive`: erl_lint warns
    /// at the first match test of such a variable in a pattern ("exported
    /// from"; uses in expressions say nothing). Clones of the environment
    /// share `matched`, so one warning is given.
    Exported {
        construct: &'static str,
        span: Span,
        matched: std::rc::Rc<std::cell::Cell<bool>>,
    },
}

/// A variable in scope: the bindings a use of it refers to (more than one
/// after branches merge) and its status.
#[derive(Clone, Debug)]
struct VarState {
    bindings: Vec<usize>,
    status: Status,
}

type Env = BTreeMap<String, VarState>;

struct Checker<'a> {
    table: &'a FunctionTable,
    source: &'a str,
    lines: &'a LineIndex,
    diagnostics: Vec<Diagnostic>,
    /// Bindings of the function clause being checked.
    bindings: Vec<Binding>,
    /// Names used while unbound, in order: like erl_lint, a sibling's
    /// binding of such a name (`{X = 1, X}`) gets no "unused" warning on top.
    unbound_uses: Vec<String>,
    /// Calls refused in a guard: as in erl_lint, they do not use the
    /// function they name.
    illegal_guard_calls: BTreeSet<(u32, u32)>,
}

impl Checker<'_> {
    fn error(&mut self, message: impl Into<String>, span: Span) {
        self.diagnostics.push(Diagnostic::error(message, span));
    }

    fn warning(&mut self, message: impl Into<String>, span: Span) {
        self.diagnostics.push(Diagnostic::warning(message, span));
    }

    /// erl_lint's warning for a call to a function OTP marks deprecated.
    fn deprecated(&mut self, module: &str, name: &str, arity: usize, span: Span) {
        if let Some(message) = super::lint_extra::deprecation(module, name, arity as u32) {
            self.warning(message, span);
        }
    }

    // ---- forms ---------------------------------------------------------

    fn forms(&mut self, module: &Module) {
        let mut seen: BTreeSet<(String, u32)> = BTreeSet::new();
        // What `-import` has brought in so far, and from where.
        let mut imported: BTreeMap<(String, u32), String> = BTreeMap::new();
        // `-compile(nowarn_export_all)` anywhere silences the warning.
        let nowarn = module.forms.iter().any(|f| {
            matches!(f, Form::Attribute(Attribute { kind: AttributeKind::Other(o), .. })
                if o == "nowarn_export_all")
        });
        let mut after_functions = false;
        for form in &module.forms {
            match form {
                Form::Attribute(attribute) => {
                    let name = match &attribute.kind {
                        AttributeKind::Module(_) => "module",
                        AttributeKind::Export(_) => "export",
                        AttributeKind::Import(..) => "import",
                        AttributeKind::Other(name) => name.as_str(),
                        AttributeKind::Record(_) | AttributeKind::ExportAll { .. } => "record",
                    };
                    // As erl_lint: after the first function only these
                    // may come (`-compile` options are read up front).
                    let late = [
                        "record", "type", "opaque", "spec", "dialyzer", "compile", "file",
                    ];
                    if after_functions && !late.contains(&name) && name != "nowarn_export_all" {
                        let at = attribute.span.start as usize + 1;
                        self.error(
                            format!("attribute {name} after function definitions"),
                            Span::new(at, at + name.len()),
                        );
                    }
                    if attribute.kind == (AttributeKind::ExportAll { warn: true }) && !nowarn {
                        // erlc's wording, at the attribute's name.
                        let at = attribute.span.start as usize + 1;
                        self.warning(
                            "export_all flag enabled - all functions will be exported",
                            Span::new(at, at + "compile".len()),
                        );
                    }
                    if let AttributeKind::Import(from, names) = &attribute.kind {
                        self.import(attribute, from, names, &mut imported);
                    }
                    if let AttributeKind::Export(names) = &attribute.kind {
                        // erl_lint places these at the attribute's name.
                        let at = attribute.span.start as usize + 1;
                        for name in names {
                            if !self.table.is_defined(&name.name, name.arity) {
                                self.error(
                                    format!("function {}/{} undefined", name.name, name.arity),
                                    Span::new(at, at + "export".len()),
                                );
                            }
                        }
                    }
                }
                Form::Function(function) => {
                    after_functions = true;
                    let key = (function.name.clone(), function.arity);
                    if let Some(first) = function.clauses.first()
                        && !seen.insert(key)
                    {
                        self.error(
                            format!(
                                "function {}/{} already defined",
                                function.name, function.arity
                            ),
                            first.name_span,
                        );
                    } else if let Some(first) = function.clauses.first()
                        && imported.contains_key(&(function.name.clone(), function.arity))
                    {
                        self.error(
                            format!(
                                "defining imported function {}/{}",
                                function.name, function.arity
                            ),
                            first.name_span,
                        );
                    }
                    for clause in &function.clauses {
                        self.function_clause(&clause.clause);
                    }
                }
            }
        }
    }

    /// An `-import(From, Names)`, as erl_lint takes it: a function
    /// already imported is an error (and then none of the attribute's
    /// functions is imported); one that is an auto-imported BIF is an
    /// error (imported before R14) or a warning, unless `no_auto_import`
    /// names it. The messages go in the order of the names sorted, at the
    /// attribute's name.
    fn import(
        &mut self,
        attribute: &Attribute,
        from: &str,
        names: &[FunctionName],
        imported: &mut BTreeMap<(String, u32), String>,
    ) {
        let at = attribute.span.start as usize + 1;
        let span = Span::new(at, at + "import".len());
        let sorted: BTreeSet<(String, u32)> =
            names.iter().map(|n| (n.name.clone(), n.arity)).collect();
        let mut clash = false;
        for (name, arity) in &sorted {
            if let Some(before) = imported.get(&(name.clone(), *arity)) {
                clash = true;
                self.error(
                    format!("function {name}/{arity} already imported from {before}"),
                    span,
                );
                continue;
            }
            let suppressed = match &self.table.no_auto_import {
                NoAutoImport::All => true,
                NoAutoImport::None => false,
                NoAutoImport::Some(set) => set.contains(&(name.clone(), *arity)),
            };
            let is = |table: &[(&str, u32)]| table.iter().any(|&(n, a)| n == name && a == *arity);
            if suppressed || !is_auto_imported(name, *arity) {
                continue;
            }
            let old = if is(OLD_BIFS) { "pre R14 " } else { "" };
            let message = format!(
                "import directive overrides {old}auto-imported BIF {name}/{arity}\n - use \
                 \"-compile({{no_auto_import,[{name}/{arity}]}}).\" to resolve name clash"
            );
            if is(OLD_BIFS) {
                self.error(message, span);
            } else {
                self.warning(message, span);
            }
        }
        if !clash {
            for key in sorted {
                imported.insert(key, from.to_string());
            }
        }
    }

    /// As escript does: a function that neither `main/1` nor an exported
    /// function can reach through local calls and `fun f/N` gets a warning.
    fn unused_functions(&mut self, module: &Module) {
        let mut calls: BTreeMap<(String, u32), Vec<(String, u32)>> = BTreeMap::new();
        let mut roots: Vec<(String, u32)> = Vec::new();
        if self.table.defined.contains_key(&("main".to_string(), 1)) {
            roots.push(("main".to_string(), 1));
        }
        for form in &module.forms {
            match form {
                Form::Attribute(Attribute {
                    kind: AttributeKind::Export(names),
                    ..
                }) => {
                    roots.extend(names.iter().map(|n| (n.name.clone(), n.arity)));
                }
                Form::Attribute(Attribute {
                    kind: AttributeKind::ExportAll { .. },
                    ..
                }) => roots.extend(self.table.defined.keys().cloned()),
                Form::Attribute(_) => {}
                Form::Function(function) => {
                    let callees = calls
                        .entry((function.name.clone(), function.arity))
                        .or_default();
                    let mut pending = Vec::new();
                    super::walk::form_roots(form, &mut pending);
                    while let Some(e) = pending.pop() {
                        match &e.kind {
                            ExprKind::Call(target, args) => {
                                if let CallTarget::Local(name, _) = target.as_ref()
                                    && !self
                                        .illegal_guard_calls
                                        .contains(&(e.span.start, e.span.end))
                                {
                                    callees.push((name.clone(), args.len() as u32));
                                }
                            }
                            ExprKind::Fun(fun) => {
                                if let Fun::Local(name) = fun.as_ref() {
                                    callees.push((name.name.clone(), name.arity));
                                }
                            }
                            _ => {}
                        }
                        super::walk::children(e, &mut pending);
                    }
                }
            }
        }
        let mut reached: BTreeSet<(String, u32)> = BTreeSet::new();
        while let Some(function) = roots.pop() {
            if reached.insert(function.clone())
                && let Some(callees) = calls.get(&function)
            {
                roots.extend(callees.iter().cloned());
            }
        }
        // Every definition of an unused function is reported, as erl_lint
        // does when a function is (wrongly) defined twice.
        let unused: Vec<((String, u32), Span)> = module
            .forms
            .iter()
            .filter_map(|form| match form {
                Form::Function(f) => {
                    let key = (f.name.clone(), f.arity);
                    let first = f.clauses.first()?;
                    (!reached.contains(&key)).then_some((key, first.name_span))
                }
                Form::Attribute(_) => None,
            })
            .collect();
        for ((name, arity), span) in unused {
            self.warning(format!("function {name}/{arity} is unused"), span);
        }
    }

    fn function_clause(&mut self, clause: &Clause) {
        self.bindings.clear();
        self.unbound_uses.clear();
        let mut env = Env::new();
        self.clause(clause, &mut env, None);
        self.warn_unused();
    }

    fn warn_unused(&mut self) {
        let unused: Vec<(String, Span)> = self
            .bindings
            .iter()
            .filter(|b| !b.used && !b.name.starts_with('_'))
            .map(|b| (b.name.clone(), b.span))
            .collect();
        for (name, span) in unused {
            self.warning(format!("variable '{name}' is unused"), span);
        }
    }

    /// Patterns, guard and body of one clause, in `env`. Fresh patterns
    /// (fun heads) shadow outer variables instead of matching them.
    fn clause(&mut self, clause: &Clause, env: &mut Env, shadowing: Option<&'static str>) {
        self.patterns(&clause.patterns, env, shadowing);
        self.guard(&clause.guard, env);
        self.sequence(&clause.body, env);
    }

    // ---- variables -------------------------------------------------------

    fn use_var(&mut self, name: &str, span: Span, env: &Env) {
        if name == "_" {
            self.error("variable '_' is unbound", span);
            return;
        }
        match env.get(name) {
            None => {
                self.error(format!("variable '{name}' is unbound"), span);
                self.unbound_uses.push(name.to_string());
            }
            Some(state) => {
                for &id in &state.bindings {
                    self.bindings[id].used = true;
                }
                match &state.status {
                    Status::Unsafe {
                        construct,
                        span: at,
                    } => {
                        let (line, column) = self.lines.line_col(self.source, at.start);
                        self.error(format!("variable '{name}' unsafe in '{construct}' (line {line}, column {column})"), span);
                    }
                    Status::Exported { .. } | Status::Bound => {}
                }
            }
        }
    }

    fn new_binding(&mut self, name: &str, span: Span) -> usize {
        self.bindings.push(Binding {
            name: name.to_string(),
            span,
            used: false,
        });
        self.bindings.len() - 1
    }

    // ---- sequences and siblings -------------------------------------------

    /// `E1, E2, ...`: each sees the bindings of those before it.
    fn sequence(&mut self, exprs: &[Expr], env: &mut Env) {
        for e in exprs {
            self.expr(e, env);
        }
    }

    /// Sub-expressions evaluated side by side: each sees only `env`; the
    /// bindings of all are added after.
    fn siblings(&mut self, exprs: &[&Expr], env: &mut Env) {
        if exprs.len() <= 1 {
            if let Some(e) = exprs.first() {
                self.expr(e, env);
            }
            return;
        }
        let mut added: Vec<(String, VarState)> = Vec::new();
        let unbound_mark = self.unbound_uses.len();
        for e in exprs {
            let before: BTreeSet<String> = if can_bind(e) {
                env.keys().cloned().collect()
            } else {
                BTreeSet::new()
            };
            self.expr(e, env);
            if can_bind(e) {
                let new: Vec<String> = env
                    .keys()
                    .filter(|k| !before.contains(*k))
                    .cloned()
                    .collect();
                for name in new {
                    if let Some(state) = env.remove(&name) {
                        added.push((name, state));
                    }
                }
            }
        }
        for (name, state) in added {
            if self.unbound_uses[unbound_mark..].contains(&name) {
                for &id in &state.bindings {
                    self.bindings[id].used = true;
                }
            }
            match env.get_mut(&name) {
                Some(existing) => existing.bindings.extend(state.bindings),
                None => {
                    env.insert(name, state);
                }
            }
        }
    }

    // ---- expressions -------------------------------------------------------

    fn expr(&mut self, e: &Expr, env: &mut Env) {
        match &e.kind {
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            }
            ExprKind::Var(name) => self.use_var(name, e.span, env),
            ExprKind::List(elements, tail) => {
                let mut all: Vec<&Expr> = elements.iter().collect();
                all.extend(tail.as_deref());
                self.siblings(&all, env);
            }
            ExprKind::Tuple(elements) => {
                let all: Vec<&Expr> = elements.iter().collect();
                self.siblings(&all, env);
            }
            ExprKind::Map(fields) => {
                self.construction_fields(fields);
                let all: Vec<&Expr> = fields.iter().flat_map(|f| [&f.key, &f.value]).collect();
                self.siblings(&all, env);
            }
            ExprKind::MapUpdate(map, fields) => {
                let mut all: Vec<&Expr> = vec![map];
                all.extend(fields.iter().flat_map(|f| [&f.key, &f.value]));
                self.siblings(&all, env);
            }
            ExprKind::Binary(elements) => {
                self.bit_types(elements);
                let all: Vec<&Expr> = elements
                    .iter()
                    .flat_map(|el| std::iter::once(&el.value).chain(el.size.as_ref()))
                    .collect();
                self.siblings(&all, env);
            }
            ExprKind::BinaryOp(_, a, b) | ExprKind::Send(a, b) => self.siblings(&[a, b], env),
            ExprKind::UnaryOp(_, a) => self.expr(a, env),
            ExprKind::Match(pattern, value) => {
                self.expr(value, env);
                self.patterns(std::slice::from_ref(pattern), env, None);
            }
            ExprKind::Call(target, args) => {
                let mut all: Vec<&Expr> = Vec::new();
                match target.as_ref() {
                    CallTarget::Local(name, span) => {
                        match self.table.resolve(name, args.len() as u32) {
                            LocalCall::Undefined => {
                                let arity = args.len() as u32;
                                let mut d = Diagnostic::error(
                                    format!("function {name}/{arity} undefined"),
                                    *span,
                                );
                                if let Some(hint) = self.table.suggest(name, arity) {
                                    d = d.with_hint(hint);
                                }
                                self.diagnostics.push(d);
                            }
                            LocalCall::AutoImported => {
                                self.deprecated("erlang", name, args.len(), e.span)
                            }
                            LocalCall::Local => {
                                let arity = args.len() as u32;
                                if let Some(mut d) = self.table.no_auto_import.clash(name, arity) {
                                    d.span = *span;
                                    self.diagnostics.push(d);
                                }
                            }
                        }
                    }
                    CallTarget::Remote(m, f) => {
                        if let (ExprKind::Atom(m), ExprKind::Atom(f)) = (&m.kind, &f.kind) {
                            self.deprecated(m, f, args.len(), e.span);
                            if let Some((message, span)) =
                                super::format_lint::check_call(m, f, args)
                            {
                                self.warning(message, span);
                            }
                        }
                        all.push(m);
                        all.push(f);
                    }
                    CallTarget::Fun(f) => all.push(f),
                }
                all.extend(args.iter());
                self.siblings(&all, env);
            }
            ExprKind::Fun(fun) => self.fun(fun, env, e.span),
            ExprKind::Case(subject, clauses) => {
                self.expr(subject, env);
                let mut branches = Vec::new();
                for clause in clauses {
                    let mut branch = env.clone();
                    self.clause(clause, &mut branch, None);
                    branches.push(branch);
                }
                self.merge(env, branches, "case", e.span);
            }
            ExprKind::If(clauses) => {
                let mut branches = Vec::new();
                for clause in clauses {
                    let mut branch = env.clone();
                    self.clause(clause, &mut branch, None);
                    branches.push(branch);
                }
                self.merge(env, branches, "if", e.span);
            }
            ExprKind::Receive(clauses, after) => {
                let mut branches = Vec::new();
                for clause in clauses {
                    let mut branch = env.clone();
                    self.clause(clause, &mut branch, None);
                    branches.push(branch);
                }
                if let Some(after) = after {
                    let mut branch = env.clone();
                    self.expr(&after.timeout, &mut branch);
                    self.sequence(&after.body, &mut branch);
                    branches.push(branch);
                }
                self.merge(env, branches, "receive", e.span);
            }
            ExprKind::Try(t) => self.try_expr(t, env, e.span),
            ExprKind::Catch(inner) => {
                let mut inside = env.clone();
                self.expr(inner, &mut inside);
                self.export_unsafe(env, vec![inside], "catch", e.span);
            }
            ExprKind::Block(body) => self.sequence(body, env),
            // `expand` leaves none in a program; the shell reads no
            // record definitions.
            ExprKind::Record(name, _)
            | ExprKind::RecordUpdate(_, name, _)
            | ExprKind::RecordAccess(_, name, _)
            | ExprKind::RecordIndex(name, _) => {
                self.error(format!("record {} undefined", name.name), name.span);
            }
            ExprKind::ListComprehension(head, qualifiers)
            | ExprKind::BinaryComprehension(head, qualifiers) => {
                let mut inside = env.clone();
                for qualifier in qualifiers {
                    match qualifier {
                        Qualifier::Generator(pattern, source)
                        | Qualifier::BinaryGenerator(pattern, source) => {
                            self.expr(source, &mut inside);
                            self.patterns(
                                std::slice::from_ref(pattern),
                                &mut inside,
                                Some("generate"),
                            );
                        }
                        Qualifier::Filter(filter) => self.expr(filter, &mut inside),
                    }
                }
                self.expr(head, &mut inside);
            }
        }
    }

    fn fun(&mut self, fun: &Fun, env: &mut Env, span: Span) {
        match fun {
            Fun::Anonymous(clauses) => {
                for clause in clauses {
                    let mut inside = env.clone();
                    self.clause(clause, &mut inside, Some("'fun'"));
                }
            }
            Fun::Named(name, clauses) => {
                if env.contains_key(&name.name) {
                    self.warning(
                        format!("variable '{}' shadowed in 'named fun'", name.name),
                        name.span,
                    );
                }
                // One binding for all clauses, placed (as erl_lint places
                // its "unused" warning) at the `fun` keyword.
                let id = self.new_binding(
                    &name.name,
                    Span::new(span.start as usize, span.start as usize + 3),
                );
                for clause in clauses {
                    let mut inside = env.clone();
                    inside.insert(
                        name.name.clone(),
                        VarState {
                            bindings: vec![id],
                            status: Status::Bound,
                        },
                    );
                    self.clause(clause, &mut inside, Some("'fun'"));
                }
            }
            Fun::Local(name) => {
                if self.table.resolve(&name.name, name.arity) == LocalCall::Undefined {
                    self.error(
                        format!("function {}/{} undefined", name.name, name.arity),
                        name.span,
                    );
                }
            }
            Fun::Remote {
                module,
                function,
                arity,
            } => self.siblings(&[module, function, arity], env),
        }
    }

    /// `try`: the body's bindings are visible in the `of` clauses; every
    /// variable the `try` binds is unsafe after it.
    fn try_expr(&mut self, t: &Try, env: &mut Env, span: Span) {
        let mut body = env.clone();
        self.sequence(&t.body, &mut body);
        let mut results = Vec::new();
        for clause in &t.of_clauses {
            let mut branch = body.clone();
            self.clause(clause, &mut branch, None);
            results.push(branch);
        }
        // Catch clauses and `after` run when the body may have stopped
        // anywhere: its variables are unsafe there.
        let mut unsafe_body = env.clone();
        self.export_unsafe(&mut unsafe_body, vec![body.clone()], "try", span);
        for clause in &t.catch_clauses {
            let mut branch = unsafe_body.clone();
            let mut patterns: Vec<&Expr> = clause.class.iter().collect();
            patterns.push(&clause.reason);
            let mut new = BTreeMap::new();
            for p in patterns {
                self.pattern(p, &branch, false, &mut new);
            }
            if let Some(stack) = &clause.stack
                && stack.name != "_"
            {
                if branch.contains_key(&stack.name) || new.contains_key(&stack.name) {
                    self.error(
                        format!("variable '{}' is already bound", stack.name),
                        stack.span,
                    );
                } else {
                    let id = self.new_binding(&stack.name, stack.span);
                    new.insert(stack.name.clone(), id);
                }
            }
            self.bind(&mut branch, new, None);
            if let Some(stack) = &clause.stack {
                self.stack_not_in_guard(&stack.name, &clause.guard);
            }
            self.guard(&clause.guard, &mut branch);
            self.sequence(&clause.body, &mut branch);
            results.push(branch);
        }
        let mut after = unsafe_body;
        self.sequence(&t.after, &mut after);
        results.push(body);
        results.push(after);
        self.export_unsafe(env, results, "try", span);
    }

    /// erlc forbids the stack trace variable of `Class:Reason:Stack` in the
    /// clause's guard.
    fn stack_not_in_guard(&mut self, stack: &str, guard: &Guard) {
        let mut pending: Vec<&Expr> = guard.iter().flatten().collect();
        while let Some(e) = pending.pop() {
            if let ExprKind::Var(name) = &e.kind
                && name == stack
            {
                self.error(
                    format!("stacktrace variable '{stack}' must not be used in a guard"),
                    e.span,
                );
            }
            super::walk::children(e, &mut pending);
        }
    }

    /// After a `case`, `if` or `receive`: variables new in every branch are
    /// bound, those new in only some are unsafe.
    fn merge(&mut self, env: &mut Env, branches: Vec<Env>, construct: &'static str, span: Span) {
        let mut new: BTreeMap<String, (usize, VarState)> = BTreeMap::new();
        for branch in &branches {
            for (name, state) in branch {
                if env.contains_key(name) {
                    continue;
                }
                let entry = new.entry(name.clone()).or_insert_with(|| {
                    (
                        0,
                        VarState {
                            bindings: Vec::new(),
                            status: Status::Bound,
                        },
                    )
                });
                entry.0 += 1;
                entry.1.bindings.extend(state.bindings.iter().copied());
                if let Status::Unsafe { .. } = state.status {
                    entry.1.status = state.status.clone();
                }
            }
        }
        for (name, (count, mut state)) in new {
            if count < branches.len() {
                state.status = Status::Unsafe { construct, span };
            } else if let Status::Bound | Status::Exported { .. } = state.status {
                state.status = Status::Exported {
                    construct,
                    span,
                    matched: Default::default(),
                };
            }
            env.insert(name, state);
        }
    }

    /// Every variable new in any of `results` becomes unsafe in `env`.
    fn export_unsafe(
        &mut self,
        env: &mut Env,
        results: Vec<Env>,
        construct: &'static str,
        span: Span,
    ) {
        let mut new: BTreeMap<String, VarState> = BTreeMap::new();
        for result in results {
            for (name, state) in result {
                if env.contains_key(&name) {
                    continue;
                }
                let entry = new.entry(name).or_insert_with(|| VarState {
                    bindings: Vec::new(),
                    status: Status::Unsafe { construct, span },
                });
                entry.bindings.extend(state.bindings);
            }
        }
        env.extend(new);
    }

    /// Where the operator `op` of a map field is: erl_parse gives the
    /// field the operator's position, so erl_lint reports there. It is
    /// found between the key and the value when this text holds them (an
    /// include's does not); otherwise the whole field.
    fn map_operator(&self, field: &MapField, op: &str) -> Span {
        let (from, to) = (field.key.span.end as usize, field.value.span.start as usize);
        match self.source.get(from..to) {
            Some(between) if between.trim() == op => {
                let at = from + between.find(op).unwrap_or(0);
                Span::new(at, at + op.len())
            }
            _ => field.span,
        }
    }

    fn construction_fields(&mut self, fields: &[MapField]) {
        for field in fields {
            if field.exact {
                let at = self.map_operator(field, ":=");
                self.diagnostics.push(
                    Diagnostic::error(
                        "only association operators '=>' are allowed in map construction",
                        at,
                    )
                    .with_hint(
                        "':=' updates an existing key: use it in M#{K := V} or in a pattern",
                    ),
                );
            }
        }
    }

    fn bit_types(&mut self, elements: &[BinElement]) {
        for element in elements {
            match super::bitspec::SegSpec::of(element) {
                Err(message) => self.error(message, element.span),
                // erl_lint: a float segment of a literal size in bits
                // other than 16, 32 or 64.
                Ok(spec) if spec.ty == super::bitspec::SegType::Float => {
                    if let Some(Expr {
                        kind: ExprKind::Integer(size),
                        ..
                    }) = &element.size
                        && !matches!(
                            num_traits::ToPrimitive::to_u32(&(size * spec.unit())),
                            Some(16 | 32 | 64)
                        )
                    {
                        self.warning("bad float bit size", element.span);
                    }
                }
                Ok(_) => {}
            }
        }
    }

    /// A segment that takes all the rest must be the last of a pattern.
    fn tails_last(&mut self, elements: &[BinElement]) {
        let Some((_, init)) = elements.split_last() else {
            return;
        };
        for element in init {
            if element.size.is_none()
                && super::bitspec::SegSpec::of(element).is_ok_and(|s| s.ty.is_binary())
            {
                self.error(
                    "a binary field without size is only allowed at the end of a binary pattern",
                    element.span,
                );
            }
        }
    }

    // ---- patterns --------------------------------------------------------------

    /// Checks patterns matched together (the arguments of one head) and
    /// binds their new variables in `env`.
    /// `shadowing` names the construct whose patterns bind fresh variables
    /// (`'fun'` heads, `generate` in comprehensions); `None` means bound
    /// variables are match tests.
    fn patterns(&mut self, patterns: &[Expr], env: &mut Env, shadowing: Option<&'static str>) {
        let mut new = BTreeMap::new();
        for p in patterns {
            self.pattern(p, env, shadowing.is_some(), &mut new);
        }
        self.bind(env, new, shadowing);
    }

    fn bind(
        &mut self,
        env: &mut Env,
        new: BTreeMap<String, usize>,
        shadowing: Option<&'static str>,
    ) {
        for (name, id) in new {
            if let Some(construct) = shadowing
                && env.contains_key(&name)
            {
                let span = self.bindings[id].span;
                self.warning(format!("variable '{name}' shadowed in {construct}"), span);
            }
            env.insert(
                name,
                VarState {
                    bindings: vec![id],
                    status: Status::Bound,
                },
            );
        }
    }

    /// One pattern. Variables bound in `env` are tests (unless `fresh`);
    /// others are collected in `new`, where a second occurrence is a use.
    fn pattern(&mut self, p: &Expr, env: &Env, fresh: bool, new: &mut BTreeMap<String, usize>) {
        match &p.kind {
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            }
            ExprKind::Var(name) => {
                if name == "_" {
                    return;
                }
                if let Some(&id) = new.get(name) {
                    self.bindings[id].used = true;
                } else if !fresh && env.contains_key(name) {
                    if let Some(VarState {
                        status:
                            Status::Exported {
                                construct,
                                span: at,
                                matched,
                            },
                        ..
                    }) = env.get(name)
                        && !matched.replace(true)
                    {
                        let (line, column) = self.lines.line_col(self.source, at.start);
                        self.warning(
                            format!("variable '{name}' exported from '{construct}' (line {line}, column {column})"),
                            p.span,
                        );
                    }
                    self.use_var(name, p.span, env);
                } else {
                    let id = self.new_binding(name, p.span);
                    new.insert(name.clone(), id);
                }
            }
            ExprKind::List(elements, tail) => {
                for e in elements {
                    self.pattern(e, env, fresh, new);
                }
                if let Some(tail) = tail {
                    self.pattern(tail, env, fresh, new);
                }
            }
            ExprKind::Tuple(elements) => {
                for e in elements {
                    self.pattern(e, env, fresh, new);
                }
            }
            ExprKind::Map(fields) => {
                for field in fields {
                    if !field.exact {
                        let at = self.map_operator(field, "=>");
                        self.diagnostics
                            .push(Diagnostic::error("illegal pattern", at).with_hint(
                                "a map pattern matches keys with ':=', as in #{key := Value}",
                            ));
                    }
                    // A key is an expression of bound variables, not a pattern.
                    self.guard_expr(&field.key, env);
                    if field.exact {
                        self.pattern(&field.value, env, fresh, new);
                    }
                }
            }
            ExprKind::Binary(elements) => {
                self.bit_types(elements);
                self.tails_last(elements);
                for element in elements {
                    if let Some(size) = &element.size {
                        self.size_in_pattern(size, env, new);
                    }
                    match &element.value.kind {
                        ExprKind::Var(_)
                        | ExprKind::Integer(_)
                        | ExprKind::Float(_)
                        | ExprKind::String(_) => self.pattern(&element.value, env, fresh, new),
                        ExprKind::UnaryOp(_, _) if is_constant_number(&element.value) => {}
                        _ => self.error("illegal pattern", element.value.span),
                    }
                }
            }
            ExprKind::Match(a, b) => {
                self.pattern(a, env, fresh, new);
                self.pattern(b, env, fresh, new);
            }
            ExprKind::BinaryOp(BinaryOp::Append, prefix, rest) if is_string_literal(prefix) => {
                self.pattern(rest, env, fresh, new);
            }
            _ if is_constant_number(p) => {}
            // erl_lint places an operator at the operator (`X + 1`).
            ExprKind::BinaryOp(_, a, b) => {
                let at = self.operator_between(a, b).unwrap_or(p.span);
                self.error("illegal pattern", at)
            }
            _ => self.error("illegal pattern", p.span),
        }
    }

    /// Where the operator between the operands `a` and `b` is written,
    /// when this text holds them (an include's does not): the first
    /// character between them that is not blank, a `)` or a comment.
    fn operator_between(&self, a: &Expr, b: &Expr) -> Option<Span> {
        let (from, to) = (a.span.end as usize, b.span.start as usize);
        let between = self.source.get(from..to)?;
        let mut rest = between;
        loop {
            rest = rest.trim_start_matches([' ', '\t', '\r', '\n', ')']);
            match rest.strip_prefix('%') {
                Some(comment) => rest = comment.split_once('\n').map_or("", |(_, r)| r),
                None => break,
            }
        }
        let at = from + (between.len() - rest.len());
        (!rest.is_empty()).then(|| Span::new(at, at + 1))
    }

    /// The size of a binary segment in a pattern: bound before the pattern
    /// or earlier in it (`<<N:8, Data:N/binary>>`).
    fn size_in_pattern(&mut self, size: &Expr, env: &Env, new: &BTreeMap<String, usize>) {
        if let ExprKind::Var(name) = &size.kind
            && let Some(&id) = new.get(name)
        {
            self.bindings[id].used = true;
            return;
        }
        if new.is_empty() {
            self.guard_expr(size, env);
            return;
        }
        // A size expression sees what earlier segments bound (`<<N:8,
        // X:(N * 8)>>`).
        let mut seen = env.clone();
        for (name, &id) in new {
            seen.insert(
                name.clone(),
                VarState {
                    bindings: vec![id],
                    status: Status::Bound,
                },
            );
        }
        self.guard_expr(size, &seen);
    }

    // ---- guards ------------------------------------------------------------------

    fn guard(&mut self, guard: &Guard, env: &mut Env) {
        for tests in guard {
            for test in tests {
                self.guard_expr(test, env);
            }
        }
    }

    /// An expression legal in a guard: no binding, no side effects, calls to
    /// guard BIFs only.
    fn guard_expr(&mut self, e: &Expr, env: &Env) {
        match &e.kind {
            ExprKind::Integer(_) | ExprKind::Float(_) | ExprKind::Atom(_) | ExprKind::String(_) => {
            }
            ExprKind::Var(name) => self.use_var(name, e.span, env),
            ExprKind::List(elements, tail) => {
                for x in elements {
                    self.guard_expr(x, env);
                }
                if let Some(tail) = tail {
                    self.guard_expr(tail, env);
                }
            }
            ExprKind::Tuple(elements) => {
                for x in elements {
                    self.guard_expr(x, env);
                }
            }
            ExprKind::Map(fields) => {
                self.construction_fields(fields);
                for field in fields {
                    self.guard_expr(&field.key, env);
                    self.guard_expr(&field.value, env);
                }
            }
            ExprKind::MapUpdate(map, fields) => {
                self.guard_expr(map, env);
                for field in fields {
                    self.guard_expr(&field.key, env);
                    self.guard_expr(&field.value, env);
                }
            }
            ExprKind::Binary(elements) => {
                self.bit_types(elements);
                for element in elements {
                    self.guard_expr(&element.value, env);
                    if let Some(size) = &element.size {
                        self.guard_expr(size, env);
                    }
                }
            }
            ExprKind::BinaryOp(_, a, b) => {
                self.guard_expr(a, env);
                self.guard_expr(b, env);
            }
            ExprKind::UnaryOp(_, a) => self.guard_expr(a, env),
            ExprKind::Call(target, args) => {
                let arity = args.len() as u32;
                let legal = match target.as_ref() {
                    CallTarget::Local(name, _) => {
                        is_guard_bif(name, arity) && !self.table.is_defined(name, arity)
                    }
                    CallTarget::Remote(m, f) => match (&m.kind, &f.kind) {
                        (ExprKind::Atom(m), ExprKind::Atom(f)) => {
                            m == "erlang" && (is_guard_bif(f, arity) || is_operator_name(f, arity))
                        }
                        _ => false,
                    },
                    CallTarget::Fun(_) => false,
                };
                if !legal {
                    // erl_lint names a call of the module's own function;
                    // a BIF that is not a guard BIF, a remote call or a
                    // fun call is an illegal guard expression, and of
                    // those only a local call's arguments are looked at.
                    // (An imported call is a remote one whose module and
                    // function `expand` placed at the call itself.)
                    let (local, imported) = match target.as_ref() {
                        CallTarget::Local(name, _) => (Some(name), false),
                        CallTarget::Remote(m, f) => match &f.kind {
                            ExprKind::Atom(name) if m.span == e.span && f.span == e.span => {
                                (Some(name), true)
                            }
                            _ => (None, false),
                        },
                        CallTarget::Fun(_) => (None, false),
                    };
                    let message = match local {
                        Some(name) if imported || self.table.is_defined(name, arity) => {
                            format!(
                                "call to local/imported function {name}/{arity} is illegal in guard"
                            )
                        }
                        _ => "illegal guard expression".to_string(),
                    };
                    // A fun call is placed at its fun (`(fun() -> ...)()`).
                    let at = match target.as_ref() {
                        CallTarget::Fun(callee) => callee.span,
                        _ => e.span,
                    };
                    self.diagnostics.push(Diagnostic::error(message, at).with_hint(
                        "guards may call only guard BIFs such as is_integer/1, element/2 or length/1",
                    ));
                    self.illegal_guard_calls.insert((e.span.start, e.span.end));
                    if local.is_none() {
                        return;
                    }
                }
                for arg in args {
                    self.guard_expr(arg, env);
                }
            }
            // A send is an operator to erl_lint: its operands are looked
            // at first, and the error is at the `!`.
            ExprKind::Send(to, message) => {
                self.guard_expr(to, env);
                self.guard_expr(message, env);
                let at = self.operator_between(to, message).unwrap_or(e.span);
                self.diagnostics
                    .push(Diagnostic::error("illegal guard expression", at));
            }
            // A match or a comprehension is refused whole: the variables
            // in it are not uses (`f(X) when X = 1` leaves X unused).
            ExprKind::Match(..)
            | ExprKind::ListComprehension(..)
            | ExprKind::BinaryComprehension(..) => {
                self.diagnostics
                    .push(Diagnostic::error("illegal guard expression", e.span));
            }
            _ => {
                self.diagnostics
                    .push(Diagnostic::error("illegal guard expression", e.span));
                self.mark_uses(e, env);
            }
        }
    }

    /// Marks the bound variables inside `e` as used, reporting nothing:
    /// for an expression already reported as illegal.
    fn mark_uses(&mut self, e: &Expr, env: &Env) {
        let mut pending = vec![e];
        while let Some(e) = pending.pop() {
            if let ExprKind::Var(name) = &e.kind
                && let Some(state) = env.get(name)
            {
                for &id in &state.bindings {
                    self.bindings[id].used = true;
                }
            }
            super::walk::children(e, &mut pending);
        }
    }
}

/// Could evaluating `e` bind a variable? (Saves copying scopes for the
/// many sub-expressions that cannot.)
fn can_bind(e: &Expr) -> bool {
    !matches!(
        e.kind,
        ExprKind::Integer(_)
            | ExprKind::Float(_)
            | ExprKind::Atom(_)
            | ExprKind::String(_)
            | ExprKind::Var(_)
            | ExprKind::Fun(_)
    )
}

/// `"abc"`, `[]` or a list of character literals: the left side of `++`
/// in a pattern.
fn is_string_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::String(_) => true,
        ExprKind::List(elements, None) => elements
            .iter()
            .all(|x| matches!(x.kind, ExprKind::Integer(_))),
        _ => false,
    }
}

/// A number, or arithmetic on numbers: Erlang evaluates these in patterns.
fn is_constant_number(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Integer(_) | ExprKind::Float(_) => true,
        ExprKind::UnaryOp(UnaryOp::Plus | UnaryOp::Minus | UnaryOp::Bnot, a) => {
            is_constant_number(a)
        }
        ExprKind::BinaryOp(op, a, b) => {
            use BinaryOp::*;
            matches!(
                op,
                Add | Sub | Mul | Div | IntDiv | Rem | Band | Bor | Bxor | Bsl | Bsr
            ) && is_constant_number(a)
                && is_constant_number(b)
        }
        _ => false,
    }
}

/// `erlang:'+'(A, B)` and friends are legal in guards.
fn is_operator_name(name: &str, arity: u32) -> bool {
    const BINARY: &[&str] = &[
        "+", "-", "*", "/", "div", "rem", "band", "bor", "bxor", "bsl", "bsr", "and", "or", "xor",
        "==", "/=", "=<", "<", ">=", ">", "=:=", "=/=",
    ];
    const UNARY: &[&str] = &["+", "-", "not", "bnot"];
    (arity == 2 && BINARY.contains(&name)) || (arity == 1 && UNARY.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_module;

    fn messages(source: &str) -> Vec<String> {
        let (module, errors) = parse_module(source);
        assert!(errors.is_empty(), "{errors:?}");
        // Unused-function warnings have their own test.
        check_module(&module, source)
            .into_iter()
            .map(|d| d.message)
            .filter(|m| !(m.starts_with("function ") && m.ends_with(" is unused")))
            .collect()
    }

    #[test]
    fn unbound_and_unused_variables_are_reported() {
        assert_eq!(
            messages("f() -> X = 1, Y."),
            vec!["variable 'X' is unused", "variable 'Y' is unbound"]
        );
        assert_eq!(messages("f(_X, _) -> ok."), Vec::<String>::new());
    }

    #[test]
    fn variables_bound_in_only_some_branches_are_unsafe() {
        let found = messages("f(X) -> case X of 1 -> Y = 1, Z = 2; _ -> Y = 2 end, {Y, Z}.");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("variable 'Z' unsafe in 'case' (line 1, column 9)"),
            "{found:?}"
        );
    }

    #[test]
    fn siblings_do_not_see_each_others_bindings() {
        assert_eq!(
            messages("f() -> {X = 1, X}."),
            vec!["variable 'X' is unbound"]
        );
    }

    #[test]
    fn fun_and_comprehension_bindings_stay_inside() {
        assert_eq!(
            messages("f() -> F = fun(A) -> B = A end, F, B."),
            vec!["variable 'B' is unused", "variable 'B' is unbound"]
        );
        assert_eq!(
            messages("f(L) -> [Q || Q <- L], Q."),
            vec!["variable 'Q' is unbound"]
        );
    }

    #[test]
    fn calls_resolve_to_local_functions_or_auto_imported_bifs() {
        assert_eq!(
            messages("f() -> g(1), length([]), self(). g(_) -> ok."),
            Vec::<String>::new()
        );
        assert_eq!(messages("f() -> foo(1)."), vec!["function foo/1 undefined"]);
        let (module, _) = parse_module("f() -> ok. length(_) -> 0.");
        let table = FunctionTable::of(&module);
        assert_eq!(table.resolve("length", 1), LocalCall::Local);
        assert_eq!(table.resolve("length", 2), LocalCall::Undefined);
        assert_eq!(table.resolve("spawn", 3), LocalCall::AutoImported);
    }

    #[test]
    fn guards_allow_only_guard_expressions() {
        assert_eq!(
            messages("f(A) when foo(A) -> ok.\nfoo(_) -> true."),
            vec!["call to local/imported function foo/1 is illegal in guard"]
        );
        assert_eq!(
            messages("f(A) when atom_to_list(A) == \"a\" -> ok."),
            vec!["illegal guard expression"]
        );
        assert_eq!(
            messages("f(A) when A ! x -> ok."),
            vec!["illegal guard expression"]
        );
        assert_eq!(
            messages("f(A) when is_integer(A), A > 0; A == x -> ok."),
            Vec::<String>::new()
        );
    }

    #[test]
    fn patterns_allow_only_pattern_expressions() {
        assert_eq!(messages("f([a | b()]) -> ok."), vec!["illegal pattern"]);
        assert_eq!(
            messages("f(\"ab\" ++ T, -1, 2 + 3, <<N:8, _:N/binary>>) -> T."),
            Vec::<String>::new()
        );
    }

    #[test]
    fn functions_unreachable_from_main_and_exports_are_unused() {
        let source = "-export([x/0]). main(_) -> a(), F = fun b/0, F(). a() -> ok. b() -> ok. \
                      c() -> d(). d() -> c(). x() -> y(). y() -> ok. z() -> ok.";
        let (module, _) = parse_module(source);
        let unused: Vec<String> = check_module(&module, source)
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert_eq!(
            unused,
            vec![
                "function c/0 is unused",
                "function d/0 is unused",
                "function z/0 is unused"
            ]
        );
    }

    #[test]
    fn forms_of_one_function_must_agree_and_stay_together() {
        assert_eq!(
            messages("f(1) -> ok. g() -> ok. f(2) -> ok."),
            vec!["function f/1 already defined"]
        );
        // A head mismatch is the parser's error (see parser::head_check).
        let (_, errors) = parse_module("i(1) -> ok; j(2) -> ok.");
        let errors: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(errors, vec!["head mismatch"]);
        assert_eq!(
            messages("-export([g/2]). f() -> ok."),
            vec!["function g/2 undefined"]
        );
    }
}
