//! Scenario vectors of fair.md §13.4 (one CPU, HZ=1000 exact ticks, zero costs, nice 0 unless
//! stated, base_slice_ns = 3 000 000, tasks started at t=0 as zero-lag wakeups, NO_HRTICK).
//! Expected schedules are the spec's, written beside each assertion.

mod common;
use common::*;

fn two_hogs(spec: &str, hz: u32, end_ms: u64) -> String {
    let mut k = ideal(spec, 1, hz);
    let rec = record(&mut k);
    add(&mut k, "A", Box::new(Hog), 0, None);
    add(&mut k, "B", Box::new(Hog), 0, None);
    k.run_until(end_ms * 1_000_000);
    let r = rec.borrow();
    schedule_string(&k, &r, 0, end_ms)
}

#[test]
fn tv12_two_hogs_v6_8_plus() {
    // fair.md TV-12: v6.8+ presets: A[0–3] B[3–6] A[6–9] B[9–12] …
    for v in ["v6.12", "v6.18", "v6.19", "v7.0", "v7.1"] {
        let s = two_hogs(&format!("{v} base_slice_ns=3000000"), 1000, 12);
        assert_eq!(s, "A[0-3] B[3-6] A[6-9] B[9-12]", "{v}");
    }
}

#[test]
fn tv12_two_hogs_v6_6() {
    // fair.md TV-12: v6.6 (curr wins the deadline tie): A[0–3] B[3–9] A[9–15] B[15–21]
    let s = two_hogs("v6.6 base_slice_ns=3000000", 1000, 21);
    assert_eq!(s, "A[0-3] B[3-9] A[9-15] B[15-21]");
}

#[test]
fn tv12_two_hogs_hz250() {
    // fair.md TV-12: HZ=250: a switch every 4 ms (v6.8+); v6.6: A[0–4] B[4–12] A[12–20] B[20–28]
    let s = two_hogs("v6.18 base_slice_ns=3000000", 250, 16);
    assert_eq!(s, "A[0-4] B[4-8] A[8-12] B[12-16]");
    let s = two_hogs("v6.6 base_slice_ns=3000000", 250, 28);
    assert_eq!(s, "A[0-4] B[4-12] A[12-20] B[20-28]");
}
