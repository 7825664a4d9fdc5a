//! Generated hostile input for every front end (kernel strings, workload lines, rt-app JSON,
//! platform TOML, scenario TOML) and the oracle that judges what schedlab did with it.
//!
//! Each generator turns a `u64` seed into one input, so the property tests (proptest picks the
//! seeds and shrinks them) and the long campaign (`examples/fuzz_campaign.rs`, seeds 0..N)
//! share them. Inputs are built from the real vocabulary (presets, patch ids, feature names,
//! every modelled option of every program, rt-app keys, platform and scenario files) mixed with
//! boundary numbers and random mutations, so that most of them get past the first check.
//! Seed 003's front ends are in it too: `make` (`-jN`, `-j N`, `--jobs=N`, `--units`, `-s`,
//! `-k`) and `llama-batched-bench` (every option, comma lists with empty entries) behind the
//! `time`, `chrt --idle 0` and `nice -n 19` prefixes; platform files with `[programs.make]`
//! and `[programs.llama-batched-bench]` (which then run that program); scenario files of kind
//! tables (the built-in one and small generated ones, with their checks).
//!
//! The oracle: an input either runs (simulated for at most [`SIM_NS`]) or is refused with a
//! non-empty one-line message that the CLI maps to exit code 2. A panic (including an
//! arithmetic overflow in a build with overflow checks), an error that maps to exit 1 or a
//! multi-line message is a failure.

use crate::run::{run_on, RunError, RunSpec};
use schedlab_platform::Platform;
use schedlab_sched::features::Feature;
use schedlab_sched::patches::Patch;
use schedlab_sched::presets::PRESETS;
use schedlab_sched::KernelConfig;
use std::path::{Path, PathBuf};

/// Longest simulated time of one generated input: 1 ms.
pub const SIM_NS: u64 = 1_000_000;

/// The front ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    Kernel,
    Workload,
    RtApp,
    Platform,
    Scenario,
}

impl Front {
    pub const ALL: [Front; 5] = [
        Front::Kernel,
        Front::Workload,
        Front::RtApp,
        Front::Platform,
        Front::Scenario,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Front::Kernel => "kernel",
            Front::Workload => "workload",
            Front::RtApp => "rt-app",
            Front::Platform => "platform",
            Front::Scenario => "scenario",
        }
    }
}

/// What became of one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Parsed and simulated.
    Ran,
    /// Refused with this one-line message (exit code 2).
    Refused(String),
}

/// SplitMix64: a small deterministic generator for the inputs (not the simulator's RNG).
#[derive(Clone, Debug)]
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed ^ 0x5eed_1ab5_c4ed_0000)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// true with probability `num`/`den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers at and around every boundary the parsers know.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "10",
    "20",
    "99",
    "100",
    "1000",
    "4096",
    "32767",
    "32768",
    "32769",
    "65536",
    "1000000",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "8589934592",
    "8589934593",
    "8589934592000000",
    "8589934592000001",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-1",
    "-2",
    "-2147483648",
    "-9223372036854775808",
    "1.5",
    "0.0001",
    "1e3",
    "0x10",
    "010",
    "+5",
    "",
    "x",
    "NaN",
    "inf",
];

const DURATIONS: &[&str] = &[
    "1",
    "1s",
    "10ms",
    "1us",
    "1ns",
    "0",
    "0s",
    "2.5ms",
    "1m",
    "1h",
    "1d",
    "1w",
    "1y",
    "10x",
    "-1s",
    "8589934592",
    "8589934593",
    "143165577m",
    "1.0000000001s",
    "s",
    "",
];

fn number(g: &mut Gen) -> String {
    // Half of the numbers are ordinary, so that most inputs get past their first check.
    if g.chance(1, 2) {
        return g
            .pick(&[
                "1", "2", "4", "10", "50", "100", "500", "1000", "5000", "20000",
            ])
            .to_string();
    }
    if g.chance(1, 8) {
        return g.next_u64().to_string();
    }
    if g.chance(1, 16) {
        return (g.next_u64() as i64).to_string();
    }
    g.pick(NUMBERS).to_string()
}

fn duration(g: &mut Gen) -> String {
    if g.chance(1, 2) {
        g.pick(DURATIONS).to_string()
    } else {
        format!(
            "{}{}",
            number(g),
            g.pick(&["", "s", "ms", "us", "ns", "m", "h"])
        )
    }
}

/// Random edits of a text: delete, duplicate or swap a span, insert a character or a
/// boundary number, truncate.
pub fn mutate(g: &mut Gen, text: &str, edits: usize) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for _ in 0..edits {
        let n = s.len();
        let at = if n == 0 { 0 } else { g.below(n + 1) };
        match g.below(7) {
            0 if n > 0 => {
                let len = 1 + g.below(8.min(n - at.min(n - 1)));
                let end = (at + len).min(n);
                s.drain(at.min(n - 1)..end);
            }
            1 if n > 0 => {
                let start = at.min(n - 1);
                let end = (start + 1 + g.below(16)).min(n);
                let piece: Vec<char> = s[start..end].to_vec();
                s.splice(start..start, piece);
            }
            2 => {
                let c = *g.pick(&[
                    '"', '\'', '{', '}', '[', ']', ',', ':', '=', '\n', '#', '\\', '-', '+', ' ',
                    '\0', 'é', '\u{202e}', '.', '_',
                ]);
                s.insert(at, c);
            }
            3 => {
                let num: Vec<char> = number(g).chars().collect();
                s.splice(at..at, num);
            }
            4 if n > 0 => s.truncate(at),
            _ => {
                // Replace a run of digits with a boundary number.
                if let Some(i) = (at..n).find(|&i| s[i].is_ascii_digit()) {
                    let mut j = i;
                    while j < n && (s[j].is_ascii_digit() || s[j] == '.') {
                        j += 1;
                    }
                    let num: Vec<char> = number(g).chars().collect();
                    s.splice(i..j, num);
                }
            }
        }
    }
    s.into_iter().collect()
}

// ------------------------------------------------------------------------------ kernel strings

