//! hackbench command lines, in both implementations (workloads.md §3.1):
//!
//! * rt-tests `hackbench` 2.5 — [`parse`], the words after `hackbench`;
//! * `perf bench sched messaging` — [`parse_perf`], the words after `messaging`, or
//!   [`parse_perf_bench`], the words after `perf` (`bench [--format F] [--repeat N] sched
//!   messaging ...`), which also reads the `perf bench` level options.
//!
//! A workload line is a perf one when its words begin `perf bench`; the facade dispatches on
//! the first word (`hackbench` or `perf`).
//!
//! | rt-tests | perf | modelled |
//! |---|---|---|
//! | `-p`, `--pipe` | `-p`, `--pipe` | yes: pipes instead of AF_UNIX socketpairs |
//! | `-T`, `--threads` / `-P`, `--processes` | `-t`, `--thread` | yes |
//! | `-g N`, `--groups=N` | `-g N`, `--group=N` | yes (default 10; 1 + 2 × g × f ≤ 32768 tasks) |
//! | `-l N`, `--loops=N` | `-l N`, `--nr_loops=N` | yes (default 100) |
//! | `-f N`, `--fds=N` | `-f N`, `--fds=N` (newer perf, **unverified**) | yes (default 20) |
//! | `-s N`, `--datasize=N` | — (fixed 100) | yes (default 100) |
//! | `-F`, `--fifo` | — | yes: main thread SCHED_FIFO 1 |
//! | `-i`, `--inet` | — | yes: TCP connections over loopback (listen, connect, accept per pair; no `TCP_NODELAY`) |
//! | `-h`, `--help` | `-h`, `--help` | no |
//! | — | `perf bench -f/--format default\|simple` | yes (output format) |
//! | — | `perf bench -r/--repeat N` | accepted, no effect on messaging |

use super::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

/// Message transport between senders and receivers (and for the ready/wake channels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `socketpair(AF_UNIX, SOCK_STREAM)` (default).
    Socket,
    /// `pipe()` (`-p`).
    Pipe,
    /// A TCP connection over loopback (`-i`): hackbench's `inet_socketpair()` binds a
    /// listener to 127.0.0.1, connects to it, accepts and closes the listener.
    Inet,
}

/// Workers as forked processes (default) or threads of one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerMode {
    Process,
    Thread,
}

/// `perf bench --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfFormat {
    Default,
    Simple,
}

/// Which program prints the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    RtTests,
    Perf(PerfFormat),
}

/// A parsed hackbench command line (either implementation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub flavor: Flavor,
    pub groups: u32,
    /// Receivers per group, which is also senders per group.
    pub fds: u32,
    /// Messages each sender sends to each receiver.
    pub loops: u32,
    /// Bytes per message (perf: always 100).
    pub datasize: u32,
    pub transport: Transport,
    pub mode: WorkerMode,
    /// rt-tests `-F`: the main thread becomes SCHED_FIFO priority 1 after creating the
    /// workers.
    pub fifo_main: bool,
    /// Notes for the user (ignored positional words).
    pub warnings: Vec<String>,
}

pub const DEFAULT_GROUPS: u32 = 10;
pub const DEFAULT_FDS: u32 = 20;
pub const DEFAULT_LOOPS: u32 = 100;
pub const DEFAULT_DATASIZE: u32 = 100;

impl Options {
    fn defaults(flavor: Flavor) -> Self {
        Options {
            flavor,
            groups: DEFAULT_GROUPS,
            fds: DEFAULT_FDS,
            loops: DEFAULT_LOOPS,
            datasize: DEFAULT_DATASIZE,
            transport: Transport::Socket,
            mode: WorkerMode::Process,
            fifo_main: false,
            warnings: Vec::new(),
        }
    }

    /// Workers per group: `fds` receivers and `fds` senders.
    pub fn tasks_per_group(&self) -> u64 {
        2 * self.fds as u64
    }

    /// All workers.
    pub fn total_tasks(&self) -> u64 {
        self.groups as u64 * self.tasks_per_group()
    }

    /// Messages each receiver reads (and each sender writes): `fds × loops`.
    pub fn messages_per_worker(&self) -> u64 {
        self.fds as u64 * self.loops as u64
    }

    /// Messages in the whole run: `groups × fds × fds × loops`.
    pub fn total_messages(&self) -> u64 {
        self.groups as u64 * self.fds as u64 * self.messages_per_worker()
    }

