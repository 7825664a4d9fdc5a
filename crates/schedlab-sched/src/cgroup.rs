//! The cgroup file system's view of the cpu controller: directories (task groups) by path,
//! `mkdir`, moving a task (`cgroup.procs`), and the controller's files (kernel/cgroup/cgroup.c
//! for the directory side; the `cpu_files` / `cpu_legacy_files` handlers of core.c for the
//! files). Group scheduling itself is in core.rs (`sched_create_group`, `sched_move_task`) and
//! fair.rs (`alloc_fair_sched_group`, shares, idle).
//!
//! Paths are cgroup v2 paths relative to the mount point (`/test-A`, `/a/b`); `/` is the root
//! group. Errors are the errno the write(2) or mkdir(2) would return, with the reason.

pub use crate::fair_bandwidth::CgroupStat;
use crate::sched::*;
use crate::Kernel;

/// Why a cgroup operation failed: the errno name and what the user did wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupError {
    pub errno: &'static str,
    pub reason: String,
}

impl std::fmt::Display for CgroupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.errno)
    }
}

fn err(errno: &'static str, reason: impl Into<String>) -> CgroupError {
    CgroupError {
        errno,
        reason: reason.into(),
    }
}

/// kernel: cgroup.c CGROUP_WEIGHT_MIN / CGROUP_WEIGHT_MAX (cpu.weight's range).
pub const CGROUP_WEIGHT_MIN: u64 = 1;
pub const CGROUP_WEIGHT_MAX: u64 = 10_000;

/// Checks a cgroup path as `mkdir -p /sys/fs/cgroup/PATH` would see it: absolute, no empty,
/// `.` or `..` component, no component longer than NAME_MAX (255), only printable characters
/// other than `/`. Returns the components.
pub fn parse_cgroup_path(path: &str) -> Result<Vec<&str>, CgroupError> {
    if !path.starts_with('/') {
        return Err(err(
            "EINVAL",
            format!("cgroup path {path:?} must start with '/'"),
        ));
    }
    let mut parts = Vec::new();
    for c in path.split('/').skip(1) {
        if c.is_empty() {
            if parts.is_empty() && path == "/" {
                break;
            }
            return Err(err(
                "EINVAL",
                format!("cgroup path {path:?} has an empty component"),
            ));
        }
        if c == "." || c == ".." {
            return Err(err(
                "EINVAL",
                format!("cgroup path {path:?}: '{c}' is not allowed"),
            ));
        }
        if c.len() > 255 {
            return Err(err(
                "ENAMETOOLONG",
                format!("cgroup path {path:?}: a component is longer than 255 bytes"),
            ));
        }
        if c.chars().any(|ch| ch.is_control() || ch.is_whitespace()) {
            return Err(err(
                "EINVAL",
                format!("cgroup path {path:?}: control or space characters are not accepted"),
            ));
        }
        parts.push(c);
    }
    Ok(parts)
}

impl Kernel {
    /// kernel: core.c sched_create_group() + sched_online_group() (here beside the cgroup
    /// side, which is its only caller) — a new task group under
    /// `parent` with its per-CPU fair runqueues and entities (cgroup `mkdir` with the cpu
    /// controller). RT group scheduling (CONFIG_RT_GROUP_SCHED) keeps RT tasks at the root.
    pub fn sched_create_group(&mut self, parent: TgId, path: String) -> TgId {
        let tg = TgId::new(self.tgs.len());
        self.tgs.push(TaskGroup {
            path,
            parent: Some(parent),
            shares: NICE_0_LOAD,
            idle: false,
            cfs_rq: Vec::with_capacity(self.ncpus),
            se: Vec::with_capacity(self.ncpus),
            load_avg: 0,
            cfs_bandwidth: Default::default(),
            usage_ns: 0,
        });
        self.alloc_fair_sched_group(tg, parent);
        self.online_fair_sched_group(tg);
        tg
    }

    /// The task group at `path` (`/` = root), if it exists.
    pub fn cgroup_lookup(&self, path: &str) -> Option<TgId> {
        let canon = canonical(path);
        self.tgs.iter().position(|g| g.path == canon).map(TgId::new)
    }

    /// `mkdir -p`: the group at `path` and any missing parent, with the cpu controller
    /// enabled down the tree; an existing group is returned as is.
    pub fn cgroup_mkdir_p(&mut self, path: &str) -> Result<TgId, CgroupError> {
        let parts = parse_cgroup_path(path)?;
        let mut tg = TgId::new(0);
        let mut cur = String::new();
        for p in parts {
            cur.push('/');
            cur.push_str(p);
            tg = match self.cgroup_lookup(&cur) {
                Some(g) => g,
                None => self.sched_create_group(tg, cur.clone()),
            };
        }
        Ok(tg)
    }

    /// The path of a task's group (`/proc/PID/cgroup`'s `0::PATH`).
    pub fn task_cgroup_path(&self, t: TaskId) -> &str {
        &self.tgs[self.tasks[t.index()].tg.index()].path
    }

    /// A write to one of the cpu controller's files of the group at `path`: `cpu.weight`
    /// (1..10000), `cpu.weight.nice` (-20..19), `cpu.idle` (0|1), and cgroup v1's
    /// `cpu.shares` (2..262144, the unscaled shares). The value is the text written.
    pub fn cgroup_write(&mut self, path: &str, file: &str, value: &str) -> Result<(), CgroupError> {
        let tg = self
            .cgroup_lookup(path)
            .ok_or_else(|| err("ENOENT", format!("cgroup {path:?} does not exist")))?;
        let v = value.trim();
        let int = |v: &str| -> Result<i64, CgroupError> {
            v.parse::<i64>()
                .map_err(|_| err("EINVAL", format!("{file}: {v:?} is not an integer")))
        };
        if tg.index() == 0 {
            return Err(err(
                "EINVAL",
                format!("{file}: the root cgroup has no {file} file"),
            ));
        }
        match file {
            // kernel: core.c cpu_weight_write_u64()
            "cpu.weight" => {
                let w = int(v)?;
                if w < CGROUP_WEIGHT_MIN as i64 || w > CGROUP_WEIGHT_MAX as i64 {
                    return Err(err(
                        "ERANGE",
                        format!("cpu.weight: {w} is outside 1..10000"),
                    ));
                }
                let shares = sched_weight_from_cgroup(w as u64);
                self.sched_group_set_shares(tg, scale_load(shares))
                    .map_err(|e| err("EINVAL", format!("cpu.weight: {e}")))
            }
            // kernel: core.c cpu_weight_nice_write_s64()
            "cpu.weight.nice" => {
                let n = int(v)?;
                if !(-20..=19).contains(&n) {
                    return Err(err(
                        "ERANGE",
                        format!("cpu.weight.nice: {n} is outside -20..19"),
                    ));
                }
                let w = SCHED_PRIO_TO_WEIGHT[(n + 20) as usize] as u64;
                self.sched_group_set_shares(tg, scale_load(w))
                    .map_err(|e| err("EINVAL", format!("cpu.weight.nice: {e}")))
            }
            // kernel: core.c cpu_idle_write_s64()
            "cpu.idle" => {
                let i = int(v)?;
                if !(0..=1).contains(&i) {
                    return Err(err("EINVAL", format!("cpu.idle: {i} is not 0 or 1")));
                }
                self.sched_group_set_idle(tg, i == 1)
                    .map_err(|e| err("EINVAL", format!("cpu.idle: {e}")))
            }
            // kernel: core.c cpu_shares_write_u64() (cgroup v1)
            "cpu.shares" => {
                let s = int(v)?;
                if s < 0 {
                    return Err(err("EINVAL", format!("cpu.shares: {s} is negative")));
                }
                self.sched_group_set_shares(tg, scale_load(s as u64))
                    .map_err(|e| err("EINVAL", format!("cpu.shares: {e}")))
            }
            "cpu.max" => self.cpu_max_write(tg, v),
            // kernel: core.c cpu_burst_write_u64()
            "cpu.max.burst" => {
                let b: u64 = v.parse().map_err(|_| {
                    err(
                        "EINVAL",
                        format!("cpu.max.burst: {v:?} is not a number of microseconds"),
                    )
                })?;
                let (period, quota, _) = self.tg_bandwidth(tg);
                Kernel::tg_check_bandwidth(period, quota, b)
                    .map_err(|e| err("EINVAL", format!("cpu.max.burst {v:?}: {e}")))?;
                self.set_bandwidth_us(tg, period, quota, b);
                Ok(())
            }
            _ => Err(err(
                "ENOENT",
                format!(
                    "{file}: no such file (cpu.weight, cpu.weight.nice, cpu.idle, cpu.shares, cpu.max, cpu.max.burst)"
                ),
            )),
        }
    }

