//! llama.cpp `llama-batched-bench` on the ggml CPU thread pool (workloads.md §9): the
//! command line ([`parse`] → [`Options`]), the model ([`workload`] →
//! [`LlamaBatchedBench`], module `model` describes it and what is unverified) and the tool's
//! output ([`output`]).

mod model;
mod options;
pub mod output;

pub use model::{workload, Costs, LlamaBatchedBench, NODES_PER_GRAPH, POLL_ITERS_PER_LEVEL};
pub use options::{parse, Options, PROG};
