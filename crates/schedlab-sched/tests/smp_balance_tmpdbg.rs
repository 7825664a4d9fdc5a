mod common;
use common::*;
use schedlab_sched::*;
#[test]
fn dbg() {
    for v in ["v6.6", "v6.12", "v6.18", "v7.1"] {
        let mut k = ideal(v, 4, 250);
        for i in 0..8 {
            add(&mut k, &format!("h{i}"), Box::new(Hog), 0, None);
        }
        let mut t = 0;
        let mut last = (0, 0);
        while t < 2_000_000_000 {
            t += 20_000_000;
            k.run_until(t);
            let nr: Vec<u32> = (0..4).map(|c| k.rqs[c].nr_running).collect();
            let now = (k.stats.lb_migrations, k.stats.migrations);
            if now != last {
                println!(
                    "{v} t={}ms nr={:?} lb={} mig={} last={:?}",
                    t / 1_000_000,
                    nr,
                    now.0,
                    now.1,
                    k.lb.last_lb
                );
                last = now;
            }
        }
        println!(
            "{v}: newidle={} pulls={} kicks={} active={} forced={} ipis={}",
            k.stats.newidle_balances,
            k.stats.newidle_pulls,
            k.stats.nohz_kicks,
            k.stats.lb_active_migrations,
            k.stats.lb_forced_migrations,
            k.stats.ipis
        );
    }
}
