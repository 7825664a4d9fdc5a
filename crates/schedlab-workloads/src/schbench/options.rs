//! schbench command line (masoncl/schbench, workloads.md §4.1).
//!
//! | option | default | modelled |
//! |---|---|---|
//! | `-m N`, `--message-threads` | 1 | yes (1 + m + m × t ≤ 32768 threads) |
//! | `-t N`, `--threads` | ⌈CPUs / m⌉ (`None` here; 0 also means this) | yes |
//! | `-r S`, `--runtime` | 30 | yes (0, "run forever", rejected) |
//! | `-w S`, `--warmuptime` | 0 (forced 0 when runtime < 30 or with `-p`/`-A` unless given) | yes |
//! | `-i S`, `--intervaltime` | 10 | yes |
//! | `-z S`, `--zerotime` | 0 = never | yes |
//! | `-F KB` | 256 (matrix size 104) | yes |
//! | `--cache_footprint` | — | accepted and ignored, as schbench does (its letter is not handled) |
//! | `-n N`, `--operations` | 5 | yes |
//! | `-s US`, `--sleep_usec` | 100 | yes |
//! | `-L`, `--no-locking` | locking on | yes |
//! | `-C`, `--calibrate` | off (implies `-L`) | yes |
//! | `-R N`, `--rps` | 0 = saturating mode | yes |
//! | `-A PCT`, `--auto-rps` | off (starts at 10 RPS) | yes |
//! | `-p BYTES`, `--pipe` | 0 = off (capped at 1 MiB) | yes |
//! | `-M LIST\|auto`, `--message-cpus` | no pinning | yes |
//! | `-W LIST\|auto`, `--worker-cpus` | no pinning | yes |
//! | `-J NAME`, `--jobname` | — | accepted, no effect without `-j` |
//! | `-j FILE`, `--json` | — | no |
//! | `--pin ccx` | — | no |
//! | `--split PCT` | — | no |
//! | `--help` | — | no |

use super::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

const PROG: &str = "schbench";

/// `-p` transfer sizes above this are capped (`PIPE_TRANSFER_BUFFER`).
pub const PIPE_TRANSFER_BUFFER: u32 = 1024 * 1024;

/// `-M` / `-W` CPU pinning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuPin {
    /// `auto`: message thread i on CPU i, workers on every CPU from m upwards.
    Auto,
    /// An explicit CPU list.
    Cpus(Vec<u32>),
}

/// Most matrix multiplications per request (`-n`) schedlab accepts (schbench's default is 5).
pub const MAX_OPERATIONS: u32 = 1_000_000;

/// A parsed schbench command line, with schbench's own adjustments applied (`-C` implies
/// no locking, warmup forced to 0 where schbench forces it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub message_threads: u32,
    /// Workers per message thread; `None` = schbench picks ⌈CPUs / m⌉ (see
    /// [`Options::worker_threads_for`]) and says "setting worker threads to N".
    pub worker_threads: Option<u32>,
    pub runtime_secs: u32,
    pub warmup_secs: u32,
    pub interval_secs: u32,
    /// 0 = never zero the statistics.
    pub zero_secs: u32,
    pub cache_footprint_kb: u64,
    /// Matrix multiplications per request.
    pub operations: u64,
    pub sleep_usec: u64,
    /// Take the per-CPU lock around the matrix work (off with `-L` or `-C`).
    pub locking: bool,
    pub calibrate: bool,
    /// Total requests per second as given (`-R`, or 10 when `-A` starts from nothing);
    /// 0 = saturating mode. Each message thread gets `rps / m` ([`Options::rps_per_message_thread`]).
    pub requests_per_sec: u32,
    /// `-A` target CPU busy percentage; 0 = off.
    pub auto_rps: u32,
    /// `-p` bytes per transfer; 0 = off.
    pub pipe_bytes: u32,
    pub message_cpus: Option<CpuPin>,
    pub worker_cpus: Option<CpuPin>,
    pub jobname: Option<String>,
    /// Lines schbench prints on stderr while parsing, in order ("pipe size too big, using
    /// 1048576", "auto pinning message and worker threads").
    pub notices: Vec<String>,
    /// Notes for the user that schbench itself does not print.
    pub warnings: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            message_threads: 1,
            worker_threads: None,
            runtime_secs: 30,
            warmup_secs: 0,
            interval_secs: 10,
            zero_secs: 0,
            cache_footprint_kb: 256,
            operations: 5,
            sleep_usec: 100,
            locking: true,
            calibrate: false,
            requests_per_sec: 0,
            auto_rps: 0,
            pipe_bytes: 0,
            message_cpus: None,
            worker_cpus: None,
            jobname: None,
            notices: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

