//! sched_features: one list (as kernel/sched/features.h) from which the enum, the debugfs
//! names and the `NO_` parser are generated. Which features *exist* and their defaults per
//! kernel are data of the presets and patches (presets.rs, patches.rs); simulator-only knobs
//! live in their own `SIM_` list so nobody mistakes them for upstream features.

macro_rules! sched_features {
    ($( $(#[$doc:meta])* $name:ident = $modelled:literal ),* $(,)?) => {
        /// A kernel sched_feature, named exactly as in `/sys/kernel/debug/sched/features`.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub enum Feature { $( $(#[$doc])* $name ),* }

        impl Feature {
            pub const ALL: &'static [Feature] = &[ $( Feature::$name ),* ];
            pub const COUNT: usize = Feature::ALL.len();

            /// The debugfs spelling.
            pub const fn name(self) -> &'static str {
                match self { $( Feature::$name => stringify!($name) ),* }
            }

            pub fn from_name(s: &str) -> Option<Feature> {
                match s { $( stringify!($name) => Some(Feature::$name), )* _ => None }
            }

            /// Whether the model reads the feature. An unmodelled feature is accepted in a
            /// kernel string and listed (so that a kernel's debugfs line is complete), but
            /// setting it changes nothing, and the kernel string parser warns.
            pub const fn modelled(self) -> bool {
                match self { $( Feature::$name => $modelled ),* }
            }
        }
    };
}

// `NAME = modelled`: `true` where the simulated kernel reads the feature (`cfg.feat(F::NAME)`
// somewhere outside this file, presets.rs and patches.rs; a test checks the sources).
sched_features! {
    // ---- fair class (fair.md §11.1; the CFS-only ones of v6.5: cfs.md §12.1) ----
    /// (v6.5 CFS) Sleeper credit is half of the threshold (cfs.md §5.2).
    GENTLE_FAIR_SLEEPERS = true,
    /// (v6.5 CFS) A new task starts one virtual slice after min_vruntime (cfs.md §5.2).
    START_DEBIT = true,
    /// Keep lag across sleep/wakeup (placement strategy #1).
    PLACE_LAG = true,
    /// New tasks get half a request for their first deadline.
    PLACE_DEADLINE_INITIAL = true,
    /// Keep the relative deadline across non-sleep dequeue/enqueue (82e9d0456e06).
    PLACE_REL_DEADLINE = true,
    /// Slice protection of curr against wakeup preemption.
    RUN_TO_PARITY = true,
    /// A shorter-slice wakee may override curr's protection (85e511df3cec).
    PREEMPT_SHORT = true,
    /// Wakee nominated as next buddy.
    NEXT_BUDDY = true,
    /// (v6.5 CFS) Remember the task a wakeup preempted as the last buddy (cfs.md §8.2).
    LAST_BUDDY = true,
    /// The pick honours cfs_rq->next (2a77e4be12cb).
    PICK_BUDDY = true,
    /// (SMP) a next buddy counts as cache hot for migration.
    CACHE_HOT_BUDDY = true,
    /// Keep ineligible sleepers queued (152e11f6df29).
    DELAY_DEQUEUE = true,
    /// Clip positive lag to 0 at final delayed dequeue / requeue (54a58a787791).
    DELAY_ZERO = true,
    /// Overflow-checked weighted sums (4823725d9d1d).
    PARANOID_AVG = false,
    /// Allow wakeup preemption at all.
    WAKEUP_PREEMPTION = true,
    /// Slice-end high-resolution timer for fair tasks (modelled for the v6.5 CFS class only;
    /// the kernel string warns for EEVDF kernels).
    HRTICK = true,
    /// Same for deadline tasks.
    HRTICK_DL = false,
    /// The periodic tick judges while an hrtick is armed (v6.5 CFS; the EEVDF tick of v6.6 …
    /// v6.12 has nothing to judge after the test).
    DOUBLE_TICK = true,
    // ---- other classes and SMP (fair.md §11.2, smp.md App. A) ----
    NONTASK_CAPACITY = false,
    TTWU_QUEUE = true,
    SIS_PROP = false,
    SIS_UTIL = true,
    WARN_DOUBLE_CLOCK = false,
    /// Pull by asking overloaded CPUs to push (irq_work chain) instead of taking their locks.
    RT_PUSH_IPI = true,
    /// An rt_rq over its runtime borrows unused runtime of the root domain's other CPUs.
    RT_RUNTIME_SHARE = true,
    LB_MIN = true,
    ATTACH_AGE_LOAD = false,
    WA_IDLE = true,
    WA_WEIGHT = true,
    WA_BIAS = true,
    UTIL_EST = true,
    UTIL_EST_FASTUP = false,
    LATENCY_WARN = false,
    /// (v6.5 CFS) The period counts every fair task of the CPU (cfs.md §4.2).
    ALT_PERIOD = true,
    /// (v6.5 CFS) A slice is at least min_granularity (idle_min_granularity for an idle
    /// entity among non-idle ones) (cfs.md §4.2).
    BASE_SLICE = true,
    HZ_BW = false,
    /// Randomized proportional newidle balance (33cf66d88306).
    NI_RANDOM = true,
    /// Newidle ratio credits elapsed time (9fe89f022c05).
    NI_RATE = true,
}

/// A set of features, indexed by `Feature as usize`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FeatureSet {
    present: [bool; Feature::COUNT],
    on: [bool; Feature::COUNT],
}

