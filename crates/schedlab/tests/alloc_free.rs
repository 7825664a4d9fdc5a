//! The simulator's steady state allocates nothing: once the ping-pong benchmark's two tasks
//! have run for a while (buffers grown to their working size), a further stretch of tens of
//! thousands of events makes no heap allocation or reallocation at all.
//!
//! The whole test binary counts allocations through one global allocator, so it holds this
//! single test (another test running on a second thread would be counted too).

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn pingpong_steady_state_allocates_nothing() {
    let mut k = schedlab::bench::pingpong_kernel();
    // warm-up: 20 ms simulated (tens of thousands of switches; every buffer reaches its size)
    k.run_until(20_000_000);
    let (events0, switches0) = (k.stats.events, k.stats.nr_switches);
    let region = Region::new(GLOBAL);
    k.run_until(40_000_000);
    let change = region.change();
    let (events, switches) = (k.stats.events - events0, k.stats.nr_switches - switches0);
    // the stretch is not empty: each side runs 200 ns of work plus a futex wake and wait
    // (a few µs of syscall cost on `smp`), so 20 ms holds far more than 1 000 switches
    assert!(
        switches > 1_000 && events > switches,
        "{events} events, {switches} switches"
    );
    assert_eq!(
        (change.allocations, change.reallocations),
        (0, 0),
        "{events} events allocated {} and reallocated {} times ({} bytes)",
        change.allocations,
        change.reallocations,
        change.bytes_allocated
    );
}