impl Options {
    /// Workers per message thread on a machine with `nprocs` CPUs.
    pub fn worker_threads_for(&self, nprocs: u32) -> u32 {
        self.worker_threads
            .unwrap_or_else(|| nprocs.div_ceil(self.message_threads))
    }

    /// Side of the square matrices: `floor(sqrt(F × 1024 / 3 / 8))`, integer divisions
    /// first (104 for the default 256 KiB).
    pub fn matrix_size(&self) -> u64 {
        isqrt(self.cache_footprint_kb * 1024 / 3 / 8)
    }

    /// Requests per second each message thread issues (`requests_per_sec / m`, truncated).
    pub fn rps_per_message_thread(&self) -> u32 {
        self.requests_per_sec / self.message_threads
    }

    /// RPS mode (fixed `-R` or auto `-A`): message threads queue requests instead of
    /// answering workers.
    pub fn rps_mode(&self) -> bool {
        self.requests_per_sec > 0
    }

    /// The CPU message thread `index` pins itself to, if any: the `index % count`-th CPU of
    /// its set (`auto`: CPU `index`).
    pub fn message_thread_cpu(&self, index: u32) -> Option<u32> {
        match self.message_cpus.as_ref()? {
            CpuPin::Auto => Some(index),
            CpuPin::Cpus(cpus) if cpus.is_empty() => None,
            CpuPin::Cpus(cpus) => Some(cpus[(index as usize) % cpus.len()]),
        }
    }
}

/// floor(sqrt(n)), what schbench's `sqrt` then truncation gives for these sizes.
fn isqrt(n: u64) -> u64 {
    let mut x = (n as f64).sqrt() as u64;
    while x * x > n {
        x -= 1;
    }
    while (x + 1) * (x + 1) <= n {
        x += 1;
    }
    x
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Pipe,
    MessageThreads,
    MessageCpus,
    WorkerCpus,
    Threads,
    Runtime,
    Rps,
    AutoRps,
    CacheFootprintLong,
    CacheFootprint,
    Calibrate,
    NoLocking,
    Operations,
    SleepUsec,
    Warmup,
    Interval,
    Zero,
    Json,
    Jobname,
    Pin,
    Split,
    Help,
}

use ArgKind::{None as NoArg, Required as Req};

/// schbench's option table: `p:m:M:W:t:Cr:R:w:i:z:A:n:F:Lj:s:J:` plus the long names.
const SPECS: &[Spec<Key>] = &[
    Spec::new(Some('p'), Some("pipe"), Req, Key::Pipe),
    Spec::new(Some('m'), Some("message-threads"), Req, Key::MessageThreads),
    Spec::new(Some('M'), Some("message-cpus"), Req, Key::MessageCpus),
    Spec::new(Some('W'), Some("worker-cpus"), Req, Key::WorkerCpus),
    Spec::new(Some('t'), Some("threads"), Req, Key::Threads),
    Spec::new(Some('r'), Some("runtime"), Req, Key::Runtime),
    Spec::new(Some('R'), Some("rps"), Req, Key::Rps),
    Spec::new(Some('A'), Some("auto-rps"), Req, Key::AutoRps),
    Spec::new(None, Some("cache_footprint"), Req, Key::CacheFootprintLong),
    Spec::new(Some('F'), None, Req, Key::CacheFootprint),
    Spec::new(Some('C'), Some("calibrate"), NoArg, Key::Calibrate),
    Spec::new(Some('L'), Some("no-locking"), NoArg, Key::NoLocking),
    Spec::new(Some('n'), Some("operations"), Req, Key::Operations),
    Spec::new(Some('s'), Some("sleep_usec"), Req, Key::SleepUsec),
    Spec::new(Some('w'), Some("warmuptime"), Req, Key::Warmup),
    Spec::new(Some('i'), Some("intervaltime"), Req, Key::Interval),
    Spec::new(Some('z'), Some("zerotime"), Req, Key::Zero),
    Spec::new(Some('j'), Some("json"), Req, Key::Json),
    Spec::new(Some('J'), Some("jobname"), Req, Key::Jobname),
    Spec::new(None, Some("pin"), Req, Key::Pin),
    Spec::new(None, Some("split"), Req, Key::Split),
    Spec::new(None, Some("help"), NoArg, Key::Help),
];

