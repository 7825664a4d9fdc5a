//! What `time make -jN` prints (workloads.md §8.3): bash's `time` report, from the elapsed
//! time and the user and system CPU time of every process of the build.

/// The figures of one build.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub jobs: u32,
    pub units: u32,
    /// make exited (the run was not cut short).
    pub finished: bool,
    /// From the start of make to its exit (to the end of the simulation if cut short), ns.
    pub real_ns: u64,
    /// Summed `utime`/`stime` of all processes of the build (`getrusage(RUSAGE_CHILDREN)`
    /// of the shell), ns.
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Phase lengths: prepare, compile, link + modpost.
    pub prepare_ns: Option<u64>,
    pub compile_ns: Option<u64>,
    pub final_ns: Option<u64>,
    pub jobs_done: u64,
    pub forks: u64,
    pub execs: u64,
    pub processes: u64,
    pub token_reads: u64,
    pub token_writes: u64,
    /// Token reads that followed a `pselect()` ended by another make's token write.
    pub token_handoffs: u64,
    /// `pselect()` calls on the jobserver, and how many SIGCHLD interrupted.
    pub token_waits: u64,
    pub token_waits_interrupted: u64,
    /// Sub-makes run (`-jN`, N > 1: one per directory).
    pub submakes: u64,
    pub max_jobs_alive: u32,
    pub max_cc1_alive: u32,
    /// The job graph's user-space work: serial phases (S) and compile jobs (P), ns.
    pub serial_work_ns: u64,
    pub parallel_work_ns: u64,
}

/// bash's `%3lR` of `TIMEFORMAT`: minutes, then seconds with three decimals; the time is
/// taken in µs (a `struct timeval`) and rounded to ms half up (bash `timeval_to_secs`).
pub fn bash_time(ns: u64) -> String {
    let us = ns / 1_000;
    let mut secs = us / 1_000_000;
    let rest = us % 1_000_000;
    let mut ms = rest / 1_000;
    if rest % 1_000 >= 500 {
        ms += 1;
    }
    if ms >= 1_000 {
        secs += 1;
        ms -= 1_000;
    }
    format!("{}m{}.{:03}s", secs / 60, secs % 60, ms)
}

/// The lines printed at the end of the run: bash's default `time` report (a blank line, then
/// `real`, `user`, `sys`), or, for a build the simulation cut short, one line saying so
/// instead of a wrong time.
pub fn render(r: &Report) -> String {
    if !r.finished {
        return format!(
            "make -j{}: the build did not finish within the simulated time ({} of {} compile \
             jobs done after {:.3} s); no time report\n",
            r.jobs,
            r.jobs_done,
            r.units,
            r.real_ns as f64 / 1e9
        );
    }
    format!(
        "\nreal\t{}\nuser\t{}\nsys\t{}\n",
        bash_time(r.real_ns),
        bash_time(r.user_ns),
        bash_time(r.sys_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_time_format() {
        // seed 003's Altra row: real 9m20.120s = 560.120 s
        assert_eq!(bash_time(560_120_000_000), "9m20.120s");
        assert_eq!(bash_time(0), "0m0.000s");
        // 3843.250 s = 64 min 3.250 s
        assert_eq!(bash_time(3_843_250_000_000), "64m3.250s");
        // µs rounded to ms half up: 1.0005 s → 1.001, 1.000499 s → 1.000, 59.9996 s → 1m0.000s
        assert_eq!(bash_time(1_000_500_000), "0m1.001s");
        assert_eq!(bash_time(1_000_499_999), "0m1.000s");
        assert_eq!(bash_time(59_999_600_000), "1m0.000s");
    }

    #[test]
    fn report_lines() {
        let r = Report {
            jobs: 8,
            units: 10,
            finished: true,
            real_ns: 61_500_000_000,
            user_ns: 2_000_000,
            sys_ns: 125_000_000_000,
            jobs_done: 10,
            ..Default::default()
        };
        assert_eq!(
            render(&r),
            "\nreal\t1m1.500s\nuser\t0m0.002s\nsys\t2m5.000s\n"
        );
        let cut = Report {
            finished: false,
            jobs_done: 3,
            real_ns: 10_000_000_000,
            ..r
        };
        let out = render(&cut);
        assert!(
            out.contains("did not finish") && out.contains("3 of 10"),
            "{out}"
        );
        assert!(!out.contains("real"), "{out}");
    }
}
