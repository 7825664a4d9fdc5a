//! Load balancing end to end (smp.md §4): hogs started where placement puts them spread out
//! through periodic, newidle and nohz balancing; once balanced, migrations stop.

use crate::common::*;
use schedlab_platform::Platform;
use schedlab_sched::*;

const S: u64 = 1_000_000_000;

fn runtime(k: &Kernel, t: sched::TaskId) -> u64 {
    k.se[k.tasks[t.index()].se.index()].sum_exec_runtime
}

/// N hogs on smp:ncpus, started at t = 0 as wakeups; returns each hog's share of one CPU
/// over [warm, end] in parts per thousand and the migrations in [quiet, end].
fn hogs(spec: &str, ncpus: usize, nhogs: usize, hz: u32) -> (Vec<u64>, u64, Kernel) {
    let mut k = ideal(spec, ncpus, hz);
    let ts: Vec<_> = (0..nhogs)
        .map(|i| add(&mut k, &format!("h{i}"), Box::new(Hog), 0, None))
        .collect();
    // the balance is reached within the first second (busy CPUs balance every ~60 ms)
    let warm = 2 * S;
    k.run_until(warm);
    let r0: Vec<u64> = ts.iter().map(|&t| runtime(&k, t)).collect();
    k.run_until(7 * S);
    let m0 = k.stats.migrations;
    k.run_until(12 * S);
    let shares = ts
        .iter()
        .zip(&r0)
        .map(|(&t, &r)| (runtime(&k, t) - r) * 1000 / (12 * S - warm))
        .collect();
    let late = k.stats.migrations - m0;
    (shares, late, k)
}

#[test]
fn eight_hogs_on_four_cpus_get_half_a_cpu_each() {
    // The check: 8 hogs on smp:4 each get 50 % ± 2 %, and migrations stop once
    // balanced (2 per CPU: both groups overloaded with equal avg_load -> balanced, §4.3.5).
    for v in ["v6.6", "v6.12", "v6.18", "v6.19", "v7.0", "v7.1"] {
        let (shares, late, k) = hogs(v, 4, 8, 250);
        for (i, s) in shares.iter().enumerate() {
            assert!(
                (480..=520).contains(s),
                "{v}: hog {i} got {s} per mille ({shares:?})"
            );
        }
        assert_eq!(late, 0, "{v}: migrations after balance ({shares:?})");
        assert!(
            k.stats.lb_migrations >= 3,
            "{v}: the balancer must have spread the hogs"
        );
        for cpu in 0..4 {
            assert_eq!(k.rqs[cpu].nr_running, 2, "{v}: cpu {cpu}");
        }
    }
}

#[test]
fn six_hogs_on_four_cpus_keep_moving() {
    // 6 hogs on 4 CPUs at HZ 1000: a CPU with one hog (fully_busy, avg_load 1024) sees a
    // busiest CPU with two (overloaded, 2048); domain average (2·2048 + 2·1024)/4 = 1536 →
    // migrate_load, imbalance min(512·1024, 512·1024)/1024 = 512. A hog's task_h_load is
    // ≈ 1024 > 512: the first pass fails; after it, 1024 >> nr_balance_failed(1) = 512 ≤ 512
    // and one hog moves (smp.md §4.3.7). So hogs keep rotating and no hog is left at half a
    // CPU for long: each gets more than its worst static share (500) and the total is 4 CPUs.
    let (shares, late, _) = hogs("v6.18", 4, 6, 1000);
    assert!(shares.iter().all(|&s| s > 550), "{shares:?}");
    let total: u64 = shares.iter().sum();
    assert!((3990..=4000).contains(&total), "{shares:?}");
    assert!(late > 0);
}

/// A zero-cost machine from a platform TOML overlay on `smp:4`.
fn machine(extra: &str, hz: u32) -> MachineDesc {
    let text = format!("extends = \"smp:4\"\nname = \"t\"\ndescription = \"t\"\n{extra}");
    let p = Platform::from_toml_str(&text, "t.toml").unwrap();
    let mut m = MachineDesc::from_platform(&p);
    let ideal = MachineDesc::ideal(m.ncpus, hz, PreemptModel::Full);
    m.hz = hz;
    m.preempt_default = PreemptModel::Full;
    m.costs = ideal.costs;
    m.idle_exit_ns = ideal.idle_exit_ns;
    m.idle_polling = ideal.idle_polling;
    m
}

