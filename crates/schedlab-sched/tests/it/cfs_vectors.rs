//! Scenario vectors of cfs.md §14.4 for the `v6.5` preset (the CFS fair class, fair_cfs.rs),
//! under the common assumptions of cfs.md §14.2: 2 online CPUs (LOG scaling: latency 12 ms,
//! min_granularity 1.5 ms, wakeup_granularity 2 ms) unless a vector says otherwise, every task
//! pinned to CPU 0, zero costs, exact ticks at t = 1, 2, … ms (HZ = 1000) or t = 4, 8, … ms
//! (HZ = 250), default v6.5 features (NO_HRTICK). Tasks started at t = 0 as wakeups in the
//! listed order are placed at `min_vruntime` (`enqueue_entity`: a parentless first wakeup is
//! renormalised and placed), and the first-listed one is picked at t = 0. Expected values are
//! the spec's, quoted beside each assertion.

use crate::common::*;
use schedlab_sched::fair::FairOp;
use schedlab_sched::fair_cfs;
use schedlab_sched::sched::{Policy, TaskId};
use schedlab_sched::*;

const MS: u64 = 1_000_000;

/// A kernel on the ideal machine of cfs.md §14.2 with `ncpus` online CPUs.
fn cfs(extra: &str, ncpus: usize, hz: u32) -> Kernel {
    ideal(&format!("v6.5 {extra}"), ncpus, hz)
}

/// `n` nice-0 hogs named `names`, pinned to CPU 0, run until `end_ms`; CPU 0's schedule.
fn hogs(names: &[&str], ncpus: usize, hz: u32, end_ms: u64) -> String {
    let mut k = cfs("", ncpus, hz);
    let rec = record(&mut k);
    for n in names {
        add_pinned(&mut k, n, Box::new(Hog), 0, Policy::Normal, 0);
    }
    k.run_until(end_ms * MS);
    let r = rec.borrow();
    schedule_string(&k, &r, 0, end_ms)
}

// ---------------------------------------------------------------------------------- TV-9

#[test]
fn cfs_tv9_two_hogs() {
    // cfs.md TV-9: "A, B at m, A picked first. Slice = ideal per TV-3."
    // | online CPUs | ideal | HZ = 1000 | HZ = 250 |
    let rows: &[(usize, &str, u64, &str, u64)] = &[
        // | 1 | 2 999 998 | `A[0–3] B[3–6] A[6–9] …` | `A[0–4] B[4–8] …` |
        (1, "A[0-3] B[3-6] A[6-9]", 9, "A[0-4] B[4-8]", 8),
        // | 2 | 5 999 997 | `A[0–6] B[6–12] A[12–18] …` | `A[0–8] B[8–16] A[16–24] …` |
        (
            2,
            "A[0-6] B[6-12] A[12-18]",
            18,
            "A[0-8] B[8-16] A[16-24]",
            24,
        ),
        // | 4 | 8 999 995 | `A[0–9] B[9–18] …` | `A[0–12] B[12–24] …` |
        (4, "A[0-9] B[9-18]", 18, "A[0-12] B[12-24]", 24),
        // | ≥ 8 | 11 999 994 | `A[0–12] B[12–24] …` | `A[0–12] B[12–24] …` |
        (8, "A[0-12] B[12-24]", 24, "A[0-12] B[12-24]", 24),
        (16, "A[0-12] B[12-24]", 24, "A[0-12] B[12-24]", 24),
    ];
    for &(ncpus, hz1000, end1000, hz250, end250) in rows {
        assert_eq!(
            hogs(&["A", "B"], ncpus, 1000, end1000),
            hz1000,
            "{ncpus} CPUs, HZ=1000"
        );
        assert_eq!(
            hogs(&["A", "B"], ncpus, 250, end250),
            hz250,
            "{ncpus} CPUs, HZ=250"
        );
    }
}

// ---------------------------------------------------------------------------------- TV-10

#[test]
fn cfs_tv10_ten_hogs() {
    // cfs.md TV-10: "T0…T9 at m, T0 picked first, ideal 1 500 000 (TV-4)."
    let names: Vec<String> = (0..10).map(|i| format!("T{i}")).collect();
    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let expect = |turn: u64| -> String {
        let mut v: Vec<String> = (0..10)
            .map(|i| format!("T{i}[{}-{}]", i * turn, (i + 1) * turn))
            .collect();
        v.push(format!("T0[{}-{}]", 10 * turn, 11 * turn));
        v.join(" ")
    };
    // "HZ = 1000: `T0[0–2] T1[2–4] … T9[18–20] T0[20–22] …` (1 ms < 1.5 ms, 2 ms > 1.5 ms)"
    assert_eq!(hogs(&names, 2, 1000, 22), expect(2));
    // "HZ = 250: `T0[0–4] T1[4–8] … T9[36–40] T0[40–44] …`"
    assert_eq!(hogs(&names, 2, 250, 44), expect(4));
}

