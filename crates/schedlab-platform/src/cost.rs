//! The cost model: what each kernel operation costs in CPU time on one CPU of the platform
//! (workloads.md §0.2, Tables 1.11-A/-B), the storage device latencies (Table 1.11-C) and the
//! cache-line transfer figures of smp.md §8.2. All values are integer nanoseconds; the platform
//! files write them in µs exactly as the spec's tables do (`0.35` → 350 ns).
//!
//! Per-CPU resolution (workloads.md §0.2): a value written in `[costs]` is the cost on the
//! *reference core* — capacity `reference_capacity` (default 1024) at its maximum frequency. On
//! a CPU with `capacity_orig = cap` running at `f_cur` of `f_max` it costs
//! `value × (reference_capacity / cap) × (f_max / f_cur)` (rounded to the nearest ns, half up),
//! unless the CPU's class overrides the value (`[cpu_class.costs]`, e.g. the RB5 per-core
//! columns): an override is the cost on that class at its own `f_max`, so only the
//! `f_max / f_cur` factor applies to it. Latencies ([`LATENCY_FIELDS`]: `lat_ipi` and the
//! cache-line transfers) are not CPU work and are never scaled.

use schedlab_engine::Nanos;

/// One entry of the cost table, for parsing and for `show`.
#[derive(Debug, Clone, Copy)]
pub struct CostField {
    /// Name as in the spec and in the TOML file (`c_ttwu`).
    pub name: &'static str,
    /// What it charges (from the spec's "meaning" column).
    pub meaning: &'static str,
    /// Required fields must be given by every platform; optional ones are "—" in some
    /// columns of Table 1.11 (e.g. `c_migrate_cold` on a single-LLC SoC).
    pub required: bool,
}

macro_rules! cost_ty {
    (req) => { Nanos };
    (opt) => { Option<Nanos> };
}
macro_rules! cost_zero {
    (req) => {
        Nanos::ZERO
    };
    (opt) => {
        None
    };
}
macro_rules! cost_get {
    (req, $v:expr) => {
        Some($v)
    };
    (opt, $v:expr) => {
        $v
    };
}
macro_rules! cost_set {
    (req, $slot:expr, $v:expr) => {
        match $v {
            Some(v) => {
                $slot = v;
                true
            }
            None => false,
        }
    };
    (opt, $slot:expr, $v:expr) => {{
        $slot = $v;
        true
    }};
}
macro_rules! cost_map {
    (req, $v:expr, $f:expr) => {
        $f($v)
    };
    (opt, $v:expr, $f:expr) => {
        $v.map($f)
    };
}
macro_rules! cost_required {
    (req) => {
        true
    };
    (opt) => {
        false
    };
}