/// A kernel string: a preset (sometimes wrong), patch, feature and tunable tokens.
pub fn gen_kernel(g: &mut Gen) -> String {
    let mut s = if g.chance(1, 20) {
        g.pick(&["v6.7", "", "V6.6", "v6.12.y", "6.12", "v7.1x"])
            .to_string()
    } else {
        g.pick(PRESETS).name.to_string()
    };
    let ntok = g.below(6);
    for _ in 0..ntok {
        let tok = match g.below(10) {
            0 | 1 => {
                let id = patch_id(g);
                format!("{}{id}", g.pick(&["+", "-"]))
            }
            2 => {
                // glued list on the preset or a token of several ids
                let mut t = String::new();
                for _ in 0..1 + g.below(3) {
                    let sign: &&str = g.pick(&["+", "-"]);
                    t.push_str(sign);
                    t.push_str(&patch_id(g));
                }
                if g.chance(1, 2) {
                    s.push_str(&t);
                    continue;
                }
                t
            }
            3..=5 => {
                let f = g.pick(Feature::ALL).name();
                let f = if g.chance(1, 30) { "NOT_A_FEATURE" } else { f };
                let sim = [
                    "SIM_JITTER",
                    "SIM_RUN_AHEAD",
                    "SIM_PIPE_MUTEX",
                    "SIM_EVENT_WHEEL",
                ];
                let f = if g.chance(1, 10) { g.pick(&sim) } else { f };
                format!("{}{f}", if g.chance(1, 2) { "NO_" } else { "" })
            }
            6..=8 => {
                let k = *g.pick(&[
                    "base_slice_ns",
                    "latency_ns",
                    "min_granularity_ns",
                    "wakeup_granularity_ns",
                    "idle_min_granularity_ns",
                    "sched_child_runs_first",
                    "migration_cost_ns",
                    "nr_migrate",
                    "tunable_scaling",
                    "sched_rt_runtime_us",
                    "sched_rt_period_us",
                    "timer_slack_ns",
                    "preempt",
                    "CONFIG_HZ",
                    "HZ",
                    "bogus",
                ]);
                let v = if k == "preempt" && g.chance(3, 4) {
                    g.pick(&["none", "voluntary", "full", "lazy", "rt", "RT", ""])
                        .to_string()
                } else if k.contains("HZ") && g.chance(1, 2) {
                    g.pick(&["100", "250", "300", "1000", "0", "1024"])
                        .to_string()
                } else {
                    number(g)
                };
                format!("{k}={v}")
            }
            _ => mutate(g, "NO_DELAY_DEQUEUE", 1),
        };
        s.push(' ');
        s.push_str(&tok);
    }
    if g.chance(1, 10) {
        s = {
            let e = 1 + g.below(3);
            mutate(g, &s, e)
        };
    }
    s
}

fn patch_id(g: &mut Gen) -> String {
    if g.chance(1, 15) {
        return format!("{:012x}", g.next_u64() & 0xffff_ffff_ffff);
    }
    let id = g.pick(Patch::ALL).id().to_string();
    if g.chance(1, 20) {
        id.to_uppercase()
    } else {
        id
    }
}

// ------------------------------------------------------------------------------ workload lines

/// (program words, options with values, options without values) for every modelled program.
struct Program {
    words: &'static str,
    with_value: &'static [&'static str],
    switches: &'static [&'static str],
}

const PROGRAMS: &[Program] = &[
    Program {
        words: "stress-ng",
        with_value: &[
            "--pipe",
            "-p",
            "--timeout",
            "-t",
            "--pipe-ops",
            "--pipe-data-size",
            "--pipe-size",
            "--cpu",
            "--taskset",
        ],
        switches: &["--metrics-brief", "-M", "--metrics", "--verify", "--pi"],
    },
    Program {
        words: "hackbench",
        with_value: &[
            "-g",
            "--groups",
            "-l",
            "--loops",
            "-f",
            "--fds",
            "-s",
            "--datasize",
            "--gr",
        ],
        switches: &[
            "-p",
            "--pipe",
            "-T",
            "--threads",
            "-P",
            "--processes",
            "-i",
            "--inet",
            "-F",
            "-h",
        ],
    },
    Program {
        words: "perf bench sched messaging",
        with_value: &["-g", "--group", "-l", "--nr_loops", "-f", "--fds"],
        switches: &["-p", "--pipe", "-t", "--thread", "--no-pipe", "--no-thread"],
    },
    Program {
        words: "schbench",
        with_value: &[
            "-m", "-t", "-r", "-w", "-i", "-z", "-F", "-n", "-s", "-p", "-M", "-W", "-R", "-A",
            "-j",
        ],
        switches: &["-L", "-C", "-J", "--cache_footprint", "--pin", "--help"],
    },
    Program {
        words: "cyclictest",
        with_value: &[
            "-t",
            "-i",
            "-d",
            "-D",
            "-l",
            "-p",
            "-h",
            "-H",
            "-a",
            "--policy",
            "--secaligned",
            "-x",
        ],
        switches: &[
            "-q",
            "-m",
            "--mlockall",
            "--priospread",
            "-S",
            "--mainaffinity",
            "--latency",
            "--laptop",
            "--default-system",
            "-c",
            "-M",
            "-u",
            "-n",
            "-t",
            "-a",
            "--json",
        ],
    },
    Program {
        words: "interbench",
        with_value: &[
            "-t",
            "-w",
            "-W",
            "-x",
            "-X",
            "-L",
            "-B",
            "-N",
            "-m",
            "-l",
            "-C",
            "-I",
            "--units",
            "--timekeeper-affinity",
            "--write-file-kib",
            "--io-batch",
            "--block-every-us",
            "--block-us",
            "--waker-us",
        ],
        switches: &["-r", "-u", "-c", "-b", "-h", "-n"],
    },
    Program {
        words: "dbench",
        with_value: &[
            "-t",
            "--timelimit",
            "--warmup",
            "-c",
            "--loadfile",
            "-D",
            "-B",
        ],
        switches: &[
            "--show-execute-time",
            "--run-once",
            "--skip-cleanup",
            "-F",
            "-h",
        ],
    },
    Program {
        words: "make",
        with_value: &["-j", "--jobs", "--units"],
        switches: &[
            "-s",
            "--silent",
            "--quiet",
            "-k",
            "--keep-going",
            "-sj4",
            "-j",
            "-C",
            "V=1",
            "vmlinux",
        ],
    },
    Program {
        words: "tbench",
        with_value: &["-t", "--timelimit", "--warmup", "-c", "--loadfile", "-T"],
        switches: &[
            "--show-execute-time",
            "127.0.0.1",
            "localhost",
            "example.org",
            "-h",
        ],
    },
    Program {
        words: "netperf",
        with_value: &[
            "-t", "-t", "-l", "-i", "-I", "-f", "-D", "-P", "-T", "-H", "-r", "-m", "-M", "-s",
            "-S", "-b",
        ],
        switches: &["-4", "-6", "-c", "-C", "--", "--", "-D", "-h"],
    },
    Program {
        words: "server-model",
        with_value: &[
            "--arch",
            "--transport",
            "--workers",
            "--worker-mm",
            "--accept",
            "--conn",
            "--clients",
            "--req-size",
            "--rsp-size",
            "--service",
            "--service-lock",
            "--think",
            "--mode",
            "--epoll-max",
            "--runtime",
        ],
        switches: &["--help", "--bogus"],
    },
    Program {
        words: "llama-batched-bench",
        with_value: &[
            "-m",
            "--model",
            "-c",
            "--ctx-size",
            "-b",
            "--batch-size",
            "-ub",
            "--ubatch-size",
            "-npp",
            "-ntg",
            "-npl",
            "-t",
            "--threads",
            "-tb",
            "--threads-batch",
            "-fa",
            "--flash-attn",
            "-ngl",
            "--gpu-layers",
            "--n-gpu-layers",
            "--poll",
        ],
        switches: &["-pps", "-pps", "-pps", "--bogus"],
    },
];

/// A comma-separated list of `llama-batched-bench` (`-npp 128,256`), with empty entries and
/// boundary numbers now and then.
fn number_list(g: &mut Gen) -> String {
    let n = 1 + g.below(4);
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(match g.below(8) {
            0 => String::new(),
            1..=4 => g.pick(&["1", "2", "4", "8", "16", "32", "128"]).to_string(),
            _ => number(g),
        });
    }
    let mut s = v.join(",");
    if g.chance(1, 12) {
        s.push(',');
    }
    s
}

