//! The compiler: checked AST -> bytecode module.
//!
//! One pass per function clause, in the manner of a simple BEAM compiler:
//! - Every variable of a clause has one fixed place for the whole clause
//!   (Erlang variables are clause-scoped, so the branches of a `case` that
//!   bind `X` all bind the same place). A clause that makes a call other
//!   than in tail position gets a stack frame and keeps its variables in Y
//!   slots; a leaf clause keeps them in X registers and needs no frame.
//! - Temporaries live in X registers above every variable. Of several
//!   sub-expressions evaluated in order, a value that must survive a later
//!   call is put in a fresh Y slot (calls clobber the X registers).
//! - Funs and list comprehensions are lowered to new local functions of
//!   the module (`lower`), exactly like erlc does; closures pass their
//!   captured variables as extra trailing arguments.
//! - Patterns and guards become type tests and jumps (`pattern`); clauses
//!   that switch on atoms or integers go through a `select_val` jump table.
//!
//! Labels are module-wide and resolved to instruction indices at the end
//! (`Assembler::finish`); label 0 means "raise instead of jumping".

mod bits;
mod expr;
mod inline;
mod lower;
mod names;
mod pattern;

use crate::code::module::LINE_BITS;
use crate::code::{FunDef, FunctionInfo, Import, Instr, Label, Module, SelectTable, Src};
use crate::syntax::Sources;
use crate::syntax::ast;
use crate::syntax::span::{LineIndex, Span};
use crate::term::{Atom, Constant, Term};
use std::collections::HashMap;

/// A compile error with its place (the checker catches almost everything
/// first; these are the limits of the code generator).
#[derive(Debug, Clone)]
pub struct CompileError {
    pub message: String,
    pub span: Span,
}

type Result<T> = std::result::Result<T, CompileError>;

fn error<T>(span: Span, message: impl Into<String>) -> Result<T> {
    Err(CompileError {
        message: message.into(),
        span,
    })
}

/// The most X registers code may use (the interpreter has this many).
pub const MAX_X: u32 = 1000;
/// Deepest expression nesting the compiler follows (it recurses on the AST).
const MAX_DEPTH: u32 = 2000;
/// Bytes of budget below which a literal that cannot be built is blamed on
/// a `--max-memory` too small, not on the literal's size.
const LITERAL_ROOM: usize = 64 * 1024;

/// A function waiting to be compiled: a source function, or one made by
/// lowering (a fun body, a list comprehension helper).
struct PendingFunction {
    index: u32,
    clauses: Vec<ast::Clause>,
    /// For a named fun: its name inside its own body, and its fun index;
    /// the clause binds the name to a new closure over the same variables.
    self_fun: Option<(String, u32, Vec<String>)>,
}

/// Module-wide state: code, tables, labels.
pub struct ModuleCompiler {
    name: Atom,
    file: String,
    /// Per source file (see `Sources`): its base offset, its lines and its
    /// number in `include_files` (0: the module's own file).
    lines: Vec<(usize, LineIndex, u32)>,
    include_files: Vec<String>,
    code: Vec<Instr>,
    code_lines: Vec<u32>,
    current_line: u32,
    /// The code position a label was last bound to (see `emit`).
    last_bound: Option<usize>,
    literals: Vec<Term>,
    literal_index: HashMap<u64, u32>,
    operand_lists: Vec<Src>,
    select_tables: Vec<SelectTable>,
    functions: Vec<FunctionInfo>,
    /// Entry label of each function.
    function_labels: Vec<Label>,
    local_functions: HashMap<(String, u32), u32>,
    imports: Vec<Import>,
    import_index: HashMap<Import, u32>,
    funs: Vec<FunDef>,
    /// Position of each label (None until bound).
    labels: Vec<Option<u32>>,
    pending: Vec<PendingFunction>,
    /// Counter for naming funs and comprehension helpers per function.
    lambda_counter: u32,
    /// Name/arity of the source function being compiled (for naming funs).
    current_source_function: (String, u32),
    /// Highest X register used so far, plus one.
    pub(crate) max_x: u32,
    /// erlc's names for the current source function's funs and
    /// comprehensions (see `names`).
    lambda_names: names::LambdaNames,
    /// The names left for the generators of the comprehension being
    /// lowered.
    generator_names: std::collections::VecDeque<String>,
}

