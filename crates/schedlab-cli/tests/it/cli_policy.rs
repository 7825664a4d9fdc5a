//! Scheduling policy from the command line: `chrt`, `taskset`, `policy=`, cyclictest's `-p`,
//! rt-app's SCHED_FIFO/SCHED_DEADLINE threads and the admission check before a run.

use crate::common::{run, tmp};
use serde_json::Value;

/// Exit 2, nothing on stdout, one line on stderr with every needle.
fn refused(args: &[&str], needles: &[&str]) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

fn metric(d: &Value, workload: usize, name: &str) -> f64 {
    d["workloads"][workload]["metrics"][name]["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no metric {name}: {}", d["workloads"][workload]))
}

#[test]
fn bad_policy_and_affinity_inputs_exit_2_naming_the_value() {
    let cases: &[(&str, &[&str])] = &[
        ("chrt -f 0 cyclictest -D 1", &["chrt -f 0", ": 0", "1..99"]),
        ("chrt -f 100 cyclictest -D 1", &["chrt -f 100", ": 100"]),
        ("chrt --rr 0 hackbench", &["chrt --rr 0", ": 0"]),
        ("chrt -o 5 hackbench", &["chrt -o 5", ": 5", "only 0"]),
        ("chrt -b 1 hackbench", &["chrt -b 1", ": 1"]),
        ("chrt -f x hackbench", &["'x'", "priority"]),
        ("chrt -p 10 1234", &["chrt -p", "existing pid"]),
        (
            "chrt -d --sched-runtime 1000 --sched-deadline 1000000 0 rt-app x.json",
            &["1000 ns", "1024 ns minimum", "EINVAL"],
        ),
        (
            "chrt -d -T 5000000 -D 1000000 -P 10000000 0 rt-app x.json",
            &["sched_runtime 5000000 ns exceeds sched_deadline 1000000 ns"],
        ),
        (
            "chrt -d -T 20000 -P 50000 0 rt-app x.json",
            &["period 50000 ns", "EINVAL"],
        ),
        (
            "policy=deadline:1ms/500us/2ms rt-app x.json",
            &[
                "policy=deadline:1ms/500us/2ms",
                "sched_runtime 1000000 ns exceeds",
            ],
        ),
        // a SCHED_DEADLINE task cannot fork (sched_fork: EAGAIN)
        (
            "chrt -d -T 1000000 -P 10000000 0 hackbench",
            &["chrt -d -T 1000000 -P 10000000 0", "hackbench", "EAGAIN"],
        ),
        ("policy=fifo:0 cyclictest -D 1", &["policy=fifo:0", "1..99"]),
        ("taskset -c '' hackbench", &["taskset -c", "selects no CPU"]),
        (
            "taskset 0x0 hackbench",
            &["taskset 0x0", "'0x0' selects no CPU"],
        ),
        ("taskset zz hackbench", &["'zz'"]),
        (
            "taskset -c 0-5 hackbench",
            &["taskset -c 0-5", "CPU 5", "0-1"],
        ),
        ("taskset 0x10 hackbench", &["taskset 0x10", "CPU 4", "0-1"]),
        (
            "taskset -c 0 chrt -f 101 cyclictest -D 1",
            &["chrt -f 101", ": 101"],
        ),
        ("cyclictest -p 100 -D 1", &["-p", "'100'"]),
        // the prefixes of a SCHED_IDLE or niced run (issue #15): the value is named
        (
            "chrt --idle 5 schbench -m 1 -t 4",
            &["chrt --idle 5", ": 5", "SCHED_IDLE takes only 0"],
        ),
        ("nice -n abc hackbench", &["nice -n abc", "'abc'"]),
        ("chrt", &["'chrt'", "no priority and command"]),
        ("chrt --idle 0", &["chrt --idle 0", "no command"]),
        ("nice -n 19", &["nice -n 19", "no command"]),
        (
            "chrt -i --sched-runtime 8000000 hackbench",
            &[
                "chrt -i --sched-runtime 8000000",
                "SCHED_OTHER, SCHED_BATCH",
            ],
        ),
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
                "--workload",
                line,
            ],
            needles,
        );
    }
}

