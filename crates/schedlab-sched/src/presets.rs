//! Kernel presets and the kernel string.
//!
//! A preset is data: a list of patches on top of the v6.6 EEVDF baseline plus feature
//! defaults (DESIGN.md §3.3). Stable point releases are overlays: a preset plus the backports
//! they carry. A kernel string such as
//! `v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE base_slice_ns=3000000 preempt=lazy`
//! selects one configuration: preset, then `+id`/`-id` patches, then features written as in
//! `/sys/kernel/debug/sched/features`, then tunables under their kernel names.

use crate::features::{Feature, FeatureSet, SimFeature};
use crate::patches::{FeatEdit, Patch, PatchSet};
use crate::sysctl::{sysctl_factor, Sysctls};
use std::fmt;

pub use schedlab_platform::PreemptModel;

/// Kernel code can be preempted at any point outside non-preemptible sections
/// (FULL, LAZY and RT; rt-dl.md §1.7).
pub fn kernel_preemptible(m: PreemptModel) -> bool {
    matches!(
        m,
        PreemptModel::Full | PreemptModel::Lazy | PreemptModel::Rt
    )
}

/// A preset or overlay definition.
pub struct PresetDef {
    pub name: &'static str,
    pub base: Option<&'static str>,
    pub summary: &'static str,
    pub patches: &'static [Patch],
    pub features: &'static [FeatEdit],
}

use FeatEdit::{Add, Remove};
use Feature as F;
use Patch as P;

/// The v6.5 features.h (cfs.md §12.1), in file order.
const V65_FEATURES: &[FeatEdit] = &[
    Add(F::GENTLE_FAIR_SLEEPERS, true),
    Add(F::START_DEBIT, true),
    Add(F::NEXT_BUDDY, false),
    Add(F::LAST_BUDDY, true),
    Add(F::CACHE_HOT_BUDDY, true),
    Add(F::WAKEUP_PREEMPTION, true),
    Add(F::HRTICK, false),
    Add(F::HRTICK_DL, false),
    Add(F::DOUBLE_TICK, false),
    Add(F::NONTASK_CAPACITY, true),
    Add(F::TTWU_QUEUE, true),
    Add(F::SIS_PROP, false),
    Add(F::SIS_UTIL, true),
    Add(F::WARN_DOUBLE_CLOCK, false),
    Add(F::RT_PUSH_IPI, true),
    Add(F::RT_RUNTIME_SHARE, false),
    Add(F::LB_MIN, false),
    Add(F::ATTACH_AGE_LOAD, true),
    Add(F::WA_IDLE, true),
    Add(F::WA_WEIGHT, true),
    Add(F::WA_BIAS, true),
    Add(F::UTIL_EST, true),
    Add(F::UTIL_EST_FASTUP, true),
    Add(F::LATENCY_WARN, false),
    Add(F::ALT_PERIOD, true),
    Add(F::BASE_SLICE, true),
];

