//! stress-ng 0.15.06 command line, the subset schedlab models: the `pipe` stressor and the
//! general options that shape its run and its report (workloads.md §2.1).
//!
//! | option | modelled |
//! |---|---|
//! | `-p N`, `--pipe N` | yes: N instances (0 = configured CPUs, < 0 = online CPUs) |
//! | `-t T`, `--timeout T` | yes: stress-ng time suffixes s m h d w y (at most 2^33 s) |
//! | `-M`, `--metrics` | yes: full metrics table |
//! | `--metrics-brief` | yes: brief metrics table |
//! | `--pipe-ops N` | yes: bogo-op limit, shared between instances |
//! | `--pipe-data-size N` | yes: bytes per write, 4 .. page size |
//! | `--pipe-size N` | yes: `F_SETPIPE_SZ` request, 4 B .. 1 MiB |
//! | other stressors and general options | rejected as not modelled |
//!
//! Deviations: long options must be spelled in full (stress-ng's table has hundreds of
//! entries, so getopt's abbreviation rule cannot be decided here); numbers must be whole
//! (stress-ng's `sscanf` reads `1.5m` as one minute, schedlab rejects it).

use super::cmdline::{self, ArgKind, Found, OptionError, Scanner, Spec, Style};

const PROG: &str = "stress-ng";

/// Default `--timeout` when none is given: 24 hours (stress-ng `DEFAULT_TIMEOUT`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 86_400;
/// Default `--pipe-data-size` (bytes per write).
pub const DEFAULT_PIPE_DATA_SIZE: u64 = 512;
/// Page size assumed by [`parse`] for the `--pipe-data-size` upper bound.
pub const DEFAULT_PAGE_SIZE: u64 = 4096;
/// Largest instance count stress-ng accepts (`STRESS_PROCS_MAX`, unverified for 0.15.06).
pub const STRESS_PROCS_MAX: i64 = 8192;
/// `--pipe-ops` range (stress-ng `MIN_OPS` .. `MAX_OPS`).
pub const MIN_OPS: u64 = 1;
pub const MAX_OPS: u64 = 100_000_000;

/// How many pipe stressor instances to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instances {
    Count(u32),
    /// `--pipe 0`: one per configured CPU.
    Configured,
    /// `--pipe -1` (any negative): one per online CPU.
    Online,
}

impl Instances {
    pub fn resolve(self, cpus_configured: u32, cpus_online: u32) -> u32 {
        match self {
            Instances::Count(n) => n,
            Instances::Configured => cpus_configured,
            Instances::Online => cpus_online,
        }
    }
}

/// Which metrics table is printed at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Metrics {
    #[default]
    Off,
    /// `--metrics`: adds the "CPU used per instance" and "RSS Max" columns.
    Full,
    /// `--metrics-brief` (wins over `--metrics`).
    Brief,
}

/// A parsed stress-ng command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub pipe: Instances,
    /// `--timeout` in seconds; `None` = not given (stress-ng then "defaults" to
    /// [`DEFAULT_TIMEOUT_SECS`] and says so). `Some(0)` = run until the op limit.
    pub timeout_secs: Option<u64>,
    pub metrics: Metrics,
    /// Bytes per `write()` (default 512).
    pub pipe_data_size: u64,
    /// Requested pipe capacity in bytes; `None` = kernel default (16 pages). The kernel
    /// rounds the request up to a power-of-two number of pages.
    pub pipe_size: Option<u64>,
    /// Total bogo-op limit over all instances (see [`Options::ops_per_instance`]).
    pub pipe_ops: Option<u64>,
}

impl Options {
    /// The run length each instance uses, in seconds.
    pub fn effective_timeout_secs(&self) -> u64 {
        self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS)
    }

    /// Bogo ops each instance stops after: stress-ng shares `--pipe-ops` equally between
    /// the instances, rounding up.
    pub fn ops_per_instance(&self, instances: u32) -> Option<u64> {
        let ops = self.pipe_ops?;
        let n = instances as u64;
        Some(if n == 0 { 0 } else { ops.div_ceil(n) })
    }

    /// Checks `--pipe-data-size` against the platform's page size (stress-ng's upper bound).
    pub fn check_page_size(&self, page_size: u64) -> Result<(), OptionError> {
        check_range_bytes("--pipe-data-size", self.pipe_data_size, 4, page_size)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Pipe,
    Timeout,
    Metrics,
    MetricsBrief,
    PipeOps,
    PipeDataSize,
    PipeSize,
    /// Real stress-ng option schedlab does not model.
    Other,
}

