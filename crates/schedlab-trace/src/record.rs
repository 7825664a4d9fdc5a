//! The data model: one [`TraceRecord`] per line of the trace, its [`TraceEvent`] payload, and
//! the body template of every event, shared by the writer and the parser.

use std::fmt;

use crate::parse::RecordError;
use crate::template::{self, Arg};

/// `TASK_COMM_LEN` (include/linux/sched.h): a comm holds at most 15 bytes plus the NUL.
pub const TASK_COMM_LEN: usize = 16;

/// What the kernel prints in the task column for pid 0 (`__trace_find_cmdline()`), whatever
/// the idle task's comm (`swapper/N`, which is what `sched_switch` prints in its fields).
pub const IDLE_COMM: &str = "<idle>";

/// One line of `/sys/kernel/tracing/trace`.
///
/// `S` holds the text fields: `String` (the default) for records parsed or kept, `&str` for
/// the records the simulator emits, which borrow the task's comm and static flag and state
/// strings so that tracing allocates nothing per record; both print the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRecord<S = String> {
    /// Trace clock in nanoseconds. The text prints microseconds (rounded to nearest), so
    /// after a write/parse round trip this is [`round_ts_to_printed_us`] of the original.
    pub ts_ns: u64,
    /// CPU whose buffer holds the event (`[001]`).
    pub cpu: u32,
    /// Current task's comm. The writer prints [`IDLE_COMM`] for pid 0 and truncates others
    /// to 15 bytes; the parser returns what is printed (possibly `<...>` for an unknown pid).
    pub comm: S,
    /// Current task's pid.
    pub pid: i32,
    /// The irq-info column as printed, e.g. `d..2.`, `dN.3.`, `.....` (empty if the trace
    /// was taken with `noirq-info`).
    pub flags: S,
    pub event: TraceEvent<S>,
}

/// The payload of a record: `name: body`.
///
/// Kernel events carry exactly the fields Linux v6.18 prints. `schedlab_*` events are
/// schedlab's own; their formats are specified in the crate documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceEvent<S = String> {
    /// `sched_switch`. `prev_state` as printed: `R`, `R+` (preempted), `S`, `D`, `T`, `t`,
    /// `X`, `Z`, `P`, `I`, or several joined by `|`.
    SchedSwitch {
        prev_comm: S,
        prev_pid: i32,
        prev_prio: i32,
        prev_state: S,
        next_comm: S,
        next_pid: i32,
        next_prio: i32,
    },
    SchedWaking {
        comm: S,
        pid: i32,
        prio: i32,
        target_cpu: u32,
    },
    SchedWakeup {
        comm: S,
        pid: i32,
        prio: i32,
        target_cpu: u32,
    },
    SchedWakeupNew {
        comm: S,
        pid: i32,
        prio: i32,
        target_cpu: u32,
    },
    SchedMigrateTask {
        comm: S,
        pid: i32,
        prio: i32,
        orig_cpu: u32,
        dest_cpu: u32,
    },
    /// `comm`/`pid` are the parent's (the kernel prints them under these keys).
    SchedProcessFork {
        comm: S,
        pid: i32,
        child_comm: S,
        child_pid: i32,
    },
    /// `group_dead` prints as `true`/`false`.
    SchedProcessExit {
        comm: S,
        pid: i32,
        prio: i32,
        group_dead: bool,
    },
    /// `filename` is not truncated (it is a `__string`, not a comm).
    SchedProcessExec { filename: S, pid: i32, old_pid: i32 },
    /// `schedlab_pick`: the entity a CPU's fair class picked, with its EEVDF state.
    SchedlabPick {
        comm: S,
        pid: i32,
        vruntime: u64,
        deadline: u64,
        lag: i64,
        slice: u64,
        eligible: bool,
        reason: S,
    },
    /// `schedlab_delay_dequeue`: a sleeping entity left on the queue (`sched_delayed`).
    SchedlabDelayDequeue { comm: S, pid: i32, lag: i64 },
    /// `schedlab_requeue`: a delayed entity made runnable again.
    SchedlabRequeue {
        comm: S,
        pid: i32,
        lag: i64,
        replaced: bool,
    },
    /// Any other event, kept verbatim (`body` is everything after `name: `).
    Other { name: S, body: S },
}

