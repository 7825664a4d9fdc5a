//! The scheduler's integration tests, one test binary (STYLE.md: one integration-test binary
//! per crate, so that the test build links the crate and its dependencies once).

mod common;

mod cfs_vectors;
mod pipe_costs;
mod properties;
mod smp_balance;
mod smp_select;
mod vectors;
