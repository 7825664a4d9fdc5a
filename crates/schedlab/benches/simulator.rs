//! Criterion benchmarks of simulator speed. Each iteration simulates a fixed span; criterion
//! reports wall time per iteration, and the throughput line converts it to simulated context
//! switches per wall-second (the figure the README quotes, also printed by `schedlab bench`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab::bench;

fn simulator(c: &mut Criterion) {
    let mut g = c.benchmark_group("context-switches");
    g.sample_size(10);

    let probe = bench::pingpong(20_000_000);
    g.throughput(Throughput::Elements(probe.switches));
    g.bench_function("futex-pingpong-1cpu", |b| {
        b.iter(|| bench::pingpong(20_000_000))
    });

    let probe = bench::hogs(1000, 2_000_000_000);
    g.throughput(Throughput::Elements(probe.switches));
    g.bench_function("1000-hogs-1cpu", |b| {
        b.iter(|| bench::hogs(1000, 2_000_000_000))
    });

    let probe = bench::smp_wakeups(256, 2560, 10_000_000);
    g.throughput(Throughput::Elements(probe.switches));
    g.bench_function("256cpu-2560-tasks-wake-sleep", |b| {
        b.iter(|| bench::smp_wakeups(256, 2560, 10_000_000))
    });
    g.finish();
}

criterion_group!(benches, simulator);
criterion_main!(benches);
