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

use crate::exec::{HrTimer, Step};
use crate::ipc::Ipc;
use crate::presets::{KernelConfig, PreemptModel};
use crate::sched::*;
use crate::stats::{CpuStats, KernelStats};
use crate::tree::TreeOrder;
use schedlab_engine::{EventQueue, Rng, RngStreams};
use schedlab_platform::cost::{CostModel, ProgramCosts};
use schedlab_platform::cpumask::CpuMask;
use schedlab_platform::topology::SchedDomains;
use schedlab_platform::{IdleState, Platform};
use schedlab_trace::TraceRecord;

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
    /// `nohz_full=`: CPUs whose tick stops while they run one task (rt-dl.md §1.10).
    pub nohz_full: CpuMask,
    /// Throughput of each SMT sibling while both are busy, parts per million.
    pub smt_throughput_ppm: u32,
    /// SMT siblings per CPU (including itself).
    pub smt_mask: Vec<CpuMask>,
    /// The sched-domain hierarchy (kernel/sched/topology.c).
    pub domains: SchedDomains,
    /// The storage device (`[storage]`, Table 1.11-C) the file-system calls use.
    pub storage: schedlab_platform::StorageDevice,
    /// Frequency of the counter behind `sched_clock()`: the runqueue clock moves in its steps.
    pub sched_clock_hz: u64,
    /// The platform's `[programs.NAME]` costs (user-space work, read by workloads via `Sys`).
    pub programs: ProgramCosts,
    /// CONFIG_RT_GROUP_SCHED: the root group's RT throttling survives 5f6bd380c7bd
    /// (rt-dl.md §2.10).
    pub rt_group_sched: bool,
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
            nohz_full: p.isolation.nohz_full.clone(),
            smt_throughput_ppm: p.smt_throughput_ppm,
            smt_mask: (0..n).map(|c| p.cpu_smt_mask(c)).collect(),
            domains,
            storage: p.storage.clone(),
            sched_clock_hz: p.sched_clock_hz,
            programs: p.programs.clone(),
            rt_group_sched: p.rt_group_sched,
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
        // one idle state that costs nothing to leave: no cpuidle choice
        for s in &mut m.idle_states {
            s.truncate(1);
            s[0].exit_latency_ns = schedlab_engine::Nanos(0);
            s[0].polling = false;
        }
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
    /// A TCP socket's delayed-ACK timer (net.rs), on the CPU that armed it last.
    Delack { sock: u32 },
    /// The expiry handler of a timer that fired on an idle CPU, once the CPU has left its
    /// idle state and run the interrupt up to the wakeup.
    TimerIrq { id: u32, gen: u32 },
    /// An IPI arrives on `cpu` (wake list and/or reschedule).
    Ipi { cpu: u32 },
    /// Scheduler tick on `cpu`.
    Tick { cpu: u32, gen: u32 },
    /// `rq->hrtick_timer` of `cpu` (HRTICK; stale `gen` ignored).
    Hrtick { cpu: u32, gen: u32 },
    /// `def_rt_bandwidth`'s period hrtimer (rt.rs; ignored if `gen` is stale).
    RtPeriodTimer { gen: u32 },
    /// The root domain's RT push irq_work arrives on `cpu` (RT_PUSH_IPI, rt.rs).
    RtPushWork { cpu: u32 },
    /// A SCHED_DEADLINE entity's `dl_timer` (replenishment / zero-laxity; a hard hrtimer
    /// with no slack). Fires only if the timer is armed and due (deadline.rs `DlTimer`).
    DlTimer { ent: crate::deadline::DlEnt },
    /// A SCHED_DEADLINE task's `inactive_timer` (0-lag time; a hard hrtimer with no slack).
    /// Fires only if armed and due (deadline.rs).
    DlInactiveTimer { ent: crate::deadline::DlEnt },
    /// A task group's CFS bandwidth period hrtimer (fair_bandwidth.rs; stale `gen` ignored).
    CfsPeriodTimer { tg: u32, gen: u32 },
    /// A task group's CFS bandwidth slack hrtimer (fair_bandwidth.rs; stale `gen` ignored).
    CfsSlackTimer { tg: u32, gen: u32 },
    /// Block request `id` completes: its interrupt on the submitting CPU (blkdev.rs).
    IoDone { id: u32 },
    /// The completion handler of request `id` whose interrupt arrived on an idle CPU, once
    /// the CPU has left its idle state and run the handler up to the completion.
    IoIrq { id: u32 },
    /// The flusher's delayed work (`wb->dwork`) timer on `cpu` (exec.rs).
    WbTimer { cpu: u32 },
    /// The inodegc delayed work's timer on `cpu` (stale if `gen` is old; exec.rs).
    GcTimer { cpu: u32, gen: u32 },
    /// End of the simulation.
    Stop,
}

