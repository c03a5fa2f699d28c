//! The shell's evaluators as processes on the scheduler runtime.
//!
//! The runtime runs on a background thread with a *server* process as its
//! main process; the line editor's thread talks to it through the
//! `'$shell'` BIFs (`bif::shell`). There is one runtime per OS process
//! (the door is one too), shared by every shell job of the user-switch
//! menu (`jobs`): the server keeps one *evaluator* process per job, which
//! runs every input of that job: it is the job's `self()`, so `spawn`,
//! `!`, `receive` and `flush()` work across inputs, as in erl. While an
//! evaluation runs the server polls for Ctrl-C and then kills the
//! evaluator and starts a new one (a new pid, and an empty mailbox, as
//! after a crash in erl). An exception is caught inside the evaluator and
//! reported; the evaluator lives on. Killing or interrupting a job from
//! the menu kills its evaluator; the job's next input gets a new one.

use crate::bif::shell as door;
use crate::heap::{Heap, MessageBuffer};
use crate::process::Process;
use crate::term::{Atom, Term};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, MutexGuard};

/// The server and evaluator, in act.
const SOURCE: &str = r#"
-module(act_shell).
-export([start/0]).

start() -> serve(#{}).

evaluator() ->
    Server = self(),
    spawn_monitor(fun() -> evaluate(Server) end).

%% Es maps each job to its evaluator {Pid, MonitorRef}.
serve(Es) ->
    case '$shell':take() of
        none ->
            receive after 2 -> serve(Es) end;
        quit ->
            ok;
        {kill, Job} ->
            case maps:find(Job, Es) of
                {ok, {Pid, Ref}} ->
                    erlang:demonitor(Ref, [flush]),
                    exit(Pid, kill);
                error ->
                    ok
            end,
            serve(maps:remove(Job, Es));
        {eval, Job, M, F, Args} ->
            {Pid, _} = E = alive(maps:get(Job, Es, none)),
            Pid ! {'$shell_eval', self(), M, F, Args},
            serve(Es#{Job => wait(E)})
    end.

%% The evaluator, or a new one if it died between inputs (an exit
%% signal from a linked process).
alive(none) ->
    evaluator();
alive({Pid, Ref} = E) ->
    receive
        {'DOWN', Ref, process, Pid, _} -> evaluator()
    after 0 -> E
    end.

wait({Pid, Ref} = E) ->
    receive
        {'$shell_result', Pid, R} ->
            '$shell':reply(R),
            E;
        {'DOWN', Ref, process, Pid, Reason} ->
            '$shell':reply({died, Reason}),
            evaluator()
    after 10 ->
        case '$shell':interrupted() of
            true ->
                exit(Pid, kill),
                receive {'DOWN', Ref, process, Pid, _} -> ok end,
                '$shell':reply(interrupted),
                evaluator();
            false ->
                wait(E)
        end
    end.

evaluate(Server) ->
    receive
        {'$shell_eval', Server, M, F, Args} ->
            R = try {value, apply(M, F, Args)}
                catch Class:Reason:Stack -> {exception, Class, Reason, Stack}
                end,
            Server ! {'$shell_result', self(), R},
            evaluate(Server)
    end.
"#;

/// What an evaluation came to, terms in the reply's buffer.
pub enum Reply {
    /// `{value, V}`: the function returned V.
    Value(MessageBuffer),
    /// `{exception, Class, Reason, Stack}`.
    Exception(MessageBuffer),
    /// Ctrl-C stopped it.
    Interrupted,
    /// The evaluator died of an exit signal (`{died, Reason}`).
    Died(MessageBuffer),
    /// The runtime ended (`halt(Status)`) with this status.
    Ended(i32),
}

/// The running runtime, seen from the editor's thread.
pub struct Server {
    replies: Receiver<MessageBuffer>,
    ended: Option<i32>,
}

impl Server {
    /// Compiles the server, starts the runtime on a background thread
    /// with the server as its main process.
    pub fn start() -> Result<Server, String> {
        let module = crate::runtime::script::compile_source(SOURCE, "act_shell", "act_shell")?;
        let module = crate::runtime::load(module);
        let key = (Atom::intern("start"), 0);
        let index = *module
            .local_functions
            .get(&key)
            .ok_or("the shell server has no start/0")?;
        let entry = module.functions[index as usize].entry;
        let process = Process::new(module, entry);
        let replies = door::open();
        let (config, _) = crate::runtime::processes::configured();
        std::thread::Builder::new()
            .name("act shell runtime".to_string())
            .spawn(move || {
                let status =
                    crate::runtime::processes::run_main(config, process, Vec::new(), false);
                door::finish(status);
            })
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        Ok(Server {
            replies,
            ended: None,
        })
    }

    /// Whether the runtime has ended, and with which status.
    pub fn ended(&self) -> Option<i32> {
        self.ended
    }

    /// Runs `module:function(Args...)` in the evaluator of shell job `job`, `args` being
    /// terms on `heap`, and waits for the outcome. With `history`, one
    /// more argument follows: the list of `{N, Value}` results (on `heap`
    /// too), for `v(N)` inside expressions.
    pub fn call(
        &mut self,
        job: u32,
        module: Atom,
        function: Atom,
        heap: &Heap,
        args: &[Term],
        history: Option<&[(u64, Term)]>,
    ) -> Reply {
        if let Some(status) = self.ended {
            return Reply::Ended(status);
        }
        let size = |t: Term| crate::heap::size_of(heap, t).unwrap_or(0);
        let entries = history.unwrap_or(&[]);
        let words: usize = args
            .iter()
            .map(|&a| size(a))
            .chain(entries.iter().map(|&(_, v)| size(v) + 3 + 2))
            .fold(0usize, usize::saturating_add)
            .saturating_add(2 * args.len() + 8 + 2);
        let mut temp = Heap::new();
        if temp.ensure(words, &mut []).is_err() {
            return Reply::Interrupted;
        }
        let mut copied: Vec<Term> = args
            .iter()
            .map(|&a| crate::heap::copy_term(heap, a, &mut temp))
            .collect();
        if history.is_some() {
            let pairs: Vec<Term> = entries
                .iter()
                .map(|&(n, v)| {
                    let v = crate::heap::copy_term(heap, v, &mut temp);
                    temp.tuple(&[Term::small(n as i64), v])
                })
                .collect();
            copied.push(temp.list(&pairs));
        }
        let list = temp.list(&copied);
        let request = temp.tuple(&[
            Term::atom(Atom::intern("eval")),
            Term::small(i64::from(job)),
            Term::atom(module),
            Term::atom(function),
            list,
        ]);
        let Ok(buffer) = MessageBuffer::copy_from(&temp, request) else {
            return Reply::Interrupted;
        };
        // A Ctrl-C from before this evaluation must not stop it.
        door::INTERRUPTED.store(false, std::sync::atomic::Ordering::SeqCst);
        door::request(buffer);
        self.wait()
    }

    fn wait(&mut self) -> Reply {
        let Ok(reply) = self.replies.recv() else {
            self.ended = Some(1);
            return Reply::Ended(1);
        };
        let t = reply.term();
        if let Some(status) = t.as_small() {
            self.ended = Some(status as i32);
            return Reply::Ended(status as i32);
        }
        if t == Term::atom(Atom::intern("interrupted")) {
            return Reply::Interrupted;
        }
        let tag = reply
            .heap()
            .and_then(|h| h.as_tuple(t))
            .and_then(|e| e.first().copied())
            .and_then(Term::as_atom);
        match tag.map(Atom::name) {
            Some("value") => Reply::Value(reply),
            Some("exception") => Reply::Exception(reply),
            _ => Reply::Died(reply),
        }
    }

    /// Asks the server to stop (q()).
    pub fn quit(&mut self) {
        door::request(MessageBuffer::immediate(Term::atom(Atom::intern("quit"))));
    }

    /// Kills the evaluator of shell job `job`, if it has one; its next
    /// input starts a new one.
    pub fn kill(&mut self, job: u32) {
        let mut heap = Heap::new();
        let request = heap.tuple(&[
            Term::atom(Atom::intern("kill")),
            Term::small(i64::from(job)),
        ]);
        if let Ok(buffer) = MessageBuffer::copy_from(&heap, request) {
            door::request(buffer);
        }
    }
}

/// The runtime of this OS process, once started: every shell job uses it.
fn shared() -> MutexGuard<'static, Option<Server>> {
    static SERVER: Mutex<Option<Server>> = Mutex::new(None);
    SERVER.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on the shared runtime, starting it on first use.
pub fn with_server<R>(f: impl FnOnce(&mut Server) -> R) -> Result<R, String> {
    let mut server = shared();
    if server.is_none() {
        *server = Some(Server::start()?);
    }
    match server.as_mut() {
        Some(s) => Ok(f(s)),
        None => Err("** the shell has no runtime\n".to_string()),
    }
}

/// Runs `f` on the shared runtime if it has been started.
pub fn if_started(f: impl FnOnce(&mut Server)) {
    if let Some(s) = shared().as_mut() {
        f(s);
    }
}
