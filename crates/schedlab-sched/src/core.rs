//! The simulated kernel's core (kernel/sched/core.c): runqueues, the class table in kernel
//! order, `__schedule`, `try_to_wake_up` (with `ttwu_runnable`), `wake_up_new_task`, exit, the
//! tick, `resched_curr[_lazy]` and the preemption models (rt-dl.md §1) — plus the execution of
//! task programs on simulated CPUs (DESIGN.md §4).
//!
//! Execution model. A CPU runs its current task's *segments*: user work, kernel work of a
//! system call, an interrupt handler, or the cost of switching in. A segment's end is an event;
//! an interrupt (tick, IPI) splits the running segment. A reschedule request takes effect at the
//! next preemption point allowed by the model: return to user, interrupt exit to user mode,
//! kernel preemption points under FULL/LAZY/RT, or blocking (rt-dl.md §1.7).
//!
//! Event order at one instant (load-bearing, see `Ev::rank`): segment ends first (work that
//! completes exactly at t is done at t), then hrtimer expiries, then IPIs, then ticks, then the
//! end of the run.

use crate::ipc::{FutexId, Ipc, MutexId, PipeId, SockId};
use crate::presets::{KernelConfig, PreemptModel};
use crate::sched::*;
use crate::stats::{CpuStats, KernelStats, TaskStats};
use crate::syscalls::{PollFd, Program, Spawn, SysResult, TaskAttrs};
use crate::tree::TreeOrder;
use schedlab_engine::{EventQueue, Rng, RngStreams};
use schedlab_platform::cost::CostModel;
use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::topology::SchedDomains;
use schedlab_platform::{IdleState, Platform};
use schedlab_trace::TraceRecord;
use std::collections::VecDeque;

/// What the kernel needs to know about the machine (built from a platform profile).
#[derive(Clone, Debug)]
pub struct MachineDesc {
    pub name: String,
    pub ncpus: usize,
    pub hz: u32,
    pub preempt_default: PreemptModel,
    /// `arch_scale_cpu_capacity` per CPU.
    pub capacity_orig: Vec<u64>,
    /// `arch_scale_freq_capacity` per CPU (1024 = running at f_max).
    pub freq_scale: Vec<u64>,
    /// Execution speed per CPU relative to the reference core (1024 = reference at f_max):
    /// `Op::Run(W)` takes `W * 1024 / speed` of wall time.
    pub speed: Vec<u64>,
    /// Cost model per CPU, already resolved for that CPU (wall ns).
    pub costs: Vec<CostModel>,
    /// Idle states per CPU (shallowest first).
    pub idle_states: Vec<Vec<IdleState>>,
    /// Exit latency of the idle state an idle CPU sits in (ns).
    pub idle_exit_ns: Vec<u64>,
    /// Whether the idle loop polls (no IPI needed to wake it).
    pub idle_polling: Vec<bool>,
    /// Last-level-cache id per CPU (`sd_llc_id`).
    pub llc_id: Vec<usize>,
    /// Page size of the kernel build (pipe slot size).
    pub page_size: u32,
    /// CPUs removed from scheduling domains (isolcpus=domain).
    pub isolated: CpuMask,
    /// Throughput of each SMT sibling while both are busy, parts per million.
    pub smt_throughput_ppm: u32,
    /// SMT siblings per CPU (including itself).
    pub smt_mask: Vec<CpuMask>,
    /// The sched-domain hierarchy (kernel/sched/topology.c).
    pub domains: SchedDomains,
    /// Frequency of the counter behind `sched_clock()`: the runqueue clock moves in its steps.
    pub sched_clock_hz: u64,
}

impl MachineDesc {
    /// Builds the kernel's view of a platform profile.
    pub fn from_platform(p: &Platform) -> MachineDesc {
        let n = p.nr_cpus();
        let domains = p.sched_domains();
        let cap: Vec<u64> = (0..n).map(|c| p.capacity_orig(c) as u64).collect();
        let fscale: Vec<u64> = (0..n)
            .map(|c| p.arch_scale_freq_capacity(c) as u64)
            .collect();
        let speed = (0..n).map(|c| cap[c] * fscale[c] / 1024).collect();
        let idle_states: Vec<Vec<IdleState>> = (0..n).map(|c| p.idle_states(c).to_vec()).collect();
        let idle_exit_ns = idle_states
            .iter()
            .map(|s| s.first().map(|st| st.exit_latency_ns.0).unwrap_or(0))
            .collect();
        let idle_polling = idle_states
            .iter()
            .map(|s| s.first().map(|st| st.polling).unwrap_or(false))
            .collect();
        MachineDesc {
            name: p.name.clone(),
            ncpus: n,
            hz: p.hz,
            preempt_default: p.preempt,
            capacity_orig: cap,
            freq_scale: fscale,
            speed,
            costs: (0..n).map(|c| p.costs(c).clone()).collect(),
            idle_states,
            idle_exit_ns,
            idle_polling,
            llc_id: (0..n).map(|c| domains.per_cpu[c].sd_llc_id).collect(),
            page_size: 4096,
            isolated: p.domain_isolated(),
            smt_throughput_ppm: p.smt_throughput_ppm,
            smt_mask: (0..n).map(|c| p.cpu_smt_mask(c)).collect(),
            domains,
            sched_clock_hz: p.sched_clock_hz,
        }
    }

