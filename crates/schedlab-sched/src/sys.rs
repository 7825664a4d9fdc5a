//! The surface between workload models and the kernel, seen from outside the tasks.
//!
//! Inside a task, a program talks to the kernel through [`Program::next`] and [`Ctx`]
//! (syscalls.rs). Before the run, a workload model is the shell or launcher that starts its
//! first task; after the run, it is someone reading `/proc` and the tracer's counters. It gets
//! exactly that and nothing more:
//!
//! * [`Sys`] (set-up): `fork` a task with its attributes and `wake_up_new_task` it, create the
//!   kernel objects a launcher could create (pipes, socket pairs, futex words), read the
//!   clock, the CPU count, the page size, how fast each CPU runs a calibration loop, and the
//!   platform's per-program costs (`[programs.NAME]` of the platform file).
//! * [`Procfs`] (read-only, for output and metrics): the clock, per-task figures as
//!   `/proc/PID/stat`, `/proc/PID/schedstat`, `/proc/PID/sched` and `getrusage()` report
//!   them ([`TaskStat`]), and the kernel-wide tracepoint counts a tracer would see
//!   ([`TracepointCounts`]).
//!
//! Both are traits implemented by [`Kernel`] (below, reading its public fields): a model
//! receives `&mut dyn Sys` or `&dyn Procfs` and cannot name scheduler state; a test that owns
//! a `Kernel` passes `&mut k` or `&k` as is.
//!
//! [`Program::next`]: crate::Program::next
//! [`Ctx`]: crate::Ctx

use crate::ipc::{FutexId, PipeId, SockId};
use crate::sched::{TaskId, TaskState};
use crate::stats::cputime_adjust;
use crate::{Kernel, Program, TaskAttrs};

/// What `/proc/PID/stat`, `/proc/PID/schedstat`, `/proc/PID/sched`, `/proc/PID/status` and
/// `getrusage()` report of one task. Times in ns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskStat {
    pub pid: i32,
    /// The task has exited (`TASK_DEAD`).
    pub exited: bool,
    /// `/proc/PID/schedstat` field 1, `se.sum_exec_runtime` of `/proc/PID/sched`.
    pub sum_exec_runtime: u64,
    /// `/proc/PID/schedstat` field 2: time spent runnable, waiting for a CPU.
    pub run_delay: u64,
    /// `/proc/PID/schedstat` field 3: number of times scheduled in.
    pub pcount: u64,
    /// `utime` of `/proc/PID/stat` / `ru_utime`: the user/system split scaled to
    /// `sum_exec_runtime` by `cputime_adjust()`.
    pub utime: u64,
    /// `stime` of `/proc/PID/stat` / `ru_stime` (see `utime`).
    pub stime: u64,
    /// `nr_switches` of `/proc/PID/sched`.
    pub nr_switches: u64,
    /// `nr_voluntary_switches` (`voluntary_ctxt_switches` of `/proc/PID/status`, `ru_nvcsw`).
    pub nr_voluntary_switches: u64,
    /// `nr_involuntary_switches` (`nonvoluntary_ctxt_switches`, `ru_nivcsw`).
    pub nr_involuntary_switches: u64,
}

/// How many times each scheduler tracepoint fired since boot (what `perf stat -e
/// sched:sched_switch,sched:sched_migrate_task` counts over the whole run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TracepointCounts {
    pub sched_switch: u64,
    pub sched_migrate_task: u64,
}

/// The read-only view of the kernel that a real program, `/proc` or a tracer offers.
pub trait Procfs {
    /// `clock_gettime(CLOCK_MONOTONIC)` in ns; after the run, the time the run stopped.
    fn now(&self) -> u64;
    /// The pid of a task (`getpid()` in the task, or the return value of its `fork()`).
    fn pid(&self, t: TaskId) -> i32;
    /// A task's `/proc` figures.
    fn task_stat(&self, t: TaskId) -> TaskStat;
    /// Kernel-wide tracepoint counts.
    fn tracepoint_counts(&self) -> TracepointCounts;
}

