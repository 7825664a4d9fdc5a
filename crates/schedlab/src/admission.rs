//! SCHED_DEADLINE admission control at the user surface (rt-dl.md §3.11), before a run: the
//! reservations the workload lines ask for at start (a line's `chrt -d`/`policy=deadline:`,
//! rt-app's SCHED_DEADLINE threads × instances) are added, in order, to their root domain's
//! `total_bw` — which already holds the fair_server's bandwidth, 5 % per CPU, on kernels with
//! the fair_server (a110a81c52a9, v6.12+) — and the first one `__dl_overflow()` refuses is
//! reported the way the kernel refuses it (`sched_setattr`: EBUSY), naming the task and the
//! numbers. A reservation whose affinity does not cover its whole root domain is refused too
//! (`__sched_setscheduler`: EPERM). With `sched_rt_runtime_us=-1` there is no admission
//! control. The arithmetic is the kernel's, from `schedlab_sched::deadline`.
//!
//! This is a check of what the command lines ask for; the kernel model also applies admission
//! control when a task becomes SCHED_DEADLINE during the run (tasks a program creates later,
//! `fork` events), as the real kernel does.

use schedlab_platform::{CpuMask, Platform};
use schedlab_sched::deadline::{__dl_overflow, dl_bw_limit, to_ratio};
use schedlab_sched::{KernelConfig, Patch};
use schedlab_workloads::DlReservation;

/// kernel: the fair_server's 50 ms runtime per 1 s period (rt-dl.md §4.2).
const FAIR_SERVER_RUNTIME_NS: u64 = 50_000_000;
const FAIR_SERVER_PERIOD_NS: u64 = 1_000_000_000;

/// One root domain's DL bandwidth account (`struct dl_bw` and the span it covers).
#[derive(Clone, Debug)]
struct Domain {
    span: CpuMask,
    /// Σ `arch_scale_cpu_capacity()` of its CPUs (`dl_bw_capacity()`).
    capacity: u64,
    /// `dl_b->total_bw`.
    total_bw: u64,
    /// The fair_servers' part of `total_bw`.
    servers_bw: u64,
    /// DL tasks admitted so far.
    tasks: u64,
}

/// The admission state of a machine: per root domain, the limit and what is allocated.
pub struct Admission {
    /// `dl_b->bw` per CPU (None: `sched_rt_runtime_us = -1`, no admission control).
    limit: Option<u64>,
    domains: Vec<Domain>,
}

impl Admission {
    /// The state at boot: the fair_servers attached on kernels that have them.
    pub fn new(platform: &Platform, cfg: &KernelConfig) -> Admission {
        let server_bw = if cfg.has(Patch::FairServer) {
            to_ratio(FAIR_SERVER_PERIOD_NS, FAIR_SERVER_RUNTIME_NS)
        } else {
            0
        };
        let domains = platform
            .sched_domains()
            .root_domains
            .iter()
            .map(|span| {
                let capacity = span
                    .iter()
                    .map(|c| u64::from(platform.arch_scale_cpu_capacity(c)))
                    .sum();
                let servers_bw = server_bw * span.weight() as u64;
                Domain {
                    span: span.clone(),
                    capacity,
                    total_bw: servers_bw,
                    servers_bw,
                    tasks: 0,
                }
            })
            .collect();
        Admission {
            limit: dl_bw_limit(
                cfg.sysctl.sched_rt_runtime_us,
                cfg.sysctl.sched_rt_period_us,
            ),
            domains,
        }
    }

