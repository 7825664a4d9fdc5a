//! Helpers for the scenario vectors: simple programs, a kernel on an ideal machine, and a
//! schedule recorder that turns sched_switch events into `A[0-3] B[3-6]` strings.
#![allow(dead_code)]

use schedlab_sched::sched::TaskId;
use schedlab_sched::*;
use schedlab_trace::{TraceEvent, TraceRecord};
use std::cell::RefCell;
use std::rc::Rc;

/// Runs forever.
pub struct Hog;
impl Program for Hog {
    fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        Op::Run(1_000_000_000_000)
    }
}

/// Runs `run` ns, then sleeps until the next multiple of `period` (absolute grid).
pub struct Periodic {
    pub run: u64,
    pub period: u64,
    pub next: u64,
    pub state: u8,
}
impl Periodic {
    pub fn new(run: u64, period: u64) -> Periodic {
        Periodic {
            run,
            period,
            next: 0,
            state: 0,
        }
    }
}
impl Program for Periodic {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        if self.state == 0 {
            self.state = 1;
            self.next = cx.now() + self.period;
            Op::Run(self.run)
        } else {
            self.state = 0;
            let at = self.next;
            Op::SleepUntil(at)
        }
    }
}

/// Collects switch events.
#[derive(Default)]
pub struct Recorder {
    pub switches: Vec<(u64, u32, i32, i32)>, // (ts, cpu, prev_pid, next_pid)
    pub all: Vec<TraceRecord>,
}

pub struct Sink(pub Rc<RefCell<Recorder>>);
impl TraceSink for Sink {
    fn record(&mut self, r: &TraceRecord<&str>) {
        let mut rec = self.0.borrow_mut();
        if let TraceEvent::SchedSwitch {
            prev_pid, next_pid, ..
        } = &r.event
        {
            rec.switches.push((r.ts_ns, r.cpu, *prev_pid, *next_pid));
        }
        rec.all.push(r.to_owned_record());
    }
}

pub fn ideal(spec: &str, ncpus: usize, hz: u32) -> Kernel {
    let cfg = KernelConfig::parse(spec).unwrap();
    let m = MachineDesc::ideal(ncpus, hz, PreemptModel::Full);
    let mut k = Kernel::new(cfg, m, 1).unwrap();
    k.strict = true;
    k.check_invariants = true;
    k
}

pub fn record(k: &mut Kernel) -> Rc<RefCell<Recorder>> {
    let r = Rc::new(RefCell::new(Recorder::default()));
    k.set_trace(Box::new(Sink(r.clone())));
    r
}

/// Adds a task running `prog` with the given nice/slice, started as a zero-lag wakeup at the
/// current time (the spec's scenario convention), pinned to `cpu`.
pub fn add(
    k: &mut Kernel,
    name: &str,
    prog: Box<dyn Program>,
    nice: i32,
    slice: Option<u64>,
) -> TaskId {
    let attrs = TaskAttrs {
        comm: Some(name.to_string()),
        nice: Some(nice),
        slice_ns: slice,
        ..Default::default()
    };
    let t = k.create_task(prog, &attrs, None, false);
    k.start_task_as_wakeup(t);
    t
}

