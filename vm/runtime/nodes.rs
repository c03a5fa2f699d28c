//! The runtime's door to distribution (`crate::dist`): the BIFs and the
//! scheduler reach the network only through here, and the network
//! reaches processes only through `deliver`.
//!
//! Invariant: on a node that is not alive (no `--sname`/`--name`), this
//! module has no outside queue (`run_main` makes one for the sockets
//! alone, `runtime::sockets`); sends to other nodes go nowhere.

use crate::dist;
use crate::heap::{Heap, MessageBuffer};
use crate::sched::outside::{Outside, Target};
use crate::sched::{Pid, Signal};
use crate::term::{Atom, Term};
use std::sync::{Arc, Mutex, OnceLock};

pub use dist::Connect;

/// The queue by which connection threads hand messages to schedulers;
/// made when the node starts.
static OUTSIDE: OnceLock<Arc<Outside<MessageBuffer>>> = OnceLock::new();

/// The outside queue for `sched::run_with_outside`, if the node is alive.
pub fn outside() -> Option<Arc<Outside<MessageBuffer>>> {
    OUTSIDE.get().cloned()
}

/// Hands a message from another node to `to`, to be delivered by a
/// scheduler like any local message.
pub fn deliver(to: Target, message: MessageBuffer) {
    if let Some(o) = OUTSIDE.get() {
        o.push(to, Signal::Message(message));
    }
}

/// Hands an exit signal from the remote pid in `from` to `to`.
pub fn deliver_exit(to: Pid, from: MessageBuffer, reason: MessageBuffer, linked: bool) {
    if let Some(o) = OUTSIDE.get() {
        o.push(
            Target::Pid(to),
            Signal::RemoteExit {
                from_reason: Box::new((from, reason)),
                linked,
            },
        );
    }
}

/// Asks a scheduler whether `target` names a live process; the answer
/// goes to `dist::probed` with `token`.
pub fn probe(target: Target, token: u64) {
    if let Some(o) = OUTSIDE.get() {
        o.probe(target, token);
    }
}

/// A process exited (its exit hook): monitors and links from other
/// nodes hear it. One load when no other node monitors or links anything
/// here.
#[inline]
pub fn exited(pid: Pid, reason: &MessageBuffer) {
    if dist::watched() {
        let empty = Heap::new();
        let heap = reason.heap().unwrap_or(&empty);
        let bytes = crate::term::etf::term_to_binary(heap, reason.term())
            .unwrap_or_else(|_| vec![131, 100, 0, 6, b'n', b'o', b'p', b'r', b'o', b'c']);
        dist::exited(pid, &bytes);
    }
}

pub use dist::{SpawnOptions, Watched};

/// `link(RemotePid)` (node-table index and id) from `me`.
pub fn link_remote(me: Pid, node: u32, id: u64) {
    dist::link_remote(me, node, id);
}

/// `unlink(RemotePid)` from `me`.
pub fn unlink_remote(me: Pid, node: u32, id: u64) {
    dist::unlink_remote(me, node, id);
}

/// `exit(RemotePid, Reason)` from `me`; `reason` in the external format.
pub fn exit_remote(me: Pid, node: u32, id: u64, reason: &[u8]) {
    dist::exit_remote(me, node, id, reason);
}

/// A spawn request of `me` for `m:f(Args)` on `node` (`args`: the list
/// in the external format), answered as `{'$spawn_reply', Ref, ...}`
/// with the reference `id`.
pub fn spawn_request(
    me: Pid,
    node: Atom,
    mfa: (Atom, Atom, u32),
    args: &[u8],
    options: SpawnOptions,
    id: u64,
) {
    dist::spawn_request(me, node, mfa, args, options, id);
}

/// The spawner made `child` for another node's request `token`.
pub fn spawned(token: u64, child: Option<Pid>) {
    dist::spawned(token, child);
}

/// `monitor(process, ...)` of a process of `node`, with reference `id`.
pub fn monitor_remote(watcher: Pid, node: Atom, what: Watched, id: u64) {
    dist::monitor_process(watcher, node, what, id);
}

/// `demonitor(Ref)`: whether `id` was a monitor of another node's process.
pub fn demonitor_remote(id: u64) -> bool {
    dist::alive() && dist::demonitor_process(id)
}

fn small_tuple(elements: &[Term]) -> MessageBuffer {
    let mut heap = Heap::new();
    let t = heap.tuple(elements);
    MessageBuffer::from_heap(heap, t)
}

/// `{nodedown, Node}`.
pub fn nodedown(node: Atom) -> MessageBuffer {
    small_tuple(&[Term::atom(Atom::intern("nodedown")), Term::atom(node)])
}

/// `{nodeup, Node}`.
pub fn nodeup(node: Atom) -> MessageBuffer {
    small_tuple(&[Term::atom(Atom::intern("nodeup")), Term::atom(node)])
}