/// The set-up handle: what the launcher of a workload (a shell, or the program's own main
/// before its first task runs) can do to the kernel.
pub trait Sys: Procfs {
    /// Online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`).
    fn ncpus(&self) -> usize;
    /// `sysconf(_SC_PAGESIZE)`: the page size of the kernel build (one pipe slot).
    fn page_size(&self) -> u32;
    /// How fast `cpu` runs a fixed user-space loop relative to the platform's reference core
    /// (1024 = reference core at its maximum frequency): what a calibration loop pinned to
    /// that CPU measures (rt-app's `calibration`).
    fn cpu_speed(&self, cpu: usize) -> u64;
    /// A per-platform cost of user-space work in one program (`[programs.PROGRAM]` of the
    /// platform file, e.g. `program_cost("schbench", "w_matmul")`), ns of reference-core work;
    /// `None` if the platform does not give it.
    fn program_cost(&self, program: &str, key: &str) -> Option<u64>;
    /// `fork()` from outside the simulated tasks: a new task running `program`, with
    /// `attrs` (comm, policy, nice, slice, affinity, cgroup), not yet runnable.
    fn fork(&mut self, program: Box<dyn Program>, attrs: &TaskAttrs) -> TaskId;
    /// `wake_up_new_task()`: makes a forked task runnable (fork balancing places it).
    fn wake_up_new_task(&mut self, t: TaskId);
    /// A futex word in user memory shared by the workload's tasks.
    fn new_futex(&mut self, val: u32) -> FutexId;
    /// `pipe2()` with `slots` page-sized slots (16 = `PIPE_DEF_BUFFERS`); `packet` =
    /// `O_DIRECT`.
    fn new_pipe(&mut self, packet: bool, slots: u32) -> PipeId;
    /// `socketpair(AF_UNIX, SOCK_STREAM)` used in one direction.
    fn new_unix_stream(&mut self) -> SockId;
}

impl Procfs for Kernel {
    fn now(&self) -> u64 {
        self.now
    }

    fn pid(&self, t: TaskId) -> i32 {
        self.tasks[t.index()].pid
    }

    fn task_stat(&self, t: TaskId) -> TaskStat {
        let task = &self.tasks[t.index()];
        let st = &task.stats;
        let rtime = self.se[task.se.index()].sum_exec_runtime;
        let (utime, stime) = cputime_adjust(st.user_ns, st.sys_ns, rtime);
        TaskStat {
            pid: task.pid,
            exited: task.state == TaskState::Dead,
            sum_exec_runtime: rtime,
            run_delay: st.run_delay_ns,
            pcount: st.pcount,
            utime,
            stime,
            nr_switches: st.nr_switches,
            nr_voluntary_switches: st.nr_voluntary_switches,
            nr_involuntary_switches: st.nr_involuntary_switches,
        }
    }

    fn tracepoint_counts(&self) -> TracepointCounts {
        TracepointCounts {
            sched_switch: self.stats.nr_switches,
            sched_migrate_task: self.stats.migrations,
        }
    }
}

impl Sys for Kernel {
    fn ncpus(&self) -> usize {
        self.ncpus
    }

    fn page_size(&self) -> u32 {
        self.pipe_page_size
    }

    fn cpu_speed(&self, cpu: usize) -> u64 {
        self.machine.speed[cpu]
    }

    fn program_cost(&self, program: &str, key: &str) -> Option<u64> {
        self.machine.programs.get(program, key).map(|n| n.0)
    }

    fn fork(&mut self, program: Box<dyn Program>, attrs: &TaskAttrs) -> TaskId {
        self.create_task(program, attrs, None, false)
    }

    fn wake_up_new_task(&mut self, t: TaskId) {
        self.start_task(t);
    }

    fn new_futex(&mut self, val: u32) -> FutexId {
        self.ipc.new_futex(val)
    }

    fn new_pipe(&mut self, packet: bool, slots: u32) -> PipeId {
        let page = self.pipe_page_size;
        self.ipc.new_pipe(packet, slots.max(1), page)
    }

    fn new_unix_stream(&mut self) -> SockId {
        self.ipc.new_unix_stream()
    }
}
