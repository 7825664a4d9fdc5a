//! The lines hackbench prints (workloads.md §3.3), for both implementations. The measured
//! interval runs from just before the start write to the last reap; both ends are read with
//! `gettimeofday`, so they are whole microseconds, and the printed fraction is the
//! microseconds truncated to milliseconds.

use schedlab_engine::time::SimTime;

use super::options::{Flavor, Options, PerfFormat, WorkerMode};

/// What the hackbench printer needs: the two `gettimeofday` readings around the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Results {
    /// Just before main writes the start byte (after every worker reported ready).
    pub start: SimTime,
    /// After the last worker was reaped (`wait()` / `pthread_join`).
    pub stop: SimTime,
}

impl Results {
    /// Elapsed time as hackbench prints it: (seconds, milliseconds), from microsecond
    /// readings, the fraction truncated.
    pub fn elapsed_sec_msec(&self) -> (u64, u64) {
        let us = (self.stop.ns() / 1_000).saturating_sub(self.start.ns() / 1_000);
        (us / 1_000_000, us % 1_000_000 / 1_000)
    }
}

/// The program's stdout for this run, each line ending in `\n`.
pub fn render(opts: &Options, res: &Results) -> String {
    let (sec, msec) = res.elapsed_sec_msec();
    let threads = opts.mode == WorkerMode::Thread;
    match opts.flavor {
        Flavor::RtTests => format!(
            "Running in {} mode with {} groups using {} file descriptors each (== {} tasks)\n\
             Each sender will pass {} messages of {} bytes\n\
             Time: {sec}.{msec:03}\n",
            if threads { "threaded" } else { "process" },
            opts.groups,
            opts.tasks_per_group(),
            opts.total_tasks(),
            opts.loops,
            opts.datasize,
        ),
        Flavor::Perf(PerfFormat::Default) => {
            let what = if threads { "threads" } else { "processes" };
            format!(
                "# Running 'sched/messaging' benchmark:\n\
                 # {} sender and receiver {what} per group\n\
                 # {} groups == {} {what} run\n\
                 \n \
                 {:>14}: {sec}.{msec:03} [sec]\n",
                opts.fds,
                opts.groups,
                opts.total_tasks(),
                "Total time",
            )
        }
        Flavor::Perf(PerfFormat::Simple) => format!("{sec}.{msec:03}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hackbench::options::{parse, parse_perf, parse_perf_bench};

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// 0.266 s run read at microsecond granularity: start 1.000000999 s (reads 1000000 us),
    /// stop 1.266999999 s (reads 1266999 us): 266999 us = 0 s + 266 ms.
    fn run() -> Results {
        Results {
            start: SimTime(1_000_000_999),
            stop: SimTime(1_266_999_999),
        }
    }

    #[test]
    fn elapsed_truncates() {
        assert_eq!(run().elapsed_sec_msec(), (0, 266));
        // 12.3456789 s - 0 = 12345678 us -> 12 s, 345 ms.
        let r = Results {
            start: SimTime(0),
            stop: SimTime(12_345_678_900),
        };
        assert_eq!(r.elapsed_sec_msec(), (12, 345));
    }

    #[test]
    fn rt_tests_golden() {
        let o = parse(&w("-T -p -l 16000000 -g 2")).unwrap();
        let expected = "\
Running in threaded mode with 2 groups using 40 file descriptors each (== 80 tasks)
Each sender will pass 16000000 messages of 100 bytes
Time: 0.266
";
        assert_eq!(render(&o, &run()), expected);
        let o = parse(&[]).unwrap();
        assert!(render(&o, &run()).starts_with(
            "Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\n"
        ));
    }

    #[test]
    fn perf_default_golden() {
        let o = parse_perf(&w("-p -g 1 -l 10000")).unwrap();
        let expected = "\
# Running 'sched/messaging' benchmark:
# 20 sender and receiver processes per group
# 1 groups == 40 processes run

     Total time: 0.266 [sec]
";
        assert_eq!(render(&o, &run()), expected);
        let o = parse_perf(&w("--thread -g 4")).unwrap();
        let out = render(&o, &run());
        assert!(out.contains(
            "# 20 sender and receiver threads per group\n# 4 groups == 160 threads run\n"
        ));
    }

    #[test]
    fn perf_simple_golden() {
        let o = parse_perf_bench(&w("bench --format=simple sched messaging -g 2")).unwrap();
        assert_eq!(render(&o, &run()), "0.266\n");
    }
}
