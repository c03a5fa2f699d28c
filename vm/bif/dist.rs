//! The distribution BIFs: `node()`, `nodes()`, `is_alive()`, cookies,
//! `monitor_node/2`, `disconnect_node/1` and the non-blocking connect
//! under `net_kernel:connect_node/1` (stdlib/net_kernel.act). They reach
//! the network only through `runtime::nodes`.

use super::erlang::list_elements;
use super::process::services;
use super::{BifError, BifResult, Context};
use crate::runtime::nodes::{self, Connect};
use crate::term::node;
use crate::term::view::View;
use crate::term::{Atom, Term};

fn this_name() -> Term {
    Term::atom(node::this_node().name)
}

pub fn node_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(this_name())
}

/// `node(Arg)`: the node a pid or reference belongs to.
pub fn node_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    match ctx.process.heap.view(args[0]) {
        View::Pid(_) | View::Ref(_) => Ok(this_name()),
        View::ExtPid { node, .. } | View::ExtRef { node, .. } => {
            Ok(Term::atom(node::entry(node).name))
        }
        _ => Err(BifError::Badarg),
    }
}

pub fn is_alive_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::boolean(nodes::alive()))
}

fn atom_list(ctx: &mut Context, args: &mut [Term], atoms: &[Atom]) -> BifResult {
    ctx.ensure(2 * atoms.len(), args)?;
    let terms: Vec<Term> = atoms.iter().map(|&a| Term::atom(a)).collect();
    Ok(ctx.heap().list(&terms))
}

pub fn nodes_0(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    atom_list(ctx, args, &nodes::nodes(false))
}

/// `nodes(Kind)` or `nodes([Kind])`: `visible` the connected visible
/// nodes, `hidden` the nodes connected as hidden ones (act itself always
/// connects as a visible node), `connected` and `known` both, `this`
/// this node when alive.
pub fn nodes_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let kinds = if args[0].is_atom() {
        vec![args[0]]
    } else {
        list_elements(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?
    };
    let (mut this, mut visible, mut hidden) = (false, false, false);
    for k in kinds {
        match k.as_atom().map(|a| a.name()) {
            Some("this") => this = true,
            Some("visible") => visible = true,
            Some("hidden") => hidden = true,
            Some("connected" | "known") => (visible, hidden) = (true, true),
            _ => return Err(BifError::Badarg),
        }
    }
    let mut list = Vec::new();
    if this && nodes::alive() {
        list.push(node::this_node().name);
    }
    if visible {
        list.extend(nodes::nodes(false));
    }
    if hidden {
        list.extend(nodes::nodes(true));
    }
    atom_list(ctx, args, &list)
}

/// `erlang:'$dist_connect'(Node)`: `true`, `false`, or `wait` when a
/// handshake is under way (then `{'$dist_connected', Node, Bool}` comes).
pub fn dist_connect_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let peer = args[0].as_atom().ok_or(BifError::Badarg)?;
    let me = services(|s| s.self_pid());
    Ok(match nodes::connect(peer, me) {
        Connect::Yes => Term::TRUE,
        Connect::No => Term::FALSE,
        Connect::Wait => Term::atom(Atom::intern("wait")),
    })
}

pub fn disconnect_node_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let peer = args[0].as_atom().ok_or(BifError::Badarg)?;
    if !nodes::alive() {
        return Ok(Term::atom(Atom::intern("ignored")));
    }
    Ok(Term::boolean(nodes::disconnect(peer)))
}

/// `monitor_node(Node, Flag)`.
pub fn monitor_node_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let peer = args[0].as_atom().ok_or(BifError::Badarg)?;
    let on = args[1].as_bool().ok_or(BifError::Badarg)?;
    let me = services(|s| s.self_pid());
    nodes::monitor_node(peer, me, on);
    Ok(Term::TRUE)
}

/// `erlang:'$dist_monitor_nodes'(Flag)`, under
/// `net_kernel:monitor_nodes/1`: `{nodeup, Node}` and `{nodedown, Node}`
/// reach the caller for visible nodes while on.
pub fn dist_monitor_nodes_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let on = args[0].as_bool().ok_or(BifError::Badarg)?;
    let me = services(|s| s.self_pid());
    nodes::monitor_nodes(me, on);
    Ok(Term::atom(Atom::intern("ok")))
}

/// `net_kernel:get_net_ticktime()`.
pub fn get_net_ticktime_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(Term::small(nodes::net_ticktime() as i64))
}

/// `erlang:'$dist_set_net_ticktime'(Seconds)` under
/// `net_kernel:set_net_ticktime/1`: `change_initiated` or `unchanged`.
pub fn dist_set_net_ticktime_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let seconds = args[0].as_small().ok_or(BifError::Badarg)?;
    if !(1..=1_000_000).contains(&seconds) {
        return Err(BifError::Badarg);
    }
    Ok(Term::atom(Atom::intern(
        if nodes::set_net_ticktime(seconds as u64) {
            "change_initiated"
        } else {
            "unchanged"
        },
    )))
}

