//! What netperf 2.6.0 prints (netbench.md §16.4), as in `nettest_omni.c` (`send_tcp_rr`,
//! `send_udp_rr`, `send_tcp_stream`, `send_udp_stream`: the legacy "MIGRATED" output),
//! `nettest_bsd.c` `print_top_test_header` and `netlib.c` (`format_units`,
//! `calc_thruput_interval`, the confidence statistics, `display_confidence`,
//! `demo_interval_display`). Title strings keep their trailing spaces.

use super::options::{Family, Options, Test};

/// netlib.c `format_units()`.
pub fn format_units(fmt: char) -> &'static str {
    match fmt {
        'K' => "KBytes",
        'M' => "MBytes",
        'G' => "GBytes",
        'k' => "10^3bits",
        'm' => "10^6bits",
        'g' => "10^9bits",
        'x' => "Trans",
        _ => "KBytes",
    }
}

/// netlib.c `calc_thruput_interval()`: `units` (bytes, or transactions for `x`) per second
/// in the `fmt` unit.
pub fn calc_thruput(fmt: char, units: f64, elapsed: f64) -> f64 {
    let divisor = match fmt {
        'K' => 1024.0,
        'M' => 1024.0 * 1024.0,
        'G' => 1024.0 * 1024.0 * 1024.0,
        'k' => 1000.0 / 8.0,
        'm' => 1000.0 * 1000.0 / 8.0,
        'g' => 1000.0 * 1000.0 * 1000.0 / 8.0,
        'x' => 1.0,
        _ => 1024.0,
    };
    units / divisor / elapsed
}

/// `inet_ntop` into netperf's 8-byte buffer (it passes `sizeof(address_buf)`, a pointer):
/// an address of 8 characters or more does not fit and the buffer stays empty
/// (netbench.md §16.4, **unverified**: `127.0.0.1` prints as `()`).
fn ntop8(addr: &str) -> &str {
    if addr.len() < 8 {
        addr
    } else {
        ""
    }
}

/// `print_top_test_header`: the first line of every test.
pub fn top_header(o: &Options) -> String {
    let (local_name, local_addr, fam) = match o.family {
        Family::Inet => ("0.0.0.0", "0.0.0.0", "AF_INET"),
        Family::Inet6 => ("::0", "::", "AF_INET6"),
    };
    let remote_addr = match o.family {
        Family::Inet => "127.0.0.1",
        Family::Inet6 => "::1",
    };
    let mut s = format!(
        "{} from {} ({}) port 0 {} to {} ({}) port 0 {}",
        o.test.title(),
        local_name,
        ntop8(local_addr),
        fam,
        o.host,
        ntop8(remote_addr),
        fam
    );
    if o.iteration_max > 1 {
        s += &format!(
            " : +/-{:.3}% @ {:2}% conf. ",
            o.interval / 0.02,
            o.confidence_level
        );
    }
    if o.nodelay {
        s += " : nodelay";
    }
    // mmtests builds with --enable-demo=yes; first burst is compiled in by default
    s += " : demo";
    if o.test.is_rr() {
        s += &format!(" : first burst {}", o.first_burst);
    }
    if o.cpu_binding {
        s += " : cpu bind";
    }
    s.push('\n');
    s
}

/// `demo_interval_display()` (HUMAN output): `units` accumulated over `interval_us`, the
/// line ending with the simulated clock (netperf prints the epoch time of day; the model
/// has only the time since boot).
pub fn interim_line(fmt: char, units: f64, interval_us: f64, now_ns: u64) -> String {
    let secs = interval_us / 1_000_000.0;
    format!(
        "Interim result: {:7.2} {}/s over {:.3} seconds ending at {}.{:03}\n",
        calc_thruput(fmt, units, secs),
        format_units(fmt),
        secs,
        now_ns / 1_000_000_000,
        now_ns % 1_000_000_000 / 1_000_000
    )
}

