//! Hash maps keyed by a term's hash (ets tables, the process dictionary's
//! index): the key already is a hash, so the map's hasher passes it
//! through instead of hashing it again (SipHash, the default, would only
//! cost time on every lookup).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from a term hash to `V`.
pub type PrehashedMap<V> = HashMap<u64, V, BuildHasherDefault<PassThrough>>;

/// The hasher of `PrehashedMap`: a `u64` key is its own hash.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}
