//! Stress tests of the process runtime (vm/sched) with mock processes, each
//! under 1, 2 and 4 schedulers, each with a watchdog that aborts the test
//! binary if a scenario hangs. They assert results, never times.
//! (Under `--cfg loom` the runtime's atomics are loom's, usable only inside
//! a loom model, so this binary is empty then.)
#![cfg(not(loom))]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use act::sched::{Config, Delivery, Finish, Pid, ProcessBody, RunContext, RunOutcome, Signal, run};

mod support;

/// A message: a number and, optionally, a token whose count shows whether
/// every message was freed.
#[derive(Clone, Debug)]
struct Msg(
    u64,
    #[expect(dead_code, reason = "held only to count drops")] Option<Arc<()>>,
);

fn msg(n: u64) -> Msg {
    Msg(n, None)
}

type Step = Box<dyn FnMut(&mut RunContext<'_, Mock>, u32) -> RunOutcome<Msg> + Send>;
type Hook = Box<dyn FnMut(&mut RunContext<'_, Mock>, &Msg) + Send>;

/// A process whose run step is a closure, with an optional exit hook.
struct Mock {
    step: Step,
    on_exit: Option<Hook>,
}

impl ProcessBody for Mock {
    type Message = Msg;
    type Registers = ();
    fn run(&mut self, ctx: &mut RunContext<'_, Self>, _: &mut (), budget: u32) -> RunOutcome<Msg> {
        (self.step)(ctx, budget)
    }
    fn on_exit(&mut self, ctx: &mut RunContext<'_, Self>, reason: &Msg) {
        if let Some(hook) = &mut self.on_exit {
            hook(ctx, reason);
        }
    }
}

fn mock(
    step: impl FnMut(&mut RunContext<'_, Mock>, u32) -> RunOutcome<Msg> + Send + 'static,
) -> Mock {
    Mock {
        step: Box::new(step),
        on_exit: None,
    }
}

/// The tests share two cores: run one scenario at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `scenario` under 1, 2 and 4 schedulers, aborting the whole test
/// binary if one run takes longer than `seconds`.
fn under_each_scheduler_count(name: &str, seconds: u64, scenario: impl Fn(usize)) {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for schedulers in [1, 2, 4] {
        let (done, watched) = mpsc::channel::<()>();
        let label = format!("{name} with {schedulers} schedulers");
        let watchdog = std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) =
                watched.recv_timeout(Duration::from_secs(seconds))
            {
                eprintln!("stress test hung: {label} (over {seconds} s)");
                std::process::abort();
            }
        });
        scenario(schedulers);
        let _ = done.send(());
        let _ = watchdog.join();
    }
}

fn config(schedulers: usize) -> Config {
    Config {
        schedulers,
        ..Config::default()
    }
}

/// How main ended, after checking that no process was ever queued twice.
fn outcome(finished: act::sched::Finished<Msg>) -> u64 {
    assert_eq!(
        finished.stats.queued_twice(),
        0,
        "a process was queued twice"
    );
    main_reason(finished.finish)
}

fn main_reason(finish: Finish<Msg>) -> u64 {
    match finish {
        Finish::MainExited(Msg(r, _)) => r,
        other => panic!("the program did not end by main exiting: {other:?}"),
    }
}

/// Charges one reduction and says whether the budget is used up.
fn spend(ctx: &mut RunContext<'_, Mock>, used: &mut u32, budget: u32) -> bool {
    ctx.charge(1);
    *used += 1;
    *used >= budget
}

