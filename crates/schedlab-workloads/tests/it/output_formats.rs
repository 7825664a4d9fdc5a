//! Output formats of the benchmark models against hand-written templates
//! (`tests/golden/*.txt`, see `support/template.rs`): each model runs a tiny jitter-free
//! configuration and its printed output must follow the real program's printf formats line by
//! line (workloads.md §0.3, §2.4, §3.3, §4.3, §5.3). Beside the format, numbers that the
//! output states twice, or that the command line fixes, are cross-checked; the expected values
//! are derived by hand in the comments, never taken from a previous run.

use crate::support::template::{check, Captures};
use schedlab_platform::Platform;
use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};
use schedlab_workloads::hackbench::{self, Hackbench};
use schedlab_workloads::{parse_workload, Env, Workload};

const STRESS_NG: &str = include_str!("../golden/stress-ng.txt");
const HACKBENCH: &str = include_str!("../golden/hackbench.txt");
const SCHBENCH: &str = include_str!("../golden/schbench.txt");
const CYCLICTEST: &str = include_str!("../golden/cyclictest.txt");

/// `smp:2` (the plain 2-CPU machine with default costs), cost jitter off.
fn smp2() -> Kernel {
    let p = Platform::builtin("smp:2").unwrap();
    let cfg = KernelConfig::parse("v6.18 NO_SIM_JITTER").unwrap();
    let mut k = Kernel::new(cfg, MachineDesc::from_platform(&p), 1).unwrap();
    k.strict = true;
    k
}

/// One CPU, every cost zero, HZ 1000, full preemption: a fair sleeper's only latency is its
/// 50 µs timer slack (workloads.md §1.6; the tick is stopped on the idle CPU, so nothing
/// expires the range timer early).
fn ideal1() -> Kernel {
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let m = MachineDesc::ideal(1, 1000, PreemptModel::Full);
    let mut k = Kernel::new(cfg, m, 1).unwrap();
    k.strict = true;
    k
}

fn env(placement: schedlab_workloads::Placement) -> Env {
    Env {
        placement,
        tg: None,
        index: 0,
        duration_ns: None,
    }
}

/// Parses `line`, sets it up and runs it to its own end (or its duration hint).
fn run(k: &mut Kernel, line: &str) -> Box<dyn Workload> {
    let (placement, mut w) = parse_workload(line).unwrap_or_else(|e| panic!("{e}"));
    w.setup(k, &env(placement))
        .unwrap_or_else(|e| panic!("{e}"));
    let limit = w.duration_hint().unwrap_or(60_000_000_000);
    k.run_until(limit);
    assert_eq!(k.nr_live, 0, "{line}: did not finish");
    w
}

fn matches(template: &str, bindings: &[(&str, &str)], out: &str, what: &str) -> Captures {
    check(template, bindings, out).unwrap_or_else(|e| panic!("{what}: {e}\n--- output:\n{out}"))
}

/// The template has teeth: replacing `from` by `to` in a matching output must break the match.
fn rejects(template: &str, bindings: &[(&str, &str)], out: &str, from: &str, to: &str) {
    assert!(out.contains(from), "'{from}' not in the output");
    let mutated = out.replacen(from, to, 1);
    assert!(
        check(template, bindings, &mutated).is_err(),
        "the template accepts {from:?} -> {to:?}"
    );
}

/// `printed` is `exact` rounded to 2 decimals, where `exact` is known only within
/// `[lo, hi]` (its inputs were themselves printed rounded).
fn within_rounding(printed: f64, lo: f64, hi: f64) -> bool {
    printed >= lo - 0.005 - 1e-9 && printed <= hi + 0.005 + 1e-9
}

// ============================================================================ stress-ng

