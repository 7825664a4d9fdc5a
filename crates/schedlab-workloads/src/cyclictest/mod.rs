//! cyclictest, rt-tests 2.5 (workloads.md §5): the command line ([`parse`] → [`Options`],
//! settled per machine by [`Options::resolve`]), the per-thread statistics and latency rule
//! ([`ThreadStats`], [`calcdiff_us`]), what it prints ([`Results`] → [`render`]), and the
//! simulation model ([`workload`] → [`Cyclictest`]).

use crate::cmdline;
mod model;
mod options;
mod output;
mod stats;

pub use cmdline::OptionError;
pub use model::{percentile, workload, Cyclictest};
pub use options::{
    parse, Affinity, Options, Policy, Resolved, Threads, DEFAULT_DISTANCE_US, DEFAULT_INTERVAL_US,
    HIST_MAX,
};
pub use output::{render, Results, ThreadResult};
pub use stats::{calcdiff_us, histogram_percentile, HistogramSummary, ThreadStats};
