//! Property tests: the front end never panics, whatever it is fed. Inputs
//! are the valid test programs mutated byte- and token-wise, random token
//! soups, and random bytes; the case programs (tests/cases), mutated,
//! also go through the whole compiler, warnings and code generation
//! included. Case counts are bounded so the test runs in seconds.

use act::syntax;
use proptest::prelude::*;
use std::path::Path;
use std::sync::OnceLock;

fn valid_programs() -> &'static [String] {
    static PROGRAMS: OnceLock<Vec<String>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax/valid");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("tests/syntax/valid")
            .map(|e| e.expect("entry").path())
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("UTF-8"))
            .collect()
    })
}

/// The case programs: larger and richer than the syntax corpus (records,
/// macros, binaries, receive, try), and what newcomers copy from.
fn case_programs() -> &'static [String] {
    static PROGRAMS: OnceLock<Vec<String>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .expect("tests/cases")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "act"))
            .collect();
        paths.sort();
        paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()
    })
}

/// 300 cases per property, or `PROPTEST_CASES` for a longer hunt.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Tokens and fragments that make near-miss programs.
const PIECES: &[&str] = &[
    "main",
    "(",
    ")",
    "->",
    ".",
    ". ",
    ",",
    ";",
    "[",
    "]",
    "{",
    "}",
    "<<",
    ">>",
    "#{",
    "#",
    "=>",
    ":=",
    "|",
    "||",
    "<-",
    "<=",
    "!",
    "=",
    "+",
    "-",
    "*",
    "/",
    "==",
    "=:=",
    "++",
    "--",
    "X",
    "_",
    "Y1",
    "ok",
    "'q a'",
    "\"s\"",
    "\"",
    "'",
    "$",
    "$\\",
    "1",
    "16#ff",
    "1.5e3",
    "1_0",
    "case",
    "of",
    "end",
    "if",
    "when",
    "receive",
    "after",
    "try",
    "catch",
    "fun",
    "begin",
    "andalso",
    "orelse",
    "not",
    "bnot",
    "div",
    "rem",
    ":",
    "/",
    "-module(m).",
    "-export([f/1]).",
    "%c\n",
    "\n",
    " ",
    "?",
    "\\",
    "f/1",
    "lists:map",
];

/// Checks and renders a source text: the whole front end's path.
fn run(text: &str) {
    let diagnostics = syntax::check_source(text);
    let _ = syntax::render(&diagnostics, "fuzz.act", text);
    let _ = syntax::parse_exprs(text);
    let _ = syntax::parse_form(text);
}

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Truncate(usize),
    Insert(usize, u8),
    Swap(usize, usize),
    InsertPiece(usize, usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Insert(at, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, p)| Mutation::InsertPiece(at, p)),
        (any::<usize>(), 1usize..40).prop_map(|(at, n)| Mutation::Duplicate(at, n)),
    ]
}

fn apply(program: &str, mutations: &[Mutation]) -> String {
    let mut bytes = program.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Delete(at) if !bytes.is_empty() => {
                bytes.remove(at % bytes.len());
            }
            Mutation::Delete(_) => {}
            Mutation::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
            Mutation::Insert(at, b) => bytes.insert(at % (bytes.len() + 1), b),
            Mutation::Swap(a, b) if !bytes.is_empty() => bytes.swap(a % len, b % len),
            Mutation::Swap(..) => {}
            Mutation::InsertPiece(at, p) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, PIECES[p].bytes());
            }
            Mutation::Duplicate(at, n) if !bytes.is_empty() => {
                let at = at % bytes.len();
                let end = (at + n).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
            Mutation::Duplicate(..) => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_valid_programs_never_panic(index in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..8)) {
        let programs = valid_programs();
        let program = &programs[index % programs.len()];
        run(&apply(program, &mutations));
    }

    #[test]
    fn mutated_case_programs_compile_or_fail_cleanly(index in any::<usize>(), mutations in prop::collection::vec(mutation(), 1..4)) {
        let programs = case_programs();
        let program = &programs[index % programs.len()];
        let text = apply(program, &mutations);
        let (body, _) = syntax::script_text(&text);
        let body = body.to_string();
        syntax::with_big_stack(move || {
            let _ = act::runtime::script::compile_source(&body, "fuzz.act", "fuzz");
        });
    }

    #[test]
    fn random_token_soups_never_panic(pieces in prop::collection::vec(0..PIECES.len(), 0..60)) {
        let text: String = pieces.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
        run(&text);
        let glued: String = pieces.iter().map(|&i| PIECES[i]).collect();
        run(&glued);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        run(&String::from_utf8_lossy(&bytes));
    }
}
