//! kernel: sched.h `struct sched_class` and `for_each_class()` — the table through which core
//! code reaches the scheduling classes. One arm per class, in the kernel's priority order
//! (stop → deadline → rt → fair → idle, the order the linker script lays the class structs
//! out in); static dispatch by `match`, no `dyn` on the hot path.
//!
//! | hook | caller (core.c) | stop | dl | rt | fair | idle |
//! |---|---|---|---|---|---|---|
//! | `enqueue_task` / `dequeue_task` | `enqueue_task()`, `dequeue_task()` | – | deadline.rs | rt.rs | fair.rs | (never queued) |
//! | `wakeup_preempt` | `wakeup_preempt()` (same class) | – | deadline.rs | rt.rs | `check_preempt_wakeup_fair` | – |
//! | `pick_next_task` / `pick_task` | `__pick_next_task()` | stop_task.rs | deadline.rs | rt.rs | fair.rs | idle.rs |
//! | `put_prev_task` / `set_next_task` | `put_prev_set_next_task()` | – | deadline.rs | rt.rs | fair.rs | idle.rs |
//! | `balance` | `__pick_next_task()` after an empty pick | – | pull (deadline.rs) | – | newidle balance | – |
//! | `prev_balance` | `__pick_next_task()` before the picks, from prev's class down | – | – | `balance_rt` (pull) | – | – |
//! | `task_woken` | `ttwu_do_activate()`, `wake_up_new_task()` | – | push (deadline.rs) | push (rt.rs) | – | – |
//! | `yield_task` | `sched_yield()` | – | – | rt.rs | fair.rs | – |
//! | `task_tick` | `sched_tick()` | – | deadline.rs | rt.rs | fair.rs | – |
//! | `task_fork` | `sched_fork()` | – | – | – | fair.rs | – |
//! | `select_task_rq` | `select_task_rq()` | own CPU | deadline.rs | rt.rs (cpupri) | select.rs | own CPU |
//! | `migrate_task_rq` | `set_task_cpu()` | – | – | – | fair_pelt.rs | – |
//! | `update_curr` | accounting of the running task at the end of a run | – | – | rt.rs | fair.rs | – |
//! | `reweight_task`, `prio_changed` | `set_user_nice()`, `__sched_setscheduler()` | – | – | rt.rs (prio) | fair.rs | – |
//! | `switched_from` / `switched_to` | `__sched_setscheduler()` (check_class_changed) | – | – | rt.rs | fair.rs | – |
//!
//! `balance_callbacks()` runs what the classes queued during a `__schedule()` or a
//! `sched_setscheduler()` (RT push and pull), as the kernel's `__balance_callbacks()`.
//!
//! The RT class is complete (rt.rs: RR slices, throttling, cpupri, push/pull). The deadline
//! class is complete as rt-dl.md §3/§4 ask (CBS, throttling, the fair_server, admission, brief
//! push/pull). Its pick may return a dl_server: the Dl arm below then asks the fair class of
//! that CPU for a task (the kernel's `server_pick_task` function pointer,
//! `fair_server_pick_task()`), which is why the pick of a fair task can come from the Dl arm.
//! Core code never matches on a policy or calls a class's file directly: it goes through this
//! table. Also here: the entry points core.c calls without the table,
//! `sched_balance_trigger()` from `sched_tick()`, and deadline.c's `sched_dl_overflow()` and
//! `__setparam_dl()` from `__sched_setscheduler()`.

use crate::sched::*;
use crate::Kernel;

impl SchedClass {
    /// `for_each_class()`: highest priority first.
    pub const ORDER: [SchedClass; 5] = [
        SchedClass::Stop,
        SchedClass::Dl,
        SchedClass::Rt,
        SchedClass::Fair,
        SchedClass::Idle,
    ];

    /// kernel: sched.h sched_class_above()
    #[inline]
    pub fn above(self, other: SchedClass) -> bool {
        self < other
    }

