//! Checked invariants (fair.md §13.1, DESIGN.md §3.5): what the kernel would `WARN_ON`.
//! Run after every event in tests and under `--strict`; a violation stops the run with the
//! event number and a state dump.

use crate::patches::Patch as P;
use crate::sched::*;
use crate::tree;
use crate::Kernel;

impl Kernel {
    /// Active utilisation (rt-dl.md §3.10): on every rq `running_bw <= this_bw`, and each is
    /// the sum over the entities counted there (the active ones for `running_bw`); a
    /// non-contending task is active and has its 0-lag timer armed.
    fn check_dl_bw(&self) -> Result<(), String> {
        let n = self.rqs.len();
        let (mut this_bw, mut running_bw) = (vec![0u64; n], vec![0u64; n]);
        let ents = self
            .tasks
            .iter()
            .map(|t| &t.dl)
            .chain(self.rqs.iter().map(|rq| &rq.fair_server));
        for se in ents {
            if let Some(c) = se.bw_rq {
                let c = c as usize;
                if c >= n {
                    return Err(format!(
                        "dl entity counted on cpu {c}, which does not exist"
                    ));
                }
                this_bw[c] += se.dl_bw;
                if se.in_running_bw {
                    running_bw[c] += se.dl_bw;
                }
            } else if se.in_running_bw {
                return Err("dl entity in running_bw without an rq".into());
            }
        }
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if rq.dl.running_bw > rq.dl.this_bw {
                return Err(format!(
                    "cpu {cpu}: running_bw {} > this_bw {}",
                    rq.dl.running_bw, rq.dl.this_bw
                ));
            }
            if (rq.dl.this_bw, rq.dl.running_bw) != (this_bw[cpu], running_bw[cpu]) {
                return Err(format!(
                    "cpu {cpu}: this_bw/running_bw {}/{} but the entities counted here sum to {}/{}",
                    rq.dl.this_bw, rq.dl.running_bw, this_bw[cpu], running_bw[cpu]
                ));
            }
        }
        for t in self.tasks.iter().filter(|t| t.dl.dl_non_contending) {
            if !t.dl.in_running_bw || !t.dl.inactive_timer.armed {
                return Err(format!(
                    "pid {} non-contending without running_bw or 0-lag timer",
                    t.pid
                ));
            }
        }
        Ok(())
    }

    /// DL runqueue and fair_server invariants (rt-dl.md §3, §4.4): the tree holds exactly the
    /// entities whose `rb` key says so, in the right place; a throttled entity is not in the
    /// tree; a stopped server is neither queued nor armed; an armed server is throttled (B/C);
    /// `dl_defer_idle` only in C.
    fn check_dl_rq(&self, cpu: usize) -> Result<(), String> {
        use crate::deadline::DlEnt;
        let rq = &self.rqs[cpu];
        if rq.dl.root.len() as u32 != rq.dl.dl_nr_running {
            return Err(format!(
                "cpu {cpu}: dl tree holds {} entities, dl_nr_running {}",
                rq.dl.root.len(),
                rq.dl.dl_nr_running
            ));
        }
        for &(d, seq, e) in &rq.dl.root {
            let se = self.dl_entity(e);
            if se.rb != Some((d, seq)) {
                return Err(format!("cpu {cpu}: dl tree key of {e:?} stale"));
            }
            if se.dl_throttled {
                return Err(format!("cpu {cpu}: throttled {e:?} in the dl tree"));
            }
            if let DlEnt::Server(c) = e {
                if c as usize != cpu {
                    return Err(format!(
                        "cpu {cpu}: the fair_server of cpu {c} is queued here"
                    ));
                }
            }
        }
        let fs = &rq.fair_server;
        if fs.rb.is_some()
            && !rq.dl.root.contains(&(
                fs.rb.unwrap().0,
                fs.rb.unwrap().1,
                DlEnt::Server(cpu as u32),
            ))
        {
            return Err(format!("cpu {cpu}: fair_server rb key without a tree node"));
        }
        if fs.dl_server {
            if !fs.dl_server_active && (fs.rb.is_some() || fs.dl_defer_armed || fs.dl_defer_idle) {
                return Err(format!(
                    "cpu {cpu}: stopped fair_server queued/armed/idle (state {})",
                    fs.server_state()
                ));
            }
            if fs.dl_defer_armed && !fs.dl_throttled {
                return Err(format!("cpu {cpu}: fair_server armed but not throttled"));
            }
            if fs.dl_defer_idle && !(fs.dl_throttled && fs.dl_defer_armed) {
                return Err(format!(
                    "cpu {cpu}: fair_server dl_defer_idle outside state C"
                ));
            }
        }
        Ok(())
    }

    /// Checks every runqueue; panics (strict) or counts a warning with the first failure.
    pub fn check_all_invariants(&mut self) {
        if let Err(msg) = self.invariant_errors() {
            self.sched_warn_on(true, &msg);
        }
    }

    /// The first violated invariant, if any.
    pub fn invariant_errors(&self) -> Result<(), String> {
        for c in 0..self.cfs.len() {
            self.check_cfs_rq(CfsRqId::new(c))?;
        }
        if let Some(pol) = self.fair_policy {
            (pol.check_invariants)(self)?;
        }
        // one task runs on at most one CPU; curr of each rq is on that CPU
        let mut seen = vec![false; self.tasks.len()];
        for rq in &self.rqs {
            let t = rq.curr.index();
            if seen[t] {
                return Err(format!(
                    "task {} is current on two CPUs",
                    self.tasks[t].comm
                ));
            }
            seen[t] = true;
            if !self.tasks[t].is_idle_task && self.tasks[t].cpu != rq.cpu {
                return Err(format!(
                    "curr of cpu {} has task_cpu {}",
                    rq.cpu, self.tasks[t].cpu
                ));
            }
            // rq.nr_running == queued tasks of every class on this CPU (delayed fair ones
            // included)
            // (the fair_server is in dl_nr_running but not in nr_running, rt-dl.md §1.3)
            let root = &self.cfs[rq.cfs.index()];
            // a throttled rt_rq is out of nr_running (dequeue_top_rt_rq); a queued dl_server
            // counts in dl_nr_running but not in nr_running
            let rt_queued = if rq.rt.rt_queued {
                rq.rt.rt_nr_running
            } else {
                0
            };
            let servers = rq.fair_server.rb.is_some() as u32;
            let queued = root.h_nr_queued + rt_queued + rq.dl.dl_nr_running - servers;
            if rq.nr_running != queued {
                return Err(format!(
                    "cpu {}: nr_running {} != cfs.h_nr_queued {} + rt_nr_running {} (queued {}) + dl_nr_running {} - queued servers {servers}",
                    rq.cpu, rq.nr_running, root.h_nr_queued, rq.rt.rt_nr_running, rq.rt.rt_queued, rq.dl.dl_nr_running
                ));
            }
            self.rt_invariant_errors(rq.cpu)?;
            self.check_dl_rq(rq.cpu)?;
        }
        self.check_dl_bw()?;
        self.net_invariant_errors()?;
        // the simulator's idle masks index exactly available_idle_cpu()/sched_idle_rq()
        self.idle_masks_consistent(&schedlab_platform::cpumask::CpuMask::first_n(self.ncpus))?;
        for (i, t) in self.tasks.iter().enumerate() {
            if t.is_idle_task {
                continue;
            }
            let se = &self.se[t.se.index()];
            if se.sched_delayed && !se.on_rq {
                return Err(format!("task {} delayed but not on_rq (I-10)", t.comm));
            }
            if t.class != SchedClass::Fair {
                // queued in its class's runqueue (rt.rs, deadline.rs), not on a cfs_rq
                let rq = &self.rqs[t.cpu];
                let id = TaskId::new(i);
                let queued = rq.rt.queue.iter().any(|q| q.contains(&id))
                    || rq
                        .dl
                        .root
                        .iter()
                        .any(|k| k.2 == crate::deadline::DlEnt::Task(id));
                // a throttled DL task stays p.on_rq but leaves the tree until its
                // replenishment (deadline.c enqueue_task_dl)
                let throttled_dl = t.class == SchedClass::Dl && t.dl.dl_throttled;
                if (t.on_rq == OnRq::Queued) != queued
                    && t.on_rq != OnRq::Migrating
                    && !(throttled_dl && t.on_rq == OnRq::Queued)
                {
                    return Err(format!(
                        "task {} (#{i}) p.on_rq {:?} but in its class's queue: {queued}",
                        t.comm, t.on_rq
                    ));
                }
                continue;
            }
            // a task throttled on its return to user space (v6.18+) is off its cfs_rq while
            // p.on_rq stays queued
            let limbo = t.throttled && t.on_rq == OnRq::Queued && !se.on_rq;
            if (t.on_rq == OnRq::Queued) != se.on_rq && t.on_rq != OnRq::Migrating && !limbo {
                return Err(format!(
                    "task {} (#{i}) p.on_rq {:?} but se.on_rq {}",
                    t.comm, t.on_rq, se.on_rq
                ));
            }
        }
        Ok(())
    }

    /// Loopback sockets and epoll (net.rs, eventpoll.rs): nobody sleeps while owning a TCP
    /// socket (`sk_wait_data`, `sk_stream_wait_memory` release it first), only an owned
    /// socket has a backlog, a UDP socket's `rmem` is the truesize of its queue, an accept
    /// queue holds at most backlog + 1, and an epoll ready list holds each of its ready
    /// items once.
    fn net_invariant_errors(&self) -> Result<(), String> {
        for (i, s) in self.net.tcp.iter().enumerate() {
            if let Some(o) = s.owner {
                let st = self.tasks[o.index()].state;
                if matches!(st, TaskState::Interruptible | TaskState::Uninterruptible) {
                    return Err(format!(
                        "task {} sleeps owning TCP socket {i}",
                        self.tasks[o.index()].comm
                    ));
                }
            } else if !s.backlog.is_empty() {
                return Err(format!("TCP socket {i} has a backlog but no owner"));
            }
        }
        for (i, u) in self.net.udp.iter().enumerate() {
            let sum: u64 = u.queue.iter().map(|&(_, ts)| ts as u64).sum();
            if sum != u.rmem {
                return Err(format!(
                    "UDP socket {i}: rmem {} != queued truesize {sum}",
                    u.rmem
                ));
            }
        }
        for (i, l) in self.net.listeners.iter().enumerate() {
            if l.accept_q.len() as u64 > l.backlog as u64 + 1 {
                return Err(format!("listener {i}: accept queue over backlog + 1"));
            }
        }
        for (i, e) in self.epoll.eps.iter().enumerate() {
            for (fd, it) in &e.items {
                let n = e.rdllist.iter().filter(|&&f| f == *fd).count();
                if n != it.ready as usize {
                    return Err(format!(
                        "epoll {i}: {fd:?} ready {} but listed {n} times",
                        it.ready
                    ));
                }
            }
            if e.rdllist.iter().any(|f| !e.items.contains_key(f)) {
                return Err(format!("epoll {i}: a ready file that is not registered"));
            }
        }
        Ok(())
    }

    pub(crate) fn check_cfs_rq(&self, cfs: CfsRqId) -> Result<(), String> {
        let c = &self.cfs[cfs.index()];
        tree::check(&self.se, c.root, self.tree_order)
            .map_err(|e| format!("cfs_rq {}: {e} (I-8)", cfs.0))?;
        let members = tree::in_order(&self.se, c.root);
        // I-9: curr never in the tree
        if let Some(cu) = c.curr {
            if members.contains(&cu) {
                return Err(format!("cfs_rq {}: curr is in the tree (I-9)", cfs.0));
            }
        }
        // I-1: sums
        let mut sw: i128 = 0;
        let mut w: i128 = 0;
        for &m in &members {
            let aw = self.avg_weight(self.se[m.index()].load.weight);
            sw += self.entity_key(cfs, m) as i128 * aw;
            w += aw;
            if self.se[m.index()].cfs_rq != cfs || !self.se[m.index()].on_rq {
                return Err(format!(
                    "cfs_rq {}: tree member se {} not queued here",
                    cfs.0, m.0
                ));
            }
        }
        if sw != c.sum_w_vruntime || w != c.sum_weight {
            return Err(format!(
                "cfs_rq {}: sums {}/{} != recomputed {}/{} (I-1)",
                cfs.0, c.sum_w_vruntime, c.sum_weight, sw, w
            ));
        }
        // counters: nr_queued = tree + curr on_rq; load = sum of weights
        let curr_on = c.curr.map(|x| self.se[x.index()].on_rq).unwrap_or(false);
        let n = members.len() as u32 + curr_on as u32;
        if n != c.nr_queued {
            return Err(format!(
                "cfs_rq {}: nr_queued {} != {} queued",
                cfs.0, c.nr_queued, n
            ));
        }
        let mut load: u64 = members.iter().map(|m| self.se[m.index()].load.weight).sum();
        if curr_on {
            load += self.se[c.curr.unwrap().index()].load.weight;
        }
        if load != c.load.weight {
            return Err(format!(
                "cfs_rq {}: load {} != {}",
                cfs.0, c.load.weight, load
            ));
        }
        if self.fair_policy.is_some() {
            // v6.5 CFS: no eligibility, deadlines or delayed entities (C-1 … C-7 follow)
            return Ok(());
        }
        // I-2: someone is eligible
        if c.nr_queued > 0 {
            let mut any = curr_on && self.entity_eligible(cfs, c.curr.unwrap());
            if !any && c.root != NIL {
                any = self.vruntime_eligible(cfs, self.se[c.root as usize].min_vruntime);
            }
            if !any {
                return Err(format!("cfs_rq {}: no eligible entity (I-2)", cfs.0));
            }
        }
        // the augmented-tree pick equals a brute-force scan of the queue (fair.md §5.2)
        for protect in [true, false] {
            if let Some(reference) = self.pick_reference(cfs, protect) {
                let got = self.pick_eevdf_ro(cfs, protect);
                if got != reference {
                    return Err(format!(
                        "cfs_rq {}: __pick_eevdf(protect={protect}) = {:?}, brute force = {:?}",
                        cfs.0, got, reference
                    ));
                }
            }
        }
        // I-10: a delayed entity is never the next buddy (v6.13+)
        if self.cfg.has(P::FixNextBuddy) {
            if let Some(nx) = c.next {
                if self.se[nx.index()].sched_delayed {
                    return Err(format!("cfs_rq {}: next buddy is delayed (I-10)", cfs.0));
                }
            }
        }
        // I-11: h_nr_runnable = h_nr_queued - delayed tasks below; with CFS bandwidth on,
        // also h_nr_queued = the tasks queued below, a throttled cfs_rq below hiding its own
        // (not checked without: test vectors build queues of task-less entities)
        let (queued, delayed) = self.tasks_below(cfs);
        if self.cfs_bandwidth_used() && queued != c.h_nr_queued {
            return Err(format!(
                "cfs_rq {}: h_nr_queued {} but {} tasks queued below (not behind a throttled cfs_rq)",
                cfs.0, c.h_nr_queued, queued
            ));
        }
        self.check_cfs_bandwidth(cfs)?;
        if c.h_nr_runnable + delayed != c.h_nr_queued {
            return Err(format!(
                "cfs_rq {}: h_nr_runnable {} + delayed {} != h_nr_queued {} (I-11)",
                cfs.0, c.h_nr_runnable, delayed, c.h_nr_queued
            ));
        }
        if c.h_nr_idle > c.h_nr_queued {
            return Err(format!("cfs_rq {}: h_nr_idle > h_nr_queued (I-11)", cfs.0));
        }
        Ok(())
    }

    /// Brute-force reference for `__pick_eevdf`: a linear scan of the queued entities instead
    /// of the augmented-tree search. `None` when the reference cannot decide (v6.6 deadline ties
    /// between tree entities, which the kernel resolves by the tree's shape) or the queue is
    /// empty.
    fn pick_reference(&self, cfs: CfsRqId, protect: bool) -> Option<Option<SeId>> {
        let c = &self.cfs[cfs.index()];
        if c.nr_queued == 0 {
            return None;
        }
        let members = tree::in_order(&self.se, c.root);
        let mut curr = c.curr.filter(|x| self.se[x.index()].on_rq);
        if self.tree_order == crate::tree::TreeOrder::Deadline {
            if c.nr_queued == 1 {
                return Some(curr.or(members.first().copied()));
            }
            if self.cfg.has(P::NextBuddyReimpl)
                && self.cfg.feat(crate::Feature::PICK_BUDDY)
                && (protect || !self.cfg.has(P::ClearBuddiesPreemptShort))
            {
                if let Some(nx) = c.next {
                    if self.entity_eligible(cfs, nx) {
                        return Some(Some(nx));
                    }
                }
            }
        }
        curr = curr.filter(|x| self.entity_eligible(cfs, *x));
        if let Some(cu) = curr {
            let protected = if self.cfg.has(P::ProtectVprot) {
                protect && self.protect_slice(cu)
            } else if self.cfg.has(P::ShortProbe) {
                protect && self.cfg.feat(crate::Feature::RUN_TO_PARITY) && self.protect_slice(cu)
            } else {
                self.cfg.feat(crate::Feature::RUN_TO_PARITY) && self.protect_slice(cu)
            };
            if protected {
                return Some(Some(cu));
            }
        }
        let eligible: Vec<SeId> = members
            .iter()
            .copied()
            .filter(|x| self.entity_eligible(cfs, *x))
            .collect();
        let dl = |x: SeId| self.se[x.index()].deadline;
        // earliest deadline among eligible tree entities (first in order on ties)
        let mut best: Option<SeId> = None;
        for &e in &eligible {
            if best
                .map(|b| crate::tree::before(dl(e), dl(b)))
                .unwrap_or(true)
            {
                best = Some(e);
            }
        }
        if self.tree_order == crate::tree::TreeOrder::Vruntime {
            // v6.6: curr wins ties; ties among tree entities depend on the walk: undecided
            if let Some(b) = best {
                if eligible.iter().filter(|x| dl(**x) == dl(b)).count() > 1 {
                    return None;
                }
            }
            return Some(match (curr, best) {
                (Some(cu), Some(b)) if !crate::tree::before(dl(b), dl(cu)) => Some(cu),
                (c, None) => c,
                (_, b) => b,
            });
        }
        Some(match (curr, best) {
            (Some(cu), Some(b)) if crate::tree::before(dl(cu), dl(b)) => Some(cu),
            (c, None) => c,
            (_, b) => b,
        })
    }

    /// (queued tasks, delayed tasks) counted in `cfs`'s hierarchical counters: queued in
    /// its subtree, not below a throttled cfs_rq other than `cfs` itself.
    fn tasks_below(&self, cfs: CfsRqId) -> (u32, u32) {
        let (mut n, mut d) = (0, 0);
        // before v6.18 a throttled cfs_rq's tasks are not counted above it
        let hides = !self.task_based_throttle();
        for t in &self.tasks {
            if t.is_idle_task {
                continue;
            }
            let se = &self.se[t.se.index()];
            if !se.on_rq {
                continue;
            }
            let mut c = Some(se.cfs_rq);
            while let Some(x) = c {
                if x == cfs {
                    n += 1;
                    d += se.sched_delayed as u32;
                    break;
                }
                if hides && self.cfs[x.index()].throttled {
                    break;
                }
                c = self.cfs[x.index()].my_se.map(|g| self.se[g.index()].cfs_rq);
            }
        }
        (n, d)
    }

    /// CFS bandwidth (fair_bandwidth.rs): a throttled cfs_rq has runtime enabled and is on
    /// its group's throttled list; `throttle_count` is the number of throttled cfs_rqs at or
    /// above it. Before v6.18 its group entity is off the parent and no task runs below it
    /// without a pending resched; from v6.18 a limbo list holds only throttled tasks of this
    /// cfs_rq, off the queue, and only while it is below a throttle.
    fn check_cfs_bandwidth(&self, cfs: CfsRqId) -> Result<(), String> {
        let c = &self.cfs[cfs.index()];
        let task_based = self.task_based_throttle();
        for &p in &c.throttled_limbo_list {
            let t = &self.tasks[p.index()];
            let se = &self.se[t.se.index()];
            if !t.throttled || se.on_rq || se.cfs_rq != cfs || c.throttle_count == 0 {
                return Err(format!(
                    "cfs_rq {}: limbo task {} throttled {} on_rq {} cfs_rq {} throttle_count {}",
                    cfs.0, t.comm, t.throttled, se.on_rq, se.cfs_rq.0, c.throttle_count
                ));
            }
        }
        let listed = self.tgs[c.tg.index()]
            .cfs_bandwidth
            .throttled_cfs_rq
            .contains(&cfs);
        if c.throttled != listed {
            return Err(format!(
                "cfs_rq {}: throttled {} but on the throttled list {listed}",
                cfs.0, c.throttled
            ));
        }
        if c.throttled {
            if !c.runtime_enabled {
                return Err(format!("cfs_rq {}: throttled without a quota", cfs.0));
            }
            if let Some(se) = c.my_se.filter(|_| !task_based) {
                if self.se[se.index()].on_rq {
                    return Err(format!(
                        "cfs_rq {}: throttled but its group entity is queued",
                        cfs.0
                    ));
                }
            }
        }
        let mut n = 0;
        let mut x = Some(cfs);
        while let Some(q) = x {
            n += self.cfs[q.index()].throttled as u32;
            x = self.cfs[q.index()].my_se.map(|g| self.se[g.index()].cfs_rq);
        }
        if n != c.throttle_count {
            return Err(format!(
                "cfs_rq {}: throttle_count {} but {n} throttled cfs_rqs at or above",
                cfs.0, c.throttle_count
            ));
        }
        if c.throttle_count > 0 && self.cfs_bandwidth_used() && !task_based {
            let curr = self.rqs[c.cpu].curr;
            let t = &self.tasks[curr.index()];
            if !t.is_idle_task
                && t.class == SchedClass::Fair
                && self.rqs[c.cpu].resched == Resched::None
            {
                let mut q = Some(self.se[t.se.index()].cfs_rq);
                while let Some(y) = q {
                    if y == cfs {
                        return Err(format!(
                            "cpu {}: {} runs below throttled cfs_rq {} with no resched pending",
                            c.cpu, t.comm, cfs.0
                        ));
                    }
                    q = self.cfs[y.index()].my_se.map(|g| self.se[g.index()].cfs_rq);
                }
            }
        }
        Ok(())
    }
}
