//! rt-app files run on the simulated kernel (workloads.md §10). Every machine here is
//! `MachineDesc::ideal`: zero costs, HZ = 1000, full preemption, so times come out exact and
//! expected values are computed by hand beside each assertion. Fair sleepers get the default
//! 50 µs timer slack (§1.6): with no other timer interrupt on their CPU (the tick stops on an
//! idle CPU) their hrtimer fires at T + 50 µs.

use std::path::{Path, PathBuf};

use schedlab_sched::sched::Policy;
use schedlab_sched::{Kernel, KernelConfig, MachineDesc, PreemptModel};
use schedlab_workloads::rtapp::{load_rtapp, parse_rtapp, RtApp, ThreadLog, ThreadRecord};
use schedlab_workloads::{parse_workload, Env, Placement, Workload, WorkloadError};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn kernel(ncpus: usize, seed: u64) -> Kernel {
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let m = MachineDesc::ideal(ncpus, 1000, PreemptModel::Full);
    let mut k = Kernel::new(cfg, m, seed).unwrap();
    k.strict = true;
    k.check_invariants = true;
    k
}

fn env() -> Env {
    Env {
        placement: Placement::default(),
        tg: None,
        index: 0,
        duration_ns: None,
    }
}

fn start(k: &mut Kernel, json: &str) -> RtApp {
    let f = parse_rtapp(json, "t.json").unwrap_or_else(|e| panic!("{e}"));
    let mut w = RtApp::new("rt-app t.json", "t.json", f).unwrap_or_else(|e| panic!("{e}"));
    w.setup(k, &env()).unwrap_or_else(|e| panic!("{e}"));
    w
}

fn thread<'a>(threads: &'a [ThreadRecord], name: &str) -> &'a ThreadRecord {
    threads
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no thread {name} in {:?}", names(threads)))
}

fn names(threads: &[ThreadRecord]) -> Vec<String> {
    threads.iter().map(|t| t.name.clone()).collect()
}

fn user_ns(k: &Kernel, t: &ThreadRecord) -> u64 {
    k.tasks[t.task.expect("thread ran").index()].stats.user_ns
}

#[test]
fn run_then_sleep_does_one_ms_of_work_per_ten() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": { "t": { "loop": -1, "run": 1000, "sleep": 9000 } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    let t = thread(&th, "t-0");
    // One loop = 1 ms of work + 9 ms sleep + 50 µs slack = 10.05 ms, starting at t = 0.
    // Loops completed by 1 s: floor(1000 / 10.05) = 99; the 100th started at 994.95 ms and
    // finished its 1 ms run at 995.95 ms, so the thread has run 100 × 1 ms.
    assert_eq!(t.summary.activations, 99);
    assert_eq!(user_ns(&k, t), 100 * MS);
    for (i, r) in t.rows.iter().enumerate() {
        assert_eq!(r.start_ns, i as u64 * 10_050 * US);
        assert_eq!(r.end_ns - r.start_ns, 10_050 * US);
        assert_eq!((r.run_us, r.c_duration_us, r.perf), (1000, 1000, 1000));
        assert_eq!((r.c_period_us, r.wu_lat_us, r.missed), (0, 0, 0));
    }
    // No timer: the latency columns are empty.
    assert_eq!(t.summary.wu_lat_mean(), None);
}

