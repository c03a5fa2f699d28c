//! The link set and the monitor tables of a process: one small table type.
//!
//! Most processes hold a few links and monitors, some (a supervisor, the
//! root of a spawn tree, a process that monitors every worker) hold
//! hundreds of thousands. Each set is a small vector while it is small,
//! whose linear scans beat any tree, and becomes an ordered tree when it
//! grows past `SMALL`, so that adding, finding and removing one entry stay
//! O(log n) and a process linked to a million others does not turn every
//! signal into a million-step scan.
//!
//! Both shapes iterate in a fixed order (insertion order while small,
//! pid or reference order once large), never in a hash order, so
//! `--deterministic` runs stay the same from run to run.

use std::collections::BTreeMap;

use crate::sched::Pid;

/// Entries kept in a vector before the table becomes a tree.
const SMALL: usize = 16;

/// A small table keyed by `K`: a vector while it holds up to `SMALL`
/// entries, an ordered tree beyond.
#[derive(Debug)]
pub enum Table<K, V> {
    Few(Vec<(K, V)>),
    Many(BTreeMap<K, V>),
}

/// The processes linked to one process.
pub type LinkSet = Table<Pid, ()>;

/// Monitors keyed by their reference: the ones a process holds
/// (reference -> target) or the ones held on it (reference -> watcher).
pub type MonitorTable = Table<u64, Pid>;

impl<K, V> Default for Table<K, V> {
    fn default() -> Self {
        Table::Few(Vec::new())
    }
}

impl<K: Ord + Copy, V: Copy> Table<K, V> {
    pub fn contains(&self, key: K) -> bool {
        match self {
            Table::Few(v) => v.iter().any(|&(k, _)| k == key),
            Table::Many(m) => m.contains_key(&key),
        }
    }

    /// Adds `key -> value`; false (and no change) if `key` is there.
    pub fn insert(&mut self, key: K, value: V) -> bool {
        match self {
            Table::Few(_) if self.contains(key) => false,
            Table::Few(v) if v.len() < SMALL => {
                v.push((key, value));
                true
            }
            Table::Few(v) => {
                let mut map: BTreeMap<K, V> = v.drain(..).collect();
                map.insert(key, value);
                *self = Table::Many(map);
                true
            }
            Table::Many(m) => {
                if m.contains_key(&key) {
                    return false;
                }
                m.insert(key, value);
                true
            }
        }
    }

    /// Removes `key`, giving its value.
    pub fn remove(&mut self, key: K) -> Option<V> {
        match self {
            Table::Few(v) => {
                let i = v.iter().position(|&(k, _)| k == key)?;
                Some(v.remove(i).1)
            }
            Table::Many(m) => m.remove(&key),
        }
    }

    pub fn iter(&self) -> Box<dyn Iterator<Item = (K, V)> + '_> {
        match self {
            Table::Few(v) => Box::new(v.iter().copied()),
            Table::Many(m) => Box::new(m.iter().map(|(&k, &v)| (k, v))),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Table::Few(v) => v.len(),
            Table::Many(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held outside the table itself (estimated for the tree, whose
    /// nodes hold up to 11 entries plus about 56 bytes of links).
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(K, V)>();
        match self {
            Table::Few(v) => v.capacity() * entry,
            Table::Many(m) => m.len().div_ceil(11) * (11 * entry + 56),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(n: u64) -> Pid {
        Pid::from_id(n)
    }

    #[test]
    fn a_link_set_keeps_each_pid_once_across_the_change_of_shape() {
        let mut set = LinkSet::default();
        for n in 0..100 {
            assert!(set.insert(pid(n), ()));
            assert!(!set.insert(pid(n), ()), "second insert of {n}");
        }
        assert!(matches!(set, Table::Many(_)));
        assert_eq!(set.len(), 100);
        assert!(set.contains(pid(42)));
        assert!(set.remove(pid(42)).is_some());
        assert!(set.remove(pid(42)).is_none());
        assert!(!set.contains(pid(42)));
        assert_eq!(set.iter().count(), 99);
    }

    #[test]
    fn a_small_link_set_iterates_in_insertion_order() {
        let mut set = LinkSet::default();
        for n in [5, 3, 9] {
            set.insert(pid(n), ());
        }
        set.remove(pid(3));
        let order: Vec<Pid> = set.iter().map(|(p, ())| p).collect();
        assert_eq!(order, vec![pid(5), pid(9)]);
    }

    #[test]
    fn a_monitor_table_finds_each_reference_in_both_shapes() {
        let mut table = MonitorTable::default();
        for r in 0..50 {
            table.insert(r, pid(r + 1000));
            if r == 5 {
                assert!(matches!(table, Table::Few(_)));
            }
        }
        assert!(matches!(table, Table::Many(_)));
        assert_eq!(table.remove(7), Some(pid(1007)));
        assert_eq!(table.remove(7), None);
        assert_eq!(table.len(), 49);
        assert!(table.iter().all(|(r, p)| p == pid(r + 1000)));
    }
}