// ---------------------------------------------------------------------------------- TV-11

/// A (nice 0) and B (nice 5), pinned to CPU 0 of 2, A picked first.
fn nice0_vs_nice5(
    hz: u32,
) -> (
    Kernel,
    std::rc::Rc<std::cell::RefCell<Recorder>>,
    TaskId,
    TaskId,
) {
    let mut k = cfs("", 2, hz);
    let rec = record(&mut k);
    let a = add_pinned(&mut k, "A", Box::new(Hog), 0, Policy::Normal, 0);
    let b = add_pinned(&mut k, "B", Box::new(Hog), 5, Policy::Normal, 0);
    (k, rec, a, b)
}

/// `runtime(a) / runtime(b)` after running up to each of `ends_s` (whole seconds, so every end
/// is a tick at which the running task has just been charged), printed to 3 decimals.
fn ratios(k: &mut Kernel, a: TaskId, b: TaskId, ends_s: &[u64]) -> Vec<String> {
    ends_s
        .iter()
        .map(|&s| {
            k.run_until(s * 1_000 * MS);
            let (ra, rb) = (runtime(k, a), runtime(k, b));
            // all of the CPU's time went to A and B
            assert_eq!(ra + rb, s * 1_000 * MS, "{s} s");
            format!("{:.3}", ra as f64 / rb as f64)
        })
        .collect()
}

#[test]
fn cfs_tv11_nice0_vs_nice5_hz250() {
    let (mut k, rec, _, _) = nice0_vs_nice5(250);
    k.run_until(2_020 * MS);
    let r = rec.borrow();
    // "HZ = 250: `A[0–12] B[12–16] A[16–28] B[28–32] …`: A's slice expires at its 3rd tick
    // (12 000 000 > 9 041 942), B's at its 1st (4 000 000 > 2 958 057)."
    assert_eq!(
        schedule_string(&k, &r, 0, 32),
        "A[0-12] B[12-16] A[16-28] B[28-32]"
    );
    let segs = segments(&k, &r, 0, 2_016 * MS);
    // "L grows by 226 865 per 16-ms cycle. When L > 12 000 000 A is still left of B at its
    // expiry and is re-picked … for one more tick: first at k = 53 … → `A[848–864]`; … the
    // next 16-ms turn comes 17 cycles later, `A[1140–1156]` (then 1432, 1708, 2000, …)."
    let long: Vec<(u64, u64)> = segs
        .iter()
        .filter(|(n, s, e)| n == "A" && e - s != 12 * MS)
        .map(|(_, s, e)| (s / MS, e / MS))
        .collect();
    assert_eq!(
        long,
        [
            (848, 864),
            (1140, 1156),
            (1432, 1448),
            (1708, 1724),
            (2000, 2016)
        ]
    );
    // every B turn is its one tick: "B's [slice expires] at its 1st [tick]"
    assert!(segs
        .iter()
        .filter(|(n, _, e)| n == "B" && *e < 2_016 * MS)
        .all(|(_, s, e)| e - s == 4 * MS));
    drop(r);
    // "CPU ratio A/B: 3.032 over 2 s, 3.052 over 10 s, 3.056 over 60 s"
    let (mut k, _rec, a, b) = nice0_vs_nice5(250);
    assert_eq!(
        ratios(&mut k, a, b, &[2, 10, 60]),
        ["3.032", "3.052", "3.056"]
    );
}

#[test]
fn cfs_tv11_nice0_vs_nice5_hz1000() {
    let (mut k, rec, _, _) = nice0_vs_nice5(1000);
    k.run_until(64 * MS);
    let r = rec.borrow();
    // "HZ = 1000: `A[0–10] B[10–14] A[14–24] B[24–27] A[27–37] B[37–40] A[40–50] B[50–54]
    // A[54–64] …`: A's slice expires at its 10th tick; B's at its 3rd (3 000 000 > 2 958 057),
    // but at t = 13 vB = 3 × 3 056 716 = 9 170 148 < vA = 10 000 000 … so B is re-picked and
    // switches out only at t = 14."
    assert_eq!(
        schedule_string(&k, &r, 0, 64),
        "A[0-10] B[10-14] A[14-24] B[24-27] A[27-37] B[37-40] A[40-50] B[50-54] A[54-64]"
    );
    drop(r);
    // "CPU ratio A/B: 3.073 (2 s), 3.058 (10 s), 3.057 (60 s)."
    let (mut k, _rec, a, b) = nice0_vs_nice5(1000);
    assert_eq!(
        ratios(&mut k, a, b, &[2, 10, 60]),
        ["3.073", "3.058", "3.057"]
    );
}

