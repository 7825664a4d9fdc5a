//! The workload models' integration tests, one test binary (STYLE.md: one integration-test
//! binary per crate, so that the test build links the crates and their dependencies once).

mod support;

mod output_formats;
mod rtapp_run;
