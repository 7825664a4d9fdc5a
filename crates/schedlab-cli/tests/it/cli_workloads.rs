//! Benchmark command lines through the `schedlab` binary: every bad workload line (unknown
//! program, unknown option, malformed or out-of-range value, bad placement token, refused
//! configuration) exits with code 2, prints one line on stderr naming the culprit and nothing on
//! stdout, and leaves no trace file behind; `schedlab compare` prints its mmtests-style table.

use crate::common::{run, tmp};
use std::path::Path;

/// Files in the temporary directory whose name starts like `path`'s (the trace itself or a
/// temporary file written next to it).
fn leftovers(path: &Path) -> Vec<String> {
    let stem = path.file_name().unwrap().to_string_lossy().to_string();
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&stem))
        .collect()
}

/// Asserts the bad-input contract for `args`: exit 2, nothing on stdout, exactly one line on
/// stderr containing every needle.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        o.stdout.is_empty(),
        "{args:?}: stdout: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.ends_with('\n'), "{args:?}: {err:?}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
    err
}

#[test]
fn bad_workload_lines_exit_2_with_one_line_and_no_trace() {
    let trace = tmp("bad.trace");
    let ts = trace.to_str().unwrap();
    // (workload line, what the message must name)
    let cases: &[(&str, &[&str])] = &[
        // unknown program
        ("fio --x", &["unknown program 'fio'"]),
        // unknown options, one per program (getopt's message names the option as typed)
        (
            "stress-ng --pipe 1 --frobnicate",
            &["stress-ng", "unknown option '--frobnicate'"],
        ),
        ("hackbench -x", &["hackbench", "unknown option '-x'"]),
        (
            "perf bench sched messaging --frobnicate",
            &["unknown option '--frobnicate'"],
        ),
        ("schbench -x 3", &["schbench", "unknown option '-x'"]),
        (
            "chrt --idle 0 llama-batched-bench -t 80 -ubatch 512",
            &["llama-batched-bench", "unknown option '-ubatch'"],
        ),
        ("llama-batched-bench -npl 1,0", &["-npl", "'1,0'"]),
        (
            "cyclictest -D 1 --frobnicate",
            &["cyclictest", "unknown option '--frobnicate'"],
        ),
        // malformed values
        ("stress-ng --pipe x", &["--pipe", "'x'"]),
        (
            "stress-ng --pipe 1 --timeout 1.5m",
            &["--timeout", "'1.5m'"],
        ),
        ("cyclictest -i -5 -D 1", &["-i", "'-5'"]),
        ("cyclictest -D 5x", &["-D", "'5x'"]),
        // hackbench: "--groups|-g requires an integer > 0" (rt-tests hackbench.c)
        ("hackbench -g 0", &["-g", "'0'"]),
        ("hackbench -l 100x", &["-l", "'100x'"]),
        ("schbench -m 0", &["-m", "'0'"]),
        ("schbench -M 3-1", &["-M", "'3-1'"]),
        // a missing value
        ("cyclictest -D 1 -i", &["-i", "requires an argument"]),
        // values the simulator cannot represent: a run longer than 2^33 s, more tasks than
        // pid_max (they used to overflow or exhaust memory)
        (
            "stress-ng --pipe 1 --timeout 1000000000000",
            &["--timeout", "'1000000000000'"],
        ),
        ("cyclictest -D 1000000000000", &["-D", "'1000000000000'"]),
        (
            "cyclictest -l 9223372036854775807",
            &["-l", "9223372036854775807"],
        ),
        (
            "hackbench -g 4294967295 -f 4294967295",
            &["-g 4294967295 -f 4294967295", "pid_max"],
        ),
        ("schbench -m 4294967295", &["-m 4294967295", "pid_max"]),
        (
            "cyclictest -t 4294967295 -D 1",
            &["-t 4294967295", "pid_max"],
        ),
        // options the real program has but schedlab does not model
        ("stress-ng --cpu 4", &["--cpu", "not modelled"]),
        ("schbench -R 100", &["-R", "not modelled"]),
        ("cyclictest -v -D 1", &["-v", "not modelled"]),
        // placement tokens
        ("nice=99 stress-ng --pipe 1", &["nice=99", "-20..19"]),
        ("cpus=9 stress-ng --pipe 1", &["cpus=9", "smp:2"]),
        (
            "cgroup=a stress-ng --pipe 1",
            &["cgroup=a", "must start with '/'"],
        ),
        (
            "cgroup=/a//b stress-ng --pipe 1",
            &["cgroup=/a//b", "empty component"],
        ),
        (
            "cgexec -g cpu:/a/.. stress-ng --pipe 1",
            &["cgexec -g cpu:/a/..", "'..'"],
        ),
        (
            "policy=fifo:100 stress-ng --pipe 1",
            &["policy=fifo:100", "1..99"],
        ),
        ("bogus=1 hackbench", &["bogus=1"]),
        // make: unlimited jobs, a bad job count, a target
        ("make -j", &["make", "-j", "unlimited"]),
        ("chrt --idle 0 make -j0", &["make", "-j", "'0'"]),
        ("nice -n 19 make --jobs=x", &["--jobs", "'x'"]),
        ("make -j8 --units 0", &["--units", "'0'"]),
        ("make -j8 vmlinux", &["'vmlinux'"]),
    ];
    for &(line, needles) in cases {
        refused(
            &[
                "run",
                "--platform",
                "smp:2",
                "--kernel",
                "v6.18",
                "--duration",
                "10ms",
                "--trace",
                ts,
                "--workload",
                line,
            ],
            needles,
        );
        assert!(!trace.exists(), "{line}: a trace file was left behind");
        assert!(
            leftovers(&trace).is_empty(),
            "{line}: files left: {:?}",
            leftovers(&trace)
        );
    }
    // A bad second workload refuses the whole run, even though the first one is fine.
    refused(
        &[
            "run",
            "--platform",
            "smp:2",
            "--kernel",
            "v6.18",
            "--duration",
            "10ms",
            "--trace",
            ts,
            "--workload",
            "stress-ng --pipe 1",
            "--workload",
            "hackbench -x",
        ],
        &["hackbench -x", "'-x'"],
    );
    assert!(leftovers(&trace).is_empty());
}

