//! Integration tests against a real Linux v6.18 trace, plus writer/parser round trips.
//!
//! How `fixtures/host-6.18.txt` was captured (2-vCPU x86_64 VM, Linux 6.18.44, root,
//! tracefs at /sys/kernel/tracing, default options, trace_clock=local, stress-ng 0.15.06 from
//! Debian 12):
//!
//! ```sh
//! cd /sys/kernel/tracing
//! echo 8192 > buffer_size_kb; echo 0 > tracing_on; echo > trace
//! for e in sched_switch sched_waking sched_wakeup sched_wakeup_new sched_migrate_task \
//!          sched_process_fork sched_process_exit sched_process_exec; do
//!     echo 1 > events/sched/$e/enable; done
//! echo 1 > tracing_on; stress-ng --pipe 2 --pipe-ops 100 -t 1; echo 0 > tracing_on
//! cat trace > host-6.18.txt                                    # the fixture, whole (259 events)
//! echo 1 > options/raw; cat trace > host-6.18.raw.txt; echo 0 > options/raw
//! for e in ...; do echo 0 > events/sched/$e/enable; done; echo > trace; echo 7 > buffer_size_kb
//! ```
//!
//! `--pipe-ops 100` keeps the run to ~12 ms so the whole trace (bash forking and exec'ing
//! stress-ng, its two pipe pairs forking, ping-ponging, migrating and exiting) fits in 39 KB;
//! nothing was trimmed, so the header's `259/259` is the true count. The `raw` view of the
//! same buffer prints `pid cpu ts_ns type: id` per event: it gives the exact nanosecond
//! timestamps, which is how the writer's rounding (`ns2usecs`: to nearest µs) was established.

use schedlab_trace::{
    parse_record, parse_trace, round_ts_to_printed_us, write_header, write_record, write_trace,
    RecordError, TraceEvent, TraceRecord,
};

const HOST: &str = include_str!("fixtures/host-6.18.txt");
const HOST_RAW: &str = include_str!("fixtures/host-6.18.raw.txt");

/// The fixture's first record is on file line 13 (after the 12 header lines).
const FIRST_RECORD_LINE: usize = 13;

fn record_at_line(records: &[TraceRecord], line: usize) -> &TraceRecord {
    &records[line - FIRST_RECORD_LINE]
}

fn rec(ts_ns: u64, cpu: u32, comm: &str, pid: i32, flags: &str, event: TraceEvent) -> TraceRecord {
    TraceRecord {
        ts_ns,
        cpu,
        comm: comm.into(),
        pid,
        flags: flags.into(),
        event,
    }
}

#[test]
fn host_fixture_every_line_parses_with_grep_counts() {
    let records = parse_trace(HOST).unwrap();
    // grep -vc '^#' host-6.18.txt  -> 259
    assert_eq!(records.len(), 259);
    let count = |pred: fn(&TraceEvent) -> bool| records.iter().filter(|r| pred(&r.event)).count();
    // grep -c ' sched_switch: ' host-6.18.txt        -> 118
    assert_eq!(count(|e| matches!(e, TraceEvent::SchedSwitch { .. })), 118);
    // grep -c ' sched_waking: ' host-6.18.txt        -> 61
    assert_eq!(count(|e| matches!(e, TraceEvent::SchedWaking { .. })), 61);
    // grep -c ' sched_wakeup: ' host-6.18.txt        -> 61
    assert_eq!(count(|e| matches!(e, TraceEvent::SchedWakeup { .. })), 61);
    // grep -c ' sched_wakeup_new: ' host-6.18.txt    -> 5
    assert_eq!(count(|e| matches!(e, TraceEvent::SchedWakeupNew { .. })), 5);
    // grep -c ' sched_migrate_task: ' host-6.18.txt  -> 3
    assert_eq!(
        count(|e| matches!(e, TraceEvent::SchedMigrateTask { .. })),
        3
    );
    // grep -c ' sched_process_fork: ' host-6.18.txt  -> 5
    assert_eq!(
        count(|e| matches!(e, TraceEvent::SchedProcessFork { .. })),
        5
    );
    // grep -c ' sched_process_exit: ' host-6.18.txt  -> 5
    assert_eq!(
        count(|e| matches!(e, TraceEvent::SchedProcessExit { .. })),
        5
    );
    // grep -c ' sched_process_exec: ' host-6.18.txt  -> 1
    assert_eq!(
        count(|e| matches!(e, TraceEvent::SchedProcessExec { .. })),
        1
    );
    assert_eq!(count(|e| matches!(e, TraceEvent::Other { .. })), 0);

    // grep -o 'prev_state=[^ ]*' host-6.18.txt | sort | uniq -c  -> I 2, R 53, S 58, X 1, Z 4
    let states = |s: &str| {
        records
            .iter()
            .filter(|r| matches!(&r.event, TraceEvent::SchedSwitch { prev_state, .. } if prev_state == s))
            .count()
    };
    assert_eq!(
        [
            states("I"),
            states("R"),
            states("S"),
            states("X"),
            states("Z")
        ],
        [2, 53, 58, 1, 4]
    );
    // grep -c '<idle>-0 ' host-6.18.txt  -> 10
    assert_eq!(
        records
            .iter()
            .filter(|r| r.pid == 0 && r.comm == "<idle>")
            .count(),
        10
    );
}