pub const PRESETS: &[PresetDef] = &[
    PresetDef {
        name: "v6.5",
        base: None,
        summary: "the last CFS kernel: sched_latency / min / wakeup granularity, sleeper credit, next/last/skip buddies",
        patches: &[],
        features: V65_FEATURES,
    },
    PresetDef {
        name: "v6.6",
        base: Some("v6.5"),
        summary: "first EEVDF kernel: vruntime-sorted tree, RUN_TO_PARITY, no DELAY_DEQUEUE",
        patches: &[
            P::AvgVruntime,
            P::RemoveStartDebit,
            P::LagPlacement,
            P::RbAddAugmentedCached,
            P::EevdfPolicy,
            P::CommitLagPlacement,
            P::LagCrossRqPlacement,
            P::CommitEevdf,
            P::RenameBaseSlice,
            P::PropagateEnqueueFlags,
            P::CurbWakeupPreemption,
            P::EevdfDoc,
            // v6.6 outside the EEVDF series (cfs.md §13.1, §15.2)
            P::SmtActiveBalance,
            P::SgCores,
            P::SiblingImbalance,
            P::IdleCoreShouldBalance,
            P::HybridCluster,
            P::AsymCapacityScanTarget,
            P::RemoveUtilEstBoost,
            P::AlignGroupFlags,
            P::HzBw,
            P::WfCurrentCpu,
            P::SmtBalanceFix,
        ],
        features: &[],
    },
    PresetDef {
        name: "v6.12",
        base: Some("v6.6"),
        summary: "DELAY_DEQUEUE, PREEMPT_SHORT, custom slices, deadline-sorted tree, fair_server",
        patches: &[
            P::RtPushableOverload,
            P::ClusterShareResources,
            P::ClusterScan,
            P::ClusterPrevFallback,
            P::TgLoadAvgRatelimit,
            P::LagPreservingReweight,
            P::IdleSmtShouldBalance,
            P::DeadlineSortedTree,
            P::PickFastPath,
            P::SelectIdleSmtSpan,
            P::SelectIdleCoreSpan,
            P::MisfitStrictBusiest,
            P::MisfitFittingCpu,
            P::MisfitNoBackoff,
            P::DelayedDequeue,
            P::DelayZero,
            P::EnqueueDelayed,
            P::PlaceRelDeadline,
            P::CustomSlice,
            P::IdleStrictHierarchy,
            P::PreemptShort,
            P::UpdateCurrResched,
            P::MinSlicePropagate,
            P::PeltTaskRunnableDelayed,
            P::UtilEstDelayed,
            P::RemoveHzBw,
            P::FairServer,
            P::RemoveRtThrottle,
        ],
        // UTIL_EST_FASTUP and SIS_PROP left features.h between v6.6 and v6.12 (fair.md §11.2;
        // the exact commits are not recorded there).
        features: &[Remove(F::UTIL_EST_FASTUP), Remove(F::SIS_PROP)],
    },
    PresetDef {
        name: "v6.18",
        base: Some("v6.12"),
        summary: "lazy preemption, PICK_BUDDY, h_nr_runnable, 0.70 ms slice, vprot slice protection",
        patches: &[
            P::PreemptLazy,
            P::FixNextBuddy,
            P::HNrDelayed,
            P::StopTickHNr,
            P::ReweightPlaceEntity,
            P::CfsGroupKeepWeight,
            P::RemoveDoubleTick,
            P::SkipZeroLag,
            P::PickBuddy,
            P::HNrRunnable,
            P::LbUseHNrRunnable,
            P::LbSkipDelayed,
            P::LbEligibleFirst,
            P::RqSelected,
            P::ReduceSlice,
            P::IdleCancelProtect,
            P::ForceMinSlice,
            P::ReweightPlaceConstraints,
            P::WakeSyncDelayed,
            P::ProtectSliceHelpers,
            P::ProtectVprot,
            P::ShortProbe,
            P::ProtectMinSlice,
            P::ShortShrinkProtect,
            P::AlwaysReschedEndProtect,
            P::NewidleCostBump,
            // the v6.17 dl_server chain and its v6.18 fixes (rt-dl.md §4.6)
            P::DlServerRtFormula,
            P::DlServerLessAggr,
            P::DlServerStoppedFix,
            P::DlServerParamStop,
            P::DlServerExpiry,
            P::DlServerNrRunning,
            P::DlServerStuck,
            P::DlServerBehaviour,
            P::DlServerOffline,
            // task-based CFS bandwidth throttling
            P::ThrottleDataStructures,
            P::ThrottleTaskWork,
            P::TaskBasedThrottle,
            P::ThrottleTimeAccounting,
            P::NoThrottledLbPair,
            P::UnthrottleGrant,
            // not a scheduler commit: fs/pipe.c, v6.15 (vfs-6.15.pipe); it changes what the
            // pipe benchmarks' system calls cost (docs/validation/pipe-atime.md)
            P::PipeAnonNoTimes,
            // not a scheduler commit: net/ipv4/udp.c, v6.18 (net-next, Sep 2025); it changes
            // how many datagrams an unread UDP socket admits (netbench.md §1.12.8)
            P::UdpRefineEnqueueTest,
        ],
        features: &[],
    },
    PresetDef {
        name: "v6.19",
        base: Some("v6.18"),
        summary: "NEXT_BUDDY reimplementation (off by default), zero_vruntime, yield forfeit, NI_RANDOM",
        patches: &[
            P::NextBuddyReimpl,
            P::NextBuddyOn,
            P::ForcePreemptRevert,
            P::NextBuddyOff,
            P::ZeroVruntime,
            P::YieldForfeit,
            P::DelayedClassSwitch,
            P::NewidleBumpRevert,
            P::NiRandom,
            P::SlowpathAllowedCpus,
            P::DlServerTimeAcct,
            P::DlServerStopCond,
            P::DlServerStuck2,
        ],
        features: &[],
    },
    PresetDef {
        name: "v7.0",
        base: Some("v6.19"),
        summary: "zero_vruntime tracking, protection only at pick, lag clamp with max_slice",
        patches: &[
            P::SeparateVprot,
            P::ZeroVruntimeTracking,
            P::ZeroVruntimeTrackingFix,
            P::ProtectAtPickOnly,
            P::ReweightVprot,
            P::LagClampMaxSlice,
            P::LimitHrtick,
            P::NewidleLockBounce,
            P::RestrictPreemptModes,
            P::DlServerRevised,
        ],
        features: &[],
    },
    PresetDef {
        name: "v7.1",
        base: Some("v7.0"),
        summary: "full-weight arithmetic, delayed negative-lag rule, SCHED_IDLE wake placement, buddies vs PREEMPT_SHORT",
        patches: &[
            P::SkipSchedIdleRq,
            P::NiRate,
            P::OverutilizedUclamp,
            P::EasOverloaded,
            P::FullWeightAvg,
            P::FullWeightCalcDelta,
            P::RevertReweightPlacement,
            P::HrtickDuration,
            P::HrtickUpdate,
            P::HrtickHard,
            P::HrtickDefault,
            P::DelayedNegativeLag,
            P::DelayedNegativeLagFix,
            P::EnqueueOverflow,
            P::ForkRelDeadline,
            P::EligibleOverflow,
            P::WakeupPreemptDelayed,
            P::WakeupPreemptDelayedFix,
            P::ClearBuddiesPreemptShort,
        ],
        features: &[],
    },
    // ---- stable overlays (fair.md §12.2, smp.md §10.3) ----
    PresetDef {
        name: "v6.5.y-3",
        base: Some("v6.5"),
        summary: "6.5.3: v6.5 + the util_est boosting removal (cfs.md §13.3)",
        patches: &[P::RemoveUtilEstBoost],
        features: &[],
    },
    PresetDef {
        name: "v6.6.78",
        base: Some("v6.6"),
        summary: "seed 000's 6.6.y: v6.6 + the should_we_balance fix (6.6.3) and the select_idle_smt/core domain checks (Mar 2024) and the strict-hierarchy SCHED_IDLE backport (Oct 2024)",
        patches: &[
            P::IdleSmtShouldBalance,
            P::SelectIdleSmtSpan,
            P::SelectIdleCoreSpan,
            P::IdleStrictHierarchy,
        ],
        features: &[],
    },
    PresetDef {
        name: "v6.12.y-late",
        base: Some("v6.12"),
        summary: "late 6.12.y (smp.md §10.3): 0.70 ms slice, counter renames, wake_up_sync fix, zero_vruntime, NI_RANDOM",
        patches: &[
            P::ReduceSlice,
            P::HNrDelayed,
            P::StopTickHNr,
            P::FixNextBuddy,
            P::HNrRunnable,
            P::WakeSyncDelayed,
            P::ZeroVruntime,
            P::ZeroVruntimeTracking,
            P::ZeroVruntimeTrackingFix,
            // one stable dependency of 1319ea57529e replaces did_preempt_short's marker test
            // with protect_slice(curr) (smp.md §10.3; exact list unverified)
            P::AlwaysReschedEndProtect,
            P::NewidleCostBump,
            P::NewidleBumpRevert,
            P::NiRandom,
        ],
        features: &[],
    },
    PresetDef {
        name: "v6.12.75",
        base: Some("v6.12.y-late"),
        summary: "seed 000's 6.12.75 (Raspberry Pi OS): the v6.12.y-late overlay",
        patches: &[],
        features: &[],
    },
    PresetDef {
        name: "v6.12.81",
        base: Some("v6.12.y-late"),
        summary: "seed 000's 6.12.81: v6.12.y-late + the 6.12.77 queue (lag clamp, reweight placement; final status unverified)",
        patches: &[P::LagClampMaxSlice, P::ReweightPlaceEntity],
        features: &[],
    },
    PresetDef {
        name: "v6.12.85",
        base: Some("v6.12.81"),
        summary: "seed 001's regressed 6.12.y: + 115135422562 and d66792919d4f (the revised wakeup rule for the dl_server, present in 6.12.85 per the stable report; 115135422562's release unverified)",
        patches: &[P::DlServerStuck2, P::DlServerRevised],
        features: &[],
    },
    PresetDef {
        name: "v6.18.21",
        base: Some("v6.18"),
        summary: "seed 000's 6.18.21: v6.18 + stable backports of zero_vruntime, yield forfeit and NI_RANDOM",
        patches: &[
            P::ZeroVruntime,
            P::YieldForfeit,
            P::NewidleBumpRevert,
            P::NiRandom,
        ],
        features: &[],
    },
];

pub fn preset_def(name: &str) -> Option<&'static PresetDef> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The main presets (not the stable overlays), in version order.
pub const MAIN_PRESETS: &[&str] = &["v6.5", "v6.6", "v6.12", "v6.18", "v6.19", "v7.0", "v7.1"];

/// Error in a kernel string: names the offending token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelSpecError {
    #[error("kernel '{spec}': empty kernel string")]
    Empty { spec: String },
    #[error("kernel '{spec}': unknown preset '{token}' (known: {known})")]
    UnknownPreset {
        spec: String,
        token: String,
        known: String,
    },
    #[error("kernel '{spec}': unknown patch '{token}' (commit ids are 12 hex characters; see `schedlab list patches`)")]
    UnknownPatch { spec: String, token: String },
    #[error("kernel '{spec}': unknown sched_feature '{token}' (see `schedlab list features`)")]
    UnknownFeature { spec: String, token: String },
    #[error("kernel '{spec}': sched_feature {feature} does not exist in this kernel{hint}")]
    AbsentFeature {
        spec: String,
        feature: String,
        hint: String,
    },
    #[error("kernel '{spec}': unknown tunable '{token}' (see `schedlab list sysctls`)")]
    UnknownSysctl { spec: String, token: String },
    #[error("kernel '{spec}': {name}={value}: {reason}")]
    BadValue {
        spec: String,
        name: String,
        value: String,
        reason: String,
    },
    #[error("kernel '{spec}': {token}: commit {id} belongs to the EEVDF series that replaced CFS in v6.6, which is applied or left out as a whole: use the v6.5 preset for the CFS fair class, v6.6 or later for EEVDF (`schedlab list patches`)")]
    SeriesPatch {
        spec: String,
        token: String,
        id: String,
    },
    #[error("kernel '{spec}': cannot read '{token}': expected a preset, +patch, -patch, FEATURE, NO_FEATURE or name=value")]
    BadToken { spec: String, token: String },
}