/// Parses the words after `schbench`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: true,
        negation: false,
    };
    let mut o = Options::default();
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    let mut found_warmup: Option<u32> = None;
    let mut auto_pin = false;
    while let Some(found) = sc.next_option() {
        let found = found?;
        let value = cmdline::required(&found).to_string();
        let opt = found.spelled.clone();
        let non_neg = || cmdline::non_negative_u32(PROG, &opt, &value);
        let not_modelled = |detail: &str| OptionError::NotModelled {
            program: PROG,
            option: opt.clone(),
            detail: detail.to_string(),
        };
        match found.key {
            Key::Pipe => {
                let bytes = non_neg()?;
                o.pipe_bytes = if bytes > PIPE_TRANSFER_BUFFER {
                    o.notices
                        .push(format!("pipe size too big, using {PIPE_TRANSFER_BUFFER}"));
                    PIPE_TRANSFER_BUFFER
                } else {
                    bytes
                };
                o.warmup_secs = 0;
            }
            Key::MessageThreads => o.message_threads = cmdline::positive_u32(PROG, &opt, &value)?,
            Key::Threads => {
                let t = non_neg()?;
                o.worker_threads = (t > 0).then_some(t);
            }
            Key::Runtime => {
                let r = non_neg()?;
                if r == 0 {
                    return Err(OptionError::BadValue {
                        program: PROG,
                        option: opt,
                        reason: "0 makes schbench run until killed; schedlab needs a finite \
                                 runtime"
                            .to_string(),
                    });
                }
                o.runtime_secs = r;
            }
            Key::Warmup => found_warmup = Some(non_neg()?),
            Key::Interval => o.interval_secs = non_neg()?,
            Key::Zero => o.zero_secs = non_neg()?,
            Key::Rps => o.requests_per_sec = non_neg()?,
            Key::AutoRps => {
                o.auto_rps = non_neg()?;
                o.warmup_secs = 0;
                if o.requests_per_sec == 0 {
                    o.requests_per_sec = 10;
                }
            }
            Key::Operations => {
                // schedlab's cap: the model draws the cost jitter once per operation, so a
                // request of 2^32 operations took minutes of wall time per simulated request.
                let n = non_neg()?;
                if n > MAX_OPERATIONS {
                    return Err(OptionError::BadValue {
                        program: PROG,
                        option: opt,
                        reason: format!(
                            "{n} operations per request, more than the {MAX_OPERATIONS} schedlab \
                             models"
                        ),
                    });
                }
                o.operations = u64::from(n);
            }
            Key::SleepUsec => o.sleep_usec = non_neg()? as u64,
            Key::CacheFootprint => o.cache_footprint_kb = non_neg()? as u64,
            Key::CacheFootprintLong => o.warnings.push(format!(
                "schbench: {opt} is ignored by schbench (its option letter is not handled); \
                 use -F"
            )),
            Key::Calibrate => o.calibrate = true,
            Key::NoLocking => o.locking = false,
            Key::MessageCpus | Key::WorkerCpus => {
                let pin = if value == "auto" {
                    auto_pin = true;
                    CpuPin::Auto
                } else {
                    CpuPin::Cpus(cmdline::cpu_list(&value).ok_or_else(|| {
                        OptionError::BadValue {
                            program: PROG,
                            option: opt.clone(),
                            reason: format!("failed to parse cpuset information '{value}'"),
                        }
                    })?)
                };
                if found.key == Key::MessageCpus {
                    o.message_cpus = Some(pin);
                } else {
                    o.worker_cpus = Some(pin);
                }
            }
            Key::Jobname => o.jobname = Some(value.clone()),
            Key::Json => return Err(not_modelled("JSON output file")),
            Key::Pin => return Err(not_modelled("CCX-aware pinning")),
            Key::Split => return Err(not_modelled("private/shared footprint split")),
            Key::Help => return Err(not_modelled("help output")),
        }
    }
    if let Some(arg) = sc.positionals().first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: arg.clone(),
        });
    }
    // 1 main + m message threads + m × t workers (t unset: at least 1 each, ⌈CPUs / m⌉ at
    // set-up) must fit cmdline::MAX_TASKS.
    let m = o.message_threads as u128;
    let t = o.worker_threads.unwrap_or(1) as u128;
    let what = match o.worker_threads {
        Some(t) => format!("-m {} -t {t}", o.message_threads),
        None => format!("-m {}", o.message_threads),
    };
    cmdline::check_tasks(PROG, &what, 1 + m + m * t)?;
    if auto_pin {
        // "auto" on either list pins both: message thread i on CPU i, workers on the rest.
        o.message_cpus = Some(CpuPin::Auto);
        o.worker_cpus = Some(CpuPin::Auto);
        o.notices
            .push("auto pinning message and worker threads".to_string());
    }
    if let Some(w) = found_warmup {
        o.warmup_secs = w;
    }
    if o.calibrate {
        o.locking = false;
    }
    if o.runtime_secs < 30 {
        o.warmup_secs = 0;
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn defaults() {
        let o = p("").unwrap();
        assert_eq!(o, Options::default());
        // 256 KiB: 262144 / 3 = 87381, / 8 = 10922, sqrt = 104.5 -> 104.
        assert_eq!(o.matrix_size(), 104);
        // -t unset: ceil(80 / 1) = 80; with -m 3 on 8 CPUs: ceil(8 / 3) = 3.
        assert_eq!(o.worker_threads_for(80), 80);
        assert_eq!(p("-m 3").unwrap().worker_threads_for(8), 3);
        assert!(o.locking && !o.rps_mode());
    }

    #[test]
    fn mmtests_line() {
        let o = p("-z 10 -i 10 -r 180 -m 1 -t 80").unwrap();
        assert_eq!(
            (
                o.zero_secs,
                o.interval_secs,
                o.runtime_secs,
                o.message_threads,
                o.worker_threads
            ),
            (10, 10, 180, 1, Some(80))
        );
        let o = p("--zerotime=10 --intervaltime 10 --runtime=180 --message-threads 1 --threads=80")
            .unwrap();
        assert_eq!(o.worker_threads, Some(80));
        // Abbreviation: --op = --operations; -t 0 means "pick for me".
        let o = p("--op 3 -t 0 -F512 -s 50").unwrap();
        assert_eq!(
            (o.operations, o.worker_threads, o.sleep_usec),
            (3, None, 50)
        );
        // 512 KiB: 524288 / 3 = 174762, / 8 = 21845, sqrt = 147.8 -> 147.
        assert_eq!(o.matrix_size(), 147);
    }

    #[test]
    fn adjustments() {
        assert!(!p("-C").unwrap().locking);
        assert!(p("-C").unwrap().calibrate);
        assert!(!p("-L").unwrap().locking);
        // Warmup kept only when runtime >= 30.
        assert_eq!(p("-w 5 -r 60").unwrap().warmup_secs, 5);
        assert_eq!(p("-w 5 -r 20").unwrap().warmup_secs, 0);
        // -A starts at 10 RPS unless -R came first; -R after -A overrides.
        let o = p("-A 80").unwrap();
        assert_eq!((o.auto_rps, o.requests_per_sec), (80, 10));
        assert_eq!(p("-R 500 -A 80").unwrap().requests_per_sec, 500);
        assert_eq!(p("-A 80 -R 500").unwrap().requests_per_sec, 500);
        // -R 1000 with -m 3: 333 per message thread.
        assert_eq!(p("-R 1000 -m 3").unwrap().rps_per_message_thread(), 333);
        let o = p("-p 2000000").unwrap();
        assert_eq!(o.pipe_bytes, 1_048_576);
        assert_eq!(
            o.notices,
            vec!["pipe size too big, using 1048576".to_string()]
        );
    }

    #[test]
    fn pinning() {
        let o = p("-M 0,2 -W 4-7 -m 3").unwrap();
        assert_eq!(o.message_cpus, Some(CpuPin::Cpus(vec![0, 2])));
        assert_eq!(o.worker_cpus, Some(CpuPin::Cpus(vec![4, 5, 6, 7])));
        // Message thread 2 of 3 on the (2 % 2) = 0th CPU of {0, 2}.
        assert_eq!(o.message_thread_cpu(2), Some(0));
        assert_eq!(o.message_thread_cpu(1), Some(2));
        let o = p("-W auto -m 2").unwrap();
        assert_eq!(
            (o.message_cpus.clone(), o.worker_cpus.clone()),
            (Some(CpuPin::Auto), Some(CpuPin::Auto))
        );
        assert_eq!(o.message_thread_cpu(1), Some(1));
        assert_eq!(
            o.notices,
            vec!["auto pinning message and worker threads".to_string()]
        );
        assert!(matches!(p("-M 3-1"), Err(OptionError::BadValue { .. })));
    }

    #[test]
    fn errors() {
        assert_eq!(
            p("-t x").unwrap_err().to_string(),
            "schbench: -t: expected a non-negative integer, got 'x'"
        );
        assert!(matches!(p("-m 0"), Err(OptionError::BadValue { .. })));
        assert!(matches!(p("-r 0"), Err(OptionError::BadValue { .. })));
        assert!(matches!(
            p("-j out.json"),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(
            p("--pin ccx"),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(
            p("--split 50"),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(p("-x"), Err(OptionError::Unknown { .. })));
        assert!(matches!(p("-f 10"), Err(OptionError::Unknown { .. })));
        assert!(matches!(
            p("--message 2"),
            Err(OptionError::Ambiguous { .. })
        ));
        assert!(matches!(
            p("-t 4 extra"),
            Err(OptionError::UnexpectedArgument { .. })
        ));
        let o = p("--cache_footprint 512").unwrap();
        assert_eq!((o.cache_footprint_kb, o.warnings.len()), (256, 1));
        // Threads: 1 + m + m × t ≤ 32768 (cmdline::MAX_TASKS). -m 1 -t 32766: 32768 fits;
        // -t 32767: 32769 does not; -m 16384 (t ≥ 1): 1 + 16384 + 16384 = 32769 does not.
        assert!(p("-t 32766").is_ok());
        assert_eq!(
            p("-t 32767").unwrap_err().to_string(),
            "schbench: -m 1 -t 32767: 32769 tasks, more than the 32768 a default pid_max allows"
        );
        assert!(p("-m 16383").is_ok());
        assert!(matches!(p("-m 16384"), Err(OptionError::Invalid { .. })));
        assert!(matches!(
            p("-m 4294967295 -t 4294967295"),
            Err(OptionError::Invalid { .. })
        ));
        // Campaign input: -n 4294967295 drew 2^32 jitter samples per request (a 1 ms run
        // did not end). 10^6 is accepted, one more is not.
        assert_eq!(p("-n 1000000").unwrap().operations, 1_000_000);
        let e = p("-n 1000001").unwrap_err().to_string();
        assert!(e.contains("-n") && e.contains("1000000"), "{e}");
    }
}
