//! dbench 4 (workloads.md §7): the command line ([`parse`] → [`Options`]), the loadfiles
//! ([`loadfile`]: the built-in synthetic `client-tiny`/`client-warmup`, or a dbench loadfile
//! read from disk), the report ([`Report`] → [`render`]) with mmtests' statistics, and the
//! simulation model ([`workload`] → [`Dbench`]). The process structure (`driver`) and all of
//! the above are shared with tbench (`crate::tbench`), dbench's network mode.

pub(crate) mod driver;
pub mod loadfile;
mod model;
mod options;
mod output;

pub use model::{workload, Dbench};
pub(crate) use options::parse_common;
pub use options::{parse, Options, DEFAULT_TIMELIMIT};
pub use output::{
    amean, completion_lag, hmean, progress_line, render, stddev, Layout, OpStat, Pass, Progress,
    Report,
};
