//! The long fuzz campaign over every front end (kernel strings, workload lines, rt-app JSON,
//! platform TOML, scenario TOML): N generated inputs, each parsed and validated and, when
//! valid, simulated for at most 1 ms (`schedlab::fuzz`).
//!
//! ```sh
//! nice -n 10 cargo run --profile fuzz -p schedlab --example fuzz_campaign -- --inputs 10000000
//! ```
//!
//! The `fuzz` profile is the release profile with overflow checks and debug assertions on, so
//! that an arithmetic overflow is a failure too. Input n goes to a front end by n mod 10 (3
//! kernel strings, 3 workload lines, 2 rt-app files, 1 platform file, 1 scenario file: the
//! cheap front ends get more inputs) with seed n, so a failure is reproduced with
//! `--only FRONT --seed n` (printed with it; `--only FRONT --seed n --print` prints the input). A panic is caught, counted and printed with its
//! input; the campaign goes on. `--threads T` (default 2) splits the inputs. Prints a progress
//! line every 100 000 inputs and a summary at the end; exit code 1 if anything failed.

use schedlab::fuzz::{check, generate, Cache, Front, Verdict};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

const MIX: [Front; 10] = [
    Front::Kernel,
    Front::Kernel,
    Front::Kernel,
    Front::Workload,
    Front::Workload,
    Front::Workload,
    Front::RtApp,
    Front::RtApp,
    Front::Platform,
    Front::Scenario,
];

