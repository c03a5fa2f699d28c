//! Unit tests of the heap, the collector and copying.

use super::*;
use crate::term::{Constant, compare, exact_eq, literal};
use num_bigint::BigInt;

/// A list `[0, 1, ..., n-1]` of tuples `{i, float(i), <<i bytes>>}`, built
/// through `ensure` so it survives collections.
fn build_list(heap: &mut Heap, n: usize, roots: &mut [Term; 1]) {
    roots[0] = Term::NIL;
    for i in (0..n).rev() {
        let len = i % 100;
        let need = FLOAT_WORDS + words_for_binary(len) + words_for_tuple(3) + CONS_WORDS;
        heap.ensure(need, &mut [&mut roots[..]]).unwrap();
        let f = heap.float(i as f64);
        let b = heap.binary(&vec![i as u8; len]);
        let t = heap.tuple(&[Term::small(i as i64), f, b]);
        roots[0] = heap.cons(t, roots[0]);
    }
}

fn check_list(heap: &Heap, mut list: Term, n: usize) {
    for i in 0..n {
        let (head, tail) = heap.cons_parts(list);
        let elements = heap.tuple_elements(head);
        assert_eq!(elements[0].as_small(), Some(i as i64));
        assert_eq!(heap.float_value(elements[1]), Some(i as f64));
        assert_eq!(
            heap.binary_bytes(elements[2]).unwrap(),
            &vec![i as u8; i % 100][..]
        );
        list = tail;
    }
    assert!(list.is_nil());
}

#[test]
fn binaries_keep_their_bytes() {
    let mut heap = Heap::new();
    for len in 0..200usize {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
        heap.ensure(words_for_binary(len), &mut []).unwrap();
        let b = heap.binary(&bytes);
        assert_eq!(heap.binary_bytes(b).unwrap(), &bytes[..]);
        assert!(matches!(heap.view(b), View::Binary(x) if x == &bytes[..]));
    }
}

#[test]
fn sub_binaries_share_and_nest() {
    let mut heap = Heap::new();
    let bytes: Vec<u8> = (0..100).collect();
    heap.ensure(words_for_binary(100) + 2 * SUB_BINARY_WORDS, &mut [])
        .unwrap();
    let b = heap.binary(&bytes);
    let s = heap.sub_binary(b, 10, 50).unwrap();
    let s2 = heap.sub_binary(s, 5, 10).unwrap();
    assert_eq!(heap.binary_bytes(s2).unwrap(), &bytes[15..25]);
    assert!(heap.sub_binary(s, 45, 10).is_none());
    let mut roots = [s2];
    heap.collect(0, &mut [&mut roots]).unwrap();
    assert_eq!(heap.binary_bytes(roots[0]).unwrap(), &bytes[15..25]);
    assert_eq!(heap.off_heap_count(), 1);
}

#[test]
fn every_kind_reads_back() {
    let mut heap = Heap::new();
    heap.ensure(200, &mut []).unwrap();
    let t = heap.tuple(&[Term::small(1), Term::OK]);
    assert!(heap.is_tuple_of_arity(t, 2) && !heap.is_tuple_of_arity(t, 3));
    assert!(matches!(heap.view(t), View::Tuple(e) if e == [Term::small(1), Term::OK]));
    let big = BigInt::from(1) << 100;
    let b = heap.bigint(&big);
    assert_eq!(heap.to_bigint(b), Some(big.clone()));
    let nb = heap.bigint(&-big.clone());
    assert_eq!(heap.to_bigint(nb), Some(-big));
    assert!(heap.bigint(&BigInt::from(5)).is_small());
    let edge = heap.int(crate::term::SMALL_MAX + 1);
    assert_eq!(
        heap.to_bigint(edge),
        Some(BigInt::from(crate::term::SMALL_MAX) + 1)
    );
    let f = heap.fun(7, &[Term::small(3)]);
    assert!(
        matches!(heap.view(f), View::Fun { index: 7, captured } if captured == [Term::small(3)])
    );
    let e = heap.external_fun(Atom::ERLANG, Atom::OK, 2);
    assert!(matches!(
        heap.view(e),
        View::ExternalFun {
            module: Atom::ERLANG,
            function: Atom::OK,
            arity: 2
        }
    ));
    let r = heap.reference(99);
    assert!(matches!(heap.view(r), View::Ref(99)));
    let m = heap.map(&[
        (Term::small(2), Term::OK),
        (Term::small(1), Term::TRUE),
        (Term::small(2), Term::FALSE),
    ]);
    match heap.view(m) {
        View::Map { keys, values } => {
            assert_eq!(*keys, [Term::small(1), Term::small(2)]);
            assert_eq!(*values, [Term::TRUE, Term::FALSE]);
        }
        other => panic!("not a map: {other:?}"),
    }
    let tuple = heap.alloc_tuple(2);
    heap.tuple_elements_mut(tuple)[1] = Term::OK;
    assert_eq!(heap.tuple_elements(tuple), [Term::NIL, Term::OK]);
}