#[test]
fn many_senders_to_one_receiver_lose_nothing_and_keep_each_senders_order() {
    const SENDERS: u64 = 200;
    const EACH: u64 = 5_000;
    under_each_scheduler_count("200 x 5000 to one", 120, |n| {
        let finished = run(config(n), |_| {
            let mut started = false;
            let mut next = vec![0u64; SENDERS as usize];
            let mut received = 0u64;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let me = ctx.pid();
                    for s in 0..SENDERS {
                        let mut i = 0;
                        ctx.spawn(move |_| {
                            mock(move |ctx, budget| {
                                let mut used = 0;
                                while i < EACH {
                                    ctx.send_message(me, msg(s << 32 | i));
                                    i += 1;
                                    if spend(ctx, &mut used, budget) {
                                        return RunOutcome::Yield;
                                    }
                                }
                                RunOutcome::Exit(msg(0))
                            })
                        })
                        .expect("spawn");
                    }
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(Msg(m, _)) = signal {
                        let (s, i) = ((m >> 32) as usize, m & 0xffff_ffff);
                        if next[s] != i {
                            // Out of order: end with a reason the test rejects.
                            return RunOutcome::Exit(msg(u64::MAX));
                        }
                        next[s] += 1;
                        received += 1;
                    }
                }
                if received == SENDERS * EACH {
                    RunOutcome::Exit(msg(received))
                } else {
                    RunOutcome::Wait
                }
            })
        });
        assert_eq!(outcome(finished), SENDERS * EACH, "with {n} schedulers");
    });
}

#[test]
fn a_hundred_ping_pong_pairs_race_to_the_end() {
    const PAIRS: u64 = 100;
    const ROUNDS: u64 = 2_000;
    under_each_scheduler_count("100 ping-pong pairs", 120, |n| {
        let finished = run(config(n), |_| {
            let mut started = false;
            let mut reports = 0;
            let mut total = 0;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let main = ctx.pid();
                    for _ in 0..PAIRS {
                        let ponger = ctx
                            .spawn(|_| {
                                mock(|ctx, _| {
                                    while let Some(signal) = ctx.take_signal() {
                                        match signal {
                                            Signal::Message(Msg(0, _)) => {
                                                return RunOutcome::Exit(msg(0));
                                            }
                                            Signal::Message(Msg(from, _)) => {
                                                ctx.send_message(Pid::from_id(from), msg(1));
                                            }
                                            _ => {}
                                        }
                                    }
                                    RunOutcome::Wait
                                })
                            })
                            .expect("spawn");
                        let mut sent = 0;
                        let mut answered = 0;
                        ctx.spawn(move |_| {
                            mock(move |ctx, _| {
                                let me = ctx.pid().id();
                                if sent == 0 {
                                    sent = 1;
                                    ctx.send_message(ponger, msg(me));
                                }
                                while let Some(signal) = ctx.take_signal() {
                                    if let Signal::Message(_) = signal {
                                        answered += 1;
                                        if answered == ROUNDS {
                                            ctx.send_message(ponger, msg(0));
                                            ctx.send_message(main, msg(answered));
                                            return RunOutcome::Exit(msg(0));
                                        }
                                        ctx.send_message(ponger, msg(me));
                                    }
                                }
                                RunOutcome::Wait
                            })
                        })
                        .expect("spawn");
                    }
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(Msg(m, _)) = signal {
                        reports += 1;
                        total += m;
                    }
                }
                if reports == PAIRS {
                    RunOutcome::Exit(msg(total))
                } else {
                    RunOutcome::Wait
                }
            })
        });
        assert_eq!(outcome(finished), PAIRS * ROUNDS, "with {n} schedulers");
    });
}

#[test]
fn a_million_spawns_all_run_and_report() {
    const SPAWNS: u64 = 1_000_000;
    under_each_scheduler_count("1,000,000 spawns", 300, |n| {
        let finished = run(config(n), |_| {
            let mut spawned = 0;
            let mut reported = 0;
            mock(move |ctx, budget| {
                let me = ctx.pid();
                let mut used = 0;
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(_) = signal {
                        reported += 1;
                    }
                }
                while spawned < SPAWNS {
                    ctx.spawn(move |_| {
                        mock(move |ctx, _| {
                            ctx.send_message(me, msg(1));
                            RunOutcome::Exit(msg(0))
                        })
                    })
                    .expect("spawn");
                    spawned += 1;
                    if spend(ctx, &mut used, budget) {
                        return RunOutcome::Yield;
                    }
                }
                if reported == SPAWNS {
                    RunOutcome::Exit(msg(reported))
                } else {
                    RunOutcome::Wait
                }
            })
        });
        assert_eq!(finished.stats.spawned(), SPAWNS, "spawn count in the stats");
        assert_eq!(outcome(finished), SPAWNS, "with {n} schedulers");
    });
}

