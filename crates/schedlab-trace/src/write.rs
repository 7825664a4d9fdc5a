//! The writer: the header and record lines of `/sys/kernel/tracing/trace`, byte for byte as
//! Linux v6.18 prints them with the default options (`irq-info`, `noraw`, `norecord-tgid`).

use std::fmt;
use std::io;

use crate::record::{printed_us, truncate_comm, TraceRecord, IDLE_COMM};

/// The legend and column lines below the entries line.
/// kernel: trace.c print_func_help_header_irq() @ v6.18 (no tgid column).
const HEADER_LEGEND: &str = "\
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
";

/// Writes the 12-line header the kernel prints above the records (`# tracer: nop`, the
/// entries line with `#P:nr_cpus`, the irq-info legend and the column lines).
/// `nr_entries` is printed as both entries-in-buffer and entries-written (nothing lost).
///
/// kernel: trace.c print_trace_header() / print_event_info() @ v6.18.
pub fn write_header<W: io::Write + ?Sized>(
    w: &mut W,
    nr_entries: u64,
    nr_cpus: u32,
) -> io::Result<()> {
    write!(
        w,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {nr_entries}/{nr_entries}   \
         #P:{nr_cpus}\n#\n{HEADER_LEGEND}"
    )
}

/// Writes one record line (with its newline), exactly as the kernel would print it.
pub fn write_record<W: io::Write + ?Sized, S: AsRef<str>>(
    w: &mut W,
    record: &TraceRecord<S>,
) -> io::Result<()> {
    writeln!(w, "{record}")
}

/// Writes a whole trace file: [`write_header`] with `records.len()` entries, then the records.
pub fn write_trace<W: io::Write + ?Sized>(
    w: &mut W,
    nr_cpus: u32,
    records: &[TraceRecord],
) -> io::Result<()> {
    write_header(w, records.len() as u64, nr_cpus)?;
    records.iter().try_for_each(|r| write_record(w, r))
}

impl<S: AsRef<str>> fmt::Display for TraceRecord<S> {
    /// One line without its newline:
    /// `"%16s-%-7d [%03d] <flags> %5lu.%06lu: <name>: <body>"`.
    ///
    /// kernel: trace_output.c trace_print_context() + trace_print_time() @ v6.18.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let comm = if self.pid == 0 {
            IDLE_COMM
        } else {
            truncate_comm(self.comm.as_ref())
        };
        // `%16s` pads by bytes; `{:>16}` would pad by chars, which differs for non-ASCII.
        for _ in comm.len()..16 {
            f.write_str(" ")?;
        }
        let us = printed_us(self.ts_ns);
        write!(
            f,
            "{comm}-{:<7} [{:03}] {} {:>5}.{:06}: ",
            self.pid,
            self.cpu,
            self.flags.as_ref(),
            us / 1_000_000,
            us % 1_000_000
        )?;
        f.write_str(self.event.name())?;
        f.write_str(": ")?;
        self.event.write_body(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::TraceEvent;

    fn wakeup(comm: &str, pid: i32, ts_ns: u64) -> TraceRecord {
        TraceRecord {
            ts_ns,
            cpu: 0,
            comm: comm.into(),
            pid,
            flags: "dN.4.".into(),
            event: TraceEvent::SchedWakeup {
                comm: "x".into(),
                pid: 2,
                prio: 120,
                target_cpu: 0,
            },
        }
    }

    #[test]
    fn header_matches_v6_18() {
        let mut out = Vec::new();
        write_header(&mut out, 259, 2).unwrap();
        let text = String::from_utf8(out).unwrap();
        // The first three lines as read from the host capture (tests/fixtures/host-6.18.txt).
        assert!(text.starts_with(
            "# tracer: nop\n#\n# entries-in-buffer/entries-written: 259/259   #P:2\n#\n"
        ));
        assert_eq!(text.lines().count(), 12);
    }

    #[test]
    fn task_column_layout() {
        // %16s-%-7d: comm right-aligned to 16, pid left-aligned to 7, then one space.
        let line = wakeup("cat", 42, 5_000_001_000).to_string();
        assert!(line.starts_with("             cat-42      [000] dN.4.     5.000001: "));
        // pid 0 prints as <idle> whatever the comm says.
        let line = wakeup("swapper/0", 0, 0).to_string();
        assert!(line.starts_with("          <idle>-0       [000] dN.4.     0.000000: "));
        // A pid wider than 7 and seconds wider than 5 just push the columns right.
        let line = wakeup("cat", 12_345_678, 123_456_000_000_000).to_string();
        assert!(line.starts_with("             cat-12345678 [000] dN.4. 123456.000000: "));
        // A 16-byte comm is cut to 15, like the kernel's saved cmdlines.
        let line = wakeup("abcdefghijklmnop", 7, 0).to_string();
        assert!(line.starts_with(" abcdefghijklmno-7       [000]"));
    }

    #[test]
    fn timestamp_rounds_to_nearest_us() {
        // 1.000000499 s -> (1_000_000_499 + 500) / 1000 = 1_000_000 us -> "1.000000"
        assert!(wakeup("a", 1, 1_000_000_499)
            .to_string()
            .contains("     1.000000: "));
        // 1.000000500 s -> 1_000_001 us -> "1.000001"
        assert!(wakeup("a", 1, 1_000_000_500)
            .to_string()
            .contains("     1.000001: "));
    }

    #[test]
    fn write_trace_counts_entries() {
        let mut out = Vec::new();
        write_trace(&mut out, 4, &[wakeup("a", 1, 0), wakeup("b", 2, 0)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("# entries-in-buffer/entries-written: 2/2   #P:4\n"));
        assert_eq!(text.lines().count(), 14);
    }
}