#[test]
fn stress_ng_metrics_brief_and_full() {
    for (line, full) in [
        ("stress-ng --pipe 2 --timeout 1s --metrics-brief", false),
        ("stress-ng --pipe 2 --timeout 1s --metrics", true),
    ] {
        let mut k = smp2();
        let w = run(&mut k, line);
        let out = w.output(&k);
        let b: &[(&str, &str)] = if full { &[("full", "1")] } else { &[] };
        let c = matches(STRESS_NG, b, &out, line);
        // 0.15.06's spelling, the tag padding, the column widths, the 2 decimals
        rejects(STRESS_NG, b, &out, "geometic", "geometric");
        rejects(STRESS_NG, b, &out, "info:  [", "info: [");
        rejects(
            STRESS_NG,
            b,
            &out,
            "stressor       bogo",
            "stressor      bogo",
        );
        rejects(STRESS_NG, b, &out, "pipe          ", "pipe         ");
        rejects(STRESS_NG, b, &out, "s\n", "0s\n");
        // one pid on every line: the top-level stress-ng process
        let pids = c.u64s("pid");
        assert_eq!(pids.len(), 8, "{line}");
        assert!(pids.iter().all(|&p| p == pids[0]), "{line}: {pids:?}");
        // the command line: 2 instances, a 1 s timeout
        assert_eq!(c.u64("timeout"), 1);
        assert_eq!(c.u64("instances"), 2);
        assert_eq!(c.u64("misc_instances"), 2);
        let n = c.u64("c_total") as f64;
        let r = c.f64("r_total");
        let (u, s) = (c.f64("u_time"), c.f64("s_time"));
        assert!(n > 0.0, "{line}");
        // Every instance runs at least its timeout: the loop stops at the first write at or
        // after start + 1 s, then sends the stop packet and reaps its reader (§2.2).
        assert!(r >= 1.0, "{line}: real time {r}");
        // The whole run covers every instance: completed in ≥ mean(finish − start).
        assert!(c.f64("run_secs") >= r - 0.01, "{line}");
        // §2.3: bogo ops/s (real time) = c_total / r_total, with r_total printed to 0.01 s:
        // the exact rate lies in [n / (r + 0.005), n / (r − 0.005)].
        let rate = c.f64("rate_real");
        assert!(
            within_rounding(rate, n / (r + 0.005), n / (r - 0.005)),
            "{line}: {rate} vs {n} / {r}"
        );
        // bogo ops/s (usr+sys time) = c_total / (u + s), u and s each within ±0.005.
        let t = u + s;
        let rate_cpu = c.f64("rate_cpu");
        assert!(
            within_rounding(rate_cpu, n / (t + 0.01), n / (t - 0.01)),
            "{line}: {rate_cpu} vs {n} / {t}"
        );
        // Two pairs on two CPUs for ≈ 1 s: at most 2 CPU-seconds per second of run (plus
        // rounding), so u + s ≤ 2 × r.
        assert!(t <= 2.0 * r + 0.02, "{line}: {t} CPU s in {r} s");
        // MB per sec pipe write rate: each instance bytes / loop time / 2^20 with 512-byte
        // writes; the geometric mean is at most the arithmetic mean of the two rates, and
        // each loop lasts at least 1 s less its set-up (≪ 10 ms), so the mean is at most
        // n × 512 / 2^20 / 2 / 0.99.
        let mb = c.f64("mb_per_sec");
        assert!(mb > 0.0 && mb <= n * 512.0 / 1_048_576.0 / 2.0 / 0.99 + 0.005);
        if full {
            // CPU used per instance (%) = 100 × (u + s) / r / instances (§2.3 of
            // stress_metrics_dump): bounds from the rounding of u, s and r.
            let cpu = c.f64("cpu_usage");
            let lo = 100.0 * (t - 0.01) / (r + 0.005) / 2.0;
            let hi = 100.0 * (t + 0.01) / (r - 0.005) / 2.0;
            assert!(within_rounding(cpu, lo, hi), "{line}: {cpu}");
            // RSS is not modelled (stress_ng/model.rs): 0 KiB
            assert_eq!(c.one("maxrss"), "0");
        }
    }
}

// ============================================================================ hackbench