/// A process in a link storm: it keeps its links; an exit signal kills it,
/// and its exit hook sends exit signals to all its links.
fn linked(links: Vec<Pid>, deaths: Arc<AtomicU64>, total: u64, main: Pid) -> Mock {
    let links = Arc::new(Mutex::new(links));
    let hook_links = Arc::clone(&links);
    Mock {
        step: Box::new(move |ctx, _| {
            let mut links = links.lock().unwrap_or_else(|e| e.into_inner());
            while let Some(signal) = ctx.take_signal() {
                match signal {
                    Signal::Link(from) => links.push(from),
                    Signal::Exit { from, reason, .. } => {
                        links.retain(|&p| p != from);
                        return RunOutcome::Exit(reason);
                    }
                    _ => {}
                }
            }
            RunOutcome::Wait
        }),
        on_exit: Some(Box::new(move |ctx, reason| {
            let me = ctx.pid();
            let links = std::mem::take(&mut *hook_links.lock().unwrap_or_else(|e| e.into_inner()));
            for to in links {
                ctx.send(
                    to,
                    Signal::Exit {
                        from: me,
                        reason: reason.clone(),
                        linked: true,
                    },
                );
            }
            if deaths.fetch_add(1, Ordering::SeqCst) + 1 == total {
                ctx.send_message(main, msg(total));
            }
        })),
    }
}

#[test]
fn a_link_storm_kills_every_linked_process_exactly_once() {
    const PROCESSES: u64 = 20_000;
    under_each_scheduler_count("link storm", 120, |n| {
        let deaths = Arc::new(AtomicU64::new(0));
        let d = Arc::clone(&deaths);
        let finished = run(config(n), move |_| {
            let mut started = false;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let main = ctx.pid();
                    // A binary tree: process i links to its parent (i-1)/2,
                    // both ways, set up by the child at spawn time.
                    let mut pids: Vec<Pid> = Vec::with_capacity(PROCESSES as usize);
                    for i in 0..PROCESSES as usize {
                        let parent = if i == 0 {
                            None
                        } else {
                            Some(pids[(i - 1) / 2])
                        };
                        let links: Vec<Pid> = parent.into_iter().collect();
                        let d = Arc::clone(&d);
                        let pid = ctx
                            .spawn(move |_| linked(links, d, PROCESSES, main))
                            .expect("spawn");
                        if let Some(parent) = parent {
                            // Sent on the child's behalf, before anything can die.
                            assert_eq!(ctx.send(parent, Signal::Link(pid)), Delivery::Delivered);
                        }
                        pids.push(pid);
                    }
                    // Kill a leaf: the storm spreads up to the root and down
                    // to every other branch.
                    let leaf = pids[pids.len() - 1];
                    ctx.send(
                        leaf,
                        Signal::Exit {
                            from: main,
                            reason: msg(99),
                            linked: false,
                        },
                    );
                }
                match ctx.take_signal() {
                    Some(Signal::Message(Msg(m, _))) => RunOutcome::Exit(msg(m)),
                    _ => RunOutcome::Wait,
                }
            })
        });
        assert_eq!(outcome(finished), PROCESSES, "with {n} schedulers");
        assert_eq!(
            deaths.load(Ordering::SeqCst),
            PROCESSES,
            "a process died twice or not at all"
        );
    });
}

#[test]
fn spinners_do_not_starve_a_sleeper() {
    under_each_scheduler_count("spinners vs sleeper", 60, |n| {
        let finished = run(config(n), |_| {
            let mut started_at = None;
            mock(move |ctx, _| {
                if started_at.is_none() {
                    for _ in 0..(2 * n + 2) {
                        ctx.spawn(|_| {
                            mock(|ctx, budget| {
                                ctx.charge(budget);
                                RunOutcome::Yield
                            })
                        })
                        .expect("spawn");
                    }
                    started_at = Some(ctx.now_ms());
                    ctx.set_timer(50, 1);
                    return RunOutcome::Wait;
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Timeout(1) = signal {
                        return RunOutcome::Exit(msg(ctx.now_ms() - started_at.unwrap_or(0)));
                    }
                }
                RunOutcome::Wait
            })
        });
        // The watchdog fails a starved sleeper; here: it did wake, not early.
        assert!(outcome(finished) >= 50);
    });
}

