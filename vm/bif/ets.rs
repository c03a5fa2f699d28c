//! The `ets` BIFs: argument checks and copying terms into and out of
//! tables; the tables themselves are `runtime::ets`.
//!
//! Errors are OTP 25's: `badarg` for a missing table, a table the caller
//! may not read or write, an object that is not a tuple of at least
//! `keypos` elements, a bad option, each with the `cause` BEAM puts in
//! the error_info (`id`, `access`, `badkey`, `keypos`, ...). Reads copy objects out of the table
//! onto the caller's heap after one heap test for all of them; writes
//! copy the object into a buffer of its own before taking the table's
//! lock, so a lock is never held across an allocation of the caller's.
//! `foldl`/`foldr` call funs and so are act code (stdlib/ets.act).

use super::process::services;
use super::{BifError, BifResult, Context};
use crate::heap::{self, Heap, MessageBuffer};
use crate::runtime::ets::matchspec::{MatchSpec, Returns, copy_onto};
use crate::runtime::ets::store::{NotInTable, heap_of, key_of};
use crate::runtime::ets::{self, Kind, Protection, Spec, Table, Tuning, atom};
use crate::sched::Pid;
use crate::term::arith;
use crate::term::order::compare_across;
use crate::term::{Atom, Term};
use std::sync::Arc;

fn me() -> Pid {
    services(|s| s.self_pid())
}

fn badarg<T>() -> Result<T, BifError> {
    Err(BifError::Badarg)
}

/// `badarg` with BEAM's `cause` for the error_info of `ets:function`
/// (`badkey`, `keypos`, ...; see `table_cause` for `id` and `access`).
fn because<T>(function: &str, cause: &str) -> Result<T, BifError> {
    super::set_badarg_cause(Atom::intern(function), Atom::intern(cause));
    badarg()
}

/// The cause BEAM gives when `ets:f` fails on its first argument's
/// table: `id` when it names no table, `access` when the caller may not
/// read it (private) or write it (`f` writes, and it is not public).
pub fn table_cause(heap: &Heap, f: Atom, args: &[Term]) -> Option<Atom> {
    let name = f.name();
    if args.is_empty() || matches!(name, "new" | "whereis" | "all" | "info") {
        return None;
    }
    let Some(table) = ets::resolve(heap, args[0]) else {
        return Some(atom!("id"));
    };
    let writes = matches!(
        name,
        "insert"
            | "insert_new"
            | "delete"
            | "delete_object"
            | "delete_all_objects"
            | "update_counter"
            | "update_element"
            | "take"
            | "select_delete"
            | "match_delete"
            | "select_replace"
            | "give_away"
            | "setopts"
            | "rename"
    );
    let allowed = if writes {
        table.can_write(me)
    } else {
        table.can_read(me)
    };
    (!allowed).then(|| atom!("access"))
}

fn no_room(_: heap::SystemLimit) -> BifError {
    BifError::SystemLimit
}

fn end_of_table() -> Term {
    Term::atom(atom!("$end_of_table"))
}

/// The table `t` names, if the caller may read it.
#[inline]
fn readable(ctx: &Context, t: Term) -> Result<Arc<Table>, BifError> {
    match ets::resolve(&ctx.process.heap, t) {
        Some(table) if table.can_read(me) => Ok(table),
        _ => badarg(),
    }
}

/// The table `t` names, if the caller may write it.
#[inline]
fn writable(ctx: &Context, t: Term) -> Result<Arc<Table>, BifError> {
    match ets::resolve(&ctx.process.heap, t) {
        Some(table) if table.can_write(me) => Ok(table),
        _ => badarg(),
    }
}

/// Copies an object for `table`: a tuple with at least keypos elements.
#[inline]
fn object_in(heap: &Heap, table: &Table, t: Term) -> Result<MessageBuffer, BifError> {
    match heap.as_tuple(t) {
        Some(es) if es.len() >= table.keypos => MessageBuffer::copy_from(heap, t).map_err(no_room),
        _ => badarg(),
    }
}

