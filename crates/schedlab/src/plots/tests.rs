use super::*;

const SW: &str = "prev_prio=120";

fn switch(cpu: u32, ts: &str, prev: (&str, i32), state: &str, next: (&str, i32)) -> String {
    let comm = if prev.1 == 0 { "<idle>" } else { prev.0 };
    format!(
        "{comm}-{} [{cpu:03}] d..2. {ts}: sched_switch: prev_comm={} prev_pid={} {SW} prev_state={state} ==> next_comm={} next_pid={} next_prio=120",
        prev.1, prev.0, prev.1, next.0, next.1
    )
}

fn wake(ev: &str, cpu: u32, ts: &str, by: (&str, i32), who: (&str, i32), target: u32) -> String {
    let comm = if by.1 == 0 { "<idle>" } else { by.0 };
    format!(
        "{comm}-{} [{cpu:03}] d..2. {ts}: {ev}: comm={} pid={} prio=120 target_cpu={target:03}",
        by.1, who.0, who.1
    )
}

/// Two CPUs; a, b, c woken and run; a woken again at the end and never run.
fn trace() -> Vec<TraceRecord> {
    let idle0 = ("swapper/0", 0);
    let idle1 = ("swapper/1", 0);
    let (a, b, c) = (("a", 10), ("b", 11), ("c", 12));
    let lines = [
        wake("sched_wakeup", 0, "1.000000", idle0, a, 0),
        switch(0, "1.000050", idle0, "R", a),
        wake("sched_wakeup", 0, "1.000300", a, b, 1),
        switch(1, "1.000420", idle1, "R", b),
        switch(0, "1.001000", a, "S", idle0),
        wake("sched_wakeup_new", 1, "1.002000", b, c, 0),
        switch(0, "1.002500", idle0, "R", c),
        wake("sched_wakeup", 1, "1.003000", b, a, 0),
    ];
    schedlab_trace::parse_trace(&lines.join("\n")).unwrap()
}

#[test]
fn wakeup_to_switch_latency() {
    let l = wakeup_latencies(&trace());
    // a: woken 1.000000, switched in 1.000050 -> 50 us; b: 1.000300 -> 1.000420 = 120 us;
    // c (wakeup_new): 1.002000 -> 1.002500 = 500 us; a's last wakeup never runs: left out.
    let got: Vec<(&str, i32, u64)> = l
        .iter()
        .map(|w| (w.comm.as_str(), w.pid, w.latency_ns))
        .collect();
    assert_eq!(
        got,
        vec![("a", 10, 50_000), ("b", 11, 120_000), ("c", 12, 500_000)]
    );
    assert_eq!(l[1].wakeup_ns, 1_000_300_000);
}

#[test]
fn per_cpu_run_intervals() {
    let (n, iv) = run_intervals(&trace());
    assert_eq!(n, 2);
    // CPU 0: a from its switch-in 1.000050 to its switch-out 1.001000; c from 1.002500 to the
    // last record 1.003000. CPU 1: b from 1.000420 to the end. Idle is not drawn.
    let got: Vec<(u32, u64, u64, &str)> = iv
        .iter()
        .map(|i| (i.cpu, i.start_ns, i.end_ns, i.comm.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 1_000_050_000, 1_001_000_000, "a"),
            (0, 1_002_500_000, 1_003_000_000, "c"),
            (1, 1_000_420_000, 1_003_000_000, "b"),
        ]
    );
    // a window clips: [1.0009, 1.0026] keeps the end of a (100 us), the start of c (100 us)
    // and b's middle
    let s = timeline_spans(&iv, 1_000_900_000, 1_002_600_000);
    assert_eq!(s.len(), 3);
    assert_eq!(
        (s[0].start_ns, s[0].end_ns, s[0].task.as_str()),
        (1_000_900_000, 1_001_000_000, "a:10")
    );
    assert_eq!((s[1].start_ns, s[1].end_ns), (1_002_500_000, 1_002_600_000));
    // the task running before the first switch of its CPU runs from the first record
    let first = schedlab_trace::parse_trace(
        &[
            wake("sched_wakeup", 1, "2.000000", ("x", 5), ("y", 6), 1),
            switch(0, "2.000100", ("z", 7), "S", ("swapper/0", 0)),
        ]
        .join("\n"),
    )
    .unwrap();
    let (n, iv) = run_intervals(&first);
    assert_eq!(n, 2);
    assert_eq!(
        (iv[0].start_ns, iv[0].end_ns, iv[0].pid),
        (2_000_000_000, 2_000_100_000, 7)
    );
    assert_eq!(run_intervals::<String>(&[]), (0, vec![]));
}