    /// The class's name as `/proc/PID/sched` and the kernel's symbols spell it.
    pub fn name(self) -> &'static str {
        match self {
            SchedClass::Stop => "stop_sched_class",
            SchedClass::Dl => "dl_sched_class",
            SchedClass::Rt => "rt_sched_class",
            SchedClass::Fair => "fair_sched_class",
            SchedClass::Idle => "idle_sched_class",
        }
    }

    /// `.enqueue_task`
    #[inline]
    pub(crate) fn enqueue_task(self, k: &mut Kernel, cpu: usize, p: TaskId, flags: u32) {
        match self {
            SchedClass::Fair => k.enqueue_task_fair(p, flags),
            SchedClass::Rt => k.enqueue_task_rt(cpu, p, flags),
            SchedClass::Dl => k.enqueue_task_dl(cpu, p, flags),
            SchedClass::Stop | SchedClass::Idle => {
                k.sched_warn_on(true, "enqueue_task on the stop or idle class")
            }
        }
    }

    /// `.dequeue_task` — false if the class kept the task queued (a delayed fair dequeue).
    #[inline]
    pub(crate) fn dequeue_task(self, k: &mut Kernel, cpu: usize, p: TaskId, flags: u32) -> bool {
        match self {
            SchedClass::Fair => k.dequeue_task_fair(p, flags),
            SchedClass::Rt => k.dequeue_task_rt(cpu, p, flags),
            SchedClass::Dl => k.dequeue_task_dl(cpu, p, flags),
            SchedClass::Stop | SchedClass::Idle => {
                k.sched_warn_on(true, "dequeue_task on the stop or idle class");
                true
            }
        }
    }

    /// `.wakeup_preempt` of the running task's class, for a wakee of the same class (core.c
    /// handles a wakee of a higher class itself).
    #[inline]
    /// `sched_class->task_change_group` exists (fair only; the others get `set_task_rq`).
    pub(crate) fn has_task_change_group(self) -> bool {
        self == SchedClass::Fair
    }

    /// `sched_class->task_change_group`: the task moves to group `tg` (sched_move_task()).
    pub(crate) fn task_change_group(self, k: &mut Kernel, t: TaskId, tg: TgId) {
        if self == SchedClass::Fair {
            k.task_change_group_fair(t, tg);
        }
    }

    /// Why a wakeup within this class did not preempt (the wakeup records of
    /// `--explain-wakeups`; no kernel counterpart).
    pub(crate) fn explain_wakeup(
        self,
        k: &Kernel,
        cpu: usize,
        p: TaskId,
        wf: u32,
    ) -> (crate::stats::WakeupVerdict, String) {
        match self {
            SchedClass::Fair => k.explain_wakeup_fair(cpu, p, wf),
            _ => (crate::stats::WakeupVerdict::EarlierDeadline, String::new()),
        }
    }

    pub(crate) fn wakeup_preempt(
        self,
        k: &mut Kernel,
        cpu: usize,
        p: TaskId,
        wf: u32,
        in_task: bool,
    ) {
        match self {
            SchedClass::Fair => k.check_preempt_wakeup_fair(cpu, p, wf, in_task),
            SchedClass::Rt => k.wakeup_preempt_rt(cpu, p),
            SchedClass::Dl => k.wakeup_preempt_dl(cpu, p),
            SchedClass::Stop | SchedClass::Idle => {}
        }
    }

    /// `.pick_next_task` (fair) or `.pick_task` + `put_prev_set_next_task()` (the others):
    /// the class's next task on `cpu`, if it has one. `put` says that `prev` is still its
    /// class's current task; whoever runs next puts it back first (once).
    pub(crate) fn pick_next_task(
        self,
        k: &mut Kernel,
        cpu: usize,
        prev: TaskId,
        put: &mut bool,
    ) -> Option<TaskId> {
        match self {
            SchedClass::Stop => {
                // The stopper's queued works run to completion here (the model's stop task
                // is not a task; see stop_task.rs), then the lower classes pick.
                if k.stop_work_pending(cpu) {
                    put_prev(k, prev, put);
                    k.cpu_stopper_run(cpu);
                }
                None
            }
            SchedClass::Dl => {
                let mut empty_server = None;
                loop {
                    match k.pick_task_dl(cpu)? {
                        crate::deadline::DlEnt::Task(next) => {
                            put_prev(k, prev, put);
                            k.set_next_task_dl(cpu, next);
                            return Some(next);
                        }
                        crate::deadline::DlEnt::Server(c) => {
                            // dl_se->server_pick_task(): fair_server_pick_task() →
                            // pick_task_fair() of that CPU
                            let c = c as usize;
                            if let Some(p) = k.pick_task_fair(c) {
                                k.dl_server_picked(c, p);
                                let prev_fair =
                                    *put && k.tasks[prev.index()].class == SchedClass::Fair;
                                if prev_fair {
                                    *put = false;
                                } else {
                                    put_prev(k, prev, put);
                                }
                                k.put_prev_set_next_fair(prev_fair.then_some(prev), p);
                                if p != prev {
                                    k.trace_pick(cpu, p, "dl_server");
                                }
                                return Some(p);
                            }
                            // E4, then pick again; the server must have left the tree
                            if empty_server == Some(c) {
                                k.sched_warn_on(true, "dl_server picked empty twice");
                                return None;
                            }
                            empty_server = Some(c);
                            k.dl_server_pick_empty(c);
                        }
                    }
                }
            }
            SchedClass::Rt => {
                let next = k.pick_task_rt(cpu)?;
                put_prev(k, prev, put);
                k.set_next_task_rt(cpu, next, true);
                Some(next)
            }
            SchedClass::Fair => {
                let prev_fair = *put && k.tasks[prev.index()].class == SchedClass::Fair;
                let prev_idle = k.tasks[prev.index()].is_idle_task;
                if !prev_fair && !prev_idle {
                    put_prev(k, prev, put);
                }
                // pick_next_task_fair() puts a fair prev back itself, whether or not it
                // finds a task
                let next = k.pick_next_task_fair(cpu, prev, prev_fair);
                if prev_fair {
                    *put = false;
                }
                // the idle task is put back only when something else runs
                // (put_prev_set_next_task() does nothing for next == prev)
                if prev_idle && next.is_some() {
                    put_prev(k, prev, put);
                }
                next
            }
            SchedClass::Idle => {
                let idle = k.pick_task_idle(cpu);
                if prev == idle {
                    *put = false;
                } else {
                    put_prev(k, prev, put);
                    k.set_next_task_idle(cpu);
                }
                Some(idle)
            }
        }
    }

    /// `.put_prev_task`
    pub(crate) fn put_prev_task(self, k: &mut Kernel, prev: TaskId) {
        match self {
            SchedClass::Fair => k.put_prev_task_fair(prev),
            SchedClass::Rt => k.put_prev_task_rt(prev),
            SchedClass::Dl => k.put_prev_task_dl(prev),
            SchedClass::Idle => {
                let cpu = k.tasks[prev.index()].cpu;
                k.put_prev_task_idle(cpu)
            }
            SchedClass::Stop => {}
        }
    }

    /// `.set_next_task` for a task that stays current (the sched_change pattern).
    pub(crate) fn set_next_task(self, k: &mut Kernel, p: TaskId) {
        let cpu = k.tasks[p.index()].cpu;
        match self {
            SchedClass::Fair => k.set_next_task_fair(p),
            SchedClass::Rt => k.set_next_task_rt(cpu, p, false),
            SchedClass::Dl => k.set_next_task_dl(cpu, p),
            SchedClass::Stop | SchedClass::Idle => {}
        }
    }

    /// `.reweight_task` (from set_load_weight(p, true)).
    pub(crate) fn reweight_task(self, k: &mut Kernel, p: TaskId) {
        if self == SchedClass::Fair {
            k.reweight_task_fair(p);
        }
    }

    /// `.prio_changed` (after set_user_nice(), rt_mutex_setprio(), __sched_setscheduler()).
    pub(crate) fn prio_changed(self, k: &mut Kernel, cpu: usize, p: TaskId, old_prio: i32) {
        match self {
            SchedClass::Fair => k.prio_changed_fair(cpu, p, old_prio),
            SchedClass::Rt => k.prio_changed_rt(cpu, p, old_prio),
            _ => {}
        }
    }

    /// `.switched_from` (after the class changed; check_class_changed()). RT: pull when the
    /// last RT task left; DL: its bandwidth and pull. (No fair PELT detach.)
    pub(crate) fn switched_from(self, k: &mut Kernel, p: TaskId) {
        let cpu = k.tasks[p.index()].cpu;
        match self {
            SchedClass::Rt => k.switched_from_rt(cpu, p),
            SchedClass::Dl => k.switched_from_dl(cpu, p),
            SchedClass::Fair => k.switched_from_fair(p),
            _ => {}
        }
    }

    /// The accounting of `put_prev_task()` done before the picks (`put_prev_task_balance()`
    /// puts prev first): RT charges its last run, which can throttle its rt_rq so that no RT
    /// task is picked from it.
    pub(crate) fn account_prev(self, k: &mut Kernel, cpu: usize, prev: TaskId) {
        if self == SchedClass::Rt && k.rqs[cpu].curr == prev {
            k.update_curr_rt(cpu);
        }
    }

    /// `.yield_task` (sched_yield()).
    pub(crate) fn yield_task(self, k: &mut Kernel, cpu: usize) {
        match self {
            SchedClass::Fair => k.yield_task_fair(cpu),
            SchedClass::Rt => k.yield_task_rt(cpu),
            SchedClass::Dl => k.yield_task_dl(cpu),
            _ => {}
        }
    }

    /// `.balance` as `prev_balance()` calls it before the picks, for the classes from
    /// prev's down: true stops the walk (work at this level or above). RT: `balance_rt`
    /// (pull). The fair class balances after an empty pick instead (see `balance`).
    pub(crate) fn prev_balance(self, k: &mut Kernel, cpu: usize, prev: TaskId) -> bool {
        match self {
            SchedClass::Rt => k.balance_rt(cpu, prev),
            _ => false,
        }
    }

    /// `.switched_to` (after the class changed; check_class_changed()).
    pub(crate) fn switched_to(self, k: &mut Kernel, cpu: usize, p: TaskId) {
        match self {
            SchedClass::Fair => k.switched_to_fair(cpu, p),
            SchedClass::Rt => k.switched_to_rt(cpu, p),
            SchedClass::Dl => k.switched_to_dl(cpu, p),
            _ => {}
        }
    }

    /// `.balance`: called by `__pick_next_task()` when the class found nothing; true if it
    /// pulled work, and the class is asked again. Fair: `sched_balance_newidle()` (from
    /// pick_next_task_fair()'s `idle:` path).
    pub(crate) fn balance(self, k: &mut Kernel, cpu: usize) -> bool {
        match self {
            SchedClass::Fair => k.sched_balance_newidle(cpu) > 0,
            SchedClass::Dl => k.balance_dl(cpu),
            _ => false,
        }
    }

    /// `.task_tick`
    #[inline]
    pub(crate) fn task_tick(self, k: &mut Kernel, cpu: usize, curr: TaskId) {
        match self {
            SchedClass::Fair => k.task_tick_fair(curr),
            SchedClass::Rt => k.task_tick_rt(cpu, curr),
            SchedClass::Dl => k.task_tick_dl(cpu, curr),
            SchedClass::Stop | SchedClass::Idle => {}
        }
    }

    /// `.task_fork` (core.c sched_fork() calls it for the child's class).
    pub(crate) fn task_fork(self, k: &mut Kernel, child: TaskId, parent: Option<TaskId>) {
        if self == SchedClass::Fair {
            k.sched_fork_fair(child, parent);
        }
    }

    /// `.select_task_rq`: the CPU a waking or new task should run on. Classes without
    /// placement keep it where it was.
    pub(crate) fn select_task_rq(
        self,
        k: &mut Kernel,
        p: TaskId,
        prev_cpu: usize,
        wake_flags: u32,
        this_cpu: usize,
        in_task: bool,
    ) -> usize {
        match self {
            SchedClass::Fair => k.select_task_rq_fair(p, prev_cpu, wake_flags, this_cpu, in_task),
            SchedClass::Rt => k.select_task_rq_rt(p, prev_cpu, wake_flags, this_cpu),
            SchedClass::Dl => k.select_task_rq_dl(p, prev_cpu, wake_flags),
            _ => prev_cpu,
        }
    }

    /// `.task_woken`: after a wakeup's preemption check (core.c ttwu_do_wakeup()): push a
    /// woken task that cannot run here soon (RT, DL).
    pub(crate) fn task_woken(self, k: &mut Kernel, cpu: usize, p: TaskId) {
        match self {
            SchedClass::Rt => k.task_woken_rt(cpu, p),
            SchedClass::Dl => k.task_woken_dl(cpu, p),
            _ => {}
        }
    }

    /// `.update_curr`: charge the running task's time up to the rq clock (every level of
    /// its hierarchy for fair).
    pub(crate) fn update_curr(self, k: &mut Kernel, curr: TaskId) {
        match self {
            SchedClass::Rt => {
                let cpu = k.tasks[curr.index()].cpu;
                k.update_curr_rt_flush(cpu);
            }
            SchedClass::Fair => {
                let mut e = Some(k.tasks[curr.index()].se);
                while let Some(se) = e {
                    let c = k.se[se.index()].cfs_rq;
                    k.update_curr(c);
                    e = k.se[se.index()].parent;
                }
            }
            SchedClass::Dl => {
                let cpu = k.tasks[curr.index()].cpu;
                k.update_curr_dl(cpu);
            }
            SchedClass::Idle => {
                let cpu = k.tasks[curr.index()].cpu;
                k.update_curr_idle(cpu);
            }
            _ => {}
        }
    }

    /// `.migrate_task_rq` (from set_task_cpu()).
    pub(crate) fn migrate_task_rq(self, k: &mut Kernel, p: TaskId, new_cpu: usize) {
        match self {
            SchedClass::Fair => {
                if let Some(pol) = k.fair_policy {
                    (pol.migrate_task_rq_fair)(k, p);
                }
                k.migrate_task_rq_fair(p, new_cpu)
            }
            SchedClass::Dl => k.migrate_task_rq_dl(p, new_cpu),
            _ => {}
        }
    }
}

