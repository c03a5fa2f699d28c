//! The link set and the monitor tables of a process.
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

use std::collections::{BTreeMap, BTreeSet};

use crate::sched::Pid;

/// Entries kept in a vector before the set becomes a tree.
const SMALL: usize = 16;

/// The processes linked to one process.
#[derive(Debug)]
pub enum LinkSet {
    Few(Vec<Pid>),
    Many(BTreeSet<Pid>),
}

impl Default for LinkSet {
    fn default() -> LinkSet {
        LinkSet::Few(Vec::new())
    }
}

impl LinkSet {
    pub fn contains(&self, pid: Pid) -> bool {
        match self {
            LinkSet::Few(v) => v.contains(&pid),
            LinkSet::Many(s) => s.contains(&pid),
        }
    }

    /// Adds `pid`; false if it was already there.
    pub fn insert(&mut self, pid: Pid) -> bool {
        match self {
            LinkSet::Few(v) if v.contains(&pid) => false,
            LinkSet::Few(v) if v.len() < SMALL => {
                v.push(pid);
                true
            }
            LinkSet::Few(v) => {
                let mut set: BTreeSet<Pid> = v.drain(..).collect();
                set.insert(pid);
                *self = LinkSet::Many(set);
                true
            }
            LinkSet::Many(s) => s.insert(pid),
        }
    }

    /// Removes `pid`; false if it was not there.
    pub fn remove(&mut self, pid: Pid) -> bool {
        match self {
            LinkSet::Few(v) => match v.iter().position(|&p| p == pid) {
                Some(i) => {
                    v.remove(i);
                    true
                }
                None => false,
            },
            LinkSet::Many(s) => s.remove(&pid),
        }
    }

    pub fn iter(&self) -> Box<dyn Iterator<Item = Pid> + '_> {
        match self {
            LinkSet::Few(v) => Box::new(v.iter().copied()),
            LinkSet::Many(s) => Box::new(s.iter().copied()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            LinkSet::Few(v) => v.len(),
            LinkSet::Many(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held outside the set itself (an estimate for the tree: its
    /// nodes hold up to 11 eight-byte keys).
    pub fn heap_bytes(&self) -> usize {
        match self {
            LinkSet::Few(v) => v.capacity() * 8,
            LinkSet::Many(s) => s.len().div_ceil(11) * 192,
        }
    }
}

/// Monitors keyed by their reference: the ones a process holds
/// (reference -> target) or the ones held on it (reference -> watcher).
#[derive(Debug)]
pub enum MonitorTable {
    Few(Vec<(u64, Pid)>),
    Many(BTreeMap<u64, Pid>),
}

impl Default for MonitorTable {
    fn default() -> MonitorTable {
        MonitorTable::Few(Vec::new())
    }
}

impl MonitorTable {
    /// Adds a monitor; references are unique, so this never replaces one.
    pub fn insert(&mut self, reference: u64, pid: Pid) {
        match self {
            MonitorTable::Few(v) if v.len() < SMALL => v.push((reference, pid)),
            MonitorTable::Few(v) => {
                let mut map: BTreeMap<u64, Pid> = v.drain(..).collect();
                map.insert(reference, pid);
                *self = MonitorTable::Many(map);
            }
            MonitorTable::Many(m) => {
                m.insert(reference, pid);
            }
        }
    }

    /// Removes the monitor `reference`, giving its process.
    pub fn remove(&mut self, reference: u64) -> Option<Pid> {
        match self {
            MonitorTable::Few(v) => {
                let i = v.iter().position(|&(r, _)| r == reference)?;
                Some(v.remove(i).1)
            }
            MonitorTable::Many(m) => m.remove(&reference),
        }
    }

    pub fn iter(&self) -> Box<dyn Iterator<Item = (u64, Pid)> + '_> {
        match self {
            MonitorTable::Few(v) => Box::new(v.iter().copied()),
            MonitorTable::Many(m) => Box::new(m.iter().map(|(&r, &p)| (r, p))),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            MonitorTable::Few(v) => v.len(),
            MonitorTable::Many(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held outside the table itself (estimated for the tree).
    pub fn heap_bytes(&self) -> usize {
        match self {
            MonitorTable::Few(v) => v.capacity() * 16,
            MonitorTable::Many(m) => m.len().div_ceil(11) * 288,
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
            assert!(set.insert(pid(n)));
            assert!(!set.insert(pid(n)), "second insert of {n}");
        }
        assert!(matches!(set, LinkSet::Many(_)));
        assert_eq!(set.len(), 100);
        assert!(set.contains(pid(42)));
        assert!(set.remove(pid(42)));
        assert!(!set.remove(pid(42)));
        assert!(!set.contains(pid(42)));
        assert_eq!(set.iter().count(), 99);
    }

    #[test]
    fn a_small_link_set_iterates_in_insertion_order() {
        let mut set = LinkSet::default();
        for n in [5, 3, 9] {
            set.insert(pid(n));
        }
        set.remove(pid(3));
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![pid(5), pid(9)]);
    }

    #[test]
    fn a_monitor_table_finds_each_reference_in_both_shapes() {
        let mut table = MonitorTable::default();
        for r in 0..50 {
            table.insert(r, pid(r + 1000));
            if r == 5 {
                assert!(matches!(table, MonitorTable::Few(_)));
            }
        }
        assert!(matches!(table, MonitorTable::Many(_)));
        assert_eq!(table.remove(7), Some(pid(1007)));
        assert_eq!(table.remove(7), None);
        assert_eq!(table.len(), 49);
        assert!(table.iter().all(|(r, p)| p == pid(r + 1000)));
    }
}