// Body templates (see `template.rs` for the conversions). The kernel ones are the `print fmt`
// strings of /sys/kernel/tracing/events/sched/<event>/format on v6.18; sched_switch's
// `prev_state=%s%s` (state letters, then "+" if preempted) is one token here.
const SWITCH_FMT: &str = "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%t \
                          ==> next_comm=%s next_pid=%d next_prio=%d";
const WAKE_FMT: &str = "comm=%s pid=%d prio=%d target_cpu=%03d";
const MIGRATE_FMT: &str = "comm=%s pid=%d prio=%d orig_cpu=%u dest_cpu=%u";
const FORK_FMT: &str = "comm=%s pid=%d child_comm=%s child_pid=%d";
const EXIT_FMT: &str = "comm=%s pid=%d prio=%d group_dead=%t";
const EXEC_FMT: &str = "filename=%s pid=%d old_pid=%d";
const PICK_FMT: &str =
    "comm=%s pid=%d vruntime=%u deadline=%u lag=%d slice=%u eligible=%u reason=%s";
const DELAY_DEQUEUE_FMT: &str = "comm=%s pid=%d lag=%d";
const REQUEUE_FMT: &str = "comm=%s pid=%d lag=%d replaced=%u";

/// Event names, as printed before the body.
pub mod names {
    pub const SCHED_SWITCH: &str = "sched_switch";
    pub const SCHED_WAKING: &str = "sched_waking";
    pub const SCHED_WAKEUP: &str = "sched_wakeup";
    pub const SCHED_WAKEUP_NEW: &str = "sched_wakeup_new";
    pub const SCHED_MIGRATE_TASK: &str = "sched_migrate_task";
    pub const SCHED_PROCESS_FORK: &str = "sched_process_fork";
    pub const SCHED_PROCESS_EXIT: &str = "sched_process_exit";
    pub const SCHED_PROCESS_EXEC: &str = "sched_process_exec";
    pub const SCHEDLAB_PICK: &str = "schedlab_pick";
    pub const SCHEDLAB_DELAY_DEQUEUE: &str = "schedlab_delay_dequeue";
    pub const SCHEDLAB_REQUEUE: &str = "schedlab_requeue";
}

/// The longest prefix of `comm` that fits a kernel comm (15 bytes), cut back to a char
/// boundary. Deviation: the kernel cuts bytes and may split a UTF-8 sequence; a Rust
/// `String` cannot hold that, so a split character is dropped whole.
pub fn truncate_comm(comm: &str) -> &str {
    let max = TASK_COMM_LEN - 1;
    if comm.len() <= max {
        return comm;
    }
    let mut end = max;
    while !comm.is_char_boundary(end) {
        end -= 1;
    }
    &comm[..end]
}

/// The timestamp a record carries after being printed and parsed back: the kernel prints
/// `ns2usecs(ts)`, i.e. `(ts + 500) / 1000` microseconds (kernel/trace/trace.h), so the
/// nanoseconds are rounded to the nearest microsecond, halves up.
pub fn round_ts_to_printed_us(ts_ns: u64) -> u64 {
    printed_us(ts_ns) * 1000
}

/// kernel: trace.h ns2usecs() @ v6.18, written so that it cannot overflow at `u64::MAX`.
pub(crate) fn printed_us(ts_ns: u64) -> u64 {
    ts_ns / 1000 + u64::from(ts_ns % 1000 >= 500)
}