    /// The main task plus every worker must fit [`cmdline::MAX_TASKS`]; computed in `u128`
    /// so that `-g 4294967295 -f 4294967295` cannot overflow. Within the cap,
    /// [`Options::total_messages`] fits `u64` (≤ 32768² / 4 × 2³² ≈ 1.2 × 10¹⁸).
    fn check_tasks(&self, program: &'static str) -> Result<(), OptionError> {
        let tasks = 1 + self.groups as u128 * 2 * self.fds as u128;
        cmdline::check_tasks(
            program,
            &format!("-g {} -f {}", self.groups, self.fds),
            tasks,
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Fds,
    Fifo,
    Groups,
    Help,
    Loops,
    Pipe,
    Inet,
    Datasize,
    Threads,
    Processes,
}

use ArgKind::{None as NoArg, Required as Req};

/// rt-tests 2.5 `hackbench` option table (complete, so abbreviations can be decided).
const RT_SPECS: &[Spec<Key>] = &[
    Spec::new(Some('f'), Some("fds"), Req, Key::Fds),
    Spec::new(Some('F'), Some("fifo"), NoArg, Key::Fifo),
    Spec::new(Some('g'), Some("groups"), Req, Key::Groups),
    Spec::new(Some('h'), Some("help"), NoArg, Key::Help),
    Spec::new(Some('l'), Some("loops"), Req, Key::Loops),
    Spec::new(Some('p'), Some("pipe"), NoArg, Key::Pipe),
    Spec::new(Some('i'), Some("inet"), NoArg, Key::Inet),
    Spec::new(Some('s'), Some("datasize"), Req, Key::Datasize),
    Spec::new(Some('T'), Some("threads"), NoArg, Key::Threads),
    Spec::new(Some('P'), Some("processes"), NoArg, Key::Processes),
];

/// Parses the words after rt-tests `hackbench`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    const PROG: &str = "hackbench";
    let style = Style {
        abbreviations: true,
        negation: false,
    };
    let mut o = Options::defaults(Flavor::RtTests);
    let mut sc = Scanner::new(PROG, RT_SPECS, style, args);
    let mut inet = false;
    while let Some(found) = sc.next_option() {
        let found = found?;
        let positive = || cmdline::positive_u32(PROG, &found.spelled, cmdline::required(&found));
        match found.key {
            Key::Fds => o.fds = positive()?,
            Key::Groups => o.groups = positive()?,
            Key::Loops => o.loops = positive()?,
            Key::Datasize => o.datasize = positive()?,
            Key::Fifo => o.fifo_main = true,
            Key::Pipe => o.transport = Transport::Pipe,
            Key::Threads => o.mode = WorkerMode::Thread,
            Key::Processes => o.mode = WorkerMode::Process,
            Key::Inet => inet = true,
            Key::Help => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: found.spelled,
                    detail: "help output".to_string(),
                })
            }
        }
    }
    if inet && o.transport == Transport::Pipe {
        return Err(OptionError::Invalid {
            program: PROG,
            message: "--pipe|-p and --inet|-i cannot be used together".to_string(),
        });
    }
    if inet {
        o.transport = Transport::Inet;
    }
    o.check_tasks(PROG)?;
    // rt-tests hackbench ignores positional words.
    for w in sc.positionals() {
        o.warnings
            .push(format!("hackbench: ignored argument '{w}'"));
    }
    Ok(o)
}

/// `perf bench sched messaging` options.
const PERF_SPECS: &[Spec<Key>] = &[
    Spec::new(Some('p'), Some("pipe"), NoArg, Key::Pipe),
    Spec::new(Some('t'), Some("thread"), NoArg, Key::Threads),
    Spec::new(Some('g'), Some("group"), Req, Key::Groups),
    Spec::new(Some('l'), Some("nr_loops"), Req, Key::Loops),
    Spec::new(Some('f'), Some("fds"), Req, Key::Fds),
    Spec::new(Some('h'), Some("help"), NoArg, Key::Help),
];

const PERF: &str = "perf bench sched messaging";

/// Parses the words after `perf bench sched messaging` (default output format).
pub fn parse_perf(args: &[String]) -> Result<Options, OptionError> {
    parse_perf_with(args, PerfFormat::Default)
}

