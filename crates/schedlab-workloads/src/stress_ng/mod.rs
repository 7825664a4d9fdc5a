//! stress-ng 0.15.06, `pipe` stressor (workloads.md §2): the command line
//! ([`parse`] → [`Options`]) and the report ([`Results`] → [`render`]). The task programs
//! that fill [`Results`] live elsewhere.

use crate::cmdline;
mod options;
mod output;

pub use cmdline::OptionError;
pub use options::{
    parse, parse_with_page_size, Instances, Metrics, Options, DEFAULT_PAGE_SIZE,
    DEFAULT_PIPE_DATA_SIZE, DEFAULT_TIMEOUT_SECS, MAX_OPS, MIN_OPS, STRESS_PROCS_MAX,
};
pub use output::{duration_to_str, geometric_mean, render, InstanceResult, Results, Summary};
