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
//!
//! ```
//! use schedlab_platform::topology::{SD_ASYM_CPUCAPACITY_FULL, SD_SHARE_LLC};
//! use schedlab_platform::Platform;
//!
//! // Raspberry Pi 5: one MC domain over the four A76 cores (smp.md §4.1.2).
//! let rpi5 = Platform::resolve("rpi5").unwrap();
//! let sd = rpi5.sched_domains();
//! assert_eq!(sd.domains(0)[0].name, "MC");
//! assert!(sd.domains(0)[0].has(SD_SHARE_LLC));
//! assert_eq!(sd.cpu(0).sd_llc_size, 4);
//! assert_eq!(rpi5.costs(0).c_ttwu.ns(), 312); // 0.30 µs (Table 1.11-A) × calibration 1.04
//!
//! // RB5: capacities 284/871/1024 and an asymmetric MC domain.
//! let rb5 = Platform::resolve("rb5").unwrap();
//! assert_eq!(rb5.capacity_orig(0), 284);
//! let rb5_sd = rb5.sched_domains();
//! assert!(rb5_sd.domains(7)[0].has(SD_ASYM_CPUCAPACITY_FULL));
//!
//! // A user file may extend a built-in and change a few values.
//! let mine = Platform::from_toml_str(
//!     "extends = \"xeon-2s-64\"\nname = \"xeon-hz1000\"\ndescription = \"HZ 1000\"\n\
//!      [kernel]\nhz = 1000\n",
//!     "mine.toml",
//! )
//! .unwrap();
//! assert_eq!((mine.hz, mine.nr_cpus()), (1000, 64));
//! ```

pub mod cost;
pub mod cpumask;
pub mod error;
pub mod platform;
mod show;
mod toml_tree;
pub mod topology;

pub use cost::{
    CostField, CostModel, ProgramCostField, ProgramCostKind, ProgramCosts, StorageDevice,
    COST_FIELDS, PROGRAM_COST_FIELDS,
};
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
