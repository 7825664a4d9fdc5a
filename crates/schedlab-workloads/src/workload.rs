//! The contract between benchmark models and the rest of schedlab.
//!
//! A workload line is what a user types on hardware, optionally preceded by the placement the
//! shell would have given it: `nice=19 policy=idle cpus=0-3 slice=20ms cgroup=/test-A make -j8`
//! (DESIGN.md §1), and by the prefixes users type, `chrt`, `taskset`, `nice` and `cgexec`
//! (`src/prefix.rs`), in any order: `taskset -c 0 chrt -f 80 cyclictest ...`; bash's `time`
//! keyword may lead (`time chrt --idle 0 make -j80`: make's report is in its format).
//! [`parse_workload`] turns it into a [`Workload`], which creates its tasks
//! through the kernel's set-up handle [`Sys`] (fork with attributes, `wake_up_new_task`, pipes,
//! sockets, futex words, the clock, the CPU count, the platform's `[programs.NAME]` costs) and
//! afterwards renders, from the read-only [`Procfs`] view (what `/proc` and a tracer show), the
//! lines the real program prints and the metrics that `reproduce` and `compare` read. Inside the
//! tasks, programs talk to the kernel through `Program`/`Op`/`Ctx`. No model names the
//! `Kernel` or its internals (`src/surface_tests.rs` checks the sources).

use schedlab_platform::CpuMask;
use schedlab_sched::sched::{Policy, TaskId, TgId};
use schedlab_sched::{Procfs, Sys, TaskAttrs};

/// Where and how the workload's tasks run (the shell's `nice`, `chrt`, `taskset`, cgroup).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    pub policy: Option<Policy>,
    pub rt_priority: Option<u32>,
    pub nice: Option<i32>,
    /// sched_attr runtime = custom slice of a fair task (ns).
    pub slice_ns: Option<u64>,
    pub cpus: Option<CpuMask>,
    pub cgroup: Option<String>,
    /// `policy=deadline:R/D/P` or `chrt -d` (runtime, deadline, period in ns; period 0 =
    /// the deadline).
    pub dl: Option<(u64, u64, u64)>,
    /// `sched_attr.sched_flags` for SCHED_DEADLINE (`chrt -G`: SCHED_FLAG_RECLAIM).
    pub dl_flags: u64,
    /// How the user set the policy (`policy=fifo:80`, `chrt -f 80`), for messages.
    pub policy_src: Option<String>,
    /// How the user set the affinity (`cpus=0-3`, `taskset -c 0-3`), for messages.
    pub cpus_src: Option<String>,
    /// Things about the placement worth telling the user (a `cgexec -g` without the cpu
    /// controller), one line each; the run prints them as warnings.
    pub notes: Vec<String>,
    /// The line starts with bash's `time` keyword (`time chrt --idle 0 make -j80`).
    pub time: bool,
}

impl Placement {
    /// Task attributes for the workload's first task (children inherit them).
    pub fn attrs(&self, comm: &str, tg: Option<TgId>) -> TaskAttrs {
        TaskAttrs {
            comm: Some(comm.to_string()),
            policy: self.policy,
            nice: self.nice,
            rt_priority: self.rt_priority,
            slice_ns: self.slice_ns,
            cpus: self.cpus.clone(),
            tg,
            reset_on_fork: None,
            dl: self
                .dl
                .map(|(runtime, deadline, period)| schedlab_sched::DlAttr {
                    runtime,
                    deadline,
                    period,
                    sched_flags: self.dl_flags,
                }),
        }
    }
}

/// Everything a workload gets when it is set up.
pub struct Env {
    pub placement: Placement,
    /// The task group for `cgroup=` (None = root).
    pub tg: Option<TgId>,
    /// Position of this workload on the command line (for naming RNG streams).
    pub index: usize,
    /// Simulated run length requested with `--duration` (ns), if any.
    pub duration_ns: Option<u64>,
}

/// Whether a larger value of a metric is better (for compare tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// A named result, e.g. `bogo_ops_per_sec`.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub better: Better,
}

impl Metric {
    pub fn new(name: &str, value: f64, unit: &str, better: Better) -> Metric {
        Metric {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            better,
        }
    }
}

