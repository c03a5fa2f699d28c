//! Unit tests of the runtime with mock processes: each body is a closure
//! that plays one step of a program.

use super::*;
use crate::term::atom::Atom;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

type Step = Box<dyn FnMut(&mut RunContext<'_, Mock>, u32) -> RunOutcome<u64> + Send>;

/// A process whose run step is a closure; messages and reasons are `u64`.
struct Mock {
    step: Step,
}

impl ProcessBody for Mock {
    type Message = u64;
    type Registers = ();
    fn run(&mut self, ctx: &mut RunContext<'_, Self>, _: &mut (), budget: u32) -> RunOutcome<u64> {
        (self.step)(ctx, budget)
    }
}

fn mock(
    step: impl FnMut(&mut RunContext<'_, Mock>, u32) -> RunOutcome<u64> + Send + 'static,
) -> Mock {
    Mock {
        step: Box::new(step),
    }
}

fn config(schedulers: usize) -> Config {
    Config {
        schedulers,
        ..Config::default()
    }
}

fn main_reason(finished: Finished<u64>) -> u64 {
    match finished.finish {
        Finish::MainExited(r) => r,
        other => panic!("the program did not end by main exiting: {other:?}"),
    }
}

#[test]
fn the_program_ends_with_the_main_processs_exit_reason() {
    let finished = run(config(2), |_| mock(|_, _| RunOutcome::Exit(42)));
    assert_eq!(main_reason(finished), 42);
}

#[test]
fn main_exiting_stops_the_vm_while_other_processes_spin_and_wait() {
    for n in [1, 2] {
        let finished = run(config(n), |_| {
            let mut started = false;
            mock(move |ctx, _| {
                if !started {
                    started = true;
                    for _ in 0..3 {
                        ctx.spawn(|_| {
                            mock(|ctx, budget| {
                                ctx.charge(budget);
                                RunOutcome::Yield
                            })
                        })
                        .unwrap();
                        ctx.spawn(|_| mock(|_, _| RunOutcome::Wait)).unwrap();
                    }
                    return RunOutcome::Yield;
                }
                RunOutcome::Exit(7)
            })
        });
        assert_eq!(main_reason(finished), 7);
    }
}

#[test]
fn halt_ends_the_program_with_its_status() {
    let finished = run(config(2), |_| {
        mock(|ctx, _| {
            ctx.spawn(|_| {
                mock(|ctx, _| {
                    ctx.halt(3);
                    RunOutcome::Wait
                })
            })
            .unwrap();
            RunOutcome::Wait
        })
    });
    assert!(
        matches!(finished.finish, Finish::Halted(3)),
        "{:?}",
        finished.finish
    );
}

/// A receiver that counts `count` messages, then exits with their sum.
fn summer(count: u64) -> Mock {
    let mut seen = 0;
    let mut sum = 0;
    mock(move |ctx, _| {
        while let Some(signal) = ctx.take_signal() {
            if let Signal::Message(m) = signal {
                seen += 1;
                sum += m;
            }
        }
        if seen == count {
            RunOutcome::Exit(sum)
        } else {
            RunOutcome::Wait
        }
    })
}

#[test]
fn messages_sent_to_a_waiting_process_all_arrive() {
    for n in [1, 2, 4] {
        let finished = run(config(n), |_| {
            let mut me_started = false;
            mock(move |ctx, _| {
                if !me_started {
                    me_started = true;
                    let me = ctx.pid();
                    let r = ctx
                        .spawn(move |_| {
                            let mut inner = summer(100);
                            mock(move |ctx, b| match inner.run(ctx, &mut (), b) {
                                RunOutcome::Exit(sum) => {
                                    ctx.send_message(me, sum);
                                    RunOutcome::Exit(0)
                                }
                                other => other,
                            })
                        })
                        .unwrap();
                    for i in 1..=100 {
                        assert_eq!(ctx.send_message(r, i), Delivery::Delivered);
                    }
                }
                match ctx.take_signal() {
                    Some(Signal::Message(sum)) => RunOutcome::Exit(sum),
                    _ => RunOutcome::Wait,
                }
            })
        });
        assert_eq!(main_reason(finished), 5050, "with {n} schedulers");
    }
}

#[test]
fn a_dead_pid_never_reaches_a_new_process() {
    let table: ProcessTable<Mock> = ProcessTable::new(usize::MAX);
    let first = table.insert(0, |_| mock(|_, _| RunOutcome::Wait)).unwrap();
    let old = first.pid();
    table.remove(old);
    let second = table.insert(0, |_| mock(|_, _| RunOutcome::Wait)).unwrap();
    assert_eq!(second.pid().slot(), old.slot(), "the slot should be reused");
    assert_ne!(second.pid(), old);
    assert!(
        table.get(old).is_none(),
        "a stale pid found the new process"
    );
    assert!(table.get(second.pid()).is_some());
    assert_eq!(table.alive(), 1);
    // The lock-free lookup of the send path agrees. (SAFETY: no scheduler
    // runs, so no cell is reclaimed while these are used.)
    unsafe {
        assert!(
            table.lookup(old).is_none(),
            "a stale pid looked up the new process"
        );
        assert_eq!(
            table.lookup(second.pid()).map(|c| c.pid()),
            Some(second.pid())
        );
    }
    table.remove(second.pid());
    assert!(unsafe { table.lookup(second.pid()) }.is_none());
}

#[test]
fn lookups_find_processes_in_every_segment_of_a_shard() {
    // Enough processes for several segments of one shard's slots.
    let table: ProcessTable<Mock> = ProcessTable::new(usize::MAX);
    let cells: Vec<_> = (0..1000)
        .map(|_| table.insert(0, |_| mock(|_, _| RunOutcome::Wait)).unwrap())
        .collect();
    for cell in &cells {
        // SAFETY: no scheduler runs, so no cell is reclaimed meanwhile.
        let found = unsafe { table.lookup(cell.pid()) };
        assert_eq!(found.map(|c| c.pid()), Some(cell.pid()));
    }
}

#[test]
fn spawning_past_max_processes_is_a_system_limit() {
    let finished = run(
        Config {
            max_processes: 5,
            ..config(1)
        },
        |_| {
            mock(|ctx, _| {
                let mut spawned = 0;
                while ctx.spawn(|_| mock(|_, _| RunOutcome::Wait)).is_ok() {
                    spawned += 1;
                    if spawned > 100 {
                        break;
                    }
                }
                RunOutcome::Exit(spawned)
            })
        },
    );
    assert_eq!(
        main_reason(finished),
        4,
        "main plus four more make the limit of five"
    );
}

#[test]
fn registered_names_resolve_only_to_live_processes() {
    let table: ProcessTable<Mock> = ProcessTable::new(usize::MAX);
    let cell = table.insert(0, |_| mock(|_, _| RunOutcome::Wait)).unwrap();
    let name = Atom::intern("sched_test_name");
    assert!(table.register(name, cell.pid()));
    assert!(
        !table.register(name, cell.pid()),
        "a taken name was registered twice"
    );
    assert_eq!(table.whereis(name), Some(cell.pid()));
    table.remove(cell.pid());
    assert_eq!(table.whereis(name), None, "a dead process kept its name");
    let other = table.insert(1, |_| mock(|_, _| RunOutcome::Wait)).unwrap();
    assert!(
        table.register(name, other.pid()),
        "a dead holder's name was not freed"
    );
}

/// A process that sleeps `ms` on a timer, then exits with the elapsed time.
fn sleeper(ms: u64) -> Mock {
    let mut started_at = None;
    mock(move |ctx, _| {
        if started_at.is_none() {
            started_at = Some(ctx.now_ms());
            ctx.set_timer(ms, 1);
            return RunOutcome::Wait;
        }
        while let Some(signal) = ctx.take_signal() {
            if let Signal::Timeout(1) = signal {
                return RunOutcome::Exit(ctx.now_ms() - started_at.unwrap_or(0));
            }
        }
        RunOutcome::Wait
    })
}

#[test]
fn a_timer_wakes_its_process_after_its_time() {
    let finished = run(config(2), |_| sleeper(30));
    let elapsed = main_reason(finished);
    assert!(elapsed >= 30, "woke after {elapsed} ms");
}

#[test]
fn the_virtual_clock_jumps_to_the_next_timer() {
    let wall = std::time::Instant::now();
    let finished = run(
        Config {
            deterministic: true,
            ..config(4)
        },
        |_| sleeper(60_000),
    );
    assert_eq!(main_reason(finished), 60_000);
    assert!(
        wall.elapsed().as_secs() < 5,
        "the virtual clock waited in real time"
    );
}

#[test]
fn a_stale_timer_fires_into_nothing() {
    // Set a timer with tag 1, cancel it, wait for one with tag 2 later.
    let finished = run(config(1), |_| {
        let mut phase = 0;
        mock(move |ctx, _| {
            if phase == 0 {
                phase = 1;
                ctx.set_timer(1, 1);
                ctx.cancel_timer();
                ctx.set_timer(20, 2);
                return RunOutcome::Wait;
            }
            match ctx.take_signal() {
                Some(Signal::Timeout(tag)) => RunOutcome::Exit(tag),
                _ => RunOutcome::Wait,
            }
        })
    });
    assert_eq!(
        main_reason(finished),
        2,
        "the cancelled timer's timeout arrived"
    );
}

#[test]
fn deterministic_runs_give_the_same_pids_and_refs() {
    let go = || {
        let finished = run(
            Config {
                deterministic: true,
                ..config(1)
            },
            |_| {
                mock(|ctx, _| {
                    let mut h = 0u64;
                    for _ in 0..50 {
                        let p = ctx.spawn(|_| mock(|_, _| RunOutcome::Exit(0))).unwrap();
                        h = h
                            .wrapping_mul(31)
                            .wrapping_add(p.id())
                            .wrapping_add(ctx.make_ref());
                    }
                    RunOutcome::Exit(h)
                })
            },
        );
        main_reason(finished)
    };
    assert_eq!(go(), go());
}

#[test]
fn deterministic_mode_reports_a_deadlock_instead_of_hanging() {
    let finished = run(
        Config {
            deterministic: true,
            ..config(1)
        },
        |_| mock(|_, _| RunOutcome::Wait),
    );
    assert!(matches!(finished.finish, Finish::Deadlock));
}

#[test]
fn exit_hooks_run_and_signals_to_dead_pids_are_refused() {
    let hooks = Arc::new(AtomicU64::new(0));
    struct Dying(Arc<AtomicU64>);
    impl ProcessBody for Dying {
        type Message = u64;
        type Registers = ();
        fn run(&mut self, _: &mut RunContext<'_, Self>, _: &mut (), _: u32) -> RunOutcome<u64> {
            RunOutcome::Exit(9)
        }
        fn on_exit(&mut self, ctx: &mut RunContext<'_, Self>, reason: &u64) {
            self.0.fetch_add(*reason, Ordering::SeqCst);
            assert!(
                !ctx.is_alive(ctx.pid()),
                "an exiting process is still in the table"
            );
        }
    }
    let h = Arc::clone(&hooks);
    let finished = run(config(1), move |_| Dying(h));
    assert!(matches!(finished.finish, Finish::MainExited(9)));
    assert_eq!(
        hooks.load(Ordering::SeqCst),
        9,
        "the exit hook did not run once"
    );
}

#[test]
fn the_shared_half_of_a_process_fits_in_one_cache_line() {
    // The cell without its body: state word, timer tag, pid, inbox ends.
    struct Empty;
    impl ProcessBody for Empty {
        type Message = u64;
        type Registers = ();
        fn run(&mut self, _: &mut RunContext<'_, Self>, _: &mut (), _: u32) -> RunOutcome<u64> {
            RunOutcome::Wait
        }
    }
    let shared = std::mem::size_of::<ProcessCell<Empty>>();
    assert!(shared <= 48, "the process cell grew to {shared} bytes");
    // With the Arc's two counts the cell is one 64-byte cache line.
    assert!(
        16 + shared <= 64,
        "the shared half spills out of one cache line"
    );
    // Everything an idle process costs the runtime besides its body: the
    // Arc'd cell, the inbox's 8-byte stub, its 16-byte table entry.
    let total = 16 + shared + 8 + 16;
    assert!(
        total <= 96,
        "an idle process costs the runtime {total} bytes"
    );
}

#[test]
fn runtime_options_parse_and_bad_values_are_errors() {
    let mut c = Config::default();
    assert_eq!(c.apply_option("--schedulers", Some("3")), Ok(true));
    assert_eq!(c.apply_option("--reductions", Some("100")), Ok(true));
    assert_eq!(c.apply_option("--max-processes", Some("10")), Ok(true));
    assert_eq!(c.apply_option("--deterministic", None), Ok(true));
    assert_eq!(
        (c.schedulers, c.reductions, c.max_processes, c.deterministic),
        (3, 100, 10, true)
    );
    assert_eq!(c.apply_option("--stats", None), Ok(false));
    assert!(c.apply_option("--schedulers", Some("0")).is_err());
    assert!(c.apply_option("--schedulers", Some("many")).is_err());
    assert!(c.apply_option("--reductions", None).is_err());
}

#[test]
fn a_small_reduction_budget_still_finishes_a_busy_program() {
    let finished = run(
        Config {
            reductions: 1,
            ..config(2)
        },
        |_| {
            let mut left = 1000;
            mock(move |ctx, budget| {
                assert_eq!(budget, 1, "the budget was not passed to the run step");
                ctx.charge(1);
                left -= 1;
                if left == 0 {
                    RunOutcome::Exit(1)
                } else {
                    RunOutcome::Yield
                }
            })
        },
    );
    assert_eq!(main_reason(finished), 1);
}

#[test]
fn the_stats_report_names_every_figure_and_each_scheduler() {
    let finished = run(config(2), |_| {
        mock(|ctx, _| {
            ctx.spawn(|_| mock(|_, _| RunOutcome::Exit(0))).unwrap();
            let me = ctx.pid();
            ctx.send_message(me, 1);
            ctx.charge(10);
            RunOutcome::Exit(0)
        })
    });
    let stats = &finished.stats;
    assert_eq!(stats.spawned(), 1);
    assert_eq!(stats.messages_sent(), 1);
    assert!(stats.reductions() >= 10);
    assert_eq!(stats.schedulers.len(), 2);
    let mut out = Vec::new();
    stats.write(&mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    for figure in [
        "wall time",
        "processes spawned: 1",
        "peak alive",
        "messages sent:     1",
        "reductions",
        "collections",
        "peak memory",
        "scheduler 1:",
        "scheduler 2:",
    ] {
        assert!(text.contains(figure), "--stats lacks {figure:?}:\n{text}");
    }
}

#[test]
fn processes_lists_the_live_pids_and_reductions_add_up() {
    let finished = run(config(1), |_| {
        let mut phase = 0;
        let mut child = None;
        mock(move |ctx, _| {
            if phase == 0 {
                phase = 1;
                child = Some(ctx.spawn(|_| mock(|_, _| RunOutcome::Wait)).unwrap());
                ctx.charge(100);
                return RunOutcome::Yield;
            }
            let listed = ctx.processes();
            let expected = vec![ctx.pid(), child.unwrap()];
            let ok = listed == expected && ctx.total_reductions() >= 100 && ctx.schedulers() == 1;
            RunOutcome::Exit(u64::from(ok))
        })
    });
    assert_eq!(
        main_reason(finished),
        1,
        "processes(), total_reductions() or schedulers() is wrong"
    );
}
