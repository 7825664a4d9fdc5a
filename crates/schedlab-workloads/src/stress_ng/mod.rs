//! stress-ng 0.15.06, `pipe` stressor (workloads.md §2): the command line
//! ([`parse`] → [`Options`]), the report ([`Results`] → [`render`]) and the simulation model
//! ([`workload`] → [`StressNg`]) whose task programs fill [`Results`].

use crate::cmdline;
mod model;
mod options;
mod output;

pub use cmdline::OptionError;
pub use model::{
    workload, Params, StressNg, FIONREAD_EVERY, FIONREAD_EXTRA_NS, W_CHECK_NS, W_FILL_NS,
};
pub use options::{
    parse, parse_with_page_size, Instances, Metrics, Options, DEFAULT_PAGE_SIZE,
    DEFAULT_PIPE_DATA_SIZE, DEFAULT_TIMEOUT_SECS, MAX_OPS, MIN_OPS, STRESS_PROCS_MAX,
};
pub use output::{duration_to_str, geometric_mean, render, InstanceResult, Results, Summary};
