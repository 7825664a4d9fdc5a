//! The `llama-batched-bench` model (workloads.md §9.2): the ggml CPU thread pool running one
//! graph per `llama_decode` micro-batch.
//!
//! Tasks: the main thread (ggml worker 0) and `P − 1` pool threads, `P = max(-t, -tb)`,
//! created once by `clone()` at start and joined at the end; they inherit the line's
//! placement (`chrt --idle 0` makes every one SCHED_IDLE). Per graph of `n` tokens computed
//! with `T` threads (`-t` for one token, `-tb` for more, as llama.cpp picks):
//!
//! 1. kick-off (main): the graph's description is published, the generation word
//!    (`n_graph`) is incremented, and the pool's condition variable is broadcast — a
//!    `FUTEX_WAKE` only if some thread sleeps on it (glibc's condvar makes no system call
//!    without waiters);
//! 2. each of the `T` active threads computes, for each of the `K` nodes, its share
//!    `max(W/T, M)/K` of CPU work plus the barrier's cost `b × T`, then arrives at
//!    `ggml_barrier`: an atomic increment of `n_barrier`; the last arriver resets it and
//!    increments `n_barrier_passed`; the others spin (`Op::SpinWhile`, user time, never
//!    sleeping) until `n_barrier_passed` changes. ggml puts a barrier after every node but
//!    the last and one after the loop: `K` barriers per graph. With `T = 1` the barrier
//!    returns at once;
//! 3. the main thread then does the serial `W_sample` (logits and batch handling) and the
//!    next graph; the pool threads poll the generation word for `1024 × 128 × poll`
//!    iterations (`--poll`, default 50) of the CPU-relax instruction (`c_relax` each: `YIELD` on arm64, `PAUSE` on
//!    x86; `Op::SpinWhile` bounded by the product), then wait on the condition variable
//!    (`FUTEX_WAIT` on the generation word). Threads beyond the graph's `T` do not poll and
//!    go back to waiting when woken.
//!
//! Work of a graph of `n` tokens (single-thread CPU time at the reference core):
//! `W(n) = W_step + (n − 1) × W_token`; its memory floor `M` is the time to stream the
//! weights once (`bytes_step / BW`, `t_mem`). Sequence of graphs: a warm-up decode of 16
//! tokens; per (pp, tg, pl) row the prompt (`pl × pp` tokens, or `pp` with `-pps`) in
//! chunks of `n_batch` tokens per `llama_decode`, each split into graphs of at most
//! `n_ubatch` tokens, then `tg` decodes of `pl` tokens. The row's times are taken with
//! the clock as the tool does (`ggml_time_us()`).
//!
//! What the ggml sources say (read: ggml-cpu.c `ggml_barrier`,
//! `ggml_graph_compute_thread`, `ggml_graph_compute_poll_for_work`,
//! `ggml_graph_compute_check_for_work`, `ggml_graph_compute_kickoff`; batched-bench.cpp):
//! the barrier is a pair of counters, the waiters spin with a relaxed load and the CPU-relax
//! instruction with no bound and no sleep; the kick-off always takes the pool mutex, stores
//! the thread count, increments `n_graph` with a full fence and broadcasts; a thread that
//! finds its index beyond the thread count is not "pending" and goes back to waiting; the
//! poll loop is `1024 × 128 × poll` iterations (poll level 50 by default); the tool skips
//! combinations whose `n_ctx_req` exceeds `n_kv_max` and computes its figures in `float`.
//!
//! Simplifications and **unverified** items:
//! * the memory-bandwidth floor is CPU work of each thread (`max(W/T, M)/K` per node), not
//!   a shared resource that slows co-running programs; it does not scale with the CPU's
//!   speed like the rest of the work (all Altra cores run at one speed);
//! * every node has the same work and every thread the same share (ggml's chunked matrix
//!   multiplication lets fast threads take more chunks; no cost jitter is drawn, since a
//!   per-node draw would add the maximum of `T` draws to every node);
//! * the barrier's cache-line traffic is the CPU cost `b × T` before the arrival, and a
//!   changed counter is seen at once by a spinner on a CPU;
//! * `W_token` (prompt processing, compute-bound, **unverified**), `W_step`, `b`, `t_mem`,
//!   `W_sample`, `c_relax` come from `[programs.llama-batched-bench]` of the platform file;
//!   the defaults are the Altra's (docs/model.md W§9). The attention's growth with the KV
//!   length, the KV clear, model loading and `llama_perf_context_print` are not modelled;
//! * the pool mutex around kick-off and condition wait is not modelled (its critical
//!   sections are a few atomics); the pool is created once (ggml's persistent thread pool
//!   as workloads.md §9.1 says; a build that lets the CPU backend create a disposable pool
//!   per graph, or uses OpenMP, behaves differently — **unverified** which one the seed ran).