impl Default for FeatureSet {
    fn default() -> Self {
        Self::empty()
    }
}

impl FeatureSet {
    pub const fn empty() -> FeatureSet {
        FeatureSet {
            present: [false; Feature::COUNT],
            on: [false; Feature::COUNT],
        }
    }

    /// Whether the feature exists in this kernel (appears in debugfs).
    #[inline]
    pub fn exists(&self, f: Feature) -> bool {
        self.present[f as usize]
    }

    /// `sched_feat(f)`: true only if it exists and is enabled.
    #[inline]
    pub fn on(&self, f: Feature) -> bool {
        self.on[f as usize]
    }

    /// Declares the feature with a default (used by presets and patches).
    pub fn define(&mut self, f: Feature, default: bool) {
        self.present[f as usize] = true;
        self.on[f as usize] = default;
    }

    /// Removes a feature from this kernel.
    pub fn remove(&mut self, f: Feature) {
        self.present[f as usize] = false;
        self.on[f as usize] = false;
    }

    /// Writes `on` to an existing feature; false if it does not exist.
    pub fn set(&mut self, f: Feature, on: bool) -> bool {
        if !self.exists(f) {
            return false;
        }
        self.on[f as usize] = on;
        true
    }

    /// The features that exist, in features.h order, with their state.
    pub fn iter(&self) -> impl Iterator<Item = (Feature, bool)> + '_ {
        Feature::ALL
            .iter()
            .copied()
            .filter(|f| self.exists(*f))
            .map(|f| (f, self.on(f)))
    }

    /// The debugfs listing: `NAME` or `NO_NAME` for each existing feature.
    pub fn debugfs_line(&self) -> String {
        self.iter()
            .map(|(f, on)| {
                if on {
                    f.name().to_string()
                } else {
                    format!("NO_{}", f.name())
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

macro_rules! sim_features {
    ($( $(#[$doc:meta])* $name:ident = $default:expr ),* $(,)?) => {
        /// Simulator-only knobs (not upstream features), written `SIM_NAME` / `NO_SIM_NAME`.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        pub enum SimFeature { $( $(#[$doc])* $name ),* }

        impl SimFeature {
            pub const ALL: &'static [SimFeature] = &[ $( SimFeature::$name ),* ];
            pub const COUNT: usize = SimFeature::ALL.len();
            pub const fn name(self) -> &'static str {
                match self { $( SimFeature::$name => stringify!($name) ),* }
            }
            pub const fn default_on(self) -> bool {
                match self { $( SimFeature::$name => $default ),* }
            }
            pub fn from_name(s: &str) -> Option<SimFeature> {
                match s { $( stringify!($name) => Some(SimFeature::$name), )* _ => None }
            }
        }
    };
}

sim_features! {
    /// Log-normal jitter on every charged cost (workloads.md §0.2).
    SIM_JITTER = true,
    /// Charge the cache-refill penalty after a migration (workloads.md §0.2).
    SIM_MIGRATION_PENALTY = true,
    /// Model `pipe->mutex` as a sleeping mutex with optimistic spinning (workloads.md §1.8);
    /// off: pipe reads and writes never contend.
    SIM_PIPE_MUTEX = true,
    /// Simulator shortcut, no effect on results: a segment that ends before every queued event
    /// is finished without a trip through the event queue (NO_SIM_RUN_AHEAD for comparison).
    SIM_RUN_AHEAD = true,
    /// Simulator shortcut, no effect on results: on machines of 32 CPUs or more the event
    /// queue keeps the next 16 µs of events in a wheel of 8 ns buckets instead of a sorted
    /// array (NO_SIM_EVENT_WHEEL for comparison; schedlab-engine `EventQueue::for_cpus`).
    SIM_EVENT_WHEEL = true,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        for f in Feature::ALL {
            assert_eq!(Feature::from_name(f.name()), Some(*f));
        }
        assert_eq!(Feature::DELAY_DEQUEUE.name(), "DELAY_DEQUEUE");
        assert_eq!(Feature::from_name("NO_DELAY_DEQUEUE"), None);
    }

    #[test]
    fn set_respects_existence() {
        let mut s = FeatureSet::empty();
        assert!(!s.set(Feature::DELAY_DEQUEUE, true));
        s.define(Feature::DELAY_DEQUEUE, true);
        assert!(s.on(Feature::DELAY_DEQUEUE));
        assert!(s.set(Feature::DELAY_DEQUEUE, false));
        assert!(!s.on(Feature::DELAY_DEQUEUE));
        assert_eq!(s.debugfs_line(), "NO_DELAY_DEQUEUE");
    }
}
