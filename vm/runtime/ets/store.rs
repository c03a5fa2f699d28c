//! The storage of one ets table: its objects, each a self-contained copy
//! (a `MessageBuffer`) owned by the table, never pointing into a process
//! heap.
//!
//! - `set`, `bag`, `duplicate_bag`: a slab of slots, one per key, found
//!   through a map from the key's hash (`hash::hash`, for `=:=`) to the
//!   slots with that hash. A slot holds the key's one object (`set`) or
//!   its objects in insertion order (bags). Iteration (`first`/`next`,
//!   `tab2list`, `select`) goes in slot order, which stays the same while
//!   the table is not written.
//! - `ordered_set`: a B-tree of objects ordered by their keys in Erlang
//!   term order, where `1` and `1.0` are the same key (`==`).
//!
//! Keys are compared across heaps (`order::compare_across`): a probe
//! key on the caller's heap against an object on its own.

use super::hash;
use crate::heap::{Heap, MessageBuffer};
use crate::term::Term;
use crate::term::order::compare_across;
use crate::term::prehashed::PrehashedMap;
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::OnceLock;

/// The table types.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Set,
    OrderedSet,
    Bag,
    DuplicateBag,
}

/// The heap a buffer's term is read through: its own, or (for an
/// immediate or literal object) an empty one, as literals need none.
pub fn heap_of(object: &MessageBuffer) -> &Heap {
    static EMPTY: OnceLock<Heap> = OnceLock::new();
    match object.heap() {
        Some(h) => h,
        None => EMPTY.get_or_init(Heap::new),
    }
}

/// The key of a stored object (always a tuple with at least `keypos`
/// elements: inserts check).
#[inline]
pub fn key_of(object: &MessageBuffer, keypos: usize) -> Term {
    heap_of(object).tuple_elements(object.term())[keypos - 1]
}

/// `next`/`prev` on a hash table given a key it does not hold.
#[derive(Debug)]
pub struct NotInTable;

/// Slots whose keys share one hash (almost always exactly one).
enum Chain {
    One(u32),
    Many(Vec<u32>),
}

impl Chain {
    fn slots(&self) -> &[u32] {
        match self {
            Chain::One(s) => std::slice::from_ref(s),
            Chain::Many(v) => v,
        }
    }
}

/// The objects of one key in a hash table.
enum Objects {
    /// A free slot.
    Free,
    One(MessageBuffer),
    Many(Vec<MessageBuffer>),
}

impl Objects {
    fn as_slice(&self) -> &[MessageBuffer] {
        match self {
            Objects::Free => &[],
            Objects::One(o) => std::slice::from_ref(o),
            Objects::Many(v) => v,
        }
    }
}

struct Slot {
    hash: u64,
    /// The key when it is an immediate (`Term::NONE` otherwise): most
    /// keys are, and then a lookup compares it here without reading the
    /// object (one cache miss fewer).
    key: Term,
    objects: Objects,
}

pub struct HashStore {
    kind: Kind,
    keypos: usize,
    index: PrehashedMap<Chain>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    objects: usize,
}

/// An object of an ordered table, ordered by its key.
struct Entry {
    /// Boxed: B-tree nodes then hold small entries, and a search over
    /// small-integer keys reads only the nodes.
    object: Box<MessageBuffer>,
    keypos: u32,
    /// The key when it is a small integer (`Term::NONE` otherwise): two
    /// such keys compare without reading the objects.
    small: Term,
}

impl Entry {
    fn new(object: MessageBuffer, keypos: u32) -> Entry {
        let key = key_of(&object, keypos as usize);
        Entry {
            object: Box::new(object),
            keypos,
            small: if key.is_small() { key } else { Term::NONE },
        }
    }
}

/// Something with a key on some heap: a stored entry or a probe.
trait Keyed {
    fn key(&self) -> (&Heap, Term);
    /// The key if it is a small integer, else `Term::NONE`.
    fn small(&self) -> Term;
}

impl Keyed for Entry {
    fn key(&self) -> (&Heap, Term) {
        (
            heap_of(&self.object),
            key_of(&self.object, self.keypos as usize),
        )
    }
    #[inline]
    fn small(&self) -> Term {
        self.small
    }
}

/// A key on a process heap, looked up in an ordered table.
struct Probe<'a> {
    heap: &'a Heap,
    key: Term,
}

impl Keyed for Probe<'_> {
    fn key(&self) -> (&Heap, Term) {
        (self.heap, self.key)
    }
    #[inline]
    fn small(&self) -> Term {
        if self.key.is_small() {
            self.key
        } else {
            Term::NONE
        }
    }
}