/// The list of copies of `objects`, built on the caller's heap.
fn objects_out<'a>(
    ctx: &mut Context,
    args: &mut [Term],
    objects: impl DoubleEndedIterator<Item = &'a MessageBuffer> + Clone,
) -> BifResult {
    let words: usize = objects.clone().map(|o| o.words() + 2).sum();
    ctx.ensure(words, args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    for o in objects.rev() {
        let t = heap.append_buffer(o);
        list = heap.cons(t, list);
    }
    Ok(list)
}

/// Copies `t` from `src` onto the caller's heap.
fn give(ctx: &mut Context, args: &mut [Term], src: &Heap, t: Term) -> BifResult {
    let words = heap::size_of(src, t).map_err(no_room)?;
    ctx.ensure(words, args)?;
    Ok(heap::copy_term(src, t, ctx.heap()))
}

/// The key of `object`, copied onto the caller's heap.
fn key_out(
    ctx: &mut Context,
    args: &mut [Term],
    table: &Table,
    object: &MessageBuffer,
) -> BifResult {
    give(ctx, args, heap_of(object), key_of(object, table.keypos))
}

// ---------------------------------------------------------------------
// Creating and deleting tables.

fn parse_options(heap: &Heap, name: Atom, options: Term) -> Result<Spec, BifError> {
    let mut spec = Spec {
        name,
        named: false,
        kind: Kind::Set,
        keypos: 1,
        protection: Protection::Protected,
        tuning: Tuning::default(),
        heir: None,
    };
    let options = heap.list_to_vec(options).ok_or(BifError::Badarg)?;
    for o in options {
        if let Some(a) = o.as_atom() {
            match a.name() {
                "set" => spec.kind = Kind::Set,
                "ordered_set" => spec.kind = Kind::OrderedSet,
                "bag" => spec.kind = Kind::Bag,
                "duplicate_bag" => spec.kind = Kind::DuplicateBag,
                "public" => spec.protection = Protection::Public,
                "protected" => spec.protection = Protection::Protected,
                "private" => spec.protection = Protection::Private,
                "named_table" => spec.named = true,
                "compressed" => spec.tuning.compressed = true,
                _ => return badarg(),
            }
            continue;
        }
        let flag = |v: Term| v.as_bool().ok_or(BifError::Badarg);
        match heap.as_tuple(o) {
            Some(&[k, v]) if k.is_atom() => match k.as_atom().map(Atom::name) {
                Some("keypos") => match v.as_small() {
                    Some(n) if n >= 1 => spec.keypos = n as usize,
                    _ => return badarg(),
                },
                Some("read_concurrency") => spec.tuning.read_concurrency = flag(v)?,
                Some("write_concurrency") => {
                    spec.tuning.write_concurrency = if v == Term::atom(atom!("auto")) {
                        true
                    } else {
                        flag(v)?
                    }
                }
                Some("decentralized_counters") => spec.tuning.decentralized_counters = flag(v)?,
                Some("heir") if v == Term::atom(atom!("none")) => spec.heir = None,
                _ => return badarg(),
            },
            Some(&[k, pid, data]) if k == Term::atom(atom!("heir")) => {
                let pid = Pid::from_term(pid).ok_or(BifError::Badarg)?;
                let data = MessageBuffer::copy_from(heap, data).map_err(no_room)?;
                spec.heir = Some((pid, data));
            }
            _ => return badarg(),
        }
    }
    Ok(spec)
}

/// `ets:new(Name, Options)`
pub fn new_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[0].as_atom().ok_or(BifError::Badarg)?;
    let spec = parse_options(&ctx.process.heap, name, args[1])?;
    let named = spec.named;
    let id = services(|s| s.make_ref());
    if ets::create(spec, id, me()).is_none() {
        return because("new", "already_exists");
    }
    if named {
        return Ok(args[0]);
    }
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(id))
}

/// `ets:delete(Tab)`: whoever may write it (any process, for a public
/// table, as in OTP).
pub fn delete_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    ets::delete(&table);
    Ok(Term::TRUE)
}

pub fn delete_all_objects_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    table.write().clear();
    Ok(Term::TRUE)
}

/// `ets:rename(Tab, Name)`: the table as `ets:new` would name it now.
pub fn rename_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[1].as_atom().ok_or(BifError::Badarg)?;
    let table = writable(ctx, args[0])?;
    if !ets::rename(&table, name) {
        return badarg();
    }
    ctx.ensure(heap::REF_WORDS, args)?;
    Ok(ets::table_term(ctx.heap(), &table))
}

/// `ets:give_away(Tab, Pid, GiftData)`
pub fn give_away_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let me = me();
    let to = Pid::from_term(args[1]).ok_or(BifError::Badarg)?;
    let table = match ets::resolve(&ctx.process.heap, args[0]) {
        Some(t) if t.owner() == me => t,
        Some(t) if t.can_write(|| me) => return because("give_away", "not_owner"),
        _ => return badarg(),
    };
    if to == me {
        return because("give_away", "owner");
    }
    if !services(|s| s.is_alive(to)) {
        return badarg();
    }
    let data = MessageBuffer::copy_from(&ctx.process.heap, args[2]).map_err(no_room)?;
    ets::transfer(&table, to);
    if let Some(message) = ets::transfer_message(&table, me, &data) {
        services(|s| s.send(to, message));
    }
    Ok(Term::TRUE)
}

/// `ets:setopts(Tab, Opts)`: the heir (the only option OTP lets change
/// besides protection, which act's tables fix at creation).
pub fn setopts_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let heap = &ctx.process.heap;
    let table = match ets::resolve(heap, args[0]) {
        Some(t) if t.owner() == me() => t,
        _ => return badarg(),
    };
    let options = match heap.list_to_vec(args[1]) {
        Some(list) => list,
        None => vec![args[1]],
    };
    let mut heirs = Vec::new();
    for o in options {
        match heap.as_tuple(o) {
            Some(&[k, v]) if k == Term::atom(atom!("heir")) && v == Term::atom(atom!("none")) => {
                heirs.push(None)
            }
            Some(&[k, pid, data]) if k == Term::atom(atom!("heir")) => {
                let pid = Pid::from_term(pid).ok_or(BifError::Badarg)?;
                let data = MessageBuffer::copy_from(heap, data).map_err(no_room)?;
                heirs.push(Some((pid, data)));
            }
            _ => return badarg(),
        }
    }
    for heir in heirs {
        table.set_heir(heir);
    }
    Ok(Term::TRUE)
}

/// `ets:whereis(Name)`: the table's reference, or `undefined`.
pub fn whereis_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let name = args[0].as_atom().ok_or(BifError::Badarg)?;
    match ets::by_name(name) {
        Some(table) => {
            ctx.ensure(heap::REF_WORDS, args)?;
            Ok(ctx.heap().reference(table.id))
        }
        None => Ok(Term::atom(Atom::UNDEFINED)),
    }
}

