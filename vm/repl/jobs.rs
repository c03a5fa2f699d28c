//! The shell's jobs and its two menus, as erl has them: Ctrl-G opens the
//! user-switch menu (`User switch command`, prompt ` --> `), Ctrl-C at
//! the prompt opens the BREAK menu.
//!
//! A *job* is one shell: a `Session` with its own bindings, history and
//! evaluator process (the evaluators of all jobs live on the one shared
//! runtime, see `server`). The first job is the shell `act` starts with;
//! `s` starts another, `c N` connects to one, `i N` kills its evaluator
//! (it reports `** exception exit: killed` when connected to, and goes on
//! in a new process with its bindings), `k N` ends it, `j` lists them.
//!
//! The menus only decide; the line editor (`run_terminal`) reads their
//! lines and acts on the answer. So both are driven by tests without a
//! terminal.
//!
//! Invariant: `current`, when set, is the number of a job in `jobs`.

use super::Session;

/// erl's user-switch help (`h` or `?`).
const SWITCH_HELP: &str = "  c [nn]            - connect to job
  i [nn]            - interrupt job
  k [nn]            - kill job
  j                 - list all jobs
  s [shell]         - start local shell
  r [node [shell]]  - start remote shell
  q                 - quit erlang
  ? | h             - this message
";

/// erl's BREAK menu, as it prints it.
pub const BREAK_MENU: &str = "\
BREAK: (a)bort (A)bort with dump (c)ontinue (p)roc info (i)nfo
       (l)oaded (v)ersion (k)ill (D)b-tables (d)istribution
";

/// One shell of the user-switch menu.
pub struct Job {
    pub number: u32,
    pub session: Session,
    /// How `j` names it: `{shell,start,[init]}` for the first shell,
    /// `{shell,start,[]}` for one started with `s`.
    start: &'static str,
    /// Set by `i`: its evaluator was killed, which it reports when next
    /// connected to.
    interrupted: bool,
    /// Started by `s` and not yet connected to: it prints its banner.
    fresh: bool,
}

/// What the user-switch menu decided after one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Switch {
    /// Read another menu line.
    Stay,
    /// Back to the shell of the current job.
    Connect,
    /// Leave act (status 0).
    Quit,
}

/// What the BREAK menu decided after one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Break {
    /// Show the menu again.
    Again,
    /// Back to the shell.
    Continue,
    /// Leave act at once (status 0, as erl's `a`).
    Abort,
}

/// The shells and which one the terminal is connected to.
pub struct Jobs {
    jobs: Vec<Job>,
    current: Option<u32>,
    next: u32,
}

impl Jobs {
    /// The first shell, job 1, connected.
    pub fn new(session: Session) -> Jobs {
        Jobs {
            jobs: vec![Job {
                number: 1,
                session,
                start: "{shell,start,[init]}",
                interrupted: false,
                fresh: false,
            }],
            current: Some(1),
            next: 2,
        }
    }

    /// The shell the terminal is connected to (there is one whenever the
    /// menu is not open).
    pub fn current(&mut self) -> Option<&mut Job> {
        let n = self.current?;
        self.jobs.iter_mut().find(|j| j.number == n)
    }

    /// All the sessions, for leaving (each stops what it started).
    pub fn sessions(&mut self) -> impl Iterator<Item = &mut Session> {
        self.jobs.iter_mut().map(|j| &mut j.session)
    }

    /// The job a command names: `nn`, or the current one without it.
    /// `Err(())` for a number that names no job.
    fn target(&self, arg: Option<&str>) -> Result<Option<u32>, ()> {
        match arg {
            None => Ok(self.current),
            Some(text) => {
                let n: u32 = text.parse().map_err(|_| ())?;
                if self.jobs.iter().any(|j| j.number == n) {
                    Ok(Some(n))
                } else {
                    Err(())
                }
            }
        }
    }

    /// One line typed at ` --> `; writes the answer to `out`.
    pub fn switch(&mut self, line: &str, out: &mut String) -> Switch {
        let mut words = line.split_whitespace();
        let command = words.next().unwrap_or("");
        let arg = words.next();
        match command {
            "" => Switch::Stay,
            "h" | "?" => {
                out.push_str(SWITCH_HELP);
                Switch::Stay
            }
            "q" => Switch::Quit,
            "j" => {
                for job in &self.jobs {
                    let mark = if Some(job.number) == self.current {
                        '*'
                    } else {
                        ' '
                    };
                    out.push_str(&format!("{:>4}{mark} {}\n", job.number, job.start));
                }
                Switch::Stay
            }
            "s" => {
                let number = self.next;
                self.next += 1;
                let mut session = Session::new();
                session.shell.set_job(number);
                self.jobs.push(Job {
                    number,
                    session,
                    start: "{shell,start,[]}",
                    interrupted: false,
                    fresh: true,
                });
                self.current = Some(number);
                Switch::Stay
            }
            "r" => {
                let node = crate::term::node::this_node().name;
                if node == crate::term::Atom::NONODE {
                    out.push_str("Not alive\n");
                } else {
                    out.push_str("act cannot start a remote shell\n");
                }
                Switch::Stay
            }
            "c" | "i" | "k" => {
                let Ok(target) = self.target(arg) else {
                    out.push_str("Unknown job\n");
                    return Switch::Stay;
                };
                let Some(n) = target else {
                    // No current job: `c` has nothing to go back to.
                    if command == "c" {
                        out.push_str("Unknown job\n");
                    }
                    return Switch::Stay;
                };
                match command {
                    "c" => {
                        self.current = Some(n);
                        Switch::Connect
                    }
                    "i" => {
                        if let Some(job) = self.jobs.iter_mut().find(|j| j.number == n) {
                            job.session.shell.kill_evaluator();
                            job.interrupted = true;
                        }
                        Switch::Stay
                    }
                    _ => {
                        if let Some(at) = self.jobs.iter().position(|j| j.number == n) {
                            let mut job = self.jobs.remove(at);
                            job.session.shell.kill_evaluator();
                        }
                        if self.current == Some(n) {
                            self.current = None;
                        }
                        Switch::Stay
                    }
                }
            }
            _ => {
                out.push_str("Unknown command\n");
                Switch::Stay
            }
        }
    }