/// `put_prev_task()` of `prev` through its class, once (the first time something else is
/// about to run).
fn put_prev(k: &mut Kernel, prev: TaskId, put: &mut bool) {
    if std::mem::take(put) {
        let class = k.tasks[prev.index()].class;
        class.put_prev_task(k, prev);
    }
}

impl Kernel {
    /// kernel: core.c __balance_callbacks() — the callbacks the classes queued during this
    /// `__schedule()` (RT push and pull).
    pub(crate) fn balance_callbacks(&mut self, cpu: usize) {
        self.rt_balance_callbacks(cpu);
    }

    /// kernel: fair.c sched_balance_trigger(), which core.c sched_tick() calls directly (not
    /// through the table): the periodic and nohz balance triggers of a busy CPU.
    pub(crate) fn sched_balance_trigger_from_tick(&mut self, cpu: usize) {
        self.sched_balance_trigger(cpu);
    }

    /// kernel: deadline.c sched_dl_overflow() (with __checkparam_dl()), which core.c
    /// __sched_setscheduler() calls directly.
    pub(crate) fn sched_dl_overflow_from_core(
        &self,
        p: TaskId,
        a: &crate::deadline::DlAttr,
    ) -> Result<(), String> {
        self.sched_dl_overflow(p, a)
    }

