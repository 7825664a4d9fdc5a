//! Writes one SVG of each figure, on made-up data, into the directory given as the argument:
//! `cargo run -p schedlab-plot --example gallery -- DIR` (to look at them in a browser).

use schedlab_plot::*;

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: gallery DIR"));
    std::fs::create_dir_all(&dir).expect("create DIR");
    let lat = |k: u64, scale: f64| -> Vec<f64> {
        (1..=400u64)
            .map(|i| scale * (1.0 + ((i * k) % 97) as f64 * ((i % 7) as f64 + 1.0)))
            .collect()
    };
    let sets = vec![
        Samples {
            label: "v6.6.78".into(),
            values: lat(13, 1.0),
        },
        Samples {
            label: "v6.12.81".into(),
            values: lat(17, 2.0),
        },
        Samples {
            label: "v6.12.81 NO_DELAY_DEQUEUE NO_PREEMPT_SHORT".into(),
            values: lat(19, 0.5),
        },
    ];
    let w = |name: &str, s: String| std::fs::write(dir.join(name), s).expect("write");
    w(
        "cdf.svg",
        latency_cdf("wakeup latency: stress-ng-pipe", "µs", &sets).unwrap(),
    );
    w(
        "hist.svg",
        latency_histogram("wakeup latency: stress-ng-pipe", "µs", &sets).unwrap(),
    );
    let threads: Vec<HistSeries> = (0..4)
        .map(|t| HistSeries {
            label: format!("thread {t}"),
            counts: (0..120u64)
                .map(|b| {
                    if b < 3 + t {
                        0
                    } else {
                        20_000 / (1 + (b - 3 - t) * (b - 3 - t))
                    }
                })
                .collect(),
        })
        .collect();
    w(
        "cyclictest.svg",
        cyclictest_histogram("cyclictest -t 4 -h 120", &threads).unwrap(),
    );
    let mut spans = Vec::new();
    for cpu in 0..8u32 {
        let mut t = 0u64;
        let mut k = cpu as u64;
        while t < 20_000_000 {
            k = (k * 1103515245 + 12345) % 2147483648;
            let len = 50_000 + k % 900_000;
            spans.push(RunSpan {
                cpu,
                start_ns: t,
                end_ns: t + len,
                task: format!("stress-ng-pipe:{}", 100 + k % 14),
            });
            t += len + k % 30_000;
        }
    }
    w(
        "timeline.svg",
        cpu_timeline("who ran: rpi5, v6.12.81", 8, &spans).unwrap(),
    );
    let curve = |l: &str, f: f64| Curve {
        label: l.into(),
        points: [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&x| CurvePoint {
                x,
                mean: f * x.sqrt() * 100.0,
                sd: 3.0 * x.sqrt(),
            })
            .collect(),
    };
    w(
        "curves.svg",
        curves(
            "hackbench-process-pipes",
            "groups",
            "time (s)",
            &[curve("v6.6", 1.0), curve("v6.18", 1.2)],
        )
        .unwrap(),
    );
    let rows = vec![
        BarRow {
            label: "6.6.78".into(),
            published: Some(2_487_746.0),
            simulated: 2_390_000.0,
            sd: 20_000.0,
        },
        BarRow {
            label: "6.12.75 (rpt-rpi-2712)".into(),
            published: Some(1_651_427.0),
            simulated: 1_240_000.0,
            sd: 80_000.0,
        },
        BarRow {
            label: "6.12.81 DELAY_DEQUEUE off".into(),
            published: None,
            simulated: 2_300_000.0,
            sd: 10_000.0,
        },
    ];
    w(
        "bars.svg",
        published_vs_simulated("delay-dequeue: bogo_ops_per_sec", "bogo ops/s", &rows).unwrap(),
    );
}