impl TraceRecord {
    /// This record as it reads back after [`crate::write_record`] + [`crate::parse_record`]:
    /// timestamp at microsecond precision, comms truncated to 15 bytes, `<idle>` for pid 0.
    /// An error means the record cannot survive the text format (say a `prev_state` or an
    /// event name with spaces in it).
    pub fn as_printed(&self) -> Result<TraceRecord, RecordError> {
        crate::parse::parse_record(&self.to_string())
    }
}

impl<S: AsRef<str>> TraceRecord<S> {
    /// The same record with owned text fields.
    pub fn to_owned_record(&self) -> TraceRecord {
        TraceRecord {
            ts_ns: self.ts_ns,
            cpu: self.cpu,
            comm: self.comm.as_ref().to_string(),
            pid: self.pid,
            flags: self.flags.as_ref().to_string(),
            event: self.event.to_owned_event(),
        }
    }
}

impl<S: AsRef<str>> TraceEvent<S> {
    /// The same event with owned text fields.
    pub fn to_owned_event(&self) -> TraceEvent {
        let o = |s: &S| s.as_ref().to_string();
        match self {
            TraceEvent::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => TraceEvent::SchedSwitch {
                prev_comm: o(prev_comm),
                prev_pid: *prev_pid,
                prev_prio: *prev_prio,
                prev_state: o(prev_state),
                next_comm: o(next_comm),
                next_pid: *next_pid,
                next_prio: *next_prio,
            },
            TraceEvent::SchedWaking {
                comm,
                pid,
                prio,
                target_cpu,
            } => TraceEvent::SchedWaking {
                comm: o(comm),
                pid: *pid,
                prio: *prio,
                target_cpu: *target_cpu,
            },
            TraceEvent::SchedWakeup {
                comm,
                pid,
                prio,
                target_cpu,
            } => TraceEvent::SchedWakeup {
                comm: o(comm),
                pid: *pid,
                prio: *prio,
                target_cpu: *target_cpu,
            },
            TraceEvent::SchedWakeupNew {
                comm,
                pid,
                prio,
                target_cpu,
            } => TraceEvent::SchedWakeupNew {
                comm: o(comm),
                pid: *pid,
                prio: *prio,
                target_cpu: *target_cpu,
            },
            TraceEvent::SchedMigrateTask {
                comm,
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => TraceEvent::SchedMigrateTask {
                comm: o(comm),
                pid: *pid,
                prio: *prio,
                orig_cpu: *orig_cpu,
                dest_cpu: *dest_cpu,
            },
            TraceEvent::SchedProcessFork {
                comm,
                pid,
                child_comm,
                child_pid,
            } => TraceEvent::SchedProcessFork {
                comm: o(comm),
                pid: *pid,
                child_comm: o(child_comm),
                child_pid: *child_pid,
            },
            TraceEvent::SchedProcessExit {
                comm,
                pid,
                prio,
                group_dead,
            } => TraceEvent::SchedProcessExit {
                comm: o(comm),
                pid: *pid,
                prio: *prio,
                group_dead: *group_dead,
            },
            TraceEvent::SchedProcessExec {
                filename,
                pid,
                old_pid,
            } => TraceEvent::SchedProcessExec {
                filename: o(filename),
                pid: *pid,
                old_pid: *old_pid,
            },
            TraceEvent::SchedlabPick {
                comm,
                pid,
                vruntime,
                deadline,
                lag,
                slice,
                eligible,
                reason,
            } => TraceEvent::SchedlabPick {
                comm: o(comm),
                pid: *pid,
                vruntime: *vruntime,
                deadline: *deadline,
                lag: *lag,
                slice: *slice,
                eligible: *eligible,
                reason: o(reason),
            },
            TraceEvent::SchedlabDelayDequeue { comm, pid, lag } => {
                TraceEvent::SchedlabDelayDequeue {
                    comm: o(comm),
                    pid: *pid,
                    lag: *lag,
                }
            }
            TraceEvent::SchedlabRequeue {
                comm,
                pid,
                lag,
                replaced,
            } => TraceEvent::SchedlabRequeue {
                comm: o(comm),
                pid: *pid,
                lag: *lag,
                replaced: *replaced,
            },
            TraceEvent::Other { name, body } => TraceEvent::Other {
                name: o(name),
                body: o(body),
            },
        }
    }

    /// The event name printed before `: `.
    pub fn name(&self) -> &str {
        use names::*;
        match self {
            TraceEvent::SchedSwitch { .. } => SCHED_SWITCH,
            TraceEvent::SchedWaking { .. } => SCHED_WAKING,
            TraceEvent::SchedWakeup { .. } => SCHED_WAKEUP,
            TraceEvent::SchedWakeupNew { .. } => SCHED_WAKEUP_NEW,
            TraceEvent::SchedMigrateTask { .. } => SCHED_MIGRATE_TASK,
            TraceEvent::SchedProcessFork { .. } => SCHED_PROCESS_FORK,
            TraceEvent::SchedProcessExit { .. } => SCHED_PROCESS_EXIT,
            TraceEvent::SchedProcessExec { .. } => SCHED_PROCESS_EXEC,
            TraceEvent::SchedlabPick { .. } => SCHEDLAB_PICK,
            TraceEvent::SchedlabDelayDequeue { .. } => SCHEDLAB_DELAY_DEQUEUE,
            TraceEvent::SchedlabRequeue { .. } => SCHEDLAB_REQUEUE,
            TraceEvent::Other { name, .. } => name.as_ref(),
        }
    }

    /// Writes the body (what follows `name: `).
    pub fn write_body<W: fmt::Write + ?Sized>(&self, out: &mut W) -> fmt::Result {
        use Arg::{Int, Str, UInt};
        fn c<S: AsRef<str>>(s: &S) -> &str {
            truncate_comm(s.as_ref())
        }
        let int = |v: i32| Int(i64::from(v));
        let cpu = |v: u32| UInt(u64::from(v));
        let flag = |b: bool| UInt(u64::from(b));
        match self {
            TraceEvent::SchedSwitch {
                prev_comm,
                prev_pid,
                prev_prio,
                prev_state,
                next_comm,
                next_pid,
                next_prio,
            } => template::render(
                out,
                SWITCH_FMT,
                &[
                    Str(c(prev_comm)),
                    int(*prev_pid),
                    int(*prev_prio),
                    Str(prev_state.as_ref()),
                    Str(c(next_comm)),
                    int(*next_pid),
                    int(*next_prio),
                ],
            ),
            TraceEvent::SchedWaking {
                comm,
                pid,
                prio,
                target_cpu,
            }
            | TraceEvent::SchedWakeup {
                comm,
                pid,
                prio,
                target_cpu,
            }
            | TraceEvent::SchedWakeupNew {
                comm,
                pid,
                prio,
                target_cpu,
            } => template::render(
                out,
                WAKE_FMT,
                &[Str(c(comm)), int(*pid), int(*prio), cpu(*target_cpu)],
            ),
            TraceEvent::SchedMigrateTask {
                comm,
                pid,
                prio,
                orig_cpu,
                dest_cpu,
            } => template::render(
                out,
                MIGRATE_FMT,
                &[
                    Str(c(comm)),
                    int(*pid),
                    int(*prio),
                    cpu(*orig_cpu),
                    cpu(*dest_cpu),
                ],
            ),
            TraceEvent::SchedProcessFork {
                comm,
                pid,
                child_comm,
                child_pid,
            } => template::render(
                out,
                FORK_FMT,
                &[Str(c(comm)), int(*pid), Str(c(child_comm)), int(*child_pid)],
            ),
            TraceEvent::SchedProcessExit {
                comm,
                pid,
                prio,
                group_dead,
            } => template::render(
                out,
                EXIT_FMT,
                &[
                    Str(c(comm)),
                    int(*pid),
                    int(*prio),
                    Str(if *group_dead { "true" } else { "false" }),
                ],
            ),
            TraceEvent::SchedProcessExec {
                filename,
                pid,
                old_pid,
            } => template::render(
                out,
                EXEC_FMT,
                &[Str(filename.as_ref()), int(*pid), int(*old_pid)],
            ),
            TraceEvent::SchedlabPick {
                comm,
                pid,
                vruntime,
                deadline,
                lag,
                slice,
                eligible,
                reason,
            } => template::render(
                out,
                PICK_FMT,
                &[
                    Str(c(comm)),
                    int(*pid),
                    UInt(*vruntime),
                    UInt(*deadline),
                    Int(*lag),
                    UInt(*slice),
                    flag(*eligible),
                    Str(reason.as_ref()),
                ],
            ),
            TraceEvent::SchedlabDelayDequeue { comm, pid, lag } => template::render(
                out,
                DELAY_DEQUEUE_FMT,
                &[Str(c(comm)), int(*pid), Int(*lag)],
            ),
            TraceEvent::SchedlabRequeue {
                comm,
                pid,
                lag,
                replaced,
            } => template::render(
                out,
                REQUEUE_FMT,
                &[Str(c(comm)), int(*pid), Int(*lag), flag(*replaced)],
            ),
            TraceEvent::Other { body, .. } => out.write_str(body.as_ref()),
        }
    }
}

impl TraceEvent {
    /// Parses the body of event `name`. Unknown names give [`TraceEvent::Other`]; a known
    /// name whose body does not match its v6.18 / schedlab format is an error.
    pub fn from_body(name: &str, body: &str) -> Result<TraceEvent, RecordError> {
        use names::*;
        let template = match name {
            SCHED_SWITCH => SWITCH_FMT,
            SCHED_WAKING | SCHED_WAKEUP | SCHED_WAKEUP_NEW => WAKE_FMT,
            SCHED_MIGRATE_TASK => MIGRATE_FMT,
            SCHED_PROCESS_FORK => FORK_FMT,
            SCHED_PROCESS_EXIT => EXIT_FMT,
            SCHED_PROCESS_EXEC => EXEC_FMT,
            SCHEDLAB_PICK => PICK_FMT,
            SCHEDLAB_DELAY_DEQUEUE => DELAY_DEQUEUE_FMT,
            SCHEDLAB_REQUEUE => REQUEUE_FMT,
            _ => {
                return Ok(TraceEvent::Other {
                    name: name.to_string(),
                    body: body.to_string(),
                })
            }
        };
        let caps =
            template::match_body(template, body).ok_or_else(|| RecordError::BodyMismatch {
                event: name.to_string(),
                format: template,
                body: body.to_string(),
            })?;
        let f = Fields { event: name, caps };
        Ok(match name {
            SCHED_SWITCH => TraceEvent::SchedSwitch {
                prev_comm: f.string(0),
                prev_pid: f.num(1, "prev_pid")?,
                prev_prio: f.num(2, "prev_prio")?,
                prev_state: f.string(3),
                next_comm: f.string(4),
                next_pid: f.num(5, "next_pid")?,
                next_prio: f.num(6, "next_prio")?,
            },
            SCHED_WAKING | SCHED_WAKEUP | SCHED_WAKEUP_NEW => {
                let (comm, pid, prio) = (f.string(0), f.num(1, "pid")?, f.num(2, "prio")?);
                let target_cpu = f.num(3, "target_cpu")?;
                match name {
                    SCHED_WAKING => TraceEvent::SchedWaking {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    SCHED_WAKEUP => TraceEvent::SchedWakeup {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                    _ => TraceEvent::SchedWakeupNew {
                        comm,
                        pid,
                        prio,
                        target_cpu,
                    },
                }
            }
            SCHED_MIGRATE_TASK => TraceEvent::SchedMigrateTask {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                prio: f.num(2, "prio")?,
                orig_cpu: f.num(3, "orig_cpu")?,
                dest_cpu: f.num(4, "dest_cpu")?,
            },
            SCHED_PROCESS_FORK => TraceEvent::SchedProcessFork {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                child_comm: f.string(2),
                child_pid: f.num(3, "child_pid")?,
            },
            SCHED_PROCESS_EXIT => TraceEvent::SchedProcessExit {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                prio: f.num(2, "prio")?,
                group_dead: f.boolean(3, "group_dead", ("true", "false"))?,
            },
            SCHED_PROCESS_EXEC => TraceEvent::SchedProcessExec {
                filename: f.string(0),
                pid: f.num(1, "pid")?,
                old_pid: f.num(2, "old_pid")?,
            },
            SCHEDLAB_PICK => TraceEvent::SchedlabPick {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                vruntime: f.num(2, "vruntime")?,
                deadline: f.num(3, "deadline")?,
                lag: f.num(4, "lag")?,
                slice: f.num(5, "slice")?,
                eligible: f.boolean(6, "eligible", ("1", "0"))?,
                reason: f.string(7),
            },
            SCHEDLAB_DELAY_DEQUEUE => TraceEvent::SchedlabDelayDequeue {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                lag: f.num(2, "lag")?,
            },
            SCHEDLAB_REQUEUE => TraceEvent::SchedlabRequeue {
                comm: f.string(0),
                pid: f.num(1, "pid")?,
                lag: f.num(2, "lag")?,
                replaced: f.boolean(3, "replaced", ("1", "0"))?,
            },
            _ => unreachable!("every templated name is converted above"),
        })
    }
}

/// The matched fields of one body, converted with the field name at hand for errors.
struct Fields<'a> {
    event: &'a str,
    caps: Vec<&'a str>,
}

impl Fields<'_> {
    fn string(&self, i: usize) -> String {
        self.caps[i].to_string()
    }

