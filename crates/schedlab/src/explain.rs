//! Why a task waited: the wakeups recorded for `--explain-wakeups COMM` (the kernel's
//! `WakeupRecord`s), summarised by the reason the wakeup did not preempt, with the longest
//! waits listed one by one (who ran, at which level the two met, why).

use schedlab_sched::stats::WakeupRecord;
use serde_json::{json, Value};
use std::fmt::Write;

/// Wake-to-run latency of a record (None if it had not run when the run stopped).
pub fn latency(r: &WakeupRecord) -> Option<u64> {
    r.ran_at.map(|t| t.saturating_sub(r.woke_at))
}

/// Per reason: (reason, wakeups, of which long, mean latency ns, max latency ns, long ones
/// that ended because the running task blocked rather than being preempted).
pub struct Summary {
    pub total: usize,
    pub long_ns: u64,
    pub long: usize,
    pub by_reason: Vec<(&'static str, usize, usize, f64, u64, usize)>,
}

/// Groups the records by verdict; `long_ns` is the wait from which a wakeup counts as long.
pub fn summarise(recs: &[WakeupRecord], long_ns: u64) -> Summary {
    let mut by: Vec<(&'static str, usize, usize, f64, u64, usize)> = Vec::new();
    let mut long = 0;
    for r in recs {
        let Some(l) = latency(r) else { continue };
        let name = r.verdict.name();
        let i = match by.iter().position(|b| b.0 == name) {
            Some(i) => i,
            None => {
                by.push((name, 0, 0, 0.0, 0, 0));
                by.len() - 1
            }
        };
        let b = &mut by[i];
        b.1 += 1;
        b.3 += l as f64;
        b.4 = b.4.max(l);
        if l >= long_ns {
            b.2 += 1;
            b.5 += r.prev_blocked as usize;
            long += 1;
        }
    }
    for b in &mut by {
        b.3 /= b.1.max(1) as f64;
    }
    // most long wakeups first, then most wakeups; names break ties (stable output)
    by.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)).then(a.0.cmp(b.0)));
    Summary {
        total: recs.iter().filter(|r| r.ran_at.is_some()).count(),
        long_ns,
        long,
        by_reason: by,
    }
}

/// The `top` longest waits that ended before the run stopped, longest first (earlier
/// wakeups first on a tie).
fn longest(recs: &[WakeupRecord], top: usize) -> Vec<&WakeupRecord> {
    let mut v: Vec<&WakeupRecord> = recs.iter().filter(|r| r.ran_at.is_some()).collect();
    v.sort_by(|a, b| latency(b).cmp(&latency(a)).then(a.woke_at.cmp(&b.woke_at)));
    v.truncate(top);
    v
}

/// The text section: the summary table and the `top` longest waits.
pub fn text(comm: &str, recs: &[WakeupRecord], long_ns: u64, top: usize) -> String {
    let mut s = String::new();
    let sm = summarise(recs, long_ns);
    let _ = writeln!(
        s,
        "\n  wakeups of '{comm}': {} (wait = wakeup to switch-in; long = at least {} us: {})",
        sm.total,
        long_ns / 1000,
        sm.long
    );
    let _ = writeln!(
        s,
        "    {:<18} {:>9} {:>6} {:>14} {:>12} {:>14}",
        "REASON", "WAKEUPS", "LONG", "MEAN_WAIT(us)", "MAX_WAIT(us)", "LONG_ENDED_BY"
    );
    for (name, n, nl, mean, max, nb) in &sm.by_reason {
        let _ = writeln!(
            s,
            "    {:<18} {:>9} {:>6} {:>14.1} {:>12.1} {:>14}",
            name,
            n,
            nl,
            mean / 1000.0,
            *max as f64 / 1000.0,
            format!("{nb} blk {} pre", nl - nb)
        );
    }
    let _ = writeln!(
        s,
        "    (LONG_ENDED_BY: how a long wait ended — the task running before it blocked, or was preempted)"
    );
    let longest = longest(recs, top);
    if !longest.is_empty() {
        let _ = writeln!(s, "    the {} longest waits:", longest.len());
        for r in longest {
            let lat = latency(r).unwrap_or(0);
            let at = if r.curr_entity.is_empty() || r.curr_entity == r.curr_comm {
                String::new()
            } else {
                format!(", entity {} at the level where they met", r.curr_entity)
            };
            let _ = writeln!(
                s,
                "      t={:.6} s cpu {} waited {:.1} us: {}-{} ran{at}; {}; it got the CPU when the task before it {}",
                r.woke_at as f64 / 1e9,
                r.cpu,
                lat as f64 / 1000.0,
                r.curr_comm,
                r.curr_pid,
                r.verdict.explain(),
                if r.prev_blocked { "blocked" } else { "was preempted" }
            );
        }
    }
    s
}

/// The JSON object: the summary and the `top` longest waits.
pub fn json(comm: &str, recs: &[WakeupRecord], long_ns: u64, top: usize) -> Value {
    let sm = summarise(recs, long_ns);
    let longest = longest(recs, top);
    json!({
        "comm": comm,
        "wakeups": sm.total,
        "long_ns": long_ns,
        "long": sm.long,
        "by_reason": sm.by_reason.iter().map(|(n, c, l, m, x, b)| json!({
            "reason": n, "wakeups": c, "long": l, "mean_wait_ns": m, "max_wait_ns": x,
            "long_ended_by_block": b
        })).collect::<Vec<_>>(),
        "longest": longest.iter().map(|r| json!({
            "woke_at_ns": r.woke_at, "cpu": r.cpu, "wait_ns": latency(r),
            "curr_pid": r.curr_pid, "curr_comm": r.curr_comm, "curr_entity": r.curr_entity,
            "reason": r.verdict.name(), "prev_blocked": r.prev_blocked,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sched::stats::WakeupVerdict;

    fn rec(woke: u64, ran: Option<u64>, v: WakeupVerdict) -> WakeupRecord {
        WakeupRecord {
            pid: 1,
            woke_at: woke,
            cpu: 0,
            curr_pid: 2,
            curr_comm: "hog".into(),
            curr_entity: "/a".into(),
            verdict: v,
            ran_at: ran,
            prev_blocked: false,
        }
    }

    /// Three waits of 5, 2000 and 3000 us (two by the self-buddy) and one that never ran:
    /// 3 wakeups, 2 long at 500 us, self_buddy first with mean 2500 us and max 3000 us.
    #[test]
    fn summary_by_reason() {
        let recs = vec![
            rec(0, Some(5_000), WakeupVerdict::Preempted),
            rec(
                10_000,
                Some(2_010_000),
                WakeupVerdict::Buddy { self_buddy: true },
            ),
            rec(
                20_000,
                Some(3_020_000),
                WakeupVerdict::Buddy { self_buddy: true },
            ),
            rec(30_000, None, WakeupVerdict::Protected),
        ];
        let s = summarise(&recs, 500_000);
        assert_eq!((s.total, s.long), (3, 2));
        assert_eq!(
            s.by_reason[0],
            ("self_buddy", 2, 2, 2_500_000.0, 3_000_000, 0)
        );
        assert_eq!(s.by_reason[1], ("preempted", 1, 0, 5_000.0, 5_000, 0));
        let t = text("ct", &recs, 500_000, 1);
        assert!(t.contains("waited 3000.0 us: hog-2 ran, entity /a"), "{t}");
    }
}