use ArgKind::{None as NoArg, Required as Req};

/// The modelled options plus the general options and stressors most often seen on benchmark
/// command lines, so that they are reported as "not modelled" rather than "unknown".
const SPECS: &[Spec<Key>] = &[
    Spec::new(Some('p'), Some("pipe"), Req, Key::Pipe),
    Spec::new(Some('t'), Some("timeout"), Req, Key::Timeout),
    Spec::new(Some('M'), Some("metrics"), NoArg, Key::Metrics),
    Spec::new(None, Some("metrics-brief"), NoArg, Key::MetricsBrief),
    Spec::new(None, Some("pipe-ops"), Req, Key::PipeOps),
    Spec::new(None, Some("pipe-data-size"), Req, Key::PipeDataSize),
    Spec::new(None, Some("pipe-size"), Req, Key::PipeSize),
    // General options.
    Spec::new(Some('a'), Some("all"), Req, Key::Other),
    Spec::new(Some('b'), Some("backoff"), Req, Key::Other),
    Spec::new(None, Some("abort"), NoArg, Key::Other),
    Spec::new(None, Some("aggressive"), NoArg, Key::Other),
    Spec::new(None, Some("class"), Req, Key::Other),
    Spec::new(Some('n'), Some("dry-run"), NoArg, Key::Other),
    Spec::new(Some('h'), Some("help"), NoArg, Key::Other),
    Spec::new(None, Some("ionice-class"), Req, Key::Other),
    Spec::new(None, Some("ionice-level"), Req, Key::Other),
    Spec::new(None, Some("job"), Req, Key::Other),
    Spec::new(Some('k'), Some("keep-name"), NoArg, Key::Other),
    Spec::new(None, Some("klog-check"), NoArg, Key::Other),
    Spec::new(None, Some("log-file"), Req, Key::Other),
    Spec::new(None, Some("maximize"), NoArg, Key::Other),
    Spec::new(None, Some("minimize"), NoArg, Key::Other),
    Spec::new(None, Some("no-rand-seed"), NoArg, Key::Other),
    Spec::new(None, Some("oomable"), NoArg, Key::Other),
    Spec::new(None, Some("page-in"), NoArg, Key::Other),
    Spec::new(None, Some("pathological"), NoArg, Key::Other),
    Spec::new(None, Some("perf"), NoArg, Key::Other),
    Spec::new(Some('q'), Some("quiet"), NoArg, Key::Other),
    Spec::new(Some('r'), Some("random"), Req, Key::Other),
    Spec::new(None, Some("sched"), Req, Key::Other),
    Spec::new(None, Some("sched-prio"), Req, Key::Other),
    Spec::new(None, Some("seed"), Req, Key::Other),
    Spec::new(None, Some("sequential"), Req, Key::Other),
    Spec::new(None, Some("stderr"), NoArg, Key::Other),
    Spec::new(None, Some("stdout"), NoArg, Key::Other),
    Spec::new(None, Some("stressors"), NoArg, Key::Other),
    Spec::new(None, Some("syslog"), NoArg, Key::Other),
    Spec::new(None, Some("taskset"), Req, Key::Other),
    Spec::new(None, Some("temp-path"), Req, Key::Other),
    Spec::new(None, Some("thermalstat"), Req, Key::Other),
    Spec::new(None, Some("thrash"), NoArg, Key::Other),
    Spec::new(None, Some("timer-slack"), Req, Key::Other),
    Spec::new(None, Some("times"), NoArg, Key::Other),
    Spec::new(None, Some("tz"), NoArg, Key::Other),
    Spec::new(Some('v'), Some("verbose"), NoArg, Key::Other),
    Spec::new(None, Some("verify"), NoArg, Key::Other),
    Spec::new(Some('V'), Some("version"), NoArg, Key::Other),
    Spec::new(None, Some("vmstat"), Req, Key::Other),
    Spec::new(Some('x'), Some("exclude"), Req, Key::Other),
    Spec::new(Some('Y'), Some("yaml"), Req, Key::Other),
    // Other stressors (a few, by their usual spellings).
    Spec::new(Some('c'), Some("cpu"), Req, Key::Other),
    Spec::new(Some('C'), Some("cache"), Req, Key::Other),
    Spec::new(Some('d'), Some("hdd"), Req, Key::Other),
    Spec::new(Some('f'), Some("fork"), Req, Key::Other),
    Spec::new(Some('i'), Some("io"), Req, Key::Other),
    Spec::new(Some('m'), Some("vm"), Req, Key::Other),
    Spec::new(Some('s'), Some("switch"), Req, Key::Other),
    Spec::new(Some('S'), Some("sock"), Req, Key::Other),
    Spec::new(Some('T'), Some("timer"), Req, Key::Other),
    Spec::new(Some('u'), Some("urandom"), Req, Key::Other),
    Spec::new(Some('y'), Some("yield"), Req, Key::Other),
    Spec::new(None, Some("pipeherd"), Req, Key::Other),
    Spec::new(None, Some("pipeherd-ops"), Req, Key::Other),
    Spec::new(None, Some("pipeherd-yield"), NoArg, Key::Other),
    Spec::new(None, Some("futex"), Req, Key::Other),
    Spec::new(None, Some("sem"), Req, Key::Other),
    Spec::new(None, Some("msg"), Req, Key::Other),
    Spec::new(None, Some("matrix"), Req, Key::Other),
    Spec::new(None, Some("memcpy"), Req, Key::Other),
    Spec::new(None, Some("context"), Req, Key::Other),
    Spec::new(None, Some("cpu-method"), Req, Key::Other),
    Spec::new(None, Some("cpu-load"), Req, Key::Other),
    Spec::new(None, Some("vm-bytes"), Req, Key::Other),
];