// ---------------------------------------------------------------------------------- TV-12

/// N (nice 0) and I (SCHED_IDLE) hogs pinned to CPU 0 of 2, N picked first.
fn normal_vs_idle(hz: u32) -> (Kernel, std::rc::Rc<std::cell::RefCell<Recorder>>) {
    let mut k = cfs("", 2, hz);
    let rec = record(&mut k);
    add_pinned(&mut k, "N", Box::new(Hog), 0, Policy::Normal, 0);
    add_pinned(&mut k, "I", Box::new(Hog), 0, Policy::Idle, 0);
    (k, rec)
}

fn tick_expired(k: &Kernel) -> u64 {
    k.stats.fair_ops[FairOp::CfsTickExpired as usize]
}

#[test]
fn cfs_tv12_normal_vs_sched_idle_hz1000() {
    // cfs.md TV-12: "Both at m, N first. Ideal N 11 964 943, I 750 000 (TV-6)."
    let (mut k, rec) = normal_vs_idle(1000);
    // "From t = 25 on, N's delta_exec exceeds its ideal at **every** tick (319 reschedule
    // requests at t = 25 … 343) but N is re-picked each time while vN < vI": count the
    // slice-expired requests of check_preempt_tick's rule 1 in (13.5 ms, 343.5 ms] (N was
    // picked at t = 13 through set_next_entity, so the ones at t = 12 and t = 13 fall before).
    k.run_until(13 * MS + MS / 2);
    let before = tick_expired(&k);
    k.run_until(343 * MS + MS / 2);
    assert_eq!(tick_expired(&k) - before, 319);
    k.run_until(1_027 * MS);
    let r = rec.borrow();
    // "HZ = 1000: `N[0–12] I[12–13] N[13–343] I[343–344] N[344–685] I[685–686]
    // N[686–1027] …`"
    assert_eq!(
        schedule_string(&k, &r, 0, 1_027),
        "N[0-12] I[12-13] N[13-343] I[343-344] N[344-685] I[685-686] N[686-1027]"
    );
}

#[test]
fn cfs_tv12_normal_vs_sched_idle_hz250() {
    let (mut k, rec) = normal_vs_idle(250);
    k.run_until(2_740 * MS);
    let r = rec.borrow();
    // cfs.md TV-12: "HZ = 250: `N[0–12] I[12–16] N[16–1372] I[1372–1376] N[1376–2740] …`"
    assert_eq!(
        schedule_string(&k, &r, 0, 2_740),
        "N[0-12] I[12-16] N[16-1372] I[1372-1376] N[1376-2740]"
    );
}

// ---------------------------------------------------------------------------------- TV-13

#[test]
fn cfs_tv13_tick_rule_2() {
    // cfs.md TV-13: "A nice 5 at m (picked), B nice 0 at m + 1 000 000."
    let mut k = cfs("", 2, 1000);
    let rec = record(&mut k);
    let a = add_pinned(&mut k, "A", Box::new(Hog), 5, Policy::Normal, 0);
    let b = add_pinned(&mut k, "B", Box::new(Hog), 0, Policy::Normal, 0);
    fair_cfs::inject_vruntime(&mut k, b, 1_000_000);
    let m = fair_cfs::min_vruntime(&k, 0);
    assert_eq!(vruntime(&k, a), m);
    // "t = 1: delta_exec = 1 ms < 1.5 ms → no test. t = 2: … vA − vB = 6 113 432 − 1 000 000 =
    // 5 113 432 > 2 958 057 → **reschedule** → B runs from t = 2 … B then runs until t = 12
    // (delta_exec = 10 ms > 9 041 942)."
    k.run_until(2 * MS);
    assert_eq!(vruntime(&k, a).wrapping_sub(m), 6_113_432);
    assert_eq!(k.stats.fair_ops[FairOp::CfsTickVdiff as usize], 1);
    assert_eq!(k.stats.fair_ops[FairOp::CfsTickExpired as usize], 0);
    k.run_until(13 * MS);
    let r = rec.borrow();
    // after t = 12 the only other task, A, runs
    assert_eq!(schedule_string(&k, &r, 0, 13), "A[0-2] B[2-12] A[12-13]");
}