    /// kernel: deadline.c __setparam_dl(), called by core.c __setscheduler_params().
    pub(crate) fn __setparam_dl_from_core(&mut self, p: TaskId, a: &crate::deadline::DlAttr) {
        self.__setparam_dl(p, a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::syscalls::{Ctx, Op, Program, SysResult, TaskAttrs};
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn the_table_is_in_the_kernels_order() {
        // kernel: the linker script places the classes as stop, dl, rt, fair, idle (and
        // sched_class_above() compares addresses accordingly).
        assert_eq!(
            SchedClass::ORDER.map(SchedClass::name),
            [
                "stop_sched_class",
                "dl_sched_class",
                "rt_sched_class",
                "fair_sched_class",
                "idle_sched_class"
            ]
        );
        for w in SchedClass::ORDER.windows(2) {
            assert!(w[0].above(w[1]) && !w[1].above(w[0]));
        }
    }

    /// Runs once (recording its name and start time), then sleeps on a futex forever.
    struct RunOnceThenSleep(&'static str, Rc<RefCell<Vec<(&'static str, u64)>>>, bool);
    impl Program for RunOnceThenSleep {
        fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
            if !self.2 {
                self.2 = true;
                self.1.borrow_mut().push((self.0, cx.now()));
                return Op::Run(1_000_000);
            }
            let f = cx.new_futex(0);
            Op::FutexWait { futex: f, val: 0 }
        }
    }