#[test]
fn processes_exiting_with_messages_in_flight_free_every_message() {
    const RECEIVERS: u64 = 200;
    const SENDERS: u64 = 20;
    const EACH: u64 = 2_000;
    under_each_scheduler_count("exits with messages in flight", 120, |n| {
        let token = Arc::new(());
        let delivered = Arc::new(AtomicU64::new(0));
        let refused = Arc::new(AtomicU64::new(0));
        let (t, dl, rf) = (
            Arc::clone(&token),
            Arc::clone(&delivered),
            Arc::clone(&refused),
        );
        let finished = run(config(n), move |_| {
            let mut started = false;
            let mut done = 0;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let main = ctx.pid();
                    // Receivers die after a few messages, at different times.
                    let receivers: Vec<Pid> = (0..RECEIVERS)
                        .map(|r| {
                            let mut seen = 0;
                            ctx.spawn(move |_| {
                                mock(move |ctx, _| {
                                    while ctx.take_signal().is_some() {
                                        seen += 1;
                                        if seen > r * 3 {
                                            return RunOutcome::Exit(msg(0));
                                        }
                                    }
                                    RunOutcome::Wait
                                })
                            })
                            .expect("spawn")
                        })
                        .collect();
                    let receivers = Arc::new(receivers);
                    for s in 0..SENDERS {
                        let (receivers, t, dl, rf) = (
                            Arc::clone(&receivers),
                            Arc::clone(&t),
                            Arc::clone(&dl),
                            Arc::clone(&rf),
                        );
                        let mut i = 0;
                        ctx.spawn(move |_| {
                            mock(move |ctx, budget| {
                                let mut used = 0;
                                while i < EACH {
                                    let to = receivers[((s * 7919 + i) % RECEIVERS) as usize];
                                    match ctx.send_message(to, Msg(i, Some(Arc::clone(&t)))) {
                                        Delivery::Delivered => dl.fetch_add(1, Ordering::Relaxed),
                                        Delivery::NoProcess => rf.fetch_add(1, Ordering::Relaxed),
                                    };
                                    i += 1;
                                    // Sends cost 20 here, so senders yield often
                                    // and receivers die between their slices.
                                    ctx.charge(19);
                                    used += 19;
                                    if spend(ctx, &mut used, budget) {
                                        return RunOutcome::Yield;
                                    }
                                }
                                ctx.send_message(main, msg(1));
                                RunOutcome::Exit(msg(0))
                            })
                        })
                        .expect("spawn");
                    }
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(_) = signal {
                        done += 1;
                    }
                }
                if done == SENDERS {
                    RunOutcome::Exit(msg(done))
                } else {
                    RunOutcome::Wait
                }
            })
        });
        assert_eq!(outcome(finished), SENDERS, "with {n} schedulers");
        let accounted = delivered.load(Ordering::SeqCst) + refused.load(Ordering::SeqCst);
        assert_eq!(
            accounted,
            SENDERS * EACH,
            "a send was neither delivered nor refused"
        );
        assert!(
            refused.load(Ordering::SeqCst) > 0,
            "no send raced an exit; the test tests nothing"
        );
        assert_eq!(
            Arc::strong_count(&token),
            1,
            "messages to dead processes leaked"
        );
    });
}

#[test]
fn main_exiting_ends_the_program_whatever_else_runs() {
    under_each_scheduler_count("main exit stops all", 30, |n| {
        let finished = run(config(n), |_| {
            let mut started = false;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    for _ in 0..100 {
                        ctx.spawn(|_| {
                            mock(|ctx, budget| {
                                ctx.charge(budget);
                                RunOutcome::Yield
                            })
                        })
                        .expect("spawn");
                        ctx.spawn(|_| {
                            mock(|ctx, _| {
                                ctx.set_timer(3_600_000, 1);
                                RunOutcome::Wait
                            })
                        })
                        .expect("spawn");
                    }
                    ctx.set_timer(20, 1);
                    return RunOutcome::Wait;
                }
                RunOutcome::Exit(msg(5))
            })
        });
        assert_eq!(outcome(finished), 5);
    });
}