// ---------------------------------------------------------------------------------- TV-14

/// What TV-14 looks at around S's wakeup.
struct Wake {
    k: Kernel,
    rec: std::rc::Rc<std::cell::RefCell<Recorder>>,
    s: TaskId,
    /// `min_vruntime` (= vA) when S wakes
    m: u64,
    /// S's vruntime before and after its wakeup
    vs_before: u64,
    vs_after: u64,
    /// S's wakeup preempted A
    preempted: bool,
    /// the pick that followed took S as the next buddy (the wakeup's interrupt exit is a
    /// preemption point, so a preempting wakeup is followed by the pick at once)
    next_picked: bool,
}

/// cfs.md TV-14's setup, built from programs: S (listed first, so picked at t = 0) runs
/// `s_run` ns and blocks, A (a nice-0 hog) then runs alone, so that `min_vruntime` follows it;
/// S is woken from outside at `wake` ns, after the accounting of a tick there (if there is
/// one). S sleeps on this CPU with its absolute vruntime from when it blocked.
fn sleeper(extra: &str, ncpus: usize, nice: i32, policy: Policy, s_run: u64, wake: u64) -> Wake {
    let mut k = cfs(extra, ncpus, 1000);
    let rec = record(&mut k);
    let prog = RunThenBlock {
        run: s_run,
        done: false,
    };
    let s = add_pinned(&mut k, "S", Box::new(prog), nice, policy, 0);
    let a = add_pinned(&mut k, "A", Box::new(Hog), 0, Policy::Normal, 0);
    k.run_until(wake);
    let m = fair_cfs::min_vruntime(&k, 0);
    // "A nice-0 hog runs alone; min_vruntime follows it, so m = vA"
    assert_eq!(vruntime(&k, a), m);
    let vs_before = vruntime(&k, s);
    let op = |k: &Kernel, o: FairOp| k.stats.fair_ops[o as usize];
    let (p0, n0) = (
        op(&k, FairOp::WakeupPreempt),
        op(&k, FairOp::CfsNextBuddyPicked),
    );
    assert!(k.wake_up_process(s));
    let preempted = op(&k, FairOp::WakeupPreempt) > p0;
    let next_picked = op(&k, FairOp::CfsNextBuddyPicked) > n0;
    let vs_after = vruntime(&k, s);
    Wake {
        k,
        rec,
        s,
        m,
        vs_before,
        vs_after,
        preempted,
        next_picked,
    }
}

impl Wake {
    /// S's placement relative to `m` (signed).
    fn placed(&self) -> i64 {
        self.vs_after.wrapping_sub(self.m) as i64
    }
    fn next_is_s(&self) -> bool {
        let cfs = self.k.rqs[0].cfs;
        self.k.cfs[cfs.index()].next == Some(self.k.tasks[self.s.index()].se)
    }
    fn last(&self) -> bool {
        let cfs = self.k.rqs[0].cfs;
        self.k.cfs[cfs.index()].last.is_some()
    }
    fn schedule(mut self, end_ms: u64) -> String {
        self.k.run_until(end_ms * MS);
        let r = self.rec.borrow();
        schedule_string(&self.k, &r, 0, end_ms)
    }
}

#[test]
fn cfs_tv14_sleeper_main() {
    // cfs.md TV-14: S (nice 0) slept on this CPU for 100 ms (t = 1 … 101 ms; its vruntime is
    // vA − 99 ms rather than the spec's vA − 100 ms because S ran the first ms: the placement
    // below is the same for any value left of vA − 6 ms) and "wakes (same CPU) exactly on a
    // tick (after the tick's accounting)".
    let w = sleeper("", 2, 0, Policy::Normal, MS, 101 * MS);
    assert_eq!(w.vs_before.wrapping_sub(w.m) as i64, -99 * MS as i64);
    // "placement max(vA − 100 ms, vA − 6 000 000) = vA − 6 000 000"
    assert_eq!(w.placed(), -6_000_000);
    // "vdiff = 6 000 000 > wakeup_gran(S) = 2 000 000 → **preempt**, next = S; scale false
    // (2 < 8) → no last buddy"
    assert!(w.preempted);
    assert!(!w.last());
    // "pick: S (leftmost, and next). S then runs until the first tick after 5 999 997 ns of its
    // own runtime (rule 1), by which time it has caught up with A → A runs again."
    assert!(w.next_picked);
    assert!(!w.next_is_s()); // consumed by S's set_next_entity
    assert_eq!(w.schedule(108), "S[0-1] A[1-101] S[101-107] A[107-108]");
}