    /// Admits `r` (a task created on the machine whose CPUs are `all`), or says why the kernel
    /// refuses it.
    pub fn admit(&mut self, r: &DlReservation, all: &CpuMask) -> Result<(), String> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let mask = r.cpus.clone().unwrap_or_else(|| all.clone());
        let first = mask.first().unwrap_or(0);
        let Some(d) = self.domains.iter_mut().find(|d| d.span.contains(first)) else {
            return Ok(());
        };
        if !d.span.is_subset_of(&mask) {
            return Err(format!(
                "task '{}': SCHED_DEADLINE needs an affinity that covers its whole root domain \
                 (CPUs {}), but it may run only on CPUs {mask} (sched_setattr: EPERM)",
                r.task, d.span
            ));
        }
        let new_bw = r.attr.bw();
        if __dl_overflow(Some(limit), d.capacity, d.total_bw, 0, new_bw) {
            let room = (limit as u128 * d.capacity as u128) >> 10;
            let servers = if d.servers_bw > 0 {
                format!(
                    " + fair_server {} x {} = {}",
                    d.span.weight(),
                    d.servers_bw / d.span.weight() as u64,
                    d.servers_bw
                )
            } else {
                String::new()
            };
            return Err(format!(
                "task '{}': SCHED_DEADLINE runtime {} / deadline {} / period {} ns (dl_bw {new_bw}) \
                 refused by admission control (sched_setattr: EBUSY): root domain CPUs {} allows \
                 {room} (= {limit} x capacity {} / 1024) and holds {} ({} DL task(s) {}{servers}); \
                 {} + {new_bw} > {room}",
                r.task,
                r.attr.runtime,
                r.attr.deadline,
                r.attr.effective_period(),
                d.span,
                d.capacity,
                d.total_bw,
                d.tasks,
                d.total_bw - d.servers_bw,
                d.total_bw,
            ));
        }
        d.total_bw += new_bw;
        d.tasks += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sched::DlAttr;

    fn res(name: &str, runtime: u64, period: u64, cpus: Option<&str>) -> DlReservation {
        DlReservation {
            task: name.to_string(),
            attr: DlAttr {
                runtime,
                deadline: period,
                period,
                sched_flags: 0,
            },
            cpus: cpus.map(|c| CpuMask::parse_cpulist(c).unwrap()),
        }
    }

    /// How many 25 ms / 100 ms tasks fit on `platform` under `kernel`.
    fn fits(platform: &str, kernel: &str) -> (u32, String) {
        let p = Platform::resolve(platform).unwrap();
        let cfg = KernelConfig::parse(kernel).unwrap();
        let mut a = Admission::new(&p, &cfg);
        for n in 0..64 {
            if let Err(m) = a.admit(
                &res(&format!("d-{n}"), 25_000_000, 100_000_000, None),
                &p.all_cpus(),
            ) {
                return (n, m);
            }
        }
        (64, String::new())
    }

    /// rt-dl.md vector 7.12: 4 CPUs of capacity 1024, R = 25 ms, P = 100 ms → dl_bw 262144;
    /// the limit 996147 × 4096 >> 10 = 3 984 588. v6.6 (no fair_server): 15 × 262144 =
    /// 3 932 160 fits, a 16th would make 4 194 304. v6.12+: 4 × 52428 = 209 712 already held,
    /// so 209 712 + 14 × 262144 = 3 879 728 fits and a 15th would make 4 141 872.
    #[test]
    fn vector_7_12() {
        let (n, m) = fits("smp:4", "v6.6");
        assert_eq!(n, 15, "{m}");
        assert!(m.contains("task 'd-15'"), "{m}");
        assert!(m.contains("dl_bw 262144"), "{m}");
        assert!(m.contains("allows 3984588"), "{m}");
        assert!(m.contains("holds 3932160 (15 DL task(s) 3932160)"), "{m}");
        let (n, m) = fits("smp:4", "v6.12");
        assert_eq!(n, 14, "{m}");
        assert!(m.contains("task 'd-14'"), "{m}");
        assert!(
            m.contains("holds 3879728 (14 DL task(s) 3670016 + fair_server 4 x 52428 = 209712)"),
            "{m}"
        );
        assert!(m.contains("3879728 + 262144 > 3984588"), "{m}");
        let (n, _) = fits("smp:4", "v6.18");
        assert_eq!(n, 14);
        // sched_rt_runtime_us = -1: no admission control
        let (n, _) = fits("smp:4", "v6.12 sched_rt_runtime_us=-1");
        assert_eq!(n, 64);
        // runtime = period (limit 1 << 20 per CPU): (4 194 304 − 209 712) / 262 144 = 15.2
        let (n, _) = fits("smp:4", "v6.12 sched_rt_runtime_us=1000000");
        assert_eq!(n, 15);
    }

