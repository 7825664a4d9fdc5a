//! The simulated machine under the kernel (simulator only; no kernel file): the event queue,
//! the delivery of IPIs, the periodic tick's arming, per-CPU cost draws with jitter, the
//! `sched_clock()` counter, and what each CPU is executing — the running segment's progress,
//! its end event, and interrupt handlers pushed on top of it. Kernel code calls down into
//! this file; it calls nothing above it.

use crate::exec::{Mode, Seg, SegKind};
use crate::sim::Ev;
use crate::Kernel;
use schedlab_platform::cost::CostModel;

impl Kernel {
    #[inline]
    pub(crate) fn push_event(&mut self, at: u64, ev: Ev) {
        self.events
            .push(schedlab_engine::SimTime(at), ev.rank(), ev);
    }

    #[inline]
    pub(crate) fn jiffies(&self) -> u64 {
        self.now / self.tick_nsec
    }

    /// A cost from `cpu`'s model with the configured jitter, drawn from the jitter stream of
    /// the CPU executing the code that incurs it (the sender of an IPI draws its latency).
    pub(crate) fn cost(&mut self, cpu: usize, f: impl Fn(&CostModel) -> u64) -> u64 {
        let v = f(&self.costs[cpu]);
        if v == 0 || !self.cfg.sim(crate::features::SimFeature::SIM_JITTER) {
            return v;
        }
        let sigma = self.costs[cpu].jitter_sigma_ppm;
        if sigma == 0 {
            return v;
        }
        let i = match self
            .jitter_tables
            .iter()
            .position(|t| t.sigma_ppm() == sigma)
        {
            Some(i) => i,
            None => {
                self.jitter_tables
                    .push(schedlab_engine::rng::LognormalTable::shared(sigma));
                self.jitter_tables.len() - 1
            }
        };
        let stream = self.executing.unwrap_or(cpu);
        self.jitter_tables[i].apply(&mut self.jitter_rng[stream], v)
    }

    /// Makes a remote CPU look at its resched flag: reschedule IPI (or nothing if polling).
    pub(crate) fn kick_cpu(&mut self, cpu: usize) {
        if self.executing == Some(cpu) {
            return; // the CPU executing this code sees the flag at its next preemption point
        }
        let curr = self.rqs[cpu].curr;
        if self.tasks[curr.index()].is_idle_task && self.idle_exit_latency(cpu).1 {
            // polling idle: no IPI, the idle loop notices at once
            self.stats.ipi_avoided += 1;
            self.schedule_ipi(cpu, 0);
            return;
        }
        let lat = self.cost(cpu, |c| c.lat_ipi.0);
        self.schedule_ipi(cpu, lat);
    }

    /// Delivers an IPI to `cpu` after `lat` (plus the exit latency of the idle state it sits
    /// in, unless it polls); at most one is in flight per CPU.
    pub(crate) fn schedule_ipi(&mut self, cpu: usize, lat: u64) {
        if self.rqs[cpu].ipi_pending {
            return;
        }
        self.rqs[cpu].ipi_pending = true;
        let mut at = self.now + lat + self.ipi_send_delay;
        let curr = self.rqs[cpu].curr;
        let (exit, polling) = self.idle_exit_latency(cpu);
        if self.tasks[curr.index()].is_idle_task && !polling {
            at += exit;
            self.stats.paths.idle_exits += 1;
            self.stats.paths.idle_exit_ns += exit;
        }
        self.stats.ipis += 1;
        self.push_event(at, Ev::Ipi { cpu: cpu as u32 });
    }

    /// kernel: time/sched_clock.c sched_clock(): the counter value at `now`, in ns.
    #[inline]
    pub(crate) fn sched_clock(&self) -> u64 {
        let hz = self.machine.sched_clock_hz;
        if hz == 1_000_000_000 {
            return self.now;
        }
        // the same value as the u128 arithmetic, without a 128-bit division while it fits
        if let Some(p) = self.now.checked_mul(hz) {
            return (p / 1_000_000_000) * 1_000_000_000 / hz;
        }
        let cyc = self.now as u128 * hz as u128 / 1_000_000_000;
        (cyc * 1_000_000_000 / hz as u128) as u64
    }

    /// Pushes an interrupt handler segment on the running task.
    pub(crate) fn push_irq(&mut self, cpu: usize, cost: u64) {
        let curr = self.rqs[cpu].curr;
        self.tasks[curr.index()].exec.segs.push(Seg {
            rem: cost,
            mode: Mode::NoPreempt,
            kind: SegKind::Irq,
            until: None,
        });
        self.rqs[cpu].gen += 1;
        self.rqs[cpu].seg_start = self.now;
    }