use super::options::{parse, Options};
use super::output::{self, Row, RowTimes};
use crate::workload::{Better, Env, Metric, Workload, WorkloadError};
use schedlab_engine::MAX_SIM_NS;
use schedlab_sched::ipc::FutexId;
use schedlab_sched::sched::TaskId;
use schedlab_sched::{Ctx, Op, Procfs, Program, Spawn, Sys, SysResult, TaskAttrs};
use std::cell::RefCell;
use std::rc::Rc;

const PROG: &str = super::options::PROG;
/// ggml graph nodes (and barriers) per graph: ≈ 32 layers × 25 (workloads.md §9.2).
pub const NODES_PER_GRAPH: u32 = 800;
/// Iterations of the work-polling loop per polling level: `1024 × 128 × poll` (ggml's
/// default level is 50).
pub const POLL_ITERS_PER_LEVEL: u64 = 1024 * 128;
/// Tokens of the warm-up decode (batched-bench.cpp).
pub const WARMUP_TOKENS: u32 = 16;
/// The thread name (`comm`) the tool's threads carry, truncated to 15 characters.
const COMM: &str = "llama-batched-b";

/// Costs of the model, ns of work at the platform's reference core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Costs {
    /// Single-thread CPU work of a one-token graph (`W_step`).
    pub w_step: u64,
    /// Extra CPU work per further token of a graph (prompt processing).
    pub w_token: u64,
    /// Memory floor of a graph: the weights streamed once (`bytes_step / BW`).
    pub t_mem: u64,
    /// Barrier cost per thread per node (`b`; a node's barrier costs `b × T`), in ps.
    pub b_ps: u64,
    /// Serial work of the main thread after each graph (`W_sample`).
    pub w_sample: u64,
    /// One CPU-relax iteration of the polling loop, in ps.
    pub c_relax_ps: u64,
}

impl Costs {
    /// docs/model.md W§9: fitted on the patched Altra figures of seed 003.
    pub const ALTRA: Costs = Costs {
        w_step: 1_264_000_000,
        w_token: 300_000_000,
        t_mem: 23_529_000,
        b_ps: 204_000,
        w_sample: 200_000,
        c_relax_ps: 1_000,
    };

    /// The platform's values where it gives them.
    pub fn from_platform(sys: &dyn Sys) -> Costs {
        let d = Costs::ALTRA;
        let get = |k: &str, def: u64| sys.program_cost(PROG, k).unwrap_or(def);
        Costs {
            w_step: get("w_step", d.w_step),
            w_token: get("w_token", d.w_token),
            t_mem: get("t_mem", d.t_mem),
            // the platform file gives b and c_relax in ns; fractions of a ns are rounded
            // by its duration parser, so they are kept in ps here from whole ns ×1000 or
            // the default
            b_ps: sys
                .program_cost(PROG, "c_barrier")
                .map_or(d.b_ps, |ns| ns * 1000),
            w_sample: get("w_sample", d.w_sample),
            c_relax_ps: sys
                .program_cost(PROG, "c_relax")
                .map_or(d.c_relax_ps, |ns| ns * 1000),
        }
    }

    /// CPU work of a graph of `n` tokens (at most [`MAX_SIM_NS`]: a graph of 2^32 tokens at
    /// the platform's largest `w_token` would pass `u64`, and no run is longer).
    pub fn graph_work(&self, n: u32) -> u64 {
        let w = self.w_step as u128 + (n.max(1) as u128 - 1) * self.w_token as u128;
        w.min(MAX_SIM_NS as u128) as u64
    }

    /// One thread's CPU work per node of a graph of `n` tokens on `t` threads: its share
    /// `max(W/T, M)/K` plus the barrier's `b × T`.
    pub fn node_share(&self, n: u32, t: u32) -> u64 {
        let per_thread = (self.graph_work(n) / t as u64).max(self.t_mem);
        let barrier = if t > 1 {
            (self.b_ps * t as u64).div_ceil(1000)
        } else {
            0
        };
        per_thread / NODES_PER_GRAPH as u64 + barrier
    }