/// Parses the words after `stress-ng`, assuming 4 KiB pages for the `--pipe-data-size`
/// bound (see [`parse_with_page_size`]).
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    parse_with_page_size(args, DEFAULT_PAGE_SIZE)
}

/// Parses the words after `stress-ng`; `page_size` is the platform's page size, the upper
/// bound of `--pipe-data-size`.
pub fn parse_with_page_size(args: &[String], page_size: u64) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    let mut pipe = None;
    let mut timeout_secs = None;
    let mut full = false;
    let mut brief = false;
    let mut pipe_data_size = DEFAULT_PIPE_DATA_SIZE;
    let mut pipe_size = None;
    let mut pipe_ops = None;
    while let Some(found) = sc.next_option() {
        let found = found?;
        let value = cmdline::required(&found);
        match found.key {
            Key::Pipe => {
                let n = cmdline::int_in(
                    PROG,
                    &found.spelled,
                    value,
                    i32::MIN as i64,
                    STRESS_PROCS_MAX,
                    &format!("an instance count up to {STRESS_PROCS_MAX}"),
                )?;
                pipe = Some(match n {
                    0 => Instances::Configured,
                    n if n < 0 => Instances::Online,
                    n => Instances::Count(n as u32),
                });
            }
            Key::Timeout => {
                let secs = time_value(&found.spelled, value)?;
                cmdline::check_run_secs(PROG, &found.spelled, value, secs as u128)?;
                timeout_secs = Some(secs);
            }
            Key::Metrics => full = true,
            Key::MetricsBrief => brief = true,
            Key::PipeOps => {
                let v = cmdline::int_in(
                    PROG,
                    &found.spelled,
                    value,
                    0,
                    i64::MAX,
                    "a non-negative integer",
                )? as u64;
                if !(MIN_OPS..=MAX_OPS).contains(&v) {
                    return Err(bad(
                        &found,
                        format!("value {v} is out of range, allowed: {MIN_OPS} .. {MAX_OPS}"),
                    ));
                }
                pipe_ops = Some(v);
            }
            Key::PipeDataSize => {
                let v = byte_value(&found.spelled, value)?;
                check_range_bytes(&found.spelled, v, 4, page_size)?;
                pipe_data_size = v;
            }
            Key::PipeSize => {
                let v = byte_value(&found.spelled, value)?;
                check_range_bytes(&found.spelled, v, 4, 1024 * 1024)?;
                pipe_size = Some(v);
            }
            Key::Other => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: found.spelled,
                    detail: "schedlab models only the pipe stressor: -p/--pipe, -t/--timeout, \
                             -M/--metrics, --metrics-brief, --pipe-ops, --pipe-size, \
                             --pipe-data-size"
                        .to_string(),
                })
            }
        }
    }
    if let Some(arg) = sc.positionals().first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: arg.clone(),
        });
    }
    let Some(pipe) = pipe else {
        return Err(OptionError::Invalid {
            program: PROG,
            message: "no stress workers invoked (give --pipe N)".to_string(),
        });
    };
    let metrics = if brief {
        Metrics::Brief
    } else if full {
        Metrics::Full
    } else {
        Metrics::Off
    };
    Ok(Options {
        pipe,
        timeout_secs,
        metrics,
        pipe_data_size,
        pipe_size,
        pipe_ops,
    })
}