impl Ev {
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Ev::SegEnd { .. } => 0,
            Ev::Timer { .. }
            | Ev::TimerIrq { .. }
            | Ev::RtPeriodTimer { .. }
            | Ev::DlTimer { .. }
            | Ev::DlInactiveTimer { .. }
            | Ev::CfsPeriodTimer { .. }
            | Ev::CfsSlackTimer { .. }
            | Ev::IoDone { .. }
            | Ev::IoIrq { .. }
            | Ev::WbTimer { .. }
            | Ev::GcTimer { .. }
            | Ev::Delack { .. }
            | Ev::Hrtick { .. } => 1,
            Ev::Ipi { .. } | Ev::RtPushWork { .. } => 2,
            Ev::Tick { .. } => 3,
            Ev::Stop => 4,
        }
    }
}

/// Where a trace record goes.
pub trait TraceSink {
    /// One record; its text fields borrow the kernel's (format or copy them here).
    fn record(&mut self, r: &TraceRecord<&str>);
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
    /// The fair class's own functions when they are not EEVDF's (the `v6.5` preset: without
    /// 147f3efaa241 the CFS class of fair_cfs.rs).
    pub(crate) fair_policy: Option<&'static crate::fair::FairPolicy>,
    /// v6.5's latency tunables (cfs.md §2), after boot and the configured writes.
    pub cfs_tun: crate::fair_cfs::CfsTunables,
    pub tree_order: TreeOrder,
    pub tasks: Vec<Task>,
    pub se: Vec<SchedEntity>,
    pub cfs: Vec<CfsRq>,
    pub tgs: Vec<TaskGroup>,
    pub rqs: Vec<Rq>,
    pub ipc: Ipc,
    /// Loopback TCP/UDP sockets and listeners (net.rs).
    pub net: crate::net::Net,
    /// Epoll instances and eventfds (eventpoll.rs).
    pub epoll: crate::eventpoll::EventPoll,
    /// Added to the arrival of a wake-up IPI sent now: the waker's remaining charge for the
    /// wake-up (a softirq wake-up sends its IPI at the end of `c_ttwu` + `c_ipi_send`,
    /// netbench.md §16.6 N2); 0 elsewhere.
    pub(crate) ipi_send_delay: u64,
    /// When `Some`, every `try_to_wake_up()` of a sleeping task is recorded here.
    pub ttwu_log: Option<Vec<crate::stats::TtwuRecord>>,
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
    /// kernel/power/qos.c: the CPU latency QoS limit (ns; u64::MAX = no request), the lowest
    /// value any `/dev/cpu_dma_latency` holder asked for.
    pub(crate) cpu_latency_qos_ns: u64,
    pub(crate) trace: Option<Box<dyn TraceSink>>,
    pub(crate) rng_streams: RngStreams,
    /// Cost-jitter streams, one per CPU (`"costs/jitter/cpu/N"`): a cost is drawn from the
    /// stream of the CPU whose code runs when it is incurred, so the draws of one CPU never
    /// depend on the order of another CPU's events.
    pub(crate) jitter_rng: Vec<Rng>,
    /// Set while the event loop runs a handler that ends by continuing its CPU (see
    /// `run_ahead_to_segment_end`).
    pub(crate) run_ahead: bool,
    /// Whether run-ahead may be used at all (tests compare runs with and without it).
    pub sim_run_ahead: bool,
    /// Nesting of `cpu_continue` calls.
    pub(crate) cont_depth: u32,
    /// Scratch buffer for planning one operation (see `plan_op`).
    pub(crate) plan_scratch: Vec<Step>,
    /// Reused buffer of the user spinners a futex store ends (`futex_word_changed`).
    pub(crate) spin_scratch: Vec<TaskId>,
    /// Scratch buffer for the tasks one system call wakes (pipe and socket wake lists).
    pub(crate) wake_scratch: Vec<TaskId>,
    /// The copy of a wait queue a wake-up walks (exec.rs `net_wake_up`), kept to reuse.
    pub(crate) wq_scratch: Vec<crate::net::WqEntry>,
    /// Jitter tables by σ (platforms use one or two shapes).
    pub(crate) jitter_tables: Vec<std::sync::Arc<schedlab_engine::rng::LognormalTable>>,
    /// Per-CPU random streams (`prandom_u32_state` of newidle balancing).
    #[allow(dead_code)]
    pub(crate) cpu_rng: Vec<Rng>,
    pub(crate) next_pid: i32,
    pub(crate) next_mm: u32,
    pub end: u64,
    /// Full invariant check after every event (expensive; tests and --strict).
    pub check_invariants: bool,
    /// The CPU whose code is executing right now (a resched on it needs no IPI).
    pub(crate) executing: Option<usize>,
    /// Wakeup placement state (select.rs).
    pub sel: crate::select::SelectState,
    /// Load-balancing state (balance.rs).
    pub lb: crate::balance::BalanceState,
    /// RT root domains and bandwidth (rt.rs).
    pub rt: crate::rt::RtState,
    /// Tasks created and not yet exited (the run ends early when it drops to zero).
    pub nr_live: u32,
    /// Structured log of dl_server activity, all CPUs in time order (deadline.rs,
    /// [`crate::deadline::DlServerEvent`]); `dl_server_log_on` switches it (default on). At
    /// most `dl_server_log_cap` entries (default 100 000, ≈ 6 MB) are kept; later ones are
    /// only counted in `dl_server_log_dropped` (a v6.12 fair workload starts and stops the
    /// server on every wakeup and block).
    pub dl_server_log: Vec<crate::deadline::DlServerEvent>,
    pub dl_server_log_on: bool,
    pub dl_server_log_cap: usize,
    pub dl_server_log_dropped: u64,
    /// `sched_setattr(SCHED_DEADLINE)` refusals at task creation (-EINVAL / -EBUSY), one
    /// line each naming the pid and the value; the task was left SCHED_NORMAL.
    pub setattr_errors: Vec<String>,
    /// Tasks created with this comm are observed: their wakeups go to `wakeup_log`.
    pub observe_comm: Option<String>,
    /// The wakeups of observed tasks (stats.rs `WakeupRecord`), at most `wakeup_log_cap`.
    pub wakeup_log: Vec<crate::stats::WakeupRecord>,
    pub wakeup_log_cap: usize,
    /// Whether the run stopped because every task had exited.
    pub all_exited_at: Option<u64>,
    /// Groups with a CFS bandwidth quota (`cfs_bandwidth_used()`'s static key count).
    pub cfs_bandwidth_users: u32,
    /// The IO path (workqueues, block device, XFS), created by the first mount.
    pub(crate) io: Option<Box<crate::xfs::IoState>>,
}

