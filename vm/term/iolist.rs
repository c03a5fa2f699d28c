//! iolists: deep lists of bytes and binaries (`iolist_to_binary`,
//! `list_to_binary`, `iolist_size`), walked with an explicit stack.

use super::Term;
use super::view::View;
use crate::heap::Heap;

/// The bytes of an iolist (a binary, or a possibly deep, possibly
/// binary-tailed list of bytes and iolists); `None` if `t` is not one
/// (the BIF raises `badarg`).
pub fn iolist_bytes(heap: &Heap, t: Term) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    walk(heap, t, |chunk| out.extend_from_slice(chunk))?;
    Some(out)
}

/// Why `iolist_bytes_within` gave up.
#[derive(Debug, PartialEq, Eq)]
pub enum TooBig {
    NotIolist,
    /// The bytes would pass what `room` allows.
    SystemLimit,
}

/// `iolist_bytes`, asking `room(n)` before the buffer grows to `n` bytes
/// (the memory budget): a huge iolist fails before its bytes exist.
pub fn iolist_bytes_within(
    heap: &Heap,
    t: Term,
    room: impl Fn(usize) -> bool,
) -> Result<Vec<u8>, TooBig> {
    let mut out: Vec<u8> = Vec::new();
    let mut refused = false;
    let walked = walk(heap, t, |chunk| {
        if refused {
            return;
        }
        let need = out.len() + chunk.len();
        if need > out.capacity() {
            let grown = need.max(out.capacity().saturating_mul(2));
            if !room(grown) || out.try_reserve_exact(grown - out.len()).is_err() {
                refused = true;
                return;
            }
        }
        out.extend_from_slice(chunk);
    });
    match (walked, refused) {
        (_, true) => Err(TooBig::SystemLimit),
        (None, false) => Err(TooBig::NotIolist),
        (Some(()), false) => Ok(out),
    }
}

/// `iolist_size(T)`, or `None` if `t` is not an iolist.
pub fn iolist_size(heap: &Heap, t: Term) -> Option<usize> {
    let mut size = 0usize;
    walk(heap, t, |chunk| size += chunk.len())?;
    Some(size)
}

fn walk(heap: &Heap, t: Term, mut emit: impl FnMut(&[u8])) -> Option<()> {
    if let View::Binary(bytes) = heap.view(t) {
        emit(bytes);
        return Some(());
    }
    // Pending list tails, innermost last.
    let mut stack = vec![t];
    while let Some(t) = stack.pop() {
        match heap.view(t) {
            View::Nil => {}
            View::Binary(bytes) => emit(bytes),
            View::Cons(head, tail) => {
                stack.push(tail);
                match heap.view(head) {
                    View::Small(b) => emit(&[u8::try_from(b).ok()?]),
                    View::Binary(bytes) => emit(bytes),
                    View::Cons(..) | View::Nil => stack.push(head),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::Constant;

    #[test]
    fn deep_lists_of_bytes_and_binaries_flatten_in_order() {
        let mut heap = Heap::new();
        let c = Constant::List(
            vec![
                Constant::int(1),
                Constant::list(vec![
                    Constant::Binary(vec![2, 3]),
                    Constant::Nil,
                    Constant::int(4),
                ]),
            ],
            Box::new(Constant::Binary(vec![5])),
        );
        let t = heap.build_constant(&c, &mut []).unwrap();
        assert_eq!(iolist_bytes(&heap, t), Some(vec![1, 2, 3, 4, 5]));
        assert_eq!(iolist_size(&heap, t), Some(5));
        let bad = heap
            .build_constant(&Constant::list(vec![Constant::int(256)]), &mut [])
            .unwrap();
        assert_eq!(iolist_bytes(&heap, bad), None);
        let atom = heap
            .build_constant(&Constant::list(vec![Constant::atom("a")]), &mut [])
            .unwrap();
        assert_eq!(iolist_size(&heap, atom), None);
        assert_eq!(iolist_bytes(&heap, Term::small(1)), None);
    }
}