#[test]
fn structures_survive_many_collections() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections / grows large: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    build_list(&mut heap, 30000, &mut roots);
    assert!(heap.collections > 5, "the test should have collected");
    check_list(&heap, roots[0], 30000);
    heap.collect(0, &mut [&mut roots]).unwrap();
    check_list(&heap, roots[0], 30000);
}

#[test]
fn collecting_at_every_heap_test_keeps_data_intact() {
    let mut heap = Heap::new();
    heap.set_gc_stress(true);
    let mut roots = [Term::NIL];
    build_list(&mut heap, 400, &mut roots);
    // Every heap test but the first (which allocates the heap) collects.
    assert!(heap.collections >= 399);
    check_list(&heap, roots[0], 400);
}

#[test]
fn the_heap_shrinks_when_data_die() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections / grows large: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    build_list(&mut heap, 3000, &mut roots);
    let big = heap.capacity();
    roots[0] = Term::NIL;
    heap.collect(0, &mut [&mut roots]).unwrap();
    assert!(
        heap.capacity() < big / 4,
        "{} not < {}",
        heap.capacity(),
        big / 4
    );
}

#[test]
fn a_dead_large_binary_is_released() {
    let mut heap = Heap::new();
    heap.ensure(words_for_binary(1000) + CONS_WORDS, &mut [])
        .unwrap();
    let b = heap.binary(&[1u8; 1000]);
    let weak = Arc::downgrade(heap.shared_binary_of(b).unwrap());
    let mut roots = [heap.cons(b, Term::NIL)];
    heap.collect(0, &mut [&mut roots]).unwrap();
    assert!(weak.upgrade().is_some(), "a live binary must stay");
    roots[0] = Term::NIL;
    heap.collect(0, &mut [&mut roots]).unwrap();
    assert_eq!(heap.off_heap_count(), 0);
    assert!(weak.upgrade().is_none(), "a dead binary must be freed");
}

#[test]
fn literals_are_shared_and_never_copied() {
    let c = Constant::Tuple(vec![
        Constant::string("hello"),
        Constant::Float(1.5),
        Constant::Binary(vec![7; 300]),
        Constant::Map(vec![
            (Constant::atom("b"), Constant::int(2)),
            (Constant::atom("a"), Constant::int(1)),
        ]),
    ]);
    let lit = literal::build(&c).unwrap();
    assert!(lit.is_literal());
    let mut heap = Heap::new();
    let elements = heap.tuple_elements(lit).to_vec();
    assert!(elements[0].is_literal() && elements[0].is_cons());
    assert_eq!(heap.float_value(elements[1]), Some(1.5));
    assert_eq!(heap.binary_bytes(elements[2]).unwrap(), &[7; 300][..]);
    heap.ensure(CONS_WORDS, &mut []).unwrap();
    let mut roots = [heap.cons(lit, Term::NIL)];
    heap.collect(0, &mut [&mut roots]).unwrap();
    assert_eq!(
        heap.cons_parts(roots[0]).0,
        lit,
        "GC must not copy literals"
    );
    assert_eq!(size_of(&heap, lit), Ok(0));
    let mut other = Heap::new();
    let built = other.build_constant(&c, &mut []).unwrap();
    assert!(!built.is_literal());
    // Compare the heap copy with the literal through one heap.
    let copy = heap.copy_in(&other, built, &mut [&mut roots]).unwrap();
    assert!(exact_eq(&heap, copy, lit));
}