#[test]
fn cfs_tv14_sleeper_nice5() {
    // cfs.md TV-14: "S nice 5 → same placement vA − 6 000 000 (credit is not weighted),
    // wakeup_gran = 6 113 432 ≥ 6 000 000 → **no preemption**; S waits for A's next tick (A,
    // running alone for long, has delta_exec far above its new ideal 9 041 942 → reschedule at
    // the next tick → S)."
    let w = sleeper("", 2, 5, Policy::Normal, MS, 101 * MS);
    assert_eq!(w.placed(), -6_000_000);
    assert!(!w.preempted);
    assert!(!w.next_is_s());
    assert_eq!(w.schedule(103), "S[0-1] A[1-102] S[102-103]");
}

#[test]
fn cfs_tv14_sleeper_nice_minus5() {
    // cfs.md TV-14: "S nice −5 → 656 199 → preempt."
    let w = sleeper("", 2, -5, Policy::Normal, MS, 101 * MS);
    assert_eq!(w.placed(), -6_000_000);
    assert!(w.preempted);
    assert!(w.next_picked);
    assert_eq!(w.schedule(102), "S[0-1] A[1-101] S[101-102]");
}

#[test]
fn cfs_tv14_short_sleep() {
    // cfs.md TV-14: "S slept only briefly with vruntime vA − 500 000 → stays there, vdiff =
    // 500 000 ≤ 2 000 000 → no preemption." S runs [0, 1 ms] (vS = m0 + 1 ms), A runs from
    // 1 ms, so at 2.5 ms vA = m0 + 1.5 ms = vS + 500 000.
    let w = sleeper("", 2, 0, Policy::Normal, MS, 2 * MS + MS / 2);
    assert_eq!(w.vs_before.wrapping_sub(w.m) as i64, -500_000);
    assert_eq!(w.vs_after, w.vs_before);
    assert!(!w.preempted);
    assert!(!w.next_is_s());
    assert_eq!(w.schedule(3), "S[0-1] A[1-3]");
}

#[test]
fn cfs_tv14_sleeper_one_cpu() {
    // cfs.md TV-14: "1 CPU: credit 3 ms, granularity 1 ms → preempt."
    let w = sleeper("", 1, 0, Policy::Normal, MS, 101 * MS);
    assert_eq!(w.placed(), -3_000_000);
    assert!(w.preempted);
    // as in the main case, S runs until the first tick after its slice (2 999 998 ns on 1 CPU,
    // TV-9), when it has caught up with A (V − 3 ms + 3 ms): the tie goes to the tree entity A
    assert_eq!(w.schedule(105), "S[0-1] A[1-101] S[101-104] A[104-105]");
}

#[test]
fn cfs_tv14_sleeper_no_gentle_fair_sleepers() {
    // cfs.md TV-14: "NO_GENTLE_FAIR_SLEEPERS: placed at vA − 12 000 000 → preempt, then S runs
    // about 12 ms (its slice expires after ≈ 6 ms but S is still left of A and is re-picked
    // until it catches up)": it catches up at t = 113 (V − 12 ms + 12 ms), a tie that the tree
    // entity A wins.
    let w = sleeper(
        "NO_GENTLE_FAIR_SLEEPERS",
        2,
        0,
        Policy::Normal,
        MS,
        101 * MS,
    );
    assert_eq!(w.placed(), -12_000_000);
    assert!(w.preempted);
    assert_eq!(w.schedule(114), "S[0-1] A[1-101] S[101-113] A[113-114]");
}

#[test]
fn cfs_tv14_sleeper_sched_batch() {
    // cfs.md TV-14: "S SCHED_BATCH → placed at vA − 6 ms, no wakeup preemption (§8.3 B), runs
    // after A's next tick (rule 1 …)"
    let w = sleeper("", 2, 0, Policy::Batch, MS, 101 * MS);
    assert_eq!(w.placed(), -6_000_000);
    assert!(!w.preempted);
    assert!(!w.next_is_s());
    assert_eq!(w.schedule(103), "S[0-1] A[1-102] S[102-103]");
}

#[test]
fn cfs_tv14_sleeper_sched_idle() {
    // cfs.md TV-14: "S SCHED_IDLE → placed at vA − 750 000, no wakeup preemption." S runs only
    // 1 µs before it blocks (an idle entity's vruntime grows 341× as fast as real time: 1 µs
    // is 341 333 ns of it), so that it falls far behind A while it sleeps.
    let w = sleeper("", 2, 0, Policy::Idle, 1_000, 101 * MS);
    assert_eq!(w.placed(), -750_000);
    assert!(!w.preempted);
    assert!(!w.next_is_s());
    // A's next tick (t = 102) finds its delta_exec (≈ 101 ms since it was picked at 1 µs) above
    // its ideal 11 964 943 (TV-6): reschedule (rule 1, §7.2); S is the leftmost → S runs; its
    // first tick (1 ms > its ideal 750 000) ends its turn and puts it 341 ms right of A.
    assert_eq!(
        w.schedule(104),
        "S[0-0.001] A[0.001-102] S[102-103] A[103-104]"
    );
}

