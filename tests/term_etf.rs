//! term_to_binary and binary_to_term against OTP 25: every term of the
//! printer corpus carries the bytes OTP's term_to_binary made for it.

#[path = "printer/reader.rs"]
mod reader;

use act::heap::Heap;
use act::term::etf::{EtfError, binary_to_term, term_to_binary};
use act::term::{Constant, Term, exact_eq};
use reader::{Reader, block, line};

fn parse(s: &str) -> Constant {
    Reader {
        s: s.as_bytes(),
        at: 0,
    }
    .term()
}

#[test]
fn encoding_matches_otp_and_decoding_round_trips() {
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/printer/corpus.txt"
    ))
    .unwrap();
    let mut at = 0;
    let mut heap = Heap::new();
    let mut term = Term::NIL;
    let mut checked = 0;
    while at < data.len() {
        let header = line(&data, &mut at);
        let (kind, rest) = header.split_at(1);
        let rest = rest.trim_start();
        match kind {
            "T" => {
                heap = Heap::new();
                term = heap.build_constant(&parse(rest), &mut []).unwrap();
            }
            "P" => {
                block(
                    &data,
                    &mut at,
                    rest.split(' ').nth(2).unwrap().parse().unwrap(),
                );
            }
            "W" => {
                block(&data, &mut at, rest.parse().unwrap());
            }
            "E" => {
                let Constant::List(bytes, _) = parse(rest) else {
                    panic!("bad E record")
                };
                let expected: Vec<u8> = bytes
                    .into_iter()
                    .map(|b| match b {
                        Constant::Integer(i) => u8::try_from(&i).unwrap(),
                        _ => panic!("bad byte"),
                    })
                    .collect();
                let got = term_to_binary(&heap, term).unwrap();
                assert_eq!(
                    got,
                    expected,
                    "term_to_binary of {}",
                    act::term::print::write(&heap, term)
                );
                let buffer = binary_to_term(&expected).unwrap();
                let mut roots = [term];
                let back = heap.receive_buffer(buffer, &mut [&mut roots]).unwrap();
                term = roots[0];
                assert!(
                    exact_eq(&heap, back, term),
                    "binary_to_term of {}",
                    act::term::print::write(&heap, term)
                );
                checked += 1;
            }
            other => panic!("bad corpus record {other}"),
        }
    }
    assert!(checked > 1000);
}

#[test]
fn bad_external_terms_are_badarg_not_panics() {
    let cases: &[&[u8]] = &[
        &[],
        &[130, 97, 1],
        &[131],
        &[131, 97],
        &[131, 104, 2, 97, 1],
        &[131, 108, 255, 255, 255, 255, 97, 1],
        &[131, 105, 255, 255, 255, 255],
        &[131, 116, 0, 0, 0, 9, 97, 1],
        &[131, 109, 255, 255, 255, 255, 1],
        &[131, 97, 1, 2],
        &[131, 70, 127, 240, 0, 0, 0, 0, 0, 0],
        &[131, 200],
    ];
    for case in cases {
        assert_eq!(
            binary_to_term(case).err(),
            Some(EtfError::Badarg),
            "{case:?}"
        );
    }
}

#[test]
fn deep_terms_encode_and_decode_without_recursion() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // 100k heap tests: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    for _ in 0..100_000 {
        heap.ensure(2, &mut [&mut roots]).unwrap();
        roots[0] = heap.tuple(&[roots[0]]);
    }
    let bytes = term_to_binary(&heap, roots[0]).unwrap();
    let back = heap
        .receive_buffer(binary_to_term(&bytes).unwrap(), &mut [&mut roots])
        .unwrap();
    assert!(exact_eq(&heap, back, roots[0]));
}

#[test]
fn a_large_binary_decodes_off_the_heap_without_a_huge_reservation() {
    let mut heap = Heap::new();
    heap.ensure(act::heap::words_for_binary(10 << 20), &mut [])
        .unwrap();
    let big = heap.binary(&vec![7u8; 10 << 20]);
    let bytes = term_to_binary(&heap, big).unwrap();
    let buffer = binary_to_term(&bytes).unwrap();
    assert!(
        buffer.words() <= 4,
        "{} words for a 10 MB binary",
        buffer.words()
    );
    let back = heap.receive_buffer(buffer, &mut []).unwrap();
    assert_eq!(heap.binary_bytes(back).unwrap().len(), 10 << 20);
}