#[test]
fn absolute_timer_activates_once_per_period_with_slack_latency() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "global": { "duration": 5 },
             "tasks": { "t": { "loop": -1, "run": 1000,
                               "timer": { "ref": "unique_t", "period": 10000, "mode": "absolute" } } } }"#,
    );
    // Loop k runs 1 ms, then sleeps until (k+1)·10 ms and wakes 50 µs later (slack, nothing
    // else interrupts the idle CPU), so it ends at (k+1)·10 ms + 50 µs. By 1000.1 ms that is
    // k = 0..99: floor(1000 / 10) = 100 activations.
    k.run_until(1000 * MS + 100 * US);
    let th = w.threads();
    let t = thread(&th, "t-0");
    let s = t.summary;
    assert_eq!(s.activations, 100);
    // wu_lat = 50 µs of slack in every loop.
    assert_eq!(s.wu_lat_mean(), Some(50.0));
    assert_eq!(s.wu_lat_max, 50);
    // Slack = expiry − time the timer is reached: 10 ms − 1 ms = 9000 µs in loop 0, then
    // (k+1)·10 ms − (k·10 ms + 50 µs + 1 ms) = 8950 µs. Mean (9000 + 99·8950) / 100 = 8950.5.
    assert_eq!(s.slack_mean(), Some(8950.5));
    assert_eq!(s.slack_min, 8950);
    assert_eq!(s.missed, 0);
    assert_eq!(t.rows[0].slack_us, 9000);
    assert_eq!(t.rows[1].start_ns, 10 * MS + 50 * US);
    assert_eq!(t.rows[1].end_ns, 20 * MS + 50 * US);
    let log = &w.thread_logs()[0];
    assert_eq!(log.thread, "t-0");
    assert_eq!(log.file_name, "rt-app-t-0.log");
    let lines: Vec<&str> = log.text.lines().collect();
    assert_eq!(lines[0], "# Policy : SCHED_OTHER priority : 0");
    assert_eq!(lines.len(), 2 + 100);
    // idx perf run period start end rel_st slack c_duration c_period wu_lat
    assert_eq!(
        lines[3],
        format!(
            "{:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
            0, 1000, 1000, 10000, 10050, 20050, 10050, 8950, 1000, 10000, 50
        )
    );
}

#[test]
fn duration_stops_every_thread_and_the_process_exits() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "global": { "duration": 1 },
             "tasks": { "t": { "loop": -1, "run": 1000,
                               "timer": { "ref": "unique_t", "period": 30000, "mode": "absolute" } } } }"#,
    );
    let stop = k.run_until(5000 * MS);
    let th = w.threads();
    let t = thread(&th, "t-0");
    // Loops end at (k+1)·30 ms + 50 µs; main stops the threads 1 s (+ slack) after it went to
    // sleep at the start. Loop 32 ends at 990.05 ms; loop 33 is asleep until 1020 ms when the
    // stop comes, so it is not logged: floor(1000 / 30) = 33 activations.
    assert_eq!(t.summary.activations, 33);
    let stopped = w.stopped_at().expect("main stopped the threads");
    assert!((1000 * MS..1002 * MS).contains(&stopped), "{stopped}");
    // The thread wakes at 1020.05 ms, sees the stop and exits; main joins it and exits too.
    assert_eq!(k.nr_live, 0);
    assert_eq!(stop, 1020 * MS + 50 * US);
    assert!(t.exited);
}

#[test]
fn semaphore_ping_pong_alternates_strictly() {
    // Two CPUs: without the semaphores the threads would run in parallel.
    let mut k = kernel(2, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "ping": { "loop": 10, "run": 100, "sem_post": "to_pong", "sem_wait": "to_ping" },
             "pong": { "loop": 10, "sem_wait": "to_pong", "run": 100, "sem_post": "to_ping" } } }"#,
    );
    let stop = k.run_until(1000 * MS);
    let th = w.threads();
    // ping runs [200k, 200k+100] µs, pong [200k+100, 200k+200]: each loop of either thread
    // lasts exactly 200 µs (its own 100 µs plus the partner's), ten of them end at 2 ms.
    for name in ["ping-0", "pong-1"] {
        let t = thread(&th, name);
        assert_eq!(t.summary.activations, 10, "{name}");
        for (i, r) in t.rows.iter().enumerate() {
            assert_eq!(r.start_ns, i as u64 * 200 * US, "{name} loop {i}");
            assert_eq!(r.end_ns, (i as u64 + 1) * 200 * US, "{name} loop {i}");
            assert_eq!(r.run_us, 100);
        }
        assert_eq!(user_ns(&k, t), 1000 * US);
    }
    assert_eq!(stop, 2 * MS);
}

