//! The parser: text of `/sys/kernel/tracing/trace` (or schedlab's `--trace` output) back into
//! [`TraceRecord`]s, with the line number and the field at fault on error.

use thiserror::Error;

use crate::record::{TraceEvent, TraceRecord};

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RecordError {
    #[error("no `COMM-PID [CPU]` task column")]
    NoTaskColumn,
    #[error("bad pid `{0}` in the task column")]
    BadPid(String),
    #[error("bad CPU `{0}`")]
    BadCpu(String),
    #[error("bad timestamp `{0}`, expected SECONDS.FRACTION followed by `:`")]
    BadTimestamp(String),
    #[error("missing `EVENT: ` after the timestamp in `{0}`")]
    NoEventName(String),
    #[error("bad event name `{0}`")]
    BadEventName(String),
    #[error("{event} body `{body}` does not match `{format}`")]
    BodyMismatch {
        event: String,
        format: &'static str,
        body: String,
    },
    #[error("{event}: {field}=`{value}` {why}")]
    BadField {
        event: String,
        field: &'static str,
        value: String,
        why: &'static str,
    },
}

/// A [`RecordError`] at a 1-based line of the parsed text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {error}")]
pub struct TraceParseError {
    pub line: usize,
    pub error: RecordError,
}

/// Parses a whole trace. Skipped: blank lines, `#` lines (header, `##### CPU n buffer
/// started ####`) and the kernel's `CPU:n [LOST m EVENTS]` notes. Every other line must be
/// a record.
pub fn parse_trace(text: &str) -> Result<Vec<TraceRecord>, TraceParseError> {
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || is_lost_events(trimmed) {
            continue;
        }
        let record = parse_record(line).map_err(|error| TraceParseError { line: i + 1, error })?;
        records.push(record);
    }
    Ok(records)
}

/// `CPU:%d [LOST %lu EVENTS]` (trace.c print_trace_line()).
fn is_lost_events(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("CPU:") else {
        return false;
    };
    let (cpu, rest) = rest.split_at(digits(rest));
    let Some(rest) = rest.strip_prefix(" [LOST ") else {
        return false;
    };
    let (n, rest) = rest.split_at(digits(rest));
    !cpu.is_empty() && !n.is_empty() && rest.trim_end() == " EVENTS]"
}

fn digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

/// Parses one record line:
///
/// ```text
///   stress-ng-pipe-6432    [000] d..2.   427.987751: sched_switch: prev_comm=...
/// ```
///
/// The task column is `%16s-%-7d`: the comm (which may itself contain `-` and spaces) is
/// everything before the last `-` ahead of the pid. A `(TGID)` column (`record-tgid`) is
/// skipped; a missing flags column (`noirq-info`) gives empty `flags`.
pub fn parse_record(line: &str) -> Result<TraceRecord, RecordError> {
    let line = line.trim_end_matches(['\n', '\r']);
    // The CPU column is the first `[digits] ` after which the rest of the line parses; a comm
    // containing something like `[1] ` is thereby skipped over.
    let mut first_err = None;
    let mut from = 0;
    while let Some(off) = line[from..].find('[') {
        let open = from + off;
        from = open + 1;
        let after = &line[from..];
        let n = digits(after);
        let Some(rest) = after[n..].strip_prefix("] ") else {
            continue;
        };
        if n == 0 {
            continue;
        }
        match parse_around_cpu(&line[..open], &after[..n], rest) {
            Ok(record) => return Ok(record),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(first_err.unwrap_or(RecordError::NoTaskColumn))
}

fn parse_around_cpu(task: &str, cpu: &str, rest: &str) -> Result<TraceRecord, RecordError> {
    let mut task = task.trim_end();
    if task.ends_with(')') {
        if let Some(open) = task.rfind('(') {
            task = task[..open].trim_end();
        }
    }
    let (comm, pid) = task.rsplit_once('-').ok_or(RecordError::NoTaskColumn)?;
    let pid = pid
        .parse::<i32>()
        .ok()
        .filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| RecordError::BadPid(pid.to_string()))?;
    let comm = comm.trim_start().to_string();
    let cpu = cpu
        .parse::<u32>()
        .map_err(|_| RecordError::BadCpu(cpu.to_string()))?;

    let (first, after_first) = split_token(rest.trim_start());
    let (flags, ts_tok, after_ts) = if looks_like_timestamp(first) {
        ("", first, after_first)
    } else {
        let (ts, after) = split_token(after_first.trim_start());
        (first, ts, after)
    };
    let ts_ns = parse_timestamp(ts_tok)?;

    let event_text = after_ts.strip_prefix(' ').unwrap_or(after_ts);
    let (name, body) = event_text
        .split_once(':')
        .ok_or_else(|| RecordError::NoEventName(event_text.to_string()))?;
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(RecordError::BadEventName(name.to_string()));
    }
    let body = body.strip_prefix(' ').unwrap_or(body);
    let event = TraceEvent::from_body(name, body)?;
    Ok(TraceRecord {
        ts_ns,
        cpu,
        comm,
        pid,
        flags: flags.to_string(),
        event,
    })
}

/// The text up to the first space, and the rest from that space on.
fn split_token(s: &str) -> (&str, &str) {
    let end = s.find(' ').unwrap_or(s.len());
    s.split_at(end)
}