fn parse_perf_with(args: &[String], format: PerfFormat) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: true,
        negation: true,
    };
    let mut o = Options::defaults(Flavor::Perf(format));
    let mut sc = Scanner::new(PERF, PERF_SPECS, style, args);
    while let Some(found) = sc.next_option() {
        let found = found?;
        // perf OPT_UINTEGER: an unsigned number, 0 allowed; `--no-group` sets 0.
        let unsigned = || -> Result<u32, OptionError> {
            if found.negated {
                return Ok(0);
            }
            cmdline::int_in(
                PERF,
                &found.spelled,
                cmdline::required(&found),
                0,
                u32::MAX as i64,
                "an unsigned numerical value",
            )
            .map(|v| v as u32)
        };
        match found.key {
            Key::Pipe => {
                o.transport = if found.negated {
                    Transport::Socket
                } else {
                    Transport::Pipe
                }
            }
            Key::Threads => {
                o.mode = if found.negated {
                    WorkerMode::Process
                } else {
                    WorkerMode::Thread
                }
            }
            Key::Groups => o.groups = unsigned()?,
            Key::Loops => o.loops = unsigned()?,
            Key::Fds => o.fds = unsigned()?,
            _ => {
                return Err(OptionError::NotModelled {
                    program: PERF,
                    option: found.spelled,
                    detail: "help output".to_string(),
                })
            }
        }
    }
    o.check_tasks(PERF)?;
    for w in sc.positionals() {
        o.warnings.push(format!("{PERF}: ignored argument '{w}'"));
    }
    Ok(o)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BenchKey {
    Format,
    Repeat,
}