    /// A plain N-CPU machine with zero costs: the setting of the spec's test vectors.
    pub fn ideal(ncpus: usize, hz: u32, preempt: PreemptModel) -> MachineDesc {
        let p = Platform::smp(ncpus).expect("smp:N platform");
        let mut m = MachineDesc::from_platform(&p);
        m.hz = hz;
        m.preempt_default = preempt;
        m.costs = vec![CostModel::zero(); ncpus];
        m.idle_exit_ns = vec![0; ncpus];
        m.idle_polling = vec![false; ncpus];
        m.sched_clock_hz = 1_000_000_000;
        m
    }
}

/// Simulator events. See the module docs for the order at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// The running segment on `cpu` ends (ignored if `gen` is stale).
    SegEnd { cpu: u32, gen: u64 },
    /// An hrtimer's hard expiry.
    Timer { id: u32, gen: u32 },
    /// The expiry handler of a timer that fired on an idle CPU, once the CPU has left its
    /// idle state and run the interrupt up to the wakeup.
    TimerIrq { id: u32, gen: u32 },
    /// An IPI arrives on `cpu` (wake list and/or reschedule).
    Ipi { cpu: u32 },
    /// Scheduler tick on `cpu`.
    Tick { cpu: u32, gen: u32 },
    /// End of the simulation.
    Stop,
}

impl Ev {
    fn rank(&self) -> u8 {
        match self {
            Ev::SegEnd { .. } => 0,
            Ev::Timer { .. } | Ev::TimerIrq { .. } => 1,
            Ev::Ipi { .. } => 2,
            Ev::Tick { .. } => 3,
            Ev::Stop => 4,
        }
    }
}