// ---------------------------------------------------------------------------------- TV-19

/// Runs `at` ns, forks a child C (a hog with `child_nice`) and runs on.
struct Forker {
    at: u64,
    child_nice: i32,
    step: u8,
}

impl Program for Forker {
    fn next(&mut self, _cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        self.step += 1;
        match self.step {
            1 => Op::Run(self.at),
            2 => Op::Spawn(Box::new(syscalls::Spawn {
                program: Box::new(Hog),
                thread: false,
                attrs: TaskAttrs {
                    comm: Some("C".to_string()),
                    nice: Some(self.child_nice),
                    ..Default::default()
                },
            })),
            _ => Op::Run(1_000_000_000_000),
        }
    }
}

/// The fork instant: "fork right after the tick at 100" — the tick at t = 100 ms is handled
/// after a segment ending at the same instant, so P forks 1 ns later (a delay δ = 1 ns, which
/// "shifts everything by δ": C's vruntime is 1 ns larger, P's too).
const FORK_AT: u64 = 100 * MS + 1;

/// Parent P (nice 0, pinned to CPU 0, its child inherits the mask) runs alone from t = 0 and
/// forks at [`FORK_AT`]; returns the kernel right after the fork, with `(vP − m, vC − m)` (P
/// charged up to the fork by `task_fork_fair`'s `update_curr`).
fn fork(
    extra: &str,
    ncpus: usize,
    child_nice: i32,
) -> (
    Kernel,
    std::rc::Rc<std::cell::RefCell<Recorder>>,
    (i64, i64),
) {
    let mut k = cfs(extra, ncpus, 1000);
    let rec = record(&mut k);
    let prog = Forker {
        at: FORK_AT,
        child_nice,
        step: 0,
    };
    let p = add_pinned(&mut k, "P", Box::new(prog), 0, Policy::Normal, 0);
    k.run_until(FORK_AT);
    let c = k
        .task_by_pid(k.tasks[p.index()].pid + 1)
        .expect("the child");
    assert_eq!(k.tasks[c.index()].comm, "C");
    let m = fair_cfs::min_vruntime(&k, 0);
    let rel = |t: TaskId| vruntime(&k, t).wrapping_sub(m) as i64;
    let d = (rel(p), rel(c));
    (k, rec, d)
}

fn fork_schedule(extra: &str, ncpus: usize, end: u64) -> Vec<(String, u64, u64)> {
    let (mut k, rec, _) = fork(extra, ncpus, 0);
    k.run_until(end);
    let r = rec.borrow();
    segments(&k, &r, 0, end)
}

fn seg(n: &str, s: u64, e: u64) -> (String, u64, u64) {
    (n.to_string(), s, e)
}

#[test]
fn cfs_tv19_fork_start_debit() {
    // cfs.md TV-19: "sched_vslice(C): nr = h_nr_running + 1 = 2, period 12 ms, load 2 097 152
    // → slice 5 999 997, vslice 5 999 997 → vC = max(V, V + 5 999 997) = V + 5 999 997 …
    // wake_up_new_task on the same CPU: vC = V + 5 999 997 (no placement);
    // check_preempt_wakeup(WF_FORK): vdiff = −5 999 997 → −1 → no preemption, no buddy"
    let (k, _rec, d) = fork("", 2, 0);
    // m = V = vP: "P (nice 0) has run alone since t = 0 … m = vP = V at fork time"
    assert_eq!(d, (0, 5_999_997));
    assert_eq!(k.tasks[k.rqs[0].curr.index()].comm, "P");
    assert_eq!(k.cfs[k.rqs[0].cfs.index()].next, None);
    // "From t = 101 P's delta_exec (> 100 ms) exceeds its ideal 5 999 997 at every tick, but P
    // stays left of C and is re-picked; at t = 106 vP = V + 6 000 000 ≥ vC → **C runs from
    // t = 106**."
    assert_eq!(
        fork_schedule("", 2, 107 * MS),
        [seg("P", 0, 106 * MS), seg("C", 106 * MS, 107 * MS)]
    );
}