/// `ets:all()`
pub fn all_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let tables = ets::all();
    ctx.ensure(tables.len() * (2 + heap::REF_WORDS), args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    for table in tables.iter().rev() {
        let t = ets::table_term(heap, table);
        list = heap.cons(t, list);
    }
    Ok(list)
}

// ---------------------------------------------------------------------
// Writing.

/// The objects of `insert`'s argument: one tuple or a list of them.
fn objects_in(heap: &Heap, table: &Table, t: Term) -> Result<Vec<MessageBuffer>, BifError> {
    if heap.as_tuple(t).is_some() {
        return Ok(vec![object_in(heap, table, t)?]);
    }
    let list = heap.list_to_vec(t).ok_or(BifError::Badarg)?;
    // Every element is checked before any is copied: a bad one leaves
    // the table as it was.
    if !list
        .iter()
        .all(|&o| heap.as_tuple(o).is_some_and(|es| es.len() >= table.keypos))
    {
        return badarg();
    }
    list.iter().map(|&o| object_in(heap, table, o)).collect()
}

/// `ets:insert(Tab, ObjectOrObjects)`
pub fn insert_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let heap = &ctx.process.heap;
    if heap.as_tuple(args[1]).is_some() {
        let object = object_in(heap, &table, args[1])?;
        table.write().insert(object);
        return Ok(Term::TRUE);
    }
    let objects = objects_in(heap, &table, args[1])?;
    let mut store = table.write();
    for o in in_insert_order(&table, objects) {
        store.insert(o);
    }
    Ok(Term::TRUE)
}

/// The order BEAM stores a list of objects in: a bag takes the list last
/// object first (so `insert(T, [{k,1},{k,2}])` then `lookup(T, k)` is
/// `[{k,2},{k,1}]`); the other kinds take it in order (a set keeps the
/// last object of a key).
fn in_insert_order<T>(table: &Table, mut objects: Vec<T>) -> Vec<T> {
    if table.kind == Kind::Bag {
        objects.reverse();
    }
    objects
}

/// `ets:insert_new(Tab, ObjectOrObjects)`: nothing is inserted if any key
/// is there already.
pub fn insert_new_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let objects = objects_in(&ctx.process.heap, &table, args[1])?;
    let mut store = table.write();
    let taken = objects
        .iter()
        .any(|o| !store.lookup(heap_of(o), key_of(o, table.keypos)).is_empty());
    if taken {
        return Ok(Term::FALSE);
    }
    for o in in_insert_order(&table, objects) {
        store.insert(o);
    }
    Ok(Term::TRUE)
}

/// `ets:delete(Tab, Key)`
pub fn delete_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let removed = table.write().remove(&ctx.process.heap, args[1]);
    // The objects are freed after the lock is released.
    drop(removed);
    Ok(Term::TRUE)
}

/// `ets:delete_object(Tab, Object)`
pub fn delete_object_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let heap = &ctx.process.heap;
    let key = match heap.as_tuple(args[1]) {
        Some(es) if es.len() >= table.keypos => es[table.keypos - 1],
        _ => return badarg(),
    };
    table.write().remove_object(heap, args[1], key);
    Ok(Term::TRUE)
}

/// `ets:take(Tab, Key)`: the objects removed.
pub fn take_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let removed = table.write().remove(&ctx.process.heap, args[1]);
    objects_out(ctx, args, removed.iter())
}

/// A single table of type set or ordered_set, writable (update_counter,
/// update_element).
/// BEAM's cause for a bag is `table_type`, from `update_counter` only.
fn settable(ctx: &Context, t: Term, function: &str) -> Result<Arc<Table>, BifError> {
    let table = writable(ctx, t)?;
    if matches!(table.kind, Kind::Bag | Kind::DuplicateBag) {
        return match function {
            "update_counter" => because(function, "table_type"),
            _ => badarg(),
        };
    }
    Ok(table)
}

/// One `update_counter` operation.
struct Counter {
    pos: usize,
    incr: Term,
    /// Threshold and set value.
    bound: Option<(Term, Term)>,
}

/// The operations of `update_counter`'s argument; `true` when the
/// result is a list.
fn counters(heap: &Heap, keypos: usize, op: Term) -> Result<(Vec<Counter>, bool), BifError> {
    let int =
        |t: Term| -> Result<Term, BifError> { if heap.is_integer(t) { Ok(t) } else { badarg() } };
    let one = |t: Term| -> Result<Counter, BifError> {
        let es = heap.as_tuple(t).ok_or(BifError::Badarg)?;
        let pos = match es.first().and_then(|p| p.as_small()) {
            Some(p) if p as usize == keypos => return because("update_counter", "keypos"),
            Some(p) if p >= 1 => p as usize,
            _ => return badarg(),
        };
        match *es {
            [_, incr] => Ok(Counter {
                pos,
                incr: int(incr)?,
                bound: None,
            }),
            [_, incr, threshold, set] => Ok(Counter {
                pos,
                incr: int(incr)?,
                bound: Some((int(threshold)?, int(set)?)),
            }),
            _ => badarg(),
        }
    };
    if heap.is_integer(op) {
        return Ok((
            vec![Counter {
                pos: keypos + 1,
                incr: op,
                bound: None,
            }],
            false,
        ));
    }
    if heap.as_tuple(op).is_some() {
        return Ok((vec![one(op)?], false));
    }
    let list = heap.list_to_vec(op).ok_or(BifError::Badarg)?;
    Ok((list.into_iter().map(one).collect::<Result<_, _>>()?, true))
}

