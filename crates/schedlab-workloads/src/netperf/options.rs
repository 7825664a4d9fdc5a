//! netperf 2.6.0 command line (netbench.md §16.1; `netsh.c` `scan_cmd_line` for the global
//! options before `--`, `nettest_omni.c` `scan_omni_args` for the test-specific ones after it).
//!
//! | option | modelled |
//! |---|---|
//! | `-t TEST` | `TCP_RR`, `UDP_RR`, `TCP_STREAM` (the default), `UDP_STREAM`; other tests: error |
//! | `-H host[,family]` | loopback only (`localhost`, `127.0.0.1`, `::1`, …): other hosts are an error |
//! | `-4`, `-6` | yes (header text only) |
//! | `-l secs` | yes; negative = a transaction count (RR) or byte count (STREAM), as netperf |
//! | `-i max,min`, `-I level,width` | yes: iterations until confidence, mean of the iterations |
//! | `-f K\|M\|G\|k\|m\|g\|x` | yes |
//! | `-D interval[,units]` | yes: interim results (demo mode compiled in, as mmtests builds it) |
//! | `-P 0\|1`, `-v 0\|1\|2`, `-B brand` | yes (`-v 2` prints as `-v 1`, with a warning) |
//! | `-T lcpu,rcpu` | yes: netperf and the netserver child are bound to those CPUs |
//! | `-c`, `-C` | ignored with a warning (no CPU utilisation measurement) |
//! | `-n N`, `-p port` | accepted, no effect |
//! | test `-r req,rsp`, `-m`, `-M`, `-s`, `-S`, `-D`, `-b`, `-4`, `-6` | yes |
//! | anything else | error: not modelled |
//!
//! Numbers go through netperf's `convert()` (a decimal integer with an optional `K`/`M`/`G`
//! binary or `k`/`m`/`g` decimal multiplier), read strictly: trailing garbage is an error
//! instead of being ignored as `atoi` would. Pairs follow `break_args` (`-r 64` sets both
//! sizes, `-r 64,` only the first, `-r ,64` only the second) or `break_args_explicit`
//! (`-m`, `-M`, `-H`, `-D`: a single value sets the first only).

use crate::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};

pub const PROG: &str = "netperf";

/// The tests the model runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    TcpRr,
    UdpRr,
    TcpStream,
    UdpStream,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::TcpRr => "TCP_RR",
            Test::UdpRr => "UDP_RR",
            Test::TcpStream => "TCP_STREAM",
            Test::UdpStream => "UDP_STREAM",
        }
    }
    pub fn is_rr(self) -> bool {
        matches!(self, Test::TcpRr | Test::UdpRr)
    }
    pub fn is_udp(self) -> bool {
        matches!(self, Test::UdpRr | Test::UdpStream)
    }
    /// The title `print_top_test_header` starts with (the omni "MIGRATED" tests).
    pub fn title(self) -> &'static str {
        match self {
            Test::TcpRr => "MIGRATED TCP REQUEST/RESPONSE TEST",
            Test::UdpRr => "MIGRATED UDP REQUEST/RESPONSE TEST",
            Test::TcpStream => "MIGRATED TCP STREAM TEST",
            Test::UdpStream => "MIGRATED UDP STREAM TEST",
        }
    }
}

/// Test names netperf 2.6.0 knows but the model does not run.
const OTHER_TESTS: &[&str] = &[
    "TCP_MAERTS",
    "TCP_CRR",
    "TCP_CC",
    "TCP_SENDFILE",
    "TCP_MSS",
    "UDP_MAERTS",
    "OMNI",
    "STREAM_STREAM",
    "STREAM_RR",
    "DG_STREAM",
    "DG_RR",
    "SCTP_STREAM",
    "SCTP_RR",
    "LOC_CPU",
    "REM_CPU",
    "UUID",
];

/// Address family of the data connection (header text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Inet,
    Inet6,
}

/// How a test ends (`-l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Seconds (`-l 10`, the default).
    Secs(u32),
    /// `-l -N`: N transactions (RR) or N bytes sent (STREAM).
    Units(u64),
}