    /// How long the polling loop spins at polling level `level`
    /// (`1024 × 128 × level × c_relax`), ns.
    pub fn poll_ns(&self, level: u32) -> u64 {
        // u128: 131 072 × 100 iterations of a c_relax of a few seconds pass u64; no spin is
        // longer than a run
        let ps = POLL_ITERS_PER_LEVEL as u128 * level as u128 * self.c_relax_ps as u128;
        ps.div_ceil(1000).min(MAX_SIM_NS as u128) as u64
    }
}

/// Builds the model from the words after `llama-batched-bench`.
pub fn workload(line: &str, args: &[String]) -> Result<Box<dyn Workload>, WorkloadError> {
    let opts = parse(args).map_err(|e| WorkloadError::option(line, e.to_string()))?;
    Ok(Box::new(LlamaBatchedBench::new(opts)))
}

/// One step of the main thread's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// Compute a graph of this many tokens.
    Graph(u32),
    /// Read the clock into a row's field.
    Stamp(usize, Mark),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    PpStart,
    PpEnd,
    TgStart,
    TgEnd,
}

/// The graphs of one `decode_helper()` call of `tokens` tokens.
fn decode(actions: &mut Vec<Action>, tokens: u32, n_batch: u32, n_ubatch: u32) {
    let mut left = tokens;
    while left > 0 {
        let mut chunk = left.min(n_batch);
        left -= chunk;
        while chunk > 0 {
            let u = chunk.min(n_ubatch);
            actions.push(Action::Graph(u));
            chunk -= u;
        }
    }
}

/// The main thread's whole script for these options.
fn script(o: &Options) -> (Vec<Action>, Vec<RowTimes>) {
    let mut a = Vec::new();
    decode(&mut a, WARMUP_TOKENS, o.n_batch, o.n_ubatch);
    let rows = o.rows();
    let mut times = Vec::new();
    for (i, &(pp, tg, pl)) in rows.iter().enumerate() {
        times.push(RowTimes {
            pp,
            tg,
            pl,
            n_kv: o.n_kv(pp, tg, pl) as u32,
            ..Default::default()
        });
        a.push(Action::Stamp(i, Mark::PpStart));
        let prompt = if o.is_pp_shared { pp } else { pl * pp };
        decode(&mut a, prompt, o.n_batch, o.n_ubatch);
        a.push(Action::Stamp(i, Mark::PpEnd));
        a.push(Action::Stamp(i, Mark::TgStart));
        for _ in 0..tg {
            decode(&mut a, pl, o.n_batch, o.n_ubatch);
        }
        a.push(Action::Stamp(i, Mark::TgEnd));
    }
    (a, times)
}

/// The thread pool's shared memory.
#[derive(Debug)]
struct Pool {
    /// `n_graph`: the generation word the pool threads poll and wait on.
    n_graph: FutexId,
    n_barrier: FutexId,
    n_barrier_passed: FutexId,
    /// `n_threads_cur` of the current graph.
    n_threads: u32,
    /// One thread's work per node of the current graph.
    share: u64,
    stop: bool,
    poll_ns: u64,
    rows: Vec<RowTimes>,
    done_rows: usize,
    workers: Vec<TaskId>,
    /// Graphs computed (all of them, warm-up included).
    graphs: u64,
    /// Threads of one-token graphs and of larger ones.
    t: u32,
    tb: u32,
    costs: Costs,
}

type Shared = Rc<RefCell<Pool>>;

/// Where a thread is in the current graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    /// Next: compute node `i`'s share.
    Compute(u32),
    /// Next: arrive at the barrier after node `i`.
    Arrive(u32),
    /// The last barrier is passed.
    Done,
}