#[test]
fn barrier_releases_everybody_at_the_last_arrival() {
    let mut k = kernel(3, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "a": { "cpus": [0], "loop": 1, "run0": 1000, "barrier": "b", "run1": 100 },
             "b": { "cpus": [1], "loop": 1, "run0": 2000, "barrier": "b", "run1": 100 },
             "c": { "cpus": [2], "loop": 1, "run0": 3000, "barrier": "b", "run1": 100 } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    // Arrivals at 1, 2 and 3 ms; the last one broadcasts, so all three run their 100 µs from
    // 3 ms and end at 3.1 ms.
    for (name, first) in [("a-0", 1000), ("b-1", 2000), ("c-2", 3000)] {
        let t = thread(&th, name);
        assert_eq!(t.summary.activations, 1, "{name}");
        assert_eq!(t.rows[0].end_ns, 3100 * US, "{name}");
        assert_eq!(t.rows[0].run_us, first + 100, "{name}");
    }
}

#[test]
fn mutex_contention_serialises_the_critical_sections() {
    let mut k = kernel(2, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "x": { "cpus": [0], "loop": 5, "lock": "m", "run": 1000, "unlock": "m" },
             "y": { "cpus": [1], "loop": 5, "lock": "m", "run": 1000, "unlock": "m" } } }"#,
    );
    let stop = k.run_until(1000 * MS);
    let th = w.threads();
    // 2 threads × 5 sections × 1 ms held one at a time: 10 ms (5 ms if they overlapped).
    assert_eq!(stop, 10 * MS);
    // A section is the last 1 ms of its loop (lock and unlock take no time here); the ten
    // sections tile [0, 10 ms] without overlap.
    let mut sections: Vec<u64> = th
        .iter()
        .flat_map(|t| t.rows.iter().map(|r| r.end_ns - 1000 * US))
        .collect();
    sections.sort_unstable();
    assert_eq!(sections, (0..10).map(|i| i * MS).collect::<Vec<_>>());
    for t in &th {
        assert_eq!(user_ns(&k, t), 5 * MS, "{}", t.name);
    }
}

#[test]
fn fork_creates_a_thread_from_a_task_definition() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "parent": { "loop": 1, "fork": "child", "run": 100 },
             "child": { "instance": 0, "loop": 2, "run": 50 } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    // rt-app names a forked thread <task>-<index>-<fork number>.
    assert_eq!(names(&th), ["parent-0", "child-1-0000"]);
    let child = thread(&th, "child-1-0000");
    assert!(child.forked);
    assert_eq!(child.summary.activations, 2);
    assert_eq!(user_ns(&k, child), 100 * US);
    // main + the two threads.
    assert_eq!(w.tasks().len(), 3);
    assert_eq!(k.nr_live, 0);
}

#[test]
fn late_timers_rebase_in_relative_mode_and_keep_the_grid_in_absolute_mode() {
    for (mode, slack) in [
        // relative: late by 5 ms every loop, the expiry moves to "now" each time
        ("relative", [-5000, -5000, -5000, -5000]),
        // absolute: expiries 10, 20, 30, 40 ms reached at 15, 30, 45, 60 ms
        ("absolute", [-5000, -10000, -15000, -20000]),
    ] {
        let mut k = kernel(1, 1);
        let w = start(
            &mut k,
            &format!(
                r#"{{ "tasks": {{ "t": {{ "loop": 4, "run": 15000,
                   "timer": {{ "ref": "tick", "period": 10000, "mode": "{mode}" }} }} }} }}"#
            ),
        );
        k.run_until(1000 * MS);
        let th = w.threads();
        let t = thread(&th, "t-0");
        let got: Vec<i64> = t.rows.iter().map(|r| r.slack_us).collect();
        assert_eq!(got, slack, "{mode}");
        assert_eq!(t.summary.missed, 4, "{mode}");
        assert_eq!(t.summary.wu_lat_max, 0, "{mode}");
    }
}

#[test]
fn resume_wakes_a_suspended_thread_and_an_early_resume_is_lost() {
    let mut k = kernel(2, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "sleeper": { "cpus": [0], "loop": 3, "suspend": "", "run": 100 },
             "waker": { "cpus": [1], "loop": 3, "sleep": 1000, "resume": "sleeper" } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    // The waker sleeps 1 ms, three times. CPU1 is idle while it sleeps and NO_HZ_IDLE stops
    // its tick at idle entry (with high-resolution timers the nohz code only looks at the timer
    // wheel, so the pending hrtimer does not keep the tick alive), so no timer interrupt lands
    // inside the slack window [T, T + 50 µs]: each sleep ends at its hard expiry, T + 50 µs.
    // Resumes at 1.05, 2.10 and 3.15 ms; each time the sleeper runs 100 µs and suspends again.
    let ends: Vec<u64> = thread(&th, "sleeper-0")
        .rows
        .iter()
        .map(|r| r.end_ns)
        .collect();
    assert_eq!(ends, [1150 * US, 2200 * US, 3250 * US]);

    // A resume at t = 0 comes before the suspend at 1 ms: lost. The sleeper stays suspended
    // until rt-app stops at 1 s, and that loop is not logged.
    let mut k = kernel(2, 1);
    let w = start(
        &mut k,
        r#"{ "global": { "duration": 1 }, "tasks": {
             "sleeper": { "cpus": [0], "loop": 1, "run": 1000, "suspend": "" },
             "waker": { "cpus": [1], "loop": 1, "resume": "sleeper" } } }"#,
    );
    k.run_until(5000 * MS);
    let th = w.threads();
    assert_eq!(thread(&th, "sleeper-0").summary.activations, 0);
    assert_eq!(thread(&th, "waker-1").summary.activations, 1);
    // Released by the stop, everybody exits.
    assert_eq!(k.nr_live, 0);
}

