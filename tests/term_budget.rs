//! The memory budget: a request past it is `system_limit`, never an
//! abort. (Its own test binary: the budget is global to the process.)

use act::heap::{Heap, SystemLimit, budget, words_for_binary};
use act::term::Term;
use act::term::arith::{self, ArithError};

#[test]
fn growth_past_the_budget_is_system_limit_and_memory_comes_back() {
    budget::set_limit(budget::used() + (8 << 20));
    let mut heap = Heap::new();
    heap.set_gc_stress(false); // millions of heap tests: not under ACT_GC_STRESS
    let mut roots = [Term::NIL];
    // Keep everything alive until the budget says no.
    let mut failed = false;
    for _ in 0..10_000_000 {
        match heap.ensure(2, &mut [&mut roots]) {
            Ok(()) => roots[0] = heap.cons(Term::small(1), roots[0]),
            Err(SystemLimit) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "an 8 MB budget must stop a list of 10M cells");
    let before = budget::used();
    drop(heap);
    assert!(
        budget::used() < before,
        "a dropped heap gives its memory back"
    );

    // Absurd integers fail cleanly too.
    let heap = Heap::new();
    let huge = arith::bsl(&heap, Term::small(1), Term::small(1 << 40));
    assert_eq!(huge, Err(ArithError::SystemLimit));
    let big = arith::bsl(&heap, Term::small(1), Term::small(200_000_000));
    assert_eq!(
        big,
        Err(ArithError::SystemLimit),
        "25 MB of bignum is past an 8 MB budget"
    );

    // A fresh heap can still work within the budget.
    let mut heap = Heap::new();
    heap.ensure(words_for_binary(10), &mut []).unwrap();
    heap.binary(&[0; 10]);
}