/// One thread's progress through a graph: `Some(op)` to issue, `None` when the graph is done.
fn graph_step(pool: &Shared, cx: &mut Ctx<'_>, node: &mut Node) -> Option<Op> {
    loop {
        match *node {
            Node::Done => return None,
            Node::Compute(i) => {
                *node = Node::Arrive(i);
                return Some(Op::Run(pool.borrow().share));
            }
            Node::Arrive(i) => {
                *node = if i + 1 < NODES_PER_GRAPH {
                    Node::Compute(i + 1)
                } else {
                    Node::Done
                };
                let (n, bar, passed) = {
                    let p = pool.borrow();
                    (p.n_threads, p.n_barrier, p.n_barrier_passed)
                };
                if n > 1 {
                    // ggml_barrier(): read n_barrier_passed, then arrive
                    let seen = cx.futex_load(passed);
                    let arrived = cx.futex_fetch_add(bar, 1);
                    if arrived == n - 1 {
                        // the last arriver resets the count and lets the others go
                        cx.futex_store(bar, 0);
                        cx.futex_fetch_add(passed, 1);
                    } else {
                        // spin (never sleeping) until n_barrier_passed changes
                        return Some(Op::SpinWhile {
                            futex: passed,
                            val: seen,
                            max_ns: u64::MAX,
                        });
                    }
                }
            }
        }
    }
}

/// The main thread (ggml worker 0).
struct Main {
    pool: Shared,
    workers: u32,
    spawned: u32,
    actions: Vec<Action>,
    next: usize,
    w_sample: u64,
    /// Inside a graph: where.
    node: Option<Node>,
    /// The serial work after the graph is still to do.
    sample_due: bool,
    stopping: bool,
}

impl Main {
    /// Publishes a graph of `tokens` tokens and wakes sleeping pool threads.
    fn kickoff(&mut self, cx: &mut Ctx<'_>, n_threads: u32, share: u64) -> Option<Op> {
        let gen = {
            let mut p = self.pool.borrow_mut();
            p.n_threads = n_threads;
            p.share = share;
            p.graphs += 1;
            p.n_graph
        };
        cx.futex_fetch_add(gen, 1);
        if cx.futex_waiters(gen) > 0 {
            return Some(Op::FutexWake {
                futex: gen,
                nr: u32::MAX,
            });
        }
        None
    }
}

impl Program for Main {
    fn next(&mut self, cx: &mut Ctx<'_>, last: SysResult) -> Op {
        if self.spawned < self.workers {
            self.spawned += 1;
            let w = Worker {
                pool: self.pool.clone(),
                ith: self.spawned,
                last_graph: 0,
                state: WState::Check { may_poll: false },
                registered: false,
            };
            return Op::Spawn(Box::new(Spawn {
                program: Box::new(w),
                thread: true,
                attrs: TaskAttrs {
                    comm: Some(COMM.to_string()),
                    ..Default::default()
                },
            }));
        }
        if self.stopping {
            // pthread_join() of every pool thread
            return match last {
                SysResult::NoChild => Op::Exit,
                _ => Op::WaitChild,
            };
        }
        loop {
            if let Some(node) = self.node.as_mut() {
                if let Some(op) = graph_step(&self.pool, cx, node) {
                    return op;
                }
                self.node = None;
                self.sample_due = true;
            }
            if self.sample_due {
                self.sample_due = false;
                if self.w_sample > 0 {
                    return Op::Run(self.w_sample);
                }
            }
            let Some(&a) = self.actions.get(self.next) else {
                // ggml_threadpool_free(): stop the pool, then join it
                self.stopping = true;
                let gen = {
                    let mut p = self.pool.borrow_mut();
                    p.stop = true;
                    p.n_graph
                };
                cx.futex_fetch_add(gen, 1);
                if cx.futex_waiters(gen) > 0 {
                    return Op::FutexWake {
                        futex: gen,
                        nr: u32::MAX,
                    };
                }
                return Op::WaitChild;
            };
            self.next += 1;
            match a {
                Action::Stamp(i, m) => {
                    let us = cx.now() / 1000;
                    let mut p = self.pool.borrow_mut();
                    let r = &mut p.rows[i];
                    match m {
                        Mark::PpStart => r.pp_start_us = us,
                        Mark::PpEnd => r.pp_end_us = us,
                        Mark::TgStart => r.tg_start_us = us,
                        Mark::TgEnd => {
                            r.tg_end_us = us;
                            p.done_rows = i + 1;
                        }
                    }
                }
                Action::Graph(tokens) => {
                    let (n_threads, share) = {
                        let p = self.pool.borrow();
                        let (t, tb, costs) = (p.t, p.tb, p.costs);
                        let n = if tokens == 1 { t } else { tb };
                        (n, costs.node_share(tokens, n))
                    };
                    self.node = Some(Node::Compute(0));
                    if let Some(op) = self.kickoff(cx, n_threads, share) {
                        return op;
                    }
                }
            }
        }
    }
}

