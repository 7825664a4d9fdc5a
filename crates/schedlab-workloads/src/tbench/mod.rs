//! tbench (netbench.md §15): dbench 4.0's network mode. The command line, loadfiles,
//! progress lines, warm-up and report are dbench's ([`crate::dbench`]); every loadfile line is
//! one request/response exchange over a private loopback TCP connection with a `tbench_srv`
//! child process ([`packets`] gives the sizes).

mod model;
mod options;
pub mod packets;

pub use model::{workload, Tbench, W_LINE_NS, W_SRV_NS};
pub use options::{parse, TbenchOptions, DEFAULT_TCP_OPTIONS};
