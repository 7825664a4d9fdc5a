//! Scheduling domains and groups built from a platform's topology, following Linux
//! `kernel/sched/topology.c` (`build_sched_domains`, `sd_init`, `build_sched_groups`,
//! `build_overlap_sched_groups`, `cpu_attach_domain`, `update_top_cache_domain`) as
//! summarised in smp.md §4.1 and §2.4.3.
//!
//! The construction runs in the kernel's order, because the order is observable:
//!
//! ```text
//!  1. per CPU, per topology level (SMT, CLS, MC, PKG, NODE, NUMA…): sd_init()   raw chain
//!     stop at the first level whose span is the whole cpu_map
//!  2. groups of every raw domain (child-domain spans; single CPUs at the bottom)
//!  3. imb_numa_nr on the raw chain
//!  4. cpu_attach_domain(): drop degenerate levels, moving SD_PREFER_SIBLING down
//!  5. update_top_cache_domain(): sd_llc, sd_llc_size, sd_llc_id, sd_share_id, sd_numa, …
//! ```
//!
//! `isolcpus=domain` CPUs are left out of `cpu_map`: they get no domains and appear in no
//! other CPU's spans (their root domain is the kernel's `def_root_domain`).

use std::collections::BTreeMap;

use crate::cpumask::CpuMask;
use crate::platform::{LlcLevel, Platform};

// include/linux/sched/sd_flags.h, in declaration order (the bit numbers matter: the wake
// flags WF_EXEC/WF_FORK/WF_TTWU are 0x02/0x04/0x08 so that `wf & 0xF` selects the matching
// SD_BALANCE_* flag, smp.md §2.1).
pub const SD_BALANCE_NEWIDLE: u32 = 1 << 0;
pub const SD_BALANCE_EXEC: u32 = 1 << 1;
pub const SD_BALANCE_FORK: u32 = 1 << 2;
pub const SD_BALANCE_WAKE: u32 = 1 << 3;
pub const SD_WAKE_AFFINE: u32 = 1 << 4;
pub const SD_ASYM_CPUCAPACITY: u32 = 1 << 5;
pub const SD_ASYM_CPUCAPACITY_FULL: u32 = 1 << 6;
pub const SD_SHARE_CPUCAPACITY: u32 = 1 << 7;
pub const SD_CLUSTER: u32 = 1 << 8;
pub const SD_SHARE_LLC: u32 = 1 << 9;
pub const SD_SERIALIZE: u32 = 1 << 10;
pub const SD_ASYM_PACKING: u32 = 1 << 11;
pub const SD_PREFER_SIBLING: u32 = 1 << 12;
pub const SD_OVERLAP: u32 = 1 << 13;
pub const SD_NUMA: u32 = 1 << 14;