#[test]
fn cyclictest_histogram_from_model_and_real_output() {
    // the model's golden output (cyclictest/output.rs quiet_histogram_golden)
    let text = "\
# /dev/cpu_dma_latency set to 0us
# Histogram
000000 000000
000001 000000
000002 000000
000003 000001
000004 000000
000005 000002
# Total: 000000003
# Max Latencies: 00005
# Histogram Overflow at cycle number:
# Thread 0:
";
    let h = parse_cyclictest_histogram(text).unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].label, "thread 0");
    assert_eq!(h[0].counts, vec![0, 0, 0, 1, 0, 2]);
    // -H 2 with two threads: tab-separated, the third column is the sum
    let text = "# Histogram\n000000 000001\t000000\t000001\n000001 000001\t000002\t000003\n# Total: 2 2 4\n# Thread 0: 00002\n# Thread 1:\n";
    let h = parse_cyclictest_histogram(text).unwrap();
    let labels: Vec<&str> = h.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["thread 0", "thread 1", "all threads"]);
    assert_eq!(h[2].counts, vec![1, 3]);
    // inside schedlab run's output, with a prefix on each line
    let text = "[ct] # Histogram\n[ct] 000000 000004\n[ct] # Total: 4\n";
    assert_eq!(parse_cyclictest_histogram(text).unwrap()[0].counts, vec![4]);
    // errors name the line
    let e = parse_cyclictest_histogram("# Histogram\n000000 000001\n000001 x\n").unwrap_err();
    assert!(e.contains("line 3") && e.contains("'x'"), "{e}");
    assert!(parse_cyclictest_histogram("T: 0 ...")
        .unwrap_err()
        .contains("-h"));
}

#[test]
fn reproduction_rows_every_kind() {
    // the fields every scenario kind writes (scenario.rs, scenario_interbench.rs,
    // scenario_sweep.rs, scenario_tables.rs): variant, metric, unit, published, simulated,
    // simulated_stddev (+ kind-specific extras, ignored)
    let doc = serde_json::json!({"schema_version": 1, "scenarios": [
        {"scenario": "dd", "quick": true, "runs": 3, "rows": [
            {"variant": "v6.6", "metric": "ops", "unit": "ops/s", "published": 2.0, "simulated": 1.5, "simulated_stddev": 0.1},
            {"variant": "v6.6", "metric": "sw", "unit": "1", "published": null, "simulated": 3.0, "simulated_stddev": 0.0},
            {"variant": "v6.12", "metric": "ops", "unit": "ops/s", "published": null, "simulated": 1.0, "simulated_stddev": null, "note": null},
            {"variant": "v7.0", "metric": "ops", "unit": "ops/s", "published": 1.0, "simulated": null, "simulated_stddev": null}],
         "targets": [{"description": "v6.12 < v6.6", "simulated": 0.66, "pass": true}]}]});
    let s = reproduction_from_json(&doc).unwrap();
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].metrics(), ["ops", "sw"]);
    assert_eq!(s[0].plotted_metrics(), ["ops"]);
    let bars = s[0].bars("ops");
    // v7.0 has no simulated value: no bar
    assert_eq!(bars.len(), 2);
    assert_eq!(
        (bars[0].published, bars[0].simulated, bars[0].sd),
        (Some(2.0), 1.5, 0.1)
    );
    assert_eq!((bars[1].published, bars[1].sd), (None, 0.0));
    assert!(s[0].targets[0].pass && s[0].quick && s[0].runs == 3);
    let e = reproduction_from_json(
        &serde_json::json!({"scenarios": [{"scenario": "x", "rows": [{"simulated": "a"}]}]}),
    )
    .unwrap_err();
    assert!(e.contains("rows[0]") && e.contains("simulated"), "{e}");
    assert!(reproduction_from_json(&serde_json::json!({"a": 1})).is_err());
}

