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
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// A fast, fixed (unkeyed) hash for the interning table: the strings are short comms and
/// flags, hashed for every record. (The multiply-rotate step of rustc's FxHasher.)
#[derive(Clone, Copy, Default)]
pub struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

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
    index: HashMap<String, u32, BuildHasherDefault<FxHasher>>,
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
        let mut out = Vec::with_capacity(self.len());
        self.for_each(name, &mut |v| out.push(v)).then_some(out)
    }

    /// Hands the values of the column `name`, one per record in order, to `f` (without
    /// collecting them); false for an unknown name.
    pub fn for_each<'a>(&'a self, name: &str, f: &mut dyn FnMut(Value<'a>)) -> bool {
        use Kind as K;
        let s = |i: u32| Value::Str(self.strings[i as usize].as_str());

        let sw = |k: K| k == K::Switch;
        let wake = |k: K| matches!(k, K::Waking | K::Wakeup | K::WakeupNew);
        let i32v = |v: &[i32], j: usize| Value::I64(i64::from(v[j]));
        let strv = |v: &[u32], j: usize| s(v[j]);
        let u32v = |v: &[u32], j: usize| Value::U64(u64::from(v[j]));
        let u64v = |v: &[u64], j: usize| Value::U64(v[j]);
        match name {
            "ts_ns" => self.ts_ns.iter().for_each(|&t| f(Value::U64(t))),
            "cpu" => self.cpu.iter().for_each(|&c| f(Value::U64(u64::from(c)))),
            "flags" => self.flags.iter().for_each(|&i| f(s(i))),
            "event" => {
                let mut j = 0;
                for &k in &self.kind {
                    if k == K::Other {
                        j += 1;
                        f(s(self.event_name[j - 1]));
                    } else {
                        f(Value::Str(k.name()));
                    }
                }
            }
            "common_comm" => self.common_comm.iter().for_each(|&i| f(s(i))),
            "common_pid" => self
                .common_pid
                .iter()
                .for_each(|&p| f(Value::I64(i64::from(p)))),
            "comm" => {
                let mut j = 0;
                for (i, k) in self.kind.iter().enumerate() {
                    if k.has_comm() {
                        j += 1;
                        f(s(self.task_comm[j - 1]));
                    } else {
                        f(s(self.common_comm[i]));
                    }
                }
            }
            "pid" => {
                let mut j = 0;
                for (i, k) in self.kind.iter().enumerate() {
                    let p = if k.has_pid() {
                        j += 1;
                        self.task_pid[j - 1]
                    } else {
                        self.common_pid[i]
                    };
                    f(Value::I64(i64::from(p)));
                }
            }
            "prev_comm" => self.sparse(f, sw, |j| strv(&self.prev_comm, j)),
            "prev_pid" => self.sparse(f, sw, |j| i32v(&self.prev_pid, j)),
            "prev_prio" => self.sparse(f, sw, |j| i32v(&self.prev_prio, j)),
            "prev_state" => self.sparse(f, sw, |j| strv(&self.prev_state, j)),
            "next_comm" => self.sparse(f, sw, |j| strv(&self.next_comm, j)),
            "next_pid" => self.sparse(f, sw, |j| i32v(&self.next_pid, j)),
            "next_prio" => self.sparse(f, sw, |j| i32v(&self.next_prio, j)),
            "runtime_ns" => self.sparse(f, sw, |j| match self.runtime_ns[j] {
                Some(t) => Value::U64(t),
                None => Value::Null,
            }),
            "prio" => self.sparse(
                f,
                |k| wake(k) || matches!(k, K::Migrate | K::Exit),
                |j| i32v(&self.prio, j),
            ),
            "target_cpu" => self.sparse(f, wake, |j| u32v(&self.target_cpu, j)),
            "orig_cpu" => self.sparse(f, |k| k == K::Migrate, |j| u32v(&self.orig_cpu, j)),
            "dest_cpu" => self.sparse(f, |k| k == K::Migrate, |j| u32v(&self.dest_cpu, j)),
            "child_comm" => self.sparse(f, |k| k == K::Fork, |j| strv(&self.child_comm, j)),
            "child_pid" => self.sparse(f, |k| k == K::Fork, |j| i32v(&self.child_pid, j)),
            "group_dead" => self.sparse(f, |k| k == K::Exit, |j| Value::Bool(self.group_dead[j])),
            "filename" => self.sparse(f, |k| k == K::Exec, |j| strv(&self.filename, j)),
            "old_pid" => self.sparse(f, |k| k == K::Exec, |j| i32v(&self.old_pid, j)),
            "vruntime" => self.sparse(f, |k| k == K::Pick, |j| u64v(&self.vruntime, j)),
            "deadline" => self.sparse(f, |k| k == K::Pick, |j| u64v(&self.deadline, j)),
            "lag" => self.sparse(
                f,
                |k| matches!(k, K::Pick | K::DelayDequeue | K::Requeue),
                |j| Value::I64(self.lag[j]),
            ),
            "slice" => self.sparse(f, |k| k == K::Pick, |j| u64v(&self.slice, j)),
            "eligible" => self.sparse(f, |k| k == K::Pick, |j| Value::Bool(self.eligible[j])),
            "reason" => self.sparse(f, |k| k == K::Pick, |j| strv(&self.reason, j)),
            "replaced" => self.sparse(f, |k| k == K::Requeue, |j| Value::Bool(self.replaced[j])),
            "body" => self.sparse(f, |k| k == K::Other, |j| strv(&self.body, j)),
            _ => return false,
        }
        true
    }

    /// A column stored for the records whose kind passes `has`: the `j`-th such record gets
    /// `get(j)`, the others `Null`.
    fn sparse<'a>(
        &'a self,
        f: &mut dyn FnMut(Value<'a>),
        has: impl Fn(Kind) -> bool,
        get: impl Fn(usize) -> Value<'a>,
    ) {
        let mut j = 0;
        for &k in &self.kind {
            if has(k) {
                j += 1;
                f(get(j - 1));
            } else {
                f(Value::Null);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run, RunSpec};
    use schedlab_trace::{parse_trace, round_ts_to_printed_us};
    use std::collections::HashMap;

    fn rec(ts_ns: u64, cpu: u32, comm: &str, pid: i32, event: TraceEvent) -> TraceRecord {
        TraceRecord {
            ts_ns,
            cpu,
            comm: comm.into(),
            pid,
            flags: "d..2.".into(),
            event,
        }
    }

    fn switch(prev: (&str, i32), next: (&str, i32)) -> TraceEvent {
        TraceEvent::SchedSwitch {
            prev_comm: prev.0.into(),
            prev_pid: prev.1,
            prev_prio: 120,
            prev_state: "S".into(),
            next_comm: next.0.into(),
            next_pid: next.1,
            next_prio: 120,
        }
    }

    #[test]
    fn sparse_columns_line_up_with_their_records() {
        let mut c = TraceColumns::new();
        c.push(&rec(
            1_000,
            1,
            "<idle>",
            0,
            switch(("swapper/1", 0), ("a", 7)),
        ));
        c.push(&rec(
            1_500,
            0,
            "b",
            8,
            TraceEvent::SchedWakeup {
                comm: "a-very-long-comm-name".into(),
                pid: 9,
                prio: 120,
                target_cpu: 1,
            },
        ));
        c.push(&rec(
            1_700,
            0,
            "b",
            8,
            TraceEvent::Other {
                name: "tracing_mark_write".into(),
                body: "hello".into(),
            },
        ));
        c.push(&rec(4_000, 1, "a", 7, switch(("a", 7), ("swapper/1", 0))));
        assert_eq!(c.len(), 4);
        for (name, _) in COLUMNS {
            assert_eq!(c.column(name).unwrap().len(), 4, "{name}");
        }
        assert!(c.column("nosuch").is_none());
        use Value::*;
        assert_eq!(
            c.column("event").unwrap(),
            [
                Str("sched_switch"),
                Str("sched_wakeup"),
                Str("tracing_mark_write"),
                Str("sched_switch")
            ]
        );
        // the wakeup's own comm, cut to 15 bytes as the kernel prints it; the switch's
        // comm/pid are the task column
        assert_eq!(
            c.column("comm").unwrap(),
            [Str("<idle>"), Str("a-very-long-com"), Str("b"), Str("a")]
        );
        assert_eq!(c.column("pid").unwrap(), [I64(0), I64(9), I64(8), I64(7)]);
        assert_eq!(
            c.column("common_pid").unwrap(),
            [I64(0), I64(8), I64(8), I64(7)]
        );
        assert_eq!(c.column("next_pid").unwrap(), [I64(7), Null, Null, I64(0)]);
        assert_eq!(c.column("target_cpu").unwrap(), [Null, U64(1), Null, Null]);
        assert_eq!(c.column("body").unwrap(), [Null, Null, Str("hello"), Null]);
        // CPU 1's first switch has no runtime; its second: 4000 - 1000 ns
        assert_eq!(
            c.column("runtime_ns").unwrap(),
            [Null, Null, Null, U64(3_000)]
        );
    }

    /// The column values of record `i` put back into a record.
    fn record_at(cols: &HashMap<&str, Vec<Value<'_>>>, i: usize) -> TraceRecord {
        let s = |n: &str| match cols[n][i] {
            Value::Str(s) => s.to_string(),
            v => panic!("{n}[{i}] = {v:?}"),
        };
        let int = |n: &str| match cols[n][i] {
            Value::I64(x) => x,
            Value::U64(x) => x as i64,
            v => panic!("{n}[{i}] = {v:?}"),
        };
        let u = |n: &str| match cols[n][i] {
            Value::U64(x) => x,
            v => panic!("{n}[{i}] = {v:?}"),
        };
        let b = |n: &str| match cols[n][i] {
            Value::Bool(x) => x,
            v => panic!("{n}[{i}] = {v:?}"),
        };
        let event = s("event");
        use schedlab_trace::names::*;
        let ev = match event.as_str() {
            SCHED_SWITCH => TraceEvent::SchedSwitch {
                prev_comm: s("prev_comm"),
                prev_pid: int("prev_pid") as i32,
                prev_prio: int("prev_prio") as i32,
                prev_state: s("prev_state"),
                next_comm: s("next_comm"),
                next_pid: int("next_pid") as i32,
                next_prio: int("next_prio") as i32,
            },
            SCHED_WAKING | SCHED_WAKEUP | SCHED_WAKEUP_NEW => {
                let (comm, pid, prio, target_cpu) = (
                    s("comm"),
                    int("pid") as i32,
                    int("prio") as i32,
                    u("target_cpu") as u32,
                );
                match event.as_str() {
                    SCHED_WAKING => TraceEvent::SchedWaking {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    SCHED_WAKEUP => TraceEvent::SchedWakeup {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    _ => TraceEvent::SchedWakeupNew {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                }
            }
            SCHED_MIGRATE_TASK => TraceEvent::SchedMigrateTask {
                comm: s("comm"),
                pid: int("pid") as i32,
                prio: int("prio") as i32,
                orig_cpu: u("orig_cpu") as u32,
                dest_cpu: u("dest_cpu") as u32,
            },
            SCHED_PROCESS_FORK => TraceEvent::SchedProcessFork {
                comm: s("comm"),
                pid: int("pid") as i32,
                child_comm: s("child_comm"),
                child_pid: int("child_pid") as i32,
            },
            SCHED_PROCESS_EXIT => TraceEvent::SchedProcessExit {
                comm: s("comm"),
                pid: int("pid") as i32,
                prio: int("prio") as i32,
                group_dead: b("group_dead"),
            },
            SCHED_PROCESS_EXEC => TraceEvent::SchedProcessExec {
                filename: s("filename"),
                pid: int("pid") as i32,
                old_pid: int("old_pid") as i32,
            },
            SCHEDLAB_PICK => TraceEvent::SchedlabPick {
                comm: s("comm"),
                pid: int("pid") as i32,
                vruntime: u("vruntime"),
                deadline: u("deadline"),
                lag: int("lag"),
                slice: u("slice"),
                eligible: b("eligible"),
                reason: s("reason"),
            },
            SCHEDLAB_DELAY_DEQUEUE => TraceEvent::SchedlabDelayDequeue {
                comm: s("comm"),
                pid: int("pid") as i32,
                lag: int("lag"),
            },
            SCHEDLAB_REQUEUE => TraceEvent::SchedlabRequeue {
                comm: s("comm"),
                pid: int("pid") as i32,
                lag: int("lag"),
                replaced: b("replaced"),
            },
            _ => TraceEvent::Other {
                name: event.clone(),
                body: s("body"),
            },
        };
        TraceRecord {
            ts_ns: u("ts_ns"),
            cpu: u("cpu") as u32,
            comm: s("common_comm"),
            pid: int("common_pid") as i32,
            flags: s("flags"),
            event: ev,
        }
    }

    /// A run with both a trace file and the columns: the file, parsed back, holds the same
    /// records as the columns, field for field (timestamps at the text's µs precision).
    #[test]
    fn columns_hold_the_records_of_the_text_trace() {
        let path =
            std::env::temp_dir().join(format!("schedlab-trace-mem-{}.trace", std::process::id()));
        // 4 CPUs, pipe pairs: switches, wakeups, migrations, picks, delayed dequeues
        let mut spec = RunSpec::new("rpi5", "v6.12.81", &["stress-ng --pipe 4 --timeout 1s"]);
        spec.duration_ns = Some(20_000_000);
        spec.trace = Some(path.clone());
        spec.trace_columns = true;
        let r = run(&spec).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let parsed = parse_trace(&text).unwrap();
        let c = r.trace_columns.as_ref().unwrap();
        assert_eq!(c.len(), parsed.len());
        let cols: HashMap<&str, Vec<Value<'_>>> = COLUMNS
            .iter()
            .map(|(n, _)| (*n, c.column(n).unwrap()))
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for (i, p) in parsed.iter().enumerate() {
            let mut m = record_at(&cols, i);
            m.ts_ns = round_ts_to_printed_us(m.ts_ns);
            assert_eq!(&m, p, "record {i}");
            seen.insert(p.event.name().to_string());
        }
        for e in [
            "sched_switch",
            "sched_waking",
            "sched_wakeup",
            "sched_wakeup_new",
            "sched_migrate_task",
            "schedlab_pick",
        ] {
            assert!(seen.contains(e), "no {e} in {seen:?}");
        }
    }

    /// Keeping the columns observes the run: the same results as without them.
    #[test]
    fn columns_change_nothing_else() {
        let mut spec = RunSpec::new("smp:2", "v6.18", &["stress-ng --pipe 2 --timeout 1s"]);
        spec.duration_ns = Some(5_000_000);
        let plain = run(&spec).unwrap();
        assert!(plain.trace_columns.is_none());
        spec.trace_columns = true;
        let with = run(&spec).unwrap();
        assert!(!with.trace_columns.as_ref().unwrap().is_empty());
        assert_eq!(crate::report::json(&plain), crate::report::json(&with));
        assert_eq!(crate::report::text(&plain), crate::report::text(&with));
    }
}