/// One fully resolved simulated kernel configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// The kernel string as given (normalised spacing).
    pub spec: String,
    pub preset: &'static str,
    pub patches: PatchSet,
    pub features: FeatureSet,
    pub sim: [bool; SimFeature::COUNT],
    pub sysctl: Sysctls,
    pub preempt: Option<PreemptModel>,
    pub hz: Option<u32>,
    /// Tokens accepted with a warning (no effect, contradictory, or not modelled), one line
    /// each, for stderr and the JSON `warnings`.
    pub warnings: Vec<String>,
}

impl KernelConfig {
    #[inline]
    pub fn has(&self, p: Patch) -> bool {
        self.patches.has(p)
    }
    #[inline]
    pub fn feat(&self, f: Feature) -> bool {
        self.features.on(f)
    }
    #[inline]
    pub fn sim(&self, f: SimFeature) -> bool {
        self.sim[f as usize]
    }

    /// The normalized base slice: 0.75 ms, or 0.70 ms with 2ae891b82695 (fair.md §3.1).
    pub fn normalized_base_slice(&self) -> u64 {
        if self.has(Patch::ReduceSlice) {
            700_000
        } else {
            750_000
        }
    }

    /// sysctl_sched_base_slice for a machine with `ncpus` online CPUs.
    pub fn base_slice_ns(&self, ncpus: u32) -> u64 {
        match self.sysctl.base_slice_ns {
            Some(v) => v,
            None => {
                self.normalized_base_slice() * sysctl_factor(self.sysctl.tunable_scaling, ncpus)
            }
        }
    }

    /// Resolves the preemption model against the platform default and what the kernel
    /// supports: lazy exists from 7c70cb94d29c; with 7dadeaa6e851 NONE/VOLUNTARY are gone on
    /// lazy-capable architectures and the default becomes LAZY (rt-dl.md §1.9).
    pub fn resolve_preempt(&self, platform_default: PreemptModel) -> Result<PreemptModel, String> {
        if let Some(m) = self.preempt {
            if m == PreemptModel::Lazy && !self.has(Patch::PreemptLazy) {
                return Err(format!(
                    "preempt=lazy: this kernel has no lazy preemption (needs {})",
                    Patch::PreemptLazy.id()
                ));
            }
            if matches!(m, PreemptModel::None | PreemptModel::Voluntary)
                && self.has(Patch::RestrictPreemptModes)
            {
                return Err(format!(
                    "preempt={}: not selectable with {} (only full, lazy, rt)",
                    m.name(),
                    Patch::RestrictPreemptModes.id()
                ));
            }
            return Ok(m);
        }
        let mut m = platform_default;
        if m == PreemptModel::Lazy && !self.has(Patch::PreemptLazy) {
            m = PreemptModel::Full;
        }
        if matches!(m, PreemptModel::None | PreemptModel::Voluntary)
            && self.has(Patch::RestrictPreemptModes)
        {
            m = PreemptModel::Lazy;
        }
        Ok(m)
    }