/// Privilege of a running segment, for the preemption rules of rt-dl.md §1.7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    User,
    /// Preemptible kernel code (a system call).
    Kernel,
    /// Not preemptible (interrupt handler, context switch, raw spinlock).
    NoPreempt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SegKind {
    Work,
    /// An interrupt handler; on completion, the interrupt exit is a preemption point with the
    /// mode of the interrupted segment.
    Irq,
    /// The cost of switching in; on completion `schedule()` returns.
    SwitchIn,
    /// Optimistic spinning on a kernel mutex (`mutex_optimistic_spin`, preemption disabled):
    /// open-ended, ended by the unlock, by the owner leaving its CPU, or by `need_resched()`.
    Spin,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Seg {
    /// Remaining work in ns at the reference core (`Irq`/`SwitchIn`: wall ns on this CPU).
    pub rem: u64,
    pub mode: Mode,
    pub kind: SegKind,
    /// `RunWall`: the segment ends at this wall time whatever the work done.
    pub until: Option<u64>,
}

/// The rest of the current operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    /// CPU work (user or kernel, ns at the reference core).
    Cpu(u64, Mode),
    /// Busy loop until a wall time.
    Wall(u64),
    /// A side effect of a system call.
    Do(Effect),
    /// Return to user space with a result (a preemption point).
    Ret(SysResult),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Effect {
    /// `mutex_lock()`: take, spin on the owner, or sleep (workloads.md §1.8).
    MutexLock {
        m: MutexId,
    },
    PipeWrite {
        pipe: PipeId,
        bytes: u32,
        /// The write has already slept once (`wake_next_writer`).
        blocked: bool,
        /// The system-call exit share of the cost, run after the wakeups (see
        /// `plan_pipe_op`).
        exit: u64,
    },
    PipeRead {
        pipe: PipeId,
        bytes: u32,
        blocked: bool,
        exit: u64,
    },
    /// Sleep on a pipe's writer (`write`) or reader queue unless it is ready, then retry.
    PipeWait {
        pipe: PipeId,
        bytes: u32,
        write: bool,
        exit: u64,
    },
    SockSend {
        sock: SockId,
        bytes: u32,
    },
    SockRecv {
        sock: SockId,
        bytes: u32,
    },
    Poll {
        fd: PollFd,
    },
    FutexWait {
        futex: FutexId,
        val: u32,
    },
    FutexWake {
        futex: FutexId,
        nr: u32,
    },
    SleepUntil(u64),
    /// The block of a task that was woken (its timer fired, its futex was posted…): returns.
    Resumed,
    Yield,
    SpawnSlot(u32),
    Exit,
    WaitChild,
    SetNice(i32),
    SetSlice(u64),
    /// `sched_exec()` at the start of `execve()`: exec balancing.
    SchedExec,
    /// The rest of `execve()` (`c_exec`, charged on the CPU the task now runs on).
    ExecImage,
    /// Second half of a local wakeup: the preemption check after the waker's enqueue work.
    WakeupPreempt {
        p: TaskId,
        wake_flags: u32,
    },
}

/// The steps left of a task's current operation, first step last: a stack, so that taking the
/// next step and pushing steps in front (the common operations) are a `Vec` pop and push.
#[derive(Default)]
pub(crate) struct Plan {
    rev: Vec<Step>,
}

impl Plan {
    /// Takes the next step.
    #[inline]
    pub fn pop_front(&mut self) -> Option<Step> {
        self.rev.pop()
    }

    /// Makes `s` the next step.
    #[inline]
    pub fn push_front(&mut self, s: Step) {
        self.rev.push(s);
    }

    /// Appends `s` after every other step.
    pub fn push_back(&mut self, s: Step) {
        self.rev.insert(0, s);
    }

    /// Replaces an empty plan by `steps` (in order); returns the old (empty) buffer, cleared,
    /// for reuse.
    #[inline]
    pub fn replace_empty(&mut self, mut steps: Vec<Step>) -> Vec<Step> {
        debug_assert!(self.rev.is_empty());
        steps.reverse();
        std::mem::replace(&mut self.rev, steps)
    }
}

/// A task's execution state.
#[derive(Default)]
pub(crate) struct Exec {
    /// Segments stack: the top one is executing (interrupts and switch-in push on top).
    pub segs: Vec<Seg>,
    pub plan: Plan,
    pub last: Option<SysResult>,
    /// The kernel mutex the task owns (at most one: a pipe's `pipe->mutex`).
    pub lock_held: Option<MutexId>,
}

/// `struct task_struct` (the parts the model needs) plus the program it runs.
pub struct Task {
    pub pid: i32,
    pub tgid: i32,
    pub comm: String,
    pub policy: Policy,
    pub nice: i32,
    pub rt_priority: u32,
    pub class: SchedClass,
    pub se: SeId,
    pub tg: TgId,
    pub cpu: usize,
    pub wake_cpu: usize,
    pub recent_used_cpu: usize,
    pub on_rq: OnRq,
    pub on_cpu: bool,
    pub state: TaskState,
    pub cpus_allowed: CpuMask,
    pub nr_cpus_allowed: u32,
    pub mm: u32,
    pub parent: Option<TaskId>,
    pub children: u32,
    pub zombies: VecDeque<TaskId>,
    pub waiting_child: bool,
    pub wakee_flips: u32,
    pub wakee_flip_decay_ts: u64,
    pub last_wakee: Option<TaskId>,
    pub sched_reset_on_fork: bool,
    pub timer_slack_ns: u64,
    pub is_idle_task: bool,
    /// `PF_KTHREAD`: a kernel thread (a per-CPU kthread when also pinned to one CPU, which
    /// `select_idle_sibling` lets the wakee stack behind, smp.md §2.5 rule 3).
    pub kthread: bool,
    pub rng: Rng,
    pub(crate) prog: Option<Box<dyn Program>>,
    pub(crate) exec: Exec,
    pub stats: TaskStats,
    /// Spawn requests parked while the parent pays the fork cost.
    pub(crate) spawn_slots: Vec<Option<Box<Spawn>>>,
    /// Last CPU the task ran on (for the migration cache penalty).
    pub last_ran_cpu: Option<usize>,
}

impl Task {
    /// `p->prio` (rt-dl.md §1.2).
    pub fn prio(&self) -> i32 {
        match self.policy {
            Policy::Deadline => -1,
            Policy::Fifo | Policy::Rr => 99 - self.rt_priority as i32,
            _ => 120 + self.nice,
        }
    }
}

/// `struct rq`.
pub struct Rq {
    pub cpu: usize,
    pub curr: TaskId,
    pub idle: TaskId,
    pub cfs: CfsRqId,
    pub nr_running: u32,
    pub resched: Resched,
    pub ttwu_pending: bool,
    pub wake_list: Vec<(TaskId, u32)>,
    pub ipi_pending: bool,
    /// Generation of the armed segment end; bumped whenever the running segment changes.
    pub gen: u64,
    /// Wall time at which the top segment started (or resumed) running.
    pub seg_start: u64,
    pub tick_armed: bool,
    /// Generation of the armed tick (a tick stopped at idle entry is ignored when it fires).
    pub tick_gen: u32,
    pub idle_since: Option<u64>,
    pub avg_idle: u64,
    pub idle_stamp: u64,
    pub max_idle_balance_cost: u64,
    pub next_balance: u64,
    pub speed: u64,
    pub capacity_orig: u64,
    pub stats: CpuStats,
    /// hrtimers armed on this CPU whose soft expiry (range start) has passed or will pass,
    /// expired early by any other timer interrupt (timer slack, workloads.md §1.6).
    pub range_timers: Vec<u32>,
    /// `rq->clock_task`: the time the fair class sees, refreshed only by `update_rq_clock()`
    /// at the points where the kernel calls it (taking the runqueue lock, `__schedule`, the
    /// tick...). Work done between two refreshes under one lock hold is invisible to
    /// `update_curr()`: in `ttwu_do_activate()` the enqueue and the preemption check read the
    /// same clock, so the waker's own enqueue work never counts against its eligibility.
    pub clock_task: u64,
    /// `rq->clock_update_flags`, the one bit the simulation needs: `RQCF_REQ_SKIP`, set by
    /// `rq_clock_skip_update()` when a wakeup (or `sched_yield()`) has just updated the clock
    /// and asked for a reschedule. The next `__schedule()` promotes it to `RQCF_ACT_SKIP` and
    /// does not update the clock, so the time from the request to the switch is charged to
    /// the *next* task (its `exec_start` is the stale clock), not to the one switched out.
    pub clock_update_flags: u8,
    /// Work queued for this CPU's stopper by `sched_exec()`: `migration_cpu_stop` moving the
    /// task to the CPU exec balancing chose. It runs at the next `__schedule()` here, before
    /// any class picks (the stop class).
    pub stop_migration: Option<(TaskId, usize)>,
}

/// An hrtimer (nanosleep).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HrTimer {
    pub task: TaskId,
    pub soft: u64,
    /// Hard expiry (its event is in the queue); kept for state dumps.
    #[allow(dead_code)]
    pub hard: u64,
    pub cpu: usize,
    pub active: bool,
    /// Bumped each time the slot is reused: a queued expiry of an earlier use is ignored.
    pub gen: u32,
}