    /// An rt-app file with `n` SCHED_DEADLINE threads of 25 ms / 100 ms (one task, `n`
    /// instances), checked by `validate` as `run` checks it, without simulating.
    fn validate_instances(n: u32, kernel: &str, prefix: &str) -> Result<(), String> {
        let path = std::env::temp_dir().join(format!(
            "schedlab-admission-{}-{n}-{}.json",
            std::process::id(),
            kernel.replace([' ', '='], "_")
        ));
        std::fs::write(
            &path,
            format!(
                r#"{{ "global": {{ "duration": 1 }}, "tasks": {{ "d": {{ "instance": {n},
                     "policy": "SCHED_DEADLINE", "dl-runtime": 25000, "dl-period": 100000,
                     "run": 1000, "timer": {{ "ref": "t", "period": 100000 }} }} }} }}"#
            ),
        )
        .unwrap();
        let line = format!("{prefix}rt-app {}", path.display());
        let spec = crate::RunSpec::new("smp:4", kernel, &[line.as_str()]);
        let r = crate::run::validate(&spec).map_err(|e| e.to_string());
        let _ = std::fs::remove_file(&path);
        r
    }

    /// Vector 7.12 through the workload line: rt-app threads × instances are counted, named
    /// as rt-app names them (`d-N`).
    #[test]
    fn rtapp_instances_are_admitted_up_to_the_limit() {
        assert!(validate_instances(14, "v6.12", "").is_ok());
        let e = validate_instances(15, "v6.12", "").unwrap_err();
        assert!(e.contains("task 'd-14'") && e.contains("EBUSY"), "{e}");
        assert!(validate_instances(15, "v6.6", "").is_ok());
        let e = validate_instances(16, "v6.6", "").unwrap_err();
        assert!(e.contains("task 'd-15'"), "{e}");
        // the line's affinity is the threads' default: CPUs 0-1 do not cover the root domain
        let e = validate_instances(1, "v6.12", "taskset -c 0-1 ").unwrap_err();
        assert!(e.contains("CPUs 0-3") && e.contains("EPERM"), "{e}");
    }

    /// rpi4-rt (rt-dl.md §2.8): `isolcpus=domain,3` puts CPU 3 in a root domain of its own.
    /// Each A72 has capacity 1024. Domain {3}: 996147 − 52428 (its fair_server) = 943 719 of
    /// room, so three 262144 tasks (786 432) fit and a fourth does not; domain {0,1,2}:
    /// 996147 × 3072 >> 10 = 2 988 441, minus 3 × 52428 = 2 831 157 → ten fit (2 621 440).
    #[test]
    fn isolated_cpus_are_a_root_domain_of_their_own() {
        let p = Platform::resolve("rpi4-rt").unwrap();
        let cfg = KernelConfig::parse("v6.12").unwrap();
        let all = p.all_cpus();
        let mut a = Admission::new(&p, &cfg);
        for i in 0..3 {
            a.admit(
                &res(&format!("i{i}"), 25_000_000, 100_000_000, Some("3")),
                &all,
            )
            .unwrap();
        }
        let m = a
            .admit(&res("i3", 25_000_000, 100_000_000, Some("3")), &all)
            .unwrap_err();
        assert!(m.contains("root domain CPUs 3 allows 996147"), "{m}");
        let mut n = 0;
        while a
            .admit(&res("h", 25_000_000, 100_000_000, None), &all)
            .is_ok()
        {
            n += 1;
        }
        assert_eq!(n, 10);
    }

    /// A DL task must be allowed on every CPU of its root domain (EPERM otherwise).
    #[test]
    fn affinity_must_cover_the_root_domain() {
        let p = Platform::resolve("smp:4").unwrap();
        let cfg = KernelConfig::parse("v6.12").unwrap();
        let mut a = Admission::new(&p, &cfg);
        let m = a
            .admit(&res("t", 1_000_000, 10_000_000, Some("0")), &p.all_cpus())
            .unwrap_err();
        assert!(m.contains("CPUs 0-3") && m.contains("EPERM"), "{m}");
        assert!(a
            .admit(&res("t", 1_000_000, 10_000_000, Some("0-3")), &p.all_cpus())
            .is_ok());
    }
}
