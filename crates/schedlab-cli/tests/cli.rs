//! The `schedlab` binary end to end: the foundation issue's acceptance checks, determinism,
//! trace format, and bad input (one line, exit code 2, nothing left behind, never a panic).
//! Expected values come from the weights and periods of the workloads, written beside each
//! assertion.

mod common;
use common::{bin, run, tmp};
use serde_json::Value;
use std::path::PathBuf;

fn json_run(kernel: &str, workload: &str, duration: &str) -> Value {
    let o = run(&[
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        kernel,
        "--workload",
        workload,
        "--duration",
        duration,
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn task<'a>(d: &'a Value, comm: &str) -> &'a Value {
    d["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["comm"] == comm)
        .unwrap_or_else(|| panic!("no task {comm}"))
}

fn share(d: &Value, comm: &str) -> f64 {
    task(d, comm)["sum_exec_runtime_ns"].as_f64().unwrap() / d["sim_time_ns"].as_f64().unwrap()
}

#[test]
fn two_nice0_hogs_share_one_cpu_equally() {
    // Equal weights: 50 % each, within ±0.5 % (issue acceptance), over 10 simulated seconds.
    for k in ["v6.6", "v6.12", "v6.18", "v7.0", "v7.1"] {
        let d = json_run(k, "rt-app examples/two-hogs.json", "10s");
        for h in ["hog0-0", "hog1-1"] {
            let s = share(&d, h);
            assert!((s - 0.5).abs() <= 0.005, "{k} {h}: {s}");
        }
    }
}

#[test]
fn nice0_vs_nice5_share_by_weight() {
    // Weights 1024 and 335 (fair.md §1.2): the runtime ratio is 1024/335 = 3.0567 within 1 %.
    for k in ["v6.6", "v6.18", "v7.1"] {
        let d = json_run(k, "rt-app examples/nice-0-vs-5.json", "10s");
        let r = share(&d, "nice0-0") / share(&d, "nice5-1");
        assert!((r / (1024.0 / 335.0) - 1.0).abs() < 0.01, "{k}: ratio {r}");
    }
}

#[test]
fn periodic_task_beside_a_hog_gets_all_of_its_ten_percent() {
    // 1 ms of work every 10 ms is 10 % of the CPU; beside a hog it still gets all of it (a
    // sleeper keeps its lag): over 10 s at least 999 of its 1000 periods complete. Its
    // sum_exec_runtime also holds, per period, at most its switch-in (c_ctxsw_process 1.3 µs
    // on smp), its timer syscall (c_syscall 0.15) and the timer interrupt's wakeup that
    // preempts the hog (c_hrtimer_irq 1.2 + c_ttwu 0.35: the wakeup asks
    // rq_clock_skip_update(), so that time is charged to the task switched to) — 3.0 µs, so
    // the share is at most (1000 + 3.0) / 10 000 = 0.1003.
    for k in ["v6.6", "v6.12", "v6.18", "v7.1"] {
        let d = json_run(k, "rt-app examples/periodic-vs-hog.json", "10s");
        let s = share(&d, "periodic-0");
        assert!((0.0999..=0.1003).contains(&s), "{k}: {s}");
    }
}

#[test]
fn short_slice_waker_preempts_only_with_preempt_short() {
    // A 1 ms-slice waker (200 µs every 4 ms) and a 20 ms-slice hog. With placement at zero lag
    // (NO_PLACE_LAG) the hog is eligible and slice-protected when the waker arrives, so only
    // PREEMPT_SHORT lets the waker in: its earlier deadline (1 ms request) wins the probe that
    // ignores protection. Without it the waker waits for the hog's protection to end.
    // Expected: with PREEMPT_SHORT the hog is preempted on (almost) every one of the ~500
    // wakeups in 2 s and the mean wake-up latency stays well under 1 ms (slack is 50 µs); without
    // it the latency is milliseconds and the hog is rarely preempted.
    let get = |k: &str| {
        let d = json_run(k, "rt-app examples/short-slice-waker.json", "2s");
        let m = &d["workloads"][0]["metrics"];
        (
            m["waker-1.wu_lat_mean_us"]["value"].as_f64().unwrap(),
            task(&d, "hog-0")["nr_involuntary_switches"]
                .as_u64()
                .unwrap(),
            m["waker-1.activations"]["value"].as_f64().unwrap(),
        )
    };
    for v in ["v6.12", "v6.18", "v7.0"] {
        let (lat_on, pre_on, act) = get(&format!("{v} NO_PLACE_LAG"));
        let (lat_off, pre_off, _) = get(&format!("{v} NO_PLACE_LAG NO_PREEMPT_SHORT"));
        assert!(lat_on < 500.0, "{v}: PREEMPT_SHORT latency {lat_on}");
        assert!(
            pre_on as f64 >= 0.9 * act,
            "{v}: {pre_on} preemptions for {act} wakeups"
        );
        assert!(lat_off > 1500.0, "{v}: NO_PREEMPT_SHORT latency {lat_off}");
        assert!(
            (pre_off as f64) < 0.6 * act,
            "{v}: {pre_off} preemptions without PREEMPT_SHORT"
        );
    }
}

#[test]
fn same_inputs_same_bytes() {
    for (k, w) in [
        ("v6.18", "rt-app examples/short-slice-waker.json"),
        ("v6.6", "rt-app examples/nice-0-vs-5.json"),
        ("v7.1", "rt-app examples/periodic-vs-hog.json"),
    ] {
        let mut outs = Vec::new();
        for i in 0..2 {
            let t = tmp(&format!("det-{i}.trace"));
            let o = run(&[
                "run",
                "--platform",
                "smp:2",
                "--kernel",
                k,
                "--workload",
                w,
                "--duration",
                "300ms",
                "--json",
                "--trace",
                t.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let trace = std::fs::read(&t).unwrap();
            std::fs::remove_file(&t).unwrap();
            let json = String::from_utf8(o.stdout)
                .unwrap()
                .replace(t.to_str().unwrap(), "TRACE");
            outs.push((json, trace));
        }
        assert_eq!(outs[0].0, outs[1].0, "{k} {w}: JSON differs");
        assert!(outs[0].1 == outs[1].1, "{k} {w}: trace differs");
        assert!(!outs[0].1.is_empty());
    }
}

#[test]
fn trace_is_in_the_kernel_text_format() {
    let t = tmp("fmt.trace");
    let o = run(&[
        "run",
        "--platform",
        "smp:2",
        "--kernel",
        "v6.18",
        "--workload",
        "rt-app examples/periodic-vs-hog.json",
        "--duration",
        "200ms",
        "--trace",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&t).unwrap();
    std::fs::remove_file(&t).unwrap();
    assert!(text.starts_with("# tracer: nop\n"));
    let recs = schedlab_trace::parse_trace(&text)
        .expect("every line parses with the same parser as the host capture");
    let count = |n: &str| recs.iter().filter(|r| r.event.name() == n).count();
    assert!(count("sched_switch") > 10);
    assert!(count("sched_waking") > 10 && count("sched_wakeup") > 10);
    assert!(count("sched_wakeup_new") >= 2 && count("sched_process_fork") >= 2);
    // the header states the number of entries, as the kernel's does
    let entries = format!(
        "# entries-in-buffer/entries-written: {}/{}",
        recs.len(),
        recs.len()
    );
    assert!(
        text.contains(&entries),
        "header must count {} entries",
        recs.len()
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_leaves_no_trace() {
    let t = tmp("bad.trace");
    let bad_json = tmp("bad.json");
    std::fs::write(
        &bad_json,
        "{\n  \"tasks\": {\n    \"a\": { \"run\": 10, }\n  }\n}\n",
    )
    .unwrap();
    let fifo_json = tmp("fifo.json");
    std::fs::write(
        &fifo_json,
        "{ \"tasks\": { \"a\": { \"policy\": \"SCHED_FIFO\", \"priority\": 10, \"run\": 100 } } }",
    )
    .unwrap();
    let ts = t.to_str().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--kernel".into(), "v6.18 NO_FROBNICATE".into()],
            "NO_FROBNICATE",
        ),
        (
            vec!["--kernel".into(), "v6.6 NO_DELAY_DEQUEUE".into()],
            "DELAY_DEQUEUE does not exist",
        ),
        (
            vec!["--kernel".into(), "v6.18+0123456789ab".into()],
            "0123456789ab",
        ),
        (
            vec!["--kernel".into(), "6.18".into()],
            "unknown preset '6.18'",
        ),
        (
            vec!["--kernel".into(), "v6.18 base_slice_ns=abc".into()],
            "base_slice_ns=abc",
        ),
        (
            vec![
                "--workload".into(),
                format!("rt-app {}", bad_json.display()),
            ],
            ":3:",
        ),
        (
            vec![
                "--workload".into(),
                format!("rt-app {}", fifo_json.display()),
            ],
            "SCHED_FIFO",
        ),
        (
            vec!["--workload".into(), "rt-app /nonexistent/x.json".into()],
            "/nonexistent/x.json",
        ),
        (
            vec!["--workload".into(), "frobnicate -x".into()],
            "unknown program 'frobnicate'",
        ),
        (vec!["--duration".into(), "ten".into()], "--duration"),
        (
            vec!["--platform".into(), "no-such-machine".into()],
            "no-such-machine",
        ),
    ];
    for (extra, needle) in cases {
        let mut args: Vec<String> = vec!["run".into(), "--trace".into(), ts.into()];
        let has = |f: &str| extra.iter().any(|a| a == f);
        if !has("--kernel") {
            args.extend(["--kernel".into(), "v6.18".into()]);
        }
        if !has("--workload") {
            args.extend(["--workload".into(), "rt-app examples/two-hogs.json".into()]);
        }
        if !has("--platform") {
            args.extend(["--platform".into(), "smp:1".into()]);
        }
        if !has("--duration") {
            args.extend(["--duration".into(), "10ms".into()]);
        }
        args.extend(extra.clone());
        let o = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{extra:?}: not one line: {err}"
        );
        assert!(err.contains(needle), "{extra:?}: '{needle}' not in: {err}");
        assert!(!t.exists(), "{extra:?}: a trace file was left behind");
        let dir = t.parent().unwrap();
        let leftovers: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name().to_string_lossy().starts_with(&format!(
                    "schedlab-cli-test-{}-bad.trace",
                    std::process::id()
                ))
            })
            .collect();
        assert!(
            leftovers.is_empty(),
            "{extra:?}: temporary files left: {leftovers:?}"
        );
    }
    let _ = std::fs::remove_file(&bad_json);
    let _ = std::fs::remove_file(&fifo_json);
}

#[test]
fn lists_and_help_work() {
    for what in [
        "kernels",
        "patches",
        "features",
        "sysctls",
        "platforms",
        "workloads",
        "scenarios",
    ] {
        let o = run(&["list", what]);
        assert!(o.status.success(), "list {what}");
        assert!(!o.stdout.is_empty());
    }
    let o = run(&["list", "features"]);
    let s = String::from_utf8(o.stdout).unwrap();
    // fair.md §11.1: DELAY_DEQUEUE absent in v6.6, on from v6.12
    let row = s.lines().find(|l| l.starts_with("DELAY_DEQUEUE ")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        vec!["DELAY_DEQUEUE", "yes", "-", "T", "T", "T", "T", "T"]
    );
    assert!(run(&["show", "platform", "rpi5"]).status.success());
    assert!(run(&["help", "run"]).status.success());
    assert_eq!(run(&["list", "nothing"]).status.code(), Some(2));
}

#[test]
fn run_ahead_shortcut_changes_nothing() {
    // SIM_RUN_AHEAD skips the event queue for a segment that ends before every other event;
    // the trace and the JSON must be the same bytes without it (apart from the kernel string).
    let out = |extra: &str, trace: &PathBuf| {
        let kernel = format!("v6.12{extra}");
        let o = run(&[
            "run",
            "--platform",
            "rpi5",
            "--kernel",
            &kernel,
            "--workload",
            "stress-ng --pipe 2 --timeout 1s",
            "--workload",
            "rt-app examples/periodic-vs-hog.json",
            "--duration",
            "50ms",
            "--json",
            "--trace",
            trace.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let json = String::from_utf8(o.stdout).unwrap().replace(&kernel, "K");
        (json, std::fs::read(trace).unwrap())
    };
    let (ta, tb) = (tmp("ra-on.txt"), tmp("ra-off.txt"));
    let (ja, tra) = out("", &ta);
    let (jb, trb) = out(" NO_SIM_RUN_AHEAD", &tb);
    assert_eq!(ja, jb);
    assert!(tra == trb, "traces differ");
    let _ = (std::fs::remove_file(ta), std::fs::remove_file(tb));
}
