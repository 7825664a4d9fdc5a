//! Hostile input through the `schedlab` binary, as data: every case is (argv, exit code, words
//! its message must contain), with the files it needs written first. A refused input (exit 2)
//! prints exactly one line on stderr and nothing on stdout; a failed run (exit 1) ends with one
//! `schedlab: invariant violated: …` line and no panic; no case leaves a trace file behind.
//! Exit codes: 0 ok, 1 run or I/O failure, 2 bad input.
//!
//! Plus a property test over generated argv (commands, flags, values; run and compare
//! simulate at most 1 ms): never a panic, and every non-zero exit is 2 with one line.

use crate::common::{bin, tmp};
use std::path::PathBuf;

/// Files the cases refer to as `@name` (written to a temporary directory first).
const FILES: &[(&str, &str)] = &[
    (
        "instance.json",
        "{ \"tasks\": { \"a\": { \"instance\": 4294967295, \"run\": 100 } } }\n",
    ),
    (
        "instances-total.json",
        "{ \"tasks\": { \"a\": { \"instance\": 20000, \"run\": 100 },\n  \"b\": { \"instance\": 20000, \"run\": 100 } } }\n",
    ),
    (
        "duration.json",
        "{ \"global\": { \"duration\": 18446744073 }, \"tasks\": { \"a\": { \"run\": 100 } } }\n",
    ),
    (
        "run.json",
        "{ \"tasks\": { \"a\": { \"run\": 9223372036854775807 } } }\n",
    ),
    (
        "sleep.json",
        "{ \"tasks\": { \"a\": { \"run\": 1, \"sleep\": 8589934592000001 } } }\n",
    ),
    (
        "runs-huge.toml",
        "name = \"x\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:1\"\nworkloads = [\"hackbench -g 1 -l 10\"]\nruns = 4000000000\nbaseline = \"v6.6\"\nmetrics = [\"sched_switch\"]\n[[variant]]\nkernel = \"v6.6\"\nlabel = \"a\"\n",
    ),
    (
        "runs-zero.toml",
        "name = \"x\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:1\"\nworkloads = [\"hackbench -g 1 -l 10\"]\nruns = 0\nbaseline = \"v6.6\"\nmetrics = [\"sched_switch\"]\n[[variant]]\nkernel = \"v6.6\"\nlabel = \"a\"\n",
    ),
    (
        "metric.toml",
        "name = \"x\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:1\"\nworkloads = [\"hackbench -g 1 -l 10\"]\nduration = \"1ms\"\nruns = 1\nbaseline = \"v6.6\"\nmetrics = [\"no_such_metric\"]\n[[variant]]\nkernel = \"v6.6\"\nlabel = \"a\"\n",
    ),
    (
        "syntax.toml",
        "name = \"x\"\ntitle = \"t\"\nseed = = \"s\"\n",
    ),
    (
        "jitter.toml",
        "extends = \"rpi5\"\nname = \"j\"\ndescription = \"d\"\n[costs]\njitter_sigma = 1000\n",
    ),
    (
        "w-token.toml",
        "extends = \"rpi5\"\nname = \"w\"\ndescription = \"d\"\n[programs.llama-batched-bench]\nw_token = 8589934592000000\n",
    ),
    (
        "tables-platform.toml",
        "name = \"x\"\nkind = \"tables\"\ntitle = \"t\"\nseed = \"s\"\nplatform = \"smp:2\"\nbaseline = \"v6.19\"\nworkloads = []\nmetrics = []\nruns = 1\nquick_runs = 1\n[[variant]]\nkernel = \"v6.19\"\nlabel = \"a\"\n[tables]\npatched = \"v6.19\"\nsource = \"s\"\n[[tables.table]]\nid = \"t0\"\ntitle = \"t\"\nplatform = \"smp:2\"\nline = \"make -j2 --units=1\"\nmetrics = [\"real_s\"]\nunit = \"s\"\nhigher_better = false\n[[tables.table]]\nid = \"t1\"\ntitle = \"t\"\nplatform = \"nosuch\"\nline = \"make -j2 --units=1\"\nmetrics = [\"real_s\"]\nunit = \"s\"\nhigher_better = false\n",
    ),
];

