//! The CLI's integration tests, one test binary (STYLE.md: one integration-test binary per
//! crate, so that the test build links the `schedlab` library and its dependencies once).

mod common;

mod cli;
mod cli_cgroups;
mod cli_hostile;
mod cli_plot;
mod cli_policy;
mod cli_smp;
mod cli_workloads;