/// Student t values of `confid()` (netlib.c), by degrees of freedom 1..=30.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];
const T99: [f64; 30] = [
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169, 3.106, 3.055, 3.012,
    2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797, 2.787, 2.779,
    2.771, 2.763, 2.756, 2.750,
];

fn confid(level: u32, freedom: u32) -> f64 {
    let i = (freedom.clamp(1, 30) - 1) as usize;
    match level {
        95 => T95[i],
        99 => T99[i],
        _ => 0.0,
    }
}

/// netlib.c `init_stat` / `calculate_confidence` / `retrieve_confident_values`, for the
/// result and the test time; CPU utilisation is not measured, so netperf feeds −1 for the
/// local and remote CPU every iteration, whose interval terms are then exactly `interval`.
#[derive(Debug, Clone)]
pub struct Confidence {
    level: u32,
    interval: f64,
    n: u32,
    sum_time: f64,
    sum_result: f64,
    square_sum_result: f64,
    result_confid: f64,
    cpu_confid: f64,
    /// netperf's `confidence` (starts at −10: "not yet").
    pub confidence: f64,
}

impl Confidence {
    pub fn new(level: u32, interval: f64) -> Confidence {
        Confidence {
            level,
            interval,
            n: 0,
            sum_time: 0.0,
            sum_result: 0.0,
            square_sum_result: 0.0,
            result_confid: -10.0,
            cpu_confid: -10.0,
            confidence: -10.0,
        }
    }

    /// One iteration's elapsed time (a C `float`) and result.
    pub fn add(&mut self, time: f32, result: f64) {
        self.n += 1;
        let n = self.n as f64;
        self.sum_time += time as f64;
        self.sum_result += result;
        self.square_sum_result += result * result;
        let mean = self.sum_result / n;
        let var = self.square_sum_result / n - mean * mean;
        if self.n > 1 {
            let t = confid(self.level, self.n - 1);
            self.result_confid = self.interval - 2.0 * t * (var / (n - 1.0)).sqrt() / mean;
            // the CPU terms: mean −1, variance 0 → interval − 2t·(−0) = interval
            self.cpu_confid = self.interval;
            // min(min(result, local cpu), remote cpu) with netlib.h's `(a < b) ? a : b`
            let m = if self.result_confid < self.cpu_confid {
                self.result_confid
            } else {
                self.cpu_confid
            };
            self.confidence = if m < self.cpu_confid {
                m
            } else {
                self.cpu_confid
            };
        }
    }

    /// netperf's loop condition: another iteration?
    pub fn again(&self, iteration: u32, max: u32, min: u32) -> bool {
        (self.confidence < 0.0 && iteration <= max) || iteration <= min
    }

    /// `retrieve_confident_values`: the mean elapsed time (as a `float`) and mean result.
    pub fn means(&self) -> (f32, f64) {
        let n = self.n.max(1) as f64;
        ((self.sum_time / n) as f32, self.sum_result / n)
    }

    /// The `!!! WARNING` block of `display_confidence()`.
    pub fn warning(&self) -> String {
        format!(
            "!!! WARNING\n\
             !!! Desired confidence was not achieved within the specified iterations.\n\
             !!! This implies that there was variability in the test environment that\n\
             !!! must be investigated before going further.\n\
             !!! Confidence intervals: Throughput      : {:4.3}%\n\
             !!!                       Local CPU util  : {:4.3}%\n\
             !!!                       Remote CPU util : {:4.3}%\n\n",
            100.0 * (self.interval - self.result_confid),
            100.0 * (self.interval - self.cpu_confid),
            100.0 * (self.interval - self.cpu_confid)
        )
    }
}