/// A parsed netperf command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub test: Test,
    pub family: Family,
    /// The remote host as given (`-H`), or netperf's default.
    pub host: String,
    pub length: Length,
    pub iteration_max: u32,
    pub iteration_min: u32,
    /// `-I` level (95 or 99; 0 = not set).
    pub confidence_level: u32,
    /// `-I` width as a fraction (0.05 = 5 %).
    pub interval: f64,
    /// The resolved `libfmt` (`x` = transactions, RR only).
    pub fmt: char,
    /// `-D`: interim results every this many µs (demo mode 1; mode 2 = negative `-D`).
    pub demo: Option<Demo>,
    pub print_headers: bool,
    pub verbosity: u32,
    pub brand: Option<String>,
    /// `-T`: (local, remote) CPU.
    pub local_cpu: Option<u32>,
    pub remote_cpu: Option<u32>,
    pub cpu_binding: bool,
    /// `-r`: request and response sizes (RR; 1,1 by default).
    pub req_size: u32,
    pub rsp_size: u32,
    /// `-m`: local send size (STREAM), `None` = the send socket buffer size.
    pub send_size: Option<u32>,
    /// `-M a,b`: remote receive size `a`, local receive size `b`.
    pub remote_recv_size: Option<u32>,
    /// `-s a,b` / `-S a,b`: requested local / remote send and receive socket buffer sizes.
    pub lss_req: Option<u32>,
    pub lsr_req: Option<u32>,
    pub rss_req: Option<u32>,
    pub rsr_req: Option<u32>,
    /// test `-D`: TCP_NODELAY on both ends.
    pub nodelay: bool,
    /// test `-b`: first burst (requests in flight beyond the first).
    pub first_burst: u32,
    pub warnings: Vec<String>,
}

/// Demo mode (`-D`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demo {
    /// Interval in µs.
    pub interval_us: f64,
    /// Mode 2 (negative interval): timestamp every unit instead of accumulating.
    pub always: bool,
    /// Initial units per interval (`-D secs,units`), 0 = netperf's default.
    pub units: f64,
}

