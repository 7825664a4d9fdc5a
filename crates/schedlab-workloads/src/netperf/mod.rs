//! netperf 2.6.0 with its netserver (netbench.md §16): the command line ([`parse`] →
//! [`Options`]), the output ([`output`]) and the simulation model ([`workload`] →
//! [`Netperf`]): TCP_RR, UDP_RR, TCP_STREAM and UDP_STREAM over loopback.

mod model;
mod options;
pub mod output;

pub use crate::cmdline::OptionError;
pub use model::{workload, Iteration, Netperf, CONTROL_MSG_BYTES, W_DEFAULT_NS};
pub use options::{parse, Demo, Family, Length, Options, Test, UDP_LENGTH_MAX};