#[test]
fn condvar_signal_wakes_one_waiter_and_broadcast_wakes_all() {
    for (wake, expected) in [
        // The signaller's 1 ms sleeps end at their hard expiry (idle CPU, tick stopped; see the
        // resume test): 1.05 ms, then 1.05 + 1.05 = 2.10 ms. One waiter per signal, each then
        // runs 100 µs.
        ("signal", [1150 * US, 2200 * US]),
        // The first broadcast releases both at 1.05 ms (the second finds nobody).
        ("broad", [1150 * US, 1150 * US]),
    ] {
        let mut k = kernel(3, 1);
        let w = start(
            &mut k,
            &format!(
                r#"{{ "tasks": {{
                 "w": {{ "instance": 2, "loop": 1, "lock": "m", "wait": {{ "ref": "c", "mutex": "m" }},
                        "unlock": "m", "run": 100 }},
                 "s": {{ "cpus": [2], "loop": 1, "sleep0": 1000, "lock0": "m", "{wake}0": "c",
                        "unlock0": "m", "sleep1": 1000, "lock1": "m", "{wake}1": "c",
                        "unlock1": "m" }} }} }}"#
            ),
        );
        k.run_until(1000 * MS);
        let th = w.threads();
        let mut ends: Vec<u64> = ["w-0", "w-1"]
            .iter()
            .map(|n| thread(&th, n).rows[0].end_ns)
            .collect();
        ends.sort_unstable();
        assert_eq!(ends, expected, "{wake}");
    }
}

#[test]
fn every_primitive_completes_on_a_platform_with_costs() {
    // rpi5 has non-zero syscall, futex, atomic and clock costs: user-space charges are paid as
    // CPU work ahead of the next system call. Counts must come out as on the ideal machine.
    // The barrier is met once per thread: rt-app's barrier is not safe to reuse in a loop (a
    // thread that passes can come back before the woken ones re-register and pass again).
    let p = schedlab_platform::Platform::resolve("rpi5").unwrap();
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let mut k = Kernel::new(cfg, MachineDesc::from_platform(&p), 1).unwrap();
    k.strict = true;
    k.check_invariants = true;
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "ping": { "loop": 100, "run": 100, "sem_post": "to_pong", "sem_wait": "to_ping" },
             "pong": { "loop": 1, "phases": {
                 "work": { "loop": 100, "sem_wait": "to_pong", "run": 100, "sem_post": "to_ping" },
                 "meet": { "barrier": "b" } } },
             "locker": { "instance": 3, "loop": 1, "phases": {
                 "work": { "loop": 100, "lock": "m", "run": 50, "signal": "c", "unlock": "m" },
                 "meet": { "barrier": "b" } } },
             "waiter": { "loop": 1, "lock": "m", "wait": { "ref": "c", "mutex": "m" },
                         "unlock": "m" } } }"#,
    );
    k.run_until(10_000 * MS);
    let th = w.threads();
    assert_eq!(k.nr_live, 0, "everybody finished");
    for t in &th {
        // A loop of each phase is an activation: 100 + the barrier phase's 1.
        let expected = match t.name.split('-').next().unwrap() {
            "waiter" => 1,
            "ping" => 100,
            _ => 101,
        };
        assert_eq!(t.summary.activations, expected, "{}", t.name);
        assert!(t.exited, "{}", t.name);
    }
    // ping: 100 × 100 µs of run plus the atomics and clock reads it owed.
    let ping = thread(&th, "ping-0");
    assert!(user_ns(&k, ping) > 100 * 100 * US, "{}", user_ns(&k, ping));
    assert!(k.tasks[ping.task.unwrap().index()].stats.sys_ns > 0);
}

