//! Property tests (STYLE.md §14): random task mixes (run, sleep, yield, renice, slice changes,
//! futex ping-pong) on random presets keep every invariant of fair.md §13.1 after every event,
//! including "the augmented-tree pick equals a brute-force scan"; and the same seed gives the
//! same trace.

use crate::common::*;
use proptest::prelude::*;
use schedlab_sched::ipc::FutexId;
use schedlab_sched::*;
use std::cell::Cell;
use std::rc::Rc;

/// A task doing random things with its own seeded stream.
struct Chaos {
    futex: Rc<Cell<Option<FutexId>>>,
    slices: bool,
}

impl Program for Chaos {
    fn next(&mut self, cx: &mut Ctx<'_>, _last: SysResult) -> Op {
        let f = match self.futex.get() {
            Some(f) => f,
            None => {
                let f = cx.new_futex(0);
                self.futex.set(Some(f));
                f
            }
        };
        let r = cx.rng().below(100);
        let d = 5_000 + cx.rng().below(1_000_000);
        match r {
            0..=49 => Op::Run(d),
            50..=74 => Op::Sleep(d),
            75..=79 => Op::Yield,
            80..=84 => Op::SetNice(cx.rng().below(11) as i32 - 5),
            85..=87 if self.slices => Op::SetSlice(cx.rng().below(3) * 1_500_000),
            88..=93 if cx.futex_waiters(f) < 2 => {
                let v = cx.futex_load(f);
                Op::FutexWait { futex: f, val: v }
            }
            _ => Op::FutexWake {
                futex: f,
                nr: 1 + cx.rng().below(3) as u32,
            },
        }
    }
}

fn chaos_run(
    spec: &str,
    ntasks: usize,
    hz: u32,
    seed: u64,
    ms: u64,
) -> Result<Vec<String>, String> {
    let cfg = KernelConfig::parse(spec).unwrap();
    let slices = cfg.has(Patch::CustomSlice);
    let m = MachineDesc::ideal(1, hz, PreemptModel::Full);
    let mut k = Kernel::new(cfg, m, seed).unwrap();
    k.check_invariants = true;
    let rec = record(&mut k);
    let futex = Rc::new(Cell::new(None));
    for i in 0..ntasks {
        let attrs = TaskAttrs {
            comm: Some(format!("t{i}")),
            nice: Some((i as i32 % 7) - 3),
            ..Default::default()
        };
        let t = k.create_task(
            Box::new(Chaos {
                futex: futex.clone(),
                slices,
            }),
            &attrs,
            None,
            false,
        );
        if i % 2 == 0 {
            k.start_task(t);
        } else {
            k.start_task_as_wakeup(t);
        }
    }
    k.run_until(ms * 1_000_000);
    if let Some(w) = &k.first_warning {
        return Err(w.clone());
    }
    let lines = rec.borrow().all.iter().map(|r| r.to_string()).collect();
    Ok(lines)
}

const PRESETS: &[&str] = &[
    "v6.6", "v6.12", "v6.18", "v6.19", "v7.0", "v7.1", "v6.12.81", "v6.5",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    #[test]
    fn random_mixes_keep_invariants(preset in 0usize..8, ntasks in 2usize..7, seed in 0u64..1_000_000, lazy in any::<bool>(), hz1000 in any::<bool>()) {
        let mut spec = PRESETS[preset].to_string();
        // preempt=lazy exists from v6.13 on (not in v6.5, v6.6, v6.12, v6.12.81)
        if lazy && (2..=5).contains(&preset) {
            spec.push_str(" preempt=lazy");
        }
        let hz = if hz1000 { 1000 } else { 250 };
        let r = chaos_run(&spec, ntasks, hz, seed, 150);
        prop_assert!(r.is_ok(), "{}: {}", spec, r.err().unwrap());
    }

    #[test]
    fn v6_5_random_mixes_keep_invariants(seed in 0u64..1_000_000, ntasks in 2usize..11, which in 0usize..8, hz1000 in any::<bool>()) {
        // the CFS class (cfs.md C-1 … C-7 after every event), with its own features toggled;
        // more than sched_nr_latency = 8 tasks brings in the buddies' "scale" and the period
        // stretching
        let extra = ["", "NO_START_DEBIT", "NO_GENTLE_FAIR_SLEEPERS", "NEXT_BUDDY", "NO_LAST_BUDDY", "NO_WAKEUP_PREEMPTION", "NO_BASE_SLICE", "NO_ALT_PERIOD"][which];
        let spec = format!("v6.5 {extra}");
        let r = chaos_run(&spec, ntasks, if hz1000 { 1000 } else { 250 }, seed, 150);
        prop_assert!(r.is_ok(), "{}: {}", spec, r.err().unwrap());
    }

    #[test]
    fn features_off_keep_invariants(seed in 0u64..1_000_000, which in 0usize..5) {
        let extra = ["NO_DELAY_DEQUEUE", "NO_PLACE_LAG", "NO_RUN_TO_PARITY", "NEXT_BUDDY", "NO_DELAY_ZERO"][which];
        let spec = format!("v7.0 {extra}");
        let r = chaos_run(&spec, 4, 1000, seed, 150);
        prop_assert!(r.is_ok(), "{}: {}", spec, r.err().unwrap());
    }
}

#[test]
fn same_seed_same_trace() {
    for spec in ["v6.5", "v6.6", "v6.18", "v7.1"] {
        let a = chaos_run(spec, 5, 250, 42, 300).unwrap();
        let b = chaos_run(spec, 5, 250, 42, 300).unwrap();
        assert!(!a.is_empty());
        assert_eq!(a, b, "{spec}");
        let c = chaos_run(spec, 5, 250, 43, 300).unwrap();
        assert_ne!(a, c, "{spec}: a different seed must change something");
    }
}

#[test]
fn chaos_is_busy() {
    // guard against a vacuous property test: the random mix must switch a lot
    let lines = chaos_run("v6.18", 5, 1000, 7, 150).unwrap();
    let switches = lines.iter().filter(|l| l.contains("sched_switch:")).count();
    assert!(switches > 200, "only {switches} switches");
}