#[test]
fn two_sockets_spread_across_numa() {
    // Two nodes of two CPUs (MC{2}, NUMA{4}, cache_nice_tries 2 at NUMA). Four hogs all start
    // pinned to node 0 and are then allowed everywhere: node 1 is idle, so only nohz kicks from
    // node 0's ticks balance it (idle CPUs do not tick). The NUMA level pulls with migrate_util
    // (busiest overloaded, local has spare, domain not LLC-sharing) until each CPU runs one hog.
    let m = machine(
        "[topology]\ncores_per_cluster = 2\npackages = 2\nnuma_distance = [[10, 21], [21, 10]]\n",
        250,
    );
    let cfg = KernelConfig::parse("v6.18").unwrap();
    let mut k = Kernel::new(cfg, m, 1).unwrap();
    k.strict = true;
    k.check_invariants = true;
    let node0 = platform_mask("0-1");
    let ts: Vec<_> = (0..4)
        .map(|i| {
            let attrs = TaskAttrs {
                comm: Some(format!("h{i}")),
                cpus: Some(node0.clone()),
                ..Default::default()
            };
            let t = k.create_task(Box::new(Hog), &attrs, None, false);
            k.start_task_as_wakeup(t);
            t
        })
        .collect();
    for &t in &ts {
        k.tasks[t.index()].cpus_allowed = platform_mask("0-3");
        k.tasks[t.index()].nr_cpus_allowed = 4;
    }
    k.run_until(3 * S);
    let r0: Vec<u64> = ts.iter().map(|&t| runtime(&k, t)).collect();
    let m0 = k.stats.migrations;
    k.run_until(6 * S);
    for (i, &t) in ts.iter().enumerate() {
        let share = (runtime(&k, t) - r0[i]) * 1000 / (3 * S);
        assert!(share >= 990, "hog {i}: {share} per mille");
    }
    assert_eq!(k.stats.migrations, m0, "no migrations once spread");
    assert!(
        k.stats.nohz_kicks > 0,
        "node 1 was balanced through nohz kicks"
    );
    for cpu in 0..4 {
        assert_eq!(k.rqs[cpu].nr_running, 1, "cpu {cpu}");
    }
}

fn platform_mask(s: &str) -> schedlab_platform::cpumask::CpuMask {
    schedlab_platform::cpumask::CpuMask::parse_cpulist(s).unwrap()
}