fn update_counter(ctx: &mut Context, args: &mut [Term], default: Option<Term>) -> BifResult {
    let table = settable(ctx, args[0], "update_counter")?;
    let heap = &ctx.process.heap;
    let (ops, as_list) = counters(heap, table.keypos, args[2])?;
    if let Some(d) = default
        && heap.as_tuple(d).is_none_or(|es| es.len() < table.keypos)
    {
        return badarg();
    }
    // The common case in place: one small increment of a small counter
    // of an object a set table holds, the sum still small. An immediate
    // replaces an immediate in the stored object, with no copy out and
    // back (knucleotide's counting loop is this call).
    if let ([op], false) = (&ops[..], as_list)
        && op.bound.is_none()
        && let Some(incr) = op.incr.as_small()
    {
        let mut store = table.write();
        if let Some(element) = store
            .lookup_set_mut(heap, args[1])
            .and_then(|o| o.tuple_elements_mut())
            .and_then(|es| es.get_mut(op.pos - 1))
            && let Some(sum) = element
                .as_small()
                .and_then(|old| old.checked_add(incr))
                .and_then(Term::try_small)
        {
            *element = sum;
            return Ok(sum);
        }
    }
    // The new object and the results are built on a scratch heap: the
    // old object (or the default, keyed with Key), then the sums.
    let mut scratch = Heap::new();
    let mut store = table.write();
    let mut elements = match (store.lookup(heap, args[1]).first(), default) {
        (Some(o), _) => {
            scratch.grow_unrooted(o.words()).map_err(no_room)?;
            let base = scratch.append_buffer(o);
            scratch.tuple_elements(base).to_vec()
        }
        (None, Some(d)) => {
            let d = copy_onto(heap, d, &mut scratch).map_err(no_room)?;
            let key = copy_onto(heap, args[1], &mut scratch).map_err(no_room)?;
            let mut elements = scratch.tuple_elements(d).to_vec();
            elements[table.keypos - 1] = key;
            elements
        }
        (None, None) => return because("update_counter", "badkey"),
    };
    let mut results = Vec::with_capacity(ops.len());
    for op in &ops {
        let Some(&old) = elements.get(op.pos - 1) else {
            return because("update_counter", "position");
        };
        if !scratch.is_integer(old) {
            return badarg();
        }
        // The operands live on two heaps: bring the increment over.
        let incr = copy_onto(heap, op.incr, &mut scratch).map_err(no_room)?;
        let sum = arith::add(&scratch, old, incr).map_err(|_| BifError::Badarg)?;
        scratch.grow_unrooted(sum.words()).map_err(no_room)?;
        let mut value = scratch.number(&sum);
        if let Some((threshold, set)) = op.bound {
            let threshold = copy_onto(heap, threshold, &mut scratch).map_err(no_room)?;
            // A threshold caps a rising counter and floors a falling one.
            let rising =
                crate::term::compare(&scratch, incr, Term::small(0)) != std::cmp::Ordering::Less;
            let order = crate::term::compare(&scratch, value, threshold);
            let past = if rising {
                order == std::cmp::Ordering::Greater
            } else {
                order == std::cmp::Ordering::Less
            };
            if past {
                value = copy_onto(heap, set, &mut scratch).map_err(no_room)?;
            }
        }
        elements[op.pos - 1] = value;
        results.push(value);
    }
    scratch
        .grow_unrooted(elements.len() + 1 + 2 * results.len())
        .map_err(no_room)?;
    let object = scratch.tuple(&elements);
    store.insert(MessageBuffer::copy_from(&scratch, object).map_err(no_room)?);
    drop(store);
    let result = if as_list {
        scratch.list(&results)
    } else {
        results.first().copied().ok_or(BifError::Badarg)?
    };
    give(ctx, args, &scratch, result)
}

/// `ets:update_counter(Tab, Key, UpdateOp)`
pub fn update_counter_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    update_counter(ctx, args, None)
}

/// `ets:update_counter(Tab, Key, UpdateOp, Default)`
pub fn update_counter_4(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let default = args[3];
    update_counter(ctx, args, Some(default))
}

/// `ets:update_element(Tab, Key, {Pos, Value} | [{Pos, Value}])`
pub fn update_element_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = settable(ctx, args[0], "update_element")?;
    let heap = &ctx.process.heap;
    let pairs = match heap.list_to_vec(args[2]) {
        Some(list) => list,
        None => vec![args[2]],
    };
    let mut changes = Vec::with_capacity(pairs.len());
    for p in pairs {
        match heap.as_tuple(p) {
            Some(&[pos, value]) => match pos.as_small() {
                Some(n) if n as usize == table.keypos => {
                    return because("update_element", "keypos");
                }
                Some(n) if n >= 1 => changes.push((n as usize, value)),
                _ => return badarg(),
            },
            _ => return badarg(),
        }
    }
    let mut scratch = Heap::new();
    let mut store = table.write();
    let Some(old) = store.lookup(heap, args[1]).first() else {
        return Ok(Term::FALSE);
    };
    scratch.grow_unrooted(old.words()).map_err(no_room)?;
    let base = scratch.append_buffer(old);
    let mut elements = scratch.tuple_elements(base).to_vec();
    for (pos, value) in changes {
        if pos > elements.len() {
            return badarg();
        }
        elements[pos - 1] = copy_onto(heap, value, &mut scratch).map_err(no_room)?;
    }
    scratch.grow_unrooted(elements.len() + 1).map_err(no_room)?;
    let object = scratch.tuple(&elements);
    store.insert(MessageBuffer::copy_from(&scratch, object).map_err(no_room)?);
    Ok(Term::TRUE)
}