macro_rules! cost_model {
    ( $( $name:ident : $kind:ident = $desc:literal ),* $(,)? ) => {
        /// Costs of kernel operations on one CPU, integer nanoseconds (per KiB / per page /
        /// per item where the name says so). Names are the spec's (workloads.md §1.11);
        /// `Option` fields are "—" (not applicable) in some columns of Table 1.11.
        #[allow(non_snake_case)]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct CostModel {
            $( #[doc = $desc] pub $name: cost_ty!($kind), )*
            /// σ of the lognormal jitter applied to every charge, in parts per million
            /// (0.10 → 100 000; 0 disables). workloads.md §0.2, default 0.10.
            pub jitter_sigma_ppm: u32,
        }

        /// Every cost field in table order (Table 1.11-A, Table 1.11-B, smp.md §8.2).
        pub const COST_FIELDS: &[CostField] = &[
            $( CostField { name: stringify!($name), meaning: $desc, required: cost_required!($kind) }, )*
        ];

        impl CostModel {
            /// A model with every required value zero and every optional value absent.
            pub fn zero() -> CostModel {
                CostModel {
                    $( $name: cost_zero!($kind), )*
                    jitter_sigma_ppm: 0,
                }
            }

            /// Value of a field by name: `None` for an unknown name, `Some(None)` for an
            /// optional field that is not applicable on this platform.
            pub fn get(&self, name: &str) -> Option<Option<Nanos>> {
                match name {
                    $( stringify!($name) => Some(cost_get!($kind, self.$name)), )*
                    _ => None,
                }
            }

            /// Sets a field by name; `None` clears an optional field. Returns false for an
            /// unknown name or for `None` on a required field.
            pub fn set(&mut self, name: &str, v: Option<Nanos>) -> bool {
                match name {
                    $( stringify!($name) => cost_set!($kind, self.$name, v), )*
                    _ => false,
                }
            }

            /// Applies `f(name, value)` to every value (used for capacity/frequency scaling).
            pub fn map(&self, f: impl Fn(&'static str, Nanos) -> Nanos) -> CostModel {
                CostModel {
                    $( $name: cost_map!($kind, self.$name, |v| f(stringify!($name), v)), )*
                    jitter_sigma_ppm: self.jitter_sigma_ppm,
                }
            }
        }
    };
}

cost_model! {
    // Table 1.11-A — generic system-call and scheduling costs.
    c_syscall: req = "entry+exit of a trivial syscall",
    c_clock: req = "clock_gettime/gettimeofday via vDSO",
    c_atomic: req = "uncontended user atomic / futex fast path",
    c_ttwu: req = "waker-side cost of one wakeup (enqueue, preemption check)",
    c_ipi_send: req = "extra waker cost when the wakee's CPU is remote",
    lat_ipi: req = "delay until the remote CPU processes the wake (latency, not CPU time)",
    c_ctxsw_thread: req = "schedule() + switch between threads of one mm",
    c_ctxsw_process: req = "schedule() + switch between different mm",
    c_tick: req = "scheduler tick interrupt",
    c_hrtimer_irq: req = "timer IRQ entry + hrtimer expiry + exit",
    c_irq: req = "generic device IRQ entry/exit",
    c_futex_wait: req = "futex wait syscall up to blocking",
    c_futex_wake: req = "futex wake syscall excluding per-waiter c_ttwu",
    c_fork: req = "fork of a small process (page tables, mm copy)",
    c_clone: req = "thread creation",
    c_exec: req = "execve of a dynamically linked binary",
    c_exit: req = "exit incl. mm teardown (small process)",
    c_copy_per_KB: req = "kernel/user memcpy per KiB (cache-resident)",
    c_migrate_warm: req = "one-time cache refill after a migration within the LLC",
    c_migrate_cold: opt = "one-time cache refill after a migration across LLCs/nodes",
    c_xfer_per_KB: opt = "consumer penalty per KiB for data produced on another LLC of the same node",
    c_xfer_per_KB_remote_node: opt = "consumer penalty per KiB for data produced on another node",
    // Table 1.11-B — I/O system-call costs.
    c_pipe_write: req = "pipe write of <= 512 B (mutex, copy, mtime update; syscall included)",
    c_pipe_read: req = "pipe read of <= 512 B (syscall included)",
    c_pipe_update_time: opt = "share of c_pipe_write spent in file_update_time() (fs/pipe.c; anonymous pipes skip it from f017b0a4951f)",
    c_pipe_accessed: opt = "share of c_pipe_read spent in file_accessed() (fs/pipe.c; anonymous pipes skip it from f017b0a4951f)",
    c_unix_send: req = "AF_UNIX stream send of 100 B (skb alloc, peer wake call)",
    c_unix_recv: req = "AF_UNIX stream recv of 100 B (skb free)",
    c_pc_write_base: req = "page-cache write syscall, fixed part",
    c_pc_read_base: req = "page-cache read syscall, fixed part",
    c_page_alloc: req = "per newly allocated page",
    c_shmem_write: req = "tmpfs write per 4 KiB page incl. copy",
    c_open: req = "open()",
    c_close: req = "close()",
    c_stat: req = "stat()",
    c_unlink: req = "unlink() (XFS)",
    c_rename: req = "rename() (XFS)",
    c_mkdir: req = "mkdir() (XFS)",
    c_submit_per_page: req = "building bios, per page",
    c_blk_complete: req = "per block request completion",
    c_cil_push: opt = "XFS CIL push, fixed part",
    c_cil_push_per_item: opt = "XFS CIL push, per logged item",
    // Table 1.11-D (docs/model.md N§1.16) — loopback TCP/UDP, epoll; every one includes its
    // system-call entry and exit (the receive processing and wake-ups are charged apart).
    c_tcp_send: req = "TCP send of <= 512 B: lock, skb, TCP/IP output, loopback xmit, release_sock; excl. receive processing and wake-up",
    c_net_rx_tcp: req = "NET_RX processing of one TCP segment up to tcp_data_ready (= c_net_rx_ip + c_tcp_rcv); excl. c_ttwu",
    c_net_rx_ip: req = "NET_RX of a TCP segment for an owned socket: IP, lookup, sk_add_backlog only",
    c_tcp_rcv: req = "TCP receive of one backlogged segment at the owner's release_sock",
    c_tcp_recv: req = "TCP recv finding the needed bytes queued, <= 512 B",
    c_sk_wait: req = "extra for a recv / epoll_wait / accept that blocks (wait-queue add/remove, lock release and retake)",
    c_udp_send: req = "UDP send of <= 512 B (one datagram)",
    c_net_rx_udp: req = "NET_RX processing of one datagram up to sock_def_readable",
    c_udp_recv: req = "UDP recv of a queued datagram",
    c_tcp_ack: req = "one pure TCP ACK: build, xmit, loopback receive on the peer socket, in the sending context",
    c_softirq_entry: req = "extra NET_RX invocation cost when run in ksoftirqd or at an IRQ exit",
    c_epoll_wait: req = "epoll_wait returning >= 1 event (syscall included)",
    c_epoll_event: req = "per event harvested by epoll_wait",
    c_ep_poll_callback: req = "per epoll link on a woken file, waker side, excl. c_ttwu",
    c_epoll_ctl: req = "epoll_ctl ADD / MOD / DEL",
    c_tcp_connect: req = "socket() + connect() on loopback incl. the handshake softirqs",
    c_accept: req = "accept() of a queued connection",
    c_tcp_close: req = "close() of a TCP socket, one side (FIN exchange included)",
    // smp.md §8.2 — cache-line transfer latencies (approximate, unverified).
    c_line_llc: opt = "cache-line transfer between CPUs of one LLC (docs/model.md S§8.2)",
    c_line_cross_llc: opt = "cache-line transfer to another LLC of the same socket (docs/model.md S§8.2)",
    c_line_remote: opt = "cache-line transfer to another socket (docs/model.md S§8.2)",
    // schedlab's own (issue #14, not in the spec's tables): the wake-up path's idle-CPU scan.
    c_select_idle_per_cpu: opt = "waker CPU time per CPU the wake-up's idle scan tests (select_idle_cpu/_core/_smt/_capacity); absent or 0 charges nothing (docs/model.md S§2.6)",
}

/// Fields that are latencies, not CPU work: they are not scaled by capacity or frequency.
pub const LATENCY_FIELDS: &[&str] = &["lat_ipi", "c_line_llc", "c_line_cross_llc", "c_line_remote"];

/// `round(v × num / den)`, half up, in 128-bit so no product overflows.
pub(crate) fn scale_ns(v: Nanos, num: u64, den: u64) -> Nanos {
    let (v, num, den) = (u128::from(v.0), u128::from(num), u128::from(den));
    Nanos(((v * num + den / 2) / den) as u64)
}

/// A storage device's latencies (workloads.md Table 1.11-C; all unverified estimates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageDevice {
    /// Row of Table 1.11-C: `nvme`, `sata-ssd`, `sd-card`, `ram`.
    pub device: String,
    /// 4 KiB read.
    pub read_4k: Nanos,
    /// 4 KiB write (device cache).
    pub write_4k: Nanos,
    /// Flush / FUA write; for a range in the table this is its lower end…
    pub flush: Nanos,
    /// …and this its upper end (equal to `flush` when the table gives one number).
    pub flush_max: Nanos,
}