    /// Parses a kernel string. See the module docs.
    ///
    /// Patches are resolved first, whatever their position: the kernel is rebuilt from its
    /// preset chain leaving out every `-ID` patch (so a feature that patch removed, or whose
    /// default it changed, is as the earlier kernel had it), then `+ID` patches are applied in
    /// the order given. Features and tunables follow in the order written. Tokens that change
    /// nothing or contradict an earlier one are accepted with a warning in
    /// [`KernelConfig::warnings`].
    pub fn parse(spec: &str) -> Result<KernelConfig, KernelSpecError> {
        let norm = spec.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut tokens = norm.split(' ').filter(|t| !t.is_empty());
        // `norm`, not `spec`: a string of blanks and newlines must not break the message.
        let first = tokens
            .next()
            .ok_or(KernelSpecError::Empty { spec: norm.clone() })?;
        // The first token: preset, optionally with +id / -id suffixes glued on.
        let (preset_name, glued) = split_glued(first);
        let preset = preset_def(preset_name).ok_or_else(|| KernelSpecError::UnknownPreset {
            spec: norm.clone(),
            token: preset_name.to_string(),
            known: PRESETS
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;

        // Pass 1: patch tokens, in order; everything else is kept for pass 2.
        let mut patch_tokens: Vec<(char, Patch)> = Vec::new();
        let mut rest: Vec<&str> = Vec::new();
        let lookup = |sign: char, id: &str| {
            Patch::from_id(id).ok_or_else(|| KernelSpecError::UnknownPatch {
                spec: norm.clone(),
                token: format!("{sign}{id}"),
            })
        };
        let series = |sign: char, p: Patch| {
            if crate::patches::SERIES.contains(&p) {
                Err(KernelSpecError::SeriesPatch {
                    spec: norm.clone(),
                    token: format!("{sign}{}", p.id()),
                    id: p.id().to_string(),
                })
            } else {
                Ok(p)
            }
        };
        for (sign, id) in glued {
            patch_tokens.push((sign, series(sign, lookup(sign, id)?)?));
        }
        for tok in tokens {
            let list = if let Some(ids) = tok.strip_prefix('+') {
                split_patch_list('+', ids)
            } else if tok.starts_with('-') && tok.len() > 1 {
                split_patch_list('-', &tok[1..])
            } else {
                rest.push(tok);
                continue;
            };
            for (sign, id) in list {
                patch_tokens.push((sign, series(sign, lookup(sign, id)?)?));
            }
        }

        let mut warnings = Vec::new();
        let mut base = PatchSet::default();
        let mut scratch = FeatureSet::empty();
        apply_preset(preset, &mut base, &mut scratch, &[]);
        // The last token naming a patch decides; repeats, contradictions and no-ops warn.
        let mut last: Vec<(Patch, char)> = Vec::new();
        for &(sign, p) in &patch_tokens {
            let tok = format!("{sign}{}", p.id());
            if let Some((_, prev)) = last.iter_mut().find(|(q, _)| *q == p) {
                if *prev == sign {
                    warnings.push(format!("{tok}: given twice"));
                } else {
                    warnings.push(format!(
                        "{prev}{id} then {tok}: contradictory patch tokens, the last ({tok}) wins",
                        id = p.id()
                    ));
                }
                *prev = sign;
                continue;
            }
            last.push((p, sign));
            if sign == '+' && base.has(p) {
                warnings.push(format!(
                    "{tok}: {} already carries it (no effect)",
                    preset.name
                ));
            } else if sign == '-' && !base.has(p) {
                warnings.push(format!(
                    "{tok}: {} does not carry it (no effect)",
                    preset.name
                ));
            }
            if !p.info().modelled {
                warnings.push(format!(
                    "{tok}: patch {} is listed but not modelled: it changes nothing in the simulation",
                    p.id()
                ));
            }
        }
        let removed: Vec<Patch> = last
            .iter()
            .filter(|(p, s)| *s == '-' && base.has(*p))
            .map(|(p, _)| *p)
            .collect();
        let mut patches = PatchSet::default();
        let mut features = FeatureSet::empty();
        apply_preset(preset, &mut patches, &mut features, &removed);
        for &(_, p) in &patch_tokens {
            let wanted = last.iter().any(|(q, s)| *q == p && *s == '+');
            if wanted && !patches.has(p) {
                patches.add(p);
                apply_feature_edits(p.info().features, &mut features);
            }
        }
        for &r in &removed {
            // Patch::ALL is in release order: these came after r and were written on top of it.
            let later = patches
                .iter()
                .filter(|q| (*q as usize) > (r as usize) && q.info().modelled)
                .count();
            if later > 0 && r.info().modelled {
                warnings.push(format!(
                    "-{}: {} still carries {later} later modelled patches written on top of it; \
                     this combination never existed as a kernel (--strict checks its invariants)",
                    r.id(),
                    preset.name
                ));
            }
        }

        let mut sim = [false; SimFeature::COUNT];
        for f in SimFeature::ALL {
            sim[*f as usize] = f.default_on();
        }
        let mut cfg = KernelConfig {
            spec: norm.clone(),
            preset: preset.name,
            patches,
            features,
            sim,
            sysctl: Sysctls::default(),
            preempt: None,
            hz: None,
            warnings,
        };
        // Pass 2: features and tunables in the order written.
        let mut seen: Vec<(String, String)> = Vec::new();
        for tok in rest {
            let key = match tok.split_once('=') {
                Some((k, _)) => k.to_string(),
                None => tok.strip_prefix("NO_").unwrap_or(tok).to_string(),
            };
            if let Some((_, prev)) = seen.iter().find(|(k, _)| *k == key) {
                let w = if prev == tok {
                    format!("{tok}: given twice")
                } else {
                    format!("{prev} then {tok}: contradictory tokens, the last ({tok}) wins")
                };
                cfg.warnings.push(w);
            }
            seen.retain(|(k, _)| *k != key);
            seen.push((key, tok.to_string()));
            if let Some((k, v)) = tok.split_once('=') {
                cfg.apply_sysctl(k, v, &norm)?;
            } else if tok
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                cfg.apply_feature(tok, &norm)?;
            } else {
                return Err(KernelSpecError::BadToken {
                    spec: norm.clone(),
                    token: tok.to_string(),
                });
            }
        }
        cfg.check_preempt(&norm)?;
        cfg.check_rt_bandwidth(&norm)?;
        Ok(cfg)
    }

    /// kernel: rt.c sched_rt_global_validate(): a finite `sched_rt_runtime_us` above
    /// `sched_rt_period_us` is refused (-EINVAL). The error names whichever of the two the
    /// spec wrote last (the write the kernel would refuse).
    fn check_rt_bandwidth(&self, spec: &str) -> Result<(), KernelSpecError> {
        let (rt, per) = (
            self.sysctl.sched_rt_runtime_us,
            self.sysctl.sched_rt_period_us,
        );
        if rt < 0 || rt as u64 <= per {
            return Ok(());
        }
        let at = |k: &str| spec.rfind(&format!("{k}=")).map(|i| i as i64).unwrap_or(-1);
        let (name, value) = if at("sched_rt_period_us") > at("sched_rt_runtime_us") {
            ("sched_rt_period_us", per.to_string())
        } else {
            ("sched_rt_runtime_us", rt.to_string())
        };
        Err(KernelSpecError::BadValue {
            spec: spec.to_string(),
            name: name.to_string(),
            value,
            reason: format!(
                "sched_rt_runtime_us ({rt}) must not exceed sched_rt_period_us ({per}) (EINVAL)"
            ),
        })
    }

    /// `preempt=` against what the kernel version offers (rt-dl.md §1.9): PREEMPT_RT is in
    /// mainline from v6.12 (before, only out of tree); LAZY needs 7c70cb94d29c; with
    /// 7dadeaa6e851 NONE and VOLUNTARY are gone.
    fn check_preempt(&self, spec: &str) -> Result<(), KernelSpecError> {
        let Some(m) = self.preempt else {
            return Ok(());
        };
        let bad = |reason: String| KernelSpecError::BadValue {
            spec: spec.to_string(),
            name: "preempt".to_string(),
            value: m.name().to_string(),
            reason,
        };
        if m == PreemptModel::Rt && !preset_derives_from(self.preset, "v6.12") {
            return Err(bad(format!(
                "PREEMPT_RT is in mainline from v6.12; {} had it only as an out-of-tree patch set",
                self.preset
            )));
        }
        if m == PreemptModel::Lazy && !self.has(Patch::PreemptLazy) {
            return Err(bad(format!(
                "this kernel has no lazy preemption (needs +{})",
                Patch::PreemptLazy.id()
            )));
        }
        if matches!(m, PreemptModel::None | PreemptModel::Voluntary)
            && self.has(Patch::RestrictPreemptModes)
        {
            return Err(bad(format!(
                "not selectable with {} (only full, lazy, rt)",
                Patch::RestrictPreemptModes.id()
            )));
        }
        Ok(())
    }

    fn apply_feature(&mut self, tok: &str, spec: &str) -> Result<(), KernelSpecError> {
        let (on, name) = match tok.strip_prefix("NO_") {
            Some(n) => (false, n),
            None => (true, tok),
        };
        if let Some(sf) = SimFeature::from_name(name) {
            self.sim[sf as usize] = on;
            return Ok(());
        }
        let f = Feature::from_name(name).ok_or_else(|| KernelSpecError::UnknownFeature {
            spec: spec.to_string(),
            token: tok.to_string(),
        })?;
        let was = self.features.exists(f).then(|| self.features.on(f));
        if !self.features.set(f, on) {
            let hint = Patch::ALL
                .iter()
                .find(|p| {
                    p.info()
                        .features
                        .iter()
                        .any(|fe| matches!(fe, FeatEdit::Add(g, _) if *g == f))
                })
                .map(|p| format!(" (it is introduced by {}: add +{})", p.id(), p.id()))
                .unwrap_or_default();
            return Err(KernelSpecError::AbsentFeature {
                spec: spec.to_string(),
                feature: name.to_string(),
                hint,
            });
        }
        // HRTICK and DOUBLE_TICK act only in the v6.5 CFS class (fair_cfs.rs)
        let eevdf_only_listed =
            matches!(f, Feature::HRTICK | Feature::DOUBLE_TICK) && self.has(Patch::EevdfPolicy);
        if eevdf_only_listed {
            self.warnings.push(format!(
                "{tok}: sched_feature {name} is modelled only for the CFS class of v6.5; here it \
                 is accepted but not modelled: the run is as if it were left at its default"
            ));
        } else if !f.modelled() {
            self.warnings.push(format!(
                "{tok}: sched_feature {name} is accepted but not modelled: the run is as if it \
                 were left at its default"
            ));
        } else if was == Some(on) {
            self.warnings.push(format!(
                "{tok}: {name} is already {} in this kernel (no effect)",
                if on { "on" } else { "off" }
            ));
        }
        Ok(())
    }

    fn apply_sysctl(&mut self, k: &str, v: &str, spec: &str) -> Result<(), KernelSpecError> {
        let bad = |reason: &str| KernelSpecError::BadValue {
            spec: spec.to_string(),
            name: k.to_string(),
            value: v.to_string(),
            reason: reason.to_string(),
        };
        let num = || {
            v.parse::<u64>()
                .map_err(|_| bad("expected a non-negative integer"))
        };
        match k {
            "latency_ns"
            | "min_granularity_ns"
            | "wakeup_granularity_ns"
            | "idle_min_granularity_ns" => {
                if self.has(Patch::RenameBaseSlice) || self.has(Patch::CommitEevdf) {
                    return Err(bad(
                        "exists only in v6.5 (CFS); EEVDF kernels have base_slice_ns instead",
                    ));
                }
                let n = num()?;
                // debugfs u32 files; 0 would make the period (or sched_nr_latency's divisor)
                // zero
                if n == 0 || n > u64::from(u32::MAX) {
                    return Err(bad("must be 1..=4294967295 (a debugfs u32)"));
                }
                self.sysctl.cfs_writes.push((k.to_string(), n));
            }
            "child_runs_first" | "sched_child_runs_first" => {
                if self.has(Patch::LagCrossRqPlacement) {
                    return Err(bad(
                        "the child-runs-first swap exists only in v6.5 (CFS); e8f331bcc270 removed it",
                    ));
                }
                let n: i64 = v.parse().map_err(|_| bad("expected an integer"))?;
                if n < i64::from(i32::MIN) || n > i64::from(i32::MAX) {
                    return Err(bad("must fit an int"));
                }
                self.sysctl
                    .cfs_writes
                    .push(("child_runs_first".to_string(), (n != 0) as u64));
            }
            "base_slice_ns" => {
                if !self.has(Patch::RenameBaseSlice) {
                    return Err(bad(
                        "v6.5 has no base_slice_ns: its slices come from latency_ns, min_granularity_ns and the task count",
                    ));
                }
                let n = num()?;
                // debugfs base_slice_ns is a u32 (debugfs_create_u32 in debug.c), so the
                // kernel refuses more than 4294967295; that bound also keeps the lag and
                // deadline arithmetic of the model in range. Refuse 0, which would make every
                // request empty.
                if n == 0 || n > u64::from(u32::MAX) {
                    return Err(bad(
                        "must be 1..=4294967295 (debugfs base_slice_ns is a u32)",
                    ));
                }
                self.sysctl.base_slice_ns = Some(n);
            }
            "migration_cost_ns" => {
                // debugfs migration_cost_ns is a u32 as well.
                let n = num()?;
                if n > u64::from(u32::MAX) {
                    return Err(bad(
                        "must be 0..=4294967295 (debugfs migration_cost_ns is a u32)",
                    ));
                }
                self.sysctl.migration_cost_ns = n;
            }
            "nr_migrate" => {
                let n = num()?;
                if n == 0 || n > u32::MAX as u64 {
                    return Err(bad("must be 1..=4294967295"));
                }
                self.sysctl.nr_migrate = Some(n as u32);
            }
            "tunable_scaling" => {
                let n = num()?;
                if n > 2 {
                    return Err(bad("must be 0 (none), 1 (log) or 2 (linear)"));
                }
                self.sysctl.tunable_scaling = n as u32;
                if !self.has(Patch::EevdfPolicy) {
                    // v6.5: a write after boot (sched_update_scaling, cfs.md §2.3)
                    self.sysctl.cfs_writes.push((k.to_string(), n));
                }
            }
            "sched_rt_runtime_us" => {
                let n: i64 = v
                    .parse()
                    .map_err(|_| bad("expected an integer (-1 = unlimited)"))?;
                // proc_dointvec_minmax: an int.
                if n < -1 || n > i64::from(i32::MAX) {
                    return Err(bad("must be -1..=2147483647"));
                }
                self.sysctl.sched_rt_runtime_us = n;
            }
            "sched_rt_period_us" => {
                let n = num()?;
                // proc_dointvec_minmax with 1..=INT_MAX.
                if n == 0 || n > i32::MAX as u64 {
                    return Err(bad("must be 1..=2147483647"));
                }
                self.sysctl.sched_rt_period_us = n;
            }
            "sched_rr_timeslice_ms" => {
                let n: i64 = v
                    .parse()
                    .map_err(|_| bad("expected an integer (<= 0 restores 100)"))?;
                // proc_dointvec: an int; writing <= 0 restores RR_TIMESLICE (100 ms)
                if n < i64::from(i32::MIN) || n > i64::from(i32::MAX) {
                    return Err(bad("must be -2147483648..=2147483647"));
                }
                self.sysctl.sched_rr_timeslice_ms = if n <= 0 { 100 } else { n };
            }
            "fair_server_runtime_ns" | "fair_server_period_ns" => {
                // debugfs sched/fair_server/cpuN/{runtime,period}, here for every CPU
                let n = num()?;
                let (r, p) = if k == "fair_server_runtime_ns" {
                    (n, self.sysctl.fair_server_period_ns)
                } else {
                    (self.sysctl.fair_server_runtime_ns, n)
                };
                crate::deadline::fair_server_params_valid(r, p).map_err(|e| bad(&e))?;
                if k == "fair_server_runtime_ns" {
                    self.sysctl.fair_server_runtime_ns = n;
                } else {
                    self.sysctl.fair_server_period_ns = n;
                }
            }
            "sched_cfs_bandwidth_slice_us" => {
                // proc_dointvec_minmax with extra1 = SYSCTL_ONE: 1..=INT_MAX
                let n = num()?;
                if n == 0 || n > i32::MAX as u64 {
                    return Err(bad("must be 1..=2147483647"));
                }
                self.sysctl.sched_cfs_bandwidth_slice_us = n;
            }
            "timer_slack_ns" => {
                // Deviation: prctl takes an unsigned long; schedlab caps the slack at
                // 4294967295 ns (4.3 s) so that expiry + slack stays within simulated time.
                let n = num()?;
                if n > u64::from(u32::MAX) {
                    return Err(bad("must be 0..=4294967295 (schedlab's cap, 4.3 s)"));
                }
                self.sysctl.timer_slack_ns = n;
            }
            "preempt" => {
                self.preempt = Some(
                    PreemptModel::parse(v)
                        .ok_or_else(|| bad("expected none, voluntary, full, lazy or rt"))?,
                )
            }
            "CONFIG_HZ" | "HZ" => {
                let n = num()?;
                if ![100, 250, 300, 1000].contains(&n) {
                    return Err(bad("must be 100, 250, 300 or 1000"));
                }
                self.hz = Some(n as u32);
            }
            _ if k.starts_with("fair_server/cpu") => {
                // debugfs sched/fair_server/cpuN/{runtime,period} of one CPU
                let rest = &k["fair_server/cpu".len()..];
                let (n_s, file) = rest.split_once('/').unwrap_or((rest, ""));
                let cpu: u32 = n_s
                    .parse()
                    .map_err(|_| bad("expected fair_server/cpuN/runtime or .../period"))?;
                if file != "runtime" && file != "period" {
                    return Err(bad("expected fair_server/cpuN/runtime or .../period"));
                }
                let n = num()?;
                let i = match self.sysctl.fair_server_cpu.iter().position(|e| e.0 == cpu) {
                    Some(i) => i,
                    None => {
                        self.sysctl.fair_server_cpu.push((cpu, None, None));
                        self.sysctl.fair_server_cpu.len() - 1
                    }
                };
                let e = &mut self.sysctl.fair_server_cpu[i];
                if file == "runtime" {
                    e.1 = Some(n);
                } else {
                    e.2 = Some(n);
                }
                let (r, p) = (
                    e.1.unwrap_or(self.sysctl.fair_server_runtime_ns),
                    e.2.unwrap_or(self.sysctl.fair_server_period_ns),
                );
                crate::deadline::fair_server_params_valid(r, p).map_err(|e| bad(&e))?;
            }
            _ => {
                return Err(KernelSpecError::UnknownSysctl {
                    spec: spec.to_string(),
                    token: k.to_string(),
                })
            }
        }
        Ok(())
    }
}

impl fmt::Display for KernelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.spec)
    }
}

