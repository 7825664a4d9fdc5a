//! cyclictest (rt-tests 2.5) command line (workloads.md §5.1). The table below lists every
//! option of the real program; long options may be abbreviated as getopt_long allows
//! (`--mlock` is `--mlockall`).
//!
//! | option | default | modelled |
//! |---|---|---|
//! | `-t [N]`, `--threads[=N]` | 1; without N one per CPU | yes (N ≤ 32767; `-t` × `-h` ≤ 2^27 buckets) |
//! | `-i US`, `--interval=US` | 1000 | yes |
//! | `-d US`, `--distance=US` | 500 (not applied with `-h`) | yes |
//! | `-D T`, `--duration=T` | endless; T in s, or with m/h/d | yes (at most 2^33 s; `-l` × interval too) |
//! | `-l N`, `--loops=N` | endless | yes |
//! | `-p PRIO`, `--priority=PRIO` | 0; any `-p` selects SCHED_FIFO | yes |
//! | `--policy=NAME` | other; unknown names fall back to other (warning) | yes |
//! | `--priospread` | off | yes |
//! | `-m`, `--mlockall` | off | yes |
//! | `-h N`, `--histogram=N` / `-H N`, `--histofall=N` | off | yes |
//! | `-q`, `--quiet` | off | yes |
//! | `-a [LIST]`, `--affinity[=LIST]` | no pinning; without LIST thread i on CPU i | yes |
//! | `-S`, `--smp` | off (= `-t -a`) | yes |
//! | `--mainaffinity=LIST` | — | yes |
//! | `--secaligned[=US]` | off | yes |
//! | `--latency=US` | 0 (`/dev/cpu_dma_latency`) | yes |
//! | `--laptop`, `--default-system` | — (leave cpu_dma_latency alone) | yes |
//! | `-c 0\|1`, `--clock` | 0 | accepted, no effect |
//! | `-M`, `--refresh_on_max`; `-u`, `--unbuffered` | — | accepted, no effect |
//! | `-n` | — | accepted for 1.x command lines (warning: 2.x has no `-n`) |
//! | `-A`, `-b`, `-F`, `--histfile`, `--json`, `-N`, `-o`, `-r`, `-R`, `-s`, `--smi`, `--spike`, `--spike-nodes`, `--tracemark`, `-v`, `--dbg_cyclictest`, `-x`, `--help` | — | no |
//!
//! Deviations: `-i 0` is rejected (cyclictest accepts it and spins); numbers are read
//! strictly (see `cmdline`).

use super::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

const PROG: &str = "cyclictest";

/// `HIST_MAX`: larger `-h` values are clamped.
pub const HIST_MAX: u32 = 1_000_000;
pub const DEFAULT_INTERVAL_US: u32 = 1000;
pub const DEFAULT_DISTANCE_US: u32 = 500;

/// Number of measurement threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    Count(u32),
    /// `-t` without a number, or `-S`: one per available CPU.
    AllCpus,
}

/// Scheduling policy names cyclictest knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
}

impl Policy {
    /// cyclictest `policyname()`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
        }
    }

    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

/// Thread CPU pinning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affinity {
    Unspecified,
    /// `-a` alone, `-a all`, `-S`: thread i on the (i mod CPUs)-th CPU.
    UseAll,
    /// `-a LIST`: thread i on the (i mod |LIST|)-th CPU of the list.
    Cpus(Vec<u32>),
}

