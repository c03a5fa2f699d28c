//! Process identifiers: a slot in the process table and that slot's
//! generation, packed into the 61 bits a `Term::pid` carries.

use crate::term::Term;

/// Bits of a pid that name the table slot; the rest above are its generation.
pub const SLOT_BITS: u32 = 32;
/// Generations wrap within this many bits (61 - 32): a slot would have to be
/// reused 2^29 times before an old pid could name a new process.
pub const GENERATION_BITS: u32 = 61 - SLOT_BITS;

/// A process identifier. `Copy`, hashable, and convertible to and from the
/// `Term` word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pid(u64);

impl Pid {
    pub(crate) fn new(slot: u32, generation: u32) -> Pid {
        let generation = u64::from(generation) & ((1 << GENERATION_BITS) - 1);
        Pid((generation << SLOT_BITS) | u64::from(slot))
    }

    /// The table slot this pid names.
    pub fn slot(self) -> u32 {
        self.0 as u32
    }

    /// The generation of the slot when this pid was made.
    pub fn generation(self) -> u32 {
        (self.0 >> SLOT_BITS) as u32
    }

    /// The 61-bit identity, as stored in a `Term::pid`.
    pub fn id(self) -> u64 {
        self.0
    }

    /// A pid from a 61-bit identity (as a `Term::pid` carries it).
    pub fn from_id(id: u64) -> Pid {
        Pid(id & ((1 << 61) - 1))
    }

    pub fn to_term(self) -> Term {
        Term::pid(self.0)
    }

    pub fn from_term(t: Term) -> Option<Pid> {
        t.as_pid().map(Pid::from_id)
    }
}

impl std::fmt::Debug for Pid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}.{}>", self.slot(), self.generation())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_pid_round_trips_through_a_term() {
        let p = Pid::new(123_456, 789);
        assert_eq!(Pid::from_term(p.to_term()), Some(p));
        assert_eq!((p.slot(), p.generation()), (123_456, 789));
    }

    #[test]
    fn generations_wrap_inside_61_bits() {
        let p = Pid::new(u32::MAX, u32::MAX);
        assert!(p.id() < 1 << 61);
        assert_eq!(Pid::from_term(p.to_term()), Some(p));
    }
}