    /// Starts one RunOnceThenSleep task per (name, policy, RT priority) on a 1-CPU kernel, in
    /// that order, and runs 10 ms; returns the log of (name, first run time) and the kernel.
    fn run_once_each(tasks: &[(&'static str, Policy, u32)]) -> (Vec<(&'static str, u64)>, Kernel) {
        let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
        let mut k = Kernel::new(cfg, MachineDesc::ideal(1, 1000, PreemptModel::Full), 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut ids = Vec::new();
        for &(name, policy, prio) in tasks {
            let attrs = TaskAttrs {
                comm: Some(name.into()),
                policy: Some(policy),
                rt_priority: Some(prio),
                // SCHED_DEADLINE needs its parameters: 5 ms every 100 ms
                dl: (policy == Policy::Deadline).then_some(crate::deadline::DlAttr {
                    runtime: 5_000_000,
                    deadline: 100_000_000,
                    period: 100_000_000,
                    sched_flags: 0,
                }),
                ..Default::default()
            };
            let prog = Box::new(RunOnceThenSleep(name, log.clone(), false));
            ids.push(k.create_task(prog, &attrs, None, false));
        }
        for &t in &ids {
            k.start_task(t);
        }
        k.run_until(10_000_000);
        let out = log.borrow().clone();
        (out, k)
    }

    /// A fair, an RT and a deadline task made runnable on one CPU at the same instant run in
    /// class order: the deadline task first, then the FIFO task, then the fair one; then the
    /// CPU idles. Each runs 1 ms (zero costs), so they start at 0, 1 and 2 ms.
    #[test]
    fn classes_are_picked_in_order_on_one_cpu() {
        let (log, k) = run_once_each(&[
            ("fair", Policy::Normal, 0),
            ("fifo", Policy::Fifo, 50),
            ("deadline", Policy::Deadline, 0),
        ]);
        assert_eq!(
            log,
            [("deadline", 0), ("fifo", 1_000_000), ("fair", 2_000_000)]
        );
        assert!(k.cpu_is_idle(0));
        assert_eq!(k.rqs[0].nr_running, 0);
    }

    /// RT priority order and FIFO order within one priority: two FIFO 10 tasks and one FIFO
    /// 20, queued in that order, run 20 first, then the two 10s in arrival order.
    #[test]
    fn rt_picks_the_highest_priority_then_fifo_order() {
        let (log, _) = run_once_each(&[
            ("a10", Policy::Fifo, 10),
            ("b10", Policy::Fifo, 10),
            ("c20", Policy::Fifo, 20),
        ]);
        // c20 (prio 99 - 20 = 79) beats the two prio-89 tasks; those run in arrival order
        assert_eq!(log, [("c20", 0), ("a10", 1_000_000), ("b10", 2_000_000)]);
    }
}
