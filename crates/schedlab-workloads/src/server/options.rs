//! The `server-model` command line (netbench.md §17.2). No real program defines it; the
//! option names are the parameters of §17.2 with `-` for `_`.
//!
//! | option | values (default) |
//! |---|---|
//! | `--arch` | `per_conn`, `epoll_per_worker` (default), `epoll_shared`, `dispatcher` |
//! | `--transport` | `tcp` (default), `udp`, `unix` |
//! | `--workers W` | number of CPUs (`per_conn`: one worker per connection, W unused) |
//! | `--worker-mm` | `thread` (default), `process` |
//! | `--accept` | `blocking`, `epoll`, `epoll_exclusive`, `reuseport` (default per arch, below) |
//! | `--conn` | `persistent` (default), `per_request` |
//! | `--clients M` | 2 × CPUs |
//! | `--req-size B` / `--rsp-size B` | 100 / 1000 |
//! | `--service` | `const:10us` (default), `exp:MEAN`, `lognormal:MEDIAN,SIGMA` |
//! | `--service-lock H` | none; H of the service held under one shared mutex |
//! | `--think` | `0` (default), `const:T`, `exp:MEAN` |
//! | `--think-mode` | `sleep` (default), `busy` |
//! | `--mode` | `closed` (default), `open:RATE` (Poisson, RATE requests/s per client) |
//! | `--notify` | `pipe` (default), `eventfd` (dispatcher's hand-off notification) |
//! | `--epoll-max N` | 64 |
//! | `--runtime S` | 30 s (a bare number is seconds; `500ms` etc. accepted) |
//! | `--worker-policy`, `--worker-nice`, `--worker-cpus`, `--worker-slice`, `--worker-cgroup` | the line's placement |
//! | `--client-policy`, `--client-nice`, `--client-cpus`, `--client-slice`, `--client-cgroup` | the line's placement |
//!
//! The per-side options (§17.2: policy, nice, CPUs, slice and cgroup separately for clients
//! and workers) take the values of the placement tokens `policy=`, `nice=`, `cpus=`,
//! `slice=` and `cgroup=` (`batch`, `fifo:50`, `0-3`, `3ms`, `/srv`…); they apply to the
//! server process (all its tasks) or to the client process, over the line's own placement.
//!
//! Default accept mode per arch: `per_conn` `blocking` (one acceptor thread), `epoll_per_worker`
//! `epoll_exclusive` (nginx ≥ 1.11.3), `epoll_shared` `epoll` (the listener in the shared
//! instance), `dispatcher` `epoll` (the dispatcher's own instance). Combinations that have no
//! meaning are refused (exit 2) by [`Options::check`].

use crate::cmdline::{self, ArgKind, OptionError, Scanner, Spec, Style};
use schedlab_platform::CpuMask;
use schedlab_sched::sched::Policy;

pub(crate) const PROG: &str = "server-model";

/// Largest UDP payload on IPv4 (65 535 − 8 − 20).
pub const MAX_UDP_PAYLOAD: u32 = 65_507;
/// Largest request or response over a stream transport schedlab accepts (16 MiB).
pub const MAX_STREAM_MSG: u32 = 16 << 20;
/// Largest `--service-lock`/`--service`/`--think` mean accepted: 1 hour.
const MAX_TIME_NS: u64 = 3_600_000_000_000;
/// Largest lognormal shape σ (the fixed-point draw is exact for σ ≤ 3).
pub const MAX_SIGMA: f64 = 3.0;

/// Server structure (§17.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    PerConn,
    EpollPerWorker,
    EpollShared,
    Dispatcher,
}