impl Options {
    /// Whether the confidence-interval machinery runs (`iteration_max > 1`).
    pub fn confidence_wanted(&self) -> bool {
        self.iteration_max > 1
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum G {
    V4,
    V6,
    Host,
    Len,
    Iter,
    Conf,
    Fmt,
    Demo,
    Test,
    Headers,
    Bind,
    LocalCpu,
    RemoteCpu,
    Verbosity,
    Brand,
    Ignored,
    NotModelled(&'static str),
}

use ArgKind::{None as NoArg, Required as Req};

const fn nm(c: char, arg: ArgKind, what: &'static str) -> Spec<G> {
    Spec::new(Some(c), None, arg, G::NotModelled(what))
}

/// `GLOBAL_CMD_LINE_ARGS` of netsh.c.
const GLOBAL: &[Spec<G>] = &[
    Spec::new(Some('4'), None, NoArg, G::V4),
    Spec::new(Some('6'), None, NoArg, G::V6),
    Spec::new(Some('H'), None, Req, G::Host),
    Spec::new(Some('l'), None, Req, G::Len),
    Spec::new(Some('i'), None, Req, G::Iter),
    Spec::new(Some('I'), None, Req, G::Conf),
    Spec::new(Some('f'), None, Req, G::Fmt),
    Spec::new(Some('D'), None, Req, G::Demo),
    Spec::new(Some('t'), None, Req, G::Test),
    Spec::new(Some('P'), None, Req, G::Headers),
    Spec::new(Some('T'), None, Req, G::Bind),
    Spec::new(Some('c'), None, NoArg, G::LocalCpu),
    Spec::new(Some('C'), None, NoArg, G::RemoteCpu),
    Spec::new(Some('v'), None, Req, G::Verbosity),
    Spec::new(Some('B'), None, Req, G::Brand),
    Spec::new(Some('n'), None, Req, G::Ignored),
    Spec::new(Some('p'), None, Req, G::Ignored),
    nm('a', Req, "local buffer alignment"),
    nm('A', Req, "remote buffer alignment"),
    nm('b', Req, "paced bursts (--enable-intervals)"),
    nm('d', NoArg, "debug output"),
    nm('F', Req, "fill files"),
    nm('h', NoArg, "the usage text"),
    nm('j', NoArg, "latency histograms and statistics"),
    nm('k', Req, "dirty buffers"),
    nm('K', Req, "dirty buffers"),
    nm('L', Req, "a local control address"),
    nm('N', NoArg, "tests without a control connection"),
    nm('o', Req, "local buffer offsets"),
    nm('O', Req, "remote buffer offsets"),
    nm('r', NoArg, "confidence on the result only (needs -c/-C)"),
    nm('S', NoArg, "SO_KEEPALIVE"),
    nm('s', Req, "a pause before the test"),
    nm('V', NoArg, "the version text"),
    nm('W', Req, "buffer ring widths"),
    nm('w', Req, "paced bursts (--enable-intervals)"),
    nm('y', Req, "SO_PRIORITY"),
    nm('Y', Req, "IP type of service"),
    nm('Z', Req, "a passphrase"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    V4,
    V6,
    Burst,
    NoDelay,
    Send,
    Recv,
    Rr,
    LocalBuf,
    RemoteBuf,
    NotModelled(&'static str),
}

const fn tnm(c: char, arg: ArgKind, what: &'static str) -> Spec<T> {
    Spec::new(Some(c), None, arg, T::NotModelled(what))
}

/// `OMNI_ARGS` of nettest_omni.c.
const TEST: &[Spec<T>] = &[
    Spec::new(Some('4'), None, NoArg, T::V4),
    Spec::new(Some('6'), None, NoArg, T::V6),
    Spec::new(Some('b'), None, Req, T::Burst),
    Spec::new(Some('D'), None, NoArg, T::NoDelay),
    Spec::new(Some('m'), None, Req, T::Send),
    Spec::new(Some('M'), None, Req, T::Recv),
    Spec::new(Some('r'), None, Req, T::Rr),
    Spec::new(Some('s'), None, Req, T::LocalBuf),
    Spec::new(Some('S'), None, Req, T::RemoteBuf),
    tnm('c', NoArg, "connection tests"),
    tnm('C', NoArg, "TCP_CORK"),
    tnm('d', Req, "omni directions"),
    tnm('G', Req, "TCP_MAXSEG"),
    tnm('h', NoArg, "the usage text"),
    tnm('H', Req, "a remote data address"),
    tnm('k', NoArg, "keyval output"),
    tnm('K', Req, "congestion control"),
    tnm('l', Req, "multicast TTL"),
    tnm('L', Req, "a local data address"),
    tnm('n', NoArg, "connected local sockets"),
    tnm('N', NoArg, "connected remote sockets"),
    tnm('o', NoArg, "CSV output"),
    tnm('O', NoArg, "human omni output"),
    tnm('p', Req, "client port ranges"),
    tnm('P', Req, "data ports"),
    tnm('R', Req, "routing control"),
    tnm('t', Req, "omni socket types"),
    tnm('T', Req, "omni protocols"),
    tnm('u', Req, "test UUIDs"),
    tnm('V', NoArg, "copy avoidance"),
    tnm('w', Req, "paced bursts"),
    tnm('W', Req, "buffer ring widths"),
];

fn bad(option: &str, reason: String) -> OptionError {
    OptionError::BadValue {
        program: PROG,
        option: option.to_string(),
        reason,
    }
}

/// netlib.c `convert()`, strictly: `[-]digits[KMGkmg]`.
pub fn convert(option: &str, value: &str) -> Result<i64, OptionError> {
    let err = || {
        bad(
            option,
            format!("expected an integer with an optional K/M/G/k/m/g suffix, got '{value}'"),
        )
    };
    let (body, mult): (&str, i64) = match value.chars().last() {
        Some('K') => (&value[..value.len() - 1], 1 << 10),
        Some('M') => (&value[..value.len() - 1], 1 << 20),
        Some('G') => (&value[..value.len() - 1], 1 << 30),
        Some('k') => (&value[..value.len() - 1], 1_000),
        Some('m') => (&value[..value.len() - 1], 1_000_000),
        Some('g') => (&value[..value.len() - 1], 1_000_000_000),
        _ => (value, 1),
    };
    let n = cmdline::int_in(
        PROG,
        option,
        body,
        -(u32::MAX as i64),
        u32::MAX as i64,
        "an integer",
    )
    .map_err(|_| err())?;
    n.checked_mul(mult)
        .filter(|v| v.unsigned_abs() <= u32::MAX as u64)
        .ok_or_else(err)
}

/// A size (`-r`, `-m`, `-M`, `-s`, `-S`): a non-negative `convert()` value.
fn size(option: &str, value: &str) -> Result<u32, OptionError> {
    let v = convert(option, value)?;
    if v < 0 {
        return Err(bad(
            option,
            format!("a size cannot be negative, got '{value}'"),
        ));
    }
    Ok(v as u32)
}

/// netsh.c `break_args`: "a,b" → (a, b); "a" → (a, a).
fn break_args(s: &str) -> (&str, &str) {
    match s.split_once(',') {
        Some((a, b)) => (a, b),
        None => (s, s),
    }
}

/// netsh.c `break_args_explicit`: "a,b" → (a, b); "a" → (a, "").
fn break_args_explicit(s: &str) -> (&str, &str) {
    s.split_once(',').unwrap_or((s, ""))
}

/// Loopback host names the model accepts for `-H`, with their family.
fn loopback(host: &str) -> Option<Family> {
    match host {
        "localhost" | "127.0.0.1" | "localhost4" | "localhost.localdomain" => Some(Family::Inet),
        "::1" | "localhost6" | "ip6-localhost" | "ip6-loopback" => Some(Family::Inet6),
        _ => None,
    }
}

fn parse_family(option: &str, s: &str) -> Result<Option<Family>, OptionError> {
    match s.to_ascii_lowercase().as_str() {
        "inet" | "4" | "af_inet" | "ipv4" => Ok(Some(Family::Inet)),
        "inet6" | "6" | "af_inet6" | "ipv6" => Ok(Some(Family::Inet6)),
        "unspec" | "0" | "af_unspec" => Ok(None),
        _ => Err(bad(
            option,
            format!("unknown address family '{s}' (inet, inet6, unspec)"),
        )),
    }
}

/// Parses the words after `netperf`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let split = args.iter().position(|a| a == "--");
    let (global, test) = match split {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &args[args.len()..]),
    };
    let mut o = Options {
        test: Test::TcpStream,
        family: Family::Inet,
        host: String::new(),
        length: Length::Secs(10),
        iteration_max: 1,
        iteration_min: 1,
        confidence_level: 0,
        interval: 0.0,
        fmt: '?',
        demo: None,
        print_headers: true,
        verbosity: 1,
        brand: None,
        local_cpu: None,
        remote_cpu: None,
        cpu_binding: false,
        req_size: 1,
        rsp_size: 1,
        send_size: None,
        remote_recv_size: None,
        lss_req: None,
        lsr_req: None,
        rss_req: None,
        rsr_req: None,
        nodelay: false,
        first_burst: 0,
        warnings: Vec::new(),
    };
    let mut family: Option<Family> = None;
    let mut host_family: Option<Family> = None;
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut sc = Scanner::new(PROG, GLOBAL, style, global);
    while let Some(f) = sc.next_option() {
        let f = f?;
        let v = f.value.clone().unwrap_or_default();
        let opt = f.spelled.as_str();
        match f.key {
            G::V4 => family = Some(Family::Inet),
            G::V6 => family = Some(Family::Inet6),
            G::Host => {
                let (h, fam) = break_args_explicit(&v);
                if !h.is_empty() {
                    if loopback(h).is_none() {
                        return Err(OptionError::NotModelled {
                            program: PROG,
                            option: format!("-H {h}"),
                            detail: "only loopback (localhost, 127.0.0.1, ::1): netserver runs \
                                     on the simulated machine"
                                .to_string(),
                        });
                    }
                    o.host = h.to_string();
                }
                if !fam.is_empty() {
                    host_family = parse_family(opt, fam)?;
                }
            }
            G::Len => {
                let n = convert(opt, &v)?;
                o.length = match n {
                    0 => {
                        return Err(OptionError::NotModelled {
                            program: PROG,
                            option: format!("-l {v}"),
                            detail: "a test that runs until interrupted".to_string(),
                        })
                    }
                    n if n > 0 => {
                        cmdline::check_run_secs(PROG, opt, &v, n as u128)?;
                        Length::Secs(n as u32)
                    }
                    n => Length::Units(n.unsigned_abs()),
                };
            }
            G::Iter => {
                let (a, b) = break_args(&v);
                if !a.is_empty() {
                    o.iteration_max = size(opt, a)?;
                }
                if !b.is_empty() {
                    o.iteration_min = size(opt, b)?;
                }
                // netsh.c: max ≥ min, both clamped to 3..=30
                if o.iteration_max < o.iteration_min {
                    o.iteration_max = o.iteration_min;
                }
                o.iteration_max = o.iteration_max.clamp(3, 30);
                o.iteration_min = o.iteration_min.clamp(3, 30);
                if o.confidence_level == 0 {
                    o.confidence_level = 99;
                }
                if o.interval == 0.0 {
                    o.interval = 0.05;
                }
            }
            G::Conf => {
                let (a, b) = break_args(&v);
                if !a.is_empty() {
                    let l = convert(opt, a)?;
                    if l != 95 && l != 99 {
                        return Err(bad(
                            opt,
                            format!("only 95% and 99% confidence levels are supported, got '{a}'"),
                        ));
                    }
                    o.confidence_level = l as u32;
                }
                if !b.is_empty() {
                    // strtod(arg2)/100; `-I 95` alone makes the width 95 % (break_args)
                    let w: f64 = b
                        .parse()
                        .ok()
                        .filter(|w: &f64| w.is_finite() && *w > 0.0)
                        .ok_or_else(|| {
                            bad(opt, format!("expected a positive width in %, got '{b}'"))
                        })?;
                    o.interval = w / 100.0;
                }
                if o.iteration_min == 1 {
                    o.iteration_min = 3;
                }
                if o.iteration_max == 1 {
                    o.iteration_max = 10;
                }
                if o.interval == 0.0 {
                    o.interval = 0.05;
                }
            }
            G::Fmt => {
                let c = v.chars().next().unwrap_or('?');
                if !"KMGkmgx".contains(c) {
                    return Err(bad(
                        opt,
                        format!("unknown units '{v}' (K, M, G, k, m, g or x)"),
                    ));
                }
                o.fmt = c;
            }
            G::Demo => {
                let (a, b) = break_args_explicit(&v);
                let mut d = Demo {
                    interval_us: 1_000_000.0,
                    always: false,
                    units: 0.0,
                };
                if !a.is_empty() {
                    let s: f64 =
                        a.parse()
                            .ok()
                            .filter(|s: &f64| s.is_finite())
                            .ok_or_else(|| {
                                bad(opt, format!("expected an interval in seconds, got '{a}'"))
                            })?;
                    if s == 0.0 {
                        return Err(bad(opt, "the interval must not be 0".to_string()));
                    }
                    d.interval_us = s.abs() * 1_000_000.0;
                    d.always = s < 0.0;
                }
                if !b.is_empty() {
                    d.units = size(opt, b)? as f64;
                }
                o.demo = Some(d);
            }
            G::Test => {
                let name = v.to_ascii_uppercase();
                o.test = match name.as_str() {
                    "TCP_RR" => Test::TcpRr,
                    "UDP_RR" => Test::UdpRr,
                    "TCP_STREAM" => Test::TcpStream,
                    "UDP_STREAM" => Test::UdpStream,
                    n if OTHER_TESTS.contains(&n) => {
                        return Err(OptionError::NotModelled {
                            program: PROG,
                            option: format!("-t {v}"),
                            detail: "the model runs TCP_RR, UDP_RR, TCP_STREAM and UDP_STREAM"
                                .to_string(),
                        })
                    }
                    _ => return Err(bad(opt, format!("unrecognized test name '{v}'"))),
                };
            }
            G::Headers => o.print_headers = convert(opt, &v)? != 0,
            G::Bind => {
                let (a, b) = break_args(&v);
                if !a.is_empty() {
                    o.local_cpu = Some(size(opt, a)?);
                }
                if !b.is_empty() {
                    o.remote_cpu = Some(size(opt, b)?);
                }
                o.cpu_binding = true;
            }
            G::LocalCpu | G::RemoteCpu => {
                // an optional CPU rate may follow as the next word
                sc.take_next_if(|w| w.as_bytes().first().is_some_and(|b| b.is_ascii_digit()));
                o.warnings.push(format!(
                    "netperf: {opt}: CPU utilisation is not measured by the model; ignored"
                ));
            }
            G::Verbosity => {
                let n = convert(opt, &v)?;
                if n < 0 {
                    return Err(bad(opt, format!("expected 0, 1 or 2, got '{v}'")));
                }
                if n > 1 {
                    o.warnings.push(format!(
                        "netperf: {opt} {v}: the extra detail of verbosity > 1 is not \
                         modelled; printed as -v 1"
                    ));
                }
                o.verbosity = n.min(1) as u32;
            }
            G::Brand => o.brand = Some(v),
            G::Ignored => {}
            G::NotModelled(what) => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: opt.to_string(),
                    detail: what.to_string(),
                })
            }
        }
    }
    if let Some(p) = sc.positionals().first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: p.clone(),
        });
    }
    let mut sc = Scanner::new(PROG, TEST, style, test);
    while let Some(f) = sc.next_option() {
        let f = f?;
        let v = f.value.clone().unwrap_or_default();
        let opt = f.spelled.as_str();
        match f.key {
            T::V4 => family = Some(Family::Inet),
            T::V6 => family = Some(Family::Inet6),
            T::Burst => {
                let n = cmdline::int_in(PROG, opt, &v, -100_000, 100_000, "an integer")?;
                if n < 0 {
                    return Err(OptionError::NotModelled {
                        program: PROG,
                        option: format!("-b {v}"),
                        detail: "a negative first burst (no congestion-window ramp)".to_string(),
                    });
                }
                o.first_burst = n as u32;
            }
            T::NoDelay => o.nodelay = true,
            T::Send => {
                let (a, b) = break_args_explicit(&v);
                if !a.is_empty() {
                    o.send_size = Some(size(opt, a)?);
                }
                if !b.is_empty() {
                    return Err(OptionError::NotModelled {
                        program: PROG,
                        option: format!("-m {v}"),
                        detail: "a remote send size (MAERTS direction)".to_string(),
                    });
                }
            }
            T::Recv => {
                let (a, b) = break_args_explicit(&v);
                if !a.is_empty() {
                    o.remote_recv_size = Some(size(opt, a)?);
                }
                if !b.is_empty() {
                    return Err(OptionError::NotModelled {
                        program: PROG,
                        option: format!("-M {v}"),
                        detail: "a local receive size (MAERTS direction)".to_string(),
                    });
                }
            }
            T::Rr => {
                let (a, b) = break_args(&v);
                if !a.is_empty() {
                    o.req_size = size(opt, a)?;
                }
                if !b.is_empty() {
                    o.rsp_size = size(opt, b)?;
                }
            }
            T::LocalBuf | T::RemoteBuf => {
                let (a, b) = break_args(&v);
                let a = if a.is_empty() {
                    None
                } else {
                    Some(size(opt, a)?)
                };
                let b = if b.is_empty() {
                    None
                } else {
                    Some(size(opt, b)?)
                };
                if f.key == T::LocalBuf {
                    o.lss_req = a.or(o.lss_req);
                    o.lsr_req = b.or(o.lsr_req);
                } else {
                    o.rss_req = a.or(o.rss_req);
                    o.rsr_req = b.or(o.rsr_req);
                }
            }
            T::NotModelled(what) => {
                return Err(OptionError::NotModelled {
                    program: PROG,
                    option: format!("-- {opt}"),
                    detail: what.to_string(),
                })
            }
        }
    }
    if let Some(p) = sc.positionals().first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: p.clone(),
        });
    }
    // the family: -4/-6, else the one named with -H, else the host's
    o.family = family
        .or(host_family)
        .or_else(|| loopback(&o.host))
        .unwrap_or(Family::Inet);
    if o.host.is_empty() {
        o.host = match o.family {
            Family::Inet => "localhost",
            Family::Inet6 => "::1",
        }
        .to_string();
    }
    if o.test.is_rr() && (o.req_size == 0 || o.rsp_size == 0) {
        return Err(bad(
            "-r",
            format!(
                "request and response sizes must be > 0 for {}, got {},{}",
                o.test.name(),
                o.req_size,
                o.rsp_size
            ),
        ));
    }
    if o.send_size == Some(0) || o.remote_recv_size == Some(0) {
        return Err(bad("-m/-M", "a message size must be > 0".to_string()));
    }
    if o.test == Test::UdpStream && o.send_size.is_some_and(|m| m > UDP_LENGTH_MAX) {
        return Err(bad(
            "-m",
            format!(
                "a UDP datagram carries at most {UDP_LENGTH_MAX} bytes, got {}",
                o.send_size.unwrap_or_default()
            ),
        ));
    }
    if o.first_burst > 0 && !o.test.is_rr() {
        o.warnings.push(format!(
            "netperf: -b {}: the first burst applies to request/response tests only; ignored",
            o.first_burst
        ));
        o.first_burst = 0;
    }
    if o.nodelay && o.test.is_udp() {
        o.warnings.push(
            "netperf: -- -D: TCP_NODELAY on a UDP socket fails (netperf prints an errno); \
             ignored"
                .to_string(),
        );
        o.nodelay = false;
    }
    if let Length::Secs(secs) = o.length {
        // every iteration runs the whole length
        let total = secs as u128 * o.iteration_max.max(1) as u128;
        cmdline::check_run_secs(
            PROG,
            "-l",
            &format!("{secs} x {} iterations", o.iteration_max.max(1)),
            total,
        )?;
    }
    // scan_omni_args: '?' → 'x' for RR, 'm' otherwise; 'x' makes no sense without RR → 'm'
    o.fmt = match o.fmt {
        '?' if o.test.is_rr() => 'x',
        '?' | 'x' if !o.test.is_rr() => 'm',
        c => c,
    };
    Ok(o)
}

