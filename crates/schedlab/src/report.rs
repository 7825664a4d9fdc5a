//! Reports of a run: the text summary printed after the benchmarks' own output, and the JSON
//! document of `--json`. Reports read results; they never reach into scheduler state.

use crate::run::{ProcSched, RunResult};
use serde_json::{json, Map, Value};
use std::fmt::Write;

fn secs(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// Tasks listed by the text summary at most (all are in the JSON).
const MAX_TASK_ROWS: usize = 40;

/// Whether some task ran outside the root cgroup: only then do the task table and the JSON
/// tasks carry the group path (a run without cgroups prints what it always printed).
fn shows_cgroups(r: &RunResult) -> bool {
    r.tasks.iter().any(|t| t.cgroup != "/")
}

/// Why a workload's figures are partial: the run stopped at its length before the program
/// ended (one line, for the text output).
pub fn cut_note(r: &RunResult, w: &crate::run::WorkloadResult) -> String {
    use crate::run::RunLength;
    let why = match r.length {
        RunLength::Given => "--duration".to_string(),
        RunLength::Hint => "the other workloads' own length".to_string(),
        RunLength::Default => format!(
            "the default length, {} s, as some workload runs until stopped",
            secs(crate::run::DEFAULT_DURATION_NS)
        ),
        RunLength::UntilEnd => "the safety limit of a run without --duration".to_string(),
    };
    format!(
        "workload '{}' was cut: the run stopped at {} s ({why}) before the program ended; its \
         output is partial and its metrics are not reported",
        w.line,
        secs(r.sim_time_ns)
    )
}

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
    for w in &r.workloads {
        if let Some(line) = histogram_summary(w) {
            s.push_str(&line);
        }
    }
    let slices = match r.cfs_tunables {
        Some((lat, min, wake)) => {
            format!("CFS latency {lat} ns, min_granularity {min} ns, wakeup_granularity {wake} ns")
        }
        None => format!("base slice {} ns", r.base_slice_ns),
    };
    let _ = writeln!(
        s,
        "\nschedlab: platform {} ({} CPUs, HZ {}, preempt {}), kernel '{}', {slices}, seed {}",
        r.platform, r.ncpus, r.hz, r.preempt, r.kernel, r.seed
    );
    let _ = writeln!(
        s,
        "schedlab: simulated {} s, {} events",
        secs(r.sim_time_ns),
        r.events
    );
    for w in r.workloads.iter().filter(|w| w.cut) {
        let _ = writeln!(s, "schedlab: {}", cut_note(r, w));
    }
    let cg = shows_cgroups(r);
    let _ = writeln!(
        s,
        "\n  {:>7} {:<16} {:<14} {:>4} {:>11} {:>6} {:>10} {:>10} {:>8} {:>12} {:>9} {:>9}{}",
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
        "SYS(s)",
        if cg { "  CGROUP" } else { "" }
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
            "  {:>7} {:<16} {:<14} {:>4} {:>11} {:>6.2} {:>10} {:>10} {:>8} {:>12} {:>9} {:>9}{}",
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
            secs(t.sys_ns),
            if cg {
                format!("  {}", t.cgroup)
            } else {
                String::new()
            }
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
        "\n  {:>4} {:>10} {:>6} {:>10} {:>13} {:>14}",
        "CPU", "IDLE(s)", "IDLE%", "SWITCHES", "MIGRATIONS_IN", "MIGRATIONS_OUT"
    );
    for c in &r.cpus {
        let pct = if r.sim_time_ns > 0 {
            c.idle_ns as f64 * 100.0 / r.sim_time_ns as f64
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "  {:>4} {:>10} {:>6.2} {:>10} {:>13} {:>14}",
            c.cpu,
            secs(c.idle_ns),
            pct,
            c.nr_switches,
            c.migrations_in,
            c.migrations_out
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
    if r.sched_idle_placed.iter().sum::<u64>() > 0 {
        let (p, k) = (&r.sched_idle_placed, &r.sched_idle_stacked);
        let _ = writeln!(
            s,
            "  SCHED_IDLE placements (stacked on a SCHED_IDLE-only CPU): wake-ups {} ({}), forks {} ({}), execs {} ({}); run-queue wait of the stacked {:.3} ms",
            p[0],
            k[0],
            p[1],
            k[1],
            p[2],
            k[2],
            r.sched_idle_stacked_wait_ns as f64 / 1e6
        );
    }
    let ops: Vec<String> = r.fair_ops.iter().map(|(n, v)| format!("{n} {v}")).collect();
    let _ = writeln!(s, "  fair: {}", ops.join(", "));
    s.push_str(&path_lines(r));
    if r.net != Default::default() {
        let n = &r.net;
        let _ = writeln!(
            s,
            "  net: {} segments delivered ({} through a socket backlog), {} softirq wake-ups, {} epoll wake-ups, {} UDP drops, {} delayed ACKs expired, {} pure ACKs, {} connects ({} SYNs dropped), input queue max {}",
            n.segments_delivered,
            n.backlog_deliveries,
            n.softirq_wakeups,
            n.epoll_wakeups,
            n.udp_drops,
            n.delack_expiries,
            n.pure_acks,
            n.connects,
            n.syn_drops,
            n.max_input_queue
        );
    }
    if !r.cgroups.is_empty() {
        // each non-root group's cpu.stat at the end of the run, in the kernel's key order
        let _ = writeln!(s);
        for (path, st) in &r.cgroups {
            let _ = writeln!(s, "  cgroup {path} cpu.stat: {}", st.line());
        }
    }
    if r.warnings > 0 {
        let _ = writeln!(
            s,
            "  WARNING: {} invariant warnings; first: {}",
            r.warnings,
            r.first_warning.as_deref().unwrap_or("")
        );
    }
    if let Some((comm, long)) = &r.wakeups_comm {
        s.push_str(&crate::explain::text(comm, &r.wakeups, *long, 10));
    }
    if let Some(p) = &r.trace_path {
        let _ = writeln!(s, "  trace written to {}", p.display());
    }
    s
}

/// `ns` as µs with three decimals (exact: integer arithmetic).
fn us3(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The per-path lines of the text summary: CPU time charged by the scheduler's own paths,
/// summed over CPUs, with how often each ran (docs/model.md, SMP: per-path totals).
pub fn path_lines(r: &RunResult) -> String {
    let p = &r.paths;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  path idle_scan: {} us charged, {} scans, {} CPUs tested",
        us3(p.idle_scan_ns),
        p.idle_scans,
        p.idle_scan_cpus
    );
    let _ = writeln!(
        s,
        "  path newidle: {} us charged on {} pulls; {} balances, {} passes, {} us modelled cost",
        us3(p.newidle_charged_ns),
        p.newidle_charged,
        r.newidle_balances,
        p.newidle_passes,
        us3(p.newidle_cost_ns)
    );
    let _ = writeln!(
        s,
        "  path periodic_balance: {} us charged on {} passes",
        us3(p.periodic_lb_ns),
        p.periodic_lb_charged
    );
    let _ = writeln!(
        s,
        "  path ipi: {} us charged on {} sends; {} IPIs, {} avoided (polling idle)",
        us3(p.ipi_send_ns),
        p.ipi_sends,
        r.ipis,
        r.ipi_avoided
    );
    let _ = writeln!(
        s,
        "  path idle_exit: {} us of exit latency (not CPU time) in {} exits",
        us3(p.idle_exit_ns),
        p.idle_exits
    );
    s
}

/// The `paths` object of `--json`'s `sched` counters (the text summary's `path` lines).
fn paths_json(r: &RunResult) -> Value {
    let p = &r.paths;
    json!({
        "idle_scan": {
            "charged_ns": p.idle_scan_ns,
            "scans": p.idle_scans,
            "cpus_tested": p.idle_scan_cpus,
        },
        "newidle": {
            "charged_ns": p.newidle_charged_ns,
            "pulls_charged": p.newidle_charged,
            "balances": r.newidle_balances,
            "passes": p.newidle_passes,
            "modelled_cost_ns": p.newidle_cost_ns,
        },
        "periodic_balance": {
            "charged_ns": p.periodic_lb_ns,
            "passes_charged": p.periodic_lb_charged,
        },
        "ipi": {
            "charged_ns": p.ipi_send_ns,
            "sends": p.ipi_sends,
            "ipis": r.ipis,
            "avoided": r.ipi_avoided,
        },
        "idle_exit": {
            "latency_ns": p.idle_exit_ns,
            "exits": p.idle_exits,
        },
    })
}

/// The percentile summary of a latency histogram (cyclictest -h): the table seed 004's
/// reporter computed from cyclictest's histogram, which cyclictest does not print itself
/// (percentile p = the smallest bucket whose cumulative count reaches p % of the total).
fn histogram_summary(w: &crate::run::WorkloadResult) -> Option<String> {
    let get = |n: &str| w.metrics.iter().find(|m| m.name == n).map(|m| m.value);
    let (samples, p50) = (get("samples")?, get("lat_p50_us")?);
    Some(format!(
        "schedlab: {} latency summary (1-us buckets; Pn = the smallest bucket reaching n % of the samples): samples {}, average {} us, median {} us, P90 {} us, P99 {} us, P99.9 {} us, max {} us\n",
        w.program,
        samples,
        get("lat_avg_us")?,
        p50,
        get("lat_p90_us")?,
        get("lat_p99_us")?,
        get("lat_p999_us")?,
        get("lat_max_us")?
    ))
}

/// A task's `/proc/PID/sched` fields under the kernel's names, in the kernel's order
/// (kernel/sched/debug.c proc_sched_show_task(); schedstat fields as with schedstats on).
/// Times are integer ns where /proc prints ms with six decimals (`se.exec_start`,
/// `se.vruntime`, `se.sum_exec_runtime`); `se.avg.last_update_time` and `se.slice` are ns in
/// both.
fn proc_sched(p: &ProcSched) -> Value {
    json!({
        "se.exec_start": p.exec_start,
        "se.vruntime": p.vruntime,
        "se.sum_exec_runtime": p.sum_exec_runtime,
        "se.nr_migrations": p.nr_migrations,
        "nr_wakeups": p.nr_wakeups,
        "nr_wakeups_sync": p.nr_wakeups_sync,
        "nr_wakeups_migrate": p.nr_wakeups_migrate,
        "nr_switches": p.nr_switches,
        "nr_voluntary_switches": p.nr_voluntary_switches,
        "nr_involuntary_switches": p.nr_involuntary_switches,
        "se.load.weight": p.load_weight,
        "se.avg.load_sum": p.load_sum,
        "se.avg.runnable_sum": p.runnable_sum,
        "se.avg.util_sum": p.util_sum,
        "se.avg.load_avg": p.load_avg,
        "se.avg.runnable_avg": p.runnable_avg,
        "se.avg.util_avg": p.util_avg,
        "se.avg.last_update_time": p.last_update_time,
        "se.avg.util_est": p.util_est,
        "policy": p.policy,
        "prio": p.prio,
        "se.slice": p.slice,
    })
}

/// The `--json` document. Top level: run description, `sched_switch` and
/// `sched_migrate_task` (how many of those tracepoints the run emitted, whether or not a trace
/// was written), `tasks[]` (each with a `sched` object of /proc/PID/sched fields, see
/// [`proc_sched`]), `cpus[]` (idle time, switches, migrations in and out), `workloads[]` and
/// the `sched` counters.
/// The version of every `--json` document's shape (`"schema_version"` at its top level).
/// Raised when a field is removed or changes meaning; adding a field keeps it.
pub const SCHEMA_VERSION: u32 = 1;

pub fn json(r: &RunResult) -> Value {
    let cg = shows_cgroups(r);
    let tasks: Vec<Value> = r
        .tasks
        .iter()
        .map(|t| {
            let mut v = json!({
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
                "sched": proc_sched(&t.sched),
            });
            if cg {
                v["cgroup"] = json!(t.cgroup);
            }
            v
        })
        .collect();
    let cpus: Vec<Value> = r
        .cpus
        .iter()
        .map(|c| {
            json!({
                "cpu": c.cpu,
                "idle_ns": c.idle_ns,
                "nr_switches": c.nr_switches,
                "migrations_in": c.migrations_in,
                "migrations_out": c.migrations_out,
            })
        })
        .collect();
    let workloads: Vec<Value> = r
        .workloads
        .iter()
        .map(|w| {
            let mut m = Map::new();
            for x in &w.metrics {
                m.insert(x.name.clone(), json!({"value": x.value, "unit": x.unit}));
            }
            let mut v =
                json!({"line": w.line, "program": w.program, "output": w.output, "metrics": m});
            if w.cut {
                // present only when the run stopped the program before its end
                v["cut"] = json!(true);
            }
            v
        })
        .collect();
    let mut ops = Map::new();
    for (n, v) in &r.fair_ops {
        ops.insert(n.clone(), json!(v));
    }
    let mut doc = json!({
        "schema_version": SCHEMA_VERSION,
        "platform": r.platform,
        "kernel": r.kernel,
        "preempt": r.preempt,
        "hz": r.hz,
        "base_slice_ns": r.base_slice_ns,
        "ncpus": r.ncpus,
        "seed": r.seed,
        "sim_time_ns": r.sim_time_ns,
        "events": r.events,
        "sched_switch": r.nr_switches,
        "sched_migrate_task": r.nr_migrations,
        "tasks": tasks,
        "cpus": cpus,
        "workloads": workloads,
        "warnings": r.input_warnings,
        "sched": {
            "sched_switch": r.nr_switches,
            "sched_migrate_task": r.nr_migrations,
            "ttwu_local": r.ttwu_local,
            "ttwu_remote": r.ttwu_remote,
            "ttwu_delayed_requeue": r.ttwu_delayed_requeue,
            "ttwu_delayed_requeue_busy_while_idle": r.ttwu_delayed_requeue_busy_while_idle,
            "sched_idle_placements": {
                "wakeups": r.sched_idle_placed[0],
                "forks": r.sched_idle_placed[1],
                "execs": r.sched_idle_placed[2],
                "stacked_wakeups": r.sched_idle_stacked[0],
                "stacked_forks": r.sched_idle_stacked[1],
                "stacked_execs": r.sched_idle_stacked[2],
                "stacked_wait_ns": r.sched_idle_stacked_wait_ns,
            },
            "ipis": r.ipis,
            "ticks": r.ticks,
            "paths": paths_json(r),
            "fair_ops": ops,
            "invariant_warnings": r.warnings,
        },
    });
    if r.net != Default::default() {
        let n = &r.net;
        doc["sched"]["net"] = json!({
            "segments_delivered": n.segments_delivered,
            "backlog_deliveries": n.backlog_deliveries,
            "softirq_wakeups": n.softirq_wakeups,
            "epoll_wakeups": n.epoll_wakeups,
            "udp_drops": n.udp_drops,
            "delack_expiries": n.delack_expiries,
            "pure_acks": n.pure_acks,
            "connects": n.connects,
            "syn_drops": n.syn_drops,
            "max_input_queue": n.max_input_queue,
        });
    }
    if let Some((lat, min, wake)) = r.cfs_tunables {
        // present only for the CFS class (v6.5): its debugfs tunables after boot
        doc["cfs"] = json!({
            "latency_ns": lat,
            "min_granularity_ns": min,
            "wakeup_granularity_ns": wake,
        });
    }
    if let Some((comm, long)) = &r.wakeups_comm {
        doc["wakeups"] = crate::explain::json(comm, &r.wakeups, *long, 100);
    }
    if !r.cgroups.is_empty() {
        // `cgroups`: path -> cpu.stat under the kernel's key names (µs); only present when
        // the run has groups, so that a run without any keeps its document
        let mut cg = Map::new();
        for (path, st) in &r.cgroups {
            cg.insert(
                path.clone(),
                json!({
                    "usage_usec": st.usage_usec,
                    "user_usec": st.user_usec,
                    "system_usec": st.system_usec,
                    "nr_periods": st.nr_periods,
                    "nr_throttled": st.nr_throttled,
                    "throttled_usec": st.throttled_usec,
                    "nr_bursts": st.nr_bursts,
                    "burst_usec": st.burst_usec,
                }),
            );
        }
        doc["cgroups"] = Value::Object(cg);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run, RunSpec};

    /// A 20 ms run of one hog on smp:1 (examples/one-hog.json).
    fn one_hog() -> RunResult {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/one-hog.json");
        let mut spec = RunSpec::new("smp:1", "v6.18", &[&format!("rt-app {file}")]);
        spec.duration_ns = Some(20_000_000);
        run(&spec).unwrap()
    }

    /// The network counters appear (JSON `sched.net`, one summary line) only when a run used
    /// a socket, so every other run's output is unchanged.
    #[test]
    fn net_counters_show_only_when_sockets_were_used() {
        let mut r = one_hog();
        assert!(json(&r)["sched"].get("net").is_none());
        assert!(!text(&r).contains("  net: "));
        r.net.segments_delivered = 7;
        r.net.udp_drops = 2;
        let d = json(&r);
        assert_eq!(d["sched"]["net"]["segments_delivered"], 7);
        assert_eq!(d["sched"]["net"]["udp_drops"], 2);
        assert!(text(&r).contains("  net: 7 segments delivered (0 through a socket backlog)"));
    }

    #[test]
    fn json_keeps_the_flat_keys_and_adds_proc_sched_in_kernel_order() {
        let r = one_hog();
        let d = json(&r);
        assert_eq!(d["schema_version"], 1);
        for k in [
            "platform",
            "kernel",
            "sim_time_ns",
            "events",
            "sched_switch",
            "sched_migrate_task",
            "tasks",
            "cpus",
            "workloads",
            "sched",
        ] {
            assert!(d.get(k).is_some(), "top-level {k}");
        }
        let t = &d["tasks"][1];
        for k in [
            "pid",
            "comm",
            "policy",
            "nice",
            "slice_ns",
            "sum_exec_runtime_ns",
            "nr_switches",
            "nr_voluntary_switches",
            "nr_involuntary_switches",
            "nr_migrations",
            "run_delay_ns",
            "user_ns",
            "sys_ns",
            "last_cpu",
            "exited",
        ] {
            assert!(t.get(k).is_some(), "task {k}");
        }
        // kernel/sched/debug.c proc_sched_show_task() prints these in this order
        let keys: Vec<&str> = t["sched"]
            .as_object()
            .unwrap()
            .keys()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "se.exec_start",
                "se.vruntime",
                "se.sum_exec_runtime",
                "se.nr_migrations",
                "nr_wakeups",
                "nr_wakeups_sync",
                "nr_wakeups_migrate",
                "nr_switches",
                "nr_voluntary_switches",
                "nr_involuntary_switches",
                "se.load.weight",
                "se.avg.load_sum",
                "se.avg.runnable_sum",
                "se.avg.util_sum",
                "se.avg.load_avg",
                "se.avg.runnable_avg",
                "se.avg.util_avg",
                "se.avg.last_update_time",
                "se.avg.util_est",
                "policy",
                "prio",
                "se.slice",
            ]
        );
        let c = d["cpus"][0].as_object().unwrap();
        let ckeys: Vec<&str> = c.keys().map(|s| s.as_str()).collect();
        assert_eq!(
            ckeys,
            [
                "cpu",
                "idle_ns",
                "nr_switches",
                "migrations_in",
                "migrations_out"
            ]
        );
    }

    #[test]
    fn proc_sched_of_a_hog_after_20ms() {
        // The hog runs from ≈ 15 µs (after rt-app's clone) to 20 ms alone on CPU 0:
        // weight 1024 at full resolution, SCHED_OTHER (0), prio 120; se.sum_exec_runtime is
        // the flat sum_exec_runtime_ns.
        // PELT (smp.md §5.5, TV-19): rt-app's main thread started on the empty CPU with util
        // 512 (cap = 1024 / 2); the hog forked from it gets min(512·1024/1025, (1024 - 512)/2)
        // = 256. Running continuously it then follows 1024 - 768·y^n (y^32 = 1/2). Its last
        // update is the last tick, at 16 ms (n ≈ 15.2: 469) or 20 ms (n ≈ 19.1: 515).
        // The load signal starts at 1024 for a new task (§5.5) and stays there.
        let r = one_hog();
        let hog = r.tasks.iter().find(|t| t.comm == "hog-0").unwrap();
        let p = &hog.sched;
        assert_eq!(p.load_weight, 1 << 20);
        assert_eq!((p.policy, p.prio), (0, 120));
        assert_eq!(p.sum_exec_runtime, hog.sum_exec_runtime_ns);
        assert_eq!(p.nr_migrations, 0);
        assert!((465..=520).contains(&p.util_avg), "util_avg {}", p.util_avg);
        assert!(p.load_avg >= 1000, "load_avg {}", p.load_avg);
        assert_eq!(r.cpus[0].migrations_out, 0);
        assert_eq!(r.nr_switches, r.cpus[0].nr_switches);
    }

    /// A run without cgroups has no `cgroups` key and no cpu.stat line; with groups, one
    /// line per group under the kernel's cpu.stat key names and the same values in the JSON.
    #[test]
    fn cgroup_cpu_stat_is_shown_only_for_runs_with_groups() {
        let mut r = one_hog();
        assert!(r.cgroups.is_empty());
        assert!(json(&r).get("cgroups").is_none());
        assert!(!text(&r).contains("cpu.stat"));
        let st = schedlab_sched::cgroup::CgroupStat {
            usage_usec: 10,
            user_usec: 7,
            system_usec: 3,
            nr_periods: 20,
            nr_throttled: 19,
            throttled_usec: 950_000,
            nr_bursts: 1,
            burst_usec: 5,
        };
        r.cgroups.push(("/a/b".into(), st));
        assert!(text(&r).contains(
            "  cgroup /a/b cpu.stat: usage_usec 10 user_usec 7 system_usec 3 nr_periods 20 \
             nr_throttled 19 throttled_usec 950000 nr_bursts 1 burst_usec 5\n"
        ));
        let d = json(&r);
        assert_eq!(d["cgroups"]["/a/b"]["nr_throttled"], 19);
        assert_eq!(d["cgroups"]["/a/b"]["throttled_usec"], 950_000);
    }

    #[test]
    fn per_path_lines_and_json() {
        // One hog on smp:1: no wake-up scans, IPIs or balancing at all.
        let mut r = one_hog();
        assert_eq!(r.paths, schedlab_sched::stats::PathTotals::default());
        let t = text(&r);
        assert!(t.contains("  path idle_scan: 0.000 us charged, 0 scans, 0 CPUs tested\n"));
        // the format, on values set by hand (ns printed as µs with three decimals)
        r.paths = schedlab_sched::stats::PathTotals {
            idle_scans: 3,
            idle_scan_cpus: 25,
            idle_scan_ns: 2_500,
            newidle_passes: 9,
            newidle_cost_ns: 1_234_567,
            newidle_charged: 2,
            newidle_charged_ns: 40_001,
            periodic_lb_charged: 4,
            periodic_lb_ns: 999,
            ipi_sends: 7,
            ipi_send_ns: 2_100,
            idle_exits: 5,
            idle_exit_ns: 665_000,
        };
        r.newidle_balances = 6;
        r.ipis = 8;
        r.ipi_avoided = 1;
        assert_eq!(
            path_lines(&r),
            "  path idle_scan: 2.500 us charged, 3 scans, 25 CPUs tested\n\
             \x20 path newidle: 40.001 us charged on 2 pulls; 6 balances, 9 passes, 1234.567 us modelled cost\n\
             \x20 path periodic_balance: 0.999 us charged on 4 passes\n\
             \x20 path ipi: 2.100 us charged on 7 sends; 8 IPIs, 1 avoided (polling idle)\n\
             \x20 path idle_exit: 665.000 us of exit latency (not CPU time) in 5 exits\n"
        );
        assert!(text(&r).contains(&path_lines(&r)));
        let d = json(&r)["sched"]["paths"].clone();
        assert_eq!(d["idle_scan"]["charged_ns"], 2_500);
        assert_eq!(d["idle_scan"]["cpus_tested"], 25);
        assert_eq!(d["newidle"]["balances"], 6);
        assert_eq!(d["newidle"]["modelled_cost_ns"], 1_234_567);
        assert_eq!(d["ipi"]["sends"], 7);
        assert_eq!(d["ipi"]["avoided"], 1);
        assert_eq!(d["idle_exit"]["latency_ns"], 665_000);
        assert_eq!(d["periodic_balance"]["charged_ns"], 999);
    }
}