fn looks_like_timestamp(tok: &str) -> bool {
    tok.ends_with(':')
        && tok.contains('.')
        && tok[..tok.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.')
}

/// `SECONDS.FRACTION:` with 1 to 9 fraction digits (the kernel prints 6) into nanoseconds.
fn parse_timestamp(tok: &str) -> Result<u64, RecordError> {
    let bad = || RecordError::BadTimestamp(tok.to_string());
    let (secs, frac) = tok
        .strip_suffix(':')
        .and_then(|t| t.split_once('.'))
        .ok_or_else(bad)?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(secs) || !all_digits(frac) || frac.len() > 9 {
        return Err(bad());
    }
    let frac_ns = frac.parse::<u64>().map_err(|_| bad())? * 10u64.pow(9 - frac.len() as u32);
    secs.parse::<u64>()
        .ok()
        .and_then(|s| s.checked_mul(1_000_000_000))
        .and_then(|s| s.checked_add(frac_ns))
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_with_dashes_and_spaces() {
        let r = parse_record(
            "   my a-b worker-1234   [003] d..2.  1234.000001: sched_waking: \
             comm=my a-b worker pid=1234 prio=120 target_cpu=003",
        )
        .unwrap();
        assert_eq!(r.comm, "my a-b worker");
        assert_eq!(r.pid, 1234);
        assert_eq!(r.cpu, 3);
        assert_eq!(r.ts_ns, 1_234_000_001_000);
        assert_eq!(
            r.event,
            TraceEvent::SchedWaking {
                comm: "my a-b worker".into(),
                pid: 1234,
                prio: 120,
                target_cpu: 3
            }
        );
    }

    #[test]
    fn comm_containing_a_cpu_lookalike() {
        let r =
            parse_record("      w [1] x-77      [001] .....     0.000002: tracing_mark_write: hi")
                .unwrap();
        assert_eq!((r.comm.as_str(), r.pid, r.cpu), ("w [1] x", 77, 1));
        assert_eq!(
            r.event,
            TraceEvent::Other {
                name: "tracing_mark_write".into(),
                body: "hi".into()
            }
        );
    }

    #[test]
    fn prev_state_variants() {
        for state in [
            "R", "R+", "S", "D", "T", "t", "X", "Z", "P", "I", "D|K", "S+",
        ] {
            let line = format!(
                "            bash-6427    [001] d..2.   427.977738: sched_switch: \
                 prev_comm=bash prev_pid=6427 prev_prio=120 prev_state={state} ==> \
                 next_comm=bash next_pid=6429 next_prio=120"
            );
            match parse_record(&line).unwrap().event {
                TraceEvent::SchedSwitch { prev_state, .. } => assert_eq!(prev_state, state),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn optional_columns() {
        // noirq-info: no flags column; record-tgid: a (TGID) column; 9-digit fractions.
        let r = parse_record("            bash-6427    [001]   427.977684: foo: x=1").unwrap();
        assert_eq!((r.flags.as_str(), r.ts_ns), ("", 427_977_684_000));
        let r = parse_record(
            "            bash-6427    (   6427) [001] d..2.   427.977684123: foo: x=1",
        )
        .unwrap();
        assert_eq!(
            (r.pid, r.flags.as_str(), r.ts_ns),
            (6427, "d..2.", 427_977_684_123)
        );
        // An event with an empty body.
        let r = parse_record("  a-1 [000] .....     1.000000: foo:").unwrap();
        assert_eq!(
            r.event,
            TraceEvent::Other {
                name: "foo".into(),
                body: String::new()
            }
        );
    }

    #[test]
    fn record_errors() {
        let e = |l: &str| parse_record(l).unwrap_err();
        assert_eq!(e("garbage"), RecordError::NoTaskColumn);
        assert_eq!(
            e("  bash-x [000] ..... 1.000000: foo: a"),
            RecordError::BadPid("x".into())
        );
        assert_eq!(
            e("  bash-1 [000] ..... 1.0000000000: foo: a"),
            RecordError::BadTimestamp("1.0000000000:".into())
        );
        assert_eq!(
            e("  bash-1 [000] ..... 1.000000 foo: a"),
            RecordError::BadTimestamp("1.000000".into())
        );
        assert_eq!(
            e("  bash-1 [000] ..... 1.000000: no event here"),
            RecordError::NoEventName("no event here".into())
        );
        assert_eq!(
            e("  bash-1 [000] ..... 1.000000: bad name: x"),
            RecordError::BadEventName("bad name".into())
        );
        assert!(matches!(
            e("  bash-1 [000] ..... 1.000000: sched_wakeup: comm=a pid=1"),
            RecordError::BodyMismatch { .. }
        ));
        assert_eq!(
            e("  bash-1 [99999999999] ..... 1.000000: foo: a"),
            RecordError::BadCpu("99999999999".into())
        );
    }

    #[test]
    fn trace_errors_carry_line_numbers() {
        let text = "# tracer: nop\n\
                    #\n\
                    \n\
                    CPU:1 [LOST 12 EVENTS]\n\
                    \x20           bash-6427    [001] .....   427.977684: foo: ok\n\
                    \x20           bash-6427    [001] .....   427.97768x: foo: bad ts\n";
        let err = parse_trace(text).unwrap_err();
        assert_eq!(err.line, 6);
        assert_eq!(
            err.to_string(),
            "line 6: bad timestamp `427.97768x:`, expected SECONDS.FRACTION followed by `:`"
        );
        assert_eq!(err.error, RecordError::BadTimestamp("427.97768x:".into()));
        assert_eq!(
            parse_trace(&text[..text.rfind("\x20           bash").unwrap()])
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn lost_events_line() {
        assert!(is_lost_events("CPU:1 [LOST 12 EVENTS]"));
        assert!(!is_lost_events("CPU:1 [LOST x EVENTS]"));
    }
}