#[test]
fn compare_prints_an_mmtests_table() {
    // --duration 20ms keeps the test fast: the table's structure does not depend on the run
    // finishing (stress-ng is then cut short, its metrics taken at that moment).
    let o = run(&[
        "compare",
        "--kernel",
        "v6.6",
        "--kernel",
        "v6.12",
        "--workload",
        "stress-ng --pipe 1 --timeout 1s",
        "--platform",
        "smp:2",
        "--runs",
        "2",
        "--duration",
        "20ms",
    ]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    // Header (compare.rs): 28 blank columns, then each kernel right-aligned in 22 after a
    // space.
    assert_eq!(
        lines[0],
        format!("{:<28} {:>22} {:>22}", "", "v6.6", "v6.12")
    );
    // Footer: a blank line and the legend.
    let n = lines.len();
    assert_eq!(lines[n - 2], "");
    assert!(lines[n - 1].starts_with("% change: positive = better than the first kernel"));
    let rows = &lines[1..n - 2];
    // Rows: "<Stat> <metric>" in 28 columns, one cell of 22 per kernel.
    let label = |r: &str| r[..28].trim_end().to_string();
    let cells = |r: &str| -> Vec<String> {
        r.as_bytes()[28..]
            .chunks(23)
            .map(|c| String::from_utf8_lossy(c).to_string())
            .collect()
    };
    for r in rows {
        assert_eq!(r.len(), 28 + 2 * 23, "{r:?}");
        let c = cells(r);
        assert!(c.iter().all(|c| c.starts_with(' ')), "{r:?}");
        let stat = label(r).split(' ').next().unwrap().to_string();
        match stat.as_str() {
            "Amean" | "Hmean" => {
                // "value (  pct%)marker": the first kernel against itself is 0.00 %, never
                // "-0.00", and never marked significant
                assert!(c[0].ends_with("(  0.00%) "), "{r:?}");
                assert!(c[1].contains("%)"), "{r:?}");
            }
            "Stddev" => assert!(!r.contains('%'), "{r:?}"),
            other => panic!("unexpected row {other}: {r:?}"),
        }
        assert!(!r.contains("-0.00%"), "{r:?}");
    }
    // Each metric: Amean, then Hmean for rates (unit "/s", "per_sec", "rps"), then Stddev.
    let labels: Vec<String> = rows.iter().map(|r| label(r)).collect();
    for (metric, rate) in [
        ("bogo_ops_per_sec", true),
        ("sched_switch", false),
        ("sched_migrate_task", false),
    ] {
        let i = labels
            .iter()
            .position(|l| *l == format!("Amean {metric}"))
            .unwrap_or_else(|| panic!("no Amean {metric}: {labels:?}"));
        let mut want = vec![format!("Amean {metric}")];
        if rate {
            want.push(format!("Hmean {metric}"));
        }
        want.push(format!("Stddev {metric}"));
        assert_eq!(labels[i..i + want.len()], want[..], "{metric}");
    }
}

#[test]
fn compare_refuses_bad_kernels() {
    let base = [
        "compare",
        "--workload",
        "stress-ng --pipe 1 --timeout 1s",
        "--platform",
        "smp:2",
        "--runs",
        "1",
        "--duration",
        "10ms",
    ];
    let with = |kernels: &[&'static str]| -> Vec<&'static str> {
        let mut a: Vec<&str> = base.to_vec();
        for k in kernels {
            a.extend(["--kernel", k]);
        }
        a
    };
    refused(&with(&["v6.6", "v6.12 NO_FROBNICATE"]), &["NO_FROBNICATE"]);
    refused(&with(&["v6.66", "v6.12"]), &["'v6.66'"]);
    refused(&with(&["v6.6"]), &["two --kernel"]);
    // a bad workload line is refused by compare as by run
    let mut a = with(&["v6.6", "v6.12"]);
    a[2] = "stress-ng --pipe x";
    refused(&a, &["--pipe", "'x'"]);
}

#[test]
fn compare_jobs_do_not_change_the_output() {
    // each (kernel, seed) is an independent simulation kept in job order: one worker thread
    // and three print the same bytes, text and JSON
    for json in [false, true] {
        let out = |jobs: &str| {
            let mut a = vec![
                "compare",
                "--kernel",
                "v6.6",
                "--kernel",
                "v6.12",
                "--workload",
                "stress-ng --pipe 2 --timeout 1s",
                "--platform",
                "smp:2",
                "--runs",
                "2",
                "--duration",
                "10ms",
                "--jobs",
                jobs,
            ];
            if json {
                a.push("--json");
            }
            let o = run(&a);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        let one = out("1");
        assert!(!one.is_empty());
        assert_eq!(one, out("3"));
    }
}

/// `time chrt --idle 0 make -jN` end to end: bash's time report, the run ends with the build
/// (no --duration needed), every process of the build is SCHED_IDLE; a --duration that cuts
/// the build short is said so instead of a time.
#[test]
fn make_prints_bash_time_and_the_run_ends_with_the_build() {
    let args = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec![
            "run",
            "--platform",
            "smp:2",
            "--kernel",
            "v6.19",
            "--workload",
            "time chrt --idle 0 make -j2 --units 3",
            "--json",
        ];
        a.extend_from_slice(extra);
        a
    };
    let o = run(&args(&[]));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &d["workloads"][0];
    let out = w["output"].as_str().unwrap();
    assert!(
        out.starts_with("\nreal\t0m") && out.contains("\nuser\t") && out.contains("\nsys\t"),
        "{out}"
    );
    let m = |name: &str| w["metrics"][name]["value"].as_f64().unwrap();
    assert_eq!(m("finished"), 1.0);
    assert_eq!(m("jobs"), 3.0);
    // forked: 5 prepare steps, one sub-make (-j2: the 3 units are one directory), 6
    // processes per unit, 3 ld passes and modpost = 5 + 1 + 18 + 4 = 28
    assert_eq!((m("forks"), m("execs")), (28.0, 28.0));
    assert_eq!(m("submakes"), 1.0);
    // 3 of 12 000 units: the serial phases are 100 s / 4 000 = 25 ms; the compile work is
    // ≈ 3 × 0.31 s over 2 CPUs; the run stops when make has exited, not after the default 10 s
    let sim_s = d["sim_time_ns"].as_f64().unwrap() / 1e9;
    assert!(
        sim_s < 2.0 && sim_s >= m("real_s"),
        "{sim_s} {}",
        m("real_s")
    );
    let tasks = d["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 29); // make + 28
    assert!(
        tasks.iter().all(|t| t["policy"] == "SCHED_IDLE"),
        "{tasks:?}"
    );
    // cut short: no time report
    let o = run(&args(&["--duration", "10ms"]));
    assert!(o.status.success());
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let out = d["workloads"][0]["output"].as_str().unwrap();
    assert!(
        out.contains("did not finish") && !out.contains("real"),
        "{out}"
    );
}

/// `schedlab run` without `--duration` lets a workload that ends by itself run to its end, past
/// the 10 s default (issue #14's closing note); with a shorter `--duration` it says the
/// workload was cut, in the text and in the JSON, and reports none of its metrics. The
/// platform's AF_UNIX sends take 20 ms each, so hackbench's 600 messages (one sender on one
/// CPU) need at least 12 s.
#[test]
fn run_lets_a_finite_workload_end_or_says_it_was_cut() {
    let plat = tmp("slow-send.toml");
    std::fs::write(
        &plat,
        "name = \"slow-send\"\ndescription = \"20 ms sends\"\nextends = \"smp:1\"\n\
         [costs]\nc_unix_send = 20000\n",
    )
    .unwrap();
    let p = plat.to_str().unwrap();
    let line = "hackbench -g 1 -f 1 -l 600";
    let base = [
        "run",
        "--platform",
        p,
        "--kernel",
        "v6.19",
        "--workload",
        line,
    ];
    let o = run(&base);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let time: f64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Time: "))
        .unwrap_or_else(|| panic!("no Time line: {out}"))
        .parse()
        .unwrap();
    assert!(time >= 12.0, "{time}");
    assert!(!out.contains("was cut"), "{out}");

    let cut = [&base[..], &["--duration", "1s"]].concat();
    let o = run(&cut);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    assert!(!out.contains("Time: "), "{out}");
    assert!(
        out.contains(&format!(
            "schedlab: workload '{line}' was cut: the run stopped at 1.000 s (--duration) \
             before the program ended; its output is partial and its metrics are not reported"
        )),
        "{out}"
    );
    let o = run(&[&cut[..], &["--json"]].concat());
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["workloads"][0]["cut"], true);
    assert_eq!(d["workloads"][0]["metrics"], serde_json::json!({}));
    // compare says which runs were cut (stderr) and has no row of their metrics
    let o = run(&[
        "compare",
        "--platform",
        p,
        "--kernel",
        "v6.19",
        "--kernel",
        "v7.1",
        "--workload",
        line,
        "--duration",
        "1s",
        "--runs",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "schedlab: warning: kernel 'v6.19' seed 1: workload '{line}' was cut at 1.000 s \
             before the program ended: its metrics are not in the table"
        )),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("time_s"));
    // an open-ended workload stopped by --duration is not "cut": no flag, its metrics stay
    let o = run(&[
        "run",
        "--platform",
        "smp:2",
        "--kernel",
        "v6.19",
        "--workload",
        "stress-ng --pipe 1 --timeout 5",
        "--duration",
        "50ms",
        "--json",
    ]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(d["workloads"][0].get("cut").is_none());
    assert!(d["workloads"][0]["metrics"]["bogo_ops_per_sec"].is_object());
    let _ = std::fs::remove_file(&plat);
}

/// Issue #19: tbench, netperf (RR and STREAM) and server-model run on every built-in platform
/// (each kernel family's first and last preset), print their own result lines and stay on the
/// network path (the run summary's `net:` line).
#[test]
fn network_workloads_run_on_every_platform() {
    let platforms = [
        "rpi5",
        "rpi5-2.4",
        "rpi4-rt",
        "xeon-2s-64",
        "altra-80",
        "altra-80-llc80",
        "rb5",
        "x86-2s-80",
        "host",
        "smp:3",
    ];
    // (line, a line of its own output that must be there)
    let lines = [
        ("tbench --warmup 0 -t 1 2", "Throughput "),
        (
            "netperf -l -100 -t TCP_RR",
            "MIGRATED TCP REQUEST/RESPONSE TEST",
        ),
        (
            "netperf -l -100 -t UDP_RR",
            "MIGRATED UDP REQUEST/RESPONSE TEST",
        ),
        (
            "server-model --workers 2 --clients 4 --runtime 0.01",
            "Request Latencies percentiles",
        ),
    ];
    for p in platforms {
        for k in ["v6.5", "v7.1"] {
            for (line, needle) in lines {
                let out = run(&[
                    "run",
                    "--platform",
                    p,
                    "--kernel",
                    k,
                    "--workload",
                    line,
                    "--duration",
                    "3s",
                    "--no-progress",
                ]);
                let text = String::from_utf8_lossy(&out.stdout);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{p} {k} {line}: {err}");
                assert!(text.contains(needle), "{p} {k} {line}:\n{text}");
                assert!(text.contains("  net: "), "{p} {k} {line}:\n{text}");
            }
        }
    }
}

/// netperf's output against real netperf 2.7.0 runs on the development VM
/// (docs/validation/netperf-2.7.0, docs/validation/loopback.md): the header and title lines
/// byte for byte, the result lines field for field with the numbers masked (the values are the
/// simulation's own).
#[test]
fn netperf_prints_what_the_real_netperf_prints() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/validation/netperf-2.7.0"
    );
    let mask = |l: &str| -> Vec<String> {
        l.split_whitespace()
            .map(|w| {
                if w.parse::<f64>().is_ok() {
                    "#".to_string()
                } else {
                    w.to_string()
                }
            })
            .collect()
    };
    for (test, line) in [
        ("TCP_RR", "netperf -4 -l 2 -f k -t TCP_RR -H 127.0.0.1"),
        ("UDP_RR", "netperf -4 -l 2 -t UDP_RR -H 127.0.0.1"),
        ("TCP_STREAM", "netperf -4 -l 2 -t TCP_STREAM -H 127.0.0.1"),
        (
            "UDP_STREAM",
            "netperf -4 -l 2 -H 127.0.0.1 -t UDP_STREAM -- -m 1024",
        ),
    ] {
        let real = std::fs::read_to_string(format!("{dir}/{test}.txt")).unwrap();
        let out = run(&[
            "run",
            "--platform",
            "host",
            "--kernel",
            "v6.18",
            "--workload",
            line,
            "--no-progress",
        ]);
        assert!(out.status.success(), "{line}");
        let ours = String::from_utf8_lossy(&out.stdout);
        let real: Vec<&str> = real.trim_end_matches('\n').lines().collect();
        let ours: Vec<&str> = ours.lines().take(real.len()).collect();
        assert_eq!(ours.len(), real.len(), "{test}:\n{}", ours.join("\n"));
        // the lines up to the first blank one are fixed text (header and title)
        let fixed = real.iter().position(|l| l.is_empty()).unwrap();
        assert_eq!(&ours[..fixed], &real[..fixed], "{test}");
        for (o, r) in ours[fixed..].iter().zip(&real[fixed..]) {
            assert_eq!(mask(o), mask(r), "{test}: {o:?} vs {r:?}");
        }
    }
}
