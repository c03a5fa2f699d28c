//! Deep terms print, format, compare and encode without overflowing the
//! Rust stack, even on a thread with a small (512 KB) stack.

use act::heap::{Heap, words_for_tuple};
use act::term::format::format;
use act::term::{Term, print};

fn nested(depth: usize, list: bool) -> (Heap, Term) {
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // 100k heap tests: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    for i in 0..depth {
        heap.ensure(words_for_tuple(2), &mut [&mut roots]).unwrap();
        roots[0] = if list {
            heap.cons(roots[0], Term::small(i as i64 % 3))
        } else {
            heap.tuple(&[Term::OK, roots[0]])
        };
    }
    (heap, roots[0])
}

#[test]
fn printing_deep_terms_is_safe_on_small_stacks() {
    let worker = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            for list in [false, true] {
                let (heap, t) = nested(100_000, list);
                let w = print::write(&heap, t);
                assert!(w.len() > 400_000);
                let p = print::print(&heap, t, 0, 80);
                assert!(p.len() > 400_000);
                let formatted = format(
                    &heap,
                    &"~p ~w ~P ~W".chars().collect::<Vec<_>>(),
                    &[t, t, t, Term::small(50), t, Term::small(50)],
                )
                .unwrap();
                assert!(formatted.len() > 800_000);
                assert_eq!(
                    print::write_depth(&heap, t, 3),
                    if list {
                        "[[[...]|...]|0]"
                    } else {
                        "{ok,{...}}"
                    }
                );
            }
        })
        .unwrap();
    worker.join().expect("deep printing overflowed or panicked");
}