/// A pool thread (`ggml_graph_compute_secondary_thread`).
struct Worker {
    pool: Shared,
    /// ggml's thread index (`ith`, 1…).
    ith: u32,
    /// The generation last seen (`state->last_graph`).
    last_graph: u32,
    state: WState,
    registered: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WState {
    /// Looking for new work (`ggml_graph_compute_check_for_work`): poll first if allowed
    /// and active, then wait.
    Check {
        may_poll: bool,
    },
    Graph(Node),
}

impl Program for Worker {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        if !self.registered {
            self.registered = true;
            self.pool.borrow_mut().workers.push(cx.task());
        }
        loop {
            match self.state {
                WState::Graph(mut node) => {
                    let op = graph_step(&self.pool, cx, &mut node);
                    self.state = WState::Graph(node);
                    match op {
                        Some(op) => return op,
                        None => self.state = WState::Check { may_poll: true },
                    }
                }
                WState::Check { may_poll } => {
                    let (gen, n_threads, stop, poll_ns) = {
                        let p = self.pool.borrow();
                        (p.n_graph, p.n_threads, p.stop, p.poll_ns)
                    };
                    let active = self.ith < n_threads;
                    let g = cx.futex_load(gen);
                    if g != self.last_graph {
                        self.last_graph = g;
                        if stop {
                            return Op::Exit;
                        }
                        if active {
                            self.state = WState::Graph(Node::Compute(0));
                            continue;
                        }
                        // not part of this graph: not pending, back to waiting
                        self.state = WState::Check { may_poll: false };
                        continue;
                    }
                    self.state = WState::Check { may_poll: false };
                    if may_poll && active && poll_ns > 0 {
                        return Op::SpinWhile {
                            futex: gen,
                            val: g,
                            max_ns: poll_ns,
                        };
                    }
                    // pthread_cond_wait() on the pool's condition variable
                    return Op::FutexWait { futex: gen, val: g };
                }
            }
        }
    }
}

/// The `llama-batched-bench` model.
pub struct LlamaBatchedBench {
    opts: Options,
    pool: Option<Shared>,
    main: Option<TaskId>,
    /// Costs to use instead of the platform's (tests).
    costs: Option<Costs>,
}

impl LlamaBatchedBench {
    pub fn new(opts: Options) -> LlamaBatchedBench {
        LlamaBatchedBench {
            opts,
            pool: None,
            main: None,
            costs: None,
        }
    }

    /// The model with these costs whatever the platform gives.
    pub fn with_costs(opts: Options, costs: Costs) -> LlamaBatchedBench {
        LlamaBatchedBench {
            costs: Some(costs),
            ..LlamaBatchedBench::new(opts)
        }
    }

    /// The rows completed so far, as the tool computes them.
    pub fn rows(&self) -> Vec<Row> {
        let Some(p) = self.pool.as_ref() else {
            return Vec::new();
        };
        let p = p.borrow();
        p.rows[..p.done_rows]
            .iter()
            .map(|r| Row::compute(r, self.opts.is_pp_shared))
            .collect()
    }

    /// Graphs computed so far.
    pub fn graphs(&self) -> u64 {
        self.pool.as_ref().map_or(0, |p| p.borrow().graphs)
    }

    fn threads(&self, ncpus: usize) -> (u32, u32) {
        self.opts.thread_counts(ncpus)
    }
}

impl Workload for LlamaBatchedBench {
    fn program(&self) -> &str {
        PROG
    }

    fn ends_by_itself(&self) -> bool {
        true
    }

    fn completed(&self) -> Option<bool> {
        self.pool
            .as_ref()
            .map(|p| p.borrow().done_rows == p.borrow().rows.len())
    }

    fn duration_hint(&self) -> Option<u64> {
        // the Altra costs with the threads given (or 1): four times the undisturbed time,
        // plus 5 s; the run ends when the tool exits
        let c = Costs::ALTRA;
        let (t, tb) = (
            self.opts.threads.unwrap_or(1),
            self.opts.threads_batch.or(self.opts.threads).unwrap_or(1),
        );
        let (actions, _) = script(&self.opts);
        let mut ns: u64 = 0;
        for a in actions {
            if let Action::Graph(n) = a {
                let th = if n == 1 { t } else { tb };
                ns = ns.saturating_add(c.node_share(n, th) * NODES_PER_GRAPH as u64 + c.w_sample);
            }
        }
        Some(ns.saturating_mul(4).saturating_add(5_000_000_000))
    }