/// Names of the flags, bit order.
pub const SD_FLAG_NAMES: [(u32, &str); 15] = [
    (SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
    (SD_BALANCE_FORK, "SD_BALANCE_FORK"),
    (SD_BALANCE_WAKE, "SD_BALANCE_WAKE"),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
    (SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
    (SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"),
    (SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
    (SD_CLUSTER, "SD_CLUSTER"),
    (SD_SHARE_LLC, "SD_SHARE_LLC"),
    (SD_SERIALIZE, "SD_SERIALIZE"),
    (SD_ASYM_PACKING, "SD_ASYM_PACKING"),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
    (SD_OVERLAP, "SD_OVERLAP"),
    (SD_NUMA, "SD_NUMA"),
];

/// Flags with `SDF_SHARED_CHILD`: if a domain has one, all its children have it too, so
/// `highest_flag_domain()` may stop at the first domain without it.
const SDF_SHARED_CHILD: u32 = SD_BALANCE_NEWIDLE
    | SD_BALANCE_EXEC
    | SD_BALANCE_FORK
    | SD_BALANCE_WAKE
    | SD_WAKE_AFFINE
    | SD_SHARE_CPUCAPACITY
    | SD_SHARE_LLC;

/// Flags with `SDF_NEEDS_GROUPS`: meaningless in a domain with a single group
/// (`SD_DEGENERATE_GROUPS_MASK`). Everything except `SD_WAKE_AFFINE`.
const SD_DEGENERATE_GROUPS_MASK: u32 = !SD_WAKE_AFFINE & 0x7fff;

/// `node_reclaim_distance` (RECLAIM_DISTANCE): NUMA levels farther than this lose
/// `SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE`.
pub const NODE_RECLAIM_DISTANCE: u32 = 30;

/// The flags as the kernel's debugfs prints them (`SD_BALANCE_NEWIDLE SD_BALANCE_EXEC …`).
pub fn sd_flags_string(flags: u32) -> String {
    SD_FLAG_NAMES
        .iter()
        .filter(|(f, _)| flags & f != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A `sched_group`: one child-domain span of a domain (one CPU at the bottom level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    pub span: CpuMask,
    /// `group_balance_mask()`: CPUs that can arrive at this group; its first CPU is the
    /// group's balance CPU (`group_balance_cpu`). Equal to `span` except in NUMA overlap
    /// groups.
    pub balance_mask: CpuMask,
    /// `sg->group_weight`.
    pub group_weight: u32,
    /// `sg->cores`: number of SMT cores in the group.
    pub cores: u32,
    /// `sg->flags`: the flags of the child domain the group stands for (0 at the bottom).
    pub flags: u32,
    /// Index into [`SchedDomains::sgc`]: the `sched_group_capacity` shared by identical
    /// groups (the kernel shares one object between all CPUs that see this group).
    pub sgc: usize,
    /// Sum of `capacity_orig` over the group (initial `sgc->capacity`; the kernel refreshes
    /// it with `capacity_of()` as RT/IRQ pressure changes).
    pub capacity: u64,
    pub min_capacity: u32,
    pub max_capacity: u32,
}

impl SchedGroup {
    /// `group_balance_cpu(sg)`.
    pub fn balance_cpu(&self) -> usize {
        self.balance_mask
            .first()
            .expect("balance mask is never empty")
    }
}

/// One `sched_domain` of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// "SMT", "CLS", "MC", "PKG", "NODE" or "NUMA".
    pub name: &'static str,
    /// `sd->level`: position in the topology list before degenerate levels were removed
    /// (what `relax_domain_level` compares with).
    pub level: u32,
    pub span: CpuMask,
    pub span_weight: u32,
    pub flags: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub busy_factor: u32,
    /// Milliseconds. `sd_init()` sets `min_interval = sd_weight`, `max_interval =
    /// 2·sd_weight` and `balance_interval = sd_weight` where `sd_weight` is the weight of the
    /// topology mask *before* it is intersected with `cpu_map` — so with `isolcpus=domain` it
    /// can exceed `span_weight` (rpi4-rt: MC span {0,1,2}, intervals 4/8 ms).
    pub min_interval: u64,
    pub max_interval: u64,
    pub balance_interval: u64,
    /// Allowed NUMA imbalance (smp.md §2.4.3); 0 below the first level above the LLC.
    pub imb_numa_nr: u32,
    /// For NODE/NUMA levels, the node distance the level was built for.
    pub numa_distance: Option<u32>,
    /// Index into [`SchedDomains::shared`] (`sd->shared`, present on `SD_SHARE_LLC` levels).
    pub shared: Option<usize>,
    /// `sd->groups`, starting with the group that contains this CPU (the local group).
    pub groups: Vec<SchedGroup>,
}

impl SchedDomain {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// `struct sched_domain_shared` of an LLC domain: the kernel keeps `nr_busy_cpus`,
/// `has_idle_cores` and `nr_idle_scan` here; we give the identity and the initial values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomainShared {
    /// First CPU of the span (the per-CPU slot the kernel takes it from).
    pub id: usize,
    pub span: CpuMask,
    /// Initial `nr_busy_cpus` (= `sd_weight`).
    pub nr_busy_cpus: u32,
}

/// `struct sched_group_capacity` identity: groups with the same `sgc` index share capacity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroupCapacity {
    /// `sgc->id` (the CPU whose per-CPU slot holds it).
    pub id: usize,
    /// Topology level index it belongs to.
    pub level: usize,
    pub span: CpuMask,
    pub capacity: u64,
    pub min_capacity: u32,
    pub max_capacity: u32,
}

/// The domains of one CPU and the per-CPU shortcuts of `update_top_cache_domain()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuDomains {
    pub cpu: usize,
    /// Bottom-up: `domains[0]` is `rq->sd`, `domains[i + 1]` its parent. Empty for isolated
    /// CPUs and when every level degenerates (one CPU).
    pub domains: Vec<SchedDomain>,
    /// Index of the highest `SD_SHARE_LLC` domain.
    pub sd_llc: Option<usize>,
    pub sd_llc_size: u32,
    /// First CPU of the `sd_llc` span (the CPU itself when there is none).
    pub sd_llc_id: usize,
    /// First CPU of the lowest `SD_CLUSTER` domain, else `sd_llc_id`.
    pub sd_share_id: usize,
    /// `sd_llc_shared`: index into [`SchedDomains::shared`].
    pub sd_llc_shared: Option<usize>,
    /// Lowest `SD_NUMA` domain.
    pub sd_numa: Option<usize>,
    /// Highest `SD_ASYM_PACKING` domain.
    pub sd_asym_packing: Option<usize>,
    /// Lowest `SD_ASYM_CPUCAPACITY_FULL` domain.
    pub sd_asym_cpucapacity: Option<usize>,
}

impl CpuDomains {
    pub fn sd_llc(&self) -> Option<&SchedDomain> {
        self.sd_llc.map(|i| &self.domains[i])
    }
    /// `lowest_flag_domain(cpu, flag)`.
    pub fn lowest_flag_domain(&self, flag: u32) -> Option<usize> {
        self.domains.iter().position(|d| d.flags & flag != 0)
    }
    /// `highest_flag_domain(cpu, flag)`, stopping early for `SDF_SHARED_CHILD` flags.
    pub fn highest_flag_domain(&self, flag: u32) -> Option<usize> {
        let mut found = None;
        for (i, d) in self.domains.iter().enumerate() {
            if d.flags & flag != 0 {
                found = Some(i);
                continue;
            }
            if flag & SDF_SHARED_CHILD != 0 {
                break;
            }
        }
        found
    }
}

/// All CPUs' domains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomains {
    pub nr_cpus: usize,
    /// CPUs that have domains (`housekeeping_cpumask(HK_TYPE_DOMAIN)`).
    pub cpu_map: CpuMask,
    pub per_cpu: Vec<CpuDomains>,
    pub shared: Vec<SchedDomainShared>,
    pub sgc: Vec<SchedGroupCapacity>,
    /// Names of the topology levels tried, bottom-up (before degeneration).
    pub levels: Vec<&'static str>,
    /// `sched_domains_numa_distance[]`: distinct node distances, ascending.
    pub numa_distances: Vec<u32>,
    /// Static key `sched_asym_cpucapacity`.
    pub sched_asym_cpucapacity: bool,
    /// Static key `sched_cluster_active` (some CPU has an `SD_CLUSTER` domain).
    pub sched_cluster_active: bool,
    /// Root domains: the balanced CPUs, then (if any) the isolated CPUs, which share the
    /// kernel's `def_root_domain`.
    pub root_domains: Vec<CpuMask>,
}

/// One entry of the topology list (`struct sched_domain_topology_level`).
struct Tl {
    name: &'static str,
    /// Topology flags (`tl->sd_flags()`).
    flags: u32,
    /// `tl->numa_level` for NODE/NUMA levels.
    numa_level: Option<usize>,
    /// `SDTL_OVERLAP` (NUMA levels above NODE).
    overlap: bool,
    /// `tl->mask(cpu)` for every CPU.
    masks: Vec<CpuMask>,
}

/// A domain during construction (`struct sched_domain` before attach).
#[derive(Clone)]
struct RawSd {
    tl: usize,
    level: u32,
    span: CpuMask,
    sd_weight: u32,
    flags: u32,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    imb_numa_nr: u32,
    numa_distance: Option<u32>,
    child: Option<usize>,
    parent: Option<usize>,
    /// Indices into the group arena, local group first.
    groups: Vec<usize>,
}

/// A `sched_group` object; non-overlap groups are shared between CPUs (as in the kernel).
struct GroupObj {
    span: CpuMask,
    balance_mask: CpuMask,
    flags: u32,
    sgc: usize,
}

fn topology_levels(p: &Platform) -> (Vec<Tl>, Vec<u32>) {
    let n = p.nr_cpus();
    let smt: Vec<CpuMask> = (0..n).map(|c| p.cpu_smt_mask(c)).collect();
    let llc: Vec<CpuMask> = (0..n).map(|c| p.cpu_llc_mask(c)).collect();
    let cluster: Vec<CpuMask> = (0..n).map(|c| p.cpu_cluster_mask(c)).collect();
    let node: Vec<CpuMask> = (0..n)
        .map(|c| p.cpumask_of_node(p.cpu_to_node(c)))
        .collect();
    let mut tls = Vec::new();
    // SMT: cpu_smt_mask, cpu_smt_flags().
    tls.push(Tl {
        name: "SMT",
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        numa_level: None,
        overlap: false,
        masks: smt.clone(),
    });
    // CLS: cpu_clustergroup_mask() never spans the LLC or more (arch_topology.c: if the
    // coregroup is a subset of the cluster, return the SMT mask, which then degenerates),
    // unless the MC level is skipped and the cluster is the LLC (LlcLevel::Cls).
    let cls: Vec<CpuMask> = (0..n)
        .map(|c| {
            if p.llc_level == LlcLevel::Cls || !llc[c].is_subset_of(&cluster[c]) {
                cluster[c].clone()
            } else {
                smt[c].clone()
            }
        })
        .collect();
    tls.push(Tl {
        name: "CLS",
        flags: SD_CLUSTER | SD_SHARE_LLC,
        numa_level: None,
        overlap: false,
        masks: cls,
    });
    // MC: cpu_coregroup_mask (the LLC), cpu_core_flags().
    if p.llc_level == LlcLevel::Mc {
        tls.push(Tl {
            name: "MC",
            flags: SD_SHARE_LLC,
            numa_level: None,
            overlap: false,
            masks: llc,
        });
    }
    // PKG: cpu_cpu_mask() = cpumask_of_node(cpu_to_node(cpu)); no topology flags.
    tls.push(Tl {
        name: "PKG",
        flags: 0,
        numa_level: None,
        overlap: false,
        masks: node.clone(),
    });
    // sched_init_numa(): one level per distinct distance; level 0 (identity) is NODE.
    let nn = p.nr_nodes();
    let mut distances: Vec<u32> = (0..nn)
        .flat_map(|a| (0..nn).map(move |b| (a, b)))
        .map(|(a, b)| p.numa_distance[a][b])
        .collect();
    distances.sort_unstable();
    distances.dedup();
    for (j, &d) in distances.iter().enumerate() {
        let masks = (0..n)
            .map(|c| {
                let home = p.cpu_to_node(c);
                (0..nn as u32)
                    .filter(|&k| p.node_distance(home, k) <= d)
                    .fold(CpuMask::new(), |m, k| m.or(&p.cpumask_of_node(k)))
            })
            .collect();
        tls.push(Tl {
            name: if j == 0 { "NODE" } else { "NUMA" },
            flags: if j == 0 { 0 } else { SD_NUMA },
            numa_level: Some(j),
            overlap: j > 0,
            masks,
        });
    }
    (tls, distances)
}

/// `asym_cpu_capacity_classify()`: asymmetry flags of a span given the distinct capacities
/// of the balanced CPUs.
fn asym_cpu_capacity_classify(p: &Platform, span: &CpuMask, cpu_map: &CpuMask) -> u32 {
    let mut caps: Vec<u32> = cpu_map.iter().map(|c| p.capacity_orig(c)).collect();
    caps.sort_unstable();
    caps.dedup();
    if caps.len() < 2 {
        return 0; // symmetric system: asym_cap_list is emptied
    }
    let count = caps
        .iter()
        .filter(|&&cap| span.iter().any(|c| p.capacity_orig(c) == cap))
        .count();
    let miss = caps.len() - count;
    if count < 2 {
        0
    } else if miss > 0 {
        SD_ASYM_CPUCAPACITY
    } else {
        SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL
    }
}

fn sd_degenerate(sd: &RawSd) -> bool {
    if sd.span.weight() == 1 {
        return true;
    }
    if sd.flags & SD_DEGENERATE_GROUPS_MASK != 0 && sd.groups.len() > 1 {
        return false;
    }
    sd.flags & SD_WAKE_AFFINE == 0
}

fn sd_parent_degenerate(sd: &RawSd, parent: &RawSd) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if sd.span != parent.span {
        return false;
    }
    let mut pflags = parent.flags;
    if parent.groups.len() == 1 {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !sd.flags & pflags == 0
}

impl SchedDomains {
    /// `build_sched_domains(housekeeping_cpumask(HK_TYPE_DOMAIN))` for `p`.
    pub fn build(p: &Platform) -> SchedDomains {
        let n = p.nr_cpus();
        let cpu_map = p.housekeeping_domain();
        let (tls, numa_distances) = topology_levels(p);
        let relax = p.relax_domain_level;

        // 1. Raw chains (build_sched_domain / sd_init).
        let mut raw: Vec<Vec<Option<RawSd>>> = vec![vec![None; tls.len()]; n];
        let mut has_asym = false;
        for cpu in &cpu_map {
            let mut child: Option<usize> = None;
            for (ti, tl) in tls.iter().enumerate() {
                let mask = &tl.masks[cpu];
                let sd_weight = mask.weight() as u32;
                let mut span = cpu_map.and(mask);
                if let Some(c) = child {
                    let cs = &raw[cpu][c].as_ref().expect("child built").span;
                    if !cs.is_subset_of(&span) {
                        // "BUG: arch topology borken": the kernel widens the span.
                        span = span.or(cs);
                    }
                }
                let mut flags = SD_BALANCE_NEWIDLE
                    | SD_BALANCE_EXEC
                    | SD_BALANCE_FORK
                    | SD_WAKE_AFFINE
                    | SD_PREFER_SIBLING
                    | tl.flags;
                flags |= asym_cpu_capacity_classify(p, &span, &cpu_map);
                if flags & SD_ASYM_CPUCAPACITY != 0 {
                    has_asym = true;
                    // Don't attempt to spread across CPUs of different capacities.
                    if let Some(c) = child {
                        raw[cpu][c].as_mut().expect("child").flags &= !SD_PREFER_SIBLING;
                    }
                }
                let (mut imbalance_pct, mut cache_nice_tries) = (117, 0);
                let mut numa_distance = None;
                if flags & SD_SHARE_CPUCAPACITY != 0 {
                    imbalance_pct = 110;
                } else if flags & SD_SHARE_LLC != 0 {
                    imbalance_pct = 117;
                    cache_nice_tries = 1;
                } else if flags & SD_NUMA != 0 {
                    cache_nice_tries = 2;
                    flags &= !SD_PREFER_SIBLING;
                    flags |= SD_SERIALIZE;
                    let d = numa_distances[tl.numa_level.expect("numa level")];
                    if d > NODE_RECLAIM_DISTANCE {
                        flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
                    }
                } else {
                    cache_nice_tries = 1;
                }
                if let Some(j) = tl.numa_level {
                    numa_distance = Some(numa_distances[j]);
                }
                let level = match child {
                    Some(c) => raw[cpu][c].as_ref().expect("child").level + 1,
                    None => 0,
                };
                // set_domain_attribute(): relax_domain_level.
                if let Some(r) = relax {
                    if level >= r {
                        flags &= !(SD_BALANCE_WAKE | SD_BALANCE_NEWIDLE);
                    }
                }
                if tl.overlap {
                    flags |= SD_OVERLAP;
                }
                if let Some(c) = child {
                    raw[cpu][c].as_mut().expect("child").parent = Some(ti);
                }
                let whole = span == cpu_map;
                raw[cpu][ti] = Some(RawSd {
                    tl: ti,
                    level,
                    span,
                    sd_weight,
                    flags,
                    imbalance_pct,
                    cache_nice_tries,
                    imb_numa_nr: 0,
                    numa_distance,
                    child,
                    parent: None,
                    groups: Vec::new(),
                });
                child = Some(ti);
                if whole {
                    break;
                }
            }
        }

        // 2. Groups (build_sched_groups / build_overlap_sched_groups).
        let mut groups: Vec<GroupObj> = Vec::new();
        let mut shared_groups: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut sgcs: Vec<SchedGroupCapacity> = Vec::new();
        let mut sgc_index: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut sgc_of = |level: usize, id: usize, span: &CpuMask| -> usize {
            *sgc_index.entry((level, id)).or_insert_with(|| {
                let caps: Vec<u32> = span.iter().map(|c| p.capacity_orig(c)).collect();
                sgcs.push(SchedGroupCapacity {
                    id,
                    level,
                    span: span.clone(),
                    capacity: caps.iter().map(|&c| u64::from(c)).sum(),
                    min_capacity: caps.iter().copied().min().unwrap_or(0),
                    max_capacity: caps.iter().copied().max().unwrap_or(0),
                });
                sgcs.len() - 1
            })
        };
        for cpu in &cpu_map {
            for ti in 0..tls.len() {
                let Some(sd) = raw[cpu][ti].clone() else {
                    continue;
                };
                let mut covered = CpuMask::new();
                let mut list = Vec::new();
                for i in sd.span.iter_wrap(cpu) {
                    if covered.contains(i) {
                        continue;
                    }
                    if !tls[ti].overlap {
                        // get_group(i): the group of i's child domain, one object per
                        // (level, first CPU of the child span).
                        let sib = raw[i][ti].as_ref().expect("same level exists");
                        let (gspan, gflags) = match sib.child {
                            Some(c) => {
                                let ch = raw[i][c].as_ref().expect("child");
                                (ch.span.clone(), ch.flags)
                            }
                            None => (CpuMask::single(i), 0),
                        };
                        let first = gspan.first().expect("non-empty");
                        let gi = *shared_groups.entry((ti, first)).or_insert_with(|| {
                            let sgc = sgc_of(ti, first, &gspan);
                            groups.push(GroupObj {
                                span: gspan.clone(),
                                balance_mask: gspan.clone(),
                                flags: gflags,
                                sgc,
                            });
                            groups.len() - 1
                        });
                        covered = covered.or(&groups[gi].span);
                        list.push(gi);
                    } else {
                        let Some(mut sib) = raw[i][ti].as_ref() else {
                            continue;
                        };
                        if !sib.span.contains(i) {
                            continue;
                        }
                        if let Some(c) = sib.child {
                            if !raw[i][c]
                                .as_ref()
                                .expect("child")
                                .span
                                .is_subset_of(&sd.span)
                            {
                                // find_descended_sibling()
                                while let Some(c) = sib.child {
                                    let ch = raw[i][c].as_ref().expect("child");
                                    if ch.span.is_subset_of(&sd.span) {
                                        break;
                                    }
                                    sib = ch;
                                }
                                while let Some(c) = sib.child {
                                    let ch = raw[i][c].as_ref().expect("child");
                                    if ch.span != sib.span {
                                        break;
                                    }
                                    sib = ch;
                                }
                            }
                        }
                        let (gspan, gflags) = match sib.child {
                            Some(c) => {
                                let ch = raw[i][c].as_ref().expect("child");
                                (ch.span.clone(), ch.flags)
                            }
                            None => (sib.span.clone(), 0),
                        };
                        // build_balance_mask(sibling, sg)
                        let stl = sib.tl;
                        let mask: CpuMask = gspan
                            .iter()
                            .filter(|&j| {
                                raw[j][stl]
                                    .as_ref()
                                    .and_then(|s| s.child)
                                    .map(|c| raw[j][c].as_ref().expect("child").span == gspan)
                                    .unwrap_or(false)
                            })
                            .collect();
                        let mask = if mask.is_empty() { gspan.clone() } else { mask };
                        let first = mask.first().expect("non-empty");
                        let sgc = sgc_of(stl, first, &gspan);
                        groups.push(GroupObj {
                            span: gspan.clone(),
                            balance_mask: mask,
                            flags: gflags,
                            sgc,
                        });
                        covered = covered.or(&gspan);
                        list.push(groups.len() - 1);
                    }
                }
                raw[cpu][ti].as_mut().expect("exists").groups = list;
            }
        }

        // 3. imb_numa_nr: an allowed NUMA imbalance such that LLCs do not get imbalanced.
        for cpu in &cpu_map {
            let (mut imb, mut imb_span) = (0u32, 1u32);
            let mut cur = Some(0usize);
            while let Some(ti) = cur {
                let sd = raw[cpu][ti].clone().expect("chain");
                let child = sd.child.map(|c| raw[cpu][c].clone().expect("child"));
                let w = sd.span.weight() as u32;
                let value;
                match &child {
                    Some(ch) if sd.flags & SD_SHARE_LLC == 0 && ch.flags & SD_SHARE_LLC != 0 => {
                        let nr_llcs = w / ch.span.weight() as u32;
                        imb = if nr_llcs == 1 { w >> 3 } else { nr_llcs }.max(1);
                        value = imb;
                        // Span based on the first NUMA domain above.
                        let mut top = sd.parent;
                        while let Some(t) = top {
                            let tsd = raw[cpu][t].as_ref().expect("parent");
                            if tsd.flags & SD_NUMA != 0 {
                                break;
                            }
                            top = tsd.parent;
                        }
                        imb_span = match top {
                            Some(t) => raw[cpu][t].as_ref().expect("p").span.weight() as u32,
                            None => w,
                        };
                    }
                    _ => {
                        let factor = (w / imb_span).max(1);
                        value = imb * factor;
                    }
                }
                raw[cpu][ti].as_mut().expect("chain").imb_numa_nr = value;
                cur = sd.parent;
            }
        }

        // 4. cpu_attach_domain(): remove degenerate domains, per CPU in order.
        let mut base: Vec<Option<usize>> = vec![None; n];
        for cpu in &cpu_map {
            let chain = &mut raw[cpu];
            let mut tmp = 0usize;
            while let Some(parent) = chain[tmp].as_ref().expect("tmp").parent {
                let (t, pa) = (
                    chain[tmp].as_ref().expect("tmp"),
                    chain[parent].as_ref().expect("parent"),
                );
                if sd_parent_degenerate(t, pa) {
                    let grand = pa.parent;
                    let pflags = pa.flags;
                    let tflags = t.flags;
                    chain[tmp].as_mut().expect("tmp").parent = grand;
                    if let Some(g) = grand {
                        let gsd = chain[g].as_mut().expect("grand");
                        gsd.child = Some(tmp);
                        let local = gsd.groups[0];
                        groups[local].flags = tflags;
                    }
                    // Transfer SD_PREFER_SIBLING down: the spans match.
                    if pflags & SD_PREFER_SIBLING != 0 {
                        chain[tmp].as_mut().expect("tmp").flags |= SD_PREFER_SIBLING;
                    }
                    chain[parent] = None;
                } else {
                    tmp = parent;
                }
            }
            let mut b = Some(0usize);
            if sd_degenerate(chain[0].as_ref().expect("base")) {
                let up = chain[0].as_ref().expect("base").parent;
                chain[0] = None;
                if let Some(u) = up {
                    let usd = chain[u].as_mut().expect("up");
                    // sched groups hold the child's flags; the child is gone. (The kernel's
                    // loop clears only the first group: `sg` is never advanced.)
                    let local = usd.groups[0];
                    groups[local].flags = 0;
                    usd.child = None;
                }
                b = up;
            }
            base[cpu] = b;
        }

        // 5. Materialise the surviving chains and the per-CPU shortcuts.
        let mut shared: Vec<SchedDomainShared> = Vec::new();
        let mut shared_index: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut per_cpu = Vec::with_capacity(n);
        for cpu in 0..n {
            let mut domains = Vec::new();
            let mut cur = base[cpu];
            while let Some(ti) = cur {
                let sd = raw[cpu][ti].as_ref().expect("surviving");
                let shared_id = (sd.flags & SD_SHARE_LLC != 0).then(|| {
                    let id = sd.span.first().expect("non-empty");
                    *shared_index.entry((ti, id)).or_insert_with(|| {
                        shared.push(SchedDomainShared {
                            id,
                            span: sd.span.clone(),
                            nr_busy_cpus: sd.sd_weight,
                        });
                        shared.len() - 1
                    })
                });
                let gs = sd
                    .groups
                    .iter()
                    .map(|&g| {
                        let o = &groups[g];
                        let c = &sgcs[o.sgc];
                        let cores = {
                            let mut m = o.span.clone();
                            let mut k = 0;
                            while let Some(c) = m.first() {
                                m = m.andnot(&p.cpu_smt_mask(c));
                                k += 1;
                            }
                            k
                        };
                        SchedGroup {
                            span: o.span.clone(),
                            balance_mask: o.balance_mask.clone(),
                            group_weight: o.span.weight() as u32,
                            cores,
                            flags: o.flags,
                            sgc: o.sgc,
                            capacity: c.capacity,
                            min_capacity: c.min_capacity,
                            max_capacity: c.max_capacity,
                        }
                    })
                    .collect();
                domains.push(SchedDomain {
                    name: tls[ti].name,
                    level: sd.level,
                    span: sd.span.clone(),
                    span_weight: sd.span.weight() as u32,
                    flags: sd.flags,
                    imbalance_pct: sd.imbalance_pct,
                    cache_nice_tries: sd.cache_nice_tries,
                    busy_factor: 16,
                    min_interval: u64::from(sd.sd_weight),
                    max_interval: 2 * u64::from(sd.sd_weight),
                    balance_interval: u64::from(sd.sd_weight),
                    imb_numa_nr: sd.imb_numa_nr,
                    numa_distance: sd.numa_distance,
                    shared: shared_id,
                    groups: gs,
                });
                cur = sd.parent;
            }
            let mut cd = CpuDomains {
                cpu,
                domains,
                sd_llc: None,
                sd_llc_size: 1,
                sd_llc_id: cpu,
                sd_share_id: cpu,
                sd_llc_shared: None,
                sd_numa: None,
                sd_asym_packing: None,
                sd_asym_cpucapacity: None,
            };
            // update_top_cache_domain()
            cd.sd_llc = cd.highest_flag_domain(SD_SHARE_LLC);
            if let Some(i) = cd.sd_llc {
                let d = &cd.domains[i];
                cd.sd_llc_id = d.span.first().expect("non-empty");
                cd.sd_llc_size = d.span_weight;
                cd.sd_llc_shared = d.shared;
            }
            cd.sd_share_id = match cd.lowest_flag_domain(SD_CLUSTER) {
                Some(i) => cd.domains[i].span.first().expect("non-empty"),
                None => cd.sd_llc_id,
            };
            cd.sd_numa = cd.lowest_flag_domain(SD_NUMA);
            cd.sd_asym_packing = cd.highest_flag_domain(SD_ASYM_PACKING);
            cd.sd_asym_cpucapacity = cd.lowest_flag_domain(SD_ASYM_CPUCAPACITY_FULL);
            per_cpu.push(cd);
        }
        let sched_cluster_active = per_cpu
            .iter()
            .any(|c| c.lowest_flag_domain(SD_CLUSTER).is_some());
        let isolated = p.domain_isolated();
        let mut root_domains = vec![cpu_map.clone()];
        if !isolated.is_empty() {
            root_domains.push(isolated);
        }
        SchedDomains {
            nr_cpus: n,
            cpu_map,
            per_cpu,
            shared,
            sgc: sgcs,
            levels: tls.iter().map(|t| t.name).collect(),
            numa_distances,
            sched_asym_cpucapacity: has_asym,
            sched_cluster_active,
            root_domains,
        }
    }

    /// `rq->sd` and its parents for `cpu`, bottom-up.
    pub fn domains(&self, cpu: usize) -> &[SchedDomain] {
        &self.per_cpu[cpu].domains
    }

    pub fn cpu(&self, cpu: usize) -> &CpuDomains {
        &self.per_cpu[cpu]
    }

    /// `cpus_share_cache(a, b)`: same `sd_llc_id` (a CPU always shares with itself).
    pub fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        a == b || self.per_cpu[a].sd_llc_id == self.per_cpu[b].sd_llc_id
    }

    /// `cpus_share_resources(a, b)`: same `sd_share_id` (cluster, or LLC without clusters).
    pub fn cpus_share_resources(&self, a: usize, b: usize) -> bool {
        a == b || self.per_cpu[a].sd_share_id == self.per_cpu[b].sd_share_id
    }

    /// The root domain that contains `cpu`.
    pub fn root_domain_of(&self, cpu: usize) -> &CpuMask {
        self.root_domains
            .iter()
            .find(|r| r.contains(cpu))
            .expect("every CPU is in a root domain")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    fn m(list: &str) -> CpuMask {
        CpuMask::parse_cpulist(list).unwrap()
    }

    fn build(name: &str) -> (Platform, SchedDomains) {
        let p = Platform::resolve(name).unwrap();
        let sd = p.sched_domains();
        (p, sd)
    }

    /// A platform that extends the `smp` template (x86 costs, HZ 250) with `extra` TOML.
    fn custom(extra: &str) -> SchedDomains {
        let text = format!("extends = \"smp:4\"\nname = \"t\"\ndescription = \"t\"\n{extra}");
        Platform::from_toml_str(&text, "t.toml")
            .unwrap()
            .sched_domains()
    }

    fn names(sd: &SchedDomains, cpu: usize) -> Vec<&'static str> {
        sd.domains(cpu).iter().map(|d| d.name).collect()
    }

    const DEFAULT: u32 =
        SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;

    #[test]
    fn rpi5_single_mc_domain() {
        // smp.md §4.1.2: RPi5 -> MC{4}, sd_llc_size 4; §4.1.1: SMT, CLS, PKG degenerate.
        let (_, sd) = build("rpi5");
        for cpu in 0..4 {
            let c = sd.cpu(cpu);
            assert_eq!(names(&sd, cpu), vec!["MC"]);
            let mc = &c.domains[0];
            assert_eq!(mc.span, m("0-3"));
            assert_eq!(mc.span_weight, 4);
            // §4.1.1: default behaviour flags + the MC topology flag SD_SHARE_LLC.
            assert_eq!(mc.flags, DEFAULT | SD_SHARE_LLC);
            // §4.1.1 table: SD_SHARE_LLC -> imbalance_pct 117, cache_nice_tries 1.
            assert_eq!((mc.imbalance_pct, mc.cache_nice_tries), (117, 1));
            // §4.1.1: busy_factor 16, min = span_weight ms, max = 2·span_weight ms.
            assert_eq!(mc.busy_factor, 16);
            assert_eq!(
                (mc.min_interval, mc.max_interval, mc.balance_interval),
                (4, 8, 4)
            );
            // Bottom level: single-CPU groups, local first (for_each_cpu_wrap from cpu).
            let spans: Vec<CpuMask> = mc.groups.iter().map(|g| g.span.clone()).collect();
            let expect: Vec<CpuMask> = (0..4).map(|i| CpuMask::single((cpu + i) % 4)).collect();
            assert_eq!(spans, expect);
            assert!(mc.groups.iter().all(|g| g.capacity == 1024 && g.flags == 0));
            assert_eq!(c.sd_llc, Some(0));
            assert_eq!(c.sd_llc_size, 4);
            assert_eq!(c.sd_llc_id, 0);
            assert_eq!(c.sd_share_id, 0);
            assert_eq!(c.sd_numa, None);
            assert_eq!(c.sd_asym_cpucapacity, None);
            assert!(mc.shared.is_some());
        }
        assert!(sd.cpus_share_cache(0, 3));
        assert!(sd.cpus_share_resources(1, 2));
        assert!(!sd.sched_cluster_active); // §2.5: off on RPi5
        assert!(!sd.sched_asym_cpucapacity);
        assert_eq!(sd.shared.len(), 1);
        assert_eq!(sd.shared[0].nr_busy_cpus, 4);
    }

    #[test]
    fn xeon_smt_mc_numa() {
        // smp.md §4.1.2: SMT{2}, MC{32}, NUMA{64}; workloads.md §11.3 numbering: CPU n and
        // n + 32 are siblings, 0–15 + 32–47 socket 0.
        let (_, sd) = build("xeon-2s-64");
        for cpu in [0, 17, 40, 63] {
            assert_eq!(names(&sd, cpu), vec!["SMT", "MC", "NUMA"]);
        }
        let d = sd.domains(0);
        assert_eq!(d[0].span, m("0,32"));
        assert_eq!(d[1].span, m("0-15,32-47"));
        assert_eq!(d[2].span, m("0-63"));
        assert_eq!(sd.domains(17)[0].span, m("17,49"));
        assert_eq!(sd.domains(17)[1].span, m("16-31,48-63"));
        // §4.1.1: SMT flags SD_SHARE_CPUCAPACITY|SD_SHARE_LLC, imbalance_pct 110.
        assert_eq!(d[0].flags, DEFAULT | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC);
        assert_eq!((d[0].imbalance_pct, d[0].cache_nice_tries), (110, 0));
        assert_eq!((d[0].min_interval, d[0].max_interval), (2, 4));
        assert_eq!(d[1].flags, DEFAULT | SD_SHARE_LLC);
        assert_eq!((d[1].imbalance_pct, d[1].cache_nice_tries), (117, 1));
        assert_eq!((d[1].min_interval, d[1].max_interval), (32, 64));
        // §4.1.1: SD_NUMA -> cache_nice_tries 2, no SD_PREFER_SIBLING, SD_SERIALIZE; distance
        // 21 <= 30 keeps FORK/EXEC/WAKE_AFFINE (§4.1.2).
        let numa = &d[2];
        assert_eq!(
            numa.flags,
            (DEFAULT & !SD_PREFER_SIBLING) | SD_SERIALIZE | SD_NUMA | SD_OVERLAP
        );
        assert_eq!((numa.imbalance_pct, numa.cache_nice_tries), (117, 2));
        assert_eq!((numa.min_interval, numa.max_interval), (64, 128));
        assert_eq!(numa.numa_distance, Some(21));
        // §4.1.2 / §2.4.3: imb_numa_nr = 32/8 = 4 at the level above MC (single LLC per node).
        assert_eq!(numa.imb_numa_nr, 4);
        // Groups: SMT -> single CPUs; MC -> 16 SMT pairs; NUMA -> the two sockets, local first.
        assert_eq!(d[0].groups.len(), 2);
        assert_eq!(d[1].groups.len(), 16);
        assert_eq!(d[1].groups[0].span, m("0,32"));
        assert!(d[1]
            .groups
            .iter()
            .all(|g| g.group_weight == 2 && g.cores == 1));
        assert_eq!(d[1].groups[0].capacity, 2048);
        let g17: Vec<CpuMask> = sd.domains(17)[2]
            .groups
            .iter()
            .map(|g| g.span.clone())
            .collect();
        assert_eq!(g17, vec![m("16-31,48-63"), m("0-15,32-47")]);
        assert_eq!(sd.domains(17)[2].groups[0].cores, 16);
        // The MC groups carry the SMT child's flags (sg->flags = child->flags).
        assert!(d[1].groups[0].flags & SD_SHARE_CPUCAPACITY != 0);
        let c = sd.cpu(48);
        assert_eq!((c.sd_llc, c.sd_llc_size, c.sd_llc_id), (Some(1), 32, 16));
        assert_eq!(c.sd_numa, Some(2));
        assert!(sd.cpus_share_cache(0, 32));
        assert!(sd.cpus_share_cache(5, 40));
        assert!(!sd.cpus_share_cache(0, 16));
        assert!(!sd.cpus_share_cache(15, 48));
    }

    #[test]
    fn x86_2s_80_domains() {
        // workloads.md §11.6: SMT{2}, MC{40}, NUMA{80}; §2.4.3: imb_numa_nr = 40 >> 3 = 5.
        let (_, sd) = build("x86-2s-80");
        assert_eq!(names(&sd, 0), vec!["SMT", "MC", "NUMA"]);
        let d = sd.domains(0);
        assert_eq!(d[0].span, m("0,40"));
        assert_eq!(d[1].span, m("0-19,40-59"));
        assert_eq!(d[2].span_weight, 80);
        assert_eq!(d[2].imb_numa_nr, 5);
        assert_eq!(sd.cpu(0).sd_llc_size, 40);
    }

    #[test]
    fn far_numa_drops_fork_exec_wake_affine() {
        // smp.md §4.1.1: distance > node_reclaim_distance (30) drops BALANCE_EXEC/FORK and
        // WAKE_AFFINE on that NUMA level.
        let sd = custom(
            "[topology]\ncores_per_cluster = 2\npackages = 2\nnuma_distance = [[10, 32], [32, 10]]\n",
        );
        assert_eq!(names(&sd, 0), vec!["MC", "NUMA"]);
        let numa = &sd.domains(0)[1];
        assert_eq!(
            numa.flags,
            SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_NUMA | SD_OVERLAP
        );
        assert_eq!(numa.numa_distance, Some(32));
        // §2.4.3: one 2-CPU LLC per node -> imb = max(1, 2 >> 3) = 1, factor 4/4 = 1.
        assert_eq!(numa.imb_numa_nr, 1);
        assert_eq!(sd.cpu(3).sd_numa, Some(1));
    }

    #[test]
    fn numa_ring_overlap_groups() {
        // Four nodes in a ring (distances 10/20/30), one CPU per node. Expected spans and
        // groups are the ones the kernel documents above build_balance_mask() in
        // topology.c ("4 node ring"), derived by hand from the rules of smp.md §4.1.1.
        let sd = custom(
            "[topology]\npackages = 4\ncores_per_cluster = 1\n\
             numa_distance = [[10, 20, 30, 20], [20, 10, 20, 30], [30, 20, 10, 20], [20, 30, 20, 10]]\n",
        );
        assert_eq!(sd.numa_distances, vec![10, 20, 30]);
        assert_eq!(names(&sd, 0), vec!["NUMA", "NUMA"]);
        let d = sd.domains(0);
        assert_eq!(d[0].span, m("0-1,3"));
        assert_eq!(d[1].span, m("0-3"));
        let g0: Vec<CpuMask> = d[0].groups.iter().map(|g| g.span.clone()).collect();
        assert_eq!(g0, vec![m("0"), m("1"), m("3")]);
        let g1: Vec<CpuMask> = d[1].groups.iter().map(|g| g.span.clone()).collect();
        assert_eq!(g1, vec![m("0-1,3"), m("1-3")]);
        // Balance mask of {1-3}: only CPU 2's NUMA-1 domain equals it.
        assert_eq!(d[1].groups[1].balance_mask, m("2"));
        assert_eq!(d[1].groups[1].balance_cpu(), 2);
        assert_eq!(d[1].groups[0].balance_mask, m("0"));
        // Distance 30 is not > 30: WAKE_AFFINE kept on both levels.
        assert!(d[1].has(SD_WAKE_AFFINE) && d[1].has(SD_BALANCE_FORK));
        assert_eq!(sd.domains(2)[0].span, m("1-3"));
    }

    #[test]
    fn altra_cluster_is_the_llc() {
        // smp.md §4.1.2: Ampere Altra -> CLS{2}, PKG{80}; sd_llc_size 2 (MC skipped).
        let (_, sd) = build("altra-80");
        assert_eq!(names(&sd, 0), vec!["CLS", "PKG"]);
        let d = sd.domains(5);
        assert_eq!(d[0].span, m("4-5"));
        assert_eq!(d[0].flags, DEFAULT | SD_CLUSTER | SD_SHARE_LLC);
        assert_eq!((d[0].imbalance_pct, d[0].cache_nice_tries), (117, 1));
        assert_eq!(d[1].span, m("0-79"));
        assert_eq!(d[1].flags, DEFAULT); // PKG: no topology flags
        assert_eq!((d[1].imbalance_pct, d[1].cache_nice_tries), (117, 1));
        assert_eq!((d[1].min_interval, d[1].max_interval), (80, 160));
        assert_eq!(d[1].groups.len(), 40);
        assert_eq!(d[1].groups[0].span, m("4-5"));
        let c = sd.cpu(5);
        assert_eq!((c.sd_llc, c.sd_llc_size, c.sd_llc_id), (Some(0), 2, 4));
        assert_eq!(c.sd_share_id, 4);
        assert!(sd.cpus_share_cache(4, 5));
        assert!(!sd.cpus_share_cache(5, 6));
        // §2.4.3 rule at PKG (first level above the LLC): 40 LLCs -> imb_numa_nr = 40.
        assert_eq!(d[1].imb_numa_nr, 40);
    }

    #[test]
    fn altra_llc80_switch() {
        // workloads.md §11.4 switch: LLC spans the 80-CPU level; CLS{2} stays below it.
        let (_, sd) = build("altra-80-llc80");
        assert_eq!(names(&sd, 0), vec!["CLS", "MC"]);
        let c = sd.cpu(7);
        assert_eq!(c.domains[1].span, m("0-79"));
        assert_eq!((c.sd_llc, c.sd_llc_size, c.sd_llc_id), (Some(1), 80, 0));
        assert_eq!(c.sd_share_id, 6); // first CPU of the cluster {6,7}
        assert!(sd.cpus_share_cache(0, 79));
        assert!(sd.cpus_share_resources(6, 7));
        assert!(!sd.cpus_share_resources(5, 6));
        assert!(sd.sched_cluster_active);
        // select_idle_cpu's cluster scan looks at sd_llc->groups->flags (smp.md §2.6.3).
        assert!(c.domains[1].groups[0].flags & SD_CLUSTER != 0);
    }

    #[test]
    fn rb5_asymmetric_mc() {
        // smp.md §4.1.2, §6.1: one MC{8} with SD_ASYM_CPUCAPACITY|_FULL, capacities
        // 284/871/1024, sd_asym_cpucapacity = MC.
        let (p, sd) = build("rb5");
        let caps: Vec<u32> = (0..8).map(|c| p.capacity_orig(c)).collect();
        assert_eq!(caps, vec![284, 284, 284, 284, 871, 871, 871, 1024]);
        assert_eq!(names(&sd, 0), vec!["MC"]);
        let mc = &sd.domains(3)[0];
        assert_eq!(mc.span, m("0-7"));
        assert_eq!(
            mc.flags,
            DEFAULT | SD_SHARE_LLC | SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL
        );
        assert_eq!((mc.min_interval, mc.max_interval), (8, 16));
        let c = sd.cpu(3);
        assert_eq!(c.sd_asym_cpucapacity, Some(0));
        assert_eq!(c.sd_llc_size, 8);
        assert!(sd.sched_asym_cpucapacity);
        let gcaps: Vec<u64> = mc.groups.iter().map(|g| g.capacity).collect();
        // Local group first: CPU3, then 4..7, then 0..2.
        assert_eq!(gcaps, vec![284, 871, 871, 871, 1024, 284, 284, 284]);
    }

    #[test]
    fn partial_asymmetry_and_prefer_sibling() {
        // smp.md §4.1.1: SD_ASYM_CPUCAPACITY if a span has >= 2 capacities, _FULL only if all
        // capacities of the system are present; a domain with SD_ASYM_CPUCAPACITY clears
        // SD_PREFER_SIBLING on its child. Two LLCs: {0-3} (300,300,1024,1024), {4-5} (600).
        let sd = custom(
            "[topology]\ncpus = 6\nllc = [0, 0, 0, 0, 1, 1]\n\
             [[cpu_class]]\nname = \"l\"\ncpus = \"0-1\"\ncapacity = 300\nfreq_max_mhz = 1000\n\
             [[cpu_class]]\nname = \"m\"\ncpus = \"4-5\"\ncapacity = 600\nfreq_max_mhz = 1000\n\
             [[cpu_class]]\nname = \"b\"\ncpus = \"2-3\"\ncapacity = 1024\nfreq_max_mhz = 1000\n",
        );
        assert_eq!(names(&sd, 0), vec!["MC", "PKG"]);
        let d = sd.domains(0);
        assert_eq!(
            d[0].flags,
            (DEFAULT & !SD_PREFER_SIBLING) | SD_SHARE_LLC | SD_ASYM_CPUCAPACITY
        );
        assert_eq!(
            d[1].flags,
            DEFAULT | SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL
        );
        // CPU4's LLC has one capacity: no asym flag there, but PKG still clears its
        // PREFER_SIBLING.
        assert_eq!(
            sd.domains(4)[0].flags,
            (DEFAULT & !SD_PREFER_SIBLING) | SD_SHARE_LLC
        );
        assert_eq!(sd.cpu(0).sd_asym_cpucapacity, Some(1));
        assert_eq!(sd.cpu(0).sd_llc_size, 4);
        assert_eq!(sd.cpu(5).sd_llc_size, 2);
        let pkg_groups: Vec<(CpuMask, u64, u32, u32)> = d[1]
            .groups
            .iter()
            .map(|g| (g.span.clone(), g.capacity, g.min_capacity, g.max_capacity))
            .collect();
        assert_eq!(
            pkg_groups,
            vec![(m("0-3"), 2648, 300, 1024), (m("4-5"), 1200, 600, 600)]
        );
    }

    #[test]
    fn rpi4_rt_isolated_cpu() {
        // workloads.md §11.2, rt-dl.md §5.1/§2.8: MC{0,1,2}; CPU 3 isolated, no sched domain,
        // root domains {0,1,2} and {3}.
        let (_, sd) = build("rpi4-rt");
        assert_eq!(sd.cpu_map, m("0-2"));
        for cpu in 0..3 {
            assert_eq!(names(&sd, cpu), vec!["MC"]);
            let mc = &sd.domains(cpu)[0];
            assert_eq!(mc.span, m("0-2"));
            assert_eq!(mc.span_weight, 3);
            assert_eq!(mc.groups.len(), 3);
            // sd_init() sets the intervals from the topology mask weight before the cpu_map
            // intersection: MC mask {0-3} -> 4 ms / 8 ms (kernel topology.c; the spec's
            // "span_weight" equals it unless CPUs are isolated).
            assert_eq!((mc.min_interval, mc.max_interval), (4, 8));
            assert_eq!((mc.imbalance_pct, mc.cache_nice_tries), (117, 1));
            assert_eq!(sd.cpu(cpu).sd_llc_size, 3);
        }
        let c3 = sd.cpu(3);
        assert!(c3.domains.is_empty());
        assert_eq!((c3.sd_llc, c3.sd_llc_size, c3.sd_llc_id), (None, 1, 3));
        assert!(!sd.cpus_share_cache(2, 3));
        assert!(sd.cpus_share_cache(3, 3));
        assert_eq!(sd.root_domains, vec![m("0-2"), m("3")]);
        assert_eq!(sd.root_domain_of(3), &m("3"));
    }

    #[test]
    fn smp_n() {
        // smp:4: one LLC, no SMT -> MC{4} exactly like RPi5 (smp.md §4.1.1 degeneration).
        let (_, sd) = build("smp:4");
        assert_eq!(names(&sd, 2), vec!["MC"]);
        assert_eq!(sd.domains(2)[0].span, m("0-3"));
        assert_eq!(sd.cpu(2).sd_llc_size, 4);
        // smp:1: every level has weight 1 and degenerates: no domains at all.
        let (_, sd) = build("smp:1");
        assert!(sd.domains(0).is_empty());
        assert_eq!(sd.cpu(0).sd_llc_size, 1);
        assert_eq!(sd.root_domains, vec![m("0")]);
    }

    #[test]
    fn explicit_smt_ids() {
        // Explicit per-CPU ids: two 2-thread cores in one LLC -> SMT{2}, MC{4}.
        let sd = custom("[topology]\ncpus = 4\ncore = [0, 0, 1, 1]\n");
        assert_eq!(names(&sd, 0), vec!["SMT", "MC"]);
        assert_eq!(sd.domains(3)[0].span, m("2-3"));
        let mc = &sd.domains(3)[1];
        assert_eq!(mc.groups.len(), 2);
        assert_eq!(mc.groups[0].span, m("2-3"));
        // §2.4.3: MC is SD_SHARE_LLC itself, so no imbalance allowance below the NUMA levels.
        assert_eq!(mc.imb_numa_nr, 0);
    }

    #[test]
    fn relax_domain_level_clears_newidle() {
        // smp.md §4.1.1: levels at or above relax_domain_level lose SD_BALANCE_WAKE and
        // SD_BALANCE_NEWIDLE. sd->level counts the raw levels SMT=0, CLS=1, MC=2.
        let sd =
            custom("[kernel]\nrelax_domain_level = 2\n[topology]\ncpus = 4\ncore = [0, 0, 1, 1]\n");
        let d = sd.domains(0);
        assert_eq!((d[0].level, d[1].level), (0, 2));
        assert!(d[0].has(SD_BALANCE_NEWIDLE));
        assert!(!d[1].has(SD_BALANCE_NEWIDLE));
    }

    #[test]
    fn flag_names_like_debugfs() {
        assert_eq!(
            sd_flags_string(SD_SHARE_LLC | SD_BALANCE_NEWIDLE),
            "SD_BALANCE_NEWIDLE SD_SHARE_LLC"
        );
        // smp.md §2.1: sd_flag = wf & 0xF selects SD_BALANCE_EXEC/FORK/WAKE (WF_EXEC 0x02,
        // WF_FORK 0x04, WF_TTWU 0x08).
        assert_eq!(
            (SD_BALANCE_EXEC, SD_BALANCE_FORK, SD_BALANCE_WAKE),
            (0x02, 0x04, 0x08)
        );
    }
}