#[derive(Default)]
struct Tally {
    ran: [u64; 5],
    refused: [u64; 5],
    failures: u64,
    slowest: (f64, String),
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut inputs: u64 = 100_000;
    let mut start: u64 = 0;
    let mut threads: u64 = 2;
    let mut only: Option<Front> = None;
    let mut verbose = false;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--inputs" => inputs = v.parse().expect("--inputs N"),
            "--start" => start = v.parse().expect("--start N"),
            "--threads" => threads = v.parse::<u64>().expect("--threads T").max(1),
            "--seed" => {
                start = v.parse().expect("--seed S");
                inputs = 1;
            }
            "--only" => {
                only = Some(
                    *Front::ALL
                        .iter()
                        .find(|f| f.name() == v)
                        .expect("--only kernel|workload|rt-app|platform|scenario"),
                )
            }
            "--verbose" => {
                verbose = true;
                i += 1;
                continue;
            }
            "--print" => {
                // the input of `--only FRONT --seed N`, to look at or to feed to the CLI
                let front = only.expect("--only FRONT before --print");
                print!("{}", generate(front, start));
                return;
            }
            a => panic!("unknown argument {a}"),
        }
        i += 2;
    }
    // Panics are reported by the campaign itself, one line each.
    std::panic::set_hook(Box::new(|_| {}));
    let dir = std::env::temp_dir().join(format!("schedlab-fuzz-{}", std::process::id()));
    let t0 = Instant::now();
    let tally = Mutex::new(Tally::default());
    let done = AtomicU64::new(0);
    // Failures of finished shards (a running shard adds its own in the progress line; the
    // progress line is a lower bound, the summary exact).
    let failed = AtomicU64::new(0);
    let cmdline = format!(
        "fuzz_campaign --inputs {inputs} --start {start} --threads {threads}{}",
        only.map(|f| format!(" --only {}", f.name()))
            .unwrap_or_default()
    );
    // What each shard is working on and since when (ms since t0), for the watchdog.
    let current: Vec<(AtomicU64, AtomicU64)> = (0..threads)
        .map(|_| (AtomicU64::new(u64::MAX), AtomicU64::new(0)))
        .collect();
    let finished = AtomicU64::new(0);
    std::thread::scope(|scope| {
        // Watchdog: an input still running after 60 s is reported (once) as SLOW.
        scope.spawn(|| {
            let mut reported = vec![u64::MAX; threads as usize];
            while finished.load(Relaxed) < threads {
                std::thread::sleep(std::time::Duration::from_millis(500));
                let now = t0.elapsed().as_millis() as u64;
                for (k, (n, since)) in current.iter().enumerate() {
                    let n = n.load(Relaxed);
                    if n != u64::MAX
                        && now.saturating_sub(since.load(Relaxed)) > 60_000
                        && reported[k] != n
                    {
                        reported[k] = n;
                        let front = only.unwrap_or(MIX[(n % 10) as usize]);
                        println!(
                            "SLOW --only {} --seed {n}: still running after 60 s",
                            front.name()
                        );
                    }
                }
            }
        });
        for shard in 0..threads {
            let (dir, tally, done, failed) = (&dir, &tally, &done, &failed);
            let (current, finished) = (&current, &finished);
            scope.spawn(move || {
                let dir = dir.join(format!("shard-{shard}"));
                std::fs::create_dir_all(&dir).expect("temp dir");
                let mut cache = Cache::new(&dir);
                let mut local = Tally::default();
                let mut n = start + shard;
                while n < start + inputs {
                    let front = only.unwrap_or(MIX[(n % 10) as usize]);
                    let fi = Front::ALL.iter().position(|f| *f == front).unwrap();
                    let input = generate(front, n);
                    let t = Instant::now();
                    current[shard as usize]
                        .1
                        .store(t0.elapsed().as_millis() as u64, Relaxed);
                    current[shard as usize].0.store(n, Relaxed);
                    let r = catch_unwind(AssertUnwindSafe(|| check(front, &input, &mut cache)));
                    let dt = t.elapsed().as_secs_f64();
                    if dt > local.slowest.0 {
                        local.slowest = (dt, format!("--only {} --seed {n}", front.name()));
                    }
                    match r {
                        Ok(Ok(Verdict::Ran)) => local.ran[fi] += 1,
                        Ok(Ok(Verdict::Refused(m))) => {
                            local.refused[fi] += 1;
                            if verbose {
                                println!("refused --only {} --seed {n}: {m}", front.name());
                            }
                        }
                        Ok(Err(why)) => {
                            local.failures += 1;
                            println!(
                                "FAIL --only {} --seed {n}: {why}\n  input: {input:?}",
                                front.name()
                            );
                        }
                        Err(p) => {
                            local.failures += 1;
                            let msg = p
                                .downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                .unwrap_or_default();
                            println!(
                                "PANIC --only {} --seed {n}: {msg}\n  input: {input:?}",
                                front.name()
                            );
                        }
                    }
                    let d = done.fetch_add(1, Relaxed) + 1;
                    if d % 100_000 == 0 {
                        println!(
                            "{d} inputs, {} failures, {:.0} s",
                            failed.load(Relaxed) + local.failures,
                            t0.elapsed().as_secs_f64()
                        );
                    }
                    n += threads;
                }
                let mut t = tally.lock().unwrap();
                for k in 0..5 {
                    t.ran[k] += local.ran[k];
                    t.refused[k] += local.refused[k];
                }
                t.failures += local.failures;
                failed.fetch_add(local.failures, Relaxed);
                current[shard as usize].0.store(u64::MAX, Relaxed);
                finished.fetch_add(1, Relaxed);
                if local.slowest.0 > t.slowest.0 {
                    t.slowest = local.slowest;
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let t = tally.into_inner().unwrap();
    let total: u64 = t.ran.iter().sum::<u64>() + t.refused.iter().sum::<u64>() + t.failures;
    println!(
        "fuzz campaign ({cmdline}): {total} inputs, {} failures, {:.0} s wall",
        t.failures,
        t0.elapsed().as_secs_f64()
    );
    for (k, f) in Front::ALL.iter().enumerate() {
        println!(
            "  {:<9} ran {:>9}  refused {:>9}",
            f.name(),
            t.ran[k],
            t.refused[k]
        );
    }
    println!("  slowest input {:.3} s ({})", t.slowest.0, t.slowest.1);
    if t.failures > 0 {
        std::process::exit(1);
    }
}
