//! The typed description of an rt-app file (spec workloads.md §10): what the file says, in file
//! order, with defaults filled in only where the spec fixes them. It runs nothing; the compiler
//! to task programs reads it. Times are integer microseconds, as in the file.

use std::fmt;

/// A 1-based source position; `column` counts characters (a tab is one column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A parsed rt-app file.
#[derive(Clone, Debug, PartialEq)]
pub struct RtAppFile {
    pub global: Global,
    /// In file order; a thread's index in rt-app's naming (`<task>-<index>`) follows this order.
    pub tasks: Vec<TaskDef>,
    /// Things accepted but worth telling the user (ignored keys, renamed duplicates, ...), in
    /// the order they were found.
    pub warnings: Vec<Warning>,
}

impl RtAppFile {
    pub fn task(&self, name: &str) -> Option<&TaskDef> {
        self.tasks.iter().find(|t| t.name == name)
    }
}

/// The `"global"` object (§10.2), reduced to what schedlab acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    /// Seconds after which every thread is stopped; `None` = the file's −1 (the default): run
    /// until every thread has finished its loops.
    pub duration_s: Option<u64>,
    pub calibration: Calibration,
    /// Policy of threads that name none (default `SCHED_OTHER`).
    pub default_policy: Policy,
    /// Mutexes use priority inheritance (default false).
    pub pi_enabled: bool,
}

impl Default for Global {
    fn default() -> Self {
        Global {
            duration_s: None,
            calibration: Calibration::Cpu(0),
            default_policy: Policy::Other,
            pi_enabled: false,
        }
    }
}

/// How `run` work is sized (§10.2 `calibration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calibration {
    /// `"CPUn"` (default `"CPU0"`): `run` durations are work at CPU n's capacity and frequency.
    Cpu(u32),
    /// An integer: nanoseconds per calibration loop, given instead of measured.
    NsPerLoop(u64),
}

/// Scheduling policy, spelled in files as `SCHED_OTHER`, `SCHED_BATCH`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    Other,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    pub const ALL: [Policy; 6] = [
        Policy::Other,
        Policy::Batch,
        Policy::Idle,
        Policy::Fifo,
        Policy::Rr,
        Policy::Deadline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    /// The file spelling, exactly (rt-app compares with `strcmp`).
    pub fn from_rtapp(s: &str) -> Option<Policy> {
        Policy::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// Policies of the fair class, whose `priority` is a nice value.
    pub fn is_fair(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch | Policy::Idle)
    }

    /// Policies whose `priority` is an RT priority 1–99.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One `"tasks"` member: the template of `instance` identical threads (§10.3).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskDef {
    pub name: String,
    /// Position of the task's key in `"tasks"`.
    pub pos: Pos,
    /// Threads created at start (default 1); 0 = defined only, to be created by `fork`.
    pub instance: u32,
    /// Initial delay before the first phase (default 0).
    pub delay_us: u64,
    /// Times the whole phase list runs; −1 (the default) = forever.
    pub loop_count: i64,
    /// Applied when the thread starts.
    pub properties: Properties,
    /// In file order; never empty. A task written without `"phases"` has exactly one phase,
    /// named after the task, with `loop_count` 1 (its `"loop"` is the task's `loop_count`).
    pub phases: Vec<Phase>,
}

impl TaskDef {
    /// The policy the thread starts with.
    pub fn start_policy(&self, global: &Global) -> Policy {
        self.properties.policy.unwrap_or(global.default_policy)
    }

    /// Every event of every phase, in file order.
    pub fn events(&self) -> impl Iterator<Item = &Event> {
        self.phases.iter().flat_map(|p| p.events.iter())
    }
}

/// One step of a thread's program: properties applied at its start, then its events `loop_count`
/// times.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: String,
    pub pos: Pos,
    /// Times the event list runs before the next phase (default 1); −1 = forever.
    pub loop_count: i64,
    /// Only what the phase names changes; everything else stays as it was.
    pub properties: Properties,
    /// In file order; never empty.
    pub events: Vec<Event>,
}

