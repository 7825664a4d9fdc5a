//! Reports of a run: the text summary printed after the benchmarks' own output, and the JSON
//! document of `--json`. Reports read results; they never reach into scheduler state.

use crate::run::RunResult;
use serde_json::{json, Map, Value};
use std::fmt::Write;

fn secs(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// Tasks listed by the text summary at most (all are in the JSON).
const MAX_TASK_ROWS: usize = 40;

/// The benchmarks' output followed by schedlab's own summary.
pub fn text(r: &RunResult) -> String {
    let mut s = String::new();
    for w in &r.workloads {
        if !w.output.is_empty() {
            s.push_str(&w.output);
            if !w.output.ends_with('\n') {
                s.push('\n');
            }
        }
    }
    let _ = writeln!(
        s,
        "\nschedlab: platform {} ({} CPUs, HZ {}, preempt {}), kernel '{}', base slice {} ns, seed {}",
        r.platform, r.ncpus, r.hz, r.preempt, r.kernel, r.base_slice_ns, r.seed
    );
    let _ = writeln!(
        s,
        "schedlab: simulated {} s, {} events",
        secs(r.sim_time_ns),
        r.events
    );
    let _ = writeln!(
        s,
        "\n  {:>7} {:<16} {:<12} {:>4} {:>11} {:>6} {:>10} {:>10} {:>8} {:>12} {:>9} {:>9}",
        "PID",
        "COMM",
        "POLICY",
        "NICE",
        "RUNTIME(s)",
        "%CPU",
        "VOLUNTARY",
        "INVOLUNT",
        "MIGRATE",
        "RUN_DELAY(s)",
        "USER(s)",
        "SYS(s)"
    );
    let mut rows: Vec<_> = r.tasks.iter().collect();
    if rows.len() > MAX_TASK_ROWS {
        rows.sort_by(|a, b| {
            b.sum_exec_runtime_ns
                .cmp(&a.sum_exec_runtime_ns)
                .then(a.pid.cmp(&b.pid))
        });
        rows.truncate(MAX_TASK_ROWS);
        rows.sort_by_key(|t| t.pid);
    }
    for t in &rows {
        let pct = if r.sim_time_ns > 0 {
            t.sum_exec_runtime_ns as f64 * 100.0 / r.sim_time_ns as f64
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {:>7} {:<16} {:<12} {:>4} {:>11} {:>6.2} {:>10} {:>10} {:>8} {:>12} {:>9} {:>9}",
            t.pid,
            t.comm,
            t.policy.name(),
            t.nice,
            secs(t.sum_exec_runtime_ns),
            pct,
            t.nr_voluntary_switches,
            t.nr_involuntary_switches,
            t.nr_migrations,
            secs(t.run_delay_ns),
            secs(t.user_ns),
            secs(t.sys_ns)
        );
    }
    if r.tasks.len() > rows.len() {
        let _ = writeln!(
            s,
            "  ... {} more tasks (see --json)",
            r.tasks.len() - rows.len()
        );
    }
    let _ = writeln!(
        s,
        "\n  {:>4} {:>10} {:>6} {:>10} {:>13}",
        "CPU", "IDLE(s)", "IDLE%", "SWITCHES", "MIGRATIONS_IN"
    );
    for c in &r.cpus {
        let pct = if r.sim_time_ns > 0 {
            c.idle_ns as f64 * 100.0 / r.sim_time_ns as f64
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {:>4} {:>10} {:>6.2} {:>10} {:>13}",
            c.cpu,
            secs(c.idle_ns),
            pct,
            c.nr_switches,
            c.migrations_in
        );
    }
    let wakeups = r.ttwu_local + r.ttwu_remote + r.ttwu_delayed_requeue;
    let pct = |n: u64| {
        if wakeups > 0 {
            n as f64 * 100.0 / wakeups as f64
        } else {
            0.0
        }
    };
    let _ = writeln!(
        s,
        "\n  sched_switch {}  sched_migrate_task {}  wakeups {} (local {}, remote {}, delayed requeued in place {} = {:.1}%, of which on a busy CPU while an LLC sibling idled {})",
        r.nr_switches,
        r.nr_migrations,
        wakeups,
        r.ttwu_local,
        r.ttwu_remote,
        r.ttwu_delayed_requeue,
        pct(r.ttwu_delayed_requeue),
        r.ttwu_delayed_requeue_busy_while_idle
    );
    let ops: Vec<String> = r.fair_ops.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(s, "  fair: {}", ops.join(", "));
    if r.warnings > 0 {
        let _ = writeln!(
            s,
            "  WARNING: {} invariant warnings; first: {}",
            r.warnings,
            r.first_warning.as_deref().unwrap_or("")
        );
    }
    if let Some(p) = &r.trace_path {
        let _ = writeln!(s, "  trace written to {}", p.display());
    }
    s
}

/// The `--json` document.
pub fn json(r: &RunResult) -> Value {
    let tasks: Vec<Value> = r
        .tasks
        .iter()
        .map(|t| {
            json!({
                "pid": t.pid,
                "comm": t.comm,
                "policy": t.policy.name(),
                "nice": t.nice,
                "slice_ns": t.slice_ns,
                "sum_exec_runtime_ns": t.sum_exec_runtime_ns,
                "nr_switches": t.nr_switches,
                "nr_voluntary_switches": t.nr_voluntary_switches,
                "nr_involuntary_switches": t.nr_involuntary_switches,
                "nr_migrations": t.nr_migrations,
                "run_delay_ns": t.run_delay_ns,
                "user_ns": t.user_ns,
                "sys_ns": t.sys_ns,
                "last_cpu": t.last_cpu,
                "exited": t.exited,
            })
        })
        .collect();
    let cpus: Vec<Value> = r
        .cpus
        .iter()
        .map(|c| json!({"cpu": c.cpu, "idle_ns": c.idle_ns, "nr_switches": c.nr_switches, "migrations_in": c.migrations_in}))
        .collect();
    let workloads: Vec<Value> = r
        .workloads
        .iter()
        .map(|w| {
            let mut m = Map::new();
            for x in &w.metrics {
                m.insert(x.name.clone(), json!({"value": x.value, "unit": x.unit}));
            }
            json!({"line": w.line, "program": w.program, "output": w.output, "metrics": m})
        })
        .collect();
    let mut ops = Map::new();
    for (n, v) in &r.fair_ops {
        ops.insert(n.clone(), json!(v));
    }
    json!({
        "platform": r.platform,
        "kernel": r.kernel,
        "preempt": r.preempt,
        "hz": r.hz,
        "base_slice_ns": r.base_slice_ns,
        "ncpus": r.ncpus,
        "seed": r.seed,
        "sim_time_ns": r.sim_time_ns,
        "events": r.events,
        "tasks": tasks,
        "cpus": cpus,
        "workloads": workloads,
        "sched": {
            "sched_switch": r.nr_switches,
            "sched_migrate_task": r.nr_migrations,
            "ttwu_local": r.ttwu_local,
            "ttwu_remote": r.ttwu_remote,
            "ttwu_delayed_requeue": r.ttwu_delayed_requeue,
            "ttwu_delayed_requeue_busy_while_idle": r.ttwu_delayed_requeue_busy_while_idle,
            "ipis": r.ipis,
            "ticks": r.ticks,
            "fair_ops": ops,
            "invariant_warnings": r.warnings,
        },
    })
}
