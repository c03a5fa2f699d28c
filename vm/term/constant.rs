//! Constants: term values described in plain Rust, before they have a home.
//!
//! The compiler describes every literal of a module (`"~p~n"`, `[1,2,3]`,
//! `{ok, 0}`) as a `Constant`; the loader builds each one once in the
//! literal area, where processes share it read-only. Tests use constants to
//! build terms without caring where they live.

use num_bigint::BigInt;

#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Integer(BigInt),
    Float(f64),
    Atom(String),
    Nil,
    /// `[a, b | Tail]`: elements and the tail (`Nil` for a proper list).
    List(Vec<Constant>, Box<Constant>),
    /// A string literal: a proper list of character codes.
    String(Vec<u32>),
    Tuple(Vec<Constant>),
    /// Keys and values in any order; duplicate keys: the last one wins.
    Map(Vec<(Constant, Constant)>),
    Binary(Vec<u8>),
}

impl Constant {
    pub fn atom(name: &str) -> Constant {
        Constant::Atom(name.to_string())
    }

    pub fn int(i: i64) -> Constant {
        Constant::Integer(BigInt::from(i))
    }

    pub fn list(elements: Vec<Constant>) -> Constant {
        Constant::List(elements, Box::new(Constant::Nil))
    }

    pub fn string(s: &str) -> Constant {
        Constant::String(s.chars().map(|c| c as u32).collect())
    }
}
