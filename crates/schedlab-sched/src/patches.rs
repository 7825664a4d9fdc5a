//! Named patches: every behavioural difference between kernel versions is one upstream commit,
//! identified by its 12-character id, that switches a code path in the simulated kernel and can
//! be added to (or removed from) any preset on its own (DESIGN.md §3.3).
//!
//! Each entry records the commit id, its subject, the release it first appeared in, the
//! functions whose simulated behaviour it switches, and the sched_features it introduces (with
//! their default) or removes. Subjects were checked against tip-bot and mainline push lists. `modelled: false` marks commits that are listed for completeness
//! (so that a kernel string naming them is accepted) but change nothing in the model; the
//! listing says so.

use crate::features::Feature;

/// A feature change made by a patch: introduce with a default, or remove.
#[derive(Clone, Copy, Debug)]
pub enum FeatEdit {
    Add(Feature, bool),
    Set(Feature, bool),
    Remove(Feature),
}

#[derive(Clone, Copy, Debug)]
pub struct PatchInfo {
    pub id: &'static str,
    pub subject: &'static str,
    pub release: &'static str,
    pub touches: &'static str,
    pub modelled: bool,
    pub features: &'static [FeatEdit],
}

macro_rules! patches {
    ($( $name:ident = ($id:literal, $subject:literal, $release:literal, $touches:literal,
        $modelled:literal, [$($fe:expr),* $(,)?]) ),* $(,)?) => {
        /// An upstream commit that the simulated kernel can apply.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub enum Patch { $( $name ),* }

        impl Patch {
            pub const ALL: &'static [Patch] = &[ $( Patch::$name ),* ];
            pub const COUNT: usize = Patch::ALL.len();

            pub fn info(self) -> &'static PatchInfo {
                match self {
                    $( Patch::$name => {
                        const I: PatchInfo = PatchInfo {
                            id: $id, subject: $subject, release: $release,
                            touches: $touches, modelled: $modelled,
                            features: &[$($fe),*],
                        };
                        &I
                    } ),*
                }
            }

            /// Looks a patch up by its commit id (12 characters; a longer prefix is accepted),
            /// or by a stable-branch id that is an alias of one (`ALIASES`).
            pub fn from_id(id: &str) -> Option<Patch> {
                let id = id.to_ascii_lowercase();
                // `get`, not `[..12]`: the 12th byte may fall inside a multi-byte character.
                let short = id.get(..12)?;
                let short = ALIASES
                    .iter()
                    .find(|(a, _)| *a == short)
                    .map(|(_, main)| *main)
                    .unwrap_or(short);
                Patch::ALL.iter().copied().find(|p| p.info().id == short)
            }

            pub fn id(self) -> &'static str { self.info().id }
        }
    };
}

/// Stable-branch backports with their own commit ids, accepted in kernel strings as the
/// mainline patch they carry: (alias, mainline id).
pub const ALIASES: &[(&str, &str)] = &[
    // "sched/deadline: Use revised wakeup rule for dl_server" in 6.12.y and 6.19.y
    ("d66792919d4f", "14a857056466"),
    ("37cfab131f1b", "14a857056466"),
];

use FeatEdit::{Add, Remove, Set};

/// The EEVDF series of v6.6 (cfs.md §13.1): one switch between the CFS class of v6.5 and the
/// EEVDF class, never toggled commit by commit (cfs.md §13.3).
pub const SERIES: &[Patch] = &[
    Patch::AvgVruntime,
    Patch::RemoveStartDebit,
    Patch::LagPlacement,
    Patch::RbAddAugmentedCached,
    Patch::EevdfPolicy,
    Patch::CommitLagPlacement,
    Patch::LagCrossRqPlacement,
    Patch::CommitEevdf,
    Patch::RenameBaseSlice,
    Patch::PropagateEnqueueFlags,
    Patch::CurbWakeupPreemption,
    Patch::EevdfDoc,
];
use Feature as F;