/// A task doing random things (runs, sleeps, yields, renices, futex ping-pong) with its own
/// seeded stream: short sleeps make newidle balancing, nohz kicks and wakeups interleave.
struct Chaos {
    futex: std::rc::Rc<std::cell::Cell<Option<ipc::FutexId>>>,
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
        let d = 5_000 + cx.rng().below(3_000_000);
        match r {
            0..=54 => Op::Run(d),
            55..=74 => Op::Sleep(d / 4),
            75..=78 => Op::Yield,
            79..=82 => Op::SetNice(cx.rng().below(11) as i32 - 5),
            83..=91 if cx.futex_waiters(f) < 3 => {
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

fn chaos_smp(spec: &str, m: MachineDesc, ntasks: usize, seed: u64, ms: u64) -> Kernel {
    let cfg = KernelConfig::parse(spec).unwrap();
    let mut k = Kernel::new(cfg, m, seed).unwrap();
    k.strict = true;
    k.check_invariants = true;
    let futex = std::rc::Rc::new(std::cell::Cell::new(None));
    let n = k.ncpus;
    for i in 0..ntasks {
        let attrs = TaskAttrs {
            comm: Some(format!("t{i}")),
            nice: Some((i as i32 % 5) - 2),
            // a few tasks are pinned: affinity paths of the balancer (LBF_*_PINNED)
            cpus: (i % 4 == 3).then(|| platform_mask(&format!("{}", i % n))),
            ..Default::default()
        };
        let t = k.create_task(
            Box::new(Chaos {
                futex: futex.clone(),
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
    k
}

#[test]
fn random_mixes_on_smp_keep_invariants() {
    // Every scheduler invariant is checked after every event (strict: a violation panics).
    let mut migrations = 0;
    let mut newidle = 0;
    let mut kicks = 0;
    for (i, spec) in [
        "v6.6", "v6.12", "v6.18", "v6.19", "v7.0", "v7.1", "v6.12.81",
    ]
    .iter()
    .enumerate()
    {
        for seed in 0..3u64 {
            let hz = if seed.is_multiple_of(2) { 250 } else { 1000 };
            let m = if (i + seed as usize).is_multiple_of(2) {
                MachineDesc::ideal(4, hz, PreemptModel::Full)
            } else {
                machine(
                    "[topology]\ncores_per_cluster = 2\npackages = 2\nnuma_distance = [[10, 21], [21, 10]]\n",
                    hz,
                )
            };
            let k = chaos_smp(spec, m, 10, seed, 400);
            assert!(k.first_warning.is_none(), "{spec}: {:?}", k.first_warning);
            migrations += k.stats.lb_migrations;
            newidle += k.stats.newidle_balances;
            kicks += k.stats.nohz_kicks;
        }
    }
    // guard against a vacuous test: all three balancing paths ran
    assert!(
        migrations > 0 && newidle > 0 && kicks > 0,
        "{migrations} {newidle} {kicks}"
    );
}

#[test]
fn same_seed_same_balance() {
    let run = || {
        let k = chaos_smp(
            "v7.1",
            MachineDesc::ideal(4, 250, PreemptModel::Full),
            10,
            9,
            300,
        );
        (
            k.stats.lb_migrations,
            k.stats.newidle_pulls,
            k.stats.nohz_kicks,
            k.stats.nr_switches,
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn misfit_hog_moves_to_the_biggest_cpu() {
    // smp.md TV-18 (misfit part) and §6.3 on RB5 (capacities 284/871/1024, one MC{8} with
    // SD_ASYM_CPUCAPACITY): a hog on little CPU1 becomes misfit at a tick (it does not fit 284),
    // the busy CPU's tick kicks an idle CPU (check_misfit_status), which balances on behalf of
    // the idle big CPUs: migrate_misfit cannot detach the running hog, so active balance (the
    // stopper) pushes it. On an 871 CPU it still does not fit (80 % of 871 < its util) while a
    // 1024 CPU exists, so it ends on CPU7.
    let p = Platform::builtin("rb5").unwrap();
    let m = MachineDesc::from_platform(&p);
    for v in ["v6.12", "v7.1"] {
        let cfg = KernelConfig::parse(v).unwrap();
        let mut k = Kernel::new(cfg, m.clone(), 1).unwrap();
        k.strict = true;
        k.check_invariants = true;
        let attrs = TaskAttrs {
            comm: Some("hog".into()),
            cpus: Some(platform_mask("1")),
            ..Default::default()
        };
        let t = k.create_task(Box::new(Hog), &attrs, None, false);
        k.start_task_as_wakeup(t);
        k.tasks[t.index()].cpus_allowed = platform_mask("0-7");
        k.tasks[t.index()].nr_cpus_allowed = 8;
        k.run_until(2 * S);
        assert_eq!(k.tasks[t.index()].cpu, 7, "{v}");
        assert!(
            k.stats.lb_active_migrations >= 1,
            "{v}: moved by the stopper"
        );
        assert!(k.stats.nohz_kicks >= 1, "{v}");
        let r0 = runtime(&k, t);
        k.run_until(3 * S);
        assert!(runtime(&k, t) - r0 > 990_000_000, "{v}: runs alone on CPU7");
        assert_eq!(k.tasks[t.index()].cpu, 7, "{v}: stays");
    }
}

#[test]
fn idle_cpus_pull_through_nohz_kicks() {
    // smp.md §4.6: two hogs start on CPU0 of an otherwise idle smp:4. Idle CPUs never tick;
    // CPU0's tick sees nr_running ≥ 2 and kicks the first idle CPU of nohz.idle_cpus_mask,
    // which balances on behalf of the idle CPUs; one hog moves and each then owns a CPU.
    for v in ["v6.6", "v6.12", "v7.1"] {
        let mut k = ideal(v, 4, 250);
        let ts: Vec<_> = (0..2)
            .map(|i| {
                let attrs = TaskAttrs {
                    comm: Some(format!("h{i}")),
                    cpus: Some(platform_mask("0")),
                    ..Default::default()
                };
                let t = k.create_task(Box::new(Hog), &attrs, None, false);
                k.start_task_as_wakeup(t);
                k.tasks[t.index()].cpus_allowed = platform_mask("0-3");
                k.tasks[t.index()].nr_cpus_allowed = 4;
                t
            })
            .collect();
        k.run_until(S);
        assert!(k.stats.nohz_kicks > 0, "{v}");
        assert_eq!(k.stats.lb_migrations, 1, "{v}");
        let r0: Vec<u64> = ts.iter().map(|&t| runtime(&k, t)).collect();
        k.run_until(2 * S);
        for (i, &t) in ts.iter().enumerate() {
            assert!(runtime(&k, t) - r0[i] > 990_000_000, "{v}: hog {i}");
        }
        assert_ne!(
            k.tasks[ts[0].index()].cpu,
            k.tasks[ts[1].index()].cpu,
            "{v}"
        );
    }
}