/// Parses the words after `perf`: `bench [-f|--format default|simple] [-r|--repeat N]
/// sched messaging [options]`.
pub fn parse_perf_bench(args: &[String]) -> Result<Options, OptionError> {
    const PROG: &str = "perf";
    const BENCH_SPECS: &[Spec<BenchKey>] = &[
        Spec::new(Some('f'), Some("format"), Req, BenchKey::Format),
        Spec::new(Some('r'), Some("repeat"), Req, BenchKey::Repeat),
    ];
    let not_messaging = |what: &str| OptionError::NotModelled {
        program: PROG,
        option: what.to_string(),
        detail: "schedlab models only 'perf bench sched messaging'".to_string(),
    };
    match args.first() {
        Some(w) if w == "bench" => {}
        Some(w) => return Err(not_messaging(w)),
        None => {
            return Err(OptionError::Invalid {
                program: PROG,
                message: "expected 'bench sched messaging'".to_string(),
            })
        }
    }
    // The perf bench level options stop at the first non-option word (the collection).
    let rest = &args[1..];
    let takes_value = |w: &str| {
        w == "-f"
            || w == "-r"
            || w.strip_prefix("--").is_some_and(|n| {
                !n.is_empty()
                    && !n.contains('=')
                    && ("format".starts_with(n) || "repeat".starts_with(n))
            })
    };
    let mut split = 0;
    while let Some(w) = rest.get(split) {
        if !w.starts_with('-') {
            break;
        }
        split += if takes_value(w) { 2 } else { 1 };
    }
    let split = split.min(rest.len());
    let style = Style {
        abbreviations: true,
        negation: false,
    };
    let mut format = PerfFormat::Default;
    let mut sc = Scanner::new(PROG, BENCH_SPECS, style, &rest[..split]);
    while let Some(found) = sc.next_option() {
        let found = found?;
        let value = cmdline::required(&found);
        match found.key {
            BenchKey::Format => {
                format = match value {
                    "default" => PerfFormat::Default,
                    "simple" => PerfFormat::Simple,
                    _ => {
                        return Err(OptionError::BadValue {
                            program: PROG,
                            option: found.spelled.clone(),
                            reason: format!("unknown format descriptor: '{value}'"),
                        })
                    }
                }
            }
            BenchKey::Repeat => {
                cmdline::positive_u32(PROG, &found.spelled, value)?;
            }
        }
    }
    let words = &rest[split..];
    match (
        words.first().map(String::as_str),
        words.get(1).map(String::as_str),
    ) {
        (Some("sched"), Some("messaging")) => parse_perf_with(&words[2..], format),
        (Some(coll), Some(bench)) => Err(not_messaging(&format!("{coll} {bench}"))),
        (Some(coll), None) => Err(not_messaging(coll)),
        (None, _) => Err(OptionError::Invalid {
            program: PROG,
            message: "expected 'bench sched messaging'".to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn rt_tests_seed_004_line() {
        let o = parse(&w("-T -p -l 16000000 -g 2")).unwrap();
        assert_eq!(o.mode, WorkerMode::Thread);
        assert_eq!(o.transport, Transport::Pipe);
        assert_eq!(
            (o.loops, o.groups, o.fds, o.datasize),
            (16_000_000, 2, 20, 100)
        );
        // 2 groups × 20 × 20 × 16e6 = 1.28e10 messages (spec §3.1).
        assert_eq!(o.total_messages(), 12_800_000_000);
        assert_eq!(o.total_tasks(), 80);
    }

    #[test]
    fn rt_tests_forms() {
        let o = parse(&w("--threads --pipe --loops=5 --groups 3 -f4 -s 64 -F")).unwrap();
        assert_eq!((o.loops, o.groups, o.fds, o.datasize), (5, 3, 4, 64));
        assert!(o.fifo_main);
        let o = parse(&w("-T -P --proc")).unwrap();
        assert_eq!(o.mode, WorkerMode::Process);
        let o = parse(&w("-pT")).unwrap();
        assert_eq!((o.transport, o.mode), (Transport::Pipe, WorkerMode::Thread));
        let o = parse(&[]).unwrap();
        assert_eq!(o, Options::defaults(Flavor::RtTests));
        assert_eq!(o.total_messages(), 10 * 20 * 20 * 100);
        assert_eq!(parse(&w("-p 4")).unwrap().warnings.len(), 1);
    }

    #[test]
    fn rt_tests_errors() {
        assert_eq!(
            parse(&w("-l x")).unwrap_err().to_string(),
            "hackbench: -l: expected a positive integer, got 'x'"
        );
        assert!(matches!(
            parse(&w("-g 0")),
            Err(OptionError::BadValue { .. })
        ));
        assert_eq!(parse(&w("-i")).unwrap().transport, Transport::Inet);
        assert!(matches!(
            parse(&w("-i -p")),
            Err(OptionError::Invalid { .. })
        ));
        // glibc getopt_long accepts the unambiguous abbreviation.
        assert_eq!(parse(&w("--thread")).unwrap().mode, WorkerMode::Thread);
        assert!(matches!(
            parse(&w("--verbose")),
            Err(OptionError::Unknown { .. })
        ));
        assert!(matches!(parse(&w("-x")), Err(OptionError::Unknown { .. })));
        assert!(matches!(
            parse(&w("-h")),
            Err(OptionError::NotModelled { .. })
        ));
        // Task count: 1 main + g × 2 × f workers ≤ 32768 (cmdline::MAX_TASKS).
        // -g 819 -f 20: 1 + 32760 = 32761 fits; -g 820: 1 + 32800 does not.
        assert!(parse(&w("-g 819")).is_ok());
        assert_eq!(
            parse(&w("-g 820")).unwrap_err().to_string(),
            "hackbench: -g 820 -f 20: 32801 tasks, more than the 32768 a default pid_max allows"
        );
        // 1 + 2 × (2^32 − 1)² ≈ 3.7 × 10¹⁹ would overflow u64.
        assert!(matches!(
            parse(&w("-g 4294967295 -f 4294967295")),
            Err(OptionError::Invalid { .. })
        ));
    }

    #[test]
    fn perf_forms() {
        let o = parse_perf(&w("--pipe --thread -g 4 -l 10000")).unwrap();
        assert_eq!(o.flavor, Flavor::Perf(PerfFormat::Default));
        assert_eq!((o.transport, o.mode), (Transport::Pipe, WorkerMode::Thread));
        assert_eq!((o.groups, o.loops, o.fds), (4, 10_000, 20));
        let o = parse_perf(&w("-pt -g4 --nr_loops=7 --gr 2")).unwrap();
        assert_eq!((o.groups, o.loops), (2, 7));
        let o = parse_perf(&w("-p --no-pipe -g 0")).unwrap();
        assert_eq!((o.transport, o.groups), (Transport::Socket, 0));
        assert!(parse_perf(&w("-g -1")).is_err());
        assert!(matches!(
            parse_perf(&w("-T")),
            Err(OptionError::Unknown { .. })
        ));
        assert!(matches!(
            parse_perf(&w("-s 10")),
            Err(OptionError::Unknown { .. })
        ));
        assert!(matches!(
            parse_perf(&w("-g 100000")),
            Err(OptionError::Invalid { .. })
        ));
    }

    #[test]
    fn perf_bench_prefix() {
        let o = parse_perf_bench(&w("bench sched messaging -p -g 12 -l 10000")).unwrap();
        assert_eq!(
            (o.flavor, o.groups),
            (Flavor::Perf(PerfFormat::Default), 12)
        );
        let o = parse_perf_bench(&w("bench --format simple sched messaging")).unwrap();
        assert_eq!(o.flavor, Flavor::Perf(PerfFormat::Simple));
        let o = parse_perf_bench(&w("bench -f simple -r 3 sched messaging -t")).unwrap();
        assert_eq!(
            (o.flavor, o.mode),
            (Flavor::Perf(PerfFormat::Simple), WorkerMode::Thread)
        );
        let o = parse_perf_bench(&w("bench --format=simple sched messaging")).unwrap();
        assert_eq!(o.flavor, Flavor::Perf(PerfFormat::Simple));
        assert!(matches!(
            parse_perf_bench(&w("bench sched pipe")),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(
            parse_perf_bench(&w("stat -- hackbench")),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(
            parse_perf_bench(&w("bench --format xml sched messaging")),
            Err(OptionError::BadValue { .. })
        ));
    }
}