    /// What the current job shows when the terminal connects to it: its
    /// banner when new, the death of its evaluator after `i`.
    pub fn connected(&mut self, out: &mut String) {
        if let Some(job) = self.current() {
            if std::mem::take(&mut job.fresh) {
                out.push_str(&banner());
                out.push('\n');
            }
            if std::mem::take(&mut job.interrupted) {
                out.push_str("** exception exit: killed\n");
            }
        }
    }
}

/// The line the shell starts with.
pub fn banner() -> String {
    format!(
        "act {} shell (help(). for help, q(). or Ctrl-D to leave; abort with ^G)",
        env!("CARGO_PKG_VERSION")
    )
}

/// One line typed at the BREAK menu (only its first character counts, as
/// in erl); writes the answer to `out`.
pub fn break_option(line: &str, out: &mut String) -> Break {
    let option = line.trim().chars().next();
    match option {
        Some('c') => Break::Continue,
        Some('a') | Some('A') => Break::Abort,
        Some('v') => {
            out.push_str(&format!(
                "act version {} (Erlang/OTP 25 compatible)\n\n",
                env!("CARGO_PKG_VERSION")
            ));
            Break::Again
        }
        Some(c @ ('p' | 'i' | 'l' | 'k' | 'D' | 'd')) => {
            out.push_str(&format!(
                "Option '{c}' is not available in act; continue (c) and try i(), m() or regs().\n"
            ));
            Break::Again
        }
        Some(c) => {
            out.push_str(&format!(
                "Invalid option '{c}'. Please enter one of the following:\n"
            ));
            Break::Again
        }
        // An empty line: erl shows the menu again.
        None => Break::Again,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn say(jobs: &mut Jobs, line: &str) -> (Switch, String) {
        let mut out = String::new();
        let step = jobs.switch(line, &mut out);
        (step, out)
    }

    #[test]
    fn the_user_switch_menu_lists_starts_connects_and_kills_jobs() {
        let mut jobs = Jobs::new(Session::new());
        assert_eq!(
            say(&mut jobs, "j"),
            (Switch::Stay, "   1* {shell,start,[init]}\n".to_string())
        );
        assert_eq!(say(&mut jobs, "s"), (Switch::Stay, String::new()));
        assert_eq!(
            say(&mut jobs, "j").1,
            "   1  {shell,start,[init]}\n   2* {shell,start,[]}\n"
        );
        assert_eq!(
            say(&mut jobs, "c 7"),
            (Switch::Stay, "Unknown job\n".into())
        );
        assert_eq!(
            say(&mut jobs, "k 5"),
            (Switch::Stay, "Unknown job\n".into())
        );
        assert_eq!(
            say(&mut jobs, "x"),
            (Switch::Stay, "Unknown command\n".into())
        );
        assert!(SWITCH_HELP.starts_with("  c [nn]            - connect to job\n"));
        assert_eq!(say(&mut jobs, "h").1, SWITCH_HELP);
        assert_eq!(say(&mut jobs, "?").1, SWITCH_HELP);
        assert_eq!(say(&mut jobs, "r").1, "Not alive\n");
        // A new job shows its banner when first connected to.
        assert_eq!(say(&mut jobs, "c").0, Switch::Connect);
        let mut out = String::new();
        jobs.connected(&mut out);
        assert!(out.starts_with("act "), "{out}");
        assert_eq!(jobs.current().map(|j| j.number), Some(2));
        // Interrupting job 1 shows when connecting to it.
        assert_eq!(say(&mut jobs, "i 1"), (Switch::Stay, String::new()));
        assert_eq!(say(&mut jobs, "c 1").0, Switch::Connect);
        let mut out = String::new();
        jobs.connected(&mut out);
        assert_eq!(out, "** exception exit: killed\n");
        // Killing the current job leaves nothing to go back to.
        assert_eq!(say(&mut jobs, "k"), (Switch::Stay, String::new()));
        assert_eq!(say(&mut jobs, "j").1, "   2  {shell,start,[]}\n");
        assert_eq!(say(&mut jobs, "c"), (Switch::Stay, "Unknown job\n".into()));
        assert_eq!(say(&mut jobs, "q").0, Switch::Quit);
    }

    #[test]
    fn the_break_menu_continues_aborts_and_rejects_other_letters() {
        let mut out = String::new();
        assert_eq!(break_option("c\n", &mut out), Break::Continue);
        assert_eq!(break_option("a", &mut out), Break::Abort);
        assert_eq!(out, "");
        assert_eq!(break_option("x", &mut out), Break::Again);
        assert_eq!(
            out,
            "Invalid option 'x'. Please enter one of the following:\n"
        );
    }
}
