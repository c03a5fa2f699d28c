//! Built-in functions of the library issue: the external term format,
//! tuple and binary helpers, time units, fun_info and memory.

use super::erlang::{make_binary, make_integer, per_second, small, system_nanos};
use super::process::services;
use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap, budget};
use crate::term::view::View;
use crate::term::{Atom, Term};
use num_bigint::BigInt;

pub fn term_to_binary_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = crate::term::etf::term_to_binary(&ctx.process.heap, args[0])
        .map_err(|_| BifError::Badarg)?;
    make_binary(ctx, bytes, args)
}

pub fn binary_to_term_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let bytes = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?;
    let (buffer, _) = crate::term::etf::decode_prefix(bytes).map_err(|_| BifError::Badarg)?;
    // Make room first (with the live registers as roots), so taking the
    // buffer in cannot collect.
    ctx.ensure(buffer.words(), args)?;
    Ok(ctx.process.heap.take_buffer(buffer))
}

/// `binary:part(Bin, Pos, Len)`; a negative `Len` counts back from `Pos`.
pub fn binary_part_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len() as i64;
    let (pos, len) = (small(args[1])?, small(args[2])?);
    let (start, end) = if len >= 0 {
        (pos, pos + len)
    } else {
        (pos + len, pos)
    };
    if start < 0 || end > size {
        return Err(BifError::Badarg);
    }
    ctx.ensure(heap::SUB_BINARY_WORDS, args)?;
    ctx.process
        .heap
        .sub_binary(args[0], start as usize, (end - start) as usize)
        .ok_or(BifError::Badarg)
}

pub fn split_binary_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let size = ctx
        .process
        .heap
        .binary_bytes(args[0])
        .ok_or(BifError::Badarg)?
        .len();
    let at = small(args[1])?;
    if at < 0 || at as usize > size {
        return Err(BifError::Badarg);
    }
    ctx.ensure(2 * heap::SUB_BINARY_WORDS + 3, args)?;
    let heap = &mut ctx.process.heap;
    let left = heap
        .sub_binary(args[0], 0, at as usize)
        .ok_or(BifError::Badarg)?;
    let right = heap
        .sub_binary(args[0], at as usize, size - at as usize)
        .ok_or(BifError::Badarg)?;
    Ok(heap.tuple(&[left, right]))
}

fn tuple_of(ctx: &Context, t: Term) -> Result<Vec<Term>, BifError> {
    Ok(ctx
        .process
        .heap
        .as_tuple(t)
        .ok_or(BifError::Badarg)?
        .to_vec())
}

pub fn append_element_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = tuple_of(ctx, args[0])?.len();
    ctx.ensure(n + 2, args)?;
    let mut elements = tuple_of(ctx, args[0])?;
    elements.push(args[1]);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn insert_element_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let n = tuple_of(ctx, args[1])?.len();
    if i < 1 || i as usize > n + 1 {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n + 2, args)?;
    let mut elements = tuple_of(ctx, args[1])?;
    elements.insert(i as usize - 1, args[2]);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn delete_element_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let i = small(args[0])?;
    let n = tuple_of(ctx, args[1])?.len();
    if i < 1 || i as usize > n {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n, args)?;
    let mut elements = tuple_of(ctx, args[1])?;
    elements.remove(i as usize - 1);
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn make_tuple_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let n = small(args[0])?;
    if !(0..=(1 << 24)).contains(&n) {
        return Err(BifError::Badarg);
    }
    ctx.ensure(n as usize + 1, args)?;
    let elements = vec![args[1]; n as usize];
    Ok(ctx.process.heap.tuple(&elements))
}

pub fn timestamp_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let micros = system_nanos() / 1000;
    let (mega, secs, micro) = (
        micros / 1_000_000_000_000,
        (micros / 1_000_000) % 1_000_000,
        micros % 1_000_000,
    );
    ctx.ensure(4, args)?;
    Ok(ctx.process.heap.tuple(&[
        Term::small(mega as i64),
        Term::small(secs as i64),
        Term::small(micro as i64),
    ]))
}

/// `erlang:convert_time_unit(Time, From, To)`, rounding down as Erlang.
pub fn convert_time_unit_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let time: BigInt = match ctx.process.heap.view(args[0]) {
        View::Small(i) => BigInt::from(i),
        View::Big(b) => b.to_bigint(),
        _ => return Err(BifError::Badarg),
    };
    let from = BigInt::from(per_second(args[1])?);
    let to = BigInt::from(per_second(args[2])?);
    let scaled = time * to;
    let result = num_integer::Integer::div_floor(&scaled, &from);
    make_integer(ctx, result, args)
}

/// What `erlang:fun_info` reports of a fun, read before anything is
/// allocated.
struct FunFacts {
    module: Atom,
    name: Atom,
    arity: u32,
    /// `None` for an external fun (`fun m:f/a`).
    local: Option<LocalFun>,
}

struct LocalFun {
    index: u32,
    /// How many variables it captured (read them again after allocating:
    /// a collection moves them).
    free: usize,
}

/// The module, name and arity of fun `f`, as `erlang:fun_info/2` names
/// them (a fun expression's name is the one its module gave it,
/// `'-main/1-fun-0-'`); `None` when `f` is not a fun.
pub fn fun_mfa(heap: &Heap, f: Term) -> Option<(Atom, Atom, u32)> {
    let facts = fun_facts(heap, f).ok()?;
    Some((facts.module, facts.name, facts.arity))
}