#[inline]
fn order(a: &dyn Keyed, b: &dyn Keyed) -> Ordering {
    if let (Some(x), Some(y)) = (a.small().as_small(), b.small().as_small()) {
        return x.cmp(&y);
    }
    let ((ha, ka), (hb, kb)) = (a.key(), b.key());
    compare_across(ha, ka, hb, kb, false)
}

impl<'a> PartialEq for dyn Keyed + 'a {
    fn eq(&self, other: &Self) -> bool {
        order(self, other) == Ordering::Equal
    }
}
impl<'a> Eq for dyn Keyed + 'a {}
impl<'a> PartialOrd for dyn Keyed + 'a {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<'a> Ord for dyn Keyed + 'a {
    fn cmp(&self, other: &Self) -> Ordering {
        order(self, other)
    }
}
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        order(self, other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        order(self, other)
    }
}
impl<'a> Borrow<dyn Keyed + 'a> for Entry {
    fn borrow(&self) -> &(dyn Keyed + 'a) {
        self
    }
}

pub struct OrderedStore {
    keypos: u32,
    tree: BTreeSet<Entry>,
}

/// A table's objects.
pub enum Store {
    Hash(HashStore),
    Ordered(OrderedStore),
}

/// Where an iteration stands: a slot of a hash table, or (ordered) the
/// key's own place.
impl Store {
    pub fn new(kind: Kind, keypos: usize) -> Store {
        match kind {
            Kind::OrderedSet => Store::Ordered(OrderedStore {
                keypos: keypos as u32,
                tree: BTreeSet::new(),
            }),
            _ => Store::Hash(HashStore {
                kind,
                keypos,
                index: PrehashedMap::default(),
                slots: Vec::new(),
                free: Vec::new(),
                objects: 0,
            }),
        }
    }