/// Where a trace record goes.
pub trait TraceSink {
    fn record(&mut self, r: &TraceRecord);
}

/// The simulated kernel of one run.
pub struct Kernel {
    pub cfg: KernelConfig,
    pub ncpus: usize,
    pub now: u64,
    pub hz: u32,
    pub tick_nsec: u64,
    pub preempt: PreemptModel,
    pub base_slice: u64,
    pub normalized_base_slice: u64,
    pub tree_order: TreeOrder,
    pub tasks: Vec<Task>,
    pub se: Vec<SchedEntity>,
    pub cfs: Vec<CfsRq>,
    pub tgs: Vec<TaskGroup>,
    pub rqs: Vec<Rq>,
    pub ipc: Ipc,
    pub costs: Vec<CostModel>,
    pub machine: MachineDesc,
    pub pipe_page_size: u32,
    pub stats: KernelStats,
    /// A violated invariant panics with a state dump (tests); otherwise it is counted.
    pub strict: bool,
    /// A violated invariant ends the run at the end of the event in which it happened
    /// (`--strict`: the CLI reports `first_warning` in one line and exits 1).
    pub stop_on_warning: bool,
    pub warnings: u64,
    pub first_warning: Option<String>,
    pub(crate) events: EventQueue<Ev>,
    pub(crate) timers: Vec<HrTimer>,
    /// Slots of `timers` whose timer has expired, for reuse.
    pub(crate) free_timers: Vec<u32>,
    pub(crate) trace: Option<Box<dyn TraceSink>>,
    pub(crate) rng_streams: RngStreams,
    pub(crate) jitter_rng: Rng,
    /// Set while the event loop runs a handler that ends by continuing its CPU (see
    /// `run_ahead_to_segment_end`).
    pub(crate) run_ahead: bool,
    /// Whether run-ahead may be used at all (tests compare runs with and without it).
    pub sim_run_ahead: bool,
    /// Nesting of `cpu_continue` calls.
    pub(crate) cont_depth: u32,
    /// Scratch buffer for planning one operation (see `plan_op`).
    pub(crate) plan_scratch: Vec<Step>,
    /// Scratch buffer for the tasks one system call wakes (pipe and socket wake lists).
    pub(crate) wake_scratch: Vec<TaskId>,
    /// Jitter tables by σ (platforms use one or two shapes).
    jitter_tables: Vec<std::sync::Arc<schedlab_engine::rng::LognormalTable>>,
    /// Per-CPU random streams (`prandom_u32_state` of newidle balancing).
    #[allow(dead_code)]
    pub(crate) cpu_rng: Vec<Rng>,
    next_pid: i32,
    next_mm: u32,
    pub end: u64,
    /// Full invariant check after every event (expensive; tests and --strict).
    pub check_invariants: bool,
    /// The CPU whose code is executing right now (a resched on it needs no IPI).
    pub(crate) executing: Option<usize>,
    /// Wakeup placement state (select.rs).
    pub sel: crate::select::SelectState,
    /// Load-balancing state (balance.rs).
    pub lb: crate::balance::BalanceState,
    /// Tasks created and not yet exited (the run ends early when it drops to zero).
    pub nr_live: u32,
    /// Whether the run stopped because every task had exited.
    pub all_exited_at: Option<u64>,
}