/// `{'$dist_connected', Node, Bool}`: the outcome a `connect_node` waits for.
pub fn connected(node: Atom, ok: bool) -> MessageBuffer {
    small_tuple(&[
        Term::atom(Atom::intern("$dist_connected")),
        Term::atom(node),
        Term::boolean(ok),
    ])
}

fn options() -> &'static Mutex<Option<dist::Options>> {
    static OPTIONS: OnceLock<Mutex<Option<dist::Options>>> = OnceLock::new();
    OPTIONS.get_or_init(|| Mutex::new(None))
}

/// Applies `--sname N`, `--name N` or `--cookie C` (`Ok(false)`: not one
/// of these).
pub fn apply_option(name: &str, value: Option<&str>) -> Result<bool, String> {
    if !option_takes_value(name) {
        return Ok(false);
    }
    let value = value.ok_or_else(|| format!("'{name}' needs a value"))?;
    if value.is_empty() {
        return Err(format!("'{name}' needs a value"));
    }
    let mut o = options().lock().unwrap_or_else(|e| e.into_inner());
    let o = o.get_or_insert_with(|| dist::Options {
        name: String::new(),
        long: false,
        cookie: None,
    });
    match name {
        "--sname" => (o.name, o.long) = (value.to_string(), false),
        "--name" => (o.name, o.long) = (value.to_string(), true),
        _ => o.cookie = Some(value.to_string()),
    }
    Ok(true)
}

/// The node options of a script's emulator line (`%%! -sname N`,
/// `-name N`, `-setcookie C`; see `syntax::emulator_args`), for what the
/// command line left unset: escript starts the script's node with them.
/// Other emulator arguments (`+P`, `-smp`, ...) mean nothing to act.
pub fn apply_emulator_args(args: &str) -> Result<(), String> {
    let mut words = args.split_whitespace();
    let mut o = options().lock().unwrap_or_else(|e| e.into_inner());
    while let Some(word) = words.next() {
        let (flag, long) = match word {
            "-sname" => ("--sname", false),
            "-name" => ("--name", true),
            "-setcookie" => ("--cookie", false),
            _ => continue,
        };
        let Some(value) = words.next() else {
            return Err(format!("the script's %%! line: '{word}' needs a value"));
        };
        let o = o.get_or_insert_with(|| dist::Options {
            name: String::new(),
            long: false,
            cookie: None,
        });
        if flag == "--cookie" {
            o.cookie.get_or_insert_with(|| value.to_string());
        } else if o.name.is_empty() {
            (o.name, o.long) = (value.to_string(), long);
        }
    }
    Ok(())
}

pub fn option_takes_value(name: &str) -> bool {
    matches!(name, "--sname" | "--name" | "--cookie")
}

/// Starts the node if the command line named it; called before the
/// first process runs.
pub fn start_if_asked(deterministic: bool) -> Result<(), String> {
    let Some(options) = options().lock().unwrap_or_else(|e| e.into_inner()).clone() else {
        return Ok(());
    };
    if options.name.is_empty() {
        return Err("--cookie needs --sname or --name".into());
    }
    if deterministic {
        return Err("--deterministic cannot be used with --sname or --name".into());
    }
    if OUTSIDE.get().is_some() {
        return Ok(());
    }
    dist::start(&options)?;
    let outside = Arc::new(Outside::default());
    outside.set_probe_hook(Box::new(dist::probed));
    if let Some(wait) = dist::idle_wait() {
        outside.set_idle_wait(wait);
    }
    let _ = OUTSIDE.set(outside);
    Ok(())
}

/// `is_alive()`.
pub fn alive() -> bool {
    dist::alive()
}

pub use dist::{SendOptions, Sent};

/// `erlang:system_info(dist_buf_busy_limit)`: the outbound bytes past
/// which a connection is busy and suspends its senders.
pub const DIST_BUF_BUSY_LIMIT: usize = dist::BUSY_LIMIT;

/// `Pid ! Msg` from `from` for a pid of another node (`payload`: the
/// message in the external format).
pub fn send_to_pid(
    from: Pid,
    node_index: u32,
    id: u64,
    payload: &[u8],
    options: SendOptions,
) -> Sent {
    dist::send_to_pid(from, node_index, id, payload, options)
}

/// `{Name, Node} ! Msg` for another node.
pub fn send_to_name(
    from: Pid,
    node: Atom,
    name: Atom,
    payload: &[u8],
    options: SendOptions,
) -> Sent {
    dist::send_to_name(from, node, name, payload, options)
}

/// Whether the connection to `node` that `pid` was suspended on is
/// still busy (then `pid` will be resumed later).
pub fn still_busy(node: Atom, pid: Pid) -> bool {
    dist::still_busy(node, pid)
}

/// What epmd on a host answered to `net_adm:names`.
pub type Names = Result<Vec<(String, u16)>, &'static str>;