/// nettest_omni.c `UDP_LENGTH_MAX`: 0xFFFF − 28.
pub const UDP_LENGTH_MAX: u32 = 0xFFFF - 28;

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Options, OptionError> {
        let w: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&w)
    }

    #[test]
    fn mmtests_rr_line() {
        // shellpack netperf-bench: netperf -4 -i 3,3 -I 95,5 -f k -D 1 -t TCP_RR -H 127.0.0.1
        let o = p("-4 -i 3,3 -I 95,5 -f k -D 1 -t TCP_RR -H 127.0.0.1").unwrap();
        assert_eq!(o.test, Test::TcpRr);
        assert_eq!((o.iteration_max, o.iteration_min), (3, 3));
        assert_eq!(o.confidence_level, 95);
        assert_eq!(o.interval, 0.05);
        assert_eq!(o.fmt, 'k');
        assert_eq!(o.demo.unwrap().interval_us, 1_000_000.0);
        assert_eq!((o.req_size, o.rsp_size), (1, 1));
        assert_eq!(o.length, Length::Secs(10));
        assert_eq!((o.host.as_str(), o.family), ("127.0.0.1", Family::Inet));
        assert!(o.print_headers && o.confidence_wanted());
    }

    #[test]
    fn defaults_and_units() {
        let o = p("").unwrap();
        // netperf's default test is TCP_STREAM in 10^6 bits/s, to localhost
        assert_eq!(
            (o.test, o.fmt, o.host.as_str()),
            (Test::TcpStream, 'm', "localhost")
        );
        assert_eq!((o.iteration_max, o.iteration_min), (1, 1));
        assert!(!o.confidence_wanted());
        // RR defaults to transactions; -f x on a stream test falls back to m
        assert_eq!(p("-t udp_rr").unwrap().fmt, 'x');
        assert_eq!(p("-t UDP_STREAM -f x").unwrap().fmt, 'm');
        assert_eq!(p("-6 -t TCP_RR").unwrap().host, "::1");
    }

    #[test]
    fn pairs_follow_break_args() {
        let o = p("-t TCP_RR -- -r 64").unwrap();
        assert_eq!((o.req_size, o.rsp_size), (64, 64));
        let o = p("-t TCP_RR -- -r 64,").unwrap();
        assert_eq!((o.req_size, o.rsp_size), (64, 1));
        let o = p("-t TCP_RR -- -r ,2K").unwrap();
        assert_eq!((o.req_size, o.rsp_size), (1, 2048));
        let o = p("-T 1 -t TCP_RR").unwrap();
        assert_eq!((o.local_cpu, o.remote_cpu), (Some(1), Some(1)));
        let o = p("-T ,3 -t TCP_RR").unwrap();
        assert_eq!((o.local_cpu, o.remote_cpu), (None, Some(3)));
        // -i 5: both 5; -i 1,1 is raised to 3 (netsh.c); -i 40 capped at 30
        assert_eq!(p("-i 5").unwrap().iteration_min, 5);
        assert_eq!(p("-i 1,1").unwrap().iteration_max, 3);
        assert_eq!(p("-i 40,2").unwrap().iteration_max, 30);
        // -I alone: min 3, max 10; the width of "-I 95" is 95 % (break_args copies)
        let o = p("-I 95").unwrap();
        assert_eq!(
            (o.iteration_max, o.iteration_min, o.interval),
            (10, 3, 0.95)
        );
        // -m sets the local send size only; -M the remote receive size
        let o = p("-t TCP_STREAM -- -m 1024 -M 2k").unwrap();
        assert_eq!((o.send_size, o.remote_recv_size), (Some(1024), Some(2000)));
    }

    #[test]
    fn length_negative_is_a_count() {
        assert_eq!(p("-l -1000 -t TCP_RR").unwrap().length, Length::Units(1000));
        assert_eq!(p("-l 2").unwrap().length, Length::Secs(2));
    }

    #[test]
    fn errors_name_the_option_and_value() {
        for (line, want) in [
            ("-H 10.0.0.1", "-H 10.0.0.1"),
            ("-l ten", "-l: expected an integer"),
            ("-l 0", "-l 0"),
            ("-I 90,5", "-I: only 95% and 99%"),
            ("-f q", "-f: unknown units 'q'"),
            ("-t TCP_CRR", "-t TCP_CRR: not modelled"),
            ("-t FOO", "-t: unrecognized test name 'FOO'"),
            ("-t TCP_RR -- -r 0", "-r: request and response sizes"),
            ("-t TCP_RR -- -r 1x", "-r: expected an integer"),
            ("-t TCP_RR -- -k", "-- -k: not modelled"),
            ("-q", "unknown option '-q'"),
            ("-N", "-N: not modelled"),
            ("-D 0", "-D: the interval must not be 0"),
            (
                "-t UDP_STREAM -- -m 70000",
                "-m: a UDP datagram carries at most 65507",
            ),
            ("-t TCP_RR extra", "unexpected argument 'extra'"),
            (
                "-l 4000000000 -i 3",
                "-l: '4000000000 x 3 iterations' is 12000000000 s",
            ),
        ] {
            let e = p(line).unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn cpu_measurement_is_ignored_with_a_warning() {
        let o = p("-c -C 100 -t TCP_RR").unwrap();
        assert_eq!(o.warnings.len(), 2);
        assert_eq!(o.test, Test::TcpRr);
    }
}