/// Table 1.11-C rows: (name, read µs, write µs, flush µs, flush_max µs).
pub const STORAGE_DEVICES: &[(&str, u64, u64, u64, u64)] = &[
    ("nvme", 80, 15, 30, 30),               // enterprise NVMe SSD (PLP)
    ("sata-ssd", 100, 40, 2_000, 2_000),    // SATA SSD
    ("sd-card", 300, 1_000, 5_000, 20_000), // SD card (RPi): flush 5–20 ms
    ("ram", 0, 0, 0, 0),                    // tmpfs/ramfs (seed 001)
];

impl StorageDevice {
    /// The Table 1.11-C row `name`, if it exists.
    pub fn from_table(name: &str) -> Option<StorageDevice> {
        STORAGE_DEVICES
            .iter()
            .find(|r| r.0 == name)
            .map(|&(n, r, w, f, fm)| StorageDevice {
                device: n.to_string(),
                read_4k: Nanos::from_us(r),
                write_4k: Nanos::from_us(w),
                flush: Nanos::from_us(f),
                flush_max: Nanos::from_us(fm),
            })
    }
}

/// One per-platform cost of user-space work in a modelled program (`[programs.NAME]` of a
/// platform file): work at the platform's reference core, like `Op::Run` (the kernel scales
/// it by each CPU's speed), not a kernel cost. Programs read it through the kernel's
/// syscall-level handle (`Sys::program_cost`); a platform that does not give it leaves the
/// model's own default in force.
#[derive(Debug, Clone, Copy)]
pub struct ProgramCostField {
    /// Program name as typed on the workload line (`schbench`).
    pub program: &'static str,
    /// Key in `[programs.PROGRAM]` (`w_matmul`).
    pub name: &'static str,
    /// What it is (and the spec section defining it).
    pub meaning: &'static str,
    /// A duration of work, or an on/off switch of the program's build (`gcc_pipe`).
    pub kind: ProgramCostKind,
}