#[test]
fn messages_copy_out_and_in() {
    let mut sender = Heap::new();
    let mut roots = [Term::NIL];
    build_list(&mut sender, 200, &mut roots);
    let buffer = MessageBuffer::copy_from(&sender, roots[0]).unwrap();
    let mut receiver = Heap::new();
    receiver.ensure(10, &mut []).unwrap();
    let mut keep = [receiver.tuple(&[Term::OK])];
    let message = receiver.receive_buffer(buffer, &mut [&mut keep]).unwrap();
    check_list(&receiver, message, 200);
    assert_eq!(receiver.tuple_elements(keep[0]), [Term::OK]);
    let mut roots2 = [message];
    receiver.collect(0, &mut [&mut roots2]).unwrap();
    check_list(&receiver, roots2[0], 200);
    assert!(
        MessageBuffer::copy_from(&sender, Term::OK)
            .unwrap()
            .heap()
            .is_none()
    );
}

#[test]
fn deep_terms_copy_and_compare_without_recursion() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections / grows large: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    for _ in 0..200_000 {
        heap.ensure(words_for_tuple(1), &mut [&mut roots]).unwrap();
        roots[0] = heap.tuple(&[roots[0]]);
    }
    let buffer = MessageBuffer::copy_from(&heap, roots[0]).unwrap();
    let mut other = Heap::new();
    let t = other.receive_buffer(buffer, &mut []).unwrap();
    let copy = heap.copy_in(&other, t, &mut [&mut roots]).unwrap();
    assert_eq!(compare(&heap, copy, roots[0]), std::cmp::Ordering::Equal);
}

#[test]
fn absurd_sizes_fail_cleanly() {
    let mut heap = Heap::new();
    assert_eq!(heap.ensure(usize::MAX / 4, &mut []), Err(SystemLimit));
    assert_eq!(heap.ensure(1 << 50, &mut []), Err(SystemLimit));
    heap.ensure(2, &mut []).unwrap();
}

#[test]
fn map_operations_keep_keys_in_order() {
    let mut heap = Heap::new();
    heap.ensure(200, &mut []).unwrap();
    let m = heap.map(&[
        (Term::small(3), Term::OK),
        (Term::atom(Atom::ERROR), Term::TRUE),
    ]);
    let f = heap.float(3.0);
    let m2 = heap.map_put(m, f, Term::FALSE).unwrap();
    let m3 = heap.map_put(m2, Term::small(1), Term::NIL).unwrap();
    assert_eq!(heap.map_size(m3), Some(4));
    // 1 < 3 < 3.0 (integers before floats) < error
    let View::Map { keys, .. } = heap.view(m3) else {
        panic!()
    };
    assert_eq!(keys[0], Term::small(1));
    assert_eq!(keys[1], Term::small(3));
    assert_eq!(heap.float_value(keys[2]), Some(3.0));
    assert_eq!(heap.map_get(m3, f), Some(Term::FALSE));
    assert_eq!(heap.map_get(m3, Term::small(3)), Some(Term::OK));
    assert_eq!(heap.map_get(m3, Term::small(2)), None);
    let m4 = heap.map_remove(m3, Term::small(3)).unwrap();
    assert_eq!(heap.map_size(m4), Some(3));
    assert_eq!(heap.map_get(m4, Term::small(3)), None);
    assert_eq!(heap.map_remove(m4, Term::small(99)), Some(m4));
    assert_eq!(heap.map_get(Term::NIL, Term::NIL), None);
    let l = heap.list(&[Term::small(1), Term::small(2)]);
    assert_eq!(heap.list_length(l), Some(2));
    let improper = heap.cons(Term::small(1), Term::small(2));
    assert_eq!(heap.list_length(improper), None);
}