    fn setup(&mut self, sys: &mut dyn Sys, env: &Env) -> Result<(), WorkloadError> {
        let costs = self.costs.unwrap_or_else(|| Costs::from_platform(sys));
        let (t, tb) = self.threads(sys.ncpus());
        let (actions, rows) = script(&self.opts);
        let pool = Rc::new(RefCell::new(Pool {
            n_graph: sys.new_futex(0),
            n_barrier: sys.new_futex(0),
            n_barrier_passed: sys.new_futex(0),
            n_threads: t.max(tb),
            share: 0,
            stop: false,
            poll_ns: costs.poll_ns(self.opts.poll),
            rows,
            done_rows: 0,
            workers: Vec::new(),
            graphs: 0,
            t,
            tb,
            costs,
        }));
        let main = Main {
            pool: pool.clone(),
            workers: t.max(tb) - 1,
            spawned: 0,
            actions,
            next: 0,
            w_sample: costs.w_sample,
            node: None,
            sample_due: false,
            stopping: false,
        };
        let attrs = env.placement.attrs(COMM, env.tg);
        let m = sys.fork(Box::new(main), &attrs);
        sys.wake_up_new_task(m);
        self.main = Some(m);
        self.pool = Some(pool);
        Ok(())
    }

    fn output(&self, _procfs: &dyn Procfs) -> String {
        let (t, tb) = match self.pool.as_ref() {
            Some(p) => (p.borrow().t, p.borrow().tb),
            None => (0, 0),
        };
        let o = &self.opts;
        let mut s = output::header(
            o.n_ctx,
            o.n_batch,
            o.n_ubatch,
            o.flash_attn,
            o.is_pp_shared,
            o.n_gpu_layers,
            t,
            tb,
        );
        s.push_str(&output::table_head());
        for r in self.rows() {
            s.push_str(&output::row_line(&r));
        }
        s.push('\n');
        s
    }

    fn metrics(&self, _procfs: &dyn Procfs) -> Vec<Metric> {
        let rows = self.rows();
        let several = self.opts.rows().len() > 1;
        let mut v = Vec::new();
        for r in rows {
            let suffix = if several {
                format!("_pp{}_tg{}_b{}", r.pp, r.tg, r.pl)
            } else {
                String::new()
            };
            let m = |name: &str, value: f32, unit: &str, better| {
                Metric::new(&format!("{name}{suffix}"), value as f64, unit, better)
            };
            v.push(m("t_pp_s", r.t_pp, "s", Better::Lower));
            v.push(m("s_pp_tps", r.speed_pp, "t/s", Better::Higher));
            v.push(m("t_tg_s", r.t_tg, "s", Better::Lower));
            v.push(m("s_tg_tps", r.speed_tg, "t/s", Better::Higher));
            v.push(m("t_s", r.t, "s", Better::Lower));
            v.push(m("s_tps", r.speed, "t/s", Better::Higher));
        }
        v
    }

    fn tasks(&self) -> Vec<TaskId> {
        let mut v: Vec<TaskId> = self.main.into_iter().collect();
        if let Some(p) = self.pool.as_ref() {
            v.extend(p.borrow().workers.iter().copied());
        }
        v
    }

    fn max_tasks(&self, ncpus: usize) -> u64 {
        let (t, tb) = self.threads(ncpus);
        t.max(tb) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{parse_workload, Placement};
    use schedlab_sched::sched::Policy;
    use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};

    /// Costs near the platform file's one-hour cap (campaign, platform seeds 3506, 14117, 867:
    /// `c_relax` of 3 s and 2 s overflowed the poll time, `w_token` of 2^33 s the graph work).
    #[test]
    fn costs_at_the_cap_do_not_overflow() {
        let c = Costs {
            c_relax_ps: 2_000_000_000_000, // 2 s
            w_token: 3_600_000_000_000,    // 1 h
            ..Costs::ALTRA
        };
        // 131072 × 100 × 2 s = 26 214 400 s, within the 2^33 s cap
        assert_eq!(c.poll_ns(100), 26_214_400 * 1_000_000_000);
        // 1 h c_relax: 131072 × 100 × 3600 s = 4.7e10 s, capped at 2^33 s
        let c2 = Costs {
            c_relax_ps: 3_600_000_000_000_000,
            ..c
        };
        assert_eq!(c2.poll_ns(100), MAX_SIM_NS);
        // 2^32 − 1 tokens × 1 h: capped at 2^33 s; 3 tokens: w_step + 2 h
        assert_eq!(c.graph_work(u32::MAX), MAX_SIM_NS);
        assert_eq!(c.graph_work(3), 1_264_000_000 + 7_200_000_000_000);
    }