const EXAMPLES: &[&str] = &[
    "one-hog.json",
    "two-hogs.json",
    "eight-hogs.json",
    "pipeline.json",
    "periodic-vs-hog.json",
    "short-slice-waker.json",
    "nice-0-vs-5.json",
];

/// The repository's `examples/` directory.
pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A workload line: placement tokens, a program and its options with boundary values.
pub fn gen_workload(g: &mut Gen) -> String {
    let mut words: Vec<String> = Vec::new();
    for _ in 0..g.below(3) {
        let t = match g.below(8) {
            0 => format!(
                "nice={}",
                g.pick(&["0", "19", "-20", "20", "-21", "5", "x"])
            ),
            1 => format!(
                "policy={}",
                g.pick(&[
                    "other",
                    "batch",
                    "idle",
                    "fifo:80",
                    "rr:1",
                    "deadline:1ms/10ms/10ms",
                    "fifo",
                    "bogus"
                ])
            ),
            2 => format!("slice={}", duration(g)),
            3 => format!(
                "cpus={}",
                g.pick(&["0", "0-1", "1", "0,1", "0-3", "5", "0-4095", "a", "", "1-0"])
            ),
            4 if g.chance(1, 2) => format!(
                "cgroup={}",
                g.pick(&["/a", "/a/b", "/", "rel", "/a//b", "/x/..", "/a b"])
            ),
            4 => g
                .pick(&[
                    "cgexec -g cpu:/a",
                    "cgexec -g cpu,cpuacct:/a/b",
                    "cgexec --sticky -g '*:b'",
                    "cgexec -g memory:/m",
                    "cgexec -g cpu:/z -g cpu:/a",
                    "cgexec -g cpu",
                    "cgexec -g :/a",
                    "cgexec -g cpu:/a/../b",
                    "cgexec",
                    "cgexec -h",
                ])
                .to_string(),
            5 => g
                .pick(&[
                    "chrt -f 80",
                    "chrt -r 1",
                    "chrt 99",
                    "chrt -o 0",
                    "chrt -o -T 8000000 0",
                    "chrt -b --sched-runtime 50000",
                    "chrt -i -T 1000",
                    "chrt -o -P 1000 0",
                    "chrt --idle",
                    "chrt -b",
                    "chrt -f 0",
                    "chrt -f 100",
                    "chrt -f",
                    "chrt -o 5",
                    "chrt -d -T 1000000 -P 10000000 0",
                    "chrt -d --sched-runtime 1023 --sched-deadline 100000 0",
                    "chrt -d -T x 0",
                    "chrt -p 1",
                    "chrt -R -f 1",
                    "chrt --sched",
                    "chrt --",
                ])
                .to_string(),
            6 => g
                .pick(&[
                    "taskset -c 0",
                    "taskset -c 0-1",
                    "taskset 0x3",
                    "taskset 1",
                    "taskset 0",
                    "taskset -c ''",
                    "taskset -c 0-4095",
                    "taskset fffffffffffffffffffffffffffffffffff",
                    "taskset 0xg",
                    "taskset -p 1",
                    "taskset",
                    "nice -n 19",
                    "nice --5",
                    "nice -n x",
                    "nice",
                    "time",
                    "time time",
                    "chrt --idle 0",
                    "chrt --idle 0 nice -n 19",
                    "time chrt --idle 0",
                ])
                .to_string(),
            _ => format!("{}={}", g.pick(&["foo", "nice", "slice"]), number(g)),
        };
        // a prefix command of several words (`chrt -f 80`) is several words of the line, not
        // one quoted word
        if t.contains('=') {
            words.push(t); // `cgroup=/a b`: one word with a space in it
        } else {
            words.extend(t.split(' ').map(str::to_string));
        }
    }
    if g.chance(1, 5) {
        let ex = examples_dir().join(g.pick(EXAMPLES));
        words.push("rt-app".into());
        words.push(if g.chance(1, 10) {
            "/nonexistent/x.json".into()
        } else {
            ex.display().to_string()
        });
    } else {
        let p = g.pick(PROGRAMS);
        words.extend(p.words.split(' ').map(str::to_string));
        for _ in 0..g.below(6) {
            if g.chance(1, 2) {
                let o = *g.pick(p.with_value);
                let v = if matches!(o, "-w" | "-W" | "-x" | "-X") && g.chance(2, 3) {
                    // interbench's load and benchmark names (and some it refuses)
                    g.pick(&[
                        "None", "Video", "X", "Burn", "Write", "Read", "Ring", "Compile",
                        "Memload", "Hack", "Audio", "Gaming", "Custom", "write", "",
                    ])
                    .to_string()
                } else if matches!(o, "-c" | "--loadfile") && g.chance(2, 3) {
                    // dbench's built-in loadfiles (and a missing one)
                    g.pick(&[
                        "client-tiny.txt",
                        "client-warmup",
                        "/nonexistent/client.txt",
                    ])
                    .to_string()
                } else if p.words == "netperf" && o == "-t" && g.chance(3, 4) {
                    g.pick(&[
                        "TCP_RR",
                        "UDP_RR",
                        "TCP_STREAM",
                        "UDP_STREAM",
                        "TCP_CRR",
                        "rr",
                    ])
                    .to_string()
                } else if p.words == "netperf"
                    && matches!(o, "-r" | "-i" | "-I" | "-T")
                    && g.chance(3, 4)
                {
                    g.pick(&[
                        "1,1", "3,3", "95,5", "0,0", "64,1024", "70000,1", ",", "1,", "0,1",
                    ])
                    .to_string()
                } else if p.words == "server-model" && g.chance(3, 4) {
                    match o {
                        "--arch" => g.pick(&[
                            "per_conn",
                            "epoll_per_worker",
                            "epoll_shared",
                            "dispatcher",
                            "x",
                        ]),
                        "--transport" => g.pick(&["tcp", "udp", "unix", "sctp"]),
                        "--worker-mm" => g.pick(&["thread", "process", ""]),
                        "--accept" => {
                            g.pick(&["blocking", "epoll", "epoll_exclusive", "reuseport"])
                        }
                        "--conn" => g.pick(&["persistent", "per_request", "maybe"]),
                        "--service" | "--think" => g.pick(&[
                            "const:10us",
                            "exp:20us",
                            "lognormal:3us,0.5",
                            "exp:",
                            "const:-1us",
                            "0",
                        ]),
                        "--mode" => g.pick(&["closed", "open:1000", "open:0", "open:1e12"]),
                        "--runtime" => g.pick(&["0.01", "0", "1e9", "-1"]),
                        _ => g.pick(&["0", "1", "2", "8", "70000", "4294967296"]),
                    }
                    .to_string()
                } else if matches!(o, "-npp" | "-ntg" | "-npl") && g.chance(3, 4) {
                    number_list(g)
                } else if p.words == "llama-batched-bench" && g.chance(1, 2) {
                    // small sizes, so that the run gets past its first graphs
                    match o {
                        "-m" | "--model" => g.pick(&["model-7b-q4_0.gguf", "", "-"]).to_string(),
                        "-fa" | "--flash-attn" => g
                            .pick(&["on", "off", "auto", "1", "0", "-1", "enabled", "maybe", ""])
                            .to_string(),
                        _ => g.pick(&["1", "2", "4", "16", "64", "512"]).to_string(),
                    }
                } else if p.words == "make" && o == "--units" && g.chance(1, 2) {
                    g.pick(&["1", "2", "7", "100", "1000000", "1000001", "4000000000"])
                        .to_string()
                } else if matches!(o, "--units" | "--timekeeper-affinity") && g.chance(2, 3) {
                    g.pick(&["us", "100ns", "ns", "cpu0", "original_mask", "all"])
                        .to_string()
                } else if g.chance(1, 3) {
                    duration(g)
                } else {
                    number(g)
                };
                if o.starts_with("--") && g.chance(1, 2) {
                    words.push(format!("{o}={v}"));
                } else {
                    words.push(o.to_string());
                    words.push(v);
                }
            } else {
                words.push(g.pick(p.switches).to_string());
            }
        }
        if p.words == "make" && g.chance(1, 2) {
            // -jN glued, the usual spelling
            let n = if g.chance(1, 2) {
                g.pick(&["1", "2", "4", "64", "4096", "4097", "0"])
                    .to_string()
            } else {
                number(g)
            };
            words.push(format!("-j{n}"));
        }
        if p.words == "make" && g.chance(2, 3) {
            // small builds, so that the run gets past make's first processes
            words.push(format!("--units={}", g.pick(&["1", "2", "10", "50"])));
        }
        if matches!(p.words, "dbench" | "tbench") && g.chance(4, 5) {
            // the number of clients
            words.push(number(g));
        }
        if g.chance(1, 20) {
            words.push("stray".into());
        }
    }
    let line = words
        .into_iter()
        .map(|w| {
            if w.is_empty() || w.contains(' ') {
                format!("'{w}'")
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    if g.chance(1, 12) {
        {
            let e = 1 + g.below(3);
            mutate(g, &line, e)
        }
    } else {
        line
    }
}

// ------------------------------------------------------------------------------ rt-app JSON

fn json_value(g: &mut Gen) -> String {
    match g.below(8) {
        0..=3 => number(g),
        4 => format!(
            "\"{}\"",
            g.pick(&["m", "c", "b", "t", "SCHED_OTHER", "CPU0", ""])
        ),
        5 => g
            .pick(&["true", "false", "null", "[]", "{}", "[0, 1]"])
            .to_string(),
        _ => number(g),
    }
}

fn json_num(g: &mut Gen) -> String {
    let n = number(g);
    if n.is_empty() || n.parse::<f64>().is_err() {
        "1".into()
    } else {
        n
    }
}

fn rtapp_event(g: &mut Gen, i: usize) -> String {
    let v = |g: &mut Gen| {
        if g.chance(1, 6) {
            json_value(g)
        } else {
            json_num(g)
        }
    };
    match g.below(14) {
        0..=3 => format!("\"run{i}\": {}", v(g)),
        4 | 5 => format!("\"sleep{i}\": {}", v(g)),
        6 => format!("\"runtime{i}\": {}", v(g)),
        7 => format!(
            "\"timer{i}\": {{ \"ref\": \"{}\", \"period\": {}, \"mode\": \"{}\" }}",
            g.pick(&["t", "unique", "x"]),
            v(g),
            g.pick(&["relative", "absolute", "bogus"])
        ),
        8 => format!("\"lock{i}\": \"m\", \"unlock{i}\": \"m\""),
        9 => format!("\"lock{i}\": \"m\", \"signal{i}\": \"c\", \"wait{i}\": {{ \"ref\": \"c\", \"mutex\": \"m\" }}, \"unlock{i}\": \"m\""),
        10 => format!("\"barrier{i}\": \"b\""),
        11 => format!("\"yield{i}\": \"\""),
        12 => format!("\"fork{i}\": \"{}\"", g.pick(&["a", "b", "zz"])),
        _ => format!("\"suspend{i}\": \"a\", \"resume{i}\": \"{}\"", g.pick(&["a", "b"])),
    }
}

fn rtapp_props(g: &mut Gen) -> Vec<String> {
    let mut v = Vec::new();
    for _ in 0..g.below(3) {
        v.push(match g.below(7) {
            0 => format!("\"instance\": {}", json_num(g)),
            1 => format!("\"loop\": {}", json_num(g)),
            2 => format!("\"delay\": {}", json_num(g)),
            3 => format!("\"priority\": {}", json_num(g)),
            4 => format!(
                "\"policy\": \"{}\"",
                g.pick(&[
                    "SCHED_OTHER",
                    "SCHED_IDLE",
                    "SCHED_BATCH",
                    "SCHED_FIFO",
                    "SCHED_DEADLINE",
                    "x"
                ])
            ),
            5 => format!("\"cpus\": [{}]", json_num(g)),
            6 if g.chance(1, 2) => format!(
                "\"taskgroup\": \"{}\"",
                g.pick(&["/g", "/g/h", "", "/", "rel", "/a//b", "/.."])
            ),
            _ => format!("\"dl-runtime\": {}", json_num(g)),
        });
    }
    v
}

/// An rt-app JSON file: a global section and tasks with phases and events.
pub fn gen_rtapp(g: &mut Gen) -> String {
    let mut global = Vec::new();
    if g.chance(2, 3) {
        global.push(format!("\"duration\": {}", json_num(g)));
    }
    if g.chance(1, 3) {
        global.push(format!(
            "\"calibration\": {}",
            if g.chance(1, 2) {
                format!("\"CPU{}\"", g.below(4))
            } else {
                json_num(g)
            }
        ));
    }
    if g.chance(1, 5) {
        global.push(format!(
            "\"default_policy\": \"{}\"",
            g.pick(&["SCHED_OTHER", "SCHED_FIFO", "x"])
        ));
    }
    let mut tasks = Vec::new();
    let names = ["a", "b", "c"];
    let ntasks = 1 + g.below(3);
    for name in names.iter().take(ntasks) {
        let mut members = rtapp_props(g);
        if g.chance(1, 3) {
            let mut phases = Vec::new();
            for p in 0..1 + g.below(3) {
                let mut pm = Vec::new();
                if g.chance(1, 2) {
                    pm.push(format!("\"loop\": {}", json_num(g)));
                }
                for e in 0..1 + g.below(4) {
                    pm.push(rtapp_event(g, e));
                }
                phases.push(format!("\"p{p}\": {{ {} }}", pm.join(", ")));
            }
            members.push(format!("\"phases\": {{ {} }}", phases.join(", ")));
        } else {
            for e in 0..1 + g.below(4) {
                members.push(rtapp_event(g, e));
            }
        }
        tasks.push(format!("\"{name}\": {{ {} }}", members.join(", ")));
    }
    let text = format!(
        "{{ \"global\": {{ {} }},\n  \"tasks\": {{ {} }} }}\n",
        global.join(", "),
        tasks.join(",\n    ")
    );
    if g.chance(1, 6) {
        {
            let e = 1 + g.below(4);
            mutate(g, &text, e)
        }
    } else {
        text
    }
}

// ------------------------------------------------------------------------------ platform TOML

const PLATFORM_FILES: &[(&str, &str)] = &[
    ("smp.toml", include_str!("../../../platforms/smp.toml")),
    ("rpi5.toml", include_str!("../../../platforms/rpi5.toml")),
    ("rb5.toml", include_str!("../../../platforms/rb5.toml")),
    (
        "altra-80.toml",
        include_str!("../../../platforms/altra-80.toml"),
    ),
    ("host.toml", include_str!("../../../platforms/host.toml")),
];

/// A platform file: a built-in one (or a small file extending one) with values replaced by
/// boundary numbers, lines deleted or duplicated, characters inserted.
pub fn gen_platform(g: &mut Gen) -> String {
    let base = if g.chance(1, 4) {
        let ext = *g.pick(&["rpi5", "smp", "rb5", "nosuch", "host"]);
        format!(
            "extends = \"{ext}\"\nname = \"fz\"\ndescription = \"generated\"\n[kernel]\nhz = {}\n[costs]\njitter_sigma = {}\nc_tick = {}\n",
            g.pick(&["250", "1000", "0", "17"]),
            g.pick(&["0.1", "0", "1", "1000", "1.000001", "-1"]),
            json_num(g),
        )
    } else {
        g.pick(PLATFORM_FILES).1.to_string()
    };
    let base = if g.chance(1, 3) {
        format!("{base}{}", programs_section(g))
    } else {
        base
    };
    let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
    for _ in 0..1 + g.below(3) {
        if lines.is_empty() {
            break;
        }
        let i = g.below(lines.len());
        match g.below(5) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 | 3 => {
                // Replace the value of a `key = value` line.
                if let Some((k, _)) = lines[i].clone().split_once('=') {
                    let v = if g.chance(1, 4) {
                        format!("\"{}\"", duration(g))
                    } else {
                        number(g)
                    };
                    lines[i] = format!("{k}= {v}");
                }
            }
            _ => lines[i] = mutate(g, &lines[i], 1),
        }
    }
    lines.join("\n") + "\n"
}

/// A `[programs.make]` or `[programs.llama-batched-bench]` table (and now and then another
/// program's or an unknown one): switches, durations with and without units, boundary values.
fn programs_section(g: &mut Gen) -> String {
    let (prog, keys): (&str, &[&str]) = match g.below(8) {
        0..=3 => (
            "make",
            &[
                "gcc_pipe",
                "objtool",
                "w_cc1",
                "w_objtool",
                "w_fixdep",
                "w_shell",
                "prepare",
                "link",
                "modpost",
                "w_cc2",
            ],
        ),
        4..=6 => (
            "llama-batched-bench",
            &[
                "w_step",
                "w_token",
                "t_mem",
                "c_barrier",
                "w_sample",
                "c_relax",
                "w_steps",
            ],
        ),
        _ => (
            *g.pick(&["schbench", "llama", "make.x", "\"llama-batched-bench\""]),
            &["w_matmul", "w_step"],
        ),
    };
    let mut s = format!("\n[programs.{prog}]\n");
    for _ in 0..1 + g.below(4) {
        let k = *g.pick(keys);
        let v = if matches!(k, "gcc_pipe" | "objtool") && g.chance(3, 4) {
            g.pick(&["true", "false", "1", "0", "\"yes\"", "\"true\""])
                .to_string()
        } else if g.chance(1, 2) {
            format!("\"{}\"", duration(g))
        } else if g.chance(1, 6) {
            g.pick(&["true", "[]", "\"1 ms\"", "\"0.5 ns\"", "1.0005", "nan"])
                .to_string()
        } else {
            json_num(g)
        };
        s.push_str(&format!("{k} = {v}\n"));
    }
    s
}

// ------------------------------------------------------------------------------ scenario TOML

const SCENARIO: &str = include_str!("../../../scenarios/delay-dequeue.toml");
const TABLES_SCENARIO: &str = include_str!("../../../scenarios/sched-idle-placement.toml");

/// A small scenario of kind tables (scenario_tables.rs): one or two tables of the seed-003
/// programs with their checks, values at the boundaries.
fn gen_tables_scenario(g: &mut Gen) -> String {
    // half of the files have no bad value at all (a tables file has many values to get right)
    let rare = if g.chance(1, 2) { 1_000_000 } else { 6 };
    let mut s = format!(
        "name = \"fz\"\nkind = \"tables\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:2\"\nbaseline = \"v6.19\"\nworkloads = []\nmetrics = []\nruns = {}\nquick_runs = 1\n\n[[variant]]\nkernel = \"v6.19\"\nlabel = \"a\"\n\n[[variant]]\nkernel = \"v6.19+fd54d81c2c0e\"\nlabel = \"b\"\n\n[tables]\npatched = \"{}\"\nsource = \"fz\"\n",
        if g.chance(1, rare) {
            g.pick(&["0", "4000000000", "-1"])
        } else {
            "1"
        },
        if g.chance(1, rare) {
            g.pick(&["v6.19", "v9.9", ""])
        } else {
            "v6.19+fd54d81c2c0e"
        },
    );
    let ntables = 1 + g.below(2);
    for i in 0..ntables {
        let (line, metrics, params): (&str, &str, &[&str]) = match g.below(4) {
            0 => (
                "chrt --idle 0 make -j{param} --units=2",
                "[\"real_s\"]",
                &["1", "2", "4"],
            ),
            1 => (
                "time nice -n 19 make -j2 --units=1",
                "[\"real_s\", \"user_s\", \"sys_s\"]",
                &[],
            ),
            2 => (
                "chrt --idle 0 llama-batched-bench -c 256 -npp 8 -ntg 4 -npl 1 -t {param}",
                "[\"s_tg_tps\"]",
                &["1", "2"],
            ),
            _ => (
                "chrt --idle 0 schbench -m 1 -t {param}",
                "[\"request_p999_us\"]",
                &["1", "2"],
            ),
        };
        let (line, params) = if g.chance(1, 4) {
            // any generated line, one row
            (gen_workload(g).replace(['"', '\\'], ""), &[][..])
        } else {
            (line.to_string(), params)
        };
        let params: Vec<String> = params.iter().map(|p| format!("\"{p}\"")).collect();
        let rows = params.len().max(1) * metrics.matches('"').count() / 2;
        let published: Vec<String> = (0..rows + usize::from(g.chance(1, rare)))
            .map(|_| {
                if g.chance(1, 3) {
                    g.pick(&["nan", "0", "-1", "1e308", "inf", "-inf"])
                        .to_string()
                } else {
                    "1.5".to_string()
                }
            })
            .collect();
        s.push_str(&format!(
            "\n[[tables.table]]\nid = \"t{}\"\ntitle = \"t\"\nplatform = \"{}\"\nline = \"{line}\"\nparams = [{}]\nmetrics = {metrics}\nunit = \"s\"\nhigher_better = {}\nduration = \"{}\"\nruns = {}\npublished_baseline = [{}]\npublished_patched = [{}]\n",
            if g.chance(1, rare) { 0 } else { i },
            if g.chance(1, rare) {
                g.pick(&["smp:0", "nosuch", "altra-80"])
            } else {
                g.pick(&["smp:2", "rpi5"])
            },
            params.join(", "),
            if g.chance(1, rare) {
                "1"
            } else {
                g.pick(&["true", "false"])
            },
            if g.chance(1, rare) {
                duration(g)
            } else {
                "1ms".to_string()
            },
            if g.chance(1, rare) {
                g.pick(&["0", "-1", "4294967296", "10001"])
            } else {
                "1"
            },
            published.join(", "),
            published.join(", "),
        ));
        if g.chance(1, rare) {
            s.push_str(&format!(
                "quick_params = [{}]\n",
                g.pick(&["\"1\"", "\"9\"", "", "\"\""])
            ));
        }
        if g.chance(1, rare) {
            s.push_str(&format!(
                "labels = [{}]\n",
                g.pick(&["\"real\"", "\"real\", \"user\", \"sys\"", ""])
            ));
        }
    }
    for _ in 0..g.below(3) {
        s.push_str(&format!(
            "\n[[tables.check]]\nkind = \"{}\"\ntable = \"{}\"\ndescription = \"d\"\n",
            if g.chance(1, rare) {
                g.pick(&["gain_min", "gain_below", "abs_gain_max", "within", "bogus"])
            } else {
                g.pick(&["identical", "direction"])
            },
            if g.chance(1, rare) { "nosuch" } else { "t0" },
        ));
        if g.chance(2, 3) {
            s.push_str(&format!(
                "value = {}\n",
                if g.chance(1, 2) {
                    json_num(g)
                } else {
                    g.pick(&["nan", "inf", "-inf", "3.0", "-0.0"]).to_string()
                }
            ));
        }
        if g.chance(1, 3) {
            s.push_str(&format!(
                "rows = [{}]\n",
                g.pick(&["\"1\"", "\"2\"", "\"real\"", "", "\"x\""])
            ));
        }
        if g.chance(1, 4) {
            s.push_str(&format!("than = [{}]\n", g.pick(&["\"1\"", "\"x\"", ""])));
        }
        if g.chance(1, 4) {
            s.push_str(&format!(
                "column = \"{}\"\n",
                g.pick(&["baseline", "patched", "both"])
            ));
        }
    }
    s
}

/// A scenario file: the built-in one or a small one, with values replaced and lines mutated.
pub fn gen_scenario(g: &mut Gen) -> String {
    let tables = g.chance(1, 4);
    let base = if tables {
        if g.chance(1, 8) {
            TABLES_SCENARIO.to_string()
        } else {
            gen_tables_scenario(g)
        }
    } else if g.chance(1, 2) {
        let k = gen_kernel(g).replace('"', "");
        format!(
            "name = \"fz\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"{}\"\nworkloads = [\"{}\"]\nduration = \"{}\"\nruns = {}\nbaseline = \"v6.6\"\nmetrics = [\"{}\"]\n\n[[variant]]\nkernel = \"v6.6\"\nlabel = \"a\"\n\n[[variant]]\nkernel = \"{k}\"\nlabel = \"b\"\nrelative_to = \"v6.6\"\n",
            g.pick(&["smp:2", "smp:1", "rpi5", "smp:0", "nosuch"]),
            gen_workload(g).replace(['"', '\\'], ""),
            duration(g),
            g.pick(&["1", "0", "3", "4000000000", "-1", "10001"]),
            g.pick(&["sched_switch", "bogo_ops_per_sec", "messages_per_sec", "nosuch", "time_s", "idle_fraction"]),
        )
    } else {
        SCENARIO.to_string()
    };
    let mut lines: Vec<String> = base.lines().map(str::to_string).collect();
    if !tables && g.chance(1, 3) {
        // a [cgroups] table (crate::cgroups), the workload lines' /a among its groups
        lines.push(format!(
            "[cgroups.\"{}\"]",
            g.pick(&["/a", "/a/b", "/", "rel", "/c"])
        ));
        for _ in 0..g.below(3) {
            let key = g.pick(&["weight", "weight_nice", "idle", "shares", "max", "bogus"]);
            let v = match g.below(3) {
                0 => number(g),
                1 => format!("\"{}\"", g.pick(&["50000 100000", "max", "1 x", ""])),
                _ => g.pick(&["true", "1.5", "[1]"]).to_string(),
            };
            lines.push(format!("{key} = {v}"));
        }
    }
    // (a tables file has many values to get right: fewer edits)
    let edits = if tables && g.chance(1, 2) { 1 } else { 3 };
    for _ in 0..g.below(edits) {
        let i = g.below(lines.len());
        match g.below(4) {
            0 => {
                lines.remove(i);
            }
            1 => {
                if let Some((k, _)) = lines[i].clone().split_once('=') {
                    lines[i] = format!("{k}= {}", number(g));
                }
            }
            _ => lines[i] = mutate(g, &lines[i], 1),
        }
    }
    lines.join("\n") + "\n"
}

// ------------------------------------------------------------------------------ the oracle

/// Generates the input of `front` for `seed`.
pub fn generate(front: Front, seed: u64) -> String {
    let mut g = Gen::new(seed);
    match front {
        Front::Kernel => gen_kernel(&mut g),
        Front::Workload => gen_workload(&mut g),
        Front::RtApp => gen_rtapp(&mut g),
        Front::Platform => gen_platform(&mut g),
        Front::Scenario => gen_scenario(&mut g),
    }
}

/// Built-in platforms loaded once (resolving one parses its TOML).
pub struct Cache {
    smp2: Platform,
    rpi5: Platform,
    dir: PathBuf,
    n: u64,
}

impl Cache {
    /// `dir`: where rt-app files are written to be run (one file, rewritten per input).
    pub fn new(dir: &Path) -> Cache {
        Cache {
            smp2: Platform::resolve("smp:2").expect("smp:2"),
            rpi5: Platform::resolve("rpi5").expect("rpi5"),
            dir: dir.to_path_buf(),
            n: 0,
        }
    }
}

fn spec(platform: &str, kernel: &str, workloads: Vec<String>) -> RunSpec {
    RunSpec {
        platform: platform.to_string(),
        kernel: kernel.to_string(),
        workloads,
        duration_ns: Some(SIM_NS),
        seed: 1,
        strict: false,
        trace: None,
        trace_columns: false,
        trace_limit: None,
        progress: false,
        explain_wakeups: None,
        cgroups: Default::default(),
    }
}

/// The CLI's exit code for a run error (crates/schedlab-cli/src/main.rs `run_error`).
fn exit_code(e: &RunError) -> u8 {
    match e {
        RunError::Invariant(_) | RunError::Trace { .. } => 1,
        _ => 2,
    }
}

fn refused(code: u8, msg: String) -> Result<Verdict, String> {
    if code != 2 {
        return Err(format!("exit code {code} for bad input: {msg}"));
    }
    if msg.trim().is_empty() || msg.contains('\n') {
        return Err(format!("message is not one line: {msg:?}"));
    }
    Ok(Verdict::Refused(msg))
}

fn judge_run(r: Result<crate::RunResult, RunError>) -> Result<Verdict, String> {
    match r {
        Ok(res) => {
            if res.sim_time_ns > SIM_NS {
                return Err(format!("simulated {} ns, more than asked", res.sim_time_ns));
            }
            Ok(Verdict::Ran)
        }
        Err(e) => refused(exit_code(&e), e.to_string()),
    }
}

/// Parses, validates and (if valid) simulates one input for at most [`SIM_NS`]; `Err` is a
/// failure of the oracle (a panic propagates).
pub fn check(front: Front, input: &str, cache: &mut Cache) -> Result<Verdict, String> {
    // Warnings of generated inputs would flood stderr.
    crate::run::quiet_warnings(|| check_inner(front, input, cache))
}

fn check_inner(front: Front, input: &str, cache: &mut Cache) -> Result<Verdict, String> {
    let hog = format!("rt-app {}", examples_dir().join("two-hogs.json").display());
    match front {
        Front::Kernel => {
            if let Err(e) = KernelConfig::parse(input) {
                return refused(2, e.to_string());
            }
            judge_run(run_on(cache.smp2.clone(), &spec("smp:2", input, vec![hog])))
        }
        Front::Workload => {
            let platform = if input.len().is_multiple_of(2) {
                cache.smp2.clone()
            } else {
                cache.rpi5.clone()
            };
            let mut s = spec("", "v6.18", vec![input.to_string()]);
            if input.contains("/a") {
                // --cgroup on the group the line may name
                s.cgroups = crate::cgroups::Cgroups::parse_flag("/a:weight=300,idle=0")
                    .map_err(|e| format!("--cgroup refused: {e}"))?;
            }
            judge_run(run_on(platform, &s))
        }
        Front::RtApp => {
            if let Err(e) = schedlab_workloads::rtapp::parse_rtapp(input, "fuzz.json") {
                return refused(2, e.to_string());
            }
            cache.n += 1;
            let path = cache.dir.join("fuzz-rtapp.json");
            std::fs::write(&path, input).map_err(|e| format!("writing {path:?}: {e}"))?;
            let line = format!("rt-app {}", path.display());
            judge_run(run_on(
                cache.smp2.clone(),
                &spec("smp:2", "v6.18", vec![line]),
            ))
        }
        Front::Platform => match Platform::from_toml_str(input, "fuzz.toml") {
            Err(e) => refused(2, e.to_string()),
            Ok(p) => {
                // a file with a program's costs runs that program (small sizes), so that its
                // values reach the model
                let line = if input.contains("[programs.make]") {
                    "make -j4 --units=1".to_string()
                } else if input.contains("[programs.llama-batched-bench]") {
                    "llama-batched-bench -c 256 -npp 8 -ntg 4 -npl 1,2 -t 2 -tb 3 --poll 100"
                        .to_string()
                } else {
                    hog
                };
                judge_run(run_on(p, &spec("fuzz.toml", "v6.19", vec![line])))
            }
        },
        Front::Scenario => {
            let mut sc = match crate::scenario::parse(input, "fuzz.toml") {
                Err(e) => return refused(e.code(), e.to_string()),
                Ok(sc) => sc,
            };
            if let Some(mut tb) = sc.tables.clone() {
                // Kind tables: at most 1 ms per run and one seed per cell; the big file in
                // quick mode (its full mode runs dozens of lines).
                for t in &mut tb.tables {
                    t.duration = Some("1ms".into());
                    t.runs = Some(1);
                    t.quick_runs = Some(1);
                }
                let quick = tb.tables.len() > 2;
                return match crate::scenario_tables::execute_scenario(
                    &sc,
                    &tb,
                    None,
                    quick,
                    false,
                    Some(1),
                ) {
                    Ok(o) => {
                        let _ = o.render(&sc.name, &sc.title, &sc.seed);
                        let _ = o.json(&sc.name);
                        let _ = o.checks();
                        Ok(Verdict::Ran)
                    }
                    Err(e) => refused(e.code(), e.to_string()),
                };
            }
            // At most 1 ms per run, one seed, the first variant.
            sc.duration = Some("1ms".into());
            sc.variants.truncate(1);
            sc.quick_workloads.clear();
            match crate::scenario::execute(&sc, Some(1), false, false, Some(1)) {
                Ok(_) => Ok(Verdict::Ran),
                Err(e) => refused(e.code(), e.to_string()),
            }
        }
    }
}

/// Property tests of every front end: proptest picks the seeds (and shrinks a failing one),
/// the generators above build the inputs, the oracle judges them.
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cache() -> Cache {
        let dir = std::env::temp_dir().join(format!("schedlab-fuzz-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Cache::new(&dir)
    }

    fn holds(front: Front, seed: u64) -> Result<(), TestCaseError> {
        let input = generate(front, seed);
        // One cache per case: the rt-app front end rewrites one file in it.
        let mut c = cache();
        match check(front, &input, &mut c) {
            Ok(_) => Ok(()),
            Err(why) => Err(TestCaseError::fail(format!("{why}\ninput: {input:?}"))),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn kernel_strings(seed in any::<u64>()) { holds(Front::Kernel, seed)?; }
        #[test]
        fn workload_lines(seed in any::<u64>()) { holds(Front::Workload, seed)?; }
        #[test]
        fn rtapp_files(seed in any::<u64>()) { holds(Front::RtApp, seed)?; }
        #[test]
        fn platform_files(seed in any::<u64>()) { holds(Front::Platform, seed)?; }
    }

    proptest! {
        // A scenario runs a pre-check and two variants: fewer cases.
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn scenario_files(seed in any::<u64>()) { holds(Front::Scenario, seed)?; }
    }

    /// The generators reach past the first check: a share of every front end's inputs runs
    /// (over the first 300 seeds; the shares the campaign prints are similar).
    #[test]
    fn generated_inputs_often_run() {
        let mut c = cache();
        for f in Front::ALL {
            let ran = (0..300)
                .filter(|&s| check(f, &generate(f, s), &mut c) == Ok(Verdict::Ran))
                .count();
            assert!(ran >= 15, "{}: only {ran} of 300 ran", f.name());
        }
    }

    /// Generated scenario files of kind tables get past parsing and reach the runs (over the
    /// first 400 scenario seeds, a quarter of which are tables files): they run, or a run is
    /// refused (`fz: …`: a 1 ms run of make or llama-batched-bench ends before the model has
    /// its metric).
    #[test]
    fn tables_scenarios_reach_the_runs() {
        let mut c = cache();
        let (mut tables, mut reached) = (0, 0);
        for s in 0..400 {
            let input = generate(Front::Scenario, s);
            if input.contains("kind = \"tables\"") {
                tables += 1;
                match check(Front::Scenario, &input, &mut c) {
                    Ok(Verdict::Ran) => reached += 1,
                    Ok(Verdict::Refused(m)) if m.starts_with("fz: ") => reached += 1,
                    _ => {}
                }
            }
        }
        assert!(
            tables >= 50 && reached >= 10,
            "{reached} of {tables} tables files reached the runs"
        );
    }

    /// Inputs that found bugs, kept as regression tests.
    #[test]
    fn regressions() {
        let mut c = cache();
        // Campaign (rt-app seed 1221536): instances forked from one task share an absolute
        // timer whose period is the 2^33 s cap; each adds a period and the sum passed u64.
        let shared_timer = "{ \"global\": { \"duration\": 1 },\n  \"tasks\": { \
            \"b\": { \"runtime0\": 1, \"timer1\": { \"ref\": \"x\", \"period\": 8589934592000000, \
            \"mode\": \"absolute\" }, \"sleep2\": 1 },\n    \"c\": { \"fork0\": \"b\" } } }\n";
        assert_eq!(check(Front::RtApp, shared_timer, &mut c), Ok(Verdict::Ran));
        let seed_input = generate(Front::RtApp, 1221536);
        assert!(
            check(Front::RtApp, &seed_input, &mut c).is_ok(),
            "{seed_input}"
        );
        // Campaign (platform seeds 3506, 14117): c_relax = "3s" / "2s" made the llama model's poll
        // time 131072 × 100 × 2 s in ps, past u64; now computed in u128 (and capped at 2^33 s).
        let llama_relax = "extends = \"rpi5\"\nname = \"fz\"\ndescription = \"d\"\n\
            [programs.llama-batched-bench]\nc_relax = \"2s\"\nw_token = \"3600 s\"\n";
        assert_eq!(
            check(Front::Platform, llama_relax, &mut c),
            Ok(Verdict::Ran)
        );
        // Campaign (scenario front, tables files): a table's platform and line were first
        // looked at when its run came, after every earlier table had run (hours in full
        // mode); now the loader checks every run of every table before anything runs.
        let tables = |platform: &str, line: &str| {
            format!(
                "name = \"fz\"\nkind = \"tables\"\ntitle = \"t\"\nseed = \"s\"\n\
                 platform = \"smp:2\"\nbaseline = \"v6.19\"\nworkloads = []\nmetrics = []\n\
                 runs = 1\nquick_runs = 1\n\n[[variant]]\nkernel = \"v6.19\"\nlabel = \"a\"\n\n\
                 [[variant]]\nkernel = \"v6.19+fd54d81c2c0e\"\nlabel = \"b\"\n\n[tables]\n\
                 patched = \"v6.19+fd54d81c2c0e\"\nsource = \"fz\"\n\n[[tables.table]]\n\
                 id = \"t0\"\ntitle = \"t\"\nplatform = \"smp:2\"\n\
                 line = \"schbench -m 1 -t {{param}}\"\nparams = [\"1\"]\n\
                 metrics = [\"request_p999_us\"]\nunit = \"us\"\nhigher_better = false\n\n\
                 [[tables.table]]\nid = \"t1\"\ntitle = \"t\"\nplatform = \"{platform}\"\n\
                 line = \"{line}\"\nmetrics = [\"real_s\"]\nunit = \"s\"\nhigher_better = false\n"
            )
        };
        for (input, words) in [
            (
                tables("nosuch", "make -j2 --units=1"),
                "fuzz.toml: table 't1': unknown platform `nosuch`",
            ),
            (
                tables("smp:2", "make -j0 --units=1"),
                "fuzz.toml: table 't1': workload 'make -j0 --units=1': make: -j: expected a \
                 job count in 1..=4096, got '0'",
            ),
        ] {
            match crate::scenario::parse(&input, "fuzz.toml") {
                Err(e) => {
                    assert_eq!(e.code(), 2);
                    assert!(e.to_string().starts_with(words), "{e}");
                }
                Ok(_) => panic!("accepted: {input}"),
            }
        }
        assert!(
            crate::scenario::parse(&tables("smp:2", "make -j2 --units=1"), "fuzz.toml").is_ok()
        );
        // Campaign (scenario seed 1448759): a check kind with a newline in it was quoted in a
        // two-line message.
        let kind_nl = format!(
            "{}\n[[tables.check]]\nkind = \"directio\\n\"\ntable = \"t0\"\ndescription = \"d\"\n",
            tables("smp:2", "make -j2 --units=1")
        );
        match check(Front::Scenario, &kind_nl, &mut c) {
            Ok(Verdict::Refused(m)) => assert!(
                m.starts_with("fuzz.toml: tables.check kind 'directio\\n': unknown (known: "),
                "{m}"
            ),
            r => panic!("{r:?}"),
        }
        // A workload line with a newline in it (campaign seed 231): the message quoted the
        // line as it was and came out on two lines.
        let r = check(Front::Workload, "slice=1.5us slice\n= schbench", &mut c);
        assert!(
            matches!(r, Ok(Verdict::Refused(ref m)) if m.contains("\\n")),
            "{r:?}"
        );
        // Numbers the issue found unchecked.
        for (front, input, words) in [
            (Front::Kernel, "v6.18 base_slice_ns=18446744073709551615", "4294967295"),
            (Front::Kernel, "v6.18 base_slice_ns=9223372036854775807", "4294967295"),
            (
                Front::RtApp,
                "{ \"tasks\": { \"a\": { \"instance\": 4294967295, \"run\": 1 } } }",
                "32768",
            ),
            (
                Front::RtApp,
                "{ \"global\": { \"duration\": 18446744073 }, \"tasks\": { \"a\": { \"run\": 1 } } }",
                "2^33 s",
            ),
            (
                Front::RtApp,
                "{ \"tasks\": { \"a\": { \"run\": 9223372036854775807 } } }",
                "2^33 s",
            ),
            (
                Front::Workload,
                "cyclictest -t 1 -D 8589934593",
                "8589934592",
            ),
            // Campaign: schbench -n 4294967295 drew 2^32 jitter samples per request (a 1 ms
            // run did not end).
            (Front::Workload, "schbench -n 4294967295", "1000000"),
            // ... and -n with a huge -F overflowed one request's work.
            (Front::Workload, "schbench -n 1000000 -F 4294967295", "2^33 s"),
            // Campaign (rt-app seed 3736097, platform seed 9296318): a key or value with a
            // newline in it was quoted in a two-line message.
            (
                Front::RtApp,
                "{ \"tasks\": { \"a\": { \"ru\\n0\" \"run\": 1 } } }",
                "\\n",
            ),
            (
                Front::Platform,
                "extends = \"\\nosuch\"\nname = \"x\"\n",
                "\\n",
            ),
            // Campaign: a kernel string of a newline was quoted in a two-line message.
            (Front::Kernel, "\n", "empty kernel string"),
            // Campaign: a multi-byte character inside a patch id panicked in Patch::from_id.
            (
                Front::Kernel,
                "v6.12.y-late +781773e3b680+556146ce5e9\u{202e}4 bogus=4",
                "unknown patch",
            ),
            // Campaign: "cpus": [4294967295] allocated a 512 MiB CPU mask (20 s, then refused).
            (
                Front::RtApp,
                "{ \"tasks\": { \"a\": { \"cpus\": [4294967295], \"run\": 1 } } }",
                "above 8191",
            ),
            // llama-batched-bench built its whole script of graphs at start: -ntg 4294967294
            // with a context that fits it asked for 2^32 graphs (24 GB, killed). Refused: the
            // warm-up, 1 prompt graph and 4294967294 decodes are over the 1 000 000 cap.
            (
                Front::Workload,
                "llama-batched-bench -c 4294967295 -npp 1 -ntg 4294967294 -npl 1",
                "asks for 4294967296 graphs, more than the 1000000",
            ),
            // Campaign (platform seed 867): a w_token of 2^33 s overflowed the graph work;
            // program costs are capped at an hour.
            (
                Front::Platform,
                "extends = \"rpi5\"\nname = \"fz\"\ndescription = \"d\"\n\
                 [programs.llama-batched-bench]\nw_token = 8589934592000000\n",
                "fuzz.toml:5: programs.llama-batched-bench.w_token: 8589934592000000000 ns is \
                 more than the 3600 s (one hour) of work one program cost may be",
            ),
            // make: --units above 1 000 000 is refused, not drawn.
            (
                Front::Workload,
                "make -j4096 --units 4000000000",
                "--units: expected a unit count in 1..=1000000, got '4000000000'",
            ),
        ] {
            match check(front, input, &mut c) {
                Ok(Verdict::Refused(m)) => assert!(m.contains(words), "{input}: {m}"),
                r => panic!("{input}: {r:?}"),
            }
        }
    }
}
