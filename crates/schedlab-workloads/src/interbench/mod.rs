//! interbench 0.31 (workloads.md §6) and seed 001's modified build: the command line
//! ([`parse`] → [`Options`], with schedlab's own long options `--units`,
//! `--timekeeper-affinity`, `--write-file-kib`, `--io-batch`, `--block-every-us`, `--block-us`,
//! `--waker-us`), the simulation ([`workload`] → [`Interbench`]), the §6.2 accounting
//! ([`period_start`], [`period_burned`]) and the output ([`render`], [`pool`]).
//!
//! # Structured results (for scenario code)
//!
//! Build the model with [`Interbench::new`] (`line`, the words after `interbench`), set it up
//! on a kernel through [`crate::Workload::setup`], run the kernel for
//! [`crate::Workload::duration_hint`], then call [`Interbench::results`]: one [`Block`] per
//! benchmark, in output order, with
//!
//! * `rows`: one [`LoadRow`] per finished load — `n` samples, `mean_ns`, `sd_ns` (true,
//!   population SD), `median_ns`, `max_ns`, `desired_cpu_pct`, `deadlines_met_pct`, and
//!   `table` ([`DataTable`]: interbench's counters in clock units and every [`Sample`] with
//!   the time its period started, `t_ns`); [`LoadRow::samples_above`] lists (time, latency)
//!   of the samples above a threshold, e.g. 1 ms;
//! * `summary`: the pooled row of §6.6 ([`Pooled`], ns).
//!
//! The values are those interbench computes, so they carry its clock resolution: µs with
//! `--units us` (0.31), 100 ns with `--units 100ns`. `Workload::metrics` gives the same rows as
//! named metrics (`audio_write_latency_mean`, `_sd`, `_median`, `_max` in the printed unit,
//! `_desired_cpu`, `_deadlines_met` in %, `_samples_over_1ms`, and `audio_summary_latency_*`)
//! for `run` and `compare`.

use crate::cmdline;
mod model;
mod options;
mod output;

pub use cmdline::OptionError;
pub use model::{period_burned, period_start, workload, Interbench, PeriodStart};
pub use options::{
    parse, BlockModel, Options, Task, TkAffinity, Units, DEFAULT_IO_BATCH, DEFAULT_WRITE_FILE_KIB,
};
pub use output::{
    fmt_g, pool, render, row_modified, row_v031, summary_modified, Block, DataTable, LoadRow,
    Pooled, Report, Sample,
};