/// Large maps (trees of nodes) against a model: random puts and removes
/// with keys that need the general comparison (floats, tuples), the
/// collector run between steps, every version checked whole, and a copy
/// into another heap compared with the original.
#[test]
fn large_maps_agree_with_a_model() {
    use std::collections::BTreeMap;
    let mut heap = Heap::new();
    let mut model: BTreeMap<i64, i64> = BTreeMap::new();
    // Key i as a term: small integers, with every third one a tuple {i}
    // (tuples sort after all numbers, by their element).
    let key_order = |i: i64| if i % 3 == 0 { (1, i) } else { (0, i) };
    let mut roots = [heap.map(&[])];
    let mut seed: u64 = 12345;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as i64
    };
    for step in 0..6000 {
        let k = next() % 700;
        let remove = step > 2000 && next() % 3 == 0;
        let need = heap.words_for_map_change(roots[0]) + 2;
        heap.ensure(need, &mut [&mut roots[..]]).unwrap();
        let key = if k % 3 == 0 {
            heap.tuple(&[Term::small(k)])
        } else {
            Term::small(k)
        };
        if remove {
            roots[0] = heap.map_remove(roots[0], key).unwrap();
            model.remove(&k);
        } else {
            roots[0] = heap.map_put(roots[0], key, Term::small(step)).unwrap();
            model.insert(k, step);
        }
        assert_eq!(heap.map_size(roots[0]), Some(model.len()), "step {step}");
        let kind = heap.boxed_kind(roots[0]);
        assert_eq!(kind == Some(Kind::MapTree), model.len() > FLAT_MAX);
        if step % 97 == 0 {
            heap.collect(0, &mut [&mut roots[..]]).unwrap();
            let (keys, values) = heap.map_entries(roots[0]).unwrap();
            let mut expected: Vec<(i64, i64)> = model.iter().map(|(&k, &v)| (k, v)).collect();
            expected.sort_by_key(|&(k, _)| key_order(k));
            assert_eq!(keys.len(), expected.len());
            for (i, &(k, v)) in expected.iter().enumerate() {
                let got = match heap.as_tuple(keys[i]) {
                    Some(t) => t[0].as_small().unwrap(),
                    None => keys[i].as_small().unwrap(),
                };
                assert_eq!((got, values[i].as_small().unwrap()), (k, v), "step {step}");
                assert_eq!(heap.map_get(roots[0], keys[i]), Some(values[i]));
            }
            let copy = MessageBuffer::copy_from(&heap, roots[0]).unwrap();
            let mut other = Heap::new();
            let t = other.receive_buffer(copy, &mut []).unwrap();
            assert_eq!(other.map_size(t), Some(model.len()));
            assert_eq!(
                crate::term::order::compare_across(&heap, roots[0], &other, t, true),
                std::cmp::Ordering::Equal
            );
        }
    }
    // Built at once from the same entries: equal, though not the same shape.
    let n = heap.map_size(roots[0]).unwrap();
    heap.ensure(words_for_map(n), &mut [&mut roots[..]])
        .unwrap();
    let (keys, values) = heap.map_entries(roots[0]).unwrap();
    let pairs: Vec<(Term, Term)> = keys.into_iter().zip(values).collect();
    let rebuilt = heap.map(&pairs);
    assert!(exact_eq(&heap, rebuilt, roots[0]));
}

/// A map's words are within `words_for_map` for every size, and a tree
/// is built only above `FLAT_MAX` keys.
#[test]
fn map_words_are_bounded() {
    for n in [0, 1, 31, 32, 33, 64, 65, 1000, 1025, 40_000] {
        let mut heap = Heap::new();
        heap.ensure(words_for_map(n), &mut []).unwrap();
        let before = heap.words.len();
        let pairs: Vec<(Term, Term)> = (0..n as i64).map(|i| (Term::small(i), Term::NIL)).collect();
        let m = heap.map(&pairs);
        assert!(heap.words.len() - before <= words_for_map(n), "{n} keys");
        assert_eq!(heap.map_size(m), Some(n));
        assert_eq!(heap.boxed_kind(m) == Some(Kind::MapTree), n > FLAT_MAX);
        assert_eq!(heap.map_get(m, Term::small(n as i64 / 2)).is_some(), n > 0);
    }
}