/// CPU time (user + system) of this whole test process so far.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which ends with ')'): utime and stime
    // are the 12th and 13th of them, in clock ticks (100 per second here).
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

#[test]
fn a_program_whose_processes_all_wait_on_timers_uses_no_cpu() {
    under_each_scheduler_count("idle on timers", 30, |n| {
        let before = cpu_time();
        let wall = std::time::Instant::now();
        let finished = run(config(n), |_| {
            let mut started = false;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    for _ in 0..20 {
                        ctx.spawn(|_| {
                            mock(|ctx, _| {
                                ctx.set_timer(3_600_000, 1);
                                RunOutcome::Wait
                            })
                        })
                        .expect("spawn");
                    }
                    ctx.set_timer(400, 1);
                    return RunOutcome::Wait;
                }
                match ctx.take_signal() {
                    Some(Signal::Timeout(_)) => RunOutcome::Exit(msg(0)),
                    _ => RunOutcome::Wait,
                }
            })
        });
        assert_eq!(outcome(finished), 0);
        let elapsed = wall.elapsed();
        if let (Some(before), Some(after)) = (before, cpu_time()) {
            let used = after.saturating_sub(before);
            assert!(
                used < elapsed / 4,
                "{n} schedulers burned {used:?} of CPU while waiting {elapsed:?} on timers"
            );
        }
    });
}

/// Round trips of 100 ping-pong pairs: prints the throughput, asserts the
/// count. Run by hand: `cargo test --release --test stress measure -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn measure_ping_pong_and_spawn_throughput() {
    for schedulers in [1, 2, 4] {
        for pairs in [1u64, 100] {
            let rounds = 2_000_000 / pairs;
            let wall = std::time::Instant::now();
            let finished = run(config(schedulers), move |_| ping_pong_main(pairs, rounds));
            let elapsed = wall.elapsed();
            let steals = finished.stats.steals();
            assert_eq!(outcome(finished), pairs * rounds);
            let hops = 2 * pairs * rounds;
            eprintln!(
                "{schedulers} schedulers, {pairs:3} pairs: {:6.1} ns per message ({:.1} M msgs/s), steals {}",
                elapsed.as_nanos() as f64 / hops as f64,
                hops as f64 / elapsed.as_secs_f64() / 1e6,
                steals
            );
        }
        let wall = std::time::Instant::now();
        let spawns = 1_000_000u64;
        let finished = run(config(schedulers), move |_| {
            let mut spawned = 0;
            mock(move |ctx, budget| {
                let mut used = 0;
                while spawned < spawns {
                    ctx.spawn(|_| mock(|_, _| RunOutcome::Exit(msg(0))))
                        .expect("spawn");
                    spawned += 1;
                    if spend(ctx, &mut used, budget) {
                        return RunOutcome::Yield;
                    }
                }
                RunOutcome::Exit(msg(spawned))
            })
        });
        assert_eq!(outcome(finished), spawns);
        eprintln!(
            "{schedulers} schedulers: spawn and exit {:.1} ns each",
            wall.elapsed().as_nanos() as f64 / spawns as f64
        );
    }
}

