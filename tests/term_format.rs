//! The format engine against OTP: tests/printer/format_cases.txt holds
//! io_lib:format calls and their results (made by
//! tests/printer/gen_format.escript), including the calls OTP rejects.

#[path = "printer/reader.rs"]
mod reader;

use act::heap::Heap;
use act::term::Constant;
use act::term::format::{FormatError, format_term};
use reader::{Reader, block, line};

#[test]
fn format_matches_otp_on_the_cases() {
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/printer/format_cases.txt"
    ))
    .unwrap();
    let mut at = 0;
    let (mut checked, mut failures) = (0, Vec::new());
    while at < data.len() {
        let fmt_text = line(&data, &mut at)[2..].to_string();
        let args_text = line(&data, &mut at)[2..].to_string();
        let result = line(&data, &mut at);
        let expected = if result == "E" {
            Err(FormatError)
        } else {
            Ok(block(&data, &mut at, result[2..].parse().unwrap()).to_string())
        };
        let parse = |s: &str| {
            Reader {
                s: s.as_bytes(),
                at: 0,
            }
            .term()
        };
        let (fmt, args): (Constant, Constant) = (parse(&fmt_text), parse(&args_text));
        let mut heap = Heap::new();
        let fmt = heap.build_constant(&fmt, &mut []).unwrap();
        let mut roots = [fmt];
        let args = heap.build_constant(&args, &mut [&mut roots]).unwrap();
        let got = format_term(&heap, roots[0], args);
        checked += 1;
        if got != expected {
            let fmt_chars: String = fmt_text
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .filter_map(|n| n.parse::<u32>().ok().and_then(char::from_u32))
                .collect();
            failures.push(format!(
                "{fmt_chars:?} {args_text}: expected {expected:?}, got {got:?}"
            ));
        }
    }
    assert!(checked > 500, "too few cases: {checked}");
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("{f}");
        }
        panic!(
            "{} of {checked} format calls differ from OTP",
            failures.len()
        );
    }
}

mod fuzz {
    use act::heap::Heap;
    use act::term::Constant;
    use act::term::format::format;
    use proptest::prelude::*;

    fn arg() -> impl Strategy<Value = Constant> {
        prop_oneof![
            any::<i64>().prop_map(Constant::int),
            (-3i64..40).prop_map(Constant::int),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Constant::Float),
            "[a-z~]{0,5}".prop_map(|s| Constant::string(&s)),
            Just(Constant::atom("x")),
            prop::collection::vec(any::<u8>(), 0..8).prop_map(Constant::Binary),
            prop::collection::vec((0i64..300).prop_map(Constant::int), 0..6)
                .prop_map(Constant::Tuple),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any directive soup with any arguments is formatted or refused
        /// (badarg), never a panic or a hang.
        #[test]
        fn any_format_call_returns(fmt in "([~.*0-9pwsPWcefgbBxX#+intl a-]|~~){0,12}", args in prop::collection::vec(arg(), 0..5)) {
            let mut heap = Heap::new();
            let mut terms = Vec::new();
            for a in &args {
                let t = heap.build_constant(a, &mut [&mut terms]).unwrap();
                terms.push(t);
            }
            let chars: Vec<char> = fmt.chars().collect();
            let _ = format(&heap, &chars, &terms);
        }
    }

    #[test]
    fn absurd_fields_are_refused_not_allocated() {
        let mut heap = Heap::new();
        let t = heap
            .build_constant(&Constant::int(1 << 40), &mut [])
            .unwrap();
        for fmt in ["~*c", "~.*f", "~*w", "~999999999999999999999c"] {
            let chars: Vec<char> = fmt.chars().collect();
            let args = if fmt.contains('*') {
                vec![t, act::term::Term::small(97)]
            } else {
                vec![act::term::Term::small(97)]
            };
            assert!(format(&heap, &chars, &args).is_err(), "{fmt}");
        }
    }
}