/// The figures of a finished test, as netperf has them when it prints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Results {
    /// Mean elapsed time over the iterations (a C `float`).
    pub elapsed: f32,
    /// Mean result in the `-f` unit (transactions/s for `x`).
    pub thruput: f64,
    /// Local send and receive socket sizes, remote send and receive socket sizes.
    pub lss: u32,
    pub lsr: u32,
    pub rss: u32,
    pub rsr: u32,
    /// Request and response sizes (RR), send size (STREAM).
    pub req: u32,
    pub rsp: u32,
    pub send_size: u32,
    /// UDP_STREAM, last iteration: sends, failed sends, the remote's receives, and the send
    /// and receive rates.
    pub send_calls: u64,
    pub failed_sends: u64,
    pub remote_recv_calls: u64,
    pub local_send_thruput: f64,
    pub remote_recv_thruput: f64,
    /// Whether the confidence warning comes first.
    pub warning: Option<String>,
}

/// The result block printed after the test (warning, titles, figure lines).
pub fn result_block(o: &Options, r: &Results) -> String {
    let mut s = String::new();
    if let Some(w) = &r.warning {
        s += w;
    }
    let brand = match (&o.brand, o.print_headers) {
        (Some(b), false) => b.as_str(),
        _ => "",
    };
    let units = format_units(o.fmt);
    match o.test {
        Test::TcpRr | Test::UdpRr => {
            if o.verbosity == 0 {
                s += &format!("{:7.2} {}\n", r.thruput, brand);
                return s;
            }
            if o.print_headers {
                if o.fmt == 'x' {
                    s += "Local /Remote\n\
                          Socket Size   Request  Resp.   Elapsed  Trans.\n\
                          Send   Recv   Size     Size    Time     Rate         \n\
                          bytes  Bytes  bytes    bytes   secs.    per sec   \n\n";
                } else {
                    s += &format!(
                        "Local /Remote\n\
                         Socket Size   Request  Resp.   Elapsed  \n\
                         Send   Recv   Size     Size    Time     Throughput \n\
                         bytes  Bytes  bytes    bytes   secs.    {units}/sec   \n\n"
                    );
                }
            }
            s += &format!(
                "{:<6} {:<6} {:<6}   {:<6}  {:<6.2}   {:7.2}   {}\n",
                r.lss, r.lsr, r.req, r.rsp, r.elapsed, r.thruput, brand
            );
            s += &format!("{:<6} {:<6}\n", r.rss, r.rsr);
        }
        Test::TcpStream => {
            if o.verbosity == 0 {
                s += &format!("{:7.2} {}\n", r.thruput, brand);
                return s;
            }
            if o.print_headers {
                s += &format!(
                    "Recv   Send    Send                          \n\
                     Socket Socket  Message  Elapsed              \n\
                     Size   Size    Size     Time     Throughput  \n\
                     bytes  bytes   bytes    secs.    {units}/sec  \n\n"
                );
            }
            s += &format!(
                "{:6} {:6} {:6}    {:<6.2}   {:7.2}   {}\n",
                r.rsr, r.lss, r.send_size, r.elapsed, r.thruput, brand
            );
        }
        Test::UdpStream => {
            if o.verbosity == 0 {
                s += &format!("{:7.2}\n", r.local_send_thruput);
                return s;
            }
            if o.print_headers {
                s += &format!(
                    "Socket  Message  Elapsed      Messages                \n\
                     Size    Size     Time         Okay Errors   Throughput\n\
                     bytes   bytes    secs            #      #   {units}/sec\n\n"
                );
            }
            s += &format!(
                "{:6}  {:6}   {:<7.2}   {:7} {:6}    {:7.2}\n",
                r.lss, r.send_size, r.elapsed, r.send_calls, r.failed_sends, r.local_send_thruput
            );
            s += &format!(
                "{:6}           {:<7.2}   {:7}           {:7.2}\n\n",
                r.rsr, r.elapsed, r.remote_recv_calls, r.remote_recv_thruput
            );
        }
    }
    s
}

