//! kernel: idle.c — the idle class: each CPU's idle task (`swapper/N`), picked when no other
//! class has a task, and its idle-time accounting to the fair_server (rt-dl.md §4.5 E7). The
//! model's idle CPUs do not tick (NO_HZ_IDLE), so the v6.19 idle-tick charge never happens:
//! idle time reaches the server when the idle task is put back, or when the server's timer or
//! start brings the current (idle) task up to date. The idle loop's choice of an idle state
//! (cpuidle, drivers/cpuidle/governors) is here too: `cpuidle_select()` when the idle task
//! starts, the measured idle time when it is put back; the states and their exit latencies come
//! from the platform (smp.md §7.2).

use crate::sched::*;
use crate::Kernel;

impl Kernel {
    /// kernel: idle.c pick_task_idle()
    pub(crate) fn pick_task_idle(&self, cpu: usize) -> TaskId {
        self.rqs[cpu].idle
    }

    /// kernel: idle.c set_next_task_idle() — `exec_start` of the idle task, from which idle
    /// time is charged to the fair_server (a110a81c52a9).
    pub(crate) fn set_next_task_idle(&mut self, cpu: usize) {
        self.cpuidle_select(cpu);
        let now = self.rq_clock_task(cpu);
        let idle = self.rqs[cpu].idle;
        let se = self.tasks[idle.index()].se;
        self.se[se.index()].exec_start = now;
    }

    /// kernel: idle.c put_prev_task_idle() — the idle time ends: charged to the fair_server
    /// (rt-dl.md §4.5 E7): v6.12 .. v6.18 by `dl_server_update_idle_time()`, from v6.19
    /// (e636ffb9e31b) by `update_curr_idle()`.
    pub(crate) fn put_prev_task_idle(&mut self, cpu: usize) {
        self.cpuidle_reflect(cpu);
        if self.cfg.has(crate::patches::Patch::DlServerTimeAcct) {
            self.update_curr_idle(cpu);
        } else {
            let idle = self.rqs[cpu].idle;
            self.dl_server_update_idle_time(cpu, idle);
        }
    }

    /// kernel: idle.c update_curr_idle() (e636ffb9e31b, v6.19+): idle accounts like the other
    /// classes and charges the fair_server through `dl_server_update_idle()`. Before that
    /// patch the idle class has no `update_curr`.
    pub(crate) fn update_curr_idle(&mut self, cpu: usize) {
        if !self.cfg.has(crate::patches::Patch::DlServerTimeAcct) {
            return;
        }
        let now = self.rq_clock_task(cpu);
        let idle = self.rqs[cpu].idle;
        let se = self.tasks[idle.index()].se;
        let delta = now as i64 - self.se[se.index()].exec_start as i64;
        if delta <= 0 {
            return;
        }
        self.se[se.index()].exec_start = now;
        self.dl_server_update_idle(cpu, delta);
    }

    /// The exit latency of the idle state `cpu` sits in (or would, if idle) and whether that
    /// state polls (`TIF_POLLING_NRFLAG`: a wake-up needs no IPI and no exit).
    pub(crate) fn idle_exit_latency(&self, cpu: usize) -> (u64, bool) {
        match self.rqs[cpu].idle_state {
            Some(i) => {
                let s = &self.machine.idle_states[cpu][i as usize];
                (s.exit_latency_ns.0, s.polling)
            }
            None => (
                self.machine.idle_exit_ns[cpu],
                self.machine.idle_polling[cpu],
            ),
        }
    }

    /// kernel: cpuidle.c cpuidle_select() with the governor model of smp.md §7.2 (menu-like,
    /// deterministic): the deepest state whose target residency fits the predicted idle time
    /// and whose governor exit latency (entry + exit) fits the CPU latency QoS limit, else
    /// state 0. The prediction is the smaller of the time to this CPU's next sleeper hrtimer
    /// and the median of its last `IDLE_HIST` idle durations (only the timer while fewer are
    /// known). Deviations: no correction factors, no tick-stop decision (idle CPUs do not
    /// tick), timers other than sleepers' (bandwidth, deadline, RT period) are not seen.
    /// A platform with a single state never changes anything (`idle_state` stays None).
    pub(crate) fn cpuidle_select(&mut self, cpu: usize) {
        let states = &self.machine.idle_states[cpu];
        if states.len() < 2 {
            return;
        }
        let now = self.now;
        let next_timer = self.rqs[cpu]
            .hrtimers
            .iter()
            .map(|&id| self.timers[id as usize].hard.saturating_sub(now))
            .min()
            .unwrap_or(u64::MAX);
        let rq = &self.rqs[cpu];
        let n = (rq.idle_hist_n as usize).min(IDLE_HIST);
        let typical = if n == 0 {
            u64::MAX
        } else {
            let mut h: [u64; IDLE_HIST] = rq.idle_hist;
            let h = &mut h[..n];
            h.sort_unstable();
            h[(n - 1) / 2]
        };
        let predicted = next_timer.min(typical);
        let qos = self.cpu_latency_qos_ns;
        let mut pick = 0usize;
        for (i, s) in states.iter().enumerate().skip(1) {
            if s.target_residency_ns.0 <= predicted && s.governor_exit_latency_ns().0 <= qos {
                pick = i;
            }
        }
        let rq = &mut self.rqs[cpu];
        rq.idle_state = Some(pick as u8);
        rq.idle_enter = now;
    }

    /// kernel: cpuidle.c cpuidle_reflect() — the governor learns how long the CPU stayed idle.
    pub(crate) fn cpuidle_reflect(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        if rq.idle_state.take().is_none() {
            return;
        }
        let i = rq.idle_hist_n as usize % IDLE_HIST;
        rq.idle_hist[i] = now.saturating_sub(rq.idle_enter);
        rq.idle_hist_n = rq.idle_hist_n.wrapping_add(1);
    }

    /// kernel: qos.c cpu_latency_qos_add_request() — a `/dev/cpu_dma_latency` request: idle
    /// states whose exit latency exceeds it are not entered from now on.
    pub fn cpu_latency_qos_add_request(&mut self, latency_ns: u64) {
        self.cpu_latency_qos_ns = self.cpu_latency_qos_ns.min(latency_ns);
    }
}

/// Idle durations the governor remembers per CPU (menu.c INTERVALS).
pub(crate) const IDLE_HIST: usize = 8;