impl Kernel {
    /// Builds a kernel for `machine` with configuration `cfg`.
    pub fn new(cfg: KernelConfig, machine: MachineDesc, seed: u64) -> Result<Kernel, String> {
        let ncpus = machine.ncpus;
        assert!(ncpus >= 1);
        let hz = cfg.hz.unwrap_or(machine.hz);
        let preempt = cfg.resolve_preempt(machine.preempt_default)?;
        let online = ncpus as u32;
        let base_slice = cfg.base_slice_ns(online);
        let normalized_base_slice = cfg.normalized_base_slice();
        let tree_order = if cfg.has(crate::patches::Patch::DeadlineSortedTree) {
            TreeOrder::Deadline
        } else {
            TreeOrder::Vruntime
        };
        let streams = RngStreams::new(seed);
        let sim_run_ahead = cfg.sim(crate::features::SimFeature::SIM_RUN_AHEAD);
        let mut k = Kernel {
            cfg,
            ncpus,
            now: 0,
            hz,
            tick_nsec: 1_000_000_000 / hz as u64,
            preempt,
            base_slice,
            normalized_base_slice,
            tree_order,
            tasks: Vec::new(),
            se: Vec::new(),
            cfs: Vec::new(),
            tgs: Vec::new(),
            rqs: Vec::new(),
            ipc: Ipc::default(),
            costs: machine.costs.clone(),
            pipe_page_size: machine.page_size,
            machine,
            stats: KernelStats::default(),
            strict: false,
            stop_on_warning: false,
            warnings: 0,
            first_warning: None,
            events: EventQueue::new(),
            timers: Vec::new(),
            free_timers: Vec::new(),
            trace: None,
            rng_streams: streams,
            jitter_rng: streams.stream("costs/jitter"),
            jitter_tables: Vec::new(),
            plan_scratch: Vec::with_capacity(8),
            wake_scratch: Vec::with_capacity(8),
            run_ahead: false,
            sim_run_ahead,
            cont_depth: 0,
            cpu_rng: (0..ncpus)
                .map(|c| streams.stream(&format!("cpu/{c}")))
                .collect(),
            next_pid: 1000,
            next_mm: 1,
            end: u64::MAX,
            check_invariants: false,
            executing: None,
            sel: Default::default(),
            lb: Default::default(),
            nr_live: 0,
            all_exited_at: None,
        };
        // root task group with one root cfs_rq per CPU
        let mut root_cfs = Vec::new();
        for cpu in 0..ncpus {
            k.cfs.push(CfsRq::new(cpu, TgId(0)));
            root_cfs.push(CfsRqId::new(k.cfs.len() - 1));
        }
        k.tgs.push(TaskGroup {
            path: "/".to_string(),
            parent: None,
            shares: scale_load(1024),
            saved_shares: scale_load(1024),
            idle: false,
            cfs_rq: root_cfs.clone(),
            se: vec![None; ncpus],
            load_avg: 0,
        });
        for (cpu, &root) in root_cfs.iter().enumerate() {
            let idle = k.alloc_task(
                format!("swapper/{cpu}"),
                0,
                0,
                Policy::Normal,
                0,
                TgId(0),
                cpu,
            );
            k.tasks[idle.index()].is_idle_task = true;
            k.tasks[idle.index()].class = SchedClass::Idle;
            k.tasks[idle.index()].state = TaskState::Running;
            k.tasks[idle.index()].on_cpu = true;
            k.rqs.push(Rq {
                cpu,
                curr: idle,
                idle,
                cfs: root,
                nr_running: 0,
                resched: Resched::None,
                ttwu_pending: false,
                wake_list: Vec::new(),
                ipi_pending: false,
                stop_migration: None,
                gen: 0,
                seg_start: 0,
                tick_armed: false,
                tick_gen: 0,
                idle_since: Some(0),
                avg_idle: 2 * k.cfg.sysctl.migration_cost_ns,
                idle_stamp: 0,
                max_idle_balance_cost: k.cfg.sysctl.migration_cost_ns,
                next_balance: 0,
                speed: k.machine.speed[cpu],
                capacity_orig: k.machine.capacity_orig[cpu],
                stats: CpuStats::default(),
                range_timers: Vec::new(),
                clock_task: 0,
                clock_update_flags: 0,
            });
        }
        k.init_select_state();
        k.init_balance_state();
        Ok(k)
    }