fn apply_feature_edits(edits: &[FeatEdit], fs: &mut FeatureSet) {
    for fe in edits {
        match *fe {
            FeatEdit::Add(f, d) => fs.define(f, d),
            FeatEdit::Set(f, d) => {
                fs.set(f, d);
            }
            FeatEdit::Remove(f) => fs.remove(f),
        }
    }
}

/// Builds a preset from its chain of bases, leaving out the patches in `without`.
fn apply_preset(
    def: &PresetDef,
    patches: &mut PatchSet,
    features: &mut FeatureSet,
    without: &[Patch],
) {
    if let Some(b) = def.base {
        apply_preset(
            preset_def(b).expect("preset base exists"),
            patches,
            features,
            without,
        );
    }
    for p in def.patches {
        if !patches.has(*p) && !without.contains(p) {
            patches.add(*p);
            apply_feature_edits(p.info().features, features);
        }
    }
    apply_feature_edits(def.features, features);
}

/// Whether preset `name` is `ancestor` or built on it.
pub fn preset_derives_from(name: &str, ancestor: &str) -> bool {
    let mut cur = preset_def(name);
    while let Some(p) = cur {
        if p.name == ancestor {
            return true;
        }
        cur = p.base.and_then(preset_def);
    }
    false
}

/// `v6.18+78cde54ea5f0-059258b0d424` -> ("v6.18", [('+', ..), ('-', ..)]). Only a '+' can
/// start the glued list, because overlay names contain '-' (`v6.12.y-late`).
fn split_glued(tok: &str) -> (&str, Vec<(char, &str)>) {
    match tok.find('+') {
        None => (tok, Vec::new()),
        Some(i) => (&tok[..i], split_patch_list('+', &tok[i + 1..])),
    }
}