// ---------------------------------------------------------------------
// Reading.

/// `ets:lookup(Tab, Key)`
pub fn lookup_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = readable(ctx, args[0])?;
    let store = table.read();
    let objects = store.lookup(&ctx.process.heap, args[1]);
    objects_out(ctx, args, objects.iter())
}

/// `ets:member(Tab, Key)`
pub fn member_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = readable(ctx, args[0])?;
    let found = !table.read().lookup(&ctx.process.heap, args[1]).is_empty();
    Ok(Term::boolean(found))
}

/// `ets:lookup_element(Tab, Key, Pos)`: the element, or (bags) the list
/// of the elements of every object with the key.
pub fn lookup_element_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = readable(ctx, args[0])?;
    let pos = match args[2].as_small() {
        Some(p) if p >= 1 => p as usize,
        _ => return badarg(),
    };
    let store = table.read();
    let objects = store.lookup(&ctx.process.heap, args[1]);
    if objects.is_empty() {
        return because("lookup_element", "badkey");
    }
    let mut scratch = Heap::new();
    let mut elements = Vec::with_capacity(objects.len());
    for o in objects {
        let h = heap_of(o);
        let Some(&e) = h.tuple_elements(o.term()).get(pos - 1) else {
            return badarg();
        };
        elements.push(copy_onto(h, e, &mut scratch).map_err(no_room)?);
    }
    drop(store);
    let result = if matches!(table.kind, Kind::Bag | Kind::DuplicateBag) {
        scratch.grow_unrooted(2 * elements.len()).map_err(no_room)?;
        scratch.list(&elements)
    } else {
        elements[0]
    };
    give(ctx, args, &scratch, result)
}

/// `ets:tab2list(Tab)`
pub fn tab2list_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = readable(ctx, args[0])?;
    let store = table.read();
    let all: Vec<&MessageBuffer> = store.iter().collect();
    objects_out(ctx, args, all.into_iter())
}

/// Only an ordered_set has an order to walk backwards: on the hash
/// types, as in OTP, `last` is `first` and `prev` is `next`.
fn first_or_last(ctx: &mut Context, args: &mut [Term], last: bool) -> BifResult {
    let table = readable(ctx, args[0])?;
    let last = last && table.kind == Kind::OrderedSet;
    let store = table.read();
    match store.first(last) {
        Some(o) => key_out(ctx, args, &table, o),
        None => Ok(end_of_table()),
    }
}

fn next_or_prev(ctx: &mut Context, args: &mut [Term], back: bool) -> BifResult {
    let table = readable(ctx, args[0])?;
    let back = back && table.kind == Kind::OrderedSet;
    let store = table.read();
    match store.next(&ctx.process.heap, args[1], back) {
        Ok(Some(o)) => key_out(ctx, args, &table, o),
        Ok(None) => Ok(end_of_table()),
        Err(NotInTable) => badarg(),
    }
}

pub fn first_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    first_or_last(ctx, args, false)
}

pub fn last_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    first_or_last(ctx, args, true)
}

pub fn next_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    next_or_prev(ctx, args, false)
}

pub fn prev_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    next_or_prev(ctx, args, true)
}

// ---------------------------------------------------------------------
// info

const INFO_ITEMS: &[&str] = &[
    "id",
    "decentralized_counters",
    "read_concurrency",
    "write_concurrency",
    "compressed",
    "memory",
    "owner",
    "heir",
    "name",
    "size",
    "node",
    "named_table",
    "type",
    "keypos",
    "protection",
];

/// The value of one `info` item on `heap` (`REF_WORDS` ensured), or
/// `None` for an unknown item.
fn info_item(heap: &mut Heap, table: &Table, item: &str) -> Option<Term> {
    let b = Term::boolean;
    Some(match item {
        "id" => heap.reference(table.id),
        "decentralized_counters" => b(table.tuning.decentralized_counters),
        "read_concurrency" => b(table.tuning.read_concurrency),
        "write_concurrency" => b(table.tuning.write_concurrency),
        "compressed" => b(table.tuning.compressed),
        "memory" => {
            // Words, as OTP counts them; an empty table's overhead as
            // OTP 25's is, then the objects'.
            let base = if table.kind == Kind::OrderedSet {
                139
            } else {
                305
            };
            Term::small((base + table.read().words()) as i64)
        }
        "owner" => table.owner().to_term(),
        "heir" => match table.heir() {
            Some(p) => p.to_term(),
            None => Term::atom(atom!("none")),
        },
        "name" => Term::atom(table.name()),
        "size" => Term::small(table.read().len() as i64),
        "node" => Term::atom(Atom::NONODE),
        "named_table" => b(table.named),
        "type" => Term::atom(match table.kind {
            Kind::Set => atom!("set"),
            Kind::OrderedSet => atom!("ordered_set"),
            Kind::Bag => atom!("bag"),
            Kind::DuplicateBag => atom!("duplicate_bag"),
        }),
        "keypos" => Term::small(table.keypos as i64),
        "protection" => Term::atom(match table.protection {
            Protection::Public => atom!("public"),
            Protection::Protected => atom!("protected"),
            Protection::Private => atom!("private"),
        }),
        "fixed" | "safe_fixed" | "safe_fixed_monotonic_time" => Term::FALSE,
        _ => return None,
    })
}

