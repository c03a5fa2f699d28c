//! Characters that come in from word processors and web pages (a narrow
//! no-break space, smart quotes, a dash, a zero-width space, a byte order
//! mark in the middle of a file) are named in the diagnostic, with their
//! code point, the place, a caret and what to type instead, and never
//! echoed raw when they would not show. A byte order mark at the very
//! start of a script is skipped, as escript does.

mod support;

use std::path::PathBuf;
use std::time::Duration;
use support::{Output, run_with_timeout};

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("act-hr-chars-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn run(name: &str, source: &str, args: &[&str]) -> Output {
    let dir = temp_dir();
    std::fs::write(dir.join(name), source).expect("temp file");
    let mut all: Vec<&str> = args.to_vec();
    all.push(name);
    run_with_timeout(
        support::act_binary(),
        &all,
        "",
        Some(&dir),
        Duration::from_secs(60),
    )
}

#[test]
fn hr_odd_characters_are_named_with_their_place_and_a_hint() {
    let cases = [
        (
            "nbsp.erl",
            "#!/usr/bin/env escript\nmain(_) ->\u{202F}ok.\n",
            "nbsp.erl:2:11: error: unexpected character U+202F (narrow no-break space)",
            "replace it with an ordinary space",
        ),
        (
            "zwsp.erl",
            "#!/usr/bin/env escript\nmain(_) -> ok\u{200B}.\n",
            "zwsp.erl:2:14: error: unexpected character U+200B (zero-width space)",
            "delete it",
        ),
        (
            "quotes.erl",
            "#!/usr/bin/env escript\nmain(_) -> io:format(\u{201C}hi\u{201D}).\n",
            "quotes.erl:2:22: error: unexpected character U+201C (left double quotation mark)",
            "use the ASCII \" for strings",
        ),
        (
            "single.erl",
            "#!/usr/bin/env escript\nmain(_) -> \u{2018}a\u{2019}.\n",
            "single.erl:2:12: error: unexpected character U+2018 (left single quotation mark)",
            "use the ASCII '",
        ),
        (
            "dash.erl",
            "#!/usr/bin/env escript\nmain(_) -> 3 \u{2013} 1.\n",
            "dash.erl:2:14: error: unexpected character U+2013 (en dash)",
            "use the ASCII '-'",
        ),
        (
            "emdash.erl",
            "#!/usr/bin/env escript\nmain(_) -> 3 \u{2014} 1.\n",
            "emdash.erl:2:14: error: unexpected character U+2014 (em dash)",
            "use the ASCII '-'",
        ),
        (
            "bom.erl",
            "#!/usr/bin/env escript\nmain(_) -> ok.\n\u{FEFF}f() -> ok.\n",
            "bom.erl:3:1: error: unexpected character U+FEFF (byte order mark)",
            "only at the very start of a file",
        ),
    ];
    for (name, source, first, hint) in cases {
        for args in [&[][..], &["check"][..]] {
            let out = run(name, source, args);
            assert_ne!(out.status, Some(0), "{name}: {}", out.render());
            assert!(
                out.stderr.starts_with(first),
                "{name} {args:?}: {}",
                out.stderr
            );
            assert!(out.stderr.contains("^"), "{name}: {}", out.stderr);
            assert!(
                out.stderr.contains("hint: ") && out.stderr.contains(hint),
                "{name}: {}",
                out.stderr
            );
            assert!(
                !out.stderr.contains(['\u{200B}', '\u{FEFF}']),
                "{name}: {}",
                out.stderr
            );
        }
    }
}

#[test]
fn hr_a_byte_order_mark_at_the_start_is_skipped_as_escript_does() {
    for source in [
        "\u{FEFF}#!/usr/bin/env escript\nmain(_) -> io:format(\"ok~n\").\n",
        "\u{FEFF}%% a first line, which escript skips\nmain(_) -> io:format(\"ok~n\").\n",
    ] {
        let out = run("bom_start.erl", source, &[]);
        assert_eq!(out.status, Some(0), "{}", out.render());
        assert_eq!(out.stdout, "ok\n");
    }
}

#[test]
fn hr_hidden_characters_in_the_code_frame_are_shown_as_escapes() {
    // A right-to-left override, a NUL and an ESC on the line shown: each
    // appears as an Erlang escape, the caret under the one at fault, and
    // none of them reaches the terminal raw.
    let source = "#!/usr/bin/env escript\nmain(_) -> X = \u{202E}1, \"\u{1B}[31m\", ok\0.\n";
    for args in [&[][..], &["check"][..]] {
        let out = run("hidden.erl", source, args);
        assert_ne!(out.status, Some(0), "{}", out.render());
        assert!(
            out.stderr
                .contains("2 │ main(_) -> X = \\x{202E}1, \"\\x{1B}[31m\", ok\\x{00}."),
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("                ^^^^^^^^\n"),
            "the caret covers the escape: {}",
            out.stderr
        );
        assert!(
            !out.stderr
                .contains(['\u{202E}', '\0', '\u{1B}', '\u{FFFD}']),
            "{args:?}: {}",
            out.stderr
        );
    }
}