#[test]
fn placement_applies_to_threads_that_do_not_set_their_own() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for (file, nice) in [
        // No "priority" in the file: the line's nice=5 applies.
        ("periodic-vs-hog.json", 5),
        // "priority": 0 in the file wins.
        ("two-hogs.json", 0),
    ] {
        let line = format!("nice=5 rt-app {}", dir.join(file).display());
        let (placement, mut w) = parse_workload(&line).unwrap();
        let mut k = kernel(1, 1);
        w.setup(&mut k, &Env { placement, ..env() }).unwrap();
        k.run_until(10 * MS);
        let tasks = w.tasks();
        // main carries the line's placement itself; then the threads.
        assert_eq!(k.tasks[tasks[0].index()].nice, 5);
        for t in &tasks[1..] {
            assert_eq!(k.tasks[t.index()].nice, nice, "{file}");
        }
    }
}

#[test]
fn phase_priority_changes_nice_at_phase_start() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": { "t": { "loop": 1, "phases": {
             "one": { "run": 100 },
             "two": { "priority": 5, "run": 100 } } } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    let t = thread(&th, "t-0");
    assert_eq!(t.summary.activations, 2);
    assert_eq!(k.tasks[t.task.unwrap().index()].nice, 5);
}

/// An RT thread and a fair hog pinned to one CPU: SCHED_FIFO runs first whenever it is runnable
/// (rt-dl.md §1.1 class order), so each 2 ms activation of the FIFO thread starts on its 10 ms
/// timer period; the hog (a 50 ms `run`) only gets the CPU in between. Under fair sharing the
/// periodic thread would often have to wait behind the hog's slice.
#[test]
fn fifo_thread_runs_ahead_of_a_fair_hog() {
    let f = parse_rtapp(
        r#"{ "global": { "duration": 1, "calibration": 1000 },
             "tasks": {
               "rt": { "policy": "SCHED_FIFO", "priority": 50, "cpus": [0], "loop": 5,
                       "run": 2000, "timer": { "ref": "tick", "period": 10000 } },
               "hog": { "cpus": [0], "loop": 4, "run": 50000 } } }"#,
        "t.json",
    )
    .unwrap();
    let mut w = RtApp::new("rt-app t.json", "t.json", f).unwrap();
    let mut k = kernel(2, 1);
    w.setup(&mut k, &env()).unwrap();
    k.run_until(1000 * MS);
    let th = w.threads();
    let rt = thread(&th, "rt-0");
    let t = &k.tasks[rt.task.unwrap().index()];
    assert_eq!((t.policy, t.rt_priority), (Policy::Fifo, 50));
    assert_eq!(rt.summary.activations, 5);
    // every activation ran its 2 ms at once: the FIFO thread was never kept waiting longer
    // than the wake-up path (tens of µs), far below the hog's 3 ms slice
    assert!(
        t.stats.run_delay_ns < 5 * 200_000,
        "run_delay {} ns",
        t.stats.run_delay_ns
    );
}

#[test]
fn arguments_are_checked() {
    let e = parse_workload("rt-app a.json extra")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unexpected argument 'extra'"), "{e}");
    let e = parse_workload("rt-app").err().unwrap().to_string();
    assert!(e.contains("missing FILE"), "{e}");
}

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_example_runs_one_second_or_is_refused_as_documented() {
    let paths = examples();
    assert!(paths.len() >= 6, "{paths:?}");
    for path in paths {
        let line = format!("rt-app {}", path.display());
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        match parse_workload(&line) {
            Err(e) => {
                let m = e.to_string();
                assert!(
                    matches!(e, WorkloadError::Unsupported { .. }),
                    "{name}: {m}"
                );
                match name.as_str() {
                    // §10.8's source is SCHED_DEADLINE.
                    "pipeline.json" => assert!(m.contains("SCHED_DEADLINE"), "{m}"),
                    _ => panic!("{name} refused: {m}"),
                }
            }
            Ok((placement, mut w)) => {
                // §10.7's calibration is "CPU4" (the RB5's first big core)
                let ncpus = if name == "slice-probe.json" { 8 } else { 2 };
                let mut k = kernel(ncpus, 7);
                let env = Env { placement, ..env() };
                w.setup(&mut k, &env)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                k.run_until(1000 * MS);
                let out = w.output(&k);
                assert!(out.contains("activations"), "{name}: {out}");
                if name == "slice-probe.json" {
                    // §10.7: probe in /test-B, ping and pong in /test-A
                    for t in w.tasks().into_iter().skip(1) {
                        let comm = &k.tasks[t.index()].comm;
                        let want = if comm.starts_with("probe") {
                            "/test-B"
                        } else {
                            "/test-A"
                        };
                        assert_eq!(k.task_cgroup_path(t), want, "{comm}");
                    }
                }
                assert!(!w.metrics(&k).is_empty(), "{name}");
            }
        }
    }
}