#[test]
fn hackbench_rt_tests_and_perf_forms() {
    // groups 2, fds 3, loops 200: 2 × 2 × 3 = 12 workers, 2 × 3 × 3 × 200 = 3600 messages (§3.1).
    let cases: &[(&str, &[(&str, &str)])] = &[
        (
            "hackbench -p -g 2 -f 3 -l 200",
            &[("rt", "1"), ("mode", "process")],
        ),
        (
            "hackbench -T -g 2 -f 3 -l 200",
            &[("rt", "1"), ("mode", "threaded")],
        ),
        (
            "hackbench -T -p -P -g 2 -f 3 -l 200",
            &[("rt", "1"), ("mode", "process")],
        ),
        (
            "perf bench sched messaging -p -g 2 -f 3 -l 200",
            &[("what", "processes")],
        ),
        (
            "perf bench sched messaging --thread -g 2 -f 3 -l 200",
            &[("what", "threads")],
        ),
        (
            "perf bench sched messaging -t -p -g 2 -f 3 -l 200",
            &[("what", "threads")],
        ),
        (
            "perf bench --format simple sched messaging -g 2 -f 3 -l 200",
            &[("simple", "1")],
        ),
    ];
    for &(line, b) in cases {
        let words: Vec<String> = line.split_whitespace().map(String::from).collect();
        let opts = if words[0] == "perf" {
            hackbench::parse_perf_bench(&words[1..])
        } else {
            hackbench::parse(&words[1..])
        }
        .unwrap();
        let mut h = Hackbench::new(line, opts);
        let mut k = smp2();
        h.setup(&mut k, &env(Default::default())).unwrap();
        k.run_until(60_000_000_000);
        assert!(h.finished(), "{line}");
        let out = h.output(&k);
        let c = matches(HACKBENCH, b, &out, line);
        let rt = b.iter().any(|(k, _)| *k == "rt");
        let simple = b.iter().any(|(k, _)| *k == "simple");
        // %03lu milliseconds; perf's " %14s" label
        let ms = format!(".{:03}", c.u64("msec"));
        rejects(HACKBENCH, b, &out, &ms, &format!("{ms}0"));
        if !rt && !simple {
            rejects(HACKBENCH, b, &out, "     Total", "    Total");
        }
        if rt {
            assert_eq!(c.u64("groups"), 2, "{line}");
            assert_eq!(c.u64("fds2"), 6, "{line}"); // 2 × fds
            assert_eq!(c.u64("tasks"), 12, "{line}"); // groups × 2 × fds
            assert_eq!(c.u64("loops"), 200, "{line}");
            assert_eq!(c.u64("datasize"), 100, "{line}"); // default message size
        } else if !simple {
            assert_eq!(c.u64("fds"), 3, "{line}");
            assert_eq!(c.u64("groups"), 2, "{line}");
            assert_eq!(c.u64("tasks"), 12, "{line}");
        }
        // every message was read: groups × fds × fds × loops
        assert_eq!(h.messages_received(), 3600, "{line}");
        assert_eq!(h.messages_sent(), 3600, "{line}");
        // The printed time is the measured interval in µs, truncated to ms (§3.3); the
        // time_s metric is the same interval in µs.
        let time_s = h
            .metrics(&k)
            .into_iter()
            .find(|m| m.name == "time_s")
            .unwrap()
            .value;
        let us = (time_s * 1e6).round() as u64;
        assert_eq!(
            (c.u64("sec"), c.u64("msec")),
            (us / 1_000_000, us % 1_000_000 / 1000),
            "{line}"
        );
    }
}

// ============================================================================ schbench