pub fn get_cookie_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    Ok(match nodes::cookie() {
        Some(c) => Term::atom(Atom::try_intern(&c).ok_or(BifError::SystemLimit)?),
        None => Term::atom(Atom::intern("nocookie")),
    })
}

/// `erlang:set_cookie(Cookie)`: this node's cookie.
pub fn set_cookie_1(_: &mut Context, args: &mut [Term]) -> BifResult {
    let cookie = args[0].as_atom().ok_or(BifError::Badarg)?;
    if !nodes::set_cookie(node::this_node().name, cookie.name()) {
        return Err(BifError::Badarg);
    }
    Ok(Term::TRUE)
}

/// `erlang:set_cookie(Node, Cookie)`: the cookie towards `Node` (this
/// node's own cookie when `Node` is `node()`).
pub fn set_cookie_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let (peer, cookie) = (
        args[0].as_atom().ok_or(BifError::Badarg)?,
        args[1].as_atom().ok_or(BifError::Badarg)?,
    );
    if !nodes::set_cookie(peer, cookie.name()) {
        return Err(BifError::Badarg);
    }
    Ok(Term::TRUE)
}

/// `erlang:'$dist_spawn_request'(Node, M, F, Args, Options)`, under
/// `spawn/4` and friends on another node (stdlib/erts_dist.act): sends
/// the request and answers its reference; `{'$spawn_reply', Ref, ok,
/// Pid}` or `{'$spawn_reply', Ref, error, Reason}` follows. `Options`:
/// `link`, `monitor`, `noreply` (none follows).
pub fn dist_spawn_request_5(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let (Some(peer), Some(m), Some(f)) = (args[0].as_atom(), args[1].as_atom(), args[2].as_atom())
    else {
        return Err(BifError::Badarg);
    };
    let arity = list_elements(&ctx.process.heap, args[3])
        .ok_or(BifError::Badarg)?
        .len() as u32;
    let mut options = nodes::SpawnOptions::default();
    for o in list_elements(&ctx.process.heap, args[4]).ok_or(BifError::Badarg)? {
        match o.as_atom().map(|a| a.name()) {
            Some("link") => options.link = true,
            Some("monitor") => options.monitor = true,
            Some("noreply") => options.noreply = true,
            _ => return Err(BifError::Badarg),
        }
    }
    let payload = super::process::external(ctx, args[3])?;
    let (me, id) = services(|s| (s.self_pid(), s.make_ref()));
    ctx.process.mailbox.set_mark(id);
    nodes::spawn_request(me, peer, (m, f, arity), &payload, options, id);
    ctx.ensure(crate::heap::REF_WORDS, args)?;
    Ok(ctx.heap().reference(id))
}

/// `erlang:'$epmd_names'(Host)`, under `net_adm:names/1`: the answer
/// (`{ok, Names}`, `{error, Reason}`), or on a live node `{wait, Token}`
/// and the answer comes as `{'$epmd_names', Token, Answer}`.
pub fn epmd_names_1(ctx: &mut Context, args: &mut [Term]) -> BifResult {
    let chars = list_elements(&ctx.process.heap, args[0]).ok_or(BifError::Badarg)?;
    let host: String = chars
        .iter()
        .map(|c| c.as_small().and_then(|c| char::from_u32(c as u32)))
        .collect::<Option<String>>()
        .ok_or(BifError::Badarg)?;
    match nodes::epmd_names(host, services(|s| s.self_pid())) {
        Ok(names) => {
            ctx.ensure(nodes::names_words(&names), args)?;
            Ok(nodes::names_term(ctx.heap(), &names))
        }
        Err(token) => {
            ctx.ensure(3, args)?;
            Ok(ctx
                .heap()
                .tuple(&[Term::atom(Atom::intern("wait")), Term::small(token as i64)]))
        }
    }
}

/// `erlang:'$dist_ready'()`: the spawner has started this node's servers
/// (global, rex, the io server); connections are made from now on.
pub fn dist_ready_0(_: &mut Context, _: &mut [Term]) -> BifResult {
    nodes::ready();
    Ok(Term::TRUE)
}

/// `erlang:'$dist_spawned'(Token, Pid)`: the spawner made `Pid` for
/// another node's spawn request `Token` (`Pid` not a pid: it failed).
pub fn dist_spawned_2(_: &mut Context, args: &mut [Term]) -> BifResult {
    let token = args[0].as_small().ok_or(BifError::Badarg)?;
    let child = crate::sched::Pid::from_term(args[1]);
    nodes::spawned(token as u64, child);
    Ok(Term::TRUE)
}