    /// Arms the periodic tick on a busy CPU (NO_HZ_IDLE: idle CPUs do not tick). The tick at
    /// t = 0 precedes everything and charges nothing (rt-dl.md §7).
    pub(crate) fn ensure_tick(&mut self, cpu: usize) {
        if self.rqs[cpu].tick_armed {
            return;
        }
        self.rqs[cpu].tick_armed = true;
        let next = (self.now / self.tick_nsec + 1) * self.tick_nsec;
        let gen = self.rqs[cpu].tick_gen;
        let ev = Ev::Tick {
            cpu: cpu as u32,
            gen,
        };
        // the next boundary never goes back: the ticks (and the stale ones a stopped tick
        // leaves, hundreds per period on a machine that idles briefly) join a FIFO lane
        self.events
            .push_monotone(schedlab_engine::SimTime(next), ev.rank(), ev);
    }

    /// NO_HZ_IDLE: the tick stops when the CPU enters idle (a pending one never fires).
    pub(crate) fn stop_tick(&mut self, cpu: usize) {
        if self.rqs[cpu].tick_armed {
            self.rqs[cpu].tick_armed = false;
            self.rqs[cpu].tick_gen = self.rqs[cpu].tick_gen.wrapping_add(1);
        }
    }

    /// Ends the open-ended segment of kind `kind` (a kernel mutex spin, a user-space spin) of
    /// task `s`: if `s` runs, its time so far is accounted and its top segment re-armed, so the
    /// segment completes now; if not, it is marked done and completes when `s` next runs.
    pub(crate) fn end_open_segment(&mut self, s: crate::sched::TaskId, kind: SegKind) {
        let cpu = self.tasks[s.index()].cpu;
        let running = self.rqs[cpu].curr == s;
        if running {
            self.progress_segment(cpu);
        }
        let Some(seg) = self.tasks[s.index()]
            .exec
            .segs
            .iter_mut()
            .rev()
            .find(|x| x.kind == kind)
        else {
            return;
        };
        seg.rem = 0;
        if running {
            self.arm_segment(cpu);
        }
    }

    /// SMT throughput (a property of the core, not of the kernel): while two or more SMT
    /// siblings of a core run tasks, each delivers `smt_throughput` of the core's single-thread
    /// speed (`[topology] smt_throughput`, e.g. 0.60 on xeon-2s-64); an idle sibling (the idle
    /// task, polling or not) leaves the whole core to the other. Called when `cpu` switches
    /// between its idle task and a task: the running segments of its siblings are accounted at
    /// the old speed up to now and re-armed at the new one, and `cpu`'s own speed is set before
    /// its next segment is armed. Only `Work` segments scale; kernel costs (switches,
    /// interrupts) stay wall time as the cost tables give them (simulator deviation).
    pub(crate) fn smt_update_speed(&mut self, cpu: usize) {
        let ppm = self.machine.smt_throughput_ppm;
        if ppm == 1_000_000 || self.machine.smt_mask[cpu].weight() < 2 {
            return;
        }
        let core = self.machine.smt_mask[cpu].clone();
        let busy = |k: &Kernel, c: usize| !k.tasks[k.rqs[c].curr.index()].is_idle_task;
        for s in core.iter() {
            let shared = core.iter().any(|o| o != s && busy(self, o));
            let base = self.machine.speed[s];
            let speed = if shared {
                (base * u64::from(ppm) / 1_000_000).max(1)
            } else {
                base
            };
            if self.rqs[s].speed == speed {
                continue;
            }
            if s == cpu || !busy(self, s) {
                // `cpu` has just switched: its outgoing task's progress is accounted and its
                // next segment is not armed yet; an idle sibling has nothing to re-time
                self.rqs[s].speed = speed;
                continue;
            }
            // the sibling's running segment: progress at the old speed, re-armed at the new
            self.progress_segment(s);
            self.rqs[s].speed = speed;
            let now = self.now;
            let unfinished = self.tasks[self.rqs[s].curr.index()]
                .exec
                .segs
                .last()
                .is_some_and(|seg| seg.unfinished(now));
            if unfinished && self.executing != Some(s) {
                self.arm_segment(s);
            }
        }
    }

    /// Wall time a segment still needs on `cpu`.
    pub(crate) fn seg_wall(&self, cpu: usize, seg: &Seg) -> u64 {
        if let Some(until) = seg.until {
            return until.saturating_sub(self.now);
        }
        match seg.kind {
            SegKind::Work => {
                let speed = self.rqs[cpu].speed;
                if speed == 1024 {
                    seg.rem
                } else {
                    match seg.rem.checked_mul(1024) {
                        Some(p) => p.div_ceil(speed),
                        None => (seg.rem as u128 * 1024).div_ceil(speed as u128) as u64,
                    }
                }
            }
            _ => seg.rem,
        }
    }