    /// kernel: core.c cpu_max_write() + cpu_period_quota_parse() — `"QUOTA PERIOD"`,
    /// `"QUOTA"` (the period is kept) or `"max [PERIOD]"`, in µs; then tg_set_bandwidth()'s
    /// limits (quota ≥ 1000, period 1000..=1000000; EINVAL).
    /// Deviation: the kernel's `sscanf("%20s %llu")` ignores a period that is not a number
    /// and wraps a negative one; both are refused here (EINVAL, naming the text).
    fn cpu_max_write(&mut self, tg: TgId, v: &str) -> Result<(), CgroupError> {
        let bad = |why: &str| err("EINVAL", format!("cpu.max {v:?}: {why}"));
        let mut it = v.split_whitespace();
        let (mut period, _, burst) = self.tg_bandwidth(tg);
        let q = it
            .next()
            .ok_or_else(|| bad("empty (expected \"QUOTA [PERIOD]\" or \"max [PERIOD]\")"))?;
        let quota = if q == "max" {
            crate::fair_bandwidth::RUNTIME_INF
        } else {
            q.parse::<u64>().map_err(|_| {
                bad(&format!(
                    "quota {q:?} is neither \"max\" nor a number of microseconds"
                ))
            })?
        };
        if let Some(p) = it.next() {
            period = p
                .parse::<u64>()
                .map_err(|_| bad(&format!("period {p:?} is not a number of microseconds")))?;
        }
        if let Some(x) = it.next() {
            return Err(bad(&format!("unexpected {x:?} after the period")));
        }
        Kernel::tg_check_bandwidth(period, quota, burst).map_err(|e| bad(&e))?;
        self.set_bandwidth_us(tg, period, quota, burst);
        Ok(())
    }

    /// tg_set_cfs_bandwidth() with µs values (quota RUNTIME_INF = no limit).
    fn set_bandwidth_us(&mut self, tg: TgId, period_us: u64, quota_us: u64, burst_us: u64) {
        let quota = if quota_us == crate::fair_bandwidth::RUNTIME_INF {
            quota_us
        } else {
            quota_us * 1000
        };
        self.tg_set_cfs_bandwidth(tg, period_us * 1000, quota, burst_us * 1000);
    }

    /// `cat PATH/cpu.stat` of an existing group.
    pub fn cgroup_stat(&self, path: &str) -> Option<CgroupStat> {
        self.cgroup_lookup(path).map(|tg| self.tg_cpu_stat(tg))
    }

    /// A task's move to the group at `path` (`echo PID > PATH/cgroup.procs`).
    pub fn cgroup_attach(&mut self, t: TaskId, path: &str) -> Result<(), CgroupError> {
        let tg = self
            .cgroup_lookup(path)
            .ok_or_else(|| err("ENOENT", format!("cgroup {path:?} does not exist")))?;
        self.sched_move_task(t, tg);
        Ok(())
    }
}

/// kernel: sched.h sched_weight_from_cgroup() — cpu.weight 100 is nice 0's 1024,
/// `round(weight · 1024 / 100)`.
pub fn sched_weight_from_cgroup(w: u64) -> u64 {
    (w * 1024 + 50) / 100
}

