//! kernel/sched/debug.c: the state dump printed when a checked invariant fails (the model's
//! `print_cfs_rq()` / `sysrq_sched_debug_show()`).

use crate::tree;
use crate::Kernel;

impl Kernel {
    /// A human-readable dump of every runqueue (like /sys/kernel/debug/sched/debug).
    pub fn state_dump(&self) -> String {
        let mut s = String::new();
        for rq in &self.rqs {
            let c = &self.cfs[rq.cfs.index()];
            if self.fair_policy.is_some() {
                // v6.5 (print_cfs_rq() names of that release)
                self.state_dump_cfs(&mut s, rq.cpu, rq.cfs);
                continue;
            }
            s.push_str(&format!(
                "cpu#{}: curr={} nr_running={} resched={:?}\n  cfs: nr_queued={} h_nr_queued={} h_nr_runnable={} h_nr_idle={} zero_vruntime={} avg_vruntime={} load={}\n",
                rq.cpu,
                self.tasks[rq.curr.index()].comm,
                rq.nr_running,
                rq.resched,
                c.nr_queued,
                c.h_nr_queued,
                c.h_nr_runnable,
                c.h_nr_idle,
                c.zero_vruntime,
                self.avg_vruntime(rq.cfs),
                c.load.weight
            ));
            let mut list = tree::in_order(&self.se, c.root);
            if let Some(cu) = c.curr {
                list.insert(0, cu);
            }
            for se in list {
                let e = &self.se[se.index()];
                let name = e
                    .task
                    .map(|t| {
                        format!(
                            "{}/{}",
                            self.tasks[t.index()].comm,
                            self.tasks[t.index()].pid
                        )
                    })
                    .unwrap_or_else(|| "group".into());
                s.push_str(&format!(
                    "    {}{} v={} d={} lag={} slice={} w={} delayed={} eligible={}\n",
                    if Some(se) == c.curr { "*" } else { " " },
                    name,
                    e.vruntime,
                    e.deadline,
                    self.avg_vruntime(rq.cfs).wrapping_sub(e.vruntime) as i64,
                    e.slice,
                    e.load.weight,
                    e.sched_delayed,
                    self.entity_eligible(rq.cfs, se)
                ));
            }
            // print_rt_rq()
            let rt = &rq.rt;
            if rt.rt_nr_running > 0 || rt.rt_throttled || rt.rt_time > 0 {
                s.push_str(&format!(
                    "  rt: rt_nr_running={} rr_nr_running={} highest_prio={}/{} queued={} throttled={} rt_time={} rt_runtime={} overloaded={} pushable={}\n",
                    rt.rt_nr_running,
                    rt.rr_nr_running,
                    rt.highest_prio_curr,
                    rt.highest_prio_next,
                    rt.rt_queued,
                    rt.rt_throttled,
                    rt.rt_time,
                    if rt.rt_runtime == crate::rt::RUNTIME_INF {
                        -1
                    } else {
                        rt.rt_runtime as i64
                    },
                    rt.overloaded,
                    rt.pushable.len()
                ));
                for (prio, q) in rt.queue.iter().enumerate() {
                    for &t in q {
                        let task = &self.tasks[t.index()];
                        s.push_str(&format!(
                            "    {}{}/{} prio={} policy={}\n",
                            if t == rq.curr { "*" } else { " " },
                            task.comm,
                            task.pid,
                            prio,
                            task.policy.name()
                        ));
                    }
                }
            }
        }
        s
    }

    /// The fair part of the dump for the v6.5 CFS class, with v6.5's names (`nr_running`,
    /// `min_vruntime`, `idle_nr_running`) and the buddies. (RT/DL are not printed here.)
    fn state_dump_cfs(&self, s: &mut String, cpu: usize, q: crate::sched::CfsRqId) {
        let rq = &self.rqs[cpu];
        let c = &self.cfs[q.index()];
        let name = |se: crate::sched::SeId| -> String {
            self.se[se.index()]
                .task
                .map(|t| {
                    format!(
                        "{}/{}",
                        self.tasks[t.index()].comm,
                        self.tasks[t.index()].pid
                    )
                })
                .unwrap_or_else(|| "group".into())
        };
        let buddy = |b: Option<crate::sched::SeId>| b.map_or("-".to_string(), name);
        s.push_str(&format!(
            "cpu#{cpu}: curr={} nr_running={} resched={:?}\n  cfs: nr_running={} h_nr_running={} idle_nr_running={} idle_h_nr_running={} min_vruntime={} load={} next={} last={} skip={}\n",
            self.tasks[rq.curr.index()].comm,
            rq.nr_running,
            rq.resched,
            c.nr_queued,
            c.h_nr_queued,
            c.idle_nr_running,
            c.h_nr_idle,
            c.zero_vruntime,
            c.load.weight,
            buddy(c.next),
            buddy(c.last),
            buddy(c.skip),
        ));
        let mut list = tree::in_order(&self.se, c.root);
        if let Some(cu) = c.curr {
            list.insert(0, cu);
        }
        for se in list {
            let e = &self.se[se.index()];
            s.push_str(&format!(
                "    {}{} vruntime={} (min_vruntime{:+}) w={} sum_exec_runtime={}\n",
                if Some(se) == c.curr { "*" } else { " " },
                name(se),
                e.vruntime,
                e.vruntime.wrapping_sub(c.zero_vruntime) as i64,
                e.load.weight,
                e.sum_exec_runtime
            ));
        }
    }
}
