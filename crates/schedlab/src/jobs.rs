//! Independent simulations on several threads (`--jobs N` of `reproduce` and `compare`).
//!
//! Each job is one whole simulation (a variant and a seed) that shares nothing with the others,
//! so the results do not depend on which thread ran a job or when: they are returned in job
//! order, and `--jobs 1` and `--jobs N` print the same bytes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The default number of worker threads: all cores (`available_parallelism`), else 1.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Runs `f(0)`, …, `f(n − 1)` on up to `jobs` threads (at least one) and returns the results in
/// index order. `done(k)` is called after each job with the number of jobs finished so far
/// (for progress output; it must only observe).
pub fn run_indexed<T, F, D>(n: usize, jobs: usize, f: F, done: D) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
    D: Fn(usize) + Sync,
{
    let threads = jobs.max(1).min(n.max(1));
    if threads == 1 {
        return (0..n)
            .map(|i| {
                let r = f(i);
                done(i + 1);
                r
            })
            .collect();
    }
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let r = f(i);
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                done(finished.fetch_add(1, Ordering::SeqCst) + 1);
            });
        }
    });
    slots
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// [`run_indexed`] with a progress bar that counts the finished jobs and is drawn to its end
/// afterwards (the bar only observes).
pub fn run_with_bar<T, F>(n: usize, jobs: usize, bar: crate::progress::Bar, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let bar = Mutex::new(bar);
    let results = run_indexed(n, jobs, f, |d| {
        bar.lock()
            .unwrap_or_else(|p| p.into_inner())
            .set(d as u64, String::new)
    });
    bar.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .finish(String::new);
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_job_order() {
        // job i returns i², whatever thread ran it: 0, 1, 4, …, 81
        for jobs in [1, 2, 3, 16] {
            let count = AtomicUsize::new(0);
            let out = run_indexed(
                10,
                jobs,
                |i| i * i,
                |_| {
                    count.fetch_add(1, Ordering::SeqCst);
                },
            );
            assert_eq!(out, vec![0, 1, 4, 9, 16, 25, 36, 49, 64, 81]);
            assert_eq!(count.load(Ordering::SeqCst), 10);
        }
        assert!(run_indexed(0, 4, |i| i, |_| {}).is_empty());
    }
}