#[test]
fn host_fixture_spot_checks() {
    let records = parse_trace(HOST).unwrap();

    // line 13: `            bash-6427    [001] .....   427.977684: sched_process_fork: comm=bash
    //           pid=6427 child_comm=bash child_pid=6429`
    assert_eq!(
        *record_at_line(&records, 13),
        rec(
            427_977_684_000,
            1,
            "bash",
            6427,
            ".....",
            TraceEvent::SchedProcessFork {
                comm: "bash".into(),
                pid: 6427,
                child_comm: "bash".into(),
                child_pid: 6429
            }
        )
    );
    // line 16: `       stress-ng-6429    [001] .....   427.978160: sched_process_exec:
    //           filename=/usr/bin/stress-ng pid=6429 old_pid=6429`
    assert_eq!(
        record_at_line(&records, 16).event,
        TraceEvent::SchedProcessExec {
            filename: "/usr/bin/stress-ng".into(),
            pid: 6429,
            old_pid: 6429
        }
    );
    // line 18: `       stress-ng-6429    [001] dNs3.   427.978790: sched_migrate_task:
    //           comm=rcu_preempt pid=15 prio=120 orig_cpu=1 dest_cpu=0`
    let r = record_at_line(&records, 18);
    assert_eq!(
        (r.flags.as_str(), r.ts_ns, r.cpu),
        ("dNs3.", 427_978_790_000, 1)
    );
    assert_eq!(
        r.event,
        TraceEvent::SchedMigrateTask {
            comm: "rcu_preempt".into(),
            pid: 15,
            prio: 120,
            orig_cpu: 1,
            dest_cpu: 0
        }
    );
    // line 21: `          <idle>-0       [000] d..2.   427.978818: sched_switch:
    //           prev_comm=swapper/0 prev_pid=0 ... prev_state=R ==> next_comm=rcu_preempt ...`
    assert_eq!(
        *record_at_line(&records, 21),
        rec(
            427_978_818_000,
            0,
            "<idle>",
            0,
            "d..2.",
            TraceEvent::SchedSwitch {
                prev_comm: "swapper/0".into(),
                prev_pid: 0,
                prev_prio: 120,
                prev_state: "R".into(),
                next_comm: "rcu_preempt".into(),
                next_pid: 15,
                next_prio: 120
            }
        )
    );
    // line 213: `  stress-ng-pipe-6432    [000] .....   427.987952: sched_process_exit:
    //            comm=stress-ng-pipe pid=6432 prio=120 group_dead=true`  (dashes in the comm)
    let r = record_at_line(&records, 213);
    assert_eq!((r.comm.as_str(), r.pid), ("stress-ng-pipe", 6432));
    assert_eq!(
        r.event,
        TraceEvent::SchedProcessExit {
            comm: "stress-ng-pipe".into(),
            pid: 6432,
            prio: 120,
            group_dead: true
        }
    );
    // line 265: `... [001] d..2.   427.988506: sched_switch: prev_comm=stress-ng-pipe
    //            prev_pid=6431 prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 ...`
    assert!(matches!(
        &record_at_line(&records, 265).event,
        TraceEvent::SchedSwitch { prev_state, next_comm, next_pid: 0, .. }
            if prev_state == "X" && next_comm == "swapper/1"
    ));
    // line 271 (last): `            bash-6427    [001] d.s5.   427.990031: sched_wakeup:
    //                  comm=kworker/u8:0 pid=12 prio=120 target_cpu=001`
    let r = records.last().unwrap();
    assert_eq!((r.flags.as_str(), r.ts_ns), ("d.s5.", 427_990_031_000));
    assert_eq!(
        r.event,
        TraceEvent::SchedWakeup {
            comm: "kworker/u8:0".into(),
            pid: 12,
            prio: 120,
            target_cpu: 1
        }
    );
}

