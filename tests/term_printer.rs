//! The differential test of the printer: tests/printer/corpus.txt holds
//! terms printed by OTP 25 (made by tests/printer/gen.escript) with `~w`
//! and with `~p` at several columns and line lengths; act must print the
//! same bytes.

#[path = "printer/reader.rs"]
mod reader;

use act::heap::Heap;
use act::term::print;
use reader::{Reader, block, line};

#[test]
fn printer_matches_otp_on_the_corpus() {
    let data = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/printer/corpus.txt"
    ))
    .unwrap();
    let mut at = 0;
    let mut heap = Heap::new();
    let (mut checked, mut failures) = (0, Vec::new());
    let mut term = None;
    let mut source = String::new();
    while at < data.len() {
        let header = line(&data, &mut at);
        let (kind, rest) = header.split_at(1);
        let rest = rest.trim_start();
        match kind {
            "T" => {
                let mut reader = Reader {
                    s: rest.as_bytes(),
                    at: 0,
                };
                let constant = reader.term();
                heap = Heap::new();
                term = Some(heap.build_constant(&constant, &mut []).unwrap());
                source = rest.to_string();
            }
            "P" => {
                let nums: Vec<usize> = rest.split(' ').map(|n| n.parse().unwrap()).collect();
                let expected = block(&data, &mut at, nums[2]);
                let got = print::print(&heap, term.unwrap(), nums[0], nums[1]);
                checked += 1;
                if got != expected {
                    failures.push(format!(
                        "~p col {} ll {} of {source}\nexpected:\n{expected}\ngot:\n{got}\n",
                        nums[0], nums[1]
                    ));
                }
            }
            "W" => {
                let expected = block(&data, &mut at, rest.parse().unwrap());
                let got = print::write(&heap, term.unwrap());
                checked += 1;
                if got != expected {
                    failures.push(format!(
                        "~w of {source}\nexpected:\n{expected}\ngot:\n{got}\n"
                    ));
                }
            }
            "E" => {} // term_to_binary: tests/term_etf.rs
            other => panic!("bad corpus record {other}"),
        }
    }
    assert!(checked > 1000, "the corpus is too small: {checked}");
    if let Ok(path) = std::env::var("ACT_PRINTER_FAILURES") {
        std::fs::write(path, failures.join("\n=====\n")).unwrap();
    }
    if !failures.is_empty() {
        for f in failures.iter().take(8) {
            eprintln!("{f}");
        }
        panic!("{} of {checked} outputs differ from OTP", failures.len());
    }
}