/// Compiles a checked module. `file` is the name stack traces show.
pub fn compile_module(
    module: &ast::Module,
    default_name: &str,
    file: &str,
    source: &str,
) -> std::result::Result<Module, CompileError> {
    compile_module_in(module, default_name, file, &Sources::single(file, source))
}

/// `compile_module` of a module read from `sources` (a script and the
/// files it includes), so code from an included file has its lines.
pub fn compile_module_in(
    module: &ast::Module,
    default_name: &str,
    file: &str,
    sources: &Sources,
) -> std::result::Result<Module, CompileError> {
    let mut name = default_name.to_string();
    let mut exports = Vec::new();
    let mut export_all = false;
    for form in &module.forms {
        if let ast::Form::Attribute(a) = form {
            match &a.kind {
                ast::AttributeKind::Module(m) => name = m.clone(),
                ast::AttributeKind::Export(list) => exports.extend(list.iter().cloned()),
                ast::AttributeKind::ExportAll { .. } => export_all = true,
                ast::AttributeKind::Record(_)
                | ast::AttributeKind::Import(..)
                | ast::AttributeKind::Other(_) => {}
            }
        }
    }
    if export_all {
        for form in &module.forms {
            if let ast::Form::Function(f) = form {
                exports.push(ast::FunctionName {
                    name: f.name.clone(),
                    arity: f.arity,
                    span: f.span,
                });
            }
        }
    }
    let mut mc = ModuleCompiler::new(Atom::intern(&name), file, sources);
    let sources_text = sources;
    // Declare every source function first so calls can refer to any.
    let mut sources = Vec::new();
    for form in &module.forms {
        if let ast::Form::Function(f) = form {
            if mc.local_functions.contains_key(&(f.name.clone(), f.arity)) {
                return error(
                    f.span,
                    format!("function {}/{} already defined", f.name, f.arity),
                );
            }
            let index = mc.declare_function(&f.name, f.arity);
            sources.push((index, f));
        }
    }
    // erlc's module_info/0,1, declared after the source functions (their
    // place in module_info(functions)) and compiled last.
    let info_key = |a: u32| ("module_info".to_string(), a);
    let module_info = if mc.local_functions.contains_key(&info_key(0))
        || mc.local_functions.contains_key(&info_key(1))
    {
        None
    } else {
        Some((
            mc.declare_function("module_info", 0),
            mc.declare_function("module_info", 1),
        ))
    };
    for (index, f) in sources {
        mc.current_source_function = (f.name.clone(), f.arity);
        mc.lambda_counter = 0;
        let mut clauses: Vec<ast::Clause> = f.clauses.iter().map(|c| c.clause.clone()).collect();
        mc.lambda_names = names::LambdaNames::of(&f.name, f.arity, &clauses);
        inline::applied_funs(&mut clauses);
        mc.compile_function(PendingFunction {
            index,
            clauses,
            self_fun: None,
        })?;
        while let Some(p) = mc.pending.pop() {
            mc.compile_function(p)?;
        }
    }
    let mut export_table = HashMap::new();
    if let Some((at, info)) = module_info {
        mc.module_info(module, &exports, sources_text, at, info)?;
        export_table.insert((Atom::intern("module_info"), 0), at);
        export_table.insert((Atom::intern("module_info"), 1), info);
    }
    for e in &exports {
        match mc.local_functions.get(&(e.name.clone(), e.arity)) {
            Some(&i) => {
                export_table.insert((Atom::intern(&e.name), e.arity), i);
            }
            None => return error(e.span, format!("function {}/{} undefined", e.name, e.arity)),
        }
    }
    mc.finish(export_table)
}

/// Builders of the AST of `module_info/0,1` (see `module_info`).
fn atom_expr(name: &str) -> ast::Expr {
    ast::Expr::new(ast::ExprKind::Atom(name.to_string()), Span::default())
}

