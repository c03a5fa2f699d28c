//! Maps on the heap: their two layouts and every operation that builds or
//! reads one.
//!
//! A map of at most `FLAT_MAX` keys is one object (`Kind::Map`): its keys
//! in term order (`=:=`), then its values. A larger map is a `Kind::MapTree`
//! object (its key count and a root node) over a persistent B-tree of
//! `Kind::MapNode` objects: a node holds a level (0 for a leaf), up to
//! `NODE_MAX` keys in term order, and as many values (a leaf) or child
//! nodes (a branch, whose key `i` is the smallest key under child `i`).
//! An update copies the nodes on the path from the root to the leaf it
//! changes and shares the rest, so `put`, `remove` and `get` on a map of
//! `n` keys cost O(log n) (a flat copy of every key is what OTP avoids
//! with its hash tries above 32 keys, and what made large maps quadratic
//! here before).
//!
//! Invariants:
//! - Keys are unique (`=:=`) and strictly increasing in term order, in a
//!   flat map, within a node, and from leaf to leaf left to right.
//! - Every node holds at least one entry and at most `NODE_MAX`.
//! - A tree holds more than `FLAT_MAX` keys and a flat map at most
//!   `FLAT_MAX`: equal maps have the same kind (not the same shape), so
//!   comparisons go through the entries (`map_entries`), never the nodes.
//! - Nodes are never terms: only `MapTree` points at a root and a branch
//!   at its children. All their words are terms, so the collector and the
//!   copier treat them as tuples (`object::term_fields`).
//!
//! Every builder here allocates without a collection: the caller ensures
//! the words first (`words_for_map`, `Heap::words_for_map_change`).

use super::Heap;
use crate::term::object::{Kind, header, header_size};
use crate::term::order::compare_exact;
use crate::term::{TAG_BOXED, Term};
use std::cmp::Ordering;

/// The most keys a flat map holds (OTP's flatmaps hold as many).
pub const FLAT_MAX: usize = 32;
/// The most entries a tree node holds.
const NODE_MAX: usize = 32;

/// Most keys `search` scans for an atom before it searches by order.
const SCAN_KEYS: usize = 32;
/// Words of the biggest node: header, level, keys and values.
const NODE_WORDS: usize = 2 + 2 * NODE_MAX;

/// Words a map of `size` keys needs at most, built by `Heap::map` or
/// `Heap::map_sorted`.
pub const fn words_for_map(size: usize) -> usize {
    if size <= FLAT_MAX {
        return 2 * size + 1;
    }
    // Each level: a header and a level word per node, two words per entry.
    let mut words = 3;
    let mut entries = size;
    loop {
        let nodes = entries.div_ceil(NODE_MAX);
        words += 2 * nodes + 2 * entries;
        if nodes == 1 {
            return words;
        }
        entries = nodes;
    }
}

/// What a change below a node left in its place.
enum Changed {
    /// The key was not there (a removal): nothing changed.
    Same,
    /// The node's last entry went (a removal).
    Empty,
    /// One new node.
    One(Term),
    /// The node split in two (an insertion).
    Two(Term, Term),
}

impl Heap {
    /// The root object of a map: `Kind::Map` or `Kind::MapTree`.
    #[inline]
    fn map_kind(&self, map: Term) -> Option<Kind> {
        match self.boxed_kind(map) {
            Some(k @ (Kind::Map | Kind::MapTree)) => Some(k),
            _ => None,
        }
    }

    /// A node's level, keys, and values or children.
    fn node(&self, node: Term) -> (i64, &[Term], &[Term]) {
        let words = self.object(node);
        let size = header_size(words[0]);
        let level = words[1].as_small().unwrap_or(0);
        let (keys, xs) = words[2..1 + size].split_at((size - 1) / 2);
        (level, keys, xs)
    }

    fn search(&self, keys: &[Term], key: Term) -> Result<usize, usize> {
        // An atom is `=:=` only to the very same word: a scan finds it
        // without ordering atoms by name (integers order cheaply, so
        // they are searched by order). Only a key that is absent needs
        // its place in the order.
        if key.is_atom()
            && keys.len() <= SCAN_KEYS
            && let Some(i) = keys.iter().position(|&k| k == key)
        {
            return Ok(i);
        }
        keys.binary_search_by(|&k| compare_exact(self, k, key))
    }