/// A benchmark model.
pub trait Workload {
    /// The program name as typed (`stress-ng`, `hackbench`, `rt-app`…).
    fn program(&self) -> &str;
    /// Creates and starts the workload's initial task(s).
    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError>;
    /// The lines the real program prints at the end of the run.
    fn output(&self, procfs: &dyn Procfs) -> String;
    /// Named results for reproduce/compare.
    fn metrics(&self, procfs: &dyn Procfs) -> Vec<Metric>;
    /// The tasks this workload created (for per-task reporting).
    fn tasks(&self) -> Vec<TaskId> {
        Vec::new()
    }
    /// How long the real program runs by itself (stress-ng --timeout, cyclictest -D,
    /// schbench -r, rt-app global.duration), in ns, plus a margin for start-up and tear-down;
    /// `None` if it runs until stopped. Used as the default simulated duration.
    fn duration_hint(&self) -> Option<u64> {
        None
    }
    /// Whether the program runs until stopped unless its own options give a run length
    /// (cyclictest without `-D` or `-l`): such a line needs `--duration`.
    fn needs_duration(&self) -> bool {
        false
    }
    /// Whether the program ends by itself after a finite amount of work whose length in
    /// simulated time is not known before the run (hackbench's loops, a build): with no
    /// `--duration`, a run of such workloads only lasts until they have all ended.
    fn ends_by_itself(&self) -> bool {
        false
    }
    /// After the run, for a program whose figures are defined over its whole run (hackbench's
    /// total time, dbench's throughput): whether it reached its own end — `Some(false)` means
    /// the run stopped it first and its figures are partial. `None` for a program whose
    /// figures are rates or distributions over whatever time it ran (stress-ng, cyclictest,
    /// schbench, rt-app, interbench): stopping it earlier does not make them wrong.
    fn completed(&self) -> Option<bool> {
        None
    }
    /// Most tasks the workload can create on a machine with `ncpus` CPUs (counted against
    /// the cap on all lines of a run, [`crate::cmdline::MAX_TASKS`]).
    fn max_tasks(&self, ncpus: usize) -> u64;
    /// Things about the command line worth telling the user (ignored words, fallbacks), one
    /// line each; the caller prints them on stderr and in the JSON `warnings`.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the task the line's placement applies to creates further tasks with
    /// fork/clone (every model but rt-app, whose placement is the default of each thread's own
    /// policy). The kernel refuses a fork by a SCHED_DEADLINE task (`sched_fork`: EAGAIN).
    fn placement_task_forks(&self) -> bool {
        true
    }
    /// The SCHED_DEADLINE reservations the workload's tasks ask for at start where they are
    /// known from the command line (for the admission check before the run): by default the
    /// placement's, on the first task.
    fn dl_reservations(&self, placement: &Placement) -> Vec<DlReservation> {
        match placement.dl {
            Some((runtime, deadline, period)) => vec![DlReservation {
                task: self.program().to_string(),
                attr: schedlab_sched::DlAttr {
                    runtime,
                    deadline,
                    period,
                    sched_flags: placement.dl_flags,
                },
                cpus: placement.cpus.clone(),
            }],
            None => Vec::new(),
        }
    }
    /// Per-event series the workload recorded, by name: (simulated time in ns, value), for
    /// reports that need more than the summary metrics (interbench's latency samples).
    fn series(&self) -> Vec<(String, Vec<(u64, u64)>)> {
        Vec::new()
    }
}

/// One SCHED_DEADLINE task a workload creates: its name, `sched_attr` and affinity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DlReservation {
    pub task: String,
    pub attr: schedlab_sched::DlAttr,
    pub cpus: Option<CpuMask>,
}

/// A bad workload line or a workload that cannot run as configured.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("workload '{line}': empty workload")]
    Empty { line: String },
    #[error("workload '{line}': unknown program '{program}' (known: {known})")]
    UnknownProgram {
        line: String,
        program: String,
        known: String,
    },
    #[error("workload '{line}': {message}")]
    Option { line: String, message: String },
    #[error("workload '{line}': placement '{token}': {message}")]
    Placement {
        line: String,
        token: String,
        message: String,
    },
    #[error("{0}")]
    RtApp(#[from] crate::rtapp::RtAppError),
    #[error("workload '{line}': {message}")]
    Unsupported { line: String, message: String },
}

impl WorkloadError {
    /// A valid option or value that the model does not support (yet).
    pub fn unsupported(line: &str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::Unsupported {
            line: line.to_string(),
            message: message.into(),
        }
    }

    /// A malformed or unknown option.
    pub fn option(line: &str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::Option {
            line: line.to_string(),
            message: message.into(),
        }
    }
}