fn fun_facts(heap: &Heap, f: Term) -> Result<FunFacts, BifError> {
    match heap.view(f) {
        View::ExternalFun {
            module,
            function,
            arity,
        } => Ok(FunFacts {
            module,
            name: function,
            arity,
            local: None,
        }),
        View::Fun { index, captured } => {
            let entry = crate::runtime::fun_entry(index).ok_or(BifError::Badarg)?;
            let def = entry
                .module
                .funs
                .get(entry.fun as usize)
                .ok_or(BifError::Badarg)?;
            let name = entry
                .module
                .functions
                .get(def.function as usize)
                .ok_or(BifError::Badarg)?
                .name;
            Ok(FunFacts {
                module: entry.module.name,
                name,
                arity: def.arity,
                local: Some(LocalFun {
                    index: entry.fun,
                    free: captured.len(),
                }),
            })
        }
        _ => Err(BifError::Badarg),
    }
}

/// The items of `erlang:fun_info/1`, in the order it lists them.
const FUN_ITEMS: [&str; 10] = [
    "pid",
    "module",
    "new_index",
    "new_uniq",
    "index",
    "uniq",
    "name",
    "arity",
    "env",
    "type",
];

/// Heap words an item's value may take.
fn fun_item_words(facts: &FunFacts) -> usize {
    2 * facts.local.as_ref().map_or(0, |l| l.free) + heap::words_for_binary(16) + 4
}

/// One item's value of fun `f` (`undefined` where an external fun has
/// none), or `None` for an unknown item; the caller has ensured the words.
fn fun_item(ctx: &mut Context, f: Term, facts: &FunFacts, item: &str) -> Option<Term> {
    let undefined = Term::atom(Atom::intern("undefined"));
    let local = facts.local.as_ref();
    Some(match item {
        "module" => Term::atom(facts.module),
        "name" => Term::atom(facts.name),
        "arity" => Term::small(i64::from(facts.arity)),
        "env" => match ctx.process.heap.view(f) {
            View::Fun { captured, .. } => {
                let env = captured.to_vec();
                ctx.heap().list(&env)
            }
            _ => Term::NIL,
        },
        "type" => Term::atom(Atom::intern(if local.is_some() {
            "local"
        } else {
            "external"
        })),
        // act does not record which process made a fun; the caller is
        // the usual answer (a fun asked about where it was made).
        "pid" => match local {
            Some(_) => services(|s| s.self_pid()).to_term(),
            None => undefined,
        },
        "index" | "new_index" => local.map_or(undefined, |l| Term::small(i64::from(l.index))),
        // act's funs carry no hash of their module's code: zeros, as
        // the `0` in `#Fun<m.I.0>`.
        "uniq" => local.map_or(undefined, |_| Term::small(0)),
        "new_uniq" => match local {
            Some(_) => ctx.heap().binary_from_vec(vec![0; 16]),
            None => undefined,
        },
        _ => return None,
    })
}

/// `erlang:fun_info(Fun, Item)`: `{Item, Value}`.
pub fn fun_info_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let item = args[1].as_atom().ok_or(BifError::Badarg)?;
    let facts = fun_facts(&ctx.process.heap, args[0])?;
    ctx.ensure(fun_item_words(&facts) + 3, args)?;
    let value = fun_item(ctx, args[0], &facts, item.name()).ok_or(BifError::Badarg)?;
    Ok(ctx.heap().tuple(&[args[1], value]))
}

/// `erlang:fun_info(Fun)`: every item, those an external fun lacks left out.
pub fn fun_info_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let facts = fun_facts(&ctx.process.heap, args[0])?;
    ctx.ensure(FUN_ITEMS.len() * (fun_item_words(&facts) + 5), args)?;
    let undefined = Term::atom(Atom::intern("undefined"));
    let mut pairs = Vec::with_capacity(FUN_ITEMS.len());
    for item in FUN_ITEMS {
        let value = fun_item(ctx, args[0], &facts, item).expect("a known item");
        if value != undefined {
            pairs.push(ctx.heap().tuple(&[Term::atom(Atom::intern(item)), value]));
        }
    }
    Ok(ctx.heap().list(&pairs))
}

/// `erlang:memory()`: act's accounted bytes, as `[{total, N}, {processes, N}]`.
pub fn memory_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    // BEAM's keys, in its order; act counts process memory only.
    const KEYS: [&str; 9] = [
        "total",
        "processes",
        "processes_used",
        "system",
        "atom",
        "atom_used",
        "binary",
        "code",
        "ets",
    ];
    let used = Term::try_small(budget::used() as i64).unwrap_or(Term::small(0));
    ctx.ensure(5 * KEYS.len(), args)?;
    let heap = &mut ctx.process.heap;
    let pairs: Vec<Term> = KEYS
        .iter()
        .map(|&k| {
            let v = if k.starts_with("total") || k.starts_with("processes") {
                used
            } else {
                Term::small(0)
            };
            heap.tuple(&[Term::atom(Atom::intern(k)), v])
        })
        .collect();
    Ok(heap.list(&pairs))
}

pub fn memory_1(_ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match args[0].as_atom().map(Atom::name) {
        Some("total" | "processes" | "processes_used") => {
            Ok(Term::try_small(budget::used() as i64).unwrap_or(Term::small(0)))
        }
        Some("system" | "atom" | "atom_used" | "binary" | "code" | "ets") => Ok(Term::small(0)),
        _ => Err(BifError::Badarg),
    }
}
