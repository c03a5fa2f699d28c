//! Arithmetic and term order against OTP 25: tests/printer/ops_cases.txt
//! (made by tests/printer/gen_ops.escript) holds results of every
//! operator on edge-case numbers (small/big boundaries, negative shifts,
//! float overflow) and the order of random term pairs.

#[path = "printer/reader.rs"]
mod reader;

use act::heap::Heap;
use act::term::arith::{self, ArithError, Number};
use act::term::print::write;
use act::term::{Constant, Term, compare, eq, exact_eq};
use reader::{Reader, line};
use std::cmp::Ordering;

fn parse(s: &str) -> Constant {
    Reader {
        s: s.as_bytes(),
        at: 0,
    }
    .term()
}

fn apply(heap: &Heap, op: &str, x: Term, y: Option<Term>) -> Result<Number, ArithError> {
    match (op, y) {
        ("'+'", Some(y)) => arith::add(heap, x, y),
        ("'-'", Some(y)) => arith::sub(heap, x, y),
        ("'*'", Some(y)) => arith::mul(heap, x, y),
        ("'/'", Some(y)) => arith::divide(heap, x, y),
        ("'div'", Some(y)) => arith::int_div(heap, x, y),
        ("'rem'", Some(y)) => arith::rem(heap, x, y),
        ("'band'", Some(y)) => arith::band(heap, x, y),
        ("'bor'", Some(y)) => arith::bor(heap, x, y),
        ("'bxor'", Some(y)) => arith::bxor(heap, x, y),
        ("'bsl'", Some(y)) => arith::bsl(heap, x, y),
        ("'bsr'", Some(y)) => arith::bsr(heap, x, y),
        ("'-'", None) => arith::neg(heap, x),
        ("'bnot'", None) => arith::bnot(heap, x),
        ("abs", None) => arith::abs(heap, x),
        ("float", None) => arith::float(heap, x),
        ("trunc", None) => arith::trunc(heap, x),
        ("round", None) => arith::round(heap, x),
        _ => panic!("unknown op {op}"),
    }
}

#[test]
fn arithmetic_and_order_match_otp() {
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/printer/ops_cases.txt"
    ))
    .unwrap();
    let mut at = 0;
    let (mut failures, mut checked) = (Vec::new(), 0);
    while at < data.len() {
        let header = line(&data, &mut at).to_string();
        let mut heap = Heap::new();
        let build = |heap: &mut Heap, text: &str, roots: &mut [Term]| {
            heap.build_constant(&parse(text), &mut [roots]).unwrap()
        };
        if let Some(op) = header.strip_prefix("A ") {
            let (x_text, y_text, expected) = (
                line(&data, &mut at).to_string(),
                line(&data, &mut at).to_string(),
                line(&data, &mut at).to_string(),
            );
            let mut roots = [Term::NIL, Term::NIL];
            roots[0] = build(&mut heap, &x_text, &mut roots);
            roots[1] = if y_text == "none" {
                Term::NONE
            } else {
                build(&mut heap, &y_text, &mut roots)
            };
            let y = (!roots[1].is_none()).then_some(roots[1]);
            let got = match apply(&heap, op, roots[0], y) {
                Ok(n) => {
                    heap.ensure(n.words(), &mut []).unwrap();
                    let t = heap.number(&n);
                    format!("{{ok,{}}}", write(&heap, t))
                }
                Err(ArithError::Badarith) => "{error,badarith}".into(),
                Err(ArithError::SystemLimit) => "{error,system_limit}".into(),
                Err(ArithError::Badarg) => "{error,badarg}".into(),
            };
            checked += 1;
            if got != expected {
                failures.push(format!(
                    "{op} {x_text} {y_text}: expected {expected}, got {got}"
                ));
            }
        } else {
            let x_text = header[2..].to_string();
            let (y_text, expected) = (
                line(&data, &mut at).to_string(),
                line(&data, &mut at).to_string(),
            );
            let mut roots = [Term::NIL, Term::NIL];
            roots[0] = build(&mut heap, &x_text, &mut roots);
            roots[1] = build(&mut heap, &y_text, &mut roots);
            let (x, y) = (roots[0], roots[1]);
            let got = format!(
                "{{{},{},{}}}",
                compare(&heap, x, y) == Ordering::Less,
                eq(&heap, x, y),
                exact_eq(&heap, x, y)
            );
            checked += 1;
            if got != expected {
                failures.push(format!(
                    "compare {x_text} {y_text}: expected {expected}, got {got}"
                ));
            }
        }
    }
    assert!(checked > 5000);
    if !failures.is_empty() {
        for f in failures.iter().take(30) {
            eprintln!("{f}");
        }
        panic!("{} of {checked} cases differ from OTP", failures.len());
    }
}