#[test]
fn message_buffers_can_move_between_threads() {
    fn is_send<T: Send>() {}
    is_send::<MessageBuffer>();
    let mut heap = Heap::new();
    heap.ensure(words_for_binary(500) + CONS_WORDS, &mut [])
        .unwrap();
    let b = heap.binary(&[5; 500]);
    let t = heap.cons(b, Term::NIL);
    let buffer = MessageBuffer::copy_from(&heap, t).unwrap();
    let received = std::thread::spawn(move || {
        let mut other = Heap::new();
        let t = other.receive_buffer(buffer, &mut []).unwrap();
        let (head, _) = other.cons_parts(t);
        other.binary_bytes(head).unwrap().to_vec()
    })
    .join()
    .unwrap();
    assert_eq!(received, vec![5; 500]);
}

#[test]
fn a_heap_that_keeps_collecting_raises_its_floor() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections / grows large: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    for i in 0..10_000 {
        heap.ensure(words_for_tuple(2), &mut [&mut roots]).unwrap();
        roots[0] = heap.tuple(&[Term::small(i), Term::OK]);
    }
    assert!(heap.capacity() >= 200, "capacity {}", heap.capacity());
    assert!(
        heap.collections < 10_000 / 50,
        "{} collections",
        heap.collections
    );
    let mut idle = Heap::new();
    idle.set_gc_stress(false);
    assert_eq!(idle.capacity(), 0, "a new heap allocates nothing");
    idle.ensure(0, &mut []).unwrap();
    assert_eq!(idle.capacity(), 0, "nor when it needs no word");
    idle.ensure(1, &mut []).unwrap();
    assert_eq!(
        idle.capacity(),
        MIN_HEAP_WORDS,
        "its first words: the floor"
    );
    assert_eq!(idle.collections, 0, "allocating is not collecting");
}

#[test]
fn a_growing_heap_collects_into_a_space_sized_for_growth() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections / grows large: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    // A list of 100k cons cells that all stay live.
    let mut seen = 0;
    for i in 0..100_000 {
        heap.ensure(CONS_WORDS, &mut [&mut roots[..]]).unwrap();
        if heap.collections != seen {
            seen = heap.collections;
            // Right after a collection of live data the heap has room
            // for growth, not just for this allocation.
            assert!(
                heap.capacity() >= heap.used() / 2 * 3,
                "capacity {} for {} live words",
                heap.capacity(),
                heap.used()
            );
        }
        roots[0] = heap.cons(Term::small(i), roots[0]);
    }
    // Geometric growth: a logarithmic number of collections.
    assert!(heap.collections < 40, "{} collections", heap.collections);
    let mut list = roots[0];
    for i in (0..100_000).rev() {
        let (head, tail) = heap.cons_parts(list);
        assert_eq!(head.as_small(), Some(i));
        list = tail;
    }
    assert!(list.is_nil());
}

