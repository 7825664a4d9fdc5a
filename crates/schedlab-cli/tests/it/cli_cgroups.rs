//! cgroups from the command line (issue #13 item 2): `cgroup=` on a workload line, the
//! `cgexec` prefix, rt-app's `taskgroup`, `--cgroup` and `--cgroup-file` with `[cgroups]`
//! tables, the group path in the per-task output, and the refusals (exit 2, one line naming the
//! culprit).
//!
//! Expected shares by hand (fair.md §10.4): on one CPU each group's entity at the root weighs
//! its cpu.weight (100 → 1024) whatever the number of tasks in it, and the tasks of a group
//! share the group's part by their own weights.

use crate::common::{run, tmp};
use serde_json::Value;

/// An rt-app file of `n` nice-0 threads that only run (100 ms `run` events, forever), each in
/// `taskgroup` if given.
fn hogs(name: &str, n: u32, taskgroup: Option<&str>) -> String {
    let p = tmp(name);
    let tg = taskgroup
        .map(|g| format!("\"taskgroup\": \"{g}\", "))
        .unwrap_or_default();
    std::fs::write(
        &p,
        format!(
            r#"{{ "tasks": {{ "hog": {{ "instance": {n}, {tg}"loop": -1, "run": 100000 }} }} }}"#
        ),
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

/// `schedlab run --platform smp:1 --kernel v6.18 --duration 2s --json` with `extra` args;
/// returns (comm, cgroup, share of the 2 s) of every task that ran.
fn shares(extra: &[&str]) -> Vec<(String, String, f64)> {
    let mut args = vec![
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.18",
        "--duration",
        "2s",
        "--no-progress",
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["comm"] != "rt-app")
        .map(|t| {
            (
                t["comm"].as_str().unwrap().to_string(),
                t["cgroup"].as_str().unwrap_or("(none)").to_string(),
                t["sum_exec_runtime_ns"].as_u64().unwrap() as f64 / 2e9,
            )
        })
        .collect()
}

/// Each (cgroup, share) of `want` matches the tasks in that group, within 1 % of the CPU.
fn check(got: &[(String, String, f64)], want: &[(&str, f64)]) {
    for &(g, share) in want {
        let in_g: Vec<_> = got.iter().filter(|t| t.1 == g).collect();
        assert!(!in_g.is_empty(), "no task in {g}: {got:?}");
        for t in in_g {
            assert!((t.2 - share).abs() < 0.01, "{g}: want {share}, got {got:?}");
        }
    }
    assert!(
        got.iter().all(|t| want.iter().any(|w| w.0 == t.1)),
        "{got:?}"
    );
}

/// `cgroup=/a` with one hog and `cgroup=/b` with two: /a's hog gets 1/2 of the CPU, each of /b's
/// 1/4 — without groups each would get 1/3.
#[test]
fn cgroup_placement_splits_the_cpu_between_groups() {
    let one = hogs("one.json", 1, None);
    let two = hogs("two.json", 2, None);
    let a = format!("cgroup=/a rt-app {one}");
    let b = format!("cgroup=/b rt-app {two}");
    let got = shares(&["--workload", &a, "--workload", &b]);
    check(&got, &[("/a", 0.5), ("/b", 0.25)]);
    // the text table shows the group of every task (rt-app's main too)
    let o = run(&[
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.18",
        "--duration",
        "100ms",
        "--workload",
        &a,
        "--workload",
        &b,
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("SYS(s)  CGROUP\n"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" rt-app ")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].ends_with("  /a") && rows[1].ends_with("  /b"),
        "{rows:?}"
    );
}

/// The same with the `cgexec` prefix (`-g cpu,cpuacct:PATH`, `--sticky`), nested groups.
#[test]
fn cgexec_places_the_workload() {
    let one = hogs("one-x.json", 1, None);
    let two = hogs("two-x.json", 2, None);
    let a = format!("cgexec --sticky -g cpu,cpuacct:/x/a rt-app {one}");
    let b = format!("taskset -c 0 cgexec -g cpu:/x/b rt-app {two}");
    let got = shares(&["--workload", &a, "--workload", &b]);
    check(&got, &[("/x/a", 0.5), ("/x/b", 0.25)]);
}

/// rt-app's task-level `taskgroup`: one hog in /A and three in /B → 1/2 and 1/6 each.
#[test]
fn rtapp_taskgroups() {
    let p = tmp("tg.json");
    std::fs::write(
        &p,
        r#"{ "tasks": {
             "a": { "taskgroup": "/A", "loop": -1, "run": 100000 },
             "b": { "instance": 3, "taskgroup": "/B", "loop": -1, "run": 100000 } } }"#,
    )
    .unwrap();
    let w = format!("rt-app {}", p.to_str().unwrap());
    let got = shares(&["--workload", &w]);
    check(&got, &[("/A", 0.5), ("/B", 1.0 / 6.0)]);
}