/// A parsed cyclictest command line. Values that depend on the CPU count (thread count,
/// default RT priority) are settled by [`Options::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub threads: Threads,
    pub interval_us: u32,
    pub distance_us: u32,
    /// `-D`; `None` = endless (also `-D 0`).
    pub duration_secs: Option<u64>,
    /// `-l`; `None` = endless (also `-l 0`).
    pub loops: Option<u64>,
    /// `-p` as given (0..=99).
    pub priority: u32,
    /// Policy after `-p` and `--policy` (before the priority checks of [`Options::resolve`]).
    pub policy: Policy,
    pub priospread: bool,
    pub mlockall: bool,
    /// `-h`/`-H` bucket count.
    pub histogram: Option<u32>,
    /// `-H`: an extra all-threads column.
    pub histofall: bool,
    pub quiet: bool,
    pub affinity: Affinity,
    pub main_affinity: Option<Vec<u32>>,
    /// `--secaligned[=US]`: first wake-up on the next full second plus US.
    pub secaligned: Option<u32>,
    /// Value written to `/dev/cpu_dma_latency` (µs).
    pub latency_target_us: u32,
    /// cyclictest writes `/dev/cpu_dma_latency` (shallow idle only); false with `--laptop`
    /// or `--default-system`.
    pub set_cpu_dma_latency: bool,
    pub smp: bool,
    /// Notes for the user: unknown `--policy` names, clamped values, ignored options and
    /// words. cyclictest prints some of these on stderr; none are on stdout.
    pub warnings: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threads: Threads::Count(1),
            interval_us: DEFAULT_INTERVAL_US,
            distance_us: DEFAULT_DISTANCE_US,
            duration_secs: None,
            loops: None,
            priority: 0,
            policy: Policy::Other,
            priospread: false,
            mlockall: false,
            histogram: None,
            histofall: false,
            quiet: false,
            affinity: Affinity::Unspecified,
            main_affinity: None,
            secaligned: None,
            latency_target_us: 0,
            set_cpu_dma_latency: true,
            smp: false,
            warnings: Vec::new(),
        }
    }
}

/// The run-time settings that depend on the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub num_threads: u32,
    /// Priority of thread 0 (lower threads with `--priospread`).
    pub priority: u32,
    /// The program's policy (printed in the status line).
    pub policy: Policy,
    /// Lines cyclictest prints on stderr while settling these.
    pub warnings: Vec<String>,
}

impl Options {
    /// Settles thread count, priority and policy for a machine with `cpus` available CPUs,
    /// in cyclictest's order: thread count; `--priospread` default priority; "policy and
    /// priority don't match"; default RT priority `num_threads + 1`.
    pub fn resolve(&self, cpus: u32) -> Resolved {
        let mut warnings = Vec::new();
        let num_threads = match (&self.threads, &self.affinity) {
            (Threads::Count(n), _) => *n,
            (Threads::AllCpus, Affinity::Cpus(list)) if !self.smp => list.len() as u32,
            (Threads::AllCpus, _) => cpus,
        };
        let mut priority = self.priority;
        let mut policy = self.policy;
        if self.priospread && priority == 0 {
            warnings.push(format!(
                "defaulting realtime priority to {}",
                num_threads + 1
            ));
            priority = num_threads + 1;
        }
        if priority != 0 && !policy.is_rt() {
            warnings.push("policy and priority don't match: setting policy to SCHED_FIFO".into());
            policy = Policy::Fifo;
        }
        if policy.is_rt() && priority == 0 {
            warnings.push(format!(
                "defaulting realtime priority to {}",
                num_threads + 1
            ));
            priority = num_threads + 1;
        }
        Resolved {
            num_threads,
            priority,
            policy,
            warnings,
        }
    }

    /// Thread `i`'s priority (`--priospread` lowers it by one per thread).
    pub fn thread_priority(&self, r: &Resolved, i: u32) -> u32 {
        if self.priospread {
            r.priority.saturating_sub(i)
        } else {
            r.priority
        }
    }

    /// Thread `i`'s policy: the program's policy if it is RT and the thread's priority is
    /// non-zero, SCHED_OTHER otherwise.
    pub fn thread_policy(&self, r: &Resolved, i: u32) -> Policy {
        if self.thread_priority(r, i) != 0 && r.policy.is_rt() {
            r.policy
        } else {
            Policy::Other
        }
    }

    /// Thread `i`'s interval: without a histogram each thread is `distance` slower than the
    /// previous one.
    pub fn thread_interval_us(&self, i: u32) -> u64 {
        if self.histogram.is_some() {
            self.interval_us as u64
        } else {
            self.interval_us as u64 + i as u64 * self.distance_us as u64
        }
    }