fn canonical(path: &str) -> String {
    let t = path.trim_end_matches('/');
    if t.is_empty() {
        "/".to_string()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    //! Group scheduling by hand (issue #13's tests; fair.md §9.6, §10, smp.md §9).
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use crate::MachineDesc;
    use schedlab_platform::cpumask::CpuMask;

    struct Hog;
    impl Program for Hog {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            Op::Run(1_000_000)
        }
    }

    fn kern(spec: &str, ncpus: usize) -> Kernel {
        let cfg = KernelConfig::parse(&format!("{spec} NO_SIM_JITTER")).unwrap();
        let mut k =
            Kernel::new(cfg, MachineDesc::ideal(ncpus, 1000, PreemptModel::Full), 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn hog(k: &mut Kernel, path: &str, cpu: usize, slice: Option<u64>) -> TaskId {
        let tg = k.cgroup_mkdir_p(path).unwrap();
        let attrs = TaskAttrs {
            tg: Some(tg),
            cpus: Some(CpuMask::single(cpu)),
            slice_ns: slice,
            ..Default::default()
        };
        let t = k.create_task(Box::new(Hog), &attrs, None, false);
        k.start_task(t);
        t
    }

    fn runtime(k: &Kernel, t: TaskId) -> f64 {
        k.se[k.tasks[t.index()].se.index()].sum_exec_runtime as f64
    }

    #[test]
    fn paths_and_values_are_checked() {
        let mut k = kern("v6.18", 1);
        for bad in ["rel", "/a//b", "/a/..", "/a b"] {
            assert!(k.cgroup_mkdir_p(bad).is_err(), "{bad}");
        }
        let a = k.cgroup_mkdir_p("/a/b").unwrap();
        assert_eq!(k.cgroup_lookup("/a/b/"), Some(a));
        assert_eq!(k.tgs[a.index()].parent, k.cgroup_lookup("/a"));
        assert_eq!(k.cgroup_mkdir_p("/a/b").unwrap(), a);
        for (file, v) in [
            ("cpu.weight", "0"),
            ("cpu.weight", "10001"),
            ("cpu.weight.nice", "20"),
        ] {
            assert_eq!(k.cgroup_write("/a", file, v).unwrap_err().errno, "ERANGE");
        }
        assert_eq!(
            k.cgroup_write("/a", "cpu.idle", "2").unwrap_err().errno,
            "EINVAL"
        );
        assert_eq!(
            k.cgroup_write("/a", "cpu.weight", "x").unwrap_err().errno,
            "EINVAL"
        );
        assert_eq!(
            k.cgroup_write("/zz", "cpu.weight", "1").unwrap_err().errno,
            "ENOENT"
        );
        // cpu.weight 100 -> 1024 (scaled 1 048 576); 1 -> round(10.24) = 10; nice -20 -> 88761
        k.cgroup_write("/a", "cpu.weight", "1").unwrap();
        assert_eq!(k.tgs[1].shares, scale_load(10));
        k.cgroup_write("/a", "cpu.weight.nice", "-20").unwrap();
        assert_eq!(k.tgs[1].shares, scale_load(88761));
        // an idle group's weight is WEIGHT_IDLEPRIO and cannot be written; back to NICE_0_LOAD
        k.cgroup_write("/a", "cpu.idle", "1").unwrap();
        assert_eq!(k.tgs[1].shares, scale_load(3));
        assert!(k.cgroup_write("/a", "cpu.weight", "100").is_err());
        k.cgroup_write("/a", "cpu.idle", "0").unwrap();
        assert_eq!(k.tgs[1].shares, NICE_0_LOAD);
    }

    /// fair.md §10.4: on one CPU a group's entity weighs its full shares whatever the number
    /// of tasks inside, so /a (1 hog) and /b (3 hogs) split the CPU 50/50: 1 s each of 2 s,
    /// 1/3 s per /b hog. With cpu.weight 200 on /a: 2/3 vs 1/3.
    #[test]
    fn two_groups_split_one_cpu_by_weight_not_by_task_count() {
        for (wa, share_a) in [(100u64, 0.5), (200, 2.0 / 3.0)] {
            let mut k = kern("v6.18", 1);
            k.cgroup_mkdir_p("/a").unwrap();
            k.cgroup_write("/a", "cpu.weight", &wa.to_string()).unwrap();
            let a = hog(&mut k, "/a", 0, None);
            let b: Vec<_> = (0..3).map(|_| hog(&mut k, "/b", 0, None)).collect();
            k.run_until(2_000_000_000);
            let total = 2e9;
            let ra = runtime(&k, a) / total;
            assert!((ra - share_a).abs() < 0.01, "weight {wa}: /a got {ra}");
            for &t in &b {
                let r = runtime(&k, t) / total;
                assert!(
                    (r - (1.0 - share_a) / 3.0).abs() < 0.01,
                    "weight {wa}: /b hog {r}"
                );
            }
        }
    }

    /// fair.md §9.5–9.6: an idle group's entity weighs 3 against the other group's 1024, so
    /// its hog gets 3/1027 = 0.29 % of the CPU; its tasks count in the root's h_nr_idle.
    #[test]
    fn an_idle_group_behaves_as_a_sched_idle_entity() {
        let mut k = kern("v6.18", 1);
        k.cgroup_mkdir_p("/bg").unwrap();
        k.cgroup_write("/bg", "cpu.idle", "1").unwrap();
        let bg = hog(&mut k, "/bg", 0, None);
        let fg = hog(&mut k, "/fg", 0, None);
        let root = k.rqs[0].cfs;
        assert_eq!(k.cfs[root.index()].h_nr_idle, 1);
        assert_eq!(k.cfs[root.index()].h_nr_queued, 2);
        k.run_until(4_000_000_000);
        let r = runtime(&k, bg) / 4e9;
        assert!((r - 3.0 / 1027.0).abs() < 0.001, "idle group got {r}");
        assert!(runtime(&k, fg) / 4e9 > 0.99);
        // leaving idle moves the task out of h_nr_idle again
        k.cgroup_write("/bg", "cpu.idle", "0").unwrap();
        assert_eq!(k.cfs[root.index()].h_nr_idle, 0);
    }

    /// smp.md §9.3 across two CPUs, nested: /p/c has one nice-0 hog on CPU 0 and one on
    /// CPU 1. Each per-CPU cfs_rq of /p/c carries load 1024 of tg(/p/c).load_avg 2048, so
    /// se(/p/c) weighs 1024·1024/2048 = 512 on each CPU; /p's cfs_rq then carries 512 of
    /// tg(/p).load_avg 1024 and se(/p) weighs 1024·512/1024 = 512 too (scaled: 524 288).
    /// PELT converges within the run; the tolerance is the 1/64 republish threshold.
    #[test]
    fn nested_group_shares_across_two_cpus() {
        let mut k = kern("v6.18", 2);
        hog(&mut k, "/p/c", 0, None);
        hog(&mut k, "/p/c", 1, None);
        k.run_until(3_000_000_000);
        let c = k.cgroup_lookup("/p/c").unwrap();
        let p = k.cgroup_lookup("/p").unwrap();
        for cpu in 0..2 {
            for (g, name) in [(c, "/p/c"), (p, "/p")] {
                let se = k.tgs[g.index()].se[cpu].unwrap();
                let w = k.se[se.index()].load.weight as f64;
                assert!((w / 524_288.0 - 1.0).abs() < 0.02, "{name} cpu {cpu}: {w}");
            }
        }
    }

    /// fair.md §10.3 (aef6987d8954, v6.12+): a group entity's slice is the smallest slice
    /// queued below it: 20 ms for /test-A's hog, 8 ms for /test-B's.
    #[test]
    fn min_slice_propagates_to_the_group_entity() {
        let mut k = kern("v7.1", 1);
        hog(&mut k, "/test-A", 0, Some(20_000_000));
        hog(&mut k, "/test-A", 0, Some(20_000_000));
        hog(&mut k, "/test-B", 0, Some(8_000_000));
        k.run_until(50_000_000);
        let a = k.tgs[k.cgroup_lookup("/test-A").unwrap().index()].se[0].unwrap();
        let b = k.tgs[k.cgroup_lookup("/test-B").unwrap().index()].se[0].unwrap();
        assert_eq!(k.se[a.index()].slice, 20_000_000);
        assert_eq!(k.se[b.index()].slice, 8_000_000);
        assert!(k.se[a.index()].custom_slice && k.se[b.index()].custom_slice);
    }

    /// Steps 1 and 2 of fair.md §6.8 with real groups, and the wakee of step 3: two hogs in
    /// /test-A on one CPU (20 ms slices), one runs; the other sleeps (DEQUEUE_SLEEP, really
    /// dequeued: NO_DELAY_DEQUEUE) while /test-A keeps load, so the root's `next` becomes
    /// se(/test-A), the root's curr (step 1); the next pick keeps /test-A at the root and does
    /// not clear it (step 2). Returns the kernel, se(/test-A) and a /test-B task `comm` with an
    /// 8 ms slice, enqueued as woken (placed with no lag: eligible, and due before /test-A's
    /// 20 ms request), before the wakeup-preemption check.
    fn self_buddy_state(v: &str, comm: &str) -> (Kernel, SeId, TaskId) {
        let mut k = kern(&format!("{v} NO_DELAY_DEQUEUE"), 1);
        k.observe_comm = Some(comm.into());
        let a1 = hog(&mut k, "/test-A", 0, Some(20_000_000));
        let a2 = hog(&mut k, "/test-A", 0, Some(20_000_000));
        k.run_until(1_000_000);
        let root = k.rqs[0].cfs;
        let sa = k.tgs[k.cgroup_lookup("/test-A").unwrap().index()].se[0].unwrap();
        assert_eq!(k.cfs[root.index()].curr, Some(sa), "{v}");
        let running = k.rqs[0].curr;
        let other = if running == a1 { a2 } else { a1 };
        k.update_rq_clock(0);
        assert!(k.dequeue_task(0, other, DEQUEUE_SLEEP));
        k.tasks[other.index()].on_rq = OnRq::No;
        assert_eq!(k.cfs[root.index()].next, Some(sa), "{v}: step 1");
        assert_eq!(k.pick_task_fair(0), Some(running));
        assert_eq!(k.cfs[root.index()].next, Some(sa), "{v}: step 2");
        let tb = k.cgroup_mkdir_p("/test-B").unwrap();
        let attrs = TaskAttrs {
            comm: Some(comm.into()),
            tg: Some(tb),
            cpus: Some(CpuMask::single(0)),
            slice_ns: Some(8_000_000),
            ..Default::default()
        };
        let b = k.create_task(Box::new(Hog), &attrs, None, false);
        k.enqueue_task_fair(b, ENQUEUE_WAKEUP);
        k.tasks[b.index()].on_rq = OnRq::Queued;
        k.tasks[b.index()].state = TaskState::Running;
        k.rqs[0].resched = Resched::None;
        (k, sa, b)
    }

    /// fair.md §6.8 step 3: the short-slice wakee of /test-B: v7.0's short probe returns the
    /// eligible self-buddy → no preemption, the buddy stays; v7.1's ignores it → preempts and
    /// clears the self-buddy.
    #[test]
    fn the_self_buddy_of_a_group_blocks_preempt_short_until_v7_1() {
        for (v, preempts) in [("v7.0", false), ("v7.1", true)] {
            let (mut k, sa, b) = self_buddy_state(v, "probe");
            k.check_preempt_wakeup_fair(0, b, WF_TTWU, true);
            assert_eq!(k.rqs[0].resched != Resched::None, preempts, "{v}: step 3");
            let expect_next = if preempts { None } else { Some(sa) };
            let root = k.rqs[0].cfs;
            assert_eq!(k.cfs[root.index()].next, expect_next, "{v}: buddy after");
        }
    }

    /// The same state through the core's wakeup path with the wakee observed: the wakeup
    /// record names the reason (the self-buddy on v7.0, a preemption on v7.1) and the entity
    /// of the running side where the hierarchies meet (/test-A).
    #[test]
    fn a_recorded_wakeup_names_the_self_buddy() {
        for (v, want) in [
            (
                "v7.0",
                crate::stats::WakeupVerdict::Buddy { self_buddy: true },
            ),
            ("v7.1", crate::stats::WakeupVerdict::Preempted),
        ] {
            let (mut k, _, b) = self_buddy_state(v, "probe");
            k.wakeup_preempt(0, b, WF_TTWU, true);
            assert_eq!(k.wakeup_log.len(), 1, "{v}");
            let r = &k.wakeup_log[0];
            assert_eq!(r.verdict, want, "{v}");
            if v == "v7.0" {
                assert_eq!(r.curr_entity, "/test-A");
            }
        }
    }

    /// `sched_move_task` of a running hog between groups keeps the counters right (the
    /// invariants run after every event) and the task then counts in its new group.
    #[test]
    fn moving_a_running_task_between_groups() {
        let mut k = kern("v6.18", 1);
        let a = hog(&mut k, "/a", 0, None);
        let _b = hog(&mut k, "/b", 0, None);
        k.run_until(10_000_000);
        k.cgroup_attach(a, "/b").unwrap();
        k.check_all_invariants();
        assert_eq!(k.task_cgroup_path(a), "/b");
        let qa = k.tgs[k.cgroup_lookup("/a").unwrap().index()].cfs_rq[0];
        let qb = k.tgs[k.cgroup_lookup("/b").unwrap().index()].cfs_rq[0];
        assert_eq!(k.cfs[qa.index()].h_nr_queued, 0);
        assert_eq!(k.cfs[qb.index()].h_nr_queued, 2);
        k.run_until(1_000_000_000);
    }

    // ---------------------------------------------------------------- cpu.max (CFS bandwidth)

    fn stat(k: &Kernel, path: &str) -> CgroupStat {
        k.cgroup_stat(path).unwrap()
    }

    /// One hog in /a with cpu.max "50000 100000" on one CPU for 2 s: 50 ms of every 100 ms
    /// period, so 1.0 s of run time (±1 %: 0.98..1.02 s). The period timer starts at the
    /// write (t = 0) and fires at 100, 200, ..., 2000 ms: nr_periods 20, and the hog is
    /// throttled at each of them (it used its 50 ms first): nr_throttled 20. Alone on the
    /// CPU the hog is either running or throttled, so usage + throttled time = 2 s (each
    /// throttle is ended by a timer, the last one at 2000 ms).
    #[test]
    fn cpu_max_throttles_a_hog_to_half_a_cpu() {
        let mut k = kern("v6.12", 1);
        k.cgroup_mkdir_p("/a").unwrap();
        k.cgroup_write("/a", "cpu.max", "50000 100000").unwrap();
        let a = hog(&mut k, "/a", 0, None);
        k.run_until(2_000_000_000);
        let r = runtime(&k, a) / 2e9;
        assert!((r - 0.5).abs() < 0.01, "hog got {r} of the CPU");
        let st = stat(&k, "/a");
        assert_eq!(st.nr_periods, 20);
        assert_eq!(st.nr_throttled, 20);
        assert_eq!(st.usage_usec, runtime(&k, a) as u64 / 1000);
        assert!(
            (980_000..=1_020_000).contains(&st.throttled_usec),
            "throttled_usec {}",
            st.throttled_usec
        );
        let sum = st.usage_usec + st.throttled_usec;
        assert!(
            (sum as i64 - 2_000_000).abs() < 1_000,
            "usage + throttled = {sum} us"
        );
        assert_eq!((st.nr_bursts, st.burst_usec), (0, 0));
    }

    /// The same limit in every main preset: the model is one throttle model for all.
    #[test]
    fn cpu_max_holds_in_every_main_preset() {
        for v in crate::presets::MAIN_PRESETS {
            let mut k = kern(v, 1);
            k.cgroup_mkdir_p("/a").unwrap();
            k.cgroup_write("/a", "cpu.max", "30000 100000").unwrap();
            let a = hog(&mut k, "/a", 0, None);
            let b = hog(&mut k, "/b", 0, None);
            k.run_until(1_000_000_000);
            // /a is held to 30 %; the unlimited /b takes the rest (70 %), ±1 %
            let (ra, rb) = (runtime(&k, a) / 1e9, runtime(&k, b) / 1e9);
            assert!((ra - 0.3).abs() < 0.01, "{v}: /a got {ra}");
            assert!((rb - 0.7).abs() < 0.01, "{v}: /b got {rb}");
        }
    }

    /// cpu.max "150000 100000" (1.5 CPUs) with one hog on each of 2 CPUs for 2 s: 3.0 s of
    /// run time in all (±1 %), shared equally as both draw 5 ms slices from the same pool at
    /// the same rate: 1.5 s each (±2 %).
    #[test]
    fn cpu_max_of_one_and_a_half_cpus_over_two_hogs() {
        let mut k = kern("v6.18", 2);
        k.cgroup_mkdir_p("/a").unwrap();
        k.cgroup_write("/a", "cpu.max", "150000 100000").unwrap();
        let h0 = hog(&mut k, "/a", 0, None);
        let h1 = hog(&mut k, "/a", 1, None);
        k.run_until(2_000_000_000);
        let (r0, r1) = (runtime(&k, h0) / 1e9, runtime(&k, h1) / 1e9);
        assert!(((r0 + r1) / 3.0 - 1.0).abs() < 0.01, "total {}", r0 + r1);
        for r in [r0, r1] {
            assert!((r / 1.5 - 1.0).abs() < 0.02, "hog {r}");
        }
        let st = stat(&k, "/a");
        assert_eq!(st.nr_periods, 20);
        assert_eq!(st.nr_throttled, 20);
    }

    /// A limit on a parent applies to the tasks of its children: /p has "20000 100000", its
    /// child /p/c none; /p/c's hog gets 20 % (±1 %) of 2 s = 0.4 s. The throttled cfs_rq is
    /// /p's; usage of /p includes /p/c's.
    #[test]
    fn a_parent_limit_throttles_the_child_group() {
        let mut k = kern("v6.18", 1);
        k.cgroup_mkdir_p("/p/c").unwrap();
        k.cgroup_write("/p", "cpu.max", "20000 100000").unwrap();
        let t = hog(&mut k, "/p/c", 0, None);
        let other = hog(&mut k, "/q", 0, None);
        k.run_until(2_000_000_000);
        let r = runtime(&k, t) / 2e9;
        assert!((r - 0.2).abs() < 0.01, "child hog got {r}");
        assert!((runtime(&k, other) / 2e9 - 0.8).abs() < 0.01);
        let (sp, sc) = (stat(&k, "/p"), stat(&k, "/p/c"));
        assert_eq!(sp.usage_usec, runtime(&k, t) as u64 / 1000);
        assert_eq!(sc.usage_usec, sp.usage_usec);
        assert_eq!(sp.nr_throttled, 20);
        assert_eq!((sc.nr_periods, sc.nr_throttled), (0, 0));
    }

    /// A child limit below the parent's wins: /p "50000 100000", /p/c "10000 100000": 10 %.
    #[test]
    fn the_tighter_of_nested_limits_applies() {
        let mut k = kern("v6.18", 1);
        k.cgroup_mkdir_p("/p/c").unwrap();
        k.cgroup_write("/p", "cpu.max", "50000 100000").unwrap();
        k.cgroup_write("/p/c", "cpu.max", "10000 100000").unwrap();
        let t = hog(&mut k, "/p/c", 0, None);
        k.run_until(2_000_000_000);
        let r = runtime(&k, t) / 2e9;
        assert!((r - 0.1).abs() < 0.01, "child hog got {r}");
    }

    /// "max" (no quota) changes nothing: two hogs in /a and /b run exactly as without any
    /// cpu.max write (same run time to the ns), and a quota the group never reaches (200 %
    /// on one CPU) keeps the 50/50 split within 1 %.
    #[test]
    fn an_unthrottled_group_is_unchanged() {
        let run = |w: Option<&str>| {
            let mut k = kern("v6.18", 1);
            k.cgroup_mkdir_p("/a").unwrap();
            if let Some(w) = w {
                k.cgroup_write("/a", "cpu.max", w).unwrap();
            }
            let a = hog(&mut k, "/a", 0, None);
            let b = hog(&mut k, "/b", 0, None);
            k.run_until(1_000_000_000);
            (runtime(&k, a), runtime(&k, b), stat(&k, "/a"))
        };
        let base = run(None);
        let max = run(Some("max 100000"));
        assert_eq!((base.0, base.1), (max.0, max.1));
        assert_eq!((max.2.nr_periods, max.2.nr_throttled), (0, 0));
        let big = run(Some("200000 100000"));
        assert!((big.0 / 1e9 - 0.5).abs() < 0.01, "{}", big.0);
        assert_eq!(big.2.nr_throttled, 0);
        // lifting the limit again unthrottles at once
        let mut k = kern("v6.18", 1);
        k.cgroup_mkdir_p("/a").unwrap();
        k.cgroup_write("/a", "cpu.max", "10000 100000").unwrap();
        let a = hog(&mut k, "/a", 0, None);
        k.run_until(50_000_000);
        let q = k.tgs[k.cgroup_lookup("/a").unwrap().index()].cfs_rq[0];
        assert!(k.cfs[q.index()].throttled);
        k.cgroup_write("/a", "cpu.max", "max").unwrap();
        assert!(!k.cfs[q.index()].throttled);
        let before = runtime(&k, a);
        k.run_until(100_000_000);
        // alone and unlimited: the whole 50 ms
        assert!((runtime(&k, a) - before - 50e6).abs() < 1e5);
    }

    /// cpu.max syntax and limits (core.c cpu_max_write / tg_set_bandwidth: EINVAL, the
    /// message naming the value); "QUOTA" alone keeps the period; cpu.max.burst ≤ quota.
    #[test]
    fn cpu_max_values_are_checked() {
        let mut k = kern("v6.18", 1);
        let tg = k.cgroup_mkdir_p("/a").unwrap();
        for (v, named) in [
            ("", "\"\""),
            ("abc", "abc"),
            ("999 100000", "999"),
            ("50000 999", "999"),
            ("50000 1000001", "1000001"),
            ("50000 x", "x"),
            ("-1 100000", "-1"),
            ("50000 100000 7", "7"),
        ] {
            let e = k.cgroup_write("/a", "cpu.max", v).unwrap_err();
            assert_eq!(e.errno, "EINVAL", "{v}");
            assert!(e.to_string().contains(named), "{v}: {e}");
        }
        assert_eq!(
            k.tg_bandwidth(tg),
            (100_000, crate::fair_bandwidth::RUNTIME_INF, 0)
        );
        k.cgroup_write("/a", "cpu.max", "50000 200000").unwrap();
        k.cgroup_write("/a", "cpu.max", "30000").unwrap();
        assert_eq!(k.tg_bandwidth(tg), (200_000, 30_000, 0));
        k.cgroup_write("/a", "cpu.max", "max").unwrap();
        assert_eq!(
            k.tg_bandwidth(tg),
            (200_000, crate::fair_bandwidth::RUNTIME_INF, 0)
        );
        assert!(!k.cfs_bandwidth_used());
        k.cgroup_write("/a", "cpu.max", "30000").unwrap();
        let e = k.cgroup_write("/a", "cpu.max.burst", "30001").unwrap_err();
        assert!(e.to_string().contains("30001"), "{e}");
        k.cgroup_write("/a", "cpu.max.burst", "20000").unwrap();
        assert_eq!(k.tg_bandwidth(tg), (200_000, 30_000, 20_000));
        assert!(k.cgroup_write("/", "cpu.max", "50000").is_err());
    }

    /// cpu.max.burst: a group idle for a period banks its unused quota up to `burst`; a hog
    /// that then starts runs quota + burst in its first period. /a "20000 100000" burst
    /// 20000: the write fills the pool with 20 ms; the timer at 100 ms refills it to 40 ms
    /// (cap quota + burst). The hog starts at 150 ms and runs 40 ms (to 190 ms), is
    /// throttled, and the refill at 200 ms finds the pool 20 ms lower than its last refill:
    /// one burst of 20 ms. It then runs 20 ms more (to 220 ms): 60 ms by 250 ms (± 1 ms
    /// tick of overrun per throttle).
    #[test]
    fn burst_lets_an_idle_group_run_past_its_quota_once() {
        let mut k = kern("v6.18", 1);
        k.cgroup_mkdir_p("/a").unwrap();
        k.cgroup_write("/a", "cpu.max", "20000 100000").unwrap();
        k.cgroup_write("/a", "cpu.max.burst", "20000").unwrap();
        k.run_until(150_000_000);
        let a = hog(&mut k, "/a", 0, None);
        k.run_until(250_000_000);
        let r = runtime(&k, a);
        assert!((r - 60e6).abs() < 2.1e6, "ran {r} ns");
        let st = stat(&k, "/a");
        assert_eq!(st.nr_bursts, 1);
        assert_eq!(st.burst_usec, 20_000);
    }

    /// Runs `run` ns then sleeps `sleep` ns, for ever; every third round also a system call
    /// with cond_resched points.
    struct Burst {
        run: u64,
        sleep: u64,
        i: u64,
    }
    impl Program for Burst {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            self.i += 1;
            match self.i % 6 {
                1 | 3 => Op::Run(self.run),
                5 => Op::SyscallCondResched {
                    work: self.run / 2,
                    every: 100_000,
                },
                _ => Op::Sleep(self.sleep),
            }
        }
    }

    /// Sleepers, hogs and nested limits on 2 CPUs in every main preset, with the limits
    /// changed and tasks moved while groups are throttled: the invariants (run after every
    /// event, with the throttled-cfs_rq checks) hold, and the limited groups stay within
    /// their quota: /lim (25 ms per 50 ms, 2 CPUs) gets at most 50 % of the 2 CPUs' time
    /// over the run, plus a tick of overrun per period and CPU.
    #[test]
    fn throttling_keeps_the_invariants_with_sleepers_and_moves() {
        for v in ["v6.6", "v6.12", "v6.18", "v7.1"] {
            let mut k = kern(v, 2);
            k.cgroup_mkdir_p("/lim/a").unwrap();
            k.cgroup_mkdir_p("/lim/b").unwrap();
            k.cgroup_write("/lim", "cpu.max", "25000 50000").unwrap();
            k.cgroup_write("/lim/b", "cpu.max", "5000 20000").unwrap();
            k.cgroup_write("/lim/b", "cpu.idle", "1").unwrap();
            let spawn = |k: &mut Kernel, path: &str, run: u64, sleep: u64| {
                let tg = k.cgroup_mkdir_p(path).unwrap();
                let attrs = TaskAttrs {
                    tg: Some(tg),
                    ..Default::default()
                };
                let t = k.create_task(Box::new(Burst { run, sleep, i: 0 }), &attrs, None, false);
                k.start_task(t);
                t
            };
            let mut ts = Vec::new();
            for (i, path) in ["/lim", "/lim/a", "/lim/a", "/lim/b", "/free", "/free"]
                .iter()
                .enumerate()
            {
                let run = 300_000 + 700_000 * i as u64;
                ts.push(spawn(&mut k, path, run, 1_000_000 + 300_000 * i as u64));
            }
            let h = hog(&mut k, "/lim/a", 0, None);
            k.run_until(300_000_000);
            k.cgroup_attach(ts[4], "/lim/b").unwrap();
            k.cgroup_attach(h, "/free").unwrap();
            k.run_until(400_000_000);
            k.cgroup_attach(h, "/lim/a").unwrap();
            k.cgroup_write("/lim", "cpu.max", "max").unwrap();
            k.run_until(500_000_000);
            k.cgroup_write("/lim", "cpu.max", "10000 100000").unwrap();
            let u0 = stat(&k, "/lim").usage_usec;
            k.run_until(1_000_000_000);
            k.check_all_invariants();
            assert_eq!(k.warnings, 0, "{v}");
            // 500..1000 ms under "10000 100000": the write fills the pool with 10 ms, the
            // timer (restarted at 500 ms on the new 100 ms grid) refills 10 ms at 600, 700,
            // 800 and 900 ms: 50 ms, ± one 1 ms tick of overrun per CPU and period (10 ms)
            let lim = stat(&k, "/lim");
            let used = lim.usage_usec - u0;
            assert!(
                (40_000..=60_000).contains(&used),
                "{v}: /lim used {used} us"
            );
            assert!(lim.nr_throttled >= 5, "{v}: {lim:?}");
        }
    }

    /// A 20 ms system call, then user work for ever.
    struct KernelThenUser(u32);
    impl Program for KernelThenUser {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            self.0 += 1;
            if self.0 == 1 {
                Op::Syscall(20_000_000)
            } else {
                Op::Run(1_000_000)
            }
        }
    }

    /// The two throttle models on one task in /a with cpu.max "5000 100000" (PREEMPT_FULL,
    /// HZ 1000) whose first 20 ms are one system call.
    /// v6.12 (hierarchical): the 5 ms slice empties the pool; the tick at 5 ms finds no
    /// runtime and reschedules, and the throttle at that schedule takes the group off the
    /// CPU in the middle of the system call: 5 ms by 99 ms.
    /// v6.18 (task based, e1fad12dcb66; with 956dfda6a708 the write leaves each cfs_rq
    /// 1 ns): the slice is 5 ms − 1 ns (pool left: 1 ns, taken at the 5 ms tick), so the
    /// tick at 6 ms reschedules. The group stays queued and the task is picked again with
    /// the throttle task work; it finishes its system call and is throttled on the way back
    /// to user space at 20 ms, owing 20 ms − (5 ms + 1 ns). The 5 ms refills at 100 and
    /// 200 ms leave it in debt; the one at 300 ms brings it to 1 ns: unthrottled. It runs
    /// to the next tick (301 ms) and is throttled again (user mode: at once), owing
    /// 1 ms − 1 ns, paid at 400 ms with 4 ms left in the pool; it then runs 400..405 ms.
    /// Run time: 20 ms by 299 ms, 21 ms by 399 ms, 26 ms by 410 ms. Throttled time,
    /// counted from each task throttle (eb962f251fbb): (300 − 20) + (400 − 301) = 379 ms.
    #[test]
    fn v6_18_throttles_a_task_on_its_return_to_user_space() {
        let start = |v: &str| {
            let mut k = kern(v, 1);
            let tg = k.cgroup_mkdir_p("/a").unwrap();
            k.cgroup_write("/a", "cpu.max", "5000 100000").unwrap();
            let attrs = TaskAttrs {
                tg: Some(tg),
                ..Default::default()
            };
            let t = k.create_task(Box::new(KernelThenUser(0)), &attrs, None, false);
            k.start_task(t);
            (k, t)
        };
        let (mut k, t) = start("v6.12");
        k.run_until(99_000_000);
        let r = runtime(&k, t);
        assert!((5e6..=6e6).contains(&r), "v6.12: {r}");
        assert!(!k.tasks[t.index()].throttled);

        let (mut k, t) = start("v6.18");
        k.run_until(99_000_000);
        assert_eq!(runtime(&k, t), 20e6, "v6.18");
        assert!(k.tasks[t.index()].throttled);
        assert_eq!(k.tasks[t.index()].on_rq, OnRq::Queued);
        assert_eq!(k.rqs[0].nr_running, 0);
        k.run_until(299_000_000);
        assert_eq!(runtime(&k, t), 20e6, "v6.18: still paying its debt");
        k.run_until(399_000_000);
        assert_eq!(runtime(&k, t), 21e6, "v6.18: one tick at 300 ms");
        assert!(k.tasks[t.index()].throttled);
        k.run_until(410_000_000);
        assert_eq!(runtime(&k, t), 26e6, "v6.18: 400..405 ms");
        let st = stat(&k, "/a");
        assert!(
            (st.throttled_usec as i64 - 379_000).abs() <= 10,
            "{}",
            st.throttled_usec
        );
    }

    /// Writes (or reads) 100 bytes on a pipe after `work` ns of user work, for ever.
    struct PipeSide {
        pipe: crate::ipc::PipeId,
        write: bool,
        work: u64,
        i: u64,
    }
    impl Program for PipeSide {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            self.i += 1;
            if self.i % 2 == 1 {
                return Op::Run(self.work);
            }
            if self.write {
                Op::PipeWrite {
                    pipe: self.pipe,
                    bytes: 100,
                }
            } else {
                Op::PipeRead {
                    pipe: self.pipe,
                    bytes: 100,
                }
            }
        }
    }

    /// Pipe pairs across and inside limited groups (wakeups into throttled hierarchies,
    /// blocking writers and readers of a throttled peer) on 3 CPUs in both throttle models
    /// with load balancing: the invariants hold after every event, and the limited group's
    /// usage stays within its quota: "20000 100000" over 1 s is 200 ms, + up to one 1 ms tick
    /// of overrun per CPU and period (30 ms).
    #[test]
    fn pipes_across_throttled_groups_keep_the_invariants() {
        use crate::sys::Sys;
        for v in ["v6.12", "v6.18", "v7.1"] {
            let mut k = kern(v, 3);
            k.cgroup_mkdir_p("/lim/in").unwrap();
            k.cgroup_write("/lim", "cpu.max", "20000 100000").unwrap();
            for (wp, rp, work) in [
                ("/lim", "/free", 300_000u64),
                ("/free", "/lim/in", 500_000),
                ("/lim/in", "/lim", 200_000),
            ] {
                let pipe = k.new_pipe(false, 1);
                for (path, write) in [(wp, true), (rp, false)] {
                    let tg = k.cgroup_mkdir_p(path).unwrap();
                    let attrs = TaskAttrs {
                        tg: Some(tg),
                        ..Default::default()
                    };
                    let prog = PipeSide {
                        pipe,
                        write,
                        work,
                        i: 0,
                    };
                    let t = k.create_task(Box::new(prog), &attrs, None, false);
                    k.start_task(t);
                }
            }
            hog(&mut k, "/lim/in", 1, None);
            hog(&mut k, "/free", 2, None);
            k.run_until(1_000_000_000);
            assert_eq!(k.warnings, 0, "{v}");
            let st = stat(&k, "/lim");
            assert!(st.nr_throttled >= 9, "{v}: {st:?}");
            assert!(
                (180_000..=230_000).contains(&st.usage_usec),
                "{v}: /lim used {} us",
                st.usage_usec
            );
        }
    }

    /// Runs `run` ns, sleeps `sleep` ns, for ever.
    struct Periodic {
        run: u64,
        sleep: u64,
        i: u64,
    }
    impl Program for Periodic {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            self.i += 1;
            if self.i % 2 == 1 {
                Op::Run(self.run)
            } else {
                Op::Sleep(self.sleep)
            }
        }
    }

    /// The slack timer, by hand (v6.12, no timer slack): /a has "10000 100000"; eight
    /// tasks, one pinned to each CPU, run 0.3 ms and sleep 1 ms for ever. At t = 0 the
    /// first two (CPUs 0, 1) take a 5 ms slice each and empty the pool; the six others find
    /// it empty at their first enqueue and are throttled at once. At 0.3 ms the first two
    /// sleep and give back all but 1 ms: 3.7 ms, then 7.4 ms in the pool — more than a
    /// slice while cfs_rqs are throttled, so the slack timer is armed for 5.3 ms (the
    /// period ends at 100 ms). At 5.3 ms it hands each throttled cfs_rq 1 ns (its debt of 0
    /// plus 1 ns): all six run from 5.3 ms, 90 ms before the period timer would let them.
    /// Meanwhile the first two live on their 1 ms reserve (0.3 ms a wakeup: 0.1 ms left at
    /// 5.2 ms, nothing asked of the pool).
    #[test]
    fn returned_runtime_is_redistributed_by_the_slack_timer() {
        let mut k = kern("v6.12 timer_slack_ns=0", 8);
        let tg = k.cgroup_mkdir_p("/a").unwrap();
        k.cgroup_write("/a", "cpu.max", "10000 100000").unwrap();
        let ts: Vec<TaskId> = (0..8)
            .map(|cpu| {
                let attrs = TaskAttrs {
                    tg: Some(tg),
                    cpus: Some(CpuMask::single(cpu)),
                    ..Default::default()
                };
                let prog = Periodic {
                    run: 300_000,
                    sleep: 1_000_000,
                    i: 0,
                };
                let t = k.create_task(Box::new(prog), &attrs, None, false);
                k.start_task(t);
                t
            })
            .collect();
        k.run_until(1_000_000);
        assert!(k.tgs[tg.index()].cfs_bandwidth.slack_started);
        assert_eq!(k.tgs[tg.index()].cfs_bandwidth.throttled_cfs_rq.len(), 6);
        k.run_until(5_290_000);
        for &t in &ts[2..] {
            assert_eq!(runtime(&k, t), 0.0);
        }
        // [0, 0.3], [1.3, 1.6], [2.6, 2.9], [3.9, 4.2], [5.2, 5.29]
        assert_eq!(runtime(&k, ts[0]), 1_290_000.0);
        k.run_until(5_700_000);
        for &t in &ts[2..] {
            assert_eq!(runtime(&k, t), 300_000.0);
        }
    }

    fn se_of(k: &Kernel, t: TaskId) -> SeId {
        k.tasks[t.index()].se
    }

    /// Issue #13 item 1, tests (a) and (b), balancer side (smp.md §5.6; fair.c
    /// DO_DETACH/DO_ATTACH and propagate_entity_load_avg): two hogs of /g share CPU 0 for
    /// 300 ms (≈ 512 of util each); the queued one is moved to the idle CPU 1. CPU 1's root
    /// had nothing, so its util_avg becomes exactly the task's U in the same enqueue walk
    /// (0 + U: the group entity copies its cfs_rq's util); CPU 0's root loses ≈ U at once
    /// (only the ≤ 1 ms of aging since CPU 0's last update separates the two readings).
    #[test]
    fn a_migrated_group_task_moves_its_util_between_roots_at_once() {
        let mut k = kern("v6.18", 2);
        let a = hog(&mut k, "/g", 0, None);
        let b = hog(&mut k, "/g", 0, None);
        k.run_until(300_000_000);
        let moved = if k.rqs[0].curr == a { b } else { a };
        let (root0, root1) = (k.rqs[0].cfs, k.rqs[1].cfs);
        let before0 = k.cfs[root0.index()].avg.util_avg;
        assert_eq!(k.cfs[root1.index()].avg.util_avg, 0);
        k.tasks[moved.index()].cpus_allowed = CpuMask::first_n(2);
        k.tasks[moved.index()].nr_cpus_allowed = 2;
        k.move_queued_task(0, 1, moved);
        k.check_all_invariants();
        let u = k.se[se_of(&k, moved).index()].avg.util_avg;
        assert!((400..=620).contains(&u), "half a CPU: {u}");
        assert_eq!(k.cfs[root1.index()].avg.util_avg, u);
        let g = k.cgroup_lookup("/g").unwrap();
        let ge1 = k.tgs[g.index()].se[1].unwrap();
        assert_eq!(k.se[ge1.index()].avg.util_avg, u);
        let after0 = k.cfs[root0.index()].avg.util_avg;
        let drop = before0 as i64 - after0 as i64;
        assert!((drop - u as i64).abs() <= 8, "CPU 0 lost {drop}, U = {u}");
        // the group entity on CPU 0 now carries only the task left there
        let q0 = k.tgs[g.index()].cfs_rq[0];
        let ge0 = k.tgs[g.index()].se[0].unwrap();
        assert_eq!(
            k.se[ge0.index()].avg.util_avg,
            k.cfs[q0.index()].avg.util_avg
        );
        k.run_until(400_000_000);
    }

    /// Test (a), cgroup side: a root hog with util U ≈ 1023 after 300 ms is moved into /g
    /// (cgroup_attach → sched_move_task → task_change_group_fair): the root loses U on the
    /// detach and gets it back through se(/g) in the same call (detach_entity_cfs_rq and
    /// attach_entity_cfs_rq each propagate to the root), so its util_avg stays at U instead
    /// of restarting from the group entity's 0.
    #[test]
    fn cgroup_attach_keeps_the_root_util_of_a_moved_task() {
        let mut k = kern("v6.18", 1);
        let root = k.rqs[0].cfs;
        let t = {
            let attrs = TaskAttrs {
                cpus: Some(CpuMask::single(0)),
                ..Default::default()
            };
            let t = k.create_task(Box::new(Hog), &attrs, None, false);
            k.start_task(t);
            t
        };
        k.cgroup_mkdir_p("/g").unwrap();
        k.run_until(300_000_000);
        let before = k.cfs[root.index()].avg.util_avg;
        assert!(before > 1000, "{before}");
        k.cgroup_attach(t, "/g").unwrap();
        k.check_all_invariants();
        let u = k.se[se_of(&k, t).index()].avg.util_avg;
        let after = k.cfs[root.index()].avg.util_avg;
        assert!(
            (after as i64 - before as i64).abs() <= 4,
            "{before} -> {after}"
        );
        let g = k.cgroup_lookup("/g").unwrap();
        let q = k.tgs[g.index()].cfs_rq[0];
        let ge = k.tgs[g.index()].se[0].unwrap();
        assert_eq!(k.cfs[q.index()].avg.util_avg, u);
        assert_eq!(k.se[ge.index()].avg.util_avg, u);
        // test (c) in the kernel: /g was empty, so se(/g) keeps NICE_0_LOAD (66951e4860d3) and
        // update_tg_cfs_load gives it 1024 · min(task load_sum, divider) / divider: the task's
        // own load_avg L (1024 · load_sum / divider) up to the truncations; after the enqueue
        // calc_group_shares still gives the full 1024 (the only load of /g is on this CPU).
        let l = k.se[se_of(&k, t).index()].avg.load_avg;
        let gl = k.se[ge.index()].avg.load_avg;
        assert!((gl as i64 - l as i64).abs() <= 1, "se(/g) {gl}, task {l}");
        assert_eq!(k.se[ge.index()].load.weight, NICE_0_LOAD);
        // and back to the root: se(/g) gives its util back at once (test (b))
        k.run_until(310_000_000);
        k.cgroup_attach(t, "/").unwrap();
        k.check_all_invariants();
        assert_eq!(k.se[ge.index()].avg.util_avg, 0);
        let back = k.cfs[root.index()].avg.util_avg;
        let u = k.se[se_of(&k, t).index()].avg.util_avg;
        assert!((back as i64 - u as i64).abs() <= 4, "root {back}, task {u}");
    }

    /// Test (d): task_h_load by smp.md §9.4 in a nested hierarchy on one CPU. Hog A in /p/c,
    /// hog B in /p, run 2 s. Every level is always runnable, so each load_avg is close to
    /// its weight: root ≈ 1024 (se(/p) alone, full shares), /p ≈ 2048 (se(/p/c) 1024 + B
    /// 1024), /p/c ≈ 1024 (A). h(root) = 1024; h(/p) = 1024·1024/1025 ≈ 1023;
    /// h(/p/c) = 1023·1024/2049 ≈ 511; task_h_load(A) = 1024·511/1025 ≈ 510 and
    /// task_h_load(B) = 1024·1023/2049 ≈ 511: each task is half of the CPU's load. The
    /// exact value is the same formula on the live averages.
    #[test]
    fn task_h_load_in_a_nested_group() {
        let mut k = kern("v6.18", 1);
        let a = hog(&mut k, "/p/c", 0, None);
        let b = hog(&mut k, "/p", 0, None);
        k.run_until(2_000_000_000);
        let p = k.cgroup_lookup("/p").unwrap();
        let c = k.cgroup_lookup("/p/c").unwrap();
        let la = |k: &Kernel, q: CfsRqId| k.cfs[q.index()].avg.load_avg;
        let root = la(&k, k.rqs[0].cfs);
        let qp = la(&k, k.tgs[p.index()].cfs_rq[0]);
        let qc = la(&k, k.tgs[c.index()].cfs_rq[0]);
        let gp = k.se[k.tgs[p.index()].se[0].unwrap().index()].avg.load_avg;
        let gc = k.se[k.tgs[c.index()].se[0].unwrap().index()].avg.load_avg;
        let ta = k.se[se_of(&k, a).index()].avg.load_avg;
        let tb = k.se[se_of(&k, b).index()].avg.load_avg;
        let h_p = root * gp / (root + 1);
        let h_c = h_p * gc / (qp + 1);
        assert_eq!(k.task_h_load(a), ta * h_c / (qc + 1));
        assert_eq!(k.task_h_load(b), tb * h_p / (qp + 1));
        for t in [a, b] {
            let h = k.task_h_load(t);
            assert!((500..=515).contains(&h), "{h}");
        }
    }

    /// Test (b), wakeup side (smp.md §5.6: remove_entity_load_avg): a sleeping /g task woken
    /// on another CPU leaves its signals in /g's `removed` on CPU 0; the next blocked-load
    /// update folds them out of /g's cfs_rq and, through se(/g) (not skipped: a change is
    /// pending), out of CPU 0's root at once: no time passes, so the root drops by the task's
    /// U up to se(/g)'s own rounding. On CPU 1 the enqueue attaches U to /g and the root
    /// (0 + U).
    #[test]
    fn a_wakeup_migration_leaves_through_removed_and_the_blocked_update() {
        let mut k = kern("v6.18 NO_DELAY_DEQUEUE", 2);
        let a = hog(&mut k, "/g", 0, None);
        let b = hog(&mut k, "/g", 0, None);
        k.run_until(300_000_000);
        let t = if k.rqs[0].curr == a { b } else { a };
        let (root0, root1) = (k.rqs[0].cfs, k.rqs[1].cfs);
        k.update_rq_clock(0);
        assert!(k.dequeue_task(0, t, DEQUEUE_SLEEP));
        k.tasks[t.index()].on_rq = OnRq::No;
        k.tasks[t.index()].state = TaskState::Interruptible;
        let before0 = k.cfs[root0.index()].avg.util_avg;
        let u = k.se[se_of(&k, t).index()].avg.util_avg;
        assert!((400..=620).contains(&u), "half a CPU: {u}");
        k.tasks[t.index()].cpus_allowed = CpuMask::first_n(2);
        k.tasks[t.index()].nr_cpus_allowed = 2;
        k.set_task_cpu(t, 1, 0);
        let g = k.cgroup_lookup("/g").unwrap();
        let q0 = k.tgs[g.index()].cfs_rq[0];
        assert_eq!(k.cfs[q0.index()].removed.util_avg, u);
        assert_eq!(k.cfs[root0.index()].avg.util_avg, before0);
        k.sched_balance_update_blocked_averages(0);
        let drop = before0 as i64 - k.cfs[root0.index()].avg.util_avg as i64;
        assert!((drop - u as i64).abs() <= 8, "CPU 0 lost {drop}, U = {u}");
        k.update_rq_clock(1);
        k.tasks[t.index()].state = TaskState::Running;
        k.activate_task(1, t, ENQUEUE_WAKEUP | ENQUEUE_MIGRATED);
        assert_eq!(k.cfs[root1.index()].avg.util_avg, u);
        k.check_all_invariants();
    }

    /// Runs 2 ms, sleeps 3 ms, forever.
    struct Sleeper(bool);
    impl Program for Sleeper {
        fn next(&mut self, _cx: &mut Ctx<'_>, _l: SysResult) -> Op {
            self.0 = !self.0;
            if self.0 {
                Op::Run(2_000_000)
            } else {
                Op::Sleep(3_000_000)
            }
        }
    }

    /// Hierarchical PELT under churn: nested groups on 4 CPUs with hogs and sleepers that the
    /// wakeup path and the balancer move around, plus cgroup moves. The invariants run after
    /// every event; at the end every root's util_avg stays within what one CPU can hold
    /// (1024 plus the rounding of the attach sums) and no group entity carries util its cfs_rq
    /// has not got (after a propagation they are equal; in between they drift by at most a
    /// few units).
    #[test]
    fn group_signals_stay_bounded_under_migrations() {
        let mut k = kern("v6.18", 4);
        let mut tasks = Vec::new();
        for (i, path) in ["/a/b", "/a/c", "/d", "/a/b", "/d", "/a/c"]
            .iter()
            .enumerate()
        {
            let tg = k.cgroup_mkdir_p(path).unwrap();
            let attrs = TaskAttrs {
                tg: Some(tg),
                ..Default::default()
            };
            let prog: Box<dyn Program> = if i % 2 == 0 {
                Box::new(Hog)
            } else {
                Box::new(Sleeper(false))
            };
            let t = k.create_task(prog, &attrs, None, false);
            k.start_task(t);
            tasks.push(t);
        }
        for step in 1..=8u64 {
            k.run_until(step * 100_000_000);
            let t = tasks[(step as usize) % tasks.len()];
            let to = ["/a/b", "/d", "/", "/a/c"][(step as usize) % 4];
            k.cgroup_attach(t, to).unwrap();
            k.check_all_invariants();
        }
        k.run_until(1_000_000_000);
        for cpu in 0..4 {
            let u = k.cfs[k.rqs[cpu].cfs.index()].avg.util_avg;
            assert!(u <= 1024 + 16, "cpu {cpu}: root util {u}");
        }
        for g in 1..k.tgs.len() {
            for cpu in 0..4 {
                let ge = k.tgs[g].se[cpu].unwrap();
                let q = k.tgs[g].cfs_rq[cpu];
                let (gu, qu) = (k.se[ge.index()].avg.util_avg, k.cfs[q.index()].avg.util_avg);
                assert!(
                    gu <= qu + 16,
                    "{} cpu {cpu}: se {gu}, cfs_rq {qu}",
                    k.tgs[g].path
                );
            }
        }
    }

    /// se_update_runnable(): se(/g)'s PELT runnable input is /g's runnable count as of the
    /// last enqueue/dequeue walk through it: 2 with two hogs queued, 1 once the waiting one
    /// sleeps (really dequeued: NO_DELAY_DEQUEUE).
    #[test]
    fn the_group_entity_runnable_input_follows_the_walks() {
        let mut k = kern("v6.18 NO_DELAY_DEQUEUE", 1);
        let a = hog(&mut k, "/g", 0, None);
        let b = hog(&mut k, "/g", 0, None);
        k.run_until(10_000_000);
        let g = k.cgroup_lookup("/g").unwrap();
        let ge = k.tgs[g.index()].se[0].unwrap();
        assert_eq!(k.se[ge.index()].runnable_weight, 2);
        let t = if k.rqs[0].curr == a { b } else { a };
        k.update_rq_clock(0);
        assert!(k.dequeue_task(0, t, DEQUEUE_SLEEP));
        assert_eq!(k.se[ge.index()].runnable_weight, 1);
    }
}
