//! schedlab: the facade over the simulated kernel — a platform, a kernel string and workload
//! lines go in; benchmark output, statistics, traces and comparisons come out.

pub mod admission;
pub mod bench;
pub mod cgroups;
pub mod compare;
pub mod explain;
pub mod fuzz;
pub mod html;
pub mod jobs;
pub mod listing;
pub mod plots;
pub mod progress;
pub mod report;
pub mod run;
pub mod scenario;
pub mod scenario_interbench;
pub mod scenario_sweep;
pub mod scenario_tables;
pub mod stats;
pub mod trace_file;
pub mod trace_mem;

pub use run::{run, RunError, RunResult, RunSpec};
pub use schedlab_engine::parse_duration;
