//! schedlab-sched: the simulated Linux kernel scheduler. File names mirror kernel/sched:
//!
//! | file | kernel | owns |
//! |---|---|---|
//! | sched.rs | sched.h | entity, cfs_rq, task group structs; flags; weight tables |
//! | core.rs, schedule.rs | core.c | runqueues, ttwu, `__schedule`, tick, preemption models |
//! | exec.rs | (simulator) | running task programs: segments, system calls, timers, IPIs |
//! | fair.rs | fair.c | EEVDF entity level: placement, pick, wakeup preemption, delayed dequeue |
//! | fair_pelt.rs | fair.c + pelt.c | `update_load_avg`, util_est, group shares |
//! | select.rs | fair.c | `select_task_rq_fair` and the idle scanners |
//! | balance.rs | fair.c | load balancing |
//! | pelt.rs | pelt.c | PELT arithmetic |
//! | tree.rs | rbtree | the augmented timeline |
//! | features.rs, patches.rs, presets.rs, sysctl.rs | features.h, git history | configuration |
//! | ipc.rs, syscalls.rs | fs/pipe.c, af_unix.c, futex, locking/mutex.c | kernel objects and the syscall surface |
//! | sys.rs | fork, /proc, tracepoints | what workload models see from outside the tasks |
//! | stats.rs, trace.rs, invariants.rs | schedstat, tracepoints, WARN_ON | observation |

pub mod balance;
pub mod core;
pub mod exec;
pub mod fair;
pub mod fair_pelt;
pub mod features;
pub mod invariants;
pub mod ipc;
pub mod patches;
pub mod pelt;
pub mod presets;
pub mod sched;
pub mod schedule;
pub mod select;
pub mod stats;
pub mod sys;
pub mod syscalls;
pub mod sysctl;
pub mod trace;
pub mod tree;

pub use crate::core::{Kernel, MachineDesc, Task, TraceSink};
pub use features::{Feature, FeatureSet, SimFeature};
pub use patches::Patch;
pub use presets::{KernelConfig, KernelSpecError, PreemptModel};
pub use sys::{Procfs, Sys, TaskStat, TracepointCounts};
pub use syscalls::{Ctx, Op, PollFd, Program, Spawn, SysResult, TaskAttrs};