/// What `info` says of a term that names no table: `undefined` for a
/// name or a deleted table, badarg for anything else.
fn no_table(ctx: &Context, t: Term) -> BifResult {
    let gone = match ctx.process.heap.view(t) {
        crate::term::View::Atom(_) => true,
        crate::term::View::Ref(id) => ets::was_table(id),
        _ => false,
    };
    if gone {
        Ok(Term::atom(Atom::UNDEFINED))
    } else {
        badarg()
    }
}

/// `ets:info(Tab)`: `undefined` for a table that does not exist.
pub fn info_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let Some(table) = ets::resolve(&ctx.process.heap, args[0]) else {
        return no_table(ctx, args[0]);
    };
    let n = INFO_ITEMS.len();
    ctx.ensure(heap::REF_WORDS + n * 5, args)?;
    let heap = ctx.heap();
    let mut list = Term::NIL;
    for item in INFO_ITEMS.iter().rev() {
        let value = info_item(heap, &table, item).unwrap_or(Term::NIL);
        let pair = heap.tuple(&[Term::atom(Atom::intern(item)), value]);
        list = heap.cons(pair, list);
    }
    Ok(list)
}

/// `ets:info(Tab, Item)`
pub fn info_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let item = args[1].as_atom().ok_or(BifError::Badarg)?;
    let Some(table) = ets::resolve(&ctx.process.heap, args[0]) else {
        return no_table(ctx, args[0]);
    };
    ctx.ensure(heap::REF_WORDS, args)?;
    info_item(ctx.heap(), &table, item.name()).ok_or(BifError::Badarg)
}

// ---------------------------------------------------------------------
// Match specifications.

/// Runs `spec` over the table's candidates (only the key's objects when
/// the spec fixes the key): the body values on `scratch`, in table order
/// (or reversed). With a `limit`, stops once that many are found, at a
/// key boundary (a bag's objects of one key come in one chunk), and
/// gives the last key done (on `scratch`) for the continuation.
fn run_select(
    table: &Table,
    spec: &MatchSpec,
    scratch: &mut Heap,
    reverse: bool,
    after: Option<Term>,
    limit: Option<usize>,
) -> Result<(Vec<Term>, Option<Term>), BifError> {
    let me = me();
    let store = table.read();
    // The candidates are references into the table, collected first so
    // that the scratch heap can be written while they are walked.
    let candidates: Vec<&MessageBuffer> = match (spec.bound_key(table.keypos), after) {
        (Some(key), None) => store.lookup(scratch, key).iter().collect(),
        (Some(_), Some(_)) => Vec::new(),
        (None, Some(key)) => store.iter_after(scratch, Some(key)).collect(),
        (None, None) if reverse => store.iter_rev().collect(),
        (None, None) => store.iter().collect(),
    };
    let same_key = |a: &MessageBuffer, b: &MessageBuffer| {
        compare_across(
            heap_of(a),
            key_of(a, table.keypos),
            heap_of(b),
            key_of(b, table.keypos),
            true,
        ) == std::cmp::Ordering::Equal
    };
    let mut results = Vec::new();
    let mut stop = candidates.len();
    for (i, &o) in candidates.iter().enumerate() {
        if let Some(limit) = limit
            && results.len() >= limit
            && i > 0
            && !same_key(candidates[i - 1], o)
        {
            stop = i;
            break;
        }
        if let Some(value) = spec.run(scratch, o, me).map_err(no_room)? {
            results.push(value);
        }
    }
    // As in OTP, a chunk that filled its limit gets a continuation even
    // when the table ended with it (the next call then finds nothing).
    let full = limit.is_some_and(|limit| results.len() >= limit);
    let resume = match stop < candidates.len() || (full && stop > 0) {
        true => {
            let o = candidates[stop - 1];
            Some(copy_onto(heap_of(o), key_of(o, table.keypos), scratch).map_err(no_room)?)
        }
        false => None,
    };
    Ok((results, resume))
}

/// Counts or deletes the objects whose body is `true`.
fn select_true(
    ctx: &mut Context,
    args: &mut [Term],
    spec: MatchSpec,
    mut scratch: Heap,
    delete: bool,
) -> BifResult {
    let me = me();
    let table = if delete {
        writable(ctx, args[0])?
    } else {
        readable(ctx, args[0])?
    };
    let mark = scratch.used();
    let mut count: i64 = 0;
    let mut failed = None;
    let mut test = |o: &MessageBuffer| -> bool {
        let hit = match spec.run(&mut scratch, o, me) {
            Ok(v) => v == Some(Term::TRUE),
            Err(e) => {
                failed = Some(e);
                false
            }
        };
        scratch.truncate_unrooted(mark);
        if hit {
            count += 1;
        }
        hit
    };
    if delete {
        let mut store = table.write();
        store.retain(|o| !test(o));
    } else {
        let store = table.read();
        for o in store.iter() {
            test(o);
        }
    }
    if failed.is_some() {
        return Err(BifError::SystemLimit);
    }
    Ok(Term::small(count))
}

fn compile(ctx: &Context, spec: Term, scratch: &mut Heap) -> Result<MatchSpec, BifError> {
    MatchSpec::compile(&ctx.process.heap, spec, scratch).map_err(|_| BifError::Badarg)
}

fn pattern(
    ctx: &Context,
    pattern: Term,
    returns: Returns,
    scratch: &mut Heap,
) -> Result<MatchSpec, BifError> {
    MatchSpec::from_pattern(&ctx.process.heap, pattern, returns, scratch)
        .map_err(|_| BifError::Badarg)
}