/// A message is sent as `for_send` builds it: small terms inline (no
/// heap of their own), bigger ones and ones with off-heap binaries on a
/// heap; every kind lands in the receiver as an equal term, and a copy of
/// the buffer (a signal to several processes) lands equal too.
#[test]
fn messages_for_send_inline_or_on_a_heap_land_equal() {
    let mut sender = Heap::new();
    sender.set_gc_stress(false);
    sender.ensure(400, &mut []).unwrap();
    let pid = Term::pid(7);
    let small = sender.tuple(&[Term::atom(crate::term::Atom::intern("met")), pid, Term::OK]);
    let nested = {
        let inner = sender.tuple(&[Term::small(1), Term::small(2)]);
        sender.cons(inner, Term::NIL)
    };
    let exact = {
        // 7 words: a 6-tuple.
        let e = [Term::small(1); 6];
        sender.tuple(&e)
    };
    let over = {
        let e = [Term::small(1); 7];
        sender.tuple(&e)
    };
    let shared = sender.binary(&[7u8; 200]);
    let with_binary = sender.tuple(&[shared]);
    let float = sender.float(1.5);
    let cases = [
        (small, true),
        (nested, true),
        (exact, true),
        (over, false),
        (with_binary, false),
        (float, true),
        (Term::OK, false),
    ];
    for (t, inline) in cases {
        let buffer = MessageBuffer::for_send(&sender, t).unwrap();
        let words = size_of(&sender, t).unwrap();
        assert_eq!(buffer.words(), words);
        // Only heap-backed buffers (and none for immediates) have a heap.
        assert_eq!(buffer.heap().is_some(), !inline && words > 0, "{t:?}");
        let copy = buffer.duplicate().unwrap();
        let mut receiver = Heap::new();
        receiver.set_gc_stress(false);
        let mut keep = [receiver.tuple(&[Term::OK])];
        let got = receiver.receive_buffer(buffer, &mut [&mut keep]).unwrap();
        let mut roots = [got];
        let again = receiver
            .receive_buffer(copy, &mut [&mut keep, &mut roots])
            .unwrap();
        // The receiver's heap reads both as the sender's term.
        let back = sender_view(&receiver, roots[0], &sender, t);
        assert!(back, "{t:?} landed different");
        assert!(sender_view(&receiver, again, &sender, t));
    }
}

/// Whether `got` on `receiver` equals `t` on `sender` (copied over).
fn sender_view(receiver: &Heap, got: Term, sender: &Heap, t: Term) -> bool {
    let mut both = Heap::new();
    both.set_gc_stress(false);
    let a = both.copy_in(receiver, got, &mut []).unwrap();
    let mut roots = [a];
    let b = both.copy_in(sender, t, &mut [&mut roots]).unwrap();
    exact_eq(&both, roots[0], b)
}

/// Churns `n` short-lived tuples through `ensure`, keeping `roots`.
fn churn(heap: &mut Heap, n: usize, roots: &mut [Term]) {
    for i in 0..n {
        heap.ensure(words_for_tuple(3), &mut [&mut roots[..]])
            .unwrap();
        heap.tuple(&[Term::small(i as i64), Term::OK, Term::NIL]);
    }
}

#[test]
fn minor_collections_leave_the_old_generation_in_place() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections: not under ACT_GC_STRESS
    let mut roots = [Term::NIL, Term::NIL];
    let mut list = [Term::NIL];
    build_list(&mut heap, 2000, &mut list);
    roots[0] = list[0];
    heap.collect(0, &mut [&mut roots[..]]).unwrap();
    assert!(
        heap.old_top as usize == heap.used(),
        "the survivors are old"
    );
    let (old, before) = (roots[0], heap.collections);
    // A major collection copies into a new space; minor ones keep the
    // heap's buffer (a second major would lay the list out at the same
    // offsets, so the term alone cannot tell them apart).
    let space = heap.words().as_ptr();
    // A young structure that lives across the minor collections, and
    // garbage around it.
    for i in 0..300 {
        heap.ensure(CONS_WORDS + words_for_tuple(3), &mut [&mut roots[..]])
            .unwrap();
        let t = heap.tuple(&[Term::small(i), roots[0], Term::OK]);
        roots[1] = heap.cons(t, roots[1]);
        churn(&mut heap, 1000, &mut roots);
    }
    assert!(
        heap.collections > before + 5,
        "the churn should have collected"
    );
    assert_eq!(roots[0], old, "the old list did not move");
    assert_eq!(
        heap.words().as_ptr(),
        space,
        "only minor collections ran: the heap is the same space"
    );
    check_list(&heap, roots[0], 2000);
    let mut young = roots[1];
    for i in (0..300).rev() {
        let (t, tail) = heap.cons_parts(young);
        let elements = heap.tuple_elements(t);
        assert_eq!(elements[0].as_small(), Some(i));
        assert_eq!(elements[1], old, "old terms are pointed at as they were");
        young = tail;
    }
    assert!(young.is_nil());
}

