//! schedlab-trace: the ftrace text format of `/sys/kernel/tracing/trace`, field for field as
//! Linux v6.18 prints it — the record model ([`TraceRecord`], [`TraceEvent`]), a writer
//! ([`write_header`], [`write_record`]) and a parser ([`parse_trace`], [`parse_record`]).
//! schedlab's `--trace` output must load unchanged in Perfetto, trace-cmd-style scripts and
//! LISA, so everything here copies the kernel's layout; `tests/fixtures/host-6.18.txt` is a
//! real capture the writer reproduces byte for byte.
//!
//! # Header
//!
//! ```text
//! # tracer: nop
//! #
//! # entries-in-buffer/entries-written: 259/259   #P:2
//! #
//! #                                _-----=> irqs-off/BH-disabled
//! #                               / _----=> need-resched
//! #                              | / _---=> hardirq/softirq
//! #                              || / _--=> preempt-depth
//! #                              ||| / _-=> migrate-disable
//! #                              |||| /     delay
//! #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
//! #              | |         |   |||||     |         |
//! ```
//!
//! # Record lines
//!
//! ```text
//!   stress-ng-pipe-6432    [000] d..2.   427.987751: sched_switch: prev_comm=stress-ng-pipe ...
//!           <idle>-0       [000] dNh2.   427.978804: sched_wakeup: comm=rcu_preempt pid=15 ...
//! ```
//!
//! `"%16s-%-7d [%03d] %s %5lu.%06lu: %s: %s"`: comm right-aligned to 16, `-`, pid
//! left-aligned to 7, CPU zero-padded to 3, the 5-character irq-info field
//! (irqs-off `d`/`D`/`b`, need-resched `N`/`n`/`L`/`l`/`B`/`b`/`p`, hardirq/softirq
//! `h`/`s`/`H`/`z`/`Z`, preempt depth and migrate-disable in hex, `.` for zero), the
//! timestamp, the event name and its body.
//!
//! * **Timestamps** print microseconds as `ns2usecs(ts) = (ts + 500) / 1000`: rounded to
//!   nearest, not truncated (checked against the `raw` view of the same buffer, whose
//!   nanoseconds are `tests/fixtures/host-6.18.raw.txt`). So `ts_ns` survives a round trip
//!   only at microsecond precision: [`round_ts_to_printed_us`].
//! * **Comms** are cut to 15 bytes (`TASK_COMM_LEN` 16) in the task column and in every comm
//!   field of the body ([`truncate_comm`]).
//! * **Idle**: pid 0 prints `<idle>` in the task column ([`IDLE_COMM`]); `sched_switch`
//!   fields print the idle task's real comm, `swapper/N`.
//!
//! # Kernel event bodies (v6.18 `print fmt`)
//!
//! ```text
//! sched_switch:       prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%d next_prio=%d
//! sched_waking:       comm=%s pid=%d prio=%d target_cpu=%03d       (also sched_wakeup, sched_wakeup_new)
//! sched_migrate_task: comm=%s pid=%d prio=%d orig_cpu=%d dest_cpu=%d
//! sched_process_fork: comm=%s pid=%d child_comm=%s child_pid=%d
//! sched_process_exit: comm=%s pid=%d prio=%d group_dead=true|false
//! sched_process_exec: filename=%s pid=%d old_pid=%d
//! ```
//!
//! `prev_state` is kept as printed: `R`, `R+` (preempted), `S`, `D`, `T`, `t`, `X`, `Z`,
//! `P`, `I`, or several letters joined by `|`.
//!
//! # schedlab events
//!
//! Defined by schedlab, in the same line format, with space-separated `key=value` bodies so
//! generic ftrace parsers split them like kernel events. Integers are decimal, in
//! nanoseconds (of virtual time for `vruntime`/`deadline`); booleans are `0`/`1`; the record's
//! task column is the task current on the CPU when the event fires.
//!
//! ```text
//! schedlab_pick:          comm=%s pid=%d vruntime=%llu deadline=%llu lag=%lld slice=%llu eligible=%d reason=%s
//! schedlab_delay_dequeue: comm=%s pid=%d lag=%lld
//! schedlab_requeue:       comm=%s pid=%d lag=%lld replaced=%d
//! ```
//!
//! * `schedlab_pick` — the fair class picked task `comm`/`pid` on this CPU. `vruntime`,
//!   `deadline` and `slice` are the entity's `se->vruntime`, `se->deadline`, `se->slice`;
//!   `lag` is `avg_vruntime(cfs_rq) - se->vruntime` (positive: owed service), `eligible` is
//!   `entity_eligible()`, `reason` a short token (no spaces) naming the path that chose it,
//!   e.g. `eevdf`, `curr`, `buddy`, `single`.
//!   Example: `schedlab_pick: comm=stress-ng-pipe pid=6430 vruntime=1500000 deadline=4300000 lag=-2000 slice=2800000 eligible=0 reason=curr`
//! * `schedlab_delay_dequeue` — a sleeping entity was left queued with `sched_delayed` set
//!   (DELAY_DEQUEUE) because it is not eligible; `lag` is its lag then (negative).
//! * `schedlab_requeue` — a delayed entity was made runnable again
//!   (`requeue_delayed_entity()`); `lag` is its lag at that point, `replaced=1` when it was
//!   re-placed with `place_entity()` (DELAY_ZERO clipped a positive lag) rather than left at
//!   its vruntime.
//!
//! # Parser tolerances
//!
//! Comms may contain `-`, spaces and brackets (the pid follows the last `-` before the CPU
//! column); `#` lines, blank lines and `CPU:n [LOST m EVENTS]` are skipped; a `(TGID)`
//! column (`record-tgid`) is skipped; no flags column (`noirq-info`) gives empty `flags`;
//! 1–9 fraction digits are accepted. Unknown events become [`TraceEvent::Other`] with the
//! body verbatim; a known event whose body does not match its format is an error.

mod parse;
mod record;
mod template;
mod write;

pub use parse::{parse_record, parse_trace, RecordError, TraceParseError};
pub use record::{
    names, round_ts_to_printed_us, truncate_comm, TraceEvent, TraceRecord, IDLE_COMM, TASK_COMM_LEN,
};
pub use write::{write_header, write_record, write_trace};