fn bad(found: &Found<Key>, reason: String) -> OptionError {
    OptionError::BadValue {
        program: PROG,
        option: found.spelled.clone(),
        reason,
    }
}

/// stress-ng `stress_get_uint64_scale`: whole number, optional one-letter unit
/// (case-insensitive) from `scales`.
fn scaled_value(
    option: &str,
    value: &str,
    scales: &[(char, u64)],
    what: &str,
) -> Result<u64, OptionError> {
    let err = |reason: String| OptionError::BadValue {
        program: PROG,
        option: option.to_string(),
        reason,
    };
    let units: String = scales.iter().map(|(c, _)| *c).collect();
    let expected = || {
        format!("expected a whole number with an optional {what} suffix ({units}), got '{value}'")
    };
    let (digits, scale) = match value.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let c = c.to_ascii_lowercase();
            let Some(&(_, s)) = scales.iter().find(|(u, _)| *u == c) else {
                return Err(err(expected()));
            };
            (&value[..value.len() - 1], s)
        }
        _ => (value, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(expected()));
    }
    let n: u64 = digits.parse().map_err(|_| err(expected()))?;
    n.checked_mul(scale)
        .ok_or_else(|| err(format!("'{value}' is too large")))
}

/// `--timeout`: seconds, or a number with s m h d w y (stress-ng `stress_get_uint64_time`).
fn time_value(option: &str, value: &str) -> Result<u64, OptionError> {
    const SCALES: &[(char, u64)] = &[
        ('s', 1),
        ('m', 60),
        ('h', 3600),
        ('d', 24 * 3600),
        ('w', 7 * 24 * 3600),
        ('y', 31_536_000),
    ];
    scaled_value(option, value, SCALES, "time")
}

/// Sizes: bytes, or a number with b k m g t p e (powers of 1024; stress-ng
/// `stress_get_uint64_byte`). The cache-size forms `L1`..`LLC` are not modelled.
fn byte_value(option: &str, value: &str) -> Result<u64, OptionError> {
    const SCALES: &[(char, u64)] = &[
        ('b', 1),
        ('k', 1 << 10),
        ('m', 1 << 20),
        ('g', 1 << 30),
        ('t', 1 << 40),
        ('p', 1 << 50),
        ('e', 1 << 60),
    ];
    if value.starts_with(['l', 'L']) {
        return Err(OptionError::NotModelled {
            program: PROG,
            option: option.to_string(),
            detail: format!("cache-size value '{value}'"),
        });
    }
    scaled_value(option, value, SCALES, "size")
}