/// The schedule of CPU `cpu` as `A[0-3] B[3-6] ...` in ms, up to `end_ms`, naming tasks by pid.
pub fn schedule_string(k: &Kernel, rec: &Recorder, cpu: u32, end_ms: u64) -> String {
    let mut out = Vec::new();
    let mut cur: Option<(i32, u64)> = None;
    for &(ts, c, _prev, next) in &rec.switches {
        if c != cpu {
            continue;
        }
        if let Some((pid, start)) = cur {
            if ts > start {
                out.push((pid, start, ts));
            }
        }
        cur = Some((next, ts));
    }
    if let Some((pid, start)) = cur {
        out.push((pid, start, end_ms * 1_000_000));
    }
    let name = |pid: i32| -> String {
        if pid == 0 {
            return "idle".into();
        }
        let t = k.task_by_pid(pid).unwrap();
        k.tasks[t.index()].comm.clone()
    };
    out.iter()
        .filter(|(_, s, _)| *s < end_ms * 1_000_000)
        .map(|(pid, s, e)| {
            let e = (*e).min(end_ms * 1_000_000);
            format!("{}[{}-{}]", name(*pid), fmt_ms(*s), fmt_ms(e))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fmt_ms(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000) {
        (ns / 1_000_000).to_string()
    } else {
        format!("{:.3}", ns as f64 / 1e6)
    }
}

/// The schedule of CPU `cpu` as (name, start_ns, end_ns) segments up to `end_ns`.
pub fn segments(k: &Kernel, rec: &Recorder, cpu: u32, end_ns: u64) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    let mut cur: Option<(i32, u64)> = None;
    for &(ts, c, _prev, next) in &rec.switches {
        if c != cpu || ts >= end_ns {
            continue;
        }
        if let Some((pid, start)) = cur {
            if ts > start {
                out.push((pid, start, ts));
            }
        }
        cur = Some((next, ts));
    }
    if let Some((pid, start)) = cur {
        out.push((pid, start, end_ns));
    }
    out.into_iter()
        .map(|(pid, s, e)| {
            let name = if pid == 0 {
                "idle".to_string()
            } else {
                k.tasks[k.task_by_pid(pid).unwrap().index()].comm.clone()
            };
            (name, s, e)
        })
        .collect()
}

/// Runtime of a task in ns.
pub fn runtime(k: &Kernel, t: TaskId) -> u64 {
    k.se[k.tasks[t.index()].se.index()].sum_exec_runtime
}

/// Runs a policy/nice pair of hogs A and B and returns (kernel, recorder, A, B).
pub fn pair(
    spec: &str,
    hz: u32,
    a: (i32, bool),
    b: (i32, bool),
    end_ns: u64,
) -> (Kernel, Rc<RefCell<Recorder>>, TaskId, TaskId) {
    let mut k = ideal(spec, 1, hz);
    let rec = record(&mut k);
    let mk = |k: &mut Kernel, name: &str, (nice, idle): (i32, bool)| {
        let attrs = TaskAttrs {
            comm: Some(name.to_string()),
            nice: Some(nice),
            policy: Some(if idle {
                schedlab_sched::sched::Policy::Idle
            } else {
                schedlab_sched::sched::Policy::Normal
            }),
            ..Default::default()
        };
        let t = k.create_task(Box::new(Hog), &attrs, None, false);
        k.start_task_as_wakeup(t);
        t
    };
    let ta = mk(&mut k, "A", a);
    let tb = mk(&mut k, "B", b);
    k.run_until(end_ns);
    (k, rec, ta, tb)
}

/// Runs `run` ns, blocks on a futex nobody posts, and once woken (from outside) runs forever.
pub struct RunThenBlock {
    pub run: u64,
    pub done: bool,
}
impl Program for RunThenBlock {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if !self.done {
            self.done = true;
            return Op::Run(self.run);
        }
        if last == SysResult::None && self.run != u64::MAX {
            self.run = u64::MAX;
            let f = cx.new_futex(0);
            return Op::FutexWait { futex: f, val: 0 };
        }
        Op::Run(1_000_000_000_000)
    }
}

/// Adds a fair task of `policy` and `nice` running `prog`, pinned to `cpu`, started as a
/// wakeup at the current time (cfs.md §14.2: "tasks pinned to one CPU").
pub fn add_pinned(
    k: &mut Kernel,
    name: &str,
    prog: Box<dyn Program>,
    nice: i32,
    policy: schedlab_sched::sched::Policy,
    cpu: usize,
) -> TaskId {
    let attrs = TaskAttrs {
        comm: Some(name.to_string()),
        nice: Some(nice),
        policy: Some(policy),
        cpus: Some(schedlab_platform::cpumask::CpuMask::single(cpu)),
        ..Default::default()
    };
    let t = k.create_task(prog, &attrs, None, false);
    k.start_task_as_wakeup(t);
    t
}

/// A task's vruntime (ns, as the class stores it).
pub fn vruntime(k: &Kernel, t: TaskId) -> u64 {
    k.se[k.tasks[t.index()].se.index()].vruntime
}
