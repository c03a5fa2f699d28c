//! The front end on hostile input: no panic, hang or stack overflow, and a
//! clear error at the right place. Each test runs on the test harness's
//! ordinary thread, so the front end must protect itself.

use act::syntax::{self, Severity};
use std::time::{Duration, Instant};

fn errors(source: &str) -> Vec<String> {
    syntax::check_source(source)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message)
        .collect()
}

#[test]
fn empty_and_comment_only_files_have_no_forms_and_no_errors() {
    for source in [
        "",
        "\n\n",
        "% only a comment",
        "%% one\n% two\n",
        "#!/usr/bin/env escript\n",
        "#!x",
    ] {
        let (module, diagnostics) = syntax::parse_module(source);
        assert!(
            module.forms.is_empty() && diagnostics.is_empty(),
            "{source:?}: {diagnostics:?}"
        );
    }
}

#[test]
fn unterminated_string_and_atom_at_the_end_of_the_file_are_reported_at_the_quote() {
    let source = "main(_) -> \"abc";
    let diagnostics = syntax::check_source(source);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].span.start, 11);
    assert!(diagnostics[0].message.starts_with("unterminated string"));
    let diagnostics = syntax::check_source("main(_) -> 'abc");
    assert!(
        diagnostics[0]
            .message
            .starts_with("unterminated quoted atom"),
        "{diagnostics:?}"
    );
    assert_eq!(diagnostics[0].span.start, 11);
}

#[test]
fn deeply_nested_brackets_are_rejected_as_nested_too_deeply_at_their_place() {
    let depth = 200_000;
    for (open, close) in [("(", ")"), ("[", "]"), ("{", "}"), ("begin ", " end")] {
        let source = format!(
            "main(_) -> {}1{}.\n",
            open.repeat(depth),
            close.repeat(depth)
        );
        let started = Instant::now();
        let diagnostics = syntax::check_source(&source);
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(diagnostics.len(), 1, "{open}: {:?}", diagnostics.first());
        assert!(
            diagnostics[0].message.starts_with("nested too deeply"),
            "{}",
            diagnostics[0].message
        );
        // The error points at the bracket that went over the limit.
        let at = diagnostics[0].span.start as usize;
        assert!(
            source[at..].starts_with(open.trim()),
            "points at {:?}",
            &source[at..at + 5]
        );
    }
    // Block expressions count: funs, case, try, receive.
    for (open, close) in [
        ("fun() -> ", " end"),
        ("fun F() -> ", " end"),
        ("case x of _ -> ", " end"),
        ("try ", " after ok end"),
        ("receive _ -> ", " end"),
    ] {
        let source = format!(
            "main(_) -> {}1{}.\n",
            open.repeat(depth),
            close.repeat(depth)
        );
        let errors = errors(&source);
        assert_eq!(errors.len(), 1, "{open}: {errors:?}");
        assert!(
            errors[0].starts_with("nested too deeply"),
            "{open}: {errors:?}"
        );
    }
    // Unclosed brackets too: the real error (the end of the input) is
    // reported rather than the depth.
    let source = format!("main(_) -> {}", "[".repeat(depth));
    let errors = errors(&source);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("syntax error"), "{errors:?}");
}

#[test]
fn nesting_below_the_limit_parses() {
    let source = format!("main(_) -> {}1{}.\n", "(".repeat(500), ")".repeat(500));
    assert_eq!(errors(&source), Vec::<String>::new());
    let source = format!("main(_) -> {}1{}.\n", "[".repeat(900), "]".repeat(900));
    assert_eq!(errors(&source), Vec::<String>::new());
}

#[test]
fn long_operator_chains_are_rejected_without_overflowing_the_stack() {
    for op in ["+", "++", "=", "!", "andalso", "orelse"] {
        let source = format!("main(X) -> X {}.\n", format!(" {op} X").repeat(100_000));
        let errors = errors(&source);
        assert_eq!(errors.len(), 1, "{op}: {errors:?}");
        assert!(
            errors[0].starts_with("expression nested too deeply"),
            "{op}: {errors:?}"
        );
    }
    // A failed parse after a long chain drops a deep partial tree.
    let source = format!("main(X) -> X {} ).\n", " + X".repeat(100_000));
    assert_eq!(errors(&source).len(), 1);
    // Prefix operators nest too.
    let source = format!("main(X) -> {}X.\n", "- ".repeat(100_000));
    assert!(errors(&source)[0].contains("nested too deeply"));
}

