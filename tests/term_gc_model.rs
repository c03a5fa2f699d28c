//! A model test of the collector: random programs allocate, combine,
//! slice, drop and send terms while the heap collects (sometimes at every
//! heap test); every live root must stay `=:=` to a shadow value built
//! independently.

use act::heap::{self, Heap, MessageBuffer};
use act::term::{Constant, Term, exact_eq};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// Build a fresh constant and keep it as a root.
    Build(Constant),
    /// Keep `{roots[a], roots[b]}`.
    Tuple(usize, usize),
    /// Keep `[roots[a] | roots[b]]`.
    Cons(usize, usize),
    /// Keep a slice of a binary root (if it is one).
    Slice(usize, usize, usize),
    /// Forget a root.
    Drop(usize),
    /// Send a root through a message buffer and keep the received copy.
    Send(usize),
    Collect,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        prop_oneof![
            any::<i32>().prop_map(|i| Constant::int(i as i64)),
            any::<u64>().prop_map(|i| Constant::Integer(num_bigint::BigInt::from(i) << 70)),
            (0.0f64..1e6).prop_map(Constant::Float),
            prop::collection::vec(any::<u8>(), 0..200).prop_map(Constant::Binary),
            "[a-z]{0,6}".prop_map(|s| Constant::string(&s)),
            Just(Constant::atom("x")),
        ]
        .prop_map(Op::Build),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Tuple(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Cons(a, b)),
        (any::<usize>(), 0usize..200, 0usize..200).prop_map(|(a, o, l)| Op::Slice(a, o, l)),
        any::<usize>().prop_map(Op::Drop),
        any::<usize>().prop_map(Op::Send),
        Just(Op::Collect),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_programs_keep_their_data(ops in prop::collection::vec(op(), 1..120), stress in any::<bool>()) {
        let mut heap = Heap::new();
        heap.set_gc_stress(stress);
        let mut roots: Vec<Term> = Vec::new();
        let mut shadow: Vec<Constant> = Vec::new();
        for op in ops {
            let n = roots.len();
            match op {
                Op::Build(c) => {
                    let t = heap.build_constant(&c, &mut [&mut roots]).unwrap();
                    roots.push(t);
                    shadow.push(c);
                }
                Op::Tuple(a, b) if n > 0 => {
                    heap.ensure(heap::words_for_tuple(2), &mut [&mut roots]).unwrap();
                    let t = heap.tuple(&[roots[a % n], roots[b % n]]);
                    roots.push(t);
                    shadow.push(Constant::Tuple(vec![shadow[a % n].clone(), shadow[b % n].clone()]));
                }
                Op::Cons(a, b) if n > 0 => {
                    heap.ensure(heap::CONS_WORDS, &mut [&mut roots]).unwrap();
                    let t = heap.cons(roots[a % n], roots[b % n]);
                    roots.push(t);
                    shadow.push(Constant::List(vec![shadow[a % n].clone()], Box::new(shadow[b % n].clone())));
                }
                Op::Slice(a, offset, len) if n > 0 => {
                    if let Constant::Binary(bytes) = &shadow[a % n]
                        && offset + len <= bytes.len()
                    {
                        let slice = bytes[offset..offset + len].to_vec();
                        heap.ensure(heap::SUB_BINARY_WORDS, &mut [&mut roots]).unwrap();
                        let t = heap.sub_binary(roots[a % n], offset, len).unwrap();
                        roots.push(t);
                        shadow.push(Constant::Binary(slice));
                    }
                }
                Op::Drop(a) if n > 0 => {
                    roots.swap_remove(a % n);
                    shadow.swap_remove(a % n);
                }
                Op::Send(a) if n > 0 => {
                    let buffer = MessageBuffer::copy_from(&heap, roots[a % n]).unwrap();
                    let t = heap.receive_buffer(buffer, &mut [&mut roots]).unwrap();
                    roots.push(t);
                    shadow.push(shadow[a % n].clone());
                }
                Op::Collect => heap.collect(0, &mut [&mut roots]).unwrap(),
                _ => {}
            }
        }
        heap.collect(0, &mut [&mut roots]).unwrap();
        for (i, c) in shadow.iter().enumerate() {
            let expected = heap.build_constant(c, &mut [&mut roots]).unwrap();
            prop_assert!(exact_eq(&heap, roots[i], expected), "{c:?}");
        }
    }
}