#[test]
fn cfs_tv19_fork_no_start_debit() {
    // cfs.md TV-19: "NO_START_DEBIT: vC = V; at t = 101 vP = V + 1 ms is right of C → C runs
    // from t = 101."
    let (_k, _rec, d) = fork("NO_START_DEBIT", 2, 0);
    assert_eq!(d, (0, 0));
    assert_eq!(
        fork_schedule("NO_START_DEBIT", 2, 102 * MS),
        [seg("P", 0, 101 * MS), seg("C", 101 * MS, 102 * MS)]
    );
}

#[test]
fn cfs_tv19_fork_child_runs_first() {
    // cfs.md TV-19: "sched_child_runs_first = 1: entity_before(P, C) → swap: vP = V + 5 999 997,
    // vC = V (Rel 0), resched_curr. At the child's enqueue update_curr lets min_vruntime
    // follow the lone parent …, so C is renormalised to exactly P's vruntime … at the pick the
    // tie goes to C (tree entity) … → **C runs at once**."
    let (k, _rec, d) = fork("child_runs_first=1", 2, 0);
    // P took the child's later vruntime: vP = V + 5 999 997 (m is still V).
    // C: the spec's "renormalised to exactly P's vruntime" needs a delay δ > 0 between the fork
    // and the child's enqueue. The simulator runs copy_process in zero time (δ = 0), so the
    // enqueue's update_curr finds delta_exec = 0 and returns before update_min_vruntime (§3.3:
    // "if (d as i64) <= 0: return"), m stays V and C (Rel 0) is renormalised to V — still left
    // of P, so the outcome is the same: C runs at once.
    assert_eq!(d, (5_999_997, 0));
    assert_eq!(k.tasks[k.rqs[0].curr.index()].comm, "C");
    // C's turn then ends at its first tick after 5 999 997 ns (rule 1, t = 106: 6 ms − 1 ns),
    // when it is right of P (V + 6 ms − 1 ns > V + 5 999 997): P runs.
    assert_eq!(
        fork_schedule("child_runs_first=1", 2, 107 * MS),
        [
            seg("P", 0, FORK_AT),
            seg("C", FORK_AT, 106 * MS),
            seg("P", 106 * MS, 107 * MS)
        ]
    );
}

#[test]
fn cfs_tv19_fork_vslices() {
    // cfs.md TV-19: "1 CPU: vslice 2 999 998"
    let (_k, _rec, d) = fork("", 1, 0);
    assert_eq!(d, (0, 2_999_998));
    // the child then runs once P has caught up: at t = 103 vP = V + 3 ms − 1 ns ≥ vC
    assert_eq!(
        fork_schedule("", 1, 104 * MS),
        [seg("P", 0, 103 * MS), seg("C", 103 * MS, 104 * MS)]
    );
    // "a nice-5 child of a nice-0 parent on 2 CPUs: slice 2 958 057, vslice 9 041 941"
    let (_k, _rec, d) = fork("", 2, 5);
    assert_eq!(d, (0, 9_041_941));
}

// ---------------------------------------------------------------------------------- C-8

/// cfs.md C-8 for one mix of nice values on CPU 0 of 2 (latency 12 ms, min_granularity
/// 1.5 ms): checked every 100 ms over 2 s, cumulatively and over each 100-ms window.
fn long_run_fairness(nices: &[i32], hz: u32) -> Result<(), String> {
    use schedlab_sched::sched::SCHED_PRIO_TO_WEIGHT;
    let mut k = cfs("", 2, hz);
    let tasks: Vec<TaskId> = nices
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            add_pinned(
                &mut k,
                &format!("T{i}"),
                Box::new(Hog),
                n,
                Policy::Normal,
                0,
            )
        })
        .collect();
    let w: Vec<f64> = nices
        .iter()
        .map(|&n| SCHED_PRIO_TO_WEIGHT[(n + 20) as usize] as f64)
        .collect();
    let sum_w: f64 = w.iter().sum();
    // A task's turn (§7.2, §7.3): its ideal slice — `period · w / Σw` with the period
    // stretched beyond 8 tasks, at least min_granularity, at most latency — ending at the first
    // tick strictly after it, plus one tick. In its own virtual time: `turn · 1024 / w`.
    let tick = 1e9 / hz as f64;
    let n = nices.len() as f64;
    let period = if nices.len() > 8 { n * 1.5e6 } else { 12e6 };
    let vturn = |i: usize| {
        let ideal = (period * w[i] / sum_w).clamp(1.5e6, 12e6);
        let turn = ((ideal / tick).floor() + 2.0) * tick;
        turn * 1024.0 / w[i]
    };
    // "within a few slices per task": the virtual services runtime · 1024 / w of any two
    // tasks differ by at most three of the longest virtual turns
    let bound = 3.0 * (0..nices.len()).map(vturn).fold(0.0, f64::max);
    let mut prev = vec![0u64; tasks.len()];
    for step in 1..=20u64 {
        k.run_until(step * 100 * MS);
        let now: Vec<u64> = tasks.iter().map(|&t| runtime(&k, t)).collect();
        if now.iter().sum::<u64>() != step * 100 * MS {
            return Err(format!(
                "{nices:?}: CPU 0 not fully used by {} ms",
                step * 100
            ));
        }
        for (what, a, b) in [
            ("cumulative", &vec![0; now.len()], &now),
            ("window", &prev, &now),
        ] {
            let service: Vec<f64> = (0..now.len())
                .map(|i| (b[i] - a[i]) as f64 * 1024.0 / w[i])
                .collect();
            let hi = service.iter().cloned().fold(f64::MIN, f64::max);
            let lo = service.iter().cloned().fold(f64::MAX, f64::min);
            let limit = if what == "window" { 2.0 * bound } else { bound };
            if hi - lo > limit {
                return Err(format!(
                    "{nices:?} HZ={hz} at {} ms ({what}): services {service:?} spread {} > {limit}",
                    step * 100,
                    hi - lo
                ));
            }
        }
        prev = now;
    }
    Ok(())
}

