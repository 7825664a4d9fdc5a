//! The trace of a run kept in memory as columns, without going through the text format
//! (the Python package's `Result.trace()`; [`crate::RunSpec::trace_columns`]).
//!
//! The sink receives the same [`TraceRecord`]s as the text writer
//! ([`crate::trace_file`]) and appends their fields to typed vectors; nothing is formatted.
//! Text fields (comms, `prev_state`, flags, `reason`) are interned: one copy of each distinct
//! string, an index per record.
//!
//! # Columns
//!
//! Every record has `ts_ns, cpu, flags, event, comm, pid, common_comm, common_pid`; the other
//! columns are the fields of the events that have them under their tracefs names (`None`
//! elsewhere):
//!
//! - `ts_ns` is the trace clock in nanoseconds (the text prints it rounded to µs).
//! - `common_comm`/`common_pid`: the task column of the text line, the task current on the CPU
//!   when the event fired (`<idle>`/0 for the idle task; tracefs' `common_pid`).
//! - `comm`/`pid`: the event's own `comm=`/`pid=` fields when it has them (the woken, migrated,
//!   exiting, exec'ing task, the parent of a fork, the task a `schedlab_*` event is about),
//!   else the task column (`sched_switch`, whose current task is `prev`).
//! - `sched_switch`: `prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid,
//!   next_prio`, and `runtime_ns`, derived here (not a tracefs field): how long `prev` ran, the
//!   time since the previous `sched_switch` on the same CPU (`None` for a CPU's first switch).
//! - `sched_waking`/`sched_wakeup`/`sched_wakeup_new`: `prio, target_cpu`.
//! - `sched_migrate_task`: `prio, orig_cpu, dest_cpu`.
//! - `sched_process_fork`: `child_comm, child_pid`; `sched_process_exit`: `prio, group_dead`;
//!   `sched_process_exec`: `filename, old_pid`.
//! - `schedlab_pick`: `vruntime, deadline, lag, slice, eligible, reason`;
//!   `schedlab_delay_dequeue`: `lag`; `schedlab_requeue`: `lag, replaced`.
//! - any other event: `body`, verbatim.
//!
//! Comm fields are cut to 15 bytes as the kernel (and the text trace) prints them
//! ([`schedlab_trace::truncate_comm`]).
//!
//! Each event-specific column is stored only for the records of the events that have it, so
//! a record costs about 30 bytes plus its own fields; [`TraceColumns::column`] expands a column
//! to one value per record.

use schedlab_sched::TraceSink;
use schedlab_trace::{truncate_comm, TraceEvent, TraceRecord};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The kind of a record's event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Switch,
    Waking,
    Wakeup,
    WakeupNew,
    Migrate,
    Fork,
    Exit,
    Exec,
    Pick,
    DelayDequeue,
    Requeue,
    Other,
}

/// The type of a column's values (as the kernel declares the field: `pid_t`/`int` prios are
/// `I32`, CPUs `U32`, times `U64`). [`TraceColumns::column`] returns every integer widened to
/// 64 bits ([`Value::U64`]/[`Value::I64`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    U64,
    U32,
    I64,
    I32,
    Str,
    Bool,
}

/// One value of a column; `Null` where the record's event has no such field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    U64(u64),
    I64(i64),
    Str(&'a str),
    Bool(bool),
}

/// The columns, in order, with their types.
pub const COLUMNS: &[(&str, ColumnType)] = {
    use ColumnType::*;
    &[
        ("ts_ns", U64),
        ("cpu", U32),
        ("flags", Str),
        ("event", Str),
        ("comm", Str),
        ("pid", I32),
        ("common_comm", Str),
        ("common_pid", I32),
        ("prev_comm", Str),
        ("prev_pid", I32),
        ("prev_prio", I32),
        ("prev_state", Str),
        ("next_comm", Str),
        ("next_pid", I32),
        ("next_prio", I32),
        ("runtime_ns", U64),
        ("prio", I32),
        ("target_cpu", U32),
        ("orig_cpu", U32),
        ("dest_cpu", U32),
        ("child_comm", Str),
        ("child_pid", I32),
        ("group_dead", Bool),
        ("filename", Str),
        ("old_pid", I32),
        ("vruntime", U64),
        ("deadline", U64),
        ("lag", I64),
        ("slice", U64),
        ("eligible", Bool),
        ("reason", Str),
        ("replaced", Bool),
        ("body", Str),
    ]
};