/// The number mmtests reads from the output (`ExtractNetperf`): the last numeric line with
/// more than four fields, its last field (RR, TCP_STREAM); for UDP_STREAM the six-field line
/// (send) and the four-field line (receive). Lines with a letter are skipped.
pub fn mmtests_values(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.chars().any(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 {
            if let Some(v) = f.last().and_then(|v| v.parse::<f64>().ok()) {
                out.push(v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::options::parse;
    use super::*;

    fn opts(line: &str) -> Options {
        let w: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&w).unwrap()
    }

    /// The title lines of nettest_omni.c `send_tcp_rr` (trailing spaces: nine after `Rate`,
    /// three after `per sec`, §16.4) and its two figure lines `"%-6d %-6d %-6d   %-6d
    /// %-6.2f   %7.2f   %s\n"`, `"%-6d %-6d\n"`.
    #[test]
    fn rr_transactions_block_is_byte_exact() {
        let o = opts("-t TCP_RR");
        let r = Results {
            elapsed: 10.0,
            thruput: 81301.0,
            lss: 16384,
            lsr: 131072,
            rss: 16384,
            rsr: 131072,
            req: 1,
            rsp: 1,
            ..Default::default()
        };
        let want = "Local /Remote\n\
                    Socket Size   Request  Resp.   Elapsed  Trans.\n\
                    Send   Recv   Size     Size    Time     Rate         \n\
                    bytes  Bytes  bytes    bytes   secs.    per sec   \n\
                    \n\
                    16384  131072 1        1       10.00    81301.00   \n\
                    16384  131072\n";
        assert_eq!(result_block(&o, &r), want);
        // the header line, -H 127.0.0.1 (the 8-byte inet_ntop buffer leaves "()")
        let o = opts("-4 -i 3,3 -I 95,5 -f k -D 1 -t TCP_RR -H 127.0.0.1");
        assert_eq!(
            top_header(&o),
            "MIGRATED TCP REQUEST/RESPONSE TEST from 0.0.0.0 (0.0.0.0) port 0 AF_INET to \
             127.0.0.1 () port 0 AF_INET : +/-2.500% @ 95% conf.  : demo : first burst 0\n"
        );
    }

    /// `-f k`: the band title (`Throughput`, `10^3bits/sec`).
    #[test]
    fn rr_throughput_title() {
        let o = opts("-f k -t UDP_RR -P 1");
        let r = Results {
            elapsed: 10.0,
            thruput: 1300.8,
            lss: 212992,
            lsr: 212992,
            rss: 212992,
            rsr: 212992,
            req: 1,
            rsp: 1,
            ..Default::default()
        };
        let want = "Local /Remote\n\
                    Socket Size   Request  Resp.   Elapsed  \n\
                    Send   Recv   Size     Size    Time     Throughput \n\
                    bytes  Bytes  bytes    bytes   secs.    10^3bits/sec   \n\
                    \n\
                    212992 212992 1        1       10.00    1300.80   \n\
                    212992 212992\n";
        assert_eq!(result_block(&o, &r), want);
        // -P 0: no title; a brand is printed only then
        let o = opts("-f k -t UDP_RR -P 0 -B x1");
        let out = result_block(&o, &r);
        assert!(out.starts_with("212992 212992 1        1       10.00    1300.80   x1\n"));
    }

    #[test]
    fn stream_blocks_are_byte_exact() {
        let o = opts("-t TCP_STREAM");
        let r = Results {
            elapsed: 10.0,
            thruput: 12345.678,
            lss: 16384,
            rsr: 131072,
            send_size: 16384,
            ..Default::default()
        };
        let want = "Recv   Send    Send                          \n\
                    Socket Socket  Message  Elapsed              \n\
                    Size   Size    Size     Time     Throughput  \n\
                    bytes  bytes   bytes    secs.    10^6bits/sec  \n\
                    \n\
                    131072  16384  16384    10.00    12345.68   \n";
        assert_eq!(result_block(&o, &r), want);
        let o = opts("-t UDP_STREAM -- -m 64");
        let r = Results {
            elapsed: 10.0,
            lss: 212992,
            rsr: 212992,
            send_size: 64,
            send_calls: 5_000_000,
            failed_sends: 0,
            remote_recv_calls: 3_000_000,
            local_send_thruput: 256.0,
            remote_recv_thruput: 153.6,
            ..Default::default()
        };
        let want = "Socket  Message  Elapsed      Messages                \n\
                    Size    Size     Time         Okay Errors   Throughput\n\
                    bytes   bytes    secs            #      #   10^6bits/sec\n\
                    \n\
                    212992      64   10.00     5000000      0     256.00\n\
                    212992           10.00     3000000            153.60\n\n";
        assert_eq!(result_block(&o, &r), want);
        // what mmtests reads: the send line, then the receive line
        assert_eq!(mmtests_values(want), vec![256.0, 153.6]);
    }

    /// Three equal results: variance 0, the interval is met (confidence = interval);
    /// results 100, 110, 90 at 95 %: mean 100, var = (10000+12100+8100)/3 − 100² = 66.67,
    /// t(2) = 4.303: 0.05 − 2 × 4.303 × sqrt(66.67 / 2) / 100 = 0.05 − 0.4969 = −0.4469:
    /// not met, the warning shows 100 × (0.05 + 0.4469) = 49.687 %.
    #[test]
    fn confidence_as_netlib_computes_it() {
        let mut c = Confidence::new(95, 0.05);
        for _ in 0..3 {
            c.add(10.0, 1000.0);
        }
        assert_eq!(c.confidence, 0.05);
        assert!(!c.again(4, 3, 3));
        let mut c = Confidence::new(95, 0.05);
        for r in [100.0, 110.0, 90.0] {
            c.add(10.0, r);
        }
        assert!(
            (c.confidence - (0.05 - 2.0 * 4.303 * (200.0f64 / 6.0).sqrt() / 100.0)).abs() < 1e-9
        );
        assert!(c.again(4, 10, 3) && !c.again(4, 3, 3));
        let w = c.warning();
        assert!(w.contains("Throughput      : 49.687%\n"), "{w}");
        assert!(w.contains("Local CPU util  : 0.000%\n"), "{w}");
        assert_eq!(w.lines().filter(|l| l.starts_with("!!!")).count(), 7);
        assert!(w.ends_with("%\n\n"));
        assert_eq!(c.means(), (10.0, 100.0));
    }

    /// `-v 0`: the figure alone (`tput_fmt_0`, `"%7.2f %s\n"`), the brand only without
    /// headers; `-P 0` drops the titles and the header line.
    #[test]
    fn terse_forms() {
        let r = Results {
            elapsed: 10.0,
            thruput: 1300.8,
            ..Default::default()
        };
        assert_eq!(result_block(&opts("-t TCP_RR -f k -v 0"), &r), "1300.80 \n");
        assert_eq!(
            result_block(&opts("-t TCP_RR -f k -v 0 -P 0 -B run1"), &r),
            "1300.80 run1\n"
        );
        let o = opts("-t TCP_STREAM -P 0");
        let out = result_block(&o, &r);
        assert_eq!(out, "     0      0      0    10.00    1300.80   \n");
    }

    #[test]
    fn units() {
        // -f k: 81 301 one-byte transactions/s = 162 602 B/s = 1 300.8 × 10^3 bits/s
        assert!((calc_thruput('k', 162_602.0, 1.0) - 1300.816).abs() < 1e-9);
        assert_eq!(calc_thruput('m', 1_000_000.0, 8.0), 1.0);
        assert_eq!(calc_thruput('K', 2048.0, 2.0), 1.0);
        assert_eq!(format_units('g'), "10^9bits");
        assert_eq!(
            interim_line('x', 81301.0, 1_000_000.0, 2_345_678_901),
            "Interim result: 81301.00 Trans/s over 1.000 seconds ending at 2.345\n"
        );
    }
}
