//! hackbench, both as rt-tests `hackbench` and as `perf bench sched messaging`
//! (workloads.md §3): the command lines ([`parse`], [`parse_perf`], [`parse_perf_bench`] →
//! [`Options`]), the report ([`Results`] → [`render`]) and the simulation model
//! ([`workload`], [`workload_perf`] → [`Hackbench`]).

use crate::cmdline;
mod model;
mod options;
mod output;

pub use cmdline::OptionError;
pub use model::{workload, workload_perf, Hackbench, Phases, W_RX_USER_NS, W_TX_USER_NS};
pub use options::{
    parse, parse_perf, parse_perf_bench, Flavor, Options, PerfFormat, Transport, WorkerMode,
    DEFAULT_DATASIZE, DEFAULT_FDS, DEFAULT_GROUPS, DEFAULT_LOOPS,
};
pub use output::{render, Results};