/// (argv, exit code, words in stderr — or in stdout and stderr when the exit code is 0).
/// `@name` is the path of a file of [`FILES`].
const CASES: &[(&[&str], i32, &[&str])] = &[
    // ---- tunables that reached a panic in update_entity_lag (debugfs u32 limit)
    (
        &[
            "run",
            "--kernel",
            "v6.18 base_slice_ns=18446744073709551615",
        ],
        2,
        &["base_slice_ns=18446744073709551615", "4294967295"],
    ),
    (
        &["run", "--kernel", "v6.18 base_slice_ns=9223372036854775807"],
        2,
        &["base_slice_ns", "4294967295"],
    ),
    (
        &["run", "--kernel", "v6.18 migration_cost_ns=4294967296"],
        2,
        &["migration_cost_ns", "4294967295"],
    ),
    (
        &[
            "run",
            "--kernel",
            "v6.18 timer_slack_ns=18446744073709551615",
        ],
        2,
        &["timer_slack_ns", "4294967295"],
    ),
    (
        &["run", "--kernel", "v6.18 sched_rt_period_us=4294967296"],
        2,
        &["sched_rt_period_us", "2147483647"],
    ),
    // ---- rt-app numbers
    (
        &["run", "--workload", "rt-app @instance.json"],
        2,
        &["instance.json:1:", "\"instance\"", "32768"],
    ),
    (
        &["run", "--workload", "rt-app @instances-total.json"],
        2,
        &["40000 threads", "32768"],
    ),
    (
        &["run", "--workload", "rt-app @duration.json"],
        2,
        &["duration.json:1:", "\"duration\"", "2^33 s"],
    ),
    (
        &["run", "--workload", "rt-app @run.json"],
        2,
        &["\"run\"", "2^33 s"],
    ),
    (
        &["run", "--workload", "rt-app @sleep.json"],
        2,
        &["\"sleep\"", "2^33 s"],
    ),
    // ---- scheduling attributes the kernel or chrt/taskset refuse (rt-dl.md §3.1)
    (
        &["run", "--workload", "chrt -f 0 hackbench"],
        2,
        &["chrt -f 0", "unsupported priority value", ": 0"],
    ),
    (
        &[
            "run",
            "--workload",
            "chrt -d -T 18446744073709551615 -D 1 0 rt-app @sleep.json",
        ],
        2,
        &["18446744073709551615", "EINVAL"],
    ),
    (
        &["run", "--workload", "chrt -d -T 99999999999999999999 0 x"],
        2,
        &["'99999999999999999999'", "runtime"],
    ),
    (
        &["run", "--workload", "taskset 0x00000000,00000000 hackbench"],
        2,
        &["selects no CPU"],
    ),
    (
        &[
            "run",
            "--workload",
            "policy=deadline:1ns/1ns/1ns rt-app @sleep.json",
        ],
        2,
        &[
            "policy=deadline:1ns/1ns/1ns",
            "1 ns is below the 1024 ns minimum",
        ],
    ),
    // ---- one cap on simulated time
    (
        &["run", "--duration", "8589934593s"],
        2,
        &["--duration", "8589934592 s"],
    ),
    (
        &["run", "--duration", "18446744073709551615s"],
        2,
        &["--duration", "2^33 s"],
    ),
    (
        &["run", "--duration", "99999999999999999999999"],
        2,
        &["--duration", "2^33 s"],
    ),
    (
        &[
            "run",
            "--workload",
            "stress-ng --pipe 1 --timeout 8589934593",
        ],
        2,
        &["--timeout", "8589934592"],
    ),
    // ---- one cap on tasks, across lines
    (
        &[
            "run",
            "--workload",
            "hackbench -g 400 -f 20 -l 1",
            "--workload",
            "hackbench -g 400 -f 20 -l 1",
            "--workload",
            "hackbench -g 400 -f 20 -l 1",
        ],
        2,
        &["48003 tasks in total", "32768"],
    ),
    // ---- refused as the README says
    (
        &[
            "run",
            "--workload",
            "cyclictest -t 1 -i 1000",
            "--no-duration",
        ],
        2,
        &["cyclictest", "runs until stopped", "--duration"],
    ),
    (
        &["run", "--kernel", "v6.6 preempt=rt"],
        2,
        &["preempt=rt", "v6.12"],
    ),
    (
        &["run", "--kernel", "v6.12 preempt=lazy"],
        2,
        &["preempt=lazy", "7c70cb94d29c"],
    ),
    // ---- a workload line with a newline in it stays one line
    (
        &["run", "--workload", "slice=1ms slice\n= schbench"],
        2,
        &["\\n", "unknown program"],
    ),
    // ---- scenario files
    (
        &["reproduce", "@runs-huge.toml"],
        2,
        &["runs = 4000000000", "1..=10000"],
    ),
    (
        &["reproduce", "@runs-zero.toml"],
        2,
        &["runs = 0", "1..=10000"],
    ),
    (
        &["reproduce", "@metric.toml"],
        2,
        &["unknown metric 'no_such_metric'", "sched_switch"],
    ),
    (&["reproduce", "@syntax.toml"], 2, &["syntax.toml:3:"]),
    (
        &["reproduce", "delay-dequeue", "--runs", "4000000000"],
        2,
        &["--runs 4000000000", "1..=10000"],
    ),
    (
        &["reproduce", "delay-dequeue", "--check-scaling"],
        2,
        &["--check-scaling", "delay-dequeue", "sweep"],
    ),
    (
        &["reproduce", "next-buddy", "--check-scaling", "--quick"],
        2,
        &["--check-scaling", "--quick"],
    ),
    // ---- seed 003's front ends (fuzz campaign, 2026-11-26)
    (
        &[
            "run",
            "--workload",
            "llama-batched-bench -c 4294967295 -npp 1 -ntg 4294967294 -npl 1",
        ],
        2,
        &["asks for 4294967296 graphs", "more than the 1000000"],
    ),
    (
        &["run", "--workload", "make -j4096 --units 4000000000"],
        2,
        &["--units", "1..=1000000", "'4000000000'"],
    ),
    (
        &["run", "--platform", "@w-token.toml"],
        2,
        &[
            "w-token.toml:5",
            "programs.llama-batched-bench.w_token",
            "3600 s (one hour)",
        ],
    ),
    (
        &["reproduce", "@tables-platform.toml"],
        2,
        &["tables-platform.toml: table 't1': unknown platform `nosuch`"],
    ),
    // ---- platform files
    (
        &["run", "--platform", "@jitter.toml"],
        2,
        &["jitter.toml:5", "jitter_sigma", "between 0 and 1"],
    ),
    // ---- compare seeds must not wrap
    (
        &[
            "compare",
            "--platform",
            "smp:1",
            "--kernel",
            "v6.6",
            "--kernel",
            "v6.12",
            "--workload",
            "hackbench -g 1 -l 10",
            "--duration",
            "1ms",
            "--seed",
            "18446744073709551615",
            "--runs",
            "3",
        ],
        2,
        &["--seed 18446744073709551615", "18446744073709551613"],
    ),
    // ---- --strict: one line and exit 1, not a panic (101)
    (
        &[
            "run",
            "--platform",
            "smp:2",
            "--kernel",
            "v7.1 -2227a957e1d5 -ee4373dc902c",
            "--workload",
            "hackbench -g 2 -l 100",
            "--duration",
            "200ms",
            "--strict",
        ],
        1,
        &["schedlab: invariant violated: ", "__pick_eevdf"],
    ),
    // ---- accepted with a warning naming the token
    (
        &["run", "--kernel", "v6.18 NO_ATTACH_AGE_LOAD"],
        0,
        &["warning", "NO_ATTACH_AGE_LOAD", "not modelled"],
    ),
    (
        &["run", "--kernel", "v6.12 NO_DELAY_DEQUEUE DELAY_DEQUEUE"],
        0,
        &[
            "warning",
            "NO_DELAY_DEQUEUE then DELAY_DEQUEUE",
            "contradictory",
        ],
    ),
    (
        &["run", "--kernel", "v6.12 +152e11f6df29"],
        0,
        &["warning", "+152e11f6df29", "already carries"],
    ),
    (
        &["run", "--kernel", "v6.6+152e11f6df29-152e11f6df29"],
        0,
        &["warning", "contradictory"],
    ),
    (
        &["run", "--workload", "hackbench -g 1 -l 10 stray"],
        0,
        &["warning", "ignored argument 'stray'"],
    ),
    (
        &["run", "--kernel", "v6.18 NO_HZ_BW", "--json"],
        2,
        &["HZ_BW does not exist"],
    ),
    (
        &["run", "--kernel", "v6.6 NO_HZ_BW", "--json"],
        0,
        &["\"warnings\": [", "NO_HZ_BW", "not modelled"],
    ),
    // ---- listings tell the truth
    (
        &["show", "kernel", "v6.12 -a58501fb8320"],
        0,
        &[" HZ_BW\n", "a58501fb8320 is listed but not modelled"],
    ),
    (
        &["list", "features"],
        0,
        &["ATTACH_AGE_LOAD          listed"],
    ),
    (&["list", "patches"], 0, &["ee4373dc902c v6.8       listed"]),
    // ---- dbench: values named, exit 2
    (
        &["run", "--workload", "dbench -t ten 4"],
        2,
        &["dbench: -t", "'ten'"],
    ),
    (
        &["run", "--workload", "dbench 0"],
        2,
        &["N (clients)", "'0'"],
    ),
    (
        &["run", "--workload", "dbench --warmup 5"],
        2,
        &["number of clients is missing"],
    ),
    (
        &[
            "run",
            "--workload",
            "dbench --loadfile /nonexistent/client.txt 2",
        ],
        2,
        &["--loadfile '/nonexistent/client.txt'"],
    ),
    (
        &["run", "--workload", "dbench -F 2"],
        2,
        &["-F", "not modelled"],
    ),
    // ---- tbench: a remote server and bad socket options named, exit 2
    (
        &["run", "--workload", "tbench 4 10.0.0.1"],
        2,
        &["tbench: server", "'10.0.0.1'"],
    ),
    (
        &["run", "--workload", "tbench -T TCP_FOO 4"],
        2,
        &["tbench: -T", "TCP_FOO"],
    ),
];

