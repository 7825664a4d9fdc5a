//! End-to-end checks of SMP wakeup and fork placement (smp.md §1–§2): small simulations whose
//! placement outcome follows from the spec's rules, computed by hand beside each assertion.

use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::Platform;
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::*;
use schedlab_trace::{TraceEvent, TraceRecord};
use std::cell::RefCell;
use std::rc::Rc;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// Runs forever.
struct Hog;
impl Program for Hog {
    fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        Op::Run(1_000_000_000_000)
    }
}

/// Runs `run` ns, then sleeps `sleep` ns (relative to the end of the run), forever; records
/// the CPU of every run.
struct RunSleep {
    run: u64,
    sleep: u64,
    running: bool,
    cpus: Rc<RefCell<Vec<usize>>>,
}
impl Program for RunSleep {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.running = !self.running;
        if self.running {
            self.cpus.borrow_mut().push(cx.cpu());
            Op::Run(self.run)
        } else {
            Op::SleepUntil(cx.now() + self.sleep)
        }
    }
}

fn kernel(spec: &str, m: MachineDesc) -> Kernel {
    let mut k = Kernel::new(KernelConfig::parse(spec).unwrap(), m, 1).unwrap();
    k.strict = true;
    k.check_invariants = true;
    k
}

/// `smp:N` with zero costs at HZ 1000.
fn ideal(spec: &str, n: usize) -> Kernel {
    kernel(spec, MachineDesc::ideal(n, 1000, PreemptModel::Full))
}

fn attrs(name: &str, policy: Policy, cpus: Option<CpuMask>) -> TaskAttrs {
    TaskAttrs {
        comm: Some(name.to_string()),
        policy: Some(policy),
        cpus,
        ..Default::default()
    }
}

fn run_sleep(run: u64, sleep: u64) -> (Box<RunSleep>, Rc<RefCell<Vec<usize>>>) {
    let cpus = Rc::new(RefCell::new(Vec::new()));
    let p = RunSleep {
        run,
        sleep,
        running: false,
        cpus: cpus.clone(),
    };
    (Box::new(p), cpus)
}

#[test]
fn two_hogs_on_xeon_fork_onto_different_cores() {
    // xeon-2s-64: SMT{n, n+32}, MC{socket}, NUMA{0-63} (distance 21: keeps SD_BALANCE_FORK).
    // Both hogs are forked from CPU0 (slow path from the NUMA level).
    // Hog A: all idle -> NUMA: local node has_spare, sum_nr_running + 1 = 1 ≤ imb_numa_nr 4
    // and idle difference 0 -> stay; MC and SMT: local groups as idle as any -> CPU0.
    // Hog B: NUMA: local node 31 idle vs 32 -> difference 1, 1 + 1 ≤ 4 -> stay local; MC:
    // local core {0,32} has 1 idle CPU, core {1,33} has 2 -> idlest core {1,33} -> its first
    // idle CPU (equal exit latency and idle stamp) CPU1; SMT{1,33}: {1} vs {33} equally
    // idle -> CPU1. So: different cores, same node, not SMT siblings.
    for v in ["v6.6", "v6.12", "v6.18", "v7.0", "v7.1"] {
        let p = Platform::builtin("xeon-2s-64").unwrap();
        let mut k = kernel(v, MachineDesc::from_platform(&p));
        let a = k.create_task(
            Box::new(Hog),
            &attrs("A", Policy::Normal, None),
            None,
            false,
        );
        k.start_task(a);
        let b = k.create_task(
            Box::new(Hog),
            &attrs("B", Policy::Normal, None),
            None,
            false,
        );
        k.start_task(b);
        k.run_until(20 * MS);
        let (ca, cb) = (k.tasks[a.index()].cpu, k.tasks[b.index()].cpu);
        assert_ne!(ca, cb, "{v}");
        assert!(
            !k.machine.smt_mask[ca].contains(cb),
            "{v}: {ca} and {cb} are siblings"
        );
        assert_eq!((ca, cb), (0, 1), "{v}");
        for t in [a, b] {
            assert_eq!(k.rqs[k.tasks[t.index()].cpu].curr, t, "{v}: both hogs run");
        }
    }
}