    // ===================================================================== tasks

    #[allow(clippy::too_many_arguments)]
    fn alloc_task(
        &mut self,
        comm: String,
        pid: i32,
        tgid: i32,
        policy: Policy,
        nice: i32,
        tg: TgId,
        cpu: usize,
    ) -> TaskId {
        let id = TaskId::new(self.tasks.len());
        let cfs = self.tgs[tg.index()].cfs_rq[cpu];
        let mut se = SchedEntity::new(cfs);
        se.task = Some(id);
        se.parent = self.tgs[tg.index()].se[cpu];
        se.depth = se.parent.map(|p| self.se[p.index()].depth + 1).unwrap_or(0);
        self.se.push(se);
        let seid = SeId::new(self.se.len() - 1);
        let rng = self.rng_streams.stream(&format!("task/{}", pid));
        self.tasks.push(Task {
            pid,
            tgid,
            comm,
            policy,
            nice,
            rt_priority: 0,
            class: if policy.is_fair() {
                SchedClass::Fair
            } else if policy == Policy::Deadline {
                SchedClass::Dl
            } else {
                SchedClass::Rt
            },
            se: seid,
            tg,
            cpu,
            wake_cpu: cpu,
            recent_used_cpu: cpu,
            on_rq: OnRq::No,
            on_cpu: false,
            state: TaskState::New,
            cpus_allowed: CpuMask::first_n(self.ncpus),
            nr_cpus_allowed: self.ncpus as u32,
            mm: 0,
            parent: None,
            children: 0,
            zombies: VecDeque::new(),
            waiting_child: false,
            wakee_flips: 0,
            wakee_flip_decay_ts: 0,
            last_wakee: None,
            sched_reset_on_fork: false,
            timer_slack_ns: self.cfg.sysctl.timer_slack_ns,
            is_idle_task: false,
            kthread: false,
            rng,
            prog: None,
            exec: Exec::default(),
            stats: TaskStats::default(),
            spawn_slots: Vec::new(),
            last_ran_cpu: None,
        });
        id
    }

    /// Creates a task (not yet runnable) as the child of `parent` (or of the outside world).
    pub fn create_task(
        &mut self,
        program: Box<dyn Program>,
        attrs: &TaskAttrs,
        parent: Option<TaskId>,
        thread: bool,
    ) -> TaskId {
        let pid = self.next_pid;
        self.next_pid += 1;
        let (pcomm, ppol, pnice, prt, ptg, pcpu, pmm, ptgid, pmask) = match parent {
            Some(p) => {
                let t = &self.tasks[p.index()];
                (
                    t.comm.clone(),
                    t.policy,
                    t.nice,
                    t.rt_priority,
                    t.tg,
                    t.cpu,
                    t.mm,
                    t.tgid,
                    t.cpus_allowed.clone(),
                )
            }
            None => (
                "task".to_string(),
                Policy::Normal,
                0,
                0,
                TgId(0),
                0,
                0,
                pid,
                CpuMask::first_n(self.ncpus),
            ),
        };
        let policy = attrs.policy.unwrap_or(ppol);
        let nice = attrs.nice.unwrap_or(pnice);
        let tg = attrs.tg.unwrap_or(ptg);
        let comm = attrs.comm.clone().unwrap_or(pcomm);
        let tgid = if thread { ptgid } else { pid };
        let t = self.alloc_task(comm, pid, tgid, policy, nice, tg, pcpu);
        let mm = if thread && parent.is_some() {
            pmm
        } else {
            let m = self.next_mm;
            self.next_mm += 1;
            m
        };
        let allowed = attrs.cpus.clone().unwrap_or(pmask);
        {
            let task = &mut self.tasks[t.index()];
            task.rt_priority = attrs.rt_priority.unwrap_or(prt);
            task.mm = mm;
            task.parent = parent;
            task.nr_cpus_allowed = allowed.weight() as u32;
            task.cpus_allowed = allowed;
            task.prog = Some(program);
            task.sched_reset_on_fork = attrs.reset_on_fork.unwrap_or(false);
        }
        if let Some(p) = parent {
            self.tasks[p.index()].children += 1;
        }
        self.nr_live += 1;
        let (w, inv) = self.task_load_weight(t);
        let se = self.tasks[t.index()].se;
        self.se[se.index()].load = LoadWeight {
            weight: w,
            inv_weight: inv,
        };
        self.sched_fork_fair(t, parent);
        if let Some(s) = attrs.slice_ns {
            self.apply_custom_slice(t, s);
        }
        // the first CPU must be allowed
        if !self.tasks[t.index()].cpus_allowed.contains(pcpu) {
            let c = self.tasks[t.index()].cpus_allowed.first().unwrap_or(0);
            self.set_task_cpu_raw(t, c);
        }
        t
    }