impl Kernel {
    /// Builds a kernel for `machine` with configuration `cfg`.
    pub fn new(cfg: KernelConfig, machine: MachineDesc, seed: u64) -> Result<Kernel, String> {
        let ncpus = machine.ncpus;
        assert!(ncpus >= 1);
        let hz = cfg.hz.unwrap_or(machine.hz);
        let preempt = cfg.resolve_preempt(machine.preempt_default)?;
        if let Some(e) = cfg
            .sysctl
            .fair_server_cpu
            .iter()
            .find(|e| e.0 as usize >= ncpus)
        {
            return Err(format!(
                "fair_server/cpu{}: the machine has CPUs 0-{} only",
                e.0,
                ncpus - 1
            ));
        }
        let online = ncpus as u32;
        let base_slice = cfg.base_slice_ns(online);
        let normalized_base_slice = cfg.normalized_base_slice();
        let tree_order = if cfg.has(crate::patches::Patch::DeadlineSortedTree) {
            TreeOrder::Deadline
        } else {
            TreeOrder::Vruntime
        };
        let cfs_class = !cfg.has(crate::patches::Patch::EevdfPolicy);
        let fair_policy = cfs_class.then_some(&crate::fair_cfs::CFS);
        let cfs_tun = crate::fair_cfs::CfsTunables::boot(online, &cfg.sysctl.cfs_writes)?;
        let streams = RngStreams::new(seed);
        let sim_run_ahead = cfg.sim(crate::features::SimFeature::SIM_RUN_AHEAD);
        let events = if cfg.sim(crate::features::SimFeature::SIM_EVENT_WHEEL) {
            EventQueue::for_cpus(ncpus)
        } else {
            EventQueue::new()
        };
        let mut k = Kernel {
            cfg,
            ncpus,
            now: 0,
            hz,
            tick_nsec: 1_000_000_000 / hz as u64,
            preempt,
            base_slice,
            normalized_base_slice,
            fair_policy,
            cfs_tun,
            tree_order,
            tasks: Vec::new(),
            se: Vec::new(),
            cfs: Vec::new(),
            tgs: Vec::new(),
            rqs: Vec::new(),
            ipc: Ipc::default(),
            net: crate::net::Net::default(),
            epoll: crate::eventpoll::EventPoll::default(),
            ipi_send_delay: 0,
            ttwu_log: None,
            costs: machine.costs.clone(),
            pipe_page_size: machine.page_size,
            machine,
            stats: KernelStats::default(),
            strict: false,
            stop_on_warning: false,
            warnings: 0,
            first_warning: None,
            events,
            timers: Vec::new(),
            free_timers: Vec::new(),
            cpu_latency_qos_ns: u64::MAX,
            trace: None,
            rng_streams: streams,
            jitter_rng: (0..ncpus)
                .map(|c| streams.stream(&format!("costs/jitter/cpu/{c}")))
                .collect(),
            jitter_tables: Vec::new(),
            plan_scratch: Vec::with_capacity(8),
            spin_scratch: Vec::new(),
            wake_scratch: Vec::with_capacity(8),
            wq_scratch: Vec::with_capacity(8),
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
            rt: Default::default(),
            nr_live: 0,
            all_exited_at: None,
            dl_server_log: Vec::new(),
            dl_server_log_on: true,
            dl_server_log_cap: 100_000,
            dl_server_log_dropped: 0,
            setattr_errors: Vec::new(),
            observe_comm: None,
            wakeup_log: Vec::new(),
            wakeup_log_cap: 1_000_000,
            cfs_bandwidth_users: 0,
            io: None,
        };
        // root task group with one root cfs_rq per CPU
        let mut root_cfs = Vec::new();
        for cpu in 0..ncpus {
            k.cfs.push(CfsRq::new(cpu, TgId(0)));
            if cfs_class {
                k.cfs.last_mut().unwrap().zero_vruntime = crate::fair_cfs::INIT_MIN_VRUNTIME;
            }
            root_cfs.push(CfsRqId::new(k.cfs.len() - 1));
        }
        k.tgs.push(TaskGroup {
            path: "/".to_string(),
            parent: None,
            shares: scale_load(1024),
            idle: false,
            cfs_rq: root_cfs.clone(),
            se: vec![None; ncpus],
            load_avg: 0,
            cfs_bandwidth: Default::default(),
            usage_ns: 0,
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
                rt: Default::default(),
                dl: Default::default(),
                fair_server: crate::deadline::SchedDlEntity::fair_server_init(&k.cfg, cpu),
                dl_server: false,
                in_pick: false,
                dl_server_stats: Default::default(),
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
                hrtick_armed: false,
                hrtick_gen: 0,
                idle_since: Some(0),
                avg_idle: 2 * k.cfg.sysctl.migration_cost_ns,
                idle_stamp: 0,
                max_idle_balance_cost: k.cfg.sysctl.migration_cost_ns,
                next_balance: 0,
                speed: k.machine.speed[cpu],
                capacity_orig: k.machine.capacity_orig[cpu],
                stats: CpuStats::default(),
                range_timers: Vec::new(),
                hrtimers: Vec::new(),
                idle_state: None,
                idle_enter: 0,
                idle_hist: [0; crate::idle::IDLE_HIST],
                idle_hist_n: 0,
                clock_task: 0,
                clock_update_flags: 0,
                ktimers: None,
                ktimers_pending: Vec::new(),
                pelt_clock: Default::default(),
                pelt_stamp: 0,
            });
        }
        k.init_select_state();
        k.init_balance_state();
        k.init_rt_state();
        for cpu in 0..k.ncpus {
            k.init_dl_rq_bw(cpu);
        }
        if k.preempt == crate::presets::PreemptModel::Rt {
            k.spawn_ktimerd();
        }
        Ok(k)
    }

    // ===================================================================== tasks

    // ===================================================================== run loop

    pub fn set_trace(&mut self, sink: Box<dyn TraceSink>) {
        self.trace = Some(sink);
    }

    pub fn take_trace(&mut self) -> Option<Box<dyn TraceSink>> {
        self.trace.take()
    }

    /// Runs until simulated time `end` (ns), or until every task has exited. Can be called
    /// repeatedly. Returns the time it stopped at.
    pub fn run_until(&mut self, end: u64) -> u64 {
        self.run_until_observed(end, u64::MAX, &mut |_| {})
    }

    /// [`Kernel::run_until`] with an observer called with the simulated time after every
    /// `every` events. The observer only looks: it cannot touch the kernel, and the run does
    /// exactly the same work whether it is called or not (a progress bar must never change a
    /// result — the clocks are brought up to date only once, at the end).
    pub fn run_until_observed(
        &mut self,
        end: u64,
        every: u64,
        observe: &mut dyn FnMut(u64),
    ) -> u64 {
        let every = every.max(1);
        let mut countdown = every;
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
                Ev::Delack { sock } => self.on_delack(sock),
                Ev::TimerIrq { id, gen } => self.on_timer_irq(id, gen),
                Ev::DlTimer { ent } => self.on_dl_timer(ent, false),
                Ev::DlInactiveTimer { ent } => self.on_dl_timer(ent, true),
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
                Ev::RtPeriodTimer { gen } => self.on_rt_period_timer(gen),
                Ev::RtPushWork { cpu } => self.on_rt_push_work(cpu as usize),
                Ev::CfsPeriodTimer { tg, gen } => self.on_cfs_period_timer(tg, gen),
                Ev::CfsSlackTimer { tg, gen } => self.on_cfs_slack_timer(tg, gen),
                Ev::IoDone { id } => self.on_io_done(id),
                Ev::IoIrq { id } => self.on_io_irq(id),
                Ev::WbTimer { cpu } => self.on_wb_timer(cpu as usize),
                Ev::Hrtick { cpu, gen } => self.on_hrtick(cpu as usize, gen),
                Ev::GcTimer { cpu, gen } => self.on_gc_timer(cpu as usize, gen),
            }
            self.stats.events += 1;
            if self.check_invariants {
                self.check_all_invariants();
            }
            if self.stop_on_warning && self.warnings > 0 {
                stop = self.now;
                break;
            }
            countdown -= 1;
            if countdown == 0 {
                countdown = every;
                observe(self.now);
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
                let class = self.tasks[curr.index()].class;
                class.update_curr(self, curr);
            }
        }
    }

    pub fn events_processed(&self) -> u64 {
        self.stats.events
    }

    // ===================================================================== invariants

    // ===================================================================== resched
}