patches! {
    // ------------------------------------------------------------------ v6.6: the EEVDF series
    // Applied in this order on top of v6.5 (cfs.md §13.1). The series is the boundary between
    // the two fair-class implementations (v6.5: fair_cfs.rs, v6.6+: fair.rs): a kernel string
    // may not add or remove one of them on its own (`SERIES`; use the v6.5 preset).
    AvgVruntime = ("af4cf40470c2", "sched/fair: Add cfs_rq::avg_vruntime", "v6.6",
        "fair.c avg_vruntime bookkeeping (no decision changes)", false, []),
    RemoveStartDebit = ("e0c2ff903c32", "sched/fair: Remove sched_feat(START_DEBIT)", "v6.6",
        "features.h, fair.c place_entity", true, [Remove(F::START_DEBIT)]),
    LagPlacement = ("86bfbb7ce4f6", "sched/fair: Add lag based placement", "v6.6",
        "fair.c place_entity (PLACE_LAG), dequeue_entity (vlag)", true, [Add(F::PLACE_LAG, true)]),
    RbAddAugmentedCached = ("99d4d26551b5", "rbtree: Add rb_add_augmented_cached() helper", "v6.6",
        "include/linux/rbtree_augmented.h", false, []),
    EevdfPolicy = ("147f3efaa241", "sched/fair: Implement an EEVDF-like scheduling policy", "v6.6",
        "fair.c: the EEVDF pick, deadlines, wakeup and tick preemption (the fair class of fair.rs instead of fair_cfs.rs)", true,
        [Add(F::PLACE_DEADLINE_INITIAL, true)]),
    CommitLagPlacement = ("76cae9dbe185", "sched/fair: Commit to lag based placement", "v6.6",
        "features.h, fair.c place_entity (no sleeper credit)", true, [Remove(F::GENTLE_FAIR_SLEEPERS)]),
    LagCrossRqPlacement = ("e8f331bcc270", "sched/smp: Use lag to simplify cross-runqueue placement", "v6.6",
        "fair.c: no min_vruntime normalisation, task_fork_fair without sched_child_runs_first", true, []),
    CommitEevdf = ("5e963f2bd465", "sched/fair: Commit to EEVDF", "v6.6",
        "features.h, fair.c, debug.c (latency_ns, wakeup_granularity_ns, idle_min_granularity_ns gone)", true,
        [Remove(F::LAST_BUDDY), Remove(F::ALT_PERIOD), Remove(F::BASE_SLICE)]),
    RenameBaseSlice = ("e4ec3318a17f", "sched/debug: Rename sysctl_sched_min_granularity to sysctl_sched_base_slice", "v6.6",
        "debug.c: min_granularity_ns becomes base_slice_ns", true, []),
    PropagateEnqueueFlags = ("d07f09a1f99c", "sched/fair: Propagate enqueue flags into place_entity()", "v6.6",
        "fair.c place_entity (ENQUEUE_INITIAL; no behaviour change)", false, []),
    CurbWakeupPreemption = ("63304558ba5d", "sched/eevdf: Curb wakeup-preemption", "v6.6",
        "features.h, fair.c pick_eevdf (RUN_TO_PARITY)", true, [Add(F::RUN_TO_PARITY, true)]),
    EevdfDoc = ("2f88c8e802c8", "sched/eevdf/doc: Modify the documented knob to base_slice_ns as well", "v6.6",
        "Documentation/scheduler/sched-design-CFS.rst", false, []),
    // ------------------------------------------------------------------ v6.6: outside the series
    // The other v6.6 commits that change the shared SMP code (cfs.md §13.1 last paragraph,
    // §15.2), in the order tip sched/core applied them, then the seccomp series' ttwu change and
    // the v6.6-rc2 fix. Each can be added to v6.5 or removed from v6.6 on its own.
    SmtActiveBalance = ("fee1759e4f04", "sched/fair: Determine active load balance for SMT sched groups", "v6.6",
        "fair.c update_sg_lb_stats (smt_balance: group_smt_balance), update_sd_pick_busiest (group_has_spare: an SMT group vs a non-SMT group), calculate_imbalance and find_busiest_group (group_smt_balance)", true, []),
    SgCores = ("d24cb0d9113f", "sched/topology: Record number of cores in sched group", "v6.6",
        "topology.c init_sched_groups_capacity (sg->cores; read only by 7ff1693236f5's sibling_imbalance, the model counts the cores of every group)", false, []),
    SiblingImbalance = ("7ff1693236f5", "sched/fair: Implement prefer sibling imbalance calculation between asymmetric groups", "v6.6",
        "fair.c find_busiest_group (prefer_sibling: sibling_imbalance() > 1 instead of busiest > local + 1 tasks), calculate_imbalance (sibling_imbalance instead of the task difference)", true, []),
    IdleCoreShouldBalance = ("b1bfeab9b002", "sched/fair: Consider the idle state of the whole core for load balance", "v6.6",
        "fair.c should_we_balance (an idle CPU of a fully idle core first, then the first idle SMT thread)", true, []),
    HybridCluster = ("17953249bf02", "x86/sched: Enable cluster scheduling on Hybrid", "v6.6",
        "arch/x86 smpboot.c build_sched_topology (CLS level on hybrid parts too; the model's platforms describe their cluster level themselves)", false, []),
    AsymCapacityScanTarget = ("7ee7642c9141", "sched/fair: Stabilize asym cpu capacity system idle cpu selection", "v6.6",
        "fair.c select_idle_capacity (the scan starts at target instead of target + 1)", true, []),
    RemoveUtilEstBoost = ("c2e164ac33f7", "sched/fair: remove util_est boosting", "v6.6",
        "fair.c cpu_util (with boost the util_est term is no longer raised to runnable_avg; also 6.5.3). Not modelled: without a task to add, max(util_avg, runnable_avg, util_est) is the same either way, so cpu_util_cfs_boost is unchanged; only EAS (eenv_pd_max_util) sees a difference", false, []),
    AlignGroupFlags = ("4efcc8bc7e08", "sched/topology: Align group flags when removing degenerate domain", "v6.6",
        "topology.c cpu_attach_domain (the local group of the grandparent takes all the new child's flags; before: only SD_SHARE_CPUCAPACITY was ORed in). The platform crate's topology builder always applies the v6.6 rule", false, []),
    HzBw = ("88c56cfeaec4", "sched/fair: Block nohz tick_stop when cfs bandwidth in use", "v6.6",
        "features.h HZ_BW, core.c sched_can_stop_tick, fair.c pick_next_task_fair (nohz_full is not modelled)", false, [Add(F::HZ_BW, true)]),
    WfCurrentCpu = ("ab83f455f04d", "sched: add WF_CURRENT_CPU and externise ttwu", "v6.6",
        "fair.c select_task_rq_fair (WF_CURRENT_CPU: the waking CPU when allowed); merged through the seccomp tree", true, []),
    SmtBalanceFix = ("450e749707bc", "sched/fair: Fix SMT4 group_smt_balance handling", "v6.6-rc2",
        "fair.c update_sd_pick_busiest (group_smt_balance with idle CPUs compared as group_has_spare), sibling_imbalance (an imbalance of 1 into an empty group becomes 2)", true, []),
    // ------------------------------------------------------------------ v6.7 .. v6.11
    RtPushableOverload = ("612f769edd06", "sched/rt: Make rt_rq->pushable_tasks updates drive rto_mask", "v6.7",
        "rt.c rt_set_overload/rt_clear_overload from enqueue/dequeue_pushable_task (before: rt_nr_migratory && rt_nr_total > 1)", true, []),
    ClusterShareResources = ("b95303e0aeaf", "sched: Add cpus_share_resources API", "v6.7",
        "core.c cpus_share_resources, sd_share_id (used by 8881e1639f1f)", false, []),
    ClusterScan = ("8881e1639f1f", "sched/fair: Scan cluster before scanning LLC in wake-up path", "v6.7",
        "topology.c sched_cluster_active; fair.c select_idle_sibling (prev and recent_used_cpu only within target's cluster), select_idle_cpu (the target's cluster first)", true, []),
    ClusterPrevFallback = ("22165f61d0c4", "sched/fair: Use candidate prev/recent_used CPU if scanning failed for cluster wakeup", "v6.7",
        "fair.c select_idle_sibling (an idle prev or recent_used_cpu outside the cluster when the scan fails)", true, []),
    TgLoadAvgRatelimit = ("1528c661c24b", "sched/fair: Ratelimit update to tg->load_avg", "v6.7",
        "fair.c update_tg_load_avg (a cfs_rq publishes its load to tg->load_avg at most once per ms)", true, []),
    LagPreservingReweight = ("eab03c23c2a1", "sched/eevdf: Fix vruntime adjustment on reweight", "v6.7",
        "fair.c reweight_entity (on-queue: lag preserving)", true, []),
    IdleSmtShouldBalance = ("6d7e4782bcf5", "sched/fair: Fix the decision for load balance", "v6.7",
        "fair.c should_we_balance (when only idle SMT threads of busy cores exist, the first of them balances, not the group's balance CPU); in 6.6.y", true, []),
    DeadlineSortedTree = ("2227a957e1d5", "sched/eevdf: Sort the rbtree by virtual deadline", "v6.8",
        "fair.c __enqueue_entity, __pick_eevdf (deadline order, min_vruntime augmentation, tie to the tree entity)", true, []),
    PickFastPath = ("ee4373dc902c", "sched/eevdf: O(1) fastpath for task selection", "v6.8",
        "fair.c __pick_eevdf (leftmost shortcut; same result)", false, []),
    SelectIdleSmtSpan = ("8aeaffef8c6e", "sched/fair: Take the scheduling domain into account in select_idle_smt()", "v6.9",
        "fair.c select_idle_smt (a sibling outside the LLC domain, e.g. isolcpus=domain, is skipped); in 6.6.y", true, []),
    SelectIdleCoreSpan = ("23d04d8c6b8e", "sched/fair: Take the scheduling domain into account in select_idle_core()", "v6.9",
        "fair.c select_idle_core (the fallback idle CPU must be in the scanned cpus, not only allowed for the task); in 6.6.y", true, []),
    MisfitStrictBusiest = ("7f1a7229718d", "sched/fair: Do strict inequality check for busiest misfit task group", "v6.9",
        "fair.c update_sd_pick_busiest (group_misfit_task: only a larger misfit load replaces the busiest)", true, []),
    MisfitFittingCpu = ("22d5607400c6", "sched/fair: Check if a task has a fitting CPU when updating misfit", "v6.10",
        "fair.c update_misfit_status (no misfit on the biggest CPU the task's affinity allows; max_allowed_capacity), check_misfit_status (simplified; same result given the new misfit rule)", true, []),
    MisfitNoBackoff = ("58eeb2d79b54", "sched/fair: Don't double balance_interval for migrate_misfit", "v6.10",
        "fair.c sched_balance_rq (a failed migrate_misfit pass neither counts in nr_balance_failed nor doubles balance_interval)", true, []),
    // ------------------------------------------------------------------ v6.12
    DelayedDequeue = ("152e11f6df29", "sched/fair: Implement delayed dequeue", "v6.12",
        "fair.c dequeue_entity, pick_next_entity, core.c ttwu_runnable", true, [Add(F::DELAY_DEQUEUE, true)]),
    DelayZero = ("54a58a787791", "sched/fair: Implement DELAY_ZERO", "v6.12",
        "fair.c finish_delayed_dequeue_entity, requeue_delayed_entity", true, [Add(F::DELAY_ZERO, true)]),
    EnqueueDelayed = ("781773e3b680", "sched/fair: Implement ENQUEUE_DELAYED", "v6.12",
        "fair.c enqueue_task_fair, requeue_delayed_entity (the model always requeues a delayed task this way when DELAY_DEQUEUE is on)", false, []),
    PlaceRelDeadline = ("82e9d0456e06", "sched/fair: Avoid re-setting virtual deadline on 'migrations'", "v6.12",
        "fair.c dequeue_entity, place_entity", true, [Add(F::PLACE_REL_DEADLINE, true)]),
    CustomSlice = ("857b158dc5e8", "sched/eevdf: Use sched_attr::sched_runtime to set request/slice suggestion", "v6.12",
        "core.c __sched_setscheduler, fair.c place_entity/update_deadline (custom_slice)", true, []),
    IdleStrictHierarchy = ("faa42d29419d", "sched/fair: Make SCHED_IDLE entity be preempted in strict hierarchy", "v6.12",
        "fair.c check_preempt_wakeup_fair (idle rules at the matched level only)", true, []),
    PreemptShort = ("85e511df3cec", "sched/eevdf: Allow shorter slices to wakeup-preempt", "v6.12",
        "fair.c check_preempt_wakeup_fair, update_curr (did_preempt_short)", true, [Add(F::PREEMPT_SHORT, true)]),
    UpdateCurrResched = ("d4ac164bde7a", "sched/eevdf: Fix wakeup-preempt by checking cfs_rq->nr_running", "v6.12",
        "fair.c update_curr/update_deadline (resched decision in update_curr)", true, []),
    MinSlicePropagate = ("aef6987d8954", "sched/eevdf: Propagate min_slice up the cgroup hierarchy", "v6.12",
        "fair.c enqueue_task_fair/dequeue_entities (group entity slice = min slice below)", true, []),
    PeltTaskRunnableDelayed = ("fc1892becd56", "sched/eevdf: Fixup PELT vs DELAYED_DEQUEUE", "v6.12",
        "pelt.c se_runnable (delayed tasks not runnable)", true, []),
    UtilEstDelayed = ("729288bc6856", "sched/fair: Fix util_est accounting for DELAY_DEQUEUE", "v6.12",
        "fair.c util_est_dequeue at block of a delayed task (the model always accounts it this way)", false, []),
    RemoveHzBw = ("a58501fb8320", "sched/fair: Remove HZ_BW feature hedge", "v6.12",
        "features.h", false, [Remove(F::HZ_BW)]),
    FairServer = ("a110a81c52a9", "sched/deadline: Deferrable dl server", "v6.12",
        "deadline.c dl_server (per-CPU fair_server, 50 ms / 1 s, deferred; with 557a6bfc662c and d741f297bcea)", true, []),
    RemoveRtThrottle = ("5f6bd380c7bd", "sched/rt: Remove default bandwidth control", "v6.12",
        "rt.c (no RT throttling without RT groups; the root group's remains with CONFIG_RT_GROUP_SCHED)", true, []),
    // ------------------------------------------------------------------ v6.13 .. v6.17
    PreemptLazy = ("7c70cb94d29c", "sched: Add Lazy preemption model", "v6.13",
        "core.c resched_curr_lazy; fair.c uses it for wakeup preemption and slice expiry", true, []),
    FixNextBuddy = ("493afbd187c4", "sched/fair: Fix NEXT_BUDDY", "v6.13",
        "fair.c dequeue_entity (clear buddies before the delay decision), check_preempt_wakeup_fair (no delayed buddy)", true, []),
    HNrDelayed = ("76f2f783294d", "sched/eevdf: More PELT vs DELAYED_DEQUEUE", "v6.13",
        "fair.c h_nr_delayed; cfs_rq/group runnable exclude delayed tasks", true, []),
    StopTickHNr = ("c1f43c342e1f", "sched/fair: Fix sched_can_stop_tick() for fair tasks", "v6.13",
        "core.c sched_can_stop_tick (h_nr_queued)", false, []),
    ReweightPlaceEntity = ("6d71a9c61604", "sched/fair: Fix EEVDF entity placement bug causing scheduling lag", "v6.13",
        "fair.c reweight_entity (dequeue-like: place_entity)", true, []),
    CfsGroupKeepWeight = ("66951e4860d3", "sched/fair: Fix update_cfs_group() vs DELAY_DEQUEUE", "v6.13",
        "fair.c update_cfs_group (empty group entity keeps its weight)", true, []),
    RemoveDoubleTick = ("e31488c9df27", "sched/fair: remove the DOUBLE_TICK feature", "v6.13",
        "features.h (DOUBLE_TICK acts only in the v6.5 CFS class: removing it changes no EEVDF run; setting it there warns)", true, [Remove(F::DOUBLE_TICK)]),
    SkipZeroLag = ("4423af84b297", "sched/fair: optimize the PLACE_LAG when se->vlag is zero", "v6.13",
        "fair.c place_entity (no behaviour change)", false, []),
    PickBuddy = ("2a77e4be12cb", "sched/fair: Untangle NEXT_BUDDY and pick_next_task()", "v6.14",
        "fair.c pick_next_entity (PICK_BUDDY)", true, [Add(F::PICK_BUDDY, true)]),
    HNrRunnable = ("c2a295bffeaf", "sched/fair: Add new cfs_rq.h_nr_runnable", "v6.14",
        "sched.h h_nr_runnable, h_nr_queued/h_nr_idle renames", true, []),
    LbUseHNrRunnable = ("1a49104496d3", "sched/fair: Use the new cfs_rq.h_nr_runnable", "v6.14",
        "fair.c load balancing task counts (h_nr_runnable)", true, []),
    LbSkipDelayed = ("61b82dfb6b7e", "sched/fair: Do not try to migrate delayed dequeue task", "v6.14",
        "fair.c can_migrate_task (delayed only for migrate_load)", true, []),
    LbEligibleFirst = ("873199d27bb2", "sched/fair: Prioritize migrating eligible tasks in sched_balance_rq()", "v6.14",
        "fair.c can_migrate_task (ineligible tasks only after a failed pass)", true, []),
    RqSelected = ("f207dc2dcdcf", "sched/core: Add ENQUEUE_RQ_SELECTED to indicate whether ->select_task_rq() was called", "v6.13",
        "core.c select_task_rq (WF_RQ_SELECTED)", true, []),
    ReduceSlice = ("2ae891b82695", "sched/fair: Reduce the default slice to avoid tasks getting an extra tick", "v6.15",
        "fair.c sysctl_sched_base_slice (0.75 ms -> 0.70 ms normalized)", true, []),
    IdleCancelProtect = ("f553741ac8c0", "sched: Cancel the slice protection of the idle entity", "v6.15",
        "fair.c check_preempt_wakeup_fair (a non-idle wakee cancels an idle curr's protection)", true, []),
    ForceMinSlice = ("563bc2161b94", "sched/eevdf: Force propagating min_slice of cfs_rq when {en,de}queue tasks", "v6.15",
        "fair.c min_slice propagation when the group entity is queued", true, []),
    PipeAnonNoTimes = ("f017b0a4951f", "pipe: don't update {a,c,m}time for anonymous pipes", "v6.15",
        "fs/pipe.c anon_pipe_write/anon_pipe_read (no file_update_time/file_accessed): pipe write and read cost less c_pipe_update_time/c_pipe_accessed", true, []),
    UdpRefineEnqueueTest = ("9aaec660b5be", "udp: refine __udp_enqueue_schedule_skb() test", "v6.18",
        "net/ipv4/udp.c __udp_enqueue_schedule_skb (drop if rmem + truesize > rcvbuf unless the queue is empty, instead of only if rmem > rcvbuf before charging): an unread socket admits 256 instead of 257 datagrams of <= 64 B", true, []),
    ReweightPlaceConstraints = ("c70fc32f4443", "sched/fair: Adhere to place_entity() constraints", "v6.16",
        "fair.c reweight_entity (place with the entity uncounted)", true, []),
    WakeSyncDelayed = ("aa3ee4f0b754", "sched/fair: Fixup wake_up_sync() vs DELAYED_DEQUEUE", "v6.16",
        "fair.c wake_affine_idle (sync count excludes delayed tasks)", true, []),
    ProtectSliceHelpers = ("9cdb4fe20cd2", "sched/fair: Use protect_slice() instead of direct comparison", "v6.17",
        "fair.c protect_slice helpers (no behaviour change)", false, []),
    ProtectVprot = ("74eec63661d4", "sched/fair: Fix NO_RUN_TO_PARITY case", "v6.17",
        "fair.c set_protect_slice (se->vprot; a minimum quantum of the normalized base slice with NO_RUN_TO_PARITY), protect_slice", true, []),
    ShortProbe = ("9de74a9850b9", "sched/fair: Remove spurious shorter slice preemption", "v6.17",
        "fair.c __pick_eevdf(protect), check_preempt_wakeup_fair (probe without protection instead of unprotect-then-pick)", true, []),
    ProtectMinSlice = ("052c3d87c82e", "sched/fair: Limit run to parity to the min slice of enqueued entities", "v6.17",
        "fair.c set_protect_slice (RUN_TO_PARITY protects only the shortest queued slice)", true, []),
    ShortShrinkProtect = ("3a0baa8e6c57", "sched/fair: Fix entity's lag with run to parity", "v6.17",
        "fair.c check_preempt_wakeup_fair (update_protect_slice on a non-preempting short wakeup)", true, []),
    AlwaysReschedEndProtect = ("0b9ca2dcabc3", "sched/fair: Always trigger resched at the end of a protected period", "v6.17",
        "fair.c update_curr (!protect_slice -> resched)", true, []),
    NewidleCostBump = ("155213a2aed4", "sched/fair: Bump sd->max_newidle_lb_cost when newidle balance fails", "v6.17",
        "fair.c sched_balance_newidle (cost bump, cap)", true, []),
    // dl_server fixes (rt-dl.md §4.5, §4.11)
    DlServerRtFormula = ("fc975cfb3639", "sched/deadline: Fix dl_server runtime calculation formula", "v6.16-rc5",
        "deadline.c dl_scaled_delta_exec (a server's charge is not scaled by frequency and capacity)", true, []),
    DlServerLessAggr = ("cccb45d7c429", "sched/deadline: Less agressive dl_server handling", "v6.17-rc1",
        "fair.c dequeue_entities (no dl_server_stop when the fair class empties), deadline.c dl_server_start (no-op when active), dl_server_stopped (two-strike idle stop)", true, []),
    DlServerStoppedFix = ("4717432dfd99", "sched/deadline: Fix dl_server_stopped()", "v6.17",
        "deadline.c dl_server_stopped (true when not active)", true, []),
    DlServerParamStop = ("bb4700adc3ab", "sched/deadline: Always stop dl-server before changing parameters", "v6.17",
        "debug.c sched_fair_server_write / Kernel::set_fair_server_params (always stop first)", true, []),
    DlServerExpiry = ("421fc59cf58c", "sched/deadline: Fix RT task potential starvation when expiry time passed", "v6.17",
        "deadline.c update_curr_dl_se (a server whose throttle timer cannot be armed opens a new period and arms its timer instead of replenish-and-run)", true, []),
    DlServerNrRunning = ("52d15521eb75", "sched/deadline: Don't count nr_running for dl_server proxy tasks", "v6.17",
        "deadline.c nr_running with proxy execution (not modelled: servers are never counted)", false, []),
    DlServerStuck = ("4ae8d9aa9f9d", "sched/deadline: Fix dl_server getting stuck", "v6.17-rc7",
        "deadline.c dl_server_timer, replenish_dl_entity (no server_has_tasks test)", true, []),
    DlServerBehaviour = ("a3a70caf7906", "sched/deadline: Fix dl_server behaviour", "v6.17-rc7",
        "deadline.c pick_task_dl (an empty server pick stops the server instead of yielding)", true, []),
    DlServerOffline = ("ee6e44dfe6e5", "sched/deadline: Stop dl_server before CPU goes offline", "v6.18",
        "deadline.c dl_server_stop at CPU offline (no CPU hotplug in the model)", false, []),
    // the task-based CFS bandwidth throttle series (Valentin Schneider, Aaron Lu; in
    // linux-next 2025-09-05 via tip sched/core, merged for v6.18), and its v6.18 fix
    ThrottleDataStructures = ("2cd571245b43", "sched/fair: Add related data structure for task based throttle", "v6.18",
        "sched.h cfs_rq throttled_limbo_list, task throttle_node/sched_throttle_work (no behaviour change)", false, []),
    ThrottleTaskWork = ("7fc2d1439247", "sched/fair: Implement throttle task work and related helpers", "v6.18",
        "fair.c throttle_cfs_rq_work, task_throttle_setup_work (no behaviour change before e1fad12dcb66)", false, []),
    TaskBasedThrottle = ("e1fad12dcb66", "sched/fair: Switch to task based throttle model", "v6.18",
        "fair.c throttle_cfs_rq/unthrottle_cfs_rq (group entity stays queued; tasks leave one by one on return to user to the limbo list), pick_task_fair (task work), enqueue_task_fair/dequeue_entities (no stop at a throttled cfs_rq), check_preempt_wakeup_fair (task_is_throttled)", true, []),
    ThrottleTimeAccounting = ("eb962f251fbb", "sched/fair: Task based throttle time accounting", "v6.18",
        "fair.c record_throttle_clock (throttled time starts when the first task is throttled; cpu.stat throttled_usec), DEQUEUE_THROTTLE", true, []),
    NoThrottledLbPair = ("5b726e9bf954", "sched/fair: Get rid of throttled_lb_pair()", "v6.18",
        "fair.c can_migrate_task (no throttled_lb_pair test)", true, []),
    UnthrottleGrant = ("956dfda6a708", "sched/fair: Prevent cfs_rq from being unthrottled with zero runtime_remaining", "v6.18",
        "core.c tg_set_cfs_bandwidth (runtime_remaining = 1, so unthrottle_cfs_rq's zero-runtime test of e1fad12dcb66 lets a quota change unthrottle; tip sched/urgent 2025-11-06, v6.18-rc: release candidate unverified)", true, []),
    // ------------------------------------------------------------------ v6.19 (dl_server)
    DlServerTimeAcct = ("e636ffb9e31b", "sched/deadline: Fix dl_server time accounting", "v6.19-rc1",
        "deadline.c dl_server_start/dl_server_timer (update_curr first), dl_server_update (only when active), idle.c update_curr_idle (dl_server_update_idle)", true, []),
    DlServerStopCond = ("f5a538c07df2", "sched/deadline: Fix dl_server stop condition", "v6.19-rc1",
        "deadline.c update_curr_dl_se, dl_server_timer, dl_server_stop (dl_defer_idle: one idle push, then stop)", true, []),
    DlServerStuck2 = ("115135422562", "sched/deadline: Fix 'stuck' dl_server", "v6.19-rc8",
        "deadline.c update_dl_entity (clear dl_defer_running when the wakeup rule opens a new period)", true, []),
    // ------------------------------------------------------------------ v7.0 (dl_server)
    DlServerRevised = ("14a857056466", "sched/deadline: Use revised wakeup rule for dl_server", "v7.0",
        "deadline.c update_dl_entity (REVISED_CONDITION also for deferred servers); stable ids d66792919d4f (6.12.y), 37cfab131f1b (6.19.y)", true, []),
    // ------------------------------------------------------------------ v6.19
    NextBuddyReimpl = ("e837456fdca8", "sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals", "v6.19",
        "fair.c __pick_eevdf (buddy, protect), check_preempt_wakeup_fair (actions, WF_FORK, preempt_sync)", true, []),
    NextBuddyOn = ("aceccac58ad7", "sched/fair: Enable scheduler feature NEXT_BUDDY", "v6.19-rc1",
        "features.h NEXT_BUDDY default", true, [Set(F::NEXT_BUDDY, true)]),
    ForcePreemptRevert = ("15257cc2f905", "sched/fair: Revert force wakeup preemption", "v6.19-rc7",
        "fair.c check_preempt_wakeup_fair (no resched when the waker is ineligible)", true, []),
    NextBuddyOff = ("4f70f106bca1", "sched/fair: Disable scheduler feature NEXT_BUDDY", "v6.19-rc7",
        "features.h NEXT_BUDDY default", true, [Set(F::NEXT_BUDDY, false)]),
    ZeroVruntime = ("79f3f9bedd14", "sched/eevdf: Fix min_vruntime vs avg_vruntime", "v6.19",
        "fair.c zero_vruntime reference point (moved at tree insert/remove)", true, []),
    YieldForfeit = ("79104becf42b", "sched/fair: Forfeit vruntime on yield", "v6.19",
        "fair.c yield_task_fair", true, []),
    DelayedClassSwitch = ("1ae5f5dfe5ad", "sched: Cleanup sched_delayed handling for class switches", "v6.19",
        "core.c class switch of a delayed task", false, []),
    NewidleBumpRevert = ("d206fbad9328", "Revert \"sched/fair: Bump sd->max_newidle_lb_cost when newidle balance fails\"", "v6.19",
        "fair.c sched_balance_newidle", true, []),
    NiRandom = ("33cf66d88306", "sched/fair: Proportional newidle balance", "v6.19",
        "fair.c sched_balance_newidle (NI_RANDOM)", true, [Add(F::NI_RANDOM, true)]),
    SlowpathAllowedCpus = ("82d6e01a0699", "sched/fair: Only update stats for allowed CPUs when looking for dst group", "v6.19",
        "fair.c update_sg_wakeup_stats", true, []),
    // ------------------------------------------------------------------ v7.0
    SeparateVprot = ("80390ead2080", "sched/fair: Separate se->vlag from se->vprot", "v7.0",
        "sched.h se->vprot apart from se->vlag (before it, saving a lag overwrote the protection marker)", true, []),
    ZeroVruntimeTracking = ("b3d99f43c72b", "sched/fair: Fix zero_vruntime tracking", "v7.0",
        "fair.c avg_vruntime moves zero_vruntime", true, []),
    ZeroVruntimeTrackingFix = ("1319ea57529e", "sched/fair: Fix zero_vruntime tracking fix", "v7.0",
        "fair.c update_deadline calls avg_vruntime; yield via update_deadline", true, []),
    ProtectAtPickOnly = ("bcd74b2ffdd0", "sched/fair: Only set slice protection at pick time", "v7.0",
        "fair.c set_next_entity(first)", true, []),
    ReweightVprot = ("ff38424030f9", "sched/eevdf: Update se->vprot in reweight_entity()", "v7.0",
        "fair.c reweight_entity (vprot kept relative)", true, []),
    LagClampMaxSlice = ("6e3c0a4e1ad1", "sched/fair: Fix lag clamp", "v7.0",
        "fair.c update_entity_lag (limit = max_slice + TICK_NSEC)", true, []),
    LimitHrtick = ("95a0155224a6", "sched/fair: Limit hrtick work", "v7.0",
        "fair.c task_tick_fair (hrtick tick only accounts)", false, []),
    NewidleLockBounce = ("45e09225085f", "sched/fair: Avoid rq->lock bouncing in sched_balance_newidle()", "v7.0",
        "fair.c sched_balance_newidle (blocked-load update inside the cost window)", true, []),
    RestrictPreemptModes = ("7dadeaa6e851", "sched: Further restrict the preemption modes", "v7.0",
        "Kconfig.preempt (no NONE/VOLUNTARY on lazy-capable arches; default LAZY)", true, []),
    // ------------------------------------------------------------------ v7.1
    SkipSchedIdleRq = ("fd54d81c2c0e", "sched/fair: Skip SCHED_IDLE rq for SCHED_IDLE task", "v7.1",
        "fair.c select_idle_sibling/select_idle_cpu/select_idle_core/find_idlest_group_cpu (choose_idle_cpu)", true, []),
    NiRate = ("9fe89f022c05", "sched/fair: More complex proportional newidle balance", "v7.1",
        "fair.c sched_balance_newidle (NI_RATE)", true, [Add(F::NI_RATE, true)]),
    OverutilizedUclamp = ("926475806606", "sched/fair: Update overutilized detection", "v7.1",
        "fair.c cpu_overutilized (EAS)", false, []),
    EasOverloaded = ("d3d663faa1d4", "sched/fair: Filter false overloaded_group case for EAS", "v7.1",
        "fair.c group_is_overloaded (EAS)", false, []),
    FullWeightAvg = ("4823725d9d1d", "sched/fair: Increase weight bits for avg_vruntime", "v7.1",
        "fair.c avg_vruntime sums with full weights", true, [Add(F::PARANOID_AVG, false)]),
    FullWeightCalcDelta = ("db4551e2ba34", "sched/fair: Use full weight to __calc_delta()", "v7.1",
        "fair.c __calc_delta (full-weight divide)", true, []),
    RevertReweightPlacement = ("101f3498b4bd", "sched/fair: Revert 6d71a9c61604 (sched/fair: Fix EEVDF entity placement bug causing scheduling lag)", "v7.1",
        "fair.c reweight_entity (avg-relative, lag preserving)", true, []),
    HrtickDuration = ("558c18d3fbb6", "sched/eevdf: Fix HRTICK duration", "v7.1",
        "fair.c hrtick_start_fair (time to the virtual deadline; HRTICK is not modelled)", false, []),
    HrtickUpdate = ("97015376642f", "sched/fair: Simplify hrtick_update()", "v7.1",
        "fair.c hrtick_update", false, []),
    HrtickHard = ("5d88e424ec1b", "sched/fair: Make hrtick resched hard", "v7.1",
        "fair.c entity_tick (hrtick expiry: resched_curr; HRTICK is not modelled)", false, []),
    HrtickDefault = ("9213aa4784cf", "sched: Default enable HRTICK when deferred rearming is enabled", "v7.1",
        "features.h HRTICK/HRTICK_DL default (only with CONFIG_HRTIMER_REARM_DEFERRED)", false, []),
    DelayedNegativeLag = ("059258b0d424", "sched/fair: Prevent negative lag increase during delayed dequeue", "v7.1",
        "fair.c update_entity_lag (delayed: max with recorded lag), requeue_delayed_entity", true, []),
    DelayedNegativeLagFix = ("c5cd6fd75b6a", "sched/fair: Fix the negative lag increase fix", "v7.1",
        "fair.c update_entity_lag (DELAY_ZERO cap)", true, []),
    EnqueueOverflow = ("556146ce5e94", "sched/fair: Avoid overflow in enqueue_entity()", "v7.1",
        "fair.c enqueue_entity (reference point; no decision change in exact arithmetic)", true, []),
    ForkRelDeadline = ("3da56dc063cd", "sched/fair: Clear rel_deadline when initializing forked entities", "v7.1",
        "core.c __sched_fork (rel_deadline = 0)", true, []),
    EligibleOverflow = ("b6eee96843e8", "sched/fair: Fix overflow in vruntime_eligible()", "v7.1",
        "fair.c vruntime_eligible (128-bit product; schedlab always computes exactly)", false, []),
    WakeupPreemptDelayed = ("ac8e69e69363", "sched/fair: Fix wakeup_preempt_fair() vs delayed dequeue", "v7.1",
        "fair.c wakeup_preempt_fair (delayed wakee; details unverified)", true, []),
    WakeupPreemptDelayedFix = ("9f6d929ee2c6", "sched/fair: Fix wakeup_preempt_fair() for not waking up task", "v7.1",
        "fair.c wakeup_preempt_fair", false, []),
    ClearBuddiesPreemptShort = ("78cde54ea5f0", "sched/eevdf: Clear buddies for preempt_short", "v7.1",
        "fair.c __pick_eevdf (buddy only when protect), wakeup_preempt_fair (clear_buddies on a short preemption)", true, []),
}