/// Programs schedlab models, for error messages and `schedlab list workloads`.
pub const KNOWN_PROGRAMS: &[(&str, &str)] = &[
    (
        "rt-app FILE",
        "rt-app JSON workload description (workloads.md §10)",
    ),
    (
        "stress-ng --pipe N ...",
        "stress-ng 0.15.06 pipe stressor (workloads.md §2)",
    ),
    ("hackbench ...", "rt-tests hackbench (workloads.md §3)"),
    (
        "perf bench sched messaging ...",
        "perf's hackbench (workloads.md §3)",
    ),
    ("schbench ...", "schbench (workloads.md §4)"),
    ("cyclictest ...", "rt-tests cyclictest (workloads.md §5)"),
    ("interbench ...", "interbench 0.31 (workloads.md §6)"),
    ("dbench ... N", "dbench 4, fileio on XFS (workloads.md §7)"),
    (
        "tbench ... N [server]",
        "tbench (dbench 4 network mode) over loopback TCP (netbench.md §15)",
    ),
    (
        "llama-batched-bench ...",
        "llama.cpp batched-bench on the ggml CPU thread pool (workloads.md §9)",
    ),
    (
        "netperf ... -t TEST",
        "netperf 2.6.0 TCP_RR/UDP_RR/TCP_STREAM/UDP_STREAM over loopback, with netserver (netbench.md §16)",
    ),
    (
        "server-model ...",
        "generic request/response server over loopback (netbench.md §17)",
    ),
    (
        "make -jN",
        "kernel build under the GNU make jobserver (workloads.md §8)",
    ),
];

/// Splits a workload line into its leading placement tokens and the command words.
/// Quotes are not interpreted beyond simple single/double quoting of whole words.
pub fn split_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

fn parse_policy(line: &str, tok: &str, v: &str, p: &mut Placement) -> Result<(), WorkloadError> {
    let bad = |m: &str| WorkloadError::Placement {
        line: line.to_string(),
        token: tok.to_string(),
        message: m.to_string(),
    };
    let (name, arg) = match v.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (v, None),
    };
    match name {
        "other" | "normal" | "batch" | "idle" => {
            if arg.is_some() {
                return Err(bad("takes no priority (other, batch, idle)"));
            }
            let policy = match name {
                "batch" => Policy::Batch,
                "idle" => Policy::Idle,
                _ => Policy::Normal,
            };
            crate::prefix::set_policy(line, tok, p, policy, 0, (0, 0, 0))?;
        }
        "fifo" | "rr" => {
            let policy = if name == "fifo" {
                Policy::Fifo
            } else {
                Policy::Rr
            };
            let prio: u32 = arg
                .ok_or_else(|| bad("needs a priority, e.g. fifo:80"))?
                .parse()
                .map_err(|_| bad("priority must be 1..99"))?;
            if !(1..=99).contains(&prio) {
                return Err(bad("priority must be 1..99"));
            }
            crate::prefix::set_policy(line, tok, p, policy, prio, (0, 0, 0))?;
        }
        "deadline" => {
            let a = arg
                .ok_or_else(|| bad("needs runtime/deadline/period, e.g. deadline:2ms/10ms/10ms"))?;
            let parts: Vec<&str> = a.split('/').collect();
            if parts.len() != 3 {
                return Err(bad("expected deadline:RUNTIME/DEADLINE/PERIOD"));
            }
            let d = |s: &str| {
                schedlab_engine::parse_duration(s)
                    .map(|n| n.0)
                    .map_err(|e| bad(&e.to_string()))
            };
            let dl = (d(parts[0])?, d(parts[1])?, d(parts[2])?);
            crate::prefix::set_policy(line, tok, p, Policy::Deadline, 0, dl)?;
        }
        _ => {
            return Err(bad(
                "expected other, batch, idle, fifo:P, rr:P or deadline:R/D/P",
            ))
        }
    }
    Ok(())
}

