//! `schedlab list …` and `schedlab show …`: the configuration vocabulary as tables.

use schedlab_platform::Platform;
use schedlab_sched::features::Feature;
use schedlab_sched::patches::Patch;
use schedlab_sched::presets::{KernelConfig, MAIN_PRESETS, PRESETS};
use schedlab_sched::sysctl::SYSCTLS;
use std::fmt::Write;

/// `schedlab list kernels`
pub fn kernels() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<14} {:<14} {:<6} {:>8} {:>16}  SUMMARY",
        "KERNEL", "BASE", "FAIR", "PATCHES", "SLICE(4 CPUs)"
    );
    for p in PRESETS {
        let k = KernelConfig::parse(p.name).expect("preset parses");
        let class = if k.has(Patch::EevdfPolicy) {
            "EEVDF"
        } else {
            "CFS"
        };
        let _ = writeln!(
            s,
            "{:<14} {:<14} {:<6} {:>8} {:>13} ns  {}",
            p.name,
            p.base.unwrap_or("-"),
            class,
            k.patches.iter().count(),
            k.base_slice_ns(4),
            p.summary
        );
    }
    s.push_str("\nSLICE: base_slice_ns; for the CFS kernel min_granularity_ns, the same variable before v6.6 renamed it\n(its slices are shares of latency_ns, cfs.md).\n");
    s.push_str("\nA kernel string is a preset, then +ID / -ID patches, FEATURE / NO_FEATURE and name=value tunables,\ne.g. 'v6.18+78cde54ea5f0 NO_DELAY_DEQUEUE base_slice_ns=3000000'.\n");
    s
}

/// `schedlab list patches`: every patch with the main presets that carry it.
pub fn patches() -> String {
    let cfgs: Vec<KernelConfig> = MAIN_PRESETS
        .iter()
        .map(|p| KernelConfig::parse(p).unwrap())
        .collect();
    let mut s = String::new();
    let _ = write!(s, "{:<12} {:<10} {:<8}", "ID", "RELEASE", "MODEL");
    for p in MAIN_PRESETS {
        let _ = write!(s, " {:>5}", p);
    }
    let _ = writeln!(s, "  SUBJECT");
    for p in Patch::ALL {
        let i = p.info();
        let _ = write!(
            s,
            "{:<12} {:<10} {:<8}",
            i.id,
            i.release,
            if i.modelled { "yes" } else { "listed" }
        );
        for c in &cfgs {
            let _ = write!(s, " {:>5}", if c.has(*p) { "x" } else { "." });
        }
        let _ = writeln!(s, "  {}", i.subject);
        let _ = writeln!(
            s,
            "{:<31}{:>w$}  switches: {}",
            "",
            "",
            i.touches,
            w = 6 * cfgs.len()
        );
    }
    s.push_str("\nMODEL 'listed': accepted in kernel strings but changes nothing in the model (no modelled behaviour).\n");
    let series: Vec<&str> = schedlab_sched::patches::SERIES
        .iter()
        .map(|p| p.id())
        .collect();
    let _ = writeln!(
        s,
        "The EEVDF series of v6.6 ({}) replaces the CFS class as a whole: a kernel string cannot add\nor remove one of them; use v6.5 for CFS.",
        series.join(", ")
    );
    s
}

/// `schedlab list features`: defaults per main preset (T, F, or - when absent).
pub fn features() -> String {
    let cfgs: Vec<KernelConfig> = MAIN_PRESETS
        .iter()
        .map(|p| KernelConfig::parse(p).unwrap())
        .collect();
    let mut s = String::new();
    let _ = write!(s, "{:<24} {:<6}", "FEATURE", "MODEL");
    for p in MAIN_PRESETS {
        let _ = write!(s, " {:>6}", p);
    }
    s.push('\n');
    for f in Feature::ALL {
        let _ = write!(
            s,
            "{:<24} {:<6}",
            f.name(),
            if f.modelled() { "yes" } else { "listed" }
        );
        for c in &cfgs {
            let v = if !c.features.exists(*f) {
                "-"
            } else if c.feat(*f) {
                "T"
            } else {
                "F"
            };
            let _ = write!(s, " {:>6}", v);
        }
        s.push('\n');
    }
    s.push_str("\nMODEL 'listed': accepted and shown as the kernel has it, but the model never reads it; setting it\nchanges nothing and gives a warning.\n");
    // features that only the CFS kernel has (cfs.md §12.1)
    let only_first: Vec<&str> = Feature::ALL
        .iter()
        .filter(|f| {
            cfgs[0].features.exists(**f) && cfgs[1..].iter().all(|c| !c.features.exists(**f))
        })
        .map(|f| f.name())
        .collect();
    let _ = writeln!(
        s,
        "Only in {} (the CFS class): {}.",
        MAIN_PRESETS[0],
        only_first.join(", ")
    );
    s.push_str("\nSimulator-only knobs (not upstream features):\n");
    for f in schedlab_sched::SimFeature::ALL {
        let _ = writeln!(
            s,
            "  {:<24} default {}",
            f.name(),
            if f.default_on() { "on" } else { "off" }
        );
    }
    s
}

