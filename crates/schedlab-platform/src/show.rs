//! `schedlab show platform NAME`: a human summary of a platform — topology, sched domains,
//! capacities, HZ, preemption, idle states and costs with their provenance.

use std::collections::BTreeMap;
use std::fmt::Write;

use schedlab_engine::Nanos;

use crate::cost::{ProgramCostKind, COST_FIELDS, PROGRAM_COST_FIELDS};
use crate::cpumask::CpuMask;
use crate::platform::{LlcLevel, Platform};
use crate::toml_tree::format_decimal;
use crate::topology::{sd_flags_string, CpuDomains, SchedDomains, SD_CLUSTER};

fn us(n: Nanos) -> String {
    format_decimal(n.0, 3)
}

fn mhz(khz: u32) -> String {
    format_decimal(u64::from(khz), 3)
}

fn list_or_none(m: &CpuMask) -> String {
    if m.is_empty() {
        "none".to_string()
    } else {
        m.to_string()
    }
}

impl Platform {
    /// `# comment` of a value, or empty.
    fn note(&self, key: &str) -> String {
        match self.provenance.get(key) {
            Some(p) if !p.comment.is_empty() => format!("  # {}", p.comment),
            _ => String::new(),
        }
    }

    /// Renders the human summary shown by `schedlab show platform NAME`.
    pub fn show(&self) -> String {
        let mut o = String::new();
        let sd = self.sched_domains();
        let _ = writeln!(o, "platform {} — {}", self.name, self.description);
        let _ = writeln!(o, "source: {}", self.source);
        if !self.notes.is_empty() {
            let _ = writeln!(o, "\nNotes");
            for n in &self.notes {
                let _ = writeln!(o, "  * {n}");
            }
        }

        // Kernel configuration.
        let _ = writeln!(o, "\nKernel");
        let _ = writeln!(
            o,
            "  HZ          {} (tick {} ms){}",
            self.hz,
            format_decimal(self.tick_period().0, 6),
            self.note("kernel.hz")
        );
        let _ = writeln!(
            o,
            "  preemption  {}{}{}",
            self.preempt.name(),
            if self.preempt_dynamic {
                " (PREEMPT_DYNAMIC)"
            } else {
                ""
            },
            self.note("kernel.preempt")
        );
        let _ = writeln!(
            o,
            "  sched_clock {} MHz (resolution {} ns){}",
            format_decimal(self.sched_clock_hz / 1000, 3),
            1_000_000_000u64.div_ceil(self.sched_clock_hz).max(1),
            self.note("kernel.sched_clock_hz")
        );
        let iso = &self.isolation;
        let mut flags = Vec::new();
        if iso.nohz {
            flags.push("nohz");
        }
        if iso.domain {
            flags.push("domain");
        }
        if iso.managed_irq {
            flags.push("managed_irq");
        }
        let _ = writeln!(
            o,
            "  isolcpus    {}{}{}",
            list_or_none(&iso.isolcpus),
            if flags.is_empty() || iso.isolcpus.is_empty() {
                String::new()
            } else {
                format!(" ({})", flags.join(","))
            },
            self.note("kernel.isolcpus")
        );
        let _ = writeln!(
            o,
            "  nohz_full   {}{}",
            list_or_none(&iso.nohz_full),
            self.note("kernel.nohz_full")
        );
        let _ = writeln!(o, "  rcu_nocbs   {}", list_or_none(&iso.rcu_nocbs));
        if let Some(r) = self.relax_domain_level {
            let _ = writeln!(o, "  relax_domain_level {r}");
        }

        // CPUs.
        let _ = writeln!(o, "\nCPUs ({})", self.nr_cpus());
        let _ = writeln!(
            o,
            "  {:>4} {:<10} {:>5} {:>7} {:>4} {:>4} {:>4} {:>5}  {:>15}",
            "cpu", "class", "core", "cluster", "llc", "pkg", "node", "cap", "MHz max/cur"
        );
        for c in &self.cpus {
            let _ = writeln!(
                o,
                "  {:>4} {:<10} {:>5} {:>7} {:>4} {:>4} {:>4} {:>5}  {:>15}",
                c.cpu,
                self.classes[c.class].name,
                c.core_id,
                c.cluster_id,
                c.llc_id,
                c.package_id,
                c.node,
                c.capacity_orig,
                format!("{}/{}", mhz(c.freq_max_khz), mhz(c.freq_cur_khz))
            );
        }
        for (i, k) in self.classes.iter().enumerate() {
            let _ = writeln!(
                o,
                "  class {} = CPUs {}: capacity {}{}{}",
                k.name,
                k.cpus,
                k.capacity_orig,
                k.capacity_dmips_mhz
                    .map(|d| format!(" (capacity-dmips-mhz {d})"))
                    .unwrap_or_default(),
                self.note(&format!("cpu_class[{i}].capacity"))
            );
        }
        let _ = writeln!(
            o,
            "  SMT: {}; SMT throughput factor {}{}",
            if self.has_smt() { "yes" } else { "no" },
            format_decimal(u64::from(self.smt_throughput_ppm), 6),
            self.note("topology.smt_throughput")
        );
        let _ = writeln!(
            o,
            "  LLC level: {}",
            match self.llc_level {
                LlcLevel::Mc => "MC (firmware-described shared LLC)",
                LlcLevel::Cls => "CLS (no shared LLC described: MC skipped, cluster is the LLC)",
            }
        );
        let _ = write!(o, "  NUMA distance:");
        for row in &self.numa_distance {
            let _ = write!(
                o,
                " [{}]",
                row.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let _ = writeln!(o, "{}", self.note("topology.numa_distance"));
        let _ = writeln!(
            o,
            "  cpufreq: governor {}; policies {}{}",
            self.governor.name(),
            self.freq_domains
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
            self.note("cpufreq.governor")
        );

        show_domains(&mut o, self, &sd);

        // Idle states.
        let _ = writeln!(o, "\nIdle states (exit latency / target residency, µs)");
        for (i, k) in self.classes.iter().enumerate() {
            let _ = writeln!(o, "  class {} (CPUs {}):", k.name, k.cpus);
            if k.idle_states.is_empty() {
                let _ = writeln!(o, "    (none)");
            }
            for (j, s) in k.idle_states.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "    state{j} {:<28} {} / {}{}{}{}",
                    s.name,
                    us(s.exit_latency_ns),
                    us(s.target_residency_ns),
                    if s.entry_latency_ns.0 > 0 {
                        format!(" (entry {})", us(s.entry_latency_ns))
                    } else {
                        String::new()
                    },
                    if s.polling { " polling" } else { "" },
                    self.note(&format!("cpu_class[{i}].idle_states[{j}]"))
                );
            }
        }
        for (i, s) in self.cluster_idle_states.iter().enumerate() {
            let _ = writeln!(
                o,
                "  cluster state {} (all of CPUs {} idle): entry {} / exit {} / residency {}{}",
                s.name,
                s.cpus,
                us(s.entry_latency_ns),
                us(s.exit_latency_ns),
                us(s.target_residency_ns),
                self.note(&format!("cluster_idle_state[{i}].exit_latency_us"))
            );
        }

        // Costs.
        let _ = writeln!(
            o,
            "\nCosts (µs of CPU time on each CPU class; reference core capacity {}, jitter σ {})",
            self.reference_capacity,
            format_decimal(u64::from(self.costs.jitter_sigma_ppm), 6)
        );
        let mut header = format!("  {:<26}", "parameter");
        for k in &self.classes {
            let _ = write!(header, " {:>9}", k.name);
        }
        let _ = writeln!(o, "{header}  provenance");
        for f in COST_FIELDS {
            let mut line = format!("  {:<26}", f.name);
            for k in &self.classes {
                let v = match k.costs.get(f.name).flatten() {
                    Some(v) => us(v),
                    None => "—".to_string(),
                };
                let mark = if k.cost_overrides.contains(&f.name) {
                    "*"
                } else {
                    " "
                };
                let _ = write!(line, " {v:>8}{mark}");
            }
            let _ = writeln!(o, "{line}{}", self.note(&format!("costs.{}", f.name)));
        }
        if self.classes.iter().any(|k| !k.cost_overrides.is_empty()) {
            let _ = writeln!(
                o,
                "  * = the class's own column ([cpu_class.costs]); other values are the [costs] column \
                 × reference capacity / capacity × f_max / f_cur"
            );
            for (i, k) in self.classes.iter().enumerate() {
                // "file:line" of each override; print the file and the line range.
                let ats: Vec<(String, usize)> = k
                    .cost_overrides
                    .iter()
                    .filter_map(|f| self.provenance.get(&format!("cpu_class[{i}].costs.{f}")))
                    .filter_map(|p| {
                        let (file, line) = p.at.rsplit_once(':')?;
                        Some((file.to_string(), line.parse().ok()?))
                    })
                    .collect();
                if let Some((file, _)) = ats.first() {
                    let lo = ats.iter().map(|a| a.1).min().unwrap_or(0);
                    let hi = ats.iter().map(|a| a.1).max().unwrap_or(0);
                    let _ = writeln!(
                        o,
                        "    {}: own column for {} values at {file}:{lo}-{hi}",
                        k.name,
                        k.cost_overrides.len()
                    );
                }
            }
        }
        let s = &self.storage;
        let _ = writeln!(
            o,
            "\nStorage (Table 1.11-C): {} — 4 KiB read {} µs, write {} µs, flush {}{} µs{}",
            s.device,
            us(s.read_4k),
            us(s.write_4k),
            us(s.flush),
            if s.flush_max != s.flush {
                format!("–{}", us(s.flush_max))
            } else {
                String::new()
            },
            self.note("storage.device")
        );

        // Per-program costs.
        let _ = writeln!(
            o,
            "\nProgram costs ([programs.NAME], µs of user-space work on the reference core, or a \
             switch; — = the model's default)"
        );
        for f in PROGRAM_COST_FIELDS {
            let key = format!("{}.{}", f.program, f.name);
            let v = match (self.programs.get(f.program, f.name), f.kind) {
                (Some(v), ProgramCostKind::Duration) => us(v),
                (Some(v), ProgramCostKind::Switch) => {
                    (if v.0 != 0 { "on" } else { "off" }).to_string()
                }
                (None, _) => "—".to_string(),
            };
            let note = match self.note(&format!("programs.{key}")) {
                n if n.is_empty() => format!("  # {}", f.meaning),
                n => n,
            };
            let _ = writeln!(o, "  {key:<26} {v:>9}{note}");
        }
        o
    }
}