#[test]
fn sweep_csv_and_curves() {
    let csv = "\
platform,kernel,workload,duration,seed,metric,unit,value
rpi5,v6.6,hackbench -g 1 -l 10,1s,1,time,s,1.0
rpi5,v6.6,hackbench -g 1 -l 10,1s,2,time,s,3.0
rpi5,v6.6,hackbench -g 4 -l 10,1s,1,time,s,5.0
rpi5,v6.18,hackbench -g 1 -l 10,1s,1,time,s,2.0
rpi5,v6.18,\"hackbench -g 4 -l 10\",1s,1,time,s,6.0
rpi5,v6.18,hackbench -g 4 -l 10,1s,1,other,x,9.0
";
    let rows = parse_sweep_csv(csv).unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[4].workload, "hackbench -g 4 -l 10");
    let (opt, unit, curves) = sweep_curves(&rows, "time", None).unwrap();
    assert_eq!((opt.as_str(), unit.as_str()), ("-g", "s"));
    // curves in natural order of their labels, v6.6 before v6.18; labelled by the kernel
    // (the only varying part)
    assert_eq!(curves.len(), 2);
    assert_eq!(
        (curves[0].label.as_str(), curves[1].label.as_str()),
        ("v6.6", "v6.18")
    );
    // v6.6 at 1 group: seeds 1.0 and 3.0 -> mean 2, sample sd sqrt(((1-2)^2 + (3-2)^2)/1) = 1.414..
    let p = curves[0].points[0];
    assert_eq!((p.x, p.mean), (1.0, 2.0));
    assert!((p.sd - 2f64.sqrt()).abs() < 1e-12);
    let p = curves[0].points[1];
    assert_eq!((p.x, p.mean, p.sd), (4.0, 5.0, 0.0));
    // explicit --x, bad metric, bad value
    assert_eq!(sweep_curves(&rows, "time", Some("-g")).unwrap().2, curves);
    let e = sweep_curves(&rows, "nope", None).unwrap_err();
    assert!(e.contains("'nope'") && e.contains("other, time"), "{e}");
    assert!(sweep_curves(&rows, "time", Some("-x"))
        .unwrap_err()
        .contains("'-x'"));
    let e = parse_sweep_csv(
        "platform,kernel,workload,duration,seed,metric,unit,value\na,b,c,d,1,m,u,zz\n",
    )
    .unwrap_err();
    assert!(e.contains("line 2") && e.contains("'zz'"), "{e}");
    assert!(parse_sweep_csv("a,b\n").unwrap_err().contains("'platform'"));
}

#[test]
fn natural_order() {
    use std::cmp::Ordering::*;
    assert_eq!(natural_cmp("v6.6", "v6.18"), Less);
    assert_eq!(
        natural_cmp("hackbench -g 16 -l 100", "hackbench -g 2 -l 100"),
        Greater
    );
    // the same number written differently: byte order breaks the tie ('0' < '7'), so that
    // only equal texts compare equal
    assert_eq!(natural_cmp("a007", "a7"), Less);
    assert_eq!(natural_cmp("a7", "a007"), Greater);
    assert_eq!(natural_cmp("v7.0", "v7.0"), Equal);
    assert_eq!(natural_cmp("v6", "v6.1"), Less);
}
