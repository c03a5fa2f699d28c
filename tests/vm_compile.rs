//! The compiler's output for small programs: which instructions it
//! chooses (frames only where needed, tail calls, jump tables, heap
//! tests before allocation).

use act::code::{Instr, Module};
use act::runtime::script::compile_source;

fn compile(source: &str) -> Module {
    compile_source(source, "t.act", "t").expect("compiles")
}

/// The instructions of function `name/arity`.
fn function(m: &Module, name: &str, arity: u32) -> Vec<Instr> {
    let f = m
        .functions
        .iter()
        .find(|f| f.name.name() == name && f.arity == arity)
        .expect("function exists");
    let mut entries: Vec<u32> = m.functions.iter().map(|f| f.entry).collect();
    entries.sort();
    let end = entries
        .iter()
        .copied()
        .find(|&e| e > f.entry)
        .unwrap_or(m.code.len() as u32);
    m.code[f.entry as usize..end as usize].to_vec()
}

fn count(code: &[Instr], name: &str) -> usize {
    code.iter().filter(|i| i.name() == name).count()
}

#[test]
fn a_leaf_function_has_no_frame() {
    let m = compile("main(_) -> ok.\nadd(A, B) -> A + B.\n");
    let code = function(&m, "add", 2);
    assert_eq!(count(&code, "allocate"), 0, "{code:?}");
    assert_eq!(count(&code, "add"), 1);
}

#[test]
fn a_self_tail_call_reuses_the_frame() {
    let m =
        compile("main(_) -> loop(3, 0).\nloop(0, A) -> A;\nloop(N, A) -> loop(N - 1, A + N).\n");
    let code = function(&m, "loop", 2);
    assert_eq!(count(&code, "call_only"), 1, "{code:?}");
    assert_eq!(count(&code, "call"), 0);
    assert_eq!(count(&code, "allocate"), 0);
}

#[test]
fn body_recursion_keeps_live_values_in_a_frame() {
    let m = compile("main(_) -> ok.\nf(0) -> 0;\nf(N) -> N + f(N - 1).\n");
    let code = function(&m, "f", 1);
    assert_eq!(count(&code, "allocate"), 1, "{code:?}");
    assert_eq!(count(&code, "call"), 1);
    assert!(
        code.iter()
            .any(|i| matches!(i, Instr::Move { dst, .. } if dst.is_y()))
    );
}

#[test]
fn many_literal_clauses_select_through_a_jump_table() {
    let m = compile("main(_) -> ok.\nf(a) -> 1; f(b) -> 2; f(c) -> 3; f(d) -> 4; f(_) -> 0.\n");
    assert_eq!(count(&function(&m, "f", 1), "select_val"), 1);
    assert_eq!(m.select_tables[0].values.len(), 4);
}

#[test]
fn construction_is_preceded_by_a_heap_test() {
    let m = compile("main(_) -> ok.\nf(X) -> {X, [X]}.\n");
    let code = function(&m, "f", 1);
    let first_put = code
        .iter()
        .position(|i| matches!(i, Instr::PutList { .. } | Instr::PutTuple { .. }));
    let first_test = code
        .iter()
        .position(|i| matches!(i, Instr::TestHeap { .. }));
    assert!(first_test.is_some() && first_test < first_put, "{code:?}");
}

#[test]
fn literal_terms_are_built_once_in_the_literal_table() {
    let m = compile("main(_) -> ok.\nf() -> {a, [1, 2, 3], \"text\"}.\n");
    let code = function(&m, "f", 0);
    assert_eq!(
        count(&code, "put_tuple") + count(&code, "put_list"),
        0,
        "{code:?}"
    );
}

#[test]
fn comprehensions_and_funs_become_local_functions() {
    let m = compile("main(L) -> F = fun(X) -> X end, [F(X) || X <- L].\n");
    let names: Vec<&str> = m.functions.iter().map(|f| f.name.name()).collect();
    assert!(names.contains(&"-main/1-fun-0-"), "{names:?}");
    assert!(names.contains(&"-main/1-lc$^1/1-0-"), "{names:?}");
    assert_eq!(m.funs.len(), 1);
}

#[test]
fn a_closure_captures_only_the_free_variables_it_uses() {
    let m = compile("main(_) -> A = 1, B = 2, C = 3, F = fun(X) -> X + B end, {A, C, F}.\n");
    assert_eq!(m.funs[0].free, 1);
}

#[test]
fn try_and_catch_push_and_pop_catch_entries() {
    let m = compile(
        "main(_) -> (catch a()), try a() catch _:_ -> ok after b() end.\na() -> ok.\nb() -> ok.\n",
    );
    let code = function(&m, "main", 1);
    assert_eq!(count(&code, "catch"), 1);
    assert_eq!(count(&code, "catch_end"), 1);
    assert_eq!(count(&code, "try"), 2, "{code:?}");
    assert_eq!(count(&code, "try_end"), 2);
}

#[test]
fn receive_compiles_to_the_mailbox_loop() {
    let m = compile("main(_) -> receive {a, X} -> X after 10 -> none end.\n");
    let code = function(&m, "main", 1);
    for name in [
        "loop_rec",
        "remove_message",
        "loop_rec_end",
        "wait_timeout",
        "timeout",
    ] {
        assert_eq!(count(&code, name), 1, "{name} in {code:?}");
    }
}

#[test]
fn consecutive_moves_become_one_move2() {
    let m = compile("-module(t).\n-export([f/2]).\nf(A, B) -> g(B, A), A.\ng(X, Y) -> {X, Y}.\n");
    let f = function(&m, "f", 2);
    assert!(count(&f, "move2") >= 1, "{f:?}");
}

#[test]
fn a_list_loop_tests_and_splits_the_cons_in_one_instruction() {
    let m = compile(
        "-module(t).\n-export([sum/2]).\nsum([H | T], N) -> sum(T, N + H);\nsum([], N) -> N.\n",
    );
    let f = function(&m, "sum", 2);
    assert_eq!(count(&f, "is_nonempty_list_get_list"), 1, "{f:?}");
    assert_eq!(count(&f, "is_nonempty_list"), 0, "{f:?}");
    assert_eq!(count(&f, "get_list"), 0, "{f:?}");
}

#[test]
fn every_local_call_targets_a_function_entry() {
    // The interpreter enters a local call one past its target label;
    // that is only right if the label is the callee's func_info.
    let m = compile(
        "-module(t).\n-export([f/1]).\nf(0) -> 0;\nf(N) -> 1 + f(N - 1).\n\
         g(L) -> [X || X <- L, X > 1].\n",
    );
    for i in &m.code {
        if let Instr::Call { target, .. }
        | Instr::CallLast { target, .. }
        | Instr::CallOnly { target, .. } = *i
        {
            assert!(matches!(m.code[target.0 as usize], Instr::FuncInfo { .. }));
        }
    }
}
