//! Simulator speed for `cargo bench -p schedlab [-- FILTER]`: each benchmark simulates a fixed
//! span once to warm up and then `SAMPLES` times, and prints the median, fastest and slowest
//! wall time per run and the simulated context switches per wall-second at the median (the
//! figure the README quotes, also printed by `schedlab bench`).
//!
//! A plain `main` (`harness = false`) rather than criterion: criterion's dependency tree (clap,
//! regex, ciborium, serde_derive, …) was built by every `cargo test --workspace`, since a
//! package's dev-dependencies are built for its tests too, and it cost more CPU time than
//! the crate it benchmarks. Ten samples and a median are what criterion was set to here.

use schedlab::bench::{self, BenchResult};
use std::hint::black_box;
use std::time::Instant;

const SAMPLES: usize = 10;

fn measure(name: &str, run: impl Fn() -> BenchResult) {
    let switches = black_box(run()).switches;
    let mut walls: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            black_box(run());
            t.elapsed().as_secs_f64()
        })
        .collect();
    walls.sort_by(f64::total_cmp);
    let median = (walls[SAMPLES / 2 - 1] + walls[SAMPLES / 2]) / 2.0;
    println!(
        "{name:<30} median {:>9.3} ms  [{:.3} .. {:.3}]  {:>6.3} M switches/s ({switches} per run)",
        median * 1e3,
        walls[0] * 1e3,
        walls[SAMPLES - 1] * 1e3,
        switches as f64 / median / 1e6,
    );
}

fn main() {
    // cargo passes `--bench`; any other argument is a name filter (substring), as with
    // libtest and criterion.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let benches: [(&str, fn() -> BenchResult); 4] = [
        ("futex-pingpong-1cpu", || bench::pingpong(20_000_000)),
        ("1000-hogs-1cpu", || bench::hogs(1000, 2_000_000_000)),
        ("256cpu-2560-tasks-wake-sleep", || {
            bench::smp_wakeups(256, 2560, 10_000_000)
        }),
        ("tbench-60-clients-x86-2s-80-1s", || bench::tbench_x86(1)),
    ];
    for (name, run) in benches {
        if filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())) {
            measure(&format!("context-switches/{name}"), run);
        }
    }
}