fn periodic_vs_hog(seed: u64) -> (String, Vec<String>, Vec<ThreadLog>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/periodic-vs-hog.json");
    let f = load_rtapp(&path).unwrap();
    let mut w = RtApp::new("rt-app periodic-vs-hog.json", "periodic-vs-hog.json", f).unwrap();
    let mut k = kernel(1, seed);
    w.setup(&mut k, &env()).unwrap();
    k.run_until(2000 * MS);
    let out = w.output(&k);
    let metrics = w
        .metrics(&k)
        .iter()
        .map(|m| format!("{} {}", m.name, m.value))
        .collect();
    (out, metrics, w.thread_logs())
}

#[test]
fn same_seed_gives_the_same_output() {
    let a = periodic_vs_hog(3);
    let b = periodic_vs_hog(3);
    assert_eq!(a, b);
}

/// A phase that names another policy switches the thread with sched_setscheduler at phase
/// start (rt-app set_thread_param); a later phase's priority is then an RT priority.
#[test]
fn phase_policy_change_switches_the_thread() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": { "p": { "loop": 1, "phases": {
             "a": { "run": 1000 },
             "b": { "policy": "SCHED_FIFO", "run": 1000 },
             "c": { "priority": 7, "run": 1000 } } } } }"#,
    );
    k.run_until(1000 * MS);
    let th = w.threads();
    let t = &k.tasks[thread(&th, "p-0").task.unwrap().index()];
    // rt-app's default RT priority 10 at phase b, then 7 from phase c
    assert_eq!((t.policy, t.rt_priority), (Policy::Fifo, 7));
}

/// `chrt -d … rt-app FILE`: the SCHED_DEADLINE parameters go to the threads that name no
/// policy; rt-app's main task stays SCHED_OTHER (it creates the threads).
#[test]
fn line_deadline_goes_to_the_threads_not_to_main() {
    let mut k = kernel(2, 1);
    let f = parse_rtapp(
        r#"{ "tasks": { "d": { "loop": 2, "run": 100, "sleep": 1000 },
                        "o": { "policy": "SCHED_OTHER", "loop": 1, "run": 100 } } }"#,
        "t.json",
    )
    .unwrap();
    let line = "chrt -d -T 1000000 -P 10000000 0 rt-app t.json";
    let (placement, _) = schedlab_workloads::workload::parse_placement(line).unwrap();
    let mut w = RtApp::new(line, "t.json", f).unwrap();
    let env = Env { placement, ..env() };
    w.setup(&mut k, &env).unwrap();
    let tasks = w.tasks();
    let main = &k.tasks[tasks[0].index()];
    assert_eq!(main.policy, Policy::Normal);
    // the reservations the admission check counts: thread d-0 only, with chrt's filling
    // (no --sched-deadline: the deadline is the period)
    let r = w.dl_reservations(&env.placement);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].task, "d-0");
    assert_eq!(
        (r[0].attr.runtime, r[0].attr.deadline, r[0].attr.period),
        (1_000_000, 10_000_000, 10_000_000)
    );
}

fn runtime_ns(k: &Kernel, t: &ThreadRecord) -> u64 {
    k.se[k.tasks[t.task.expect("thread ran").index()].se.index()].sum_exec_runtime
}

fn cgroup_of(k: &Kernel, t: &ThreadRecord) -> String {
    k.task_cgroup_path(t.task.expect("thread ran")).to_string()
}