/// `pid cpu ts_ns type` of each event in the raw view of the same buffer.
fn raw_rows() -> Vec<(i32, u32, u64, u32)> {
    HOST_RAW
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((f.len(), f[3]), (5, "type:"), "raw line {l:?}");
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[4].parse().unwrap(),
            )
        })
        .collect()
}

/// Given the exact nanosecond timestamps, the writer reproduces the whole capture byte for
/// byte: header, column layout, flags, rounding of all 259 timestamps, every body.
#[test]
fn writer_reproduces_host_fixture_byte_for_byte() {
    let mut records = parse_trace(HOST).unwrap();
    let raw = raw_rows();
    assert_eq!(raw.len(), records.len());
    // Event ids from /sys/kernel/tracing/events/sched/<event>/format (`ID:`) on the host.
    let id_of = |e: &TraceEvent| match e {
        TraceEvent::SchedProcessExec { .. } => 365,
        TraceEvent::SchedProcessFork { .. } => 366,
        TraceEvent::SchedProcessExit { .. } => 369,
        TraceEvent::SchedMigrateTask { .. } => 371,
        TraceEvent::SchedSwitch { .. } => 372,
        TraceEvent::SchedWakeupNew { .. } => 373,
        TraceEvent::SchedWakeup { .. } => 374,
        TraceEvent::SchedWaking { .. } => 375,
        _ => 0,
    };
    let mut rounded_up = 0;
    for (r, &(pid, cpu, ts_ns, id)) in records.iter_mut().zip(&raw) {
        assert_eq!((r.pid, r.cpu, id_of(&r.event)), (pid, cpu, id));
        // What the text shows is ns2usecs(ts_ns), i.e. rounded to the nearest microsecond.
        assert_eq!(r.ts_ns, round_ts_to_printed_us(ts_ns));
        rounded_up += usize::from(ts_ns % 1000 >= 500);
        r.ts_ns = ts_ns;
    }
    // awk over the raw file: 131 of 259 timestamps have a sub-µs part >= 500 ns, so
    // truncation would have printed them 1 µs early.
    assert_eq!(rounded_up, 131);

    let mut out = Vec::new();
    write_trace(&mut out, 2, &records).unwrap();
    let out = String::from_utf8(out).unwrap();
    for (i, (got, want)) in out.lines().zip(HOST.lines()).enumerate() {
        assert_eq!(got, want, "line {}", i + 1);
    }
    assert_eq!(out, HOST);
}

/// Golden: a sched_switch line built by hand from the values read on fixture line 48.
#[test]
fn golden_sched_switch_line() {
    let line48 = "  stress-ng-pipe-6432    [000] d..2.   427.987751: sched_switch: \
                  prev_comm=stress-ng-pipe prev_pid=6432 prev_prio=120 prev_state=R ==> \
                  next_comm=stress-ng-pipe next_pid=6430 next_prio=120";
    assert_eq!(HOST.lines().nth(47), Some(line48));
    let mut r = rec(
        427_987_751_000,
        0,
        "stress-ng-pipe",
        6432,
        "d..2.",
        TraceEvent::SchedSwitch {
            prev_comm: "stress-ng-pipe".into(),
            prev_pid: 6432,
            prev_prio: 120,
            prev_state: "R".into(),
            next_comm: "stress-ng-pipe".into(),
            next_pid: 6430,
            next_prio: 120,
        },
    );
    let mut out = Vec::new();
    write_record(&mut out, &r).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), format!("{line48}\n"));
    // The raw view says this event is at 427_987_750_721 ns: (…721 + 500) / 1000 = …751 µs.
    r.ts_ns = 427_987_750_721;
    assert_eq!(r.to_string(), line48);
    assert_eq!(parse_record(line48).unwrap().ts_ns, 427_987_751_000);
}