/// A run's trace records as columns.
#[derive(Clone, Debug, Default)]
pub struct TraceColumns {
    strings: Vec<String>,
    index: HashMap<String, u32>,
    /// Per CPU: the time of its last `sched_switch` (for `runtime_ns`).
    last_switch: Vec<Option<u64>>,
    // one entry per record
    ts_ns: Vec<u64>,
    cpu: Vec<u32>,
    flags: Vec<u32>,
    kind: Vec<Kind>,
    common_comm: Vec<u32>,
    common_pid: Vec<i32>,
    // one entry per record of the events that have the field
    event_name: Vec<u32>,
    body: Vec<u32>,
    prev_comm: Vec<u32>,
    prev_pid: Vec<i32>,
    prev_prio: Vec<i32>,
    prev_state: Vec<u32>,
    next_comm: Vec<u32>,
    next_pid: Vec<i32>,
    next_prio: Vec<i32>,
    runtime_ns: Vec<Option<u64>>,
    task_comm: Vec<u32>,
    task_pid: Vec<i32>,
    prio: Vec<i32>,
    target_cpu: Vec<u32>,
    orig_cpu: Vec<u32>,
    dest_cpu: Vec<u32>,
    child_comm: Vec<u32>,
    child_pid: Vec<i32>,
    group_dead: Vec<bool>,
    filename: Vec<u32>,
    old_pid: Vec<i32>,
    vruntime: Vec<u64>,
    deadline: Vec<u64>,
    lag: Vec<i64>,
    slice: Vec<u64>,
    eligible: Vec<bool>,
    reason: Vec<u32>,
    replaced: Vec<bool>,
}

impl Kind {
    /// The event name (tracefs).
    pub fn name(self) -> &'static str {
        use schedlab_trace::names::*;
        match self {
            Kind::Switch => SCHED_SWITCH,
            Kind::Waking => SCHED_WAKING,
            Kind::Wakeup => SCHED_WAKEUP,
            Kind::WakeupNew => SCHED_WAKEUP_NEW,
            Kind::Migrate => SCHED_MIGRATE_TASK,
            Kind::Fork => SCHED_PROCESS_FORK,
            Kind::Exit => SCHED_PROCESS_EXIT,
            Kind::Exec => SCHED_PROCESS_EXEC,
            Kind::Pick => SCHEDLAB_PICK,
            Kind::DelayDequeue => SCHEDLAB_DELAY_DEQUEUE,
            Kind::Requeue => SCHEDLAB_REQUEUE,
            Kind::Other => "",
        }
    }

    /// Whether the event has its own `comm=` field.
    fn has_comm(self) -> bool {
        !matches!(self, Kind::Switch | Kind::Exec | Kind::Other)
    }

    /// Whether the event has its own `pid=` field.
    fn has_pid(self) -> bool {
        !matches!(self, Kind::Switch | Kind::Other)
    }
}

impl TraceColumns {
    pub fn new() -> TraceColumns {
        TraceColumns::default()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }

    fn comm(&mut self, s: &str) -> u32 {
        self.intern(truncate_comm(s))
    }