/// A main process that runs `pairs` ping-pong pairs for `rounds` round trips
/// each and exits with the number of round trips made.
fn ping_pong_main(pairs: u64, rounds: u64) -> Mock {
    let mut started = false;
    let mut reports = 0;
    let mut total = 0;
    mock(move |ctx, _| {
        if !started {
            started = true;
            let main = ctx.pid();
            for _ in 0..pairs {
                let ponger = ctx
                    .spawn(|_| {
                        mock(|ctx, _| {
                            while let Some(signal) = ctx.take_signal() {
                                match signal {
                                    Signal::Message(Msg(0, _)) => return RunOutcome::Exit(msg(0)),
                                    Signal::Message(Msg(from, _)) => {
                                        ctx.charge(1);
                                        ctx.send_message(Pid::from_id(from), msg(1));
                                    }
                                    _ => {}
                                }
                            }
                            RunOutcome::Wait
                        })
                    })
                    .expect("spawn");
                let mut sent = false;
                let mut answered = 0;
                ctx.spawn(move |_| {
                    mock(move |ctx, _| {
                        let me = ctx.pid().id();
                        if !sent {
                            sent = true;
                            ctx.send_message(ponger, msg(me));
                        }
                        while let Some(signal) = ctx.take_signal() {
                            if let Signal::Message(_) = signal {
                                answered += 1;
                                ctx.charge(1);
                                if answered == rounds {
                                    ctx.send_message(ponger, msg(0));
                                    ctx.send_message(main, msg(answered));
                                    return RunOutcome::Exit(msg(0));
                                }
                                ctx.send_message(ponger, msg(me));
                            }
                        }
                        RunOutcome::Wait
                    })
                })
                .expect("spawn");
            }
        }
        while let Some(signal) = ctx.take_signal() {
            if let Signal::Message(Msg(m, _)) = signal {
                reports += 1;
                total += m;
            }
        }
        if reports == pairs {
            RunOutcome::Exit(msg(total))
        } else {
            RunOutcome::Wait
        }
    })
}

#[test]
fn a_ping_pong_pair_in_the_next_slot_cannot_starve_the_others() {
    under_each_scheduler_count("next slot cap", 30, |n| {
        let finished = run(config(n), |_| {
            let mut started = false;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let main = ctx.pid();
                    // A pair that bounces a message forever, each wake-up
                    // putting the other in the next slot.
                    let bouncer = |ctx: &mut RunContext<'_, Mock>, partner: &mut Option<Pid>| {
                        while let Some(signal) = ctx.take_signal() {
                            if let Signal::Message(Msg(from, _)) = signal {
                                let to = *partner.get_or_insert(Pid::from_id(from));
                                ctx.send_message(to, msg(ctx.pid().id()));
                            }
                        }
                        RunOutcome::Wait
                    };
                    let mut b_partner = None;
                    let b = ctx
                        .spawn(move |_| mock(move |ctx, _| bouncer(ctx, &mut b_partner)))
                        .expect("spawn");
                    let mut a_partner = Some(b);
                    let mut a_started = false;
                    ctx.spawn(move |_| {
                        mock(move |ctx, _| {
                            if !a_started {
                                a_started = true;
                                ctx.send_message(b, msg(ctx.pid().id()));
                            }
                            bouncer(ctx, &mut a_partner)
                        })
                    })
                    .expect("spawn");
                    // Queued behind the pair: it must still get to run.
                    ctx.spawn(move |_| {
                        mock(move |ctx, _| {
                            ctx.send_message(main, msg(1));
                            RunOutcome::Exit(msg(0))
                        })
                    })
                    .expect("spawn");
                }
                match ctx.take_signal() {
                    Some(Signal::Message(Msg(1, _))) => RunOutcome::Exit(msg(1)),
                    _ => RunOutcome::Wait,
                }
            })
        });
        assert_eq!(outcome(finished), 1);
    });
}

/// How many schedulers ran at least one process.
fn schedulers_that_ran(stats: &act::sched::Stats) -> usize {
    stats.schedulers.iter().filter(|c| c.runs > 0).count()
}