/// Checks one latency/RPS block's percentile lines: the printed percentiles, values that do
/// not decrease, and the "(count samples)". schbench's `calc_percentiles()` walks all five
/// percentiles 20, 50, 90, 99, 99.9 and turns the cumulative counts into differences from the
/// previous one in that list, printed or not: the 20th keeps its cumulative count. So when the
/// 20th is printed (RPS, pipe mode) the counts add up to the cumulative count at the last
/// percentile, between (last percentile × N) and N; when it is not (latency blocks) they add
/// up to cum(99.9) − cum(20) ≤ N − 0.2 × N.
///
/// Note: workloads.md §4.3 says "minus the cumulative count at the previous *printed*
/// percentile"; the source subtracts the previous one in the list (the model does too).
fn percentile_block(c: &Captures, prefix: &str, pcts: &[f64], blocks: usize) {
    let p = c.f64s(&format!("{prefix}_pct"));
    let v = c.u64s(&format!("{prefix}_p"));
    let cnt = c.u64s(&format!("{prefix}_c"));
    let n = c.u64s(&format!("{prefix}_n"));
    assert_eq!(n.len(), blocks, "{prefix}");
    let k = pcts.len();
    assert_eq!(p.len(), k * blocks, "{prefix}");
    for b in 0..blocks {
        assert_eq!(&p[b * k..(b + 1) * k], pcts, "{prefix}");
        let vals = &v[b * k..(b + 1) * k];
        assert!(vals.windows(2).all(|w| w[0] <= w[1]), "{prefix}: {vals:?}");
        let sum: u64 = cnt[b * k..(b + 1) * k].iter().sum();
        let n = n[b] as f64;
        if pcts[0] == 20.0 {
            let last = pcts[k - 1];
            assert!(
                sum as f64 >= last / 100.0 * n && sum as f64 <= n,
                "{prefix}: {sum} of {n}"
            );
        } else {
            assert!(sum as f64 <= 0.8 * n, "{prefix}: {sum} of {n}");
        }
    }
}

#[test]
fn schbench_interval_and_final_reports() {
    const LAT: [f64; 4] = [50.0, 90.0, 99.0, 99.9];
    const RPS: [f64; 3] = [20.0, 50.0, 90.0];
    // -r 2 -i 1: the main thread takes an RPS sample at the start (t = 0, Δt = 0 → 0) and
    // after each ~1 s sleep; a report is due when ≥ 1 s passed since the last one, so at the
    // rounds near 1 s and 2 s, the second also ending the run: 2 interval reports, showing
    // runtime 1 and 2 and holding 2 and 3 RPS samples; the final report holds the 3 samples
    // and shows runtime -r = 2.
    let line = "schbench -m 1 -t 2 -r 2 -i 1 -n 1";
    let mut k = smp2();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let c = matches(SCHBENCH, &[("intervals", "2")], &out, line);
    rejects(
        SCHBENCH,
        &[("intervals", "2")],
        &out,
        "\t* 99.0th",
        "\t*99.0th",
    );
    rejects(SCHBENCH, &[("intervals", "2")], &out, "th: ", "th:  ");
    rejects(SCHBENCH, &[("intervals", "1")], &out, "", "");
    assert_eq!(c.u64s("i_runtime"), vec![1, 1, 1, 2, 2, 2]);
    assert_eq!(c.u64s("i_rps_n"), vec![2, 3]);
    assert_eq!(c.u64s("f_runtime"), vec![2, 2, 2]);
    assert_eq!(c.u64("f_rps_n"), 3);
    percentile_block(&c, "i_wakeup", &LAT, 2);
    percentile_block(&c, "i_request", &LAT, 2);
    percentile_block(&c, "i_rps", &RPS, 2);
    percentile_block(&c, "f_wakeup", &LAT, 1);
    percentile_block(&c, "f_request", &LAT, 1);
    percentile_block(&c, "f_rps", &RPS, 1);
    // Each request records one request latency and one loop (no -z, no warmup below 30 s),
    // so average rps = requests / runtime = N(request) / 2, printed with 2 decimals.
    let requests = c.u64("f_request_n");
    assert!(requests > 0);
    assert_eq!(
        format!("{:.2}", requests as f64 / 2.0),
        c.one("average_rps"),
        "{out}"
    );
    // Statistics only grow between reports without -z: the final counts are the largest.
    let i_req = c.u64s("i_request_n");
    assert!(i_req[0] <= i_req[1] && i_req[1] <= requests);
    // The final sched delay is read after the threads were joined: 0 and 0 (§4.3, model).
    assert_eq!((c.u64("f_delay_msg"), c.u64("f_delay_worker")), (0, 0));

    // Without -t schbench picks ⌈CPUs / m⌉ = ⌈2 / 1⌉ = 2 workers and says so; with -i 5
    // longer than -r 1 no interval report is due.
    let line = "schbench -r 1 -i 5 -n 1 -L";
    let mut k = smp2();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let c = matches(
        SCHBENCH,
        &[("set_workers", "1"), ("intervals", "0")],
        &out,
        line,
    );
    assert_eq!(c.u64("workers"), 2);
    assert_eq!(c.u64s("f_runtime"), vec![1, 1, 1]);
    // rounds at t = 0 and ≈ 1 s (the last one ends the run): 2 RPS samples
    assert_eq!(c.u64("f_rps_n"), 2);
    assert_eq!(
        format!("{:.2}", c.u64("f_request_n") as f64 / 1.0),
        c.one("average_rps")
    );

    // -M pins message thread i to the (i mod |list|)-th CPU of the list: -m 2 -M 1 gives
    // CPU 1 for both.
    let line = "schbench -m 2 -t 1 -M 1 -r 1 -i 5 -n 1";
    let mut k = smp2();
    let w = run(&mut k, line);
    let c = matches(
        SCHBENCH,
        &[("pinned", "1"), ("m", "2"), ("intervals", "0")],
        &w.output(&k),
        line,
    );
    assert_eq!(c.u64s("pin_cpu"), vec![1, 1]);
}