    /// Objects in the table.
    pub fn len(&self) -> usize {
        match self {
            Store::Hash(h) => h.objects,
            Store::Ordered(o) => o.tree.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the objects take (for `info(T, memory)`).
    pub fn words(&self) -> usize {
        let per_object = std::mem::size_of::<Slot>() / 8 + 1;
        self.iter().map(|o| o.words() + per_object).sum::<usize>()
    }

    /// The objects with key `key` (on `heap`).
    pub fn lookup(&self, heap: &Heap, key: Term) -> &[MessageBuffer] {
        match self {
            Store::Hash(h) => match h.find(heap, key, hash::hash(heap, key)) {
                Some(slot) => h.slots[slot as usize].objects.as_slice(),
                None => &[],
            },
            Store::Ordered(o) => {
                let probe = Probe { heap, key };
                match o.tree.get(&probe as &dyn Keyed) {
                    Some(e) => std::slice::from_ref(&*e.object),
                    None => &[],
                }
            }
        }
    }

    /// The one object with key `key` of a `set` table, to change in
    /// place (`None` for other kinds: an ordered set's objects sit in a
    /// tree that gives no mutable access, and a bag has several).
    pub fn lookup_set_mut(&mut self, heap: &Heap, key: Term) -> Option<&mut MessageBuffer> {
        match self {
            Store::Hash(h) if h.kind == Kind::Set => {
                let slot = h.find(heap, key, hash::hash(heap, key))?;
                match &mut h.slots[slot as usize].objects {
                    Objects::One(o) => Some(o),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Adds an object (a tuple of at least keypos elements): a set
    /// replaces the object with its key, a bag adds it unless an equal
    /// object is there, a duplicate bag always adds it.
    pub fn insert(&mut self, object: MessageBuffer) {
        match self {
            Store::Hash(h) => h.insert(object),
            Store::Ordered(o) => {
                o.tree.replace(Entry::new(object, o.keypos));
            }
        }
    }

    /// Removes and returns the objects with key `key`.
    pub fn remove(&mut self, heap: &Heap, key: Term) -> Vec<MessageBuffer> {
        match self {
            Store::Hash(h) => h.remove(heap, key),
            Store::Ordered(o) => {
                let probe = Probe { heap, key };
                match o.tree.take(&probe as &dyn Keyed) {
                    Some(e) => vec![*e.object],
                    None => Vec::new(),
                }
            }
        }
    }

    /// Removes the objects that are `=:=` to `object` (on `heap`).
    pub fn remove_object(&mut self, heap: &Heap, object: Term, key: Term) {
        let same = |o: &MessageBuffer| {
            compare_across(heap, object, heap_of(o), o.term(), true) == Ordering::Equal
        };
        match self {
            Store::Hash(h) => {
                let Some(slot) = h.find(heap, key, hash::hash(heap, key)) else {
                    return;
                };
                h.retain_in_slot(slot, |o| !same(o));
            }
            Store::Ordered(o) => {
                let probe = Probe { heap, key };
                if o.tree
                    .get(&probe as &dyn Keyed)
                    .is_some_and(|e| same(&e.object))
                {
                    o.tree.remove(&probe as &dyn Keyed);
                }
            }
        }
    }

    /// Keeps only the objects `keep` says yes to.
    pub fn retain(&mut self, mut keep: impl FnMut(&MessageBuffer) -> bool) {
        match self {
            Store::Hash(h) => {
                for slot in 0..h.slots.len() as u32 {
                    if !matches!(h.slots[slot as usize].objects, Objects::Free) {
                        h.retain_in_slot(slot, &mut keep);
                    }
                }
            }
            Store::Ordered(o) => o.tree.retain(|e| keep(&e.object)),
        }
    }

    pub fn clear(&mut self) {
        match self {
            Store::Hash(h) => {
                h.index.clear();
                h.slots.clear();
                h.free.clear();
                h.objects = 0;
            }
            Store::Ordered(o) => o.tree.clear(),
        }
    }

    /// Every object, in the table's order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = &MessageBuffer> + '_> {
        match self {
            Store::Hash(h) => Box::new(h.slots.iter().flat_map(|s| s.objects.as_slice())),
            Store::Ordered(o) => Box::new(o.tree.iter().map(|e| &*e.object)),
        }
    }

    /// Every object, last first.
    pub fn iter_rev(&self) -> Box<dyn Iterator<Item = &MessageBuffer> + '_> {
        match self {
            Store::Hash(h) => Box::new(h.slots.iter().rev().flat_map(|s| s.objects.as_slice())),
            Store::Ordered(o) => Box::new(o.tree.iter().rev().map(|e| &*e.object)),
        }
    }

    /// An object of the first (or last) key, to read the key from.
    pub fn first(&self, last: bool) -> Option<&MessageBuffer> {
        match self {
            Store::Hash(h) => {
                let used = |s: &&Slot| !matches!(s.objects, Objects::Free);
                let slot = if last {
                    h.slots.iter().rev().find(used)
                } else {
                    h.slots.iter().find(used)
                };
                slot.map(|s| &s.objects.as_slice()[0])
            }
            Store::Ordered(o) => {
                let e = if last { o.tree.last() } else { o.tree.first() };
                e.map(|e| &*e.object)
            }
        }
    }

    /// An object of the key after (or before) `key`. `Err` when a hash
    /// table does not hold `key` (OTP's badarg); an ordered table finds
    /// the neighbour of any key.
    pub fn next(
        &self,
        heap: &Heap,
        key: Term,
        back: bool,
    ) -> Result<Option<&MessageBuffer>, NotInTable> {
        match self {
            Store::Hash(h) => {
                let slot = h.find(heap, key, hash::hash(heap, key)).ok_or(NotInTable)? as usize;
                let used = |s: &&Slot| !matches!(s.objects, Objects::Free);
                let found = if back {
                    h.slots[..slot].iter().rev().find(used)
                } else {
                    h.slots[slot + 1..].iter().find(used)
                };
                Ok(found.map(|s| &s.objects.as_slice()[0]))
            }
            Store::Ordered(o) => {
                let probe = Probe { heap, key };
                let probe = &probe as &dyn Keyed;
                let e = if back {
                    o.tree
                        .range::<dyn Keyed, _>((Bound::Unbounded, Bound::Excluded(probe)))
                        .next_back()
                } else {
                    o.tree
                        .range::<dyn Keyed, _>((Bound::Excluded(probe), Bound::Unbounded))
                        .next()
                };
                Ok(e.map(|e| &*e.object))
            }
        }
    }

    /// The objects from the key after `key` on (all of them for `None`),
    /// in order: where a `select/3` continuation resumes.
    pub fn iter_after(
        &self,
        heap: &Heap,
        key: Option<Term>,
    ) -> Box<dyn Iterator<Item = &MessageBuffer> + '_> {
        let Some(key) = key else {
            return self.iter();
        };
        match self {
            Store::Hash(h) => match h.find(heap, key, hash::hash(heap, key)) {
                Some(slot) => Box::new(
                    h.slots[slot as usize + 1..]
                        .iter()
                        .flat_map(|s| s.objects.as_slice()),
                ),
                None => Box::new(std::iter::empty()),
            },
            Store::Ordered(o) => {
                let probe = Probe { heap, key };
                Box::new(
                    o.tree
                        .range::<dyn Keyed, _>((
                            Bound::Excluded(&probe as &dyn Keyed),
                            Bound::Unbounded,
                        ))
                        .map(|e| &*e.object),
                )
            }
        }
    }
}

impl HashStore {
    /// The slot of `key`, compared with `=:=`.
    #[inline]
    fn find(&self, heap: &Heap, key: Term, hash: u64) -> Option<u32> {
        let chain = self.index.get(&hash)?;
        // Immediates are canonical: one is never `=:=` to a boxed term.
        if key.is_immediate() {
            return chain
                .slots()
                .iter()
                .copied()
                .find(|&slot| self.slots[slot as usize].key == key);
        }
        chain.slots().iter().copied().find(|&slot| {
            let s = &self.slots[slot as usize];
            let o = &s.objects.as_slice()[0];
            let k = key_of(o, self.keypos);
            !k.is_immediate() && compare_across(heap, key, heap_of(o), k, true) == Ordering::Equal
        })
    }

    fn insert(&mut self, object: MessageBuffer) {
        let oh = heap_of(&object);
        let key = key_of(&object, self.keypos);
        let hash = hash::hash(oh, key);
        if let Some(slot) = self.find(oh, key, hash) {
            let objects = &mut self.slots[slot as usize].objects;
            match self.kind {
                Kind::Set => *objects = Objects::One(object),
                Kind::Bag => {
                    let dup = objects.as_slice().iter().any(|o| {
                        compare_across(oh, object.term(), heap_of(o), o.term(), true)
                            == Ordering::Equal
                    });
                    if !dup {
                        push(objects, object);
                        self.objects += 1;
                    }
                }
                _ => {
                    push(objects, object);
                    self.objects += 1;
                }
            }
            return;
        }
        let slot = Slot {
            hash,
            key: if key.is_immediate() { key } else { Term::NONE },
            objects: Objects::One(object),
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.slots[at as usize] = slot;
                at
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.objects += 1;
        match self.index.entry(hash) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Chain::One(at));
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let chain = o.get_mut();
                let mut slots = chain.slots().to_vec();
                slots.push(at);
                *chain = Chain::Many(slots);
            }
        }
    }

    fn remove(&mut self, heap: &Heap, key: Term) -> Vec<MessageBuffer> {
        let Some(slot) = self.find(heap, key, hash::hash(heap, key)) else {
            return Vec::new();
        };
        self.free_slot(slot)
    }

    /// Empties a slot and gives back its objects.
    fn free_slot(&mut self, slot: u32) -> Vec<MessageBuffer> {
        let s = &mut self.slots[slot as usize];
        let objects = std::mem::replace(&mut s.objects, Objects::Free);
        let hash = s.hash;
        if let std::collections::hash_map::Entry::Occupied(mut o) = self.index.entry(hash) {
            let rest: Vec<u32> = o
                .get()
                .slots()
                .iter()
                .copied()
                .filter(|&x| x != slot)
                .collect();
            match rest.len() {
                0 => {
                    o.remove();
                }
                1 => *o.get_mut() = Chain::One(rest[0]),
                _ => *o.get_mut() = Chain::Many(rest),
            }
        }
        // Trailing free slots are dropped, so a table emptied from the end
        // shrinks; others wait on the free list.
        if slot as usize == self.slots.len() - 1 {
            self.slots.pop();
            while self
                .slots
                .last()
                .is_some_and(|s| matches!(s.objects, Objects::Free))
            {
                self.slots.pop();
            }
            let len = self.slots.len() as u32;
            self.free.retain(|&f| f < len);
        } else {
            self.free.push(slot);
        }
        let objects = match objects {
            Objects::Free => Vec::new(),
            Objects::One(o) => vec![o],
            Objects::Many(v) => v,
        };
        self.objects -= objects.len();
        objects
    }

    fn retain_in_slot(&mut self, slot: u32, mut keep: impl FnMut(&MessageBuffer) -> bool) {
        let objects = &mut self.slots[slot as usize].objects;
        let before = objects.as_slice().len();
        match objects {
            Objects::Free => return,
            Objects::One(o) => {
                if !keep(o) {
                    self.free_slot(slot);
                }
                return;
            }
            Objects::Many(v) => v.retain(|o| keep(o)),
        }
        let after = objects.as_slice().len();
        if after == 0 {
            *objects = Objects::Many(Vec::new());
            self.objects -= before;
            self.free_slot(slot);
            return;
        }
        self.objects -= before - after;
    }
}

fn push(objects: &mut Objects, object: MessageBuffer) {
    match std::mem::replace(objects, Objects::Free) {
        Objects::Free => *objects = Objects::One(object),
        Objects::One(first) => *objects = Objects::Many(vec![first, object]),
        Objects::Many(mut v) => {
            v.push(object);
            *objects = Objects::Many(v);
        }
    }
}