fn files_dir() -> PathBuf {
    let d = tmp("hostile-files");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for (name, text) in FILES {
        std::fs::write(d.join(name), text).unwrap();
    }
    d
}

/// Fills in the defaults a `run` case leaves out (platform, kernel, workload, duration) and a
/// trace file, and replaces `@name` with the path of that file.
fn argv(case: &[&str], dir: &std::path::Path, trace: &std::path::Path) -> Vec<String> {
    let sub = |a: &str| {
        let mut s = a.to_string();
        for (name, _) in FILES {
            s = s.replace(&format!("@{name}"), &dir.join(name).display().to_string());
        }
        s
    };
    let mut v: Vec<String> = case
        .iter()
        .filter(|a| **a != "--no-duration")
        .map(|a| sub(a))
        .collect();
    if case[0] == "run" {
        let has = |f: &str| case.contains(&f);
        for (flag, value) in [
            ("--platform", "smp:1"),
            ("--kernel", "v6.18"),
            ("--workload", "rt-app examples/two-hogs.json"),
            ("--duration", "10ms"),
        ] {
            let left_out = flag == "--duration" && has("--no-duration");
            if !has(flag) && !left_out {
                v.push(flag.into());
                v.push(value.into());
            }
        }
        v.push("--trace".into());
        v.push(trace.display().to_string());
    }
    v.push("--no-progress".into());
    if !matches!(case[0], "run" | "compare" | "reproduce") {
        v.pop();
    }
    v
}