/// Collects the target CPU of every `sched_wakeup`/`sched_wakeup_new` of each pid.
#[derive(Default)]
struct Wakeups(Vec<(i32, u32)>);
struct Sink(Rc<RefCell<Wakeups>>);
impl TraceSink for Sink {
    fn record(&mut self, r: &TraceRecord<&str>) {
        match &r.event {
            TraceEvent::SchedWakeup {
                pid, target_cpu, ..
            }
            | TraceEvent::SchedWakeupNew {
                pid, target_cpu, ..
            } => self.0.borrow_mut().0.push((*pid, *target_cpu)),
            _ => {}
        }
    }
}

fn wakeups(k: &mut Kernel) -> Rc<RefCell<Wakeups>> {
    let w = Rc::new(RefCell::new(Wakeups::default()));
    k.set_trace(Box::new(Sink(w.clone())));
    w
}

fn targets_of(w: &Rc<RefCell<Wakeups>>, k: &Kernel, t: TaskId) -> Vec<u32> {
    let pid = k.tasks[t.index()].pid;
    w.borrow()
        .0
        .iter()
        .filter(|(p, _)| *p == pid)
        .map(|(_, c)| *c)
        .collect()
}

/// Runs 50 µs, forks the SCHED_IDLE hog I pinned to CPU0, then sleeps 200 µs / runs 50 µs
/// forever. I is forked right before the sleep, at the parent's vruntime, so the parent
/// blocks with zero lag (eligible) and is dequeued for real (no delayed in-place wakeup).
struct ForkIdleHogThenSleep(u32);
impl Program for ForkIdleHogThenSleep {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.0 += 1;
        match self.0 {
            1 => Op::Run(50 * US),
            2 => Op::Spawn(Box::new(Spawn {
                program: Box::new(Hog),
                thread: false,
                attrs: attrs("I", Policy::Idle, Some(CpuMask::single(0))),
            })),
            n if n % 2 == 1 => Op::SleepUntil(cx.now() + 200 * US),
            _ => Op::Run(50 * US),
        }
    }
}

/// P (policy `policy`) starts alone on CPU0 at t = 0, forks I (CPU0) and sleeps; at 250 µs
/// its hrtimer fires on CPU0, which then runs only I; CPU1 is idle. The wakeup has
/// this_cpu = prev = target = CPU0 (no wake_affine). Returns the target CPU of each
/// placement of P until 900 µs (before the first tick).
fn sched_idle_wakee_targets(spec: &str, policy: Policy) -> Vec<u32> {
    let mut k = ideal(spec, 2);
    let w = wakeups(&mut k);
    let p = k.create_task(
        Box::new(ForkIdleHogThenSleep(0)),
        &attrs("P", policy, None),
        None,
        false,
    );
    k.start_task_as_wakeup(p);
    k.run_until(900 * US);
    assert!(
        k.task_by_pid(k.tasks[p.index()].pid + 1).is_some(),
        "I forked"
    );
    targets_of(&w, &k, p)
}

#[test]
fn sched_idle_wakee_skips_sched_idle_cpu_with_fd54d81c2c0e() {
    // First placement: all CPUs idle -> rule 1 -> CPU0. At 250 µs CPU0 runs only I.
    // Without fd54d81c2c0e: rule 1 accepts CPU0 (sched_idle_cpu) -> P shares CPU0 with I.
    for v in ["v6.6", "v6.12", "v6.18", "v7.0", "v7.1 -fd54d81c2c0e"] {
        let t = sched_idle_wakee_targets(v, Policy::Idle);
        assert!(t.len() >= 2, "{v}: {t:?}");
        assert_eq!(t[..2], [0, 0], "{v}: {t:?}");
    }
    // With it: choose_sched_idle_rq(CPU0, P) is false for a SCHED_IDLE wakee -> rules 1, 2,
    // 4 fail, the LLC scan from CPU1 (nr_idle_scan 2 -> nr 3) finds CPU1 idle; the later
    // wakeups find prev CPU1 idle -> rule 1 -> CPU1.
    for v in ["v7.1", "v7.0 +fd54d81c2c0e", "v6.12 +fd54d81c2c0e"] {
        let t = sched_idle_wakee_targets(v, Policy::Idle);
        assert!(t.len() >= 3, "{v}: {t:?}");
        assert_eq!(t[0], 0, "{v}: {t:?}");
        assert!(t[1..].iter().all(|&c| c == 1), "{v}: {t:?}");
    }
}