    fn kernel(ncpus: usize) -> Kernel {
        let cfg = KernelConfig::parse("v6.19 NO_SIM_JITTER").unwrap();
        let m = MachineDesc::ideal(ncpus, 1000, PreemptModel::Full);
        let mut k = Kernel::new(cfg, m, 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        k
    }

    fn env() -> Env {
        Env {
            placement: Placement::default(),
            tg: None,
            index: 0,
            duration_ns: None,
        }
    }

    fn opts(s: &str) -> Options {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>()).unwrap()
    }

    /// Costs for hand computation: `W/T` = 10 µs per node with `t` threads, `b` = 1 µs,
    /// no memory floor, no prompt-token or sampling work, a 1 ms poll.
    fn unit_costs(t: u64) -> Costs {
        Costs {
            w_step: NODES_PER_GRAPH as u64 * t * 10_000,
            w_token: 0,
            t_mem: 0,
            b_ps: 1_000_000,
            w_sample: 0,
            c_relax_ps: 1_000_000_000 / (POLL_ITERS_PER_LEVEL * 50),
        }
    }

    fn run(k: &mut Kernel, w: &mut LlamaBatchedBench) {
        w.setup(k, &env()).unwrap();
        let stop = k.run_until(10_000_000_000);
        assert!(stop < 10_000_000_000, "the tool did not finish");
    }