#[test]
fn hostile_inputs_get_their_exit_code_and_message() {
    let dir = files_dir();
    let trace = tmp("hostile.trace");
    let mut failures = Vec::new();
    for (case, code, words) in CASES {
        let args = argv(case, &dir, &trace);
        let o = bin().args(&args).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        let mut why = Vec::new();
        if o.status.code() != Some(*code) {
            why.push(format!("exit {:?}, expected {code}", o.status.code()));
        }
        let hay = if *code == 0 {
            format!("{out}{err}")
        } else {
            err.clone()
        };
        for w in *words {
            if !hay.contains(w) {
                why.push(format!("'{w}' missing"));
            }
        }
        if err.contains("panicked") {
            why.push("panicked".into());
        }
        match code {
            2 if err.lines().count() != 1 || !out.is_empty() => {
                why.push("not one line on stderr and nothing on stdout".into());
            }
            1 => {
                // Input warnings may come first; the failure is the last line, and only one.
                let last = err.lines().last().unwrap_or("");
                let errors = err
                    .lines()
                    .filter(|l| !l.starts_with("schedlab: warning: "))
                    .count();
                if !last.starts_with("schedlab: invariant violated: ") || errors != 1 {
                    why.push("not one failure line".into());
                }
            }
            _ => {}
        }
        if *code != 0 && trace.exists() {
            why.push("trace file left behind".into());
        }
        let _ = std::fs::remove_file(&trace);
        let stem = trace.file_name().unwrap().to_string_lossy().to_string();
        let left: Vec<String> = std::fs::read_dir(trace.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.starts_with(&stem))
            .collect();
        if !left.is_empty() {
            why.push(format!("files left behind: {left:?}"));
            for n in left {
                let _ = std::fs::remove_file(trace.parent().unwrap().join(n));
            }
        }
        if !why.is_empty() {
            failures.push(format!("{case:?}: {}\n  stderr: {err}", why.join("; ")));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

mod argv_property {
    use super::*;
    use proptest::prelude::*;

    fn arg() -> impl Strategy<Value = Vec<String>> {
        let flag = prop_oneof![
            Just(vec!["--platform".to_string()]),
            Just(vec!["--kernel".to_string()]),
            Just(vec!["--workload".to_string()]),
            Just(vec!["--seed".to_string()]),
            Just(vec!["--runs".to_string()]),
            Just(vec!["--json".to_string()]),
            Just(vec!["--strict".to_string()]),
            Just(vec!["--quick".to_string()]),
            Just(vec!["--bogus".to_string()]),
            Just(vec!["-x".to_string()]),
            Just(vec!["--".to_string()]),
            Just(vec!["-".to_string()]),
        ];
        let value = prop_oneof![
            Just("smp:1"),
            Just("smp:0"),
            Just("smp:99999999999"),
            Just("rpi5"),
            Just("v6.18"),
            Just("v6.6 NO_PLACE_LAG"),
            Just("v7.1 base_slice_ns=4294967295"),
            Just("hackbench -g 1 -l 10"),
            Just("stress-ng --pipe 1"),
            Just("cyclictest -t 1 -l 10"),
            Just("schbench -m 1 -t 1 -r 1"),
            Just("rt-app examples/one-hog.json"),
            Just("0"),
            Just("1"),
            Just("3"),
            Just("18446744073709551615"),
            Just("-1"),
            Just(""),
            Just("=x"),
            Just("features"),
            Just("kernel"),
            Just("platform"),
        ];
        (flag, proptest::option::of(value)).prop_map(|(mut f, v)| {
            if let Some(v) = v {
                f.push(v.to_string());
            }
            f
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn generated_argv_never_panics(
            cmd in prop_oneof![Just("run"), Just("compare"), Just("list"), Just("show"), Just("help"), Just("frob"), Just("--version")],
            args in proptest::collection::vec(arg(), 0..6),
        ) {
            let mut v: Vec<String> = vec![cmd.to_string()];
            v.extend(args.into_iter().flatten());
            if matches!(cmd, "run" | "compare") {
                // At most 1 ms simulated, few seeds.
                v.retain(|a| a != "--runs");
                v.extend(["--duration".to_string(), "1ms".to_string(), "--no-progress".to_string()]);
            }
            let o = bin().args(&v).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr).to_string();
            prop_assert!(!err.contains("panicked"), "{v:?}: {err}");
            let code = o.status.code();
            // Exit 1 only for an invariant violated under --strict (a run failure, one line).
            let strict_failure = v.iter().any(|a| a == "--strict")
                && err.lines().last().is_some_and(|l| l.starts_with("schedlab: invariant violated: "));
            prop_assert!(
                matches!(code, Some(0) | Some(2)) || (code == Some(1) && strict_failure),
                "{v:?}: exit {code:?}: {err}"
            );
            if code == Some(2) {
                let errors: Vec<&str> = err.lines().filter(|l| !l.starts_with("schedlab: warning: ")).collect();
                prop_assert_eq!(errors.len(), 1, "{:?}: {}", v, err);
            }
        }
    }
}