fn simulated() -> Vec<TraceRecord> {
    let switch =
        |prev: &str, prev_pid, state: &str, next: &str, next_pid| TraceEvent::SchedSwitch {
            prev_comm: prev.into(),
            prev_pid,
            prev_prio: 120,
            prev_state: state.into(),
            next_comm: next.into(),
            next_pid,
            next_prio: 120,
        };
    vec![
        rec(
            0,
            0,
            "<idle>",
            0,
            "d..2.",
            switch("swapper/0", 0, "R", "hackbench", 101),
        ),
        rec(
            1_000,
            1,
            "hackbench",
            101,
            ".....",
            TraceEvent::SchedProcessFork {
                comm: "hackbench".into(),
                pid: 101,
                child_comm: "hackbench".into(),
                child_pid: 102,
            },
        ),
        rec(
            2_000,
            1,
            "hackbench",
            101,
            "dN.2.",
            TraceEvent::SchedWakeupNew {
                comm: "hackbench".into(),
                pid: 102,
                prio: 120,
                target_cpu: 7,
            },
        ),
        rec(
            3_000,
            7,
            "my worker-1",
            4_194_304,
            "d..3.",
            TraceEvent::SchedWaking {
                comm: "a-b c".into(),
                pid: 33,
                prio: 100,
                target_cpu: 123,
            },
        ),
        rec(
            4_000,
            7,
            "my worker-1",
            4_194_304,
            "dN.4.",
            TraceEvent::SchedWakeup {
                comm: "a-b c".into(),
                pid: 33,
                prio: 100,
                target_cpu: 1000,
            },
        ),
        rec(
            5_000,
            3,
            "kworker/u8:0",
            12,
            "d..2.",
            TraceEvent::SchedMigrateTask {
                comm: "a-b c".into(),
                pid: 33,
                prio: 100,
                orig_cpu: 7,
                dest_cpu: 3,
            },
        ),
        rec(
            6_000,
            3,
            "a-b c",
            33,
            "d..2.",
            switch("a-b c", 33, "R+", "cat", 7),
        ),
        rec(
            7_000,
            3,
            "cat",
            7,
            "d..2.",
            switch("cat", 7, "D", "<idle>", 0),
        ),
        rec(8_000, 3, "cat", 7, "d..2.", switch("cat", 7, "S|D", "x", 8)),
        rec(
            9_000,
            2,
            "sh",
            8,
            ".....",
            TraceEvent::SchedProcessExec {
                filename: "/usr/bin/rt app with spaces".into(),
                pid: 8,
                old_pid: 8,
            },
        ),
        rec(
            10_000,
            2,
            "sh",
            8,
            ".....",
            TraceEvent::SchedProcessExit {
                comm: "sh".into(),
                pid: 8,
                prio: 139,
                group_dead: false,
            },
        ),
        rec(
            11_000,
            2,
            "schbench",
            200,
            "d..2.",
            TraceEvent::SchedlabPick {
                comm: "schbench-worker".into(),
                pid: 201,
                vruntime: u64::MAX,
                deadline: 0,
                lag: i64::MIN,
                slice: 3_000_000,
                eligible: false,
                reason: "eevdf".into(),
            },
        ),
        rec(
            12_000,
            2,
            "schbench",
            200,
            "d..2.",
            TraceEvent::SchedlabDelayDequeue {
                comm: "schbench".into(),
                pid: 200,
                lag: -1_234,
            },
        ),
        rec(
            13_000,
            2,
            "<idle>",
            0,
            "dNh3.",
            TraceEvent::SchedlabRequeue {
                comm: "schbench".into(),
                pid: 200,
                lag: 567,
                replaced: true,
            },
        ),
        rec(
            99_999_999_000_000,
            1,
            "x",
            1,
            "D.H1f",
            TraceEvent::Other {
                name: "tracing_mark_write".into(),
                body: "phase=2: go ==> now".into(),
            },
        ),
    ]
}