/// cyclictest on CPU 0 beside a fair CPU hog (stress-ng's pipe pair, also on CPU 0), 1 ms
/// interval for 300 ms. With `-p 80` the measuring thread is SCHED_FIFO: its hrtimer has no
/// slack (RT tasks get none) and its wake-up preempts the fair hog at once (the RT class is
/// above fair; `resched_curr`), so every latency is only the timer interrupt + wake-up +
/// context switch costs, a few µs. As SCHED_OTHER (`--policy=other`, no priority) the same
/// thread sleeps with the 50 µs default timer slack and then competes with the hog under
/// EEVDF, so even its smallest latency is at least the slack. Expected: FIFO max < 50 µs ≤
/// OTHER min (the FIFO max below the OTHER minimum).
#[test]
fn fifo_cyclictest_beats_sched_other_under_a_fair_hog() {
    let lat = |ct: &str| {
        let d = json(&[
            "run",
            "--platform",
            "smp:2",
            "--kernel",
            "v6.18",
            "--duration",
            "300ms",
            "--json",
            "--workload",
            &format!("taskset -c 0 {ct} -i 1000 -q"),
            "--workload",
            "taskset -c 0 stress-ng --pipe 1",
        ]);
        let task_policies: Vec<String> = d["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["comm"] == "cyclictest")
            .map(|t| t["policy"].as_str().unwrap_or("").to_string())
            .collect();
        // cyclictest's own line: "T: 0 (pid) P:80 I:1000 C: n Min: a Act: b Avg: c Max: d"
        let out = d["workloads"][0]["output"].as_str().unwrap().to_string();
        let min: f64 = out
            .split("Min:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no Min: in {out}"));
        (min, metric(&d, 0, "lat_max_us"), task_policies)
    };
    let (_, fifo_max, fifo_pol) = lat("cyclictest -p 80");
    let (other_min, _, other_pol) = lat("cyclictest --policy=other");
    assert!(fifo_pol.iter().any(|p| p == "SCHED_FIFO"), "{fifo_pol:?}");
    assert!(
        other_pol.iter().all(|p| p == "SCHED_OTHER"),
        "{other_pol:?}"
    );
    assert!(fifo_max < 50.0, "FIFO max {fifo_max} us");
    assert!(other_min >= 50.0, "OTHER min {other_min} us");
}

/// An rt-app file with a SCHED_FIFO thread runs from the CLI; the thread shows as SCHED_FIFO.
#[test]
fn rtapp_fifo_file_runs() {
    let f = tmp("fifo.json");
    std::fs::write(
        &f,
        r#"{ "global": { "duration": 1 },
             "tasks": {
               "rt": { "policy": "SCHED_FIFO", "priority": 50, "loop": 10, "run": 1000,
                       "timer": { "ref": "t", "period": 10000 } },
               "hog": { "loop": 1, "run": 200000 } } }"#,
    )
    .unwrap();
    let d = json(&[
        "run",
        "--platform",
        "smp:1",
        "--kernel",
        "v6.12",
        "--json",
        "--workload",
        &format!("rt-app {}", f.display()),
    ]);
    let _ = std::fs::remove_file(&f);
    let rt = d["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["comm"] == "rt-0")
        .expect("thread rt-0");
    assert_eq!(rt["policy"], "SCHED_FIFO");
    // all ten activations happen although the hog wants the only CPU for 200 ms, and each
    // timer wake-up preempts the hog at once with no timer slack (RT), so rt-app's wake-up
    // latency stays below the 50 µs slack a SCHED_OTHER thread would get
    assert_eq!(metric(&d, 0, "rt-0.activations"), 10.0);
    let lat = metric(&d, 0, "rt-0.wu_lat_max_us");
    assert!(lat < 50.0, "wake-up latency {lat} us");
}

/// rt-app `pi_enabled` (rt-dl.md §2.11): priority inversion on one CPU. L (FIFO 10) takes the
/// mutex and runs 10 ms with it; H (FIFO 30) wants it at 1 ms, then runs 0.1 ms and meets a
/// timer due 15 ms after its start; M (FIFO 20) wakes at 2 ms and runs 20 ms. With priority
/// inheritance L runs at H's priority from 1 ms, M cannot preempt it, L unlocks at ≈ 10 ms and
/// H reaches its timer at ≈ 10.1 ms: on time. Without it M preempts L at 2 ms until 22 ms, L
/// unlocks at ≈ 30 ms and H reaches its timer ≈ 15 ms late: one missed timer.
#[test]
fn rtapp_pi_enabled_bounds_priority_inversion() {
    let missed = |pi: bool| {
        let f = tmp(&format!("pi-{pi}.json"));
        std::fs::write(
            &f,
            format!(
                r#"{{ "global": {{ "duration": 1, "pi_enabled": {pi} }},
                     "tasks": {{
                       "l": {{ "policy": "SCHED_FIFO", "priority": 10, "loop": 1,
                               "lock": "m", "run": 10000, "unlock": "m" }},
                       "h": {{ "policy": "SCHED_FIFO", "priority": 30, "loop": 1, "sleep": 1000,
                               "lock": "m", "run": 100, "unlock": "m",
                               "timer": {{ "ref": "t", "period": 15000 }} }},
                       "m": {{ "policy": "SCHED_FIFO", "priority": 20, "loop": 1, "sleep": 2000,
                               "run": 20000 }} }} }}"#
            ),
        )
        .unwrap();
        let d = json(&[
            "run",
            "--platform",
            "smp:1",
            "--kernel",
            "v6.18",
            "--json",
            "--workload",
            &format!("rt-app {}", f.display()),
        ]);
        let _ = std::fs::remove_file(&f);
        metric(&d, 0, "missed_timers")
    };
    assert_eq!(missed(true), 0.0);
    assert_eq!(missed(false), 1.0);
}

