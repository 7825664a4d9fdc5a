//! hackbench, both as rt-tests `hackbench` and as `perf bench sched messaging`
//! (workloads.md §3): the command lines ([`parse`], [`parse_perf`], [`parse_perf_bench`] →
//! [`Options`]) and the report ([`Results`] → [`render`]).

use crate::cmdline;
mod options;
mod output;

pub use cmdline::OptionError;
pub use options::{
    parse, parse_perf, parse_perf_bench, Flavor, Options, PerfFormat, Transport, WorkerMode,
    DEFAULT_DATASIZE, DEFAULT_FDS, DEFAULT_GROUPS, DEFAULT_LOOPS,
};
pub use output::{render, Results};
