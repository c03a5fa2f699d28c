//! Property tests of the term layer: copying, collecting, encoding and
//! printing a term all give back a term `=:=` to the original.

#[path = "printer/reader.rs"]
mod reader;

use act::heap::{Heap, MessageBuffer};
use act::term::etf::{binary_to_term, term_to_binary};
use act::term::{Constant, compare, exact_eq, literal, print};
use num_bigint::BigInt;
use proptest::prelude::*;

fn leaf() -> impl Strategy<Value = Constant> {
    prop_oneof![
        any::<i64>().prop_map(Constant::int),
        (any::<i64>(), any::<u64>())
            .prop_map(|(hi, lo)| Constant::Integer((BigInt::from(hi) << 64) + lo)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Constant::Float),
        prop::sample::select(vec![
            "ok",
            "Foo",
            "hello world",
            "",
            "it's",
            "if",
            "a@b",
            "\n"
        ])
        .prop_map(Constant::atom),
        Just(Constant::Nil),
        prop::collection::vec(any::<u8>(), 0..100).prop_map(Constant::Binary),
        "[a-z \\n\"]{0,12}".prop_map(|s| Constant::string(&s)),
    ]
}

fn constant() -> impl Strategy<Value = Constant> {
    leaf().prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Constant::Tuple),
            (prop::collection::vec(inner.clone(), 0..6), inner.clone())
                .prop_map(|(items, tail)| Constant::List(items, Box::new(tail))),
            prop::collection::vec((inner.clone(), inner), 0..5).prop_map(Constant::Map),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn copies_between_heaps_are_equal(c in constant()) {
        let mut a = Heap::new();
        let t = a.build_constant(&c, &mut []).unwrap();
        let mut b = Heap::new();
        let copy = b.copy_in(&a, t, &mut []).unwrap();
        let buffer = MessageBuffer::copy_from(&b, copy).unwrap();
        let mut roots = [t];
        let back = a.receive_buffer(buffer, &mut [&mut roots]).unwrap();
        prop_assert!(exact_eq(&a, back, roots[0]));
    }

    #[test]
    fn collections_keep_terms_equal(c in constant()) {
        let mut heap = Heap::new();
        heap.set_gc_stress(true);
        let t = heap.build_constant(&c, &mut []).unwrap();
        let mut roots = [t];
        let again = heap.build_constant(&c, &mut [&mut roots]).unwrap();
        let mut both = [roots[0], again];
        heap.collect(0, &mut [&mut both]).unwrap();
        prop_assert!(exact_eq(&heap, both[0], both[1]));
        let lit = literal::build(&c).unwrap();
        prop_assert!(exact_eq(&heap, lit, both[0]));
    }

    #[test]
    fn external_format_round_trips(c in constant()) {
        let mut heap = Heap::new();
        let t = heap.build_constant(&c, &mut []).unwrap();
        let bytes = term_to_binary(&heap, t).unwrap();
        let mut roots = [t];
        let back = heap.receive_buffer(binary_to_term(&bytes).unwrap(), &mut [&mut roots]).unwrap();
        prop_assert!(exact_eq(&heap, back, roots[0]));
    }

    #[test]
    fn written_terms_read_back_equal(c in constant()) {
        let mut heap = Heap::new();
        let t = heap.build_constant(&c, &mut []).unwrap();
        let text = print::write(&heap, t);
        let reread = reader::Reader { s: text.as_bytes(), at: 0 }.term();
        let mut roots = [t];
        let back = heap.build_constant(&reread, &mut [&mut roots]).unwrap();
        prop_assert!(exact_eq(&heap, back, roots[0]), "{}", text);
    }

    #[test]
    fn order_is_antisymmetric(a in constant(), b in constant()) {
        let mut heap = Heap::new();
        let x = heap.build_constant(&a, &mut []).unwrap();
        let mut roots = [x];
        let y = heap.build_constant(&b, &mut [&mut roots]).unwrap();
        let x = roots[0];
        prop_assert_eq!(compare(&heap, x, y), compare(&heap, y, x).reverse());
        prop_assert_eq!(compare(&heap, x, x), std::cmp::Ordering::Equal);
    }

    #[test]
    fn exact_equality_agrees_with_the_exact_order(a in constant(), b in constant(), same in any::<bool>()) {
        // `exact_eq` answers lists and tuples of immediates without the
        // general walk; it must still agree with the exact term order,
        // for two different terms and for one term built twice.
        let mut heap = Heap::new();
        let x = heap.build_constant(&a, &mut []).unwrap();
        let mut roots = [x];
        let y = heap.build_constant(if same { &a } else { &b }, &mut [&mut roots]).unwrap();
        let x = roots[0];
        let lit = literal::build(if same { &a } else { &b }).unwrap();
        for other in [y, lit] {
            let ordered = act::term::order::compare_exact(&heap, x, other) == std::cmp::Ordering::Equal;
            prop_assert_eq!(exact_eq(&heap, x, other), ordered);
            prop_assert_eq!(exact_eq(&heap, other, x), ordered);
        }
    }
}