/// A chameneos-like broker: clients ask it for a meeting, it pairs each
/// two requests and answers both, who ask again at once. After `meetings`
/// meetings it reports to main. Every meeting is a hand-off through one
/// process: there is no parallel work in it.
fn broker_main(clients: u64, meetings: u64) -> Mock {
    let mut started = false;
    mock(move |ctx, _| {
        if !started {
            started = true;
            let main = ctx.pid();
            let mut waiting: Option<Pid> = None;
            let mut met = 0;
            let broker = ctx
                .spawn(move |_| {
                    mock(move |ctx, _| {
                        while let Some(signal) = ctx.take_signal() {
                            let Signal::Message(Msg(from, _)) = signal else {
                                continue;
                            };
                            ctx.charge(1);
                            let from = Pid::from_id(from);
                            match waiting.take() {
                                None => waiting = Some(from),
                                Some(partner) => {
                                    met += 1;
                                    if met == meetings {
                                        ctx.send_message(main, msg(met));
                                        return RunOutcome::Exit(msg(0));
                                    }
                                    ctx.send_message(partner, msg(0));
                                    ctx.send_message(from, msg(0));
                                }
                            }
                        }
                        RunOutcome::Wait
                    })
                })
                .expect("spawn");
            for _ in 0..clients {
                let mut asked = false;
                ctx.spawn(move |_| {
                    mock(move |ctx, _| {
                        let me = ctx.pid().id();
                        if !asked {
                            asked = true;
                            ctx.send_message(broker, msg(me));
                        }
                        while let Some(signal) = ctx.take_signal() {
                            if let Signal::Message(_) = signal {
                                ctx.charge(1);
                                ctx.send_message(broker, msg(me));
                            }
                        }
                        RunOutcome::Wait
                    })
                })
                .expect("spawn");
            }
        }
        match ctx.take_signal() {
            Some(Signal::Message(Msg(met, _))) => RunOutcome::Exit(msg(met)),
            _ => RunOutcome::Wait,
        }
    })
}

#[test]
fn processes_that_only_hand_off_messages_stay_on_one_scheduler() {
    // Every step is a few reductions, so no queued process ever waits a
    // time slice and no queue becomes stealable: the clients and their
    // broker must not be spread over cores (each hop would move a process's
    // data to the other cache, and wake a parked thread).
    under_each_scheduler_count("hand-offs stay together", 60, |n| {
        for clients in [3, 10] {
            let finished = run(config(n), |_| broker_main(clients, 50_000));
            let stats = finished.stats.clone();
            assert_eq!(outcome(finished), 50_000);
            assert_eq!(stats.steals(), 0, "with {n} schedulers: {stats:?}");
            assert_eq!(
                schedulers_that_ran(&stats),
                1,
                "with {n} schedulers the clients were spread: {stats:?}"
            );
        }
    });
}

#[test]
fn a_backlog_of_long_running_processes_is_shared_with_parked_siblings() {
    // Eight processes that run slice after slice: once one has waited a
    // slice in the queue, a parked sibling must be woken to take some. They
    // stop when they have been seen on two schedulers (or after 20 slices
    // with one scheduler, or 10 s: then the test fails).
    under_each_scheduler_count("backlog is shared", 60, |n| {
        let seen_on = Arc::new(AtomicU64::new(0));
        let seen = Arc::clone(&seen_on);
        let finished = run(config(n), move |_| {
            let mut started = false;
            let mut reports = 0;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    let main = ctx.pid();
                    let since = std::time::Instant::now();
                    for _ in 0..8 {
                        let mut slices = 0;
                        let seen = Arc::clone(&seen);
                        ctx.spawn(move |_| {
                            mock(move |ctx, budget| {
                                ctx.charge(budget);
                                slices += 1;
                                let on = seen
                                    .fetch_or(1 << ctx.scheduler_index(), Ordering::SeqCst)
                                    | 1 << ctx.scheduler_index();
                                let spread = on.count_ones() > 1;
                                let enough = if n == 1 { slices >= 20 } else { spread };
                                if !enough && since.elapsed() < Duration::from_secs(10) {
                                    return RunOutcome::Yield;
                                }
                                ctx.send_message(main, msg(1));
                                RunOutcome::Exit(msg(0))
                            })
                        })
                        .expect("spawn");
                    }
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(_) = signal {
                        reports += 1;
                    }
                }
                if reports == 8 {
                    RunOutcome::Exit(msg(reports))
                } else {
                    RunOutcome::Wait
                }
            })
        });
        let stats = finished.stats.clone();
        assert_eq!(outcome(finished), 8);
        if n > 1 {
            assert!(
                seen_on.load(Ordering::SeqCst).count_ones() > 1,
                "with {n} schedulers the backlog stayed on one for 10 s: {stats:?}"
            );
            assert!(stats.steals() > 0, "with {n} schedulers: {stats:?}");
        }
    });
}