/// Reads the leading `key=value` placement tokens and `chrt`/`taskset` prefixes; returns the
/// placement and the command words.
pub fn parse_placement(line: &str) -> Result<(Placement, Vec<String>), WorkloadError> {
    let words = split_words(line);
    let mut p = Placement::default();
    let mut i = 0;
    while i < words.len() {
        match words[i].as_str() {
            "chrt" => {
                i = crate::prefix::chrt(line, &words, i, &mut p)?;
                continue;
            }
            "taskset" => {
                i = crate::prefix::taskset(line, &words, i, &mut p)?;
                continue;
            }
            "nice" => {
                i = crate::prefix::nice(line, &words, i, &mut p)?;
                continue;
            }
            "cgexec" => {
                i = crate::prefix::cgexec(line, &words, i, &mut p)?;
                continue;
            }
            // bash's `time` keyword (not /usr/bin/time): make's report is in its format
            "time" => {
                p.time = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some((k, v)) = words[i].split_once('=') else {
            break;
        };
        if k.starts_with('-') {
            break;
        }
        let bad = |m: &str| WorkloadError::Placement {
            line: line.to_string(),
            token: words[i].clone(),
            message: m.to_string(),
        };
        match k {
            "policy" => parse_policy(line, &words[i], v, &mut p)?,
            "nice" => {
                let n: i32 = v.parse().map_err(|_| bad("nice must be -20..19"))?;
                if !(-20..=19).contains(&n) {
                    return Err(bad("nice must be -20..19"));
                }
                p.nice = Some(n);
            }
            "slice" => {
                let d = schedlab_engine::parse_duration(v).map_err(|e| bad(&e.to_string()))?;
                if d.0 == 0 {
                    return Err(bad("slice must be > 0"));
                }
                p.slice_ns = Some(d.0);
            }
            "cpus" => {
                let m = CpuMask::parse_cpulist(v).map_err(|e| bad(&e.to_string()))?;
                if m.is_empty() {
                    return Err(bad("empty CPU list"));
                }
                p.cpus = Some(m);
                p.cpus_src = Some(words[i].clone());
            }
            "cgroup" => {
                // the checks of `mkdir -p /sys/fs/cgroup/PATH` (the run creates it)
                schedlab_sched::cgroup::parse_cgroup_path(v).map_err(|e| bad(&e.reason))?;
                p.cgroup = Some(v.to_string());
            }
            _ => {
                return Err(bad(
                    "unknown placement option (policy=, nice=, slice=, cpus=, cgroup=)",
                ))
            }
        }
        i += 1;
    }
    Ok((p, words[i..].to_vec()))
}

/// Parses a workload line into a model.
pub fn parse_workload(line: &str) -> Result<(Placement, Box<dyn Workload>), WorkloadError> {
    let (placement, words) = parse_placement(line)?;
    let Some(prog) = words.first() else {
        return Err(WorkloadError::Empty {
            line: line.to_string(),
        });
    };
    let args = &words[1..];
    let mut placement = placement;
    if placement.time && prog != "make" {
        placement.notes.push(format!(
            "time: bash's time report is printed for make only; {prog} prints its own output"
        ));
    }
    let w: Box<dyn Workload> = match prog.as_str() {
        "rt-app" => crate::rtapp::workload(line, args)?,
        "stress-ng" => crate::stress_ng::workload(line, args)?,
        "hackbench" => crate::hackbench::workload(line, args)?,
        "perf" => crate::hackbench::workload_perf(line, args)?,
        "schbench" => crate::schbench::workload(line, args)?,
        "dbench" => crate::dbench::workload(line, args)?,
        "tbench" => crate::tbench::workload(line, args)?,
        "llama-batched-bench" => crate::llama::workload(line, args)?,
        "cyclictest" => crate::cyclictest::workload(line, args)?,
        "interbench" => crate::interbench::workload(line, args)?,
        "make" => crate::kbuild::workload(line, args)?,
        "netperf" => crate::netperf::workload(line, args)?,
        "netserver" => {
            return Err(WorkloadError::unsupported(
                line,
                "netserver: started by the netperf model itself (one daemon per netperf \
                 line, forking a child for the test); give only the netperf line",
            ))
        }
        "server-model" => crate::server::workload(line, args)?,
        _ => {
            return Err(WorkloadError::UnknownProgram {
                line: line.to_string(),
                program: prog.clone(),
                known: KNOWN_PROGRAMS
                    .iter()
                    .map(|(p, _)| p.split(' ').next().unwrap())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        }
    };
    if placement.policy == Some(Policy::Deadline) && w.placement_task_forks() {
        return Err(WorkloadError::Placement {
            line: line.to_string(),
            token: placement.policy_src.clone().unwrap_or_default(),
            message: format!(
                "{} creates its tasks with fork/clone, and a SCHED_DEADLINE task may not fork \
                 (sched_fork returns EAGAIN); give the policy to rt-app threads instead",
                w.program()
            ),
        });
    }
    Ok((placement, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_tokens() {
        let (p, w) =
            parse_placement("nice=19 policy=idle cpus=0-3 slice=20ms cgroup=/test-A make -j8")
                .unwrap();
        assert_eq!(p.nice, Some(19));
        assert_eq!(p.policy, Some(Policy::Idle));
        assert_eq!(p.cpus.unwrap().weight(), 4);
        assert_eq!(p.slice_ns, Some(20_000_000));
        assert_eq!(p.cgroup.as_deref(), Some("/test-A"));
        assert_eq!(w, vec!["make", "-j8"]);
        let (p, _) = parse_placement("policy=fifo:80 cyclictest").unwrap();
        assert_eq!((p.policy, p.rt_priority), (Some(Policy::Fifo), Some(80)));
    }

    #[test]
    fn placement_errors_name_the_token() {
        for bad in [
            "nice=40 x",
            "policy=fifo x",
            "policy=bogus x",
            "slice=0 x",
            "cpus=a x",
            "cgroup=rel x",
            "foo=1 x",
        ] {
            let e = parse_placement(bad).unwrap_err().to_string();
            let tok = bad.split(' ').next().unwrap();
            assert!(e.contains(tok), "{e}");
        }
    }

    #[test]
    fn unknown_program() {
        let e = parse_workload("nice=1 frobnicate --x").err().unwrap();
        assert!(
            e.to_string().contains("unknown program 'frobnicate'"),
            "{e}"
        );
        assert!(parse_workload("   ").is_err());
    }

    /// Every model forks its first task into `Env::tg` (the run's `mkdir -p` of `cgroup=`),
    /// and every task it creates later inherits the group from its parent.
    #[test]
    fn every_model_puts_its_tasks_in_the_line_cgroup() {
        use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};
        for line in [
            "cgroup=/g stress-ng --pipe 2 --timeout 1s",
            "cgroup=/g hackbench -P -g 1 -l 10",
            "cgroup=/g perf bench sched messaging -t -g 1 -l 10",
            "cgroup=/g schbench -m 1 -t 2 -r 1",
            "cgroup=/g cyclictest -t 2 -i 1000 -D 1",
            "cgexec -g cpu:/g interbench -t 10 -x Write -W Audio",
            "cgroup=/g make -j2 --units 2",
            "cgroup=/g netperf -t TCP_RR -l -100",
            "cgroup=/g tbench -t 1 2",
            "cgroup=/g server-model --workers 1 --clients 2 --runtime 10ms",
        ] {
            let cfg = KernelConfig::parse("v6.18").unwrap();
            let m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
            let mut k = Kernel::new(cfg, m, 1).unwrap();
            k.strict = true;
            let (placement, mut w) = parse_workload(line).unwrap();
            let tg = k
                .cgroup_mkdir_p(placement.cgroup.as_deref().unwrap())
                .unwrap();
            let env = Env {
                placement,
                tg: Some(tg),
                index: 0,
                duration_ns: Some(1_000_000_000),
            };
            w.setup(&mut k, &env).unwrap();
            k.run_until(50_000_000);
            let ts = w.tasks();
            assert!(ts.len() > 1, "{line}");
            for t in ts {
                let comm = &k.tasks[t.index()].comm;
                // interbench's Write-load waker models an IRQ thread: a kernel thread, which
                // stays in the root cgroup
                let want = if comm.starts_with("irq/") { "/" } else { "/g" };
                assert_eq!(k.task_cgroup_path(t), want, "{line}: {comm}");
            }
        }
    }

    #[test]
    fn time_keyword_and_the_prefixes_of_a_kernel_build() {
        let (p, w) = parse_workload("time chrt --idle 0 make -j80").unwrap();
        assert!(p.time && p.notes.is_empty());
        assert_eq!(p.policy, Some(Policy::Idle));
        assert_eq!(w.program(), "make");
        let (p, _) = parse_workload("nice -n 19 make -j80").unwrap();
        assert_eq!((p.nice, p.policy, p.time), (Some(19), None, false));
        // anything else still runs, with a note that it prints its own output
        let (p, _) = parse_workload("time hackbench -g 1 -l 10").unwrap();
        assert!(p.notes[0].contains("hackbench"), "{:?}", p.notes);
    }

    #[test]
    fn quoting() {
        assert_eq!(split_words("a 'b c' \"d\""), vec!["a", "b c", "d"]);
    }
}