/// Scheduling and placement properties (§10.3), at task or phase level. `None` = not named
/// here; the spec's defaults (priority 0 or 10, dl-period = dl-runtime, ...) are left to the
/// compiler because they depend on the policy in force when the phase starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Properties {
    pub policy: Option<Policy>,
    /// RT priority 1–99 for FIFO/RR, nice −20…19 for OTHER/BATCH/IDLE, 0 for DEADLINE (checked
    /// against the policy in force).
    pub priority: Option<i32>,
    /// DEADLINE runtime, or for a fair policy the requested custom slice (`sched_runtime`).
    pub dl_runtime_us: Option<u64>,
    pub dl_period_us: Option<u64>,
    pub dl_deadline_us: Option<u64>,
    /// Affinity, as written (not sorted or deduplicated).
    pub cpus: Option<Vec<u32>>,
    /// cgroup path under the cpu controller, starting with `/`. rt-app's `""` ("none") reads as
    /// `None`, as in rt-app.
    pub taskgroup: Option<String>,
    /// Utilization clamps 0–1024; rt-app's −1 ("no change") reads as `None`.
    pub util_min: Option<u32>,
    pub util_max: Option<u32>,
    /// NUMA nodes; recorded only (schedlab has no memory placement).
    pub nodes_membind: Option<Vec<u32>>,
}

impl Properties {
    pub fn is_empty(&self) -> bool {
        *self == Properties::default()
    }
}

/// One event, where it was written and under which key (after duplicate renaming).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub key: String,
    /// Position of the key.
    pub pos: Pos,
    pub kind: EventKind,
}

/// The events of §10.4 that this version runs. `mem`, `iorun`, `memrun` and `sync` are
/// rejected by the parser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Fixed work: `t` µs as measured on the calibration CPU.
    Run(u64),
    /// Busy loop for `t` µs of wall-clock time.
    Runtime(u64),
    /// Relative sleep.
    Sleep(u64),
    Timer(Timer),
    Lock(String),
    Unlock(String),
    /// `pthread_cond_wait(cond, mutex)`; the thread holds `mutex` (checked).
    Wait {
        cond: String,
        mutex: String,
    },
    Signal(String),
    /// `pthread_cond_broadcast` (`broad` in files).
    Broad(String),
    Barrier(String),
    /// Wait on the thread's own condition; the file's string is ignored.
    Suspend,
    /// Wake the named task's threads.
    Resume(String),
    SemPost(String),
    SemWait(String),
    Yield,
    /// Create a thread from the named task.
    Fork(String),
}

impl EventKind {
    /// The rt-app name of the event type (its key prefix).
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Run(_) => "run",
            EventKind::Runtime(_) => "runtime",
            EventKind::Sleep(_) => "sleep",
            EventKind::Timer(_) => "timer",
            EventKind::Lock(_) => "lock",
            EventKind::Unlock(_) => "unlock",
            EventKind::Wait { .. } => "wait",
            EventKind::Signal(_) => "signal",
            EventKind::Broad(_) => "broad",
            EventKind::Barrier(_) => "barrier",
            EventKind::Suspend => "suspend",
            EventKind::Resume(_) => "resume",
            EventKind::SemPost(_) => "sem_post",
            EventKind::SemWait(_) => "sem_wait",
            EventKind::Yield => "yield",
            EventKind::Fork(_) => "fork",
        }
    }
}

/// A `timer` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timer {
    /// The timer's name (`"ref"`). Threads naming the same timer share it unless `unique`.
    pub reference: String,
    pub period_us: u64,
    pub mode: TimerMode,
    /// `reference` starts with `unique`: one timer per thread instance.
    pub unique: bool,
}

/// What a late timer does (§10.4 `timer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimerMode {
    /// Re-base the next expiry on "now" (no catch-up). The default.
    #[default]
    Relative,
    /// Keep the original grid (later activations may be missed too).
    Absolute,
}

impl TimerMode {
    /// The file spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TimerMode::Relative => "relative",
            TimerMode::Absolute => "absolute",
        }
    }
}

/// Something accepted but worth telling the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    pub pos: Pos,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: warning: {}", self.file, self.pos, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_spellings_round_trip() {
        for p in Policy::ALL {
            assert_eq!(Policy::from_rtapp(p.as_str()), Some(p));
        }
        // rt-app compares with strcmp: no case folding, no short forms.
        assert_eq!(Policy::from_rtapp("sched_other"), None);
        assert_eq!(Policy::from_rtapp("OTHER"), None);
    }

    #[test]
    fn policy_classes() {
        assert!(Policy::Batch.is_fair() && !Policy::Batch.is_rt());
        assert!(Policy::Rr.is_rt() && !Policy::Rr.is_fair());
        assert!(!Policy::Deadline.is_rt() && !Policy::Deadline.is_fair());
    }

    #[test]
    fn warning_display_names_file_line_column() {
        let w = Warning {
            file: "a.json".into(),
            pos: Pos { line: 3, column: 7 },
            message: "m".into(),
        };
        assert_eq!(w.to_string(), "a.json:3:7: warning: m");
    }
}