#[test]
fn cfs_c8_fairness_fixed_mixes() {
    // TV-11's pair and a few hand-picked mixes, including a stretched period (10 tasks)
    for nices in [
        &[0, 5][..],
        &[0, 0, 0],
        &[-5, 0, 5, 10],
        &[-10, 10],
        &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ] {
        for hz in [1000, 250] {
            long_run_fairness(nices, hz).unwrap();
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, .. Default::default() })]

    #[test]
    fn cfs_c8_fairness_random_mixes(
        nices in proptest::collection::vec(-10i32..=10, 2..=10),
        hz1000 in proptest::prelude::any::<bool>(),
    ) {
        let r = long_run_fairness(&nices, if hz1000 { 1000 } else { 250 });
        proptest::prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

// ---------------------------------------------------------------------------------- TV-23

#[test]
fn cfs_tv23_hrtick() {
    // cfs.md TV-23: HRTICK on, two nice-0 hogs, HZ = 250. Pick A at t = 0: hrtick_start_fair:
    // slice 5 999 997, ran 0 -> timer at 5.999997 ms; the periodic tick at 4 ms charges A but
    // does not judge; at 5 999 997 ns the hrtick reschedules -> B (A at m + 5 999 997, B at m),
    // timer re-armed for B's 5 999 997 ns -> B until 11 999 994 ns, tie -> A, …: turns of
    // 5 999 997 ns independent of HZ (without HRTICK: 8 ms turns, TV-9).
    let mut k = cfs("HRTICK", 2, 250);
    let rec = record(&mut k);
    let a = add_pinned(&mut k, "A", Box::new(Hog), 0, Policy::Normal, 0);
    let b = add_pinned(&mut k, "B", Box::new(Hog), 0, Policy::Normal, 0);
    k.run_until(30 * MS);
    let pid = |t: TaskId| k.tasks[t.index()].pid;
    let sw: Vec<(u64, i32)> = rec
        .borrow()
        .switches
        .iter()
        .filter(|s| s.1 == 0 && s.0 > 0)
        .map(|s| (s.0, s.3))
        .collect();
    let want: Vec<(u64, i32)> = (1..=5)
        .map(|i| (i * 5_999_997, if i % 2 == 1 { pid(b) } else { pid(a) }))
        .collect();
    assert_eq!(sw, want);
    // with DOUBLE_TICK the periodic tick judges too: at 8 ms B's delta_exec is 2 000 003 <
    // 5 999 997 and vB - vA = 2 000 003 - 5 999 997 < 0: no change, the hrtick still decides
    let mut k = cfs("HRTICK DOUBLE_TICK", 2, 250);
    let rec = record(&mut k);
    add_pinned(&mut k, "A", Box::new(Hog), 0, Policy::Normal, 0);
    add_pinned(&mut k, "B", Box::new(Hog), 0, Policy::Normal, 0);
    k.run_until(12 * MS);
    let n = rec
        .borrow()
        .switches
        .iter()
        .filter(|s| s.1 == 0 && s.0 > 0)
        .count();
    assert_eq!(n, 2, "switches at 5 999 997 and 11 999 994 ns");
}