/// What a `[programs.NAME]` value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgramCostKind {
    /// ns of work at the reference core, written like the other times (`"1.9 ms"`, µs bare).
    Duration,
    /// `true`/`false` in the file; `Sys::program_cost` reads it as 1/0.
    Switch,
}

/// Every per-program cost a platform file may give.
pub const PROGRAM_COST_FIELDS: &[ProgramCostField] = &[
    ProgramCostField {
        program: "schbench",
        name: "w_matmul",
        meaning: "one 104 × 104 naive matrix multiplication (-F 256), workloads.md §4.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "stress-ng",
        name: "w_fill",
        meaning: "pipe stressor: the writer's 512-byte fill loop per write, workloads.md §2.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "stress-ng",
        name: "w_check",
        meaning: "pipe stressor: the reader's check per read, workloads.md §2.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "ntcreatex",
        meaning: "dbench loadfile line NTCreateX (open + fstat): whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "close",
        meaning: "dbench loadfile line Close: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "rename",
        meaning: "dbench loadfile line Rename: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "unlink",
        meaning: "dbench loadfile line Unlink: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "deltree",
        meaning: "dbench loadfile line Deltree: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "mkdir",
        meaning: "dbench loadfile line Mkdir: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "rmdir",
        meaning: "dbench loadfile line Rmdir: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "qpathinfo",
        meaning: "dbench loadfile line QUERY_PATH_INFORMATION: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "qfileinfo",
        meaning: "dbench loadfile line QUERY_FILE_INFORMATION: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "qfsinfo",
        meaning: "dbench loadfile line QUERY_FS_INFORMATION: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "sfileinfo",
        meaning: "dbench loadfile line SET_FILE_INFORMATION: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "find",
        meaning: "dbench loadfile line FIND_FIRST: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "writex",
        meaning: "dbench loadfile line WriteX (fixed part): whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "readx",
        meaning: "dbench loadfile line ReadX (fixed part): whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "lockx",
        meaning: "dbench loadfile line LockX: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "unlockx",
        meaning: "dbench loadfile line UnlockX: whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "dbench",
        name: "flush",
        meaning: "dbench loadfile line Flush (fsync; IO wait excluded): whole fixed CPU cost (user + kernel fixed part), workloads.md §7.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "gcc_pipe",
        meaning: "kernel build: gcc runs cc1 and as concurrently through a pipe (-pipe in KBUILD_CFLAGS), workloads.md §8.1",
        kind: ProgramCostKind::Switch,
    },
    ProgramCostField {
        program: "make",
        name: "objtool",
        meaning: "kernel build: objtool runs on every object after as, workloads.md §8.1",
        kind: ProgramCostKind::Switch,
    },
    ProgramCostField {
        program: "make",
        name: "w_cc1",
        meaning: "kernel build: median cc1 work per compile unit (lognormal, sigma 0.9), workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "w_objtool",
        meaning: "kernel build: objtool work per object, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "w_fixdep",
        meaning: "kernel build: fixdep work per object, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "w_shell",
        meaning: "kernel build: shell and gcc driver work per compile job, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "prepare",
        meaning: "kernel build: serial configuration/prepare phase at full size, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "link",
        meaning: "kernel build: serial vmlinux link with the kallsyms passes at full size, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "make",
        name: "modpost",
        meaning: "kernel build: serial modpost at full size, workloads.md §8.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "w_step",
        meaning: "single-thread CPU work of a one-token ggml graph (a decode step), workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "w_token",
        meaning: "extra CPU work per further token of a graph (prompt processing), workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "t_mem",
        meaning: "memory floor of a graph: the weights streamed once (bytes per step / bandwidth), workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "c_barrier",
        meaning: "ggml_barrier cost per thread per node (b; a node's barrier costs b × threads), workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "w_sample",
        meaning: "serial work of the main thread after each graph, workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "llama-batched-bench",
        name: "c_relax",
        meaning: "one CPU-relax iteration of ggml's work polling (YIELD / PAUSE), workloads.md §9.2",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "netperf",
        name: "w_np",
        meaning: "netperf client's user work per transaction (RR loop), docs/model.md N§16",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "netperf",
        name: "w_ns",
        meaning: "netserver child's user work per transaction (RR loop), docs/model.md N§16",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "tbench",
        name: "w_line",
        meaning: "tbench client's user work per loadfile line (parse, rewrite, dispatch, rate check), docs/model.md N§15",
        kind: ProgramCostKind::Duration,
    },
    ProgramCostField {
        program: "tbench",
        name: "w_srv",
        meaning: "tbench_srv child's user work per request, docs/model.md N§15",
        kind: ProgramCostKind::Duration,
    },
];

