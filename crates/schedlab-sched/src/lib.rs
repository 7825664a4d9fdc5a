//! schedlab-sched: the simulated Linux kernel scheduler. File names mirror kernel/sched:
//!
//! | file | kernel | owns |
//! |---|---|---|
//! | sched.rs | sched.h | entity, cfs_rq, task group structs; flags; weight tables |
//! | core.rs, schedule.rs | core.c | runqueues, ttwu, `__schedule`, tick, preemption models |
//! | exec.rs | (simulator) | running task programs: segments, system calls, timers, IPIs |
//! | fair.rs | fair.c | EEVDF entity level: placement, pick, wakeup preemption, delayed dequeue; the task-level walks both classes share |
//! | fair_cfs.rs | fair.c @ v6.5 | the CFS class of the `v6.5` preset, reached through fair.rs's `FairPolicy` table |
//! | fair_pelt.rs | fair.c + pelt.c | `update_load_avg`, util_est, group shares |
//! | fair_bandwidth.rs | fair.c (CONFIG_CFS_BANDWIDTH) + core.c cpu.max | bandwidth pool, slices, period/slack timers, cpu.stat |
//! | select.rs | fair.c | `select_task_rq_fair` and the idle scanners |
//! | balance.rs | fair.c | load balancing |
//! | pelt.rs | pelt.c | PELT arithmetic |
//! | tree.rs | rbtree | the augmented timeline |
//! | features.rs, patches.rs, presets.rs, sysctl.rs | features.h, git history | configuration |
//! | ipc.rs, syscalls.rs | fs/pipe.c, af_unix.c, futex, locking/mutex.c | kernel objects and the syscall surface |
//! | net.rs, eventpoll.rs | net/ipv4 (tcp, udp), net/core (dev.c, sock.c), fs/eventpoll.c, fs/eventfd.c | loopback sockets, listeners, epoll and eventfd state (exec.rs runs the send path, the NET_RX softirq and the wake-ups) |
//! | workqueue.rs, blkdev.rs, xfs.rs | workqueue.c, blk-mq + nvme, fs/xfs (xfs_log_cil.c, xfs_log.c) | the IO path's state: kworker pools, device requests, the CIL/log and dirty pages (exec.rs runs their effects) |
//! | sys.rs | fork, /proc, tracepoints | what workload models see from outside the tasks |
//! | cgroup.rs | cgroup.c + core.c cpu_files | cgroup paths, mkdir, the cpu controller's files |
//! | stats.rs, trace.rs, invariants.rs | schedstat, tracepoints, WARN_ON | observation |

pub mod balance;
pub mod blkdev;
pub mod cgroup;
pub mod class;
pub mod core;
pub mod deadline;
pub mod debug;
pub mod eventpoll;
pub mod exec;
pub mod fair;
pub mod fair_bandwidth;
pub mod fair_cfs;
pub mod fair_pelt;
pub mod features;
pub mod idle;
pub mod invariants;
pub mod ipc;
pub mod machine;
pub mod mutex;
pub mod net;
pub mod patches;
pub mod pelt;
pub mod presets;
pub mod rt;
pub mod sched;
pub mod select;
pub mod sim;
pub mod stats;
pub mod stop_task;
pub mod sys;
pub mod syscalls;
pub mod sysctl;
pub mod trace;
pub mod tree;
pub mod workqueue;
pub mod xfs;

pub use crate::sched::Task;
pub use crate::sim::{Kernel, MachineDesc, TraceSink};
pub use deadline::DlAttr;
pub use features::{Feature, FeatureSet, SimFeature};
pub use patches::Patch;
pub use presets::{KernelConfig, KernelSpecError, PreemptModel};
pub use sys::{Procfs, Sys, TaskStat, TracepointCounts};
pub use syscalls::{Ctx, FsCall, Op, Piece, PollFd, Program, Spawn, SysResult, TaskAttrs};

/// The crate's layout, checked: calls between files go one way only. A method defined in one
/// file (`fn name`, unique in the crate) and called as `self.name(` or `k.name(` from another
/// makes an arrow; no two files may have arrows both ways (the kernel's class table is what
/// lets core.c call fair.c without fair.c's calls back making a knot — here `class.rs` plays
/// that part). Test modules are left out.
#[cfg(test)]
mod layout_tests {
    use std::collections::{BTreeMap, BTreeSet};

    fn is_ident(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }

    /// The names after `fn ` in `text`.
    fn definitions(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(i) = rest.find("fn ") {
            let before_ok = i == 0 || !is_ident(rest[..i].chars().last().unwrap());
            let after = &rest[i + 3..];
            let name: String = after.chars().take_while(|&c| is_ident(c)).collect();
            if before_ok && !name.is_empty() {
                out.push(name);
            }
            rest = &rest[i + 3..];
        }
        out
    }

    /// The names called as `self.NAME(` or `k.NAME(`.
    fn calls(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for recv in ["self.", "k."] {
            let mut rest = text;
            while let Some(i) = rest.find(recv) {
                let before_ok = i == 0 || !is_ident(rest[..i].chars().last().unwrap());
                let after = &rest[i + recv.len()..];
                let name: String = after.chars().take_while(|&c| is_ident(c)).collect();
                if before_ok && after[name.len()..].starts_with('(') {
                    out.push(name);
                }
                rest = &rest[i + recv.len()..];
            }
        }
        out
    }

    #[test]
    fn no_two_files_call_each_other() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                files.insert(p.file_name().unwrap().to_string_lossy().into_owned(), code);
            }
        }
        let mut defined_in: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (f, code) in &files {
            for d in definitions(code) {
                defined_in.entry(d).or_default().insert(f.clone());
            }
        }
        let mut arrows: BTreeSet<(String, String)> = BTreeSet::new();
        for (f, code) in &files {
            for c in calls(code) {
                if let Some(defs) = defined_in.get(&c) {
                    if defs.len() == 1 && !defs.contains(f) {
                        arrows.insert((f.clone(), defs.iter().next().unwrap().clone()));
                    }
                }
            }
        }
        let both: Vec<String> = arrows
            .iter()
            .filter(|(a, b)| a < b && arrows.contains(&(b.clone(), a.clone())))
            .map(|(a, b)| format!("{a} <-> {b}"))
            .collect();
        assert!(
            both.is_empty(),
            "files calling each other both ways: {both:?}"
        );
        // the check sees something: core.c reaches the classes through the table
        assert!(arrows.contains(&("core.rs".into(), "class.rs".into())));
        assert!(arrows.contains(&("class.rs".into(), "fair.rs".into())));
        assert!(!arrows.contains(&("core.rs".into(), "fair.rs".into())));
    }
}