/// `schedlab list sysctls`
pub fn sysctls() -> String {
    let mut s = String::new();
    for x in SYSCTLS {
        let _ = writeln!(
            s,
            "{:<20} {}\n{:<20} default: {}, units: {}",
            x.name, x.doc, "", x.default, x.units
        );
    }
    s
}

/// `schedlab list platforms`
pub fn platforms() -> String {
    let mut s = String::new();
    for (n, d) in Platform::list_builtin() {
        let _ = writeln!(s, "{:<16} {}", n, d);
    }
    s.push_str("\nA platform can also be a TOML file path (see platforms/README.md).\n");
    s
}

/// `schedlab list workloads`
pub fn workloads() -> String {
    let mut s = String::new();
    for (p, d) in schedlab_workloads::workload::KNOWN_PROGRAMS {
        let _ = writeln!(s, "{:<34} {}", p, d);
    }
    s.push_str(
        "\nPlacement options may precede the command, in any order and nested: \
         policy=other|batch|idle|fifo:P|rr:P|deadline:R/D/P nice=N slice=DUR cpus=LIST \
         cgroup=/PATH, chrt [-f|-r|-o|-b|-i|-d -T NS -D NS -P NS] PRIO, taskset [-c] MASK|LIST, \
         nice [-n N], cgexec -g cpu:/PATH\n\
         A cgroup is created when first named; its cpu.weight, cpu.weight.nice, cpu.idle, \
         cpu.max and cpu.shares come from run --cgroup PATH:KEY=VALUE,... or [cgroups.\"/PATH\"] \
         tables (--cgroup-file, scenario files).\n",
    );
    s
}

/// `schedlab show kernel SPEC`: the resolved configuration.
pub fn show_kernel(k: &KernelConfig) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "kernel '{}' (preset {})", k.spec, k.preset);
    for w in &k.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    let _ = writeln!(
        s,
        "\nfeatures (as /sys/kernel/debug/sched/features):\n  {}",
        k.features.debugfs_line()
    );
    let _ = writeln!(s, "\npatches:");
    for p in k.patches.iter() {
        let i = p.info();
        let _ = writeln!(
            s,
            "  {} {:<10} {:<6} {}",
            i.id,
            i.release,
            if i.modelled { "" } else { "listed" },
            i.subject
        );
    }
    if !k.has(Patch::EevdfPolicy) {
        // the CFS class (v6.5): its tunables after boot and the configured writes
        // the writes were validated by the parser, so booting cannot fail
        let boot = |n: u32| {
            schedlab_sched::fair_cfs::CfsTunables::boot(n, &k.sysctl.cfs_writes)
                .expect("validated tunables")
        };
        let rows: Vec<String> = [1u32, 4, 8]
            .iter()
            .map(|&n| {
                let t = boot(n);
                format!(
                    "latency_ns {} / min_granularity_ns {} / wakeup_granularity_ns {} ({n} CPU{})",
                    t.latency,
                    t.min_granularity,
                    t.wakeup_granularity,
                    if n == 1 { "" } else { "s" }
                )
            })
            .collect();
        let t = boot(1);
        let _ = writeln!(
            s,
            "\nCFS tunables: {}; idle_min_granularity_ns {}, sched_nr_latency {}, child_runs_first {}",
            rows.join("; "),
            t.idle_min_granularity,
            t.nr_latency,
            t.child_runs_first as u8
        );
        let _ = writeln!(
            s,
            "tunables: migration_cost_ns {}, preempt {}, HZ {}",
            k.sysctl.migration_cost_ns,
            k.preempt.map(|m| m.name()).unwrap_or("(platform default)"),
            k.hz.map(|h| h.to_string())
                .unwrap_or_else(|| "(platform default)".into())
        );
        return s;
    }
    let _ = writeln!(
        s,
        "\ntunables: base_slice_ns {} (1 CPU) / {} (4 CPUs) / {} (8+ CPUs), migration_cost_ns {}, preempt {}, HZ {}",
        k.base_slice_ns(1),
        k.base_slice_ns(4),
        k.base_slice_ns(8),
        k.sysctl.migration_cost_ns,
        k.preempt.map(|m| m.name()).unwrap_or("(platform default)"),
        k.hz.map(|h| h.to_string()).unwrap_or_else(|| "(platform default)".into())
    );
    s
}

/// `schedlab show platform NAME`
pub fn show_platform(name: &str) -> Result<String, String> {
    Platform::resolve(name)
        .map(|p| p.show())
        .map_err(|e| e.to_string())
}

/// `schedlab show kernel SPEC`
pub fn show_kernel_spec(spec: &str) -> Result<String, String> {
    KernelConfig::parse(spec)
        .map(|k| show_kernel(&k))
        .map_err(|e| e.to_string())
}