/// cpu.weight 200 for /a against /b's default 100: 2/3 and 1/3 — from a `[cgroups]` file and,
/// the same, from `--cgroup`.
#[test]
fn cgroup_weights_from_a_file_and_from_the_flag() {
    let one = hogs("w1.json", 1, None);
    let a = format!("cgroup=/a rt-app {one}");
    let b = format!("cgroup=/b rt-app {one}");
    let f = tmp("cgroups.toml");
    std::fs::write(&f, "# weights\n[cgroups.\"/a\"]\nweight = 200\n").unwrap();
    let fs = f.to_str().unwrap();
    let want = [("/a", 2.0 / 3.0), ("/b", 1.0 / 3.0)];
    check(
        &shares(&["--cgroup-file", fs, "--workload", &a, "--workload", &b]),
        &want,
    );
    check(
        &shares(&[
            "--cgroup",
            "/a:weight=200",
            "--workload",
            &a,
            "--workload",
            &b,
        ]),
        &want,
    );
    // cpu.weight.nice -5 is weight 3121 (sched_prio_to_weight[15]) against 1024:
    // 3121 / 4145 = 0.753
    let got = shares(&[
        "--cgroup",
        "/a:weight_nice=-5",
        "--workload",
        &a,
        "--workload",
        &b,
    ]);
    check(&got, &[("/a", 3121.0 / 4145.0), ("/b", 1024.0 / 4145.0)]);
}

