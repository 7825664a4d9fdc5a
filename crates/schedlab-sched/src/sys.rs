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

use crate::cgroup::CgroupError;
use crate::ipc::{FutexId, PipeId, SockId};
use crate::net::{EpollId, EventfdId, ListenId, TcpSockId, UdpSockId};
use crate::sched::{TaskId, TaskState, TgId};
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
    /// The cgroup of a task (`/proc/PID/cgroup`: `0::PATH`).
    fn task_cgroup(&self, t: TaskId) -> String;
    /// `cat /sys/fs/cgroup/PATH/cpu.stat` (None if the group does not exist).
    fn cgroup_stat(&self, path: &str) -> Option<crate::cgroup::CgroupStat>;
    /// Datagrams dropped at a UDP socket (`Udp: RcvbufErrors` of `/proc/net/snmp`, per
    /// socket as `ss -u` shows it): what netperf's UDP_STREAM receiver misses.
    fn udp_drops(&self, s: UdpSockId) -> u64;
    /// Datagrams a UDP socket received (queued).
    fn udp_received(&self, s: UdpSockId) -> u64;
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
    /// A listening TCP socket on loopback (`socket` + `bind` + `listen(backlog)`), as
    /// [`Ctx::tcp_listen`](crate::Ctx::tcp_listen): for a launcher that sets the server up
    /// before its tasks run.
    fn tcp_listen(&mut self, backlog: u32, reuseport_group: Option<u32>) -> ListenId;
    /// An established loopback TCP connection (client end, server end).
    fn tcp_pair(&mut self, nodelay: bool) -> (TcpSockId, TcpSockId);
    /// A bound UDP socket.
    fn udp_socket(&mut self) -> UdpSockId;
    /// An epoll instance.
    fn epoll_create(&mut self) -> EpollId;
    /// An eventfd.
    fn eventfd(&mut self) -> EventfdId;
    /// `mkdir -p /sys/fs/cgroup/PATH` with the cpu controller: the task group to pass as
    /// `TaskAttrs::tg` (an existing group is returned as is).
    fn cgroup_mkdir(&mut self, path: &str) -> Result<TgId, CgroupError>;
    /// `echo VALUE > /sys/fs/cgroup/PATH/FILE` for the cpu controller's files.
    fn cgroup_write(&mut self, path: &str, file: &str, value: &str) -> Result<(), CgroupError>;
    /// `open("/dev/cpu_dma_latency")` and write a limit in µs, kept open for the whole run:
    /// idle states with a longer exit latency are not entered.
    fn cpu_dma_latency(&mut self, us: u64);
    /// `mount -t xfs` of the platform's storage device, where `Op::Fs` calls go: starts the
    /// IO path's kernel threads (the kworkers of the workqueue pools). Idempotent.
    fn mount_xfs(&mut self);
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

    fn task_cgroup(&self, t: TaskId) -> String {
        self.task_cgroup_path(t).to_string()
    }

    fn cgroup_stat(&self, path: &str) -> Option<crate::cgroup::CgroupStat> {
        Kernel::cgroup_stat(self, path)
    }

    fn udp_drops(&self, s: UdpSockId) -> u64 {
        self.net.udp[s.index()].drops
    }

    fn udp_received(&self, s: UdpSockId) -> u64 {
        self.net.udp[s.index()].received
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

    fn tcp_listen(&mut self, backlog: u32, reuseport_group: Option<u32>) -> ListenId {
        self.net.new_listener(backlog, reuseport_group)
    }

    fn tcp_pair(&mut self, nodelay: bool) -> (TcpSockId, TcpSockId) {
        self.net.new_pair(nodelay)
    }

    fn udp_socket(&mut self) -> UdpSockId {
        self.net.new_udp()
    }

    fn epoll_create(&mut self) -> EpollId {
        self.epoll.new_epoll()
    }

    fn eventfd(&mut self) -> EventfdId {
        self.epoll.new_eventfd()
    }

    fn cgroup_mkdir(&mut self, path: &str) -> Result<TgId, CgroupError> {
        self.cgroup_mkdir_p(path)
    }

    fn cgroup_write(&mut self, path: &str, file: &str, value: &str) -> Result<(), CgroupError> {
        Kernel::cgroup_write(self, path, file, value)
    }

    fn cpu_dma_latency(&mut self, us: u64) {
        self.cpu_latency_qos_add_request(us.saturating_mul(1000));
    }

    fn mount_xfs(&mut self) {
        Kernel::mount_xfs(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::syscalls::{Ctx, Op, SysResult};
    use crate::MachineDesc;
    use schedlab_platform::cpumask::CpuMask;
    use schedlab_platform::Platform;

    /// Runs 1 ms of user work, one 250 µs system call, then exits.
    struct Probe(u32);

    impl Program for Probe {
        fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            self.0 += 1;
            match self.0 {
                1 => Op::Run(1_000_000),
                2 => Op::Syscall(250_000),
                _ => Op::Exit,
            }
        }
    }

    #[test]
    fn a_task_forked_through_sys_shows_in_procfs() {
        // Two CPUs, every kernel cost zero, no jitter; the task, pinned to CPU 1, is alone
        // there and never preempted.
        let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
        let m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        k.strict = true;
        let sys: &mut dyn Sys = &mut k;
        assert_eq!((sys.ncpus(), sys.page_size()), (2, 4096));
        assert_eq!(sys.cpu_speed(1), 1024); // smp:N CPUs are reference cores
        let attrs = TaskAttrs {
            comm: Some("probe".into()),
            nice: Some(5),
            cpus: Some(CpuMask::single(1)),
            ..Default::default()
        };
        let t = sys.fork(Box::new(Probe(0)), &attrs);
        let before = sys.task_stat(t);
        assert!(!before.exited);
        assert_eq!(before.sum_exec_runtime, 0);
        sys.wake_up_new_task(t);
        k.run_until(10_000_000);
        let task = &k.tasks[t.index()];
        assert_eq!((task.comm.as_str(), task.nice, task.cpu), ("probe", 5, 1));
        let procfs: &dyn Procfs = &k;
        let st = procfs.task_stat(t);
        assert_eq!(st.pid, procfs.pid(t));
        assert!(st.exited);
        // 1 ms user + 0.25 ms system, nothing else charged: sum_exec_runtime 1.25 ms and the
        // cputime_adjust() split equals the raw one (user/sys add up to rtime already).
        assert_eq!(st.sum_exec_runtime, 1_250_000);
        assert_eq!((st.utime, st.stime), (1_000_000, 250_000));
        // scheduled in once, out once (the exit: a voluntary switch, prev_state TASK_DEAD)
        assert_eq!(st.pcount, 1);
        assert_eq!(st.run_delay, 0);
        assert_eq!(
            (
                st.nr_switches,
                st.nr_voluntary_switches,
                st.nr_involuntary_switches
            ),
            (1, 1, 0)
        );
        // CPU 1: idle → probe, probe → idle. Fork placement moved the task from CPU 0 (where
        // a parentless task is created) to CPU 1 with __set_task_cpu(), which fires no
        // sched_migrate_task, as in wake_up_new_task().
        let tp = procfs.tracepoint_counts();
        assert_eq!(tp.sched_switch, 2);
        assert_eq!(tp.sched_migrate_task, 0);
    }

    #[test]
    fn program_costs_come_from_the_platform_file() {
        let cfg = || KernelConfig::parse("v6.12").unwrap();
        let altra = Platform::builtin("altra-80").unwrap();
        let k = Kernel::new(cfg(), MachineDesc::from_platform(&altra), 1).unwrap();
        // platforms/altra-80.toml: [programs.schbench] w_matmul = "1.9 ms"
        assert_eq!(k.program_cost("schbench", "w_matmul"), Some(1_900_000));
        assert_eq!(k.program_cost("schbench", "nothing"), None);
        assert_eq!(k.program_cost("stress-ng", "w_matmul"), None);
        let rpi5 = Platform::builtin("rpi5").unwrap();
        let k = Kernel::new(cfg(), MachineDesc::from_platform(&rpi5), 1).unwrap();
        assert_eq!(k.program_cost("schbench", "w_matmul"), None);
    }
}
