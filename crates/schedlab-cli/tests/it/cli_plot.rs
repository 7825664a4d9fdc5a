//! `schedlab plot …` and `reproduce --html`: figures written whole, bad input named on one
//! line with exit code 2.

use crate::common::{run, tmp};
use std::path::Path;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2, one line, naming `needle`.
fn refused(args: &[&str], needle: &str) {
    let o = run(args);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    assert!(e.contains(needle), "{args:?}: '{needle}' not in {e}");
}

/// A two-CPU trace: b woken at 1.000100 runs at 1.000350 (250 us); c woken at 1.000200 runs
/// at 1.000260 on CPU 1 (60 us).
const TRACE: &str = "\
# tracer: nop
          <idle>-0       [000] d..2.     1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
               a-10      [000] d..2.     1.000100: sched_wakeup: comm=b pid=11 prio=120 target_cpu=000
               a-10      [000] d..2.     1.000200: sched_wakeup: comm=c pid=12 prio=120 target_cpu=001
          <idle>-0       [001] d..2.     1.000260: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=c next_pid=12 next_prio=120
               a-10      [000] d..2.     1.000350: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120
";

fn write(p: &Path, s: &str) {
    std::fs::write(p, s).unwrap();
}

#[test]
fn plot_latency_timeline_from_a_trace() {
    let t = tmp("plot-a.trace");
    write(&t, TRACE);
    let out = tmp("plot-lat.svg");
    let o = run(&[
        "plot",
        "latency",
        t.to_str().unwrap(),
        "--label",
        "hand made",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("hand made") && svg.contains("wakeup latency"));
    // --comm c: only the 60 us wakeup; --comm z: none, refused
    let o = run(&[
        "plot",
        "latency",
        t.to_str().unwrap(),
        "--comm",
        "c",
        "--hist",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    refused(
        &[
            "plot",
            "latency",
            t.to_str().unwrap(),
            "--comm",
            "z",
            "-o",
            out.to_str().unwrap(),
        ],
        "'z'",
    );
    let o = run(&[
        "plot",
        "timeline",
        t.to_str().unwrap(),
        "--from",
        "1.0001",
        "--to",
        "1000300us",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("CPU0")
            && svg.contains("CPU1")
            && svg.contains("a:10")
            && svg.contains("c:12")
    );
    let _ = std::fs::remove_file(&t);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn plot_errors_name_the_file_line_or_flag() {
    let t = tmp("plot-bad.trace");
    write(&t, &format!("{TRACE}garbage line\n"));
    let out = tmp("plot-bad.svg");
    let (ts, os) = (t.to_str().unwrap(), out.to_str().unwrap());
    // the trace's 7th line
    refused(&["plot", "latency", ts, "-o", os], "line 7");
    refused(
        &["plot", "latency", "/nonexistent/x.trace", "-o", os],
        "/nonexistent/x.trace",
    );
    write(&t, TRACE);
    refused(
        &["plot", "latency", ts, ts, "--label", "one", "-o", os],
        "--label",
    );
    refused(
        &["plot", "timeline", ts, "--from", "soon", "-o", os],
        "--from 'soon'",
    );
    refused(
        &["plot", "timeline", ts, "--from", "2", "--to", "1", "-o", os],
        "--to",
    );
    refused(&["plot", "latency", ts], "--output");
    refused(&["plot", "cyclictest", ts, "-o", os], "# Histogram");
    let h = tmp("plot-ct.txt");
    write(&h, "# Histogram\n000000 000001\n000001 x\n");
    refused(
        &["plot", "cyclictest", h.to_str().unwrap(), "-o", os],
        "line 3",
    );
    write(
        &h,
        "{\"scenarios\": [{\"scenario\": \"s\", \"rows\": [{\"simulated\": \"many\"}]}]}",
    );
    refused(
        &["plot", "reproduction", h.to_str().unwrap(), "-o", os],
        "simulated",
    );
    write(&h, "platform,kernel,workload,duration,seed,metric,unit,value\np,k,w -g 1,1s,1,m,u,1\np,k,w -g 2,1s,one,m,u,1\n");
    refused(
        &[
            "plot",
            "sweep",
            h.to_str().unwrap(),
            "--metric",
            "m",
            "-o",
            os,
        ],
        "line 3",
    );
    refused(
        &["plot", "sweep", h.to_str().unwrap(), "-o", os],
        "--metric",
    );
    // nothing was written by any of these
    assert!(!out.exists());
    // an existing output is left as it was when the input is bad
    write(&out, "old");
    refused(&["plot", "cyclictest", ts, "-o", os], "Histogram");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    // an output directory that does not exist: exit 1, named
    let o = run(&["plot", "latency", ts, "-o", "/nonexistent/dir/x.svg"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/dir"), "{}", stderr(&o));
    for p in [&t, &out, &h] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn plot_cyclictest_sweep_and_reproduction() {
    let h = tmp("plot-ct2.txt");
    let out = tmp("plot-ok.svg");
    let os = out.to_str().unwrap();
    write(
        &h,
        "# Histogram\n000000 000000\t000002\n000001 000005\t000001\n# Total: 5 3\n",
    );
    let o = run(&["plot", "cyclictest", h.to_str().unwrap(), "-o", os]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&out).unwrap().contains("thread 1"));
    write(&h, "platform,kernel,workload,duration,seed,metric,unit,value\np,v6.6,hackbench -g 1,1s,1,time,s,1\np,v6.6,hackbench -g 2,1s,1,time,s,2\np,v6.18,hackbench -g 1,1s,1,time,s,1.5\n");
    let o = run(&[
        "plot",
        "sweep",
        h.to_str().unwrap(),
        "--metric",
        "time",
        "--x",
        "-g",
        "-o",
        os,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("v6.18") && svg.contains("-g"));
    // two scenarios with a published metric each: -o X.svg is refused, -o DIR gets both
    write(
        &h,
        r#"{"schema_version": 1, "scenarios": [
      {"scenario": "one", "rows": [{"variant": "v6.6", "metric": "ops", "unit": "ops/s", "published": 2.0, "simulated": 1.0, "simulated_stddev": 0.1}], "targets": []},
      {"scenario": "two", "rows": [{"variant": "v6.6", "metric": "t", "unit": "s", "published": 2.0, "simulated": 1.0, "simulated_stddev": null}], "targets": []}]}"#,
    );
    refused(
        &["plot", "reproduction", h.to_str().unwrap(), "-o", os],
        "--scenario",
    );
    refused(
        &[
            "plot",
            "reproduction",
            h.to_str().unwrap(),
            "--scenario",
            "three",
            "-o",
            os,
        ],
        "'three'",
    );
    let o = run(&[
        "plot",
        "reproduction",
        h.to_str().unwrap(),
        "--scenario",
        "two",
        "-o",
        os,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = tmp("plot-figs");
    let _ = std::fs::remove_dir_all(&dir);
    let o = run(&[
        "plot",
        "reproduction",
        h.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.join("one_ops.svg").exists() && dir.join("two_t.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&h);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn help_plot_documents_the_kinds() {
    let o = run(&["help", "plot"]);
    let h = String::from_utf8_lossy(&o.stdout);
    for k in [
        "latency",
        "timeline",
        "cyclictest",
        "reproduction",
        "sweep",
        "schedlab plot latency",
    ] {
        assert!(h.contains(k), "{k} not in {h}");
    }
}

/// A two-variant scenario of 20 ms runs, one target passing and one missing.
const TINY: &str = r#"
name = "tiny"
title = "Tiny & <quick>"
seed = "000_3ee2c634270bace4.txt"
platform = "smp:2"
workloads = ["stress-ng --pipe 1 --timeout 1s --metrics-brief"]
duration = "20ms"
runs = 1
quick_runs = 1
baseline = "v6.6"
metrics = ["bogo_ops_per_sec", "switches_per_op"]
notes = ["why it happens"]

[[variant]]
kernel = "v6.6"
label = "six six"

[[variant]]
kernel = "v6.12"
label = "six twelve"

[[published]]
kernel = "v6.6"
metric = "bogo_ops_per_sec"
value = 2000000
source = "test"

[[target]]
description = "passes"
metric = "switches_per_op"
kernel = "v6.6"
min = 0.0

[[target]]
description = "misses"
metric = "switches_per_op"
kernel = "v6.12"
min = 1000.0
"#;

#[test]
fn reproduce_html_writes_a_page_per_scenario_and_an_index() {
    let toml = tmp("tiny.toml");
    write(&toml, TINY);
    let dir = tmp("html");
    let _ = std::fs::remove_dir_all(&dir);
    let o = run(&[
        "reproduce",
        toml.to_str().unwrap(),
        "--quick",
        "--no-progress",
        "--json",
        "--html",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // stdout is still the JSON document
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["scenarios"][0]["scenario"], "tiny");
    let page = std::fs::read_to_string(dir.join("tiny.html")).unwrap();
    assert!(page.contains("<h1>Tiny &amp; &lt;quick&gt;</h1>"));
    assert!(page.contains(">PASS<") && page.contains(">MISS<") && page.contains("why it happens"));
    assert!(page.contains("data:image/svg+xml;base64,") && page.contains("six twelve"));
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(index.contains("href=\"tiny.html\""));
    // same inputs, same bytes
    let o = run(&[
        "reproduce",
        toml.to_str().unwrap(),
        "--quick",
        "--no-progress",
        "--html",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("tiny.html")).unwrap(),
        page
    );
    // a DIR that cannot be made: exit 1 before any run, named
    let o = run(&[
        "reproduce",
        toml.to_str().unwrap(),
        "--quick",
        "--html",
        "/dev/null/report",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("/dev/null/report") && o.stdout.is_empty(),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&toml);
}