/// Task-level `taskgroup` (workloads.md §10.3): the thread starts in its group, created at
/// set-up. One CPU, one hog in /A and three in /B: each group's entity weighs 1024 at the root
/// whatever the number of tasks in it (fair.md §10.4), so /A's hog gets 1/2 of the CPU and
/// each /B hog 1/6. Over 2 s: 1 s and 1/3 s, within 1 %.
#[test]
fn task_taskgroups_split_the_cpu_between_groups() {
    let mut k = kernel(1, 1);
    let w = start(
        &mut k,
        r#"{ "tasks": {
             "a": { "taskgroup": "/A", "loop": -1, "run": 100000 },
             "b": { "instance": 3, "taskgroup": "/B", "loop": -1, "run": 100000 } } }"#,
    );
    k.run_until(2000 * MS);
    let th = w.threads();
    let a = thread(&th, "a-0");
    assert_eq!(cgroup_of(&k, a), "/A");
    let share = |t: &ThreadRecord| runtime_ns(&k, t) as f64 / (2000 * MS) as f64;
    assert!((share(a) - 0.5).abs() < 0.01, "/A: {}", share(a));
    for name in ["b-1", "b-2", "b-3"] {
        let b = thread(&th, name);
        assert_eq!(cgroup_of(&k, b), "/B");
        assert!((share(b) - 1.0 / 6.0).abs() < 0.01, "{name}: {}", share(b));
    }
    // main stays where the line put it (the root)
    let main = w.tasks()[0];
    assert_eq!(k.task_cgroup_path(main), "/");
}

/// Phase-level `taskgroup`: the thread moves at the start of the phase that names one, and a
/// phase without one (or with rt-app's "" = none) leaves it where it is. The thread runs
/// 10 ms in phase "first" (no taskgroup: the line's `cgroup=/line`, inherited from main), then
/// 10 ms in "second" (/moved), then 10 ms in "third" ("").
#[test]
fn phase_taskgroup_moves_the_thread_at_phase_start() {
    let mut k = kernel(1, 1);
    let f = parse_rtapp(
        r#"{ "tasks": { "t": { "loop": 1, "phases": {
             "first": { "run": 10000 },
             "second": { "taskgroup": "/moved", "run": 10000 },
             "third": { "taskgroup": "", "run": 10000 } } } } }"#,
        "t.json",
    )
    .unwrap();
    let mut w = RtApp::new("cgroup=/line rt-app t.json", "t.json", f).unwrap();
    let (placement, _) =
        schedlab_workloads::workload::parse_placement("cgroup=/line rt-app t.json").unwrap();
    let tg = k.cgroup_mkdir_p("/line").unwrap();
    let e = Env {
        placement,
        tg: Some(tg),
        ..env()
    };
    w.setup(&mut k, &e).unwrap();
    // alone on the CPU with zero costs: phase n runs over [10·(n−1), 10·n) ms
    k.run_until(5 * MS);
    let t = thread(&w.threads(), "t-0").clone();
    assert_eq!(cgroup_of(&k, &t), "/line");
    k.run_until(15 * MS);
    assert_eq!(cgroup_of(&k, &t), "/moved");
    k.run_until(25 * MS);
    assert_eq!(cgroup_of(&k, &t), "/moved");
    assert_eq!(k.task_cgroup_path(w.tasks()[0]), "/line");
}

/// A taskgroup with a policy rt-app refuses it for (check_taskgroup_policy_dep): here the
/// policy comes from the line (`chrt -f 10`), which a thread that names none takes; and a
/// path `mkdir` would refuse.
#[test]
fn taskgroup_refusals_name_the_task() {
    for (line, json, want) in [
        (
            "chrt -f 10 rt-app t.json",
            r#"{ "tasks": { "t": { "taskgroup": "/g", "run": 1 } } }"#,
            "taskgroup \"/g\" with SCHED_FIFO",
        ),
        (
            "rt-app t.json",
            r#"{ "tasks": { "t": { "taskgroup": "/a//b", "run": 1 } } }"#,
            "empty component",
        ),
    ] {
        let f = parse_rtapp(json, "t.json").unwrap();
        let (placement, _) = schedlab_workloads::workload::parse_placement(line).unwrap();
        let e = match RtApp::new(line, "t.json", f) {
            Err(e) => e.to_string(),
            Ok(mut w) => {
                let mut k = kernel(1, 1);
                let env = Env { placement, ..env() };
                w.setup(&mut k, &env).unwrap_err().to_string()
            }
        };
        assert!(e.contains(want) && e.contains("\"t\""), "{e}");
    }
}