    /// Appends one record.
    pub fn push<S: AsRef<str>>(&mut self, r: &TraceRecord<S>) {
        use TraceEvent as E;
        let flags = self.intern(r.flags.as_ref());
        let common_comm = self.comm(r.comm.as_ref());
        let kind = match &r.event {
            E::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => {
                let c = self.comm(prev_comm.as_ref());
                self.prev_comm.push(c);
                self.prev_pid.push(*prev_pid);
                self.prev_prio.push(*prev_prio);
                let st = self.intern(prev_state.as_ref());
                self.prev_state.push(st);
                let c = self.comm(next_comm.as_ref());
                self.next_comm.push(c);
                self.next_pid.push(*next_pid);
                self.next_prio.push(*next_prio);
                let cpu = r.cpu as usize;
                if self.last_switch.len() <= cpu {
                    self.last_switch.resize(cpu + 1, None);
                }
                let last = self.last_switch[cpu].replace(r.ts_ns);
                self.runtime_ns
                    .push(last.map(|t| r.ts_ns.saturating_sub(t)));
                Kind::Switch
            }
            E::SchedWaking {
                comm,
                pid,
                prio,
                target_cpu,
            }
            | E::SchedWakeup {
                comm,
                pid,
                prio,
                target_cpu,
            }
            | E::SchedWakeupNew {
                comm,
                pid,
                prio,
                target_cpu,
            } => {
                self.task(comm.as_ref(), *pid);
                self.prio.push(*prio);
                self.target_cpu.push(*target_cpu);
                match &r.event {
                    E::SchedWaking { .. } => Kind::Waking,
                    E::SchedWakeup { .. } => Kind::Wakeup,
                    _ => Kind::WakeupNew,
                }
            }
            E::SchedMigrateTask {
                comm,
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => {
                self.task(comm.as_ref(), *pid);
                self.prio.push(*prio);
                self.orig_cpu.push(*orig_cpu);
                self.dest_cpu.push(*dest_cpu);
                Kind::Migrate
            }
            E::SchedProcessFork {
                comm,
                pid,
                child_comm,
                child_pid,
            } => {
                self.task(comm.as_ref(), *pid);
                let c = self.comm(child_comm.as_ref());
                self.child_comm.push(c);
                self.child_pid.push(*child_pid);
                Kind::Fork
            }
            E::SchedProcessExit {
                comm,
                pid,
                prio,
                group_dead,
            } => {
                self.task(comm.as_ref(), *pid);
                self.prio.push(*prio);
                self.group_dead.push(*group_dead);
                Kind::Exit
            }
            E::SchedProcessExec {
                filename,
                pid,
                old_pid,
            } => {
                let f = self.intern(filename.as_ref());
                self.filename.push(f);
                self.task_pid.push(*pid);
                self.old_pid.push(*old_pid);
                Kind::Exec
            }
            E::SchedlabPick {
                comm,
                pid,
                vruntime,
                deadline,
                lag,
                slice,
                eligible,
                reason,
            } => {
                self.task(comm.as_ref(), *pid);
                self.vruntime.push(*vruntime);
                self.deadline.push(*deadline);
                self.lag.push(*lag);
                self.slice.push(*slice);
                self.eligible.push(*eligible);
                let s = self.intern(reason.as_ref());
                self.reason.push(s);
                Kind::Pick
            }
            E::SchedlabDelayDequeue { comm, pid, lag } => {
                self.task(comm.as_ref(), *pid);
                self.lag.push(*lag);
                Kind::DelayDequeue
            }
            E::SchedlabRequeue {
                comm,
                pid,
                lag,
                replaced,
            } => {
                self.task(comm.as_ref(), *pid);
                self.lag.push(*lag);
                self.replaced.push(*replaced);
                Kind::Requeue
            }
            E::Other { name, body } => {
                let n = self.intern(name.as_ref());
                self.event_name.push(n);
                let b = self.intern(body.as_ref());
                self.body.push(b);
                Kind::Other
            }
        };
        self.ts_ns.push(r.ts_ns);
        self.cpu.push(r.cpu);
        self.flags.push(flags);
        self.kind.push(kind);
        self.common_comm.push(common_comm);
        self.common_pid.push(r.pid);
    }

    fn task(&mut self, comm: &str, pid: i32) {
        let c = self.comm(comm);
        self.task_comm.push(c);
        self.task_pid.push(pid);
    }

    /// The kind of every record.
    pub fn kinds(&self) -> &[Kind] {
        &self.kind
    }

    /// One value per record of the column `name` (one of [`COLUMNS`]), `None` for an unknown
    /// name.
    pub fn column(&self, name: &str) -> Option<Vec<Value<'_>>> {
        use Kind as K;
        let s = |i: u32| Value::Str(self.strings[i as usize].as_str());
        let dense_s = |v: &[u32]| v.iter().map(|&i| s(i)).collect::<Vec<_>>();
        let dense_u = |v: &[u32]| v.iter().map(|&x| Value::U64(u64::from(x))).collect();
        let sw = |k: K| k == K::Switch;
        let wake = |k: K| matches!(k, K::Waking | K::Wakeup | K::WakeupNew);
        let i32v = |v: &[i32], j: usize| Value::I64(i64::from(v[j]));
        let strv = |v: &[u32], j: usize| s(v[j]);
        let u32v = |v: &[u32], j: usize| Value::U64(u64::from(v[j]));
        let u64v = |v: &[u64], j: usize| Value::U64(v[j]);
        Some(match name {
            "ts_ns" => self.ts_ns.iter().map(|&t| Value::U64(t)).collect(),
            "cpu" => dense_u(&self.cpu),
            "flags" => dense_s(&self.flags),
            "event" => {
                let mut j = 0;
                self.kind
                    .iter()
                    .map(|&k| {
                        if k == K::Other {
                            j += 1;
                            s(self.event_name[j - 1])
                        } else {
                            Value::Str(k.name())
                        }
                    })
                    .collect()
            }
            "common_comm" => dense_s(&self.common_comm),
            "common_pid" => self
                .common_pid
                .iter()
                .map(|&p| Value::I64(i64::from(p)))
                .collect(),
            "comm" => {
                let mut j = 0;
                (0..self.len())
                    .map(|i| {
                        if self.kind[i].has_comm() {
                            j += 1;
                            s(self.task_comm[j - 1])
                        } else {
                            s(self.common_comm[i])
                        }
                    })
                    .collect()
            }
            "pid" => {
                let mut j = 0;
                (0..self.len())
                    .map(|i| {
                        let p = if self.kind[i].has_pid() {
                            j += 1;
                            self.task_pid[j - 1]
                        } else {
                            self.common_pid[i]
                        };
                        Value::I64(i64::from(p))
                    })
                    .collect()
            }
            "prev_comm" => self.sparse(sw, |j| strv(&self.prev_comm, j)),
            "prev_pid" => self.sparse(sw, |j| i32v(&self.prev_pid, j)),
            "prev_prio" => self.sparse(sw, |j| i32v(&self.prev_prio, j)),
            "prev_state" => self.sparse(sw, |j| strv(&self.prev_state, j)),
            "next_comm" => self.sparse(sw, |j| strv(&self.next_comm, j)),
            "next_pid" => self.sparse(sw, |j| i32v(&self.next_pid, j)),
            "next_prio" => self.sparse(sw, |j| i32v(&self.next_prio, j)),
            "runtime_ns" => self.sparse(sw, |j| match self.runtime_ns[j] {
                Some(t) => Value::U64(t),
                None => Value::Null,
            }),
            "prio" => self.sparse(
                |k| wake(k) || matches!(k, K::Migrate | K::Exit),
                |j| i32v(&self.prio, j),
            ),
            "target_cpu" => self.sparse(wake, |j| u32v(&self.target_cpu, j)),
            "orig_cpu" => self.sparse(|k| k == K::Migrate, |j| u32v(&self.orig_cpu, j)),
            "dest_cpu" => self.sparse(|k| k == K::Migrate, |j| u32v(&self.dest_cpu, j)),
            "child_comm" => self.sparse(|k| k == K::Fork, |j| strv(&self.child_comm, j)),
            "child_pid" => self.sparse(|k| k == K::Fork, |j| i32v(&self.child_pid, j)),
            "group_dead" => self.sparse(|k| k == K::Exit, |j| Value::Bool(self.group_dead[j])),
            "filename" => self.sparse(|k| k == K::Exec, |j| strv(&self.filename, j)),
            "old_pid" => self.sparse(|k| k == K::Exec, |j| i32v(&self.old_pid, j)),
            "vruntime" => self.sparse(|k| k == K::Pick, |j| u64v(&self.vruntime, j)),
            "deadline" => self.sparse(|k| k == K::Pick, |j| u64v(&self.deadline, j)),
            "lag" => self.sparse(
                |k| matches!(k, K::Pick | K::DelayDequeue | K::Requeue),
                |j| Value::I64(self.lag[j]),
            ),
            "slice" => self.sparse(|k| k == K::Pick, |j| u64v(&self.slice, j)),
            "eligible" => self.sparse(|k| k == K::Pick, |j| Value::Bool(self.eligible[j])),
            "reason" => self.sparse(|k| k == K::Pick, |j| strv(&self.reason, j)),
            "replaced" => self.sparse(|k| k == K::Requeue, |j| Value::Bool(self.replaced[j])),
            "body" => self.sparse(|k| k == K::Other, |j| strv(&self.body, j)),
            _ => return None,
        })
    }

    /// A column stored for the records whose kind passes `has`: the `j`-th such record gets
    /// `get(j)`, the others `Null`.
    fn sparse<'a>(
        &'a self,
        has: impl Fn(Kind) -> bool,
        get: impl Fn(usize) -> Value<'a>,
    ) -> Vec<Value<'a>> {
        let mut j = 0;
        self.kind
            .iter()
            .map(|&k| {
                if has(k) {
                    j += 1;
                    get(j - 1)
                } else {
                    Value::Null
                }
            })
            .collect()
    }
}

/// The kernel's sink for [`TraceColumns`].
pub struct ColumnSink(pub Rc<RefCell<TraceColumns>>);

impl TraceSink for ColumnSink {
    fn record(&mut self, r: &TraceRecord<&str>) {
        self.0.borrow_mut().push(r);
    }
}

/// Hands every record to two sinks (a trace file and the columns).
pub struct Tee(pub Box<dyn TraceSink>, pub Box<dyn TraceSink>);

impl TraceSink for Tee {
    fn record(&mut self, r: &TraceRecord<&str>) {
        self.0.record(r);
        self.1.record(r);
    }
}