/// The list of results, copied onto the caller's heap.
fn results_out(
    ctx: &mut Context,
    args: &mut [Term],
    scratch: &mut Heap,
    results: &[Term],
) -> BifResult {
    scratch.grow_unrooted(2 * results.len()).map_err(no_room)?;
    let list = scratch.list(results);
    give(ctx, args, scratch, list)
}

fn select_all(
    ctx: &mut Context,
    args: &mut [Term],
    spec: MatchSpec,
    mut scratch: Heap,
    reverse: bool,
) -> BifResult {
    let table = readable(ctx, args[0])?;
    let (results, _) = run_select(&table, &spec, &mut scratch, reverse, None, None)?;
    results_out(ctx, args, &mut scratch, &results)
}

/// `ets:select(Tab, MatchSpec)`
pub fn select_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    select_all(ctx, args, spec, scratch, false)
}

/// `ets:select_reverse(Tab, MatchSpec)`
pub fn select_reverse_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    let reverse = table_kind(ctx, args[0]) == Some(Kind::OrderedSet);
    select_all(ctx, args, spec, scratch, reverse)
}

fn table_kind(ctx: &Context, t: Term) -> Option<Kind> {
    ets::resolve(&ctx.process.heap, t).map(|t| t.kind)
}

/// `ets:match(Tab, Pattern)`
pub fn match_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = pattern(ctx, args[1], Returns::Bindings, &mut scratch)?;
    select_all(ctx, args, spec, scratch, false)
}

/// `ets:match_object(Tab, Pattern)`
pub fn match_object_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = pattern(ctx, args[1], Returns::Object, &mut scratch)?;
    select_all(ctx, args, spec, scratch, false)
}

/// `ets:select_count(Tab, MatchSpec)`
pub fn select_count_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    select_true(ctx, args, spec, scratch, false)
}

/// `ets:select_delete(Tab, MatchSpec)`
pub fn select_delete_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    writable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    select_true(ctx, args, spec, scratch, true)
}

/// `ets:select_replace(Tab, MatchSpec)`: each object the specification
/// matches is replaced by its result, which must keep the object's key
/// (else badarg, and nothing is replaced); the count replaced.
pub fn select_replace_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = writable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    // OTP does not do it on a bag.
    if table.kind == Kind::Bag {
        return badarg();
    }
    let me = me();
    let keypos = table.keypos;
    let mut store = table.write();
    // First every replacement, then the table changes: a result that
    // changes a key leaves it as it was.
    let mut replaced: Vec<(MessageBuffer, MessageBuffer)> = Vec::new();
    for o in store.iter() {
        let mark = scratch.used();
        let Some(value) = spec.run(&mut scratch, o, me).map_err(no_room)? else {
            continue;
        };
        let same_key = match scratch.as_tuple(value) {
            Some(es) if es.len() >= keypos => {
                compare_across(
                    &scratch,
                    es[keypos - 1],
                    heap_of(o),
                    key_of(o, keypos),
                    true,
                ) == std::cmp::Ordering::Equal
            }
            _ => false,
        };
        if !same_key {
            return badarg();
        }
        let new = MessageBuffer::copy_from(&scratch, value).map_err(no_room)?;
        let old = MessageBuffer::copy_from(heap_of(o), o.term()).map_err(no_room)?;
        scratch.truncate_unrooted(mark);
        replaced.push((old, new));
    }
    let count = replaced.len() as i64;
    for (old, new) in replaced {
        if table.kind == Kind::DuplicateBag {
            store.remove_object(heap_of(&old), old.term(), key_of(&old, keypos));
        }
        store.insert(new);
    }
    Ok(Term::small(count))
}

/// `ets:match_delete(Tab, Pattern)`: `true`.
pub fn match_delete_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    writable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = pattern(ctx, args[1], Returns::True, &mut scratch)?;
    select_true(ctx, args, spec, scratch, true)?;
    Ok(Term::TRUE)
}

/// Where a select with a limit stands: the table, the specification
/// (as the program wrote it), the last key done, the limit.
struct Cursor {
    tab: Term,
    spec: Term,
    after: Option<Term>,
    limit: Term,
}

/// One chunk of a select with a limit: `{Results, Continuation}` or
/// `'$end_of_table'`. The continuation is OTP's shape,
/// `{Tab, LastKey, [], Limit, MatchSpec, [], 0, 0}`, holding the
/// specification itself where OTP holds a compiled one.
fn select_chunk(
    ctx: &mut Context,
    args: &mut [Term],
    cursor: Cursor,
    spec: MatchSpec,
    mut scratch: Heap,
) -> BifResult {
    let Cursor {
        tab,
        spec: spec_term,
        after,
        limit,
    } = cursor;
    let n = match limit.as_small() {
        Some(n) if n >= 1 => n as usize,
        _ => return badarg(),
    };
    let table = readable(ctx, tab)?;
    let after = match after {
        Some(k) => Some(copy_onto(&ctx.process.heap, k, &mut scratch).map_err(no_room)?),
        None => None,
    };
    let (results, resume) = run_select(&table, &spec, &mut scratch, false, after, Some(n))?;
    if results.is_empty() && resume.is_none() {
        return Ok(end_of_table());
    }
    let heap = &ctx.process.heap;
    let tab = copy_onto(heap, tab, &mut scratch).map_err(no_room)?;
    let spec_term = copy_onto(heap, spec_term, &mut scratch).map_err(no_room)?;
    scratch
        .grow_unrooted(2 * results.len() + 12)
        .map_err(no_room)?;
    let list = scratch.list(&results);
    let cont = match resume {
        Some(key) => scratch.tuple(&[
            tab,
            key,
            Term::NIL,
            limit,
            spec_term,
            Term::NIL,
            Term::small(0),
            Term::small(0),
        ]),
        None => end_of_table(),
    };
    let pair = scratch.tuple(&[list, cont]);
    give(ctx, args, &scratch, pair)
}