fn check_range_bytes(option: &str, v: u64, lo: u64, hi: u64) -> Result<(), OptionError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(OptionError::BadValue {
            program: PROG,
            option: option.to_string(),
            reason: format!("value {v}B is out of range, allowed: {lo}B .. {hi}B"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Options, OptionError> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn seed_000_command_line() {
        let o = p("--pipe 4 --timeout 20s --metrics-brief").unwrap();
        assert_eq!(
            o,
            Options {
                pipe: Instances::Count(4),
                timeout_secs: Some(20),
                metrics: Metrics::Brief,
                pipe_data_size: 512,
                pipe_size: None,
                pipe_ops: None,
            }
        );
        assert_eq!(o.effective_timeout_secs(), 20);
    }

    #[test]
    fn option_forms() {
        for line in [
            "--pipe 4 --timeout 20",
            "--pipe=4 --timeout=20s",
            "-p 4 -t 20",
            "-p4 -t20s",
        ] {
            let o = p(line).unwrap();
            assert_eq!(o.pipe, Instances::Count(4), "{line}");
            assert_eq!(o.timeout_secs, Some(20), "{line}");
        }
        assert_eq!(p("-p 1 -M").unwrap().metrics, Metrics::Full);
        assert_eq!(
            p("-p 1 -M --metrics-brief").unwrap().metrics,
            Metrics::Brief
        );
        assert_eq!(p("-p 1").unwrap().metrics, Metrics::Off);
        assert_eq!(p("-p 1").unwrap().effective_timeout_secs(), 86_400);
    }

    #[test]
    fn instance_counts() {
        assert_eq!(p("-p 0").unwrap().pipe, Instances::Configured);
        assert_eq!(p("-p -1").unwrap().pipe, Instances::Online);
        assert_eq!(Instances::Configured.resolve(8, 6), 8);
        assert_eq!(Instances::Online.resolve(8, 6), 6);
        assert!(p("-p 8193").is_err());
        assert!(p("-p 4x").is_err());
    }

    #[test]
    fn time_suffixes() {
        // s=1, m=60, h=3600, d=86400, w=604800, y=31536000; the unit is case-insensitive.
        let cases = [
            ("20s", 20),
            ("2m", 120),
            ("1H", 3600),
            ("1d", 86_400),
            ("1w", 604_800),
            ("1y", 31_536_000),
        ];
        for (t, secs) in cases {
            assert_eq!(
                p(&format!("-p 1 -t {t}")).unwrap().timeout_secs,
                Some(secs),
                "{t}"
            );
        }
        let e = p("-p 1 -t 1.5m").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("stress-ng: -t: expected a whole number"),
            "{e}"
        );
        assert!(p("-p 1 -t 10x").is_err());
        assert!(p("-p 1 -t s").is_err());
        // The run must fit the simulated clock: 2^33 s is the limit (cmdline::MAX_RUN_SECS);
        // 1e12 s (or 600 years = 18 921 600 000 s) would overflow u64 nanoseconds.
        assert_eq!(
            p("-p 1 -t 8589934592").unwrap().timeout_secs,
            Some(8_589_934_592)
        );
        for t in ["8589934593", "1000000000000", "600y"] {
            let e = p(&format!("-p 1 -t {t}")).unwrap_err().to_string();
            assert!(e.starts_with("stress-ng: -t: '"), "{e}");
            assert!(e.contains("longer than"), "{e}");
        }
    }

    #[test]
    fn pipe_sizes() {
        let o = p("-p 1 --pipe-data-size 4k --pipe-size 64K --pipe-ops 1000").unwrap();
        assert_eq!(o.pipe_data_size, 4096);
        assert_eq!(o.pipe_size, Some(65_536));
        assert_eq!(o.pipe_ops, Some(1000));
        // 1000 ops over 3 instances: ceil(1000 / 3) = 334 each.
        assert_eq!(o.ops_per_instance(3), Some(334));
        assert_eq!(
            p("-p 1 --pipe-data-size 8k").unwrap_err().to_string(),
            "stress-ng: --pipe-data-size: value 8192B is out of range, allowed: 4B .. 4096B"
        );
        let args: Vec<String> = ["-p", "1", "--pipe-data-size", "8k"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            parse_with_page_size(&args, 16_384).unwrap().pipe_data_size,
            8192
        );
        assert!(p("-p 1 --pipe-data-size 3").is_err());
        assert!(p("-p 1 --pipe-size 2m").is_err());
        assert!(p("-p 1 --pipe-ops 0").is_err());
        assert!(p("-p 1 --pipe-size LLC").is_err());
        assert!(o.check_page_size(4096).is_ok());
        assert!(o.check_page_size(2048).is_err());
    }

    #[test]
    fn errors() {
        assert_eq!(
            p("-p 1 --pipe-foo 3").unwrap_err().to_string(),
            "stress-ng: unknown option '--pipe-foo'"
        );
        let e = p("--cpu 4").unwrap_err();
        assert!(matches!(e, OptionError::NotModelled { .. }), "{e}");
        assert!(e
            .to_string()
            .starts_with("stress-ng: --cpu: not modelled by schedlab"));
        assert!(matches!(
            p("-p 1 --verify"),
            Err(OptionError::NotModelled { .. })
        ));
        assert!(matches!(p("-p 1 --metr"), Err(OptionError::Unknown { .. })));
        assert!(matches!(p("-t 10"), Err(OptionError::Invalid { .. })));
        assert!(matches!(
            p("-p 1 extra"),
            Err(OptionError::UnexpectedArgument { .. })
        ));
        assert!(matches!(p("-p"), Err(OptionError::MissingValue { .. })));
        assert!(matches!(
            p("-p 1 --metrics=yes"),
            Err(OptionError::UnexpectedValue { .. })
        ));
    }
}
