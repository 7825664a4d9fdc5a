//! schedlab-platform: machine profiles as data, the cost model, `CpuMask`, and the kernel's
//! sched-domain construction from a topology.
//!
//! * [`Platform`] — a machine profile loaded from `platforms/*.toml` (embedded built-ins:
//!   `rpi5`, `rpi5-2.4`, `rpi4-rt`, `xeon-2s-64`, `altra-80`, `altra-80-llc80`, `rb5`,
//!   `x86-2s-80`, `host`, and the parametric `smp:N`) or from a user file
//!   ([`Platform::resolve`] accepts any of these).
//! * [`CostModel`] — Table 1.11 of workloads.md in integer nanoseconds, resolved per CPU.
//! * [`CpuMask`] — the simulator's `struct cpumask`.
//! * [`topology`] — `SchedDomains::build`, the rules of Linux `kernel/sched/topology.c`.
//!
//! The TOML schema is described in `platforms/README.md`. In short: bare numbers for times
//! are µs exactly as in the spec's tables and are read exactly (no floating point); every
//! value's trailing `# comment` is kept as its provenance and shown by [`Platform::show`].

pub mod cost;
pub mod cpumask;
pub mod error;
pub mod platform;
mod show;
mod toml_tree;
pub mod topology;

pub use cost::{CostField, CostModel, StorageDevice, COST_FIELDS};
pub use cpumask::{CpuListError, CpuMask};
pub use error::PlatformError;
pub use platform::{
    ClusterIdleState, CpuClass, CpuInfo, Governor, IdleState, Isolation, LlcLevel, Platform,
    PreemptModel, SCHED_CAPACITY_SCALE,
};
pub use toml_tree::{format_decimal, Provenance};
pub use topology::{
    CpuDomains, SchedDomain, SchedDomainShared, SchedDomains, SchedGroup, SchedGroupCapacity,
};