/// A set of applied patches (indexed by `Patch as usize`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PatchSet {
    on: [bool; Patch::COUNT],
}

impl Default for PatchSet {
    fn default() -> Self {
        PatchSet {
            on: [false; Patch::COUNT],
        }
    }
}

impl PatchSet {
    #[inline]
    pub fn has(&self, p: Patch) -> bool {
        self.on[p as usize]
    }
    pub fn add(&mut self, p: Patch) {
        self.on[p as usize] = true;
    }
    pub fn remove(&mut self, p: Patch) {
        self.on[p as usize] = false;
    }
    pub fn iter(&self) -> impl Iterator<Item = Patch> + '_ {
        Patch::ALL.iter().copied().filter(|p| self.has(*p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_12_hex() {
        let mut ids: Vec<&str> = Patch::ALL.iter().map(|p| p.id()).collect();
        for id in &ids {
            assert_eq!(id.len(), 12, "{id}");
            assert!(id
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        }
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate patch id");
    }

    #[test]
    fn lookup_by_id() {
        assert_eq!(
            Patch::from_id("78cde54ea5f0"),
            Some(Patch::ClearBuddiesPreemptShort)
        );
        assert_eq!(
            Patch::from_id("78cde54ea5f03398f1cf6656de2472068f6da966"),
            Some(Patch::ClearBuddiesPreemptShort)
        );
        assert_eq!(Patch::from_id("78cde54"), None);
        // Campaign input: a multi-byte character across the 12th byte panicked.
        assert_eq!(Patch::from_id("556146ce5e9\u{202e}4"), None);
        assert_eq!(Patch::from_id("000000000000"), None);
    }
}

/// The `modelled` flags of patches and features against the code that reads them: a flag
/// that says "modelled" must have a reader, and a reader must not hide behind "not modelled".
#[cfg(test)]
mod truth {
    use super::*;
    use crate::features::Feature;

    /// Every source file of the crate except the three that only declare patches and
    /// features (presets.rs counts only for its `has(Patch::…)` tests, see below).
    const SOURCES: &[(&str, &str)] = &[
        ("balance.rs", include_str!("balance.rs")),
        ("blkdev.rs", include_str!("blkdev.rs")),
        ("cgroup.rs", include_str!("cgroup.rs")),
        ("class.rs", include_str!("class.rs")),
        ("core.rs", include_str!("core.rs")),
        ("deadline.rs", include_str!("deadline.rs")),
        ("debug.rs", include_str!("debug.rs")),
        ("eventpoll.rs", include_str!("eventpoll.rs")),
        ("exec.rs", include_str!("exec.rs")),
        ("fair.rs", include_str!("fair.rs")),
        ("fair_cfs.rs", include_str!("fair_cfs.rs")),
        ("fair_bandwidth.rs", include_str!("fair_bandwidth.rs")),
        ("fair_pelt.rs", include_str!("fair_pelt.rs")),
        ("idle.rs", include_str!("idle.rs")),
        ("invariants.rs", include_str!("invariants.rs")),
        ("ipc.rs", include_str!("ipc.rs")),
        ("lib.rs", include_str!("lib.rs")),
        ("machine.rs", include_str!("machine.rs")),
        ("mutex.rs", include_str!("mutex.rs")),
        ("net.rs", include_str!("net.rs")),
        ("pelt.rs", include_str!("pelt.rs")),
        ("rt.rs", include_str!("rt.rs")),
        ("sched.rs", include_str!("sched.rs")),
        ("select.rs", include_str!("select.rs")),
        ("sim.rs", include_str!("sim.rs")),
        ("stats.rs", include_str!("stats.rs")),
        ("stop_task.rs", include_str!("stop_task.rs")),
        ("sys.rs", include_str!("sys.rs")),
        ("syscalls.rs", include_str!("syscalls.rs")),
        ("sysctl.rs", include_str!("sysctl.rs")),
        ("trace.rs", include_str!("trace.rs")),
        ("tree.rs", include_str!("tree.rs")),
        ("workqueue.rs", include_str!("workqueue.rs")),
        ("xfs.rs", include_str!("xfs.rs")),
    ];
    const PRESETS_RS: &str = include_str!("presets.rs");
    const LIB_RS: &str = include_str!("lib.rs");

    /// Whether `word` occurs in `text` as a whole identifier path (not as a prefix of a
    /// longer name: `P::HNrDelayed` must not match `P::HNrDelayedFix`).
    fn mentions(text: &str, word: &str) -> bool {
        text.match_indices(word).any(|(i, _)| {
            let next = text[i + word.len()..].chars().next();
            !matches!(next, Some(c) if c.is_alphanumeric() || c == '_')
        })
    }

    fn feature_read(f: Feature) -> bool {
        let (a, b) = (format!("Feature::{}", f.name()), format!("F::{}", f.name()));
        SOURCES
            .iter()
            .any(|(_, src)| mentions(src, &a) || mentions(src, &b))
    }

    fn patch_read(p: Patch) -> bool {
        let name = format!("{p:?}");
        let tests = [
            format!("has(Patch::{name})"),
            format!("has(P::{name})"),
            format!("has(crate::patches::Patch::{name})"),
        ];
        SOURCES
            .iter()
            .map(|(_, s)| *s)
            .chain([PRESETS_RS])
            .any(|src| tests.iter().any(|t| mentions(src, t)))
    }

    #[test]
    fn the_sources_were_read() {
        // A guard against an empty or renamed list: the file list names every module that
        // lib.rs declares except the declaration files.
        for (name, src) in SOURCES {
            assert!(!src.is_empty(), "{name}");
            let module = name.trim_end_matches(".rs");
            if module != "lib" {
                assert!(
                    mentions(LIB_RS, &format!("mod {module}")),
                    "{name} is not a module"
                );
            }
        }
        for line in LIB_RS.lines() {
            let Some(m) = line
                .trim()
                .strip_prefix("pub mod ")
                .or(line.trim().strip_prefix("mod "))
            else {
                continue;
            };
            if !m.ends_with(';') {
                continue; // an inline module (`mod layout_tests {`), no file of its own
            }
            let m = m.trim_end_matches(';');
            let file = format!("{m}.rs");
            assert!(
                SOURCES.iter().any(|(n, _)| *n == file)
                    || ["features.rs", "patches.rs", "presets.rs"].contains(&file.as_str()),
                "module {m} is missing from the list of sources this test reads"
            );
        }
    }

    #[test]
    fn feature_flags_match_the_code() {
        for f in Feature::ALL {
            assert_eq!(
                f.modelled(),
                feature_read(*f),
                "sched_feature {}: modelled = {} but the sources {} it",
                f.name(),
                f.modelled(),
                if feature_read(*f) {
                    "read"
                } else {
                    "never read"
                }
            );
        }
    }

    #[test]
    fn patch_flags_match_the_code() {
        for p in Patch::ALL {
            let i = p.info();
            // A patch acts through its own `has()` test or through a feature it adds, sets
            // or removes that the model reads.
            let via_feature = i.features.iter().any(|fe| match *fe {
                FeatEdit::Add(f, _) | FeatEdit::Set(f, _) | FeatEdit::Remove(f) => f.modelled(),
            });
            let acts = patch_read(*p) || via_feature;
            assert_eq!(
                i.modelled,
                acts,
                "patch {} ({p:?}): modelled = {} but the code {}",
                i.id,
                i.modelled,
                if acts { "acts on it" } else { "never tests it" }
            );
        }
    }
}
