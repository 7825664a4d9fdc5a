//! schedlab-workloads: models of the benchmarks users run on hardware (rt-app, stress-ng,
//! hackbench, schbench, cyclictest, interbench, dbench, tbench, netperf): their command-line
//! options, their task programs over the kernel's syscall surface, and the lines they print.

pub mod cmdline;
pub mod cyclictest;
pub mod dbench;
pub mod hackbench;
pub mod interbench;
pub mod kbuild;
pub mod llama;
pub mod netperf;
pub mod prefix;
pub mod rtapp;
pub mod schbench;
pub mod server;
pub mod stats;
pub mod stress_ng;
pub mod tbench;
pub mod workload;

pub use workload::{
    parse_workload, Better, DlReservation, Env, Metric, Placement, Workload, WorkloadError,
};

#[cfg(test)]
mod surface_tests;
