//! schbench (workloads.md §4): the command line ([`parse`] → [`Options`]), the fio-style
//! latency histogram and percentile walk ([`Histogram`]), and the reports it prints on
//! stderr ([`Results`] → [`render`]); the simulation model ([`workload`] → [`Schbench`]).

use crate::cmdline;
mod histogram;
mod model;
mod options;
mod output;

pub use cmdline::OptionError;
pub use histogram::{
    plat_idx_to_val, plat_val_to_idx, Histogram, Percentile, PLAT_BITS, PLAT_GROUP_NR, PLAT_NR,
    PLAT_VAL, PLIST,
};
pub use model::{matmul_ns, workload, Schbench, SPIN_CHUNK_NS, W_MATMUL_DEFAULT_NS, W_MATMUL_SIZE};
pub use options::{parse, CpuPin, Options, PIPE_TRANSFER_BUFFER};
pub use output::{
    collect_sched_delay, latency_report, render, rps_sample, Event, IntervalReport, Results,
    SchedDelay, Schedstat,
};