/// Runs that must fail with exit 2 and one line naming the culprit.
#[test]
fn bad_cgroup_input_exits_2_naming_it() {
    let one = hogs("bad.json", 1, None);
    let w = format!("rt-app {one}");
    let f = tmp("bad-cgroups.toml");
    let fs = f.to_str().unwrap().to_string();
    let base = [
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.18",
        "--duration",
        "10ms",
        "--workload",
        &w,
    ];
    let file_cases: &[(&str, &[&str])] = &[
        (
            "[cgroups.\"/a\"]\nweight = 0\n",
            &[":2:", "weight = 0", "1..10000"],
        ),
        (
            "\n[cgroups.\"/a\"]\nweight = 10001\n",
            &[":3:", "10001", "1..10000"],
        ),
        (
            "[cgroups.\"/a\"]\nidle = 2\n",
            &[":2:", "idle = 2", "0 or 1"],
        ),
        ("[cgroups.\"/a\"]\nweigth = 5\n", &[":2:", "weigth"]),
        ("[cgroups.\"a\"]\nweight = 5\n", &[":1:", "\"a\"", "'/'"]),
        ("[cgroups.\"/a/../b\"]\n", &[":1:", "'..'"]),
    ];
    for &(text, needles) in file_cases {
        std::fs::write(&f, text).unwrap();
        let mut args = base.to_vec();
        args.extend(["--cgroup-file", fs.as_str()]);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&fs), "{text:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{text:?}: '{n}' not in {err}");
        }
    }
    let flag_cases: &[(&str, &[&str])] = &[
        ("/a:weight=0", &["--cgroup '/a:weight=0'", "1..10000"]),
        ("/a:weight=10001", &["10001"]),
        ("/a:idle=x", &["idle = \"x\""]),
        ("/a:bogus=1", &["unknown key 'bogus'"]),
        ("a:weight=1", &["--cgroup 'a:weight=1'", "'/'"]),
    ];
    for &(v, needles) in flag_cases {
        let mut args = base.to_vec();
        args.extend(["--cgroup", v]);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{v}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        for n in needles {
            assert!(err.contains(n), "{v}: '{n}' not in {err}");
        }
    }
    // rt-app taskgroup with a path mkdir refuses, and cgexec without a cpu path
    let p = tmp("bad-tg.json");
    std::fs::write(
        &p,
        r#"{ "tasks": { "t": { "taskgroup": "/a//b", "run": 1 } } }"#,
    )
    .unwrap();
    let w = format!("rt-app {}", p.to_str().unwrap());
    let o = run(&[
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.18",
        "--workload",
        &w,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("\"/a//b\"") || err.contains("/a//b"), "{err}");
    let o = run(&[
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.18",
        "--workload",
        "cgexec -g cpu hackbench",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cgexec -g cpu"), "{err}");
}

/// `chrt -o --sched-runtime NS 0 CMD`: the custom slice of a SCHED_OTHER task, which the kernel
/// clamps to 0.1..100 ms (`__setscheduler_params`: NSEC_PER_MSEC/10 .. NSEC_PER_MSEC*100); the
/// rt-app threads inherit it from main. `slice=8ms` on the line is the same request.
#[test]
fn chrt_custom_slice_is_clamped_by_the_kernel() {
    let one = hogs("slice.json", 1, None);
    for (prefix, want) in [
        ("chrt -o --sched-runtime 50000 0", 100_000u64),
        ("chrt --other -T 8000000", 8_000_000),
        ("chrt -o -T 200000000 0", 100_000_000),
        ("slice=8ms", 8_000_000),
    ] {
        let w = format!("{prefix} rt-app {one}");
        let o = run(&[
            "run",
            "--platform",
            "smp:1",
            "--kernel",
            "v6.18",
            "--duration",
            "10ms",
            "--json",
            "--workload",
            &w,
        ]);
        assert_eq!(o.status.code(), Some(0), "{w}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        for t in v["tasks"].as_array().unwrap() {
            assert_eq!(t["slice_ns"].as_u64(), Some(want), "{w}: {t}");
            // no task outside the root: no cgroup field
            assert!(t.get("cgroup").is_none(), "{w}");
        }
    }
}

/// A scenario file's `[cgroups]` table applies to every run of the scenario: rt-app threads "a"
/// in /A (cpu.weight 200) and "b" in /B (default 100) loop over 10 ms runs on one CPU for 3 s,
/// so by hand "a" gets 2 s (200 loops) and "b" 1 s (100 loops); the loop in progress at the end
/// is not counted, so 199 and 99 may show (without the table: 150 each).
#[test]
fn scenario_files_take_a_cgroups_table() {
    let json = tmp("sc-tg.json");
    std::fs::write(
        &json,
        r#"{ "tasks": { "a": { "taskgroup": "/A", "loop": -1, "run": 10000 },
                        "b": { "taskgroup": "/B", "loop": -1, "run": 10000 } } }"#,
    )
    .unwrap();
    let sc = tmp("sc.toml");
    let text = format!(
        "name = \"cg\"\ntitle = \"weights\"\nseed = \"none\"\nplatform = \"smp:1\"\n\
         workloads = [\"rt-app {}\"]\nduration = \"3s\"\nruns = 1\nbaseline = \"v6.18\"\n\
         metrics = [\"a-0.activations\", \"b-1.activations\"]\n\n\
         [[variant]]\nkernel = \"v6.18\"\nlabel = \"v6.18\"\n\n[cgroups.\"/A\"]\nweight = 200\n",
        json.display()
    );
    std::fs::write(&sc, &text).unwrap();
    let scs = sc.to_str().unwrap();
    let o = run(&["reproduce", scs, "--json", "--no-progress"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["scenarios"][0]["rows"].as_array().unwrap();
    let sim = |m: &str| {
        rows.iter().find(|r| r["metric"] == m).unwrap()["simulated"]
            .as_f64()
            .unwrap()
    };
    let (a, b) = (sim("a-0.activations"), sim("b-1.activations"));
    assert!((198.0..=200.0).contains(&a), "a: {a}");
    assert!((98.0..=100.0).contains(&b), "b: {b}");
    // a bad value is named with the scenario file and its line (16: `weight = 0`)
    std::fs::write(&sc, text.replace("weight = 200", "weight = 0")).unwrap();
    let o = run(&["reproduce", scs, "--no-progress"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{scs}:16: cgroup /A: weight = 0")),
        "{err}"
    );
}