#[test]
fn simulated_records_round_trip() {
    let records = simulated();
    let mut out = Vec::new();
    write_trace(&mut out, 8, &records).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("# entries-in-buffer/entries-written: 15/15   #P:8\n"));
    // All timestamps are whole microseconds and all comms fit in 15 bytes: exact equality.
    assert_eq!(parse_trace(&text).unwrap(), records);
}

#[test]
fn round_trip_is_at_microsecond_precision() {
    let mut r = simulated().remove(11);
    // Sub-µs parts are rounded to nearest as the kernel prints them (hand calculation):
    // 1_000_000_499 ns -> 1.000000 s; 1_000_000_500 ns -> 1.000001 s; 999_999_999 -> 1.000000 s.
    for (ts, back) in [
        (1_000_000_499, 1_000_000_000),
        (1_000_000_500, 1_000_001_000),
        (999_999_999, 1_000_000_000),
    ] {
        r.ts_ns = ts;
        let back_rec = parse_record(&r.to_string()).unwrap();
        assert_eq!(back_rec.ts_ns, back);
        assert_eq!(r.as_printed().unwrap().ts_ns, back);
        assert_eq!(
            TraceRecord {
                ts_ns: ts,
                ..back_rec
            },
            r
        );
    }
}

#[test]
fn writer_truncates_comms_and_prints_idle() {
    let r = rec(
        0,
        0,
        "a-very-long-task-name",
        5,
        ".....",
        TraceEvent::SchedProcessFork {
            comm: "a-very-long-task-name".into(),
            pid: 5,
            child_comm: "0123456789abcdefgh".into(),
            child_pid: 6,
        },
    );
    // 15-byte prefixes: "a-very-long-tas", "0123456789abcde".
    assert_eq!(
        r.to_string(),
        " a-very-long-tas-5       [000] .....     0.000000: sched_process_fork: \
         comm=a-very-long-tas pid=5 child_comm=0123456789abcde child_pid=6"
    );
    let idle = rec(0, 1, "swapper/1", 0, "d..2.", r.event.clone());
    assert!(idle
        .to_string()
        .starts_with("          <idle>-0       [001] "));
    assert_eq!(idle.as_printed().unwrap().comm, "<idle>");
}

#[test]
fn bad_lines_report_line_numbers() {
    let mut out = Vec::new();
    write_header(&mut out, 3, 2).unwrap();
    let header = String::from_utf8(out).unwrap();
    let good = HOST.lines().nth(12).unwrap(); // fixture line 13
    let cases: [(&str, usize, RecordError); 4] = [
        // Header is lines 1-12, `good` is 13, the bad line is 14.
        ("no task column at all", 14, RecordError::NoTaskColumn),
        (
            "            bash-6427    [001] .....   427.977684: sched_process_exit: \
             comm=bash pid=6427 prio=120 group_dead=yes",
            14,
            RecordError::BadField {
                event: "sched_process_exit".into(),
                field: "group_dead",
                value: "yes".into(),
                why: "is not true or false",
            },
        ),
        (
            "            bash-6427    [001] .....   427.977684: schedlab_pick: comm=bash pid=1",
            14,
            RecordError::BodyMismatch {
                event: "schedlab_pick".into(),
                format:
                    "comm=%s pid=%d vruntime=%u deadline=%u lag=%d slice=%u eligible=%u reason=%s",
                body: "comm=bash pid=1".into(),
            },
        ),
        (
            "            bash-6427    [001] .....   427.977684: schedlab_requeue: \
             comm=bash pid=1 lag=0 replaced=2",
            14,
            RecordError::BadField {
                event: "schedlab_requeue".into(),
                field: "replaced",
                value: "2".into(),
                why: "is not 0 or 1",
            },
        ),
    ];
    for (bad, line, error) in cases {
        let text = format!("{header}{good}\n{bad}\n{good}\n");
        let err = parse_trace(&text).unwrap_err();
        assert_eq!((err.line, &err.error), (line, &error), "{bad}");
        assert!(err.to_string().starts_with(&format!("line {line}: ")));
    }
}