    /// Accounts the progress of the running segment up to now (user/system time) and makes
    /// `seg_start = now`. Any armed segment end becomes stale.
    pub(crate) fn progress_segment(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let elapsed = self.now - self.rqs[cpu].seg_start;
        self.rqs[cpu].seg_start = self.now;
        self.rqs[cpu].gen += 1;
        if elapsed == 0 || self.tasks[curr.index()].is_idle_task {
            return;
        }
        let speed = self.rqs[cpu].speed;
        let task = &mut self.tasks[curr.index()];
        let Some(seg) = task.exec.segs.last_mut() else {
            return;
        };
        if seg.mode == Mode::User {
            task.stats.user_ns += elapsed;
        } else {
            task.stats.sys_ns += elapsed;
        }
        if seg.until.is_some() {
            return;
        }
        let done = if seg.kind == SegKind::Work && speed != 1024 {
            (elapsed as u128 * speed as u128 / 1024) as u64
        } else {
            elapsed
        };
        seg.rem = seg.rem.saturating_sub(done);
    }

    /// The running segment has reached its end: `progress_segment` (the time accounting, a
    /// stale end event) and the segment marked done (`rem` 0, no wall-time end) in one pass.
    #[inline]
    pub(crate) fn finish_segment(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let elapsed = self.now - self.rqs[cpu].seg_start;
        self.rqs[cpu].seg_start = self.now;
        self.rqs[cpu].gen += 1;
        let account = elapsed != 0 && !self.tasks[curr.index()].is_idle_task;
        let task = &mut self.tasks[curr.index()];
        let Some(seg) = task.exec.segs.last_mut() else {
            return;
        };
        if account {
            if seg.mode == Mode::User {
                task.stats.user_ns += elapsed;
            } else {
                task.stats.sys_ns += elapsed;
            }
        }
        // rounding on slow CPUs can leave a few ns of work: the segment is done
        seg.rem = 0;
        seg.until = None;
    }

    pub(crate) fn arm_segment(&mut self, cpu: usize) {
        let curr = self.rqs[cpu].curr;
        let seg = *self.tasks[curr.index()].exec.segs.last().unwrap();
        let wall = self.seg_wall(cpu, &seg);
        self.arm_segment_wall(cpu, &seg, wall);
    }

    /// `arm_segment` for the running task's top segment `seg`, whose `seg_wall` the caller
    /// has computed (`wall`).
    #[inline]
    pub(crate) fn arm_segment_wall(&mut self, cpu: usize, seg: &Seg, wall: u64) {
        self.rqs[cpu].gen += 1;
        self.rqs[cpu].seg_start = self.now;
        if (seg.kind == SegKind::Spin && seg.rem > 0)
            || (seg.kind == SegKind::UserSpin && seg.rem > crate::exec::USER_SPIN_OPEN)
        {
            // an open-ended spin has no end event: `end_spin` re-arms it, so no far-future
            // events pile up in the queue
            return;
        }
        let gen = self.rqs[cpu].gen;
        self.push_event(
            self.now + wall,
            Ev::SegEnd {
                cpu: cpu as u32,
                gen,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::presets::{KernelConfig, PreemptModel};
    use crate::sim::MachineDesc;
    use crate::Kernel;

    fn kernel() -> Kernel {
        let cfg = KernelConfig::parse("v6.12").unwrap();
        let mut m = MachineDesc::ideal(2, 1000, PreemptModel::Full);
        for c in &mut m.costs {
            c.c_syscall.0 = 1_000;
            c.jitter_sigma_ppm = 100_000;
        }
        Kernel::new(cfg, m, 7).unwrap()
    }

    /// Each CPU draws its cost jitter from its own stream: what CPU 1 draws does not depend on
    /// how many draws CPU 0 made before (with one shared stream, the five draws on CPU 0 would
    /// have moved CPU 1's).
    #[test]
    fn one_cpus_jitter_does_not_depend_on_anothers() {
        let mut a = kernel();
        a.executing = Some(0);
        let on0: Vec<u64> = (0..5).map(|_| a.cost(0, |c| c.c_syscall.0)).collect();
        // the jitter is on: the draws are not all the median
        assert!(on0.iter().any(|&v| v != 1_000), "{on0:?}");
        a.executing = Some(1);
        let after: Vec<u64> = (0..3).map(|_| a.cost(1, |c| c.c_syscall.0)).collect();
        let mut b = kernel();
        b.executing = Some(1);
        let alone: Vec<u64> = (0..3).map(|_| b.cost(1, |c| c.c_syscall.0)).collect();
        assert_eq!(after, alone);
        // an IPI's latency is drawn by the sender: CPU 0 drawing a cost of CPU 1 uses CPU 0's
        // stream and leaves CPU 1's untouched
        let mut c = kernel();
        c.executing = Some(0);
        let _ = c.cost(1, |c| c.c_syscall.0);
        c.executing = Some(1);
        let next: Vec<u64> = (0..3).map(|_| c.cost(1, |c| c.c_syscall.0)).collect();
        assert_eq!(next, alone);
    }
}