/// A seconds figure from a `--stats` report line such as `cpu time: 0.010 s`.
fn stats_seconds(report: &str, label: &str) -> Option<f64> {
    let line = report.lines().find(|l| l.starts_with(label))?;
    line[label.len()..]
        .trim()
        .trim_end_matches('s')
        .trim()
        .parse()
        .ok()
}

#[test]
fn an_act_program_sleeping_on_timers_uses_no_cpu_on_two_schedulers() {
    // 100 processes in timer:sleep(1500): both schedulers must park until
    // the timers are due, not spin. CPU time is counted by the kernel, so
    // other load on the machine does not disturb it; the bound (a quarter
    // of the wall time) is far above the ~0 measured.
    let dir = std::env::temp_dir().join(format!("act-sleepers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("sleepers.act");
    std::fs::write(
        &file,
        "#!/usr/bin/env escript\n-module(sleepers).\n-export([main/1]).\n\
         main(_) ->\n    Main = self(),\n\
             [spawn(fun() -> timer:sleep(1500), Main ! done end) || _ <- lists:seq(1, 100)],\n\
             [receive done -> ok end || _ <- lists:seq(1, 100)],\n\
             io:format(\"ok~n\").\n",
    )
    .expect("write the program");
    let path = file.to_string_lossy().into_owned();
    let output = support::run_with_timeout(
        support::act_binary(),
        &["--schedulers", "2", "--stats", &path],
        "",
        None,
        Duration::from_secs(60),
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.stdout, "ok\n", "{output:?}");
    let wall = stats_seconds(&output.stderr, "wall time:").expect("wall time in --stats");
    let cpu = stats_seconds(&output.stderr, "cpu time:").expect("cpu time in --stats");
    assert!(wall >= 1.5, "the timers fired early: {}", output.stderr);
    assert!(
        cpu < wall / 4.0,
        "sleeping on timers burned CPU: {}",
        output.stderr
    );
}

#[test]
fn exited_processes_are_freed_while_the_program_runs() {
    // 100,000 processes that report and exit: by the time main has every
    // report, all but the few still finishing their last step must have
    // been freed (a table that defers freeing dead processes piles them up).
    // A loaded machine may run the freeing scheduler late, so main waits
    // a bounded number of short sleeps and yields (2 s at most) for it
    // before it counts.
    const CHILDREN: u64 = 100_000;
    const PATIENCE: u32 = 10_000;
    struct Counted(Arc<AtomicU64>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    under_each_scheduler_count("exited processes are freed", 60, |n| {
        let freed = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&freed);
        let finished = run(config(n), move |_| {
            let mut spawned = 0;
            let mut reports = 0;
            let mut yields = 0;
            mock(move |ctx, budget| {
                let main = ctx.pid();
                let mut used = 0;
                while spawned < CHILDREN {
                    let token = Counted(Arc::clone(&counter));
                    ctx.spawn(move |_| {
                        mock(move |ctx, _| {
                            let _ = &token;
                            ctx.send_message(main, msg(1));
                            RunOutcome::Exit(msg(0))
                        })
                    })
                    .expect("spawn");
                    spawned += 1;
                    if spend(ctx, &mut used, budget) {
                        return RunOutcome::Yield;
                    }
                }
                while let Some(signal) = ctx.take_signal() {
                    if let Signal::Message(_) = signal {
                        reports += 1;
                    }
                }
                if reports < CHILDREN {
                    return RunOutcome::Wait;
                }
                if counter.load(Ordering::SeqCst) + 1_000 < CHILDREN && yields < PATIENCE {
                    // A yield alone can come round again before the OS
                    // runs the other scheduler at all on a loaded machine.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    yields += 1;
                    return RunOutcome::Yield;
                }
                RunOutcome::Exit(msg(counter.load(Ordering::SeqCst)))
            })
        });
        let freed_by_then = outcome(finished);
        assert!(
            freed_by_then + 1_000 >= CHILDREN,
            "with {n} schedulers only {freed_by_then} of {CHILDREN} exited processes were freed"
        );
        assert_eq!(freed.load(Ordering::SeqCst), CHILDREN);
    });
}