#[test]
fn sched_normal_wakee_still_takes_sched_idle_cpu() {
    // A SCHED_NORMAL wakee preempts the SCHED_IDLE hog: CPU0 (running only I) is idle
    // enough in every version -> rule 1 -> CPU0.
    for v in ["v7.0", "v7.1"] {
        let t = sched_idle_wakee_targets(v, Policy::Normal);
        assert!(t.len() >= 2, "{v}: {t:?}");
        assert_eq!(t[..2], [0, 0], "{v}: {t:?}");
    }
}

/// B and hog A (pinned to CPU0) start on CPU0 at t = 0 with zero lag; B (added first) is
/// picked, runs 200 µs (slice protection) and sleeps until 300 µs. At its block B's vruntime
/// (200 µs) is ahead of V = (200 + 0)/2 µs: ineligible. CPU1 stays idle. Returns the target
/// CPUs of B's placements and the kernel at 350 µs.
fn ineligible_sleeper(spec: &str) -> (Vec<u32>, TaskId, Kernel) {
    let mut k = ideal(spec, 2);
    let w = wakeups(&mut k);
    let (prog, _cpus) = run_sleep(200 * US, 100 * US);
    let b = k.create_task(prog, &attrs("B", Policy::Normal, None), None, false);
    k.start_task_as_wakeup(b);
    let a = k.create_task(
        Box::new(Hog),
        &attrs("A", Policy::Normal, Some(CpuMask::single(0))),
        None,
        false,
    );
    k.start_task_as_wakeup(a);
    k.run_until(350 * US);
    let t = targets_of(&w, &k, b);
    (t, b, k)
}

#[test]
fn ineligible_sleeper_woken_in_place_v6_12_placed_on_idle_cpu_v6_6() {
    // v6.12+ (DELAY_DEQUEUE): B was kept queued as sched_delayed; the wakeup goes through
    // ttwu_runnable: requeued in place on CPU0 (busy with A), no select_task_rq, no
    // migration; CPU1 stays idle.
    for v in ["v6.12", "v6.18", "v7.1"] {
        let (t, b, k) = ineligible_sleeper(v);
        assert_eq!(t, vec![0, 0], "{v}");
        assert_eq!(k.tasks[b.index()].cpu, 0, "{v}");
        assert_eq!(k.se[k.tasks[b.index()].se.index()].nr_migrations, 0, "{v}");
        assert_eq!(k.stats.ttwu_delayed_requeue, 1, "{v}");
        assert_eq!(k.rqs[1].curr, k.rqs[1].idle, "{v}: CPU1 stays idle");
    }
    // v6.6 (and NO_DELAY_DEQUEUE): B was dequeued at its block; the timer wakeup on CPU0
    // (this = prev = target = 0) goes through select_idle_sibling: CPU0 busy, prev = target,
    // recent = prev, scan from CPU1 (nr_idle_scan 2 -> nr 3): CPU1 idle -> CPU1.
    for v in ["v6.6", "v6.12 NO_DELAY_DEQUEUE"] {
        let (t, b, k) = ineligible_sleeper(v);
        assert_eq!(t, vec![0, 1], "{v}");
        assert_eq!(k.tasks[b.index()].cpu, 1, "{v}");
        assert_eq!(k.stats.ttwu_delayed_requeue, 0, "{v}");
        assert_eq!(k.rqs[1].curr, b, "{v}: B runs on CPU1");
    }
}