    fn num<T: std::str::FromStr>(&self, i: usize, field: &'static str) -> Result<T, RecordError> {
        self.caps[i]
            .parse()
            .map_err(|_| self.bad(i, field, "is out of range"))
    }

    fn boolean(
        &self,
        i: usize,
        field: &'static str,
        (yes, no): (&str, &str),
    ) -> Result<bool, RecordError> {
        match self.caps[i] {
            v if v == yes => Ok(true),
            v if v == no => Ok(false),
            _ => Err(self.bad(
                i,
                field,
                if yes == "1" {
                    "is not 0 or 1"
                } else {
                    "is not true or false"
                },
            )),
        }
    }

    fn bad(&self, i: usize, field: &'static str, why: &'static str) -> RecordError {
        RecordError::BadField {
            event: self.event.to_string(),
            field,
            value: self.caps[i].to_string(),
            why,
        }
    }
}

impl fmt::Display for TraceEvent {
    /// `name: body`, as after the timestamp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        f.write_str(": ")?;
        self.write_body(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_truncates_to_15_bytes() {
        // "stress-ng-pipe-w" is 16 bytes; the kernel keeps the first 15.
        assert_eq!(truncate_comm("stress-ng-pipe-w"), "stress-ng-pipe-");
        assert_eq!(truncate_comm("stress-ng-pipe"), "stress-ng-pipe");
        // 14 ASCII bytes + 'é' (2 bytes) = 16: the split 'é' is dropped whole -> 14 bytes.
        assert_eq!(truncate_comm("abcdefghijklmné"), "abcdefghijklmn");
    }

    #[test]
    fn printed_us_rounds_half_up_like_ns2usecs() {
        // (ts + 500) / 1000 by hand:
        assert_eq!(printed_us(1_499), 1); // 1999 / 1000
        assert_eq!(printed_us(1_500), 2); // 2000 / 1000
        assert_eq!(printed_us(999_999_500), 1_000_000); // carries into the seconds
        assert_eq!(printed_us(u64::MAX), 18_446_744_073_709_552); // ..551_615 ns rounds up
        assert_eq!(round_ts_to_printed_us(427_977_734_698), 427_977_735_000);
    }

    #[test]
    fn switch_body_is_the_kernel_print_fmt() {
        let ev = TraceEvent::SchedSwitch {
            prev_comm: "bash".into(),
            prev_pid: 6427,
            prev_prio: 120,
            prev_state: "R+".into(),
            next_comm: "swapper/1".into(),
            next_pid: 0,
            next_prio: 120,
        };
        assert_eq!(
            ev.to_string(),
            "sched_switch: prev_comm=bash prev_pid=6427 prev_prio=120 prev_state=R+ \
             ==> next_comm=swapper/1 next_pid=0 next_prio=120"
        );
    }

    #[test]
    fn schedlab_bodies() {
        let pick = TraceEvent::SchedlabPick {
            comm: "stress-ng-pipe".into(),
            pid: 6430,
            vruntime: 18_446_744_073_709_551_615,
            deadline: 3_000_000,
            lag: -2_999_999,
            slice: 2_800_000,
            eligible: true,
            reason: "eevdf".into(),
        };
        assert_eq!(
            pick.to_string(),
            "schedlab_pick: comm=stress-ng-pipe pid=6430 vruntime=18446744073709551615 \
             deadline=3000000 lag=-2999999 slice=2800000 eligible=1 reason=eevdf"
        );
        let dd = TraceEvent::SchedlabDelayDequeue {
            comm: "a".into(),
            pid: 1,
            lag: -5,
        };
        assert_eq!(
            dd.to_string(),
            "schedlab_delay_dequeue: comm=a pid=1 lag=-5"
        );
        let rq = TraceEvent::SchedlabRequeue {
            comm: "a".into(),
            pid: 1,
            lag: 7,
            replaced: false,
        };
        assert_eq!(
            rq.to_string(),
            "schedlab_requeue: comm=a pid=1 lag=7 replaced=0"
        );
    }

    #[test]
    fn from_body_inverts_write_body() {
        let events = [
            TraceEvent::SchedProcessExit {
                comm: "my prog".into(),
                pid: 9,
                prio: 139,
                group_dead: false,
            },
            TraceEvent::SchedlabRequeue {
                comm: "x-1 pid=2".into(),
                pid: 3,
                lag: i64::MIN,
                replaced: true,
            },
            TraceEvent::Other {
                name: "tracing_mark_write".into(),
                body: "hello: world".into(),
            },
        ];
        for ev in events {
            let mut body = String::new();
            ev.write_body(&mut body).unwrap();
            assert_eq!(TraceEvent::from_body(ev.name(), &body), Ok(ev));
        }
    }

    #[test]
    fn as_printed_rejects_records_the_format_cannot_carry() {
        let mut r = TraceRecord {
            ts_ns: 1_500,
            cpu: 0,
            comm: "swapper/0".into(),
            pid: 0,
            flags: "d..2.".into(),
            event: TraceEvent::SchedSwitch {
                prev_comm: "swapper/0".into(),
                prev_pid: 0,
                prev_prio: 120,
                prev_state: "R".into(),
                next_comm: "cat".into(),
                next_pid: 7,
                next_prio: 120,
            },
        };
        let back = r.as_printed().unwrap();
        // (1500 + 500) / 1000 = 2 us; pid 0 reads back as <idle>.
        assert_eq!((back.ts_ns, back.comm.as_str()), (2_000, IDLE_COMM));
        if let TraceEvent::SchedSwitch { prev_state, .. } = &mut r.event {
            *prev_state = "R S".into();
        }
        assert!(matches!(
            r.as_printed(),
            Err(RecordError::BodyMismatch { .. })
        ));
    }

    #[test]
    fn from_body_names_the_bad_field() {
        let err = TraceEvent::from_body(
            "sched_process_exit",
            "comm=a pid=1 prio=120 group_dead=maybe",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "sched_process_exit: group_dead=`maybe` is not true or false"
        );
        let err = TraceEvent::from_body(
            "sched_wakeup",
            "comm=a pid=99999999999 prio=1 target_cpu=000",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "sched_wakeup: pid=`99999999999` is out of range"
        );
    }
}