    /// `sched_setattr()` runtime for a fair task: the custom slice (fair.md §3.2).
    pub(crate) fn apply_custom_slice(&mut self, t: TaskId, runtime: u64) {
        if !self.cfg.has(crate::patches::Patch::CustomSlice) {
            return;
        }
        let se = self.tasks[t.index()].se;
        let e = &mut self.se[se.index()];
        if runtime != 0 {
            e.custom_slice = true;
            e.slice = runtime.clamp(100_000, 100_000_000);
        } else {
            e.custom_slice = false;
            e.slice = self.base_slice;
        }
    }

    /// Moves a task's cpu field and its entity onto that CPU's cfs_rq of its group.
    pub(crate) fn set_task_cpu_raw(&mut self, t: TaskId, cpu: usize) {
        let tg = self.tasks[t.index()].tg;
        let se = self.tasks[t.index()].se;
        self.tasks[t.index()].cpu = cpu;
        self.tasks[t.index()].wake_cpu = cpu;
        let e = &mut self.se[se.index()];
        e.cfs_rq = self.tgs[tg.index()].cfs_rq[cpu];
        e.parent = self.tgs[tg.index()].se[cpu];
    }

    pub fn task_by_pid(&self, pid: i32) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| t.pid == pid && !t.is_idle_task)
            .map(TaskId::new)
    }

    // ===================================================================== run loop

    pub fn set_trace(&mut self, sink: Box<dyn TraceSink>) {
        self.trace = Some(sink);
    }

    pub fn take_trace(&mut self) -> Option<Box<dyn TraceSink>> {
        self.trace.take()
    }

    /// Starts a task created with `create_task` as a fork from outside (`wake_up_new_task`).
    pub fn start_task(&mut self, t: TaskId) {
        self.wake_up_new_task(t, true);
    }

    /// Starts a task as if it had just been woken with zero lag (the spec's scenario vectors:
    /// "tasks start at t=0 as wakeups with vlag = 0, not forks").
    pub fn start_task_as_wakeup(&mut self, t: TaskId) {
        self.wake_up_new_task(t, false);
    }

    /// Runs until simulated time `end` (ns), or until every task has exited. Can be called
    /// repeatedly. Returns the time it stopped at.
    pub fn run_until(&mut self, end: u64) -> u64 {
        self.end = end;
        self.events
            .push(schedlab_engine::SimTime(end), Ev::Stop.rank(), Ev::Stop);
        let mut stop = end;
        while let Some((t, ev)) = self.events.pop() {
            self.now = t.0;
            if let (0, Some(at)) = (self.nr_live, self.all_exited_at) {
                stop = at.min(end);
                break;
            }
            match ev {
                Ev::Stop => {
                    if t.0 >= end {
                        break;
                    }
                }
                Ev::SegEnd { cpu, gen } => {
                    self.run_ahead = self.sim_run_ahead;
                    self.on_seg_end(cpu as usize, gen);
                    self.run_ahead = false;
                }
                Ev::Timer { id, gen } => self.on_timer(id, gen),
                Ev::TimerIrq { id, gen } => self.on_timer_irq(id, gen),
                Ev::Ipi { cpu } => {
                    self.run_ahead = self.sim_run_ahead;
                    self.on_ipi(cpu as usize);
                    self.run_ahead = false;
                }
                Ev::Tick { cpu, gen } => {
                    self.run_ahead = self.sim_run_ahead;
                    self.on_tick(cpu as usize, gen);
                    self.run_ahead = false;
                }
            }
            self.stats.events += 1;
            if self.check_invariants {
                self.check_all_invariants();
            }
            if self.stop_on_warning && self.warnings > 0 {
                stop = self.now;
                break;
            }
        }
        self.now = stop;
        self.account_all(stop);
        stop
    }

    /// Brings time-based statistics up to `now` (idle time, runtime of running tasks).
    fn account_all(&mut self, now: u64) {
        for cpu in 0..self.ncpus {
            if let Some(s) = self.rqs[cpu].idle_since {
                self.rqs[cpu].stats.idle_ns += now - s;
                self.rqs[cpu].idle_since = Some(now);
            }
            let curr = self.rqs[cpu].curr;
            if !self.tasks[curr.index()].is_idle_task {
                self.progress_segment(cpu);
                self.update_rq_clock(cpu);
                // progress_segment retired the pending SegEnd (generation bump); arm the
                // remainder again so that a later run_until continues the segment.
                if !self.tasks[curr.index()].exec.segs.is_empty() {
                    self.arm_segment(cpu);
                }
                let mut e = Some(self.tasks[curr.index()].se);
                while let Some(se) = e {
                    let c = self.se[se.index()].cfs_rq;
                    self.update_curr(c);
                    e = self.se[se.index()].parent;
                }
            }
        }
    }

    pub fn events_processed(&self) -> u64 {
        self.stats.events
    }

    pub(crate) fn push_event(&mut self, at: u64, ev: Ev) {
        self.events
            .push(schedlab_engine::SimTime(at), ev.rank(), ev);
    }

    #[inline]
    pub(crate) fn jiffies(&self) -> u64 {
        self.now / self.tick_nsec
    }

    /// A cost from the CPU's model with the configured jitter.
    pub(crate) fn cost(&mut self, cpu: usize, f: impl Fn(&CostModel) -> u64) -> u64 {
        let v = f(&self.costs[cpu]);
        if v == 0 || !self.cfg.sim(crate::features::SimFeature::SIM_JITTER) {
            return v;
        }
        let sigma = self.costs[cpu].jitter_sigma_ppm;
        if sigma == 0 {
            return v;
        }
        let i = match self
            .jitter_tables
            .iter()
            .position(|t| t.sigma_ppm() == sigma)
        {
            Some(i) => i,
            None => {
                self.jitter_tables
                    .push(schedlab_engine::rng::LognormalTable::shared(sigma));
                self.jitter_tables.len() - 1
            }
        };
        self.jitter_tables[i].apply(&mut self.jitter_rng, v)
    }

    // ===================================================================== invariants

    /// `SCHED_WARN_ON`: panics in strict mode (tests), counts otherwise; with
    /// `stop_on_warning` the run loop ends after the current event.
    pub(crate) fn sched_warn_on(&mut self, cond: bool, msg: &str) {
        if !cond {
            return;
        }
        self.warnings += 1;
        let full = format!(
            "sched_warn_on at t={} ns (event {}): {}",
            self.now, self.stats.events, msg
        );
        if self.strict {
            panic!("{}\n{}", full, self.state_dump());
        }
        if self.first_warning.is_none() {
            self.first_warning = Some(full);
        }
    }

    // ===================================================================== resched

    /// `need_resched()`: the hard flag is set on this CPU's current task.
    pub(crate) fn need_resched(&self, cpu: usize) -> bool {
        self.rqs[cpu].resched == Resched::Full
    }

    /// kernel: core.c resched_curr() — set TIF_NEED_RESCHED; a remote CPU gets an IPI unless
    /// it is polling in idle.
    pub fn resched_curr(&mut self, cpu: usize) {
        if self.rqs[cpu].resched == Resched::Full {
            return;
        }
        self.rqs[cpu].resched = Resched::Full;
        self.kick_cpu(cpu);
    }

    /// kernel: core.c resched_curr_lazy() (7c70cb94d29c) — under the lazy model set
    /// TIF_NEED_RESCHED_LAZY and send no IPI; otherwise identical to resched_curr. The idle
    /// task never gets the lazy flag.
    pub fn resched_curr_lazy(&mut self, cpu: usize) {
        let lazy_model = self.preempt == PreemptModel::Lazy;
        if !self.cfg.has(crate::patches::Patch::PreemptLazy) || !lazy_model {
            return self.resched_curr(cpu);
        }
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task {
            return self.resched_curr(cpu);
        }
        if self.rqs[cpu].resched == Resched::None {
            self.rqs[cpu].resched = Resched::Lazy;
        }
    }

    /// Makes a remote CPU look at its resched flag: reschedule IPI (or nothing if polling).
    fn kick_cpu(&mut self, cpu: usize) {
        if self.executing == Some(cpu) {
            return; // the CPU executing this code sees the flag at its next preemption point
        }
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task && self.machine.idle_polling[cpu] {
            // polling idle: no IPI, the idle loop notices at once
            self.stats.ipi_avoided += 1;
            self.schedule_ipi(cpu, 0);
            return;
        }
        let lat = self.cost(cpu, |c| c.lat_ipi.0);
        self.schedule_ipi(cpu, lat);
    }

    fn schedule_ipi(&mut self, cpu: usize, lat: u64) {
        if self.rqs[cpu].ipi_pending {
            return;
        }
        self.rqs[cpu].ipi_pending = true;
        let mut at = self.now + lat;
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task && !self.machine.idle_polling[cpu] {
            at += self.machine.idle_exit_ns[cpu];
        }
        self.stats.ipis += 1;
        self.push_event(at, Ev::Ipi { cpu: cpu as u32 });
    }
}