fn split_patch_list(first_sign: char, s: &str) -> Vec<(char, &str)> {
    let mut out = Vec::new();
    let mut sign = first_sign;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if c == '+' || c == '-' {
            out.push((sign, &s[start..i]));
            sign = c;
            start = i + 1;
        }
    }
    out.push((sign, &s[start..]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The v6.6 EEVDF baseline's features.h (fair.md §11).
    const V66_FEATURES: &[FeatEdit] = &[
        Add(F::PLACE_LAG, true),
        Add(F::PLACE_DEADLINE_INITIAL, true),
        Add(F::RUN_TO_PARITY, true),
        Add(F::NEXT_BUDDY, false),
        Add(F::CACHE_HOT_BUDDY, true),
        Add(F::WAKEUP_PREEMPTION, true),
        Add(F::HRTICK, false),
        Add(F::HRTICK_DL, false),
        Add(F::DOUBLE_TICK, false),
        Add(F::NONTASK_CAPACITY, true),
        Add(F::TTWU_QUEUE, true),
        Add(F::SIS_PROP, false),
        Add(F::SIS_UTIL, true),
        Add(F::WARN_DOUBLE_CLOCK, false),
        Add(F::RT_PUSH_IPI, true),
        Add(F::RT_RUNTIME_SHARE, false),
        Add(F::LB_MIN, false),
        Add(F::ATTACH_AGE_LOAD, true),
        Add(F::WA_IDLE, true),
        Add(F::WA_WEIGHT, true),
        Add(F::WA_BIAS, true),
        Add(F::UTIL_EST, true),
        Add(F::UTIL_EST_FASTUP, true),
        Add(F::LATENCY_WARN, false),
        Add(F::HZ_BW, true),
    ];

    #[test]
    fn feature_defaults_per_preset_match_fair_md_11_1() {
        // fair.md §11.1 table, rows checked column by column.
        let row = |f: Feature| -> Vec<Option<bool>> {
            MAIN_PRESETS
                .iter()
                .map(|p| {
                    let k = KernelConfig::parse(p).unwrap();
                    k.features.exists(f).then(|| k.feat(f))
                })
                .collect()
        };
        let t = Some(true);
        let fl = Some(false);
        // v6.5 first (cfs.md §12.1), then v6.6 … v7.1 (fair.md §11.1)
        assert_eq!(row(F::PLACE_LAG), vec![None, t, t, t, t, t, t]);
        assert_eq!(row(F::PLACE_REL_DEADLINE), vec![None, None, t, t, t, t, t]);
        assert_eq!(row(F::PREEMPT_SHORT), vec![None, None, t, t, t, t, t]);
        assert_eq!(row(F::NEXT_BUDDY), vec![fl, fl, fl, fl, fl, fl, fl]);
        assert_eq!(row(F::PICK_BUDDY), vec![None, None, None, t, t, t, t]);
        assert_eq!(row(F::DELAY_DEQUEUE), vec![None, None, t, t, t, t, t]);
        assert_eq!(row(F::DELAY_ZERO), vec![None, None, t, t, t, t, t]);
        assert_eq!(
            row(F::PARANOID_AVG),
            vec![None, None, None, None, None, None, fl]
        );
        assert_eq!(
            row(F::DOUBLE_TICK),
            vec![fl, fl, fl, None, None, None, None]
        );
        assert_eq!(row(F::HRTICK), vec![fl, fl, fl, fl, fl, fl, fl]);
        assert_eq!(row(F::NI_RANDOM), vec![None, None, None, None, t, t, t]);
        assert_eq!(row(F::NI_RATE), vec![None, None, None, None, None, None, t]);
        // the five CFS-only features exist in v6.5 alone, on by default (cfs.md §12.1)
        for f in [
            F::GENTLE_FAIR_SLEEPERS,
            F::START_DEBIT,
            F::LAST_BUDDY,
            F::ALT_PERIOD,
            F::BASE_SLICE,
        ] {
            assert_eq!(row(f), vec![t, None, None, None, None, None, None], "{f:?}");
        }
    }

    #[test]
    fn v6_6_is_v6_5_plus_the_series_with_exactly_its_features_h() {
        // v6.6 is built on v6.5 through the series patches' feature edits; the result must be
        // fair.md §11.1's v6.6 list, no more and no less
        let mut want = FeatureSet::empty();
        apply_feature_edits(V66_FEATURES, &mut want);
        let got = KernelConfig::parse("v6.6").unwrap().features;
        assert_eq!(got.debugfs_line(), want.debugfs_line());
        // the v6.5 debugfs line, in features.h order (cfs.md §12.1)
        assert_eq!(
            KernelConfig::parse("v6.5").unwrap().features.debugfs_line(),
            "GENTLE_FAIR_SLEEPERS START_DEBIT NO_NEXT_BUDDY LAST_BUDDY CACHE_HOT_BUDDY \
             WAKEUP_PREEMPTION NO_HRTICK NO_HRTICK_DL NO_DOUBLE_TICK NONTASK_CAPACITY \
             TTWU_QUEUE NO_SIS_PROP SIS_UTIL NO_WARN_DOUBLE_CLOCK RT_PUSH_IPI \
             NO_RT_RUNTIME_SHARE NO_LB_MIN ATTACH_AGE_LOAD WA_IDLE WA_WEIGHT WA_BIAS UTIL_EST \
             UTIL_EST_FASTUP NO_LATENCY_WARN ALT_PERIOD BASE_SLICE"
        );
    }

    #[test]
    fn the_eevdf_series_is_not_toggled_commit_by_commit() {
        // cfs.md §13.3: `v6.6 -<id>` of a series commit is refused and points at v6.5
        for spec in [
            "v6.6 -147f3efaa241",
            "v6.18 -5e963f2bd465",
            "v6.5 +147f3efaa241",
            "v6.5+86bfbb7ce4f6",
        ] {
            let e = KernelConfig::parse(spec).unwrap_err().to_string();
            assert!(
                e.contains("EEVDF series") && e.contains("v6.5 preset"),
                "{spec}: {e}"
            );
        }
        // the v6.6 commits outside the series are ordinary patches
        assert!(!KernelConfig::parse("v6.5").unwrap().has(Patch::EevdfPolicy));
        assert!(KernelConfig::parse("v6.6").unwrap().has(Patch::EevdfPolicy));
    }

    #[test]
    fn cfs_and_eevdf_tunables_exist_only_in_their_kernels() {
        // cfs.md §2.3: latency_ns & co. for v6.5 and base_slice_ns refused there, and vice versa
        let k = KernelConfig::parse(
            "v6.5 latency_ns=30000000 tunable_scaling=1 sched_child_runs_first=1",
        )
        .unwrap();
        assert_eq!(
            k.sysctl.cfs_writes,
            vec![
                ("latency_ns".to_string(), 30_000_000),
                ("tunable_scaling".to_string(), 1),
                ("child_runs_first".to_string(), 1)
            ]
        );
        for bad in [
            "v6.5 base_slice_ns=3000000",
            "v6.6 latency_ns=6000000",
            "v6.18 min_granularity_ns=750000",
            "v6.6 wakeup_granularity_ns=1000000",
            "v7.1 idle_min_granularity_ns=750000",
            "v6.6 child_runs_first=1",
            "v6.5 latency_ns=0",
            "v6.5 min_granularity_ns=4294967296",
        ] {
            let e = KernelConfig::parse(bad).unwrap_err().to_string();
            let name = bad.split(' ').nth(1).unwrap().split('=').next().unwrap();
            assert!(e.contains(name), "{bad}: {e}");
        }
    }

    #[test]
    fn parse_full_string() {
        let k = KernelConfig::parse("v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE base_slice_ns=3000000")
            .unwrap();
        assert_eq!(k.preset, "v6.18");
        assert!(k.has(Patch::ClearBuddiesPreemptShort));
        assert!(!k.feat(F::DELAY_DEQUEUE));
        assert_eq!(k.base_slice_ns(4), 3_000_000);
    }

    #[test]
    fn base_slice_per_version() {
        // fair.md TV-5-arith: 4 CPUs -> 2.25 ms (v6.6-v6.14), 2.1 ms (v6.15+)
        assert_eq!(
            KernelConfig::parse("v6.6").unwrap().base_slice_ns(4),
            2_250_000
        );
        assert_eq!(
            KernelConfig::parse("v6.12").unwrap().base_slice_ns(4),
            2_250_000
        );
        assert_eq!(
            KernelConfig::parse("v6.12.75").unwrap().base_slice_ns(4),
            2_100_000
        );
        assert_eq!(
            KernelConfig::parse("v6.18").unwrap().base_slice_ns(8),
            2_800_000
        );
    }

    #[test]
    fn removing_a_patch_removes_its_feature() {
        let k = KernelConfig::parse("v6.12 -152e11f6df29").unwrap();
        assert!(!k.features.exists(F::DELAY_DEQUEUE));
        let k = KernelConfig::parse("v6.6+152e11f6df29").unwrap();
        assert!(k.feat(F::DELAY_DEQUEUE));
    }

    #[test]
    fn errors_name_the_token() {
        let e = KernelConfig::parse("v6.6 NO_DELAY_DEQUEUE").unwrap_err();
        assert!(
            e.to_string().contains("DELAY_DEQUEUE does not exist"),
            "{e}"
        );
        assert!(e.to_string().contains("152e11f6df29"), "{e}");
        let e = KernelConfig::parse("v9.9").unwrap_err();
        assert!(matches!(e, KernelSpecError::UnknownPreset { .. }));
        let e = KernelConfig::parse("v6.18 NO_FOO").unwrap_err();
        assert!(e.to_string().contains("NO_FOO"));
        let e = KernelConfig::parse("v6.18 +abcdefabcdef").unwrap_err();
        assert!(e.to_string().contains("+abcdefabcdef"));
        let e = KernelConfig::parse("v6.18 base_slice_ns=x").unwrap_err();
        assert!(e.to_string().contains("base_slice_ns=x"));
        let e = KernelConfig::parse("v6.18 bogus=1").unwrap_err();
        assert!(matches!(e, KernelSpecError::UnknownSysctl { .. }));
        let e = KernelConfig::parse("v6.18 lowercase").unwrap_err();
        assert!(matches!(e, KernelSpecError::BadToken { .. }));
        assert!(KernelConfig::parse("").is_err());
    }

    #[test]
    fn preempt_resolution() {
        // Lazy preemption came with 7c70cb94d29c (v6.13): refused on v6.12 at parse time.
        let e = KernelConfig::parse("v6.12 preempt=lazy").unwrap_err();
        assert!(e.to_string().contains("7c70cb94d29c"), "{e}");
        assert!(KernelConfig::parse("v6.12+7c70cb94d29c preempt=lazy").is_ok());
        let k = KernelConfig::parse("v7.0").unwrap();
        assert_eq!(
            k.resolve_preempt(PreemptModel::Voluntary).unwrap(),
            PreemptModel::Lazy
        );
        let k = KernelConfig::parse("v6.18").unwrap();
        assert_eq!(
            k.resolve_preempt(PreemptModel::Voluntary).unwrap(),
            PreemptModel::Voluntary
        );
    }

    #[test]
    fn preempt_rt_from_v6_12() {
        // rt-dl.md §1.9: PREEMPT_RT is in mainline from v6.12; v6.6 only out of tree.
        let e = KernelConfig::parse("v6.6 preempt=rt").unwrap_err();
        assert!(e.to_string().contains("preempt=rt"), "{e}");
        assert!(e.to_string().contains("v6.12"), "{e}");
        assert!(KernelConfig::parse("v6.6.78 preempt=rt").is_err());
        assert!(KernelConfig::parse("v6.12 preempt=rt").is_ok());
        assert!(KernelConfig::parse("v6.12.75 preempt=rt").is_ok());
        // 7dadeaa6e851 (v7.0): no VOLUNTARY.
        assert!(KernelConfig::parse("v7.0 preempt=voluntary").is_err());
    }

    #[test]
    fn v6_6_commits_outside_the_series_are_single_patches() {
        // cfs.md §13.3: each can be added to v6.5 or removed from v6.6 on its own
        let outside = [
            Patch::SmtActiveBalance,
            Patch::SgCores,
            Patch::SiblingImbalance,
            Patch::IdleCoreShouldBalance,
            Patch::HybridCluster,
            Patch::AsymCapacityScanTarget,
            Patch::RemoveUtilEstBoost,
            Patch::AlignGroupFlags,
            Patch::HzBw,
            Patch::WfCurrentCpu,
            Patch::SmtBalanceFix,
        ];
        let v65 = KernelConfig::parse("v6.5").unwrap();
        let v66 = KernelConfig::parse("v6.6").unwrap();
        for p in outside {
            assert!(!crate::patches::SERIES.contains(&p), "{p:?}");
            assert!(!v65.has(p) && v66.has(p), "{p:?}");
            assert!(p.info().release.starts_with("v6.6"), "{p:?}");
            let k = KernelConfig::parse(&format!("v6.5 +{}", p.id())).unwrap();
            assert!(k.has(p) && !k.has(Patch::EevdfPolicy), "{p:?}");
            let k = KernelConfig::parse(&format!("v6.6 -{}", p.id())).unwrap();
            assert!(!k.has(p) && k.has(Patch::EevdfPolicy), "{p:?}");
        }
        // HZ_BW comes with 88c56cfeaec4: absent in v6.5 and in v6.6 without it
        assert!(!v65.features.exists(F::HZ_BW));
        assert!(v66.features.exists(F::HZ_BW) && v66.feat(F::HZ_BW));
        assert!(!KernelConfig::parse("v6.6 -88c56cfeaec4")
            .unwrap()
            .features
            .exists(F::HZ_BW));
        assert!(KernelConfig::parse("v6.5 +88c56cfeaec4")
            .unwrap()
            .feat(F::HZ_BW));
        // the 6.5.3 overlay: v6.5 + c2e164ac33f7 and nothing else
        let k = KernelConfig::parse("v6.5.y-3").unwrap();
        assert_eq!(
            k.patches.iter().collect::<Vec<_>>(),
            [Patch::RemoveUtilEstBoost]
        );
        assert_eq!(k.features.debugfs_line(), v65.features.debugfs_line());
        // v6.12 carries all of them, and the later fixes of the same code
        let k = KernelConfig::parse("v6.12").unwrap();
        for p in outside.into_iter().chain([
            Patch::IdleSmtShouldBalance,
            Patch::SelectIdleSmtSpan,
            Patch::SelectIdleCoreSpan,
        ]) {
            assert!(k.has(p), "{p:?}");
        }
    }

    #[test]
    fn removing_a_patch_rebuilds_from_the_preset_chain() {
        // v6.6 has HZ_BW (on, fair.md §11.2); a58501fb8320 (in v6.12) removes it, so v6.12
        // without it has HZ_BW as v6.6 had it.
        assert!(KernelConfig::parse("v6.6").unwrap().feat(F::HZ_BW));
        assert!(!KernelConfig::parse("v6.12")
            .unwrap()
            .features
            .exists(F::HZ_BW));
        let k = KernelConfig::parse("v6.12 -a58501fb8320").unwrap();
        assert!(k.features.exists(F::HZ_BW) && k.feat(F::HZ_BW));
        // v6.19 turns NEXT_BUDDY on (aceccac58ad7) and off again (4f70f106bca1): without the
        // second, it stays on.
        let k = KernelConfig::parse("v6.19 -4f70f106bca1").unwrap();
        assert!(k.feat(F::NEXT_BUDDY));
        // A patch token's position does not matter.
        assert_eq!(
            KernelConfig::parse("v6.12 NO_DELAY_DEQUEUE -a58501fb8320")
                .unwrap()
                .features,
            KernelConfig::parse("v6.12 -a58501fb8320 NO_DELAY_DEQUEUE")
                .unwrap()
                .features
        );
    }

    fn warned(spec: &str, needle: &str) -> bool {
        let k = KernelConfig::parse(spec).unwrap();
        k.warnings.iter().any(|w| w.contains(needle))
    }

    #[test]
    fn no_op_and_contradictory_tokens_warn() {
        assert!(warned(
            "v6.12 NO_DELAY_DEQUEUE DELAY_DEQUEUE",
            "contradictory"
        ));
        assert!(warned("v6.12 +152e11f6df29", "already carries"));
        assert!(warned("v6.6 -152e11f6df29", "does not carry"));
        assert!(warned("v6.6 +152e11f6df29 -152e11f6df29", "contradictory"));
        assert!(warned("v6.6+152e11f6df29-152e11f6df29", "contradictory"));
        assert!(warned("v6.12 DELAY_DEQUEUE", "already on"));
        assert!(warned(
            "v6.12 base_slice_ns=1000000 base_slice_ns=2000000",
            "contradictory"
        ));
        // The last one wins.
        let k = KernelConfig::parse("v6.6 +152e11f6df29 -152e11f6df29").unwrap();
        assert!(!k.has(Patch::DelayedDequeue));
        assert!(KernelConfig::parse("v6.12 NO_DELAY_DEQUEUE")
            .unwrap()
            .warnings
            .is_empty());
    }

    #[test]
    fn unmodelled_features_and_patches_warn() {
        assert!(warned("v6.6 NO_ATTACH_AGE_LOAD", "not modelled"));
        assert!(warned("v6.6 HRTICK", "not modelled"));
        assert!(warned("v6.12 +c1f43c342e1f", "not modelled"));
        // Removing a patch that later ones build on says so.
        assert!(warned("v7.1 -2227a957e1d5 -ee4373dc902c", "never existed"));
    }

    #[test]
    fn tunables_are_range_checked() {
        // debugfs base_slice_ns and migration_cost_ns are u32 (debug.c debugfs_create_u32).
        assert!(KernelConfig::parse("v6.18 base_slice_ns=4294967295").is_ok());
        for bad in [
            "v6.18 base_slice_ns=4294967296",
            "v6.18 base_slice_ns=18446744073709551615",
            "v6.18 base_slice_ns=9223372036854775807",
            "v6.18 migration_cost_ns=4294967296",
            "v6.18 timer_slack_ns=4294967296",
            "v6.18 sched_rt_period_us=2147483648",
            "v6.18 sched_rt_runtime_us=2147483648",
        ] {
            let e = KernelConfig::parse(bad).unwrap_err().to_string();
            let tok = bad.split(' ').nth(1).unwrap();
            assert!(e.contains(tok), "{e}");
            assert!(e.contains("..="), "{e}");
        }
    }

    /// sched_rt_global_validate(): runtime > period is EINVAL; -1 and runtime == period pass.
    /// The error names the token written last.
    #[test]
    fn rt_runtime_must_not_exceed_the_period() {
        assert!(KernelConfig::parse("v6.6 sched_rt_runtime_us=1000000").is_ok());
        assert!(KernelConfig::parse("v6.6 sched_rt_runtime_us=-1 sched_rt_period_us=1").is_ok());
        let e = KernelConfig::parse("v6.6 sched_rt_runtime_us=1000001")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sched_rt_runtime_us=1000001"), "{e}");
        // default runtime 950000 against a period of 500000
        let e = KernelConfig::parse("v6.6 sched_rt_period_us=500000")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sched_rt_period_us=500000"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn overlays_resolve() {
        for p in PRESETS {
            KernelConfig::parse(p.name).unwrap();
        }
        let k = KernelConfig::parse("v6.12.81").unwrap();
        assert!(k.has(Patch::LagClampMaxSlice) && k.has(Patch::DelayedDequeue));
    }
}