/// `ets:select(Tab, MatchSpec, Limit)`
pub fn select_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, args[1], &mut scratch)?;
    let cursor = Cursor {
        tab: args[0],
        spec: args[1],
        after: None,
        limit: args[2],
    };
    select_chunk(ctx, args, cursor, spec, scratch)
}

/// The specification `match/3` (or `match_object/3`) stands for, on the
/// caller's heap: `[{Pattern, [], ['$$']}]`.
fn pattern_spec(
    ctx: &mut Context,
    args: &mut [Term],
    returns: &'static str,
) -> Result<Term, BifError> {
    ctx.ensure(4 + 2 + 2 + 2, args)?;
    let heap = ctx.heap();
    let body = heap.cons(Term::atom(Atom::intern(returns)), Term::NIL);
    let clause = heap.tuple(&[args[1], Term::NIL, body]);
    Ok(heap.cons(clause, Term::NIL))
}

fn match_chunk(
    ctx: &mut Context,
    args: &mut [Term],
    returns: Returns,
    name: &'static str,
) -> BifResult {
    readable(ctx, args[0])?;
    let mut scratch = Heap::new();
    let spec = pattern(ctx, args[1], returns, &mut scratch)?;
    let spec_term = pattern_spec(ctx, args, name)?;
    let cursor = Cursor {
        tab: args[0],
        spec: spec_term,
        after: None,
        limit: args[2],
    };
    select_chunk(ctx, args, cursor, spec, scratch)
}

/// `ets:match(Tab, Pattern, Limit)`
pub fn match_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match_chunk(ctx, args, Returns::Bindings, "$$")
}

/// `ets:match_object(Tab, Pattern, Limit)`
pub fn match_object_3(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match_chunk(ctx, args, Returns::Object, "$_")
}

/// `ets:select(Continuation)` (also `match/1`, `match_object/1`).
pub fn select_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    if args[0] == end_of_table() {
        return Ok(end_of_table());
    }
    let parts = match ctx.process.heap.as_tuple(args[0]) {
        Some(&[tab, key, _, limit, spec, _, _, _]) => (tab, key, limit, spec),
        _ => return badarg(),
    };
    let (tab, key, limit, spec_term) = parts;
    let mut scratch = Heap::new();
    let spec = compile(ctx, spec_term, &mut scratch)?;
    let cursor = Cursor {
        tab,
        spec: spec_term,
        after: Some(key),
        limit,
    };
    select_chunk(ctx, args, cursor, spec, scratch)
}

/// `ets:slot(Tab, I)`: the I-th object (counting from 0) in the table's
/// order, objects of one key together; `'$end_of_table'` just past the
/// last, `badarg` beyond. An ordered_set's slots are OTP's; a hash
/// table's are its own (OTP's are hash buckets).
pub fn slot_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let table = readable(ctx, args[0])?;
    let Some(i) = args[1].as_small().and_then(|i| usize::try_from(i).ok()) else {
        return badarg();
    };
    let store = table.read();
    let mut groups: Vec<Vec<&MessageBuffer>> = Vec::new();
    for o in store.iter() {
        match groups.last_mut() {
            Some(group)
                if table.kind != Kind::OrderedSet
                    && compare_across(
                        heap_of(group[0]),
                        key_of(group[0], table.keypos),
                        heap_of(o),
                        key_of(o, table.keypos),
                        true,
                    ) == std::cmp::Ordering::Equal =>
            {
                group.push(o)
            }
            _ => groups.push(vec![o]),
        }
        if groups.len() > i + 1 {
            break;
        }
    }
    match groups.len() {
        n if i < n => objects_out(ctx, args, groups[i].iter().copied()),
        n if i == n => Ok(end_of_table()),
        _ => badarg(),
    }
}

/// `ets:match_spec_compile(MatchSpec)`: the spec, checked, in a tuple
/// that `match_spec_run/2` takes (OTP's is a reference).
pub fn match_spec_compile_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let mut scratch = Heap::new();
    compile(ctx, args[0], &mut scratch)?;
    ctx.ensure(3, args)?;
    let tag = Term::atom(atom!("$ets_compiled_ms"));
    let spec = args[0];
    Ok(ctx.heap().tuple(&[tag, spec]))
}

/// `ets:match_spec_run(List, CompiledMatchSpec)`: the results of the
/// spec on the elements it matches, in order.
pub fn match_spec_run_2(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let tag = Term::atom(atom!("$ets_compiled_ms"));
    let spec_term = match ctx.process.heap.as_tuple(args[1]) {
        Some(&[t, spec]) if t == tag => spec,
        _ => return badarg(),
    };
    let items = super::erlang::list_elements(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let mut scratch = Heap::new();
    let spec = compile(ctx, spec_term, &mut scratch)?;
    let me = me();
    let mut results = Vec::new();
    for item in items {
        let object = MessageBuffer::copy_from(&ctx.process.heap, item).map_err(no_room)?;
        if let Some(value) = spec.run(&mut scratch, &object, me).map_err(no_room)? {
            results.push(value);
        }
    }
    results_out(ctx, args, &mut scratch, &results)
}
