//! What `server-model` prints at the end of a run (netbench.md §17.4): a header, the request
//! count and rate, then the request and the wake-up latency reports in schbench's format
//! (workloads.md §4.3), through schbench's own histogram and printer.

use super::options::Options;
use crate::schbench::{latency_report, Histogram};

/// Everything the printer needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub workers: u32,
    pub clients: u32,
    /// Requests completed by all clients within the runtime.
    pub requests: u64,
    /// The time the requests were counted over (ns): the runtime, or less when the simulation
    /// stopped first.
    pub elapsed_ns: u64,
    /// Request latencies of all clients (µs).
    pub request: Histogram,
    /// Wake-up latencies of all workers (µs).
    pub wakeup: Histogram,
}

impl Report {
    /// Requests per second over the elapsed time (0 for an empty run).
    pub fn rps(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.requests as f64 * 1e9 / self.elapsed_ns as f64
    }
}

/// The §17.4 lines, each ending in `\n`.
pub fn render(opts: &Options, r: &Report) -> String {
    let rt = opts.runtime_text();
    let mut out = format!(
        "server-model: arch={} transport={} workers={} clients={} conn={} runtime {rt} (s)\n",
        opts.arch.name(),
        opts.transport.name(),
        r.workers,
        r.clients,
        opts.conn.name(),
    );
    out.push_str(&format!(
        "requests: {} total, {:.2} req/s\n",
        r.requests,
        r.rps()
    ));
    latency_report(&mut out, &r.request, "Request Latencies", &rt);
    latency_report(&mut out, &r.wakeup, "Wakeup Latencies", &rt);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::options::parse;

    #[test]
    fn the_section_17_4_format() {
        // Request latencies 1..=10 µs once each: schbench's walk gives 50th 5 (3 samples
        // between the 20th and the 50th), 90th 9 (4), 99th 10 (1), 99.9th 10 (0)
        // (histogram.rs `percentile_walk_ten_samples`); one wake-up sample of 3 µs puts
        // every percentile at 3, its count on the 20th (not printed) and 0 on the others.
        let mut request = Histogram::new();
        (1..=10).for_each(|v| request.add_lat(v));
        let mut wakeup = Histogram::new();
        wakeup.add_lat(3);
        let words: Vec<String> = "--arch epoll_shared --workers 1 --clients 1 --runtime 2"
            .split_whitespace()
            .map(String::from)
            .collect();
        let o = parse(&words).unwrap();
        // 10 requests in 4 s: 2.50 req/s
        let r = Report {
            workers: 1,
            clients: 1,
            requests: 10,
            elapsed_ns: 4_000_000_000,
            request,
            wakeup,
        };
        let want = "\
server-model: arch=epoll_shared transport=tcp workers=1 clients=1 conn=persistent runtime 2 (s)
requests: 10 total, 2.50 req/s
Request Latencies percentiles (usec) runtime 2 (s) (10 total samples)
\t  50.0th: 5          (3 samples)
\t  90.0th: 9          (4 samples)
\t* 99.0th: 10         (1 samples)
\t  99.9th: 10         (0 samples)
\t  min=1, max=10
Wakeup Latencies percentiles (usec) runtime 2 (s) (1 total samples)
\t  50.0th: 3          (0 samples)
\t  90.0th: 3          (0 samples)
\t* 99.0th: 3          (0 samples)
\t  99.9th: 3          (0 samples)
\t  min=3, max=3
";
        assert_eq!(render(&o, &r), want);
    }

    #[test]
    fn empty_run_prints_zero_rate() {
        let r = Report {
            workers: 2,
            clients: 4,
            requests: 0,
            elapsed_ns: 0,
            request: Histogram::new(),
            wakeup: Histogram::new(),
        };
        assert_eq!(r.rps(), 0.0);
        let out = render(&crate::server::options::Options::default(), &r);
        assert!(out.contains("requests: 0 total, 0.00 req/s\n"), "{out}");
        assert!(out.contains("runtime 30 (s) (0 total samples)"), "{out}");
    }
}