#[test]
fn schbench_pipe_mode_report() {
    // -p 4096: only the wakeup block (with a 20th percentile) and the transfer rate; the
    // rate is loops × 4096 B × 10⁶ / Σ worker µs, the ops rate loops × 10⁶ / Σ worker µs, so
    // bytes/s = 4096 × ops/s up to the 2-decimal rounding of the scaled size (≤ 0.5 % for a
    // size ≥ 1.00) and the integer division.
    let line = "schbench -p 4096 -t 2 -r 1";
    let mut k = smp2();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let c = matches(SCHBENCH, &[("pipe", "1"), ("intervals", "0")], &out, line);
    assert_eq!(c.u64("f_runtime"), 1);
    percentile_block(&c, "f_wakeup", &[20.0, 50.0, 90.0, 99.0, 99.9], 1);
    let ops = c.f64("transfer_ops");
    let size = c.f64("transfer_size");
    let scale = match c.one("transfer_unit") {
        "B" => 1.0,
        "KB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        u => panic!("unit {u}"),
    };
    assert!(ops > 0.0 && (1.0..1024.0).contains(&size), "{out}");
    let rel = (size * scale - ops * 4096.0).abs() / (ops * 4096.0);
    assert!(rel < 0.01, "{out}");
}

// ============================================================================ cyclictest