/// One line describing a CPU's chain, used to group CPUs with identical domains.
fn signature(c: &CpuDomains) -> String {
    let mut s = String::new();
    for d in &c.domains {
        let gw: Vec<String> = d
            .groups
            .iter()
            .map(|g| g.group_weight.to_string())
            .collect();
        let _ = write!(
            s,
            "{}:{}:{}:{}:{}:{}:{}:{}:{};",
            d.name,
            d.span_weight,
            d.flags,
            d.imbalance_pct,
            d.cache_nice_tries,
            d.min_interval,
            d.imb_numa_nr,
            d.numa_distance.unwrap_or(0),
            gw.join(",")
        );
    }
    let _ = write!(
        s,
        "llc{:?}/{}/cls{:?}",
        c.sd_llc,
        c.sd_llc_size,
        c.lowest_flag_domain(SD_CLUSTER)
    );
    s
}

fn show_domains(o: &mut String, p: &Platform, sd: &SchedDomains) {
    let _ = writeln!(
        o,
        "\nSched domains (kernel/sched/topology.c rules, docs/model.md S§4.1.2)"
    );
    let _ = writeln!(
        o,
        "  levels tried: {}; cpu_map {}; root domains {}",
        sd.levels.join(" "),
        sd.cpu_map,
        sd.root_domains
            .iter()
            .map(|m| format!("{{{m}}}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // Group CPUs with identical chains.
    let mut groups: BTreeMap<String, CpuMask> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in &sd.per_cpu {
        let sig = signature(c);
        if !groups.contains_key(&sig) {
            order.push(sig.clone());
        }
        groups.entry(sig).or_default().set(c.cpu);
    }
    for sig in &order {
        let cpus = &groups[sig];
        let first = cpus.first().expect("non-empty");
        let c = &sd.per_cpu[first];
        if c.domains.is_empty() {
            let why = if p.domain_isolated().contains(first) {
                "isolcpus=domain"
            } else {
                "all levels degenerate"
            };
            let _ = writeln!(o, "  CPUs {cpus}: no sched domains ({why})");
            continue;
        }
        let _ = writeln!(o, "  CPUs {cpus}:");
        for d in &c.domains {
            let _ = writeln!(
                o,
                "    {:<4} span {:<4} {}",
                d.name,
                d.span_weight,
                sd_flags_string(d.flags)
            );
            let mut extra = String::new();
            if let Some(dist) = d.numa_distance {
                let _ = write!(extra, "  distance {dist}");
            }
            let _ = writeln!(
                o,
                "         imbalance_pct {}  cache_nice_tries {}  busy_factor {}  interval {}..{} ms  imb_numa_nr {}{}",
                d.imbalance_pct,
                d.cache_nice_tries,
                d.busy_factor,
                d.min_interval,
                d.max_interval,
                d.imb_numa_nr,
                extra
            );
            // Groups: count × weight, with capacities.
            let mut desc: Vec<String> = Vec::new();
            let mut run: Option<(u32, u64, usize)> = None;
            for g in &d.groups {
                match &mut run {
                    Some((w, cap, n)) if *w == g.group_weight && *cap == g.capacity => *n += 1,
                    _ => {
                        if let Some((w, cap, n)) = run.take() {
                            desc.push(format!("{n}×{{{w} CPU, cap {cap}}}"));
                        }
                        run = Some((g.group_weight, g.capacity, 1));
                    }
                }
            }
            if let Some((w, cap, n)) = run {
                desc.push(format!("{n}×{{{w} CPU, cap {cap}}}"));
            }
            let _ = writeln!(o, "         groups {}", desc.join(" "));
        }
        let name = |i: Option<usize>| i.map_or("none", |i| c.domains[i].name);
        let _ = writeln!(
            o,
            "    sd_llc {} (size {}), sd_numa {}, sd_asym_cpucapacity {}, sd_share_id {}",
            name(c.sd_llc),
            c.sd_llc_size,
            name(c.sd_numa),
            name(c.sd_asym_cpucapacity),
            if c.lowest_flag_domain(SD_CLUSTER).is_some() {
                "= first CPU of the CLS span"
            } else {
                "= sd_llc_id"
            }
        );
    }
    // Spans per level name.
    let mut names: Vec<&str> = Vec::new();
    for c in &sd.per_cpu {
        for d in &c.domains {
            if !names.contains(&d.name) {
                names.push(d.name);
            }
        }
    }
    for name in names {
        let mut spans: Vec<CpuMask> = Vec::new();
        for c in &sd.per_cpu {
            for d in c.domains.iter().filter(|d| d.name == name) {
                if !spans.contains(&d.span) {
                    spans.push(d.span.clone());
                }
            }
        }
        let shown: Vec<String> = if spans.len() > 8 {
            let mut v: Vec<String> = spans[..3].iter().map(|m| m.to_string()).collect();
            v.push("…".into());
            v.push(spans[spans.len() - 1].to_string());
            v
        } else {
            spans.iter().map(|m| m.to_string()).collect()
        };
        let _ = writeln!(o, "  {name} spans ({}): {}", spans.len(), shown.join(" | "));
    }
    let ids: Vec<String> = {
        let mut v: Vec<usize> = sd.per_cpu.iter().map(|c| c.sd_llc_id).collect();
        v.sort_unstable();
        v.dedup();
        v.iter().map(|x| x.to_string()).collect()
    };
    let _ =
        writeln!(
        o,
        "  sd_llc_id values: {}; static keys: sched_asym_cpucapacity {}, sched_cluster_active {}",
        if ids.len() > 12 {
            format!("{} distinct", ids.len())
        } else {
            ids.join(",")
        },
        if sd.sched_asym_cpucapacity { "on" } else { "off" },
        if sd.sched_cluster_active { "on" } else { "off" }
    );
}