/// `net_adm:names(Host)` for `asker`: on a node that is not alive the
/// answer now (`Ok`, asked with bounded waits); on a live node
/// `Err(token)`, and the answer comes to `asker` from a thread of the
/// network as the message `{'$epmd_names', Token, Answer}`.
pub fn epmd_names(host: String, asker: Pid) -> Result<Names, u64> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TOKENS: AtomicU64 = AtomicU64::new(1);
    if OUTSIDE.get().is_none() {
        return Ok(dist::epmd_names(&host));
    }
    let token = TOKENS.fetch_add(1, Ordering::Relaxed) & 0x7ff_ffff;
    let asked = std::thread::Builder::new()
        .name("epmd names".into())
        .spawn(move || {
            let answer = dist::epmd_names(&host);
            let mut heap = Heap::new();
            let answer = names_term(&mut heap, &answer);
            let t = heap.tuple(&[
                Term::atom(Atom::intern("$epmd_names")),
                Term::small(token as i64),
                answer,
            ]);
            deliver(Target::Pid(asker), MessageBuffer::from_heap(heap, t));
        });
    if asked.is_err() {
        return Ok(Err("address"));
    }
    Err(token)
}

/// The heap words `names_term` takes for `names`.
pub fn names_words(names: &Names) -> usize {
    match names {
        Ok(list) => 3 + list.iter().map(|(n, _)| 2 + 3 + 2 * n.len()).sum::<usize>(),
        Err(_) => 3,
    }
}

/// `{ok, [{Name, Port}]}` or `{error, Reason}` on `heap`.
pub fn names_term(heap: &mut Heap, names: &Names) -> Term {
    match names {
        Ok(list) => {
            let entries: Vec<Term> = list
                .iter()
                .map(|(name, port)| {
                    let name = heap.string(name);
                    heap.tuple(&[name, Term::small(*port as i64)])
                })
                .collect();
            let list = heap.list(&entries);
            heap.tuple(&[Term::OK, list])
        }
        Err(reason) => heap.tuple(&[Term::atom(Atom::ERROR), Term::atom(Atom::intern(reason))]),
    }
}

/// The node's servers run (`erts_dist:spawner/0` started them): other
/// nodes may connect now.
pub fn ready() {
    dist::set_ready();
}

/// Wakes `pid`, suspended on a connection that is busy no more.
pub fn resume(pid: Pid) {
    if let Some(o) = OUTSIDE.get() {
        o.push(Target::Pid(pid), Signal::Resume);
    }
}

/// Writes what a process of another node printed here (its group
/// leader is this node's) on the connection's own thread, so the text
/// is out before any later message from that node is delivered.
pub fn print(text: &str) {
    super::output::write_text(text);
    super::output::flush();
}

/// The program ends: what is queued for other nodes goes out first
/// (for a few seconds at most).
pub fn flush() {
    if dist::alive() {
        dist::flush(dist::FLUSH_TIMEOUT);
    }
}

pub fn connect(node: Atom, waiter: Pid) -> Connect {
    dist::connect(node, waiter)
}

pub fn disconnect(node: Atom) -> bool {
    dist::disconnect(node)
}

/// The visible nodes connected (`nodes()`), or the hidden ones.
pub fn nodes(hidden: bool) -> Vec<Atom> {
    dist::nodes(hidden)
}

/// `net_kernel:monitor_nodes(Flag)`.
pub fn monitor_nodes(subscriber: Pid, on: bool) {
    dist::monitor_nodes(subscriber, on);
}

pub fn net_ticktime() -> u64 {
    dist::net_ticktime()
}

pub fn set_net_ticktime(seconds: u64) -> bool {
    dist::set_net_ticktime(seconds)
}

pub fn monitor_node(node: Atom, watcher: Pid, on: bool) {
    if on {
        dist::monitor_node(node, watcher);
    } else {
        dist::demonitor_node(node, watcher);
    }
}

pub fn cookie() -> Option<String> {
    dist::cookie()
}

pub fn set_cookie(node: Atom, cookie: &str) -> bool {
    dist::set_cookie(node, cookie)
}

/// Whether any process has a group leader on another node (one load;
/// `dist::gl`).
#[inline]
pub fn remote_group_leaders() -> bool {
    dist::gl::any()
}

/// `pid`'s group leader when it is on another node (node-table index, id).
pub fn group_leader_of(pid: Pid) -> Option<(u32, u64)> {
    dist::gl::of(pid)
}

/// `group_leader(Leader, Pid)`: `leader` a pid of another node, or `None`.
pub fn set_group_leader(pid: Pid, leader: Option<(u32, u64)>) {
    dist::gl::set(pid, leader);
}

/// A child spawned by `parent` takes its group leader on another node.
pub fn inherit_group_leader(parent: Pid, child: Pid) {
    dist::gl::inherit(parent, child);
}

/// Output of `me` to its group leader when that is on another node
/// (true: sent there as an io request).
pub fn put_chars_remote(me: Pid, text: &str) -> bool {
    dist::gl::put_chars(me, text)
}

/// Output of `me` to the pid (index, id) of another node, as an io request.
pub fn put_chars_at(me: Pid, index: u32, id: u64, text: &str) {
    dist::gl::put_chars_at(me, index, id, text);
}