#[test]
fn cyclictest_quiet_histogram() {
    // Idle zero-cost CPU: every latency is the 50 µs slack (see `ideal1`). -l 100: 100
    // samples. With -h 60 all land in bucket 50; no T: line with -q -h
    // (cyclictest.c: `if (quiet && !histogram) print_stat(...)`).
    let line = "cyclictest -t 1 -i 1000 -l 100 -h 60 -q";
    let mut k = ideal1();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let b = [
        ("dma", "1"),
        ("histogram", "1"),
        ("buckets", "60"),
        ("threads", "1"),
    ];
    let c = matches(CYCLICTEST, &b, &out, line);
    rejects(CYCLICTEST, &b, &out, "000050 000100", "00050 000100");
    rejects(CYCLICTEST, &b, &out, "000050 000100", "000050\t000100");
    rejects(
        CYCLICTEST,
        &b,
        &out,
        "# Total: 000000100",
        "# Total: 00000100",
    );
    assert_eq!(c.u64("dma_us"), 0); // --latency default 0 (§5.1)
    let counts = c.u64s("count");
    assert_eq!(counts.len(), 60);
    assert_eq!(counts[50], 100);
    assert_eq!(counts.iter().sum::<u64>(), 100);
    // # Total: is Σ buckets (overflows excluded, §5.3)
    assert_eq!(c.u64("total"), counts.iter().sum::<u64>());
    assert_eq!(
        (c.u64("h_min"), c.u64("h_avg"), c.u64("h_max")),
        (50, 50, 50)
    );
    assert_eq!(c.u64("overflows"), 0);
    assert!(c.all("overflow_cycles").is_empty());

    // -h 50: 50 µs ≥ 50 buckets, so all 100 samples overflow: total 0, the first 50 cycle
    // numbers (0..=49) are kept and the other 50 counted (§5.1: one kept per bucket).
    let line = "cyclictest -t 1 -i 1000 -l 100 -h 50 -q";
    let mut k = ideal1();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let b = [
        ("dma", "1"),
        ("histogram", "1"),
        ("buckets", "50"),
        ("threads", "1"),
        ("others", "1"),
    ];
    let c = matches(CYCLICTEST, &b, &out, line);
    assert!(c.u64s("count").iter().all(|&n| n == 0));
    assert_eq!(c.u64("total"), 0);
    assert_eq!(c.u64("overflows"), 100);
    assert_eq!(c.u64s("overflow_cycles"), (0..50).collect::<Vec<u64>>());
    assert_eq!(c.u64("others"), 50);
    // Σ buckets + overflows = samples
    let samples = w
        .metrics(&k)
        .into_iter()
        .find(|m| m.name == "samples")
        .unwrap()
        .value;
    assert_eq!(c.u64("total") + c.u64("overflows"), samples as u64);
}

#[test]
fn cyclictest_summary_lines() {
    // -q without -h: one T: line per thread at exit. -t 2 without -h: thread i sleeps
    // interval + i × distance = 1000, 1500 µs (§5.1 default distance 500); SCHED_OTHER with
    // priority 0; -l 10 samples of 50 µs each. --laptop leaves cpu_dma_latency alone.
    let line = "cyclictest -t 2 -i 1000 -l 10 -q --laptop";
    let mut k = ideal1();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let c = matches(
        CYCLICTEST,
        &[("summary", "1"), ("threads", "2")],
        &out,
        line,
    );
    assert_eq!(c.u64s("interval"), vec![1000, 1500]);
    assert_eq!(c.u64s("prio"), vec![0, 0]);
    assert_eq!(c.u64s("cycles"), vec![10, 10]);
    for f in ["min", "act", "avg", "max"] {
        assert_eq!(c.u64s(f), vec![50, 50], "{f}");
    }
    // the tids are the two measurement threads' pids, distinct from each other
    let tids = c.u64s("tid");
    assert!(tids[0] > 0 && tids[1] > 0 && tids[0] != tids[1]);

    // Without -q: the final screen (T: lines) and then the histogram block.
    let line = "cyclictest -t 1 -i 1000 -l 10 -h 60";
    let mut k = ideal1();
    let w = run(&mut k, line);
    let out = w.output(&k);
    let b = [
        ("dma", "1"),
        ("summary", "1"),
        ("histogram", "1"),
        ("buckets", "60"),
        ("threads", "1"),
    ];
    let c = matches(CYCLICTEST, &b, &out, line);
    // the T: line and the histogram state the same run: C = # Total + overflows, same
    // min / avg / max
    assert_eq!(c.u64("cycles"), c.u64("total") + c.u64("overflows"));
    assert_eq!(c.u64("total"), 10);
    assert_eq!(
        (c.u64("min"), c.u64("avg"), c.u64("max")),
        (c.u64("h_min"), c.u64("h_avg"), c.u64("h_max"))
    );
}