fn int_expr(n: impl Into<num_bigint::BigInt>) -> ast::Expr {
    ast::Expr::new(ast::ExprKind::Integer(n.into()), Span::default())
}

fn tuple_expr(items: Vec<ast::Expr>) -> ast::Expr {
    ast::Expr::new(ast::ExprKind::Tuple(items), Span::default())
}

fn list_expr(items: Vec<ast::Expr>) -> ast::Expr {
    ast::Expr::new(ast::ExprKind::List(items, None), Span::default())
}

fn name_arity_list(names: &[(Atom, u32)]) -> ast::Expr {
    list_expr(
        names
            .iter()
            .map(|(n, a)| tuple_expr(vec![atom_expr(n.name()), int_expr(*a)]))
            .collect(),
    )
}

/// A 128-bit checksum of the module's source, standing for the MD5 of
/// its BEAM code (which act has not got): it changes when the source does.
fn source_digest(sources: &Sources) -> [u8; 16] {
    use std::hash::{Hash, Hasher};
    let mut out = [0u8; 16];
    for (k, half) in out.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        k.hash(&mut h);
        for f in &sources.files {
            f.text.hash(&mut h);
        }
        half.copy_from_slice(&h.finish().to_be_bytes());
    }
    out
}

/// The superinstruction that does `first` then `second`, if there is one.
fn fuse(first: Instr, second: Instr) -> Option<Instr> {
    match (first, second) {
        (Instr::Move { src: a, dst: to_a }, Instr::Move { src: b, dst: to_b }) => {
            Some(Instr::Move2 { a, to_a, b, to_b })
        }
        (Instr::IsCons { src, fail }, Instr::GetList { src: s, head, tail }) if s == src => {
            Some(Instr::IsConsGetList {
                src,
                fail,
                head,
                tail,
            })
        }
        _ => None,
    }
}

impl ModuleCompiler {
    /// An empty compiler for module `name` read from `sources`.
    fn new(name: Atom, file: &str, sources: &Sources) -> ModuleCompiler {
        let mut include_files: Vec<String> = Vec::new();
        let mut lines = Vec::new();
        for (i, f) in sources.files.iter().enumerate() {
            let number = if i == 0 {
                0
            } else if let Some(k) = include_files.iter().position(|n| *n == f.name) {
                k as u32 + 1
            } else {
                include_files.push(f.name.clone());
                include_files.len() as u32
            };
            lines.push((f.base, LineIndex::new(&f.text), number));
        }
        ModuleCompiler {
            name,
            file: file.to_string(),
            lines,
            include_files,
            code: Vec::new(),
            code_lines: Vec::new(),
            current_line: 0,
            last_bound: None,
            literals: Vec::new(),
            literal_index: HashMap::new(),
            operand_lists: Vec::new(),
            select_tables: Vec::new(),
            functions: Vec::new(),
            function_labels: Vec::new(),
            local_functions: HashMap::new(),
            imports: Vec::new(),
            import_index: HashMap::new(),
            funs: Vec::new(),
            labels: vec![Some(0)],
            pending: Vec::new(),
            lambda_counter: 0,
            current_source_function: (String::new(), 0),
            max_x: 3,
            lambda_names: names::LambdaNames::default(),
            generator_names: Default::default(),
        }
    }

    fn declare_function(&mut self, name: &str, arity: u32) -> u32 {
        self.max_x = self.max_x.max(arity + 1);
        let index = self.functions.len() as u32;
        self.functions.push(FunctionInfo {
            name: Atom::intern(name),
            arity,
            entry: 0,
        });
        let label = self.new_label();
        self.function_labels.push(label);
        self.local_functions
            .insert((name.to_string(), arity), index);
        index
    }

    fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() as u32 - 1)
    }

    fn bind(&mut self, label: Label) {
        self.labels[label.0 as usize] = Some(self.code.len() as u32);
        self.last_bound = Some(self.code.len());
    }

    /// Appends `instr`, or fuses it with the instruction before into a
    /// superinstruction when nothing can jump between the two (no label
    /// is bound at this position).
    fn emit(&mut self, instr: Instr) -> usize {
        if let Instr::TestHeap { words, .. } = instr
            && let Some(i) = self.heap_test_to_widen()
            && let Instr::TestHeap {
                words: before,
                live,
            } = self.code[i]
        {
            self.code[i] = Instr::TestHeap {
                words: before + words,
                live,
            };
            return i;
        }
        if self.last_bound != Some(self.code.len())
            && let Some(last) = self.code.last_mut()
            && let Some(fused) = fuse(*last, instr)
        {
            *last = fused;
            return self.code.len() - 1;
        }
        self.code.push(instr);
        self.code_lines.push(self.current_line);
        self.code.len() - 1
    }

    /// The heap test a new one can be merged into, as erlc merges them:
    /// the last `test_heap`, when only instructions that neither allocate
    /// (beyond what that test reserved) nor collect nor leave the
    /// straight line came after it, and no label points past it. Its
    /// live count is the one that holds at its own place; `{A, {B, C}}`
    /// then tests the heap once.
    fn heap_test_to_widen(&self) -> Option<usize> {
        for (i, instr) in self.code.iter().enumerate().rev().take(16) {
            match instr {
                Instr::TestHeap { .. } => {
                    return self.last_bound.is_none_or(|b| b <= i).then_some(i);
                }
                Instr::PutTuple { .. }
                | Instr::PutList { .. }
                | Instr::Move { .. }
                | Instr::Move2 { .. }
                | Instr::Swap { .. }
                | Instr::GetList { .. }
                | Instr::GetTupleElement { .. } => {}
                _ => return None,
            }
        }
        None
    }

    fn set_line(&mut self, span: Span) {
        let i = self
            .lines
            .partition_point(|l| l.0 <= span.start as usize)
            .saturating_sub(1);
        self.current_line = match self.lines.get(i) {
            Some((base, lines, number)) => {
                let line = lines.line(span.start - *base as u32);
                line.min((1 << LINE_BITS) - 1) | number << LINE_BITS
            }
            None => 0,
        };
    }

    /// The literal operand for an immediate or constant term.
    fn literal(&mut self, t: Term) -> Src {
        if let Some(&i) = self.literal_index.get(&t.0) {
            return Src::lit(i);
        }
        let i = self.literals.len() as u32;
        self.literals.push(t);
        self.literal_index.insert(t.0, i);
        Src::lit(i)
    }

    fn constant(&mut self, c: &Constant, span: Span) -> Result<Src> {
        match c {
            Constant::Atom(a) => Ok(self.literal(Term::atom(Atom::intern(a)))),
            Constant::Nil => Ok(self.literal(Term::NIL)),
            Constant::Integer(i) => {
                if let Some(t) = i64::try_from(i).ok().and_then(Term::try_small) {
                    return Ok(self.literal(t));
                }
                self.built_literal(c, span)
            }
            _ => self.built_literal(c, span),
        }
    }

    fn built_literal(&mut self, c: &Constant, span: Span) -> Result<Src> {
        match crate::term::literal::build(c) {
            Ok(t) => {
                let i = self.literals.len() as u32;
                self.literals.push(t);
                Ok(Src::lit(i))
            }
            // A literal fails when its block is too big, or when the memory
            // budget cannot hold it (a `--max-memory` too small to start).
            Err(_) if !crate::heap::budget::has_room(LITERAL_ROOM) => error(
                span,
                "the memory budget (--max-memory) is too small to load this program",
            ),
            Err(_) => error(span, "literal too large"),
        }
    }

    fn operand_list(&mut self, srcs: &[Src]) -> u32 {
        let at = self.operand_lists.len() as u32;
        self.operand_lists.extend_from_slice(srcs);
        at
    }

    fn import(&mut self, module: Atom, function: Atom, arity: u32) -> u32 {
        let import = Import {
            module,
            function,
            arity,
        };
        if let Some(&i) = self.import_index.get(&import) {
            return i;
        }
        let i = self.imports.len() as u32;
        self.imports.push(import.clone());
        self.import_index.insert(import, i);
        i
    }

    /// `module_info/0` and `module_info/1`, which erlc adds to every
    /// module: the module's name, exports (in the order of definition,
    /// then these two), attributes, compile information and checksum, and
    /// its functions. `at` and `info_index` are their function indices,
    /// declared right after the source functions.
    fn module_info(
        &mut self,
        module: &ast::Module,
        exports: &[ast::FunctionName],
        sources: &Sources,
        at: u32,
        info_index: u32,
    ) -> Result<()> {
        let mut exported: std::collections::HashSet<(&str, u32)> =
            exports.iter().map(|e| (e.name.as_str(), e.arity)).collect();
        // escript exports a script's main/1 whatever its -export says.
        exported.insert(("main", 1));
        let mut sources_fns = Vec::new();
        for form in &module.forms {
            if let ast::Form::Function(f) = form {
                sources_fns.push((Atom::intern(&f.name), f.arity));
            }
        }
        let info = [
            (Atom::intern("module_info"), 0),
            (Atom::intern("module_info"), 1),
        ];
        let mut export_list: Vec<(Atom, u32)> = sources_fns
            .iter()
            .filter(|(n, a)| exported.contains(&(n.name(), *a)))
            .copied()
            .collect();
        export_list.extend(info);
        let lambdas = sources_fns.len() + 2;
        let mut functions: Vec<(Atom, u32)> = sources_fns;
        functions.extend(info);
        functions.extend(
            self.functions[lambdas..]
                .iter()
                .rev()
                .map(|f| (f.name, f.arity)),
        );
        let digest = source_digest(sources);
        let vsn_value = num_bigint::BigInt::from_bytes_be(num_bigint::Sign::Plus, &digest);
        let attributes = list_expr(vec![tuple_expr(vec![
            atom_expr("vsn"),
            list_expr(vec![int_expr(vsn_value)]),
        ])]);
        let compile = list_expr(vec![
            tuple_expr(vec![
                atom_expr("version"),
                ast::Expr::new(
                    ast::ExprKind::String("8.2.3".chars().map(|c| c as u32).collect()),
                    Span::default(),
                ),
            ]),
            tuple_expr(vec![atom_expr("options"), list_expr(vec![])]),
        ]);
        let md5 = ast::Expr::new(
            ast::ExprKind::Binary(
                digest
                    .iter()
                    .map(|b| ast::BinElement {
                        value: int_expr(*b),
                        size: None,
                        specifiers: vec![],
                        span: Span::default(),
                    })
                    .collect(),
            ),
            Span::default(),
        );
        let name = atom_expr(self.name.name());
        let items: Vec<(&str, ast::Expr)> = vec![
            ("module", name.clone()),
            ("exports", name_arity_list(&export_list)),
            ("attributes", attributes),
            ("compile", compile),
            ("md5", md5),
        ];
        let clause = |patterns: Vec<ast::Expr>, body: ast::Expr| ast::Clause {
            patterns,
            guard: vec![],
            body: vec![body],
            span: Span::default(),
        };
        let all = list_expr(
            items
                .iter()
                .map(|(k, v)| tuple_expr(vec![atom_expr(k), v.clone()]))
                .collect(),
        );
        let mut one: Vec<ast::Clause> = items
            .into_iter()
            .map(|(k, v)| clause(vec![atom_expr(k)], v))
            .collect();
        one.push(clause(
            vec![atom_expr("functions")],
            name_arity_list(&functions),
        ));
        one.push(clause(vec![atom_expr("nifs")], list_expr(vec![])));
        one.push(clause(vec![atom_expr("native")], atom_expr("false")));
        // Anything else is badarg, as erlang:get_module_info/2 gives it.
        let other = ast::Expr::new(ast::ExprKind::Var("Other".to_string()), Span::default());
        let error = ast::Expr::new(
            ast::ExprKind::Call(
                Box::new(ast::CallTarget::Remote(
                    atom_expr("erlang"),
                    atom_expr("error"),
                )),
                vec![atom_expr("badarg"), list_expr(vec![name, other.clone()])],
            ),
            Span::default(),
        );
        one.push(clause(vec![other], error));
        self.current_source_function = ("module_info".to_string(), 0);
        self.lambda_counter = 0;
        self.compile_function(PendingFunction {
            index: at,
            clauses: vec![clause(vec![], all)],
            self_fun: None,
        })?;
        self.current_source_function = ("module_info".to_string(), 1);
        self.compile_function(PendingFunction {
            index: info_index,
            clauses: one,
            self_fun: None,
        })
    }

    /// Whether arithmetic is laid out as erlc lays it out (a literal
    /// operand of a commutative operator second): everywhere but the shell,
    /// whose expressions erl_eval evaluates by calling the operators.
    pub(super) fn erlc_arith(&self) -> bool {
        self.name.name() != crate::repl::eval::SHELL_MODULE
    }

    /// A fresh name for a fun or comprehension helper, erlc-style.
    fn lambda_name(&mut self, kind: &str) -> String {
        let (f, a) = &self.current_source_function;
        let n = self.lambda_counter;
        self.lambda_counter += 1;
        format!("-{f}/{a}-{kind}-{n}-")
    }

    fn finish(
        mut self,
        exports: HashMap<(Atom, u32), u32>,
    ) -> std::result::Result<Module, CompileError> {
        let positions: Vec<u32> = self.labels.iter().map(|p| p.unwrap_or(0)).collect();
        let mut fix = |l: Label| Label(positions[l.0 as usize]);
        for instr in &mut self.code {
            instr.map_labels(&mut fix);
        }
        for table in &mut self.select_tables {
            for target in &mut table.targets {
                *target = fix(*target);
            }
        }
        for (i, f) in self.functions.iter_mut().enumerate() {
            f.entry = positions[self.function_labels[i].0 as usize];
        }
        let local_functions = self
            .local_functions
            .iter()
            .map(|((n, a), &i)| ((Atom::intern(n), *a), i))
            .collect();
        Module::new(
            self.name,
            self.file,
            self.code,
            self.code_lines,
            self.literals,
            self.operand_lists,
            self.select_tables,
            self.functions,
            exports,
            local_functions,
            self.imports,
            self.funs,
            self.max_x + 1,
        )
        .map(|mut m| {
            m.include_files = self.include_files;
            m
        })
        .map_err(|e| CompileError {
            span: Span::default(),
            message: format!("internal: {e}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::Dst;

    fn compiler() -> ModuleCompiler {
        ModuleCompiler::new(Atom::intern("t"), "t.act", &Sources::single("t.act", ""))
    }

    fn mv(from: u32, to: u16) -> Instr {
        Instr::Move {
            src: Src::x(from),
            dst: Dst::x(to),
        }
    }

    #[test]
    fn two_moves_fuse_unless_a_label_sits_between_them() {
        let mut mc = compiler();
        mc.emit(mv(0, 1));
        mc.emit(mv(1, 2));
        assert_eq!(mc.code.len(), 1);
        assert!(matches!(mc.code[0], Instr::Move2 { .. }));
        let l = mc.new_label();
        mc.bind(l);
        mc.emit(mv(2, 3));
        assert_eq!(mc.code.len(), 2, "a jump target is never fused away");
        assert!(matches!(mc.code[1], Instr::Move { .. }));
        mc.emit(mv(3, 4));
        assert!(matches!(mc.code[1], Instr::Move2 { .. }));
    }

    #[test]
    fn a_cons_test_fuses_only_with_a_split_of_the_same_register() {
        let fail = Label(5);
        let get = |src| Instr::GetList {
            src,
            head: Dst::x(1),
            tail: Dst::x(2),
        };
        let test = Instr::IsCons {
            src: Src::x(0),
            fail,
        };
        assert!(matches!(
            fuse(test, get(Src::x(0))),
            Some(Instr::IsConsGetList { .. })
        ));
        assert_eq!(fuse(test, get(Src::x(3))), None);
    }
}