impl Arch {
    pub fn name(self) -> &'static str {
        match self {
            Arch::PerConn => "per_conn",
            Arch::EpollPerWorker => "epoll_per_worker",
            Arch::EpollShared => "epoll_shared",
            Arch::Dispatcher => "dispatcher",
        }
    }
    /// The accept mode used when `--accept` is not given.
    pub fn default_accept(self) -> Accept {
        match self {
            Arch::PerConn => Accept::Blocking,
            Arch::EpollPerWorker => Accept::EpollExclusive,
            Arch::EpollShared | Arch::Dispatcher => Accept::Epoll,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
    Unix,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
            Transport::Unix => "unix",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerMm {
    Thread,
    Process,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accept {
    Blocking,
    Epoll,
    EpollExclusive,
    Reuseport,
}

impl Accept {
    pub fn name(self) -> &'static str {
        match self {
            Accept::Blocking => "blocking",
            Accept::Epoll => "epoll",
            Accept::EpollExclusive => "epoll_exclusive",
            Accept::Reuseport => "reuseport",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnMode {
    Persistent,
    PerRequest,
}

impl ConnMode {
    pub fn name(self) -> &'static str {
        match self {
            ConnMode::Persistent => "persistent",
            ConnMode::PerRequest => "per_request",
        }
    }
}

/// A distribution of a time, in ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Const(u64),
    /// Exponential with this mean.
    Exp(u64),
    /// Log-normal with this median and shape σ.
    Lognormal {
        median: u64,
        sigma: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThinkMode {
    /// `nanosleep` (hrtimer; 50 µs slack for fair tasks).
    Sleep,
    /// `run_busy`: CPU work.
    Busy,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoopMode {
    /// One outstanding request per client.
    Closed,
    /// Poisson arrivals at this many requests per second per client.
    Open { rate: f64 },
}

/// How the dispatcher tells a worker that a connection is queued for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notify {
    Pipe,
    Eventfd,
}

/// Scheduling attributes of one side (the server's tasks or the clients), over the line's
/// placement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Side {
    pub policy: Option<Policy>,
    pub rt_priority: Option<u32>,
    pub nice: Option<i32>,
    pub cpus: Option<CpuMask>,
    pub slice_ns: Option<u64>,
    pub cgroup: Option<String>,
}

/// A parsed `server-model` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub arch: Arch,
    pub transport: Transport,
    /// `None` = the number of CPUs.
    pub workers: Option<u32>,
    pub worker_mm: WorkerMm,
    /// `None` = [`Arch::default_accept`].
    pub accept: Option<Accept>,
    pub conn: ConnMode,
    /// `None` = 2 × the number of CPUs.
    pub clients: Option<u32>,
    pub req_size: u32,
    pub rsp_size: u32,
    pub service: Dist,
    /// Hold time under the shared service mutex (ns); `None` = no lock.
    pub service_lock: Option<u64>,
    /// `None` = no think time.
    pub think: Option<Dist>,
    pub think_mode: ThinkMode,
    pub mode: LoopMode,
    pub notify: Notify,
    /// `maxevents` per `epoll_wait`; `None` = 64, or 1 for `epoll_shared` (§17.3).
    pub epoll_max: Option<u32>,
    pub runtime_ns: u64,
    pub worker_side: Side,
    pub client_side: Side,
    /// Notes for the user (options without effect), one line each.
    pub warnings: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            arch: Arch::EpollPerWorker,
            transport: Transport::Tcp,
            workers: None,
            worker_mm: WorkerMm::Thread,
            accept: None,
            conn: ConnMode::Persistent,
            clients: None,
            req_size: 100,
            rsp_size: 1000,
            service: Dist::Const(10_000),
            service_lock: None,
            think: None,
            think_mode: ThinkMode::Sleep,
            mode: LoopMode::Closed,
            notify: Notify::Pipe,
            epoll_max: None,
            runtime_ns: 30_000_000_000,
            worker_side: Side::default(),
            client_side: Side::default(),
            warnings: Vec::new(),
        }
    }
}

impl Options {
    pub fn accept_mode(&self) -> Accept {
        self.accept.unwrap_or(self.arch.default_accept())
    }
    /// `maxevents` of the workers' `epoll_wait`: as given, else 1 for `epoll_shared` (one
    /// connection per wake-up, §17.3) and 64 otherwise (§17.2).
    pub fn epoll_max_n(&self) -> u32 {
        match (self.epoll_max, self.arch) {
            (Some(n), _) => n,
            (None, Arch::EpollShared) => 1,
            (None, _) => 64,
        }
    }
    pub fn workers_for(&self, ncpus: u32) -> u32 {
        self.workers.unwrap_or(ncpus.max(1))
    }
    pub fn clients_for(&self, ncpus: u32) -> u32 {
        self.clients.unwrap_or(2 * ncpus.max(1))
    }
    /// The runtime as printed: whole seconds as an integer, otherwise with the digits needed.
    pub fn runtime_text(&self) -> String {
        let s = self.runtime_ns / 1_000_000_000;
        let frac = self.runtime_ns % 1_000_000_000;
        if frac == 0 {
            return s.to_string();
        }
        let digits = format!("{frac:09}");
        format!("{s}.{}", digits.trim_end_matches('0'))
    }

    /// Combinations that have no meaning in §17's model (exit 2, naming the options).
    fn check(&self, accept_given: bool) -> Result<(), OptionError> {
        let invalid = |message: String| OptionError::Invalid {
            program: PROG,
            message,
        };
        let arch = self.arch.name();
        let accept = self.accept_mode();
        match self.transport {
            Transport::Tcp => {}
            Transport::Udp | Transport::Unix => {
                let t = self.transport.name();
                if self.conn == ConnMode::PerRequest {
                    return Err(invalid(format!(
                        "--conn per_request needs connections; --transport {t} has none to set \
                         up per request (use tcp)"
                    )));
                }
                if accept_given {
                    return Err(invalid(format!(
                        "--accept {}: --transport {t} has no listening socket to accept from",
                        accept.name()
                    )));
                }
                if self.arch == Arch::Dispatcher {
                    return Err(invalid(format!(
                        "--arch dispatcher hands accepted connections to workers; --transport \
                         {t} has no connections to accept (use tcp)"
                    )));
                }
            }
        }
        if self.transport == Transport::Tcp {
            let ok = match self.arch {
                Arch::PerConn => accept == Accept::Blocking,
                Arch::EpollPerWorker => accept != Accept::Blocking,
                Arch::EpollShared => accept == Accept::Epoll,
                Arch::Dispatcher => matches!(accept, Accept::Epoll | Accept::Blocking),
            };
            if !ok {
                let allowed = match self.arch {
                    Arch::PerConn => "blocking (one acceptor thread)",
                    Arch::EpollPerWorker => "epoll, epoll_exclusive or reuseport",
                    Arch::EpollShared => "epoll (the listener in the shared instance)",
                    Arch::Dispatcher => "epoll or blocking (the dispatcher accepts)",
                };
                return Err(invalid(format!(
                    "--accept {} does not apply to --arch {arch}; it takes {allowed}",
                    accept.name()
                )));
            }
        }
        let max = match self.transport {
            Transport::Udp => MAX_UDP_PAYLOAD,
            _ => MAX_STREAM_MSG,
        };
        for (opt, v) in [("--req-size", self.req_size), ("--rsp-size", self.rsp_size)] {
            if v > max {
                return Err(OptionError::BadValue {
                    program: PROG,
                    option: opt.to_string(),
                    reason: format!(
                        "'{v}' is more than the {max} bytes --transport {} allows",
                        self.transport.name()
                    ),
                });
            }
        }
        if let (LoopMode::Open { .. }, Some(_)) = (self.mode, self.think) {
            return Err(invalid(
                "--think applies to the closed loop; --mode open draws its own arrivals"
                    .to_string(),
            ));
        }
        if self.notify == Notify::Eventfd && self.arch != Arch::Dispatcher {
            return Err(invalid(format!(
                "--notify eventfd is the dispatcher's hand-off; --arch {arch} has none"
            )));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Arch,
    Transport,
    Workers,
    WorkerMm,
    Accept,
    Conn,
    Clients,
    ReqSize,
    RspSize,
    Service,
    ServiceLock,
    Think,
    ThinkMode,
    Mode,
    Notify,
    EpollMax,
    Runtime,
    WorkerPolicy,
    WorkerNice,
    WorkerCpus,
    WorkerSlice,
    WorkerCgroup,
    ClientPolicy,
    ClientNice,
    ClientCpus,
    ClientSlice,
    ClientCgroup,
}

const fn long(name: &'static str, key: Key) -> Spec<Key> {
    Spec::new(None, Some(name), ArgKind::Required, key)
}

const SPECS: &[Spec<Key>] = &[
    long("arch", Key::Arch),
    long("transport", Key::Transport),
    long("workers", Key::Workers),
    long("worker-mm", Key::WorkerMm),
    long("accept", Key::Accept),
    long("conn", Key::Conn),
    long("clients", Key::Clients),
    long("req-size", Key::ReqSize),
    long("rsp-size", Key::RspSize),
    long("service", Key::Service),
    long("service-lock", Key::ServiceLock),
    long("think", Key::Think),
    long("think-mode", Key::ThinkMode),
    long("mode", Key::Mode),
    long("notify", Key::Notify),
    long("epoll-max", Key::EpollMax),
    long("runtime", Key::Runtime),
    long("worker-policy", Key::WorkerPolicy),
    long("worker-nice", Key::WorkerNice),
    long("worker-cpus", Key::WorkerCpus),
    long("worker-slice", Key::WorkerSlice),
    long("worker-cgroup", Key::WorkerCgroup),
    long("client-policy", Key::ClientPolicy),
    long("client-nice", Key::ClientNice),
    long("client-cpus", Key::ClientCpus),
    long("client-slice", Key::ClientSlice),
    long("client-cgroup", Key::ClientCgroup),
];

/// Reads a per-side option through the placement token it mirrors (`policy=V`, `nice=V`,
/// `cpus=V`) and sets it on `side`.
fn side_option(opt: &str, token: &str, value: &str, side: &mut Side) -> Result<(), OptionError> {
    let line = format!("{token}={value} server-model");
    let (p, _) = crate::workload::parse_placement(&line).map_err(|e| {
        let msg = match e {
            crate::workload::WorkloadError::Placement { message, .. } => message,
            other => other.to_string(),
        };
        bad(opt, format!("'{value}': {msg}"))
    })?;
    match token {
        "policy" => {
            if p.policy == Some(Policy::Deadline) {
                return Err(bad(
                    opt,
                    format!(
                        "'{value}': the model's processes create their tasks with clone, \
                         which a SCHED_DEADLINE task may not do"
                    ),
                ));
            }
            side.policy = p.policy;
            side.rt_priority = p.rt_priority;
        }
        "nice" => side.nice = p.nice,
        "slice" => side.slice_ns = p.slice_ns,
        "cgroup" => side.cgroup = p.cgroup,
        _ => side.cpus = p.cpus,
    }
    Ok(())
}

fn bad(opt: &str, reason: String) -> OptionError {
    OptionError::BadValue {
        program: PROG,
        option: opt.to_string(),
        reason,
    }
}

/// One of `choices` (word, value), or an error listing them.
fn choice<T: Copy>(opt: &str, value: &str, choices: &[(&str, T)]) -> Result<T, OptionError> {
    choices
        .iter()
        .find(|(w, _)| *w == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
            bad(
                opt,
                format!("expected one of {}, got '{value}'", names.join(", ")),
            )
        })
}

/// A duration with a unit (`10us`, `1.5ms`); a bare number is refused here because these
/// times are micro- to milliseconds and a bare number would be seconds.
fn time(opt: &str, value: &str, what: &str, allow_zero: bool) -> Result<u64, OptionError> {
    let err = || {
        bad(
            opt,
            format!("expected {what} with a unit (e.g. 10us, 1.5ms), got '{value}'"),
        )
    };
    if value.trim().is_empty() || value.trim().ends_with(|c: char| c.is_ascii_digit()) {
        return Err(err());
    }
    let ns = schedlab_engine::parse_duration(value).map_err(|_| err())?.0;
    if ns > MAX_TIME_NS {
        return Err(bad(opt, format!("'{value}' is more than 1 hour")));
    }
    if ns == 0 && !allow_zero {
        return Err(bad(opt, format!("'{value}' must be more than 0")));
    }
    Ok(ns)
}

/// `const:T`, `exp:MEAN` or `lognormal:MEDIAN,SIGMA`.
fn dist(opt: &str, value: &str) -> Result<Dist, OptionError> {
    let Some((kind, arg)) = value.split_once(':') else {
        return Err(bad(
            opt,
            format!("expected const:T, exp:MEAN or lognormal:MEDIAN,SIGMA, got '{value}'"),
        ));
    };
    match kind {
        "const" => Ok(Dist::Const(time(opt, arg, "a time", true)?)),
        "exp" => Ok(Dist::Exp(time(opt, arg, "a mean", false)?)),
        "lognormal" => {
            let Some((m, s)) = arg.split_once(',') else {
                return Err(bad(
                    opt,
                    format!(
                        "expected lognormal:MEDIAN,SIGMA (e.g. lognormal:3us,0.5), got '{value}'"
                    ),
                ));
            };
            let median = time(opt, m, "a median", false)?;
            let sigma: f64 = s
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && (0.0..=MAX_SIGMA).contains(x))
                .ok_or_else(|| {
                    bad(
                        opt,
                        format!("sigma must be a number in 0..={MAX_SIGMA}, got '{s}'"),
                    )
                })?;
            Ok(Dist::Lognormal { median, sigma })
        }
        _ => Err(bad(
            opt,
            format!("unknown distribution '{kind}' in '{value}' (const, exp, lognormal)"),
        )),
    }
}

/// Parses the words after `server-model`.
pub fn parse(args: &[String]) -> Result<Options, OptionError> {
    let style = Style {
        abbreviations: false,
        negation: false,
    };
    let mut o = Options::default();
    let mut sc = Scanner::new(PROG, SPECS, style, args);
    let mut accept_given = false;
    while let Some(found) = sc.next_option() {
        let found = found?;
        let value = cmdline::required(&found).to_string();
        let opt = found.spelled.clone();
        let v = value.as_str();
        match found.key {
            Key::Arch => {
                o.arch = choice(
                    &opt,
                    v,
                    &[
                        ("per_conn", Arch::PerConn),
                        ("epoll_per_worker", Arch::EpollPerWorker),
                        ("epoll_shared", Arch::EpollShared),
                        ("dispatcher", Arch::Dispatcher),
                    ],
                )?
            }
            Key::Transport => {
                o.transport = choice(
                    &opt,
                    v,
                    &[
                        ("tcp", Transport::Tcp),
                        ("udp", Transport::Udp),
                        ("unix", Transport::Unix),
                    ],
                )?
            }
            Key::Workers => o.workers = Some(cmdline::positive_u32(PROG, &opt, v)?),
            Key::WorkerMm => {
                o.worker_mm = choice(
                    &opt,
                    v,
                    &[("thread", WorkerMm::Thread), ("process", WorkerMm::Process)],
                )?
            }
            Key::Accept => {
                accept_given = true;
                o.accept = Some(choice(
                    &opt,
                    v,
                    &[
                        ("blocking", Accept::Blocking),
                        ("epoll", Accept::Epoll),
                        ("epoll_exclusive", Accept::EpollExclusive),
                        ("reuseport", Accept::Reuseport),
                    ],
                )?)
            }
            Key::Conn => {
                o.conn = choice(
                    &opt,
                    v,
                    &[
                        ("persistent", ConnMode::Persistent),
                        ("per_request", ConnMode::PerRequest),
                    ],
                )?
            }
            Key::Clients => o.clients = Some(cmdline::positive_u32(PROG, &opt, v)?),
            Key::ReqSize => o.req_size = cmdline::positive_u32(PROG, &opt, v)?,
            Key::RspSize => o.rsp_size = cmdline::positive_u32(PROG, &opt, v)?,
            Key::Service => o.service = dist(&opt, v)?,
            Key::ServiceLock => o.service_lock = Some(time(&opt, v, "a hold time", false)?),
            Key::Think => o.think = if v == "0" { None } else { Some(dist(&opt, v)?) },
            Key::ThinkMode => {
                o.think_mode = choice(
                    &opt,
                    v,
                    &[("sleep", ThinkMode::Sleep), ("busy", ThinkMode::Busy)],
                )?
            }
            Key::Mode => {
                o.mode = if v == "closed" {
                    LoopMode::Closed
                } else if let Some(r) = v.strip_prefix("open:") {
                    let rate: f64 = r
                        .parse()
                        .ok()
                        .filter(|x: &f64| x.is_finite() && *x > 0.0 && *x <= 1e9)
                        .ok_or_else(|| {
                            bad(
                                &opt,
                                format!(
                                    "open:RATE needs a rate in requests/s per client, > 0 and \
                                     ≤ 1e9, got '{r}'"
                                ),
                            )
                        })?;
                    LoopMode::Open { rate }
                } else {
                    return Err(bad(
                        &opt,
                        format!("expected closed or open:RATE, got '{v}'"),
                    ));
                }
            }
            Key::Notify => {
                o.notify = choice(
                    &opt,
                    v,
                    &[("pipe", Notify::Pipe), ("eventfd", Notify::Eventfd)],
                )?
            }
            Key::EpollMax => {
                // the kernel's EP_MAX_EVENTS = INT_MAX / sizeof(struct epoll_event)
                o.epoll_max = Some(cmdline::int_in(
                    PROG,
                    &opt,
                    v,
                    1,
                    (i32::MAX / 12) as i64,
                    "an integer in 1..=178956970",
                )? as u32)
            }
            Key::WorkerPolicy => side_option(&opt, "policy", v, &mut o.worker_side)?,
            Key::WorkerNice => side_option(&opt, "nice", v, &mut o.worker_side)?,
            Key::WorkerCpus => side_option(&opt, "cpus", v, &mut o.worker_side)?,
            Key::WorkerSlice => side_option(&opt, "slice", v, &mut o.worker_side)?,
            Key::WorkerCgroup => side_option(&opt, "cgroup", v, &mut o.worker_side)?,
            Key::ClientPolicy => side_option(&opt, "policy", v, &mut o.client_side)?,
            Key::ClientNice => side_option(&opt, "nice", v, &mut o.client_side)?,
            Key::ClientCpus => side_option(&opt, "cpus", v, &mut o.client_side)?,
            Key::ClientSlice => side_option(&opt, "slice", v, &mut o.client_side)?,
            Key::ClientCgroup => side_option(&opt, "cgroup", v, &mut o.client_side)?,
            Key::Runtime => {
                let ns = schedlab_engine::parse_duration(v)
                    .map_err(|e| bad(&opt, e.to_string()))?
                    .0;
                if ns == 0 {
                    return Err(bad(&opt, format!("'{v}' must be more than 0")));
                }
                cmdline::check_run_secs(PROG, &opt, v, (ns / 1_000_000_000) as u128)?;
                o.runtime_ns = ns;
            }
        }
    }
    if let Some(p) = sc.positionals().first() {
        return Err(OptionError::UnexpectedArgument {
            program: PROG,
            arg: p.clone(),
        });
    }
    if let (Some(n), Arch::PerConn) = (o.workers, o.arch) {
        o.warnings.push(format!(
            "server-model: --workers {n} ignored: --arch per_conn has one worker per connection \
             (--clients)"
        ));
    }
    if let (Some(n), Arch::PerConn) = (o.epoll_max, o.arch) {
        return Err(OptionError::Invalid {
            program: PROG,
            message: format!("--epoll-max {n}: --arch per_conn uses no epoll"),
        });
    }
    o.check(accept_given)?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Options, OptionError> {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&words)
    }

    #[test]
    fn defaults_are_the_spec_table() {
        // §17.2: epoll_per_worker, tcp, thread, persistent, 100/1000 bytes, const 10 µs,
        // no lock, no think, closed loop, epoll_max 64; W = CPUs, M = 2 × CPUs.
        let o = p("").unwrap();
        assert_eq!(o, Options::default());
        assert_eq!(
            (o.arch, o.transport),
            (Arch::EpollPerWorker, Transport::Tcp)
        );
        assert_eq!((o.req_size, o.rsp_size, o.epoll_max_n()), (100, 1000, 64));
        let shared = p("--arch epoll_shared").unwrap();
        assert_eq!(shared.epoll_max_n(), 1);
        assert_eq!(o.service, Dist::Const(10_000));
        assert_eq!((o.workers_for(8), o.clients_for(8)), (8, 16));
        assert_eq!(o.accept_mode(), Accept::EpollExclusive);
        assert_eq!(o.runtime_text(), "30");
    }

    #[test]
    fn every_option() {
        let o = p(
            "--arch dispatcher --transport tcp --workers 4 --worker-mm process \
                   --accept blocking --conn per_request --clients 50 --req-size 40 \
                   --rsp-size 100 --service lognormal:3us,0.5 --service-lock 0.5us \
                   --think exp:1ms --think-mode busy --notify eventfd --epoll-max 8 \
                   --runtime 500ms",
        )
        .unwrap();
        assert_eq!(o.arch, Arch::Dispatcher);
        assert_eq!((o.workers, o.clients), (Some(4), Some(50)));
        assert_eq!(o.worker_mm, WorkerMm::Process);
        assert_eq!(o.accept, Some(Accept::Blocking));
        assert_eq!(o.conn, ConnMode::PerRequest);
        assert_eq!((o.req_size, o.rsp_size), (40, 100));
        assert_eq!(
            o.service,
            Dist::Lognormal {
                median: 3_000,
                sigma: 0.5
            }
        );
        assert_eq!(o.service_lock, Some(500));
        assert_eq!(o.think, Some(Dist::Exp(1_000_000)));
        assert_eq!(o.think_mode, ThinkMode::Busy);
        assert_eq!(o.notify, Notify::Eventfd);
        assert_eq!(o.epoll_max_n(), 8);
        assert_eq!(o.runtime_ns, 500_000_000);
        assert_eq!(o.runtime_text(), "0.5");
        let o = p("--mode open:2000 --think 0 --runtime=2").unwrap();
        assert_eq!(o.mode, LoopMode::Open { rate: 2000.0 });
        assert_eq!((o.think, o.runtime_ns), (None, 2_000_000_000));
        let o = p("--think const:50us").unwrap();
        assert_eq!(o.think, Some(Dist::Const(50_000)));
        let o = p(
            "--worker-policy fifo:50 --worker-cpus 0-1 --client-policy batch \
                   --client-nice 5 --client-cpus 2",
        )
        .unwrap();
        assert_eq!(
            (o.worker_side.policy, o.worker_side.rt_priority),
            (Some(Policy::Fifo), Some(50))
        );
        assert_eq!(o.worker_side.cpus.as_ref().map(|c| c.weight()), Some(2));
        assert_eq!(o.client_side.policy, Some(Policy::Batch));
        assert_eq!(o.client_side.nice, Some(5));
        assert_eq!(o.client_side.cpus.as_ref().and_then(|c| c.first()), Some(2));
        let o = p("--worker-slice 3ms --worker-cgroup /srv --client-cgroup /cli/a").unwrap();
        assert_eq!(o.worker_side.slice_ns, Some(3_000_000));
        assert_eq!(o.worker_side.cgroup.as_deref(), Some("/srv"));
        assert_eq!(o.client_side.cgroup.as_deref(), Some("/cli/a"));
    }

    /// Every refusal is one line naming the option and the value (exit 2 at the CLI).
    #[test]
    fn errors_name_option_and_value() {
        for (line, must) in [
            ("--arch threads", ["--arch", "'threads'"]),
            ("--transport sctp", ["--transport", "'sctp'"]),
            ("--workers 0", ["--workers", "'0'"]),
            ("--clients -3", ["--clients", "'-3'"]),
            ("--worker-mm fiber", ["--worker-mm", "'fiber'"]),
            ("--accept accept4", ["--accept", "'accept4'"]),
            ("--conn keepalive", ["--conn", "'keepalive'"]),
            ("--req-size 0", ["--req-size", "'0'"]),
            ("--rsp-size 1k", ["--rsp-size", "'1k'"]),
            ("--service const:10", ["--service", "'10'"]),
            ("--service uniform:1us", ["--service", "'uniform:1us'"]),
            ("--service 10us", ["--service", "'10us'"]),
            ("--service lognormal:3us,9", ["--service", "'9'"]),
            ("--service lognormal:3us", ["--service", "'lognormal:3us'"]),
            ("--service exp:0us", ["--service", "'0us'"]),
            ("--service-lock 0us", ["--service-lock", "'0us'"]),
            ("--think exp:x", ["--think", "'x'"]),
            ("--think-mode spin", ["--think-mode", "'spin'"]),
            ("--mode open:-1", ["--mode", "'-1'"]),
            ("--mode half", ["--mode", "'half'"]),
            ("--notify signal", ["--notify", "'signal'"]),
            ("--epoll-max 0", ["--epoll-max", "'0'"]),
            ("--runtime 0", ["--runtime", "'0'"]),
            ("--runtime soon", ["--runtime", "'soon'"]),
            ("--frobnicate 1", ["--frobnicate", "unknown"]),
            ("--workers", ["--workers", "requires"]),
            ("extra", ["'extra'", "unexpected"]),
            ("--worker-policy fifo:0", ["--worker-policy", "'fifo:0'"]),
            ("--client-nice 30", ["--client-nice", "'30'"]),
            ("--client-cpus x", ["--client-cpus", "'x'"]),
            ("--worker-slice 0", ["--worker-slice", "'0'"]),
            ("--client-cgroup rel", ["--client-cgroup", "'rel'"]),
            (
                "--worker-policy deadline:1ms/2ms/2ms",
                ["--worker-policy", "clone"],
            ),
            (
                "--transport udp --req-size 70000",
                ["--req-size", "'70000'"],
            ),
        ] {
            let e = p(line).unwrap_err().to_string();
            assert!(e.starts_with("server-model: "), "{line}: {e}");
            for m in must {
                assert!(e.contains(m), "{line}: {e} lacks {m}");
            }
            assert!(!e.contains('\n'), "{line}: {e}");
        }
    }

    #[test]
    fn meaningless_combinations_are_refused() {
        for (line, must) in [
            ("--transport udp --conn per_request", ["per_request", "udp"]),
            (
                "--transport unix --accept reuseport",
                ["--accept reuseport", "unix"],
            ),
            ("--transport udp --arch dispatcher", ["dispatcher", "udp"]),
            (
                "--arch per_conn --accept epoll",
                ["--accept epoll", "per_conn"],
            ),
            (
                "--arch epoll_per_worker --accept blocking",
                ["--accept blocking", "epoll_per_worker"],
            ),
            (
                "--arch epoll_shared --accept reuseport",
                ["--accept reuseport", "epoll_shared"],
            ),
            (
                "--arch dispatcher --accept epoll_exclusive",
                ["epoll_exclusive", "dispatcher"],
            ),
            ("--mode open:100 --think exp:1ms", ["--think", "open"]),
            ("--notify eventfd", ["--notify eventfd", "epoll_per_worker"]),
            (
                "--arch per_conn --epoll-max 8",
                ["--epoll-max 8", "per_conn"],
            ),
        ] {
            let e = p(line).unwrap_err().to_string();
            for m in must {
                assert!(e.contains(m), "{line}: {e} lacks {m}");
            }
        }
        let o = p("--arch per_conn --workers 8").unwrap();
        assert!(
            o.warnings[0].contains("--workers 8 ignored"),
            "{:?}",
            o.warnings
        );
        // the defaults of every arch are consistent
        for a in ["per_conn", "epoll_per_worker", "epoll_shared", "dispatcher"] {
            p(&format!("--arch {a}")).unwrap();
        }
        for t in ["udp", "unix"] {
            for a in ["per_conn", "epoll_per_worker", "epoll_shared"] {
                p(&format!("--arch {a} --transport {t}")).unwrap();
            }
        }
    }
}