    /// The child of a branch whose keys are `keys` that holds `key` if
    /// any does.
    fn child_for(&self, keys: &[Term], key: Term) -> usize {
        match self.search(keys, key) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Number of keys of a map, or `None` if `map` is not a map.
    pub fn map_size(&self, map: Term) -> Option<usize> {
        match self.map_kind(map)? {
            Kind::Map => Some(header_size(self.object(map)[0]) / 2),
            _ => self.object(map)[1].as_small().map(|n| n as usize),
        }
    }

    /// The value under `key` in `map` (`=:=` on keys), or `None`.
    pub fn map_get(&self, map: Term, key: Term) -> Option<Term> {
        match self.map_kind(map)? {
            Kind::Map => {
                let words = self.object(map);
                let n = header_size(words[0]) / 2;
                let (keys, values) = (&words[1..1 + n], &words[1 + n..1 + 2 * n]);
                self.search(keys, key).ok().map(|i| values[i])
            }
            _ => {
                let mut node = self.object(map)[2];
                loop {
                    let (level, keys, xs) = self.node(node);
                    if level == 0 {
                        return self.search(keys, key).ok().map(|i| xs[i]);
                    }
                    node = xs[self.child_for(keys, key)];
                }
            }
        }
    }

    /// Calls `f` on every key and value of `map` in term order of the
    /// keys; `false` if `map` is not a map.
    pub fn map_each(&self, map: Term, f: &mut dyn FnMut(Term, Term)) -> bool {
        match self.map_kind(map) {
            Some(Kind::Map) => {
                let words = self.object(map);
                let n = header_size(words[0]) / 2;
                for i in 0..n {
                    f(words[1 + i], words[1 + n + i]);
                }
                true
            }
            Some(_) => {
                self.node_each(self.object(map)[2], f);
                true
            }
            None => false,
        }
    }

    fn node_each(&self, node: Term, f: &mut dyn FnMut(Term, Term)) {
        let (level, keys, xs) = self.node(node);
        if level == 0 {
            for (&k, &v) in keys.iter().zip(xs) {
                f(k, v);
            }
        } else {
            for &child in xs {
                self.node_each(child, f);
            }
        }
    }

    /// The keys and the values of `map` in term order of the keys, or
    /// `None` if `map` is not a map.
    pub fn map_entries(&self, map: Term) -> Option<(Vec<Term>, Vec<Term>)> {
        let n = self.map_size(map)?;
        let (mut keys, mut values) = (Vec::with_capacity(n), Vec::with_capacity(n));
        self.map_each(map, &mut |k, v| {
            keys.push(k);
            values.push(v);
        });
        Some((keys, values))
    }

    /// Words one `map_put` or `map_remove` on `map` may need.
    pub fn words_for_map_change(&self, map: Term) -> usize {
        match self.map_kind(map) {
            Some(Kind::MapTree) => {
                let (level, ..) = self.node(self.object(map)[2]);
                // Two nodes a level (a split), a new root, the tree object.
                (level as usize + 2) * 2 * (NODE_WORDS + 2) + 3
            }
            Some(_) => words_for_map(self.map_size(map).unwrap_or(0) + 1),
            None => 0,
        }
    }

    /// A map of `pairs` in any order; of equal keys (`=:=`) the last wins.
    /// Needs `words_for_map(pairs.len())` (an upper bound).
    pub fn map(&mut self, pairs: &[(Term, Term)]) -> Term {
        let mut sorted: Vec<(Term, Term)> = pairs.to_vec();
        // Stable, so among equal keys the later pair stays later.
        sorted.sort_by(|a, b| compare_exact(self, a.0, b.0));
        let mut keys: Vec<Term> = Vec::with_capacity(sorted.len());
        let mut values: Vec<Term> = Vec::with_capacity(sorted.len());
        for (k, v) in sorted {
            match keys.last() {
                Some(&last) if compare_exact(self, last, k) == Ordering::Equal => {
                    *values.last_mut().expect("as many values as keys") = v;
                }
                _ => {
                    keys.push(k);
                    values.push(v);
                }
            }
        }
        self.map_sorted(&keys, &values)
    }

    /// A map from keys already in strict term order and their values.
    /// Needs `words_for_map(keys.len())`.
    pub fn map_sorted(&mut self, keys: &[Term], values: &[Term]) -> Term {
        debug_assert_eq!(keys.len(), values.len());
        if keys.len() <= FLAT_MAX {
            let at = self.alloc(&[header(Kind::Map, 2 * keys.len())]);
            self.words.extend_from_slice(keys);
            self.words.extend_from_slice(values);
            return Term::heap_pointer(TAG_BOXED, at);
        }
        // Level by level: as few nodes as hold the entries, filled evenly.
        let total = keys.len();
        let mut keys = keys.to_vec();
        let mut xs = values.to_vec();
        let mut level = 0;
        loop {
            let count = keys.len().div_ceil(NODE_MAX);
            let (mut up_keys, mut up_nodes) = (Vec::with_capacity(count), Vec::new());
            let mut start = 0;
            for i in 0..count {
                let end = keys.len() * (i + 1) / count;
                up_keys.push(keys[start]);
                up_nodes.push(self.new_node(level, &keys[start..end], &xs[start..end]));
                start = end;
            }
            if count == 1 {
                return self.tree(Term::small(total as i64), up_nodes[0]);
            }
            keys = up_keys;
            xs = up_nodes;
            level += 1;
        }
    }

    fn new_node(&mut self, level: i64, keys: &[Term], xs: &[Term]) -> Term {
        debug_assert!(!keys.is_empty() && keys.len() <= NODE_MAX && keys.len() == xs.len());
        let at = self.alloc(&[
            header(Kind::MapNode, 1 + 2 * keys.len()),
            Term::small(level),
        ]);
        self.words.extend_from_slice(keys);
        self.words.extend_from_slice(xs);
        Term::heap_pointer(TAG_BOXED, at)
    }

    fn tree(&mut self, size: Term, root: Term) -> Term {
        let at = self.alloc(&[header(Kind::MapTree, 2), size, root]);
        Term::heap_pointer(TAG_BOXED, at)
    }

    /// `Map#{Key => Value}`: a new map (needs `words_for_map_change(map)`).
    /// `None` if `map` is not a map.
    pub fn map_put(&mut self, map: Term, key: Term, value: Term) -> Option<Term> {
        match self.map_kind(map)? {
            Kind::Map => {
                let words = self.object(map);
                let n = header_size(words[0]) / 2;
                let found = self.search(&words[1..1 + n], key);
                if let Err(i) = found
                    && n == FLAT_MAX
                {
                    // The 33rd key: the map becomes a tree.
                    let (mut keys, mut values) = self.map_entries(map)?;
                    keys.insert(i, key);
                    values.insert(i, value);
                    return Some(self.map_sorted(&keys, &values));
                }
                // A flat copy straight from the old map, the entry put in
                // on the way (no intermediate vectors).
                Some(match found {
                    Ok(i) => {
                        let at = self.alloc(&[header(Kind::Map, 2 * n)]);
                        self.extend_from_object(map, 1..1 + 2 * n);
                        self.words[at + 1 + n + i] = value;
                        Term::heap_pointer(TAG_BOXED, at)
                    }
                    Err(i) => {
                        let at = self.alloc(&[header(Kind::Map, 2 * (n + 1))]);
                        self.extend_from_object(map, 1..1 + i);
                        self.words.push(key);
                        self.extend_from_object(map, 1 + i..1 + n + i);
                        self.words.push(value);
                        self.extend_from_object(map, 1 + n + i..1 + 2 * n);
                        Term::heap_pointer(TAG_BOXED, at)
                    }
                })
            }
            _ => {
                let words = self.object(map);
                let (size, root) = (words[1].as_small().unwrap_or(0), words[2]);
                let (level, ..) = self.node(root);
                let (changed, added) = self.put_node(root, key, value);
                let size = Term::small(size + added as i64);
                let root = match changed {
                    Changed::Two(a, b) => {
                        let ka = self.first_key(a);
                        let kb = self.first_key(b);
                        self.new_node(level + 1, &[ka, kb], &[a, b])
                    }
                    Changed::One(n) => n,
                    Changed::Same | Changed::Empty => root,
                };
                Some(self.tree(size, root))
            }
        }
    }

    fn first_key(&self, node: Term) -> Term {
        self.node(node).1[0]
    }

    /// Puts `key` under `node`; says whether the key is new.
    fn put_node(&mut self, node: Term, key: Term, value: Term) -> (Changed, bool) {
        // The node's entries, with room for one more, on the machine
        // stack (a put adds at most one entry to each node on its path).
        let mut key_buf = [Term::NIL; NODE_MAX + 1];
        let mut x_buf = [Term::NIL; NODE_MAX + 1];
        let (level, old_keys, old_xs) = self.node(node);
        let mut len = old_keys.len();
        key_buf[..len].copy_from_slice(old_keys);
        x_buf[..len].copy_from_slice(old_xs);
        let added;
        if level == 0 {
            match self.search(&key_buf[..len], key) {
                Ok(i) => {
                    x_buf[i] = value;
                    added = false;
                }
                Err(i) => {
                    insert_at(&mut key_buf, len, i, key);
                    insert_at(&mut x_buf, len, i, value);
                    len += 1;
                    added = true;
                }
            }
        } else {
            let i = self.child_for(&key_buf[..len], key);
            let (changed, new) = self.put_node(x_buf[i], key, value);
            added = new;
            match changed {
                Changed::One(n) => {
                    x_buf[i] = n;
                    key_buf[i] = self.first_key(n);
                }
                Changed::Two(a, b) => {
                    x_buf[i] = a;
                    key_buf[i] = self.first_key(a);
                    insert_at(&mut key_buf, len, i + 1, self.first_key(b));
                    insert_at(&mut x_buf, len, i + 1, b);
                    len += 1;
                }
                Changed::Same | Changed::Empty => unreachable!("a put changes its node"),
            }
        }
        let (keys, xs) = (&key_buf[..len], &x_buf[..len]);
        if keys.len() <= NODE_MAX {
            return (Changed::One(self.new_node(level, keys, xs)), added);
        }
        // A node filled at its end (keys put in ascending order) keeps
        // its old entries whole; any other splits in half.
        let at = if compare_exact(self, keys[NODE_MAX], key) == Ordering::Equal {
            NODE_MAX
        } else {
            keys.len() / 2
        };
        let a = self.new_node(level, &keys[..at], &xs[..at]);
        let b = self.new_node(level, &keys[at..], &xs[at..]);
        (Changed::Two(a, b), added)
    }

    /// `maps:remove(Key, Map)`: a new map without `key` (needs
    /// `words_for_map_change(map)`), or `map` itself if the key is absent.
    /// `None` if `map` is not a map.
    pub fn map_remove(&mut self, map: Term, key: Term) -> Option<Term> {
        match self.map_kind(map)? {
            Kind::Map => {
                let (mut keys, mut values) = self.map_entries(map)?;
                let Ok(i) = self.search(&keys, key) else {
                    return Some(map);
                };
                keys.remove(i);
                values.remove(i);
                Some(self.map_sorted(&keys, &values))
            }
            _ => {
                let words = self.object(map);
                let (size, root) = (words[1].as_small().unwrap_or(0) as usize, words[2]);
                if size - 1 <= FLAT_MAX {
                    // Back to the flat layout: the entries but `key`.
                    let (mut keys, mut values) = self.map_entries(map)?;
                    let Ok(i) = self.search(&keys, key) else {
                        return Some(map);
                    };
                    keys.remove(i);
                    values.remove(i);
                    return Some(self.map_sorted(&keys, &values));
                }
                match self.remove_node(root, key) {
                    Changed::Same => Some(map),
                    Changed::One(mut root) => {
                        // A root of one child is that child.
                        loop {
                            let (level, _, xs) = self.node(root);
                            if level == 0 || xs.len() > 1 {
                                break;
                            }
                            root = xs[0];
                        }
                        Some(self.tree(Term::small(size as i64 - 1), root))
                    }
                    Changed::Empty | Changed::Two(..) => unreachable!("a tree keeps entries"),
                }
            }
        }
    }

    fn remove_node(&mut self, node: Term, key: Term) -> Changed {
        let (level, keys, xs) = self.node(node);
        if level == 0 {
            let Ok(i) = self.search(keys, key) else {
                return Changed::Same;
            };
            if keys.len() == 1 {
                return Changed::Empty;
            }
            let (mut keys, mut xs) = (keys.to_vec(), xs.to_vec());
            keys.remove(i);
            xs.remove(i);
            return Changed::One(self.new_node(0, &keys, &xs));
        }
        if self.search(keys, key) == Err(0) {
            return Changed::Same;
        }
        let i = self.child_for(keys, key);
        let child = xs[i];
        let (mut keys, mut xs) = (keys.to_vec(), xs.to_vec());
        match self.remove_node(child, key) {
            Changed::Same => return Changed::Same,
            Changed::Empty if keys.len() == 1 => return Changed::Empty,
            Changed::Empty => {
                keys.remove(i);
                xs.remove(i);
            }
            Changed::One(n) => {
                xs[i] = n;
                keys[i] = self.first_key(n);
            }
            Changed::Two(..) => unreachable!("a removal does not split"),
        }
        Changed::One(self.new_node(level, &keys, &xs))
    }
}

/// Puts `t` at `i` of the first `len` entries of `buf`, moving the rest up
/// (`buf` has room for one more).
fn insert_at(buf: &mut [Term], len: usize, i: usize, t: Term) {
    buf.copy_within(i..len, i + 1);
    buf[i] = t;
}