/// rt-dl.md vector 7.12 from the CLI: 4 CPUs, 25 ms / 100 ms each. v6.12 (fair_servers hold
/// 4 x 52428): 14 admitted, the 15th (`d-14`) refused; its message gives the numbers:
/// 209712 + 14 x 262144 = 3879728 held, + 262144 > 996147 x 4096 / 1024 = 3984588.
#[test]
fn admission_refusal_names_the_task_and_the_numbers() {
    let f = tmp("dl15.json");
    std::fs::write(
        &f,
        r#"{ "global": { "duration": 1 },
             "tasks": { "d": { "instance": 15, "policy": "SCHED_DEADLINE",
                               "dl-runtime": 25000, "dl-period": 100000, "run": 1000,
                               "timer": { "ref": "t", "period": 100000 } } } }"#,
    )
    .unwrap();
    let line = format!("rt-app {}", f.display());
    refused(
        &[
            "run",
            "--platform",
            "smp:4",
            "--kernel",
            "v6.12",
            "--duration",
            "10ms",
            "--workload",
            &line,
        ],
        &[
            "task 'd-14'",
            "EBUSY",
            "dl_bw 262144",
            "allows 3984588",
            "holds 3879728",
            "fair_server 4 x 52428",
        ],
    );
    let _ = std::fs::remove_file(&f);
}

/// The policy a prefix gives the program's first task is inherited by every task it forks
/// (stress-ng's workers, schbench's message and worker threads, hackbench's workers).
#[test]
fn children_inherit_the_prefix_policy() {
    for (line, policy) in [
        ("chrt -r 10 stress-ng --pipe 1", "SCHED_RR"),
        ("chrt --fifo 20 schbench -m 1 -t 2 -r 1", "SCHED_FIFO"),
        ("policy=fifo:5 hackbench -g 1 -f 2 -l 5", "SCHED_FIFO"),
        (
            "taskset 0x2 chrt -b 0 hackbench -g 1 -f 2 -l 5",
            "SCHED_BATCH",
        ),
    ] {
        let d = json(&[
            "run",
            "--platform",
            "smp:2",
            "--kernel",
            "v6.18",
            "--duration",
            "20ms",
            "--json",
            "--workload",
            line,
        ]);
        let tasks = d["tasks"].as_array().unwrap();
        assert!(tasks.len() >= 3, "{line}: {} tasks", tasks.len());
        for t in tasks {
            assert_eq!(t["policy"], policy, "{line}: {t}");
        }
    }
}

/// `chrt --idle 0 CMD` is `policy=idle CMD` and `nice -n 19 CMD` is `nice=19 CMD`: the same
/// run byte for byte (JSON, apart from the workload line), with every task of the program —
/// schbench's main, message and worker threads, hackbench's senders and receivers —
/// SCHED_IDLE resp. nice 19, as fork inherits policy and nice.
#[test]
fn chrt_idle_and_nice_prefixes_are_the_placement_tokens() {
    let run_json = |line: &str| {
        json(&[
            "run",
            "--platform",
            "smp:8",
            "--kernel",
            "v6.19",
            "--duration",
            "100ms",
            "--json",
            "--workload",
            line,
        ])
    };
    for (prefix, token, tasks, n, policy, nice) in [
        // -m 1 -t 4: main + 1 message thread + 4 workers
        (
            "chrt --idle 0",
            "policy=idle",
            "schbench -m 1 -t 4",
            6,
            "SCHED_IDLE",
            0,
        ),
        // -g 1 -f 2: main + 2 senders + 2 receivers
        (
            "nice -n 19",
            "nice=19",
            "hackbench -g 1 -f 2 -l 50",
            5,
            "SCHED_OTHER",
            19,
        ),
    ] {
        let a = run_json(&format!("{prefix} {tasks}"));
        let mut b = run_json(&format!("{token} {tasks}"));
        b["workloads"][0]["line"] = a["workloads"][0]["line"].clone();
        assert_eq!(a, b, "{prefix} vs {token}");
        let t = a["tasks"].as_array().unwrap();
        assert_eq!(t.len(), n, "{prefix} {tasks}: {t:?}");
        for t in t {
            assert_eq!(
                (t["policy"].as_str(), t["nice"].as_i64()),
                (Some(policy), Some(nice)),
                "{t}"
            );
        }
    }
}