#[test]
fn a_ten_megabyte_line_is_handled_quickly() {
    let mut source = String::from("main(_) -> L = [");
    while source.len() < 10 << 20 {
        source.push_str("123456789, ");
    }
    source.push_str("0], length(L).\n");
    let started = Instant::now();
    let (module, diagnostics) = syntax::parse_module(&source);
    assert!(diagnostics.is_empty());
    assert_eq!(module.forms.len(), 1);
    let diagnostics = syntax::check_source(&source);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );

    // An error at the far end of a 10 MB line renders a short snippet.
    let broken = source.replace("0], length(L)", "0], length(L) )");
    let diagnostics = syntax::check_source(&broken);
    assert_eq!(diagnostics.len(), 1);
    let rendered = syntax::render(&diagnostics, "big.act", &broken);
    assert!(rendered.len() < 2000, "{} bytes", rendered.len());
    assert!(rendered.starts_with("big.act:1:"));

    // One 10 MB atom (too long for Erlang too), and one 10 MB string.
    let atom = format!("main(_) -> {}.\n", "a".repeat(10 << 20));
    assert_eq!(
        errors(&atom),
        vec!["atom too long: an atom has at most 255 characters"]
    );
    let string = format!("main(_) -> \"{}\".\n", "x".repeat(10 << 20));
    assert_eq!(errors(&string), Vec::<String>::new());
}

#[test]
fn random_bytes_never_panic() {
    // A fixed pseudo-random sequence: the test is repeatable.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200 {
        let mut bytes = Vec::new();
        for _ in 0..(state % 400) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bytes.push((state >> 24) as u8);
        }
        let text = String::from_utf8_lossy(&bytes);
        let diagnostics = syntax::check_source(&text);
        let _ = syntax::render(&diagnostics, "random.act", &text);
    }
}

#[test]
fn every_error_of_a_file_is_reported_not_just_the_first() {
    // A script: main/1 is there, so that only the errors below are.
    let source = "main(_) -> ok.\na() -> (.\nb() -> ].\nc() -> ok.\nd() -> Unbound.\ne() -> undefined_fn().\n";
    let errors = errors(source);
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert!(errors[2].contains("'Unbound' is unbound"));
    assert!(
        errors[3].contains("undefined_fn/0 undefined") || errors[3].contains("undefined"),
        "{errors:?}"
    );
}

#[test]
fn repl_entry_points_parse_one_expression_sequence_or_one_form() {
    let exprs = syntax::parse_exprs("X = 1, X + 2.").expect("parses");
    assert_eq!(exprs.len(), 2);
    assert!(syntax::parse_exprs("X = 1").is_err(), "the dot is required");
    assert!(syntax::parse_exprs("1. 2.").is_err(), "one sequence only");
    assert!(syntax::parse_exprs("").is_err());
    let form = syntax::parse_form("double(X) -> 2 * X.").expect("parses");
    assert!(
        matches!(form, act::syntax::ast::Form::Function(ref f) if f.name == "double" && f.arity == 1)
    );
    assert!(
        matches!(syntax::parse_repl("X = 1, X + 2."), Ok(syntax::ReplInput::Exprs(ref e)) if e.len() == 2)
    );
    assert!(matches!(
        syntax::parse_repl("f(X) -> X."),
        Ok(syntax::ReplInput::Form(_))
    ));
    assert!(matches!(
        syntax::parse_repl("-module(m)."),
        Ok(syntax::ReplInput::Form(_))
    ));
    assert!(matches!(
        syntax::parse_repl("-X."),
        Ok(syntax::ReplInput::Exprs(_))
    ));
    let errors = syntax::parse_repl("f(X) -> X +.").expect_err("broken");
    assert!(errors[0].message.contains("unexpected '.'"), "{errors:?}");
    assert!(syntax::is_complete("f() -> ok.\n"));
    assert!(!syntax::is_complete("f() ->\n"));
    assert!(
        !syntax::is_complete("\"a. b"),
        "a dot inside a string does not end input"
    );
}

#[test]
fn trees_at_the_depth_limit_check_and_print_on_an_ordinary_thread() {
    // Just under MAX_EXPR_DEPTH: accepted, so every later pass sees it.
    let depth = syntax::parser::MAX_EXPR_DEPTH - 10;
    let chains = [
        format!("main(X) -> X{}.\n", " + X".repeat(depth)),
        format!("main(X) -> {}X.\n", "- ".repeat(depth)),
        format!("main(X) -> X{}.\n", " ++ X".repeat(depth)),
        format!("main(X) -> {} X.\n", "Y = ".repeat(depth)),
    ];
    for source in chains {
        // A 2 MiB thread, like the test harness's and smaller than main's.
        let handle = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let (module, errors) = syntax::parse_module(&source);
                assert!(errors.is_empty(), "{errors:?}");
                let _ = syntax::check::check_module(&module, &source);
                let printed = syntax::print::module_to_string(&module);
                assert!(printed.len() > depth);
            })
            .expect("thread starts");
        handle.join().expect("no stack overflow");
    }
}