    #[test]
    fn t_threads_on_t_cpus_finish_a_node_in_w_over_t_plus_the_barrier() {
        // 3 threads on 3 CPUs, every kernel cost zero: a node takes W/T + b×T = 10 + 3 µs,
        // a graph 800 × 13 µs = 10.4 ms. Graphs: warm-up, prompt (1 token), 2 decodes:
        // T_PP = 10.4 ms, T_TG = 20.8 ms, S_TG = 1 × 2 / 0.0208 s
        let mut k = kernel(3);
        let mut w = LlamaBatchedBench::with_costs(opts("-npp 1 -ntg 2 -npl 1 -t 3"), unit_costs(3));
        run(&mut k, &mut w);
        let rows = w.rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].t_pp, 10_400f32 / 1e6f32);
        assert_eq!(rows[0].t_tg, 20_800f32 / 1e6f32);
        assert_eq!(rows[0].speed_tg, 2f32 / (20_800f32 / 1e6f32));
        assert_eq!(w.graphs(), 4);
        // the memory floor: M = 16 ms per graph (20 µs per node) exceeds W/T = 10 µs, so a
        // node takes 20 + 3 µs and a decode 800 × 23 µs = 18.4 ms
        let mut k = kernel(3);
        let c = Costs {
            t_mem: 16_000_000,
            ..unit_costs(3)
        };
        let mut w = LlamaBatchedBench::with_costs(opts("-npp 1 -ntg 2 -npl 1 -t 3"), c);
        run(&mut k, &mut w);
        assert_eq!(w.rows()[0].t_tg, 36_800f32 / 1e6f32);
        // every thread was busy all the time it existed: the pool threads' user time is
        // their compute plus their spinning, and nobody slept during the graphs
        for t in w.tasks() {
            assert_eq!(k.tasks[t.index()].comm, "llama-batched-b");
        }
    }

    #[test]
    fn one_preempted_thread_stalls_every_thread() {
        // 2 threads on 2 CPUs, nodes of 10 + 2 µs (graphs of 9.6 ms: warm-up 0–9.6 ms,
        // prompt 9.6–19.2 ms, decodes from 19.2 ms). A SCHED_FIFO task on CPU 1 wakes at
        // 19.2 ms + 10 nodes + 6 µs = 19.326 ms, in the middle of a node's share, and runs
        // 500 µs: the llama thread on CPU 1 is off its CPU for 500 µs with 6 µs of its share
        // left; the thread on CPU 0 arrives at the barrier 6 µs later and spins until it
        // comes back. The node, and so the first decode, ends 500 µs late: T_TG = 19.2 ms +
        // 0.5 ms = 19.7 ms, S_TG = 2 / 0.0197 s; the prompt is not touched (T_PP 9.6 ms).
        let mut k = kernel(2);
        let attrs = TaskAttrs {
            comm: Some("rt".into()),
            policy: Some(Policy::Fifo),
            rt_priority: Some(50),
            cpus: Some(schedlab_platform::CpuMask::single(1)),
            ..Default::default()
        };
        struct Burst(u32);
        impl Program for Burst {
            fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
                self.0 += 1;
                match self.0 {
                    1 => Op::SleepUntil(19_326_000),
                    2 => Op::Run(500_000),
                    _ => Op::Exit,
                }
            }
        }
        let hog = k.fork(Box::new(Burst(0)), &attrs);
        k.wake_up_new_task(hog);
        let mut w = LlamaBatchedBench::with_costs(opts("-npp 1 -ntg 2 -npl 1 -t 2"), unit_costs(2));
        run(&mut k, &mut w);
        let r = w.rows()[0];
        assert_eq!(r.t_pp, 9_600f32 / 1e6f32);
        assert_eq!(r.t_tg, 19_700f32 / 1e6f32);
        assert_eq!(r.speed_tg, 2f32 / (19_700f32 / 1e6f32));
    }

    #[test]
    fn chrt_idle_makes_every_thread_sched_idle() {
        let mut k = kernel(3);
        let (placement, mut w) =
            parse_workload("chrt --idle 0 llama-batched-bench -npp 1 -ntg 1 -npl 1 -t 3").unwrap();
        assert_eq!(placement.policy, Some(Policy::Idle));
        let e = Env { placement, ..env() };
        w.setup(&mut k, &e).unwrap();
        k.run_until(200_000_000);
        let ts = w.tasks();
        assert_eq!(ts.len(), 3);
        for t in ts {
            assert_eq!(k.tasks[t.index()].policy, Policy::Idle);
        }
    }

    #[test]
    fn option_errors_name_the_option() {
        for (line, what) in [
            ("llama-batched-bench -t 51 --frobnicate", "--frobnicate"),
            ("llama-batched-bench -npp 128,x", "-npp"),
            ("llama-batched-bench -tb 0", "-tb"),
        ] {
            let e = parse_workload(line).err().unwrap().to_string();
            assert!(e.contains(what), "{e}");
        }
    }

    #[test]
    fn the_script_follows_the_tools_loops() {
        // warm-up 16 tokens (one graph); per row the prompt pl×pp in n_batch chunks split
        // into n_ubatch graphs, then tg decodes of pl tokens: -b 4 -ub 2, pp 5, pl 1 →
        // chunks 4 + 1 → graphs 2, 2, 1
        let (a, rows) = script(&opts("-b 4 -ub 2 -npp 5 -ntg 2 -npl 1"));
        let g: Vec<u32> = a
            .iter()
            .filter_map(|x| match x {
                Action::Graph(n) => Some(*n),
                _ => None,
            })
            .collect();
        // warm-up: 16 tokens in chunks of 4, graphs of 2
        assert_eq!(g, [[2u32; 8].as_slice(), &[2, 2, 1, 1, 1]].concat());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].n_kv, 7);
    }

    #[test]
    fn node_share_is_the_larger_of_work_and_memory_plus_the_barrier() {
        // the Altra values: 51 threads: 1.264 s / 51 = 24.78 ms > 23.529 ms; per node
        // 24 784 313 / 800 = 30 980 ns, barrier 0.204 µs × 51 = 10 404 ns
        let c = Costs::ALTRA;
        assert_eq!(c.node_share(1, 51), 24_784_313 / 800 + 10_404);
        // 80 threads: 15.8 ms < 23.529 ms: the floor, 29 411 ns, + 16 320 ns
        assert_eq!(c.node_share(1, 80), 23_529_000 / 800 + 16_320);
        // one thread: no barrier
        assert_eq!(c.node_share(1, 1), 1_264_000_000 / 800);
        // the poll: 6 553 600 iterations × 1 ns
        assert_eq!(c.poll_ns(50), 6_553_600);
        assert_eq!(c.poll_ns(0), 0);
    }
}