#[test]
fn minor_collections_keep_and_release_off_heap_binaries() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections: not under ACT_GC_STRESS
    let mut roots = [Term::NIL, Term::NIL];
    let mut list = [Term::NIL];
    build_list(&mut heap, 2000, &mut list);
    heap.ensure(words_for_binary(1000) + CONS_WORDS, &mut [&mut list[..]])
        .unwrap();
    let old_bin = heap.binary(&[7u8; 1000]);
    roots[0] = heap.cons(old_bin, list[0]);
    heap.collect(0, &mut [&mut roots[..]]).unwrap();
    assert!(heap.old_top > 0);
    let old_binaries = heap.off_heap_count();
    let old_weak = Arc::downgrade(heap.shared_binary_of(heap.cons_parts(roots[0]).0).unwrap());
    let mut dead = Vec::new();
    for i in 0..50u8 {
        heap.ensure(
            words_for_binary(500) * 2 + CONS_WORDS,
            &mut [&mut roots[..]],
        )
        .unwrap();
        let garbage = heap.binary(&[i; 500]);
        dead.push(Arc::downgrade(heap.shared_binary_of(garbage).unwrap()));
        let keep = heap.binary(&[i; 600]);
        roots[1] = heap.cons(keep, roots[1]);
        churn(&mut heap, 300, &mut roots);
    }
    let before = heap.collections;
    churn(&mut heap, 100_000, &mut roots);
    assert!(heap.collections > before, "collected after the last binary");
    assert!(old_weak.upgrade().is_some(), "the old binary stays");
    assert!(
        dead.iter().all(|w| w.upgrade().is_none()),
        "dead young binaries are released by minor collections"
    );
    assert_eq!(
        heap.binary_bytes(heap.cons_parts(roots[0]).0),
        Some(&[7u8; 1000][..])
    );
    check_list(&heap, heap.cons_parts(roots[0]).1, 2000);
    let mut kept = roots[1];
    for i in (0..50u8).rev() {
        let (b, tail) = heap.cons_parts(kept);
        assert_eq!(heap.binary_bytes(b), Some(&[i; 600][..]));
        kept = tail;
    }
    assert_eq!(
        heap.off_heap_count(),
        old_binaries + 50,
        "one binary per live ProcBin"
    );
}

#[test]
fn growing_data_survives_minor_collections_and_growth() {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // counts collections: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    build_list(&mut heap, 2000, &mut roots);
    heap.collect(0, &mut [&mut roots[..]]).unwrap();
    // Everything allocated from now on lives: each minor collection keeps
    // all of the young data, and the heap grows.
    let mut more = [roots[0]];
    for i in 0..20_000 {
        heap.ensure(words_for_tuple(2) + CONS_WORDS, &mut [&mut more[..]])
            .unwrap();
        let t = heap.tuple(&[Term::small(i), Term::OK]);
        more[0] = heap.cons(t, more[0]);
    }
    let mut list = more[0];
    for i in (0..20_000).rev() {
        let (t, tail) = heap.cons_parts(list);
        assert_eq!(heap.tuple_elements(t)[0].as_small(), Some(i));
        list = tail;
    }
    check_list(&heap, list, 2000);
}

#[test]
fn stress_alternates_minor_and_major_collections() {
    let mut heap = Heap::new();
    heap.set_gc_stress(true);
    let mut roots = [Term::NIL];
    build_list(&mut heap, 300, &mut roots);
    churn(&mut heap, 100, &mut roots);
    check_list(&heap, roots[0], 300);
    heap.collect(0, &mut [&mut roots[..]]).unwrap();
    assert!(
        heap.old_top > 0,
        "stress makes an old generation of any size"
    );
    check_list(&heap, roots[0], 300);
}