/// The `[programs.*]` values a platform gives, in [`PROGRAM_COST_FIELDS`] order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramCosts {
    values: Vec<(&'static ProgramCostField, Nanos)>,
}

impl ProgramCosts {
    /// The value of `program`'s `name`, if the platform gives it.
    pub fn get(&self, program: &str, name: &str) -> Option<Nanos> {
        self.values
            .iter()
            .find(|(f, _)| f.program == program && f.name == name)
            .map(|(_, v)| *v)
    }

    /// Sets a value (replacing an earlier one).
    pub fn set(&mut self, field: &'static ProgramCostField, v: Nanos) {
        self.values
            .retain(|(f, _)| !(f.program == field.program && f.name == field.name));
        self.values.push((field, v));
        let order = |f: &ProgramCostField| {
            PROGRAM_COST_FIELDS
                .iter()
                .position(|g| g.program == f.program && g.name == f.name)
        };
        self.values.sort_by_key(|(f, _)| order(f));
    }

    /// The values given, in [`PROGRAM_COST_FIELDS`] order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static ProgramCostField, Nanos)> + '_ {
        self.values.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl PartialEq for ProgramCostField {
    fn eq(&self, other: &Self) -> bool {
        self.program == other.program && self.name == other.name
    }
}

impl Eq for ProgramCostField {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_table_is_complete_and_accessors_agree() {
        let mut c = CostModel::zero();
        for (i, f) in COST_FIELDS.iter().enumerate() {
            assert!(c.set(f.name, Some(Nanos(i as u64 + 1))), "{}", f.name);
        }
        for (i, f) in COST_FIELDS.iter().enumerate() {
            assert_eq!(c.get(f.name), Some(Some(Nanos(i as u64 + 1))));
        }
        assert_eq!(c.get("c_nonsense"), None);
        assert!(!c.set("c_ttwu", None)); // required fields cannot be cleared
        assert!(c.set("c_migrate_cold", None));
        assert_eq!(c.get("c_migrate_cold"), Some(None));
        // Table 1.11-A: 19 required + c_migrate_cold, c_xfer_per_KB (same node / remote node);
        // Table 1.11-B: 16 required + c_cil_push (fixed + per item); the two pipe time-update
        // shares (docs/validation/pipe-atime.md); smp.md §8.2: 3 figures; the idle scan's
        // per-CPU cost (issue #14); Table 1.11-D: 18 (loopback TCP/UDP, epoll).
        assert_eq!(COST_FIELDS.len(), 46 + 18);
    }

    #[test]
    fn scaling_rounds_half_up() {
        // 0.35 µs on a 284-capacity CPU with reference 871: 350 × 871 / 284 = 1073.4 → 1073.
        assert_eq!(scale_ns(Nanos(350), 871, 284), Nanos(1073));
        assert_eq!(scale_ns(Nanos(3), 1, 2), Nanos(2)); // 1.5 → 2
        assert_eq!(scale_ns(Nanos(350), 1024, 1024), Nanos(350));
    }

    #[test]
    fn storage_rows_from_table_1_11_c() {
        let sd = StorageDevice::from_table("sd-card").unwrap();
        assert_eq!(sd.read_4k, Nanos::from_us(300));
        assert_eq!(sd.flush, Nanos::from_ms(5));
        assert_eq!(sd.flush_max, Nanos::from_ms(20));
        assert!(StorageDevice::from_table("floppy").is_none());
    }
}