    /// Thread `i`'s CPU, if pinned (`cpus` = CPUs of the machine).
    pub fn thread_cpu(&self, i: u32, cpus: u32) -> Option<u32> {
        match &self.affinity {
            Affinity::Unspecified => None,
            Affinity::UseAll => (cpus > 0).then(|| i % cpus),
            Affinity::Cpus(list) if list.is_empty() => None,
            Affinity::Cpus(list) => Some(list[(i as usize) % list.len()]),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Affinity,
    Aligned,
    Breaktrace,
    Clock,
    DefaultSystem,
    Distance,
    Duration,
    Latency,
    Fifo,
    Histogram,
    Histofall,
    Histfile,
    Interval,
    Json,
    Laptop,
    Loops,
    MainAffinity,
    Mlockall,
    Refresh,
    Nsecs,
    Oscope,
    Priority,
    Quiet,
    Priospread,
    Relative,
    Resolution,
    Secaligned,
    System,
    Smi,
    Smp,
    Spike,
    SpikeNodes,
    Threads,
    Tracemark,
    Unbuffered,
    Verbose,
    DbgCyclictest,
    Policy,
    Help,
    PosixTimers,
    Nanosleep,
}

use ArgKind::{None as NoArg, Optional as Opt, Required as Req};

/// rt-tests 2.5 `long_options` and `a::A::b:c:d:D:F:h:H:i:l:MNo:p:mqrRsSt::uvD:x`, plus
/// the 1.x `-n`.
const SPECS: &[Spec<Key>] = &[
    Spec::new(Some('a'), Some("affinity"), Opt, Key::Affinity),
    Spec::new(Some('A'), Some("aligned"), Opt, Key::Aligned),
    Spec::new(Some('b'), Some("breaktrace"), Req, Key::Breaktrace),
    Spec::new(Some('c'), Some("clock"), Req, Key::Clock),
    Spec::new(None, Some("default-system"), NoArg, Key::DefaultSystem),
    Spec::new(Some('d'), Some("distance"), Req, Key::Distance),
    Spec::new(Some('D'), Some("duration"), Req, Key::Duration),
    Spec::new(None, Some("latency"), Req, Key::Latency),
    Spec::new(Some('F'), Some("fifo"), Req, Key::Fifo),
    Spec::new(Some('h'), Some("histogram"), Req, Key::Histogram),
    Spec::new(Some('H'), Some("histofall"), Req, Key::Histofall),
    Spec::new(None, Some("histfile"), Req, Key::Histfile),
    Spec::new(Some('i'), Some("interval"), Req, Key::Interval),
    Spec::new(None, Some("json"), Req, Key::Json),
    Spec::new(None, Some("laptop"), NoArg, Key::Laptop),
    Spec::new(Some('l'), Some("loops"), Req, Key::Loops),
    Spec::new(None, Some("mainaffinity"), Req, Key::MainAffinity),
    Spec::new(Some('m'), Some("mlockall"), NoArg, Key::Mlockall),
    Spec::new(Some('M'), Some("refresh_on_max"), NoArg, Key::Refresh),
    Spec::new(Some('N'), Some("nsecs"), NoArg, Key::Nsecs),
    Spec::new(Some('o'), Some("oscope"), Req, Key::Oscope),
    Spec::new(Some('p'), Some("priority"), Req, Key::Priority),
    Spec::new(Some('q'), Some("quiet"), NoArg, Key::Quiet),
    Spec::new(None, Some("priospread"), NoArg, Key::Priospread),
    Spec::new(Some('r'), Some("relative"), NoArg, Key::Relative),
    Spec::new(Some('R'), Some("resolution"), NoArg, Key::Resolution),
    Spec::new(None, Some("secaligned"), Opt, Key::Secaligned),
    Spec::new(Some('s'), Some("system"), NoArg, Key::System),
    Spec::new(None, Some("smi"), NoArg, Key::Smi),
    Spec::new(Some('S'), Some("smp"), NoArg, Key::Smp),
    Spec::new(None, Some("spike"), Req, Key::Spike),
    Spec::new(None, Some("spike-nodes"), Req, Key::SpikeNodes),
    Spec::new(Some('t'), Some("threads"), Opt, Key::Threads),
    Spec::new(None, Some("tracemark"), NoArg, Key::Tracemark),
    Spec::new(Some('u'), Some("unbuffered"), NoArg, Key::Unbuffered),
    Spec::new(Some('v'), Some("verbose"), NoArg, Key::Verbose),
    Spec::new(None, Some("dbg_cyclictest"), NoArg, Key::DbgCyclictest),
    Spec::new(None, Some("policy"), Req, Key::Policy),
    Spec::new(Some('?'), Some("help"), NoArg, Key::Help),
    Spec::new(Some('x'), Some("posix_timers"), NoArg, Key::PosixTimers),
    Spec::new(Some('n'), None, NoArg, Key::Nanosleep),
];

/// cyclictest `handlepolicy()`: case-insensitive prefix tests, anything else is
/// SCHED_OTHER. Returns the policy and whether the name was recognised.
fn handle_policy(name: &str) -> (Policy, bool) {
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("other") {
        (Policy::Other, true)
    } else if lower.starts_with("batch") {
        (Policy::Batch, true)
    } else if lower.starts_with("idle") {
        (Policy::Idle, true)
    } else if lower.starts_with("fifo") {
        (Policy::Fifo, true)
    } else if lower.starts_with("rr") {
        (Policy::Rr, true)
    } else {
        // "normal" is listed in cyclictest's help and also ends up here: same result.
        (Policy::Other, lower == "normal")
    }
}

/// rt-tests `parse_time_string()`: seconds, or a number followed by m, h or d
/// (case-insensitive). `s` is accepted as seconds (cyclictest ignores it).
fn duration_value(option: &str, value: &str) -> Result<u64, OptionError> {
    let bad = || OptionError::BadValue {
        program: PROG,
        option: option.to_string(),
        reason: format!(
            "expected seconds, optionally with a suffix m, h or d (e.g. 63, 10m), got '{value}'"
        ),
    };
    let (digits, scale) = match value.chars().last() {
        Some('m' | 'M') => (&value[..value.len() - 1], 60),
        Some('h' | 'H') => (&value[..value.len() - 1], 3600),
        Some('d' | 'D') => (&value[..value.len() - 1], 86_400),
        Some('s' | 'S') => (&value[..value.len() - 1], 1),
        _ => (value, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(scale).ok_or_else(bad)
}

/// A CPU list as `-a`/`--mainaffinity` take it; `all` for every CPU.
fn cpus_value(option: &str, value: &str) -> Result<Affinity, OptionError> {
    if value == "all" {
        return Ok(Affinity::UseAll);
    }
    if value.starts_with(['!', '+']) {
        return Err(OptionError::NotModelled {
            program: PROG,
            option: option.to_string(),
            detail: format!("inverted or relative CPU list '{value}'"),
        });
    }
    cmdline::cpu_list(value)
        .map(Affinity::Cpus)
        .ok_or_else(|| OptionError::BadValue {
            program: PROG,
            option: option.to_string(),
            reason: format!("expected a CPU list like 0-3,5, got '{value}'"),
        })
}

/// Parses the words after `cyclictest`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: true,
        negation: false,
    };
    let mut o = Options::default();
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    let mut affinity_given = false;
    let mut distance_given = false;
    while let Some(found) = sc.next_option() {
        let found = found?;
        let opt = found.spelled.clone();
        let value = found.value.clone().unwrap_or_default();
        let not_modelled = |detail: &str| OptionError::NotModelled {
            program: PROG,
            option: opt.clone(),
            detail: detail.to_string(),
        };
        match found.key {
            Key::Threads => {
                if o.smp {
                    o.warnings.push("-t ignored due to smp mode".into());
                    continue;
                }
                // An optional argument is either attached, or the next word when atoi()
                // of it is non-zero (cyclictest looks at argv[optind] itself).
                let v = found
                    .value
                    .clone()
                    .or_else(|| sc.take_next_if(|w| cmdline::atoi(w) != 0));
                o.threads = match v {
                    Some(v) => Threads::Count(cmdline::int_in(
                        PROG,
                        &opt,
                        &v,
                        1,
                        u32::MAX as i64,
                        "a thread count >= 1",
                    )? as u32),
                    None => Threads::AllCpus,
                };
            }
            Key::Interval => o.interval_us = cmdline::positive_u32(PROG, &opt, &value)?,
            Key::Distance => {
                o.distance_us = cmdline::non_negative_u32(PROG, &opt, &value)?;
                distance_given = true;
            }
            Key::Duration => {
                let d = duration_value(&opt, &value)?;
                cmdline::check_run_secs(PROG, &opt, &value, d as u128)?;
                o.duration_secs = (d > 0).then_some(d);
            }
            Key::Loops => {
                let l = cmdline::int_in(PROG, &opt, &value, 0, i64::MAX, "a non-negative integer")?;
                o.loops = (l > 0).then_some(l as u64);
            }
            Key::Priority => {
                o.priority =
                    cmdline::int_in(PROG, &opt, &value, 0, 99, "a priority in 0..=99")? as u32;
                if !o.policy.is_rt() {
                    o.policy = Policy::Fifo;
                }
            }
            Key::Policy => {
                let (policy, known) = handle_policy(&value);
                if !known {
                    o.warnings.push(format!(
                        "cyclictest: --policy={value}: not a policy name cyclictest knows \
                         (other, batch, idle, fifo, rr); it falls back to SCHED_OTHER"
                    ));
                }
                o.policy = policy;
            }
            Key::Priospread => o.priospread = true,
            Key::Mlockall => o.mlockall = true,
            Key::Histogram | Key::Histofall => {
                if found.key == Key::Histofall {
                    o.histofall = true;
                }
                let mut n = cmdline::positive_u32(PROG, &opt, &value)?;
                if n > HIST_MAX {
                    o.warnings.push(format!(
                        "cyclictest: {opt} {n}: clamped to {HIST_MAX} buckets"
                    ));
                    n = HIST_MAX;
                }
                o.histogram = Some(n);
            }
            Key::Quiet => o.quiet = true,
            Key::Affinity => {
                affinity_given = true;
                if o.smp {
                    continue;
                }
                let v = found.value.clone().or_else(|| {
                    sc.take_next_if(|w| {
                        cmdline::atoi(w) != 0 || w.starts_with(['0', '!', '+', 'a'])
                    })
                });
                o.affinity = match v {
                    Some(v) => cpus_value(&opt, &v)?,
                    None => Affinity::UseAll,
                };
            }
            Key::Smp => {
                o.smp = true;
                o.threads = Threads::AllCpus;
                o.affinity = Affinity::UseAll;
            }
            Key::MainAffinity => {
                o.main_affinity = Some(match cpus_value(&opt, &value)? {
                    Affinity::Cpus(list) => list,
                    _ => {
                        return Err(OptionError::NotModelled {
                            program: PROG,
                            option: opt,
                            detail: "'all'; give a CPU list".to_string(),
                        })
                    }
                });
            }
            Key::Secaligned => {
                let v = found
                    .value
                    .clone()
                    .or_else(|| sc.take_next_if(|w| cmdline::atoi(w) != 0));
                o.secaligned = Some(match v {
                    Some(v) => cmdline::non_negative_u32(PROG, &opt, &v)?,
                    None => 0,
                });
            }
            Key::Latency => {
                let v = cmdline::int_in(
                    PROG,
                    &opt,
                    &value,
                    i32::MIN as i64,
                    i32::MAX as i64,
                    "an integer",
                )?;
                o.latency_target_us = v.max(0) as u32;
            }
            Key::Laptop | Key::DefaultSystem => o.set_cpu_dma_latency = false,
            Key::Clock => {
                cmdline::int_in(
                    PROG,
                    &opt,
                    &value,
                    0,
                    1,
                    "0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)",
                )?;
            }
            Key::Refresh | Key::Unbuffered => {}
            Key::Nanosleep => o.warnings.push(
                "cyclictest: -n: rt-tests 2.x has no -n (clock_nanosleep is always the \
                 default); accepted and ignored"
                    .into(),
            ),
            Key::Aligned => return Err(not_modelled("aligned thread wake-ups")),
            Key::Breaktrace => return Err(not_modelled("break tracing")),
            Key::Fifo => return Err(not_modelled("statistics FIFO")),
            Key::Histfile => return Err(not_modelled("histogram to a file")),
            Key::Json => return Err(not_modelled("JSON output file")),
            Key::Nsecs => return Err(not_modelled("nanosecond resolution")),
            Key::Oscope => return Err(not_modelled("oscilloscope output")),
            Key::Relative => return Err(not_modelled("relative timers")),
            Key::Resolution => return Err(not_modelled("clock resolution check")),
            Key::System => return Err(not_modelled("sys_nanosleep / sys_setitimer mode")),
            Key::Smi => return Err(not_modelled("SMI counting")),
            Key::Spike | Key::SpikeNodes => return Err(not_modelled("spike recording")),
            Key::Tracemark => return Err(not_modelled("trace marks")),
            Key::Verbose => return Err(not_modelled("verbose per-sample output")),
            Key::DbgCyclictest => return Err(not_modelled("debug output")),
            Key::PosixTimers => return Err(not_modelled("POSIX interval timers")),
            Key::Help => return Err(not_modelled("help output")),
        }
    }
    if affinity_given && o.smp {
        o.warnings.push("-a ignored due to smp mode".into());
    }
    if o.histogram.is_some() && distance_given {
        o.warnings
            .push("distance is ignored and set to 0, if histogram enabled".into());
    }
    for w in sc.positionals() {
        o.warnings
            .push(format!("cyclictest: ignored argument '{w}'"));
    }
    o.check_size()?;
    Ok(o)
}

/// Most histogram buckets over all threads (`-t` × `-h`): 2^27, 1 GiB of counters.
/// Deviation: cyclictest allocates whatever is asked for; schedlab refuses rather than fail
/// the allocation.
pub const MAX_HISTOGRAM_BUCKETS: u64 = 1 << 27;

impl Options {
    /// Limits that keep a run representable, checked once every option is known: the thread
    /// count ([`cmdline::MAX_TASKS`] with the main thread), the histogram memory
    /// ([`MAX_HISTOGRAM_BUCKETS`]) and `-l` × the longest thread interval
    /// ([`cmdline::MAX_RUN_SECS`]). A `-t` without a number is settled per machine later and
    /// counts as one thread here, as in `duration_hint`.
    fn check_size(&self) -> Result<(), OptionError> {
        let threads = match self.threads {
            Threads::Count(n) => n as u128,
            Threads::AllCpus => 1,
        };
        if let Threads::Count(n) = self.threads {
            cmdline::check_tasks(PROG, &format!("-t {n}"), 1 + threads)?;
        }
        if let Some(buckets) = self.histogram {
            let total = threads * buckets as u128;
            if total > MAX_HISTOGRAM_BUCKETS as u128 {
                return Err(OptionError::Invalid {
                    program: PROG,
                    message: format!(
                        "-t {threads} -h {buckets}: {total} histogram buckets, more than the \
                         {MAX_HISTOGRAM_BUCKETS} schedlab allocates"
                    ),
                });
            }
        }
        if let Some(loops) = self.loops {
            // the longest interval is the last thread's: interval + (threads − 1) × distance
            // without a histogram
            let longest_us = (0..threads as u32)
                .last()
                .map_or(self.interval_us as u64, |i| self.thread_interval_us(i));
            let secs = loops as u128 * longest_us as u128 / 1_000_000;
            cmdline::check_run_secs(PROG, "-l", &format!("{loops} (× {longest_us} us)"), secs)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn seed_004_line() {
        let o = p("-t 1 -i 2777 -D 63 --policy=fair --mlock -h 20000 -q").unwrap();
        assert_eq!(o.threads, Threads::Count(1));
        assert_eq!(
            (o.interval_us, o.duration_secs, o.histogram),
            (2777, Some(63), Some(20_000))
        );
        assert!(o.mlockall && o.quiet);
        assert_eq!(o.policy, Policy::Other);
        assert_eq!(o.warnings.len(), 1, "{:?}", o.warnings);
        assert!(o.warnings[0].contains("falls back to SCHED_OTHER"));
        let r = o.resolve(8);
        assert_eq!((r.num_threads, r.priority, r.policy), (1, 0, Policy::Other));
        assert_eq!(o.thread_policy(&r, 0), Policy::Other);
        assert_eq!(o.thread_interval_us(0), 2777);
    }

    #[test]
    fn option_forms() {
        let o = p("--threads=2 --interval 500 --duration=10m --histogram=100 --quiet").unwrap();
        assert_eq!(o.threads, Threads::Count(2));
        assert_eq!(
            (o.interval_us, o.duration_secs, o.histogram),
            (500, Some(600), Some(100))
        );
        let o = p("-t2 -i500 -D2h -h100 -q").unwrap();
        assert_eq!(
            (o.threads, o.duration_secs),
            (Threads::Count(2), Some(7200))
        );
        assert_eq!(p("-D 1d").unwrap().duration_secs, Some(86_400));
        assert_eq!(p("-D 30s").unwrap().duration_secs, Some(30));
        assert_eq!(p("-D 0").unwrap().duration_secs, None);
        assert!(p("-m").unwrap().mlockall);
        assert!(p("--mlockall").unwrap().mlockall);
        // -t alone: one thread per CPU; "-t 0" leaves the 0 as an ignored word.
        assert_eq!(p("-t").unwrap().threads, Threads::AllCpus);
        assert_eq!(p("-t -q").unwrap().threads, Threads::AllCpus);
        let o = p("-t 0").unwrap();
        assert_eq!((o.threads, o.warnings.len()), (Threads::AllCpus, 1));
        assert_eq!(p("-t 4").unwrap().resolve(8).num_threads, 4);
        assert_eq!(p("-t").unwrap().resolve(8).num_threads, 8);
        assert_eq!(p("-l 1000").unwrap().loops, Some(1000));
        let o = p("-n").unwrap();
        assert_eq!(o.warnings.len(), 1);
    }

    #[test]
    fn policies_and_priorities() {
        let o = p("-p 80").unwrap();
        assert_eq!((o.policy, o.priority), (Policy::Fifo, 80));
        assert_eq!(o.resolve(4).policy, Policy::Fifo);
        assert_eq!(p("--policy=rr -p 10").unwrap().policy, Policy::Rr);
        assert_eq!(p("--policy=RR").unwrap().policy, Policy::Rr);
        assert_eq!(p("--policy=fifo").unwrap().policy, Policy::Fifo);
        assert_eq!(p("--policy=batch").unwrap().policy, Policy::Batch);
        assert_eq!(p("--policy=idle").unwrap().policy, Policy::Idle);
        let o = p("--policy=normal").unwrap();
        assert_eq!((o.policy, o.warnings.len()), (Policy::Other, 0));
        // --policy=fifo without -p: priority defaults to threads + 1.
        let o = p("--policy=fifo -t 3").unwrap();
        let r = o.resolve(8);
        assert_eq!((r.priority, r.policy), (4, Policy::Fifo));
        assert_eq!(
            r.warnings,
            vec!["defaulting realtime priority to 4".to_string()]
        );
        // -p then --policy=other: the priority forces FIFO back.
        let r = p("-p 10 --policy=other").unwrap().resolve(1);
        assert_eq!(r.policy, Policy::Fifo);
        assert!(r.warnings[0].starts_with("policy and priority don't match"));
        // --priospread: thread i runs at prio - i.
        let o = p("-t 3 -p 50 --priospread").unwrap();
        let r = o.resolve(8);
        assert_eq!(
            (0..3).map(|i| o.thread_priority(&r, i)).collect::<Vec<_>>(),
            vec![50, 49, 48]
        );
        assert!(p("-p 100").is_err());
    }

    #[test]
    fn intervals_and_affinity() {
        // No histogram: thread i sleeps interval + i × distance.
        let o = p("-t 3 -i 1000 -d 100").unwrap();
        assert_eq!(
            (0..3).map(|i| o.thread_interval_us(i)).collect::<Vec<_>>(),
            vec![1000, 1100, 1200]
        );
        let o = p("-t 3 -i 1000 -d 100 -h 50").unwrap();
        assert_eq!(o.thread_interval_us(2), 1000);
        assert_eq!(o.warnings.len(), 1);
        assert_eq!(p("-a").unwrap().affinity, Affinity::UseAll);
        assert_eq!(p("-a 2").unwrap().affinity, Affinity::Cpus(vec![2]));
        assert_eq!(p("-a 0").unwrap().affinity, Affinity::Cpus(vec![0]));
        assert_eq!(
            p("-a3-5,0").unwrap().affinity,
            Affinity::Cpus(vec![0, 3, 4, 5])
        );
        assert_eq!(p("--affinity=1").unwrap().affinity, Affinity::Cpus(vec![1]));
        // -a 3-5,0 -t 5: threads on 0, 3, 4, 5, 0.
        let o = p("-a 3-5,0 -t 5").unwrap();
        assert_eq!(
            (0..5).map(|i| o.thread_cpu(i, 8)).collect::<Vec<_>>(),
            vec![Some(0), Some(3), Some(4), Some(5), Some(0)]
        );
        // -t without number and a CPU list: one thread per listed CPU.
        assert_eq!(p("-a 1,2 -t").unwrap().resolve(8).num_threads, 2);
        let o = p("-S").unwrap();
        assert_eq!(
            (o.threads, o.affinity.clone()),
            (Threads::AllCpus, Affinity::UseAll)
        );
        assert_eq!(o.thread_cpu(9, 8), Some(1));
        assert_eq!(p("-S -t 2").unwrap().threads, Threads::AllCpus);
        assert_eq!(p("--mainaffinity=0").unwrap().main_affinity, Some(vec![0]));
        assert_eq!(p("--secaligned").unwrap().secaligned, Some(0));
        assert_eq!(p("--secaligned=250").unwrap().secaligned, Some(250));
    }

    #[test]
    fn dma_latency_and_misc() {
        assert!(p("").unwrap().set_cpu_dma_latency);
        assert!(!p("--laptop").unwrap().set_cpu_dma_latency);
        assert!(!p("--default-system").unwrap().set_cpu_dma_latency);
        assert_eq!(p("--latency=-5").unwrap().latency_target_us, 0);
        assert_eq!(p("--latency 20").unwrap().latency_target_us, 20);
        assert!(p("-c 1 -M -u").is_ok());
        let o = p("-h 2000000").unwrap();
        assert_eq!((o.histogram, o.warnings.len()), (Some(HIST_MAX), 1));
        let o = p("-H 10 -t 2").unwrap();
        assert!(o.histofall);
    }

    #[test]
    fn errors() {
        assert_eq!(
            p("-i x").unwrap_err().to_string(),
            "cyclictest: -i: expected a positive integer, got 'x'"
        );
        assert!(matches!(p("-i 0"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-h 0"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-D 5x"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-D -5"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-t0"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-c 2"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-ax"), Err(OptionError::BadValue { .. })));
        // Detached, "x" is not a CPU list to cyclictest: -a alone, "x" ignored.
        let o = p("-a x").unwrap();
        assert_eq!(
            (o.affinity.clone(), o.warnings.len()),
            (Affinity::UseAll, 1)
        );
        assert!(matches!(p("-a !1"), Err(OptionError::NotModelled { .. })));
        assert!(matches!(p("-v"), Err(OptionError::NotModelled { .. })));
        assert!(matches!(p("-N"), Err(OptionError::NotModelled { .. })));
        assert!(matches!(
            p("--json=x"),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(p("--hist=10"), Err(OptionError::Ambiguous { .. })));
        assert!(matches!(p("-z"), Err(OptionError::Unknown { .. })));
        assert!(matches!(p("--foo"), Err(OptionError::Unknown { .. })));
        assert!(matches!(
            p("--policy"),
            Err(OptionError::MissingValue { .. })
        ));
    }

    #[test]
    fn size_limits() {
        // -D at most 2^33 s = 8589934592 s (cmdline::MAX_RUN_SECS); 1e12 s would overflow the
        // u64 ns clock (1e21 ns).
        assert_eq!(
            p("-D 8589934592").unwrap().duration_secs,
            Some(8_589_934_592)
        );
        let e = p("-D 1000000000000").unwrap_err().to_string();
        assert!(e.starts_with("cyclictest: -D: '1000000000000' is"), "{e}");
        // 99999999d = 8 639 999 913 600 s
        assert!(p("-D 99999999d").is_err());
        // -l × interval: 2^63 − 1 loops of 1000 us ≈ 9.2 × 10¹⁵ s.
        let e = p("-l 9223372036854775807 -q").unwrap_err().to_string();
        assert!(e.starts_with("cyclictest: -l: "), "{e}");
        // 8589934592 loops of 1000 us = 8589934.592 s: fine.
        assert!(p("-l 8589934592").is_ok());
        // Threads: 1 main + t ≤ 32768.
        assert!(p("-t 32767 -l 1").is_ok());
        assert_eq!(
            p("-t 32768").unwrap_err().to_string(),
            "cyclictest: -t 32768: 32769 tasks, more than the 32768 a default pid_max allows"
        );
        assert!(p("-t 4294967295").is_err());
        // Histogram memory: t × h ≤ 2^27 = 134217728 buckets; 134 × 1000000 = 1.34e8 fits,
        // 135 × 1000000 does not.
        assert!(p("-t 134 -h 1000000").is_ok());
        let e = p("-t 135 -h 1000000").unwrap_err().to_string();
        assert!(e.contains("135000000 histogram buckets"), "{e}");
    }
}
